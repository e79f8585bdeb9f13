"""Movement between zones (docs/rules.md, A1).

- Moving inside a zone is free. Entering an adjacent zone spends all remaining
  movement and needs more than 0 left, a link with a clear path (or an asset the
  creature holds that crosses it, or a GM override) and the link's movement:
  flying needs a flying speed; climbing or swimming without that speed counts
  as a surcharge.
- If the available movement, divided by 1 + the surcharges that apply (difficult
  terrain in the zone entered, crawling, squeezing, climbing/swimming without the
  speed, and any a plugin names for the zone passed through), is greater than the entered zone's size, the creature may go on into
  one further zone. Dash adds its speed; Sprint too, but the further zone must be
  straight ahead.
- Passing through a zone triggers what leaving it triggers (the engagement rules
  offer opportunity attacks before each step).
- A zone's occupants use Tiny 0 ... Colossal 5 of its capacity. A creature comes
  in (entering, forced, moved by the GM, added) only if the occupancy after it does
  is at most the capacity + 1 (``zonekeep_zone_refusal``); over capacity, every
  occupant squeezes [``size_limits``].
- Dash on entering a zone takes position at an asset there at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn

from zonekeep.plugins._crowding import update_crowding
from zonekeep.sdk import (
    PRONE,
    SQUEEZING,
    ActionTaken,
    Command,
    CommandSpec,
    Creature,
    Dashed,
    Link,
    Maneuver,
    ManeuverEnded,
    MoveRequest,
    Param,
    Refusal,
    RuleContext,
    Sprinted,
    change_zone,
    held_assets,
    hookimpl,
    movement_left,
    start_maneuver,
    take_position,
    zone_room,
)


def usable_link(ctx: RuleContext, creature: Creature, here: str, there: str) -> Link | None:
    """The best link from ``here`` to ``there`` that ``creature`` can cross, or ``None``.

    A link without a clear path counts when a plugin opens it for the creature
    (``zonekeep_link_crossing``: a spider climbing the wall), or when the creature
    holds a position at an asset whose ``crossing`` includes ``there`` (a rope up the
    cliff).
    """
    held = held_assets(ctx, creature)
    crossing = any(there in a.crossing for a in held) if held else False
    usable = [
        link
        for link in ctx.state.arena.links_between(here, there)
        if (link.clear or _opened(ctx, creature, link) or crossing)
        and (link.mode != "fly" or creature.speeds.get("fly", 0) > 0)
    ]
    if not usable:
        return None
    if len(usable) == 1:  # the only one (min() would pick it whatever it costs)
        return usable[0]
    # Prefer a link that costs nothing extra for this creature.
    return min(usable, key=lambda link: len(_link_surcharge(creature, link)))


def _opened(ctx: RuleContext, creature: Creature, link: Link) -> bool:
    """Whether a plugin lets ``creature`` cross ``link``, which has no clear path."""
    return ctx.hook.zonekeep_link_crossing(ctx=ctx, creature=creature, link=link) is not None


def _link_surcharge(creature: Creature, link: Link) -> list[str]:
    if link.mode in ("climb", "swim") and not creature.speeds.get(link.mode, 0):
        return [f"{link.mode} without a {link.mode} speed"]
    return []


def surcharges(
    ctx: RuleContext, creature: Creature, zone: str, link: Link, available: int
) -> list[str]:
    """What divides the ``available`` movement when comparing it with ``zone``'s size:
    the link's, the zone's and the creature's own, and every plugin's
    (``zonekeep_movement_surcharges``, asked with an ``"enter"`` request), each name once."""
    found = _link_surcharge(creature, link)
    difficult = ctx.state.arena.zone(zone).difficult
    if difficult:
        found.append("difficult")
    if PRONE in creature.conditions:
        found.append("crawling")
    squeeze = SQUEEZING in creature.conditions
    if squeeze:
        found.append("squeezing")
    move = MoveRequest(available, _mode(link), difficult, squeeze, kind="enter", zone=zone)
    for batch in ctx.hook.zonekeep_movement_surcharges(ctx=ctx, creature=creature, move=move):
        found.extend(batch or ())
    return list(dict.fromkeys(found))


def _mode(link: Link) -> str:
    return link.mode if link.mode in ("climb", "swim", "fly") else "walk"


def _enter(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    me = ctx.creature(cmd.params["creature"])
    path = list(cmd.params["zones"])
    if not 1 <= len(path) <= 2:
        ctx.refuse("invalid_params", "Give one zone to enter, or two to go on into a further zone.")
    for zone in path:
        if not s.arena.has_zone(zone):
            ctx.refuse("unknown_zone", f"There is no zone {zone!r}.")
    here = me.zone or ""
    first = usable_link(ctx, me, here, path[0])
    if first is None:
        _refuse_link(ctx, me, here, path[0])
    position = cmd.params.get("position")
    if position is not None:
        asset = s.asset(position)
        if asset is None or asset.zone != path[-1]:
            ctx.refuse("invalid_params", f"There is no asset {position!r} in {path[-1]!r}.")
        if s.resources.actions <= 0:
            ctx.refuse("no_action_left", "Taking position on entering needs the Dash action.")
        if movement_left(s, me, _mode(first)) <= 0:
            ctx.refuse(
                "not_enough_movement", f"{me.name} has no movement left to enter another zone."
            )
        ctx.emit(ActionTaken(me.id, "dash", "action"), Dashed(me.id))
    left = movement_left(s, me, _mode(first))
    if left <= 0:
        ctx.refuse("not_enough_movement", f"{me.name} has no movement left to enter another zone.")
    if len(path) == 2:
        zone1 = s.arena.zone(path[0])
        extra = surcharges(ctx, me, path[0], first, left)
        available = left // (1 + len(extra))
        if available <= zone1.size:
            why = f" (divided by {1 + len(extra)}: {', '.join(extra)})" if extra else ""
            ctx.refuse(
                "not_enough_movement",
                f"{me.name} has {available} ft of movement available{why}; going on past "
                f"{zone1.name} needs more than its {zone1.size} ft.",
            )
        second = usable_link(ctx, me, path[0], path[1])
        if second is None or path[1] == here:
            _refuse_link(ctx, me, path[0], path[1])
        if s.resources.sprinting and not s.arena.is_straight(here, path[0], path[1]):
            ctx.refuse(
                "not_straight",
                f"Sprinting, {me.name} can only go on straight ahead from {zone1.name}.",
            )
    for zone in path:
        full = zone_room(ctx, me, zone)
        if full:
            ctx.refuse(*full)
    options: list[str] = [f"cost:{left}", f"from:{here}"]
    if position is not None:
        options.append(f"position:{position}")
    start_maneuver(
        ctx,
        Maneuver(
            me.id,
            "enter",
            tuple(path),
            tumble=bool(cmd.params.get("tumble", False)),
            options=tuple(options),
        ),
    )


def _refuse_link(ctx: RuleContext, me: Creature, here: str, there: str) -> NoReturn:
    s = ctx.state
    links = s.arena.links_between(here, there)
    a = s.arena.zone(here).name if s.arena.has_zone(here) else here
    b = s.arena.zone(there).name
    if not links:
        ctx.refuse("not_adjacent", f"{b} is not adjacent to {a}.")
    if all(link.mode == "fly" for link in links) and not me.speeds.get("fly", 0):
        ctx.refuse("cannot_move", f"Reaching {b} from {a} needs a flying speed.")
    ctx.refuse(
        "no_clear_path",
        f"There is no clear path from {a} to {b}: it takes an asset, a skill check the GM "
        "calls for, or a GM override.",
    )


@hookimpl
def zonekeep_maneuver_step(ctx: RuleContext, maneuver: Maneuver) -> bool | None:
    if maneuver.kind != "enter":
        return None
    me = ctx.state.creatures[maneuver.creature]
    there = maneuver.steps[maneuver.step]
    expected = maneuver.steps[maneuver.step - 1] if maneuver.step else maneuver.option("from")
    if me.zone != expected or usable_link(ctx, me, me.zone or "", there) is None:
        ctx.emit(ManeuverEnded(me.id, False, f"{me.name} was moved and the way is not open"))
        return True
    cost = int(maneuver.option("cost") or 0) if maneuver.step == 0 else 0
    change_zone(ctx, me, there, cost=cost)
    last = maneuver.step == len(maneuver.steps) - 1
    position = maneuver.option("position")
    if last and position is not None:
        asset = ctx.state.asset(position)
        if asset is not None:
            take_position(ctx, ctx.state.creatures[me.id], asset)
    return True


@hookimpl
def zonekeep_zone_entered(
    ctx: RuleContext, creature: Creature, from_zone: str, forced: bool
) -> None:
    for zone in {from_zone, creature.zone}:
        if zone:
            update_crowding(ctx, zone)


@hookimpl
def zonekeep_zone_refusal(ctx: RuleContext, creature: Creature, zone: str) -> Refusal | None:
    """Zone capacity (docs/rules.md, "Rulings"): occupancy counts Tiny 0, Small and Medium 1, Large 2,
    Huge 3, Gargantuan 4, Colossal 5; a creature comes in only if the occupancy after
    it does is at most the capacity + 1 [``size_limits``]."""
    s = ctx.state
    if not s.options.size_limits or not s.arena.has_zone(zone):
        return None
    z = s.arena.zone(zone)
    used = s.occupancy(zone)
    weight = creature.size.occupancy
    if used > z.capacity and weight > 0:
        return Refusal(
            "zone_full",
            f"{z.name} is already over its capacity ({used} of {z.capacity}); "
            f"{creature.name} cannot get in.",
        )
    if used + weight > z.capacity + 1:
        return Refusal(
            "zone_full",
            f"{z.name} has room for {z.capacity} and holds {used}; {creature.name} "
            f"({creature.size.label}, {weight}) would bring it to {used + weight}, more than "
            f"one over its capacity, so {creature.name} cannot get in.",
        )
    return None


def _sprint(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(Sprinted(cmd.params["creature"]))


def _gm_move(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    zone = cmd.params["zone"]
    if not ctx.state.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {zone!r}.")
    if zone == me.zone:
        ctx.refuse("invalid_params", f"{me.name} is already there.")
    full = zone_room(ctx, me, zone)
    if full:
        ctx.refuse(*full)
    change_zone(ctx, me, zone, forced=True, by=ctx.actor.id)


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    creature = Param("creature", True, "the moving creature")
    return (
        CommandSpec(
            "enter",
            _enter,
            "Spend all remaining movement to enter an adjacent zone, and perhaps one further zone.",
            {
                "creature": creature,
                "zones": Param("strings", True, "the zone entered, then optionally a further one"),
                "tumble": Param("boolean", False, "tumble past those who would react"),
                "position": Param(
                    "string", False, "Dash to take position at this asset on arrival"
                ),
            },
            costs=("movement",),
        ),
        CommandSpec(
            "sprint",
            _sprint,
            "Action: like Dash, but a further zone must be straight ahead.",
            {"creature": creature},
            costs=("action",),
        ),
        CommandSpec(
            "move_to_zone",
            _gm_move,
            "GM: put a creature in a zone (an override; it provokes nothing, but a zone "
            "already over capacity stays closed while size limits are on).",
            {"creature": creature, "zone": Param("zone", True, "the zone")},
            who="gm",
            phases=("positions", "initiative", "turns"),
        ),
    )
