"""A third-party "web" plugin, written with the public SDK alone (``zonekeep.sdk``): the
test of issue 30's SDK 3 that the world can change while an encounter runs.

- ``web.spin_web`` (an action): sticky webs fill a zone, a new asset placed at runtime,
  hidden from the players when the GM says so (``hidden``); ``web.reveal_web`` (GM)
  shows it.
- The webs are difficult terrain: a creature going on past the zone (``enter`` with two
  zones, Dash and Sprint included) pays the surcharge, and so does one moving inside it.
- A creature that enters the webbed zone makes a Dexterity save against the web's DC
  or is restrained, for as long as the web lasts (a timed condition whose parent is
  the web: ``apply_timed_condition(..., parent=web.id)``).
- Each creature's count of times the webs caught it is per-creature plugin data that
  only its controller (and the GM) sees: the state ``caught`` and the event
  ``web.caught``, both ``visibility="owner"``.
- Fire aimed at the zone (``affect_zone``: the GM's ``damage_zone``) burns the webs
  away: the asset is removed, and everyone in the zone takes 2d4 fire damage, rolled
  once for all. (The spell burns for a round and hurts those who start their turn in
  it; here the burning is over at once, a simplification of this test plugin.)

Its tests: tests/test_sdk_world.py (in-process) and tests/e2e/test_sdk_world_e2e.py (a
real server).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zonekeep.sdk import (
    Asset,
    AssetTagSpec,
    Command,
    CommandSpec,
    Creature,
    EventTypeSpec,
    MoveRequest,
    Param,
    PluginInfo,
    RuleContext,
    StateSpec,
    ZoneAffected,
    affect_zone,
    apply_timed_condition,
    change_asset,
    hookimpl,
    place_asset,
    plugin_event,
    saving_throw,
)

ZONEKEEP_PLUGIN = PluginInfo(
    name="web", version="1.0.0", sdk=">=0.1,<0.2", description="Sticky, flammable webs."
)

WEB = "web"
BURNED = "web_burned"
CAUGHT = "caught"
DC = 12


def _caught(state: dict[str, Any], data: dict[str, Any]) -> None:
    state[CAUGHT][data["creature"]] = state[CAUGHT].get(data["creature"], 0) + 1


def webs_in(ctx: RuleContext, zone: str | None) -> list[Asset]:
    if zone is None:
        return []
    return [a for a in ctx.state.assets_in(zone) if WEB in a.tags]


def _spin(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    zone = cmd.params["zone"]
    if not ctx.state.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {zone!r}.")
    hidden = bool(cmd.params.get("hidden", False))
    if hidden and not ctx.actor.is_gm:
        ctx.refuse("not_allowed", "Only the GM places webs the players cannot see.")
    place_asset(
        ctx,
        Asset(
            f"web-{zone}",
            "Sticky webs",
            "terrain",
            zone,
            description=f"Webs spun by {me.name}: difficult terrain, sticky, flammable.",
            tags=(WEB,),
            data={"dc": int(cmd.params.get("dc") or DC), "spun_by": me.id},
        ),
        hidden=hidden,
    )


def _reveal(ctx: RuleContext, cmd: Command) -> None:
    change_asset(ctx, cmd.params["asset"], hidden=False)


@hookimpl
def zonekeep_asset_tags() -> Iterable[AssetTagSpec]:
    return (
        AssetTagSpec(
            WEB,
            "Sticky webs: difficult terrain; entering, a Dexterity save or restrained; "
            "fire burns them away (2d4 fire to those inside).",
            data_schema={
                "type": "object",
                "properties": {
                    "dc": {"type": "integer", "minimum": 1, "maximum": 30},
                    "spun_by": {"type": "string"},
                },
            },
        ),
    )


@hookimpl
def zonekeep_plugin_state() -> Iterable[StateSpec]:
    return (
        StateSpec(
            CAUGHT,
            default={},
            visibility="owner",
            description="How many times the webs caught each creature (its controller sees it).",
        ),
    )


@hookimpl
def zonekeep_event_types() -> Iterable[EventTypeSpec]:
    return (
        EventTypeSpec(
            CAUGHT,
            {
                "type": "object",
                "properties": {"creature": {"type": "string"}, "web": {"type": "string"}},
                "required": ["creature", "web"],
                "additionalProperties": False,
            },
            _caught,
            description="The webs caught a creature.",
            template="the webs catch {creature}",
            visibility="owner",
        ),
        EventTypeSpec(
            BURNED,
            {
                "type": "object",
                "properties": {"web": {"type": "string"}, "zone": {"type": "string"}},
                "required": ["web", "zone"],
                "additionalProperties": False,
            },
            None,
            description="Fire burned a web away.",
            template="fire burns {web} away in {zone}",
            visibility="everyone",
        ),
    )


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "spin_web",
            _spin,
            "Action: fill a zone with sticky webs (the GM may hide them from the players).",
            {
                "creature": Param("creature", True, "the creature spinning"),
                "zone": Param("zone", True, "the zone webbed"),
                "hidden": Param("boolean", False, "GM: players do not see the webs"),
                "dc": Param("integer", False, "the Dexterity save's DC (12)"),
            },
            costs=("action",),
        ),
        CommandSpec(
            "reveal_web",
            _reveal,
            "GM: show hidden webs to the players.",
            {"asset": Param("string", True, "the web")},
            who="gm",
        ),
    )


@hookimpl
def zonekeep_movement_surcharges(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> Iterable[str] | None:
    zone = move.zone if move.kind == "enter" else creature.zone
    return ["difficult"] if webs_in(ctx, zone) else None


@hookimpl
def zonekeep_zone_entered(
    ctx: RuleContext, creature: Creature, from_zone: str, forced: bool
) -> None:
    for web in webs_in(ctx, creature.zone):
        now = ctx.state.creatures[creature.id]
        if "restrained" in now.conditions or now.out_of_fight:
            return
        if not saving_throw(ctx, now, "dex", int(web.data.get("dc", DC)), web.name):
            ctx.emit(plugin_event(CAUGHT, creature=now.id, web=web.name))
            apply_timed_condition(ctx, now.id, "restrained", source=web.name, parent=web.id)


@hookimpl
def zonekeep_zone_affected(ctx: RuleContext, effect: ZoneAffected) -> None:
    if effect.damage_type != "fire":
        return
    for web in webs_in(ctx, effect.zone):
        ctx.emit(plugin_event(BURNED, web=web.id, zone=effect.zone))
        change_asset(ctx, web.id, remove=True, reason="burned")
        # Not the web's id as the source: once gone, a hidden web's id is no secret.
        affect_zone(ctx, effect.zone, damage="2d4", damage_type="fire", source="burning webs")
