"""docs/writing-plugins.md builds this plugin step by step: what it shows must be what the
plugin does (the hooks it implements, the ids, the files it names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import zonekeep_wildfire as wildfire

pytestmark = pytest.mark.docs

PLUGIN_DIR = Path(__file__).resolve().parents[1]
WALKTHROUGH = (PLUGIN_DIR.parents[2] / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
CODE = "\n".join(re.findall(r"```python\n(.*?)```", WALKTHROUGH, re.DOTALL))


def test_every_hook_the_walkthrough_shows_is_the_plugins() -> None:
    shown = set(re.findall(r"^\s*def (zonekeep_\w+)\(", CODE, re.MULTILINE))
    assert len(shown) >= 12
    assert sorted(h for h in shown if not callable(getattr(wildfire, h, None))) == []


def test_every_helper_the_walkthrough_shows_is_the_plugins() -> None:
    shown = set(re.findall(r"^def (_?[a-z]\w*)\(", CODE, re.MULTILINE))
    helpers = {
        name
        for name in shown
        if not name.startswith("zonekeep_")
        and name != "test_kicking_the_brazier_sets_the_zone_beside_it_burning"
    }
    assert helpers and sorted(h for h in helpers if not hasattr(wildfire, h)) == []


def test_the_files_it_names_exist() -> None:
    for path in (
        "pyproject.toml",
        "README.md",
        "zonekeep_wildfire/forge.json",
        "zonekeep_wildfire/py.typed",
        "encounters/forge-fire.json",
    ):
        assert (PLUGIN_DIR / path).is_file(), path
    assert 'wildfire = "zonekeep_wildfire"' in (PLUGIN_DIR / "pyproject.toml").read_text()


def test_the_walkthroughs_test_runs_and_passes() -> None:
    (block,) = [
        b
        for b in re.findall(r"```python\n(.*?)```", WALKTHROUGH, re.DOTALL)
        if "EncounterHarness(" in b
    ]
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/writing-plugins.md", "exec"), namespace)
    test = namespace["test_kicking_the_brazier_sets_the_zone_beside_it_burning"]
    assert callable(test)
    test()
