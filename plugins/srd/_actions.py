"""SRD creatures' actions and on-hit riders, played on the public SDK (issue 30, part 2).

- ``breath`` (the ``breath`` command): a breath weapon is an area that starts at the
  creature, so it aims at the creature's own zone or at a zone whose path distance is at
  most the area's length (a 15-ft cone reaches an adjacent zone of 15 ft), in line of
  sight; it spills and counts its targets as every other area does (the
  ``zonekeep_area_zones``, ``zonekeep_area_max_targets`` and
  ``zonekeep_area_target_weight`` hooks). Each target saves, in the order given, then
  the damage is rolled once for all of them; a success halves it. A breath that gives a
  condition gives it on a failed save, for its rounds (saving again at the end of each
  turn when the stat block says so; the brass wyrmling's sleep ends when the sleeper
  takes damage). The use is spent (``spend_use``), so it recharges on its d6.
- ``save-for-damage`` (an attack's ``on_hit``): the creature hit saves or takes the
  rider's damage (half on a success when ``half_on_success``).
- ``scare``, ``dreadful-glare``, ``death-glare``: one creature in range saves or is
  frightened (the mummy's glare: until the end of the mummy's next turn, and paralyzed
  too on a failure by 5 or more); the sea hag's glare drops a frightened creature that
  fails to 0 hit points.
- ``healing-touch``: a creature in the unicorn's zone regains the dice's hit points and
  loses the poisoned condition.
- ``consume-life``: a creature at 0 hit points in the wisp's zone saves or dies
  (defeated), and the wisp regains the dice's hit points.
- ``tentacles`` (the chuul's), ``tentacle-slam``: every creature the attacker grapples
  saves: poisoned (and paralyzed while poisoned) with a save at the end of each turn;
  or the slam's damage and stunned until the end of the attacker's next turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from zonekeep.sdk import (
    ABILITIES,
    DAMAGE_TYPES,
    DEFEATED,
    Action,
    ActionTaken,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionRemoved,
    Creature,
    Damaged,
    Dashed,
    EncounterState,
    FeatureSpec,
    Healed,
    Param,
    RollRequest,
    RuleContext,
    SaveMade,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    hookimpl,
    saving_throw,
    sight_path,
    spend_use,
)

#: The hook implementations, imported by the package (plugins/srd/__init__.py) under
#: these names: pluggy registers each for its ``specname`` beside the package's own.
__all__ = [
    "srd_actions_after_damage",
    "srd_actions_attack_made",
    "srd_actions_commands",
    "srd_actions_features",
]

_SAVE = {
    "type": "object",
    "required": ["ability", "dc"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
    },
    "additionalProperties": False,
}
_DICE = {"type": "string", "format": "dice"}
_AREA = {
    "type": "object",
    "required": ["shape", "size"],
    "properties": {
        "shape": {"enum": ["cone", "line", "radius", "cube"]},
        "size": {"type": "integer", "minimum": 5, "maximum": 300},
        "width": {"type": "integer", "minimum": 5, "maximum": 60},
    },
    "additionalProperties": False,
}
_BREATH_OPTION: dict[str, Any] = {
    "type": "object",
    "required": ["area", "save"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "area": _AREA,
        "save": _SAVE,
        "damage": _DICE,
        "damage_type": {"enum": list(DAMAGE_TYPES)},
        "half_on_success": {"type": "boolean"},
        "condition": {"type": "string", "minLength": 1},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
        "save_ends": {"type": "boolean"},
        "ends_on_damage": {"type": "boolean"},
        "effect": {"type": "string"},
        "gm": {"type": "string", "minLength": 1},
        "not_while_grappling": {"type": "boolean"},
    },
    "additionalProperties": False,
}
BREATH_SCHEMA: dict[str, Any] = {
    "anyOf": [
        _BREATH_OPTION,
        {
            "type": "object",
            "required": ["options"],
            "properties": {
                "options": {"type": "array", "minItems": 1, "maxItems": 4, "items": _BREATH_OPTION}
            },
            "additionalProperties": False,
        },
    ]
}
SAVE_FOR_DAMAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ability", "dc", "damage", "damage_type"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "damage": _DICE,
        "damage_type": {"enum": list(DAMAGE_TYPES)},
        "half_on_success": {"type": "boolean"},
    },
    "additionalProperties": False,
}
_GAZE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["within", "save"],
    "properties": {
        "within": {"type": "integer", "minimum": 5, "maximum": 300},
        "save": _SAVE,
        "condition": {"type": "string", "minLength": 1},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
        "save_ends": {"type": "boolean"},
        "requires": {"type": "string", "minLength": 1},
    },
    "additionalProperties": False,
}
_HEAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["heal"],
    "properties": {
        "heal": _DICE,
        "within": {"type": "integer", "minimum": 5, "maximum": 300},
        "save": _SAVE,
    },
    "additionalProperties": False,
}
_GRAPPLED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["save", "targets"],
    "properties": {
        "save": _SAVE,
        "targets": {"const": "grappled"},
        "condition": {"type": "string", "minLength": 1},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
        "save_ends": {"type": "boolean"},
        "damage": _DICE,
        "damage_type": {"enum": list(DAMAGE_TYPES)},
        "half_on_success": {"type": "boolean"},
    },
    "additionalProperties": False,
}
_CUNNING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "choices": {"type": "array", "items": {"enum": ["dash", "disengage", "hide"]}},
    },
    "additionalProperties": False,
}

#: The source of a condition that ends when its creature takes damage (the sleep breath).
_ENDS_ON_DAMAGE = "srd.ends-on-damage:"
#: The grapple effects the SDK's grapple rider gives: ``grapple:<attacker>:<attack>``.
_GRAPPLE_SOURCE = re.compile(r"^grapple:([^:]+):")


@hookimpl(specname="zonekeep_features")
def srd_actions_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "breath",
            "action",
            BREATH_SCHEMA,
            "The `breath` command: an area from the creature into its zone or one in reach "
            "of the area's length; each target saves, the damage is rolled once (half on a "
            "success), conditions on a failure; the use recharges on its d6.",
        ),
        FeatureSpec(
            "save-for-damage",
            "on_hit",
            SAVE_FOR_DAMAGE_SCHEMA,
            "A hit's target saves or takes the rider's damage (half on a success when "
            "half_on_success).",
        ),
        FeatureSpec(
            "scare",
            "action",
            _GAZE_SCHEMA,
            "The `scare` command: one creature in range saves or is frightened (a save at "
            "the end of each of its turns).",
        ),
        FeatureSpec(
            "dreadful-glare",
            "action",
            _GAZE_SCHEMA,
            "The `dreadful_glare` command: one creature in range saves or is frightened "
            "until the end of the glarer's next turn, and paralyzed as long on a failure "
            "by 5 or more.",
        ),
        FeatureSpec(
            "death-glare",
            "action",
            _GAZE_SCHEMA,
            "The `death_glare` command: a frightened creature in range saves or drops to 0 "
            "hit points.",
        ),
        FeatureSpec(
            "healing-touch",
            "action",
            _HEAL_SCHEMA,
            "The `healing_touch` command: a creature in its zone regains the dice's hit "
            "points and is poisoned no more.",
        ),
        FeatureSpec(
            "consume-life",
            "action",
            _HEAL_SCHEMA,
            "The `consume_life` command (bonus action): a creature at 0 hit points in its "
            "zone saves or dies (defeated); the user regains the dice's hit points.",
        ),
        FeatureSpec(
            "tentacles",
            "action",
            _GRAPPLED_SCHEMA,
            "The `grappled_save` command: each creature it grapples saves or is poisoned, "
            "and paralyzed while poisoned (a save at the end of each of its turns).",
        ),
        FeatureSpec(
            "tentacle-slam",
            "action",
            _GRAPPLED_SCHEMA,
            "The `grappled_save` command: each creature it grapples saves or takes the "
            "damage and is stunned until the end of its next turn; half and no stun on a "
            "success.",
        ),
        FeatureSpec(
            "aggressive",
            "action",
            {
                "type": "object",
                "properties": {"move": {"const": "speed"}},
                "additionalProperties": False,
            },
            "The `aggressive` command (bonus action): a Dash, while the creature sees a "
            "hostile creature (the table keeps the move toward it).",
        ),
    )


# -- shared --------------------------------------------------------------------------------


def _action(creature: Creature, feature: str) -> Action | None:
    """``creature``'s action ``feature`` (``breath``), unless the data marks it ``gm``."""
    for action in creature.actions:
        if action.id in (feature, f"zonekeep.srd.{feature}") and action.gm is None:
            return action
    return None


