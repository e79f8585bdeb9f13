"""Taking position at assets, and forced movement (docs/rules.md, A6 and A7).

- Taking or leaving a position costs half speed and needs the asset in the
  creature's zone. A creature holds one prop at a time; elements and terrain
  (ongoing effects included) apply on top of it.
- Taking or leaving a position while engaged offers an opportunity attack to the
  last enemy that made a melee attack against it (Disengage or a Tumble avoids it).
- What a position grants or costs: an AC bonus, advantage, disadvantage or an
  expertise die on named rolls (``attacked`` means attacks against the occupant),
  difficult movement, conditions while held, and a save on taking it.
- Forced movement (``shove``, or the GM's ``force`` for spells and effects) moves a
  creature into a creature or an asset in its zone, or into an adjacent zone with a
  clear path, spending none of its movement. Forced into an asset, it has taken
  position there, and the asset's forced effect calls for a save against the
  forcer's maneuver DC (spell save DC if magical); the asset's own DC applies only
  when nobody forced the move (the GM's ``force`` without a forcer).
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    Asset,
    Attack,
    Command,
    CommandSpec,
    ConditionRemoved,
    Creature,
    Maneuver,
    ManeuverEnded,
    MoveRequest,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_condition,
    asset_save,
    contest,
    force_move,
    held_assets,
    hookimpl,
    leave_position,
    spend_half_speed,
    start_maneuver,
    take_position,
)

#: The DC of a position's own save when the asset gives none (a "medium" DC).
DEFAULT_POSITION_DC = 13


def _source(asset: Asset) -> str:
    return f"in position at {asset.name}"


def _take(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    me = ctx.creature(cmd.params["creature"])
    asset = s.asset(cmd.params["asset"])
    if asset is None:
        ctx.refuse("unknown_asset", f"There is no asset {cmd.params['asset']!r}.")
    if asset.zone != me.zone:
        ctx.refuse("invalid_target", f"{asset.name} is not in {me.name}'s zone.")
    if asset.id == me.position or asset.id in me.elements:
        ctx.refuse("invalid_params", f"{me.name} is already in position at {asset.name}.")
    is_prop = asset.kind == "prop" and asset.id not in s.effects
    if is_prop and me.position is not None:
        held = s.asset(me.position)
        half = me.speed // 2
        ctx.refuse(
            "already_in_position",
            f"{me.name} is in position at {held.name if held else me.position} and holds one "
            f"prop at a time: leave that position first (leave_position, half its speed: "
            f"{half} ft), then take position at {asset.name} (half its speed again: {half} ft).",
        )
    spend_half_speed(ctx, me, f"Taking position at {asset.name}")
    start_maneuver(
        ctx,
        Maneuver(me.id, "take_position", (asset.id,), tumble=bool(cmd.params.get("tumble", False))),
    )


def _leave(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    me = ctx.creature(cmd.params["creature"])
    aid = cmd.params.get("asset") or me.position
    if aid is None or (aid != me.position and aid not in me.elements):
        ctx.refuse("not_in_position", f"{me.name} is not in position at {aid or 'any asset'}.")
    asset = s.asset(aid)
    spend_half_speed(ctx, me, f"Leaving {asset.name if asset else aid}")
    start_maneuver(
        ctx, Maneuver(me.id, "leave_position", (aid,), tumble=bool(cmd.params.get("tumble", False)))
    )


@hookimpl
def zonekeep_maneuver_step(ctx: RuleContext, maneuver: Maneuver) -> bool | None:
    if maneuver.kind not in ("take_position", "leave_position"):
        return None
    me = ctx.state.creatures[maneuver.creature]
    asset = ctx.state.asset(maneuver.steps[0])
    if asset is None or asset.zone != me.zone:  # the effect ended, or the GM moved it
        ctx.emit(ManeuverEnded(me.id, False, "the asset is no longer within reach"))
        return True
    if maneuver.kind == "take_position":
        take_position(ctx, me, asset)
    else:
        leave_position(ctx, me, asset, "left its position")
    return True


# -- what a position does ------------------------------------------------------------------------


@hookimpl
def zonekeep_position_taken(
    ctx: RuleContext, creature: Creature, asset: Asset, forced: bool
) -> None:
    effect = asset.position
    for condition in effect.conditions:
        if condition not in ctx.state.creatures[creature.id].conditions:
            apply_condition(ctx, creature.id, condition, _source(asset))
    if effect.save is not None:
        save = effect.save
        dc = save.dc if save.dc is not None else DEFAULT_POSITION_DC
        asset_save(ctx, creature.id, save, dc, asset, asset.name)


@hookimpl
def zonekeep_position_left(ctx: RuleContext, creature: Creature, asset: Asset) -> None:
    still = {c for a in held_assets(ctx, creature) for c in a.position.conditions}
    for condition in asset.position.conditions:
        if condition in creature.conditions and condition not in still:
            ctx.emit(ConditionRemoved(creature.id, condition, f"left {asset.name}"))


def _tags(roll: RollRequest) -> set[str]:
    if roll.kind == "attack":
        return {"attack", f"{roll.attack_kind}_attack"}
    if roll.kind == "save":
        return {"save", f"{roll.ability}_save"}
    if roll.kind == "check":
        return {"check", f"{roll.ability}_check", roll.skill or ""} - {""}
    return {roll.kind}


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier]:
    found: list[RollModifier] = []
    actor = ctx.state.creatures.get(roll.actor)
    held = held_assets(ctx, actor) if actor is not None else []
    if held:
        tags = _tags(roll)
        for asset in held:
            eff = asset.position
            if tags.intersection(eff.advantage_on):
                found.append(RollModifier("advantage", asset.name))
            if tags.intersection(eff.disadvantage_on):
                found.append(RollModifier("disadvantage", asset.name))
            if tags.intersection(eff.expertise_on):
                found.append(RollModifier("expertise", asset.name))
    target = ctx.state.creatures.get(roll.target) if roll.target else None
    if roll.kind == "attack" and target is not None:
        for asset in held_assets(ctx, target):
            if "attacked" in asset.position.advantage_on:
                found.append(RollModifier("advantage", f"target at {asset.name}"))
            if "attacked" in asset.position.disadvantage_on:
                found.append(RollModifier("disadvantage", f"target at {asset.name}"))
    return found


@hookimpl
def zonekeep_armor_class_bonus(
    ctx: RuleContext, target: Creature, attacker: Creature, attack: Attack
) -> int | None:
    return sum(a.position.ac_bonus for a in held_assets(ctx, target)) or None


@hookimpl
def zonekeep_movement_surcharges(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> Iterable[str]:
    if move.kind != "move":  # entering another zone leaves the positions held here
        return []
    return ["difficult"] if any(a.position.difficult for a in held_assets(ctx, creature)) else []


# -- forced movement -----------------------------------------------------------------------------


def _destination(cmd: Command) -> dict[str, str | None]:
    p = cmd.params
    return {"zone": p.get("zone"), "asset": p.get("asset"), "into": p.get("into")}


def _shove(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    if target.id == me.id or target.zone != me.zone or target.out_of_fight:
        ctx.refuse("invalid_target", f"{me.name} can only shove another creature in its zone.")
    if int(target.size) - int(me.size) > 1:
        ctx.refuse("invalid_target", f"{target.name} is too large for {me.name} to shove.")
    dest = _destination(cmd)
    # An Athletics check against the target's Athletics or Acrobatics (its better).
    won = contest(ctx, me, target, "athletics", ("athletics", "acrobatics")).won
    if won:
        force_move(ctx, me, target, zone=dest["zone"], asset=dest["asset"], into=dest["into"])


def _force(ctx: RuleContext, cmd: Command) -> None:
    named = cmd.params.get("forcer")
    forcer = ctx.creature(named, role="forcer") if named is not None else None
    if forcer is None and cmd.params.get("magical"):
        ctx.refuse("invalid_params", "'magical' names the forcer's spell save DC: name a forcer.")
    target = ctx.creature(cmd.params["creature"])
    dest = _destination(cmd)
    force_move(
        ctx,
        forcer,
        target,
        zone=dest["zone"],
        asset=dest["asset"],
        into=dest["into"],
        magical=bool(cmd.params.get("magical", False)),
    )


def _gm_position(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    aid = cmd.params.get("asset")
    if aid is None:
        for asset in held_assets(ctx, me):
            leave_position(ctx, me, asset, f"GM override by {ctx.actor.id}")
        return
    chosen = ctx.state.asset(aid)
    if chosen is None or chosen.zone != me.zone:
        ctx.refuse("invalid_target", f"There is no asset {aid!r} in {me.name}'s zone.")
    take_position(ctx, me, chosen, forced=True, by=ctx.actor.id)


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    creature = Param("creature", True, "the acting creature")
    tumble = Param("boolean", False, "tumble past the enemy who would react")
    where = {
        "zone": Param("zone", False, "an adjacent zone with a clear path"),
        "asset": Param(
            "string", False, "an asset where the target lands (counts as taking position)"
        ),
        "into": Param("creature", False, "a creature whose space the target is pushed into"),
    }
    return (
        CommandSpec(
            "take_position",
            _take,
            "Spend half your speed to take position at (or in) an asset in your zone.",
            {"creature": creature, "asset": Param("string", True, "the asset"), "tumble": tumble},
            costs=("movement",),
        ),
        CommandSpec(
            "leave_position",
            _leave,
            "Spend half your speed to leave a position.",
            {
                "creature": creature,
                "asset": Param("string", False, "the asset (default: the prop you hold)"),
                "tumble": tumble,
            },
            costs=("movement",),
        ),
        CommandSpec(
            "shove",
            _shove,
            "Action: Athletics against the target's Athletics or Acrobatics; on a win, force it somewhere.",
            {
                "creature": creature,
                "target": Param("creature", True, "the creature shoved"),
                **where,
            },
            costs=("action",),
        ),
        CommandSpec(
            "force",
            _force,
            "GM: a creature forces another somewhere (a spell, a trap, a shove ruled at the table).",
            {
                "forcer": Param(
                    "creature",
                    False,
                    "the creature whose DC applies (none: nobody forced it, the asset's own DC)",
                ),
                "creature": Param("creature", True, "the creature moved"),
                "magical": Param("boolean", False, "use the forcer's spell save DC"),
                **where,
            },
            who="gm",
        ),
        CommandSpec(
            "set_position",
            _gm_position,
            "GM: put a creature in position at an asset, or take all its positions away.",
            {"creature": creature, "asset": Param("string", False, "the asset, or none to clear")},
            who="gm",
        ),
    )
