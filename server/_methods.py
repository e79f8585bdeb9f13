"""The method table: what each request does, for one client, without any transport.

A :class:`Client` is one client's side of the protocol: whether it said ``hello``, the
rooms it joined, its rate limit. :meth:`Client.handle` takes one frame's content as
it came off the wire and answers through the client's :class:`~._fanout.Subscriber`
(the connection, or a test's recorder): the reply, then the notifications that
follow it. :class:`Methods` maps each request method to room calls, shared by every
client of a server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import attrs
import trio

from zonekeep.protocol import (
    METHODS,
    PROTOCOL_VERSION,
    ActionsParams,
    ActionsResult,
    CommandParams,
    CommandResult,
    CreateEncounterParams,
    CreateEncounterResult,
    CreateSeatParams,
    CreateSeatResult,
    CreateSpectatorLinkParams,
    CreateSpectatorLinkResult,
    HelloParams,
    JoinParams,
    JoinResult,
    LeaveParams,
    LeaveResult,
    PingParams,
    PingResult,
    ProtocolError,
    RequestId,
    RewindParams,
    RewindResult,
    SnapshotParams,
    SnapshotResult,
    parse_params,
    parse_request,
    wire,
)
from zonekeep.sdk import Command

from ._config import Limits
from ._fanout import Member, Subscriber, push
from ._registry import Registry
from ._room import Job, Room
from ._wire import encoded_response_text, error_text, response_text

log = logging.getLogger("zonekeep.session")


@attrs.frozen
class Encoded:
    """A request's result already serialized as JSON (``json``), sent as it is: the
    welcome, the same for every ``hello``."""

    json: str


class TokenBucket:
    """``rate`` tokens a second, up to ``burst``; time comes from trio's clock."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.stamp = trio.current_time()

    def take(self) -> bool:
        now = trio.current_time()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


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

    def __init__(self, registry: Registry, welcome: Callable[[], str]) -> None:
        self.registry = registry
        self.welcome = welcome

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
        client.greeted = True
        return Encoded(self.welcome())

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

    async def m_create_encounter(
        self, client: Client, params: CreateEncounterParams
    ) -> CreateEncounterResult:
        room, token = await self.registry.create_room_from_request(params)
        grant = room.find_grant(token)
        assert grant is not None
        member = room.add_member(client.subscriber, grant)
        client.rooms[room.id] = member
        return CreateEncounterResult(
            encounter=room.id,
            gm_token=token,
            role="gm",
            seq=room.state.seq,
            snapshot=room.snapshot(member),
        )

    async def m_join(self, client: Client, params: JoinParams) -> JoinResult:
        room, _ = self._room(client, params.encounter, joined=False)
        last_seq = params.last_seq
        if last_seq is not None and last_seq > room.state.seq:
            last_seq = None  # from the future: a snapshot is all that helps
        grant = room.find_grant(params.token)
        if grant is None:
            raise ProtocolError("bad_token", "That token does not open this encounter.")
        member = room.add_member(client.subscriber, grant)
        client.rooms[room.id] = member
        events = await room.events_since(member, last_seq) if last_seq is not None else None
        result = JoinResult(
            role=member.role,
            player=member.player,
            seq=room.state.seq,
            snapshot=room.snapshot(member) if events is None else None,
            events=[e["event"] for e in events] if events is not None else None,
        )
        # Right after the reply: the decisions this seat may still answer, the turn timer.
        client.after_reply.extend(room.prompts_for(member))
        client.after_reply.extend(room.turn_timer_for(member))
        return result

    async def m_create_seat(self, client: Client, params: CreateSeatParams) -> CreateSeatResult:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "create seats")
        player = params.player
        creatures = params.creatures
        for cid in creatures:
            if cid not in room.state.creatures:
                raise ProtocolError(
                    "invalid_params", f"There is no creature {cid!r} to give to {player!r}."
                )
        for cid in creatures:
            if room.state.creatures[cid].controller != player:
                job = Job(
                    member.actor,
                    Command(
                        "override",
                        {"creature": cid, "field": "controller", "value": player},
                        member.actor,
                    ),
                    member,
                )
                await _submit(room, job)
        return CreateSeatResult(token=await room.grant("player", player), player=player)

    async def m_create_spectator_link(
        self, client: Client, params: CreateSpectatorLinkParams
    ) -> CreateSpectatorLinkResult:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "create spectator links")
        return CreateSpectatorLinkResult(token=await room.grant("spectator"))

    async def m_command(self, client: Client, params: CommandParams) -> CommandResult:
        room, member = self._room(client, params.encounter)
        kind = params.type
        room.capability_check(member, kind)
        job = Job(member.actor, Command(kind, params.params, member.actor), member)
        result = await _submit(room, job)
        assert isinstance(result, CommandResult)
        return result

    async def m_actions(self, client: Client, params: ActionsParams) -> ActionsResult:
        room, member = self._room(client, params.encounter)
        cid = params.creature
        if cid not in room.state.creatures or cid in room.hidden_from(member):
            raise ProtocolError(
                "unknown_creature", f"There is no creature {cid!r} in this encounter."
            )
        return ActionsResult(
            creature=cid,
            actions=room.engine.available_actions(room.state, cid, member.actor),
        )

    async def m_snapshot(self, client: Client, params: SnapshotParams) -> SnapshotResult:
        room, member = self._room(client, params.encounter)
        return SnapshotResult(seq=room.state.seq, snapshot=room.snapshot(member))

    async def m_leave(self, client: Client, params: LeaveParams) -> LeaveResult:
        room, _member = self._room(client, params.encounter)
        room.remove(client.subscriber)
        client.rooms.pop(room.id, None)
        return LeaveResult()

    async def m_rewind(self, client: Client, params: RewindParams) -> RewindResult:
        room, member = self._room(client, params.encounter)
        _gm_only(member, "rewind the encounter")
        job = Job(
            member.actor,
            Command("rewind", {"to_seq": params.to_seq}, member.actor),
            member,
            "rewind",
        )
        result = await _submit(room, job)
        assert isinstance(result, RewindResult)
        return result

    async def m_ping(self, client: Client, params: PingParams) -> PingResult:
        return PingResult()


