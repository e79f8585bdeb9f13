"""The server's output path, end to end: what a connection is sent arrives whole and in
order whichever way it goes out.

A message to a connection whose writer task is idle is framed at once and written by the
server's flusher with one non-blocking ``os.write`` (the fast path); whatever the socket
does not take then goes to the connection's writer task, which must send it before
anything queued after it. A loopback socket with a default buffer takes everything, so
these tests put a stingy stand-in for ``os.write`` into the connection module: it writes
only part of what it is given, or nothing at all, as a full socket buffer would.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, ServerConfig, creatures

from zonekeep.server import _connection

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)  # seconds: the bound on every wait for something that must happen


@pytest.mark.parametrize("takes", ["part", "nothing"])
async def test_what_a_fast_path_write_leaves_over_goes_out_next_and_in_order(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch, takes: str
) -> None:
    asked: list[int] = []
    written: list[int] = []

    def stingy_write(fd: int, data: bytes) -> int:
        asked.append(len(data))
        if takes == "nothing":
            raise BlockingIOError
        done = os.write(fd, data[: max(1, len(data) // 3)])
        written.append(done)
        return done

    monkeypatch.setattr(_connection, "os", SimpleNamespace(write=stingy_write))
    config = ServerConfig(port=0, limits=Limits(rate_per_second=10_000, rate_burst=10_000))
    running = await make_server(config)
    async with running.client() as gm, running.client() as watcher:
        created = await gm.create_encounter("Output", "tavern", creatures())
        eid = created["encounter"]
        link = await gm.request("create_spectator_link", encounter=eid)
        await watcher.join(eid, link["token"])
        room = running.server.rooms[eid]
        first = room.state.seq + 1

        # Notes of growing size (up to about 2 KB): each frame cut after a third.
        texts = [f"note {i}: " + "abcdefghij" * (i * 6 + 1) for i in range(32)]
        with trio.fail_after(WAIT):
            for text in texts:
                await gm.command(eid, "add_note", text=text)
            last = room.state.seq
            for client in (gm, watcher):
                seqs: list[int] = []
                got: list[str] = []
                while not seqs or seqs[-1] < last:
                    params = await client.notification("event")
                    seqs.append(params["seq"])
                    if params["event"]["type"] == "note_added":
                        got.append(params["event"]["note"]["text"])
                assert seqs == list(range(first, last + 1))
                assert got == texts

    assert len(asked) >= len(texts)  # the fast path was taken for each note at least
    if takes == "part":
        assert all(0 < n < size for n, size in zip(written, asked, strict=True) if size > 1)