def _needs(feature: str, label: str) -> Any:
    """A ``requires`` check: the acting creature has ``feature`` (automated)."""

    def requires(state: EncounterState, me: Creature) -> tuple[str, str] | None:
        if _action(me, feature) is None:
            return ("no_such_feature", f"{me.name} has no {label}.")
        return None

    return requires


def _distance(state: EncounterState, start: str | None, zone: str | None) -> int | None:
    """The path distance in feet from zone ``start`` to ``zone`` in line of sight (0 for
    the same zone), or ``None`` when there is no line of sight."""
    if start is None or zone is None:
        return None
    if start == zone:
        return 0
    path = sight_path(state.arena, start, zone)
    if path is None:
        return None
    return sum(state.arena.zone(z).size for z in path)


def _in_reach(ctx: RuleContext, me: Creature, target: Creature, within: int, what: str) -> None:
    """Refuse ``target`` out of ``within`` feet of ``me`` (the zone rules' distances)."""
    if target.out_of_fight:
        ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
    distance = _distance(ctx.state, me.zone, target.zone)
    if distance is None:
        ctx.refuse("no_line_of_sight", f"{me.name} cannot see {target.name}'s zone.")
    if distance > within:
        ctx.refuse(
            "out_of_range",
            f"{target.name} is {distance} ft from {me.name}; {what} reaches {within} ft.",
        )


