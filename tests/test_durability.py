"""Durability end to end: a real ``zonekeep serve`` killed with SIGKILL mid-load, an
in-process restart with a decision pending, the write-ahead contract when the
disk refuses writes, and a corrupt store stopping ``serve``.

Every message a client receives here is validated against the protocol's schemas.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, cast

import helpers
import pytest
import trio
from e2e_support import VALIDATED, Loaded, _validate
from helpers import serve_argv

from zonekeep.protocol.client import (
    MESSAGE_HOOKS,
    ClientError,
    ConnectionLost,
    ZonekeepClient,
    connect,
)
from zonekeep.server import ServerConfig, ZonekeepServer
from zonekeep.server._sqlite import SqliteStore


@pytest.fixture
def validated() -> Iterator[None]:
    """Validate every message any client receives (and check that some were)."""
    MESSAGE_HOOKS.append(_validate)
    before = VALIDATED[0]
    yield
    MESSAGE_HOOKS.remove(_validate)
    assert VALIDATED[0] > before  # the validator really ran


def roster() -> list[dict[str, Any]]:
    blade = {"name": "blade", "kind": "melee", "bonus": 4, "damage": "1d6+2"}
    blade["damage_type"] = "slashing"

    def hero(cid: str, player: str, dex: int, hp: int, ac: int) -> dict[str, Any]:
        return {
            "id": cid,
            "name": cid.capitalize(),
            "side": "party",
            "controller": player,
            "dex_mod": dex,
            "hp": hp,
            "max_hp": hp,
            "ac": ac,
            "zone": "common_room",
            "attacks": [blade],
        }

    gob = {
        "id": "gob",
        "name": "Goblin",
        "side": "goblins",
        "dex_mod": 2,
        "hp": 60,
        "max_hp": 60,
        "ac": 13,
        "zone": "common_room",
        "attacks": [blade],
    }
    return [hero("aria", "alice", 3, 20, 14), hero("bram", "bob", 1, 24, 15), gob]


async def setup(gm: ZonekeepClient) -> tuple[str, str, str, str]:
    """An encounter at Aria's first turn: its id, the GM's, alice's and bob's tokens."""
    with trio.fail_after(helpers.deadline(10)):
        created = await gm.create_encounter("Durable", "tavern", roster())
        eid = created["encounter"]
        alice = await gm.request("create_seat", encounter=eid, player="alice")
        bob = await gm.request("create_seat", encounter=eid, player="bob")
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
    return eid, created["gm_token"], alice["token"], bob["token"]


def events_of(client: ZonekeepClient) -> dict[int, dict[str, Any]]:
    """The event notifications received and not yet read, by seq."""
    return {
        n["params"]["seq"]: n["params"]["event"]
        for n in client.pending_notifications()
        if n["method"] == "event"
    }


# -- a real `zonekeep serve`, killed with SIGKILL ------------------------------------------------


class Served:
    def __init__(self, process: trio.Process, lines: list[str]) -> None:
        self.process = process
        self.lines = lines
        self.url = lines[0].split(" serving on ")[1].split()[0]


@asynccontextmanager
async def zonekeep_serve(data_dir: Path, log: Path, *extra: str) -> AsyncIterator[Served]:
    """Run ``zonekeep serve`` until its banner ends; kill it (SIGKILL) on the way out."""
    with log.open("ab") as err:
        process = await trio.lowlevel.open_process(
            serve_argv(data_dir, *extra), stdout=subprocess.PIPE, stderr=err
        )
    try:
        assert process.stdout is not None
        buffer = b""
        with trio.fail_after(helpers.deadline(20)):
            while b"Stop with Ctrl-C." not in buffer:
                chunk = await process.stdout.receive_some()
                if not chunk:
                    raise AssertionError(f"serve stopped: {buffer!r} {log.read_text()}")
                buffer += chunk
        lines = buffer.decode().splitlines()
        assert lines[0].startswith("zonekeep ") and "/ws" in lines[0], lines
        yield Served(process, lines)
    finally:
        if process.returncode is None:
            process.kill()
        with trio.move_on_after(helpers.deadline(10)):
            await process.wait()
        if process.stdout is not None:
            await process.stdout.aclose()


RATE_CONFIG = """
[limits]
rate_per_second = 100000.0
rate_burst = 100000
"""

#: How many acknowledged commands before the kill.
KILL_AFTER = 150


@pytest.mark.usefixtures("validated")
async def test_kill_9_mid_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "zonekeep.toml"
    config.write_text(RATE_CONFIG)
    log = tmp_path / "serve.log"
    acked: list[dict[str, Any]] = []  # {"client", "text", "first_seq", "last_seq"}
    seen: dict[str, dict[int, dict[str, Any]]] = {}
    enough = trio.Event()

    async with zonekeep_serve(data, log, "--config", str(config)) as first:
        pid = first.process.pid
        async with AsyncExitStack() as stack:
            gm = await stack.enter_async_context(connect(first.url))
            eid, gm_token, alice_token, bob_token = await setup(gm)
            clients = {"gm": gm}
            for name in ("gm2", "gm3", "alice", "bob"):
                clients[name] = await stack.enter_async_context(connect(first.url))
            with trio.fail_after(helpers.deadline(10)):
                for name, token in (
                    ("gm2", gm_token),
                    ("gm3", gm_token),
                    ("alice", alice_token),
                    ("bob", bob_token),
                ):
                    await clients[name].join(eid, token, last_seq=0)
                active = (await gm.request("snapshot", encounter=eid))["snapshot"]["active"]
                await gm.command(eid, "move", creature=active, feet=5)

            async def load(name: str) -> None:
                client = clients[name]
                n = 0
                try:
                    while True:
                        text = f"{name} note {n}"
                        result = await client.command(eid, "add_note", text=text, hidden=n % 5 == 4)
                        acked.append({"client": name, "text": text, **result})
                        n += 1
                        if len(acked) >= KILL_AFTER:
                            enough.set()
                except ConnectionLost:
                    return

            with trio.fail_after(helpers.deadline(30)):
                async with trio.open_nursery() as nursery:
                    for name in ("gm", "gm2", "gm3"):
                        nursery.start_soon(load, name)
                    await enough.wait()
                    os.kill(pid, signal.SIGKILL)  # mid-load: commands are in flight
                    await first.process.wait()
                    nursery.cancel_scope.cancel()
                # Read everything that reached each client before the connection dropped.
                for client in clients.values():
                    await client.closed.wait()
            for name, client in clients.items():
                seen[name] = events_of(client)
    assert first.process.returncode == -signal.SIGKILL
    assert len(acked) >= KILL_AFTER
    highest_ack = max(a["last_seq"] for a in acked)
    for name, got in seen.items():  # each client saw a gap-free run of events
        assert sorted(got) == list(range(min(got), max(got) + 1)), name
    assert max(max(got) for got in seen.values()) >= highest_ack

    async with zonekeep_serve(data, log) as second:
        # Nothing is loaded at start: the encounter loads on its first join.
        assert any(
            "1 unfinished encounter(s) in the store, each loaded on its first join" in line
            for line in second.lines
        ), second.lines
        async with AsyncExitStack() as stack:
            gm = await stack.enter_async_context(connect(second.url))
            alice = await stack.enter_async_context(connect(second.url))
            with trio.fail_after(helpers.deadline(10)):
                full = await gm.join(eid, gm_token, last_seq=0)  # the same token works
                alice_view = await alice.join(eid, alice_token, last_seq=0)
                state = (await gm.request("snapshot", encounter=eid))["snapshot"]
            assert full["role"] == "gm"
            seq = full["seq"]
            events = full["events"]
            assert seq >= highest_ack
            assert len(events) == seq  # events[i] is seq i + 1: nothing missing
            assert (alice_view["role"], alice_view["player"], alice_view["seq"]) == (
                "player",
                "alice",
                seq,
            )
            assert len(alice_view["events"]) == seq
            for name, got in seen.items():
                view = events if name.startswith("gm") else None
                if name == "alice":
                    view = alice_view["events"]
                if view is None:  # bob: compare through the GM's view where visible
                    view = [
                        e if (e["type"] != "note_added" or not e["note"]["hidden"]) else None
                        for e in events
                    ]
                for s, event in got.items():
                    if view[s - 1] is not None:
                        assert view[s - 1] == event, (name, s)
            # Every acknowledged note is in the restored state, with its text.
            texts = {n["text"] for n in state["notes"].values()}
            assert {a["text"] for a in acked} <= texts
            assert state["seq"] == seq
            assert state["active"] == active
            assert state["resources"]["movement_spent"] == 5

            # Each client resumes from the last event it saw: exactly the missed ones.
            resumed = {}
            for name, token in (
                ("gm", gm_token),
                ("gm2", gm_token),
                ("gm3", gm_token),
                ("alice", alice_token),
                ("bob", bob_token),
            ):
                client = await stack.enter_async_context(connect(second.url))
                last = max(seen[name])
                with trio.fail_after(helpers.deadline(10)):
                    back = await client.join(eid, token, last_seq=last)
                assert back["seq"] == seq
                assert back["snapshot"] is None
                assert len(back["events"]) == seq - last
                if name.startswith("gm"):
                    assert back["events"] == events[last:]
                if name == "alice":
                    assert back["events"] == alice_view["events"][last:]
                resumed[name] = client
            # ... and play goes on at the next seq, for everyone.
            with trio.fail_after(helpers.deadline(10)):
                result = await resumed["gm2"].command(eid, "add_note", text="after the crash")
                assert result["first_seq"] == result["last_seq"] == seq + 1
                moved = await resumed["gm3"].command(eid, "move", creature=active, feet=5)
                assert moved["first_seq"] == seq + 2
                for client in resumed.values():
                    live = await client.notification("event")
                    assert live["seq"] == seq + 1
                    assert live["event"]["type"] == "note_added"
    # The store itself: every encounter's seqs run from 1 without a gap.
    with sqlite3.connect(data / "zonekeep.sqlite3") as conn:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM events WHERE encounter=?", (eid,))]
    assert sorted(seqs) == list(range(1, moved["last_seq"] + 1))


# -- in-process restarts ----------------------------------------------------------------------


class Host:
    """A ZonekeepServer on a free port, in the test's nursery, stoppable by cancelling it."""

    def __init__(self, server: ZonekeepServer) -> None:
        self.server = server
        self.scope = trio.CancelScope()
        self.gone = trio.Event()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/ws"

    async def _run(
        self, *, task_status: trio.TaskStatus[ZonekeepServer] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            with self.scope:
                await self.server.run(task_status=task_status)
        finally:
            self.gone.set()

    async def stop(self) -> None:
        self.scope.cancel()
        with trio.fail_after(helpers.deadline(10)):
            await self.gone.wait()
            await self.server.store.aclose()

    @property
    def store(self) -> SqliteStore:
        return cast(SqliteStore, self.server.store)


async def host(nursery: trio.Nursery, data: Path, **config: Any) -> Host:
    server = ZonekeepServer(
        ServerConfig(port=0, data_dir=data, reaction_seconds=30, **config), entropy=Loaded()
    )
    running = Host(server)
    with trio.fail_after(helpers.deadline(10)):
        await nursery.start(running._run)
    assert isinstance(server.store, SqliteStore)
    return running


@pytest.mark.usefixtures("validated")
async def test_restart_brings_back_state_seats_and_a_pending_decision(
    tmp_path: Path, nursery: trio.Nursery
) -> None:
    data = tmp_path / "data"
    first = await host(nursery, data)
    async with connect(first.url) as gm, connect(first.url) as alice:
        eid, gm_token, alice_token, _ = await setup(gm)
        with trio.fail_after(helpers.deadline(10)):
            await alice.join(eid, alice_token)
            await alice.command(eid, "attack", creature="aria", target="gob")
            await alice.command(eid, "end_turn", creature="aria")
            entered = await gm.command(eid, "enter", creature="gob", zones=["bar"])
            prompt = await alice.notification("prompt")
            before = await gm.request("snapshot", encounter=eid)
    assert prompt["decision"]["kind"] == "opportunity_attack"
    assert before["seq"] == entered["last_seq"]
    assert [d["id"] for d in before["snapshot"]["pending"]] == [prompt["decision"]["id"]]
    await first.stop()

    second = await host(nursery, data)
    assert second.server.rooms == {}  # nothing is loaded before its first join
    assert second.server is not first.server
    async with connect(second.url) as gm, connect(second.url) as alice:
        with trio.fail_after(helpers.deadline(10)):
            joined = await gm.join(eid, gm_token)
            after = await gm.request("snapshot", encounter=eid)
            seat = await alice.join(eid, alice_token)
            again = await alice.notification("prompt")
        assert joined["role"] == "gm"
        assert joined["seq"] == after["seq"] == before["seq"]
        assert after["snapshot"] == before["snapshot"]
        assert joined["snapshot"] == before["snapshot"]
        assert (seat["role"], seat["player"]) == ("player", "alice")
        assert again["decision"] == prompt["decision"]
        assert 29 < again["deadline_seconds"] <= 30  # a fresh deadline, not the old one
        with trio.fail_after(helpers.deadline(10)):
            result = await alice.command(
                eid, "decide", decision=prompt["decision"]["id"], choice=["attack"]
            )
            final = await gm.request("snapshot", encounter=eid)
        assert result["first_seq"] == before["seq"] + 1
        got = events_of(alice)
        assert [got[s]["type"] for s in range(result["first_seq"], result["last_seq"] + 1)] == [
            "decision_resolved",
            "action_taken",
            "attack_made",
            "damaged",
            "engagement_ended",
            "zone_entered",
            "maneuver_ended",
        ]
        assert got[result["first_seq"]]["by"] == "alice"
        assert final["snapshot"]["pending"] == []
        assert final["snapshot"]["creatures"]["gob"]["hp"] == 60 - 14 - 14
    await second.stop()


@pytest.mark.usefixtures("validated")
async def test_restart_after_snapshots_and_a_rewind_gives_the_same_state(
    tmp_path: Path, nursery: trio.Nursery
) -> None:
    data = tmp_path / "data"
    first = await host(nursery, data)
    async with connect(first.url) as gm:
        eid, gm_token, _, _ = await setup(gm)
        first.server.rooms[eid].snapshot_every = 4  # several snapshots in the store
        with trio.fail_after(helpers.deadline(10)):
            for n in range(11):
                await gm.command(eid, "add_note", text=f"note {n}")
            await gm.command(eid, "move", creature="aria", feet=10)
            snapped = await gm.request("snapshot", encounter=eid)
        (stored,) = await first.store.unfinished()
        assert 0 < stored.snapshot_seq <= snapped["seq"]
        assert stored.snapshot_seq > 1
    await first.stop()

    second = await host(nursery, data)
    async with connect(second.url) as gm:
        with trio.fail_after(helpers.deadline(10)):
            joined = await gm.join(eid, gm_token)
            assert joined["snapshot"] == snapped["snapshot"]
            rewound = await gm.request("rewind", encounter=eid, to_seq=snapped["seq"] - 3)
            await gm.command(eid, "add_note", text="after the rewind")
            later = await gm.request("snapshot", encounter=eid)
        assert later["seq"] == rewound["seq"] + 1
    await second.stop()

    third = await host(nursery, data)
    async with connect(third.url) as gm:
        with trio.fail_after(helpers.deadline(10)):
            joined = await gm.join(eid, gm_token)
        assert joined["seq"] == later["seq"]
        assert joined["snapshot"] == later["snapshot"]
    await third.stop()


# -- the write-ahead contract when the disk refuses ---------------------------------------------


@pytest.mark.usefixtures("validated")
async def test_store_unavailable_refuses_with_nothing_changed_or_broadcast(
    tmp_path: Path, nursery: trio.Nursery
) -> None:
    served = await host(nursery, tmp_path / "data")
    async with (
        connect(served.url) as gm,
        connect(served.url) as alice,
        connect(served.url) as watcher,
    ):
        eid, _, alice_token, _ = await setup(gm)
        with trio.fail_after(helpers.deadline(10)):
            link = await gm.request("create_spectator_link", encounter=eid)
            await alice.join(eid, alice_token)
            await watcher.join(eid, link["token"])
            await alice.command(eid, "move", creature="aria", feet=5)
            before = await gm.request("snapshot", encounter=eid)
        for client in (gm, alice, watcher):
            client.pending_notifications()

        served.store._conn.execute("PRAGMA query_only=1")  # the disk turns read-only
        attempts = [
            (gm, "command", {"type": "add_note", "params": {"text": "lost"}}),
            (alice, "command", {"type": "move", "params": {"creature": "aria", "feet": 5}}),
            (gm, "rewind", {"to_seq": before["seq"] - 1}),
            (gm, "create_seat", {"player": "carol"}),
        ]
        for client, method, params in attempts:
            with trio.fail_after(helpers.deadline(10)), pytest.raises(ClientError) as info:
                await client.request(method, encounter=eid, **params)
            assert (info.value.code, info.value.name) == (6003, "store_unavailable"), method
        with trio.fail_after(helpers.deadline(10)):
            for client in (gm, alice, watcher):
                await client.request("ping")  # anything pushed before is in by now
            after = await gm.request("snapshot", encounter=eid)
        for client in (gm, alice, watcher):
            assert [n["method"] for n in client.pending_notifications()] == []
        assert after == before
        assert served.server.rooms[eid].state.seq == before["seq"]
        assert [s for s, _ in await served.store.read(eid)] == list(range(1, before["seq"] + 1))

        served.store._conn.execute("PRAGMA query_only=0")  # write access is back
        with trio.fail_after(helpers.deadline(10)):
            result = await gm.command(eid, "add_note", text="saved")
            moved = await alice.command(eid, "move", creature="aria", feet=5)
            live = [await watcher.notification("event") for _ in range(2)]
        assert result["first_seq"] == before["seq"] + 1  # no gap
        assert moved["first_seq"] == result["last_seq"] + 1
        assert [n["seq"] for n in live] == [before["seq"] + 1, before["seq"] + 2]
        assert [s for s, _ in await served.store.read(eid)] == list(range(1, moved["last_seq"] + 1))
    await served.stop()


# -- a corrupt store stops `zonekeep serve` ------------------------------------------------------


def newer_store(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '999')")
    conn.close()


@pytest.mark.parametrize(
    ("kind", "phrase"),
    [("garbage", "not a zonekeep store"), ("newer", "newer zonekeep")],
)
async def test_a_bad_store_stops_serve_with_exit_code_1(
    tmp_path: Path, kind: str, phrase: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    store = data / "zonekeep.sqlite3"
    if kind == "garbage":
        store.write_bytes(b"\x13\x37 not a database " * 2000)
    else:
        newer_store(store)
    before = store.read_bytes()
    with trio.fail_after(helpers.deadline(30)):
        done = await trio.run_process(
            serve_argv(data), capture_stdout=True, capture_stderr=True, check=False
        )
    stderr = done.stderr.decode()
    assert done.returncode == 1, (done.stdout, stderr)
    assert str(store) in stderr
    assert phrase in stderr
    assert "untouched" in stderr
    assert "Traceback" not in stderr
    assert b"serving on" not in done.stdout
    assert store.read_bytes() == before
    assert sorted(p.name for p in data.iterdir()) == ["zonekeep.sqlite3"]
