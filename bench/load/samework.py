"""The same-work server of the load benchmark: the fair baseline's transport doing the
work zonekeep cannot avoid, and nothing more.

::

    python bench/load/samework.py --port 0 --data-dir DIR [--durability full|normal]

It is the fair baseline (``baseline.py``: websockets' Sans-I/O ``ServerProtocol`` over
trio streams, compression off, one non-blocking write per member per command, one
keepalive sweep task) with, for each command, the work every server that checks,
stores and broadcasts a command has to do:

1. ``json.loads`` of the request. The command frame is the baseline's (a first line
   ``FIRST_SEQ REPLY_BYTES SIZE SIZE ...`` saying what zonekeep sent for a command of
   that type in this run), followed by the command itself as JSON (``type``,
   ``params``, padding to zonekeep's command size), which this server parses.
2. One event per ``SIZE``, a dict (the command's type and params, its seq, padding to
   zonekeep's mean event size), each **encoded once** with ``json.dumps``.
3. **One append to SQLite** of those events before anything is sent (the write-ahead
   step): WAL, ``synchronous=FULL`` (zonekeep's default durability), with **group
   commit** in one worker thread as zonekeep's store does: the appends that arrive
   while a transaction is being written share the next one, one ``INSERT`` of many rows.
4. The events' frames are built once and **written once per member** (the sender also
   gets a reply frame of zonekeep's reply size, encoded with ``json.dumps``).

No rules, no per-member view filtering, no validation beyond the JSON parse, no queues
between tasks: a connection's reader runs its command to the end (awaiting the store)
before it reads the next one. The first line on standard output is
``samework listening on ws://127.0.0.1:PORT/``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

import trio
from baseline import Baseline, Conn, serve, text_frame

#: The padding of an event is computed, not measured: the event
#: ``{"s": N, "type": T, "params": P, "p": "x..."}`` is this many characters longer
#: than the request ``{"type": T, "params": P, "pad": "..."}`` with both paddings empty,
#: plus the digits of N.
EVENT_OVER_REQUEST = 5


class Store:
    """Events in one SQLite file (WAL), appended with group commit by one worker thread."""

    def __init__(self, path: Path, durability: str) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS events (grp TEXT NOT NULL, seq INTEGER NOT NULL, "
            "data TEXT NOT NULL, PRIMARY KEY (grp, seq)) WITHOUT ROWID"
        )
        self.limiter = trio.CapacityLimiter(1)
        self.pending: list[list[tuple[str, int, str]]] = []
        self.waiting: list[trio.Event] = []
        self.wake = trio.Event()
        self.transactions = 0

    async def append(self, rows: list[tuple[str, int, str]]) -> None:
        """Store ``rows``; return once they are committed (with whatever came meanwhile)."""
        done = trio.Event()
        self.pending.append(rows)
        self.waiting.append(done)
        self.wake.set()
        await done.wait()

    async def writer(self) -> None:
        """The one writer: each round writes every append that waits, as one statement."""
        while True:
            await self.wake.wait()
            self.wake = trio.Event()
            batch, self.pending = self.pending, []
            waiting, self.waiting = self.waiting, []
            rows = [row for rows in batch for row in rows]
            await trio.to_thread.run_sync(self.write, rows, limiter=self.limiter)
            self.transactions += 1
            for done in waiting:
                done.set()

    def write(self, rows: list[tuple[str, int, str]]) -> None:
        for start in range(0, len(rows), 300):  # 3 values a row, under SQLite's 999
            chunk = rows[start : start + 300]
            self.conn.execute(
                "INSERT INTO events (grp, seq, data) VALUES " + ",".join(["(?,?,?)"] * len(chunk)),
                [v for row in chunk for v in row],
            )


class SameWork(Baseline):
    """The fair baseline's server, each command parsed, stored and encoded."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def command(self, conn: Conn, payload: bytes) -> Awaitable[None]:
        """One command frame, run to its end (its append awaited) before the baseline's
        reader reads the next frame."""
        return self.run_command(conn, payload)

    async def run_command(self, conn: Conn, payload: bytes) -> None:
        head, _, body = payload.partition(b"\n")
        fields = head.split()
        first, reply_size = int(fields[0]), int(fields[1])
        request: dict[str, Any] = json.loads(body)
        base = len(body) - len(request.pop("pad", "")) + EVENT_OVER_REQUEST
        group = conn.group
        assert group is not None
        name = conn.group_name
        texts = []
        for i, size in enumerate(fields[2:]):
            seq = first + i
            pad = max(0, int(size) - base - len(str(seq)))
            event = {"s": seq, "type": request["type"], "params": request["params"], "p": "x" * pad}
            texts.append(json.dumps(event))
        await self.store.append([(name, first + i, text) for i, text in enumerate(texts)])
        out = b"".join(text_frame(text.encode()) for text in texts)
        reply = json.dumps({"r": first, "ok": True, "p": "x" * max(0, reply_size - 30)})
        for member in list(group):
            if member is conn:
                member.write(out + text_frame(reply.encode()))
            else:
                member.write(out)


async def main_async(host: str, port: int, data_dir: Path, durability: str) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    store = Store(data_dir / "samework.sqlite3", durability)
    await serve(SameWork(store), host, port, "samework", store.writer)
    store.conn.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--durability", choices=("full", "normal"), default="full")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        trio.run(main_async, args.host, args.port, args.data_dir, args.durability)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
