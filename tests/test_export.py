"""Exporting an encounter's log, replaying it and importing it into another store."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio

from zonekeep.protocol import validate_server_message
from zonekeep.protocol.client import ClientError, connect
from zonekeep.sdk import ConditionApplied, CreatureAdded, Event, RandomEntropy, Rewound, replay
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import event_to_dict, state_to_dict
from zonekeep.server import ServerConfig, ZonekeepServer
from zonekeep.server._cli import main
from zonekeep.server._encounter_file import load_encounter
from zonekeep.server._export import MAX_PROBLEMS, load_log, replay_log
from zonekeep.server._play import Table, open_table, play_to_end
from zonekeep.server._sqlite import SqliteStore

EXAMPLES = Path(__file__).parent.parent / "examples" / "encounters"
ENCOUNTERS = sorted(EXAMPLES.glob("*.json"))
GOBLINS = EXAMPLES / "goblin-ambush.json"


# -- helpers ----------------------------------------------------------------------------------


def played(path: Path, seed: int, eid: str = "e1-test", engine: Engine | None = None) -> Table:
    engine = engine or Engine()
    table = open_table(engine, load_encounter(path), RandomEntropy(seed), encounter_id=eid)
    play_to_end(table)
    return table


def started(eid: str = "e1-test", seed: int = 4) -> Table:
    """An encounter at its first turn: not finished."""
    table = open_table(Engine(), load_encounter(GOBLINS), RandomEntropy(seed), encounter_id=eid)
    table.send("roll_initiative")
    while table.state.pending:
        table.send("decision_timeout", decision=table.state.pending[0].id)
    assert table.state.phase == "turns"
    return table


async def store_events(data_dir: Path, eid: str, events: Sequence[Event]) -> None:
    """Write ``events`` as the server does: in commands of a few events, with a
    snapshot every 200 and the last append marking an ended encounter finished."""
    store = await SqliteStore.open(data_dir / "zonekeep.sqlite3")
    try:
        seq = 1
        while seq <= len(events):
            chunk = list(events[seq - 1 : seq - 1 + 1 + seq % 7])
            last = seq + len(chunk) - 1
            snap = None
            if last // 200 > (seq - 1) // 200 or seq == 1:
                snap = state_to_dict(replay(events[:last]))
            ended = last == len(events) and replay(events).phase == "ended"
            await store.append(eid, seq, chunk, snapshot=snap, finished=ended)
            seq = last + 1
    finally:
        await store.aclose()


def write_log(path: Path, eid: str, events: Sequence[Event]) -> Path:
    lines = [
        json.dumps({"encounter": eid, "seq": i, "event": event_to_dict(e)})
        for i, e in enumerate(events, 1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def plain(data: Any) -> Any:
    """``data`` as JSON would give it back (tuples become lists)."""
    return json.loads(json.dumps(data))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def run_cli_async(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main`` in a worker thread (``import`` runs trio itself)."""
    code = await trio.to_thread.run_sync(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def digest(*paths: Path) -> list[str | None]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in paths]


@asynccontextmanager
async def serving(data_dir: Path) -> AsyncIterator[ZonekeepServer]:
    server = ZonekeepServer(ServerConfig(port=0, data_dir=data_dir), entropy=RandomEntropy(5))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        try:
            yield server
        finally:
            await server.shutdown()
    await server.store.aclose()


# -- export ---------------------------------------------------------------------------------


async def test_export_writes_one_schema_valid_line_per_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = played(GOBLINS, 3)
    await store_events(tmp_path, "e1-test", table.events)
    code, out, err = run_cli(capsys, "export", "e1-test", "--data-dir", str(tmp_path))
    assert (code, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["seq"] for line in lines] == list(range(1, len(table.events) + 1))
    assert {line["encounter"] for line in lines} == {"e1-test"}
    assert [line["event"] for line in lines] == [plain(event_to_dict(e)) for e in table.events]
    for line in lines:
        assert set(line) == {"encounter", "seq", "event"}
        validate_server_message({"method": "event", "params": line})


async def test_export_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = played(GOBLINS, 3)
    await store_events(tmp_path, "e1-test", table.events)
    target = tmp_path / "fight.jsonl"
    code, out, err = run_cli(
        capsys, "export", "e1-test", "--data-dir", str(tmp_path), "-o", str(target)
    )
    assert (code, out) == (0, "")
    assert err == f"Exported {len(table.events)} events of e1-test to {target}.\n"
    assert len(target.read_text(encoding="utf-8").splitlines()) == len(table.events)


