"""The cost gate (bench/cost_gate.py): the work a command costs stays within the budget
committed in bench/budget.json.

Not a timing test: the gate counts calls (Python and C) per command on a fixed,
seeded workload (the engine alone; the whole server path from a request's bytes to the
frames written, in memory), which gives the same count on any machine at any load.
It must pass on this checkout, fail on a deliberate 10% regression, and say how to
raise the budget when it fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import helpers

ROOT = Path(__file__).resolve().parent.parent
GATE = ROOT / "bench" / "cost_gate.py"


def run_gate(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    out = tmp_path / "gate.json"
    done = subprocess.run(
        [sys.executable, str(GATE), "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=helpers.deadline(600),
        check=False,
        env={**os.environ, **env},
    )
    figures = json.loads(out.read_text()) if out.is_file() else None
    return done, figures


def gate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cost_gate", GATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gate_passes_within_the_budget(tmp_path: Path) -> None:
    done, figures = run_gate(tmp_path, ZONEKEEP_COST_GATE_EXTRA="")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "cost gate: OK, within the budget" in done.stdout
    budget = json.loads((ROOT / "bench" / "budget.json").read_text())
    for workload in ("engine", "server"):
        found = figures[workload]
        assert found["refused"] == 0
        assert found["calls_per_command"] <= budget["calls_per_command"][workload] * 1.05
    server = figures["server"]
    assert server["commands"] == 1200
    # Every command's events reached all six connections (the GM, two players, three
    # spectators): the replay was checked frame for frame against the recording.
    assert server["events_per_command"] > 2
    assert min(server["frames"]) >= server["commands"] * 2


def test_a_ten_percent_regression_fails_the_gate(tmp_path: Path) -> None:
    done, figures = run_gate(tmp_path, ZONEKEEP_COST_GATE_EXTRA="0.10")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "COST GATE FAILED:" in out
    assert "engine: " in out and "server: " in out and "over the budget" in out
    # The message says how to raise the budget, and that the commit must say why.
    assert "python bench/cost_gate.py --write-budget" in out
    assert "say in that commit's message why" in out
    budget = json.loads((ROOT / "bench" / "budget.json").read_text())["calls_per_command"]
    for workload in ("engine", "server"):
        assert figures[workload]["calls_per_command"] > 1.09 * budget[workload]


def test_the_tolerance_is_five_percent() -> None:
    gate = gate_module()
    budget = {"tolerance": 0.05, "calls_per_command": {"engine": 1000, "server": 2000}}

    def figures(engine: float, server: float) -> dict[str, Any]:
        return {"engine": {"calls_per_command": engine}, "server": {"calls_per_command": server}}

    assert gate.check(figures(1050, 2100), budget) == []
    assert gate.check(figures(600, 900), budget) == []  # cheaper is never a failure
    over = gate.check(figures(1051, 2000), budget)
    assert len(over) == 1 and over[0].startswith("engine: 1,051 calls a command, +5.1% over")
    assert len(gate.check(figures(1000, 2101), budget)) == 1
