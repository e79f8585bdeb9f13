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

**Several nodes** (protocol 1.4, SPEC.md "Several nodes"): a ``join`` answered with
``moved`` is followed without the caller noticing: the client moves its connection to
the error's ``url`` (the requests still unanswered on the old one fail with
:class:`ConnectionLost`), says ``hello`` again as before, and sends the ``join`` again.
An ``encounter_closed`` with reason ``moved`` (the node lost the encounter's lease) is
followed the same way: the client joins again with the last seq it saw, and the events
it missed come as ordinary ``event`` notifications. After the connection drops (its
node crashed), :meth:`ZonekeepClient.resume` connects again (to the node it was on,
else to each URL it was given), joins every encounter again with its last seq and
queues the missed events; with ``connect(..., reconnect=True)`` it does so by itself,
and requests made meanwhile wait for it. Use one client per encounter when several
nodes serve them: a connection lives on one node.

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
import logging
import math
import random
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio
from websockets.exceptions import ConnectionClosed, InvalidHandshake
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

#: ``moved`` errors followed in a row for one ``join`` before giving up.
MAX_MOVES = 5

log = logging.getLogger("zonekeep.client")


class ClientError(Exception):
    """An error reply from the server (with or without the request's id); ``url`` is
    the node to go to, for ``moved``; ``data`` says whether to retry and when (protocol
    1.5: ``retryable``, ``retry_after_ms``)."""

    def __init__(
        self,
        code: int,
        name: str,
        message: str,
        url: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code} {name}: {message}")
        self.code = code
        self.name = name
        self.message = message
        self.url = url
        self.data: dict[str, Any] = data or {}

    @property
    def retryable(self) -> bool:
        """Whether the same request, sent again unchanged, may succeed later."""
        return bool(self.data.get("retryable", False))

    @property
    def retry_after_ms(self) -> int | None:
        """The milliseconds to wait before a retry, when the server says."""
        value = self.data.get("retry_after_ms")
        return value if isinstance(value, int) else None


@attrs.define
class _Seat:
    """An encounter this client joined: its token and the seq of the last event seen."""

    token: str | None
    last_seq: int


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
    #: Run by the reader on the reply, before any message after it is read.
    on_reply: Callable[[dict[str, Any]], None] | None = None


class ZonekeepClient:
    """One connection to a zonekeep server (see the module's docstring for what a request
    can end with). ``timeout`` is the default for :meth:`request`, None for no limit."""

    def __init__(
        self,
        ws: ClientConnection,
        *,
        timeout: float | None = None,
        url: str | None = None,
        follow_moved: bool = True,
    ) -> None:
        self.ws = ws
        self.timeout = timeout
        #: The URL of the node this connection is to, and every URL the client may
        #: connect to again (:meth:`resume`): the ones it was given first.
        self.url = url
        self.urls: list[str] = [url] if url else []
        #: Follow ``moved`` (and ``encounter_closed`` ``moved``) without the caller noticing.
        self.follow_moved = follow_moved
        #: How many times the connection moved to another node (or was made again).
        self.moves = 0
        #: The encounters joined, by id (for following them to another node).
        self.seats: dict[str, _Seat] = {}
        self._nursery: trio.Nursery | None = None
        self._hello_params: dict[str, Any] | None = None
        #: Set while :meth:`resume` runs by itself (``reconnect=True``); requests wait.
        self._resuming: trio.Event | None = None
        self.reconnect = False
        self._leaving = False
        self._ws_options: dict[str, Any] = {}
        #: Live events held while an encounter is joined again (see :meth:`_rejoin`).
        self._held: dict[str, list[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        #: Every frame sent and not yet answered, oldest first.
        self._unanswered: deque[_Frame] = deque()
        #: The requests among them, by id.
        self._requests: dict[int, _Frame] = {}
        self._note_send, self._notes = trio.open_memory_channel[dict[str, Any]](math.inf)
        self.closed = trio.Event()
        self.welcome: dict[str, Any] | None = None

    # -- reading ------------------------------------------------------------------------------

    async def _reader(self, ws: ClientConnection | None = None) -> None:
        ws = ws or self.ws
        try:
            async for raw in ws:
                if ws is self.ws:
                    self._receive(json.loads(raw))
        except ConnectionClosed:
            pass
        finally:
            if ws is self.ws:
                self.closed.set()
                self._fail_unanswered()
                if self.reconnect and not self._leaving and self._nursery is not None:
                    self._resuming = trio.Event()
                    self._nursery.start_soon(self._resume_by_itself)
                else:
                    self._note_send.close()

    def _fail_unanswered(self) -> None:
        for frame in self._unanswered:
            frame.failure = self._lost(frame.method)
            frame.done.set()
        self._unanswered.clear()
        self._requests.clear()

    async def _hold(
        self, url: str, ws_options: dict[str, Any], *, task_status: trio.TaskStatus[Any]
    ) -> None:
        """Open a connection to ``url``, report it, and read it until it closes."""
        async with ws_connect(url, compression=None, **ws_options) as ws:
            task_status.started(ws)
            await self._reader(ws)

    def _receive(self, message: dict[str, Any]) -> None:
        if "id" not in message:
            self._hooks(message, None)
            if "method" in message:
                if self._seen(message):
                    return
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
            if frame.on_reply is not None:
                frame.on_reply(message)
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

    def _seen(self, message: dict[str, Any]) -> bool:
        """Keep each joined encounter's last seq; ``True`` for a notification the client
        handles itself (an ``encounter_closed`` ``moved`` it follows)."""
        method, params = message["method"], message.get("params") or {}
        seat = self.seats.get(params.get("encounter", ""))
        if seat is None:
            return False
        held = self._held.get(params["encounter"])
        if held is not None and method in ("event", "snapshot"):
            held.append(message)  # a join again is under way: after its reply
            return True
        seq = params.get("seq")
        if method == "event" and isinstance(seq, int):
            if seq <= seat.last_seq:
                return True  # a repeat (one the join's reply already had): ignored, SPEC.md
            seat.last_seq = seq
        elif method == "snapshot" and isinstance(seq, int):
            seat.last_seq = seq
        elif method == "encounter_closed":
            del self.seats[params["encounter"]]
            if params.get("reason") == "moved" and self.follow_moved and self._nursery:
                self._nursery.start_soon(self._follow, params["encounter"], seat, message)
                return True
        return False

    async def _follow(self, encounter: str, seat: _Seat, note: dict[str, Any]) -> None:
        """The node gave ``encounter`` up: join it again where it is served now (the
        ``moved`` error leads there); the events missed come as notifications."""
        try:
            with trio.fail_after(60):
                while True:
                    try:
                        await self._rejoin(encounter, seat)
                        return
                    except ClientError as exc:
                        if exc.name not in ("moved", "store_unavailable"):
                            raise
                    except (OSError, ConnectionLost, InvalidHandshake):
                        pass
                    await trio.sleep(0.1)
        except Exception as exc:
            log.warning("could not follow %s to its new node: %s", encounter, exc)
            self._note_send.send_nowait(note)  # then the caller hears of it

    async def _rejoin(self, encounter: str, seat: _Seat) -> dict[str, Any]:
        """``join`` ``encounter`` again with its last seq; queue the missed events as
        ``event`` notifications."""
        before = seat.last_seq
        # The node may send live events before the join's reply (those stored while it
        # read the log): they are held, then queued after the reply's, none twice.
        self._held[encounter] = []

        def missed(reply: dict[str, Any]) -> None:
            held = self._held.pop(encounter, [])
            result = reply.get("result")
            if result is None:
                self._held[encounter] = []  # (moved: the join goes on elsewhere)
                return
            for i, event in enumerate(result.get("events") or ()):
                note = {"encounter": encounter, "seq": before + 1 + i, "event": event}
                self._note_send.send_nowait({"method": "event", "params": note})
            if result.get("snapshot") is not None:
                note = {
                    "encounter": encounter,
                    "seq": result["seq"],
                    "snapshot": result["snapshot"],
                }
                self._note_send.send_nowait({"method": "snapshot", "params": note})
            # The last seq the reply brought (its ``seq`` may run ahead of its events
            # when a command was stored while the node read them: that one is live).
            last = (
                before + len(result["events"])
                if result.get("events") is not None
                else result["seq"]
            )
            seat.last_seq = last
            for message in held:
                if message["params"].get("seq", 0) > last:
                    self._receive(message)

        try:
            return await self.join(encounter, seat.token, last_seq=before, _on_reply=missed)
        finally:
            self._held.pop(encounter, None)

    # -- moving between nodes ---------------------------------------------------------------

    async def move_to(self, url: str) -> None:
        """Move this connection to ``url`` (another node): connect there and say
        ``hello`` as before; the old connection closes, and what it still had
        unanswered fails with :class:`ConnectionLost`."""
        if self._nursery is None:
            raise RuntimeError("move_to needs a client made by connect()")
        new = await self._nursery.start(self._hold, url, self._ws_options)
        old, self.ws = self.ws, new
        self._fail_unanswered()
        if self.closed.is_set() and not self.reconnect:
            # (resume() after a drop: the notifications go on in a fresh channel)
            self._note_send, self._notes = trio.open_memory_channel[dict[str, Any]](math.inf)
        self.closed = trio.Event()
        self.url = url
        self.moves += 1
        with trio.CancelScope(shield=True):
            await old.aclose()
        if self._hello_params is not None:
            self.welcome = await self.request("hello", **self._hello_params)

    async def resume(self, *, within: float = 60.0) -> dict[str, dict[str, Any]]:
        """After the connection dropped (say its node crashed): connect again, to the
        node it was on or else to each of :attr:`urls` in turn, retrying for up to
        ``within`` seconds (``trio.TooSlowError`` then), and join every encounter
        joined before with its last seq, following ``moved``. The events missed are
        queued as ``event`` notifications; returns the join results by encounter."""
        delay = 0.05
        with trio.fail_after(within):
            while True:
                for url in dict.fromkeys([u for u in (self.url, *self.urls) if u]):
                    try:
                        if self.closed.is_set():
                            await self.move_to(url)
                        results = {}
                        for eid, seat in list(self.seats.items()):
                            results[eid] = await self._rejoin(eid, seat)
                        return results
                    except ClientError as exc:
                        if exc.name not in ("moved", "store_unavailable"):
                            raise
                    except (OSError, ConnectionLost, InvalidHandshake):
                        pass
                # Backing off, with jitter: many clients of one crashed node do not
                # all knock at once.
                await trio.sleep(delay * (0.5 + random.random() / 2))
                delay = min(1.0, delay * 2)

    async def _resume_by_itself(self) -> None:
        done = self._resuming
        try:
            await self.resume()
        except Exception as exc:
            log.warning("could not reconnect: %s", exc)
            self._note_send.close()
        finally:
            self._resuming = None
            if done is not None:
                done.set()

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
        self,
        method: str,
        /,
        *,
        timeout: float | None = None,
        _on_reply: Callable[[dict[str, Any]], None] | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """Send a request and wait for its reply; its ``result``.

        Raises :class:`ClientError` on an error reply, :class:`ConnectionLost` when the
        connection closes first, :class:`RequestTimeout` after ``timeout`` seconds (None:
        the client's ``timeout``; ``math.inf``: no limit). ``timeout`` is this method's own
        keyword, so it cannot be a request param (no method of the protocol has one).
        """
        seconds = self.timeout if timeout is None else timeout
        resuming = self._resuming
        if resuming is not None and method != "hello" and method != "join":
            with trio.move_on_after(math.inf if seconds is None else seconds):
                await resuming.wait()  # (``reconnect=True``: the connection comes back)
        frame = _Frame(next(self._ids), method, on_reply=_on_reply)
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
            raise ClientError(
                err["code"], err["name"], err["message"], err.get("url"), err.get("data")
            )
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
        params = {"protocol": protocol, "client": {"name": name, "version": version}, **extra}
        self.welcome = await self.request("hello", **params)
        self._hello_params = params  # said again on another node (``moved``)
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
        _on_reply: Callable[[dict[str, Any]], None] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Join ``encounter`` with ``token`` (``None``: a public one, as a spectator);
        ``client_seed`` is this seat's contribution to fair dice (``idempotency_key``:
        mixed once however often the join is sent with that key); ``history``: also get
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
        if idempotency_key is not None:
            params["idempotency_key"] = idempotency_key
        for _ in range(MAX_MOVES):
            try:
                result = await self.request("join", _on_reply=_on_reply, **params)
            except ClientError as exc:
                if exc.name != "moved" or not exc.url or not self.follow_moved:
                    raise
                await self.move_to(exc.url)  # the node that serves it
                continue
            events = result.get("events")
            last = result["seq"]
            if events is not None and last_seq is not None:
                last = last_seq + len(events)  # (``seq`` may run ahead of them: live next)
            self.seats[encounter] = _Seat(token, last)
            return result
        raise ClientError(
            1010, "moved", f"join {encounter!r}: moved {MAX_MOVES} times in a row; giving up"
        )

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
    also: Sequence[str] = (),
    follow_moved: bool = True,
    reconnect: bool = False,
    **ws_options: Any,
) -> AsyncIterator[ZonekeepClient]:
    """Connect (and say hello unless ``hello=False``); close on exit. ``timeout`` is every
    request's default timeout in seconds (None: no limit). Several nodes: ``also`` are
    more URLs of the same server to :meth:`~ZonekeepClient.resume` through;
    ``follow_moved`` follows ``moved``; ``reconnect`` resumes by itself when the
    connection drops."""

    async def first(*, task_status: trio.TaskStatus[ZonekeepClient]) -> None:
        async with ws_connect(url, compression=None, **ws_options) as ws:
            made = ZonekeepClient(ws, timeout=timeout, url=url, follow_moved=follow_moved)
            task_status.started(made)
            await made._reader(ws)

    async with trio.open_nursery() as nursery:
        client: ZonekeepClient = await nursery.start(first)
        client.urls += [u for u in also if u != url]
        client._nursery = nursery
        client._ws_options = ws_options
        if hello:
            await client.hello(name, gm_key=gm_key)
        client.reconnect = reconnect
        try:
            yield client
        finally:
            client._leaving = True
            # A clean close (the handshake answered) before the reader goes, as before.
            with trio.CancelScope(shield=True), trio.move_on_after(10):
                await client.ws.aclose()
            nursery.cancel_scope.cancel()
