"""The SRD creatures' features of plugins/srd/_gazes.py, each tested from its SRD 5.1
stat block:

- Cockatrice, Bite: +3, 3 (1d4 + 1) piercing; a DC 11 Constitution save against being
  magically petrified: on a failure it begins to turn to stone and is restrained; it
  repeats the save at the end of its next turn: a success ends the effect, a failure
  petrifies it for 24 hours.
- Manticore, Tail Spike Regrowth: it has twenty-four tail spikes; used spikes regrow
  when it finishes a long rest. Tail Spike: +5, range 100/200 ft, 7 (1d8 + 3) piercing.
- Vampire spawn, Vampire Weaknesses (Sunlight Hypersensitivity): 20 radiant damage when
  it starts its turn in sunlight; while in sunlight, disadvantage on attack rolls and
  ability checks. Regeneration: it regains 10 hit points at the start of its turn if it
  has at least 1 hit point and isn't in sunlight; radiant damage stops it at the start
  of its next turn.
- Duergar, Enlarge (recharges after a short or long rest): for 1 minute it magically
  grows Large; while enlarged, its Strength-based weapon attacks deal twice their dice
  (war pick 11 (2d8 + 2) piercing, javelin 9 (2d6 + 2)) and it has advantage on
  Strength checks and Strength saving throws.
- Bearded devil, Glaive: +5, reach 10 ft, 8 (1d10 + 3) slashing; a creature other than
  an undead or a construct makes a DC 12 Constitution save or loses 5 (1d10) hit points at
  the start of each of its turns (an infernal wound); each later glaive hit on it adds
  5 (1d10); any creature can take an action to stanch it with a DC 12 Wisdom (Medicine)
  check; magical healing closes it too.
- Bulette, Deadly Leap: if it jumps at least 15 ft as part of its movement, it can then
  use this action to land on creatures; each makes a DC 16 Strength or Dexterity save
  (its choice) or is knocked prone and takes 14 (3d6 + 4) bludgeoning plus 14 (3d6 + 4)
  slashing damage; on a success, half the damage, not prone, pushed 5 ft out of the
  bulette's space. Standing Leap: long jump up to 30 ft.
- Gelatinous cube, Transparent: even in plain sight, spotting a cube that has neither
  moved nor attacked takes a successful DC 15 Wisdom (Perception) check.
- Mimic, Adhesive (object form only): it adheres to anything that touches it; a Huge or
  smaller creature adhered to it is grappled (escape DC 13), and ability checks made to
  escape have disadvantage. Pseudopod: +5, 7 (1d8 + 3) bludgeoning; in object form, the
  target is subjected to Adhesive.
- Basilisk, Petrifying Gaze: a creature starting its turn within 30 ft, when the two can
  see each other, makes a DC 12 Constitution save (unless it averts its eyes): on a
  failure it begins to turn to stone and is restrained, repeating the save at the end of
  its next turn: a success ends the effect, a failure petrifies it.
"""

from __future__ import annotations

import attrs
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    AttackMade,
    CheckRolled,
    Creature,
    Damaged,
    EncounterOptions,
    Healed,
    OverrideApplied,
    RollRequest,
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
    first: Creature,
    *others: Creature,
    zones: dict[str, str] | None = None,
    sunlight: tuple[str, ...] = (),
) -> EncounterHarness:
    every = [first, *others]
    options = EncounterOptions(flanking=False, settings={"zonekeep.srd": {"sunlight": [*sunlight]}})
    h = EncounterHarness(every, arena=parse_arena(ROW, "row"), options=options)
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


# -- tail spikes -------------------------------------------------------------------------------


