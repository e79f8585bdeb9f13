"""The fair baseline of the load benchmark: the fastest raw fan-out server we could
write on zonekeep's own stack, and nothing else.

::

    python bench/load/baseline.py --port 0

It uses what the zonekeep server uses (websockets' Sans-I/O ``ServerProtocol`` over
trio streams, compression off) but does none of its work: no rules, no store, no JSON.
Every connection's first text message names its group (``{"group": "g17"}``, parsed
once, at join). After that, each command is **one frame in** whose first line says
what zonekeep would send for it::

    FIRST_SEQ REPLY_BYTES SIZE SIZE ...\\n<padding>

and the server answers with **the same number and size of frames as zonekeep sends**:
one frame per event (``{"s":SEQ,"p":"xxx..."}`` padded to each ``SIZE``) to every
member of the group, then a reply frame of ``REPLY_BYTES`` to the sender. The frames
are built once per command (server frames are not masked, so every member gets the
same bytes) and **written once per member per command** with one non-blocking
``os.write``; what the socket does not take waits for a drain task. Keepalive is one
sweep task over every connection (a ping after 16 to 20 s of silence, drawn anew each
time, as zonekeep's default), not a timer per connection; like zonekeep's, the sweep
looks at a slice of the connections every 50 ms, so that the pings of connections that
came at once do not go out in one burst.

The first line on standard output is ``baseline listening on ws://127.0.0.1:PORT/``.
The older baseline, which calls websockets' ``broadcast`` once per frame, is kept as
``baseline_broadcast.py`` (the "per-frame broadcast" variant, ``--targets broadcast``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence

import trio
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

#: Seconds of silence after which a connection is pinged (zonekeep's default).
PING_INTERVAL = 20.0
#: The keepalive sweep looks at every connection this often, a slice every SWEEP_STEP s.
SWEEP_SECONDS = 1.0
SWEEP_STEP = 0.05
#: A connection is pinged after a silence of (1 - PING_SPREAD .. 1) x PING_INTERVAL.
PING_SPREAD = 0.2
MAX_SIZE = 1 << 20


def draw_ping_after() -> float:
    return PING_INTERVAL * (1 - PING_SPREAD * random.random())


def text_frame(payload: bytes) -> bytes:
    """One unmasked, unfragmented text frame."""
    return Frame(Opcode.TEXT, payload).serialize(mask=False)


def padded(head: bytes, size: int) -> bytes:
    """``head`` + ``"p":"xxx"}`` so that the payload is ``size`` bytes (at least the head)."""
    pad = max(0, size - len(head) - 8)
    return head + b',"p":"' + b"x" * pad + b'"}'


class Conn:
    """One open websocket: its socket, protocol and unsent bytes."""

    __slots__ = ("draining", "fd", "group", "group_name", "last_heard", "nursery", "ping_after",
                 "protocol", "stream", "unsent")  # fmt: skip

    def __init__(
        self, stream: trio.SocketStream, protocol: ServerProtocol, nursery: trio.Nursery
    ) -> None:
        self.stream = stream
        self.protocol = protocol
        self.nursery = nursery
        self.fd = stream.socket.fileno()
        self.unsent = bytearray()
        self.draining = False
        self.group: set[Conn] | None = None
        self.group_name = ""
        self.last_heard = trio.current_time()
        self.ping_after = draw_ping_after()

    def write(self, data: bytes) -> None:
        """Write ``data`` now if the socket takes it, else after what waits (in order)."""
        if self.unsent:
            self.unsent += data
            return
        try:
            written = os.write(self.fd, data)
        except BlockingIOError:
            written = 0
        except OSError:
            return  # gone: the reader sees the end of the stream
        if written < len(data):
            self.unsent += data[written:]
            if not self.draining:
                self.draining = True
                self.nursery.start_soon(self.drain)

    async def drain(self) -> None:
        try:
            while self.unsent:
                data, self.unsent = bytes(self.unsent), bytearray()
                await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self.unsent.clear()
        finally:
            self.draining = False

    def flush_protocol(self) -> None:
        """Write what the protocol itself has to send (pongs, pings, close frames)."""
        chunks = self.protocol.data_to_send()
        data = b"".join(c for c in chunks if c)
        if data:
            self.write(data)


class Baseline:
    def __init__(self) -> None:
        self.groups: dict[str, set[Conn]] = {}
        self.conns: set[Conn] = set()

    def command(self, conn: Conn, payload: bytes) -> Awaitable[None] | None:
        """One command frame: the frames zonekeep would send, written once per member."""
        head = payload[: payload.index(b"\n")].split()
        first, reply = int(head[0]), int(head[1])
        out = b"".join(
            text_frame(padded(b'{"s":%d' % (first + i), int(size)))
            for i, size in enumerate(head[2:])
        )
        group = conn.group
        assert group is not None
        for member in group:
            if member is conn:
                member.write(out + text_frame(padded(b'{"r":%d' % first, reply)))
            else:
                member.write(out)

    async def handle(self, stream: trio.SocketStream) -> None:
        protocol = ServerProtocol(max_size=MAX_SIZE)
        async with trio.open_nursery() as nursery:
            conn = Conn(stream, protocol, nursery)
            try:
                if await self.handshake(conn):
                    self.conns.add(conn)
                    await self.read(conn)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            finally:
                self.conns.discard(conn)
                if conn.group is not None:
                    conn.group.discard(conn)
                nursery.cancel_scope.cancel()
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)

    async def handshake(self, conn: Conn) -> bool:
        protocol = conn.protocol
        while True:
            data = await conn.stream.receive_some()
            if not data:
                return False
            protocol.receive_data(data)
            for event in protocol.events_received():
                if isinstance(event, Request):
                    protocol.send_response(protocol.accept(event))
                    await conn.stream.send_all(b"".join(protocol.data_to_send()))
                    return protocol.state is State.OPEN
            if protocol.data_to_send():
                return False

    async def read(self, conn: Conn) -> None:
        protocol = conn.protocol
        while True:
            data = await conn.stream.receive_some()
            if not data:
                return
            conn.last_heard = trio.current_time()
            protocol.receive_data(data)
            for event in protocol.events_received():
                if isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                    payload = bytes(event.data)
                    if conn.group is None:
                        name = str(json.loads(payload)["group"])
                        conn.group = self.groups.setdefault(name, set())
                        conn.group.add(conn)
                        conn.group_name = name
                    else:
                        # (the same-work server's command is a coroutine: run to its end
                        # before the next frame is read)
                        waited = self.command(conn, payload)
                        if waited is not None:
                            await waited
            conn.flush_protocol()
            if protocol.state is State.CLOSED:
                return

    async def sweep(self) -> None:
        """The one keepalive task: ping every connection silent for its ping_after, a
        slice of the connections every SWEEP_STEP seconds."""
        steps = max(1, round(SWEEP_SECONDS / SWEEP_STEP))
        while True:
            current = list(self.conns)
            per_step = -(-len(current) // steps)
            for step in range(steps):
                await trio.sleep(SWEEP_SECONDS / steps)
                now = trio.current_time()
                for conn in current[step * per_step : (step + 1) * per_step]:
                    if (
                        now - conn.last_heard >= conn.ping_after
                        and conn.protocol.state is State.OPEN
                    ):
                        conn.last_heard = now  # the pong (or anything) moves it on
                        conn.ping_after = draw_ping_after()
                        conn.protocol.send_ping(os.urandom(4))
                        conn.flush_protocol()


async def serve(
    server: Baseline,
    host: str,
    port: int,
    name: str,
    *tasks: Callable[[], Awaitable[None]],
) -> None:
    """Serve with ``server`` (and its ``tasks``) until SIGINT or SIGTERM; the first line
    on standard output says where it listens."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(port, host=host)
            bound = listeners[0].socket.getsockname()[1]
            nursery.start_soon(server.sweep)
            for task in tasks:
                nursery.start_soon(task)
            await nursery.start(trio.serve_listeners, server.handle, listeners)
            print(f"{name} listening on ws://{host}:{bound}/", flush=True)
            async for _sig in signals:
                nursery.cancel_scope.cancel()
                break


async def main_async(host: str, port: int) -> None:
    await serve(Baseline(), host, port, "baseline")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(main_async, args.host, args.port)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
