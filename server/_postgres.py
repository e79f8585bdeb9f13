"""The PostgreSQL event store: ``zonekeep serve --store postgresql://...``.

The same :class:`~zonekeep.server._store.EventStore` as the SQLite store, kept in a
PostgreSQL database that the operator runs (docs/storage.md): the PostgreSQL dialect of
the SQL core (``server/_sql.py``: group commit, the queries, the record logic), with
what is PostgreSQL's own here (the pool, the layout and its migrations, the lease fence,
the change counts, the time limits):

- psycopg 3 and its connection pool (the ``postgresql`` extra; imported only when a
  PostgreSQL store is opened, so a SQLite-only server does not need it). Every blocking
  call runs in a trio worker thread, at most as many at once as the pool has
  connections (a :class:`trio.CapacityLimiter` of that size).
- Group commit, as the SQLite store: appends that arrive while a transaction is being
  written share the next one, whatever encounter they belong to; each task writes at
  most the one batch that holds its own append.
- The database carries a schema version (``meta.schema_version``) and the list of the
  migrations applied to it (``schema_migrations``), with the SQLite store's policy: an
  older store is migrated on open (:data:`MIGRATIONS`), in one transaction under an
  advisory lock (several processes opening the same database at once migrate it once);
  one made by a newer zonekeep, or a database holding someone else's tables of the same
  names, is refused with a clear error and left untouched.
- Other processes (the ``zonekeep`` CLI, another server later) write to the same
  database: each writer counts its own changes to records, grants and GM keys in a row
  of ``changes`` (its id is random, per open store), so
  :meth:`PostgresStore.outside_changes` is the sum of the other writers' rows.
- A URL's password is a secret: :attr:`PostgresStore.where` (used in every message) is
  the URL with it masked.
- A database that stops answering never hangs the server: every call is given up after
  :attr:`PostgresStore.call_timeout` (its connection shut), the connections have TCP
  keepalive and ``statement_timeout``, and a commit whose reply was lost is settled by
  reading the log back (``SqlStore._settle``; docs/scale-out.md).

The tables are unqualified: they live in the first schema of the connection's
``search_path`` (``?options=-csearch_path%3Dname`` in the URL picks another one).
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import trio

from ._config import VERSION, mask_url
from ._sql import (
    Append,
    Cursor,
    Db,
    Migration,
    SqlStore,
    check_version,
    fetch,
    finish_batch,
    insert_records,
    load_next_seqs,
    log_tables,
    migrate,
    reason,
    statements,
)
from ._store import StoreError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

log = logging.getLogger("zonekeep.store")

#: The layout this version writes. Bump it with a migration in :data:`MIGRATIONS`.
SCHEMA_VERSION = 3

#: Connections a store keeps open unless told (``store_pool_size``).
DEFAULT_POOL_SIZE = 4

#: Seconds to wait for the database when opening the store, and for a free connection.
CONNECT_TIMEOUT_SECONDS = 10.0

#: Seconds a store call may take (unless told: :attr:`PostgresStore.call_timeout`)
#: before it is given up and its connection shut: a database that stopped answering (a
#: silent network cut) never hangs the server. A node's calls get at most its lease.
CALL_TIMEOUT_SECONDS = 10.0

#: The server side of the same limit: PostgreSQL cancels a statement that runs longer
#: (``statement_timeout``; a lock waited for counts).
STATEMENT_TIMEOUT_SECONDS = 10

#: TCP keepalive, ``tcp_user_timeout`` and a connect timeout for every connection (the
#: pool's new ones too), unless the URL sets them: a peer that vanished (its machine
#: lost, a cut link) is found out in seconds, not the hours of the system's defaults.
#: ``tcp_user_timeout`` is in milliseconds.
TCP_OPTIONS = {
    "connect_timeout": str(int(CONNECT_TIMEOUT_SECONDS)),
    "keepalives": "1",
    "keepalives_idle": "5",
    "keepalives_interval": "2",
    "keepalives_count": "3",
    "tcp_user_timeout": "10000",
}

#: The key of the advisory lock held while a store is made or migrated.
_MIGRATION_LOCK = 0x7A6B_0015

#: The tables of the first layout (store version 1).
_TABLES = (
    "meta",
    "schema_migrations",
    "encounters",
    "events",
    "snapshots",
    "grants",
    "gm_keys",
    "changes",
    "nodes",
    "leases",
    "images",
    "library_arenas",
)

_SCHEMA_1 = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at DOUBLE PRECISION,
    zonekeep TEXT
);
CREATE TABLE encounters (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    arena TEXT NOT NULL DEFAULT '',
    creator TEXT,
    created DOUBLE PRECISION NOT NULL,
    last_activity DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    public BOOLEAN NOT NULL DEFAULT FALSE,
    phase TEXT NOT NULL DEFAULT 'setup',
    round INTEGER NOT NULL DEFAULT 0,
    players TEXT NOT NULL DEFAULT '[]',
    source TEXT,
    finished BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX encounters_by_status ON encounters (status, created);
CREATE INDEX encounters_by_creator ON encounters (creator, created);
"""
    + log_tables("BIGINT")
    + """
CREATE TABLE gm_keys (
    name TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE changes (writer TEXT PRIMARY KEY, n BIGINT NOT NULL)
"""
)


