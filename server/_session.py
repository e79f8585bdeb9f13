"""One websocket connection: the handshake, the request loop, its limits and its outbox.

Every message a connection sends goes through its bounded outbox, drained by one
writer task. A connection that stops reading fills its outbox and is closed
(code 4000); it never delays what the others receive.
"""

from __future__ import annotations

import logging
import os
import random
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio
from websockets.exceptions import ConnectionClosed
from websockets.protocol import OPEN
from websockets.trio.server import ServerConnection

from zonekeep.protocol import (
    METHODS,
    PROTOCOL_VERSION,
    ActionsParams,
    CommandParams,
    CreateEncounterParams,
    CreateSeatParams,
    CreateSpectatorLinkParams,
    HelloParams,
    JoinParams,
    LeaveParams,
    PingParams,
    ProtocolError,
    RewindParams,
    SnapshotParams,
    parse_params,
    parse_request,
)
from zonekeep.sdk import Command

from ._room import Job, Member, Room, encode_message

if TYPE_CHECKING:
    from ._app import ZonekeepServer

log = logging.getLogger("zonekeep.session")

#: Close code for a server shutdown.
GOING_AWAY = 1001
#: Seconds a closing connection's writer gets to finish the frame it is writing.
WRITE_GRACE = 1.0
#: Seconds the closing handshake may take before the connection is dropped.
CLOSE_GRACE = 2.0
#: At most this many queued messages go out in one socket write.
WRITE_BATCH = 64


@attrs.frozen
class Encoded:
    """A request's result already serialized as JSON (``json``), sent as it is: the
    welcome, the same for every ``hello``."""

    json: str


#: A connection is pinged after a silence of between ``1 - PING_SPREAD`` and 1 times
#: ``ping_interval_seconds``, drawn anew for each ping. Connections that came at once (every
#: client reconnecting after a restart) would otherwise be pinged at once, and their pongs
#: would come back at once, every interval for as long as they stay.
PING_SPREAD = 0.2

#: Put in the outbox in place of a message: the writer sends a keepalive ping there.
#: (No message is ever empty or blank: every message is a JSON object.)
PING: Final = ""
#: Put in the outbox in place of a message: the writer writes what the fast path
#: framed but could not write itself.
FLUSH: Final = " "


