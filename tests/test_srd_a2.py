"""The SRD creatures' damage and hit point features (``plugins/srd/_strikes.py``), each
tested from its SRD 5.1 stat block, with exact outcomes:

- Flesh golem, Lightning Absorption: lightning damage heals it by the amount instead.
- Azer, Heated Body: a creature hitting it with a melee attack within 5 feet takes
  1d10 fire damage. Black pudding, Corrosive Form: 1d8 acid the same way.
- Ghast, Stench: a creature starting its turn within 5 feet makes a DC 10 Constitution
  save or is poisoned until the start of its next turn; a success makes it immune to
  that ghast's stench for 24 hours.
- Mephits' Death Burst: magma mephit, creatures within 5 feet, DC 11 Dexterity, 2d6
  fire, half on a success; dust mephit, DC 10 Constitution or blinded for 1 minute,
  saving again at the end of each of its turns; magmin, within 10 feet, DC 11
  Dexterity, 2d6 fire, half on a success.
- Boar, Charge: after moving at least 20 feet straight toward the target, a tusk hit
  deals an extra 1d6 slashing, and the target makes a DC 11 Strength save or is
  knocked prone. Lion, Pounce: 20 feet, a claw hit, DC 13 Strength or prone.

"Within 5 feet" is engaged (docs/rules.md, "Rulings"); a charge is entering the
target's zone on the creature's own turn with at least the distance moved this turn
(docs/rules.md, "Creature features").
"""

from __future__ import annotations

from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Attack,
    AttackMade,
    ConditionEffectApplied,
    Creature,
    Damaged,
    EncounterOptions,
    Healed,
    SaveMade,
    ZoneAffected,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness

OPTIONS = EncounterOptions(flanking=False)


def srd(entry_id: str, name: str) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name})
    return made


def damaged(events: tuple[object, ...]) -> list[tuple[str, int, str, int]]:
    return [(e.creature, e.amount, e.damage_type, e.hp) for e in events if isinstance(e, Damaged)]


def saves(events: tuple[object, ...]) -> list[tuple[str, str, int, int, bool]]:
    return [
        (e.creature, e.ability, e.roll.total, e.dc, e.success)
        for e in events
        if isinstance(e, SaveMade)
    ]


# -- Lightning Absorption ----------------------------------------------------------------------


def test_lightning_heals_the_flesh_golem_by_the_damage_instead() -> None:
    h = harness(
        [srd("flesh-golem", "Golem"), make("aria")], {"golem-1": "hall", "aria": "yard"}, [20, 10]
    )
    golem = h.creature("golem-1")
    assert [t.id for t in golem.traits if t.id == "damage-absorption"] == ["damage-absorption"]
    h.send("damage", creature="golem-1", amount=30, damage_type="slashing")
    assert h.creature("golem-1").hp == golem.max_hp - 30
    events = h.send("damage", creature="golem-1", amount=12, damage_type="lightning")
    (hit,) = [e for e in events if isinstance(e, Damaged)]
    assert (hit.amount, hit.hp, hit.raw, [s.kind for s in hit.steps]) == (
        0,
        golem.max_hp - 30,
        12,
        ["cancel"],
    )
    (healed,) = [e for e in events if isinstance(e, Healed)]
    assert (healed.amount, healed.hp) == (12, golem.max_hp - 18)
    # Healing never goes past the maximum: 25 more lightning heals the 18 it lacks.
    events = h.send("damage", creature="golem-1", amount=25, damage_type="lightning")
    (healed,) = [e for e in events if isinstance(e, Healed)]
    assert (healed.amount, healed.hp) == (18, golem.max_hp)
    # Other damage hurts it as before; nobody else absorbs lightning.
    events = h.send("damage", creature="aria", amount=5, damage_type="lightning")
    assert damaged(events) == [("aria", 5, "lightning", 15)]
    assert not any(isinstance(e, Healed) for e in events)
    h.assert_replay_matches()


# -- Heated Body, Corrosive Form --------------------------------------------------------------


