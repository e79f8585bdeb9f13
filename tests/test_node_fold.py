"""The Node.js example client's reference fold (examples/clients/node/fold.mjs; issue 32,
point 5), written from SPEC.md's fold rules, against the server's own snapshots:

- every recorded session of the conformance kit (GM, player and spectator views: a
  resume, a prompt, a rewind, the end), folded from the view's first snapshot, is the
  snapshot the server gave that view each time it was asked, and at the end;
- whole encounters played to their end (the example encounters, several seeds): after
  every event the fold is the GM's state as the server keeps it.

``node`` is all it needs (the fold has no dependencies). Missing, the tests are skipped,
except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers import deadline, missing_component
from test_serial import HAND_MADE, played, played_arena

from zonekeep.sdk import Event, RandomEntropy
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import EVENT_TYPES, event_to_dict, replay_steps, state_to_dict
from zonekeep.server._encounter_file import load_encounter
from zonekeep.server._play import open_table, play_to_end

ROOT = Path(__file__).resolve().parent.parent
CLIENT_DIR = ROOT / "examples" / "clients" / "node"
SESSIONS = ROOT / "protocol" / "conformance" / "sessions"
ENCOUNTERS = sorted((ROOT / "examples" / "encounters").glob("*.json"))


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        missing_component("node is not installed (the Node.js fold needs Node.js 18+)")
    return node


def fold_check(*args: str, stdin: str | None = None) -> dict[str, Any]:
    """Run ``node fold_check.mjs ARGS`` and return its report."""
    done = subprocess.run(
        [_node(), "fold_check.mjs", *args],
        cwd=CLIENT_DIR,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("view", ["gm", "player", "spectator"])
def test_the_node_fold_of_each_recorded_view_is_the_servers_snapshot(view: str) -> None:
    report = fold_check("session", str(SESSIONS / f"{view}.jsonl"))
    assert report["mismatches"] == []
    assert report["checked"] >= 1  # the snapshots asked for during the session
    assert report["final_equal"] is True
    assert report["valid"] is True and report["phase"] == "ended"
    assert report["invalid_seen"] is True  # the rewind, until its snapshot
    assert report["events"] >= 20
    assert report["unknown"] == []


def played_log(path: Path, seed: int) -> tuple[dict[str, Any], list[str]]:
    """An example encounter played to its end: the input of ``fold_check.mjs log``
    (from the state after ``encounter_created``), and the event types in it."""
    engine = Engine()
    table = open_table(engine, load_encounter(path, engine), RandomEntropy(seed))
    play_to_end(table)
    return log_of(list(table.events), engine.catalog)


def log_of(events: list[Event], catalog: Any = None) -> tuple[dict[str, Any], list[str]]:
    """The input of ``fold_check.mjs log`` for ``events`` (from the state after the
    first, ``encounter_created``), and the event types in it."""
    states = [state_to_dict(s) for s in replay_steps(events, catalog)]
    data = json.loads(
        json.dumps(
            {
                "seq": 1,
                "snapshot": states[0],
                "events": [
                    {"seq": seq, "event": event_to_dict(event), "expected": state}
                    for seq, (event, state) in enumerate(zip(events, states, strict=True), 1)
                    if seq > 1
                ],
            }
        )
    )
    return data, [e.type for e in events]


@pytest.mark.parametrize("path", ENCOUNTERS, ids=lambda p: p.stem)
def test_the_node_fold_follows_whole_played_encounters_event_by_event(path: Path) -> None:
    seen: set[str] = set()
    for seed in (1, 2):
        data, types = played_log(path, seed)
        plugin_events = any("." in t for t in types)
        report = fold_check("log", stdin=json.dumps(data))
        assert report["checked"] == len(types) - 1
        mismatches = [
            m
            for m in report["mismatches"]
            # A plugin's event changes plugin_state as its plugin folds it (fold.mjs).
            if not (plugin_events and m["keys"] == ["plugin_state"])
        ]
        assert mismatches == [], (path.stem, seed)
        assert report["unknown"] == []
        seen |= set(types)
    assert {"turn_started", "attack_made", "damaged", "zone_entered", "encounter_ended"} <= seen


def with_hand_made() -> tuple[Event, ...]:
    """``played()`` and then test_serial.py's hand-made events (the server's dice
    events, twice, and the plugin host's), but ``rewound``, which only a snapshot folds."""
    extra = [e for t, e in HAND_MADE.items() if t != "rewound"]
    return (*played(), *extra, *extra)


@pytest.mark.parametrize("log", [played, played_arena, with_hand_made], ids=lambda f: f.__name__)
def test_the_node_fold_follows_every_built_in_event_type(
    log: Callable[[], Sequence[Event]],
) -> None:
    """The logs of test_serial.py, made to have every event type the built-in rules
    emit between them (conditions with effects, a roll-off, notes, hazards, overrides,
    a creature added, positions, adjacency, area effects...)."""
    data, types = log_of(list(log()))
    report = fold_check("log", stdin=json.dumps(data))
    assert report["checked"] == len(types) - 1
    assert report["mismatches"] == []
    assert report["unknown"] == []


def test_the_logs_cover_every_event_type_but_rewound() -> None:
    """What the tests above fold between them: every event type (``rewound`` is the
    recorded sessions': the snapshot after it replaces the fold)."""
    seen = {t for f in (played, played_arena, with_hand_made) for t in log_of(list(f()))[1]}
    for path in ENCOUNTERS:
        seen |= set(played_log(path, 1)[1])
    assert set(EVENT_TYPES) - seen == {"rewound"}


def test_a_wrong_fold_is_caught() -> None:
    """The comparison is real: a state the server did not reach is reported."""
    data, _ = played_log(ENCOUNTERS[0], 1)
    damaged = next(e for e in data["events"] if e["event"]["type"] == "damaged")
    damaged["expected"]["creatures"][damaged["event"]["creature"]]["hp"] += 1
    report = fold_check("log", stdin=json.dumps(data))
    assert report["mismatches"][0] == {
        "seq": damaged["seq"],
        "type": "damaged",
        "keys": [f"creatures.{damaged['event']['creature']}"],
    }
