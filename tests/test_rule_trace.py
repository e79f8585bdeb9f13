"""Every rule sentence traced to its tests (docs/rules.md, "Rule sentences").

The sentences are data (docs/rule-sentences.toml); tests name the sentences they check
with ``@pytest.mark.rule(...)``; scripts/rule_table.py writes the table of docs/rules.md
from both. These checks fail when a marker names a sentence that does not exist, when
a normative sentence has no test, when a section has no test through a real server,
and when the table is stale.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
#: The rule texts themselves are not part of zonekeep; a developer who has them beside
#: the checkout (``../shared/rules``, or a worktree's ``../../shared/rules``) or names
#: their folder in ZONEKEEP_RULE_TEXTS gets one more check (never in CI).
_CANDIDATES = [os.environ.get("ZONEKEEP_RULE_TEXTS", ""), "../shared/rules", "../../shared/rules"]
SOURCE = next(
    (ROOT / c for c in _CANDIDATES if c and (ROOT / c / "arena.txt").is_file()),
    ROOT / "../shared/rules",
)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rule_table", ROOT / "scripts" / "rule_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("rule_table", module)
    spec.loader.exec_module(module)
    return module


rule_table = _load()


def test_every_sentence_is_well_formed() -> None:
    sections, sentences = rule_table.load_sentences()
    assert len(sentences) == 211
    assert set(sections) == {s.section for s in sentences.values()}
    for s in sentences.values():
        if s.kind == "explanatory":
            assert not s.ruling, f"{s.id}: an explanatory sentence needs no ruling"


def test_every_marker_names_a_sentence() -> None:
    t = rule_table.trace()
    assert t.unknown == []
    assert sum(len(tests) for tests in t.tests.values()) > 200  # the markers were read


def test_every_normative_sentence_has_a_test_and_each_section_one_through_a_server() -> None:
    assert rule_table.problems(rule_table.trace()) == []


def test_the_checks_catch_what_they_are_for() -> None:
    t = rule_table.trace()
    t.unknown.append(("tests/test_x.py::test_y", "arena.txt:99.1"))
    first = "arena.txt:4.1"
    section = t.sentences[first].section
    # Only the flanking section's own tests stand between it and a failure.
    t.tests = {sid: tests for sid, tests in t.tests.items() if t.sentences[sid].section != section}
    found = rule_table.problems(t)
    assert "tests/test_x.py::test_y names arena.txt:99.1, which is not a sentence" in found
    assert f"{first} is normative but no test is marked with it" in found
    assert f"section {section} (Flanking) has no end-to-end test (tests/e2e)" in found


def test_the_table_in_docs_rules_md_is_current() -> None:
    doc = rule_table.DOC.read_text(encoding="utf-8")
    assert rule_table.render(doc, rule_table.trace()) == doc, (
        "docs/rules.md's rule-sentence table is stale: run .venv/bin/python scripts/rule_table.py"
    )


def test_a_marker_reads_every_id_of_a_decorator(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        "import pytest\n\n"
        '@pytest.mark.rule("arena.txt:4.1", "arena.txt:4.2")\n'
        '@pytest.mark.parametrize("x", [1])\n'
        "async def test_one(x):\n    pass\n\n"
        "def test_two():\n    pass\n",
        encoding="utf-8",
    )
    found = rule_table.markers(tmp_path, tmp_path)
    assert found == {"test_a.py::test_one": ["arena.txt:4.1", "arena.txt:4.2"]}


@pytest.mark.skipif(
    not (SOURCE / "arena.txt").is_file(), reason="a developer aid: the rule texts are not here"
)
def test_the_ids_are_the_sentences_of_the_texts() -> None:
    _, sentences = rule_table.load_sentences()
    assert set(sentences) == rule_table.source_ids(SOURCE)
