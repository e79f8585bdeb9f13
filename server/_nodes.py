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

from ._postgres import Held, PostgresStore
from ._store import StoreError

log = logging.getLogger("zonekeep.server")

#: Seconds a lease lasts unless renewed (``lease_seconds``).
DEFAULT_LEASE_SECONDS = 10.0


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

    @property
    def held(self) -> int:
        """How many leases this node holds now."""
        return len(self.store.epochs)

    async def start(self) -> None:
        """Register the node (its row replaces one of the same id) and start fencing."""
        await self.store.become_node(self.id, self.url)
        self.store.on_lease_lost = self._fenced
        self._started = True
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
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The encounter's lease could not be taken: {exc}"
            ) from None
        if isinstance(found, Held):
            self.taken += 1
            if found.epoch > 1:
                self.taken_over += 1
            return
        if not found.url:
            raise ProtocolError(
                "store_unavailable",
                "The encounter is being handed over between nodes; try again in a moment.",
            )
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
        """The store refused an append of ``encounter``: another node holds it now."""
        self.lost += 1
        log.warning("encounter %s: another node took its lease; giving it up", encounter)
        if self.on_lost is not None:
            self.on_lost(encounter)

    async def run(self) -> None:
        """Renew the leases (and the heartbeat) every third of ``lease_seconds``; give up
        the rooms whose lease another node took."""
        interval = self.lease_seconds / 3
        while True:
            await trio.sleep(interval)
            started = time.monotonic()
            try:
                lost = await self.store.renew_leases(self.lease_seconds)
                await self._look_at_peers()
            except StoreError as exc:
                self.renew_failures += 1
                log.error("node %s: the leases could not be renewed: %s", self.id, exc)
                continue
            except Exception:  # a bug: logged, and the next renewal is in a moment
                self.renew_failures += 1
                log.exception("node %s: renewing the leases failed", self.id)
                continue
            took = time.monotonic() - started
            if took > interval:
                log.warning("node %s: renewing the leases took %.1f s", self.id, took)
            for encounter in lost:
                self.lost += 1
                log.warning("encounter %s: its lease was taken by another node", encounter)
                if self.on_lost is not None:
                    self.on_lost(encounter)
