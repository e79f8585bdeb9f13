"""The spells that control rather than hurt (issue 31, item 3): Bane, Sleep, Dispel Magic.

Resolved for the ``control`` spells of the catalog by the spells plugin's ``cast``
(``resolve``); the plugin's hooks call in here (``roll_modifiers``, ``after_damage``).

- **Spell levels are recorded**: every effect a spell leaves has as its ``source`` the
  spell's name and the level it was cast at (``"Bane (level 2)"``: :func:`spell_source`),
  on the caster's ``concentrating`` effect for a concentration spell (its effects hang
  on it), on the effect itself otherwise (Sleep's). :func:`spell_level` reads it back:
  Dispel Magic needs it.
- **Bane**: each target that fails its Charisma save gets ``bane``: a penalty die (a d4,
  ``RollModifier("penalty", ...)``) subtracted from its attack rolls and saving throws.
- **Sleep**: one roll of the hit-point pool; the creatures of the area, fewest current
  hit points first, fall ``unconscious`` while the pool covers them; damage wakes them.
- **Dispel Magic**: ends the spells on one creature, by the level they were cast at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from zonekeep.sdk import (
    DECLINE,
    UNCONSCIOUS,
    ActionTaken,
    Command,
    CommandSpec,
    ConditionEffect,
    ConditionEffectEnded,
    Creature,
    Damaged,
    Dashed,
    Decision,
    Disengaged,
    EncounterState,
    MovementSpent,
    Param,
    ReactionOffer,
    Refusal,
    ResourceRestored,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    ZoneAffected,
    ability_check,
    apply_timed_condition,
    make_attack,
    offer_reaction,
    saving_throw,
)

from .catalog import Spell

#: The condition of a creature that failed its save against Bane, and its penalty die.
BANE: Final = "bane"
BANE_DIE: Final = 4
#: The source prefix of Sleep's effects: damage ends them.
SLEEP: Final = "Sleep"

_LEVEL = re.compile(r"^(?P<name>.+) \(level (?P<level>[1-9])\)$")


def spell_source(spell: Spell, slot: int) -> str:
    """The ``source`` a spell's effect records: its name and the level it was cast at."""
    return f"{spell.name} (level {max(slot, spell.level)})"


def spell_level(source: str) -> tuple[str, int] | None:
    """``(name, level)`` of a spell's effect source (:func:`spell_source`), else None."""
    found = _LEVEL.match(source)
    return (found["name"], int(found["level"])) if found else None


