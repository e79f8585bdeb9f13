"""The optional turn timer: the server ends a turn that has run ``turn_seconds``."""

from __future__ import annotations

import trio
import trio.testing
from helpers import make

from zonekeep.sdk import EncounterOptions, TurnEnded
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server import InMemoryStore
from zonekeep.server._room import Room


def started(options: EncounterOptions) -> EncounterHarness:
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes")], options=options)
    h.start(initiative=[15, 10])
    return h


async def test_the_turn_timer_ends_an_overdue_turn(autojump_clock: trio.testing.MockClock) -> None:
    h = started(EncounterOptions(turn_seconds=60))
    store = InMemoryStore()
    store.append_now("t", 1, h.events)
    room = Room("t", h.engine, store, h.state)
    async with trio.open_nursery() as nursery:
        await nursery.start(room.run)
        room._update_turn_timer()  # what apply() does after every command
        start = trio.current_time()
        await trio.sleep_until(start + 59.9)
        assert room.state.active == "aria"
        await trio.sleep_until(start + 60.1)
        assert room.state.active == "gob"
        ended = [e for _, e in store.read_now("t") if isinstance(e, TurnEnded)]
        assert ended == [TurnEnded("aria")]
        # The next turn has its own 60 seconds.
        await trio.sleep_until(start + 119.9)
        assert room.state.active == "gob"
        await trio.sleep_until(start + 120.2)
        assert (room.state.round, room.state.active) == (2, "aria")
        nursery.cancel_scope.cancel()


async def test_no_timer_no_ending(autojump_clock: trio.testing.MockClock) -> None:
    h = started(EncounterOptions())
    room = Room("t", h.engine, InMemoryStore(), h.state)
    async with trio.open_nursery() as nursery:
        await nursery.start(room.run)
        room._update_turn_timer()
        assert room.turn_deadline is None
        await trio.sleep(3600)
        assert room.state.active == "aria"
        nursery.cancel_scope.cancel()
