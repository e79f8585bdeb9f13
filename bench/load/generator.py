"""One load-generator process of the load benchmark (started by ``run.py``, not by hand).

It plays encounters ``--first`` .. ``--first + --count - 1`` against a zonekeep server
(``--mode zonekeep``), the fair baseline (``--mode baseline``, ``baseline.py``: one frame
in per command, which says how many frames of which sizes to send back) or the
per-frame-broadcast variant (``--mode broadcast``, ``baseline_broadcast.py``: the
generator sends every frame itself), over raw ``websockets.trio.client`` connections
(compression off, no client pings: the server pings, the library answers).

In zonekeep mode it also measures, per command type, the mean size of the event
notifications, of the reply and of the command sent (``sizes`` in its report):
``run.py`` hands those to the baseline's generators (``--sizes``) so that the baseline
sends the same number and size of frames as zonekeep did in the same run.

``--drop-every K`` simulates a lost message: every K-th event received is ignored, so
the run must report it (missing deliveries, timeouts) and ``run.py`` must fail.

``run.py`` drives it phase by phase through standard input, one word a line, and
reads one JSON object a line back on standard output:

- ``warmup``: (zonekeep) create one encounter, play a command, end it (so it is not
  restored later): the server's first-use costs stay out of the memory figures.
- ``create``: (zonekeep) for each encounter, a short-lived GM connection creates it
  (bundled "tavern" arena, 2 heroes + 2 goblins), makes 2 player seats and a spectator
  link, runs the setup (surprise, positions, initiative) and closes.
- ``join``: open M connections per encounter (GM, players, spectators; in baseline
  mode each sends its group id) and start reading.
- ``closed SECONDS`` / ``open SECONDS PERIOD``: play for that long, then report.
- ``quit``: exit at once (the connections are not closed one by one).

Every command is timed at the client: from just before the send to the moment the last
of the encounter's M connections received the command's last event (``all``), and to
the moment the sender received the command's first event (``own``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import trio
from websockets.exceptions import ConnectionClosed
from websockets.trio.client import ClientConnection, connect

#: How long one command may take (reply, then delivery to all M) before it counts as
#: timed out, by default (``--command-timeout``).
COMMAND_TIMEOUT = 10.0
#: How long opening and greeting one connection may take.
CONNECT_TIMEOUT = 60.0

_BLADE = {"name": "blade", "kind": "melee", "bonus": 4, "damage": "1d6+2",
          "damage_type": "slashing"}  # fmt: skip
ROSTER: list[dict[str, Any]] = [
    # Initiative bonuses 40 apart: the d20 never ties, so the turn order is fixed. Hit
    # points enough for hours of blows: the fight never ends.
    {"id": "aria", "name": "Aria", "side": "party", "controller": "alice", "dex_mod": 2,
     "speeds": {"walk": 30}, "initiative_bonus": 40, "hp": 99999, "max_hp": 99999, "ac": 16,
     "attacks": [_BLADE]},
    {"id": "brom", "name": "Brom", "side": "party", "controller": "bob",
     "speeds": {"walk": 30}, "initiative_bonus": 20, "hp": 99999, "max_hp": 99999, "ac": 18,
     "attacks": [_BLADE]},
    {"id": "gob1", "name": "Goblin 1", "side": "goblins",
     "speeds": {"walk": 30}, "initiative_bonus": 0, "hp": 99999, "max_hp": 99999, "ac": 15,
     "attacks": [_BLADE]},
    {"id": "gob2", "name": "Goblin 2", "side": "goblins",
     "speeds": {"walk": 30}, "initiative_bonus": -20, "hp": 99999, "max_hp": 99999, "ac": 15,
     "attacks": [_BLADE]},
]  # fmt: skip
POSITIONS = {"aria": "common_room", "brom": "common_room", "gob1": "bar", "gob2": "bar"}
#: Who controls each creature: 0 is the GM's connection, 1 alice's, 2 bob's.
CONTROLLER = {"aria": 1, "brom": 2, "gob1": 0, "gob2": 0}


def _turn(creature: str, *commands: tuple[str, dict[str, Any]]) -> tuple[str, list[Any]]:
    """One scripted turn: ``commands`` (type, params without ``creature``), then end_turn."""
    return creature, [*commands, ("end_turn", {})]


#: Two rounds that repeat for ever, in initiative order. Round one: Aria enters the bar
#: and attacks Goblin 1; both goblins attack her (a melee attack engages). Round two:
#: Aria walks back to the common room, leaving two engaged enemies: each goblin is
#: offered an opportunity attack, which the GM takes (``decide``, sent as soon as the
#: offer shows). Brom, and the goblins in round two, walk 5 feet in their zone.
SCRIPT: list[tuple[str, list[Any]]] = [
    _turn("aria", ("enter", {"zones": ["bar"]}), ("attack", {"target": "gob1"})),
    _turn("brom", ("move", {"feet": 5})),
    _turn("gob1", ("attack", {"target": "aria"})),
    _turn("gob2", ("attack", {"target": "aria"})),
    _turn("aria", ("enter", {"zones": ["common_room"]})),
    _turn("brom", ("move", {"feet": 5})),
    _turn("gob1", ("move", {"feet": 5})),
    _turn("gob2", ("move", {"feet": 5})),
]
#: The GM adds (or removes) a note before every this many turns.
NOTE_EVERY = 4
NOTE_TEXT = "The goblins shout; a tankard rolls under the bar (note {n:04d})."  # ~60 chars
#: Events a command makes, on average, in this script (measured on zonekeep): the
#: baseline sends as many frames for it, so both deliver about the same messages.
FRAMES = {"add_note": 1, "remove_note": 1, "move": 1, "enter": 4, "attack": 3, "decide": 5,
          "end_turn": 2}  # fmt: skip
#: The baseline has no rules to offer opportunity attacks: after Aria's walk back its
#: plan answers two made-up offers, as the GM answers the real ones on zonekeep.
PROVOKED = 2
#: A broadcast-variant frame is padded to about the size of a zonekeep ``moved`` event
#: notification.
BASELINE_PAD = "x" * 150
#: The fair baseline's frame sizes per command type when ``--sizes`` gives none: (mean
#: event notification bytes, reply bytes, command bytes), as measured on zonekeep with this
#: script (run.py passes the sizes measured in the same run instead).
SIZES: dict[str, tuple[int, int, int]] = {
    "add_note": (250, 60, 190), "remove_note": (150, 60, 140), "move": (180, 60, 150),
    "enter": (200, 60, 160), "attack": (260, 60, 160), "decide": (230, 60, 170),
    "end_turn": (170, 60, 130),
}  # fmt: skip


def now() -> float:
    return time.perf_counter()


def command_body(cmd: Command, size: int) -> str:
    """The rest of a baseline command frame: the command as JSON (``type``, ``params``),
    padded with ``"pad"`` to about ``size`` characters. The fair baseline reads none of
    it; the same-work server (``samework.py``) parses it, as zonekeep parses a request."""
    bare = json.dumps({"type": cmd.type, "params": cmd.params, "pad": ""})
    return bare[:-2] + "x" * max(0, size - len(bare)) + '"}'


class Command:
    """One planned command: who sends it, what, and how many events it makes."""

    __slots__ = ("frames", "params", "sender", "type")

    def __init__(self, sender: int, type: str, params: dict[str, Any], frames: int) -> None:
        self.sender = sender
        self.type = type
        self.params = params
        self.frames = frames


class Plan:
    """The endless command loop of one encounter: the turns of :data:`SCRIPT`, an
    occasional GM note before a turn, and, whenever an opportunity attack is on offer,
    the GM taking it before anything else."""

    def __init__(self, clients: int, baseline: bool = False) -> None:
        self.clients = clients
        self.baseline = baseline
        self.turn = 0  # index into SCRIPT, counting on for ever
        self.step = -1  # -1: the note (every NOTE_EVERY turns), then the turn's commands
        self.notes = 0
        self.added = 0  # notes added; even/odd alternates add and remove

    def _sender(self, controller: int) -> int:
        return controller if controller < self.clients else 0  # a missing player: the GM

    def resync(self, creature: str) -> None:
        """A command was refused: go to the end of the turn of ``creature`` (whose turn
        the server says it is), so the loop always moves on."""
        for ahead in range(len(SCRIPT)):
            if SCRIPT[(self.turn + ahead) % len(SCRIPT)][0] == creature:
                self.turn += ahead
                self.step = len(SCRIPT[self.turn % len(SCRIPT)][1]) - 1
                return

    def next(self, offers: list[str]) -> Command:
        """The next command; ``offers`` are the decisions open and not yet answered
        (oldest first): the one answered now is taken off."""
        if offers:
            decide = {"decision": offers.pop(0), "choice": ["attack"]}
            return Command(0, "decide", decide, frames=FRAMES["decide"])
        creature, commands = SCRIPT[self.turn % len(SCRIPT)]
        if self.step == -1:
            self.step = 0
            if self.turn % NOTE_EVERY == 0:
                self.notes += 1
                if self.notes % 2:
                    self.added += 1
                    text = NOTE_TEXT.format(n=self.added)
                    return Command(0, "add_note", {"text": text}, frames=1)
                # at most one note exists, and the engine numbers notes n1, n2 ... by count
                return Command(0, "remove_note", {"note": "n1"}, frames=1)
        kind, params = commands[self.step]
        if self.baseline and params.get("zones") == ["common_room"]:
            offers += [f"made-up {n}" for n in range(PROVOKED)]
        sender = self._sender(CONTROLLER[creature])
        frames = FRAMES[kind]
        self.step += 1
        if self.step == len(commands):
            self.step = -1
            self.turn += 1
            # turn_ended + turn_started, and round_ended + round_started at a round's end
            frames = 4 if self.turn % 4 == 0 else 2
        return Command(sender, kind, {"creature": creature, **params}, frames=frames)


class Record:
    """When each of the M connections received one seq."""

    __slots__ = ("bytes", "count", "times", "waiter")

    def __init__(self, clients: int) -> None:
        self.count = 0
        self.bytes = 0  # the size of the first connection's copy
        self.times: list[float] = [0.0] * clients
        self.waiter: trio.Event | None = None


class Refused(RuntimeError):
    """An error reply to a setup request; ``error`` is its ``error`` object."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error}")
        self.error = error


