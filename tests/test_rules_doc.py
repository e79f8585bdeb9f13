"""The command table of docs/rules.md is the built-in engine's commands, exactly: every
command, in the order the engine lists them, with who may send it, its cost, its
phases, its parameters and its summary. When a command changes, the failure message
holds the table to paste."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zonekeep.sdk import CommandSpec
from zonekeep.sdk.engine import Engine

pytestmark = pytest.mark.docs

DOC = Path(__file__).parent.parent / "docs" / "rules.md"
HEADER = "| command | who | costs | phases | params (`?` optional) | what it does |"


def row(spec: CommandSpec) -> str:
    params = ", ".join(
        f"{name}{'' if p.required else '?'}: {p.type}" for name, p in spec.params.items()
    )
    cells = [
        f"`{spec.id}`",
        spec.who,
        "/".join(spec.costs) or "free",
        ", ".join(spec.phases),
        params,
        spec.summary,
    ]
    return "| " + " | ".join(cells) + " |"


def documented_rows() -> list[str]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER) + 2  # after the header and its |---| line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(re.sub(r" {2,}", " ", line))
    return rows


def test_the_command_table_lists_every_built_in_command_as_the_engine_has_it() -> None:
    expected = [re.sub(r" {2,}", " ", row(spec)) for spec in Engine().commands.values()]
    got = documented_rows()
    assert got == expected, "docs/rules.md's command table is out of date; it should be:\n" + (
        "\n".join(row(spec) for spec in Engine().commands.values())
    )
