"""The layers of docs/architecture.md: what a plugin author's process loads at run time,
and that import-linter's contracts (``lint-imports``, run by scripts/test, which checks
the imports statically) name every module, the string-loaded rule plugins among them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

from zonekeep.sdk.engine import default_plugins

ROOT = Path(__file__).resolve().parent.parent

# A plugin author's test, run in a process of its own: the harness plays a turn
# through the real engine and the built-in rules, then reports what got imported.
_PLUGIN_TEST = textwrap.dedent(
    """
    import json, sys
    from zonekeep.sdk import Attack, Creature, hookimpl
    from zonekeep.sdk.testing import EncounterHarness

    class Shout:
        @hookimpl
        def zonekeep_turn_started(self, ctx, creature):
            return None

    h = EncounterHarness(
        [
            Creature("a", "Aria", "party", controller="alice", hp=10, max_hp=10,
                     attacks=[Attack("rapier")]),
            Creature("g", "Goblin", "foes", hp=7, max_hp=7, attacks=[Attack("scimitar")]),
        ],
        extra_plugins=[Shout()],
    )
    h.start(initiative=[15, 10])
    h.send("dash", creature="a")
    print(json.dumps(sorted(sys.modules)))
    """
)


def _modules_loaded_by_a_plugin_test() -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PLUGIN_TEST], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    loaded: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


def test_the_harness_runs_a_plugin_with_no_server_or_wire_code() -> None:
    loaded = _modules_loaded_by_a_plugin_test()
    # The rules ran: the engine and the built-in rule plugins are loaded ...
    assert "zonekeep.sdk.engine" in loaded or "zonekeep.sdk._engine" in loaded
    assert "zonekeep.plugins.turns" in loaded
    # ... and nothing of the server, the wire or a transport.
    forbidden = ("zonekeep.server", "zonekeep.protocol", "websockets", "trio")
    assert [m for m in loaded if m.split(".")[0] in forbidden or m.startswith(forbidden)] == []


def _contract(container: str) -> dict[str, Any]:
    """The layers contract of pyproject.toml inside ``container``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    (found,) = [
        c for c in contracts if c["type"] == "layers" and c.get("containers") == [container]
    ]
    return found


def _named(layer: str) -> list[str]:
    return [m.strip() for m in re.split(r"[|:]", layer)]


def _modules(folder: str) -> set[str]:
    """The modules and packages of ``folder`` (a content plugin such as ``srd`` is a
    package, for its data files)."""
    modules = {p.stem for p in (ROOT / folder).glob("*.py") if p.stem != "__init__"}
    return modules | {p.parent.name for p in (ROOT / folder).glob("*/__init__.py")}


def test_the_servers_layers_name_every_server_module_once() -> None:
    named = [m for layer in _contract("zonekeep.server")["layers"] for m in _named(layer)]
    assert sorted(named) == sorted(_modules("server"))
    assert "_nodes" in named and "_plugin_data" in named


def test_the_plugin_contract_names_exactly_the_string_loaded_rules_then_their_helpers() -> None:
    """The engine imports ``default_plugins`` by name, which import-linter cannot see:
    the contract's first layer is that list, so each rule plugin is held to it."""
    rules, helpers = _contract("zonekeep.plugins")["layers"]
    assert "|" in rules and ":" not in rules  # independent of each other
    assert [f"zonekeep.plugins.{m}" for m in _named(rules)] == list(default_plugins)
    assert sorted([*_named(rules), *_named(helpers)]) == sorted(_modules("plugins"))
    assert all(m.startswith("_") for m in _named(helpers))
