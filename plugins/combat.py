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
    PARALYZED,
    SQUEEZING,
    STABLE,
    UNCONSCIOUS,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    Creature,
    Damaged,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_damage,
    hookimpl,
)


def attack_of(ctx: RuleContext, creature: Creature, attack_name: str | None) -> Attack:
    """``creature``'s attack called ``attack_name`` (its first for ``None``), or a refusal."""
    attack = creature.attack(attack_name)
    if attack is None:
        ctx.refuse("unknown_attack", f"{creature.name} has no attack called {attack_name!r}.")
    return attack


def make_attack(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack_name: str | None,
    *,
    reaction: bool = False,
) -> bool:
    """Roll one attack and its damage. Returns whether it hit."""
    attack = attack_of(ctx, attacker, attack_name)
    if target.id == attacker.id:
        ctx.refuse("invalid_target", "A creature cannot attack itself.")
    if target.out_of_fight:
        ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
    ctx.hook.zonekeep_before_attack(
        ctx=ctx, attacker=attacker, target=target, attack=attack, reaction=reaction
    )
    request = RollRequest(
        "attack", attacker.id, target.id, attack_kind=attack.kind, attack=attack.name
    )
    result = ctx.roll("d20", request, bonus=attack.bonus)
    bonuses = ctx.hook.zonekeep_armor_class_bonus(
        ctx=ctx, target=target, attacker=attacker, attack=attack
    )
    ac = target.ac + sum(b for b in bonuses if b)
    natural = result.natural
    hit = natural == 20 or (natural != 1 and result.total >= ac)
    critical = natural == 20 or (hit and _helpless_and_close(ctx, attacker, target, attack))
    made = AttackMade(
        attacker.id,
        target.id,
        attack.name,
        attack.kind,
        result,
        ac,
        hit,
        critical,
        reaction,
    )
    ctx.emit(made)
    damaged: Damaged | None = None
    if hit:
        damage = ctx.roll(attack.damage, double_dice=critical)
        damaged = apply_damage(
            ctx,
            target,
            damage.total,
            damage_type=attack.damage_type,
            roll=damage,
            source=attacker.id,
            attacker=attacker.id,
            attack=attack.name,
            critical=critical,
        )
    s = ctx.state
    ctx.hook.zonekeep_attack_made(
        ctx=ctx,
        attacker=s.creatures[attacker.id],
        target=s.creatures[target.id],
        attack=attack,
        result=made,
        damage=damaged,
    )
    return hit


def _helpless_and_close(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> bool:
    """A hit on a paralyzed or unconscious creature (at 0 hit points, dying or stable, a
    creature is unconscious) from
    "within 5 feet" is a critical hit: in zones, a melee attack from the target's zone,
    or any attack by a creature engaged with it (docs/rules.md, "Conditions")."""
    if not any(c in target.conditions for c in (PARALYZED, UNCONSCIOUS, DYING, STABLE)):
        return False
    if attack.kind == "melee" and attacker.zone == target.zone:
        return True
    return attacker.id in ctx.state.engaged_with(target.id)


def _attack(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    make_attack(ctx, me, target, cmd.params.get("attack"))


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
            "Action: attack a creature with one of your attacks.",
            {
                "creature": Param("creature", True, "the attacker"),
                "target": Param("creature", True, "the creature attacked"),
                "attack": Param("string", False, "which attack (default: the first)"),
            },
            costs=("action",),
        ),
    )


__all__ = ["apply_damage", "attack_of", "make_attack"]
