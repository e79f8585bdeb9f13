"""``zonekeep proxy``: a websocket proxy between a client and a server that, with
``--check``, reports every message the client sends that breaks the schemas or the
protocol (``zonekeep.protocol.conformance``; docs/clients.md).

Each client connection gets a connection of its own to the upstream server; frames go
through unchanged, both ways, and a close is passed on with its code and reason.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable

import trio
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.trio.client import ClientConnection
from websockets.trio.client import connect as ws_connect
from websockets.trio.server import ServerConnection, serve

from zonekeep.protocol.conformance import Checker, Problem

log = logging.getLogger("zonekeep.proxy")

#: The largest frame passed on (the server's own limits apply behind the proxy).
MAX_FRAME = 16 * 2**20


def _passed_on(code: int | None, reason: str | None) -> tuple[int, str]:
    """The close to pass on: the same code and reason, but for the codes a close frame
    may not carry (1005: none given, 1006: no close frame), which become 1000."""
    if code is None or code in (1005, 1006, 1015):
        return 1000, ""
    return code, reason or ""


class Proxy:
    """A checking proxy to ``upstream`` (a ``ws://`` or ``wss://`` URL)."""

    def __init__(self, upstream: str, report: Callable[[Problem], None] | None = None) -> None:
        self.upstream = upstream
        self.checker = Checker()
        self.report = report
        self.port: int | None = None
        self._ids = itertools.count(1)

    def _reported(self, before: int) -> None:
        if self.report is not None:
            for problem in self.checker.problems[before:]:
                self.report(problem)

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
                        await server.send(frame)
                except ConnectionClosed:
                    pass
                await server.aclose(*_passed_on(client.close_code, client.close_reason))
                nursery.cancel_scope.cancel()

            async def downward() -> None:
                try:
                    async for frame in server:
                        self.checker.server_sent(number, frame, trio.current_time())
                        await client.send(frame)
                except ConnectionClosed:
                    pass
                await client.aclose(*_passed_on(server.close_code, server.close_reason))
                nursery.cancel_scope.cancel()

            nursery.start_soon(upward)
            nursery.start_soon(downward)

    async def run(
        self, host: str, port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen on ``host:port`` (0: a free port) until cancelled; reports the port."""
        async with trio.open_nursery() as nursery:
            server = await nursery.start(
                functools.partial(
                    serve, self.handle, port, host=host, compression=None, max_size=MAX_FRAME
                )
            )
            self.port = server.listeners[0].socket.getsockname()[1]
            task_status.started(self.port)
