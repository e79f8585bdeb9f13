"""The context a rule receives: the working state, dice, and a way to emit events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NoReturn

import attrs

from ._actors import GM_ACTOR, Actor
from ._dice import Entropy, RollRecord, combine_advantage, expertise_die, roll
from ._errors import Refusal
from ._events import Event, PluginErrorRecorded
from ._state import EncounterState, apply_event
from ._types import Creature

RollKind = Literal["attack", "save", "check", "initiative"]


@attrs.frozen
class RollRequest:
    """What is about to be rolled: the kind, who rolls it and, for attacks, at whom.

    ``attack_kind`` is ``"melee"`` or ``"ranged"`` for attacks and ``attack`` the
    attack's name; ``ability`` names the ability for saves and checks (``"dex"``);
    ``skill`` the skill for checks (``"acrobatics"``, ``"tumble"`` for a Tumble).
    """

    kind: RollKind
    actor: str
    target: str | None = None
    attack_kind: str | None = None
    ability: str | None = None
    skill: str | None = None
    attack: str | None = None


@attrs.frozen
class RollModifier:
    """One source of advantage, disadvantage or an expertise die on a roll."""

    effect: Literal["advantage", "disadvantage", "expertise"]
    source: str


@attrs.frozen
class MoveRequest:
    """A move asked for: ``feet`` in ``mode`` and ``through`` the creatures crossed (the
    client's request); ``difficult`` and ``squeeze`` are facts the server derived from
    the arena and the state (difficult ground where the creature stands; squeezing),
    never flags a client sent."""

    feet: int
    mode: str = "walk"
    difficult: bool = False
    squeeze: bool = False
    through: tuple[str, ...] = ()


class ReadOnlyContext(RuntimeError):
    """A rule tried to :meth:`RuleContext.emit` on a read-only context: a plugin bug,
    blamed on that plugin like any other exception it raises."""


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
        #: Calls over the time budget seen in this context: (plugin, hook, seconds).
        self.overruns: list[tuple[str, str, float]] = []

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

        Raises :class:`ReadOnlyContext` on a read-only context (a question such as
        "which actions are available?", asked over the live state): nothing is applied,
        and the engine treats the emitting plugin as failed.
        """
        if self.read_only:
            raise ReadOnlyContext(
                f"emit() on a read-only rule context ({', '.join(type(e).__name__ for e in events)})"
            )
        for event in events:
            apply_event(self.state, event)
            self.events.append(event)

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
        """Roll ``expr`` + ``bonus``, applying the plugins' modifiers for ``request``."""
        mods = [*(self.modifiers(request) if request else []), *extra]
        adv = sum(1 for m in mods if m.effect == "advantage")
        dis = sum(1 for m in mods if m.effect == "disadvantage")
        experts = {m.source for m in mods if m.effect == "expertise"}
        sources = tuple(f"{m.effect}:{m.source}" for m in mods)
        return roll(
            self.entropy,
            expr,
            advantage=combine_advantage(adv, dis),
            expertise=expertise_die(len(experts)),
            bonus=bonus,
            sources=sources,
            double_dice=double_dice,
        )
