"""The web table's views on a laptop and on a phone: a crowded fight, a bad link, and
an accessibility check with axe-core on the GM's, a player's and a spectator's view.

The screenshots kept in docs/ (linked from the README) are taken by the story
(test_story.py) with :func:`_keep`: written again only when ``ZONEKEEP_UPDATE_SCREENSHOT``
is set (or when one is missing).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from browser.browser_support import STEP_MS, open_page

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
LONG_NAME = (
    "Sir Bartholomew Aldous Fitzwilliam Montgomery-Wetherby, Knight of the Drowned Lantern Inn"
)


def _open(browser: Any, url: str, viewport: dict[str, int], *, axe: bool = False) -> Any:
    # axe-core is injected as a script the page's CSP would refuse: the pages it checks
    # are opened with the CSP bypassed (every other test keeps it).
    return open_page(browser.new_context(viewport=viewport, bypass_csp=axe), url)


def _keep(page: Any, name: str) -> None:
    """A screenshot for docs/ (only when asked, or missing)."""
    path = DOCS / name
    if os.environ.get("ZONEKEEP_UPDATE_SCREENSHOT") or not path.exists():
        page.screenshot(path=str(path))


def _in_viewport(page: Any, selector: str) -> None:
    """The element's top is inside the window, and it is not cut off at the sides
    (waited for in the page: the table redraws its panels as events come)."""
    page.wait_for_function(
        """sel => { const n = document.querySelector(sel); if (!n) return false;
        const r = n.getBoundingClientRect();
        return r.height > 0 && r.top >= 0 && r.top < innerHeight - 40 && r.left >= 0
          && r.right <= innerWidth + 1; }""",
        arg=selector,
        timeout=STEP_MS,
    )


def _no_sideways_scroll(page: Any) -> None:
    """The document is no wider than the window (the too-wide elements are named)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate(
        """() => [...document.querySelectorAll('*')]
        .filter(n => n.getBoundingClientRect().right > innerWidth + 1).slice(0, 8)
        .map(n => `${n.tagName}#${n.id}.${n.className} ${Math.round(n.getBoundingClientRect().right)}`)"""
    )
    assert width <= page.viewport_size["width"], (width, wide)


def _crowded_encounter(base: str) -> tuple[str, str, str]:
    """Twenty-two creatures: Aria and a knight with a 90-character name (both Alice's,
    tied on initiative, so Alice orders them), and twenty goblins in the cellar, set up
    to the initiative roll through the protocol. Goblin 20 goes first, so Alice's choice
    stays open during its turn (a tie's choice closes when the first tied creature's
    turn starts). The id, the GM's token, Alice's token."""
    import trio

    from zonekeep.protocol.client import connect

    def pc(cid: str, name: str) -> dict[str, Any]:
        return {"id": cid, "name": name, "side": "party", "controller": "alice",
                "initiative_bonus": 30, "hp": 20, "max_hp": 20, "ac": 15, "zone": "common_room",
                "attacks": [{"name": "rapier", "bonus": 5, "damage": "1d8+3",
                             "damage_type": "piercing"}]}  # fmt: skip

    def goblin(n: int) -> dict[str, Any]:
        return {"id": f"g{n}", "name": f"Goblin {n}", "side": "goblins", "hp": 7,
                "max_hp": 7, "ac": 13, "zone": "cellar",
                "initiative_bonus": 40 if n == 20 else n}  # fmt: skip

    async def create() -> tuple[str, str, str]:
        async with connect(base.replace("http://", "ws://") + "/ws") as gm:
            made = await gm.create_encounter(
                "Goblin warren",
                "tavern",
                [pc("aria", "Aria"), pc("sir", LONG_NAME), *map(goblin, range(1, 21))],
                options={"reaction_seconds": 300, "size_limits": False},
            )
            encounter = made["encounter"]
            await gm.command(encounter, "set_surprise", surprised=[])
            await gm.command(encounter, "place")
            seat = await gm.request(
                "create_seat", encounter=encounter, player="alice", creatures=["aria", "sir"]
            )
            await gm.command(encounter, "roll_initiative")
            return encounter, made["gm_token"], seat["token"]

    return trio.run(create)


