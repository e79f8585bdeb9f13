"""Movement: one budget in feet for every mode, and what draws on it.

- Each foot costs 1, plus 1 for each distinct surcharge: difficult terrain (an
  enemy's space counts as difficult), crawling, squeezing, and climbing or
  swimming without that speed. Difficult terrain never counts twice.
- Dropping prone is free (not at speed 0); standing up costs half the speed (not
  at speed 0, not with too little movement left).
- A move may pass through an ally's or an incapacitated creature's space, and
  through an enemy's only when the two are at least two sizes apart. Nobody may
  willingly end a move in an occupied space.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    MOVE_MODES,
    PRONE,
    SQUEEZING,
    Command,
    CommandSpec,
    ConditionRemoved,
    Creature,
    EncounterState,
    Moved,
    MovementSpent,
    MoveRequest,
    Param,
    RuleContext,
    apply_condition,
    can_pass_through,
    hookimpl,
    movement_left,
)


def move_cost(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> tuple[int, tuple[str, ...]]:
    """The cost in feet of ``move`` and the surcharges (sorted, distinct) behind it."""
    extra: set[str] = set()
    for batch in ctx.hook.zonekeep_movement_surcharges(ctx=ctx, creature=creature, move=move):
        extra.update(batch or ())
    names = tuple(sorted(extra))
    return move.feet * (1 + len(names)), names


@hookimpl
def zonekeep_movement_surcharges(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> Iterable[str]:
    found = []
    if move.difficult:
        found.append("difficult")
    for cid in move.through:
        other = ctx.state.creatures.get(cid)
        if other is not None and ctx.is_enemy(creature, other) and not other.incapacitated:
            found.append("difficult")
    if move.mode == "crawl" or PRONE in creature.conditions:
        found.append("crawling")
    if move.squeeze:
        found.append("squeezing")
    if move.mode in ("climb", "swim") and not creature.speeds.get(move.mode):
        found.append(f"{move.mode} without a {move.mode} speed")
    return found


def _move(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    feet = p["feet"]
    mode = p.get("mode", "walk")
    if feet <= 0:
        ctx.refuse("invalid_params", "A move must be at least 1 foot.")
    if mode not in MOVE_MODES:
        modes = ", ".join(MOVE_MODES)
        ctx.refuse("invalid_params", f"Unknown movement mode {mode!r}; use one of {modes}.")
    if PRONE in me.conditions and mode not in ("walk", "crawl"):
        ctx.refuse("cannot_move", f"{me.name} is prone: it can only crawl, or stand up first.")
    if me.speed_for(mode) <= 0:
        if mode == "fly":
            ctx.refuse("cannot_move", f"{me.name} has no flying speed.")
        ctx.refuse("speed_zero", f"{me.name} has a speed of 0 and cannot move.")
    if "end_in" in p:
        other = ctx.creature(p["end_in"])
        ctx.refuse(
            "occupied_space",
            f"{me.name} cannot willingly end its move in {other.name}'s space.",
        )
    through = tuple(p.get("through", ()))
    for cid in through:
        other = ctx.creature(cid)
        if other.id == me.id:
            ctx.refuse("invalid_params", "A creature cannot move through itself.")
        if (
            ctx.is_enemy(me, other)
            and not other.incapacitated
            and not can_pass_through(me.size, other.size)
        ):
            ctx.refuse(
                "blocked_by_creature",
                f"{me.name} ({me.size.label}) cannot move through {other.name}'s space "
                f"({other.size.label}): an enemy's space can be crossed only when the two "
                "are at least two sizes apart.",
            )
    move = MoveRequest(
        feet, mode, bool(p.get("difficult", False)), bool(p.get("squeeze", False)), through
    )
    cost, extra = move_cost(ctx, me, move)
    left = movement_left(ctx.state, me, mode)
    if cost > left:
        why = f" ({', '.join(extra)})" if extra else ""
        ctx.refuse(
            "not_enough_movement",
            f"Moving {feet} ft costs {cost} ft{why}; {me.name} has {left} ft left.",
        )
    ctx.emit(Moved(me.id, feet, mode, cost, extra, through))
    if move.squeeze and SQUEEZING not in me.conditions:
        apply_condition(ctx, me.id, SQUEEZING, "moved through a narrow space")
    elif not move.squeeze and SQUEEZING in me.conditions and not _crowded(ctx, me):
        ctx.emit(ConditionRemoved(me.id, SQUEEZING, "out of the narrow space"))


def _can_stand(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if PRONE not in me.conditions:
        return ("not_prone", f"{me.name} is not prone.")
    if me.speed <= 0:
        return ("speed_zero", f"{me.name} has a speed of 0 and cannot stand up.")
    return None


def _can_drop(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if PRONE in me.conditions:
        return ("already_prone", f"{me.name} is already prone.")
    if me.speed <= 0:
        return ("speed_zero", f"{me.name} has a speed of 0 and cannot drop prone.")
    return None


def _crowded(ctx: RuleContext, me: Creature) -> bool:
    """Whether ``me`` stands in a zone over its capacity (where everyone squeezes)."""
    s = ctx.state
    if me.zone is None or not s.arena.has_zone(me.zone) or not s.options.size_limits:
        return False
    return s.occupancy(me.zone) > s.arena.zone(me.zone).capacity


def _stand(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    cost = me.speed // 2
    left = movement_left(ctx.state, me)
    if cost > left:
        ctx.refuse(
            "not_enough_movement",
            f"Standing up costs {cost} ft (half of {me.speed} ft); {me.name} has {left} ft left.",
        )
    ctx.emit(MovementSpent(me.id, cost, "stand up"), ConditionRemoved(me.id, PRONE, "stood up"))


def _drop_prone(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    apply_condition(ctx, me.id, PRONE, "dropped prone")


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    creature = Param("creature", True, "the moving creature")
    return (
        CommandSpec(
            "move",
            _move,
            "Move some feet in one mode, paying for difficult ground, crawling and squeezing.",
            {
                "creature": creature,
                "feet": Param("integer", True, "distance in feet"),
                "mode": Param("string", False, "walk (default), climb, swim, fly, jump or crawl"),
                "difficult": Param("boolean", False, "the ground is difficult terrain"),
                "squeeze": Param("boolean", False, "the way is a size too narrow"),
                "through": Param("creatures", False, "creatures whose space is crossed"),
                "end_in": Param("creature", False, "a creature whose space the move ends in"),
            },
            costs=("movement",),
        ),
        CommandSpec(
            "stand",
            _stand,
            "Stand up from prone for half your speed.",
            {"creature": creature},
            costs=("movement",),
            requires=_can_stand,
        ),
        CommandSpec(
            "drop_prone",
            _drop_prone,
            "Drop prone, for free.",
            {"creature": creature},
            requires=_can_drop,
        ),
    )
