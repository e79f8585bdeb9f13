"""What a creature could do now, with the legal values of each command's parameters.

:meth:`Engine.action_details <zonekeep.sdk.engine.Engine.action_details>` answers, for
every creature command, whether it is available (and if not, the refusal sending it
would get) and, where the rules can tell, the values its parameters may take: the
targets each attack reaches and sees, the creatures a targeted command accepts, the
zones the creature can enter now with what entering costs, the assets it can take
position at.

Every value is found by asking the engine itself: the command is decided against a
copy of the state (:meth:`Engine.refusal_for`) and thrown away, so a listed value is
one the rules accept and the refusals are exactly those a sent command gets. The dice
of those trials all come up 1 (:class:`OnesEntropy`), so the answer does not depend on
luck (a handler that refuses only after some roll would otherwise come and go).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ._commands import Choice, Command, CommandSpec
from ._errors import Refusal
from ._events import ZoneEntered
from ._features import MULTIATTACK, SequenceItem, multiattack_sequences

if TYPE_CHECKING:
    from ._actors import Actor
    from ._events import Event
    from ._state import EncounterState
    from ._types import Attack, Creature


class _Outcome(Protocol):
    @property
    def events(self) -> Sequence[Event]: ...

    @property
    def state(self) -> EncounterState: ...


class _Engine(Protocol):
    """What this module asks of :class:`~zonekeep.sdk.engine.Engine` (kept apart: the
    engine imports this module)."""

    @property
    def commands(self) -> dict[str, CommandSpec]: ...

    def command_refusal(
        self,
        state: EncounterState,
        spec: CommandSpec,
        creature_id: str,
        actor: Actor,
    ) -> Refusal | None: ...

    def refusal_for(self, state: EncounterState, command: Command) -> Refusal | None: ...

    def trial(
        self, state: EncounterState, command: Command
    ) -> tuple[_Outcome | None, Refusal | None]: ...


#: The code of a command refused because a plugin failed on it: the protocol's error
#: name (``plugin_error``), which the server answers such a command with. It is not a
#: rules refusal code (``RULE_ERRORS``): only the answers of these questions carry it.
PLUGIN_ERROR = "plugin_error"


def plugin_refusal(plugin: str, command: str) -> Refusal:
    """What a command gets when ``plugin`` fails on it: the server's sentence."""
    return Refusal(
        PLUGIN_ERROR,
        f"The plugin '{plugin}' failed while handling '{command}'; nothing changed.",
    )


class OnesEntropy:
    """Dice that always come up 1: the trials of :mod:`._details` roll with it."""

    def randint(self, sides: int) -> int:
        return 1


@attrs.frozen
class AttackChoice:
    """One of the creature's attacks and the creatures it may target with it now."""

    name: str
    label: str
    bonus: int
    damage: str
    targets: tuple[str, ...]


@attrs.frozen
class ZoneChoice:
    """A zone the creature can enter now: the ``zones`` to send and the feet it costs."""

    zone: str
    cost_feet: int
    path: tuple[str, ...]


@attrs.frozen
class ActionDetail:
    """One creature command: whether it is available, the refusal when it is not, and
    its parameters' legal values where the rules can tell (``None`` where they do not
    apply). A value list is empty when the command is unavailable or nothing fits."""

    id: str
    available: bool
    code: str | None = None
    message: str | None = None
    attacks: tuple[AttackChoice, ...] | None = None
    targets: tuple[str, ...] | None = None
    zones: tuple[ZoneChoice, ...] | None = None
    props: tuple[str, ...] | None = None
    #: For ``multiattack``: the sequences the creature may choose from (empty without
    #: a Multiattack), and the attacks it has still to make this turn.
    sequences: tuple[tuple[SequenceItem, ...], ...] | None = None
    attacks_left: tuple[SequenceItem, ...] | None = None
    #: For a command whose spec lists ``choices`` (``cast``: the spells): the ways the
    #: creature may send it now, each with its parameters' legal values.
    choices: tuple[Choice, ...] | None = None


def attack_label(attack: Attack) -> str:
    """How a person reads an attack: ``"Rapier +5, 1d8+3"``."""
    name = attack.name[:1].upper() + attack.name[1:]
    return f"{name} {attack.bonus:+d}, {attack.damage}"


def _target_param(spec: CommandSpec) -> str | None:
    """The creature parameter a command targets, when it is the only other one it needs."""
    others = [n for n, p in spec.params.items() if n != "creature" and p.required]
    if len(others) == 1 and spec.params[others[0]].type == "creature":
        return others[0]
    return None


def _needs_nothing_else(spec: CommandSpec) -> bool:
    """Whether ``{"creature": id}`` is a whole command of ``spec``."""
    params = spec.params
    return "creature" in params and all(
        n == "creature" or not p.required for n, p in params.items()
    )


def _is_attack_like(spec: CommandSpec) -> bool:
    p = spec.params
    return (
        "target" in p
        and p["target"].type == "creature"
        and "attack" in p
        and p["attack"].type == "string"
        and _target_param(spec) == "target"
    )


def _is_entering(spec: CommandSpec) -> bool:
    p = spec.params
    return spec.id == "enter" and "zones" in p and p["zones"].type == "strings"


def _is_taking_position(spec: CommandSpec) -> bool:
    others = [n for n, p in spec.params.items() if n != "creature" and p.required]
    return spec.id == "take_position" and others == ["asset"]


