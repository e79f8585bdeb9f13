"""The zonekeep server: configuration, the websocket listener, rooms, shutdown.

``ZonekeepServer.run`` owns one nursery. The websocket server, every room's loop
and every connection live under it; a crash in one room is contained in its task.
"""

from __future__ import annotations

import hmac
import http
import json
import logging
import signal
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import attrs
import cattrs
import trio
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.trio.server import ServerConnection, serve

import zonekeep.sdk as sdk
from zonekeep.protocol import (
    PROTOCOL_VERSION,
    CreateEncounterParams,
    ProtocolError,
    params_schema,
)
from zonekeep.sdk import (
    Arena,
    ArenaError,
    EncounterOptions,
    Entropy,
    Refusal,
    converter,
    creature_from_dict,
    describe_errors,
    load_arena,
    parse_arena,
    state_to_dict,
)
from zonekeep.sdk.engine import Engine

from ._encounter_file import EncounterFile
from ._gc import GcUpkeep
from ._room import Grant, Room, encode_message
from ._session import Session
from ._static import serve_static
from ._store import EventStore, InMemoryStore, StoreError

log = logging.getLogger("zonekeep.server")

VERSION = "0.1.0"


def default_data_dir() -> Path:
    """Where encounters are kept unless the operator says otherwise:
    ``$XDG_DATA_HOME/zonekeep``, else ``~/.local/share/zonekeep``."""
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "zonekeep"


def default_arena_dirs() -> tuple[Path, ...]:
    """Where bundled arenas are looked up: ``examples/arenas`` of this checkout."""
    here = Path(__file__).resolve().parent.parent
    return tuple(p for p in (here / "examples" / "arenas",) if p.is_dir())


@attrs.frozen
class Limits:
    """The limits in force; every one is announced in ``welcome`` and documented in SPEC.md."""

    max_message_bytes: int = 16384
    rate_per_second: float = 20.0
    rate_burst: int = 40
    abuse_refusals: int = 40
    abuse_window_seconds: float = 10.0
    max_connections_per_encounter: int = 32
    ping_interval_seconds: float = 20.0
    idle_timeout_seconds: float = 300.0
    outgoing_queue: int = 256
    max_encounters: int = 1000


def _names(value: Iterable[str]) -> tuple[str, ...]:
    """Plugin names as a tuple; a single string is refused (it would become letters)."""
    if isinstance(value, str):
        raise TypeError(f"plugin names must be a list of strings, not the string {value!r}")
    return tuple(value)


#: The keepalive and idle sweep looks at every connection once a round, a slice of
#: them every this many seconds, so that the pings of a round are spread over it.
SWEEP_STEP = 0.05


