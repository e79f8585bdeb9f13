"""An in-memory transport for protocol tests: the server's method table and registry,
and the real Python client, with no socket between them.

As httpx's ``MockTransport`` swaps the network for a function, :class:`MemoryWebsocket`
swaps the websocket: the client (``zonekeep.protocol.client.ZonekeepClient``, unchanged)
sends its frames to a server-side :class:`~zonekeep.server._methods.Client`, which
handles them one at a time, in order, as a connection does; what the server pushes to
it (replies, notifications, a close) is what the client reads. Everything above the
transport is the real server: :class:`~zonekeep.server.ZonekeepServer`'s registry,
method table, welcome and store, started as ``run`` starts them, minus the listener.

A :class:`Memory` has the interface of the end-to-end tests' ``Running``
(``server``, ``client(**kw)``), so a protocol test moves between the two by its
fixture alone: the ``running`` and ``make_server`` fixtures of ``tests/conftest.py``
are in memory; those of ``tests/e2e/conftest.py`` are real servers on loopback ports.
What only a socket shows (the websocket handshake, frames, keepalive, a slow reader,
HTTP, Origin checks, several nodes) stays in tests/e2e.

Every message the server sends is checked against the protocol's JSON Schemas.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, cast

import trio
from e2e_support import Running, ServerConfig, server_for
from websockets.exceptions import ConnectionClosed
from websockets.frames import Close

from zonekeep.protocol import validate_server_message
from zonekeep.protocol.client import ZonekeepClient
from zonekeep.server import ZonekeepServer
from zonekeep.server._methods import Client
from zonekeep.server._metrics import bind, unbind

#: The websocket close code a client sees when it closes (or the server stops).
NORMAL_CLOSURE = 1000


class MemoryWebsocket:
    """Both ends of one in-memory connection.

    The server's side is a :class:`~zonekeep.server._fanout.Subscriber`
    (``push_text``, ``close``); the client's side is the part of a websockets
    ``ClientConnection`` the client uses (``send``, ``async for``, ``aclose``,
    ``close_code``, ``close_reason``).
    """

    def __init__(self) -> None:
        self._in_send, self._in = trio.open_memory_channel[str | bytes](math.inf)
        self._out_send, self._out = trio.open_memory_channel[str](math.inf)
        self.close_code: int | None = None
        self.close_reason: str | None = None
        #: Called once when either side closes (the server client's ``leave_all``).
        self.on_close: Any = lambda: None
        #: Every message the server sent, parsed, in order.
        self.sent: list[dict[str, Any]] = []

    # -- the server's side ------------------------------------------------------------------

    def push_text(self, text: str) -> None:
        if self.close_code is not None:
            return
        message = json.loads(text)
        validate_server_message(message)
        self.sent.append(message)
        self._out_send.send_nowait(text)

    def close(self, code: int, reason: str) -> None:
        if self.close_code is not None:
            return
        self.close_code, self.close_reason = code, reason
        self._in_send.close()
        self._out_send.close()
        self.on_close()

    async def serve(self, client: Client) -> None:
        """Hand the client's frames to ``client``, one at a time, until either side closes."""
        async for raw in self._in:
            if self.close_code is not None:
                break
            await client.handle(raw)
        self.close(NORMAL_CLOSURE, "")

    # -- the client's side ------------------------------------------------------------------

    async def send(self, text: str | bytes) -> None:
        if self.close_code is not None:
            raise ConnectionClosed(Close(self.close_code, self.close_reason or ""), None)
        self._in_send.send_nowait(text)
        await trio.lowlevel.checkpoint()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._out.__aiter__()

    async def aclose(self) -> None:
        self.close(NORMAL_CLOSURE, "")
        await trio.lowlevel.checkpoint()


class Memory(Running):
    """A server without a listener, and a way to open in-memory clients to it (a
    ``Running`` whose clients need no socket)."""

    def __init__(self, server: ZonekeepServer, nursery: trio.Nursery) -> None:
        super().__init__(server)
        self._nursery = nursery
        #: Every in-memory connection opened, in order.
        self.connections: list[MemoryWebsocket] = []

    @property
    def url(self) -> str:
        return "memory://"

    def client(
        self, *, address: str = "127.0.0.1", **kw: Any
    ) -> AbstractAsyncContextManager[ZonekeepClient]:
        """A client connected from ``address`` (loopback unless told otherwise);
        ``hello``, ``name``, ``gm_key`` and ``timeout`` as ``protocol.client.connect``."""
        return self._connect(address=address, **kw)

    @asynccontextmanager
    async def _connect(
        self,
        *,
        address: str,
        hello: bool = True,
        name: str = "zonekeep-python",
        gm_key: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[ZonekeepClient]:
        ws = MemoryWebsocket()
        self.connections.append(ws)
        handler = Client(self.server.methods, ws, self.server.config.limits, address)
        ws.on_close = handler.leave_all
        self._nursery.start_soon(ws.serve, handler)
        client = ZonekeepClient(cast(Any, ws), timeout=timeout, url="memory://")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client._reader)
            client._nursery = nursery
            if hello:
                await client.hello(name, gm_key=gm_key)
            try:
                yield client
            finally:
                client._leaving = True
                await ws.aclose()
                nursery.cancel_scope.cancel()


async def _serve(server: ZonekeepServer, *, task_status: trio.TaskStatus[None]) -> None:
    """What ``ZonekeepServer.run`` does, without the listener and the nodes."""
    bound = bind(server.metrics)
    await server.open_store()
    try:
        async with trio.open_nursery() as nursery:
            server.registry.nursery = nursery
            await server.registry.start()
            server.ready = True
            task_status.started()
            await trio.sleep_forever()
    finally:
        server.ready = False
        unbind(bound)
        if server._owns_store:
            with trio.CancelScope(shield=True):
                await server.store.aclose()


async def start_memory_server(
    nursery: trio.Nursery,
    data_dir: Path,
    config: ServerConfig | None = None,
    *,
    sqlite: bool = False,
    **kw: Any,
) -> Memory:
    """A server under ``nursery`` with the store ``start_server`` would give it (SQLite in
    ``data_dir`` by default), served over the in-memory transport."""
    server = server_for(data_dir, config, sqlite=sqlite, **kw)
    await nursery.start(_serve, server)
    return Memory(server, nursery)
