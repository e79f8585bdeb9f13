"""Documentation that drifted once: the README's command list and the plugin guide's links."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from zonekeep.server._cli import build_parser

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent


def cli_subcommands() -> list[str]:
    parser = build_parser()
    found = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    assert len(found) == 1
    return list(found[0].choices)


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The command line", 1)[1]
    block = section.split("```\n", 2)[1]
    return re.findall(r"^zonekeep (\w+)", block, re.MULTILINE)


def test_the_readme_lists_every_subcommand_of_the_cli_once() -> None:
    listed = readme_commands()
    assert len(listed) == len(set(listed)), f"listed twice: {listed}"
    assert sorted(listed) == sorted(cli_subcommands())


def test_the_readme_names_every_subcommand_in_its_prose() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    prose = text.split("## The command line", 1)[1].split("\n## ", 1)[0].rsplit("```", 1)[1]
    missing = [name for name in cli_subcommands() if f"`{name}`" not in prose]
    assert missing == []


@pytest.mark.parametrize("page", ["README.md", "docs/plugins.md"])
def test_the_plugin_walkthrough_is_linked(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert re.search(r"\]\((docs/)?writing-plugins\.md\)", text), page


def test_the_plugin_walkthrough_names_the_hello_result_as_the_protocol_does() -> None:
    text = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    assert "`welcome`" not in text
    assert "`hello` result" in text
