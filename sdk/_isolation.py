"""Plugin isolation: every hook call goes through :class:`SafeHooks`.

A hook implementation that raises, or answers with the wrong shape, never crashes
the server or the encounter. What happens instead depends on the hook (the policy,
documented in docs/plugins.md, "When a plugin fails"):

- **contribution** hooks (a question with an answer: roll modifiers, surcharges,
  blockers, provocations, armor-class bonuses, refusals, "is it over?", the condition
  at 0 hit points, skipped turns, area targets and zones): the failing
  implementation's answer is skipped, the others still count, and a ``plugin_error``
  event (GM-only) naming the plugin and the hook goes into the command's events;
- **trigger** hooks (they act: turn, round, zone, position and condition triggers,
  decisions, attacks, maneuver steps, who may make an opportunity attack, whose turn
  is next) and command handlers: the command is refused with
  :class:`PluginFailure` (wire error ``plugin_error``, 6002) and nothing changes;
- ``zonekeep_commands``: the engine does not start
  (:class:`~zonekeep.sdk.engine.PluginLoadError` naming the plugin).

Calls follow pluggy's order exactly: the implementations of
``HookCaller.get_hookimpls()`` (pluggy's public API) in reverse (the last registered
first; ``tryfirst`` ones before, ``trylast`` ones after), a first-result hook stopping
at the first answer other than ``None``. Each hook plans its calls once and keeps the
plan until :class:`HookManager` (the engine's plugin manager) says a plugin came or
went; the call itself is one plain loop, :meth:`SafeHookCaller.__call__`, for every
hook and every kind of call (no generated code: issue 28 measured the loop against the
former generated ``__call__`` with ``bench/engine_bench.py``, see docs/performance.md). Hook wrappers are not supported (the engine refuses
them at start). A :class:`~zonekeep.sdk.Refusal` is the rules' normal way to say no
and passes through unchanged, as does a :class:`PluginFailure` raised further down.
Nothing else does: the harness (:mod:`zonekeep.sdk.testing`) itself turns a failure
caused by its scripted dice running out back into :class:`~zonekeep.sdk.ScriptExhausted`.

"Raises" means any :class:`BaseException` a plugin can raise on purpose, ``SystemExit``
included (:func:`is_plugin_failure`): only ``KeyboardInterrupt`` (the operator's
Ctrl-C, which the event loop may deliver while plugin code runs), ``GeneratorExit``
and the event loop's own cancellation pass through untouched.

Every call is timed (:class:`Budget`): one that takes longer than the budget is
reported to the GM (``plugin_overran``), and a plugin that overruns it ``limit``
times in one encounter is switched off there (``plugin_disabled``): its
implementations are skipped from then on (see docs/plugins.md, "Plugins must not
block").
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Iterable
from time import perf_counter
from types import ModuleType
from typing import Any

import attrs
import pluggy

from ._commands import CommandSpec
from ._context import ObserverContext, RollModifier, RuleContext
from ._damage import Damage
from ._errors import Refusal
from ._events import PluginDisabled, PluginOverran
from ._loading import PluginLoadError

log = logging.getLogger("zonekeep.plugins")


class PluginFailure(Exception):
    """A plugin's hook or command handler failed, so the command it ran in is refused.

    ``plugin`` is the plugin's registered name, ``hook`` the hook (``zonekeep_commands``
    for a command handler), ``error`` the exception it raised (or a ``TypeError``
    describing a wrong answer) and ``where`` a few words on what it was doing.
    """

    def __init__(self, plugin: str, hook: str, error: BaseException, where: str = "") -> None:
        self.plugin = plugin
        self.hook = hook
        self.error = error
        self.where = where
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f" ({self.where})" if self.where else ""
        return f"plugin {self.plugin!r} failed in {self.hook}{where}: {describe(self.error)}"


#: Exceptions that are not a plugin's failure: the rules refusing, and a failure further
#: down (already blamed on its plugin).
PASS_THROUGH: tuple[type[Exception], ...] = (Refusal, PluginFailure)


def is_plugin_failure(error: BaseException) -> bool:
    """Whether ``error``, raised by plugin code, is that plugin's failure (contained).

    Every :class:`Exception` is, and so is ``SystemExit`` (``sys.exit()`` in a handler
    any player can reach must not stop the server) and any other ``BaseException`` a
    plugin defines. Not contained, so they go on up: ``KeyboardInterrupt`` (the
    operator's Ctrl-C: the event loop may raise it inside whatever code is running,
    plugin code included), ``GeneratorExit`` (a generator being closed) and the event
    loop's own cancellation (trio's ``Cancelled``, recognised by its module: the sdk
    does not import trio). A group of exceptions is contained only if all its members are.
    """
    if isinstance(error, Exception):
        return not isinstance(error, BaseExceptionGroup) or all(
            is_plugin_failure(e) for e in error.exceptions
        )
    if isinstance(error, KeyboardInterrupt | GeneratorExit):
        return False
    if type(error).__module__.partition(".")[0] == "trio":
        return False
    if isinstance(error, BaseExceptionGroup):
        return all(is_plugin_failure(e) for e in error.exceptions)
    return True


@attrs.define
class Budget:
    """The time a single call of plugin code may take, and how often it may overrun.

    ``seconds`` is the budget for one call (``None``: calls are not timed against
    anything) and ``limit`` how many overruns a plugin may have in one encounter
    before it is switched off there (0: never). ``exempt`` names plugins that are only
    logged, never reported nor switched off (the built-ins: the rules themselves).
    The engine starts with no budget; the server sets its configured one.
    """

    seconds: float | None = None
    limit: int = 3
    exempt: frozenset[str] = frozenset()

    def overran(self, ctx: object, plugin: str, hook: str, took: float) -> None:
        """Note that ``plugin``'s call of ``hook`` took ``took`` seconds, over budget.

        Logged always, and kept in the context's ``overruns``; on a command's context
        also reported (:meth:`record`). A read-only context cannot record events: the
        engine reports its overruns in the command that the check was for, or hands
        them to its caller (a refused command, an ``actions`` question), which reports
        them with :meth:`Engine.report_overruns`.
        """
        assert self.seconds is not None
        if isinstance(ctx, ObserverContext):  # an observer's overrun counts on its command
            ctx = ctx._parent
        ms, budget_ms = round(took * 1000), round(self.seconds * 1000)
        log.warning(
            "plugin %r took %d ms in %s (the budget is %d ms): plugins must not block",
            plugin,
            ms,
            hook,
            budget_ms,
        )
        if isinstance(ctx, RuleContext):
            # Kept on the context too: a command refused afterwards loses its events, and
            # the engine hands the overruns to its caller to report (Engine.handle).
            ctx.overruns.append((plugin, hook, took))
            if ctx.read_only:
                return
        self.record(ctx, plugin, hook, took)

    def record(self, ctx: object, plugin: str, hook: str, took: float) -> None:
        """Report an overrun already logged on a command's context ``ctx``: the
        ``plugin_overran`` event and, at the limit, ``plugin_disabled``."""
        if not isinstance(ctx, RuleContext) or ctx.read_only or plugin in self.exempt:
            return
        assert self.seconds is not None
        ms, budget_ms = round(took * 1000), round(self.seconds * 1000)
        ctx.emit(PluginOverran(plugin, hook, ms, budget_ms))
        state = ctx.state
        if (
            self.limit > 0
            and plugin not in state.disabled_plugins
            and state.plugin_overruns.get(plugin, 0) >= self.limit
        ):
            log.warning("plugin %r is disabled for encounter %r", plugin, state.id)
            ctx.emit(
                PluginDisabled(
                    plugin,
                    f"Plugin {plugin!r} took longer than {budget_ms} ms "
                    f"{state.plugin_overruns[plugin]} times; it is switched off for the "
                    "rest of this encounter.",
                )
            )


class WrongShape(TypeError):
    """A hook implementation answered with a value its hookspec does not allow."""


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _many(kind: type, words: str) -> Callable[[object], tuple[Any, ...] | None]:
    def check(value: object) -> tuple[Any, ...] | None:
        if value is None:
            return None
        if (  # a list or a tuple (the usual case) is decided without the ABC
            type(value) is not list
            and type(value) is not tuple
            and (isinstance(value, str | bytes | dict) or not isinstance(value, Iterable))
        ):
            raise WrongShape(f"returned {_short(value)}; expected a list of {words} or None")
        items = tuple(value)
        for item in items:
            if type(item) is kind:  # the usual case, decided without isinstance
                continue
            if not isinstance(item, kind) or (isinstance(item, bool) and kind is not bool):
                raise WrongShape(
                    f"returned a list holding {_short(item)}; expected a list of {words} or None"
                )
        return items

    return check


def _one(kinds: tuple[type, ...], words: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if value is None:
            return None
        if type(value) in kinds:  # the usual case, decided without isinstance
            return value
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise WrongShape(f"returned {_short(value)}; expected {words} or None")
        return value

    return check


#: Contribution hooks: what a valid answer is. A failing implementation is skipped.
CONTRIBUTIONS: dict[str, Callable[[object], object]] = {
    "zonekeep_action_refusal": _one((Refusal,), "a Refusal"),
    "zonekeep_roll_modifiers": _many(RollModifier, "RollModifier"),
    "zonekeep_movement_surcharges": _many(str, "strings"),
    "zonekeep_end_blockers": _many(str, "strings"),
    "zonekeep_encounter_over": _one((str,), "a string"),
    "zonekeep_provocations": _many(str, "creature ids"),
    "zonekeep_armor_class_bonus": _one((int,), "a whole number"),
    "zonekeep_zero_hit_points": _one((str,), "a condition name"),
    "zonekeep_skip_turn": _one((str,), "a string"),
    "zonekeep_area_max_targets": _one((int,), "a whole number"),
    "zonekeep_area_target_weight": _one((int,), "a whole number"),
    "zonekeep_area_zones": _many(str, "zone ids"),
    "zonekeep_zone_refusal": _one((Refusal,), "a Refusal"),
    "zonekeep_modify_damage": _one((Damage,), "a Damage"),
    "zonekeep_save_fails": _one((str,), "a string"),
    "zonekeep_event_applied": _one((type(None),), "nothing"),
}


def _turn_position(value: object) -> tuple[int, int] | None:
    if value is None:
        return None
    if type(value) is tuple and len(value) == 2:  # the usual case: two plain whole numbers
        slot, member = value
        if type(slot) is int and type(member) is int and slot >= 0 and member >= 0:
            return (slot, member)
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value)
    ):
        return (value[0], value[1])
    raise WrongShape(
        f"returned {_short(value)}; expected (slot, member), two whole numbers, or None"
    )


#: Trigger hooks whose answer matters: what a valid answer is. A failure refuses the command.
TRIGGER_ANSWERS: dict[str, Callable[[object], object]] = {
    "zonekeep_maneuver_step": _one((bool,), "true"),
    "zonekeep_opportunity_attackers": _many(str, "creature ids"),
    "zonekeep_next_turn": _turn_position,
}

#: The declaration hooks, run once at start: a failure stops the engine from being built.
STARTUP_HOOKS = frozenset(
    {
        "zonekeep_commands",
        "zonekeep_conditions",
        "zonekeep_asset_tags",
        "zonekeep_event_types",
        "zonekeep_plugin_state",
        "zonekeep_settings",
        "zonekeep_compendium",
        "zonekeep_arenas",
    }
)


def policy(hook: str) -> str:
    """``"skip"``, ``"refuse"`` or ``"startup"``: what a failure of ``hook`` leads to.

    Hooks not named in :data:`CONTRIBUTIONS` or :data:`STARTUP_HOOKS` refuse the
    command (the safe default for a hook that acts)."""
    if hook in CONTRIBUTIONS:
        return "skip"
    if hook in STARTUP_HOOKS:
        return "startup"
    return "refuse"


def _record(kwargs: dict[str, Any], plugin: str, hook: str, error: BaseException) -> None:
    log.warning("plugin %r failed in %s (its answer is skipped): %r", plugin, hook, error)
    ctx = kwargs.get("ctx")
    if isinstance(ctx, RuleContext | ObserverContext):
        ctx.plugin_failed(plugin, hook, describe(error))


def describe(error: BaseException) -> str:
    """A failure in a few words: a wrong answer's explanation, or the exception's repr."""
    text = str(error) if isinstance(error, WrongShape) else repr(error)
    return text if len(text) <= 300 else text[:297] + "..."


class HookManager(pluggy.PluginManager):
    """pluggy's plugin manager, telling the hooks' callers when their implementations
    change: every :meth:`register`, :meth:`unregister` (and so ``set_blocked``) and
    :meth:`add_hookspecs` drops the call plans they keep (:meth:`SafeHookCaller.forget`),
    so a call never runs a stale list and never rebuilds a current one."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._listeners: list[Callable[[], None]] = []

    def listen(self, forget: Callable[[], None]) -> None:
        """Call ``forget`` whenever the implementations of any hook may have changed."""
        self._listeners.append(forget)

    def _changed(self) -> None:
        for forget in self._listeners:
            forget()

    def register(self, plugin: object, name: str | None = None) -> str | None:
        try:
            return super().register(plugin, name)
        finally:
            self._changed()

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any | None:
        try:
            return super().unregister(plugin, name)
        finally:
            self._changed()

    def add_hookspecs(self, module_or_class: ModuleType | type) -> None:
        try:
            super().add_hookspecs(module_or_class)
        finally:
            self._changed()


