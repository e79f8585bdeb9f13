"""What a running server counts and measures: the ``/metrics`` page (Prometheus text
format, with ``prometheus_client``) and what ``/healthz`` looks at.

Each server has its own :class:`Metrics` and its own ``CollectorRegistry`` (never the
library's global one: a test process runs many servers). The server puts its
:class:`Metrics` in a context variable (:func:`bind`) in the task that runs it; trio
copies context variables into every task a task starts, so the listener, every
connection, every room and every store call made from them find it with
:func:`current`, without passing it through every constructor. Code running outside a
server (a unit test's room) gets a spare :class:`Metrics` that nobody reads.

Counting is plain Python on the hot paths (an ``int`` add for the bytes sent, a dict
for the commands); the numbers become Prometheus families at scrape time, in
:class:`_Collector`. The gauges that the server can compute (encounters loaded,
connections by role) are asked of it at scrape time too (:attr:`Metrics.gauges`).
"""

from __future__ import annotations

import contextvars
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import trio
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

log = logging.getLogger("zonekeep.session")

__all__ = ["CONTENT_TYPE_LATEST", "Metrics", "bind", "current"]

#: Refusals that say a client misbehaves or hits a limit (the authentication and the
#: limits ranges of the error codes, SPEC.md) are logged at WARNING; the others
#: (ordinary mistakes of play, such as an illegal move) at DEBUG.
WARN_RANGES = ((2000, 2999), (5000, 5999))
#: Those warnings are themselves rate limited (a flooding client must not flood the
#: log): this many a second, in bursts of :data:`WARN_BURST`; the ones left out are
#: counted and the next warning logged says how many.
WARN_RATE = 10.0
WARN_BURST = 50

#: Label for what a client named that the server does not know (an unknown method or
#: command type): the labels of a metric must never be a client's free text.
OTHER = "other"
#: What an encounter id a client sent must look like to be logged.
_SAFE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

#: Seconds between two wake-ups of the event-loop lag probe.
LAG_INTERVAL = 0.25
#: A lag measured within this many seconds still counts for ``/healthz``.
LAG_WINDOW = 5.0
#: ``/healthz`` says the loop is too slow past this lag (seconds).
LAG_LIMIT = 1.0
#: Seconds the count of stored encounters is reused before it is asked of the store again.
STORED_TTL = 5.0

#: Command-to-broadcast latency (seconds): the command's frame read to its events sent.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
#: Store commit latency (seconds): one batch written (one transaction).
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

#: The roles a connection is counted under: the highest of the encounters it joined.
ROLES = ("gm", "player", "spectator", "unjoined")


