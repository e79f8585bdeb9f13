"""One encounter on the server: its state, its seats and its round loop.

The room's loop is one structured task: it takes commands one at a time from its
inbox (a trio memory channel), so nothing needs a lock. It also owns the decision
deadlines: when one passes, it applies the decision's default (docs/rules.md, "Rulings": the
reaction is not taken). Its members are subscribers (``_fanout``); it knows nothing of
connections or requests.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import logging
import math
import secrets
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence, Set
from typing import Any

import attrs
import trio

from zonekeep.protocol import (
    CommandResult,
    DecisionInfo,
    EncounterErrorNotification,
    PromptNotification,
    ProtocolError,
    RewindResult,
    SnapshotNotification,
    TurnTimerNotification,
)
from zonekeep.sdk import (
    SYSTEM_ACTOR,
    Actor,
    ChatSent,
    Command,
    Decision,
    DiceRolled,
    EncounterState,
    Entropy,
    Event,
    OverrideApplied,
    RandomEntropy,
    Refusal,
    Rewound,
    replay,
    roll,
)
from zonekeep.sdk.engine import Engine, Overrun, PluginFailure, describe, working_copy
from zonekeep.sdk.host import (
    apply_event,
    clamp_options,
    event_to_dict,
    replay_steps,
    state_to_dict,
    undone_counters,
)

from . import _log, _metrics
from ._dice import RoomDice
from ._fanout import Member, Role, Subscriber, fan_out, push
from ._idempotency import Keyed, KeyIndex, view_of_seat
from ._store import EncodedEvents, EncounterRecord, EventStore, StoredGrant, StoreError
from ._visibility import (
    GM_VIEW,
    SPECTATOR_VIEW,
    Viewer,
    event_for,
    hidden_ids,
    hidden_names,
    scrub,
    scrub_names,
    snapshot_for,
)
from ._wire import encode_message, event_notification_text, fields_of, notification_text

log = logging.getLogger("zonekeep.room")

__all__ = ["Grant", "Job", "Member", "Role", "Room", "encode_message", "new_token", "token_hash"]


@attrs.frozen
class Grant:
    """What a token lets a connection do: a role, and a player id for players.

    Only the token's SHA-256 is kept (in memory and in the store); the token itself
    is shown once, to whoever asked for it.
    """

    token_hash: str
    role: Role
    player: str | None = None
    #: A public encounter's spectator seat, taken without a token (never stored).
    public: bool = False


def encoded(
    events: Sequence[Event], payloads: Sequence[dict[str, Any]] | None = None
) -> EncodedEvents:
    """``events`` with their payloads and JSON texts (:class:`~._store.EncodedEvents`),
    made once per command: as they are when already encoded."""
    if isinstance(events, EncodedEvents):
        return events
    if payloads is None:
        payloads = [event_to_dict(e) for e in events]
    return EncodedEvents(events, payloads, [encode_message(p) for p in payloads])


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@attrs.define
class Job:
    """A command waiting in the inbox, and where its answer goes."""

    actor: Actor
    command: Command
    member: Member | None
    #: ``"command"`` for the engine, ``"rewind"`` for a GM rewind (``params.to_seq``).
    kind: str = "command"
    done: trio.Event = attrs.field(factory=trio.Event)
    result: CommandResult | RewindResult | None = None
    error: ProtocolError | None = None
    #: When the job was made (trio's clock) and for which client (for metrics and logs).
    received: float = attrs.field(factory=trio.current_time)
    client: str | None = attrs.field(factory=_log.current_client)
    #: The request's idempotency key (``server/_idempotency.py``), if it has one.
    keyed: Keyed | None = None
    #: The first answer to the key, when this job repeats a keyed request (nothing done).
    replayed: dict[str, Any] | None = None
    #: A free roll's total (``roll``), once it is done.
    total: int | None = None


#: Events folded between two checkpoints when a filtered replay is built.
_FOLD_SLICE = 256

#: A room keeps the state after one event in each block of this many seqs (the first of
#: the block it saw: after a command, or on a refold), so that a player's or spectator's
#: resume folds the log from the newest kept state at or before what it saw last, not
#: from the start: at most this many events more than it missed.
FOLD_ANCHOR_EVERY = 128
#: How many of those states a room keeps, the newest (the memory of a few states); a
#: resume from before the oldest folds the log from its start (and keeps states again).
FOLD_ANCHORS_KEPT = 4


@attrs.define
class FoldWork:
    """What the resumes of one request cost the room: the events folded (each applied to
    a state) to filter the log for a player or spectator."""

    folded: int = 0


#: A marker command (compared by identity): its turn means every earlier job is done.
_DRAIN = Command("drain")


def view_of(member: Member | None) -> Viewer:
    """What ``member`` may see: everything (the GM, or the room itself when ``None``),
    or what a player (its own hidden creatures included) or a spectator may. The same
    (frozen) viewer each time for the GM and the spectators: a broadcast asks for every
    member's."""
    if member is None or member.role == "gm":
        return GM_VIEW
    if member.role == "player":
        return _player_view(member.player)
    return SPECTATOR_VIEW


@functools.lru_cache(maxsize=1024)
def _player_view(player: str | None) -> Viewer:
    return Viewer(player=player)


