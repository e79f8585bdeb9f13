"""Reactions offered as decisions: the creature's controller chooses, the rules wait.

A reaction (a Parry, a Redirect Attack, later a Shield or a Counterspell) is the
choice of the creature's controller (the GM for monsters), made at the moment its
trigger happens. An attack asks the plugins at two moments
(``zonekeep_attack_reactions``): when it is declared against its target
(``"targeted"``, before any die), when its roll would hit (``"hit"``, with the
roll's total and the AC: a roll a reaction may still turn), and when it hits, critical
hits included, before its damage is rolled (``"damage"``: a reaction that lessens the
damage). Each answer is a :class:`ReactionOffer`; the first one not
yet asked becomes a decision for the reactor's controller (:func:`offer_reaction`,
options the offer's plus ``decline``, default ``decline``), carrying the interrupted
attack (:class:`AttackTrigger`) in its ``trigger``. The attack stops there; the
creatures' commands wait (reactions excepted). When the decision closes (an answer, or
the default when the deadline passes) the offering plugin carries out a taken reaction
(``zonekeep_reaction_taken``: it pays the reaction, emits what it does and returns a
:class:`ReactionOutcome`), then the attack resumes: the other offers are asked in
turn, then the roll, then the damage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._context import RollModifier, RuleContext
from ._dice import RollRecord
from ._events import Decision, DecisionOpened
from ._serial import converter

#: The option that declines a reaction: every reaction decision has it, and it is the default.
DECLINE = "decline"

#: The moments of an attack at which reactions are offered.
AttackMoment = Literal["targeted", "hit", "damage"]


@attrs.frozen
class ReactionOffer:
    """A reaction a plugin offers (``zonekeep_attack_reactions``).

    - ``creature``: the reactor; its controller is asked.
    - ``kind``: the decision's kind, which the plugin recognises in
      ``zonekeep_reaction_taken`` (``"parry"``).
    - ``prompt``: the question, for a person.
    - ``options``: the ways to take it (``("parry",)``, or the creature ids a Redirect
      Attack may choose); ``decline`` is added.
    """

    creature: str
    kind: str
    prompt: str
    options: tuple[str, ...] = ("react",)


@attrs.frozen
class ReactionOutcome:
    """What a taken reaction does to the interrupted attack (``zonekeep_reaction_taken``).

    - ``ac_bonus``: added to the target's AC against this attack (a Parry's 2, a
      Shield's 5); at the ``"hit"`` moment the attack hits only if its total still
      meets the AC with it.
    - ``target``: at the ``"targeted"`` moment, the attack's new target (a Redirect
      Attack's goblin): a creature in the fight, not the attacker.
    - ``cancel``: the attack is not made at all (a reaction that stops it).
    - ``roll_penalty``: at the ``"hit"`` moment, subtracted from the attack roll's total
      (a Cutting Words die): the roll's ``modifier`` and ``total`` are lowered, its
      ``sources`` say ``penalty:<kind> -N``, and the attack hits only if the lowered
      total still meets the AC.
    - ``halve_damage``: the attack's damage against the target is halved, rounded down
      (an Uncanny Dodge), before the target's resistances.
    - ``disadvantage``: at the ``"targeted"`` moment, the attack roll has disadvantage
      (a ``RollModifier("disadvantage", <kind>)`` added to the attack's own: the
      Protection fighting style).
    - ``damage_reduction``: subtracted from the attack's damage (a Deflect Missiles'
      1d10 + Dexterity modifier + monk level; not below 0), after any halving.

    The damage ones apply to the damage of the attack's own roll (its riders, a Sneak
    Attack's dice, are their plugins'), at any moment before it is rolled.
    """

    ac_bonus: int = 0
    target: str | None = None
    cancel: bool = False
    roll_penalty: int = 0
    halve_damage: bool = False
    damage_reduction: int = 0
    disadvantage: bool = False


@attrs.frozen
class AttackTrigger:
    """An attack interrupted by a reaction decision: everything needed to resume it.

    ``moment`` is where it stopped; ``asked`` the reactors already asked at that moment
    (each is asked once); ``roll`` and ``ac`` the attack roll and the AC it met (at the
    ``"hit"`` moment); ``ac_bonus`` what taken reactions added so far; ``redirected``
    whether a reaction already changed its target (a redirected attack is not
    redirected again); ``declared`` the target ``zonekeep_before_attack`` last accepted
    (before any offer: an attack the rules refuse opens no decision); ``damage_cuts``
    what taken reactions do to its damage, in order: ``(kind, amount)``, ``amount``
    less damage, or half for ``None`` (from :class:`ReactionOutcome`; the decision's
    kind names the step). It travels in :attr:`Decision.trigger` as
    :meth:`to_data` writes it.
    """

    attacker: str
    target: str
    attack: str
    reaction: bool = False
    extra: tuple[RollModifier, ...] = ()
    moment: AttackMoment = "targeted"
    asked: tuple[str, ...] = ()
    roll: RollRecord | None = None
    ac: int = 0
    ac_bonus: int = 0
    redirected: bool = False
    declared: str | None = None
    damage_cuts: tuple[tuple[str, int | None], ...] = ()

    def to_data(self) -> dict[str, Any]:
        """The JSON object :attr:`Decision.trigger` carries (``{"type": "attack", ...}``)."""
        data: dict[str, Any] = _plain(converter.unstructure(self))
        return {"type": "attack", **data}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> AttackTrigger | None:
        """The trigger :meth:`to_data` wrote, or ``None`` for a trigger of another type."""
        if data.get("type") != "attack":
            return None
        fields = {k: v for k, v in data.items() if k != "type"}
        return converter.structure(fields, cls)


def _plain(value: Any) -> Any:
    """``value`` as JSON reads it back: lists for tuples (a trigger equals itself after
    the log, a restart)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def offer_reaction(ctx: RuleContext, offer: ReactionOffer, trigger: Mapping[str, Any]) -> Decision:
    """Open a reaction decision for ``offer.creature``'s controller: ``offer.options``
    plus ``decline``, ``decline`` by default (what applies when the deadline passes).
    ``trigger``: the JSON object of what waits for the answer (an
    :meth:`AttackTrigger.to_data`), kept in the decision. Returns the decision opened."""
    reactor = ctx.state.creatures[offer.creature]
    options = tuple(dict.fromkeys(o for o in offer.options if o != DECLINE))
    decision = Decision(
        id=ctx.next_decision_id(),
        kind=offer.kind,
        controller=reactor.controller,
        prompt=offer.prompt,
        options=(*options, DECLINE),
        default=(DECLINE,),
        creature=reactor.id,
        trigger=_plain(dict(trigger)),
    )
    ctx.emit(DecisionOpened(decision))
    return decision


def interrupting(decisions: list[Decision] | tuple[Decision, ...]) -> Decision | None:
    """The first pending decision that interrupts something (has a ``trigger``)."""
    return next((d for d in decisions if d.trigger is not None), None)