def _argument_getter(argnames: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A function giving the positional arguments named ``argnames`` out of the call's
    keyword arguments, as a tuple (``KeyError`` for a missing one)."""
    if not argnames:
        return lambda kwargs: ()
    if len(argnames) == 1:
        (name,) = argnames
        return lambda kwargs: (kwargs[name],)
    getter: Callable[[dict[str, Any]], tuple[Any, ...]] = operator.itemgetter(*argnames)
    return getter


#: One implementation, as :meth:`SafeHookCaller.__call__` calls it: the function, the
#: names of its first and second arguments when it takes one or two and no keyword
#: arguments (the usual case, called without building a tuple; ``None`` otherwise), a
#: getter of its positional arguments, its keyword argument names, the plugin's name.
_Planned = tuple[
    Callable[..., Any],
    str | None,
    str | None,
    Callable[[dict[str, Any]], tuple[Any, ...]],
    tuple[str, ...],
    str,
]

#: The contexts whose state names the plugins switched off (a tuple: the fastest check).
_CONTEXTS = (RuleContext, ObserverContext)


class SafeHookCaller:
    """One hook, called implementation by implementation under the hook's policy.

    The implementations are pluggy's own (``HookCaller.get_hookimpls()``), planned once
    and kept until the :class:`HookManager` says they changed."""

    def __init__(self, name: str, caller: pluggy.HookCaller, budget: Budget | None = None) -> None:
        self.name = name
        self._caller = caller
        self._budget = budget or Budget()
        spec = caller.spec
        self._firstresult = bool(spec.opts.get("firstresult")) if spec is not None else False
        self._policy = policy(name)
        self._skip = self._policy == "skip"
        self._check = CONTRIBUTIONS.get(name) or TRIGGER_ANSWERS.get(name)
        #: What to call, in call order; ``None`` until planned (again).
        self._calls: tuple[_Planned, ...] | None = None

    def __getattr__(self, attr: str) -> Any:
        # get_hookimpls(), spec, ... as on pluggy's HookCaller.
        return getattr(self._caller, attr)

    def forget(self) -> None:
        """The implementations may have changed: plan again at the next call."""
        self._calls = None
        spec = self._caller.spec  # add_hookspecs may have given the hook its spec
        self._firstresult = bool(spec.opts.get("firstresult")) if spec is not None else False

    def _plan(self) -> tuple[_Planned, ...]:
        """The implementations in pluggy's call order: ``get_hookimpls()`` reversed (the
        last registered first; ``tryfirst`` ones before, ``trylast`` ones after)."""
        planned: list[_Planned] = []
        for impl in reversed(self._caller.get_hookimpls()):
            names = tuple(impl.argnames)
            plain = len(names) in (1, 2) and not impl.kwargnames
            planned.append(
                (
                    impl.function,
                    names[0] if plain else None,
                    names[1] if plain and len(names) == 2 else None,
                    _argument_getter(names),
                    tuple(impl.kwargnames),
                    impl.plugin_name,
                )
            )
        self._calls = tuple(planned)
        return self._calls

    def implemented(self) -> bool:
        """Whether any plugin implements this hook now."""
        calls = self._calls
        return bool(self._plan() if calls is None else calls)

    def __call__(self, _pipe: str | None = None, **kwargs: Any) -> Any:
        """The one call logic: each implementation in order, unless its plugin is switched
        off in the context's encounter; timed against the budget (when one is set); its
        failure (or wrong answer) skipped and recorded, or turned into
        :class:`PluginFailure`, by the hook's policy; its answer returned (a first-result
        hook's first answer other than ``None``), collected (every other hook's, a list),
        or handed on (:meth:`pipe`: ``_pipe`` names the keyword argument each answer
        replaces; no hook argument starts with ``_``)."""
        calls = self._calls
        if calls is None:
            calls = self._plan()
        first = self._firstresult
        if not calls:  # no plugin implements it (an observer or a lifecycle hook, often)
            return kwargs[_pipe] if _pipe is not None else None if first else []
        ctx = kwargs.get("ctx")
        disabled = ctx.state.disabled_plugins if isinstance(ctx, _CONTEXTS) else ()
        budget = self._budget.seconds
        check = self._check
        results: list[object] = []
        start = 0.0
        for function, one, two, args, kwargnames, plugin in calls:
            if disabled and plugin in disabled:
                continue
            if budget is not None:
                start = perf_counter()
            try:
                if one is not None:
                    value = (
                        function(kwargs[one]) if two is None else function(kwargs[one], kwargs[two])
                    )
                elif kwargnames:
                    value = function(
                        *args(kwargs), **{k: kwargs[k] for k in kwargnames if k in kwargs}
                    )
                else:
                    value = function(*args(kwargs))
                if value is not None and check is not None:
                    value = check(value)
                    if _pipe is not None and value is not None:
                        _same_target(value, kwargs[_pipe])
            except PASS_THROUGH:
                if budget is not None:
                    self._timed(start, budget, ctx, plugin)
                raise
            except BaseException as exc:
                if not is_plugin_failure(exc):
                    raise
                if budget is not None:
                    self._timed(start, budget, ctx, plugin)
                if self._skip:
                    _record(kwargs, plugin, self.name, exc)
                    continue
                raise PluginFailure(plugin, self.name, exc) from exc
            if budget is not None and perf_counter() - start > budget:
                self._timed(start, budget, ctx, plugin)
            if value is not None:  # every check lets None through as None
                if _pipe is not None:
                    kwargs[_pipe] = value
                elif first:
                    return value
                else:
                    results.append(value)
        return kwargs[_pipe] if _pipe is not None else None if first else results

    def pipe(self, key: str, **kwargs: Any) -> Any:
        """Call the implementations in order, each with ``kwargs[key]`` as the one before
        answered it (``None`` leaves it unchanged), and return the last answer: a
        pipeline hook (``zonekeep_modify_damage``). A failing implementation, or one
        whose answer is of the wrong shape or concerns another ``target``, is skipped
        and recorded as a contribution hook's is."""
        return self(key, **kwargs)

    def _timed(self, start: float, budget: float, ctx: object, plugin: str) -> None:
        took = perf_counter() - start
        if took > budget:
            self._budget.overran(ctx, plugin, self.name, took)


