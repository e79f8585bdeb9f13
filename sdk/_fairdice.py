"""Dice anyone can verify: the construction, the counted entropy and the verifier.

The construction (SPEC.md, "Dice") in one place, pure and without I/O:

- A *seed* is a string; its *commitment* is the SHA-256 of its UTF-8 bytes, in hex.
- The *mix* starts as 32 zero bytes; each contribution ``c`` (a string) makes it
  ``SHA-256(mix || UTF-8(c))``.
- Die number ``counter`` (0, 1, 2 ... for the whole encounter, never reused) with
  ``sides`` faces: for ``attempt`` = 0, 1, 2 ... compute
  ``block = HMAC-SHA256(key=UTF-8(seed), msg=mix || u64be(counter) || u32be(attempt))``
  and ``x`` = the first 8 bytes of ``block`` read as a big-endian unsigned integer;
  the first ``x`` below ``limit = 2**64 - (2**64 mod sides)`` gives the face
  ``x mod sides + 1`` (rejection sampling: every face exactly equally likely).

:class:`CountedEntropy` is an :class:`~zonekeep.sdk.Entropy` over a seed, the mix and
the counter; it records every draw. :func:`verify_log` checks an encounter's events
(as the dictionaries of the wire) against the construction.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

#: The mix before any contribution: 32 zero bytes.
EMPTY_MIX = bytes(32)
_TWO_64 = 1 << 64
#: What a seed or a contribution may be: 1-128 printable ASCII characters.
_TOKEN = re.compile(r"[\x21-\x7e]{1,128}")


def valid_seed(value: object) -> bool:
    """Whether ``value`` is a well-formed seed or contribution: a string of 1-128
    printable ASCII characters (no space, no control character)."""
    return isinstance(value, str) and _TOKEN.fullmatch(value) is not None


def commitment(seed: str) -> str:
    """The commitment to ``seed``: SHA-256 of its UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def next_mix(mix: bytes, contribution: str) -> bytes:
    """The mix after ``contribution``: SHA-256(mix || UTF-8(contribution))."""
    return hashlib.sha256(mix + contribution.encode("utf-8")).digest()


def die(seed: str, mix: bytes, counter: int, sides: int) -> int:
    """The face (1 to ``sides``) of die number ``counter`` under ``seed`` and ``mix``."""
    if sides < 1:
        raise ValueError(f"a die needs at least one side, not {sides}")
    if not 0 <= counter < _TWO_64:
        raise ValueError(f"counter {counter} is out of range")
    key = seed.encode("utf-8")
    limit = _TWO_64 - (_TWO_64 % sides)
    attempt = 0
    while True:
        message = mix + counter.to_bytes(8, "big") + attempt.to_bytes(4, "big")
        x = int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")
        if x < limit:
            return x % sides + 1
        attempt += 1


class CountedEntropy:
    """Entropy from the construction: ``seed``, the mix of the contributions so far and
    a counter that only goes up. Every draw is kept in ``draws`` as
    ``(counter, sides, value)`` until the shell takes them (:meth:`take_draws`)."""

    def __init__(self, seed: str, *, counter: int = 0, mix: bytes = EMPTY_MIX) -> None:
        self.seed = seed
        self.counter = counter
        self.mix = mix
        self.draws: list[tuple[int, int, int]] = []

    def randint(self, sides: int) -> int:
        value = die(self.seed, self.mix, self.counter, sides)
        self.draws.append((self.counter, sides, value))
        self.counter += 1
        return value

    def contribute(self, contribution: str) -> None:
        self.mix = next_mix(self.mix, contribution)

    def take_draws(self) -> list[tuple[int, int, int]]:
        found, self.draws = self.draws, []
        return found


def draw(entropy: Any, sides: int) -> tuple[int, tuple[int, int] | None]:
    """Roll one die on ``entropy``: its value, and ``(counter, sides)`` when the
    entropy is counted (so that the record can name the die for a verifier)."""
    counter = getattr(entropy, "counter", None)
    value: int = entropy.randint(sides)
    if isinstance(counter, int) and not isinstance(counter, bool):
        return value, (counter, sides)
    return value, None


# -- finding the dice in events ----------------------------------------------------------


