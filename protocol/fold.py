"""Reference folds (SPEC.md, "Keeping state from events"): the GM's view, and a
player's or a spectator's.

:class:`GmFold` keeps an encounter's state from the GM's snapshot and the ``event`` and
``snapshot`` notifications that follow, with the rules' own reducers
(``zonekeep.sdk.apply_event``): after each event it is the snapshot the server would
send. A ``rewound`` event leaves it invalid (:attr:`GmFold.valid` false) until the
``snapshot`` notification that follows. Plugin events change ``plugin_state`` as their
plugin folds them: give the plugins' catalog (``Engine.catalog``) to fold them too.

:class:`SeatFold` does the same for a player's or a spectator's view, whose snapshot
and events show an enemy's hit points as a word (``max_hp`` null): it folds with the
same reducers, keeping each word beside the state. It is exact while no creature is
hidden from the seat; a hidden creature's events reach the seat as ``hidden`` (they
change nothing but ``seq``), and the ``snapshot`` notification the server sends when
what the seat may see changes brings the state back in line.
"""

from __future__ import annotations

import json
from typing import Any

from zonekeep.sdk import EncounterState
from zonekeep.sdk.host import apply_event, converter, event_from_dict, state_to_dict

__all__ = ["FoldGap", "GmFold", "SeatFold"]


class FoldGap(ValueError):
    """An event skipped a seq: ``join`` again with ``last_seq`` (SPEC.md)."""


class GmFold:
    """The GM's state, kept from events."""

    def __init__(self, snapshot: dict[str, Any], seq: int, catalog: Any = None) -> None:
        self.catalog = catalog
        self.valid = True
        self.seq = seq
        self._state: EncounterState = converter.structure(snapshot, EncounterState)

    @property
    def snapshot(self) -> dict[str, Any]:
        """The state as the server's snapshot of the GM says it (valid only when
        :attr:`valid`), as plain JSON data (pairs are arrays, as on the wire)."""
        data: dict[str, Any] = json.loads(json.dumps(state_to_dict(self._state)))
        return data

    def event(self, seq: int, event: dict[str, Any]) -> None:
        """Apply the event ``seq`` (an ``event`` notification's params). A repeat is
        ignored; a gap raises :class:`FoldGap`."""
        if seq <= self.seq:
            return
        if seq != self.seq + 1:
            raise FoldGap(f"event {seq} after {self.seq}: events {self.seq + 1}.. are missing")
        self.seq = seq
        if event.get("type") == "rewound":
            self.valid = False  # the state after ``to_seq``: the snapshot that follows has it
        if self.valid:
            apply_event(self._state, event_from_dict(event), self.catalog)
        self._state.seq = seq

    def replace(self, seq: int, snapshot: dict[str, Any]) -> None:
        """A ``snapshot`` notification (or result): it replaces the state."""
        self._state = converter.structure(snapshot, EncounterState)
        self.seq = seq
        self.valid = True

    def notification(self, message: dict[str, Any]) -> None:
        """Fold one server message: ``event`` and ``snapshot`` notifications count."""
        params = message.get("params") or {}
        if message.get("method") == "event":
            self.event(params["seq"], params["event"])
        elif message.get("method") == "snapshot":
            self.replace(params["seq"], params["snapshot"])


#: A stat block's fields a seat gets empty for a creature it does not control (SPEC.md,
#: Hidden information, Stat blocks): numbers as null, lists as ``[]``, objects as ``{}``.
SHEET_NUMBERS: tuple[str, ...] = (
    "ac",
    "dex_mod",
    "initiative_bonus",
    "passive_perception",
    "maneuver_dc",
    "spell_dc",
    "proficiency",
)
SHEET_EMPTY: dict[str, Any] = {
    **{
        key: []
        for key in (
            "attacks",
            "traits",
            "actions",
            "damage_resistances",
            "damage_vulnerabilities",
            "damage_immunities",
            "condition_immunities",
            "damage_resistances_nonmagical",
            "damage_immunities_nonmagical",
        )
    },
    **{key: {} for key in ("abilities", "saves", "skills", "resources", "senses")},
}


