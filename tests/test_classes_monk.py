"""The monk's features the ``zonekeep.classes`` plugin implements, each tested from the
SRD 5.1 text with a level-5 monk built from a character sheet and scripted dice:

- Martial Arts: after the Attack action, one unarmed strike as a bonus action.
- Ki: ki points equal to the monk level, back on a short rest; ki save DC 8 +
  proficiency bonus + Wisdom modifier.
- Flurry of Blows: after the Attack action, 1 ki point for two unarmed strikes as a
  bonus action.
- Patient Defense: 1 ki point for the Dodge action as a bonus action.
- Step of the Wind: 1 ki point for Dash or Disengage as a bonus action.
- Stunning Strike: on a melee weapon hit, 1 ki point; the target makes a Constitution
  save or is stunned until the end of the monk's next turn.
"""

from __future__ import annotations

from typing import Any

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
    ResourceRestored,
    ResourceSpent,
    SaveMade,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def monk(level: int = 5) -> Creature:
    """Sora: Dex 16, Wis 16, proficiency +3 at 5th level; unarmed strike +6, 1d6+3."""
    bonus = {"kind": "bonus_action", "text": "1 ki point."}
    data: dict[str, Any] = {
        "name": "Sora",
        "size": "Medium",
        "speeds": {"walk": 40},
        "classes": [{"name": "monk", "level": level, "subclass": "open-hand"}],
        "ability_scores": {"str": 10, "dex": 16, "con": 14, "int": 10, "wis": 16, "cha": 8},
        "hp": 38,
        "ac": 16,
        "save_proficiencies": ["str", "dex"],
        "weapons": [
            {
                "name": "unarmed strike",
                "kind": "melee",
                "damage": "1d6",
                "damage_type": "bludgeoning",
                "ability": "dex",
            }
        ],
        "traits": [
            {"id": "martial-arts", "name": "Martial Arts", "text": "Martial arts."},
            {
                "id": "ki",
                "name": "Ki",
                "text": "Ki points.",
                "uses": {"per": "short_rest", "count": level},
            },
            {"id": "stunning-strike", "name": "Stunning Strike", "text": "Stun."},
            {"id": "extra-attack", "name": "Extra Attack", "text": "Two attacks."},
        ],
        "actions": [
            {"id": "flurry-of-blows", "name": "Flurry of Blows", **bonus},
            {"id": "patient-defense", "name": "Patient Defense", **bonus},
            {"id": "step-of-the-wind", "name": "Step of the Wind", **bonus},
        ],
    }
    return character_creature(parse_character(data), "sora", controller="alice")


def fight(*creatures: Creature) -> EncounterHarness:
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


def test_flurry_of_blows_follows_the_attack_action_and_makes_two_more_attacks_for_1_ki() -> None:
    h = fight(monk(), ogre())
    assert h.refused("flurry_of_blows", creature="sora").code == "invalid_params"
    h.rolls(15, 2).send("attack", creature="sora", target="ogre")
    h.rolls(15, 2).send("attack", creature="sora", target="ogre")
    events = h.send("flurry_of_blows", creature="sora")
    assert ActionTaken("sora", "flurry_of_blows", "bonus") in events
    assert ResourceSpent("sora", "ki", 4) in events
    assert ActionGranted("sora", "attack", "flurry-of-blows", 2) in events
    for _ in range(2):
        events = h.rolls(15, 4).send("attack", creature="sora", target="ogre")
        assert made(events).hit and damage(events) == [4 + 3]
    assert h.refused("attack", creature="sora", target="ogre").code == "no_action_left"
    assert h.creature("ogre").hp == 100 - 2 * 5 - 2 * 7
    h.assert_replay_matches()


def test_martial_arts_gives_one_unarmed_strike_as_a_bonus_action_after_attacking() -> None:
    h = fight(monk(), ogre())
    assert h.refused("martial_arts", creature="sora").code == "invalid_params"
    h.rolls(2).send("attack", creature="sora", target="ogre")
    h.rolls(2).send("attack", creature="sora", target="ogre")
    events = h.send("martial_arts", creature="sora")
    assert ActionGranted("sora", "attack", "martial-arts", 1) in events
    assert h.creature("sora").resources["ki"] == 5  # no ki
    h.rolls(2).send("attack", creature="sora", target="ogre")
    assert h.refused("attack", creature="sora", target="ogre").code == "no_action_left"
    assert h.refused("flurry_of_blows", creature="sora").code == "no_bonus_action_left"


