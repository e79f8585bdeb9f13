"""Map images and library arenas beyond their first store (issue 35): ``zonekeep store
copy`` moves them from SQLite to PostgreSQL and back (content-addressed images with
their owner, library arenas with their owner key), and an image that no library arena
and no encounter uses is forgotten once it has been unused for
``UNUSED_IMAGE_GRACE_DAYS`` (the archiving sweep does it), never one still in use."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import helpers
import pytest
import trio
from postgres_support import fresh_schema

from zonekeep.sdk import EncounterCreated, EncounterOptions, RandomEntropy, parse_arena
from zonekeep.sdk.engine import Engine
from zonekeep.server import ServerConfig
from zonekeep.server._admin import AdminError, copy_store
from zonekeep.server._postgres import PostgresStore
from zonekeep.server._registry import Registry
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import (
    UNUSED_IMAGE_GRACE_DAYS,
    EventStore,
    InMemoryStore,
    LibraryArena,
    StoredBlob,
)

DAY = 86400.0


def blob(data: bytes, owner: str = "gm:gwen", used: float = 0.0) -> StoredBlob:
    return StoredBlob(hashlib.sha256(data).hexdigest(), "png", 4, 3, data, owner, used)


def arena_text(name: str, image: str | None) -> str:
    data: dict[str, object] = {
        "id": name,
        "name": name.title(),
        "zones": [{"id": "hall", "name": "Hall", "size": "medium"}],
    }
    if image is not None:
        data["map"] = {"image": image, "width": 4, "height": 3}
    return json.dumps(data)


def created_on(eid: str, image: str) -> EncounterCreated:
    arena = parse_arena(json.loads(arena_text("crypt", image)))
    return EncounterCreated(eid, EncounterOptions(), (), name="Crypt", arena=arena)


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema() as made:
        yield made


async def open_sqlite(path: Path) -> SqliteStore:
    with trio.fail_after(helpers.deadline(20)):
        return await SqliteStore.open(path)


async def open_pg(url: str) -> PostgresStore:
    with trio.fail_after(helpers.deadline(20)):
        return await PostgresStore.open(url)


# -- zonekeep store copy -----------------------------------------------------------------------


async def fill(store: EventStore) -> tuple[StoredBlob, StoredBlob, StoredBlob]:
    """Three images (two owners; one in a library arena, one in an encounter, one unused)
    and two library arenas of two owners."""
    drawn = blob(bytes(range(256)) * 3, "gm:gwen", used=1000.0)
    played = blob(b"played-map", "operator", used=2000.0)
    spare = blob(b"spare-map", "gm:gwen", used=3000.0)
    for b in (drawn, played, spare):
        assert await store.put_image(b) is True
    assert await store.save_arena(
        LibraryArena("fen", "gm:gwen", arena_text("fen", drawn.id), 5.0), 9
    )
    assert await store.save_arena(LibraryArena("keep", "gm:bob", arena_text("keep", None), 6.0), 9)
    await store.append("crypt-1", 1, [created_on("crypt-1", played.id)])
    return drawn, played, spare


async def same_maps(copy: EventStore, source: EventStore) -> None:
    assert await copy.image_ids() == await source.image_ids()
    for image_id in await source.image_ids():
        theirs, ours = await source.get_image(image_id), await copy.get_image(image_id)
        assert theirs is not None and ours is not None
        assert (ours.data, ours.owner, ours.ext, ours.width, ours.height) == (
            theirs.data,
            theirs.owner,
            theirs.ext,
            theirs.width,
            theirs.height,
        )
    for owner in ("gm:gwen", "operator", "gm:bob"):  # the quotas carry over
        assert await copy.image_bytes(owner) == await source.image_bytes(owner)
    assert await copy.library_arenas() == await source.library_arenas()


async def test_store_copy_moves_maps_and_library_arenas_to_postgresql_and_back(
    pg_url: str, tmp_path: Path
) -> None:
    first = await open_sqlite(tmp_path / "first.sqlite3")
    try:
        *_, spare = await fill(first)
        pg = await open_pg(pg_url)
        try:
            with trio.fail_after(helpers.deadline(20)):
                done = await copy_store(first, pg)
            assert (done.encounters, done.images, done.arenas) == (1, 3, 2)
            await same_maps(pg, first)
            [fen, keep] = await pg.library_arenas()
            assert (fen.owner, keep.owner) == ("gm:gwen", "gm:bob")
            # The unused image keeps its last use: the grace is not restarted by a move.
            got = await pg.get_image(spare.id)
            assert got is not None and got.used == 3000.0
            back = await open_sqlite(tmp_path / "back.sqlite3")
            try:
                with trio.fail_after(helpers.deadline(20)):
                    again = await copy_store(pg, back)
                assert (again.images, again.arenas) == (3, 2)
                await same_maps(back, first)
                assert await back.read("crypt-1") == await first.read("crypt-1")
            finally:
                await back.aclose()
        finally:
            await pg.aclose()
    finally:
        await first.aclose()


async def test_a_target_holding_maps_is_refused_unless_forced(pg_url: str, tmp_path: Path) -> None:
    source = await open_sqlite(tmp_path / "zonekeep.sqlite3")
    target = await open_pg(pg_url)
    try:
        await fill(source)
        # The target holds one library arena of the same name (another owner's) and one
        # image of its own: nothing else.
        mine = blob(b"target-only", "gm:zed")
        await target.put_image(mine)
        await target.save_arena(LibraryArena("fen", "gm:zed", arena_text("fen", None), 1.0), 9)
        with pytest.raises(AdminError, match="1 map image\\(s\\) and 1 library arena"):
            await copy_store(source, target)
        assert await target.image_ids() == [mine.id]
        assert [(a.name, a.owner) for a in await target.library_arenas()] == [("fen", "gm:zed")]
        with trio.fail_after(helpers.deadline(20)):
            await copy_store(source, target, force=True)
        # The source's arena replaced the one of its name; the target's own image stays.
        assert [(a.name, a.owner) for a in await target.library_arenas()] == [
            ("fen", "gm:gwen"),
            ("keep", "gm:bob"),
        ]
        assert mine.id in await target.image_ids()
        assert set(await source.image_ids()) < set(await target.image_ids())
    finally:
        await target.aclose()
        await source.aclose()


# -- unused images -----------------------------------------------------------------------------


async def check_unused_images_go(store: EventStore) -> None:
    drawn, played, spare = await fill(store)
    fresh = blob(b"fresh-upload", "gm:gwen")  # used now
    await store.put_image(fresh)
    now = time.time()
    before = await store.image_bytes("gm:gwen")
    # Long after every use: only the unused one goes, and the uploader's quota gets its
    # bytes back.
    assert await store.forget_unused_images(now - DAY) == [spare.id]
    assert await store.get_image(spare.id) is None
    assert await store.image_bytes("gm:gwen") == before - len(spare.data)
    # An image in a library arena, or in an encounter, stays however old.
    assert await store.get_image(drawn.id) is not None
    assert await store.get_image(played.id) is not None
    assert await store.forget_unused_images(now + 365 * DAY) == [fresh.id]
    assert set(await store.image_ids()) == {drawn.id, played.id}
    # Uploading an image again (as POST /images does: no last use given) restarts its
    # grace.
    again = blob(b"uploaded-twice", "gm:gwen", used=10.0)
    assert await store.put_image(again) is True
    assert await store.put_image(blob(again.data, "gm:other")) is False
    assert await store.forget_unused_images(now - DAY) == []
    assert await store.forget_unused_images(now + 365 * DAY) == [again.id]
    # Saving a library arena on an image marks it used now: an old upload saved today
    # stays for the grace again after its arena is deleted.
    old = blob(b"old-upload", "gm:gwen", used=10.0)
    await store.put_image(old)
    await store.save_arena(LibraryArena("late", "gm:gwen", arena_text("late", old.id), 7.0), 9)
    assert await store.delete_arena("late", "gm:gwen") is not None
    assert old.id not in await store.forget_unused_images(now - DAY)
    assert old.id in await store.forget_unused_images(now + 365 * DAY)
    # Deleting the encounter frees its map too.
    await store.delete("crypt-1")
    assert await store.forget_unused_images(now + 365 * DAY) == [played.id]
    assert await store.image_ids() == [drawn.id]


async def test_unused_images_go_from_the_memory_store() -> None:
    await check_unused_images_go(InMemoryStore())


async def test_unused_images_go_from_the_sqlite_store(tmp_path: Path) -> None:
    store = await open_sqlite(tmp_path / "zonekeep.sqlite3")
    try:
        await check_unused_images_go(store)
    finally:
        await store.aclose()


async def test_unused_images_go_from_the_postgres_store(pg_url: str) -> None:
    store = await open_pg(pg_url)
    try:
        await check_unused_images_go(store)
    finally:
        await store.aclose()


@pytest.fixture
async def registry() -> AsyncIterator[Registry]:
    async with trio.open_nursery() as nursery:
        made = Registry(
            ServerConfig(port=0, store="memory"), Engine(), InMemoryStore(), RandomEntropy(7)
        )
        made.nursery = nursery
        yield made
        nursery.cancel_scope.cancel()


async def test_the_archiving_sweep_forgets_images_unused_for_the_grace(registry: Registry) -> None:
    store = registry.store
    now = time.time()
    drawn, played, spare = await fill(store)
    await store.put_image(blob(b"today", "gm:gwen", used=now))
    wall = [now + (UNUSED_IMAGE_GRACE_DAYS - 1) * DAY]
    registry.clock = lambda: wall[0]
    await registry.sweep()  # within the grace of today's upload; the old spare goes
    assert await store.get_image(spare.id) is None
    assert len(await store.image_ids()) == 3
    wall[0] = now + UNUSED_IMAGE_GRACE_DAYS * DAY + 60
    await registry.sweep()
    assert set(await store.image_ids()) == {drawn.id, played.id}
