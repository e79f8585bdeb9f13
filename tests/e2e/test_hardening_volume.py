"""Hardening against abuse by volume (issue 14, points 3 to 7), each attack sent over a
real socket to a real server on a loopback port.

3. encounter quotas per creator; 4. connection caps per token, per IP, for spectators;
5. taking tokens back; 6. the reply byte budget and sliced replays; 7. the ``Origin``
of the websocket handshake and HTTP methods other than GET.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import helpers
import trio
import trio.testing
from e2e_support import Limits, Running, ServerConfig, creatures, start_server

from zonekeep.protocol.client import ClientError, ZonekeepClient

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)  # seconds: the bound on every wait for something that must happen


async def http_exchange(port: int, request: str) -> tuple[int, str]:
    """Send one raw HTTP request; the response's status code and its whole text."""
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(request.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some()
                if not chunk:
                    break
                data += chunk
    text = data.decode("latin-1")
    return int(text.split(" ", 2)[1]), text


def handshake(port: int, origin: str | None, host: str | None = None) -> str:
    """A websocket opening handshake for ``/ws``, with ``Origin: origin`` unless None."""
    lines = [
        "GET /ws HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{port}'}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    return "\r\n".join(lines) + "\r\n\r\n"


# -- 7. Origin and HTTP methods ------------------------------------------------------------------


async def test_a_foreign_origin_is_refused_with_403(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0))
    port = running.server.port
    assert port is not None
    status, text = await http_exchange(port, handshake(port, "http://evil.example"))
    assert status == 403, text
    # Same host, another port: another origin.
    status, _ = await http_exchange(port, handshake(port, f"http://127.0.0.1:{port + 1}"))
    assert status == 403
    status, _ = await http_exchange(port, handshake(port, "null"))
    assert status == 403
    # The server's own origin, and no Origin at all (a non-browser client), open.
    for origin in (f"http://127.0.0.1:{port}", None):
        status, text = await http_exchange(port, handshake(port, origin))
        assert status == 101, text
    # Reached under another name (a Host header the server does not listen on).
    status, _ = await http_exchange(
        port, handshake(port, "http://table.example:8080", host="table.example:8080")
    )
    assert status == 101


async def test_allowed_origins_and_the_public_url(make_server: MakeServer) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, public_url="https://dice.example.org/zk")
    )
    port = running.server.port
    assert port is not None
    assert (await http_exchange(port, handshake(port, "https://dice.example.org")))[0] == 101
    assert (await http_exchange(port, handshake(port, "http://dice.example.org")))[0] == 403
    listed: Running = await make_server(
        ServerConfig(port=0, allowed_origins=["https://friends.example"])
    )
    port = listed.server.port
    assert port is not None
    assert (await http_exchange(port, handshake(port, "https://friends.example")))[0] == 101
    # A list replaces the default: the server's own origin is no longer enough.
    assert (await http_exchange(port, handshake(port, f"http://127.0.0.1:{port}")))[0] == 403
    assert (await http_exchange(port, handshake(port, None)))[0] == 101


async def test_methods_other_than_get_get_405(running: Running) -> None:
    port = running.server.port
    assert port is not None
    for method in ("POST", "PUT", "DELETE", "HEAD", "OPTIONS"):
        status, text = await http_exchange(
            port,
            f"{method} /table/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n",
        )
        assert status == 405, (method, text)
        assert "Allow: GET" in text
    status, _ = await http_exchange(port, f"GET /table/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n")
    assert status == 200


def limits(**kw: Any) -> ServerConfig:
    return ServerConfig(port=0, limits=Limits(**kw))


async def refused(call: Any) -> ClientError:
    """The :class:`ClientError` that awaiting ``call`` raises (failing if it succeeds)."""
    try:
        with trio.fail_after(WAIT):
            await call
    except ClientError as exc:
        return exc
    raise AssertionError("the request was not refused")


# -- 3. encounter quotas per creator -------------------------------------------------------------


