"""The web table in a real browser: a GM and two players play a short fight.

The GM's page sets the encounter up, hands out seat links, hides and reveals the
goblin; each player's page (opened from its link) walks into the kitchen by clicking
it on the map and engages Gob; Gob flees to the cellar, so both players get an
opportunity-attack prompt with a countdown and answer it; Aria finishes Gob and the GM
ends the encounter. Every step is checked on what the pages show. The dice always roll
their highest face (see ``conftest.MaxDice``), so the fight goes the same way each time.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import helpers

STEP_MS = helpers.deadline(15_000)  # each step may take this long before the test fails
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"


def _open(browser: Any, url: str) -> Any:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(STEP_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors  # checked at the end: no script error on any page
    page.goto(url)
    return page


def _send(page: Any, command: str, within: str = "#turn-panel", **fields: Any) -> None:
    """Open a command's form under "More", fill it (selects by value, checkboxes), send it."""
    for fold in page.locator(f"{within} details.more, {within} details.more-gm").all():
        if not fold.evaluate("d => d.open"):
            fold.locator("summary").first.click()
    form = page.locator(f"{within} details[data-command={command}]")
    if not form.evaluate("d => d.open"):
        form.locator("summary").click()
    for name, value in fields.items():
        field = form.locator(f"[name={name}]")
        if value is True:
            field.check()
        elif field.evaluate("n => n.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(str(value))
    form.get_by_role("button", name="Send").click()


def test_static_files_and_404(live_server: Any) -> None:
    """Only the three files are served, with their types; anything else is a 404."""
    expected = {
        "/table/": "text/html",
        "/table/index.html": "text/html",
        "/table/table.js": "text/javascript",
        "/table/table.css": "text/css",
    }
    for path, kind in expected.items():
        with urllib.request.urlopen(live_server.base + path, timeout=helpers.deadline(10)) as reply:
            assert reply.status == 200
            assert reply.headers["Content-Type"].startswith(kind)
            assert reply.read()
    for path in (
        "/table/nope.js",
        "/table/../_app.py",
        "/table/%2e%2e/_static.py",
        "/table/static/table.js",
    ):
        try:
            urllib.request.urlopen(live_server.base + path, timeout=helpers.deadline(10))
        except urllib.error.HTTPError as exc:
            assert exc.code in (404, 426), path
        else:
            raise AssertionError(f"{path} was served")


def test_gm_and_two_players_play_a_fight(browser: Any, live_server: Any) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    ARTIFACTS.mkdir(exist_ok=True)

    # -- the GM opens the table and sets the encounter up -------------------------------
    gm = _open(browser, live_server.table_url(live_server.gm_token))
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    expect(gm.locator("#encounter-name")).to_have_text("Brawl at the Drowned Lantern")
    for zone, name in [
        ("common_room", "Common room"),
        ("bar", "Behind the bar"),
        ("kitchen", "Kitchen"),
        ("cellar", "Cellar"),
        ("balcony", "Balcony"),
    ]:
        expect(gm.locator(f"#map [data-zone={zone}] .zone-name")).to_have_text(name)
    expect(gm.locator("#map [data-zone=common_room]")).to_contain_text("Tables (prop)")
    expect(gm.locator("#map [data-zone=kitchen] [data-creature=gob]")).to_contain_text(
        "Gob HP 20/20"
    )
    # Point 3: the links are worded from the reader's zone (the cellar is below the
    # kitchen), each neighbour once (two links join the common room and the balcony),
    # and drawn: one line per pair of zones, the sight-blocking ones dotted.
    links = gm.locator("#map [data-zone=kitchen] .zone-links")
    expect(links).to_contain_text("Cellar below")
    expect(gm.locator("#map [data-zone=cellar] .zone-links")).to_have_text("Kitchen above")
    common = gm.locator("#map [data-zone=common_room] .zone-links").inner_text()
    assert common.count("Balcony") == 1 and "Balcony above (walk or climb)" in common, common
    expect(gm.locator("#map svg.links line")).to_have_count(5)
    expect(gm.locator("#map svg.links line.no-sight")).to_have_count(2)
    expect(gm.locator("#map svg.links .link-label")).to_have_text(["walk or climb"])
    expect(gm.locator("#tracker")).to_contain_text("Setting up: surprise")

    gm.locator("[data-setup=set_surprise]").click()
    expect(gm.locator("#log")).to_contain_text("Nobody is surprised.")
    gm.locator("[data-setup=place]").click()
    expect(gm.locator("#log")).to_contain_text("Positions: Aria in Common room")

    expect(gm.locator("#tracker")).to_contain_text("Rolling initiative")

    # Seat links for the players, made on the GM's page.
    links_made = {}
    for player, creature in [("alice", "aria"), ("bob", "brom")]:
        gm.locator("#gm input[name=player]").fill(player)
        gm.locator(f"#gm .seats input[type=checkbox][value={creature}]").check()
        gm.locator("[data-gm=create_seat]").click()
        link = gm.locator(f"#gm .seat-link[data-seat={player}] a")
        expect(link).to_have_attribute("href", re.compile(r"/table/#encounter=.+&token=.+"))
        links_made[player] = link.get_attribute("href")

    alice = _open(browser, links_made["alice"])
    bob = _open(browser, links_made["bob"])
    expect(alice.locator("#status")).to_have_text("Connected as player alice")
    expect(bob.locator("#status")).to_have_text("Connected as player bob")
    expect(alice.locator("#gm-panel")).to_be_hidden()

    # Point 13/17: the GM hides Gob from its token's actions, gives it a condition while
    # hidden (the players see one collapsed line), then reveals it by name.
    gm.locator("#map button[data-creature=gob]").click()
    token_panel = gm.locator("#gm-token")
    expect(token_panel).to_contain_text("Gob")
    token_panel.locator("[data-hide=gob]").click()
    expect(alice.locator("#map [data-creature=gob]")).to_have_count(0)
    expect(gm.locator("#map [data-creature=gob]")).to_contain_text("hidden from players")
    token_panel.locator("select[name=condition]").select_option("prone")
    token_panel.locator("[data-token-act=condition]").click()
    expect(gm.locator("#map [data-creature=gob] .badge[data-condition=prone]")).to_be_visible()
    token_panel.locator("[data-remove-condition=prone]").click()
    expect(gm.locator("#map [data-creature=gob] .badge")).to_have_count(0)
    expect(alice.locator("#log li[data-type=hidden]")).to_have_text(
        re.compile(r"Something happens out of sight \(\u00d73\)\.")
    )
    token_panel.locator("[data-hide=gob]").click()
    expect(alice.locator("#map [data-zone=kitchen] [data-creature=gob]")).to_contain_text("Gob")
    expect(alice.locator("#log")).to_contain_text("Gob appears in Kitchen.")
    token_panel.locator("button.close").click()

    gm.locator("[data-setup=roll_initiative]").click()
    for page in (gm, alice, bob):
        expect(page.locator("#tracker")).to_contain_text("Round 1")
        expect(page.locator("#tracker")).to_contain_text("Aria's turn")
        expect(page.locator("#tracker .order li")).to_have_text(
            [re.compile("Aria"), re.compile("Brom"), re.compile("Gob")]
        )
    # Point 5: the initiative dice are on the log line (every die shows its top face).
    expect(gm.locator("#log li[data-type=initiative_rolled] .die").first).to_have_text("20")
    # Point 13: setup is folded away once the turns begin.
    expect(gm.locator("#gm details.setup")).not_to_have_attribute("open", "")
    # Point 1: a page waiting on its player says so in its title.
    expect(alice).to_have_title(re.compile(r"^\(!\) Aria's turn"))
    assert not bob.title().startswith("(!)")

    # A dropped connection greys the table with a countdown, comes back by itself and
    # catches up (join with last_seq); no error stays behind.
    alice.evaluate("window.zonekeepTable.ws.close()")
    expect(alice.locator("#offline-banner")).to_contain_text(re.compile(r"Reconnecting in \d+ s"))
    expect(alice.locator("body")).to_have_class(re.compile("offline"))
    expect(alice.locator("#log")).to_contain_text("Reconnected; caught up")
    expect(alice.locator("#status")).to_have_text("Connected as player alice")
    expect(alice.locator("#offline-banner")).to_be_hidden()
    expect(alice.locator("#error")).to_be_hidden()

    # -- round 1: Aria and Brom walk into the kitchen and engage Gob ------------------------
    turn = alice.locator("#turn-panel")
    expect(turn).to_contain_text("Your turn: Aria")
    expect(alice.locator("#resources [data-resource=movement]")).to_have_text("30 ft left")
    expect(bob.locator("#turn-panel")).to_be_hidden()
    # Point 12: big buttons, one per attack, End turn once; an attack without a target
    # in reach is disabled and says why.
    rapier = turn.locator("button[data-attack=rapier]")
    expect(rapier).to_have_text("Rapier +5, 1d6")
    expect(rapier).to_be_disabled()
    expect(rapier).to_have_attribute("title", re.compile("No enemy in reach"))
    expect(turn.get_by_role("button", name="End turn")).to_have_count(1)
    for quick in ("move", "dash", "dodge", "disengage"):
        expect(turn.locator(f"button[data-quick={quick}]")).to_be_enabled()
    # Point 8: the zones Aria can enter show their cost, as the server's `actions` reply
    # says: the cellar too, one zone further through the kitchen (her 30 ft are more than
    # the kitchen's 15: docs/rules.md, A1).
    expect(alice.locator("#map [data-zone=kitchen].reachable .zone-cost")).to_have_text("30 ft")
    expect(alice.locator("#map [data-zone=cellar]")).to_have_class(re.compile(r"\breachable"))
    expect(alice.locator("#map [data-zone=cellar] .zone-button")).to_have_attribute(
        "aria-label", "Cellar 30 ft: Aria can enter"
    )
    # Point 18: a double click sends one move.
    alice.locator("#map [data-zone=kitchen] .zone-button").dblclick()
    expect(alice.locator("#map [data-zone=kitchen] [data-creature=aria]")).to_be_visible()
    expect(alice.locator("#log")).to_contain_text("Aria enters Kitchen from Common room.")
    expect(alice.locator("#resources [data-resource=movement]")).to_have_text("0 ft left")
    assert alice.evaluate("window.zonekeepTable.sent.filter(t => t === 'enter').length") == 1
    # With no movement left, no zone is offered and a click sends nothing.
    expect(alice.locator("#map .zone.reachable")).to_have_count(0)
    expect(alice.locator("#map [data-zone=cellar] .zone-hint")).to_have_text(
        "Aria has no movement left to enter another zone."
    )
    alice.locator("#map [data-zone=cellar] .zone-button").click(force=True)  # aria-disabled
    assert alice.evaluate("window.zonekeepTable.sent.filter(t => t === 'enter').length") == 1
    expect(rapier).to_be_enabled()
    _send(alice, "engage", target="gob")
    expect(alice.locator("#map [data-creature=aria]")).to_contain_text("⚔ engaged with Gob")
    expect(gm.locator("#map [data-creature=gob]")).to_contain_text("⚔ engaged with Aria")
    alice.locator("[data-quick=end_turn]").click()

    expect(bob.locator("#turn-panel")).to_contain_text("Your turn: Brom")
    expect(alice.locator("#tracker")).to_contain_text("Brom's turn")
    bob.locator("#map [data-zone=kitchen] .zone-button").click()
    expect(bob.locator("#map [data-zone=kitchen] [data-creature=brom]")).to_be_visible()
    # Issue 34, point 8: the warhammer may strike anyone beside Brom; Aria is marked an
    # ally (the rules let a creature attack an ally, so she stays on the list).
    warhammer = bob.locator("#turn-panel button[data-attack=warhammer]")
    warhammer.click()
    targets = bob.locator("#turn-panel .targets button")
    expect(targets).to_have_count(2)
    expect(targets.filter(has_text="Gob")).to_have_text("Gob")
    expect(bob.locator("#turn-panel .targets button[data-target=aria]")).to_have_text("Aria (ally)")
    warhammer.click()  # folded again: no attack made
    expect(targets).to_have_count(0)
    _send(bob, "engage", target="gob")
    expect(bob.locator("#map [data-creature=gob]")).to_contain_text("⚔ engaged with Aria, Brom")
    bob.locator("[data-quick=end_turn]").click()

    # -- Gob flees to the cellar: both players are offered an opportunity attack -----------
    expect(gm.locator("#turn-panel")).to_contain_text("Your turn: Gob")
    gm.locator("#map [data-zone=cellar] .zone-button").click()
    for page, creature, weapon in [(alice, "Aria", "rapier"), (bob, "Brom", "warhammer")]:
        prompt = page.locator("#prompts .prompt[data-kind=opportunity_attack]")
        # Issue 34, point 8: the prompt names the weapon the attack is made with.
        expect(prompt.locator(".prompt-text")).to_have_text(
            f"{creature} may make an opportunity attack with {weapon} against Gob, "
            "who is leaving Kitchen."
        )
        expect(prompt.locator(".countdown")).to_have_text(re.compile(r"^\d+ s left$"))
        seconds = int(prompt.locator(".countdown").inner_text().split()[0])
        assert 0 < seconds <= 120
        expect(page).to_have_title(re.compile(r"^\(!\) Decide"))
    expect(gm.locator("#prompts .prompt")).to_have_count(2)  # the GM may answer any decision
    # The mover's controls say that play waits for the players' reactions (issue 34).
    waits = gm.locator("#turn-panel .turn-waits")
    expect(waits).to_contain_text("Play waits for 2 reactions")
    expect(waits).to_contain_text("Aria may make an opportunity attack with rapier against Gob")
    alice.screenshot(path=str(ARTIFACTS / "web-table-alice-prompt.png"))

    expect(alice.locator("#favicon")).to_have_attribute("href", re.compile("b3261e"))
    alice.locator("#prompts [data-choice=attack]").click()
    expect(alice.locator("#prompts-panel")).to_be_hidden()
    # Point 5: the roll shows briefly by the target's token too.
    expect(alice.locator("#map [data-creature=gob] .roll-float")).to_contain_text("25 vs AC 13")
    bob.locator("#prompts [data-choice=decline]").click()
    expect(bob.locator("#prompts-panel")).to_be_hidden()
    expect(waits).to_have_count(0)
    # Players see an enemy's hit points as a word (docs/rules.md, "Rulings"); every
    # page shows the dice on the log line (point 5): the d20 and the damage die.
    for page, hp, tracked in ((gm, "8", "8/20"), (alice, "bloodied", ""), (bob, "bloodied", "")):
        attack = page.locator("#log li[data-type=attack_made]").last
        expect(attack).to_contain_text("Aria attacks Gob with rapier (opportunity attack)")
        expect(attack.locator(".roll[data-roll='to hit'] .die")).to_have_text(["20"])
        expect(attack.locator(".roll[data-roll='to hit']")).to_contain_text("+ 5 = 25")
        damage = page.locator("#log li[data-type=damaged]").last
        expect(damage).to_contain_text(f"Gob takes 12 piercing damage (HP {hp}).")
        expect(damage.locator(".roll[data-roll=damage] .die")).to_have_text(["6", "6"])
        expect(page.locator("#log")).to_contain_text("Gob enters Cellar from Kitchen.")
        # A player sees the enemy's hit points as a word ("Bloodied", not "HP bloodied").
        said = f"HP {tracked}" if tracked else hp.capitalize()
        expect(page.locator("#tracker [data-creature=gob]")).to_contain_text(said)
        expect(page.locator("#map [data-zone=cellar] [data-creature=gob]")).to_be_visible()
        expect(page.locator("#log")).to_contain_text("Decided by alice: attack.")
    expect(gm.locator("#prompts-panel")).to_be_hidden()
    gm.screenshot(path=str(ARTIFACTS / "web-table-gm.png"), full_page=True)
    gm.locator("#turn-panel [data-quick=end_turn]").click()

    # -- round 2: Aria follows Gob into the cellar and hits it with a button ---------------
    expect(alice.locator("#tracker")).to_contain_text("Round 2")
    expect(alice.locator("#turn-panel")).to_contain_text("Your turn: Aria")
    alice.locator("#map [data-zone=cellar] .zone-button").click()
    expect(alice.locator("#map [data-zone=cellar] [data-creature=aria]")).to_be_visible()
    # Point 6: the attack's targets are the enemies in reach (Gob, not Brom).
    rapier.click()
    expect(turn.locator(".targets button")).to_have_text(["Gob"])
    turn.locator(".targets button[data-target=gob]").click()
    for page, hp, tracked in ((gm, "0", "0/20"), (alice, "down", ""), (bob, "down", "")):
        expect(page.locator("#log")).to_contain_text(f"Gob takes 12 piercing damage (HP {hp}).")
        # A player sees the enemy's hit points as a word ("Bloodied", not "HP bloodied").
        said = f"HP {tracked}" if tracked else hp.capitalize()
        expect(page.locator("#tracker [data-creature=gob]")).to_contain_text(said)
    # Point 12: the action is spent: Dash is disabled with the reason on hover.
    expect(turn.locator("button[data-quick=dash]")).to_be_disabled()
    expect(turn.locator("button[data-quick=dash]")).to_have_attribute("title", re.compile("action"))

    # Point 9: a rewind on each of the GM's log lines (none on a player's), and the GM
    # undoes the last step (the attack): Gob is back at 8, the undone
    # lines are struck through on every page.
    expect(gm.locator("#log li[data-type=damaged] .rewind-here").last).to_be_visible()
    expect(alice.locator("#log .rewind-here")).to_have_count(0)
    gm.locator("#undo").click()
    for page, tracked in ((gm, "HP 8/20"), (alice, "Bloodied"), (bob, "Bloodied")):
        expect(page.locator("#tracker [data-creature=gob]")).to_contain_text(tracked)
        expect(page.locator("#log li[data-type=damaged].undone")).to_have_count(1)
        expect(page.locator("#log li[data-type=rewound]")).to_be_visible()
    # Point 10: a reload brings the recent log back (Aria's moves and the rewind).
    alice.reload()
    expect(alice.locator("#status")).to_have_text("Connected as player alice")
    expect(alice.locator("#log")).to_contain_text("Aria enters Kitchen from Common room.")
    expect(alice.locator("#log li[data-type=damaged].undone")).to_have_count(1)
    turn.locator("button[data-attack=rapier]").click()
    turn.locator(".targets button[data-target=gob]").click()
    expect(gm.locator("#tracker [data-creature=gob]")).to_contain_text("HP 0/20")
    # Point 11: a defeated creature is engaged with nobody; the GM sees what keeps the
    # fight open (the kitchen fire, with Brom beside it).
    expect(gm.locator("#map [data-creature=brom]")).not_to_contain_text("engaged")
    expect(gm.locator("#gm-hint")).to_contain_text("Grease fire in Kitchen is time-sensitive")

    # Point 11 and 13: the GM drops Brom to 0 from its token: a PC at 0 is dying (a
    # badge, not struck through), and the hint names it.
    gm.locator("#map button[data-creature=brom]").click()
    token_panel.locator("input[name=amount]").fill("30")
    token_panel.locator("[data-token-act=damage]").click()
    brom = bob.locator("#map [data-creature=brom]")
    expect(brom.locator(".badge.dying")).to_have_text("✚ dying")
    expect(gm.locator("#gm-hint")).to_contain_text("Brom is dying")
    token_panel.locator("[data-token-act=stabilize]").click()
    expect(gm.locator("#gm-hint")).not_to_contain_text("Brom is dying")
    # Point 15: a condition with a duration and a save, as a badge on the map and in the tracker.
    token_panel.locator("select[name=condition]").select_option("poisoned")
    token_panel.locator("input[name=rounds]").fill("2")
    token_panel.locator("select[name=save]").select_option("con")
    token_panel.locator("input[name=dc]").fill("12")
    token_panel.locator("[data-token-act=condition]").click()
    for where in ("#map", "#tracker"):
        expect(
            bob.locator(f"{where} [data-creature=brom] .badge[data-condition=poisoned]")
        ).to_have_text("poisoned · 2 rds · CON save DC 12")

    # The token's Heal: back above 0, no longer stable.
    token_panel.locator("input[name=amount]").fill("5")
    token_panel.locator("[data-token-act=heal]").click()
    expect(bob.locator("#tracker [data-creature=brom]")).to_contain_text("HP 5/30")
    expect(bob.locator("#map [data-creature=brom] .badge[data-condition=stable]")).to_have_count(0)

    # Point 7: a refusal is shown beside the form that sent it, in the table's words
    # (issue 34), and cleared by the next change.
    _send(gm, "end_encounter", within="#gm", reason="Gob is beaten")
    refusal = gm.locator("#gm [data-command=end_encounter] .refusal")
    expect(refusal).to_contain_text("The fight is not over")
    expect(refusal.get_by_role("button", name="End it anyway")).to_be_visible()
    _send(gm, "end_encounter", within="#gm", force=True)
    for page in (gm, alice, bob):
        expect(page.locator("#tracker")).to_contain_text("The encounter has ended")
        expect(page.locator("#log")).to_contain_text("The encounter ends: Gob is beaten.")
    expect(gm.locator("#error")).to_be_hidden()
    expect(gm.locator(".refusal")).to_have_count(0)
    alice.screenshot(path=str(ARTIFACTS / "web-table-alice.png"), full_page=True)
    bob.screenshot(path=str(ARTIFACTS / "web-table-bob.png"), full_page=True)
    gm.screenshot(path=str(ARTIFACTS / "web-table-gm-ended.png"), full_page=True)
    for page in (gm, alice, bob):
        assert page.errors == []


def _create_tied_encounter(base: str) -> tuple[str, str]:
    """An encounter (through the protocol) whose three goblins tie on initiative with
    the maximal dice: the GM must order their slots. Turns are timed (ten minutes). Its
    id and the GM's token."""
    import trio

    from zonekeep.protocol.client import connect

    def goblin(n: int) -> dict[str, Any]:
        return {"id": f"gob{n}", "name": f"Goblin {n}", "side": "goblins", "hp": 7,
                "max_hp": 7, "ac": 13, "zone": "kitchen"}  # fmt: skip

    aria = {"id": "aria", "name": "Aria", "side": "party", "controller": "alice",
            "initiative_bonus": 20, "hp": 20, "max_hp": 20, "zone": "common_room"}  # fmt: skip

    async def create() -> tuple[str, str]:
        async with connect(base.replace("http://", "ws://") + "/ws") as gm:
            made = await gm.create_encounter(
                "Three goblins",
                "tavern",
                [aria, *map(goblin, (1, 2, 3))],
                options={"turn_seconds": 600},
            )
            return made["encounter"], made["gm_token"]

    return trio.run(create)


def test_the_gm_orders_three_tied_slots_in_any_order_and_sees_the_turn_timer(
    browser: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    encounter, token = _create_tied_encounter(live_server.base)
    gm = _open(browser, f"{live_server.base}/table/#encounter={encounter}&token={token}")
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    for step in ("set_surprise", "place", "roll_initiative"):
        gm.locator(f"[data-setup={step}]").click()
    prompt = gm.locator("#prompts .prompt[data-kind=initiative_tie]")
    expect(prompt).to_contain_text("Goblin 1, Goblin 2, Goblin 3 tied at 20 on initiative")
    items = prompt.locator(".ordering li")
    # Point 4: names, never ids, where a person reads.
    expect(items).to_have_text(
        [re.compile("^Goblin 1"), re.compile("^Goblin 2"), re.compile("^Goblin 3")]
    )
    assert "gob1" not in prompt.inner_text()
    expect(prompt.locator("li[data-option=gob1] button.up")).to_be_disabled()

    # gob3 to the top, then gob1 below gob2: neither the order shown nor its reverse.
    prompt.locator("li[data-option=gob3] button.up").click()
    prompt.locator("li[data-option=gob3] button.up").click()
    prompt.locator("li[data-option=gob1] button.down").click()
    expect(items).to_have_text(
        [re.compile("^Goblin 3"), re.compile("^Goblin 2"), re.compile("^Goblin 1")]
    )
    prompt.locator("button.confirm-order").click()
    expect(gm.locator("#log")).to_contain_text("Decided by the GM: Goblin 3, Goblin 2, Goblin 1.")

    expect(gm.locator("#prompts-panel")).to_be_hidden()
    expect(gm.locator("#tracker .order li")).to_have_text(
        [re.compile("Aria"), re.compile("Goblin 3"), re.compile("Goblin 2"), re.compile("Goblin 1")]
    )

    # The turn is timed: the tracker counts down Aria's ten minutes, then Goblin 3's.
    timer = gm.locator("#tracker .turn-timer")
    expect(timer).to_have_text(re.compile(r"^(59\d|600) s left$"))
    # Point 19: a bar, full at the start of the turn, that turns red near the end (the
    # test moves the page's deadline to 5 s from now to see it).
    bar = gm.locator("#tracker .timer-bar")
    expect(bar).to_have_attribute("aria-valuenow", re.compile(r"^(59\d|600)$"))
    expect(bar).not_to_have_class(re.compile("urgent"))
    gm.wait_for_function(
        "() => document.querySelector('#tracker .timer-fill')?.getBoundingClientRect().width > 0"
    )
    gm.evaluate(
        """() => { const t = window.zonekeepTable.turnTimer; t.deadlineAt = Date.now() + 5000;
        document.querySelector('#tracker .timer-bar').dataset.deadline = String(t.deadlineAt); }"""
    )
    expect(bar).to_have_class(re.compile("urgent"))
    gm.wait_for_function(
        """() => { const n = document.querySelector('#tracker .timer-fill');
        return n && getComputedStyle(n).backgroundColor === 'rgb(161, 43, 43)'; }"""
    )
    gm.locator("#turn-panel [data-quick=end_turn]").click()
    expect(gm.locator("#tracker .whose-turn")).to_have_text("Goblin 3's turn")
    expect(timer).to_have_text(re.compile(r"^(59\d|600) s left$"))
    expect(gm.locator("#tracker .timer-bar")).not_to_have_class(re.compile("urgent"))
    assert gm.errors == []
