"""The encounter lifecycle on a real server over real websockets (issue 15): archived as
soon as it ends (its slot freed), loaded on its first join, unloaded when idle, the
archiving sweeps, ``server_full``, what the operator's command line changes in the
store, and ``--example`` reused on a restart."""

from __future__ import annotations

import logging
import math
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
import trio.testing
from e2e_support import Limits, Running, ServerConfig, creatures, start_server
from helpers import banner_lines, serve_argv
from lobby_support import (
    WAIT,
    from_outside,
    refused,
    settle,
    store_kw,
    until,
)

from zonekeep.sdk import RandomEntropy
from zonekeep.sdk.engine import Engine
from zonekeep.server import ZonekeepServer
from zonekeep.server._encounter_file import load_encounter

MakeServer = Callable[..., Any]
DAY = 86400.0
EXAMPLE = Path(__file__).parents[2] / "examples" / "encounters" / "goblin-ambush.json"


async def _true(value: bool) -> bool:
    return value


async def status_of(running: Running, eid: str) -> str | None:
    record = await running.server.store.get_record(eid)
    return None if record is None else record.status


# -- archived when it ends ---------------------------------------------------------------------


async def test_an_ended_encounter_is_archived_at_once_and_frees_its_slot(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0, limits=Limits(max_encounters=1)))
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter("First", "tavern", creatures())
        eid = created["encounter"]
        seat = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
        await alice.join(eid, seat)
        error = await refused(gm.create_encounter("Second", "tavern", creatures()))
        assert (error.code, error.name) == (5004, "server_full")

        await gm.command(eid, "end_encounter", force=True)
        assert await status_of(running, eid) == "archived"
        # Its slot is free at once, while those who watched the end are still in it.
        second = await gm.create_encounter("Second", "tavern", creatures())
        assert second["role"] == "gm"
        assert eid in running.server.rooms
        assert (await alice.request("snapshot", encounter=eid))["snapshot"]["phase"] == "ended"

        # It leaves memory once nobody is in it.
        await alice.request("leave", encounter=eid)
        assert eid in running.server.rooms
        await gm.request("leave", encounter=eid)
        await until(lambda: eid not in running.server.rooms, "the ended encounter to unload")
        error = await refused(alice.join(eid, seat))
        assert (error.code, error.name) == (1009, "encounter_archived")
        stored = await running.server.store.load(eid)
        assert stored is not None  # kept in the store (export, restore)


