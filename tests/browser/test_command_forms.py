"""Forms, not protocol (issue 34, point 7): the forms under "More actions" and "More GM
commands" pick what the server already knows (an attack from the creature's own, an
asset, a movement mode, a listed word, an effect, a readied attack's target
from every foe) instead of asking for ids, comma-separated lists or free text."""

from __future__ import annotations

from typing import Any

from browser.browser_support import STEP_MS, gm_table


def test_the_command_forms_are_pickers(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token))
    gm.locator("[data-setup=roll_initiative]").click()
    expect(gm.locator("#turn-panel")).to_contain_text("Aria")
    more = gm.locator("#commands")
    # Nothing asks for a comma-separated list; JSON only where a whole object is meant.
    expect(gm.locator("#commands input[placeholder=comma-separated]")).to_have_count(0)
    expect(gm.locator("#gm input[placeholder=comma-separated]")).to_have_count(0)
    ready = more.locator("[data-command=ready]")
    expect(ready.locator("select[name=attack] option")).to_have_text(["—", "rapier"])
    # Gob is in the kitchen, not beside Aria: a readied attack may still wait for it.
    expect(ready.locator("select[name=target] option[value=gob]")).to_have_count(1)
    move = more.locator("[data-command=move]")
    expect(move.locator("select[name=mode] option")).to_have_text(
        ["—", "walk", "climb", "swim", "fly", "burrow"]
    )
    # The GM's forms: a word from the listed ones, a field of the creature.
    gm_forms = gm.locator("#gm .more-gm")
    expect(gm.locator("[data-command=area_effect] select[name=shape] option")).to_have_text(
        ["cone", "cube", "sphere", "cylinder", "line"]
    )
    expect(gm_forms.locator("[data-command=override] select[name=field]")).to_have_count(1)
    # Picked, not typed: Aria readies her rapier against Gob.
    more.locator("summary").first.click()
    ready.locator("summary").click()
    ready.locator("select[name=attack]").select_option("rapier")
    ready.locator("select[name=target]").select_option("gob")
    ready.get_by_role("button", name="Send").click()
    expect(gm.locator("#log")).to_contain_text("Aria readies rapier against Gob.")
    assert gm.errors == []


def test_an_override_takes_its_fields_value_and_the_gm_answers_a_decision_by_picking(
    browser: Any, live_server: Any
) -> None:
    """An override's value is the input its field takes (a number for hit points, a creature
    for sharing a space, yes or no for hidden); a pending decision is answered from "More GM
    commands" by picking the decision and one of its options, nothing typed."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = gm_table(browser, live_server.table_url(live_server.gm_token), rolled=True)
    expect(gm.locator("#turn-panel")).to_contain_text("Aria")
    gm.locator("#gm .more-gm > summary").click()
    override = gm.locator("#gm [data-command=override]")
    override.locator("summary").click()
    override.locator("select[name=creature]").select_option("gob")
    # Only the fields the server lets the GM override are offered.
    expect(override.locator("select[name=field] option")).to_have_text(
        ["hp", "max hp", "temp hp", "ac", "sharing with", "hidden", "side", "controller", "pc",
         "condition immunities"]
    )  # fmt: skip
    override.locator("select[name=field]").select_option("sharing_with")
    expect(override.locator("select[name=value] option")).to_have_text(
        ["nobody", "Aria", "Brom", "Gob"]
    )
    override.locator("select[name=field]").select_option("controller")
    expect(override.locator("select[name=value] option")).to_have_text(["the GM", "alice", "bob"])
    override.locator("select[name=field]").select_option("hidden")
    expect(override.locator("select[name=value] option")).to_have_text(["yes", "no"])
    override.locator("select[name=field]").select_option("hp")
    expect(override.locator("input[type=text]")).to_have_count(0)
    override.locator("input[type=number][name=value]").fill("7")
    override.get_by_role("button", name="Send").click()
    expect(gm.locator("#tracker [data-creature=gob]")).to_contain_text("HP 7/20")

    # No decision pending: nothing to answer, so no form for it.
    expect(gm.locator("#gm [data-command=decide]")).to_have_count(0)
    # Aria engages Gob; Gob leaves the kitchen: Aria's opportunity attack waits on alice.
    gm.locator("#map [data-zone=kitchen] .zone-button").click()
    expect(gm.locator("#map [data-zone=kitchen] [data-creature=aria]")).to_be_visible()
    forms = gm.locator("#commands")
    forms.locator("summary").first.click()
    engage = forms.locator("[data-command=engage]")
    engage.locator("summary").click()
    engage.locator("select[name=target]").select_option("gob")
    engage.get_by_role("button", name="Send").click()
    expect(gm.locator("#map [data-creature=aria]")).to_contain_text("engaged with Gob")
    forms.locator("summary").first.click()  # "More actions" folded again
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#tracker")).to_contain_text("Brom's turn")
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#turn-panel")).to_contain_text("Your turn: Gob")
    gm.locator("#map [data-zone=cellar] .zone-button").click()
    decide = gm.locator("#gm [data-command=decide]")
    expect(decide).to_have_count(1)
    if not gm.locator("#gm .more-gm").evaluate("d => d.open"):
        gm.locator("#gm .more-gm > summary").click()
    decide.locator("summary").click()
    expect(decide.locator("select[name=decision] option")).to_have_text(
        ["Aria may make an opportunity attack with rapier against Gob, who is leaving Kitchen."]
    )
    expect(decide.locator("select[name=choice-0] option")).to_have_text(["attack", "decline"])
    expect(decide.locator("input[type=text]")).to_have_count(0)
    decide.locator("select[name=choice-0]").select_option("decline")
    decide.get_by_role("button", name="Send").click()
    expect(gm.locator("#log")).to_contain_text("Gob enters Cellar from Kitchen.")
    expect(gm.locator("#prompts-panel")).to_be_hidden()
    expect(gm.locator("#log li[data-type=attack_made]")).to_have_count(0)
    assert gm.errors == []