class Stats:
    """What one phase measured (summed over this generator's encounters)."""

    def __init__(self) -> None:
        self.commands = 0
        self.received = 0
        self.gaps = 0
        self.duplicates = 0
        self.timeouts = 0
        self.missing = 0
        self.errors: Counter[str] = Counter()
        self.error_samples: dict[str, str] = {}
        self.other: Counter[str] = Counter()
        self.closed: Counter[str] = Counter()
        self.lat_all: list[float] = []
        self.lat_own: list[float] = []
        self.lag: list[float] = []  # open loop: how late the generator sent (its own lag)
        self.sent = 0
        #: Commands sent by type, and (zonekeep) the events they made.
        self.kinds: Counter[str] = Counter()
        self.kind_events: Counter[str] = Counter()
        #: (zonekeep) bytes of the events (first connection's copy), of the replies and
        #: of the commands sent, and replies counted, per command type.
        self.kind_event_bytes: Counter[str] = Counter()
        self.kind_reply_bytes: Counter[str] = Counter()
        self.kind_replies: Counter[str] = Counter()
        self.kind_sent_bytes: Counter[str] = Counter()
        #: Events ignored on purpose (--drop-every).
        self.simulated_drops = 0
        #: Bytes of every event frame received, by every connection.
        self.received_bytes = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "commands": self.commands,
            "sent": self.sent,
            "received": self.received,
            "gaps": self.gaps,
            "duplicates": self.duplicates,
            "timeouts": self.timeouts,
            "missing": self.missing,
            "errors": dict(self.errors),
            "error_samples": self.error_samples,
            "other_messages": dict(self.other),
            "closed_connections": dict(self.closed),
            "lat_all": [round(x, 6) for x in self.lat_all],
            "lat_own": [round(x, 6) for x in self.lat_own],
            "lag": [round(x, 6) for x in self.lag],
            "commands_by_type": dict(self.kinds),
            "events_by_type": dict(self.kind_events),
            "sizes": {
                kind: [self.kind_event_bytes[kind], self.kind_events[kind],
                       self.kind_reply_bytes[kind], self.kind_replies[kind],
                       self.kind_sent_bytes[kind]]
                for kind in self.kind_replies
            },
            "simulated_drops": self.simulated_drops,
            "received_bytes": self.received_bytes,
        }  # fmt: skip


