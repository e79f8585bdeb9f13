"""The spells coverage table (issue 31, point 4): docs/characters.md holds what
scripts/spells_coverage.py writes; every spell is implemented or marked "GM
adjudicates" with a reason; every spell issue 31 names is in the table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from zonekeep.plugins.spells import GM_SPELLS, SPELLS

ROOT = Path(__file__).resolve().parent.parent

#: The spells issue 31 names, in its order.
NAMED = [
    "fire-bolt",
    "sacred-flame",
    "eldritch-blast",
    "ray-of-frost",
    "shocking-grasp",
    "magic-missile",
    "burning-hands",
    "thunderwave",
    "shield",
    "healing-word",
    "cure-wounds",
    "bless",
    "bane",
    "guiding-bolt",
    "sleep",
    "fireball",
    "lightning-bolt",
    "spirit-guardians",
    "hold-person",
    "web",
    "misty-step",
    "scorching-ray",
    "shatter",
    "entangle",
    "faerie-fire",
    "spiritual-weapon",
    "counterspell",
    "haste",
    "slow",
    "dispel-magic",
]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "spells_coverage", ROOT / "scripts" / "spells_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["spells_coverage"] = module
    spec.loader.exec_module(module)
    return module


coverage = _script()


@pytest.mark.docs
def test_the_table_in_docs_characters_is_what_the_script_writes() -> None:
    text = (ROOT / "docs" / "characters.md").read_text(encoding="utf-8")
    assert coverage.written(text) == text, "run scripts/spells_coverage.py"


def test_every_spell_is_implemented_or_marked_with_a_reason() -> None:
    rows = coverage.rows()
    assert rows
    for level, name, status, why in rows:
        assert 0 <= level <= 9, name
        assert status in ("implemented", "GM adjudicates"), name
        assert why.strip(), f"{name}: no description or reason"
    assert not set(SPELLS) & set(GM_SPELLS)


def test_every_spell_the_issue_names_has_a_row() -> None:
    missing = [s for s in NAMED if s not in SPELLS and s not in GM_SPELLS]
    assert missing == []


def test_a_spell_neither_implemented_nor_marked_fails_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import attrs

    broken = attrs.evolve(SPELLS["fire-bolt"], how="gm", gm=None)
    monkeypatch.setitem(SPELLS, "fire-bolt", broken)
    rows = {name: why for _level, name, _status, why in coverage.rows()}
    assert rows["Fire Bolt"] == ""  # the check above would fail on it
