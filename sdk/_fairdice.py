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
    ``expertise_roll`` (when it has an expertise die), ``penalty_roll`` (when it has
    a penalty die) and its ``bonus_dice``, a roll-off's with its ``rolls``,
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
            if value.get("penalty"):
                values.append(value.get("penalty_roll"))
            values.extend(value.get("bonus_dice") or [])
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
    """One seed's stretch of the log: its mode and commitment, the seed once known, and
    the dice drawn under it not yet checked, ``(seq, counter, sides, value, mix)``."""

    mode: str
    commitment: str
    seed: str | None
    pending: list[tuple[int, int, int, int, bytes]] = attrs.field(factory=list)

    def first_pending(self, message: str) -> VerifyFailure:
        """A failure naming the lowest counter still pending (and its event)."""
        first = min(self.pending, key=lambda p: p[1]) if self.pending else (None, None)
        seq, counter, *_ = first
        return VerifyFailure(message, counter, seq)

    def settle(self) -> int:
        """Check every pending die against the construction under the known seed; the
        number checked. Raises :class:`VerifyFailure` for the first that differs."""
        assert self.seed is not None
        for seq, counter, sides, value, mix in self.pending:
            wanted = die(self.seed, mix, counter, sides)
            if wanted != value:
                raise VerifyFailure(
                    f"recorded {value} on a d{sides}; the construction gives {wanted}", counter, seq
                )
        checked = len(self.pending)
        self.pending.clear()
        return checked


