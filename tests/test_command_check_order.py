"""The order of a command's checks, as docs/plugins.md documents it.

phase -> who may send it (GM only, a pending decision) -> the creature: control, turn,
able to act -> ``requires`` -> the action cost -> ``zonekeep_action_refusal`` -> handler.
A command that fails two checks gets the refusal of the first one.
"""

from __future__ import annotations

from typing import Any

import pytest
from arena_fixture import harness
from helpers import make

from zonekeep.sdk import (
    CommandSpec,
    Creature,
    EncounterState,
    Param,
    Refusal,
    Requirement,
    RuleContext,
    hookimpl,
)
from zonekeep.sdk._loading import IN_PROCESS, LoadedPlugin
from zonekeep.sdk.testing import EncounterHarness

WHO = {"creature": Param("creature", True, "who")}


class Strict:
    """Commands whose ``requires`` always refuses, and a hook that always refuses them."""

    #: The creatures ``requires`` was asked about.
    asked: list[str] = []

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def never(state: EncounterState, creature: Creature) -> tuple[str, str] | None:
            Strict.asked.append(creature.id)
            return ("not_ready", f"{creature.name} is not ready.")

        requirement: Requirement = never

        def nothing(ctx: RuleContext, cmd: Any) -> None:
            pass

        return (
            CommandSpec(
                "ponder", nothing, "Action: ponder.", WHO, costs=("action",), requires=requirement
            ),
            CommandSpec(
                "prepare", nothing, "Action: prepare.", WHO, phases=("setup",), requires=requirement
            ),
            CommandSpec("spend", nothing, "Action: do nothing.", WHO, costs=("action",)),
            CommandSpec("hooked", nothing, "Free: refused by the hook.", WHO),
            CommandSpec(
                "hooked_strict", nothing, "Free: refused twice.", WHO, requires=requirement
            ),
        )

    @staticmethod
    @hookimpl
    def zonekeep_action_refusal(
        ctx: RuleContext, creature: Creature, spec: CommandSpec
    ) -> Refusal | None:
        if spec.id.startswith("hooked"):
            return Refusal("hook_says_no", "The hook refuses.")
        return None


def table() -> EncounterHarness:
    Strict.asked.clear()
    h = harness(
        [make("aria"), make("gob", "goblins")],
        {"aria": "hall", "gob": "hall"},
        [20, 10],
        extra_plugins=[LoadedPlugin("strict", "0.1", IN_PROCESS, Strict)],
    )
    assert h.state.active == "aria"
    return h


def test_phase_comes_before_requires() -> None:
    h = table()
    assert h.refused("prepare", creature="aria").code == "wrong_phase"
    assert Strict.asked == []


def test_turn_comes_before_requires() -> None:
    h = table()
    assert h.refused("ponder", creature="gob").code == "not_your_turn"
    assert Strict.asked == []


def test_requires_comes_before_the_cost() -> None:
    h = table()
    h.send("spend", creature="aria")
    assert h.refused("ponder", creature="aria").code == "not_ready"
    assert Strict.asked == ["aria"]


def test_the_cost_refuses_when_requires_passes() -> None:
    h = table()
    h.send("spend", creature="aria")
    assert h.refused("spend", creature="aria").code == "no_action_left"


def test_requires_refuses_when_everything_before_it_passes() -> None:
    h = table()
    refusal = h.refused("ponder", creature="aria")
    assert (refusal.code, refusal.message) == ("not_ready", "Aria is not ready.")
    assert Strict.asked == ["aria"]


@pytest.mark.parametrize(
    ("kind", "code"), [("hooked", "hook_says_no"), ("hooked_strict", "not_ready")]
)
def test_requires_comes_before_the_refusal_hook(kind: str, code: str) -> None:
    assert table().refused(kind, creature="aria").code == code
