"""Benchmark the rules engine, the plugin hooks and the broadcast path, with no sockets.

Run from the repository root::

    python bench/engine_bench.py                     # defaults, about 20 seconds
    python bench/engine_bench.py --json engine-bench.json
    python bench/engine_bench.py --commands 20000 --creatures 8 --seed 7
    python bench/engine_bench.py --mix heavy --code /tmp/zk-53931c9   # another checkout's engine

Figures, not a test: nothing passes or fails. ``--code DIR`` runs the engine, SDK and
server code of another checkout (its ``sdk/``, ``server/``, ``protocol/`` and
``plugins/``, through a ``PYTHONPATH`` of links) with this script, so two versions are
compared on the same loop. Every run prints the machine's load average before and
after the loop, and commands per CPU-second beside commands per second.

1. The loop. Encounters on the tavern arena (``examples/arenas/tavern.json``) with
   ``--creatures`` creatures (half party, half foes, spread over the common room and
   the bar) are played through ``Engine.handle`` with a seeded ``RandomEntropy``. On
   each turn the active creature moves 5 ft, attacks an enemy in its zone (if any),
   the GM adds a note every third turn, and the turn ends. Pending decisions get
   ``decision_timeout``; an ended encounter is replaced by a fresh one. Every command,
   accepted or refused, counts. ``--mix heavy`` is the mix heavy in areas of effect and
   opportunity attacks: on every other turn a creature that has enemies in its zone
   attacks them (which engages them); on the others it throws an area effect on its zone
   (a Dex save, 2d6 fire, everyone else there caught) and then walks to the other zone,
   leaving engaged enemies, who are offered opportunity attacks, which they take
   (``decide``).
2. Micro timings on a state taken mid-fight: ``state.copy()``, one ``Engine.handle``
   of ``end_turn``, ``event_to_dict`` + ``json.dumps`` of the events the loop made,
   ``snapshot_for`` (GM and player views).
3. Broadcast: ``Room._broadcast`` of one command's events (an attack: 3 to 5 events)
   to ``--members`` members (one GM, players, one spectator) whose sessions serialize
   every message exactly as the server does (``_wire``); without and with a hidden creature.

Each micro timing is the best of ``--repeat`` runs of enough calls to last ~0.2 s.
"""

# ruff: noqa: E402 (the --code bootstrap must run before zonekeep is imported)
from __future__ import annotations

import os
import sys


def _run_other_code() -> None:
    """``--code DIR``: run this script again with ``DIR``'s packages first on the path."""
    if "--code" not in sys.argv or os.environ.get("ZONEKEEP_BENCH_CODE"):
        return
    import tempfile
    from pathlib import Path

    at = sys.argv.index("--code")
    code = Path(sys.argv[at + 1]).resolve()
    argv = sys.argv[:at] + sys.argv[at + 2 :]
    lib = Path(tempfile.mkdtemp(prefix="zonekeep-engine-code-"))
    package = lib / "zonekeep"
    package.mkdir()
    for name in ("server", "sdk", "protocol", "plugins"):
        (package / name).symlink_to(code / name, target_is_directory=True)
    extra = os.environ.get("PYTHONPATH")
    env = {**os.environ, "ZONEKEEP_BENCH_CODE": str(code),
           "PYTHONPATH": str(lib) + (os.pathsep + extra if extra else "")}  # fmt: skip
    os.execve(sys.executable, [sys.executable, *argv], env)


if __name__ == "__main__":
    _run_other_code()

import argparse
import copy
import json
import platform
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import trio
from attr._make import _frozen_setattrs

from zonekeep.sdk import (
    GM_ACTOR,
    Actor,
    Attack,
    Command,
    Creature,
    EncounterState,
    Event,
    RandomEntropy,
    Refusal,
    load_arena,
    movement_left,
)

try:
    from zonekeep.sdk.host import event_to_dict, state_to_dict
except ImportError:  # a checkout from before zonekeep.sdk.host (--code)
    from zonekeep.sdk import event_to_dict, state_to_dict  # type: ignore[attr-defined,no-redef]
try:
    from zonekeep.sdk.engine import Engine
except ImportError:  # a checkout from before the engine moved to the SDK (--code)
    from zonekeep.server._engine import Engine  # type: ignore[import-not-found,no-redef]
from zonekeep.server._room import Member, Room
from zonekeep.server._store import InMemoryStore
from zonekeep.server._visibility import snapshot_for

