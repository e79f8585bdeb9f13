"""The GM's setup and refusals in a real browser (issue 34, points 5 and 6).

Setup explains itself: every step runs the ones still due before it (no need to press
"Set surprise" when nobody is surprised), and placing the creatures warns first about a
seat still waiting for its character. A refusal appears beside the control that caused
it, in a table's words, with the way out as a button; ending the encounter is one
confirmed button.
"""

from __future__ import annotations

from typing import Any

from browser.browser_support import STEP_MS, decline_next_dialog, gm_table
from browser.test_builder import _page


def test_setup_runs_the_steps_due_and_warns_about_waiting_seats(
    browser: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token))
    setup = gm.locator("#gm .setup")
    expect(setup.locator(".setup-help")).to_contain_text("nobody, if you tick none")
    place = setup.locator("[data-setup=place]")
    roll = setup.locator("[data-setup=roll_initiative]")
    # Every step can be pressed now, and says what it does first.
    expect(place).to_be_enabled()
    expect(place).to_have_text("Set surprise and place creatures")
    expect(roll).to_have_text("Settle the rest and roll initiative")

    # A seat with no character yet: the setup says who is shut out, and placing asks.
    gm.locator("#gm [name=player]").fill("dana")
    gm.locator("[data-gm=create_seat]").click()
    expect(gm.locator("#gm .seat-link[data-seat=dana] img")).to_be_visible()
    gm.locator("[data-setup=set_surprise]").click()
    expect(gm.locator("#log")).to_contain_text("Nobody is surprised.")
    note = gm.locator("#setup-note")
    expect(note).to_contain_text("Still waiting for dana's character")
    asked = decline_next_dialog(gm)
    # The page asks the server who is still waiting before it asks: wait for the dialog.
    with gm.expect_event("dialog"):
        gm.locator("[data-setup=roll_initiative]").click()
    expect(gm.locator("[data-setup=roll_initiative]")).to_be_enabled()
    assert len(asked) == 1 and "dana has not sent a character yet" in asked[0]
    assert "Positions:" not in (gm.locator("#log").text_content() or "")

    gm.once("dialog", lambda dialog: dialog.accept())
    gm.locator("[data-setup=roll_initiative]").click()  # places, then rolls
    expect(gm.locator("#log")).to_contain_text("Positions:")
    expect(gm.locator("#tracker")).to_contain_text("Round 1")
    expect(gm.locator("#gm .setup summary")).to_have_text("Setup (done)")
    assert gm.errors == []


def test_a_refusal_sits_beside_its_control_with_the_way_out(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token), rolled=True)

    # Ending while both sides stand is refused: beside the form's Send button, in the
    # table's words (no "force: true"), with "End it anyway".
    gm.locator("#gm .more-gm > summary").click()
    form = gm.locator("#gm [data-command=end_encounter]")
    form.locator("summary").click()
    send = form.get_by_role("button", name="Send")
    send.click()
    refusal = form.locator(".refusal")
    expect(refusal).to_contain_text("The fight is not over")
    expect(refusal).not_to_contain_text("force")
    expect(gm.locator("#error")).to_be_hidden()
    near = send.bounding_box()
    said = refusal.bounding_box()
    assert near is not None and said is not None
    assert abs(said["y"] - near["y"]) < 120, (near, said)
    refusal.get_by_role("button", name="Dismiss").click()
    expect(refusal).to_have_count(0)
    send.click()
    expect(refusal).to_be_visible()
    refusal.get_by_role("button", name="End it anyway").click()
    expect(gm.locator("#log")).to_contain_text("ended")
    assert gm.errors == []


def test_ending_the_encounter_is_one_confirmed_button(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token), rolled=True)
    asked = decline_next_dialog(gm)
    with gm.expect_event("dialog"):
        gm.locator("[data-gm=end]").click()
    expect(gm.locator("[data-gm=end]")).to_be_enabled()
    assert len(asked) == 1 and "The fight is not over" in asked[0]
    assert "still stand" in asked[0]
    gm.once("dialog", lambda dialog: dialog.accept())
    gm.locator("[data-gm=end]").click()
    expect(gm.locator("#log")).to_contain_text("ended")
    expect(gm.locator("[data-gm=end]")).to_have_count(0)
    assert gm.errors == []


def test_a_phone_player_sees_the_turn_their_hp_and_the_log_at_a_glance(
    browser: Any, live_server: Any
) -> None:
    """Point 9: outside their turn, a player on a phone sees whose turn it is, their
    creature's hit points and the log's last line without scrolling; the end of the
    encounter is said there too, above the fold."""
    from browser.test_web_table_views import PHONE, _in_viewport
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token))
    gm.locator("#gm [name=player]").fill("alice")
    gm.locator("#gm .seats input[type=checkbox][value=aria]").check()
    gm.locator("[data-gm=create_seat]").click()
    link = gm.locator("#gm .seat-link[data-seat=alice] a")
    expect(link).to_be_visible()
    alice = _page(
        browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True),
        link.get_attribute("href") or "",
    )
    expect(alice.locator("#status")).to_have_text("Connected as player alice")
    expect(gm.locator("#glance")).to_be_hidden()  # a wide screen has the tracker
    gm.locator("[data-setup=roll_initiative]").click()
    expect(alice.locator("#turn-panel")).to_contain_text("Your turn: Aria")
    alice.locator("#turn-panel [data-quick=end_turn]").click()
    glance = alice.locator("#glance")
    expect(glance.locator("[data-glance=turn]")).to_have_text("Round 1 \u00b7 Brom's turn")
    expect(glance.locator("[data-glance=mine]")).to_have_text("Aria HP 24/24")
    expect(glance.locator("[data-glance=log]")).not_to_be_empty()
    alice.evaluate("window.scrollTo(0, 0)")
    for part in ("turn", "mine", "log"):
        _in_viewport(alice, f"#glance [data-glance={part}]")

    gm.once("dialog", lambda dialog: dialog.accept())
    gm.locator("[data-gm=end]").click()
    expect(glance.locator("[data-glance=turn]")).to_contain_text("The encounter has ended")
    alice.evaluate("window.scrollTo(0, 0)")
    _in_viewport(alice, "#glance [data-glance=turn]")
    assert alice.errors == [] and gm.errors == []