_NODES_AND_LEASES = """
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    started DOUBLE PRECISION NOT NULL,
    heartbeat DOUBLE PRECISION NOT NULL
);
CREATE TABLE leases (
    encounter TEXT PRIMARY KEY,
    node TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE INDEX leases_by_node ON leases (node)
"""


def _add_nodes_and_leases(conn: psycopg.Connection[Any]) -> None:
    for statement in _NODES_AND_LEASES.split(";"):
        if statement.strip():
            conn.execute(statement.encode())


_IMAGES_AND_LIBRARY = """
CREATE TABLE images (
    id TEXT PRIMARY KEY,
    ext TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    size BIGINT NOT NULL,
    data BYTEA NOT NULL,
    owner TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL
);
CREATE INDEX images_by_owner ON images (owner);
CREATE TABLE library_arenas (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    text TEXT NOT NULL,
    updated DOUBLE PRECISION NOT NULL
);
CREATE INDEX library_arenas_by_owner ON library_arenas (owner)
"""


def _add_images_and_library(conn: psycopg.Connection[Any]) -> None:
    for statement in _IMAGES_AND_LIBRARY.split(";"):
        if statement.strip():
            conn.execute(statement.encode())


#: Migrations from version N to N + 1, by N.
MIGRATIONS: dict[int, Migration[psycopg.Connection[Any]]] = {
    1: Migration("nodes and encounter leases (several nodes)", _add_nodes_and_leases),
    2: Migration("map images and the arena library", _add_images_and_library),
}

#: The database's clock in Unix seconds: every node's lease times are read from it, so
#: the nodes' own clocks never have to agree.
_NOW = "extract(epoch FROM clock_timestamp())"


class CallTimedOut(Exception):
    """A store call took longer than its time: given up, its connection shut."""


class LeaseLost(StoreError):
    """This node no longer holds the lease of the encounter it appended to (another
    node took it, with a higher epoch): nothing of the append was stored."""


@attrs.frozen
class Held:
    """A lease this node took: the encounter and the epoch its appends are fenced by."""

    encounter: str
    epoch: int


@attrs.frozen
class Owner:
    """Who holds an encounter's lease, when it is not this node: the node, its
    websocket URL, and in how many seconds the lease expires unless renewed."""

    node: str
    url: str
    expires_in: float


_T = TypeVar("_T")


