"""The transport: websocket connections over trio streams, and nothing of the protocol.

A :class:`Connection` drives websockets' Sans-I/O :class:`~websockets.server.ServerProtocol`
over a trio stream: the opening handshake (:class:`WebsocketServer`), frames in
(handed whole to a message handler, one at a time), frames out, keepalive pings, the
closing handshake. It is the server's :class:`~._fanout.Subscriber`: ``push_text``
queues a message, ``close`` closes the connection.

Output goes one of two ways, always in order. The fast path, when the connection's
writer task is idle and nothing waits in its outbox: the frame goes into the protocol's
buffer at once, and the server's :class:`Flusher` writes every such connection's buffer
with one non-blocking ``os.write`` once the current task yields (no task switch per
connection). Otherwise the message waits in the bounded outbox, drained by the writer
task, which sends everything already queued with one socket write. A connection that
stops reading fills its outbox and is closed (code 4000); it never delays what the
others receive.

Only the public API of websockets is used: the Sans-I/O protocol, its events and
frames, and the HTTP request and response classes.

The client's address is the TCP peer's, or, when the peer is a trusted reverse proxy
(``trusted_proxies``), the one its ``X-Forwarded-For`` header names
(:func:`client_address`). That address is what the connection logs (it sets
``_log.client_var`` in its task), what ``max_connections_per_ip`` counts, and what it
hands on (``Connection.address``). A trusted proxy's header that names no client is
refused (400), never read as the proxy's own address.

A connection gets ``handshake_timeout_seconds`` to send its request and be answered.
Until its request is read it counts, under the peer's address, among that address's
unfinished handshakes: past ``max_handshakes_per_ip`` of them (trusted proxies apart),
a new connection is answered 429 and closed without being read. Only ``GET`` is
answered (``ZonekeepServer._http``), and a request repeating a header read as one
value (:data:`SINGLE_HEADERS`) gets 400; the log names a request by its path, never
its query string.
"""

from __future__ import annotations

import contextlib
import functools
import http
import ipaddress
import logging
import os
import random
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from typing import Final, Protocol

import trio
from websockets.frames import Frame, Opcode
from websockets.http11 import SERVER, Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from . import _metrics
from ._config import Limits
from ._log import client_var

log = logging.getLogger("zonekeep.connection")
#: The logger websockets' protocol objects are given: never at DEBUG, where websockets
#: would log every frame and header (tokens, keys), whatever the root logger's level,
#: nor at INFO, where it says what our own lines say (a connection opened, closed).
_protocol_log = logging.getLogger("zonekeep.connection.protocol")
_protocol_log.setLevel(logging.WARNING)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

OPEN: Final = State.OPEN

#: Close code for a server shutdown.
GOING_AWAY = 1001
#: Seconds a closing connection's writer gets to finish the frame it is writing.
WRITE_GRACE = 1.0
#: Seconds a connection refused before its request was read (too many unfinished
#: from its address) is kept to deliver the refusal.
REFUSAL_GRACE = 0.25
#: Seconds the closing handshake may take before the connection is dropped.
CLOSE_GRACE = 2.0
#: At most this many queued messages go out in one socket write.
WRITE_BATCH = 64
#: Received messages waiting to be handled before the connection stops reading.
MAX_QUEUE = 16

#: A connection is pinged after a silence of between ``1 - PING_SPREAD`` and 1 times
#: ``ping_interval_seconds``, drawn anew for each ping. Connections that came at once (every
#: client reconnecting after a restart) would otherwise be pinged at once, and their pongs
#: would come back at once, every interval for as long as they stay.
PING_SPREAD = 0.2

#: The keepalive and idle sweep looks at every connection once a round, a slice of
#: them every this many seconds, so that the pings of a round are spread over it.
SWEEP_STEP = 0.05

#: Put in the outbox in place of a message: the writer sends a keepalive ping there.
#: (No message is ever empty or blank: every message is a JSON object.)
PING: Final = ""
#: Put in the outbox in place of a message: the writer writes what the fast path
#: framed but could not write itself.
FLUSH: Final = " "

#: Handles one received message: its text, or bytes for a binary message.
MessageHandler = Callable[[str | bytes], Awaitable[None]]

_TEXT_FIN: Final = 0x81  # FIN and the text opcode (RFC 6455, 5.2)


def text_frame(payload: bytes) -> bytes:
    """One unmasked, unfragmented websocket text frame around ``payload`` (RFC 6455,
    5.2): what a server sends, with no extension (compression is off). Built here
    rather than by the protocol object so that the same bytes can be written to every
    connection that gets the same message (server frames are not masked)."""
    n = len(payload)
    if n < 126:
        return bytes((_TEXT_FIN, n)) + payload
    if n < 65536:
        return bytes((_TEXT_FIN, 126)) + n.to_bytes(2, "big") + payload
    return bytes((_TEXT_FIN, 127)) + n.to_bytes(8, "big") + payload


