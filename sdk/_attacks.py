"""Making a weapon attack: the roll against AC, the critical hit, the damage, the hooks.

The built-in rules attack with it (``combat``'s ``attack`` action, ``turns``' readied
attack, ``engagement``'s opportunity attack, ``features``' stat-block attacks), and so
may any plugin whose command makes an attack (the classes plugin's off-hand attack, the
spells plugin's hasted attack): :func:`make_attack`, exported by ``zonekeep.sdk``. The
rules an attack follows are in the ``combat`` plugin's docstring.
"""

from __future__ import annotations

import attrs

from ._context import RollModifier, RollRequest, RuleContext
from ._effects import apply_damage
from ._errors import Refusal
from ._events import AttackMade, Damaged, Decision
from ._reactions import DECLINE, AttackMoment, AttackTrigger, offer_reaction
from ._types import DYING, PARALYZED, STABLE, UNCONSCIOUS, Attack, Creature


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
) -> bool | None:
    """Roll one attack and its damage. Returns whether it hit, or ``None`` when it waits
    for a reaction decision (``zonekeep_attack_reactions``; :func:`resume_attack`
    finishes it once the decision closes). ``extra`` adds sources of advantage or
    disadvantage of the caller's own (a multiattack's disadvantaged attack)."""
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
    trigger = AttackTrigger(
        attacker.id,
        target.id,
        attack.name,
        reaction=reaction,
        extra=tuple(extra),
        redirected=redirected is not None,
    )
    return _go_on(ctx, trigger)


def resume_attack(ctx: RuleContext, decision: Decision, choice: tuple[str, ...]) -> bool | None:
    """Resume the attack a reaction decision interrupted, once it closed with
    ``choice``: a taken reaction is carried out first (``zonekeep_reaction_taken``).
    Returns whether it hit, ``None`` while it waits again (or was cancelled)."""
    trigger = AttackTrigger.from_data(decision.trigger or {})
    if trigger is None:
        return None
    s = ctx.state
    if choice and choice[0] != DECLINE:
        outcome = ctx.hook.zonekeep_reaction_taken(ctx=ctx, decision=decision, choice=choice)
        if outcome is not None:
            if outcome.cancel:
                return None
            trigger = attrs.evolve(
                trigger,
                ac_bonus=trigger.ac_bonus + outcome.ac_bonus,
                damage_cuts=(
                    *trigger.damage_cuts,
                    *([(decision.kind, None)] if outcome.halve_damage else []),
                    *(
                        [(decision.kind, outcome.damage_reduction)]
                        if outcome.damage_reduction > 0
                        else []
                    ),
                ),
            )
            if outcome.disadvantage and trigger.moment == "targeted":
                trigger = attrs.evolve(
                    trigger, extra=(*trigger.extra, RollModifier("disadvantage", decision.kind))
                )
            if outcome.roll_penalty > 0 and trigger.roll is not None and trigger.moment == "hit":
                penalty = outcome.roll_penalty
                trigger = attrs.evolve(
                    trigger,
                    roll=attrs.evolve(
                        trigger.roll,
                        modifier=trigger.roll.modifier - penalty,
                        total=trigger.roll.total - penalty,
                        sources=(*trigger.roll.sources, f"penalty:{decision.kind} -{penalty}"),
                    ),
                )
            other = s.creatures.get(outcome.target or "")
            if (
                trigger.moment == "targeted"
                and other is not None
                and not other.out_of_fight
                and other.id != trigger.attacker
            ):
                trigger = attrs.evolve(trigger, target=other.id, redirected=True)
    if trigger.roll is not None and trigger.roll.draws:
        # The decision that carried the roll recorded its dice: the attack_made event
        # carries them without their draws (a die is recorded once).
        trigger = attrs.evolve(trigger, roll=attrs.evolve(trigger.roll, draws=()))
    attacker, target = s.creatures.get(trigger.attacker), s.creatures.get(trigger.target)
    if (
        attacker is None
        or target is None
        or attacker.out_of_fight
        or target.out_of_fight
        or attacker.attack(trigger.attack) is None
    ):
        return None  # the fight moved on while the reaction was awaited (the GM's doing)
    return _go_on(ctx, trigger)


