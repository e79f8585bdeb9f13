"""The method table: what each request does, for one client, without any transport.

A :class:`Client` is one client's side of the protocol: whether it said ``hello``, the
rooms it joined, its rate limit. :meth:`Client.handle` takes one frame's content as
it came off the wire and answers through the client's :class:`~._fanout.Subscriber`
(the connection, or a test's recorder): the reply, then the notifications that
follow it. :class:`Methods` maps each request method to room calls, shared by every
client of a server.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import re
import secrets
import tomllib
import unicodedata
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import attrs
import trio

from zonekeep.protocol import (
    METHODS,
    PROTOCOL_VERSION,
    ActionDetail,
    ActionsParams,
    ActionsResult,
    ArchiveEncounterParams,
    ArchiveEncounterResult,
    ArenaItem,
    AttackOption,
    ChatParams,
    ChatResult,
    CheckArenaParams,
    CheckArenaResult,
    CheckCharacterParams,
    CheckCharacterResult,
    ChoiceOption,
    CommandParams,
    CommandResult,
    CompendiumItem,
    CompendiumSourceInfo,
    ContributeDiceParams,
    ContributeDiceResult,
    CreateEncounterParams,
    CreateEncounterResult,
    CreateSeatParams,
    CreateSeatResult,
    CreateSpectatorLinkParams,
    CreateSpectatorLinkResult,
    DeleteArenaParams,
    DeleteArenaResult,
    EncounterInfo,
    EncounterLinksParams,
    EncounterLinksResult,
    EncounterOptionsParams,
    EncounterOptionsResult,
    EndingInfo,
    FeatureInfo,
    HelloParams,
    JoinParams,
    JoinResult,
    LeaveParams,
    LeaveResult,
    ListArenasParams,
    ListArenasResult,
    ListCompendiumParams,
    ListCompendiumResult,
    ListEncountersParams,
    ListEncountersResult,
    ListSeatsParams,
    ListSeatsResult,
    PingParams,
    PingResult,
    ProblemInfo,
    ProtocolError,
    RemoveSeatParams,
    RemoveSeatResult,
    RequestId,
    RevokeSpectatorLinkParams,
    RevokeSpectatorLinkResult,
    RewindParams,
    RewindResult,
    RollParams,
    RollResult,
    RotateDiceParams,
    RotateDiceResult,
    RotateGmTokenParams,
    RotateGmTokenResult,
    SaveArenaParams,
    SaveArenaResult,
    SeatInfo,
    SequenceItemInfo,
    SetPublicParams,
    SetPublicResult,
    SnapshotParams,
    SnapshotResult,
    SubmitCharacterParams,
    SubmitCharacterResult,
    TableHomeParams,
    TableHomeResult,
    TableLinkParams,
    TableLinkResult,
    ZoneOption,
    parse_params,
    parse_request,
    wire,
)
from zonekeep.sdk import (
    DYING,
    GM_ACTOR,
    Actor,
    ArenaError,
    Command,
    DiceCommitted,
    DiceError,
    DiceRolled,
    EncounterState,
    Event,
    parse_arena,
    parse_dice,
    resource_key,
)
from zonekeep.sdk.engine import ActionDetail as EngineDetail
from zonekeep.sdk.host import (
    character_creature,
    character_problems,
    creature_to_dict,
    import_character,
    parse_character,
)

from . import _metrics
from ._config import Limits
from ._dice import check_contribution
from ._fanout import Member, Subscriber, push
from ._home import creation_rule, table_home_url, table_link
from ._idempotency import (
    ARENA_SCOPE,
    JOIN_KEYED,
    ROTATION_REPEAT_SECONDS,
    Answer,
    Keyed,
    fingerprint,
    request_scope,
    seal,
    seal_keys,
    seat_of,
    unseal,
)
from ._plugin_data import setting_infos, settings_schema
from ._registry import Registry, is_loopback
from ._room import FoldWork, Grant, Job, Room, token_hash
from ._store import CREATION, EncounterRecord, LibraryArena, StoreError
from ._wire import encode_message, encoded_response_text, error_text, response_text

log = logging.getLogger("zonekeep.session")

_R = TypeVar("_R")


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: Events serialized between two checkpoints when a ``join`` replays a long log: a
#: replay of thousands of events yields to the other rooms and connections this often.
REPLAY_SLICE = 256
#: How often a join reads the log again when the room moved during its reads.
_JOIN_READS = 3

#: The close code of a connection whose token the GM took back (SPEC.md, close codes).
REVOKED = 4002
#: The close code of a connection whose GM key the operator revoked.
KEY_REVOKED = 4003

#: How many ``actions`` answers the server keeps (see ``Methods._details``).
DETAILS_KEPT = 256

#: The methods whose replies count against a connection's reply byte budget.
BUDGETED = frozenset({"snapshot", "join", "list_encounters", "list_compendium", "list_arenas"})
#: What folding one event for a player's or spectator's resume costs in that budget (in
#: bytes): the CPU of a fold is counted with the bytes of the reply (SPEC.md, "join").
FOLD_BYTES = 256


@attrs.frozen
class Encoded:
    """A request's result already serialized as JSON (``json``), sent as it is: the
    welcome, the same for every ``hello``; a long replay, serialized in slices."""

    json: str


#: What a token bucket forgives of a token (SPEC.md, "Limits"): the rounding of the
#: clock's floating-point seconds, so that a client at exactly the announced rate (one
#: message every ``1 / rate`` seconds after a full burst) is never refused.
TOKEN_SLACK = 1e-6


class TokenBucket:
    """``rate`` tokens a second, up to ``burst``, full at the start; time comes from
    trio's clock, read when each message is. A message takes one token; one that finds
    less than one (:data:`TOKEN_SLACK` forgiven) is refused."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = trio.current_time()

    def take(self) -> bool:
        now = trio.current_time()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1 - TOKEN_SLACK:
            self.tokens = max(0.0, self.tokens - 1)
            return True
        return False

    def wait_ms(self) -> int | None:
        """The milliseconds until the bucket holds a token again (after a refusal);
        None when it never refills (a rate of 0)."""
        if self.rate <= 0:
            return None
        missing = max(0.0, 1 - TOKEN_SLACK - self.tokens)
        return math.ceil(missing / self.rate * 1000)


