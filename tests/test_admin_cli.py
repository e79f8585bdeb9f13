"""The operator's commands on the store: ``zonekeep gm add|list|revoke`` and
``zonekeep encounters list|show|archive|restore|delete``.

Their output and exit statuses (0 done, 1 not found, 2 bad input), how they find the
store (``--data-dir``, ``--config``), and that they work beside a server: next to an
open ``SqliteStore`` (the server's connection, which sees the change through
``outside_changes``), and from another process next to a real running server.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
from e2e_support import ServerConfig, creatures, start_server

from zonekeep.sdk import RoundStarted
from zonekeep.server._admin import store_location
from zonekeep.server._cli import main
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import EncounterRecord

FIXTURES = Path(__file__).parent / "fixtures"
OLD_CONTENT: dict[str, Any] = json.loads((FIXTURES / "store-0.1.json").read_text())
BRAWL, SKIRMISH, PATROL = OLD_CONTENT["encounters"]  # open, ended (archived), open

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data directory holding a copy of the 0.1 fixture store (three encounters)."""
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "store-0.1.sqlite3", folder / "zonekeep.sqlite3")
    return folder


def zk(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    """Run ``zonekeep argv...`` in this process: (exit status, stdout, stderr)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def records(folder: Path) -> dict[str, EncounterRecord]:
    async def read() -> dict[str, EncounterRecord]:
        store = await SqliteStore.open(folder / "zonekeep.sqlite3")
        try:
            return {r.id: r for r in await store.records()}
        finally:
            await store.aclose()

    return trio.run(read)


# -- zonekeep gm --------------------------------------------------------------------------------


def test_gm_add_prints_a_new_key_once_and_stores_its_hash(tmp_path: Path, capsys: Capture) -> None:
    folder = tmp_path / "fresh"  # no store yet: adding a key makes it
    status, out, err = zk(capsys, "gm", "add", "alice", "--data-dir", str(folder))
    assert status == 0, err
    key = out.strip()
    assert len(out.splitlines()) == 1 and len(key) >= 43
    assert "alice" in err and "shown this once" in err and key not in err
    stored = json.loads(zk(capsys, "gm", "list", "--json", "--data-dir", str(folder))[1])
    assert [k["name"] for k in stored] == ["alice"]
    assert key not in json.dumps(stored)
    conn = sqlite3.connect(folder / "zonekeep.sqlite3")
    try:
        assert conn.execute("SELECT name, key_hash FROM gm_keys").fetchall() == [
            ("alice", hashlib.sha256(key.encode()).hexdigest())
        ]
        raw = b"".join(p.read_bytes() for p in folder.iterdir())
        assert key.encode() not in raw
    finally:
        conn.close()
    # Another key is another secret.
    other = zk(capsys, "gm", "add", "bob.the-gm_2", "--data-dir", str(folder))[1].strip()
    assert other and other != key


def test_gm_list_shows_names_and_dates_never_keys(tmp_path: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(tmp_path))
    keys = [zk(capsys, "gm", "add", name, *where)[1].strip() for name in ("alice", "bob")]
    status, out, err = zk(capsys, "gm", "list", *where)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "CREATED"]
    assert [line.split()[0] for line in lines[1:]] == ["alice", "bob"]
    assert all(line.endswith("Z") for line in lines[1:])
    assert not any(k in out for k in keys)


def test_gm_add_refuses_a_name_that_is_taken(tmp_path: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(tmp_path))
    zk(capsys, "gm", "add", "alice", *where)
    status, out, err = zk(capsys, "gm", "add", "alice", *where)
    assert (status, out) == (2, "")
    assert "already a GM key named 'alice'" in err
    assert len(json.loads(zk(capsys, "gm", "list", "--json", *where)[1])) == 1


@pytest.mark.parametrize(
    "name", ["", "two words", "x" * 65, "élodie", "../alice", "a/b", "tab\there"]
)
def test_gm_add_refuses_a_bad_name_and_makes_no_store(
    tmp_path: Path, capsys: Capture, name: str
) -> None:
    status, out, err = zk(capsys, "gm", "add", name, "--data-dir", str(tmp_path / "d"))
    assert (status, out) == (2, "")
    assert "is not a GM key name" in err and "1-64 letters" in err
    assert not (tmp_path / "d").exists()


def test_gm_names_may_be_64_characters(tmp_path: Path, capsys: Capture) -> None:
    assert zk(capsys, "gm", "add", "A-z_0.9" * 9 + "x", "--data-dir", str(tmp_path))[0] == 0


def test_gm_revoke(tmp_path: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(tmp_path))
    zk(capsys, "gm", "add", "alice", *where)
    zk(capsys, "gm", "add", "bob", *where)
    status, _, err = zk(capsys, "gm", "revoke", "alice", *where)
    assert status == 0 and "Revoked the GM key 'alice'" in err
    assert [k["name"] for k in json.loads(zk(capsys, "gm", "list", "--json", *where)[1])] == ["bob"]
    status, _, err = zk(capsys, "gm", "revoke", "alice", *where)
    assert status == 1 and "no GM key named 'alice'" in err
    assert zk(capsys, "gm", "revoke", "not a name", *where)[0] == 2


def test_gm_list_of_an_empty_store(tmp_path: Path, capsys: Capture) -> None:
    zk(capsys, "gm", "add", "x", "--data-dir", str(tmp_path))
    zk(capsys, "gm", "revoke", "x", "--data-dir", str(tmp_path))
    status, out, err = zk(capsys, "gm", "list", "--data-dir", str(tmp_path))
    assert (status, out) == (0, "") and "No GM keys" in err
    assert zk(capsys, "gm", "list", "--json", "--data-dir", str(tmp_path))[1].strip() == "[]"


# -- finding the store --------------------------------------------------------------------------


def test_commands_refuse_a_missing_store_and_do_not_make_one(
    tmp_path: Path, capsys: Capture
) -> None:
    for argv in (("gm", "list"), ("gm", "revoke", "x"), ("encounters", "list")):
        status, out, err = zk(capsys, *argv, "--data-dir", str(tmp_path / "none"))
        assert (status, out) == (1, "")
        assert f"{tmp_path / 'none' / 'zonekeep.sqlite3'}: no store here" in err
    assert not (tmp_path / "none").exists()


def test_the_config_file_names_the_data_directory(
    data_dir: Path, tmp_path: Path, capsys: Capture
) -> None:
    config = tmp_path / "zonekeep.toml"
    config.write_text(f'[server]\ndata_dir = "{data_dir}"\n')
    status, out, _ = zk(capsys, "encounters", "list", "--json", "--config", str(config))
    assert status == 0
    assert [r["id"] for r in json.loads(out)] == [BRAWL, PATROL]
    # --data-dir wins over the config, as for zonekeep serve.
    status, _, err = zk(
        capsys, "encounters", "list", "--config", str(config), "--data-dir", str(tmp_path / "x")
    )
    assert status == 1 and "no store here" in err
    assert store_location(str(config), None) == data_dir / "zonekeep.sqlite3"


def test_a_bad_or_memory_config_is_bad_input(tmp_path: Path, capsys: Capture) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[server]\nno_such_key = 1\n")
    status, _, err = zk(capsys, "gm", "list", "--config", str(bad))
    assert status == 2 and str(bad) in err
    memory = tmp_path / "memory.toml"
    memory.write_text('[server]\nstore = "memory"\n')
    status, _, err = zk(capsys, "gm", "add", "alice", "--config", str(memory))
    assert status == 2 and "no store to manage" in err


def test_a_store_that_cannot_be_used_is_reported(tmp_path: Path, capsys: Capture) -> None:
    (tmp_path / "zonekeep.sqlite3").write_bytes(b"not a database " * 100)
    status, out, err = zk(capsys, "encounters", "list", "--data-dir", str(tmp_path))
    assert (status, out) == (1, "")
    assert "not a zonekeep store" in err and "untouched" in err


def test_a_store_from_a_newer_zonekeep_is_refused_and_left_alone(
    data_dir: Path, capsys: Capture
) -> None:
    assert zk(capsys, "encounters", "list", "--data-dir", str(data_dir))[0] == 0  # upgraded
    path = data_dir / "zonekeep.sqlite3"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.close()
    before = path.read_bytes()
    for argv in (("encounters", "archive", BRAWL), ("gm", "add", "alice")):
        status, out, err = zk(capsys, *argv, "--data-dir", str(data_dir))
        assert (status, out) == (1, "")
        assert f"{path}: made by a newer zonekeep (store version 99" in err
    assert path.read_bytes() == before


def test_the_subcommands_are_required(capsys: Capture) -> None:
    for argv in (["gm"], ["encounters"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    capsys.readouterr()


# -- zonekeep encounters ------------------------------------------------------------------------


def test_list_shows_the_open_encounters_and_all_with_all(data_dir: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(data_dir))
    status, out, err = zk(capsys, "encounters", "list", *where)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "ID",
        "STATUS",
        "PHASE",
        "ROUND",
        "SEATS",
        "LAST",
        "ACTIVITY",
        "CREATOR",
        "TITLE",
    ]
    assert [line.split()[0] for line in lines[1:]] == [BRAWL, PATROL]
    brawl = lines[1].split()
    assert brawl[1:5] == ["open", "turns", "1", "alice,bob"]
    assert lines[1].endswith("Tavern brawl")
    status, out, _ = zk(capsys, "encounters", "list", "--all", *where)
    assert [line.split()[0] for line in out.splitlines()[1:]] == [BRAWL, SKIRMISH, PATROL]
    assert out.splitlines()[2].split()[1:3] == ["archived", "ended"]


def test_list_json(data_dir: Path, capsys: Capture) -> None:
    status, out, _ = zk(
        capsys, "encounters", "list", "--all", "--json", "--data-dir", str(data_dir)
    )
    assert status == 0
    listed = json.loads(out)
    assert [r["id"] for r in listed] == [BRAWL, SKIRMISH, PATROL]
    assert set(listed[0]) == {
        "id",
        "title",
        "arena",
        "creator",
        "created",
        "last_activity",
        "status",
        "public",
        "phase",
        "round",
        "players",
        "source",
    }
    assert listed[0]["players"] == ["alice", "bob"] and listed[0]["public"] is False
    assert listed[2]["arena"] == "swamp"


def test_list_of_no_encounters(tmp_path: Path, capsys: Capture) -> None:
    zk(capsys, "gm", "add", "x", "--data-dir", str(tmp_path))  # an empty store
    status, out, err = zk(capsys, "encounters", "list", "--data-dir", str(tmp_path))
    assert (status, out) == (0, "") and "No open encounters" in err
    out = zk(capsys, "encounters", "list", "--json", "--data-dir", str(tmp_path))[1]
    assert json.loads(out) == []


def test_show_gives_the_record_and_the_log_size(data_dir: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(data_dir))
    status, out, err = zk(capsys, "encounters", "show", BRAWL, *where)
    assert status == 0, err
    fields = dict(line.split(":", 1) for line in out.splitlines())
    fields = {k: v.strip() for k, v in fields.items()}
    assert fields["title"] == "Tavern brawl" and fields["status"] == "open"
    assert fields["phase"] == "turns, round 1" and fields["seats"] == "alice, bob"
    assert fields["events"] == "6 (last seq 6)"
    assert fields["grants"] == "1 gm, 2 player, 1 spectator"
    shown = json.loads(zk(capsys, "encounters", "show", SKIRMISH, "--json", *where)[1])
    assert (shown["events"], shown["last_seq"], shown["status"]) == (2, 2, "archived")
    assert shown["grants"] == {"gm": 1, "player": 1}
    status, out, err = zk(capsys, "encounters", "show", "e9-nothing", *where)
    assert (status, out) == (1, "") and "no encounter 'e9-nothing'" in err


def test_archive_then_restore(data_dir: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(data_dir))
    before = records(data_dir)[BRAWL]
    status, out, err = zk(capsys, "encounters", "archive", BRAWL, *where)
    assert (status, out) == (0, "") and f"Archived {BRAWL}" in err
    assert records(data_dir)[BRAWL].status == "archived"
    assert BRAWL not in zk(capsys, "encounters", "list", *where)[1]
    status, _, err = zk(capsys, "encounters", "archive", BRAWL, *where)
    assert status == 0 and "already archived" in err
    status, _, err = zk(capsys, "encounters", "restore", BRAWL, *where)
    assert status == 0 and f"Restored {BRAWL}" in err
    after = records(data_dir)[BRAWL]
    assert after.status == "open"
    assert after.last_activity > before.last_activity  # the archiving sweep starts over
    status, _, err = zk(capsys, "encounters", "restore", BRAWL, *where)
    assert status == 0 and "is not archived (it is open)" in err
    for verb in ("archive", "restore"):
        status, _, err = zk(capsys, "encounters", verb, "e9-nothing", *where)
        assert status == 1 and "no encounter 'e9-nothing'" in err


def test_restoring_an_ended_encounter(data_dir: Path, capsys: Capture) -> None:
    assert zk(capsys, "encounters", "restore", SKIRMISH, "--data-dir", str(data_dir))[0] == 0
    restored = records(data_dir)[SKIRMISH]
    assert (restored.status, restored.phase) == ("open", "ended")


def test_delete_needs_an_archived_encounter_and_yes(data_dir: Path, capsys: Capture) -> None:
    where = ("--data-dir", str(data_dir))
    status, _, err = zk(capsys, "encounters", "delete", BRAWL, "--yes", *where)
    assert status == 2 and "archive it first" in err
    assert BRAWL in records(data_dir)
    status, _, err = zk(capsys, "encounters", "delete", SKIRMISH, *where)
    assert status == 2 and "cannot be undone: add --yes" in err
    assert SKIRMISH in records(data_dir)
    status, out, err = zk(capsys, "encounters", "delete", SKIRMISH, "--yes", *where)
    assert (status, out) == (0, "") and f"Deleted {SKIRMISH} and its 2 events" in err
    assert set(records(data_dir)) == {BRAWL, PATROL}
    status, _, err = zk(capsys, "encounters", "delete", SKIRMISH, "--yes", *where)
    assert status == 1 and "no encounter" in err
    conn = sqlite3.connect(data_dir / "zonekeep.sqlite3")
    try:
        for table in ("events", "snapshots", "grants"):
            left = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE encounter=?", (SKIRMISH,))
            assert left.fetchone() == (0,)
    finally:
        conn.close()


def test_an_imported_encounter_is_listed_with_its_record(
    data_dir: Path, tmp_path: Path, capsys: Capture
) -> None:
    where = ("--data-dir", str(data_dir))
    zk(capsys, "encounters", "list", *where)  # upgrade the 0.1 store first
    log = tmp_path / "skirmish.jsonl"
    assert zk(capsys, "export", SKIRMISH, "-o", str(log), *where)[0] == 0
    got = zk(capsys, "import", str(log), "--as", "again", *where)
    assert got[0] == 0, got
    shown = json.loads(zk(capsys, "encounters", "show", "again", "--json", *where)[1])
    assert (shown["title"], shown["arena"], shown["creator"]) == ("Short skirmish", "tavern", None)
    assert (shown["status"], shown["phase"], shown["events"]) == ("archived", "ended", 2)
    assert shown["grants"] == {"gm": 1}


# -- beside a server ------------------------------------------------------------------------------


@pytest.fixture
async def server_store(data_dir: Path) -> AsyncIterator[SqliteStore]:
    """The server's own connection to the store, open while the commands run."""
    with trio.fail_after(helpers.deadline(20)):
        store = await SqliteStore.open(data_dir / "zonekeep.sqlite3")
    try:
        yield store
    finally:
        await store.aclose()


async def cli(*argv: str) -> int:
    """``zonekeep argv...`` in a worker thread (a trio run of its own, its own connection),
    while this test's trio run keeps the server's store open."""
    with trio.fail_after(helpers.deadline(30)):
        status: int = await trio.to_thread.run_sync(main, list(argv))
    return status


async def test_the_commands_work_beside_an_open_store_which_sees_their_changes(
    data_dir: Path, server_store: SqliteStore, capsys: Capture
) -> None:
    where = ("--data-dir", str(data_dir))
    server = server_store
    seen = await server.outside_changes()
    # The server keeps writing while the operator works.
    await server.append(BRAWL, 7, [RoundStarted(2)])
    assert await cli("gm", "add", "alice", *where) == 0
    key = capsys.readouterr().out.strip()
    moved = await server.outside_changes()
    assert moved != seen
    assert [k.key_hash for k in await server.gm_keys()] == [
        hashlib.sha256(key.encode()).hexdigest()
    ]
    assert await cli("encounters", "archive", BRAWL, *where) == 0
    assert await server.outside_changes() != moved
    archived = await server.get_record(BRAWL)
    assert archived is not None and archived.status == "archived"
    # The server's late update of the round does not undo the operator's archive.
    await server.put_record(attrs.evolve(archived, status="open", round=2))
    kept = await server.get_record(BRAWL)
    assert kept is not None and (kept.status, kept.round) == ("archived", 2)
    assert BRAWL not in [s.id for s in await server.unfinished()]
    # And the operator sees the server's writes.
    assert await cli("encounters", "show", BRAWL, "--json", *where) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["events"], shown["last_seq"], shown["round"]) == (7, 7, 2)
    assert await cli("gm", "revoke", "alice", *where) == 0
    assert await server.gm_keys() == []
    assert await cli("encounters", "delete", BRAWL, "--yes", *where) == 0
    assert await server.get_record(BRAWL) is None
    assert await server.load(BRAWL) is None