def test_hitting_the_azer_in_melee_burns_the_attacker_for_1d10_fire() -> None:
    h = harness(
        [make("aria", hp=30), srd("azer", "Azer")],
        {"aria": "hall", "azer-1": "hall"},
        [20, 10],
        options=OPTIONS,
    )
    # Aria's blade hits (d20 15 + 4 against AC 17), 1d6+2 = 6; the azer's heat: d10 = 7.
    events = h.rolls(15, 4, 7).send(
        "attack", h.player("player-aria"), creature="aria", target="azer-1", attack="blade"
    )
    azer = h.creature("azer-1")
    assert damaged(events) == [
        ("azer-1", 6, "slashing", azer.max_hp - 6),
        ("aria", 7, "fire", 23),
    ]
    h.assert_replay_matches()


def test_a_miss_or_a_ranged_hit_on_the_azer_burns_nobody() -> None:
    bow = Attack("bow", "ranged", 4, "1d6", "piercing", range=80)
    aria = make("aria", hp=30, attacks=[Attack("blade", "melee", 4, "1d6+2", "slashing"), bow])
    h = harness([aria, srd("azer", "Azer")], {"aria": "yard", "azer-1": "hall"}, [20, 10])
    events = h.rolls(15, 3).send(
        "attack", h.player("player-aria"), creature="aria", target="azer-1", attack="bow"
    )
    assert [e.hit for e in events if isinstance(e, AttackMade)] == [True]
    assert [d[0] for d in damaged(events)] == ["azer-1"]
    assert h.creature("aria").hp == 30


def test_hitting_the_black_pudding_in_melee_costs_1d8_acid() -> None:
    h = harness(
        [make("aria", hp=30), srd("black-pudding", "Pudding")],
        {"aria": "hall", "pudding-1": "hall"},
        [20, 10],
        options=OPTIONS,
    )
    full = h.creature("pudding-1").max_hp
    # AC 7: a d20 of 5 + 4 hits; the blade's 1d6+2 = 5 slashing does nothing (the
    # pudding is immune to slashing), but the hit touches it: 1d8 acid = 8 for Aria.
    events = h.rolls(5, 3, 8).send(
        "attack", h.player("player-aria"), creature="aria", target="pudding-1", attack="blade"
    )
    # (The slashing also splits it, Split: tests/test_srd_bodies.py plays that.)
    assert h.creature("pudding-1").max_hp == full // 2
    assert damaged(events) == [
        ("pudding-1", 0, "slashing", full),
        ("aria", 8, "acid", 22),
    ]
    h.assert_replay_matches()


# -- Stench ------------------------------------------------------------------------------------


def ghast_and_aria() -> EncounterHarness:
    """The ghast (first) engages Aria in the hall; then Aria's turn starts."""
    h = harness(
        [srd("ghast", "Ghast"), make("aria", hp=30)],
        {"ghast-1": "hall", "aria": "hall"},
        [20, 10],
        options=OPTIONS,
    )
    h.rolls(1).send("attack", creature="ghast-1", target="aria", attack="claws")
    assert h.state.engaged_with("aria") == ["ghast-1"]
    return h


def test_starting_a_turn_by_the_ghast_poisons_on_a_failed_dc_10_con_save() -> None:
    h = ghast_and_aria()
    events = h.rolls(9).end_turn()  # Aria's turn starts: Con save 9 + 0 against DC 10
    assert saves(events) == [("aria", "con", 9, 10, False)]
    (applied,) = [e for e in events if isinstance(e, ConditionEffectApplied)]
    assert (applied.effect.condition, applied.effect.until, applied.effect.source) == (
        "poisoned",
        "start",
        "ghast-1",
    )
    assert "poisoned" in h.creature("aria").conditions
    h.end_turn()  # the ghast's turn: no save for the ghast (nobody stinks at it)
    # Aria's next turn starts: the poison ends, and she saves again (succeeds: 10).
    events = h.rolls(10).end_turn()
    assert saves(events) == [("aria", "con", 10, 10, True)]
    assert "poisoned" not in h.creature("aria").conditions
    assert "stench_immune" in h.creature("aria").conditions
    h.end_turn()
    # Immune for 24 hours: no more saves against this ghast.
    events = h.end_turn()
    assert saves(events) == []
    h.assert_replay_matches()


