"""The room registry: the encounters this server hosts, by id, and their lifecycle.

It creates rooms (from a request or an encounter file), loads a stored encounter on its
first ``join`` and unloads it again when nobody has been in it for a while, archives an
encounter as soon as it ends, keeps each room's :class:`EncounterRecord` up to date,
runs the archiving sweeps, and notices what the operator's command line changed in the
store. Who may create (GM keys, the server key, loopback, ``creation = "open"``) is
decided here too.

Every room's loop runs as a task of the nursery the registry is given (the server's);
a loop that fails is reported to the GM and marks its room crashed, and the server
stays up.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import secrets
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
import trio

import zonekeep.sdk as sdk
import zonekeep.sdk.host as host
from zonekeep.protocol import (
    CreateEncounterParams,
    EncounterClosedNotification,
    EncounterErrorNotification,
    ProtocolError,
)
from zonekeep.sdk import (
    GM_ACTOR,
    Arena,
    ArenaError,
    Command,
    EncounterOptions,
    Entropy,
    Refusal,
    load_arena,
    parse_arena,
)
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import (
    Compendium,
    clamp_options,
    converter,
    describe_errors,
    expand_roster,
    option_problems,
    state_to_dict,
)

from ._compendium import build_compendium
from ._config import ServerConfig
from ._dice import DiceChoice, RoomDice, next_counter, parse_dice_option, roll_hit_points
from ._encounter_file import EncounterFile
from ._fanout import push
from ._nodes import HANDED_OVER
from ._plugin_data import with_server_settings
from ._room import Grant, Job, Room
from ._store import (
    UNUSED_IMAGE_GRACE_DAYS,
    EncounterRecord,
    EventStore,
    LibraryArena,
    StoredEncounter,
    StoreError,
)

if TYPE_CHECKING:
    from ._nodes import Node

log = logging.getLogger("zonekeep.server")

#: Seconds between two looks at ``store.outside_changes()``.
OUTSIDE_POLL_SECONDS = 2.0
#: Seconds between two archiving sweeps (one also runs at start).
SWEEP_SECONDS = 3600.0
#: A join or command writes the record's ``last_activity`` at most this often (seconds).
ACTIVITY_WRITE_SECONDS = 60.0

DAY = 86400.0


def is_loopback(address: str) -> bool:
    """Whether ``address`` (a client's IP address) is this machine's."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def key_hash(key: str) -> str:
    """The SHA-256 (hex) a GM key or the server key is known by."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@attrs.frozen
class Links:
    """Fresh links to an encounter: the new GM token (the old ones are revoked), a token
    per seat, a spectator token, and how many connections the rotation closed."""

    gm_token: str
    seats: dict[str, str]
    spectator_token: str
    closed: int


class Registry:
    """Rooms by encounter id, over one engine and one store."""

    def __init__(
        self,
        config: ServerConfig,
        engine: Engine,
        store: EventStore,
        entropy: Entropy | None = None,
        *,
        clock: Callable[[], float] = time.time,
        compendium: Compendium | None = None,
    ) -> None:
        self.config = config
        self.engine = engine
        self.store = store
        self.entropy = entropy
        #: The wall clock (Unix seconds) of the records and the archiving sweeps; a test
        #: may pass its own.
        self.clock = clock
        #: The creature compendium (``list_compendium``, roster references); built from
        #: the config and the engine's plugins when not given (``CompendiumError``).
        self.compendium = compendium or build_compendium(config, engine)
        #: The arenas plugins contribute (``zonekeep_arenas``), by id, checked at start
        #: (:class:`ArenaLibraryError`).
        self.plugin_arenas: dict[str, dict[str, Any]] = plugin_arenas(engine)
        #: The loaded rooms.
        self.rooms: dict[str, Room] = {}
        #: Where the rooms' loops run; set by the server while it runs.
        self.nursery: trio.Nursery | None = None
        self._counter = 0
        #: Quotas: when each creator created encounters (trio's clock, the last hour's).
        self.created_at: dict[str, list[float]] = {}
        #: Loads under way, by encounter id (a second join waits for the first's load).
        self._loading: dict[str, trio.Event] = {}
        #: The last activity each loaded room's record was stored with.
        self._activity_written: dict[str, float] = {}
        #: The GM key names as of the last look (to tell which were revoked).
        self._key_names: set[str] | None = None
        #: Set by the method table: forget ``room`` in every client joined to it (it is
        #: being unloaded), close the holders of revoked token hashes (returns how many),
        #: and react to revoked GM key names.
        self.detach: Callable[[Room], None] | None = None
        self.close_holders: Callable[[Room, set[str], Any], int] | None = None
        self.keys_revoked: Callable[[set[str]], None] | None = None
        #: This server as one of several nodes on a PostgreSQL store (``_nodes``): it
        #: serves an encounter only while it holds its lease. ``None`` (SQLite, memory):
        #: one node, no leases, nothing of it runs.
        self.node: Node | None = None

    def attach_node(self, node: Node) -> None:
        """Serve encounters as ``node``: take a lease before creating or loading one,
        give a room up when its lease is lost, release the lease when unloading."""
        self.node = node
        node.on_lost = self._lease_lost

    def _lease_lost(self, encounter: str) -> None:
        """Another node holds ``encounter`` now: give the room up (nothing of it is
        saved from here: the store's fence would refuse it), its members told to join
        again, which leads them to the new node."""
        room = self.rooms.get(encounter)
        if room is None or room.closed or self.nursery is None:
            return
        self.nursery.start_soon(self._give_up, room)

    async def _give_up(self, room: Room) -> None:
        try:
            await self.unload(
                room,
                "moved",
                "Another node serves this encounter now; join it again (with last_seq) "
                "and follow the 'moved' error.",
                save=False,
            )
        except Exception:
            log.exception("encounter %s: giving it up failed", room.id)

    def get(self, encounter_id: str) -> Room | None:
        return self.rooms.get(encounter_id)

    def bundled_arenas(self) -> dict[str, Path]:
        """The arenas of the configured folders by name (the first of a name wins)."""
        found: dict[str, Path] = {}
        for folder in self.config.arena_dirs:
            for path in sorted(folder.iterdir()):
                if path.suffix in (".json", ".toml"):
                    found.setdefault(path.stem, path)
        return found

    def arena_library(self) -> dict[str, Path | dict[str, Any]]:
        """Every arena a request may name: the folders' files (by file name), then the
        plugins' arenas (by id) whose name no file has."""
        found: dict[str, Path | dict[str, Any]] = dict(self.bundled_arenas())
        for name, data in self.plugin_arenas.items():
            found.setdefault(name, data)
        return found

    # -- who may create ---------------------------------------------------------------------

    async def keyless(self) -> bool:
        """Whether no key is defined at all: no GM key in the store, no server key."""
        return self.config.server_key is None and not await self.store.gm_keys()

    async def is_operator(self, address: str) -> bool:
        """A connection from loopback on a server with no key at all: the operator's,
        who may create and sees and manages every encounter in the lobby."""
        return is_loopback(address) and await self.keyless()

    async def gm_for_key(self, key: str) -> str | None:
        """The name of the GM whose key is ``key``, or ``None``."""
        wanted = key_hash(key).encode()
        found = None
        for gm_key in await self.store.gm_keys():
            if hmac.compare_digest(gm_key.key_hash.encode(), wanted):
                found = gm_key.name
        if found is not None and self._key_names is not None:
            self._key_names.add(found)  # added since the last look: known now
        return found

    async def creation_summary(self) -> str:
        """Which creation mode is in force and why (logged at start)."""
        if self.config.creation == "open":
            return (
                "creation: open; anyone may create encounters, held to the per-creator "
                "quotas (encounters_per_hour, open_encounters)"
            )
        keys = len(await self.store.gm_keys())
        if keys == 0 and self.config.server_key is None:
            return "creation: keys; no key defined, so loopback connections may create"
        found = [f"{keys} GM key(s)"] + (["the server key"] if self.config.server_key else [])
        return f"creation: keys; {' and '.join(found)} defined, so only they may create"

    async def creator_for(
        self,
        params: CreateEncounterParams,
        address: str,
        gm: str | None,
        loopback: bool | None = None,
    ) -> str:
        """Who creates an encounter asked for by a connection from ``address`` (whose
        GM key, if any, is ``gm``; ``loopback``: whether it has the loopback's
        privileges, by default whether ``address`` is the loopback's), or a refusal
        (``gm_key_required``, ``server_key_required``, ``bad_server_key``)."""
        key = self.config.server_key
        if params.server_key is not None and key is not None:
            if not hmac.compare_digest(params.server_key.encode(), key.encode()):
                raise ProtocolError("bad_server_key", "That server key is wrong.")
            if gm is None:
                return "key:" + key_hash(params.server_key)
        if gm is not None:
            return "gm:" + gm
        if self.config.creation == "open":
            return "ip:" + address
        gm_keys = await self.store.gm_keys()
        if loopback is None:
            loopback = is_loopback(address)
        if key is None and not gm_keys and loopback:
            return "ip:" + address
        if key is not None and not gm_keys:
            raise ProtocolError(
                "server_key_required", "This server needs its key to create encounters."
            )
        raise ProtocolError(
            "gm_key_required",
            "Creating encounters on this server needs a GM key (say hello with gm_key; "
            "the operator makes one with 'zonekeep gm add NAME') or the server key.",
        )

    # -- counting ---------------------------------------------------------------------------

    def open_rooms(self) -> list[Room]:
        """The loaded rooms whose encounter has not ended: those that count toward
        ``max_encounters``."""
        return [r for r in self.rooms.values() if r.state.phase != "ended"]

    def _check_room_for_one_more(self) -> None:
        limit = self.config.limits.max_encounters
        if len(self.open_rooms()) >= limit:
            raise ProtocolError(
                "server_full",
                f"This server has as many encounters loaded as it may ({limit}); try again "
                "when one ends or is unloaded.",
            )

    async def check_quotas(self, creator: str) -> None:
        """Refuse (``quota_exceeded``) when ``creator`` has reached a quota."""
        limits = self.config.limits
        now = trio.current_time()
        recent = [t for t in self.created_at.get(creator, []) if now - t < 3600]
        self.created_at[creator] = recent
        if self.node is not None:
            # Several nodes: every node's creations count, as the store's records say.
            wall = self.clock()
            records = await self.store.records(creator=creator)
            recent = sorted(now - (wall - r.created) for r in records if wall - r.created < 3600)
        if len(recent) >= limits.encounters_per_hour:
            wait = max(1, round(3600 - (now - recent[0])))
            raise ProtocolError(
                "quota_exceeded",
                f"Quota encounters_per_hour: you created {len(recent)} encounters in the "
                f"last hour; the next one can be created in {wait} seconds.",
                retry_after_ms=wait * 1000,
            )
        mine = await self.store.records(status="open", creator=creator)
        if len(mine) >= limits.open_encounters:
            raise ProtocolError(
                "quota_exceeded",
                f"Quota open_encounters: {len(mine)} encounters you created have not ended; "
                "a slot frees as soon as one of them ends (end_encounter) or is archived.",
            )

    # -- creating ---------------------------------------------------------------------------

    def _new_id(self) -> str:
        """A fresh encounter id: a counter for people, 48 random bits against clashes
        with encounters already in the store (finished, imported, from an earlier run)."""
        self._counter += 1
        return f"e{self._counter}-{secrets.token_hex(6)}"

    async def create_room(
        self,
        name: str,
        arena: Arena,
        creatures: list[sdk.Creature],
        options: EncounterOptions | None = None,
        creator: str | None = None,
        *,
        arena_name: str | None = None,
        public: bool = False,
        source: str | None = None,
        dice: DiceChoice | None = None,
        roll_hp: Sequence[str] = (),
    ) -> tuple[Room, str]:
        """Create an encounter, store it and its record, and start its loop under the
        server's nursery.

        ``creator`` (``"gm:<name>"``, ``"key:<sha256>"``, ``"ip:<address>"``) is held to
        its quotas; the operator's own encounters (``None``: files, the command line)
        have none. ``roll_hp`` names the creatures whose hit points are rolled from
        their ``hit_dice`` with the encounter's dice (the draws are logged in a
        ``dice_drawn`` event right after the commitment). Returns the room and its GM
        token.
        """
        if self.nursery is None:
            raise RuntimeError("the server is not running")
        if creator is not None:
            await self.check_quotas(creator)
        self._check_room_for_one_more()
        problems = option_problems(options) if options is not None else []
        if problems:
            raise _roster_error("; ".join(problems) + ".")
        # The operator's plugin settings under the GM's; the engine checks them, adds the
        # defaults and keeps every effective value in the encounter's options.
        options = with_server_settings(options, self.config)
        eid = self._new_id()
        while eid in self.rooms:
            eid = self._new_id()
        room_dice = await self._dice_for(eid, dice)
        committed = room_dice.first_commitment(dice or DiceChoice()) if room_dice else None
        drawn: list[tuple[int, int, int]] = []
        if roll_hp:
            entropy = room_dice.entropy if room_dice is not None else self.entropy
            assert entropy is not None  # no verifiable dice only with a test's entropy
            roll_hit_points(creatures, roll_hp, entropy)
            if room_dice is not None:
                drawn = room_dice.entropy.take_draws()
        try:
            outcome = self.engine.create(eid, creatures, options=options, name=name, arena=arena)
        except Refusal as refusal:
            raise ProtocolError.from_refusal(refusal.code, refusal.message) from None
        events = list(outcome.events)
        if committed is not None:
            host.apply_event(outcome.state, committed, self.engine.catalog)
            events.append(committed)
        if drawn:
            hit_dice = sdk.DiceDrawn(tuple(drawn))
            host.apply_event(outcome.state, hit_dice, self.engine.catalog)
            events.append(hit_dice)
        room = self._new_room(eid, outcome.state, room_dice)
        now = self.clock()
        state = outcome.state
        room.record = EncounterRecord(
            id=eid,
            title=name,
            arena=arena_name or arena.name,
            creator=creator,
            created=now,
            last_activity=now,
            public=public,
            phase=state.phase,
            round=state.round,
            source=source,
        )
        if self.node is not None:
            await self.node.acquire(eid)  # a new id: nobody else holds it
        try:
            await self.store.append(eid, 1, events, snapshot=state_to_dict(state))
            await self.store.put_record(room.record)
        except StoreError as exc:
            if self.node is not None:
                await self.node.release(eid)
            raise ProtocolError(
                "store_unavailable", f"The encounter could not be saved: {exc}"
            ) from None
        token = await room.grant("gm")
        self.rooms[eid] = room
        if creator is not None:
            self.created_at.setdefault(creator, []).append(trio.current_time())
        await self.nursery.start(self._guarded, room)
        log.info("encounter created: %r by %s", name, _who(creator), extra={"encounter": eid})
        return room, token

    async def _dice_for(self, eid: str, choice: DiceChoice | None) -> RoomDice | None:
        """Verifiable dice for a new encounter: always for seeded dice; for fair dice
        unless the server was given a test's entropy (which then rolls, unverified)."""
        if self.entropy is not None and (choice is None or choice.mode == "fair"):
            return None
        return RoomDice(eid, await self._dice_secret())

    async def _dice_secret(self) -> bytes:
        try:
            return await self.store.dice_secret()
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The dice could not be prepared: {exc}"
            ) from None

    def _new_room(self, eid: str, state: sdk.EncounterState, dice: RoomDice | None = None) -> Room:
        """A room for ``state`` with this server's engine, store, entropy and limits.

        An encounter with verifiable dice (``state.dice``) needs its ``dice``
        (:meth:`_restored_dice` for one read from the store)."""
        if dice is None and state.dice is not None and self.entropy is None:
            log.error("encounter %s: its verifiable dice were not restored", eid)
        room = Room(
            eid,
            self.engine,
            self.store,
            state,
            entropy=self.entropy,
            dice=dice,
            reaction_seconds=self.config.reaction_seconds,
            # The room's own cap is the sum; Methods.m_join holds each part to its own.
            max_members=self.config.limits.max_connections_per_encounter
            + self.config.limits.max_spectators_per_encounter,
        )
        room.on_change = self.sync_record
        room.on_empty = self._emptied
        return room

    async def _guarded(
        self, room: Room, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Run a room's loop; if it ever fails, report it and keep the server up."""
        with trio.CancelScope() as scope:
            room.cancel_scope = scope
            try:
                await room.run(task_status=task_status)
            except Exception as exc:
                log.exception("encounter %s stopped", room.id)
                room.crashed = repr(exc)
                room.notify_gm(
                    EncounterErrorNotification(room.id, f"The encounter stopped: {exc!r}")
                )

    async def create_room_from_request(
        self,
        params: CreateEncounterParams,
        address: str = "?",
        gm: str | None = None,
        loopback: bool | None = None,
    ) -> tuple[Room, str]:
        """``create_encounter``: check who may create, the arena and the roster, then
        create (see :meth:`creator_for`)."""
        creator = await self.creator_for(params, address, gm, loopback)
        name = params.name
        if not name.strip() or len(name) > 200:
            raise _roster_error("'name' must be a string of 1-200 characters.")
        arena = self._arena(await self.with_library(params.arena))
        raw = params.creatures
        if not raw and not params.seats:
            raise _roster_error("'creatures' must be a non-empty list (or ask for 'seats').")
        rolled: list[str] = []
        creatures, problems = expand_roster(raw, self.compendium, rolled=rolled)
        for c in creatures:
            if c.zone is not None and not arena.has_zone(c.zone):
                problems.append(f"{c.id}: unknown zone {c.zone!r}")
        for i, seat in enumerate(params.seats):
            if seat.zone is not None and not arena.has_zone(seat.zone):
                problems.append(f"seats[{i}].zone: unknown zone {seat.zone!r}")
        if problems:
            raise _roster_error("; ".join(problems))
        options = None
        if params.options is not None:
            try:
                options = converter.structure(params.options, EncounterOptions)
            except cattrs.BaseValidationError as exc:
                raise _roster_error("; ".join(describe_errors(exc, "options"))) from None
        dice = parse_dice_option(params.dice)
        arena_name = params.arena if isinstance(params.arena, str) else arena.name
        return await self.create_room(
            name,
            arena,
            creatures,
            options,
            creator,
            arena_name=arena_name,
            public=params.public,
            dice=dice,
            roll_hp=rolled,
        )

    def arena_data(self, path: Path) -> dict[str, Any]:
        """The content of the arena file ``path`` as an object (TOML converted), once it
        loads (:class:`ArenaError` otherwise; ``OSError`` when it cannot be read)."""
        load_arena(path, asset_tags=self.engine.asset_tags)  # every check the server makes
        text = path.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        assert isinstance(data, dict)
        data.pop("$schema", None)
        return data

    async def library_arenas(self) -> dict[str, LibraryArena]:
        """The arenas GMs saved (``save_arena``), by name, as the store has them now (on
        several nodes, whichever node saved them)."""
        return {a.name: a for a in await self.store.library_arenas()}

    async def with_library(self, value: Any) -> Any:
        """``create_encounter``'s ``arena``: a name of the library (not bundled, nor a
        plugin's) becomes its arena object; anything else is left as it is."""
        if isinstance(value, str) and value not in self.arena_library():
            saved = (await self.library_arenas()).get(value)
            if saved is not None:
                data: dict[str, Any] = json.loads(saved.text)
                return data
        return value

    def _arena(self, value: Any) -> Arena:
        if isinstance(value, str):
            library = self.arena_library()
            found = library.get(value)
            if found is None:
                names = ", ".join(sorted(library)) or "none"
                raise _roster_error(
                    f"There is no arena {value!r} bundled or in the library; bundled: {names}."
                )
            if isinstance(found, dict):
                return parse_arena(found, f"arena {value!r}", asset_tags=self.engine.asset_tags)
            return load_arena(found, asset_tags=self.engine.asset_tags)
        if isinstance(value, dict):
            try:
                return parse_arena(value, "arena", asset_tags=self.engine.asset_tags)
            except ArenaError as exc:
                raise _roster_error(str(exc).replace("\n", "; ")) from None
        raise _roster_error("'arena' must be a bundled arena's name or an arena object.")

    async def open_encounter_file(
        self, spec: EncounterFile, source: str | None = None
    ) -> tuple[Room, str]:
        """Create an encounter from a file and run its setup (surprise and positions).

        ``source`` (the file's resolved path) is kept in its record. Returns the room
        and its GM token.
        """
        room, token = await self.create_room(
            spec.name, spec.arena, list(spec.creatures), spec.options, source=source
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

    async def reuse_or_open_file(
        self, spec: EncounterFile, source: Path
    ) -> tuple[Room, str | None, bool]:
        """``zonekeep serve --example FILE``: the unfinished encounter created from
        ``source`` (resolved) earlier, loaded, its tokens untouched (they end only when
        the GM takes them back), or a new one from ``spec``. Returns the room, the new
        encounter's GM token (None for a reused one), and whether it was reused."""
        path = str(source.resolve())
        for record in reversed(await self.store.records(status="open")):
            if record.source != path:
                continue
            try:
                room = await self.load(record.id)
            except ProtocolError as exc:
                log.warning("encounter %s (from %s) not reused: %s", record.id, path, exc.message)
                continue
            return room, None, True
        room, token = await self.open_encounter_file(spec, source=path)
        return room, token, False

    # -- links and tokens ---------------------------------------------------------------------

    async def fresh_links(self, room: Room, keep: Any = None, rotate_gm: bool = True) -> Links:
        """``encounter_links``: a new GM token (with ``rotate_gm``, the old ones revoked,
        their connections but ``keep`` closed; else the old ones keep working), a fresh
        token for each seat (every player with a seat or a creature) and a new spectator
        token."""
        old = {g.token_hash for g in room.grants if g.role == "gm"} if rotate_gm else set()
        gm_token = await room.grant("gm")  # stored before the old ones go
        await self.revoke(room, old)
        closed = self.close_holders(room, old, keep) if self.close_holders is not None else 0
        players = {g.player for g in room.grants if g.role == "player" and g.player}
        players |= {c.controller for c in room.state.creatures.values() if c.controller != "gm"}
        seats = {player: await room.grant("player", player) for player in sorted(players)}
        return Links(gm_token, seats, await room.grant("spectator"), closed)

    async def revoke(self, room: Room, token_hashes: set[str]) -> None:
        """Forget the grants of ``token_hashes`` in the store (durable first: a revoked
        token never comes back after a restart), then in ``room``: they open nothing
        from now on. :class:`ProtocolError` (``store_unavailable``) when the store fails;
        then nothing is revoked."""
        if not token_hashes:
            return
        try:
            await self.store.remove_grants(room.id, token_hashes)
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The token could not be revoked: {exc}"
            ) from None
        room.grants = [g for g in room.grants if g.token_hash not in token_hashes]

    # -- records ------------------------------------------------------------------------------

    async def record_of(self, encounter: str) -> EncounterRecord | None:
        """The freshest record of ``encounter``: the loaded room's, else the store's."""
        room = self.rooms.get(encounter)
        if room is not None and room.record is not None:
            return room.record
        return await self.store.get_record(encounter)

    async def put_record(self, record: EncounterRecord) -> None:
        """Store ``record`` (and keep it in its room when loaded); ``store_unavailable``."""
        try:
            await self.store.put_record(record)
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The change could not be saved: {exc}"
            ) from None
        room = self.rooms.get(record.id)
        if room is not None:
            room.record = record

    async def sync_record(self, room: Room, *, touched: bool = False) -> None:
        """Bring ``room``'s record up to date (phase, round, seats; ``touched``: someone
        joined or sent a command) and store it when something the lobby shows changed,
        or the last activity is a minute old. An encounter that ended is archived now
        (and leaves memory once nobody is in it); one a rewind brought back from its
        end is open again."""
        record = room.record
        if record is None:
            return
        state = room.state
        status = record.status
        if state.phase == "ended" and status == "open":
            status = "archived"
        elif state.phase != "ended" and status != "open" and not room.closed:
            status = "open"  # a GM rewind of an ended encounter that is still loaded
        players = tuple(sorted({g.player for g in room.grants if g.role == "player" and g.player}))
        if (
            status == record.status
            and state.phase == record.phase
            and state.round == record.round
            and players == record.players
        ):  # nothing the lobby shows changed (after nearly every command): no copy to compare
            if not touched:
                return
            now = self.clock()
            if now - self._activity_written.get(room.id, record.last_activity) < (
                ACTIVITY_WRITE_SECONDS
            ):
                room.record = attrs.evolve(record, last_activity=now)
                return
        fresh = attrs.evolve(
            record, status=status, phase=state.phase, round=state.round, players=players
        )
        now = self.clock()
        if status != record.status:
            fresh = attrs.evolve(fresh, last_activity=now)
        write = fresh != record
        if touched:
            written = self._activity_written.get(room.id, record.last_activity)
            write = write or now - written >= ACTIVITY_WRITE_SECONDS
            fresh = attrs.evolve(fresh, last_activity=now)
        room.record = fresh
        if not write:
            return
        await self.store.put_record(fresh)
        if status == "open" and record.status != "open":
            # put_record never reopens an archived encounter (an operator's archive must
            # not be undone by a late update); a GM's rewind past the end does.
            await self.store.set_status(room.id, "open", last_activity=now)
        self._activity_written[room.id] = fresh.last_activity
        if status != record.status:
            log.info("encounter %s: %s", room.id, status)
            if status == "archived" and not room.members:
                self._unload_soon(room)

    async def touch(self, room: Room) -> None:
        """Someone joined ``room`` or sent it a command (its last activity)."""
        try:
            await self.sync_record(room, touched=True)
        except StoreError as exc:
            log.warning("encounter %s: last activity not saved: %s", room.id, exc)

    # -- loading and unloading ----------------------------------------------------------------

    async def load(self, encounter: str, token: str | None = None, *, check: bool = False) -> Room:
        """The room of ``encounter``, loaded from the store if it is not in memory.

        With ``check``, the store's grants are checked before anything is built: a
        ``token`` that opens nothing (or, without one, an encounter that is not public)
        is refused with ``bad_token``, so that a stranger cannot make the server load
        encounters. Concurrent loads of one encounter load it once. Refusals:
        ``unknown_encounter``, ``encounter_archived``, ``bad_token``, ``server_full``.
        """
        while True:
            room = self.rooms.get(encounter)
            if room is not None:
                return room
            waiting = self._loading.get(encounter)
            if waiting is None:
                break
            await waiting.wait()
        done = self._loading[encounter] = trio.Event()
        try:
            return await self._load(encounter, token, check)
        finally:
            del self._loading[encounter]
            done.set()

    async def _load(self, eid: str, token: str | None, check: bool) -> Room:
        assert self.nursery is not None
        unknown = ProtocolError(
            "unknown_encounter", f"There is no encounter {eid!r} on this server."
        )
        record, stored = await self._read_open(eid, unknown)
        if check:
            if token is not None:
                wanted = hashlib.sha256(token.encode("utf-8")).hexdigest().encode()
                if not any(
                    hmac.compare_digest(g.token_hash.encode(), wanted) for g in stored.grants
                ):
                    raise ProtocolError("bad_token", "That token does not open this encounter.")
            elif record is None or not record.public:
                raise ProtocolError(
                    "bad_token", "That encounter is not public: join it with a token."
                )
        self._check_room_for_one_more()
        if self.node is not None:
            # Several nodes: serve it only with its lease (or send the join to the node
            # that has it), then read it again: the last holder may have played on.
            await self.node.acquire(eid)
            try:
                return await self._load_held(eid, record, unknown)
            except BaseException:
                with trio.CancelScope(shield=True):
                    await self.node.release(eid)
                raise
        return await self._build(eid, record, stored, unknown)

    async def _read_open(
        self, eid: str, unknown: ProtocolError
    ) -> tuple[EncounterRecord | None, StoredEncounter]:
        """The stored record and log of encounter ``eid``, refused when it cannot be read
        (``store_unavailable``), does not exist (``unknown``) or is no longer open."""
        try:
            record = await self.store.get_record(eid)
            stored = await self.store.load(eid)
        except StoreError as exc:
            if self.node is None:
                raise ProtocolError(
                    "store_unavailable", f"The encounter could not be read: {exc}"
                ) from None
            # A node cut off from the store: the player sees the documented refusal
            # (their client retries, through another node too), the operator the cause.
            log.warning("encounter %s: could not be read: %s", eid, exc)
            raise ProtocolError("store_unavailable", HANDED_OVER) from None
        if stored is None:
            raise unknown
        if record is not None and record.status != "open":
            raise _archived(eid)
        return record, stored

    async def _load_held(
        self, eid: str, record: EncounterRecord | None, unknown: ProtocolError
    ) -> Room:
        record, stored = await self._read_open(eid, unknown)
        return await self._build(eid, record, stored, unknown)

    async def _build(
        self,
        eid: str,
        record: EncounterRecord | None,
        stored: StoredEncounter,
        unknown: ProtocolError,
    ) -> Room:
        assert self.nursery is not None
        state = await self._rebuild(stored)
        if state is None:
            raise unknown
        if state.phase == "ended":
            if record is not None:  # it ended before its record said so (a crash between)
                await self.store.put_record(
                    attrs.evolve(record, status="archived", phase="ended", round=state.round)
                )
            raise _archived(eid)
        state.options, notes = clamp_options(state.options)
        for note in notes:
            # Stored before the ranges were enforced: clamped, not a runaway.
            log.warning("encounter %s: option %s", eid, note)
        try:
            dice = await self._restored_dice(eid, state)
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The encounter's dice could not be read: {exc}"
            ) from None
        room = self._new_room(eid, state, dice)
        room.grants = [Grant(g.token_hash, g.role, g.player) for g in stored.grants]  # type: ignore[arg-type]
        if record is None:  # stored before records existed, or imported
            now = self.clock()
            record = EncounterRecord(
                id=eid,
                title=state.name,
                arena=state.arena.name,
                creator=None,
                created=now,
                last_activity=now,
                phase=state.phase,
                round=state.round,
                players=tuple(sorted({g.player for g in stored.grants if g.player})),
            )
            await self.store.put_record(record)
        room.record = record
        self.rooms[eid] = room
        started = trio.current_time()
        await self.nursery.start(self._guarded, room)
        log.info("encounter %s loaded in %.3f s", eid, trio.current_time() - started)
        return room

    async def _restored_dice(self, eid: str, state: sdk.EncounterState) -> RoomDice | None:
        """The dice of a restored encounter: its seed again, and the counter after the
        highest one in its log (so no die is ever drawn twice)."""
        if state.dice is None:
            return None
        counter = next_counter(e for _, e in await self.store.read(eid))
        dice = RoomDice(eid, await self.store.dice_secret(), counter=counter)
        dice.resume(state.dice)
        if dice.owed and state.phase != "ended":
            # Its seed is not this store's (an imported log): a new one is committed
            # now, before any roll, and the old one's rolls stay unrevealed.
            event = dice.recommit(state.dice)
            try:
                await self.store.append(eid, state.seq + 1, (event,))
            except StoreError as exc:  # then it comes after the next command's events
                log.error("encounter %s: the new dice commitment was not saved: %s", eid, exc)
                dice.owed = True
                dice.resume(state.dice)
                return dice
            host.apply_event(state, event, self.engine.catalog)
        return dice

    async def _rebuild(self, stored: Any) -> sdk.EncounterState | None:
        tail = await self.store.read(stored.id, stored.snapshot_seq)
        if stored.snapshot is not None and not any(isinstance(e, sdk.Rewound) for _, e in tail):
            state: sdk.EncounterState = converter.structure(stored.snapshot, sdk.EncounterState)
            for _, event in tail:
                host.apply_event(state, event, self.engine.catalog)
            return state
        everything = [e for _, e in await self.store.read(stored.id)]
        if not everything:
            log.error("encounter %s has no events in the store; skipped", stored.id)
            return None
        return sdk.replay(everything, self.engine.catalog)

    def _emptied(self, room: Room) -> None:
        """The last member left ``room``: an archived (ended) encounter leaves memory now."""
        if room.record is not None and room.record.status != "open":
            self._unload_soon(room)

    def _unload_soon(self, room: Room) -> None:
        if self.nursery is not None and not room.closed:
            self.nursery.start_soon(self._unload_quietly, room)

    async def _unload_quietly(self, room: Room) -> None:
        """Unload ``room`` from a task of its own: a failure is logged, never fatal."""
        try:
            await self.unload(room)
        except Exception:
            log.exception("encounter %s: unloading it failed", room.id)

    async def unload(
        self,
        room: Room,
        reason: str | None = None,
        message: str = "",
        *,
        save: bool = True,
    ) -> int:
        """Take ``room`` out of memory: its members (if any) get ``encounter_closed``
        (``reason``) and are no longer joined; the jobs queued finish; a snapshot and
        the record are written (unless not ``save``: it was deleted), so the next load
        is quick. Returns how many members there were."""
        if self.rooms.get(room.id) is not room or room.closed:
            return 0
        room.closed = True
        del self.rooms[room.id]
        members = list(room.members)
        if reason is not None:
            notice = EncounterClosedNotification(room.id, reason, message)  # type: ignore[arg-type]
            for member in members:
                push(member.subscriber, notice)
        if self.detach is not None:
            self.detach(room)
        room.members = []
        await room.drain()
        if save:
            try:
                state = room.state
                snapshot = state_to_dict(state)
                await self.store.append(room.id, state.seq + 1, (), snapshot=snapshot)
                if room.record is not None:
                    await self.store.put_record(room.record)
            except (StoreError, ValueError) as exc:
                log.warning("encounter %s: no snapshot written on unload: %s", room.id, exc)
        if room.cancel_scope is not None:
            room.cancel_scope.cancel()
        self._activity_written.pop(room.id, None)
        if self.node is not None:
            await self.node.release(room.id)
        log.info("encounter %s unloaded", room.id)
        return len(members)

    async def archive(self, encounter: str, reason: str = "archived", message: str = "") -> int:
        """Archive ``encounter`` (its record's status) and unload it if it is loaded, its
        members told. Returns how many members it had. ``unknown_encounter``."""
        record = await self.record_of(encounter)
        if record is None:
            raise ProtocolError(
                "unknown_encounter", f"There is no encounter {encounter!r} on this server."
            )
        if record.status != "archived":
            await self.put_record(
                attrs.evolve(record, status="archived", last_activity=self.clock())
            )
        room = self.rooms.get(encounter)
        if room is None:
            return 0
        return await self.unload(room, reason, message or "The encounter was archived.")

    # -- running --------------------------------------------------------------------------------

    async def start(self) -> None:
        """At start: say who may create, run the archiving sweep once, and start the
        idle unloading, the hourly sweeps and the watch on the store (tasks of the
        server's nursery). Nothing is loaded: each encounter loads on its first join."""
        assert self.nursery is not None
        try:
            log.info("%s", await self.creation_summary())
        except (StoreError, NotImplementedError) as exc:
            log.warning("creation: %s (GM keys could not be read: %s)", self.config.creation, exc)
        await self.sweep()
        if self.node is not None:
            self.nursery.start_soon(self.node.run)
        self.nursery.start_soon(self._sweep_hourly)
        self.nursery.start_soon(self._unload_idle)
        self.nursery.start_soon(self._watch_outside)

    async def sweep(self) -> tuple[int, int]:
        """The archiving sweep: archive the open encounters whose last activity is older
        than ``archive_after_days``, delete the archived ones older than
        ``delete_archived_after_days``. Returns how many of each."""
        archived = deleted = 0
        now = self.clock()
        try:
            days = self.config.archive_after_days
            if days is not None:
                for record in await self.store.records(status="open"):
                    fresh = await self.record_of(record.id) or record
                    room = self.rooms.get(record.id)
                    if now - fresh.last_activity <= days * DAY or (room and room.members):
                        continue
                    await self.archive(record.id, message="Nobody joined it for a long time.")
                    archived += 1
            days = self.config.delete_archived_after_days
            if days is not None:
                for record in await self.store.records(status="archived"):
                    if now - record.last_activity <= days * DAY or record.id in self.rooms:
                        continue
                    await self.store.delete(record.id)
                    deleted += 1
        except (StoreError, ProtocolError, NotImplementedError) as exc:
            log.error("the archiving sweep failed: %s", exc)
        if archived or deleted:
            log.info("archiving sweep: %d archived, %d deleted", archived, deleted)
        try:  # after the deletions: their maps may be unused now
            gone = await self.store.forget_unused_images(now - UNUSED_IMAGE_GRACE_DAYS * DAY)
        except (StoreError, NotImplementedError) as exc:
            log.error("forgetting the unused map images failed: %s", exc)
        else:
            if gone:
                log.info("forgot %d map image(s) nothing used: %s", len(gone), ", ".join(gone))
        return archived, deleted

    async def _sweep_hourly(self) -> None:
        while True:
            await trio.sleep(SWEEP_SECONDS)
            try:
                await self.sweep()
            except Exception:  # a bug: logged, and the next sweep is in an hour
                log.exception("the archiving sweep failed")

    def idle_rooms(self, now: float) -> list[Room]:
        """The rooms to unload at ``now`` (trio's clock): nobody in them, no timer
        running, for ``idle_unload_minutes``; ended ones nobody watches at once."""
        limit = self.config.idle_unload_minutes * 60
        return [
            room
            for room in self.rooms.values()
            if not room.members
            and (not room.timer_running or room.crashed is not None)
            and (
                now - room.last_busy >= limit
                or (room.record is not None and room.record.status != "open")
            )
        ]

    async def _unload_idle(self) -> None:
        limit = self.config.idle_unload_minutes * 60
        interval = min(60.0, max(1.0, limit / 4))
        while True:
            await trio.sleep(interval)
            for room in self.idle_rooms(trio.current_time()):
                await self._unload_quietly(room)

    async def _watch_outside(self) -> None:
        """Every few seconds, look whether another process changed the store (the
        ``zonekeep`` command line) and catch up when it did."""
        changes = self.store.outside_changes
        try:
            last = await changes()
            await self._look_at_keys()
        except (StoreError, NotImplementedError) as exc:
            log.error("changes made to the store by other processes will go unnoticed: %r", exc)
            return
        while True:
            await trio.sleep(OUTSIDE_POLL_SECONDS)
            try:
                now = await changes()
                if now != last:
                    last = now
                    await self.catch_up()
            except (StoreError, ProtocolError) as exc:
                log.error("could not catch up with the store: %s", exc)
            except Exception:  # a bug: logged, and the next look is in a few seconds
                log.exception("could not catch up with the store")

    async def catch_up(self) -> None:
        """What another process changed: encounters archived or deleted while loaded
        leave memory (their members told), GM keys revoked close their connections.
        A restored encounter needs nothing: it loads on its next join."""
        rooms = list(self.rooms.values())
        # One query for every loaded room's record (one each made a node with 800 rooms
        # ask 400 queries a second while another node played).
        stored = {r.id: r for r in await self.store.records(ids=[room.id for room in rooms])}
        for room in rooms:
            record = stored.get(room.id)
            if record is None:
                await self.unload(
                    room, "deleted", "The server's operator deleted the encounter.", save=False
                )
            elif record.status == "archived" and room.record is not None:
                if room.record.status == "open":
                    room.record = record
                    await self.unload(
                        room, "archived", "The server's operator archived the encounter."
                    )
            elif room.record is not None:
                room.record = attrs.evolve(room.record, public=record.public)
        await self._look_at_keys()

    async def _look_at_keys(self) -> None:
        names = {k.name for k in await self.store.gm_keys()}
        before, self._key_names = self._key_names, names
        if before is None:
            return
        revoked = before - names
        if revoked:
            log.warning("GM key(s) revoked: %s", ", ".join(sorted(revoked)))
            if self.keys_revoked is not None:
                self.keys_revoked(revoked)

    async def drain(self) -> None:
        """Let every room finish the jobs queued so far, then store the records whose
        last activity was not stored yet (the server is shutting down)."""
        for room in list(self.rooms.values()):
            await room.drain()
        for room in list(self.rooms.values()):
            record = room.record
            if record is None or self._activity_written.get(room.id) == record.last_activity:
                continue
            try:
                await self.store.put_record(record)
            except (StoreError, NotImplementedError) as exc:
                log.warning("encounter %s: its record was not saved: %s", room.id, exc)


