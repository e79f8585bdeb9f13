"""Event stores: where an encounter's events live. The server only talks to the interface.

The in-memory store keeps everything while the process lives; the durable SQLite
store is a separate piece of work and plugs in behind the same interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from zonekeep.sdk import Event


class EventStore(Protocol):
    """An append-only log of events per encounter, numbered by ``seq`` from 1 without gaps."""

    def append(self, encounter: str, first_seq: int, events: Sequence[Event]) -> None:
        """Append ``events``; the first has sequence number ``first_seq``.

        Raises ``ValueError`` if ``first_seq`` is not one past the last stored event.
        """
        ...

    def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        """Every ``(seq, event)`` with ``seq > after``, in order."""
        ...

    def oldest_kept(self, encounter: str) -> int:
        """The lowest ``seq`` still kept (1 unless old events were trimmed)."""
        ...

    def encounters(self) -> list[str]:
        """The ids of the encounters this store holds."""
        ...


@attrs.define
class _Log:
    first: int = 1
    events: list[Event] = attrs.field(factory=list)


class InMemoryStore:
    """Keeps events in memory, at most ``retention`` per encounter (older ones are trimmed).

    Guarantees: appends must be contiguous; a reader asking for events older than
    what is kept can tell from :meth:`oldest_kept` and fall back to a snapshot.
    """

    def __init__(self, retention: int = 100_000) -> None:
        self.retention = retention
        self._logs: dict[str, _Log] = {}

    def append(self, encounter: str, first_seq: int, events: Sequence[Event]) -> None:
        log = self._logs.setdefault(encounter, _Log())
        expected = log.first + len(log.events)
        if first_seq != expected:
            raise ValueError(
                f"encounter {encounter!r}: appending seq {first_seq}, expected {expected}"
            )
        log.events.extend(events)
        extra = len(log.events) - self.retention
        if extra > 0:
            del log.events[:extra]
            log.first += extra

    def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        log = self._logs.get(encounter)
        if log is None:
            return []
        start = max(after + 1, log.first)
        return [
            (seq, log.events[seq - log.first]) for seq in range(start, log.first + len(log.events))
        ]

    def oldest_kept(self, encounter: str) -> int:
        log = self._logs.get(encounter)
        return log.first if log else 1

    def encounters(self) -> list[str]:
        return list(self._logs)