def test_the_stench_reaches_only_creatures_engaged_with_the_ghast() -> None:
    h = harness(
        [srd("ghast", "Ghast"), make("aria", hp=30)],
        {"ghast-1": "hall", "aria": "yard"},
        [20, 10],
        options=OPTIONS,
    )
    events = h.end_turn()
    assert saves(events) == []
    assert h.creature("aria").conditions == []


# -- Death Burst -------------------------------------------------------------------------------


def mephit_among(entry: str, zone_of_bob: str = "hall") -> EncounterHarness:
    """Aria (first) engaged with the mephit in the hall; Bob in ``zone_of_bob``."""
    h = harness(
        [make("aria", hp=30), srd(entry, "Mephit"), make("bob", hp=30)],
        {"aria": "hall", "mephit-1": "hall", "bob": zone_of_bob},
        [20, 15, 10],
        options=OPTIONS,
    )
    h.rolls(1).send(
        "attack", h.player("player-aria"), creature="aria", target="mephit-1", attack="blade"
    )
    assert h.state.engaged_with("mephit-1") == ["aria"]
    return h


def test_the_magma_mephit_bursts_for_2d6_fire_on_those_engaged_with_it() -> None:
    h = mephit_among("magma-mephit")
    # The GM finishes it: defeated. The burst: 2d6 = 4 + 5 = 9, once; Aria's Dex save
    # 12 against DC 11 succeeds: half, 4. Bob, in the hall but not engaged, is spared.
    events = h.rolls(4, 5, 12).send("damage", creature="mephit-1", amount=50)
    assert "defeated" in h.creature("mephit-1").conditions
    assert saves(events) == [("aria", "dex", 12, 11, True)]
    assert damaged(events)[1:] == [("aria", 4, "fire", 26)]
    h.assert_replay_matches()


def test_a_failed_save_takes_the_whole_burst() -> None:
    h = mephit_among("magma-mephit")
    events = h.rolls(4, 5, 10).send("damage", creature="mephit-1", amount=50)
    assert saves(events) == [("aria", "dex", 10, 11, False)]
    assert damaged(events)[1:] == [("aria", 9, "fire", 21)]


def test_the_dust_mephit_blinds_for_a_minute_with_a_save_at_each_turns_end() -> None:
    h = mephit_among("dust-mephit")
    events = h.rolls(9).send("damage", creature="mephit-1", amount=50)
    assert saves(events) == [("aria", "con", 9, 10, False)]
    (applied,) = [e for e in events if isinstance(e, ConditionEffectApplied)]
    effect = applied.effect
    assert (effect.condition, effect.rounds, effect.save, effect.save_dc) == (
        "blinded",
        10,
        "con",
        10,
    )
    assert "blinded" in h.creature("aria").conditions


def test_the_magmin_bursts_over_its_whole_zone_with_one_roll() -> None:
    h = mephit_among("magmin")
    # 2d6 = 6 + 2 = 8 for both: Aria's save 5 fails (8), Bob's 15 succeeds (4).
    events = h.rolls(6, 2, 5, 15).send("damage", creature="mephit-1", amount=50)
    (zone,) = [e for e in events if isinstance(e, ZoneAffected)]
    assert (zone.zone, zone.damage, zone.damage_type) == ("hall", 8, "fire")
    assert saves(events) == [("aria", "dex", 5, 11, False), ("bob", "dex", 15, 11, True)]
    assert damaged(events)[1:] == [("aria", 8, "fire", 22), ("bob", 4, "fire", 26)]
    h.assert_replay_matches()


def test_a_surrendering_mephit_does_not_burst() -> None:
    h = mephit_among("magma-mephit")
    events = h.send("grant_condition", creature="mephit-1", condition="surrendered")
    assert saves(events) == [] and damaged(events) == []


# -- Charge, Pounce ----------------------------------------------------------------------------