class Conn:
    """One websocket connection of an encounter."""

    def __init__(self, enc: Encounter, index: int, ws: ClientConnection) -> None:
        self.enc = enc
        self.index = index
        self.ws = ws
        self.pending: dict[int, list[Any]] = {}  # request id -> [trio.Event, reply]


class Encounter:
    """One encounter (or baseline group): its connections, plan and per-seq records."""

    def __init__(self, gen: Generator, index: int) -> None:
        self.gen = gen
        self.index = index
        self.id = f"g{index}"
        self.tokens: list[str] = []
        self.conns: list[Conn] = []
        self.last: list[int] = []
        self.records: dict[int, Record] = {}
        self.plan = Plan(gen.clients, baseline=gen.mode != "zonekeep")
        self.next_seq = 1  # baseline: the seq the generator gives the next frame
        self.active: str | None = None
        #: Decisions open now (opportunity attacks on offer), oldest first.
        self.offers: list[str] = []

    def record(self, seq: int) -> Record:
        rec = self.records.get(seq)
        if rec is None:
            rec = self.records[seq] = Record(self.gen.clients)
        return rec

    def on_event(self, ci: int, seq: int, t: float, size: int = 0) -> None:
        stats = self.gen.stats
        drop = self.gen.drop_every
        if drop and (stats.received + stats.simulated_drops + 1) % drop == 0:
            stats.simulated_drops += 1
            return
        stats.received += 1
        last = self.last[ci]
        if seq != last + 1:
            if seq <= last:
                stats.duplicates += 1
                return
            stats.gaps += seq - last - 1
        self.last[ci] = seq
        rec = self.record(seq)
        rec.times[ci] = t
        if ci == 0:
            rec.bytes = size
        rec.count += 1
        if rec.count == self.gen.clients and rec.waiter is not None:
            rec.waiter.set()


