"""What each seat may see: hidden creatures and hidden notes never reach players or spectators.

Pure functions over a state and plain event dictionaries. The GM sees everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zonekeep.sdk import EncounterState, state_to_dict

HIDDEN_EVENT: dict[str, Any] = {"type": "hidden"}


def hidden_ids(state: EncounterState) -> set[str]:
    """The creatures a player or spectator must not learn about."""
    return {c.id for c in state.creatures.values() if c.hidden}


def _mentions(value: Any, ids: set[str]) -> bool:
    if isinstance(value, str):
        return value in ids
    if isinstance(value, dict):
        return any(k in ids or _mentions(v, ids) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_mentions(v, ids) for v in value)
    return False


def hidden_names(state: EncounterState) -> list[str]:
    """Names of hidden creatures, longest first (so "Ogre Chief" goes before "Ogre")."""
    return sorted(
        {c.name for c in state.creatures.values() if c.hidden and c.name}, key=len, reverse=True
    )


def scrub_names(value: Any, names: list[str]) -> Any:
    """``value`` with every hidden name in its text replaced by "someone"."""
    if not names:
        return value
    if isinstance(value, str):
        for name in names:
            value = value.replace(name, "someone")
        return value
    if isinstance(value, dict):
        return {k: scrub_names(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_names(v, names) for v in value]
    return value


def _without(items: Iterable[Any], ids: set[str]) -> list[Any]:
    return [i for i in items if not _mentions(i, ids)]


def event_for(event: dict[str, Any], state: EncounterState, full: bool) -> dict[str, Any]:
    """``event`` as a seat may see it: itself, a filtered copy, or ``{"type": "hidden"}``."""
    if full:
        return event
    kind = event.get("type")
    if kind in ("plugin_error", "plugin_overran") or (
        kind == "note_added" and event["note"].get("hidden")
    ):
        return HIDDEN_EVENT
    ids = hidden_ids(state)
    if not ids:
        return event
    if kind == "encounter_created":
        return {**event, "creatures": [c for c in event["creatures"] if c["id"] not in ids]}
    if kind == "surprise_determined":
        return {**event, "surprised": [c for c in event["surprised"] if c not in ids]}
    if kind == "positions_established":
        return {**event, "positions": {k: v for k, v in event["positions"].items() if k not in ids}}
    if kind == "initiative_rolled":
        entries = []
        for entry in event["entries"]:
            members = [m for m in entry["members"] if m not in ids]
            if members:
                entries.append({**entry, "members": members})
        return {**event, "entries": entries}
    if _mentions(event, ids):
        return HIDDEN_EVENT
    scrubbed: dict[str, Any] = scrub_names(event, hidden_names(state))
    return scrubbed


def snapshot_for(state: EncounterState, full: bool) -> dict[str, Any]:
    """The state as a seat may see it (the GM's is complete)."""
    data = state_to_dict(state)
    if full:
        return data
    data["notes"] = {k: v for k, v in data["notes"].items() if not v["hidden"]}
    ids = hidden_ids(state)
    if not ids:
        return data
    data["creatures"] = {k: v for k, v in data["creatures"].items() if k not in ids}
    initiative = []
    for entry in data["initiative"]:
        members = [m for m in entry["members"] if m not in ids]
        if members:
            initiative.append({**entry, "members": members})
    data["initiative"] = initiative
    for key in (
        "engagements",
        "adjacent",
        "back_to_back",
        "pending",
        "surprised",
        "reactions_used",
        "plain_overlaps",
    ):
        data[key] = _without(data[key], ids)
    data["turns_taken"] = _without(data["turns_taken"], ids)
    data["last_melee"] = {
        k: v for k, v in data["last_melee"].items() if k not in ids and v not in ids
    }
    data["readied"] = {
        k: v for k, v in data["readied"].items() if k not in ids and not _mentions(v, ids)
    }
    data["condition_effects"] = {
        k: v for k, v in data["condition_effects"].items() if not _mentions(v, ids)
    }
    if data["active"] in ids:
        data["active"] = None
        data["resources"] = None
    if data["maneuver"] is not None and _mentions(data["maneuver"], ids):
        data["maneuver"] = None
    scrubbed: dict[str, Any] = scrub_names(data, hidden_names(state))
    return scrubbed


def scrub(message: str, state: EncounterState, full: bool) -> str:
    """An error sentence with hidden creatures' names replaced by "someone"."""
    if full:
        return message
    result: str = scrub_names(message, hidden_names(state))
    return result
