"""Plugin hardening in the engine (issue 14, points 14 to 16; the socket tests are in
tests/e2e/test_hardening_plugins.py): which exceptions from plugin code are contained,
a read-only context refusing to emit, and the time budget with its events."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import pytest
from helpers import make

from zonekeep.plugins import load_default_plugins
from zonekeep.sdk import (
    OPEN_PHASES,
    SYSTEM_ACTOR,
    Command,
    CommandSpec,
    Creature,
    Moved,
    MoveRequest,
    Note,
    NoteAdded,
    PluginDisabled,
    PluginOverran,
    ReadOnlyContext,
    RuleContext,
    ScriptedEntropy,
    hookimpl,
)
from zonekeep.sdk._isolation import is_plugin_failure
from zonekeep.sdk._loading import IN_PROCESS, LoadedPlugin
from zonekeep.sdk._state import replay
from zonekeep.sdk.engine import REPORT_OVERRUNS, Budget, PluginFailure
from zonekeep.sdk.host import state_to_dict
from zonekeep.sdk.testing import EncounterHarness

#: What trio's Cancelled looks like to the sdk (which does not import trio).
FakeCancelled = type("Cancelled", (BaseException,), {"__module__": "trio._core._run"})


@pytest.mark.parametrize(
    ("error", "contained"),
    [
        (ValueError("x"), True),
        (SystemExit(3), True),
        (type("PluginSignal", (BaseException,), {})(), True),
        (BaseExceptionGroup("g", [SystemExit(1), ValueError("v")]), True),
        (ExceptionGroup("g", [ValueError("v")]), True),
        (KeyboardInterrupt(), False),
        (GeneratorExit(), False),
        (FakeCancelled(), False),
        (BaseExceptionGroup("g", [SystemExit(1), KeyboardInterrupt()]), False),
        (BaseExceptionGroup("g", [ValueError("v"), FakeCancelled()]), False),
    ],
)
def test_which_exceptions_from_plugin_code_are_its_failure(
    error: BaseException, contained: bool
) -> None:
    assert is_plugin_failure(error) is contained


class Exits:
    """``leave`` (GM) raises what its ``how`` parameter names."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        from zonekeep.sdk import Param

        def leave(ctx: RuleContext, cmd: Any) -> None:
            raise {"exit": SystemExit(2), "ctrl-c": KeyboardInterrupt()}[cmd.params["how"]]

        return (
            CommandSpec(
                "leave",
                leave,
                "GM: leave.",
                {"how": Param("string", True, "exit or ctrl-c")},
                who="gm",
                phases=OPEN_PHASES,
            ),
        )


def test_system_exit_in_a_handler_refuses_the_command_and_ctrl_c_goes_through() -> None:
    h = EncounterHarness(
        [make("aria")], extra_plugins=[LoadedPlugin("exits", "1", IN_PROCESS, Exits)]
    )
    before = h.state.copy()
    with pytest.raises(PluginFailure) as info:
        h.send("leave", how="exit")
    assert (info.value.plugin, info.value.hook) == ("exits", "zonekeep_commands")
    assert isinstance(info.value.error, SystemExit)
    with pytest.raises(KeyboardInterrupt):
        h.send("leave", how="ctrl-c")
    assert h.state == before


def test_a_read_only_context_refuses_to_emit_and_changes_nothing() -> None:
    h = EncounterHarness([make("aria")])
    before = h.state.copy()
    ctx = h.engine.context(h.state)
    with pytest.raises(ReadOnlyContext, match="NoteAdded"):
        ctx.emit(NoteAdded(Note("n", "text")))
    assert ctx.events == []
    assert h.state == before


class Sluggish:
    """Its movement surcharge hook blocks for 30 ms and adds nothing; ``calls`` counts
    how often it ran."""

    calls = 0

    @staticmethod
    @hookimpl
    def zonekeep_movement_surcharges(
        ctx: RuleContext, creature: Creature, move: MoveRequest
    ) -> Iterable[str] | None:
        Sluggish.calls += 1
        time.sleep(0.03)
        return None


def sluggish() -> EncounterHarness:
    h = EncounterHarness(
        [make("aria")],
        plugins=[*load_default_plugins(), LoadedPlugin("sluggish", "1", IN_PROCESS, Sluggish)],
    )
    h.engine.set_hook_budget(0.01, 2)
    h.start(initiative=[10])
    return h


def test_a_hook_over_budget_is_reported_then_its_plugin_is_switched_off() -> None:
    h = sluggish()
    first = h.send("move", creature="aria", feet=5)
    # The host (here the harness, as the server) reports the overrun after the move.
    moved, overran = first
    assert moved == Moved("aria", 5, "walk", 5)
    assert isinstance(overran, PluginOverran)
    assert (overran.plugin, overran.hook, overran.budget_ms) == (
        "sluggish",
        "zonekeep_movement_surcharges",
        10,
    )
    assert overran.ms >= 30
    second = h.send("move", creature="aria", feet=5)
    assert [type(e) for e in second] == [Moved, PluginOverran, PluginDisabled]
    assert second[2] == PluginDisabled(
        "sluggish",
        "Plugin 'sluggish' took longer than 10 ms 2 times; it is switched off for the rest "
        "of this encounter.",
    )
    assert h.state.disabled_plugins == ["sluggish"]
    # Off: its hook is not called any more (no sleep, no event).
    calls = Sluggish.calls
    assert h.send("move", creature="aria", feet=5) == (Moved("aria", 5, "walk", 5),)
    assert Sluggish.calls == calls
    # The log keeps it off.
    replayed = replay(h.events)
    assert replayed.disabled_plugins == ["sluggish"]
    assert replayed.plugin_overruns == {"sluggish": 2}