class _PgDb(Db):
    """The shared queries on a psycopg connection, counting this store's changes."""

    __slots__ = ("conn", "writer")

    def __init__(self, conn: psycopg.Connection[Any], writer: str) -> None:
        self.conn = conn
        self.writer = writer

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return self.conn.execute(_in_pg(sql), params)

    def changed(self) -> None:
        _bump(self.conn, self.writer)

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Any]:
        return f"{column} = ANY(?)", list(values)

    def wait_for_writers(self, encounters: Sequence[str]) -> None:
        """Lock the encounters' lease rows: an append's transaction holds them ``FOR
        SHARE`` until it ends (a lost session's, at the latest when PostgreSQL ends the
        session: ``idle_in_transaction_session_timeout``)."""
        self.conn.execute(f"SET LOCAL lock_timeout = '{IDLE_IN_TRANSACTION_SECONDS + 2}s'".encode())
        self.conn.execute(
            "SELECT 1 FROM leases WHERE encounter = ANY(%s) ORDER BY encounter FOR UPDATE",
            (list(encounters),),
        )


@functools.cache
def _in_pg(sql: str) -> bytes:
    """A shared statement in psycopg's words (``%s`` for each ``?``)."""
    return sql.replace("?", "%s").encode()


class PostgresStore(SqlStore):
    """A durable :class:`~zonekeep.server._store.EventStore` in a PostgreSQL database.

    Open it with ``await PostgresStore.open(url)``; close it with ``await store.aclose()``.
    """

    def __init__(self, url: str, pool: ConnectionPool[Any], size: int) -> None:
        import psycopg

        super().__init__()
        self._errors = (psycopg.Error, OSError, CallTimedOut)
        self._duplicate = (psycopg.errors.UniqueViolation,)
        #: The URL with its password masked: for messages and logs.
        self.where = mask_url(url)
        self._pool = pool
        self._limiter = trio.CapacityLimiter(size)
        #: This store's row in ``changes`` (see :meth:`outside_changes`).
        self.writer = uuid.uuid4().hex
        #: Set by :meth:`become_node`: this node's id; then every append is fenced by the
        #: epoch of the encounter's lease (:attr:`epochs`), in the append's transaction.
        self.node: str | None = None
        #: The leases this node holds: the epoch of each encounter's.
        self.epochs: dict[str, int] = {}
        #: Called with an encounter whose append was refused because its lease was lost.
        self.on_lease_lost: Callable[[str], None] | None = None
        #: Appends refused by the fence (for the metrics and the tests).
        self.fenced = 0
        #: Seconds a call may take before it is given up (:data:`CALL_TIMEOUT_SECONDS`).
        self.call_timeout = CALL_TIMEOUT_SECONDS
        self._watchdog = _Watchdog()

    @property
    def location(self) -> str:
        """Where the store is, for the operator's messages (the password masked)."""
        return self.where

    @property
    def _fenced(self) -> bool:
        return self.node is not None

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    async def open(cls, url: str, *, pool_size: int = DEFAULT_POOL_SIZE) -> PostgresStore:
        """Connect to the database at ``url``, making or migrating the store in it;
        :class:`StoreError` if it cannot be used."""
        where = mask_url(url)
        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StoreError(
                f"{where}: a PostgreSQL store needs psycopg 3 and psycopg-pool: "
                "pip install 'zonekeep[postgresql]'"
            ) from None
        size = max(1, pool_size)
        pool: ConnectionPool[Any] = ConnectionPool(
            _with_tcp_options(url),
            min_size=size,
            max_size=size,
            open=False,
            timeout=CONNECT_TIMEOUT_SECONDS,
            name="zonekeep",
            configure=_configure_connection,
        )
        try:
            await trio.to_thread.run_sync(_open_pool, pool, url, where)
        except BaseException:
            await trio.to_thread.run_sync(pool.close)
            raise
        store = cls(url, pool, size)
        try:
            store._next_seq = await store._reading("the logs", load_next_seqs)
        except BaseException:
            await trio.to_thread.run_sync(pool.close)
            raise
        return store

    async def _run(self, fn: Callable[..., _T], *args: Any, timeout: float | None = None) -> _T:
        """``fn(connection, *args)`` in a worker thread, in one transaction of a pooled
        connection (committed when ``fn`` returns, rolled back when it raises).

        Given up after ``timeout`` seconds (:attr:`call_timeout` by default) on the real
        clock, with :class:`CallTimedOut`: the watchdog shuts the connection's socket, so
        the worker thread fails at once and the pool replaces the connection. (A trio
        deadline would not do: the thread cannot be interrupted, and a test's MockClock
        would time a database out that answers in milliseconds.)"""
        limit = self.call_timeout if timeout is None else timeout
        return await trio.to_thread.run_sync(
            self._in_transaction, limit, fn, args, limiter=self._limiter
        )

    def _in_transaction(self, limit: float, fn: Callable[..., _T], args: tuple[Any, ...]) -> _T:
        call = _Call()
        self._watchdog.watch(call, limit)
        try:
            with self._pool.connection(timeout=limit) as conn:
                call.using(conn)
                try:
                    with conn.transaction():
                        return fn(conn, *args)
                finally:
                    call.using(None)
        except Exception as exc:
            if call.was_cut:
                raise CallTimedOut(f"the database did not answer within {limit:g} s") from exc
            raise
        finally:
            self._watchdog.forget(call)

    async def _in_db(
        self, fn: Callable[..., _T], *args: Any, write: bool, timeout: float | None = None
    ) -> _T:
        return await self._run(_on_db, self.writer, write, fn, args, timeout=timeout)

    def _outcome_unknown(self, exc: BaseException) -> bool:
        import psycopg
        from psycopg_pool import PoolTimeout

        if isinstance(exc, CallTimedOut | OSError):
            return True
        # A lost connection has no SQLSTATE; the server's own refusals (a timeout, a
        # conflict) have one and roll the transaction back. No connection: nothing sent.
        return (
            isinstance(exc, psycopg.OperationalError)
            and exc.sqlstate is None
            and not isinstance(exc, PoolTimeout)
        )

    def _give_up(self, request: Append, error: StoreError) -> StoreError:
        """The outcome of an append stays unknown (the database cannot be read): give the
        encounter up as if its lease were lost (its members join again, and the node
        that loads it reads the log as it is), so it never plays on from a guess."""
        encounter = request.encounter
        if self.epochs.get(encounter) == request.epoch:
            del self.epochs[encounter]
        if self.on_lease_lost is not None:
            self.on_lease_lost(encounter)
        return StoreError(
            f"{self.where}: whether {encounter}'s last events were saved is unknown (the "
            "database did not answer); the encounter was given up"
        )

    async def aclose(self) -> None:
        try:
            await self._run(_retire_writer, self.writer)
        except Exception as exc:  # closing anyway
            log.warning("%s: could not fold this store's change count: %s", self.where, exc)
        await trio.to_thread.run_sync(self._pool.close)
        self._watchdog.close()

    # -- writing ------------------------------------------------------------------------------

    def _epoch(self, encounter: str) -> int | None:
        if self.node is None:
            return None
        epoch = self.epochs.get(encounter)
        if epoch is None:
            self.fenced += 1
            raise LeaseLost(f"{self.where}: this node holds no lease on {encounter}")
        return epoch

    async def _write(self, batch: list[Append]) -> Collection[Append]:
        return await self._run(_write_batch, batch, self.writer, self.node)

    def _lost(self, request: Append) -> LeaseLost:
        """An append of ``encounter`` was refused by the fence: the lease is gone."""
        encounter, epoch = request.encounter, request.epoch
        self.fenced += 1
        if self.epochs.get(encounter) == epoch:
            del self.epochs[encounter]
            if self.on_lease_lost is not None:
                self.on_lease_lost(encounter)
        return LeaseLost(
            f"{self.where}: another node took over {encounter} (this node's lease, epoch "
            f"{epoch}, is gone); nothing was saved"
        )

    # -- nodes and leases ---------------------------------------------------------------------

    async def become_node(self, node: str, url: str) -> None:
        """Register this server as node ``node`` reached at ``url`` (its websocket URL),
        replacing a row of the same id (a restart), and fence every append from now on."""
        await self._doing("register the node", _direct, _register_node, node, url)
        self.node = node

    async def leave(self) -> None:
        """Give up every lease this node holds and unregister it (a clean stop)."""
        if self.node is None:
            return
        node, self.node = self.node, None
        self.epochs.clear()
        await self._doing("unregister the node", _direct, _unregister_node, node)

    async def take_lease(self, encounter: str, seconds: float) -> Held | Owner:
        """Take ``encounter``'s lease for ``seconds`` when no other node holds a live
        one (never held, released, or expired), with an epoch above every earlier one:
        :class:`Held`. Otherwise who holds it: :class:`Owner`."""
        assert self.node is not None
        found: Held | Owner = await self._doing(
            "take the lease", _direct, _take_lease, encounter, self.node, seconds
        )
        if isinstance(found, Held):
            self.epochs[encounter] = found.epoch
        return found

    async def renew_leases(self, seconds: float, *, timeout: float | None = None) -> list[str]:
        """Renew every lease this node holds for ``seconds`` (and its heartbeat), giving
        up after ``timeout`` seconds; the encounters whose lease another node took
        meanwhile (forgotten here)."""
        assert self.node is not None
        held = dict(self.epochs)
        kept: set[str] = await self._doing(
            "renew the leases", _direct, _renew_leases, self.node, held, seconds, timeout=timeout
        )
        lost = [eid for eid, epoch in held.items() if eid not in kept]
        for eid in lost:
            if self.epochs.get(eid) == held[eid]:
                del self.epochs[eid]
        return lost

    async def release_lease(self, encounter: str) -> None:
        """Give ``encounter``'s lease up (it was unloaded): any node may take it now."""
        epoch = self.epochs.pop(encounter, None)
        if self.node is not None and epoch is not None:
            await self._doing(
                "release the lease", _direct, _release_lease, encounter, self.node, epoch
            )

    async def nodes(self, within: float) -> list[tuple[str, str, float]]:
        """The nodes whose heartbeat is at most ``within`` seconds old: id, websocket
        URL, seconds since their heartbeat."""
        rows = await self._reading(
            "the nodes",
            fetch,
            f"SELECT id, url, {_NOW} - heartbeat FROM nodes "
            f"WHERE heartbeat > {_NOW} - ? ORDER BY id",
            (within,),
        )
        return [(str(i), str(u), float(a)) for i, u, a in rows]

    # -- changes made by other processes --------------------------------------------------------

    async def outside_changes(self) -> int:
        """The changes the other writers (the CLI, other servers) made to records, grants
        and GM keys: the sum of their rows in ``changes``, never moved by this store."""
        rows = await self._reading(
            "the change counts",
            fetch,
            "SELECT COALESCE(SUM(n), 0) FROM changes WHERE writer <> ?",
            (self.writer,),
        )
        return int(rows[0][0])


