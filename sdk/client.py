"""A Python client for the zonekeep protocol (trio), used by the end-to-end tests.

::

    async with connect("ws://127.0.0.1:8765/ws") as client:
        created = await client.create_encounter("Ambush", "tavern", creatures)
        await client.command(created["encounter"], "set_surprise", surprised=[])
        note = await client.notification("event")

Requests get exactly one reply; :class:`ClientError` carries an error reply's
``code``, ``name`` and ``message``. Notifications (events, prompts, snapshots)
queue up in order and are read with :meth:`ZonekeepClient.notification`.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio
from websockets.exceptions import ConnectionClosed
from websockets.trio.client import ClientConnection
from websockets.trio.client import connect as ws_connect

__all__ = ["MESSAGE_HOOKS", "ClientError", "ZonekeepClient", "connect"]

#: Callables run on every message any client receives (the test suite validates them).
MESSAGE_HOOKS: list[Callable[[dict[str, Any], str | None], None]] = []


class ClientError(Exception):
    """An error reply from the server."""

    def __init__(self, code: int, name: str, message: str) -> None:
        super().__init__(f"{code} {name}: {message}")
        self.code = code
        self.name = name
        self.message = message


class ZonekeepClient:
    """One connection to a zonekeep server."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[Any, trio.MemorySendChannel[dict[str, Any]]] = {}
        self._methods: dict[Any, str] = {}
        self._note_send, self._notes = trio.open_memory_channel[dict[str, Any]](math.inf)
        self.closed = trio.Event()
        self.welcome: dict[str, Any] | None = None

    async def _reader(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                rid = message.get("id")
                method = self._methods.pop(rid, None) if "id" in message else None
                for hook in MESSAGE_HOOKS:
                    hook(message, method)
                if "id" in message and rid in self._waiting:
                    self._waiting.pop(rid).send_nowait(message)
                elif "method" in message:
                    self._note_send.send_nowait(message)
                else:
                    self._note_send.send_nowait({"method": "_unmatched", "params": message})
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            self._note_send.close()

    async def send_raw(self, text: str | bytes) -> None:
        """Send a frame as is (for testing how the server handles bad input)."""
        await self.ws.send(text)

    async def request(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a request and wait for its reply; raise :class:`ClientError` on an error."""
        rid = next(self._ids)
        send, recv = trio.open_memory_channel[dict[str, Any]](1)
        self._waiting[rid] = send
        self._methods[rid] = method
        await self.ws.send(json.dumps({"id": rid, "method": method, "params": params}))
        reply = await recv.receive()
        if "error" in reply:
            err = reply["error"]
            raise ClientError(err["code"], err["name"], err["message"])
        result: dict[str, Any] = reply["result"]
        return result

    async def notification(self, method: str | None = None) -> dict[str, Any]:
        """The next notification (of ``method``, skipping others); its ``params``."""
        while True:
            message = await self._notes.receive()
            if method is None or message["method"] == method:
                params: dict[str, Any] = message["params"]
                return params

    def pending_notifications(self) -> list[dict[str, Any]]:
        """Every notification already received and not yet read, without waiting."""
        found = []
        while True:
            try:
                found.append(self._notes.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                return found

    # -- the protocol's methods ------------------------------------------------------------

    async def hello(
        self, name: str = "zonekeep-python", version: str = "0.1.0", protocol: str = "1.1"
    ) -> dict[str, Any]:
        self.welcome = await self.request(
            "hello", protocol=protocol, client={"name": name, "version": version}
        )
        return self.welcome

    async def create_encounter(
        self, name: str, arena: str | dict[str, Any], creatures: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        return await self.request(
            "create_encounter", name=name, arena=arena, creatures=creatures, **extra
        )

    async def join(self, encounter: str, token: str, last_seq: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"encounter": encounter, "token": token}
        if last_seq is not None:
            params["last_seq"] = last_seq
        return await self.request("join", **params)

    async def command(self, encounter: str, type: str, **params: Any) -> dict[str, Any]:
        return await self.request("command", encounter=encounter, type=type, params=params)


@asynccontextmanager
async def connect(
    url: str, *, hello: bool = True, name: str = "zonekeep-python", **ws_options: Any
) -> AsyncIterator[ZonekeepClient]:
    """Connect (and say hello unless ``hello=False``); close on exit."""
    async with (
        ws_connect(url, compression=None, **ws_options) as ws,
        trio.open_nursery() as nursery,
    ):
        client = ZonekeepClient(ws)
        nursery.start_soon(client._reader)
        if hello:
            await client.hello(name)
        try:
            yield client
        finally:
            nursery.cancel_scope.cancel()
