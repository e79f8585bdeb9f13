"""The default event store: SQLite from the standard library, in WAL mode; the SQLite
dialect of the SQL core (``server/_sql.py``: group commit, the queries, the record logic).

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
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import trio

from ._config import VERSION
from ._sql import (
    Append,
    Db,
    Migration,
    SqlStore,
    check_version,
    finish_batch,
    insert_records,
    load_next_seqs,
    log_tables,
    migrate,
    statements,
)
from ._store import StoreError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "SqliteStore"]

log = logging.getLogger("zonekeep.store")

#: The layout this version writes. Bump it with a migration in :data:`MIGRATIONS`.
SCHEMA_VERSION = 3

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
""" + log_tables("INTEGER", " WITHOUT ROWID")

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at REAL,
    zonekeep TEXT
)
"""


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


#: Map images and the arena library (issue 35): the same layout on PostgreSQL.
_IMAGES_AND_LIBRARY = """
CREATE TABLE images (
    id TEXT PRIMARY KEY,
    ext TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL,
    owner TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX images_by_owner ON images (owner);
CREATE TABLE library_arenas (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    text TEXT NOT NULL,
    updated REAL NOT NULL
);
CREATE INDEX library_arenas_by_owner ON library_arenas (owner)
"""


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    for statement in statements(_IMAGES_AND_LIBRARY):
        conn.execute(statement)


#: Migrations from version N to N + 1, by N. They run in order, all in one transaction.
MIGRATIONS: dict[int, Migration[sqlite3.Connection]] = {
    1: Migration(
        "encounter records (title, arena, creator, public, status, phase, round, players, "
        "source, last_activity) and GM keys",
        _migrate_1_to_2,
    ),
    2: Migration("map images and the arena library", _migrate_2_to_3),
}

Durability = Literal["full", "normal"]
_T = TypeVar("_T")


class _SqliteDb(Db):
    """The shared queries on a SQLite connection."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Any]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))


class SqliteStore(SqlStore):
    """A durable :class:`~zonekeep.server._store.EventStore` in one SQLite file.

    Open it with ``await SqliteStore.open(path)``; close it with ``await store.aclose()``.
    """

    _errors = (sqlite3.Error,)
    _duplicate = (sqlite3.IntegrityError,)

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        super().__init__()
        self.path = path
        self._conn = conn
        self._limiter = trio.CapacityLimiter(1)

    @property
    def location(self) -> str:
        """Where the store is, for the operator's messages: its file."""
        return str(self.path)

    def _reason(self, exc: BaseException) -> str:
        return str(exc)

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | Path, *, durability: Durability = "full") -> SqliteStore:
        """Open (or create) the store at ``path``; :class:`StoreError` if it cannot be used."""
        target = Path(path)
        conn = await trio.to_thread.run_sync(_connect, target, durability)
        store = cls(target, conn)
        store._next_seq = await store._reading("the logs", load_next_seqs)
        return store

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await trio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def _in_db(
        self, fn: Callable[..., _T], *args: Any, write: bool, timeout: float | None = None
    ) -> _T:
        return await self._run(_in_transaction, self._conn, write, fn, args)

    async def aclose(self) -> None:
        await self._run(self._conn.close)

    async def _write(self, batch: list[Append]) -> Collection[Append]:
        await self._run(_write_batch, self._conn, batch)
        return ()

    # -- changes made by other processes --------------------------------------------------------

    async def outside_changes(self) -> int:
        """SQLite's ``data_version`` of the server's own connection: it moves when another
        connection (another process: the CLI) commits, never for this one's own writes."""
        try:
            row = await self._run(lambda: self._conn.execute("PRAGMA data_version").fetchone())
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not read the data version: {exc}") from None
        return int(row[0])


# -- the blocking parts (run in the worker thread) --------------------------------------------


def _make_private(path: Path) -> None:
    """Make the store's folder (and each missing parent) mode 0700 and the store file
    0600 when they do not exist yet, whatever the umask (issue 27): the file holds the
    dice secret and hidden information. SQLite gives its ``-wal`` and ``-shm`` files the
    file's mode. An existing folder or file keeps the mode its owner gave it."""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT, 0o600))  # the mode is for a new file


def _connect(path: Path, durability: Durability) -> sqlite3.Connection:
    new = not path.exists() or path.stat().st_size == 0
    try:
        _make_private(path)
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
    return check_version(version, SCHEMA_VERSION, MIGRATIONS, str(path), "file")


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
            for statement in statements(_SCHEMA_1):
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
        span = (version, SCHEMA_VERSION)
        migrate(conn, _SqliteDb(conn), MIGRATIONS, span, str(path), "file", VERSION)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _in_transaction(
    conn: sqlite3.Connection, write: bool, fn: Callable[..., _T], args: tuple[Any, ...]
) -> _T:
    """``fn`` on the shared queries, in one transaction (``BEGIN IMMEDIATE`` for a write:
    it waits for another process's write, up to the busy timeout, rather than failing)."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        result = fn(_SqliteDb(conn), *args)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may already have rolled back (disk full)
            conn.execute("ROLLBACK")
        raise
    return result


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


def _write_batch(conn: sqlite3.Connection, batch: list[Append]) -> None:
    """Write ``batch`` in one transaction. The usual batch (events of encounters that
    already exist, nothing else) is a single INSERT statement, which SQLite runs as a
    transaction of its own."""
    rows = [
        (r.encounter, r.first_seq + i, kind, r.datas[i])
        for r in batch
        for i, kind in enumerate(r.types)
    ]
    if len(rows) <= ROWS_PER_INSERT and all(
        r.first_seq != 1 and r.snapshot is None and not r.finished for r in batch
    ):
        if rows:
            _insert_events(conn, rows)
        return

    def write(db: Db) -> None:
        insert_records(db, batch)
        _insert_events(conn, rows)
        finish_batch(db, batch)

    _in_transaction(conn, True, write, ())
