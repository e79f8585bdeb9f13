"""Property (issue 14): in a random game with random hides, reveals and rewinds, no message
to a player or spectator ever names a creature hidden from it, in any field.

In-process, through the room (server/_room.py) and its visibility code: every member is a
recorder; a random list of GM and player commands, rewinds and rejoins is played; then
every recorded message is checked against the state WHEN ITS CONTENT HAPPENED (an event
against the state right after it, anything else against the state when it was sent).
docs/rules.md, "Rulings": nothing hidden when it happened is ever sent to a viewer in clear later,
and the player who controls a hidden creature still sees it.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zonekeep.protocol import ProtocolError, wire
from zonekeep.sdk import Actor, Attack, Command, Creature, EncounterState, RandomEntropy
from zonekeep.sdk.host import replay_steps
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server._fanout import Member, Role
from zonekeep.server._methods import _detail_for
from zonekeep.server._room import Room, view_of
from zonekeep.server._store import InMemoryStore
from zonekeep.server._visibility import Viewer, enemy_ids, hidden_ids, hp_word
from zonekeep.server._wire import notification_text

OPS = (
    "hide",
    "reveal",
    "hp",
    "rewind",
    "end_turn",
    "attack",
    "dash",
    "enter",
    "force",
    "note",
    "decide",
    "timeout",
    "join",
    "snapshot",
)


class Recorder:
    """A member's subscriber: keeps each message with the room's seq when it was sent."""

    def __init__(self) -> None:
        self.room: Room | None = None
        self.got: list[tuple[int, dict[str, Any]]] = []

    def push_text(self, text: str) -> None:
        assert self.room is not None
        self.got.append((self.room.state.seq, json.loads(text)))

    def close(self, code: int, reason: str) -> None:
        pass


def _creature(cid: str, name: str, side: str, controller: str, hidden: bool) -> Creature:
    return Creature(
        cid,
        name,
        side,
        controller=controller,
        hp=30,
        max_hp=30,
        ac=10,
        hidden=hidden,
        attacks=[Attack("blade", "melee", 4, "1d6+2", "slashing")],
    )


ROSTER = (
    ("aria", "Aria", "party", "alice", False),
    ("bram", "Bram", "party", "bob", False),
    ("gob", "Goblin", "goblins", "gm", False),
    ("ogre", "Lurking Ogre", "goblins", "gm", True),
    ("imp", "Shadow Imp", "party", "alice", True),
)
IDS = [r[0] for r in ROSTER]
NAMES = {r[0]: r[1] for r in ROSTER}


def _named(value: Any, ids: set[str], names: set[str]) -> bool:
    if isinstance(value, str):
        return value in ids or any(n in value for n in names)
    if isinstance(value, dict):
        return any(_named(k, ids, names) or _named(v, ids, names) for k, v in value.items())
    if isinstance(value, list):
        return any(_named(v, ids, names) for v in value)
    return False


def _forbidden(state: EncounterState, view: Viewer) -> tuple[set[str], set[str]]:
    ids = hidden_ids(state, view)
    return ids, {NAMES[i] for i in ids}


async def play(ops: list[tuple[str, int, int]], seed: int) -> dict[str, int]:
    h = EncounterHarness(
        [_creature(*r) for r in ROSTER], zones=["hall", "yard"], encounter_id="prop"
    )
    store = InMemoryStore()
    store.append_now("prop", 1, h.events)
    room = Room("prop", h.engine, store, h.state, entropy=RandomEntropy(seed))
    members: dict[str, Member] = {}
    recorders: dict[str, Recorder] = {}
    seats: tuple[tuple[str, Role, str | None], ...] = (
        ("gm", "gm", None),
        ("alice", "player", "alice"),
        ("bob", "player", "bob"),
        ("spectator", "spectator", None),
    )
    for key, role, player in seats:
        recorders[key] = Recorder()
        recorders[key].room = room
        members[key] = Member(recorders[key], role, player)
    room.members.extend(members.values())
    #: (member key, seq of the content, message) for what the tests read outside pushes.
    read: list[tuple[str, int, Any]] = []

    def member_for(controller: str) -> Member:
        return members[controller]

    async def send(kind: str, member: Member, **params: Any) -> None:
        try:
            await room.apply(Command(kind, params, member.actor), member)
        except ProtocolError as exc:
            for key, m in members.items():
                if m is member:
                    read.append((key, room.state.seq, exc.message))

    gm = members["gm"]
    await send("set_surprise", gm, surprised=[])
    await send("place", gm, positions=dict.fromkeys(IDS, "hall"))
    await send("roll_initiative", gm)
    for op, a, b in ops:
        s = room.state
        target = IDS[a % len(IDS)]
        other = IDS[b % len(IDS)]
        if op in ("hide", "reveal"):
            await send("override", gm, creature=target, field="hidden", value=op == "hide")
        elif op == "hp":
            await send("override", gm, creature=target, field="hp", value=b % 31)
        elif op == "rewind" and s.seq > 1:
            with contextlib.suppress(ProtocolError):
                await room.rewind(1 + a % (s.seq - 1), "gm")
        elif op == "end_turn" and s.active is not None:
            await send("end_turn", gm, creature=s.active)
        elif op in ("attack", "dash", "enter") and s.active is not None:
            actor = member_for(s.creatures[s.active].controller)
            if op == "attack":
                await send("attack", actor, creature=s.active, target=other)
            elif op == "dash":
                await send("dash", actor, creature=s.active)
            else:
                zone = "yard" if s.creatures[s.active].zone == "hall" else "hall"
                await send("enter", actor, creature=s.active, zones=[zone])
        elif op == "force":
            forcer = IDS[(a + b) % len(IDS)]
            await send("force", gm, forcer=forcer, creature=target, into=other)
        elif op == "note":
            await send("add_note", gm, text=f"{NAMES[target]} is near.", hidden=b % 2 == 0)
        elif op in ("decide", "timeout") and s.pending:
            decision = s.pending[a % len(s.pending)]
            if op == "timeout":
                await room.apply(Command("decision_timeout", {"decision": decision.id}))
            else:
                actor = member_for(decision.controller)
                await send("decide", actor, decision=decision.id, choice=list(decision.default))
        elif op in ("join", "snapshot"):
            key = ("alice", "bob", "spectator")[a % 3]
            member = members[key]
            if op == "snapshot":
                read.append((key, s.seq, room.snapshot(member)))
                for prompt in room.prompts_for(member, 0.0):
                    read.append((key, s.seq, json.loads(notification_text(prompt))["params"]))
                # The `actions` details of every creature it sees, as the server sends them.
                for cid in room.snapshot(member)["creatures"]:
                    found = room.engine.action_details(room.state, cid, member.actor)
                    details = [wire.unstructure(_detail_for(d, room, member)) for d in found]
                    read.append((key, s.seq, details))
            else:
                events = await room.events_since(member, b % (s.seq + 1))
                assert events is not None
                read.extend((key, e["seq"], e["event"]) for e in events)

    # At the end, every viewer resumes from the start and asks for a snapshot.
    for key in ("alice", "bob", "spectator"):
        events = await room.events_since(members[key], 0)
        assert events is not None
        read.extend((key, e["seq"], e["event"]) for e in events)
        read.append((key, room.state.seq, room.snapshot(members[key])))
    # The state after every seq, from the stored log.
    log = await store.read("prop")
    states = {0: EncounterState()}
    for (seq, _), state in zip(log, replay_steps(e for _, e in log), strict=True):
        states[seq] = state.copy()
    assert states[room.state.seq].creatures.keys() == room.state.creatures.keys()
    checked = 0
    counted: dict[str, int] = {}
    for key in ("alice", "bob", "spectator"):
        member = members[key]
        view = view_of(member)
        recorder = recorders[key]
        seen: list[tuple[int, Any]] = []
        for at, message in recorder.got:
            params = message["params"]
            if message["method"] == "event":
                seen.append((params["seq"], params["event"]))
            else:
                seen.append((at, params))
        seen.extend((seq, item) for k, seq, item in read if k == key)
        for seq, item in seen:
            ids, names = _forbidden(states[seq], view)
            assert not _named(item, ids, names), (key, seq, item)
            checked += 1
            counted[key] = counted.get(key, 0) + 1
    assert checked > 0
    return counted


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(OPS), st.integers(0, 50), st.integers(0, 50)),
        min_size=5,
        max_size=40,
    ),
    seed=st.integers(0, 1000),
)
def test_no_message_names_a_creature_hidden_from_its_receiver(
    ops: list[tuple[str, int, int]], seed: int
) -> None:
    trio.run(play, ops, seed)


def test_a_player_sees_its_own_hidden_creature() -> None:
    # Sanity for the property above: Alice's view keeps the (hidden) imp she controls.
    h = EncounterHarness([_creature(*r) for r in ROSTER], zones=["hall"])
    alice = view_of(Member(Recorder(), "player", "alice"))
    bob = view_of(Member(Recorder(), "player", "bob"))
    assert hidden_ids(h.state, alice) == {"ogre"}
    assert hidden_ids(h.state, bob) == {"ogre", "imp"}
    assert Actor("player", "alice") == Member(Recorder(), "player", "alice").actor


def test_whose_hit_points_are_a_word() -> None:
    # docs/rules.md, "Rulings" (enemy hit points): one's own and allies' numbers in full, enemies' a word.
    h = EncounterHarness([_creature(*r) for r in ROSTER], zones=["hall"])
    alice = Viewer(player="alice")
    nobody = Viewer(player="carol")  # a player with no creature sees as a spectator does
    assert enemy_ids(h.state, alice) == {"gob", "ogre"}
    assert enemy_ids(h.state, nobody) == enemy_ids(h.state, Viewer()) == {"gob", "ogre"}
    assert enemy_ids(h.state, Viewer(full=True)) == set()
    assert [hp_word(hp, 30) for hp in (30, 16, 15, 1, 0, -3)] == [
        "unhurt",
        "hurt",
        "bloodied",
        "bloodied",
        "down",
        "down",
    ]


def test_an_enemys_temporary_hit_points_and_their_roll_are_hidden() -> None:
    """``temp_hp_changed``: an enemy's amount and the roll it came from (which would tell
    the amount) are null for a player and a spectator; one's own are shown in full."""
    from zonekeep.sdk import RollRecord, TempHpChanged
    from zonekeep.sdk.host import event_to_dict
    from zonekeep.server._visibility import event_for

    h = EncounterHarness([_creature(*r) for r in ROSTER], zones=["hall"])
    roll = RollRecord("1d4", (3,), (3,), 4, 7)
    for cid in ("gob", "aria"):
        event = event_to_dict(TempHpChanged(cid, 7, "False Life", roll))
        seen = event_for(event, h.state, Viewer(player="alice"))
        if cid in enemy_ids(h.state, Viewer(player="alice")):
            assert (seen["temp_hp"], seen["roll"]) == (None, None)
        else:
            assert (seen["temp_hp"], seen["roll"]["total"]) == (7, 7)
        assert event_for(event, h.state, Viewer(full=True)) == event
