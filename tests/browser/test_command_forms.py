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