# -- the blocking parts (run in worker threads) ------------------------------------------------


#: Seconds PostgreSQL lets one of the store's connections sit idle inside a transaction
#: before it ends the session (rolling the transaction back). The store never does, but
#: a process that is stopped (SIGSTOP, a frozen VM) in the middle of one would hold its
#: row locks, and so a lease another node waits for, for as long as it is stopped.
IDLE_IN_TRANSACTION_SECONDS = 5


def _configure_connection(conn: psycopg.Connection[Any]) -> None:
    conn.execute(
        f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION_SECONDS}s'".encode()
    )
    conn.execute(f"SET statement_timeout = '{STATEMENT_TIMEOUT_SECONDS}s'".encode())
    if conn.info.server_version >= 140000:
        # A session whose client is gone (a call given up, its socket shut) ends within
        # a second even while it waits for a lock, rather than holding its own locks on.
        conn.execute("SET client_connection_check_interval = '1s'")
    conn.commit()


def _with_tcp_options(url: str) -> str:
    """``url`` as a connection string with :data:`TCP_OPTIONS` added, but those it sets
    itself (the operator's word wins)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    given = conninfo_to_dict(url)
    return make_conninfo(url, **{k: v for k, v in TCP_OPTIONS.items() if k not in given})


class _Call:
    """The connection one store call is using, so that a call past its time can be cut
    off from another thread: shutting the socket down wakes the worker thread blocked
    on it (a silent network cut would block it for as long as the kernel waits)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self.was_cut = False

    def using(self, conn: psycopg.Connection[Any] | None) -> None:
        with self._lock:
            if conn is not None and self.was_cut:
                raise CallTimedOut("given up before it started")
            self._conn = conn

    def cut(self) -> None:
        with self._lock:
            self.was_cut = True
            if self._conn is None or self._conn.closed:
                return
            try:
                fd = self._conn.pgconn.socket
                with socket.socket(fileno=os.dup(fd)) as sock:
                    sock.shutdown(socket.SHUT_RDWR)
            except Exception as exc:  # already gone (psycopg says so its own way)
                log.debug("could not shut a timed-out connection down: %s", exc)