async def test_export_of_an_unknown_encounter_lists_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await store_events(tmp_path, "e1-aaa", played(GOBLINS, 1, "e1-aaa").events)
    await store_events(tmp_path, "e2-bbb", played(GOBLINS, 2, "e2-bbb").events)
    target = tmp_path / "out.jsonl"
    store = tmp_path / "zonekeep.sqlite3"
    before = digest(store)
    code, out, err = run_cli(
        capsys, "export", "e9-zzz", "--data-dir", str(tmp_path), "-o", str(target)
    )
    assert (code, out) == (2, "")
    assert err == (
        f"zonekeep export: {store}: no encounter 'e9-zzz'; known encounters: e1-aaa, e2-bbb\n"
    )
    assert not target.exists()
    assert digest(store) == before
    # A read-only reader may leave SQLite's (empty) WAL companions, nothing else.
    assert {p.name for p in tmp_path.iterdir()} <= {
        "zonekeep.sqlite3",
        "zonekeep.sqlite3-wal",
        "zonekeep.sqlite3-shm",
    }


def test_export_without_a_store_says_so_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "nowhere"
    code, out, err = run_cli(capsys, "export", "e1", "--data-dir", str(where))
    assert (code, out) == (2, "")
    assert err == (
        f"zonekeep export: {where / 'zonekeep.sqlite3'}: there is no zonekeep store here "
        "(is --data-dir, or the config's data_dir, right?)\n"
    )
    assert not where.exists()


def test_export_refuses_a_file_that_is_not_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "zonekeep.sqlite3"
    store.write_bytes(b"not a database at all, just some text" * 100)
    before = digest(store)
    code, _, err = run_cli(capsys, "export", "e1", "--data-dir", str(tmp_path))
    assert code == 2
    assert err.startswith(f"zonekeep export: {store}: not a zonekeep store, or a damaged one")
    assert digest(store) == before


async def test_export_reads_while_a_server_holds_the_store_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "zonekeep.sqlite3"
    wal = tmp_path / "zonekeep.sqlite3-wal"
    async with serving(tmp_path) as server:
        room, _ = await server.open_encounter_file(load_encounter(GOBLINS))
        assert wal.exists()  # the server's writes sit in the WAL, not yet in the file
        before = digest(db, wal)
        code, out, err = await run_cli_async(capsys, "export", room.id, "--data-dir", str(tmp_path))
        assert (code, err) == (0, "")
        assert digest(db, wal) == before
        lines = [json.loads(line) for line in out.splitlines()]
        assert len(lines) == room.state.seq > 1
        path = tmp_path / "log.jsonl"
        path.write_text(out, encoding="utf-8")
        assert state_to_dict(replay_log(load_log(path)).state) == state_to_dict(room.state)


# -- replay ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ENCOUNTERS, ids=lambda p: p.name)
async def test_every_example_replays_from_its_export_to_the_state_it_was_played_to(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = played(path, 7, "e1-example")
    final = table.state
    assert final.phase == "ended"
    await store_events(tmp_path, "e1-example", table.events)
    log = tmp_path / "example.jsonl"
    code, _, err = run_cli(
        capsys, "export", "e1-example", "--data-dir", str(tmp_path), "-o", str(log)
    )
    assert code == 0, err
    code, out, err = run_cli(capsys, "replay", str(log), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == plain(state_to_dict(final))


@pytest.mark.parametrize("seed", [1, 2])
def test_replay_prints_the_same_fight_as_play(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, played_out, _ = run_cli(capsys, "play", str(GOBLINS), "--seed", str(seed))
    assert code == 0
    # `zonekeep play` plays with the installed plugins, as `serve` does.
    table = played(GOBLINS, seed, "encounter", Engine.from_config())
    log = write_log(tmp_path / "fight.jsonl", "encounter", table.events)
    code, out, err = run_cli(capsys, "replay", str(log))
    assert (code, err) == (0, "")
    body, _, summary = out.rpartition("\n\n")
    assert body == played_out.rpartition("\n\n")[0]
    s = table.state
    assert summary == f"{len(table.events)} events, {s.round} round(s), phase 'ended'.\n"


def test_replay_folds_a_rewound_event(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = started()
    events = [*table.events, Rewound(3, "gm")]
    log = write_log(tmp_path / "rewound.jsonl", "e1-test", events)
    code, out, _ = run_cli(capsys, "replay", str(log), "--json")
    assert code == 0
    expected = replay(table.events[:3])
    expected.seq = len(events)
    assert json.loads(out) == plain(state_to_dict(expected))
    assert json.loads(out)["phase"] != table.state.phase
    code, out, _ = run_cli(capsys, "replay", str(log))
    assert "The GM rewinds the encounter to event 3.\n" in out


def test_replay_checks_the_events_after_a_rewind_against_the_rewound_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = started()
    n = len(table.events)
    ghost = attrs.evolve(table.state.creatures["aria"], id="ghost", name="Ghost")
    branch = [CreatureAdded(ghost), ConditionApplied("ghost", "prone", "gm")]
    # Fine on the branch where the ghost was added...
    fine = write_log(tmp_path / "fine.jsonl", "e1-test", [*table.events, *branch])
    assert run_cli(capsys, "replay", str(fine))[0] == 0
    # ... not once the encounter is rewound to before it.
    events = [*table.events, *branch, Rewound(n, "gm"), branch[1]]
    bad = write_log(tmp_path / "bad.jsonl", "e1-test", events)
    code, _, err = run_cli(capsys, "replay", str(bad))
    assert (code, err) == (
        2,
        f"{bad}:{n + 4}: seq {n + 4} (condition_applied) does not apply: KeyError('ghost')\n",
    )


def good_lines(tmp_path: Path) -> list[str]:
    log = write_log(tmp_path / "good.jsonl", "e1-test", started().events)
    return log.read_text(encoding="utf-8").splitlines()


def replay_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str]
) -> tuple[Path, list[str]]:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "replay", str(bad))
    assert (code, out) == (2, "")
    return bad, err.splitlines()


def test_replay_reports_a_line_that_is_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)
    lines[1] = lines[1][:-1]
    bad, err = replay_problems(tmp_path, capsys, lines)
    assert err == [f"{bad}:2: not JSON: Expecting ',' delimiter (column {len(lines[1]) + 1})"]


