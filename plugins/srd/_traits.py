"""SRD creature traits and riders about poisons, drains, invisibility and passing through
walls (part of the ``zonekeep.srd`` plugin, issue 30).

Each hook implementation carries a name of its own (``traits_...``) and names the hook it
implements with ``specname``, so that the package ``zonekeep.plugins.srd`` can import it
beside the other feature modules' implementations of the same hooks. Only public
``zonekeep.sdk`` names are used, as a third-party content plugin would.

- ``poison-paralysis`` (an attack's ``on_hit``, after its ``save-for-damage``): when the
  rider's poison damage is what brings the creature hit to 0 hit points (it had some
  left after the weapon's damage), it is stable instead of dying or defeated, and
  poisoned for ``rounds`` (600: 1 hour), even after it regains hit points, and paralyzed
  while poisoned that way (a timed ``paralyzed`` whose parent is the poison).
- ``life-drain`` (``on_hit``, ``ability``, ``dc``): the creature hit saves; on a failure
  its hit point maximum drops by the damage it took from the hit (after its defences),
  its hit points with it when they are above the new maximum (an ``override_applied``
  of ``max_hp`` and ``hp``, ``by`` the attacker). At a maximum of 0 it dies
  (``defeated``). The maximum comes back on a long rest, outside the fight: the
  encounter's ``rest`` does not restore it (the GM restores it with an override).
- ``invisibility`` (action, the ``invisibility`` command): the creature turns
  ``invisible`` (the built-in condition: its attack rolls have advantage, attack rolls
  against it disadvantage) as if concentrating on a spell: with the spells plugin
  loaded, it gets that plugin's ``concentrating`` condition (damage calls for a
  Constitution save, incapacitation or a concentration spell ends it; turning
  invisible ends any concentration it held) and the invisibility hangs on it; ``rounds`` (the duergar's 1 hour: 600) bounds it. It ends
  when the creature attacks (after that attack, which the invisibility helped). Using
  Scare, Consume Life, Enlarge or a spell also ends it in the stat blocks: the GM ends
  it then (``end_effect``), since those are other commands.
- ``incorporeal-movement`` (trait): it crosses a link that has no clear path (a wall)
  as if it were clear, and passing through a zone it reached that way costs as
  difficult terrain (the surcharge ``incorporeal``); moving through creatures costs as
  every enemy's space already does. Zones have no inside of an object to end a turn in,
  so the 1d10 force damage for that never arises.
- ``versatile`` (trait, ``attack``, ``damage``): the ``grip`` command (free, on its
  turn) has the creature hold its weapon in both hands (the ``two-handed`` condition)
  or in one again; while it holds it in both, a hit of its melee attack ``attack`` rolls
  ``damage`` (the stat block's two-handed damage) instead, through the public hook
  ``zonekeep_attack_damage``. Its thrown or ranged attacks keep their own damage.
- ``false-appearance`` (trait): a creature the GM placed ``hidden`` (the roster's or an
  override's ``hidden``: players and spectators do not see it, they see the object it
  looks like) stays hidden while it keeps still, and is revealed (an
  ``override_applied`` of ``hidden`` to false, ``by`` the creature itself) the moment it
  stops: when it enters a zone on its own, when it attacks, and at the end of a turn in
  which it moved or spent its action or bonus action.
- ``leap`` (trait, ``long``, ``high``, ``running``): its long jump reaches ``long`` feet
  (only after a 10-ft run-up when ``running``, the lion's Running Leap; with or without
  one otherwise), when that beats its Strength, through the public hook
  ``zonekeep_jump_distance``. The arena's jumps are long jumps: ``high`` is kept for the
  GM (a high jump onto a ledge is a climb the arena's links decide).
- ``amorphous`` (trait): it never squeezes: immune to the ``squeezing`` condition (a
  crowded zone's, ``zonekeep_condition_immunity``), so its attacks, its Dexterity saves
  and its moves in a crowded zone are as in any other zone. It still takes its room in
  the zone (its capacity counts it).
- ``teleport`` (action, the ``teleport`` command, its use spent): with ``within`` (the
  blink dog's 40 ft), it goes to a zone it sees within that path distance (not blinded;
  the zone must have room), without leaving by the ways that provoke, and gets one
  ``attack`` (its ``attack``, the bite) after it; biting first is the GM's. With
  ``away`` (the unicorn's mile), it and up to ``companions`` willing creatures (its
  allies, ``creatures``) within 5 feet (its zone) leave the fight (``escaped``).
- ``disease`` (``on_hit``, ``ability``, ``dc``): the creature hit saves against the
  disease or is ``poisoned`` until cured (a timed condition with no end: the GM, or a
  cure such as the unicorn's Healing Touch, ends it). A creature already sick with that
  creature's disease does not save again. Its course over days is outside the fight.
- ``ignite`` (``on_hit``, ``damage``, ``damage_type``): the creature hit catches fire
  (the ``ignited`` condition, once however many hits): at the end of each of its turns
  it takes the damage, until a creature in its zone douses it (the ``put_out_fire`` command,
  an action; the burning creature may douse itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from zonekeep.sdk import (
    ABILITIES,
    DEFEATED,
    DYING,
    ESCAPED,
    SQUEEZING,
    STABLE,
    Action,
    ActionGranted,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damaged,
    EncounterState,
    FeatureSpec,
    Link,
    MoveRequest,
    OverrideApplied,
    Param,
    RuleContext,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    change_zone,
    hookimpl,
    path_distance,
    saving_throw,
    spend_use,
    zone_room,
)

__all__ = [
    "traits_attack_damage",
    "traits_attack_made",
    "traits_commands",
    "traits_condition_immunity",
    "traits_conditions",
    "traits_features",
    "traits_jump_distance",
    "traits_link_crossing",
    "traits_movement_surcharges",
    "traits_turn_end",
    "traits_zone_entered",
]

#: The condition the built-in conditions rules play for an invisible creature.
INVISIBLE: Final = "invisible"
#: The spells plugin's condition of a creature concentrating (when that plugin is loaded).
CONCENTRATING: Final = "concentrating"
#: The source of the invisibility an ``invisibility`` action gives (and of its
#: concentration).
INVISIBILITY_SOURCE: Final = "invisibility"
#: The surcharge for passing through a zone reached through a wall.
INCORPOREAL: Final = "incorporeal"

#: The condition of a creature holding its versatile weapon in both hands.
TWO_HANDED: Final = "two-handed"
#: The condition of a creature on fire until doused (a magmin's touch).
IGNITED: Final = "ignited"

_EMPTY: Final = {"type": "object", "properties": {}, "additionalProperties": False}
PARALYSIS_SCHEMA: Final = {
    "type": "object",
    "required": ["rounds"],
    "properties": {"rounds": {"type": "integer", "minimum": 1, "maximum": 14_400}},
    "additionalProperties": False,
}
LIFE_DRAIN_SCHEMA: Final = {
    "type": "object",
    "required": ["ability", "dc"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
    },
    "additionalProperties": False,
}
VERSATILE_SCHEMA: Final = {
    "type": "object",
    "required": ["attack", "damage"],
    "properties": {
        "attack": {"type": "string", "minLength": 1},
        "damage": {"type": "string", "format": "dice"},
    },
    "additionalProperties": False,
}
LEAP_SCHEMA: Final = {
    "type": "object",
    "required": ["long"],
    "properties": {
        "long": {"type": "integer", "minimum": 5, "maximum": 120},
        "high": {"type": "integer", "minimum": 5, "maximum": 60},
        "running": {"type": "boolean"},
    },
    "additionalProperties": False,
}
IGNITE_SCHEMA: Final = {
    "type": "object",
    "required": ["damage", "damage_type"],
    "properties": {
        "damage": {"type": "string", "format": "dice"},
        "damage_type": {"type": "string", "minLength": 1},
    },
    "additionalProperties": False,
}
TELEPORT_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "within": {"type": "integer", "minimum": 5, "maximum": 500},
        "attack": {"type": "string", "minLength": 1},
        "away": {"type": "boolean"},
        "companions": {"type": "integer", "minimum": 0, "maximum": 10},
    },
    "additionalProperties": False,
}
INVISIBILITY_SCHEMA: Final = {
    "type": "object",
    "properties": {"rounds": {"type": "integer", "minimum": 1, "maximum": 14_400}},
    "additionalProperties": False,
}


def _trait(creature: Creature, feature: str) -> bool:
    return any(
        t.id in (feature, f"zonekeep.srd.{feature}") and t.gm is None for t in creature.traits
    )


def _action(creature: Creature, feature: str) -> Action | None:
    for action in creature.actions:
        if action.id in (feature, f"zonekeep.srd.{feature}") and action.gm is None:
            return action
    return None


def _versatile_check(params: Any, attack_names: Any) -> Iterable[str]:
    if params.get("attack") not in attack_names:
        yield f"versatile names the attack {params.get('attack')!r}, which the creature lacks"


@hookimpl(specname="zonekeep_features")
def traits_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "poison-paralysis",
            "on_hit",
            PARALYSIS_SCHEMA,
            doc="When the attack's poison (its save-for-damage) brings the creature hit to "
            "0 hit points, it is stable, and poisoned for the rounds (even after it regains "
            "hit points) and paralyzed while poisoned that way.",
        ),
        FeatureSpec(
            "life-drain",
            "on_hit",
            LIFE_DRAIN_SCHEMA,
            doc="The creature hit saves or its hit point maximum drops by the damage it took "
            "from the hit (until a long rest, which the fight does not have); at a maximum "
            "of 0 it dies (defeated).",
        ),
        FeatureSpec(
            "invisibility",
            "action",
            INVISIBILITY_SCHEMA,
            doc="The invisibility command: invisible, as if concentrating on a spell (the "
            "spells plugin's concentrating, when loaded), for at most the rounds given; it "
            "ends when the creature attacks. Ending it for using another feature or a "
            "spell is the GM's (end_effect).",
        ),
        FeatureSpec(
            "versatile",
            "trait",
            VERSATILE_SCHEMA,
            doc="The grip command holds the weapon in both hands (the two-handed condition) "
            "or in one again; in both, a hit of the melee attack named rolls the damage "
            "given (the two-handed damage) instead of the attack's own.",
            check=_versatile_check,
        ),
        FeatureSpec(
            "false-appearance",
            "trait",
            _EMPTY,
            doc="Placed hidden by the GM, it stays hidden while it keeps still and is "
            "revealed as soon as it enters a zone on its own, attacks, or ends a turn in "
            "which it moved or spent its action or bonus action.",
        ),
        FeatureSpec(
            "leap",
            "trait",
            LEAP_SCHEMA,
            doc="Its long jump reaches the long distance given (with running, only after a "
            "10-ft run-up), when that beats its Strength; the high jump is the GM's.",
        ),
        FeatureSpec(
            "amorphous",
            "trait",
            _EMPTY,
            doc="It never squeezes: immune to the squeezing condition, so a crowded zone "
            "costs it no extra movement and gives its attacks and Dexterity saves no "
            "disadvantage.",
        ),
        FeatureSpec(
            "teleport",
            "action",
            TELEPORT_SCHEMA,
            doc="The teleport command: with within, to a zone it sees within that many feet, "
            "provoking nothing, then one attack; with away, it and up to companions allies in "
            "its zone leave the fight (escaped).",
        ),
        FeatureSpec(
            "disease",
            "on_hit",
            LIFE_DRAIN_SCHEMA,
            doc="The creature hit saves against the disease or is poisoned until cured; "
            "its course over days is the GM's.",
        ),
        FeatureSpec(
            "ignite",
            "on_hit",
            IGNITE_SCHEMA,
            doc="The creature hit is ignited: the damage at the end of each of its turns, "
            "until a creature in its zone douses it (the put_out_fire command, an action).",
        ),
        FeatureSpec(
            "incorporeal-movement",
            "trait",
            _EMPTY,
            doc="Crosses a link without a clear path (a wall) as if it were clear; passing "
            "through a zone reached that way costs as difficult terrain.",
        ),
    )


# -- on-hit riders ----------------------------------------------------------------------------


@hookimpl(specname="zonekeep_attack_made", trylast=True)
def traits_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    """Runs last, after every other plugin's riders (the save-for-damage the poison
    paralysis follows), and ends the attacker's invisibility after its attack."""
    if result.hit and attack.on_hit:
        for rider in attack.on_hit:
            if rider.gm is not None:
                continue
            if rider.id == "poison-paralysis":
                _poison_paralysis(ctx, attacker, target, damage, rider.params)
            elif rider.id == "life-drain":
                _life_drain(ctx, attacker, target, attack, damage, rider.params)
            elif rider.id == "disease":
                _disease(ctx, attacker, target, attack, rider.params)
            elif rider.id == "ignite":
                _ignite(ctx, attacker, target)
    now = ctx.state.creatures[attacker.id]
    if INVISIBLE in now.conditions:
        _end_invisibility(ctx, attacker.id, f"{attacker.name} attacked")
    if now.hidden:
        _reveal(ctx, now)


