"""The one core of the two SQL stores: the queries, the record logic and group commit.

:class:`SqlStore` is the :class:`~zonekeep.server._store.EventStore` both durable stores
are; ``SqliteStore`` (``server/_sqlite.py``) and ``PostgresStore``
(``server/_postgres.py``) are its two dialects, beside it. What a dialect says:

- how to run a function on its connection in a worker thread, in one transaction
  (:meth:`SqlStore._in_db`), handing it a :class:`Db`: the statements here are written
  once, with ``?`` for parameters, and each dialect's :class:`Db` runs them in its own
  driver's way (``%s`` for psycopg);
- how a batch of appends is written (:meth:`SqlStore._write`: SQLite's single
  ``INSERT``, PostgreSQL's ``unnest`` and the lease fence);
- its errors (:attr:`SqlStore._errors`), how it makes and migrates its layout, and how
  it notices other processes' changes.

The SQL here is what SQLite (3.24 and later) and PostgreSQL both read: ``ON CONFLICT``,
``TRUE``/``FALSE``, ``excluded.``.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from typing import Any, Generic, Protocol, TypeVar

import attrs
import trio

from zonekeep.sdk import Event
from zonekeep.sdk.host import event_from_dict

from . import _metrics
from ._store import (
    RECORD_FIELDS,
    REQUESTS_PER_SCOPE,
    EncounterRecord,
    EncounterStatus,
    GmKey,
    LibraryArena,
    SaveOutcome,
    StoredBlob,
    StoredEncounter,
    StoredGrant,
    StoreError,
    check_next_seq,
    event_texts,
    map_image_of,
    not_to_bring_back,
    record_from_creation,
    stored_request,
)

log = logging.getLogger("zonekeep.store")

_T = TypeVar("_T")
_C = TypeVar("_C")


class Cursor(Protocol):
    """What a statement answers, in both drivers."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Db(ABC):
    """One connection inside one transaction, in the worker thread: the shared queries
    run through it."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run ``sql`` (parameters written ``?``) with ``params``."""

    def changed(self) -> None:  # noqa: B027 (a dialect may ignore it)
        """Count a change other processes should notice (records, grants, GM keys)."""

    @abstractmethod
    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Any]:
        """A condition ``column`` is one of ``values`` as one parameter: the clause and
        the parameter's value."""

    def wait_for_writers(self, encounters: Sequence[str]) -> None:  # noqa: B027
        """Wait until no other transaction may still be appending to ``encounters`` (one
        whose commit this store lost track of): reading the log back after it is safe."""


# -- the layout --------------------------------------------------------------------------------


def log_tables(seq: str, suffix: str = "") -> str:
    """The event, snapshot and grant tables (as every store version has them), in a
    dialect's words: ``seq``'s column type and what follows each keyed table."""
    return f"""
CREATE TABLE events (
    encounter TEXT NOT NULL,
    seq {seq} NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (encounter, seq)
){suffix};
CREATE TABLE snapshots (
    encounter TEXT NOT NULL,
    seq {seq} NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (encounter, seq)
){suffix};
CREATE TABLE grants (
    encounter TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    player TEXT,
    PRIMARY KEY (encounter, token_hash)
);
"""


def statements(script: str) -> list[str]:
    """The statements of a ``;``-separated script."""
    return [s for s in script.split(";") if s.strip()]


@attrs.frozen
class Migration(Generic[_C]):
    """The step from store version ``N`` to ``N + 1`` (``MIGRATIONS[N]``): ``apply`` runs
    inside the one transaction of the whole upgrade, so it must not commit."""

    description: str
    apply: Callable[[_C], None]


def check_version(version: int, latest: int, steps: Collection[int], where: str, what: str) -> int:
    """``version`` (a store's, as read from ``meta``) if this zonekeep can use it (as it
    is, or by migrating it through ``steps``); else :class:`StoreError`, the store
    (``what``: "file", "database") left untouched."""
    if version > latest:
        raise StoreError(
            f"{where}: made by a newer zonekeep (store version {version}; this one reads up to "
            f"{latest}). Upgrade zonekeep; the {what} was left untouched."
        )
    if version < 1 or any(v not in steps for v in range(version, latest)):
        raise StoreError(
            f"{where}: store version {version} is too old to migrate to {latest}; "
            f"the {what} was left untouched."
        )
    return version