class Batch(Protocol):
    """Messages for several connections at once (``_fanout.Batch``): their texts, in
    order, and their frames as bytes, built by the first connection that needs them and
    reused by the others (``framed``, None until then)."""

    texts: Sequence[str]
    framed: bytes | None


class Flusher:
    """Writes the fast-path output of every connection that has some, in one pass after
    each burst of work (a broadcast to a room's members, a reply): one non-blocking
    write per connection and no task switch per connection."""

    def __init__(self) -> None:
        self._dirty: list[Connection] = []
        self._lot = trio.lowlevel.ParkingLot()

    def schedule(self, connection: Connection) -> None:
        """Have ``connection``'s framed output written once the current task yields."""
        self._dirty.append(connection)
        if len(self._dirty) == 1:
            self._lot.unpark_all()

    async def run(self) -> None:
        while True:
            if self._dirty:
                await trio.lowlevel.checkpoint()
            else:
                await self._lot.park()
            dirty, self._dirty = self._dirty, []
            for connection in dirty:
                connection.flush_now()


async def sweep(connections: Collection[Connection], limits: Limits) -> None:
    """Keepalive pings and idle timeouts for every connection, from one task.

    One sweep over the connections every ``tick`` seconds costs far less than a
    timer per connection (a keepalive task and a timeout around every read), which
    mattered at thousands of connections (docs/performance.md). Timeouts fire up to
    ``tick`` late. A round is spread over its ``tick``: a slice of the connections
    every ``SWEEP_STEP`` seconds. Looking at them all at once made the pings due in
    that second (spectators, who never speak, are pinged every
    ``ping_interval_seconds``) go out in one burst, and the commands arriving during
    the burst waited for it. ``connections`` is read anew each round.
    """
    periods = [limits.idle_timeout_seconds, limits.ping_interval_seconds]
    tick = min([1.0, *(p / 4 for p in periods if p > 0)])
    steps = max(1, round(tick / SWEEP_STEP))
    while True:
        current = list(connections)
        per_step = -(-len(current) // steps)  # rounded up: all of them in a round
        for step in range(steps):
            await trio.sleep(tick / steps)
            now = trio.current_time()
            for connection in current[step * per_step : (step + 1) * per_step]:
                connection.tick(now)


def peer_address(stream: trio.abc.Stream) -> str:
    """The IP address at the other end of ``stream``; ``"?"`` when it is not a socket.
    An IPv4 client of a dual-stack socket (``::ffff:203.0.113.7``) is its IPv4 address."""
    if not isinstance(stream, trio.SocketStream):
        return "?"
    try:
        peer = stream.socket.getpeername()
    except OSError:
        return "?"
    text = str(peer[0]) if isinstance(peer, tuple) else str(peer)
    found = _ip(text)
    return text if found is None else str(found)


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """``trusted_proxies`` as networks: each an address (``"10.0.0.7"``, ``"::1"``) or a
    network (``"10.0.0.0/8"``); :class:`ValueError` naming a value that is neither."""
    found = []
    for value in values:
        try:
            found.append(ipaddress.ip_network(str(value).strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"trusted_proxies: {value!r} is not an IP address or network "
                "(such as '10.0.0.7' or '10.0.0.0/8')"
            ) from None
    return tuple(found)


def _ip(text: str) -> Address | None:
    """``text`` as an IP address (an IPv4-mapped IPv6 address as its IPv4 one); ``None``
    when it is not one."""
    try:
        found = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def _trusted(address: Address, trusted: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


#: At most this many entries of ``X-Forwarded-For`` are looked at (from the right): the
#: trusted proxies a request may have passed through.
MAX_FORWARDED = 32


class ForwardedError(ValueError):
    """A trusted proxy's ``X-Forwarded-For`` names no client: an entry that is not an
    address met before the client's, or more trusted proxies than :data:`MAX_FORWARDED`.
    The request is refused (HTTP 400); it never falls back to the proxy's address."""


def _forwarded_ip(entry: str) -> Address | None:
    """One ``X-Forwarded-For`` entry as an address: a bare IP address, or one with a port
    as some proxies write it (``203.0.113.7:4711``, ``[2001:db8::7]:443``,
    ``[2001:db8::7]``); ``None`` for anything else."""
    text = entry.strip()
    found = _ip(text)
    if found is not None or not text:
        return found
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if bracket and (not rest or (rest[:1] == ":" and rest[1:].isdigit())):
            found = _ip(inside)
            return found if ":" in inside else None
        return None
    host, colon, port = text.rpartition(":")
    if colon and port.isdigit() and ":" not in host:
        return _ip(host)
    return None


def client_address(peer: str, forwarded: Sequence[str], trusted: Sequence[Network]) -> str:
    """The client's address, given the TCP ``peer``'s, the values of the request's
    ``X-Forwarded-For`` headers (``forwarded``, in order) and the ``trusted`` proxies.

    An untrusted peer (its header may say anything), or no header: the peer's address.
    When the peer is a trusted proxy, the header is read from right to left (each proxy
    appends the address it got the request from), skipping trusted addresses: the
    first untrusted one is the client, however long the list is (what lies left of it
    is the client's own text and is never read). If every entry is trusted, the
    leftmost: the request came from a trusted machine.

    :class:`ForwardedError` when the header names no client: an entry that is not an
    address (``unknown``, garbage, an empty one) met before the client's, or more than
    :data:`MAX_FORWARDED` trusted entries in a row. Never the peer's address then: the
    peer is the proxy, often on the loopback, and a client must not become it.
    """
    peer_ip = _ip(peer)
    if peer_ip is None or not forwarded or not _trusted(peer_ip, trusted):
        return peer
    entries = [e for value in forwarded for e in value.split(",")]
    found: Address | None = None
    for entry in reversed(entries[-MAX_FORWARDED:]):
        found = _forwarded_ip(entry)
        if found is None:
            raise ForwardedError("X-Forwarded-For has an entry that is not an IP address")
        if not _trusted(found, trusted):
            return str(found)
    if len(entries) > MAX_FORWARDED or found is None:
        raise ForwardedError(f"X-Forwarded-For names more than {MAX_FORWARDED} trusted proxies")
    return str(found)


class Connection:
    """One open websocket connection: its outbox, its writer, its keepalive."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        protocol: ServerProtocol,
        limits: Limits,
        flusher: Flusher | None,
        address: str | None = None,
        write_now: Callable[[bytes], int] | None = None,
    ) -> None:
        self.stream = stream
        self.protocol = protocol
        self.limits = limits
        self.flusher = flusher
        #: The client's IP address (``"?"`` when the stream is not a socket): the
        #: peer's, or the one a trusted proxy forwarded (:func:`client_address`).
        self.address = peer_address(stream) if address is None else address
        #: The handshake's ``Host`` header (``None``: none): whether a loopback client
        #: is the operator depends on it (``ZonekeepServer.local_host``).
        self.host: str | None = None
        self.metrics = _metrics.current()
        self._out_send, self._out_recv = trio.open_memory_channel[str](limits.outgoing_queue)
        self._in_send, self._in_recv = trio.open_memory_channel[str | bytes](MAX_QUEUE)
        self._send_lock = trio.Lock()
        self._stream_closed = trio.Event()
        self.close_code: int | None = None
        self.close_reason = ""
        #: Called once when the connection stops receiving what the server sends.
        self.on_close: Callable[[], None] = lambda: None
        self._closed_called = False
        self._cancel = trio.CancelScope()
        self.stopping = False
        self._busy = False
        #: When the client last sent a message; when it last showed it is there (a
        #: message or the pong of a ping sent then); the ping awaiting its pong.
        self.last_message = self.last_alive = trio.current_time()
        self._pong: trio.Event | None = None
        self._ping_data = b""
        self._ping_sent = 0.0
        self._ping_queued = False
        #: The silence after which the next ping goes out (see :data:`PING_SPREAD`).
        self._ping_after = self._draw_ping_after()
        #: Output state: the non-blocking write of the fast path (``os.write`` on the
        #: socket, or ``write_now`` when given, e.g. an in-memory sink for the cost gate;
        #: None: always the writer task), whether the writer task is writing, how many
        #: items wait in the outbox, bytes a fast-path write left over, whether a flush
        #: is scheduled.
        self._write_now: Callable[[bytes], int] | None = None
        if flusher is not None:
            if write_now is not None:
                self._write_now = write_now
            elif isinstance(stream, trio.SocketStream):
                self._write_now = functools.partial(os.write, stream.socket.fileno())
        self._writer_busy = False
        self._outbox_count = 0
        self._unsent = b""
        self._flush_pending = False
        #: Frames the fast path built, waiting for the flusher (in order; they go out
        #: before what the protocol object holds: pings, pongs, the close frame).
        self._framed: list[bytes] = []

    # -- the subscriber interface ---------------------------------------------------------

    def push_text(self, text: str) -> None:
        """Send ``text`` soon, in order; close the connection if its outbox is full.
        Nothing happens once the connection is closing."""
        if self.close_code is not None:
            return
        if self._fast_path_free():
            self._framed.append(text_frame(text.encode()))
            self._schedule_flush()
            return
        self._to_outbox(text)

    def push_batch(self, batch: Batch) -> None:
        """Send every message of ``batch``, as :meth:`push_text` does each; on the fast
        path, as the frames the batch holds (built once for every connection)."""
        if self.close_code is not None:
            return
        if self._fast_path_free():
            data = batch.framed
            if data is None:
                data = batch.framed = b"".join([text_frame(t.encode()) for t in batch.texts])
            self._framed.append(data)
            self._schedule_flush()
            return
        for text in batch.texts:
            self._to_outbox(text)

    def _fast_path_free(self) -> bool:
        """Whether a frame may be put in the protocol's output now, to be written by the
        flusher: a socket it can write to, nothing queued for the writer task, which is
        not writing either (a frame framed now would overtake those)."""
        return (
            self._write_now is not None
            and not self._writer_busy
            and not self._outbox_count
            and self.protocol.state is OPEN
        )

    def _schedule_flush(self) -> None:
        if not self._flush_pending:
            self._flush_pending = True
            assert self.flusher is not None
            self.flusher.schedule(self)

    def close(self, code: int, reason: str) -> None:
        """Close the connection with ``code``: stop reading at once, drop what is still
        queued, let a frame being written finish (for up to ``WRITE_GRACE`` seconds),
        then send the close frame."""
        if self.close_code is not None:
            return
        self.close_code = code
        self.close_reason = reason
        self._in_recv.close()  # the reader stops waiting; what is queued is dropped
        self._out_send.close()
        self._cancel.deadline = trio.current_time() + WRITE_GRACE
        self._closed()  # broadcasts stop reaching it at once

    def _closed(self) -> None:
        if not self._closed_called:
            self._closed_called = True
            self.on_close()

    # -- output -----------------------------------------------------------------------------

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
        does not take now goes to the writer task. Called by the :class:`Flusher`."""
        self._flush_pending = False
        if self.close_code is not None and self.close_code != GOING_AWAY:
            return  # closing for a fault: what is still queued is dropped
        if self._writer_busy or self._outbox_count or self._send_lock.locked():
            self._to_outbox(FLUSH)  # someone is writing: the writer goes after them
            return
        if self.protocol.state is not OPEN or self._write_now is None:
            return  # the closing handshake writes what is left
        chunks = self._take_output()
        if not chunks:
            return
        data = b"".join(chunks)  # one chunk comes back as it is, not copied
        try:
            written = self._write_now(data)
        except BlockingIOError:
            written = 0
        except OSError:
            self._cancel.cancel()  # the peer is gone; the handler cleans up
            return
        self.metrics.bytes_sent += written
        if written < len(data):
            self._unsent = data[written:]
            self._to_outbox(FLUSH)

    def _take_output(self) -> list[bytes]:
        """What is to be written now, in order: the fast path's frames, then what the
        protocol object has to send (frames the writer task framed, pings, pongs, the
        close frame, and ``b""`` last for the end of the stream)."""
        chunks = self.protocol.data_to_send()
        framed = self._framed
        if framed:
            self._framed = []
            framed += chunks
            return framed
        return chunks

    async def _writer(self) -> None:
        """Send what is queued. Everything already waiting when the writer wakes goes
        out in one socket write (a broadcast of several events, a reply and the
        notifications after it)."""
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
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self._cancel.cancel()

    async def _write(self, batch: list[str]) -> None:
        """Frame ``batch`` (text messages, or :data:`PING` for a keepalive ping) and
        write the frames with one ``send_all``."""
        protocol = self.protocol
        for text in batch:
            if protocol.state is not OPEN:
                raise trio.ClosedResourceError
            if text is PING:
                self._frame_ping()
            elif text is not FLUSH:
                protocol.send_text(text.encode())
        await self._send_output()

    async def _send_output(self) -> None:
        """Write what a fast-path write left over, then everything the protocol has to
        send (ending with the end of the stream once the protocol says so), holding the
        send lock."""
        lock = self._send_lock
        try:
            lock.acquire_nowait()  # the usual case: nobody else is writing
        except trio.WouldBlock:
            await lock.acquire()
        try:
            if self._unsent:  # what a fast-path write left over goes first
                unsent, self._unsent = self._unsent, b""
                await self.stream.send_all(unsent)
                self.metrics.bytes_sent += len(unsent)
            chunks = self._take_output()
            if not chunks:
                return
            if chunks[-1] == b"":  # the end of the stream (never a frame: frames have headers)
                data = b"".join(chunks[:-1])
                if data:
                    await self.stream.send_all(data)
                    self.metrics.bytes_sent += len(data)
                await self._send_eof()
            else:
                data = b"".join(chunks)
                await self.stream.send_all(data)
                self.metrics.bytes_sent += len(data)
        finally:
            lock.release()

    async def _send_eof(self) -> None:
        stream = self.stream
        if isinstance(stream, trio.abc.HalfCloseableStream):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await stream.send_eof()
        else:
            await stream.aclose()

    # -- keepalive ----------------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """Called about every second by :func:`sweep`: close an idle connection (4001)
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
            if self._fast_path_free():
                # Framed now and written by the flusher, like a broadcast's frames: no
                # task switch and no send_all per ping (spectators, who never speak,
                # are pinged every interval: 400 pings a second at 8,000 connections).
                self._frame_ping()
                self._schedule_flush()
            else:
                self._to_outbox(PING)

    def _frame_ping(self) -> None:
        """Frame a keepalive ping (new data, a fresh pong event) in the protocol's output."""
        self._ping_data = random.getrandbits(32).to_bytes(4, "big")
        self._pong = trio.Event()
        self._ping_sent = trio.current_time()
        self._ping_queued = False
        self.protocol.send_ping(self._ping_data)

    def _draw_ping_after(self) -> float:
        return self.limits.ping_interval_seconds * (1 - PING_SPREAD * random.random())

    # -- input ------------------------------------------------------------------------------------

    async def _receive_frames(self) -> None:
        """Read the stream until it ends: feed the protocol, queue whole messages for
        :meth:`_reader`, acknowledge pongs, and write what the protocol answers on its
        own (pongs, the reply to a close frame)."""
        protocol = self.protocol
        send = self._in_send
        fragments: list[bytes] = []
        text = False
        try:
            while True:
                try:
                    data = await self.stream.receive_some()
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    break
                if not data:
                    break
                protocol.receive_data(data)
                events = protocol.events_received()
                try:
                    await self._send_output()
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    break
                for event in events:
                    if not isinstance(event, Frame):
                        continue
                    opcode = event.opcode
                    if opcode is Opcode.PONG:
                        if self._pong is not None and bytes(event.data) == self._ping_data:
                            self._pong.set()
                        continue
                    if opcode is Opcode.CLOSE:
                        send.close()  # nothing more to read
                        continue
                    if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
                        fragments, text = [], opcode is Opcode.TEXT
                    elif opcode is not Opcode.CONT:
                        continue  # a ping: the protocol has answered it
                    fragments.append(bytes(event.data))
                    if not event.fin:
                        continue
                    payload = b"".join(fragments)
                    fragments = []
                    message: str | bytes = payload
                    if text:
                        try:
                            message = payload.decode("utf-8")
                        except UnicodeDecodeError:
                            protocol.fail(1007, "invalid UTF-8 in a text frame")
                            await self._send_output()
                            send.close()
                            continue
                    # Queued without a task switch; waits (reading nothing more) while
                    # MAX_QUEUE messages wait; dropped once nobody reads.
                    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                        try:
                            send.send_nowait(message)
                        except trio.WouldBlock:
                            await send.send(message)
        finally:
            protocol.receive_eof()
            # Shielded but bounded: a peer that reads nothing must not keep us here.
            with (
                trio.CancelScope(shield=True, deadline=trio.current_time() + WRITE_GRACE),
                contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
            ):
                await self._send_output()
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(self.stream)
            send.close()
            self._stream_closed.set()

    # -- the connection's life -----------------------------------------------------------------

    def begin_shutdown(self, closing_text: str) -> None:
        """Server shutdown: send ``closing_text`` (the ``closing`` notification), read
        nothing new, answer what is in flight, flush the outbox, then close with 1001."""
        self.push_text(closing_text)
        self.stopping = True
        if not self._busy:
            self._in_recv.close()  # the reader stops waiting for a next message

    async def serve(self, handle: MessageHandler) -> None:
        """Hand every message received to ``handle``, one at a time, until either side
        closes; then perform the closing handshake and close the stream."""
        async with trio.open_nursery() as outer:
            outer.start_soon(self._receive_frames)
            try:
                with self._cancel:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._writer)
                        await self._reader(handle)
                        if self.stopping and self.close_code is None:
                            # Shutdown: flush everything queued, then close with 1001.
                            self.close_code, self.close_reason = GOING_AWAY, "going away"
                            self._out_send.close()
                            self._cancel.deadline = trio.current_time() + CLOSE_GRACE
                        elif self.close_code is None:
                            nursery.cancel_scope.cancel()
            finally:
                self._in_recv.close()  # what still comes in is dropped, not waited on
                self._closed()
            with trio.move_on_after(CLOSE_GRACE):
                await self._close_handshake(
                    1000 if self.close_code is None else self.close_code, self.close_reason
                )
            outer.cancel_scope.cancel()
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.stream)

    async def _close_handshake(self, code: int, reason: str) -> None:
        """Send a close frame (unless one was already exchanged) and wait for the client
        to close the TCP connection."""
        if self.protocol.state is OPEN:
            self.protocol.send_close(code, reason)
            try:
                await self._send_output()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                return
        await self._stream_closed.wait()

    def _done_reading(self) -> bool:
        return self.stopping or self.close_code is not None

    async def _reader(self, handle: MessageHandler) -> None:
        """Read and handle messages one at a time. Idleness is checked by :meth:`tick`,
        not by a timeout around every read; :meth:`close` and :meth:`begin_shutdown`
        stop the wait for the next message by closing the channel it comes from (no
        cancel scope for every message)."""
        receive = self._in_recv.receive
        while not self._done_reading():
            try:
                raw = await receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return
            if self._done_reading():
                return  # closed while this message was on its way: dropped
            self.last_message = self.last_alive = trio.current_time()
            self._busy = True
            try:
                await handle(raw)
            finally:
                self._busy = False


# -- listening ---------------------------------------------------------------------------------


class Upload:
    """The body of a ``POST`` (map images, issue 35): ``length`` is its Content-Length
    (checked to be one number), read by :meth:`read` with a deadline; the handler reads
    it only once it has accepted the request (its size, its authorization)."""

    def __init__(
        self, stream: trio.SocketStream, length: int, early: bytes, seconds: float
    ) -> None:
        self.length = length
        #: Whether :meth:`read` was called (the body is read, or given up).
        self.consumed = False
        self._stream = stream
        self._early = early
        self._seconds = seconds

    async def read(self) -> bytes | None:
        """The whole body, or ``None`` when the client did not send it in time (or closed
        the connection, or sent more than it announced)."""
        self.consumed = True
        chunks = [self._early]
        got = len(self._early)
        with trio.move_on_after(self._seconds):
            while got < self.length:
                data = await self._stream.receive_some(min(65536, self.length - got))
                if not data:
                    return None
                chunks.append(data)
                got += len(data)
            body = b"".join(chunks)
            return body if len(body) == self.length else None
        return None


class _Head:
    """Splits what a client sends into the request's head, fed to the websockets
    protocol, and what follows it (a body). A ``POST``'s ``Content-Length`` lines are
    (and ``Transfer-Encoding``) lines are kept apart, so that websockets (which takes no request body) parses its head; every
    other request reaches it byte for byte as sent."""

    #: A line longer than this is fed as it is (websockets refuses it).
    LONG = 16384

    def __init__(self) -> None:
        self.pending = b""
        self.first = True
        self.post = False
        self.done = False
        self.lengths: list[bytes] = []
        self.chunked = False
        self.after = b""

    def take(self, data: bytes) -> bytes:
        """What of ``data`` goes to the protocol."""
        if self.done:
            self.after += data
            return b""
        self.pending += data
        out: list[bytes] = []
        while not self.done and (end := self.pending.find(b"\n")) >= 0:
            line, self.pending = self.pending[: end + 1], self.pending[end + 1 :]
            if self.first:
                self.first = False
                self.post = line.startswith(b"POST ")
            elif line in (b"\r\n", b"\n"):
                self.done = True
                self.after, self.pending = self.pending, b""
            elif self.post and line[:15].lower() == b"content-length:":
                self.lengths.append(line[15:].strip())
                continue
            elif self.post and line[:18].lower() == b"transfer-encoding:":
                self.chunked = True  # not taken: answered 411
                continue
            out.append(line)
        if len(self.pending) > self.LONG:
            out.append(self.pending)
            self.pending = b""
        return b"".join(out)

    def length(self) -> int | None:
        """The one Content-Length a POST gave (``None``: none, several, or not a number)."""
        values = set(self.lengths)
        if len(values) != 1 or self.chunked:
            return None
        value = values.pop()
        return int(value) if value.isdigit() and len(value) <= 15 else None


#: Answers a plain HTTP request (a response), or lets it open a websocket (None); it is
#: given the request, the client's address and, for a ``POST``, its body to read.
HttpHandler = Callable[[Request, str, Upload | None], Awaitable[Response | None]]
#: Runs an open connection until it ends.
ConnectionHandler = Callable[[Connection], Awaitable[None]]


class WebsocketServer:
    """Accepts TCP connections, performs the opening handshake (or answers a plain HTTP
    request) and hands each open websocket to a handler (:meth:`serve`)."""

    def __init__(
        self,
        on_open: ConnectionHandler,
        http_handler: HttpHandler,
        limits: Limits,
        flusher: Flusher,
        trusted_proxies: Iterable[str] = (),
    ) -> None:
        self.on_open = on_open
        self.http_handler = http_handler
        self.limits = limits
        self.flusher = flusher
        #: The peers whose ``X-Forwarded-For`` is believed (see :func:`client_address`).
        self.trusted: tuple[Network, ...] = parse_networks(trusted_proxies)
        #: Set when the server stops accepting: handshakes still under way get a 503.
        self.closing = False
        #: Open connections (and handshakes under way) by the client's IP address.
        self.per_address: dict[str, int] = {}
        #: Connections whose request is not read yet, by the peer's address.
        self.pending: dict[str, int] = {}
        self._listening: trio.CancelScope | None = None

    async def serve(
        self,
        listeners: list[trio.SocketListener],
        *,
        task_status: trio.TaskStatus[WebsocketServer] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        async with trio.open_nursery() as handlers:
            with trio.CancelScope() as self._listening:
                async with trio.open_nursery() as accepting:
                    await accepting.start(
                        lambda task_status: trio.serve_listeners(
                            self._handle_stream,
                            listeners,
                            handler_nursery=handlers,
                            task_status=task_status,
                        )
                    )
                    task_status.started(self)

    def stop_listening(self) -> None:
        """Stop accepting connections; handshakes under way are refused (503)."""
        self.closing = True
        if self._listening is not None:
            self._listening.cancel()

    def set_trusted_proxies(self, values: Iterable[str]) -> None:
        """Believe ``X-Forwarded-For`` from these peers from now on (a reload)."""
        self.trusted = parse_networks(values)

    def _count(self, address: str, change: int) -> int:
        """Add ``change`` to the connections counted for ``address``; the new count."""
        return _add(self.per_address, address, change)

    async def _handle_stream(self, stream: trio.SocketStream) -> None:
        peer = peer_address(stream)
        client_var.set(peer)
        peer_ip = _ip(peer)
        # A trusted proxy sends whole requests (it reads the client's first): its
        # handshakes are not held to the per-address count of unfinished ones.
        proxy = peer_ip is not None and _trusted(peer_ip, self.trusted)
        if not proxy and self.pending.get(peer, 0) >= self.limits.max_handshakes_per_ip:
            await self._refuse_unfinished(stream)
            return
        protocol = ServerProtocol(max_size=4 * self.limits.max_message_bytes, logger=_protocol_log)
        # Counted under the peer's address until the request says who the client is.
        held = [peer]
        self._count(peer, 1)
        _add(self.pending, peer, 1)
        unfinished = [True]
        connection: Connection | None = None
        try:
            request: Request | None = None
            with trio.move_on_after(self.limits.handshake_timeout_seconds):
                request = await self._handshake(stream, protocol, held, unfinished)
            if request is None:
                return
            connection = Connection(stream, protocol, self.limits, self.flusher, held[0])
            connection.host = request.headers.get("Host")  # one at most: checked
            connection.metrics.connections_opened += 1
            log.info("connection opened")
            await self.on_open(connection)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            if unfinished[0]:
                _add(self.pending, peer, -1)
            self._count(held[0], -1)
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            if connection is not None:
                code = connection.close_code
                log.info(
                    "connection closed (%s)",
                    "by the client" if code is None else f"{code} {connection.close_reason}",
                )

    async def _refuse_unfinished(self, stream: trio.SocketStream) -> None:
        """A new connection from an address with ``max_handshakes_per_ip`` handshakes
        unfinished: answered 429 without reading it, and closed."""
        metrics = _metrics.current()
        metrics.handshakes_refused["too_many_handshakes"] += 1
        metrics.warn(
            log,
            "refused a connection (HTTP 429): %d unfinished handshakes from this address",
            self.limits.max_handshakes_per_ip,
        )
        # Answered, then what the client already sent is read (for REFUSAL_GRACE at
        # most) before closing: a socket closed with unread data resets the connection,
        # and the reset may destroy the answer before the client reads it.
        with (
            trio.move_on_after(REFUSAL_GRACE),
            contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
        ):
            await stream.send_all(_UNFINISHED)
            await stream.send_eof()
            while await stream.receive_some():
                pass
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)

    async def _handshake(
        self,
        stream: trio.SocketStream,
        protocol: ServerProtocol,
        held: list[str],
        unfinished: list[bool],
    ) -> Request | None:
        """Read the HTTP request and answer it; the request once the websocket is open.

        ``held[0]`` is the address the connection is counted under: the peer's, then,
        once the request is read, the client's (:func:`client_address`). When that
        address has more than ``max_connections_per_ip`` connections counted (this one
        included), a websocket handshake is refused (429). ``unfinished[0]`` is cleared
        once the request has been read (it no longer counts as an unfinished handshake).
        A request that repeats a header read once (Host, Origin, Authorization), or
        whose ``X-Forwarded-For`` from a trusted proxy names no client, gets 400."""
        request: Request | None = None
        head = _Head()
        while request is None:
            data = await stream.receive_some()
            if not data:
                return None
            protocol.receive_data(head.take(data))
            events = protocol.events_received()
            unanswered = protocol.data_to_send()  # a malformed request's error response
            if unanswered:
                await _send_chunks(stream, unanswered)
                return None
            for event in events:
                if isinstance(event, Request):
                    request = event
        unfinished[0] = False
        _add(self.pending, held[0], -1)
        metrics = _metrics.current()
        address = held[0]
        problem = _repeated(request)
        if problem is None:
            forwarded = request.headers.get_all("X-Forwarded-For")
            try:
                address = client_address(held[0], forwarded, self.trusted)
            except ForwardedError as exc:
                problem = str(exc)  # (the log line names the proxy: client=)
        if problem is not None:
            metrics.handshakes_refused["bad_request"] += 1
            metrics.warn(log, "refused a request (HTTP 400) for %s: %s", _path(request), problem)
            refusal = protocol.reject(http.HTTPStatus.BAD_REQUEST, f"Bad request: {problem}.\n")
            refusal.headers["Server"] = SERVER
            protocol.send_response(refusal)
            await _send_chunks(stream, protocol.data_to_send())
            return None
        if address != held[0]:
            log.debug("forwarded for %s by the proxy at %s", address, held[0])
            self._count(held[0], -1)
            held[0] = address
            client_var.set(address)
            self._count(address, 1)
        crowded = self.per_address.get(address, 0) > self.limits.max_connections_per_ip
        upload = None
        if head.post and _path(request) == UPLOAD_PATH:
            length = head.length()
            if length is None:
                await _answer(protocol, stream, http.HTTPStatus.LENGTH_REQUIRED, _NO_LENGTH)
                await _drain(stream)
                return None
            upload = Upload(stream, length, head.after, self.limits.upload_timeout_seconds)
        try:
            response = await self.http_handler(request, address, upload)
        except Exception:
            log.exception("answering %s failed", _path(request))
            response = protocol.reject(
                http.HTTPStatus.INTERNAL_SERVER_ERROR,
                "Failed to open a WebSocket connection.\nSee server log for more information.\n",
            )
        if response is None and crowded:
            metrics.warn(
                log,
                "refused a connection (HTTP 429): %d connections from this address already",
                self.limits.max_connections_per_ip,
            )
            metrics.handshakes_refused["too_many_per_address"] += 1
            response = protocol.reject(
                http.HTTPStatus.TOO_MANY_REQUESTS, "Too many connections from your address.\n"
            )
        if response is None:
            response = protocol.accept(request)
        response.headers["Server"] = SERVER
        if response.status_code == http.HTTPStatus.SWITCHING_PROTOCOLS and self.closing:
            metrics.handshakes_refused["shutting_down"] += 1
            response = protocol.reject(
                http.HTTPStatus.SERVICE_UNAVAILABLE, "Server is shutting down.\n"
            )
            response.headers["Server"] = SERVER
        protocol.send_response(response)
        await _send_chunks(stream, protocol.data_to_send())
        if head.post and (upload is None or not upload.consumed):
            await _drain(stream)  # a refused POST's body: read (briefly) before closing
        return request if protocol.state is OPEN else None


#: Headers the server reads as one value: a request that repeats one gets 400 (an
#: ambiguous request, which proxies and the server might read differently).
SINGLE_HEADERS = ("Host", "Origin", "Authorization")

#: The answer to a connection refused before its request is read.
_UNFINISHED_BODY = b"Too many unfinished requests from your address.\n"
_UNFINISHED = (
    b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_UNFINISHED_BODY), _UNFINISHED_BODY)
)


