"""The rule-sentence table of docs/rules.md: each sentence of the two rule texts, what
it requires in zonekeep's words, the ruling that settles it and the tests that check it.

The sentences are data (docs/rule-sentences.toml); the tests name the sentences they
check with ``@pytest.mark.rule("<text>:<paragraph>.<sentence>", ...)``, a decorator line
of its own above the test function. This script reads both (the tests by their syntax
tree: nothing is imported or run) and writes the table between the GENERATED markers
of docs/rules.md.

Usage (from the repository root)::

    .venv/bin/python scripts/rule_table.py           # rewrite the table
    .venv/bin/python scripts/rule_table.py --check   # exit 1 if the table is stale or a
                                                     # sentence or marker is wrong

tests/test_rule_trace.py runs the same checks.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "rule-sentences.toml"
DOC = ROOT / "docs" / "rules.md"
TESTS = ROOT / "tests"
E2E = TESTS / "e2e"
BEGIN = "<!-- BEGIN GENERATED: rule sentences (python scripts/rule_table.py) -->"
END = "<!-- END GENERATED: rule sentences -->"
KINDS = ("normative", "explanatory")
ID = re.compile(r"^(encounter|arena)\.txt:([1-9][0-9]*)\.([1-9][0-9]*)$")


@dataclass(frozen=True)
class Sentence:
    id: str
    section: str
    kind: str
    says: str
    ruling: str = ""

    @property
    def key(self) -> tuple[int, int, int]:
        """Sort order: the encounter text first, then paragraph and sentence."""
        match = ID.match(self.id)
        assert match is not None
        return (0 if match[1] == "encounter" else 1, int(match[2]), int(match[3]))


@dataclass
class Trace:
    sections: dict[str, str]
    sentences: dict[str, Sentence]
    #: sentence id -> the tests marked with it ("tests/x.py::test_y")
    tests: dict[str, list[str]] = field(default_factory=dict)
    #: (test, id) for every marker naming an id that is not a sentence
    unknown: list[tuple[str, str]] = field(default_factory=list)


def load_sentences(path: Path = DATA) -> tuple[dict[str, str], dict[str, Sentence]]:
    """The sections and sentences of ``path``; ``ValueError`` naming what is malformed."""
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    sections: dict[str, str] = doc["sections"]
    found: dict[str, Sentence] = {}
    for sid, entry in doc["sentences"].items():
        if not ID.match(sid):
            raise ValueError(f"{sid!r} is not an id <text>.txt:<paragraph>.<sentence>")
        unknown = set(entry) - {"section", "kind", "says", "ruling"}
        if unknown:
            raise ValueError(f"{sid}: unknown keys {sorted(unknown)}")
        if entry.get("section") not in sections:
            raise ValueError(f"{sid}: section {entry.get('section')!r} is not in [sections]")
        if entry.get("kind") not in KINDS:
            raise ValueError(f"{sid}: kind is one of {KINDS}, not {entry.get('kind')!r}")
        if not str(entry.get("says", "")).strip():
            raise ValueError(f"{sid}: 'says' is empty")
        found[sid] = Sentence(
            sid, entry["section"], entry["kind"], entry["says"], entry.get("ruling", "")
        )
    return sections, found


def _rule_ids(decorator: ast.expr) -> list[str] | None:
    """The ids of a ``pytest.mark.rule(...)`` decorator, or None for another decorator."""
    if not isinstance(decorator, ast.Call):
        return None
    func = decorator.func
    if not (isinstance(func, ast.Attribute) and func.attr == "rule"):
        return None
    mark = func.value
    if not (isinstance(mark, ast.Attribute) and mark.attr == "mark"):
        return None
    ids = []
    for arg in decorator.args:
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            raise ValueError(f"line {decorator.lineno}: a rule marker takes string ids only")
        ids.append(arg.value)
    return ids


def markers(tests: Path = TESTS, root: Path = ROOT) -> dict[str, list[str]]:
    """Every test function of ``tests`` marked with rule ids: ``path::name`` (relative to
    ``root``) -> ids."""
    found: dict[str, list[str]] = {}
    for path in sorted(tests.rglob("test_*.py")):
        if "node_modules" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                ids = _rule_ids(decorator)
                if ids is not None:
                    found.setdefault(f"{rel}::{node.name}", []).extend(ids)
    return found


def trace() -> Trace:
    sections, sentences = load_sentences()
    result = Trace(sections, sentences)
    for test, ids in markers().items():
        for sid in ids:
            if sid in sentences:
                result.tests.setdefault(sid, []).append(test)
            else:
                result.unknown.append((test, sid))
    return result


def problems(t: Trace) -> list[str]:
    """What is wrong: a marker naming no sentence, a normative sentence without a test,
    an explanatory one with a test, a section without an end-to-end test."""
    found = [f"{test} names {sid}, which is not a sentence" for test, sid in t.unknown]
    for s in sorted(t.sentences.values(), key=lambda s: s.key):
        tested = t.tests.get(s.id, [])
        if s.kind == "normative" and not tested:
            found.append(f"{s.id} is normative but no test is marked with it")
        if s.kind == "explanatory" and tested:
            found.append(f"{s.id} is explanatory but {tested[0]} is marked with it")
    e2e = E2E.relative_to(ROOT).as_posix() + "/"
    for key, title in t.sections.items():
        ids = {s.id for s in t.sentences.values() if s.section == key}
        if not any(test.startswith(e2e) for sid in ids for test in t.tests.get(sid, [])):
            found.append(f"section {key} ({title}) has no end-to-end test (tests/e2e)")
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(t: Trace) -> str:
    """The markdown table: one row per sentence, in the texts' order."""
    lines = [
        BEGIN,
        "",
        "| id | section | requires (or why it only explains) | ruling | tests |",
        "|---|---|---|---|---|",
    ]
    for s in sorted(t.sentences.values(), key=lambda s: s.key):
        says = s.says if s.kind == "normative" else f"*explains:* {s.says}"
        tests = "<br>".join(
            f"`{test.removeprefix('tests/')}`" for test in sorted(t.tests.get(s.id, []))
        )
        cells = [f"`{s.id}`", t.sections[s.section], _cell(says), _cell(s.ruling), tests]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", END]
    return "\n".join(lines)


