"""Keeping CPython's cycle collector from pausing a busy server.

A server with thousands of connections holds millions of long-lived objects (tasks,
coroutines, websocket protocol state). CPython's collector looks at all of them in
every full (generation 2) collection, and under load a full collection comes every
second or so: each wait of a connection (for its next message, for its next frame to
send) creates objects that outlive two young collections and so count towards the
next full one. Measured at 6,000 connections (docs/performance.md), each full
collection paused the server for about a second and together they took most of its
CPU.

:class:`GcUpkeep` removes those pauses:

- at start (after the stored encounters are restored) it collects once and freezes
  everything (:func:`gc.freeze`): frozen objects are never looked at by the collector
  again, and are still freed as usual as soon as nothing refers to them;
- CPython's automatic collections of the two older generations are turned off while
  it runs; every ``young_seconds`` (20 ms) it collects the two younger generations
  itself, so each pause covers only what was made in the last few milliseconds (the
  youngest generation's own trigger counts allocations *minus* frees, so under load
  it can let that generation grow to 100,000 objects and a 100 ms pause);
- every ``freeze_seconds`` it freezes what survived, which costs nothing (objects
  move from one list to another);
- every ``full_seconds`` (an hour) it unfreezes everything and runs one full
  collection, for the reference cycles that died after they were frozen (a closed
  connection's objects, say), then freezes again. That one pause is as long as a
  full collection of the whole heap (0.8-1 s at 6,000 connections) and is logged.
  Measured under load, cycles that died after being frozen were found at about 33
  objects a second.

It is a process-wide setting, so it is run by the process that serves
(:func:`~zonekeep.server.serve_until_signalled`, the ``zonekeep serve`` command), not
by a :class:`~zonekeep.server.ZonekeepServer` embedded in another program.
"""

from __future__ import annotations

import gc
import logging
import math
import time
from collections.abc import Callable

import attrs
import trio

log = logging.getLogger("zonekeep.gc")

#: The older generations' thresholds while the upkeep runs: never reached.
NEVER = 2**30
#: The youngest generation's threshold while the upkeep runs (CPython's default is
#: 700): its own collections are for a burst of allocations between two rounds only.
#: At 700 they came many times a round under load, and every object that outlived one
#: was looked at again by the round's collection of the middle generation.
YOUNG_BURST = 20_000


def _young_only() -> tuple[int, int, int]:
    """Leave only CPython's automatic collections of the youngest generation on, for
    bursts (:data:`YOUNG_BURST`); return the thresholds to restore."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_BURST), NEVER, NEVER)
    return before


def _restore_thresholds(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(*thresholds)


@attrs.define
class GcUpkeep:
    """The upkeep's schedule and what it did. ``freeze_seconds`` of 0 turns it off
    (CPython's own schedule then applies unchanged); ``full_seconds`` of 0 never
    unfreezes, so a cycle frozen while alive is never collected: memory then grows
    with every connection that comes and goes.

    ``collect``, ``freeze``, ``unfreeze``, ``suspend`` and ``resume`` are the
    :mod:`gc` calls it makes; tests pass recording stand-ins.
    """

    freeze_seconds: float = 1.0
    full_seconds: float = 3600.0
    young_seconds: float = 0.02
    #: Young collections done so far.
    young_rounds: int = 0
    collect: Callable[[int], int] = gc.collect
    freeze: Callable[[], None] = gc.freeze
    unfreeze: Callable[[], None] = gc.unfreeze
    suspend: Callable[[], tuple[int, int, int]] = _young_only
    resume: Callable[[tuple[int, int, int]], None] = _restore_thresholds
    #: Freezes done so far, full collections done, the last one's pause in seconds.
    rounds: int = 0
    full_rounds: int = 0
    last_full_pause: float = 0.0

    @property
    def enabled(self) -> bool:
        return self.freeze_seconds > 0

    def start(self) -> None:
        """Collect everything once, then freeze it (call after the start-up work)."""
        if self.enabled:
            self.collect(2)
            self.freeze()

    def full_round(self) -> None:
        """Unfreeze everything, collect it all, freeze again; the pause is logged."""
        started = time.perf_counter()
        self.unfreeze()
        found = self.collect(2)
        self.freeze()
        self.last_full_pause = time.perf_counter() - started
        self.full_rounds += 1
        log.info(
            "full garbage collection: %d unreachable object(s), %.3f s pause",
            found,
            self.last_full_pause,
        )

    async def run(self) -> None:
        """Collect the young generations every ``young_seconds``, freeze every
        ``freeze_seconds``, collect everything every ``full_seconds``, until cancelled;
        the collector's thresholds are restored on the way out. Returns at once when
        the upkeep is off."""
        if not self.enabled:
            return
        saved = self.suspend()
        try:
            full_at = trio.current_time() + self.full_seconds if self.full_seconds > 0 else math.inf
            freeze_at = trio.current_time() + self.freeze_seconds
            while True:
                await trio.sleep(min(self.young_seconds, self.freeze_seconds))
                now = trio.current_time()
                if now >= full_at:
                    self.full_round()
                    full_at = now + self.full_seconds
                    freeze_at = now + self.freeze_seconds
                elif now >= freeze_at:
                    self.freeze()
                    self.rounds += 1
                    freeze_at = now + self.freeze_seconds
                else:
                    self.collect(1)
                    self.young_rounds += 1
        finally:
            self.resume(saved)
