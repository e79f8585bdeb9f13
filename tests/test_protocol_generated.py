"""Every generated file is current, and the generator's sources are complete.

The JSON Schemas in protocol/schemas/ and every table
of protocol/SPEC.md are written by ``python -m zonekeep.protocol._generate`` from the
attrs classes; these tests fail when one is stale or hand-edited, and when a class the
generator reads lacks what a table needs (a field's meaning, an event's docstring).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, get_args

import attrs
import pytest

from zonekeep import protocol
from zonekeep.protocol import _generate
from zonekeep.sdk import Arena, EncounterState
from zonekeep.sdk.host import EVENT_TYPES

ROOT = Path(__file__).resolve().parent.parent


def test_every_generated_file_is_current() -> None:
    stale = _generate.stale_files(ROOT)
    assert stale == [], (
        f"out of date: {', '.join(stale)}; run {_generate.COMMAND} (or scripts/generate)"
    )


def _copy_of_the_generated_files(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "protocol" / "schemas", tmp_path / "protocol" / "schemas")
    shutil.copy(ROOT / "protocol" / "SPEC.md", tmp_path / "protocol" / "SPEC.md")
    shutil.copy(ROOT / "protocol" / "asyncapi.yaml", tmp_path / "protocol" / "asyncapi.yaml")
    return tmp_path


def test_check_names_a_stale_file_and_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy_of_the_generated_files(tmp_path)
    assert _generate.main(["--check"], root=root) == 0
    spec = root / "protocol" / "SPEC.md"
    spec.write_text(spec.read_text().replace("| `token` | string |", "| `token` | text |", 1))
    schema = root / "protocol" / "schemas" / "strict" / "ping.result.schema.json"
    schema.write_text(schema.read_text().replace('"additionalProperties": false', "", 1))
    stray = root / "protocol" / "schemas" / "handmade.schema.json"
    stray.write_text("{}")
    capsys.readouterr()
    assert _generate.main(["--check"], root=root) == 1
    out = capsys.readouterr().out
    for rel in ("protocol/SPEC.md", "protocol/schemas/strict/ping.result.schema.json"):
        assert f"out of date: {rel}" in out
    assert "out of date: protocol/schemas/handmade.schema.json" in out
    assert "run python -m zonekeep.protocol._generate" in out
    assert _generate.main([], root=root) == 0
    assert not stray.exists()
    assert _generate.stale_files(root) == []
    assert spec.read_text() == (ROOT / "protocol" / "SPEC.md").read_text()


def test_every_table_of_the_spec_is_generated() -> None:
    inside = None
    for number, line in enumerate((ROOT / "protocol" / "SPEC.md").read_text().splitlines(), 1):
        if line.startswith("<!-- BEGIN GENERATED: "):
            assert inside is None, f"line {number}: a block inside a block"
            inside = line
        elif line.startswith("<!-- END GENERATED: "):
            assert inside is not None, f"line {number}: an end without a beginning"
            inside = None
        elif line.startswith("|"):
            assert inside is not None, f"SPEC.md line {number} is a hand-written table row"
    assert inside is None


def test_every_schema_carries_the_generated_mark() -> None:
    for strict in (True, False):
        for name in protocol.schema_names(strict=strict):
            assert protocol.schema(name, strict=strict)["$comment"].startswith(_generate.MARK)


def test_every_event_says_what_happened() -> None:
    for name, cls in EVENT_TYPES.items():
        doc = cls.__doc__ or ""
        assert doc and not doc.startswith(cls.__name__ + "("), f"{name} has no docstring"
    rows = _generate.events_table().splitlines()[2:]
    for row in rows:
        meaning = row.rstrip(" |").rsplit(" | ", 1)[1]
        assert meaning.strip(), row


def _message_classes() -> list[type]:
    roots: list[type] = [
        protocol.Request,
        protocol.Response,
        protocol.ErrorResponse,
        *(c for pair in protocol.METHODS.values() for c in pair),
        *protocol.NOTIFICATIONS.values(),
    ]
    found: list[type] = []

    def visit(tp: Any) -> None:
        for arg in get_args(tp):
            visit(arg)
        if isinstance(tp, type) and attrs.has(tp) and tp not in found:
            found.append(tp)
            for hint in typing.get_type_hints(tp).values():
                visit(hint)

    for cls in roots:
        visit(cls)
    return found


def test_every_message_field_has_a_meaning() -> None:
    classes = _message_classes()
    assert protocol.Limits in classes and protocol.CommandParamInfo in classes
    for cls in classes:
        assert cls.__doc__, cls.__name__
        for field in attrs.fields(cls):
            assert field.metadata.get("doc"), f"{cls.__name__}.{field.name} has no doc(...)"


def test_every_snapshot_key_has_a_meaning() -> None:
    fields = [f.name for f in attrs.fields(EncounterState) if f.init]
    assert set(protocol.SNAPSHOT_FIELDS) == set(fields)


def test_the_arena_schema_has_every_field_of_the_arena_classes() -> None:
    document = protocol.schema("arena")
    assert set(document["properties"]) == {
        "$schema",
        *(f.name for f in attrs.fields(Arena) if f.init),
    }
    for name, definition in document["$defs"].items():
        if "properties" in definition and name[0].isupper():
            cls = getattr(sys.modules["zonekeep.sdk"], name)
            assert set(definition["properties"]) == {f.name for f in attrs.fields(cls) if f.init}


def test_the_generator_imports_neither_the_server_nor_the_plugins() -> None:
    script = (
        "import sys\n"
        "import zonekeep.protocol._generate\n"
        "bad = [m for m in sys.modules if m.startswith(('zonekeep.server', 'zonekeep.plugins'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    source = (ROOT / "protocol" / "_generate.py").read_text()
    assert not re.search(r"^\s*(from|import) zonekeep\.(server|plugins)", source, re.M)
