"""The PostgreSQL event store: ``zonekeep serve --store postgresql://...``.

The same :class:`~zonekeep.server._store.EventStore` as the SQLite store, kept in a
PostgreSQL database that the operator runs (docs/storage.md):

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

The tables are unqualified: they live in the first schema of the connection's
``search_path`` (``?options=-csearch_path%3Dname`` in the URL picks another one).
"""

from __future__ import annotations

import json
import logging
import secrets
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import trio

from zonekeep.sdk import Event, event_from_dict

from . import _metrics
from ._config import VERSION, mask_url
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

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

log = logging.getLogger("zonekeep.store")

#: The layout this version writes. Bump it with a migration in :data:`MIGRATIONS`.
SCHEMA_VERSION = 2

#: Connections a store keeps open unless told (``store_pool_size``).
DEFAULT_POOL_SIZE = 4

#: Seconds to wait for the database when opening the store, and for a free connection.
CONNECT_TIMEOUT_SECONDS = 10.0

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
)

_SCHEMA_1 = """
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
CREATE TABLE events (
    encounter TEXT NOT NULL,
    seq BIGINT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (encounter, seq)
);
CREATE TABLE snapshots (
    encounter TEXT NOT NULL,
    seq BIGINT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (encounter, seq)
);
CREATE TABLE grants (
    encounter TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    player TEXT,
    PRIMARY KEY (encounter, token_hash)
);
CREATE TABLE gm_keys (
    name TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE changes (writer TEXT PRIMARY KEY, n BIGINT NOT NULL)
"""


@attrs.frozen
class Migration:
    """The step from store version ``N`` to ``N + 1`` (``MIGRATIONS[N]``): ``apply`` runs
    inside the one transaction of the whole upgrade, so it must not commit."""

    description: str
    apply: Callable[[psycopg.Connection[Any]], None]


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


#: Migrations from version N to N + 1, by N.
MIGRATIONS: dict[int, Migration] = {
    1: Migration("nodes and encounter leases (several nodes)", _add_nodes_and_leases),
}

#: The database's clock in Unix seconds: every node's lease times are read from it, so
#: the nodes' own clocks never have to agree.
_NOW = "extract(epoch FROM clock_timestamp())"


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


@attrs.define
class _Append:
    encounter: str
    first_seq: int
    types: list[str]
    datas: list[str]
    snapshot: str | None
    finished: bool
    record: EncounterRecord | None = None
    #: The lease epoch the append is fenced by (a node's); ``None``: not fenced.
    epoch: int | None = None
    #: Set when the request was written (or failed: ``error``), or when its task is
    #: asked to write the next batch, which holds it (``written`` still False).
    done: trio.Event = attrs.field(factory=trio.Event)
    written: bool = False
    error: Exception | None = None


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


