"""The SRD creatures' traits that change the odds: advantage, disadvantage and saves.

Part of the ``zonekeep.srd`` content plugin (registered from ``__init__.py``), on the
public SDK only. Each hook implementation names its hook with ``specname`` so that it
sits beside the package's own implementations of the same hooks.

- Roll modifiers (``zonekeep_roll_modifiers``): blood-frenzy, ambusher, reckless,
  sunlight-sensitivity, aversion-of-fire, two-heads' Perception, and the saves:
  brave, fey-ancestry, save-advantage, sure-footed, two-heads, magic-resistance (a
  save's :class:`~zonekeep.sdk.RollRequest` says what it is ``against`` and whether it
  is ``magical``).
- prone-ac (``zonekeep_armor_class_bonus``), restricted-target
  (``zonekeep_before_attack``), surprise-attack (``zonekeep_attack_made``), steadfast
  (``zonekeep_condition_immunity``), aversion-of-fire (``zonekeep_after_damage``, a
  timed condition), reckless (the ``reckless`` command, a timed condition).
- Sunlight is the encounter setting ``sunlight`` of ``zonekeep.srd``: the zones in
  sunlight, or ``["*"]`` for all of them (docs/compendium.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zonekeep.sdk import (
    ABILITIES,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionSpec,
    Creature,
    Damaged,
    EncounterState,
    FeatureSpec,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    SettingSpec,
    Trait,
    apply_damage,
    apply_timed_condition,
    hookimpl,
    path_distance,
)

__all__ = [
    "odds_after_damage",
    "odds_armor_class",
    "odds_attack_made",
    "odds_before_attack",
    "odds_commands",
    "odds_condition_immunity",
    "odds_conditions",
    "odds_features",
    "odds_roll_modifiers",
    "odds_settings",
]

#: The plugin these traits belong to: the name its settings are read under.
PLUGIN = "zonekeep.srd"
#: The condition a reckless creature carries until the start of its next turn.
RECKLESS = "reckless"
#: The condition a flesh golem carries after fire damage, until the end of its next turn.
FIRE_AVERSE = "fire-averse"
#: The senses a Perception check may rely on (as keen-senses' params).
_SENSES = ("sight", "hearing", "smell")
_LOST_WITH = {"sight": "blinded", "hearing": "deafened"}

_NO_PARAMS: Mapping[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}
_CONDITIONS: Mapping[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "minItems": 1,
}
_SAVE_PARAMS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "against": _CONDITIONS,
        "abilities": {"type": "array", "items": {"enum": list(ABILITIES)}, "minItems": 1},
        "spells": {"type": "boolean"},
    },
    "required": ["against"],
    "additionalProperties": False,
}
#: The trait ids whose advantage on saves goes by what the save is against.
_SAVE_TRAITS = ("brave", "fey-ancestry", "save-advantage", "sure-footed", "two-heads")


def _trait(creature: Creature, feature: str) -> Trait | None:
    """``creature``'s trait ``feature``, unless the data marks it ``gm``."""
    for trait in creature.traits:
        if trait.id in (feature, f"zonekeep.srd.{feature}") and trait.gm is None:
            return trait
    return None