class SeatFold(GmFold):
    """A player's or a spectator's state, kept from events (see the module's docstring)."""

    def __init__(self, snapshot: dict[str, Any], seq: int, catalog: Any = None) -> None:
        #: Creature id -> its hit points as this seat sees them (a word).
        self.words: dict[str, str] = {}
        #: The creatures whose stat block this seat does not get (their numbers null).
        self.sheetless: set[str] = set()
        super().__init__(self._numbers(snapshot), seq, catalog)

    def _numbers(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        """``snapshot`` with the words kept aside and numbers in their place."""
        data: dict[str, Any] = json.loads(json.dumps(snapshot))
        for cid, creature in data.get("creatures", {}).items():
            self._take_word(cid, creature)
        return data

    def _take_word(self, cid: str, creature: dict[str, Any]) -> None:
        if any(key in creature and creature[key] is None for key in SHEET_NUMBERS):
            self.sheetless.add(cid)
            for key in SHEET_NUMBERS:
                creature[key] = 0 if creature.get(key) is None else creature[key]
        if isinstance(creature.get("hp"), str):
            self.words[cid] = creature["hp"]
            creature["hp"] = 0
        if creature.get("max_hp") is None and cid in self.words:
            creature["max_hp"] = 0
        if "temp_hp" in creature and creature["temp_hp"] is None:  # hidden with the hp
            creature["temp_hp"] = 0

    @property
    def snapshot(self) -> dict[str, Any]:
        data = super().snapshot
        for cid, word in self.words.items():
            creature = data["creatures"].get(cid)
            if creature is not None:
                creature["hp"], creature["max_hp"] = word, None
                if "temp_hp" in creature:
                    creature["temp_hp"] = None
        for cid in self.sheetless:
            creature = data["creatures"].get(cid)
            if creature is not None:
                creature.update(dict.fromkeys(SHEET_NUMBERS), **json.loads(json.dumps(SHEET_EMPTY)))
        return data

    def event(self, seq: int, event: dict[str, Any]) -> None:
        if event.get("type") == "hidden":  # an event this seat may not see
            self._skip(seq)
            return
        event = json.loads(json.dumps(event))
        kind = event.get("type")
        if kind in ("damaged", "healed") and isinstance(event.get("hp"), str):
            self.words[event["creature"]] = event["hp"]
            event["hp"] = 0
        elif (
            kind == "override_applied"
            and event.get("value") is None
            and (event.get("field") in SHEET_NUMBERS or event.get("field") in SHEET_EMPTY)
        ):  # a sheet field of a creature whose stat block this seat does not get
            field = event["field"]
            self.sheetless.add(event["creature"])
            event["value"] = (
                0 if field in SHEET_NUMBERS else json.loads(json.dumps(SHEET_EMPTY[field]))
            )
        elif kind == "temp_hp_changed" and event.get("temp_hp") is None:
            event["temp_hp"] = 0  # an enemy's, hidden like its hit points
        elif (
            kind == "override_applied"
            and event.get("field") == "temp_hp"
            and event.get("value") is None
        ):
            event["value"] = 0
        elif kind == "override_applied" and event.get("field") == "hp":
            if isinstance(event.get("value"), str):
                self.words[event["creature"]] = event["value"]
                event["value"] = 0
            else:
                self.words.pop(event["creature"], None)
        elif kind == "encounter_created":
            for creature in event.get("creatures", []):
                self._take_word(creature["id"], creature)
        elif kind == "creature_added":
            creature = event.get("creature") or {}
            self._take_word(creature.get("id", ""), creature)
        super().event(seq, event)

    def _skip(self, seq: int) -> None:
        if seq <= self.seq:
            return
        if seq != self.seq + 1:
            raise FoldGap(f"event {seq} after {self.seq}: events {self.seq + 1}.. are missing")
        self.seq = seq
        self._state.seq = seq

    def replace(self, seq: int, snapshot: dict[str, Any]) -> None:
        self.words = {}
        super().replace(seq, self._numbers(snapshot))
