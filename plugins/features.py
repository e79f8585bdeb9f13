"""The generic creature features the SDK owns: multiattack, attack riders, extra damage,
nonmagical defences, uses and recharges, and the GM's ability checks.

- ``multiattack`` (an action, ``params.sequences``): the creature spends its action
  once and makes the attacks of one sequence, each against a target it chooses, in the
  order it chooses, one ``multiattack`` command per attack; an item
  ``{"attack": "scimitar", "disadvantage": true}`` is made with disadvantage (when the
  creature makes an attack that is listed with and without it, the one without comes
  first: the goblin boss's second scimitar attack has disadvantage).
- ``save-or-condition`` (an attack's ``on_hit``): the target of a hit makes a saving
  throw (``ability``, ``dc``) or gets ``condition`` (for ``rounds``, or until a save at
  the end of each of its turns with ``save_ends``; else until removed).
- ``grapple`` (``on_hit``): the target of a hit is grappled; it escapes with the
  ``escape_grapple`` action, an Athletics or Acrobatics check (its better) against the
  ``escape_dc``.
- An attack's ``extra_damage``: rolled with each hit (doubled on a critical hit), each
  its own instance of damage, after the hit's own.
- ``damage_resistances_nonmagical`` and ``damage_immunities_nonmagical`` are applied by
  the SDK's ``apply_damage`` itself, with the creature's other defences, to damage from
  an attack whose ``magical`` is false.
- Uses: a spent feature with ``{"recharge": N}`` rolls a d6 at the start of its
  creature's turn (``recharge_rolled``); ``{"per": "turn"}`` uses come back at the start
  of its turn, ``{"per": "round"}`` at the start of each round; the GM's ``rest`` gives
  back the rest's uses (short: short rest, turn, round and recharge; long: all), and a
  character's class resources by their rest (the ``resources`` of its ``class-levels``
  trait: Channel Divinity, the Lay on Hands pool), its pact slots on either rest and
  its spell slots on a long rest (its ``spellcasting`` trait's ``slots``); the
  GM's ``use_feature`` spends a use of a feature the GM adjudicates (a breath weapon
  played by hand still recharges on its own).
- ``call_check`` (GM): a check or a saving throw for one or several creatures
  (``check_rolled`` each).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from zonekeep.sdk import (
    ABILITIES,
    MULTIATTACK,
    OPEN_PHASES,
    SKILLS,
    Action,
    ActionTaken,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    Creature,
    Damaged,
    FeatureSpec,
    MultiattackUsed,
    Param,
    ResourceRestored,
    RollModifier,
    RuleContext,
    SequenceItem,
    ability_check,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    check_bonus,
    hookimpl,
    make_attack,
    multiattack_sequences,
    restore_uses,
    roll_recharge,
    saving_throw,
    spend_use,
)

#: The rider ids implemented here.
SAVE_OR_CONDITION = "save-or-condition"
GRAPPLE = "grapple"
GRAPPLED = "grappled"
#: How many creatures one ``call_check`` may roll for.
MAX_CALLED = 50
_GRAPPLE_SOURCE = re.compile(r"^grapple:([^:]+):(.+)$")

_SEQUENCE_ITEM = {
    "anyOf": [
        {"type": "string", "minLength": 1},
        {
            "type": "object",
            "required": ["attack"],
            "properties": {
                "attack": {"type": "string", "minLength": 1},
                "disadvantage": {"type": "boolean"},
            },
            "additionalProperties": False,
        },
    ]
}
MULTIATTACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["sequences"],
    "properties": {
        "sequences": {
            "description": "Alternatives; each lists the attacks (by name) it makes.",
            "type": "array",
            "minItems": 1,
            "maxItems": 10,
            "items": {"type": "array", "minItems": 1, "maxItems": 10, "items": _SEQUENCE_ITEM},
        },
        "disadvantage": {
            "description": "Places in each sequence made with disadvantage ([1]: the second).",
            "type": "array",
            "items": {"type": "integer", "minimum": 0, "maximum": 9},
        },
    },
    # Other params (a condition on the sequence, an optional attack) are the GM's to
    # rule; the rules here do not read them.
    "additionalProperties": True,
}
SAVE_OR_CONDITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ability", "dc", "condition"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "condition": {"type": "string", "minLength": 1},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 14400},
        "save_ends": {"type": "boolean"},
    },
    "additionalProperties": True,  # (more, such as a damage on a failure: the GM's)
}
GRAPPLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["escape_dc"],
    "properties": {"escape_dc": {"type": "integer", "minimum": 1, "maximum": 30}},
    "additionalProperties": True,  # (a size limit, a restrained target: the GM's)
}


def _check_sequences(params: Mapping[str, Any], attack_names: Sequence[str]) -> Iterable[str]:
    for i, sequence in enumerate(params.get("sequences", ())):
        for j, item in enumerate(sequence):
            name = item if isinstance(item, str) else item.get("attack")
            if name not in attack_names:
                have = ", ".join(repr(n) for n in attack_names) or "none"
                yield f"sequences[{i}][{j}]: the creature has no attack {name!r} (it has {have})"


@hookimpl
def zonekeep_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            MULTIATTACK,
            "action",
            MULTIATTACK_SCHEMA,
            "One action, several attacks: one of the listed sequences, each attack at a "
            "target of the creature's choice (the `multiattack` command).",
            check=_check_sequences,
        ),
        FeatureSpec(
            SAVE_OR_CONDITION,
            "on_hit",
            SAVE_OR_CONDITION_SCHEMA,
            "A hit's target saves (ability, dc) or gets the condition.",
        ),
        FeatureSpec(
            GRAPPLE,
            "on_hit",
            GRAPPLE_SCHEMA,
            "A hit's target is grappled; it escapes with `escape_grapple` against escape_dc.",
        ),
    )


# -- multiattack --------------------------------------------------------------------------------


def multiattack_of(creature: Creature) -> Action | None:
    """``creature``'s multiattack action, when it has one the GM does not adjudicate."""
    return next((a for a in creature.actions if a.id == MULTIATTACK and a.gm is None), None)


