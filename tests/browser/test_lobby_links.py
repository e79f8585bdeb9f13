"""The lobby's links in a real browser (issue 34): "Open" and "Fresh links" never cost
the GM their running table; "New GM link…" is a separate, confirmed rotation that says
what it does and closes the tables open with an earlier GM link. Links carry the address
the GM's page was opened on, a phone opens its seat by the QR code, and the home says
who may create encounters and how to get a key."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from browser.browser_support import (
    STEP_MS,
    MaxDice,
    decline_next_dialog,
    lan_address,
    qr_matrix,
    qr_of,
    server_in_thread,
)
from browser.test_builder import KEY, _page

from zonekeep.server._app import ZonekeepServer
from zonekeep.server._store import GmKey


def test_open_and_fresh_links_keep_the_gms_table_and_rotation_is_confirmed(
    browser: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    row_of = f"#my-encounters tr[data-encounter={live_server.encounter}]"
    # The GM opens their table from the lobby.
    table = _page(context, f"{live_server.base}/table/")
    table.locator(row_of).locator("[data-action=open]").click()
    expect(table.locator("#status")).to_have_text("Connected as GM")

    # Fresh links and Open again, from a second tab: the table stays the GM's.
    lobby = _page(context, f"{live_server.base}/table/")
    row = lobby.locator(row_of)
    row.locator("[data-action=links]").click()
    box = lobby.locator("#home-links")
    expect(box).to_contain_text("Every earlier link, yours included, keeps working.")
    expect(box.locator("[data-link=gm] a")).to_have_attribute(
        "href", re.compile(rf"#encounter={live_server.encounter}&token=.+")
    )
    second = _page(context, f"{live_server.base}/table/")
    second.locator(row_of).locator("[data-action=open]").click()
    expect(second.locator("#status")).to_have_text("Connected as GM")
    # The first table still acts as the GM: its next command is taken.
    table.locator("[data-setup=set_surprise]").click()
    expect(table.locator("#log")).to_contain_text("Nobody is surprised.")
    expect(table.locator("#status")).to_have_text("Connected as GM")
    expect(table.locator("#no-link")).to_be_hidden()

    # A rotation asks first; declined, nothing changes.
    asked = decline_next_dialog(lobby)
    with lobby.expect_event("dialog"):
        row.locator("[data-action=rotate]").click()
    expect(box).not_to_contain_text("A new GM link")
    assert len(asked) == 1 and "Every earlier GM link stops working" in asked[0]
    assert "yours too" in asked[0]

    lobby.once("dialog", lambda dialog: dialog.accept())
    row.locator("[data-action=rotate]").click()
    expect(box).to_contain_text(
        re.compile(r"every earlier GM link stopped working: the tables open with one were closed")
    )
    for page in (table, second):
        expect(page.locator("#no-link")).to_be_visible()
        expect(page.locator("#no-link-message")).to_contain_text("token")
    fresh = box.locator("[data-link=gm] a").get_attribute("href")
    assert fresh is not None
    again = _page(context, fresh)
    expect(again.locator("#status")).to_have_text("Connected as GM")
    assert table.errors == [] and lobby.errors == [] and second.errors == []


def test_a_phone_on_the_network_opens_its_seat_by_the_qr_code(browser: Any, tmp_path: Path) -> None:
    """A server listening on every address. On the network (not the loopback) the home
    says, before anything is built, that creating needs a GM key and how to get one; the
    GM signs in there, builds an encounter, and the seat's link and QR code carry the
    network address; a phone (390 by 844, touch) opens the link the QR code holds."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    lan = lan_address()

    async def gwen(server: ZonekeepServer) -> None:
        digest = hashlib.sha256(KEY.encode()).hexdigest()
        await server.store.add_gm_key(GmKey("gwen", digest, time.time()))

    with server_in_thread(tmp_path / "server", MaxDice(), gwen, host="0.0.0.0") as (base, _):
        remote = base.replace("127.0.0.1", lan)
        laptop = browser.new_context(viewport={"width": 1280, "height": 800})
        stranger = _page(laptop, f"{remote}/table/")
        expect(stranger.locator("#home-rule")).to_contain_text("needs a GM key")
        expect(stranger.locator("#home-rule")).to_contain_text("zonekeep gm add NAME")
        expect(stranger.locator("#new-encounter")).to_be_disabled()
        expect(stranger.locator("#key-form")).to_be_visible()
        stranger.locator("#gm-key-input").fill(KEY)
        stranger.locator("#key-form").get_by_role("button", name="Use key").click()
        expect(stranger.locator("#gm-name")).to_have_text("gwen")
        expect(stranger.locator("#new-encounter")).to_be_enabled()

        stranger.locator("#new-encounter").click()
        stranger.locator("#builder-title").fill("Night at the Lantern")
        stranger.locator("#arena-select").select_option("tavern")
        stranger.locator("#seat-name").fill("Ana")
        stranger.locator("#add-seat").click()
        stranger.locator("#builder-start").click()
        ana = stranger.locator("#builder-started [data-link=Ana]")
        href = ana.locator("a").get_attribute("href")
        assert href is not None and href.startswith(f"http://{lan}:")
        qr = ana.locator("[data-qr=Ana] img")
        expect(qr).to_have_attribute("data-url", href)
        expect(ana.locator("[data-qr=Ana]")).to_contain_text("Scan for Ana")
        src = qr.get_attribute("src")
        assert src is not None and src.startswith("data:image/svg+xml")
        assert qr_matrix(unquote(src.split(",", 1)[1])) == qr_of(href)
        assert qr.evaluate("img => img.naturalWidth") > 0  # the page's CSP lets it show

        phone = browser.new_context(
            viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
        )
        scanned = _page(phone, href)
        expect(scanned.locator("#status")).to_have_text("Connected as player Ana")
        expect(scanned.locator("#character-panel")).to_be_visible()
        assert stranger.errors == [] and scanned.errors == []


def test_the_operators_own_machine_needs_no_key_box(browser: Any, tmp_path: Path) -> None:
    """A server with no key: on its own machine the home says why no key is needed and
    folds the key box away; from the network it says to open the page on the server's
    machine or ask for a key."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    lan = lan_address()
    with server_in_thread(tmp_path / "server", MaxDice(), host="0.0.0.0") as (base, _):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        own = _page(context, f"{base}/table/")
        expect(own.locator("#home-rule")).to_contain_text("its own machine (this browser)")
        expect(own.locator("#new-encounter")).to_be_enabled()
        expect(own.locator("#key-details")).not_to_have_attribute("open", "")
        expect(own.locator("#gm-key-input")).to_be_hidden()
        away = _page(context, f"{base.replace('127.0.0.1', lan)}/table/")
        expect(away.locator("#home-rule")).to_contain_text("only its own machine")
        expect(away.locator("#new-encounter")).to_be_disabled()
        expect(away.locator("#gm-key-input")).to_be_visible()
        assert own.errors == [] and away.errors == []
