"""Rests and the class resources (issue 31), from the SRD 5.1 text:

- the GM's ``rest`` gives back a character's class resources by their rest (Channel
  Divinity on a short rest, the Lay on Hands pool on a long rest), its pact slots on
  either rest, its spell slots on a long rest, with the features' uses (ki, rages);
- Arcane Recovery (wizard 1) and Natural Recovery (druid, Circle of the Land 2): once a
  day, after a short rest, spent slots of a combined level up to half the class level
  (rounded up), none of 6th level or higher: the GM's ``recover_slots``.
"""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import keep

from zonekeep.sdk import Creature, ResourceRestored, ResourceSpent
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def sheet(cid: str, classes: list[dict[str, Any]], spent: dict[str, int], **extra: Any) -> Creature:
    data: dict[str, Any] = {
        "name": cid.capitalize(),
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": classes,
        "ability_scores": {"str": 10, "dex": 14, "con": 12, "int": 16, "wis": 16, "cha": 16},
        "hp": 30,
        "ac": 13,
        **extra,
    }
    me = character_creature(parse_character(data), cid, controller=f"player-{cid}")
    me.resources.update(spent)
    return me


def paladin(spent: dict[str, int]) -> Creature:
    resources = [
        {"id": "channel-divinity", "name": "Channel Divinity", "count": 1, "per": "short_rest"},
        {"id": "lay-on-hands", "name": "Lay on Hands", "count": 15, "per": "long_rest"},
    ]
    ki = {"id": "ki", "name": "Ki", "text": "-", "uses": {"per": "short_rest", "count": 3}}
    return sheet(
        "aldric",
        [{"name": "paladin", "level": 3, "subclass": "devotion"}],
        spent,
        resources=resources,
        spell_slots={"1": 3},
        spellcasting_ability="cha",
        traits=[ki],
    )


def warlock(spent: dict[str, int]) -> Creature:
    return sheet(
        "vex",
        [{"name": "warlock", "level": 3, "subclass": "fiend"}],
        spent,
        pact_slots={"level": 2, "count": 2},
        spellcasting_ability="cha",
    )


def wizard(spent: dict[str, int], level: int = 5) -> Creature:
    recovery = {"id": "arcane-recovery", "name": "Arcane Recovery", "count": 1, "per": "day"}
    return sheet(
        "orrin",
        [{"name": "wizard", "level": level, "subclass": "evocation"}],
        spent,
        resources=[recovery],
        spell_slots={"1": 4, "2": 3, "3": 2},
        spellcasting_ability="int",
    )


def druid(spent: dict[str, int], circle: str = "land") -> Creature:
    return sheet(
        "fern",
        [{"name": "druid", "level": 3, "subclass": circle}],
        spent,
        spell_slots={"1": 4, "2": 2},
        spellcasting_ability="wis",
    )


def fight(*creatures: Creature) -> EncounterHarness:
    h = EncounterHarness(list(creatures), arena=keep())
    h.start(
        positions={c.id: "hall" for c in creatures},
        initiative=list(range(20, 20 - len(creatures), -1)),
    )
    return h


def restored(events: tuple[object, ...]) -> set[tuple[str, str, int, str]]:
    return {
        (e.creature, e.resource, e.left, e.reason)
        for e in events
        if isinstance(e, ResourceRestored)
    }


def test_a_short_rest_gives_back_channel_divinity_and_ki_not_the_pool_nor_the_slots() -> None:
    spent = {"channel-divinity": 0, "lay-on-hands": 4, "spell-slots-1": 0, "ki": 1}
    h = fight(paladin(spent))
    events = h.send("rest", kind="short")
    assert restored(events) == {
        ("aldric", "ki", 3, "short_rest"),
        ("aldric", "channel-divinity", 1, "short_rest"),
    }
    me = h.creature("aldric")
    assert (me.resources["lay-on-hands"], me.resources["spell-slots-1"]) == (4, 0)


