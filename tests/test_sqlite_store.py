"""The SQLite event store (server/_sqlite.py) on its own, without sockets.

Round trips, group commit, snapshots and recovery lists, hashed grants and reopening,
on the PostgreSQL store too (server/_postgres.py, the ``target`` fixture); then what is
SQLite's own: durability pragmas, the refusals (each names the file and leaves it byte
for byte as it was) and the write errors (disk full, read-only): nothing of a failed
batch is stored.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
import trio.testing
from postgres_support import fresh_schema, schema_of, sql

from zonekeep.sdk import Event, Note, NoteAdded, RoundStarted
from zonekeep.sdk.host import event_to_dict
from zonekeep.server._postgres import PostgresStore
from zonekeep.server._sqlite import SCHEMA_VERSION, SqliteStore
from zonekeep.server._store import StoredGrant, StoreError

Store = SqliteStore | PostgresStore


def rounds(first: int, count: int) -> list[Event]:
    """``count`` small distinct events."""
    return [RoundStarted(first + i) for i in range(count)]


def dicts(pairs: list[tuple[int, Event]]) -> list[tuple[int, dict[str, object]]]:
    return [(seq, event_to_dict(e)) for seq, e in pairs]


def all_bytes(folder: Path) -> bytes:
    """Everything on disk under ``folder`` (the store, its WAL and shared memory)."""
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


async def open_store(path: Path, **kw: object) -> SqliteStore:
    with trio.fail_after(helpers.deadline(10)):
        return await SqliteStore.open(path, **kw)  # type: ignore[arg-type]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "zonekeep.sqlite3"


@attrs.frozen
class Target:
    """Where a test's store is: a SQLite file (``db``) or a PostgreSQL schema (``url``)."""

    db: Path
    url: str | None = None

    async def open(self, **kw: object) -> Store:
        if self.url is None:
            return await open_store(self.db, **kw)
        with trio.fail_after(helpers.deadline(20)):
            return await PostgresStore.open(self.url)

    def count_events(self) -> int:
        """The events stored, as another connection sees them."""
        if self.url is None:
            with sqlite3.connect(self.db) as conn:
                count = int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
            conn.close()
            return count
        return int(str(sql(f"SELECT COUNT(*) FROM {schema_of(self.url)}.events")[0][0]))

    def everything(self) -> bytes:
        """Everything stored (the files, or a dump of every table's rows)."""
        if self.url is None:
            return all_bytes(self.db.parent)
        schema = schema_of(self.url)
        tables = sql(
            f"SELECT table_name FROM information_schema.tables WHERE table_schema='{schema}'"
        )
        rows = [sql(f"SELECT * FROM {schema}.{t}") for (t,) in tables]
        return repr(rows).encode()


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, db: Path) -> Iterator[Target]:
    if request.param == "sqlite":
        yield Target(db)
        return
    with fresh_schema() as url:
        yield Target(db, url)


# -- round trips ---------------------------------------------------------------------------


async def test_append_and_read_round_trip_with_seqs(target: Target) -> None:
    store = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 3))
            await store.append("e1", 4, rounds(4, 2))
            await store.append("e2", 1, rounds(100, 1))
            got = await store.read("e1")
            tail = await store.read("e1", after=3)
            other = await store.read("e2")
            missing = await store.read("nope")
            listed = await store.encounters()
        assert dicts(got) == dicts([(i, RoundStarted(i)) for i in range(1, 6)])
        assert [type(e) for _, e in got] == [RoundStarted] * 5
        assert dicts(tail) == [
            (4, {"type": "round_started", "round": 4}),
            (5, event_to_dict(RoundStarted(5))),
        ]
        assert dicts(other) == [(1, event_to_dict(RoundStarted(100)))]
        assert missing == []
        assert listed == ["e1", "e2"]
        assert await store.oldest_kept("e1") == 1
    finally:
        await store.aclose()


async def test_a_rich_event_round_trips_exactly(target: Target) -> None:
    event = NoteAdded(Note("n1", 'Ünïcødé ✓ "quoted" \n newline \x00', hidden=True))
    store = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, [event])
            ((seq, back),) = await store.read("e1")
        assert seq == 1
        assert back == event
        assert isinstance(back, NoteAdded)
        assert back.note.text == event.note.text
    finally:
        await store.aclose()


