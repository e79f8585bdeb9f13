"""Lifecycle hooks (a condition applied, removed or expired; after an attack; the
observer of every event) and the timed-condition helper, with exact outcomes.

Aria (a PC, blade +4, 1d6+2) and a goblin (20 hp, AC 12) share one zone; Aria acts
first (initiative 15, 10).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make

from zonekeep.plugins import load_default_plugins
from zonekeep.sdk import (
    ActionTaken,
    Attack,
    AttackMade,
    CommandSpec,
    ConditionEffectApplied,
    ConditionEffectEnded,
    ConditionPrevented,
    Creature,
    Damaged,
    Event,
    Note,
    NoteAdded,
    ObserverContext,
    Param,
    PluginDisabled,
    PluginErrorRecorded,
    PluginOverran,
    RuleContext,
    apply_timed_condition,
    hookimpl,
)
from zonekeep.sdk.engine import IN_PROCESS, LoadedPlugin
from zonekeep.sdk.testing import EncounterHarness


class Recorder:
    """Records every lifecycle call it gets."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    @hookimpl
    def zonekeep_condition_applied(
        self, ctx: RuleContext, creature: Creature, condition: str
    ) -> None:
        self.calls.append(("applied", creature.id, condition))

    @hookimpl
    def zonekeep_condition_removed(
        self, ctx: RuleContext, creature: Creature, condition: str, reason: str, expired: bool
    ) -> None:
        assert condition not in creature.conditions
        self.calls.append(("removed", creature.id, condition, reason, expired))

    @hookimpl
    def zonekeep_attack_made(
        self,
        ctx: RuleContext,
        attacker: Creature,
        target: Creature,
        attack: Attack,
        result: AttackMade,
        damage: Damaged | None,
    ) -> None:
        self.calls.append(
            ("attack", attacker.id, target.id, result.roll.natural, result.hit, target.hp, damage)
        )


def fight(*extra: object, **gob: Any) -> EncounterHarness:
    h = EncounterHarness([make("aria"), make("gob", "foes", **gob)], extra_plugins=list(extra))
    h.start(initiative=[15, 10])
    return h


def test_applied_and_removed_by_hand_are_not_expired() -> None:
    rec = Recorder()
    h = fight(rec)
    h.send("grant_condition", creature="gob", condition="prone")
    h.send("grant_condition", creature="gob", condition="hexed")
    h.send("remove_condition", creature="gob", condition="hexed")
    assert rec.calls == [
        ("applied", "gob", "prone"),
        ("applied", "gob", "hexed"),
        ("removed", "gob", "hexed", "GM override by gm", False),
    ]


def test_a_timed_condition_running_out_is_expired_and_ending_it_early_is_not() -> None:
    rec = Recorder()
    h = fight(rec)
    h.send("apply_effect", creature="gob", condition="hexed", rounds=1)
    (early,) = h.send("apply_effect", creature="aria", condition="blessed", rounds=5)
    assert isinstance(early, ConditionEffectApplied)
    h.send("end_effect_of", effect=early.effect.id)
    h.end_turn()
    last = h.end_turn()  # round 1 ends: the goblin's hex runs out
    (ended,) = [e for e in last if isinstance(e, ConditionEffectEnded)]
    assert ended.expired is True
    assert rec.calls == [
        ("applied", "gob", "hexed"),
        ("applied", "aria", "blessed"),
        ("removed", "aria", "blessed", "ended by the GM (gm)", False),
        ("removed", "gob", "hexed", "its rounds ran out at the end of round 1", True),
    ]
    h.assert_replay_matches()


def test_a_condition_held_twice_is_removed_once_when_the_last_source_goes() -> None:
    rec = Recorder()
    h = fight(rec)
    h.send("grant_condition", creature="gob", condition="hexed")
    (applied,) = h.send("apply_effect", creature="gob", condition="hexed", rounds=3)
    assert isinstance(applied, ConditionEffectApplied)
    h.send("end_effect_of", effect=applied.effect.id)  # still held plainly
    assert "hexed" in h.creature("gob").conditions
    assert rec.calls == [("applied", "gob", "hexed")]


def test_after_an_attack_hit_or_miss_with_its_rolls() -> None:
    rec = Recorder()
    h = fight(rec)
    h.rolls(15, 4)  # a hit: 1d6+2 = 6
    h.send("attack", creature="aria", target="gob")
    h.end_turn()
    h.rolls(2)  # the goblin misses
    h.send("attack", creature="gob", target="aria")
    (hit, miss) = [c for c in rec.calls if c[0] == "attack"]
    assert hit[:6] == ("attack", "aria", "gob", 15, True, 14)
    assert isinstance(hit[6], Damaged) and (hit[6].amount, hit[6].raw) == (6, 6)
    assert miss == ("attack", "gob", "aria", 2, False, 20, None)


class Watcher:
    """An observer: counts the events it sees; tries to emit when told."""

    def __init__(self, *, greedy: bool = False) -> None:
        self.seen: list[str] = []
        self.greedy = greedy

    @hookimpl
    def zonekeep_event_applied(self, ctx: ObserverContext, event: Event) -> None:
        self.seen.append(event.type)
        if self.greedy and event.type == "damaged":
            ctx.emit(NoteAdded(Note("n9", "I saw that.")))


def test_the_observer_sees_every_event_of_a_command_in_order() -> None:
    watcher = Watcher()
    h = fight(watcher)
    watcher.seen.clear()
    h.rolls(15, 4)
    events = h.send("attack", creature="aria", target="gob")
    assert watcher.seen == [e.type for e in events]
    assert "damaged" in watcher.seen


