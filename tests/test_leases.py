"""Encounter leases and the fence on the PostgreSQL store (server/_postgres.py): two
stores stand for two nodes sharing one database, in a schema of the test's own.

A lease is taken only when no other node holds a live one; each taking raises the
epoch; an append carries the epoch it was made under and is stored only while the lease
still has it, in the append's own transaction. So a node that lost its lease (paused,
cut off) can never append again, and no seq is written twice. Expiry is on the
database's clock: the tests move it by setting ``expires`` rather than by waiting.
"""

from __future__ import annotations

from collections.abc import Iterator

import helpers
import pytest
import trio
from postgres_support import fresh_schema, schema_of, sql

from zonekeep.sdk import EncounterCreated, EncounterOptions, RoundStarted
from zonekeep.sdk.host import single_zone_arena
from zonekeep.server._postgres import Held, LeaseLost, Owner, PostgresStore
from zonekeep.server._store import StoreError

LEASE = 30.0


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema() as made:
        yield made


async def node(url: str, name: str) -> PostgresStore:
    with trio.fail_after(helpers.deadline(20)):
        store = await PostgresStore.open(url, pool_size=2)
        await store.become_node(name, f"ws://{name}.invalid/ws")
    return store


def expire(url: str, eid: str) -> None:
    """The lease of ``eid`` runs out (as if ``LEASE`` seconds went by unrenewed)."""
    sql(f"UPDATE {schema_of(url)}.leases SET expires = 0 WHERE encounter = '{eid}'")


def seqs(url: str, eid: str) -> list[int]:
    rows = sql(f"SELECT seq FROM {schema_of(url)}.events WHERE encounter='{eid}' ORDER BY seq")
    return [int(str(s)) for (s,) in rows]


def created(eid: str) -> EncounterCreated:
    return EncounterCreated(eid, EncounterOptions(), (), name="Brawl", arena=single_zone_arena())


async def test_a_lease_held_elsewhere_names_its_node_and_a_late_append_is_fenced(
    url: str,
) -> None:
    a, b = await node(url, "a"), await node(url, "b")
    lost: list[str] = []
    a.on_lease_lost = lost.append
    try:
        assert await a.take_lease("e1", LEASE) == Held("e1", 1)
        await a.append("e1", 1, [created("e1")])
        await a.append("e1", 2, [RoundStarted(1)])
        found = await b.take_lease("e1", LEASE)
        assert isinstance(found, Owner)
        assert (found.node, found.url) == ("a", "ws://a.invalid/ws")
        assert 0 < found.expires_in <= LEASE
        expire(url, "e1")  # a is paused past its lease
        assert await b.take_lease("e1", LEASE) == Held("e1", 2)
        await b.load("e1")  # the new holder reads the log after taking the lease
        await b.append("e1", 3, [RoundStarted(2)])
        # a wakes up: its append (seq 3 in its own view) is refused, nothing written.
        with pytest.raises(LeaseLost, match="another node took over e1"):
            await a.append("e1", 3, [RoundStarted(9)])
        assert lost == ["e1"] and a.fenced == 1 and "e1" not in a.epochs
        with pytest.raises(LeaseLost, match="holds no lease"):
            await a.append("e1", 3, [RoundStarted(9)])
        assert seqs(url, "e1") == [1, 2, 3]
        data = sql(f"SELECT data FROM {schema_of(url)}.events WHERE seq = 3")
        assert '"round":2' in str(data[0][0])
        assert await b.renew_leases(LEASE) == []
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_batch_of_several_encounters_writes_the_held_and_refuses_only_the_lost(
    url: str,
) -> None:
    a, b = await node(url, "a"), await node(url, "b")
    try:
        for eid in ("e1", "e2"):
            await a.take_lease(eid, LEASE)
            await a.append(eid, 1, [created(eid)])
        expire(url, "e2")
        await b.take_lease("e2", LEASE)
        outcome: dict[str, str] = {}

        async def one(eid: str) -> None:
            try:
                await a.append(eid, 2, [RoundStarted(1)])
                outcome[eid] = "stored"
            except LeaseLost:
                outcome[eid] = "fenced"

        async with trio.open_nursery() as nursery:  # queued together: one batch
            nursery.start_soon(one, "e1")
            nursery.start_soon(one, "e2")
        assert outcome == {"e1": "stored", "e2": "fenced"}
        assert (seqs(url, "e1"), seqs(url, "e2")) == ([1, 2], [1])
    finally:
        await a.aclose()
        await b.aclose()


async def test_renewing_finds_a_lease_taken_and_released_leases_are_free_at_once(
    url: str,
) -> None:
    a, b = await node(url, "a"), await node(url, "b")
    try:
        await a.take_lease("e1", LEASE)
        await a.take_lease("e2", LEASE)
        expire(url, "e1")
        await b.take_lease("e1", LEASE)
        assert await a.renew_leases(LEASE) == ["e1"]
        assert set(a.epochs) == {"e2"}
        await a.release_lease("e2")
        assert await b.take_lease("e2", LEASE) == Held("e2", 2)
        # A clean stop gives every lease up and unregisters the node.
        await b.leave()
        assert await a.take_lease("e1", LEASE) == Held("e1", 3)
        assert [n for n, _, _ in await a.nodes(60)] == ["a"]
    finally:
        await a.aclose()
        await b.aclose()


async def test_a_restarted_node_of_the_same_id_takes_its_leases_back_at_once(url: str) -> None:
    a = await node(url, "a")
    await a.take_lease("e1", LEASE)
    await a.aclose()  # killed: its lease would still be live for LEASE seconds
    again = await node(url, "a")
    other = await node(url, "b")
    try:
        assert await again.take_lease("e1", LEASE) == Held("e1", 2)
        assert isinstance(await other.take_lease("e1", LEASE), Owner)
    finally:
        await again.aclose()
        await other.aclose()


async def test_a_call_the_database_does_not_answer_in_time_is_given_up_and_its_connection_replaced(
    url: str,
) -> None:
    import psycopg
    from postgres_support import POSTGRES_URL

    a = await node(url, "a")
    try:
        assert await a.take_lease("e1", LEASE) == Held("e1", 1)
        with psycopg.connect(POSTGRES_URL) as locker:  # the renewal waits for this lock
            locker.execute(f"SELECT 1 FROM {schema_of(url)}.leases WHERE encounter='e1' FOR UPDATE")
            # The store's own time limit is what is tested here, not a deadline of the
            # test's: it is not scaled.
            limit = 0.5
            with trio.fail_after(helpers.deadline(5)):
                with pytest.raises(StoreError, match=r"did not answer within 0\.5 s"):
                    await a.renew_leases(LEASE, timeout=limit)
        # Its connection was shut (the pool replaces it); the store goes on.
        with trio.fail_after(helpers.deadline(15)):
            assert await a.renew_leases(LEASE) == []
            assert a.epochs == {"e1": 1}
    finally:
        await a.aclose()
