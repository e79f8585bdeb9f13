"""The per-frame-broadcast variant of the load benchmark's baseline (``--targets broadcast``):
a plain websocket fan-out server that calls ``broadcast`` once per frame. It is NOT the
fair baseline (that is ``baseline.py``, which writes once per member per command).


::

    python bench/load/baseline_broadcast.py --port 0

Every connection's first text message names its group (``{"group": "g17"}``); every
later text message is broadcast as it is, unparsed, to every connection of that group,
the sender included (``websockets.trio.server.broadcast``). There are no rules, no
store, no queues of our own and no JSON work: what a zonekeep server does on top of
this is what the benchmark's ratios measure. Compression is off, as on zonekeep.

The first line on standard output is ``baseline listening on ws://127.0.0.1:PORT/``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Sequence

import trio
from websockets.exceptions import ConnectionClosed
from websockets.trio.server import ServerConnection, broadcast, serve


class Baseline:
    """Groups of connections by the group id each connection sent first."""

    def __init__(self) -> None:
        self.groups: dict[str, set[ServerConnection]] = {}

    async def handler(self, ws: ServerConnection) -> None:
        try:
            first = await ws.recv()
        except ConnectionClosed:
            return
        group = str(json.loads(first)["group"])
        members = self.groups.setdefault(group, set())
        members.add(ws)
        try:
            async for message in ws:
                await broadcast(members, message)
        except ConnectionClosed:
            pass
        finally:
            members.discard(ws)
            if not members:
                self.groups.pop(group, None)


async def main_async(host: str, port: int) -> None:
    baseline = Baseline()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(port, host=host)
            bound = listeners[0].socket.getsockname()[1]
            await nursery.start(
                lambda task_status: serve(
                    baseline.handler,
                    listeners=listeners,
                    compression=None,
                    max_size=65536,
                    ping_interval=20,
                    ping_timeout=20,
                    task_status=task_status,
                )
            )
            print(f"baseline listening on ws://{host}:{bound}/", flush=True)
            async for _sig in signals:
                nursery.cancel_scope.cancel()
                break


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
