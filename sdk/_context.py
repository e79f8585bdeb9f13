"""The context a rule receives: the working state, dice, and a way to emit events."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Literal, NoReturn

import attrs

from ._actors import GM_ACTOR, Actor
from ._custom import AmbiguousId, CustomEventError, PluginCatalog
from ._dice import Entropy, RollRecord, combine_advantage, expertise_die, roll
from ._errors import Refusal
from ._events import (
    AssetRemoved,
    ConditionApplied,
    ConditionEffectApplied,
    ConditionEffectEnded,
    ConditionRemoved,
    EffectEnded,
    Event,
    PluginErrorRecorded,
    PluginEvent,
    ResourceSpent,
)
from ._fairdice import draw
from ._state import _REDUCERS, EncounterState, apply_event
from ._types import Creature

RollKind = Literal["attack", "save", "check", "initiative"]


@attrs.frozen
class RollRequest:
    """What is about to be rolled: the kind, who rolls it and, for attacks, at whom.

    ``attack_kind`` is ``"melee"`` or ``"ranged"`` for attacks and ``attack`` the
    attack's name; ``ability`` names the ability for saves and checks (``"dex"``);
    ``skill`` the skill for checks (``"acrobatics"``, ``"tumble"`` for a Tumble).

    For saves, ``against`` names what a failure would bring (the conditions it would
    impose: ``("prone",)``, ``("charmed",)``; empty when it is only damage or the
    caller does not say) and ``magical`` is true for a save against a spell or another
    magical effect: what advantage "on saves against being frightened" or "against
    magic" looks at.
    """

    kind: RollKind
    actor: str
    target: str | None = None
    attack_kind: str | None = None
    ability: str | None = None
    skill: str | None = None
    attack: str | None = None
    against: tuple[str, ...] = ()
    magical: bool = False


@attrs.frozen
class RollModifier:
    """One source of advantage, disadvantage, an expertise die, a penalty die or a bonus
    on a roll.

    ``"penalty"`` subtracts a die of ``die`` sides (Bane's d4) from the roll's total; a
    roll takes one penalty die, the largest its sources give (the same die from two
    sources does not stack). A ``"bonus"`` adds ``value`` (a fighting style's +2, a
    Sacred Weapon's Charisma modifier; negative for a penalty, Slow's -2 to Dexterity
    saves) and, when ``die`` is more than 0, one die of that many sides rolled with it (a
    Bardic Inspiration d6): both go into the roll's ``modifier`` and ``total``, and its
    ``sources`` say ``bonus:<source> +2`` or ``bonus:<source> d6=4``. ``spends`` names a
    resource of the roller that the bonus uses up: the roll sets it to 0
    (``resource_spent``), so that a once-only bonus (an inspiration die) goes with the
    first roll it is added to. The other effects ignore ``value``, ``die`` and ``spends``.
    """

    effect: Literal["advantage", "disadvantage", "expertise", "penalty", "bonus"]
    source: str
    value: int = 0
    die: int = 0
    spends: str | None = None


@attrs.frozen
class MoveRequest:
    """A movement whose cost the plugins' surcharges raise (``zonekeep_movement_surcharges``).

    ``kind`` says which: ``"move"`` (the ``move`` command, inside a zone: ``feet`` in
    ``mode`` and ``through`` the creatures crossed, the client's request) or ``"enter"``
    (the ``enter`` command, Dash and Sprint included, going on past ``zone``: ``feet`` is
    the movement available, which divided by 1 + the surcharges must exceed that zone's
    size). ``zone`` is the zone entered or passed through (``None`` for a ``move``).
    ``difficult`` and ``squeeze`` are facts the server derived from the arena and the
    state (difficult ground where the creature stands, or in the zone passed through;
    squeezing), never flags a client sent."""

    feet: int
    mode: str = "walk"
    difficult: bool = False
    squeeze: bool = False
    through: tuple[str, ...] = ()
    kind: Literal["move", "enter"] = "move"
    zone: str | None = None


class ReadOnlyContext(RuntimeError):
    """A rule tried to :meth:`RuleContext.emit` on a read-only context: a plugin bug,
    blamed on that plugin like any other exception it raises."""


#: The events that can give or take away conditions: after each, the condition
#: lifecycle hooks run for every creature whose conditions changed.
_CONDITION_EVENTS = (
    ConditionApplied,
    ConditionRemoved,
    ConditionEffectApplied,
    ConditionEffectEnded,
)
_CONDITION_EVENT_TYPES = frozenset(_CONDITION_EVENTS)
#: The events that end something ongoing: after each (and the condition lifecycle hooks
#: it set off), the ``zonekeep_effect_ended`` triggers run.
_ENDING_EVENT_TYPES = frozenset((ConditionEffectEnded, EffectEnded, AssetRemoved))


class ObserverContext:
    """The restricted context an observer (``zonekeep_event_applied``) receives: the
    state to read (``state``, as it is right after the event) and who acted
    (``actor``). It has no dice and no refusal, and :meth:`emit` raises
    :class:`ReadOnlyContext` (counted as the plugin's failure): an observer watches,
    it never changes the encounter."""

    read_only = True

    def __init__(self, parent: RuleContext) -> None:
        self._parent = parent

    @property
    def state(self) -> EncounterState:
        return self._parent.state

    @property
    def actor(self) -> Actor:
        return self._parent.actor

    def emit(self, *events: Event) -> NoReturn:
        """Always raises :class:`ReadOnlyContext`: observers cannot emit."""
        raise ReadOnlyContext(
            f"emit() in an observer ({', '.join(type(e).__name__ for e in events)})"
        )

    def is_enemy(self, a: Creature, b: Creature) -> bool:
        return a.side != b.side

    def plugin_state(self, namespace: str) -> dict[str, Any]:
        """The plugin state of ``namespace``, as :meth:`RuleContext.plugin_state` gives it."""
        return self._parent.plugin_state(namespace)

    def setting(self, plugin: str, key: str) -> Any:
        """The effective value of a plugin's setting, as :meth:`RuleContext.setting`."""
        return self._parent.setting(plugin, key)

    def settings(self, plugin: str) -> dict[str, Any]:
        """Every setting of ``plugin``, as :meth:`RuleContext.settings`."""
        return self._parent.settings(plugin)

    def plugin_failed(self, plugin: str, hook: str, error: str) -> None:
        """The engine's: a failing observer is reported on the command's context."""
        self._parent.plugin_failed(plugin, hook, error)


class RuleContext:
    """What a rule (a hook or a command handler) works with.

    ``state`` is the command's working copy: events emitted through :meth:`emit`
    are applied to it at once, so later rules see their effect. If the command is
    refused, the working copy and every event are thrown away.
    """

    def __init__(
        self,
        state: EncounterState,
        entropy: Entropy,
        hook: Any,
        actor: Actor = GM_ACTOR,
        *,
        read_only: bool = False,
    ) -> None:
        self.state = state
        self.entropy = entropy
        self.hook = hook
        self.actor = actor
        #: The cost the engine charged for the command being handled.
        self.paid: str = "free"
        self.events: list[Event] = []
        #: True for a context over a state that must not change (a question, not a
        #: command): plugin failures are then collected in :attr:`plugin_errors`.
        self.read_only = read_only
        #: The skipped plugin contributions seen by a read-only context.
        self.plugin_errors: list[PluginErrorRecorded] = []
        self._failed: set[tuple[str, str]] = set()
        #: The engine's plugin namespaces, event types and state specs (``None`` for a
        #: context made without an engine).
        self.catalog: PluginCatalog | None = getattr(hook, "catalog", None)
        #: True while observers run (the events they cause, plugin errors, are not observed).
        self._observing = False
        #: The dice (``(counter, sides)``) the events emitted so far record: a roll handed
        #: to several events (one damage roll for everyone in an area) is recorded once.
        self._recorded: set[tuple[int, int]] = set()

    def plugin_failed(self, plugin: str, hook: str, error: str) -> None:
        """Note that ``plugin``'s ``hook`` failed and its contribution was skipped.

        The engine calls this (rules do not need to). A command's context emits one
        ``plugin_error`` event per plugin and hook; a read-only one collects them in
        :attr:`plugin_errors`.
        """
        if (plugin, hook) in self._failed:
            return
        self._failed.add((plugin, hook))
        event = PluginErrorRecorded(plugin, hook, error)
        if self.read_only:
            self.plugin_errors.append(event)
        else:
            self.emit(event)

    def emit(self, *events: Event) -> None:
        """Apply ``events`` to the working state and record them, in order.

        An event whose ``roll`` an earlier event of the command already recorded (the same
        dice, by their counters) is recorded without that roll's ``draws``: each die is
        in the log once, as ``zonekeep verify`` demands (SPEC.md, "Dice").

        Raises :class:`ReadOnlyContext` on a read-only context (a question such as
        "which actions are available?", asked over the live state): nothing is applied,
        and the engine treats the emitting plugin as failed.
        """
        if self.read_only:
            raise ReadOnlyContext(
                f"emit() on a read-only rule context ({', '.join(type(e).__name__ for e in events)})"
            )
        for event in events:
            state = self.state
            before = None
            if type(event) is PluginEvent:
                if self.catalog is None:
                    raise CustomEventError(f"no plugin declares the event type {event.type!r}")
                event = self.catalog.checked(event)
                apply_event(state, event, self.catalog, strict=True)
            else:
                kind = type(event)
                rolled = getattr(event, "roll", None)
                if type(rolled) is RollRecord and rolled.draws:
                    if self._recorded.issuperset(rolled.draws):
                        # Already in the log (this command's earlier event): its dice
                        # again, without the draws a verifier would count twice.
                        again = {"roll": attrs.evolve(rolled, draws=())}
                        event = attrs.evolve(event, **again)
                    else:
                        self._recorded.update(rolled.draws)
                if kind in _CONDITION_EVENT_TYPES:  # an event of another type has no reducer
                    before = {cid: set(c.conditions) for cid, c in state.creatures.items()}
                # apply_event, inline (this is the hot path): the reducer, then the seq.
                _REDUCERS[kind](state, event)
                state.seq += 1
            self.events.append(event)
            if not self._observing:
                observers = self.hook.zonekeep_event_applied
                # No observer (the usual case): nothing to call, no observer context to
                # make.
                if observers.plan:
                    self._observing = True
                    try:
                        observers(ctx=ObserverContext(self), event=event)
                    finally:
                        self._observing = False
            if before is not None:
                self._condition_lifecycle(event, before)
            if type(event) in _ENDING_EVENT_TYPES:
                self.hook.zonekeep_effect_ended(ctx=self, ended=event)

    def _condition_lifecycle(self, event: Event, before: dict[str, set[str]]) -> None:
        """Run ``zonekeep_condition_applied`` / ``zonekeep_condition_removed`` for every
        condition ``event`` gave or took away (creatures in id order, conditions sorted)."""
        expired = isinstance(event, ConditionEffectEnded) and event.expired
        reason = getattr(event, "reason", "") or getattr(event, "source", "")
        for cid in sorted(before):
            creature = self.state.creatures.get(cid)
            if creature is None:
                continue
            now = set(creature.conditions)
            for condition in sorted(now - before[cid]):
                self.hook.zonekeep_condition_applied(
                    ctx=self, creature=self.state.creatures[cid], condition=condition
                )
            for condition in sorted(before[cid] - now):
                self.hook.zonekeep_condition_removed(
                    ctx=self,
                    creature=self.state.creatures[cid],
                    condition=condition,
                    reason=reason,
                    expired=expired,
                )

    def plugin_state(self, namespace: str) -> dict[str, Any]:
        """Plugin ``namespace``'s own state (its name: ``ctx.plugin_state("hazards")``),
        every declared key present (at its default until an event changed it).

        A copy: changing it changes nothing. Plugin state changes only through the
        plugin's event types and their reducers (``zonekeep_event_types``)."""
        if self.catalog is None:
            return copy.deepcopy(self.state.plugin_state.get(namespace, {}))
        return self.catalog.state_of(self.state.plugin_state, namespace)

    def resolve(self, kind: str, name: str) -> str:
        """The full id ``name`` stands for among the declared ids of ``kind``
        (``"command"``, ``"condition"``, ``"asset tag"``, ``"event type"``,
        ``"setting"``): ``"burning"`` -> ``"hazards.burning"`` while no other plugin
        declares a ``burning``. A full id, or a name nobody declares, comes back as is.
        Refuses the command (``ambiguous_id``) naming every id a short name could be."""
        if self.catalog is None:
            return name
        try:
            return self.catalog.resolve(kind, name)
        except AmbiguousId as exc:
            self.refuse("ambiguous_id", str(exc))

    def feature_problems(self, creature: Creature, where: str = "creature") -> list[str]:
        """Every way the ``params`` of ``creature``'s traits, actions and attack riders
        break the schemas of the plugins implementing them (``zonekeep_features``), one
        sentence each naming the path; a creature added mid-encounter is checked with it
        as a roster is at ``create_encounter``."""
        if self.catalog is None:
            return []
        return self.catalog.creature_feature_problems(creature, where)

    def refuse(self, code: str, message: str) -> NoReturn:
        """Refuse the command: nothing it did so far will happen."""
        raise Refusal(code, message)

    def creature(self, cid: object, *, role: str = "creature") -> Creature:
        """The creature ``cid``, or a refusal naming the unknown id."""
        if not isinstance(cid, str) or cid not in self.state.creatures:
            self.refuse("unknown_creature", f"There is no {role} {cid!r} in this encounter.")
        return self.state.creatures[cid]

    def setting(self, plugin: str, key: str) -> Any:
        """The effective value of ``plugin``'s setting ``key`` in this encounter: the
        GM's (the encounter's ``options.settings``) over the operator's (the server's
        ``plugin_settings``) over the plugin's declared default (docs/plugins.md,
        "Settings"). ``KeyError`` for a setting ``plugin`` does not declare."""
        values = self.state.options.settings.get(plugin, {})
        if key in values:
            return values[key]
        spec = getattr(self.hook, "settings", {}).get(plugin, {}).get(key)
        if spec is None:
            raise KeyError(f"plugin {plugin!r} declares no setting {key!r}")
        return spec.default

    def settings(self, plugin: str) -> dict[str, Any]:
        """Every setting of ``plugin`` with its effective value (see :meth:`setting`)."""
        declared = getattr(self.hook, "settings", {}).get(plugin, {})
        values = {key: spec.default for key, spec in declared.items()}
        values.update(self.state.options.settings.get(plugin, {}))
        return values

    def is_enemy(self, a: Creature, b: Creature) -> bool:
        return a.side != b.side

    def end_blockers(self) -> list[str]:
        """Every time-sensitive threat the plugins name that keeps the encounter from
        ending (``zonekeep_end_blockers``), in plugin order."""
        found: list[str] = []
        for batch in self.hook.zonekeep_end_blockers(ctx=self):
            found.extend(batch or ())
        return found

    def next_decision_id(self) -> str:
        """The id the next ``DecisionOpened`` gets: ``d1``, ``d2``, ... per encounter."""
        return f"d{self.state.decisions_opened + 1}"

    def modifiers(self, request: RollRequest) -> list[RollModifier]:
        """All roll modifiers the plugins contribute to ``request``."""
        found: list[RollModifier] = []
        for batch in self.hook.zonekeep_roll_modifiers(ctx=self, roll=request):
            if batch:
                found.extend(batch)
        return found

    def roll(
        self,
        expr: str,
        request: RollRequest | None = None,
        *,
        bonus: int = 0,
        extra: Iterable[RollModifier] = (),
        double_dice: bool = False,
    ) -> RollRecord:
        """Roll ``expr`` + ``bonus``, applying the plugins' modifiers for ``request``
        (a ``"bonus"`` one's die is rolled after the roll's own dice, and kept in the
        record's ``bonus_dice`` with its ``draws``: the event that carries the record
        carries every die of it)."""
        mods = [*(self.modifiers(request) if request else []), *extra]
        adv = dis = 0
        experts: set[str] = set()
        penalty = 0
        bonuses: list[RollModifier] = []
        for m in mods:
            if m.effect == "penalty":
                penalty = max(penalty, m.die)
            if m.effect == "advantage":
                adv += 1
            elif m.effect == "disadvantage":
                dis += 1
            elif m.effect == "expertise":
                experts.add(m.source)
            elif m.effect == "bonus" and m not in bonuses:  # an identical bonus counts once
                bonuses.append(m)
        record = roll(
            self.entropy,
            expr,
            advantage=combine_advantage(adv, dis),
            expertise=expertise_die(len(experts)),
            bonus=bonus,
            sources=(
                tuple([f"{m.effect}:{m.source}" for m in mods if m.effect != "bonus"])
                if mods
                else ()
            ),
            double_dice=double_dice,
            penalty=penalty,
        )
        if not bonuses:
            return record
        added, said = 0, []
        faces: list[int] = []
        draws: list[tuple[int, int]] | None = list(record.draws)
        for m in bonuses:
            amount, text = m.value, f"{m.value:+d}"
            if m.die > 0:
                rolled, named = draw(self.entropy, m.die)
                faces.append(rolled)
                if draws is not None and named is not None:
                    draws.append(named)
                else:
                    draws = None  # uncounted entropy: no draws at all
                amount += rolled
                text = f"d{m.die}={rolled}" + (f"{m.value:+d}" if m.value else "")
            added += amount
            said.append(f"bonus:{m.source} {text}")
            actor = self.state.creatures.get(request.actor) if request else None
            if m.spends is not None and actor is not None and actor.resources.get(m.spends, 0):
                self.emit(ResourceSpent(actor.id, m.spends, 0))
        return attrs.evolve(
            record,
            modifier=record.modifier + added,
            total=record.total + added,
            sources=(*record.sources, *said),
            bonus_dice=tuple(faces),
            draws=tuple(draws) if draws is not None else (),
        )
