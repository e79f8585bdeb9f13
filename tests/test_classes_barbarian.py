"""The barbarian's features the ``zonekeep.classes`` plugin implements, each tested from
the SRD 5.1 text with a level-5 barbarian built from a character sheet and scripted dice:

- Rage: a bonus action, uses per long rest; while raging, advantage on Strength checks
  and saves, resistance to bludgeoning, piercing and slashing damage, and +2 damage (the
  rage damage of levels 1 to 8) on melee weapon attacks made with Strength.
- Reckless Attack: on the first attack of its turn, advantage on melee weapon attacks
  made with Strength this turn; attacks against it have advantage until its next turn.
- Danger Sense: advantage on Dexterity saving throws, not while blinded, deafened or
  incapacitated.
- Frenzy (Path of the Berserker): a rage may be a frenzy, with one melee weapon attack
  as a bonus action on each turn while it lasts.
- Extra Attack (5th level): the Attack action makes two attacks.
"""

from __future__ import annotations

from typing import Any

import attrs
from arena_fixture import harness
from helpers import make

from zonekeep.sdk import (
    ActionGranted,
    ActionTaken,
    AttackMade,
    CheckRolled,
    Creature,
    Damaged,
    EncounterOptions,
    ResourceSpent,
    Trait,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def barbarian(level: int = 5, **extra: Any) -> Creature:
    """Ulfa: Str 16, Dex 14, Con 16; greataxe (+3 + proficiency, 1d12+3), shortbow."""
    data: dict[str, Any] = {
        "name": "Ulfa",
        "size": "Medium",
        "speeds": {"walk": 40},
        "classes": [{"name": "barbarian", "level": level, "subclass": "berserker"}],
        "ability_scores": {"str": 16, "dex": 14, "con": 16, "int": 8, "wis": 12, "cha": 10},
        "hp": 55,
        "ac": 15,
        "save_proficiencies": ["str", "con"],
        "weapons": [{"name": "greataxe"}, {"name": "shortbow"}, {"name": "dagger"}],
        "traits": [
            {"id": "reckless-attack", "name": "Reckless Attack", "text": "Reckless."},
            {"id": "danger-sense", "name": "Danger Sense", "text": "Danger sense."},
            {"id": "extra-attack", "name": "Extra Attack", "text": "Two attacks."},
        ],
        "actions": [
            {
                "id": "rage",
                "name": "Rage",
                "kind": "bonus_action",
                "text": "Rage for a minute.",
                "uses": {"per": "long_rest", "count": 3},
            }
        ],
        **extra,
    }
    return character_creature(parse_character(data), "ulfa", controller="alice")


def fight(*creatures: Creature) -> EncounterHarness:
    """Everyone in the hall, in the order given; flanking off."""
    return harness(
        list(creatures),
        {c.id: "hall" for c in creatures},
        [20 - i for i in range(len(creatures))],
        options=EncounterOptions(flanking=False),
    )


def ogre() -> Creature:
    return make("ogre", "foes", hp=100, ac=10)


def made(events: tuple[Any, ...]) -> AttackMade:
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    return attack


def damage(events: tuple[Any, ...]) -> list[int]:
    return [e.amount for e in events if isinstance(e, Damaged)]


def test_rage_is_a_bonus_action_that_spends_a_use_and_adds_2_to_strength_melee_damage() -> None:
    h = fight(barbarian(), ogre())
    events = h.send("rage", creature="ulfa")
    assert ActionTaken("ulfa", "rage", "bonus") in events
    assert ResourceSpent("ulfa", "rage", 2) in events
    assert "raging" in h.creature("ulfa").conditions
    assert h.refused("rage", creature="ulfa").code in ("invalid_params", "no_bonus_action_left")
    # Greataxe: +6 to hit, 1d12+3, and +2 while raging.
    events = h.rolls(12, 5).send("attack", creature="ulfa", target="ogre")
    assert made(events).hit and damage(events) == [5 + 3 + 2]
    hit = next(e for e in events if isinstance(e, Damaged))
    assert hit.raw == 8 and [s.source for s in hit.steps] == ["rage"]
    # Shortbow (a ranged attack, Dexterity; with disadvantage, engaged): no rage damage.
    events = h.rolls(12, 12, 4).send("attack", creature="ulfa", target="ogre", attack="shortbow")
    assert damage(events) == [4 + 2]
    assert h.creature("ogre").hp == 100 - 10 - 6
    h.assert_replay_matches()


def test_a_raging_barbarian_resists_bludgeoning_piercing_and_slashing_damage() -> None:
    h = fight(barbarian(), ogre())
    h.send("rage", creature="ulfa")
    h.end_turn()
    # The ogre's blade: 1d6+2 slashing, 7 halved (rounded down) to 3.
    events = h.rolls(15, 5).send("attack", creature="ogre", target="ulfa")
    assert damage(events) == [3]
    assert h.creature("ulfa").hp == 55 - 3
    # Fire is not resisted.
    events = h.send("damage", creature="ulfa", amount=7, damage_type="fire")
    assert damage(events) == [7]


def test_without_rage_there_is_no_resistance_nor_rage_damage() -> None:
    h = fight(barbarian(), ogre())
    events = h.rolls(12, 5).send("attack", creature="ulfa", target="ogre")
    assert damage(events) == [5 + 3]
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="ogre", target="ulfa")
    assert damage(events) == [7]


