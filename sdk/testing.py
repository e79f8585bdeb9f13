"""An in-process harness: run an encounter with scripted dice, no server, no sockets.

::

    from zonekeep.sdk import Attack, Creature
    from zonekeep.sdk.testing import EncounterHarness

    h = EncounterHarness([Creature("a", "Aria", "party", controller="alice"), ...])
    h.start(initiative=[15, 10])           # surprise, positions, initiative
    h.send("dash", creature="a")           # as the GM; h.player("alice") to act as a player
    refusal = h.refused("dash", creature="a")
    assert refusal.code == "no_action_left"

Every command goes through the real engine and plugins. ``refused`` also checks
that the refused command changed nothing. The dice are counted as the server counts
them (each die drawn gets the next counter, recorded in the roll's ``draws``), and
every accepted command is checked as ``zonekeep verify`` checks a log: a die recorded
twice fails the test at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ._actors import GM_ACTOR, Actor
from ._arena import Arena
from ._commands import Command
from ._dice import ScriptedEntropy
from ._engine import Engine
from ._errors import Refusal
from ._events import Decision, Event, PluginEvent
from ._fairdice import dice_in
from ._isolation import Overrun
from ._loading import load_default_plugins
from ._serial import creature_to_dict, event_to_dict, state_to_dict
from ._state import EncounterState, replay
from ._types import Creature, EncounterOptions

__all__ = ["CountedScript", "EncounterHarness"]

E = TypeVar("E", bound=Event)


class CountedScript(ScriptedEntropy):
    """Scripted dice, counted like the server's: each die drawn takes the next
    ``counter`` (0, 1, 2 ...), which the roll records in its ``draws``, so the events
    carry the dice as a real encounter's log does."""

    def __init__(self, values: Iterable[int] = ()) -> None:
        super().__init__(values)
        self.counter = 0

    def randint(self, sides: int) -> int:
        value = super().randint(sides)
        self.counter += 1
        return value


