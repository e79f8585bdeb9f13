"""The sorcerer's Font of Magic, as the ``zonekeep.classes`` plugin implements it, tested
from the SRD 5.1 text with a level-5 sorcerer built from a sheet:

- Sorcery points equal to the sorcerer level, back on a long rest.
- Flexible Casting, as a bonus action: a spell slot becomes as many sorcery points as
  its level; sorcery points become a slot of level 1 to 5 for 2, 3, 5, 6 or 7 points.
"""

from __future__ import annotations

from typing import Any

import pytest
from arena_fixture import harness
from helpers import make

from zonekeep.sdk import ActionTaken, Creature, ResourceRestored, ResourceSpent
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def sorcerer(points: int = 5) -> Creature:
    data: dict[str, Any] = {
        "name": "Ysolde",
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": "sorcerer", "level": 5, "subclass": "draconic"}],
        "ability_scores": {"str": 8, "dex": 14, "con": 14, "int": 10, "wis": 12, "cha": 17},
        "hp": 32,
        "spellcasting_ability": "cha",
        "spell_slots": {"1": 4, "2": 3, "3": 2},
        "cantrips": ["fire-bolt"],
        "spells_known": ["magic-missile"],
        "actions": [
            {
                "id": "font-of-magic",
                "name": "Font of Magic",
                "kind": "bonus_action",
                "text": "Sorcery points.",
                "uses": {"per": "long_rest", "count": points},
            }
        ],
    }
    return character_creature(parse_character(data), "ysolde", controller="alice")


def fight(me: Creature) -> EncounterHarness:
    foe = make("ogre", "foes", hp=100, ac=10)
    return harness([me, foe], {me.id: "hall", foe.id: "hall"}, [20, 5])


def test_a_spell_slot_becomes_as_many_sorcery_points_as_its_level() -> None:
    h = fight(sorcerer())
    h.send("use_feature", creature="ysolde", feature="font-of-magic")
    h.send("use_feature", creature="ysolde", feature="font-of-magic")
    events = h.send("font_of_magic", creature="ysolde", make="points", slot=2)
    assert ActionTaken("ysolde", "font_of_magic", "bonus") in events
    assert ResourceSpent("ysolde", "spell-slots-2", 2) in events
    assert ResourceRestored("ysolde", "font-of-magic", 3 + 2, "font-of-magic") in events
    assert h.creature("ysolde").resources["font-of-magic"] == 5
    h.assert_replay_matches()


@pytest.mark.parametrize(("level", "cost"), [(1, 2), (2, 3), (3, 5)])
def test_sorcery_points_become_a_slot_at_the_creating_spell_slots_cost(
    level: int, cost: int
) -> None:
    h = fight(sorcerer())
    before = h.creature("ysolde").resources[f"spell-slots-{level}"]
    events = h.send("font_of_magic", creature="ysolde", make="slot", slot=level)
    assert ResourceSpent("ysolde", "font-of-magic", 5 - cost) in events
    assert ResourceRestored("ysolde", f"spell-slots-{level}", before + 1, "font-of-magic") in events


def test_font_of_magic_refuses_what_it_cannot_do_and_changes_nothing() -> None:
    h = fight(sorcerer(points=5))
    me = h.creature("ysolde")
    # A 4th-level slot costs 6 points (5 left); none above 5th; no 4th-level slot to spend.
    assert h.refused("font_of_magic", creature="ysolde", make="slot", slot=4).code == (
        "no_uses_left"
    )
    assert h.refused("font_of_magic", creature="ysolde", make="slot", slot=6).code == (
        "invalid_params"
    )
    assert (
        h.refused("font_of_magic", creature="ysolde", make="points", slot=4).code == "no_uses_left"
    )
    assert h.refused("font_of_magic", creature="ysolde", make="gold", slot=1).code == (
        "invalid_params"
    )
    assert h.refused("font_of_magic", creature="ysolde", make="slot", slot=0).code == (
        "invalid_params"
    )
    assert h.creature("ysolde").resources == me.resources
    assert h.state.resources.bonus_actions == 1
    ogre = h.creature("ogre")
    assert h.refused("font_of_magic", creature=ogre.id, make="slot", slot=1).code in (
        "no_such_feature",
        "not_your_turn",
    )
