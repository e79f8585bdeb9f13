"""A test plugin with state of its own and custom event types (tests/test_plugin_state.py and
tests/e2e/test_plugin_state_wire.py).

- ``braziers.kick`` (an action): a creature kicks a brazier over; the public
  ``braziers.brazier_kicked`` event folds it into the public state ``kicked`` (the
  braziers) and ``kickers`` (who kicked); a brazier kicked once cannot be kicked again.
- ``braziers.prime`` (GM): the GM secretly primes an oil slick in a zone; the GM-only
  ``braziers.slick_primed`` event folds it into the GM-only state ``slicks``.
- a creature that kicked a brazier attacks with advantage (a hook reading the state).
- ``braziers.misbehave`` (GM): emits what must never reach the log (a payload that breaks
  the schema, a type nobody declares, an event whose reducer fails).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zonekeep.sdk import (
    Command,
    CommandSpec,
    EventTypeSpec,
    Param,
    PluginInfo,
    RollModifier,
    RollRequest,
    RuleContext,
    StateSpec,
    hookimpl,
    plugin_event,
)

ZONEKEEP_PLUGIN = PluginInfo(
    name="braziers",
    version="1.0.0",
    sdk=">=0.1,<0.2",
    description="Braziers to kick over and secret oil slicks (a test plugin).",
)

KICKED = ZONEKEEP_PLUGIN.id("brazier_kicked")
PRIMED = ZONEKEEP_PLUGIN.id("slick_primed")
SPILLED = ZONEKEEP_PLUGIN.id("oil_spilled")
PHASES = ("surprise", "positions", "initiative", "turns")


def _fold_kicked(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["kicked"].append(data["brazier"])
    if data["creature"] not in state["kickers"]:
        state["kickers"].append(data["creature"])


def _fold_primed(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["slicks"][data["zone"]] = data["by"]


def _fold_spilled(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["kicked"].append("half done")
    raise RuntimeError("the oil caught fire in the reducer")


@hookimpl
def zonekeep_plugin_state() -> Iterable[StateSpec]:
    return (
        StateSpec("kicked", [], "everyone", "The braziers kicked over, in order."),
        StateSpec("kickers", [], "everyone", "The creatures who kicked one."),
        StateSpec(
            "slicks",
            {},
            "gm",
            "Primed oil slicks: zone -> who primed it.",
            schema={"type": "object", "additionalProperties": {"type": "string"}},
        ),
    )


@hookimpl
def zonekeep_event_types() -> Iterable[EventTypeSpec]:
    return (
        EventTypeSpec(
            "brazier_kicked",
            {
                "type": "object",
                "properties": {
                    "brazier": {"type": "string", "minLength": 1},
                    "creature": {"type": "string"},
                },
                "required": ["brazier", "creature"],
                "additionalProperties": False,
            },
            _fold_kicked,
            description="A creature kicked a brazier over.",
            template="{creature} kicks {brazier} over",
            visibility="everyone",
        ),
        EventTypeSpec(
            "slick_primed",
            {
                "type": "object",
                "properties": {"zone": {"type": "string"}, "by": {"type": "string"}},
                "required": ["zone", "by"],
                "additionalProperties": False,
            },
            _fold_primed,
            description="The GM primed a hidden oil slick.",
            template="An oil slick is primed in {zone}",
        ),
        EventTypeSpec("oil_spilled", reducer=_fold_spilled, description="Always fails."),
    )


def _kick(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    brazier = cmd.params["brazier"]
    if brazier in ctx.plugin_state("braziers")["kicked"]:
        ctx.refuse("already_kicked", f"{brazier} is already lying on the floor.")
    ctx.emit(plugin_event("brazier_kicked", brazier=brazier, creature=me.id))


def _prime(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(plugin_event(PRIMED, zone=cmd.params["zone"], by=ctx.actor.id))


def _misbehave(ctx: RuleContext, cmd: Command) -> None:
    how = cmd.params["how"]
    if how == "payload":
        ctx.emit(plugin_event(KICKED, brazier=3, creature="aria"))
    elif how == "unknown":
        ctx.emit(plugin_event("braziers.nothing_like_it"))
    elif how == "reducer":
        ctx.emit(plugin_event(SPILLED))
    elif how == "mutate":  # hooks get a copy: this changes nothing
        ctx.plugin_state("braziers")["kicked"].append("sneaky")
        ctx.emit(plugin_event(PRIMED, zone="bar", by="gm"))


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> list[RollModifier] | None:
    if roll.kind == "attack" and roll.actor in ctx.plugin_state("braziers")["kickers"]:
        return [RollModifier("advantage", "braziers.kicked")]
    return None


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "kick",
            _kick,
            "Free: kick a brazier over.",
            {
                "creature": Param("creature", True, "the kicker"),
                "brazier": Param("string", True, "the brazier"),
            },
            costs=("free",),
        ),
        CommandSpec(
            "prime",
            _prime,
            "GM: prime a hidden oil slick in a zone.",
            {"zone": Param("zone", True, "the zone")},
            who="gm",
            phases=PHASES,
        ),
        CommandSpec(
            "misbehave",
            _misbehave,
            "GM: make the plugin emit what it must not.",
            {"how": Param("string", True, "payload, unknown, reducer or mutate")},
            who="gm",
            phases=PHASES,
        ),
    )
