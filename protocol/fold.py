"""A reference fold of the GM's view (SPEC.md, "Keeping state from events").

:class:`GmFold` keeps an encounter's state from the GM's snapshot and the ``event`` and
``snapshot`` notifications that follow, with the rules' own reducers
(``zonekeep.sdk.apply_event``): after each event it is the snapshot the server would
send. A ``rewound`` event leaves it invalid (:attr:`GmFold.valid` false) until the
``snapshot`` notification that follows. Plugin events change ``plugin_state`` as their
plugin folds them: give the plugins' catalog (``Engine.catalog``) to fold them too.

A player's or a spectator's snapshot shows some fields in words (an enemy's ``hp``) and
leaves hidden things out, so the rules' reducers cannot run on it; such a client folds
by the table of SPEC.md and takes the next snapshot for what its events do not carry.
"""

from __future__ import annotations

import json
from typing import Any

from zonekeep.sdk import EncounterState, apply_event, converter, event_from_dict, state_to_dict

__all__ = ["FoldGap", "GmFold"]


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
