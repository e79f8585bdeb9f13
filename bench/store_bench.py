"""Benchmark the SQLite event store: append throughput (group commit or not) and recovery.

Run from the repository root::

    python bench/store_bench.py                      # defaults, about a minute
    python bench/store_bench.py --durability both --json result.json
    python bench/store_bench.py --only recovery --recover-encounters 1000 --recover-events 1000

Everything is written to a temporary data directory (removed afterwards; ``--tmp-dir``
chooses the disk it lives on). The figures are printed; nothing passes or fails.

1. Throughput. ``--encounters`` encounters of ``--events-per-encounter`` events each
   are appended the way rooms do it: one small batch per command, each append awaited
   before the next one of the same encounter, a snapshot every 200 events. With group
   commit, ``--concurrency`` tasks append at once (each plays one encounter after
   another); without, the very same appends run strictly one after another, so each is
   its own transaction.
2. Recovery. A store with ``--recover-encounters`` unfinished encounters of
   ``--recover-events`` events each (snapshots every 200 events, as the server writes
   them) is built, then timed: the store's own reads (``unfinished()`` + ``read()``),
   and a real ``ZonekeepServer`` starting on it (``run()`` restores every encounter
   before it listens).

The events are real: one short encounter is played once through the rules engine with
``EncounterHarness`` (notes, moves, turn ends) and copied under a fresh encounter id
for every encounter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import trio

from zonekeep.sdk import Creature, EncounterCreated, Event
from zonekeep.sdk.host import state_to_dict
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server import ServerConfig, ZonekeepServer
from zonekeep.server._sqlite import SqliteStore

#: The server's rooms store a snapshot whenever the seq crosses a multiple of this.
SNAPSHOT_EVERY = 200
#: Recording encounter id, replaced in every copy.
RECORDED_ID = "recorded"

# -- the recorded encounter -----------------------------------------------------------------


@attrs.frozen
class Recording:
    """One encounter's events, batch by batch as the commands produced them.

    ``snapshots[i]`` is the state after batch ``i`` when that batch crossed a multiple
    of :data:`SNAPSHOT_EVERY` (and after the creation batch), else ``None``.
    """

    batches: list[tuple[Event, ...]]
    snapshots: list[dict[str, Any] | None]

    @property
    def events(self) -> int:
        return sum(len(b) for b in self.batches)


def record(min_events: int) -> Recording:
    """Play a plain encounter (GM notes, moves, turn ends) until it has ``min_events``
    events; stops at a command boundary, so it may have a few more."""
    creatures = [
        Creature("aria", "Aria", "party", controller="alice", speeds={"walk": 30}),
        Creature("brom", "Brom", "party", controller="bob", speeds={"walk": 25}),
        Creature("gob1", "Goblin 1", "goblins", speeds={"walk": 30}),
        Creature("gob2", "Goblin 2", "goblins", speeds={"walk": 30}),
    ]
    h = EncounterHarness(creatures, zones=("hall", "yard"), encounter_id=RECORDED_ID)
    batches: list[tuple[Event, ...]] = [tuple(h.events)]
    snapshots: list[dict[str, Any] | None] = [state_to_dict(h.state)]  # create_room does this

    def send(kind: str, **params: object) -> None:
        before = h.state.seq
        batches.append(h.send(kind, h.gm, **params))
        crossed = h.state.seq // SNAPSHOT_EVERY > before // SNAPSHOT_EVERY
        snapshots.append(state_to_dict(h.state) if crossed else None)

    send("set_surprise", surprised=[])
    send("place", positions={"aria": "hall", "brom": "hall", "gob1": "yard", "gob2": "yard"})
    h.rolls(15, 10, 12, 8)
    send("roll_initiative")
    turn = 0
    while sum(len(b) for b in batches) < min_events:
        turn += 1
        who = h.state.active
        assert who is not None and h.state.phase == "turns"
        send("add_note", text=f"Round {h.state.round}: {who} scans the hall (note {turn}).")
        send("move", creature=who, feet=5)
        if sum(len(b) for b in batches) >= min_events:
            break
        send("move", creature=who, feet=10)
        if turn % 2 == 0:
            send("remove_note", note=next(iter(h.state.notes)))
        send("end_turn", creature=who)
    assert h.state.phase != "ended"
    return Recording(batches, snapshots)


def prefix(rec: Recording, min_events: int) -> Recording:
    """The recording's first commands, up to the first that reaches ``min_events`` events."""
    total = n = 0
    while n < len(rec.batches) and total < min_events:
        total += len(rec.batches[n])
        n += 1
    return Recording(rec.batches[:n], rec.snapshots[:n])


