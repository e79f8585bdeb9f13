"""Crowding: who squeezes in an over-capacity zone.

Shared by the rules that put creatures in zones (``zones`` when one enters,
``setup`` at the positions step, ``initiative`` when one joins mid-fight), so that
none of them imports another (pyproject.toml's import-linter contracts: each rule
plugin may be disabled on its own). Not a plugin itself. The rule is
in ``zones``' docstring.
"""

from __future__ import annotations

from zonekeep.sdk import SQUEEZING, ConditionRemoved, RuleContext, apply_condition

#: The source of the squeezing condition a crowded zone gives.
CROWDED = "crowded zone"


def update_crowding(ctx: RuleContext, zone: str) -> None:
    """Everyone in an over-capacity zone squeezes; nobody squeezes once it is back in."""
    s = ctx.state
    if not s.options.size_limits or not s.arena.has_zone(zone):
        return
    crowded = s.occupancy(zone) > s.arena.zone(zone).capacity
    for c in s.creatures.values():
        if c.zone == zone and crowded and SQUEEZING not in c.conditions:
            apply_condition(ctx, c.id, SQUEEZING, CROWDED)
    if not crowded:
        for c in s.creatures.values():
            if c.zone == zone and SQUEEZING in c.conditions:
                ctx.emit(ConditionRemoved(c.id, SQUEEZING, "the zone is no longer crowded"))
