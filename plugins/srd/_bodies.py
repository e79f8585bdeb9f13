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
- ``swallow`` (``on_hit`` of a bite that also grapples; ``max_size``, ``damage``,
  ``damage_type``): a hit of that attack on a creature the attacker was already
  grappling before the attack (not the grapple this same hit gives), of ``max_size`` or
  smaller, while it has no one else swallowed, swallows it: the grapple ends and it is
  ``swallowed`` (a condition effect whose source is ``swallow:<swallower>``), with
  ``blinded`` and ``restrained`` hanging on it. It takes ``damage`` (``damage_type``)
  at the start of each of the swallower's turns. Total cover: attacks against it from
  anyone but its swallower are refused, and so are its own attacks against anyone
  else; it moves with its swallower (a forced ``zone_entered`` after each of the
  swallower's). When the swallower is out of the fight (defeated, or dying), it is
  free, out of the corpse and ``prone`` (the 5 feet of movement that costs are the
  GM's to charge). Area effects reaching its zone still reach it: the GM cancels them.
- ``split`` (trait, ``damage_types``): when it is Medium or larger, has at least 10 hit
  points and is dealt damage of one of ``damage_types`` (lightning or slashing, which
  it is immune to: the damage it was dealt, before its defences, counts), it splits in
  two one size smaller, each with half its hit points (rounded down) as hit points and
  maximum: the creature itself shrinks (``override_applied`` of ``size``, ``max_hp``
  and ``hp``, ``by`` itself) and a copy of it joins the fight in its zone and its
  initiative slot (``creature_added``; id ``<its id>-<n>``, its name with ``(n)``),
  without its conditions, positions or engagements.
- ``obscuring-cloud`` (action, the ``ink_cloud`` command; ``radius``, ``rounds``): its
  use spent, an ink cloud (an ``element`` asset placed at runtime, ``data.srd`` ``ink``)
  fills its zone, heavily obscured for ``rounds`` (10: 1 minute; removed at the end of
  the round its time runs out). Seeing into, out of or inside that zone takes
  blindsight or tremorsense that reaches (the zones' path distance): an attack roll
  made by a creature that cannot see its target has disadvantage, and one against a
  creature that cannot see its attacker advantage, whenever either is in a cloud (both
  blind: the two cancel, as the rules have it). Then, on the same turn, the command
  ``ink_dash`` (a bonus action) takes the Dash action. The zone stands for the
  cloud's radius; that the octopus must be underwater is the GM's to rule, as are
  Perception checks (the rules do not say which sense a check relies on) and
  opportunity attacks on a creature no one can see.
- ``engulf`` (action, the ``engulf`` command; ``dc``, ``damage``, ``turn_damage``,
  ``damage_type``, ``escape_dc``, ``max_size``): the cube engulfs ``creatures`` of its
  zone (it moves there first with its movement, ``enter``): each of ``max_size`` or
  smaller saves (Dexterity, ``dc``); on a failure it takes ``damage`` and is
  ``engulfed`` (``restrained`` hanging on it; it cannot breathe, which the fight does
  not count), moves with the cube and takes ``turn_damage`` at the start of each of
  the cube's turns; a success leaves it outside (the push aside is a place in the same
  zone). The command ``escape_engulf`` (an action of the engulfed creature) is a
  Strength check against ``escape_dc``: out on a success.
- ``engulf`` (trait, Ooze Cube; ``pull_dc``, ``pull_damage``, ``damage_type``,
  ``holds``): an engulfed creature has total cover (as a swallowed one: attacks on it,
  and its attacks, reach only the cube); the cube holds ``holds`` Medium or smaller
  creatures, a Large one filling it (``engulf`` refuses more); a creature in the
  cube's zone pulls one out with the ``pull_out`` command (an action): it takes
  ``pull_damage`` and makes a Strength check against ``pull_dc``, the engulfed
  creature out on a success. A creature walking into the cube's space is subjected to
  Engulf with disadvantage: a zone is not a space, so the GM rules when that happens
  (the ``engulf`` command with the creature).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import attrs

from zonekeep.sdk import (
    DAMAGE_TYPES,
    Action,
    Asset,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectApplied,
    ConditionEffectEnded,
    ConditionSpec,
    Creature,
    CreatureAdded,
    Damage,
    Damaged,
    Dashed,
    EncounterState,
    FeatureSpec,
    OverrideApplied,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    Size,
    Trait,
    ability_check,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    change_asset,
    change_zone,
    hookimpl,
    parse_dice,
    path_distance,
    place_asset,
    saving_throw,
    spend_use,
)

__all__ = [
    "ENGULFED",
    "INK",
    "METALS",
    "SPLIT_FROM",
    "SWALLOWED",
    "bodies_after_damage",
    "bodies_attack_made",
    "bodies_before_attack",
    "bodies_commands",
    "bodies_conditions",
    "bodies_engulf_commands",
    "bodies_features",
    "bodies_modify_damage",
    "bodies_roll_modifiers",
    "bodies_round_end",
    "bodies_turn_start",
    "bodies_zone_entered",
]

#: The ``data.srd`` of an ink cloud asset.
INK: Final = "ink"
#: The condition of a creature inside a gelatinous cube.
ENGULFED: Final = "engulfed"
#: The sizes a split can start from: Medium and larger.
SPLIT_FROM: Final = Size.MEDIUM
#: The condition of a creature inside another (a giant frog's, a giant toad's).
SWALLOWED: Final = "swallowed"
_SIZES = [s.label for s in Size if s is not Size.COLOSSAL]

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


def _dice_problems(params: Any, attack_names: Any) -> Iterable[str]:
    try:
        parse_dice(str(params.get("damage", "")))
    except ValueError as error:
        yield f"swallow's damage {params.get('damage')!r} is not dice: {error}"


@hookimpl(specname="zonekeep_features")
def bodies_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "swallow",
            "on_hit",
            {
                "type": "object",
                "properties": {
                    "max_size": {"enum": _SIZES},
                    "damage": {"type": "string", "minLength": 1, "maxLength": 40},
                    "damage_type": {"enum": list(DAMAGE_TYPES)},
                },
                "required": ["max_size", "damage", "damage_type"],
                "additionalProperties": False,
            },
            doc="A hit on a creature it was already grappling, of max_size or smaller, "
            "swallows it (while it has no one else swallowed): the grapple ends; it is "
            "blinded and restrained, has total cover from everyone else, moves with it, "
            "takes the damage at the start of each of the swallower's turns, and comes "
            "out prone when the swallower is out of the fight.",
            check=_dice_problems,
        ),
        FeatureSpec(
            "split",
            "trait",
            {
                "type": "object",
                "properties": {
                    "damage_types": {
                        "type": "array",
                        "items": {"enum": list(DAMAGE_TYPES)},
                        "minItems": 1,
                        "maxItems": 13,
                    }
                },
                "required": ["damage_types"],
                "additionalProperties": False,
            },
            doc="Medium or larger, with at least 10 hit points, and dealt damage of one of "
            "damage_types: it splits into two creatures one size smaller, each with half "
            "its hit points (rounded down), the copy in its zone and initiative slot.",
        ),
        FeatureSpec(
            "obscuring-cloud",
            "action",
            {
                "type": "object",
                "properties": {
                    "radius": {"type": "integer", "minimum": 5, "maximum": 120},
                    "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "required": ["radius"],
                "additionalProperties": False,
            },
            doc="The ink_cloud command: a cloud fills its zone, heavily obscured for the "
            "rounds (10 unless told): attack rolls there go by who can see whom "
            "(blindsight, tremorsense); then ink_dash, a bonus action, takes the Dash action.",
        ),
        FeatureSpec(
            "engulf",
            "action",
            {
                "type": "object",
                "properties": {
                    "dc": {"type": "integer", "minimum": 1, "maximum": 30},
                    "damage": {"type": "string", "minLength": 1, "maxLength": 40},
                    "turn_damage": {"type": "string", "minLength": 1, "maxLength": 40},
                    "damage_type": {"enum": list(DAMAGE_TYPES)},
                    "escape_dc": {"type": "integer", "minimum": 1, "maximum": 30},
                    "max_size": {"enum": _SIZES},
                },
                "required": [
                    "dc",
                    "damage",
                    "turn_damage",
                    "damage_type",
                    "escape_dc",
                    "max_size",
                ],
                "additionalProperties": False,
            },
            doc="The engulf command: creatures of its zone save or are engulfed (damage, "
            "restrained, moved with it, turn_damage at the start of its turns); "
            "escape_engulf, a Strength check, gets one out.",
        ),
        FeatureSpec(
            "engulf",
            "trait",
            {
                "type": "object",
                "properties": {
                    "pull_dc": {"type": "integer", "minimum": 1, "maximum": 30},
                    "pull_damage": {"type": "string", "minLength": 1, "maxLength": 40},
                    "damage_type": {"enum": list(DAMAGE_TYPES)},
                    "holds": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["pull_dc", "pull_damage", "damage_type", "holds"],
                "additionalProperties": False,
            },
            doc="Engulfed creatures have total cover; it holds `holds` Medium or smaller "
            "creatures or one Large; pull_out (an action, a Strength check, the puller "
            "takes pull_damage) gets one out.",
        ),
        *_metal_specs(),
    )


def _metal_specs() -> Iterable[FeatureSpec]:
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


# -- swallow ----------------------------------------------------------------------------------


#: The conditions of a creature inside another, by the source's prefix.
_INSIDE: Final = {"swallow": "swallowed", "engulf": "engulfed"}


def _swallowed_by(
    ctx: RuleContext, holder: str, prefix: str | None = None
) -> list[tuple[str, str]]:
    """``(effect id, creature)`` of the creatures ``holder`` has inside it (swallowed or
    engulfed; only those of ``prefix``, ``swallow`` or ``engulf``, when given)."""
    sources = {f"{p}:{holder}": c for p, c in _INSIDE.items() if prefix in (None, p)}
    return [
        (e.id, e.creature)
        for e in ctx.state.condition_effects.values()
        if sources.get(e.source) == e.condition
    ]


def _swallower(ctx: RuleContext, creature: str) -> str | None:
    """The id of the creature that has ``creature`` inside it (swallowed, engulfed)."""
    for e in ctx.state.condition_effects.values():
        if e.creature != creature or e.condition not in _INSIDE.values():
            continue
        prefix, _, holder = e.source.partition(":")
        if _INSIDE.get(prefix) == e.condition:
            return holder
    return None


def _end(ctx: RuleContext, effect_id: str, reason: str) -> None:
    """End ``effect_id`` and the effects hanging on it (the swallowed one's blindness)."""
    effects = ctx.state.condition_effects
    below = [e.id for e in effects.values() if e.parent == effect_id]
    effect = effects[effect_id]
    ctx.emit(ConditionEffectEnded(effect.id, effect.creature, effect.condition, reason))
    for child in below:
        if child in effects:
            _end(ctx, child, f"its parent effect {effect_id} ended")


def _rider(attack: Attack, feature: str) -> Any:
    return next(
        (r for r in attack.on_hit if r.id in (feature, f"zonekeep.srd.{feature}") and r.gm is None),
        None,
    )


def _swallow(ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack) -> None:
    rider = _rider(attack, "swallow")
    if rider is None or target.out_of_fight or attacker.out_of_fight:
        return
    if int(target.size) > int(Size.parse(rider.params["max_size"])):
        return
    if _swallowed_by(ctx, attacker.id, "swallow") or _swallower(ctx, target.id) is not None:
        return
    # The grapple must be an earlier one: the hit that grapples does not also swallow.
    new = {e.effect.id for e in ctx.events if isinstance(e, ConditionEffectApplied)}
    prefix = f"grapple:{attacker.id}:"
    grapples = [
        e
        for e in ctx.state.condition_effects.values()
        if e.creature == target.id and e.condition == "grappled" and e.source.startswith(prefix)
    ]
    if not grapples or any(g.id in new for g in grapples):
        return
    for grapple in grapples:
        _end(ctx, grapple.id, "swallowed")
    swallowed = apply_timed_condition(ctx, target.id, SWALLOWED, source=f"swallow:{attacker.id}")
    if swallowed is None:
        return
    for condition in ("blinded", "restrained"):
        apply_timed_condition(
            ctx, target.id, condition, source=f"swallow:{attacker.id}", parent=swallowed
        )


@hookimpl(specname="zonekeep_attack_made", trylast=True)
def bodies_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if damage is None or not result.hit or not attack.on_hit:
        return
    _swallow(ctx, attacker, ctx.state.creatures[target.id], attack)


@hookimpl(specname="zonekeep_conditions")
def bodies_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            ENGULFED,
            "Inside a gelatinous cube: restrained, total cover from everyone else, moved "
            "with it, its acid at the start of each of its turns (escape_engulf, pull_out).",
        ),
        ConditionSpec(
            SWALLOWED,
            "Inside the creature that swallowed it: blinded and restrained, total cover from "
            "everyone else, its swallower's damage at the start of each of its turns.",
        ),
    )


