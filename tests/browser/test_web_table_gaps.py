"""The web table's points that the tavern fight cannot show, on a small arena of the
test's own (gaps-arena.json: a barred gate, a loft up a ladder, a pit behind sacks) and
an encounter on it (gaps-encounter.json): the links drawn by kind and worded from the
reader's zone (point 3), both d20 faces of an attack with advantage (point 5), no zone
offered to a dying, surprised or defeated creature (point 8), the GM's rewind from a log
line (point 9), and the GM's token actions: a condition from a picker, removal from the
fight through a server command (point 13). Two pages (the GM's and Alice's) for all of
it. The dice roll their highest face (``conftest.MaxDice``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from browser.browser_support import STEP_MS, open_page

HERE = Path(__file__).resolve().parent
ENCOUNTER = HERE / "gaps-encounter.json"


def _create(base: str) -> tuple[str, str, str]:
    """The encounter of gaps-encounter.json, set up through the protocol up to its first
    turn (Nib surprised; Alice plays Hero). Its id, the GM's token and Alice's."""
    import trio

    from zonekeep.protocol.client import connect
    from zonekeep.server._encounter_file import load_encounter

    load_encounter(ENCOUNTER)  # the fixture is a valid encounter file
    spec = json.loads(ENCOUNTER.read_text())
    arena = json.loads((HERE / spec["arena"]).read_text())
    arena.pop("$schema")

    async def create() -> tuple[str, str, str]:
        async with connect(base.replace("http://", "ws://") + "/ws") as gm:
            made = await gm.create_encounter(
                spec["name"], arena, spec["creatures"], options=spec["options"]
            )
            encounter = made["encounter"]
            await gm.command(encounter, "set_surprise", surprised=["nib"])
            await gm.command(encounter, "place")
            seat = await gm.request(
                "create_seat", encounter=encounter, player="alice", creatures=["hero"]
            )
            await gm.command(encounter, "roll_initiative")
            return encounter, made["gm_token"], seat["token"]

    return trio.run(create)


def _open(browser: Any, url: str) -> Any:
    return open_page(browser.new_context(viewport={"width": 1280, "height": 900}), url)


def _enters(page: Any) -> int:
    return int(page.evaluate("window.zonekeepTable.sent.filter(t => t === 'enter').length"))


def _offers_no_zone(page: Any, why: str) -> None:
    """No zone is shaded as enterable, each says why, and a click on one sends nothing."""
    from playwright.sync_api import expect

    expect(page.locator("#map .zone.reachable")).to_have_count(0)
    expect(page.locator("#map .zone.unreachable")).to_have_count(3)
    expect(page.locator("#map [data-zone=loft] .zone-button")).to_have_attribute(
        "aria-disabled", "true"
    )
    expect(page.locator("#map [data-zone=loft] .zone-hint")).to_contain_text(why)
    before = _enters(page)
    page.locator("#map [data-zone=loft] .zone-button").click(force=True)
    page.locator("#map [data-zone=pit]").click(position={"x": 5, "y": 60}, force=True)
    assert _enters(page) == before


def test_links_dice_blocked_moves_rewind_and_token_actions(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    encounter, gm_token, alice_token = _create(live_server.base)
    gm = _open(browser, f"{live_server.base}/table/#encounter={encounter}&token={gm_token}")
    alice = _open(browser, f"{live_server.base}/table/#encounter={encounter}&token={alice_token}")
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    expect(alice.locator("#status")).to_have_text("Connected as player alice")

    # -- point 3: each link drawn by its kind and worded from the reader's zone ---------
    for page in (gm, alice):
        zone = page.locator("#map [data-zone=hall] .zone-links")
        expect(zone).to_have_text(
            "Yard beside (blocked) · Loft above (climb) · Pit below (no line of sight)"
        )
        expect(page.locator("#map [data-zone=loft] .zone-links")).to_have_text("Hall below (climb)")
        expect(page.locator("#map [data-zone=pit] .zone-links")).to_have_text(
            "Hall above (no line of sight)"
        )
        expect(page.locator("#map [data-zone=yard] .zone-links")).to_have_text(
            "Hall beside (blocked)"
        )
        lines = page.locator("#map svg.links line")
        expect(lines).to_have_count(3)
        expect(page.locator("#map svg.links line[data-link='hall|yard']")).to_have_class(
            "link blocked"
        )
        expect(page.locator("#map svg.links line[data-link='hall|loft']")).to_have_class(
            "link mode-climb"
        )
        expect(page.locator("#map svg.links line[data-link='hall|pit']")).to_have_class(
            "link no-sight"
        )
        expect(page.locator("#map svg.links .link-label")).to_have_text(["blocked", "climb"])
        # Drawn differently: dashed, dotted and plain.
        dashes = lines.evaluate_all(
            "ns => ns.map(n => n.dataset.link + ' ' + getComputedStyle(n).strokeDasharray)"
        )
        assert sorted(dashes) == ["hall|loft none", "hall|pit 2px, 5px", "hall|yard 8px, 6px"]
    # The barred gate is not offered to Hero (walking there is refused by the rules).
    expect(alice.locator("#map [data-zone=yard]")).to_have_class(re.compile(r"\bunreachable"))
    expect(alice.locator("#map [data-zone=loft]")).to_have_class(re.compile(r"\breachable"))
    # Shaded differently (not only a class): the page's stylesheet tells them apart.
    shade = "n => getComputedStyle(n).backgroundColor + getComputedStyle(n).borderStyle"
    loft = alice.locator("#map [data-zone=loft]").evaluate(shade)
    yard = alice.locator("#map [data-zone=yard]").evaluate(shade)
    assert loft != yard, (loft, yard)

    # -- point 13: the GM makes Nib prone from a picker of the known conditions ---------
    gm.locator("#map button[data-creature=nib]").click()
    panel = gm.locator("#gm-token")
    expect(panel.locator("h3")).to_contain_text("Nib")
    picker = panel.locator("[name=condition]")
    assert picker.evaluate("n => n.tagName") == "SELECT"
    options = picker.locator("option").all_inner_texts()
    assert {"prone", "restrained", "poisoned", "stunned"} <= set(options), options
    assert "Prone" not in options
    # No free-text condition anywhere on the GM's page (the "More" forms use pickers too).
    expect(gm.locator("input[name=condition]")).to_have_count(0)
    forms = gm.locator("#gm details[data-command=grant_condition] select[name=condition]")
    expect(forms).to_have_count(1)
    picker.select_option("prone")
    panel.locator("[data-token-act=condition]").click()
    expect(alice.locator("#map [data-creature=nib] .badge[data-condition=prone]")).to_be_visible()

    # -- point 5: Hero attacks prone Nib in melee with advantage: both d20s shown -------
    turn = alice.locator("#turn-panel")
    expect(turn).to_contain_text("Your turn: Hero")
    turn.locator("button[data-attack=rapier]").click()
    turn.locator(".targets button[data-target=nib]").click()
    for page in (gm, alice):
        attack = page.locator("#log li[data-type=attack_made]").last
        expect(attack).to_contain_text("Hero attacks Nib with rapier")
        to_hit = attack.locator(".roll[data-roll='to hit']")
        expect(to_hit.locator(".die")).to_have_text(["20", "20"])
        expect(to_hit.locator(".die.kept")).to_have_count(1)
        expect(to_hit.locator(".die.dropped")).to_have_count(1)
        expect(to_hit.locator(".adv")).to_have_text("advantage")
        expect(to_hit).to_contain_text("+ 5 = 25")
        # Issue 34, point 8: the line says why (the target is prone) and why the hit is
        # critical (a natural 20: every die shows its highest face here).
        expect(attack).to_contain_text("(advantage: target prone)")
        expect(attack).to_contain_text("a critical hit (a natural 20)")
        damage = page.locator("#log li[data-type=damaged]").last
        expect(damage.locator(".roll[data-roll=damage] .die")).to_have_text(["6", "6"])
    expect(gm.locator("#tracker [data-creature=nib]")).to_contain_text("HP 18/30")

    # -- point 8 (dying) and point 9 (rewind from a log line) -----------------------------
    expect(alice.locator("#map .zone.reachable")).to_have_count(2)  # loft and pit
    hit_seq = alice.locator("#log li[data-type=damaged]").last.get_attribute("data-seq")
    gm.locator("#map button[data-creature=hero]").click()
    panel.locator("input[name=amount]").fill("30")
    panel.locator("[data-token-act=damage]").click()
    expect(alice.locator("#map [data-creature=hero] .badge.dying")).to_be_visible()
    _offers_no_zone(alice, "Hero is incapacitated")  # the server's sentence
    # The rewind asks first (it may undo much, on every screen): "Cancel" sends nothing.
    asked: list[str] = []
    answer = {"ok": False}

    def on_dialog(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept() if answer["ok"] else dialog.dismiss()

    gm.on("dialog", on_dialog)
    rewind = gm.locator(f"#log li[data-seq='{hit_seq}'] .rewind-here")
    sent = gm.evaluate("window.zonekeepTable.sent.length")
    rewind.click()
    assert asked and asked[0].startswith(f"Rewind to #{hit_seq}?"), asked
    assert gm.evaluate("window.zonekeepTable.sent.length") == sent
    expect(gm.locator("#log li.undone")).to_have_count(0)
    answer["ok"] = True
    rewind.click()
    for page in (gm, alice):
        expect(page.locator("#log li[data-type=rewound]")).to_be_visible()
        undone = page.locator("#log li.undone")
        expect(undone.first).to_contain_text("Hero takes 30")
        expect(undone.first.locator(".text")).to_have_css("text-decoration-line", "line-through")
        # Nothing at or before the chosen line is undone.
        expect(page.locator(f"#log li[data-seq='{hit_seq}']")).not_to_have_class(
            re.compile("undone")
        )
        expect(page.locator("#map [data-creature=hero] .badge.dying")).to_have_count(0)
        # Every line after the chosen one (but the rewind's own) is struck through.
        left = page.evaluate(
            """seq => [...document.querySelectorAll('#log li[data-seq]')]
            .filter(n => Number(n.dataset.seq) > seq && n.dataset.type !== 'rewound'
              && !n.classList.contains('undone')).map(n => n.textContent)""",
            int(hit_seq),
        )
        assert left == [], left
    expect(gm.locator("#tracker [data-creature=hero]")).to_contain_text("HP 24/24")
    expect(gm.locator("#tracker [data-creature=nib]")).to_contain_text("HP 18/30")
    expect(alice.locator("#map .zone.reachable")).to_have_count(2)  # offered again
    alice.locator("[data-quick=end_turn]").click()

    # -- point 8: surprised Nib (its first turn) and defeated Zok are offered no zone ---
    expect(gm.locator("#turn-panel")).to_contain_text("Your turn: Nib")
    _offers_no_zone(gm, "Nib is surprised")
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#turn-panel")).to_contain_text("Your turn: Zok")
    expect(gm.locator("#map .zone.reachable")).to_have_count(2)
    gm.locator("#map button[data-creature=zok]").click()
    panel.locator("input[name=amount]").fill("30")
    panel.locator("[data-token-act=damage]").click()
    expect(gm.locator("#tracker [data-creature=zok]")).to_contain_text("HP 0/30")
    _offers_no_zone(gm, "Zok")

    # -- point 13: the GM removes Nib from the fight, saying how (a server command) ----
    gm.locator("#map button[data-creature=nib]").click()
    expect(panel.locator("h3")).to_contain_text("Nib")
    panel.locator("select[name=remove-as]").select_option("surrendered")
    panel.locator("[data-token-act=remove]").click()
    for page in (gm, alice):
        expect(
            page.locator("#map [data-creature=nib] .badge[data-condition=surrendered]")
        ).to_be_visible()
        expect(page.locator("#log")).to_contain_text("Nib is surrendered.")
    assert gm.evaluate("window.zonekeepTable.sent.at(-1)") == "grant_condition"
    # Both goblins are out: the rules end the encounter.
    expect(alice.locator("#tracker")).to_contain_text("The encounter has ended")
    for page in (gm, alice):
        assert page.errors == []


def test_the_gm_view_of_a_crowded_fight_on_a_phone(
    browser: Any, live_server: Any, axe_script: Path
) -> None:
    """Points 1, 2 and 20 on the GM's page (the other tests show them on a player's):
    22 creatures at 390x844, the tie prompt and then the turn's End turn are in view
    when the page is scrolled to its end, the title says what waits, the page never
    scrolls sideways, and axe-core finds nothing serious."""
    from browser.test_web_table_views import (
        PHONE,
        _axe,
        _crowded_encounter,
        _in_viewport,
        _no_sideways_scroll,
    )
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    encounter, gm_token, _alice = _crowded_encounter(live_server.base)
    gm = browser.new_page(viewport=PHONE, bypass_csp=True)  # axe is injected
    gm.set_default_timeout(STEP_MS)
    errors: list[str] = []
    gm.on("pageerror", lambda exc: errors.append(str(exc)))
    gm.goto(f"{live_server.base}/table/#encounter={encounter}&token={gm_token}")
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    expect(gm.locator("#tracker .member")).to_have_count(22)
    prompt = gm.locator("#prompts .prompt[data-kind=initiative_tie]")
    expect(prompt).to_be_visible()
    # Alice's decision (her two creatures' order) stays open during Goblin 20's turn,
    # the first: the GM may answer it, but the GM's title calls for the goblin's turn.
    expect(gm).to_have_title(re.compile(r"^\(!\) Goblin 20's turn"))
    gm.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    _in_viewport(gm, "#prompts .prompt")
    _no_sideways_scroll(gm)
    assert _axe(gm, axe_script) == []
    gm.evaluate("window.scrollTo(0, 0)")
    prompt.locator("button.confirm-order").click()
    expect(gm.locator("#prompts-panel")).to_be_hidden()
    expect(gm.locator("#turn-panel")).to_contain_text("Your turn: Goblin 20")
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#turn-panel")).to_contain_text("Aria's turn (alice)")
    expect(gm).to_have_title("Goblin warren — zonekeep")  # Alice's creature
    # The GM ends Alice's two turns for her; the next goblin's turn waits on the GM.
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#tracker .whose-turn")).to_have_text(re.compile("^Sir Bartholomew"))
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#turn-panel")).to_contain_text("Your turn: Goblin 19")
    expect(gm).to_have_title(re.compile(r"^\(!\) Goblin 19's turn"))
    gm.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    _in_viewport(gm, "#turn-panel [data-quick=end_turn]")
    _no_sideways_scroll(gm)
    assert _axe(gm, axe_script) == []
    assert errors == []