def _swap(value: Any, key: str, hidden: Set[str], secret: Set[str], swaps: dict[str, str]) -> Any:
    """``value`` (a command parameter named ``key``) with each hidden creature id, and
    each secret decision id, replaced by an unknown id (the same one each time, kept in
    ``swaps``). A module function, not a closure: a recursive closure is a reference
    cycle, which only the cycle collector frees (one per command, see ``_gc``)."""
    if isinstance(value, list):
        return [_swap(v, key, hidden, secret, swaps) for v in value]
    if isinstance(value, str) and (value in hidden or (key == "decision" and value in secret)):
        swaps.setdefault(value, f"{value}#{secrets.token_hex(4)}")
        return swaps[value]
    return value


def new_token() -> str:
    """A fresh random secret of 192 bits."""
    return secrets.token_urlsafe(24)


class Room:
    """An encounter being played: state, event log, seats, members and deadlines."""

    def __init__(
        self,
        encounter_id: str,
        engine: Engine,
        store: EventStore,
        state: EncounterState,
        *,
        entropy: Entropy | None = None,
        reaction_seconds: float | None = None,
        max_members: int = 32,
        dice: RoomDice | None = None,
    ) -> None:
        self.id = encounter_id
        self.engine = engine
        self.store = store
        self.state = state
        #: Verifiable dice (SPEC.md, "Dice"); ``None`` when a test's entropy rolls.
        self.dice = dice
        self.entropy: Entropy = dice.entropy if dice is not None else entropy or RandomEntropy()
        self.reaction_seconds = reaction_seconds
        self.max_members = max_members
        self.grants: list[Grant] = []
        self.members: list[Member] = []
        self.deadlines: dict[str, float] = {}
        #: Plugin calls over the time budget not yet reported (see note_overruns).
        self._overruns: list[Overrun] = []
        #: The turn timer: (creature, round, when), if the encounter has one.
        self.turn_deadline: tuple[str, int, float] | None = None
        self.crashed: str | None = None
        #: Events between snapshots in the store.
        self.snapshot_every = 200
        #: The seq of the last snapshot this room stored (-1: none yet, or not known).
        self.snapshot_seq = -1
        #: The idempotency keys of its seats, and the keyed job being handled.
        self.keys = KeyIndex()
        self._keyed: Keyed | None = None
        #: The inbox: jobs, or ``None`` to wake the loop when a deadline changed.
        self._inbox_send, self._inbox = trio.open_memory_channel[Job | None](64)
        #: Jobs sent to the loop and not finished yet; whether a job (or the clock's
        #: turn) is being run, by the loop or by its sender's task (see :meth:`submit`);
        #: where the loop waits for a job run by its sender's task to finish.
        self._queued = 0
        self._running = False
        self._lot = trio.lowlevel.ParkingLot()
        #: The shielded scope of a job running in its sender's task: cancelled when the
        #: loop is (the room unloaded, the server stopped), as the loop's own job would be.
        self._here: trio.CancelScope | None = None
        #: What the store keeps about it for the lobby and the lifecycle (kept up to date
        #: by the registry); ``None`` for a room made without a registry.
        self.record: EncounterRecord | None = None
        #: Called (and awaited) after accepted events and new seats: the registry brings
        #: the record up to date there.
        self.on_change: Callable[[Room], Awaitable[None]] | None = None
        #: Called when the last member left.
        self.on_empty: Callable[[Room], None] | None = None
        #: When (trio's clock) a member last came or went or the loop last handled
        #: something: the idle unload measures from it.
        self.last_busy = trio.current_time()
        #: Set when the room is being unloaded: it takes no new job.
        self.closed = False
        #: The room loop's cancel scope (set by the registry that runs it).
        self.cancel_scope: trio.CancelScope | None = None
        #: States the filtered resumes fold from (see FOLD_ANCHOR_EVERY), by block: each
        #: exactly the state after its seq, never changed (a room's state is replaced,
        #: never changed in place; a state a fold made is copied).
        self._anchors: dict[int, EncounterState] = {}
        #: Events folded for the resumes of players and spectators, all told.
        self.folded = 0
        self._anchor(state)

    # -- seats --------------------------------------------------------------------------

    async def grant(self, role: Role, player: str | None = None) -> str:
        """A new token for ``role`` (stored, as a hash, before it is handed out)."""
        token = new_token()
        grant = Grant(token_hash(token), role, player)
        try:
            await self.store.add_grant(self.id, StoredGrant(grant.token_hash, role, player))
        except StoreError as exc:
            raise ProtocolError(
                "store_unavailable", f"The seat could not be saved: {exc}"
            ) from None
        self.grants.append(grant)
        if role == "player":
            await self._changed()
        return token

    async def _changed(self) -> None:
        if self.on_change is not None:
            try:
                await self.on_change(self)
            except Exception:  # the record is for the lobby: never fail the game for it
                log.exception("encounter %s: its record was not updated", self.id)

    @property
    def timer_running(self) -> bool:
        """Whether a decision deadline or the turn timer is running."""
        return bool(self.deadlines) or self.turn_deadline is not None

    def find_grant(self, token: str) -> Grant | None:
        """The grant for ``token``, comparing every candidate's hash in constant time."""
        wanted = token_hash(token).encode()
        found = None
        for grant in self.grants:
            if hmac.compare_digest(grant.token_hash.encode(), wanted):
                found = grant
        return found

    def seat_check(self, subscriber: Subscriber) -> None:
        """Raise the refusal :meth:`add_member` would give ``subscriber`` now (a full room)."""
        if len(self.members) >= self.max_members and all(
            m.subscriber is not subscriber for m in self.members
        ):
            raise ProtocolError(
                "too_many_connections",
                f"Encounter {self.id!r} already has {self.max_members} connections.",
            )

    def add_member(self, subscriber: Subscriber, grant: Grant) -> Member:
        """Seat ``subscriber`` with ``grant`` (a subscriber already here changes seat)."""
        for m in self.members:
            if m.subscriber is subscriber:
                m.role, m.player = grant.role, grant.player
                return m
        self.seat_check(subscriber)
        member = Member(subscriber, grant.role, grant.player)
        self.members.append(member)
        self.last_busy = trio.current_time()
        return member

    def remove(self, subscriber: Subscriber) -> None:
        """``subscriber`` leaves: nothing the room sends reaches it from now on."""
        before = len(self.members)
        self.members = [m for m in self.members if m.subscriber is not subscriber]
        if len(self.members) < before:
            self.last_busy = trio.current_time()
            if not self.members and self.on_empty is not None:
                self.on_empty(self)

    # -- what members see ----------------------------------------------------------------

    def snapshot(self, member: Member) -> dict[str, Any]:
        return snapshot_for(self.state, view_of(member), self.engine.catalog)

    def hidden_from(self, member: Member | None) -> set[str]:
        """The creatures ``member`` may not see now."""
        return hidden_ids(self.state, view_of(member))

    async def events_since(
        self, member: Member, last_seq: int, work: FoldWork | None = None
    ) -> list[dict[str, Any]] | None:
        """The events after ``last_seq`` as ``member`` may see them, or ``None`` if trimmed.

        Each event is filtered with the state right after it happened: what was hidden
        then stays hidden, even after a reveal or a rewind. For a player or spectator
        that state is folded from the newest state the room kept at or before
        ``last_seq`` (:data:`FOLD_ANCHOR_EVERY`), or from the start of the log when it
        kept none; nothing is read when nothing was missed. The events folded are
        added to ``work`` (the connection's budget pays for them). A seat with a
        filtered view gets ``None`` (a snapshot) when the start of the log was trimmed,
        since that fold is then impossible.
        """
        view = view_of(member)
        if not view.full and last_seq >= self.state.seq:
            return []  # nothing missed: no read, no fold
        oldest = await self.store.oldest_kept(self.id)
        if last_seq + 1 < oldest:
            return None
        if view.full:
            return [
                {"encounter": self.id, "seq": seq, "event": event_to_dict(e)}
                for seq, e in await self.store.read(self.id, last_seq)
            ]
        if oldest > 1:
            return None
        start = max(
            (s for s in self._anchors.values() if s.seq <= last_seq),
            key=lambda s: s.seq,
            default=None,
        )
        log_ = await self.store.read(self.id, 0 if start is None else start.seq)
        if start is not None and any(
            isinstance(e, Rewound) and e.to_seq < start.seq for _, e in log_
        ):  # a rewind to before the kept state: only the whole log knows that state
            start, log_ = None, await self.store.read(self.id)
        found = []
        catalog = self.engine.catalog
        steps = replay_steps((e for _, e in log_), catalog, start)
        for done, ((seq, e), state) in enumerate(zip(log_, steps, strict=True), 1):
            if done % _FOLD_SLICE == 0:
                # A long log is folded in slices: other rooms run in between.
                await trio.lowlevel.checkpoint()
            if state.seq // FOLD_ANCHOR_EVERY not in self._anchors:
                self._anchor(state, copy=True)
            if seq > last_seq:
                found.append(
                    {
                        "encounter": self.id,
                        "seq": seq,
                        "event": event_for(event_to_dict(e), state, view, catalog),
                    }
                )
        self.folded += len(log_)
        if work is not None:
            work.folded += len(log_)
        return found

    def _anchor(self, state: EncounterState, *, copy: bool = False) -> None:
        """Keep ``state`` (exactly the state after ``state.seq``; ``copy``: one a fold
        goes on changing) if it is the first of its block, among the newest
        :data:`FOLD_ANCHORS_KEPT` blocks."""
        block = state.seq // FOLD_ANCHOR_EVERY
        if block in self._anchors or block <= self.state.seq // FOLD_ANCHOR_EVERY - (
            FOLD_ANCHORS_KEPT
        ):
            return
        self._anchors[block] = state.copy() if copy else state
        while len(self._anchors) > FOLD_ANCHORS_KEPT:
            del self._anchors[min(self._anchors)]

    def prompts_for(self, member: Member, now: float | None = None) -> list[PromptNotification]:
        """The pending decisions ``member`` may answer, with the seconds left at ``now``
        (trio's clock when not given)."""
        if now is None:
            now = trio.current_time()
        found = []
        for decision in self.state.pending:
            if member.role == "gm" or (
                member.role == "player" and decision.controller == member.player
            ):
                if self._hides(decision, member):
                    continue
                found.append(self._prompt(decision, view_of(member), now))
        return found

    def _prompt(self, decision: Decision, view: Viewer, now: float) -> PromptNotification:
        left = self.deadlines.get(decision.id, math.inf) - now
        # Every pending decision has a deadline once the loop runs; null before that.
        seconds: Any = round(max(0.0, left), 3) if left != math.inf else None
        info = DecisionInfo(
            id=decision.id,
            kind=decision.kind,
            controller=decision.controller,
            prompt=decision.prompt,
            options=list(decision.options),
            default=list(decision.default),
            creature=decision.creature,
            ordering=decision.ordering,
        )
        prompt = PromptNotification(encounter=self.id, decision=info, deadline_seconds=seconds)
        names = [] if view.full else hidden_names(self.state, view)
        if not names:
            return prompt
        # A seat that may not see a hidden creature reads "someone" for its name.
        return PromptNotification(
            encounter=scrub_names(prompt.encounter, names),
            decision=DecisionInfo(**scrub_names(fields_of(info), names)),
            deadline_seconds=seconds,
        )

    def _hides(self, decision: Any, member: Member | None) -> bool:
        """Whether a decision concerns a creature hidden from ``member`` (as its reactor
        or its options)."""
        ids = self.hidden_from(member)
        return decision.creature in ids or any(o in ids for o in decision.options)

    def mask(self, command: Command, member: Member | None) -> tuple[Command, dict[str, str]]:
        """For a player or spectator, make hidden creatures (and decisions about them)
        look exactly like ids that do not exist: swap them for unknown ids, and return
        the swaps so that error messages can show the id the sender wrote."""
        if member is None or member.full_view:
            return command, {}
        hidden = self.hidden_from(member)
        secret = {d.id for d in self.state.pending if self._hides(d, member)}
        swaps: dict[str, str] = {}
        params = {k: _swap(v, k, hidden, secret, swaps) for k, v in command.params.items()}
        if not swaps:
            return command, {}
        return attrs.evolve(command, params=params), {v: k for k, v in swaps.items()}

    def scrub(self, message: str, member: Member | None) -> str:
        return scrub(message, self.state, view_of(member))

    # -- the loop -------------------------------------------------------------------------

    async def submit(self, job: Job) -> Job:
        """Run ``job`` and return it with its answer: at once, in the caller's task,
        when the room is idle (no job running and none queued: the usual case, which
        saves two task switches and the inbox); otherwise queued for the room's loop,
        after the jobs before it. Jobs run one at a time either way, in order."""
        if self.closed and job.command is not _DRAIN:
            raise ProtocolError(
                "unknown_encounter", f"Encounter {self.id!r} has just left this server."
            )
        if self.crashed is not None:
            raise ProtocolError(
                "encounter_crashed", f"Encounter {self.id!r} stopped: {self.crashed}"
            )
        if not self._running and not self._queued and job.command is not _DRAIN:
            await self._run_here(job)
            return job
        self._queued += 1
        try:
            await self._inbox_send.send(job)
        except BaseException:
            self._queued -= 1  # never queued
            raise
        await job.done.wait()
        return job

    async def _run_here(self, job: Job) -> None:
        """Run ``job`` in the caller's task, as the loop would: shielded, so that a
        client that goes away cannot stop a command half way (the loop's jobs are not
        cancelled with their sender either), but cancelled with the loop (a store that
        hangs does not hold up the server's stop)."""
        self._running = True
        self.last_busy = trio.current_time()
        token = _log.encounter_var.set(self.id)
        scope = self._here = trio.CancelScope(shield=True)
        try:
            with scope:
                await self._run_job(job)
        finally:
            self._here = None
            _log.encounter_var.reset(token)
            self._running = False
            self._lot.unpark_all()  # the loop, if it took a job meanwhile
        if scope.cancelled_caught and job.error is None:
            job.result = None
            job.error = ProtocolError(
                "unknown_encounter", f"Encounter {self.id!r} has just left this server."
            )

    async def _take_turn(self) -> None:
        """(The loop) wait until no job runs in its sender's task, then hold the room."""
        while self._running:
            await self._lot.park()
        self._running = True

    async def drain(self) -> None:
        """Wait until every job queued before this call has been handled."""
        if self.crashed is None:
            await self.submit(Job(SYSTEM_ACTOR, _DRAIN, None))

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Handle commands one at a time; apply defaults when decisions time out."""
        _log.encounter_var.set(self.id)  # every line this loop logs names the encounter
        _log.client_var.set(None)  # (the loop was started by its creator's connection)
        self._update_prompts()  # decisions already pending (a restored encounter) get deadlines
        self._update_turn_timer()
        task_status.started()
        try:
            await self._loop()
        finally:
            if self._here is not None:
                self._here.cancel()  # a job running in its sender's task stops with us

    async def _loop(self) -> None:
        receive = self._inbox.receive
        while True:
            if self._overruns:
                await self._take_turn()
                seq = self.state.seq
                try:
                    await self._report_overruns()
                except Exception as exc:  # a bug: reported, and the loop goes on
                    self._contain("the report of slow plugins", exc, moved=self.state.seq != seq)
                finally:
                    self._running = False
            deadline = min(self.deadlines.values(), default=math.inf)
            if self.turn_deadline is not None:
                deadline = min(deadline, self.turn_deadline[2])
            job: Job | None = None
            woken = False
            if deadline == math.inf:  # the usual case: no cancel scope for every job
                job = await receive()
                woken = job is None
            else:
                with trio.move_on_at(deadline):
                    job = await receive()
                    woken = job is None
            if woken:
                continue
            await self._take_turn()
            try:
                if job is None:
                    self.last_busy = trio.current_time()  # a timer ran out: idle from now
                    seq = self.state.seq
                    try:
                        await self._expire(trio.current_time())
                    except Exception as exc:  # a bug: reported, and the loop goes on
                        self._contain("the clock", exc, moved=self.state.seq != seq)
                    continue
                self.last_busy = trio.current_time()
                if job.command is _DRAIN:
                    job.done.set()
                    continue
                _log.client_var.set(job.client)
                await self._run_job(job)
                _log.client_var.set(None)  # what the clock does next is nobody's
            finally:
                self._running = False
                if job is not None:
                    self._queued -= 1

    async def _run_job(self, job: Job) -> None:
        """Run one job (a command, a rewind, dice): its answer or error goes in the job,
        a bug is contained (the GM is told, the game goes on); then ``job.done`` is set."""
        seq = self.state.seq
        self._keyed = job.keyed
        try:
            if job.keyed is not None and await self._repeated(job):
                pass
            elif job.kind == "key_probe":
                pass  # a new key: the request goes on (``first_answer``)
            elif job.kind == "rewind":
                job.result = await self.rewind(int(job.command.params["to_seq"]), "gm")
            elif job.kind == "contribute_dice":
                job.result = await self.contribute(job.actor.id, job.command.params["value"])
            elif job.kind == "rotate_dice":
                job.result = await self.rotate_dice()
            elif job.kind == "roll":
                job.result, job.total = await self.free_roll(job.actor.id, job.command.params)
            elif job.kind == "chat":
                job.result = await self.chat(job.actor.id, job.command.params)
            else:
                job.result = await self.apply(job.command, job.member)
            _metrics.current().command_latency.observe(trio.current_time() - job.received)
        except ProtocolError as exc:
            job.error = exc
        except Exception as exc:  # a bug anywhere (masking, rules, store, fan-out)
            self._contain(f"'{job.command.type}'", exc, moved=self.state.seq != seq)
            job.result = None
            job.error = ProtocolError(
                "internal_error",
                f"The server failed while handling '{job.command.type}'. The game goes "
                "on; the GM has been told.",
            )
        self._keyed = None
        job.done.set()

    async def first_answer(self, keyed: Keyed) -> dict[str, Any] | None:
        """The first answer to ``keyed`` if its seat used its key before, else None; for
        a request that checks the state before it reaches the loop (a repeat must get
        its first answer, not the refusal the changed state would give)."""
        probe = Job(SYSTEM_ACTOR, Command("key_probe"), None, "key_probe", keyed=keyed)
        await self.submit(probe)
        if probe.error is not None:
            raise probe.error
        return probe.replayed

    async def _repeated(self, job: Job) -> bool:
        """Whether ``job`` repeats a keyed request: then its first answer is the job's
        ``replayed`` and nothing is done. The first keyed job after a load reads the
        keys stored in the log."""
        assert job.keyed is not None
        if not self.keys.loaded:
            try:
                records = await self.store.stored_requests(self.id)
            except StoreError as exc:
                log.error("encounter %s: %s", self.id, exc)
                raise ProtocolError(
                    "store_unavailable",
                    "The server could not read this encounter's idempotency keys, so "
                    "nothing changed. Send the request again later.",
                ) from None
            for record in records:
                self.keys.remember(record)
            self.keys.loaded = True
        job.replayed = self.keys.answer(job.keyed)
        return job.replayed is not None

    def _contain(self, what: str, exc: Exception, *, moved: bool) -> None:
        """One job (or the clock's turn) failed with ``exc``: log it with the encounter's
        id, tell the GM, send every member a snapshot if the state ``moved`` on before
        the failure (in the fan-out: they may have missed events), and bring prompts and
        the turn timer up to date; the loop then goes on with the next job."""
        log.error("encounter %s: handling %s failed", self.id, what, exc_info=exc)
        with contextlib.suppress(Exception):
            self.notify_gm(
                EncounterErrorNotification(
                    self.id, f"The server failed while handling {what}: {exc!r}."
                )
            )
        try:
            # If the failure came after the state moved on (in the fan-out), every
            # member gets the state as it now is.
            if moved:
                fan_out(
                    self.members,
                    view_of,
                    lambda view: [notification_text(self._snapshot_params(view))],
                )
            self._update_prompts()
            self._update_turn_timer()
        except Exception:
            log.exception("encounter %s: members, prompts and timer not updated", self.id)

    async def _expire(self, now: float) -> None:
        """Apply what the clock decides: defaults for overdue decisions, the turn timer."""
        for did, at in sorted(self.deadlines.items(), key=lambda kv: kv[1]):
            if at > now:
                continue
            self.deadlines.pop(did, None)
            if self.state.decision(did) is not None:
                await self._system(Command("decision_timeout", {"decision": did}, SYSTEM_ACTOR))
        timer = self.turn_deadline
        if timer is not None and timer[2] <= now:
            self.turn_deadline = None
            creature, round_, _ = timer
            s = self.state
            if s.active == creature and s.round == round_ and s.maneuver is None:
                await self._system(Command("end_turn", {"creature": creature}, SYSTEM_ACTOR))

    async def _system(self, command: Command) -> None:
        try:
            await self.apply(command)
        except ProtocolError as err:  # the state moved on; nothing to apply
            log.info("encounter %s: %s not applied: %s", self.id, command.type, err.message)

    @contextlib.contextmanager
    def timing_plugins(self) -> Iterator[list[Overrun]]:
        """Time the plugin calls of the engine calls made inside (for this encounter: a
        command, a question such as ``actions``) against the server's budget; the list
        it gives holds the calls over it, and the loop reports them next
        (:meth:`note_overruns`), whatever made them run."""
        with self.engine.hook.budget.watch() as overruns:
            try:
                yield overruns
            finally:
                self.note_overruns(overruns)

    def note_overruns(self, overruns: Sequence[Overrun]) -> None:
        """Plugin calls over the time budget: the loop reports them next
        (``plugin_overran``, and ``plugin_disabled`` at the limit), so that a plugin
        that keeps blocking is switched off whatever makes it run."""
        if overruns:
            self._overruns.extend(overruns)
            self._wake()

    async def _report_overruns(self) -> None:
        """The server measured, so the server decides (``Budget.report``) and hands the
        decision to the engine as a command: the log folds alike on any machine. The
        report itself is not timed (a plugin slow to observe it would be reported
        again and again)."""
        overruns, self._overruns = self._overruns, []
        report = self.engine.hook.budget.report(self.state, overruns)
        if report is None:
            return
        outcome = self.engine.handle(self.state, report, RandomEntropy())  # rolls nothing
        if outcome.events:
            await self._accept(outcome.events, outcome.state)

    def _wake(self) -> None:
        """Make the loop look at its deadlines again (they changed outside of it)."""
        # If the inbox is full, the loop has jobs waiting and looks again after the next one.
        with contextlib.suppress(trio.WouldBlock):
            self._inbox_send.send_nowait(None)

    def _update_turn_timer(self) -> None:
        seconds = self.state.options.turn_seconds
        active = self.state.active
        if seconds is None or active is None or self.state.phase != "turns":
            self.turn_deadline = None
            return
        key = (active, self.state.round)
        if self.turn_deadline is None or self.turn_deadline[:2] != key:
            now = trio.current_time()
            self.turn_deadline = (*key, now + seconds)
            self._wake()
            for member in list(self.members):
                for timer in self.turn_timer_for(member, now):
                    push(member.subscriber, timer)

    def turn_timer_for(
        self, member: Member, now: float | None = None
    ) -> list[TurnTimerNotification]:
        """The ``turn_timer`` notification for ``member`` with the seconds left at
        ``now`` (trio's clock when not given); none when no timer runs, or when the
        creature whose turn it is is hidden from this seat."""
        timer = self.turn_deadline
        if timer is None:
            return []
        creature, round_, at = timer
        if creature in self.hidden_from(member):
            return []
        left = max(0.0, at - (trio.current_time() if now is None else now))
        return [TurnTimerNotification(self.id, creature, round_, round(left, 3))]

    async def apply(self, command: Command, member: Member | None = None) -> CommandResult:
        """Run one command through the engine, store and broadcast its events.

        Only the room's loop calls this, one command at a time (use :meth:`submit`).

        Raises :class:`ProtocolError` for a refusal (rules or permission), a plugin's
        failure (``plugin_error``) or a crash of the rules (``encounter_crashed``); in
        every such case the state is unchanged and, for the last two, the GM gets an
        ``encounter_error`` notification.
        """
        command, swaps = self.mask(command, member)
        mark = self.dice.mark() if self.dice is not None else 0
        try:
            try:
                with self.timing_plugins():
                    outcome = self.engine.handle(self.state, command, self.entropy)
            except BaseException:
                # A refused command's dice were never seen: the counter takes them back.
                if self.dice is not None:
                    self.dice.give_back(mark)
                raise
        except Refusal as refusal:
            message = refusal.message
            for fake, real in swaps.items():
                message = message.replace(fake, real)
            error = ProtocolError.from_refusal(refusal.code, self.scrub(message, member))
            if refusal.code == "decision_pending" and self.deadlines:
                # Waiting helps: the decision is answered, or its default applies, by then.
                left = min(self.deadlines.values()) - trio.current_time()
                error.retry_after_ms = math.ceil(max(0.0, left) * 1000)
            raise error from None
        except PluginFailure as failure:  # one plugin failed: refused, reported, state unchanged
            _metrics.current().plugin_failures[failure.plugin] += 1
            log.error(
                "encounter %s: command %s: %s", self.id, command.type, failure, exc_info=failure
            )
            where = f" ({failure.where})" if failure.where else ""
            self.notify_gm(
                EncounterErrorNotification(
                    self.id,
                    f"The plugin '{failure.plugin}' failed in {failure.hook}{where} on "
                    f"'{command.type}': {describe(failure.error)}. Nothing changed.",
                )
            )
            raise ProtocolError(
                "plugin_error",
                f"The plugin '{failure.plugin}' failed while handling '{command.type}'; "
                "nothing changed.",
            ) from None
        except Exception as exc:  # a bug or a plugin: contained, reported, state unchanged
            log.exception("encounter %s: command %s crashed", self.id, command.type)
            self.notify_gm(
                EncounterErrorNotification(
                    self.id, f"The rules failed on '{command.type}': {exc!r}. Nothing changed."
                )
            )
            raise ProtocolError(
                "encounter_crashed",
                f"The server failed while handling '{command.type}'; nothing changed.",
            ) from None
        events, after = self._with_dice(list(outcome.events), outcome.state)
        try:
            first = await self._accept(events, after)
        except ProtocolError:
            if self.dice is not None:
                self.dice.give_back(mark)
                self.dice.resume_from(self.state.dice)
            raise
        return CommandResult(first_seq=first, last_seq=self.state.seq)

    def _with_dice(
        self, events: list[Event], after: EncounterState
    ) -> tuple[list[Event], EncounterState]:
        """``events`` and the state ``after`` them, followed by the dice events they call
        for (``dice_drawn``, ``dice_revealed`` at the end, a new ``dice_committed``)."""
        if self.dice is None:
            return events, after
        payloads = [event_to_dict(e) for e in events]
        extra = self.dice.settle(events, after, payloads)
        for event in extra:
            apply_event(after, event, self.engine.catalog)
        payloads += [event_to_dict(e) for e in extra]
        # Encoded once here: the store and every view that sees an event unchanged reuse it.
        return encoded(events + extra, payloads), after

    async def contribute(self, by: str, value: str) -> CommandResult:
        """A seat mixes ``value`` into the dice (a ``dice_contributed`` event)."""
        if self.dice is None:
            raise ProtocolError.from_refusal(
                "invalid_params", "This encounter's dice are not verifiable (a test's entropy)."
            )
        self._dice_open()
        event = self.dice.contribution(self.state.dice, by, value)
        after = self.state.copy()
        apply_event(after, event, self.engine.catalog)
        first = await self._accept((event,), after)
        self.dice.mixed(self.state.dice)
        return CommandResult(first_seq=first, last_seq=self.state.seq)

    def _dice_open(self) -> None:
        """Refuse a change to the dice of an encounter that has ended (its seed is
        revealed and no die will be rolled)."""
        if self.state.phase == "ended":
            raise ProtocolError.from_refusal("encounter_over", "The encounter has ended.")

    async def rotate_dice(self) -> CommandResult:
        """The GM rotates the seed: ``dice_revealed`` (the old one), ``dice_committed``."""
        if self.dice is None:
            raise ProtocolError.from_refusal(
                "invalid_params", "This encounter's dice are not verifiable (a test's entropy)."
            )
        self._dice_open()
        events = self.dice.rotate(self.state.dice)
        after = self.state.copy()
        for event in events:
            apply_event(after, event, self.engine.catalog)
        try:
            first = await self._accept(events, after)
        except ProtocolError:
            self.dice.resume_from(self.state.dice)
            raise
        return CommandResult(first_seq=first, last_seq=self.state.seq)

    async def free_roll(self, by: str, params: Mapping[str, Any]) -> tuple[CommandResult, int]:
        """A seat's free roll at the table (a ``dice_rolled`` event): the room's dice, so
        that it verifies like every roll, and no change to the fight. ``params`` were
        checked by the method (``dice``, ``label``, ``advantage``, ``private``)."""
        if self.state.phase == "ended":
            raise ProtocolError.from_refusal(
                "encounter_over", "The encounter has ended: its dice are revealed."
            )
        mark = self.dice.mark() if self.dice is not None else 0
        record = roll(self.entropy, params["dice"], advantage=params["advantage"])
        event = DiceRolled(by, record, params["label"], params["private"])
        after = self.state.copy()
        apply_event(after, event, self.engine.catalog)
        events, after = self._with_dice([event], after)
        try:
            first = await self._accept(events, after)
        except ProtocolError:  # not stored: nobody saw these dice
            if self.dice is not None:
                self.dice.give_back(mark)
                self.dice.resume_from(self.state.dice)
            raise
        return CommandResult(first_seq=first, last_seq=self.state.seq), record.total

    async def chat(self, by: str, params: Mapping[str, Any]) -> CommandResult:
        """A line of table chat or a whisper (a ``chat_sent`` event); ``params`` were
        checked by the method (``text``, ``to``)."""
        if self.state.phase == "ended":
            raise ProtocolError.from_refusal("encounter_over", "The encounter has ended.")
        event = ChatSent(by, params["text"], params["to"])
        after = self.state.copy()
        apply_event(after, event, self.engine.catalog)
        first = await self._accept((event,), after)
        return CommandResult(first_seq=first, last_seq=self.state.seq)

    async def _accept(
        self, events: Sequence[Event], after: EncounterState, *, snapshots: bool = False
    ) -> int:
        """Store ``events`` (write-ahead), make ``after`` the state, tell every member
        (and, with ``snapshots``, send each its new snapshot), then update prompts and the
        turn timer. Returns the seq of the first event."""
        first = self.state.seq + 1
        events = encoded(events)
        await self.commit(first, events, after)
        _metrics.current().plugin_events(events)
        before = self.state
        self.state = after
        self._anchor(after)
        self._broadcast(first, events, before)
        if snapshots:
            fan_out(
                self.members, view_of, lambda view: [notification_text(self._snapshot_params(view))]
            )
        self._update_prompts()
        self._update_turn_timer()
        await self._changed()
        return first

    async def commit(self, first: int, events: Sequence[Event], after: EncounterState) -> None:
        """The write-ahead step: store ``events`` (and a snapshot now and then) before
        anything else happens; a failure refuses the command with nothing changed."""
        every = self.snapshot_every
        snapshot = state_to_dict(after) if after.seq // every > self.state.seq // every else None
        record = None
        if self._keyed is not None and events:
            # The key's record goes with the first event (its ``_request``, in the store
            # only), so that a restart keeps it.
            record = self._keyed.record(first, events)
            coded = encoded(events)
            events = EncodedEvents(coded, coded.payloads, coded.texts, record)
        try:
            await self.store.append(
                self.id, first, events, snapshot=snapshot, finished=after.phase == "ended"
            )
            if snapshot is not None:
                self.snapshot_seq = after.seq
            if record is not None:
                self.keys.remember(record)
        except StoreError as exc:
            log.error("encounter %s: %s", self.id, exc)
            raise ProtocolError(
                "store_unavailable",
                "The server could not save this command, so nothing changed. Tell the "
                "server's operator (the disk may be full or read-only).",
            ) from None

    async def save_snapshot(self) -> bool:
        """Store a snapshot of the state as it is now, unless the last one this room stored
        is of this very seq (the graceful stop does this, so that the next load reads no
        tail of the log). Returns whether one was written; a store failure is logged, not
        raised (the events are stored already: the next load replays them)."""
        state = self.state
        if self.snapshot_seq == state.seq or state.seq == 0:
            return False
        try:
            await self.store.append(self.id, state.seq + 1, (), snapshot=state_to_dict(state))
        except (StoreError, ValueError) as exc:
            log.warning("encounter %s: no snapshot written at the stop: %s", self.id, exc)
            return False
        self.snapshot_seq = state.seq
        return True

    async def rewind(self, to_seq: int, by: str) -> RewindResult:
        """GM undo: append a ``rewound`` event and go back to the state after ``to_seq``.

        Only the room's loop calls this (through a job), so nothing interleaves.
        """
        if not 1 <= to_seq < self.state.seq:
            raise ProtocolError(
                "invalid_params",
                f"'to_seq' must be an earlier event, from 1 to {self.state.seq - 1}.",
            )
        stored = await self.store.read(self.id)
        history = [e for _, e in stored]
        undone: tuple[int, ...] = ()
        if self.dice is not None:
            undone = undone_counters([(seq, event_to_dict(e)) for seq, e in stored], to_seq)
        event = Rewound(to_seq, by, undone)
        after = replay([*history, event], self.engine.catalog)
        # An encounter stored before the options' ranges existed stays clamped.
        after.options, _ = clamp_options(after.options)
        events, after = self._with_dice([event], after)
        try:
            first = await self._accept(events, after, snapshots=True)
        except ProtocolError:
            if self.dice is not None:
                self.dice.resume_from(self.state.dice)
            raise
        return RewindResult(seq=first)

    def _broadcast(self, first: int, events: Sequence[Event], before: EncounterState) -> None:
        """Send ``events`` (numbered from ``first``) to every member, as each may see them.

        Each event is filtered with the state right after it (so an event that happened
        while a creature was hidden stays hidden even when the same command reveals
        it), turned into a dictionary once, and serialized once per view. When a
        creature was revealed to a view, that view also gets a fresh snapshot after the
        events: the creature as it is now.
        """
        state = self.state
        steps = self._steps(events, before)
        coded = encoded(events)
        payloads, jsons = coded.payloads, coded.texts
        overridden = any(isinstance(e, OverrideApplied) and e.field == "hidden" for e in events)
        # A keyed request's events carry its key to the connections of the seat that sent it.
        keyed = self._keyed
        keyed_view = view_of_seat(keyed.seat) if keyed is not None else None

        def texts(view: Viewer) -> list[str]:
            found = []
            # What is hidden from this view in each distinct state (most events of a
            # command share the state after it): computed once, not for every event.
            hidden_in: dict[int, set[str]] = {}

            def hidden(step: EncounterState) -> set[str]:
                ids = hidden_in.get(id(step))
                if ids is None:
                    ids = hidden_in[id(step)] = hidden_ids(step, view)
                return ids

            catalog = self.engine.catalog
            for offset, payload in enumerate(payloads):
                step = steps[offset]
                shown = (
                    payload if view.full else event_for(payload, step, view, catalog, hidden(step))
                )
                # An event the view sees unchanged reuses the text encoded for the store.
                text = jsons[offset] if shown is payload else encode_message(shown)
                key = keyed.key if keyed is not None and view == keyed_view else None
                found.append(event_notification_text(self.id, first + offset, text, key))
            if not view.full and (
                overridden
                or hidden_ids(before, view) - hidden(state)
                # An asset hidden now that was seen before: the seat's view drops it.
                or (hidden(state) - hidden_ids(before, view)) & set(state.hidden_assets)
            ):
                found.append(notification_text(self._snapshot_params(view)))
            return found

        fan_out(self.members, view_of, texts)

    def _steps(self, events: Sequence[Event], before: EncounterState) -> list[EncounterState]:
        """The state after each of ``events`` (applied to ``before``; the last is the
        room's state). Folded only when some creature is or was hidden."""
        after = self.state
        if len(events) < 2 or not (hidden_ids(before) or hidden_ids(after)):
            return [after] * len(events)
        if any(isinstance(e, Rewound) for e in events):
            return [after] * len(events)
        steps = []
        # Working copies (sdk/_state.py): only apply_event changes them, as here.
        state = working_copy(before)
        try:
            for event in events[:-1]:
                apply_event(state, event, self.engine.catalog)
                steps.append(working_copy(state))
        except KeyError:  # an event without a reducer: hide what is hidden before or after
            return [before if hidden_ids(before) - hidden_ids(after) else after] * len(events)
        steps.append(after)
        return steps

    def _snapshot_params(self, view: Viewer | bool) -> SnapshotNotification:
        return SnapshotNotification(
            self.id, self.state.seq, snapshot_for(self.state, view, self.engine.catalog)
        )

    def _update_prompts(self) -> None:
        pending = {d.id for d in self.state.pending}
        for did in list(self.deadlines):
            if did not in pending:
                del self.deadlines[did]
        fresh = [d for d in self.state.pending if d.id not in self.deadlines]
        if not fresh:
            return
        seconds = (
            self.reaction_seconds
            if self.reaction_seconds is not None
            else self.state.options.reaction_seconds
        )
        now = trio.current_time()
        for decision in fresh:
            self.deadlines[decision.id] = now + seconds
        self._wake()
        fresh_ids = {d.id for d in fresh}
        for member in list(self.members):
            # The time the deadlines were set from: a fresh prompt shows all its seconds.
            for prompt in self.prompts_for(member, now):
                if prompt.decision.id in fresh_ids:
                    push(member.subscriber, prompt)

    def notify_gm(self, params: EncounterErrorNotification) -> None:
        """Tell the GM's members (an ``encounter_error``)."""
        for member in list(self.members):
            if member.role == "gm":
                push(member.subscriber, params)

    def capability_check(self, member: Member, command_type: str) -> None:
        """Refuse spectators before the engine sees anything."""
        if member.role == "spectator":
            raise ProtocolError(
                "spectator_read_only", "Spectators can watch but not send commands."
            )
