"""What the browser tests share besides fixtures (imported as ``browser.browser_support``):
maximal dice and a real server run by trio in a thread."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio

from zonekeep.server._app import ServerConfig, ZonekeepServer
from zonekeep.server._registry import is_loopback


class MaxDice:
    """Every die shows its highest face: initiative follows the bonuses (no ties) and
    every attack is a critical hit, so the test's fight goes the same way every time."""

    def randint(self, sides: int) -> int:
        return sides


@contextlib.contextmanager
def server_in_thread(
    data_dir: Path,
    entropy: Any = None,
    setup: Callable[[ZonekeepServer], Awaitable[Any]] | None = None,
    engine: Any = None,
    host: str = "127.0.0.1",
) -> Iterator[tuple[str, Any]]:
    """A real server (the default SQLite store in ``data_dir``; ``entropy`` its dice, its
    own fair dice when ``None``) on a free port, run by trio in a thread while the block
    runs; ``setup(server)`` runs once it listens. Yields its base URL and what ``setup``
    returned; shuts it down gracefully after. ``engine``: its rules engine (default: the
    built-ins and the installed plugins). ``host``: the address it listens on
    (``"0.0.0.0"``: every address, so a "phone" can reach it at :func:`lan_address`); the
    URL yielded is always the loopback's."""
    ready: queue.Queue[Any] = queue.Queue()

    async def main() -> None:
        server = ZonekeepServer(
            ServerConfig(host=host, port=0, data_dir=data_dir), entropy=entropy, engine=engine
        )
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(server.run)
                extra = await setup(server) if setup is not None else None
                ready.put((server, trio.lowlevel.current_trio_token(), extra))
        except BaseException as exc:
            ready.put(exc)
            raise

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    got = ready.get(timeout=helpers.deadline(30))
    if isinstance(got, BaseException):
        raise got
    server, token, extra = got
    try:
        yield f"http://127.0.0.1:{server.port}", extra
    finally:
        trio.from_thread.run(server.shutdown, trio_token=token)
        thread.join(timeout=helpers.deadline(30))


def lan_address() -> str:
    """This machine's address on its network (not the loopback): a test reaches the
    server the way a phone on the same network would. With none, a skip, or under
    ``CI=true`` (where the story must run as a phone sees it) a failure."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))  # no packet is sent: it picks a route
        address = str(probe.getsockname()[0])
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    if is_loopback(address):
        why = (
            "this machine has no IPv4 address besides the loopback (no default route), so "
            "no phone could reach a server on it: give it a network address"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why} (CI=true: the browser tests must run)")
        pytest.skip(why)
    return address


def qr_matrix(svg: str) -> list[list[bool]]:
    """The dark modules of a QR code drawn as segno draws an SVG (a white square, then
    one black path of horizontal strokes, ``scale(n)``, quiet zone included), by row."""
    found = re.search(r'width="(\d+)".*?scale\((\d+)\).*?stroke="#000" d="([^"]+)"', svg)
    assert found is not None, svg[:200]
    size = int(found.group(1)) // int(found.group(2))
    rows = [[False] * size for _ in range(size)]
    x = y = 0.0
    for op, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?:[ ,](-?[\d.]+))?", found.group(3)):
        if op == "M":
            x, y = float(a), float(b)
        elif op == "m":
            x, y = x + float(a), y + float(b)
        else:
            for column in range(int(x), int(x + float(a))):
                rows[int(y)][column] = True
            x += float(a)
    return rows


def qr_of(text: str) -> list[list[bool]]:
    """The modules of ``text``'s QR code as the server makes it (error correction M, a
    quiet zone of four), made here by segno itself."""
    import segno

    code = segno.make(text, error="m", micro=False)
    return [[bool(bit) for bit in row] for row in code.matrix_iter(border=4)]


#: How long one step of a browser test may wait, in milliseconds.
STEP_MS = helpers.deadline(15_000)
LAPTOP_SIZE = {"width": 1280, "height": 800}


def open_page(context: Any, url: str) -> Any:
    """A page of ``context`` at ``url``; its uncaught script errors in ``page.errors``."""
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(url)
    return page


def gm_table(browser: Any, url: str, *, rolled: bool = False) -> Any:
    """The GM's table at ``url`` on a 1280x800 laptop, connected; with ``rolled``, setup
    done in one step ("Settle the rest and roll initiative") and round 1 begun."""
    from playwright.sync_api import expect

    gm = open_page(browser.new_context(viewport=LAPTOP_SIZE), url)
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    if rolled:
        gm.locator("[data-setup=roll_initiative]").click()
        expect(gm.locator("#tracker")).to_contain_text("Round 1")
    return gm


def decline_next_dialog(page: Any) -> list[str]:
    """Dismiss the page's next dialog (a confirm answered "Cancel"); the list it returns
    gets the dialog's message."""
    asked: list[str] = []

    def decline(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", decline)
    return asked