class PostgresStore:
    """A durable :class:`~zonekeep.server._store.EventStore` in a PostgreSQL database.

    Open it with ``await PostgresStore.open(url)``; close it with ``await store.aclose()``.
    """

    def __init__(self, url: str, pool: ConnectionPool[Any], size: int) -> None:
        #: The URL with its password masked: for messages and logs.
        self.where = mask_url(url)
        self._pool = pool
        self._limiter = trio.CapacityLimiter(size)
        self._pending: list[_Append] = []
        self._flushing = False
        self._next_seq: dict[str, int] = {}
        #: This store's row in ``changes`` (see :meth:`outside_changes`).
        self.writer = uuid.uuid4().hex
        #: How many transactions and appends were written (for benchmarks).
        self.transactions = 0
        self.appends = 0
        #: Set by :meth:`become_node`: this node's id; then every append is fenced by the
        #: epoch of the encounter's lease (:attr:`epochs`), in the append's transaction.
        self.node: str | None = None
        #: The leases this node holds: the epoch of each encounter's.
        self.epochs: dict[str, int] = {}
        #: Called with an encounter whose append was refused because its lease was lost.
        self.on_lease_lost: Callable[[str], None] | None = None
        #: Appends refused by the fence (for the metrics and the tests).
        self.fenced = 0

    @property
    def location(self) -> str:
        """Where the store is, for the operator's messages (the password masked)."""
        return self.where

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
            url,
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
            store._next_seq = await store._reading("the logs", _load_next_seqs)
        except BaseException:
            await trio.to_thread.run_sync(pool.close)
            raise
        return store

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(connection, *args)`` in a worker thread, in one transaction of a pooled
        connection (committed when ``fn`` returns, rolled back when it raises)."""
        return await trio.to_thread.run_sync(self._in_transaction, fn, args, limiter=self._limiter)

    def _in_transaction(self, fn: Callable[..., _T], args: tuple[Any, ...]) -> _T:
        with self._pool.connection() as conn, conn.transaction():
            return fn(conn, *args)

    async def _doing(self, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        import psycopg

        try:
            return await self._run(fn, *args)
        except (psycopg.Error, OSError) as exc:
            raise StoreError(f"{self.where}: could not {what}: {_reason(exc)}") from None

    async def _reading(self, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        return await self._doing(f"read {what}", fn, *args)

    async def aclose(self) -> None:
        try:
            await self._run(_retire_writer, self.writer)
        except Exception as exc:  # closing anyway
            log.warning("%s: could not fold this store's change count: %s", self.where, exc)
        await trio.to_thread.run_sync(self._pool.close)

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
        epoch = None
        if self.node is not None:
            epoch = self.epochs.get(encounter)
            if epoch is None:
                self.fenced += 1
                raise LeaseLost(f"{self.where}: this node holds no lease on {encounter}")
        check_next_seq(encounter, first_seq, self._next_seq.get(encounter, 1))
        request = _Append(
            encounter,
            first_seq,
            [e.type for e in events],
            event_texts(events),
            _dumps(snapshot) if snapshot is not None else None,
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
        """Write every pending append in one transaction, then wake the task of the first
        append queued meanwhile, which writes the next batch (never more than the batch
        holding its own append, so no task is held back writing for the others)."""
        import psycopg

        self._flushing = True
        batch: list[_Append] = []
        try:
            await trio.lowlevel.checkpoint()  # let the tasks ready to append join in
            batch, self._pending = self._pending, []
            started = time.perf_counter()
            try:
                fenced = await self._run(_write_batch, batch, self.writer, self.node)
            except Exception as exc:
                if not isinstance(exc, psycopg.Error | OSError):
                    log.exception("writing a batch of events failed")
                error = StoreError(f"{self.where}: could not save: {_reason(exc)}")
                _metrics.current().store_committed(time.perf_counter() - started, error)
                for request in batch:
                    request.error = error
            else:
                _metrics.current().store_committed(time.perf_counter() - started)
                self.transactions += 1
                self.appends += len(batch)
                for request in batch:
                    if request in fenced:
                        request.error = self._lost(request.encounter, request.epoch)
                        continue
                    self._next_seq[request.encounter] = request.first_seq + len(request.types)
        finally:
            for request in batch:
                request.written = True
                request.done.set()
            if self._pending:
                self._pending[0].done.set()
            else:
                self._flushing = False

    def _lost(self, encounter: str, epoch: int | None) -> LeaseLost:
        """An append of ``encounter`` was refused by the fence: the lease is gone."""
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
        await self._doing("register the node", _register_node, node, url)
        self.node = node

    async def leave(self) -> None:
        """Give up every lease this node holds and unregister it (a clean stop)."""
        if self.node is None:
            return
        node, self.node = self.node, None
        self.epochs.clear()
        await self._doing("unregister the node", _unregister_node, node)

    async def take_lease(self, encounter: str, seconds: float) -> Held | Owner:
        """Take ``encounter``'s lease for ``seconds`` when no other node holds a live
        one (never held, released, or expired), with an epoch above every earlier one:
        :class:`Held`. Otherwise who holds it: :class:`Owner`."""
        assert self.node is not None
        found = await self._doing("take the lease", _take_lease, encounter, self.node, seconds)
        if isinstance(found, Held):
            self.epochs[encounter] = found.epoch
        return found

    async def renew_leases(self, seconds: float) -> list[str]:
        """Renew every lease this node holds for ``seconds`` (and its heartbeat); the
        encounters whose lease another node took meanwhile (forgotten here)."""
        assert self.node is not None
        held = dict(self.epochs)
        kept = await self._doing("renew the leases", _renew_leases, self.node, held, seconds)
        lost = [eid for eid, epoch in held.items() if eid not in kept]
        for eid in lost:
            if self.epochs.get(eid) == held[eid]:
                del self.epochs[eid]
        return lost

    async def release_lease(self, encounter: str) -> None:
        """Give ``encounter``'s lease up (it was unloaded): any node may take it now."""
        epoch = self.epochs.pop(encounter, None)
        if self.node is not None and epoch is not None:
            await self._doing("release the lease", _release_lease, encounter, self.node, epoch)

    async def nodes(self, within: float) -> list[tuple[str, str, float]]:
        """The nodes whose heartbeat is at most ``within`` seconds old: id, websocket
        URL, seconds since their heartbeat."""
        rows = await self._reading(
            "the nodes",
            _fetch,
            f"SELECT id, url, {_NOW} - heartbeat FROM nodes "
            f"WHERE heartbeat > {_NOW} - %s ORDER BY id",
            (within,),
        )
        return [(str(i), str(u), float(a)) for i, u, a in rows]

    async def add_grant(self, encounter: str, grant: StoredGrant) -> None:
        await self._doing("save the grant", _insert_grant, encounter, grant, self.writer)

    async def remove_grants(self, encounter: str, token_hashes: Collection[str]) -> None:
        await self._doing(
            "revoke the grant", _delete_grants, encounter, list(token_hashes), self.writer
        )

    # -- reading ------------------------------------------------------------------------------

    async def stored_requests(self, encounter: str) -> list[dict[str, Any]]:
        rows = await self._reading("the idempotency keys", _read_requests, encounter)
        return [r for r in (stored_request(data) for (data,) in rows) if r is not None]

    async def read(self, encounter: str, after: int = 0) -> list[tuple[int, Event]]:
        rows = await self._reading("the events", _read_events, encounter, after)
        return [(seq, event_from_dict(json.loads(data))) for seq, data in rows]

    async def oldest_kept(self, encounter: str) -> int:
        return 1

    async def unfinished(self) -> list[StoredEncounter]:
        return await self._reading("the unfinished encounters", _unfinished)

    async def encounters(self) -> list[str]:
        rows = await self._reading(
            "the encounters", _fetch, "SELECT id FROM encounters ORDER BY created, id", ()
        )
        return [r[0] for r in rows]

    # -- records --------------------------------------------------------------------------------

    async def put_record(self, record: EncounterRecord) -> None:
        await self._doing(f"save the record of {record.id}", _put_record, record, self.writer)

    async def set_status(
        self, encounter: str, status: EncounterStatus, *, last_activity: float | None = None
    ) -> bool:
        return await self._doing(
            f"change the status of {encounter}",
            _set_status,
            encounter,
            status,
            last_activity,
            self.writer,
        )

    async def get_record(self, encounter: str) -> EncounterRecord | None:
        found = await self._reading("the record", _select_records, "WHERE id=%s", (encounter,))
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
            where.append("status=%s")
            params.append(status)
        if creator is not None:
            where.append("creator=%s")
            params.append(creator)
        if ids is not None:
            where.append("id = ANY(%s)")
            params.append(list(ids))
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return await self._reading("the records", _select_records, clause, tuple(params))

    async def load(self, encounter: str) -> StoredEncounter | None:
        found = await self._reading("the encounter", _load, encounter)
        if found is None:
            return None
        stored, next_seq = found
        # The database is the truth for an encounter being loaded: another process may
        # have deleted it or imported one under its id since this store appended to it.
        # A node loads an encounter only once it took its lease: no append of this
        # store's can still land after the read (the lease fences the older ones out).
        if self.node is not None or (not self._flushing and not self._pending):
            self._next_seq[encounter] = next_seq
        return stored

    async def delete(self, encounter: str) -> None:
        await self._doing(f"delete {encounter}", _delete, encounter, self.writer)
        self._next_seq.pop(encounter, None)

    async def log_summary(self, encounter: str) -> tuple[int, int, dict[str, int]]:
        """For the operator (``zonekeep encounters show``): how many events ``encounter``
        has, its last seq (0: none), and its grants counted by role."""
        return await self._reading("the log", _log_summary, encounter)

    # -- GM keys ------------------------------------------------------------------------------

    async def add_gm_key(self, key: GmKey) -> None:
        import psycopg

        try:
            await self._run(_add_gm_key, key, self.writer)
        except psycopg.errors.UniqueViolation:
            raise ValueError(f"there is already a GM key named {key.name!r}") from None
        except (psycopg.Error, OSError) as exc:
            raise StoreError(f"{self.where}: could not save the GM key: {_reason(exc)}") from None

    async def gm_keys(self) -> list[GmKey]:
        rows = await self._reading(
            "the GM keys",
            _fetch,
            "SELECT name, key_hash, created FROM gm_keys ORDER BY created, name",
            (),
        )
        return [GmKey(name, key_hash, created) for name, key_hash, created in rows]

    async def revoke_gm_key(self, name: str) -> bool:
        return await self._doing("revoke the GM key", _revoke_gm_key, name, self.writer)

    # -- the dice secret --------------------------------------------------------------------------

    async def dice_secret(self) -> bytes:
        """The store's dice secret (``meta.dice_secret``), made on first use."""
        try:
            return await self._doing("read the dice secret", _dice_secret)
        except ValueError as exc:
            raise StoreError(f"{self.where}: could not read the dice secret: {exc}") from None

    async def adopt_dice_secret(self, secret: bytes) -> None:
        """Make ``secret`` the store's dice secret (``zonekeep store copy``: the copied
        encounters' dice stay verifiable)."""
        await self._doing("save the dice secret", _adopt_dice_secret, secret.hex())

    # -- changes made by other processes --------------------------------------------------------

    async def outside_changes(self) -> int:
        """The changes the other writers (the CLI, other servers) made to records, grants
        and GM keys: the sum of their rows in ``changes``, never moved by this store."""
        rows = await self._reading(
            "the change counts",
            _fetch,
            "SELECT COALESCE(SUM(n), 0) FROM changes WHERE writer <> %s",
            (self.writer,),
        )
        return int(rows[0][0])