def test_the_manticore_spends_a_spike_per_tail_spike_attack_and_regrows_them_on_a_long_rest() -> (
    None
):
    beast = srd("manticore", "Beast")
    assert beast.resources["tail-spike-regrowth"] == 24
    beast = attrs.evolve(beast, resources={**beast.resources, "tail-spike-regrowth": 1})
    h = fight(beast, make("aria", hp=40, ac=10), zones={"aria": "yard"})
    # The last spike: +5, 15 hits, 1d8+3 (4 -> 7).
    events = h.rolls(15, 4).send("attack", creature="beast-1", target="aria", attack="tail spike")
    assert [(e.creature, e.amount) for e in events if isinstance(e, Damaged)] == [("aria", 7)]
    assert h.creature("beast-1").resources["tail-spike-regrowth"] == 0
    h.end_turn()
    h.end_turn()
    # None left: refused, and nothing rolled; its bite and claws need no spikes.
    refusal = h.refused("attack", creature="beast-1", target="aria", attack="tail spike")
    assert refusal.code == "no_uses_left"
    h.send("rest", kind="short")
    assert h.creature("beast-1").resources["tail-spike-regrowth"] == 0
    h.send("rest", kind="long")
    assert h.creature("beast-1").resources["tail-spike-regrowth"] == 24
    h.rolls(15, 4).send("attack", creature="beast-1", target="aria", attack="tail spike")
    assert h.creature("beast-1").resources["tail-spike-regrowth"] == 23


# -- sunlight hypersensitivity ------------------------------------------------------------------


def test_the_vampire_spawn_burns_and_falters_in_sunlight() -> None:
    spawn = srd("vampire-spawn", "Spawn")
    h = fight(make("aria", hp=40, ac=10), spawn, sunlight=("hall",))
    # Its turn starts in the sunlit hall: 20 radiant (82 -> 62).
    events = h.end_turn()
    assert [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)] == [
        ("spawn-1", 20, "radiant")
    ]
    assert h.creature("spawn-1").hp == 62
    # Claws +6 with disadvantage: 18 and 2, the 2 kept: 8 misses AC 10.
    events = h.rolls(18, 2).send("attack", creature="spawn-1", target="aria", attack="claws")
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.roll.advantage, made.roll.kept, made.hit) == ("disadvantage", (2,), False)
    ctx = h.engine.context(h.state)
    check = RollRequest("check", "spawn-1", ability="dex", skill="stealth")
    assert [(m.effect, m.source) for m in ctx.modifiers(check)] == [
        ("disadvantage", "vampire weaknesses: in sunlight")
    ]
    # Saves are untouched.
    assert ctx.modifiers(RollRequest("save", "spawn-1", ability="dex")) == []


def test_the_vampire_spawn_in_the_shade_neither_burns_nor_falters() -> None:
    spawn = srd("vampire-spawn", "Spawn")
    h = fight(make("aria", hp=40, ac=10), spawn, sunlight=("hall",), zones={"spawn-1": "yard"})
    events = h.end_turn()
    assert [e for e in events if isinstance(e, Damaged)] == []
    assert h.creature("spawn-1").hp == 82
    ctx = h.engine.context(h.state)
    assert ctx.modifiers(RollRequest("check", "spawn-1", ability="dex")) == []


def test_no_regeneration_in_sunlight() -> None:
    spawn = attrs.evolve(srd("vampire-spawn", "Spawn"), hp=50)
    h = fight(make("aria", hp=40, ac=10), spawn, sunlight=("hall",))
    # In the sun: 20 radiant (50 -> 30), no regeneration.
    events = h.end_turn()
    assert [e for e in events if isinstance(e, Healed)] == []
    assert h.creature("spawn-1").hp == 30


def test_in_the_shade_the_vampire_spawn_regenerates() -> None:
    spawn = attrs.evolve(srd("vampire-spawn", "Spawn"), hp=50)
    h = fight(make("aria", hp=40, ac=10), spawn, sunlight=("hall",), zones={"spawn-1": "yard"})
    # In the shade: Regeneration, 10 hit points back (50 -> 60), and no burn.
    events = h.end_turn()
    assert [e for e in events if isinstance(e, Damaged)] == []
    assert h.creature("spawn-1").hp == 60


