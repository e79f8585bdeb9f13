"""The zonekeep server: the listener, rooms, connections and shutdown, wired together.

``ZonekeepServer.run`` owns one nursery. The websocket listener, every room's loop
(``_registry``), every connection (``_connection``), the flusher and the keepalive
sweep live under it; a crash in one room is contained in its task. Each connection
gets a :class:`~._methods.Client` that answers its requests.
"""

from __future__ import annotations

import http
import json
import logging
import signal
from pathlib import Path
from typing import Any

import trio
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

import zonekeep.sdk as sdk
from zonekeep.protocol import ClosingNotification, CreateEncounterParams
from zonekeep.sdk import Arena, EncounterOptions, Entropy
from zonekeep.sdk.engine import Engine

from ._config import (
    VERSION,
    Limits,
    ServerConfig,
    default_arena_dirs,
    default_data_dir,
    load_config,
)
from ._connection import Connection, Flusher, WebsocketServer, sweep
from ._encounter_file import EncounterFile
from ._gc import GcUpkeep
from ._methods import Client, Methods
from ._registry import Registry
from ._room import Room
from ._static import forbidden, serve_static
from ._store import EventStore, InMemoryStore
from ._welcome import Welcome
from ._wire import notification_text

log = logging.getLogger("zonekeep.server")

__all__ = [
    "VERSION",
    "Limits",
    "ServerConfig",
    "ZonekeepServer",
    "default_arena_dirs",
    "default_data_dir",
    "load_config",
    "serve_until_signalled",
]


class ZonekeepServer:
    """Rooms by encounter id, the engine, the store; ``run`` serves until cancelled."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        *,
        engine: Engine | None = None,
        store: EventStore | None = None,
        entropy: Entropy | None = None,
    ) -> None:
        self.config = config or ServerConfig()
        self.engine = engine or Engine.from_config(
            self.config.plugins_enabled, self.config.plugins_disabled
        )
        self.engine.set_hook_budget(
            self.config.plugin_call_budget_seconds or None, self.config.plugin_overrun_limit
        )
        self.registry = Registry(
            self.config, self.engine, store if store is not None else InMemoryStore(), entropy
        )
        self._open_store = store is None and self.config.store == "sqlite"
        self._owns_store = False
        self.welcome = Welcome(self.config, self.engine, lambda: self.registry.bundled_arenas())
        self.methods = Methods(self.registry, self.welcome.text)
        #: The open connections.
        self.connections: set[Connection] = set()
        self.port: int | None = None
        self._nursery: trio.Nursery | None = None
        self._listener: WebsocketServer | None = None
        self._all_gone = trio.Event()
        #: Encounters brought back at start: none since encounters load on their first
        #: join (kept for callers of the earlier versions).
        self.restored = 0
        self.flusher = Flusher()

    # -- the registry's, under their old names ---------------------------------------------------

    @property
    def store(self) -> EventStore:
        """The event store (set by :meth:`run` from the config when not given)."""
        return self.registry.store

    @property
    def rooms(self) -> dict[str, Room]:
        return self.registry.rooms

    @property
    def entropy(self) -> Entropy | None:
        return self.registry.entropy

    def bundled_arenas(self) -> dict[str, Path]:
        return self.registry.bundled_arenas()

    async def create_room(
        self,
        name: str,
        arena: Arena,
        creatures: list[sdk.Creature],
        options: EncounterOptions | None = None,
    ) -> tuple[Room, str]:
        """Create an encounter and start its loop; returns the room and its GM token."""
        return await self.registry.create_room(name, arena, creatures, options)

    async def create_room_from_request(self, params: CreateEncounterParams) -> tuple[Room, str]:
        return await self.registry.create_room_from_request(params)

    async def open_encounter_file(self, spec: EncounterFile) -> tuple[Room, str]:
        """Create an encounter from a file and run its setup; returns the room and GM token."""
        return await self.registry.open_encounter_file(spec)

    # -- serving ----------------------------------------------------------------------------------

    def origin_allowed(self, origin: str | None, host: str | None) -> bool:
        """Whether a handshake whose ``Origin`` header is ``origin`` (``None``: absent) and
        whose ``Host`` header is ``host`` may open a websocket (see
        ``ServerConfig.allowed_origins``)."""
        if origin is None:
            return True
        config = self.config
        wanted = _origin_key(origin)
        if config.allowed_origins is not None:
            return "*" in config.allowed_origins or wanted in {
                _origin_key(o) for o in config.allowed_origins
            }
        own = {f"{config.host}:{self.port}".lower()}
        if host:
            own.add(_host_key(host, wanted))
        if config.public_url:
            own.add(_origin_key(config.public_url))
        return wanted in own

    def _http(self, request: Request) -> Response | None:
        if request.method == "GET" and not self.origin_allowed(
            request.headers.get("Origin"), request.headers.get("Host")
        ):
            return forbidden("This origin may not open a connection to this server.")
        if request.path == "/healthz":
            body = json.dumps(
                {
                    "status": "ok",
                    "encounters": len(self.rooms),
                    "connections": len(self.connections),
                }
            ).encode()
            headers = Headers(
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return Response(http.HTTPStatus.OK.value, "OK", headers, body)
        return serve_static(request)  # the web table under /table/; None for anything else

    async def _handler(self, connection: Connection) -> None:
        client = Client(self.methods, connection, self.config.limits, connection.address)
        connection.on_close = client.leave_all
        self.connections.add(connection)
        try:
            await connection.serve(client.handle)
        finally:
            self.connections.discard(connection)
            if not self.connections:
                self._all_gone.set()

    async def open_store(self) -> None:
        """Open the configured store (once); :class:`StoreError` if it cannot be used."""
        if self._open_store:
            from ._sqlite import SqliteStore

            store = await SqliteStore.open(
                self.config.data_dir / "zonekeep.sqlite3", durability=self.config.durability
            )
            self.registry.store = store
            self._open_store = False
            self._owns_store = True

    async def run(
        self, *, task_status: trio.TaskStatus[ZonekeepServer] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen and serve until cancelled; ``task_status`` reports the server once listening."""
        listeners = await trio.open_tcp_listeners(self.config.port, host=self.config.host)
        self.port = listeners[0].socket.getsockname()[1]
        await self.open_store()
        try:
            await self._serve(listeners, task_status)
        finally:
            if self._owns_store:  # we opened it, we close it (folding the WAL into the file)
                self._owns_store = False
                with trio.CancelScope(shield=True):
                    await self.store.aclose()

    async def _serve(self, listeners: list[trio.SocketListener], task_status: Any) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = self.registry.nursery = nursery
            await self.registry.start()  # nothing is loaded: each encounter on its first join
            listener = WebsocketServer(self._handler, self._http, self.config.limits, self.flusher)
            self._listener = await nursery.start(listener.serve, listeners)
            nursery.start_soon(sweep, self.connections, self.config.limits)
            nursery.start_soon(self.flusher.run)
            task_status.started(self)

    async def shutdown(self, reason: str = "the server is shutting down") -> None:
        """Say ``closing`` to every client, answer the commands in flight (reading no new
        ones), let the rooms finish what is queued, then stop listening and close every
        connection still open with 1001."""
        closing = notification_text(ClosingNotification(reason))
        for connection in list(self.connections):
            connection.begin_shutdown(closing)
        with trio.move_on_after(10):
            if self.connections:
                self._all_gone = trio.Event()
                await self._all_gone.wait()  # each handler ends once its client is told
            await self.registry.drain()
        if self._listener is not None:
            self._listener.stop_listening()
        with trio.move_on_after(5):
            for connection in list(self.connections):
                connection.close(1001, "going away")
            if self.connections:
                self._all_gone = trio.Event()
                await self._all_gone.wait()
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()


