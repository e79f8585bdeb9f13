"""Event stores: where an encounter's events, seats and snapshots live.

The server talks only to the :class:`EventStore` interface. Two stores stand
behind it: :class:`InMemoryStore` (nothing survives a restart) and
``SqliteStore`` (``server/_sqlite.py``, the default: durable, embedded).

The write-ahead contract: the server awaits :meth:`EventStore.append` before it
applies, broadcasts or answers anything the events describe.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

import attrs

from zonekeep.sdk import Event


class StoreError(RuntimeError):
    """The store could not do what was asked (disk full, read-only, corrupt file)."""


@attrs.frozen
class StoredGrant:
    """A seat or link as stored: the token's SHA-256 (never the token), role and player."""

    token_hash: str
    role: str
    player: str | None = None


@attrs.frozen
class StoredEncounter:
    """What recovery needs to bring an encounter back."""

    id: str
    snapshot_seq: int
    snapshot: dict[str, Any] | None
    grants: tuple[StoredGrant, ...]


class EventStore(Protocol):
    """An append-only log of events per encounter, numbered by ``seq`` from 1 without gaps,
    with the encounter's grants and periodic snapshots."""

    async def append(
        self,
        encounter: str,
        first_seq: int,
        events: Sequence[Event],
        *,
        snapshot: dict[str, Any] | None = None,
        finished: bool = False,
    ) -> None:
        """Durably append ``events`` (the first has ``first_seq``), with an optional
        snapshot of the state after them. Raises :class:`StoreError` on failure (then
        nothing of it is stored) and ``ValueError`` if ``first_seq`` is not the next seq."""
        ...

    async def add_grant(self, encounter: str, grant: StoredGrant) -> None: ...

    async def remove_grants(self, encounter: str, token_hashes: Collection[str]) -> None:
        """Durably forget the grants of ``token_hashes`` (revoked tokens): they open
        nothing from now on, after a restart too. Raises :class:`StoreError` on failure."""
        ...

    async def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        """Every ``(seq, event)`` with ``seq > after``, in order."""
        ...

    async def oldest_kept(self, encounter: str) -> int:
        """The lowest ``seq`` still kept (1 unless old events were trimmed)."""
        ...

    async def unfinished(self) -> list[StoredEncounter]:
        """Every encounter that has not ended, for recovery at start."""
        ...

    async def encounters(self) -> list[str]: ...

    async def aclose(self) -> None: ...


def check_next_seq(encounter: str, first_seq: int, expected: int) -> None:
    """Appends are contiguous: ``ValueError`` unless ``first_seq`` is ``expected``."""
    if first_seq != expected:
        raise ValueError(f"encounter {encounter!r}: appending seq {first_seq}, expected {expected}")


@attrs.define
class _Log:
    first: int = 1
    events: list[Event] = attrs.field(factory=list)
    grants: list[StoredGrant] = attrs.field(factory=list)
    snapshot: tuple[int, dict[str, Any]] | None = None
    finished: bool = False


class InMemoryStore:
    """Keeps events in memory, at most ``retention`` per encounter (older ones are trimmed).

    Guarantees: appends must be contiguous; a reader asking for events older than
    what is kept can tell from :meth:`oldest_kept` and fall back to a snapshot.
    Nothing survives the process.
    """

    def __init__(self, retention: int = 100_000) -> None:
        self.retention = retention
        self._logs: dict[str, _Log] = {}

    def append_now(self, encounter: str, first_seq: int, events: Sequence[Event]) -> None:
        """The synchronous append (for tests and tools that run without trio)."""
        log = self._logs.setdefault(encounter, _Log())
        check_next_seq(encounter, first_seq, log.first + len(log.events))
        log.events.extend(events)
        extra = len(log.events) - self.retention
        if extra > 0:
            del log.events[:extra]
            log.first += extra

    async def append(
        self,
        encounter: str,
        first_seq: int,
        events: Sequence[Event],
        *,
        snapshot: dict[str, Any] | None = None,
        finished: bool = False,
    ) -> None:
        self.append_now(encounter, first_seq, events)
        log = self._logs[encounter]
        if snapshot is not None:
            log.snapshot = (first_seq + len(events) - 1, snapshot)
        log.finished = log.finished or finished

    async def add_grant(self, encounter: str, grant: StoredGrant) -> None:
        self._logs.setdefault(encounter, _Log()).grants.append(grant)

    async def remove_grants(self, encounter: str, token_hashes: Collection[str]) -> None:
        log = self._logs.get(encounter)
        if log is not None:
            log.grants = [g for g in log.grants if g.token_hash not in token_hashes]

    def read_now(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        log = self._logs.get(encounter)
        if log is None:
            return []
        start = max(after + 1, log.first)
        end = log.first + len(log.events)
        return [(seq, log.events[seq - log.first]) for seq in range(start, end)]

    async def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        return self.read_now(encounter, after)

    async def oldest_kept(self, encounter: str) -> int:
        log = self._logs.get(encounter)
        return log.first if log else 1

    async def unfinished(self) -> list[StoredEncounter]:
        found = []
        for eid, log in self._logs.items():
            if not log.finished:
                seq, data = log.snapshot if log.snapshot else (0, None)
                found.append(StoredEncounter(eid, seq, data, tuple(log.grants)))
        return found

    async def encounters(self) -> list[str]:
        return list(self._logs)

    async def aclose(self) -> None:
        pass