# -- enlarge -----------------------------------------------------------------------------------


def test_the_duergar_enlarges_for_a_minute_doubling_its_war_picks_dice() -> None:
    dwarf = srd("duergar", "Dwarf")
    h = fight(dwarf, make("aria", hp=60, ac=10))
    h.send("enlarge", creature="dwarf-1")
    me = h.creature("dwarf-1")
    assert "enlarged" in me.conditions
    assert me.size.label == "Large"
    assert h.state.resources.actions == 0
    assert effects(h, "dwarf-1") == [("enlarged", 10)]
    ctx = h.engine.context(h.state)
    assert [
        (m.effect, m.source) for m in ctx.modifiers(RollRequest("save", "dwarf-1", ability="str"))
    ] == [("advantage", "enlarged")]
    assert [
        (m.effect, m.source)
        for m in ctx.modifiers(RollRequest("check", "dwarf-1", ability="str", skill="athletics"))
    ] == [("advantage", "enlarged")]
    assert ctx.modifiers(RollRequest("save", "dwarf-1", ability="dex")) == []
    h.end_turn()
    h.end_turn()
    # Enlarged again while enlarged: refused.
    assert h.refused("enlarge", creature="dwarf-1").code == "invalid_params"
    # War pick +4: 15 hits, 2d8+2 (3 + 5 + 2 = 10).
    events = h.rolls(15, 3, 5).send("attack", creature="dwarf-1", target="aria", attack="war pick")
    assert [(e.creature, e.amount) for e in events if isinstance(e, Damaged)] == [("aria", 10)]
    while "enlarged" in h.creature("dwarf-1").conditions:
        h.end_turn()
    # Applied in round 1 for 10 rounds: it ends at the end of round 10.
    assert h.state.round == 11
    assert h.creature("dwarf-1").size.label == "Medium"
    # Back to 1d8+2 (3 + 2).
    events = h.rolls(15, 3).send("attack", creature="dwarf-1", target="aria", attack="war pick")
    assert [(e.creature, e.amount) for e in events if isinstance(e, Damaged)] == [("aria", 5)]
    # Its one use before a rest is spent.
    h.end_turn()
    h.end_turn()
    assert h.refused("enlarge", creature="dwarf-1").code == "no_uses_left"


def test_a_creature_without_enlarge_cannot_enlarge() -> None:
    h = fight(make("aria", hp=60), make("bram", hp=60))
    assert h.refused("enlarge", creature="aria").code == "invalid_params"


# -- infernal wound ----------------------------------------------------------------------------


def hurt(events: tuple[object, ...]) -> list[tuple[str, int, str]]:
    return [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)]


def test_the_glaives_infernal_wound_bleeds_deepens_and_is_stanched() -> None:
    devil = srd("bearded-devil", "Devil")
    h = fight(devil, make("aria", hp=60, ac=10))
    # Glaive +5: 15 hits, 1d10+3 (5 -> 8); DC 12 Con save 11 fails: wounded.
    events = h.rolls(15, 5, 11).send("attack", creature="devil-1", target="aria", attack="glaive")
    assert hurt(events) == [("aria", 8, "slashing")]
    assert saves(events) == [("aria", "con", 11, 12, False)]
    assert effects(h, "aria") == [("infernal-wound", None)]
    # The start of her turn: 1d10 (6) hit points lost.
    events = h.rolls(6).end_turn()
    assert hurt(events) == [("aria", 6, "")]
    # She tries to stanch it herself: Medicine 11 fails (an action spent).
    h.rolls(11).send("stanch", creature="aria", target="aria")
    assert h.state.resources.actions == 0
    assert effects(h, "aria") == [("infernal-wound", None)]
    h.end_turn()
    # A second glaive hit: no save, the wound deepens to 2d10.
    events = h.rolls(15, 5).send("attack", creature="devil-1", target="aria", attack="glaive")
    assert saves(events) == []
    assert effects(h, "aria") == [("infernal-wound", None), ("infernal-wound", None)]
    events = h.rolls(3, 4).end_turn()
    assert hurt(events) == [("aria", 7, "")]
    assert h.creature("aria").hp == 60 - 8 - 6 - 8 - 7
    # Medicine 12: stanched, every wound closed; no more bleeding.
    h.rolls(12).send("stanch", creature="aria", target="aria")
    assert effects(h, "aria") == []
    assert "infernal-wound" not in h.creature("aria").conditions
    h.end_turn()
    assert hurt(h.end_turn()) == []