class Metrics:
    """One server's counters, histograms and health inputs."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        #: Bytes written to clients' sockets (frames and handshakes).
        self.bytes_sent = 0
        #: Commands (``command`` and ``rewind``) accepted, by type.
        self.accepted: Counter[str] = Counter()
        #: Commands refused, by (type, code).
        self.refused: Counter[tuple[str, str]] = Counter()
        #: Requests of any method refused, by (method, code).
        self.requests_refused: Counter[tuple[str, str]] = Counter()
        #: Connections refused at the handshake, by reason.
        self.handshakes_refused: Counter[str] = Counter()
        #: Connections opened (websockets) since start.
        self.connections_opened = 0
        #: Plugin failures and overruns, by plugin.
        self.plugin_failures: Counter[str] = Counter()
        self.plugin_overruns: Counter[str] = Counter()
        #: The command types counted by name (the engine's; others are :data:`OTHER`)
        #: and the methods (the protocol's).
        self.command_types: frozenset[str] = frozenset({"rewind"})
        self.methods: frozenset[str] = frozenset()
        self.command_latency = Histogram(
            "zonekeep_command_broadcast_seconds",
            "Seconds from reading a command to sending its events to the encounter's members.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.commit_latency = Histogram(
            "zonekeep_store_commit_seconds",
            "Seconds one batch of appends took to write to the store (one transaction).",
            buckets=COMMIT_BUCKETS,
            registry=self.registry,
        )
        #: The last event-loop lag measured (seconds), and the largest recent one with
        #: when it was seen; when the probe last woke (trio's clock; None: not running).
        self.loop_lag = 0.0
        self._lag_peak = 0.0
        self._lag_peak_at = -1e9
        self._lag_woke: float | None = None
        #: The last failure to commit to the store (cleared by the next success).
        self.store_error: str | None = None
        #: Stored encounters (``None``: not counted yet) and when they were counted.
        self.stored: int | None = None
        self._stored_at = -1e9
        self.stored_ttl = STORED_TTL
        #: How long a lag counts for ``/healthz`` (:data:`LAG_WINDOW`).
        self.lag_window = LAG_WINDOW
        self._stored_lock = trio.Lock()
        self._warn_tokens = float(WARN_BURST)
        self._warn_stamp: float | None = None
        self._warn_skipped = 0
        #: The gauges the server computes at scrape time (encounters loaded, connections).
        self.gauges: Callable[[], Iterable[Metric]] = lambda: ()
        self.registry.register(_Collector(self))

    # -- counting -------------------------------------------------------------------------------

    def command_type(self, value: object) -> str:
        """``value`` as a label: a known command type, else :data:`OTHER`."""
        return value if isinstance(value, str) and value in self.command_types else OTHER

    def refusal(self, method: str | None, params: Any, code: str, number: int) -> None:
        """A request was refused with error ``code`` (its wire ``number``): count it,
        and log it (WARNING for what counts toward abuse or a limit, DEBUG otherwise).
        ``method`` is ``None`` when the frame was not read (over the rate limit, too
        large, binary) or is not a request (counted as ``unparsed``). Nothing of ``params``
        but the command type and the encounter id (when it looks like one) is ever
        used, let alone logged: params carry tokens and keys."""
        name = method if method is None or method in self.methods else OTHER
        name = "unparsed" if name is None else name
        if not isinstance(params, dict):
            params = {}
        self.requests_refused[name, code] += 1
        what = name
        if name in ("command", "rewind"):
            kind = self.command_type(params.get("type") if name == "command" else "rewind")
            self.refused[kind, code] += 1
            what = f"{name} {kind}"
        encounter = params.get("encounter")
        extra = {"encounter": encounter} if _safe(encounter) else {}
        if any(low <= number <= high for low, high in WARN_RANGES):
            self.warn(log, "refused %s: %s", what, code, extra=extra)
        else:
            log.debug("refused %s: %s", what, code, extra=extra)

    def warn(self, logger: logging.Logger, message: str, *args: Any, **kw: Any) -> None:
        """Log a warning about a client's refusal, within the warnings' own rate limit
        (:data:`WARN_RATE`): past it, the warning is only counted, and the next one
        logged says how many were left out."""
        if not self._may_warn():
            self._warn_skipped += 1
            return
        skipped, self._warn_skipped = self._warn_skipped, 0
        if skipped:
            message += f" ({skipped} more refusals not logged)"
        logger.warning(message, *args, **kw)

    def _may_warn(self) -> bool:
        now = trio.current_time()
        if self._warn_stamp is not None:
            elapsed = now - self._warn_stamp
            self._warn_tokens = min(WARN_BURST, self._warn_tokens + elapsed * WARN_RATE)
        self._warn_stamp = now
        if self._warn_tokens >= 1:
            self._warn_tokens -= 1
            return True
        return False

    def answered(self, method: str, params: Any) -> None:
        """A request was answered: count an accepted command."""
        if method == "command" and isinstance(params, dict):
            self.accepted[self.command_type(params.get("type"))] += 1
        elif method == "rewind":
            self.accepted["rewind"] += 1

    def plugin_events(self, events: Iterable[Any]) -> None:
        """Count the ``plugin_error`` and ``plugin_overran`` events among ``events``."""
        for event in events:
            kind = getattr(event, "type", None)
            if kind == "plugin_error":
                self.plugin_failures[str(event.plugin)] += 1
            elif kind == "plugin_overran":
                self.plugin_overruns[str(event.plugin)] += 1

    # -- the store ------------------------------------------------------------------------------

    def store_committed(self, seconds: float, error: Exception | None = None) -> None:
        """A batch was written in ``seconds`` (or failed with ``error``)."""
        if error is not None:
            self.store_error = str(error)
        else:
            self.store_error = None
            self.commit_latency.observe(seconds)

    async def refresh_stored(self, count: Callable[[], Any], *, force: bool = False) -> None:
        """Ask the store how many encounters it holds (``await count()`` returns a
        collection or a number), at most once every :data:`STORED_TTL` seconds."""
        async with self._stored_lock:
            now = trio.current_time()
            if not force and now - self._stored_at < self.stored_ttl:
                return
            try:
                found = await count()
            except Exception as exc:  # the store failing is /healthz's business
                log.warning("counting the stored encounters failed: %s", exc)
                return
            self.stored = found if isinstance(found, int) else len(found)
            self._stored_at = trio.current_time()

    # -- the event loop -------------------------------------------------------------------------

    async def watch_loop(self, interval: float = LAG_INTERVAL) -> None:
        """Sleep ``interval`` seconds again and again; how much later than asked each
        wake-up comes is the event loop's lag (a task that blocks delays everyone)."""
        while True:
            asked = trio.current_time()
            self._lag_woke = asked
            await trio.sleep(interval)
            self.note_lag(max(0.0, trio.current_time() - asked - interval))

    def note_lag(self, lag: float) -> None:
        """Keep ``lag``, the lag just measured (seconds)."""
        self.loop_lag = lag
        now = trio.current_time()
        if lag >= self._lag_peak or now - self._lag_peak_at > self.lag_window:
            self._lag_peak, self._lag_peak_at = lag, now

    def recent_lag(self, interval: float = LAG_INTERVAL) -> float:
        """The largest lag seen in the last :attr:`lag_window` seconds, or the one under
        way (the probe is overdue now, as when the loop just got free of a blocking
        call and this request ran before the probe)."""
        now = trio.current_time()
        peak = self._lag_peak if now - self._lag_peak_at <= self.lag_window else 0.0
        overdue = 0.0
        if self._lag_woke is not None:
            overdue = max(0.0, now - self._lag_woke - interval)
        return max(peak, overdue, self.loop_lag)

    def health(self) -> list[str]:
        """Why the server is not healthy (empty: it is)."""
        problems = []
        lag = self.recent_lag()
        if lag > LAG_LIMIT:
            problems.append(f"the event loop lags: {lag:.2f} s (limit {LAG_LIMIT:g} s)")
        if self.store_error is not None:
            problems.append(f"the store cannot commit: {self.store_error}")
        return problems

    # -- the page -------------------------------------------------------------------------------

    def page(self) -> bytes:
        """Every metric in the Prometheus text format."""
        return generate_latest(self.registry)


