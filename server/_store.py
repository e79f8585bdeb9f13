"""Event stores: where an encounter's events, seats and snapshots live.

The server talks only to the :class:`EventStore` interface. Two stores stand
behind it: :class:`InMemoryStore` (nothing survives a restart) and
``SqliteStore`` (``server/_sqlite.py``, the default: durable, embedded).

The write-ahead contract: the server awaits :meth:`EventStore.append` before it
applies, broadcasts or answers anything the events describe.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Collection, Sequence
from typing import Any, Literal, Protocol

import attrs

from zonekeep.sdk import EncounterCreated, Event
from zonekeep.sdk.host import event_to_dict

#: How many keyed requests a store keeps per scope of an encounter (``put_request``): as
#: many as a room remembers per seat (``server/_idempotency.py``, ``KEYS_PER_SEAT``).
REQUESTS_PER_SCOPE = 256

#: The pseudo encounter id under which ``put_request`` keeps the keyed
#: ``create_encounter`` requests (there is no encounter yet); never an encounter's id
#: (those are lower-case letters, digits and dashes), never listed as an encounter.
CREATION = "~creation"


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


#: Where an encounter is in its life: ``"open"`` (not ended; loaded on demand),
#: ``"ended"`` (ended, not yet archived: only for an instant, as an ended encounter is
#: archived at once), ``"archived"`` (out of memory, kept for export and restore).
EncounterStatus = Literal["open", "ended", "archived"]


@attrs.frozen
class EncounterRecord:
    """What the store keeps about an encounter beside its events: for the lobby
    (``list_encounters``), the operator's ``zonekeep encounters`` commands, lazy
    loading and the archiving sweeps. Times are Unix seconds (``time.time()``)."""

    id: str
    title: str
    #: The arena's name (a bundled arena's file stem, or the arena object's ``name``).
    arena: str
    #: Who created it: ``"gm:<name>"`` (a GM key), ``"key:<sha256>"`` (the server key),
    #: ``"ip:<address>"`` (open mode), or ``None`` (the operator: a file or the CLI).
    creator: str | None
    created: float
    #: Last join or command; the archiving sweep measures from it.
    last_activity: float
    status: EncounterStatus = "open"
    #: Listed to anyone (for spectating).
    public: bool = False
    #: The state's phase (``"setup"``, ``"turns"``, ``"ended"``...) and round, as of the
    #: last update the server made.
    phase: str = "setup"
    round: int = 0
    #: The player ids that have seats.
    players: tuple[str, ...] = ()
    #: The encounter file it was created from (``--example``), resolved, else ``None``.
    source: str | None = None


#: An :class:`EncounterRecord`'s fields in order: the column names and the order of the
#: record columns in both durable stores.
RECORD_FIELDS: tuple[str, ...] = tuple(a.name for a in attrs.fields(EncounterRecord))


@attrs.frozen
class GmKey:
    """A GM key as stored: its name and the key's SHA-256 (never the key)."""

    name: str
    key_hash: str
    created: float


@attrs.frozen
class StoredBlob:
    """A stored map image (issue 35): its id (the sha256 of ``data`` in hex), its
    extension (``png``, ``webp``), size in pixels, bytes, the owner who stored it
    first (``gm:NAME``, ``operator``) and when it was last stored or used (Unix seconds:
    its latest upload, or the latest ``save_arena`` of a library arena on it; 0 when
    not known yet: the store sets it). An image nothing uses is forgotten
    :data:`UNUSED_IMAGE_GRACE_DAYS` after that (:meth:`EventStore.forget_unused_images`)."""

    id: str
    ext: str
    width: int
    height: int
    data: bytes = attrs.field(repr=False)
    owner: str = ""
    used: float = attrs.field(default=0.0, eq=False)


@attrs.frozen
class LibraryArena:
    """An arena of the server's library (``save_arena``): its name (the arena's id), the
    owner who saved it (``gm:NAME``, ``operator``) and the arena file's JSON text."""

    name: str
    owner: str
    text: str
    updated: float


#: How long a stored map image that no library arena and no encounter uses is kept after
#: it was last uploaded or saved in an arena (days): the editor uploads a map before its
#: arena is saved, and a GM may take days to finish one (docs/storage.md, "Map images").
UNUSED_IMAGE_GRACE_DAYS = 7


