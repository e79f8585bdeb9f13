"""The SRD creatures' traits of movement and senses.

Part of the ``zonekeep.srd`` content plugin (registered from ``__init__.py``), on the
public SDK only. Each hook implementation names its hook with ``specname`` so that it
sits beside the package's other implementations of the same hooks.

- prone-only (Stomp, Hooves): the attack the params name is refused unless its target
  is prone (``zonekeep_before_attack``, ``invalid_target``).
- flyby: a creature that can fly (a flying speed, not prone) is offered to nobody as an
  opportunity attack's target while it moves (``zonekeep_opportunity_attackers``,
  asked before the built-in rule: docs/rules.md's ruling "Flyby in zones").
- camouflage: advantage on the params' skill check (Stealth) while its zone holds an
  asset with the params' ``tag`` (``rocky``, ``snowy``, ``underwater``: asset tags
  this module declares).
- blind-beyond (blindsight only): beyond its blindsight's range it sees nothing, so its
  attack rolls against a creature farther away have disadvantage and attack rolls
  against it from farther away have advantage (the zone distance, ``path_distance``).
- spider-climb: a link the arena marks as climbed (``mode: climb``) but without a
  clear path (a sheer wall, a ceiling) is open to it (``zonekeep_link_crossing``): no
  check, no rope; the climb costs what the link's mode says (normal with a climbing
  speed, double without one: the vampire spawn has none).
- hover, amphibious, hold-breath: declared so the GM sees them automated, and each says
  exactly why nothing more is needed: the server has no falling and no suffocation, so
  a hovering creature never falls and a creature that breathes air and water (or holds
  its breath) is never short of air in any fight the server plays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zonekeep.sdk import (
    AssetTagSpec,
    Attack,
    Creature,
    EncounterState,
    FeatureSpec,
    Link,
    Maneuver,
    RollModifier,
    RollRequest,
    RuleContext,
    Trait,
    hookimpl,
    path_distance,
)

__all__ = [
    "moves_asset_tags",
    "moves_before_attack",
    "moves_features",
    "moves_link_crossing",
    "moves_opportunity_attackers",
    "moves_roll_modifiers",
]

#: The terrains camouflage names: the asset tag that marks a zone as that terrain.
CAMOUFLAGE_TAGS: Mapping[str, str] = {
    "rocky": "Rocky ground: a creature with Stone Camouflage has advantage on Stealth "
    "checks in this zone.",
    "snowy": "Snow and ice: a creature with Snow Camouflage has advantage on Stealth "
    "checks in this zone.",
    "underwater": "Under water: a creature with Underwater Camouflage has advantage on "
    "Stealth checks in this zone.",
}

_NO_PARAMS: Mapping[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


def _trait(creature: Creature, feature: str) -> Trait | None:
    """``creature``'s trait ``feature``, unless the data marks it ``gm``."""
    for trait in creature.traits:
        if trait.id in (feature, f"zonekeep.srd.{feature}") and trait.gm is None:
            return trait
    return None


@hookimpl(specname="zonekeep_features")
def moves_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "prone-only",
            "trait",
            {
                "type": "object",
                "properties": {"attack": {"type": "string", "minLength": 1}},
                "required": ["attack"],
                "additionalProperties": False,
            },
            doc="The named attack is refused (invalid_target) unless its target is prone.",
        ),
        FeatureSpec(
            "flyby",
            "trait",
            _NO_PARAMS,
            doc="While it can fly (a flying speed, not prone), its movement offers no "
            "opportunity attack to anyone.",
        ),
        FeatureSpec(
            "camouflage",
            "trait",
            {
                "type": "object",
                "properties": {
                    "skill": {"type": "string", "minLength": 1},
                    "where": {"type": "string", "minLength": 1},
                    "tag": {"enum": sorted(CAMOUFLAGE_TAGS)},
                },
                "required": ["skill", "tag"],
                "additionalProperties": False,
            },
            doc="Advantage on its checks of the skill named (Stealth) while its zone holds "
            "an asset tagged with the terrain (rocky, snowy, underwater).",
        ),
        FeatureSpec(
            "blind-beyond",
            "trait",
            {
                "type": "object",
                "properties": {"range": {"type": "integer", "minimum": 0}},
                "required": ["range"],
                "additionalProperties": False,
            },
            doc="Blind beyond its blindsight: disadvantage on its attack rolls against a "
            "creature farther than the range, advantage on attack rolls against it from "
            "farther away (or with no line of sight).",
        ),
        FeatureSpec(
            "spider-climb",
            "trait",
            _NO_PARAMS,
            doc="A climbing link without a clear path (a sheer wall, a ceiling) is open to "
            "it, with no check; the climb costs as any climb (double without a climbing "
            "speed).",
        ),
        FeatureSpec(
            "hover",
            "trait",
            _NO_PARAMS,
            doc="Nothing to enforce: the server never makes a flying creature fall (prone "
            "or at speed 0), which is what hovering guarantees.",
        ),
        FeatureSpec(
            "amphibious",
            "trait",
            _NO_PARAMS,
            doc="Nothing to enforce: the server has no suffocation rule, so a creature that "
            "breathes air and water is never short of air; its swimming speed is data.",
        ),
        FeatureSpec(
            "hold-breath",
            "trait",
            _NO_PARAMS,
            doc="Nothing to enforce: the server has no suffocation rule, so no fight it plays "
            "outlasts the held breath.",
        ),
    ]