def boar_charging(zone_of_aria: str) -> EncounterHarness:
    h = harness(
        [srd("boar", "Boar"), make("aria", hp=30, ac=10)],
        {"boar-1": "road", "aria": zone_of_aria},
        [20, 10],
        options=OPTIONS,
    )
    return h


def test_the_boar_charges_20_feet_into_the_zone_for_1d6_and_a_dc_11_strength_save() -> None:
    h = boar_charging("yard")
    h.send("enter", creature="boar-1", zones=["yard"])
    assert h.state.resources.movement_spent >= 20
    # Tusk: d20 10 + 3 hits AC 10; 1d6+1 = 4; the charge: 1d6 = 5; Aria's Str save 8 fails.
    events = h.rolls(10, 3, 5, 8).send("attack", creature="boar-1", target="aria", attack="tusk")
    assert damaged(events) == [("aria", 4, "slashing", 26), ("aria", 5, "slashing", 21)]
    assert saves(events) == [("aria", "str", 8, 11, False)]
    assert "prone" in h.creature("aria").conditions
    h.assert_replay_matches()


def test_no_charge_without_moving_into_the_targets_zone_this_turn() -> None:
    h = boar_charging("road")
    events = h.rolls(10, 3).send("attack", creature="boar-1", target="aria", attack="tusk")
    assert damaged(events) == [("aria", 4, "slashing", 26)]
    assert saves(events) == []


def test_the_lions_pounce_knocks_prone_on_a_failed_dc_13_strength_save() -> None:
    h = harness(
        [srd("lion", "Lion"), make("aria", hp=30, ac=10)],
        {"lion-1": "road", "aria": "yard"},
        [20, 10],
        options=OPTIONS,
    )
    h.send("enter", creature="lion-1", zones=["yard"])
    # Claw: d20 10 hits; 1d6+3 = 2 + 3; Aria's Str save 13 succeeds: she stays up.
    events = h.rolls(10, 2, 13).send("attack", creature="lion-1", target="aria", attack="claw")
    assert saves(events) == [("aria", "str", 13, 13, True)]
    assert "prone" not in h.creature("aria").conditions


# -- Undead Fortitude --------------------------------------------------------------------------


def zombie() -> EncounterHarness:
    """Aria (first) and a zombie (22 hit points, Con save +3) in the hall."""
    return harness(
        [make("aria", hp=30), srd("zombie", "Zombie")],
        {"aria": "hall", "zombie-1": "hall"},
        [20, 10],
        options=OPTIONS,
    )


def test_a_zombie_dropped_to_0_stays_at_1_on_a_con_save_of_5_plus_the_damage() -> None:
    h = zombie()
    h.send("damage", creature="zombie-1", amount=15, damage_type="slashing")
    assert h.creature("zombie-1").hp == 7
    # 9 slashing would drop it: a DC 14 (5 + 9) Con save, 11 + 3 = 14: it stays at 1.
    events = h.rolls(11).send("damage", creature="zombie-1", amount=9, damage_type="slashing")
    (hit,) = [e for e in events if isinstance(e, Damaged)]
    assert (hit.amount, hit.hp, [(s.kind, s.source) for s in hit.steps]) == (
        6,
        1,
        [("reduce", "Undead Fortitude")],
    )
    assert saves(events) == [("zombie-1", "con", 14, 14, True)]
    zombie_now = h.creature("zombie-1")
    assert (zombie_now.hp, zombie_now.conditions) == (1, [])
    h.assert_replay_matches()


def test_a_failed_fortitude_save_takes_the_last_hit_point() -> None:
    h = zombie()
    # 30 slashing from 22: DC 35, a roll of 20 + 3 fails.
    events = h.rolls(20).send("damage", creature="zombie-1", amount=30, damage_type="slashing")
    assert saves(events) == [("zombie-1", "con", 23, 35, False)]
    assert damaged(events) == [("zombie-1", 21, "slashing", 1), ("zombie-1", 1, "", 0)]
    assert "defeated" in h.creature("zombie-1").conditions
    h.assert_replay_matches()