def migrate(
    conn: _C,
    db: Db,
    migrations: dict[int, Migration[_C]],
    span: tuple[int, int],
    where: str,
    what: str,
    version: str,
) -> None:
    """Apply the migrations from ``span[0]`` to ``span[1]`` on ``conn`` (in the caller's
    transaction), recording each in ``schema_migrations`` and the new version in
    ``meta``; a failing step is a :class:`StoreError` that names it."""
    now = time.time()
    for v in range(*span):
        step = migrations[v]
        try:
            step.apply(conn)
        except Exception as exc:
            raise StoreError(
                f"{where}: migrating the store from version {v} to {v + 1} failed "
                f"({type(exc).__name__}: {reason(exc)}); the {what} was left untouched."
            ) from exc
        db.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
            (v + 1, step.description, now, version),
        )
        log.info("%s: store migrated to version %d (%s)", where, v + 1, step.description)
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(span[1]),))


# -- appends -----------------------------------------------------------------------------------


@attrs.define(eq=False)
class Append:
    """One :meth:`SqlStore.append` waiting for (or in) a batch."""

    encounter: str
    first_seq: int
    types: list[str]
    datas: list[str]
    snapshot: str | None
    finished: bool
    #: The encounter's record, made from its first event (a first append only); stored
    #: unless the encounter has one already.
    record: EncounterRecord | None = None
    #: The lease epoch the append is fenced by (a node's); ``None``: not fenced.
    epoch: int | None = None
    #: Set when the request was written (or failed: ``error``), or when its task is
    #: asked to write the next batch, which holds it (``written`` still False).
    done: trio.Event = attrs.field(factory=trio.Event)
    written: bool = False
    error: Exception | None = None

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.types) - 1