def _poison_paralysis(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    damage: Damaged | None,
    params: dict[str, Any],
) -> None:
    now = ctx.state.creatures[target.id]
    # The weapon's damage left it standing (damage.hp > 0); it is at 0 now: the poison did it.
    if damage is None or damage.hp <= 0 or now.hp > 0:
        return
    for down in (DYING, DEFEATED):
        if down in now.conditions:
            ctx.emit(ConditionRemoved(now.id, down, "stable: the poison paralyzes instead"))
    if STABLE not in ctx.state.creatures[target.id].conditions:
        apply_condition(ctx, target.id, STABLE, f"{attacker.name}'s poison")
    poisoned = apply_timed_condition(
        ctx, target.id, "poisoned", rounds=int(params["rounds"]), source=attacker.id
    )
    if poisoned is not None:
        apply_timed_condition(ctx, target.id, "paralyzed", source=attacker.id, parent=poisoned)


def _life_drain(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    damage: Damaged | None,
    params: dict[str, Any],
) -> None:
    if damage is None or damage.amount <= 0:
        return
    now = ctx.state.creatures[target.id]
    if DEFEATED in now.conditions:
        return
    source = f"{attacker.name}'s {attack.name}"
    if saving_throw(ctx, now, str(params["ability"]), int(params["dc"]), source):
        return
    now = ctx.state.creatures[target.id]
    new_max = max(0, now.max_hp - damage.amount)
    ctx.emit(OverrideApplied(attacker.id, now.id, "max_hp", new_max))
    if now.hp > new_max:
        ctx.emit(OverrideApplied(attacker.id, now.id, "hp", new_max))
    if new_max == 0:
        for down in (DYING, STABLE):
            if down in ctx.state.creatures[now.id].conditions:
                ctx.emit(ConditionRemoved(now.id, down, "its hit point maximum is 0"))
        apply_condition(ctx, now.id, DEFEATED, f"{source}: hit point maximum 0")


