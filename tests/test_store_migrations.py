"""Store upgrades: a store written by zonekeep 0.1 (tests/fixtures/store-0.1.sqlite3, made
through a real 0.1 server by tests/fixtures/make_store_0_1.py) opened by today's code.

The upgrade keeps every event and grant, fills in the encounter records from the logs,
records its steps in ``schema_migrations``, gives the same layout as a new store, runs
once, and leaves the file as it was when a step fails; a store from a newer zonekeep is
refused with a message naming the file (and left untouched).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio

from zonekeep.server._config import VERSION
from zonekeep.server._sqlite import _SCHEMA_1, MIGRATIONS, SCHEMA_VERSION, Migration, SqliteStore
from zonekeep.server._store import StoreError

FIXTURES = Path(__file__).parent / "fixtures"
OLD = FIXTURES / "store-0.1.sqlite3"
#: What the 0.1 store holds, as make_store_0_1.py read it back from the file it made.
OLD_CONTENT: dict[str, Any] = json.loads((FIXTURES / "store-0.1.json").read_text())


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """A copy of the 0.1 store (the fixture itself is never opened for writing)."""
    target = tmp_path / "data" / "zonekeep.sqlite3"
    target.parent.mkdir()
    shutil.copyfile(OLD, target)
    return target


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def layout(path: Path) -> list[tuple[Any, ...]]:
    """The tables and indexes of a store, as SQLite keeps their definitions."""
    return rows(path, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")


async def open_store(path: Path) -> SqliteStore:
    with trio.fail_after(helpers.deadline(20)):
        return await SqliteStore.open(path)


def test_the_fixture_is_a_0_1_store() -> None:
    assert OLD_CONTENT["schema_version"] == 1
    assert rows(OLD, "SELECT value FROM meta WHERE key='schema_version'") == [("1",)]
    names = {name for (name,) in rows(OLD, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert names == {"meta", "encounters", "events", "snapshots", "grants"}
    finished = [e["finished"] for e in OLD_CONTENT["encounters"].values()]
    assert sorted(finished) == [False, False, True]


async def test_a_0_1_store_is_upgraded_with_its_records_filled_in(old_store: Path) -> None:
    events_before = rows(old_store, "SELECT encounter, seq, type, data FROM events ORDER BY 1, 2")
    grants_before = rows(old_store, "SELECT * FROM grants ORDER BY 1, 2")
    snapshots_before = rows(old_store, "SELECT * FROM snapshots ORDER BY 1, 2")
    created_before = dict(rows(old_store, "SELECT id, created FROM encounters"))
    store = await open_store(old_store)
    try:
        records = {r.id: r for r in await store.records()}
        assert list(records) == list(OLD_CONTENT["encounters"])  # oldest first
        for eid, old in OLD_CONTENT["encounters"].items():
            r = records[eid]
            assert (r.title, r.arena) == (old["name"], old["arena"])
            assert r.status == ("archived" if old["finished"] else "open")
            assert r.creator is None and r.public is False and r.source is None
            assert r.created == created_before[eid]
            assert r.last_activity >= r.created
            seated = sorted(p for role, p in old["grants"] if role == "player")
            assert list(r.players) == seated
            assert len(await store.read(eid)) == old["events"]
            loaded = await store.load(eid)
            assert loaded is not None
            assert sorted([g.role, g.player] for g in loaded.grants) == old["grants"]
        # Phases and rounds from the logs: the brawl is in round 1, the skirmish ended,
        # the patrol has only been created.
        by_title = {r.title: r for r in records.values()}
        assert (by_title["Tavern brawl"].phase, by_title["Tavern brawl"].round) == ("turns", 1)
        assert by_title["Short skirmish"].phase == "ended"
        assert by_title["Fen patrol"].phase == "surprise"
        unfinished = [e for e, old in OLD_CONTENT["encounters"].items() if not old["finished"]]
        assert [s.id for s in await store.unfinished()] == unfinished
        assert await store.gm_keys() == []
    finally:
        await store.aclose()
    # Every event, grant and snapshot is there, byte for byte.
    assert rows(old_store, "SELECT encounter, seq, type, data FROM events ORDER BY 1, 2") == (
        events_before
    )
    assert rows(old_store, "SELECT * FROM grants ORDER BY 1, 2") == grants_before
    assert rows(old_store, "SELECT * FROM snapshots ORDER BY 1, 2") == snapshots_before
    assert rows(old_store, "SELECT value FROM meta WHERE key='schema_version'") == [
        (str(SCHEMA_VERSION),)
    ]
    steps = rows(old_store, "SELECT * FROM schema_migrations ORDER BY version")
    assert [s[0] for s in steps] == [1, 2, 3]
    assert steps[0] == (1, "the layout of zonekeep 0.1", None, None)
    assert steps[1][1] == MIGRATIONS[1].description
    assert steps[1][2] is not None and steps[1][3] == VERSION
    assert steps[2][1] == MIGRATIONS[2].description == "map images and the arena library"
    assert rows(old_store, "SELECT COUNT(*) FROM images") == [(0,)]
    assert rows(old_store, "SELECT COUNT(*) FROM library_arenas") == [(0,)]


async def test_the_upgraded_store_plays_on(old_store: Path) -> None:
    """The unfinished brawl takes new events after its last seq, and new records, keys
    and encounters go in as in a new store."""
    from zonekeep.sdk import RoundStarted
    from zonekeep.server._store import GmKey

    brawl = next(e for e, old in OLD_CONTENT["encounters"].items() if old["name"] == "Tavern brawl")
    store = await open_store(old_store)
    try:
        with trio.fail_after(helpers.deadline(10)):
            last = len(await store.read(brawl))
            await store.append(brawl, last + 1, [RoundStarted(2)])
            await store.add_gm_key(GmKey("alice", "a" * 64, 1.0))
            assert [s for s, _ in await store.read(brawl)][-2:] == [last, last + 1]
    finally:
        await store.aclose()


async def test_an_upgraded_store_has_the_layout_of_a_new_one(
    old_store: Path, tmp_path: Path
) -> None:
    fresh = tmp_path / "fresh" / "zonekeep.sqlite3"
    for path in (old_store, fresh):
        store = await open_store(path)
        await store.aclose()
    assert layout(old_store) == layout(fresh)
    assert [r[0] for r in rows(fresh, "SELECT version FROM schema_migrations")] == [1, 2, 3]
    assert rows(fresh, "SELECT description FROM schema_migrations WHERE version=1") == [
        ("a new store",)
    ]


async def test_the_upgrade_runs_once(old_store: Path) -> None:
    for _ in range(2):
        store = await open_store(old_store)
        await store.aclose()
    steps = rows(old_store, "SELECT version, applied_at FROM schema_migrations ORDER BY 1")
    assert [v for v, _ in steps] == [1, 2, 3]


async def test_a_failed_migration_leaves_the_file_as_it_was(
    old_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half_done(conn: sqlite3.Connection) -> None:
        MIGRATIONS_1.apply(conn)  # every change of the real step, then a failure
        raise RuntimeError("the disk said no")

    MIGRATIONS_1 = MIGRATIONS[1]
    monkeypatch.setitem(MIGRATIONS, 1, Migration("broken", half_done))
    before = old_store.read_bytes()
    siblings = sorted(p.name for p in old_store.parent.iterdir())
    with trio.fail_after(helpers.deadline(20)), pytest.raises(StoreError) as info:
        await SqliteStore.open(old_store)
    message = str(info.value)
    assert str(old_store) in message
    assert "from version 1 to 2 failed" in message and "the disk said no" in message
    assert "untouched" in message
    assert old_store.read_bytes() == before
    assert sorted(p.name for p in old_store.parent.iterdir()) == siblings


async def test_a_store_from_a_newer_zonekeep_is_refused_naming_the_file(
    old_store: Path,
) -> None:
    store = await open_store(old_store)
    await store.aclose()
    conn = sqlite3.connect(old_store)
    with conn:
        conn.execute(
            "UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),)
        )
    conn.close()
    before = old_store.read_bytes()
    with trio.fail_after(helpers.deadline(10)), pytest.raises(StoreError) as info:
        await SqliteStore.open(old_store)
    message = str(info.value)
    assert str(old_store) in message
    assert f"made by a newer zonekeep (store version {SCHEMA_VERSION + 1}" in message
    assert "Upgrade zonekeep; the file was left untouched." in message
    assert old_store.read_bytes() == before


# -- the backfill of phase and round, rewinds included ------------------------------------------


def v1_store(path: Path, logs: dict[str, list[dict[str, Any]]]) -> None:
    """A version 1 store holding ``logs`` (event dicts by encounter), written with the
    0.1 layout by hand."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(_SCHEMA_1)
        with conn:
            conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
            for n, (eid, events) in enumerate(logs.items()):
                ended = any(e["type"] == "encounter_ended" for e in events)
                conn.execute("INSERT INTO encounters VALUES (?, ?, ?)", (eid, float(n), ended))
                conn.executemany(
                    "INSERT INTO events VALUES (?, ?, ?, ?)",
                    [(eid, i, e["type"], json.dumps(e)) for i, e in enumerate(events, 1)],
                )
    finally:
        conn.close()


