"""``_metrics.Metrics`` on its own: labels that never hold a client's text, the
warnings' rate limit, the lag probe and the health it feeds."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing
from prometheus_client.parser import text_string_to_metric_families

from zonekeep.server import _metrics
from zonekeep.server._metrics import Metrics


def page(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(metrics.page().decode()):
        for sample in family.samples:
            found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return found


async def test_refusals_are_labelled_without_the_clients_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="zonekeep.session")
    metrics = Metrics()
    metrics.command_types = frozenset({"move", "rewind"})
    metrics.methods = frozenset({"command", "join"})
    metrics.refusal("command", {"type": "move", "encounter": "e1-ab"}, "wrong_phase", 4001)
    metrics.refusal("command", {"type": "ev\nil", "encounter": "x\ny"}, "unknown_command", 4002)
    metrics.refusal("join", {"encounter": "e1-ab", "token": "tok-SECRET"}, "bad_token", 2000)
    metrics.refusal("frobnicate", {"token": "tok-SECRET"}, "unknown_method", 1002)
    metrics.refusal(None, None, "rate_limited", 5001)
    metrics.answered("command", {"type": "move"})
    metrics.answered("command", {"type": "ev\nil"})
    metrics.answered("rewind", {"encounter": "e1-ab", "to_seq": 3})
    found = page(metrics)
    refused = "zonekeep_commands_refused_total"
    assert found[refused, (("code", "wrong_phase"), ("type", "move"))] == 1
    assert found[refused, (("code", "unknown_command"), ("type", "other"))] == 1
    requests = "zonekeep_requests_refused_total"
    assert found[requests, (("code", "bad_token"), ("method", "join"))] == 1
    assert found[requests, (("code", "unknown_method"), ("method", "other"))] == 1
    assert found[requests, (("code", "rate_limited"), ("method", "unparsed"))] == 1
    accepted = "zonekeep_commands_accepted_total"
    assert found[accepted, (("type", "move"),)] == 1
    assert found[accepted, (("type", "other"),)] == 1
    assert found[accepted, (("type", "rewind"),)] == 1
    assert "ev\nil" not in metrics.page().decode()
    # The log: WARNING for authentication and limits, DEBUG for the rest; the
    # encounter only when it looks like an id; never a token.
    levels = [(r.levelname, r.getMessage(), getattr(r, "encounter", None)) for r in caplog.records]
    assert levels == [
        ("DEBUG", "refused command move: wrong_phase", "e1-ab"),
        ("DEBUG", "refused command other: unknown_command", None),
        ("WARNING", "refused join: bad_token", "e1-ab"),
        ("DEBUG", "refused other: unknown_method", None),
        ("WARNING", "refused unparsed: rate_limited", None),
    ]
    assert "SECRET" not in caplog.text


async def test_refusal_warnings_are_rate_limited(
    mock_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="zonekeep.session")
    metrics = Metrics()
    for _ in range(_metrics.WARN_BURST + 30):
        metrics.refusal(None, None, "rate_limited", 5001)
    assert len(caplog.records) == _metrics.WARN_BURST
    assert metrics.requests_refused["unparsed", "rate_limited"] == _metrics.WARN_BURST + 30
    mock_clock.jump(1.0)
    metrics.refusal(None, None, "rate_limited", 5001)
    assert caplog.records[-1].getMessage() == (
        "refused unparsed: rate_limited (30 more refusals not logged)"
    )


async def test_the_lag_probe_and_health(mock_clock: trio.testing.MockClock) -> None:
    mock_clock.autojump_threshold = 0  # sleeping costs no real time
    metrics = Metrics()
    metrics.lag_window = 2.0
    assert metrics.health() == []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(metrics.watch_loop)
        await trio.sleep(1.0)
        assert metrics.loop_lag == 0 and metrics.health() == []
        # The probe is overdue (as while the loop is blocked): unhealthy at once.
        mock_clock.jump(1.6)
        assert metrics.recent_lag() > 1.0
        assert [p.split(":")[0] for p in metrics.health()] == ["the event loop lags"]
        await trio.sleep(0.01)  # the probe wakes up and measures it
        assert metrics.loop_lag > 1.0
        assert metrics.health()
        await trio.sleep(2.5)  # past the window, the loop running freely
        assert metrics.loop_lag < 0.01
        assert metrics.health() == []
        nursery.cancel_scope.cancel()


async def test_the_store_health() -> None:
    metrics = Metrics()
    metrics.store_committed(0.002, RuntimeError("disk full"))
    assert metrics.health() == ["the store cannot commit: disk full"]
    metrics.store_committed(0.003)
    assert metrics.health() == []
    assert page(metrics)["zonekeep_store_commit_seconds_count", ()] == 1


def test_plugin_events_are_counted_by_plugin() -> None:
    from zonekeep.sdk import PluginErrorRecorded, PluginOverran

    metrics = Metrics()
    metrics.plugin_events(
        [
            PluginErrorRecorded("hazards", "zonekeep_after_event", "ValueError()"),
            PluginOverran("hazards", "zonekeep_commands", 300, 250),
            PluginOverran("slowpoke", "zonekeep_commands", 900, 250),
        ]
    )
    found = page(metrics)
    assert found["zonekeep_plugin_failures_total", (("plugin", "hazards"),)] == 1
    assert found["zonekeep_plugin_overruns_total", (("plugin", "hazards"),)] == 1
    assert found["zonekeep_plugin_overruns_total", (("plugin", "slowpoke"),)] == 1