@hookimpl(specname="zonekeep_before_attack")
def bodies_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if not ctx.state.condition_effects:
        return
    inside = _swallower(ctx, target.id)
    if inside is not None and inside != attacker.id:
        ctx.refuse(
            "invalid_target",
            f"{target.name} is inside {ctx.state.creatures[inside].name}: it has total cover.",
        )
    mine = _swallower(ctx, attacker.id)
    if mine is not None and mine != target.id:
        ctx.refuse(
            "invalid_target",
            f"{attacker.name} is inside {ctx.state.creatures[mine].name}: it can reach "
            "nothing outside.",
        )


def _swallow_rider(creature: Creature) -> Any:
    for attack in creature.attacks:
        rider = _rider(attack, "swallow")
        if rider is not None:
            return rider
    return None


@hookimpl(specname="zonekeep_turn_start")
def bodies_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if not ctx.state.condition_effects:
        return
    swallowed = _swallowed_by(ctx, creature.id, "swallow")
    rider = _swallow_rider(creature) if swallowed else None
    if rider is not None:
        _digest(ctx, creature, swallowed, rider.params["damage"], rider.params["damage_type"])
    engulfed = _swallowed_by(ctx, creature.id, "engulf")
    action = _action(creature, "engulf") if engulfed else None
    if action is not None:
        p = action.params
        _digest(ctx, creature, engulfed, p["turn_damage"], p["damage_type"])


