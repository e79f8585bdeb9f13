"""The monk's Open Hand Technique (SRD 5.1, Way of the Open Hand 3), from a level-5
monk's sheet and scripted dice: each Flurry of Blows hit leaves one technique to use on
the creature hit (the ``open_hand_technique`` command): a Dexterity save or prone, a
Strength save or pushed 15 ft, or no reactions until the end of the monk's next turn.
Sora's ki save DC: 8 + 3 + 3 = 14.
"""

from __future__ import annotations

from typing import Any

from arena_fixture import harness
from helpers import make

from zonekeep.sdk import (
    ActionTaken,
    Creature,
    EncounterOptions,
    ResourceRestored,
    SaveMade,
    ZoneEntered,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def monk(technique: bool = True) -> Creature:
    """Sora, open-hand monk 5: Dex 16, Wis 16, unarmed strike +6, 1d6+3."""
    bonus = {"kind": "bonus_action", "text": "1 ki point."}
    traits: list[dict[str, Any]] = [
        {"id": "ki", "name": "Ki", "text": "Ki points.", "uses": {"per": "short_rest", "count": 5}},
        {"id": "extra-attack", "name": "Extra Attack", "text": "Two attacks."},
    ]
    if technique:
        traits.append({"id": "open-hand-technique", "name": "Open Hand Technique", "text": "."})
    data: dict[str, Any] = {
        "name": "Sora",
        "size": "Medium",
        "speeds": {"walk": 40},
        "classes": [{"name": "monk", "level": 5, "subclass": "open-hand"}],
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
        "traits": traits,
        "actions": [{"id": "flurry-of-blows", "name": "Flurry of Blows", **bonus}],
    }
    return character_creature(parse_character(data), "sora", controller="alice")


def fight(*creatures: Creature) -> EncounterHarness:
    return harness(
        list(creatures),
        {c.id: "hall" for c in creatures},
        [20 - i for i in range(len(creatures))],
        options=EncounterOptions(flanking=False),
    )


def ogre(cid: str = "ogre") -> Creature:
    return make(cid, "foes", hp=100, ac=10)


def flurry(h: EncounterHarness, *rolls: int) -> None:
    """Two Attack-action misses, then the flurry and its two attacks (four dice each:
    d20 and damage, or d20 alone on a miss)."""
    h.rolls(2).send("attack", creature="sora", target="ogre")
    h.rolls(2).send("attack", creature="sora", target="ogre")
    h.send("flurry_of_blows", creature="sora")
    it = iter(rolls)
    for _ in range(2):
        d20 = next(it)
        h.rolls(d20, *([next(it)] if d20 >= 4 else [])).send(
            "attack", creature="sora", target="ogre"
        )


def technique(h: EncounterHarness, *rolls: int, **params: Any) -> tuple[Any, ...]:
    return h.rolls(*rolls).send("open_hand_technique", creature="sora", target="ogre", **params)


def test_each_flurry_hit_leaves_one_technique_and_a_failed_dex_save_knocks_prone() -> None:
    h = fight(monk(), ogre())
    flurry(h, 15, 4, 2)  # the first flurry attack hits, the second misses
    assert h.creature("sora").resources["open-hand-ogre"] == 1
    events = technique(h, 13, choice="prone")  # Dex +0: 13 against 14 fails
    (save,) = [e for e in events if isinstance(e, SaveMade)]
    assert (save.ability, save.dc, save.success) == ("dex", 14, False)
    assert "prone" in h.creature("ogre").conditions
    code = h.refused("open_hand_technique", creature="sora", target="ogre", choice="prone").code
    assert code == "invalid_params"  # one hit, one technique
    h.assert_replay_matches()


def test_a_successful_save_resists_and_two_hits_give_two_techniques() -> None:
    h = fight(monk(), ogre())
    flurry(h, 15, 4, 16, 1)
    assert h.creature("sora").resources["open-hand-ogre"] == 2
    technique(h, 14, choice="prone")  # 14 meets the DC
    assert "prone" not in h.creature("ogre").conditions
    events = technique(h, 3, choice="push", zone="yard")  # Str +0: fails, pushed
    (entered,) = [e for e in events if isinstance(e, ZoneEntered)]
    assert (entered.creature, entered.to_zone, entered.forced, entered.by) == (
        "ogre",
        "yard",
        True,
        "sora",
    )
    assert h.creature("sora").resources["open-hand-ogre"] == 0


def test_no_reactions_lasts_until_the_end_of_the_monks_next_turn() -> None:
    h = fight(monk(), ogre())
    flurry(h, 15, 4, 2)
    events = technique(h, choice="no_reactions")
    assert not [e for e in events if isinstance(e, SaveMade)]
    assert ActionTaken("ogre", "open-hand-technique", "reaction") in events
    assert not h.state.has_reaction("ogre")
    h.end_turn()  # the ogre's turn: its reaction is spent again at its start
    assert not h.state.has_reaction("ogre") and "no-reactions" in h.creature("ogre").conditions
    h.end_turn()  # Sora's next turn
    assert "no-reactions" in h.creature("ogre").conditions
    h.end_turn()  # its end: over
    assert "no-reactions" not in h.creature("ogre").conditions
    h.end_turn()  # the ogre's next turn: its reaction is back
    assert h.state.has_reaction("ogre")
    h.assert_replay_matches()


def test_only_flurry_hits_count_and_unused_techniques_lapse_at_the_next_turn() -> None:
    h = fight(monk(), ogre())
    h.rolls(15, 4).send("attack", creature="sora", target="ogre")  # not a flurry attack
    assert h.creature("sora").resources.get("open-hand-ogre", 0) == 0
    code = h.refused("open_hand_technique", creature="sora", target="ogre", choice="prone").code
    assert code == "invalid_params"
    h.rolls(2).send("attack", creature="sora", target="ogre")
    events = h.send("flurry_of_blows", creature="sora")
    assert ResourceRestored("sora", "flurry-attacks", 2, "flurry-of-blows") in events
    h.rolls(15, 4).send("attack", creature="sora", target="ogre")
    assert (
        h.refused("open_hand_technique", creature="sora", target="ogre", choice="trip").code
        == "invalid_params"
    )
    assert (
        h.refused(
            "open_hand_technique", creature="sora", target="ogre", choice="prone", zone="yard"
        ).code
        == "invalid_params"
    )
    h.end_turn()
    assert h.creature("sora").resources["open-hand-ogre"] == 0


def test_without_the_feature_the_technique_is_refused_and_nothing_is_counted() -> None:
    h = fight(monk(technique=False), ogre())
    flurry(h, 15, 4, 16, 1)
    assert "flurry-attacks" not in h.creature("sora").resources
    code = h.refused("open_hand_technique", creature="sora", target="ogre", choice="prone").code
    assert code == "no_such_feature"