@hookimpl(specname="zonekeep_features")
def odds_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "blood-frenzy",
            "trait",
            _NO_PARAMS,
            doc="Advantage on its melee attack rolls against a creature below its hit "
            "point maximum.",
        ),
        FeatureSpec(
            "brave",
            "trait",
            _SAVE_PARAMS,
            doc="Advantage on saves against the listed conditions (frightened).",
        ),
        FeatureSpec(
            "fey-ancestry",
            "trait",
            _SAVE_PARAMS,
            doc="Advantage on saves against the listed conditions (charmed); the spells "
            "plugin's Sleep passes it over.",
        ),
        FeatureSpec(
            "save-advantage",
            "trait",
            _SAVE_PARAMS,
            doc="Advantage on saves against the listed conditions and, with spells, on "
            "saves against a spell or other magical effect.",
        ),
        FeatureSpec(
            "sure-footed",
            "trait",
            _SAVE_PARAMS,
            doc="Advantage on saves of the listed abilities (Strength, Dexterity) against "
            "being knocked prone.",
        ),
        FeatureSpec(
            "two-heads",
            "trait",
            {
                "type": "object",
                "properties": {
                    "against": _CONDITIONS,
                    "senses": {
                        "type": "array",
                        "items": {"enum": list(_SENSES)},
                        "minItems": 1,
                        "maxItems": 3,
                    },
                },
                "required": ["against", "senses"],
                "additionalProperties": False,
            },
            doc="Advantage on Wisdom (Perception) checks (unless every listed sense is "
            "lost) and on saves against the listed conditions.",
        ),
        FeatureSpec(
            "magic-resistance",
            "trait",
            _NO_PARAMS,
            doc="Advantage on saves against spells and other magical effects (a save its "
            "caller marks magical).",
        ),
        FeatureSpec(
            "sunlight-sensitivity",
            "trait",
            {
                "type": "object",
                "properties": {"checks": {"type": "boolean"}, "saves": {"type": "boolean"}},
                "additionalProperties": False,
            },
            doc="In a sunlit zone (the encounter setting sunlight): disadvantage on its "
            "attack rolls and Wisdom (Perception) checks; with checks and saves, on every "
            "ability check and save too.",
        ),
        FeatureSpec(
            "reckless",
            "trait",
            _NO_PARAMS,
            doc="The reckless command before it moves or acts on its turn: advantage on its "
            "melee attack rolls that turn; attack rolls against it have advantage until "
            "the start of its next turn.",
        ),
        FeatureSpec(
            "steadfast",
            "trait",
            {
                "type": "object",
                "properties": {
                    "immune": {"type": "string", "minLength": 1},
                    "ally_within": {"type": "integer", "minimum": 0},
                },
                "required": ["immune", "ally_within"],
                "additionalProperties": False,
            },
            doc="Cannot be given the condition (frightened) while it is not blinded and an "
            "ally able to fight is within range in its line of sight.",
        ),
        FeatureSpec(
            "aversion-of-fire",
            "trait",
            _NO_PARAMS,
            doc="After it takes fire damage: disadvantage on its attack rolls and ability "
            "checks until the end of its next turn (the fire-averse condition).",
        ),
        FeatureSpec(
            "ambusher",
            "trait",
            _NO_PARAMS,
            doc="In round 1, advantage on its attack rolls against an enemy that is still "
            "surprised.",
        ),
        FeatureSpec(
            "prone-ac",
            "trait",
            {
                "type": "object",
                "properties": {"ac": {"type": "integer", "minimum": 0}},
                "required": ["ac"],
                "additionalProperties": False,
            },
            doc="Its armor class is the given one while it is prone.",
        ),
        FeatureSpec(
            "restricted-target",
            "trait",
            {
                "type": "object",
                "properties": {
                    "attack": {"type": "string", "minLength": 1},
                    "targets": _CONDITIONS,
                    "drain": {"type": "boolean"},
                },
                "required": ["attack", "targets"],
                "additionalProperties": False,
            },
            doc="Its named attack is refused against a target that has none of the listed "
            "conditions (grappled counts only when it grapples the target); a willing "
            "target and the drain are the GM's.",
        ),
        FeatureSpec(
            "surprise-attack",
            "trait",
            {
                "type": "object",
                "properties": {"damage": {"type": "string", "format": "dice"}},
                "required": ["damage"],
                "additionalProperties": False,
            },
            doc="In round 1, a hit on an enemy that is still surprised deals the extra "
            "damage (of the attack's type; doubled dice on a critical hit).",
        ),
    ]


@hookimpl(specname="zonekeep_conditions")
def odds_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            RECKLESS,
            "Attack rolls against it have advantage; on its own turn, its melee attack "
            "rolls have advantage (Reckless).",
        ),
        ConditionSpec(
            FIRE_AVERSE,
            "Disadvantage on its attack rolls and ability checks (Aversion of Fire).",
        ),
    )


@hookimpl(specname="zonekeep_settings")
def odds_settings() -> Iterable[SettingSpec]:
    return (
        SettingSpec(
            "sunlight",
            "The zones in sunlight (['*']: every zone), for the creatures with sunlight "
            "sensitivity.",
            {"type": "array", "items": {"type": "string", "minLength": 1}},
            [],
        ),
    )


# -- roll modifiers -------------------------------------------------------------------------


def _in_sunlight(ctx: RuleContext, creature: Creature) -> bool:
    if creature.zone is None:
        return False
    try:
        sunlit = ctx.setting(PLUGIN, "sunlight")
    except KeyError:  # pragma: no cover - the setting is declared above
        return False
    return "*" in sunlit or creature.zone in sunlit


