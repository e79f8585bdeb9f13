"""A crowded zone keeps every creature reachable (issue 34, point 3): twenty goblins in
the cellar, Goblin 20 on its turn as a token of its own (the active creature is never
folded away) and the other nineteen one line, "Goblin \u00d719", which opens to every
goblin; the GM acts on one of them, the group says how many still stand and is not
struck through, and it stays open while the fight goes on."""

from __future__ import annotations

from typing import Any

from browser.browser_support import STEP_MS
from browser.test_builder import _page
from browser.test_web_table_views import LAPTOP, _crowded_encounter


def test_the_gm_reaches_one_goblin_of_twenty(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    encounter, gm_token, _alice = _crowded_encounter(live_server.base)
    gm = _page(
        browser.new_context(viewport=LAPTOP),
        f"{live_server.base}/table/#encounter={encounter}&token={gm_token}",
    )
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    group = gm.locator("#map [data-zone=cellar] details.token.group")
    summary = group.locator("summary")
    expect(summary.locator(".name")).to_have_text("Goblin \u00d719")
    # Goblin 20, whose turn it is, stands beside the group, never inside it.
    expect(
        gm.locator("#map [data-zone=cellar] button.token.active[data-creature=g20]")
    ).to_be_visible()
    expect(group.locator("[data-creature=g20]")).to_have_count(0)
    goblins = group.locator("button.token[data-creature]")
    expect(goblins.first).to_be_hidden()
    summary.focus()
    gm.keyboard.press("Enter")  # a keyboard opens it too
    expect(goblins).to_have_count(19)
    for n in (1, 7, 19):
        expect(group.locator(f"button.token[data-creature=g{n}]")).to_be_visible()

    # The GM acts on Goblin 7 alone.
    group.locator("button.token[data-creature=g7]").click()
    panel = gm.locator("#gm-token")
    expect(panel).to_contain_text("Goblin 7")
    panel.locator("input[name=amount]").fill("7")
    panel.locator("[data-token-act=damage]").click()
    expect(gm.locator("#tracker [data-creature=g7]")).to_contain_text("(out)")
    # Redrawn after the event: still open, one goblin down, the group not struck through.
    expect(summary).to_contain_text("(18 standing)")
    expect(group).to_have_attribute("open", "")
    expect(group).not_to_have_class("out")
    assert "line-through" not in summary.locator(".name").evaluate(
        "n => getComputedStyle(n).textDecorationLine"
    )
    assert "line-through" in group.locator("[data-creature=g7] .name").evaluate(
        "n => getComputedStyle(n).textDecorationLine"
    )
    assert "line-through" not in group.locator("[data-creature=g8] .name").evaluate(
        "n => getComputedStyle(n).textDecorationLine"
    )
    assert gm.errors == []
