"""A room's verifiable dice: the seeds, the counter and the dice events.

The construction is the SDK's (:mod:`zonekeep.sdk` ``CountedEntropy``, SPEC.md "Dice");
this module is the shell's side of it:

- **Secret seeds never stored.** A fair encounter's seed number ``epoch`` is
  ``HMAC-SHA256(key=<the store's dice secret>, msg="zonekeep dice seed" 0x00 <encounter
  id> 0x00 <epoch>)`` in lower-case hex. The store keeps one random secret for all its
  encounters (``EventStore.dice_secret``: a row of SQLite's ``meta`` table), so the
  seed comes back after a restart (``kill -9`` included) and is written nowhere a
  player (or a GM, through the protocol) can read it: not in the events, not in the
  snapshot, not in an export. Only the ``dice_revealed`` event publishes it.
- **The counter never goes back.** It is the room's, not the state's: a rewind does
  not move it, a refused command gives back the dice it drew (nobody saw them), and
  a restart takes it from the highest counter in the log.
- **Events.** After every accepted command the room asks :meth:`RoomDice.settle` for
  the dice events that go with it: ``dice_drawn`` for dice a rule drew without
  recording them in a roll, ``dice_revealed`` when the encounter ended, a fresh
  ``dice_committed`` when a fair encounter goes on after its seed was revealed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from zonekeep.protocol import ProtocolError
from zonekeep.sdk import (
    Creature,
    DiceCommitted,
    DiceContributed,
    DiceDrawn,
    DiceRevealed,
    DiceState,
    EncounterState,
    Entropy,
    Event,
    parse_dice,
)
from zonekeep.sdk.host import (
    CountedEntropy,
    VerifyFailure,
    commitment,
    dice_in,
    event_to_dict,
    valid_seed,
    verify_log,
)

log = logging.getLogger("zonekeep.dice")

DiceMode = Literal["fair", "seeded"]


@attrs.frozen
class DiceChoice:
    """``create_encounter``'s ``dice`` option, checked: the mode and a seeded seed."""

    mode: DiceMode = "fair"
    seed: str | None = None


def parse_dice_option(value: Any) -> DiceChoice:
    """The ``dice`` option of ``create_encounter``, or ``invalid_params``."""
    if value is None:
        return DiceChoice()
    if not isinstance(value, Mapping):
        raise _invalid('\'dice\' must be an object such as {"mode": "fair"}.')
    unknown = sorted(set(value) - {"mode", "seed"})
    if unknown:
        raise _invalid(f"'dice' has unknown keys: {', '.join(map(repr, unknown))}.")
    mode = value.get("mode", "fair")
    if mode == "fair":
        if "seed" in value:
            raise _invalid("'dice.seed' is for seeded dice only: fair dice draw their own seed.")
        return DiceChoice("fair")
    if mode == "seeded":
        seed = value.get("seed")
        if not valid_seed(seed):
            raise _invalid(
                "'dice.seed' must be 1-128 printable ASCII characters (no spaces) for seeded dice."
            )
        return DiceChoice("seeded", str(seed))
    raise _invalid('\'dice.mode\' must be "fair" or "seeded".')


def roll_hit_points(creatures: Iterable[Creature], ids: Iterable[str], entropy: Entropy) -> None:
    """Roll the hit points of the creatures named in ``ids`` from their ``hit_dice``
    (``2d6``, ``7d10+21``: each die in order, creature by creature in roster order;
    at least 1) on ``entropy``, and set their ``hp`` and ``max_hp`` (``create_encounter``'s
    roster reference ``hp: "roll"``)."""
    wanted = set(ids)
    for creature in creatures:
        if creature.id not in wanted or not creature.hit_dice:
            continue
        expr = parse_dice(creature.hit_dice)
        total = sum(entropy.randint(expr.sides) for _ in range(expr.count)) + expr.modifier
        creature.hp = creature.max_hp = max(1, total)