def render(doc: str, t: Trace) -> str:
    """``doc`` with its generated table replaced by the current one."""
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    return doc[:start] + table(t) + doc[end:]


#: A sentence ends at ".", "!" or "?" (perhaps closed by a quote or bracket) followed by
#: white space and a capital, an opening quote or bracket.
_SPLIT = re.compile(r"(?<=[.!?])[\"\u201d)]?\s+(?=[A-Z(\u201c\"])")


def source_ids(folder: Path) -> set[str]:
    """The sentence ids of the two texts in ``folder`` (a developer aid: the texts are
    not part of zonekeep, and CI never has them)."""
    ids: set[str] = set()
    for name in ("encounter.txt", "arena.txt"):
        lines = (folder / name).read_text(encoding="utf-8").split("\n")
        for p, line in enumerate(lines, 1):
            parts = [x for x in _SPLIT.split(line.strip()) if x.strip()]
            ids.update(f"{name}:{p}.{s}" for s in range(1, len(parts) + 1))
    return ids


def main(argv: list[str]) -> int:
    t = trace()
    doc = DOC.read_text(encoding="utf-8")
    new = render(doc, t)
    wrong = problems(t)
    for line in wrong:
        print(line, file=sys.stderr)
    if "--check" in argv:
        if new != doc:
            print("docs/rules.md: the rule-sentence table is stale", file=sys.stderr)
            return 1
        return 1 if wrong else 0
    if new != doc:
        DOC.write_text(new, encoding="utf-8")
        print("wrote: docs/rules.md")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
