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
    hookimpl,
)
from zonekeep.sdk._isolation import is_plugin_failure
from zonekeep.sdk._loading import IN_PROCESS, LoadedPlugin
from zonekeep.sdk._state import replay
from zonekeep.sdk.engine import PluginFailure
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
    # The hook runs while the move is priced, so its overrun comes first.
    overran, moved = first
    assert moved == Moved("aria", 5, "walk", 5)
    assert isinstance(overran, PluginOverran)
    assert (overran.plugin, overran.hook, overran.budget_ms) == (
        "sluggish",
        "zonekeep_movement_surcharges",
        10,
    )
    assert overran.ms >= 30
    second = h.send("move", creature="aria", feet=5)
    assert [type(e) for e in second] == [PluginOverran, PluginDisabled, Moved]
    assert second[1] == PluginDisabled(
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
    # A question (the actions a creature has) cannot record it: logged only.
    assert "move" in h.engine.available_actions(h.state, "aria", h.gm)
    assert h.state.plugin_overruns == {}
    events = h.send("move", creature="aria", feet=5)
    assert [type(e) for e in events] == [PluginOverran, PluginDisabled, Moved]
    overran = events[0]
    assert isinstance(overran, PluginOverran)
    assert (overran.plugin, overran.hook) == ("hesitant", "zonekeep_action_refusal")
    assert h.send("move", creature="aria", feet=5) == (Moved("aria", 5, "walk", 5),)
