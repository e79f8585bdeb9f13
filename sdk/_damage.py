"""One instance of damage on its way to a creature, and the record of what changed it.

:func:`zonekeep.sdk.apply_damage` builds a :class:`Damage`, hands it to every
``zonekeep_modify_damage`` implementation in turn (each sees it as the one before
left it and answers a changed copy, made with the methods below), then applies the
target's immunity, resistance and vulnerability, once each, and emits the
``damaged`` event with the raw amount, the final amount and every
:class:`DamageStep` on the way. The order is in docs/plugins.md ("The damage
pipeline").
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import attrs

#: What a step of the pipeline did.
DamageStepKind = Literal[
    "add", "reduce", "convert", "cancel", "immunity", "resistance", "vulnerability"
]
DAMAGE_STEP_KINDS: Final[tuple[str, ...]] = get_args(DamageStepKind)

#: What a plugin may grant a creature for one instance of damage.
DefenceKind = Literal["immunity", "resistance", "vulnerability"]


@attrs.frozen
class DamageStep:
    """One change to an instance of damage, in the order it was made: its ``kind``
    (``add``, ``reduce``, ``convert``, ``cancel`` by a plugin; ``immunity``,
    ``resistance``, ``vulnerability`` by the target's defences), what caused it
    (``source``), and the ``amount`` and ``damage_type`` after it."""

    kind: DamageStepKind
    source: str
    amount: int
    damage_type: str


def _not_negative(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} must be a whole number of at least 0, not {value!r}")


@attrs.frozen
class Damage:
    """An instance of damage before it applies: ``amount`` of ``damage_type`` (``""``:
    untyped, which nothing resists) to ``target``, from ``source`` (a creature id, an
    asset, a condition, ``"GM gm"``). ``attacker``, ``attack`` and ``critical`` are set
    when an attack dealt it. ``raw`` and ``raw_type`` are what it started as; ``steps``
    what changed it so far; ``granted`` the immunities, resistances and
    vulnerabilities plugins granted for this instance (``(kind, source)``);
    ``nonmagical_overcome`` why its nonmagical defences are set aside, or None.

    It is immutable: a ``zonekeep_modify_damage`` implementation returns a changed copy
    made with :meth:`add`, :meth:`reduce`, :meth:`convert`, :meth:`cancel`,
    :meth:`grant` (each of which records its step) or :meth:`overcome_nonmagical`.
    """

    target: str
    amount: int = attrs.field(validator=_not_negative)
    damage_type: str = ""
    source: str = ""
    attacker: str | None = None
    attack: str | None = None
    critical: bool = False
    raw: int = attrs.field(
        default=attrs.Factory(lambda self: self.amount, takes_self=True), validator=_not_negative
    )
    raw_type: str = attrs.field(
        default=attrs.Factory(lambda self: self.damage_type, takes_self=True)
    )
    steps: tuple[DamageStep, ...] = ()
    cancelled: bool = False
    granted: tuple[tuple[DefenceKind, str], ...] = ()
    #: Why the target's defences "from nonmagical attacks" do not apply to this
    #: instance (a silvered weapon against a werewolf), or None.
    nonmagical_overcome: str | None = None

    def _step(self, kind: DamageStepKind, source: str, amount: int, damage_type: str) -> Damage:
        return attrs.evolve(
            self,
            amount=amount,
            damage_type=damage_type,
            steps=(*self.steps, DamageStep(kind, source, amount, damage_type)),
        )

    def add(self, amount: int, source: str) -> Damage:
        """``amount`` more damage (a rider, a vulnerability a plugin computes itself)."""
        return self._step("add", source, self.amount + max(0, amount), self.damage_type)

    def reduce(self, amount: int, source: str) -> Damage:
        """``amount`` less damage, never below 0 (armour that soaks, a ward)."""
        return self._step("reduce", source, max(0, self.amount - max(0, amount)), self.damage_type)

    def convert(self, damage_type: str, source: str) -> Damage:
        """The same amount as ``damage_type`` from now on (the defences apply to it)."""
        return self._step("convert", source, self.amount, damage_type)

    def cancel(self, source: str) -> Damage:
        """No damage at all: the target's defences are not applied either."""
        done = self._step("cancel", source, 0, self.damage_type)
        return attrs.evolve(done, cancelled=True)

    def overcome_nonmagical(self, source: str) -> Damage:
        """The target's ``damage_resistances_nonmagical`` and
        ``damage_immunities_nonmagical`` do not apply to this instance, though the
        attack is not magical (a silvered weapon against a creature whose resistance
        excepts silvered weapons); ``source`` says why. Its other defences still do."""
        return attrs.evolve(self, nonmagical_overcome=source)

    def grant(self, kind: DefenceKind, source: str) -> Damage:
        """Give the target ``immunity``, ``resistance`` or ``vulnerability`` to this
        instance (a potion of fire resistance): applied with its own, still once."""
        if kind not in get_args(DefenceKind):
            raise ValueError(f"grant() takes immunity, resistance or vulnerability, not {kind!r}")
        return attrs.evolve(self, granted=(*self.granted, (kind, source)))


def defend(
    damage: Damage,
    immunities: list[str] | tuple[str, ...],
    resistances: list[str] | tuple[str, ...],
    vulnerabilities: list[str] | tuple[str, ...],
) -> Damage:
    """``damage`` after the target's defences, in this order: immunity (no damage), then
    resistance (halved, rounded down), then vulnerability (doubled); each applies once
    however many sources give it (the target's own lists first, then what plugins
    granted). Untyped damage (``""``) and cancelled damage are left as they are."""
    if damage.cancelled or not damage.damage_type:
        return damage
    if not (immunities or resistances or vulnerabilities or damage.granted):  # no defences
        return damage
    kind = damage.damage_type

    def why(defence: DefenceKind, own: list[str] | tuple[str, ...]) -> str | None:
        if kind in own:
            return f"damage {defence} ({kind})"
        return next((source for k, source in damage.granted if k == defence), None)

    immune = why("immunity", immunities)
    if immune is not None:
        return damage._step("immunity", immune, 0, kind)
    resisted = why("resistance", resistances)
    if resisted is not None:
        damage = damage._step("resistance", resisted, damage.amount // 2, kind)
    vulnerable = why("vulnerability", vulnerabilities)
    if vulnerable is not None:
        damage = damage._step("vulnerability", vulnerable, damage.amount * 2, kind)
    return damage


__all__ = ["DAMAGE_STEP_KINDS", "Damage", "DamageStep", "DamageStepKind", "DefenceKind", "defend"]
