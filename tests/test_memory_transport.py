"""The in-memory transport (``memory_support``) and what it lets a test reach without a
socket: the client's address, a close by the server, the registry's rooms after a
client goes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, ServerConfig, creatures
from memory_support import Memory, MemoryWebsocket

from zonekeep.protocol.client import ClientError, ConnectionLost

MakeServer = Callable[..., Any]


async def test_every_message_is_checked_against_the_schemas() -> None:
    ws = MemoryWebsocket()
    ws.push_text('{"id": 1, "result": {}}')
    with pytest.raises(ValueError, match="'result' was unexpected"):
        ws.push_text('{"id": 1, "result": {}, "error": {"code": 1}}')
    assert ws.sent == [{"id": 1, "result": {}}]


async def test_a_remote_client_needs_a_key_and_a_loopback_one_does_not(running: Memory) -> None:
    with trio.fail_after(helpers.deadline(5)):
        async with running.client(address="203.0.113.5") as remote:
            with pytest.raises(ClientError) as info:
                await remote.create_encounter("Far", "tavern", creatures())
        assert (info.value.code, info.value.name) == (2004, "gm_key_required")
        assert await running.server.store.encounters() == []
        async with running.client() as local:
            created = await local.create_encounter("Near", "tavern", creatures())
        record = await running.server.registry.record_of(created["encounter"])
        assert record is not None and record.creator == "ip:127.0.0.1"


async def test_rate_limit_abuse_closes_the_connection_and_fails_what_waits(
    make_server: MakeServer,
) -> None:
    limits = Limits(rate_per_second=0.001, rate_burst=1, abuse_refusals=1)
    running: Memory = await make_server(ServerConfig(port=0, limits=limits))
    with trio.fail_after(helpers.deadline(5)):
        async with running.client() as client:  # its hello takes the one message
            with pytest.raises(ClientError) as refused:
                await client.request("ping")
            assert refused.value.name == "rate_limited"
            with pytest.raises(ConnectionLost) as lost:
                await client.request("ping")  # the second refusal in the window: abuse
            assert (lost.value.code, lost.value.reason) == (1008, "rate limit abuse")
            assert client.closed.is_set()
    (ws,) = running.connections
    assert (ws.close_code, ws.close_reason) == (1008, "rate limit abuse")
    assert [m.get("error", {}).get("name") for m in ws.sent] == [None, "rate_limited"]


async def test_a_client_that_goes_leaves_the_rooms_it_joined(running: Memory) -> None:
    with trio.fail_after(helpers.deadline(5)):
        async with running.client() as gm:
            created = await gm.create_encounter("Rooms", "tavern", creatures())
            eid = created["encounter"]
            async with running.client() as watcher:
                await watcher.join(eid, created["gm_token"])
                room = running.server.registry.get(eid)
                assert room is not None and len(room.members) == 2
            assert len(room.members) == 1  # the watcher's connection closed: it left
            await gm.request("leave", encounter=eid)
            assert room.members == []


async def test_an_idle_room_unloads_on_trios_clock_and_the_next_join_loads_it(
    autojump_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    """With no socket and the in-memory store, every wait is on trio's clock: the
    registry's idle unloading runs in virtual time, minutes in milliseconds."""
    config = ServerConfig(port=0, store="memory", idle_unload_minutes=1)
    running: Memory = await make_server(config)
    rooms = running.server.rooms
    with trio.fail_after(helpers.deadline(600)):  # (virtual seconds)
        async with running.client() as gm:
            created = await gm.create_encounter("Idle", "tavern", creatures())
            eid, token = created["encounter"], created["gm_token"]
            result = await gm.command(eid, "add_note", text="kept")
        left = rooms[eid].last_busy
        assert rooms[eid].members == []  # the GM's connection closed: it left at once
        await trio.sleep_until(left + 50)
        assert eid in rooms  # 50 seconds idle
        await trio.sleep_until(left + 80)  # the check every 15 seconds has seen a minute
        assert eid not in rooms
        stored = await running.server.store.load(eid)
        assert stored is not None and stored.snapshot_seq == result["last_seq"]
        async with running.client() as gm:
            joined = await gm.join(eid, token)
        assert joined["seq"] == result["last_seq"] and "kept" in str(joined["snapshot"])
        assert eid in rooms
