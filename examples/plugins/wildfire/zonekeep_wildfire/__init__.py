"""zonekeep-wildfire: the second example plugin, written only against ``zonekeep.sdk``.

Fire that spreads. It adds:

- **burning** (``wildfire.burning``): fire damage (the ``burn_die`` setting, 1d6) at the
  start of each of the creature's turns; it ends after ``burn_rounds`` rounds (3), or
  when the creature spends its action on ``douse``. When it runs out by itself a public
  ``wildfire.burned_out`` event says so.
- **soaked** (``wildfire.soaked``): a creature that doused itself is soaked until the end
  of its next turn: it cannot catch fire, and takes ``soak`` (2) less fire damage (a
  ``zonekeep_modify_damage`` step, before its own resistances).
- **braziers**: an asset tagged ``brazier`` (data: ``ignites``, the zone beside it that
  it sets burning, and ``dc``, the Dexterity save) can be kicked over once with the
  ``kick_brazier`` action by a creature in its zone; everyone in the ignited zone saves
  or starts burning.
- **oil slicks**: an asset tagged ``oil_slick`` (data: ``damage``, 2d6) goes up, once,
  when a burning creature enters its zone: fire damage to everyone there.
- **embers**: every fire leaves embers in its zone, which only the GM knows of (GM-only
  plugin state); the GM's ``rekindle`` makes them flare up.
- a critical hit with a fire attack sets the target burning (``zonekeep_attack_made``),
  and every instance of fire damage is written to the server's log (an observer).

Its state: ``kicked`` and ``ignited`` (seen by everyone), ``embers`` (the GM only); its
events: ``wildfire.brazier_kicked``, ``wildfire.slick_ignited``, ``wildfire.burned_out``
(everyone), ``wildfire.embers_left`` and ``wildfire.embers_rekindled`` (the GM).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from zonekeep.sdk import (
    Asset,
    AssetTagSpec,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    EncounterState,
    Event,
    EventTypeSpec,
    ObserverContext,
    Param,
    PluginInfo,
    RuleContext,
    SettingSpec,
    StateSpec,
    apply_damage,
    apply_timed_condition,
    hookimpl,
    plugin_event,
    saving_throw,
)

ZONEKEEP_PLUGIN = PluginInfo(
    name="wildfire",
    version="1.0.0",
    sdk=">=0.1,<0.2",
    description="Burning creatures, braziers to kick over, oil slicks that catch fire.",
)

#: The plugin's name: its namespace, and the key of its state and settings.
PLUGIN = ZONEKEEP_PLUGIN.name
# Every id below is in the plugin's namespace: "wildfire.burning", "wildfire.brazier", ...
# (the hazards example declares a "burning" too: both install side by side).
BURNING = ZONEKEEP_PLUGIN.id("burning")
SOAKED = ZONEKEEP_PLUGIN.id("soaked")
BRAZIER = ZONEKEEP_PLUGIN.id("brazier")
OIL_SLICK = ZONEKEEP_PLUGIN.id("oil_slick")
KICKED = ZONEKEEP_PLUGIN.id("brazier_kicked")
IGNITED = ZONEKEEP_PLUGIN.id("slick_ignited")
BURNED_OUT = ZONEKEEP_PLUGIN.id("burned_out")
EMBERS_LEFT = ZONEKEEP_PLUGIN.id("embers_left")
REKINDLED = ZONEKEEP_PLUGIN.id("embers_rekindled")

#: Defaults of the settings and of the assets' data.
BURN_DIE = "1d6"
BURN_ROUNDS = 3
SOAK = 2
BRAZIER_DC = 13
SLICK_DAMAGE = "2d6"
#: The Dexterity save DC when the GM rekindles embers.
REKINDLE_DC = 12

#: The arena this package ships (``zonekeep_arenas``): "forge".
ARENA_FILE = Path(__file__).with_name("forge.json")

log = logging.getLogger("zonekeep_wildfire")


# -- declarations ---------------------------------------------------------------------------------


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
            "burn_rounds",
            "How many rounds burning lasts unless it is doused.",
            {"type": "integer", "minimum": 1, "maximum": 10},
            BURN_ROUNDS,
        ),
        SettingSpec(
            "soak",
            "How much less fire damage a soaked creature takes.",
            {"type": "integer", "minimum": 0, "maximum": 20},
            SOAK,
        ),
    )


@hookimpl
def zonekeep_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            "burning",
            "Fire damage at the start of each turn; ends after 3 rounds or when doused.",
            name="Burning",
            description="Takes fire damage (burn_die, 1d6) at the start of each of its turns. "
            "It ends after burn_rounds rounds (3), or when the creature spends its action to "
            "douse itself.",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            "soaked",
            "Cannot catch fire; takes 2 less fire damage.",
            name="Soaked",
            description="Dripping wet: it cannot catch fire, and each instance of fire damage "
            "it takes is reduced by the soak setting (2). Lasts until the end of its next turn.",
            durations=("turn_end", "until_removed"),
        ),
    )


@hookimpl
def zonekeep_asset_tags() -> Iterable[AssetTagSpec]:
    return (
        AssetTagSpec(
            "brazier",
            "Kick it over (an action, once) to set the zone beside it burning (Dexterity save).",
            data_schema={
                "type": "object",
                "properties": {
                    "ignites": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The zone set burning.",
                    },
                    "dc": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 30,
                        "default": BRAZIER_DC,
                        "description": "The Dexterity save DC not to catch fire.",
                    },
                },
                "required": ["ignites"],
            },
        ),
        AssetTagSpec(
            "oil_slick",
            "Goes up, once, when a burning creature enters its zone: fire damage to all there.",
            data_schema={
                "type": "object",
                "properties": {
                    "damage": {
                        "type": "string",
                        "format": "dice",
                        "default": SLICK_DAMAGE,
                        "description": "The fire damage to each creature in the zone.",
                    }
                },
            },
        ),
    )


@hookimpl
def zonekeep_plugin_state() -> Iterable[StateSpec]:
    names = {"type": "array", "items": {"type": "string"}}
    return (
        StateSpec("kicked", [], "everyone", "The braziers kicked over, in order.", names),
        StateSpec("ignited", [], "everyone", "The oil slicks that have gone up, in order.", names),
        StateSpec(
            "embers",
            {},
            "gm",
            "Where embers smoulder after a fire: zone -> the asset that burned there.",
            {"type": "object", "additionalProperties": {"type": "string"}},
        ),
    )


def _fold_kicked(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["kicked"].append(data["brazier"])


def _fold_ignited(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["ignited"].append(data["slick"])


def _fold_embers(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["embers"][data["zone"]] = data["source"]


def _fold_rekindled(state: dict[str, Any], data: dict[str, Any]) -> None:
    state["embers"].pop(data["zone"], None)


def _payload(**fields: str) -> dict[str, Any]:
    """The schema of a payload of text fields, all required."""
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": d} for name, d in fields.items()},
        "required": list(fields),
        "additionalProperties": False,
    }


@hookimpl
def zonekeep_event_types() -> Iterable[EventTypeSpec]:
    return (
        EventTypeSpec(
            "brazier_kicked",
            _payload(brazier="the brazier", creature="who kicked it", zone="the zone set burning"),
            _fold_kicked,
            description="A creature kicked a brazier over, setting the zone beside it burning.",
            template="{creature} kicks {brazier} over: fire spreads into {zone}",
            visibility="everyone",
        ),
        EventTypeSpec(
            "slick_ignited",
            _payload(slick="the oil slick", creature="the burning creature", zone="its zone"),
            _fold_ignited,
            description="A burning creature set an oil slick alight.",
            template="{creature} sets {slick} alight: {zone} goes up in flames",
            visibility="everyone",
        ),
        EventTypeSpec(
            "burned_out",
            _payload(creature="the creature"),
            None,  # only recorded: the condition itself has already gone
            description="The flames on a creature burned out by themselves.",
            template="The flames on {creature} burn out",
            visibility="everyone",
        ),
        EventTypeSpec(
            "embers_left",
            _payload(zone="the zone", source="what burned there"),
            _fold_embers,
            description="Embers smoulder where a fire burned (the GM's secret).",
            template="Embers smoulder in {zone}",
        ),
        EventTypeSpec(
            "embers_rekindled",
            _payload(zone="the zone"),
            _fold_rekindled,
            description="The GM made the embers in a zone flare up.",
            template="The embers in {zone} flare up",
        ),
    )


@hookimpl
def zonekeep_arenas() -> Iterable[Mapping[str, Any]]:
    data: dict[str, Any] = json.loads(ARENA_FILE.read_text(encoding="utf-8"))
    return [data]


# -- burning --------------------------------------------------------------------------------------


def ignite(ctx: RuleContext, cid: str, source: str) -> bool:
    """Set creature ``cid`` burning for ``burn_rounds`` rounds; return whether it caught.

    A creature already burning, soaked, out of the fight or immune does not catch.
    """
    creature = ctx.state.creatures[cid]
    if BURNING in creature.conditions or SOAKED in creature.conditions or creature.out_of_fight:
        return False
    rounds = ctx.setting(PLUGIN, "burn_rounds")
    return apply_timed_condition(ctx, cid, BURNING, rounds=rounds, source=source) is not None


def creatures_in(state: EncounterState, zone: str) -> list[str]:
    """The creatures in ``zone`` still in the fight, in roster order."""
    return [c.id for c in state.creatures.values() if c.zone == zone and not c.out_of_fight]


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if BURNING in creature.conditions and not creature.out_of_fight:
        roll = ctx.roll(ctx.setting(PLUGIN, "burn_die"))
        apply_damage(ctx, creature, roll.total, damage_type="fire", roll=roll, source=BURNING)


@hookimpl
def zonekeep_condition_removed(
    ctx: RuleContext, creature: Creature, condition: str, reason: str, expired: bool
) -> None:
    # Only when it ran out by itself: a douse (or the GM) removes it with expired False.
    if condition == BURNING and expired:
        ctx.emit(plugin_event(BURNED_OUT, creature=creature.id))


def _is_burning(state: EncounterState, creature: Creature) -> tuple[str, str] | None:
    if BURNING in creature.conditions:
        return None
    return ("not_burning", f"{creature.name} is not on fire.")


def _douse(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    ctx.emit(ConditionRemoved(me.id, BURNING, "doused"))
    if SOAKED not in ctx.state.creatures[me.id].conditions:
        apply_timed_condition(ctx, me.id, SOAKED, until="end", source="douse")


@hookimpl
def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    target = ctx.state.creatures.get(damage.target)
    if target is None or damage.damage_type != "fire" or SOAKED not in target.conditions:
        return None
    return damage.reduce(ctx.setting(PLUGIN, "soak"), "soaked")


@hookimpl
def zonekeep_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    # A critical hit with a fire attack (a torch, a fire bolt) sets the target alight.
    if result.critical and attack.damage_type == "fire" and damage is not None:
        ignite(ctx, target.id, attacker.id)


# -- braziers -------------------------------------------------------------------------------------


def _braziers_here(state: EncounterState, creature: Creature) -> list[Asset]:
    kicked = state.plugin_state.get(PLUGIN, {}).get("kicked", [])
    return [
        a
        for a in state.arena.assets
        if BRAZIER in a.tags and a.zone == creature.zone and a.id not in kicked
    ]


def _brazier_in_reach(state: EncounterState, creature: Creature) -> tuple[str, str] | None:
    # ``requires`` sees the raw state: plugin_state holds only what an event has changed.
    if _braziers_here(state, creature):
        return None
    return ("no_brazier", f"There is no brazier standing in {creature.name}'s zone.")


def _kick_brazier(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    asset = ctx.state.asset(cmd.params["brazier"])
    if asset is None or BRAZIER not in asset.tags:
        ctx.refuse("invalid_target", f"There is no brazier {cmd.params['brazier']!r}.")
    if asset.zone != me.zone:
        ctx.refuse("out_of_reach", f"{asset.name} is not in {me.name}'s zone.")
    if asset.id in ctx.plugin_state(PLUGIN)["kicked"]:
        ctx.refuse("already_kicked", f"{asset.name} is already lying on the floor.")
    zone = asset.data["ignites"]
    beside = {other for _link, other in ctx.state.arena.neighbours(asset.zone)}
    if zone not in beside:  # the arena's data is checked by its schema, not its geography
        ctx.refuse("invalid_target", f"{asset.name} cannot reach {zone!r}: no zone beside it.")
    ctx.emit(plugin_event(KICKED, brazier=asset.id, creature=me.id, zone=zone))
    ctx.emit(plugin_event(EMBERS_LEFT, zone=zone, source=asset.id))
    dc = asset.data.get("dc", BRAZIER_DC)
    _flames_in(ctx, zone, dc, f"{asset.name} tips over", asset.id)


def _flames_in(ctx: RuleContext, zone: str, dc: int, what: str, source: str) -> None:
    """Everyone in ``zone`` makes a Dexterity save against ``dc`` or starts burning."""
    for cid in creatures_in(ctx.state, zone):
        creature = ctx.state.creatures[cid]
        if BURNING in creature.conditions or SOAKED in creature.conditions:
            continue
        if not saving_throw(ctx, creature, "dex", dc, what):
            ignite(ctx, cid, source)


def _rekindle(ctx: RuleContext, cmd: Command) -> None:
    zone = cmd.params["zone"]
    if zone not in ctx.plugin_state(PLUGIN)["embers"]:
        ctx.refuse("no_embers", f"No embers smoulder in {zone!r}.")
    ctx.emit(plugin_event(REKINDLED, zone=zone))
    _flames_in(ctx, zone, REKINDLE_DC, "the embers flare up", "embers")


# -- oil slicks -----------------------------------------------------------------------------------


@hookimpl
def zonekeep_zone_entered(
    ctx: RuleContext, creature: Creature, from_zone: str, forced: bool
) -> None:
    if BURNING not in creature.conditions or creature.zone is None:
        return
    zone = creature.zone
    for slick in [a for a in ctx.state.assets_in(zone) if OIL_SLICK in a.tags]:
        if slick.id in ctx.plugin_state(PLUGIN)["ignited"]:
            continue
        ctx.emit(plugin_event(IGNITED, slick=slick.id, creature=creature.id, zone=zone))
        ctx.emit(plugin_event(EMBERS_LEFT, zone=zone, source=slick.id))
        roll = ctx.roll(slick.data.get("damage", SLICK_DAMAGE))  # one roll for everyone there
        for cid in creatures_in(ctx.state, zone):
            target = ctx.state.creatures[cid]
            apply_damage(ctx, target, roll.total, damage_type="fire", roll=roll, source=slick.id)


# -- an observer ----------------------------------------------------------------------------------


@hookimpl
def zonekeep_event_applied(ctx: ObserverContext, event: Event) -> None:
    # Watches, never acts: every instance of fire damage goes to the server's log, where an
    # operator can see which fights the fire is running through.
    if isinstance(event, Damaged) and event.damage_type == "fire":
        log.info(
            "encounter %s: %s takes %d fire damage (%s), %d hp left",
            ctx.state.id,
            event.creature,
            event.amount,
            event.source or "fire",
            event.hp,
        )


# -- commands -------------------------------------------------------------------------------------


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "douse",
            _douse,
            "Action: put out the flames on yourself; you are soaked until the end of your next turn.",
            {"creature": Param("creature", True, "the burning creature")},
            costs=("action",),
            requires=_is_burning,
        ),
        CommandSpec(
            "kick_brazier",
            _kick_brazier,
            "Action: kick over a brazier in your zone, setting the zone beside it burning.",
            {
                "creature": Param("creature", True, "who kicks"),
                "brazier": Param("string", True, "the brazier (an asset in the creature's zone)"),
            },
            costs=("action",),
            requires=_brazier_in_reach,
        ),
        CommandSpec(
            "rekindle",
            _rekindle,
            "GM: the embers smouldering in a zone flare up (Dexterity save or burn).",
            {"zone": Param("zone", True, "a zone where embers smoulder")},
            who="gm",
        ),
    )
