"""Channel Divinity: the cleric's Turn Undead, Destroy Undead and Preserve Life, the
paladin's Turn the Unholy (SRD 5.1, levels 2 to 5), with the public SDK only. Each
spends one use of the creature's class resource ``channel-divinity`` (its sheet's count,
back on a short or long rest) and reaches the creatures within 30 feet: its own zone and
the zones whose sight path from it is 30 feet or less.

- ``turn_undead`` (an action, ``turn-undead``): each undead in reach (a creature whose
  ``type`` is ``undead``: a stat block's) makes a Wisdom save against the cleric's spell
  save DC; on a failure it is ``turned`` for 1 minute (10 rounds), until it takes
  damage. With ``destroy-undead`` (cleric 5), an undead of challenge rating 1/2 or lower
  (1 from 8th level, 2 from 11th, 3 from 14th, 4 from 17th) that fails is destroyed
  instead: ``defeated``.
- ``turn_the_unholy`` (an action, ``turn-the-unholy``): the same for fiends and undead,
  against the paladin's spell save DC.
- ``turned``: it can take no reactions (spent when turned and at the start of each of
  its turns); of the actions it uses only Dash, Dodge or escaping a grapple (its
  movement and free commands are its own). That it must move away from the turner is
  the GM's to keep (the zones' directions are the table's).
- ``preserve_life`` (an action, ``preserve-life``): ``heal``, ``{"<creature>": hit
  points}``, shares out at most five times the cleric level among creatures in reach,
  none of them undead or constructs, none raised above half its hit point maximum.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from zonekeep.sdk import (
    DEFEATED,
    DYING,
    STABLE,
    ActionTaken,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damaged,
    EncounterState,
    FeatureSpec,
    Healed,
    Param,
    Refusal,
    Requirement,
    ResourceSpent,
    RuleContext,
    apply_condition,
    apply_timed_condition,
    hookimpl,
    saving_throw,
    sight_path,
)

from ._common import class_level, feature_of

__all__ = [
    "CHANNEL_DIVINITY",
    "TURNED",
    "destroy_threshold",
    "divinity_action_refusal",
    "divinity_after_damage",
    "divinity_commands",
    "divinity_conditions",
    "divinity_features",
    "divinity_turn_start",
    "within",
]

#: The class resource Channel Divinity spends (the sheet's class resource id).
CHANNEL_DIVINITY: Final = "channel-divinity"
#: The condition of a creature turned by Turn Undead or Turn the Unholy.
TURNED: Final = "turned"
#: The source prefix of a ``turned`` effect: it ends when its creature takes damage.
_TURNED_SOURCE: Final = "classes.turned-by:"
#: What a turned creature may still do with its action (or its reaction: nothing).
_TURNED_ALLOWS: Final = frozenset({"dash", "dodge", "escape_grapple"})
#: Destroy Undead's challenge ratings by cleric level (SRD 5.1).
_DESTROY: Final = ((17, 4.0), (14, 3.0), (11, 2.0), (8, 1.0), (5, 0.5))
_REACH: Final = 30


def destroy_threshold(creature: Creature) -> float | None:
    """The highest challenge rating ``creature``'s Destroy Undead destroys, or None."""
    if feature_of(creature, "destroy-undead") is None:
        return None
    level = class_level(creature, "cleric") or 5
    return next((cr for at, cr in _DESTROY if level >= at), None)


def within(state: EncounterState, me: Creature, other: Creature, feet: int = _REACH) -> bool:
    """Whether ``other`` is within ``feet`` of ``me``: the same zone, or a sight path of
    zones at most that long."""
    arena = state.arena
    if me.zone is None or other.zone is None or not arena.has_zone(other.zone):
        return False
    if other.zone == me.zone:
        return True
    path = sight_path(arena, me.zone, other.zone)
    return path is not None and sum(arena.zone(z).size for z in path) <= feet


