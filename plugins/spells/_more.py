"""More SRD 5.1 spells of levels 0-3 (issue 31): the templates and riders the first
spells did not need. Part of the ``zonekeep.spells`` plugin, with the public SDK only;
each hook implementation has a name of its own (``more_...``) and names its hook with
``specname``.

- Templates (a :class:`Spell`'s ``how``): ``saves`` (acid splash: up to ``targets``
  creatures of one zone save, one damage roll for those that fail), ``heals`` (mass
  healing word: up to ``targets`` creatures, one roll), ``stabilize`` (spare the dying),
  ``mark`` (hunter's mark, true strike: a condition on one creature, no save, its
  source the caster), ``cure`` (lesser restoration: ends the first of its ``choices``
  the target has), ``revive`` (revivify: a defeated creature at 0 hit points is
  back with 1) and ``toughen`` (aid: the hit point maximum and hit points of up to
  ``targets`` creatures rise, as the caster's ``override_applied`` events, and they
  get ``aided``, so that a second casting is refused).
- Riders, by the spell's attack: chill touch's ``chilled`` (no healing until the start
  of the caster's next turn), acid arrow's ``acid-burned`` (its later dice, in the
  effect's source ``<caster>:<dice>``, at the end of the target's next turn; half the
  first dice on a miss), vampiric touch's healing (half the necrotic damage dealt).
- Conditions: ``divine-favor`` and ``hunters-mark`` (more damage on a weapon hit: any
  attack that is not a spell's), ``true-struck`` (advantage on the caster's first
  attack roll against it on its next turn), ``charmed`` (it cannot attack its charmer;
  harm from the charmer's side ends it), ``mage-armor`` (AC at least 13 + Dex), ``jumping`` (three times the long jump),
  ``poison-warded`` (resistance to poison), ``hopeful`` (advantage on Wisdom
  saves, the most healing from the plugin's healing spells). Hideous laughter knocks
  prone who it incapacitates; a hypnotic pattern charms who it incapacitates, and
  both end on damage; invisibility
  from the spell ends when its creature attacks or casts a spell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from zonekeep.sdk import (
    DEFEATED,
    DYING,
    STABLE,
    ActionTaken,
    Attack,
    AttackMade,
    AttackTrigger,
    Command,
    CommandSpec,
    ConditionEffect,
    ConditionEffectEnded,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    Dashed,
    Decision,
    EncounterState,
    Healed,
    OverrideApplied,
    Param,
    ReactionOffer,
    ReactionOutcome,
    ResourceSpent,
    RollModifier,
    RollRecord,
    RollRequest,
    RuleContext,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    hookimpl,
    parse_dice,
    saving_throw,
)

from . import (
    CONCENTRATING,
    SPELLS,
    _ability_mod,
    _control,
    _left,
    _reach,
    _slot_key,
    _spell_attack,
    _targets,
    _zone_reach,
    attack_bonus,
    begin_concentration,
    cantrip_tier,
    concentration_of,
    end_concentration,
    save_dc,
    scaled,
    spells_of,
    upcast_dice,
)
from . import (
    _reaches as _in_zone_reach,
)
from .catalog import Spell

__all__ = [
    "more_after_damage",
    "more_armor_class_bonus",
    "more_attack_made",
    "more_attack_reactions",
    "more_before_attack",
    "more_commands",
    "more_conditions",
    "more_jump_distance",
    "more_modify_damage",
    "more_reaction_taken",
    "more_roll_modifiers",
    "more_turn_end",
]

#: The conditions these spells give, and what each does.
CONDITIONS: Final[dict[str, str]] = {
    "chilled": "Chill Touch: it regains no hit points from the spells plugin's healing.",
    "true-struck": "True Strike: its caster's first attack roll against it next turn has "
    "advantage.",
    "charmed": "Charmed: it cannot attack its charmer; harm from the charmer's side ends it.",
    "divine-favor": "Divine Favor: its weapon hits deal 1d4 radiant more.",
    "hunters-mark": "Hunter's Mark: its marker's weapon hits deal 1d6 more against it.",
    "mage-armor": "Mage Armor: its AC is at least 13 + its Dexterity modifier.",
    "acid-burned": "Acid Arrow: more acid damage at the end of its next turn.",
    "poison-warded": "Protection from Poison: advantage on saves against being poisoned, "
    "resistance to poison damage.",
    "enfeebled": "Ray of Enfeeblement: half damage with its Strength weapon attacks.",
    "warded-bond": "Warding Bond: +1 AC, resistance to all damage; its warder takes the same.",
    "jumping": "Jump: its long jumps go three times as far.",
    "retreating": "Expeditious Retreat: it may Dash as a bonus action (retreat_dash).",
    "flame-blade": "Flame Blade: it holds a fiery blade to attack with (flame_blade).",
    "aided": "Aid: its hit point maximum and hit points are higher (the spell's 5 or more).",
    "hopeful": "Beacon of Hope: advantage on Wisdom saves; the most from healing spells.",
}

Resolver = Callable[[RuleContext, Creature, Spell, int, Mapping[str, Any]], None]


_NAMES: list[frozenset[str]] = []


def _weapon(attack: Attack) -> bool:
    """A weapon attack: any attack that is not a spell's."""
    if not _NAMES:
        _NAMES.append(frozenset(s.name for s in SPELLS.values()))
    return attack.name not in _NAMES[0]