def reason(exc: BaseException) -> str:
    """An error's message, first line only (psycopg adds context lines)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


class SqlStore(ABC):
    """A durable :class:`~zonekeep.server._store.EventStore` in a SQL database: what both
    dialects share. A subclass sets :attr:`_errors` and implements the abstract methods."""

    #: The driver's errors: turned into :class:`StoreError` (with the store's location).
    _errors: tuple[type[BaseException], ...] = ()
    #: The driver's error for a GM key whose name is taken.
    _duplicate: tuple[type[BaseException], ...] = ()

    def __init__(self) -> None:
        self._pending: list[Append] = []
        self._flushing = False
        self._next_seq: dict[str, int] = {}
        #: How many transactions and appends were written (for benchmarks).
        self.transactions = 0
        self.appends = 0

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store is, for the operator's messages (never with a password)."""

    @abstractmethod
    async def _in_db(
        self, fn: Callable[..., _T], *args: Any, write: bool, timeout: float | None = None
    ) -> _T:
        """``fn(db, *args)`` in a worker thread, in one transaction (a writing one when
        ``write``), committed when ``fn`` returns and rolled back when it raises; a
        dialect that can give up waiting does so after ``timeout`` seconds (``None``:
        its own)."""

    @abstractmethod
    async def _write(self, batch: list[Append]) -> Collection[Append]:
        """Write ``batch`` in one transaction; the appends left out (fenced)."""

    @abstractmethod
    async def outside_changes(self) -> int: ...

    @abstractmethod
    async def aclose(self) -> None: ...

    def _reason(self, exc: BaseException) -> str:
        return reason(exc)

    def _epoch(self, encounter: str) -> int | None:
        """The epoch an append of ``encounter`` is fenced by (``None``: not fenced);
        :class:`StoreError` when it may not be appended to at all."""
        return None

    def _lost(self, request: Append) -> StoreError:
        """The error of an append the fence left out."""
        return StoreError(f"{self.location}: {request.encounter} was not saved")

    @property
    def _fenced(self) -> bool:
        """Whether every append is fenced by a lease (a node's store)."""
        return False

    def _outcome_unknown(self, exc: BaseException) -> bool:
        """Whether a batch that failed with ``exc`` may have been committed all the same
        (the connection was lost, or the call given up, after ``COMMIT`` may have been
        sent): then the log is read back (:meth:`_settle`)."""
        return False

    def _give_up(self, request: Append, error: StoreError) -> StoreError:
        """The outcome of ``request`` stays unknown: the error for it. A dialect whose
        commits can end so gives the encounter up (the next load reads the truth)."""
        return error

    async def _settle(self, batch: list[Append]) -> tuple[list[Append], list[Append]]:
        """After a commit whose outcome is unknown, read the log back: the appends of
        ``batch`` found stored (committed after all), and those whose outcome stays
        unknown (the store could not be read, or holds other events at their seqs). The
        rest were not stored."""
        log.warning("%s: a commit's outcome is unknown; reading the log back", self.location)
        try:
            return await self._in_db(_find_appends, batch, write=True)
        except Exception as exc:
            log.error("%s: the log could not be read back: %s", self.location, self._reason(exc))
            return [], [r for r in batch if r.types]

    async def _doing(
        self, what: str, fn: Callable[..., _T], *args: Any, timeout: float | None = None
    ) -> _T:
        try:
            return await self._in_db(fn, *args, write=True, timeout=timeout)
        except self._errors as exc:
            raise StoreError(f"{self.location}: could not {what}: {self._reason(exc)}") from None

    async def _reading(self, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        try:
            return await self._in_db(fn, *args, write=False)
        except self._errors as exc:
            raise StoreError(
                f"{self.location}: could not read {what}: {self._reason(exc)}"
            ) from None

    # -- writing ------------------------------------------------------------------------------

    async def append(
        self,
        encounter: str,
        first_seq: int,
        events: Sequence[Event],
        *,
        snapshot: dict[str, Any] | None = None,
        finished: bool = False,
    ) -> None:
        epoch = self._epoch(encounter)
        check_next_seq(encounter, first_seq, self._next_seq.get(encounter, 1))
        request = Append(
            encounter,
            first_seq,
            [e.type for e in events],
            event_texts(events),
            dumps(snapshot) if snapshot is not None else None,
            finished,
            record_from_creation(encounter, events[0], time.time(), finished)
            if first_seq == 1 and events
            else None,
            epoch,
        )
        self._pending.append(request)
        # Shielded: once queued, an append is written (or fails) before its task moves
        # on, and a task asked to write the next batch always does so.
        with trio.CancelScope(shield=True):
            if self._flushing:
                await request.done.wait()
            if not request.written:
                await self._write_next_batch()
        if request.error is not None:
            raise request.error

    async def _write_next_batch(self) -> None:
        """Write every pending append as one batch (one transaction), then hand the
        writing of whatever was queued meanwhile to the task of its first append.

        Each task writes at most the one batch that holds its own append: a task that
        kept writing while others kept appending would hold its own room back (its
        events were stored, but it could not broadcast them) for as long as the server
        stayed busy, which under saturation was seconds (docs/performance.md).
        """
        self._flushing = True
        batch: list[Append] = []
        try:
            # Let the other tasks that are ready to append (often just woken by the
            # previous commit) join this transaction before it starts.
            await trio.lowlevel.checkpoint()
            batch, self._pending = self._pending, []
            started = time.perf_counter()
            try:
                fenced = await self._write(batch)
            except Exception as exc:
                if not isinstance(exc, self._errors):
                    log.exception("writing a batch of events failed")
                error = StoreError(f"{self.location}: could not save: {self._reason(exc)}")
                stored, unknown = (
                    await self._settle(batch) if self._outcome_unknown(exc) else ([], [])
                )
                _metrics.current().store_committed(
                    time.perf_counter() - started, None if stored else error
                )
                for request in batch:
                    if request in stored:
                        self._next_seq[request.encounter] = request.last_seq + 1
                    elif request in unknown:
                        request.error = self._give_up(request, error)
                    else:
                        request.error = error
            else:
                _metrics.current().store_committed(time.perf_counter() - started)
                self.transactions += 1
                self.appends += len(batch)
                for request in batch:
                    if request in fenced:
                        request.error = self._lost(request)
                    else:
                        self._next_seq[request.encounter] = request.last_seq + 1
        finally:
            for request in batch:
                request.written = True
                request.done.set()
            if self._pending:
                self._pending[0].done.set()  # its task writes the next batch
            else:
                self._flushing = False

    async def add_grant(self, encounter: str, grant: StoredGrant) -> None:
        await self._doing("save the grant", _insert_grant, encounter, grant)

    async def remove_grants(self, encounter: str, token_hashes: Collection[str]) -> None:
        await self._doing("revoke the grant", _delete_grants, encounter, list(token_hashes))

    # -- reading ------------------------------------------------------------------------------

    async def put_request(self, encounter: str, scope: str, request_id: str, sealed: str) -> None:
        await self._doing(
            "keep a request's answer", _put_request, encounter, scope, request_id, sealed
        )

    async def get_request(self, encounter: str, scope: str, request_id: str) -> str | None:
        return await self._reading("a request's answer", _get_request, encounter, scope, request_id)

    async def requests_of(self, encounter: str) -> list[tuple[str, str, str]]:
        return await self._reading("the requests' answers", _requests_of, encounter)

    async def stored_requests(self, encounter: str) -> list[dict[str, Any]]:
        rows = await self._reading("the idempotency keys", _read_requests, encounter)
        return [r for r in (stored_request(str(data)) for (data,) in rows) if r is not None]

    async def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        rows = await self._reading("the events", _read_events, encounter, after)
        return [(int(seq), event_from_dict(json.loads(data))) for seq, data in rows]

    async def oldest_kept(self, encounter: str) -> int:
        return 1

    async def unfinished(self) -> list[StoredEncounter]:
        return await self._reading("the unfinished encounters", _unfinished)

    async def encounters(self) -> list[str]:
        rows = await self._reading("the encounters", fetch, _ENCOUNTERS, ())
        return [str(r[0]) for r in rows]

    # -- records (the lobby, lifecycle, the operator's commands) ------------------------------

    async def put_record(self, record: EncounterRecord) -> None:
        await self._doing(f"save the record of {record.id}", _put_record, record)

    async def set_status(
        self, encounter: str, status: EncounterStatus, *, last_activity: float | None = None
    ) -> bool:
        return await self._doing(
            f"change the status of {encounter}", _set_status, encounter, status, last_activity
        )

    async def get_record(self, encounter: str) -> EncounterRecord | None:
        found = await self._reading("the record", _select_records, {"id": encounter})
        return found[0] if found else None

    async def records(
        self,
        *,
        status: EncounterStatus | None = None,
        creator: str | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[EncounterRecord]:
        if ids is not None and not ids:
            return []
        return await self._reading(
            "the records",
            _select_records,
            {"status": status, "creator": creator},
            None if ids is None else list(ids),
        )

    async def load(self, encounter: str) -> StoredEncounter | None:
        found = await self._reading("the encounter", _load, encounter)
        if found is None:
            return None
        stored, next_seq = found
        # The store is the truth for an encounter being loaded: another process may have
        # deleted it or imported one under its id since this store last appended to it.
        # A node loads an encounter only once it took its lease: no append of this
        # store's can still land after the read (the lease fences the older ones out).
        if self._fenced or (not self._flushing and not self._pending):
            self._next_seq[encounter] = next_seq
        return stored

    async def delete(self, encounter: str) -> None:
        await self._doing(f"delete {encounter}", _delete, encounter)
        self._next_seq.pop(encounter, None)

    async def log_summary(self, encounter: str) -> tuple[int, int, dict[str, int]]:
        """For the operator (``zonekeep encounters show``): how many events ``encounter``
        has, its last seq (0: none), and its grants counted by role."""
        return await self._reading("the log", _log_summary, encounter)

    # -- GM keys ------------------------------------------------------------------------------

    async def add_gm_key(self, key: GmKey) -> None:
        try:
            await self._in_db(_add_gm_key, key, write=True)
        except self._duplicate:
            raise ValueError(f"there is already a GM key named {key.name!r}") from None
        except self._errors as exc:
            raise StoreError(
                f"{self.location}: could not save the GM key: {self._reason(exc)}"
            ) from None

    async def gm_keys(self) -> list[GmKey]:
        rows = await self._reading("the GM keys", fetch, _GM_KEYS, ())
        return [GmKey(str(name), str(h), float(created)) for name, h, created in rows]

    async def revoke_gm_key(self, name: str) -> bool:
        return await self._doing("revoke the GM key", _revoke_gm_key, name)

    # -- map images and the arena library ----------------------------------------------------

    async def put_image(self, blob: StoredBlob) -> bool:
        return await self._doing("store the image", _put_image, blob)

    async def get_image(self, image_id: str) -> StoredBlob | None:
        return await self._reading("the image", _get_image, image_id)

    async def image_ids(self) -> list[str]:
        rows = await self._reading("the images", fetch, "SELECT id FROM images ORDER BY id", ())
        return [str(image_id) for (image_id,) in rows]

    async def forget_unused_images(self, before: float) -> list[str]:
        return await self._doing("forget the unused images", _forget_unused_images, before)

    async def image_bytes(self, owner: str) -> int:
        rows = await self._reading("the images", fetch, _IMAGE_BYTES, (owner,))
        return int(rows[0][0] or 0) if rows else 0

    async def save_arena(self, arena: LibraryArena, max_arenas: int) -> SaveOutcome:
        return await self._doing("save the arena", _save_arena, arena, max_arenas)

    async def delete_arena(self, name: str, owner: str | None) -> LibraryArena | None:
        return await self._doing("delete the arena", _delete_arena, name, owner)

    async def library_arenas(self) -> list[LibraryArena]:
        rows = await self._reading("the arena library", fetch, _LIBRARY, ())
        return [LibraryArena(str(n), str(o), str(t), float(u)) for n, o, t, u in rows]

    # -- the dice secret ----------------------------------------------------------------------

    async def dice_secret(self) -> bytes:
        """The store's dice secret (``meta.dice_secret``), made on first use: a key in the
        meta table needs no new layout, so the store version does not change."""
        try:
            return await self._doing("read the dice secret", _dice_secret)
        except ValueError as exc:
            raise StoreError(f"{self.location}: could not read the dice secret: {exc}") from None

    async def adopt_dice_secret(self, secret: bytes) -> None:
        """Make ``secret`` the store's dice secret (``zonekeep store copy``: the copied
        encounters' dice stay verifiable)."""
        await self._doing("save the dice secret", _adopt_dice_secret, secret.hex())


# -- the queries (run in the worker thread) ------------------------------------------------------

_ENCOUNTERS = "SELECT id FROM encounters ORDER BY created, id"
_GM_KEYS = "SELECT name, key_hash, created FROM gm_keys ORDER BY created, name"


def fetch(db: Db, sql: str, params: Sequence[Any]) -> list[Any]:
    return db.execute(sql, params).fetchall()


def _find_appends(db: Db, batch: list[Append]) -> tuple[list[Append], list[Append]]:
    """The appends of ``batch`` whose events are stored as they were sent, and those whose
    seqs hold other events (see :meth:`SqlStore._settle`)."""
    db.wait_for_writers(sorted({r.encounter for r in batch}))
    stored, foreign = [], []
    for r in batch:
        if not r.types:  # a snapshot alone: nothing a client waits for
            continue
        rows = db.execute(
            "SELECT data FROM events WHERE encounter=? AND seq>=? AND seq<=? ORDER BY seq",
            (r.encounter, r.first_seq, r.last_seq),
        ).fetchall()
        datas = [str(data) for (data,) in rows]
        if datas == r.datas:
            stored.append(r)
        elif datas:
            foreign.append(r)
    return stored, foreign


def load_next_seqs(db: Db) -> dict[str, int]:
    rows = db.execute("SELECT encounter, MAX(seq) FROM events GROUP BY encounter").fetchall()
    return {str(eid): int(seq) + 1 for eid, seq in rows}


def _insert_grant(db: Db, encounter: str, grant: StoredGrant) -> None:
    db.execute(
        "INSERT INTO grants (encounter, token_hash, role, player) VALUES (?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (encounter, grant.token_hash, grant.role, grant.player),
    )
    db.changed()


def _delete_grants(db: Db, encounter: str, token_hashes: list[str]) -> None:
    clause, value = db.one_of("token_hash", token_hashes)
    db.execute(f"DELETE FROM grants WHERE encounter=? AND {clause}", (encounter, value))
    db.changed()


# The keyed requests kept apart from the log live in ``meta`` (no new layout, so the
# store version does not change), one row each: key ``request:<encounter>/<scope>:<id>``,
# value ``{"n": <its order in the scope>, "at": <time>, "sealed": <the sealed record>}``.


def _request_prefix(encounter: str, scope: str = "") -> str:
    return f"request:{encounter}/{scope}:" if scope else f"request:{encounter}/"


def _put_request(db: Db, encounter: str, scope: str, request_id: str, sealed: str) -> None:
    prefix = _request_prefix(encounter, scope)
    # (The length is a literal: an int parameter's type differs between the dialects.)
    rows = db.execute(
        f"SELECT key, value FROM meta WHERE substr(key, 1, {len(prefix):d}) = ?", (prefix,)
    ).fetchall()
    order = {str(key): _request_order(str(value)) for key, value in rows}
    order.pop(prefix + request_id, None)
    n = max(order.values(), default=0) + 1
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (prefix + request_id, dumps({"n": n, "at": time.time(), "sealed": sealed})),
    )
    extra = len(order) + 1 - REQUESTS_PER_SCOPE
    for key in sorted(order, key=lambda k: (order[k], k))[: max(0, extra)]:
        db.execute("DELETE FROM meta WHERE key=?", (key,))


def _request_order(value: str) -> int:
    """The order of a kept request in its scope (its ``n``): the oldest is the lowest."""
    try:
        return int(json.loads(value)["n"])
    except (ValueError, KeyError, TypeError):
        return 0  # unreadable: the first to go


def _get_request(db: Db, encounter: str, scope: str, request_id: str) -> str | None:
    row = db.execute(
        "SELECT value FROM meta WHERE key=?", (_request_prefix(encounter, scope) + request_id,)
    ).fetchone()
    if row is None:
        return None
    try:
        sealed = json.loads(str(row[0]))["sealed"]
    except (ValueError, KeyError, TypeError):
        return None
    return sealed if isinstance(sealed, str) else None


def _requests_of(db: Db, encounter: str) -> list[tuple[str, str, str]]:
    prefix = _request_prefix(encounter)
    rows = db.execute(
        f"SELECT key, value FROM meta WHERE substr(key, 1, {len(prefix):d}) = ?", (prefix,)
    ).fetchall()
    found: list[tuple[int, str, str, str]] = []
    for key, value in rows:
        scope, _, rid = str(key)[len(prefix) :].partition(":")
        try:
            sealed = json.loads(str(value))["sealed"]
        except (ValueError, KeyError, TypeError):
            continue
        if rid and isinstance(sealed, str):
            found.append((_request_order(str(value)), scope, rid, sealed))
    found.sort()
    return [(scope, rid, sealed) for _, scope, rid, sealed in found]


def _read_requests(db: Db, encounter: str) -> list[tuple[str]]:
    """The stored texts of ``encounter``'s events that may hold a keyed request's record
    (``LIKE``'s ``_`` matches any character: a few more rows, which
    :func:`stored_request` leaves out)."""
    rows: list[tuple[str]] = db.execute(
        "SELECT data FROM events WHERE encounter=? AND data LIKE ? ORDER BY seq",
        (encounter, '%"_request":%'),
    ).fetchall()
    return rows


def _read_events(db: Db, encounter: str, after: int) -> list[tuple[int, str]]:
    return db.execute(
        "SELECT seq, data FROM events WHERE encounter=? AND seq>? ORDER BY seq", (encounter, after)
    ).fetchall()


def _stored(db: Db, eid: str) -> StoredEncounter:
    snap = db.execute(
        "SELECT seq, data FROM snapshots WHERE encounter=? ORDER BY seq DESC LIMIT 1", (eid,)
    ).fetchone()
    grants = tuple(
        StoredGrant(h, role, player)
        for h, role, player in db.execute(
            "SELECT token_hash, role, player FROM grants WHERE encounter=? ORDER BY token_hash",
            (eid,),
        ).fetchall()
    )
    return StoredEncounter(
        eid, int(snap[0]) if snap else 0, json.loads(snap[1]) if snap else None, grants
    )


def _unfinished(db: Db) -> list[StoredEncounter]:
    ids = db.execute("SELECT id FROM encounters WHERE NOT finished ORDER BY created, id")
    return [_stored(db, eid) for (eid,) in ids.fetchall()]


def _load(db: Db, eid: str) -> tuple[StoredEncounter, int] | None:
    """The encounter's latest snapshot and grants, and its next seq (from one read
    transaction, so another process's write cannot fall between them)."""
    if db.execute("SELECT 1 FROM encounters WHERE id=?", (eid,)).fetchone() is None:
        return None
    last = db.execute("SELECT MAX(seq) FROM events WHERE encounter=?", (eid,)).fetchone()
    return _stored(db, eid), int(last[0] or 0) + 1 if last else 1


RECORD_COLUMNS = ", ".join((*RECORD_FIELDS, "finished"))
RECORD_SLOTS = ", ".join("?" * (len(RECORD_FIELDS) + 1))


def record_row(record: EncounterRecord) -> tuple[Any, ...]:
    """``record`` as the values of :data:`RECORD_COLUMNS` (``finished`` last)."""
    values = attrs.astuple(record, recurse=False)
    players = RECORD_FIELDS.index("players")
    return (
        *values[:players],
        json.dumps(list(record.players)),
        *values[players + 1 :],
        not_to_bring_back(record),
    )


def insert_record(db: Db, record: EncounterRecord) -> None:
    """Store ``record`` unless its encounter has one (a first append's)."""
    db.execute(
        f"INSERT INTO encounters ({RECORD_COLUMNS}) VALUES ({RECORD_SLOTS}) "
        "ON CONFLICT (id) DO NOTHING",
        record_row(record),
    )


def insert_records(db: Db, batch: Sequence[Append]) -> bool:
    """Give each new encounter of ``batch`` (a first append) its record, unless it has
    one; whether there was any."""
    created = False
    now = time.time()
    for r in batch:
        if r.first_seq == 1:
            insert_record(db, r.record or record_from_creation(r.encounter, None, now, r.finished))
            created = True
    return created


def finish_batch(db: Db, batch: Sequence[Append]) -> None:
    """What follows a batch's events: its snapshots and its finished marks."""
    for r in batch:
        if r.snapshot is not None:
            db.execute(
                "INSERT INTO snapshots (encounter, seq, data) VALUES (?, ?, ?) "
                "ON CONFLICT (encounter, seq) DO UPDATE SET data = excluded.data",
                (r.encounter, r.last_seq, r.snapshot),
            )
        if r.finished:
            db.execute("UPDATE encounters SET finished=TRUE WHERE id=?", (r.encounter,))


#: One statement: insert, or replace every column but an ``"archived"`` status (and its
#: ``finished`` mark), which only :func:`_set_status` changes.
_PUT_RECORD = (
    f"INSERT INTO encounters ({RECORD_COLUMNS}) VALUES ({RECORD_SLOTS}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c}=excluded.{c}" for c in RECORD_FIELDS if c not in ("id", "status"))
    + ", status=CASE WHEN encounters.status='archived' THEN encounters.status "
    "ELSE excluded.status END"
    + ", finished=CASE WHEN encounters.status='archived' THEN TRUE ELSE excluded.finished END"
)