class ByteBudget:
    """Bytes a connection may be sent in replies that cost more than they ask (snapshots
    and replays): ``burst`` at most, refilled at ``rate`` a second (trio's clock). A
    reply is sent whole while the budget is positive, and may overdraw it; the next
    waits until the debt is paid back."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.bytes = float(burst)
        self.stamp = trio.current_time()

    def _refill(self) -> None:
        now = trio.current_time()
        self.bytes = min(self.burst, self.bytes + (now - self.stamp) * self.rate)
        self.stamp = now

    def check(self) -> None:
        """Refuse (``rate_limited``, with the seconds to wait) while the budget is spent."""
        self._refill()
        if self.bytes <= 0:
            # The budget is above 0 again after this many milliseconds (not before).
            wait_ms = math.floor(-self.bytes / self.rate * 1000) + 1 if self.rate > 0 else None
            when = f"Retry in {wait_ms / 1000:.1f} seconds." if wait_ms is not None else ""
            raise ProtocolError(
                "rate_limited",
                f"Too many bytes of snapshots and replays: at most {self.burst} at once and "
                f"{self.rate:g} a second. {when}".rstrip(),
                retry_after_ms=wait_ms,
            )

    def spend(self, count: int) -> None:
        self._refill()
        self.bytes -= count


def request_id_of(raw: str | bytes) -> RequestId | None:
    """The id of the request in ``raw`` when it can be read (a JSON object with a valid
    ``id``), else ``None``: what a refusal that does not read the request echoes."""
    if isinstance(raw, bytes):
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or "id" not in data:
        return None
    try:
        rid: RequestId = wire.structure(data["id"], RequestId)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return None
    return rid


class Methods:
    """Request method -> room calls, over a server's rooms and its ``hello`` result
    (``welcome``: the result serialized, see ``_welcome.Welcome.text``)."""

    def __init__(self, registry: Registry, welcome: Callable[[str | None], str]) -> None:
        self.registry = registry
        self.welcome = welcome
        #: Who holds each token (by hash): the clients joined with it (pruned to the
        #: room's members whenever the token is used again).
        self.holders: dict[str, set[Client]] = {}
        #: Every client (connection) of the server.
        self.clients: set[Client] = set()
        #: (encounter, player) -> the zone a seat's character starts in (create_encounter).
        self.seat_zones: dict[tuple[str, str], str] = {}
        #: (encounter, player) of the characters being added (``submit_character``).
        self.submitting: set[tuple[str, str]] = set()
        #: One lock per (encounter, scope) with keyed token or lobby requests under way.
        self.request_locks: dict[tuple[str, str], trio.Lock] = {}
        #: Deriving a key's seal is slow on purpose (PBKDF2): one at a time.
        self.seal_limiter = trio.CapacityLimiter(1)
        #: The last ``actions`` details per (encounter, creature, actor), with the state
        #: they were found in (see ``_details``).
        self.details_cache: dict[
            tuple[str, str, Actor],
            tuple[EncounterState, list[EngineDetail], EndingInfo | None],
        ] = {}
        #: (encounter, seat) -> the seat's ``chat`` and ``roll`` bucket (``table_rate_*``).
        self.table_buckets: dict[tuple[str, str], TokenBucket] = {}
        registry.detach = self.detach
        registry.close_holders = self.close_holders
        registry.keys_revoked = self.keys_revoked

    async def call(self, client: Client, method: str, raw: dict[str, Any]) -> Any:
        """The result of ``method`` with params ``raw`` for ``client`` (a result object,
        or :class:`Encoded`); :class:`ProtocolError` for a refusal."""
        if method != "hello" and not client.greeted:
            if method not in METHODS:
                parse_params(method, raw)  # the unknown-method error
            raise ProtocolError("hello_required", "Send 'hello' first.")
        params = parse_params(method, raw)
        handler = getattr(self, f"m_{method}")
        return await handler(client, params)

    async def m_hello(self, client: Client, params: HelloParams) -> Encoded:
        if client.greeted:
            raise ProtocolError("already_greeted", "This connection has already said hello.")
        major = params.protocol.split(".", 1)[0]
        if major != PROTOCOL_VERSION.split(".", 1)[0]:
            raise ProtocolError(
                "unsupported_version",
                f"This server speaks protocol {PROTOCOL_VERSION}; "
                f"version {params.protocol} is not supported.",
            )
        gm = None
        if params.gm_key is not None:
            gm = await self.registry.gm_for_key(params.gm_key)
            if gm is None:
                log.warning("hello with an unknown GM key from %s", client.address)
                raise ProtocolError(
                    "bad_gm_key",
                    "That is not a GM key of this server (or it was revoked); this "
                    "connection is not authenticated.",
                )
        client.greeted = True
        client.gm = gm
        return Encoded(self.welcome(gm))

    def _room(self, client: Client, eid: str, joined: bool = True) -> tuple[Room, Member]:
        room = self.registry.get(eid)
        if room is None:
            raise ProtocolError(
                "unknown_encounter", f"There is no encounter {eid!r} on this server."
            )
        member = client.rooms.get(eid)
        if member is None and joined:
            raise ProtocolError("not_joined", f"Join encounter {eid!r} first.")
        return room, member  # type: ignore[return-value]  # None only when not joined

    def _admit(self, client: Client, room: Room, grant: Grant) -> Member:
        """Seat ``client`` in ``room`` with ``grant``, within the connection caps (see
        :meth:`_admission_check`)."""
        holders = self._admission_check(client, room, grant)
        member = room.add_member(client.subscriber, grant)
        previous = client.tokens.get(room.id)
        if previous is not None:
            self.holders.get(previous, set()).discard(client)
        client.tokens[room.id] = grant.token_hash
        self.holders[grant.token_hash] = {*holders, client}  # pruned to those still here
        return member

    def _admission_check(self, client: Client, room: Room, grant: Grant) -> list[Client]:
        """Raise the refusal seating ``client`` in ``room`` with ``grant`` would get now,
        or return the other connections holding the same token there. The caps: per
        token (``max_connections_per_token``), spectators (``max_spectators_per_encounter``)
        and the GM and players (``max_connections_per_encounter``). Spectators are counted
        apart, so they can never take the place of the GM or a seat."""
        limits = self.registry.config.limits
        others = [m for m in room.members if m.subscriber is not client.subscriber]
        joined = {id(m.subscriber) for m in others}
        holders = [
            c
            for c in self.holders.get(grant.token_hash, ())
            if c is not client and id(c.subscriber) in joined
        ]
        if len(holders) >= limits.max_connections_per_token and not grant.public:
            raise ProtocolError(
                "too_many_connections",
                f"This token already has {limits.max_connections_per_token} connections "
                f"to encounter {room.id!r}.",
            )
        if grant.role == "spectator":
            cap, count = (
                limits.max_spectators_per_encounter,
                sum(m.role == "spectator" for m in others),
            )
            what = "spectator connections"
        else:
            cap, count = (
                limits.max_connections_per_encounter,
                sum(m.role != "spectator" for m in others),
            )
            what = "connections"
        if count >= cap:
            raise ProtocolError(
                "too_many_connections", f"Encounter {room.id!r} already has {cap} {what}."
            )
        room.seat_check(client.subscriber)
        return holders

    async def m_create_encounter(
        self, client: Client, params: CreateEncounterParams
    ) -> CreateEncounterResult:
        if params.idempotency_key is None:
            return await self._create_encounter(client, params)
        # Keyed: the scope is the creator (a GM key, the server key, or the address of an
        # open or keyless server), decided before anything is made or looked up.
        creator = await self.registry.creator_for(
            params, client.address, client.gm, client.loopback
        )
        scope = "create:" + creator
        key = params.idempotency_key
        keys = await trio.to_thread.run_sync(
            seal_keys, request_scope(CREATION, scope), key, limiter=self.seal_limiter
        )
        print_ = fingerprint("create_encounter", attrs.asdict(params))
        store = self.registry.store
        lock = self.request_locks.setdefault((CREATION, scope), trio.Lock())
        try:
            async with lock:
                sealed = await store.get_request(CREATION, scope, keys.id)
                record = unseal(keys, sealed) if sealed is not None else None
                if record is not None:
                    if record.get("method") != "create_encounter" or (
                        record.get("fingerprint") != print_
                    ):
                        raise ProtocolError(
                            "idempotency_key_reused",
                            f"The idempotency key {key!r} was used before for another "
                            "request; nothing was done. Use a new key for a new request.",
                        )
                    return await self._created_again(client, record["answer"])
                result = await self._create_encounter(client, params)
                answer = {
                    "method": "create_encounter",
                    "fingerprint": print_,
                    "answer": {
                        "encounter": result.encounter,
                        "gm_token": result.gm_token,
                        "seats": result.seats,
                    },
                }
                try:
                    await store.put_request(CREATION, scope, keys.id, seal(keys, answer))
                except StoreError as exc:
                    log.error("the answer of a keyed create_encounter was not kept: %s", exc)
                return result
        finally:
            if lock.statistics().tasks_waiting == 0 and not lock.locked():
                self.request_locks.pop((CREATION, scope), None)

    async def _created_again(self, client: Client, first: dict[str, Any]) -> CreateEncounterResult:
        """A repeated keyed ``create_encounter``: nothing is made; the connection joins the
        encounter the first one made, as its GM, with the first answer's GM token, and gets
        the first answer's ids and tokens with today's snapshot. A GM token rotated since
        (or an encounter archived or deleted) answers as ``join`` would."""
        encounter = str(first["encounter"])
        token = str(first["gm_token"])
        room = self.registry.get(encounter)
        if room is None:
            room = await self.registry.load(encounter, token, check=True)
        grant = room.find_grant(token)
        if grant is None:
            raise ProtocolError(
                "bad_token",
                "The encounter this key created has a new GM link since: nothing was "
                "made again. Open it with the GM's current link.",
            )
        member = self._admit(client, room, grant)
        client.rooms[room.id] = member
        return CreateEncounterResult(
            encounter=room.id,
            gm_token=token,
            role="gm",
            seq=room.state.seq,
            snapshot=room.snapshot(member),
            seats={str(k): str(v) for k, v in dict(first.get("seats") or {}).items()},
        )

    async def _create_encounter(
        self, client: Client, params: CreateEncounterParams
    ) -> CreateEncounterResult:
        room, token = await self.registry.create_room_from_request(
            params, client.address, client.gm, loopback=client.loopback
        )
        for seat in params.seats:
            if seat.zone is not None:
                self.seat_zones[(room.id, seat.player)] = seat.zone
        seats = {seat.player: await room.grant("player", seat.player) for seat in params.seats}
        grant = room.find_grant(token)
        assert grant is not None
        member = self._admit(client, room, grant)
        client.rooms[room.id] = member
        return CreateEncounterResult(
            encounter=room.id,
            gm_token=token,
            role="gm",
            seq=room.state.seq,
            snapshot=room.snapshot(member),
            seats=seats,
        )

    async def m_list_compendium(
        self, client: Client, params: ListCompendiumParams
    ) -> ListCompendiumResult:
        if (
            params.cr_min is not None
            and params.cr_max is not None
            and params.cr_min > params.cr_max
        ):
            raise ProtocolError(
                "invalid_params",
                f"'cr_min' ({params.cr_min:g}) must not be above 'cr_max' ({params.cr_max:g}).",
            )
        compendium = self.registry.compendium
        found = compendium.search(
            params.text,
            type=params.type,
            tag=params.tag,
            source=params.source,
            cr_min=params.cr_min,
            cr_max=params.cr_max,
            ids=params.ids,
        )
        page = found[params.offset : params.offset + params.limit]
        items = []
        sources: dict[str, CompendiumSourceInfo] = {}
        for full in page:
            source = compendium.source_of(full)
            items.append(CompendiumItem(full, source.name, compendium.entry_data(full)))
            if source.name not in sources:
                sources[source.name] = CompendiumSourceInfo(
                    source.name, source.title, source.license, source.attribution
                )
        return ListCompendiumResult(len(found), params.offset, items, list(sources.values()))

    # -- the builder ------------------------------------------------------------------------

    async def m_list_arenas(self, client: Client, params: ListArenasParams) -> ListArenasResult:
        bundled = self.registry.arena_library()
        saved = await self.registry.library_arenas()
        owner = await self._arena_owner(client, required=False)
        every: dict[str, Path | dict[str, Any] | LibraryArena] = dict(saved)
        every.update(bundled)  # a bundled name wins (save_arena refuses one anyway)
        found = sorted(every.items())
        items = []
        for name, where in found[params.offset : params.offset + params.limit]:
            if isinstance(where, LibraryArena):
                yours = owner is not None and owner in ("operator", where.owner)
                items.append(ArenaItem(name, json.loads(where.text), True, yours))
                continue
            if isinstance(where, dict):  # a plugin's, checked at start
                items.append(ArenaItem(name, where))
                continue
            try:
                data = await trio.to_thread.run_sync(self.registry.arena_data, where)
            except (OSError, ValueError) as exc:  # ArenaError is a ValueError
                log.warning("arena %s is left out of list_arenas: %s", where, exc)
                continue
            items.append(ArenaItem(name, data))
        return ListArenasResult(len(found), params.offset, items)

    async def m_check_arena(self, client: Client, params: CheckArenaParams) -> CheckArenaResult:
        if (params.arena is None) == (params.text is None):
            raise ProtocolError("invalid_params", "Give the arena as 'arena' or as 'text'.")
        data: object = params.arena
        if params.text is not None:
            try:
                if params.format == "toml":
                    data = tomllib.loads(params.text)
                else:
                    data = json.loads(params.text)
            except (ValueError, RecursionError) as exc:  # TOMLDecodeError is a ValueError
                why = str(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
                return CheckArenaResult([_text_problem(why, params.format.upper())], None)
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k != "$schema"}
        try:
            parse_arena(data, "arena", asset_tags=self.registry.engine.asset_tags)
        except ArenaError as exc:
            return CheckArenaResult([ProblemInfo(p.where, p.message) for p in exc.problems], None)
        assert isinstance(data, dict)
        return CheckArenaResult([], data)

    async def _arena_owner(self, client: Client, *, required: bool = True) -> str | None:
        """Who owns the library arenas this connection saves: ``gm:NAME`` (its GM key) or
        ``operator`` (loopback on a keyless server); else ``gm_key_required`` (``None``
        when not ``required``)."""
        gm, operator = await self._owner(client)
        if gm is not None:
            return "gm:" + gm
        if operator:
            return "operator"
        if not required:
            return None
        raise ProtocolError(
            "gm_key_required", "Say hello with your GM key to keep arenas in the library."
        )

    async def m_save_arena(
        self, client: Client, params: SaveArenaParams
    ) -> SaveArenaResult | Encoded:
        owner = await self._arena_owner(client)
        assert owner is not None
        return await self._once(
            CREATION,
            ARENA_SCOPE + owner,
            "save_arena",
            params,
            lambda: self._save_arena(owner, params),
            kept=lambda result: result.saved,  # problems: nothing saved, no key spent
        )

    async def _save_arena(self, owner: str, params: SaveArenaParams) -> SaveArenaResult:
        data = {k: v for k, v in params.arena.items() if k != "$schema"}
        name = data.get("id") if isinstance(data.get("id"), str) else ""
        try:
            arena = parse_arena(data, "arena", asset_tags=self.registry.engine.asset_tags)
        except ArenaError as exc:
            problems = [ProblemInfo(p.where, p.message) for p in exc.problems]
            return SaveArenaResult(False, str(name), False, problems)
        if arena.id in self.registry.arena_library():
            raise ProtocolError(
                "not_your_arena",
                f"{arena.id!r} is a bundled arena's name; give yours another id.",
            )
        if arena.map is not None and not await self._image_known(arena.map.image):
            problem = ProblemInfo(
                "map.image", "No image with this id is stored here: upload it (POST /images)."
            )
            return SaveArenaResult(False, arena.id, False, [problem])
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        if len(text.encode()) > self.registry.config.limits.max_message_bytes:
            raise ProtocolError("invalid_params", "The arena is too large to keep.")
        saved = LibraryArena(arena.id, owner, text, self.registry.clock())
        outcome = await self.registry.store.save_arena(
            saved, self.registry.config.limits.arenas_per_key
        )
        if outcome == "taken":
            raise ProtocolError(
                "not_your_arena", f"Another GM keeps an arena named {arena.id!r} here."
            )
        if outcome == "quota":
            limit = self.registry.config.limits.arenas_per_key
            raise ProtocolError(
                "quota_exceeded",
                f"You keep {limit} arenas here already (arenas_per_key); delete one first.",
            )
        log.info("arena %s saved in the library by %s (%s)", arena.id, owner, outcome)
        return SaveArenaResult(True, arena.id, outcome == "replaced", [])

    async def _image_known(self, image_id: str) -> bool:
        """Whether a map image of that id is stored (or is a bundled arena's)."""
        if await self.registry.store.get_image(image_id) is not None:
            return True
        for folder in self.registry.config.arena_dirs:
            for path in (folder / "maps").glob("*.png"):
                digest = await trio.to_thread.run_sync(_file_digest, path)
                if digest == image_id:
                    return True
        return False

    async def m_delete_arena(
        self, client: Client, params: DeleteArenaParams
    ) -> DeleteArenaResult | Encoded:
        owner = await self._arena_owner(client)
        assert owner is not None
        return await self._once(
            CREATION,
            ARENA_SCOPE + owner,
            "delete_arena",
            params,
            lambda: self._delete_arena(owner, params),
        )

    async def _delete_arena(self, owner: str, params: DeleteArenaParams) -> DeleteArenaResult:
        if params.name in self.registry.arena_library():
            raise ProtocolError("not_your_arena", f"{params.name!r} is a bundled arena.")
        wanted = None if owner == "operator" else owner
        old = await self.registry.store.delete_arena(params.name, wanted)
        if old is None:
            raise ProtocolError("invalid_params", f"There is no library arena {params.name!r}.")
        if wanted is not None and old.owner != wanted:
            raise ProtocolError(
                "not_your_arena", f"The arena {params.name!r} was saved with another GM key."
            )
        log.info("arena %s deleted from the library by %s", params.name, owner)
        return DeleteArenaResult(params.name)

    async def m_check_character(
        self, client: Client, params: CheckCharacterParams
    ) -> CheckCharacterResult:
        data, unmapped, problems = _imported(params.character, params.format)
        return CheckCharacterResult(
            problems, list(unmapped), data if params.format != "zonekeep" else None
        )

    async def m_submit_character(
        self, client: Client, params: SubmitCharacterParams
    ) -> SubmitCharacterResult | Encoded:
        room, member = self._room(client, params.encounter)
        if member.role == "spectator":
            _gm_only(member, "send a character")  # spectator_read_only
        player = params.player
        if member.role == "player":
            if player is not None and player != member.player:
                raise ProtocolError(
                    "not_your_creature", "A player may only send the character of their own seat."
                )
            player = member.player
        if player is None:
            raise ProtocolError("invalid_params", "Name the seat's 'player'.")
        keyed = _keyed(member, "submit_character", params, lambda first, events: {})
        if keyed is not None:
            first = await room.first_answer(keyed)
            if first is not None:
                return Encoded(encode_message(first))
        if not any(g.role == "player" and g.player == player for g in room.grants):
            raise ProtocolError("invalid_params", f"There is no seat for {player!r}.")
        state = room.state
        if any(c.controller == player for c in state.creatures.values()) or (
            (room.id, player) in self.submitting
        ):
            raise ProtocolError(
                "invalid_params", f"{player}'s seat already has its character in the encounter."
            )
        if state.phase not in ("surprise", "positions"):
            raise ProtocolError(
                "wrong_phase",
                "The GM has already placed the creatures: characters are sent before that. "
                "Ask the GM to add yours.",
            )
        data, unmapped, problems = _imported(params.character, params.format)
        if problems:
            listed = "; ".join(f"{p.path}: {p.message}" if p.path else p.message for p in problems)
            raise ProtocolError("invalid_params", f"That character is not valid: {listed}.")
        sheet = parse_character(data)
        cid = character_id(sheet.name, state)
        creature = character_creature(sheet, cid, controller=player)
        zone = self.seat_zones.get((room.id, player))
        creature.zone = zone if zone in state.zones else state.zones[0]
        seat = player

        def answer(first: int, events: Sequence[Event]) -> dict[str, Any]:
            return _data(SubmitCharacterResult(cid, seat, first + len(events) - 1, list(unmapped)))

        job = Job(
            GM_ACTOR,
            Command("add_creature", {"creature": creature_to_dict(creature)}),
            None,
            keyed=None if keyed is None else attrs.evolve(keyed, answer=answer),
        )
        # One character per seat: from here until its event is applied, another request
        # for this seat (four connections sending at once) is refused like a second one.
        self.submitting.add((room.id, player))
        try:
            repeated = await _submit(room, job)
        finally:
            self.submitting.discard((room.id, player))
        await self.registry.touch(room)
        if isinstance(repeated, Encoded):
            return repeated
        self.seat_zones.pop((room.id, player), None)
        log.info("character sent for seat %s", player, extra={"encounter": room.id})
        return SubmitCharacterResult(
            creature=creature.id, player=player, seq=room.state.seq, unmapped=list(unmapped)
        )

    async def m_list_seats(self, client: Client, params: ListSeatsParams) -> ListSeatsResult:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "list the seats")
        players = sorted({g.player for g in room.grants if g.role == "player" and g.player})
        return ListSeatsResult([self._seat(room, player) for player in players])

    async def m_table_home(self, client: Client, params: TableHomeParams) -> TableHomeResult:
        config = self.registry.config
        keyless = await self.registry.keyless()
        may, how = creation_rule(config, client.gm, client.loopback, keyless)
        return TableHomeResult(table_home_url(config, _host_of(client)), may, how)

    async def m_table_link(self, client: Client, params: TableLinkParams) -> TableLinkResult:
        if len(params.encounter) > 100 or len(params.token) > 200:
            raise ProtocolError("invalid_params", "That encounter id or token is too long.")
        base = table_home_url(self.registry.config, _host_of(client))
        url, svg = table_link(base, params.encounter, params.token)
        return TableLinkResult(url, svg)

    def _seat(self, room: Room, player: str) -> SeatInfo:
        """A seat of a loaded encounter: its connections, whether it waits for a character."""
        count = sum(m.role == "player" and m.player == player for m in room.members)
        waiting = not any(c.controller == player for c in room.state.creatures.values())
        return SeatInfo(player, count, waiting)

    async def m_encounter_options(
        self, client: Client, params: EncounterOptionsParams
    ) -> EncounterOptionsResult:
        config, engine = self.registry.config, self.registry.engine
        schema = copy.deepcopy(options_schema())
        schema.setdefault("properties", {})["settings"] = settings_schema(config, engine)
        return EncounterOptionsResult(schema, setting_infos(config, engine))

    async def m_join(self, client: Client, params: JoinParams) -> JoinResult | Encoded:
        if params.client_seed is not None:
            check_contribution(params.client_seed)  # before anything is loaded
        room = self.registry.get(params.encounter)
        if room is None:  # stored, not in memory: its first join loads it
            room = await self.registry.load(params.encounter, params.token, check=True)
        last_seq = params.last_seq
        if last_seq is not None and last_seq > room.state.seq:
            last_seq = None  # from the future: a snapshot is all that helps
        if params.token is None:
            if room.record is None or not room.record.public:
                raise ProtocolError(
                    "bad_token", "That encounter is not public: join it with a token."
                )
            grant: Grant | None = Grant(f"public:{room.id}", "spectator", public=True)
        else:
            grant = room.find_grant(params.token)
        if grant is None:
            raise ProtocolError("bad_token", "That token does not open this encounter.")
        await self._join_seed(room, grant, params)
        self._admission_check(client, room, grant)  # a full room refuses before any read
        await self.registry.touch(room)
        # Everything that awaits comes before the seat is admitted: a command applied
        # meanwhile would otherwise reach this connection live before its reply (whose
        # snapshot holds it already). The reply is built from reads taken while the
        # room's seq did not move, then the seat is admitted and the reply sent with no
        # checkpoint in between, so every live event after it is newer than its seq.
        seat = Member(client.subscriber, grant.role, grant.player)  # its view, not yet here
        work = FoldWork()
        for _ in range(_JOIN_READS):
            seq = room.state.seq
            reply = await self._join_reply(room, seat, last_seq, params.history, work)
            if room.state.seq == seq:
                break
        else:  # the room kept moving under the reads: a snapshot needs none
            seq = room.state.seq
            reply = (None, None, None)
        # The events folded for a filtered view are paid for like the reply's bytes.
        client.reply_budget.spend(work.folded * FOLD_BYTES)
        member = self._admit(client, room, grant)
        client.rooms[room.id] = member
        who = f"{member.role} {member.player}" if member.player else member.role
        log.info("joined as %s", who, extra={"encounter": room.id})
        events, history, parts = reply
        result = JoinResult(
            role=member.role,
            player=member.player,
            seq=seq,
            snapshot=room.snapshot(member) if events is None else None,
            events=events,
            history=history,
        )
        # Right after the reply: the decisions this seat may still answer, the turn timer.
        client.after_reply.extend(room.prompts_for(member))
        client.after_reply.extend(room.turn_timer_for(member))
        if parts is not None:
            return _sliced(result, parts)
        return result

    async def _join_reply(
        self,
        room: Room,
        seat: Member,
        last_seq: int | None,
        want_history: int | None,
        work: FoldWork,
    ) -> tuple[list[Any] | None, list[Any] | None, list[str] | None]:
        """A join's reads: the events after ``last_seq`` as ``seat`` may see them (or
        ``None`` when a snapshot must do), the recent ``history`` for a fresh page, each
        up to the room's seq when the reads began, and a long replay's events already
        serialized in slices (:func:`_slices`; ``None`` for a short one)."""
        upto = room.state.seq
        events = await room.events_since(seat, last_seq, work) if last_seq is not None else None
        history = None
        if events is None and want_history is not None:
            # The recent log for a fresh page, filtered for this seat like a resume.
            since = await room.events_since(seat, max(0, upto - want_history), work)
            if since is None and seat.full_view:  # trimmed: what is still kept
                kept = await room.store.oldest_kept(room.id)
                since = await room.events_since(seat, kept - 1, work)
            history = [e["event"] for e in since if e["seq"] <= upto] if since is not None else None
        if events is None:
            return None, history, None
        shown = [e["event"] for e in events if e["seq"] <= upto]
        return shown, history, await _slices(shown) if len(shown) > REPLAY_SLICE else None

    async def _join_seed(self, room: Room, grant: Grant, params: JoinParams) -> None:
        """``join``'s ``client_seed``: checked, then mixed into a fair encounter's dice
        (before the seat joins, so that its snapshot already holds the contribution). A
        keyed join's seed is mixed once per key of the seat: a repeat (a join sent again
        after its reply was lost) mixes nothing (SPEC.md, "Idempotency")."""
        value = params.client_seed
        if value is None:
            return
        value = check_contribution(value)
        dice = room.state.dice
        if grant.role == "spectator" or dice is None or dice.mode != "fair":
            return
        if room.state.phase == "ended":
            return  # no die will be rolled: nothing to mix into
        by = "gm" if grant.role == "gm" else grant.player or ""
        keyed = None
        if params.idempotency_key is not None:
            asked = {name: getattr(params, name) for name in JOIN_KEYED}
            keyed = Keyed(
                seat_of(grant.role, grant.player),
                params.idempotency_key,
                "join",
                fingerprint("join", asked),
                lambda first, _: {"seq": first},  # (never sent: a repeat joins anew)
            )
        await _submit(
            room,
            Job(
                Actor(grant.role, by),
                Command("contribute_dice", {"value": value}, Actor(grant.role, by)),
                None,
                "contribute_dice",
                keyed=keyed,
            ),
        )

    async def m_contribute_dice(
        self, client: Client, params: ContributeDiceParams
    ) -> ContributeDiceResult | Encoded:
        room, member = self._room(client, params.encounter)
        room.capability_check(member, "contribute_dice")
        value = check_contribution(params.value)
        job = Job(
            member.actor,
            Command("contribute_dice", {"value": value}, member.actor),
            member,
            "contribute_dice",
            keyed=_keyed(
                member,
                "contribute_dice",
                params,
                lambda first, _: _data(ContributeDiceResult(seq=first)),
            ),
        )
        result = await _submit(room, job)
        if isinstance(result, Encoded):
            return result
        assert isinstance(result, CommandResult)
        return ContributeDiceResult(seq=result.first_seq)

    async def m_rotate_dice(
        self, client: Client, params: RotateDiceParams
    ) -> RotateDiceResult | Encoded:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "rotate the dice's seed")

        def answer(first: int, events: Sequence[Event]) -> dict[str, Any]:
            commitment = next(e for e in reversed(events) if isinstance(e, DiceCommitted))
            return _data(RotateDiceResult(first + len(events) - 1, commitment.commitment))

        job = Job(
            member.actor,
            Command("rotate_dice", {}, member.actor),
            member,
            "rotate_dice",
            keyed=_keyed(member, "rotate_dice", params, answer),
        )
        result = await _submit(room, job)
        if isinstance(result, Encoded):
            return result
        assert isinstance(result, CommandResult)
        assert room.state.dice is not None
        return RotateDiceResult(seq=result.last_seq, commitment=room.state.dice.commitment)

    def _table_token(self, client: Client, room: Room, member: Member) -> None:
        """Take one token of the seat's ``chat``/``roll`` bucket, or refuse with
        ``rate_limited`` (the seat's connections share it)."""
        limits = client.limits
        key = (room.id, seat_of(member.role, member.player))
        bucket = self.table_buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(limits.table_rate_per_second, limits.table_rate_burst)
            self.table_buckets[key] = bucket
        if not bucket.take():
            wait_ms = bucket.wait_ms()
            when = f" Retry in {wait_ms / 1000:.1f} seconds." if wait_ms is not None else ""
            raise ProtocolError(
                "rate_limited",
                f"Too many chat messages and rolls from this seat: at most "
                f"{limits.table_rate_burst} at once and {limits.table_rate_per_second:g} a "
                f"second.{when}",
                retry_after_ms=wait_ms,
            )

    async def m_roll(self, client: Client, params: RollParams) -> RollResult | Encoded:
        room, member = self._room(client, params.encounter)
        room.capability_check(member, "roll")
        try:
            parse_dice(params.dice)
        except DiceError as exc:
            raise ProtocolError.from_refusal("invalid_params", f"'dice': {exc}") from None
        label = params.label
        if len(label) > MAX_ROLL_LABEL or _bad_chars(label, allowed=""):
            raise ProtocolError.from_refusal(
                "invalid_params",
                f"'label' must be at most {MAX_ROLL_LABEL} characters, without control characters.",
            )
        keyed = _keyed(member, "roll", params, _roll_answer)
        if keyed is not None and (first := await room.first_answer(keyed)) is not None:
            return Encoded(encode_message(first))  # a repeat: its first answer, no token
        self._table_token(client, room, member)
        values = {
            "dice": params.dice,
            "label": label,
            "advantage": params.advantage,
            "private": params.private,
        }
        job = Job(member.actor, Command("roll", values, member.actor), member, "roll", keyed=keyed)
        result = await _submit(room, job)
        if isinstance(result, Encoded):
            return result
        assert isinstance(result, CommandResult) and job.total is not None
        return RollResult(seq=result.first_seq, total=job.total)

    async def m_chat(self, client: Client, params: ChatParams) -> ChatResult | Encoded:
        room, member = self._room(client, params.encounter)
        room.capability_check(member, "chat")
        limit = client.limits.chat_max_chars
        text = params.text
        if not text.strip() or len(text) > limit or _bad_chars(text, allowed="\n\t"):
            raise ProtocolError.from_refusal(
                "invalid_params",
                f"A chat message is 1 to {limit} characters, not only spaces, and holds no "
                "control characters but line breaks and tabs.",
            )
        to = params.to
        if to is not None:
            if member.role == "player" and to != "gm":
                raise ProtocolError.from_refusal(
                    "invalid_params", 'A player whispers to the GM only: "to": "gm".'
                )
            if member.role == "gm" and not any(
                g.role == "player" and g.player == to for g in room.grants
            ):
                raise ProtocolError.from_refusal(
                    "invalid_params", "'to' must be the id of one of this encounter's seats."
                )
        keyed = _keyed(member, "chat", params, lambda first, _: _data(ChatResult(seq=first)))
        if keyed is not None and (first := await room.first_answer(keyed)) is not None:
            return Encoded(encode_message(first))  # a repeat: its first answer, no token
        self._table_token(client, room, member)
        job = Job(
            member.actor,
            Command("chat", {"text": text, "to": to}, member.actor),
            member,
            "chat",
            keyed=keyed,
        )
        result = await _submit(room, job)
        if isinstance(result, Encoded):
            return result
        assert isinstance(result, CommandResult)
        return ChatResult(seq=result.first_seq)

    async def m_create_seat(
        self, client: Client, params: CreateSeatParams
    ) -> CreateSeatResult | Encoded:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "create seats")
        return await self._once(
            room.id, "gm", "create_seat", params, lambda: self._create_seat(room, member, params)
        )

    async def _create_seat(
        self, room: Room, member: Member, params: CreateSeatParams
    ) -> CreateSeatResult:
        player = params.player
        creatures = params.creatures
        for cid in creatures:
            if cid not in room.state.creatures:
                raise ProtocolError(
                    "invalid_params", f"There is no creature {cid!r} to give to {player!r}."
                )
        for cid in creatures:
            # A creature handed to a player is that player's character (``pc``: it makes
            # death saves); both are events, so a replay keeps them.
            for field, value in (("controller", player), ("pc", True)):
                if getattr(room.state.creatures[cid], field) != value:
                    command = Command(
                        "override",
                        {"creature": cid, "field": field, "value": value},
                        member.actor,
                    )
                    await _submit(room, Job(member.actor, command, member))
        return CreateSeatResult(token=await room.grant("player", player), player=player)

    async def m_create_spectator_link(
        self, client: Client, params: CreateSpectatorLinkParams
    ) -> CreateSpectatorLinkResult | Encoded:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "create spectator links")

        async def act() -> CreateSpectatorLinkResult:
            return CreateSpectatorLinkResult(token=await room.grant("spectator"))

        return await self._once(room.id, "gm", "create_spectator_link", params, act)

    async def _once(
        self,
        encounter: str,
        scope: str,
        method: str,
        params: Any,
        act: Callable[[], Awaitable[_R]],
        *,
        kept: Callable[[_R], bool] | None = None,
        extra: Callable[[], dict[str, Any]] | None = None,
        ignored: tuple[str, ...] = (),
    ) -> _R | Encoded:
        """``act()``'s result, once per ``params.idempotency_key`` in ``scope`` (``"gm"``:
        the encounter's GM seat; ``"owner"``: its owner) of ``encounter``: a repeat gets
        the first answer (:class:`Encoded`) and nothing is done; the key used for another
        request is refused (``idempotency_key_reused``). A refused request spends no key,
        nor does a result ``kept`` says changed nothing. ``extra()``: more members of the
        kept record (read by :meth:`_rotated_again`); ``ignored``: params left out of the
        fingerprint. SPEC.md, "Idempotency"; ``server/_idempotency.py``."""
        key: str | None = params.idempotency_key
        if key is None:
            return await act()
        keys = await trio.to_thread.run_sync(
            seal_keys, request_scope(encounter, scope), key, limiter=self.seal_limiter
        )
        asked = {k: v for k, v in attrs.asdict(params).items() if k not in ignored}
        print_ = fingerprint(method, asked)
        store = self.registry.store
        lock = self.request_locks.setdefault((encounter, scope), trio.Lock())
        try:
            async with lock:  # a repeat sent at once on another connection waits for the first
                sealed = await store.get_request(encounter, scope, keys.id)
                record = unseal(keys, sealed) if sealed is not None else None
                if record is not None:
                    if record.get("method") != method or record.get("fingerprint") != print_:
                        raise ProtocolError(
                            "idempotency_key_reused",
                            f"The idempotency key {key!r} was used before for another request "
                            f"({record.get('method')}); nothing was done. Use a new key for a "
                            "new request.",
                        )
                    return Encoded(encode_message(record.get("answer")))
                if sealed is not None:
                    log.warning("a stored keyed request of %s does not open", encounter)
                result = await act()
                if kept is not None and not kept(result):
                    return result  # nothing changed: nothing to answer again
                answer = {"method": method, "fingerprint": print_, "answer": _data(result)}
                if extra is not None:
                    answer.update(extra())
                try:
                    await store.put_request(encounter, scope, keys.id, seal(keys, answer))
                except StoreError as exc:
                    # Done and answered, but the key is not kept: a repeat would do it again.
                    log.error("the answer of a keyed %s was not kept: %s", method, exc)
                return result
        finally:
            if lock.statistics().tasks_waiting == 0 and not lock.locked():
                self.request_locks.pop((encounter, scope), None)

    # -- taking tokens back -----------------------------------------------------------------

    async def _revoke(self, room: Room, hashes: set[str], keep: Client | None = None) -> int:
        """Revoke the tokens of ``hashes`` (durably) and close every connection joined to
        ``room`` with one of them (code 4002), but ``keep``; how many were closed."""
        await self.registry.revoke(room, hashes)
        return self.close_holders(room, hashes, keep)

    def close_holders(self, room: Room, hashes: set[str], keep: Client | None = None) -> int:
        """Close every connection joined to ``room`` with a token of ``hashes`` (revoked)
        with code 4002, but ``keep``; how many were closed."""
        joined = {id(m.subscriber) for m in room.members}
        closed = 0
        for held in hashes:
            for holder in list(self.holders.pop(held, ())):
                if holder is keep or id(holder.subscriber) not in joined:
                    continue
                holder.subscriber.close(REVOKED, "token revoked")
                room.remove(holder.subscriber)
                holder.rooms.pop(room.id, None)
                holder.tokens.pop(room.id, None)
                closed += 1
        return closed

    async def m_remove_seat(
        self, client: Client, params: RemoveSeatParams
    ) -> RemoveSeatResult | Encoded:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "remove seats")

        async def act() -> RemoveSeatResult:
            hashes = {
                g.token_hash
                for g in room.grants
                if g.role == "player" and g.player == params.player
            }
            if not hashes:
                raise ProtocolError("invalid_params", f"There is no seat for {params.player!r}.")
            return RemoveSeatResult(closed=await self._revoke(room, hashes))

        return await self._once(room.id, "gm", "remove_seat", params, act)

    async def m_revoke_spectator_link(
        self, client: Client, params: RevokeSpectatorLinkParams
    ) -> RevokeSpectatorLinkResult | Encoded:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "revoke spectator links")

        async def act() -> RevokeSpectatorLinkResult:
            grant = room.find_grant(params.token)
            if grant is None or grant.role != "spectator":
                raise ProtocolError(
                    "invalid_params", "That is not a spectator token of this encounter."
                )
            return RevokeSpectatorLinkResult(closed=await self._revoke(room, {grant.token_hash}))

        return await self._once(room.id, "gm", "revoke_spectator_link", params, act)

    async def m_rotate_gm_token(
        self, client: Client, params: RotateGmTokenParams
    ) -> RotateGmTokenResult | Encoded:
        joined = client.rooms.get(params.encounter)
        if params.token is not None and (joined is None or joined.role != "gm"):
            return await self._rotated_again(params, params.token)
        room, member = self._room(client, params.encounter)
        _gm_only(member, "rotate the GM token")
        revoked: set[str] = set()

        def extra() -> dict[str, Any]:
            # What a repeat with the revoked token must show (``_rotated_again``).
            return {"revoked": sorted(revoked), "at": self.registry.clock()}

        return await self._once(
            room.id,
            "gm",
            "rotate_gm_token",
            params,
            lambda: self._rotate_gm_token(client, room, revoked),
            extra=extra,
            ignored=("token",),
        )

    async def _rotated_again(self, params: RotateGmTokenParams, old: str) -> Encoded:
        """A keyed ``rotate_gm_token`` repeated with the GM token it revoked (its reply was
        lost, and the old token opens nothing now): the first answer, when the key's
        record names that token, is younger than :data:`ROTATION_REPEAT_SECONDS` and its
        new token is still the GM's; ``bad_token`` for anything else. Nothing is rotated
        and the connection is not joined."""
        refused = ProtocolError("bad_token", "That token does not open this encounter.")
        key = params.idempotency_key
        if key is None:
            raise refused
        eid = params.encounter
        keys = await trio.to_thread.run_sync(
            seal_keys, request_scope(eid, "gm"), key, limiter=self.seal_limiter
        )
        sealed = await self.registry.store.get_request(eid, "gm", keys.id)
        record = unseal(keys, sealed) if sealed is not None else None
        asked = {k: v for k, v in attrs.asdict(params).items() if k != "token"}
        if (
            record is None
            or record.get("method") != "rotate_gm_token"
            or record.get("fingerprint") != fingerprint("rotate_gm_token", asked)
            or token_hash(old) not in (record.get("revoked") or [])
        ):
            raise refused
        at = record.get("at")
        if not isinstance(at, int | float) or self.registry.clock() - at > ROTATION_REPEAT_SECONDS:
            raise ProtocolError(
                "bad_token",
                "That token was revoked by this rotation too long ago to be answered again "
                "with it. The encounter's owner gets a new GM token with encounter_links.",
            )
        answer = record.get("answer")
        token = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(token, str):
            raise refused
        room = self.registry.get(eid)
        if room is None:
            room = await self.registry.load(eid, token, check=True)  # bad_token if rotated since
        if room.find_grant(token) is None:
            raise ProtocolError(
                "bad_token",
                "The GM token was rotated again since: that token opens nothing any more.",
            )
        log.info("a lost rotation answered again", extra={"encounter": eid})
        return Encoded(encode_message(answer))

    async def _rotate_gm_token(
        self, client: Client, room: Room, revoked: set[str]
    ) -> RotateGmTokenResult:
        old = {g.token_hash for g in room.grants if g.role == "gm"}
        revoked.update(old)
        token = await room.grant("gm")  # stored before the old ones go
        closed = await self._revoke(room, old, keep=client)
        # The GM who asked stays joined, now holding the new token.
        new = room.find_grant(token)
        assert new is not None
        client.tokens[room.id] = new.token_hash
        self.holders[new.token_hash] = {client}
        return RotateGmTokenResult(token=token, closed=closed)

    async def m_command(self, client: Client, params: CommandParams) -> CommandResult | Encoded:
        room, member = self._room(client, params.encounter)
        kind = params.type
        room.capability_check(member, kind)
        job = Job(
            member.actor,
            Command(kind, params.params, member.actor),
            member,
            keyed=_keyed(member, "command", params, _command_answer),
        )
        result = await _submit(room, job)
        assert isinstance(result, CommandResult | Encoded)
        await self.registry.touch(room)
        return result

    async def m_actions(self, client: Client, params: ActionsParams) -> ActionsResult:
        room, member = self._room(client, params.encounter)
        cid = params.creature
        if cid not in room.state.creatures or cid in room.hidden_from(member):
            raise ProtocolError(
                "unknown_creature", f"There is no creature {cid!r} in this encounter."
            )
        found, ending = self._details(room, member, cid)
        details = [_detail_for(d, room, member) for d in found]
        return ActionsResult(
            creature=cid,
            actions=[d.id for d in details if d.available],
            details=details,
            ending=ending,
            features=_features_for(room, member, cid),
        )

    def _details(
        self, room: Room, member: Member, cid: str
    ) -> tuple[list[EngineDetail], EndingInfo | None]:
        """The engine's details for ``cid`` as ``member``'s actor (and the GM's ending
        hint), before any filtering for the viewer. Deciding every candidate value takes
        the engine a few milliseconds in a big fight, so the answer is kept until the
        room's state changes (a state is replaced, never changed in place): a client
        asking again and again costs nothing more. An answer during which a plugin
        went over its time budget is not kept."""
        if member.role == "spectator":  # refused before the engine, whatever the rules say
            specs = room.engine.commands.values()
            return [EngineDetail(s.id, False) for s in specs if s.who == "creature"], None
        key = (room.id, cid, member.actor)
        cached = self.details_cache.get(key)
        if cached is not None and cached[0] is room.state:
            return cached[1], cached[2]
        with room.timing_plugins() as overruns:
            found = room.engine.action_details(room.state, cid, member.actor)
            ending = None
            if member.role == "gm":
                over, blockers = room.engine.ending(room.state)
                dying = [c.id for c in room.state.creatures.values() if DYING in c.conditions]
                ending = EndingInfo(over=over, blockers=blockers, dying=dying)
        self.details_cache.pop(key, None)
        if overruns:  # a plugin overran: asked again, it runs (and is counted) again
            return found, ending
        while len(self.details_cache) >= DETAILS_KEPT:
            del self.details_cache[next(iter(self.details_cache))]  # the oldest
        self.details_cache[key] = (room.state, found, ending)
        return found, ending

    async def m_snapshot(self, client: Client, params: SnapshotParams) -> SnapshotResult:
        room, member = self._room(client, params.encounter)
        return SnapshotResult(seq=room.state.seq, snapshot=room.snapshot(member))

    async def m_leave(self, client: Client, params: LeaveParams) -> LeaveResult:
        room, _member = self._room(client, params.encounter)
        room.remove(client.subscriber)
        client.rooms.pop(room.id, None)
        client.drop_token(room.id)
        return LeaveResult()

    async def m_rewind(self, client: Client, params: RewindParams) -> RewindResult | Encoded:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "rewind the encounter")
        job = Job(
            member.actor,
            Command("rewind", {"to_seq": params.to_seq}, member.actor),
            member,
            "rewind",
            keyed=_keyed(member, "rewind", params, lambda first, _: _data(RewindResult(first))),
        )
        result = await _submit(room, job)
        assert isinstance(result, RewindResult | Encoded)
        return result

    async def m_ping(self, client: Client, params: PingParams) -> PingResult:
        return PingResult()

    # -- the lobby ----------------------------------------------------------------------------

    async def _owner(self, client: Client) -> tuple[str | None, bool]:
        """The connection's GM (by its key), and whether it is the operator's (loopback
        on a server with no key at all)."""
        if client.gm is not None:
            return client.gm, False
        return None, client.loopback and await self.registry.is_operator(client.address)

    async def _own_record(self, client: Client, eid: str) -> EncounterRecord:
        """The record of ``eid`` if this connection's GM created it (or it is the
        operator's); ``gm_key_required``, ``unknown_encounter``, ``not_your_encounter``."""
        gm, operator = await self._owner(client)
        if gm is None and not operator:
            raise ProtocolError(
                "gm_key_required", "Say hello with your GM key to manage encounters."
            )
        record = await self.registry.record_of(eid)
        if record is None:
            raise ProtocolError(
                "unknown_encounter", f"There is no encounter {eid!r} on this server."
            )
        if not operator and record.creator != f"gm:{gm}":
            raise ProtocolError(
                "not_your_encounter", f"Encounter {eid!r} was not created with your GM key."
            )
        return record

    async def m_list_encounters(
        self, client: Client, params: ListEncountersParams
    ) -> ListEncountersResult:
        gm, operator = await self._owner(client)
        mine = f"gm:{gm}" if gm is not None else None
        found = []
        for stored in await self.registry.store.records():
            room = self.registry.get(stored.id)
            record = room.record if room is not None and room.record is not None else stored
            own = operator or (mine is not None and record.creator == mine)
            public = record.public and record.status == "open"
            if public if params.public_only else (own or public):
                found.append((record, own))
        found.sort(key=lambda pair: pair[0].last_activity, reverse=True)
        page = found[params.offset : params.offset + params.limit]
        return ListEncountersResult(
            encounters=[self._info(record, own) for record, own in page], total=len(found)
        )

    def _info(self, record: EncounterRecord, mine: bool) -> EncounterInfo:
        room = self.registry.get(record.id)
        seats = []
        for player in record.players:
            seats.append(SeatInfo(player, None, None) if room is None else self._seat(room, player))
        when = datetime.fromtimestamp(record.last_activity, UTC)
        return EncounterInfo(
            id=record.id,
            title=record.title,
            arena=record.arena,
            status="open" if record.status == "open" else "archived",
            phase=record.phase,
            round=record.round,
            seats=seats,
            public=record.public,
            last_activity=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            mine=mine,
        )

    async def m_encounter_links(
        self, client: Client, params: EncounterLinksParams
    ) -> EncounterLinksResult | Encoded:
        record = await self._own_record(client, params.encounter)
        return await self._once(
            record.id,
            "owner",
            "encounter_links",
            params,
            lambda: self._encounter_links(client, record, params),
        )

    async def _encounter_links(
        self, client: Client, record: EncounterRecord, params: EncounterLinksParams
    ) -> EncounterLinksResult:
        if record.status != "open" and self.registry.get(record.id) is None:
            raise ProtocolError(
                "encounter_archived",
                f"Encounter {record.id!r} is archived. The server's operator can bring it "
                f"back with 'zonekeep encounters restore {record.id}'.",
            )
        room = await self.registry.load(record.id)
        links = await self.registry.fresh_links(room, keep=client, rotate_gm=not params.keep_gm)
        if not params.keep_gm and room.id in client.rooms and client.rooms[room.id].role == "gm":
            # A GM joined to it on this connection stays, now holding the new token.
            new = room.find_grant(links.gm_token)
            assert new is not None
            client.drop_token(room.id)
            client.tokens[room.id] = new.token_hash
            self.holders[new.token_hash] = {client}
        return EncounterLinksResult(
            encounter=room.id,
            gm_token=links.gm_token,
            seats=links.seats,
            spectator_token=links.spectator_token,
            closed=links.closed,
        )

    async def m_set_public(
        self, client: Client, params: SetPublicParams
    ) -> SetPublicResult | Encoded:
        record = await self._own_record(client, params.encounter)

        async def act() -> SetPublicResult:
            if record.public != params.public:
                await self.registry.put_record(attrs.evolve(record, public=params.public))
            return SetPublicResult(encounter=record.id, public=params.public)

        return await self._once(record.id, "owner", "set_public", params, act)

    async def m_archive_encounter(
        self, client: Client, params: ArchiveEncounterParams
    ) -> ArchiveEncounterResult | Encoded:
        record = await self._own_record(client, params.encounter)

        async def act() -> ArchiveEncounterResult:
            closed = await self.registry.archive(
                record.id, "archived", "The GM archived the encounter."
            )
            return ArchiveEncounterResult(encounter=record.id, closed=closed)

        return await self._once(record.id, "owner", "archive_encounter", params, act)

    # -- the registry's calls ---------------------------------------------------------------

    def detach(self, room: Room) -> None:
        """``room`` is being unloaded: no client is joined to it any more."""
        for key in [k for k in self.table_buckets if k[0] == room.id]:
            del self.table_buckets[key]
        for client in list(self.clients):
            if client.rooms.pop(room.id, None) is not None:
                client.drop_token(room.id)

    def keys_revoked(self, names: set[str]) -> None:
        """The operator revoked the GM keys ``names``: close the connections that said
        hello with one (4003), and the GM connections of the loaded encounters one
        created (GM tokens keep working until rotated)."""
        creators = {f"gm:{name}" for name in names}
        for client in list(self.clients):
            if client.gm in names:
                client.gm = None
                client.subscriber.close(KEY_REVOKED, "gm key revoked")
        for room in list(self.registry.rooms.values()):
            if room.record is None or room.record.creator not in creators:
                continue
            for member in list(room.members):
                if member.role == "gm":
                    member.subscriber.close(KEY_REVOKED, "gm key revoked")
                    room.remove(member.subscriber)


