"""docs/server.md's module map is what scripts/module_map.py writes from the code: every
server module, its docstring's first paragraph, the server modules it imports; and the
``zonekeep serve`` synopses name every flag."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from zonekeep.server._cli import build_parser

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("module_map", ROOT / "scripts" / "module_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_map_in_docs_server_md_is_current() -> None:
    script = _script()
    doc = (ROOT / "docs" / "server.md").read_text()
    assert script.current(doc) == doc, "run scripts/generate"


def test_the_map_lists_every_server_module_once_with_its_imports() -> None:
    made = _script().module_map()
    listed = re.findall(r"^\| `(\w+)\.py` \|", made, flags=re.MULTILINE)
    on_disk = sorted(p.stem for p in (ROOT / "server").glob("*.py") if p.stem != "__init__")
    assert sorted(listed) == on_disk and len(listed) == len(set(listed))
    row = next(line for line in made.splitlines() if line.startswith("| `_nodes.py`"))
    assert row.endswith("| `_metrics`, `_postgres`, `_store` |")
    # Each module's imports come before it in the list.
    for i, name in enumerate(listed):
        line = next(x for x in made.splitlines() if x.startswith(f"| `{name}.py`"))
        imported = re.findall(r"`(_\w+)`", line.rsplit("|", 2)[1])
        assert set(imported) <= set(listed[:i]), (name, imported)


def test_a_stale_map_is_found() -> None:
    script = _script()
    doc = (ROOT / "docs" / "server.md").read_text()
    stale = doc.replace("| `_nodes.py` | Several nodes", "| `_nodes.py` | Some nodes")
    assert stale != doc and script.current(stale) == doc


def _serve_options() -> set[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    serve = sub.choices["serve"]
    return {o for a in serve._actions for o in a.option_strings if o.startswith("--")} - {"--help"}


def test_the_serve_synopses_name_every_option() -> None:
    """README's and docs/server.md's ``zonekeep serve [...]`` lines list all its flags."""
    options = _serve_options()
    assert len(options) == 14
    for doc in ("README.md", "docs/server.md"):
        text = (ROOT / doc).read_text()
        start = text.index("zonekeep serve [")
        synopsis = text[start : text.index("```", start)]
        synopsis = synopsis.split("\nzonekeep ", 1)[0]  # up to the next command
        assert set(re.findall(r"\[(--[\w-]+)", synopsis)) == options, doc
