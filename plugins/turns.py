"""The turn economy: ending a turn, the standard actions, interactions, readied attacks.

A turn has one action, one bonus action and one interaction; a second object
interaction costs the action ("utilize"). Communication is the turn's interaction
and is brief: at most fifteen words. A creature out of the fight has its turns
skipped.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DODGING,
    PRONE,
    Command,
    CommandSpec,
    Communicated,
    ConditionRemoved,
    Creature,
    Dashed,
    Disengaged,
    EncounterState,
    Interacted,
    Param,
    Readied,
    ReadiedCleared,
    RuleContext,
    Size,
    apply_condition,
    attack_of,
    end_turn,
    hookimpl,
    make_attack,
)

#: Words a creature can say with its interaction (docs/rules.md, 11; ``encounter.txt:64.1``).
MAX_WORDS = 15


def _end_turn(ctx: RuleContext, cmd: Command) -> None:
    end_turn(ctx)


def _dash(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(Dashed(cmd.params["creature"]))


def _disengage(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(Disengaged(cmd.params["creature"]))


def _dodge(ctx: RuleContext, cmd: Command) -> None:
    apply_condition(ctx, cmd.params["creature"], DODGING, "dodge")


def _interact(ctx: RuleContext, cmd: Command) -> None:
    thing = cmd.params["object"].strip()
    if not thing:
        ctx.refuse("invalid_params", "Say which object is interacted with.")
    ctx.emit(Interacted(cmd.params["creature"], thing, ctx.paid))


def _communicate(ctx: RuleContext, cmd: Command) -> None:
    text = cmd.params["text"].strip()
    words = len(text.split())
    if not words:
        ctx.refuse("invalid_params", "Say something: the message is empty.")
    if words > MAX_WORDS:
        ctx.refuse(
            "invalid_params",
            f"A brief communication is at most {MAX_WORDS} words ({words} given); "
            "longer speech needs the Influence action.",
        )
    ctx.emit(Communicated(cmd.params["creature"], text))


def _ready(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    attack = attack_of(ctx, me, cmd.params.get("attack"))
    if target.id == me.id:
        ctx.refuse("invalid_target", "A creature cannot ready an attack against itself.")
    ctx.emit(Readied(me.id, target.id, attack.name, cmd.params.get("trigger", "")))


def _has_readied(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if me.id in state.readied:
        return None
    return ("nothing_readied", f"{me.name} has no readied attack.")


def _release(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    readied = ctx.state.readied[me.id]
    ctx.emit(ReadiedCleared(me.id, "released"))
    make_attack(ctx, me, ctx.creature(readied.target), readied.attack, reaction=True)


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if DODGING in creature.conditions:
        ctx.emit(ConditionRemoved(creature.id, DODGING, "its turn started"))
    if creature.id in ctx.state.readied:
        ctx.emit(ReadiedCleared(creature.id, "expired at the start of its turn"))


@hookimpl
def zonekeep_skip_turn(ctx: RuleContext, creature: Creature) -> str | None:
    """A creature out of the fight (defeated, surrendered, escaped) does not take turns."""
    return "out of the fight" if creature.out_of_fight else None


def ends_prone(creature: Creature, other: Creature) -> bool:
    """Ending a turn in another's space knocks prone unless Tiny or a size larger."""
    return not (creature.size == Size.TINY or creature.size > other.size)


@hookimpl
def zonekeep_turn_end(ctx: RuleContext, creature: Creature) -> None:
    other_id = creature.sharing_with
    if other_id is None or other_id not in ctx.state.creatures or PRONE in creature.conditions:
        return
    if ends_prone(creature, ctx.state.creatures[other_id]):
        apply_condition(ctx, creature.id, PRONE, "ended its turn in an occupied space")


_CREATURE = {"creature": Param("creature", True, "the acting creature")}


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec("end_turn", _end_turn, "End this turn.", _CREATURE, needs_capable=False),
        CommandSpec(
            "dash",
            _dash,
            "Action: gain extra movement equal to your speed this turn.",
            _CREATURE,
            costs=("action",),
        ),
        CommandSpec(
            "disengage",
            _disengage,
            "Action: your movement provokes no opportunity attacks this turn.",
            _CREATURE,
            costs=("action",),
        ),
        CommandSpec(
            "dodge",
            _dodge,
            "Action: attacks against you have disadvantage until your next turn.",
            _CREATURE,
            costs=("action",),
        ),
        CommandSpec(
            "interact",
            _interact,
            "Interact with one object; a second object costs your action (utilize).",
            {**_CREATURE, "object": Param("string", True, "what is interacted with")},
            costs=("interaction", "action"),
        ),
        CommandSpec(
            "communicate",
            _communicate,
            "Interaction: say up to fifteen words.",
            {**_CREATURE, "text": Param("string", True, "what is said")},
            costs=("interaction",),
        ),
        CommandSpec(
            "ready",
            _ready,
            "Action: ready an attack against a target, released later with your reaction.",
            {
                **_CREATURE,
                "target": Param("creature", True, "who the attack is readied against"),
                "attack": Param("string", False, "which attack (default: the first)"),
                "trigger": Param("string", False, "the circumstance that releases it"),
            },
            costs=("action",),
        ),
        CommandSpec(
            "release_readied",
            _release,
            "Reaction: make the readied attack now.",
            _CREATURE,
            costs=("reaction",),
            on_turn=None,  # a reaction is taken whenever its trigger happens, own turn included
            requires=_has_readied,
        ),
    )
