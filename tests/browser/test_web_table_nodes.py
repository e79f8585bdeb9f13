"""The web table on several nodes (protocol 1.4): a table link of one node for an
encounter another node serves is followed to that node (``moved``) without the player
noticing, and plays on there. Two nodes on one PostgreSQL store, in a thread; the
store in a schema of the test's own (tests/postgres_support.py)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from browser.browser_support import MaxDice
from postgres_support import fresh_schema

from zonekeep.server._app import ServerConfig, ZonekeepServer
from zonekeep.server._encounter_file import load_encounter

HERE = Path(__file__).resolve().parent
STEP_MS = helpers.deadline(15_000)


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[ZonekeepServer, ZonekeepServer, str, str]]:
    """Nodes a and b; a created the tavern brawl: (a, b, encounter, GM token)."""
    with fresh_schema() as store:
        ready: queue.Queue[Any] = queue.Queue()

        async def main() -> None:
            try:
                servers = [
                    ZonekeepServer(
                        ServerConfig(
                            port=0,
                            store=store,
                            store_pool_size=2,
                            node_id=name,
                            data_dir=tmp_path / name,
                        ),
                        entropy=MaxDice(),
                    )
                    for name in ("a", "b")
                ]
                async with trio.open_nursery() as nursery:
                    for server in servers:
                        await nursery.start(server.run)
                    spec = load_encounter(HERE / "tavern-brawl.json")
                    room, token = await servers[0].create_room(
                        spec.name, spec.arena, list(spec.creatures), spec.options
                    )
                    for server in servers:  # each knows the other's origin now
                        node = server.registry.node
                        assert node is not None
                        await node._look_at_peers()
                    stop = trio.Event()
                    ready.put((servers, room.id, token, trio.lowlevel.current_trio_token(), stop))
                    await stop.wait()
                    for server in servers:
                        await server.shutdown()
            except BaseException as exc:
                ready.put(exc)
                raise

        thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
        thread.start()
        got = ready.get(timeout=helpers.deadline(30))
        if isinstance(got, BaseException):
            raise got
        (a, b), eid, token, trio_token, stop = got
        try:
            yield a, b, eid, token
        finally:
            trio.from_thread.run_sync(stop.set, trio_token=trio_token)
            thread.join(timeout=helpers.deadline(30))


def test_a_table_link_of_another_node_is_followed_to_the_owner(
    browser: Any, two_nodes: tuple[ZonekeepServer, ZonekeepServer, str, str]
) -> None:
    from playwright.sync_api import expect

    a, b, eid, token = two_nodes
    expect.set_options(timeout=STEP_MS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"http://127.0.0.1:{b.port}/table/#encounter={eid}&token={token}")
    expect(page.locator("#status")).to_have_text("Connected as GM")
    expect(page.locator("#encounter-name")).to_have_text("Brawl at the Drowned Lantern")
    page.locator("[data-setup=set_surprise]").click()
    expect(page.locator("#log")).to_contain_text("Nobody is surprised.")
    # The page's own node sent it on; the node that created the encounter serves it.
    assert sockets[0] == f"ws://127.0.0.1:{b.port}/ws"
    assert sockets[-1] == f"ws://127.0.0.1:{a.port}/ws"
    assert set(sockets) == {sockets[0], sockets[-1]}
    assert eid in a.rooms and eid not in b.rooms
    assert errors == []