# -- invisibility -----------------------------------------------------------------------------


def _has_invisibility(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "invisibility") is None:
        return ("invalid_params", f"{me.name} cannot turn invisible.")
    return None


def _concentrating(ctx: RuleContext) -> str | None:
    """The spells plugin's ``concentrating`` condition, when that plugin is loaded."""
    full = ctx.resolve("condition", CONCENTRATING)
    if ctx.catalog is None or full not in ctx.catalog.ids("condition"):
        return None  # no plugin declares it: no concentration to hang on
    return full


def _invisibility_effects(state: EncounterState, creature_id: str) -> list[str]:
    return [
        e.id
        for e in state.condition_effects.values()
        if e.creature == creature_id and e.source == INVISIBILITY_SOURCE
    ]


def _end_invisibility(ctx: RuleContext, creature_id: str, reason: str) -> None:
    for eid in _invisibility_effects(ctx.state, creature_id):
        effect = ctx.state.condition_effects.get(eid)
        if effect is not None:
            ctx.emit(ConditionEffectEnded(eid, creature_id, effect.condition, reason))


def _invisibility(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "invisibility")
    assert action is not None  # (requires)
    spend_use(ctx, me, action)
    _end_invisibility(ctx, me.id, f"{me.name} turned invisible again")
    rounds = action.params.get("rounds")
    parent = None
    concentrating = _concentrating(ctx)
    if concentrating is not None:
        # As if concentrating on a spell: any other concentration of its ends (and what
        # hangs on it, by the durations rules).
        for effect in list(ctx.state.condition_effects.values()):
            if effect.creature == me.id and effect.condition == concentrating:
                ctx.emit(
                    ConditionEffectEnded(
                        effect.id, me.id, concentrating, f"{me.name} turned invisible"
                    )
                )
        parent = apply_timed_condition(
            ctx,
            me.id,
            concentrating,
            rounds=int(rounds) if rounds else None,
            source=INVISIBILITY_SOURCE,
            override=True,
        )
    apply_timed_condition(
        ctx,
        me.id,
        INVISIBLE,
        rounds=int(rounds) if rounds and parent is None else None,
        source=INVISIBILITY_SOURCE,
        parent=parent,
    )


