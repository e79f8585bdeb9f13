"""Dice: expressions, advantage and disadvantage, the expertise die, injected entropy.

The rules core never draws randomness itself. Every roll goes through an
:class:`Entropy` handed in by the shell (the server, the harness or a test), and
every result is kept in a :class:`RollRecord` that travels inside the event that
used it, so replaying the events never rolls again.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Literal, Protocol, cast

import attrs

from ._fairdice import draw

Advantage = Literal["none", "advantage", "disadvantage"]

# ASCII digits only (``\d`` would take any script's digits), on a text of at most
# MAX_DICE_CHARS characters: int() never sees a long string of digits.
_EXPR = re.compile(r"^\s*(?:([0-9]*)d([0-9]+))?\s*(?:([+-])\s*([0-9]+))?\s*$", re.ASCII)
_FLAT = re.compile(r"^\s*([+-]?[0-9]+)\s*$", re.ASCII)

#: The bounds of every dice expression, wherever it comes from (a sheet, a command, a
#: plugin's setting): at most ``MAX_DICE_COUNT`` dice of at most ``MAX_DIE_SIZE`` sides,
#: a modifier (or a flat number) from ``-MAX_DICE_MODIFIER`` to ``MAX_DICE_MODIFIER``,
#: and at most ``MAX_DICE_CHARS`` characters of text, spaces included.
MAX_DICE_COUNT = 100
MAX_DIE_SIZE = 1000
MAX_DICE_MODIFIER = 1000
MAX_DICE_CHARS = 40

#: Expertise die sizes by the number of sources: one gives d4, two d6, three or more d8.
EXPERTISE_DICE = (0, 4, 6, 8)


class DiceError(ValueError):
    """A dice expression could not be understood."""


class Entropy(Protocol):
    """Where dice results come from. The shell owns it; the rules only ask it."""

    def randint(self, sides: int) -> int:
        """Return a uniformly chosen integer from 1 to ``sides`` inclusive."""
        ...


class RandomEntropy:
    """Entropy from :mod:`random`; seedable for reproducible runs."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed) if seed is not None else random.SystemRandom()

    def randint(self, sides: int) -> int:
        return self._rng.randint(1, sides)


class ScriptExhausted(RuntimeError):
    """A scripted entropy source was asked for more rolls than it was given."""


class ScriptedEntropy:
    """Entropy that returns exact, scripted results in order (for tests).

    Guarantees: each call consumes the next value; a value that cannot come up on
    the die asked for (0, or more than ``sides``) raises ``ValueError``; running
    out raises :class:`ScriptExhausted`, and ``exhausted`` keeps that error (even where
    the code that rolled caught it) until :meth:`push` adds more. ``remaining`` tells
    what is left.
    """

    def __init__(self, values: Iterable[int] = ()) -> None:
        self._values = list(values)
        self.asked: list[int] = []
        self.exhausted: ScriptExhausted | None = None

    def push(self, *values: int) -> None:
        """Append more scripted results."""
        self._values.extend(values)
        self.exhausted = None

    @property
    def remaining(self) -> tuple[int, ...]:
        return tuple(self._values)

    def randint(self, sides: int) -> int:
        if not self._values:
            self.exhausted = ScriptExhausted(f"no scripted roll left for a d{sides}")
            raise self.exhausted
        value = self._values.pop(0)
        if not 1 <= value <= sides:
            raise ValueError(f"scripted roll {value} cannot come up on a d{sides}")
        self.asked.append(sides)
        return value


@attrs.frozen
class DiceExpr:
    """A parsed expression ``NdS+M``; ``count`` may be 0 for a flat number."""

    count: int
    sides: int
    modifier: int

    def __str__(self) -> str:
        if self.count == 0:
            return str(self.modifier)
        mod = f"{self.modifier:+d}" if self.modifier else ""
        return f"{self.count}d{self.sides}{mod}"


def parse_dice(expr: str) -> DiceExpr:
    """Parse ``"2d6+3"``, ``"d20"``, ``"1d8-1"`` or a flat ``"4"``.

    Raises :class:`DiceError` with a readable sentence when the text is not dice.
    """
    if type(expr) is str:
        parsed = _PARSED.get(expr)
        if parsed is None:
            parsed = _parse_dice(expr)
            if len(_PARSED) >= _PARSED_MAX:  # expressions come from sheets and commands
                _PARSED.clear()
            _PARSED[expr] = parsed
        return parsed
    return _parse_dice(expr)


#: The expressions parsed so far (a :class:`DiceExpr` is immutable), at most
#: ``_PARSED_MAX`` of them: the same few come up on every attack.
_PARSED: dict[str, DiceExpr] = {}
_PARSED_MAX = 1024


def _parse_dice(expr: str) -> DiceExpr:
    if not isinstance(cast(object, expr), str):  # from a plugin, or a hostile payload
        raise DiceError(f"a dice expression is text like '2d6+3', not {type(expr).__name__}")
    if len(expr) > MAX_DICE_CHARS:
        # Not quoted back: the text may be thousands of characters long.
        raise DiceError(
            f"a dice expression is at most {MAX_DICE_CHARS} characters, not {len(expr)}"
        )
    flat = _FLAT.match(expr)
    if flat:
        return DiceExpr(0, 0, _modifier(expr, int(flat.group(1))))
    m = _EXPR.match(expr)
    if not m or m.group(2) is None:
        raise DiceError(f"{expr!r} is not a dice expression like '2d6+3'")
    count = int(m.group(1) or 1)
    sides = int(m.group(2))
    if not (1 <= count <= MAX_DICE_COUNT and 2 <= sides <= MAX_DIE_SIZE):
        raise DiceError(f"{expr!r} asks for an unreasonable number or size of dice")
    mod = int(m.group(4) or 0) * (-1 if m.group(3) == "-" else 1)
    return DiceExpr(count, sides, _modifier(expr, mod))