def spread_lengths(encounters: int, mean_events: int) -> list[int]:
    """Per-encounter lengths spread evenly over ``mean_events`` +/- half a snapshot interval,
    so the tail after the last snapshot takes every size from 0 to 199 events, as after a
    stop at a random moment (all equal to a multiple of 200 would leave no tail at all)."""
    half = SNAPSHOT_EVERY // 2
    return [
        max(1, mean_events - half + (i * SNAPSHOT_EVERY) // encounters % SNAPSHOT_EVERY)
        for i in range(encounters)
    ]


@attrs.frozen
class Append:
    first_seq: int
    events: tuple[Event, ...]
    snapshot: dict[str, Any] | None


def per_command(rec: Recording, eid: str) -> list[Append]:
    """The recording's appends for encounter ``eid``: one per command, as a room makes them."""
    out: list[Append] = []
    seq = 1
    for batch, snap in zip(rec.batches, rec.snapshots, strict=True):
        out.append(Append(seq, _rename(batch, eid), _rename_snapshot(snap, eid)))
        seq += len(batch)
    return out


def per_snapshot(rec: Recording, eid: str) -> list[Append]:
    """The same events in few appends, each ending where a snapshot is taken (fast to build)."""
    out: list[Append] = []
    pending: list[Event] = []
    seq = 1
    for batch, snap in zip(rec.batches, rec.snapshots, strict=True):
        pending.extend(batch)
        if snap is not None:
            out.append(Append(seq, _rename(tuple(pending), eid), _rename_snapshot(snap, eid)))
            seq += len(pending)
            pending = []
    if pending:
        out.append(Append(seq, _rename(tuple(pending), eid), None))
    return out


def _rename(batch: tuple[Event, ...], eid: str) -> tuple[Event, ...]:
    return tuple(
        attrs.evolve(e, encounter=eid) if isinstance(e, EncounterCreated) else e for e in batch
    )


def _rename_snapshot(snap: dict[str, Any] | None, eid: str) -> dict[str, Any] | None:
    return None if snap is None else {**snap, "id": eid}


# -- 1. throughput ------------------------------------------------------------------------------


async def throughput(
    folder: Path,
    rec: Recording,
    encounters: int,
    concurrency: int,
    durability: str,
    grouped: bool,
) -> dict[str, Any]:
    """Append ``encounters`` copies of ``rec`` one command at a time; time it."""
    eids = [f"bench-{i:05d}" for i in range(encounters)]
    plans = [(eid, per_command(rec, eid)) for eid in eids]
    store = await SqliteStore.open(folder / "zonekeep.sqlite3", durability=durability)  # type: ignore[arg-type]
    latencies: list[float] = []

    async def play(eid: str, appends: list[Append]) -> None:
        for a in appends:
            t = time.perf_counter()
            await store.append(eid, a.first_seq, a.events, snapshot=a.snapshot)
            latencies.append(time.perf_counter() - t)

    queue = plans[::-1]

    async def appender() -> None:
        while queue:
            await play(*queue.pop())

    started = time.perf_counter()
    if grouped:
        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(appender)
    else:
        await appender()
    elapsed = time.perf_counter() - started
    await store.aclose()
    events = sum(len(a.events) for _, plan in plans for a in plan)
    latencies.sort()
    return {
        "mode": "group commit" if grouped else "one by one",
        "durability": durability,
        "concurrency": concurrency if grouped else 1,
        "encounters": encounters,
        "events": events,
        "appends": store.appends,
        "transactions": store.transactions,
        "seconds": elapsed,
        "events_per_second": events / elapsed,
        "appends_per_second": store.appends / elapsed,
        "appends_per_transaction": store.appends / max(store.transactions, 1),
        "append_latency_ms_p50": 1000 * statistics.median(latencies),
        "append_latency_ms_p99": 1000
        * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "file_mb": _size_mb(folder),
    }


# -- 2. recovery --------------------------------------------------------------------------------


async def build(folder: Path, recs: list[Recording]) -> dict[str, Any]:
    """Write one unfinished encounter per recording (snapshots where the server puts them)."""
    store = await SqliteStore.open(folder / "zonekeep.sqlite3", durability="normal")
    queue = list(enumerate(recs))
    queue.reverse()

    async def writer() -> None:
        while queue:
            i, rec = queue.pop()
            eid = f"enc-{i:05d}"
            for a in per_snapshot(rec, eid):
                await store.append(eid, a.first_seq, a.events, snapshot=a.snapshot)

    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(16):
            nursery.start_soon(writer)
    elapsed = time.perf_counter() - started
    await store.aclose()
    # Leave the file as a server would find it after a clean stop: WAL folded back in.
    conn = sqlite3.connect(folder / "zonekeep.sqlite3")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"build_seconds": elapsed, "file_mb": _size_mb(folder)}


