"""``zonekeep proxy``: a websocket proxy between a client and a server that, with
``--check``, reports every message the client sends that breaks the schemas or the
protocol (``zonekeep.protocol.conformance``; docs/clients.md), and can record the
session; with ``--play``, a fake server that plays a recorded session back.

Each client connection gets a connection of its own to the upstream server; frames go
through unchanged, both ways, and a close is passed on with its code and reason.

A recorded session is JSON Lines, one entry per frame or close, in the order the proxy
saw them: ``{"connection": 1, "from": "client", "message": {...}}``, ``{"connection":
1, "from": "server", "message": {...}}``, ``{"connection": 1, "close": 1000, "by":
"client"}``. Connections are numbered from 1 in the order they opened.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

import trio
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.trio.client import ClientConnection
from websockets.trio.client import connect as ws_connect
from websockets.trio.server import ServerConnection, serve

from zonekeep.protocol.conformance import Checker, Problem

log = logging.getLogger("zonekeep.proxy")

#: The largest frame passed on (the server's own limits apply behind the proxy).
MAX_FRAME = 16 * 2**20


async def _listen(
    handler: Callable[[ServerConnection], Any],
    host: str,
    port: int,
    task_status: trio.TaskStatus[int],
) -> None:
    """Serve websockets with ``handler`` on ``host:port`` (0: a free port) until
    cancelled; reports the port it listens on."""
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            functools.partial(serve, handler, port, host=host, compression=None, max_size=MAX_FRAME)
        )
        task_status.started(server.listeners[0].socket.getsockname()[1])


def _data(frame: str | bytes) -> Any:
    """A frame as recorded: its JSON data, else its text."""
    text = frame.decode("utf-8", "replace") if isinstance(frame, bytes) else frame
    try:
        return json.loads(text)
    except ValueError:
        return text


def _passed_on(code: int | None, reason: str | None) -> tuple[int, str]:
    """The close to pass on: the same code and reason, but for the codes a close frame
    may not carry (1005: none given, 1006: no close frame), which become 1000."""
    if code is None or code in (1005, 1006, 1015):
        return 1000, ""
    return code, reason or ""


class Proxy:
    """A checking proxy to ``upstream`` (a ``ws://`` or ``wss://`` URL)."""

    def __init__(
        self,
        upstream: str,
        report: Callable[[Problem], None] | None = None,
        record: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.upstream = upstream
        self.checker = Checker()
        self.report = report
        #: Called with each entry of the session (see the module's docstring).
        self.record = record
        self._ids = itertools.count(1)
        self._closed: set[int] = set()

    def _reported(self, before: int) -> None:
        if self.report is not None:
            for problem in self.checker.problems[before:]:
                self.report(problem)

    def _recorded(self, number: int, side: str, frame: str | bytes) -> None:
        if self.record is not None:
            self.record({"connection": number, "from": side, "message": _data(frame)})

    def _recorded_close(self, number: int, side: str, code: int | None) -> None:
        if self.record is not None and number not in self._closed:
            self._closed.add(number)
            self.record({"connection": number, "close": _passed_on(code, None)[0], "by": side})

    async def handle(self, client: ServerConnection) -> None:
        number = next(self._ids)
        self.checker.opened(number)
        try:
            async with ws_connect(self.upstream, compression=None, max_size=MAX_FRAME) as server:
                await self._relay(number, client, server)
        except (OSError, InvalidHandshake, trio.TooSlowError) as exc:
            log.warning("connection %d: the upstream server is not reachable: %s", number, exc)
            await client.aclose(1011, "upstream unreachable")

    async def _relay(self, number: int, client: ServerConnection, server: ClientConnection) -> None:
        """Pass frames both ways until one side closes; then close the other alike."""
        async with trio.open_nursery() as nursery:

            async def upward() -> None:
                try:
                    async for frame in client:
                        before = len(self.checker.problems)
                        self.checker.client_sent(number, frame, trio.current_time())
                        self._reported(before)
                        self._recorded(number, "client", frame)
                        await server.send(frame)
                except ConnectionClosed:
                    pass
                self._recorded_close(number, "client", client.close_code)
                await server.aclose(*_passed_on(client.close_code, client.close_reason))
                nursery.cancel_scope.cancel()

            async def downward() -> None:
                try:
                    async for frame in server:
                        self.checker.server_sent(number, frame, trio.current_time())
                        self._recorded(number, "server", frame)
                        await client.send(frame)
                except ConnectionClosed:
                    pass
                self._recorded_close(number, "server", server.close_code)
                await client.aclose(*_passed_on(server.close_code, server.close_reason))
                nursery.cancel_scope.cancel()

            nursery.start_soon(upward)
            nursery.start_soon(downward)

    async def run(
        self, host: str, port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen on ``host:port`` (0: a free port) until cancelled; reports the port."""
        await _listen(self.handle, host, port, task_status)


def read_session(text: str) -> list[dict[str, Any]]:
    """A recorded session's entries (JSON Lines)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class SessionPlayer:
    """A fake server that plays a recorded session back (``zonekeep proxy --play``).

    The n-th connection a client opens plays the session's connection n. Each server
    message goes out, on its connection, once every message the client sent before it
    in the recording (on any of its connections) has come: what the client saw when it
    sent each request is what it sees again. A reply carries the id of the client's
    request it answers. The client's frames must be the recorded ones, in order on each
    connection (method and params; the ids may differ): a frame that is not is reported
    (``script``) and the connection closed with 1008.
    """

    def __init__(
        self, entries: Sequence[dict[str, Any]], report: Callable[[Problem], None] | None = None
    ) -> None:
        self.entries = list(entries)
        self.report = report
        self.problems: list[Problem] = []
        self._ids = itertools.count(1)
        #: One event per entry the client sent, set when it came.
        self._came = {
            i: trio.Event() for i, e in enumerate(self.entries) if e.get("from") == "client"
        }
        #: Per server entry: the last client entry of each connection before it.
        self._after: dict[int, list[int]] = {}
        last: dict[Any, int] = {}
        for i, entry in enumerate(self.entries):
            if entry.get("from") == "client":
                last[entry.get("connection")] = i
            elif entry.get("from") == "server":
                self._after[i] = list(last.values())
        #: Recorded request id -> the client's, per connection.
        self._request_ids: dict[int, dict[Any, Any]] = {}

    def _problem(self, number: int, message: str, frame: str) -> None:
        problem = Problem("script", message, number, frame)
        self.problems.append(problem)
        if self.report is not None:
            self.report(problem)

    async def _read(self, number: int, client: ServerConnection, cancel: trio.CancelScope) -> None:
        """Take the client's frames on connection ``number``, checking each against the
        recording; then wait for the client to close."""
        ids = self._request_ids.setdefault(number, {})
        for index, entry in enumerate(self.entries):
            if entry.get("connection") != number or entry.get("from") != "client":
                continue
            message = entry.get("message")
            try:
                frame = await client.recv()
            except ConnectionClosed:
                cancel.cancel()
                return
            got = _data(frame)
            same = got == message
            if isinstance(message, dict) and isinstance(got, dict):
                same = (got.get("method"), got.get("params", {})) == (
                    message.get("method"),
                    message.get("params", {}),
                )
                if same:
                    ids[message.get("id")] = got.get("id")
            if not same:
                text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
                self._problem(
                    number, f"expected {json.dumps(message)[:200]}, got {text[:200]}", text
                )
                await client.aclose(1008, "not the recorded session")
                cancel.cancel()
                return
            self._came[index].set()
        with contextlib.suppress(ConnectionClosed):  # the script is done: the client closes
            while True:
                await client.recv()

    async def handle(self, client: ServerConnection) -> None:
        number = next(self._ids)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._read, number, client, nursery.cancel_scope)
            ids = self._request_ids.setdefault(number, {})
            for index, entry in enumerate(self.entries):
                if entry.get("connection") != number:
                    continue
                if "close" in entry and entry.get("by") == "server":
                    await client.aclose(*_passed_on(entry["close"], "as recorded"))
                    nursery.cancel_scope.cancel()
                    return
                if entry.get("from") != "server":
                    continue
                for before in self._after[index]:
                    await self._came[before].wait()
                message = entry.get("message")
                if isinstance(message, dict) and message.get("id") in ids:
                    message = {**message, "id": ids[message["id"]]}
                await client.send(message if isinstance(message, str) else json.dumps(message))

    async def run(
        self, host: str, port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen on ``host:port`` (0: a free port) until cancelled; reports the port."""
        await _listen(self.handle, host, port, task_status)
