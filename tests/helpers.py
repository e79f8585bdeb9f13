"""Shared helpers for the rule tests (imported as `helpers`)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

from zonekeep.sdk import Attack, Creature, Size, movement_left
from zonekeep.sdk.testing import EncounterHarness

#: One factor for every deadline in the tests (``ZONEKEEP_TEST_TIMEOUT_SCALE``, default 1):
#: on a loaded machine, run the suite with a larger one instead of editing deadlines.
TIMEOUT_SCALE = float(os.environ.get("ZONEKEEP_TEST_TIMEOUT_SCALE", "1") or "1")


def deadline(seconds: float) -> float:
    """``seconds`` scaled by :data:`TIMEOUT_SCALE`: what every ``fail_after``,
    ``move_on_after`` and socket or process timeout in the tests should be given."""
    return seconds * TIMEOUT_SCALE


def missing_component(why: str) -> NoReturn:
    """A real component CI installs (Node.js, Chromium, nginx, an npm install) is
    missing: skip the calling test saying ``why``, except under ``CI=true``, where that
    is a broken install and the test fails."""
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(why)
    pytest.skip(why)


def example_plugin(module: str) -> ModuleType:
    """The installed example plugin ``module`` (``zonekeep_hazards``,
    ``zonekeep_wildfire``), which scripts/test installs as a user would. Missing, the
    calling test is skipped saying so, except under ``CI=true``, where it fails: CI
    installs both, so a missing one is a broken install, not a reason to skip."""
    try:
        return importlib.import_module(module)
    except ImportError:
        reason = f"the example plugin {module} is not installed (scripts/test installs it)"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(reason)
        pytest.skip(reason, allow_module_level=True)


def make(
    cid: str,
    side: str = "party",
    *,
    controller: str | None = None,
    dex: int = 0,
    speed: int = 30,
    size: Size = Size.MEDIUM,
    hp: int = 20,
    ac: int = 12,
    **kw: Any,
) -> Creature:
    """A creature with a 1d6+2 melee attack (+4 to hit) unless told otherwise."""
    if controller is None:
        controller = "gm" if side != "party" else f"player-{cid}"
    kw.setdefault("attacks", [Attack("blade", "melee", 4, "1d6+2", "slashing")])
    return Creature(
        cid,
        cid.capitalize(),
        side,
        controller=controller,
        dex_mod=dex,
        speeds={"walk": speed, **kw.pop("speeds", {})},
        size=size,
        hp=hp,
        max_hp=hp,
        ac=ac,
        **kw,
    )


def left(h: EncounterHarness, mode: str = "walk") -> int:
    """Feet of movement the active creature has left this turn for a move in ``mode``."""
    assert h.state.active is not None
    return movement_left(h.state, h.creature(h.state.active), mode)


def serve_argv(data_dir: Path, *extra: str) -> list[str]:
    """The command line of a real ``zonekeep serve`` (this interpreter) on a free port,
    keeping its encounters in ``data_dir``, with ``extra`` options."""
    return [
        sys.executable,
        "-m",
        "zonekeep.server._cli",
        "serve",
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        *extra,
    ]


def banner_lines(proc: subprocess.Popen[str], seconds: float = 30.0) -> list[str]:
    """What a ``zonekeep serve`` started with text pipes printed, line by line, up to
    and including ``Stop with Ctrl-C.`` (or until it stopped printing, or ``seconds``
    passed between two lines)."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if line.startswith("Stop with Ctrl-C"):
            break
    return lines