def _not_negative(_obj: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not isinstance(value, int | float) or value < 0:
        raise TypeError(f"{attribute.name} must be a number of seconds, 0 or more (got {value!r})")


@attrs.frozen
class ServerConfig:
    """How a server runs. ``server_key``, when set, is needed to create encounters."""

    host: str = "127.0.0.1"
    port: int = 8765
    server_key: str | None = None
    limits: Limits = attrs.field(factory=Limits)
    arena_dirs: tuple[Path, ...] = attrs.field(factory=default_arena_dirs)
    reaction_seconds: float | None = None
    #: ``"sqlite"`` (durable, the default) or ``"memory"`` (lost on restart).
    store: Literal["sqlite", "memory"] = "sqlite"
    data_dir: Path = attrs.field(factory=default_data_dir, converter=Path)
    #: ``"full"``: every event durable before anyone sees it; ``"normal"``: faster, may
    #: lose the last moments on a power cut (see docs/storage.md).
    durability: Literal["full", "normal"] = "full"
    #: Third-party plugins to load; empty means every installed one (see ``_plugins.discover``).
    plugins_enabled: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: Plugins (third-party or built-in, such as ``"zonekeep.flanking"``) not to load.
    plugins_disabled: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: Seconds between two small garbage-collection rounds (collect what is new, then
    #: freeze it); 0 leaves CPython's own schedule. Process-wide: applied by
    #: :func:`serve_until_signalled` only (see ``_gc.py`` and docs/performance.md).
    gc_freeze_seconds: float = attrs.field(default=1.0, validator=_not_negative)
    #: Seconds between two full collections of everything (one pause as long as a
    #: full collection of the heap; logged); 0 never.
    gc_full_seconds: float = attrs.field(default=3600.0, validator=_not_negative)


def load_config(path: str | Path) -> ServerConfig:
    """Read a TOML config file (``[server]`` and ``[limits]`` tables); clear errors on mistakes."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    server = dict(data.get("server", {}))
    limits = dict(data.get("limits", {}))
    unknown = sorted(set(data) - {"server", "limits"})
    if unknown:
        raise ValueError(f"{path}: unknown table(s): {', '.join(unknown)}")
    if "arena_dirs" in server:
        server["arena_dirs"] = tuple(Path(p) for p in server["arena_dirs"])
    try:
        return ServerConfig(**server, limits=Limits(**limits))
    except TypeError as exc:
        raise ValueError(f"{path}: {exc}") from None


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
        #: Set by :meth:`run` from the config when not given.
        self.store: EventStore = store if store is not None else InMemoryStore()
        self._open_store = store is None and self.config.store == "sqlite"
        self._owns_store = False
        self.entropy = entropy
        self.rooms: dict[str, Room] = {}
        self.sessions: set[Session] = set()
        self.port: int | None = None
        self._nursery: trio.Nursery | None = None
        self._counter = 0
        self._ws_server: Any = None
        self._all_gone = trio.Event()
        #: How many unfinished encounters were brought back from the store at start.
        self.restored = 0
        #: Sessions with framed output to write, and where the flusher waits for them.
        self._dirty: list[Session] = []
        self._flush_lot = trio.lowlevel.ParkingLot()
        #: The arenas listed in the last welcome, and that welcome serialized.
        self._welcome_cache: tuple[list[str], str] | None = None

    # -- what clients are told ------------------------------------------------------------

    def bundled_arenas(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for folder in self.config.arena_dirs:
            for path in sorted(folder.iterdir()):
                if path.suffix in (".json", ".toml"):
                    found.setdefault(path.stem, path)
        return found

    def welcome_text(self) -> str:
        """The result of ``hello`` (SPEC.md: protocol, server, capabilities, limits),
        serialized, as every ``hello`` is answered. Built once and
        kept while the arena folders list the same arenas (an arena file added while the
        server runs is announced from the next ``hello`` on): the commands, their schemas
        and the limits do not change while a server runs, and building and serializing
        them (about 40 KB) for each of thousands of reconnecting clients cost more than
        everything else a connection does to join."""
        arenas = sorted(self.bundled_arenas())
        cached = self._welcome_cache
        if cached is None or cached[0] != arenas:
            cached = self._welcome_cache = (arenas, encode_message(self._build_welcome(arenas)))
        return cached[1]

    def _build_welcome(self, arenas: list[str]) -> dict[str, Any]:
        limits = self.config.limits
        commands = []
        for spec in self.engine.commands.values():
            commands.append(
                {
                    "id": spec.id,
                    "summary": spec.summary,
                    "who": spec.who,
                    "costs": list(spec.costs),
                    "phases": list(spec.phases),
                    "params": {
                        name: {"type": p.type, "required": p.required, "description": p.description}
                        for name, p in spec.params.items()
                    },
                    "schema": params_schema(spec),
                    "plugin": self.engine.command_owners.get(spec.id, ""),
                }
            )
        return {
            "protocol": PROTOCOL_VERSION,
            "server": {"name": "zonekeep", "version": VERSION},
            "capabilities": {
                "commands": commands,
                "options": converter.unstructure(EncounterOptions()),
                "event_types": sorted(sdk.EVENT_TYPES),
                "arenas": arenas,
            },
            "limits": {
                "max_message_bytes": limits.max_message_bytes,
                "rate_per_second": limits.rate_per_second,
                "rate_burst": limits.rate_burst,
                "max_connections_per_encounter": limits.max_connections_per_encounter,
                "ping_interval_seconds": limits.ping_interval_seconds,
                "idle_timeout_seconds": limits.idle_timeout_seconds,
                "outgoing_queue": limits.outgoing_queue,
                "reaction_seconds": self.config.reaction_seconds
                if self.config.reaction_seconds is not None
                else EncounterOptions().reaction_seconds,
            },
        }

    # -- rooms ---------------------------------------------------------------------------------

    def _new_id(self) -> str:
        """A fresh encounter id: a counter for people, 48 random bits against clashes
        with encounters already in the store (finished, imported, from an earlier run)."""
        import secrets

        self._counter += 1
        return f"e{self._counter}-{secrets.token_hex(6)}"

    async def create_room(
        self,
        name: str,
        arena: Arena,
        creatures: list[sdk.Creature],
        options: EncounterOptions | None = None,
    ) -> tuple[Room, str]:
        """Create an encounter, store it, and start its loop under the server's nursery.

        Returns the room and its GM token.
        """
        if self._nursery is None:
            raise RuntimeError("the server is not running")
        if len(self.rooms) >= self.config.limits.max_encounters:
            raise ProtocolError(
                "too_many_connections", "This server hosts as many encounters as it can."
            )
        eid = self._new_id()
        while eid in self.rooms:
            eid = self._new_id()
        try:
            outcome = self.engine.create(eid, creatures, options=options, name=name, arena=arena)
        except Refusal as refusal:
            raise ProtocolError.from_refusal(refusal.code, refusal.message) from None
        room = self._new_room(eid, outcome.state)
        try:
            await self.store.append(eid, 1, outcome.events, snapshot=state_to_dict(outcome.state))
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The encounter could not be saved: {exc}"
            ) from None
        token = await room.grant("gm")
        self.rooms[eid] = room
        await self._nursery.start(self._guarded, room)
        return room, token

    def _new_room(self, eid: str, state: sdk.EncounterState) -> Room:
        """A room for ``state`` with this server's engine, store, entropy and limits."""
        return Room(
            eid,
            self.engine,
            self.store,
            state,
            entropy=self.entropy,
            reaction_seconds=self.config.reaction_seconds,
            max_members=self.config.limits.max_connections_per_encounter,
        )

    async def _guarded(
        self, room: Room, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Run a room's loop; if it ever fails, report it and keep the server up."""
        try:
            await room.run(task_status=task_status)
        except Exception as exc:
            log.exception("encounter %s stopped", room.id)
            room.crashed = repr(exc)
            room.notify_gm(
                "encounter_error",
                {"encounter": room.id, "message": f"The encounter stopped: {exc!r}"},
            )

    async def create_room_from_request(self, params: CreateEncounterParams) -> tuple[Room, str]:
        """``create_encounter``: check the server key, the arena and the roster, then create."""
        key = self.config.server_key
        if key is not None:
            given = params.server_key
            if given is None:
                raise ProtocolError(
                    "server_key_required", "This server needs its key to create encounters."
                )
            if not hmac.compare_digest(given.encode(), key.encode()):
                raise ProtocolError("bad_server_key", "That server key is wrong.")
        name = params.name
        if not name.strip() or len(name) > 200:
            raise _roster_error("'name' must be a string of 1-200 characters.")
        arena = self._arena(params.arena)
        raw = params.creatures
        if not raw:
            raise _roster_error("'creatures' must be a non-empty list.")
        creatures = []
        problems = []
        for i, item in enumerate(raw):
            try:
                creatures.append(creature_from_dict(item, f"creatures[{i}]"))
            except ValueError as exc:
                problems.append(str(exc))
        for c in creatures:
            if c.zone is not None and not arena.has_zone(c.zone):
                problems.append(f"{c.id}: unknown zone {c.zone!r}")
        if problems:
            raise _roster_error("; ".join(problems))
        options = None
        if params.options is not None:
            try:
                options = converter.structure(params.options, EncounterOptions)
            except cattrs.BaseValidationError as exc:
                raise _roster_error("; ".join(describe_errors(exc, "options"))) from None
        return await self.create_room(name, arena, creatures, options)

    def _arena(self, value: Any) -> Arena:
        if isinstance(value, str):
            path = self.bundled_arenas().get(value)
            if path is None:
                names = ", ".join(sorted(self.bundled_arenas())) or "none"
                raise _roster_error(f"There is no bundled arena {value!r}; bundled: {names}.")
            return load_arena(path)
        if isinstance(value, dict):
            try:
                return parse_arena(value, "arena")
            except ArenaError as exc:
                raise _roster_error(str(exc).replace("\n", "; ")) from None
        raise _roster_error("'arena' must be a bundled arena's name or an arena object.")

    async def open_encounter_file(self, spec: EncounterFile) -> tuple[Room, str]:
        """Create an encounter from a file and run its setup (surprise and positions).

        Returns the room and its GM token.
        """
        from zonekeep.sdk import GM_ACTOR, Command

        from ._room import Job

        room, token = await self.create_room(
            spec.name, spec.arena, list(spec.creatures), spec.options
        )
        setup = [Command("add_hazard", attrs.asdict(h), GM_ACTOR) for h in spec.hazards]
        setup += [
            Command("set_surprise", {"surprised": list(spec.surprised)}, GM_ACTOR),
            Command("place", {"positions": dict(spec.positions)}, GM_ACTOR),
        ]
        for command in setup:
            job = await room.submit(Job(GM_ACTOR, command, None))
            if job.error is not None:
                raise job.error
        return room, token

    async def restore(self) -> int:
        """Bring back every unfinished encounter from the store: same state, seq and seats.

        Pending decisions get fresh deadlines when their rooms start. Returns how many.
        """
        assert self._nursery is not None
        count = 0
        for stored in await self.store.unfinished():
            state = await self._rebuild(stored)
            if state is None:
                continue
            room = self._new_room(stored.id, state)
            room.grants = [Grant(g.token_hash, g.role, g.player) for g in stored.grants]  # type: ignore[arg-type]
            self.rooms[stored.id] = room
            await self._nursery.start(self._guarded, room)
            count += 1
        return count

    async def _rebuild(self, stored: Any) -> sdk.EncounterState | None:
        tail = await self.store.read(stored.id, stored.snapshot_seq)
        if stored.snapshot is not None and not any(isinstance(e, sdk.Rewound) for _, e in tail):
            state: sdk.EncounterState = converter.structure(stored.snapshot, sdk.EncounterState)
            for _, event in tail:
                sdk.apply_event(state, event)
            return state
        everything = [e for _, e in await self.store.read(stored.id)]
        if not everything:
            log.error("encounter %s has no events in the store; skipped", stored.id)
            return None
        return sdk.replay(everything)

    # -- serving ----------------------------------------------------------------------------------

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path == "/healthz":
            body = json.dumps(
                {"status": "ok", "encounters": len(self.rooms), "connections": len(self.sessions)}
            ).encode()
            headers = Headers(
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return Response(http.HTTPStatus.OK.value, "OK", headers, body)
        return serve_static(request)  # the web table under /table/; None for anything else

    async def _handler(self, ws: ServerConnection) -> None:
        session = Session(self, ws)
        self.sessions.add(session)
        try:
            await session.run()
        finally:
            self.sessions.discard(session)
            if not self.sessions:
                self._all_gone.set()

    async def open_store(self) -> None:
        """Open the configured store (once); :class:`StoreError` if it cannot be used."""
        if self._open_store:
            from ._sqlite import SqliteStore

            self.store = await SqliteStore.open(
                self.config.data_dir / "zonekeep.sqlite3", durability=self.config.durability
            )
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
        limits = self.config.limits
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            started = trio.current_time()
            restored = self.restored = await self.restore()
            if restored:
                log.info(
                    "restored %d encounter(s) in %.3f s", restored, trio.current_time() - started
                )
            self._ws_server = await nursery.start(
                lambda task_status: serve(
                    self._handler,
                    listeners=listeners,
                    process_request=self._http,
                    compression=None,
                    max_size=4 * limits.max_message_bytes,
                    ping_interval=None,  # pings and idleness: _watch_connections
                    task_status=task_status,
                )
            )
            nursery.start_soon(self._watch_connections)
            nursery.start_soon(self._flusher)
            task_status.started(self)

    def schedule_flush(self, session: Session) -> None:
        """Have ``session``'s framed output written once the current task yields."""
        self._dirty.append(session)
        if len(self._dirty) == 1:
            self._flush_lot.unpark_all()

    async def _flusher(self) -> None:
        """Write the output of every session that has some, in one pass after each
        burst of work (a broadcast to a room's members, a reply): one non-blocking
        write per connection and no task switch per connection."""
        while True:
            if self._dirty:
                await trio.lowlevel.checkpoint()
            else:
                await self._flush_lot.park()
            dirty, self._dirty = self._dirty, []
            for session in dirty:
                session.flush_now()

    async def _watch_connections(self) -> None:
        """Keepalive pings and idle timeouts for every connection, from one task.

        One sweep over the connections every ``tick`` seconds costs far less than a
        timer per connection (the websocket library's keepalive task and a timeout
        around every read), which mattered at thousands of connections
        (docs/performance.md). Timeouts fire up to ``tick`` late. A round is spread
        over its ``tick``: a slice of the connections every ``SWEEP_STEP`` seconds.
        Looking at them all at once made the pings due in that second (spectators,
        who never speak, are pinged every ``ping_interval_seconds``) go out in one
        burst, and the commands arriving during the burst waited for it.
        """
        limits = self.config.limits
        periods = [limits.idle_timeout_seconds, limits.ping_interval_seconds]
        tick = min([1.0, *(p / 4 for p in periods if p > 0)])
        steps = max(1, round(tick / SWEEP_STEP))
        while True:
            sessions = list(self.sessions)
            per_step = -(-len(sessions) // steps)  # rounded up: all of them in a round
            for step in range(steps):
                await trio.sleep(tick / steps)
                now = trio.current_time()
                for session in sessions[step * per_step : (step + 1) * per_step]:
                    session.tick(now)

    async def shutdown(self, reason: str = "the server is shutting down") -> None:
        """Say ``closing`` to every client, answer the commands in flight (reading no new
        ones), let the rooms finish what is queued, then close every connection with 1001."""
        sessions = list(self.sessions)
        for session in sessions:
            session.begin_shutdown(reason)
        with trio.move_on_after(10):
            if self.sessions:
                self._all_gone = trio.Event()
                await self._all_gone.wait()  # each handler ends once its client is told
            for room in list(self.rooms.values()):
                await room.drain()
        if self._ws_server is not None:
            with trio.move_on_after(5):
                await self._ws_server.aclose(code=1001, reason="going away")
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()


def _roster_error(message: str) -> ProtocolError:
    """A bad roster, arena or options: the rules' ``invalid_params`` (4000)."""
    return ProtocolError.from_refusal("invalid_params", message)


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
