"""SRD creatures' holds on others and others' holds on them: webs that do not hold a web
walker, a claw that grapples instead of wounding, creatures that attach to their prey,
and a golem's berserk rage; and the druids' barkskin AC (part of the ``zonekeep.srd`` plugin, issue 30).

Each hook implementation carries a name of its own (``holds_...``) and names the hook it
implements with ``specname``, so that the package ``zonekeep.plugins.srd`` can import it
beside the other feature modules' implementations of the same hooks. Only public
``zonekeep.sdk`` names are used, as a third-party content plugin would.

- ``web-walker`` (trait; the spiders, the ettercap): webbing never holds it. The arena's
  webs are the ``Web`` elements of the ``web`` command (plugins/srd/_reactions.py): a
  web that would hold it (a hit of another spider's Web) comes off at once (the asset
  is removed, so the restraint that hangs on it ends), and any web found holding it at
  the start of its turn too. No other webbed ground exists in the rules (the Web spell
  is not wired yet).
- ``grapple-instead`` (trait, ``attack``, ``escape_dc``; the vampire spawn's Claws): the
  ``grapple_instead`` command (free, on its turn) has it grapple with its ``attack``
  instead of dealing damage (``grapple: true``, the ``grapple-instead`` condition on it)
  or deal damage again (``grapple: false``). While it has the condition, a hit of that
  attack deals no damage (``zonekeep_modify_damage`` cancels it) and grapples the target
  (a ``grappled`` condition effect whose source is ``grapple-instead:<its id>``). The
  grappled creature escapes with ``escape_hold`` (an action: Athletics or Acrobatics,
  its better, against ``escape_dc``); the grapple also ends when the grappler is
  incapacitated or out of the fight, or when the two are no longer in one zone (looked
  at whenever a creature enters a zone and at the start of every turn).
- ``attach`` (an attack's ``on_hit``; the stirge's Blood Drain with ``drain`` and
  ``max``, the darkmantle's Crush with ``escape_dc``): a hit attaches the attacker to
  the target (the ``attached`` condition on the attacker, an effect whose source is
  ``attach:<target id>``). While attached:

  - it moves with its target (when the target enters a zone, it is carried there:
    forced movement), and cannot leave on its own (``enter``, ``sprint`` and
    ``withdraw`` are refused; the GM's ``move_to_zone`` still moves it) until it lets go,
    and it makes no opportunity attacks (carried along by its target, or drinking);
  - with ``drain`` (the stirge) it makes no attacks; at the start of each of its turns
    the target loses ``drain`` hit points (untyped damage, which nothing resists:
    the server has no hit point loss apart from damage); the total drained is kept in
    its resource ``blood-drained``, and once it reaches ``max``, or the target is out of
    the fight, it lets go;
  - without ``drain`` (the darkmantle) it attacks no creature but its target, and its
    attack rolls against it have advantage; when the hit that attached it had advantage
    and the target is Medium or smaller, it wraps the target's head: the target is
    ``blinded`` while it stays attached (a condition effect whose parent is the
    attachment). Not breathing is left out: the server has no suffocation.

  It lets go on its turn with ``let_go`` (free: 5 ft of its movement). Any creature in
  its zone, the target included, pulls it off with ``detach`` (an action): at once for
  the stirge, with a Strength check against ``escape_dc`` for the darkmantle.
- ``barkskin`` (trait, ``ac``: 16; the druid, the dryad): the stat block's "AC 16 with
  barkskin". Nothing is needed here: both cast barkskin from their Spellcasting (the
  ``cast`` command of the ``zonekeep.spells`` plugin, on by default: a 2nd-level slot
  for the druid, the dryad's innate 1/day), and that plugin's ``barkskin`` condition
  makes the AC at least 16 while it lasts. The trait is declared here so that the GM
  sees it automated; without the spells plugin it would not be.
- ``berserk`` (trait, ``hp``; the flesh golem): at the start of each of its turns with
  ``hp`` hit points or fewer and not berserk, it rolls a d6; on a 6 it goes ``berserk``
  (the condition). While berserk, its attacks must target the nearest creature it sees
  (the zone distance; friend or foe; not itself, not one out of the fight, hidden or
  invisible): an attack on a farther one is refused. It stops being berserk when it
  starts a turn with all its hit points; its creator's calming Persuasion check is the
  GM's (``remove_condition``), since the server does not know who made a golem.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zonekeep.sdk import (
    OPPORTUNITY_ATTACK,
    SKILLS,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    EncounterState,
    FeatureSpec,
    MovementSpent,
    OnHit,
    Param,
    Refusal,
    ResourceRestored,
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
    check_bonus,
    hookimpl,
    movement_left,
    path_distance,
)

#: The hook implementations, imported by the package (plugins/srd/__init__.py) under
#: these names: pluggy registers each for its ``specname`` beside the package's own.
__all__ = [
    "holds_action_refusal",
    "holds_attack_made",
    "holds_before_attack",
    "holds_commands",
    "holds_condition_applied",
    "holds_conditions",
    "holds_features",
    "holds_modify_damage",
    "holds_roll_modifiers",
    "holds_turn_start",
    "holds_zone_entered",
]

#: The condition of a vampire spawn that grapples with its claws instead of wounding.
GRAPPLE_INSTEAD = "grapple-instead"
#: The condition of a creature attached to another (a stirge, a darkmantle).
ATTACHED = "attached"
#: The condition of a berserk golem.
BERSERK = "berserk"
#: The resource that counts the hit points a stirge has drained since it attached.
DRAINED = "blood-drained"
#: The commands that take a creature out of its zone on its own.
_ZONE_MOVES = frozenset({"enter", "sprint", "withdraw"})
_NO_PARAMS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _trait(creature: Creature, feature: str) -> Trait | None:
    """``creature``'s trait ``feature``, unless the data marks it ``gm``."""
    for trait in creature.traits:
        if trait.id in (feature, f"zonekeep.srd.{feature}") and trait.gm is None:
            return trait
    return None