def _effects(state: EncounterState, creature_id: str, condition: str) -> list[ConditionEffect]:
    return [
        e
        for e in state.condition_effects.values()
        if e.creature == creature_id and e.condition == condition
    ]


def _from_spell(state: EncounterState, effect: ConditionEffect, name: str) -> bool:
    """Whether ``effect`` hangs on a concentration on the spell called ``name`` (its
    source: the name, with the level it was cast at: ``_control.spell_source``)."""
    parent = state.condition_effects.get(effect.parent or "")
    if parent is None or parent.condition != CONCENTRATING or parent.source is None:
        return False
    named = _control.spell_level(parent.source)
    return (named[0] if named else parent.source) == name


def _end(ctx: RuleContext, effect: ConditionEffect, reason: str) -> None:
    ctx.emit(ConditionEffectEnded(effect.id, effect.creature, effect.condition, reason))


# -- templates ----------------------------------------------------------------------------------


def _distinct(ctx: RuleContext, spell: Spell, targets: list[Creature], most: int) -> None:
    if not 1 <= len(targets) <= most:
        ctx.refuse(
            "too_many_targets" if targets else "invalid_params",
            f"{spell.name} takes 1 to {most} target{'s' if most > 1 else ''}.",
        )
    if len({t.id for t in targets}) != len(targets):
        ctx.refuse("invalid_params", "Each target is chosen once.")


def _saves(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, spell.targets)
    if len({t.zone for t in targets}) > 1:
        ctx.refuse("invalid_target", f"{spell.name}'s targets must share one zone.")
    for target in targets:
        if target.id == me.id:
            ctx.refuse("invalid_target", f"{me.name} cannot aim {spell.name} at itself.")
        _reach(ctx, me, target, spell, spell.range)
    assert spell.save is not None and spell.damage is not None
    dc = save_dc(me)
    failed = [
        t for t in targets if not saving_throw(ctx, t, spell.save, dc, spell.name, magical=True)
    ]
    if not failed:
        return
    dice = scaled(spell.damage, cantrip_tier(me)) if spell.cantrip else upcast_dice(spell, slot)
    assert dice is not None
    roll = ctx.roll(dice)  # one roll for every target
    for target in failed:
        apply_damage(
            ctx,
            ctx.state.creatures[target.id],
            roll.total,
            damage_type=spell.damage_type,
            roll=roll,
            source=me.id,
        )


