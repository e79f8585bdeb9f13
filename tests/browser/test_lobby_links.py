"""The lobby's links in a real browser (issue 34): "Open" and "Fresh links" never cost
the GM their running table; "New GM link…" is a separate, confirmed rotation that says
what it does and closes the tables open with an earlier GM link."""

from __future__ import annotations

import re
from typing import Any

from browser.test_builder import STEP_MS, _page


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
    asked: list[str] = []

    def decline(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    lobby.once("dialog", decline)
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
