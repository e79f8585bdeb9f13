"""The GM's stat block and a monster's stat-block actions on the web table (issue 30): the
GM opens a creature's token and reads its whole stat block (AC, hit points with hit
dice, speeds, abilities, saves and skills, immunities, senses, traits and actions with
their text, uses left and recharge state, each feature automated or "GM adjudicates"
with the reason), with no serious or critical axe-core violation; a player's phone never
shows it nor gets its data; a monster's turn offers its automated actions as buttons:
Multiattack as one choice showing its sequence, Nimble Escape among the bonus actions."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser.browser_support import LAPTOP_SIZE, STEP_MS, MaxDice, open_page, server_in_thread

from zonekeep.protocol import CreateEncounterParams
from zonekeep.server._app import ZonekeepServer

PHONE = {"width": 390, "height": 844}

ARIA = {
    "id": "aria",
    "name": "Aria",
    "side": "party",
    "controller": "alice",
    "dex_mod": -1,
    "hp": 30,
    "max_hp": 30,
    "ac": 14,
    "zone": "common_room",
    "attacks": [{"name": "blade", "bonus": 4, "damage": "1d6+2", "damage_type": "slashing"}],
}


def _ref(entry: str, **more: Any) -> dict[str, Any]:
    return {"compendium": entry, "zone": "common_room", **more}


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Two encounters: "sheets" (a brass dragon wyrmling, animated armor, a goblin and
    Aria) and "turns" (a goblin, a brown bear and Aria: with every die at its highest
    the goblin acts first, then the bear). Their GM links and alice's seat link."""

    async def setup(server: ZonekeepServer) -> dict[str, str]:
        links: dict[str, str] = {}
        rosters = {
            "sheets": [
                _ref("srd.brass-dragon-wyrmling", id="wyrm"),
                _ref("srd.animated-armor", id="armor"),
                _ref("srd.goblin"),
                ARIA,
            ],
            "turns": [_ref("srd.goblin"), _ref("srd.brown-bear", id="bear"), ARIA],
        }
        for name, roster in rosters.items():
            room, gm = await server.registry.create_room_from_request(
                CreateEncounterParams(name=name, arena="tavern", creatures=roster),
                "127.0.0.1",
                loopback=True,
            )
            alice = await room.grant("player", "alice")
            base = f"/table/#encounter={room.id}"
            links[name] = f"{base}&token={gm}"
            links[f"{name}-alice"] = f"{base}&token={alice}"
        return links

    with server_in_thread(tmp_path / "server", MaxDice(), setup) as (base, links):
        yield {k: base + v for k, v in links.items()}


def _axe(page: Any, axe_script: Path) -> list[dict[str, Any]]:
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


