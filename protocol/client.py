"""A Python client for the zonekeep protocol (trio and websockets).

::

    async with connect("ws://127.0.0.1:8765/ws", timeout=10) as client:
        created = await client.create_encounter("Ambush", "tavern", creatures)
        await client.command(created["encounter"], "set_surprise", surprised=[])
        note = await client.notification("event")

What a request can end with, and why it never waits forever:

- **A result**: :meth:`ZonekeepClient.request` returns the reply's ``result``.
- **An error reply**: it raises :class:`ClientError` (``code``, ``name``, ``message``).
- **An error reply without an id.** The server sends ``"id": null`` when it could not
  read a frame's id (the frame was not JSON or was too large). SPEC.md
  answers every request with exactly one response and handles one connection's requests
  one at a time, in the order they arrived ("Order"). So replies come back in the order
  the frames went out, and an id-less reply answers the *oldest frame still unanswered*:
  the client keeps every frame it sent (requests and :meth:`~ZonekeepClient.send_raw`
  frames alike) in that order and gives the id-less reply to the oldest one. When that
  is a request, the request fails with :class:`ClientError` (``rate_limited``,
  ``message_too_large`` ...); the requests sent after it are still answered by the
  server, so they keep waiting (failing them all would throw away answers that are on
  their way). When it is a raw frame, the reply is queued as an ``_unmatched``
  notification.
- **The connection closes** (the server closed it, the network dropped, or the client
  itself left ``connect``): every request still waiting, and every request made
  afterwards, fails with :class:`ConnectionLost`, which carries the close ``code`` and
  ``reason``.
- **The timeout passes**: with a ``timeout`` (per request, or for every request of the
  client through ``connect(..., timeout=...)``) a request whose reply has not come within
  that many seconds fails with :class:`RequestTimeout`. Its frame stays in the order
  above, so the late reply, when it comes, is recognised and dropped. The timeout bounds
  the wait for the reply; sending itself only waits while websockets' write buffer is
  full (cancelling a send half way would break the connection).

Replies with an id are matched by id, as SPEC.md requires. A reply whose id matches no
request (the answer to a :meth:`~ZonekeepClient.send_raw` frame) is queued as an
``_unmatched`` notification whose ``params`` are the whole reply, in order with the
other notifications. Raw frames should not reuse the client's own ids (the integers
1, 2, 3 ...). Notifications (events, prompts, snapshots) queue up in order and are read
with :meth:`ZonekeepClient.notification`.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio
from websockets.exceptions import ConnectionClosed
from websockets.trio.client import ClientConnection
from websockets.trio.client import connect as ws_connect

__all__ = [
    "MESSAGE_HOOKS",
    "ClientError",
    "ConnectionLost",
    "RequestTimeout",
    "ZonekeepClient",
    "connect",
]

#: Callables run on every message any client receives (the test suite validates them):
#: each gets the message and, for a reply to a request, the request's method.
MESSAGE_HOOKS: list[Callable[[dict[str, Any], str | None], None]] = []


class ClientError(Exception):
    """An error reply from the server (with or without the request's id)."""

    def __init__(self, code: int, name: str, message: str) -> None:
        super().__init__(f"{code} {name}: {message}")
        self.code = code
        self.name = name
        self.message = message


class ConnectionLost(Exception):
    """The connection closed before the request was answered (or before it was sent).

    ``code`` and ``reason`` are the WebSocket close code and reason (SPEC.md's Close
    codes); ``code`` is None when no close happened on the wire (the client stopped
    reading because it left ``connect``).
    """

    def __init__(self, method: str | None, code: int | None, reason: str | None) -> None:
        said = "no close code" if code is None else f"close code {code}"
        if reason:
            said += f" {reason!r}"
        what = "a raw frame" if method is None else repr(method)
        super().__init__(f"the connection closed ({said}) before {what} was answered")
        #: The request's method; None for a :meth:`ZonekeepClient.send_raw` frame.
        self.method = method
        self.code = code
        self.reason = reason


class RequestTimeout(trio.TooSlowError):
    """No reply to the request within its timeout; a reply that comes later is dropped."""

    def __init__(self, method: str, request_id: int, seconds: float) -> None:
        super().__init__(f"no reply to {method!r} (id {request_id}) within {seconds:g} s")
        self.method = method
        self.request_id = request_id
        self.seconds = seconds


@attrs.define(eq=False)
class _Frame:
    """One frame sent and not yet answered, in the order frames were sent.

    ``rid`` is the request id, or None for a :meth:`ZonekeepClient.send_raw` frame (its id
    is whatever the frame says). ``done`` is set once ``reply`` or ``failure`` is; after
    ``abandoned`` (timed out or cancelled) the reply is dropped when it comes.
    """

    rid: int | None
    method: str | None
    done: trio.Event = attrs.field(factory=trio.Event)
    reply: dict[str, Any] | None = None
    failure: Exception | None = None
    abandoned: bool = False


class ZonekeepClient:
    """One connection to a zonekeep server (see the module's docstring for what a request
    can end with). ``timeout`` is the default for :meth:`request`, None for no limit."""

    def __init__(self, ws: ClientConnection, *, timeout: float | None = None) -> None:
        self.ws = ws
        self.timeout = timeout
        self._ids = itertools.count(1)
        #: Every frame sent and not yet answered, oldest first.
        self._unanswered: deque[_Frame] = deque()
        #: The requests among them, by id.
        self._requests: dict[int, _Frame] = {}
        self._note_send, self._notes = trio.open_memory_channel[dict[str, Any]](math.inf)
        self.closed = trio.Event()
        self.welcome: dict[str, Any] | None = None

    # -- reading ------------------------------------------------------------------------------

    async def _reader(self) -> None:
        try:
            async for raw in self.ws:
                self._receive(json.loads(raw))
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            self._note_send.close()
            for frame in self._unanswered:
                frame.failure = self._lost(frame.method)
                frame.done.set()
            self._unanswered.clear()
            self._requests.clear()

    def _receive(self, message: dict[str, Any]) -> None:
        if "id" not in message:
            self._hooks(message, None)
            if "method" in message:
                self._note_send.send_nowait(message)
            else:
                self._note_send.send_nowait({"method": "_unmatched", "params": message})
            return
        frame = self._answered_frame(message["id"])
        self._hooks(message, frame.method if frame is not None else None)
        if frame is None or frame.rid is None:
            self._note_send.send_nowait({"method": "_unmatched", "params": message})
        elif not frame.abandoned:
            frame.reply = message
            frame.done.set()

    def _answered_frame(self, rid: Any) -> _Frame | None:
        """The frame a reply with id ``rid`` answers, taken out of the unanswered ones."""
        if rid is None:
            # Replies come in the order the frames went out: the oldest one is answered.
            if not self._unanswered:
                return None
            frame = self._unanswered.popleft()
        elif type(rid) is int and rid in self._requests:
            frame = self._requests[rid]
            self._unanswered.remove(frame)
        else:
            raw = next((f for f in self._unanswered if f.rid is None), None)
            if raw is None:
                return None
            frame = raw
            self._unanswered.remove(frame)
        if frame.rid is not None:
            del self._requests[frame.rid]
        return frame

    @staticmethod
    def _hooks(message: dict[str, Any], method: str | None) -> None:
        for hook in MESSAGE_HOOKS:
            hook(message, method)

    def _lost(self, method: str | None) -> ConnectionLost:
        return ConnectionLost(method, self.ws.close_code, self.ws.close_reason)

    # -- sending ------------------------------------------------------------------------------

    async def _send(self, frame: _Frame, text: str | bytes) -> None:
        if self.closed.is_set():
            raise self._lost(frame.method)
        self._unanswered.append(frame)
        if frame.rid is not None:
            self._requests[frame.rid] = frame
        try:
            await self.ws.send(text)
        except ConnectionClosed as exc:
            if frame in self._unanswered:  # (the reader has not failed it already)
                self._unanswered.remove(frame)
                if frame.rid is not None:
                    del self._requests[frame.rid]
            raise self._lost(frame.method) from exc

    async def send_raw(self, text: str | bytes) -> None:
        """Send a frame as is (for testing how the server handles bad input); its reply
        comes as an ``_unmatched`` notification."""
        await self._send(_Frame(None, None), text)

    async def request(
        self, method: str, /, *, timeout: float | None = None, **params: Any
    ) -> dict[str, Any]:
        """Send a request and wait for its reply; its ``result``.

        Raises :class:`ClientError` on an error reply, :class:`ConnectionLost` when the
        connection closes first, :class:`RequestTimeout` after ``timeout`` seconds (None:
        the client's ``timeout``; ``math.inf``: no limit). ``timeout`` is this method's own
        keyword, so it cannot be a request param (no method of the protocol has one).
        """
        seconds = self.timeout if timeout is None else timeout
        frame = _Frame(next(self._ids), method)
        await self._send(frame, json.dumps({"id": frame.rid, "method": method, "params": params}))
        try:
            with trio.move_on_after(math.inf if seconds is None else seconds):
                await frame.done.wait()
        finally:
            if not frame.done.is_set():
                frame.abandoned = True  # timed out or cancelled: drop the reply when it comes
        if not frame.done.is_set():
            assert frame.rid is not None and seconds is not None
            raise RequestTimeout(method, frame.rid, seconds)
        if frame.failure is not None:
            raise frame.failure
        assert frame.reply is not None
        if "error" in frame.reply:
            err = frame.reply["error"]
            raise ClientError(err["code"], err["name"], err["message"])
        result: dict[str, Any] = frame.reply["result"]
        return result

    # -- notifications ------------------------------------------------------------------------

    async def notification(self, method: str | None = None) -> dict[str, Any]:
        """The next notification (of ``method``, skipping others); its ``params``.
        Raises ``trio.EndOfChannel`` once the connection is closed and all are read."""
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

    # -- the protocol's methods -------------------------------------------------------------

    async def hello(
        self,
        name: str = "zonekeep-python",
        version: str = "0.1.0",
        protocol: str = "1.1",
        *,
        gm_key: str | None = None,
    ) -> dict[str, Any]:
        """Say hello; with ``gm_key`` (protocol 1.3) the connection is that GM's."""
        extra: dict[str, Any] = {} if gm_key is None else {"gm_key": gm_key}
        self.welcome = await self.request(
            "hello", protocol=protocol, client={"name": name, "version": version}, **extra
        )
        return self.welcome

    async def create_encounter(
        self, name: str, arena: str | dict[str, Any], creatures: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        return await self.request(
            "create_encounter", name=name, arena=arena, creatures=creatures, **extra
        )

    async def join(
        self,
        encounter: str,
        token: str | None,
        last_seq: int | None = None,
        client_seed: str | None = None,
        history: int | None = None,
    ) -> dict[str, Any]:
        """Join ``encounter`` with ``token`` (``None``: a public one, as a spectator);
        ``client_seed`` is this seat's contribution to fair dice; ``history``: also get
        the last that many events (the result's ``history``)."""
        params: dict[str, Any] = {"encounter": encounter}
        if token is not None:
            params["token"] = token
        if last_seq is not None:
            params["last_seq"] = last_seq
        if client_seed is not None:
            params["client_seed"] = client_seed
        if history is not None:
            params["history"] = history
        return await self.request("join", **params)

    async def command(self, encounter: str, type: str, **params: Any) -> dict[str, Any]:
        return await self.request("command", encounter=encounter, type=type, params=params)

    async def actions(self, encounter: str, creature: str) -> dict[str, Any]:
        """What this seat may do for ``creature`` now: ``actions`` (ids), ``details`` (each
        command's refusal and the legal values of its parameters) and, for the GM,
        ``ending``."""
        return await self.request("actions", encounter=encounter, creature=creature)

    # -- the lobby (protocol 1.3) -------------------------------------------------------------

    async def list_encounters(self, **params: Any) -> dict[str, Any]:
        """The encounters this connection may see (``public_only``, ``offset``, ``limit``)."""
        return await self.request("list_encounters", **params)

    async def encounter_links(self, encounter: str) -> dict[str, Any]:
        """A new GM token (the old one is revoked), fresh seat tokens and a spectator token."""
        return await self.request("encounter_links", encounter=encounter)

    async def set_public(self, encounter: str, public: bool) -> dict[str, Any]:
        return await self.request("set_public", encounter=encounter, public=public)

    async def archive_encounter(self, encounter: str) -> dict[str, Any]:
        return await self.request("archive_encounter", encounter=encounter)


@asynccontextmanager
async def connect(
    url: str,
    *,
    hello: bool = True,
    name: str = "zonekeep-python",
    gm_key: str | None = None,
    timeout: float | None = None,
    **ws_options: Any,
) -> AsyncIterator[ZonekeepClient]:
    """Connect (and say hello unless ``hello=False``); close on exit. ``timeout`` is every
    request's default timeout in seconds (None: no limit)."""
    async with (
        ws_connect(url, compression=None, **ws_options) as ws,
        trio.open_nursery() as nursery,
    ):
        client = ZonekeepClient(ws, timeout=timeout)
        nursery.start_soon(client._reader)
        if hello:
            await client.hello(name, gm_key=gm_key)
        try:
            yield client
        finally:
            nursery.cancel_scope.cancel()
