"""A graceful stop snapshots every loaded encounter at its current seq (issue 20), so the
next start loads each without replaying the tail of its log: on a real server over real
websockets, on the default SQLite store."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio
from e2e_support import ServerConfig, creatures, start_server

from zonekeep.server._sqlite import SqliteStore


async def test_a_graceful_stop_snapshots_every_loaded_encounter(
    nursery: trio.Nursery, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="zonekeep.server")
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    seqs = {}
    async with first.client() as gm:
        for n in range(3):
            created = await gm.create_encounter(f"Table {n}", "tavern", creatures())
            eid = created["encounter"]
            for i in range(n + 1):  # a different number of events in each
                await gm.command(eid, "add_note", text=f"note {n}.{i}")
            seqs[eid] = first.server.rooms[eid].state.seq
    untouched = next(iter(seqs))
    await first.server.shutdown()

    store = await SqliteStore.open(data / "zonekeep.sqlite3")
    try:
        for eid, seq in seqs.items():
            stored = await store.load(eid)
            assert stored is not None
            assert stored.snapshot_seq == seq, eid  # the stop's snapshot, not the creation's
            assert stored.snapshot is not None and stored.snapshot["seq"] == seq
            assert await store.read(eid, stored.snapshot_seq) == []  # no tail to replay
            assert f"note {list(seqs).index(eid)}.0" in str(stored.snapshot["notes"])
        assert untouched in seqs
    finally:
        await store.aclose()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("shutdown:")]
    assert said and said[-1].startswith("shutdown: 3 snapshot(s) of 3 loaded encounter(s)")

    # The next start loads each from that snapshot, at the same seq.
    second = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    for eid, seq in seqs.items():
        room = await second.server.registry.load(eid)
        assert room.state.seq == seq
    await second.server.shutdown()
