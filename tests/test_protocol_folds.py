"""The fold rules (issue 32, point 5; SPEC.md, "Keeping state from events"): read from
the rules' reducers, every event type has one, and they do not lie: folding whole
encounters, each event changes only the snapshot keys its rule names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zonekeep.protocol._folds import fold_hows, fold_rules
from zonekeep.sdk import EncounterState, RandomEntropy
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import EVENT_TYPES, replay_steps, state_to_dict
from zonekeep.server._encounter_file import load_encounter
from zonekeep.server._play import open_table, play_to_end

ROOT = Path(__file__).parents[1]
ENCOUNTERS = sorted((ROOT / "examples" / "encounters").glob("*.json"))


def test_every_event_type_has_a_rule() -> None:
    assert set(fold_rules()) == set(EVENT_TYPES)
    assert fold_rules()["damaged"] == ("creatures.<id>.hp",)
    assert set(fold_rules()["round_started"]) == {"phase", "round", "turn_slot", "turn_member"}
    assert fold_rules()["save_made"] == ()  # it records a roll, nothing more


def test_every_event_that_changes_something_says_how() -> None:
    """SPEC.md's fold table is enough to write a fold from (the Node.js example client's
    is written from it): each reducer's docstring says how, in the event's terms."""
    hows = fold_hows()
    assert set(hows) == set(fold_rules())
    for name, keys in fold_rules().items():
        if keys and name != "rewound":
            assert len(hows[name]) > 20, name
            for key in keys:  # each key it changes is named (a creature's by its field)
                if key in ("creatures", "creatures.<id>") or key.endswith("*"):
                    continue
                field = key.removeprefix("creatures.<id>.")
                assert f"`{field}" in hows[name], (name, key)
        elif not keys:
            assert hows[name] == "", name
    assert "code-point" not in hows["damaged"] and "`hp`" in hows["damaged"]


def changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The snapshot keys that differ, a creature's fields as ``creatures.<id>.<field>``."""
    found = set()
    for key in set(before) | set(after):
        if key == "seq" or before.get(key) == after.get(key):
            continue
        if key != "creatures":
            found.add(key)
            continue
        old, new = before[key], after[key]
        for cid in set(old) | set(new):
            if cid not in old or cid not in new:
                found.add("creatures.<id>")
                continue
            found |= {
                f"creatures.<id>.{field}"
                for field in set(old[cid]) | set(new[cid])
                if old[cid].get(field) != new[cid].get(field)
            }
    return found


@pytest.mark.parametrize("path", ENCOUNTERS, ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_folding_a_whole_encounter_changes_only_what_each_rule_names(path: Path, seed: int) -> None:
    engine = Engine()
    table = open_table(engine, load_encounter(path, engine), RandomEntropy(seed))
    play_to_end(table)
    rules = fold_rules()
    before = state_to_dict(EncounterState())
    seen: set[str] = set()
    for event, state in zip(table.events, replay_steps(table.events, engine.catalog), strict=True):
        after = state_to_dict(state)
        allowed = set(rules[event.type])
        if "creatures" in allowed or "creatures.<id>.*" in allowed:
            allowed |= {k for k in changed(before, after) if k.startswith("creatures")}
        extra = changed(before, after) - allowed
        assert not extra, f"{event.type} changed {sorted(extra)}, its rule says {rules[event.type]}"
        seen.add(event.type)
        before = after
    assert {"encounter_created", "turn_started", "turn_ended", "encounter_ended"} <= seen


def test_the_seat_folds_stat_block_fields_are_the_servers() -> None:
    """The reference fold fills in and gives back as null the very fields the server
    empties for a seat that does not control a creature."""
    from zonekeep.protocol.fold import SHEET_EMPTY, SHEET_NUMBERS
    from zonekeep.server._visibility import SHEET_LISTS, SHEET_OBJECTS
    from zonekeep.server._visibility import SHEET_NUMBERS as SERVER_NUMBERS

    # hit_dice and challenge are null for a character too: the fold keeps them as they came.
    assert set(SHEET_NUMBERS) == set(SERVER_NUMBERS) - {"hit_dice", "challenge"}
    assert set(SHEET_EMPTY) == {*SHEET_LISTS, *SHEET_OBJECTS}
    assert all(SHEET_EMPTY[key] == [] for key in SHEET_LISTS)
    assert all(SHEET_EMPTY[key] == {} for key in SHEET_OBJECTS)