class _Watchdog:
    """One thread per store that cuts the calls past their deadline (on the real clock):
    each call is watched from its start in the worker thread to its end."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: dict[_Call, float] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, call: _Call, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self._changed:
            earliest = min(self._due.values(), default=None)
            self._due[call] = deadline
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="zonekeep-store-watchdog", daemon=True
                )
                self._thread.start()
            elif earliest is None or deadline < earliest:
                self._changed.notify()

    def forget(self, call: _Call) -> None:
        with self._changed:
            self._due.pop(call, None)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()

    def _run(self) -> None:
        with self._changed:
            while not self._closed:
                now = time.monotonic()
                for call in [c for c, deadline in self._due.items() if deadline <= now]:
                    del self._due[call]
                    call.cut()
                earliest = min(self._due.values(), default=None)
                self._changed.wait(None if earliest is None else earliest - now)


def _open_pool(pool: ConnectionPool[Any], url: str, where: str) -> None:
    """Make or migrate the store on a connection of its own (which also says plainly why
    the database cannot be reached), then open ``pool``."""
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        with (
            psycopg.connect(
                _with_tcp_options(url), connect_timeout=int(CONNECT_TIMEOUT_SECONDS)
            ) as conn,
            conn.transaction(),
        ):
            _upgrade(conn, where)
    except psycopg.OperationalError as exc:
        raise StoreError(f"{where}: cannot connect: {reason(exc)}") from None
    except psycopg.Error as exc:
        raise StoreError(f"{where}: cannot use the database: {reason(exc)}") from None
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
    except PoolTimeout:
        raise StoreError(
            f"{where}: could not open {pool.max_size} connections within "
            f"{CONNECT_TIMEOUT_SECONDS:g} s (max_connections of the database?)"
        ) from None


def _existing_tables(conn: psycopg.Connection[Any]) -> set[str]:
    """Our table names present in the schema new tables go to (``current_schema()``)."""
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name = ANY(%s)",
        (list(_TABLES),),
    ).fetchall()
    return {r[0] for r in rows}


def _read_version(conn: psycopg.Connection[Any], where: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    version = int(row[0]) if row and str(row[0]).isdigit() else -1
    return check_version(version, SCHEMA_VERSION, MIGRATIONS, where, "database")


def _upgrade(conn: psycopg.Connection[Any], where: str) -> None:
    """Make the store (the version 1 layout) in an empty schema, or bring an older one to
    :data:`SCHEMA_VERSION` through :data:`MIGRATIONS`, recording each step in
    ``schema_migrations``; in the caller's one transaction, under an advisory lock, so
    two processes opening a new database at once make it once."""
    if conn.execute("SELECT current_schema()").fetchone() in (None, (None,)):
        raise StoreError(
            f"{where}: no schema to keep the store in (the search_path names none that "
            "exists); create it first"
        )
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    tables = _existing_tables(conn)
    now = time.time()
    if "meta" not in tables:
        if tables:
            raise StoreError(
                f"{where}: the schema holds tables named like a zonekeep store's "
                f"({', '.join(sorted(tables))}) but is not one; it was left untouched. "
                "Use a database (or schema) of its own."
            )
        for statement in statements(_SCHEMA_1):
            conn.execute(statement.encode())
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        conn.execute(
            "INSERT INTO schema_migrations VALUES (1, 'a new store', %s, %s)", (now, VERSION)
        )
        log.info("%s: a new store (version 1)", where)
    version = _read_version(conn, where)
    span = (version, SCHEMA_VERSION)
    migrate(conn, _PgDb(conn, ""), MIGRATIONS, span, where, "database", VERSION)


def _bump(conn: psycopg.Connection[Any], writer: str) -> None:
    """Count one change of ``writer``'s (in the transaction of the change)."""
    conn.execute(
        "INSERT INTO changes (writer, n) VALUES (%s, 1) "
        "ON CONFLICT (writer) DO UPDATE SET n = changes.n + 1",
        (writer,),
    )


