"""Find the largest N whose open-loop p99 stays under a bound with nothing lost.

::

    python bench/load/search.py --target zonekeep --low 200 --high 1600
    python bench/load/search.py --target baseline --low 400 --high 4000
    python bench/load/search.py --target samework --low 400 --high 4000

Each step is one ``run.py`` run of one target (``--shape open --no-restart``, one
command per encounter every ``--rate`` seconds, M = ``--clients``) at some N: it
passes when the p99 of "all M got it" is under ``--p99-ms`` (timeouts count as
infinite) and ``run.py`` exited 0 (nothing refused, timed out, lost or out of order).
The search doubles N from ``--low`` until a step fails (or ``--high`` passes), then
bisects between the last pass and the first failure down to ``--resolution``. Every
step is printed with its figures and the machine's load average (from ``run.py``);
the JSON of each step is kept in ``--out-dir``. The answer is a figure of this
machine, at its load at the time: repeat it, and compare targets in the same session.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def step(args: argparse.Namespace, n: int, out_dir: Path) -> tuple[bool, dict[str, Any]]:
    out = out_dir / f"{args.target}-{n}.json"
    argv = [sys.executable, str(HERE / "run.py"), "--targets", args.target, "--shape", "open",
            "--no-restart", "--encounters", str(n), "--clients", str(args.clients),
            "--rate", str(args.rate), "--duration", str(args.duration),
            "--generators", str(args.generators), "--engine-commands", "0",
            "--json", str(out), *args.run_option]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if not out.is_file():
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
        return False, {}
    shape: dict[str, Any] = json.loads(out.read_text())[args.target]["open"]
    p99 = shape["all_p99_ms"]
    ok = done.returncode == 0 and p99 is not None and p99 < args.p99_ms
    load = f"load {shape['load_before']:.2f} -> {shape['load_after']:.2f}"
    busy = " (BUSY MACHINE)" if shape["load_before"] > 1.5 else ""
    print(
        f"  N={n:>5}: p99 {p99:,.1f} ms, p50 {shape['all_p50_ms']:,.1f} ms, "
        f"{shape['commands']} commands, {shape['timeouts']} timeouts, {shape['missing']} "
        f"missing, server CPU {shape['server_cpu_pct']:.0f}%, generators "
        f"{shape['generators_cpu_pct']:.0f}%, run.py exit {done.returncode}; {load}{busy} "
        f"-> {'pass' if ok else 'FAIL'}",
        flush=True,
    )
    return ok, shape


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--target", choices=("zonekeep", "samework", "baseline", "broadcast"), required=True
    )
    parser.add_argument("--low", type=int, default=100, help="first N tried")
    parser.add_argument("--high", type=int, default=4000, help="largest N tried")
    parser.add_argument("--resolution", type=int, default=50, help="stop bisecting below this")
    parser.add_argument("--p99-ms", type=float, default=50.0)
    parser.add_argument("--rate", type=float, default=2.0, help="seconds between commands")
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--generators", type=int, default=2)
    parser.add_argument("--out-dir", default=None, help="where each step's JSON goes")
    parser.add_argument(
        "--run-option", action="append", default=[], help="one more run.py argument (repeatable)"
    )
    args = parser.parse_args(argv)
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="zonekeep-search-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"{args.target}: largest N with open-loop p99 < {args.p99_ms} ms, nothing lost "
          f"(M={args.clients}, one command per encounter every {args.rate} s, "
          f"{args.duration} s a step)", flush=True)  # fmt: skip
    good, bad = 0, None
    n = args.low
    while n <= args.high:
        ok, _ = step(args, n, out_dir)
        if not ok:
            bad = n
            break
        good = n
        if n == args.high:
            break
        n = min(args.high, n * 2)
    if bad is not None:
        while bad - good > args.resolution:
            mid = (good + bad) // 2
            mid -= mid % args.resolution if mid % args.resolution and mid > args.resolution else 0
            if mid <= good or mid >= bad:
                mid = (good + bad) // 2
            ok, _ = step(args, mid, out_dir)
            good, bad = (mid, bad) if ok else (good, mid)
    above = f", {bad} failed" if bad is not None else f" (the highest tried, {args.high})"
    print(f"{args.target}: largest N passing: {good}{above}; step figures in {out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