def _grappled_by(state: EncounterState, me: Creature) -> list[str]:
    """The creatures ``me`` grapples (with an attack's grapple rider), in roster order."""
    held = {
        e.creature
        for e in state.condition_effects.values()
        if (m := _GRAPPLE_SOURCE.match(e.source)) is not None and m.group(1) == me.id
    }
    return [cid for cid in state.creatures if cid in held]


# -- breath -------------------------------------------------------------------------------


def _breath_option(ctx: RuleContext, me: Creature, action: Action, name: str | None) -> Any:
    options: Sequence[Mapping[str, Any]] = action.params.get("options") or [action.params]
    if name is None:
        if len(options) > 1:
            names = ", ".join(repr(o.get("name", "")) for o in options)
            ctx.refuse("invalid_params", f"{action.name}: choose an 'option' ({names}).")
        option = options[0]
    else:
        found = [o for o in options if str(o.get("name", "")).lower() == name.strip().lower()]
        if not found:
            names = ", ".join(repr(o.get("name", "")) for o in options)
            ctx.refuse("invalid_params", f"{action.name} has no option {name!r} ({names}).")
        option = found[0]
    if option.get("gm"):
        ctx.refuse(
            "gm_adjudicates",
            f"{option.get('name', action.name)} is the GM's: {option['gm']} (the GM spends "
            "the use with use_feature).",
        )
    return option


def _weight(ctx: RuleContext, creature: Creature) -> int:
    weight = ctx.hook.zonekeep_area_target_weight(ctx=ctx, creature=creature)
    return 1 if weight is None else int(weight)