@hookimpl(specname="zonekeep_commands")
def traits_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "grip",
            _grip,
            "Hold your versatile weapon in both hands (hands 2: its two-handed damage) or in "
            "one again (hands 1).",
            {
                "creature": Param("creature", True, "the acting creature"),
                "hands": Param("integer", True, "1 or 2"),
            },
            requires=_has_versatile,
        ),
        CommandSpec(
            "teleport",
            _teleport,
            "Action: Teleport: to a zone you see within range, then one attack (the blink "
            "dog); or away from the fight with willing allies in your zone (the unicorn).",
            {
                "creature": Param("creature", True, "the acting creature"),
                "zone": Param("zone", False, "where to (a teleport within range)"),
                "creatures": Param("creatures", False, "the allies taken along (away)"),
            },
            costs=("action",),
            requires=_has_teleport,
        ),
        CommandSpec(
            "put_out_fire",
            _douse,
            "Action: douse the fire on a creature in your zone (or on yourself).",
            {
                "creature": Param("creature", True, "the acting creature"),
                "target": Param("creature", True, "the burning creature"),
            },
            costs=("action",),
        ),
        CommandSpec(
            "invisibility",
            _invisibility,
            "Action: turn invisible, as if concentrating on a spell, until you attack "
            "(Invisibility, Invisible Passage).",
            {"creature": Param("creature", True, "the acting creature")},
            costs=("action",),
            requires=_has_invisibility,
        ),
    )