def _multiattack_ready(state: Any, creature: Creature) -> tuple[str, str] | None:
    action = multiattack_of(creature)
    if action is None or not multiattack_sequences(action):
        return ("no_such_feature", f"{creature.name} has no Multiattack.")
    if not state.resources.attacks_left and state.resources.actions <= 0:
        return ("no_action_left", f"{creature.name} has no action left this turn.")
    return None


def _pick_sequence(
    ctx: RuleContext, me: Creature, action: Action, index: object, attack: str | None
) -> tuple[SequenceItem, ...]:
    sequences = multiattack_sequences(action)
    if index is not None:
        if isinstance(index, bool) or not isinstance(index, int):
            ctx.refuse(
                "invalid_params", "'sequence' is the number of a sequence (0 for the first)."
            )
        if not 0 <= index < len(sequences):
            ctx.refuse(
                "invalid_params",
                f"{me.name}'s Multiattack has {len(sequences)} sequence(s): 'sequence' is "
                f"0 to {len(sequences) - 1}.",
            )
        return sequences[index]
    for sequence in sequences:
        if attack is None or any(item.attack == attack for item in sequence):
            return sequence
    ctx.refuse("no_such_feature", f"{me.name}'s Multiattack makes no {attack!r} attack.")


def _multiattack(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    action = multiattack_of(me)
    assert action is not None  # (requires)
    attack: str | None = cmd.params.get("attack")
    left = list(ctx.state.resources.attacks_left)
    if not left:
        sequence = _pick_sequence(ctx, me, action, cmd.params.get("sequence"), attack)
        if ctx.state.resources.actions <= 0:
            ctx.refuse("no_action_left", f"{me.name} has no action left this turn.")
        left = list(sequence)
        spend_use(ctx, me, action)
        ctx.emit(ActionTaken(me.id, MULTIATTACK, "action"))
    elif cmd.params.get("sequence") is not None:
        ctx.refuse(
            "invalid_params",
            f"{me.name} is making its Multiattack already; 'sequence' chooses one at the start.",
        )
    name = attack if attack is not None else left[0].attack
    matching = [item for item in left if item.attack == name]
    if not matching:
        names = ", ".join(sorted({i.attack for i in left}))
        ctx.refuse(
            "no_such_feature",
            f"{me.name}'s Multiattack has no {name!r} attack left (left: {names}).",
        )
    item = min(matching, key=lambda i: i.disadvantage)  # the plain one first
    left.remove(item)
    ctx.emit(MultiattackUsed(me.id, action.name, tuple(left), item))
    extra = (RollModifier("disadvantage", "multiattack"),) if item.disadvantage else ()
    make_attack(ctx, me, ctx.state.creatures[target.id], item.attack, extra=extra)


# -- riders, extra damage, nonmagical defences ----------------------------------------------------


@hookimpl
def zonekeep_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not result.hit:
        return
    for extra in attack.extra_damage:
        rolled = ctx.roll(extra.damage, double_dice=result.critical)
        apply_damage(
            ctx,
            ctx.state.creatures[target.id],
            rolled.total,
            damage_type=extra.damage_type,
            roll=rolled,
            source=attacker.id,
            attacker=attacker.id,
            attack=attack.name,
            critical=result.critical,
        )
    for rider in attack.on_hit:
        now = ctx.state.creatures[target.id]
        if rider.gm is not None or now.out_of_fight:
            continue
        if rider.id == SAVE_OR_CONDITION:
            _save_or_condition(ctx, attacker, now, attack, rider.params)
        elif rider.id == GRAPPLE:
            _grapple(ctx, attacker, now, attack)


def _save_or_condition(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    params: Mapping[str, Any],
) -> None:
    ability, dc, condition = params["ability"], int(params["dc"]), str(params["condition"])
    source = f"{attacker.name}'s {attack.name}"
    # What the save is against (a goat's advantage against being knocked prone) and
    # whether it is magical (a magical attack's rider) reach the roll modifiers.
    if saving_throw(ctx, target, ability, dc, source, against=(condition,), magical=attack.magical):
        return
    rounds = params.get("rounds")
    if params.get("save_ends"):
        apply_timed_condition(
            ctx, target.id, condition, rounds=rounds, save=ability, dc=dc, source=attacker.id
        )
    elif rounds is not None:
        apply_timed_condition(ctx, target.id, condition, rounds=int(rounds), source=attacker.id)
    elif condition not in target.conditions:
        apply_condition(ctx, target.id, condition, source)


def _grapple(ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack) -> None:
    source = f"grapple:{attacker.id}:{attack.name}"
    if any(
        e.creature == target.id and e.source == source for e in ctx.state.condition_effects.values()
    ):
        return
    apply_timed_condition(ctx, target.id, GRAPPLED, source=source)


def _grapples_on(ctx: RuleContext, creature: Creature) -> list[tuple[str, int]]:
    """The grapple effects on ``creature`` from attack riders: (effect id, escape DC)."""
    found = []
    for effect in ctx.state.condition_effects.values():
        match = _GRAPPLE_SOURCE.match(effect.source)
        if effect.creature != creature.id or match is None:
            continue
        grappler = ctx.state.creatures.get(match.group(1))
        attack = grappler.attack(match.group(2)) if grappler is not None else None
        rider = next((r for r in attack.on_hit if r.id == GRAPPLE), None) if attack else None
        if rider is not None:
            found.append((effect.id, int(rider.params.get("escape_dc", 10))))
    return found


def _grappled(state: Any, creature: Creature) -> tuple[str, str] | None:
    if not any(
        e.creature == creature.id and _GRAPPLE_SOURCE.match(e.source)
        for e in state.condition_effects.values()
    ):
        return ("invalid_target", f"{creature.name} is not grappled by an attack.")
    return None


def _escape_grapple(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    grapples = _grapples_on(ctx, me)
    if not grapples:
        ctx.refuse("invalid_target", f"{me.name} is not grappled by an attack.")
    effect, dc = grapples[0]  # (one at a time: the first that holds it)
    skill = max(("athletics", "acrobatics"), key=lambda k: check_bonus(me, SKILLS[k], k))
    check = ability_check(ctx, me, SKILLS[skill], skill, dc, source="escape_grapple")
    if check.success:
        ctx.emit(ConditionEffectEnded(effect, me.id, GRAPPLED, "escaped the grapple"))


# -- uses ---------------------------------------------------------------------------------------


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if not creature.resources:  # nothing with uses: nothing to give back
        return
    restore_uses(ctx, creature, ("turn",), "turn")
    roll_recharge(ctx, ctx.state.creatures[creature.id])


@hookimpl
def zonekeep_round_start(ctx: RuleContext, round: int) -> None:
    for creature in list(ctx.state.creatures.values()):
        if creature.resources:
            restore_uses(ctx, creature, ("round",), "round")


_REST_PERIODS = {
    "short": ("short_rest", "turn", "round", "recharge"),
    "long": ("short_rest", "long_rest", "day", "turn", "round", "recharge", "charges"),
}


def _rest(ctx: RuleContext, cmd: Command) -> None:
    kind = cmd.params.get("kind", "long")
    if kind not in _REST_PERIODS:
        ctx.refuse("invalid_params", f"'kind' is short or long, not {kind!r}.")
    ids = cmd.params.get("creatures")
    chosen = [ctx.creature(c) for c in ids] if ids else list(ctx.state.creatures.values())
    for creature in chosen:
        restore_uses(ctx, creature, _REST_PERIODS[kind], f"{kind}_rest")
        _restore_sheet(ctx, ctx.state.creatures[creature.id], kind)


def _whole(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _restore_sheet(ctx: RuleContext, creature: Creature, kind: str) -> None:
    """A character's class resources (by their rest), pact slots (any rest) and spell
    slots (a long rest) back to their full counts: ``resource_restored`` each."""
    periods = _REST_PERIODS[kind]
    full: dict[str, int] = {}
    for trait in creature.traits:
        if trait.id == "class-levels":
            for entry in trait.params.get("resources", ()):
                if not isinstance(entry, Mapping) or entry.get("per", "long_rest") not in periods:
                    continue
                count, key = _whole(entry.get("count")), entry.get("id")
                if count is not None and isinstance(key, str):
                    full[key] = count
        elif trait.id == "spellcasting":
            slots = trait.params.get("slots")
            if kind == "long" and isinstance(slots, Mapping):
                for level, count in slots.items():
                    if _whole(count) is not None:
                        full[f"spell-slots-{level}"] = count
            pact = trait.params.get("pact_slots")
            if isinstance(pact, Mapping) and _whole(pact.get("count")) is not None:
                full["pact-slots"] = pact["count"]
    for key, count in full.items():
        if creature.resources.get(key, count) < count:
            ctx.emit(ResourceRestored(creature.id, key, count, f"{kind}_rest"))


def _use_feature(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    key = cmd.params["feature"]
    feature = me.feature(key)
    if feature is None or feature.uses is None:
        counted = ", ".join(sorted(me.resources)) or "none"
        ctx.refuse(
            "no_such_feature",
            f"{me.name} has no feature {key!r} with uses (those with uses: {counted}).",
        )
    spend_use(ctx, me, feature)


# -- checks -------------------------------------------------------------------------------------


def _call_check(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    ids: list[str] = list(p["creatures"])
    ability = p["ability"]
    skill = p.get("skill")
    save = bool(p.get("save", False))
    dc = p.get("dc")
    if not ids or len(ids) > MAX_CALLED:
        ctx.refuse("invalid_params", f"'creatures' names 1 to {MAX_CALLED} creatures.")
    if len(set(ids)) != len(ids):
        ctx.refuse("invalid_params", "'creatures' names a creature twice.")
    if ability not in ABILITIES:
        ctx.refuse(
            "invalid_params", f"'ability' is one of {', '.join(ABILITIES)}, not {ability!r}."
        )
    if save and skill is not None:
        ctx.refuse("invalid_params", "A saving throw has no skill: leave 'skill' out.")
    creatures = [ctx.creature(c) for c in ids]
    if skill is not None and skill not in SKILLS and not all(skill in c.skills for c in creatures):
        ctx.refuse(
            "invalid_params", f"'skill' is one of {', '.join(SKILLS)} (or one every sheet lists)."
        )
    if dc is not None and not 1 <= dc <= 30:
        ctx.refuse("invalid_params", "'dc' is from 1 to 30.")
    for creature in creatures:
        ability_check(
            ctx,
            ctx.state.creatures[creature.id],
            ability,
            skill,
            dc,
            save=save,
            source="call_check",
        )


# -- commands -----------------------------------------------------------------------------------


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            MULTIATTACK,
            _multiattack,
            "Action: Multiattack; each command makes one attack of the sequence (the first "
            "spends the action).",
            {
                "creature": Param("creature", True, "the attacker"),
                "target": Param("creature", True, "the creature attacked by this attack"),
                "attack": Param(
                    "string", False, "which attack of the sequence (default: the next listed)"
                ),
                "sequence": Param(
                    "integer", False, "which sequence, on the first attack (default: the first)"
                ),
            },
            requires=_multiattack_ready,
        ),
        CommandSpec(
            "escape_grapple",
            _escape_grapple,
            "Action: escape a grapple: Athletics or Acrobatics against its escape DC.",
            {"creature": Param("creature", True, "the grappled creature")},
            costs=("action",),
            requires=_grappled,
        ),
        CommandSpec(
            "rest",
            _rest,
            "GM: a short or long rest gives back the uses of the creatures' features, their "
            "class resources and spell slots.",
            {
                "kind": Param("string", False, "short or long (default long)"),
                "creatures": Param("creatures", False, "who rests (default: everyone)"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "use_feature",
            _use_feature,
            "GM: spend one use of a creature's feature (one the GM adjudicates, a breath "
            "weapon the GM resolves): the server counts it and its recharge.",
            {
                "creature": Param("creature", True, "the creature"),
                "feature": Param("string", True, "the feature's key in its resources"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "call_check",
            _call_check,
            "GM: an ability check or saving throw for one or several creatures.",
            {
                "creatures": Param("creatures", True, "who rolls"),
                "ability": Param("string", True, "str, dex, con, int, wis or cha"),
                "skill": Param("string", False, "the skill (athletics, stealth ...)"),
                "save": Param("boolean", False, "a saving throw instead of a check"),
                "dc": Param("integer", False, "the DC (none: the GM reads the totals)"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
    )
