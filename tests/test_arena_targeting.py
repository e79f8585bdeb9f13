"""Targeting between zones (docs/rules.md, A9).

Range to another zone is the sum of the sizes of every zone on the shortest path
with line of sight, except the starting zone; inside one's own zone everything is
in range and in sight.
"""

from __future__ import annotations

import pytest
from helpers import make

from zonekeep.plugins.targeting import long_range_disadvantage, range_refusal
from zonekeep.sdk import Arena, EncounterState, Link, Zone, line_of_sight, path_distance, sight_path
from zonekeep.sdk.testing import EncounterHarness


def inn() -> Arena:
    """A Large hall beside a Small bar, the bar beside a Medium yard.

    The hall also looks onto the yard through a window (no clear path: the link
    carries sight but not movement), and a trapdoor leads down to a cellar that
    cannot be seen from the hall.
    """
    return Arena(
        "inn",
        "Inn",
        (
            Zone("hall", "Hall", 60),
            Zone("bar", "Bar", 15),
            Zone("yard", "Yard", 30),
            Zone("cellar", "Cellar", 30),
            Zone("attic", "Attic", 15),
        ),
        (
            Link("hall", "bar", "beside"),
            Link("bar", "yard", "beside"),
            Link("hall", "cellar", "below", blocks_sight=True),
            Link("cellar", "attic", "below", clear=False),
        ),
    )


@pytest.mark.rule("arena.txt:26.1")
def test_own_zone_is_zero_feet_away() -> None:
    assert path_distance(inn(), "hall", "hall") == 0
    assert sight_path(inn(), "hall", "hall") == ()
    assert line_of_sight(inn(), "cellar", "cellar")


@pytest.mark.rule("arena.txt:27.2")
def test_an_adjacent_small_zone_needs_fifteen_feet() -> None:
    assert path_distance(inn(), "hall", "bar") == 15
    assert sight_path(inn(), "hall", "bar") == ("bar",)


@pytest.mark.rule("arena.txt:27.1")
def test_a_path_through_two_zones_sums_both_but_not_the_start() -> None:
    # Hall (60, the start, not counted) -> Bar 15 -> Yard 30.
    assert path_distance(inn(), "hall", "yard") == 45
    assert sight_path(inn(), "hall", "yard") == ("bar", "yard")
    # The other way round the hall is the far zone and counts: 15 + 60.
    assert path_distance(inn(), "yard", "hall") == 75


@pytest.mark.rule("arena.txt:27.1")
def test_the_shortest_path_is_by_feet_not_by_zones() -> None:
    zones = (
        Zone("a", "A", 30),
        Zone("big", "Big", 60),
        Zone("s1", "S1", 15),
        Zone("s2", "S2", 15),
        Zone("d", "D", 30),
    )
    links = (
        Link("a", "big", "beside"),
        Link("big", "d", "beside"),
        Link("a", "s1", "beside"),
        Link("s1", "s2", "beside"),
        Link("s2", "d", "beside"),
    )
    arena = Arena("x", "X", zones, links)
    assert sight_path(arena, "a", "d") == ("s1", "s2", "d")
    assert path_distance(arena, "a", "d") == 60  # not 90 through the big zone


@pytest.mark.rule("arena.txt:27.1")
def test_a_link_that_blocks_sight_forces_the_longer_way() -> None:
    zones = (Zone("a", "A", 30), Zone("b", "B", 30), Zone("c", "C", 15))
    direct = Link("a", "b", "beside", blocks_sight=True)
    around = (Link("a", "c", "beside"), Link("c", "b", "beside"))
    arena = Arena("x", "X", zones, (direct, *around))
    assert path_distance(arena, "a", "b") == 45  # C 15 + B 30, not B 30 directly
    assert sight_path(arena, "a", "b") == ("c", "b")
    # Without the way around there is no line of sight at all.
    walled = Arena("y", "Y", zones[:2], (direct,))
    assert path_distance(walled, "a", "b") is None
    assert not line_of_sight(walled, "a", "b")
    assert not line_of_sight(walled, "b", "a")


