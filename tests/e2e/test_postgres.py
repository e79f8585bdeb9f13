"""A real server on a PostgreSQL store (``store = "postgresql://..."``), over real
websockets: it plays, restarts and resumes by seq; and a community's SQLite store copied
into PostgreSQL with ``zonekeep store copy`` plays on where it stopped, old tokens and
all, with no gap in its seqs.

Each test keeps its store in a schema of its own (tests/postgres_support.py); without
PostgreSQL they skip saying why, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

from pathlib import Path

import helpers
import trio
from e2e_support import Loaded, Running, ServerConfig, start_server, sturdy_goblin_roster
from postgres_support import fresh_schema, schema_of, sql

from zonekeep.protocol.client import ZonekeepClient
from zonekeep.server._cli import main


async def begin(gm: ZonekeepClient) -> tuple[str, str, str]:
    """An encounter at Aria's first turn; its id, alice's token and the GM's."""
    with trio.fail_after(helpers.deadline(10)):
        created = await gm.create_encounter("On Postgres", "tavern", sturdy_goblin_roster())
        eid: str = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
    return eid, seat["token"], created["gm_token"]


async def play_a_little(running: Running, eid: str, token: str) -> int:
    """alice joins, moves and dashes; the last seq she saw."""
    async with running.client() as alice:
        with trio.fail_after(helpers.deadline(10)):
            joined = await alice.join(eid, token)
            moved = await alice.command(eid, "move", creature="aria", feet=10)
            assert moved["first_seq"] == joined["seq"] + 1
            noted = await alice.command(eid, "dash", creature="aria")
    last: int = noted["last_seq"]
    return last


async def plays_on(running: Running, eid: str, token: str, last_seq: int) -> int:
    """alice comes back with ``last_seq``: nothing missed, and her next command's events
    follow it without a gap. The new last seq."""
    async with running.client() as alice:
        with trio.fail_after(helpers.deadline(10)):
            resumed = await alice.join(eid, token, last_seq=last_seq)
            assert resumed["seq"] == last_seq
            assert resumed["events"] == []
            result = await alice.command(eid, "end_turn", creature="aria")
            live = await alice.notification("event")
    assert result["first_seq"] == live["seq"] == last_seq + 1
    assert live["event"] == {"type": "turn_ended", "creature": "aria"}
    after: int = result["last_seq"]
    return after


def stored_seqs(url: str, eid: str) -> list[int]:
    rows = sql(f"SELECT seq FROM {schema_of(url)}.events WHERE encounter='{eid}' ORDER BY seq")
    return [int(str(seq)) for (seq,) in rows]


async def test_a_server_on_postgresql_restarts_and_resumes_by_seq(tmp_path: Path) -> None:
    with fresh_schema() as url:
        config = ServerConfig(port=0, store=url, store_pool_size=2)
        async with trio.open_nursery() as nursery:
            running = await start_server(nursery, tmp_path / "a", config, entropy=Loaded())
            async with running.client() as gm:
                eid, token, _ = await begin(gm)
            last = await play_a_little(running, eid, token)
            await running.server.shutdown()
        assert stored_seqs(url, eid) == list(range(1, last + 1))
        everything = repr(
            [sql(f"SELECT * FROM {schema_of(url)}.{t}") for t in ("grants", "encounters")]
        )
        assert token not in everything  # only its hash is stored

        async with trio.open_nursery() as nursery:
            again = await start_server(nursery, tmp_path / "b", config, entropy=Loaded())
            assert eid not in again.server.rooms  # loaded by its first join
            after = await plays_on(again, eid, token, last)
            await again.server.shutdown()
        assert stored_seqs(url, eid) == list(range(1, after + 1))


async def test_a_copied_store_plays_on_from_postgresql(tmp_path: Path) -> None:
    data = tmp_path / "sqlite"
    async with trio.open_nursery() as nursery:
        running = await start_server(
            nursery, data, ServerConfig(port=0), sqlite=True, entropy=Loaded()
        )
        async with running.client() as gm:
            eid, token, gm_token = await begin(gm)
        last = await play_a_little(running, eid, token)
        await running.server.shutdown()

    with fresh_schema() as url:
        copy = ["store", "copy", "--from", str(data / "zonekeep.sqlite3"), "--to", url]
        assert await trio.to_thread.run_sync(main, copy) == 0
        assert stored_seqs(url, eid) == list(range(1, last + 1))
        # A second copy into the now full store is refused, and changes nothing.
        assert await trio.to_thread.run_sync(main, copy) == 2
        assert stored_seqs(url, eid) == list(range(1, last + 1))

        config = ServerConfig(port=0, store=url)
        async with trio.open_nursery() as nursery:
            moved = await start_server(nursery, tmp_path / "pg", config, entropy=Loaded())
            after = await plays_on(moved, eid, token, last)
            # The GM's old token opens it too, and the GM's commands go on from there.
            async with moved.client() as gm:
                with trio.fail_after(helpers.deadline(10)):
                    joined = await gm.join(eid, gm_token)
                    assert (joined["role"], joined["seq"]) == ("gm", after)
                    noted = await gm.command(eid, "add_note", text="Moved to PostgreSQL.")
            assert noted["first_seq"] == after + 1
            await moved.server.shutdown()
        assert stored_seqs(url, eid) == list(range(1, noted["last_seq"] + 1))
