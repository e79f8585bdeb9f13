"""The load benchmark's runner (bench/load/run.py) still runs, and fails when it must.

Not a timing test: nothing here depends on how fast anything is. A tiny run of the
real runner (a zonekeep server process, the same-work server, the fair baseline, one
generator process)
must finish, print its report and exit 0 with nothing lost; the same runner told to
ignore some of the events it receives (``--simulate-drop``, as if they were lost)
must report the loss and exit 1.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import helpers
from helpers import missing_component
from postgres_support import sql

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "bench" / "load" / "run.py"
TINY = ["--encounters", "1", "--clients", "2", "--duration", "1", "--generators", "1",
        "--engine-commands", "0", "--shape", "closed", "--command-timeout", "2"]  # fmt: skip


def run(*extra: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(RUN), *TINY, "--json", str(tmp_path / "out.json"),
            "--tmp-dir", str(tmp_path), *extra]  # fmt: skip
    return subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=helpers.deadline(240),
        check=False,
    )


def test_tiny_run_reports_and_passes(tmp_path: Path) -> None:
    done = run(tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "OK: nothing refused, timed out, lost or out of order." in out
    # The report: both servers' columns, the ratio, percentiles with their counts, load.
    assert "| closed loop" in out and "zonekeep/baseline" in out and "zonekeep/samework" in out
    assert "server CPU per command, us" in out
    assert "all M got it p99 ms" in out and " t0 d0 r0 o0 c0)" in out
    assert "load average before -> after" in out
    assert (tmp_path / "out.json").is_file()


def test_simulated_drop_fails_the_run(tmp_path: Path) -> None:
    done = run("--targets", "baseline", "--simulate-drop", "3", tmp_path=tmp_path)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "FAILED: something was refused, timed out, lost or out of order:" in done.stdout
    assert "baseline closed:" in done.stdout and "missing" in done.stdout


def test_tiny_run_on_two_postgresql_nodes_follows_moved(tmp_path: Path) -> None:
    from postgres_support import POSTGRES_URL, needs_postgres

    needs_postgres()
    done = run(
        "--targets", "zonekeep", "--encounters", "2", "--store", POSTGRES_URL, "--nodes", "2",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "OK: nothing refused, timed out, lost or out of order." in done.stdout
    # Two encounters, two connections each, at alternating nodes: two joins moved.
    assert "| zonekeep: nodes, store (joins answered 'moved') | 2, postgresql (2) |" in done.stdout
    left = [s for (s,) in sql("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'zk_bench_%'")]
    assert left == []  # the run's schema was dropped


def test_tiny_run_of_the_node_generator_on_two_postgresql_nodes(tmp_path: Path) -> None:
    """generator.mjs (``--generator node``) plays as generator.py does, and follows
    ``moved`` to the node that serves an encounter."""
    from postgres_support import POSTGRES_URL, needs_postgres

    needs_postgres()
    node = shutil.which("node")
    if node is None:
        missing_component("node is not installed (the Node.js load generator needs Node.js 18+)")
    if not (ROOT / "bench" / "load" / "node_modules").is_dir():
        missing_component("bench/load/node_modules is missing: run `npm ci` in bench/load")
    done = run(
        "--targets", "zonekeep", "--encounters", "2", "--store", POSTGRES_URL, "--nodes", "2",
        "--generator", "node", "--node", node, tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "OK: nothing refused, timed out, lost or out of order." in done.stdout
    assert "| zonekeep: nodes, store (joins answered 'moved') | 2, postgresql (2) |" in done.stdout