def resolve(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Cast the ``control`` spell ``spell`` (its slot already spent)."""
    resolvers = {
        "bane": _bane,
        "sleep": _sleep,
        "dispel-magic": _dispel,
        "haste": _haste,
        "slow": _slow,
    }
    resolvers[spell.id](ctx, me, spell, slot, p)


# -- Bane -----------------------------------------------------------------------------------


def _bane(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    from . import _against, _reach, _targets, begin_concentration, save_dc

    targets = _targets(ctx, p)
    most = spell.targets + max(0, slot - spell.level)
    if not 1 <= len(targets) <= most:
        ctx.refuse(
            "too_many_targets" if targets else "invalid_params",
            f"{spell.name} at level {slot} takes 1 to {most} targets.",
        )
    if len({t.id for t in targets}) != len(targets):
        ctx.refuse("invalid_params", "Each target is chosen once.")
    for target in targets:
        _reach(ctx, me, target, spell, spell.range)
    assert spell.save is not None and spell.condition is not None
    parent = begin_concentration(ctx, me, spell, slot)
    dc = save_dc(me)
    for target in targets:
        target = ctx.state.creatures[target.id]
        if saving_throw(ctx, target, spell.save, dc, spell.name, **_against(spell)):
            continue
        apply_timed_condition(ctx, target.id, spell.condition, source=me.id, parent=parent)


def roll_modifiers(ctx: RuleContext, roll: RollRequest) -> list[RollModifier]:
    """Bane's penalty die on the attack rolls and saving throws of a creature under it;
    Haste's advantage and Slow's -2 on Dexterity saves."""
    actor = ctx.state.creatures.get(roll.actor)
    if actor is None:
        return []
    found = []
    if roll.kind in ("attack", "save") and BANE in actor.conditions:
        found.append(RollModifier("penalty", "bane", die=BANE_DIE))
    if roll.kind == "save" and roll.ability == "dex":
        if HASTED in actor.conditions:
            found.append(RollModifier("advantage", "haste"))
        if SLOWED in actor.conditions:
            found.append(RollModifier("bonus", "slow", value=-2))
    return found


def armor_class_bonus(target: Creature) -> int:
    """Haste's +2 and Slow's -2 to AC."""
    return (2 if HASTED in target.conditions else 0) - (2 if SLOWED in target.conditions else 0)


# -- Sleep ----------------------------------------------------------------------------------


def _sleep(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    from . import _zone_reach, area_most, area_reach, area_zones, upcast_dice

    assert spell.shape is not None and spell.condition is not None
    if p.get("target") is not None or p.get("targets"):
        ctx.refuse(
            "invalid_params",
            f"{spell.name} chooses no targets: aim it at a zone; the creatures there with "
            "the fewest hit points fall asleep first.",
        )
    zone = p.get("zone") or me.zone
    arena = ctx.state.arena
    if not isinstance(zone, str) or not arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {zone!r} to aim {spell.name} at.")
    _zone_reach(ctx, me, zone, area_reach(spell), spell, arena.zone(zone).name)
    affected = area_zones(ctx, spell, zone)
    maximum = area_most(ctx, spell)
    found = [
        c
        for z in affected
        for c in ctx.state.in_zone(z)
        if c.id != me.id
        and not c.hidden
        and not c.out_of_fight
        and c.hp > 0
        and UNCONSCIOUS not in c.conditions
        and "charmed" not in c.condition_immunities
        and not any(t.id.rsplit(".", 1)[-1] == "fey-ancestry" for t in c.traits)
        and UNCONSCIOUS not in c.condition_immunities
    ]
    found.sort(key=lambda c: c.hp)  # stable: ties keep the zones' order
    dice = upcast_dice(spell, slot)
    assert dice is not None
    source = spell_source(spell, slot)
    rolled = ctx.roll(dice)  # one roll: the hit points the spell can put to sleep
    ctx.emit(ZoneAffected(zone, roll=rolled, source=source))  # (its dice in the log)
    pool = rolled.total
    for creature in found[:maximum]:
        if creature.hp > pool:
            break  # the next has at least as many hit points: none more falls asleep
        pool -= creature.hp
        apply_timed_condition(ctx, creature.id, spell.condition, rounds=spell.rounds, source=source)


def after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    """Damage wakes a creature Sleep put to sleep."""
    if damage.amount <= 0:
        return
    for effect in list(ctx.state.condition_effects.values()):
        named = spell_level(effect.source)
        if effect.creature == creature.id and named is not None and named[0] == SLEEP:
            ctx.emit(
                ConditionEffectEnded(
                    effect.id, creature.id, effect.condition, f"{creature.name} took damage"
                )
            )


# -- Dispel Magic ---------------------------------------------------------------------------


def spells_on(ctx: RuleContext, creature_id: str) -> list[tuple[ConditionEffect, str, int]]:
    """The spells on ``creature_id``: ``(effect, name, level)`` of the effect that holds
    each (the caster's ``concentrating`` one for a concentration spell), each once."""
    from . import CONCENTRATING

    effects = ctx.state.condition_effects
    found: dict[str, tuple[ConditionEffect, str, int]] = {}
    for effect in effects.values():
        if effect.creature != creature_id or effect.condition == CONCENTRATING:
            continue
        holder = effects.get(effect.parent or "") if effect.parent else effect
        if holder is None:
            continue
        named = spell_level(holder.source)
        if named is not None and holder.id not in found:
            found[holder.id] = (holder, *named)
    return list(found.values())


def _dispel(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    from . import CONCENTRATING, _one_target, end_concentration

    target = _one_target(ctx, me, spell, p)
    ability = casting_ability(me)
    for holder, name, level in spells_on(ctx, target.id):
        if ctx.state.condition_effects.get(holder.id) is None:
            continue  # it ended with another one
        if level > slot:
            dc = 10 + level
            why = f"{spell.name} against {name}"
            if not ability_check(
                ctx, ctx.state.creatures[me.id], ability, dc=dc, source=why
            ).success:
                continue
        reason = f"{me.name}'s {spell.name} ended {name}"
        if holder.condition == CONCENTRATING:
            end_concentration(ctx, holder.creature, reason)
        else:
            ctx.emit(ConditionEffectEnded(holder.id, holder.creature, holder.condition, reason))


# -- Counterspell ---------------------------------------------------------------------------

#: Counterspell: the spell, the decision kind of its prompt and how far it reaches.
COUNTERSPELL: Final = "counterspell"
COUNTER_RANGE: Final = 60


class _Ones:
    """The dice of a rehearsal (:func:`_rehearse`): every die shows 1."""

    def randint(self, sides: int) -> int:
        return 1


def casting_ability(me: Creature) -> str:
    """The caster's spellcasting ability: its sheet's or stat block's, else its best
    mental ability (a sheet that gives a spell DC only)."""
    from . import casting_feature

    feature = casting_feature(me)
    ability = feature.params.get("ability") if feature is not None else None
    if isinstance(ability, str):
        return ability
    return max(("int", "wis", "cha"), key=lambda a: me.abilities.get(a, 0))


def _counter_slots(creature: Creature) -> tuple[int, ...]:
    from . import SPELLS, slot_levels, spells_of

    if COUNTERSPELL not in spells_of(creature):
        return ()
    return slot_levels(creature, SPELLS[COUNTERSPELL])


def counter_offer(
    ctx: RuleContext, caster: Creature, spell: Spell, slot: int, asked: Sequence[str]
) -> ReactionOffer | None:
    """The first creature not yet ``asked`` that may counter ``caster``'s ``spell``: a
    foe that knows Counterspell, with its reaction and a slot of level 3 or higher, able
    to act, within 60 ft and in sight of the caster."""
    from . import _reaches

    s = ctx.state
    for c in s.creatures.values():  # the roster's order
        if c.id == caster.id or c.id in asked or c.side == caster.side:
            continue
        if c.out_of_fight or c.incapacitated or not s.has_reaction(c.id):
            continue
        slots = _counter_slots(c)
        if not slots or not _reaches(s, c, caster.zone, COUNTER_RANGE):
            continue
        level = f"level {slot}" if slot else "a cantrip"
        return ReactionOffer(
            c.id,
            COUNTERSPELL,
            f"{caster.name} is casting {spell.name} ({level}) within {COUNTER_RANGE} ft of "
            f"{c.name}. Cast Counterspell (reaction), choosing its slot: a slot of the "
            f"spell's level or higher stops it; a lower one needs a "
            f"{casting_ability(c).upper()} check against DC {10 + slot}.",
            tuple(f"level-{n}" for n in slots),
        )
    return None


def _rehearse(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    """Play the spell on a copy of the state (every die a 1) so that a refusal (a target
    out of range, too many targets) refuses the command before anyone is asked."""
    from . import resolver

    scratch = RuleContext(ctx.state.copy(), _Ones(), ctx.hook, ctx.actor)
    resolver(spell)(scratch, scratch.state.creatures[me.id], spell, slot, p)


def pause_for_counterspell(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> bool:
    """Before ``spell`` takes effect (its slot spent): offer Counterspell to the first
    creature that may cast it; True when the cast now waits for that decision."""
    offer = counter_offer(ctx, me, spell, slot, ())
    if offer is None:
        return False
    _rehearse(ctx, me, spell, slot, p)
    trigger = {
        "type": "spell",
        "caster": me.id,
        "spell": spell.id,
        "slot": slot,
        "params": dict(p),
        "asked": [offer.creature],
    }
    offer_reaction(ctx, offer, trigger)
    return True


def decision_resolved(ctx: RuleContext, decision: Decision, choice: tuple[str, ...]) -> None:
    """A Counterspell prompt closed: a taken Counterspell stops the spell (or tries to);
    else the next creature that may counter it is asked, and then the spell resolves."""
    from . import SPELLS, _left, _slot_key, carry_out, innate_key

    trigger = decision.trigger or {}
    if trigger.get("type") != "spell":
        return
    s = ctx.state
    caster = s.creatures.get(str(trigger.get("caster")))
    spell = SPELLS.get(str(trigger.get("spell")))
    slot = trigger.get("slot")
    params = trigger.get("params")
    asked = [str(a) for a in trigger.get("asked") or ()]
    if caster is None or spell is None or not isinstance(slot, int):
        return
    if not isinstance(params, Mapping) or caster.out_of_fight:
        return  # the fight moved on while the reaction was awaited (the GM's doing)
    me = s.creatures.get(decision.creature or "")
    taken = choice[:1] != (DECLINE,) and choice[:1] != ()
    if taken and me is not None and not me.out_of_fight and not me.incapacitated:
        level = int(choice[0].removeprefix("level-")) if choice[0].startswith("level-") else 3
        at_will, per_day = _innate_of(me)
        key = (
            None
            if COUNTERSPELL in at_will
            else innate_key(COUNTERSPELL)
            if COUNTERSPELL in per_day
            else _slot_key(me, level)
        )
        usable = level in _counter_slots(me) and s.has_reaction(me.id)
        if usable:
            ctx.emit(ActionTaken(me.id, COUNTERSPELL, "reaction"))
            if key is not None:
                ctx.emit(ResourceSpent(me.id, key, _left(me, key) - 1))
            stopped = slot <= level
            if not stopped:
                why = f"Counterspell against {spell.name}"
                dc = 10 + slot
                check = ability_check(ctx, me, casting_ability(me), dc=dc, source=why)
                stopped = bool(check.success)
            if stopped:
                return  # countered: the slot is spent and nothing else happens
    caster = s.creatures[caster.id]
    offer = counter_offer(ctx, caster, spell, slot, asked)
    if offer is not None:
        offer_reaction(ctx, offer, {**trigger, "asked": [*asked, offer.creature]})
        return
    carry_out(ctx, caster, spell, slot, params)


def _innate_of(creature: Creature) -> tuple[list[str], dict[str, int]]:
    from . import _innate

    return _innate(creature)


# -- Haste and Slow -------------------------------------------------------------------------

#: Haste's condition, the resource of its extra action and the condition it leaves.
HASTED: Final = "hasted"
HASTE_ACTION: Final = "haste-action"
LETHARGIC: Final = "lethargic"
#: Slow's condition.
SLOWED: Final = "slowed"
#: What a hasted creature's extra action may be.
HASTED_USES: Final = ("attack", "dash", "disengage")


def _haste(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    from . import _one_target, begin_concentration

    target = _one_target(ctx, me, spell, p)
    assert spell.condition is not None
    parent = begin_concentration(ctx, me, spell, slot)
    apply_timed_condition(ctx, target.id, spell.condition, source=me.id, parent=parent)
    if ctx.state.active == target.id and HASTED in ctx.state.creatures[target.id].conditions:
        _hasted_turn(ctx, ctx.state.creatures[target.id])  # its speed doubles at once


def on_self_too(spell: Spell) -> bool:
    """Whether the caster may be the target of this ``control`` spell (its choices)."""
    return spell.id in ("haste", "dispel-magic")


def _hasted_turn(ctx: RuleContext, creature: Creature) -> None:
    ctx.emit(Dashed(creature.id), ResourceRestored(creature.id, HASTE_ACTION, 1, "haste"))


def _slow(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    from . import _against, _targets, _zone_reach, area_zones, begin_concentration, save_dc

    assert spell.shape is not None and spell.save is not None and spell.condition is not None
    zone = p.get("zone")
    arena = ctx.state.arena
    if not isinstance(zone, str) or not arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"Aim {spell.name} at a zone (zone), then choose targets there.")
    _zone_reach(ctx, me, zone, spell.range, spell, arena.zone(zone).name)
    affected = area_zones(ctx, spell, zone)
    targets = _targets(ctx, p)
    if not 1 <= len(targets) <= spell.targets:
        ctx.refuse(
            "too_many_targets" if targets else "invalid_params",
            f"{spell.name} takes 1 to {spell.targets} targets of the caster's choice.",
        )
    if len({t.id for t in targets}) != len(targets):
        ctx.refuse("invalid_params", "Each target is chosen once.")
    for target in targets:
        if target.out_of_fight or target.zone not in affected:
            ctx.refuse(
                "invalid_target", f"{target.name} is not in {spell.name}'s area ({affected})."
            )
    parent = begin_concentration(ctx, me, spell, slot)
    dc = save_dc(me)
    for target in targets:
        target = ctx.state.creatures[target.id]
        if saving_throw(ctx, target, spell.save, dc, spell.name, **_against(spell)):
            continue
        applied = apply_timed_condition(
            ctx,
            target.id,
            spell.condition,
            save=spell.save,
            dc=dc,
            save_when="end",
            source=me.id,
            parent=parent,
        )
        if applied is not None and ctx.state.has_reaction(target.id):
            ctx.emit(ActionTaken(target.id, SLOWED, "reaction"))  # no reactions


def turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A hasted creature gains its speed again and its extra action; a slowed one loses
    half its speed and its reaction."""
    if HASTED in creature.conditions:
        _hasted_turn(ctx, creature)
    if SLOWED in creature.conditions:
        halved = creature.speed - creature.speed // 2
        if halved > 0:
            ctx.emit(MovementSpent(creature.id, halved, "slowed: half its speed"))
        if ctx.state.has_reaction(creature.id):
            ctx.emit(ActionTaken(creature.id, SLOWED, "reaction"))


def action_refusal(ctx: RuleContext, creature: Creature, spec: CommandSpec) -> Refusal | None:
    """Slow's limits on the slowed creature's turn: an action or a bonus action, not
    both; one attack; no reactions. A lethargic creature cannot act."""
    if LETHARGIC in creature.conditions and "reaction" in spec.costs:
        return Refusal("lethargic", f"{creature.name} is lethargic: it cannot move or act.")
    if SLOWED not in creature.conditions:
        return None
    r = ctx.state.resources
    mine = ctx.state.active == creature.id
    blocked = {
        "reaction": True,
        "bonus": mine and r.actions < 1,
        "action": mine and r.bonus_actions < 1,
        "attack": mine and r.attacks > 0 and r.actions < 1,
    }
    left = {
        "action": r.actions,
        "bonus": r.bonus_actions,
        "attack": r.attacks,
        "interaction": r.interactions,
        "reaction": int(ctx.state.has_reaction(creature.id)),
    }
    # The cost the engine would charge: the first of the command's it can pay.
    paid = next((c for c in spec.costs if left.get(c, 1) > 0), spec.costs[0])
    if blocked.get(paid, False):
        return Refusal(
            "slowed",
            f"{creature.name} is slowed: an action or a bonus action on its turn, not both; "
            "one attack; no reactions.",
        )
    return None


def condition_removed(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """Haste ended: the creature loses its next turn (lethargic until that turn is over)."""
    if condition != HASTED or creature.out_of_fight:
        return
    s = ctx.state
    mine = [i for i, entry in enumerate(s.initiative) if creature.id in entry.members]
    to_come = any(i > s.turn_slot for i in mine) and s.active != creature.id
    if creature.resources.get(HASTE_ACTION):
        ctx.emit(ResourceSpent(creature.id, HASTE_ACTION, 0))
    applied = apply_timed_condition(
        ctx, creature.id, LETHARGIC, rounds=1 if to_come else 2, source="Haste ended"
    )
    if applied is not None and s.has_reaction(creature.id):
        # No reaction either until after its lost turn (which restores none: it is skipped).
        ctx.emit(ActionTaken(creature.id, LETHARGIC, "reaction"))


def skip_turn(creature: Creature) -> str | None:
    if LETHARGIC in creature.conditions:
        return "lethargic: Haste ended"
    return None


def _hasted_action(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    use = p.get("use")
    if use not in HASTED_USES:
        ctx.refuse(
            "invalid_params",
            f"use is one of {', '.join(HASTED_USES)} (Hide and Use an Object are the GM's).",
        )
    if HASTED not in me.conditions or ctx.state.active != me.id:
        ctx.refuse("not_hasted", f"{me.name} is not hasted, or it is not its turn.")
    if me.resources.get(HASTE_ACTION, 0) < 1:
        ctx.refuse("no_uses_left", f"{me.name} has used its hasted action this turn.")
    ctx.emit(ResourceSpent(me.id, HASTE_ACTION, 0), ActionTaken(me.id, f"hasted {use}", "free"))
    if use == "dash":
        ctx.emit(Dashed(me.id))
    elif use == "disengage":
        ctx.emit(Disengaged(me.id))
    else:
        target = ctx.creature(p.get("target"), role="target")
        make_attack(ctx, me, target, p.get("attack"))  # one weapon attack, no more


def _is_hasted(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if HASTED not in me.conditions:
        return ("not_hasted", f"{me.name} is not hasted.")
    return None


HASTED_ACTION: Final = CommandSpec(
    "hasted_action",
    _hasted_action,
    "A hasted creature's extra action, once on each of its turns: one weapon attack, Dash "
    "or Disengage.",
    {
        "creature": Param("creature", True, "the hasted creature"),
        "use": Param("string", True, "attack, dash or disengage"),
        "target": Param("creature", False, "the target of the attack"),
        "attack": Param("string", False, "which attack (default: the first)"),
    },
    costs=("free",),
    requires=_is_hasted,
)