def _put_record(db: Db, record: EncounterRecord) -> None:
    db.execute(_PUT_RECORD, record_row(record))
    db.changed()


def _set_status(db: Db, eid: str, status: str, last_activity: float | None) -> bool:
    cur = db.execute(
        "UPDATE encounters SET status=?, finished=(?<>'open' OR phase='ended'), "
        "last_activity=COALESCE(?, last_activity) WHERE id=?",
        (status, status, last_activity, eid),
    )
    if cur.rowcount > 0:
        db.changed()
        return True
    return False


def _select_records(
    db: Db, equal: dict[str, Any], ids: list[str] | None = None
) -> list[EncounterRecord]:
    """The records whose columns are as ``equal`` says (``None``: any) and, with
    ``ids``, whose id is one of them; oldest first."""
    where = [f"{column}=?" for column, value in equal.items() if value is not None]
    params = [value for value in equal.values() if value is not None]
    if ids is not None:  # one parameter however many
        clause, value = db.one_of("id", ids)
        where.append(clause)
        params.append(value)
    condition = f"WHERE {' AND '.join(where)} " if where else ""
    rows = db.execute(
        f"SELECT {', '.join(RECORD_FIELDS)} FROM encounters {condition}ORDER BY created, id",
        params,
    ).fetchall()
    return [_record(row) for row in rows]


