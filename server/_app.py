"""The zonekeep server: the listener, rooms, connections and shutdown, wired together.

``ZonekeepServer.run`` owns one nursery. The websocket listener, every room's loop
(``_registry``), every connection (``_connection``), the flusher and the keepalive
sweep live under it; a crash in one room is contained in its task. Each connection
gets a :class:`~._methods.Client` that answers its requests.

Besides websockets, the port answers plain HTTP: ``/healthz`` (liveness), ``/readyz``
(readiness), ``/metrics`` (Prometheus, see ``_metrics``) and the web table
(docs/observability.md); ``GET`` only, any other method gets 405 on every path.

A connection from the loopback is the operator's on a server with no key only when its
handshake's ``Host`` names the loopback or ``public_url``'s host (:meth:`local_host`):
a page on a DNS name rebound to 127.0.0.1 comes from the loopback too.
"""

from __future__ import annotations

import hashlib
import hmac
import http
import ipaddress
import json
import logging
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trio
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

import zonekeep.sdk as sdk
from zonekeep.protocol import METHODS, ClosingNotification, CreateEncounterParams
from zonekeep.sdk import Arena, EncounterOptions, Entropy
from zonekeep.sdk.engine import Engine

from ._config import (
    VERSION,
    Changes,
    ConfigError,
    Limits,
    ServerConfig,
    compare,
    default_arena_dirs,
    default_data_dir,
    describe_change,
    flatten,
    is_postgres_url,
    load_config,
    on_reload,
)
from ._connection import Connection, Flusher, Upload, WebsocketServer, parse_networks, sweep
from ._encounter_file import EncounterFile
from ._gc import GcUpkeep
from ._images import MIME, ImageRefused, reencode
from ._log import configure_logging
from ._methods import Client, Methods
from ._metrics import CONTENT_TYPE_LATEST, ROLES, Metrics, bind, unbind
from ._plugin_data import plugin_settings_problems
from ._registry import Registry, is_loopback
from ._room import Room
from ._static import forbidden, method_not_allowed, serve_static
from ._store import EventStore, InMemoryStore, StoredBlob
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
        parse_networks(self.config.trusted_proxies)  # a wrong one stops us here, plainly
        self.engine = engine or Engine.from_config(
            self.config.plugins_enabled, self.config.plugins_disabled
        )
        self.engine.set_hook_budget(
            self.config.plugin_call_budget_seconds or None, self.config.plugin_overrun_limit
        )
        problems = plugin_settings_problems(self.config, self.engine)
        if problems:  # the operator's plugin settings: checked before anything starts
            raise ConfigError(problems)
        self.registry = Registry(
            self.config, self.engine, store if store is not None else InMemoryStore(), entropy
        )
        self._open_store = store is None and self.config.store != "memory"
        self._owns_store = False
        self.welcome = Welcome(self.config, self.engine, lambda: self.registry.arena_library())
        self.methods = Methods(self.registry, self.welcome.text)
        #: Map images decoded at once (each may take width x height x 4 bytes).
        self._decoding = trio.CapacityLimiter(2)
        #: The bundled arenas' map images by id, read on first use.
        self._maps: dict[str, Path] | None = None
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
        #: This server's counters and health inputs (``/metrics``, ``/healthz``).
        self.metrics = Metrics()
        self.metrics.command_types = frozenset({*self.engine.commands, "rewind"})
        self.metrics.methods = frozenset(METHODS)
        self.metrics.gauges = self._gauges
        #: Whether joins are accepted: set once started, cleared at shutdown (``/readyz``).
        self.ready = False
        self._stopping = False

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
        if self.registry.node is not None:  # a page served by another node follows 'moved'
            own.update(_origin_key(url) for url in self.registry.node.peers)
        return wanted in own

    def local_host(self, host: str | None) -> bool:
        """Whether a handshake's ``Host`` header (``None``: none) names this machine's
        loopback (``localhost``, a ``.localhost`` name, 127.0.0.0/8, ``::1``) or
        ``public_url``'s host: what a loopback client needs besides its address to have
        the loopback's privileges. A page on any other name may be one whose DNS name
        was rebound to 127.0.0.1, and a matching ``Origin`` proves nothing then."""
        if host is None:
            return False
        name = _host_name(host)
        if name == "localhost" or name.endswith(".localhost"):
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            public = urlsplit(self.config.public_url or "").hostname
            return public is not None and name == public.lower().rstrip(".")
        return is_loopback(name)

    async def _http(
        self, request: Request, address: str = "?", upload: Upload | None = None
    ) -> Response | None:
        """Answer a plain HTTP request from ``address``, or ``None`` to let a websocket open.
        ``GET`` is answered on every path, ``POST`` on ``/images`` only (a map image,
        ``upload`` its body); any other method gets 405."""
        path = request.path.split("?", 1)[0]
        if not (request.method == "GET" or (request.method == "POST" and path == "/images")):
            return method_not_allowed()
        if not self.origin_allowed(request.headers.get("Origin"), request.headers.get("Host")):
            self.metrics.warn(log, "refused a connection (HTTP 403): origin not allowed")
            self.metrics.handshakes_refused["origin"] += 1
            return forbidden("This origin may not open a connection to this server.")
        if request.method == "POST":
            assert upload is not None  # the connection reads a POST's Content-Length
            return await self._upload_image(request, address, upload)
        if path.startswith("/images/"):
            return await self._image(path)
        if path == "/healthz":
            node = self.registry.node  # a node cut off from its store is not healthy
            problems = self.metrics.health() + (node.health() if node is not None else [])
            return _json(
                503 if problems else 200,
                {
                    "status": "unhealthy" if problems else "ok",
                    **({"problems": problems} if problems else {}),
                    "encounters": len(self.rooms),
                    "connections": len(self.connections),
                },
            )
        if path == "/readyz":
            node = self.registry.node  # one that cannot renew its leases takes no joins
            if self.ready and node is not None and node.health():
                return _json(503, {"status": "cut off from the store"})
            if self.ready:
                return _json(200, {"status": "ready"})
            return _json(503, {"status": "shutting down" if self._stopping else "starting"})
        if path == "/metrics":
            return await self._metrics_page(request)
        node = self.registry.node
        # The web table under /table/; None for anything else.
        return serve_static(request, node.peers if node is not None else ())

    # -- map images (issue 35) ------------------------------------------------------------

    async def _image_owner(self, request: Request, address: str) -> str | Response:
        """Who uploads: ``gm:NAME`` for ``Authorization: Bearer <GM key>``, ``operator``
        for the loopback on a server without any key; else a 401 to answer."""
        given = request.headers.get("Authorization")
        if given is not None:
            scheme, _, credentials = given.partition(" ")
            gm = None
            if scheme.lower() == "bearer" and credentials.strip():
                gm = await self.registry.gm_for_key(credentials.strip())
            if gm is None:
                return _image_error(401, "bad_gm_key", "That GM key is not known here.")
            return "gm:" + gm
        if await self.registry.is_operator(address):
            return "operator"
        return _image_error(
            401,
            "gm_key_required",
            "Uploading a map needs 'Authorization: Bearer <your GM key>'.",
        )

    async def _upload_image(self, request: Request, address: str, upload: Upload) -> Response:
        """``POST /images``: a map image checked, re-encoded and stored (docs/server.md,
        "Map images"). Every refusal changes nothing."""
        limits = self.config.limits
        owner = await self._image_owner(request, address)
        if isinstance(owner, Response):
            self.metrics.warn(log, "refused an image upload (HTTP 401): no or unknown GM key")
            return owner
        if upload.length > limits.max_image_bytes:
            return _image_error(
                413,
                "image_too_large",
                f"The image is {upload.length} bytes; the most this server takes is "
                f"{limits.max_image_bytes}.",
            )
        body = await upload.read()
        if body is None:
            return _image_error(
                408, "upload_incomplete", "The image's bytes did not all arrive in time."
            )
        try:
            async with self._decoding:
                image = await trio.to_thread.run_sync(reencode, body, limits.max_image_pixels)
        except ImageRefused as exc:
            log.info("refused an image upload (HTTP %d): %s", exc.status, exc.message)
            return _image_error(exc.status, exc.code, exc.message)
        blob = StoredBlob(image.id, image.ext, image.width, image.height, image.data, owner)
        if await self.store.get_image(image.id) is None:
            used = await self.store.image_bytes(owner)
            if used + len(image.data) > limits.image_bytes_per_key:
                return _image_error(
                    413,
                    "quota_exceeded",
                    f"Your maps take {used} bytes; this one ({len(image.data)} bytes) would "
                    f"pass your quota of {limits.image_bytes_per_key}.",
                )
            await self.store.put_image(blob)
            log.info("stored map image %s (%d bytes) for %s", image.id, len(image.data), owner)
        return _json(
            201,
            {
                "id": image.id,
                "url": image.url,
                "width": image.width,
                "height": image.height,
                "type": image.mime,
            },
        )

    async def _image(self, path: str) -> Response:
        """``GET /images/<id>.<ext>``: a stored map image, or a bundled arena's; without
        ``.<ext>`` (as an arena's ``map.image`` names it), in the type it is stored in."""
        match = _IMAGE_PATH.fullmatch(path)
        if match is None:
            return _image_error(404, "unknown_image", "There is no such image.")
        image_id, asked = match.groups()  # no extension: whichever the image has
        data: bytes | None = None
        stored = await self.store.get_image(image_id)
        ext = asked or (stored.ext if stored is not None else "png")
        if stored is not None and stored.ext == ext:
            data = stored.data
        elif stored is None and ext == "png":
            found = self._bundled_maps().get(image_id)
            data = await trio.Path(found).read_bytes() if found is not None else None
        if data is None:
            return _image_error(404, "unknown_image", "There is no such image.")
        headers = Headers(
            [
                ("Content-Type", MIME[ext]),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "public, max-age=31536000, immutable"),
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", "default-src 'none'; sandbox"),
                ("Cross-Origin-Resource-Policy", "same-origin"),
            ]
        )
        return Response(200, "OK", headers, data)

    def _bundled_maps(self) -> dict[str, Path]:
        """The bundled arenas' map images (``maps/*.png`` of the arena folders), by id."""
        if self._maps is None:
            found: dict[str, Path] = {}
            for folder in self.config.arena_dirs:
                for path in sorted((folder / "maps").glob("*.png")):
                    found.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
            self._maps = found
        return self._maps

    async def _metrics_page(self, request: Request) -> Response:
        """``/metrics``: the Prometheus text page; with ``metrics_token`` set, only for
        ``Authorization: Bearer <metrics_token>`` (compared in constant time), else 401."""
        token = self.config.metrics_token
        if token is not None:
            given = request.headers.get("Authorization", "")
            scheme, _, credentials = given.partition(" ")
            wanted = token.encode()
            if not (
                scheme.lower() == "bearer"
                and hmac.compare_digest(credentials.strip().encode(), wanted)
            ):
                self.metrics.warn(log, "refused /metrics (HTTP 401): no or wrong bearer token")
                return _text(
                    401,
                    b"This page needs 'Authorization: Bearer <metrics_token>'.\n",
                    ("WWW-Authenticate", 'Bearer realm="zonekeep metrics"'),
                )
        await self.metrics.refresh_stored(self.store.encounters)
        body = self.metrics.page()
        return _text(200, body, content_type=CONTENT_TYPE_LATEST)

    def _gauges(self) -> list[Metric]:
        """The gauges computed when ``/metrics`` is read: encounters loaded, and the open
        connections by role (each under the highest role it holds in the encounters it
        joined: gm, player, spectator; ``unjoined`` when none)."""
        loaded = GaugeMetricFamily(
            "zonekeep_encounters_loaded",
            "Encounters in memory (their rooms running), by state: open or ended.",
            labels=["state"],
        )
        rooms = list(self.rooms.values())
        ended = sum(r.state.phase == "ended" for r in rooms)
        loaded.add_metric(["open"], len(rooms) - ended)
        loaded.add_metric(["ended"], ended)
        rank = {role: i for i, role in enumerate(ROLES)}
        best: dict[int, int] = {}
        for room in rooms:
            for member in room.members:
                key = id(member.subscriber)
                best[key] = min(best.get(key, len(ROLES)), rank.get(member.role, len(ROLES)))
        counts = dict.fromkeys(ROLES, 0)
        unjoined = rank["unjoined"]
        for connection in self.connections:
            counts[ROLES[min(best.get(id(connection), unjoined), unjoined)]] += 1
        by_role = GaugeMetricFamily(
            "zonekeep_connections",
            "Open websocket connections, by role (the highest one held).",
            labels=["role"],
        )
        for role, count in counts.items():
            by_role.add_metric([role], count)
        found: list[Metric] = [loaded, by_role]
        node = self.registry.node
        if node is not None:
            held = GaugeMetricFamily(
                "zonekeep_node_leases",
                "Encounter leases this node holds (several nodes on PostgreSQL).",
            )
            held.add_metric([], node.held)
            found.append(held)
            for name, value, text in (
                ("leases_taken", node.taken, "Leases this node took (creating or loading)."),
                (
                    "leases_taken_over",
                    node.taken_over,
                    "Leases this node took that another node (or an earlier run) had held.",
                ),
                ("leases_lost", node.lost, "Encounters this node gave up: another took them."),
                ("moved", node.moved, "Joins this node answered with 'moved'."),
                ("appends_fenced", node.store.fenced, "Appends refused: the lease was lost."),
                ("renew_failures", node.renew_failures, "Lease renewals that failed."),
            ):
                counter = CounterMetricFamily(f"zonekeep_node_{name}", text)
                counter.add_metric([], value)
                found.append(counter)
        return found

    async def _handler(self, connection: Connection) -> None:
        client = Client(self.methods, connection, self.config.limits, connection.address)
        client.loopback = client.loopback and self.local_host(connection.host)
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
            store: EventStore
            if is_postgres_url(self.config.store):
                from ._postgres import PostgresStore

                store = await PostgresStore.open(
                    self.config.store, pool_size=self.config.store_pool_size
                )
            else:
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
        bound = bind(self.metrics)  # for every task started from here (see _metrics)
        listeners = await trio.open_tcp_listeners(self.config.port, host=self.config.host)
        self.port = listeners[0].socket.getsockname()[1]
        await self.open_store()
        try:
            await self._become_node()
            await self._serve(listeners, task_status)
        finally:
            self.ready = False
            unbind(bound)
            node = self.registry.node
            if node is not None:  # its leases go now: another node may take over at once
                with trio.CancelScope(shield=True):
                    await node.stop()
            if self._owns_store:  # we opened it, we close it (folding the WAL into the file)
                self._owns_store = False
                with trio.CancelScope(shield=True):
                    await self.store.aclose()

    async def _become_node(self) -> None:
        """On a PostgreSQL store, this server is one node of several (docs/scale-out.md):
        it registers itself with its websocket URL, and serves encounters by lease."""
        if not is_postgres_url(self.config.store) or self.registry.node is not None:
            return
        from ._links import server_links
        from ._nodes import Node, default_node_id
        from ._postgres import PostgresStore

        store = self.store
        if not isinstance(store, PostgresStore):
            return
        assert self.port is not None
        url = server_links(self.config.public_url, self.config.host, self.port).websocket
        node = Node(store, self.config.node_id or default_node_id(), url, self.config.lease_seconds)
        await node.start()
        self.registry.attach_node(node)

    async def _serve(self, listeners: list[trio.SocketListener], task_status: Any) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = self.registry.nursery = nursery
            await self.registry.start()  # nothing is loaded: each encounter on its first join
            listener = WebsocketServer(
                self._handler,
                self._http,
                self.config.limits,
                self.flusher,
                self.config.trusted_proxies,
            )
            self._listener = await nursery.start(listener.serve, listeners)
            nursery.start_soon(sweep, self.connections, self.config.limits)
            nursery.start_soon(self.flusher.run)
            nursery.start_soon(self.metrics.watch_loop)
            await self.metrics.refresh_stored(self.store.encounters, force=True)
            self.ready = not self._stopping
            task_status.started(self)

    def reload(self, config: ServerConfig) -> Changes:
        """Run with ``config`` from now on (a SIGHUP): the settings that can change live
        do (when each applies: :func:`_config.on_reload`, docs/configuration.md); those
        that need a restart (host, port, store, plugins, ...) keep their value and are
        logged. Returns what changed."""
        old = self.config
        changes = compare(old, config)
        new = changes.config
        self.config = self.registry.config = new
        self.welcome.reconfigure(new)
        if self._listener is not None:  # per-IP caps and frame sizes of new connections
            self._listener.limits = new.limits
            # The proxies believed for the client's address: new connections.
            self._listener.trusted = parse_networks(new.trusted_proxies)
        cap = new.limits.max_connections_per_encounter + new.limits.max_spectators_per_encounter
        for room in self.rooms.values():  # the rooms' caps (each part is checked at join)
            room.max_members = cap
        self.engine.set_hook_budget(
            new.plugin_call_budget_seconds or None, new.plugin_overrun_limit
        )
        if (new.log_level, new.log_format) != (old.log_level, old.log_format):
            configure_logging(new.log_level, new.log_format)
        before, after = flatten(old), flatten(config)
        if changes.applied:
            log.info(
                "config reloaded: %s",
                "; ".join(
                    f"{describe_change(key, before[key], after[key])} ({on_reload(key)})"
                    for key in changes.applied
                ),
            )
        else:
            log.info("config reloaded: nothing changed that applies while running")
        for key in changes.needs_restart:
            log.warning(
                "config: %s needs a restart to apply; the server keeps its old value",
                describe_change(key, before[key], after[key]),
            )
        log.info("GM keys are read from the store at each use: nothing to reload for them")
        return changes

    async def shutdown(self, reason: str = "the server is shutting down") -> None:
        """Say ``closing`` to every client, answer the commands in flight (reading no new
        ones), let the rooms finish what is queued, then stop listening and close every
        connection still open with 1001."""
        self.ready, self._stopping = False, True
        closing = notification_text(ClosingNotification(reason))
        for connection in list(self.connections):
            connection.begin_shutdown(closing)
        with trio.move_on_after(10):
            if self.connections:
                self._all_gone = trio.Event()
                await self._all_gone.wait()  # each handler ends once its client is told
            await self.registry.drain()
        with trio.move_on_after(10):
            await self._snapshot_rooms()
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

    async def _snapshot_rooms(self) -> None:
        """A snapshot of every loaded room not stored at its current seq, all at once (so
        the store's group commit writes them in few transactions): the next start loads
        each from its snapshot without replaying a tail. Logged with its time."""
        started = time.perf_counter()
        written: list[bool] = []

        async def save(room: Room) -> None:
            written.append(await room.save_snapshot())

        async with trio.open_nursery() as nursery:
            for room in list(self.registry.rooms.values()):
                if not room.closed:
                    nursery.start_soon(save, room)
        if written:
            log.info(
                "shutdown: %d snapshot(s) of %d loaded encounter(s) written in %.3f s",
                sum(written),
                len(written),
                time.perf_counter() - started,
            )


