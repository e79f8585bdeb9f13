"""The server's keepalive and idle sweep (``_connection.sweep``): every
connection is looked at once a round, and a round is spread over its second in slices,
so the pings that fall due in one second do not go out in one burst; and connections
that came at once are not all pinged at once. Run on a mock clock with stand-in
connections that write down when they were looked at; what a connection does when
looked at (ping, 1011, 4001) is tested end to end in tests/e2e/test_limits.py."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, cast

import pytest
import trio
import trio.testing
from websockets.server import ServerProtocol

from zonekeep.server import Limits, _connection
from zonekeep.server._connection import SWEEP_STEP, sweep


class Looked:
    """Stands in for a connection: records the clock at each ``tick``."""

    def __init__(self) -> None:
        self.ticks: list[float] = []

    def tick(self, now: float) -> None:
        self.ticks.append(now)


async def swept(limits: Limits, connections: int, seconds: float) -> list[Looked]:
    looked = [Looked() for _ in range(connections)]
    with trio.move_on_after(seconds):
        await sweep(cast(Any, looked), limits)
    return looked


async def test_each_connection_once_a_second_spread_over_the_second(
    autojump_clock: trio.testing.MockClock,
) -> None:
    looked = await swept(Limits(), 1000, 3.01)
    assert all(len(c.ticks) == 3 for c in looked)
    first_round = Counter(c.ticks[0] for c in looked)
    steps = round(1.0 / SWEEP_STEP)
    assert len(first_round) == steps  # one slice every SWEEP_STEP...
    assert max(first_round.values()) == 1000 // steps  # ...of an equal share
    assert min(first_round) > 0 and max(first_round) <= 1.0 + 1e-9
    for c in looked:  # a round later, the same connection in the same slice
        assert abs(c.ticks[1] - c.ticks[0] - 1.0) < 1e-6


async def test_short_limits_make_the_rounds_shorter(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # an idle timeout of 0.4 s is looked for every 0.1 s, so at most 0.1 s late
    looked = await swept(Limits(idle_timeout_seconds=0.4), 10, 1.005)
    assert all(len(c.ticks) == 10 for c in looked)
    assert len({c.ticks[0] for c in looked}) == 2  # 0.1 s round, two 0.05 s slices


async def test_connections_that_came_during_a_round_are_looked_at_in_the_next(
    autojump_clock: trio.testing.MockClock,
) -> None:
    early, late = Looked(), Looked()
    sessions: set[Any] = {early}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sweep, sessions, Limits())
        await trio.sleep(0.5)
        sessions.add(late)
        await trio.sleep(0.63)  # the second round: early at 1.05, late at 1.10
        nursery.cancel_scope.cancel()
    assert len(early.ticks) == 2 and early.ticks[0] < 0.1
    assert len(late.ticks) == 1 and 1.0 < late.ticks[0] < 1.13


async def test_connections_that_came_at_once_are_not_pinged_at_once(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 100 real connections over a stream that is no socket (so their output waits in
    # the outbox, where a queued ping shows), all opened at the same instant.
    monkeypatch.setattr(_connection, "random", random.Random(3))
    interval = 10.0
    limits = Limits(ping_interval_seconds=interval)
    sessions = [
        _connection.Connection(
            trio.StapledStream(trio.testing.MemorySendStream(), trio.testing.MemoryReceiveStream()),
            ServerProtocol(),
            limits,
            _connection.Flusher(),
        )
        for _ in range(100)
    ]
    start = trio.current_time()
    pinged: dict[int, float] = {}
    for step in range(1, 1101):  # the sweep's view, every 10 ms for 11 s
        now = start + step * 0.01
        for i, session in enumerate(sessions):
            session.tick(now)
            if i not in pinged and session._outbox_count:
                pinged[i] = now - start
    assert len(pinged) == 100
    times = sorted(pinged.values())
    assert times[0] >= (1 - _connection.PING_SPREAD) * interval and times[-1] <= interval + 0.01
    assert times[-1] - times[0] > interval * _connection.PING_SPREAD / 2  # spread, not one instant
    assert len({round(t, 2) for t in times}) > 50