def test_the_gm_reads_a_creatures_stat_block_from_its_token(
    browser: Any, tables: dict[str, str], axe_script: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    # bypass_csp: axe-core is injected as a script the page's CSP would refuse.
    context = browser.new_context(viewport=LAPTOP_SIZE, bypass_csp=True)
    gm = open_page(context, tables["sheets"])
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    block = gm.locator("#stat-block")
    expect(block).to_be_hidden()
    gm.locator("#map button.token[data-creature=wyrm-1]").click()
    expect(block).to_be_visible()
    expect(block.locator("h3")).to_have_text("Brass Dragon Wyrmling: stat block")
    props = block.locator(".sb-props")
    expect(props).to_contain_text("Armor Class16")
    expect(props).to_contain_text("Hit Points16 / 16 (3d8+3)")
    expect(props).to_contain_text("Speed30 ft, burrow 15 ft, fly 60 ft")
    expect(props).to_contain_text("Damage Immunitiesfire")
    expect(props).to_contain_text("Sensesblindsight 10 ft, darkvision 60 ft, passive Perception")
    expect(block.locator("td[data-ability=str]")).to_have_text("+2")
    expect(block.locator("td[data-ability=dex]")).to_have_text("+0")
    breath = block.locator("[data-section=action] li[data-feature=breath]")
    expect(breath).to_contain_text("Recharge 5\u20136: ready")
    expect(breath.locator(".auto")).to_have_text("Automated")
    expect(breath.locator(".feature-text")).not_to_be_empty()
    expect(block.locator("[data-section=action] li.attack[data-attack=bite]")).to_contain_text(
        "Melee +4 to hit, reach 5 ft; 1d10+2 piercing"
    )
    expect(block.locator("[data-section=resources] li[data-resource=breath]")).to_contain_text(
        "Breath Weapons: Recharge 5\u20136: ready"
    )
    # Another creature: its traits the GM adjudicates, with the reason.
    gm.locator("#map button.token[data-creature=wyrm-1]").click()  # closes it
    expect(block).to_be_hidden()
    gm.locator("#map button.token[data-creature=armor-1]").click()
    traits = block.locator("[data-section=traits]")
    expect(traits.locator("li")).to_have_count(3)
    antimagic = traits.locator("li[data-feature=antimagic-susceptibility]")
    expect(antimagic.locator(".auto")).to_have_text(
        "GM adjudicates: antimagic fields and dispel magic are spells the rules do not model"
    )
    expect(antimagic.locator(".feature-text")).to_contain_text("antimagic field")
    false_appearance = traits.locator("li[data-feature=false-appearance]")
    expect(false_appearance.locator(".auto")).to_have_text("Automated")
    expect(false_appearance.locator(".feature-text")).to_contain_text("ordinary suit of armor")
    multiattack = block.locator("[data-section=action] li[data-feature=multiattack]")
    expect(multiattack.locator(".auto")).to_have_text("Automated")
    expect(multiattack.locator(".feature-sequence")).to_have_text("Sequence: slam, slam")
    expect(block.locator(".sb-props")).to_contain_text("Damage Immunitiespoison, psychic")
    expect(block.locator(".sb-props")).to_contain_text("Condition Immunities")
    assert _axe(gm, axe_script) == []
    if shots := os.environ.get("ZONEKEEP_SCREENSHOTS"):
        gm.screenshot(path=str(Path(shots) / "stat-block.png"), full_page=True)
    assert gm.errors == []


def test_a_players_phone_neither_shows_nor_gets_another_creatures_stat_block(
    browser: Any, tables: dict[str, str]
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    alice = open_page(context, tables["sheets-alice"])
    expect(alice.locator("#status")).to_have_text("Connected as player alice")
    expect(alice.locator("#map [data-creature=wyrm-1]")).to_be_visible()
    expect(alice.locator("#stat-block")).to_be_hidden()
    expect(alice.locator("#map button.token")).to_have_count(0)  # tokens open nothing
    expect(alice.locator("body")).not_to_contain_text("Recharge")
    expect(alice.locator("body")).not_to_contain_text("3d8+3")
    sheets = alice.evaluate(
        """() => Object.fromEntries(Object.entries(window.zonekeepTable.state.creatures)
             .map(([id, c]) => [id, [c.ac, c.hit_dice, c.traits.length, c.actions.length,
                                     c.attacks.length, Object.keys(c.abilities).length,
                                     Object.keys(c.senses).length]]))"""
    )
    for cid in ("wyrm-1", "armor-1", "goblin-1"):
        assert sheets[cid] == [None, None, 0, 0, 0, 0, 0], (cid, sheets[cid])
    assert sheets["aria"][0] == 14 and sheets["aria"][4] == 1  # her own sheet
    assert alice.errors == []


def test_a_monsters_turn_offers_its_stat_block_actions(
    browser: Any, tables: dict[str, str]
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = open_page(browser.new_context(viewport=LAPTOP_SIZE), tables["turns"])
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    gm.locator("[data-setup=roll_initiative]").click()
    expect(gm.locator("#tracker")).to_contain_text("Round 1")
    expect(gm.locator("#turn-title")).to_contain_text("Goblin")
    features = gm.locator("#quick .quick.features")
    escape = features.locator("button[data-feature=nimble-escape]")
    expect(escape).to_have_text("Nimble Escape (bonus action)")
    expect(escape).to_be_enabled()
    escape.click()  # a choice to make: its ways open as buttons (no typed ids)
    ways = gm.locator("#quick [data-feature-form=nimble-escape]")
    expect(ways.locator("button")).to_have_text(["disengage", "hide"])
    ways.get_by_role("button", name="disengage").click()
    expect(ways).to_have_count(0)
    expect(gm.locator("#resources [data-resource=disengaged]")).to_have_text("yes")
    expect(escape).to_be_disabled()  # the bonus action is spent
    gm.locator("#quick [data-quick=end_turn]").click()
    expect(gm.locator("#turn-title")).to_contain_text("Brown Bear")
    multi = features.locator("button[data-feature=multiattack]")
    expect(multi).to_have_count(1)
    expect(multi).to_have_text("Multiattack: bite, claws")
    multi.click()
    targets = gm.locator("#quick [role=group][aria-label='Targets for Multiattack']")
    expect(targets).to_contain_text("bite: target")
    targets.locator("button[data-target=aria]").click()
    expect(gm.locator("#log")).to_contain_text("Aria")
    expect(multi).to_have_text("Multiattack, next: claws")
    expect(targets.locator("button[data-target=goblin-1]")).to_have_text("Goblin (ally)")
    if shots := os.environ.get("ZONEKEEP_SCREENSHOTS"):
        gm.screenshot(path=str(Path(shots) / "monster-turn.png"))
    assert gm.errors == []
