"""zonekeep-hazards: an example plugin written only against ``zonekeep.sdk``.

It adds:

- **collapsing floors**: at the end of each round, every creature in position in an
  element tagged ``collapsing_floor`` makes a Dexterity save (the asset's own save
  DC, 12 if it has none); on a failure the floor gives way: it falls into the zone
  below, takes the fall's damage (the asset's ``data.fall_damage``, 1d6 if it gives
  none) as bludgeoning damage and lands prone;
- **burning**: a ``hazards.burning`` condition (set by the GM's ``hazards.ignite``
  command) deals fire damage (the ``burn_die`` setting, 1d6 by default) at the start
  of each of the creature's turns, until it succeeds on a Dexterity save (the
  ``burn_dc`` setting, 10 by default) at the end of one;
- **shove into a hazard**: the ``shove_into`` action (Athletics against the
  target's Athletics or Acrobatics) forces the target into an asset in its zone,
  which counts as taking position there and runs the asset's forced effect;
- **tripwires**: taking position at a prop tagged ``tripwire`` rings an alarm: a
  GM note and a time-sensitive ``alarm`` hazard.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    PRONE,
    Asset,
    AssetTagSpec,
    Command,
    CommandSpec,
    ConditionApplied,
    ConditionRemoved,
    ConditionSpec,
    ContestRolled,
    Creature,
    Hazard,
    HazardAdded,
    Note,
    NoteAdded,
    Param,
    PluginInfo,
    RollRequest,
    RuleContext,
    SettingSpec,
    apply_damage,
    change_zone,
    force_move,
    hookimpl,
    saving_throw,
)

ZONEKEEP_PLUGIN = PluginInfo(
    name="hazards",
    version="1.0.0",
    sdk=">=0.1,<0.2",
    description="Collapsing floors, burning, shoving into hazards, tripwires.",
)

# Every id this plugin declares lives in its namespace, "hazards" (docs/plugins.md,
# "Namespaced ids"): the condition is "hazards.burning", the commands "hazards.ignite"
# and "hazards.shove_into". Arena files, rosters and clients may use the short names
# ("burning", "collapsing_floor", "ignite") while no other plugin declares the same.
BURNING = ZONEKEEP_PLUGIN.id("burning")
COLLAPSING = ZONEKEEP_PLUGIN.id("collapsing_floor")
TRIPWIRE = ZONEKEEP_PLUGIN.id("tripwire")
#: The save DC of a collapsing floor that gives none.
FLOOR_DC = 12
#: The save DC to stop burning (the ``burn_dc`` setting's default).
BURN_DC = 10
#: The fire damage of burning each turn (the ``burn_die`` setting's default).
BURN_DIE = "1d6"
#: The damage of a fall through a collapsing floor whose data gives none.
FALL_DAMAGE = "1d6"
#: The plugin's name: the key of its settings (``ctx.setting(PLUGIN, ...)``).
PLUGIN = "hazards"


def _zone_below(ctx: RuleContext, zone: str) -> str | None:
    """The zone directly below ``zone``, if the arena has one."""
    for link, other in ctx.state.arena.neighbours(zone):
        if link.direction_from(zone) == "below":
            return other
    return None


# -- collapsing floors -------------------------------------------------------------------------


@hookimpl
def zonekeep_round_end(ctx: RuleContext, round: int) -> None:
    for creature in list(ctx.state.creatures.values()):
        if creature.out_of_fight:
            continue
        for aid in list(creature.elements):
            asset = ctx.state.asset(aid)
            if asset is not None and COLLAPSING in asset.tags:
                _floor_gives_way(ctx, creature.id, asset)


def _floor_gives_way(ctx: RuleContext, cid: str, asset: Asset) -> None:
    save = asset.position.save
    dc = save.dc if save is not None and save.dc is not None else FLOOR_DC
    creature = ctx.state.creatures[cid]
    if saving_throw(ctx, creature, "dex", dc, f"{asset.name} gives way"):
        return
    below = _zone_below(ctx, creature.zone or "")
    if below is None:
        return
    change_zone(ctx, creature, below, forced=True, by=asset.id)
    damage = ctx.roll(asset.data.get("fall_damage", FALL_DAMAGE))
    apply_damage(
        ctx,
        ctx.state.creatures[cid],
        damage.total,
        damage_type="bludgeoning",
        roll=damage,
        source=asset.id,
    )
    if PRONE not in ctx.state.creatures[cid].conditions:
        ctx.emit(ConditionApplied(cid, PRONE, f"fell through {asset.name}"))


# -- burning -------------------------------------------------------------------------------------


def _ignite(ctx: RuleContext, cmd: Command) -> None:
    target = ctx.creature(cmd.params["creature"])
    if BURNING in target.conditions:
        ctx.refuse("invalid_params", f"{target.name} is already burning.")
    ctx.emit(ConditionApplied(target.id, BURNING, "set alight"))


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if BURNING in creature.conditions:
        damage = ctx.roll(ctx.setting(PLUGIN, "burn_die"))
        apply_damage(ctx, creature, damage.total, damage_type="fire", roll=damage, source=BURNING)


@hookimpl
def zonekeep_turn_end(ctx: RuleContext, creature: Creature) -> None:
    if BURNING not in creature.conditions or creature.out_of_fight:
        return
    dc = ctx.setting(PLUGIN, "burn_dc")
    if saving_throw(ctx, creature, "dex", dc, "putting out the flames"):
        ctx.emit(ConditionRemoved(creature.id, BURNING, "put out"))


# -- shove into a hazard -----------------------------------------------------------------------------


def _shove_into(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    asset = ctx.state.asset(cmd.params["asset"])
    if target.id == me.id or target.zone != me.zone or target.out_of_fight:
        ctx.refuse("invalid_target", f"{me.name} can only shove another creature in its zone.")
    if asset is None or asset.zone != target.zone:
        ctx.refuse(
            "invalid_target", f"There is no asset {cmd.params['asset']!r} in {target.name}'s zone."
        )
    mine = ctx.roll(
        "d20",
        RollRequest("check", me.id, ability="str", skill="athletics"),
        bonus=me.skill("athletics"),
    )
    best = "athletics" if target.skill("athletics") >= target.skill("acrobatics") else "acrobatics"
    theirs = ctx.roll("d20", RollRequest("check", target.id, skill=best), bonus=target.skill(best))
    won = mine.total > theirs.total
    ctx.emit(ContestRolled(me.id, target.id, "athletics", mine, best, theirs, won))
    if won:
        force_move(ctx, me, target, asset=asset.id)


# -- tripwires -----------------------------------------------------------------------------------


@hookimpl
def zonekeep_position_taken(
    ctx: RuleContext, creature: Creature, asset: Asset, forced: bool
) -> None:
    if TRIPWIRE not in asset.tags:
        return
    ctx.emit(
        NoteAdded(
            Note(
                f"alarm-{ctx.state.seq + 1}",
                f"{creature.name} set off {asset.name}: the alarm rings!",
            )
        )
    )
    if "alarm" not in ctx.state.hazards:
        ctx.emit(HazardAdded(Hazard("alarm", "The alarm is ringing", time_sensitive=True)))


@hookimpl
def zonekeep_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            BURNING,
            "Fire damage (the burn_die setting, 1d6) at the start of each turn until a Dex save "
            "(burn_dc, 10).",
        ),
    )


@hookimpl
def zonekeep_asset_tags() -> Iterable[AssetTagSpec]:
    return (
        AssetTagSpec(
            COLLAPSING,
            "At each round's end, a Dex save or fall to the zone below.",
            data_schema={
                "type": "object",
                "properties": {
                    "fall_damage": {
                        "type": "string",
                        "format": "dice",
                        "description": "The bludgeoning damage of the fall.",
                        "default": FALL_DAMAGE,
                    }
                },
            },
        ),
        AssetTagSpec(TRIPWIRE, "Taking position here rings the alarm."),
    )


@hookimpl
def zonekeep_settings() -> Iterable[SettingSpec]:
    return (
        SettingSpec(
            "burn_die",
            "The fire damage a burning creature takes at the start of each of its turns.",
            {"type": "string", "format": "dice"},
            BURN_DIE,
        ),
        SettingSpec(
            "burn_dc",
            "The Dexterity save DC that puts the flames out at the end of a turn.",
            {"type": "integer", "minimum": 1, "maximum": 30},
            BURN_DC,
        ),
    )


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "ignite",
            _ignite,
            "GM: set a creature alight; it burns (1d6 fire each turn) until a Dexterity save ends it.",
            {"creature": Param("creature", True, "the creature set alight")},
            who="gm",
        ),
        CommandSpec(
            "shove_into",
            _shove_into,
            "Action: shove a creature into a hazard in its zone (Athletics contest).",
            {
                "creature": Param("creature", True, "the shover"),
                "target": Param("creature", True, "the creature shoved"),
                "asset": Param("string", True, "the hazard it is shoved into"),
            },
            costs=("action",),
        ),
    )