def test_patient_defense_dodges_for_1_ki_point() -> None:
    h = fight(monk(), ogre())
    events = h.send("patient_defense", creature="sora")
    assert ResourceSpent("sora", "ki", 4) in events
    assert "dodging" in h.creature("sora").conditions
    h.end_turn()
    events = h.rolls(18, 3).send("attack", creature="ogre", target="sora")
    assert made(events).roll.advantage == "disadvantage" and not made(events).hit


def test_step_of_the_wind_dashes_or_disengages_for_1_ki_point() -> None:
    h = fight(monk(), ogre())
    assert h.refused("step_of_the_wind", creature="sora", choice="fly").code == "invalid_params"
    assert h.creature("sora").resources["ki"] == 5
    events = h.send("step_of_the_wind", creature="sora", choice="disengage")
    assert ResourceSpent("sora", "ki", 4) in events and Disengaged("sora") in events
    h.end_turn()
    h.end_turn()
    events = h.send("step_of_the_wind", creature="sora", choice="dash")
    assert ResourceSpent("sora", "ki", 3) in events and Dashed("sora") in events


def test_without_ki_points_the_ki_features_are_refused_until_a_short_rest() -> None:
    h = fight(monk(), ogre())
    for _ in range(5):
        h.send("use_feature", creature="sora", feature="ki")
    assert h.refused("patient_defense", creature="sora").code == "no_uses_left"
    assert h.refused("stunning_strike", creature="sora").code == "no_uses_left"
    events = h.send("rest", kind="short")
    assert ResourceRestored("sora", "ki", 5, "short_rest") in events
    h.send("patient_defense", creature="sora")


def test_stunning_strike_spends_1_ki_on_a_hit_and_stuns_on_a_failed_con_save() -> None:
    h = fight(monk(), ogre())
    events = h.send("stunning_strike", creature="sora")
    assert ResourceRestored("sora", "stunning-strike", 1, "declared") in events
    # A miss spends nothing; the strike stays declared for the next attack.
    events = h.rolls(2).send("attack", creature="sora", target="ogre")
    assert not made(events).hit and h.creature("sora").resources["ki"] == 5
    # A hit: 1 ki point, Constitution save (the ogre's +0) against 8 + 3 + 3 = 14.
    events = h.rolls(15, 4, 13).send("attack", creature="sora", target="ogre")
    assert ResourceSpent("sora", "ki", 4) in events
    (save,) = [e for e in events if isinstance(e, SaveMade)]
    assert (save.ability, save.dc, save.success) == ("con", 14, False)
    assert "stunned" in h.creature("ogre").conditions
    assert h.creature("sora").resources["stunning-strike"] == 0
    h.end_turn()  # the ogre's turn, stunned
    assert "stunned" in h.creature("ogre").conditions
    h.end_turn()  # Sora's next turn
    assert "stunned" in h.creature("ogre").conditions
    h.end_turn()  # its end: the stun is over
    assert "stunned" not in h.creature("ogre").conditions
    h.assert_replay_matches()


def test_a_successful_save_resists_the_stun_and_an_unused_declaration_lapses() -> None:
    h = fight(monk(), ogre())
    h.send("stunning_strike", creature="sora")
    events = h.rolls(15, 4, 14).send("attack", creature="sora", target="ogre")
    assert ResourceSpent("sora", "ki", 4) in events
    assert "stunned" not in h.creature("ogre").conditions
    h.end_turn()
    h.end_turn()
    h.send("stunning_strike", creature="sora")
    assert h.refused("stunning_strike", creature="sora").code == "invalid_params"
    events = h.end_turn()
    assert ResourceSpent("sora", "stunning-strike", 0) in events
    assert h.creature("sora").resources["ki"] == 4
