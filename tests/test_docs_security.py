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
        if not file.exists():
            missing.append(path)
            continue
        source = file.read_text(encoding="utf-8")
        missing += [f"{path}::{name}" for name in sorted(names) if not _defines(source, name)]
    assert missing == []


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
