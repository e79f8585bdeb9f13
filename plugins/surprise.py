"""Surprise (docs/rules.md, 2): a surprised creature cannot move or act on its first
turn, and cannot react until that turn ends."""

from __future__ import annotations

from zonekeep.sdk import (
    CommandSpec,
    Creature,
    Refusal,
    RuleContext,
    SurpriseEnded,
    hookimpl,
)

_BLOCKED = {"action", "attack", "bonus", "interaction", "reaction", "movement"}


@hookimpl
def zonekeep_action_refusal(
    ctx: RuleContext, creature: Creature, spec: CommandSpec
) -> Refusal | None:
    if creature.id not in ctx.state.surprised or not _BLOCKED.intersection(spec.costs):
        return None
    return Refusal(
        "surprised",
        f"{creature.name} is surprised: it cannot move or act on its first turn, "
        "and cannot react until that turn ends.",
    )


@hookimpl
def zonekeep_turn_end(ctx: RuleContext, creature: Creature) -> None:
    if creature.id in ctx.state.surprised:
        ctx.emit(SurpriseEnded(creature.id))
