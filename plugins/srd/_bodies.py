"""SRD creature features about what their bodies are made of and what wounds them
(part of the ``zonekeep.srd`` plugin, issue 30).

Each hook implementation carries a name of its own (``bodies_...``) and names the hook it
implements with ``specname``, so that the package ``zonekeep.plugins.srd`` can import it
beside the other feature modules' implementations of the same hooks. Only public
``zonekeep.sdk`` names are used, as a third-party content plugin would.

- ``silvered-weapons`` and ``adamantine-weapons`` (trait, ``metal``: ``silvered`` or
  ``adamantine``): the creature's resistances and immunities "from nonmagical attacks"
  (``damage_resistances_nonmagical``, ``damage_immunities_nonmagical``) except attacks
  made with weapons of that metal: an attack whose ``properties`` name the metal
  (``"silvered"``, ``"adamantine"``: a compendium entry's or a custom creature's attack)
  deals it full damage, through :meth:`zonekeep.sdk.Damage.overcome_nonmagical` in the
  public hook ``zonekeep_modify_damage``. A magical attack already overcomes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from zonekeep.sdk import (
    Creature,
    Damage,
    FeatureSpec,
    RuleContext,
    Trait,
    hookimpl,
)

__all__ = [
    "METALS",
    "bodies_features",
    "bodies_modify_damage",
]

#: The weapon metals a creature's nonmagical defences may except, by trait id: an
#: attack whose ``properties`` hold the metal is made with such a weapon.
METALS: Final[dict[str, str]] = {
    "silvered-weapons": "silvered",
    "adamantine-weapons": "adamantine",
}


def _trait(creature: Creature, feature: str) -> Trait | None:
    for trait in creature.traits:
        if trait.id in (feature, f"zonekeep.srd.{feature}") and trait.gm is None:
            return trait
    return None


@hookimpl(specname="zonekeep_features")
def bodies_features() -> Iterable[FeatureSpec]:
    return tuple(
        FeatureSpec(
            feature,
            "trait",
            {
                "type": "object",
                "properties": {"metal": {"const": metal}},
                "additionalProperties": False,
            },
            doc=f"Its resistances and immunities from nonmagical attacks do not hold "
            f"against an attack made with a {metal} weapon (an attack whose properties "
            f"name {metal}).",
        )
        for feature, metal in METALS.items()
    )


def _metal_weapon(ctx: RuleContext, target: Creature, damage: Damage) -> str | None:
    """Why ``damage`` overcomes ``target``'s nonmagical defences (a weapon of the metal
    its trait excepts), or None."""
    if damage.attacker is None or damage.attack is None:
        return None
    if not (target.damage_resistances_nonmagical or target.damage_immunities_nonmagical):
        return None
    attacker = ctx.state.creatures.get(damage.attacker)
    attack = attacker.attack(damage.attack) if attacker is not None else None
    if attack is None:
        return None
    for feature, metal in METALS.items():
        trait = _trait(target, feature)
        if trait is not None and metal in attack.properties:
            return f"{attack.name}: {metal} ({trait.name})"
    return None


@hookimpl(specname="zonekeep_modify_damage")
def bodies_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    target = ctx.state.creatures.get(damage.target)
    if target is None or not target.traits or damage.nonmagical_overcome is not None:
        return None
    why = _metal_weapon(ctx, target, damage)
    return damage.overcome_nonmagical(why) if why is not None else None