def test_radiant_damage_and_critical_hits_get_no_fortitude_save() -> None:
    h = zombie()
    events = h.send("damage", creature="zombie-1", amount=22, damage_type="radiant")
    assert saves(events) == [] and damaged(events) == [("zombie-1", 22, "radiant", 0)]
    assert "defeated" in h.creature("zombie-1").conditions
    h = zombie()
    h.send("damage", creature="zombie-1", amount=20, damage_type="slashing")
    assert h.creature("zombie-1").hp == 2
    # Aria's critical hit (a natural 20): 2d6+2 = 1 + 1 + 2 = 4; no save.
    events = h.rolls(20, 1, 1).send(
        "attack", h.player("player-aria"), creature="aria", target="zombie-1", attack="blade"
    )
    assert [e.critical for e in events if isinstance(e, AttackMade)] == [True]
    assert saves(events) == []
    assert damaged(events) == [("zombie-1", 4, "slashing", 0)]
    assert "defeated" in h.creature("zombie-1").conditions


# -- Regeneration ------------------------------------------------------------------------------


def troll() -> EncounterHarness:
    """A troll (84 hit points, its turn first) and Aria in the hall."""
    return harness(
        [srd("troll", "Troll"), make("aria", hp=30)],
        {"troll-1": "hall", "aria": "hall"},
        [20, 10],
        options=OPTIONS,
    )


def next_troll_turn(h: EncounterHarness) -> tuple[object, ...]:
    """End the troll's turn and Aria's: the events of the troll's next turn start."""
    if h.state.active == "troll-1":
        h.end_turn()
    return h.end_turn()


def test_the_troll_regains_10_hit_points_at_the_start_of_its_turn() -> None:
    h = troll()
    h.send("damage", creature="troll-1", amount=30, damage_type="slashing")
    events = next_troll_turn(h)
    (healed,) = [e for e in events if isinstance(e, Healed)]
    assert (healed.creature, healed.amount, healed.hp) == ("troll-1", 10, 64)
    # Never past its maximum: healed to 80 by the GM, it regains the 4 it lacks.
    h.send("heal", creature="troll-1", amount=16)
    events = next_troll_turn(h)
    assert [(e.amount, e.hp) for e in events if isinstance(e, Healed)] == [(4, 84)]
    # At its maximum, nothing.
    events = next_troll_turn(h)
    assert not any(isinstance(e, Healed) for e in events)
    h.assert_replay_matches()


def test_acid_or_fire_stops_the_next_regeneration() -> None:
    h = troll()
    h.send("damage", creature="troll-1", amount=30, damage_type="fire")
    assert "regeneration_stopped" in h.creature("troll-1").conditions
    events = next_troll_turn(h)
    assert not any(isinstance(e, Healed) for e in events)
    assert h.creature("troll-1").hp == 54
    assert "regeneration_stopped" not in h.creature("troll-1").conditions
    # The turn after, it regenerates again.
    events = next_troll_turn(h)
    assert [(e.amount, e.hp) for e in events if isinstance(e, Healed)] == [(10, 64)]
    h.assert_replay_matches()


def test_the_troll_at_0_is_stable_and_defeated_only_if_it_does_not_regenerate() -> None:
    h = troll()
    h.send("damage", creature="troll-1", amount=100, damage_type="slashing")
    assert h.creature("troll-1").hp == 0
    assert h.creature("troll-1").conditions == ["stable"]
    events = next_troll_turn(h)  # it regenerates: back up at 10
    assert [(e.amount, e.hp) for e in events if isinstance(e, Healed)] == [(10, 10)]
    assert h.creature("troll-1").conditions == []
    # Burned down to 0: its next turn starts at 0 without regenerating: defeated.
    h.send("damage", creature="troll-1", amount=10, damage_type="fire")
    assert sorted(h.creature("troll-1").conditions) == ["regeneration_stopped", "stable"]
    next_troll_turn(h)
    assert "defeated" in h.creature("troll-1").conditions
    assert h.creature("troll-1").hp == 0
    h.assert_replay_matches()


# -- Martial Advantage, Sneak Attack -----------------------------------------------------------