def _retire_writer(conn: psycopg.Connection[Any], writer: str) -> None:
    """Fold a closing store's row into the row ``''`` (the closed writers' sum), so the
    table does not grow with every CLI command and the other writers' sums stay put."""
    row = conn.execute("DELETE FROM changes WHERE writer=%s RETURNING n", (writer,)).fetchone()
    if row is not None:
        conn.execute(
            "INSERT INTO changes (writer, n) VALUES ('', %s) "
            "ON CONFLICT (writer) DO UPDATE SET n = changes.n + excluded.n",
            (row[0],),
        )


def _fence(conn: psycopg.Connection[Any], batch: list[Append], node: str) -> list[Append]:
    """The appends of ``batch`` whose lease ``node`` no longer holds at their epoch. The
    leases still held are locked (``FOR SHARE``, in encounter order, as every writer of
    several leases locks them) until the transaction ends, so no other node can take one
    of them before these events are committed, and none of a lost one is written."""
    fenced = [r for r in batch if r.epoch is None]
    wanted = sorted({(r.encounter, r.epoch) for r in batch if r.epoch is not None})
    if not wanted:
        return fenced
    rows = conn.execute(
        "SELECT l.encounter, l.epoch FROM leases l "
        "JOIN unnest(%s::text[], %s::bigint[]) AS w(encounter, epoch) "
        "ON l.encounter = w.encounter AND l.epoch = w.epoch "
        "WHERE l.node = %s ORDER BY l.encounter FOR SHARE OF l",
        ([e for e, _ in wanted], [ep for _, ep in wanted], node),
    ).fetchall()
    held = {(str(e), int(ep)) for e, ep in rows}
    return fenced + [r for r in batch if r.epoch is not None and (r.encounter, r.epoch) not in held]