def _safe(value: object) -> bool:
    return isinstance(value, str) and _SAFE_ID.fullmatch(value) is not None


def _counter(
    name: str, doc: str, labels: tuple[str, ...], values: Mapping[Any, int]
) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=list(labels))
    for key, value in sorted(values.items()):
        family.add_metric(list(key) if isinstance(key, tuple) else [key], value)
    return family


class _Collector:
    """Turns a :class:`Metrics`' plain numbers into Prometheus families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        m = self.metrics
        yield from m.gauges()
        if m.stored is not None:
            yield GaugeMetricFamily(
                "zonekeep_encounters_stored",
                "Encounters in the store, whatever their state (counted at most every "
                f"{STORED_TTL:g} seconds).",
                value=m.stored,
            )
        yield CounterMetricFamily(
            "zonekeep_connections_opened",
            "Websocket connections opened since start.",
            value=m.connections_opened,
        )
        yield _counter(
            "zonekeep_connections_refused",
            "Connections refused at the handshake, by reason.",
            ("reason",),
            m.handshakes_refused,
        )
        yield _counter(
            "zonekeep_commands_accepted",
            "Commands accepted (command and rewind requests), by command type.",
            ("type",),
            m.accepted,
        )
        yield _counter(
            "zonekeep_commands_refused",
            "Commands refused, by command type and error code.",
            ("type", "code"),
            m.refused,
        )
        yield _counter(
            "zonekeep_requests_refused",
            "Requests of any method refused, by method and error code.",
            ("method", "code"),
            m.requests_refused,
        )
        yield _counter(
            "zonekeep_plugin_failures",
            "Plugin failures (a hook that raised or answered wrongly), by plugin.",
            ("plugin",),
            m.plugin_failures,
        )
        yield _counter(
            "zonekeep_plugin_overruns",
            "Plugin calls over the time budget, by plugin.",
            ("plugin",),
            m.plugin_overruns,
        )
        yield CounterMetricFamily(
            "zonekeep_sent_bytes",
            "Bytes written to clients' connections.",
            value=m.bytes_sent,
        )
        yield GaugeMetricFamily(
            "zonekeep_event_loop_lag_seconds",
            f"How late the last {LAG_INTERVAL:g}-second sleep of a probe task woke up.",
            value=m.loop_lag,
        )
        yield GaugeMetricFamily(
            "zonekeep_store_healthy",
            "1 when the last commit to the store succeeded, 0 when it failed.",
            value=0 if m.store_error is not None else 1,
        )


# -- the server's metrics, for the code that runs under it ------------------------------------

_SPARE = Metrics()
_current: contextvars.ContextVar[Metrics] = contextvars.ContextVar(
    "zonekeep_metrics", default=_SPARE
)


def current() -> Metrics:
    """The metrics of the server the current task runs under (a spare set outside one)."""
    return _current.get()


def bind(metrics: Metrics) -> contextvars.Token[Metrics]:
    """Make ``metrics`` the current task's (and the tasks it starts from now on)."""
    return _current.set(metrics)


def unbind(token: contextvars.Token[Metrics]) -> None:
    _current.reset(token)