@hookimpl(specname="zonekeep_features")
def divinity_features() -> Iterable[FeatureSpec]:
    schema = {"type": "object", "additionalProperties": True}
    return [
        FeatureSpec(
            "turn-undead",
            "action",
            schema,
            doc="The turn_undead command: each undead within 30 ft saves (Wisdom) or is "
            "turned for a minute, until it takes damage.",
        ),
        FeatureSpec(
            "destroy-undead",
            "trait",
            schema,
            doc="An undead of challenge 1/2 or lower (by cleric level) that fails its save "
            "against Turn Undead is destroyed.",
        ),
        FeatureSpec(
            "turn-the-unholy",
            "action",
            schema,
            doc="The turn_the_unholy command: each fiend and undead within 30 ft saves "
            "(Wisdom) or is turned for a minute, until it takes damage.",
        ),
        FeatureSpec(
            "preserve-life",
            "action",
            schema,
            doc="The preserve_life command: five times the cleric level in hit points "
            "shared among creatures within 30 ft, none above half its maximum.",
        ),
    ]


@hookimpl(specname="zonekeep_conditions")
def divinity_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            TURNED,
            "Turned (Turn Undead, Turn the Unholy): no reactions; only Dash, Dodge or "
            "escaping a grapple with its action; it moves away from the turner (the GM "
            "keeps the direction); ends when it takes damage.",
            durations=("rounds", "until_removed"),
        ),
    )


def _requires(feature: str, name: str) -> Requirement:
    def check(state: EncounterState, me: Creature) -> tuple[str, str] | None:
        if feature_of(me, feature) is None:
            return ("no_such_feature", f"{me.name} has no {name}.")
        if me.resources.get(CHANNEL_DIVINITY, 0) < 1:
            return ("no_uses_left", f"{me.name} has no use of Channel Divinity left.")
        return None

    return check


def _spend(ctx: RuleContext, me: Creature) -> None:
    ctx.emit(ResourceSpent(me.id, CHANNEL_DIVINITY, me.resources[CHANNEL_DIVINITY] - 1))


def _turn(ctx: RuleContext, cmd: Command, kinds: tuple[str, ...], name: str) -> None:
    me = ctx.creature(cmd.params["creature"])
    _spend(ctx, me)
    dc = me.spell_dc
    destroys = destroy_threshold(me) if "undead" in kinds and name == "turn-undead" else None
    for other in list(ctx.state.creatures.values()):
        if other.id == me.id or other.out_of_fight or other.type not in kinds:
            continue
        if not within(ctx.state, me, other):
            continue
        if saving_throw(ctx, other, "wis", dc, name, magical=True, against=(TURNED,)):
            continue
        challenge = other.challenge
        if destroys is not None and challenge is not None and challenge <= destroys:
            apply_condition(ctx, other.id, DEFEATED, "destroy-undead")
            continue
        if apply_timed_condition(
            ctx, other.id, TURNED, rounds=10, source=f"{_TURNED_SOURCE}{me.id}"
        ) and ctx.state.has_reaction(other.id):
            ctx.emit(ActionTaken(other.id, name, "reaction"))


def _turn_undead(ctx: RuleContext, cmd: Command) -> None:
    _turn(ctx, cmd, ("undead",), "turn-undead")


def _turn_the_unholy(ctx: RuleContext, cmd: Command) -> None:
    _turn(ctx, cmd, ("fiend", "undead"), "turn-the-unholy")


