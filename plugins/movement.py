"""Movement: one budget in feet for every mode, and what draws on it.

- Each foot costs 1, plus 1 for each distinct surcharge: difficult terrain (an
  enemy's space counts as difficult), crawling, squeezing, and climbing or
  swimming without that speed. Difficult terrain never counts twice.
- Dropping prone is free (not at speed 0); standing up costs half the speed (not
  at speed 0, not with too little movement left).
- A move may pass through an ally's or an incapacitated creature's space, and
  through an enemy's only when the two are at least two sizes apart. Nobody may
  willingly end a move in an occupied space.
- What a move costs is the server's to know: difficult ground comes from the zone the
  creature stands in (the arena), squeezing from its ``squeezing`` condition or an
  over-capacity zone; the client asks only for the feet, the mode, the creatures it
  crosses, and a run-up.
- A jump (a long jump) covers up to the Strength score in feet after a run-up of at
  least 10 ft on foot right before it (``run_up``, walked and paid in the same
  move), half that from a standing start; it draws on the same budget, foot for
  foot. See :func:`strength_score` for where the score comes from.
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
    # The server's to know (docs/rules.md, "Rulings"): the ground of the zone the creature stands in,
    # and whether it is squeezing (a crowded zone or a condition), never a client's flag.
    difficult, squeeze = _difficult_ground(ctx, me), _squeezed(ctx, me)
    run_up = p.get("run_up", 0)
    if run_up and mode != "jump":
        ctx.refuse("invalid_params", "A run-up goes with a jump (mode 'jump').")
    if run_up < 0:
        ctx.refuse("invalid_params", f"A run-up cannot be negative ({run_up} ft).")
    if mode == "jump":
        running = run_up >= RUN_UP
        reach = jump_distance(me, running=running)
        answers = ctx.hook.zonekeep_jump_distance(ctx=ctx, creature=me, running=running)
        leap = max([0, *(a for a in answers if isinstance(a, int) and a >= 0)])
        if feet > max(reach, leap):
            if leap > reach:
                ctx.refuse(
                    "cannot_move", f"{me.name} can jump at most {leap} ft; {feet} ft is too far."
                )
            ctx.refuse("cannot_move", _too_far(me, feet, run_up))
    move = MoveRequest(feet, mode, difficult, squeeze, through)
    cost, extra = move_cost(ctx, me, move)
    run: tuple[int, tuple[str, ...]] = (0, ())
    if run_up:
        run = move_cost(ctx, me, MoveRequest(run_up, "walk", difficult, squeeze))
    left = movement_left(ctx.state, me, mode)
    if run[0] + cost > left:
        why = f" ({', '.join(sorted({*extra, *run[1]}))})" if extra or run[1] else ""
        what = f"Running {run_up} ft and jumping {feet} ft" if run_up else f"Moving {feet} ft"
        ctx.refuse(
            "not_enough_movement",
            f"{what} costs {run[0] + cost} ft{why}; {me.name} has {left} ft left.",
        )
    if run_up:
        ctx.emit(Moved(me.id, run_up, "walk", run[0], run[1], ()))
    ctx.emit(Moved(me.id, feet, mode, cost, extra, through))


#: Feet moved on foot right before a jump that make it a running jump.
RUN_UP = 10


def strength_score(creature: Creature) -> int:
    """The creature's Strength score, derived from its sheet.

    Creatures carry modifiers and bonuses, not ability scores: the score is taken as
    10 + 2 x the Strength saving throw bonus (``saves["str"]``, 0 when absent), at
    least 1. For a creature not proficient in Strength saves that bonus is its
    Strength modifier, so this is the score's usual value (a +3 gives 16).
    """
    return max(1, 10 + 2 * creature.saves.get("str", 0))


def jump_distance(creature: Creature, *, running: bool) -> int:
    """How far a long jump takes ``creature``: its Strength score in feet after a
    run-up of at least :data:`RUN_UP` ft on foot, half that (rounded down) without."""
    score = strength_score(creature)
    return score if running else score // 2


def _too_far(me: Creature, feet: int, run_up: int) -> str:
    score = strength_score(me)
    if run_up >= RUN_UP:
        return (
            f"{me.name} can jump at most {score} ft with a run-up (its Strength score, "
            f"{score}); {feet} ft is too far."
        )
    return (
        f"{me.name} can jump at most {score // 2} ft from a standing start (half its Strength "
        f"score, {score}); a run-up of at least {RUN_UP} ft on foot right before it "
        f"(run_up) allows {score} ft."
    )


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


def _difficult_ground(ctx: RuleContext, me: Creature) -> bool:
    """Whether the zone ``me`` stands in is difficult terrain, as the arena says."""
    arena = ctx.state.arena
    return me.zone is not None and arena.has_zone(me.zone) and arena.zone(me.zone).difficult


def _squeezed(ctx: RuleContext, me: Creature) -> bool:
    """Whether ``me`` moves squeezed: it is ``squeezing`` or its zone is over capacity,
    unless it is immune to squeezing (an ooze's Amorphous)."""
    if SQUEEZING in me.conditions:
        return True
    if not _crowded(ctx, me) or SQUEEZING in me.condition_immunities:
        return False
    ask = ctx.hook.zonekeep_condition_immunity
    return not ask(ctx=ctx, creature=me, condition=SQUEEZING)


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
            "Move some feet in one mode; the server charges difficult ground, crawling and "
            "squeezing from the arena and the state.",
            {
                "creature": creature,
                "feet": Param("integer", True, "distance in feet"),
                "mode": Param("string", False, "walk (default), climb, swim, fly, jump or crawl"),
                "through": Param("creatures", False, "creatures whose space is crossed"),
                "end_in": Param("creature", False, "a creature whose space the move ends in"),
                "run_up": Param(
                    "integer", False, "feet run on foot right before a jump (10+: a running jump)"
                ),
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