def test_a_save_of_12_resists_and_stanching_needs_a_wound_in_reach() -> None:
    devil = srd("bearded-devil", "Devil")
    h = fight(devil, make("aria", hp=60, ac=10), make("bram", hp=60), zones={"bram": "yard"})
    # No wound yet: nothing to stanch.
    assert h.refused("stanch", creature="devil-1", target="aria").code == "invalid_target"
    events = h.rolls(15, 5, 12).send("attack", creature="devil-1", target="aria", attack="glaive")
    assert saves(events) == [("aria", "con", 12, 12, True)]
    assert effects(h, "aria") == []
    h.end_turn()
    h.end_turn()
    h.end_turn()
    h.rolls(15, 5, 3).send("attack", creature="devil-1", target="aria", attack="glaive")
    assert hurt(h.rolls(4).end_turn()) == [("aria", 4, "")]
    h.end_turn()
    # Bram, in the yard, cannot reach her wound.
    assert h.refused("stanch", creature="bram", target="aria").code == "out_of_range"


# -- deadly leap -------------------------------------------------------------------------------


def test_the_bulettes_deadly_leap_lands_on_creatures_30_ft_away() -> None:
    bulette = srd("bulette", "Landshark")
    h = fight(
        bulette,
        make("aria", hp=60),
        make("bram", hp=60, saves={"str": 1, "dex": 3}),
        zones={"aria": "yard", "bram": "yard"},
    )
    # The field is too far for its 30-ft Standing Leap; its own zone is no leap.
    refusal = h.refused("deadly_leap", creature="landshark-1", zone="field", creatures=["aria"])
    assert refusal.code == "out_of_range"
    refusal = h.refused("deadly_leap", creature="landshark-1", zone="yard", creatures=[])
    assert refusal.code == "invalid_params"
    # Damage 3d6+4 (3+4+5+4 = 16) bludgeoning, 3d6+4 (2+3+4+4 = 13) slashing; Aria's save
    # (her better: +0 Strength) 10 fails; Bram's (Dexterity, +3) 13 + 3 = 16 succeeds.
    events = h.rolls(3, 4, 5, 2, 3, 4, 10, 13).send(
        "deadly_leap", creature="landshark-1", zone="yard", creatures=["aria", "bram"]
    )
    assert h.creature("landshark-1").zone == "yard"
    assert h.state.resources.movement_spent == 30
    assert h.state.resources.actions == 0
    assert saves(events) == [("aria", "str", 10, 16, False), ("bram", "dex", 16, 16, True)]
    assert hurt(events) == [
        ("aria", 16, "bludgeoning"),
        ("aria", 13, "slashing"),
        ("bram", 8, "bludgeoning"),
        ("bram", 6, "slashing"),
    ]
    assert "prone" in h.creature("aria").conditions
    assert "prone" not in h.creature("bram").conditions
    assert h.creature("bram").zone == "yard"


def test_a_creature_without_deadly_leap_or_too_little_movement() -> None:
    h = fight(make("aria", hp=60), make("bram", hp=60), zones={"bram": "yard"})
    refusal = h.refused("deadly_leap", creature="aria", zone="yard", creatures=["bram"])
    assert refusal.code == "invalid_params"
    bulette = srd("bulette", "Landshark")
    h = fight(bulette, make("aria", hp=60), zones={"aria": "yard"})
    # 15 ft of its 40-ft walk spent: 25 ft left, short of the 30-ft leap to the yard.
    h.send("move", creature="landshark-1", feet=15)
    refusal = h.refused("deadly_leap", creature="landshark-1", zone="yard", creatures=["aria"])
    assert refusal.code == "not_enough_movement"


