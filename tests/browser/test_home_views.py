"""The GM's home and the builder on a laptop and on a phone (issue 34, points 9 and 10):
nothing wider than a 390 px phone (Open, End and Archive on screen), axe-core finds
nothing serious or critical at either size, and the arena preview says each neighbour
once, from the zone's own side, with its size as the arena gives it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser.browser_support import STEP_MS
from browser.test_web_table_views import (
    LAPTOP,
    PHONE,
    _axe,
    _no_sideways_scroll,
    _open,
)


def _build_a_draft(home: Any) -> None:
    home.locator("#new-encounter").click()
    home.locator("#builder-title").fill("Goblins at the Lantern")
    home.locator("#arena-select").select_option("tavern")
    search = home.locator("#compendium-search")
    search.locator("[name=text]").fill("goblin")
    search.get_by_role("button", name="Search").click()
    goblin = home.locator("#compendium-results tr[data-entry='srd.goblin']")
    goblin.locator("[name=count]").fill("3")
    goblin.get_by_role("button", name="Add").click()
    home.locator("#seat-name").fill("Ana")
    home.locator("#add-seat").click()


def test_the_home_and_the_builder_fit_a_phone_and_pass_axe(
    browser: Any, live_server: Any, axe_script: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    for viewport in (LAPTOP, PHONE):
        home = _open(browser, f"{live_server.base}/table/", viewport, axe=True)
        row = home.locator(f"#my-encounters [data-encounter={live_server.encounter}]")
        expect(row).to_contain_text("Brawl at the Drowned Lantern")
        _no_sideways_scroll(home)
        for action in ("open", "links", "end", "archive"):
            box = row.locator(f"[data-action={action}]").bounding_box()
            assert box is not None and box["x"] + box["width"] <= viewport["width"], action
        assert _axe(home, axe_script) == []
        _build_a_draft(home)
        copies = home.locator("#builder-roster tbody tr")
        expect(copies).to_have_count(3)
        # A side is a picker; a whole group is placed in one zone at once.
        group = home.locator("#builder-roster .zk-group").first
        group.locator("[name=side]").select_option("party")
        group.locator("[name=group_zone]").select_option("kitchen")
        for n in range(3):
            expect(copies.nth(n).locator("[name=zone]")).to_have_value("kitchen")
        expect(copies.nth(1).locator("[name=name]")).to_have_accessible_name("Goblin, copy 2: name")
        _no_sideways_scroll(home)
        assert _axe(home, axe_script) == [], viewport
        home.locator("#builder-start").click()
        started = home.locator("#builder-started")
        expect(started.locator("[data-qr=Ana] img")).to_be_visible()
        _no_sideways_scroll(home)
        assert _axe(home, axe_script) == [], viewport
        assert home.errors == []
        home.evaluate("localStorage.clear()")
        home.close()


def test_the_arena_preview_speaks_from_each_zone(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    home = _open(browser, f"{live_server.base}/table/", LAPTOP)
    home.locator("#new-encounter").click()
    home.locator("#arena-select").select_option("tavern")
    preview = home.locator(".zk-preview[data-arena=tavern]")
    balcony = preview.locator("[data-zone=balcony]")
    expect(balcony).to_contain_text("Common room below")
    expect(balcony).not_to_contain_text("Common room (above)")
    text = preview.inner_text()
    assert "null" not in text and "undefined" not in text, text
    assert home.errors == []