def _surprised_by(state: EncounterState, attacker: Creature, target: str) -> bool:
    """Whether ``target`` counts as a creature ``attacker`` surprised (docs/rules.md):
    round 1, the target an enemy still surprised, the attacker not surprised."""
    other = state.creatures.get(target)
    return (
        state.round == 1
        and other is not None
        and other.side != attacker.side
        and target in state.surprised
        and attacker.id not in state.surprised
    )


def _perception_senses(creature: Creature, trait: Trait) -> list[str]:
    senses = [s for s in trait.params.get("senses", ()) if s in _SENSES]
    return [s for s in senses if _LOST_WITH.get(s) not in creature.conditions]


def _attack_mods(ctx: RuleContext, me: Creature, roll: RollRequest) -> Iterable[RollModifier]:
    s = ctx.state
    target = s.creatures.get(roll.target or "")
    if target is not None:
        if (
            roll.attack_kind == "melee"
            and target.hp < target.max_hp
            and _trait(me, "blood-frenzy") is not None
        ):
            yield RollModifier("advantage", f"blood frenzy: {target.name} is wounded")
        if _trait(me, "ambusher") is not None and _surprised_by(s, me, target.id):
            yield RollModifier("advantage", f"ambusher: {target.name} is surprised")
        if RECKLESS in target.conditions:
            yield RollModifier("advantage", f"reckless: {target.name}")
    if roll.attack_kind == "melee" and RECKLESS in me.conditions and s.active == me.id:
        yield RollModifier("advantage", "reckless")


def _save_mods(me: Creature, roll: RollRequest) -> Iterable[RollModifier]:
    for trait in me.traits:
        if trait.gm is not None:
            continue
        fid = trait.id.removeprefix("zonekeep.srd.")
        if fid == "magic-resistance" and roll.magical:
            yield RollModifier("advantage", f"{trait.name.lower()}: magic")
        elif fid in _SAVE_TRAITS:
            abilities = trait.params.get("abilities")
            if abilities and roll.ability not in abilities:
                continue
            hit = sorted(set(trait.params.get("against", ())) & set(roll.against))
            if hit:
                yield RollModifier("advantage", f"{trait.name.lower()}: {', '.join(hit)}")
            elif trait.params.get("spells") and roll.magical:
                yield RollModifier("advantage", f"{trait.name.lower()}: magic")


@hookimpl(specname="zonekeep_roll_modifiers")
def odds_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    creatures = ctx.state.creatures
    me = creatures.get(roll.actor)
    if me is None:
        return None
    if not me.traits and not me.conditions:
        # The usual case (this runs for every roll): only a reckless target matters.
        if roll.kind != "attack" or roll.target is None:
            return None
        target = creatures.get(roll.target)
        if target is None or RECKLESS not in target.conditions:
            return None
        return (RollModifier("advantage", f"reckless: {target.name}"),)
    mods: list[RollModifier] = []
    if roll.kind == "attack":
        mods.extend(_attack_mods(ctx, me, roll))
    elif roll.kind == "save":
        mods.extend(_save_mods(me, roll))
    elif roll.kind == "check" and roll.skill == "perception":
        heads = _trait(me, "two-heads")
        if heads is not None and _perception_senses(me, heads):
            mods.append(RollModifier("advantage", f"{heads.name.lower()}: perception"))
    if FIRE_AVERSE in me.conditions and roll.kind in ("attack", "check"):
        mods.append(RollModifier("disadvantage", "aversion of fire"))
    sun = _trait(me, "sunlight-sensitivity")
    if sun is not None and _in_sunlight(ctx, me):
        weak = sun.params
        if (
            roll.kind == "attack"
            or (roll.kind == "check" and (weak.get("checks") or roll.skill == "perception"))
            or (roll.kind == "save" and weak.get("saves"))
        ):
            mods.append(RollModifier("disadvantage", f"{sun.name.lower()}: in sunlight"))
    return mods or None


# -- armor, targets, extra damage ---------------------------------------------------------------


@hookimpl(specname="zonekeep_armor_class_bonus")
def odds_armor_class(
    ctx: RuleContext, target: Creature, attacker: Creature, attack: Attack
) -> int | None:
    if not target.traits or "prone" not in target.conditions:
        return None
    trait = _trait(target, "prone-ac")
    if trait is None:
        return None
    return int(trait.params["ac"]) - target.ac