def _archived(eid: str) -> ProtocolError:
    return ProtocolError(
        "encounter_archived",
        f"Encounter {eid!r} is archived (it ended, or was archived). The server's operator "
        f"can bring it back with 'zonekeep encounters restore {eid}'.",
    )


def _who(creator: str | None) -> str:
    """A creator for the log: never a key, nor a key's hash."""
    if creator is None:
        return "the operator"
    kind, _, name = creator.partition(":")
    return {"key": "the server key", "ip": f"address {name}", "gm": f"GM key {name!r}"}.get(
        kind, kind
    )


class ArenaLibraryError(ValueError):
    """A plugin's arenas cannot be used (``zonekeep_arenas``): the server does not
    start. ``problems`` lists every one, each naming the plugin."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def plugin_arenas(engine: Engine) -> dict[str, dict[str, Any]]:
    """The arenas the plugins contribute (``zonekeep_arenas``), by id, each checked as an
    arena file is; :class:`ArenaLibraryError` with every problem otherwise."""
    found: dict[str, dict[str, Any]] = {}
    owner: dict[str, str] = {}
    problems: list[str] = []
    for impl in engine.pm.hook.zonekeep_arenas.get_hookimpls():
        origin = f"plugin {impl.plugin_name!r}"
        try:
            answer: Any = impl.function()
            items: list[Any] = list(answer or ())
        except Exception as exc:
            problems.append(f"{origin} failed in zonekeep_arenas: {exc!r}")
            continue
        for i, item in enumerate(items):
            where = f"{origin}, arena {i}"
            if not isinstance(item, dict):
                problems.append(f"{where}: an arena object (a dict), not {type(item).__name__}")
                continue
            data = {k: v for k, v in item.items() if k != "$schema"}
            try:
                arena = parse_arena(data, where, asset_tags=engine.asset_tags)
            except ArenaError as exc:
                problems.append(str(exc))
                continue
            if arena.id in owner:
                problems.append(
                    f"arena {arena.id!r} is contributed twice: by {owner[arena.id]} and {origin}"
                )
                continue
            owner[arena.id] = origin
            found[arena.id] = data
    if problems:
        raise ArenaLibraryError(problems)
    return found


def _roster_error(message: str) -> ProtocolError:
    """A bad roster, arena or options: the rules' ``invalid_params`` (4000)."""
    return ProtocolError.from_refusal("invalid_params", message)
