"""The class features the ``zonekeep.classes`` plugin implements (issue 31, point 2), each
tested from the SRD 5.1 class text with the pregenerated characters (Kael, a level-5
champion fighter; Pip, a level-5 thief rogue) and scripted dice:

- Second Wind: a bonus action that regains 1d10 + fighter level hit points, once per
  short or long rest.
- Action Surge: one more action on the fighter's turn, once per short or long rest.
- Improved Critical: a weapon attack is a critical hit on a natural 19 or 20.
- Extra Attack: the Attack action makes two attacks.
- Sneak Attack: once per turn, 1d6 per two rogue levels (rounded up) more damage on a
  finesse or ranged hit with advantage, or with another enemy of the target within 5
  feet of it (in zones: engaged with it), not incapacitated, and no disadvantage.
- Cunning Action: Dash, Disengage or Hide as a bonus action.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from arena_fixture import harness
from helpers import make

from zonekeep.sdk import (
    ActionGranted,
    ActionTaken,
    AttackMade,
    Creature,
    Damaged,
    Dashed,
    Disengaged,
    EncounterOptions,
    Healed,
    ResourceRestored,
    ResourceSpent,
    Trait,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness

ROOT = Path(__file__).resolve().parent.parent
CHARACTERS = ROOT / "examples" / "characters"


def sheet(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CHARACTERS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def pc(name: str, data: dict[str, Any] | None = None) -> Creature:
    return character_creature(parse_character(data or sheet(name)), name, controller="alice")


def fight(*creatures: Creature, initiative: list[int]) -> EncounterHarness:
    """Everyone in the hall; flanking off, so that the only advantage is the test's."""
    return harness(
        list(creatures),
        {c.id: "hall" for c in creatures},
        initiative,
        options=EncounterOptions(flanking=False),
    )


def ogre(**kw: Any) -> Creature:
    return make("ogre", "foes", hp=kw.pop("hp", 100), ac=kw.pop("ac", 10), **kw)


def made(events: tuple[Any, ...]) -> AttackMade:
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    return attack


def damage(events: tuple[Any, ...]) -> list[int]:
    return [e.amount for e in events if isinstance(e, Damaged)]


def healed(events: tuple[Any, ...]) -> list[tuple[str, int, int, str]]:
    return [(e.creature, e.amount, e.hp, e.source) for e in events if isinstance(e, Healed)]


# -- fighter ------------------------------------------------------------------------------------


def test_second_wind_heals_1d10_plus_the_fighter_level_once_per_short_rest() -> None:
    h = fight(pc("kael"), ogre(), initiative=[20, 5])
    h.send("override", creature="kael", field="hp", value=20)
    events = h.rolls(7).send("second_wind", creature="kael")
    assert ActionTaken("kael", "second_wind", "bonus") in events
    assert ResourceSpent("kael", "second-wind", 0) in events
    assert healed(events) == [("kael", 7 + 5, 32, "second-wind")]
    assert h.creature("kael").hp == 32
    assert h.creature("kael").resources["second-wind"] == 0
    refusal = h.refused("second_wind", creature="kael")
    assert refusal.code == "no_uses_left"
    # A short rest gives it back; the healing never goes above the maximum (44).
    h.send("rest", kind="short")
    h.end_turn()
    h.end_turn()
    h.send("override", creature="kael", field="hp", value=40)
    events = h.rolls(10).send("second_wind", creature="kael")
    assert healed(events) == [("kael", 15, 44, "second-wind")]
    h.assert_replay_matches()


def test_second_wind_is_refused_to_a_creature_without_it_and_costs_the_bonus_action() -> None:
    h = fight(pc("kael"), pc("pip"), ogre(), initiative=[20, 15, 5])
    h.send("override", creature="kael", field="hp", value=20)
    h.send("end_turn", creature="kael")
    assert h.refused("second_wind", creature="pip").code == "no_such_feature"
    h.send("cunning_action", creature="pip", choice="dash")
    assert h.state.resources.bonus_actions == 0


def test_extra_attack_and_action_surge_give_a_champion_four_attacks_in_one_turn() -> None:
    h = fight(pc("kael"), ogre(), initiative=[20, 5])
    # Longsword: +7 to hit, 1d8+4. The Attack action makes two attacks.
    first = h.rolls(12, 3).send("attack", creature="kael", target="ogre")
    assert ActionTaken("kael", "attack", "action") in first
    assert ActionGranted("kael", "attack", "extra attack", 1) in first
    assert made(first).hit and damage(first) == [7]
    assert (h.state.resources.actions, h.state.resources.attacks) == (0, 1)
    second = h.rolls(12, 4).send("attack", creature="kael", target="ogre")
    assert ActionTaken("kael", "attack", "attack") in second
    assert not any(isinstance(e, ActionGranted) for e in second)
    assert h.state.resources.attacks == 0
    assert h.refused("attack", creature="kael", target="ogre").code == "no_action_left"
    # Action Surge: one more action, so one more Attack action of two attacks.
    surge = h.send("action_surge", creature="kael")
    assert ResourceSpent("kael", "action-surge", 0) in surge
    assert ActionGranted("kael", "action", "action-surge") in surge
    assert h.state.resources.actions == 1
    third = h.rolls(2).send("attack", creature="kael", target="ogre")
    assert ActionTaken("kael", "attack", "action") in third and not made(third).hit
    h.rolls(2).send("attack", creature="kael", target="ogre")
    assert h.refused("attack", creature="kael", target="ogre").code == "no_action_left"
    assert h.refused("action_surge", creature="kael").code == "no_uses_left"
    assert h.creature("ogre").hp == 100 - 7 - 8
    h.assert_replay_matches()