def _digest(
    ctx: RuleContext, holder: Creature, held: list[tuple[str, str]], dice: Any, kind: Any
) -> None:
    for _effect, cid in held:
        rolled = ctx.roll(str(dice))
        apply_damage(
            ctx,
            ctx.state.creatures[cid],
            rolled.total,
            damage_type=str(kind),
            roll=rolled,
            source=holder.id,
        )


@hookimpl(specname="zonekeep_zone_entered")
def bodies_zone_entered(ctx: RuleContext, creature: Creature, from_zone: str, forced: bool) -> None:
    if not ctx.state.condition_effects or creature.zone is None:
        return
    for _effect, cid in _swallowed_by(ctx, creature.id):
        inside = ctx.state.creatures[cid]
        if inside.zone != creature.zone:
            change_zone(ctx, inside, creature.zone, forced=True, by=creature.id)


@hookimpl(specname="zonekeep_after_damage")
def bodies_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    if creature.traits and not creature.out_of_fight:
        _split(ctx, creature, damage)
    if not creature.out_of_fight or not ctx.state.condition_effects:
        return
    for effect, _cid in _swallowed_by(ctx, creature.id, "engulf"):
        _end(ctx, effect, f"{creature.name} is down")
    for effect, cid in _swallowed_by(ctx, creature.id, "swallow"):
        _end(ctx, effect, f"{creature.name} is down")
        freed = ctx.state.creatures[cid]
        if "prone" not in freed.conditions and not freed.out_of_fight:
            apply_condition(ctx, cid, "prone", f"out of {creature.name}")