def _record(row: Sequence[Any]) -> EncounterRecord:
    found = dict(zip(RECORD_FIELDS, row, strict=True))
    found["public"] = bool(found["public"])
    found["players"] = tuple(json.loads(found["players"]))
    return EncounterRecord(**found)


def _delete(db: Db, eid: str) -> None:
    """Forget ``eid`` in one transaction: its events, snapshots, grants, record and the
    keyed requests kept apart from its log."""
    for table, column in (
        ("events", "encounter"),
        ("snapshots", "encounter"),
        ("grants", "encounter"),
        ("encounters", "id"),
    ):
        db.execute(f"DELETE FROM {table} WHERE {column}=?", (eid,))
    prefix = _request_prefix(eid)
    db.execute(f"DELETE FROM meta WHERE substr(key, 1, {len(prefix):d}) = ?", (prefix,))
    db.changed()


def _log_summary(db: Db, eid: str) -> tuple[int, int, dict[str, int]]:
    row = db.execute("SELECT COUNT(*), MAX(seq) FROM events WHERE encounter=?", (eid,)).fetchone()
    roles = db.execute(
        "SELECT role, COUNT(*) FROM grants WHERE encounter=? GROUP BY role ORDER BY role", (eid,)
    ).fetchall()
    count, last = row if row else (0, None)
    return int(count), int(last or 0), {str(role): int(n) for role, n in roles}


