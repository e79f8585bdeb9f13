"""Route every literal deadline in the tests through ``helpers.deadline(N)``.

Wraps the number given to ``fail_after``, ``move_on_after``, Playwright's
``set_default_timeout``, a ``timeout=`` keyword, a ``.wait(N)``/``.join(N)`` and the
``WAIT``/``STEP_MS`` constants, adds ``import helpers`` where it is missing, then
lets ruff sort the imports and format the files it changed. Run from the repository's
root after tests/test_deadlines.py finds a bare deadline (it converted the first 347):

    .venv/bin/python scripts/wrap_deadlines.py

A number that is not a deadline (a MockClock test's own durations) is better written
so that it is not one of these calls (``move_on_at(start + 16.5)``) than left bare.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

DEADLINE_CALLS = {"fail_after", "move_on_after", "set_default_timeout"}
POSITIONAL_TIMEOUT = {"wait", "join"}  # Popen.wait(10), Event.wait(10), Thread.join(30)
KEYWORDS = {"timeout"}
CONSTANTS = {"WAIT", "STEP_MS"}
# MockClock tests whose `timeout=` is the behaviour under test, not a deadline
NO_KEYWORDS = {"tests/test_client.py"}


def is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def spans(tree: ast.AST, rel: str) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if name in DEADLINE_CALLS and node.args and is_number(node.args[0]):
                found.append(node.args[0])
            if (
                name in POSITIONAL_TIMEOUT
                and isinstance(f, ast.Attribute)
                and len(node.args) == 1
                and is_number(node.args[0])
            ):
                found.append(node.args[0])
            if rel not in NO_KEYWORDS:
                found += [
                    k.value for k in node.keywords if k.arg in KEYWORDS and is_number(k.value)
                ]
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in CONSTANTS
            and is_number(node.value)
        ):
            found.append(node.value)
    return found


def offset(lines: list[str], lineno: int, col: int) -> int:
    return sum(len(line) for line in lines[: lineno - 1]) + len(
        lines[lineno - 1].encode()[:col].decode()
    )


def convert(path: Path, root: Path) -> int:
    rel = str(path.relative_to(root))
    text = path.read_text()
    tree = ast.parse(text)
    found = spans(tree, rel)
    if not found:
        return 0
    lines = text.splitlines(keepends=True)
    edits = sorted(
        (
            (
                offset(lines, n.lineno, n.col_offset),
                offset(lines, n.end_lineno or n.lineno, n.end_col_offset or 0),
            )
            for n in found
        ),
        reverse=True,
    )
    for start, end in edits:
        text = text[:start] + f"helpers.deadline({text[start:end]})" + text[end:]
    if rel != "tests/helpers.py" and not any(
        isinstance(n, ast.Import) and any(a.name == "helpers" for a in n.names) for n in tree.body
    ):
        # after the last top-level import; ruff's isort puts it in its place
        last = max(
            n.end_lineno or 0 for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
        )
        lines = text.splitlines(keepends=True)
        lines.insert(last, "import helpers\n")
        text = "".join(lines)
    path.write_text(text)
    return len(found)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    total = 0
    changed: list[str] = []
    for path in sorted([*root.glob("tests/**/*.py"), *root.glob("examples/plugins/*/tests/*.py")]):
        if "node_modules" in path.parts:
            continue
        n = convert(path, root)
        if n:
            print(f"{n:4d} {path.relative_to(root)}")
            changed.append(str(path))
        total += n
    print(total, "deadlines")
    if changed:
        ruff = [sys.executable, "-m", "ruff"]
        subprocess.run([*ruff, "check", "--fix", "--select", "I", "-q", *changed], check=False)
        subprocess.run([*ruff, "format", "-q", *changed], check=True)


if __name__ == "__main__":
    main()
