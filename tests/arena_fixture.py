"""A small arena built to exercise every arena rule, and helpers around it."""

from __future__ import annotations

from typing import Any

from zonekeep.sdk import Arena, EncounterOptions, parse_arena
from zonekeep.sdk.testing import EncounterHarness

ARENA: dict[str, Any] = {
    "id": "test-arena",
    "name": "Test arena",
    "zones": [
        {"id": "hall", "name": "Hall", "size": 30},
        {"id": "yard", "name": "Yard", "size": 15},
        {"id": "road", "name": "Road", "size": 30},
        {"id": "garden", "name": "Garden", "size": 15},
        {"id": "roof", "name": "Roof", "size": 15},
        {"id": "pit", "name": "Pit", "size": 15},
        {"id": "closet", "name": "Closet", "size": 15, "capacity": 2, "difficult": True},
        {"id": "sky", "name": "Sky", "size": 60},
        {"id": "tower", "name": "Tower", "size": 15},
    ],
    "links": [
        {"a": "hall", "b": "yard", "direction": "beside"},
        {"a": "yard", "b": "road", "direction": "beside"},
        {"a": "yard", "b": "garden", "direction": "beside"},
        {"a": "yard", "b": "roof", "direction": "above", "mode": "climb"},
        {"a": "hall", "b": "pit", "direction": "below", "clear": False},
        {"a": "hall", "b": "closet", "direction": "beside"},
        {"a": "closet", "b": "garden", "direction": "beside"},
        {"a": "roof", "b": "sky", "direction": "above", "mode": "fly"},
        {"a": "roof", "b": "tower", "direction": "beside"},
    ],
    "straight_lines": [["hall", "yard", "road"]],
    "assets": [
        {
            "id": "table",
            "name": "Table",
            "kind": "prop",
            "zone": "hall",
            "position": {"ac_bonus": 2},
        },
        {"id": "chair", "name": "Chair", "kind": "prop", "zone": "hall"},
        {"id": "rope", "name": "Rope", "kind": "prop", "zone": "hall", "crossing": ["pit"]},
        {
            "id": "spikes",
            "name": "Wall of spikes",
            "kind": "prop",
            "zone": "hall",
            "forced": {
                "save": {
                    "ability": "dex",
                    "damage": "2d6",
                    "damage_type": "piercing",
                    "conditions": ["impaled"],
                }
            },
        },
        {
            "id": "fog",
            "name": "Fog",
            "kind": "element",
            "zone": "yard",
            "position": {"advantage_on": ["stealth"], "disadvantage_on": ["ranged_attack"]},
        },
        {
            "id": "mud",
            "name": "Sucking mud",
            "kind": "terrain",
            "zone": "yard",
            "position": {
                "difficult": True,
                "save": {"ability": "str", "dc": 12, "conditions": ["restrained"]},
            },
        },
        {
            "id": "ledge",
            "name": "Ledge",
            "kind": "prop",
            "zone": "yard",
            "position": {"expertise_on": ["tumble"], "conditions": ["hanging"]},
        },
    ],
}


def arena() -> Arena:
    return parse_arena(ARENA, "test-arena")


def harness(
    creatures: list[Any],
    positions: dict[str, str],
    initiative: list[int],
    *,
    options: EncounterOptions | None = None,
    extra_plugins: list[object] | None = None,
) -> EncounterHarness:
    h = EncounterHarness(
        creatures, arena=arena(), options=options, extra_plugins=extra_plugins or []
    )
    h.start(positions=positions, initiative=initiative)
    return h