def test_replay_reports_lines_that_fail_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)
    lines[1] = json.dumps({"encounter": "e1-test", "seq": 2, "event": {"type": "dashed"}})
    lines[2] = json.dumps({"encounter": "e1-test", "seq": 3, "event": {}, "extra": 1})
    lines[3] = json.dumps({"encounter": "e1-test", "seq": "4", "event": {"type": "dashed"}})
    bad, err = replay_problems(tmp_path, capsys, lines)
    assert err == [
        f"{bad}:2: $.event: 'creature' is a required property",
        f"{bad}:3: $: Additional properties are not allowed ('extra' was unexpected)",
        f"{bad}:4: $.seq: '4' is not of type 'integer'",
    ]


#: Fields protocol 1.7 added to events a 1.6 server wrote without them (SPEC.md, Versioning).
ADDED_IN_1_7 = {"penalty", "penalty_roll", "bonus_dice", "temp_hp", "challenge"}


def as_written_by_1_6(line: str) -> str:
    """An export line as a 1.6 server wrote it: without the fields 1.7 added."""

    def strip(data: Any) -> Any:
        if isinstance(data, dict):
            return {k: strip(v) for k, v in data.items() if k not in ADDED_IN_1_7}
        if isinstance(data, list):
            return [strip(v) for v in data]
        return data

    params = json.loads(line)
    event = strip(params["event"])
    if event["type"] in ("healed", "action_taken"):
        event.pop("roll", None)
    return json.dumps({**params, "event": event})


def test_a_log_exported_by_an_older_minor_version_replays_and_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 1.6 export lacks the roll records' penalty and bonus dice and the creatures'
    temporary hit points: read at their defaults, it folds to the state the full log
    does, and it imports."""
    table = played(GOBLINS, 3)
    full = write_log(tmp_path / "full.jsonl", "e1-test", table.events)
    lines = full.read_text(encoding="utf-8").splitlines()
    older = [as_written_by_1_6(line) for line in lines]
    changed = [i for i, (a, b) in enumerate(zip(lines, older, strict=True)) if a != b]
    assert len(changed) > 100  # every roll and every creature: not a token few

    def fails_the_schema(line: str) -> bool:
        try:
            validate_server_message({"method": "event", "params": json.loads(line)})
        except ValueError:
            return True
        return False

    assert [i for i in changed if fails_the_schema(older[i])] == changed
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(older) + "\n", encoding="utf-8")
    log = load_log(old)
    assert log.events == load_log(full).events
    assert state_to_dict(replay_log(log).state) == state_to_dict(table.state)
    code, out, err = run_cli(capsys, "import", str(old), "--data-dir", str(tmp_path / "d"))
    assert (code, err) == (0, ""), err
    assert "Imported encounter e1-test (" in out


def test_replay_reports_an_older_line_that_reading_would_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only missing fields are read at their defaults: an older line with a member no
    version has is reported, not quietly dropped."""
    table = played(GOBLINS, 3)
    full = write_log(tmp_path / "full.jsonl", "e1-test", table.events)
    lines_ = full.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines_) if '"penalty"' in line)
    params = json.loads(as_written_by_1_6(lines_[at]))
    params["event"]["sneaky"] = 1
    lines_[at] = json.dumps(params)
    bad, err = replay_problems(tmp_path, capsys, lines_)
    assert len(err) == 1 and err[0].startswith(f"{bad}:{at + 1}: $.event"), err


