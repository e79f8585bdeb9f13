"""Several nodes on one PostgreSQL store, in this process (server/_nodes.py): a join
that reaches the wrong node is redirected (``moved``) and the Python client follows it
without its caller noticing; an encounter nobody holds is taken by the node that gets
the join; the lobby and the creation quotas see every node's encounters.

The crash tests (SIGSTOP, kill -9) run nodes as processes: tests/e2e/test_failover.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import attrs
import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, creatures, start_server
from postgres_support import fresh_schema, schema_of, sql

from zonekeep.protocol.client import ClientError, connect
from zonekeep.server._nodes import HANDED_OVER

LEASE = 30.0  # long: these tests never wait for a lease to run out


@pytest.fixture
def store_url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


async def two_nodes(
    nursery: trio.Nursery, tmp_path: Path, url: str, **limits: int
) -> tuple[Running, Running]:
    made = []
    for name in ("a", "b"):
        config = ServerConfig(
            port=0,
            store=url,
            store_pool_size=2,
            node_id=name,
            lease_seconds=LEASE,
            limits=attrs.evolve(Limits(), **limits),
        )
        made.append(await start_server(nursery, tmp_path / name, config))
    return made[0], made[1]


def lease_of(url: str, eid: str) -> tuple[str, int]:
    ((node, epoch),) = sql(
        f"SELECT node, epoch FROM {schema_of(url)}.leases WHERE encounter = '{eid}'"
    )
    return str(node), int(str(epoch))


def seqs(url: str, eid: str) -> list[int]:
    rows = sql(f"SELECT seq FROM {schema_of(url)}.events WHERE encounter='{eid}' ORDER BY seq")
    return [int(str(s)) for (s,) in rows]


async def test_a_join_at_the_wrong_node_is_redirected_and_the_client_follows(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    a, b = await two_nodes(nursery, tmp_path, store_url)
    with trio.fail_after(helpers.deadline(20)):
        async with a.client() as gm:
            created = await gm.create_encounter("Split", "tavern", creatures())
            eid, gm_token = created["encounter"], created["gm_token"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
        assert lease_of(store_url, eid) == ("a", 1)
        # A client that does not follow sees the error itself: 1010 and a's URL.
        async with b.client(follow_moved=False) as plain:
            with pytest.raises(ClientError) as info:
                await plain.join(eid, seat["token"])
        assert (info.value.code, info.value.name, info.value.url) == (1010, "moved", a.url)
        assert eid not in b.server.rooms
        # A stranger's token is refused before anything else: no owner's address for it.
        async with b.client(follow_moved=False) as stranger:
            with pytest.raises(ClientError) as refused:
                await stranger.join(eid, "not-a-token")
        assert (refused.value.name, refused.value.url) == ("bad_token", None)
        # The Python client follows it: the caller sees an ordinary join.
        async with b.client() as alice:
            joined = await alice.join(eid, seat["token"])
            assert (alice.url, alice.moves) == (a.url, 1)
            assert joined["role"] == "player" and joined["snapshot"] is not None
            async with connect(b.url, timeout=helpers.deadline(10)) as gm_again:
                await gm_again.join(eid, gm_token)
                noted = await gm_again.command(eid, "add_note", text="the lamps flicker")
            live = await alice.notification("event")
        assert live["seq"] == noted["first_seq"] == joined["seq"] + 1
        assert seqs(store_url, eid) == list(range(1, noted["last_seq"] + 1))
        # b never loaded it, and the lease never moved.
        assert eid not in b.server.rooms and lease_of(store_url, eid) == ("a", 1)
        assert b.server.registry.node is not None and b.server.registry.node.moved == 3


async def test_with_no_live_owner_the_node_that_gets_the_join_takes_the_encounter(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    a, b = await two_nodes(nursery, tmp_path, store_url)
    with trio.fail_after(helpers.deadline(20)):
        async with a.client() as gm:
            created = await gm.create_encounter("Handed on", "tavern", creatures())
            eid, token = created["encounter"], created["gm_token"]
            first = await gm.command(eid, "add_note", text="one")
        await a.server.shutdown()  # a clean stop gives its leases up
        async with b.client() as gm:
            resumed = await gm.join(eid, token, last_seq=first["last_seq"] - 1)
            assert gm.moves == 0 and resumed["events"] is not None
            assert [e["type"] for e in resumed["events"]] == ["note_added"]
            after = await gm.command(eid, "add_note", text="two")
        assert after["first_seq"] == first["last_seq"] + 1
        assert lease_of(store_url, eid) == ("b", 2)
        assert seqs(store_url, eid) == list(range(1, after["last_seq"] + 1))


async def test_the_lobby_and_the_creation_quotas_count_every_nodes_encounters(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    a, b = await two_nodes(nursery, tmp_path, store_url, encounters_per_hour=2)
    with trio.fail_after(helpers.deadline(20)):
        async with a.client() as on_a, b.client() as on_b:
            one = await on_a.create_encounter("One", "tavern", creatures())
            two = await on_b.create_encounter("Two", "tavern", creatures())
            listed = await on_b.list_encounters()
            assert {e["id"] for e in listed["encounters"]} == {one["encounter"], two["encounter"]}
            # Both were created by this address: a third one, on either node, is refused.
            with pytest.raises(ClientError) as info:
                await on_a.create_encounter("Three", "tavern", creatures())
        assert info.value.name == "quota_exceeded"
        assert "encounters_per_hour" in info.value.message
        assert lease_of(store_url, one["encounter"])[0] == "a"
        assert lease_of(store_url, two["encounter"])[0] == "b"


async def test_a_node_answers_metrics_of_its_own_leases(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    from test_observability import http_get

    a, _ = await two_nodes(nursery, tmp_path, store_url)
    with trio.fail_after(helpers.deadline(20)):
        async with a.client() as gm:
            await gm.create_encounter("Counted", "tavern", creatures())
        status, _, body = await http_get(a.server.port or 0, "/metrics")
    page = body.decode()
    assert status == 200
    assert "zonekeep_node_leases 1.0" in page
    assert "zonekeep_node_leases_taken_total 1.0" in page
    assert "zonekeep_node_appends_fenced_total 0.0" in page


async def test_a_lease_that_cannot_be_taken_in_time_is_refused_as_being_handed_over(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    import psycopg
    from postgres_support import POSTGRES_URL

    a, b = await two_nodes(nursery, tmp_path, store_url)
    with trio.fail_after(helpers.deadline(20)):
        async with a.client() as gm:
            created = await gm.create_encounter("Contested", "tavern", creatures())
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
        # Another transaction holds the lease's row (a node taking it over, say): b's
        # taking waits for it, up to its lock timeout, and then gives up.
        with psycopg.connect(POSTGRES_URL) as locker:
            locker.execute(
                f"SELECT 1 FROM {schema_of(store_url)}.leases WHERE encounter = %s FOR UPDATE",
                (eid,),
            )
            async with b.client(follow_moved=False) as alice:
                with pytest.raises(ClientError) as info:
                    await alice.join(eid, seat["token"])
    # The documented refusal: not the database's words, nor its address.
    refused = info.value
    assert (refused.name, refused.url) == ("store_unavailable", None)
    assert refused.message == HANDED_OVER
    assert eid not in b.server.rooms and lease_of(store_url, eid) == ("a", 1)


async def test_a_node_whose_lease_renewals_are_stale_is_neither_healthy_nor_ready(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    from test_observability import http_get

    a, _ = await two_nodes(nursery, tmp_path, store_url)
    node = a.server.registry.node
    assert node is not None
    port = a.server.port or 0
    with trio.fail_after(helpers.deadline(20)):
        assert (await http_get(port, "/healthz"))[0] == 200
        node.renewed_at -= LEASE  # as if no renewal had succeeded for a whole lease
        status, _, body = await http_get(port, "/healthz")
        ready, _, ready_body = await http_get(port, "/readyz")
    problems = json.loads(body)["problems"]
    stale = [p for p in problems if p.startswith("lease renewals are stale: the last one")]
    assert status == 503 and len(stale) == 1, problems
    assert stale[0].endswith(f"(leases last {LEASE:g} s)")
    assert (ready, json.loads(ready_body)) == (503, {"status": "cut off from the store"})