# -- incorporeal movement -----------------------------------------------------------------------


@hookimpl(specname="zonekeep_link_crossing")
def traits_link_crossing(ctx: RuleContext, creature: Creature, link: Link) -> str | None:
    if creature.traits and _trait(creature, "incorporeal-movement"):
        return "incorporeal movement"
    return None


@hookimpl(specname="zonekeep_movement_surcharges")
def traits_movement_surcharges(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> Iterable[str] | None:
    if move.kind != "enter" or move.zone is None or creature.zone is None:
        return None
    if not creature.traits or not _trait(creature, "incorporeal-movement"):
        return None
    links = ctx.state.arena.links_between(creature.zone, move.zone)
    if links and not any(link.clear for link in links):
        return (INCORPOREAL,)
    return None


# -- versatile weapons ---------------------------------------------------------------------------


def _versatile(creature: Creature, attack: Attack) -> str | None:
    """The two-handed damage of ``creature``'s melee attack ``attack``, if versatile."""
    if attack.kind != "melee":
        return None
    for trait in creature.traits:
        if (
            trait.id in ("versatile", "zonekeep.srd.versatile")
            and trait.gm is None
            and trait.params.get("attack") == attack.name
        ):
            return str(trait.params["damage"])
    return None


def _has_versatile(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if not _trait(me, "versatile"):
        return ("invalid_params", f"{me.name} has no versatile weapon.")
    return None


def _grip(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    hands = cmd.params["hands"]
    two = ctx.resolve("condition", TWO_HANDED)
    if hands == 2:
        if two in me.conditions:
            ctx.refuse("invalid_params", f"{me.name} already holds its weapon in both hands.")
        apply_condition(ctx, me.id, two, "grip")
    elif hands == 1:
        if two not in me.conditions:
            ctx.refuse("invalid_params", f"{me.name} already holds its weapon in one hand.")
        ctx.emit(ConditionRemoved(me.id, two, "grip"))
    else:
        ctx.refuse("invalid_params", f"'hands' is 1 or 2, not {hands!r}.")


@hookimpl(specname="zonekeep_attack_damage")
def traits_attack_damage(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> str | None:
    if not attacker.traits or not attacker.conditions:  # the usual case: nothing to change
        return None
    if ctx.resolve("condition", TWO_HANDED) not in attacker.conditions:
        return None
    return _versatile(attacker, attack)


@hookimpl(specname="zonekeep_conditions")
def traits_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            IGNITED,
            "On fire: fire damage at the end of each of its turns until a creature douses "
            "it (the put_out_fire command).",
        ),
        ConditionSpec(
            TWO_HANDED,
            "Holds its versatile weapon in both hands: its hits with it roll the "
            "two-handed damage (the grip command).",
        ),
    )


# -- false appearance ----------------------------------------------------------------------------


def _reveal(ctx: RuleContext, creature: Creature) -> None:
    """``creature``, hidden behind its False Appearance, stopped keeping still: revealed."""
    if creature.hidden and creature.traits and _trait(creature, "false-appearance"):
        ctx.emit(OverrideApplied(creature.id, creature.id, "hidden", False))


@hookimpl(specname="zonekeep_zone_entered")
def traits_zone_entered(ctx: RuleContext, creature: Creature, from_zone: str, forced: bool) -> None:
    if creature.hidden and not forced:
        _reveal(ctx, creature)


@hookimpl(specname="zonekeep_turn_end")
def traits_turn_end(ctx: RuleContext, creature: Creature) -> None:
    if creature.conditions and ctx.resolve("condition", IGNITED) in creature.conditions:
        _burn(ctx, creature)
    if not ctx.state.creatures[creature.id].hidden:
        return
    creature = ctx.state.creatures[creature.id]
    res = ctx.state.resources
    if res.movement_spent > 0 or res.actions < 1 or res.bonus_actions < 1:
        _reveal(ctx, creature)


# -- leap -----------------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_jump_distance")
def traits_jump_distance(ctx: RuleContext, creature: Creature, running: bool) -> int | None:
    for trait in creature.traits:
        if trait.id in ("leap", "zonekeep.srd.leap") and trait.gm is None:
            if trait.params.get("running") and not running:
                return None
            return int(trait.params["long"])
    return None


# -- amorphous ------------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_condition_immunity")
def traits_condition_immunity(ctx: RuleContext, creature: Creature, condition: str) -> str | None:
    if condition == SQUEEZING and creature.traits and _trait(creature, "amorphous"):
        return "amorphous"
    return None


# -- teleport -------------------------------------------------------------------------------------


def _has_teleport(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "teleport") is None:
        return ("invalid_params", f"{me.name} cannot teleport.")
    return None


def _teleport(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "teleport")
    assert action is not None  # (requires)
    p = action.params
    if p.get("away"):
        _teleport_away(ctx, cmd, me, action)
        return
    zone = cmd.params.get("zone")
    s = ctx.state
    if zone is None or not s.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"Teleport needs a zone of the arena, not {zone!r}.")
    if me.zone is None or zone == me.zone:
        ctx.refuse("invalid_params", f"{me.name} is already in {zone}.")
    if "blinded" in me.conditions:
        ctx.refuse("invalid_target", f"{me.name} must see where it teleports; it is blinded.")
    distance = path_distance(s.arena, me.zone, zone)
    within = int(p.get("within", 0))
    if distance is None:
        ctx.refuse("no_line_of_sight", f"{me.name} cannot see {zone}.")
    if distance > within:
        ctx.refuse(
            "out_of_range", f"{zone} is {distance} ft away; {action.name} reaches {within} ft."
        )
    full = zone_room(ctx, me, zone)
    if full:
        ctx.refuse(*full)
    spend_use(ctx, me, action)
    change_zone(ctx, me, zone, by=action.name)
    if p.get("attack") and me.attack(str(p["attack"])) is not None:
        ctx.emit(ActionGranted(me.id, "attack", action.name, 1))


def _teleport_away(ctx: RuleContext, cmd: Command, me: Creature, action: Action) -> None:
    chosen = [ctx.creature(c, role="target") for c in cmd.params.get("creatures") or ()]
    most = int(action.params.get("companions", 0))
    if len(chosen) > most or len({c.id for c in chosen}) != len(chosen):
        ctx.refuse("invalid_params", f"{action.name} takes at most {most} other creatures.")
    for other in chosen:
        if other.id == me.id or other.side != me.side or other.out_of_fight:
            ctx.refuse("invalid_target", f"{other.name} is not a willing ally in the fight.")
        if other.zone != me.zone:
            ctx.refuse("out_of_range", f"{other.name} is not within 5 feet of {me.name}.")
    spend_use(ctx, me, action)
    for creature in (me, *chosen):
        apply_condition(ctx, creature.id, ESCAPED, action.name)


# -- disease ---------------------------------------------------------------------------------------


def _disease(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, params: dict[str, Any]
) -> None:
    now = ctx.state.creatures[target.id]
    source = f"disease:{attacker.id}"
    if now.out_of_fight or any(
        e.creature == now.id and e.source == source for e in ctx.state.condition_effects.values()
    ):
        return
    name = f"{attacker.name}'s {attack.name} (disease)"
    if saving_throw(ctx, now, str(params["ability"]), int(params["dc"]), name):
        return
    apply_timed_condition(ctx, now.id, "poisoned", source=source)


# -- ignite ----------------------------------------------------------------------------------------


def _ignite(ctx: RuleContext, attacker: Creature, target: Creature) -> None:
    now = ctx.state.creatures[target.id]
    if now.out_of_fight or ctx.resolve("condition", IGNITED) in now.conditions:
        return
    apply_timed_condition(ctx, now.id, IGNITED, source=f"ignite:{attacker.id}")


def _fires(state: EncounterState, creature_id: str) -> list[tuple[str, str]]:
    """The ignite effects on ``creature_id``: (effect id, the igniting creature's id)."""
    return [
        (e.id, e.source.removeprefix("ignite:"))
        for e in state.condition_effects.values()
        if e.creature == creature_id and e.source.startswith("ignite:")
    ]


def _burn(ctx: RuleContext, creature: Creature) -> None:
    for _effect, by in _fires(ctx.state, creature.id)[:1]:
        source = ctx.state.creatures.get(by)
        rider = None
        if source is not None:
            rider = next((r for a in source.attacks for r in a.on_hit if r.id == "ignite"), None)
        dice = str(rider.params["damage"]) if rider else "1d6"
        kind = str(rider.params["damage_type"]) if rider else "fire"
        rolled = ctx.roll(dice)
        apply_damage(
            ctx,
            ctx.state.creatures[creature.id],
            rolled.total,
            damage_type=kind,
            roll=rolled,
            source=by,
        )


def _douse(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    fires = _fires(ctx.state, target.id)
    if not fires:
        ctx.refuse("invalid_target", f"{target.name} is not on fire.")
    if target.zone != me.zone:
        ctx.refuse("out_of_range", f"{target.name} is not in {me.name}'s zone.")
    for effect, _by in fires:
        ctx.emit(
            ConditionEffectEnded(effect, target.id, ctx.resolve("condition", IGNITED), "doused")
        )