def check_contribution(value: Any) -> str:
    """A seat's contribution (``client_seed``, ``contribute_dice``), or ``invalid_params``."""
    if not valid_seed(value):
        raise _invalid("A dice contribution must be 1-128 printable ASCII characters (no spaces).")
    return str(value)


def _invalid(message: str) -> ProtocolError:
    return ProtocolError.from_refusal("invalid_params", message)


def fair_seed(secret: bytes, encounter: str, epoch: int) -> str:
    """The secret seed number ``epoch`` of ``encounter`` under the store's ``secret``."""
    message = b"zonekeep dice seed\x00" + encounter.encode("utf-8") + b"\x00" + str(epoch).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def next_counter(events: Iterable[Event]) -> int:
    """The counter after the highest one recorded in ``events`` (0 for none)."""
    top = -1
    for event in events:
        for counter, _, _ in dice_in(event_to_dict(event)):
            top = max(top, counter)
    return top + 1


class RoomDice:
    """One room's verifiable dice: its :class:`CountedEntropy` and the dice events."""

    def __init__(self, encounter: str, secret: bytes, *, counter: int = 0) -> None:
        self.encounter = encounter
        self.secret = secret
        self.entropy = CountedEntropy("", counter=counter)
        #: A fresh commitment is owed (the seed of the last one cannot be had).
        self.owed = False

    # -- starting -------------------------------------------------------------------------

    def first_commitment(self, choice: DiceChoice) -> DiceCommitted:
        """The ``dice_committed`` event of a new encounter (epoch 1)."""
        if choice.mode == "seeded":
            assert choice.seed is not None
            self.entropy.seed = choice.seed
            return DiceCommitted("seeded", commitment(choice.seed), choice.seed)
        self.entropy.seed = fair_seed(self.secret, self.encounter, 1)
        return DiceCommitted("fair", commitment(self.entropy.seed))

    def resume_from(self, dice: DiceState | None) -> None:
        """Follow ``dice`` again (after a store failure undid what was being added)."""
        if dice is not None:
            self.resume(dice)

    def resume(self, dice: DiceState) -> None:
        """Take up the dice of a restored encounter (its seed, mix and epoch)."""
        self.entropy.mix = bytes.fromhex(dice.mix)
        if dice.mode == "seeded" or dice.revealed:
            self.entropy.seed = dice.seed or ""
            self.owed = dice.mode == "fair"
            return
        seed = fair_seed(self.secret, self.encounter, dice.epoch)
        if commitment(seed) != dice.commitment:
            # Brought in from another store (zonekeep import): its seed stayed there.
            log.warning(
                "encounter %s: the seed of its dice commitment is not this store's; a new "
                "seed is committed before the next roll",
                self.encounter,
            )
            self.owed = True
        self.entropy.seed = seed

    # -- around a command -----------------------------------------------------------------

    def mark(self) -> int:
        return self.entropy.counter

    def give_back(self, mark: int) -> None:
        """The command was refused: its dice were never seen, and never happened."""
        self.entropy.counter = mark
        self.entropy.draws.clear()

    def settle(
        self,
        events: Sequence[Event],
        state: EncounterState,
        payloads: Sequence[dict[str, Any]] | None = None,
    ) -> list[Event]:
        """The dice events that follow ``events`` (which led to ``state``); ``payloads``
        are their :func:`~zonekeep.sdk.host.event_to_dict`, when the caller has them."""
        extra: list[Event] = []
        drawn = self.entropy.take_draws()
        if payloads is None:
            payloads = [event_to_dict(e) for e in events]
        recorded = {c for p in payloads for c, _, _ in dice_in(p)} if drawn else set()
        loose = tuple(d for d in drawn if d[0] not in recorded)
        if loose:
            extra.append(DiceDrawn(loose))
        dice = state.dice
        if dice is None or dice.mode != "fair":
            return extra
        ended = state.phase == "ended"
        if ended and not dice.revealed and not self.owed:
            extra.append(DiceRevealed(self.entropy.seed, dice.commitment, "ended"))
        elif not ended and (dice.revealed or self.owed):
            extra.append(self._recommit(dice))
        return extra

    def rotate(self, dice: DiceState | None) -> list[Event]:
        """The GM's rotation: reveal the current seed and commit a new one."""
        if dice is None:
            raise _invalid("This encounter's dice are not verifiable (a test's entropy).")
        if dice.mode != "fair":
            raise _invalid("Seeded dice have no secret seed to rotate.")
        found: list[Event] = []
        if not dice.revealed and not self.owed:
            found.append(DiceRevealed(self.entropy.seed, dice.commitment, "rotated"))
        found.append(self._recommit(dice))
        return found

    def recommit(self, dice: DiceState) -> DiceCommitted:
        """A fresh commitment (the next epoch's seed), for a restored encounter whose
        seed is owed: written before its next roll."""
        return self._recommit(dice)

    def _recommit(self, dice: DiceState) -> DiceCommitted:
        self.owed = False
        self.entropy.seed = fair_seed(self.secret, self.encounter, dice.epoch + 1)
        return DiceCommitted("fair", commitment(self.entropy.seed))

    def contribution(self, dice: DiceState | None, by: str, value: str) -> DiceContributed:
        """A seat's contribution, as an event; the room mixes it in (:meth:`mixed`) once
        the event is stored."""
        if dice is None:
            raise _invalid("This encounter's dice are not verifiable (a test's entropy).")
        if dice.mode != "fair":
            raise _invalid("Seeded dice take no contributions: they follow their seed alone.")
        return DiceContributed(by, value)

    def mixed(self, dice: DiceState | None) -> None:
        """Follow the state's mix (after a contribution was stored)."""
        if dice is not None:
            self.entropy.mix = bytes.fromhex(dice.mix)