# -- split --------------------------------------------------------------------------------------


def _split(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    trait = _trait(creature, "split")
    # What it was dealt before its defences (it is immune to what splits it).
    raw = damage.amount if damage.raw is None else damage.raw
    raw_type = damage.damage_type if damage.raw_type is None else damage.raw_type
    if trait is None or raw <= 0 or raw_type not in trait.params.get("damage_types", ()):
        return
    if creature.size < SPLIT_FROM or creature.hp < 10:
        return
    half = creature.hp // 2
    smaller = Size(int(creature.size) - 1).label
    for field, value in (("size", smaller), ("max_hp", half), ("hp", half)):
        ctx.emit(OverrideApplied(creature.id, creature.id, field, value))
    n = 2
    while f"{creature.id}-{n}" in ctx.state.creatures:
        n += 1
    now = ctx.state.creatures[creature.id]
    copy = attrs.evolve(
        now,
        id=f"{creature.id}-{n}",
        name=f"{creature.name} ({n})",
        conditions=[],
        position=None,
        elements=[],
        sharing_with=None,
    )
    entry = next((e for e in ctx.state.initiative if creature.id in e.members), None)
    if entry is not None:
        # It joins the slot: the slot's roll is an earlier event's, its dice not drawn again.
        entry = attrs.evolve(entry, roll=attrs.evolve(entry.roll, draws=()))
    ctx.emit(CreatureAdded(copy, entry, -1))


# -- ink cloud ---------------------------------------------------------------------------------


def _action(creature: Creature, feature: str) -> Action | None:
    for action in creature.actions:
        if action.id in (feature, f"zonekeep.srd.{feature}") and action.gm is None:
            return action
    return None


def _clouds(state: EncounterState) -> list[Asset]:
    return [a for a in state.arena.assets if a.data.get("srd") == INK]


def _has_ink(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "obscuring-cloud") is None:
        return ("invalid_params", f"{me.name} has no ink to release.")
    return None


def _ink_cloud(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "obscuring-cloud")
    assert action is not None  # (requires)
    if me.zone is None:
        ctx.refuse("invalid_params", f"{me.name} is in no zone.")
    spend_use(ctx, me, action)
    rounds = int(action.params.get("rounds", 10))
    radius = int(action.params["radius"])
    place_asset(
        ctx,
        Asset(
            "ink-cloud",
            "Ink cloud",
            "element",
            me.zone,
            description=f"{me.name}'s ink, {radius}-ft radius: heavily obscured.",
            data={
                "srd": INK,
                "by": me.id,
                "until_round": ctx.state.round + rounds - 1,
                "dash_round": ctx.state.round,
            },
        ),
    )


def _may_ink_dash(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if not any(
        c.data.get("by") == me.id and c.data.get("dash_round") == state.round
        for c in _clouds(state)
    ):
        return ("invalid_params", f"{me.name} released no ink this turn.")
    return None


def _ink_dash(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    for cloud in _clouds(ctx.state):
        if cloud.data.get("by") == me.id and cloud.data.get("dash_round") == ctx.state.round:
            change_asset(ctx, cloud.id, data={**cloud.data, "dash_round": None})
    ctx.emit(Dashed(me.id))


@hookimpl(specname="zonekeep_commands")
def bodies_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "ink_cloud",
            _ink_cloud,
            "Action: Ink Cloud, a heavily obscured cloud of ink fills your zone for a "
            "minute; then ink_dash, a bonus action, takes the Dash action.",
            {"creature": Param("creature", True, "the acting creature")},
            costs=("action",),
            requires=_has_ink,
        ),
        CommandSpec(
            "ink_dash",
            _ink_dash,
            "Bonus action: after ink_cloud on this turn, take the Dash action.",
            {"creature": Param("creature", True, "the acting creature")},
            costs=("bonus",),
            requires=_may_ink_dash,
        ),
    )


def _feels(state: EncounterState, seer: Creature, seen: Creature) -> bool:
    """Whether ``seer`` perceives ``seen`` without sight (blindsight, tremorsense)."""
    reach = max(int(seer.senses.get("blindsight", 0)), int(seer.senses.get("tremorsense", 0)))
    if reach <= 0 or seer.zone is None or seen.zone is None:
        return False
    distance = path_distance(state.arena, seer.zone, seen.zone)
    return distance is not None and distance <= reach


@hookimpl(specname="zonekeep_roll_modifiers")
def bodies_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if roll.kind != "attack" or roll.target is None or not ctx.state.arena.assets:
        return None
    inked = {c.zone for c in _clouds(ctx.state)}
    attacker = ctx.state.creatures.get(roll.actor)
    target = ctx.state.creatures.get(roll.target)
    if not inked or attacker is None or target is None:
        return None
    if attacker.zone not in inked and target.zone not in inked:
        return None
    found = []
    if not _feels(ctx.state, attacker, target):
        found.append(RollModifier("disadvantage", "ink cloud: target unseen"))
    if not _feels(ctx.state, target, attacker):
        found.append(RollModifier("advantage", "ink cloud: attacker unseen"))
    return found


@hookimpl(specname="zonekeep_round_end")
def bodies_round_end(ctx: RuleContext, round: int) -> None:
    for cloud in _clouds(ctx.state):
        if int(cloud.data.get("until_round", 0)) <= round:
            change_asset(ctx, cloud.id, remove=True, reason="the ink dispersed")


# -- engulf ------------------------------------------------------------------------------------


def _room_taken(creature: Creature) -> int:
    """How much of a cube one creature fills: a Large one all four places."""
    return 4 if creature.size >= Size.LARGE else 1


def _can_engulf(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "engulf") is None:
        return ("invalid_params", f"{me.name} cannot engulf.")
    return None


def _engulf(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "engulf")
    assert action is not None  # (requires)
    p = action.params
    names = cmd.params["creatures"]
    targets = [ctx.creature(c, role="target") for c in names]
    if len({t.id for t in targets}) != len(targets):
        ctx.refuse("invalid_params", "Name each creature once.")
    largest = Size.parse(p["max_size"])
    for t in targets:
        if t.id == me.id or t.out_of_fight or t.zone != me.zone:
            ctx.refuse("invalid_target", f"{me.name} cannot engulf {t.name}: not in its zone.")
        if t.size > largest:
            ctx.refuse("invalid_target", f"{t.name} is too large for {me.name} to engulf.")
        if _swallower(ctx, t.id) is not None:
            ctx.refuse("invalid_target", f"{t.name} is already inside a creature.")
    trait = _trait(me, "engulf")
    room = int(trait.params["holds"]) if trait is not None else 4
    inside = [ctx.state.creatures[c] for _e, c in _swallowed_by(ctx, me.id, "engulf")]
    if sum(_room_taken(c) for c in (*inside, *targets)) > room:
        ctx.refuse(
            "invalid_target",
            f"{me.name} holds one Large creature or {room} smaller ones: no room for all.",
        )
    for t in targets:
        now = ctx.state.creatures[t.id]
        if saving_throw(ctx, now, "dex", int(p["dc"]), f"{me.name}'s Engulf", against=(ENGULFED,)):
            continue
        rolled = ctx.roll(str(p["damage"]))
        apply_damage(
            ctx, now, rolled.total, damage_type=str(p["damage_type"]), roll=rolled, source=me.id
        )
        now = ctx.state.creatures[t.id]
        if now.out_of_fight:
            continue
        held = apply_timed_condition(ctx, t.id, ENGULFED, source=f"engulf:{me.id}")
        if held is not None:
            apply_timed_condition(ctx, t.id, "restrained", source=f"engulf:{me.id}", parent=held)


def _engulfed(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    for e in state.condition_effects.values():
        if e.creature == me.id and e.condition == ENGULFED:
            return None
    return ("invalid_params", f"{me.name} is not engulfed.")


def _engulf_effect(ctx: RuleContext, creature: str) -> tuple[str, Creature] | None:
    """The ``engulfed`` effect on ``creature`` and the cube holding it."""
    for e in ctx.state.condition_effects.values():
        if e.creature == creature and e.condition == ENGULFED and e.source.startswith("engulf:"):
            cube = ctx.state.creatures.get(e.source.removeprefix("engulf:"))
            if cube is not None:
                return e.id, cube
    return None


def _escape_engulf(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    found = _engulf_effect(ctx, me.id)
    if found is None:
        ctx.refuse("invalid_params", f"{me.name} is not engulfed.")
    effect, cube = found
    action = _action(cube, "engulf")
    dc = int(action.params["escape_dc"]) if action is not None else 10
    if ability_check(ctx, me, "str", dc=dc, source=f"escape {cube.name}").success:
        _end(ctx, effect, f"escaped {cube.name}")


def _pull_out(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    found = _engulf_effect(ctx, target.id)
    if found is None:
        ctx.refuse("invalid_target", f"{target.name} is not engulfed.")
    effect, cube = found
    if me.zone != cube.zone or _swallower(ctx, me.id) is not None:
        ctx.refuse("invalid_target", f"{me.name} cannot reach into {cube.name}.")
    trait = _trait(cube, "engulf")
    if trait is None:
        ctx.refuse("invalid_target", f"{cube.name}'s Ooze Cube is the GM's to rule.")
    p = trait.params
    rolled = ctx.roll(str(p["pull_damage"]))
    apply_damage(
        ctx, me, rolled.total, damage_type=str(p["damage_type"]), roll=rolled, source=cube.id
    )
    now = ctx.state.creatures[me.id]
    if now.out_of_fight:
        return
    if ability_check(
        ctx, now, "str", dc=int(p["pull_dc"]), source=f"pull out of {cube.name}"
    ).success:
        _end(ctx, effect, f"pulled out by {me.name}")


@hookimpl(specname="zonekeep_commands")
def bodies_engulf_commands() -> Iterable[CommandSpec]:
    creature = Param("creature", True, "the acting creature")
    return (
        CommandSpec(
            "engulf",
            _engulf,
            "Action: Engulf the creatures of your zone (move there first): each saves or is "
            "engulfed, taking your acid, restrained, moved with you.",
            {"creature": creature, "creatures": Param("creatures", True, "the creatures")},
            costs=("action",),
            requires=_can_engulf,
        ),
        CommandSpec(
            "escape_engulf",
            _escape_engulf,
            "Action: try to escape the cube that engulfs you (a Strength check).",
            {"creature": creature},
            costs=("action",),
            requires=_engulfed,
        ),
        CommandSpec(
            "pull_out",
            _pull_out,
            "Action: pull an engulfed creature out of the cube in your zone (a Strength "
            "check; its acid burns you either way).",
            {"creature": creature, "target": Param("creature", True, "the engulfed creature")},
            costs=("action",),
        ),
    )
