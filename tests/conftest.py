"""Suite-wide settings: the hypothesis profile for CI, and the behaviour/docs count.

Tests that check documentation or SPEC text against the code carry the ``docs``
marker (module-level ``pytestmark`` in the doc-check files); the summary counts
them apart from the behaviour tests, on a line of its own before pytest's final
"N passed ..." line, which stays as it is (CI reads it).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

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
