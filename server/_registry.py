"""The room registry: the encounters this server hosts, by id; creating them (from a
request or an encounter file) and bringing them back from the store at start.

Every room's loop runs as a task of the nursery the registry is given (the server's);
a loop that fails is reported to the GM and marks its room crashed, and the server
stays up.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from pathlib import Path
from typing import Any

import attrs
import cattrs
import trio

import zonekeep.sdk as sdk
from zonekeep.protocol import CreateEncounterParams, EncounterErrorNotification, ProtocolError
from zonekeep.sdk import (
    GM_ACTOR,
    Arena,
    ArenaError,
    Command,
    Compendium,
    EncounterOptions,
    Entropy,
    Refusal,
    clamp_options,
    converter,
    describe_errors,
    expand_roster,
    load_arena,
    option_problems,
    parse_arena,
    state_to_dict,
)
from zonekeep.sdk.engine import Engine

from ._compendium import build_compendium
from ._config import ServerConfig
from ._encounter_file import EncounterFile
from ._room import Grant, Job, Room
from ._store import EventStore, StoreError

log = logging.getLogger("zonekeep.server")


class Registry:
    """Rooms by encounter id, over one engine and one store."""

    def __init__(
        self,
        config: ServerConfig,
        engine: Engine,
        store: EventStore,
        entropy: Entropy | None = None,
        compendium: Compendium | None = None,
    ) -> None:
        self.config = config
        self.engine = engine
        self.store = store
        self.entropy = entropy
        #: The creature compendium (``list_compendium``, roster references); built from
        #: the config and the engine's plugins when not given (``CompendiumError``).
        self.compendium = compendium or build_compendium(config, engine)
        self.rooms: dict[str, Room] = {}
        #: Where the rooms' loops run; set by the server while it runs.
        self.nursery: trio.Nursery | None = None
        self._counter = 0
        #: Quotas: when each creator created encounters (trio's clock, the last hour's),
        #: and who created each encounter of this run.
        self.created_at: dict[str, list[float]] = {}
        self.creator_of: dict[str, str] = {}

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

    # -- counting ---------------------------------------------------------------------------

    def open_rooms(self) -> list[Room]:
        """The rooms whose encounter has not ended: those that count toward
        ``max_encounters`` and their creator's ``open_encounters``."""
        return [r for r in self.rooms.values() if r.state.phase != "ended"]

    def check_quotas(self, creator: str) -> None:
        """Refuse (``quota_exceeded``) when ``creator`` has reached a quota."""
        limits = self.config.limits
        now = trio.current_time()
        recent = [t for t in self.created_at.get(creator, []) if now - t < 3600]
        self.created_at[creator] = recent
        if len(recent) >= limits.encounters_per_hour:
            wait = max(1, round(3600 - (now - recent[0])))
            raise ProtocolError(
                "quota_exceeded",
                f"Quota encounters_per_hour: you created {len(recent)} encounters in the "
                f"last hour; the next one can be created in {wait} seconds.",
            )
        mine = [r for r in self.open_rooms() if self.creator_of.get(r.id) == creator]
        if len(mine) >= limits.open_encounters:
            raise ProtocolError(
                "quota_exceeded",
                f"Quota open_encounters: {len(mine)} encounters you created have not ended; "
                "a slot frees as soon as one of them ends (end_encounter).",
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
    ) -> tuple[Room, str]:
        """Create an encounter, store it, and start its loop under the server's nursery.

        ``creator`` (a request's: its key or IP address) is held to its quotas; the
        operator's own encounters (files, the command line) have none. Returns the room
        and its GM token.
        """
        if self.nursery is None:
            raise RuntimeError("the server is not running")
        if creator is not None:
            self.check_quotas(creator)
        if len(self.open_rooms()) >= self.config.limits.max_encounters:
            raise ProtocolError(
                "too_many_connections", "This server hosts as many encounters as it can."
            )
        problems = option_problems(options) if options is not None else []
        if problems:
            raise _roster_error("; ".join(problems) + ".")
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
        if creator is not None:
            self.created_at.setdefault(creator, []).append(trio.current_time())
            self.creator_of[eid] = creator
        await self.nursery.start(self._guarded, room)
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
            # The room's own cap is the sum; Methods.m_join holds each part to its own.
            max_members=self.config.limits.max_connections_per_encounter
            + self.config.limits.max_spectators_per_encounter,
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
            room.notify_gm(EncounterErrorNotification(room.id, f"The encounter stopped: {exc!r}"))

    async def create_room_from_request(
        self, params: CreateEncounterParams, address: str = "?"
    ) -> tuple[Room, str]:
        """``create_encounter``: check the server key, the arena and the roster, then create.

        The creator held to the quotas is the server key used (when the server has one),
        else the client's IP ``address``.
        """
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
        creatures, problems = expand_roster(raw, self.compendium)
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
        if key is not None and params.server_key is not None:  # checked above
            creator = "key:" + hashlib.sha256(params.server_key.encode()).hexdigest()
        else:
            creator = "ip:" + address
        return await self.create_room(name, arena, creatures, options, creator)

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

    # -- taking tokens back -------------------------------------------------------------------

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

    # -- restoring --------------------------------------------------------------------------

    async def restore(self) -> int:
        """Bring back every unfinished encounter from the store: same state, seq and seats.

        Pending decisions get fresh deadlines when their rooms start. Returns how many.
        """
        assert self.nursery is not None
        count = 0
        for stored in await self.store.unfinished():
            state = await self._rebuild(stored)
            if state is None:
                continue
            state.options, notes = clamp_options(state.options)
            for note in notes:
                # Stored before the ranges were enforced: clamped, not a runaway.
                log.warning("encounter %s: option %s", stored.id, note)
            room = self._new_room(stored.id, state)
            room.grants = [Grant(g.token_hash, g.role, g.player) for g in stored.grants]  # type: ignore[arg-type]
            self.rooms[stored.id] = room
            await self.nursery.start(self._guarded, room)
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

    async def drain(self) -> None:
        """Let every room finish the jobs queued so far."""
        for room in list(self.rooms.values()):
            await room.drain()


def _roster_error(message: str) -> ProtocolError:
    """A bad roster, arena or options: the rules' ``invalid_params`` (4000)."""
    return ProtocolError.from_refusal("invalid_params", message)
