"""The store's map images and arena library (issue 35), the same on every store: in
memory, SQLite and PostgreSQL (the blob table ``images`` and ``library_arenas``), so an
image or arena saved through one node is there for every node of a PostgreSQL store."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import helpers
import pytest
import trio
from postgres_support import fresh_schema, schema_of, sql

from zonekeep.server._postgres import PostgresStore
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import EventStore, InMemoryStore, LibraryArena, StoredBlob


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema() as made:
        yield made


def blob(data: bytes, owner: str = "gm:gwen") -> StoredBlob:
    return StoredBlob(hashlib.sha256(data).hexdigest(), "png", 4, 3, data, owner)


async def check_images(store: EventStore) -> None:
    data = bytes(range(256)) * 3  # every byte value survives the round trip
    first = blob(data)
    assert await store.get_image(first.id) is None
    assert await store.put_image(first) is True
    assert await store.put_image(blob(data, "gm:other")) is False  # stored once
    got = await store.get_image(first.id)
    assert got == first and got is not None and got.data == data and got.owner == "gm:gwen"
    assert await store.image_bytes("gm:gwen") == len(data)
    assert await store.image_bytes("gm:other") == 0
    await store.put_image(blob(b"more", "gm:gwen"))
    assert await store.image_bytes("gm:gwen") == len(data) + 4


async def check_library(store: EventStore) -> None:
    mine = LibraryArena("fen", "gm:gwen", '{"id": "fen"}', 1.0)
    assert await store.save_arena(mine, 2) == "created"
    again = LibraryArena("fen", "gm:gwen", '{"id": "fen", "name": "Fen"}', 2.0)
    assert await store.save_arena(again, 2) == "replaced"
    theirs = LibraryArena("fen", "gm:bob", '{"id": "fen"}', 3.0)
    assert await store.save_arena(theirs, 2) == "taken"
    assert await store.save_arena(LibraryArena("keep", "gm:gwen", "{}", 4.0), 2) == "created"
    assert await store.save_arena(LibraryArena("third", "gm:gwen", "{}", 5.0), 2) == "quota"
    assert [a.name for a in await store.library_arenas()] == ["fen", "keep"]
    assert (await store.library_arenas())[0] == again
    # Another owner's arena is not deleted (and is returned as it is).
    assert await store.delete_arena("fen", "gm:bob") == again
    assert [a.name for a in await store.library_arenas()] == ["fen", "keep"]
    assert await store.delete_arena("fen", "gm:gwen") == again
    assert await store.delete_arena("fen", "gm:gwen") is None
    assert await store.delete_arena("keep", None) is not None  # the operator's way
    assert await store.library_arenas() == []


async def test_the_memory_store() -> None:
    store = InMemoryStore()
    await check_images(store)
    await check_library(store)


async def test_the_sqlite_store(tmp_path: Path) -> None:
    path = tmp_path / "zonekeep.sqlite3"
    with trio.fail_after(helpers.deadline(20)):
        store = await SqliteStore.open(path)
    try:
        await check_images(store)
        await check_library(store)
    finally:
        await store.aclose()
    with trio.fail_after(helpers.deadline(20)):
        store = await SqliteStore.open(path)  # kept in the file
    try:
        assert await store.image_bytes("gm:gwen") == 3 * 256 + 4
    finally:
        await store.aclose()


async def test_the_postgres_store_shares_them_between_nodes(pg_url: str) -> None:
    with trio.fail_after(helpers.deadline(20)):
        one = await PostgresStore.open(pg_url)
        two = await PostgresStore.open(pg_url)
    try:
        await check_images(one)
        image = blob(bytes(range(256)) * 3)
        assert await two.get_image(image.id) == image  # the other node reads it
        mine = LibraryArena("fen", "gm:gwen", '{"id": "fen"}', 1.0)
        assert await one.save_arena(mine, 5) == "created"
        assert await two.library_arenas() == [mine]
        assert await two.save_arena(LibraryArena("fen", "gm:bob", "{}", 2.0), 5) == "taken"
        assert await two.delete_arena("fen", "gm:gwen") == mine
        assert await one.library_arenas() == []
        await check_library(two)
    finally:
        await one.aclose()
        await two.aclose()
    found = sql(f"SELECT id, size, owner FROM {schema_of(pg_url)}.images ORDER BY size")
    assert [(size, owner) for _, size, owner in found] == [(4, "gm:gwen"), (768, "gm:gwen")]