def _gm_ends_the_turn(base: str, encounter: str, gm_token: str) -> None:
    """The GM ends the running turn through the protocol."""
    import trio

    from zonekeep.protocol.client import connect

    async def end() -> None:
        async with connect(base.replace("http://", "ws://") + "/ws") as gm:
            joined = await gm.join(encounter, gm_token)
            await gm.command(encounter, "end_turn", creature=joined["snapshot"]["active"])

    trio.run(end)


def test_a_crowded_fight_on_a_phone_and_a_laptop(browser: Any, live_server: Any) -> None:
    """Points 1, 2, 4, 16 and 20 (keyboard): the prompt and the turn stay in view in a
    22-creature fight, the phone never scrolls sideways, long names are cut to one line
    with the full name on hover, a crowded zone shows "Goblin x20", a zone is entered
    from the keyboard."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    encounter, gm_token, alice_token = _crowded_encounter(live_server.base)
    alice = _open(
        browser, f"{live_server.base}/table/#encounter={encounter}&token={alice_token}", LAPTOP
    )
    expect(alice.locator("#status")).to_have_text("Connected as player alice")
    prompt = alice.locator("#prompts .prompt[data-kind=initiative_tie]")
    expect(prompt).to_be_visible()
    expect(prompt.locator(".ordering li")).to_have_count(2)
    assert "sir" not in prompt.locator(".ordering").inner_text().split()
    expect(alice).to_have_title(re.compile(r"^\(!\) Decide"))
    # The cellar is crowded: its goblins are one line (Goblin 20, whose turn it is, is
    # drawn apart); the tracker still lists each.
    cellar = alice.locator("#map [data-zone=cellar]")
    expect(cellar.locator(".token.group")).to_have_text(re.compile("Goblin \u00d719"))
    expect(alice.locator("#tracker .member")).to_have_count(22)
    # The prompt is pinned: scrolled to the bottom of the page, it is still in view.
    for viewport in (LAPTOP, PHONE):
        alice.set_viewport_size(viewport)
        alice.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        _in_viewport(alice, "#prompts .prompt")
        _no_sideways_scroll(alice)
        alice.evaluate("window.scrollTo(0, 0)")
    # A long name takes one line, cut short, with the whole name on hover.
    knight = alice.locator("#map [data-creature=sir] .name")
    expect(knight).to_have_text(LONG_NAME)
    assert knight.evaluate("n => n.scrollWidth > n.clientWidth")
    line = knight.evaluate("n => parseFloat(getComputedStyle(n).lineHeight) || 20")
    assert knight.bounding_box()["height"] < 2 * line
    expect(alice.locator("#map [data-creature=sir]")).to_have_attribute(
        "title", re.compile(re.escape(LONG_NAME))
    )
    expect(alice.locator("#map .zone-head").first).to_be_visible()
    for head in alice.locator("#map .zone").all():
        assert head.evaluate("n => n.scrollWidth <= n.clientWidth + 1")

    prompt.locator("button.confirm-order").click()
    expect(alice.locator("#prompts-panel")).to_be_hidden()
    expect(alice.locator("#log")).to_contain_text("Decided by alice: Aria, " + LONG_NAME)
    _gm_ends_the_turn(live_server.base, encounter, gm_token)  # Goblin 20's
    turn = alice.locator("#turn-panel")
    expect(turn).to_contain_text("Your turn: Aria")
    expect(alice).to_have_title(re.compile(r"^\(!\) Aria's turn"))
    for viewport in (PHONE, LAPTOP):
        alice.set_viewport_size(viewport)
        alice.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        _in_viewport(alice, "#turn-panel [data-quick=end_turn]")
        _no_sideways_scroll(alice)
        alice.evaluate("window.scrollTo(0, 0)")
    # The turn comes first on a phone (above the map).
    alice.set_viewport_size(PHONE)
    turn_top = turn.bounding_box()["y"]
    assert turn_top < alice.locator("#map-panel").bounding_box()["y"]

    # Keyboard: the zones are buttons; Enter on the kitchen's moves Aria there.
    kitchen = alice.locator("#map [data-zone=kitchen] .zone-button")
    kitchen.focus()
    expect(kitchen).to_be_focused()
    expect(kitchen).to_have_attribute("aria-label", "Kitchen 30 ft: Aria can enter")
    alice.keyboard.press("Enter")
    expect(alice.locator("#map [data-zone=kitchen] [data-creature=aria]")).to_be_visible()
    assert alice.errors == []


def test_a_bad_link_shows_only_the_message_and_a_field(browser: Any, live_server: Any) -> None:
    """Point 14: a wrong token, an unknown encounter or no link at all: the message and
    a field to paste a link, no empty panels; pasting a good link opens the table."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    page = _open(browser, f"{live_server.base}/table/#encounter=nope&token=wrong", PHONE)
    for url, words in [
        (f"{live_server.base}/table/#encounter=nope&token=wrong", "nope"),
        (f"{live_server.base}/table/#encounter={live_server.encounter}&token=wrong", "token"),
        # /table/ without an encounter is the GM's home (test_builder.py), not a bad link.
    ]:
        page.goto("about:blank")
        page.goto(url)
        expect(page.locator("#no-link")).to_be_visible()
        expect(page.locator("#no-link-message")).to_contain_text(re.compile(words, re.I))
        expect(page.locator("#table")).to_be_hidden()
        expect(page.locator("#map-panel")).to_be_hidden()
        expect(page.locator("#error")).to_be_hidden()
        expect(page.locator("#offline-banner")).to_be_hidden()
    page.locator("#link-field").fill(live_server.table_url(live_server.gm_token))
    page.get_by_role("button", name="Open").click()
    expect(page.locator("#status")).to_have_text("Connected as GM")
    expect(page.locator("#no-link")).to_be_hidden()
    expect(page.locator("#map-panel")).to_be_visible()
    assert page.errors == []


