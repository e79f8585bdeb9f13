"""Metamagic meets Counterspell (issue 31 follow-up): a sorcerer's Quickened or
Twinned spell waits for a foe's Counterspell prompt; stopped, nothing of it resolves;
let through, it resolves whole (both twinned targets). The sorcery points are spent
once, when the spell is cast, either way (plugins/spells/__init__.py ``carry_out``,
``_metamagic.retwist``, ``_control.decision_resolved``)."""

from __future__ import annotations

from typing import Any

from test_classes_casters import cast, fight, goblin, points, sorcerer
from test_spells_control import foe

from zonekeep.sdk import AttackMade, Damaged, ResourceSpent, SaveMade
from zonekeep.sdk.testing import EncounterHarness

TWIN = {"option": "twinned"}
QUICK = {"option": "quickened"}


def _point_spends(events: tuple[Any, ...]) -> list[int]:
    return [
        e.left
        for e in events
        if isinstance(e, ResourceSpent) and e.creature == "ysolde" and e.resource == "font-of-magic"
    ]


def _twinned(h: EncounterHarness) -> tuple[Any, ...]:
    events = cast(h, "ysolde", spell="hold-person", targets=["gob", "orc"], metamagic=TWIN)
    assert h.decision("counterspell").creature == "vex"
    assert not [e for e in events if isinstance(e, SaveMade)]  # it waits for the answer
    return events


def _setup() -> EncounterHarness:
    return fight(
        sorcerer("quickened", "twinned"),
        foe(),
        goblin(),
        goblin("orc"),
        at={"gob": "bar", "orc": "bar"},
    )


def test_a_twinned_spell_let_through_resolves_on_both_targets_and_pays_once() -> None:
    h = _setup()
    cast_events = _twinned(h)
    assert _point_spends(cast_events) == [3] and points(h) == 3  # 2 points: level 2
    events = h.rolls(3, 18).decide("decline", h.player("player-vex"))
    saves = [(s.creature, s.success) for s in events if isinstance(s, SaveMade)]
    assert saves == [("gob", False), ("orc", True)]
    assert "paralyzed" in h.creature("gob").conditions
    assert "paralyzed" not in h.creature("orc").conditions
    assert _point_spends(events) == [] and points(h) == 3
    assert h.creature("ysolde").resources["spell-slots-2"] == 2
    h.assert_replay_matches()


def test_a_countered_twinned_spell_resolves_on_neither_and_its_points_stay_spent() -> None:
    h = _setup()
    _twinned(h)
    events = h.decide("level-3", h.player("player-vex"))
    assert not [e for e in events if isinstance(e, SaveMade)]
    assert all("paralyzed" not in h.creature(c).conditions for c in ("gob", "orc"))
    assert _point_spends(events) == [] and points(h) == 3
    assert h.creature("ysolde").resources["spell-slots-2"] == 2
    assert h.creature("vex").resources["spell-slots-3"] == 1
    h.assert_replay_matches()


def test_a_quickened_spell_let_through_hits_and_pays_once_with_the_bonus_action() -> None:
    h = _setup()
    events = cast(h, "ysolde", "cast_bonus", spell="fire-bolt", target="gob", metamagic=QUICK)
    assert h.decision("counterspell").creature == "vex"
    assert _point_spends(events) == [3]
    # Fire bolt at level 5: 2d10. 15 + 6 hits AC 13; 6 + 4 = 10 fire.
    events = h.rolls(15, 6, 4).decide("decline", h.player("player-vex"))
    assert [e.amount for e in events if isinstance(e, Damaged)] == [10]
    assert _point_spends(events) == [] and points(h) == 3
    assert h.state.resources.bonus_actions == 0 and h.state.resources.actions == 1
    h.assert_replay_matches()


def test_a_countered_quickened_spell_does_nothing_and_spends_the_bonus_action() -> None:
    h = _setup()
    cast(h, "ysolde", "cast_bonus", spell="fire-bolt", target="gob", metamagic=QUICK)
    events = h.decide("level-3", h.player("player-vex"))
    assert not [e for e in events if isinstance(e, (AttackMade, Damaged))]
    assert h.creature("gob").hp == 40 and points(h) == 3
    assert h.state.resources.bonus_actions == 0 and h.state.resources.actions == 1
    h.assert_replay_matches()