def _breath(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "breath")
    assert action is not None  # (requires)
    option = _breath_option(ctx, me, action, cmd.params.get("option"))
    label = str(option.get("name", action.name))
    no_grapple = option.get("not_while_grappling") or action.params.get("not_while_grappling")
    if no_grapple and _grappled_by(ctx.state, me):
        ctx.refuse("invalid_params", f"{me.name} cannot use {label} while it grapples.")
    area = option["area"]
    shape, size = area["shape"], int(area["size"])
    width = int(area.get("width", 5))
    length = size if shape in ("cone", "line") else 0  # a radius or cube around itself
    zone_id: str = cmd.params.get("zone") or me.zone or ""
    if me.zone is None:
        ctx.refuse("out_of_range", f"{me.name} is in no zone, so its breath reaches none.")
    if not ctx.state.arena.has_zone(zone_id):
        ctx.refuse("unknown_zone", f"There is no zone {zone_id!r}.")
    distance = _distance(ctx.state, me.zone, zone_id)
    if distance is None:
        ctx.refuse("no_line_of_sight", f"{me.name} has no line of sight to {zone_id!r}.")
    if distance > length:
        reach = f"reaches {length} ft" if length else f"stays in {me.name}'s own zone"
        ctx.refuse(
            "out_of_range",
            f"{ctx.state.arena.zone(zone_id).name} is {distance} ft from {me.name}; "
            f"{label} {reach}.",
        )
    largest = {"cone": size, "line": size, "cube": size, "radius": 2 * size}[shape]
    spilled = ctx.hook.zonekeep_area_zones(ctx=ctx, zone=zone_id, largest_dimension=largest)
    affected = [zone_id, *(z for z in dict.fromkeys(spilled or ()) if z != zone_id)]
    answer = ctx.hook.zonekeep_area_max_targets(
        ctx=ctx, shape=shape, size=size, width=width if shape == "line" else 5
    )
    maximum = 1 if answer is None else int(answer)
    candidates = [
        c
        for z in affected
        for c in ctx.state.in_zone(z)
        if c.id != me.id and not c.out_of_fight and not c.hidden
    ]
    given = cmd.params.get("targets")
    if given is None:
        chosen = candidates
        if sum(_weight(ctx, c) for c in chosen) > maximum:
            ctx.refuse(
                "too_many_targets",
                f"{label} can have at most {maximum} target(s) and "
                f"{len(chosen)} creatures are in its area: choose them ('targets').",
            )
    else:
        ids = list(given)
        if len(set(ids)) != len(ids):
            ctx.refuse("invalid_params", "Each target is chosen once.")
        chosen = [ctx.creature(t, role="target") for t in ids]
        for target in chosen:
            if target.id == me.id or target.out_of_fight or target.zone not in affected:
                ctx.refuse("invalid_target", f"{target.name} is not in {label}'s area.")
        used = sum(_weight(ctx, c) for c in chosen)
        if used > maximum and len(chosen) > 1:
            ctx.refuse("too_many_targets", f"{label} can have at most {maximum} target(s).")
        left = [c.name for c in candidates if c not in chosen]
        if used < maximum and left:
            ctx.refuse(
                "too_few_targets",
                f"{label} must fill its {maximum} target slot(s) while creatures remain in "
                f"its area: {', '.join(left)} not chosen.",
            )
    spend_use(ctx, me, action)
    save = option["save"]
    outcomes = [
        (target, saving_throw(ctx, target, save["ability"], int(save["dc"]), label))
        for target in chosen
    ]
    half = bool(option.get("half_on_success", False))
    damage = option.get("damage")
    hurt = any(not ok or half for _, ok in outcomes)
    roll = ctx.roll(str(damage)) if damage is not None and hurt else None
    for target, succeeded in outcomes:
        if roll is not None:
            amount = roll.total // 2 if succeeded and half else 0 if succeeded else roll.total
            if amount > 0:
                apply_damage(
                    ctx,
                    ctx.state.creatures[target.id],
                    amount,
                    damage_type=str(option.get("damage_type", "")),
                    roll=roll,
                    source=me.id,
                    attacker=me.id,
                )
        condition = option.get("condition")
        if not succeeded and condition and not ctx.state.creatures[target.id].out_of_fight:
            source = f"{_ENDS_ON_DAMAGE}{me.id}" if option.get("ends_on_damage") else me.id
            ability = save["ability"] if option.get("save_ends") else None
            apply_timed_condition(
                ctx,
                target.id,
                str(condition),
                rounds=option.get("rounds"),
                save=ability,
                dc=int(save["dc"]) if ability else None,
                source=source,
            )