def test_replay_reports_a_seq_gap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = good_lines(tmp_path)
    del lines[2]
    bad, err = replay_problems(tmp_path, capsys, lines)
    assert err == [f"{bad}:3: seq 4 after 2: seq 3 missing"]


def test_replay_reports_a_log_that_does_not_start_at_seq_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)[1:]
    bad, err = replay_problems(tmp_path, capsys, lines)
    assert err == [
        f"{bad}:1: seq 2: a log must start at seq 1",
        f"{bad}:1: the first event must be encounter_created, not surprise_determined",
    ]


def test_replay_reports_two_encounter_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)
    line = json.loads(lines[4])
    line["encounter"] = "e2-other"
    lines[4] = json.dumps(line)
    bad, err = replay_problems(tmp_path, capsys, lines)
    assert err == [
        f"{bad}:5: encounter 'e2-other', but the log is of encounter 'e1-test' "
        "(one encounter per file)"
    ]


def test_replay_reports_every_bad_line_up_to_a_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)
    lines[1:1] = ["{"] * (MAX_PROBLEMS + 5)
    bad, err = replay_problems(tmp_path, capsys, lines)
    assert len(err) == MAX_PROBLEMS + 1
    assert (
        err[0] == f"{bad}:2: not JSON: Expecting property name enclosed in double quotes (column 2)"
    )
    assert err[MAX_PROBLEMS - 1].startswith(f"{bad}:{MAX_PROBLEMS + 1}: not JSON")
    assert err[-1] == f"{bad}: (stopped after {MAX_PROBLEMS} problems)"


def test_replay_reports_a_rewind_to_a_later_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [*started().events, Rewound(99, "gm")]
    bad = write_log(tmp_path / "bad.jsonl", "e1-test", events)
    code, _, err = run_cli(capsys, "replay", str(bad))
    assert code == 2
    assert err == f"{bad}:{len(events)}: rewound to seq 99, which is not an earlier event\n"


def test_replay_reports_an_event_that_does_not_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)
    lines.append(
        json.dumps(
            {
                "encounter": "e1-test",
                "seq": len(lines) + 1,
                "event": {
                    "type": "healed",
                    "creature": "nobody",
                    "amount": 3,
                    "hp": 4,
                    "source": "",
                    "roll": None,
                },
            }
        )
    )
    bad, err = replay_problems(tmp_path, capsys, lines)
    n = len(lines)
    assert err == [f"{bad}:{n}: seq {n} (healed) does not apply: KeyError('nobody')"]


def test_replay_of_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "replay", str(empty))
    assert (code, err) == (2, f"{empty}: no events in it\n")


# -- import ---------------------------------------------------------------------------------


async def test_export_import_export_keeps_the_log_and_the_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = played(GOBLINS, 5, "e1-test")
    first, second = tmp_path / "first", tmp_path / "second"
    await store_events(first, "e1-test", table.events)
    log1, log2 = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main(["export", "e1-test", "--data-dir", str(first), "-o", str(log1)]) == 0
    capsys.readouterr()
    code, out, err = await run_cli_async(capsys, "import", str(log1), "--data-dir", str(second))
    assert (code, err) == (0, ""), err
    assert out.startswith(
        f"Imported encounter e1-test ({len(table.events)} events, round {table.state.round}, "
        f"phase 'ended') into {second / 'zonekeep.sqlite3'}.\n"
    )
    assert "It has ended" in out
    assert main(["export", "e1-test", "--data-dir", str(second), "-o", str(log2)]) == 0
    assert log2.read_text(encoding="utf-8") == log1.read_text(encoding="utf-8")
    one, two = replay_log(load_log(log1)).state, replay_log(load_log(log2)).state
    assert state_to_dict(one) == state_to_dict(two) == state_to_dict(table.state)
    # An ended encounter is kept, finished: a server does not bring it back.
    store = await SqliteStore.open(second / "zonekeep.sqlite3")
    try:
        assert await store.encounters() == ["e1-test"]
        assert await store.unfinished() == []
    finally:
        await store.aclose()