def heal_amount(target: Creature, dice: str, total: int, bonus: int) -> int:
    """What a healing spell's roll gives ``target``: nothing when it is ``chilled``,
    the dice's most when it is ``hopeful``."""
    if "chilled" in target.conditions:
        return 0
    if "hopeful" in target.conditions:
        parsed = parse_dice(dice)
        return max(0, parsed.count * parsed.sides + parsed.modifier + bonus)
    return max(0, total)


def heal(
    ctx: RuleContext,
    me: Creature,
    target: Creature,
    spell: Spell,
    amount: int,
    roll: RollRecord | None = None,
) -> None:
    """Heal ``target`` by ``amount`` (at most to its maximum); a dying or stable
    creature brought above 0 hit points is neither any more. ``roll`` (the healing's
    dice) goes into the ``healed`` event (recorded once when several share it)."""
    hp = max(target.hp, min(target.max_hp, target.hp + amount))
    ctx.emit(Healed(target.id, amount, hp, me.id, roll=roll))
    for condition in (DYING, STABLE):
        if hp > 0 and condition in target.conditions:
            ctx.emit(ConditionRemoved(target.id, condition, f"healed by {spell.name}"))


def _heals(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, spell.targets)
    for target in targets:
        _reach(ctx, me, target, spell, spell.range)
    dice = upcast_dice(spell, slot)
    assert dice is not None
    bonus = _ability_mod(me)
    roll = ctx.roll(dice, bonus=bonus)  # one roll for every target
    for target in targets:
        target = ctx.state.creatures[target.id]
        heal(ctx, me, target, spell, heal_amount(target, dice, roll.total, bonus), roll)


def _stabilize(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, 1)
    target = targets[0]
    if DYING not in target.conditions:
        ctx.refuse("invalid_target", f"{target.name} is not dying.")
    _reach(ctx, me, target, spell, spell.range)
    ctx.emit(ConditionRemoved(target.id, DYING, f"stabilized by {spell.name}"))
    apply_condition(ctx, target.id, STABLE, me.id)


def _concentrate(ctx: RuleContext, me: Creature, spell: Spell) -> str:
    """Concentration on ``spell``; true strike's lasts until the end of the caster's
    next turn (its one round)."""
    if spell.id != "true-strike":
        return begin_concentration(ctx, me, spell)
    end_concentration(ctx, me.id, f"{me.name} began concentrating on {spell.name}")
    eid = apply_timed_condition(
        ctx, me.id, CONCENTRATING, until="end", of=me.id, source=spell.name, override=True
    )
    assert eid is not None
    return eid


def _mark(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, 1)
    target = targets[0]
    if target.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} cannot aim {spell.name} at itself.")
    _reach(ctx, me, target, spell, spell.range)
    assert spell.condition is not None
    parent = _concentrate(ctx, me, spell) if spell.concentration else None
    apply_timed_condition(
        ctx,
        target.id,
        spell.condition,
        rounds=None if parent else spell.rounds,
        source=me.id,
        parent=parent,
    )


def cure(ctx: RuleContext, target: Creature, condition: str, reason: str) -> None:
    """End ``condition`` on ``target``: every effect giving it, and the plain one."""
    for effect in _effects(ctx.state, target.id, condition):
        _end(ctx, effect, reason)
    if condition in ctx.state.creatures[target.id].conditions:
        ctx.emit(ConditionRemoved(target.id, condition, reason))


def _cure(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, 1)
    target = targets[0]
    _reach(ctx, me, target, spell, spell.range)
    held = [c for c in spell.choices if c in target.conditions]
    if not held:
        ctx.refuse(
            "invalid_target", f"{target.name} is not {' or '.join(spell.choices)}: nothing to end."
        )
    cure(ctx, target, held[0], f"ended by {spell.name}")


