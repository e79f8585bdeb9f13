"""A room's decision deadlines, on trio's mock clock (no sockets).

The room loop (server/_room.py) applies a pending decision's default when its
deadline passes (docs/rules.md, "Rulings": the reaction is not taken), and forgets the timer of a
decision answered in time. Time here is a ``MockClock`` that jumps whenever every
task waits, so a 30-second deadline takes no real time and is exact.
"""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing

from zonekeep.sdk import (
    GM_ACTOR,
    Actor,
    Attack,
    Command,
    Creature,
)
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server._fanout import Member
from zonekeep.server._room import Job, Room
from zonekeep.server._store import InMemoryStore

ALICE = Actor("player", "alice")
REACTION_SECONDS = 30


class Recorder:
    """A subscriber (what a connection is to a room): records every notification it is
    sent with the (mock) time it happened."""

    def __init__(self) -> None:
        self.pushed: list[tuple[float, str, dict[str, Any]]] = []
        self.closed: tuple[int, str] | None = None

    def push_text(self, text: str) -> None:
        message = json.loads(text)
        self.pushed.append((trio.current_time(), message["method"], message["params"]))

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def events(self, type_: str | None = None) -> list[tuple[float, dict[str, Any]]]:
        return [
            (at, p["event"])
            for at, method, p in self.pushed
            if method == "event" and (type_ is None or p["event"]["type"] == type_)
        ]


def _creature(cid: str, side: str, controller: str) -> Creature:
    return Creature(
        cid,
        cid.capitalize(),
        side,
        controller=controller,
        speeds={"walk": 30},
        hp=20,
        max_hp=20,
        ac=12,
        attacks=[Attack("blade", "melee", 4, "1d6+2", "slashing")],
    )


def engaged() -> EncounterHarness:
    """Hall and yard side by side; the goblin has walked into the hall and engaged Aria.

    It is Aria's turn: entering the yard provokes an opportunity attack from the goblin.
    """
    h = EncounterHarness(
        [_creature("aria", "party", "alice"), _creature("gob", "foes", "gm")],
        zones=["hall", "yard"],
    )
    h.start(positions={"aria": "hall", "gob": "yard"}, initiative=[5, 20])
    h.send("enter", creature="gob", zones=["hall"])
    h.send("engage", creature="gob", target="aria")
    h.end_turn()
    assert h.state.active == "aria"
    assert h.state.engagements == [("aria", "gob")]
    return h


def provoked() -> EncounterHarness:
    """``engaged`` after Aria's move: the goblin's opportunity attack is pending."""
    h = engaged()
    h.send("enter", ALICE, creature="aria", zones=["yard"])
    (decision,) = h.state.pending
    assert (decision.kind, decision.creature, decision.default) == (
        "opportunity_attack",
        "gob",
        ("decline",),
    )
    return h


def make_room(h: EncounterHarness) -> tuple[Room, Recorder]:
    """A room over the harness's state and events, with one recorded GM member."""
    store = InMemoryStore()
    store.append_now("test", 1, h.events)
    room = Room("test", h.engine, store, h.state, reaction_seconds=REACTION_SECONDS)
    recorder = Recorder()
    room.members.append(Member(recorder, "gm"))
    return room, recorder


async def submit(room: Room, actor: Actor, type_: str, **params: object) -> Job:
    job = Job(actor, Command(type_, params, actor), None)
    await room.submit(job)
    return job


async def settle_at(when: float) -> None:
    """Let the clock reach ``when``, then let every task run before looking."""
    await trio.sleep_until(when)
    await trio.testing.wait_all_tasks_blocked()


async def test_the_default_applies_exactly_when_the_deadline_passes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    h = engaged()
    room, recorder = make_room(h)
    async with trio.open_nursery() as nursery:
        await nursery.start(room.run)
        start = trio.current_time()
        job = await submit(room, ALICE, "enter", creature="aria", zones=["yard"])
        assert job.error is None, job.error
        (decision,) = room.state.pending
        assert room.deadlines == {decision.id: start + REACTION_SECONDS}
        (prompt,) = [p for _, m, p in recorder.pushed if m == "prompt"]
        assert prompt["deadline_seconds"] == REACTION_SECONDS

        await settle_at(start + REACTION_SECONDS - 0.1)
        assert recorder.events("decision_resolved") == []
        assert room.state.decision(decision.id) is not None
        assert room.state.creatures["aria"].zone == "hall"

        await settle_at(start + REACTION_SECONDS)
        ((at, resolved),) = recorder.events("decision_resolved")
        assert at == start + REACTION_SECONDS
        assert resolved == {
            "type": "decision_resolved",
            "decision": decision.id,
            "choice": ["decline"],
            "by": resolved["by"],
            "defaulted": True,
        }
        # The move then completes: no attack was made, Aria is in the yard.
        assert recorder.events("attack_made") == []
        assert [e["to_zone"] for _, e in recorder.events("zone_entered")] == ["yard"]
        assert room.state.creatures["aria"].zone == "yard"
        assert room.state.pending == [] and room.state.maneuver is None
        assert room.deadlines == {}
        # Every event the room pushed is in the store, in order and without gaps.
        seqs = [p["seq"] for _, m, p in recorder.pushed if m == "event"]
        assert seqs == list(range(len(h.events) + 1, room.state.seq + 1))

        # Nothing else happens later on.
        count = len(recorder.pushed)
        await settle_at(start + 10 * REACTION_SECONDS)
        assert len(recorder.pushed) == count
        nursery.cancel_scope.cancel()


async def test_a_decision_answered_in_time_cancels_its_timer(
    autojump_clock: trio.testing.MockClock,
) -> None:
    h = engaged()
    room, recorder = make_room(h)
    async with trio.open_nursery() as nursery:
        await nursery.start(room.run)
        start = trio.current_time()
        await submit(room, ALICE, "enter", creature="aria", zones=["yard"])
        (decision,) = room.state.pending
        await settle_at(start + 10)
        job = await submit(room, GM_ACTOR, "decide", decision=decision.id, choice=["decline"])
        assert job.error is None, job.error
        assert room.deadlines == {}
        ((at, resolved),) = recorder.events("decision_resolved")
        assert at == start + 10
        assert resolved["defaulted"] is False
        assert room.state.creatures["aria"].zone == "yard"

        count = len(recorder.pushed)
        seq = room.state.seq
        await settle_at(start + REACTION_SECONDS)
        await settle_at(start + 10 * REACTION_SECONDS)
        assert len(recorder.pushed) == count
        assert room.state.seq == seq
        # The room still works after the deadline that no longer exists.
        job = await submit(room, ALICE, "dash", creature="aria")
        assert job.error is None, job.error
        nursery.cancel_scope.cancel()


async def test_a_room_opened_with_a_pending_decision_times_it_out(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A state that already waits on a decision (a room built from a stored encounter)."""
    h = provoked()
    room, recorder = make_room(h)
    (decision,) = room.state.pending
    async with trio.open_nursery() as nursery:
        await nursery.start(room.run)
        start = trio.current_time()
        await settle_at(start + REACTION_SECONDS - 0.1)
        assert recorder.events("decision_resolved") == []
        await settle_at(start + REACTION_SECONDS)
        ((at, resolved),) = recorder.events("decision_resolved")
        assert at == start + REACTION_SECONDS
        assert (resolved["decision"], resolved["defaulted"]) == (decision.id, True)
        assert room.state.creatures["aria"].zone == "yard"
        nursery.cancel_scope.cancel()