_OPTIONS_SCHEMA: dict[str, Any] = {}


def options_schema() -> dict[str, Any]:
    """The encounter options' JSON Schema, from the generated schemas (package data)."""
    if not _OPTIONS_SCHEMA:
        text = (
            resources.files("zonekeep.protocol")
            .joinpath("schemas/strict/event_payload.schema.json")
            .read_text(encoding="utf-8")
        )
        _OPTIONS_SCHEMA.update(json.loads(text)["$defs"]["EncounterOptions"])
    return _OPTIONS_SCHEMA


def _text_problem(message: str, kind: str) -> ProblemInfo:
    """A file text that does not parse: the problem at its line when the parser says."""
    found = re.search(r"line (\d+)", message)
    return ProblemInfo(f"line {found.group(1)}" if found else "", f"invalid {kind}: {message}")


def character_id(name: str, state: EncounterState) -> str:
    """A new creature id for a character named ``name``: its name's letters and digits
    (at most 40) and a random suffix, ``aria-3f9c1e``. It never depends on which ids the
    encounter holds (a suffix counting them would say that a hidden ``aria`` exists); a
    suffix already taken, one chance in millions, is drawn again."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40].strip("-") or "pc"
    taken = set(state.creatures) | {c.group for c in state.creatures.values() if c.group}
    while True:
        cid = f"{base}-{secrets.token_hex(3)}"
        if cid not in taken:
            return cid


def _imported(
    character: dict[str, Any], format: str
) -> tuple[dict[str, Any] | None, tuple[str, ...], list[ProblemInfo]]:
    """A character sent in ``format``: the character file it makes (``import_character``),
    what of it did not map, and every problem of the result."""
    try:
        made = import_character(character, format)
    except ValueError as exc:
        return None, (), [ProblemInfo("character", str(exc))]
    return made.character, made.unmapped, _character_problems(made.character)


def _character_problems(data: object) -> list[ProblemInfo]:
    """``character_problems`` split into places and sentences."""
    found = []
    for problem in character_problems(data):
        where, sep, message = problem.partition(": ")
        found.append(ProblemInfo(where, message) if sep else ProblemInfo("", problem))
    return found


def _detail_for(found: EngineDetail, room: Room, member: Member) -> ActionDetail:
    """``found`` as ``member`` may read it: no hidden creature among the targets, the
    refusal's sentence scrubbed like a sent command's, and a spectator refused the way
    a spectator's command is (before the engine)."""
    if member.role == "spectator":
        return ActionDetail(
            id=found.id,
            available=False,
            code="spectator_read_only",
            message="Spectators can watch but not send commands.",
            attacks=None,
            targets=None,
            zones=None,
            props=None,
            sequences=None,
            attacks_left=None,
        )
    hidden = room.hidden_from(member)

    def seen(ids: tuple[str, ...] | None) -> list[str] | None:
        return None if ids is None else [i for i in ids if i not in hidden]

    return ActionDetail(
        id=found.id,
        available=found.available,
        code=found.code,
        message=None if found.message is None else room.scrub(found.message, member),
        attacks=None
        if found.attacks is None
        else [
            AttackOption(a.name, a.label, a.bonus, a.damage, seen(a.targets) or [])
            for a in found.attacks
        ],
        targets=seen(found.targets),
        zones=None
        if found.zones is None
        else [ZoneOption(z.zone, z.cost_feet, list(z.path)) for z in found.zones],
        props=None if found.props is None else list(found.props),
        sequences=None
        if found.sequences is None
        else [[SequenceItemInfo(i.attack, i.disadvantage) for i in q] for q in found.sequences],
        attacks_left=None
        if found.attacks_left is None
        else [SequenceItemInfo(i.attack, i.disadvantage) for i in found.attacks_left],
        choices=None
        if found.choices is None
        else [
            ChoiceOption(
                c.label,
                dict(c.params),
                {
                    name: [v for v in values if not (name.startswith("target") and v in hidden)]
                    for name, values in c.options.items()
                },
                _info_seen(c.info, hidden),
            )
            for c in found.choices
        ],
    )


