"""The layers of DESIGN.md, seen from a plugin author's side.

import-linter (``lint-imports``, run by scripts/test) checks the imports statically;
these tests check what a process really loads at run time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

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