def _dice_secret(db: Db) -> bytes:
    db.execute(
        "INSERT INTO meta (key, value) VALUES ('dice_secret', ?) ON CONFLICT (key) DO NOTHING",
        (secrets.token_hex(32),),
    )
    row = db.execute("SELECT value FROM meta WHERE key='dice_secret'").fetchone()
    return bytes.fromhex(str(row[0] if row else ""))


def _adopt_dice_secret(db: Db, secret: str) -> None:
    db.execute(
        "INSERT INTO meta (key, value) VALUES ('dice_secret', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (secret,),
    )


_IMAGE_BYTES = "SELECT SUM(size) FROM images WHERE owner=?"
_LIBRARY = "SELECT name, owner, text, updated FROM library_arenas ORDER BY name"


def _put_image(db: Db, blob: StoredBlob) -> bool:
    used = blob.used or time.time()
    if db.execute("SELECT 1 FROM images WHERE id=?", (blob.id,)).fetchone() is not None:
        _mark_used(db, blob.id, used)
        return False
    db.execute(
        "INSERT INTO images (id, ext, width, height, size, data, owner, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            blob.id,
            blob.ext,
            blob.width,
            blob.height,
            len(blob.data),
            blob.data,
            blob.owner,
            used,
        ),
    )
    return True


