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
from collections.abc import Mapping
from typing import Any, Final

from zonekeep.sdk import (
    UNCONSCIOUS,
    ConditionEffect,
    ConditionEffectEnded,
    Creature,
    Damaged,
    RollModifier,
    RollRequest,
    RuleContext,
    ability_check,
    apply_timed_condition,
    largest_dimension,
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
    {"bane": _bane, "sleep": _sleep, "dispel-magic": _dispel}[spell.id](ctx, me, spell, slot, p)


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
    """Bane's penalty die on the attack rolls and saving throws of a creature under it."""
    actor = ctx.state.creatures.get(roll.actor)
    if roll.kind in ("attack", "save") and actor is not None and BANE in actor.conditions:
        return [RollModifier("penalty", "bane", die=BANE_DIE)]
    return []


# -- Sleep ----------------------------------------------------------------------------------


def _sleep(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    from . import _zone_reach, area_reach, upcast_dice

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
    dimension = largest_dimension(spell.shape, spell.size, 5)
    spilled = ctx.hook.zonekeep_area_zones(ctx=ctx, zone=zone, largest_dimension=dimension)
    affected = [zone, *(z for z in dict.fromkeys(spilled or ()) if z != zone and arena.has_zone(z))]
    answer = ctx.hook.zonekeep_area_max_targets(
        ctx=ctx, shape=spell.shape, size=spell.size, width=5
    )
    maximum = 1 if answer is None else int(answer)
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
        and UNCONSCIOUS not in c.condition_immunities
    ]
    found.sort(key=lambda c: c.hp)  # stable: ties keep the zones' order
    dice = upcast_dice(spell, slot)
    assert dice is not None
    pool = ctx.roll(dice).total  # one roll: the hit points the spell can put to sleep
    source = spell_source(spell, slot)
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
    from . import CONCENTRATING, _one_target, casting_feature, end_concentration

    target = _one_target(ctx, me, spell, p)
    feature = casting_feature(me)
    ability = feature.params.get("ability") if feature is not None else None
    if not isinstance(ability, str):  # a sheet with a spell DC only: its best mental ability
        ability = max(("int", "wis", "cha"), key=lambda a: me.abilities.get(a, 0))
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
