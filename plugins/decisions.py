"""Pending decisions: answering them, and applying the default when time runs out."""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.plugins._decisions import resolve
from zonekeep.sdk import (
    Command,
    CommandSpec,
    Decision,
    Param,
    RuleContext,
    hookimpl,
)


def _pending(ctx: RuleContext, did: str) -> Decision:
    decision = ctx.state.decision(did)
    if decision is None:
        ctx.refuse("unknown_decision", f"There is no pending decision {did!r}.")
    return decision


def _decide(ctx: RuleContext, cmd: Command) -> None:
    decision = _pending(ctx, cmd.params["decision"])
    actor = ctx.actor
    if not (actor.is_gm or (actor.role == "player" and actor.id == decision.controller)):
        ctx.refuse("not_your_decision", "That decision belongs to someone else.")
    choice = tuple(cmd.params["choice"])
    if decision.ordering:
        if sorted(choice) != sorted(decision.options):
            ctx.refuse(
                "invalid_choice",
                f"Give an order of exactly these: {', '.join(decision.options)}.",
            )
    elif len(choice) != 1 or choice[0] not in decision.options:
        ctx.refuse("invalid_choice", f"Choose exactly one of: {', '.join(decision.options)}.")
    resolve(ctx, decision, choice, False)


def _timeout(ctx: RuleContext, cmd: Command) -> None:
    decision = _pending(ctx, cmd.params["decision"])
    resolve(ctx, decision, decision.default, True)


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "decide",
            _decide,
            "Answer a pending decision (a tie to order, a reaction to take).",
            {
                "decision": Param("string", True, "the decision id"),
                "choice": Param("strings", True, "an ordering of all options, or one option"),
            },
            who="any",
            phases=("initiative", "turns"),
        ),
        CommandSpec(
            "decision_timeout",
            _timeout,
            "The deadline passed: apply the decision's default (sent by the server or GM).",
            {"decision": Param("string", True, "the decision id")},
            who="gm",
            phases=("initiative", "turns"),
        ),
    )
