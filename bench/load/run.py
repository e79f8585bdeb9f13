"""Load benchmark: a real zonekeep server under N encounters x M connections, against a
fair raw fan-out baseline on the same stack, in the same run.

Run from the repository root, with the project installed (about two minutes on two cores)::

    python bench/load/run.py                                   # N=20, M=6, both shapes
    python bench/load/run.py --encounters 200 --shape closed --json closed-200.json
    python bench/load/run.py --encounters 1000 --shape open --rate 2 --duration 60
    python bench/load/run.py --store postgresql://postgres@127.0.0.1/test --nodes 2

The server runs in its own process (``python -m zonekeep.server._cli serve``, SQLite
store in a temporary data directory, a config that lifts the rate and connection
limits); the load comes from ``--generators`` other processes (``generator.py``), each
a trio program on raw ``websockets.trio.client`` connections, or with ``--generator node``
``generator.mjs``, a Node.js port of it on ``ws`` (same control protocol; ``npm ci`` in
bench/load first). Then the same is done
against ``baseline.py``: the fastest raw server we could write on zonekeep's stack (one
frame in per command; the same number and size of frames out as zonekeep sent in this
run, written once per member per command; no JSON, no store), and against
``samework.py``, the same-work server: that baseline plus the work zonekeep cannot avoid
(``json.loads`` of each request, one SQLite append per command in WAL with
``synchronous=FULL`` and group commit in one worker thread, each event ``json.dumps``'ed
once, its frame written once per member). ``--targets`` can add
``broadcast``, the older per-frame-broadcast baseline (``baseline_broadcast.py``).
``--store postgresql://...`` keeps zonekeep's store in a fresh schema of that database
(dropped after the run), and ``--nodes K`` runs K zonekeep node processes on it
(docs/scale-out.md): generator encounter i is created at node i mod K and its
connection c joins at node (i + c) mod K, following ``moved`` to the owner; the CPU
figure is all nodes' together. Figures are printed as a table, with zonekeep's as ratios to the same-work server's and the baseline's, each
shape with the machine's load average (``os.getloadavg``) before and after it, and
written to ``--json OUT``.

The run FAILS (exit status 1) when any command was refused (a limit, or anything
else), timed out, lost a delivery, arrived out of order (a seq gap or repeat), or a
connection was closed during play. Those counts are printed beside each percentile;
percentiles count a timed-out command as infinitely slow ("inf"), so they are never
flattered by leaving the slowest out. ``--simulate-drop K`` makes the generators ignore
every K-th event they receive, to show that the run then fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

HERE = Path(__file__).resolve().parent
PAGE_KIB = 1024
CLK_TCK = os.sysconf("SC_CLK_TCK")

CONFIG = """\
# Written by bench/load/run.py: no rate limit, room for every connection and encounter.
[server]
durability = "{durability}"
{server_extra}

[limits]
rate_per_second = 1000000.0
rate_burst = 1000000
abuse_refusals = 1000000
max_connections_per_encounter = {per_encounter}
idle_timeout_seconds = 1000000.0
max_encounters = {max_encounters}
max_spectators_per_encounter = {per_encounter}
max_connections_per_token = 1000000
max_connections_per_ip = 1000000
encounters_per_hour = 1000000
open_encounters = 1000000
reply_bytes_burst = 1000000000000
{limit_extra}
"""


#: The servers run.py can measure (``--targets``).
TARGETS = ("zonekeep", "samework", "baseline", "broadcast")

#: A run taken while the machine's 1-minute load average was above this is marked.
BUSY_LOAD = 1.5


def load_average() -> float:
    """The machine's 1-minute load average now (``os.getloadavg``)."""
    return os.getloadavg()[0]


def load_note(before: float, after: float | None = None) -> str:
    """``load 0.42 -> 1.93``, with ``BUSY MACHINE`` when the load before was above
    :data:`BUSY_LOAD` (the load after includes the benchmark's own processes)."""
    text = f"load {before:.2f}" + (f" -> {after:.2f}" if after is not None else "")
    return text + (f" (BUSY MACHINE: load above {BUSY_LOAD})" if before > BUSY_LOAD else "")


