"""The builder's options form offers the plugins' settings (protocol 1.4), in a real
browser: the installed hazards example declares ``burn_die`` and ``burn_dc``; a bad
value is refused by the server and shown, naming the setting; a good one is kept in the
encounter's options."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helpers
import pytest
from browser.browser_support import MaxDice, server_in_thread
from helpers import example_plugin

from zonekeep.server._app import ZonekeepServer
from zonekeep.server._store import GmKey

example_plugin("zonekeep_hazards")

STEP_MS = helpers.deadline(15_000)
KEY = "gm-key-of-gwen-" + "8" * 24


@pytest.fixture
def keyed_server(tmp_path: Path) -> Iterator[tuple[str, ZonekeepServer]]:
    async def gwen(server: ZonekeepServer) -> ZonekeepServer:
        digest = hashlib.sha256(KEY.encode()).hexdigest()
        await server.store.add_gm_key(GmKey("gwen", digest, time.time()))
        return server

    with server_in_thread(tmp_path / "server", MaxDice(), gwen) as (base, server):
        yield base, server


def test_the_options_form_offers_the_plugin_settings_and_the_server_checks_them(
    browser: Any, keyed_server: tuple[str, ZonekeepServer]
) -> None:
    from playwright.sync_api import expect

    base, server = keyed_server
    expect.set_options(timeout=STEP_MS)
    page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    page.set_default_timeout(STEP_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/table/#gm_key={KEY}")
    expect(page.locator("#gm-name")).to_have_text("gwen")
    page.locator("#new-encounter").click()
    page.locator("#builder-title").fill("Fire in the kitchen")
    page.locator("#arena-select").select_option("tavern")
    page.locator("#seat-name").fill("Ana")
    page.locator("#add-seat").click()

    die = page.locator("#builder-options [data-setting='hazards.burn_die']")
    expect(die).to_contain_text("dice, such as 1d6")
    expect(die).to_contain_text('Server\'s value: "1d6"')
    dc = page.locator("#builder-options [data-setting='hazards.burn_dc']")
    expect(dc).to_contain_text("1 to 30")
    expect(dc.locator("input")).to_have_value("10")

    die.locator("input").fill("lots")
    page.locator("#builder-start").click()
    expect(page.locator("#builder-error")).to_contain_text(
        "options.settings.hazards.burn_die: bad dice expression"
    )
    assert not server.rooms

    die.locator("input").fill("1d8")
    dc.locator("input").fill("14")
    page.locator("#builder-start").click()
    started = page.locator("#builder-started")
    expect(started).to_contain_text("Fire in the kitchen")
    eid = started.get_attribute("data-encounter")
    assert eid is not None
    assert server.rooms[eid].state.options.settings["hazards"] == {"burn_die": "1d8", "burn_dc": 14}
    assert errors == []
