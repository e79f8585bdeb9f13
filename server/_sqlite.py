"""The default event store: SQLite from the standard library, in WAL mode.

- Group commit: appends that arrive while a transaction is being written share
  the next one, whatever encounter they belong to.
- Blocking SQLite calls run in a worker thread (one at a time), never on the
  trio thread.
- Durability [``durability``]: ``"full"`` (the default) makes every event durable
  before anyone sees it (``synchronous=FULL``); ``"normal"`` is faster and, in WAL
  mode, can lose the last transactions on a power cut (never on a crash of the
  server process itself), but never corrupts the file.
- The file carries a schema version. A store made by an older version is migrated
  on open; one that cannot be migrated, one made by a newer version, a file that
  is not a zonekeep store, or a corrupt one is refused with a clear error naming
  the file, and left untouched.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import attrs
import trio

from zonekeep.sdk import Event, event_from_dict, event_to_dict

from ._store import (
    EncounterRecord,
    EncounterStatus,
    GmKey,
    StoredEncounter,
    StoredGrant,
    StoreError,
    check_next_seq,
)

log = logging.getLogger("zonekeep.store")

#: The layout this version writes. Bump it with a migration in :data:`MIGRATIONS`.
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE encounters (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE events (
    encounter TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (encounter, seq)
) WITHOUT ROWID;
CREATE TABLE snapshots (
    encounter TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (encounter, seq)
) WITHOUT ROWID;
CREATE TABLE grants (
    encounter TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    player TEXT,
    PRIMARY KEY (encounter, token_hash)
);
"""

#: Migrations from version N to N + 1, by N. Each runs inside one transaction.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {}

Durability = Literal["full", "normal"]
_T = TypeVar("_T")


@attrs.define
class _Append:
    encounter: str
    first_seq: int
    rows: list[tuple[str, int, str, str]]
    snapshot: str | None
    finished: bool
    #: Set when the request was written (or failed: ``error``), or when its task is
    #: asked to write the next batch, which holds it (``written`` still False).
    done: trio.Event = attrs.field(factory=trio.Event)
    written: bool = False
    error: Exception | None = None