def _mark_used(db: Db, image_id: str, used: float) -> None:
    """Move image ``image_id``'s last use (column ``created``) on to ``used``. The row
    lock this takes orders it with :func:`_forget_unused_images`' delete of the row."""
    db.execute("UPDATE images SET created=? WHERE id=? AND created<?", (used, image_id, used))


def _get_image(db: Db, image_id: str) -> StoredBlob | None:
    row = db.execute(
        "SELECT id, ext, width, height, data, owner, created FROM images WHERE id=?",
        (image_id,),
    ).fetchone()
    if row is None:
        return None
    return StoredBlob(
        str(row[0]),
        str(row[1]),
        int(row[2]),
        int(row[3]),
        bytes(row[4]),
        str(row[5]),
        float(row[6]),
    )


def _forget_unused_images(db: Db, before: float) -> list[str]:
    """Delete the images last used before ``before`` that no library arena's text and no
    ``encounter_created`` event names (an arena's ``map.image`` is the id itself, 64 hex
    digits: a text that holds it anywhere keeps the image, never the other way round)."""
    rows = db.execute("SELECT id FROM images WHERE created<? ORDER BY id", (before,)).fetchall()
    gone = []
    for (found,) in rows:
        image_id = str(found)
        pattern = f"%{image_id}%"
        if (
            db.execute(
                "SELECT 1 FROM library_arenas WHERE text LIKE ? LIMIT 1", (pattern,)
            ).fetchone()
            is not None
            or db.execute(
                "SELECT 1 FROM events WHERE type='encounter_created' AND data LIKE ? LIMIT 1",
                (pattern,),
            ).fetchone()
            is not None
        ):
            continue
        # ``created<?`` again: a save or an upload that used it meanwhile keeps it.
        if (
            db.execute("DELETE FROM images WHERE id=? AND created<?", (image_id, before)).rowcount
            > 0
        ):
            gone.append(image_id)
    return gone


