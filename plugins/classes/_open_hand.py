"""The monk's Open Hand Technique (SRD 5.1, Way of the Open Hand 3), with the public SDK
only.

- ``open-hand-technique``: each hit of a Flurry of Blows attack (the two attacks the
  ``flurry_of_blows`` command grants, counted in the monk's ``flurry-attacks``
  resource) leaves a technique to use on the creature hit: the monk's resource
  ``open-hand-<target id>`` counts them, until the start of the next turn. The
  ``open_hand_technique`` command (free, on the monk's turn) spends one, with
  ``choice``: ``prone`` (a Dexterity save against the ki DC or prone), ``push`` (a
  Strength save or pushed 15 feet away: forced movement to ``zone``, a linked zone, or
  within its zone without one) or ``no_reactions`` (no save: the ``no-reactions``
  condition until the end of the monk's next turn; its reaction is spent now and again
  at the start of its turns while it lasts).
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    PRONE,
    ActionTaken,
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
    ResourceRestored,
    ResourceSpent,
    RuleContext,
    apply_condition,
    apply_timed_condition,
    force_move,
    hookimpl,
    saving_throw,
)

from ._common import feature_of

__all__ = [
    "FLURRY_ATTACKS",
    "NO_REACTIONS",
    "mark_flurry",
    "open_hand_attack_made",
    "open_hand_commands",
    "open_hand_conditions",
    "open_hand_features",
    "open_hand_turn_start",
]

#: The Flurry of Blows attacks a monk with the technique has left this turn.
FLURRY_ATTACKS = "flurry-attacks"
#: The condition of a creature that can take no reactions (Open Hand Technique).
NO_REACTIONS = "no-reactions"
_CHOICES = ("prone", "push", "no_reactions")


def _pending_key(target_id: str) -> str:
    return f"open-hand-{target_id}"


def mark_flurry(ctx: RuleContext, me: Creature, attacks: int) -> None:
    """A Flurry of Blows granted ``attacks``: count them for the technique."""
    if feature_of(me, "open-hand-technique") is not None:
        ctx.emit(ResourceRestored(me.id, FLURRY_ATTACKS, attacks, "flurry-of-blows"))


@hookimpl(specname="zonekeep_features")
def open_hand_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "open-hand-technique",
            "trait",
            {"type": "object", "additionalProperties": True},
            doc="Each Flurry of Blows hit: the open_hand_technique command, a Dexterity "
            "save or prone, a Strength save or pushed 15 ft, or no reactions until the "
            "end of the monk's next turn.",
        )
    ]


@hookimpl(specname="zonekeep_conditions")
def open_hand_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            NO_REACTIONS,
            "Open Hand Technique: it can take no reactions (until the end of the monk's "
            "next turn).",
            durations=("turn_end", "until_removed"),
        ),
    )


@hookimpl(specname="zonekeep_attack_made")
def open_hand_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    left = attacker.resources.get(FLURRY_ATTACKS, 0)
    if left <= 0 or result.reaction:
        return
    ctx.emit(ResourceSpent(attacker.id, FLURRY_ATTACKS, left - 1))
    now = ctx.state.creatures[target.id]
    if result.hit and not now.out_of_fight:
        key = _pending_key(target.id)
        count = ctx.state.creatures[attacker.id].resources.get(key, 0)
        ctx.emit(ResourceRestored(attacker.id, key, count + 1, "flurry hit"))


@hookimpl(specname="zonekeep_turn_start")
def open_hand_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A new turn: unused techniques and flurry counts lapse; a creature with no
    reactions starts its turn without one."""
    for other in list(ctx.state.creatures.values()):
        for key, value in list(other.resources.items()):
            if value and (key == FLURRY_ATTACKS or key.startswith("open-hand-")):
                ctx.emit(ResourceSpent(other.id, key, 0))
    if NO_REACTIONS in creature.conditions and ctx.state.has_reaction(creature.id):
        ctx.emit(ActionTaken(creature.id, "open-hand-technique", "reaction"))


def _has_technique(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if feature_of(me, "open-hand-technique") is None:
        return ("no_such_feature", f"{me.name} has no Open Hand Technique.")
    return None


def _technique(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    target = ctx.creature(p["target"], role="target")
    choice = p["choice"]
    if choice not in _CHOICES:
        ctx.refuse("invalid_params", f"choice is prone, push or no_reactions, not {choice!r}.")
    key = _pending_key(target.id)
    left = me.resources.get(key, 0)
    if left <= 0:
        ctx.refuse(
            "invalid_params",
            f"No Flurry of Blows hit of {me.name} on {target.name} this turn awaits a technique.",
        )
    zone = p.get("zone")
    if zone is not None and choice != "push":
        ctx.refuse("invalid_params", "zone is where a push lands: only with choice push.")
    if target.out_of_fight:
        ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
    dc = 8 + me.proficiency + me.abilities.get("wis", 0)
    ctx.emit(ResourceSpent(me.id, key, left - 1))
    if choice == "prone":
        if not saving_throw(ctx, target, "dex", dc, "open-hand-technique", against=(PRONE,)):
            apply_condition(ctx, target.id, PRONE, "open-hand-technique")
    elif choice == "push":
        failed = not saving_throw(ctx, target, "str", dc, "open-hand-technique")
        if failed and zone is not None:  # without a zone, pushed within its own
            now = ctx.state.creatures[target.id]
            force_move(ctx, ctx.state.creatures[me.id], now, zone=zone)
    else:
        apply_timed_condition(ctx, target.id, NO_REACTIONS, until="end", of=me.id, source=me.id)
        if ctx.state.has_reaction(target.id):
            ctx.emit(ActionTaken(target.id, "open-hand-technique", "reaction"))


@hookimpl(specname="zonekeep_commands")
def open_hand_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "open_hand_technique",
            _technique,
            "Open Hand Technique: on a creature a Flurry of Blows attack hit this turn, a "
            "Dexterity save or prone, a Strength save or pushed 15 ft, or no reactions.",
            {
                "creature": Param("creature", True, "the monk"),
                "target": Param("creature", True, "the creature the flurry hit"),
                "choice": Param("string", True, "prone, push or no_reactions"),
                "zone": Param("zone", False, "push: the linked zone it is pushed into"),
            },
            costs=("free",),
            requires=_has_technique,
        ),
    )