def test_rage_gives_advantage_on_strength_checks_and_saves_only() -> None:
    h = fight(barbarian(), ogre())
    h.send("rage", creature="ulfa")
    for save in (False, True):
        events = h.rolls(3, 17).send("call_check", creatures=["ulfa"], ability="str", save=save)
        (check,) = [e for e in events if isinstance(e, CheckRolled)]
        assert check.roll.advantage == "advantage" and check.roll.kept == (17,)
    events = h.rolls(3).send("call_check", creatures=["ulfa"], ability="con", save=True)
    (check,) = [e for e in events if isinstance(e, CheckRolled)]
    assert check.roll.advantage is None or check.roll.advantage == "none"


def test_no_rage_left_is_refused() -> None:
    h = fight(barbarian(), ogre())
    for _ in range(3):
        h.send("use_feature", creature="ulfa", feature="rage")
    assert h.refused("rage", creature="ulfa").code == "no_uses_left"


def test_a_creature_without_rage_cannot_rage() -> None:
    h = fight(make("aria", controller="alice"), ogre())
    assert h.refused("rage", creature="aria").code == "no_such_feature"


def test_reckless_attack_gives_advantage_both_ways_until_its_next_turn() -> None:
    h = fight(barbarian(), ogre())
    events = h.send("reckless_attack", creature="ulfa")
    assert "reckless-attack" in h.creature("ulfa").conditions
    assert not any(isinstance(e, ActionTaken) and e.cost != "free" for e in events)
    first = h.rolls(2, 15, 5).send("attack", creature="ulfa", target="ogre")
    assert made(first).roll.advantage == "advantage" and made(first).hit
    # The second attack of Extra Attack too.
    second = h.rolls(4, 13, 6).send("attack", creature="ulfa", target="ogre")
    assert made(second).roll.advantage == "advantage"
    h.end_turn()
    # The ogre's attack against it has advantage too.
    events = h.rolls(1, 12, 1).send("attack", creature="ogre", target="ulfa")
    assert made(events).roll.advantage == "advantage" and made(events).hit
    h.end_turn()
    # Its next turn: over.
    assert "reckless-attack" not in h.creature("ulfa").conditions
    events = h.rolls(2).send("attack", creature="ulfa", target="ogre")
    assert made(events).roll.advantage != "advantage"


def test_reckless_attack_is_decided_before_the_first_attack_and_not_for_ranged_attacks() -> None:
    h = fight(barbarian(), ogre())
    h.rolls(2).send("attack", creature="ulfa", target="ogre")
    assert h.refused("reckless_attack", creature="ulfa").code == "invalid_params"
    h.end_turn()
    h.end_turn()
    h.send("reckless_attack", creature="ulfa")
    events = h.rolls(2, 3).send("attack", creature="ulfa", target="ogre", attack="shortbow")
    assert made(events).roll.advantage == "disadvantage"  # engaged, and no advantage


def test_danger_sense_gives_advantage_on_dexterity_saves_unless_blinded() -> None:
    h = fight(barbarian(), ogre())
    events = h.rolls(4, 16).send("call_check", creatures=["ulfa"], ability="dex", save=True)
    (check,) = [e for e in events if isinstance(e, CheckRolled)]
    assert check.roll.advantage == "advantage" and check.roll.kept == (16,)
    h.send("grant_condition", creature="ulfa", condition="blinded")
    events = h.rolls(4).send("call_check", creatures=["ulfa"], ability="dex", save=True)
    (check,) = [e for e in events if isinstance(e, CheckRolled)]
    assert check.roll.kept == (4,)


def test_a_level_5_barbarian_attacks_twice_with_the_attack_action() -> None:
    h = fight(barbarian(), ogre())
    events = h.rolls(2).send("attack", creature="ulfa", target="ogre")
    assert ActionGranted("ulfa", "attack", "extra attack", 1) in events


def test_a_berserkers_frenzy_gives_a_bonus_action_attack_each_turn_while_the_rage_lasts() -> None:
    ulfa = barbarian()
    frenzy = Trait("frenzy", "Frenzy", "A frenzied rage.")
    h = fight(attrs.evolve(ulfa, traits=(*ulfa.traits, frenzy)), ogre())
    assert h.refused("frenzy_attack", creature="ulfa").code == "invalid_params"
    h.send("rage", creature="ulfa", frenzy=True)
    assert {"raging", "frenzied"} <= set(h.creature("ulfa").conditions)
    h.end_turn()
    h.end_turn()
    events = h.send("frenzy_attack", creature="ulfa")
    assert ActionTaken("ulfa", "frenzy_attack", "bonus") in events
    assert ActionGranted("ulfa", "attack", "frenzy", 1) in events
    events = h.rolls(12, 5).send("attack", creature="ulfa", target="ogre")
    assert damage(events) == [5 + 3 + 2]
    assert h.refused("frenzy_attack", creature="ulfa").code == "no_bonus_action_left"


def test_a_rage_without_the_frenzy_feature_cannot_be_a_frenzy() -> None:
    h = fight(barbarian(), ogre())
    assert h.refused("rage", creature="ulfa", frenzy=True).code == "no_such_feature"
    assert h.creature("ulfa").resources["rage"] == 3