def _write_batch(
    conn: psycopg.Connection[Any], batch: list[Append], writer: str, node: str | None = None
) -> list[Append]:
    """Write ``batch`` (in the caller's transaction): the records of new encounters,
    every event in one statement, the snapshots and the finished marks. With ``node``,
    the appends whose lease is lost are left out: those are returned."""
    fenced: list[Append] = []
    if node is not None:
        fenced = _fence(conn, batch, node)
        if fenced:
            batch = [r for r in batch if r not in fenced]
    db = _PgDb(conn, writer)
    created = insert_records(db, batch)
    encounters = [r.encounter for r in batch for _ in r.types]
    seqs = [r.first_seq + i for r in batch for i in range(len(r.types))]
    if seqs:
        conn.execute(
            "INSERT INTO events (encounter, seq, type, data) "
            "SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[])",
            (
                encounters,
                seqs,
                [t for r in batch for t in r.types],
                [d for r in batch for d in r.datas],
            ),
        )
    finish_batch(db, batch)
    if created:
        db.changed()
    return fenced


def _register_node(conn: psycopg.Connection[Any], node: str, url: str) -> None:
    conn.execute(
        f"INSERT INTO nodes (id, url, started, heartbeat) VALUES (%s, %s, {_NOW}, {_NOW}) "
        "ON CONFLICT (id) DO UPDATE SET url=excluded.url, started=excluded.started, "
        "heartbeat=excluded.heartbeat",
        (node, url),
    )
    # Nodes silent for a day are gone for good (their leases expired long ago).
    conn.execute(f"DELETE FROM nodes WHERE heartbeat < {_NOW} - 86400")
    # A node of that id that stopped without a word (killed): its leases are not ours.
    conn.execute("UPDATE leases SET expires = 0 WHERE node = %s", (node,))