async def test_import_as_a_new_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = played(GOBLINS, 5, "e1-test")
    log = write_log(tmp_path / "log.jsonl", "e1-test", table.events)
    code, out, _ = await run_cli_async(
        capsys, "import", str(log), "--data-dir", str(tmp_path), "--as", "copy-1"
    )
    assert code == 0
    assert out.startswith("Imported encounter copy-1 ")
    copy = tmp_path / "copy.jsonl"
    assert main(["export", "copy-1", "--data-dir", str(tmp_path), "-o", str(copy)]) == 0
    state = replay_log(load_log(copy)).state
    assert state.id == "copy-1"
    expected = state_to_dict(table.state) | {"id": "copy-1"}
    assert state_to_dict(state) == expected


async def test_import_over_an_existing_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = played(GOBLINS, 5, "e1-test")
    await store_events(tmp_path, "e1-test", table.events)
    db = tmp_path / "zonekeep.sqlite3"
    log = write_log(tmp_path / "log.jsonl", "e1-test", started("e1-test").events)
    before = main(["export", "e1-test", "--data-dir", str(tmp_path)])
    exported_before = capsys.readouterr().out
    assert before == 0
    code, out, err = await run_cli_async(capsys, "import", str(log), "--data-dir", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == (
        f"zonekeep import: {db}: there is already an encounter 'e1-test'; "
        "import it under another id with --as NEW_ID\n"
    )
    code, out, err = await run_cli_async(
        capsys, "import", str(log), "--data-dir", str(tmp_path), "--as", "e1-test"
    )
    assert (code, err) == (2, f"zonekeep import: {db}: there is already an encounter 'e1-test'\n")
    assert main(["export", "e1-test", "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == exported_before


async def test_import_of_a_bad_log_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(tmp_path)
    del lines[3]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = tmp_path / "data"
    code, out, err = await run_cli_async(capsys, "import", str(bad), "--data-dir", str(data))
    assert (code, out, err) == (2, "", f"{bad}:4: seq 5 after 3: seq 4 missing\n")
    assert not data.exists()


async def test_an_imported_unfinished_encounter_comes_back_on_a_server_and_the_gm_joins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = started("e1-test")
    log = write_log(tmp_path / "log.jsonl", "e1-test", table.events)
    data = tmp_path / "data"
    code, out, err = await run_cli_async(
        capsys, "import", str(log), "--data-dir", str(data), "--as", "e7-restored"
    )
    assert (code, err) == (0, "")
    assert "A server started on this data directory brings it back" in out
    assert "loads it on its first join" in out
    token = next(line for line in out.splitlines() if "GM token:" in line).split()[-1]
    expected = state_to_dict(table.state) | {"id": "e7-restored"}
    store = await SqliteStore.open(data / "zonekeep.sqlite3")
    try:
        [stored] = await store.unfinished()
    finally:
        await store.aclose()
    assert (stored.id, stored.snapshot_seq) == ("e7-restored", len(table.events))
    assert stored.snapshot == expected
    assert [(g.role, g.player) for g in stored.grants] == [("gm", None)]
    assert token not in str(stored.grants)  # only its hash is kept
    async with serving(data) as server:
        assert server.rooms == {}  # nothing is loaded before its first join
        url = f"ws://127.0.0.1:{server.port}/ws"
        with trio.fail_after(helpers.deadline(10)):
            async with connect(url) as gm:
                joined = await gm.join("e7-restored", token)
                assert list(server.rooms) == ["e7-restored"]
                assert state_to_dict(server.rooms["e7-restored"].state) == expected
                assert joined["role"] == "gm"
                assert joined["seq"] == len(table.events)
                result = await gm.command("e7-restored", "end_turn", creature=table.state.active)
                assert result["first_seq"] == len(table.events) + 1
            async with connect(url) as stranger:
                with pytest.raises(ClientError):
                    await stranger.join("e7-restored", token[:-2] + "xx")


def test_replay_keeps_the_events_of_a_plugin_that_is_not_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from zonekeep.sdk import PluginEvent

    table = started()
    gone = PluginEvent("nowhere.bell_rung", {"bell": "b1"})
    log = write_log(tmp_path / "gone.jsonl", "e1-test", [*table.events, gone])
    code, out, err = run_cli(capsys, "replay", str(log))
    assert (code, err) == (0, "")
    assert '[nowhere.bell_rung] {"bell": "b1"}\n' in out
    code, out, _ = run_cli(capsys, "replay", str(log), "--json")
    assert code == 0
    state = json.loads(out)
    assert state["seq"] == len(table.events) + 1
    assert state["plugin_state"] == {}
    assert {k: v for k, v in state.items() if k != "seq"} == {
        k: v for k, v in plain(state_to_dict(table.state)).items() if k != "seq"
    }