def test_a_level_3_fighter_makes_one_attack_per_action() -> None:
    h = fight(pc("brenna"), ogre(), initiative=[20, 5])
    events = h.rolls(2).send("attack", creature="brenna", target="ogre")
    assert not any(isinstance(e, ActionGranted) for e in events)
    assert h.refused("attack", creature="brenna", target="ogre").code == "no_action_left"


def test_improved_critical_makes_a_natural_19_a_critical_hit() -> None:
    h = fight(pc("kael"), ogre(ac=30), make("aria", ac=12), initiative=[20, 10, 5])
    # 19 + 7 = 26 misses AC 30, but a champion's natural 19 is a critical hit: 2d8+4.
    events = h.rolls(19, 3, 5).send("attack", creature="kael", target="ogre")
    attack = made(events)
    assert (attack.hit, attack.critical) == (True, True)
    assert damage(events) == [3 + 5 + 4]
    h.end_turn()
    # Anyone else's natural 19 is a plain roll: 19 + 4 misses AC 30.
    h.end_turn()  # the ogre's turn
    other = h.rolls(19).send("attack", creature="aria", target="ogre")
    assert (made(other).hit, made(other).critical) == (False, False)


# -- rogue --------------------------------------------------------------------------------------


def rogue_fight(pip: Creature | None = None) -> EncounterHarness:
    """Kael, then Pip, then the ogre (AC 10), all in the hall."""
    return fight(pc("kael"), pip or pc("pip"), ogre(), initiative=[20, 15, 5])


def test_sneak_attack_needs_an_ally_engaged_with_the_target_or_advantage() -> None:
    h = rogue_fight()
    h.send("end_turn", creature="kael")
    # Pip alone: no advantage, nobody else engaged with the ogre: no Sneak Attack.
    events = h.rolls(15, 3).send("attack", creature="pip", target="ogre")
    assert made(events).hit and damage(events) == [3 + 4]
    assert not any(isinstance(e, ResourceSpent) for e in events)
    assert h.creature("pip").resources.get("sneak-attack", 1) == 1


def test_sneak_attack_with_an_engaged_ally_deals_3d6_once_per_turn() -> None:
    pip = pc("pip")
    # (Extra Attack given here only to make two hits in one rogue turn.)
    pip = attrs.evolve(pip, traits=(*pip.traits, Trait("extra-attack", "Extra Attack")))
    h = rogue_fight(pip)
    h.rolls(2).send("attack", creature="kael", target="ogre")  # a miss, but engaged
    assert ("kael", "ogre") in h.state.engagements
    h.send("end_turn", creature="kael")
    # Shortsword (finesse): +7, 1d6+4; then Sneak Attack 3d6.
    events = h.rolls(15, 3, 2, 4, 6).send("attack", creature="pip", target="ogre")
    assert damage(events) == [3 + 4, 2 + 4 + 6]
    assert ResourceSpent("pip", "sneak-attack", 0) in events
    # The second hit of the same turn: no Sneak Attack.
    events = h.rolls(15, 5).send("attack", creature="pip", target="ogre")
    assert damage(events) == [5 + 4]
    assert h.creature("ogre").hp == 100 - 7 - 12 - 9
    # The next turn (the ogre's) gives it back.
    events = h.send("end_turn", creature="pip")
    assert ResourceRestored("pip", "sneak-attack", 1, "turn") in events
    h.assert_replay_matches()


def test_sneak_attack_with_advantage_needs_no_ally_and_doubles_on_a_critical_hit() -> None:
    h = rogue_fight()
    h.send("end_turn", creature="kael")
    h.send("grant_condition", creature="ogre", condition="prone")
    # Prone, attacked from its zone in melee: advantage (the 20 is kept): a critical hit,
    # the shortsword's die and Sneak Attack's doubled: 2d6+4, then 6d6.
    events = h.rolls(20, 4, 1, 2, 1, 1, 1, 1, 1, 1).send("attack", creature="pip", target="ogre")
    attack = made(events)
    assert (attack.roll.advantage, attack.critical) == ("advantage", True)
    assert damage(events) == [1 + 2 + 4, 6]