def _toughen(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, spell.targets)
    assert spell.damage is not None and spell.condition is not None
    for target in targets:
        _reach(ctx, me, target, spell, spell.range)
        if spell.condition in target.conditions:
            ctx.refuse("invalid_target", f"{target.name} already has {spell.name}.")
    gain = int(spell.damage) * (1 + slot - spell.level)
    for target in targets:
        now = ctx.state.creatures[target.id]
        ctx.emit(OverrideApplied(me.id, now.id, "max_hp", now.max_hp + gain))
        ctx.emit(OverrideApplied(me.id, now.id, "hp", now.hp + gain))
        apply_timed_condition(ctx, now.id, spell.condition, rounds=spell.rounds, source=me.id)


def _ray(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """A spell attack that deals no damage: a hit gives the spell's condition, saved
    against at the end of each of the target's turns (and ended with concentration)."""
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, 1)
    target = targets[0]
    if target.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} cannot aim {spell.name} at itself.")
    _reach(ctx, me, target, spell, spell.range)
    attack = Attack(spell.name, "ranged", attack_bonus(me), range=spell.range, magical=True)
    ctx.hook.zonekeep_before_attack(
        ctx=ctx, attacker=me, target=target, attack=attack, reaction=False
    )
    request = RollRequest("attack", me.id, target.id, attack_kind="ranged", attack=spell.name)
    result = ctx.roll("d20", request, bonus=attack.bonus)
    bonuses = ctx.hook.zonekeep_armor_class_bonus(
        ctx=ctx, target=target, attacker=me, attack=attack
    )
    ac = target.ac + sum(b for b in bonuses if b)
    hit = result.natural == 20 or (result.natural != 1 and result.total >= ac)
    made = AttackMade(me.id, target.id, spell.name, "ranged", result, ac, hit, False, False)
    ctx.emit(made)
    if hit:
        assert spell.condition is not None and spell.save is not None
        parent = begin_concentration(ctx, me, spell) if spell.concentration else None
        apply_timed_condition(
            ctx,
            target.id,
            spell.condition,
            rounds=None if parent else spell.rounds,
            save=spell.save,
            dc=save_dc(me),
            save_when="end",
            source=me.id,
            parent=parent,
        )
    state = ctx.state
    ctx.hook.zonekeep_attack_made(
        ctx=ctx,
        attacker=state.creatures[me.id],
        target=state.creatures[target.id],
        attack=attack,
        result=made,
        damage=None,
    )


