"""The default event store: SQLite from the standard library, in WAL mode.

- Group commit: appends that arrive while a transaction is being written share
  the next one, whatever encounter they belong to.
- Blocking SQLite calls run in a worker thread (one at a time), never on the
  trio thread.
- Durability [``durability``]: ``"full"`` (the default) makes every event durable
  before anyone sees it (``synchronous=FULL``); ``"normal"`` is faster and, in WAL
  mode, can lose the last transactions on a power cut (never on a crash of the
  server process itself), but never corrupts the file.
- The file carries a schema version (``meta.schema_version``) and the list of the
  migrations applied to it (``schema_migrations``). A store made by an older version
  is migrated on open (:data:`MIGRATIONS`: each release that changes the layout adds
  one); one that cannot be migrated, one made by a newer version, a file that is not a
  zonekeep store, or a corrupt one is refused with a clear error naming the file, and
  left untouched. A new store is made as version 1 and then migrated, so a new store
  and an upgraded one have the same layout.
- Other processes (the ``zonekeep`` CLI, ``zonekeep import``) may write to the file
  while a server has it open: each connection waits up to :data:`BUSY_TIMEOUT_SECONDS`
  for the other's transaction, and :meth:`SqliteStore.outside_changes` tells the
  server that something changed.
"""

from __future__ import annotations

import bisect
import functools
import json
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import attrs
import trio

from zonekeep.sdk import Event, event_from_dict

from . import _metrics
from ._config import VERSION
from ._store import (
    RECORD_FIELDS,
    EncounterRecord,
    EncounterStatus,
    GmKey,
    StoredEncounter,
    StoredGrant,
    StoreError,
    check_next_seq,
    event_texts,
    not_to_bring_back,
    record_from_creation,
    stored_request,
)

log = logging.getLogger("zonekeep.store")

#: The layout this version writes. Bump it with a migration in :data:`MIGRATIONS`.
SCHEMA_VERSION = 2

#: Seconds a connection waits for another one's write transaction before giving up
#: (SQLite's busy timeout): the server and the CLI share the file.
BUSY_TIMEOUT_SECONDS = 10.0

#: The first layout (zonekeep 0.1, store version 1). A new store starts from it and
#: goes through every migration, exactly as a store written by 0.1 does.
_SCHEMA_1 = """
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

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at REAL,
    zonekeep TEXT
)
"""


@attrs.frozen
class Migration:
    """The step from store version ``N`` to ``N + 1`` (``MIGRATIONS[N]``): ``apply`` runs
    inside the one transaction of the whole upgrade, so it must not commit."""

    description: str
    apply: Callable[[sqlite3.Connection], None]


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    """Encounter records (beside the ``finished`` flag) and GM keys; records of the
    encounters already stored are filled in from their log (see :func:`_backfill`)."""
    for column in (
        "title TEXT NOT NULL DEFAULT ''",
        "arena TEXT NOT NULL DEFAULT ''",
        "creator TEXT",
        "public INTEGER NOT NULL DEFAULT 0",
        "status TEXT NOT NULL DEFAULT 'open'",
        "phase TEXT NOT NULL DEFAULT 'setup'",
        "round INTEGER NOT NULL DEFAULT 0",
        "players TEXT NOT NULL DEFAULT '[]'",
        "source TEXT",
        "last_activity REAL NOT NULL DEFAULT 0",
    ):
        conn.execute(f"ALTER TABLE encounters ADD COLUMN {column}")
    conn.execute("CREATE INDEX encounters_by_status ON encounters (status, created)")
    conn.execute("CREATE INDEX encounters_by_creator ON encounters (creator, created)")
    conn.execute(
        "CREATE TABLE gm_keys ("
        "name TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, created REAL NOT NULL)"
    )
    now = time.time()
    for eid, finished in conn.execute("SELECT id, finished FROM encounters").fetchall():
        _backfill(conn, eid, bool(finished), now)


#: The events that move an encounter's phase or round (the reducers of ``zonekeep.sdk``).
_PHASE_OF = {
    "encounter_created": "surprise",
    "surprise_determined": "positions",
    "positions_established": "initiative",
    "round_started": "turns",
    "encounter_ended": "ended",
}


def _seq_of(step: tuple[int, str, int]) -> int:
    return step[0]


