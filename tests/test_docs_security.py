"""docs/security.md's threat-model table against the tests and the code: every test it
names exists (a renamed or removed test makes the table stale), every point of issues
14 and 27 has its row, and the default node id has the form the docs give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zonekeep.server._nodes import default_node_id

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
SECURITY = ROOT / "docs" / "security.md"

#: Test files of issue 27 written on other branches at the same time as the table: the
#: table names them without a test until they are merged. Once such a file exists, the
#: table must name its tests (``file::test``).
AWAITING_MERGE = {
    "tests/e2e/test_hardening_game.py",
}

#: Tests the table names that were merged into main after this branch left it (issue 27,
#: points 1, 2, 3, 9 and 10): missing here, present once merged. The check below fails
#: as soon as one of them exists, so that this list is emptied at the merge and every
#: name is checked from then on.
NOT_YET_MERGED: set[str] = set()

REFERENCE = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def table() -> list[list[str]]:
    """The rows of the threat-model table, each its five cells."""
    text = SECURITY.read_text(encoding="utf-8")
    section = text.split("### The threat-model table", 1)[1]
    section = re.split(r"^#{2,3} ", section, maxsplit=1, flags=re.M)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    cells = [[c.strip() for c in row.strip().strip("|").split(" | ")] for row in rows]
    assert cells[0] == ["#", "who attacks", "through what", "what stops it", "test"]
    return cells[1:]


def test_every_row_has_its_five_cells_and_a_test() -> None:
    rows = table()
    for row in rows:
        assert len(row) == 5, row
        assert all(row), row
        assert REFERENCE.search(row[4]), row[0]
    ids = [row[0] for row in rows]
    assert len(ids) == len(set(ids))
    expected = [f"27.{n}" for n in range(1, 20)] + [f"14.{n}" for n in range(1, 17)]
    assert [i for i in ids if i in expected] == expected


def test_every_test_the_threat_model_names_exists() -> None:
    named: dict[str, set[str]] = {}
    for row in table():
        for path, name in REFERENCE.findall(row[4]):
            named.setdefault(path, set())
            if name:
                named[path].add(name)
    missing = []
    for path, names in sorted(named.items()):
        file = ROOT / path
        source = file.read_text(encoding="utf-8") if file.exists() else None
        if source is None and path not in AWAITING_MERGE and not names <= _pending(path):
            missing.append(path)
        if source is not None and path in AWAITING_MERGE and not names:
            missing.append(f"{path}: merged, so name its tests (file::test) in the table")
        for name in sorted(names):
            found = source is not None and _defines(source, name)
            if not found and f"{path}::{name}" not in NOT_YET_MERGED:
                missing.append(f"{path}::{name}")
            if found and f"{path}::{name}" in NOT_YET_MERGED:
                missing.append(f"{path}::{name}: merged, so remove it from NOT_YET_MERGED")
    assert missing == []


def _pending(path: str) -> set[str]:
    return {ref.split("::", 1)[1] for ref in NOT_YET_MERGED if ref.startswith(path + "::")}


def _defines(source: str, name: str) -> bool:
    return re.search(rf"^(async )?def {name}\(", source, re.M) is not None


def test_the_default_node_id_has_the_documented_form() -> None:
    """docs/scale-out.md and the node_id setting's doc: the machine's name, the process
    id and six random hex digits."""
    import os

    node = default_node_id()
    assert re.fullmatch(rf"[A-Za-z0-9._-]{{1,40}}-{os.getpid()}-[0-9a-f]{{6}}", node), node
    assert default_node_id() != node  # new at every start
    scale_out = (ROOT / "docs" / "scale-out.md").read_text(encoding="utf-8")
    configuration = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for text in (scale_out, configuration):
        assert "the process id and six random hex digits" in " ".join(text.split())