def _revive(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    _distinct(ctx, spell, targets, 1)
    target = targets[0]
    if DEFEATED not in target.conditions or target.hp > 0:
        ctx.refuse("invalid_target", f"{target.name} is not defeated at 0 hit points.")
    _zone_reach(ctx, me, target.zone, spell.range, spell, target.name)
    ctx.emit(ConditionRemoved(target.id, DEFEATED, f"brought back by {spell.name}"))
    heal(ctx, me, ctx.state.creatures[target.id], spell, 1)


def _blade(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """The caster holds the spell's weapon: its condition, the dice in its source
    (``<caster>:<dice>``), held by concentration."""
    if _targets(ctx, p) or p.get("zone") is not None:
        ctx.refuse("invalid_params", f"{spell.name} takes no target: it is the caster's.")
    assert spell.damage is not None and spell.condition is not None
    base = parse_dice(spell.damage)
    dice = f"{base.count + (slot - spell.level) // 2}d{base.sides}"
    parent = begin_concentration(ctx, me, spell)
    apply_timed_condition(ctx, me.id, spell.condition, source=f"{me.id}:{dice}", parent=parent)


#: The templates of this module, by ``how``.
RESOLVERS: Final[dict[str, Resolver]] = {
    "saves": _saves,
    "heals": _heals,
    "stabilize": _stabilize,
    "mark": _mark,
    "cure": _cure,
    "toughen": _toughen,
    "ray": _ray,
    "revive": _revive,
    "blade": _blade,
}


def before_cast(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    """Casting a spell ends the caster's Invisibility; a concentration spell resolved
    as an attack (vampiric touch) starts its concentration. Warding bond is for
    another creature."""
    if spell.id == "warding-bond" and any(t.id == me.id for t in _targets(ctx, p) or [me]):
        ctx.refuse("invalid_target", f"{me.name} cannot bond itself: touch another creature.")
    for effect in _effects(ctx.state, me.id, "invisible"):
        if _from_spell(ctx.state, effect, "Invisibility"):
            _end(ctx, effect, f"{me.name} cast {spell.name}")
    if spell.how == "attack" and spell.concentration:
        begin_concentration(ctx, ctx.state.creatures[me.id], spell)


def after_cast(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    """Hideous laughter knocks prone each creature it incapacitated, a hypnotic
    pattern charms them too; protection from poison ends the target's poisoning;
    expeditious retreat Dashes."""
    if spell.id == "hideous-laughter":
        held = concentration_of(ctx.state, me.id)
        for target in _targets(ctx, p):
            laughing = any(
                e.parent == held for e in _effects(ctx.state, target.id, "incapacitated")
            )
            if laughing and "prone" not in ctx.state.creatures[target.id].conditions:
                apply_condition(ctx, target.id, "prone", spell.name)
    if spell.id == "hypnotic-pattern":
        held = concentration_of(ctx.state, me.id)
        for target in _targets(ctx, p):
            if any(e.parent == held for e in _effects(ctx.state, target.id, "incapacitated")):
                apply_timed_condition(ctx, target.id, "charmed", source=me.id, parent=held)
    if spell.id == "expeditious-retreat":
        ctx.emit(Dashed(me.id))
    if spell.id == "protection-from-poison":
        for target in _targets(ctx, p) or [me]:
            if "poisoned" in ctx.state.creatures[target.id].conditions:
                cure(ctx, ctx.state.creatures[target.id], "poisoned", f"ended by {spell.name}")


# -- hooks --------------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_conditions")
def more_conditions() -> Iterable[ConditionSpec]:
    return tuple(
        ConditionSpec(cid, summary, durations=("rounds", "turn_start", "turn_end", "until_removed"))
        for cid, summary in CONDITIONS.items()
    )


@hookimpl(specname="zonekeep_armor_class_bonus")
def more_armor_class_bonus(
    ctx: RuleContext, target: Creature, attacker: Creature, attack: Attack
) -> int | None:
    bonus = 1 if "warded-bond" in target.conditions else 0
    if "mage-armor" in target.conditions:
        bonus += max(0, 13 + target.dex_mod - target.ac)
    return bonus or None


@hookimpl(specname="zonekeep_jump_distance")
def more_jump_distance(ctx: RuleContext, creature: Creature, running: bool) -> int | None:
    """Jump triples the long jump the movement rules allow: the Strength score (10 + 2
    x the Strength save bonus) after a run-up, half without."""
    if "jumping" not in creature.conditions:
        return None
    score = max(1, 10 + 2 * creature.saves.get("str", 0))
    return 3 * (score if running else score // 2)


@hookimpl(specname="zonekeep_before_attack")
def more_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if "charmed" not in attacker.conditions or reaction:
        return
    for effect in _effects(ctx.state, attacker.id, "charmed"):
        if effect.source == target.id:
            ctx.refuse(
                "charmed", f"{attacker.name} is charmed by {target.name}: it cannot attack it."
            )


def _rider(
    ctx: RuleContext, attacker: Creature, target: Creature, dice: str, kind: str, made: AttackMade
) -> None:
    roll = ctx.roll(dice, double_dice=made.critical)
    apply_damage(
        ctx,
        ctx.state.creatures[target.id],
        roll.total,
        damage_type=kind,
        roll=roll,
        source=attacker.id,
        attacker=attacker.id,
        attack=made.attack,
        critical=made.critical,
    )


@hookimpl(specname="zonekeep_attack_made")
def more_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    state = ctx.state
    if "invisible" in attacker.conditions:
        for effect in _effects(state, attacker.id, "invisible"):
            if _from_spell(state, effect, "Invisibility"):
                _end(ctx, effect, f"{attacker.name} attacked")
    if "true-struck" in target.conditions:
        for effect in _effects(state, target.id, "true-struck"):
            if effect.source == attacker.id and _next_turn(state, attacker.id, effect):
                end_concentration(ctx, attacker.id, f"{attacker.name} made its true strike")
    if attack.name == "Acid Arrow":
        _acid_arrow(ctx, attacker, target, attack, result)
    if not result.hit or state.creatures[target.id].out_of_fight:
        return
    if attack.name == "Chill Touch":
        apply_timed_condition(
            ctx, target.id, "chilled", until="start", of=attacker.id, source=attacker.id
        )
    if attack.name == "Vampiric Touch" and damage is not None and damage.amount > 0:
        me = state.creatures[attacker.id]
        amount = 0 if "chilled" in me.conditions else damage.amount // 2
        heal(ctx, me, me, SPELLS["vampiric-touch"], amount)
    favored = "divine-favor" in state.creatures[attacker.id].conditions
    if not (favored or "hunters-mark" in target.conditions) or not _weapon(attack):
        return
    if favored:
        _rider(ctx, attacker, target, "1d4", "radiant", result)
    marked = any(e.source == attacker.id for e in _effects(state, target.id, "hunters-mark"))
    if marked and not state.creatures[target.id].out_of_fight:
        _rider(ctx, attacker, target, "1d6", attack.damage_type, result)


def _acid_arrow(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, made: AttackMade
) -> None:
    first = parse_dice(attack.damage)
    if not made.hit:
        roll = ctx.roll(attack.damage)
        apply_damage(
            ctx,
            ctx.state.creatures[target.id],
            roll.total // 2,
            damage_type="acid",
            roll=roll,
            source=attacker.id,
        )
        return
    if not ctx.state.creatures[target.id].out_of_fight:
        later = f"{first.count - 2}d{first.sides}"  # 4d4 now, 2d4 later: +1d4 to each
        apply_timed_condition(
            ctx, target.id, "acid-burned", source=f"{attacker.id}:{later}", override=True
        )


@hookimpl(specname="zonekeep_turn_end")
def more_turn_end(ctx: RuleContext, creature: Creature) -> None:
    """Acid arrow's later damage, at the end of the target's next turn."""
    if "acid-burned" not in creature.conditions:
        return
    for effect in _effects(ctx.state, creature.id, "acid-burned"):
        caster, _, dice = effect.source.rpartition(":")
        _end(ctx, effect, "its acid burned at the end of its turn")
        now = ctx.state.creatures[creature.id]
        if now.out_of_fight:
            continue
        roll = ctx.roll(dice)
        apply_damage(ctx, now, roll.total, damage_type="acid", roll=roll, source=caster)


def _next_turn(state: EncounterState, creature_id: str, effect: ConditionEffect) -> bool:
    """Whether it is ``creature_id``'s turn, and not the one ``effect`` began in."""
    same = effect.applied_round == state.round and effect.applied_turn == creature_id
    return state.active == creature_id and not same


@hookimpl(specname="zonekeep_roll_modifiers")
def more_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    state = ctx.state
    actor = state.creatures.get(roll.actor)
    if actor is None or roll.kind not in ("attack", "save"):
        return None
    found: list[RollModifier] = []
    target = state.creatures.get(roll.target or "")
    if roll.kind == "attack" and target is not None and "true-struck" in target.conditions:
        for effect in _effects(state, target.id, "true-struck"):
            if effect.source == actor.id and _next_turn(state, actor.id, effect):
                found.append(RollModifier("advantage", "true strike"))
    if roll.kind == "save":
        active = state.creatures.get(state.active or "") if "charmed" in roll.against else None
        if active is not None and active.side != actor.side:
            found.append(RollModifier("advantage", "charm: its side is fighting the caster's"))
        if roll.ability == "wis" and "hopeful" in actor.conditions:
            found.append(RollModifier("advantage", "beacon of hope"))
        if "poisoned" in roll.against and "poison-warded" in actor.conditions:
            found.append(RollModifier("advantage", "protection from poison"))
    return found or None


@hookimpl(specname="zonekeep_modify_damage")
def more_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    target = ctx.state.creatures.get(damage.target)
    if target is None:
        return None
    changed = damage
    if damage.damage_type == "poison" and "poison-warded" in target.conditions:
        changed = changed.grant("resistance", "protection from poison")
    if "warded-bond" in target.conditions:
        changed = changed.grant("resistance", "warding bond")
    attacker = ctx.state.creatures.get(damage.attacker or "")
    if attacker is None or "enfeebled" not in attacker.conditions:
        return None if changed is damage else changed
    used = attacker.attack(damage.attack)
    if used is not None and used.kind == "melee" and "finesse" not in used.properties:
        changed = changed.reduce(changed.amount - changed.amount // 2, "ray of enfeeblement")
    return None if changed is damage else changed


@hookimpl(specname="zonekeep_after_damage")
def more_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    """Harm from the charmer's side ends a charm; damage ends a hypnotic trance; a
    warding bond passes the damage to its warder (ending when the warder drops)."""
    if damage.amount <= 0:
        return
    state = ctx.state
    _bond(ctx, creature, damage)
    if "charmed" not in creature.conditions and "incapacitated" not in creature.conditions:
        return
    source = state.creatures.get(damage.source)
    for effect in _effects(state, creature.id, "charmed"):
        charmer = state.creatures.get(effect.source)
        if source is None or charmer is None or source.side != charmer.side:
            continue
        if not _from_spell(state, effect, "Hypnotic Pattern"):
            _end(ctx, effect, f"{source.name} harmed it")
    for condition in ("incapacitated", "charmed"):
        for effect in _effects(state, creature.id, condition):
            if (
                _from_spell(state, effect, "Hypnotic Pattern")
                and effect.id in state.condition_effects
            ):
                _end(ctx, effect, "damage woke it from the pattern")


#: The source of the damage a warding bond passes on (never passed on again).
_BOND = "warding-bond"


def _bond(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    state = ctx.state
    if creature.hp <= 0:
        for effect in list(state.condition_effects.values()):
            if effect.condition == "warded-bond" and effect.source == creature.id:
                _end(ctx, effect, f"{creature.name} dropped to 0 hit points")
    if damage.source.startswith(_BOND) or "warded-bond" not in creature.conditions:
        return
    for effect in _effects(state, creature.id, "warded-bond"):
        warder = ctx.state.creatures.get(effect.source)
        if warder is None or warder.out_of_fight or warder.id == creature.id:
            continue
        apply_damage(ctx, warder, damage.amount, source=f"{_BOND}:{creature.id}")


# -- Hellish Rebuke: a reaction spell, offered as a prompt at a hit ----------------------------

REBUKE = "hellish-rebuke"


def _rebuke_slot(creature: Creature) -> tuple[str, int] | None:
    """The resource a Hellish Rebuke would spend and the slot level it is cast with:
    the lowest slot left (or an innate use), as Shield's."""
    if REBUKE not in spells_of(creature):
        return None
    for slot in range(1, 10):
        key = _slot_key(creature, slot)
        if key is not None:
            return key, slot
    return None


@hookimpl(specname="zonekeep_attack_reactions")
def more_attack_reactions(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    moment: str,
    total: int | None,
    ac: int | None,
) -> Iterable[ReactionOffer] | None:
    """Hellish Rebuke is offered to a caster who knows it when an attack hits it, with
    its reaction and a slot left, the attacker within 60 ft and in sight."""
    if moment != "hit" or REBUKE not in spells_of(target) or attacker.id == target.id:
        return None
    if not ctx.state.has_reaction(target.id) or target.incapacitated or target.out_of_fight:
        return None
    if _rebuke_slot(target) is None or not _in_zone_reach(ctx.state, target, attacker.zone, 60):
        return None
    return (
        ReactionOffer(
            target.id,
            REBUKE,
            f"{attacker.name}'s {attack.name} hits {target.name}. Cast Hellish Rebuke "
            f"(reaction, a spell slot): {attacker.name} makes a Dexterity save or takes 2d10 "
            "fire, half on a success?",
            (REBUKE,),
        ),
    )


@hookimpl(specname="zonekeep_reaction_taken")
def more_reaction_taken(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...]
) -> ReactionOutcome | None:
    if decision.kind != REBUKE or choice[:1] != (REBUKE,):
        return None
    me = ctx.state.creatures.get(decision.creature or "")
    trigger = AttackTrigger.from_data(decision.trigger or {})
    attacker = ctx.state.creatures.get(trigger.attacker) if trigger is not None else None
    if me is None or me.incapacitated or me.out_of_fight or attacker is None:
        return ReactionOutcome()  # it can no longer cast: the attack goes on as it was
    paid = _rebuke_slot(me)
    if paid is None or attacker.out_of_fight:
        return ReactionOutcome()
    key, slot = paid
    spell = SPELLS[REBUKE]
    ctx.emit(ActionTaken(me.id, REBUKE, "reaction"))
    ctx.emit(ResourceSpent(me.id, key, _left(me, key) - 1))
    ok = saving_throw(ctx, attacker, "dex", save_dc(me), spell.name, magical=True)
    dice = upcast_dice(spell, slot)
    assert dice is not None
    roll = ctx.roll(dice)
    amount = roll.total // 2 if ok else roll.total
    if amount > 0:
        apply_damage(
            ctx,
            ctx.state.creatures[attacker.id],
            amount,
            damage_type="fire",
            roll=roll,
            source=me.id,
        )
    return ReactionOutcome()


# -- Expeditious Retreat: a Dash as a bonus action while it lasts ----------------------------


def _retreating(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if "retreating" not in me.conditions:
        return ("no_such_feature", f"{me.name} is not under Expeditious Retreat.")
    return None


def _retreat_dash(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    if "retreating" not in me.conditions:
        ctx.refuse("no_such_feature", f"{me.name} is not under Expeditious Retreat.")
    ctx.emit(Dashed(me.id))


def _holds_blade(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if "flame-blade" not in me.conditions:
        return ("no_such_feature", f"{me.name} holds no flame blade.")
    return None


def _flame_blade(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    held = _effects(ctx.state, me.id, "flame-blade")
    if not held:
        ctx.refuse("no_such_feature", f"{me.name} holds no flame blade.")
    spell = SPELLS["flame-blade"]
    target = ctx.creature(cmd.params["target"], role="target")
    if target.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} cannot attack itself.")
    _reach(ctx, me, target, spell, spell.range)
    dice = held[0].source.rpartition(":")[2]
    attack = Attack(spell.name, "melee", attack_bonus(me), dice, "fire", reach=5, magical=True)
    _spell_attack(ctx, me, target, attack)


@hookimpl(specname="zonekeep_commands")
def more_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "flame_blade",
            _flame_blade,
            "Action: attack with the flame blade (a melee spell attack, 3d6 fire).",
            {
                "creature": Param("creature", True, "the creature holding the blade"),
                "target": Param("creature", True, "the creature attacked"),
            },
            costs=("action",),
            requires=_holds_blade,
        ),
        CommandSpec(
            "retreat_dash",
            _retreat_dash,
            "Bonus action: Dash (Expeditious Retreat).",
            {"creature": Param("creature", True, "the creature under Expeditious Retreat")},
            costs=("bonus",),
            requires=_retreating,
        ),
    )