def test_no_sneak_attack_with_disadvantage_even_with_an_engaged_ally() -> None:
    h = rogue_fight()
    h.rolls(2).send("attack", creature="kael", target="ogre")
    h.send("end_turn", creature="kael")
    h.send("grant_condition", creature="ogre", condition="dodging")
    events = h.rolls(18, 16, 3).send("attack", creature="pip", target="ogre")
    attack = made(events)
    assert attack.roll.advantage == "disadvantage" and attack.hit
    assert damage(events) == [3 + 4]


def test_an_incapacitated_ally_gives_no_sneak_attack() -> None:
    h = rogue_fight()
    h.rolls(2).send("attack", creature="kael", target="ogre")
    h.send("end_turn", creature="kael")
    h.send("grant_condition", creature="kael", condition="stunned")
    events = h.rolls(15, 3).send("attack", creature="pip", target="ogre")
    assert damage(events) == [3 + 4]


@pytest.mark.parametrize(("level", "dice"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
def test_sneak_attack_dice_go_up_with_the_rogue_level(level: int, dice: int) -> None:
    data = sheet("pip")
    data["classes"] = [{"name": "rogue", "level": level, "subclass": "thief"}]
    for trait in data["traits"]:
        if trait["id"] == "sneak-attack":
            trait.pop("params", None)  # the dice from the level
    h = rogue_fight(pc("pip", data))
    h.rolls(2).send("attack", creature="kael", target="ogre")
    h.send("end_turn", creature="kael")
    events = h.rolls(15, 3, *[1] * dice).send("attack", creature="pip", target="ogre")
    assert damage(events) == [3 + 4, dice]
    sneak = [e for e in events if isinstance(e, Damaged)][1]
    assert sneak.roll is not None and len(sneak.roll.dice) == dice


def test_cunning_action_dashes_or_disengages_as_a_bonus_action_and_leaves_hide_to_the_gm() -> None:
    h = rogue_fight()
    h.send("end_turn", creature="kael")
    refusal = h.refused("cunning_action", creature="pip", choice="hide")
    assert refusal.code == "invalid_params" and "GM" in refusal.message
    assert h.refused("cunning_action", creature="pip", choice="fly").code == "invalid_params"
    events = h.send("cunning_action", creature="pip", choice="disengage")
    assert ActionTaken("pip", "cunning_action", "bonus") in events
    assert Disengaged("pip") in events
    assert h.refused("cunning_action", creature="pip", choice="dash").code == (
        "no_bonus_action_left"
    )
    h.end_turn()
    h.end_turn()
    h.end_turn()  # Pip again
    assert Dashed("pip") in h.send("cunning_action", creature="pip", choice="dash")


def test_the_class_actions_are_offered_with_the_others_while_they_can_be_used() -> None:
    h = rogue_fight()
    alice = h.player("alice")
    offered = h.engine.available_actions(h.state, "kael", alice)
    assert {"second_wind", "action_surge", "attack"} <= set(offered)
    assert "cunning_action" not in offered
    h.send("action_surge", creature="kael")
    assert "action_surge" not in h.engine.available_actions(h.state, "kael", alice)
    h.send("end_turn", creature="kael")
    offered = h.engine.available_actions(h.state, "pip", alice)
    assert "cunning_action" in offered and "second_wind" not in offered


def test_with_the_classes_plugin_off_the_features_are_the_gms() -> None:
    from zonekeep.sdk.engine import load_default_plugins

    plugins = [p for p in load_default_plugins() if p.__name__ != "zonekeep.plugins.classes"]
    h = EncounterHarness([pc("kael"), ogre()], plugins=plugins)
    h.start(initiative=[20, 5])
    assert h.refused("second_wind", creature="kael").code == "unknown_command"


def test_the_srd_spys_stat_block_sneak_attack_needs_no_finesse_and_deals_its_2d6() -> None:
    import zonekeep.plugins.srd as srd_plugin
    from zonekeep.sdk.host import entry_creatures

    entry = next(e for e in srd_plugin.srd_source().entries if e.id == "spy")
    (spy,) = entry_creatures(entry, id_prefix="spy", overrides={"name": "Spy", "side": "party"})
    h = fight(pc("kael"), spy, ogre(), initiative=[20, 15, 5])
    h.rolls(2).send("attack", creature="kael", target="ogre")
    h.send("end_turn", creature="kael")
    assert h.state.active == spy.id
    # Shortsword +4, 1d6+2; Sneak Attack 2d6 (its params), spending its use for the turn.
    events = h.rolls(15, 3, 2, 5).send(
        "attack", creature=spy.id, target="ogre", attack="shortsword"
    )
    assert damage(events) == [3 + 2, 2 + 5]
    assert ResourceSpent(spy.id, "sneak-attack", 0) in events
