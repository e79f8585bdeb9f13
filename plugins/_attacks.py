"""Making an attack: the roll against AC, the critical hit, the damage, the hooks.

Shared by the rules that attack (``combat``'s ``attack`` action, ``turns``' readied
attack, ``engagement``'s opportunity attack), so that none of them imports another:
the built-in rule plugins are independent modules (pyproject.toml's import-linter
contracts), each may be disabled on its own. Not a plugin itself (it has no hooks).
The rules are in ``combat``'s docstring.
"""

from __future__ import annotations

from zonekeep.sdk import (
    DYING,
    PARALYZED,
    STABLE,
    UNCONSCIOUS,
    Attack,
    AttackMade,
    Creature,
    Damaged,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_damage,
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
    extra: tuple[RollModifier, ...] = (),
) -> bool:
    """Roll one attack and its damage. Returns whether it hit. ``extra`` adds sources of
    advantage or disadvantage of the caller's own (a multiattack's disadvantaged attack)."""
    attack = attack_of(ctx, attacker, attack_name)
    if target.id == attacker.id:
        ctx.refuse("invalid_target", "A creature cannot attack itself.")
    if target.out_of_fight:
        ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
    # A reaction is one of the target's actions: a target without any is asked nothing.
    redirected = (
        ctx.hook.zonekeep_attack_redirect(ctx=ctx, attacker=attacker, target=target, attack=attack)
        if target.actions
        else None
    )
    if redirected is not None:
        other = ctx.state.creatures.get(redirected)
        if other is None or other.out_of_fight or other.id == attacker.id:
            raise ValueError(f"zonekeep_attack_redirect named no target: {redirected!r}")
        target = other
        attacker = ctx.state.creatures[attacker.id]
    ctx.hook.zonekeep_before_attack(
        ctx=ctx, attacker=attacker, target=target, attack=attack, reaction=reaction
    )
    request = RollRequest(
        "attack", attacker.id, target.id, attack_kind=attack.kind, attack=attack.name
    )
    result = ctx.roll("d20", request, bonus=attack.bonus, extra=extra)
    bonuses = ctx.hook.zonekeep_armor_class_bonus(
        ctx=ctx, target=target, attacker=attacker, attack=attack
    )
    ac = target.ac + sum(b for b in bonuses if b)
    natural = result.natural
    threshold = _critical_threshold(ctx, attacker, attack)
    if target.actions and natural not in (1, 20) and natural < threshold and result.total >= ac:
        bonus = ctx.hook.zonekeep_hit_reaction(
            ctx=ctx, attacker=attacker, target=target, attack=attack, total=result.total, ac=ac
        )
        ac += bonus or 0
    hit = natural >= threshold or (natural != 1 and result.total >= ac)
    critical = natural >= threshold or (hit and _helpless_and_close(ctx, attacker, target, attack))
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
        dice = ctx.hook.zonekeep_attack_damage(
            ctx=ctx, attacker=attacker, target=target, attack=attack
        )
        damage = ctx.roll(dice or attack.damage, double_dice=critical)
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


def _critical_threshold(ctx: RuleContext, attacker: Creature, attack: Attack) -> int:
    """The lowest natural roll that is a critical hit: 20, unless a plugin lowers it
    (``zonekeep_critical_threshold``; answers outside 2 to 20 are ignored)."""
    answers = ctx.hook.zonekeep_critical_threshold(ctx=ctx, attacker=attacker, attack=attack)
    return min([20, *(a for a in answers if isinstance(a, int) and 2 <= a <= 20)])


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
