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

When the host sets a time budget (:class:`Budget`), every call is timed for the
host: one that takes longer is logged and noted, and the host hands the engine its
decision as a command (:meth:`Budget.report`): ``plugin_overran`` reported to the GM
and, once a plugin overran ``limit`` times in one encounter, ``plugin_disabled``: its
implementations are skipped there from then on (see docs/plugins.md, "Plugins must
not block"). Nothing timed changes what the engine decides.
"""

from __future__ import annotations

import contextlib
import logging
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from time import perf_counter
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from ._actors import SYSTEM_ACTOR
from ._commands import Command, CommandSpec
from ._context import ObserverContext, RollModifier, RuleContext
from ._damage import Damage
from ._dice import DiceError, parse_dice
from ._errors import Refusal
from ._loading import PluginLoadError
from ._reactions import ReactionOffer, ReactionOutcome

if TYPE_CHECKING:
    from ._state import EncounterState

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


#: A plugin call over the time budget: ``(plugin, hook, seconds)``.
Overrun = tuple[str, str, float]

#: The host's command that hands the engine its decision on plugin calls over the time
#: budget (:meth:`Budget.report`): accepted from the system actor only, never listed.
REPORT_OVERRUNS = "report_plugin_overruns"


@attrs.define
class Budget:
    """The host's time budget for one call of plugin code, and its decisions about it.

    ``seconds`` is the budget for one call (``None``: calls are not timed) and ``limit``
    how many overruns a plugin may have in one encounter before it is switched off there
    (0: never). ``exempt`` names plugins that are only logged, never reported nor
    switched off (the built-ins: the rules themselves). The engine starts with no
    budget; the server sets its configured one (``Engine.set_hook_budget``).

    The engine's hooks time each call for the host and nothing else: a call over the
    budget is logged and noted in the list of the host's :meth:`watch`, and never
    changes what the engine decides. The host then hands the engine its decision
    (``plugin_overran``, and ``plugin_disabled`` at the limit) as a command,
    :meth:`report`, so ``Engine.handle`` depends only on the state, the command and the
    dice, and a log folds alike on any machine.
    """

    seconds: float | None = None
    limit: int = 3
    exempt: frozenset[str] = frozenset()
    _seen: list[Overrun] | None = attrs.field(default=None, init=False, repr=False)

    def note(self, plugin: str, hook: str, took: float) -> None:
        """``plugin``'s call of ``hook`` took ``took`` seconds, over the budget: logged,
        and kept for the host while it watches (:meth:`watch`)."""
        assert self.seconds is not None
        log.warning(
            "plugin %r took %d ms in %s (the budget is %d ms): plugins must not block",
            plugin,
            round(took * 1000),
            hook,
            round(self.seconds * 1000),
        )
        if self._seen is not None:
            self._seen.append((plugin, hook, took))

    @contextlib.contextmanager
    def watch(self) -> Iterator[list[Overrun]]:
        """Collect the plugin calls over the budget made inside the ``with`` block (the
        engine calls the host makes for one encounter), in the list it gives. A watch
        inside another one passes its calls on to the outer list too."""
        outer, self._seen = self._seen, []
        seen = self._seen
        try:
            yield seen
        finally:
            self._seen = outer
            if outer is not None:
                outer.extend(seen)

    def report(self, state: EncounterState, overruns: Sequence[Overrun]) -> Command | None:
        """The host's decision on ``overruns`` (seen while it watched) in the encounter at
        ``state``, as the command that hands it to the engine (``None``: nothing to
        report). Calls of the :attr:`exempt` plugins are left out. A plugin whose
        overruns in the encounter, these included, reach :attr:`limit` is switched off,
        unless it already is."""
        if self.seconds is None:
            return None
        reported = [o for o in overruns if o[0] not in self.exempt]
        if not reported:
            return None
        counts = dict(state.plugin_overruns)
        disable: list[str] = []
        for plugin, _hook, _took in reported:
            counts[plugin] = counts.get(plugin, 0) + 1
            if (
                self.limit > 0
                and counts[plugin] >= self.limit
                and plugin not in state.disabled_plugins
                and plugin not in disable
            ):
                disable.append(plugin)
        budget_ms = round(self.seconds * 1000)
        found = [
            {"plugin": plugin, "hook": hook, "ms": round(took * 1000), "budget_ms": budget_ms}
            for plugin, hook, took in reported
        ]
        return Command(REPORT_OVERRUNS, {"overruns": found, "disable": disable}, SYSTEM_ACTOR)


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


def _dice(value: object) -> str | None:
    if value is None:
        return None
    if type(value) is str:
        try:
            parse_dice(value)
        except DiceError:
            pass
        else:
            return value
    raise WrongShape(f'returned {_short(value)}; expected dice ("1d10+3") or None')


#: Contribution hooks: what a valid answer is. A failing implementation is skipped.
CONTRIBUTIONS: dict[str, Callable[[object], object]] = {
    "zonekeep_action_refusal": _one((Refusal,), "a Refusal"),
    "zonekeep_roll_modifiers": _many(RollModifier, "RollModifier"),
    "zonekeep_movement_surcharges": _many(str, "strings"),
    "zonekeep_end_blockers": _many(str, "strings"),
    "zonekeep_encounter_over": _one((str,), "a string"),
    "zonekeep_provocations": _many(str, "creature ids"),
    "zonekeep_armor_class_bonus": _one((int,), "a whole number"),
    "zonekeep_critical_threshold": _one((int,), "a whole number"),
    "zonekeep_attack_damage": _dice,
    "zonekeep_jump_distance": _one((int,), "a whole number"),
    "zonekeep_attacks_per_action": _one((int,), "a whole number"),
    "zonekeep_zero_hit_points": _one((str,), "a condition name"),
    "zonekeep_skip_turn": _one((str,), "a string"),
    "zonekeep_area_max_targets": _one((int,), "a whole number"),
    "zonekeep_area_target_weight": _one((int,), "a whole number"),
    "zonekeep_area_zones": _many(str, "zone ids"),
    "zonekeep_zone_refusal": _one((Refusal,), "a Refusal"),
    "zonekeep_link_crossing": _one((str,), "a string"),
    "zonekeep_modify_damage": _one((Damage,), "a Damage"),
    "zonekeep_save_fails": _one((str,), "a string"),
    "zonekeep_condition_immunity": _one((str,), "a string"),
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
    "zonekeep_attack_redirect": _one((str,), "a creature id"),
    "zonekeep_hit_reaction": _one((int,), "a whole number"),
    "zonekeep_attack_reactions": _many(ReactionOffer, "ReactionOffer"),
    "zonekeep_reaction_taken": _one((ReactionOutcome,), "a ReactionOutcome"),
}

#: The declaration hooks, run once at start: a failure stops the engine from being built.
STARTUP_HOOKS = frozenset(
    {
        "zonekeep_commands",
        "zonekeep_conditions",
        "zonekeep_asset_tags",
        "zonekeep_event_types",
        "zonekeep_plugin_state",
        "zonekeep_features",
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
#: names of its arguments when it takes one to three and no keyword arguments (the usual
#: case, called without building a tuple; ``""`` past the last one), and the plugin's
#: name. For any other signature the names are ``""``, ``"*"`` and a function of the
#: call's keyword arguments that calls the implementation with its own.
_Planned = tuple[Callable[..., Any], str, str, Any, str]


def _invoker(
    function: Callable[..., Any], argnames: tuple[str, ...], kwargnames: tuple[str, ...]
) -> Callable[[dict[str, Any]], Any]:
    """A function calling ``function`` with its positional arguments ``argnames`` and its
    keyword arguments ``kwargnames`` (those given) out of a call's keyword arguments."""
    args = _argument_getter(argnames)
    if not kwargnames:
        return lambda kwargs: function(*args(kwargs))

    def invoke(kwargs: dict[str, Any]) -> Any:
        return function(*args(kwargs), **{k: kwargs[k] for k in kwargnames if k in kwargs})

    return invoke


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
        #: What to call, in call order (empty: no plugin implements the hook now).
        self.plan: tuple[_Planned, ...] = ()
        self.forget()

    # No __getattr__ passing the rest on to pluggy's HookCaller: a class with one loses
    # CPython's fast attribute reads, and every call reads a few (issue 28's bench).
    def get_hookimpls(self) -> list[pluggy.HookImpl]:
        """The implementations, in pluggy's registration order (pluggy's public API)."""
        return self._caller.get_hookimpls()

    def forget(self) -> None:
        """The implementations may have changed: plan the calls again, in pluggy's call
        order: ``get_hookimpls()`` reversed (the last registered first; ``tryfirst`` ones
        before, ``trylast`` ones after)."""
        spec = self._caller.spec  # add_hookspecs may have given the hook its spec
        self._firstresult = bool(spec.opts.get("firstresult")) if spec is not None else False
        planned: list[_Planned] = []
        for impl in reversed(self._caller.get_hookimpls()):
            names, function = tuple(impl.argnames), impl.function
            if 1 <= len(names) <= 3 and not impl.kwargnames:
                a, b, c = (*names, "", "")[:3]
                planned.append((function, a, b, c, impl.plugin_name))
            else:
                invoke = _invoker(function, names, tuple(impl.kwargnames))
                planned.append((function, "", "*", invoke, impl.plugin_name))
        self.plan = tuple(planned)

    def implemented(self) -> bool:
        """Whether any plugin implements this hook now (as ``bool(self.plan)``)."""
        return bool(self.plan)

    def __call__(self, _pipe: str | None = None, **kwargs: Any) -> Any:
        """The one call logic: each implementation in order, unless its plugin is switched
        off in the context's encounter; timed against the budget (when one is set); its
        failure (or wrong answer) skipped and recorded, or turned into
        :class:`PluginFailure`, by the hook's policy; its answer returned (a first-result
        hook's first answer other than ``None``), collected (every other hook's, a list),
        or handed on (:meth:`pipe`: ``_pipe`` names the keyword argument each answer
        replaces; no hook argument starts with ``_``)."""
        calls = self.plan
        first = self._firstresult
        if not calls:  # no plugin implements it (an observer or a lifecycle hook, often)
            return kwargs[_pipe] if _pipe is not None else None if first else []
        ctx = kwargs.get("ctx")
        disabled = ctx.state.disabled_plugins if isinstance(ctx, _CONTEXTS) else ()
        budget = self._budget.seconds
        # Untimed, the clock is float() (always 0.0) and nothing is over an infinite
        # budget: one path either way, without a test of the budget per call.
        clock, limit = (float, math.inf) if budget is None else (perf_counter, budget)
        check = self._check
        results: list[object] = []
        for function, a, b, c, plugin in calls:
            if disabled and plugin in disabled:
                continue
            start = clock()
            try:
                if not b:  # one argument, the usual case
                    value = function(kwargs[a])
                elif not c:
                    value = function(kwargs[a], kwargs[b])
                elif a:
                    value = function(kwargs[a], kwargs[b], kwargs[c])
                else:  # any other signature
                    value = c(kwargs)
                if value is not None and check is not None:
                    value = check(value)
                    if _pipe is not None and value is not None:
                        _same_target(value, kwargs[_pipe])
            except PASS_THROUGH:
                if (took := clock() - start) > limit:
                    self._budget.note(plugin, self.name, took)
                raise
            except BaseException as exc:
                if not is_plugin_failure(exc):
                    raise
                if (took := clock() - start) > limit:
                    self._budget.note(plugin, self.name, took)
                if self._skip:
                    _record(kwargs, plugin, self.name, exc)
                    continue
                raise PluginFailure(plugin, self.name, exc) from exc
            if (took := clock() - start) > limit:
                self._budget.note(plugin, self.name, took)
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