def _attach_rider(attack: Attack) -> OnHit | None:
    """``attack``'s ``attach`` rider, unless the data marks it ``gm``."""
    for rider in attack.on_hit:
        if rider.id in ("attach", "zonekeep.srd.attach") and rider.gm is None:
            return rider
    return None


def _check_attack_named(params: Any, attack_names: Any) -> Iterable[str]:
    if params.get("attack") not in attack_names:
        yield f"it names the attack {params.get('attack')!r}, which the creature lacks"


@hookimpl(specname="zonekeep_features")
def holds_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "web-walker",
            "trait",
            _NO_PARAMS,
            doc="Webbing never holds it: a Web (the `web` command's element) that would "
            "restrain it comes off at once.",
        ),
        FeatureSpec(
            "grapple-instead",
            "trait",
            {
                "type": "object",
                "required": ["attack", "escape_dc"],
                "properties": {
                    "attack": {"type": "string", "minLength": 1},
                    "escape_dc": {"type": "integer", "minimum": 1, "maximum": 30},
                },
                "additionalProperties": False,
            },
            doc="The `grapple_instead` command: hits of the attack grapple (escape DC, "
            "the `escape_hold` command) instead of dealing damage, or deal damage again.",
            check=_check_attack_named,
        ),
        FeatureSpec(
            "attach",
            "on_hit",
            {
                "type": "object",
                "required": ["attack"],
                "properties": {
                    "attack": {"type": "string", "minLength": 1},
                    "drain": {"type": "string", "minLength": 1},
                    "max": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "escape_dc": {"type": "integer", "minimum": 1, "maximum": 30},
                },
                "additionalProperties": False,
            },
            doc="A hit attaches it to the target: it moves with it; with `drain` it drains "
            "hit points at the start of its turns (up to `max`) and makes no attacks; "
            "without, it attacks only that target, with advantage (and blinds a Medium or "
            "smaller one it hit with advantage). `let_go` (5 ft of movement) or `detach` "
            "(any creature's action; a Strength check against `escape_dc` when given) end it.",
        ),
        FeatureSpec(
            "barkskin",
            "trait",
            {
                "type": "object",
                "required": ["ac"],
                "properties": {"ac": {"const": 16}},
                "additionalProperties": False,
            },
            doc="Its stat block's AC with barkskin: its Spellcasting casts the spell (the "
            "`cast` command of zonekeep.spells), whose `barkskin` condition makes its AC at "
            "least 16 while it lasts.",
        ),
        FeatureSpec(
            "berserk",
            "trait",
            {
                "type": "object",
                "required": ["hp"],
                "properties": {"hp": {"type": "integer", "minimum": 1, "maximum": 1000}},
                "additionalProperties": False,
            },
            doc="At the start of its turn with `hp` hit points or fewer, a 6 on a d6 makes it "
            "berserk: it must attack the nearest creature it sees, until it starts a turn "
            "with all its hit points (calming it is the GM's).",
        ),
    )


