"""The Python client (``zonekeep.protocol.client``) never waits forever for a reply.

Each test starts a tiny fake server on a loopback port (websockets over trio, as the
client uses) whose handler plays one script: answer with an id-less error, answer out
of the usual way, close, or never answer. Every wait is bounded by ``trio.fail_after``;
where time matters the clock is trio's ``MockClock``, so a 5-second timeout takes no
real time and ends exactly 5 seconds later.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import helpers
import pytest
import trio
import trio.testing
from websockets.trio.server import Server, ServerConnection, serve

from zonekeep.protocol.client import (
    ClientError,
    ConnectionLost,
    RequestTimeout,
    ZonekeepClient,
    connect,
)

# seconds (real clock): the bound on every wait for something that must happen
WAIT = helpers.deadline(5)
Handler = Callable[[ServerConnection], Awaitable[None]]

RATE_LIMITED = {
    "id": None,
    "error": {"code": 5001, "name": "rate_limited", "message": "Too many messages."},
}
PARSE_ERROR = {
    "id": None,
    "error": {"code": 1000, "name": "parse_error", "message": "Not JSON."},
}


@asynccontextmanager
async def fake_server(handler: Handler) -> AsyncIterator[str]:
    """Serve ``handler`` on a free loopback port for the block; the URL to connect to."""
    async with trio.open_nursery() as nursery:
        server: Server = await nursery.start(
            partial(serve, handler, 0, host="127.0.0.1", compression=None)
        )
        port = server.listeners[0].socket.getsockname()[1]
        try:
            yield f"ws://127.0.0.1:{port}/ws"
        finally:
            nursery.cancel_scope.cancel()


async def read(ws: ServerConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await ws.recv())
    return message


async def send(ws: ServerConnection, message: dict[str, Any]) -> None:
    await ws.send(json.dumps(message))


class Outcome:
    """What one request ended with, recorded by a task of its own."""

    def __init__(self) -> None:
        self.done = trio.Event()
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None

    async def run(self, client: ZonekeepClient, method: str, **kw: Any) -> None:
        try:
            self.result = await client.request(method, **kw)
        except (ClientError, ConnectionLost, RequestTimeout) as exc:
            self.error = exc
        finally:
            self.done.set()


# -- error replies without an id ------------------------------------------------------------------


async def test_an_id_less_error_fails_the_oldest_request_and_the_next_is_still_answered() -> None:
    got_first = trio.Event()

    async def handler(ws: ServerConnection) -> None:
        await read(ws)
        got_first.set()
        second = await read(ws)
        # In order: the first frame was rate limited (its id unread), the second answered.
        await send(ws, RATE_LIMITED)
        await send(ws, {"id": second["id"], "result": {"seq": 2}})
        await ws.wait_closed()

    first, second = Outcome(), Outcome()
    with trio.fail_after(WAIT):
        async with fake_server(handler) as url, connect(url, hello=False) as client:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(first.run, client, "snapshot")
                await got_first.wait()  # so the first request surely went out first
                nursery.start_soon(second.run, client, "snapshot")
            assert client.pending_notifications() == []
    assert isinstance(first.error, ClientError)
    assert (first.error.code, first.error.name) == (5001, "rate_limited")
    assert first.result is None
    assert second.error is None
    assert second.result == {"seq": 2}


async def test_an_id_less_reply_to_a_raw_frame_is_a_notification_not_a_request_failure() -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.recv()  # the raw frame
        request = await read(ws)
        await send(ws, PARSE_ERROR)
        await send(ws, {"id": request["id"], "result": {}})
        await ws.wait_closed()

    with trio.fail_after(WAIT):
        async with fake_server(handler) as url, connect(url, hello=False) as client:
            await client.send_raw("not json")
            assert await client.request("ping") == {}
            assert await client.notification("_unmatched") == PARSE_ERROR


async def test_an_id_less_error_with_nothing_sent_is_a_notification() -> None:
    async def handler(ws: ServerConnection) -> None:
        await send(ws, PARSE_ERROR)
        await ws.wait_closed()

    with trio.fail_after(WAIT):
        async with fake_server(handler) as url, connect(url, hello=False) as client:
            assert await client.notification() == PARSE_ERROR


# -- a closed connection --------------------------------------------------------------------------


async def test_a_close_fails_every_waiting_request_with_the_close_code_and_reason() -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.recv()
        await ws.aclose(1008, "rate limit abuse")

    outcomes = [Outcome(), Outcome()]
    with trio.fail_after(WAIT):
        async with fake_server(handler) as url, connect(url, hello=False) as client:
            async with trio.open_nursery() as nursery:
                for outcome in outcomes:
                    nursery.start_soon(outcome.run, client, "ping")
            await client.closed.wait()
            with pytest.raises(ConnectionLost) as later:
                await client.request("ping")
            with pytest.raises(ConnectionLost):
                await client.send_raw("{}")
    errors = [o.error for o in outcomes]
    assert all(isinstance(e, ConnectionLost) for e in errors), errors
    for lost in [*errors, later.value]:
        assert isinstance(lost, ConnectionLost)
        assert (lost.method, lost.code, lost.reason) == ("ping", 1008, "rate limit abuse")
    assert str(later.value) == (
        "the connection closed (close code 1008 'rate limit abuse') before 'ping' was answered"
    )


async def test_a_dropped_connection_fails_the_waiting_request() -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.stream.aclose()  # the TCP connection ends without a close frame

    with trio.fail_after(WAIT):
        async with fake_server(handler) as url, connect(url, hello=False) as client:
            with pytest.raises(ConnectionLost) as lost:
                await client.request("ping")
    assert lost.value.code == 1006  # abnormal closure: no close frame came


# -- timeouts -------------------------------------------------------------------------------------


@pytest.fixture
def clock(mock_clock: trio.testing.MockClock) -> trio.testing.MockClock:
    """Trio's mock clock, jumping to the next deadline once every task has waited 50 ms
    of real time (loopback frames arrive well before that)."""
    mock_clock.autojump_threshold = 0.05
    return mock_clock


async def test_a_request_times_out_exactly_and_its_late_reply_is_dropped(
    clock: trio.testing.MockClock,
) -> None:
    answer_late = trio.Event()

    async def handler(ws: ServerConnection) -> None:
        first = await read(ws)
        await answer_late.wait()
        await send(ws, {"id": first["id"], "result": {"late": True}})
        second = await read(ws)
        await send(ws, {"id": second["id"], "result": {"on_time": True}})
        await ws.wait_closed()

    with trio.fail_after(helpers.deadline(60)):
        async with fake_server(handler) as url, connect(url, hello=False) as client:
            start = trio.current_time()
            with pytest.raises(RequestTimeout) as timed_out:
                await client.request("snapshot", timeout=5, encounter="e1")
            assert trio.current_time() - start == pytest.approx(5)
            answer_late.set()
            assert await client.request("snapshot", encounter="e1") == {"on_time": True}
            assert client.pending_notifications() == []  # the late reply was dropped
    assert (timed_out.value.method, timed_out.value.request_id) == ("snapshot", 1)
    assert str(timed_out.value) == "no reply to 'snapshot' (id 1) within 5 s"
    assert isinstance(timed_out.value, trio.TooSlowError)


async def test_the_clients_timeout_applies_to_every_request_unless_one_says_otherwise(
    clock: trio.testing.MockClock,
) -> None:
    async def handler(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.recv()
        await ws.wait_closed()  # never answers

    with trio.fail_after(helpers.deadline(60)):
        async with fake_server(handler) as url, connect(url, hello=False, timeout=3) as client:
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                await client.request("ping")
            assert trio.current_time() - start == pytest.approx(3)
            start = trio.current_time()
            with pytest.raises(RequestTimeout):
                await client.request("ping", timeout=7)
            assert trio.current_time() - start == pytest.approx(7)


async def test_no_timeout_waits_until_the_reply(clock: trio.testing.MockClock) -> None:
    answer = trio.Event()

    async def handler(ws: ServerConnection) -> None:
        request = await read(ws)
        await answer.wait()
        await send(ws, {"id": request["id"], "result": {}})
        await ws.wait_closed()

    async def answer_a_minute_later() -> None:
        await trio.sleep(60)
        answer.set()

    with trio.fail_after(helpers.deadline(120)):
        async with (
            fake_server(handler) as url,
            connect(url, hello=False, timeout=3) as client,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(answer_a_minute_later)
            start = trio.current_time()
            assert await client.request("ping", timeout=math.inf) == {}
            assert trio.current_time() - start == pytest.approx(60)
