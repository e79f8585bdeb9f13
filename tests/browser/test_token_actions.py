"""The GM acts on the token (issue 34, point 4): a token's actions open beside it on the
map, the hit-point box starts empty (an empty box sends nothing), one tap damages or
heals, and dragging the active creature's token to a zone moves it there with the same
legality and cost as the zone's button."""

from __future__ import annotations

from typing import Any

from browser.browser_support import STEP_MS, gm_table


def test_the_token_panel_opens_beside_the_token_with_one_tap_hp(
    browser: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token), rolled=True)
    token = gm.locator("#map button.token[data-creature=gob]")
    token.click()
    panel = gm.locator("#gm-token")
    expect(panel).to_contain_text("Gob")
    # Beside the token: in its zone, right under it, not in the GM panel.
    expect(gm.locator("#map [data-zone=kitchen] #gm-token")).to_have_count(1)
    near = token.bounding_box()
    box = panel.bounding_box()
    assert near is not None and box is not None
    assert 0 <= box["y"] - (near["y"] + near["height"]) < 40, (near, box)
    amount = panel.locator("input[name=amount]")
    expect(amount).to_have_value("")
    panel.locator("[data-token-act=damage]").click()  # nothing typed: nothing sent
    expect(amount).to_be_focused()
    expect(amount).to_have_attribute("aria-invalid", "true")
    expect(gm.locator("#tracker [data-creature=gob]")).to_contain_text("HP 20/20")
    panel.get_by_role("button", name="Damage 5", exact=True).click()
    expect(gm.locator("#tracker [data-creature=gob]")).to_contain_text("HP 15/20")
    panel.get_by_role("button", name="Damage 10").click()
    expect(gm.locator("#tracker [data-creature=gob]")).to_contain_text("HP 5/20")
    panel.get_by_role("button", name="Heal 1", exact=True).click()
    expect(gm.locator("#tracker [data-creature=gob]")).to_contain_text("HP 6/20")
    # Redrawn after each event, it stays beside the token.
    expect(gm.locator("#map [data-zone=kitchen] #gm-token")).to_have_count(1)
    token = gm.locator("#map button.token[data-creature=gob]")
    token.click()  # closed: back in the GM panel, hidden
    expect(panel).to_be_hidden()
    expect(gm.locator("#map #gm-token")).to_have_count(0)
    assert gm.errors == []


def test_dragging_the_active_token_to_a_zone_moves_it(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token))
    gm.locator("[data-setup=roll_initiative]").click()
    # Aria (the GM plays her: no seat yet) moves first.
    expect(gm.locator("#turn-panel")).to_contain_text("Aria")
    aria = gm.locator("#map [data-creature=aria]")
    expect(aria).to_have_attribute("draggable", "true")
    expect(gm.locator("#map [data-creature=gob]")).not_to_have_attribute("draggable", "true")
    # A zone the buttons refuse takes no drop: the cellar is not beside the common room.
    aria.drag_to(gm.locator("#map [data-zone=cellar]"))
    expect(gm.locator("#map [data-zone=common_room] [data-creature=aria]")).to_be_visible()
    expect(gm.locator("#log")).not_to_contain_text("Aria enters")
    aria.drag_to(gm.locator("#map [data-zone=bar]"))
    expect(gm.locator("#map [data-zone=bar] [data-creature=aria]")).to_be_visible()
    expect(gm.locator("#log")).to_contain_text("Aria enters Behind the bar from Common room.")
    assert gm.errors == []
