"""Boons that the SDK's temporary hit points and roll bonuses allow (issue 31
follow-up). Part of the ``zonekeep.spells`` plugin, with the public SDK only; each
hook implementation has a name of its own (``boons_...``) and names its hook with
``specname``.

- ``temp`` (a :class:`Spell`'s ``how``): False Life, the caster's own temporary hit
  points (``damage``'s dice, 5 more per slot level above the spell's).
- ``heroic`` (Heroism, a ``ward``): immune to being frightened (an existing fright
  ends), temporary hit points equal to the caster's spellcasting modifier at the start
  of each of its turns; it loses the temporary hit points it has when the spell ends.
- ``magic-weapon`` (Magic Weapon, a ``ward``): the creature's own weapon attacks (not a
  spell's) get +1 to the attack roll and +1 damage on the weapon's damage, +2 from a
  4th-level slot and +3 from a 6th; its weapon damage counts as magical. The damage
  bonus goes on each instance of the weapon's damage type that a hit of it deals
  (``zonekeep_modify_damage``): a rider of that same type on the hit (Hunter's Mark's
  die) gets it too, as the hook cannot tell the two apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from zonekeep.sdk import (
    ConditionSpec,
    Creature,
    Damage,
    EncounterState,
    RollModifier,
    RollRequest,
    RuleContext,
    TempHpChanged,
    gain_temp_hp,
    hookimpl,
)

from . import _ability_mod, _control, _wards
from ._more import _effects, _weapon, cure
from .catalog import Spell

__all__ = [
    "boons_condition_applied",
    "boons_condition_immunity",
    "boons_condition_removed",
    "boons_conditions",
    "boons_modify_damage",
    "boons_roll_modifiers",
    "boons_turn_start",
]

HEROIC: Final = "heroic"
MAGIC_WEAPON: Final = "magic-weapon"

#: The conditions these spells give, and what each does.
CONDITIONS: Final[dict[str, str]] = {
    HEROIC: "Heroism: immune to being frightened; temporary hit points (the caster's "
    "spellcasting modifier) at the start of each of its turns.",
    MAGIC_WEAPON: "Magic Weapon: its weapon attacks get +1 to hit and damage (+2 from a "
    "4th-level slot, +3 from a 6th) and are magical.",
}


def _false_life(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    if p.get("target") is not None or p.get("targets"):
        targets = [p.get("target"), *(p.get("targets") or ())]
        if any(t is not None and t != me.id for t in targets):
            ctx.refuse("invalid_target", f"{spell.name} affects only its caster, {me.name}.")
    assert spell.damage is not None
    roll = ctx.roll(spell.damage)
    gain_temp_hp(ctx, me.id, roll.total + 5 * max(0, slot - spell.level), spell.name, roll)


#: The templates of this module, by ``how``.
RESOLVERS: Final = {"temp": _false_life}


def weapon_bonus(state: EncounterState, creature_id: str) -> int:
    """The largest Magic Weapon bonus on ``creature_id``'s weapon: by the slot its
    caster's concentration records (+1; +2 at 4-5; +3 at 6 and up); 0 without one."""
    best = 0
    for effect in _effects(state, creature_id, MAGIC_WEAPON):
        parent = state.condition_effects.get(effect.parent or "")
        named = _control.spell_level(parent.source or "") if parent is not None else None
        level = named[1] if named else 2
        best = max(best, 3 if level >= 6 else 2 if level >= 4 else 1)
    return best


def _own_weapon(creature: Creature, attack: str | None) -> bool:
    used = creature.attack(attack) if attack else None
    return used is not None and _weapon(used)


@hookimpl(specname="zonekeep_conditions")
def boons_conditions() -> Iterable[ConditionSpec]:
    return tuple(
        ConditionSpec(cid, summary, durations=("rounds", "turn_start", "turn_end", "until_removed"))
        for cid, summary in CONDITIONS.items()
    )


@hookimpl(specname="zonekeep_condition_immunity")
def boons_condition_immunity(ctx: RuleContext, creature: Creature, condition: str) -> str | None:
    if condition == "frightened" and HEROIC in creature.conditions:
        return "heroism"
    return None


@hookimpl(specname="zonekeep_condition_applied")
def boons_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """A creature made heroic stops being frightened; one given Guidance or Resistance
    holds its die (``_wards``)."""
    if condition == HEROIC and "frightened" in creature.conditions:
        cure(ctx, creature, "frightened", "ended by Heroism")
    _wards.condition_applied(ctx, creature, condition)


@hookimpl(specname="zonekeep_turn_start")
def boons_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """Heroism's temporary hit points at the start of each of its creature's turns."""
    if HEROIC not in creature.conditions:
        return
    for effect in _effects(ctx.state, creature.id, HEROIC):
        caster = ctx.state.creatures.get(effect.source or "")
        if caster is not None:
            gain_temp_hp(ctx, creature.id, max(0, _ability_mod(caster)), "Heroism")


@hookimpl(specname="zonekeep_condition_removed")
def boons_condition_removed(
    ctx: RuleContext, creature: Creature, condition: str, reason: str, expired: bool
) -> None:
    """Heroism ended: the temporary hit points left go (the rules keep one pool);
    Guidance or Resistance ended: its unused die goes (``_wards``)."""
    if condition == HEROIC and creature.temp_hp > 0:
        ctx.emit(TempHpChanged(creature.id, 0, "Heroism ended"))
    _wards.condition_removed(ctx, creature, condition)


@hookimpl(specname="zonekeep_roll_modifiers")
def boons_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    """Magic Weapon's bonus; Guidance's, Resistance's and Protection from Evil and
    Good's (``_wards``)."""
    found = _wards.roll_modifiers(ctx, roll)
    if roll.kind != "attack":
        return found or None
    actor = ctx.state.creatures.get(roll.actor)
    if actor is None or MAGIC_WEAPON not in actor.conditions:
        return found or None
    if not _own_weapon(actor, roll.attack):
        return found or None
    bonus = RollModifier("bonus", "magic weapon", value=weapon_bonus(ctx.state, actor.id))
    return [*found, bonus]


@hookimpl(specname="zonekeep_modify_damage")
def boons_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    """Magic Weapon: its bonus on the weapon's own damage (its type), and magical."""
    attacker = ctx.state.creatures.get(damage.attacker or "")
    if attacker is None or MAGIC_WEAPON not in attacker.conditions:
        return None
    used = attacker.attack(damage.attack) if damage.attack else None
    if used is None or not _weapon(used) or damage.raw_type != used.damage_type:
        return None
    changed = damage.add(weapon_bonus(ctx.state, attacker.id), "magic weapon")
    return changed.overcome_nonmagical("magic weapon")
