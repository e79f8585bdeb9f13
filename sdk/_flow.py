"""The round loop: starting rounds and turns, and moving to the next turn.

These are plain functions over a :class:`RuleContext`; the built-in plugins call
them (ending a turn, finishing initiative) and so can third-party plugins. The
rules they follow are the plugins': whose turn is next (``zonekeep_next_turn``) and
whose turn is skipped (``zonekeep_skip_turn``).
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
    """The plugins' next turn (``zonekeep_next_turn``), or ``None`` when the round is over."""
    answer = ctx.hook.zonekeep_next_turn(ctx=ctx)
    if answer is None:
        return None
    slot, member = answer
    s = ctx.state
    if slot >= len(s.initiative):
        return None
    if member >= len(s.initiative[slot].members):
        raise ValueError(
            f"zonekeep_next_turn answered slot {slot} member {member}, but that slot has "
            f"{len(s.initiative[slot].members)} member(s)"
        )
    return slot, member


def advance(ctx: RuleContext) -> None:
    """Start the next turn (``zonekeep_next_turn``), skipping the creatures the plugins
    say sit it out (``zonekeep_skip_turn``; the built-in rule: out of the fight).

    When the round's last turn is over: the round-end triggers, ``round_ended``,
    and the next round. If no creature can take a turn for a whole round, the
    loop stops between turns instead of spinning.
    """
    s = ctx.state
    if s.phase != "turns":
        return
    skipped_rounds = 0
    passed: set[tuple[int, int]] = set()
    while s.phase == "turns":
        pos = _next_position(ctx)
        if pos is not None and pos in passed:
            raise ValueError(f"zonekeep_next_turn answered {pos} again in the same round")
        if pos is None:
            if skipped_rounds:
                return
            number = s.round
            ctx.hook.zonekeep_round_end(ctx=ctx, round=number)
            ctx.emit(RoundEnded(number))
            ctx.emit(RoundStarted(number + 1))
            ctx.hook.zonekeep_round_start(ctx=ctx, round=number + 1)
            skipped_rounds = 1
            passed.clear()
            continue
        passed.add(pos)
        slot, member = pos
        cid = s.initiative[slot].members[member]
        creature = s.creatures[cid]
        reason = ctx.hook.zonekeep_skip_turn(ctx=ctx, creature=creature)
        if reason is not None:
            ctx.emit(TurnSkipped(cid, slot, member, reason))
            continue
        ctx.emit(TurnStarted(cid, slot, member))
        ctx.hook.zonekeep_turn_start(ctx=ctx, creature=s.creatures[cid])
        return
