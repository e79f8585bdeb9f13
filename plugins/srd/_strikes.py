"""SRD creature features about damage and hit points (part of the ``zonekeep.srd`` plugin).

Each hook implementation here carries a name of its own (``strikes_...``) and names the
hook it implements with ``specname``, so that the package ``zonekeep.plugins.srd`` can
import it beside the other feature modules' implementations of the same hooks. Only
public ``zonekeep.sdk`` names are used, as a third-party content plugin would.

"Within 5 feet" maps to the zones as the rules do everywhere (docs/rules.md, "Rulings"):
a creature engaged with the other, or a melee attacker in its zone.

- ``damage-absorption`` (trait, ``damage_type``): damage of that type is cancelled, and
  the creature regains as many hit points as the damage dealt (the flesh golem's
  Lightning Absorption).
- ``heated-body`` and ``corrosive-form`` (traits, ``damage``, ``damage_type``,
  ``within``): a creature that hits it with a melee attack from its zone takes the
  damage (rolled for each hit). The black pudding's corroding of weapons and the damage
  for touching it are the GM's.
- ``stench`` (trait, ``save``, ``condition``): a creature that starts its turn engaged
  with it saves or gets the condition until the start of its next turn; a success makes
  it immune to that creature's stench for 24 hours (the condition ``stench_immune``,
  from that creature, for 14,400 rounds).
- ``death-burst`` (trait): when the creature is defeated, each creature within its
  ``radius`` saves: ``radius`` 5 is the creatures engaged with it, more is everyone in
  its zone; a failure takes the damage (one roll for all; half on a success with
  ``half_on_success``) or gets the ``condition`` for ``rounds`` (saving again at the end
  of each of its turns with ``save_ends``).
- ``charge``, ``pounce`` and ``trampling-charge`` (traits): a hit with the named attack
  on the creature's own turn, after it entered the target's zone this turn having spent
  at least ``distance`` feet of movement (docs/rules.md, "Creature features"), deals
  the ``extra_damage`` (doubled dice on a critical hit) and the target saves or is
  knocked prone (``save``). The minotaur's push and the bonus attack against a prone
  target are the GM's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from zonekeep.sdk import (
    ABILITIES,
    DAMAGE_TYPES,
    DEFEATED,
    STABLE,
    Attack,
    AttackMade,
    ConditionEffectEnded,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    FeatureSpec,
    Healed,
    RollModifier,
    RollRequest,
    RuleContext,
    Trait,
    affect_zone,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    defend,
    hookimpl,
    resource_key,
    saving_throw,
    spend_use,
)

__all__ = [
    "strikes_after_damage",
    "strikes_attack_made",
    "strikes_before_attack",
    "strikes_condition_applied",
    "strikes_conditions",
    "strikes_features",
    "strikes_modify_damage",
    "strikes_roll_modifiers",
    "strikes_turn_start",
    "strikes_zero_hit_points",
]

#: The condition a creature that saved against a stench gets: immune to that creature's
#: stench (its ``source``) for 24 hours.
STENCH_IMMUNE: Final = "stench_immune"
#: 24 hours in rounds of 6 seconds.
DAY_ROUNDS: Final = 14_400
#: The condition that stops a creature's regeneration at the start of its next turn (it
#: took acid or fire damage), ended there by the regeneration itself.
REGENERATION_STOPPED: Final = "regeneration_stopped"
#: The source of the damage a failed Undead Fortitude save deals: the last hit point.
FORTITUDE_FAILED: Final = "undead fortitude failed"
#: A death burst of this radius reaches only the creatures engaged with the dying one.
ENGAGED_RADIUS: Final = 5

_DICE: Final = {"type": "string", "format": "dice"}
_DAMAGE_TYPE: Final = {"enum": list(DAMAGE_TYPES)}
_SAVE: Final = {
    "type": "object",
    "required": ["ability", "dc"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
    },
    "additionalProperties": False,
}
_SAVE_CONDITION: Final = {
    "type": "object",
    "required": ["ability", "dc", "condition"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "condition": {"type": "string", "minLength": 1},
    },
    "additionalProperties": False,
}
_WITHIN: Final = {"type": "integer", "minimum": 5, "maximum": 5}

ABSORPTION_SCHEMA: Final = {
    "type": "object",
    "required": ["damage_type"],
    "properties": {"damage_type": _DAMAGE_TYPE},
    "additionalProperties": False,
}
BODY_SCHEMA: Final = {
    "type": "object",
    "required": ["damage", "damage_type"],
    "properties": {"damage": _DICE, "damage_type": _DAMAGE_TYPE, "within": _WITHIN},
    "additionalProperties": False,
}
STENCH_SCHEMA: Final = {
    "type": "object",
    "required": ["save", "condition"],
    "properties": {
        "within": _WITHIN,
        "save": _SAVE,
        "condition": {"type": "string", "minLength": 1},
        "until": {"enum": ["start of its next turn"]},
    },
    "additionalProperties": False,
}
DEATH_BURST_SCHEMA: Final = {
    "type": "object",
    "required": ["radius", "save"],
    "properties": {
        "radius": {"type": "integer", "minimum": 5, "maximum": 30},
        "save": _SAVE,
        "damage": _DICE,
        "damage_type": _DAMAGE_TYPE,
        "half_on_success": {"type": "boolean"},
        "condition": {"type": "string", "minLength": 1},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
        "save_ends": {"type": "boolean"},
    },
    "additionalProperties": False,
}
CHARGE_SCHEMA: Final = {
    "type": "object",
    "required": ["distance", "attack"],
    "properties": {
        "distance": {"type": "integer", "minimum": 5, "maximum": 120},
        "attack": {"type": "string", "minLength": 1},
        "extra_damage": {
            "type": "object",
            "required": ["damage", "damage_type"],
            "properties": {"damage": _DICE, "damage_type": _DAMAGE_TYPE},
            "additionalProperties": False,
        },
        "save": _SAVE_CONDITION,
        "push": {"type": "integer", "minimum": 5, "maximum": 60},
        "bonus_attack": {"type": "string", "minLength": 1},
    },
    "additionalProperties": False,
}
REGENERATION_SCHEMA: Final = {
    "type": "object",
    "required": ["hp"],
    "properties": {
        "hp": {"type": "integer", "minimum": 1, "maximum": 100},
        "stopped_by": {"type": "array", "items": _DAMAGE_TYPE, "maxItems": 13},
    },
    "additionalProperties": False,
}
FORTITUDE_SCHEMA: Final = {
    "type": "object",
    "required": ["dc"],
    "properties": {
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "not": {"type": "array", "items": {"enum": [*DAMAGE_TYPES, "critical"]}, "maxItems": 14},
    },
    "additionalProperties": False,
}
EXTRA_SCHEMA: Final = {
    "type": "object",
    "required": ["damage"],
    "properties": {"damage": _DICE},
    "additionalProperties": False,
}
RELENTLESS_SCHEMA: Final = {
    "type": "object",
    "required": ["max_damage"],
    "properties": {"max_damage": {"type": "integer", "minimum": 1, "maximum": 100}},
    "additionalProperties": False,
}
GRAPPLE_FOCUS_SCHEMA: Final = {
    "type": "object",
    "required": ["attack"],
    "properties": {"attack": {"type": "string", "minLength": 1}, "advantage": {"type": "boolean"}},
    "additionalProperties": False,
}
GRAPPLE_LIMIT_SCHEMA: Final = {
    "type": "object",
    "required": ["attack", "max"],
    "properties": {
        "attack": {"type": "string", "minLength": 1},
        "max": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "additionalProperties": False,
}
GRAPPLED: Final = "grappled"
#: The traits that reward moving into the target's zone before the hit.
CHARGES: Final = ("charge", "pounce", "trampling-charge")


def _attack_named(params: Mapping[str, Any], attacks: Iterable[str]) -> Iterable[str]:
    names = list(attacks)
    for key in ("attack", "bonus_attack"):
        name = params.get(key)
        if name is not None and name not in names:
            yield f"{key} {name!r} is not one of its attacks ({', '.join(names) or 'none'})"


def _death_burst_check(params: Mapping[str, Any], attacks: Iterable[str]) -> Iterable[str]:
    has_damage = "damage" in params
    if has_damage == ("condition" in params):
        yield "give either damage (with damage_type) or a condition"
    if has_damage and "damage_type" not in params:
        yield "damage goes with a damage_type"


@hookimpl(specname="zonekeep_features")
def strikes_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "damage-absorption",
            "trait",
            ABSORPTION_SCHEMA,
            doc="Damage of its damage_type is cancelled and heals it by the amount instead.",
        ),
        FeatureSpec(
            "heated-body",
            "trait",
            BODY_SCHEMA,
            doc="A creature that hits it with a melee attack from its zone takes the damage.",
        ),
        FeatureSpec(
            "corrosive-form",
            "trait",
            BODY_SCHEMA,
            doc="A creature that hits it with a melee attack from its zone takes the "
            "damage (corroded weapons are the GM's).",
        ),
        FeatureSpec(
            "stench",
            "trait",
            STENCH_SCHEMA,
            doc="A creature starting its turn engaged with it saves or gets the condition "
            "until the start of its next turn; a success makes it immune for 24 hours.",
        ),
        FeatureSpec(
            "death-burst",
            "trait",
            DEATH_BURST_SCHEMA,
            doc="When it is defeated, the creatures engaged with it (radius 5) or in its "
            "zone (more) save against its damage or condition.",
            check=_death_burst_check,
        ),
        *(
            FeatureSpec(
                extra,
                "trait",
                EXTRA_SCHEMA,
                doc=doc,
            )
            for extra, doc in (
                (
                    "martial-advantage",
                    "Once per turn (its uses), the damage more on a hit against a creature "
                    "engaged with one of its allies that is not incapacitated.",
                ),
            )
        ),
        FeatureSpec(
            "grappler",
            "trait",
            {"type": "object", "properties": {}, "additionalProperties": False},
            doc="Advantage on its attack rolls against a creature it grapples.",
        ),
        FeatureSpec(
            "grapple-focus",
            "trait",
            GRAPPLE_FOCUS_SCHEMA,
            doc="While it grapples a creature with the attack, it makes that attack only "
            "against that creature (with advantage when advantage is true).",
            check=_attack_named,
        ),
        FeatureSpec(
            "grapple-limit",
            "trait",
            GRAPPLE_LIMIT_SCHEMA,
            doc="While it grapples max creatures with the attack, it cannot make that "
            "attack against another.",
            check=_attack_named,
        ),
        FeatureSpec(
            "relentless",
            "trait",
            RELENTLESS_SCHEMA,
            doc="Damage of at most max_damage that would drop it to 0 leaves it at 1 "
            "instead, while it has a use left (a rest gives it back).",
        ),
        FeatureSpec(
            "regeneration",
            "trait",
            REGENERATION_SCHEMA,
            doc="Regains hp at the start of its turn unless it took damage of a stopped_by "
            "type since; at 0 hit points it stays stable, and is defeated only if its turn "
            "starts at 0 and it does not regenerate.",
        ),
        FeatureSpec(
            "undead-fortitude",
            "trait",
            FORTITUDE_SCHEMA,
            doc="Damage that would drop it to 0 leaves it at 1 on a Constitution save "
            "against dc + the damage (not the damage types or critical hits in not).",
        ),
        *(
            FeatureSpec(
                charge,
                "trait",
                CHARGE_SCHEMA,
                doc="A hit with the named attack after entering the target's zone this "
                "turn with at least distance feet moved: extra damage, and a save or prone.",
                check=_attack_named,
            )
            for charge in CHARGES
        ),
    ]


@hookimpl(specname="zonekeep_conditions")
def strikes_conditions() -> Iterable[ConditionSpec]:
    return [
        ConditionSpec(
            STENCH_IMMUNE,
            "Immune to the stench of the creature that is its source (24 hours after a "
            "successful save).",
            name="Immune to a stench",
            durations=("rounds",),
        ),
        ConditionSpec(
            REGENERATION_STOPPED,
            "It took damage that stops its regeneration: it does not regenerate at the "
            "start of its next turn.",
            name="Regeneration stopped",
        ),
    ]


def _traits(creature: Creature, feature: str) -> list[Trait]:
    """``creature``'s traits ``feature`` (``stench``) that the data does not mark ``gm``."""
    return [
        t for t in creature.traits if t.id in (feature, f"zonekeep.srd.{feature}") and t.gm is None
    ]