def _unregister_node(conn: psycopg.Connection[Any], node: str) -> None:
    conn.execute("UPDATE leases SET expires = 0 WHERE node = %s", (node,))
    conn.execute("DELETE FROM nodes WHERE id = %s", (node,))


#: How long taking a lease waits for a node's append under way on it (then it is held).
_TAKE_LOCK_TIMEOUT = "2s"


def _take_lease(conn: psycopg.Connection[Any], eid: str, node: str, seconds: float) -> Held | Owner:
    import psycopg

    conn.execute(f"SET LOCAL lock_timeout = '{_TAKE_LOCK_TIMEOUT}'")
    try:
        row = conn.execute(
            f"INSERT INTO leases (encounter, node, epoch, expires) VALUES (%s, %s, 1, {_NOW} + %s) "
            "ON CONFLICT (encounter) DO UPDATE SET node = excluded.node, "
            "epoch = leases.epoch + 1, expires = excluded.expires "
            f"WHERE leases.expires <= {_NOW} OR leases.node = excluded.node "
            "OR NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = leases.node) "
            "RETURNING epoch",
            (eid, node, seconds),
        ).fetchone()
    except psycopg.errors.LockNotAvailable:
        # Another node is taking it (or appending under it) right now; this transaction
        # is aborted, so no more reading in it: the encounter is being handed over.
        return Owner("", "", seconds)
    if row is not None:
        return Held(eid, int(row[0]))
    owner = conn.execute(
        f"SELECT l.node, COALESCE(n.url, ''), l.expires - {_NOW} FROM leases l "
        "LEFT JOIN nodes n ON n.id = l.node WHERE l.encounter = %s",
        (eid,),
    ).fetchone()
    if owner is None:  # (deleted meanwhile)
        return Owner("", "", seconds)
    return Owner(str(owner[0]), str(owner[1]), max(0.0, float(owner[2])))


def _renew_leases(
    conn: psycopg.Connection[Any], node: str, held: dict[str, int], seconds: float
) -> set[str]:
    conn.execute(f"UPDATE nodes SET heartbeat = {_NOW} WHERE id = %s", (node,))
    if not held:
        return set()
    names = sorted(held)
    rows = conn.execute(
        "SELECT l.encounter FROM leases l "
        "JOIN unnest(%s::text[], %s::bigint[]) AS h(encounter, epoch) "
        "ON l.encounter = h.encounter AND l.epoch = h.epoch "
        "WHERE l.node = %s ORDER BY l.encounter FOR UPDATE OF l",
        (names, [held[n] for n in names], node),
    ).fetchall()
    kept = sorted(str(r[0]) for r in rows)
    if kept:
        conn.execute(
            f"UPDATE leases SET expires = {_NOW} + %s WHERE node = %s AND encounter = ANY(%s)",
            (seconds, node, kept),
        )
    return set(kept)


def _release_lease(conn: psycopg.Connection[Any], eid: str, node: str, epoch: int) -> None:
    conn.execute(
        "UPDATE leases SET expires = 0 WHERE encounter = %s AND node = %s AND epoch = %s",
        (eid, node, epoch),
    )


def _snapshot_reads(conn: psycopg.Connection[Any]) -> None:
    """Make the rest of this transaction read one snapshot of the database."""
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")


def _on_db(
    conn: psycopg.Connection[Any],
    writer: str,
    write: bool,
    fn: Callable[..., _T],
    args: tuple[Any, ...],
) -> _T:
    """``fn`` on the shared queries; a reading one reads one snapshot of the database."""
    if not write:
        _snapshot_reads(conn)
    return fn(_PgDb(conn, writer), *args)


def _direct(db: _PgDb, fn: Callable[..., _T], *args: Any) -> _T:
    """``fn`` (one of this dialect's own, on psycopg's connection) through :meth:`_doing`."""
    return fn(db.conn, *args)