def _info_seen(info: Mapping[str, Any], hidden: Collection[str]) -> dict[str, Any]:
    """A choice's ``info`` with the creatures this seat may not see left out of the
    ``targets...`` keys (lists, or zone -> list maps)."""
    found: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("targets") and isinstance(value, Mapping):
            value = {k: [v for v in vs if v not in hidden] for k, vs in value.items()}
        elif key.startswith("targets") and isinstance(value, (list, tuple)):
            value = [v for v in value if v not in hidden]
        found[key] = value
    return found


def _features_for(room: Room, member: Member, cid: str) -> list[FeatureInfo]:
    """``cid``'s traits and actions with what is automated and the uses left, for the GM
    and the creature's controller (nobody else: a stat block is the GM's to show)."""
    creature = room.state.creatures[cid]
    if member.role == "spectator" or not member.actor.controls(creature):
        return []
    catalog = room.engine.catalog
    off = room.state.disabled_plugins
    found = []
    for kind, features in (("trait", creature.traits), ("action", creature.actions)):
        for f in features:
            automated, reason = catalog.feature_status(kind, f.id, f.gm, off)
            found.append(
                FeatureInfo(
                    id=f.id,
                    name=f.name,
                    kind=getattr(f, "kind", "trait"),
                    text=f.text,
                    automated=automated,
                    gm=reason,
                    uses=None
                    if f.uses is None
                    else {k: v for k, v in attrs.asdict(f.uses).items() if v is not None},
                    left=None if f.uses is None else creature.resources.get(resource_key(f)),
                )
            )
    return found