def _trait(creature: Creature, feature: str) -> Trait | None:
    found = _traits(creature, feature)
    return found[0] if found else None


# -- damage absorption ---------------------------------------------------------------------


def _absorbs(ctx: RuleContext, target: str, damage_type: str) -> Trait | None:
    creature = ctx.state.creatures.get(target)
    if creature is None or not damage_type:
        return None
    for trait in _traits(creature, "damage-absorption"):
        if trait.params.get("damage_type") == damage_type:
            return trait
    return None


@hookimpl(specname="zonekeep_modify_damage", trylast=True)
def strikes_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    creatures = ctx.state.creatures
    if damage.target not in creatures:
        return None
    target = creatures[damage.target]
    if not target.traits or damage.amount <= 0:
        return None
    trait = _absorbs(ctx, damage.target, damage.damage_type)
    if trait is not None:
        return damage.cancel(trait.name)
    relentless = _trait(target, "relentless")
    if (
        relentless is not None
        and target.hp > 0
        and not target.out_of_fight
        and _has_use(target, relentless)
        and _taken(target, damage) <= int(relentless.params["max_damage"])
    ):
        held = _hold_at_one(target, damage, relentless.name)
        if held is not None:
            return held
    fortitude = _fortitude(target, damage)
    if fortitude is not None and target.hp > 0 and not target.out_of_fight:
        # Held at 1 hit point for now: the save after the damage decides (a failure
        # deals the last hit point).
        return _hold_at_one(target, damage, fortitude.name)
    return None