async def _drain(stream: trio.SocketStream) -> None:
    """Read what the client still sends for :data:`REFUSAL_GRACE` at most, after its
    answer: a socket closed with unread data resets the connection, and the reset may
    destroy the answer before the client reads it."""
    with (
        trio.move_on_after(REFUSAL_GRACE),
        contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
    ):
        await stream.send_eof()
        while await stream.receive_some(65536):
            pass


#: The one path that takes a request body (map images).
UPLOAD_PATH = "/images"

_NO_LENGTH = "A POST needs one Content-Length header (no chunked transfer coding).\n"


async def _answer(
    protocol: ServerProtocol, stream: trio.SocketStream, status: http.HTTPStatus, text: str
) -> None:
    """Answer ``status`` with ``text`` and end the exchange."""
    refusal = protocol.reject(status, text)
    refusal.headers["Server"] = SERVER
    protocol.send_response(refusal)
    await _send_chunks(stream, protocol.data_to_send())


def _repeated(request: Request) -> str | None:
    """What is wrong with ``request`` if it repeats a header of :data:`SINGLE_HEADERS`."""
    for name in SINGLE_HEADERS:
        if len(request.headers.get_all(name)) > 1:
            return f"more than one {name} header"
    return None


def _path(request: Request) -> str:
    """The request's path as the log may show it: without its query string (a token
    may be there) and at most 200 characters."""
    path = request.path.split("?", 1)[0].split("#", 1)[0]
    return path if len(path) <= 200 else path[:200] + "..."


def _add(counts: dict[str, int], key: str, change: int) -> int:
    """Add ``change`` to ``counts[key]`` (dropped at 0); the new count."""
    count = counts.get(key, 0) + change
    if count > 0:
        counts[key] = count
    else:
        counts.pop(key, None)
    return count


async def _send_chunks(stream: trio.SocketStream, chunks: list[bytes]) -> None:
    """Write ``chunks``; an empty chunk (the protocol's end of stream) half-closes."""
    for chunk in chunks:
        if chunk:
            await stream.send_all(chunk)
        else:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await stream.send_eof()
