"""Idempotency keys (SPEC.md, "Idempotency"), as Matrix's transaction ids.

A request that changes an encounter's state may carry a client-chosen
``idempotency_key``. The room answers a repeat of it from the same seat (the GM, or one
player: on any connection, after a resume or a restart) with the first answer, and
does nothing. The key's record is stored with the first event the request caused (a
``_request`` member of that event's stored JSON, which the event readers ignore), so a
restart keeps it; the room reads the records back from its log the first time a keyed
request reaches it after a load, and keeps the last :data:`KEYS_PER_SEAT` of each seat.
A request that was refused, or that caused no event, is not remembered: nothing
happened, and a repeat is handled as new.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from zonekeep.protocol import ProtocolError
from zonekeep.sdk import Event

from ._visibility import Viewer

#: How many keys a room remembers per seat (the oldest is forgotten first).
KEYS_PER_SEAT = 256

#: A request's answer (the result object's JSON data), from the seq of its first event
#: and its events.
Answer = Callable[[int, Sequence[Event]], dict[str, Any]]


def seat_of(role: str, player: str | None) -> str:
    """The seat a key belongs to: ``"gm"``, or ``"player:<id>"``."""
    return "gm" if role == "gm" else f"player:{player}"


def view_of_seat(seat: str) -> Viewer:
    """The view the connections of ``seat`` have (the one its keys are shown to)."""
    if seat == "gm":
        return Viewer(full=True)
    return Viewer(player=seat.partition(":")[2])


def fingerprint(method: str, params: dict[str, Any]) -> str:
    """What a repeat must match: the method and its params, the key left out."""
    rest = {k: v for k, v in params.items() if k != "idempotency_key"}
    text = json.dumps([method, rest], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class Keyed:
    """A keyed request on its way through a room's loop."""

    seat: str
    key: str
    method: str
    fingerprint: str
    #: The request's answer from its events (called when they are stored).
    answer: Answer = attrs.field(eq=False)

    def record(self, first: int, events: Sequence[Event]) -> dict[str, Any]:
        """What is stored with the first of ``events``, and remembered."""
        return {
            "seat": self.seat,
            "key": self.key,
            "method": self.method,
            "fingerprint": self.fingerprint,
            "answer": self.answer(first, events),
        }


class KeyIndex:
    """One room's keys: per seat, key -> (fingerprint, method, answer), newest last."""

    def __init__(self) -> None:
        self.seats: dict[str, OrderedDict[str, tuple[str, str, dict[str, Any]]]] = {}
        #: Whether the records stored in the room's log were read (once per load).
        self.loaded = False

    def remember(self, record: dict[str, Any]) -> None:
        """Keep ``record`` (as stored); records that do not read as one are skipped."""
        try:
            seat, key = str(record["seat"]), str(record["key"])
            entry = (str(record["fingerprint"]), str(record["method"]), dict(record["answer"]))
        except (KeyError, TypeError, ValueError):
            return
        keys = self.seats.setdefault(seat, OrderedDict())
        keys.pop(key, None)
        keys[key] = entry
        while len(keys) > KEYS_PER_SEAT:
            keys.popitem(last=False)

    def answer(self, keyed: Keyed) -> dict[str, Any] | None:
        """The first answer to ``keyed``'s key from its seat, or None (a new key);
        :class:`ProtocolError` (``idempotency_key_reused``) if the key was used by that
        seat for another request."""
        keys = self.seats.get(keyed.seat)
        found = keys.get(keyed.key) if keys is not None else None
        if found is None:
            return None
        print_, method, answer = found
        if print_ != keyed.fingerprint or method != keyed.method:
            raise ProtocolError(
                "idempotency_key_reused",
                f"The idempotency key {keyed.key!r} was used before for another request "
                f"({method}); nothing was done. Use a new key for a new request.",
            )
        return answer