@hookimpl(specname="zonekeep_after_damage")
def srd_actions_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    effects = ctx.state.condition_effects
    if not effects or damage.amount <= 0:  # the usual case: nothing to wake
        return
    for effect in list(effects.values()):
        if effect.creature == creature.id and effect.source.startswith(_ENDS_ON_DAMAGE):
            ctx.emit(ConditionEffectEnded(effect.id, creature.id, effect.condition, "took damage"))


# -- save-for-damage ----------------------------------------------------------------------


@hookimpl(specname="zonekeep_attack_made")
def srd_actions_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not attack.on_hit or not result.hit:  # the usual case: no rider
        return
    for rider in attack.on_hit:
        if rider.id != "save-for-damage" or rider.gm is not None:
            continue
        now = ctx.state.creatures[target.id]
        if now.out_of_fight:
            return
        p = rider.params
        source = f"{attacker.name}'s {attack.name}"
        saved = saving_throw(ctx, now, p["ability"], int(p["dc"]), source)
        half = bool(p.get("half_on_success", False))
        if saved and not half:
            continue
        rolled = ctx.roll(str(p["damage"]))
        apply_damage(
            ctx,
            ctx.state.creatures[target.id],
            rolled.total // 2 if saved else rolled.total,
            damage_type=str(p["damage_type"]),
            roll=rolled,
            source=attacker.id,
            attacker=attacker.id,
            attack=attack.name,
        )


# -- one creature saves: scare, the glares --------------------------------------------------


def _gaze(ctx: RuleContext, cmd: Command, feature: str) -> tuple[Creature, Creature, Action]:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    action = _action(me, feature)
    assert action is not None  # (requires)
    if target.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} cannot use {action.name} on itself.")
    _in_reach(ctx, me, target, int(action.params["within"]), action.name)
    needed = action.params.get("requires")
    if needed and ctx.resolve("condition", needed) not in target.conditions:
        ctx.refuse("invalid_target", f"{action.name} works only on a {needed} creature.")
    return me, target, action


def _scare(ctx: RuleContext, cmd: Command) -> None:
    me, target, action = _gaze(ctx, cmd, "scare")
    spend_use(ctx, me, action)
    p = action.params
    ability, dc = p["save"]["ability"], int(p["save"]["dc"])
    if saving_throw(ctx, target, ability, dc, action.name):
        return
    apply_timed_condition(
        ctx,
        target.id,
        str(p.get("condition", "frightened")),
        rounds=p.get("rounds"),
        save=ability if p.get("save_ends") else None,
        dc=dc if p.get("save_ends") else None,
        source=me.id,
    )


def _dreadful_glare(ctx: RuleContext, cmd: Command) -> None:
    me, target, action = _gaze(ctx, cmd, "dreadful-glare")
    p = action.params
    ability, dc = p["save"]["ability"], int(p["save"]["dc"])
    success, total = _save_total(ctx, target, ability, dc, action.name)
    if success:
        return
    frightened = apply_timed_condition(
        ctx, target.id, str(p.get("condition", "frightened")), until="end", of=me.id, source=me.id
    )
    if total <= dc - 5:
        apply_timed_condition(
            ctx, target.id, "paralyzed", until="end", of=me.id, source=me.id, parent=frightened
        )


def _save_total(
    ctx: RuleContext, target: Creature, ability: str, dc: int, source: str
) -> tuple[bool, int]:
    """``target``'s saving throw as :func:`saving_throw` rolls it (``save_made``), with
    its total: whether it failed by 5 or more matters to the mummy's glare."""
    result = ctx.roll(
        "d20", RollRequest("save", target.id, ability=ability), bonus=target.saves.get(ability, 0)
    )
    fails = ctx.hook.zonekeep_save_fails(ctx=ctx, creature=target, ability=ability) or ""
    success = not fails and result.total >= dc
    ctx.emit(SaveMade(target.id, ability, result, dc, success, source, fails))
    return success, result.total