async def test_a_rewind_of_a_loaded_ended_encounter_opens_it_again(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    async with running.client() as gm:
        created = await gm.create_encounter("Undo", "tavern", creatures())
        eid, seq = created["encounter"], created["seq"]
        await gm.command(eid, "add_note", text="before the end")
        await gm.command(eid, "end_encounter", force=True)
        assert await status_of(running, eid) == "archived"
        await gm.request("rewind", encounter=eid, to_seq=seq + 1)
        assert await status_of(running, eid) == "open"
        await gm.request("leave", encounter=eid)
    room = running.server.rooms[eid]
    registry = running.server.registry
    assert room not in registry.idle_rooms(room.last_busy + 60)  # open: idle for 15 minutes
    assert room in registry.idle_rooms(room.last_busy + 15 * 60)


# -- loaded on the first join ------------------------------------------------------------------


async def test_stored_encounters_load_on_their_first_join_only(
    nursery: trio.Nursery, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="zonekeep.server")
    data = tmp_path / "data"
    kw = store_kw()
    first = await start_server(nursery, data, ServerConfig(port=0), **kw)
    encounters = {}
    async with first.client() as gm:
        for n in range(3):
            created = await gm.create_encounter(f"Table {n}", "tavern", creatures())
            eid = created["encounter"]
            seat = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
            await gm.command(eid, "add_note", text=f"note {n}")
            encounters[eid] = (created["gm_token"], seat)
    await first.server.shutdown()

    second = await start_server(
        nursery, data, ServerConfig(port=0, limits=Limits(max_encounters=2)), **kw
    )
    assert second.server.rooms == {}
    one, two, three = encounters
    async with second.client() as stranger:
        error = await refused(stranger.join(one, "not-a-token"))
        assert error.name == "bad_token"
        error = await refused(stranger.join("e999-nothere", "x"))
        assert (error.code, error.name) == (1007, "unknown_encounter")
    assert second.server.rooms == {}  # neither made the server load anything

    async with second.client() as alice, second.client() as gm, second.client() as gm2:
        joined = await alice.join(two, encounters[two][1])
        assert (joined["role"], joined["player"]) == ("player", "alice")
        assert joined["seq"] == 2 and "note 1" in str(joined["snapshot"])
        assert list(second.server.rooms) == [two]

        # Two joins at once load it once.
        results: list[dict[str, Any]] = []

        async def join(client: Any) -> None:
            results.append(await client.join(three, encounters[three][0]))

        async with trio.open_nursery() as both:
            both.start_soon(join, gm)
            both.start_soon(join, gm2)
        assert [r["role"] for r in results] == ["gm", "gm"]
        loads = [
            r for r in caplog.records if r.getMessage().startswith(f"encounter {three} loaded")
        ]
        assert len(loads) == 1
        assert sorted(second.server.rooms) == sorted([two, three])

        # A third would exceed max_encounters (2): its own error code.
        error = await refused(alice.join(one, encounters[one][1]))
        assert (error.code, error.name) == (5004, "server_full")
        assert one not in second.server.rooms
        # The lobby loads it too (the keyless loopback operator may): also refused.
        error = await refused(gm.encounter_links(one))
        assert (error.code, error.name) == (5004, "server_full")
        await gm.request("leave", encounter=three)
        await gm2.request("leave", encounter=three)
        await second.server.registry.unload(second.server.rooms[three])
        links = await gm.encounter_links(one)  # a slot is free: loaded for its links
        assert one in second.server.rooms
        assert (await gm2.join(one, links["gm_token"]))["seq"] == 2
        error = await refused(gm2.join(one, encounters[one][0]))
        assert error.name == "bad_token"  # the GM token was rotated


# -- unloaded when idle ------------------------------------------------------------------------


async def test_an_idle_encounter_unloads_and_loads_again(
    mock_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    # Trio's clock jumps whenever every task waits (for more than 20 ms of real time).
    mock_clock.autojump_threshold = 0.02
    running: Running = await make_server(ServerConfig(port=0, idle_unload_minutes=1))
    async with running.client() as gm:
        created = await gm.create_encounter("Idle", "tavern", creatures())
        eid, token = created["encounter"], created["gm_token"]
        result = await gm.command(eid, "add_note", text="kept")
    rooms = running.server.rooms

    async def unloaded() -> bool:
        return eid not in rooms

    # From here the clock moves only by hand (nobody is connected).
    await settle(lambda: _true(not rooms[eid].members), "the GM to leave")
    mock_clock.autojump_threshold = math.inf
    left = rooms[eid].last_busy
    mock_clock.jump(left + 50 - trio.current_time())
    await trio.testing.wait_all_tasks_blocked(0.01)
    assert eid in rooms  # 50 seconds idle
    mock_clock.jump(30)  # 80 seconds: the check every 15 seconds has seen a minute pass
    await settle(unloaded, "the idle encounter to unload")
    mock_clock.autojump_threshold = 0.02
    stored = await running.server.store.load(eid)
    assert stored is not None and stored.snapshot_seq == result["last_seq"]  # a fresh snapshot
    async with running.client() as gm:
        joined = await gm.join(eid, token)
        assert joined["seq"] == result["last_seq"] and "kept" in str(joined["snapshot"])
    assert eid in running.server.rooms


async def test_nobody_connected_and_no_timer_running_is_idle(make_server: MakeServer) -> None:
    running: Running = await make_server()
    registry = running.server.registry
    async with running.client() as gm:
        eid = (await gm.create_encounter("Timers", "tavern", creatures()))["encounter"]
        room = running.server.rooms[eid]
        later = room.last_busy + 16 * 60
        assert room not in registry.idle_rooms(later)  # someone is connected
    room = running.server.rooms[eid]
    later = room.last_busy + 16 * 60
    assert room in registry.idle_rooms(later)
    assert room not in registry.idle_rooms(room.last_busy + 14 * 60)
    room.turn_deadline = ("aria", 1, later + 30)  # a turn timer running
    assert room not in registry.idle_rooms(later)
    room.turn_deadline = None
    room.deadlines["d1"] = later + 30  # a decision waiting for its deadline
    assert room not in registry.idle_rooms(later)


# -- the archiving sweeps ----------------------------------------------------------------------


async def test_the_sweeps_archive_and_delete_by_last_activity(
    mock_clock: trio.testing.MockClock, nursery: trio.Nursery, tmp_path: Path
) -> None:
    mock_clock.autojump_threshold = 0.02
    wall = [1_800_000_000.0]
    data = tmp_path / "data"
    kw = store_kw()
    config = ServerConfig(
        port=0, data_dir=data, archive_after_days=30, delete_archived_after_days=60
    )

    async def start() -> Running:
        server = ZonekeepServer(config, engine=Engine(), entropy=RandomEntropy(7), **kw)
        server.registry.clock = lambda: wall[0]
        await nursery.start(server.run)
        return Running(server)

    first = await start()
    async with first.client() as gm:
        idle = (await gm.create_encounter("Idle", "tavern", creatures()))["encounter"]
        played = await gm.create_encounter("Played", "tavern", creatures())
        ended = (await gm.create_encounter("Ended", "tavern", creatures()))["encounter"]
        await gm.command(ended, "end_encounter", force=True)
    wall[0] += 31 * DAY
    async with first.client() as gm:
        await gm.join(played["encounter"], played["gm_token"])  # someone came back
    await first.server.shutdown()

    wall[0] += 3600
    second = await start()  # the sweep at start
    assert await status_of(second, idle) == "archived"  # 31 days without a join
    assert await status_of(second, played["encounter"]) == "open"
    assert await status_of(second, ended) == "archived"  # archived 31 days ago: kept
    async with second.client() as gm:
        error = await refused(gm.join(idle, "whatever"))
        assert error.name == "encounter_archived"

    wall[0] += 31 * DAY
    mock_clock.autojump_threshold = math.inf  # the clock moves only by hand from here

    async def deleted() -> bool:
        return await status_of(second, ended) is None

    await trio.testing.wait_all_tasks_blocked(0.01)
    assert not await deleted()  # nothing before the hour
    mock_clock.jump(3600)  # the hourly sweep
    await settle(deleted, "the hourly sweep")  # archived 62 days ago: deleted
    assert await second.server.store.load(ended) is None
    assert await status_of(second, idle) == "archived"  # archived 31 days ago: kept
    assert await status_of(second, played["encounter"]) == "archived"


# -- what the command line changes -------------------------------------------------------------


async def test_archived_deleted_and_restored_from_outside(make_server: MakeServer) -> None:
    running: Running = await make_server()
    store = running.server.store
    async with running.client() as gm, running.client() as alice:
        one = (await gm.create_encounter("One", "tavern", creatures()))["encounter"]
        two = await gm.create_encounter("Two", "tavern", creatures())
        seat = (await gm.request("create_seat", encounter=one, player="alice"))["token"]
        await alice.join(one, seat)

        async def archive(other: Any) -> None:
            record = await other.get_record(one)
            await other.put_record(attrs.evolve(record, status="archived"))

        await from_outside(running, archive)
        with trio.fail_after(WAIT):
            told = await alice.notification("encounter_closed")
        assert (told["encounter"], told["reason"]) == (one, "archived")
        assert one not in running.server.rooms
        assert await status_of(running, one) == "archived"

        async def restore(other: Any) -> None:  # as `zonekeep encounters restore` does
            assert await other.set_status(one, "open", last_activity=time.time())

        await from_outside(running, restore)
        assert (await alice.join(one, seat))["player"] == "alice"  # joinable again

        await from_outside(running, lambda other: other.delete(two["encounter"]))
        with trio.fail_after(WAIT):
            told = await gm.notification("encounter_closed")
            if told["encounter"] == one:  # the GM was told of the first one's archiving
                told = await gm.notification("encounter_closed")
        assert (told["encounter"], told["reason"]) == (two["encounter"], "deleted")
        await until(lambda: two["encounter"] not in running.server.rooms, "the unload")
        assert await store.get_record(two["encounter"]) is None
        error = await refused(gm.join(two["encounter"], two["gm_token"]))
        assert error.name == "unknown_encounter"


# -- --example on a restart --------------------------------------------------------------------


async def test_an_example_file_is_reused_with_its_tokens(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    kw = store_kw()
    spec = load_encounter(EXAMPLE)
    first = await start_server(nursery, data, ServerConfig(port=0), **kw)
    room, token, reused = await first.server.registry.reuse_or_open_file(spec, EXAMPLE)
    assert not reused and token is not None
    eid = room.id
    record = await first.server.store.get_record(eid)
    assert record is not None and record.source == str(EXAMPLE.resolve())
    assert record.creator is None  # the operator's: no quotas
    await first.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0), **kw)
    again, fresh, reused = await second.server.registry.reuse_or_open_file(spec, EXAMPLE)
    assert reused and again.id == eid and fresh is None  # no new token: the old one holds
    async with second.client() as gm:
        joined = await gm.join(eid, token)
        assert joined["role"] == "gm" and joined["snapshot"]["phase"] != "surprise"
        await gm.command(eid, "end_encounter", force=True)
    # Ended, so archived: the next start opens a new one.
    _, _, reused = await second.server.registry.reuse_or_open_file(spec, EXAMPLE)
    assert not reused


def test_serve_example_twice_reuses_the_encounter(tmp_path: Path) -> None:
    def serve() -> str:
        proc = subprocess.Popen(
            serve_argv(tmp_path, "--example", str(EXAMPLE)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            lines = banner_lines(proc, 20)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=helpers.deadline(10)) == 0
            return "\n".join(lines)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    first = serve()
    line = next(x for x in first.splitlines() if x.startswith("Encounter "))
    assert line.startswith("Encounter 'Goblin ambush at the Drowned Lantern' is ready: ")
    eid = line.rsplit(" ", 1)[-1]
    second = serve()
    assert f"Encounter 'Goblin ambush at the Drowned Lantern' is back: {eid}" in second
    token = next(x for x in first.splitlines() if "GM token:" in x).split()[-1]
    assert token in second  # the same GM token (tests/e2e/test_example_tokens.py)
    assert "GM token:" in second and "seat alice:" in second