# -- processes -------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """The process's resident set size (VmRSS) in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process used so far (/proc/<pid>/stat utime + stime)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class Child:
    """A child process with line-based standard input and output."""

    def __init__(
        self, name: str, argv: list[str], stderr_path: Path, pythonpath: Path | None = None
    ) -> None:
        self.name = name
        self.pythonpath = pythonpath
        self.argv = argv
        self.stderr_path = stderr_path
        self.proc: trio.Process | None = None
        self._buffer = b""
        self.started = 0.0

    async def start(self) -> None:
        env = {**code_env(self.pythonpath), "PYTHONUNBUFFERED": "1"}
        self.started = time.perf_counter()
        with self.stderr_path.open("ab") as err:
            self.proc = await trio.lowlevel.open_process(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=str(HERE.parent.parent),
            )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def readline(self, timeout: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        with trio.fail_after(timeout):
            while b"\n" not in self._buffer:
                chunk = await self.proc.stdout.receive_some(1 << 16)
                if not chunk:
                    raise RuntimeError(
                        f"{self.name} exited (see {self.stderr_path}): "
                        + self.stderr_path.read_text()[-2000:]
                    )
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    async def send(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        await self.proc.stdin.send_all((line + "\n").encode())

    async def ask(self, line: str, timeout: float) -> dict[str, Any]:
        await self.send(line)
        answer: dict[str, Any] = json.loads(await self.readline(timeout))
        if "error" in answer:
            raise RuntimeError(f"{self.name}: {answer['error']}")
        return answer

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        """Signal the process, wait up to ``timeout``, then kill it. Returns its exit code."""
        proc = self.proc
        if proc is None:
            return None
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(sig)
                with trio.move_on_after(timeout):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    await stream.aclose()
        return proc.returncode


def code_env(pythonpath: Path | None) -> dict[str, str]:
    """This process's environment, with ``pythonpath`` (the code under test) first on
    ``PYTHONPATH``, before any ``PYTHONPATH`` given to run.py."""
    env = dict(os.environ)
    if pythonpath is not None:
        extra = env.get("PYTHONPATH")
        env["PYTHONPATH"] = str(pythonpath) + (os.pathsep + extra if extra else "")
    return env


def link_tree(code: Path, dest: Path) -> Path:
    """A ``zonekeep`` package made of links to ``code``'s source folders, for PYTHONPATH:
    the server runs exactly the code of that checkout, whatever is installed."""
    package = dest / "zonekeep"
    package.mkdir(parents=True)
    for name in ("server", "sdk", "protocol", "plugins"):
        (package / name).symlink_to((code / name).resolve(), target_is_directory=True)
    return dest


async def run_engine_bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """The in-process engine benchmark (``bench/engine_bench.py``: the rules engine and
    plugin hooks alone, no sockets), in a process of its own on the same code, after the
    servers have stopped. Its figures, and its printed table under ``"table"``."""
    out = tmp / "engine.json"
    env = code_env(link_tree(Path(args.code), tmp / "lib"))
    argv = [sys.executable, str(HERE.parent / "engine_bench.py"),
            "--commands", str(args.engine_commands), "--json", str(out)]  # fmt: skip
    print(f"[engine] {args.engine_commands} commands through Engine.handle, no sockets", flush=True)
    done = await trio.run_process(
        argv, env=env, capture_stdout=True, capture_stderr=True, check=False
    )
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError("the engine benchmark failed:\n" + "\n".join(tail))
    engine: dict[str, Any] = json.loads(out.read_text())
    table = done.stdout.decode().split("\nwritten to ")[0].rstrip()
    return {**engine, "table": table}


# -- figures ---------------------------------------------------------------------------------


def pct(values: list[float], q: float, infinite: int = 0) -> float | None:
    """The q-th percentile (nearest rank) in milliseconds, None without values.
    ``infinite`` more values count as infinitely slow (timed-out commands), so the
    percentile is ``inf`` when it falls among them."""
    clean = sorted(v for v in values if not math.isnan(v)) + [math.inf] * infinite
    if not clean:
        return None
    rank = max(0, min(len(clean) - 1, math.ceil(q / 100 * len(clean)) - 1))
    return clean[rank] * 1000


def merge(
    parts: list[dict[str, Any]], duration: float, clients: int, cpu: dict[str, float]
) -> dict[str, Any]:
    """One shape's figures from every generator's report and the CPU seconds used."""
    lat_all = [x for p in parts for x in p["lat_all"]]
    lat_own = [x for p in parts for x in p["lat_own"]]
    lag = [x for p in parts for x in p["lag"]]
    errors: Counter[str] = Counter()
    closed: Counter[str] = Counter()
    other: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    kind_events: Counter[str] = Counter()
    samples: dict[str, str] = {}
    for p in parts:
        samples.update(p["error_samples"])
        errors.update(p["errors"])
        closed.update(p["closed_connections"])
        other.update(p["other_messages"])
        kinds.update(p.get("commands_by_type", {}))
        kind_events.update(p.get("events_by_type", {}))
    total = {k: sum(p.get(k, 0) for p in parts) for k in ("commands", "sent", "received", "gaps",
                                                   "duplicates", "timeouts", "missing",
                                                   "simulated_drops", "received_bytes")}  # fmt: skip
    sizes: dict[str, list[int]] = {}
    for p in parts:
        for kind, values in p.get("sizes", {}).items():
            old = sizes.get(kind, [0] * len(values))
            sizes[kind] = [a + b for a, b in zip(old, values, strict=True)]
    wall = cpu["wall"]
    inf = total["timeouts"]
    return {
        **total,
        "duration": duration,
        "commands_per_s": total["commands"] / duration,
        "delivered_per_s": total["received"] / duration,
        "events_per_command": total["received"] / max(1, total["commands"]) / clients,
        "all_p50_ms": pct(lat_all, 50, inf),
        "all_p95_ms": pct(lat_all, 95, inf),
        "all_p99_ms": pct(lat_all, 99, inf),
        "all_max_ms": pct(lat_all, 100, inf),
        "own_p50_ms": pct(lat_own, 50, inf),
        "own_p95_ms": pct(lat_own, 95, inf),
        "own_p99_ms": pct(lat_own, 99, inf),
        "generator_lag_p99_ms": pct(lag, 99),
        "errors": dict(errors),
        "error_samples": samples,
        "closed_connections": dict(closed),
        "other_messages": dict(other),
        "commands_by_type": dict(kinds),
        "events_by_type": dict(kind_events),
        "sizes": sizes,
        "server_cpu_pct": 100 * cpu["server"] / wall,
        "generators_cpu_pct": 100 * cpu["generators"] / wall,
        "wall": wall,
    }


# -- one target (zonekeep or the baseline) ---------------------------------------------------


async def run_target(
    target: str,
    args: argparse.Namespace,
    tmp: Path,
    shapes: list[str],
    sizes: dict[str, list[float]] | None = None,
) -> dict[str, Any]:
    """Start the server, create and join, play each shape; return every figure."""
    out: dict[str, Any] = {"target": target}
    data_dir = tmp / "data"
    config = tmp / "config.toml"
    store_line = [f"store = {json.dumps(args.store_url)}"] if args.store_url else []
    config.write_text(
        CONFIG.format(
            durability=args.durability,
            server_extra="\n".join([*store_line, *args.server_option]),
            limit_extra="\n".join(args.limit_option),
            per_encounter=max(64, args.clients + 8),
            max_encounters=args.encounters + 100,
        )
    )
    py = sys.executable
    pythonpath: Path | None = None
    nodes = args.nodes if target == "zonekeep" else 1
    if target == "zonekeep":
        argv = [py, "-m", "zonekeep.server._cli", "serve", "--port", "0",
                "--data-dir", str(data_dir), "--config", str(config)]  # fmt: skip
        if args.store_url:
            argv += ["--node-id", "n0"]
        pythonpath = link_tree(Path(args.code), tmp / "lib")
    elif target == "baseline":
        argv = [py, str(HERE / "baseline.py"), "--port", "0"]
    elif target == "samework":
        argv = [py, str(HERE / "samework.py"), "--port", "0", "--data-dir", str(data_dir),
                "--durability", args.durability]  # fmt: skip
    else:
        argv = [py, str(HERE / "baseline_broadcast.py"), "--port", "0"]
    gen_head = (
        [args.node, str(HERE / "generator.mjs")]
        if args.generator == "node"
        else [py, str(HERE / "generator.py")]
    )
    server = Child(target, argv, tmp / f"{target}-server.log", pythonpath)
    others = [
        Child(f"{target} node {k}", node_argv(argv, tmp, k), tmp / f"node-{k}.log", pythonpath)
        for k in range(1, nodes)
    ]
    children: list[Child] = []
    out["load_before"] = load_average()
    out["nodes"] = nodes
    try:
        await server.start()
        first = await server.readline(60)
        out["startup_empty_s"] = time.perf_counter() - server.started
        url_part = next(w for w in first.split() if w.startswith("ws://"))
        port = int(url_part.split(":")[2].split("/")[0])
        url = f"ws://127.0.0.1:{port}/ws"
        print(f"[{target}] listening on port {port} (pid {server.pid})", flush=True)
        urls = [url]
        for node in others:  # several nodes on one PostgreSQL store (--nodes)
            await node.start()
            line = await node.readline(60)
            node_url = next(w for w in line.split() if w.startswith("ws://"))
            urls.append(node_url)
            print(f"[{node.name}] listening at {node_url} (pid {node.pid})", flush=True)

        g = max(1, min(args.generators, args.encounters))
        counts = [args.encounters // g + (1 if i < args.encounters % g else 0) for i in range(g)]
        starts = [sum(counts[:i]) for i in range(g)]
        for i in range(g):
            mode = "baseline" if target == "samework" else target  # the same frames in
            gen_argv = [*gen_head, "--mode", mode, "--url", url,
                        "--first", str(starts[i]), "--count", str(counts[i]),
                        "--total", str(args.encounters), "--clients", str(args.clients),
                        "--command-timeout", str(args.command_timeout)]  # fmt: skip
            if args.simulate_drop:
                gen_argv += ["--drop-every", str(args.simulate_drop)]
            if len(urls) > 1:
                gen_argv += ["--urls", ",".join(urls)]
            if target in ("baseline", "samework") and sizes:
                gen_argv += ["--sizes", json.dumps(sizes)]
            child = Child(f"generator {i}", gen_argv, tmp / f"{target}-generator-{i}.log")
            children.append(child)
            await child.start()

        async def setup_phase(word: str, serving: Child = server) -> tuple[float, int]:
            """Every generator runs ``word`` at once; its seconds, then the RSS of the
            server process ``serving`` once things settle."""
            t = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for child in children:
                    nursery.start_soon(child.ask, word, args.setup_timeout)
            seconds = time.perf_counter() - t
            await trio.sleep(1.0)
            return seconds, rss_kib(serving.pid)

        if target == "zonekeep":
            await children[0].ask("warmup", 60)
        await trio.sleep(1.0)
        mem0 = rss_kib(server.pid)
        out["create_s"], mem1 = await setup_phase("create")
        moved = 0

        async def join_counting(child: Child) -> None:
            nonlocal moved
            answer = await child.ask("join", args.setup_timeout)
            moved += answer.get("moved", 0)  # (read after the await: both add up)

        t_join = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for child in children:
                nursery.start_soon(join_counting, child)
        out["join_s"] = time.perf_counter() - t_join
        await trio.sleep(1.0)
        mem2 = rss_kib(server.pid)
        out["joins_moved"] = moved
        connections = args.encounters * args.clients
        out["memory"] = {
            "rss_start_kib": mem0,
            "rss_encounters_kib": mem1,
            "rss_connections_kib": mem2,
            "per_idle_encounter_kib": (mem1 - mem0) / args.encounters,
            "per_connection_kib": (mem2 - mem1) / connections,
        }
        print(
            f"[{target}] {args.encounters} encounters in {out['create_s']:.1f} s, "
            f"{connections} connections in {out['join_s']:.1f} s; RSS {mem0 // 1024} -> "
            f"{mem1 // 1024} -> {mem2 // 1024} MiB",
            flush=True,
        )

        for shape in shapes:
            line = f"{shape} {args.duration}" + (f" {args.rate}" if shape == "open" else "")
            pids = [c.pid for c in children]
            node_pids = [server.pid, *(n.pid for n in others)]
            load0 = load_average()
            cpu0 = (sum(cpu_seconds(p) for p in node_pids), sum(cpu_seconds(p) for p in pids))
            t = time.perf_counter()
            parts: list[dict[str, Any]] = [{} for _ in children]

            async def play(
                i: int, child: Child, line: str = line, parts: list[dict[str, Any]] = parts
            ) -> None:
                parts[i] = await child.ask(line, args.duration + 60)

            async with trio.open_nursery() as nursery:
                for i, child in enumerate(children):
                    nursery.start_soon(play, i, child)
            wall = time.perf_counter() - t
            cpu = {
                "server": sum(cpu_seconds(p) for p in node_pids) - cpu0[0],
                "generators": sum(cpu_seconds(p) for p in pids) - cpu0[1],
                "wall": wall,
            }
            out[shape] = merge(parts, args.duration, args.clients, cpu)
            s = out[shape]
            s["load_before"], s["load_after"] = load0, load_average()
            print(
                f"[{target}] {shape}: {s['commands_per_s']:.0f} commands/s, "
                f"{s['delivered_per_s']:.0f} messages/s, p99 {fmt(s['all_p99_ms'])} ms "
                f"({counts_note(s)}), server CPU {s['server_cpu_pct']:.0f}%, generators "
                f"{s['generators_cpu_pct']:.0f}%; {load_note(load0, s['load_after'])}",
                flush=True,
            )
            if shape != shapes[-1]:
                await trio.sleep(1.0)

        for node in others:
            await node.stop(signal.SIGTERM, 30)
        out["server_exit"] = await server.stop(signal.SIGTERM, 30)
        if target == "zonekeep" and not args.no_restart and nodes == 1:
            # Restart on the same data directory and port: every unfinished encounter
            # is restored before the server listens; then every client joins again at
            # once, as they would after a restart (a reconnect storm).
            same_port = list(argv)
            same_port[argv.index("--port") + 1] = str(port)
            again = Child("zonekeep (restart)", same_port, tmp / "zonekeep-restart.log", pythonpath)
            try:
                await again.start()
                await again.readline(args.setup_timeout)
                out["startup_recover_s"] = time.perf_counter() - again.started
                restored = 0
                with trio.move_on_after(10):
                    while True:
                        text = await again.readline(10)
                        if text.startswith("Brought back"):
                            restored = int(text.split()[2])
                        if text.startswith("Stop with"):
                            break
                out["recovered"] = restored
                out["data_bytes"] = sum(p.stat().st_size for p in data_dir.glob("*") if p.is_file())
                cpu0 = cpu_seconds(again.pid)
                out["rejoin_s"], _ = await setup_phase("join", again)
                out["rejoin_server_cpu_s"] = cpu_seconds(again.pid) - cpu0
                print(
                    f"[{target}] restart: {restored} encounters back in "
                    f"{out['startup_recover_s']:.2f} s; {connections} connections joined again "
                    f"in {out['rejoin_s']:.1f} s (server CPU {out['rejoin_server_cpu_s']:.1f} s)",
                    flush=True,
                )
            finally:
                await again.stop(signal.SIGTERM, 30)
            out["restart_log_problems"] = log_problems(again.stderr_path)
    finally:
        for child in children:
            await child.stop(signal.SIGKILL, 5)
        for node in others:
            await node.stop(signal.SIGTERM, 30)
        if "server_exit" not in out:
            out["server_exit"] = await server.stop(signal.SIGTERM, 30)

    out["server_log_problems"] = log_problems(server.stderr_path)
    return out


def node_argv(argv: list[str], tmp: Path, k: int) -> list[str]:
    """Node ``k``'s command line: node 0's (``argv``) with a data directory and a node id
    of its own."""
    found = list(argv)
    found[found.index("--data-dir") + 1] = str(tmp / f"data-{k}")
    found[found.index("--node-id") + 1] = f"n{k}"
    return found


def log_problems(path: Path) -> list[str]:
    """Lines of a server's standard error that look like trouble (at most 20)."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    found = [
        line
        for line in lines
        if any(w in line for w in ("ERROR", "Traceback", "Error", "WARNING", "exception"))
    ]
    return found[:20]


# -- report ----------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def ratio(a: Any, b: Any) -> str:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return "-"
    return f"{a / b:.2f}x"


ROWS: list[tuple[str, str, int]] = [
    ("commands/s", "commands_per_s", 0),
    ("messages delivered/s", "delivered_per_s", 0),
    ("messages delivered per server CPU-s", "delivered_per_cpu_s", 0),
    ("server CPU per command, us", "cpu_per_command_us", 0),
    ("events per command", "events_per_command", 2),
    ("event frame bytes (mean)", "event_bytes", 0),
    ("all M got it p50 ms", "all_p50_ms", 2),
    ("all M got it p95 ms", "all_p95_ms", 2),
    ("all M got it p99 ms", "all_p99_ms", 2),
    ("all M got it max ms", "all_max_ms", 1),
    ("sender's 1st event p50 ms", "own_p50_ms", 2),
    ("sender's 1st event p95 ms", "own_p95_ms", 2),
    ("sender's 1st event p99 ms", "own_p99_ms", 2),
    ("commands completed", "commands", 0),
    ("refused commands", "refused", 0),
    ("timeouts", "timeouts", 0),
    ("deliveries missing", "missing", 0),
    ("seq gaps / repeats", "gaps_dups", 0),
    ("connections closed", "closed", 0),
    ("server CPU % of a core", "server_cpu_pct", 0),
    ("generators CPU % of a core", "generators_cpu_pct", 0),
    ("generator send lag p99 ms", "generator_lag_p99_ms", 2),
    ("load average before -> after", "load", 0),
]


def problems(shape: dict[str, Any]) -> dict[str, int]:
    """What makes a run fail: refused, timed out, missing, out of order, closed."""
    return {
        "refused": sum(shape["errors"].values()),
        "timeouts": shape["timeouts"],
        "missing": shape["missing"],
        "out_of_order": shape["gaps"] + shape["duplicates"],
        "closed": sum(shape["closed_connections"].values()),
    }


def counts_note(shape: dict[str, Any]) -> str:
    """The failure counts, as printed beside each percentile."""
    p = problems(shape)
    return (
        f"n={shape['commands']} t{p['timeouts']} d{p['missing']} r{p['refused']} "
        f"o{p['out_of_order']} c{p['closed']}"
    )


def event_bytes(shape: dict[str, Any]) -> float | None:
    """Mean bytes of an event frame received (every connection's copies)."""
    return shape["received_bytes"] / shape["received"] if shape["received"] else None


def row_value(shape: dict[str, Any], key: str) -> Any:
    if key == "refused":
        return sum(shape["errors"].values())
    if key == "gaps_dups":
        return f"{shape['gaps']} / {shape['duplicates']}"
    if key == "closed":
        return sum(shape["closed_connections"].values())
    if key == "delivered_per_cpu_s":
        cpu = shape["server_cpu_pct"] / 100 * shape["wall"]
        return shape["received"] / cpu if cpu else None
    if key == "cpu_per_command_us":
        return cpu_per_command_us(shape)
    if key == "event_bytes":
        return event_bytes(shape)
    if key == "load":
        return f"{shape['load_before']:.2f} -> {shape['load_after']:.2f}"
    value = shape.get(key)
    if key.endswith("_ms") and key.split("_")[0] in ("all", "own"):
        return f"{fmt(value, 2)} ({counts_note(shape)})"
    return value


def ratio_value(shape: dict[str, Any], key: str) -> Any:
    """The number a ratio is taken of (a percentile without its counts)."""
    if key.endswith("_ms"):
        return shape.get(key)
    return row_value(shape, key)


def ratio_targets(targets: list[str]) -> list[str]:
    """The servers zonekeep's figures are divided by: the same-work server, then the fair
    baseline (then the per-frame-broadcast variant), those of them that ran beside it."""
    if "zonekeep" not in targets:
        return []
    return [t for t in ("samework", "baseline", "broadcast") if t in targets]


def cpu_per_command_us(shape: dict[str, Any]) -> float | None:
    """Server CPU microseconds per completed command (the closed loop's cost figure)."""
    cpu = shape["server_cpu_pct"] / 100 * shape["wall"]
    return 1e6 * cpu / shape["commands"] if shape["commands"] else None


def table(result: dict[str, Any], shapes: list[str], targets: list[str]) -> str:
    n, m = result["settings"]["encounters"], result["settings"]["clients"]
    against = ratio_targets(targets)
    lines = [
        f"N = {n} encounters x M = {m} connections ({n * m} connections)",
        "Beside each percentile: n commands completed, t timeouts (counted as inf in the "
        "percentile), d deliveries missing, r refused, o out of order, c connections closed.",
        "",
    ]
    for shape in shapes:
        label = (
            "closed loop"
            if shape == "closed"
            else f"open loop, 1 command per encounter every {result['settings']['rate']} s"
        )
        head = f"| {label:<36} |" + "".join(f" {t:>28} |" for t in targets)
        rule = f"|{'-' * 38}|" + "".join(f"{'-' * 29}:|" for _ in targets)
        for other in against:
            head += f" zonekeep/{other} |"
            rule += f"{'-' * (10 + len(other))}:|"
        lines += [head, rule]
        for label_, key, digits in ROWS:
            values = [row_value(result[t][shape], key) for t in targets]
            line = f"| {label_:<36} |" + "".join(f" {fmt(v, digits):>28} |" for v in values)
            a = ratio_value(result["zonekeep"][shape], key) if against else None
            for other in against:
                b = ratio_value(result[other][shape], key)
                line += f" {ratio(a, b):>{9 + len(other)}} |"
            lines.append(line)
        lines.append("")
    lines += ["| memory and start-up | " + " | ".join(targets) + " |",
              "|---|" + "---:|" * len(targets)]  # fmt: skip

    def mem_row(label: str, get: Any) -> str:
        return f"| {label} | " + " | ".join(get(result[t]) for t in targets) + " |"

    lines += [
        mem_row("server RSS at start, MiB", lambda r: f"{r['memory']['rss_start_kib'] / 1024:.1f}"),
        mem_row("per connection, KiB", lambda r: f"{r['memory']['per_connection_kib']:.1f}"),
        mem_row("RSS with everything, MiB",
                lambda r: f"{r['memory']['rss_connections_kib'] / 1024:.1f}"),
        mem_row("start-up, empty data dir, s", lambda r: f"{r['startup_empty_s']:.2f}"),
        mem_row("join N x M, s", lambda r: f"{r['join_s']:.1f}"),
    ]  # fmt: skip
    if "zonekeep" in targets:
        zk = result["zonekeep"]
        lines += [
            f"| zonekeep: per idle encounter, KiB | {zk['memory']['per_idle_encounter_kib']:.1f} |",
            f"| zonekeep: create N encounters, s | {zk['create_s']:.1f} |",
            f"| zonekeep: nodes, store (joins answered 'moved') | {zk.get('nodes', 1)}, "
            f"{result['settings'].get('store', 'sqlite')} ({zk.get('joins_moved', 0)}) |",
            f"| zonekeep: start-up recovering K={zk.get('recovered', '?')}, s | "
            f"{fmt(zk.get('startup_recover_s'), 2)} |",
            f"| zonekeep: after the restart, all N x M join again, s (server CPU s) | "
            f"{fmt(zk.get('rejoin_s'), 1)} ({fmt(zk.get('rejoin_server_cpu_s'), 1)}) |",
        ]
    return "\n".join(lines)


def measured_sizes(zonekeep: dict[str, Any], shapes: list[str]) -> dict[str, list[float]]:
    """Per command type, the mean bytes of an event notification, of a reply and of a
    command, and the mean events per command, as zonekeep sent and received them in this
    run: the baseline sends as many frames of these sizes."""
    totals: dict[str, list[int]] = {}
    for shape in shapes:
        for kind, values in zonekeep[shape].get("sizes", {}).items():
            old = totals.get(kind, [0] * len(values))
            totals[kind] = [a + b for a, b in zip(old, values, strict=True)]
    return {
        kind: [round(ev_bytes / max(1, events)), round(r_bytes / max(1, replies)),
               round(sent / max(1, replies)), round(events / replies, 4)]
        for kind, (ev_bytes, events, r_bytes, replies, sent) in totals.items()
        if replies and events
    }  # fmt: skip


def fresh_schema(url: str) -> tuple[str, str]:
    """A new schema in the PostgreSQL database at ``url`` for one run: its name, and the
    store URL that keeps the store in it (its ``search_path``)."""
    import uuid
    from urllib.parse import quote

    import psycopg

    schema = f"zk_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}".encode())
    joiner = "&" if "?" in url else "?"
    return schema, f"{url}{joiner}options={quote(f'-csearch_path={schema}')}"


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE".encode())


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    shapes = ["closed", "open"] if args.shape == "both" else [args.shape]
    tmp = Path(tempfile.mkdtemp(prefix="zonekeep-load-", dir=args.tmp_dir))
    result: dict[str, Any] = {
        "settings": {
            "encounters": args.encounters,
            "clients": args.clients,
            "shapes": shapes,
            "rate": args.rate,
            "duration": args.duration,
            "generators": args.generators,
            "generator": args.generator,
            "durability": args.durability,
            "code": str(Path(args.code).resolve()),
        },
        "environment": {
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "command": " ".join(["python", "bench/load/run.py", *sys.argv[1:]]),
            "load_average_at_start": os.getloadavg(),
        },
    }
    schema = None
    args.store_url = ""
    if args.store != "sqlite":
        schema, args.store_url = fresh_schema(args.store)
        result["settings"]["store"] = "postgresql"
        result["settings"]["nodes"] = args.nodes
        print(f"[store] PostgreSQL, in a new schema {schema} (dropped after the run)", flush=True)
    try:
        sizes: dict[str, list[float]] | None = None
        for target in args.targets.split(","):
            (tmp / target).mkdir()
            result[target] = await run_target(target, args, tmp / target, shapes, sizes)
            if target == "zonekeep":
                sizes = measured_sizes(result[target], shapes)
                result["baseline_sizes"] = sizes
        if args.engine_commands > 0:
            result["engine"] = await run_engine_bench(args, tmp / "engine")
    finally:
        if schema is not None:
            drop_schema(args.store, schema)
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="zonekeep load benchmark against a baseline")
    parser.add_argument("--encounters", type=int, default=20, help="N (default 20)")
    parser.add_argument("--clients", type=int, default=6, help="M per encounter (default 6)")
    parser.add_argument("--shape", choices=("closed", "open", "both"), default="both")
    parser.add_argument(
        "--rate",
        type=float,
        default=2.0,
        help="open loop: seconds between one encounter's commands",
    )
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per shape")
    parser.add_argument("--generators", type=int, default=2, help="load-generator processes")
    parser.add_argument(
        "--generator",
        choices=("python", "node"),
        default="python",
        help="load-generator program: generator.py (trio) or generator.mjs (Node.js + ws; "
        "run `npm ci` in bench/load first)",
    )
    parser.add_argument("--node", default="node", help="the Node.js executable (--generator node)")
    parser.add_argument("--durability", choices=("full", "normal"), default="full")
    parser.add_argument("--setup-timeout", type=float, default=600.0, help="create/join bound, s")
    parser.add_argument(
        "--code",
        default=str(HERE.parent.parent),
        help="the checkout whose server/, sdk/, protocol/ and plugins/ run (default: this one)",
    )
    parser.add_argument(
        "--server-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a line for the zonekeep server's [server] config table, in TOML "
        "(e.g. gc_freeze_seconds=0); repeatable",
    )
    parser.add_argument(
        "--engine-commands",
        type=int,
        default=5000,
        metavar="N",
        help="commands for the in-process engine benchmark run after the servers "
        "(bench/engine_bench.py; default 5000, 0 skips it)",
    )
    parser.add_argument(
        "--limit-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a line for the zonekeep server's [limits] table, in TOML "
        "(e.g. ping_interval_seconds=0); repeatable",
    )
    parser.add_argument(
        "--targets",
        default="zonekeep,samework,baseline",
        help="which servers to run, in order, comma-separated, from zonekeep, samework (the "
        "same-work server), baseline (the fair baseline) and broadcast (the "
        "per-frame-broadcast variant); default zonekeep,samework,baseline. The others use "
        "the frame sizes zonekeep had when zonekeep runs first; ratios need zonekeep",
    )
    parser.add_argument(
        "--command-timeout",
        type=float,
        default=10.0,
        help="seconds before a command counts as timed out (default 10)",
    )
    parser.add_argument(
        "--simulate-drop",
        type=int,
        default=0,
        metavar="K",
        help="the generators ignore every K-th event they receive, as if it were lost: "
        "the run must then fail (a check of the runner itself)",
    )
    parser.add_argument(
        "--json",
        default="load-results.json",
        metavar="OUT",
        help="where every figure, the settings and the machine are written as JSON "
        "(default load-results.json; an empty string writes none)",
    )
    parser.add_argument(
        "--no-restart",
        action="store_true",
        help="skip zonekeep's restart and rejoin after the shapes (as in a search for N)",
    )
    parser.add_argument(
        "--store",
        default="sqlite",
        metavar="STORE",
        help="sqlite (default: the server's own file) or postgresql://... (a database the run "
        "makes a fresh schema in, dropped after; docs/scale-out.md)",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=1,
        metavar="K",
        help="K zonekeep node processes on this machine sharing the --store PostgreSQL "
        "database; each encounter is created at one node and its connections join at "
        "every node in turn, following 'moved' (default 1)",
    )
    parser.add_argument("--tmp-dir", default=None, help="where the temporary data dir goes")
    parser.add_argument("--keep", action="store_true", help="keep the data dir and logs")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.encounters < 1:
        parser.error("--encounters and --clients must be at least 1")
    targets = args.targets.split(",")
    if not targets or any(t not in TARGETS for t in targets):
        parser.error("--targets: a comma-separated list of " + ", ".join(TARGETS))
    if args.nodes < 1 or (args.nodes > 1 and args.store == "sqlite"):
        parser.error("--nodes K: K at least 1; more than 1 needs --store postgresql://...")
    if args.store != "sqlite" and not args.store.startswith(("postgresql://", "postgres://")):
        parser.error("--store: sqlite or a postgresql:// URL")
    if args.generator == "node":
        if shutil.which(args.node) is None:
            parser.error(f"--generator node: no Node.js executable {args.node!r} found")
        if not (HERE / "node_modules" / "ws").is_dir():
            parser.error("--generator node: run `npm ci` in bench/load first (installs ws)")
    started = time.perf_counter()
    result = trio.run(main_async, args)
    result["environment"]["total_seconds"] = time.perf_counter() - started
    print()
    shapes = result["settings"]["shapes"]
    print(table(result, shapes, targets))
    failed: list[str] = []
    for target in targets:
        logged = result[target].get("server_log_problems", []) + result[target].get(
            "restart_log_problems", []
        )
        for shape in shapes:
            found = {k: v for k, v in problems(result[target][shape]).items() if v}
            if found:
                failed.append(
                    f"{target} {shape}: " + ", ".join(f"{v} {k}" for k, v in found.items())
                )
            errors = result[target][shape]["errors"]
            closed = result[target][shape]["closed_connections"]
            if errors or closed:
                print(f"{target} {shape}: refused {errors}, closed {closed}")
                for name, text in result[target][shape]["error_samples"].items():
                    print(f"    {name}: {text}")
            if result[target][shape].get("simulated_drops"):
                print(f"{target} {shape}: {result[target][shape]['simulated_drops']} events "
                      "ignored on purpose (--simulate-drop)")  # fmt: skip
        if logged:
            print(f"{target} server log ({len(logged)} suspicious lines, first ones):")
            for line in logged[:5]:
                print("   ", line[:200])
    if "engine" in result:
        print()
        print(result["engine"]["table"])
    result["failures"] = failed
    print(
        f"\nTotal {result['environment']['total_seconds']:.0f} s; {load_note(load_average())} now."
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"Figures written to {args.json}.")
    if failed:
        print("FAILED: something was refused, timed out, lost or out of order:")
        for line in failed:
            print("   ", line)
        return 1
    print("OK: nothing refused, timed out, lost or out of order.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
