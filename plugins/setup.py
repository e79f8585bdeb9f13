"""The first two steps of an encounter: determine surprise, establish positions."""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.plugins._crowding import update_crowding
from zonekeep.sdk import (
    Command,
    CommandSpec,
    Param,
    PositionsEstablished,
    RuleContext,
    SurpriseDetermined,
    hookimpl,
)


def _set_surprise(ctx: RuleContext, cmd: Command) -> None:
    surprised = list(cmd.params.get("surprised", []))
    for cid in surprised:
        ctx.creature(cid)
    if surprised and not ctx.state.options.surprise:
        ctx.refuse("invalid_params", "Surprise is switched off for this encounter.")
    if len(set(surprised)) != len(surprised):
        ctx.refuse("invalid_params", "A creature is listed as surprised twice.")
    ctx.emit(SurpriseDetermined(tuple(surprised)))


def _place(ctx: RuleContext, cmd: Command) -> None:
    given = dict(cmd.params.get("positions", {}))
    zones = ctx.state.zones
    for cid, zone in given.items():
        ctx.creature(cid)
        if not isinstance(zone, str) or zone not in zones:
            ctx.refuse(
                "unknown_zone",
                f"There is no zone {zone!r} to place {cid!r} in; zones: {', '.join(zones)}.",
            )
    positions: dict[str, str] = {}
    for cid, creature in ctx.state.creatures.items():
        zone = given.get(cid, creature.zone)
        if zone is None:
            if len(zones) != 1:
                ctx.refuse("invalid_params", f"{creature.name} has no position; give it a zone.")
            zone = zones[0]
        positions[cid] = zone
    if ctx.state.options.size_limits:
        for zone_id in sorted(set(positions.values())):
            used = sum(
                ctx.state.creatures[c].size.occupancy for c, z in positions.items() if z == zone_id
            )
            zone = ctx.state.arena.zone(zone_id)
            if used > zone.capacity + 1:
                ctx.refuse(
                    "zone_full",
                    f"{zone.name} holds {zone.capacity}; placing {used} there is more than "
                    "one over its capacity.",
                )
    ctx.emit(PositionsEstablished(positions))
    for zone_id in sorted(set(positions.values())):
        update_crowding(ctx, zone_id)


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "set_surprise",
            _set_surprise,
            "Step 1: the GM says which creatures are surprised (possibly none).",
            {"surprised": Param("creatures", False, "ids of the surprised creatures")},
            who="gm",
            phases=("surprise",),
        ),
        CommandSpec(
            "place",
            _place,
            "Step 2: the GM establishes every creature's zone.",
            {"positions": Param("object", False, "creature id to zone id")},
            who="gm",
            phases=("positions",),
        ),
    )