def _seat_link(gm: Any, label: str) -> str:
    """The address of the link the GM's page lists for ``label``; if none comes, what the
    page said instead (its error line, its last log lines, its script errors)."""
    from playwright.sync_api import Error

    link = gm.locator(f"#gm .seat-link[data-seat={label}] a")
    try:
        href = link.get_attribute("href")
    except Error as exc:
        said = gm.evaluate(
            """() => ({error: document.querySelector('#error')?.textContent,
                log: [...document.querySelectorAll('#log li')].slice(-5).map((n) => n.textContent),
                player: document.querySelector('#gm input[name=player]')?.value})"""
        )
        raise AssertionError(f"no link for {label}: {said}, errors {gm.errors}") from exc
    assert href
    return str(href)


def _axe(page: Any, axe_script: Path) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(axe_script))
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def test_axe_finds_nothing_serious_on_the_gm_player_and_spectator_views(
    browser: Any, live_server: Any, axe_script: Path
) -> None:
    """Point 20: no serious or critical axe-core violation on the GM's, a player's (on
    her turn) and a spectator's view at 1280x800 and 390x844; the side of a creature is
    a shape as well as a colour."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = _open(browser, live_server.table_url(live_server.gm_token), LAPTOP, axe=True)
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    gm.locator("[data-setup=place]").click()  # sets surprise (nobody), then places
    expect(gm.locator("#log")).to_contain_text("Positions:")
    gm.locator("#gm input[name=player]").fill("alice")
    gm.locator("#gm .seats input[type=checkbox][value=aria]").check()
    gm.locator("[data-gm=create_seat]").click()
    alice_url = _seat_link(gm, "alice")
    gm.locator("[data-gm=spectator]").click()
    watch_url = _seat_link(gm, "spectators")
    gm.locator("[data-setup=roll_initiative]").click()
    expect(gm.locator("#tracker")).to_contain_text("Aria's turn")
    gm.locator("#map button[data-creature=gob]").click()
    expect(gm.locator("#gm-token")).to_be_visible()

    alice = _open(browser, alice_url, LAPTOP, axe=True)
    watcher = _open(browser, watch_url, LAPTOP, axe=True)
    expect(alice.locator("#turn-panel")).to_contain_text("Your turn: Aria")
    expect(watcher.locator("#status")).to_have_text("Connected as spectator")
    expect(watcher.locator("#map [data-creature=gob]")).to_be_visible()
    # Friend and foe: a different shape, not only a colour.
    party = watcher.locator("#map [data-creature=aria] .mark").inner_text()
    foes = watcher.locator("#map [data-creature=gob] .mark").inner_text()
    assert party != foes
    # A spectator watches: no turn, no GM tools, no rewind on the log.
    expect(watcher.locator("#turn-panel")).to_be_hidden()
    expect(watcher.locator("#gm-panel")).to_be_hidden()
    expect(watcher.locator("#log .rewind-here")).to_have_count(0)
    # The optional sound: ticking it plays a beep (Web Audio) without a script error.
    alice.locator("#sound").check()
    # The prompts and the log are announced (aria-live); the zones are buttons.
    for page in (gm, alice, watcher):
        expect(page.locator("#prompts")).to_have_attribute("aria-live", "assertive")
        expect(page.locator("#log")).to_have_attribute("aria-live", "polite")
        expect(page.locator("#map .zone button.zone-button")).to_have_count(5)
    found: dict[str, Any] = {}
    for who, page in (("gm", gm), ("player", alice), ("spectator", watcher)):
        for viewport in (LAPTOP, PHONE):
            page.set_viewport_size(viewport)
            _no_sideways_scroll(page)
            violations = _axe(page, axe_script)
            if violations:
                found[f"{who} {viewport['width']}"] = violations
    assert found == {}, json.dumps(found, indent=1)

    # The page follows the `actions` reply's details when the server sends them (the
    # refusal's sentence, the attacks with their targets, the zones with their cost),
    # and works them out from the snapshot when it does not (as on this server).
    alice.set_viewport_size(LAPTOP)
    turn = alice.locator("#turn-panel")
    expect(turn.locator("button[data-attack=rapier]")).to_have_text("Rapier +5, 1d6")
    expect(alice.locator("#map [data-zone=kitchen] .zone-cost")).to_have_text("30 ft")
    details = [
        {"id": "attack", "available": True, "code": "", "message": "",
         "attacks": [{"name": "rapier", "label": "Rapier +5, 1d6 (server)", "bonus": 5,
                      "damage": "1d6", "targets": ["gob"]}],
         "targets": None, "zones": None, "props": None},
        {"id": "dash", "available": False, "code": "no_action_left",
         "message": "Aria has no action left (server).", "attacks": None, "targets": None,
         "zones": None, "props": None},
        {"id": "enter", "available": True, "code": "", "message": "", "attacks": None,
         "targets": None, "zones": [{"zone": "bar", "cost_feet": 10}], "props": None},
    ]  # fmt: skip
    alice.evaluate(
        """details => { const app = window.zonekeepTable;
        app.actions = {creature: "aria", actions: ["attack", "enter"], details};
        app.render(); }""",
        details,
    )
    expect(turn.locator("button[data-attack=rapier]")).to_have_text("Rapier +5, 1d6 (server)")
    expect(turn.locator("button[data-quick=dash]")).to_be_disabled()
    expect(turn.locator("button[data-quick=dash]")).to_have_attribute(
        "title", "Aria has no action left (server)."
    )
    expect(alice.locator("#map [data-zone=bar] .zone-cost")).to_have_text("10 ft")
    expect(alice.locator("#map [data-zone=kitchen]")).to_have_class(re.compile("unreachable"))
    turn.locator("button[data-attack=rapier]").click()
    expect(turn.locator(".targets button")).to_have_text(["Gob"])
    for page in (gm, alice, watcher):
        assert page.errors == []