def _text(
    status: int,
    body: bytes,
    *extra: tuple[str, str],
    content_type: str = "text/plain; charset=utf-8",
) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            *extra,
        ]
    )
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def _json(status: int, data: dict[str, Any]) -> Response:
    return _text(status, json.dumps(data).encode(), content_type="application/json")


#: A map image's address: its id and extension.
_IMAGE_PATH = re.compile(r"/images/([0-9a-f]{64})(?:\.(png|webp))?")


def _image_error(status: int, code: str, message: str) -> Response:
    """A refused image request: ``{"error": {"code", "message"}}``."""
    return _json(status, {"error": {"code": code, "message": message}})


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


def _host_name(host: str) -> str:
    """The name or address of a ``Host`` header, without its port and brackets, lower
    case, without a final dot (``[::1]:8765`` -> ``::1``, ``LocalHost.:80`` -> ``localhost``)."""
    host = host.strip().lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _host_key(host: str, origin_key: str) -> str:
    """``host:port`` of a ``Host`` header. Without a port it is the scheme's default
    port (a browser leaves it out in both headers): the origin's, if that is 80 or 443."""
    host = host.strip().lower()
    if host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]"):
        return host
    port = origin_key.rsplit(":", 1)[-1]
    return f"{host}:{port if port in ('80', '443') else ''}"