def dice_in(payload: Any) -> list[tuple[int, int, int]]:
    """Every die recorded in an event's dictionary, as ``(counter, sides, value)``, in
    the order they appear: a roll's ``draws`` pair with its ``dice`` and then its
    ``expertise_roll`` (when it has an expertise die), a roll-off's with its ``rolls``,
    and a ``dice_drawn`` event lists them itself."""
    found: list[tuple[int, int, int]] = []
    _walk(payload, found)
    return found


def _walk(value: Any, found: list[tuple[int, int, int]]) -> None:
    if isinstance(value, (list, tuple)):
        for item in value:
            _walk(item, found)
        return
    if not isinstance(value, Mapping):
        return
    pairs = value.get("draws")
    if isinstance(pairs, (list, tuple)) and pairs:
        if value.get("type") == "dice_drawn":
            for item in pairs:
                found.append((_int(item, 0), _int(item, 1), _int(item, 2)))
            return
        if "rolls" in value:
            values = list(value.get("rolls") or [])
        else:
            values = list(value.get("dice") or [])
            if value.get("expertise"):
                values.append(value.get("expertise_roll"))
        if len(values) != len(pairs):
            raise VerifyFailure(
                "a roll's draws and dice do not pair up", _int(pairs[0], 0) if pairs else None
            )
        for pair, face in zip(pairs, values, strict=True):
            found.append((_int(pair, 0), _int(pair, 1), _plain_int(face)))
    for key, item in value.items():
        if key != "draws":
            _walk(item, found)


def _int(item: Any, index: int) -> int:
    if not isinstance(item, (list, tuple)) or len(item) <= index:
        raise VerifyFailure(f"a draw is not a list of numbers: {item!r}", None)
    return _plain_int(item[index])


def _plain_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise VerifyFailure(f"a die is not a whole number: {value!r}", None)
    return value


# -- verifying -----------------------------------------------------------------------------


