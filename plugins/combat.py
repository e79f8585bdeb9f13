"""Attacks: d20 + bonus against AC, damage, dying and defeat; squeezing and dodging.

- A natural 20 hits and doubles the damage dice; a natural 1 misses. A hit on a
  paralyzed or unconscious creature (0 hit points, dying or stable) by a melee attack from its zone, or by an attacker
  engaged with it, is a critical hit.
- The damage has the attack's damage type and goes through the damage pipeline
  (``zonekeep.sdk.apply_damage``: plugins, then immunity, resistance, vulnerability);
  ``zonekeep_attack_made`` runs after every attack, hit or miss.
- A PC reduced to 0 hit points is dying; an NPC at 0 is defeated (docs/rules.md,
  12; ``zonekeep_zero_hit_points``, asked by
  ``zonekeep.sdk.apply_damage``).
- The Attack action makes one attack, or as many as ``zonekeep_attacks_per_action``
  says (a fighter's Extra Attack: 2): the ones beyond the first are granted at once
  (``action_granted``, cost ``attack``) and each later ``attack`` command that turn
  spends one of them (the command's cost ``attack``) before an action.
- A critical hit comes on a natural 20, or from the lowest natural roll a
  ``zonekeep_critical_threshold`` answer names (a champion's 19).
- A reaction offered to an attack (``zonekeep_attack_reactions``: when it targets a
  creature, when its roll would hit) is a decision for the reactor's controller; the
  attack waits for it and resumes when it closes (``decline`` by default).
- A squeezing creature has disadvantage on attack rolls and Dexterity saves, and
  attack rolls against it have advantage. Attacks against a dodging creature
  have disadvantage.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DEFEATED,
    DODGING,
    DYING,
    SQUEEZING,
    ActionGranted,
    Command,
    CommandSpec,
    Creature,
    Decision,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_damage,
    attack_of,
    hookimpl,
    make_attack,
    reactions_pending,
    resume_attack,
    run_maneuver,
)


def _attack(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    if ctx.paid == "action":
        answers = ctx.hook.zonekeep_attacks_per_action(ctx=ctx, creature=me)
        count = max([1, *(a for a in answers if isinstance(a, int) and 1 <= a <= 4)])
        if count > 1:
            ctx.emit(ActionGranted(me.id, "attack", "extra attack", count - 1))
    make_attack(ctx, me, target, cmd.params.get("attack"))


@hookimpl
def zonekeep_decision_resolved(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...], defaulted: bool
) -> None:
    """A reaction decision an attack waited for closed: the attack goes on (then the move
    it interrupted, if any, once no other reaction is awaited)."""
    if decision.trigger is None or decision.trigger.get("type") != "attack":
        return
    resume_attack(ctx, decision, choice)
    if ctx.state.maneuver is not None and not reactions_pending(ctx):
        run_maneuver(ctx)


@hookimpl
def zonekeep_zero_hit_points(ctx: RuleContext, creature: Creature) -> str:
    """A PC at 0 hit points is dying; an NPC is defeated (unless the GM says otherwise)."""
    return DYING if creature.pc else DEFEATED


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier]:
    found: list[RollModifier] = []
    actor = ctx.state.creatures.get(roll.actor)
    target = ctx.state.creatures.get(roll.target) if roll.target else None
    squeezing = actor is not None and SQUEEZING in actor.conditions
    if squeezing and (roll.kind == "attack" or (roll.kind == "save" and roll.ability == "dex")):
        found.append(RollModifier("disadvantage", "squeezing"))
    if roll.kind == "attack" and target is not None:
        if SQUEEZING in target.conditions:
            found.append(RollModifier("advantage", "target squeezing"))
        if DODGING in target.conditions:
            found.append(RollModifier("disadvantage", "target dodging"))
    return found


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "attack",
            _attack,
            "Action: attack a creature with one of your attacks (Extra Attack: the Attack "
            "action's further attacks cost no more action).",
            {
                "creature": Param("creature", True, "the attacker"),
                "target": Param("creature", True, "the creature attacked"),
                "attack": Param("string", False, "which attack (default: the first)"),
            },
            costs=("attack", "action"),
        ),
    )


__all__ = ["apply_damage", "attack_of", "make_attack"]