def test_the_engine_decides_alike_however_long_plugins_take() -> None:
    """``Engine.handle`` depends on the state, the command and the dice only: a plugin
    over the budget changes nothing in the outcome; the host reports it apart."""
    h = sluggish()
    move = Command("move", {"creature": "aria", "feet": 5}, h.gm)
    timed = h.engine.handle(h.state, move, ScriptedEntropy())
    h.engine.set_hook_budget(None, 2)
    untimed = h.engine.handle(h.state, move, ScriptedEntropy())
    assert timed.events == untimed.events == (Moved("aria", 5, "walk", 5),)
    assert state_to_dict(timed.state) == state_to_dict(untimed.state)


def test_only_the_host_reports_overruns() -> None:
    """The report is the system actor's: a GM or a player sending it (or anything like
    it) gets ``unknown_command`` and nothing changes; a malformed one is refused."""
    h = sluggish()
    report = {"overruns": [{"plugin": "sluggish", "hook": "h", "ms": 99, "budget_ms": 10}]}
    for actor in (h.gm, h.player("alice")):
        refusal = h.refused(REPORT_OVERRUNS, actor, **report)
        assert refusal.code == "unknown_command"
    for bad in (
        {"overruns": "all of them"},
        {"overruns": [{"plugin": "sluggish", "hook": "h", "ms": "99", "budget_ms": 10}]},
        {"overruns": [["sluggish", "h", 99, 10]]},
        {"overruns": [], "disable": [3]},
    ):
        refusal = h.refused(REPORT_OVERRUNS, SYSTEM_ACTOR, **bad)
        assert refusal.code == "invalid_params"
    events = h.send(REPORT_OVERRUNS, SYSTEM_ACTOR, **report, disable=["sluggish"])
    assert events == (
        PluginOverran("sluggish", "h", 99, 10),
        PluginDisabled(
            "sluggish",
            "Plugin 'sluggish' took longer than 10 ms 1 times; it is switched off for the "
            "rest of this encounter.",
        ),
    )
    # Already off: reported again, it is not switched off twice.
    assert h.send(REPORT_OVERRUNS, SYSTEM_ACTOR, **report, disable=["sluggish"]) == (
        PluginOverran("sluggish", "h", 99, 10),
    )


def test_the_host_decides_who_is_switched_off() -> None:
    """``Budget.report``: exempt plugins are left out, and a plugin is switched off once
    its overruns in the encounter reach the limit, once."""
    h = sluggish()
    budget = Budget(seconds=0.01, limit=3, exempt=frozenset({"rules"}))
    assert budget.report(h.state, [("rules", "h", 1.0)]) is None
    assert budget.report(h.state, []) is None
    h.state.plugin_overruns["slow"] = 1
    report = budget.report(
        h.state, [("slow", "a", 0.0204), ("rules", "b", 1.0), ("slow", "c", 0.5)]
    )
    assert report is not None and report.actor == SYSTEM_ACTOR
    assert report.type == REPORT_OVERRUNS
    assert report.params == {
        "overruns": [
            {"plugin": "slow", "hook": "a", "ms": 20, "budget_ms": 10},
            {"plugin": "slow", "hook": "c", "ms": 500, "budget_ms": 10},
        ],
        "disable": ["slow"],
    }
    h.state.disabled_plugins.append("slow")
    again = budget.report(h.state, [("slow", "a", 0.5)])
    assert again is not None and again.params["disable"] == []
    assert Budget(seconds=None).report(h.state, [("slow", "a", 0.5)]) is None
    never = Budget(seconds=0.01, limit=0).report(h.state, [("x", "a", 0.5)] * 9)
    assert never is not None and never.params["disable"] == []  # a limit of 0: never off


def test_without_a_budget_nothing_is_timed_against_anything() -> None:
    h = sluggish()
    h.engine.set_hook_budget(None, 2)
    assert h.send("move", creature="aria", feet=5) == (Moved("aria", 5, "walk", 5),)


def test_a_built_in_plugin_over_budget_is_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    h = EncounterHarness([make("aria")])
    h.engine.set_hook_budget(0.0, 1)  # every call is over a zero budget
    h.start(initiative=[10])
    events = h.send("move", creature="aria", feet=5)
    assert events == (Moved("aria", 5, "walk", 5),)
    assert h.state.disabled_plugins == []
    assert "plugins must not block" in caplog.text


class Hesitant:
    """Its refusal hook (run by the checks, on a read-only context) blocks for 30 ms."""

    @staticmethod
    @hookimpl
    def zonekeep_action_refusal(ctx: RuleContext) -> None:
        time.sleep(0.03)


def test_an_overrun_in_the_checks_is_reported_in_the_command_it_checked() -> None:
    h = EncounterHarness(
        [make("aria")],
        plugins=[*load_default_plugins(), LoadedPlugin("hesitant", "1", IN_PROCESS, Hesitant)],
    )
    h.engine.set_hook_budget(0.01, 1)
    h.start(initiative=[10])
    # A question the harness does not watch (the server does, for ``actions``): logged only.
    assert "move" in h.engine.available_actions(h.state, "aria", h.gm)
    assert h.state.plugin_overruns == {}
    events = h.send("move", creature="aria", feet=5)
    assert [type(e) for e in events] == [Moved, PluginOverran, PluginDisabled]
    overran = events[1]
    assert isinstance(overran, PluginOverran)
    assert (overran.plugin, overran.hook) == ("hesitant", "zonekeep_action_refusal")
    assert h.send("move", creature="aria", feet=5) == (Moved("aria", 5, "walk", 5),)
