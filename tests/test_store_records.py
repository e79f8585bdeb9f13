"""Encounter records, GM keys and outside changes, on every store (the in-memory one,
SQLite and PostgreSQL), through the ``EventStore`` interface only: what one store does,
the others do.

Then what the durable stores have: a second store on the same file or database (the
CLI's) writing beside the server's, ``outside_changes`` following it, and the server's
cached next seq following a delete or an import made by another process; and SQLite's
write lock, shared by both connections.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import helpers
import pytest
import trio
import trio.testing
from postgres_support import fresh_schema

from zonekeep.sdk import EncounterCreated, EncounterOptions, Event, RoundStarted
from zonekeep.sdk.host import single_zone_arena
from zonekeep.server._postgres import PostgresStore
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import (
    EncounterRecord,
    EventStore,
    GmKey,
    InMemoryStore,
    StoredGrant,
)


def created(eid: str, name: str = "Brawl") -> EncounterCreated:
    return EncounterCreated(eid, EncounterOptions(), (), name=name, arena=single_zone_arena())


def record(eid: str, created: float = 100.0, **kw: object) -> EncounterRecord:
    fields: dict[str, object] = {
        "id": eid,
        "title": f"Title of {eid}",
        "arena": "tavern",
        "creator": "gm:alice",
        "created": created,
        "last_activity": created + 5,
    }
    fields.update(kw)
    return EncounterRecord(**fields)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    if request.param == "postgresql":
        with fresh_schema() as url:
            with trio.fail_after(helpers.deadline(20)):
                pg = await PostgresStore.open(url, pool_size=2)
            try:
                yield pg
            finally:
                await pg.aclose()
        return
    with trio.fail_after(helpers.deadline(10)):
        opened = await SqliteStore.open(tmp_path / "zonekeep.sqlite3")
    try:
        yield opened
    finally:
        await opened.aclose()


async def begin(store: EventStore, eid: str, *more: Event, finished: bool = False) -> None:
    await store.append(eid, 1, [created(eid), *more], finished=finished)


# -- records ------------------------------------------------------------------------------------


async def test_put_get_and_replace_a_record(store: EventStore) -> None:
    assert await store.get_record("e1") is None
    first = record("e1", public=True, players=("alice", "bob"), source="/x/goblins.json")
    await store.put_record(first)
    assert await store.get_record("e1") == first
    later = attrs.evolve(first, phase="turns", round=3, last_activity=200.0, players=("alice",))
    await store.put_record(later)
    assert await store.get_record("e1") == later
    assert await store.records() == [later]


async def test_records_are_oldest_first_and_filtered_by_status_and_creator(
    store: EventStore,
) -> None:
    c = record("c", created=300.0, creator=None)
    a = record("a", created=100.0)
    b = record("b", created=200.0, creator="gm:bob", status="archived")
    for r in (c, a, b):
        await store.put_record(r)
    assert [r.id for r in await store.records()] == ["a", "b", "c"]
    assert [r.id for r in await store.records(status="open")] == ["a", "c"]
    assert [r.id for r in await store.records(status="archived")] == ["b"]
    assert [r.id for r in await store.records(creator="gm:alice")] == ["a"]
    assert [r.id for r in await store.records(status="open", creator="gm:bob")] == []
    assert await store.records(status="ended") == []
    # Among given ids, in one query: oldest first still, unknown ids left out.
    assert [r.id for r in await store.records(ids=["c", "a", "nope"])] == ["a", "c"]
    assert [r.id for r in await store.records(ids=["b"], status="open")] == []
    assert await store.records(ids=[]) == []
    many = [f"x{i}" for i in range(2000)] + ["b"]  # more ids than SQLite's old 999 limit
    assert [r.id for r in await store.records(ids=many)] == ["b"]


async def test_the_first_append_makes_a_record_from_the_created_event(store: EventStore) -> None:
    await begin(store, "e1", RoundStarted(1))
    made = await store.get_record("e1")
    assert made is not None
    assert (made.id, made.title, made.arena, made.creator) == ("e1", "Brawl", "field", None)
    assert (made.status, made.phase, made.public, made.players) == ("open", "surprise", False, ())
    assert made.created == made.last_activity > 0
    # A log that has already ended (an import) is archived at once.
    await begin(store, "e2", finished=True)
    ended = await store.get_record("e2")
    assert ended is not None and (ended.status, ended.phase) == ("archived", "ended")
    assert [s.id for s in await store.unfinished()] == ["e1"]


async def test_a_record_stored_before_the_first_append_is_kept(store: EventStore) -> None:
    mine = record("e1", title="The server's own title", creator="ip:10.0.0.7")
    await store.put_record(mine)
    await begin(store, "e1")
    assert await store.get_record("e1") == mine
    assert [r.id for r in await store.records()] == ["e1"]


async def test_put_record_never_reopens_an_archived_encounter(store: EventStore) -> None:
    """The operator archived it; the server's late update (a round change) keeps the
    status archived and changes the rest."""
    await store.put_record(record("e1", status="archived"))
    await store.put_record(record("e1", status="open", round=4, phase="turns"))
    got = await store.get_record("e1")
    assert got is not None and (got.status, got.round, got.phase) == ("archived", 4, "turns")
    assert await store.unfinished() == []


async def test_set_status_archives_and_restores(store: EventStore) -> None:
    await begin(store, "e1")
    await store.put_record(record("e1", phase="turns", round=2))
    assert await store.set_status("e1", "archived")
    archived = await store.get_record("e1")
    assert archived is not None and archived.status == "archived"
    assert archived.last_activity == 105.0  # unchanged unless given
    assert await store.unfinished() == []
    assert await store.set_status("e1", "open", last_activity=999.0)
    restored = await store.get_record("e1")
    assert restored == attrs.evolve(archived, status="open", last_activity=999.0)
    assert [s.id for s in await store.unfinished()] == ["e1"]
    assert not await store.set_status("nope", "archived")
    assert await store.get_record("nope") is None


async def test_an_ended_encounter_stays_out_of_recovery_even_when_restored(
    store: EventStore,
) -> None:
    await begin(store, "e1", finished=True)
    await store.put_record(record("e1", status="archived", phase="ended"))
    assert await store.set_status("e1", "open")
    assert await store.unfinished() == []  # it loads on its first join, not at start
    loaded = await store.load("e1")
    assert loaded is not None and loaded.id == "e1"


async def test_ending_marks_it_finished_until_the_record_catches_up(store: EventStore) -> None:
    await begin(store, "e1")
    await store.append("e1", 2, [RoundStarted(1)], finished=True)
    assert await store.unfinished() == []
    await store.put_record(record("e1", status="archived", phase="ended"))
    assert await store.unfinished() == []


# -- load and delete --------------------------------------------------------------------------


async def test_load_gives_the_latest_snapshot_and_the_grants(store: EventStore) -> None:
    assert await store.load("e1") is None
    await begin(store, "e1")
    await store.append("e1", 2, [RoundStarted(1)], snapshot={"round": 1})
    await store.append("e1", 3, [RoundStarted(2)], snapshot={"round": 2})
    await store.add_grant("e1", StoredGrant("h1", "gm"))
    await store.add_grant("e1", StoredGrant("h2", "player", "alice"))
    loaded = await store.load("e1")
    assert loaded is not None
    assert (loaded.id, loaded.snapshot_seq, loaded.snapshot) == ("e1", 3, {"round": 2})
    assert sorted(loaded.grants, key=lambda g: g.token_hash) == [
        StoredGrant("h1", "gm"),
        StoredGrant("h2", "player", "alice"),
    ]


async def test_load_without_a_snapshot(store: EventStore) -> None:
    await begin(store, "e1")
    loaded = await store.load("e1")
    assert loaded is not None and (loaded.snapshot_seq, loaded.snapshot) == (0, None)


async def test_delete_forgets_everything_of_that_encounter_only(store: EventStore) -> None:
    for eid in ("e1", "e2"):
        await begin(store, eid, RoundStarted(1))
        await store.append(eid, 3, [RoundStarted(2)], snapshot={"x": eid})
        await store.add_grant(eid, StoredGrant(f"h-{eid}", "gm"))
    await store.delete("e1")
    assert await store.get_record("e1") is None
    assert await store.load("e1") is None
    assert await store.read("e1") == []
    assert await store.encounters() == ["e2"]
    assert [r.id for r in await store.records()] == ["e2"]
    assert len(await store.read("e2")) == 3
    # The id is free again: a new encounter under it starts at seq 1.
    await begin(store, "e1", RoundStarted(1))
    assert [seq for seq, _ in await store.read("e1")] == [1, 2]
    await store.delete("never-there")  # nothing to do, no error


# -- GM keys ------------------------------------------------------------------------------------


async def test_gm_keys_add_list_and_revoke(store: EventStore) -> None:
    assert await store.gm_keys() == []
    alice = GmKey("alice", "a" * 64, 10.0)
    bob = GmKey("bob", "b" * 64, 20.0)
    await store.add_gm_key(bob)
    await store.add_gm_key(alice)
    assert await store.gm_keys() == [alice, bob]
    with pytest.raises(ValueError, match="already a GM key named 'alice'"):
        await store.add_gm_key(GmKey("alice", "c" * 64, 30.0))
    assert await store.gm_keys() == [alice, bob]
    assert await store.revoke_gm_key("alice")
    assert not await store.revoke_gm_key("alice")
    assert await store.gm_keys() == [bob]


# -- outside changes ----------------------------------------------------------------------------


async def test_in_memory_outside_changes_follow_bump_outside() -> None:
    store = InMemoryStore()
    before = await store.outside_changes()
    await store.put_record(record("e1"))
    assert await store.outside_changes() == before
    store.bump_outside()
    assert await store.outside_changes() != before


@pytest.fixture(params=["sqlite", "postgresql"])
async def two(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[EventStore, EventStore]]:
    """Two stores on one file or database: the server's and the operator's (the CLI's)."""
    if request.param == "postgresql":
        with fresh_schema() as url:
            with trio.fail_after(helpers.deadline(20)):
                first = await PostgresStore.open(url, pool_size=2)
                second = await PostgresStore.open(url, pool_size=1)
            try:
                yield first, second
            finally:
                await second.aclose()
                await first.aclose()
        return
    path = tmp_path / "zonekeep.sqlite3"
    with trio.fail_after(helpers.deadline(10)):
        server = await SqliteStore.open(path)
        cli = await SqliteStore.open(path)
    try:
        yield server, cli
    finally:
        await cli.aclose()
        await server.aclose()


@pytest.fixture
async def two_sqlite(tmp_path: Path) -> AsyncIterator[tuple[SqliteStore, SqliteStore]]:
    """Two connections to one file: the server's and the operator's (the CLI's)."""
    path = tmp_path / "zonekeep.sqlite3"
    with trio.fail_after(helpers.deadline(10)):
        server = await SqliteStore.open(path)
        cli = await SqliteStore.open(path)
    try:
        yield server, cli
    finally:
        await cli.aclose()
        await server.aclose()


async def test_outside_changes_move_for_another_connection_only(
    two: tuple[EventStore, EventStore],
) -> None:
    server, cli = two
    with trio.fail_after(helpers.deadline(10)):
        start = await server.outside_changes()
        await begin(server, "e1")
        await server.put_record(record("e1"))
        await server.add_gm_key(GmKey("alice", "a" * 64, 1.0))
        assert await server.outside_changes() == start  # its own writes
        await cli.set_status("e1", "archived")
        moved = await server.outside_changes()
        assert moved != start
        assert await server.outside_changes() == moved  # nothing new since
        got = await server.get_record("e1")
        assert got is not None and got.status == "archived"
        await cli.revoke_gm_key("alice")
        assert await server.outside_changes() != moved
        assert await server.gm_keys() == []


async def test_every_connection_waits_for_the_others_write_lock(
    two_sqlite: tuple[SqliteStore, SqliteStore],
) -> None:
    """The CLI's writes wait for the server's transaction (SQLite's busy timeout, the
    same on both connections) instead of failing with "database is locked"."""
    for store in two_sqlite:
        row = await store._run(lambda s=store: s._conn.execute("PRAGMA busy_timeout").fetchone())
        assert row == (10_000,)


async def test_a_write_started_under_another_connections_lock_goes_through(
    two_sqlite: tuple[SqliteStore, SqliteStore],
) -> None:
    server, cli = two_sqlite
    with trio.fail_after(helpers.deadline(20)):
        await begin(server, "e1")
        holder = sqlite3.connect(server.path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("UPDATE encounters SET title='held' WHERE id='e1'")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cli.set_status, "e1", "archived")
            nursery.start_soon(server.append, "e1", 2, [RoundStarted(1)])
            await trio.testing.wait_all_tasks_blocked()  # both in their worker threads
            holder.execute("COMMIT")
        holder.close()
        got = await server.get_record("e1")
        assert got is not None and (got.title, got.status) == ("held", "archived")
        assert [seq for seq, _ in await server.read("e1")] == [1, 2]


async def test_load_follows_a_delete_and_an_import_made_by_another_process(
    two: tuple[EventStore, EventStore],
) -> None:
    server, cli = two
    with trio.fail_after(helpers.deadline(10)):
        await begin(server, "e1", RoundStarted(1), RoundStarted(2))
        await server.set_status("e1", "archived")
        await cli.delete("e1")
        # Another process imports a shorter log under the same id; the server loads it
        # and goes on from its last seq, not from the one it remembered.
        await begin(cli, "e1")
        with pytest.raises(ValueError, match="appending seq 2, expected 4"):
            await server.append("e1", 2, [RoundStarted(1)])  # it still remembers 3 events
        assert await server.load("e1") is not None
        await server.append("e1", 2, [RoundStarted(1)])
        assert [seq for seq, _ in await server.read("e1")] == [1, 2]


async def test_records_are_stored_as_plain_columns(tmp_path: Path) -> None:
    path = tmp_path / "zonekeep.sqlite3"
    store = await SqliteStore.open(path)
    try:
        await store.put_record(record("e1", players=("alice", "bob"), public=True))
        await store.add_gm_key(GmKey("alice", "f" * 64, 1.0))
    finally:
        await store.aclose()
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT title, status, public, players, finished FROM encounters"
        ).fetchone()
        keys = conn.execute("SELECT * FROM gm_keys").fetchall()
    conn.close()
    assert row == ("Title of e1", "open", 1, json.dumps(["alice", "bob"]), 0)
    assert keys == [("alice", "f" * 64, 1.0)]