def ev(kind: str, **data: Any) -> dict[str, Any]:
    return {"type": kind, **data}


CREATED = ev("encounter_created", name="Rewound", arena={"id": "cliffside", "name": "Cliffs"})
TURNS = [
    CREATED,  # 1
    ev("surprise_determined", surprised=[]),  # 2
    ev("positions_established", positions={}),  # 3
    ev("initiative_rolled", entries=[]),  # 4
    ev("round_started", round=1),  # 5
    ev("turn_started", creature="a"),  # 6
    ev("round_started", round=2),  # 7
]


@pytest.mark.parametrize(
    ("log", "phase", "round_"),
    [
        ([CREATED], "surprise", 0),
        (TURNS[:3], "initiative", 0),
        (TURNS, "turns", 2),
        ([*TURNS, ev("rewound", to_seq=6, by="gm")], "turns", 1),
        ([*TURNS, ev("rewound", to_seq=2, by="gm")], "positions", 0),
        # a rewind to before an earlier rewind's own seq, then play on
        (
            [
                *TURNS,
                ev("rewound", to_seq=5, by="gm"),  # 8: round 1
                ev("round_started", round=2),  # 9
                ev("rewound", to_seq=8, by="gm"),  # 10: as after 8, round 1
            ],
            "turns",
            1,
        ),
        ([*TURNS, ev("encounter_ended", reason="fled")], "ended", 2),
        ([*TURNS, ev("encounter_ended", reason="x"), ev("rewound", to_seq=7, by="gm")], "turns", 2),
    ],
)
async def test_phase_and_round_are_filled_in_from_the_log(
    tmp_path: Path, log: list[dict[str, Any]], phase: str, round_: int
) -> None:
    path = tmp_path / "zonekeep.sqlite3"
    v1_store(path, {"e1": log})
    store = await open_store(path)
    try:
        record = await store.get_record("e1")
    finally:
        await store.aclose()
    assert record is not None
    assert (record.title, record.arena) == ("Rewound", "cliffside")
    assert (record.phase, record.round) == (phase, round_)


async def test_an_encounter_whose_log_does_not_start_with_its_creation_gets_a_plain_record(
    tmp_path: Path,
) -> None:
    path = tmp_path / "zonekeep.sqlite3"
    v1_store(path, {"odd": [ev("round_started", round=3)], "empty": []})
    store = await open_store(path)
    try:
        records = {r.id: r for r in await store.records()}
    finally:
        await store.aclose()
    assert (records["odd"].title, records["odd"].arena, records["odd"].round) == ("", "", 3)
    assert (records["empty"].phase, records["empty"].status) == ("setup", "open")