@hookimpl(specname="zonekeep_asset_tags")
def moves_asset_tags() -> Iterable[AssetTagSpec]:
    return [AssetTagSpec(tag, summary) for tag, summary in CAMOUFLAGE_TAGS.items()]


@hookimpl(specname="zonekeep_before_attack")
def moves_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    for trait in attacker.traits:
        if trait.id not in ("prone-only", "zonekeep.srd.prone-only") or trait.gm is not None:
            continue
        if trait.params.get("attack") == attack.name and "prone" not in target.conditions:
            ctx.refuse(
                "invalid_target",
                f"{attacker.name}'s {attack.name} can only hit a prone creature, "
                f"and {target.name} is not prone.",
            )


@hookimpl(specname="zonekeep_link_crossing")
def moves_link_crossing(ctx: RuleContext, creature: Creature, link: Link) -> str | None:
    if link.mode == "climb" and _trait(creature, "spider-climb") is not None:
        return "spider climb"
    return None


def _flies(creature: Creature) -> bool:
    return creature.speeds.get("fly", 0) > 0 and "prone" not in creature.conditions


@hookimpl(specname="zonekeep_opportunity_attackers", tryfirst=True)
def moves_opportunity_attackers(
    ctx: RuleContext, creature: Creature, maneuver: Maneuver
) -> Iterable[str] | None:
    if _trait(creature, "flyby") is not None and _flies(creature):
        return []
    return None


def _distance(state: EncounterState, a: Creature, b: Creature) -> int | None:
    """The zone distance from ``a`` to ``b`` in feet; ``None`` with no line of sight."""
    if a.zone is None or b.zone is None:
        return None
    try:
        return path_distance(state.arena, a.zone, b.zone)
    except KeyError:
        return None


def _beyond(state: EncounterState, blind: Creature, other: Creature) -> bool:
    """Whether ``other`` is out of ``blind``'s blindsight (it has blind-beyond)."""
    trait = _trait(blind, "blind-beyond")
    if trait is None:
        return False
    feet = _distance(state, blind, other)
    return feet is None or feet > int(trait.params.get("range", 0))


@hookimpl(specname="zonekeep_roll_modifiers")
def moves_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    state = ctx.state
    me = state.creatures.get(roll.actor)
    if me is None:
        return None
    found: list[RollModifier] = []
    if roll.kind == "attack" and roll.target in state.creatures:
        target = state.creatures[roll.target]
        if _beyond(state, me, target):
            found.append(RollModifier("disadvantage", "blindsight only: target beyond it"))
        if _beyond(state, target, me):
            found.append(RollModifier("advantage", "target blind beyond its blindsight"))
    if roll.kind == "check" and roll.skill is not None and me.zone is not None:
        trait = _trait(me, "camouflage")
        if trait is not None and trait.params.get("skill") == roll.skill:
            tag = trait.params.get("tag")
            if any(tag in asset.tags for asset in state.assets_in(me.zone)):
                found.append(RollModifier("advantage", f"camouflage: {tag}"))
    return found or None