class SqliteStore:
    """A durable :class:`~zonekeep.server._store.EventStore` in one SQLite file.

    Open it with ``await SqliteStore.open(path)``; close it with ``await store.aclose()``.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._limiter = trio.CapacityLimiter(1)
        self._pending: list[_Append] = []
        self._flushing = False
        self._next_seq: dict[str, int] = {}
        #: How many transactions and appends were written (for benchmarks).
        self.transactions = 0
        self.appends = 0

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | Path, *, durability: Durability = "full") -> SqliteStore:
        """Open (or create) the store at ``path``; :class:`StoreError` if it cannot be used."""
        target = Path(path)
        conn = await trio.to_thread.run_sync(_connect, target, durability)
        store = cls(target, conn)
        seqs = await store._run(_load_next_seqs, conn)
        store._next_seq = seqs
        return store

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await trio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def aclose(self) -> None:
        await self._run(self._conn.close)

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
        check_next_seq(encounter, first_seq, self._next_seq.get(encounter, 1))
        rows = [
            (
                encounter,
                first_seq + i,
                e.type,
                json.dumps(event_to_dict(e), separators=(",", ":"), allow_nan=False),
            )
            for i, e in enumerate(events)
        ]
        request = _Append(
            encounter,
            first_seq,
            rows,
            json.dumps(snapshot, separators=(",", ":"), allow_nan=False)
            if snapshot is not None
            else None,
            finished,
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
        batch: list[_Append] = []
        try:
            # Let the other tasks that are ready to append (often just woken by the
            # previous commit) join this transaction before it starts.
            await trio.lowlevel.checkpoint()
            batch, self._pending = self._pending, []
            try:
                await self._run(_write_batch, self._conn, batch)
            except Exception as exc:
                if not isinstance(exc, sqlite3.Error):
                    log.exception("writing a batch of events failed")
                error = StoreError(f"{self.path}: could not save: {exc}")
                for request in batch:
                    request.error = error
            else:
                self.transactions += 1
                self.appends += len(batch)
                for request in batch:
                    self._next_seq[request.encounter] = request.first_seq + len(request.rows)
        finally:
            for request in batch:
                request.written = True
                request.done.set()
            if self._pending:
                self._pending[0].done.set()  # its task writes the next batch
            else:
                self._flushing = False

    async def add_grant(self, encounter: str, grant: StoredGrant) -> None:
        try:
            await self._run(_insert_grant, self._conn, encounter, grant)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not save the grant: {exc}") from None

    async def remove_grants(self, encounter: str, token_hashes: Collection[str]) -> None:
        try:
            await self._run(_delete_grants, self._conn, encounter, list(token_hashes))
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not revoke the grant: {exc}") from None

    # -- reading ------------------------------------------------------------------------------

    async def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        rows = await self._run(_read_events, self._conn, encounter, after)
        return [(seq, event_from_dict(json.loads(data))) for seq, data in rows]

    async def oldest_kept(self, encounter: str) -> int:
        return 1

    async def unfinished(self) -> list[StoredEncounter]:
        return await self._run(_unfinished, self._conn)

    async def encounters(self) -> list[str]:
        rows = await self._run(
            lambda: self._conn.execute("SELECT id FROM encounters ORDER BY created").fetchall()
        )
        return [r[0] for r in rows]

    # -- records and GM keys: to be written with the schema migration (issue 15) --------------

    async def put_record(self, record: EncounterRecord) -> None:
        raise NotImplementedError

    async def get_record(self, encounter: str) -> EncounterRecord | None:
        raise NotImplementedError

    async def records(
        self, *, status: EncounterStatus | None = None, creator: str | None = None
    ) -> list[EncounterRecord]:
        raise NotImplementedError

    async def load(self, encounter: str) -> StoredEncounter | None:
        raise NotImplementedError

    async def delete(self, encounter: str) -> None:
        raise NotImplementedError

    async def add_gm_key(self, key: GmKey) -> None:
        raise NotImplementedError

    async def gm_keys(self) -> list[GmKey]:
        raise NotImplementedError

    async def revoke_gm_key(self, name: str) -> bool:
        raise NotImplementedError

    async def outside_changes(self) -> int:
        raise NotImplementedError


# -- the blocking parts (run in the worker thread) --------------------------------------------


def _connect(path: Path, durability: Durability) -> sqlite3.Connection:
    new = not path.exists() or path.stat().st_size == 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"{path}: cannot open the store: {exc}") from None
    try:
        if not new:
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise StoreError(
                    f"{path}: the database is damaged ({check[0] if check else 'no answer'}); "
                    "it was left untouched. Restore a backup or move it aside."
                )
            _check_version(conn, path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
        conn.execute("PRAGMA foreign_keys=ON")
        if new:
            conn.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}"
                f"INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');"
                "COMMIT;"
            )
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(
            f"{path}: not a zonekeep store, or a damaged one ({exc}); it was left untouched."
        ) from None
    except StoreError:
        conn.close()
        raise
    return conn


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        raise StoreError(
            f"{path}: this SQLite file is not a zonekeep store; it was left untouched."
        )
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    version = int(row[0]) if row and str(row[0]).isdigit() else -1
    if version == SCHEMA_VERSION:
        return
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: made by a newer zonekeep (store version {version}; this one reads up to "
            f"{SCHEMA_VERSION}). Upgrade zonekeep; the file was left untouched."
        )
    if version < 1 or any(v not in MIGRATIONS for v in range(version, SCHEMA_VERSION)):
        raise StoreError(
            f"{path}: store version {version} is too old to migrate to {SCHEMA_VERSION}; "
            "the file was left untouched."
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        for v in range(version, SCHEMA_VERSION):
            MIGRATIONS[v](conn)
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise


def _load_next_seqs(conn: sqlite3.Connection) -> dict[str, int]:
    rows = conn.execute("SELECT encounter, MAX(seq) FROM events GROUP BY encounter").fetchall()
    return {eid: seq + 1 for eid, seq in rows}


#: Rows per INSERT statement: 4 values each, under SQLite's oldest limit of 999.
ROWS_PER_INSERT = 240


@functools.cache
def _insert_events_sql(rows: int) -> str:
    return "INSERT INTO events (encounter, seq, type, data) VALUES " + ",".join(
        ["(?,?,?,?)"] * rows
    )


def _insert_events(conn: sqlite3.Connection, rows: list[tuple[str, int, str, str]]) -> None:
    """Insert ``rows`` with as few statements as possible: each statement is one step
    of the SQLite engine and one hand-over of Python's GIL between this worker thread
    and the event loop, so one statement of many rows beats many statements."""
    for start in range(0, len(rows), ROWS_PER_INSERT):
        chunk = rows[start : start + ROWS_PER_INSERT]
        conn.execute(_insert_events_sql(len(chunk)), [v for row in chunk for v in row])


def _write_batch(conn: sqlite3.Connection, batch: list[_Append]) -> None:
    """Write ``batch`` in one transaction. The usual batch (events of encounters that
    already exist, nothing else) is a single INSERT statement, which SQLite runs as a
    transaction of its own."""
    rows = [row for r in batch for row in r.rows]
    if len(rows) <= ROWS_PER_INSERT and all(
        r.first_seq != 1 and r.snapshot is None and not r.finished for r in batch
    ):
        if rows:
            _insert_events(conn, rows)
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        now = time.time()
        for r in batch:
            if r.first_seq == 1:
                conn.execute(
                    "INSERT OR IGNORE INTO encounters (id, created) VALUES (?, ?)",
                    (r.encounter, now),
                )
        _insert_events(conn, rows)
        for r in batch:
            if r.snapshot is not None:
                last = r.first_seq + len(r.rows) - 1
                conn.execute(
                    "INSERT OR REPLACE INTO snapshots (encounter, seq, data) VALUES (?, ?, ?)",
                    (r.encounter, last, r.snapshot),
                )
            if r.finished:
                conn.execute("UPDATE encounters SET finished=1 WHERE id=?", (r.encounter,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may already have rolled back (disk full)
            conn.execute("ROLLBACK")
        raise


def _delete_grants(conn: sqlite3.Connection, encounter: str, token_hashes: list[str]) -> None:
    """Delete the grants of ``token_hashes`` in one transaction (all or none)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(
            "DELETE FROM grants WHERE encounter=? AND token_hash=?",
            [(encounter, h) for h in token_hashes],
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _insert_grant(conn: sqlite3.Connection, encounter: str, grant: StoredGrant) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO grants (encounter, token_hash, role, player) VALUES (?, ?, ?, ?)",
        (encounter, grant.token_hash, grant.role, grant.player),
    )


def _read_events(conn: sqlite3.Connection, encounter: str, after: int) -> list[tuple[int, str]]:
    return conn.execute(
        "SELECT seq, data FROM events WHERE encounter=? AND seq>? ORDER BY seq", (encounter, after)
    ).fetchall()


def _unfinished(conn: sqlite3.Connection) -> list[StoredEncounter]:
    found = []
    for (eid,) in conn.execute(
        "SELECT id FROM encounters WHERE finished=0 ORDER BY created"
    ).fetchall():
        snap = conn.execute(
            "SELECT seq, data FROM snapshots WHERE encounter=? ORDER BY seq DESC LIMIT 1", (eid,)
        ).fetchone()
        grants = tuple(
            StoredGrant(h, role, player)
            for h, role, player in conn.execute(
                "SELECT token_hash, role, player FROM grants WHERE encounter=?", (eid,)
            ).fetchall()
        )
        found.append(
            StoredEncounter(
                eid, snap[0] if snap else 0, json.loads(snap[1]) if snap else None, grants
            )
        )
    return found
