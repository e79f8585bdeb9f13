"""The SRD creatures' features of plugins/srd/_gazes.py, each tested from its SRD 5.1
stat block:

- Cockatrice, Bite: +3, 3 (1d4 + 1) piercing; a DC 11 Constitution save against being
  magically petrified: on a failure it begins to turn to stone and is restrained; it
  repeats the save at the end of its next turn: a success ends the effect, a failure
  petrifies it for 24 hours.
- Basilisk, Petrifying Gaze: a creature starting its turn within 30 ft, when the two can
  see each other, makes a DC 12 Constitution save (unless it averts its eyes): on a
  failure it begins to turn to stone and is restrained, repeating the save at the end of
  its next turn: a success ends the effect, a failure petrifies it.
"""

from __future__ import annotations

from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Creature,
    EncounterOptions,
    SaveMade,
    parse_arena,
    path_distance,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str, **overrides: object) -> Creature:
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name, **overrides})
    return made


#: The hall and the yard are 30 ft apart, the yard and the field 60 ft.
ROW = {
    "id": "row",
    "name": "Row",
    "zones": [
        {"id": "hall", "name": "Hall", "size": 30},
        {"id": "yard", "name": "Yard", "size": 30},
        {"id": "field", "name": "Field", "size": 90},
    ],
    "links": [
        {"a": "hall", "b": "yard", "direction": "beside"},
        {"a": "yard", "b": "field", "direction": "beside"},
    ],
}


def fight(
    first: Creature, *others: Creature, zones: dict[str, str] | None = None
) -> EncounterHarness:
    every = [first, *others]
    h = EncounterHarness(
        every, arena=parse_arena(ROW, "row"), options=EncounterOptions(flanking=False)
    )
    where = {c.id: "hall" for c in every} | (zones or {})
    h.start(positions=where, initiative=[20, 15, 10, 5][: len(every)])
    return h


def saves(events: tuple[object, ...]) -> list[tuple[str, str, int, int, bool]]:
    return [
        (e.creature, e.ability, e.roll.total, e.dc, e.success)
        for e in events
        if isinstance(e, SaveMade)
    ]


def effects(h: EncounterHarness, cid: str) -> list[tuple[str, int | None]]:
    return sorted(
        (e.condition, e.rounds) for e in h.state.condition_effects.values() if e.creature == cid
    )


# -- petrify -----------------------------------------------------------------------------------


def test_the_cockatrices_bite_restrains_then_petrifies_for_a_day_on_a_second_failure() -> None:
    bird = srd("cockatrice", "Bird")
    h = fight(bird, make("aria", hp=40, ac=10))
    # Bite +3: 15 hits, 1d4+1 (2 -> 3); DC 11 Con save 10 fails: restrained.
    events = h.rolls(15, 2, 10).send("attack", creature="bird-1", target="aria", attack="bite")
    assert saves(events) == [("aria", "con", 10, 11, False)]
    assert effects(h, "aria") == [("restrained", None)]
    assert "restrained" in h.creature("aria").conditions
    h.end_turn()  # Aria's turn begins
    # The end of her next turn: the save again, 10 fails: petrified for 24 hours.
    events = h.rolls(10).end_turn()
    assert saves(events) == [("aria", "con", 10, 11, False)]
    # 14,400 rounds, one of them gone already: her turn ended the round.
    assert effects(h, "aria") == [("petrified", 14_399)]
    assert "restrained" not in h.creature("aria").conditions
    assert "petrified" in h.creature("aria").conditions
    # Petrified already: another bite asks for no save.
    events = h.rolls(15, 2).send("attack", creature="bird-1", target="aria", attack="bite")
    assert saves(events) == []


def test_a_second_save_of_11_ends_the_turning_to_stone() -> None:
    bird = srd("cockatrice", "Bird")
    h = fight(bird, make("aria", hp=40, ac=10))
    h.rolls(15, 2, 10).send("attack", creature="bird-1", target="aria", attack="bite")
    h.end_turn()
    events = h.rolls(11).end_turn()
    assert saves(events) == [("aria", "con", 11, 11, True)]
    assert effects(h, "aria") == []
    assert "restrained" not in h.creature("aria").conditions
    # A first save of 11 resists outright, and nothing follows at her turn's end.
    h.rolls(15, 2, 11).send("attack", creature="bird-1", target="aria", attack="bite")
    assert effects(h, "aria") == []
    h.end_turn()
    assert saves(h.end_turn()) == []


def test_a_missed_bite_asks_for_no_save() -> None:
    bird = srd("cockatrice", "Bird")
    h = fight(bird, make("aria", hp=40, ac=20))
    events = h.rolls(5).send("attack", creature="bird-1", target="aria", attack="bite")
    assert saves(events) == []
    assert effects(h, "aria") == []


# -- the basilisk's gaze -----------------------------------------------------------------------


def test_the_basilisks_gaze_at_the_start_of_a_turn_within_30_ft() -> None:
    lizard = srd("basilisk", "Lizard")
    h = fight(
        lizard,
        make("aria", hp=40),
        make("bram", hp=40),
        zones={"aria": "yard", "bram": "field"},
    )
    assert path_distance(h.state.arena, "hall", "yard") == 30
    assert (path_distance(h.state.arena, "hall", "field") or 0) > 30
    # Aria's turn starts 30 ft from it: a DC 12 Con save, 11 fails: restrained.
    events = h.rolls(11).end_turn()
    assert saves(events) == [("aria", "con", 11, 12, False)]
    assert effects(h, "aria") == [("restrained", None)]
    # The end of that turn: the save again, 11 fails: petrified (no end but the GM's).
    events = h.rolls(11).end_turn()
    assert saves(events) == [("aria", "con", 11, 12, False)]
    assert effects(h, "aria") == [("petrified", None)]
    # Bram's turn starts out of range (the field): no save.
    assert saves(h.end_turn()) == []


def test_a_successful_gaze_save_and_a_blinded_creature() -> None:
    lizard = srd("basilisk", "Lizard")
    h = fight(lizard, make("aria", hp=40), make("bram", hp=40, conditions=["blinded"]))
    events = h.rolls(12).end_turn()
    assert saves(events) == [("aria", "con", 12, 12, True)]
    assert effects(h, "aria") == []
    # Aria's turn ends: nothing to save against; Bram is blinded: he does not see it.
    assert saves(h.end_turn()) == []
    assert saves(h.end_turn()) == []
    assert effects(h, "bram") == []
