"""A node (``zonekeep serve`` on PostgreSQL) behind a TCP proxy that injects faults
between it and the database: a commit whose reply is lost, a commit that never
arrives, and a silent network cut.

- **A lost reply** (the connection drops right after PostgreSQL committed): the node
  reads the log back, finds the events stored and goes on as if the reply had come;
  the GM gets the command's result, the members see the event, the next command takes
  the next seq, ``/healthz`` is ok and a join shows the right seq. A commit that never
  arrived is found not stored: refused, nothing changed, and play goes on.
- **A silent cut** (the proxy stops forwarding, the sockets stay open): the command
  under way is answered within the store's time-out, not hung; ``/healthz`` turns 503
  naming the stale lease renewals; the room is given up (its members get
  ``encounter_closed``, ``moved``); a join is refused with the documented "being handed
  over"; once the network is back the node is healthy again and the encounter is where
  it was.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import helpers
import pytest
import trio
from e2e_support import creatures
from nodes_support import NodeProcess, events, until
from postgres_support import fresh_schema
from test_observability import http_get

from zonekeep.protocol.client import ClientError, ZonekeepClient, connect
from zonekeep.server._nodes import HANDED_OVER

#: How psycopg ends a transaction: the simple query ``COMMIT``.
COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"

Fault = Literal["lose_reply", "drop_commit"]


class _Link:
    """One connection through the proxy: the node's side and the database's."""

    def __init__(self, proxy: FaultyProxy, client: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.server: socket.socket | None = None
        #: The armed marker this connection sent: its next COMMIT is the one to hit.
        self.marked: bytes | None = None
        #: The reply to the COMMIT forwarded is to be swallowed (then the link dropped).
        self.swallow = False

    def start(self) -> None:
        if self.proxy.silent:  # accepted, never answered
            threading.Thread(target=self._drain, args=(self.client,), daemon=True).start()
            return
        try:
            self.server = socket.create_connection(
                self.proxy.upstream, timeout=helpers.deadline(10)
            )
            self.server.settimeout(None)
        except OSError:
            self.close()
            return
        for source, target, look in (
            (self.client, self.server, self._to_database),
            (self.server, self.client, self._to_node),
        ):
            threading.Thread(target=self._pump, args=(source, target, look), daemon=True).start()

    def _drain(self, sock: socket.socket) -> None:
        try:
            while sock.recv(65536):
                pass
        except OSError:
            pass

    def _pump(
        self, source: socket.socket, target: socket.socket, look: Callable[[bytes], bool]
    ) -> None:
        """Forward ``source`` to ``target`` until either closes (nothing while the proxy
        is silent); ``look`` sees each chunk first: ``False`` drops the link there."""
        try:
            while data := source.recv(65536):
                if self.proxy.silent:
                    continue
                if not look(data):
                    self.proxy.hit.set()
                    break
                target.sendall(data)
        except OSError:
            pass
        self.close()

    def _to_database(self, data: bytes) -> bool:
        """Hit the armed COMMIT: drop it, or let it through and swallow its reply."""
        fault = self.proxy.armed
        if fault is not None and fault[0] in data:
            self.marked = fault[0]
        if fault is not None and self.marked == fault[0] and COMMIT in data:
            self.proxy.armed = None
            if fault[1] == "drop_commit":
                return False
            self.swallow = True
        return True

    def _to_node(self, data: bytes) -> bool:
        return not self.swallow  # PostgreSQL committed; the node never hears it

    def close(self) -> None:
        for sock in (self.client, self.server):
            if sock is not None:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


class FaultyProxy:
    """A TCP forwarder on a loopback port in front of PostgreSQL (threads of its own, so
    it runs whatever the test's trio loop does)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.links: list[_Link] = []
        #: The fault for the next COMMIT of a connection that sent the marker.
        self.armed: tuple[bytes, Fault] | None = None
        self.hit = threading.Event()
        #: Forward nothing (a silent cut): bytes are read and dropped, nothing answers.
        self.silent = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            link = _Link(self, client)
            self.links.append(link)
            link.start()

    def url(self, store: str) -> str:
        """``store``'s URL (a test schema's), through this proxy."""
        parts = urlsplit(store)
        user = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{self.port}"))

    def arm(self, marker: bytes, fault: Fault) -> None:
        self.hit.clear()
        self.armed = (marker, fault)

    def heal(self) -> None:
        """The network is back: the connections made or cut off meanwhile are closed
        (their owners connect again), new ones are forwarded."""
        self.silent = False
        for link in self.links:
            link.close()
        self.links.clear()

    def close(self) -> None:
        self.listener.close()
        self.heal()


@contextmanager
def proxied_store() -> Iterator[tuple[str, str, FaultyProxy]]:
    """A fresh store: its direct URL, its URL through a :class:`FaultyProxy`, the proxy."""
    with fresh_schema() as store:
        parts = urlsplit(store)
        proxy = FaultyProxy((parts.hostname or "127.0.0.1", parts.port or 5432))
        try:
            yield store, proxy.url(store), proxy
        finally:
            proxy.close()


async def start_node(url: str, tmp_path: Path, lease: float) -> NodeProcess:
    return await trio.to_thread.run_sync(NodeProcess, url, "a", tmp_path, lease)


async def healthz(node: NodeProcess) -> tuple[int, dict[str, Any]]:
    status, _, body = await http_get(node.port, "/healthz")
    return status, json.loads(body)


def note_texts(store: str, eid: str) -> dict[int, str]:
    return {
        seq: event["note"]["text"]
        for seq, data in events(store, eid)
        if (event := json.loads(data))["type"] == "note_added"
    }


async def table(node: NodeProcess, gm: ZonekeepClient, alice: ZonekeepClient) -> tuple[str, str]:
    """An encounter on ``node`` with ``gm`` at it and ``alice`` joined: its id and GM token."""
    created = await gm.create_encounter("Faults", "tavern", creatures())
    eid = created["encounter"]
    seat = await gm.request("create_seat", encounter=eid, player="alice")
    await alice.join(eid, seat["token"])
    return eid, created["gm_token"]


async def test_a_commit_whose_reply_is_lost_is_read_back_and_the_encounter_plays_on(
    tmp_path: Path,
) -> None:
    with proxied_store() as (store, through, proxy):
        node = await start_node(through, tmp_path, 30.0)
        try:
            with trio.fail_after(helpers.deadline(60)):
                async with (
                    connect(node.url, timeout=helpers.deadline(15)) as gm,
                    connect(node.url, timeout=helpers.deadline(15)) as alice,
                ):
                    eid, token = await table(node, gm, alice)
                    before = await gm.command(eid, "add_note", text="before")

                    proxy.arm(b"the reply to this is lost", "lose_reply")
                    lost = await gm.command(eid, "add_note", text="the reply to this is lost")
                    assert proxy.hit.is_set()
                    assert lost["first_seq"] == before["last_seq"] + 1
                    seen: list[int] = []
                    while not seen or seen[-1] < lost["first_seq"]:
                        seen.append((await alice.notification("event"))["seq"])
                    after = await gm.command(eid, "add_note", text="after")
                    assert after["first_seq"] == lost["last_seq"] + 1
                    assert (await healthz(node))[:1] == (200,)
                    assert (await healthz(node))[1]["status"] == "ok"
                    async with connect(node.url, timeout=helpers.deadline(15)) as late:
                        joined = await late.join(eid, token)
                    assert joined["seq"] == after["last_seq"]

                    # A COMMIT that never reaches PostgreSQL: nothing was stored, and
                    # the GM is told so; the next command takes that seq.
                    proxy.arm(b"this commit never arrives", "drop_commit")
                    with pytest.raises(ClientError) as refused:
                        await gm.command(eid, "add_note", text="this commit never arrives")
                    assert proxy.hit.is_set()
                    assert refused.value.name == "store_unavailable"
                    again = await gm.command(eid, "add_note", text="and on")
                    assert again["first_seq"] == after["last_seq"] + 1
                    assert (await healthz(node))[0] == 200
        finally:
            await trio.to_thread.run_sync(node.stop)
        texts = note_texts(store, eid)
        assert [seq for seq, _ in events(store, eid)] == list(range(1, again["last_seq"] + 1))
        assert texts[lost["first_seq"]] == "the reply to this is lost"
        assert texts[again["first_seq"]] == "and on"
        assert "this commit never arrives" not in texts.values()


LEASE = 3.0


async def test_a_silent_cut_is_reported_and_the_rooms_are_given_up_not_hung(
    tmp_path: Path,
) -> None:
    with proxied_store() as (store, through, proxy):
        node = await start_node(through, tmp_path, LEASE)
        try:
            with trio.fail_after(helpers.deadline(90)):
                async with (
                    connect(node.url, timeout=helpers.deadline(15), follow_moved=False) as gm,
                    connect(node.url, timeout=helpers.deadline(15), follow_moved=False) as alice,
                ):
                    eid, token = await table(node, gm, alice)
                    noted = await gm.command(eid, "add_note", text="before the cut")
                    assert (await healthz(node))[0] == 200

                    proxy.silent = True
                    outcome: dict[str, BaseException] = {}

                    async def into_the_void() -> None:
                        try:
                            await gm.command(eid, "add_note", text="into the void")
                        except ClientError as exc:
                            outcome["error"] = exc

                    async with trio.open_nursery() as waiting:
                        waiting.start_soon(into_the_void)
                        # The node says it is not healthy, and why ...
                        health: list[tuple[int, dict[str, Any]]] = []

                        async def unhealthy() -> bool:
                            health.append(await healthz(node))
                            return health[-1][0] == 503

                        with trio.fail_after(helpers.deadline(3 * LEASE)):
                            while not await unhealthy():
                                await trio.sleep(0.1)
                        problems = health[-1][1]["problems"]
                        assert any("lease renewals are stale" in p for p in problems), problems
                        status, _, body = await http_get(node.port, "/readyz")
                        assert (status, json.loads(body)) == (
                            503,
                            {"status": "cut off from the store"},
                        )
                        # ... gives the room up, telling its members ...
                        with trio.fail_after(helpers.deadline(3 * LEASE)):
                            closed = await alice.notification("encounter_closed")
                        assert (closed["encounter"], closed["reason"]) == (eid, "moved")
                        # ... and answers the command under way instead of hanging on.
                        await until(
                            lambda: "error" in outcome,
                            helpers.deadline(3 * LEASE),
                            "the command under way is answered",
                        )
                    error = outcome["error"]
                    assert isinstance(error, ClientError)
                    assert error.name in ("store_unavailable", "not_joined"), error
                    # A join meanwhile: the documented refusal, nothing of the database.
                    with pytest.raises(ClientError) as refused:
                        await gm.join(eid, token)
                    assert (refused.value.name, refused.value.message) == (
                        "store_unavailable",
                        HANDED_OVER,
                    )

                    proxy.heal()
                    await until_healthy(node)
                    assert (await http_get(node.port, "/readyz"))[0] == 200
                    joined = await gm.join(eid, token)
                    assert joined["seq"] == noted["last_seq"]
                    resumed = await gm.command(eid, "add_note", text="after the cut")
                    assert resumed["first_seq"] == noted["last_seq"] + 1
        finally:
            await trio.to_thread.run_sync(node.stop)
        texts = note_texts(store, eid)
        assert [seq for seq, _ in events(store, eid)] == list(range(1, resumed["last_seq"] + 1))
        assert "into the void" not in texts.values()


async def until_healthy(node: NodeProcess) -> None:
    with trio.fail_after(helpers.deadline(30)):
        while (await healthz(node))[0] != 200:
            await trio.sleep(0.2)
