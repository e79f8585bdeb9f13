"""Several nodes on one PostgreSQL store: this server's node, and its encounter leases.

A server on a PostgreSQL store is a **node** (docs/scale-out.md). It registers itself in
the store (``nodes``: its id, its websocket URL, a heartbeat) and serves an encounter
only while it holds the encounter's **lease** (``leases``: the node, an epoch, an expiry
on the database's clock):

- A node takes the lease when it creates an encounter or loads one on a ``join``, if no
  other node holds a live one (never held, released, expired, or its node unregistered);
  each taking raises the epoch. When another node holds it, the ``join`` is answered
  with the error ``moved`` and that node's URL (:meth:`Node.acquire`).
- While it serves encounters, the node renews its leases (and its heartbeat) every
  third of ``lease_seconds`` (:meth:`Node.run`). A lease it finds taken, or an append
  the store's fence refused (the epoch is no longer the lease's), makes it give the
  room up at once: its members get ``encounter_closed`` (``moved``) and join again.
- It gives a lease up when it unloads the encounter, and all of them when it stops.
- A node cut off from the database (a silent network cut, a database that stopped
  answering) never hangs while saying it is healthy: every store call is given up after
  at most ``lease_seconds`` (a renewal after two thirds of it), ``/healthz`` reports the
  renewals stale once none succeeded for two thirds of the lease (:meth:`Node.health`),
  and once none succeeded for a whole lease while they kept failing the node gives every
  room up (its members get ``encounter_closed``, ``moved``): another node may hold them
  by then. (A node that was paused tries a renewal first: it finds out whether its
  leases are still its own.)

The fence itself is in the store (``PostgresStore``): every append carries the epoch
and is written only if the lease still has it, in the append's own transaction. So a
node that was paused or cut off past its lease can never append again, however late
it wakes up, and no seq is written twice.

A server on SQLite or in memory has no node: the registry's ``node`` is ``None`` and
none of this runs.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable

import trio

from zonekeep.protocol import ProtocolError

from . import _metrics
from ._postgres import Held, PostgresStore
from ._store import StoreError

log = logging.getLogger("zonekeep.server")

#: Seconds a lease lasts unless renewed (``lease_seconds``).
DEFAULT_LEASE_SECONDS = 10.0

#: The refusal of a ``join`` whose lease cannot be taken right now (another node is
#: taking it, or the store did not answer): ``store_unavailable``, and the client retries.
HANDED_OVER = "The encounter is being handed over between nodes; try again in a moment."


def default_node_id() -> str:
    """A node id when the operator gave none: this machine's name, the process id and a
    few random letters (two servers of one process are two nodes)."""
    host = "".join(c if c.isalnum() or c in "._-" else "-" for c in socket.gethostname())
    return f"{host[:40] or 'node'}-{os.getpid()}-{secrets.token_hex(3)}"


class Node:
    """This server as one node of several over ``store``."""

    def __init__(self, store: PostgresStore, node_id: str, url: str, lease_seconds: float) -> None:
        self.store = store
        self.id = node_id
        #: The websocket URL other nodes send this node's clients to (``moved``).
        self.url = url
        self.lease_seconds = lease_seconds
        #: Called with an encounter whose lease this node lost (the registry unloads it).
        self.on_lost: Callable[[str], None] | None = None
        #: The websocket URLs of the live nodes as of the last renewal (their origins
        #: may open websockets here: the web table follows ``moved`` across nodes).
        self.peers: tuple[str, ...] = ()
        #: Counters for ``/metrics`` (this node's own).
        self.taken = 0
        self.taken_over = 0
        self.moved = 0
        self.lost = 0
        self.renew_failures = 0
        self._started = False
        #: When the last renewal that succeeded started (``time.monotonic()``), when the
        #: last one failed, and when the one under way started (``None``: none).
        self.renewed_at = time.monotonic()
        self._failed_at: float | None = None
        self._trying_since: float | None = None
        store.call_timeout = min(store.call_timeout, lease_seconds)

    @property
    def held(self) -> int:
        """How many leases this node holds now."""
        return len(self.store.epochs)

    async def start(self) -> None:
        """Register the node (its row replaces one of the same id) and start fencing."""
        started = time.monotonic()
        await self.store.become_node(self.id, self.url)
        self.store.on_lease_lost = self._fenced
        self._started = True
        self.renewed_at = started
        await self._look_at_peers()
        log.info("node %s at %s: encounter leases of %g s", self.id, self.url, self.lease_seconds)

    async def stop(self) -> None:
        """Give every lease up and unregister (a clean stop): others may take over now."""
        if not self._started:
            return
        self._started = False
        try:
            await self.store.leave()
        except StoreError as exc:
            log.warning("node %s: could not give its leases up: %s", self.id, exc)

    async def acquire(self, encounter: str) -> None:
        """Take ``encounter``'s lease for this node, or refuse: ``moved`` (with the URL of
        the node that holds it) or ``store_unavailable``."""
        try:
            found = await self.store.take_lease(encounter, self.lease_seconds)
        except StoreError as exc:  # for the operator's log, never the player's screen
            log.warning("encounter %s: its lease could not be taken: %s", encounter, exc)
            raise ProtocolError("store_unavailable", HANDED_OVER) from None
        if isinstance(found, Held):
            self.taken += 1
            if found.epoch > 1:
                self.taken_over += 1
            return
        if not found.url:
            raise ProtocolError("store_unavailable", HANDED_OVER)
        self.moved += 1
        raise ProtocolError(
            "moved",
            f"Encounter {encounter!r} is served by another node ({found.node}); "
            f"connect to {found.url}.",
            url=found.url,
        )

    async def release(self, encounter: str) -> None:
        """Give ``encounter``'s lease up (it was unloaded here)."""
        try:
            await self.store.release_lease(encounter)
        except StoreError as exc:  # then it expires by itself
            log.warning("encounter %s: its lease was not released: %s", encounter, exc)

    async def _look_at_peers(self) -> None:
        self.peers = tuple(url for _, url, _ in await self.store.nodes(3 * self.lease_seconds))

    def _fenced(self, encounter: str) -> None:
        """The store gave ``encounter`` up: an append was refused (another node holds it
        now) or its outcome could not be known."""
        self.lost += 1
        log.warning("encounter %s: this node no longer holds its lease; giving it up", encounter)
        if self.on_lost is not None:
            self.on_lost(encounter)

    def health(self) -> list[str]:
        """Why this node is not healthy (empty: it is): its lease renewals are stale when
        none succeeded for two thirds of ``lease_seconds`` (one was due a third ago)."""
        if not self._started:
            return []
        since = time.monotonic() - self.renewed_at
        if since <= 2 * self.lease_seconds / 3:
            return []
        return [
            f"lease renewals are stale: the last one that succeeded was {since:.1f} s ago "
            f"(leases last {self.lease_seconds:g} s)"
        ]

    def _give_all_up(self) -> None:
        """No renewal succeeded for a whole lease: every lease may be another node's by
        now, so give every room up (its members are told ``moved`` and join again)."""
        held = list(self.store.epochs)
        if held:
            log.error(
                "node %s: no lease renewal for %.1f s; giving up its %d encounters",
                self.id,
                time.monotonic() - self.renewed_at,
                len(held),
            )
        for encounter in held:
            self.store.epochs.pop(encounter, None)
            self._fenced(encounter)

    async def run(self) -> None:
        """Renew the leases (and the heartbeat) every third of ``lease_seconds``, each
        renewal given up after two thirds of it, and soon again after a failure; give up
        the rooms whose lease another node took, and every room once no renewal
        succeeded for a whole lease (watched beside the renewals, so that a renewal
        waiting for the store never delays it)."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_renewals)
            await self._renew()

    async def _watch_renewals(self) -> None:
        """Give every room up once no renewal succeeded for a whole lease while they kept
        failing (or one hangs): not merely because time passed, as for a node that was
        paused, whose next renewal tells whether its leases are still its own."""
        while True:
            await trio.sleep(self.lease_seconds / 12)
            now = time.monotonic()
            if now - self.renewed_at < self.lease_seconds:
                continue
            failing = self._failed_at is not None and self._failed_at > self.renewed_at
            trying = self._trying_since
            if failing or (trying is not None and now - trying >= 2 * self.lease_seconds / 3):
                self._give_all_up()

    def _failed(self, why: str, *, bug: bool = False) -> None:
        self.renew_failures += 1
        self._failed_at = time.monotonic()
        log.error("node %s: %s", self.id, why, exc_info=bug)

    async def _renew(self) -> None:
        interval = self.lease_seconds / 3
        wait = interval
        while True:
            await trio.sleep(wait)
            wait = interval / 4  # unless it succeeds: the lease is running out
            started = self._trying_since = time.monotonic()
            try:
                lost = await self.store.renew_leases(self.lease_seconds, timeout=2 * interval)
                self.renewed_at = started
                wait = interval
                # A renewal is a committed write: the store commits again (/healthz).
                _metrics.current().store_error = None
                await self._look_at_peers()
            except StoreError as exc:
                self._failed(f"the leases could not be renewed: {exc}")
                continue
            except Exception:  # a bug: logged, and the next renewal is in a moment
                self._failed("renewing the leases failed", bug=True)
                continue
            finally:
                self._trying_since = None
            took = time.monotonic() - started
            if took > interval:
                log.warning("node %s: renewing the leases took %.1f s", self.id, took)
            for encounter in lost:
                self.lost += 1
                log.warning("encounter %s: its lease was taken by another node", encounter)
                if self.on_lost is not None:
                    self.on_lost(encounter)