def test_a_second_link_that_does_not_block_sight_keeps_it() -> None:
    zones = (Zone("a", "A", 30), Zone("b", "B", 30))
    links = (Link("a", "b", "beside", blocks_sight=True), Link("a", "b", "beside", clear=False))
    assert path_distance(Arena("x", "X", zones, links), "a", "b") == 30


def test_a_link_without_a_clear_path_still_carries_sight_and_range() -> None:
    assert path_distance(inn(), "cellar", "attic") == 15
    assert line_of_sight(inn(), "attic", "cellar")


def test_sight_does_not_pass_through_a_blocking_link_even_further_on() -> None:
    # The attic is only reachable through the cellar, which the hall cannot see.
    assert path_distance(inn(), "hall", "cellar") is None
    assert path_distance(inn(), "hall", "attic") is None
    assert path_distance(inn(), "bar", "attic") is None


def test_unknown_zones_raise_key_error() -> None:
    with pytest.raises(KeyError):
        path_distance(inn(), "hall", "roof")
    with pytest.raises(KeyError):
        line_of_sight(inn(), "roof", "hall")


# -- creatures: range_refusal and long range ----------------------------------------------


def placed(**zones: str) -> EncounterState:
    """Aria and a goblin placed in the inn (Aria first in initiative)."""
    h = EncounterHarness([make("aria"), make("gob", "foes")], arena=inn())
    h.start(positions=zones, initiative=[15, 10])
    return h.state


@pytest.mark.rule("arena.txt:26.1")
def test_same_zone_is_always_in_range_and_in_sight() -> None:
    state = placed(aria="hall", gob="hall")
    assert range_refusal(state, "aria", "gob", 5, melee=True) is None
    assert range_refusal(state, "aria", "gob", 0, melee=False) is None


def test_melee_needs_the_same_zone_unless_the_reach_covers_the_distance() -> None:
    state = placed(aria="hall", gob="bar")
    assert range_refusal(state, "aria", "gob", 5, melee=True, what="the blade") == (
        "out_of_range",
        "Gob is 15 ft from Aria (Bar 15 ft); the blade reaches 5 ft, so a melee attack "
        "needs Gob in Aria's zone or a reach of 15 ft.",
    )
    assert range_refusal(state, "aria", "gob", 15, melee=True) is None
    assert range_refusal(state, "aria", "gob", 14, melee=True) is not None


@pytest.mark.rule("arena.txt:27.1")
def test_ranged_attack_sentence_names_the_creatures_the_feet_and_the_path() -> None:
    state = placed(aria="hall", gob="yard")
    refusal = range_refusal(state, "aria", "gob", 30, melee=False, what="the shortbow")
    assert refusal == (
        "out_of_range",
        "Gob is 45 ft from Aria (Bar 15 ft + Yard 30 ft); the shortbow reaches only 30 ft.",
    )
    assert range_refusal(state, "aria", "gob", 45, melee=False) is None


def test_long_range_allows_the_attack_with_disadvantage() -> None:
    state = placed(aria="hall", gob="yard")
    assert range_refusal(state, "aria", "gob", 30, 120, melee=False) is None
    assert long_range_disadvantage(state, "aria", "gob", 30, 120)
    assert not long_range_disadvantage(state, "aria", "gob", 45, 120)  # normal range
    assert not long_range_disadvantage(state, "aria", "gob", 30, 40)  # beyond long range
    assert range_refusal(state, "aria", "gob", 30, 40, melee=False, what="the sling") == (
        "out_of_range",
        "Gob is 45 ft from Aria (Bar 15 ft + Yard 30 ft); "
        "the sling reaches 30 ft, or 40 ft at long range.",
    )


@pytest.mark.rule("arena.txt:27.1")
def test_no_line_of_sight_is_refused_whatever_the_range() -> None:
    state = placed(aria="hall", gob="cellar")
    assert range_refusal(state, "aria", "gob", 600, 1000, melee=False) == (
        "no_line_of_sight",
        "Aria has no line of sight to Gob in Cellar: every way there crosses something "
        "that blocks sight.",
    )
    assert not long_range_disadvantage(state, "aria", "gob", 30, 600)
