"""Every limit of SPEC.md's Limits section, end to end, and how the server fails safely.

Each test starts a real server with small limits (``ServerConfig(port=0,
limits=Limits(...))``) so that what a limit does happens fast; every wait is bounded
by ``trio.fail_after``. Frames sent with ``send_raw`` get replies the client did not
ask for through ``request``; those arrive as ``_unmatched`` notifications in order.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterable
from typing import Any, cast

import helpers
import pytest
import trio
import trio.testing
from e2e_support import Limits, Running, ServerConfig, creatures
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close, Frame, Opcode
from websockets.protocol import OPEN
from websockets.trio.client import connect as ws_connect
from websockets.uri import parse_uri

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import (
    Command,
    CommandSpec,
    Note,
    NoteAdded,
    Param,
    RuleContext,
    hookimpl,
)
from zonekeep.sdk.engine import Engine
from zonekeep.server._connection import Connection
from zonekeep.server._methods import TokenBucket

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)  # seconds: the bound on every wait for something that must happen


# -- helpers ------------------------------------------------------------------------------------


async def reply(client: ZonekeepClient) -> dict[str, Any]:
    """The next reply to a frame sent with ``send_raw`` (skipping notifications)."""
    with trio.fail_after(WAIT):
        return await client.notification("_unmatched")


async def closed(client: ZonekeepClient) -> tuple[int | None, str | None]:
    """Wait until the server closed ``client``; its close code and reason."""
    with trio.fail_after(WAIT):
        await client.closed.wait()
    return client.ws.close_code, client.ws.close_reason


def ping(rid: str, size: int | None = None) -> str:
    """A ping request, padded with JSON whitespace to exactly ``size`` UTF-8 bytes."""
    text = json.dumps({"id": rid, "method": "ping"})
    if size is not None:
        assert size >= len(text)
        text += " " * (size - len(text))
        assert len(text.encode()) == size
    return text


def note_texts(snapshot: dict[str, Any]) -> list[str]:
    return [n["text"] for n in snapshot["notes"].values()]


async def setup_table(
    running: Running, gm: ZonekeepClient, name: str = "Limits"
) -> tuple[str, dict[str, str]]:
    """Create an encounter; tokens for alice, bob and a spectator."""
    created = await gm.create_encounter(name, "tavern", creatures())
    eid = created["encounter"]
    tokens = {
        "gm": created["gm_token"],
        "alice": (await gm.request("create_seat", encounter=eid, player="alice"))["token"],
        "bob": (await gm.request("create_seat", encounter=eid, player="bob"))["token"],
        "spectator": (await gm.request("create_spectator_link", encounter=eid))["token"],
    }
    return eid, tokens


def limits(**kw: Any) -> ServerConfig:
    return ServerConfig(port=0, limits=Limits(**kw))


# -- max_message_bytes ---------------------------------------------------------------------------


async def test_oversized_frames_are_refused_then_a_hard_cap_closes(
    make_server: MakeServer,
) -> None:
    running = await make_server(limits(max_message_bytes=1024))
    async with running.client() as client:
        assert client.welcome is not None
        assert client.welcome["limits"]["max_message_bytes"] == 1024

        await client.send_raw(ping("at-limit", 1024))
        assert await reply(client) == {"id": "at-limit", "result": {}}

        await client.send_raw(ping("over", 1025))
        refused = await reply(client)
        assert refused["id"] is None
        assert (refused["error"]["code"], refused["error"]["name"]) == (5000, "message_too_large")

        # The limit counts UTF-8 bytes, not characters: 600 'é' are 1200 bytes.
        await client.send_raw(json.dumps({"id": "x", "method": "é" * 600}, ensure_ascii=False))
        refused = await reply(client)
        assert refused["id"] is None and refused["error"]["code"] == 5000

        # Up to four times the limit is refused but the connection stays usable.
        await client.send_raw(ping("hard-cap", 4 * 1024))
        refused = await reply(client)
        assert refused["id"] is None and refused["error"]["code"] == 5000
        assert await client.request("ping") == {}

        # One byte more closes the connection with 1009.
        await client.send_raw(ping("too-big", 4 * 1024 + 1))
        code, _reason = await closed(client)
        assert code == 1009
        assert [n for n in client.pending_notifications() if n["method"] == "_unmatched"] == []


# -- rate_per_second, rate_burst, abuse ----------------------------------------------------------


async def test_token_bucket_refills_from_trios_clock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bucket = TokenBucket(5, 5)
    assert [bucket.take() for _ in range(6)] == [True] * 5 + [False]
    await trio.sleep(0.1)
    assert not bucket.take()  # half a token
    await trio.sleep(0.1)
    assert bucket.take() and not bucket.take()
    await trio.sleep(100)  # refills up to the burst, not beyond
    assert [bucket.take() for _ in range(6)] == [True] * 5 + [False]


async def test_flooding_is_refused_then_abuse_closes_with_1008(make_server: MakeServer) -> None:
    # Practically no refill: what matters is the burst. hello takes the first token.
    running = await make_server(
        limits(rate_per_second=0.001, rate_burst=6, abuse_refusals=3, abuse_window_seconds=10)
    )
    async with running.client() as client:
        for i in range(6):
            await client.send_raw(ping(f"p{i}"))
        replies = [await reply(client) for _ in range(6)]
        assert replies[:5] == [{"id": f"p{i}", "result": {}} for i in range(5)]
        assert replies[5]["id"] == "p5"  # the refused request's id, echoed
        assert (replies[5]["error"]["code"], replies[5]["error"]["name"]) == (5001, "rate_limited")

        # Two more refusals (three in all) are still tolerated ...
        for i in range(2):
            await client.send_raw(ping(f"q{i}"))
            refused = await reply(client)
            assert refused["id"] == f"q{i}" and refused["error"]["name"] == "rate_limited"
        assert not client.closed.is_set()
        # ... the fourth within the window closes the connection.
        await client.send_raw(ping("last"))
        assert await closed(client) == (1008, "rate limit abuse")


async def test_a_rate_limited_request_gets_its_own_id_back(make_server: MakeServer) -> None:
    # A client waiting for the answer to its request gets it, even when refused;
    # a frame whose id cannot be read (not JSON, binary, no valid id) gets id null.
    running = await make_server(limits(rate_per_second=0.001, rate_burst=2, abuse_refusals=100))
    async with running.client() as client:  # hello took the first token
        assert await client.request("ping") == {}
        with trio.fail_after(WAIT), pytest.raises(ClientError) as refused:
            await client.request("ping")
        assert (refused.value.code, refused.value.name) == (5001, "rate_limited")

        sent: list[tuple[str | bytes, int | str | None]] = [
            (json.dumps({"id": 7, "method": "ping"}), 7),
            (json.dumps({"method": "snapshot", "params": {"encounter": "x"}, "id": "s-1"}), "s-1"),
            (json.dumps({"id": "bad", "method": "no such method", "extra": 1}), "bad"),
            ("{not json", None),
            (b'{"id": 8, "method": "ping"}', None),
            (json.dumps({"method": "ping"}), None),
            (json.dumps({"id": True, "method": "ping"}), None),
            (json.dumps({"id": "x" * 65, "method": "ping"}), None),
            (json.dumps([{"id": 9}]), None),
        ]
        for frame, expected in sent:
            await client.send_raw(frame)
            answer = await reply(client)
            # About 1000 seconds until the bucket (0.001 a second) holds a token again.
            wait = answer["error"]["data"].pop("retry_after_ms")
            assert 990_000 < wait <= 1_000_000, wait
            assert answer == {
                "id": expected,
                "error": {
                    "code": 5001,
                    "name": "rate_limited",
                    "message": "Too many messages: at most 0.001 a second (bursts of 2). "
                    "This one was ignored.",
                    "data": {"retryable": True},
                },
            }


async def test_one_flooding_client_does_not_limit_another(make_server: MakeServer) -> None:
    running = await make_server(limits(rate_per_second=0.001, rate_burst=3))
    async with running.client() as flooder, running.client() as calm:
        for i in range(5):
            await flooder.send_raw(ping(f"p{i}"))
        names = [(await reply(flooder)).get("error", {}).get("name") for _ in range(5)]
        assert names == [None, None, "rate_limited", "rate_limited", "rate_limited"]
        assert await calm.request("ping") == {}
        assert await calm.request("ping") == {}


# -- max_connections_per_encounter ---------------------------------------------------------------


async def test_a_full_encounter_refuses_joins_and_others_are_unaffected(
    make_server: MakeServer,
) -> None:
    running = await make_server(limits(max_connections_per_encounter=2))
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as other_gm,
    ):
        eid, tokens = await setup_table(running, gm)
        await alice.join(eid, tokens["alice"])  # the GM and Alice: full

        with pytest.raises(ClientError) as refused:
            await bob.join(eid, tokens["bob"])
        assert (refused.value.code, refused.value.name) == (5002, "too_many_connections")
        with pytest.raises(ClientError) as refused:
            await bob.request("snapshot", encounter=eid)
        assert refused.value.name == "not_joined"
        # The GM's own token opens no extra slot either.
        with pytest.raises(ClientError) as refused:
            await other_gm.join(eid, tokens["gm"])
        assert refused.value.name == "too_many_connections"

        # Those joined play on; joining again does not take a second slot.
        result = await gm.command(eid, "set_surprise", surprised=[])
        with trio.fail_after(WAIT):
            pushed = await alice.notification("event")
        assert pushed["seq"] == result["first_seq"]
        rejoined = await alice.join(eid, tokens["alice"])
        assert rejoined["role"] == "player"
        assert len(running.server.rooms[eid].members) == 2

        # Another encounter on the same server has its own count.
        await other_gm.create_encounter("Elsewhere", "tavern", creatures())

        # A slot freed by leaving can be taken.
        await alice.request("leave", encounter=eid)
        joined = await bob.join(eid, tokens["bob"])
        assert joined["player"] == "bob"
        with pytest.raises(ClientError) as refused:
            await alice.join(eid, tokens["alice"])
        assert refused.value.name == "too_many_connections"


async def test_a_closed_connection_frees_its_slot(make_server: MakeServer) -> None:
    running = await make_server(limits(max_connections_per_encounter=2))
    async with running.client() as gm, running.client() as bob:
        eid, tokens = await setup_table(running, gm)
        async with running.client() as alice:
            await alice.join(eid, tokens["alice"])
            with pytest.raises(ClientError):
                await bob.join(eid, tokens["bob"])
        room = running.server.rooms[eid]
        with trio.fail_after(WAIT):
            while len(room.members) > 1:  # the server notices the close
                await trio.sleep(0.01)
        assert (await bob.join(eid, tokens["bob"]))["player"] == "bob"


# -- idle_timeout_seconds --------------------------------------------------------------------------


async def test_a_silent_client_is_closed_for_idleness_and_a_pinging_one_is_not(
    make_server: MakeServer,
) -> None:
    running = await make_server(limits(idle_timeout_seconds=0.3))
    async with running.client() as chatty:
        assert chatty.welcome is not None
        assert chatty.welcome["limits"]["idle_timeout_seconds"] == 0.3

        async def keep_pinging() -> None:
            end = trio.current_time() + 1.0
            while trio.current_time() < end:
                assert await chatty.request("ping") == {}
                await trio.sleep(0.05)  # well within the timeout

        async with trio.open_nursery() as nursery:
            nursery.start_soon(keep_pinging)
            before_hello = trio.current_time()
            async with running.client() as silent:
                assert await closed(silent) == (4001, "idle timeout")
                assert trio.current_time() - before_hello >= 0.3
        assert not chatty.closed.is_set()
        assert await chatty.request("ping") == {}


# -- ping_interval_seconds ----------------------------------------------------------------------


async def test_a_client_that_does_not_answer_pings_is_closed_with_1011_and_one_that_does_is_kept(
    make_server: MakeServer,
) -> None:
    running = await make_server(limits(ping_interval_seconds=0.3))
    async with running.client() as answering:  # its websocket library answers pings
        mute = await RawClient.open(running.server.port)  # reads, never writes a pong
        started = trio.current_time()
        pings = 0
        close: Close | None = None
        with trio.fail_after(WAIT):
            while close is None:
                data = await mute.stream.receive_some()
                assert data, "the server dropped the connection without a close frame"
                mute.protocol.receive_data(data)
                for frame in mute.protocol.events_received():
                    assert isinstance(frame, Frame)
                    if frame.opcode is Opcode.PING:
                        pings += 1
                    elif frame.opcode is Opcode.CLOSE:
                        close = Close.parse(frame.data)
        assert pings == 1  # one ping, then the wait for its pong
        assert (close.code, close.reason) == (1011, "keepalive ping timeout")
        # at least 0.24 s of silence (0.8 x 0.3 s, see PING_SPREAD) + 0.3 s for the pong
        assert trio.current_time() - started >= 0.54
        # The answering client was pinged just as often and is still there.
        assert not answering.closed.is_set()
        assert await answering.request("ping") == {}


# -- outgoing_queue: the slow consumer ------------------------------------------------------------


def small_receive_buffer_socket() -> trio.socket.SocketType:
    """A TCP socket whose kernel receive buffer is tiny, so a non-reader fills it at once."""
    sock = trio.socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return sock


async def test_a_slow_consumer_is_dropped_and_never_delays_the_others(
    make_server: MakeServer,
) -> None:
    running = await make_server(limits(outgoing_queue=4, rate_per_second=10_000, rate_burst=10_000))
    async with running.client() as gm, running.client() as alice:
        eid, tokens = await setup_table(running, gm)
        await alice.join(eid, tokens["alice"])
        room = running.server.rooms[eid]

        # The slow client: a tiny receive buffer, and a websocket library that stops
        # reading after one queued message. It joins, then never reads.
        sock = small_receive_buffer_socket()
        await sock.connect(("127.0.0.1", running.server.port))
        async with ws_connect(
            running.url, stream=trio.SocketStream(sock), max_queue=1, compression=None
        ) as slow:
            hello = {"protocol": "1.0", "client": {"name": "slow", "version": "0"}}
            await slow.send(json.dumps({"id": 1, "method": "hello", "params": hello}))
            await slow.recv()
            join = {"encounter": eid, "token": tokens["spectator"]}
            await slow.send(json.dumps({"id": 2, "method": "join", "params": join}))
            assert json.loads(await slow.recv())["result"]["role"] == "spectator"
            (slow_member,) = [m for m in room.members if m.role == "spectator"]
            slow_session = cast(Connection, slow_member.subscriber)
            first = room.state.seq + 1

            # Large notes (about 2 KB each); the GM waits for each reply.
            text = "A long note. " * 150
            sent = 0
            with trio.fail_after(WAIT):
                while slow_session.close_code is None:
                    await gm.command(eid, "add_note", text=text)
                    sent += 1
                    assert sent < 2000, "the slow consumer was never dropped"
                # The others go on receiving everything at once.
                for _ in range(20):
                    await gm.command(eid, "add_note", text=text)
                last = room.state.seq
                for client in (gm, alice):
                    seqs: list[int] = []
                    while not seqs or seqs[-1] < last:
                        seqs.append((await client.notification("event"))["seq"])
                    assert seqs == list(range(first, last + 1))
            assert (slow_session.close_code, slow_session.close_reason) == (4000, "slow consumer")
            assert [m.role for m in room.members] == ["gm", "player"]
            # The slow connection ends (whatever the client then reads).
            with trio.fail_after(WAIT), pytest.raises(ConnectionClosed):
                while True:
                    await slow.recv()
        with trio.fail_after(WAIT):
            while slow_session in running.server.connections:
                await trio.sleep(0.01)


class RawClient:
    """A websocket client over a raw socket (websockets' sans-I/O protocol): it reads only
    when told to, so the server's writer can be caught in the middle of a frame."""

    def __init__(self, stream: trio.SocketStream, url: str) -> None:
        self.stream = stream
        self.protocol = ClientProtocol(parse_uri(url), max_size=None)

    @classmethod
    async def open(cls, port: int) -> RawClient:
        sock = small_receive_buffer_socket()
        await sock.connect(("127.0.0.1", port))
        client = cls(trio.SocketStream(sock), f"ws://127.0.0.1:{port}/ws")
        client.protocol.send_request(client.protocol.connect())
        await client.flush()
        while client.protocol.handshake_exc is None and client.protocol.state is not OPEN:
            client.protocol.receive_data(await client.stream.receive_some())
        assert client.protocol.state is OPEN
        client.protocol.events_received()
        return client

    async def flush(self) -> None:
        for data in self.protocol.data_to_send():
            if data:
                await self.stream.send_all(data)

    async def send(self, message: dict[str, Any]) -> None:
        self.protocol.send_text(json.dumps(message).encode())
        await self.flush()

    async def recv(self) -> dict[str, Any]:
        while True:
            for frame in self.protocol.events_received():
                assert isinstance(frame, Frame)
                if frame.opcode is Opcode.TEXT:
                    return cast(dict[str, Any], json.loads(bytes(frame.data)))
            self.protocol.receive_data(await self.stream.receive_some())

    async def read_to_the_end(self) -> int:
        """Read until the server closes the TCP connection; the number of text messages."""
        count = 0
        while True:
            data = await self.stream.receive_some()
            if data:
                self.protocol.receive_data(data)
            else:
                self.protocol.receive_eof()
            for frame in self.protocol.events_received():
                count += isinstance(frame, Frame) and frame.opcode is Opcode.TEXT
            await self.flush()
            if not data:
                return count


async def test_a_slow_consumer_caught_mid_frame_still_gets_close_code_4000(
    make_server: MakeServer,
) -> None:
    running = await make_server(limits(outgoing_queue=4, rate_per_second=10_000, rate_burst=10_000))
    async with running.client() as gm:
        eid, tokens = await setup_table(running, gm)
        for _ in range(300):  # a 600 KB snapshot: far more than the socket buffers hold
            await gm.command(eid, "add_note", text="n" * 1990)
        slow = await RawClient.open(running.server.port)
        hello = {"protocol": "1.0", "client": {"name": "slow", "version": "0"}}
        await slow.send({"id": 1, "method": "hello", "params": hello})
        assert (await slow.recv())["id"] == 1
        await slow.send(
            {"id": 2, "method": "join", "params": {"encounter": eid, "token": tokens["spectator"]}}
        )
        room = running.server.rooms[eid]
        with trio.fail_after(WAIT):
            while not any(m.role == "spectator" for m in room.members):
                await trio.sleep(0.01)
            while any(m.role == "spectator" for m in room.members):
                await gm.command(eid, "add_note", text="overflow")
        with trio.fail_after(WAIT):
            await slow.read_to_the_end()
        close = slow.protocol.close_rcvd
        assert close is not None, "no close frame reached the slow client"
        assert (close.code, close.reason) == (4000, "slow consumer")


# -- shutdown and /healthz -----------------------------------------------------------------------


class Marker:
    """A plugin with a GM command ``mark`` that adds a note and signals the first call."""

    def __init__(self) -> None:
        self.first = trio.Event()

    @hookimpl
    def zonekeep_commands(self) -> Iterable[CommandSpec]:
        return (
            CommandSpec(
                "mark",
                self._mark,
                "Test: add a note and signal.",
                {"text": Param("string", True, "the note")},
                who="gm",
                phases=("surprise", "positions", "initiative", "turns", "ended"),
            ),
        )

    def _mark(self, ctx: RuleContext, cmd: Command) -> None:
        ctx.emit(NoteAdded(Note(f"m{len(ctx.state.notes) + 1}", cmd.params["text"], False)))
        self.first.set()


async def test_shutdown_sends_closing_then_closes_every_connection_with_1001(
    make_server: MakeServer,
) -> None:
    running = await make_server()
    async with running.client() as gm, running.client() as alice, running.client() as idle:
        eid, tokens = await setup_table(running, gm)
        await alice.join(eid, tokens["alice"])
        await gm.command(eid, "set_surprise", surprised=[])
        with trio.fail_after(WAIT):
            await gm.notification("event")
            await alice.notification("event")
            await running.server.shutdown()
        for client in (gm, alice, idle):
            assert (await closed(client))[0] == 1001
            notes = client.pending_notifications()
            assert [n["method"] for n in notes] == ["closing"]
            assert notes[0]["params"]["reason"]
        assert not running.server.connections


async def test_shutdown_answers_every_command_it_applied_and_always_says_closing(
    make_server: MakeServer,
) -> None:
    marker = Marker()
    running = await make_server(engine=Engine([*load_default_plugins(), marker]))
    async with running.client() as gm, running.client() as alice:
        eid, tokens = await setup_table(running, gm)
        await alice.join(eid, tokens["alice"])
        room = running.server.rooms[eid]
        # Pipeline commands; shut down while the first one is being handled.
        for i in range(10):
            request = {
                "id": f"c{i}",
                "method": "command",
                "params": {"encounter": eid, "type": "mark", "params": {"text": f"note {i}"}},
            }
            await gm.send_raw(json.dumps(request))
        with trio.fail_after(WAIT):
            await marker.first.wait()
            await running.server.shutdown()

        for client in (gm, alice):
            assert (await closed(client))[0] == 1001
        gm_notes = gm.pending_notifications()
        alice_notes = alice.pending_notifications()
        for notes in (gm_notes, alice_notes):
            assert [n["method"] for n in notes].count("closing") == 1

        # The in-flight command completed, and every command applied was answered.
        replies = [n["params"] for n in gm_notes if n["method"] == "_unmatched"]
        assert replies, "the in-flight command got no reply"
        assert [r["id"] for r in replies] == [f"c{i}" for i in range(len(replies))]
        assert all("result" in r for r in replies), replies
        assert replies[-1]["result"]["last_seq"] == room.state.seq


async def test_shutdown_close_reason_is_going_away(make_server: MakeServer) -> None:
    running = await make_server()
    async with running.client() as client:
        with trio.fail_after(WAIT):
            await running.server.shutdown()
        assert await closed(client) == (1001, "going away")


async def http_get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP/1.1 GET over a raw TCP stream: status, headers, body."""
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
            )
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some()
                assert chunk, f"connection closed before the headers: {data!r}"
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            headers = {
                k.strip().lower(): v.strip()
                for k, v in (line.split(":", 1) for line in header_lines)
            }
            length = int(headers.get("content-length", "0"))
            while len(body) < length:
                chunk = await stream.receive_some()
                assert chunk, "connection closed before the body"
                body += chunk
    return int(status_line.split()[1]), headers, body


async def test_healthz_answers_plain_http(make_server: MakeServer) -> None:
    running = await make_server()
    status, headers, body = await http_get(running.server.port, "/healthz")
    assert status == 200
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body) == {"status": "ok", "encounters": 0, "connections": 0}

    async with running.client() as gm, running.client():
        await gm.create_encounter("Health", "tavern", creatures())
        status, _, body = await http_get(running.server.port, "/healthz")
        assert status == 200
        assert json.loads(body) == {"status": "ok", "encounters": 1, "connections": 2}

    status, _, _ = await http_get(running.server.port, "/elsewhere")
    assert status == 426  # a plain GET where a websocket handshake was expected

    # Something that is not HTTP at all gets no answer: the connection just ends.
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", running.server.port)
        async with stream:
            await stream.send_all(b"NOT HTTP\r\n\r\n")
            data = b""
            while chunk := await stream.receive_some():
                data += chunk
    assert data == b""


# -- one encounter crashing ---------------------------------------------------------------------


class Crasher:
    """A plugin whose ``explode`` command raises in the encounter named "A"."""

    @hookimpl
    def zonekeep_commands(self) -> Iterable[CommandSpec]:
        return (
            CommandSpec(
                "explode",
                self._explode,
                "Test: crash in encounter A, add a note elsewhere.",
                who="gm",
                phases=("surprise", "positions", "initiative", "turns"),
            ),
        )

    def _explode(self, ctx: RuleContext, cmd: Command) -> None:
        if ctx.state.name == "A":
            raise RuntimeError("the plugin blew up")
        ctx.emit(NoteAdded(Note("boom", "it worked here", False)))


async def test_a_crash_in_one_encounter_leaves_the_others_working(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=Engine([*load_default_plugins(), Crasher()]))
    async with (
        running.client() as gm_a,
        running.client() as gm_b,
        running.client() as alice,
    ):
        eid_a, tokens = await setup_table(running, gm_a, name="A")
        await alice.join(eid_a, tokens["alice"])
        eid_b = (await gm_b.create_encounter("B", "tavern", creatures()))["encounter"]
        before = await gm_a.request("snapshot", encounter=eid_a)

        with pytest.raises(ClientError) as crashed:
            await gm_a.command(eid_a, "explode")
        # SPEC: the sender gets encounter_crashed (or plugin_error), the GM encounter_error.
        assert (crashed.value.code, crashed.value.name) in {
            (6001, "encounter_crashed"),
            (6002, "plugin_error"),
        }
        with trio.fail_after(WAIT):
            error = await gm_a.notification("encounter_error")
        assert error["encounter"] == eid_a and error["message"]
        assert await gm_a.request("snapshot", encounter=eid_a) == before

        # B is unaffected: the same command works there, and so does play.
        result = await gm_b.command(eid_b, "explode")
        assert result == {"first_seq": 2, "last_seq": 2}
        await gm_b.command(eid_b, "set_surprise", surprised=[])
        snap_b = await gm_b.request("snapshot", encounter=eid_b)
        assert note_texts(snap_b["snapshot"]) == ["it worked here"]
        assert snap_b["seq"] == 3

        # A itself goes on after the refused command.
        result = await gm_a.command(eid_a, "set_surprise", surprised=[])
        assert result["first_seq"] == before["seq"] + 1

        # Only A's GM heard about the crash.
        for client in (gm_b, alice):
            assert all(n["method"] != "encounter_error" for n in client.pending_notifications())
        assert all(n["method"] != "encounter_error" for n in gm_a.pending_notifications())