def _same_target(value: object, before: object) -> None:
    """A pipeline's answer must concern the same ``target`` as what it was handed."""
    if getattr(value, "target", None) != getattr(before, "target", None):
        raise WrongShape(f"returned {_short(value)}; expected the same target's Damage or None")


class SafeHooks:
    """Like ``pluggy.PluginManager.hook``, with every call isolated per implementation."""

    def __init__(self, pm: HookManager, budget: Budget | None = None) -> None:
        self._pm = pm
        self._callers: dict[str, SafeHookCaller] = {}
        #: The time budget every call is held to (shared by all the hooks).
        self.budget = budget or Budget()
        #: The engine's plugin catalog (namespaces, event types, plugin state), which
        #: every rule context made with these hooks folds plugin events with.
        self.catalog: Any = None
        #: The plugins' declared settings, by plugin then id (the engine sets them):
        #: the defaults :meth:`RuleContext.setting` falls back on.
        self.settings: dict[str, dict[str, Any]] = {}

    def __getattr__(self, name: str) -> SafeHookCaller:
        if name.startswith("_"):
            raise AttributeError(name)
        caller = self._callers.get(name)
        if caller is None:
            caller = SafeHookCaller(name, getattr(self._pm.hook, name), self.budget)
            self._pm.listen(caller.forget)
            self._callers[name] = caller
            # Later look-ups find it in the instance dict, without __getattr__.
            self.__dict__[name] = caller
        return caller