def _grappled_by(state: EncounterState, target: Creature, attacker: Creature) -> bool:
    """Whether ``attacker`` grapples ``target``: its grappled condition comes from one of
    the attacker's grapples (a condition effect whose source names the attacker), or the
    target is grappled with no effect saying by whom (the GM's grant)."""
    if "grappled" not in target.conditions:
        return False
    effects = [
        e
        for e in state.condition_effects.values()
        if e.creature == target.id and e.condition == "grappled"
    ]
    if not effects:
        return True
    return any(
        e.source == attacker.id or e.source.startswith(f"grapple:{attacker.id}:") for e in effects
    )


@hookimpl(specname="zonekeep_before_attack")
def odds_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if not attacker.traits:
        return
    trait = _trait(attacker, "restricted-target")
    if trait is None or str(trait.params.get("attack", "")).lower() != attack.name.lower():
        return
    allowed = [str(c) for c in trait.params.get("targets", ())]
    for condition in allowed:
        if condition == "grappled":
            if _grappled_by(ctx.state, target, attacker):
                return
        elif condition in target.conditions:
            return
    ctx.refuse(
        "invalid_target",
        f"{attacker.name}'s {attack.name} only reaches a creature that is "
        f"{' or '.join(allowed)} ({'grappled by it' if 'grappled' in allowed else ''}"
        f"{'; ' if 'grappled' in allowed else ''}a willing one is the GM's call): "
        f"{target.name} is not.",
    )


@hookimpl(specname="zonekeep_attack_made")
def odds_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not result.hit or not attacker.traits:
        return
    trait = _trait(attacker, "surprise-attack")
    if trait is None or not _surprised_by(ctx.state, attacker, target.id):
        return
    now = ctx.state.creatures[target.id]
    if now.out_of_fight:
        return
    rolled = ctx.roll(str(trait.params["damage"]), double_dice=result.critical)
    apply_damage(
        ctx,
        now,
        rolled.total,
        damage_type=attack.damage_type,
        roll=rolled,
        source=attacker.id,
        attacker=attacker.id,
        attack=attack.name,
        critical=result.critical,
    )


# -- aversion of fire, steadfast ------------------------------------------------------------------


@hookimpl(specname="zonekeep_after_damage")
def odds_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    if damage.damage_type != "fire" or damage.amount <= 0 or creature.out_of_fight:
        return
    if _trait(creature, "aversion-of-fire") is None:
        return
    apply_timed_condition(
        ctx, creature.id, FIRE_AVERSE, until="end", source=f"{creature.name} took fire damage"
    )


def _ally_in_sight(state: EncounterState, me: Creature, within: int) -> Creature | None:
    if me.zone is None or "blinded" in me.conditions:
        return None
    for other in state.creatures.values():
        if other.id == me.id or other.side != me.side or other.out_of_fight:
            continue
        if other.zone is None or other.incapacitated:
            continue
        feet = path_distance(state.arena, me.zone, other.zone)
        if feet is not None and feet <= within:
            return other
    return None


@hookimpl(specname="zonekeep_condition_immunity")
def odds_condition_immunity(ctx: RuleContext, creature: Creature, condition: str) -> str | None:
    if not creature.traits:
        return None
    trait = _trait(creature, "steadfast")
    if trait is None or trait.params.get("immune") != condition:
        return None
    ally = _ally_in_sight(ctx.state, creature, int(trait.params.get("ally_within", 30)))
    if ally is None:
        return None
    return f"{trait.name.lower()}: {ally.name} in sight"


# -- reckless ---------------------------------------------------------------------------------


def _can_be_reckless(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _trait(me, "reckless") is None:
        return ("invalid_params", f"{me.name} has no Reckless.")
    r = state.resources
    if r.movement_spent or r.actions < 1 or r.bonus_actions < 1 or r.entered_zone:
        return (
            "invalid_params",
            f"{me.name} chooses to be reckless at the start of its turn, before it moves or acts.",
        )
    if RECKLESS in me.conditions:
        return ("invalid_params", f"{me.name} is already reckless this turn.")
    return None


def _reckless(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    apply_timed_condition(ctx, me.id, RECKLESS, until="start", source=me.id)


@hookimpl(specname="zonekeep_commands")
def odds_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "reckless",
            _reckless,
            "Reckless, at the start of your turn: advantage on your melee attack rolls this "
            "turn; attack rolls against you have advantage until the start of your next turn.",
            {"creature": Param("creature", True, "the acting creature")},
            requires=_can_be_reckless,
        ),
    )