def reload_on_sighup(
    server: ZonekeepServer, load: Callable[[], ServerConfig] | None
) -> Changes | None:
    """SIGHUP: read the config again with ``load`` and apply it to ``server``; a config
    with problems is logged and changes nothing (``None``)."""
    if load is None:
        log.info("SIGHUP: this server was given no config to reload")
        return None
    try:
        config = load()
    except ConfigError as exc:
        log.error(
            "SIGHUP: the config has %d problem(s), nothing was changed: %s",
            len(exc.problems),
            "; ".join(exc.problems),
        )
        return None
    return server.reload(config)


async def serve_until_signalled(
    server: ZonekeepServer,
    on_ready: Any = None,
    reload_config: Callable[[], ServerConfig] | None = None,
) -> None:
    """Run ``server`` until SIGINT or SIGTERM, then shut it down gracefully; on SIGHUP
    read the config again with ``reload_config`` and apply it (:meth:`ZonekeepServer.reload`)."""
    await server.open_store()  # a store that cannot be opened stops us here, plainly
    upkeep = GcUpkeep(server.config.gc_freeze_seconds, server.config.gc_full_seconds)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            upkeep.start()  # after the restore: what it built is long-lived
            nursery.start_soon(upkeep.run)
            if on_ready is not None:
                await on_ready(server)
            async for sig in signals:
                if sig == signal.SIGHUP:
                    reload_on_sighup(server, reload_config)
                    continue
                await server.shutdown()
                nursery.cancel_scope.cancel()
                break