def _modifier(expr: str, value: int) -> int:
    if abs(value) > MAX_DICE_MODIFIER:
        raise DiceError(
            f"{expr!r} adds too much: a modifier or a flat number is from "
            f"-{MAX_DICE_MODIFIER} to {MAX_DICE_MODIFIER}"
        )
    return value


@attrs.frozen
class RollRecord:
    """The full, replayable result of one roll.

    ``dice`` holds every die rolled (both d20s under advantage); ``kept`` the ones
    that counted; ``expertise`` the size of the expertise die (0 for none) and
    ``expertise_roll`` its result; ``penalty`` the size of the penalty die (0 for none:
    Bane's d4) and ``penalty_roll`` its result, subtracted. ``total`` = sum(kept) +
    expertise_roll - penalty_roll + modifier. ``draws`` names each die for a verifier,
    ``[counter, sides]``: those of ``dice`` in order, then the expertise die's, then the
    penalty die's (empty when the dice are not verifiable).
    """

    expr: str
    dice: tuple[int, ...]
    kept: tuple[int, ...]
    modifier: int
    total: int
    advantage: Advantage = "none"
    expertise: int = 0
    expertise_roll: int = 0
    sources: tuple[str, ...] = ()
    #: ``(counter, sides)`` of each die in ``dice``, then of the expertise die, of the
    #: penalty die and of each die in ``bonus_dice``, when
    #: the entropy is counted (verifiable dice, SPEC.md "Dice"); empty otherwise.
    draws: tuple[tuple[int, int], ...] = ()
    penalty: int = 0
    penalty_roll: int = 0
    #: The faces of the bonus dice added to the total (a Bardic Inspiration die: a
    #: ``"bonus"`` roll modifier's die), drawn after every other die of the roll; their
    #: ``bonus:`` entries in ``sources`` name them. Already counted in ``modifier``.
    bonus_dice: tuple[int, ...] = ()

    @property
    def natural(self) -> int:
        """The kept d20 of a d20 roll (0 when the roll was not a single d20)."""
        return self.kept[0] if len(self.kept) == 1 else 0


def combine_advantage(advantages: int, disadvantages: int) -> Advantage:
    """Advantage and disadvantage cancel: any of both gives a plain roll."""
    if advantages and disadvantages:
        return "none"
    if advantages:
        return "advantage"
    if disadvantages:
        return "disadvantage"
    return "none"


def expertise_die(sources: int) -> int:
    """The expertise die for ``sources`` sources: 0, d4, d6, then d8 for three or more."""
    return EXPERTISE_DICE[min(max(sources, 0), 3)]


def roll(
    entropy: Entropy,
    expr: str,
    *,
    advantage: Advantage = "none",
    expertise: int = 0,
    bonus: int = 0,
    sources: Iterable[str] = (),
    double_dice: bool = False,
    penalty: int = 0,
) -> RollRecord:
    """Roll ``expr`` (plus ``bonus``) with advantage/disadvantage and an expertise die.

    Advantage applies only to a single-die expression such as ``d20``: two are
    rolled and the higher (or lower) kept. ``double_dice`` rolls twice the dice
    (critical hits). ``expertise`` is the die size (4, 6 or 8), or 0. ``penalty`` is
    the size of a die subtracted from the total (Bane's 4), or 0; it is drawn last.
    """
    parsed = parse_dice(expr)
    count = parsed.count * (2 if double_dice else 1)
    draws: list[tuple[int, int]] = []
    sides = parsed.sides
    dice: list[int] = []
    for _ in range(count):  # draw(entropy, sides) for each die, inline
        counter = getattr(entropy, "counter", None)
        dice.append(entropy.randint(sides))
        if isinstance(counter, int) and not isinstance(counter, bool):
            draws.append((counter, sides))
    kept = list(dice)
    if advantage != "none" and parsed.count == 1 and not double_dice:
        value, named = draw(entropy, sides)
        if named is not None:
            draws.append(named)
        dice.append(value)
        kept = [max(dice)] if advantage == "advantage" else [min(dice)]
    else:
        advantage = "none"
    ex_roll = 0
    if expertise:
        ex_roll, named = draw(entropy, expertise)
        if named is not None:
            draws.append(named)
    pen_roll = 0
    if penalty:
        pen_roll, named = draw(entropy, penalty)
        if named is not None:
            draws.append(named)
    modifier = parsed.modifier + bonus
    return RollRecord(
        expr=expr,
        dice=tuple(dice),
        kept=tuple(kept),
        modifier=modifier,
        total=sum(kept) + ex_roll - pen_roll + modifier,
        advantage=advantage,
        expertise=expertise,
        expertise_roll=ex_roll,
        sources=tuple(sources),
        draws=tuple(draws)
        if len(draws) == len(dice) + (1 if expertise else 0) + (1 if penalty else 0)
        else (),
        penalty=penalty,
        penalty_roll=pen_roll,
    )