def _death_glare(ctx: RuleContext, cmd: Command) -> None:
    me, target, action = _gaze(ctx, cmd, "death-glare")
    p = action.params
    if saving_throw(ctx, target, p["save"]["ability"], int(p["save"]["dc"]), action.name):
        return
    now = ctx.state.creatures[target.id]
    if now.hp > 0:
        apply_damage(ctx, now, now.hp, source=me.id, attacker=me.id)


# -- healing --------------------------------------------------------------------------------


def _heal(ctx: RuleContext, creature: Creature, dice: str, source: str) -> None:
    rolled = ctx.roll(dice)
    now = ctx.state.creatures[creature.id]
    hp = max(now.hp, min(now.max_hp, now.hp + rolled.total))
    ctx.emit(Healed(now.id, rolled.total, hp, source, roll=rolled))


def _healing_touch(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    action = _action(me, "healing-touch")
    assert action is not None  # (requires)
    _in_reach(ctx, me, target, 0, f"{action.name} (a touch)")
    spend_use(ctx, me, action)
    _heal(ctx, target, str(action.params["heal"]), me.id)
    if "poisoned" in ctx.state.creatures[target.id].conditions:
        for effect in list(ctx.state.condition_effects.values()):
            if effect.creature == target.id and effect.condition == "poisoned":
                ctx.emit(ConditionEffectEnded(effect.id, target.id, "poisoned", action.name))
        if "poisoned" in ctx.state.creatures[target.id].conditions:
            ctx.emit(ConditionRemoved(target.id, "poisoned", action.name))


def _consume_life(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    action = _action(me, "consume-life")
    assert action is not None  # (requires)
    if target.hp > 0:
        ctx.refuse("invalid_target", f"{target.name} is not at 0 hit points.")
    _in_reach(ctx, me, target, 0, action.name)
    save = action.params["save"]
    if saving_throw(ctx, target, save["ability"], int(save["dc"]), action.name):
        return
    apply_condition(ctx, target.id, DEFEATED, f"{me.name}'s {action.name}")
    _heal(ctx, me, str(action.params["heal"]), action.name)


# -- the creatures it grapples save ----------------------------------------------------------


def _grappled_save(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    feature = cmd.params["feature"]
    if feature not in ("tentacles", "tentacle-slam"):
        ctx.refuse("invalid_params", f"'feature' is tentacles or tentacle-slam, not {feature!r}.")
    action = _action(me, feature)
    if action is None:
        ctx.refuse("no_such_feature", f"{me.name} has no {feature}.")
    held = _grappled_by(ctx.state, me)
    if not held:
        ctx.refuse("invalid_target", f"{me.name} grapples nobody.")
    # The chuul's Tentacles come with its Multiattack (once a turn, by its uses): free once
    # its action is spent; otherwise, and for the otyugh's slam, they take the action.
    if feature == "tentacle-slam" or ctx.state.resources.actions > 0:
        if ctx.state.resources.actions <= 0:
            ctx.refuse("no_action_left", f"{me.name} has no action left this turn.")
        spend_use(ctx, me, action)
        ctx.emit(ActionTaken(me.id, feature, "action"))
    else:
        spend_use(ctx, me, action)
    p = action.params
    ability, dc = p["save"]["ability"], int(p["save"]["dc"])
    for cid in held:
        target = ctx.state.creatures[cid]
        if target.out_of_fight:
            continue
        saved = saving_throw(ctx, target, ability, dc, action.name)
        if p.get("damage") and (not saved or p.get("half_on_success")):
            rolled = ctx.roll(str(p["damage"]))
            apply_damage(
                ctx,
                ctx.state.creatures[cid],
                rolled.total // 2 if saved else rolled.total,
                damage_type=str(p.get("damage_type", "")),
                roll=rolled,
                source=me.id,
                attacker=me.id,
            )
        if saved or ctx.state.creatures[cid].out_of_fight or not p.get("condition"):
            continue
        condition = str(p["condition"])
        if feature == "tentacle-slam":
            apply_timed_condition(ctx, cid, condition, until="end", of=me.id, source=me.id)
            continue
        effect = apply_timed_condition(
            ctx,
            cid,
            condition,
            rounds=p.get("rounds"),
            save=ability if p.get("save_ends") else None,
            dc=dc if p.get("save_ends") else None,
            source=me.id,
        )
        if effect is not None:  # paralyzed while poisoned
            apply_timed_condition(ctx, cid, "paralyzed", parent=effect, source=me.id)


def _grapples_with_tentacles(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "tentacles") is None and _action(me, "tentacle-slam") is None:
        return ("no_such_feature", f"{me.name} has no Tentacles or Tentacle Slam.")
    if not _grappled_by(state, me):
        return ("invalid_target", f"{me.name} grapples nobody.")
    return None


# -- aggressive -------------------------------------------------------------------------------


def _aggressive(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    seen = [
        c
        for c in ctx.state.creatures.values()
        if ctx.is_enemy(me, c)
        and not c.out_of_fight
        and not c.hidden
        and _distance(ctx.state, me.zone, c.zone) is not None
    ]
    if not seen:
        ctx.refuse("invalid_target", f"{me.name} sees no hostile creature to charge at.")
    ctx.emit(Dashed(me.id))


# -- commands -------------------------------------------------------------------------------


def _one(what: str) -> dict[str, Param]:
    return {
        "creature": Param("creature", True, "the acting creature"),
        "target": Param("creature", True, what),
    }


@hookimpl(specname="zonekeep_commands")
def srd_actions_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "breath",
            _breath,
            "Action: a breath weapon (its area from the creature; saves, one damage roll).",
            {
                "creature": Param("creature", True, "the breathing creature"),
                "zone": Param("zone", False, "the zone aimed at (default: its own)"),
                "targets": Param("creatures", False, "the targets (default: all in the area)"),
                "option": Param("string", False, "which breath, when it has several"),
            },
            costs=("action",),
            requires=_needs("breath", "breath weapon"),
        ),
        CommandSpec(
            "scare",
            _scare,
            "Action: Scare: one creature in range saves or is frightened.",
            _one("the creature scared"),
            costs=("action",),
            requires=_needs("scare", "Scare"),
        ),
        CommandSpec(
            "dreadful_glare",
            _dreadful_glare,
            "Action: Dreadful Glare: one creature in range saves or is frightened "
            "(and paralyzed on a failure by 5 or more) until the end of your next turn.",
            _one("the creature glared at"),
            costs=("action",),
            requires=_needs("dreadful-glare", "Dreadful Glare"),
        ),
        CommandSpec(
            "death_glare",
            _death_glare,
            "Action: Death Glare: a frightened creature in range saves or drops to 0 hit points.",
            _one("the frightened creature"),
            costs=("action",),
            requires=_needs("death-glare", "Death Glare"),
        ),
        CommandSpec(
            "healing_touch",
            _healing_touch,
            "Action: Healing Touch: a creature in your zone regains hit points and is "
            "poisoned no more.",
            _one("the creature touched"),
            costs=("action",),
            requires=_needs("healing-touch", "Healing Touch"),
        ),
        CommandSpec(
            "consume_life",
            _consume_life,
            "Bonus action: Consume Life: a creature at 0 hit points in your zone saves or "
            "dies; you regain hit points.",
            _one("the creature at 0 hit points"),
            costs=("bonus",),
            requires=_needs("consume-life", "Consume Life"),
        ),
        CommandSpec(
            "grappled_save",
            _grappled_save,
            "Tentacles (free with its Multiattack, once a turn) or Tentacle Slam (an action): "
            "every creature you grapple saves against it.",
            {
                "creature": Param("creature", True, "the grappling creature"),
                "feature": Param("string", True, "tentacles or tentacle-slam"),
            },
            requires=_grapples_with_tentacles,
        ),
        CommandSpec(
            "aggressive",
            _aggressive,
            "Bonus action: Aggressive: movement up to your speed, to move toward a hostile "
            "creature you can see (taken as a Dash).",
            {"creature": Param("creature", True, "the acting creature")},
            costs=("bonus",),
            requires=_needs("aggressive", "Aggressive"),
        ),
    )
