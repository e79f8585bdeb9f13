"""Areas of effect (docs/rules.md, A10 and A11).

The table of maximum targets with its boundaries, spilling into adjacent zones,
the weight of Huge and bigger creatures and their expertise die, unaffected
creatures, one damage roll halved on a save, and ongoing areas as elements.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make

from zonekeep.plugins.areas import max_targets, spill_zones, target_weight
from zonekeep.sdk import (
    ActionTaken,
    Arena,
    ConditionApplied,
    Creature,
    Damaged,
    EffectCreated,
    EffectEnded,
    Link,
    PositionTaken,
    SaveMade,
    Size,
    Zone,
    largest_dimension,
)
from zonekeep.sdk.testing import EncounterHarness

# -- the table of maximum targets ----------------------------------------------------------


@pytest.mark.rule(
    "arena.txt:29.1", "arena.txt:30.1", "arena.txt:31.1", "arena.txt:33.1", "arena.txt:37.2"
)
@pytest.mark.parametrize(
    ("shape", "size", "expected"),
    [
        ("cone", 14, 1),
        ("cone", 15, 2),
        ("cone", 29, 2),
        ("cone", 30, 3),
        ("cone", 59, 3),
        ("cone", 60, 5),
        ("cone", 119, 5),
        ("cone", 120, 8),
        ("cone", 500, 8),
        ("cube", 9, 1),
        ("cube", 10, 2),
        ("cube", 14, 2),
        ("cube", 15, 3),
        ("cube", 29, 3),
        ("cube", 30, 5),
        ("cube", 59, 5),
        ("cube", 60, 8),
        ("sphere", 4, 1),
        ("sphere", 5, 2),
        ("sphere", 9, 2),
        ("sphere", 10, 3),
        ("sphere", 19, 3),
        ("sphere", 20, 5),
        ("sphere", 39, 5),
        ("sphere", 40, 8),
        ("cylinder", 4, 1),
        ("cylinder", 5, 2),
        ("cylinder", 10, 3),
        ("cylinder", 20, 5),
        ("cylinder", 40, 8),
    ],
)
def test_max_targets_table(shape: str, size: int, expected: int) -> None:
    assert max_targets(shape, size) == expected


@pytest.mark.rule(
    "arena.txt:29.1", "arena.txt:30.1", "arena.txt:31.1", "arena.txt:33.1", "arena.txt:37.2"
)
@pytest.mark.parametrize(
    ("width", "length", "expected"),
    [
        (5, 29, 1),
        (4, 120, 1),  # narrower than every row
        (5, 30, 2),
        (10, 59, 2),  # wide enough for 10 by 60, too short: only 5 by 30
        (5, 59, 2),
        (5, 60, 3),
        (10, 60, 5),
        (5, 119, 3),
        (5, 120, 5),
        (9, 120, 5),
        (10, 119, 5),
        (10, 120, 8),
    ],
)
def test_max_targets_for_lines(width: int, length: int, expected: int) -> None:
    assert max_targets("line", length, width) == expected


def test_a_line_is_five_feet_wide_unless_told() -> None:
    assert max_targets("line", 60) == 3


def test_largest_dimension_of_each_shape() -> None:
    assert largest_dimension("sphere", 20) == 40
    assert largest_dimension("cylinder", 10) == 20
    assert largest_dimension("cone", 15) == 15
    assert largest_dimension("cube", 10) == 10
    assert largest_dimension("line", 60, 10) == 60
    with pytest.raises(ValueError, match="unknown area shape"):
        largest_dimension("blob", 10)
    with pytest.raises(ValueError, match="negative"):
        max_targets("cone", -1)


@pytest.mark.rule("arena.txt:38.1")
@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (Size.TINY, 1),
        (Size.MEDIUM, 1),
        (Size.LARGE, 1),
        (Size.HUGE, 2),
        (Size.GARGANTUAN, 3),
        (Size.COLOSSAL, 4),
    ],
)
def test_target_weight(size: Size, expected: int) -> None:
    assert target_weight(size) == expected


# -- the inn --------------------------------------------------------------------------------


def inn() -> Arena:
    """Hall (30) beside Bar (15) beside Yard (30); a trapdoor from the hall to a cellar
    that cannot be seen from the hall."""
    return Arena(
        "inn",
        "Inn",
        (
            Zone("hall", "Hall", 30),
            Zone("bar", "Bar", 15),
            Zone("yard", "Yard", 30),
            Zone("cellar", "Cellar", 30),
        ),
        (
            Link("hall", "bar", "beside"),
            Link("bar", "yard", "beside"),
            Link("hall", "cellar", "below", clear=False, blocks_sight=True),
        ),
    )


@pytest.mark.rule("arena.txt:36.3")
def test_spill_only_when_the_area_exceeds_the_zone() -> None:
    arena = inn()
    # A fireball of radius 20 is 40 ft across: it does not fit the 30-ft hall.
    assert spill_zones(arena, "hall", largest_dimension("sphere", 20)) == ("hall", "bar", "cellar")
    # Radius 15 is exactly 30 ft, radius 10 is 20 ft: both fit.
    assert spill_zones(arena, "hall", largest_dimension("sphere", 15)) == ("hall",)
    assert spill_zones(arena, "hall", largest_dimension("sphere", 10)) == ("hall",)
    # In the 15-ft bar a 20-ft cube spills both ways.
    assert spill_zones(arena, "bar", 20) == ("bar", "hall", "yard")


def encounter(*others: Creature, positions: dict[str, str]) -> EncounterHarness:
    """Aria (spell DC 15) in the hall acts first; ``others`` placed as told."""
    aria = make("aria", spell_dc=15)
    h = EncounterHarness([aria, *others], arena=inn())
    h.start(
        positions={"aria": "hall", **positions}, initiative=[20, *range(10, 10 - len(others), -1)]
    )
    assert h.state.active == "aria"
    return h


def cast(h: EncounterHarness, **params: Any) -> None:
    params.setdefault("name", "Fireball")
    params.setdefault("range", 150)
    h.send("area_effect", creature="aria", **params)


def refused(h: EncounterHarness, **params: Any) -> tuple[str, str]:
    params.setdefault("name", "Fireball")
    params.setdefault("range", 150)
    refusal = h.refused("area_effect", creature="aria", **params)
    return refusal.code, refusal.message


def saves(h: EncounterHarness) -> dict[str, SaveMade]:
    return {e.creature: e for e in h.events if isinstance(e, SaveMade)}


def damage(h: EncounterHarness) -> dict[str, int]:
    return {e.creature: e.amount for e in h.events if isinstance(e, Damaged)}


# -- range to the target zone -----------------------------------------------------------------


@pytest.mark.rule("arena.txt:36.1")
def test_the_target_zone_must_be_in_range() -> None:
    h = encounter(make("gob", "foes"), positions={"gob": "yard"})
    sphere = {"shape": "sphere", "size": 5, "targets": ["gob"]}
    assert refused(h, zone="yard", **{**sphere, "range": 30}) == (
        "out_of_range",
        "Yard is 45 ft from Aria (Bar 15 ft + Yard 30 ft); Fireball has a range of 30 ft.",
    )
    assert refused(h, zone="yard", **{**sphere, "range": 0})[0] == "out_of_range"
    h.rolls(10, 3)
    cast(h, zone="yard", save="dex", damage="1d6", damage_type="fire", **{**sphere, "range": 45})
    assert damage(h) == {"gob": 3}


@pytest.mark.rule("arena.txt:36.2")
def test_an_area_is_aimed_at_one_zone_only() -> None:
    h = encounter(make("gob", "foes"), positions={"gob": "hall"})
    code, message = refused(h, zone=["hall", "yard"], shape="sphere", size=5, targets=["gob"])
    assert (code, message) == (
        "invalid_params",
        "'area_effect' parameter 'zone' must be a zone id (text), not a list.",
    )
    assert h.state.effects == {} and h.creature("gob").hp == 20


@pytest.mark.rule("arena.txt:36.1")
def test_the_own_zone_is_always_in_range_and_an_unseen_zone_never() -> None:
    h = encounter(
        make("gob", "foes"), make("rat", "foes"), positions={"gob": "hall", "rat": "cellar"}
    )
    assert refused(h, zone="cellar", shape="cube", size=10, targets=["rat"], range=600) == (
        "no_line_of_sight",
        "Aria has no line of sight to Cellar: every way there crosses something that blocks sight.",
    )
    assert refused(h, zone="attic", shape="cube", size=10, targets=[])[0] == "unknown_zone"
    h.rolls(4)
    cast(
        h,
        zone="hall",
        shape="cone",
        size=15,
        range=0,
        targets=["gob"],
        damage="1d4",
        damage_type="fire",
    )
    assert damage(h) == {"gob": 4}
    assert [e.action for e in h.events if isinstance(e, ActionTaken)] == ["area_effect"]


# -- affected zones ---------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:36.2", "arena.txt:36.3")
def test_a_fireball_too_big_for_the_zone_reaches_the_adjacent_zones() -> None:
    h = encounter(make("gob", "foes"), positions={"gob": "bar"})
    # Radius 10 (20 ft) fits the 30-ft hall: the goblin in the bar is outside it.
    assert refused(h, zone="hall", shape="sphere", size=10, targets=["gob"]) == (
        "invalid_target",
        "Gob is in Bar, outside Fireball's area (it affects Hall).",
    )
    # Radius 20 (40 ft) does not fit: it spills into the bar.
    h.rolls(1, 6)
    cast(
        h,
        zone="hall",
        shape="sphere",
        size=20,
        targets=["gob"],
        save="dex",
        damage="1d6",
        damage_type="fire",
    )
    assert damage(h) == {"gob": 6}


# -- how many targets ----------------------------------------------------------------------


@pytest.mark.rule("arena.txt:37.1")
def test_too_many_targets_is_refused_with_the_maximum() -> None:
    foes = [make(c, "foes") for c in ("gob", "orc", "imp")]
    h = encounter(*foes, positions={"gob": "hall", "orc": "hall", "imp": "hall"})
    assert refused(h, zone="hall", shape="cone", size=15, targets=["gob", "orc", "imp"]) == (
        "too_many_targets",
        "Fireball (a 15-ft cone) can have at most 2 targets; Gob and Orc already fill "
        "them, so Imp cannot be added.",
    )
    # A 14-ft cone is below the table: one target only.
    assert refused(h, zone="hall", shape="cone", size=14, targets=["gob", "orc"])[0] == (
        "too_many_targets"
    )


@pytest.mark.rule("arena.txt:38.1")
def test_a_huge_creature_counts_as_two_targets() -> None:
    ogre = make("ogre", "foes", size=Size.HUGE)
    h = encounter(ogre, make("gob", "foes"), positions={"ogre": "hall", "gob": "hall"})
    # A 30-ft cone takes 3: the ogre (2) and the goblin (1) fill it exactly.
    h.rolls(5, 5, 2)
    cast(
        h,
        zone="hall",
        shape="cone",
        size=30,
        targets=["ogre", "gob"],
        save="dex",
        damage="1d4",
        damage_type="fire",
    )
    assert {cid: s.roll.expertise for cid, s in saves(h).items()} == {"ogre": 0, "gob": 0}


def test_a_huge_creature_and_another_overflow_a_two_target_area() -> None:
    ogre = make("ogre", "foes", size=Size.HUGE)
    h = encounter(ogre, make("gob", "foes"), positions={"ogre": "hall", "gob": "hall"})
    assert refused(h, zone="hall", shape="cone", size=15, targets=["ogre", "gob"]) == (
        "too_many_targets",
        "Fireball (a 15-ft cone) can have at most 2 targets; Ogre (Huge, counts as 2) "
        "already fills them, so Gob cannot be added.",
    )


@pytest.mark.rule("arena.txt:38.2")
def test_a_gargantuan_in_the_last_slot_gains_an_expertise_die() -> None:
    dragon = make("dragon", "foes", size=Size.GARGANTUAN)
    h = encounter(make("gob", "foes"), dragon, positions={"gob": "hall", "dragon": "hall"})
    # 2 targets: the goblin takes one, the dragon (3) squeezes into the last one.
    h.rolls(12, 10, 4, 6)  # goblin's d20; dragon's d20 and its d4; the damage
    cast(
        h,
        zone="hall",
        shape="cone",
        size=15,
        targets=["gob", "dragon"],
        save="dex",
        damage="1d6",
        damage_type="fire",
    )
    dragon_save = saves(h)["dragon"]
    assert dragon_save.roll.expertise == 4
    assert dragon_save.roll.sources == ("expertise:too large for the area",)
    assert (dragon_save.roll.total, dragon_save.dc, dragon_save.success) == (14, 15, False)
    assert saves(h)["gob"].roll.expertise == 0


@pytest.mark.rule("arena.txt:38.2")
def test_nothing_fits_after_the_last_slot_is_taken() -> None:
    dragon = make("dragon", "foes", size=Size.GARGANTUAN)
    h = encounter(make("gob", "foes"), dragon, positions={"gob": "hall", "dragon": "hall"})
    assert refused(h, zone="hall", shape="cone", size=15, targets=["dragon", "gob"])[0] == (
        "too_many_targets"
    )


@pytest.mark.rule("arena.txt:37.3")
def test_unaffected_creatures_count_but_roll_nothing() -> None:
    h = encounter(
        make("bob"),
        make("gob", "foes"),
        make("orc", "foes"),
        positions={"bob": "hall", "gob": "hall", "orc": "hall"},
    )
    assert refused(
        h, zone="hall", shape="sphere", size=5, targets=["bob", "gob", "orc"], unaffected=["bob"]
    )[0] == ("too_many_targets")
    assert refused(h, zone="hall", shape="sphere", size=5, targets=["gob"], unaffected=["bob"])[
        0
    ] == ("invalid_params")
    h.rolls(3, 6)
    cast(
        h,
        zone="hall",
        shape="sphere",
        size=5,
        targets=["bob", "gob"],
        unaffected=["bob"],
        save="dex",
        damage="1d6",
        damage_type="fire",
    )
    assert list(saves(h)) == ["gob"]
    assert damage(h) == {"gob": 6}
    assert h.creature("bob").hp == 20


@pytest.mark.rule("arena.txt:37.1")
def test_the_caster_must_fill_the_slots_while_creatures_remain() -> None:
    h = encounter(
        make("gob", "foes"), make("orc", "foes"), positions={"gob": "hall", "orc": "hall"}
    )
    assert refused(h, zone="hall", shape="cone", size=30, targets=["gob"]) == (
        "too_few_targets",
        "Fireball (a 30-ft cone) has 2 target slots left and must fill them while "
        "creatures remain in its area: Orc is not chosen.",
    )
    # Aria herself is in the hall but never has to choose herself.
    cast(h, zone="hall", shape="cone", size=30, targets=["gob", "orc"])


def test_targets_must_be_in_the_fight() -> None:
    h = encounter(
        make("gob", "foes"), make("orc", "foes"), positions={"gob": "hall", "orc": "hall"}
    )
    h.send("grant_condition", creature="orc", condition="surrendered")
    assert refused(h, zone="hall", shape="cone", size=15, targets=["orc"]) == (
        "invalid_target",
        "Orc is already out of the fight.",
    )


# -- saves and damage -----------------------------------------------------------------------


def test_damage_is_rolled_once_and_halved_on_a_save() -> None:
    h = encounter(
        make("gob", "foes", hp=30),
        make("orc", "foes", hp=30, saves={"dex": 3}),
        positions={"gob": "hall", "orc": "hall"},
    )
    # Goblin rolls 14 (fails DC 15), orc 12 + 3 = 15 (succeeds); then 2d6 once: 6 + 5.
    h.rolls(14, 12, 6, 5)
    cast(
        h,
        zone="hall",
        shape="cone",
        size=30,
        targets=["gob", "orc"],
        save="dex",
        damage="2d6",
        damage_type="fire",
    )
    assert [(s.creature, s.roll.total, s.success) for s in saves(h).values()] == [
        ("gob", 14, False),
        ("orc", 15, True),
    ]
    assert damage(h) == {"gob": 11, "orc": 5}
    assert (h.creature("gob").hp, h.creature("orc").hp) == (19, 25)
    hurt = [e.roll for e in h.events if isinstance(e, Damaged)]
    assert {(r.expr, r.dice, r.total) for r in hurt if r} == {("2d6", (6, 5), 11)}  # one roll
    # ... recorded once: its dice's counters on the first target's event only.
    assert [len(r.draws) for r in hurt if r] == [2, 0]
    assert h.dice.remaining == ()
    h.assert_replay_matches()


def test_without_half_on_save_a_success_takes_nothing_and_a_failure_the_conditions() -> None:
    h = encounter(
        make("gob", "foes", hp=30),
        make("orc", "foes", hp=30),
        positions={"gob": "hall", "orc": "hall"},
    )
    h.rolls(2, 19, 4)
    cast(
        h,
        zone="hall",
        shape="cube",
        size=15,
        targets=["gob", "orc"],
        save="con",
        dc=12,
        damage="1d8",
        damage_type="thunder",
        half_on_save=False,
        conditions=["deafened"],
    )
    assert damage(h) == {"gob": 4}
    applied = [(e.creature, e.condition) for e in h.events if isinstance(e, ConditionApplied)]
    assert applied == [("gob", "deafened")]
    assert saves(h)["orc"].dc == 12


def test_nobody_hurt_means_no_damage_roll() -> None:
    h = encounter(make("gob", "foes"), positions={"gob": "hall"})
    h.rolls(20)  # only the save: a success without half damage needs no damage dice
    cast(
        h,
        zone="hall",
        shape="cube",
        size=10,
        targets=["gob"],
        save="wis",
        damage="4d6",
        damage_type="psychic",
        half_on_save=False,
    )
    assert damage(h) == {}
    assert h.dice.remaining == ()


def test_bad_parameters_are_refused_with_what_is_expected() -> None:
    h = encounter(make("gob", "foes"), positions={"gob": "hall"})
    base = {"zone": "hall", "shape": "cube", "size": 10, "targets": ["gob"]}
    assert refused(h, **{**base, "shape": "blob"}) == (
        "invalid_params",
        "The shape must be cone, cube, sphere, cylinder or line, not 'blob'.",
    )
    assert refused(h, **{**base, "damage": "2d6"})[0] == "invalid_params"  # no damage_type
    assert refused(h, **{**base, "save": "luck"})[0] == "invalid_params"
    assert refused(h, **{**base, "width": 10})[0] == "invalid_params"  # only lines
    assert refused(h, **{**base, "dc": 12})[0] == "invalid_params"  # a DC without a save


# -- ongoing effects ------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:40.2")
def test_an_ongoing_area_becomes_an_element_its_targets_are_in() -> None:
    h = encounter(make("gob", "foes"), make("orc", "foes"), positions={"gob": "hall", "orc": "bar"})
    cast(
        h,
        name="Cloud of Fog",
        zone="hall",
        shape="sphere",
        size=20,
        targets=["gob", "orc"],
        ongoing=True,
    )
    created = [e.asset for e in h.events if isinstance(e, EffectCreated)]
    assert [(a.id, a.zone, a.kind) for a in created] == [
        ("cloud-of-fog-1", "hall", "element"),
        ("cloud-of-fog-1@bar", "bar", "element"),
        ("cloud-of-fog-1@cellar", "cellar", "element"),
    ]
    assert set(h.state.effects) == {"cloud-of-fog-1", "cloud-of-fog-1@bar", "cloud-of-fog-1@cellar"}
    assert h.creature("gob").elements == ["cloud-of-fog-1"]
    assert h.creature("orc").elements == ["cloud-of-fog-1@bar"]
    assert h.creature("aria").elements == []  # not a target
    taken = [(e.creature, e.asset) for e in h.events if isinstance(e, PositionTaken)]
    assert taken == [("gob", "cloud-of-fog-1"), ("orc", "cloud-of-fog-1@bar")]
    h.assert_replay_matches()

    h.send("end_effect", asset="cloud-of-fog-1")
    ended = [e.asset for e in h.events if isinstance(e, EffectEnded)]
    assert ended == ["cloud-of-fog-1", "cloud-of-fog-1@bar", "cloud-of-fog-1@cellar"]
    assert h.state.effects == {}
    assert h.creature("gob").elements == [] and h.creature("orc").elements == []
    assert h.refused("end_effect", asset="cloud-of-fog-1").code == "unknown_effect"
    h.assert_replay_matches()


def test_a_second_effect_of_the_same_name_gets_the_next_id_and_players_cannot_end_it() -> None:
    h = encounter(make("gob", "foes"), positions={"gob": "hall"})
    cast(h, name="Fog", zone="hall", shape="cube", size=10, targets=["gob"], ongoing=True)
    h.end_turn()  # the goblin's turn
    h.end_turn()  # Aria again, with a fresh action
    cast(h, name="Fog", zone="hall", shape="cube", size=10, targets=["gob"], ongoing=True)
    assert sorted(h.state.effects) == ["fog-1", "fog-2"]
    assert h.creature("gob").elements == ["fog-1", "fog-2"]
    player = EncounterHarness.player("player-aria")
    assert h.refused("end_effect", player, asset="fog-1").code == "gm_only"
    h.send("end_effect", asset="fog-2")
    assert h.creature("gob").elements == ["fog-1"]
