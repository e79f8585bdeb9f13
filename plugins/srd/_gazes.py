"""SRD creature features that turn creatures to stone (part of the ``zonekeep.srd``
plugin, issue 30).

Only public ``zonekeep.sdk`` names are used, as a third-party content plugin would. Each
hook implementation carries a name of its own (``gazes_...``) and names its hook with
``specname``.

- ``petrify`` (an attack's ``on_hit``, ``ability``, ``dc``, optional ``rounds``): the
  creature hit saves or starts turning to stone: ``restrained`` (a timed condition with
  no end of its own, its source ``petrify:<attacker>``). At the end of its next turn it
  saves again: a success ends the restraint, a failure turns it to stone:
  ``petrified`` for ``rounds`` (the cockatrice's 24 hours: 14,400), or until the GM ends
  it (``end_effect``) when no rounds are given. A creature already turning to stone or
  petrified by that creature is not asked again.
- ``gaze`` with ``effect`` ``petrify`` (trait, ``within``, ``ability``, ``dc``): the
  basilisk's Petrifying Gaze. A creature starting its turn within ``within`` feet (path
  distance) of it, when the two can see each other (neither is blinded, there is a path
  between their zones, the gazer is not incapacitated), saves as against ``petrify``, and
  repeats the save at the end of that turn (the first end of its turn after it began to
  turn). Averting the eyes is the player's choice the GM honours (ending the effect).
- ``tail-spike-regrowth`` (trait, ``attack``, with ``uses``): the manticore's 24 tail
  spikes. Each ``attack`` made (alone, in a multiattack or as a reaction) spends one use
  before its roll; with none left the attack is refused (``no_uses_left``). The GM's long
  ``rest`` grows them back (its uses are ``charges``, which only a long rest restores).
- ``vampire-weaknesses`` (trait, ``sunlight_damage``): its Sunlight Hypersensitivity, in
  the zones the encounter setting ``sunlight`` of ``zonekeep.srd`` names (``["*"]``:
  all): ``sunlight_damage`` radiant damage at the start of its turn there, and
  disadvantage on its attack rolls and ability checks there. The rest of its weaknesses
  (thresholds, running water, a stake through the heart) are the GM's: the arena has no
  residences, running water or resting places.
  Its ``regeneration`` (the ``zonekeep.srd`` trait, stopped by radiant damage) does not
  work at the start of a turn in sunlight: the burn comes first, and its radiant damage
  stops the regeneration of that turn (the regeneration's turn-start rules run last).
  Not done: radiant damage also stops it at the start of the vampire's *next* turn, and
  the burn's does not (the regeneration's own rules consume the stop the burn lays): a
  vampire that leaves the sunlight regenerates at its next turn; the GM gives it
  ``regeneration_stopped`` when that matters.
- ``enlarge`` (action, the ``enlarge`` command, its use spent; ``rounds``, ``size``,
  ``attacks``): the duergar grows for ``rounds`` (10: 1 minute): the ``enlarged``
  condition, and its size becomes ``size`` (an ``override_applied`` of ``size``, ``by``
  itself; one size smaller, its own, comes back when ``enlarged`` ends, by its rounds or
  the GM). While
  enlarged, the hits of its ``attacks`` (its Strength weapons) roll twice their damage
  dice (``zonekeep_attack_damage``: ``1d8+2`` becomes ``2d8+2``), and its Strength checks
  and saves have advantage. Not done: growing in a zone without room for a Large
  creature (the GM shrinks it by override); its Invisibility does not end by itself
  (the GM ends it, as the traits module says).
- ``infernal-wound`` (``on_hit``, ``ability``, ``dc``, ``damage``, ``check_dc``): the
  creature hit saves or has an infernal wound (the ``infernal-wound`` condition, its
  source ``wound:<attacker>``); each later hit of that attack on the wounded creature
  deepens it, with no save (one more wound effect). At the start of each of its turns it
  loses ``damage`` hit points per wound (1d10, 2d10 ...: untyped damage, by the wounding
  creature). Any creature in its zone (itself too) stanches it with the ``stanch``
  command (an action): a Wisdom (Medicine) check against ``check_dc`` closes every
  wound. Not done: the wound also closes on magical healing, and undead and constructs
  are spared; the SDK has no healing trigger and creatures carry no type, so the GM
  ends it (``end_effect``) then.
- ``deadly-leap`` (action, the ``deadly_leap`` command; ``min_jump``, ``abilities``,
  ``dc``, ``damage``): the bulette jumps (at least ``min_jump`` feet of path distance, at
  most its standing long jump, ``zonekeep_jump_distance`` as the ``leap`` trait gives it,
  paid from its movement) into a zone with room for it and lands on the ``creatures``
  it names there (one to four: its Large space). Each saves with the better of the
  ``abilities`` (its Strength and Dexterity saves) (the creature's choice, taken for it): on a failure it is
  knocked prone and takes each ``damage`` (3d6+4 bludgeoning and 3d6+4 slashing, rolled
  once for all); on a success half, and it is pushed 5 ft out of the bulette's space,
  which keeps it in the zone (no event). Not done: a creature with no unoccupied space
  to be pushed to falls prone instead (a zone always has one here).
- ``transparent`` (trait, ``dc``): a creature the GM placed ``hidden`` (the gelatinous
  cube: players and spectators do not see it) stays hidden until it moves into another
  zone on its own or attacks (revealed then: an ``override_applied`` of ``hidden`` to
  false, ``by`` itself), or until a creature spots it: the ``spot`` command (an action,
  the Search action), a Wisdom (Perception) check against ``dc`` by a creature that is
  not blinded and has a path to its zone; on a success it is revealed (``by`` the
  spotter). Not done: a creature walking into it unaware is surprised (the GM's).
- ``adhesive`` (trait, ``attack``, ``escape_dc``): while the mimic is in object form (the
  ``object-form`` condition, which the GM gives and takes away: its Shapechanger stays
  the GM's), a creature its ``attack`` (the pseudopod) hits, Huge or smaller, sticks to
  it: ``grappled`` (source ``adhesive:<mimic>``). It gets free with the ``unstick``
  command (an action): an Athletics or Acrobatics check (its better) with disadvantage
  against ``escape_dc``. Not done: objects and creatures that touch it otherwise stick
  too (the GM grapples them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from zonekeep.sdk import (
    ABILITIES,
    PRONE,
    SKILLS,
    Action,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionSpec,
    Creature,
    Damaged,
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
    change_zone,
    check_bonus,
    hookimpl,
    movement_left,
    path_distance,
    saving_throw,
    spend_use,
    zone_room,
)

__all__ = [
    "gazes_attack_damage",
    "gazes_attack_made",
    "gazes_before_attack",
    "gazes_commands",
    "gazes_condition_removed",
    "gazes_conditions",
    "gazes_features",
    "gazes_roll_modifiers",
    "gazes_turn_end",
    "gazes_turn_start",
    "gazes_zone_entered",
]


#: The condition of a creature bleeding from a bearded devil's glaive.
INFERNAL_WOUND: Final = "infernal-wound"
#: The prefix of an infernal wound's source, followed by the wounding creature's id.
WOUND: Final = "wound:"
#: The condition of a mimic in the form of an object (given by the GM).
OBJECT_FORM: Final = "object-form"
#: The prefix of the source of a creature stuck to an adhesive mimic.
STUCK: Final = "adhesive:"
#: The condition of a duergar grown by its Enlarge.
ENLARGED: Final = "enlarged"
#: The prefix of the ``enlarged`` effect's source, followed by the creature's id.
GROWN: Final = "enlarge:"
#: The plugin whose encounter setting ``sunlight`` names the sunlit zones.
PLUGIN: Final = "zonekeep.srd"

#: The prefix of the source of the restraint of a creature turning to stone.
TURNING: Final = "petrify:"
#: The prefix of the source of a petrification (a creature turned to stone).
STONE: Final = "stone:"

PETRIFY_SCHEMA: Final = {
    "type": "object",
    "required": ["ability", "dc"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 14_400},
    },
    "additionalProperties": False,
}
GAZE_SCHEMA: Final = {
    "type": "object",
    "required": ["effect", "within", "ability", "dc"],
    "properties": {
        "effect": {"enum": ["petrify"]},
        "within": {"type": "integer", "minimum": 5, "maximum": 300},
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 14_400},
    },
    "additionalProperties": False,
}
SPIKES_SCHEMA: Final = {
    "type": "object",
    "required": ["attack"],
    "properties": {"attack": {"type": "string", "minLength": 1}},
    "additionalProperties": False,
}
VAMPIRE_SCHEMA: Final = {
    "type": "object",
    "required": ["sunlight_damage"],
    "properties": {"sunlight_damage": {"type": "integer", "minimum": 1, "maximum": 100}},
    "additionalProperties": False,
}

WOUND_SCHEMA: Final = {
    "type": "object",
    "required": ["ability", "dc", "damage", "check_dc"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "damage": {"type": "string", "format": "dice"},
        "check_dc": {"type": "integer", "minimum": 1, "maximum": 30},
    },
    "additionalProperties": False,
}
LEAP_DAMAGE: Final = {
    "type": "object",
    "required": ["damage", "damage_type"],
    "properties": {
        "damage": {"type": "string", "format": "dice"},
        "damage_type": {"type": "string", "minLength": 1},
    },
    "additionalProperties": False,
}
DEADLY_LEAP_SCHEMA: Final = {
    "type": "object",
    "required": ["min_jump", "abilities", "dc", "damage"],
    "properties": {
        "min_jump": {"type": "integer", "minimum": 5, "maximum": 120},
        "abilities": {"type": "array", "items": {"enum": list(ABILITIES)}, "minItems": 1},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "damage": {"type": "array", "items": LEAP_DAMAGE, "minItems": 1, "maxItems": 4},
    },
    "additionalProperties": False,
}
DC_SCHEMA: Final = {
    "type": "object",
    "required": ["dc"],
    "properties": {"dc": {"type": "integer", "minimum": 1, "maximum": 30}},
    "additionalProperties": False,
}
ADHESIVE_SCHEMA: Final = {
    "type": "object",
    "required": ["attack", "escape_dc"],
    "properties": {
        "attack": {"type": "string", "minLength": 1},
        "escape_dc": {"type": "integer", "minimum": 1, "maximum": 30},
    },
    "additionalProperties": False,
}
ENLARGE_SCHEMA: Final = {
    "type": "object",
    "required": ["rounds", "size", "attacks"],
    "properties": {
        "rounds": {"type": "integer", "minimum": 1, "maximum": 14_400},
        "size": {"enum": ["small", "medium", "large", "huge", "gargantuan"]},
        "attacks": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            "maxItems": 10,
        },
    },
    "additionalProperties": False,
}


def _enlarge_check(params: Any, attack_names: Any) -> Iterable[str]:
    for name in params.get("attacks") or ():
        if name not in attack_names:
            yield f"enlarge names the attack {name!r}, which the creature lacks"


def _spikes_check(params: Any, attack_names: Any) -> Iterable[str]:
    if params.get("attack") not in attack_names:
        yield f"tail-spike-regrowth names the attack {params.get('attack')!r}, which it lacks"


@hookimpl(specname="zonekeep_features")
def gazes_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "petrify",
            "on_hit",
            PETRIFY_SCHEMA,
            doc="The creature hit saves or is restrained as it turns to stone; at the end of "
            "its next turn it saves again: free on a success, petrified (for the rounds, if "
            "given) on a failure.",
        ),
        FeatureSpec(
            "gaze",
            "trait",
            GAZE_SCHEMA,
            doc="A creature starting its turn within range that sees the gazer (and is seen) "
            "saves or begins to turn to stone (as petrify), saving again at the end of that "
            "turn. Averting the eyes is the GM's.",
        ),
        FeatureSpec(
            "tail-spike-regrowth",
            "trait",
            SPIKES_SCHEMA,
            doc="Each attack named spends one of its uses (its spikes) before the roll; with "
            "none left it is refused; a long rest grows them back.",
            check=_spikes_check,
        ),
        FeatureSpec(
            "vampire-weaknesses",
            "trait",
            VAMPIRE_SCHEMA,
            doc="In a sunlit zone (the encounter setting sunlight): the radiant damage given "
            "at the start of its turn, and disadvantage on its attack rolls and ability "
            "checks. Thresholds, running water and stakes are the GM's.",
        ),
        FeatureSpec(
            "infernal-wound",
            "on_hit",
            WOUND_SCHEMA,
            doc="The creature hit saves or is wounded (infernal-wound): it loses the damage "
            "in hit points at the start of each of its turns, once more per later hit; the "
            "stanch command (an action, a Wisdom (Medicine) check against check_dc) closes "
            "it. Magical healing closing it, and sparing undead and constructs, are the "
            "GM's.",
        ),
        FeatureSpec(
            "deadly-leap",
            "action",
            DEADLY_LEAP_SCHEMA,
            doc="The deadly_leap command: a jump of at least min_jump feet (its movement, "
            "at most its long jump) into a zone, landing on one to four creatures there: "
            "each saves with the better of the abilities against the dc or is knocked "
            "prone and takes the damage, half on a success.",
        ),
        FeatureSpec(
            "transparent",
            "trait",
            DC_SCHEMA,
            doc="Placed hidden by the GM, it stays hidden until it enters a zone on its own "
            "or attacks, or a creature spots it (the spot command: a Wisdom (Perception) "
            "check against the dc). Surprising a creature that walks into it is the GM's.",
        ),
        FeatureSpec(
            "adhesive",
            "trait",
            ADHESIVE_SCHEMA,
            doc="In object form (the object-form condition, the GM's), a Huge or smaller "
            "creature its attack hits is grappled; the unstick command (an action, "
            "Athletics or Acrobatics with disadvantage against the escape_dc) frees it.",
        ),
        FeatureSpec(
            "enlarge",
            "action",
            ENLARGE_SCHEMA,
            doc="The enlarge command: for the rounds, enlarged and of the size given (its "
            "own size back after); its attacks named roll twice their damage dice, and its "
            "Strength checks and saves have advantage.",
            check=_enlarge_check,
        ),
    )


def _trait(creature: Creature, feature: str) -> Trait | None:
    for trait in creature.traits:
        if trait.id in (feature, f"zonekeep.srd.{feature}") and trait.gm is None:
            return trait
    return None


def _gaze(creature: Creature) -> dict[str, Any] | None:
    for trait in creature.traits:
        if trait.id in ("gaze", "zonekeep.srd.gaze") and trait.gm is None:
            return dict(trait.params)
    return None


def _stone_effects(state: EncounterState, creature_id: str, by: str) -> list[str]:
    return [
        e.id
        for e in state.condition_effects.values()
        if e.creature == creature_id and e.source in (f"{TURNING}{by}", f"{STONE}{by}")
    ]


def _begin_petrify(
    ctx: RuleContext, by: Creature, target: Creature, params: dict[str, Any], source: str
) -> None:
    now = ctx.state.creatures[target.id]
    if now.out_of_fight or _stone_effects(ctx.state, now.id, by.id):
        return
    if saving_throw(
        ctx,
        now,
        str(params["ability"]),
        int(params["dc"]),
        source,
        against=("restrained", "petrified"),
        magical=True,
    ):
        return
    apply_timed_condition(ctx, now.id, "restrained", source=f"{TURNING}{by.id}")


@hookimpl(specname="zonekeep_attack_made")
def gazes_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if attacker.hidden and attacker.traits and _trait(attacker, "transparent") is not None:
        ctx.emit(OverrideApplied(attacker.id, attacker.id, "hidden", False))
    if result.hit and attacker.traits:
        _adhere(ctx, attacker, target, attack)
    if not result.hit or not attack.on_hit:
        return
    for rider in attack.on_hit:
        if rider.gm is None and rider.id == "petrify":
            _begin_petrify(ctx, attacker, target, rider.params, f"{attacker.name}'s {attack.name}")
        elif rider.gm is None and rider.id == "infernal-wound":
            _wound(ctx, attacker, target, attack, rider.params)


def _sees(ctx: RuleContext, a: Creature, b: Creature, within: int) -> bool:
    if a.zone is None or b.zone is None or a.out_of_fight or b.out_of_fight:
        return False
    if "blinded" in a.conditions or "blinded" in b.conditions:
        return False
    distance = path_distance(ctx.state.arena, a.zone, b.zone)
    return distance is not None and distance <= within


@hookimpl(specname="zonekeep_turn_start")
def gazes_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if creature.conditions and ctx.resolve("condition", INFERNAL_WOUND) in creature.conditions:
        _bleed(ctx, creature)
    if creature.traits:
        vampire = _trait(creature, "vampire-weaknesses")
        if vampire is not None and _in_sunlight(ctx, creature) and not creature.out_of_fight:
            apply_damage(
                ctx,
                creature,
                int(vampire.params["sunlight_damage"]),
                damage_type="radiant",
                source="sunlight",
            )
    for gazer in list(ctx.state.creatures.values()):
        if gazer.id == creature.id or not gazer.traits:
            continue
        params = _gaze(gazer)
        if params is None or params.get("effect") != "petrify":
            continue
        if "incapacitated" in gazer.conditions or any(
            c in gazer.conditions for c in ("paralyzed", "petrified", "stunned", "unconscious")
        ):
            continue
        now = ctx.state.creatures[creature.id]
        if not _sees(ctx, now, gazer, int(params["within"])):
            continue
        name = next((t.name for t in gazer.traits if t.id in ("gaze", "zonekeep.srd.gaze")), "")
        _begin_petrify(ctx, gazer, now, params, f"{gazer.name}'s {name}")


def _petrify_params(by: Creature | None) -> dict[str, Any] | None:
    if by is None:
        return None
    for attack in by.attacks:
        for rider in attack.on_hit:
            if rider.id == "petrify" and rider.gm is None:
                return dict(rider.params)
    return _gaze(by)


@hookimpl(specname="zonekeep_turn_end")
def gazes_turn_end(ctx: RuleContext, creature: Creature) -> None:
    turning = [
        e
        for e in ctx.state.condition_effects.values()
        if e.creature == creature.id and e.source.startswith(TURNING)
    ]
    for effect in turning:
        by_id = effect.source.removeprefix(TURNING)
        by = ctx.state.creatures.get(by_id)
        params = _petrify_params(by)
        if params is None:
            continue
        now = ctx.state.creatures[creature.id]
        source = f"{by.name if by else by_id}: turning to stone"
        saved = saving_throw(
            ctx,
            now,
            str(params["ability"]),
            int(params["dc"]),
            source,
            against=("petrified",),
            magical=True,
        )
        ctx.emit(
            ConditionEffectEnded(
                effect.id,
                creature.id,
                effect.condition,
                "it resisted the petrification" if saved else "turned to stone",
            )
        )
        if not saved:
            rounds = params.get("rounds")
            apply_timed_condition(
                ctx,
                creature.id,
                "petrified",
                rounds=int(rounds) if rounds else None,
                source=f"{STONE}{by_id}",
            )


# -- tail spikes -------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_before_attack")
def gazes_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if not attacker.traits:
        return
    spikes = _trait(attacker, "tail-spike-regrowth")
    if spikes is not None and spikes.params.get("attack") == attack.name:
        spend_use(ctx, attacker, spikes)


# -- sunlight ----------------------------------------------------------------------------------


def _in_sunlight(ctx: RuleContext, creature: Creature) -> bool:
    if creature.zone is None:
        return False
    try:
        sunlit = ctx.setting(PLUGIN, "sunlight")
    except KeyError:  # pragma: no cover - zonekeep.srd declares it
        return False
    return "*" in sunlit or creature.zone in sunlit


@hookimpl(specname="zonekeep_roll_modifiers")
def gazes_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    me = ctx.state.creatures.get(roll.actor)
    if me is None:
        return None
    if (
        roll.kind in ("check", "save")
        and roll.ability == "str"
        and me.conditions
        and ctx.resolve("condition", ENLARGED) in me.conditions
    ):
        return (RollModifier("advantage", "enlarged"),)
    if roll.kind not in ("attack", "check") or not me.traits:
        return None
    vampire = _trait(me, "vampire-weaknesses")
    if vampire is None or not _in_sunlight(ctx, me):
        return None
    return (RollModifier("disadvantage", f"{vampire.name.lower()}: in sunlight"),)


# -- enlarge -----------------------------------------------------------------------------------


def _action(creature: Creature, feature: str) -> Action | None:
    for action in creature.actions:
        if action.id in (feature, f"zonekeep.srd.{feature}") and action.gm is None:
            return action
    return None


def _can_enlarge(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "enlarge") is None:
        return ("invalid_params", f"{me.name} cannot enlarge itself.")
    return None


def _enlarge(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "enlarge")
    assert action is not None  # (requires)
    enlarged = ctx.resolve("condition", ENLARGED)
    if enlarged in me.conditions:
        ctx.refuse("invalid_params", f"{me.name} is enlarged already.")
    spend_use(ctx, me, action)
    grown = apply_timed_condition(
        ctx, me.id, enlarged, rounds=int(action.params["rounds"]), source=f"{GROWN}{me.id}"
    )
    if grown is not None:
        ctx.emit(OverrideApplied(me.id, me.id, "size", str(action.params["size"])))


@hookimpl(specname="zonekeep_condition_removed")
def gazes_condition_removed(
    ctx: RuleContext, creature: Creature, condition: str, reason: str, expired: bool
) -> None:
    if condition != ctx.resolve("condition", ENLARGED):
        return
    action = _action(creature, "enlarge")
    if action is None:
        return
    # Enlarge grows it one size: back to the size below the one it grew to.
    grown = Size.parse(str(action.params["size"]))
    ctx.emit(OverrideApplied(creature.id, creature.id, "size", Size(int(grown) - 1).label))


_DICE = re.compile(r"^(\d*)d(\d+)")


def _times(damage: str, times: int) -> str:
    """``damage`` with ``times`` as many dice (``1d8+2``, 2: ``2d8+2``)."""
    found = _DICE.match(damage)
    if found is None:
        return damage
    count = int(found.group(1) or 1)
    return f"{count * times}d{found.group(2)}{damage[found.end() :]}"


@hookimpl(specname="zonekeep_attack_damage")
def gazes_attack_damage(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> str | None:
    if not attacker.conditions or ctx.resolve("condition", ENLARGED) not in attacker.conditions:
        return None
    action = _action(attacker, "enlarge")
    if action is None or attack.name not in action.params.get("attacks", ()):
        return None
    return _times(attack.damage, 2)


@hookimpl(specname="zonekeep_commands")
def gazes_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "stanch",
            _stanch,
            "Action: stanch the infernal wounds of a creature in your zone (or your own): a "
            "Wisdom (Medicine) check.",
            {
                "creature": Param("creature", True, "the acting creature"),
                "target": Param("creature", True, "the wounded creature"),
            },
            costs=("action",),
        ),
        CommandSpec(
            "deadly_leap",
            _deadly_leap,
            "Action: Deadly Leap: jump into a zone (at least 15 ft, your movement) and land "
            "on creatures there: they save or are knocked prone and take heavy damage.",
            {
                "creature": Param("creature", True, "the acting creature"),
                "zone": Param("zone", True, "where it lands"),
                "creatures": Param("creatures", True, "the creatures it lands on (1 to 4)"),
            },
            costs=("action",),
            requires=_can_leap,
        ),
        CommandSpec(
            "spot",
            _spot,
            "Action: search for a transparent creature you suspect (a Wisdom (Perception) "
            "check against its DC): spotted, it is revealed.",
            {
                "creature": Param("creature", True, "the acting creature"),
                "target": Param("creature", True, "the hidden creature"),
            },
            costs=("action",),
        ),
        CommandSpec(
            "unstick",
            _unstick,
            "Action: pull free of the adhesive creature you are stuck to (Athletics or "
            "Acrobatics, your better, with disadvantage, against its escape DC).",
            {"creature": Param("creature", True, "the stuck creature")},
            costs=("action",),
        ),
        CommandSpec(
            "enlarge",
            _enlarge,
            "Action: Enlarge: grow for a minute (Large; your Strength weapons roll twice "
            "their damage dice; advantage on Strength checks and saves).",
            {"creature": Param("creature", True, "the acting creature")},
            costs=("action",),
            requires=_can_enlarge,
        ),
    )


@hookimpl(specname="zonekeep_conditions")
def gazes_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            INFERNAL_WOUND,
            "An infernal wound: it loses hit points at the start of each of its turns until "
            "stanched (the stanch command) or magically healed.",
        ),
        ConditionSpec(
            OBJECT_FORM,
            "In the form of an object (a mimic): what touches it sticks (its Adhesive).",
        ),
        ConditionSpec(
            ENLARGED,
            "Grown by its Enlarge: larger, twice the damage dice of its Strength weapons, "
            "advantage on Strength checks and saves.",
        ),
    )


# -- infernal wound ----------------------------------------------------------------------------


def _wounds(state: EncounterState, creature_id: str) -> list[tuple[str, str]]:
    """The infernal wounds on ``creature_id``: (effect id, the wounding creature's id)."""
    return [
        (e.id, e.source.removeprefix(WOUND))
        for e in state.condition_effects.values()
        if e.creature == creature_id and e.source.startswith(WOUND)
    ]


def _wound(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, params: dict[str, Any]
) -> None:
    now = ctx.state.creatures[target.id]
    if now.out_of_fight:
        return
    wound = ctx.resolve("condition", INFERNAL_WOUND)
    if not any(by == attacker.id for _e, by in _wounds(ctx.state, now.id)):
        name = f"{attacker.name}'s {attack.name} (infernal wound)"
        if saving_throw(ctx, now, str(params["ability"]), int(params["dc"]), name):
            return
    apply_timed_condition(ctx, now.id, wound, source=f"{WOUND}{attacker.id}")


def _wound_params(ctx: RuleContext, by: str) -> dict[str, Any]:
    source = ctx.state.creatures.get(by)
    if source is not None:
        for attack in source.attacks:
            for rider in attack.on_hit:
                if rider.id == "infernal-wound":
                    return dict(rider.params)
    return {"damage": "1d10", "check_dc": 12}


def _bleed(ctx: RuleContext, creature: Creature) -> None:
    wounds = _wounds(ctx.state, creature.id)
    if not wounds or creature.out_of_fight:
        return
    by = wounds[0][1]
    rolled = ctx.roll(_times(str(_wound_params(ctx, by)["damage"]), len(wounds)))
    apply_damage(ctx, ctx.state.creatures[creature.id], rolled.total, roll=rolled, source=by)


def _stanch(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    wounds = _wounds(ctx.state, target.id)
    if not wounds:
        ctx.refuse("invalid_target", f"{target.name} has no infernal wound.")
    if target.zone != me.zone:
        ctx.refuse("out_of_range", f"{target.name} is not in {me.name}'s zone.")
    dc = int(_wound_params(ctx, wounds[0][1])["check_dc"])
    check = ability_check(
        ctx, me, "wis", "medicine", dc, source=f"stanching {target.name}'s infernal wound"
    )
    if not check.success:
        return
    wound = ctx.resolve("condition", INFERNAL_WOUND)
    for effect, _by in wounds:
        ctx.emit(ConditionEffectEnded(effect, target.id, wound, "stanched"))


# -- deadly leap -------------------------------------------------------------------------------


def _can_leap(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "deadly-leap") is None:
        return ("invalid_params", f"{me.name} has no Deadly Leap.")
    return None


def _deadly_leap(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "deadly-leap")
    assert action is not None  # (requires)
    p = action.params
    zone = cmd.params["zone"]
    s = ctx.state
    if not s.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {zone!r}.")
    if me.zone is None or zone == me.zone:
        ctx.refuse("invalid_params", f"{me.name} must leap out of its zone into another one.")
    distance = path_distance(s.arena, me.zone, zone)
    if distance is None:
        ctx.refuse("no_clear_path", f"{me.name} has no way to {zone}.")
    answers = ctx.hook.zonekeep_jump_distance(ctx=ctx, creature=me, running=False)
    reach = max([0, *(a for a in answers if isinstance(a, int) and a >= 0)])
    if distance < int(p["min_jump"]) or distance > reach:
        ctx.refuse(
            "out_of_range",
            f"{zone} is {distance} ft away; {action.name} needs a jump of "
            f"{p['min_jump']} to {reach} ft.",
        )
    if distance > movement_left(s, me):
        ctx.refuse(
            "not_enough_movement", f"{me.name} has {movement_left(s, me)} ft of movement left."
        )
    chosen = [ctx.creature(c, role="target") for c in cmd.params["creatures"] or ()]
    if not 1 <= len(chosen) <= 4 or len({c.id for c in chosen}) != len(chosen):
        ctx.refuse("invalid_params", f"{action.name} lands on one to four creatures.")
    for other in chosen:
        if other.id == me.id or other.out_of_fight or other.zone != zone:
            ctx.refuse("invalid_target", f"{other.name} is not a creature in {zone}.")
    full = zone_room(ctx, me, zone)
    if full:
        ctx.refuse(*full)
    change_zone(ctx, me, zone, cost=distance, by=action.name)
    rolls = [(ctx.roll(str(d["damage"])), str(d["damage_type"])) for d in p["damage"]]
    for other in chosen:
        now = ctx.state.creatures[other.id]
        ability = max(p["abilities"], key=lambda a: now.saves.get(a, 0))
        saved = saving_throw(
            ctx, now, str(ability), int(p["dc"]), f"{me.name}'s {action.name}", against=(PRONE,)
        )
        for rolled, kind in rolls:
            target = ctx.state.creatures[other.id]
            if target.out_of_fight:
                break
            amount = rolled.total // 2 if saved else rolled.total
            apply_damage(
                ctx, target, amount, damage_type=kind, roll=rolled, source=me.id, attacker=me.id
            )
        now = ctx.state.creatures[other.id]
        if not saved and not now.out_of_fight and PRONE not in now.conditions:
            apply_condition(ctx, now.id, PRONE, action.name)


# -- transparent -------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_zone_entered")
def gazes_zone_entered(ctx: RuleContext, creature: Creature, from_zone: str, forced: bool) -> None:
    if creature.hidden and not forced and _trait(creature, "transparent") is not None:
        ctx.emit(OverrideApplied(creature.id, creature.id, "hidden", False))


def _spot(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    trait = _trait(target, "transparent")
    if trait is None or not target.hidden:
        ctx.refuse("invalid_target", f"{target.name} is no hidden transparent creature.")
    if "blinded" in me.conditions:
        ctx.refuse("invalid_target", f"{me.name} is blinded.")
    if me.zone is None or target.zone is None:
        ctx.refuse("invalid_target", f"{target.name} is not in the arena.")
    if path_distance(ctx.state.arena, me.zone, target.zone) is None:
        ctx.refuse("no_line_of_sight", f"{me.name} cannot see {target.zone}.")
    check = ability_check(
        ctx, me, "wis", "perception", int(trait.params["dc"]), source=f"spotting {target.name}"
    )
    if check.success:
        ctx.emit(OverrideApplied(me.id, target.id, "hidden", False))


# -- adhesive ----------------------------------------------------------------------------------


def _adhere(ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack) -> None:
    trait = _trait(attacker, "adhesive")
    if trait is None or trait.params.get("attack") != attack.name:
        return
    if ctx.resolve("condition", OBJECT_FORM) not in attacker.conditions:
        return
    now = ctx.state.creatures[target.id]
    if now.out_of_fight or now.size > Size.HUGE:
        return
    if any(
        e.creature == now.id and e.source == f"{STUCK}{attacker.id}"
        for e in ctx.state.condition_effects.values()
    ):
        return
    apply_timed_condition(ctx, now.id, "grappled", source=f"{STUCK}{attacker.id}")


def _unstick(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    stuck = [
        e
        for e in ctx.state.condition_effects.values()
        if e.creature == me.id and e.source.startswith(STUCK)
    ]
    if not stuck:
        ctx.refuse("invalid_target", f"{me.name} is not stuck to an adhesive creature.")
    effect = stuck[0]
    holder = ctx.state.creatures.get(effect.source.removeprefix(STUCK))
    trait = _trait(holder, "adhesive") if holder is not None else None
    dc = int(trait.params["escape_dc"]) if trait is not None else 10
    skill = max(("athletics", "acrobatics"), key=lambda k: check_bonus(me, SKILLS[k], k))
    check = ability_check(
        ctx,
        me,
        SKILLS[skill],
        skill,
        dc,
        source="unstick",
        extra=(RollModifier("disadvantage", "adhesive"),),
    )
    if check.success:
        ctx.emit(ConditionEffectEnded(effect.id, me.id, effect.condition, "pulled free"))
