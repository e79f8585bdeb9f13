"""When to retry (issue 32, point 2; SPEC.md, "Retrying"), on a real server over real
websockets: every error says whether it is ``retryable`` and, where waiting helps, its
``retry_after_ms``; ``hello`` announces every limit; a client that sends at exactly the
announced rate is never refused. The clock is trio's ``MockClock``: it stands still
unless a test moves it, so the waits are exact."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import trio
import trio.testing
from e2e_support import Loaded, Running, ServerConfig, sturdy_goblin_roster
from helpers import deadline
from lobby_support import refused
from prompt_support import to_a_prompt

from zonekeep.protocol import DEFAULT_LIMITS
from zonekeep.server._config import Limits

MakeServer = Callable[..., Any]


async def test_a_client_at_exactly_the_announced_rate_is_never_refused(
    mock_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    running: Running = await make_server(ServerConfig(port=0))
    async with running.client() as client:  # (its hello takes the first token)
        limits = client.welcome["limits"] if client.welcome else {}
        rate, burst = limits["rate_per_second"], limits["rate_burst"]
        assert (rate, burst) == (20.0, 40)
        # (Each request has a deadline of its own: the test moves the clock 30 seconds.)
        for _ in range(burst - 1):  # the rest of the burst, at once
            with trio.fail_after(deadline(5)):
                await client.request("ping")
        # Then one every 1 / rate seconds, for 30 seconds (600 messages): none refused.
        for _ in range(600):
            mock_clock.jump(1 / rate)
            with trio.fail_after(deadline(5)):
                await client.request("ping")
        # One more at once finds the bucket empty: refused, with the exact wait.
        with trio.fail_after(deadline(5)):
            error = await refused(client.request("ping"))
        assert (error.code, error.name) == (5001, "rate_limited")
        assert error.data == {"retryable": True, "retry_after_ms": 50}
        mock_clock.jump(0.050)
        with trio.fail_after(deadline(5)):
            await client.request("ping")


async def test_hello_announces_every_limit_a_client_must_respect(
    make_server: MakeServer,
) -> None:
    limits = Limits(
        max_connections_per_token=2,
        max_spectators_per_encounter=3,
        reply_bytes_burst=123_456,
        reply_bytes_per_second=789.0,
        abuse_refusals=7,
        abuse_window_seconds=4.0,
        rate_burst=9,
    )
    running: Running = await make_server(ServerConfig(port=0, limits=limits))
    async with running.client() as client:
        assert client.welcome is not None
        announced = client.welcome["limits"]
    assert set(announced) == {f.name for f in attrs.fields(type(DEFAULT_LIMITS))}
    assert {
        k: announced[k]
        for k in (
            "max_connections_per_token",
            "max_spectators_per_encounter",
            "reply_bytes_burst",
            "reply_bytes_per_second",
            "abuse_refusals",
            "abuse_window_seconds",
            "rate_burst",
        )
    } == {
        "max_connections_per_token": 2,
        "max_spectators_per_encounter": 3,
        "reply_bytes_burst": 123_456,
        "reply_bytes_per_second": 789.0,
        "abuse_refusals": 7,
        "abuse_window_seconds": 4.0,
        "rate_burst": 9,
    }


async def test_the_reply_byte_budget_says_when_it_is_paid_back(
    mock_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    limits = Limits(reply_bytes_burst=1, reply_bytes_per_second=1000.0)
    running: Running = await make_server(ServerConfig(port=0, limits=limits))
    async with running.client() as gm:
        with trio.fail_after(deadline(10)):
            eid = (await gm.create_encounter("Budget", "tavern", sturdy_goblin_roster()))[
                "encounter"
            ]
            await gm.request("snapshot", encounter=eid)  # sent whole: the budget overdrawn
            error = await refused(gm.request("snapshot", encounter=eid))
            assert (error.name, error.retryable) == ("rate_limited", True)
            wait = error.retry_after_ms
            assert wait is not None and wait > 1000  # a millisecond a byte of the snapshot
            mock_clock.jump((wait - 1.5) / 1000)  # half a byte short of paying back
            assert (await refused(gm.request("snapshot", encounter=eid))).retry_after_ms == 1
            mock_clock.jump(0.0015)
            await gm.request("snapshot", encounter=eid)


async def test_decision_pending_says_when_the_decision_is_settled(
    mock_clock: trio.testing.MockClock, make_server: MakeServer
) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(deadline(10)):
            eid, _ = await to_a_prompt(gm, alice)  # aria may take an opportunity attack
            error = await refused(gm.command(eid, "dodge", creature="gob"))
            assert (error.name, error.data) == (
                "decision_pending",
                {"retryable": True, "retry_after_ms": 30_000},
            )
        mock_clock.jump(12.5)
        with trio.fail_after(deadline(10)):
            error = await refused(gm.command(eid, "dodge", creature="gob"))
        assert error.retry_after_ms == 17_500


async def test_an_error_that_waiting_does_not_cure_says_so(running: Running) -> None:
    async with running.client() as gm:
        with trio.fail_after(deadline(10)):
            error = await refused(gm.request("snapshot", encounter="nope"))
            assert (error.name, error.data) == ("unknown_encounter", {"retryable": False})
            error = await refused(gm.request("ping", extra=1))
            assert (error.name, error.data) == ("invalid_params", {"retryable": False})