async def recover_store(folder: Path, durability: str) -> dict[str, Any]:
    """Time the store's reads on their own: open, ``unfinished()``, the tails after each
    snapshot (what restore reads) and, for comparison, every event of every encounter."""
    t0 = time.perf_counter()
    store = await SqliteStore.open(folder / "zonekeep.sqlite3", durability=durability)  # type: ignore[arg-type]
    t1 = time.perf_counter()
    stored = await store.unfinished()
    t2 = time.perf_counter()
    tail = 0
    for s in stored:
        tail += len(await store.read(s.id, s.snapshot_seq))
    t3 = time.perf_counter()
    everything = 0
    for s in stored:
        everything += len(await store.read(s.id))
    t4 = time.perf_counter()
    await store.aclose()
    # The same rows with bare SQLite queries (no JSON, no events), and the integrity
    # check that SqliteStore.open runs, alone.
    conn = sqlite3.connect(folder / "zonekeep.sqlite3")
    t5 = time.perf_counter()
    conn.execute("PRAGMA quick_check").fetchone()
    t6 = time.perf_counter()
    bare_tail = 0
    for s in stored:
        bare_tail += len(
            conn.execute(
                "SELECT seq, type, data FROM events WHERE encounter=? AND seq>? ORDER BY seq",
                (s.id, s.snapshot_seq),
            ).fetchall()
        )
    t7 = time.perf_counter()
    bare_all = 0
    for s in stored:
        bare_all += len(
            conn.execute(
                "SELECT seq, type, data FROM events WHERE encounter=? ORDER BY seq", (s.id,)
            ).fetchall()
        )
    t8 = time.perf_counter()
    conn.close()
    return {
        "quick_check_seconds": t6 - t5,
        "bare_read_tails_seconds": t7 - t6,
        "bare_tail_rows": bare_tail,
        "bare_read_all_seconds": t8 - t7,
        "bare_all_rows": bare_all,
        "store_open_seconds": t1 - t0,
        "unfinished_seconds": t2 - t1,
        "unfinished_count": len(stored),
        "read_tails_seconds": t3 - t2,
        "tail_events": tail,
        "read_all_seconds": t4 - t3,
        "all_events": everything,
    }


#: Cold encounters loaded (as a first join loads them) after the server is up.
COLD_LOADS = 20