# -- transparent -------------------------------------------------------------------------------


def test_a_hidden_gelatinous_cube_is_spotted_with_a_perception_of_15() -> None:
    cube = srd("gelatinous-cube", "Cube", hidden=True)
    h = fight(make("aria", hp=60), make("bram", hp=60), cube, zones={"cube-1": "yard"})
    # Aria's Perception 14 misses it (her action spent); it stays hidden.
    h.rolls(14).send("spot", creature="aria", target="cube-1")
    assert h.state.resources.actions == 0
    assert h.creature("cube-1").hidden
    h.end_turn()
    # Bram's 15 spots it: revealed, by him.
    events = h.rolls(15).send("spot", creature="bram", target="cube-1")
    assert [
        (e.by, e.creature, e.field, e.value) for e in events if isinstance(e, OverrideApplied)
    ] == [("bram", "cube-1", "hidden", False)]
    assert not h.creature("cube-1").hidden
    h.end_turn()
    h.end_turn()
    # Nothing hidden to spot any more, nor a hidden creature that is not transparent.
    assert h.refused("spot", creature="aria", target="cube-1").code == "invalid_target"


def test_the_cubes_attack_reveals_it() -> None:
    cube = srd("gelatinous-cube", "Cube", hidden=True)
    h = fight(cube, make("aria", hp=60, ac=10))
    events = h.rolls(15, 3, 3, 3).send(
        "attack", creature="cube-1", target="aria", attack="pseudopod"
    )
    assert [(e.by, e.field, e.value) for e in events if isinstance(e, OverrideApplied)] == [
        ("cube-1", "hidden", False)
    ]
    assert not h.creature("cube-1").hidden


def test_a_hidden_creature_that_is_not_transparent_cannot_be_spotted_so() -> None:
    h = fight(make("aria", hp=60), make("lurker", "foes", hidden=True))
    assert h.refused("spot", creature="aria", target="lurker").code == "invalid_target"


# -- adhesive ----------------------------------------------------------------------------------


def test_the_mimic_in_object_form_sticks_what_its_pseudopod_hits() -> None:
    mimic = attrs.evolve(srd("mimic", "Chest"), conditions=["object-form"])
    h = fight(mimic, make("aria", hp=60, ac=10))
    # Pseudopod +5: 15 hits, 1d8+3 (4 -> 7); Aria sticks: grappled.
    h.rolls(15, 4).send("attack", creature="chest-1", target="aria", attack="pseudopod")
    assert effects(h, "aria") == [("grappled", None)]
    h.end_turn()
    # Unstick: Athletics with disadvantage, 18 and 12, the 12 kept: 12 < 13 fails.
    events = h.rolls(18, 12).send("unstick", creature="aria")
    (check,) = [e for e in events if isinstance(e, CheckRolled)]
    assert (check.roll.advantage, check.roll.total, check.success) == ("disadvantage", 12, False)
    assert "grappled" in h.creature("aria").conditions
    h.end_turn()
    h.end_turn()
    # 13 and 20: 13 kept, free.
    h.rolls(13, 20).send("unstick", creature="aria")
    assert effects(h, "aria") == []
    h.end_turn()
    h.end_turn()
    # Not stuck any more: nothing to pull free of.
    assert h.refused("unstick", creature="aria").code == "invalid_target"


def test_the_mimic_out_of_object_form_does_not_stick() -> None:
    mimic = srd("mimic", "Chest")
    h = fight(mimic, make("aria", hp=60, ac=10))
    h.rolls(15, 4).send("attack", creature="chest-1", target="aria", attack="pseudopod")
    assert effects(h, "aria") == []