def map_image_of(text: str) -> str | None:
    """The ``map.image`` of an arena's JSON text (a library arena's), if it has one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    drawn = data.get("map") if isinstance(data, dict) else None
    image = drawn.get("image") if isinstance(drawn, dict) else None
    return image if isinstance(image, str) else None


#: What :meth:`EventStore.save_arena` did: saved anew, replaced the owner's own,
#: refused (another owner's name, or the owner's count at ``max_arenas``).
SaveOutcome = Literal["created", "replaced", "taken", "quota"]


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

    async def stored_requests(self, encounter: str) -> list[dict[str, Any]]:
        """The records of the keyed requests stored with ``encounter``'s events (their
        ``_request`` members), oldest first. Raises :class:`StoreError` on failure."""
        ...

    async def remove_grants(self, encounter: str, token_hashes: Collection[str]) -> None:
        """Durably forget the grants of ``token_hashes`` (revoked tokens): they open
        nothing from now on, after a restart too. Raises :class:`StoreError` on failure."""
        ...

    async def put_request(self, encounter: str, scope: str, request_id: str, sealed: str) -> None:
        """Durably keep the sealed record of a keyed request that is not in the log (a GM's
        token request, a lobby request: ``server/_idempotency.py``) under ``request_id`` in
        ``scope`` (``"gm"``, ``"owner"``) of ``encounter``; only the newest
        :data:`REQUESTS_PER_SCOPE` of a scope are kept. Forgotten
        with the encounter. Raises :class:`StoreError` on failure."""
        ...

    async def get_request(self, encounter: str, scope: str, request_id: str) -> str | None:
        """The sealed record :meth:`put_request` kept, or None. :class:`StoreError`."""
        ...

    async def requests_of(self, encounter: str) -> list[tuple[str, str, str]]:
        """Every ``(scope, request_id, sealed)`` :meth:`put_request` kept for
        ``encounter``, oldest first in each scope (``zonekeep store copy`` copies them)."""
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

    # -- records (the lobby, lifecycle and the operator's commands) -------------------------

    async def put_record(self, record: EncounterRecord) -> None:
        """Store ``record`` (insert, or replace the one of its id). :class:`StoreError`.

        One exception: a stored record that is ``"archived"`` stays archived (the rest of
        it is replaced), so a server's late update cannot undo the operator's
        ``zonekeep encounters archive``; :meth:`set_status` reopens one. The first
        :meth:`append` of an encounter (``encounter_created``) makes a record from that
        event (title, arena; ``"archived"`` if it is also marked finished) unless one is
        stored already, so every encounter in the store has one."""
        ...

    async def set_status(
        self, encounter: str, status: EncounterStatus, *, last_activity: float | None = None
    ) -> bool:
        """Change only the status of ``encounter``'s record (and its ``last_activity``, when
        given: restoring one should, or the next archiving sweep takes it again);
        ``False`` if there is no such record."""
        ...

    async def get_record(self, encounter: str) -> EncounterRecord | None: ...

    async def records(
        self,
        *,
        status: EncounterStatus | None = None,
        creator: str | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[EncounterRecord]:
        """The records, oldest first (then by id), optionally only those of ``status`` /
        ``creator`` / among ``ids`` (one query for the records of many encounters)."""
        ...

    async def load(self, encounter: str) -> StoredEncounter | None:
        """What bringing ``encounter`` back needs (latest snapshot and grants), or
        ``None`` when the store has no such encounter."""
        ...

    async def delete(self, encounter: str) -> None:
        """Forget ``encounter`` entirely: events, snapshots, grants and record."""
        ...

    # -- GM keys ------------------------------------------------------------------------------

    async def add_gm_key(self, key: GmKey) -> None:
        """Store a new key; ``ValueError`` if its name is taken."""
        ...

    async def gm_keys(self) -> list[GmKey]:
        """Every key, oldest first."""
        ...

    async def revoke_gm_key(self, name: str) -> bool:
        """Forget the key named ``name``; ``False`` if there was none."""
        ...

    # -- map images and the arena library (issue 35) -------------------------------------------

    async def put_image(self, blob: StoredBlob) -> bool:
        """Store ``blob`` unless an image of its id is stored already (its bytes are
        then the same; its ``used`` time is then moved on to ``blob``'s, or now);
        ``True`` when it was new. ``blob.used`` of 0 is now."""
        ...

    async def image_ids(self) -> list[str]:
        """The ids of every stored image, in order (``zonekeep store copy``)."""
        ...

    async def forget_unused_images(self, before: float) -> list[str]:
        """Delete every image last used before ``before`` (Unix seconds) that no library
        arena and no stored encounter (its ``encounter_created`` event) names, in one
        transaction; their ids. An image in use is never deleted, however old."""
        ...

    async def get_image(self, image_id: str) -> StoredBlob | None:
        """The stored image ``image_id`` (its bytes included), or ``None``."""
        ...

    async def image_bytes(self, owner: str) -> int:
        """How many bytes of images ``owner`` stored first (its quota's use)."""
        ...

    async def save_arena(self, arena: LibraryArena, max_arenas: int) -> SaveOutcome:
        """Save ``arena`` under its name, in one transaction: ``taken`` (nothing
        written) when another owner has that name, ``quota`` when it is new and its owner
        has ``max_arenas`` already. A saved arena's map image is marked used now."""
        ...

    async def delete_arena(self, name: str, owner: str | None) -> LibraryArena | None:
        """Forget the library arena ``name`` if ``owner`` saved it (any owner's when
        ``owner`` is ``None``); the arena as it was (``None``: there was none; one of
        another owner is returned and left in place)."""
        ...

    async def library_arenas(self) -> list[LibraryArena]:
        """Every library arena, by name."""
        ...

    # -- changes made by other processes --------------------------------------------------------

    async def dice_secret(self) -> bytes:
        """The store's secret for fair dice (32 random bytes, made on first use and kept
        for good): every encounter's secret seeds are derived from it (SPEC.md, "Dice";
        docs/dice.md), so they survive a restart without being written anywhere a
        player can read. :class:`StoreError` when it cannot be read."""
        ...

    async def outside_changes(self) -> int:
        """A number that moves whenever another process (the ``zonekeep`` CLI) commits a
        change to the store, and only then (never for this store's own writes): poll it,
        and re-read the records and GM keys when it differs from the value seen last.
        (SQLite: ``PRAGMA data_version`` of the server's connection.)"""
        ...

    async def aclose(self) -> None: ...


def not_to_bring_back(record: EncounterRecord) -> bool:
    """The stores' ``finished`` mark for ``record``: set when it is not open or has ended,
    so :meth:`EventStore.unfinished` (recovery at start) leaves it out."""
    return record.status != "open" or record.phase == "ended"


def record_from_creation(
    encounter: str, first: Event | None, now: float, finished: bool
) -> EncounterRecord:
    """The record an encounter gets from its first event (an ``encounter_created``) when
    nobody stored one: its name and arena, made by the operator (``creator`` unknown,
    ``None``), archived if it has already ended (an imported log)."""
    title = first.name if isinstance(first, EncounterCreated) else ""
    arena = first.arena.id if isinstance(first, EncounterCreated) else ""
    return EncounterRecord(
        id=encounter,
        title=title,
        arena=arena,
        creator=None,
        created=now,
        last_activity=now,
        status="archived" if finished else "open",
        phase="ended" if finished else "surprise",
    )


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
    record: EncounterRecord | None = None
    requests: list[dict[str, Any]] = attrs.field(factory=list)
    #: Scope -> request id -> sealed record (``put_request``), oldest first.
    keyed: dict[str, dict[str, str]] = attrs.field(factory=dict)


class InMemoryStore:
    """Keeps events in memory, at most ``retention`` per encounter (older ones are trimmed).

    Guarantees: appends must be contiguous; a reader asking for events older than
    what is kept can tell from :meth:`oldest_kept` and fall back to a snapshot.
    Nothing survives the process.
    """

    def __init__(self, retention: int = 100_000) -> None:
        self.retention = retention
        self._logs: dict[str, _Log] = {}
        #: The keyed requests of no encounter yet (``create_encounter``'s, under
        #: :data:`CREATION`): scope -> request id -> sealed record, oldest first.
        self._creations: dict[str, dict[str, str]] = {}
        self._gm_keys: list[GmKey] = []
        self._outside = 0
        self._dice_secret = secrets.token_bytes(32)
        self._images: dict[str, StoredBlob] = {}
        self._arenas: dict[str, LibraryArena] = {}

    def bump_outside(self) -> None:
        """Pretend another process changed the store (for tests of the polling)."""
        self._outside += 1

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
        if isinstance(events, EncodedEvents) and events.request is not None and events:
            log.requests.append(events.request)
        if snapshot is not None:
            log.snapshot = (first_seq + len(events) - 1, snapshot)
        log.finished = log.finished or finished
        if first_seq == 1 and log.record is None and events:
            log.record = record_from_creation(encounter, events[0], time.time(), finished)

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

    async def stored_requests(self, encounter: str) -> list[dict[str, Any]]:
        log = self._logs.get(encounter)
        return list(log.requests) if log is not None else []

    async def put_request(self, encounter: str, scope: str, request_id: str, sealed: str) -> None:
        keyed = (
            self._creations
            if encounter == CREATION
            else self._logs.setdefault(encounter, _Log()).keyed
        )
        kept = keyed.setdefault(scope, {})
        kept.pop(request_id, None)
        kept[request_id] = sealed
        while len(kept) > REQUESTS_PER_SCOPE:
            del kept[next(iter(kept))]

    async def get_request(self, encounter: str, scope: str, request_id: str) -> str | None:
        if encounter == CREATION:
            return self._creations.get(scope, {}).get(request_id)
        log = self._logs.get(encounter)
        return log.keyed.get(scope, {}).get(request_id) if log is not None else None

    async def requests_of(self, encounter: str) -> list[tuple[str, str, str]]:
        log = self._logs.get(encounter)
        if log is None:
            return []
        return [
            (scope, rid, sealed)
            for scope, kept in log.keyed.items()
            for rid, sealed in kept.items()
        ]

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

    async def put_record(self, record: EncounterRecord) -> None:
        log = self._logs.setdefault(record.id, _Log())
        if log.record is not None and log.record.status == "archived":
            record = attrs.evolve(record, status="archived")
        log.record = record
        log.finished = not_to_bring_back(record)

    async def set_status(
        self, encounter: str, status: EncounterStatus, *, last_activity: float | None = None
    ) -> bool:
        log = self._logs.get(encounter)
        if log is None or log.record is None:
            return False
        record = attrs.evolve(log.record, status=status)
        if last_activity is not None:
            record = attrs.evolve(record, last_activity=last_activity)
        log.record = record
        log.finished = not_to_bring_back(record)
        return True

    async def get_record(self, encounter: str) -> EncounterRecord | None:
        log = self._logs.get(encounter)
        return log.record if log else None

    async def records(
        self,
        *,
        status: EncounterStatus | None = None,
        creator: str | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[EncounterRecord]:
        found = [log.record for log in self._logs.values() if log.record is not None]
        among = None if ids is None else set(ids)
        return sorted(
            (
                r
                for r in found
                if (status is None or r.status == status)
                and (creator is None or r.creator == creator)
                and (among is None or r.id in among)
            ),
            key=lambda r: (r.created, r.id),
        )

    async def load(self, encounter: str) -> StoredEncounter | None:
        log = self._logs.get(encounter)
        if log is None:
            return None
        seq, data = log.snapshot if log.snapshot else (0, None)
        return StoredEncounter(encounter, seq, data, tuple(log.grants))

    async def delete(self, encounter: str) -> None:
        self._logs.pop(encounter, None)

    async def add_gm_key(self, key: GmKey) -> None:
        if any(k.name == key.name for k in self._gm_keys):
            raise ValueError(f"there is already a GM key named {key.name!r}")
        self._gm_keys.append(key)

    async def gm_keys(self) -> list[GmKey]:
        return sorted(self._gm_keys, key=lambda k: (k.created, k.name))

    async def revoke_gm_key(self, name: str) -> bool:
        before = len(self._gm_keys)
        self._gm_keys = [k for k in self._gm_keys if k.name != name]
        return len(self._gm_keys) < before

    async def dice_secret(self) -> bytes:
        return self._dice_secret

    async def put_image(self, blob: StoredBlob) -> bool:
        used = blob.used or time.time()
        old = self._images.get(blob.id)
        if old is not None:
            self._images[blob.id] = attrs.evolve(old, used=max(old.used, used))
            return False
        self._images[blob.id] = attrs.evolve(blob, used=used)
        return True

    async def image_ids(self) -> list[str]:
        return sorted(self._images)

    async def forget_unused_images(self, before: float) -> list[str]:
        named = {map_image_of(a.text) for a in self._arenas.values()}
        for log in self._logs.values():
            if log.first != 1:
                return []  # its first event was trimmed: what it uses cannot be told
            first = log.events[0] if log.events else None
            if isinstance(first, EncounterCreated) and first.arena.map is not None:
                named.add(first.arena.map.image)
        gone = [i for i, b in sorted(self._images.items()) if b.used < before and i not in named]
        for image_id in gone:
            del self._images[image_id]
        return gone

    async def get_image(self, image_id: str) -> StoredBlob | None:
        return self._images.get(image_id)

    async def image_bytes(self, owner: str) -> int:
        return sum(len(b.data) for b in self._images.values() if b.owner == owner)

    async def save_arena(self, arena: LibraryArena, max_arenas: int) -> SaveOutcome:
        old = self._arenas.get(arena.name)
        if old is not None and old.owner != arena.owner:
            return "taken"
        if old is None and sum(a.owner == arena.owner for a in self._arenas.values()) >= max_arenas:
            return "quota"
        self._arenas[arena.name] = arena
        image = self._images.get(map_image_of(arena.text) or "")
        if image is not None:
            self._images[image.id] = attrs.evolve(image, used=max(image.used, time.time()))
        return "created" if old is None else "replaced"

    async def delete_arena(self, name: str, owner: str | None) -> LibraryArena | None:
        old = self._arenas.get(name)
        if old is not None and (owner is None or old.owner == owner):
            del self._arenas[name]
        return old

    async def library_arenas(self) -> list[LibraryArena]:
        return [self._arenas[name] for name in sorted(self._arenas)]

    async def outside_changes(self) -> int:
        return self._outside

    async def aclose(self) -> None:
        pass


class EncodedEvents(list[Event]):
    """Events together with their JSON texts, encoded once by the room for the store and
    for every member who sees them unchanged (``texts[i]`` is ``events[i]``'s
    :func:`~zonekeep.sdk.host.event_to_dict` as compact ASCII JSON, as :func:`event_texts`
    writes it). A store receives them as any other sequence of events."""

    def __init__(
        self,
        events: Sequence[Event],
        payloads: Sequence[dict[str, Any]],
        texts: Sequence[str],
        request: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(events)
        self.payloads = list(payloads)
        self.texts = list(texts)
        #: The record of the keyed request that caused them (``server/_idempotency.py``),
        #: stored with the first of them as its ``_request`` member.
        self.request = request


def event_json(payload: dict[str, Any]) -> str:
    """An event's payload (:func:`~zonekeep.sdk.host.event_to_dict`) as stored: compact ASCII
    JSON, no NaN."""
    return json.dumps(payload, separators=(",", ":"), allow_nan=False)


def event_texts(events: Sequence[Event]) -> list[str]:
    """The stored JSON text of each of ``events``: the room's own encoding when it
    handed :class:`EncodedEvents` over, else encoded here."""
    if isinstance(events, EncodedEvents):
        if events.request is not None and events.texts:
            return [with_request(events.texts[0], events.request), *events.texts[1:]]
        return events.texts
    return [event_json(event_to_dict(e)) for e in events]


#: The member of a stored event's JSON that holds the record of the keyed request that
#: caused it (only on the first of its events; ``server/_idempotency.py``). The event
#: readers (``zonekeep.sdk.event_from_dict``) leave it out.
REQUEST_MEMBER = "_request"


def with_request(text: str, record: dict[str, Any]) -> str:
    """A stored event's JSON text (an object) with ``record`` as its ``_request``."""
    return f'{text[:-1]},"{REQUEST_MEMBER}":{event_json(record)}}}'


def stored_request(text: str) -> dict[str, Any] | None:
    """The ``_request`` record of a stored event's JSON text, if it has one."""
    if REQUEST_MEMBER not in text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    record = data.get(REQUEST_MEMBER) if isinstance(data, dict) else None
    return record if isinstance(record, dict) else None