@pytest.mark.parametrize(("first", "expected"), [(2, 1), (0, 1)])
async def test_first_append_must_start_at_one(target: Target, first: int, expected: int) -> None:
    store = await target.open()
    try:
        with (
            trio.fail_after(helpers.deadline(10)),
            pytest.raises(ValueError, match=f"expected {expected}"),
        ):
            await store.append("e1", first, rounds(1, 1))
        assert await store.read("e1") == []
        assert await store.encounters() == []
    finally:
        await store.aclose()


@pytest.mark.parametrize("first", [1, 2, 3, 5])
async def test_non_contiguous_append_raises_value_error(target: Target, first: int) -> None:
    store = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 3))  # seqs 1..3; the next is 4
            with pytest.raises(ValueError, match="expected 4"):
                await store.append("e1", first, rounds(50, 2))
            got = await store.read("e1")
            assert [s for s, _ in got] == [1, 2, 3]
            await store.append("e1", 4, rounds(4, 1))  # the right one still works
            assert [s for s, _ in await store.read("e1")] == [1, 2, 3, 4]
    finally:
        await store.aclose()


# -- group commit ---------------------------------------------------------------------------


async def test_concurrent_appends_share_transactions_and_land_in_order(target: Target) -> None:
    store = await target.open()
    encounters = [f"e{i}" for i in range(6)]
    per_encounter = 25
    try:
        with trio.fail_after(helpers.deadline(20)):

            async def play_two_per_append(eid: str) -> None:
                seq = 1
                for n in range(per_encounter):
                    await store.append(eid, seq, [RoundStarted(n), RoundStarted(-n)])
                    seq += 2

            async with trio.open_nursery() as nursery:
                for eid in encounters:
                    nursery.start_soon(play_two_per_append, eid)
        assert store.appends == len(encounters) * per_encounter
        assert store.transactions < store.appends
        # With six writers at once, most transactions carry several appends.
        assert store.transactions <= store.appends // 2
        for eid in encounters:
            got = await store.read(eid)
            assert [s for s, _ in got] == list(range(1, 2 * per_encounter + 1))
            expected: list[Event] = []
            for n in range(per_encounter):
                expected += [RoundStarted(n), RoundStarted(-n)]
            assert [e for _, e in got] == expected
    finally:
        await store.aclose()
    # ... and all of it is stored: another connection sees every row.
    assert target.count_events() == len(encounters) * per_encounter * 2


async def test_an_append_returns_after_its_own_batch_while_others_keep_appending(
    target: Target,
) -> None:
    store = await target.open()
    returned_after: list[int] = []
    try:
        with trio.fail_after(helpers.deadline(20)):

            async def first() -> None:
                await store.append("a", 1, rounds(1, 1))
                returned_after.append(store.transactions)

            async def busy(eid: str) -> None:
                for seq in range(1, 31):
                    await store.append(eid, seq, rounds(seq, 1))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(first)
                await trio.testing.wait_all_tasks_blocked()  # "a" is being written
                assert store._flushing and not returned_after
                for i in range(4):
                    nursery.start_soon(busy, f"b{i}")
        # "a" went on as soon as the transaction holding it was written, not when the
        # others stopped appending (its room would have waited for them all).
        assert returned_after == [1]
        assert store.transactions >= 30
        assert store.appends == 1 + 4 * 30
        for i in range(4):
            assert [s for s, _ in await store.read(f"b{i}")] == list(range(1, 31))
    finally:
        await store.aclose()


async def test_a_single_writer_uses_one_transaction_per_append(target: Target) -> None:
    store = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            for seq in range(1, 6):
                await store.append("e1", seq, rounds(seq, 1))
        assert (store.transactions, store.appends) == (5, 5)
    finally:
        await store.aclose()


# -- snapshots, finished encounters, grants -----------------------------------------------


