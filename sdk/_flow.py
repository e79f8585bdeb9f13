"""The round loop as rules: starting rounds and turns, and moving to the next turn.

These are plain functions over a :class:`RuleContext`; the built-in plugins call
them (ending a turn, finishing initiative) and so can third-party plugins.
"""

from __future__ import annotations

from ._context import RuleContext
from ._events import RoundEnded, RoundStarted, TurnEnded, TurnSkipped, TurnStarted


def end_turn(ctx: RuleContext) -> None:
    """End the active creature's turn (running the turn-end triggers) and advance."""
    active = ctx.state.active
    if active is not None:
        ctx.hook.zonekeep_turn_end(ctx=ctx, creature=ctx.state.creatures[active])
        ctx.emit(TurnEnded(active))
    advance(ctx)


def start_round(ctx: RuleContext, number: int) -> None:
    """Start round ``number``: the ``round_started`` event, its triggers, then the first turn."""
    ctx.emit(RoundStarted(number))
    ctx.hook.zonekeep_round_start(ctx=ctx, round=number)
    advance(ctx)


def _next_position(ctx: RuleContext) -> tuple[int, int] | None:
    s = ctx.state
    slot, member = s.turn_slot, s.turn_member
    if slot < 0:
        slot, member = 0, 0
    else:
        member += 1
    while slot < len(s.initiative):
        if member < len(s.initiative[slot].members):
            return slot, member
        slot, member = slot + 1, 0
    return None


def advance(ctx: RuleContext) -> None:
    """Start the next turn in initiative order, skipping creatures out of the fight.

    When the round's last turn is over: the round-end triggers, ``round_ended``,
    and the next round. If no creature can take a turn for a whole round, the
    loop stops between turns instead of spinning.
    """
    s = ctx.state
    if s.phase != "turns":
        return
    skipped_rounds = 0
    while s.phase == "turns":
        pos = _next_position(ctx)
        if pos is None:
            if skipped_rounds:
                return
            number = s.round
            ctx.hook.zonekeep_round_end(ctx=ctx, round=number)
            ctx.emit(RoundEnded(number))
            ctx.emit(RoundStarted(number + 1))
            ctx.hook.zonekeep_round_start(ctx=ctx, round=number + 1)
            skipped_rounds = 1
            continue
        slot, member = pos
        cid = s.initiative[slot].members[member]
        creature = s.creatures[cid]
        if creature.out_of_fight:
            ctx.emit(TurnSkipped(cid, slot, member, "out of the fight"))
            continue
        ctx.emit(TurnStarted(cid, slot, member))
        ctx.hook.zonekeep_turn_start(ctx=ctx, creature=s.creatures[cid])
        return
