"""Wards the SDK's roll modifiers and creature types allow (issue 31 follow-up). Part of
the ``zonekeep.spells`` plugin, with the public SDK only; each hook implementation has
a name of its own (``wards_...``) and names its hook with ``specname``; the hooks
asked at every roll and every condition change are ``_boons.py``'s, which call this
module's functions (one hook implementation less to dispatch on every command).

- ``resistant`` (Resistance, a ``ward``): the creature holds a d4 (its
  ``resistance-die`` resource) that goes on its next saving throw and is spent with it
  (a roll modifier's ``spends``). The SRD lets it choose the save, before or after the
  roll; the rules take the first one, which is what a player keeping the die for a bad
  moment cannot do, and say so in docs/rules.md. Once the die is spent, the spell ends
  at the end of that turn (the caster's concentration with it).
- ``guided`` (Guidance): the same, a d4 on the creature's next ability check (a check
  the GM calls, a contest such as a grapple or an escape, a Tumble), its die the
  ``guidance-die`` resource.
- ``protected`` (Protection from Evil and Good): aberrations, celestials, elementals,
  fey, fiends and undead (a creature's ``type``, from its stat block) have disadvantage
  on attack rolls against it. That such creatures cannot charm, frighten or possess it
  is the GM's: a condition does not say which creature gave it.
- Enhance Ability (``cast``'s ``option``): ``bears-endurance``, ``bulls-strength``,
  ``cats-grace``, ``eagles-splendor``, ``foxs-cunning`` or ``owls-wisdom``, a condition
  of that name giving advantage on ability checks of Constitution, Strength, Dexterity,
  Charisma, Intelligence or Wisdom; Bear's Endurance also gives 2d6 temporary hit points
  when it is given.
- Protection from Energy (``cast``'s ``option``: a damage type): ``resist-acid``,
  ``resist-cold``, ``resist-fire``, ``resist-lightning`` or ``resist-thunder``, resistance
  to that damage (``Damage.grant``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from zonekeep.sdk import (
    ConditionSpec,
    Creature,
    Damage,
    ResourceRestored,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    gain_temp_hp,
    hookimpl,
)

from . import concentration_of, end_concentration

__all__ = ["wards_conditions", "wards_modify_damage", "wards_turn_end"]

RESISTANT: Final = "resistant"
GUIDED: Final = "guided"
PROTECTED: Final = "protected"

#: The one-use die each condition holds, as a resource of the creature: (key, sides,
#: the kind of roll it goes on, the source its roll names).
DICE: Final[dict[str, tuple[str, int, str, str]]] = {
    RESISTANT: ("resistance-die", 4, "save", "resistance"),
    GUIDED: ("guidance-die", 4, "check", "guidance"),
}

#: The creature types Protection from Evil and Good wards against.
WARDED_TYPES: Final = frozenset({"aberration", "celestial", "elemental", "fey", "fiend", "undead"})

#: Enhance Ability's options: the ability whose checks each gives advantage.
ENHANCEMENTS: Final[dict[str, str]] = {
    "bears-endurance": "con",
    "bulls-strength": "str",
    "cats-grace": "dex",
    "eagles-splendor": "cha",
    "foxs-cunning": "int",
    "owls-wisdom": "wis",
}
_ABILITY_NAMES: Final = {
    "str": "Strength",
    "dex": "Dexterity",
    "con": "Constitution",
    "int": "Intelligence",
    "wis": "Wisdom",
    "cha": "Charisma",
}
#: Protection from Energy's conditions, by the damage type each resists.
ENERGY_WARDS: Final[dict[str, str]] = {
    f"resist-{kind}": kind for kind in ("acid", "cold", "fire", "lightning", "thunder")
}

#: The conditions these spells give, and what each does.
CONDITIONS: Final[dict[str, str]] = {
    **{
        cid: f"Enhance Ability: advantage on {_ABILITY_NAMES[ability]} checks"
        + (" (and 2d6 temporary hit points when given)." if ability == "con" else ".")
        for cid, ability in ENHANCEMENTS.items()
    },
    **{
        cid: f"Protection from Energy: resistance to {kind} damage."
        for cid, kind in ENERGY_WARDS.items()
    },
    RESISTANT: "Resistance: a d4 added to its next saving throw; the spell ends once it is used.",
    GUIDED: "Guidance: a d4 added to its next ability check; the spell ends once it is used.",
    PROTECTED: "Protection from Evil and Good: aberrations, celestials, elementals, fey, "
    "fiends and undead have disadvantage on attack rolls against it.",
}


def warded_against(attacker: Creature | None) -> bool:
    """Whether ``attacker`` is of a type Protection from Evil and Good wards against."""
    return attacker is not None and (attacker.type or "").lower() in WARDED_TYPES


@hookimpl(specname="zonekeep_conditions")
def wards_conditions() -> Iterable[ConditionSpec]:
    return tuple(
        ConditionSpec(cid, summary, durations=("rounds", "turn_start", "turn_end", "until_removed"))
        for cid, summary in CONDITIONS.items()
    )


def condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """Resistance or Guidance given: the creature holds its die."""
    held = DICE.get(condition)
    if held is not None and creature.resources.get(held[0], 0) < 1:
        ctx.emit(ResourceRestored(creature.id, held[0], 1, held[3]))
    if condition == "bears-endurance":
        roll = ctx.roll("2d6")
        gain_temp_hp(ctx, creature.id, roll.total, "Enhance Ability", roll)


def condition_removed(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """The spell ended with its die unused: the die goes with it."""
    held = DICE.get(condition)
    if held is not None and creature.resources.get(held[0], 0) > 0:
        ctx.emit(ResourceSpent(creature.id, held[0], 0))


def roll_modifiers(ctx: RuleContext, roll: RollRequest) -> list[RollModifier]:
    if roll.kind == "attack":
        target = ctx.state.creatures.get(roll.target or "")
        if target is None or PROTECTED not in target.conditions:
            return []
        if not warded_against(ctx.state.creatures.get(roll.actor)):
            return []
        return [
            RollModifier("disadvantage", f"protection from evil and good: {target.name} is warded")
        ]
    actor = ctx.state.creatures.get(roll.actor)
    if actor is None or not actor.conditions:
        return []  # (asked at every roll: the common case costs one lookup)
    found = (
        [
            RollModifier("advantage", f"enhance ability: {cid.replace('-', ' ')}")
            for cid in actor.conditions
            if cid in ENHANCEMENTS and ENHANCEMENTS[cid] == roll.ability
        ]
        if roll.kind == "check" and roll.ability is not None
        else []
    )
    if RESISTANT not in actor.conditions and GUIDED not in actor.conditions:
        return found
    return found + [
        RollModifier("bonus", source, die=sides, spends=key)
        for condition, (key, sides, kind, source) in DICE.items()
        if kind == roll.kind and condition in actor.conditions and actor.resources.get(key, 0) > 0
    ]


@hookimpl(specname="zonekeep_modify_damage")
def wards_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    """Protection from Energy: resistance to the chosen damage type."""
    target = ctx.state.creatures.get(damage.target)
    if target is None or not target.conditions or not damage.damage_type:
        return None
    for cid in target.conditions:
        if ENERGY_WARDS.get(cid) == damage.damage_type:
            return damage.grant("resistance", "protection from energy")
    return None


@hookimpl(specname="zonekeep_turn_end")
def wards_turn_end(ctx: RuleContext, creature: Creature) -> None:
    """A Resistance or Guidance die spent this turn: its spell ends (its caster's
    concentration, and so the condition, with it)."""
    effects = ctx.state.condition_effects
    if not effects:
        return
    for effect in list(effects.values()):
        held = DICE.get(effect.condition)
        if held is None:
            continue
        holder = ctx.state.creatures.get(effect.creature)
        if holder is None or holder.resources.get(held[0], 0) > 0:
            continue
        caster = effect.source or ""
        if effect.parent is not None and effect.parent == concentration_of(ctx.state, caster):
            end_concentration(ctx, caster, f"{holder.name} used the {held[3]} die")
