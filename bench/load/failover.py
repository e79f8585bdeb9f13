"""Failover benchmark: how long from ``kill -9`` of a node to every client resumed.

Run from the repository root, with the project installed and a PostgreSQL to use (the
run makes a schema of its own in it, and drops it after)::

    python bench/load/failover.py --store postgresql://postgres@127.0.0.1:5432/test
    python bench/load/failover.py --store postgresql://... --encounters 100 --clients 6

Three nodes (``zonekeep serve`` processes, ``--nodes``) share the store. Node 0 creates
N encounters (so it holds every lease); M clients per encounter (the Python client,
protocol/client.py) connect through node 1, follow ``moved`` to node 0 and join; each
encounter's first client adds a note every ``--pace`` seconds. Then node 0 is killed
with SIGKILL. Each client sees its connection drop and calls ``resume()``: it tries the
node it was on, then the others, until a node whose lease on the encounter has expired
takes it over, and joins again with its last seq. The figure is the time from the kill
to the last client resumed (and the distribution over clients), beside the lease time:
expected about ``lease_seconds`` plus one backed-off retry and a join.

Checked, or the run fails: every note acknowledged before the kill is in the store at
the seq its reply gave, and each encounter's seqs have no gap.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import drop_schema, fresh_schema, load_note, pct  # noqa: E402

from zonekeep.protocol.client import ClientError, ConnectionLost, ZonekeepClient, connect  # noqa: E402

ROSTER = [
    {"id": "aria", "name": "Aria", "side": "party", "controller": "alice", "hp": 20,
     "max_hp": 20, "ac": 14, "zone": "common_room"},
    {"id": "gob", "name": "Goblin", "side": "goblins", "hp": 7, "max_hp": 7, "ac": 13,
     "zone": "common_room"},
]  # fmt: skip


def start_node(store: str, k: int, tmp: Path, lease: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "ZONEKEEP_SERVER_STORE": store,
           "ZONEKEEP_SERVER_LEASE_SECONDS": str(lease)}  # fmt: skip
    config = tmp / "config.toml"
    config.write_text(
        "[limits]\nrate_per_second = 1000000.0\nrate_burst = 1000000\n"
        "max_connections_per_ip = 1000000\nmax_connections_per_token = 1000000\n"
        "encounters_per_hour = 1000000\nopen_encounters = 1000000\n"
        "max_connections_per_encounter = 64\n"
    )
    argv = [sys.executable, "-m", "zonekeep.server._cli", "serve", "--port", "0",
            "--data-dir", str(tmp / f"data-{k}"), "--node-id", f"n{k}", "--config", str(config)]  # fmt: skip
    log = (tmp / f"node-{k}.log").open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    url = next((w for w in line.split() if w.startswith("ws://")), None)
    if url is None:
        raise RuntimeError(f"node {k} did not start: {line!r}; see {tmp}/node-{k}.log")
    return proc, url


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    schema, store = fresh_schema(args.store)
    tmp = Path(tempfile.mkdtemp(prefix="zonekeep-failover-"))
    procs: list[subprocess.Popen[str]] = []
    try:
        urls = []
        for k in range(args.nodes):
            proc, url = start_node(store, k, tmp, args.lease)
            procs.append(proc)
            urls.append(url)
        print(f"[failover] {args.nodes} nodes: {', '.join(urls)}", flush=True)
        made = []
        async with connect(urls[0], timeout=30) as gm:
            for i in range(args.encounters):
                created = await gm.create_encounter(f"failover {i}", "tavern", ROSTER)
                made.append((created["encounter"], created["gm_token"]))
        acked: dict[str, dict[int, str]] = {eid: {} for eid, _ in made}
        resumed: list[float] = []
        failures: list[str] = []
        killed = trio.Event()
        t_kill = [0.0]

        async def one(eid: str, token: str, c: int, task_status: Any) -> None:
            entry = urls[1 % len(urls)]
            async with connect(entry, timeout=30, also=urls) as client:
                await client.join(eid, token)
                task_status.started()
                if c == 0:
                    async with trio.open_nursery() as inner:
                        inner.start_soon(_notes, client, eid, acked[eid], args.pace)
                        await _resume_after_drop(client, killed, t_kill, resumed, failures)
                        await trio.sleep(2 * args.pace)  # a few notes on the new node
                        inner.cancel_scope.cancel()
                else:
                    await _resume_after_drop(client, killed, t_kill, resumed, failures)

        load0 = os.getloadavg()[0]
        with trio.fail_after(args.lease * 3 + 120):
            async with trio.open_nursery() as nursery:
                for eid, token in made:
                    for c in range(args.clients):
                        await nursery.start(one, eid, token, c)
                print(
                    f"[failover] {args.encounters} x {args.clients} clients joined (through "
                    f"node 1, moved to node 0); playing for {args.warm} s",
                    flush=True,
                )
                await trio.sleep(args.warm)
                t_kill[0] = time.perf_counter()
                procs[0].send_signal(signal.SIGKILL)
                killed.set()
                print("[failover] node 0 killed (SIGKILL)", flush=True)
        load1 = os.getloadavg()[0]
        lost = 0
        gaps = 0
        import psycopg

        with psycopg.connect(store) as conn:
            for eid, notes in acked.items():
                rows = conn.execute(
                    "SELECT seq, data FROM events WHERE encounter=%s ORDER BY seq", (eid,)
                ).fetchall()
                seqs = [int(r[0]) for r in rows]
                gaps += seqs != list(range(1, len(seqs) + 1))
                texts = {int(r[0]): json.loads(r[1]).get("note", {}).get("text") for r in rows}
                lost += sum(texts.get(seq) != text for seq, text in notes.items())
        result = {
            "encounters": args.encounters,
            "clients": args.clients,
            "nodes": args.nodes,
            "lease_seconds": args.lease,
            "resumed": len(resumed),
            "failover_p50_s": (pct(resumed, 50) or math.nan) / 1000,
            "failover_p99_s": (pct(resumed, 99) or math.nan) / 1000,
            "failover_max_s": (pct(resumed, 100) or math.nan) / 1000,
            "acknowledged_notes": sum(len(n) for n in acked.values()),
            "acknowledged_lost": lost,
            "encounters_with_gaps": gaps,
            "failures": failures[:10],
            "load_before": load0,
            "load_after": load1,
            "command": " ".join(["python", "bench/load/failover.py", *sys.argv[1:]]),
        }
        return result
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(20)
        drop_schema(args.store, schema)


async def _notes(client: ZonekeepClient, eid: str, acked: dict[int, str], pace: float) -> None:
    for k in range(1_000_000):
        try:
            result = await client.command(eid, "add_note", text=f"note {k}")
        except (ConnectionLost, ClientError):
            await trio.sleep(pace)
            continue
        acked[result["first_seq"]] = f"note {k}"
        await trio.sleep(pace)


async def _resume_after_drop(
    client: ZonekeepClient,
    killed: trio.Event,
    t_kill: list[float],
    resumed: list[float],
    failures: list[str],
) -> None:
    await killed.wait()
    await client.closed.wait()
    try:
        await client.resume(within=120)
    except Exception as exc:
        failures.append(repr(exc))
        return
    resumed.append(time.perf_counter() - t_kill[0])


def main() -> int:
    parser = argparse.ArgumentParser(description="failover time of several zonekeep nodes")
    parser.add_argument("--store", required=True, help="postgresql://... (a new schema is made)")
    parser.add_argument("--encounters", type=int, default=100)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--lease", type=float, default=10.0, help="lease_seconds (default 10)")
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between notes")
    parser.add_argument("--warm", type=float, default=3.0, help="seconds of play before the kill")
    parser.add_argument("--json", default="", metavar="OUT")
    args = parser.parse_args()
    result = trio.run(main_async, args)
    print(
        f"failover: {result['resumed']}/{args.encounters * args.clients} clients resumed; "
        f"from the kill: p50 {result['failover_p50_s']:.2f} s, p99 "
        f"{result['failover_p99_s']:.2f} s, last {result['failover_max_s']:.2f} s "
        f"(lease {args.lease:g} s); {result['acknowledged_notes']} acknowledged notes, "
        f"{result['acknowledged_lost']} lost, {result['encounters_with_gaps']} encounters with "
        f"a seq gap; {load_note(result['load_before'], result['load_after'])}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    ok = (
        result["resumed"] == args.encounters * args.clients
        and not result["acknowledged_lost"]
        and not result["encounters_with_gaps"]
    )
    if not ok:
        print("FAILED:", result["failures"])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