def wrappers(pm: pluggy.PluginManager) -> list[str]:
    """Problems: every hook wrapper registered (SafeHooks cannot run them)."""
    found = []
    for caller in pm.hook.__dict__.values():
        if isinstance(caller, pluggy.HookCaller):
            for impl in caller.get_hookimpls():
                if impl.hookwrapper or impl.wrapper:
                    found.append(
                        f"plugin {impl.plugin_name!r} wraps {caller.name}; hook wrappers "
                        "are not supported"
                    )
    return found


def declared_commands(
    pm: pluggy.PluginManager, who: Callable[[str], str]
) -> list[tuple[str, CommandSpec]]:
    """Every plugin's declared commands, as (plugin name, spec), in registration order.

    Raises :class:`PluginLoadError` naming the plugin when ``zonekeep_commands``
    raises or declares something that is not a :class:`CommandSpec`.
    """
    found: list[tuple[str, CommandSpec]] = []
    for impl in pm.hook.zonekeep_commands.get_hookimpls():
        try:
            specs: Any = impl.function()
            items: tuple[Any, ...] = tuple(specs or ())
            bad = [s for s in items if not isinstance(s, CommandSpec)]
            if bad:
                raise WrongShape(f"declared {_short(bad[0])}; expected CommandSpec objects")
        except BaseException as exc:
            if not is_plugin_failure(exc):
                raise
            raise PluginLoadError(
                [f"plugin {who(impl.plugin_name)} failed in zonekeep_commands: {exc!r}"]
            ) from exc
        found.extend((impl.plugin_name, spec) for spec in items)
    return found