def test_martial_advantage_adds_2d6_once_per_turn_with_an_ally_engaged_with_the_target() -> None:
    h = harness(
        [srd("hobgoblin", "Hob"), srd("hobgoblin", "Gob"), make("aria", hp=40, ac=12)],
        {"hob-1": "hall", "gob-1": "hall", "aria": "hall"},
        [20, 15, 10],
        options=OPTIONS,
    )
    # Hob's longsword (+3): d20 15 hits; 1d8+1 = 5. No ally of Hob is engaged with Aria.
    events = h.rolls(15, 4).send("attack", creature="hob-1", target="aria", attack="longsword")
    assert damaged(events) == [("aria", 5, "slashing", 35)]
    assert h.creature("hob-1").resources["martial-advantage"] == 1
    h.end_turn()
    # Gob's: Hob is engaged with Aria: 5, and 2d6 = 3 + 5 = 8 more, its one use this turn.
    events = h.rolls(15, 4, 3, 5).send(
        "attack", creature="gob-1", target="aria", attack="longsword"
    )
    assert damaged(events) == [("aria", 5, "slashing", 30), ("aria", 8, "slashing", 22)]
    assert h.creature("gob-1").resources["martial-advantage"] == 0
    h.assert_replay_matches()


def test_an_incapacitated_ally_gives_no_martial_advantage() -> None:
    h = harness(
        [srd("hobgoblin", "Hob"), srd("hobgoblin", "Gob"), make("aria", hp=40, ac=12)],
        {"hob-1": "hall", "gob-1": "hall", "aria": "hall"},
        [20, 15, 10],
        options=OPTIONS,
    )
    h.rolls(1).send("attack", creature="hob-1", target="aria", attack="longsword")
    h.end_turn()
    h.send("grant_condition", creature="hob-1", condition="stunned")
    events = h.rolls(15, 4).send("attack", creature="gob-1", target="aria", attack="longsword")
    assert damaged(events) == [("aria", 5, "slashing", 35)]
    assert h.creature("gob-1").resources["martial-advantage"] == 1


def spy_and_aria() -> EncounterHarness:
    return harness(
        [srd("spy", "Spy"), make("aria", hp=40, ac=12)],
        {"spy-1": "hall", "aria": "hall"},
        [20, 10],
        options=OPTIONS,
    )


def test_sneak_attack_adds_2d6_to_a_hit_with_advantage() -> None:
    h = spy_and_aria()
    h.send("grant_condition", creature="aria", condition="prone")
    # Advantage against the prone Aria from within 5 feet: 4 and 16, 16 + 4 hits;
    # shortsword 1d6+2 = 3 + 2; Sneak Attack 2d6 = 6 + 6.
    events = h.rolls(4, 16, 3, 6, 6).send(
        "attack", creature="spy-1", target="aria", attack="shortsword"
    )
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert made.roll.advantage == "advantage"
    assert damaged(events) == [("aria", 5, "piercing", 35), ("aria", 12, "piercing", 23)]
    assert h.creature("spy-1").resources["sneak-attack"] == 0
    h.assert_replay_matches()


def test_no_sneak_attack_without_advantage_or_an_ally_by_the_target() -> None:
    h = spy_and_aria()
    events = h.rolls(16, 3).send("attack", creature="spy-1", target="aria", attack="shortsword")
    assert damaged(events) == [("aria", 5, "piercing", 35)]
    assert h.creature("spy-1").resources["sneak-attack"] == 1


# -- Relentless --------------------------------------------------------------------------------


def test_the_boar_relentlessly_stays_at_1_from_7_damage_or_less_once_a_rest() -> None:
    h = harness(
        [make("aria", hp=30), srd("boar", "Boar")],
        {"aria": "hall", "boar-1": "hall"},
        [20, 10],
        options=OPTIONS,
    )
    h.send("damage", creature="boar-1", amount=5, damage_type="slashing")
    assert h.creature("boar-1").hp == 6
    # 7 would drop it to 0: it is left at 1, its use spent.
    events = h.send("damage", creature="boar-1", amount=7, damage_type="slashing")
    assert damaged(events) == [("boar-1", 5, "slashing", 1)]
    assert h.creature("boar-1").resources["relentless"] == 0
    # No use left: the next blow drops it.
    h.send("damage", creature="boar-1", amount=1, damage_type="slashing")
    assert "defeated" in h.creature("boar-1").conditions
    h.assert_replay_matches()