@hookimpl(specname="zonekeep_conditions")
def holds_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            GRAPPLE_INSTEAD,
            "Its hits with the attack its Grapple Instead names grapple instead of dealing "
            "damage (the grapple_instead command).",
        ),
        ConditionSpec(
            ATTACHED,
            "Attached to the creature it hit: it moves with it and cannot leave on its own "
            "(let_go; others pull it off with detach).",
        ),
        ConditionSpec(
            BERSERK,
            "Berserk: its attacks must target the nearest creature it sees.",
        ),
    )


# -- web walker ------------------------------------------------------------------------------


def _free_of_webs(ctx: RuleContext, creature: Creature) -> None:
    """Take off every Web that holds ``creature``, a web walker."""
    if _trait(creature, "web-walker") is None:
        return
    for asset in list(ctx.state.arena.assets):
        if asset.data.get("srd") == "web" and asset.data.get("holds") == creature.id:
            change_asset(
                ctx,
                asset.id,
                remove=True,
                reason=f"{creature.name} walks webs: they do not hold it",
            )


@hookimpl(specname="zonekeep_condition_applied")
def holds_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    if condition == "restrained":
        _free_of_webs(ctx, creature)
    if ATTACHED in creature.conditions and creature.out_of_fight:
        attached = _attached_to(ctx.state, creature)
        if attached is not None:
            _detach(ctx, attached[0], creature, f"{creature.name} is out of the fight")


# -- grapple instead ---------------------------------------------------------------------------


def _grapple_source(grappler: str) -> str:
    return f"grapple-instead:{grappler}"