class VerifyFailure(Exception):
    """The first thing in a log that does not verify; ``counter`` names the roll."""

    def __init__(self, message: str, counter: int | None, seq: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.counter = counter
        self.seq = seq

    def __str__(self) -> str:
        where = []
        if self.counter is not None:
            where.append(f"roll #{self.counter}")
        if self.seq is not None:
            where.append(f"event {self.seq}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


@attrs.frozen
class VerifyReport:
    """What :func:`verify_log` found in a log that verifies."""

    #: Dice checked against the construction.
    rolls: int
    #: The dice mode of the last commitment: ``"fair"``, ``"seeded"`` or ``"none"``.
    mode: str
    #: Seeds revealed (fair) or published (seeded), in log order.
    seeds: int
    #: Contributions mixed in.
    contributions: int
    #: ``(rewind seq, counters)``: the rolls each GM rewind undid.
    undone: tuple[tuple[int, tuple[int, ...]], ...] = ()


@attrs.define
class _Epoch:
    mode: str
    commitment: str
    seed: str | None
    pending: list[tuple[int, int, int, int, bytes]] = attrs.field(factory=list)


def verify_log(events: Iterable[tuple[int, Mapping[str, Any]]]) -> VerifyReport:
    """Check an encounter's log, ``(seq, event dictionary)`` in seq order.

    Raises :class:`VerifyFailure` for the first problem: a commitment that is not the
    SHA-256 of its revealed seed, a die that is not the construction's, a counter used
    twice or skipped (the counters of a whole log are 0, 1, 2 ... each once, in any
    order inside a command's events), dice under a seed never revealed (a missing reveal, a truncated
    log), a malformed dice event. A log without dice events (test entropy) verifies
    nothing and says so with ``mode == "none"``.
    """
    epoch: _Epoch | None = None
    mix = EMPTY_MIX
    seen: set[int] = set()
    rolls = seeds = contributions = 0
    timeline: list[tuple[int, list[int]]] = []  # (seq, counters) of the live events
    undone: list[tuple[int, tuple[int, ...]]] = []
    last_seq = 0
    for seq, event in events:
        last_seq = seq
        kind = event.get("type")
        if kind == "dice_committed":
            if epoch is not None and epoch.mode == "fair" and epoch.pending:
                raise _first_pending(epoch, "a new seed was committed before this one was revealed")
            mode = event.get("mode")
            digest = event.get("commitment")
            seed = event.get("seed")
            if mode not in ("fair", "seeded") or not isinstance(digest, str):
                raise VerifyFailure("a malformed dice_committed event", None, seq)
            if mode == "seeded":
                if not isinstance(seed, str) or commitment(seed) != digest:
                    raise VerifyFailure("the seeded commitment is not the seed's", None, seq)
                seeds += 1
            epoch = _Epoch(mode, digest, seed if mode == "seeded" else None)
            continue
        if kind == "dice_contributed":
            value = event.get("value")
            if not valid_seed(value):
                raise VerifyFailure("a malformed contribution", None, seq)
            mix = next_mix(mix, str(value))
            contributions += 1
            continue
        if kind == "dice_revealed":
            seed = event.get("seed")
            if epoch is None or epoch.mode != "fair" or epoch.seed is not None:
                raise VerifyFailure("a seed was revealed with no fair commitment open", None, seq)
            if not isinstance(seed, str) or commitment(seed) != epoch.commitment:
                counter = epoch.pending[0][1] if epoch.pending else None
                raise VerifyFailure("the revealed seed does not match its commitment", counter, seq)
            epoch.seed = seed
            _check(epoch)
            rolls += len(epoch.pending)
            epoch.pending.clear()
            seeds += 1
            continue
        if kind == "rewound":
            to_seq = event.get("to_seq")
            if not isinstance(to_seq, int):
                raise VerifyFailure("a malformed rewound event", None, seq)
            gone = tuple(c for s, cs in timeline if s > to_seq for c in cs)
            timeline = [(s, cs) for s, cs in timeline if s <= to_seq]
            claimed = event.get("undone_rolls")
            if epoch is not None and claimed is not None and list(claimed) != list(gone):
                raise VerifyFailure(
                    f"the rewind says it undid rolls {list(claimed)}, but it undid {list(gone)}",
                    gone[0] if gone else None,
                    seq,
                )
            undone.append((seq, gone))
            continue
        try:
            found = dice_in(event)
        except VerifyFailure as exc:
            exc.seq = seq
            raise
        if not found:
            continue
        if epoch is None:
            raise VerifyFailure("dice were rolled before any commitment", found[0][0], seq)
        for counter, sides, value in found:
            if counter in seen or counter < 0:
                raise VerifyFailure(
                    "this counter was used before (a die drawn twice)", counter, seq
                )
            if sides < 1 or not 1 <= value <= sides:
                raise VerifyFailure(f"{value} cannot come up on a d{sides}", counter, seq)
            seen.add(counter)
            epoch.pending.append((seq, counter, sides, value, mix))
        timeline.append((seq, [c for c, _, _ in found]))
        if epoch.seed is not None:  # seeded: checked at once
            _check(epoch)
            rolls += len(epoch.pending)
            epoch.pending.clear()
    missing = next((c for c in range(len(seen)) if c not in seen), None)
    if missing is not None:
        raise VerifyFailure(
            "this roll is missing from the log (the counter skips it: rolls cut out, or "
            "drawn and not recorded)",
            missing,
        )
    if epoch is not None and epoch.pending:
        raise _first_pending(
            epoch,
            f"the seed was never revealed (the log ends at event {last_seq}: the encounter "
            "has not ended, or the log is truncated)",
        )
    return VerifyReport(
        rolls=rolls,
        mode=epoch.mode if epoch is not None else "none",
        seeds=seeds,
        contributions=contributions,
        undone=tuple(undone),
    )


def _first_pending(epoch: _Epoch, message: str) -> VerifyFailure:
    first = min(epoch.pending, key=lambda p: p[1]) if epoch.pending else (None, None)
    seq, counter, *_ = first
    return VerifyFailure(message, counter, seq)


def _check(epoch: _Epoch) -> None:
    assert epoch.seed is not None
    for seq, counter, sides, value, mix in epoch.pending:
        wanted = die(epoch.seed, mix, counter, sides)
        if wanted != value:
            raise VerifyFailure(
                f"recorded {value} on a d{sides}; the construction gives {wanted}", counter, seq
            )


def undone_counters(log: Sequence[tuple[int, Mapping[str, Any]]], to_seq: int) -> tuple[int, ...]:
    """The counters of the dice in the live timeline after ``to_seq``: the rolls a
    rewind to ``to_seq`` (appended after ``log``) undoes."""
    live: list[tuple[int, list[int]]] = []
    for seq, event in log:
        if event.get("type") == "rewound":
            live = [(s, cs) for s, cs in live if s <= int(event["to_seq"])]
            continue
        counters = [c for c, _, _ in dice_in(event)] if event.get("type") != "rolls_undone" else []
        if counters:
            live.append((seq, counters))
    return tuple(c for s, cs in live if s > to_seq for c in cs)
