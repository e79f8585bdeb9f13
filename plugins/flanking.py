"""Flanking (docs/rules.md, A5; ``arena.txt:4.1``-``4.3``) [``flanking``].

An enemy is flanked when, in its zone, the creatures on the other side outnumber
its own side two to one, or when two allies that are not adjacent to each other
are both engaged with it. It does not stack. Melee attack rolls against a flanked
creature have advantage. A creature that cannot act (incapacitated: at 0 hit points,
unconscious, stunned, paralyzed) counts for neither side: our ruling (docs/rules.md,
A5), since it threatens nobody and guards nobody.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import EncounterState, RollModifier, RollRequest, RuleContext, hookimpl


def flanked_by(state: EncounterState, cid: str) -> str | None:
    """Why ``cid`` is flanked ("outnumbered 2 to 1", "engaged from two sides"), or ``None``."""
    target = state.creatures[cid]
    if target.zone is None or target.out_of_fight:
        return None
    friends = foes = 0
    for c in state.in_zone(target.zone):
        if c.incapacitated and c.id != cid:
            continue
        if c.side == target.side:
            friends += 1
        else:
            foes += 1
    if foes >= 2 * friends:
        return "outnumbered 2 to 1"
    engaged = [e for e in state.engaged_with(cid) if state.creatures[e].side != target.side]
    for i, a in enumerate(engaged):
        for b in engaged[i + 1 :]:
            same_side = state.creatures[a].side == state.creatures[b].side
            if same_side and b not in state.adjacent_to(a):
                return "engaged from two sides"
    return None


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if (
        not ctx.state.options.flanking
        or roll.kind != "attack"
        or roll.attack_kind != "melee"
        or roll.target is None
        or roll.target not in ctx.state.creatures
    ):
        return None
    why = flanked_by(ctx.state, roll.target)
    return (RollModifier("advantage", f"flanking: {why}"),) if why else None