def test_a_long_rest_gives_back_the_pool_and_the_spell_slots_too() -> None:
    spent = {"channel-divinity": 0, "lay-on-hands": 4, "spell-slots-1": 1, "ki": 3}
    h = fight(paladin(spent))
    events = h.send("rest", kind="long")
    assert restored(events) == {
        ("aldric", "channel-divinity", 1, "long_rest"),
        ("aldric", "lay-on-hands", 15, "long_rest"),
        ("aldric", "spell-slots-1", 3, "long_rest"),
    }
    h.assert_replay_matches()


def test_pact_slots_come_back_on_a_short_rest() -> None:
    h = fight(warlock({"pact-slots": 0}))
    events = h.send("rest", kind="short")
    assert restored(events) == {("vex", "pact-slots", 2, "short_rest")}
    # Nothing spent: a rest says nothing.
    assert restored(h.send("rest", kind="long")) == set()


def test_arcane_recovery_gives_back_slots_up_to_half_the_wizard_level_once_a_day() -> None:
    h = fight(wizard({"spell-slots-1": 1, "spell-slots-2": 1, "spell-slots-3": 0}))
    # Level 5: a combined level of 3 at most.
    refusal = h.refused("recover_slots", creature="orrin", slots={"3": 1, "1": 1})
    assert refusal.code == "invalid_params" and "up to 3, not 4" in refusal.message
    events = h.send("recover_slots", creature="orrin", slots={"2": 1, "1": 1})
    assert ResourceSpent("orrin", "arcane-recovery", 0) in events
    assert restored(events) == {
        ("orrin", "spell-slots-1", 2, "arcane-recovery"),
        ("orrin", "spell-slots-2", 2, "arcane-recovery"),
    }
    assert h.refused("recover_slots", creature="orrin", slots={"1": 1}).code == "no_uses_left"
    # A long rest (a new day) gives the use back, and the slots.
    events = h.send("rest", kind="long")
    assert ("orrin", "arcane-recovery", 1, "long_rest") in restored(events)
    assert h.creature("orrin").resources["spell-slots-3"] == 2


def test_recover_slots_refuses_what_the_feature_does_not_give() -> None:
    h = fight(wizard({"spell-slots-1": 3}), make("kael"))
    # Only one 1st-level slot is spent; no 6th-level slot; a level, not a word.
    refusal = h.refused("recover_slots", creature="orrin", slots={"1": 2})
    assert refusal.code == "invalid_params" and "1 level 1 slot(s) spent, not 2" in refusal.message
    assert h.refused("recover_slots", creature="orrin", slots={"6": 1}).code == "invalid_params"
    assert h.refused("recover_slots", creature="orrin", slots={"one": 1}).code == "invalid_params"
    assert h.refused("recover_slots", creature="orrin", slots={}).code == "invalid_params"
    assert h.refused("recover_slots", creature="orrin", slots={"1": True}).code == "invalid_params"
    assert h.refused("recover_slots", creature="kael", slots={"1": 1}).code == "no_such_feature"
    player = h.player("player-orrin")
    assert h.refused("recover_slots", player, creature="orrin", slots={"1": 1}).code == "gm_only"


def test_natural_recovery_is_a_land_druids_with_half_the_druid_level() -> None:
    h = fight(druid({"spell-slots-1": 2, "spell-slots-2": 1}))
    # Druid 3: a combined level of 2.
    assert h.refused("recover_slots", creature="fern", slots={"2": 1, "1": 1}).code == (
        "invalid_params"
    )
    events = h.send("recover_slots", creature="fern", slots={"1": 2})
    assert ResourceSpent("fern", "natural-recovery", 0) in events
    assert restored(events) == {("fern", "spell-slots-1", 4, "natural-recovery")}
    h = fight(druid({"spell-slots-1": 2}, circle="moon"))
    assert h.refused("recover_slots", creature="fern", slots={"1": 1}).code == "no_such_feature"
