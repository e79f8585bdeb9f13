"""Targeting for attacks (arena.txt, "Targeting"; RULINGS, "Range between zones").

Every attack (actions, reactions, readied attacks) must reach its target: inside
the attacker's own zone everything is in range and in sight; another zone needs
line of sight and a range (or reach) at least the sum of the sizes of the zones on
the path, not counting the attacker's own. A ranged attack beyond its normal range
but within its long range has disadvantage.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    Attack,
    Creature,
    RollModifier,
    RollRequest,
    RuleContext,
    hookimpl,
    long_range_disadvantage,
    range_refusal,
)


def _reach(attack: Attack) -> tuple[int, int]:
    if attack.kind == "melee":
        return attack.reach, 0
    return attack.range, attack.long_range


@hookimpl
def zonekeep_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if attacker.zone is None or target.zone is None:
        return
    reach, long_range = _reach(attack)
    refusal = range_refusal(
        ctx.state,
        attacker.id,
        target.id,
        reach,
        long_range,
        melee=attack.kind == "melee",
        what=f"the {attack.name}",
    )
    if refusal is not None:
        ctx.refuse(*refusal)


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if roll.kind != "attack" or roll.attack_kind != "ranged" or roll.target is None:
        return None
    attacker = ctx.state.creatures.get(roll.actor)
    target = ctx.state.creatures.get(roll.target)
    if attacker is None or target is None or attacker.zone is None or target.zone is None:
        return None
    attack = attacker.attack(roll.attack)
    if attack is None:
        return None
    if long_range_disadvantage(ctx.state, attacker.id, target.id, attack.range, attack.long_range):
        return (RollModifier("disadvantage", "long range"),)
    return None