def _absorb(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    trait = _absorbs(ctx, creature.id, damage.damage_type)
    if trait is None or damage.amount != 0 or creature.out_of_fight:
        return
    before = _cancelled_amount(damage, trait.name)
    if before <= 0:
        return
    gained = min(before, creature.max_hp - creature.hp)
    if gained > 0:
        ctx.emit(Healed(creature.id, gained, creature.hp + gained, trait.name))


def _cancelled_amount(damage: Damaged, source: str) -> int:
    """The amount a ``cancel`` step of ``source`` took away (the one before it left)."""
    amount = damage.raw or 0
    for step in damage.steps:
        if step.kind == "cancel" and step.source == source:
            return amount
        amount = step.amount
    return 0


# -- heated body, corrosive form, charges ----------------------------------------------------


@hookimpl(specname="zonekeep_attack_made")
def strikes_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not result.hit or not (attacker.traits or target.traits):
        return
    if attack.kind == "melee" and attacker.zone is not None and attacker.zone == target.zone:
        for feature in ("heated-body", "corrosive-form"):
            for trait in _traits(target, feature):
                _burn(ctx, target, attacker.id, trait)
    _extra_on_hit(ctx, attacker.id, target.id, attack, result)
    for feature in CHARGES:
        for trait in _traits(attacker, feature):
            if trait.params.get("attack") == attack.name:
                _charge(ctx, attacker.id, target.id, attack, result, trait)


def _burn(ctx: RuleContext, owner: Creature, attacker_id: str, trait: Trait) -> None:
    attacker = ctx.state.creatures[attacker_id]
    if attacker.out_of_fight:
        return
    rolled = ctx.roll(str(trait.params["damage"]))
    apply_damage(
        ctx,
        attacker,
        rolled.total,
        damage_type=str(trait.params["damage_type"]),
        roll=rolled,
        source=f"{owner.name}'s {trait.name}",
    )


def charged(ctx: RuleContext, attacker: Creature, target: Creature, distance: int) -> bool:
    """Whether ``attacker`` charged ``target`` (docs/rules.md, "Creature features"): it is
    its turn, it entered the target's zone this turn, and it has spent at least
    ``distance`` feet of movement this turn."""
    s = ctx.state
    return (
        s.active == attacker.id
        and attacker.zone is not None
        and attacker.zone == target.zone
        and s.resources.entered_zone == attacker.zone
        and s.resources.movement_spent >= distance
    )


def _charge(
    ctx: RuleContext,
    attacker_id: str,
    target_id: str,
    attack: Attack,
    result: AttackMade,
    trait: Trait,
) -> None:
    attacker = ctx.state.creatures[attacker_id]
    target = ctx.state.creatures[target_id]
    if not charged(ctx, attacker, target, int(trait.params["distance"])):
        return
    extra = trait.params.get("extra_damage")
    if extra is not None and not target.out_of_fight:
        rolled = ctx.roll(str(extra["damage"]), double_dice=result.critical)
        apply_damage(
            ctx,
            target,
            rolled.total,
            damage_type=str(extra["damage_type"]),
            roll=rolled,
            source=attacker.id,
            attacker=attacker.id,
            attack=attack.name,
            critical=result.critical,
        )
    save = trait.params.get("save")
    target = ctx.state.creatures[target_id]
    if save is None or target.out_of_fight:
        return
    condition = str(save["condition"])
    source = f"{attacker.name}'s {trait.name}"
    saved = saving_throw(ctx, target, str(save["ability"]), int(save["dc"]), source)
    if not saved and condition not in ctx.state.creatures[target_id].conditions:
        apply_condition(ctx, target_id, condition, source)


# -- stench -----------------------------------------------------------------------------------


def _immune_to(ctx: RuleContext, creature_id: str, source: str) -> bool:
    return any(
        e.creature == creature_id and e.condition == STENCH_IMMUNE and e.source == source
        for e in ctx.state.condition_effects.values()
    )


# trylast: after the durations plugin ended what lasted until the start of this turn (an
# earlier stench's poison), or it would end the new poison at once.
@hookimpl(specname="zonekeep_turn_start", trylast=True)
def strikes_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if creature.traits:
        _regenerate(ctx, creature)
    s = ctx.state
    me = creature.id
    for a, b in s.engagements:
        if me != a and me != b:
            continue
        other = s.creatures[b if a == me else a]
        if not other.traits or other.out_of_fight:
            continue
        for trait in _traits(other, "stench"):
            now = ctx.state.creatures[creature.id]
            if now.out_of_fight or _immune_to(ctx, creature.id, other.id):
                continue
            save = trait.params["save"]
            source = f"{other.name}'s {trait.name}"
            if saving_throw(ctx, now, str(save["ability"]), int(save["dc"]), source):
                apply_timed_condition(
                    ctx, creature.id, STENCH_IMMUNE, rounds=DAY_ROUNDS, source=other.id
                )
            else:
                apply_timed_condition(
                    ctx, creature.id, str(trait.params["condition"]), until="start", source=other.id
                )


# -- death burst ------------------------------------------------------------------------------


def _burst_targets(ctx: RuleContext, dying: Creature, radius: int) -> list[str]:
    """Who a death burst of ``radius`` reaches: those engaged with ``dying`` (radius 5),
    or every creature in the fight in its zone (more), in roster order."""
    s = ctx.state
    if radius <= ENGAGED_RADIUS:
        near = {b if a == dying.id else a for a, b in s.engagements if dying.id in (a, b)}
    else:
        near = {c.id for c in s.creatures.values() if c.zone == dying.zone and c.id != dying.id}
    return [cid for cid in s.creatures if cid in near and not s.creatures[cid].out_of_fight]


@hookimpl(specname="zonekeep_condition_applied", tryfirst=True)
def strikes_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    if condition != DEFEATED or creature.zone is None:
        return
    for trait in _traits(creature, "death-burst"):
        _death_burst(ctx, creature, trait)


def _death_burst(ctx: RuleContext, dying: Creature, trait: Trait) -> None:
    params = trait.params
    radius = int(params["radius"])
    ability, dc = str(params["save"]["ability"]), int(params["save"]["dc"])
    source = f"{dying.name}'s {trait.name}"
    if "damage" in params and radius > ENGAGED_RADIUS and dying.zone is not None:
        affect_zone(
            ctx,
            dying.zone,
            damage=str(params["damage"]),
            damage_type=str(params["damage_type"]),
            source=source,
            save=ability,
            dc=dc,
            half_on_save=bool(params.get("half_on_success", False)),
            attacker=dying.id,
        )
        return
    targets = _burst_targets(ctx, dying, radius)
    if not targets:
        return
    rolled = ctx.roll(str(params["damage"])) if "damage" in params else None
    for cid in targets:
        target = ctx.state.creatures[cid]
        if target.out_of_fight:
            continue
        saved = saving_throw(ctx, target, ability, dc, source)
        if rolled is not None:
            amount = (
                (rolled.total // 2 if params.get("half_on_success") else 0)
                if saved
                else rolled.total
            )
            apply_damage(
                ctx,
                target,
                amount,
                damage_type=str(params["damage_type"]),
                roll=rolled,
                source=source,
            )
        elif not saved:
            rounds = params.get("rounds")
            apply_timed_condition(
                ctx,
                cid,
                str(params["condition"]),
                rounds=int(rounds) if rounds is not None else None,
                save=ability if params.get("save_ends") else None,
                dc=dc if params.get("save_ends") else None,
                source=dying.id,
            )


# -- regeneration -----------------------------------------------------------------------------


@hookimpl(specname="zonekeep_zero_hit_points", tryfirst=True)
def strikes_zero_hit_points(ctx: RuleContext, creature: Creature) -> str | None:
    """A creature that regenerates is not defeated at 0 hit points: it is stable until
    the start of its turn decides (``_regenerate``)."""
    if not creature.traits:
        return None
    return STABLE if _trait(creature, "regeneration") is not None else None


def _stopped(ctx: RuleContext, creature_id: str) -> list[str]:
    return [
        e.id
        for e in ctx.state.condition_effects.values()
        if e.creature == creature_id and e.condition == REGENERATION_STOPPED
    ]


def _regenerate(ctx: RuleContext, creature: Creature) -> None:
    """Regeneration at the start of ``creature``'s turn: stopped (the stop then ends),
    or the hit points regained."""
    trait = _trait(creature, "regeneration")
    if trait is None or creature.out_of_fight:
        return
    stopped = _stopped(ctx, creature.id)
    if stopped:
        for effect in stopped:
            ctx.emit(
                ConditionEffectEnded(
                    effect, creature.id, REGENERATION_STOPPED, "its turn started", expired=True
                )
            )
        if creature.hp == 0:
            if STABLE in creature.conditions:
                ctx.emit(ConditionRemoved(creature.id, STABLE, "did not regenerate"))
            apply_condition(ctx, creature.id, DEFEATED, "at 0 hit points, did not regenerate")
        return
    hp = creature.hp
    gained = min(int(trait.params["hp"]), creature.max_hp - hp)
    if gained <= 0:
        return
    ctx.emit(Healed(creature.id, gained, hp + gained, trait.name))
    if hp == 0 and STABLE in ctx.state.creatures[creature.id].conditions:
        ctx.emit(ConditionRemoved(creature.id, STABLE, "regenerated"))


def _stop_regeneration(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    trait = _trait(creature, "regeneration")
    if trait is None or damage.amount <= 0 or creature.out_of_fight:
        return
    if damage.damage_type in trait.params.get("stopped_by", ()) and not _stopped(ctx, creature.id):
        apply_timed_condition(ctx, creature.id, REGENERATION_STOPPED, source=damage.damage_type)


# -- undead fortitude -------------------------------------------------------------------------


def _fortitude(creature: Creature, damage: Damage) -> Trait | None:
    trait = _trait(creature, "undead-fortitude")
    if trait is None or damage.source == FORTITUDE_FAILED:
        return None
    spared = trait.params.get("not", ())
    if ("critical" in spared and damage.critical) or damage.damage_type in spared:
        return None
    return trait


def _taken(creature: Creature, damage: Damage) -> int:
    """What ``damage`` would take from ``creature`` after its defences."""
    return defend(
        damage,
        creature.damage_immunities,
        creature.damage_resistances,
        creature.damage_vulnerabilities,
    ).amount


def _hold_at_one(creature: Creature, damage: Damage, source: str) -> Damage | None:
    """``damage`` reduced (a step of ``source``) so that it leaves ``creature`` at least 1
    hit point, or None when it would not drop it to 0."""
    if damage.amount <= 0 or _taken(creature, damage) < creature.hp:
        return None
    for keep in range(damage.amount - 1, -1, -1):
        held = damage.reduce(damage.amount - keep, source)
        if _taken(creature, held) < creature.hp:
            return held
    return None  # pragma: no cover - keep 0 always leaves it standing


def _before_step(damage: Damaged, source: str) -> int | None:
    """The amount a ``reduce`` step of ``source`` started from, or None without one."""
    amount = damage.raw or 0
    for step in damage.steps:
        if step.kind == "reduce" and step.source == source:
            return amount
        amount = step.amount
    return None


# One implementation for every after-damage feature: the hook runs for every instance of
# damage, and a creature without traits must cost nearly nothing (bench/cost_gate.py).
@hookimpl(specname="zonekeep_after_damage")
def strikes_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    if not creature.traits:
        return
    _absorb(ctx, creature, damage)
    _stop_regeneration(ctx, creature, damage)
    relentless = _trait(creature, "relentless")
    if relentless is not None and _before_step(damage, relentless.name) is not None:
        spend_use(ctx, creature, relentless)
        return
    trait = _trait(creature, "undead-fortitude")
    if trait is None or creature.out_of_fight:
        return
    before = _before_step(damage, trait.name)
    if before is None:
        return
    would = _taken(creature, Damage(creature.id, before, damage.damage_type))
    dc = int(trait.params["dc"]) + would
    if saving_throw(ctx, creature, "con", dc, trait.name):
        return
    apply_damage(ctx, ctx.state.creatures[creature.id], creature.hp, source=FORTITUDE_FAILED)


# -- martial advantage, sneak attack -----------------------------------------------------------


def _engaged_ally(ctx: RuleContext, attacker: Creature, target_id: str) -> Creature | None:
    """An ally of ``attacker`` engaged with ``target_id`` (within 5 feet of it) that is not
    incapacitated, or None."""
    for cid in ctx.state.engaged_with(target_id):
        ally = ctx.state.creatures[cid]
        if cid != attacker.id and ally.side == attacker.side and not ally.incapacitated:
            return ally
    return None


def _has_use(creature: Creature, trait: Trait) -> bool:
    if trait.uses is None:
        return True
    left: int = creature.resources.get(resource_key(trait), 1)  # filled in full at creation
    return left > 0


def _extra_on_hit(
    ctx: RuleContext,
    attacker_id: str,
    target_id: str,
    attack: Attack,
    result: AttackMade,
) -> None:
    """Martial Advantage: once per turn, the ``damage`` of the trait (the attack's type),
    doubled dice on a critical hit, when an ally is engaged with the target. (A stat
    block's Sneak Attack is the class feature's, played by ``zonekeep.classes``.)"""
    for feature in ("martial-advantage",):
        attacker = ctx.state.creatures[attacker_id]
        target = ctx.state.creatures[target_id]
        for trait in _traits(attacker, feature):
            if target.out_of_fight or not _has_use(attacker, trait):
                continue
            ally = _engaged_ally(ctx, attacker, target_id)
            if feature == "martial-advantage":
                ready = ally is not None
            else:
                mode = result.roll.advantage
                ready = mode == "advantage" or (ally is not None and mode != "disadvantage")
            if not ready:
                continue
            spend_use(ctx, attacker, trait)
            rolled = ctx.roll(str(trait.params["damage"]), double_dice=result.critical)
            apply_damage(
                ctx,
                target,
                rolled.total,
                damage_type=attack.damage_type,
                roll=rolled,
                source=attacker.id,
                attacker=attacker.id,
                attack=attack.name,
                critical=result.critical,
            )
            break


# -- grapples -------------------------------------------------------------------------------


def held_by(ctx: RuleContext, holder: str, attack: str | None = None) -> list[str]:
    """The creatures ``holder`` grapples: a ``grappled`` condition effect from its attack's
    grapple rider (source ``grapple:<holder>:<attack>``, the features plugin's), or, with no
    ``attack`` named, also one the GM applied naming it as the source (``apply_effect``'s
    ``source``)."""
    prefix = f"grapple:{holder}:"
    found = []
    for effect in ctx.state.condition_effects.values():
        if effect.condition != GRAPPLED or effect.creature in found:
            continue
        by_rider = effect.source == prefix + attack if attack else effect.source.startswith(prefix)
        if by_rider or (attack is None and effect.source == holder):
            found.append(effect.creature)
    return found


@hookimpl(specname="zonekeep_before_attack")
def strikes_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if not attacker.traits:
        return
    for trait in _traits(attacker, "grapple-focus"):
        if trait.params.get("attack") != attack.name:
            continue
        held = held_by(ctx, attacker.id, attack.name)
        if held and target.id not in held:
            names = ", ".join(ctx.state.creatures[c].name for c in held)
            ctx.refuse(
                "invalid_target",
                f"While {attacker.name} grapples {names} with its {attack.name}, it can "
                f"{attack.name} only that creature ({trait.name}).",
            )
    for trait in _traits(attacker, "grapple-limit"):
        if trait.params.get("attack") != attack.name:
            continue
        held = held_by(ctx, attacker.id, attack.name)
        if len(held) >= int(trait.params["max"]) and target.id not in held:
            names = ", ".join(ctx.state.creatures[c].name for c in held)
            ctx.refuse(
                "invalid_target",
                f"{attacker.name} already grapples {names} with its {attack.name}: it cannot "
                f"{attack.name} another creature until a grapple ends ({trait.name}).",
            )


@hookimpl(specname="zonekeep_roll_modifiers")
def strikes_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if roll.kind != "attack" or roll.target is None:
        return None
    creatures = ctx.state.creatures
    if roll.actor not in creatures or not creatures[roll.actor].traits:
        return None
    attacker = creatures[roll.actor]
    if _trait(attacker, "grappler") is not None and roll.target in held_by(ctx, attacker.id):
        return (RollModifier("advantage", "grappler"),)
    for trait in _traits(attacker, "grapple-focus"):
        attack = str(trait.params.get("attack"))
        held = held_by(ctx, attacker.id, attack)
        if trait.params.get("advantage") and roll.target in held and roll.attack in (None, attack):
            return (RollModifier("advantage", f"{trait.name}: grappled"),)
    return None