# -- zonekeep verify ------------------------------------------------------------------------


def verify_export(path: str | Path) -> tuple[bool, list[str]]:
    """Check the dice of an exported log (``zonekeep export``'s JSON Lines): whether they
    verify, and the lines to print. Reads line by line: a line that is not an event
    (a truncated file) ends the log there, so the dice after it count as never revealed.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return False, [f"{path}: cannot read it: {exc}"]
    events: list[tuple[int, dict[str, Any]]] = []
    notes: list[str] = []
    expected = 1
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            params = json.loads(raw)
            seq, event = params["seq"], params["event"]
            if not isinstance(seq, int) or not isinstance(event, dict):
                raise TypeError("not an event line")
        except (ValueError, KeyError, TypeError):
            notes.append(f"{path}:{number}: not an event line (the file is cut or damaged here)")
            break
        if seq != expected:
            notes.append(
                f"{path}:{number}: seq {seq} where {expected} was expected (events missing)"
            )
            break
        expected += 1
        events.append((seq, event))
    try:
        report = verify_log(events)
    except VerifyFailure as failure:
        return False, [*notes, f"{path}: dice NOT verified: {failure}"]
    if notes:
        return False, [*notes, f"{path}: dice NOT verified: the log is incomplete"]
    if report.mode == "none":
        return False, [f"{path}: no verifiable dice in this log (rolled by a test's entropy)"]
    lines = [
        f"{path}: dice verified: {report.rolls} rolls ({report.mode}), "
        f"{report.seeds} seed(s) checked, {report.contributions} contribution(s)"
    ]
    for seq, counters in report.undone:
        undone = ", ".join(f"#{c}" for c in counters) or "none"
        lines.append(f"the rewind at event {seq} undid rolls: {undone}")
    if not report.undone:
        lines.append("no rewinds")
    return True, lines


__all__ = [
    "DiceChoice",
    "RoomDice",
    "check_contribution",
    "fair_seed",
    "next_counter",
    "parse_dice_option",
    "roll_hit_points",
    "verify_export",
]