def test_more_than_7_damage_drops_the_boar_whatever_its_relentless() -> None:
    h = harness(
        [make("aria", hp=30), srd("boar", "Boar")],
        {"aria": "hall", "boar-1": "hall"},
        [20, 10],
        options=OPTIONS,
    )
    h.send("damage", creature="boar-1", amount=5, damage_type="slashing")
    events = h.send("damage", creature="boar-1", amount=8, damage_type="slashing")
    assert damaged(events) == [("boar-1", 8, "slashing", 0)]
    assert "defeated" in h.creature("boar-1").conditions
    assert h.creature("boar-1").resources["relentless"] == 1


# -- Grapple limits, Grappler ------------------------------------------------------------------


def holder_and_two(entry: str) -> EncounterHarness:
    """The creature of ``entry`` (its turn first), Aria and Bob, all in the hall."""
    return harness(
        [srd(entry, "Holder"), make("aria", hp=40, ac=12), make("bob", hp=40, ac=12)],
        {"holder-1": "hall", "aria": "hall", "bob": "hall"},
        [20, 15, 10],
        options=OPTIONS,
    )


def around(h: EncounterHarness) -> None:
    """Back to the holder's turn."""
    while True:
        h.end_turn()
        if h.state.active == "holder-1":
            return


def test_the_crocodile_cannot_bite_another_while_it_grapples_one() -> None:
    h = holder_and_two("crocodile")
    # Bite (+4): d20 15 hits; 1d10+2 = 5 + 2; Aria is grappled (escape DC 12).
    events = h.rolls(15, 5).send("attack", creature="holder-1", target="aria", attack="bite")
    assert damaged(events) == [("aria", 7, "piercing", 33)]
    assert "grappled" in h.creature("aria").conditions
    around(h)
    refusal = h.refused("attack", creature="holder-1", target="bob", attack="bite")
    assert refusal.code == "invalid_target"
    assert "already grapples Aria" in refusal.message
    # Aria it may bite again.
    h.rolls(1).send("attack", creature="holder-1", target="aria", attack="bite")


def test_the_ankheg_bites_only_the_creature_it_grapples_and_with_advantage() -> None:
    h = holder_and_two("ankheg")
    # Bite (+5): d20 15 hits; 2d6+3 = 3 + 3 + 3, and 1d6 acid = 2; Aria is grappled.
    events = h.rolls(15, 3, 3, 2).send("attack", creature="holder-1", target="aria", attack="bite")
    assert damaged(events) == [("aria", 9, "slashing", 31), ("aria", 2, "acid", 29)]
    assert "grappled" in h.creature("aria").conditions
    around(h)
    refusal = h.refused("attack", creature="holder-1", target="bob", attack="bite")
    assert (refusal.code, "only that creature" in refusal.message) == ("invalid_target", True)
    events = h.rolls(2, 3).send("attack", creature="holder-1", target="aria", attack="bite")
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.roll.advantage, made.roll.dice, made.hit) == ("advantage", (2, 3), False)
    assert made.roll.sources == ("advantage:Bite: grappled",)


def test_the_mimic_has_advantage_against_a_creature_it_grapples() -> None:
    h = holder_and_two("mimic")
    events = h.rolls(2).send("attack", creature="holder-1", target="aria", attack="pseudopod")
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert made.roll.advantage == "none"
    # The GM grapples Aria by the mimic's Adhesive, naming it as the source.
    h.send("apply_effect", creature="aria", condition="grappled", source="holder-1")
    around(h)
    events = h.rolls(2, 3).send("attack", creature="holder-1", target="aria", attack="pseudopod")
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.roll.advantage, made.roll.sources) == ("advantage", ("advantage:grappler",))