ROOT = Path(__file__).resolve().parent.parent
#: The arena of the checkout whose engine runs (``--code DIR``'s own: an older engine
#: cannot read fields a newer arena file has, such as assets' ``data``).
TAVERN = Path(os.environ.get("ZONEKEEP_BENCH_CODE", ROOT)) / "examples" / "arenas" / "tavern.json"

# -- the encounter ------------------------------------------------------------------------------


def roster(n: int, *, hidden: str | None = None) -> list[Creature]:
    """``n`` fighters, alternating party and foes; PCs belong to ``player-<id>``."""
    found = []
    for i in range(n):
        party = i % 2 == 0
        cid = f"{'hero' if party else 'foe'}{i // 2 + 1}"
        found.append(
            Creature(
                cid,
                cid.capitalize(),
                "party" if party else "foes",
                controller=f"player-{cid}" if party else "gm",
                hp=30,
                max_hp=30,
                ac=13,
                dex_mod=i % 3,
                attacks=[Attack("blade", "melee", 5, "1d8+3", "slashing")],
                skills={"athletics": 3},
                saves={"dex": 2},
                hidden=cid == hidden,
            )
        )
    return found


class Player:
    """Plays encounters command after command through ``Engine.handle``."""

    def __init__(
        self,
        engine: Engine,
        creatures: int,
        seed: int,
        hidden: str | None = None,
        mix: str = "real",
    ):
        self.mix = mix
        self.engine = engine
        self.creatures = creatures
        self.hidden = hidden
        self.arena = load_arena(TAVERN)
        self.entropy = RandomEntropy(seed)
        self.choice = random.Random(seed)
        self.accepted = 0
        self.refused = 0
        self.events: list[Event] = []
        self.encounters = 0
        self.turns = 0
        #: An encounter still running after this many rounds is replaced by a fresh one.
        self.max_rounds = 10
        self.state = self._new()

    def _new(self) -> EncounterState:
        self.encounters += 1
        cs = roster(self.creatures, hidden=self.hidden)
        outcome = self.engine.create(f"bench{self.encounters}", cs, arena=self.arena)
        self.state = outcome.state
        self.send(Command("set_surprise", {"surprised": []}, GM_ACTOR))
        zones = ("common_room", "bar")
        positions = {c.id: zones[(i // 2) % 2] for i, c in enumerate(cs)}
        self.send(Command("place", {"positions": positions}, GM_ACTOR))
        self.send(Command("roll_initiative", {}, GM_ACTOR))
        self._settle()
        return self.state

    def send(self, command: Command) -> tuple[Event, ...]:
        try:
            outcome = self.engine.handle(self.state, command, self.entropy)
        except Refusal:
            self.refused += 1
            return ()
        self.accepted += 1
        self.state = outcome.state
        self.events.extend(outcome.events)
        return outcome.events

    def _settle(self) -> None:
        """Let every pending decision time out (the server's default)."""
        for _ in range(20):
            if not self.state.pending:
                return
            decision = self.state.pending[0]
            if self.mix == "heavy" and "attack" in decision.options:
                who = decision.controller
                actor = GM_ACTOR if who == "gm" else Actor("player", who)
                choice = {"decision": decision.id, "choice": ["attack"]}
                if self.send(Command("decide", choice, actor)):
                    continue
            self.send(Command("decision_timeout", {"decision": decision.id}, GM_ACTOR))

    def turn(self) -> None:
        """One turn of the active creature: close in or step, attack, maybe a note, end it."""
        s = self.state
        if s.phase == "ended" or s.active is None or s.round > self.max_rounds:
            self._new()
            return
        self.turns += 1
        me = s.creatures[s.active]
        if not me.incapacitated:
            self._act(me.id)
        if self.turns % 3 == 0:
            text = f"Round {self.state.round}: {me.name} presses on."
            self.send(Command("add_note", {"text": text, "hidden": self.turns % 6 == 0}, GM_ACTOR))
        s = self.state
        if s.phase == "turns" and s.active == me.id and not s.pending:
            self.send(Command("end_turn", {"creature": me.id}, GM_ACTOR))
            self._settle()

    def _act(self, cid: str) -> None:
        if self.mix == "heavy":
            self._act_heavy(cid)
            return
        s = self.state
        me = s.creatures[cid]
        enemies = [c for c in s.creatures.values() if c.side != me.side and not c.out_of_fight]
        here = [c.id for c in enemies if c.zone == me.zone]
        if not here and enemies:
            self.send(Command("enter", {"creature": cid, "zones": [enemies[0].zone]}, GM_ACTOR))
        elif movement_left(s, me) >= 5:
            self.send(Command("move", {"creature": cid, "feet": 5}, GM_ACTOR))
        self._settle()
        s = self.state
        if s.phase != "turns" or s.active != cid:
            return
        me = s.creatures[cid]
        here = [c.id for c in s.in_zone(me.zone or "") if c.side != me.side]
        if here:
            target = self.choice.choice(here)
            self.send(Command("attack", {"creature": cid, "target": target}, GM_ACTOR))
            self._settle()

    def _act_heavy(self, cid: str) -> None:
        """Attack (and so engage) on odd turns; on even turns an area effect on the own
        zone, then a walk to the other zone past the engaged enemies."""
        s = self.state
        me = s.creatures[cid]
        zone = me.zone or ""
        here = [c.id for c in s.in_zone(zone) if c.side != me.side and not c.out_of_fight]
        if not here:
            enemies = [c for c in s.creatures.values() if c.side != me.side and not c.out_of_fight]
            if enemies:
                self.send(Command("enter", {"creature": cid, "zones": [enemies[0].zone]}, GM_ACTOR))
                self._settle()
            return
        if self.turns % 2:
            self.send(Command("attack", {"creature": cid, "target": here[0]}, GM_ACTOR))
            self._settle()
            return
        caught = [c.id for c in s.in_zone(zone) if c.id != cid and not c.out_of_fight]
        # Everyone else in the zone is caught; the rules refuse an area that fits more (or
        # fewer) creatures than it names, so a smaller or larger burst is tried next.
        for size in (10, 20, 5):
            blast = {"creature": cid, "name": "Fire burst", "zone": zone, "shape": "sphere",
                     "size": size, "range": 0, "targets": caught, "save": "dex", "dc": 13,
                     "damage": "2d6", "damage_type": "fire"}  # fmt: skip
            if self.send(Command("area_effect", blast, GM_ACTOR)):
                break
        self._settle()
        s = self.state
        if s.phase != "turns" or s.active != cid:
            return
        other = "bar" if zone == "common_room" else "common_room"
        self.send(Command("enter", {"creature": cid, "zones": [other]}, GM_ACTOR))
        self._settle()

    @property
    def commands(self) -> int:
        return self.accepted + self.refused


# -- timing helpers -------------------------------------------------------------------------------


def best_of(fn: Callable[[], object], repeat: int, budget: float = 0.2) -> float:
    """Seconds per call: the best of ``repeat`` runs, each long enough to last ``budget``."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= budget / 4 or n >= 1 << 20:
            break
        n *= 2
    n = max(1, int(n * budget / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


class FakeSession:
    """A subscriber without a socket or channel (``_fanout.Subscriber``): keeps the text
    it is sent (a connection then frames it or queues it with a ``send_nowait``)."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def push_text(self, text: str) -> None:
        self.sent.append(text)

    def close(self, code: int, reason: str) -> None:
        pass


def make_room(engine: Engine, state: EncounterState, members: int) -> tuple[Room, list[Any]]:
    async def made() -> Room:  # a room reads trio's clock when it is made
        return Room("bench", engine, InMemoryStore(), state)

    room = trio.run(made)
    sessions: list[Any] = []
    players = [c.controller for c in state.creatures.values() if c.controller != "gm"]
    for i in range(members):
        session = FakeSession()
        sessions.append(session)
        if i == 0:
            role, player = "gm", None
        elif i == members - 1:
            role, player = "spectator", None
        else:
            role, player = "player", players[(i - 1) % len(players)] if players else "p"
        room.members.append(Member(session, role, player))
    return room, sessions


# -- checks ---------------------------------------------------------------------------------------


def _mutable_ids(value: Any, found: dict[int, Any]) -> None:
    """Every mutable object reachable from ``value`` (the arena excepted), by id."""
    if isinstance(value, list | dict | set) or (
        attrs.has(type(value)) and vars(type(value)).get("__setattr__") is not _frozen_setattrs
    ):
        found[id(value)] = value
    if isinstance(value, dict):
        for k, v in value.items():
            _mutable_ids(k, found)
            _mutable_ids(v, found)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            _mutable_ids(v, found)
    elif attrs.has(type(value)) and type(value).__name__ != "Arena":
        for f in attrs.fields(type(value)):
            _mutable_ids(getattr(value, f.name), found)


def check_copy(state: EncounterState) -> None:
    """``state.copy()`` equals a deep copy and shares nothing mutable with ``state``."""
    dup = state.copy()
    assert state_to_dict(dup) == state_to_dict(copy.deepcopy(state)) == state_to_dict(state)
    assert dup == state
    mine: dict[int, Any] = {}
    theirs: dict[int, Any] = {}
    _mutable_ids(state, mine)
    _mutable_ids(dup, theirs)
    shared = set(mine) & set(theirs)
    assert not shared, f"copy shares mutable objects: {[mine[i] for i in shared][:3]}"


# -- the bench ------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    engine = Engine()
    if args.budget:  # every plugin call timed, as the server's are
        engine.set_hook_budget(args.budget, 3)
    figures: dict[str, Any] = {}

    # 1. The loop.
    player = Player(engine, args.creatures, args.seed, mix=args.mix)
    for _ in range(args.warmup):
        player.turn()
    start_cmds, start_events = player.commands, len(player.events)
    load_before = os.getloadavg()[0]
    t0, cpu0 = time.perf_counter(), time.process_time()
    while player.commands - start_cmds < args.commands:
        player.turn()
    loop_s = time.perf_counter() - t0
    loop_cpu = time.process_time() - cpu0
    cmds = player.commands - start_cmds
    kinds: dict[str, int] = {}
    for event in player.events[start_events:]:
        name = type(event).__name__
        kinds[name] = kinds.get(name, 0) + 1
    figures["loop"] = {
        "commands": cmds,
        "events": len(player.events) - start_events,
        "refused": player.refused,
        "encounters": player.encounters,
        "seconds": loop_s,
        "commands_per_s": cmds / loop_s,
        "cpu_seconds": loop_cpu,
        "commands_per_cpu_s": cmds / loop_cpu,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "events_by_type": kinds,
        "code": os.environ.get("ZONEKEEP_BENCH_CODE", str(ROOT)),
        "mix": args.mix,
        "us_per_command": loop_s / cmds * 1e6,
    }

    if args.loop_only:
        return figures

    # 2. Micro timings on a mid-fight state.
    mid = Player(engine, args.creatures, args.seed + 1)
    for _ in range(args.creatures * 2 + 1):  # two rounds in
        mid.turn()
    while mid.state.active is None or mid.state.phase != "turns" or mid.state.pending:
        mid.turn()
    state = mid.state
    check_copy(state)
    active = state.active
    end_turn = Command("end_turn", {"creature": active}, GM_ACTOR)
    entropy = RandomEntropy(args.seed)
    sample = player.events[-400:]
    dicts = [event_to_dict(e) for e in sample]
    micro = {
        "state.copy()": best_of(state.copy, args.repeat),
        "copy.deepcopy(state)": best_of(lambda: copy.deepcopy(state), args.repeat),
        "Engine.handle(end_turn)": best_of(
            lambda: engine.handle(state, end_turn, entropy), args.repeat
        ),
        "event_to_dict (per event)": best_of(
            lambda: [event_to_dict(e) for e in sample], args.repeat
        )
        / len(sample),
        "json.dumps (per event)": best_of(
            lambda: [json.dumps(d, separators=(",", ":")) for d in dicts], args.repeat
        )
        / len(sample),
        "event_to_dict+json.dumps (per event)": best_of(
            lambda: [json.dumps(event_to_dict(e), separators=(",", ":")) for e in sample],
            args.repeat,
        )
        / len(sample),
        "snapshot_for(gm)": best_of(lambda: snapshot_for(state, True), args.repeat),
        "snapshot_for(player)": best_of(lambda: snapshot_for(state, False), args.repeat),
    }
    figures["micro_s"] = micro
    figures["micro_state"] = {
        "creatures": len(state.creatures),
        "round": state.round,
        "seq": state.seq,
        "notes": len(state.notes),
    }

    # 3. Broadcast of one attack's events to the members.
    broadcast: dict[str, Any] = {}
    for label, hidden in (("no hidden creature", None), ("one hidden creature", "foe1")):
        p = Player(engine, args.creatures, args.seed + 2, hidden=hidden)
        events: tuple[Event, ...] = ()
        prev = p.state
        for _ in range(200):
            before = len(p.events)
            prev = p.state
            p.turn()
            made = p.events[before:]
            if any(e.type == "attack_made" for e in made) and p.state.phase == "turns":
                events = tuple(e for e in made if e.type != "turn_ended")[:5]
                break
        room, sessions = make_room(engine, p.state, args.members)
        first = p.state.seq - len(events) + 1
        hidden_before = prev  # the state before the turn that made the events

        def once(
            room: Room = room,
            sessions: list[Any] = sessions,
            first: int = first,
            events: tuple[Event, ...] = events,
            hidden_before: EncounterState = hidden_before,
        ) -> None:
            for s in sessions:
                s.sent.clear()
            room._broadcast(first, events, hidden_before)

        per_call = best_of(once, args.repeat)
        once()
        broadcast[label] = {
            "events": [e.type for e in events],
            "members": args.members,
            "messages": sum(len(s.sent) for s in sessions),
            "bytes": sum(len(m) for s in sessions for m in s.sent),
            "us_per_broadcast": per_call * 1e6,
            "us_per_member": per_call / args.members * 1e6,
        }
    figures["broadcast"] = broadcast
    return figures


def print_table(figures: dict[str, Any]) -> None:
    loop = figures["loop"]
    print(f"== engine loop (tavern, Engine.handle, seeded RandomEntropy, mix {loop['mix']}) ==")
    print(f"  code: {loop['code']}")
    print(
        f"  {loop['commands']} commands ({loop['refused']} refused in total), "
        f"{loop['events']} events, {loop['encounters']} encounters"
    )
    top = sorted(loop["events_by_type"].items(), key=lambda kv: -kv[1])[:8]
    print("  events: " + ", ".join(f"{k} {v}" for k, v in top))
    print(f"  {loop['commands_per_s']:10.0f} commands/s   {loop['us_per_command']:8.1f} us/command")
    busy = " (BUSY MACHINE: load above 1.5)" if loop["load_before"] > 1.5 else ""
    print(
        f"  {loop['commands_per_cpu_s']:10.0f} commands per CPU-second; load average "
        f"{loop['load_before']:.2f} -> {loop['load_after']:.2f}{busy}"
    )
    if "micro_state" not in figures:
        return
    print()
    st = figures["micro_state"]
    print(
        f"== micro timings (state: {st['creatures']} creatures, round {st['round']}, "
        f"seq {st['seq']}, {st['notes']} notes) =="
    )
    for name, seconds in figures["micro_s"].items():
        print(f"  {name:<40} {seconds * 1e6:10.2f} us")
    print()
    print("== broadcast of one command's events (Room._broadcast, sessions json.dumps) ==")
    for label, b in figures["broadcast"].items():
        print(
            f"  {label:<22} {len(b['events'])} events x {b['members']} members: "
            f"{b['us_per_broadcast']:8.1f} us, {b['us_per_member']:7.1f} us/member "
            f"({b['messages']} messages, {b['bytes']} bytes)"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=5_000, help="commands timed in the loop")
    parser.add_argument("--warmup", type=int, default=200, help="turns played before timing")
    parser.add_argument("--creatures", type=int, default=6, help="creatures (4 to 8)")
    parser.add_argument("--members", type=int, default=6, help="members for the broadcast")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="runs per micro timing (best kept)")
    parser.add_argument("--json", metavar="OUT", help="also write every figure to OUT")
    parser.add_argument(
        "--mix",
        choices=("real", "heavy"),
        default="real",
        help="the loop's commands: real (move, attack, notes) or heavy (areas of effect "
        "and opportunity attacks)",
    )
    parser.add_argument(
        "--code",
        metavar="DIR",
        help="run another checkout's engine (its sdk/, server/, protocol/, plugins/)",
    )
    parser.add_argument(
        "--loop-only", action="store_true", help="time the loop only (no micro timings)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="time every plugin call against this budget, as the server does (0: untimed)",
    )
    args = parser.parse_args(argv)
    figures = run(args)
    print_table(figures)
    if args.json:
        out = {
            "settings": vars(args),
            "environment": {
                "python": sys.version.split()[0],
                "implementation": platform.python_implementation(),
                "machine": platform.machine(),
                "platform": platform.platform(),
            },
            "figures": figures,
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"\nwritten to {args.json}")


if __name__ == "__main__":
    main()