async def _slices(events: list[Any]) -> list[str]:
    """The JSON texts of ``events`` :data:`REPLAY_SLICE` at a time (without the list's
    brackets), with a checkpoint between slices: other rooms and connections run there."""
    parts = []
    for start in range(0, len(events), REPLAY_SLICE):
        if start:
            await trio.lowlevel.checkpoint()
        parts.append(encode_message(events[start : start + REPLAY_SLICE])[1:-1])
    return parts


def _sliced(result: JoinResult, parts: list[str]) -> Encoded:
    """``result`` serialized with its ``events`` list made of ``parts`` (from
    :func:`_slices`): the same text as serializing it at once. Synchronous, since the
    reply must leave before any live event of the room it joins (see ``m_join``)."""
    head, marker, tail = encode_message(attrs.evolve(result, events=[])).rpartition('"events":[]')
    assert marker, "a join result always has its events field"
    return Encoded(f'{head}"events":[{",".join(parts)}]{tail}')


async def _submit(room: Room, job: Job) -> CommandResult | RewindResult | Encoded:
    """``job``'s result, or the first answer (:class:`Encoded`) when it repeats a keyed
    request; its error raised."""
    done = await room.submit(job)
    if done.error is not None:
        raise done.error
    if done.replayed is not None:
        return Encoded(encode_message(done.replayed))
    assert done.result is not None
    return done.result