async def recover_server(folder: Path, durability: str) -> dict[str, Any]:
    """Start a real server on the store; time opening the store and ``run()`` up to
    listening (encounters load on their first join since issue 15: none is loaded then),
    then load :data:`COLD_LOADS` cold encounters one by one as their first join would
    (``Registry.load``: snapshot, tail of the log, dice counter)."""
    config = ServerConfig(port=0, data_dir=folder, durability=durability)  # type: ignore[arg-type]
    server = ZonekeepServer(config)
    async with trio.open_nursery() as nursery:
        t0 = time.perf_counter()
        await server.open_store()
        t1 = time.perf_counter()
        await nursery.start(server.run)
        t2 = time.perf_counter()
        loaded_at_start = len(server.rooms)
        stored = [r.id for r in await server.store.records(status="open")]
        loads = []
        seqs = []
        for eid in stored[:: max(1, len(stored) // COLD_LOADS)][:COLD_LOADS]:
            started = time.perf_counter()
            room = await server.registry.load(eid)
            loads.append(time.perf_counter() - started)
            seqs.append(room.state.seq)
        nursery.cancel_scope.cancel()
    await server.store.aclose()
    loads.sort()
    return {
        "server_open_store_seconds": t1 - t0,
        "server_restore_seconds": t2 - t1,
        "server_total_seconds": t2 - t0,
        "loaded_at_start": loaded_at_start,
        "stored_open": len(stored),
        "cold_load_median_seconds": loads[len(loads) // 2] if loads else None,
        "cold_load_max_seconds": loads[-1] if loads else None,
        "cold_load_seqs": seqs,
    }


# -- 3. a cold encounter of a real fight ---------------------------------------------------------

TAVERN = Path(__file__).resolve().parent.parent / "examples" / "arenas" / "tavern.json"


def record_fight(min_events: int, seed: int = 1) -> Recording:
    """Play a real fight through the rules engine (``Engine.handle``, seeded dice) until it
    has ``min_events`` events: on the tavern arena, two heroes and two goblins with
    99,999 hit points (so it never ends) walk between the common room and the bar,
    attack an enemy in their zone (rolls, damage, engagements), take the opportunity
    attacks offered when an engaged creature leaves (``decide``), the GM adds notes; every
    turn ends with ``end_turn``. Snapshots where the server writes them."""
    import random

    from zonekeep.sdk import GM_ACTOR, Actor, Attack, Command, RandomEntropy, Refusal, load_arena
    from zonekeep.sdk.engine import Engine

    engine = Engine()
    entropy = RandomEntropy(seed)
    choice = random.Random(seed)

    def fighter(cid: str, side: str, controller: str) -> Creature:
        return Creature(cid, cid.capitalize(), side, controller=controller, hp=99_999,
                        max_hp=99_999, ac=12, attacks=[Attack("blade", "melee", 4, "1d8+2", "slashing")],
                        saves={"dex": 1})  # fmt: skip

    roster = [fighter("aria", "party", "alice"), fighter("brom", "party", "bob"),
              fighter("gob1", "goblins", "gm"), fighter("gob2", "goblins", "gm")]  # fmt: skip
    outcome = engine.create(RECORDED_ID, roster, arena=load_arena(TAVERN))
    state = outcome.state
    batches: list[tuple[Event, ...]] = [outcome.events]
    snapshots: list[dict[str, Any] | None] = [state_to_dict(state)]

    def send(kind: str, actor: Actor = GM_ACTOR, **params: object) -> bool:
        nonlocal state
        try:
            out = engine.handle(state, Command(kind, params, actor), entropy)
        except Refusal:
            return False
        before, state = state.seq, out.state
        batches.append(out.events)
        crossed = state.seq // SNAPSHOT_EVERY > before // SNAPSHOT_EVERY
        snapshots.append(state_to_dict(state) if crossed else None)
        return True

    def settle() -> None:
        for _ in range(10):
            if not state.pending:
                return
            d = state.pending[0]
            actor = GM_ACTOR if d.controller == "gm" else Actor("player", d.controller)
            if "attack" in d.options and send("decide", actor, decision=d.id, choice=["attack"]):
                continue
            send("decision_timeout", decision=d.id)

    send("set_surprise", surprised=[])
    send("place", positions={"aria": "common_room", "brom": "bar", "gob1": "common_room",
                             "gob2": "bar"})  # fmt: skip
    send("roll_initiative")
    settle()
    turn = 0
    while sum(len(b) for b in batches) < min_events:
        turn += 1
        who = state.active
        assert who is not None and state.phase == "turns", state.phase
        me = state.creatures[who]
        foes = [c.id for c in state.in_zone(me.zone or "") if c.side != me.side]
        if foes:
            send("attack", creature=who, target=choice.choice(foes))
            settle()
        if turn % 3 == 0:
            other = "bar" if me.zone == "common_room" else "common_room"
            send("enter", creature=who, zones=[other])  # engaged foes get opportunity attacks
            settle()
        else:
            send("move", creature=who, feet=5)
        if turn % 4 == 0:
            send("add_note", text=f"Round {state.round}: {me.name} presses on (note {turn}).")
        if state.active == who and not state.pending:
            send("end_turn", creature=who)
            settle()
    assert state.phase != "ended"
    return Recording(batches, snapshots)


def _kinds(rec: Recording) -> dict[str, int]:
    found: dict[str, int] = {}
    for batch in rec.batches:
        for e in batch:
            found[e.type] = found.get(e.type, 0) + 1
    return dict(sorted(found.items(), key=lambda kv: -kv[1]))


async def cold_fight(
    folder: Path, rec: Recording, encounters: int, snapshots: bool
) -> dict[str, Any]:
    """Store ``encounters`` copies of the fight (with the server's snapshots every 200
    events, or with only the creation snapshot: every event is replayed), start a real
    server, and answer each encounter's first join cold: ``Registry.load`` (snapshot, the
    tail of the log, the dice counter) plus the join's GM snapshot serialized, each timed.
    Beside it, a bare SQLite ``SELECT`` of the same rows (the tail the load reads)."""
    from zonekeep.server._visibility import snapshot_for
    from zonekeep.server._wire import encode_message

    store = await SqliteStore.open(folder / "zonekeep.sqlite3", durability="normal")
    for i in range(encounters):
        eid = f"fight-{i:03d}"
        seq = 1
        for n, a in enumerate(per_command(rec, eid)):
            snap = a.snapshot if snapshots or n == 0 else None
            await store.append(eid, a.first_seq, a.events, snapshot=snap)
            seq += len(a.events)
    await store.aclose()
    conn = sqlite3.connect(folder / "zonekeep.sqlite3")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()

    config = ServerConfig(port=0, data_dir=folder, durability="full")
    server = ZonekeepServer(config)
    loads: list[float] = []
    joins: list[float] = []
    cpu: list[float] = []
    replayed: list[int] = []
    async with trio.open_nursery() as nursery:
        await server.open_store()
        await nursery.start(server.run)
        for i in range(encounters):
            eid = f"fight-{i:03d}"
            t0, c0 = time.perf_counter(), time.process_time()
            room = await server.registry.load(eid)
            t1 = time.perf_counter()
            encode_message(snapshot_for(room.state, True))
            t2, c2 = time.perf_counter(), time.process_time()
            loads.append(t1 - t0)
            joins.append(t2 - t0)
            cpu.append(c2 - c0)
            replayed.append(room.state.seq)
        nursery.cancel_scope.cancel()
    await server.store.aclose()
    # The same rows, bare: what the load reads (the tail after its snapshot).
    conn = sqlite3.connect(folder / "zonekeep.sqlite3")
    bare: list[float] = []
    rows = 0
    for i in range(encounters):
        eid = f"fight-{i:03d}"
        t0 = time.perf_counter()
        (after,) = conn.execute(
            "SELECT coalesce(max(seq), 0) FROM snapshots WHERE encounter=?", (eid,)
        ).fetchone()
        rows = len(conn.execute(
            "SELECT seq, type, data FROM events WHERE encounter=? AND seq>? ORDER BY seq",
            (eid, after),
        ).fetchall())  # fmt: skip
        bare.append(time.perf_counter() - t0)
    conn.close()
    for xs in (loads, joins, cpu, bare):
        xs.sort()
    mid = len(loads) // 2
    return {
        "snapshots": "every 200 events (as the server writes them)"
        if snapshots
        else "creation only",
        "events_per_encounter": rec.events,
        "seq_loaded": max(replayed),
        "rows_read": rows,
        "load_median_seconds": loads[mid],
        "load_max_seconds": loads[-1],
        "first_join_median_seconds": joins[mid],
        "first_join_max_seconds": joins[-1],
        "first_join_cpu_median_seconds": cpu[mid],
        "bare_select_median_seconds": bare[mid],
        "bare_select_max_seconds": bare[-1],
    }


# -- running and printing ------------------------------------------------------------------------


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) / 1e6


def _fresh(base: Path, name: str) -> Path:
    folder = base / name
    folder.mkdir()
    return folder


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A plain text table; ``align`` has one letter per column, ``l`` or ``r``."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if a == "l" else c.rjust(w)
            for c, w, a in zip(cells, widths, align, strict=True)
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    levels = ["full", "normal"] if args.durability == "both" else [args.durability]
    result: dict[str, Any] = {
        "settings": {k: v for k, v in vars(args).items() if k not in ("json", "tmp_dir")},
        "environment": {
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
    }
    base = Path(tempfile.mkdtemp(prefix="zonekeep-bench-", dir=args.tmp_dir))
    result["environment"]["tmp_dir"] = str(base)
    print(
        f"zonekeep store bench: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} CPU(s), data in {base}"
    )
    try:
        if args.only in (None, "throughput"):
            rec = record(args.events_per_encounter)
            sizes = [len(b) for b in rec.batches]
            print(
                f"\n1. Append throughput: {args.encounters} encounters x {rec.events} events "
                f"({len(rec.batches)} appends each, {statistics.mean(sizes):.2f} events/append, "
                f"snapshot every {SNAPSHOT_EVERY} events)"
            )
            runs = []
            for level in levels:
                pair = {}
                for grouped in (True, False):
                    name = f"tp-{level}-{'group' if grouped else 'serial'}"
                    r = await throughput(
                        _fresh(base, name), rec, args.encounters, args.concurrency, level, grouped
                    )
                    pair[grouped] = r
                    runs.append(r)
                ratio = pair[True]["events_per_second"] / pair[False]["events_per_second"]
                pair[True]["speedup_vs_one_by_one"] = ratio
            rows = [
                [
                    r["durability"],
                    r["mode"],
                    str(r["concurrency"]),
                    f"{r['events']:,}",
                    f"{r['appends']:,}",
                    f"{r['transactions']:,}",
                    f"{r['appends_per_transaction']:.1f}",
                    f"{r['seconds']:.2f}",
                    f"{r['events_per_second']:,.0f}",
                    f"{r['append_latency_ms_p50']:.2f}/{r['append_latency_ms_p99']:.2f}",
                ]
                for r in runs
            ]
            print(
                _table(
                    [
                        "durability",
                        "mode",
                        "tasks",
                        "events",
                        "appends",
                        "transactions",
                        "appends/txn",
                        "seconds",
                        "events/s",
                        "latency ms p50/p99",
                    ],
                    rows,
                    "llrrrrrrrr",
                )
            )
            for r in runs:
                if "speedup_vs_one_by_one" in r:
                    print(
                        f"  durability={r['durability']}: group commit is "
                        f"{r['speedup_vs_one_by_one']:.2f}x the events/s of one-by-one appends"
                    )
            result["throughput"] = runs

        if args.only in (None, "recovery"):
            lengths = spread_lengths(args.recover_encounters, args.recover_events)
            full = record(max(lengths))
            recs = [prefix(full, n) for n in lengths]
            expected = sorted({rec.events for rec in recs})
            total = sum(rec.events for rec in recs)
            print(
                f"\n2. Recovery: {args.recover_encounters} unfinished encounters, "
                f"{total / len(recs):.0f} events each on average ({min(expected)}-{max(expected)}; "
                f"{total:,} in all), snapshot every {SNAPSHOT_EVERY}"
            )
            folder = _fresh(base, "recovery")
            built = await build(folder, recs)
            print(
                f"  built in {built['build_seconds']:.1f} s (not part of the figures); "
                f"store file {built['file_mb']:.1f} MB"
            )
            runs = []
            for level in levels:
                r = {"durability": level, "events": total, **built}
                r.update(await recover_store(folder, level))
                r.update(await recover_server(folder, level))
                if r["loaded_at_start"] != 0 or r["stored_open"] != args.recover_encounters:
                    print(
                        f"  WARNING: {r['loaded_at_start']} encounters loaded at start, "
                        f"{r['stored_open']} of {args.recover_encounters} stored as open"
                    )
                if not set(r["cold_load_seqs"]) <= set(expected):
                    print("  WARNING: a cold encounter loaded at a seq that was not stored")
                del r["cold_load_seqs"]
                runs.append(r)
            rows = []
            for r in runs:
                steps = [
                    ("SqliteStore.open (quick_check, next seqs)", "store_open_seconds", ""),
                    (
                        "store.unfinished() (latest snapshots)",
                        "unfinished_seconds",
                        f"{r['unfinished_count']:,} encounters",
                    ),
                    (
                        "store.read(id, snapshot_seq) for each",
                        "read_tails_seconds",
                        f"{r['tail_events']:,} tail events",
                    ),
                    (
                        "store.read(id) for each (no snapshots)",
                        "read_all_seconds",
                        f"{r['all_events']:,} events",
                    ),
                    ("PRAGMA quick_check alone (part of open)", "quick_check_seconds", ""),
                    (
                        "bare SELECT of the tails, each encounter",
                        "bare_read_tails_seconds",
                        f"{r['bare_tail_rows']:,} rows",
                    ),
                    (
                        "bare SELECT of every event, each encounter",
                        "bare_read_all_seconds",
                        f"{r['bare_all_rows']:,} rows",
                    ),
                    ("server.open_store()", "server_open_store_seconds", ""),
                    (
                        "server.run() start -> listening (nothing loaded)",
                        "server_restore_seconds",
                        f"{r['loaded_at_start']} rooms loaded",
                    ),
                    ("server total: ready for joins", "server_total_seconds", ""),
                    (
                        f"a cold encounter's first load, median of {COLD_LOADS}",
                        "cold_load_median_seconds",
                        "Registry.load: snapshot, tail, dice counter",
                    ),
                    (f"the same, slowest of {COLD_LOADS}", "cold_load_max_seconds", ""),
                ]
                rows += [
                    [r["durability"], step, f"{r[key]:.3f}", what] for step, key, what in steps
                ]
            print(_table(["durability", "step", "seconds", "what"], rows, "llrl"))
            result["recovery"] = runs
        if args.only in (None, "fight"):
            rec = record_fight(args.fight_events)
            print(
                f"\n3. A cold encounter of a real fight: {rec.events} events "
                f"({len(rec.batches)} commands; {', '.join(f'{k} {v}' for k, v in list(_kinds(rec).items())[:8])}, ...), "
                f"{args.fight_encounters} copies, each loaded cold once; "
                f"load average {os.getloadavg()[0]:.2f}"
            )
            runs = []
            for with_snapshots in (True, False):
                folder = _fresh(base, f"fight-{'snap' if with_snapshots else 'nosnap'}")
                runs.append(await cold_fight(folder, rec, args.fight_encounters, with_snapshots))
            rows = []
            for r in runs:
                rows += [
                    [r["snapshots"], "Registry.load (median / slowest)",
                     f"{r['load_median_seconds'] * 1e3:.1f} / {r['load_max_seconds'] * 1e3:.1f}"],
                    ["", "first join answered: load + GM snapshot (median / slowest)",
                     f"{r['first_join_median_seconds'] * 1e3:.1f} / {r['first_join_max_seconds'] * 1e3:.1f}"],
                    ["", "  of it CPU (median)", f"{r['first_join_cpu_median_seconds'] * 1e3:.1f}"],
                    ["", f"bare SELECT of the same {r['rows_read']} rows (median / slowest)",
                     f"{r['bare_select_median_seconds'] * 1e3:.2f} / {r['bare_select_max_seconds'] * 1e3:.2f}"],
                ]  # fmt: skip
            print(_table(["snapshots", "step", "ms"], rows, "llr"))
            result["fight"] = {"events_by_type": _kinds(rec), "runs": runs,
                               "load_average": os.getloadavg()[0]}  # fmt: skip
    finally:
        if args.keep:
            print(f"\nkept the data in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return result


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Benchmark zonekeep's SQLite event store (figures only; no pass/fail).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--encounters", type=int, default=200, help="throughput: encounters appended")
    p.add_argument(
        "--events-per-encounter",
        type=int,
        default=300,
        help="throughput: events per encounter (one append per command)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=50,
        help="throughput: appenders at once with group commit (rooms busy at once)",
    )
    p.add_argument("--durability", choices=["full", "normal", "both"], default="both")
    p.add_argument(
        "--recover-encounters",
        type=int,
        default=100,
        help="recovery: unfinished encounters in the store (K; the issue's size: 1000)",
    )
    p.add_argument(
        "--recover-events",
        type=int,
        default=1000,
        help="recovery: events per encounter (E; the issue's size: 1000)",
    )
    p.add_argument(
        "--only",
        choices=["throughput", "recovery", "fight"],
        default=None,
        help="run one part only",
    )
    p.add_argument(
        "--fight-events",
        type=int,
        default=1000,
        help="fight: events of the recorded fight (attacks, opportunity attacks, moves)",
    )
    p.add_argument(
        "--fight-encounters",
        type=int,
        default=20,
        help="fight: copies stored, each loaded cold once",
    )
    p.add_argument(
        "--tmp-dir",
        type=Path,
        default=None,
        help="where the temporary data directory goes (the disk measured)",
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="OUT",
        help="also write the figures to this JSON file",
    )
    args = p.parse_args(argv)
    for name in (
        "encounters",
        "events_per_encounter",
        "concurrency",
        "recover_encounters",
        "recover_events",
        "fight_events",
        "fight_encounters",
    ):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    result = trio.run(main_async, args)
    result["wall_seconds"] = time.perf_counter() - started
    print(f"\ndone in {result['wall_seconds']:.1f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