_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}


def _origin_key(origin: str) -> str:
    """``host:port`` of an origin or URL, lower case, with the scheme's default port
    filled in (``https://Example.org`` -> ``example.org:443``); the text itself when it
    is not a URL (``null``), which then matches nothing but itself."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep:
        return origin.strip().lower()
    hostport = rest.split("/", 1)[0].lower()
    if hostport.rsplit(":", 1)[-1].isdigit() and not hostport.endswith("]"):
        return hostport
    return f"{hostport}:{_DEFAULT_PORTS.get(scheme.lower(), '')}"


def _host_key(host: str, origin_key: str) -> str:
    """``host:port`` of a ``Host`` header. Without a port it is the scheme's default
    port (a browser leaves it out in both headers): the origin's, if that is 80 or 443."""
    host = host.strip().lower()
    if host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]"):
        return host
    port = origin_key.rsplit(":", 1)[-1]
    return f"{host}:{port if port in ('80', '443') else ''}"


async def serve_until_signalled(server: ZonekeepServer, on_ready: Any = None) -> None:
    """Run ``server`` until SIGINT or SIGTERM, then shut it down gracefully."""
    await server.open_store()  # a store that cannot be opened stops us here, plainly
    upkeep = GcUpkeep(server.config.gc_freeze_seconds, server.config.gc_full_seconds)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            upkeep.start()  # after the restore: what it built is long-lived
            nursery.start_soon(upkeep.run)
            if on_ready is not None:
                await on_ready(server)
            async for _sig in signals:
                await server.shutdown()
                nursery.cancel_scope.cancel()
                break