def _has_grapple_instead(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _trait(me, "grapple-instead") is None:
        return ("no_such_feature", f"{me.name} cannot grapple instead of dealing damage.")
    return None


def _grapple_instead(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    grapple = cmd.params["grapple"]
    if not isinstance(grapple, bool):
        ctx.refuse("invalid_params", "'grapple' is true (grapple instead) or false (damage).")
    if grapple and GRAPPLE_INSTEAD not in me.conditions:
        apply_condition(ctx, me.id, GRAPPLE_INSTEAD, "grapple instead")
    elif not grapple and GRAPPLE_INSTEAD in me.conditions:
        ctx.emit(ConditionRemoved(me.id, GRAPPLE_INSTEAD, "deals damage again"))


def _grappling_instead(attacker: Creature, attack_name: str | None) -> Trait | None:
    """The Grapple Instead trait that turns ``attacker``'s hit with ``attack_name`` into a
    grapple now, or None."""
    trait = _trait(attacker, "grapple-instead")
    if trait is None or GRAPPLE_INSTEAD not in attacker.conditions:
        return None
    return trait if trait.params.get("attack") == attack_name else None


@hookimpl(specname="zonekeep_modify_damage")
def holds_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    if damage.attacker is None or damage.attack is None:
        return None
    attacker = ctx.state.creatures.get(damage.attacker)
    if attacker is None or _grappling_instead(attacker, damage.attack) is None:
        return None
    return damage.cancel("grapple instead of damage")


def _holds_on(state: EncounterState, creature: Creature) -> list[tuple[str, Creature, int]]:
    """The Grapple Instead grapples on ``creature``: (effect id, grappler, escape DC)."""
    found = []
    for effect in state.condition_effects.values():
        if effect.creature != creature.id or not effect.source.startswith("grapple-instead:"):
            continue
        grappler = state.creatures.get(effect.source.split(":", 1)[1])
        trait = _trait(grappler, "grapple-instead") if grappler is not None else None
        if grappler is not None and trait is not None:
            found.append((effect.id, grappler, int(trait.params["escape_dc"])))
    return found


def _held(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if not _holds_on(state, me):
        return ("invalid_target", f"{me.name} is not held by a grapple instead of damage.")
    return None


def _escape_hold(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    holds = _holds_on(ctx.state, me)
    if not holds:
        ctx.refuse("invalid_target", f"{me.name} is not held by a grapple instead of damage.")
    effect, grappler, dc = holds[0]
    skill = max(("athletics", "acrobatics"), key=lambda k: check_bonus(me, SKILLS[k], k))
    check = ability_check(ctx, me, SKILLS[skill], skill, dc, source=f"escape {grappler.name}")
    if check.success:
        ctx.emit(ConditionEffectEnded(effect, me.id, "grappled", "escaped the grapple"))


def _release_holds(ctx: RuleContext) -> None:
    """End the Grapple Instead grapples whose grappler cannot hold on any more."""
    for effect in list(ctx.state.condition_effects.values()):
        if not effect.source.startswith("grapple-instead:"):
            continue
        held = ctx.state.creatures.get(effect.creature)
        grappler = ctx.state.creatures.get(effect.source.split(":", 1)[1])
        if held is None or grappler is None:
            continue
        if grappler.incapacitated or grappler.out_of_fight or grappler.zone != held.zone:
            ctx.emit(
                ConditionEffectEnded(
                    effect.id, held.id, effect.condition, f"{grappler.name} lost its hold"
                )
            )


# -- attach ------------------------------------------------------------------------------------


def _attached_to(state: EncounterState, me: Creature) -> tuple[str, Creature, OnHit] | None:
    """The attachment of ``me``: (effect id, the creature it holds, its attach rider)."""
    for effect in state.condition_effects.values():
        if effect.creature != me.id or effect.condition != ATTACHED:
            continue
        if not effect.source.startswith("attach:"):
            continue
        target = state.creatures.get(effect.source.split(":", 1)[1])
        rider = next((r for a in me.attacks if (r := _attach_rider(a)) is not None), None)
        if target is not None and rider is not None:
            return effect.id, target, rider
    return None


def _attached_on(state: EncounterState, target: Creature) -> list[Creature]:
    """The creatures attached to ``target``."""
    source = f"attach:{target.id}"
    return [
        state.creatures[e.creature]
        for e in state.condition_effects.values()
        if e.condition == ATTACHED and e.source == source and e.creature in state.creatures
    ]


def _end_below(ctx: RuleContext, effect: str) -> None:
    """End the effects that last as long as ``effect`` (the darkmantle's blinding)."""
    for child in list(ctx.state.condition_effects.values()):
        if child.parent == effect and child.id in ctx.state.condition_effects:
            _end_below(ctx, child.id)
            ctx.emit(
                ConditionEffectEnded(
                    child.id, child.creature, child.condition, f"its parent {effect} ended", True
                )
            )


def _detach(ctx: RuleContext, effect: str, me: Creature, reason: str) -> None:
    _end_below(ctx, effect)
    ctx.emit(ConditionEffectEnded(effect, me.id, ATTACHED, reason))
    if me.resources.get(DRAINED):
        ctx.emit(ResourceRestored(me.id, DRAINED, 0, reason))


def _attach(
    ctx: RuleContext, me: Creature, target: Creature, rider: OnHit, result: AttackMade
) -> None:
    if _attached_to(ctx.state, me) is not None or target.out_of_fight:
        return
    effect = apply_timed_condition(ctx, me.id, ATTACHED, source=f"attach:{target.id}")
    if effect is None or "drain" in rider.params:
        return
    if result.roll.advantage == "advantage" and target.size <= Size.MEDIUM:
        apply_timed_condition(ctx, target.id, "blinded", parent=effect, source=me.id)


def _detach_cmd(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    other = ctx.creature(cmd.params["attached"], role="target")
    attached = _attached_to(ctx.state, other)
    if attached is None:
        ctx.refuse("invalid_target", f"{other.name} is attached to nobody.")
    effect, target, rider = attached
    if me.id == other.id:
        ctx.refuse("invalid_target", f"{me.name} lets go with let_go, not detach.")
    if me.zone is None or me.zone != other.zone:
        ctx.refuse("out_of_range", f"{other.name} is out of {me.name}'s reach.")
    dc = rider.params.get("escape_dc")
    if dc is not None:
        check = ability_check(ctx, me, "str", dc=int(dc), source=f"detach {other.name}")
        if not check.success:
            return
    _detach(ctx, effect, ctx.state.creatures[other.id], f"{me.name} pulled it off {target.name}")


def _let_go(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    attached = _attached_to(ctx.state, me)
    if attached is None:
        ctx.refuse("invalid_target", f"{me.name} is attached to nobody.")
    effect, target, _rider = attached
    if movement_left(ctx.state, me) < 5:
        ctx.refuse("not_enough_movement", f"{me.name} needs 5 ft of movement to let go.")
    ctx.emit(MovementSpent(me.id, 5, "let go"))
    _detach(ctx, effect, ctx.state.creatures[me.id], f"let go of {target.name}")


def _drain(ctx: RuleContext, me: Creature) -> None:
    attached = _attached_to(ctx.state, me)
    if attached is None:
        return
    effect, target, rider = attached
    if target.out_of_fight:
        _detach(ctx, effect, me, f"{target.name} is out of the fight")
        return
    drain = rider.params.get("drain")
    if drain is None:
        return
    rolled = ctx.roll(str(drain))
    done = apply_damage(ctx, target, rolled.total, roll=rolled, source=me.id, attacker=me.id)
    total = me.resources.get(DRAINED, 0) + done.amount
    ctx.emit(ResourceRestored(me.id, DRAINED, total, "blood drain"))
    now = ctx.state.creatures[me.id]
    top = int(rider.params.get("max", 0))
    if (top and total >= top) or ctx.state.creatures[target.id].out_of_fight:
        _detach(ctx, effect, now, f"sated after draining {total} hit points")


# -- berserk -----------------------------------------------------------------------------------


def _sees(state: EncounterState, me: Creature) -> dict[str, int]:
    """The creatures ``me`` sees and their distances in feet (the zone rules')."""
    if me.zone is None or "blinded" in me.conditions:
        return {}
    seen = {}
    for other in state.creatures.values():
        if other.id == me.id or other.out_of_fight or other.hidden or other.zone is None:
            continue
        if "invisible" in other.conditions:
            continue
        try:
            feet = path_distance(state.arena, me.zone, other.zone)
        except KeyError:
            continue
        if feet is not None:
            seen[other.id] = feet
    return seen


def _berserk_roll(ctx: RuleContext, me: Creature) -> None:
    trait = _trait(me, "berserk")
    if trait is None:
        return
    if BERSERK in me.conditions:
        if me.hp >= me.max_hp:
            ctx.emit(ConditionRemoved(me.id, BERSERK, "it has all its hit points again"))
        return
    if me.hp > int(trait.params["hp"]) or me.out_of_fight:
        return
    if ctx.roll("1d6").total == 6:
        apply_condition(ctx, me.id, BERSERK, "berserk: a 6 on the d6")


# -- hooks -------------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_attack_made")
def holds_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not result.hit:
        return
    rider = _attach_rider(attack)
    if rider is not None:
        _attach(ctx, attacker, ctx.state.creatures[target.id], rider, result)
        return
    trait = _grappling_instead(attacker, attack.name)
    if trait is None:
        return
    now = ctx.state.creatures[target.id]
    source = _grapple_source(attacker.id)
    if now.out_of_fight or any(
        e.creature == now.id and e.source == source for e in ctx.state.condition_effects.values()
    ):
        return
    apply_timed_condition(ctx, now.id, "grappled", source=source)


@hookimpl(specname="zonekeep_before_attack")
def holds_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    attached = _attached_to(ctx.state, attacker)
    if attached is not None:
        _effect, held, rider = attached
        if "drain" in rider.params:
            ctx.refuse("invalid_target", f"{attacker.name} is attached: it makes no attacks.")
        if target.id != held.id:
            ctx.refuse(
                "invalid_target",
                f"{attacker.name} is attached to {held.name}: it attacks no other creature.",
            )
    if BERSERK in attacker.conditions:
        seen = _sees(ctx.state, attacker)
        if seen and target.id in seen and seen[target.id] > min(seen.values()):
            nearest = sorted(ctx.state.creatures[c].name for c, f in seen.items()
                             if f == min(seen.values()))  # fmt: skip
            ctx.refuse(
                "invalid_target",
                f"{attacker.name} is berserk: it attacks the nearest creature it sees "
                f"({', '.join(nearest)}).",
            )


@hookimpl(specname="zonekeep_roll_modifiers")
def holds_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if roll.kind != "attack" or roll.target is None:
        return None
    me = ctx.state.creatures.get(roll.actor)
    if me is None or ATTACHED not in me.conditions:
        return None
    attached = _attached_to(ctx.state, me)
    if attached is None or attached[1].id != roll.target:
        return None
    return (RollModifier("advantage", "attached"),)


@hookimpl(specname="zonekeep_turn_start")
def holds_turn_start(ctx: RuleContext, creature: Creature) -> None:
    _free_of_webs(ctx, creature)
    _release_holds(ctx)
    if ATTACHED in creature.conditions:
        _drain(ctx, creature)
    _berserk_roll(ctx, ctx.state.creatures[creature.id])


@hookimpl(specname="zonekeep_zone_entered")
def holds_zone_entered(ctx: RuleContext, creature: Creature, from_zone: str, forced: bool) -> None:
    to_zone = creature.zone
    if to_zone is None:
        return
    for rider in _attached_on(ctx.state, creature):
        if rider.zone != to_zone:
            change_zone(ctx, rider, to_zone, forced=True, by=creature.id)
    _release_holds(ctx)


@hookimpl(specname="zonekeep_action_refusal")
def holds_action_refusal(ctx: RuleContext, creature: Creature, spec: CommandSpec) -> Refusal | None:
    if ATTACHED not in creature.conditions:
        return None  # the usual case
    if spec.id in _ZONE_MOVES:
        return Refusal("cannot_move", f"{creature.name} is attached: it lets go first (let_go).")
    if spec.id == OPPORTUNITY_ATTACK:
        # A stirge makes no attacks; a darkmantle's only target carries it along.
        return Refusal(
            "invalid_target", f"{creature.name} is attached: it makes no opportunity attacks."
        )
    return None


@hookimpl(specname="zonekeep_commands")
def holds_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "grapple_instead",
            _grapple_instead,
            "Grapple with your Grapple Instead attack's hits instead of dealing damage "
            "(grapple true), or deal damage again (grapple false).",
            {
                "creature": Param("creature", True, "the acting creature"),
                "grapple": Param("boolean", True, "true: grapple instead; false: damage"),
            },
            requires=_has_grapple_instead,
        ),
        CommandSpec(
            "escape_hold",
            _escape_hold,
            "Action: break a grapple that a creature's claws hold you in instead of "
            "wounding you (Athletics or Acrobatics, your better, against its escape DC).",
            {"creature": Param("creature", True, "the grappled creature")},
            costs=("action",),
            requires=_held,
        ),
        CommandSpec(
            "detach",
            _detach_cmd,
            "Action: pull off a creature attached to you or to a creature in your zone "
            "(a Strength check when its stat block gives an escape DC).",
            {
                "creature": Param("creature", True, "the acting creature"),
                "attached": Param("creature", True, "the attached creature"),
            },
            costs=("action",),
        ),
        CommandSpec(
            "let_go",
            _let_go,
            "Let go of the creature you are attached to (5 ft of your movement).",
            {"creature": Param("creature", True, "the attached creature")},
        ),
    )
