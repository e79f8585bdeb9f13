"""Closing a pending decision: shared by ``decisions`` (a player's or the GM's answer, a
deadline's default) and ``initiative`` (a tie's choice closes when the turn reaches its
first tied slot), so that neither imports the other (see ``_crowding``). Not a plugin
itself."""

from __future__ import annotations

from zonekeep.sdk import Decision, DecisionResolved, RuleContext


def resolve(
    ctx: RuleContext,
    decision: Decision,
    choice: tuple[str, ...],
    defaulted: bool,
    by: str | None = None,
) -> None:
    """Close ``decision`` with ``choice`` (``defaulted``: nobody chose, its default
    applies) and carry it out (``zonekeep_decision_resolved``). ``by``: who closed it
    (default: the sender of the command; ``"rules"`` when a rule closed it)."""
    ctx.emit(DecisionResolved(decision.id, choice, by or ctx.actor.id, defaulted))
    ctx.hook.zonekeep_decision_resolved(
        ctx=ctx, decision=decision, choice=choice, defaulted=defaulted
    )
