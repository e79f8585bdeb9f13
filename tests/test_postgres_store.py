"""What is the PostgreSQL store's own (server/_postgres.py): its migrations and refusals,
a failed batch storing nothing, the other writers' change counts, the URL as a setting
(its password never shown), the operator's commands on it and ``zonekeep store copy``.

The store's behaviour shared with SQLite is tested on both in tests/test_sqlite_store.py
and tests/test_store_records.py. Each test here works in a schema of its own.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import helpers
import pytest
import trio
from postgres_support import POSTGRES_URL, fresh_schema, needs_postgres, schema_of, sql

from zonekeep.sdk import EncounterCreated, EncounterOptions, RoundStarted
from zonekeep.sdk.host import single_zone_arena
from zonekeep.server._admin import copy_store
from zonekeep.server._cli import main
from zonekeep.server._config import (
    ConfigError,
    Settings,
    describe_change,
    load_settings,
    mask_url,
    to_toml,
)
from zonekeep.server._postgres import SCHEMA_VERSION, PostgresStore
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import EncounterRecord, GmKey, StoredGrant, StoreError


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema() as made:
        yield made


async def open_pg(url: str, **kw: int) -> PostgresStore:
    with trio.fail_after(helpers.deadline(20)):
        return await PostgresStore.open(url, **kw)


def rows(url: str, table: str) -> list[tuple[object, ...]]:
    return sql(f"SELECT * FROM {schema_of(url)}.{table} ORDER BY 1")


def dump(url: str) -> list[list[tuple[object, ...]]]:
    schema = schema_of(url)
    tables = sql(
        f"SELECT table_name FROM information_schema.tables WHERE table_schema='{schema}' ORDER BY 1"
    )
    return [[(t,), *rows(url, str(t))] for (t,) in tables]


def created(eid: str) -> EncounterCreated:
    return EncounterCreated(eid, EncounterOptions(), (), name="Brawl", arena=single_zone_arena())


# -- migrations and refusals --------------------------------------------------------------------


async def test_a_new_store_records_its_version_and_reopening_adds_nothing(url: str) -> None:
    store = await open_pg(url)
    await store.aclose()
    assert rows(url, "meta") == [("schema_version", str(SCHEMA_VERSION))]
    steps = rows(url, "schema_migrations")
    assert [(v, d) for v, d, _, _ in steps] == [
        (1, "a new store"),
        (2, "nodes and encounter leases (several nodes)"),
        (3, "map images and the arena library"),
    ]
    assert all(isinstance(applied, float) and made_by for _, _, applied, made_by in steps)
    before = dump(url)
    again = await open_pg(url)
    await again.aclose()
    assert rows(url, "schema_migrations") == steps
    assert dump(url) == before


async def test_a_version_1_store_is_migrated_to_nodes_and_leases_keeping_its_events(
    url: str,
) -> None:
    from zonekeep.server._postgres import _SCHEMA_1

    schema = schema_of(url)
    for statement in _SCHEMA_1.split(";"):
        if statement.strip():
            sql(f"SET search_path TO {schema}; {statement}")
    sql(f"INSERT INTO {schema}.meta VALUES ('schema_version', '1')")
    sql(f"INSERT INTO {schema}.schema_migrations VALUES (1, 'a new store', 0, '0.1')")
    sql(f"INSERT INTO {schema}.encounters (id, created, last_activity) VALUES ('e1', 1, 1)")
    sql(f"INSERT INTO {schema}.events VALUES ('e1', 1, 'x', '{{}}')")
    store = await open_pg(url)
    await store.aclose()
    assert rows(url, "meta") == [("schema_version", "3")]
    assert [v for v, *_ in rows(url, "schema_migrations")] == [1, 2, 3]
    assert rows(url, "events") == [("e1", 1, "x", "{}")]
    assert rows(url, "leases") == [] and rows(url, "nodes") == []
    assert rows(url, "images") == [] and rows(url, "library_arenas") == []


async def test_two_stores_opening_a_new_schema_at_once_make_it_once(url: str) -> None:
    opened: list[PostgresStore] = []

    async def one() -> None:
        opened.append(await open_pg(url, pool_size=1))

    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(one)
    for store in opened:
        await store.aclose()
    assert len(opened) == 3
    assert len(rows(url, "schema_migrations")) == SCHEMA_VERSION


async def test_a_store_made_by_a_newer_zonekeep_is_refused_and_left_untouched(url: str) -> None:
    store = await open_pg(url)
    await store.append("e1", 1, [created("e1")])
    await store.aclose()
    sql(f"UPDATE {schema_of(url)}.meta SET value='{SCHEMA_VERSION + 1}'")
    before = dump(url)
    with pytest.raises(StoreError, match=r"made by a newer zonekeep \(store version 4") as info:
        await open_pg(url)
    assert "Upgrade zonekeep" in str(info.value)
    assert dump(url) == before


async def test_someone_elses_tables_of_the_same_names_are_refused(url: str) -> None:
    sql(f"CREATE TABLE {schema_of(url)}.events (id int)")
    with pytest.raises(StoreError, match=r"named like a zonekeep store's \(events\)"):
        await open_pg(url)
    assert rows(url, "events") == []
    assert [
        t
        for (t,) in sql(
            f"SELECT table_name FROM information_schema.tables WHERE table_schema='{schema_of(url)}'"
        )
    ] == ["events"]


async def test_a_search_path_naming_no_schema_is_refused_plainly() -> None:
    needs_postgres()
    missing = f"{POSTGRES_URL}?options=-csearch_path%3Dzk_test_not_there"
    with pytest.raises(StoreError, match="no schema to keep the store in"):
        await open_pg(missing)


async def test_an_unreachable_database_is_named_without_its_password() -> None:
    needs_postgres()  # psycopg is there
    url = "postgresql://zonekeep:hunter2-secret@127.0.0.1:1/zonekeep"
    with trio.fail_after(helpers.deadline(20)), pytest.raises(StoreError) as info:
        await PostgresStore.open(url)
    message = str(info.value)
    assert "hunter2" not in message
    assert message.startswith("postgresql://zonekeep:********@127.0.0.1:1/zonekeep: cannot connect")


async def test_without_psycopg_the_message_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)
    with pytest.raises(StoreError, match=r"pip install 'zonekeep\[postgresql\]'"):
        await PostgresStore.open("postgresql://zonekeep:pw@127.0.0.1/zonekeep")


# -- a failed batch stores nothing --------------------------------------------------------------


async def test_a_failed_batch_stores_nothing_and_fails_every_append_of_it(url: str) -> None:
    store = await open_pg(url)
    try:
        await store.append("a", 1, [created("a")])
        await store.append("b", 1, [created("b")])
        # Another process wrote seq 2 of "a" behind this store's back.
        sql(
            f"INSERT INTO {schema_of(url)}.events VALUES "
            """('a', 2, 'round_started', '{"type":"round_started","round":9}')"""
        )
        failed: list[str] = []

        async def append(eid: str) -> None:
            try:
                await store.append(eid, 2, [RoundStarted(1)], snapshot={"at": 2})
            except StoreError as exc:
                failed.append(eid)
                assert "could not save" in str(exc)

        with trio.fail_after(helpers.deadline(10)):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(append, "a")
                nursery.start_soon(append, "b")  # shares the batch, so it fails too
        assert sorted(failed) == ["a", "b"]
        assert [s for s, _ in await store.read("b")] == [1]
        assert rows(url, "snapshots") == []
        # The store goes on: "b"'s append, again, alone.
        await store.append("b", 2, [RoundStarted(1)])
        assert [s for s, _ in await store.read("b")] == [1, 2]
    finally:
        await store.aclose()


async def test_the_dice_secret_is_made_once_and_kept(url: str) -> None:
    store = await open_pg(url)
    try:
        first = await store.dice_secret()
        assert len(first) == 32
        assert await store.dice_secret() == first
    finally:
        await store.aclose()
    again = await open_pg(url)
    try:
        assert await again.dice_secret() == first
    finally:
        await again.aclose()


# -- the other writers' changes -----------------------------------------------------------------


async def test_closing_stores_fold_their_counts_and_the_table_stays_small(url: str) -> None:
    server = await open_pg(url)
    try:
        start = await server.outside_changes()
        for n in range(5):
            cli = await open_pg(url, pool_size=1)
            await cli.add_gm_key(GmKey(f"k{n}", f"{n}" * 64, float(n)))
            await cli.aclose()
            moved = await server.outside_changes()
            assert moved == start + n + 1  # each change once, closing moved nothing
        await server.put_record(
            EncounterRecord("e1", "T", "tavern", None, 1.0, 1.0)
        )  # its own: not counted
        assert await server.outside_changes() == start + 5
        assert len(rows(url, "changes")) <= 2  # the server's row and the closed ones'
    finally:
        await server.aclose()


# -- the URL as a setting -----------------------------------------------------------------------


SECRET_URL = "postgresql://zonekeep:s3cr3t-pw@db.example.org:5432/zonekeep"


def test_a_postgresql_url_is_a_store_from_the_file_the_environment_and_a_flag(
    tmp_path: Path,
) -> None:
    config = tmp_path / "zonekeep.toml"
    config.write_text(f'[server]\nstore = "{SECRET_URL}"\nstore_pool_size = 8\n')
    settings = load_settings(config, {})
    assert (settings.config.store, settings.config.store_pool_size) == (SECRET_URL, 8)
    env = load_settings(None, {"ZONEKEEP_SERVER_STORE": "postgres://db/zk"})
    assert env.config.store == "postgres://db/zk"
    flag = load_settings(None, {}, {"server.store": "postgresql:///zk"})
    assert flag.config.store == "postgresql:///zk"


@pytest.mark.parametrize(
    "bad", ["mysql://u:s3cr3t-pw@db/zk", "postgresql:/zk", "postgresql://u:s3cr3t-pw@db:x/zk"]
)
def test_a_store_that_is_not_a_postgresql_url_is_refused_without_its_password(
    bad: str,
) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(None, {"ZONEKEEP_SERVER_STORE": bad})
    (problem,) = info.value.problems
    assert 'is not one of "sqlite", "memory", or a postgresql:// URL' in problem
    assert "s3cr3t" not in problem


def test_config_show_and_the_reload_log_mask_the_password() -> None:
    settings = load_settings(None, {"ZONEKEEP_SERVER_STORE": SECRET_URL})
    shown = to_toml(settings)
    assert 'store = "postgresql://zonekeep@db.example.org:5432/zonekeep"' in shown  # no password
    assert "s3cr3t" not in shown
    assert "s3cr3t" in to_toml(Settings(settings.config), mask=False)
    logged = describe_change("server.store", "sqlite", SECRET_URL)
    assert "s3cr3t" not in logged and "********" in logged
    assert "s3cr3t" not in mask_url("postgresql://db/zk?password=s3cr3t-pw&sslmode=require")


# -- the operator's commands and zonekeep store copy --------------------------------------------


def test_gm_and_encounters_commands_work_on_a_postgresql_store(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gm", "add", "alice", "--store", url]) == 0
    key = capsys.readouterr().out.strip()
    assert len(key) == 43
    assert main(["gm", "list", "--json", "--store", url]) == 0
    assert '"name": "alice"' in capsys.readouterr().out
    ((name, key_hash, _),) = rows(url, "gm_keys")
    assert name == "alice" and key not in str(key_hash)
    assert main(["encounters", "show", "nope", "--store", url]) == 1
    assert "no encounter 'nope'" in capsys.readouterr().err
    assert main(["gm", "revoke", "alice", "--store", url]) == 0
    assert rows(url, "gm_keys") == []


async def test_store_copy_copies_everything_the_server_needs(url: str, tmp_path: Path) -> None:
    source = await SqliteStore.open(tmp_path / "zonekeep.sqlite3")
    try:
        await source.append("live", 1, [created("live"), RoundStarted(1)], snapshot={"at": 2})
        await source.append("live", 3, [RoundStarted(2)])
        await source.add_grant("live", StoredGrant("h-gm", "gm"))
        await source.add_grant("live", StoredGrant("h-alice", "player", "alice"))
        await source.put_record(
            EncounterRecord(
                "live", "Live", "tavern", "gm:alice", 10.0, 20.0, players=("alice",), round=2
            )
        )
        await source.append("old", 1, [created("old")], finished=True)
        await source.set_status("old", "archived")
        await source.add_gm_key(GmKey("alice", "a" * 64, 5.0))
        target = await open_pg(url)
        try:
            with trio.fail_after(helpers.deadline(20)):
                done = await copy_store(source, target)
            assert (done.encounters, done.events, done.grants, done.gm_keys) == (2, 4, 2, 1)
            for eid in ("live", "old"):
                assert await target.read(eid) == await source.read(eid)
                assert await target.get_record(eid) == await source.get_record(eid)
                assert await target.load(eid) == await source.load(eid)
            assert [s.id for s in await target.unfinished()] == ["live"]
            assert await target.gm_keys() == await source.gm_keys()
            # The copied encounters' fair dice stay verifiable: the same dice secret.
            assert await target.dice_secret() == await source.dice_secret()
            # The server's next append goes on from the copied seq.
            await target.append("live", 4, [RoundStarted(3)])
            # A second copy without --force changes nothing ...
            from zonekeep.server._admin import AdminError

            with pytest.raises(AdminError, match="already holds 2 encounter"):
                await copy_store(source, target)
            assert [s for s, _ in await target.read("live")] == [1, 2, 3, 4]
            # ... with it, the source's encounters replace the target's.
            await copy_store(source, target, force=True)
            assert [s for s, _ in await target.read("live")] == [1, 2, 3]
            assert await target.gm_keys() == await source.gm_keys()
            # A target whose encounters' dice come from another secret is refused.
            await target.adopt_dice_secret(bytes(32))
            with pytest.raises(AdminError, match="another dice secret"):
                await copy_store(source, target, force=True)
        finally:
            await target.aclose()
    finally:
        await source.aclose()


def test_zonekeep_serve_on_a_postgresql_store_never_shows_its_password(
    url: str, tmp_path: Path
) -> None:
    """``zonekeep serve --store postgresql://user:password@...`` (trust authentication
    ignores the password): it serves from the database, says where, password masked,
    and no line of its output or log carries the password."""
    import signal
    import subprocess

    from helpers import banner_lines, serve_argv

    with_password = url.replace("postgresql://postgres@", "postgresql://postgres:s3cr3t-pw@", 1)
    assert with_password != url
    example = Path(__file__).parent.parent / "examples" / "encounters" / "goblin-ambush.json"
    argv = serve_argv(tmp_path, "--store", with_password, "--log-level", "debug")
    proc = subprocess.Popen(
        [*argv, "--example", str(example)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = banner_lines(proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=helpers.deadline(20))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = "\n".join(lines)
    assert proc.returncode == 0, err
    assert f"Encounters are kept in {mask_url(with_password)}." in out
    assert "GM token:" in out
    assert "s3cr3t" not in out + err
    assert not (tmp_path / "zonekeep.sqlite3").exists()  # nothing went to SQLite
    ((count,),) = sql(f"SELECT COUNT(*) FROM {schema_of(url)}.events")
    assert int(str(count)) >= 1
