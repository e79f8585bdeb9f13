"""The engine: a pure command handler over encounter state.

Given a state, a command and an entropy source, :meth:`Engine.handle` returns the
events the command causes and the state after them, or raises a
:class:`~zonekeep.sdk.Refusal`. The state passed in is never modified, so a
refused command changes nothing. No trio and no I/O; what it decides never depends
on a clock: while a host watches plugin time (:class:`~zonekeep.sdk.engine.Budget`),
hook calls are timed and noted for the host, which reports overruns to the engine as
a command of its own (``report_plugin_overruns``), so a log folds the same on any
machine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from time import perf_counter
from typing import Any, TypeVar

import attrs

from . import _hookspecs
from ._actors import SYSTEM_ACTOR, Actor
from ._arena import Arena, Link, Zone, check_tag_schema, single_zone_arena
from ._commands import Command, CommandSpec, Param, Requirement
from ._conditions import (
    AssetTagConflict,
    ConditionConflict,
    declared_asset_tags,
    declared_conditions,
)
from ._context import RuleContext
from ._custom import AmbiguousId, EventTypeSpec, PluginCatalog, StateSpec, qualify
from ._details import ActionDetail, OnesEntropy, plugin_refusal
from ._details import action_details as _action_details
from ._dice import Entropy, RandomEntropy
from ._errors import Refusal
from ._events import (
    ActionTaken,
    EncounterCreated,
    EncounterEnded,
    Event,
    PluginDisabled,
    PluginErrorRecorded,
    PluginOverran,
)
from ._features import FeatureSpec
from ._isolation import (
    PASS_THROUGH,
    REPORT_OVERRUNS,
    Budget,
    HookManager,
    PluginFailure,
    SafeHooks,
    declared_commands,
    is_plugin_failure,
    wrappers,
)
from ._json import json_kind
from ._loading import (
    BUILT_IN,
    IN_PROCESS,
    LoadedPlugin,
    PluginLoadError,
    as_loaded,
    builtin_plugins,
    declared_info,
    discover,
)
from ._plugin import PluginInfo
from ._reactions import interrupting
from ._settings import SettingsError, SettingSpec, declared_settings, effective_settings
from ._settings import settings_problems as _settings_problems
from ._state import EncounterState, apply_event, replay, working_copy
from ._types import Creature, EncounterOptions

log = logging.getLogger("zonekeep.engine")

#: The dice of a read-only context made without any (:meth:`Engine.context`): the
#: system's entropy, which keeps no state, so one serves every such context.
_SYSTEM_ENTROPY = RandomEntropy()


class PluginConflict(RuntimeError):
    """Two plugins declared the same command id."""


@attrs.frozen
class Outcome:
    """The result of an accepted command: its ``events`` and the ``state`` after them."""

    events: tuple[Event, ...]
    state: EncounterState


_COST_CODES = {
    "action": ("no_action_left", "has no action left this turn"),
    "attack": ("no_action_left", "has no attack of its Attack action left this turn"),
    "bonus": ("no_bonus_action_left", "has no bonus action left this turn"),
    "interaction": ("no_interaction_left", "has no interaction left this turn"),
    "reaction": ("no_reaction_left", "has already used its reaction this round"),
}

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "creature": (str,),
    "string": (str,),
    "zone": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "creatures": (list, tuple),
    "strings": (list, tuple),
    "any": (object,),
}


def _loaded(plugins: Iterable[object] | None) -> list[LoadedPlugin]:
    return builtin_plugins() if plugins is None else [as_loaded(p) for p in plugins]


def make_plugin_manager(plugins: Iterable[object] | None = None) -> HookManager:
    """A plugin manager with zonekeep's hookspecs and ``plugins`` registered.

    ``None`` means :data:`zonekeep.plugins.default_plugins`. Items may be plugin
    objects or :class:`~zonekeep.sdk.engine.LoadedPlugin` (from
    :func:`~zonekeep.sdk.engine.discover`), registered under their names.
    """
    pm = HookManager(_hookspecs.PROJECT)
    pm.add_hookspecs(_hookspecs)
    for loaded in _loaded(plugins):
        pm.register(loaded.plugin, name=loaded.name)
    return pm


_T = TypeVar("_T")


def _checked_requires(
    requires: Requirement,
    state: EncounterState,
    creature: Creature,
) -> tuple[str, str] | None:
    """What ``requires`` returned, if it is ``None`` or a ``(code, message)`` pair."""
    unmet = requires(state, creature)
    if unmet is not None and not (
        isinstance(unmet, tuple) and len(unmet) == 2 and all(isinstance(x, str) for x in unmet)
    ):
        raise TypeError(f"'requires' returned {unmet!r}; expected (code, message) or None")
    return unmet


def _check_params(spec: CommandSpec, params: Mapping[str, Any]) -> None:
    known = spec.params
    for k in params:
        if k not in known:
            unknown = sorted(set(params) - set(known))
            raise Refusal(
                "invalid_params",
                f"'{spec.id}' does not take the parameter(s) {', '.join(unknown)}; "
                f"it takes: {', '.join(spec.params) or 'nothing'}.",
            )
    for name, param in known.items():
        value = params.get(name)
        if value is None:
            if param.required:
                raise Refusal("invalid_params", f"'{spec.id}' needs the parameter '{name}'.")
            continue
        kind = param.type
        if kind == "creature" or kind == "string" or kind == "zone":  # the usual case
            ok = isinstance(value, str)
        else:
            ok = isinstance(value, _PY_TYPES[kind]) and not (
                kind == "integer" and isinstance(value, bool)
            )
            if ok and kind in ("creatures", "strings"):
                ok = all(isinstance(v, str) for v in value)
        if not ok:
            raise Refusal(
                "invalid_params",
                f"'{spec.id}' parameter '{name}' must be {_describe(param)}, "
                f"not {json_kind(value)}.",
            )


def _without_nulls(command: Command) -> Command:
    """Optional parameters sent as ``null`` mean the same as leaving them out."""
    for v in command.params.values():
        if v is None:
            break
    else:
        return command
    return attrs.evolve(command, params={k: v for k, v in command.params.items() if v is not None})


def _describe(param: Param) -> str:
    return {
        "creature": "a creature id (text)",
        "string": "text",
        "zone": "a zone id (text)",
        "integer": "a whole number",
        "boolean": "true or false",
        "object": "an object",
        "creatures": "a list of creature ids",
        "strings": "a list of text values",
        "any": "a value",
    }[param.type]


class Engine:
    """The rules engine: plugins, command specs and the pure command handler."""

    def __init__(self, plugins: Iterable[object] | None = None) -> None:
        loaded = _loaded(plugins)
        self.pm = make_plugin_manager(loaded)
        #: The hooks, each call isolated per plugin and timed (see :mod:`._isolation`).
        self._last_arena: tuple[Arena, Arena] | None = None
        self.hook = SafeHooks(
            self.pm, Budget(exempt=frozenset(p.name for p in loaded if p.source == BUILT_IN))
        )
        self.commands: dict[str, CommandSpec] = {}
        owners: dict[str, str] = {}
        sources = {p.name: p.source for p in loaded}

        def who(name: str) -> str:
            source = sources.get(name, IN_PROCESS)
            local = source in (BUILT_IN, IN_PROCESS)
            return f"{name!r}" + ("" if local else f" (from distribution {source!r})")

        problems = wrappers(self.pm)
        if problems:
            raise PluginLoadError(problems)
        #: The plugins' namespaces, declared ids, event types and state (see :mod:`._custom`).
        self.catalog = PluginCatalog()
        for p in loaded:
            self.catalog.namespaces[p.name] = _namespace_of(p)
        self.hook.catalog = self.catalog
        for plugin_name, spec in declared_commands(self.pm, who):
            try:
                full = qualify(self.catalog.namespace(plugin_name), spec.id)
            except ValueError as exc:
                raise PluginLoadError([f"plugin {who(plugin_name)}: {exc}"]) from None
            if full != spec.id:
                spec = attrs.evolve(spec, id=full)
            if spec.id in self.commands:
                raise PluginConflict(
                    f"command {spec.id!r} is declared by both plugin "
                    f"{who(owners[spec.id])} and plugin {who(plugin_name)}"
                )
            self.commands[spec.id] = spec
            owners[spec.id] = plugin_name
            self.catalog.declare("command", plugin_name, spec.id)
        self.command_owners = owners
        ns = self.catalog.namespace
        try:
            #: The conditions and the asset tags the plugins give meaning to, by full id,
            #: and the plugin declaring each condition (announced with it in ``hello``).
            self.condition_owners: dict[str, str] = {}
            self.conditions = declared_conditions(self.pm, who, ns, self.condition_owners)
            #: The plugin that declares each asset tag, by the tag's id in :attr:`asset_tags`.
            self.asset_tag_owners: dict[str, str] = {}
            self.asset_tags = declared_asset_tags(self.pm, who, ns, self.asset_tag_owners)
        except (ConditionConflict, AssetTagConflict) as exc:
            raise PluginConflict(str(exc)) from None
        except BaseException as exc:  # a plugin's zonekeep_conditions failed: do not start
            if not is_plugin_failure(exc):
                raise
            raise PluginLoadError([f"declaring conditions failed: {exc!r}"]) from None
        for kind, declared_by in (
            ("condition", self.condition_owners),
            ("asset tag", self.asset_tag_owners),
        ):
            for full, plugin_name in declared_by.items():
                self.catalog.declare(kind, plugin_name, full)
        self._declare_custom(who)
        self._declare_data(who)
        #: What runs, in load order, each with the commands it adds (see ``describe_plugins``).
        self.plugins: tuple[LoadedPlugin, ...] = tuple(
            attrs.evolve(p, commands=tuple(c for c, o in owners.items() if o == p.name))
            for p in loaded
        )

    def _declare_custom(self, who: Callable[[str], str]) -> None:
        """Collect the event types and plugin state the plugins declare; refuse to start
        (:class:`PluginLoadError`, every problem at once) when any is wrong."""
        problems: list[str] = []
        for hook, kind, add in (
            ("zonekeep_plugin_state", StateSpec, self.catalog.add_state),
            ("zonekeep_event_types", EventTypeSpec, self.catalog.add_event_type),
            ("zonekeep_features", FeatureSpec, self.catalog.add_feature),
        ):
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                try:
                    specs = tuple(impl.function() or ())
                except BaseException as exc:
                    if not is_plugin_failure(exc):
                        raise
                    problems.append(f"plugin {who(impl.plugin_name)} failed in {hook}: {exc!r}")
                    continue
                for spec in specs:
                    if not isinstance(spec, kind):
                        problems.append(
                            f"plugin {who(impl.plugin_name)} declared {spec!r} in {hook}; "
                            f"expected {kind.__name__} objects"
                        )
                        continue
                    problems.extend(add(impl.plugin_name, spec))  # type: ignore[arg-type]
        if problems:
            raise PluginLoadError(problems)

    def resolve(self, kind: str, name: str) -> str:
        """The full id ``name`` stands for among the declared ids of ``kind``
        (``"command"``, ``"condition"``, ``"asset tag"``, ``"event type"``,
        ``"setting"``), or ``name`` unchanged when nobody declares it. Raises
        :class:`~zonekeep.sdk.Refusal` (``ambiguous_id``) naming every id an
        ambiguous short name could be."""
        try:
            return self.catalog.resolve(kind, name)
        except AmbiguousId as exc:
            raise Refusal("ambiguous_id", str(exc)) from None

    def replay(self, events: Iterable[Event]) -> EncounterState:
        """:func:`~zonekeep.sdk.replay` with this engine's plugin event types."""
        return replay(events, self.catalog)

    def _declare_data(self, who: Callable[[str], str]) -> None:
        """The asset tags' owners and data schemas, and the plugins' settings: a bad
        schema or default stops the engine (:class:`PluginLoadError`, naming the plugin)."""
        problems = []
        for tag, spec in self.asset_tags.items():
            owner = self.asset_tag_owners.get(tag, "")
            try:
                check_tag_schema(spec)
            except ValueError as exc:
                problems.append(f"plugin {who(owner)}: {exc}")
        if problems:
            raise PluginLoadError(problems)
        try:
            #: Every plugin's settings, by plugin name then setting id (``zonekeep_settings``).
            self.settings: dict[str, dict[str, SettingSpec]] = declared_settings(self.pm, who)
        except SettingsError as exc:
            raise PluginLoadError([str(exc)]) from None
        except BaseException as exc:  # a plugin's zonekeep_settings failed: do not start
            if not is_plugin_failure(exc):
                raise
            raise PluginLoadError([f"declaring settings failed: {exc!r}"]) from None
        self.hook.settings = self.settings  # for RuleContext.setting's defaults

    def settings_problems(self, given: object, path: str = "options.settings") -> list[str]:
        """Every problem of ``given`` as plugin settings (``{plugin: {id: value}}``),
        as ``"<path>.<plugin>.<id>: sentence"`` (see :func:`zonekeep.sdk.host.settings_problems`)."""
        return [
            f"{where}: {message}"
            for where, message in _settings_problems(given, self.settings, path)
        ]

    def set_hook_budget(self, seconds: float | None, overruns: int) -> None:
        """Hold every call of plugin code to ``seconds`` (``None``: no budget); a
        third-party plugin over it ``overruns`` times in one encounter (0: never) is
        switched off there. The server passes its config here."""
        self.hook.budget.seconds = seconds
        self.hook.budget.limit = overruns

    @classmethod
    def from_config(cls, enabled: Iterable[str] = (), disabled: Iterable[str] = ()) -> Engine:
        """An engine running the built-ins and the installed third-party plugins.

        See :func:`~zonekeep.sdk.engine.discover` for ``enabled`` and
        ``disabled``; raises :class:`~zonekeep.sdk.engine.PluginLoadError`
        or :class:`PluginConflict`.
        """
        return cls(discover(enabled, disabled))

    # -- creating -------------------------------------------------------------

    def create(
        self,
        encounter: str,
        creatures: Sequence[Creature],
        *,
        options: EncounterOptions | None = None,
        name: str = "",
        arena: Arena | None = None,
        zones: Sequence[str] = (),
    ) -> Outcome:
        """Start a new encounter: the ``encounter_created`` event and its state.

        ``arena`` defaults to one 30-ft zone called ``field``; ``zones`` is a
        shorthand for a row of 30-ft zones with those ids, each beside the next. Raises
        :class:`Refusal` (``duplicate_id``) when two creatures share an id, and
        (``invalid_params``) when ``options.settings`` has a problem
        (:meth:`settings_problems`). The encounter's options keep the effective value of
        every declared setting: the plugin's default unless ``options.settings`` gives
        one (the server puts its operator's values there first).
        """
        if arena is None:
            arena = (
                Arena(
                    id="zones",
                    name="Zones",
                    zones=tuple(Zone(id=z, name=z, size=30) for z in zones),
                    links=tuple(Link(a, b, "beside") for a, b in pairwise(zones)),
                )
                if zones
                else single_zone_arena()
            )
        seen: set[str] = set()
        for c in creatures:
            if c.id in seen:
                raise Refusal("duplicate_id", f"Two creatures have the id {c.id!r}.")
            seen.add(c.id)
        for c in creatures:
            if c.group and c.group in seen:
                raise Refusal(
                    "duplicate_id",
                    f"The group {c.group!r} has the same id as a creature; rename one of them.",
                )
        options = options or EncounterOptions()
        problems = self.settings_problems(options.settings)
        for i, c in enumerate(creatures):
            problems += self.catalog.creature_feature_problems(c, f"creatures[{i}]")
        if problems:
            raise Refusal("invalid_params", "; ".join(problems) + ".")
        options = attrs.evolve(
            options, settings=effective_settings(self.settings, options.settings)
        )
        creatures = [self.canonical(c) for c in creatures]
        arena = self._canonical_arena(arena)
        event = EncounterCreated(
            encounter=encounter,
            options=options,
            creatures=tuple(creatures),
            name=name,
            arena=arena,
        )
        state = EncounterState()
        apply_event(state, event)
        return Outcome((event,), state)

    def _canonical_arena(self, arena: Arena) -> Arena:
        """:meth:`canonical` of ``arena``, kept for the last arena seen: an arena is
        frozen all the way down (its records and their tuples), so the same object has
        the same canonical form for as long as the engine (and its catalog) lives."""
        last = self._last_arena
        if last is not None and last[0] is arena:
            return last[1]
        done = self.canonical(arena)
        if type(arena) is Arena:
            self._last_arena = (arena, done)
        return done

    def canonical(self, value: _T) -> _T:
        """``value`` (a creature, an arena, an asset ...) with every short name of a
        declared condition (its ``conditions``) and asset tag (its ``tags``) turned into
        the full id, through nested records: an arena file or a roster may say
        ``burning`` for ``hazards.burning``. Raises :class:`Refusal` (``ambiguous_id``)."""
        names = _init_fields(type(value))
        if names is None:
            return value
        changes: dict[str, Any] = {}
        for name in names:
            old = getattr(value, name)
            new: Any = old
            if name in ("conditions", "tags") and isinstance(old, list | tuple):
                kind = "condition" if name == "conditions" else "asset tag"
                resolved = [self.resolve(kind, x) if isinstance(x, str) else x for x in old]
                new = sorted(resolved) if isinstance(old, list) else tuple(resolved)
            elif _init_fields(type(old)) is not None:
                new = self.canonical(old)
            elif isinstance(old, tuple) and old and _init_fields(type(old[0])) is not None:
                new = tuple(self.canonical(x) for x in old)
            if new is not old and new != old:
                changes[name.lstrip("_")] = new
        return attrs.evolve(value, **changes) if changes else value  # type: ignore[misc]

    # -- handling ---------------------------------------------------------------

    def context(self, state: EncounterState, entropy: Entropy | None = None) -> RuleContext:
        """A rule context over ``state`` itself (for read-only questions).

        Plugin contributions skipped there are collected in its ``plugin_errors``.
        """
        return RuleContext(state, entropy or _SYSTEM_ENTROPY, self.hook, read_only=True)

    def check(
        self,
        state: EncounterState,
        command: Command,
        plugin_errors: list[PluginErrorRecorded] | None = None,
    ) -> CommandSpec:
        """Every check that does not need the handler: raises :class:`Refusal` or returns the spec.

        Raises :class:`PluginFailure` when plugin code run by the checks fails; the
        skipped plugin contributions are added to ``plugin_errors`` when given.
        """
        name = command.type
        spec = self.commands.get(name) if type(name) is str else None  # a full id: itself
        if spec is None:
            spec = self.commands.get(
                self.resolve("command", name) if isinstance(name, str) else name
            )
        if spec is None:
            raise Refusal("unknown_command", f"There is no command called {command.type!r}.")
        if type(command.params) is not dict and not isinstance(command.params, Mapping):
            raise Refusal("invalid_params", "A command's parameters must be an object.")
        _check_params(spec, command.params)
        self._check_rules(state, spec, command, plugin_errors)
        return spec

    def _check_rules(
        self,
        state: EncounterState,
        spec: CommandSpec,
        command: Command,
        plugin_errors: list[PluginErrorRecorded] | None = None,
    ) -> None:
        actor = command.actor
        if actor.role == "spectator":
            raise Refusal("not_your_creature", "Spectators can watch but not act.")
        if state.phase == "ended" and "ended" not in spec.phases:
            raise Refusal("encounter_over", "The encounter has ended.")
        if spec.phases and state.phase not in spec.phases:
            raise Refusal(
                "wrong_phase",
                f"'{spec.id}' can be used during {' or '.join(spec.phases)}; "
                f"the encounter is at the {state.phase} step.",
            )
        if state.disabled_plugins and (owner := self.command_owners.get(spec.id, "?")) in (
            state.disabled_plugins
        ):
            raise PluginFailure(
                owner,
                "zonekeep_commands",
                RuntimeError("switched off in this encounter: it kept taking too long"),
                f"'{spec.id}'",
            )
        if spec.who == "gm" and not actor.is_gm:
            raise Refusal("gm_only", f"Only the GM can use '{spec.id}'.")
        if spec.who == "creature":
            # A reaction may answer the move's trigger while the move waits (the mover's
            # own included: docs/rules.md, "Rulings"); anything else waits.
            if state.maneuver is not None and spec.costs != ("reaction",):
                mover = state.creatures[state.maneuver.creature].name
                raise Refusal(
                    "decision_pending",
                    f"Waiting for reactions to {mover}'s move before anyone acts.",
                )
            waiting = interrupting(state.pending)
            if waiting is not None and spec.costs != ("reaction",):
                who = state.creatures.get(waiting.creature or "")
                raise Refusal(
                    "decision_pending",
                    f"Waiting for {who.name if who else 'a creature'}'s reaction before "
                    "anyone acts.",
                )
            self._check_creature(state, spec, command, plugin_errors)

    def _check_creature(
        self,
        state: EncounterState,
        spec: CommandSpec,
        command: Command,
        plugin_errors: list[PluginErrorRecorded] | None,
    ) -> None:
        ctx = RuleContext(state, _SYSTEM_ENTROPY, self.hook, read_only=True)  # self.context()
        creature = ctx.creature(command.params.get("creature"))
        if not command.actor.controls(creature):
            raise Refusal(
                "not_your_creature",
                f"You do not control {creature.name}, so you cannot act for it.",
            )
        if spec.on_turn is True and state.active != creature.id:
            who = state.creatures[state.active].name if state.active else "nobody"
            raise Refusal(
                "not_your_turn", f"It is not {creature.name}'s turn (it is {who}'s turn)."
            )
        if spec.on_turn is False and state.active == creature.id:
            raise Refusal(
                "not_on_your_turn", f"'{spec.id}' is a reaction; it is taken on others' turns."
            )
        if spec.needs_capable and creature.incapacitated:
            raise Refusal("incapacitated", f"{creature.name} is incapacitated and cannot act.")
        # The documented order (docs/plugins.md, "The order of a command's checks"):
        # ``requires`` before the cost, the more specific answer ("nothing readied").
        if spec.requires is not None:
            unmet = self._requires(spec, state, creature)
            if unmet is not None:
                raise Refusal(*unmet)
        self.pay(state, creature, spec)
        refusal = self.hook.zonekeep_action_refusal(ctx=ctx, creature=creature, spec=spec)
        if plugin_errors is not None:
            plugin_errors.extend(ctx.plugin_errors)
        if refusal is not None:
            raise refusal

    def _requires(
        self, spec: CommandSpec, state: EncounterState, creature: Creature
    ) -> tuple[str, str] | None:
        """``spec.requires`` (plugin code): a failure refuses the command (:class:`PluginFailure`)."""
        assert spec.requires is not None
        return self._plugin_code(
            spec, "the 'requires' check", _checked_requires, spec.requires, state, creature
        )

    def _plugin_code(self, spec: CommandSpec, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        """Call plugin code of command ``spec`` (``what`` names it in the error): an
        exception from it (``SystemExit`` included, see
        :func:`~zonekeep.sdk._isolation.is_plugin_failure`) becomes a
        :class:`PluginFailure` of the plugin that owns the command; refusals and
        cancellation pass through. The call is timed for the host when it set a budget
        (:class:`~zonekeep.sdk._isolation.Budget`)."""
        owner = self.command_owners.get(spec.id, "?")
        budget = self.hook.budget.seconds
        start = 0.0 if budget is None else perf_counter()
        try:
            return fn(*args)
        except PASS_THROUGH:
            raise
        except BaseException as exc:
            if not is_plugin_failure(exc):
                raise
            raise PluginFailure(
                owner,
                "zonekeep_commands",
                exc,
                f"{what} of '{spec.id}'",
            ) from exc
        finally:
            if budget is not None:
                took = perf_counter() - start
                if took > budget:
                    self.hook.budget.note(owner, "zonekeep_commands", took)

    def pay(self, state: EncounterState, creature: Creature, spec: CommandSpec) -> str:
        """The cost ``creature`` would pay for ``spec`` now, or a refusal naming the lack."""
        res = state.resources
        for cost in spec.costs:
            if cost in ("free", "movement"):
                return cost
            if cost == "reaction" and state.has_reaction(creature.id):
                return cost
            mine = state.active == creature.id
            if cost == "action" and mine and res.actions > 0:
                return cost
            if cost == "attack" and mine and res.attacks > 0:
                return cost
            if cost == "bonus" and mine and res.bonus_actions > 0:
                return cost
            if cost == "interaction" and mine and res.interactions > 0:
                return cost
        code, text = _COST_CODES[spec.costs[-1]]
        raise Refusal(code, f"{creature.name} {text}.")

    def handle(
        self, state: EncounterState, command: Command, entropy: Entropy | None = None
    ) -> Outcome:
        """Decide ``command`` against ``state`` with ``entropy``'s dice.

        Returns the events and the new state, or raises :class:`Refusal` (or
        :class:`PluginFailure`). ``state`` itself is never changed, and the outcome
        depends on the state, the command and the dice only: plugin calls over the
        host's time budget are the host's to report (:class:`Budget`), with the
        system actor's :data:`REPORT_OVERRUNS` command.
        """
        if command.type == REPORT_OVERRUNS and command.actor.role == "system":
            return self._report_overruns(state, command, entropy)
        skipped: list[PluginErrorRecorded] = []
        spec = self.check(state, command, skipped)
        command = _without_nulls(command)
        if command.type != spec.id:  # a short name: the handler sees the full id
            command = attrs.evolve(command, type=spec.id)
        ctx = RuleContext(working_copy(state), entropy or RandomEntropy(), self.hook, command.actor)
        if skipped:
            for error in skipped:
                ctx.plugin_failed(error.plugin, error.hook, error.error)
        if spec.who == "creature":
            creature = ctx.state.creatures[command.params["creature"]]
            cost = self.pay(ctx.state, creature, spec)
            ctx.paid = cost
            if cost not in ("free", "movement"):
                ctx.emit(ActionTaken(creature.id, spec.id, cost))
        self._plugin_code(spec, "the handler", spec.handler, ctx, command)
        self._check_end(ctx)
        return Outcome(tuple(ctx.events), ctx.state)

    def _report_overruns(
        self, state: EncounterState, command: Command, entropy: Entropy | None
    ) -> Outcome:
        """The host's decision on plugin calls over its time budget
        (:meth:`Budget.report`): a ``plugin_overran`` event for each call, in order, then
        ``plugin_disabled`` for each plugin the host switches off that is not off yet."""
        overruns, disable = _overrun_params(command.params)
        ctx = RuleContext(working_copy(state), entropy or RandomEntropy(), self.hook, SYSTEM_ACTOR)
        budgets: dict[str, int] = {}
        for plugin, hook, ms, budget_ms in overruns:
            ctx.emit(PluginOverran(plugin, hook, ms, budget_ms))
            budgets[plugin] = budget_ms
        for plugin in disable:
            if plugin in ctx.state.disabled_plugins:
                continue
            log.warning("plugin %r is disabled for encounter %r", plugin, state.id)
            times = ctx.state.plugin_overruns.get(plugin, 0)
            ctx.emit(
                PluginDisabled(
                    plugin,
                    f"Plugin {plugin!r} took longer than {budgets.get(plugin, 0)} ms "
                    f"{times} times; it is switched off for the rest of this encounter.",
                )
            )
        return Outcome(tuple(ctx.events), ctx.state)

    def _check_end(self, ctx: RuleContext) -> None:
        s = ctx.state
        if s.phase != "turns" or s.keep_going or not s.options.auto_end:
            return
        reason = self.hook.zonekeep_encounter_over(ctx=ctx)
        if reason is None or ctx.end_blockers():
            return
        ctx.emit(EncounterEnded(reason, "rules"))

    def available_actions(self, state: EncounterState, creature_id: str, actor: Actor) -> list[str]:
        """The creature commands ``actor`` could send for ``creature_id`` right now: the
        available ones of :meth:`action_details`, parameters checked too (a command that
        takes nothing but ``creature`` is decided whole; one whose every value is refused
        for the same reason is not offered). :meth:`refusal_for` checks one command with
        its parameters."""
        return [d.id for d in self.action_details(state, creature_id, actor) if d.available]

    def command_refusal(
        self, state: EncounterState, spec: CommandSpec, creature_id: str, actor: Actor
    ) -> Refusal | None:
        """The refusal any well-formed ``spec`` command for ``creature_id`` from ``actor``
        gets now whatever its other parameters, or ``None``. A plugin whose check fails
        makes it a ``plugin_error`` refusal (and a warning in the log)."""
        try:
            self._check_rules(state, spec, Command(spec.id, {"creature": creature_id}, actor))
        except Refusal as refusal:
            return refusal
        except PluginFailure as failure:  # its check failed: not offered
            log.warning("%s", failure)
            return plugin_refusal(failure.plugin, spec.id)
        return None

    def refusal_for(self, state: EncounterState, command: Command) -> Refusal | None:
        """What sending ``command`` now would get: its :class:`Refusal`, or ``None`` when
        the rules accept it. The command is decided against a copy of ``state`` with
        dice that all come up 1, and its events are thrown away; a plugin failure
        counts as a ``plugin_error`` refusal."""
        return self.trial(state, command)[1]

    def trial(
        self, state: EncounterState, command: Command
    ) -> tuple[Outcome | None, Refusal | None]:
        """The outcome ``command`` would have now, or the refusal it would get (see
        :meth:`refusal_for`): nothing is stored, ``state`` is not changed."""
        try:
            return self.handle(state, command, OnesEntropy()), None
        except Refusal as refusal:
            return None, refusal
        except PluginFailure as failure:
            log.warning("%s", failure)
            return None, plugin_refusal(failure.plugin, command.type)

    def ending(self, state: EncounterState) -> tuple[str | None, list[str]]:
        """Why the rules consider the fight over (``None`` while it goes on), and what
        keeps the encounter open (``zonekeep_end_blockers``: a dying creature, a
        time-sensitive hazard), as sentences."""
        ctx = self.context(state)
        return self.hook.zonekeep_encounter_over(ctx=ctx), ctx.end_blockers()

    def action_details(
        self, state: EncounterState, creature_id: str, actor: Actor
    ) -> list[ActionDetail]:
        """Every creature command for ``creature_id`` as ``actor`` may use it now: whether
        it is available, the refusal (code and sentence) when it is not, and where the
        rules can tell, the legal values of its parameters: the targets of each attack,
        the creatures a targeted command accepts, the zones the creature can enter with
        their cost, the assets it can take position at (see :mod:`._details`).

        Nothing is filtered for a viewer: the caller drops what its viewer may not see."""
        return _action_details(self, state, creature_id, actor)


def _overrun_params(params: Mapping[str, Any]) -> tuple[list[tuple[str, str, int, int]], list[str]]:
    """The ``overruns`` and ``disable`` of a :data:`REPORT_OVERRUNS` command, checked
    (the host builds it, :meth:`Budget.report`; a wrong one is refused, nothing changes)."""
    overruns = params.get("overruns")
    disable = params.get("disable", [])
    found: list[tuple[str, str, int, int]] = []
    ok = isinstance(overruns, list) and isinstance(disable, list)
    for item in overruns if isinstance(overruns, list) else ():
        values = (
            tuple(item.get(k) for k in ("plugin", "hook", "ms", "budget_ms"))
            if isinstance(item, dict)
            else ()
        )
        if (
            len(values) != 4
            or not all(isinstance(v, str) for v in values[:2])
            or not all(type(v) is int for v in values[2:])
        ):
            ok = False
            break
        found.append(values)  # type: ignore[arg-type]
    if not ok or not all(isinstance(p, str) for p in disable):
        raise Refusal(
            "invalid_params",
            f"'{REPORT_OVERRUNS}' takes overruns (a list of plugin, hook, ms, budget_ms) "
            "and disable (a list of plugin names).",
        )
    return found, list(disable)


#: The names of the fields ``__init__`` takes, per attrs class (``None``: not an attrs
#: class), for :meth:`Engine.canonical`.
_INIT_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _init_fields(cls: type) -> tuple[str, ...] | None:
    try:
        return _INIT_FIELDS[cls]
    except KeyError:
        names = tuple(f.name for f in attrs.fields(cls) if f.init) if attrs.has(cls) else None
        _INIT_FIELDS[cls] = names
        return names


def _namespace_of(plugin: LoadedPlugin) -> str | None:
    """A plugin's namespace: its name, for a plugin that declares a ``ZONEKEEP_PLUGIN``
    and is not built in; ``None`` (ids stay as written) for the built-ins and for plugin
    objects without a declaration (a test's throwaway plugin), whose names are not
    stable enough to be written in a log."""
    if plugin.source == BUILT_IN:
        return None
    return plugin.name if isinstance(declared_info(plugin.plugin), PluginInfo) else None


def _declared_by(engine: Engine, hook: str) -> dict[str, list[str]]:
    """The ids each plugin declares through ``hook`` (conditions, asset tags)."""
    found: dict[str, list[str]] = {}
    for impl in getattr(engine.pm.hook, hook).get_hookimpls():
        try:
            specs = impl.function() or ()
        except BaseException as exc:  # the engine already refused failing declarations at start
            if not is_plugin_failure(exc):
                raise
            specs = ()
        ns = engine.catalog.namespace(impl.plugin_name)
        ids = [str(getattr(spec, "id", "?")) for spec in specs]
        found[impl.plugin_name] = [
            i if ns is None or i.startswith(ns + ".") else f"{ns}.{i}" for i in ids
        ]
    return found


def describe_plugins(engine: Engine) -> str:
    """One line per plugin ``engine`` runs: name, version, source, and what it adds:
    its commands, then the conditions and asset tags it gives meaning to, then its
    settings."""
    conditions = _declared_by(engine, "zonekeep_conditions")
    tags = _declared_by(engine, "zonekeep_asset_tags")

    def adds(p: LoadedPlugin) -> str:
        parts = list(p.commands)
        parts += [f"condition {c}" for c in conditions.get(p.name, [])]
        parts += [f"tag {t}" for t in tags.get(p.name, [])]
        parts += [f"event {e}" for e, x in engine.catalog.events.items() if x.plugin == p.name]
        parts += [f"setting {s}" for s in engine.settings.get(p.name, {})]
        return ", ".join(parts) if parts else "(nothing)"

    rows = [(p.name, p.version or "-", p.source, adds(p)) for p in engine.plugins]
    if not rows:
        return "no plugins"
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        f"{name:<{widths[0]}}  {version:<{widths[1]}}  {source:<{widths[2]}}  {commands}"
        for name, version, source, commands in rows
    )