class TokenBucket:
    """``rate`` tokens a second, up to ``burst``; time comes from trio's clock."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = trio.current_time()

    def take(self) -> bool:
        now = trio.current_time()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Session:
    """A client connection: greeted or not, the rooms it joined, its outbox."""

    def __init__(self, server: ZonekeepServer, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        limits = server.config.limits
        self.limits = limits
        self.greeted = False
        self.rooms: dict[str, Member] = {}
        self._out_send, self._out_recv = trio.open_memory_channel[str](limits.outgoing_queue)
        self.bucket = TokenBucket(limits.rate_per_second, limits.rate_burst)
        self.refusals: list[float] = []
        self.close_code: int | None = None
        self.close_reason = ""
        self._cancel = trio.CancelScope()
        self._recv_scope = trio.CancelScope()
        self.stopping = False
        self._busy = False
        #: Notifications to send once the current request's reply is queued.
        self._after_reply: list[tuple[str, dict[str, Any]]] = []
        #: When the client last sent a message; when it last showed it is there (a
        #: message or the pong of a ping sent then); the ping awaiting its pong.
        self.last_message = self.last_alive = trio.current_time()
        self._pong: trio.Event | None = None
        self._ping_sent = 0.0
        self._ping_queued = False
        #: The silence after which the next ping goes out (see :data:`PING_SPREAD`).
        self._ping_after = self._draw_ping_after()
        #: Output state: the socket for fast-path writes (None: always the writer),
        #: whether the writer task is writing, how many items wait in the outbox,
        #: bytes a fast-path write left over, whether a flush is scheduled.
        stream = ws.stream
        self._fd: int | None = (
            stream.socket.fileno() if isinstance(stream, trio.SocketStream) else None
        )
        self._writer_busy = False
        self._outbox_count = 0
        self._unsent = b""
        self._flush_pending = False

    # -- output ---------------------------------------------------------------------------

    def push(self, method: str, params: dict[str, Any]) -> None:
        """Queue a notification; close the connection if its outbox is full."""
        self._queue({"method": method, "params": params})

    def push_text(self, text: str) -> None:
        """Queue a message already serialized by :func:`encode_message` (the room
        serializes what several members receive once, not once per member; the welcome
        is serialized once for every ``hello``)."""
        if self.close_code is not None:
            return
        self._send_text(text)

    def _queue(self, message: dict[str, Any]) -> None:
        if self.close_code is not None:
            return
        self._send_text(encode_message(message))

    def _send_text(self, text: str) -> None:
        """Send ``text`` soon, in order; close the connection if its outbox is full.

        The fast path, when nothing is waiting in the outbox and the writer is idle:
        the frame goes into the websocket protocol's buffer at once and the server's
        flusher writes every such connection's buffer once the current task yields
        (:meth:`flush_now`), with no task switch per connection. Otherwise the text
        waits in the outbox for the writer task.
        """
        if (
            self._fd is not None
            and not self._writer_busy
            and not self._outbox_count
            and self.ws.protocol.state is OPEN
        ):
            self.ws.protocol.send_text(text.encode())
            if not self._flush_pending:
                self._flush_pending = True
                self.server.schedule_flush(self)
            return
        self._to_outbox(text)

    def _to_outbox(self, text: str) -> None:
        try:
            self._out_send.send_nowait(text)
        except trio.WouldBlock:
            self.close(4000, "slow consumer")
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        else:
            self._outbox_count += 1

    def flush_now(self) -> None:
        """Write what the fast path framed with one non-blocking write; what the socket
        does not take now goes to the writer task. Called by the server's flusher."""
        self._flush_pending = False
        if self.close_code is not None and self.close_code != GOING_AWAY:
            return  # closing for a fault: what is still queued is dropped
        ws = self.ws
        if self._writer_busy or self._outbox_count or ws.send_lock.locked():
            self._to_outbox(FLUSH)  # someone is writing: the writer goes after them
            return
        if ws.protocol.state is not OPEN or self._fd is None:
            return  # the websocket library's closing handshake writes what is left
        chunks = ws.protocol.data_to_send()
        if not chunks:
            return
        data = b"".join(chunks)  # one chunk comes back as it is, not copied
        try:
            written = os.write(self._fd, data)
        except BlockingIOError:
            written = 0
        except OSError:
            self._cancel.cancel()  # the peer is gone; the handler cleans up
            return
        if written < len(data):
            self._unsent = data[written:]
            self._to_outbox(FLUSH)

    def reply(self, rid: Any, result: dict[str, Any] | Encoded) -> None:
        if isinstance(result, Encoded):
            self.push_text(f'{{"id":{encode_message(rid)},"result":{result.json}}}')
            return
        self._queue({"id": rid, "result": result})

    def error(self, rid: Any, err: ProtocolError) -> None:
        self._queue({"id": rid, "error": err.to_wire()})

    def close(self, code: int, reason: str) -> None:
        """Close the connection with ``code``: stop reading at once, drop what is still
        queued, let a frame being written finish (for up to ``CLOSE_GRACE`` seconds),
        then send the close frame."""
        if self.close_code is not None:
            return
        self.close_code = code
        self.close_reason = reason
        self._recv_scope.cancel()
        self._out_send.close()
        self._cancel.deadline = trio.current_time() + WRITE_GRACE
        self._leave_rooms()  # broadcasts stop reaching it at once

    def _leave_rooms(self) -> None:
        """Stop being a member of the rooms this connection joined (only those: the
        server may hold a thousand rooms, and thousands of connections close at once
        when it shuts down)."""
        for eid in self.rooms:
            room = self.server.rooms.get(eid)
            if room is not None:
                room.remove_session(self)

    def begin_shutdown(self, reason: str) -> None:
        """Server shutdown: say ``closing``, read nothing new, answer what is in flight,
        flush the outbox, then close with 1001."""
        self.push("closing", {"reason": reason})
        self.stopping = True
        if not self._busy:
            self._recv_scope.cancel()

    async def _writer(self) -> None:
        """Send what is queued. Everything already waiting when the writer wakes goes
        out in one socket write (a broadcast of several events, a reply and the
        notifications after it), framed by the websocket protocol object directly."""
        receive = self._out_recv.receive
        take = self._out_recv.receive_nowait
        try:
            while True:
                try:
                    batch = [await receive()]
                except trio.EndOfChannel:
                    return
                while len(batch) < WRITE_BATCH:
                    try:
                        batch.append(take())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                # Busy until the batch is written: no fast-path frame may overtake it.
                self._writer_busy = True
                self._outbox_count -= len(batch)
                if self.close_code is not None and self.close_code != GOING_AWAY:
                    return  # closing for a fault: what is still queued is dropped
                await self._write(batch)
                self._writer_busy = False
        except (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self._cancel.cancel()

    async def _write(self, batch: list[str]) -> None:
        """Frame ``batch`` (text messages, or :data:`PING` for a keepalive ping) and
        write the frames with one ``send_all``, holding the connection's send lock (the
        websocket library's own writes, pongs and the close frame, take it too)."""
        ws = self.ws
        protocol = ws.protocol
        for text in batch:
            if protocol.state is not OPEN:
                raise trio.ClosedResourceError
            if text is PING:
                await self._flush()
                self._pong = await ws.ping()
                self._ping_sent = trio.current_time()
                self._ping_queued = False
            elif text is not FLUSH:
                protocol.send_text(text.encode())
        await self._flush()

    async def _flush(self) -> None:
        ws = self.ws
        lock = ws.send_lock
        try:
            lock.acquire_nowait()  # the usual case: nobody else is writing
        except trio.WouldBlock:
            await lock.acquire()
        try:
            if self._unsent:  # what a fast-path write left over goes first
                unsent, self._unsent = self._unsent, b""
                await ws.stream.send_all(unsent)
            chunks = ws.protocol.data_to_send()
            if chunks:
                await ws.stream.send_all(b"".join(chunks))
        finally:
            lock.release()

    def tick(self, now: float) -> None:
        """Called about every second by the server: close an idle connection (4001)
        or one that did not answer a ping within the ping interval (1011), and queue a
        ping when nothing was heard from the client for a ping interval."""
        if self.close_code is not None or self.stopping:
            return
        limits = self.limits
        if now - self.last_message >= limits.idle_timeout_seconds:
            self.close(4001, "idle timeout")
            return
        interval = limits.ping_interval_seconds
        if interval <= 0:
            return
        pong = self._pong
        if pong is not None:
            if pong.is_set():
                self._pong = None
                self.last_alive = max(self.last_alive, self._ping_sent)
            elif now - self._ping_sent >= interval:
                self.close(1011, "keepalive ping timeout")
            return
        if now - self.last_alive >= self._ping_after and not self._ping_queued:
            self._ping_queued = True
            self._ping_after = self._draw_ping_after()
            self._to_outbox(PING)

    def _draw_ping_after(self) -> float:
        return self.limits.ping_interval_seconds * (1 - PING_SPREAD * random.random())

    # -- the connection's life ---------------------------------------------------------------

    async def run(self) -> None:
        try:
            with self._cancel:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._writer)
                    await self._reader()
                    if self.stopping and self.close_code is None:
                        # Shutdown: flush everything queued, then close with 1001.
                        self.close_code, self.close_reason = GOING_AWAY, "going away"
                        self._out_send.close()
                        self._cancel.deadline = trio.current_time() + CLOSE_GRACE
                    elif self.close_code is None:
                        nursery.cancel_scope.cancel()
        finally:
            self._leave_rooms()
        if self.close_code is not None:
            with trio.move_on_after(CLOSE_GRACE):
                await self.ws.aclose(self.close_code, self.close_reason)

    async def _reader(self) -> None:
        """Read and handle requests one at a time. Idleness is checked by :meth:`tick`,
        not by a timeout around every read."""
        while not self.stopping and self.close_code is None:
            self._recv_scope = trio.CancelScope()
            with self._recv_scope:
                try:
                    raw = await self.ws.recv()
                except ConnectionClosed:
                    return
            if self._recv_scope.cancel_called:
                return
            self.last_message = self.last_alive = trio.current_time()
            self._busy = True
            try:
                await self.handle_raw(raw)
            finally:
                self._busy = False

    async def handle_raw(self, raw: str | bytes) -> None:
        if not self.bucket.take():
            now = trio.current_time()
            self.refusals = [t for t in self.refusals if now - t < self.limits.abuse_window_seconds]
            self.refusals.append(now)
            if len(self.refusals) > self.limits.abuse_refusals:
                self.close(1008, "rate limit abuse")
                return
            self.error(
                None,
                ProtocolError(
                    "rate_limited",
                    f"Too many messages: at most {self.limits.rate_per_second:g} a second "
                    f"(bursts of {self.limits.rate_burst}). This one was ignored.",
                ),
            )
            return
        if isinstance(raw, bytes):
            self.error(
                None,
                ProtocolError("parse_error", "Binary frames are not accepted; send JSON text."),
            )
            return
        if len(raw.encode("utf-8")) > self.limits.max_message_bytes:
            self.error(
                None,
                ProtocolError(
                    "message_too_large",
                    f"Messages are at most {self.limits.max_message_bytes} bytes; this one was ignored.",
                ),
            )
            return
        rid: Any = None
        try:
            request = parse_request(raw)
            rid = request.id
            result = await self.dispatch(request.method, request.params)
        except ProtocolError as err:
            self._after_reply.clear()
            self.error(err.request_id if rid is None else rid, err)
            return
        except Exception:
            log.exception("request failed")
            self.error(
                rid,
                ProtocolError(
                    "internal_error", "The server failed on this request; nothing changed."
                ),
            )
            return
        self.reply(rid, result)
        for method, params in self._after_reply:
            self.push(method, params)
        self._after_reply.clear()

    # -- requests --------------------------------------------------------------------------

    async def dispatch(self, method: str, raw: dict[str, Any]) -> dict[str, Any] | Encoded:
        if method != "hello" and not self.greeted:
            if method not in METHODS:
                parse_params(method, raw)  # the unknown-method error
            raise ProtocolError("hello_required", "Send 'hello' first.")
        params = parse_params(method, raw)
        handler = getattr(self, f"m_{method}")
        result: dict[str, Any] | Encoded = await handler(params)
        return result

    async def m_hello(self, params: HelloParams) -> Encoded:
        if self.greeted:
            raise ProtocolError("already_greeted", "This connection has already said hello.")
        major = params.protocol.split(".", 1)[0]
        if major != PROTOCOL_VERSION.split(".", 1)[0]:
            raise ProtocolError(
                "unsupported_version",
                f"This server speaks protocol {PROTOCOL_VERSION}; "
                f"version {params.protocol} is not supported.",
            )
        self.greeted = True
        return Encoded(self.server.welcome_text())

    def _room(self, eid: str, joined: bool = True) -> tuple[Room, Member | None]:
        room = self.server.rooms.get(eid)
        if room is None:
            raise ProtocolError(
                "unknown_encounter", f"There is no encounter {eid!r} on this server."
            )
        member = self.rooms.get(eid)
        if joined and member is None:
            raise ProtocolError("not_joined", f"Join encounter {eid!r} first.")
        return room, member

    async def m_create_encounter(self, params: CreateEncounterParams) -> dict[str, Any]:
        room, token = await self.server.create_room_from_request(params)
        grant = room.find_grant(token)
        assert grant is not None
        member = room.add_member(self, grant)
        self.rooms[room.id] = member
        return {
            "encounter": room.id,
            "gm_token": token,
            "role": "gm",
            "seq": room.state.seq,
            "snapshot": room.snapshot(member),
        }

    async def m_join(self, params: JoinParams) -> dict[str, Any]:
        room, _ = self._room(params.encounter, joined=False)
        last_seq = params.last_seq
        if last_seq is not None and last_seq > room.state.seq:
            last_seq = None  # from the future: a snapshot is all that helps
        grant = room.find_grant(params.token)
        if grant is None:
            raise ProtocolError("bad_token", "That token does not open this encounter.")
        member = room.add_member(self, grant)
        self.rooms[room.id] = member
        events = await room.events_since(member, last_seq) if last_seq is not None else None
        result = {
            "role": member.role,
            "player": member.player,
            "seq": room.state.seq,
            "snapshot": room.snapshot(member) if events is None else None,
            "events": [e["event"] for e in events] if events is not None else None,
        }
        # Right after the reply: the decisions this seat may still answer, the turn timer.
        self._after_reply.extend(("prompt", p) for p in room.prompts_for(member))
        self._after_reply.extend(("turn_timer", t) for t in room.turn_timer_for(member))
        return result

    async def m_create_seat(self, params: CreateSeatParams) -> dict[str, Any]:
        room, member = self._room(params.encounter)
        assert member is not None
        _gm_only(member, "create seats")
        player = params.player
        creatures = params.creatures
        for cid in creatures:
            if cid not in room.state.creatures:
                raise ProtocolError(
                    "invalid_params", f"There is no creature {cid!r} to give to {player!r}."
                )
        for cid in creatures:
            if room.state.creatures[cid].controller != player:
                job = Job(
                    member.actor,
                    Command(
                        "override",
                        {"creature": cid, "field": "controller", "value": player},
                        member.actor,
                    ),
                    member,
                )
                await self._submit(room, job)
        return {"token": await room.grant("player", player), "player": player}

    async def m_create_spectator_link(self, params: CreateSpectatorLinkParams) -> dict[str, Any]:
        room, member = self._room(params.encounter)
        assert member is not None
        _gm_only(member, "create spectator links")
        return {"token": await room.grant("spectator")}

    async def m_command(self, params: CommandParams) -> dict[str, Any]:
        room, member = self._room(params.encounter)
        assert member is not None
        kind = params.type
        cparams = params.params
        room.capability_check(member, kind)
        job = Job(member.actor, Command(kind, cparams, member.actor), member)
        return await self._submit(room, job)

    async def _submit(self, room: Room, job: Job) -> dict[str, Any]:
        done = await room.submit(job)
        if done.error is not None:
            raise done.error
        assert done.result is not None
        return done.result

    async def m_actions(self, params: ActionsParams) -> dict[str, Any]:
        room, member = self._room(params.encounter)
        assert member is not None
        cid = params.creature
        if cid not in room.state.creatures or (
            not member.full_view and room.state.creatures[cid].hidden
        ):
            raise ProtocolError(
                "unknown_creature", f"There is no creature {cid!r} in this encounter."
            )
        return {
            "creature": cid,
            "actions": room.engine.available_actions(room.state, cid, member.actor),
        }

    async def m_snapshot(self, params: SnapshotParams) -> dict[str, Any]:
        room, member = self._room(params.encounter)
        assert member is not None
        return {"seq": room.state.seq, "snapshot": room.snapshot(member)}

    async def m_leave(self, params: LeaveParams) -> dict[str, Any]:
        room, _member = self._room(params.encounter)
        room.remove_session(self)
        self.rooms.pop(room.id, None)
        return {}

    async def m_rewind(self, params: RewindParams) -> dict[str, Any]:
        room, member = self._room(params.encounter)
        assert member is not None
        _gm_only(member, "rewind the encounter")
        job = Job(
            member.actor,
            Command("rewind", {"to_seq": params.to_seq}, member.actor),
            member,
            "rewind",
        )
        return await self._submit(room, job)

    async def m_ping(self, params: PingParams) -> dict[str, Any]:
        return {}


def _gm_only(member: Member, what: str) -> None:
    if member.role == "spectator":
        raise ProtocolError("spectator_read_only", "Spectators can watch but not change anything.")
    if member.role != "gm":
        raise ProtocolError("gm_only", f"Only the GM can {what}.")
