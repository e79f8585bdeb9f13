"""What generated code (``exec``) would save in the server's serializer (server/_wire.py).

Run from the repository root (a few seconds)::

    python bench/wire_bench.py

Issue 28 asks that code generated with ``exec`` stay only where a benchmark shows it
saves at least 20% of a command's CPU. ``_wire.fields_of`` (the fields of a result or
notification object, for the encoder) and the envelope of a notification were written
out per class with ``exec``; they are plain code now. This times the generated functions
(kept here) against the plain ones, per call, in-process
(best of several runs, so a busy machine shows less), and multiplies by how often a
command of the load benchmark's loop calls them, counted by ``cost_gate.py``'s
workload. Figures, not a test; the result and the decision are in
docs/performance.md.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from zonekeep.protocol import CommandResult, TurnTimerNotification
from zonekeep.server._wire import fields_of


def generated_fields(cls: type) -> Callable[[Any], dict[str, Any]]:
    """The former ``_wire._compile_fields``: a function written out for ``cls``."""
    body = ", ".join(f"{a.name!r}: obj.{a.name}" for a in attrs.fields(cls))
    namespace: dict[str, Any] = {}
    exec(f"def fields(obj):\n    return {{{body}}}\n", namespace)
    function: Callable[[Any], dict[str, Any]] = namespace["fields"]
    return function


def generated_notification(cls: type, method: str) -> Callable[[Any], dict[str, Any]]:
    """The former ``_wire._compile_notification``: the whole envelope, written out."""
    params = ", ".join(f"{a.name!r}: obj.{a.name}" for a in attrs.fields(cls))
    namespace: dict[str, Any] = {}
    exec(
        f"def data(obj):\n    return {{'method': {method!r}, 'params': {{{params}}}}}\n", namespace
    )
    function: Callable[[Any], dict[str, Any]] = namespace["data"]
    return function


def plain_notification(method: str) -> Callable[[Any], dict[str, Any]]:
    """What ``_wire.notification_text`` does now before encoding: the envelope around
    ``fields_of``."""

    def data(obj: Any) -> dict[str, Any]:
        return {"method": method, "params": fields_of(obj)}

    return data


def best(fn: Callable[[], object], repeat: int) -> float:
    """Seconds per call: the best of ``repeat`` runs of 20,000 calls."""
    return min(timeit.repeat(fn, number=20_000, repeat=repeat)) / 20_000


def calls_per_command(commands: int) -> tuple[float, float]:
    """How often a command calls ``fields_of`` and ``notification_text``: counted on
    the cost gate's workload (the load benchmark's loop, setup included)."""
    import trio
    import trio.testing

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import cost_gate

    profile = cProfile.Profile()
    profile.enable()
    trio.run(cost_gate._record, [], commands, clock=trio.testing.MockClock())
    profile.disable()
    counts = {"fields_of": 0, "notification_text": 0}
    for (filename, _, name), (_, calls, *_rest) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if filename.endswith("_wire.py") and name in counts:
            counts[name] += calls
    total = commands + cost_gate.WARMUP_COMMANDS
    return counts["fields_of"] / total, counts["notification_text"] / total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--command-us",
        type=float,
        default=500.0,
        help="server CPU per command, us, to compare with (docs/performance.md's figure)",
    )
    args = parser.parse_args(argv)
    per_fields, per_notification = calls_per_command(600)
    result = CommandResult(first_seq=10, last_seq=12)
    timer = TurnTimerNotification("e1-abc", "aria", 3, 12.5)
    rows = [
        ("fields_of (a reply's result)", generated_fields(CommandResult), fields_of, result,
         per_fields),
        ("a notification's envelope", generated_notification(TurnTimerNotification, "turn_timer"),
         plain_notification("turn_timer"), timer, per_notification),
    ]  # fmt: skip
    print(f"{'':<30} {'generated us':>13} {'plain us':>9} {'calls/command':>14} {'us/command':>11}")
    total = 0.0
    for what, gen, plain, obj, per_command in rows:
        assert gen(obj) == plain(obj) and list(gen(obj)) == list(plain(obj))
        t_gen = best(lambda gen=gen, obj=obj: gen(obj), args.repeat)
        t_plain = best(lambda plain=plain, obj=obj: plain(obj), args.repeat)
        saved = (t_plain - t_gen) * 1e6 * per_command
        total += saved
        print(
            f"{what:<30} {t_gen * 1e6:>13.3f} {t_plain * 1e6:>9.3f} {per_command:>14.2f} "
            f"{saved:>11.3f}"
        )
    print(
        f"generated code would save {total:.3f} us of a {args.command_us:.0f} us command: "
        f"{total / args.command_us:.2%} (the bar for keeping it: 20%)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
