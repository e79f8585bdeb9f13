"""Fixtures for the web-table tests: a zonekeep server in a thread, and Debian's Chromium
driven by Playwright. The tests skip (saying why) only when /usr/bin/chromium, the
``playwright`` package or axe-core (``npm ci`` in tests/browser) is missing, and only
outside CI: with ``CI=true`` a missing one fails the test. No browser is ever downloaded."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from browser.browser_support import MaxDice, server_in_thread

from zonekeep.server._app import ZonekeepServer
from zonekeep.server._encounter_file import load_encounter

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
HERE = Path(__file__).resolve().parent
ENCOUNTER = HERE / "tavern-brawl.json"
#: axe-core, from npm (tests/browser/package.json, installed by scripts/test).
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"


def missing(why: str) -> None:
    """Skip, or fail under CI (where every tool the browser tests need is installed)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (CI=true: the browser tests must run)")
    pytest.skip(why)


@attrs.frozen
class LiveServer:
    """A running server with one encounter in its first step (surprise)."""

    base: str
    encounter: str
    gm_token: str

    def table_url(self, token: str) -> str:
        return f"{self.base}/table/#encounter={self.encounter}&token={token}"


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server on a free port in a thread (the default SQLite store under ``tmp_path``,
    maximal dice), with the tavern brawl's encounter open."""

    async def brawl(server: ZonekeepServer) -> tuple[str, str]:
        spec = load_encounter(ENCOUNTER)
        room, gm_token = await server.create_room(
            spec.name, spec.arena, list(spec.creatures), spec.options
        )
        return room.id, gm_token

    with server_in_thread(tmp_path / "server", MaxDice(), brawl) as (base, (encounter, gm)):
        yield LiveServer(base, encounter, gm)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright's sync API."""
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing("the playwright package is missing (pip install playwright)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def axe_script() -> Path:
    """The path of axe-core's script, to inject into a page (``add_script_tag(path=...)``)."""
    if not AXE.exists():
        missing(f"{AXE} is missing (cd tests/browser && npm ci)")
    return AXE