class EncounterHarness:
    """One encounter driven command by command through the real engine.

    ``dice`` is a :class:`ScriptedEntropy`: push the exact results the next rolls
    must show with :meth:`rolls`. ``events`` keeps every accepted event in order.
    """

    def __init__(
        self,
        creatures: Sequence[Creature],
        *,
        options: EncounterOptions | None = None,
        arena: Arena | None = None,
        zones: Sequence[str] = (),
        plugins: Iterable[object] | None = None,
        extra_plugins: Iterable[object] = (),
        encounter_id: str = "test",
    ) -> None:
        chosen = list(load_default_plugins() if plugins is None else plugins)
        self.engine = Engine([*chosen, *extra_plugins])
        self.dice: ScriptedEntropy = CountedScript()
        #: The dice counters the accepted events recorded so far (each at most once).
        self.recorded: set[int] = set()
        outcome = self.engine.create(
            encounter_id, creatures, options=options, arena=arena, zones=zones
        )
        self.state: EncounterState = outcome.state
        self.events: list[Event] = list(outcome.events)

    # -- actors -----------------------------------------------------------------

    @staticmethod
    def player(player_id: str) -> Actor:
        return Actor("player", player_id)

    gm = GM_ACTOR

    # -- driving ----------------------------------------------------------------

    def rolls(self, *values: int) -> EncounterHarness:
        """Script the next dice results, in the order they will be rolled."""
        self.dice.push(*values)
        return self

    def command(self, command: Command) -> tuple[Event, ...]:
        """Handle ``command``; return its events, or raise :class:`Refusal`.

        When the scripted dice ran out during the command, :class:`ScriptExhausted` is
        raised instead, whatever the engine made of it: the engine treats an exception
        inside a plugin's hook as that plugin's failure (refusing the command, or
        skipping the plugin's answer), but here it means the test scripted too few rolls.

        With a time budget set (``engine.set_hook_budget``), the harness is the host
        that times plugin calls, as the server is: the calls over it are reported right
        after the command, accepted or not (``plugin_overran``, ``plugin_disabled`` at
        the limit), and those events follow the command's own in what this returns.
        """
        self.dice.exhausted = None
        mark = getattr(self.dice, "counter", None)
        try:
            with self.engine.hook.budget.watch() as overruns:
                outcome = self.engine.handle(self.state, command, self.dice)
        except Exception:
            if isinstance(mark, int):  # a refused command's dice never happened (the server's way)
                self.dice.counter = mark  # type: ignore[attr-defined]
            self._report(overruns)
            if self.dice.exhausted is not None:
                raise self.dice.exhausted from None
            raise
        if self.dice.exhausted is not None:
            raise self.dice.exhausted
        self.state = outcome.state
        self.events.extend(outcome.events)
        self.check_dice(outcome.events)
        return outcome.events + self._report(overruns)

    def check_dice(self, events: Iterable[Event]) -> None:
        """Fail (``AssertionError``) when ``events`` record a die the log already holds,
        which ``zonekeep verify`` refuses ("a die drawn twice"): a roll put into two
        events by hand rather than through :func:`~zonekeep.sdk.apply_damage` or
        :func:`~zonekeep.sdk.affect_zone` (which record it once)."""
        for event in events:
            for counter, sides, value in dice_in(event_to_dict(event)):
                if counter in self.recorded:
                    raise AssertionError(
                        f"the {event.type} event records die #{counter} (a d{sides} showing "
                        f"{value}) a second time: zonekeep verify would refuse this log "
                        "(a die drawn twice)"
                    )
                self.recorded.add(counter)

    def unrecorded_dice(self) -> list[int]:
        """The counters of the dice drawn so far that no event records (in a roll's
        ``draws``): a rule that rolled and kept the record to itself. A server logs such
        dice in a ``dice_drawn`` event of their own; a rule should put the roll in the
        event that reports its effect. Empty when every die is in the log."""
        counter = getattr(self.dice, "counter", None)
        if not isinstance(counter, int):
            return []
        return [c for c in range(counter) if c not in self.recorded]

    def _report(self, overruns: Sequence[Overrun]) -> tuple[Event, ...]:
        """Hand the engine the host's decision on ``overruns`` (see ``Budget.report``)."""
        report = self.engine.hook.budget.report(self.state, overruns)
        if report is None:
            return ()
        outcome = self.engine.handle(self.state, report, self.dice)
        self.state = outcome.state
        self.events.extend(outcome.events)
        self.check_dice(outcome.events)
        return outcome.events

    def send(self, type: str, actor: Actor = GM_ACTOR, /, **params: object) -> tuple[Event, ...]:
        """Send a command; return its events, or raise :class:`Refusal`.

        ``type`` and ``actor`` are positional only, so that every keyword is a parameter
        of the command (even one called ``type`` or ``actor``).
        """
        return self.command(Command(type, params, actor))

    def refused(self, type: str, actor: Actor = GM_ACTOR, /, **params: object) -> Refusal:
        """Send a command that must be refused; check it changed nothing; return the refusal."""
        before = state_to_dict(self.state)
        count = len(self.events)
        try:
            self.send(type, actor, **params)
        except Refusal as refusal:
            assert state_to_dict(self.state) == before, "a refused command changed the state"
            assert len(self.events) == count, "a refused command produced events"
            # Dice rolled before the refusal are spent, like a die already thrown.
            return refusal
        raise AssertionError(f"{type} {dict(params)} was accepted, expected a refusal")

    def start(
        self,
        *,
        surprised: Sequence[str] = (),
        positions: Mapping[str, str] | None = None,
        initiative: Sequence[int] = (),
    ) -> tuple[Event, ...]:
        """Run surprise, positions and initiative with ``initiative`` as the d20 results."""
        self.send("set_surprise", surprised=list(surprised))
        self.send("place", positions=dict(positions or {}))
        self.rolls(*initiative)
        return self.send("roll_initiative")

    def decision(self, kind: str | None = None) -> Decision:
        """The first pending decision (of ``kind`` when given): a reaction offered by
        :func:`~zonekeep.sdk.offer_reaction`, an opportunity attack, a tie. Fails the test
        when there is none."""
        found = [d for d in self.state.pending if kind is None or d.kind == kind]
        assert found, f"no pending decision{f' of kind {kind!r}' if kind else ''}"
        return found[0]

    def decide(
        self, choice: str | Sequence[str], actor: Actor = GM_ACTOR, /, *, kind: str | None = None
    ) -> tuple[Event, ...]:
        """Answer the first pending decision (of ``kind`` when given) with ``choice`` (one
        option, or an ordering), as ``actor`` (the GM unless told); return the events
        (the reaction carried out, the attack it interrupted resumed)."""
        decision = self.decision(kind)
        answer = [choice] if isinstance(choice, str) else list(choice)
        return self.send("decide", actor, decision=decision.id, choice=answer)

    def time_out(self, kind: str | None = None) -> tuple[Event, ...]:
        """Let the first pending decision's deadline pass (of ``kind`` when given): its
        default applies, as the server applies it (``decision_timeout``)."""
        return self.send("decision_timeout", decision=self.decision(kind).id)

    def end_turn(self) -> tuple[Event, ...]:
        """End the active creature's turn, as the GM."""
        assert self.state.active is not None, "nobody's turn is running"
        return self.send("end_turn", creature=self.state.active)

    # -- looking ----------------------------------------------------------------

    def creature(self, cid: str) -> Creature:
        return self.state.creatures[cid]

    def of_type(self, cls: type[E]) -> list[E]:
        """The accepted events of one class, in order (typed as that class)."""
        return [e for e in self.events if isinstance(e, cls)]

    def creature_view(self, cid: str) -> dict[str, Any]:
        """Creature ``cid`` as the GM's snapshot shows it: every trait, action and attack
        rider with ``automated`` (and, when false, ``gm``: why) filled in from this
        harness's plugins."""
        data: dict[str, Any] = creature_to_dict(self.state.creatures[cid])
        self.engine.catalog.mark_features(data, self.state.disabled_plugins)
        return data

    def replayed(self) -> EncounterState:
        """The state rebuilt from the events alone (plugin events folded by this
        harness's plugins, as a server restarting from its store does)."""
        return replay(self.events, self.engine.catalog)

    def plugin_state(self, namespace: str) -> dict[str, Any]:
        """Plugin ``namespace``'s own state now, every declared key present (what its
        hooks get from ``ctx.plugin_state``)."""
        return self.engine.catalog.state_of(self.state.plugin_state, namespace)

    def plugin_events(self, type: str) -> list[PluginEvent]:
        """The accepted plugin events of ``type`` (a full id or a short name), in order."""
        full = self.engine.catalog.resolve("event type", type)
        return [e for e in self.events if isinstance(e, PluginEvent) and e.type == full]

    def assert_replay_matches(self) -> None:
        assert state_to_dict(self.replayed()) == state_to_dict(self.state)
