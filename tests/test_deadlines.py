"""Every deadline in the tests goes through ``helpers.deadline`` (one scale factor,
``ZONEKEEP_TEST_TIMEOUT_SCALE``, for a loaded machine): a ``fail_after(5)`` written
bare fails here, with its file and line."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import helpers

ROOT = Path(__file__).resolve().parent.parent
#: The calls whose first argument is a deadline (trio's two, and Playwright's default).
DEADLINE_CALLS = frozenset({"fail_after", "move_on_after", "set_default_timeout"})


def _is_literal(node: ast.expr) -> bool:
    """A number written in the source: ``5``, ``-1``, ``2 * 60``, ``15_000``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) and _is_literal(node.right)
    return False


def bare_deadlines(source: str, name: str = "<source>") -> list[str]:
    """``name:line`` of every deadline call in ``source`` given a literal number."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in DEADLINE_CALLS and _is_literal(node.args[0]):
            found.append(f"{name}:{node.lineno}")
    return sorted(found, key=lambda hit: int(hit.rpartition(":")[2]))


def test_the_scan_finds_a_bare_deadline_and_passes_a_scaled_one() -> None:
    source = (
        "with trio.fail_after(5):\n    pass\n"
        "with move_on_after(2 * 60):\n    pass\n"
        "page.set_default_timeout(15_000)\n"
        "with trio.fail_after(helpers.deadline(5)):\n    pass\n"
        "with trio.move_on_after(WAIT):\n    pass\n"
    )
    assert bare_deadlines(source) == ["<source>:1", "<source>:3", "<source>:5"]


def test_no_test_writes_a_bare_deadline() -> None:
    files = [
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("examples/plugins/*/tests/**/*.py"),
    ]
    files = [f for f in files if "node_modules" not in f.parts]
    assert len(files) > 100  # the scan sees the suite
    found = [
        hit
        for f in sorted(files)
        for hit in bare_deadlines(f.read_text(), str(f.relative_to(ROOT)))
    ]
    assert found == [], (
        "wrap these deadlines in helpers.deadline(seconds) "
        "(scripts/wrap_deadlines.py does it):\n" + "\n".join(found)
    )


def test_the_scale_comes_from_the_environment() -> None:
    env = {**os.environ, "ZONEKEEP_TEST_TIMEOUT_SCALE": "4"}
    out = subprocess.run(
        [sys.executable, "-c", "import helpers; print(helpers.deadline(5))"],
        cwd=ROOT / "tests",
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=helpers.deadline(60),
    )
    assert out.stdout.strip() == "20.0"
    assert helpers.deadline(5) == 5 * helpers.TIMEOUT_SCALE
