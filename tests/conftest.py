"""Suite-wide settings: the hypothesis profile for CI, and the behaviour/docs count.

Tests that check documentation or SPEC text against the code carry the ``docs``
marker (module-level ``pytestmark`` in the doc-check files); the summary counts
them apart from the behaviour tests, on a line of its own before pytest's final
"N passed ..." line, which stays as it is (CI reads it).

The ``running`` and ``make_server`` fixtures here serve the server over the in-memory
transport (``memory_support``); ``tests/e2e/conftest.py`` overrides both with real
servers on loopback ports, so a protocol test moves between the two by its folder.
"""

from __future__ import annotations

import functools
import itertools
import os
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from e2e_support import ServerConfig
from hypothesis import settings
from memory_support import Memory, start_memory_server

# CI explores new examples on every run rather than replaying a fixed set
# (derandomize=False): the invariants must hold for every input, so a run that finds
# a failure has found a bug, and print_blob prints the @reproduce_failure line that
# replays exactly that example on any machine. A derandomized run would only ever
# re-check the examples the first run drew. The property tests' coverage assertions
# are set well below what a run reaches, so they do not depend on the seed.
settings.register_profile("ci", print_blob=True, derandomize=False, deadline=None)
if os.environ.get("CI", "").lower() in ("true", "1"):
    settings.load_profile("ci")

_OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_SENTENCES = Path(__file__).parent.parent / "docs" / "rule-sentences.toml"


@functools.cache
def rule_sentence_ids() -> frozenset[str]:
    """The ids of the rule sentences (docs/rule-sentences.toml)."""
    doc = tomllib.loads(_SENTENCES.read_text(encoding="utf-8"))
    return frozenset(doc["sentences"])


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``@pytest.mark.rule(...)`` with an id that names no rule sentence
    fails, saying which (tests/test_rule_trace.py checks every marker too)."""
    for mark in item.iter_markers("rule"):
        unknown = [sid for sid in mark.args if sid not in rule_sentence_ids()]
        if unknown or not mark.args:
            pytest.fail(f"@pytest.mark.rule names no rule sentence: {unknown or 'no id'}")


_DOCS = pytest.StashKey[set[str]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember which collected tests are documentation checks (by marker, not by name)."""
    config.stash[_DOCS] = {item.nodeid for item in items if item.get_closest_marker("docs")}


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Print "N behaviour tests, M documentation checks" for the tests that ran."""
    marked = config.stash.get(_DOCS, set())
    ran = {
        report.nodeid
        for outcome in _OUTCOMES
        for report in terminalreporter.stats.get(outcome, [])
        if getattr(report, "nodeid", "") and getattr(report, "when", "call") != "collect"
    }
    if not ran:
        return
    checks = len(ran & marked)
    terminalreporter.write_line(
        f"{len(ran) - checks} behaviour tests, {checks} documentation checks"
    )


@pytest.fixture
async def running(nursery: trio.Nursery, tmp_path: Path) -> Memory:
    """A server with default limits (its SQLite store under ``tmp_path``), in memory."""
    return await start_memory_server(nursery, tmp_path / "server", ServerConfig(port=0))


@pytest.fixture
def make_server(nursery: trio.Nursery, tmp_path: Path) -> Callable[..., Awaitable[Memory]]:
    """Start another in-memory server with its own config and store directory:
    ``await make_server(ServerConfig(...), engine=...)``."""
    servers = itertools.count(1)

    async def make(config: ServerConfig | None = None, **kw: Any) -> Memory:
        data_dir = tmp_path / f"server-{next(servers)}"
        return await start_memory_server(nursery, data_dir, config or ServerConfig(port=0), **kw)

    return make
