"""The ``turn_timer`` notification, end to end: an encounter with ``turn_seconds`` tells
every seat that may see the creature whose turn starts how long that turn has left, and
tells a seat that joins while the turn lasts. (The timer itself, ending the turn, is in
tests/test_turn_timer.py and tests/test_room_deadlines.py.)

The dice are loaded: initiative goes Aria, Goblin, Bram, then the hidden ogre.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helpers
import trio
from e2e_support import Loaded, Running, ServerConfig, creatures

from zonekeep.protocol.client import ZonekeepClient

MakeServer = Callable[..., Any]
TURN = 60  # seconds: the encounter's turn_seconds


async def timers(client: ZonekeepClient, eid: str) -> list[dict[str, Any]]:
    """The ``turn_timer`` notifications ``client`` got so far (a request first: the
    server answers it after everything it sent this connection before)."""
    await client.request("snapshot", encounter=eid)
    return [n["params"] for n in client.pending_notifications() if n["method"] == "turn_timer"]


def turns(found: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(t["creature"], t["round"]) for t in found]


async def test_timed_turns_are_announced_to_the_seats_that_see_the_creature(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        with trio.fail_after(helpers.deadline(10)):
            created = await gm.create_encounter(
                "Timed", "tavern", creatures(), options={"turn_seconds": TURN}
            )
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await alice.join(eid, seat["token"])
            link = await gm.request("create_spectator_link", encounter=eid)
            await watcher.join(eid, link["token"])
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            for client in (gm, alice, watcher):
                assert await timers(client, eid) == []  # no turn yet, no timer
            await gm.command(eid, "roll_initiative")  # Aria's turn
            for client in (gm, alice, watcher):
                found = await timers(client, eid)
                assert turns(found) == [("aria", 1)]
                assert found[0]["encounter"] == eid
                assert TURN - 5 < found[0]["deadline_seconds"] <= TURN

            for creature in ("aria", "gob", "bram"):
                await gm.command(eid, "end_turn", creature=creature)  # then the ogre's turn
            assert turns(await timers(gm, eid)) == [("gob", 1), ("bram", 1), ("ogre", 1)]
            for client in (alice, watcher):  # the hidden ogre's timer reaches the GM only
                assert turns(await timers(client, eid)) == [("gob", 1), ("bram", 1)]

            # Joining while a turn lasts: the timer comes right after the reply.
            async with running.client() as gm_again, running.client() as late:
                await gm_again.join(eid, created["gm_token"])
                found = await timers(gm_again, eid)
                assert turns(found) == [("ogre", 1)]
                assert 0 < found[0]["deadline_seconds"] <= TURN
                await late.join(eid, link["token"])
                assert await timers(late, eid) == []
                await gm.command(eid, "end_turn", creature="ogre")  # round 2: Aria
                for client in (gm, gm_again, alice, watcher, late):
                    assert turns(await timers(client, eid)) == [("aria", 2)]


async def test_no_timer_no_notification(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(10)):
            created = await gm.create_encounter("Untimed", "tavern", creatures())
            eid = created["encounter"]
            for kind, params in (
                ("set_surprise", {"surprised": []}),
                ("place", {"positions": {}}),
                ("roll_initiative", {}),
                ("end_turn", {"creature": "aria"}),
            ):
                await gm.command(eid, kind, **params)
            assert await timers(gm, eid) == []