def _reason(exc: BaseException) -> str:
    """An error's message, first line only (psycopg adds context lines)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


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
    conn.commit()


def _open_pool(pool: ConnectionPool[Any], url: str, where: str) -> None:
    """Make or migrate the store on a connection of its own (which also says plainly why
    the database cannot be reached), then open ``pool``."""
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        with (
            psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT_SECONDS)) as conn,
            conn.transaction(),
        ):
            _upgrade(conn, where)
    except psycopg.OperationalError as exc:
        raise StoreError(f"{where}: cannot connect: {_reason(exc)}") from None
    except psycopg.Error as exc:
        raise StoreError(f"{where}: cannot use the database: {_reason(exc)}") from None
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
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{where}: made by a newer zonekeep (store version {version}; this one reads up to "
            f"{SCHEMA_VERSION}). Upgrade zonekeep; the database was left untouched."
        )
    if version < 1 or any(v not in MIGRATIONS for v in range(version, SCHEMA_VERSION)):
        raise StoreError(
            f"{where}: store version {version} is too old to migrate to {SCHEMA_VERSION}; "
            "the database was left untouched."
        )
    return version


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
        for statement in _SCHEMA_1.split(";"):
            if statement.strip():
                conn.execute(statement.encode())
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        conn.execute(
            "INSERT INTO schema_migrations VALUES (1, 'a new store', %s, %s)", (now, VERSION)
        )
        log.info("%s: a new store (version 1)", where)
    version = _read_version(conn, where)
    for v in range(version, SCHEMA_VERSION):
        step = MIGRATIONS[v]
        try:
            step.apply(conn)
        except Exception as exc:
            raise StoreError(
                f"{where}: migrating the store from version {v} to {v + 1} failed "
                f"({type(exc).__name__}: {_reason(exc)}); the database was left untouched."
            ) from exc
        conn.execute(
            "INSERT INTO schema_migrations VALUES (%s, %s, %s, %s)",
            (v + 1, step.description, now, VERSION),
        )
        log.info("%s: store migrated to version %d (%s)", where, v + 1, step.description)
    conn.execute("UPDATE meta SET value=%s WHERE key='schema_version'", (str(SCHEMA_VERSION),))


def _fetch(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...]) -> list[Any]:
    return conn.execute(sql.encode(), params).fetchall()


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


def _load_next_seqs(conn: psycopg.Connection[Any]) -> dict[str, int]:
    rows = conn.execute("SELECT encounter, MAX(seq) FROM events GROUP BY encounter").fetchall()
    return {eid: int(seq) + 1 for eid, seq in rows}


_RECORD_COLUMNS = ", ".join((*RECORD_FIELDS, "finished"))
_RECORD_SLOTS = ", ".join(["%s"] * (len(RECORD_FIELDS) + 1))

#: Insert, or replace every column but an ``"archived"`` status (and its ``finished``
#: mark), which only :func:`_set_status` changes.
_PUT_RECORD = (
    f"INSERT INTO encounters ({_RECORD_COLUMNS}) VALUES ({_RECORD_SLOTS}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c}=excluded.{c}" for c in RECORD_FIELDS if c not in ("id", "status"))
    + ", status=CASE WHEN encounters.status='archived' THEN encounters.status "
    "ELSE excluded.status END"
    + ", finished=CASE WHEN encounters.status='archived' THEN TRUE ELSE excluded.finished END"
)


def _record_row(record: EncounterRecord) -> tuple[Any, ...]:
    return (
        record.id,
        record.title,
        record.arena,
        record.creator,
        record.created,
        record.last_activity,
        record.status,
        record.public,
        record.phase,
        record.round,
        _dumps(list(record.players)),
        record.source,
        not_to_bring_back(record),
    )


def _fence(conn: psycopg.Connection[Any], batch: list[_Append], node: str) -> list[_Append]:
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
    conn: psycopg.Connection[Any], batch: list[_Append], writer: str, node: str | None = None
) -> list[_Append]:
    """Write ``batch`` (in the caller's transaction): the records of new encounters,
    every event in one statement, the snapshots and the finished marks. With ``node``,
    the appends whose lease is lost are left out: those are returned."""
    fenced: list[_Append] = []
    if node is not None:
        fenced = _fence(conn, batch, node)
        if fenced:
            batch = [r for r in batch if r not in fenced]
    now = time.time()
    created = False
    for r in batch:
        if r.first_seq == 1:
            record = r.record or record_from_creation(r.encounter, None, now, r.finished)
            conn.execute(
                f"INSERT INTO encounters ({_RECORD_COLUMNS}) VALUES ({_RECORD_SLOTS}) "
                "ON CONFLICT (id) DO NOTHING",
                _record_row(record),
            )
            created = True
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
    for r in batch:
        if r.snapshot is not None:
            conn.execute(
                "INSERT INTO snapshots (encounter, seq, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (encounter, seq) DO UPDATE SET data = excluded.data",
                (r.encounter, r.first_seq + len(r.types) - 1, r.snapshot),
            )
    ended = [r.encounter for r in batch if r.finished]
    if ended:
        conn.execute("UPDATE encounters SET finished=TRUE WHERE id = ANY(%s)", (ended,))
    if created:
        _bump(conn, writer)
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
            f"WHERE leases.expires <= {_NOW} "
            "OR NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = leases.node) "
            "RETURNING epoch",
            (eid, node, seconds),
        ).fetchone()
    except psycopg.errors.LockNotAvailable:
        row = None
    if row is not None:
        return Held(eid, int(row[0]))
    owner = conn.execute(
        f"SELECT l.node, COALESCE(n.url, ''), l.expires - {_NOW} FROM leases l "
        "LEFT JOIN nodes n ON n.id = l.node WHERE l.encounter = %s",
        (eid,),
    ).fetchone()
    if owner is None:  # (the lock timed out on a row being written)
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


def _insert_grant(
    conn: psycopg.Connection[Any], encounter: str, grant: StoredGrant, writer: str
) -> None:
    conn.execute(
        "INSERT INTO grants (encounter, token_hash, role, player) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT DO NOTHING",
        (encounter, grant.token_hash, grant.role, grant.player),
    )
    _bump(conn, writer)


def _delete_grants(
    conn: psycopg.Connection[Any], encounter: str, token_hashes: list[str], writer: str
) -> None:
    conn.execute(
        "DELETE FROM grants WHERE encounter=%s AND token_hash = ANY(%s)",
        (encounter, token_hashes),
    )
    _bump(conn, writer)


def _read_requests(conn: psycopg.Connection[Any], encounter: str) -> list[tuple[str]]:
    """The stored texts of ``encounter``'s events that hold a keyed request's record."""
    rows: list[tuple[str]] = conn.execute(
        "SELECT data FROM events WHERE encounter=%s AND strpos(data, %s) > 0 ORDER BY seq",
        (encounter, '"_request":'),
    ).fetchall()
    return rows


def _read_events(
    conn: psycopg.Connection[Any], encounter: str, after: int
) -> list[tuple[int, str]]:
    return conn.execute(
        "SELECT seq, data FROM events WHERE encounter=%s AND seq>%s ORDER BY seq",
        (encounter, after),
    ).fetchall()


def _stored(conn: psycopg.Connection[Any], eid: str) -> StoredEncounter:
    snap = conn.execute(
        "SELECT seq, data FROM snapshots WHERE encounter=%s ORDER BY seq DESC LIMIT 1", (eid,)
    ).fetchone()
    grants = tuple(
        StoredGrant(h, role, player)
        for h, role, player in conn.execute(
            "SELECT token_hash, role, player FROM grants WHERE encounter=%s ORDER BY token_hash",
            (eid,),
        ).fetchall()
    )
    return StoredEncounter(
        eid, int(snap[0]) if snap else 0, json.loads(snap[1]) if snap else None, grants
    )


def _snapshot_reads(conn: psycopg.Connection[Any]) -> None:
    """Make the rest of this transaction read one snapshot of the database."""
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")


def _unfinished(conn: psycopg.Connection[Any]) -> list[StoredEncounter]:
    _snapshot_reads(conn)
    ids = conn.execute(
        "SELECT id FROM encounters WHERE NOT finished ORDER BY created, id"
    ).fetchall()
    return [_stored(conn, eid) for (eid,) in ids]


def _load(conn: psycopg.Connection[Any], eid: str) -> tuple[StoredEncounter, int] | None:
    """The encounter's latest snapshot and grants, and its next seq, from one snapshot."""
    _snapshot_reads(conn)
    if conn.execute("SELECT 1 FROM encounters WHERE id=%s", (eid,)).fetchone() is None:
        return None
    last = conn.execute("SELECT MAX(seq) FROM events WHERE encounter=%s", (eid,)).fetchone()
    return _stored(conn, eid), int(last[0] or 0) + 1 if last else 1


def _put_record(conn: psycopg.Connection[Any], record: EncounterRecord, writer: str) -> None:
    conn.execute(_PUT_RECORD.encode(), _record_row(record))
    _bump(conn, writer)


def _set_status(
    conn: psycopg.Connection[Any],
    eid: str,
    status: str,
    last_activity: float | None,
    writer: str,
) -> bool:
    cur = conn.execute(
        "UPDATE encounters SET status=%s, finished=(%s<>'open' OR phase='ended'), "
        "last_activity=COALESCE(%s, last_activity) WHERE id=%s",
        (status, status, last_activity, eid),
    )
    if cur.rowcount > 0:
        _bump(conn, writer)
        return True
    return False


def _select_records(
    conn: psycopg.Connection[Any], where: str, params: tuple[Any, ...]
) -> list[EncounterRecord]:
    rows = conn.execute(
        f"SELECT {', '.join(RECORD_FIELDS)} FROM encounters {where} ORDER BY created, id".encode(),
        params,
    ).fetchall()
    return [
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
        ) in rows
    ]


