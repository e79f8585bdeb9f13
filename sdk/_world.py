"""The world changing while the encounter runs: assets placed, changed, hidden, removed,
and effects aimed at a zone rather than at creatures.

Each helper works over a :class:`RuleContext` like the other building blocks: it emits
events (``asset_placed``, ``asset_changed``, ``asset_removed``, ``zone_affected``) and
calls the hooks that let other plugins react, so a replay of the log rebuilds the same
arena and the same hit points.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from ._arena import Asset
from ._context import RuleContext
from ._dice import RollRecord
from ._effects import apply_damage, leave_position, saving_throw
from ._events import AssetChanged, AssetPlaced, AssetRemoved, Damaged, ZoneAffected
from ._vocabulary import ABILITIES

__all__ = ["affect_zone", "change_asset", "place_asset"]

_UNSET: Any = object()


def _free_id(ctx: RuleContext, base: str) -> str:
    taken = {a.id for a in ctx.state.arena.assets} | set(ctx.state.effects)
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def place_asset(ctx: RuleContext, asset: Asset, *, hidden: bool = False) -> Asset:
    """Put ``asset`` into the arena now (the ``asset_placed`` event) and return it.

    Its ``zone`` must be a zone of the arena (else the command is refused,
    ``unknown_zone``). When its ``id`` is already used (by any asset, a hidden one
    included), the next free ``<id>-2``, ``<id>-3`` ... is taken instead, so that
    placing never tells anyone that a hidden asset exists: use the returned asset's id.
    ``hidden``: players and spectators do not see it (nor any event naming it) until
    :func:`change_asset` reveals it. The asset's ``data`` is copied.
    """
    if not ctx.state.arena.has_zone(asset.zone):
        ctx.refuse("unknown_zone", f"There is no zone {asset.zone!r}.")
    placed = attrs.evolve(asset, id=_free_id(ctx, asset.id), data=copy.deepcopy(dict(asset.data)))
    ctx.emit(AssetPlaced(placed, hidden, ctx.actor.id))
    return ctx.state.asset(placed.id) or placed


def change_asset(
    ctx: RuleContext,
    asset_id: str,
    *,
    data: Mapping[str, Any] | None = None,
    hidden: bool | None = None,
    remove: bool = False,
    reason: str = "",
    by_rule: bool = False,
) -> Asset | None:
    """Change asset ``asset_id`` (the arena's, one placed at runtime, or an ongoing
    effect) and return it as it is now (``None`` once removed).

    ``data`` replaces its whole data (``asset_changed``); ``hidden=True`` hides it from
    players and spectators, ``hidden=False`` reveals it; ``remove`` takes it out of the
    arena (``asset_removed``, with ``reason``), after every creature holding a position
    at or in it leaves that position (``position_left``, and the
    ``zonekeep_position_left`` triggers). The removal of a hidden asset stays hidden from
    players, but once it is gone its id is hidden no more: name it in no later event
    (a ``source``) that players see. An unknown id refuses the command
    (``unknown_asset``), as it does for a hidden asset when a player sends it: check
    what a player names before calling this. ``by_rule``: the rules change the asset
    on their own (a spell's asset going when its concentration ends, whoever's command
    ended it), not because the sender named it, so a hidden asset is changed even
    when a player sent the command (an unknown id still raises the refusal).
    """
    asset = ctx.state.asset(asset_id)
    unseen = asset_id in ctx.state.hidden_assets and not ctx.actor.is_gm and not by_rule
    if asset is None or unseen:
        ctx.refuse("unknown_asset", f"There is no asset {asset_id!r}.")
    if data is not None or hidden is not None:
        changed = data is not None and dict(data) != asset.data
        toggled = hidden is not None and hidden != (asset_id in ctx.state.hidden_assets)
        if changed or toggled:
            ctx.emit(
                AssetChanged(
                    asset_id,
                    copy.deepcopy(dict(data)) if changed and data is not None else None,
                    hidden if toggled else None,
                )
            )
    if not remove:
        return ctx.state.asset(asset_id)
    for creature in list(ctx.state.creatures.values()):
        if creature.position == asset_id or asset_id in creature.elements:
            leave_position(ctx, creature, asset, reason or "the asset is gone")
    ctx.emit(AssetRemoved(asset_id, reason, asset_id in ctx.state.hidden_assets))
    return None


def affect_zone(
    ctx: RuleContext,
    zone: str,
    *,
    damage: str | int | RollRecord | None = None,
    damage_type: str = "",
    source: str = "",
    save: str | None = None,
    dc: int = 0,
    half_on_save: bool = True,
    attacker: str | None = None,
    magical: bool = False,
) -> tuple[ZoneAffected, list[Damaged]]:
    """Aim an effect at ``zone``, whoever is in it (nobody, too): the ``zone_affected``
    event, then the damage to every creature in the fight there, then the
    ``zonekeep_zone_affected`` triggers (a web that burns, oil that catches).

    ``damage`` is a dice expression (rolled once, here, for everyone), a fixed amount,
    or a :class:`RollRecord` already rolled; each creature takes it through
    :func:`apply_damage` with the one roll, so its dice are recorded once in the log (on
    the ``zone_affected`` event). With ``save`` (an ability) each creature first saves
    against ``dc`` (``magical``: a spell or other magical effect, which a creature's
    magic resistance sees): a success takes half (``half_on_save``) or nothing. Returns the event
    and the ``damaged`` events, in roster order.
    """
    if not ctx.state.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {zone!r}.")
    if save is not None and save not in ABILITIES:
        raise ValueError(f"save must be one of {', '.join(ABILITIES)}, not {save!r}")
    roll: RollRecord | None = None
    amount = 0
    if isinstance(damage, RollRecord):
        roll, amount = damage, damage.total
    elif isinstance(damage, str):
        roll = ctx.roll(damage)
        amount = roll.total
    elif isinstance(damage, int) and not isinstance(damage, bool):
        amount = damage
    elif damage is not None:
        raise TypeError(f"damage must be dice, an amount or a roll, not {type(damage).__name__}")
    amount = max(0, amount)
    event = ZoneAffected(zone, damage_type, amount, roll, source)
    ctx.emit(event)
    hurt: list[Damaged] = []
    for creature in list(ctx.state.in_zone(zone)):
        share = amount
        if save is not None and saving_throw(
            ctx, creature, save, dc, source or zone, magical=magical
        ):
            share = amount // 2 if half_on_save else 0
        if damage is not None and share > 0:
            hurt.append(
                apply_damage(
                    ctx,
                    ctx.state.creatures[creature.id],
                    share,
                    damage_type=damage_type,
                    roll=roll,
                    source=source,
                    attacker=attacker,
                )
            )
    ctx.hook.zonekeep_zone_affected(ctx=ctx, effect=event)
    return event, hurt
