"""The paladin's and the ranger's features the ``zonekeep.classes`` plugin implements,
each tested from the SRD 5.1 text with level-5 characters built from sheets and
scripted dice:

- Lay on Hands: a pool of five times the paladin level per long rest; an action that
  restores hit points from it to a creature touched.
- Divine Smite: on a melee weapon hit, a spell slot for 2d8 radiant damage more, 1d8
  per slot level above 1st, at most 5d8 (dice doubled on a critical hit).
- Hunter's Prey, Colossus Slayer: once per turn, 1d8 more damage on a weapon hit
  against a creature below its hit point maximum.
"""

from __future__ import annotations

from typing import Any

import attrs
from arena_fixture import harness
from helpers import make

from zonekeep.sdk import (
    ActionTaken,
    AttackMade,
    Creature,
    Damaged,
    EncounterOptions,
    Healed,
    ResourceRestored,
    ResourceSpent,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def paladin(slots: dict[str, int] | None = None) -> Creature:
    """Ser Aldric, level 5: Str 16, Cha 16; longsword +6, 1d8+3; slots 4 and 2."""
    data: dict[str, Any] = {
        "name": "Aldric",
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": "paladin", "level": 5, "subclass": "devotion"}],
        "ability_scores": {"str": 16, "dex": 10, "con": 14, "int": 8, "wis": 12, "cha": 16},
        "hp": 44,
        "ac": 18,
        "save_proficiencies": ["wis", "cha"],
        "weapons": [{"name": "longsword"}, {"name": "javelin"}],
        "spellcasting_ability": "cha",
        "spell_slots": slots if slots is not None else {"1": 4, "2": 2},
        "traits": [
            {"id": "divine-smite", "name": "Divine Smite", "text": "Smite."},
            {"id": "extra-attack", "name": "Extra Attack", "text": "Two attacks."},
        ],
        "actions": [{"id": "lay-on-hands", "name": "Lay on Hands", "text": "Heal."}],
        "resources": [
            {"id": "lay-on-hands", "name": "Lay on Hands pool", "count": 25, "per": "long_rest"}
        ],
    }
    return character_creature(parse_character(data), "aldric", controller="alice")


def ranger() -> Creature:
    """Wynn, level 5 hunter: Dex 16; longbow +6, 1d8+3; shortsword +6, 1d6+3."""
    data: dict[str, Any] = {
        "name": "Wynn",
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": "ranger", "level": 5, "subclass": "hunter"}],
        "ability_scores": {"str": 12, "dex": 16, "con": 14, "int": 10, "wis": 14, "cha": 8},
        "hp": 44,
        "ac": 15,
        "weapons": [{"name": "shortsword"}, {"name": "longbow"}],
        "traits": [
            {
                "id": "hunters-prey",
                "name": "Hunter's Prey: Colossus Slayer",
                "text": "1d8 more on a wounded creature, once per turn.",
                "params": {"choice": "colossus-slayer"},
            },
            {"id": "extra-attack", "name": "Extra Attack", "text": "Two attacks."},
        ],
    }
    return character_creature(parse_character(data), "wynn", controller="alice")


def fight(*creatures: Creature, zones: dict[str, str] | None = None) -> EncounterHarness:
    return harness(
        list(creatures),
        zones or {c.id: "hall" for c in creatures},
        [20 - i for i in range(len(creatures))],
        options=EncounterOptions(flanking=False),
    )


def ogre(hp: int = 100) -> Creature:
    return make("ogre", "foes", hp=hp, ac=10)


def made(events: tuple[Any, ...]) -> AttackMade:
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    return attack


def hits(events: tuple[Any, ...]) -> list[Damaged]:
    return [e for e in events if isinstance(e, Damaged)]


# -- Lay on Hands -------------------------------------------------------------------------------


def test_lay_on_hands_restores_hit_points_from_a_pool_of_five_per_level() -> None:
    ally = make("aria", controller="alice", hp=30)
    h = fight(paladin(), ally, ogre())
    h.send("override", creature="aria", field="hp", value=5)
    events = h.send("lay_on_hands", creature="aldric", target="aria", amount=10)
    assert ActionTaken("aldric", "lay_on_hands", "action") in events
    assert ResourceSpent("aldric", "lay-on-hands", 15) in events
    assert Healed("aria", 10, 15, "aldric") in events
    h.end_turn()
    h.end_turn()
    h.end_turn()
    # The pool has 15 left: 16 is refused (and changes nothing); 15 empties it.
    assert h.refused("lay_on_hands", creature="aldric", target="aria", amount=16).code == (
        "invalid_params"
    )
    assert h.refused("lay_on_hands", creature="aldric", target="aria", amount=0).code == (
        "invalid_params"
    )
    assert h.creature("aldric").resources["lay-on-hands"] == 15
    h.send("override", creature="aldric", field="hp", value=30)
    events = h.send("lay_on_hands", creature="aldric", target="aldric", amount=15)
    assert Healed("aldric", 15, 44, "aldric") in events  # never above the maximum
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert h.refused("lay_on_hands", creature="aldric", target="aria", amount=1).code == (
        "no_uses_left"
    )
    h.assert_replay_matches()


def test_without_the_class_resource_the_pool_is_five_times_the_paladin_level() -> None:
    sheetless = attrs.evolve(paladin(), resources={})
    h = fight(sheetless, ogre())
    h.send("override", creature="aldric", field="hp", value=10)
    events = h.send("lay_on_hands", creature="aldric", target="aldric", amount=25)
    assert ResourceSpent("aldric", "lay-on-hands", 0) in events
    assert Healed("aldric", 25, 35, "aldric") in events


def test_lay_on_hands_is_a_touch_refused_for_a_creature_in_another_zone() -> None:
    ally = make("aria", controller="alice", hp=30)
    h = fight(paladin(), ally, ogre(), zones={"aldric": "hall", "aria": "yard", "ogre": "hall"})
    refusal = h.refused("lay_on_hands", creature="aldric", target="aria", amount=5)
    assert refusal.code == "out_of_range"
    assert h.creature("aldric").resources["lay-on-hands"] == 25


# -- Divine Smite -------------------------------------------------------------------------------


def test_divine_smite_spends_a_slot_on_the_next_melee_hit_for_2d8_radiant() -> None:
    h = fight(paladin(), ogre())
    events = h.send("divine_smite", creature="aldric", slot=1)
    assert ResourceRestored("aldric", "divine-smite", 1, "declared") in events
    # A miss spends nothing.
    h.rolls(2).send("attack", creature="aldric", target="ogre")
    assert h.creature("aldric").resources["spell-slots-1"] == 4
    # A hit: the longsword's 1d8+3, then 2d8 radiant, one slot of 1st level.
    events = h.rolls(15, 5, 3, 6).send("attack", creature="aldric", target="ogre")
    assert ResourceSpent("aldric", "spell-slots-1", 3) in events
    done = hits(events)
    assert [(d.amount, d.damage_type) for d in done] == [(8, "slashing"), (9, "radiant")]
    assert h.creature("ogre").hp == 100 - 17
    assert h.creature("aldric").resources["divine-smite"] == 0
    h.assert_replay_matches()


def test_divine_smite_adds_1d8_per_slot_level_above_1st_doubled_on_a_critical_hit() -> None:
    h = fight(paladin(), ogre())
    h.send("divine_smite", creature="aldric", slot=2)
    # A natural 20: the longsword's 2d8+3 and the smite's 3d8 doubled to 6d8.
    events = h.rolls(20, 1, 1, *[2] * 6).send("attack", creature="aldric", target="ogre")
    assert made(events).critical
    assert [d.amount for d in hits(events)] == [5, 12]
    assert ResourceSpent("aldric", "spell-slots-2", 1) in events


def test_divine_smite_is_at_most_5d8() -> None:
    h = fight(paladin({"1": 4, "2": 3, "3": 3, "4": 1}), ogre())
    h.send("divine_smite", creature="aldric", slot=4)
    events = h.rolls(15, 1, *[1] * 5).send("attack", creature="aldric", target="ogre")
    radiant = hits(events)[1]
    assert radiant.roll is not None and len(radiant.roll.dice) == 5 and radiant.amount == 5


def test_divine_smite_needs_a_slot_and_lapses_at_the_next_turn_and_not_on_ranged_hits() -> None:
    h = fight(paladin(), ogre(), zones={"aldric": "hall", "ogre": "yard"})
    assert h.refused("divine_smite", creature="aldric", slot=3).code == "no_uses_left"
    h.send("divine_smite", creature="aldric", slot=1)
    # A javelin thrown from the hall into the yard: a ranged hit, no smite.
    events = h.rolls(15, 4).send(
        "attack", creature="aldric", target="ogre", attack="javelin (thrown)"
    )
    assert made(events).hit and [d.damage_type for d in hits(events)] == ["piercing"]
    events = h.end_turn()
    assert ResourceSpent("aldric", "divine-smite", 0) in events
    assert h.creature("aldric").resources["spell-slots-1"] == 4


# -- Colossus Slayer ----------------------------------------------------------------------------


def test_colossus_slayer_adds_1d8_once_per_turn_against_a_wounded_creature() -> None:
    h = fight(ranger(), ogre())
    # Unhurt: the first hit deals only the shortsword's 1d6+3.
    events = h.rolls(15, 2).send("attack", creature="wynn", target="ogre")
    assert [d.amount for d in hits(events)] == [5]
    # Now below its maximum: 1d6+3, then 1d8 of the same type.
    events = h.rolls(15, 2, 7).send("attack", creature="wynn", target="ogre")
    assert [(d.amount, d.damage_type) for d in hits(events)] == [(5, "piercing"), (7, "piercing")]
    assert ResourceSpent("wynn", "colossus-slayer", 0) in events
    events = h.end_turn()  # the next turn (the ogre's): ready again
    assert ResourceRestored("wynn", "colossus-slayer", 1, "turn") in events
    h.end_turn()
    events = h.rolls(15, 2, 8).send("attack", creature="wynn", target="ogre")
    assert [d.amount for d in hits(events)] == [5, 8]
    assert h.creature("ogre").hp == 100 - 5 - 12 - 13
    h.assert_replay_matches()


def test_colossus_slayer_is_not_applied_when_another_hunters_prey_is_chosen() -> None:
    wynn = ranger()
    traits = tuple(
        attrs.evolve(t, params={"choice": "horde-breaker"}) if t.id == "hunters-prey" else t
        for t in wynn.traits
    )
    h = fight(attrs.evolve(wynn, traits=traits), ogre(hp=100))
    h.send("override", creature="ogre", field="hp", value=50)
    events = h.rolls(15, 2).send("attack", creature="wynn", target="ogre")
    assert [d.amount for d in hits(events)] == [5]