def _delete(conn: psycopg.Connection[Any], eid: str, writer: str) -> None:
    for table, column in (
        ("events", "encounter"),
        ("snapshots", "encounter"),
        ("grants", "encounter"),
        ("encounters", "id"),
    ):
        conn.execute(f"DELETE FROM {table} WHERE {column}=%s".encode(), (eid,))
    _bump(conn, writer)


def _log_summary(conn: psycopg.Connection[Any], eid: str) -> tuple[int, int, dict[str, int]]:
    _snapshot_reads(conn)
    row = conn.execute(
        "SELECT COUNT(*), MAX(seq) FROM events WHERE encounter=%s", (eid,)
    ).fetchone()
    roles = conn.execute(
        "SELECT role, COUNT(*) FROM grants WHERE encounter=%s GROUP BY role ORDER BY role",
        (eid,),
    ).fetchall()
    count, last = row if row else (0, None)
    return int(count), int(last or 0), {role: int(n) for role, n in roles}


def _dice_secret(conn: psycopg.Connection[Any]) -> bytes:
    """A key in ``meta``, made on first use (no new layout: the version stays)."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('dice_secret', %s) ON CONFLICT (key) DO NOTHING",
        (secrets.token_hex(32),),
    )
    row = conn.execute("SELECT value FROM meta WHERE key='dice_secret'").fetchone()
    return bytes.fromhex(str(row[0] if row else ""))


def _adopt_dice_secret(conn: psycopg.Connection[Any], secret: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('dice_secret', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (secret,),
    )


def _add_gm_key(conn: psycopg.Connection[Any], key: GmKey, writer: str) -> None:
    conn.execute(
        "INSERT INTO gm_keys (name, key_hash, created) VALUES (%s, %s, %s)",
        (key.name, key.key_hash, key.created),
    )
    _bump(conn, writer)


def _revoke_gm_key(conn: psycopg.Connection[Any], name: str, writer: str) -> bool:
    if conn.execute("DELETE FROM gm_keys WHERE name=%s", (name,)).rowcount > 0:
        _bump(conn, writer)
        return True
    return False
