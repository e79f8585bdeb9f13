"""What the common conditions do to rolls and movement.

The rules texts use these conditions without defining them; zonekeep gives them
their familiar effects (RULINGS is silent; see docs/rules.md):

- ``restrained``: speed 0 (no moving, entering, standing, taking positions);
  its attack rolls and Dexterity saves have disadvantage; attack rolls against it
  have advantage.
- ``grappled``: speed 0.
- ``prone``: its attack rolls have disadvantage; melee attack rolls against it have
  advantage and ranged attack rolls against it disadvantage.

Any other condition is a label the GM reads and rules on. This plugin declares
(``zonekeep_conditions``) every condition the built-in rules give a meaning to, so
that a third-party plugin declaring one of them again is refused at start.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DEFEATED,
    DODGING,
    DYING,
    ESCAPED,
    INCAPACITATED,
    PRONE,
    SQUEEZING,
    STABLE,
    SURRENDERED,
    CommandSpec,
    ConditionSpec,
    Creature,
    Refusal,
    RollModifier,
    RollRequest,
    RuleContext,
    hookimpl,
)

RESTRAINED = "restrained"
GRAPPLED = "grappled"
_SPEED_ZERO = (RESTRAINED, GRAPPLED)

#: The conditions the built-in rules give a meaning to, and where (docs/rules.md).
BUILT_IN_CONDITIONS: tuple[ConditionSpec, ...] = (
    ConditionSpec(PRONE, "Crawls; its attacks have disadvantage; melee attacks on it advantage."),
    ConditionSpec(
        RESTRAINED, "Speed 0; disadvantage on attacks and Dex saves; attacked with advantage."
    ),
    ConditionSpec(GRAPPLED, "Speed 0."),
    ConditionSpec(SQUEEZING, "Disadvantage on attacks and Dex saves; attacked with advantage."),
    ConditionSpec(DODGING, "Attacks against it have disadvantage until its next turn starts."),
    ConditionSpec(DYING, "A PC at 0 hit points: incapacitated, keeps the encounter going."),
    ConditionSpec(STABLE, "A PC at 0 hit points who no longer keeps the encounter going."),
    ConditionSpec(DEFEATED, "Out of the fight: its turns are skipped."),
    ConditionSpec(SURRENDERED, "Out of the fight: it gave up."),
    ConditionSpec(ESCAPED, "Out of the fight: it left the encounter."),
    ConditionSpec(INCAPACITATED, "Cannot move, act or react."),
)


@hookimpl
def zonekeep_conditions() -> Iterable[ConditionSpec]:
    return BUILT_IN_CONDITIONS


@hookimpl
def zonekeep_action_refusal(
    ctx: RuleContext, creature: Creature, spec: CommandSpec
) -> Refusal | None:
    if "movement" not in spec.costs:
        return None
    held = next((c for c in _SPEED_ZERO if c in creature.conditions), None)
    if held is None:
        return None
    return Refusal("speed_zero", f"{creature.name} is {held}: its speed is 0.")


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier]:
    found: list[RollModifier] = []
    actor = ctx.state.creatures.get(roll.actor)
    target = ctx.state.creatures.get(roll.target) if roll.target else None
    if actor is not None:
        if roll.kind == "attack" and RESTRAINED in actor.conditions:
            found.append(RollModifier("disadvantage", "restrained"))
        if roll.kind == "save" and roll.ability == "dex" and RESTRAINED in actor.conditions:
            found.append(RollModifier("disadvantage", "restrained"))
        if roll.kind == "attack" and PRONE in actor.conditions:
            found.append(RollModifier("disadvantage", "prone"))
    if roll.kind == "attack" and target is not None:
        if RESTRAINED in target.conditions:
            found.append(RollModifier("advantage", "target restrained"))
        if PRONE in target.conditions:
            if roll.attack_kind == "melee":
                found.append(RollModifier("advantage", "target prone"))
            else:
                found.append(RollModifier("disadvantage", "target prone"))
    return found
