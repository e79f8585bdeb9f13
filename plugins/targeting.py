"""Targeting for attacks (docs/rules.md, A9).

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
    EncounterState,
    RollModifier,
    RollRequest,
    RuleContext,
    describe_path,
    hookimpl,
    path_distance,
    sight_path,
)

__all__ = ["long_range_disadvantage", "range_refusal"]


def range_refusal(
    state: EncounterState,
    attacker_id: str,
    target_id: str,
    reach_or_range: int,
    long_range: int = 0,
    *,
    melee: bool,
    what: str = "the attack",
) -> tuple[str, str] | None:
    """Whether ``attacker_id`` can reach ``target_id``; the refusal if not.

    Returns ``None`` when the target can be targeted, else ``(code, sentence)`` with
    code ``"no_line_of_sight"`` or ``"out_of_range"`` and a sentence that names both
    creatures, the distance and the path.  ``what`` names the attack or ability in
    the sentence (``"Aria's shortbow"``).

    * The same zone is always in range and in sight, melee or not.
    * A melee attack reaches another zone only when ``reach_or_range`` is at least
      the path distance (a 5-ft reach never does).
    * A ranged attack reaches up to ``reach_or_range``, or up to ``long_range``
      when that is larger; beyond the normal range the attack is allowed and
      :func:`long_range_disadvantage` tells the caller to add disadvantage.
    * A creature that is not in any zone is out of range of everything.

    Raises ``KeyError`` for an unknown creature id.
    """
    attacker = state.creatures[attacker_id]
    target = state.creatures[target_id]
    for creature in (attacker, target):
        if creature.zone is None or not state.arena.has_zone(creature.zone):
            return ("out_of_range", f"{creature.name} is not in any zone of the arena.")
    assert attacker.zone is not None and target.zone is not None
    if attacker.zone == target.zone:
        return None
    arena = state.arena
    path = sight_path(arena, attacker.zone, target.zone)
    where = arena.zone(target.zone).name
    if path is None:
        return (
            "no_line_of_sight",
            f"{attacker.name} has no line of sight to {target.name} in {where}: "
            "every way there crosses something that blocks sight.",
        )
    distance = sum(arena.zone(z).size for z in path)
    away = f"{target.name} is {distance} ft from {attacker.name} ({describe_path(arena, path)})"
    if melee:
        if reach_or_range >= distance:
            return None
        return (
            "out_of_range",
            f"{away}; {what} reaches {reach_or_range} ft, so a melee attack needs "
            f"{target.name} in {attacker.name}'s zone or a reach of {distance} ft.",
        )
    if distance <= max(reach_or_range, long_range):
        return None
    if long_range > reach_or_range:
        reaches = f"{what} reaches {reach_or_range} ft, or {long_range} ft at long range"
    else:
        reaches = f"{what} reaches only {reach_or_range} ft"
    return ("out_of_range", f"{away}; {reaches}.")


def long_range_disadvantage(
    state: EncounterState,
    attacker_id: str,
    target_id: str,
    normal_range: int,
    long_range: int,
) -> bool:
    """Whether a ranged attack is at long range and so has disadvantage.

    True exactly when the target is in another zone, in sight, farther than
    ``normal_range`` and no farther than ``long_range``.  False whenever
    :func:`range_refusal` would refuse the attack or the target is within normal
    range.  Raises ``KeyError`` for an unknown creature id.
    """
    a = state.creatures[attacker_id].zone
    b = state.creatures[target_id].zone
    if a is None or b is None or not (state.arena.has_zone(a) and state.arena.has_zone(b)):
        return False
    distance = path_distance(state.arena, a, b)
    return distance is not None and normal_range < distance <= long_range


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