async def test_one_anonymous_creator_cannot_fill_the_server(
    mock_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    # The clock stands still unless the test moves it (the hour of the quota).
    running: Running = await make_server(limits(encounters_per_hour=3, open_encounters=2))
    async with running.client() as one, running.client() as two:
        first = (await one.create_encounter("One", "tavern", creatures()))["encounter"]
        second = (await one.create_encounter("Two", "tavern", creatures()))["encounter"]
        # Another connection from the same address is the same creator.
        error = await refused(two.create_encounter("Three", "tavern", creatures()))
        assert (error.code, error.name) == (5003, "quota_exceeded")
        assert "open_encounters" in error.message and "ends" in error.message
        assert len(running.server.rooms) == 2

        # An encounter that ends frees its slot at once.
        await one.command(first, "end_encounter", force=True)
        third = (await two.create_encounter("Three", "tavern", creatures()))["encounter"]
        await one.command(second, "end_encounter", force=True)
        await two.command(third, "end_encounter", force=True)

        # Three created in this hour: the fourth waits for the first to be an hour old.
        error = await refused(one.create_encounter("Four", "tavern", creatures()))
        assert (error.code, error.name) == (5003, "quota_exceeded")
        assert "encounters_per_hour" in error.message and "3600 seconds" in error.message
        mock_clock.jump(1800)
        error = await refused(one.create_encounter("Four", "tavern", creatures()))
        assert "1800 seconds" in error.message
        mock_clock.jump(1800)
        assert (await one.create_encounter("Four", "tavern", creatures()))["role"] == "gm"


async def test_ended_encounters_do_not_count_toward_max_encounters(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(limits(max_encounters=1))
    async with running.client() as gm:
        eid = (await gm.create_encounter("Only", "tavern", creatures()))["encounter"]
        error = await refused(gm.create_encounter("More", "tavern", creatures()))
        assert (error.code, error.name) == (5004, "server_full")
        await gm.command(eid, "end_encounter", force=True)
        assert (await gm.create_encounter("More", "tavern", creatures()))["role"] == "gm"


# -- 4. connection caps --------------------------------------------------------------------------


async def test_a_spectator_link_cannot_lock_out_the_gm_and_players(running: Running) -> None:
    limits = running.server.config.limits  # the defaults
    async with running.client() as gm:
        created = await gm.create_encounter("Watched", "tavern", creatures())
        eid = created["encounter"]
        link = (await gm.request("create_spectator_link", encounter=eid))["token"]
        alice_token = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
        spectators: list[ZonekeepClient] = []
        joined = 0
        errors = []
        async with AsyncExitStack() as stack:
            for _ in range(32):  # the attack: one link, 32 connections
                client = await stack.enter_async_context(running.client())
                spectators.append(client)
                try:
                    await client.join(eid, link)
                    joined += 1
                except ClientError as exc:
                    errors.append((exc.code, exc.name))
            assert joined == limits.max_connections_per_token
            assert errors == [(5002, "too_many_connections")] * (32 - joined)
            # The GM's second connection and Alice's seat still get in.
            async with running.client() as gm2, running.client() as alice:
                assert (await gm2.join(eid, created["gm_token"]))["role"] == "gm"
                assert (await alice.join(eid, alice_token))["player"] == "alice"


async def test_spectators_have_their_own_cap(make_server: MakeServer) -> None:
    running: Running = await make_server(
        limits(max_connections_per_token=2, max_spectators_per_encounter=3)
    )
    async with running.client() as gm, AsyncExitStack() as stack:
        created = await gm.create_encounter("Crowd", "tavern", creatures())
        eid = created["encounter"]
        links = [
            (await gm.request("create_spectator_link", encounter=eid))["token"] for _ in range(3)
        ]
        clients = [await stack.enter_async_context(running.client()) for _ in range(5)]
        await clients[0].join(eid, links[0])
        await clients[1].join(eid, links[0])
        error = await refused(clients[2].join(eid, links[0]))
        assert "This token already has 2 connections" in error.message
        await clients[2].join(eid, links[1])
        error = await refused(clients[3].join(eid, links[2]))
        assert error.name == "too_many_connections" and "3 spectator connections" in error.message
        # Leaving frees the place (of the token and of the spectators).
        await clients[0].request("leave", encounter=eid)
        await clients[3].join(eid, links[0])
        # The GM's token is capped too, and its own connections are not spectators.
        await clients[4].join(eid, created["gm_token"])
        error = await refused(clients[0].join(eid, created["gm_token"]))
        assert "This token already has 2 connections" in error.message


async def test_connections_per_ip_address(make_server: MakeServer) -> None:
    running: Running = await make_server(limits(max_connections_per_ip=2))
    port = running.server.port
    assert port is not None
    async with running.client() as one:
        async with running.client():
            status, text = await http_exchange(port, handshake(port, None))
            assert status == 429, text
            assert await one.request("ping") == {}
        # One closed: a place is free again (once the server saw it close).
        listener = running.server._listener
        assert listener is not None
        with trio.fail_after(WAIT):
            while listener.per_address.get("127.0.0.1") != 1:
                await trio.sleep(0)
        async with running.client() as again:
            assert await again.request("ping") == {}


# -- 6. amplification: the reply byte budget and sliced replays ---------------------------------


async def test_snapshots_past_the_byte_budget_are_rate_limited(
    mock_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    # Plenty of messages (the message rate limit is not what is tested), few bytes.
    running: Running = await make_server(
        limits(
            rate_burst=1000,
            reply_bytes_burst=20_000,
            reply_bytes_per_second=1_000.0,
            max_message_bytes=65536,
        )
    )
    async with running.client() as gm:
        eid = (await gm.create_encounter("Big", "tavern", creatures()))["encounter"]
        for i in range(20):  # a snapshot of several KB
            await gm.command(eid, "add_note", text=f"note {i} " + "x" * 400)
        served = 0
        error = None
        for _ in range(50):
            try:
                await gm.request("snapshot", encounter=eid)
            except ClientError as exc:
                error = exc
                break
            served += 1
        assert error is not None, "50 snapshots were sent without limit"
        assert (error.code, error.name) == (5001, "rate_limited")
        # A snapshot is more than 20,000 / 4 bytes: the budget allows a few, not 50.
        assert 1 <= served <= 4
        assert "Retry in" in error.message
        retry = float(error.message.rsplit("Retry in ", 1)[1].split(" ", 1)[0])
        assert 0 < retry <= 20
        # Other requests are not held back; the budget refills with time.
        assert await gm.request("ping") == {}
        mock_clock.jump(retry + 0.1)
        assert (await gm.request("snapshot", encounter=eid))["seq"] > 0


class StepCounter(trio.abc.Instrument):
    """Counts the steps of the tasks that answer requests (one per connection, started
    by ``trio.serve_listeners``)."""

    def __init__(self) -> None:
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task.name.endswith("serve_listeners._run_handler"):
            self.steps += 1


async def join_a_long_log(make_server: MakeServer) -> tuple[dict[str, Any], int]:
    """Alice (a player) joins with ``last_seq=1`` an encounter of 1,000 notes: her
    ``join`` result, and how many steps the server's connection tasks took meanwhile."""
    running: Running = await make_server(
        ServerConfig(port=0, durability="normal", limits=Limits(rate_burst=10_000))
    )
    async with running.client() as gm, running.client() as alice:
        eid = (await gm.create_encounter("Long", "tavern", creatures()))["encounter"]
        token = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
        for i in range(1000):
            await gm.command(eid, "add_note", text=f"note {i}")
        counter = StepCounter()
        trio.lowlevel.add_instrument(counter)
        try:
            joined: dict[str, Any] = await alice.join(eid, token, last_seq=1)
        finally:
            trio.lowlevel.remove_instrument(counter)
    assert joined["events"][-1]["note"]["text"] == "note 999"
    return joined, counter.steps


async def test_a_long_replay_yields_between_slices(
    make_server: MakeServer, monkeypatch: Any
) -> None:
    import zonekeep.server._methods as methods

    monkeypatch.setattr(methods, "REPLAY_SLICE", 50)
    joined, steps = await join_a_long_log(make_server)
    assert len(joined["events"]) >= 1000
    assert [e["type"] for e in joined["events"][-2:]] == ["note_added", "note_added"]
    # At least one task step per slice of 50 events: others ran in between.
    assert steps >= len(joined["events"]) // 50


async def test_a_long_filtered_replay_is_folded_in_slices(
    make_server: MakeServer, monkeypatch: Any
) -> None:
    # A player's replay is filtered event by event with the state folded up to it: that
    # fold yields to other rooms every few events too (serialization slicing off here).
    import zonekeep.server._methods as methods
    import zonekeep.server._room as room

    monkeypatch.setattr(methods, "REPLAY_SLICE", 1_000_000)
    monkeypatch.setattr(room, "_FOLD_SLICE", 50)
    _, steps = await join_a_long_log(make_server)
    assert steps >= 1000 // 50


# -- 5. taking tokens back -----------------------------------------------------------------------


async def closed(client: ZonekeepClient) -> tuple[int | None, str | None]:
    """Wait until the server closed ``client``; its close code and reason."""
    with trio.fail_after(WAIT):
        await client.closed.wait()
    return client.ws.close_code, client.ws.close_reason


async def test_the_gm_takes_tokens_back_for_good(nursery: trio.Nursery, tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = ServerConfig(port=0, data_dir=data)
    running = await start_server(nursery, data, config)
    async with AsyncExitStack() as stack:
        gm, alice, alice2, bob, watcher, watcher2, gm_other = [
            await stack.enter_async_context(running.client()) for _ in range(7)
        ]
        created = await gm.create_encounter("Revoked", "tavern", creatures())
        eid, gm_token = created["encounter"], created["gm_token"]
        seat = {
            p: (await gm.request("create_seat", encounter=eid, player=p))["token"]
            for p in ("alice", "bob")
        }
        links = [
            (await gm.request("create_spectator_link", encounter=eid))["token"] for _ in range(2)
        ]
        await alice.join(eid, seat["alice"])
        await alice2.join(eid, seat["alice"])
        await bob.join(eid, seat["bob"])
        await watcher.join(eid, links[0])
        await watcher2.join(eid, links[1])
        await gm_other.join(eid, gm_token)

        # Only the GM takes tokens back.
        error = await refused(bob.request("remove_seat", encounter=eid, player="alice"))
        assert (error.code, error.name) == (3002, "gm_only")
        error = await refused(watcher.request("rotate_gm_token", encounter=eid))
        assert error.name == "spectator_read_only"
        error = await refused(gm.request("remove_seat", encounter=eid, player="nobody"))
        assert (error.code, error.name) == (1005, "invalid_params")
        error = await refused(gm.request("revoke_spectator_link", encounter=eid, token=gm_token))
        assert error.name == "invalid_params"

        # remove_seat: both of Alice's connections are closed with 4002.
        assert await gm.request("remove_seat", encounter=eid, player="alice") == {"closed": 2}
        assert await closed(alice) == (4002, "token revoked")
        assert await closed(alice2) == (4002, "token revoked")
        # revoke_spectator_link: that link's watcher only.
        revoked = await gm.request("revoke_spectator_link", encounter=eid, token=links[0])
        assert revoked == {"closed": 1}
        assert await closed(watcher) == (4002, "token revoked")
        # rotate_gm_token: the other GM connection is closed; the one that asked stays GM.
        rotated = await gm.request("rotate_gm_token", encounter=eid)
        assert rotated["closed"] == 1 and rotated["token"] != gm_token
        assert await closed(gm_other) == (4002, "token revoked")
        assert "token" in await gm.request("create_spectator_link", encounter=eid)
        # Those not revoked play on.
        assert (await bob.request("snapshot", encounter=eid))["seq"] >= 1
        assert (await watcher2.request("snapshot", encounter=eid))["seq"] >= 1

        async with running.client() as again:
            for token in (seat["alice"], links[0], gm_token):
                error = await refused(again.join(eid, token))
                assert (error.code, error.name) == (2000, "bad_token")
            assert (await again.join(eid, rotated["token"]))["role"] == "gm"

    # After a restart, from the store: revoked tokens still open nothing.
    await running.server.shutdown()
    restarted = await start_server(nursery, data, config)
    assert eid not in restarted.server.rooms  # loaded by its first join
    async with restarted.client() as client:
        for token in (seat["alice"], links[0], gm_token):
            error = await refused(client.join(eid, token))
            assert error.name == "bad_token"
        # A revoked token did not even make the server load the encounter.
        assert eid not in restarted.server.rooms
        assert (await client.join(eid, seat["bob"]))["player"] == "bob"
        assert (await client.join(eid, links[1]))["role"] == "spectator"
        assert (await client.join(eid, rotated["token"]))["role"] == "gm"