def _data(result: object) -> dict[str, Any]:
    """A result object as the plain JSON data of its reply."""
    data: dict[str, Any] = json.loads(encode_message(result))
    return data


def _command_answer(first: int, events: Sequence[Event]) -> dict[str, Any]:
    return _data(CommandResult(first_seq=first, last_seq=first + len(events) - 1))


def _keyed(member: Member, method: str, params: Any, answer: Answer) -> Keyed | None:
    """The idempotency key of a request (``params.idempotency_key``) from ``member``'s
    seat, or None when it has none."""
    key: str | None = params.idempotency_key
    if key is None:
        return None
    return Keyed(
        seat_of(member.role, member.player),
        key,
        method,
        fingerprint(method, attrs.asdict(params)),
        answer,
    )


def _roll_answer(first: int, events: Sequence[Event]) -> dict[str, Any]:
    """A ``roll``'s answer, kept with its idempotency key."""
    rolled = next(e for e in events if isinstance(e, DiceRolled))
    return _data(RollResult(first, rolled.roll.total))


#: The longest label of a free roll (``roll``), in characters.
MAX_ROLL_LABEL = 80


def _bad_chars(text: str, allowed: str) -> bool:
    """Whether ``text`` holds a control character (but those in ``allowed``) or a lone
    surrogate (JSON's ``\\ud800``, which is no character and has no UTF-8)."""
    return any((unicodedata.category(c) in ("Cc", "Cs") and c not in allowed) for c in text)


