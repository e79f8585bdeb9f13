"""Fixtures for the web-table tests: a zonekeep server in a thread, and Debian's Chromium
driven by Playwright. The tests skip (saying why) only when /usr/bin/chromium, the
``playwright`` package or axe-core (``npm ci`` in tests/browser) is missing, and only
outside CI: with ``CI=true`` a missing one fails the test. No browser is ever downloaded."""

from __future__ import annotations

import importlib.util
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from zonekeep.server._app import ServerConfig, ZonekeepServer
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


class MaxDice:
    """Every die shows its highest face: initiative follows the bonuses (no ties) and
    every attack is a critical hit, so the test's fight goes the same way every time."""

    def randint(self, sides: int) -> int:
        return sides


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
    maximal dice)."""
    ready: queue.Queue[Any] = queue.Queue()

    async def main() -> None:
        server = ZonekeepServer(
            ServerConfig(port=0, data_dir=tmp_path / "server"), entropy=MaxDice()
        )
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(server.run)
                spec = load_encounter(ENCOUNTER)
                room, gm_token = await server.create_room(
                    spec.name, spec.arena, list(spec.creatures), spec.options
                )
                ready.put((server, trio.lowlevel.current_trio_token(), room.id, gm_token))
        except BaseException as exc:
            ready.put(exc)
            raise

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    got = ready.get(timeout=30)
    if isinstance(got, BaseException):
        raise got
    server, token, encounter, gm_token = got
    try:
        yield LiveServer(f"http://127.0.0.1:{server.port}", encounter, gm_token)
    finally:
        trio.from_thread.run(server.shutdown, trio_token=token)
        thread.join(timeout=30)


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
