"""The builder's "Roll hit points" toggle (issue 30): a group of ogres ticked to roll gets
hit points the server rolled from their hit dice (every die at its highest here:
``MaxDice``, so 7d10+21 makes 91, not the average 59), a group left alone keeps the
average; the GM's stat block shows the hit dice beside them."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser.browser_support import STEP_MS, MaxDice, open_page, server_in_thread

from zonekeep.server._app import ZonekeepServer
from zonekeep.server._store import GmKey

KEY = "gm-key-of-hana-" + "5" * 24


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[str]:
    async def hana(server: ZonekeepServer) -> None:
        digest = hashlib.sha256(KEY.encode()).hexdigest()
        await server.store.add_gm_key(GmKey("hana", digest, time.time()))

    with server_in_thread(tmp_path / "server", MaxDice(), hana) as (base, _):
        yield base


def test_rolled_hit_points_come_from_the_server_for_the_ticked_group(
    browser: Any, keyed: str
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    home = open_page(context, f"{keyed}/table/#gm_key={KEY}")
    home.locator("#new-encounter").click()
    home.locator("#builder-title").fill("Ogres")
    home.locator("#arena-select").select_option("tavern")
    search = home.locator("#compendium-search")
    for text, entry, count in (("ogre", "srd.ogre", "2"), ("goblin", "srd.goblin", "1")):
        search.locator("[name=text]").fill(text)
        search.get_by_role("button", name="Search").click()
        row = home.locator(f"#compendium-results tr[data-entry='{entry}']")
        row.locator("[name=count]").fill(count)
        row.get_by_role("button", name="Add").click()
    groups = home.locator("#builder-roster .zk-group")
    expect(groups).to_have_count(2)
    ogres, goblin = groups.nth(0), groups.nth(1)
    toggle = ogres.locator("[name=roll_hp]")
    expect(ogres.locator("label:has([name=roll_hp])")).to_have_text(
        "Roll hit points (7d10+21) instead of 59"
    )
    expect(ogres.locator("tbody [name=hp]")).to_have_count(2)
    toggle.check()
    # The hit points are the server's to roll: no box to type them in.
    expect(ogres.locator("tbody [name=hp]")).to_have_count(0)
    expect(ogres.locator("tbody .zk-rolled").first).to_have_text("rolled (7d10+21)")
    expect(goblin.locator("[name=roll_hp]")).not_to_be_checked()
    home.reload()  # the choice is part of the draft
    expect(
        home.locator("#builder-roster .zk-group").nth(0).locator("[name=roll_hp]")
    ).to_be_checked()
    home.locator("#builder-start").click()
    link = home.locator("#builder-started [data-link=gm] a")
    href = link.get_attribute("href")
    assert href

    gm = open_page(context, href)
    expect(gm.locator("#status")).to_contain_text("GM")
    room = gm.locator("#map [data-zone=common_room]")
    expect(room).to_contain_text("Ogre 1 HP 91/91")
    expect(room).to_contain_text("Ogre 2 HP 91/91")
    expect(room).to_contain_text("Goblin HP 7/7")
    gm.locator("#map button.token[data-creature=ogre-1]").click()
    expect(gm.locator("#stat-block .sb-props")).to_contain_text("Hit Points91 / 91 (7d10+21)")
    assert home.errors == [] and gm.errors == []
