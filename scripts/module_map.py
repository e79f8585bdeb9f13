"""Write the server's module map into docs/server.md from the code itself.

Each module of ``server/`` is listed with the first paragraph of its docstring and the
server modules it imports (read from its source, function-level imports included), in
the order of the server's layers contract in pyproject.toml, bottom layer first: a
module imports only modules listed before it. Run by scripts/generate;
tests/test_module_map.py fails when docs/server.md is not what this writes.

    python scripts/module_map.py          # rewrite the map in docs/server.md
    python scripts/module_map.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "server.md"
BEGIN = "<!-- module map: written by scripts/module_map.py from the modules' docstrings -->"
END = "<!-- end of the module map -->"


def _layers() -> list[list[str]]:
    """The server's layers (pyproject.toml's import-linter contract), bottom first."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers" and contract.get("containers") == ["zonekeep.server"]:
            layers = [
                sorted(m.strip() for m in re.split(r"[|:]", layer)) for layer in contract["layers"]
            ]
            return layers[::-1]
    raise SystemExit("pyproject.toml has no layers contract for zonekeep.server")


def _markdown(text: str) -> str:
    """reST in a docstring as Markdown: ``x`` and :role:`~a.b.x` become `x`."""
    text = re.sub(r":\w+:`~?([^`]+)`", lambda m: "`" + m.group(1).rsplit(".", 1)[-1] + "`", text)
    text = text.replace("``", "`")
    return " ".join(text.split())


def _summary(tree: ast.Module, name: str) -> str:
    doc = ast.get_docstring(tree)
    if not doc:
        raise SystemExit(f"server/{name}.py has no docstring")
    return _markdown(doc.split("\n\n", 1)[0]).replace("|", "\\|")


def _imports(tree: ast.Module, modules: set[str]) -> list[str]:
    """The server modules ``tree`` imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 or base.startswith("zonekeep.server"):
                tail = base.removeprefix("zonekeep.server").lstrip(".")
                if tail:
                    found.add(tail.split(".")[0])
                else:  # from . import _x
                    found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("zonekeep.server."):
                    found.add(alias.name.split(".")[2])
    return sorted(found & modules)


def module_map() -> str:
    """The map: a sentence, then one table row per module."""
    layers = _layers()
    modules = {m for layer in layers for m in layer}
    rows = [
        "| module | its job (the module's docstring) | server modules it imports |",
        "| --- | --- | --- |",
    ]
    for layer in layers:
        for name in layer:
            tree = ast.parse((ROOT / "server" / f"{name}.py").read_text())
            imports = ", ".join(f"`{m}`" for m in _imports(tree, modules)) or "—"
            rows.append(f"| `{name}.py` | {_summary(tree, name)} | {imports} |")
    return "\n".join(
        [
            BEGIN,
            "",
            "Bottom layer first: a module imports only modules listed before it, and those of "
            "its own layer never import each other (import-linter checks both, from the "
            "layers in pyproject.toml). `__init__.py` re-exports the public names.",
            "",
            *rows,
            "",
            END,
        ]
    )


def current(doc: str) -> str:
    """``doc`` (docs/server.md's text) with the map as :func:`module_map` writes it."""
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    return doc[:start] + module_map() + doc[end:]


def main(argv: list[str]) -> int:
    doc = DOC.read_text()
    fresh = current(doc)
    if "--check" in argv:
        if fresh != doc:
            print("docs/server.md's module map is stale: run scripts/generate", file=sys.stderr)
            return 1
        return 0
    if fresh != doc:
        DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