def _backfill(conn: sqlite3.Connection, eid: str, finished: bool, now: float) -> None:
    """Fill in the record of an encounter written before records existed: title and arena
    from its first event, phase and round from its log (rewinds included), players from
    its seats, ``"archived"`` if it had ended, else ``"open"``. Its creator is unknown
    (``None``, as for the operator's) and its last activity is now, so the first
    archiving sweep after the upgrade does not archive every old encounter at once."""
    title, arena = "", ""
    first = conn.execute(
        "SELECT type, data FROM events WHERE encounter=? AND seq=1", (eid,)
    ).fetchone()
    if first is not None and first[0] == "encounter_created":
        data = json.loads(first[1])
        title = str(data.get("name") or "")
        arena_data = data.get("arena")
        arena = str(arena_data.get("id") or "") if isinstance(arena_data, dict) else ""
    # (seq, phase, round) after each event that moved them, to look rewinds up in.
    history: list[tuple[int, str, int]] = [(0, "setup", 0)]
    kinds = (*_PHASE_OF, "rewound")
    rows = conn.execute(
        "SELECT seq, type, CASE WHEN type IN ('round_started', 'rewound') THEN data END "
        f"FROM events WHERE encounter=? AND type IN ({','.join('?' * len(kinds))}) ORDER BY seq",
        (eid, *kinds),
    ).fetchall()
    for seq, kind, data in rows:
        _, phase, round_ = history[-1]
        if kind == "rewound":
            to_seq = int(json.loads(data).get("to_seq", 0))
            _, phase, round_ = history[bisect.bisect_right(history, to_seq, key=_seq_of) - 1]
        elif kind == "round_started":
            phase, round_ = "turns", int(json.loads(data).get("round", round_))
        else:
            phase = _PHASE_OF[kind]
        history.append((seq, phase, round_))
    _, phase, round_ = history[-1]
    players = [
        p
        for (p,) in conn.execute(
            "SELECT DISTINCT player FROM grants WHERE encounter=? AND role='player' "
            "AND player IS NOT NULL ORDER BY player",
            (eid,),
        )
    ]
    conn.execute(
        "UPDATE encounters SET title=?, arena=?, status=?, phase=?, round=?, players=?, "
        "last_activity=? WHERE id=?",
        (
            title,
            arena,
            "archived" if finished else "open",
            phase,
            round_,
            json.dumps(players),
            now,
            eid,
        ),
    )


#: Migrations from version N to N + 1, by N. They run in order, all in one transaction.
MIGRATIONS: dict[int, Migration] = {
    1: Migration(
        "encounter records (title, arena, creator, public, status, phase, round, players, "
        "source, last_activity) and GM keys",
        _migrate_1_to_2,
    ),
}

Durability = Literal["full", "normal"]
_T = TypeVar("_T")