async def test_the_cli_as_another_process_beside_a_running_server(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """A real server plays on while ``zonekeep`` processes list its encounter and add a
    GM key in the same store."""
    running = await start_server(nursery, tmp_path / "server", ServerConfig(port=0))
    where = ["--data-dir", str(tmp_path / "server")]

    async def zonekeep(*argv: str) -> subprocess.CompletedProcess[bytes]:
        with trio.fail_after(helpers.deadline(60)):
            return await trio.run_process(
                [sys.executable, "-m", "zonekeep.server._cli", *argv, *where],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )

    async with running.client() as gm:
        eid = (await gm.create_encounter("Beside", "tavern", creatures()))["encounter"]
        listed = await zonekeep("encounters", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        (found,) = json.loads(listed.stdout)
        assert (found["id"], found["title"], found["status"]) == (eid, "Beside", "open")
        added = await zonekeep("gm", "add", "carol")
        assert added.returncode == 0, added.stderr
        key = added.stdout.decode().strip()
        keys = await running.server.store.gm_keys()
        assert [(k.name, k.key_hash) for k in keys] == [
            ("carol", hashlib.sha256(key.encode()).hexdigest())
        ]
        # The server still writes to the store the CLI wrote to.
        result = await gm.command(eid, "set_surprise", surprised=[])
        assert result == {"first_seq": 2, "last_seq": 2}
        shown = await zonekeep("encounters", "show", eid, "--json")
        assert json.loads(shown.stdout)["last_seq"] == 2


@pytest.mark.docs
def test_docs_storage_md_shows_every_command_and_option() -> None:
    """Every ``zonekeep gm`` and ``zonekeep encounters`` command in the synopsis of
    docs/storage.md, with each of its options."""

    from zonekeep.server._cli import build_parser

    text = (Path(__file__).parent.parent / "docs" / "storage.md").read_text()
    synopsis = text.split("## The operator's commands", 1)[1].split("```")[1]
    lines = [line.split() for line in synopsis.strip().splitlines()]
    top = group_commands(build_parser())
    for group in ("gm", "encounters"):
        commands = group_commands(top[group])
        for name, parser in commands.items():
            (line,) = [w for w in lines if w[:3] == ["zonekeep", group, name]]
            options = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
            documented = {w.strip("[]") for w in line if w.strip("[]").startswith("--")}
            assert documented == options - {"--help"}, (group, name)


def group_commands(parser: Any) -> dict[str, Any]:
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)
