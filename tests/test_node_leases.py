"""A node's lease logic (``server/_nodes.py``) over a scripted store: what each answer of
the store makes the node do (count, refuse, give a room up, log), with trio's MockClock
for the renewal loop. The store's own SQL is tested on PostgreSQL (test_leases.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import cast

import pytest
import trio
import trio.testing

from zonekeep.protocol import ProtocolError
from zonekeep.server._nodes import Node, default_node_id
from zonekeep.server._postgres import Held, Owner, PostgresStore
from zonekeep.server._store import StoreError

LEASE = 9.0
NODES = "zonekeep.server._nodes"


def host_named(name: str) -> SimpleNamespace:
    """A stand-in for the ``socket`` module whose machine is called ``name``."""
    return SimpleNamespace(gethostname=lambda: name)


class ScriptedStore:
    """The part of ``PostgresStore`` a node calls, each answer set by the test."""

    def __init__(self) -> None:
        self.epochs: dict[str, int] = {}
        self.on_lease_lost: Callable[[str], None] | None = None
        self.calls: list[str] = []
        self.lease: Held | Owner | Exception = Held("e1", 1)
        self.renewals: list[list[str] | Exception] = []
        self.peers: list[tuple[str, str, float]] = [("a", "ws://a/ws", 0.5)]
        self.fail_leave = False
        self.fail_release = False
        #: The longest a store call may take (a node lowers it to its lease).
        self.call_timeout = 60.0
        #: How long each renewal takes (trio's clock).
        self.renew_seconds = 0.0

    async def become_node(self, node: str, url: str) -> None:
        self.calls.append(f"become {node} {url}")

    async def leave(self) -> None:
        self.calls.append("leave")
        if self.fail_leave:
            raise StoreError("the database is gone")

    async def take_lease(self, encounter: str, seconds: float) -> Held | Owner:
        self.calls.append(f"take {encounter} {seconds:g}")
        if isinstance(self.lease, Exception):
            raise self.lease
        return self.lease

    async def renew_leases(self, seconds: float, timeout: float | None = None) -> list[str]:
        self.calls.append(f"renew {seconds:g}")
        if self.renew_seconds:
            await trio.sleep(self.renew_seconds)
        answer = self.renewals.pop(0) if self.renewals else []
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def release_lease(self, encounter: str) -> None:
        self.calls.append(f"release {encounter}")
        if self.fail_release:
            raise StoreError("the database is gone")

    async def nodes(self, within: float) -> list[tuple[str, str, float]]:
        self.calls.append(f"nodes {within:g}")
        return self.peers


def node_on(store: ScriptedStore) -> Node:
    return Node(cast(PostgresStore, store), "n1", "ws://n1/ws", LEASE)


def test_a_default_node_id_is_the_host_the_process_and_a_random_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(f"{NODES}.socket", host_named("web 1/eu"))
    monkeypatch.setattr(f"{NODES}.os", SimpleNamespace(getpid=lambda: 4242))
    host, pid, tail = default_node_id().rsplit("-", 2)
    assert (host, pid, len(tail)) == ("web-1-eu", "4242", 6)
    assert default_node_id() != default_node_id()
    monkeypatch.setattr(f"{NODES}.socket", host_named("x" * 60))
    assert default_node_id().startswith("x" * 40 + "-4242-")
    monkeypatch.setattr(f"{NODES}.socket", host_named(""))
    assert default_node_id().startswith("node-4242-")


async def test_start_registers_fences_and_reads_the_peers_stop_leaves_once() -> None:
    store = ScriptedStore()
    node = node_on(store)
    await node.stop()  # never started: nothing to give up
    assert store.calls == []
    await node.start()
    assert store.calls == ["become n1 ws://n1/ws", "nodes 27"]
    assert node.peers == ("ws://a/ws",)
    assert store.on_lease_lost is not None
    await node.stop()
    await node.stop()
    assert store.calls[2:] == ["leave"]


async def test_a_stop_the_store_refuses_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = ScriptedStore()
    store.fail_leave = True
    node = node_on(store)
    await node.start()
    with caplog.at_level(logging.WARNING, "zonekeep.server"):
        await node.stop()
    assert caplog.messages == ["node n1: could not give its leases up: the database is gone"]


async def test_acquire_counts_what_it_took_and_what_it_took_over() -> None:
    store = ScriptedStore()
    node = node_on(store)
    store.epochs["e1"] = 1
    await node.acquire("e1")
    store.lease = Held("e2", 3)
    store.epochs["e2"] = 3
    await node.acquire("e2")
    assert (node.taken, node.taken_over, node.moved, node.held) == (2, 1, 0, 2)
    assert store.calls == ["take e1 9", "take e2 9"]


async def test_acquire_held_elsewhere_is_moved_with_the_url() -> None:
    store = ScriptedStore()
    store.lease = Owner("n2", "wss://n2.example/ws", 4.0)
    node = node_on(store)
    with pytest.raises(ProtocolError) as info:
        await node.acquire("e1")
    assert (info.value.name, info.value.url) == ("moved", "wss://n2.example/ws")
    assert info.value.message == (
        "Encounter 'e1' is served by another node (n2); connect to wss://n2.example/ws."
    )
    assert (node.taken, node.moved) == (0, 1)


async def test_acquire_while_handed_over_or_on_a_broken_store_is_store_unavailable() -> None:
    store = ScriptedStore()
    store.lease = Owner("n2", "", 4.0)  # the holder unregistered its URL: in between
    node = node_on(store)
    with pytest.raises(ProtocolError) as info:
        await node.acquire("e1")
    assert (info.value.name, info.value.message) == (
        "store_unavailable",
        "The encounter is being handed over between nodes; try again in a moment.",
    )
    store.lease = StoreError("connection refused")
    with pytest.raises(ProtocolError) as info:
        await node.acquire("e1")
    # The cause is the operator's (logged), never the player's: the same refusal.
    assert (info.value.name, info.value.message) == (
        "store_unavailable",
        "The encounter is being handed over between nodes; try again in a moment.",
    )
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert (node.taken, node.moved) == (0, 0)


async def test_release_gives_the_lease_up_and_a_failure_is_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = ScriptedStore()
    node = node_on(store)
    await node.release("e1")
    store.fail_release = True
    with caplog.at_level(logging.WARNING, "zonekeep.server"):
        await node.release("e2")
    assert store.calls == ["release e1", "release e2"]
    assert caplog.messages == ["encounter e2: its lease was not released: the database is gone"]


async def test_a_fenced_append_gives_the_room_up() -> None:
    store = ScriptedStore()
    node = node_on(store)
    await node.start()
    assert store.on_lease_lost is not None
    store.on_lease_lost("e1")  # no registry listening yet: counted only
    lost: list[str] = []
    node.on_lost = lost.append
    store.on_lease_lost("e2")
    assert (node.lost, lost) == (2, ["e2"])


async def test_the_renewal_loop_every_third_of_a_lease(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Every ``LEASE / 3`` seconds: renew, read the peers; a lost lease gives its room up;
    a store error or a bug is counted, logged, and the next try comes a quarter of that
    later (the lease is running out)."""
    store = ScriptedStore()
    node = node_on(store)
    lost: list[tuple[float, str]] = []
    node.on_lost = lambda eid: lost.append((trio.current_time(), eid))
    store.renewals = [[], ["e1", "e2"], StoreError("timeout"), RuntimeError("a bug"), ["e3"]]
    store.peers = [("n1", "ws://n1/ws", 0.0), ("n2", "ws://n2/ws", 1.0)]
    start = trio.current_time()
    # 15 s of trio's (virtual) clock: renewals at 3, 6 and 9 s, the two failures' retries
    # 0.75 s apart (9.75, 10.5 s), then 3 s apart again (13.5 s).
    with caplog.at_level(logging.WARNING, "zonekeep.server"), trio.move_on_at(start + 15):
        await node.run()
    assert [(round(t - start, 6), eid) for t, eid in lost] == [
        (6.0, "e1"),
        (6.0, "e2"),
        (10.5, "e3"),
    ]
    assert store.calls.count("renew 9") == 6
    assert store.calls.count("nodes 27") == 4  # not after the two failed renewals
    assert node.peers == ("ws://n1/ws", "ws://n2/ws")
    assert (node.lost, node.renew_failures) == (3, 2)
    assert [r.levelname for r in caplog.records] == [
        "WARNING",
        "WARNING",
        "ERROR",
        "ERROR",
        "WARNING",
    ]
    assert caplog.messages[2] == "node n1: the leases could not be renewed: timeout"
    assert caplog.messages[3] == "node n1: renewing the leases failed"
    assert caplog.records[3].exc_info is not None


async def test_a_slow_renewal_is_logged(
    autojump_clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = ScriptedStore()
    node = node_on(store)
    store.renewals = [["e9"]]  # and a lease lost with no registry listening: counted
    store.renew_seconds = 4.0  # the renewal takes 4 s, over LEASE / 3
    monkeypatch.setattr(f"{NODES}.time", SimpleNamespace(monotonic=trio.current_time))
    # One renewal (from 3 s to 7 s of trio's virtual clock), then the loop is stopped.
    end = trio.current_time() + 7.5
    with caplog.at_level(logging.WARNING, "zonekeep.server"), trio.move_on_at(end):
        await node.run()
    assert caplog.messages == [
        "node n1: renewing the leases took 4.0 s",
        "encounter e9: its lease was taken by another node",
    ]
    assert node.lost == 1