@attrs.define
class _Append:
    encounter: str
    first_seq: int
    rows: list[tuple[str, int, str, str]]
    snapshot: str | None
    finished: bool
    #: The encounter's record, made from its first event (a first append only); stored
    #: unless the encounter has one already.
    record: EncounterRecord | None = None
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

    @property
    def location(self) -> str:
        """Where the store is, for the operator's messages: its file."""
        return str(self.path)

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
        texts = event_texts(events)
        rows = [(encounter, first_seq + i, e.type, texts[i]) for i, e in enumerate(events)]
        request = _Append(
            encounter,
            first_seq,
            rows,
            json.dumps(snapshot, separators=(",", ":"), allow_nan=False)
            if snapshot is not None
            else None,
            finished,
            record_from_creation(encounter, events[0], time.time(), finished)
            if first_seq == 1 and events
            else None,
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
            started = time.perf_counter()
            try:
                await self._run(_write_batch, self._conn, batch)
            except Exception as exc:
                if not isinstance(exc, sqlite3.Error):
                    log.exception("writing a batch of events failed")
                error = StoreError(f"{self.path}: could not save: {exc}")
                _metrics.current().store_committed(time.perf_counter() - started, error)
                for request in batch:
                    request.error = error
            else:
                _metrics.current().store_committed(time.perf_counter() - started)
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

    async def stored_requests(self, encounter: str) -> list[dict[str, Any]]:
        rows = await self._run(_read_requests, self._conn, encounter)
        return [r for r in (stored_request(data) for (data,) in rows) if r is not None]

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

    # -- records (the lobby, lifecycle, the operator's commands) ------------------------------

    async def put_record(self, record: EncounterRecord) -> None:
        try:
            await self._run(_put_record, self._conn, record)
        except sqlite3.Error as exc:
            raise StoreError(
                f"{self.path}: could not save the record of {record.id}: {exc}"
            ) from None

    async def set_status(
        self, encounter: str, status: EncounterStatus, *, last_activity: float | None = None
    ) -> bool:
        try:
            return await self._run(_set_status, self._conn, encounter, status, last_activity)
        except sqlite3.Error as exc:
            raise StoreError(
                f"{self.path}: could not change the status of {encounter}: {exc}"
            ) from None

    async def get_record(self, encounter: str) -> EncounterRecord | None:
        found = await self._reading(
            "the record",
            _select_records,
            self._conn,
            "WHERE id=?",
            (encounter,),
        )
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
        where: list[str] = []
        params: list[Any] = []
        if status is not None:
            where.append("status=?")
            params.append(status)
        if creator is not None:
            where.append("creator=?")
            params.append(creator)
        if ids is not None:  # one parameter however many: a JSON array
            where.append("id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(ids)))
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return await self._reading(
            "the records", _select_records, self._conn, clause, tuple(params)
        )

    async def load(self, encounter: str) -> StoredEncounter | None:
        found = await self._reading("the encounter", _load, self._conn, encounter)
        if found is None:
            return None
        stored, next_seq = found
        # The file is the truth for an encounter being loaded: another process may have
        # deleted it or imported one under its id since this store last appended to it.
        if not self._flushing and not self._pending:
            self._next_seq[encounter] = next_seq
        return stored

    async def delete(self, encounter: str) -> None:
        try:
            await self._run(_delete, self._conn, encounter)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not delete {encounter}: {exc}") from None
        self._next_seq.pop(encounter, None)

    async def log_summary(self, encounter: str) -> tuple[int, int, dict[str, int]]:
        """For the operator (``zonekeep encounters show``): how many events ``encounter``
        has, its last seq (0: none), and its grants counted by role."""
        return await self._reading("the log", _log_summary, self._conn, encounter)

    # -- GM keys ------------------------------------------------------------------------------

    async def add_gm_key(self, key: GmKey) -> None:
        try:
            await self._run(_add_gm_key, self._conn, key)
        except sqlite3.IntegrityError:
            raise ValueError(f"there is already a GM key named {key.name!r}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not save the GM key: {exc}") from None

    async def gm_keys(self) -> list[GmKey]:
        rows = await self._reading(
            "the GM keys",
            lambda: self._conn.execute(
                "SELECT name, key_hash, created FROM gm_keys ORDER BY created, name"
            ).fetchall(),
        )
        return [GmKey(name, key_hash, created) for name, key_hash, created in rows]

    async def revoke_gm_key(self, name: str) -> bool:
        try:
            return await self._run(
                lambda: self._conn.execute("DELETE FROM gm_keys WHERE name=?", (name,)).rowcount > 0
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not revoke the GM key: {exc}") from None

    async def dice_secret(self) -> bytes:
        try:
            return await self._run(_dice_secret, self._conn)
        except (sqlite3.Error, ValueError) as exc:
            raise StoreError(f"{self.path}: could not read the dice secret: {exc}") from None

    async def adopt_dice_secret(self, secret: bytes) -> None:
        """Make ``secret`` the store's dice secret (``zonekeep store copy``: the copied
        encounters' dice stay verifiable)."""
        try:
            await self._run(
                lambda: self._conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('dice_secret', ?)",
                    (secret.hex(),),
                )
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not save the dice secret: {exc}") from None

    # -- changes made by other processes --------------------------------------------------------

    async def outside_changes(self) -> int:
        """SQLite's ``data_version`` of the server's own connection: it moves when another
        connection (another process: the CLI) commits, never for this one's own writes."""
        row = await self._reading(
            "the data version",
            lambda: self._conn.execute("PRAGMA data_version").fetchone(),
        )
        return int(row[0])

    async def _reading(self, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        try:
            return await self._run(fn, *args)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not read {what}: {exc}") from None


# -- the blocking parts (run in the worker thread) --------------------------------------------


def _connect(path: Path, durability: Durability) -> sqlite3.Connection:
    new = not path.exists() or path.stat().st_size == 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_SECONDS
        )
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"{path}: cannot open the store: {exc}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
        if not new:
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise StoreError(
                    f"{path}: the database is damaged ({check[0] if check else 'no answer'}); "
                    "it was left untouched. Restore a backup or move it aside."
                )
            version = _read_version(conn, path)
        if new or version < SCHEMA_VERSION:
            _upgrade(conn, path)  # before WAL: a failed upgrade leaves the file as it was
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(
            f"{path}: not a zonekeep store, or a damaged one ({exc}); it was left untouched."
        ) from None
    except StoreError:
        conn.close()
        raise
    return conn


def _read_version(conn: sqlite3.Connection, path: Path) -> int:
    """The file's store version; :class:`StoreError` unless this zonekeep can use it
    (as it is, or by migrating it)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        raise StoreError(
            f"{path}: this SQLite file is not a zonekeep store; it was left untouched."
        )
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    version = int(row[0]) if row and str(row[0]).isdigit() else -1
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
    return version


def _upgrade(conn: sqlite3.Connection, path: Path) -> None:
    """Make a new store (the version 1 layout), then bring it, or an older store, to
    :data:`SCHEMA_VERSION` through :data:`MIGRATIONS`, recording each step in
    ``schema_migrations``; all in one write transaction, so a failure leaves the file as
    it was. The version is read again under the write lock: another process (a server
    and the CLI started together) may have made or migrated the store meanwhile."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        now = time.time()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:
            if tables:  # someone else's tables appeared in a file we took for empty
                raise StoreError(
                    f"{path}: this SQLite file is not a zonekeep store; it was left untouched."
                )
            for statement in _SCHEMA_1.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
            conn.execute(_MIGRATIONS_TABLE)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (1, 'a new store', ?, ?)", (now, VERSION)
            )
        version = _read_version(conn, path)
        conn.execute(_MIGRATIONS_TABLE)
        if version == 1:
            # Written by 0.1, before this table: its first layout, of unknown date.
            conn.execute(
                "INSERT OR IGNORE INTO schema_migrations VALUES "
                "(1, 'the layout of zonekeep 0.1', NULL, NULL)"
            )
        for v in range(version, SCHEMA_VERSION):
            step = MIGRATIONS[v]
            try:
                step.apply(conn)
            except Exception as exc:
                raise StoreError(
                    f"{path}: migrating the store from version {v} to {v + 1} failed "
                    f"({type(exc).__name__}: {exc}); the file was left untouched."
                ) from exc
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
                (v + 1, step.description, now, VERSION),
            )
            log.info("%s: store migrated to version %d (%s)", path, v + 1, step.description)
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
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
                record = r.record or record_from_creation(r.encounter, None, now, r.finished)
                conn.execute(
                    f"INSERT OR IGNORE INTO encounters ({_RECORD_COLUMNS}) VALUES ({_RECORD_SLOTS})",
                    _record_row(record),
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


def _read_requests(conn: sqlite3.Connection, encounter: str) -> list[tuple[str]]:
    """The stored texts of ``encounter``'s events that hold a keyed request's record."""
    rows: list[tuple[str]] = conn.execute(
        "SELECT data FROM events WHERE encounter=? AND instr(data, ?) > 0 ORDER BY seq",
        (encounter, '"_request":'),
    ).fetchall()
    return rows


def _read_events(conn: sqlite3.Connection, encounter: str, after: int) -> list[tuple[int, str]]:
    return conn.execute(
        "SELECT seq, data FROM events WHERE encounter=? AND seq>? ORDER BY seq", (encounter, after)
    ).fetchall()


def _stored(conn: sqlite3.Connection, eid: str) -> StoredEncounter:
    snap = conn.execute(
        "SELECT seq, data FROM snapshots WHERE encounter=? ORDER BY seq DESC LIMIT 1", (eid,)
    ).fetchone()
    grants = tuple(
        StoredGrant(h, role, player)
        for h, role, player in conn.execute(
            "SELECT token_hash, role, player FROM grants WHERE encounter=?", (eid,)
        ).fetchall()
    )
    return StoredEncounter(
        eid, snap[0] if snap else 0, json.loads(snap[1]) if snap else None, grants
    )


def _unfinished(conn: sqlite3.Connection) -> list[StoredEncounter]:
    ids = conn.execute("SELECT id FROM encounters WHERE finished=0 ORDER BY created").fetchall()
    return [_stored(conn, eid) for (eid,) in ids]


def _load(conn: sqlite3.Connection, eid: str) -> tuple[StoredEncounter, int] | None:
    """The encounter's latest snapshot and grants, and its next seq, read in one read
    transaction (so another process's write cannot fall between them)."""
    conn.execute("BEGIN")
    try:
        if conn.execute("SELECT 1 FROM encounters WHERE id=?", (eid,)).fetchone() is None:
            return None
        last = conn.execute("SELECT MAX(seq) FROM events WHERE encounter=?", (eid,)).fetchone()
        return _stored(conn, eid), (last[0] or 0) + 1
    finally:
        conn.execute("COMMIT")


_RECORD_COLUMNS = ", ".join((*RECORD_FIELDS, "finished"))
_RECORD_SLOTS = ", ".join("?" * (len(RECORD_FIELDS) + 1))


def _record_row(record: EncounterRecord) -> tuple[Any, ...]:
    """``record`` as the values of :data:`_RECORD_COLUMNS` (``finished`` last)."""
    return (
        record.id,
        record.title,
        record.arena,
        record.creator,
        record.created,
        record.last_activity,
        record.status,
        int(record.public),
        record.phase,
        record.round,
        json.dumps(list(record.players)),
        record.source,
        int(not_to_bring_back(record)),
    )


#: One statement: insert, or replace every column but an ``"archived"`` status (and its
#: ``finished`` mark), which only :func:`_set_status` changes.
_PUT_RECORD = (
    f"INSERT INTO encounters ({_RECORD_COLUMNS}) VALUES ({_RECORD_SLOTS}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c}=excluded.{c}" for c in RECORD_FIELDS if c not in ("id", "status"))
    + ", status=CASE WHEN status='archived' THEN status ELSE excluded.status END"
    + ", finished=CASE WHEN status='archived' THEN 1 ELSE excluded.finished END"
)


def _put_record(conn: sqlite3.Connection, record: EncounterRecord) -> None:
    conn.execute(_PUT_RECORD, _record_row(record))


def _set_status(
    conn: sqlite3.Connection, eid: str, status: str, last_activity: float | None
) -> bool:
    return (
        conn.execute(
            "UPDATE encounters SET status=?, finished=(?<>'open' OR phase='ended'), "
            "last_activity=COALESCE(?, last_activity) WHERE id=?",
            (status, status, last_activity, eid),
        ).rowcount
        > 0
    )


def _select_records(
    conn: sqlite3.Connection, where: str, params: tuple[Any, ...]
) -> list[EncounterRecord]:
    rows = conn.execute(
        f"SELECT {', '.join(RECORD_FIELDS)} FROM encounters {where} ORDER BY created, id", params
    ).fetchall()
    found = []
    for (
        eid,
        title,
        arena,
        creator,
        created,
        last,
        status,
        public,
        phase,
        round_,
        players,
        source,
    ) in rows:
        found.append(
            EncounterRecord(
                id=eid,
                title=title,
                arena=arena,
                creator=creator,
                created=created,
                last_activity=last,
                status=status,
                public=bool(public),
                phase=phase,
                round=round_,
                players=tuple(json.loads(players)),
                source=source,
            )
        )
    return found


def _delete(conn: sqlite3.Connection, eid: str) -> None:
    """Forget ``eid`` in one transaction: its events, snapshots, grants and record."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table, column in (
            ("events", "encounter"),
            ("snapshots", "encounter"),
            ("grants", "encounter"),
            ("encounters", "id"),
        ):
            conn.execute(f"DELETE FROM {table} WHERE {column}=?", (eid,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _log_summary(conn: sqlite3.Connection, eid: str) -> tuple[int, int, dict[str, int]]:
    conn.execute("BEGIN")
    try:
        count, last = conn.execute(
            "SELECT COUNT(*), MAX(seq) FROM events WHERE encounter=?", (eid,)
        ).fetchone()
        roles = conn.execute(
            "SELECT role, COUNT(*) FROM grants WHERE encounter=? GROUP BY role ORDER BY role",
            (eid,),
        ).fetchall()
    finally:
        conn.execute("COMMIT")
    return count, last or 0, dict(roles)


def _dice_secret(conn: sqlite3.Connection) -> bytes:
    """The store's dice secret (``meta.dice_secret``), made on first use: a key in the
    meta table needs no new layout, so the store version does not change."""
    fresh = secrets.token_hex(32)
    conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('dice_secret', ?)", (fresh,))
    row = conn.execute("SELECT value FROM meta WHERE key='dice_secret'").fetchone()
    return bytes.fromhex(str(row[0]))


def _add_gm_key(conn: sqlite3.Connection, key: GmKey) -> None:
    conn.execute(
        "INSERT INTO gm_keys (name, key_hash, created) VALUES (?, ?, ?)",
        (key.name, key.key_hash, key.created),
    )