def _preserve_life(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    shares = cmd.params["heal"]
    if not isinstance(shares, Mapping) or not shares:
        ctx.refuse("invalid_params", 'heal is an object: {"<creature>": <hit points>, ...}.')
    pool = 5 * (class_level(me, "cleric") or 1)
    total = 0
    planned: list[tuple[Creature, int]] = []
    for cid, amount in shares.items():
        target = ctx.creature(cid, role="target")
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
            ctx.refuse("invalid_params", f"heal.{target.id}: a whole number of hit points, 1+.")
        if target.out_of_fight:
            ctx.refuse("invalid_target", f"{target.name} is out of the fight.")
        if target.type in ("undead", "construct"):
            ctx.refuse(
                "invalid_target", f"Preserve Life has no effect on {target.name} ({target.type})."
            )
        if not within(ctx.state, me, target):
            ctx.refuse("out_of_range", f"{target.name} is more than 30 ft from {me.name}.")
        half = target.max_hp // 2
        if target.hp + amount > half:
            ctx.refuse(
                "invalid_params",
                f"Preserve Life raises {target.name} to half its maximum at most: "
                f"{max(0, half - target.hp)} hit points, not {amount}.",
            )
        total += amount
        planned.append((target, amount))
    if total > pool:
        ctx.refuse(
            "invalid_params", f"Preserve Life shares out {pool} hit points at most, not {total}."
        )
    _spend(ctx, me)
    for target, amount in planned:
        now = ctx.state.creatures[target.id]
        hp = now.hp + amount
        ctx.emit(Healed(now.id, amount, hp, me.id))
        for condition in (DYING, STABLE):
            if hp > 0 and condition in now.conditions:
                ctx.emit(ConditionRemoved(now.id, condition, "healed by Preserve Life"))


@hookimpl(specname="zonekeep_after_damage")
def divinity_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    if damage.amount <= 0 or TURNED not in creature.conditions:
        return
    for effect in list(ctx.state.condition_effects.values()):
        if effect.creature == creature.id and effect.source.startswith(_TURNED_SOURCE):
            ctx.emit(ConditionEffectEnded(effect.id, creature.id, effect.condition, "took damage"))


@hookimpl(specname="zonekeep_turn_start")
def divinity_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A turned creature starts its turn without its reaction."""
    if TURNED in creature.conditions and ctx.state.has_reaction(creature.id):
        ctx.emit(ActionTaken(creature.id, TURNED, "reaction"))


@hookimpl(specname="zonekeep_action_refusal")
def divinity_action_refusal(
    ctx: RuleContext, creature: Creature, spec: CommandSpec
) -> Refusal | None:
    if TURNED not in creature.conditions:
        return None  # the usual case
    if spec.id in _TURNED_ALLOWS or not {"action", "bonus", "reaction"} & set(spec.costs):
        return None
    return Refusal(
        "invalid_params",
        f"{creature.name} is turned: it can only Dash, Dodge or escape a grapple (and move).",
    )


@hookimpl(specname="zonekeep_commands")
def divinity_commands() -> Iterable[CommandSpec]:
    me = Param("creature", True, "the cleric or paladin")
    return (
        CommandSpec(
            "turn_undead",
            _turn_undead,
            "Action: Channel Divinity, Turn Undead: each undead within 30 ft saves "
            "(Wisdom) or is turned for a minute (destroyed, with Destroy Undead, at a low "
            "challenge rating).",
            {"creature": me},
            costs=("action",),
            requires=_requires("turn-undead", "Turn Undead"),
        ),
        CommandSpec(
            "turn_the_unholy",
            _turn_the_unholy,
            "Action: Channel Divinity, Turn the Unholy: each fiend and undead within 30 ft "
            "saves (Wisdom) or is turned for a minute.",
            {"creature": me},
            costs=("action",),
            requires=_requires("turn-the-unholy", "Turn the Unholy"),
        ),
        CommandSpec(
            "preserve_life",
            _preserve_life,
            "Action: Channel Divinity, Preserve Life: share out five times your cleric "
            "level in hit points among creatures within 30 ft, none above half its maximum.",
            {
                "creature": me,
                "heal": Param("object", True, 'the hit points each gets {"ally": 10}'),
            },
            costs=("action",),
            requires=_requires("preserve-life", "Preserve Life"),
        ),
    )