def _save_arena(db: Db, arena: LibraryArena, max_arenas: int) -> SaveOutcome:
    row = db.execute("SELECT owner FROM library_arenas WHERE name=?", (arena.name,)).fetchone()
    if row is not None and str(row[0]) != arena.owner:
        return "taken"
    if row is None:
        count = db.execute(
            "SELECT COUNT(*) FROM library_arenas WHERE owner=?", (arena.owner,)
        ).fetchone()
        if int(count[0]) >= max_arenas:
            return "quota"
        db.execute(
            "INSERT INTO library_arenas (name, owner, text, updated) VALUES (?, ?, ?, ?)",
            (arena.name, arena.owner, arena.text, arena.updated),
        )
        outcome: SaveOutcome = "created"
    else:
        db.execute(
            "UPDATE library_arenas SET text=?, updated=? WHERE name=?",
            (arena.text, arena.updated, arena.name),
        )
        outcome = "replaced"
    image = map_image_of(arena.text)
    if image is not None:
        _mark_used(db, image, time.time())
    return outcome


def _delete_arena(db: Db, name: str, owner: str | None) -> LibraryArena | None:
    row = db.execute(
        "SELECT name, owner, text, updated FROM library_arenas WHERE name=?", (name,)
    ).fetchone()
    if row is None:
        return None
    old = LibraryArena(str(row[0]), str(row[1]), str(row[2]), float(row[3]))
    if owner is None or old.owner == owner:
        db.execute("DELETE FROM library_arenas WHERE name=?", (name,))
    return old


def _add_gm_key(db: Db, key: GmKey) -> None:
    db.execute(
        "INSERT INTO gm_keys (name, key_hash, created) VALUES (?, ?, ?)",
        (key.name, key.key_hash, key.created),
    )
    db.changed()


def _revoke_gm_key(db: Db, name: str) -> bool:
    if db.execute("DELETE FROM gm_keys WHERE name=?", (name,)).rowcount > 0:
        db.changed()
        return True
    return False