async def test_snapshots_grants_and_unfinished(target: Target) -> None:
    store = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("live", 1, rounds(1, 2), snapshot={"seq": 2, "v": "first"})
            await store.append("live", 3, rounds(3, 3))
            await store.append("live", 6, rounds(6, 1), snapshot={"seq": 6, "v": "second"})
            await store.append("live", 7, rounds(7, 1))
            await store.append("done", 1, rounds(1, 1), snapshot={"seq": 1})
            await store.append("done", 2, rounds(2, 1), finished=True)
            await store.append("bare", 1, rounds(1, 2))
            await store.add_grant("live", StoredGrant("h-gm", "gm"))
            await store.add_grant("live", StoredGrant("h-alice", "player", "alice"))
            await store.add_grant("live", StoredGrant("h-alice", "player", "alice"))  # twice: once
            await store.add_grant("done", StoredGrant("h-done", "gm"))
            found = {s.id: s for s in await store.unfinished()}
        assert sorted(found) == ["bare", "live"]
        live = found["live"]
        assert live.snapshot_seq == 6
        assert live.snapshot == {"seq": 6, "v": "second"}
        assert sorted(live.grants, key=lambda g: g.token_hash) == [
            StoredGrant("h-alice", "player", "alice"),
            StoredGrant("h-gm", "gm", None),
        ]
        assert (found["bare"].snapshot_seq, found["bare"].snapshot, found["bare"].grants) == (
            0,
            None,
            (),
        )
        # A finished encounter keeps its events, it just is not brought back.
        assert [s for s, _ in await store.read("done")] == [1, 2]
        assert sorted(await store.encounters()) == ["bare", "done", "live"]
    finally:
        await store.aclose()


async def test_grants_are_stored_as_hashes_only(target: Target) -> None:
    token = "tok-" + "Zq9" * 10  # distinctive: must never reach the disk
    hashed = hashlib.sha256(token.encode()).hexdigest()
    store = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 1))
            await store.add_grant("e1", StoredGrant(hashed, "player", "alice"))
            on_disk_while_open = target.everything()
            (found,) = await store.unfinished()
    finally:
        await store.aclose()
    assert found.grants == (StoredGrant(hashed, "player", "alice"),)
    on_disk = target.everything()
    assert hashed.encode() in on_disk  # the check can see what is there ...
    for blob in (on_disk, on_disk_while_open):
        assert token.encode() not in blob  # ... and the token is not
        assert token[4:20].encode() not in blob


# -- durability, reopening --------------------------------------------------------------------


@pytest.mark.parametrize(("durability", "expected"), [("full", 2), ("normal", 1)])
async def test_durability_sets_synchronous(db: Path, durability: str, expected: int) -> None:
    store = await open_store(db, durability=durability)
    try:
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == expected
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        await store.aclose()


async def test_default_durability_is_full(db: Path) -> None:
    store = await open_store(db)
    try:
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    finally:
        await store.aclose()


async def test_reopening_keeps_everything(target: Target) -> None:
    store = await target.open(durability="normal")
    with trio.fail_after(helpers.deadline(10)):
        await store.append("e1", 1, rounds(1, 4), snapshot={"at": 4})
        await store.append("e1", 5, rounds(5, 2))
        await store.append("e2", 1, rounds(9, 1), finished=True)
        await store.add_grant("e1", StoredGrant("h1", "spectator"))
        before = dicts(await store.read("e1"))
        await store.aclose()
    again = await target.open()
    try:
        with trio.fail_after(helpers.deadline(10)):
            assert dicts(await store_read(again, "e1")) == before
            assert len(before) == 6
            (found,) = await again.unfinished()
            assert (found.id, found.snapshot_seq, found.snapshot) == ("e1", 4, {"at": 4})
            assert found.grants == (StoredGrant("h1", "spectator"),)
            assert sorted(await again.encounters()) == ["e1", "e2"]
            # The next seq is known after reopening: contiguity is still enforced.
            with pytest.raises(ValueError, match="expected 7"):
                await again.append("e1", 1, rounds(1, 1))
            await again.append("e1", 7, rounds(7, 1))
            assert [s for s, _ in await again.read("e1")] == list(range(1, 8))
            with pytest.raises(ValueError, match="expected 2"):
                await again.append("e2", 5, rounds(1, 1))
    finally:
        await again.aclose()


async def store_read(store: Store, eid: str) -> list[tuple[int, Event]]:
    return await store.read(eid)


async def test_an_empty_file_becomes_a_new_store(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"")
    store = await open_store(db)
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 1))
            assert len(await store.read("e1")) == 1
    finally:
        await store.aclose()


# -- refusals: clear, naming the file, leaving it untouched ---------------------------------


