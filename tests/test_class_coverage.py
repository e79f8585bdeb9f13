"""The class features against what the installed plugins implement (issue 31, point 4):
every feature of every class of the ``zonekeep.classes`` data (SRD 5.1, levels 1 to 5)
is implemented (a plugin the engine loads by default declares its id for its place),
carried by the character model (``sheet``, with how), or marked "GM adjudicates" with
its reason, and never two of these; the coverage table in docs/characters.md is what
scripts/class_coverage.py writes; the automated share is at least :data:`FLOOR`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "class_coverage", ROOT / "scripts" / "class_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["class_coverage"] = module
    spec.loader.exec_module(module)
    return module


coverage = _script()

#: The share of the class features automated today (by a plugin or by the character
#: model), in percent: raise it as features are implemented (never lower it).
FLOOR = 62.5
#: The class features a plugin implements today, by id.
IMPLEMENTED = {
    "second-wind",
    "action-surge",
    "improved-critical",
    "extra-attack",
    "sneak-attack",
    "cunning-action",
    "spellcasting",
}


def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(coverage.DATA.read_text(encoding="utf-8"))
    return data


def test_every_class_feature_is_implemented_in_the_sheet_or_the_gms_with_a_reason() -> None:
    implemented = coverage.implemented_ids()
    problems = [
        f"{cls} {feature['id']}"
        for cls, feature, state in coverage.rows(_data(), implemented)
        if state == "problem"
    ]
    assert problems == [], "neither implemented nor marked (or both): " + ", ".join(problems)
    done = {
        f["id"] for _, f, state in coverage.rows(_data(), implemented) if state == "implemented"
    }
    assert done == IMPLEMENTED


def test_the_four_first_classes_have_their_features_at_levels_1_to_5() -> None:
    data = _data()
    assert [(c["id"], c["subclass"]) for c in data["classes"]] == [
        ("fighter", "champion"),
        ("rogue", "thief"),
        ("cleric", "life"),
        ("wizard", "evocation"),
    ]
    for cls in data["classes"]:
        levels = {f["level"] for f in cls["features"]}
        assert levels <= {1, 2, 3, 4, 5}
        assert any(
            f["id"] == "ability-score-improvement" and f["level"] == 4 for f in cls["features"]
        )
        for feature in cls["features"]:
            assert feature["text"].strip() and len(feature["text"]) <= 400
            assert feature.get("kind", "trait") in ("trait", "action", "bonus_action", "reaction")


def test_the_automated_share_is_at_least_the_floor() -> None:
    t = coverage.totals(_data(), coverage.implemented_ids())
    share = coverage.percent(t["implemented"] + t["sheet"], t["features"])
    print(
        f"class features: {t['features']}, implemented {t['implemented']}, in the sheet "
        f"{t['sheet']}, GM {t['gm']}: {share}% automated"
    )
    assert share >= FLOOR


@pytest.mark.docs
def test_the_coverage_table_in_docs_characters_is_generated() -> None:
    assert coverage.main(["--check"]) == 0, "run scripts/generate"


def test_a_feature_neither_implemented_nor_marked_is_a_problem() -> None:
    feature = {"id": "made-up", "name": "Made Up", "level": 1, "kind": "trait", "text": "x"}
    assert coverage.status(feature, frozenset()) == "problem"
    assert coverage.status({**feature, "gm": "why"}, frozenset()) == "gm"
    both = {**feature, "gm": "why"}
    assert coverage.status(both, frozenset({("trait", "made-up")})) == "problem"