def test_an_observer_cannot_emit_nor_roll_and_its_failure_changes_nothing() -> None:
    greedy = Watcher(greedy=True)
    h = fight(greedy)
    control = fight()
    h.rolls(15, 4)
    control.rolls(15, 4)
    events = h.send("attack", creature="aria", target="gob")
    expected = control.send("attack", creature="aria", target="gob")
    errors = [e for e in events if isinstance(e, PluginErrorRecorded)]
    assert len(errors) == 1 and errors[0].hook == "zonekeep_event_applied"
    assert "ReadOnlyContext" in errors[0].error
    assert [e for e in events if not isinstance(e, PluginErrorRecorded)] == list(expected)
    assert not hasattr(ObserverContext, "roll") and not hasattr(ObserverContext, "refuse")
    assert h.creature("gob").hp == control.creature("gob").hp == 14


# -- the timed-condition helper --------------------------------------------------------------------


def _scorch(ctx: RuleContext, cmd: Any) -> None:
    target = ctx.creature(cmd.params["target"])
    apply_timed_condition(
        ctx,
        target.id,
        "burning",
        rounds=3,
        save="dex",
        dc=10,
        save_when="end",
        source=cmd.params["creature"],
    )


class Scorch:
    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        return (
            CommandSpec(
                "scorch",
                _scorch,
                "Action: set a creature burning.",
                {
                    "creature": Param("creature", True, "who"),
                    "target": Param("creature", True, "whom"),
                },
                costs=("action",),
            ),
        )


def test_one_call_gives_a_condition_for_rounds_or_until_a_save() -> None:
    rec = Recorder()
    h = fight(Scorch, rec)
    events = h.send("scorch", creature="aria", target="gob")
    (applied,) = [e for e in events if isinstance(e, ConditionEffectApplied)]
    effect = applied.effect
    assert (effect.creature, effect.condition, effect.rounds) == ("gob", "burning", 3)
    assert (effect.save, effect.save_dc, effect.save_when, effect.source) == (
        "dex",
        10,
        "end",
        "aria",
    )
    h.end_turn()
    h.rolls(12)  # the goblin's Dex save at the end of its turn: 12 >= 10
    h.end_turn()
    assert "burning" not in h.creature("gob").conditions
    assert rec.calls[-1] == ("removed", "gob", "burning", "Gob made its dex save", True)
    h.assert_replay_matches()


def test_the_helper_refuses_nonsense_and_spares_the_immune() -> None:
    h = fight(Scorch, condition_immunities=["burning"])
    events = h.send("scorch", creature="aria", target="gob")
    assert events[-1] == ConditionPrevented("gob", "burning", "aria")
    assert h.state.condition_effects == {}
    ctx = h.engine.context(h.state.copy())
    ctx.read_only = False
    for bad in (
        {"rounds": 0},
        {"save": "dex"},
        {"dc": 10},
        {"of": "aria"},
        {"save": "luck", "dc": 3},
    ):
        with pytest.raises(ValueError):
            apply_timed_condition(ctx, "aria", "hexed", **bad)
    with pytest.raises(ValueError, match="no creature"):
        apply_timed_condition(ctx, "nobody", "hexed", rounds=1)


def test_until_a_named_creatures_turn_end() -> None:
    class Glare:
        @staticmethod
        @hookimpl
        def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
            if creature.id == "aria" and ctx.state.round == 1:
                apply_timed_condition(ctx, "gob", "hexed", until="end", of="aria", source="aria")

    h = EncounterHarness([make("aria"), make("gob", "foes")], extra_plugins=[Glare])
    h.start(initiative=[15, 10])
    assert "hexed" in h.creature("gob").conditions
    h.end_turn()  # applied during Aria's turn: it waits for her next one
    h.end_turn()
    assert "hexed" in h.creature("gob").conditions
    last = h.end_turn()  # Aria's next turn ends
    assert [e.reason for e in last if isinstance(e, ConditionEffectEnded)] == [
        "the end of Aria's turn"
    ]
    assert "hexed" not in h.creature("gob").conditions


def test_an_observer_over_the_time_budget_is_reported_and_switched_off() -> None:
    watcher = Watcher()
    h = EncounterHarness(
        [make("aria"), make("gob", "foes")],
        plugins=[*load_default_plugins(), LoadedPlugin("watcher", "1", IN_PROCESS, watcher)],
    )
    h.start(initiative=[15, 10])
    h.engine.set_hook_budget(0.0, 1)  # every call is over a zero budget
    watcher.seen.clear()
    events = h.send("dodge", creature="aria")
    # Every event of the command is observed over budget; the host reports the overruns
    # right after it, and at the limit of 1 the observer is switched off for the rest of
    # the encounter: it sees every event until then (the report's own are not timed).
    kinds = [type(e) for e in events]
    command = kinds.index(PluginOverran)
    assert kinds[0] is ActionTaken and command >= 2
    assert kinds[command:] == [PluginOverran] * command + [PluginDisabled]
    overran = events[command]
    assert isinstance(overran, PluginOverran)
    assert (overran.plugin, overran.hook) == ("watcher", "zonekeep_event_applied")
    assert watcher.seen == [e.type for e in events[:-1]]
    assert h.state.disabled_plugins == ["watcher"]
    seen = len(watcher.seen)
    h.send("end_turn", creature="aria")
    assert len(watcher.seen) == seen  # switched off: not called any more