async def make_real_store(path: Path, events: int = 300) -> None:
    store = await open_store(path)
    with trio.fail_after(helpers.deadline(20)):
        for seq in range(1, events + 1, 10):
            await store.append(
                "e1", seq, rounds(seq, 10), snapshot={"n": seq} if seq % 100 == 1 else None
            )
        await store.add_grant("e1", StoredGrant("h", "gm"))
        await store.aclose()


def set_version(path: Path, version: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (version,))
    conn.close()


async def assert_refused(path: Path, *phrases: str) -> None:
    before = path.read_bytes()
    siblings = sorted(p.name for p in path.parent.iterdir())
    with trio.fail_after(helpers.deadline(10)), pytest.raises(StoreError) as info:
        await SqliteStore.open(path)
    message = str(info.value)
    assert str(path) in message
    assert "untouched" in message
    for phrase in phrases:
        assert phrase in message, message
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == siblings


async def test_refuses_a_garbage_file(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database at all \x00\xff" * 500)
    await assert_refused(db, "not a zonekeep store")


async def test_refuses_a_text_file_that_starts_like_sqlite(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)
    await assert_refused(db)


@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.1])
async def test_refuses_a_truncated_store(tmp_path: Path, fraction: float) -> None:
    real = tmp_path / "real" / "zonekeep.sqlite3"
    await make_real_store(real)
    data = real.read_bytes()
    assert len(data) > 4 * 4096
    cut = tmp_path / "cut" / "zonekeep.sqlite3"
    cut.parent.mkdir()
    # Cut on a page boundary (the worst case: it looks like a shorter database).
    size = int(len(data) * fraction) // 4096 * 4096 or 4096
    cut.write_bytes(data[:size])
    await assert_refused(cut, "damaged")
    # The original, of course, still opens.
    store = await open_store(real)
    try:
        assert len(await store.read("e1")) == 300
    finally:
        await store.aclose()


async def test_refuses_another_apps_sqlite_file(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
        conn.execute("INSERT INTO recipes VALUES ('stew', 90)")
    conn.close()
    await assert_refused(db, "not a zonekeep store")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT * FROM recipes").fetchall() == [("stew", 90)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"recipes"}


async def test_refuses_a_store_with_a_newer_schema_version(db: Path) -> None:
    await make_real_store(db, 20)
    set_version(db, str(SCHEMA_VERSION + 1))
    await assert_refused(db, "newer", f"version {SCHEMA_VERSION + 1}")


@pytest.mark.parametrize("version", ["0", "banana"])
async def test_refuses_a_store_with_an_unknown_older_version(db: Path, version: str) -> None:
    await make_real_store(db, 20)
    set_version(db, version)
    await assert_refused(db, "too old")


# -- write errors: nothing of the batch is stored -------------------------------------------


async def test_disk_full_refuses_the_batch_and_stores_nothing(db: Path) -> None:
    store = await open_store(db)
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 3))
            pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
            store._conn.execute(f"PRAGMA max_page_count={pages}")
            big = [RoundStarted(10_000 + i) for i in range(3000)]
            with pytest.raises(StoreError) as info:
                await store.append("e1", 4, big, snapshot={"pad": "x" * 50_000})
            assert str(db) in str(info.value)
            assert [s for s, _ in await store.read("e1")] == [1, 2, 3]
            assert await store.unfinished() == [] or all(
                s.snapshot is None for s in await store.unfinished()
            )
            # The same seq is still the next one; with room again it is stored.
            store._conn.execute("PRAGMA max_page_count=1073741823")
            await store.append("e1", 4, rounds(4, 2))
            assert [s for s, _ in await store.read("e1")] == [1, 2, 3, 4, 5]
    finally:
        await store.aclose()


async def test_disk_full_in_a_shared_batch_fails_every_append_of_it(db: Path) -> None:
    store = await open_store(db)
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("a", 1, rounds(1, 1))
            await store.append("b", 1, rounds(1, 1))
            pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
            store._conn.execute(f"PRAGMA max_page_count={pages}")
            errors: dict[str, Exception] = {}

            async def write(eid: str, first: int, count: int) -> None:
                try:
                    await store.append(eid, first, [RoundStarted(i) for i in range(count)])
                except StoreError as exc:
                    errors[eid] = exc

            async with trio.open_nursery() as nursery:
                nursery.start_soon(write, "a", 2, 1)  # small, alone in its transaction
                await trio.testing.wait_all_tasks_blocked()
                nursery.start_soon(write, "b", 2, 1)  # these two share the next one,
                nursery.start_soon(write, "c", 1, 3000)  # which cannot fit
            assert sorted(errors) == ["b", "c"]
            assert [s for s, _ in await store.read("a")] == [1, 2]
            assert [s for s, _ in await store.read("b")] == [1]
            assert await store.read("c") == []
    finally:
        await store.aclose()