class _Verifier:
    """:func:`verify_log`'s pass over a log: one step per kind of event, each checking
    only what that event claims, in the order the log makes the claims."""

    def __init__(self) -> None:
        self.epoch: _Epoch | None = None  # the current seed's stretch
        self.mix = EMPTY_MIX  # the contributions so far
        self.seen: set[int] = set()  # every counter drawn
        self.rolls = self.seeds = self.contributions = 0
        self.timeline: list[tuple[int, list[int]]] = []  # (seq, counters) still live
        self.undone: list[tuple[int, tuple[int, ...]]] = []
        self.last_seq = 0

    def step(self, seq: int, event: Mapping[str, Any]) -> None:
        self.last_seq = seq
        kind = event.get("type")
        if kind == "dice_committed":
            self.committed(seq, event)
        elif kind == "dice_contributed":
            self.contributed(seq, event)
        elif kind == "dice_revealed":
            self.revealed(seq, event)
        elif kind == "rewound":
            self.rewound(seq, event)
        else:
            self.rolled(seq, event)

    def committed(self, seq: int, event: Mapping[str, Any]) -> None:
        """A new seed: the one before (fair) must be revealed first; a seeded one is
        published with its commitment, which must be its SHA-256."""
        if self.epoch is not None and self.epoch.mode == "fair" and self.epoch.pending:
            raise self.epoch.first_pending("a new seed was committed before this one was revealed")
        mode, digest, seed = event.get("mode"), event.get("commitment"), event.get("seed")
        if mode not in ("fair", "seeded") or not isinstance(digest, str):
            raise VerifyFailure("a malformed dice_committed event", None, seq)
        if mode == "seeded":
            if not isinstance(seed, str) or commitment(seed) != digest:
                raise VerifyFailure("the seeded commitment is not the seed's", None, seq)
            self.seeds += 1
        self.epoch = _Epoch(mode, digest, seed if mode == "seeded" else None)

    def contributed(self, seq: int, event: Mapping[str, Any]) -> None:
        """A contribution: well formed, and mixed into every die drawn after it."""
        value = event.get("value")
        if not valid_seed(value):
            raise VerifyFailure("a malformed contribution", None, seq)
        self.mix = next_mix(self.mix, str(value))
        self.contributions += 1

    def revealed(self, seq: int, event: Mapping[str, Any]) -> None:
        """A fair seed revealed: it must be the one committed to; then every die drawn
        under it is checked."""
        epoch, seed = self.epoch, event.get("seed")
        if epoch is None or epoch.mode != "fair" or epoch.seed is not None:
            raise VerifyFailure("a seed was revealed with no fair commitment open", None, seq)
        if not isinstance(seed, str) or commitment(seed) != epoch.commitment:
            counter = epoch.pending[0][1] if epoch.pending else None
            raise VerifyFailure("the revealed seed does not match its commitment", counter, seq)
        epoch.seed = seed
        self.rolls += epoch.settle()
        self.seeds += 1

    def rewound(self, seq: int, event: Mapping[str, Any]) -> None:
        """A GM rewind: the rolls after ``to_seq`` leave the live timeline, and the rolls
        it says it undid (``undone_rolls``) must be exactly those."""
        to_seq = event.get("to_seq")
        if not isinstance(to_seq, int):
            raise VerifyFailure("a malformed rewound event", None, seq)
        gone = tuple(c for s, cs in self.timeline if s > to_seq for c in cs)
        self.timeline = [(s, cs) for s, cs in self.timeline if s <= to_seq]
        claimed = event.get("undone_rolls")
        if self.epoch is not None and claimed is not None and list(claimed) != list(gone):
            raise VerifyFailure(
                f"the rewind says it undid rolls {list(claimed)}, but it undid {list(gone)}",
                gone[0] if gone else None,
                seq,
            )
        self.undone.append((seq, gone))

    def rolled(self, seq: int, event: Mapping[str, Any]) -> None:
        """Any other event, with the dice it records: each a new counter and a face the
        die has, drawn under the current seed and mix (checked at once when the seed is
        known, seeded; else when it is revealed)."""
        try:
            found = dice_in(event)
        except VerifyFailure as exc:
            exc.seq = seq
            raise
        if not found:
            return
        epoch = self.epoch
        if epoch is None:
            raise VerifyFailure("dice were rolled before any commitment", found[0][0], seq)
        for counter, sides, value in found:
            if counter in self.seen or counter < 0:
                raise VerifyFailure(
                    "this counter was used before (a die drawn twice)", counter, seq
                )
            if sides < 1 or not 1 <= value <= sides:
                raise VerifyFailure(f"{value} cannot come up on a d{sides}", counter, seq)
            self.seen.add(counter)
            epoch.pending.append((seq, counter, sides, value, self.mix))
        self.timeline.append((seq, [c for c, _, _ in found]))
        if epoch.seed is not None:  # seeded: checked at once
            self.rolls += epoch.settle()

    def report(self) -> VerifyReport:
        """At the end of the log: no counter skipped, every seed revealed."""
        missing = next((c for c in range(len(self.seen)) if c not in self.seen), None)
        if missing is not None:
            raise VerifyFailure(
                "this roll is missing from the log (the counter skips it: rolls cut out, or "
                "drawn and not recorded)",
                missing,
            )
        epoch = self.epoch
        if epoch is not None and epoch.pending:
            raise epoch.first_pending(
                f"the seed was never revealed (the log ends at event {self.last_seq}: the "
                "encounter has not ended, or the log is truncated)"
            )
        return VerifyReport(
            rolls=self.rolls,
            mode=epoch.mode if epoch is not None else "none",
            seeds=self.seeds,
            contributions=self.contributions,
            undone=tuple(self.undone),
        )


def verify_log(events: Iterable[tuple[int, Mapping[str, Any]]]) -> VerifyReport:
    """Check an encounter's log, ``(seq, event dictionary)`` in seq order.

    Raises :class:`VerifyFailure` for the first problem: a commitment that is not the
    SHA-256 of its revealed seed, a die that is not the construction's, a counter used
    twice or skipped (the counters of a whole log are 0, 1, 2 ... each once, in any
    order inside a command's events), dice under a seed never revealed (a missing
    reveal, a truncated log), a rewind that misstates the rolls it undid, a malformed
    dice event. A log without dice events (test entropy) verifies nothing and says so
    with ``mode == "none"``. Each kind of event is one step of :class:`_Verifier`.
    """
    verifier = _Verifier()
    for seq, event in events:
        verifier.step(seq, event)
    return verifier.report()


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