def _offered(
    ctx: RuleContext,
    trigger: AttackTrigger,
    total: int | None,
    ac: int | None,
    attack: Attack | None = None,
    moment: AttackMoment | None = None,
) -> bool:
    """Open the first reaction offered at the trigger's moment (or at ``moment``, the
    next one: nobody asked at it yet) not yet asked, if any (``attack``: the attacker's
    attack, when the caller has it at hand)."""
    s = ctx.state
    if moment is None or moment == trigger.moment:
        moment, asked_before = trigger.moment, trigger.asked
    else:
        asked_before = ()
    attacker, target = s.creatures[trigger.attacker], s.creatures[trigger.target]
    if attack is None:
        attack = attack_of(ctx, attacker, trigger.attack)
    answers = ctx.hook.zonekeep_attack_reactions(
        ctx=ctx,
        attacker=attacker,
        target=target,
        attack=attack,
        moment=moment,
        total=total,
        ac=ac,
    )
    for offers in answers:
        for offer in offers or ():
            reactor = s.creatures.get(offer.creature)
            if (
                reactor is None
                or reactor.id in asked_before
                or reactor.out_of_fight
                or reactor.incapacitated
                or not s.has_reaction(reactor.id)
            ):
                continue
            asked = attrs.evolve(trigger, moment=moment, asked=(*asked_before, reactor.id))
            offer_reaction(ctx, offer, asked.to_data())
            return True
    return False


def _declared(ctx: RuleContext, trigger: AttackTrigger) -> AttackTrigger:
    """The attack declared against its target (``zonekeep_before_attack``: its checks, a
    melee attack's engagement), once per target: before any reaction is offered, so that
    an attack the rules refuse opens no decision. Against a target a reaction chose (a
    Redirect Attack's goblin) that the rules refuse, it stays on the one declared."""
    if trigger.declared == trigger.target:
        return trigger
    s = ctx.state
    attacker, target = s.creatures[trigger.attacker], s.creatures[trigger.target]
    attack = attack_of(ctx, attacker, trigger.attack)
    if trigger.declared is None:  # the attack's own target: a refusal refuses the command
        ctx.hook.zonekeep_before_attack(
            ctx=ctx, attacker=attacker, target=target, attack=attack, reaction=trigger.reaction
        )
        return attrs.evolve(trigger, declared=target.id)
    try:
        ctx.hook.zonekeep_before_attack(
            ctx=ctx, attacker=attacker, target=target, attack=attack, reaction=trigger.reaction
        )
    except Refusal:
        return attrs.evolve(trigger, target=trigger.declared)
    return attrs.evolve(trigger, declared=target.id)


def _go_on(ctx: RuleContext, trigger: AttackTrigger) -> bool | None:
    """Play the attack from where ``trigger`` stands to its end, or to the next reaction
    decision it waits for."""
    s = ctx.state
    if trigger.moment == "targeted":
        trigger = _declared(ctx, trigger)
        # A redirected attack is not redirected again: no more offers once it is.
        if not trigger.redirected and _offered(ctx, trigger, None, None):
            return None
        trigger = _declared(ctx, trigger)
        attacker, target = s.creatures[trigger.attacker], s.creatures[trigger.target]
        attack = attack_of(ctx, attacker, trigger.attack)
        request = RollRequest(
            "attack", attacker.id, target.id, attack_kind=attack.kind, attack=attack.name
        )
        result = ctx.roll("d20", request, bonus=attack.bonus, extra=trigger.extra)
        bonuses = ctx.hook.zonekeep_armor_class_bonus(
            ctx=ctx, target=target, attacker=attacker, attack=attack
        )
        ac = target.ac + sum(b for b in bonuses if b) + trigger.ac_bonus
        natural = result.natural
        threshold = _critical_threshold(ctx, attacker, attack)
        if target.actions and natural not in (1, 20) and natural < threshold and result.total >= ac:
            bonus = ctx.hook.zonekeep_hit_reaction(
                ctx=ctx, attacker=attacker, target=target, attack=attack, total=result.total, ac=ac
            )
            ac += bonus or 0
        trigger = attrs.evolve(trigger, moment="hit", asked=(), roll=result, ac=ac, ac_bonus=0)
    assert trigger.roll is not None
    return _hit_or_miss(ctx, trigger)


def _hit_or_miss(ctx: RuleContext, trigger: AttackTrigger) -> bool | None:
    s = ctx.state
    attacker, target = s.creatures[trigger.attacker], s.creatures[trigger.target]
    attack = attack_of(ctx, attacker, trigger.attack)
    result = trigger.roll
    assert result is not None
    ac = trigger.ac + trigger.ac_bonus
    natural = result.natural
    threshold = _critical_threshold(ctx, attacker, attack)
    if trigger.moment == "hit":
        would_hit = natural != 1 and natural < threshold and result.total >= ac
        if would_hit and _offered(ctx, trigger, result.total, ac, attack):
            return None
    hit = natural >= threshold or (natural != 1 and result.total >= ac)
    # A hit: the reactions to its damage (an Uncanny Dodge), before it is rolled.
    if hit and _offered(ctx, trigger, result.total, ac, attack, "damage"):
        return None
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
        trigger.reaction,
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
            cuts=trigger.damage_cuts,
        )
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
