"""What the browser tests share besides fixtures (imported as ``browser.browser_support``):
maximal dice and a real server run by trio in a thread."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import helpers
import trio

from zonekeep.server._app import ServerConfig, ZonekeepServer


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
) -> Iterator[tuple[str, Any]]:
    """A real server (the default SQLite store in ``data_dir``; ``entropy`` its dice, its
    own fair dice when ``None``) on a free port, run by trio in a thread while the block
    runs; ``setup(server)`` runs once it listens. Yields its base URL and what ``setup``
    returned; shuts it down gracefully after. ``engine``: its rules engine (default: the
    built-ins and the installed plugins)."""
    ready: queue.Queue[Any] = queue.Queue()

    async def main() -> None:
        server = ZonekeepServer(
            ServerConfig(port=0, data_dir=data_dir), entropy=entropy, engine=engine
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
