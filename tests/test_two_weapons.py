"""Two-weapon fighting (plugins/classes/_two_weapons.py): after an attack with a light
weapon, the bonus action's ``offhand_attack`` with a different light weapon, its damage
without the ability modifier unless the Two-Weapon Fighting style adds it. Pip
(Dex +4: shortsword +7, 1d6+4; dagger +7, 1d4+4) against an ogre (AC 10), with Kael
(longsword, not light) beside him; the exact outcome of scripted dice."""

from __future__ import annotations

from typing import Any

import attrs
from test_classes import damage, made, ogre, pc, rogue_fight

from zonekeep.plugins.classes import OFF_HAND, TWO_WEAPON
from zonekeep.sdk import ActionTaken, Creature, ResourceSpent, Trait
from zonekeep.sdk.testing import EncounterHarness


def pips_turn(pip: Creature | None = None) -> EncounterHarness:
    h = rogue_fight(pip)
    h.send("end_turn", creature="kael")
    assert h.state.active == "pip"
    return h


def offhand(h: EncounterHarness, *dice: int, **params: Any) -> tuple[Any, ...]:
    return h.rolls(*dice).send("offhand_attack", creature="pip", target="ogre", **params)


def test_no_offhand_attack_before_an_attack_with_a_light_weapon() -> None:
    h = pips_turn()
    refusal = h.refused("offhand_attack", creature="pip", target="ogre")
    assert refusal.code == "invalid_params" and "light weapon" in refusal.message
    assert "offhand_attack" not in h.engine.available_actions(h.state, "pip", h.player("alice"))
    # A bow is not light: after it, still no off-hand attack.
    h.rolls(15, 3).send("attack", creature="pip", target="ogre", attack="shortbow")
    assert h.creature("pip").resources.get(TWO_WEAPON, 0) == 0
    assert h.refused("offhand_attack", creature="pip", target="ogre").code == "invalid_params"


def test_the_other_hand_strikes_without_the_ability_modifier_once_a_turn() -> None:
    h = pips_turn()
    events = h.rolls(15, 3).send("attack", creature="pip", target="ogre", attack="shortsword")
    assert damage(events) == [3 + 4]
    assert h.creature("pip").resources[TWO_WEAPON] == 1  # the shortsword, his 1st attack
    assert "offhand_attack" in h.engine.available_actions(h.state, "pip", h.player("alice"))
    events = offhand(h, 14, 3)  # the first other light weapon: the dagger
    assert ActionTaken("pip", "offhand_attack", "bonus") in events
    attack = made(events)
    assert (attack.attack, attack.roll.total, attack.hit) == ("dagger", 14 + 7, True)
    assert damage(events) == [3]  # 1d4, without Pip's +4
    pip = h.creature("pip")
    assert (pip.resources[TWO_WEAPON], pip.resources[OFF_HAND]) == (0, 0)
    assert h.creature("ogre").hp == 100 - 7 - 3
    assert h.refused("offhand_attack", creature="pip", target="ogre").code in (
        "invalid_params",
        "no_bonus_action_left",
    )
    h.assert_replay_matches()


def test_the_same_weapon_is_refused_and_a_thrown_dagger_is_allowed() -> None:
    h = pips_turn()
    h.rolls(15, 3).send("attack", creature="pip", target="ogre", attack="dagger")
    refusal = h.refused("offhand_attack", creature="pip", target="ogre", attack="dagger (thrown)")
    assert refusal.code == "invalid_params"
    assert refusal.message.endswith("other hand: shortsword.")
    h2 = pips_turn()
    h2.rolls(15, 3).send("attack", creature="pip", target="ogre", attack="shortsword")
    attack = made(offhand(h2, 16, 2, 4, attack="dagger (thrown)"))
    # Thrown in the ogre's zone: a ranged attack in melee, with disadvantage.
    assert (attack.attack, attack.kind, attack.roll.advantage) == (
        "dagger (thrown)",
        "ranged",
        "disadvantage",
    )


def test_sneak_attack_gets_a_second_chance_with_the_other_hand() -> None:
    h = rogue_fight()
    h.rolls(2).send("attack", creature="kael", target="ogre")  # a miss, but engaged
    h.send("end_turn", creature="kael")
    events = h.rolls(2).send("attack", creature="pip", target="ogre")  # 9: a miss
    assert not made(events).hit and h.creature("pip").resources["sneak-attack"] == 1
    events = offhand(h, 15, 2, 4, 6, 1)  # a hit: 1d4, then Sneak Attack's 3d6
    assert damage(events) == [2, 4 + 6 + 1]
    assert ResourceSpent("pip", "sneak-attack", 0) in events
    h.assert_replay_matches()


def test_the_two_weapon_fighting_style_adds_the_modifier() -> None:
    pip = pc("pip")
    style = Trait("fighting-style", "Fighting Style", params={"style": "two-weapon-fighting"})
    h = pips_turn(attrs.evolve(pip, traits=(*pip.traits, style)))
    h.rolls(2).send("attack", creature="pip", target="ogre", attack="shortsword")  # a miss
    assert damage(offhand(h, 15, 3)) == [3 + 4]


def test_a_fighter_without_light_weapons_and_the_next_turn_have_no_offhand_attack() -> None:
    h = rogue_fight()
    h.rolls(15, 5).send("attack", creature="kael", target="ogre")  # a longsword
    assert h.creature("kael").resources.get(TWO_WEAPON, 0) == 0
    refusal = h.refused("offhand_attack", creature="kael", target="ogre")
    assert refusal.code == "invalid_params"
    h.send("end_turn", creature="kael")
    h.rolls(2).send("attack", creature="pip", target="ogre")  # a miss
    assert h.creature("pip").resources[TWO_WEAPON] == 1
    h.send("end_turn", creature="pip")  # ready, but the turn ends unused
    h.send("end_turn", creature="ogre")
    h.send("end_turn", creature="kael")
    assert h.state.active == "pip" and h.creature("pip").resources[TWO_WEAPON] == 0
    assert h.refused("offhand_attack", creature="pip", target="ogre").code == "invalid_params"
    h.assert_replay_matches()


def test_an_ogre_is_not_a_two_weapon_fighter() -> None:
    """A stat block's attacks carry no weapon properties: no off-hand attack."""
    assert all(not a.properties for a in ogre().attacks)