class Generator:
    def __init__(self, args: argparse.Namespace) -> None:
        self.mode: str = args.mode
        self.url: str = args.url
        #: Several nodes (run.py --nodes): encounter i is created at node i % K, and its
        #: connection c joins at node (i + c) % K, following ``moved`` to the owner.
        self.urls: list[str] = args.urls.split(",") if args.urls else [args.url]
        self.moved = 0
        self.clients: int = args.clients
        self.total: int = args.total
        self.encounters = [Encounter(self, i) for i in range(args.first, args.first + args.count)]
        self.stats = Stats()
        self.ids = itertools.count(1)
        self.nursery: trio.Nursery | None = None
        self.command_timeout: float = args.command_timeout
        self.drop_every: int = args.drop_every
        #: (baseline) per command type: event frame bytes, reply bytes, command bytes.
        self.sizes: dict[str, Sequence[float]] = dict(SIZES)
        if args.sizes:
            self.sizes.update(json.loads(args.sizes))
        #: (baseline) events made so far per command type, fractional: with zonekeep's
        #: mean events per command, the baseline sends as many frames in all.
        self.made: dict[str, float] = {}

    # -- plumbing ----------------------------------------------------------------------------

    async def reader(self, conn: Conn) -> None:
        enc = conn.enc
        ci = conn.index
        baseline = self.mode != "zonekeep"
        try:
            async for raw in conn.ws:
                t = now()
                msg = json.loads(raw)
                if baseline:
                    if "s" in msg:
                        self.stats.received_bytes += len(raw)
                        enc.on_event(ci, msg["s"], t)
                    # else the fair baseline's reply frame: nothing to wait for
                elif "id" in msg:
                    slot = conn.pending.pop(msg["id"], None)
                    if slot is not None:
                        msg["_bytes"] = len(raw)
                        slot[1] = msg
                        slot[0].set()
                elif msg.get("method") == "event":
                    self.stats.received_bytes += len(raw)
                    params = msg["params"]
                    enc.on_event(ci, params["seq"], t, len(raw))
                    if ci == 0:
                        event = params["event"]
                        kind = event.get("type")
                        if kind == "turn_started":
                            enc.active = event["creature"]
                        elif kind == "decision_opened":
                            enc.offers.append(event["decision"]["id"])
                        elif kind == "decision_resolved" and event["decision"] in enc.offers:
                            enc.offers.remove(event["decision"])  # answered by the deadline
                else:
                    self.stats.other[str(msg.get("method"))] += 1
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            self.stats.closed[f"{rcvd.code} {rcvd.reason}" if rcvd else "no close frame"] += 1

    async def oneshot(self, ws: ClientConnection, method: str, **params: Any) -> dict[str, Any]:
        """A request on a connection without a reader (setup): skip notifications."""
        rid = next(self.ids)
        await ws.send(json.dumps({"id": rid, "method": method, "params": params}))
        while True:
            msg = json.loads(await ws.recv())
            if msg.get("id") == rid:
                if "error" in msg:
                    raise Refused(method, msg["error"])
                result: dict[str, Any] = msg["result"]
                return result

    async def hello(self, ws: ClientConnection) -> None:
        await self.oneshot(
            ws, "hello", protocol="1.0", client={"name": "zonekeep-load", "version": "0.1"}
        )

    # -- phases ------------------------------------------------------------------------------

    async def warmup(self) -> dict[str, Any]:
        async with connect(self.url, compression=None, ping_interval=None) as ws:
            await self.hello(ws)
            made = await self.oneshot(ws, "create_encounter", name="warm-up", arena="tavern",
                                      creatures=ROSTER)  # fmt: skip
            eid = made["encounter"]
            await self.oneshot(ws, "create_seat", encounter=eid, player="alice")
            await self.oneshot(ws, "command", encounter=eid, type="add_note",
                               params={"text": NOTE_TEXT.format(n=0)})  # fmt: skip
            await self.oneshot(ws, "command", encounter=eid, type="end_encounter",
                               params={"force": True})  # fmt: skip
        return {"warmup": eid}

    async def create_one(self, enc: Encounter, limit: trio.Semaphore) -> None:
        async with limit:
            with trio.fail_after(CONNECT_TIMEOUT):
                url = self.urls[enc.index % len(self.urls)]
                async with connect(url, compression=None, ping_interval=None) as ws:
                    await self.hello(ws)
                    made = await self.oneshot(ws, "create_encounter", name=f"load {enc.index}",
                                              arena="tavern", creatures=ROSTER)  # fmt: skip
                    enc.id = made["encounter"]
                    e = enc.id
                    alice = await self.oneshot(ws, "create_seat", encounter=e, player="alice")
                    bob = await self.oneshot(ws, "create_seat", encounter=e, player="bob")
                    spec = await self.oneshot(ws, "create_spectator_link", encounter=e)
                    enc.tokens = [made["gm_token"], alice["token"], bob["token"], spec["token"]]
                    for kind, params in (
                        ("set_surprise", {"surprised": []}),
                        ("place", {"positions": POSITIONS}),
                        ("roll_initiative", {}),
                    ):
                        await self.oneshot(ws, "command", encounter=e, type=kind, params=params)

    async def create(self) -> dict[str, Any]:
        t = now()
        if self.mode == "zonekeep":
            limit = trio.Semaphore(8)
            async with trio.open_nursery() as nursery:
                for enc in self.encounters:
                    nursery.start_soon(self.create_one, enc, limit)
        return {"created": len(self.encounters), "seconds": now() - t}

    async def connection(
        self, enc: Encounter, ci: int, *, task_status: trio.TaskStatus[None]
    ) -> None:
        """Open, greet and join one connection, report it started, then read until closed
        (``connect`` holds a nursery of its own, so each connection lives in its own task)."""
        url = self.urls[(enc.index + ci) % len(self.urls)] if self.mode == "zonekeep" else self.url
        with trio.fail_after(CONNECT_TIMEOUT) as scope:
            for _ in range(5):  # at most a few "moved" in a row
                async with connect(url, compression=None, ping_interval=None,
                                   open_timeout=CONNECT_TIMEOUT, max_size=2**22,
                                   max_queue=None) as ws:  # fmt: skip
                    conn = Conn(enc, ci, ws)
                    if self.mode != "zonekeep":
                        await ws.send(json.dumps({"group": enc.id}))
                        seq = 0
                    else:
                        await self.hello(ws)
                        token = enc.tokens[min(ci, 3)]
                        try:
                            joined = await self.oneshot(ws, "join", encounter=enc.id, token=token)
                        except Refused as exc:
                            if exc.error.get("name") != "moved":
                                raise
                            self.moved += 1  # another node serves it: go there
                            url = exc.error["url"]
                            continue
                        seq = joined["seq"]
                    enc.conns[ci] = conn
                    enc.last[ci] = seq
                    scope.deadline = math.inf
                    task_status.started()
                    await self.reader(conn)
                    return
            raise RuntimeError(f"join {enc.id}: moved too many times")

    async def join_one(self, enc: Encounter, limit: trio.Semaphore) -> None:
        assert self.nursery is not None
        enc.conns = [None] * self.clients  # type: ignore[list-item]
        enc.last = [0] * self.clients
        for ci in range(self.clients):
            async with limit:
                await self.nursery.start(self.connection, enc, ci)

    async def join(self) -> dict[str, Any]:
        t = now()
        limit = trio.Semaphore(16)
        async with trio.open_nursery() as nursery:
            for enc in self.encounters:
                nursery.start_soon(self.join_one, enc, limit)
        if self.mode != "zonekeep":
            await trio.sleep(0.5)  # let the server register every group id before playing
        return {
            "connections": sum(len(e.conns) for e in self.encounters),
            "seconds": now() - t,
            "moved": self.moved,
        }

    async def issue(self, enc: Encounter, cmd: Command) -> None:
        """Send one command and wait (bounded) until all M connections have its events."""
        stats = self.stats
        conn = enc.conns[cmd.sender]
        deadline = trio.current_time() + self.command_timeout
        stats.sent += 1
        stats.kinds[cmd.type] += 1
        if self.mode == "baseline":
            # One frame in: what zonekeep would send back for this command, then padding
            # to the size of the zonekeep command.
            size = self.sizes[cmd.type]
            event_size, reply_size, command_size = (int(x) for x in size[:3])
            frames = cmd.frames
            if len(size) > 3:  # zonekeep's mean events per command of this type
                done = self.made.get(cmd.type, 0.0)
                self.made[cmd.type] = done + size[3]
                frames = max(1, math.floor(done + size[3]) - math.floor(done))
            first = enc.next_seq
            last = first + frames - 1
            enc.next_seq = last + 1
            rec = enc.record(last)
            head = f"{first} {reply_size}" + f" {event_size}" * frames + "\n"
            text = head + command_body(cmd, command_size - len(head))
            t0 = now()
            await conn.ws.send(text)
        elif self.mode == "broadcast":
            first = enc.next_seq
            last = first + cmd.frames - 1
            enc.next_seq = last + 1
            rec = enc.record(last)
            t0 = now()
            for seq in range(first, last + 1):
                await conn.ws.send(
                    json.dumps({"s": seq, "type": cmd.type, "p": cmd.params, "pad": BASELINE_PAD})
                )
        else:
            rid = next(self.ids)
            slot: list[Any] = [trio.Event(), None]
            conn.pending[rid] = slot
            text = json.dumps(
                {"id": rid, "method": "command",
                 "params": {"encounter": enc.id, "type": cmd.type, "params": cmd.params}}
            )  # fmt: skip
            t0 = now()
            await conn.ws.send(text)
            with trio.move_on_at(deadline):
                await slot[0].wait()
            reply = slot[1]
            if reply is None:
                conn.pending.pop(rid, None)
                stats.timeouts += 1
                return
            if "error" in reply:
                stats.errors[reply["error"]["name"]] += 1
                stats.error_samples.setdefault(reply["error"]["name"], reply["error"]["message"])
                if enc.active is not None:
                    enc.plan.resync(enc.active)
                return
            first, last = reply["result"]["first_seq"], reply["result"]["last_seq"]
            if last < first:
                stats.errors["no_event"] += 1
                return
            stats.kind_events[cmd.type] += last - first + 1
            stats.kind_replies[cmd.type] += 1
            stats.kind_reply_bytes[cmd.type] += reply["_bytes"]
            stats.kind_sent_bytes[cmd.type] += len(text)
            rec = enc.record(last)
        if rec.count < self.clients:
            rec.waiter = trio.Event()
            with trio.move_on_at(deadline):
                await rec.waiter.wait()
        if rec.count < self.clients:
            stats.timeouts += 1
            stats.missing += self.clients - rec.count
        else:
            own = enc.record(first).times[cmd.sender]
            if self.mode == "zonekeep":
                stats.kind_event_bytes[cmd.type] += sum(
                    enc.record(seq).bytes for seq in range(first, last + 1)
                )
            stats.commands += 1
            stats.lat_all.append(max(rec.times) - t0)
            stats.lat_own.append(own - t0 if own else float("nan"))
        for seq in range(first, last + 1):
            enc.records.pop(seq, None)

    async def closed_loop(self, enc: Encounter, until: float) -> None:
        while trio.current_time() < until:
            try:
                await self.issue(enc, enc.plan.next(enc.offers))
            except ConnectionClosed:
                self.stats.errors["connection_closed"] += 1
                return

    async def open_loop(self, enc: Encounter, start: float, until: float, period: float) -> None:
        offset = period * (enc.index % self.total) / self.total
        async with trio.open_nursery() as nursery:
            k = 0
            while True:
                at = start + offset + k * period
                if at >= until:
                    break
                await trio.sleep_until(at)
                self.stats.lag.append(trio.current_time() - at)
                nursery.start_soon(self._issue_safely, enc, enc.plan.next(enc.offers))
                k += 1

    async def _issue_safely(self, enc: Encounter, cmd: Command) -> None:
        try:
            await self.issue(enc, cmd)
        except ConnectionClosed:
            self.stats.errors["connection_closed"] += 1

    async def play(self, shape: str, seconds: float, period: float) -> dict[str, Any]:
        self.stats = Stats()
        start = trio.current_time() + 0.05
        until = start + seconds
        t0 = now()
        with trio.move_on_at(until + self.command_timeout + 5):
            async with trio.open_nursery() as nursery:
                for enc in self.encounters:
                    if enc.conns:
                        if shape == "closed":
                            nursery.start_soon(self.closed_loop, enc, until)
                        else:
                            nursery.start_soon(self.open_loop, enc, start, until, period)
        out = self.stats.as_dict()
        out["seconds"] = now() - t0
        return out