class _Trials:
    """Decides commands for one creature against copies of ``state``."""

    def __init__(
        self,
        engine: _Engine,
        state: EncounterState,
        creature: Creature,
        actor: Actor,
    ) -> None:
        self.engine = engine
        self.state = state
        self.creature = creature
        self.actor = actor
        #: The refusals of the trials since :meth:`unanimous` was last asked.
        self.refused: list[Refusal] = []

    def accepts(self, spec: CommandSpec, **params: Any) -> bool:
        return self.outcome(spec, params) is not None

    def outcome(self, spec: CommandSpec, params: Mapping[str, Any]) -> _Outcome | None:
        """The outcome of the command with ``params``, or ``None`` if it is refused."""
        command = Command(spec.id, {"creature": self.creature.id, **params}, self.actor)
        outcome, refusal = self.engine.trial(self.state, command)
        if refusal is not None:
            self.refused.append(refusal)
        return outcome

    def unanimous(self) -> Refusal | None:
        """The refusal every trial since the last call got, when they all got the same one
        (so that it is what sending the command with any value gets)."""
        found = {(r.code, r.message): r for r in self.refused}
        self.refused = []
        return next(iter(found.values())) if len(found) == 1 else None

    def attacks(self, spec: CommandSpec, available: bool) -> tuple[AttackChoice, ...]:
        ids = list(self.state.creatures)
        return tuple(
            AttackChoice(
                name=a.name,
                label=attack_label(a),
                bonus=a.bonus,
                damage=a.damage,
                targets=tuple(t for t in ids if self.accepts(spec, target=t, attack=a.name))
                if available
                else (),
            )
            for a in self.creature.attacks
        )

    def targets(self, spec: CommandSpec, param: str) -> tuple[str, ...]:
        return tuple(t for t in self.state.creatures if self.accepts(spec, **{param: t}))

    def zones(self, spec: CommandSpec) -> tuple[ZoneChoice, ...]:
        s = self.state
        here = self.creature.zone or ""
        found: dict[str, ZoneChoice] = {}
        firsts = []
        for zone in s.arena.zones:
            if zone.id == here or not s.arena.links_between(here, zone.id):
                continue
            cost = self._cost(spec, (zone.id,))
            if cost is not None:
                found[zone.id] = ZoneChoice(zone.id, cost, (zone.id,))
                firsts.append(zone.id)
        for first in firsts:
            for zone in s.arena.zones:
                if zone.id in (here, first) or zone.id in found:
                    continue
                if not s.arena.links_between(first, zone.id):
                    continue
                cost = self._cost(spec, (first, zone.id))
                if cost is not None:
                    found[zone.id] = ZoneChoice(zone.id, cost, (first, zone.id))
        return tuple(found.values())

    def _cost(self, spec: CommandSpec, path: tuple[str, ...]) -> int | None:
        outcome = self.outcome(spec, {"zones": list(path)})
        if outcome is None:
            return None
        me = self.creature.id
        for event in outcome.events:
            if isinstance(event, ZoneEntered) and event.creature == me and not event.forced:
                return event.cost
        maneuver = outcome.state.maneuver  # waiting for reactions: the cost it will pay
        if maneuver is not None and maneuver.option("cost") is not None:
            return int(maneuver.option("cost") or 0)
        return 0

    def props(self, spec: CommandSpec) -> tuple[str, ...]:
        zone = self.creature.zone
        if zone is None:
            return ()
        return tuple(a.id for a in self.state.assets_in(zone) if self.accepts(spec, asset=a.id))


def _sequences(creature: Creature) -> tuple[tuple[SequenceItem, ...], ...]:
    action = next((a for a in creature.actions if a.id == MULTIATTACK and a.gm is None), None)
    return tuple(multiattack_sequences(action)) if action is not None else ()


def action_details(
    engine: _Engine,
    state: EncounterState,
    creature_id: str,
    actor: Actor,
) -> list[ActionDetail]:
    """Every creature command of ``engine`` for ``creature_id`` as ``actor`` sees it now
    (see :meth:`Engine.action_details <zonekeep.sdk.engine.Engine.action_details>`)."""
    creature = state.creatures[creature_id]
    trials = _Trials(engine, state, creature, actor)
    found = []
    for spec in engine.commands.values():
        if spec.who != "creature":
            continue
        if _needs_nothing_else(spec):
            # Nothing else to choose: the rules decide the command itself.
            command = Command(spec.id, {"creature": creature_id}, actor)
            refusal = engine.refusal_for(state, command)
        else:
            refusal = engine.command_refusal(state, spec, creature_id, actor)
        available = refusal is None
        detail = ActionDetail(
            spec.id,
            available,
            None if refusal is None else refusal.code,
            None if refusal is None else refusal.message,
        )
        target = _target_param(spec)
        if _is_attack_like(spec):
            detail = attrs.evolve(detail, attacks=trials.attacks(spec, available))
            values: tuple[object, ...] = tuple(t for a in detail.attacks or () for t in a.targets)
        elif _is_entering(spec):
            detail = attrs.evolve(detail, zones=trials.zones(spec) if available else ())
            values = detail.zones or ()
        elif _is_taking_position(spec):
            detail = attrs.evolve(detail, props=trials.props(spec) if available else ())
            values = detail.props or ()
        elif target is not None:
            detail = attrs.evolve(detail, targets=trials.targets(spec, target) if available else ())
            values = detail.targets or ()
        else:
            values = ()
        if spec.id == MULTIATTACK:
            detail = attrs.evolve(
                detail,
                sequences=_sequences(creature),
                attacks_left=tuple(state.resources.attacks_left)
                if state.active == creature_id
                else (),
            )
        if spec.choices is not None:
            listed = tuple(spec.choices(state, creature)) if available else ()
            detail = attrs.evolve(detail, choices=listed)
            values = values or listed
        every = trials.unanimous()
        if available and not values and every is not None:
            # Nothing fits, and for the same reason whatever is chosen: unavailable.
            detail = attrs.evolve(detail, available=False, code=every.code, message=every.message)
        found.append(detail)
    return found