def _gm_only(member: Member, what: str) -> None:
    if member.role == "spectator":
        raise ProtocolError("spectator_read_only", "Spectators can watch but not change anything.")
    if member.role != "gm":
        raise ProtocolError("gm_only", f"Only the GM can {what}.")


def _host_of(client: Client) -> str | None:
    """The ``Host`` of the client's websocket handshake (the address its page was opened
    on), when its connection has one."""
    host = getattr(client.subscriber, "host", None)
    return host if isinstance(host, str) else None


class Client:
    """One client's requests: its rate limit, whether it said ``hello``, its rooms.

    Everything it answers goes to ``subscriber`` (which also receives what the rooms
    it joined send). Handles one request at a time (:meth:`handle`).
    """

    def __init__(
        self, methods: Methods, subscriber: Subscriber, limits: Limits, address: str = "?"
    ) -> None:
        self.methods = methods
        methods.clients.add(self)
        #: The client's IP address (who creates encounters without a key).
        self.address = address
        #: Whether the client has the loopback's privileges (the operator's, on a server
        #: with no key): a loopback address, and (set by the server) a handshake whose
        #: ``Host`` is a loopback name or ``public_url``'s, not a rebound DNS name.
        self.loopback = is_loopback(address)
        #: The GM whose key this connection said hello with, if any.
        self.gm: str | None = None
        self.subscriber = subscriber
        self.limits = limits
        self.greeted = False
        #: The rooms joined, by encounter id, and the seat in each; the token's hash.
        self.rooms: dict[str, Member] = {}
        self.tokens: dict[str, str] = {}
        self.bucket = TokenBucket(limits.rate_per_second, limits.rate_burst)
        #: Bytes of snapshots and replays this connection may still be sent; a reply
        #: may overdraw it, and later ones wait until it is positive again.
        self.reply_budget = ByteBudget(limits.reply_bytes_per_second, limits.reply_bytes_burst)
        self.refusals: list[float] = []
        #: Notifications to send once the current request's reply is queued.
        self.after_reply: list[Any] = []

    def leave_all(self) -> None:
        """Stop being a member of the rooms this client joined (only those: the server
        may hold a thousand rooms, and thousands of connections close at once when it
        shuts down)."""
        self.methods.clients.discard(self)
        for eid in self.rooms:
            room = self.methods.registry.get(eid)
            if room is not None:
                room.remove(self.subscriber)
        for eid in list(self.tokens):
            self.drop_token(eid)

    def drop_token(self, eid: str) -> None:
        """Forget the token this client joined ``eid`` with (it left)."""
        held = self.tokens.pop(eid, None)
        if held is None:
            return
        holders = self.methods.holders.get(held)
        if holders is not None:
            holders.discard(self)
            if not holders:
                del self.methods.holders[held]

    def _error(self, rid: RequestId | None, err: ProtocolError, request: Any = None) -> None:
        method, params = getattr(request, "method", None), getattr(request, "params", None)
        _metrics.current().refusal(method, params, err.name, err.code)
        self.subscriber.push_text(error_text(rid, err))

    async def handle(self, raw: str | bytes) -> None:
        """Answer one frame (its text, or bytes for a binary frame)."""
        limits = self.limits
        if not self.bucket.take():
            now = trio.current_time()
            self.refusals = [t for t in self.refusals if now - t < limits.abuse_window_seconds]
            self.refusals.append(now)
            if len(self.refusals) > limits.abuse_refusals:
                log.warning("closed the connection (1008): rate limit abuse")
                self.subscriber.close(1008, "rate limit abuse")
                return
            too_large = (
                not isinstance(raw, bytes) and len(raw.encode("utf-8")) > limits.max_message_bytes
            )
            self._error(
                None if too_large else request_id_of(raw),
                ProtocolError(
                    "rate_limited",
                    f"Too many messages: at most {limits.rate_per_second:g} a second "
                    f"(bursts of {limits.rate_burst}). This one was ignored.",
                    retry_after_ms=self.bucket.wait_ms(),
                ),
            )
            return
        if isinstance(raw, bytes):
            self._error(
                None,
                ProtocolError("parse_error", "Binary frames are not accepted; send JSON text."),
            )
            return
        if len(raw.encode("utf-8")) > limits.max_message_bytes:
            self._error(
                None,
                ProtocolError(
                    "message_too_large",
                    f"Messages are at most {limits.max_message_bytes} bytes; this one was ignored.",
                ),
            )
            return
        rid: Any = None
        request = None
        try:
            request = parse_request(raw)
            rid = request.id
            budgeted = request.method in BUDGETED
            if budgeted:
                self.reply_budget.check()
            result = await self.methods.call(self, request.method, request.params)
        except ProtocolError as err:
            self.after_reply.clear()
            self._error(err.request_id if rid is None else rid, err, request)
            return
        except Exception:
            log.exception("request failed")
            self._error(
                rid,
                ProtocolError(
                    "internal_error", "The server failed on this request; nothing changed."
                ),
                request,
            )
            return
        if isinstance(result, Encoded):
            text = encoded_response_text(rid, result.json)
        else:
            text = response_text(rid, result)
        if budgeted:
            self.reply_budget.spend(len(text))
        _metrics.current().answered(request.method, request.params)
        self.subscriber.push_text(text)
        for params in self.after_reply:
            push(self.subscriber, params)
        self.after_reply.clear()