async def test_disk_full_error_says_the_disk_is_full(db: Path) -> None:
    store = await open_store(db)
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 1))
            pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
            store._conn.execute(f"PRAGMA max_page_count={pages}")
            with pytest.raises(StoreError) as info:
                await store.append("e1", 2, [RoundStarted(i) for i in range(3000)])
        cause = str(info.value).replace(str(db), "<file>")  # the path itself may say "full"
        assert "full" in cause, cause
    finally:
        await store.aclose()


async def test_read_only_refuses_the_batch_and_stores_nothing(db: Path) -> None:
    store = await open_store(db)
    try:
        with trio.fail_after(helpers.deadline(10)):
            await store.append("e1", 1, rounds(1, 2))
            await store.add_grant("e1", StoredGrant("h1", "gm"))
            store._conn.execute("PRAGMA query_only=1")
            with pytest.raises(StoreError, match=r"readonly|read-only|read only") as info:
                await store.append("e1", 3, rounds(3, 2), snapshot={"x": 1}, finished=True)
            assert str(db) in str(info.value)
            with pytest.raises(StoreError, match="grant"):
                await store.add_grant("e1", StoredGrant("h2", "player", "bob"))
            with pytest.raises(StoreError):
                await store.append("new", 1, rounds(1, 1))
            # Reading still works, and shows nothing of the refused writes.
            assert [s for s, _ in await store.read("e1")] == [1, 2]
            (found,) = await store.unfinished()  # not marked finished
            assert (found.id, found.snapshot, found.grants) == (
                "e1",
                None,
                (StoredGrant("h1", "gm"),),
            )
            assert await store.encounters() == ["e1"]
            store._conn.execute("PRAGMA query_only=0")
            await store.append("e1", 3, rounds(3, 1))
            assert [s for s, _ in await store.read("e1")] == [1, 2, 3]
    finally:
        await store.aclose()


async def test_cancelling_the_flushing_task_does_not_strand_other_appends(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from zonekeep.server import _sqlite

    entered, release = threading.Event(), threading.Event()
    real_write = _sqlite._write_batch

    def slow_write(conn: sqlite3.Connection, batch: list[Any]) -> None:
        if not entered.is_set():  # hold the first transaction in the worker thread
            entered.set()
            release.wait(helpers.deadline(10))
        real_write(conn, batch)

    monkeypatch.setattr(_sqlite, "_write_batch", slow_write)
    store = await open_store(db)
    try:
        flusher_scope = trio.CancelScope()
        outcome: dict[str, str] = {}

        flusher_gone = trio.Event()

        async def flusher() -> None:
            try:
                with flusher_scope:
                    await store.append("a", 1, rounds(1, 1))
            finally:
                flusher_gone.set()

        async def other() -> None:
            try:
                await store.append("b", 1, rounds(1, 1))
            except StoreError:
                outcome["b"] = "error"
            else:
                outcome["b"] = "stored"

        with trio.fail_after(helpers.deadline(10)):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(flusher)
                await trio.to_thread.run_sync(entered.wait, 5)  # "a" is being written
                nursery.start_soon(other)  # "b" waits for the next transaction
                await trio.testing.wait_all_tasks_blocked()
                assert len(store._pending) == 1
                flusher_scope.cancel()  # e.g. the client that created "a" went away
                release.set()
                await flusher_gone.wait()
                # A later append goes through; by then "b" must have been answered.
                await store.append("c", 1, rounds(1, 1))
                await trio.testing.wait_all_tasks_blocked()
                answered = dict(outcome)
                stored = sorted(await store.encounters())
                nursery.cancel_scope.cancel()
        assert answered.get("b") in ("stored", "error"), (answered, stored)
        if answered["b"] == "stored":
            assert "b" in stored
    finally:
        await store.aclose()