async def control(gen: Generator) -> None:
    stdin = trio.wrap_file(sys.stdin)
    async with trio.open_nursery() as nursery:
        gen.nursery = nursery
        while True:
            line = await stdin.readline()
            words = line.split()
            if not words or words[0] == "quit":
                print(json.dumps({"bye": True}), flush=True)
                os._exit(0)
            try:
                if words[0] == "warmup":
                    result = await gen.warmup()
                elif words[0] == "create":
                    result = await gen.create()
                elif words[0] == "join":
                    result = await gen.join()
                elif words[0] in ("closed", "open"):
                    period = float(words[2]) if len(words) > 2 else 2.0
                    result = await gen.play(words[0], float(words[1]), period)
                else:
                    result = {"error": f"unknown phase {words[0]!r}"}
            except Exception as exc:  # report it; the orchestrator decides
                result = {"error": f"{words[0]}: {exc!r}"}
            print(json.dumps(result), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one load-generator process (see run.py)")
    parser.add_argument("--mode", choices=("zonekeep", "baseline", "broadcast"), required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument(
        "--urls", default="", help="several nodes: every node's URL, comma-separated (run.py)"
    )
    parser.add_argument("--first", type=int, required=True, help="first encounter index")
    parser.add_argument("--count", type=int, required=True, help="encounters of this process")
    parser.add_argument("--total", type=int, required=True, help="encounters of all processes")
    parser.add_argument("--clients", type=int, default=6, help="connections per encounter (M)")
    parser.add_argument(
        "--command-timeout",
        type=float,
        default=COMMAND_TIMEOUT,
        help="seconds before a command counts as timed out",
    )
    parser.add_argument(
        "--sizes",
        default="",
        help="(baseline) JSON: command type -> [event frame bytes, reply bytes, command bytes]",
    )
    parser.add_argument("--drop-every", type=int, default=0, metavar="K",
                        help="simulate a loss: ignore every K-th event received")  # fmt: skip
    args = parser.parse_args(argv)
    gen = Generator(args)
    trio.run(control, gen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