async def _submit(room: Room, job: Job) -> CommandResult | RewindResult:
    done = await room.submit(job)
    if done.error is not None:
        raise done.error
    assert done.result is not None
    return done.result


def _gm_only(member: Member, what: str) -> None:
    if member.role == "spectator":
        raise ProtocolError("spectator_read_only", "Spectators can watch but not change anything.")
    if member.role != "gm":
        raise ProtocolError("gm_only", f"Only the GM can {what}.")


class Client:
    """One client's requests: its rate limit, whether it said ``hello``, its rooms.

    Everything it answers goes to ``subscriber`` (which also receives what the rooms
    it joined send). Handles one request at a time (:meth:`handle`).
    """

    def __init__(self, methods: Methods, subscriber: Subscriber, limits: Limits) -> None:
        self.methods = methods
        self.subscriber = subscriber
        self.limits = limits
        self.greeted = False
        #: The rooms joined, by encounter id, and the seat in each.
        self.rooms: dict[str, Member] = {}
        self.bucket = TokenBucket(limits.rate_per_second, limits.rate_burst)
        self.refusals: list[float] = []
        #: Notifications to send once the current request's reply is queued.
        self.after_reply: list[Any] = []

    def leave_all(self) -> None:
        """Stop being a member of the rooms this client joined (only those: the server
        may hold a thousand rooms, and thousands of connections close at once when it
        shuts down)."""
        for eid in self.rooms:
            room = self.methods.registry.get(eid)
            if room is not None:
                room.remove(self.subscriber)

    def _error(self, rid: RequestId | None, err: ProtocolError) -> None:
        self.subscriber.push_text(error_text(rid, err))

    async def handle(self, raw: str | bytes) -> None:
        """Answer one frame (its text, or bytes for a binary frame)."""
        limits = self.limits
        if not self.bucket.take():
            now = trio.current_time()
            self.refusals = [t for t in self.refusals if now - t < limits.abuse_window_seconds]
            self.refusals.append(now)
            if len(self.refusals) > limits.abuse_refusals:
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
        try:
            request = parse_request(raw)
            rid = request.id
            result = await self.methods.call(self, request.method, request.params)
        except ProtocolError as err:
            self.after_reply.clear()
            self._error(err.request_id if rid is None else rid, err)
            return
        except Exception:
            log.exception("request failed")
            self._error(
                rid,
                ProtocolError(
                    "internal_error", "The server failed on this request; nothing changed."
                ),
            )
            return
        if isinstance(result, Encoded):
            self.subscriber.push_text(encoded_response_text(rid, result.json))
        else:
            self.subscriber.push_text(response_text(rid, result))
        for params in self.after_reply:
            push(self.subscriber, params)
        self.after_reply.clear()
