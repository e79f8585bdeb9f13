"""Plugin namespaces, plugin-declared event types and plugin state.

Every id a third-party plugin declares (a command, a condition, an asset tag, an
event type, a setting) lives in the plugin's **namespace**, its registered name:
plugin ``hazards`` declaring the condition ``burning`` gives the id
``hazards.burning``. The built-in plugins (``zonekeep.*``) and plugin objects
without a ``ZONEKEEP_PLUGIN`` (a test's throwaway plugin) have no namespace: their
ids stay as written (``prone``, ``attack``), so existing arenas, rosters and logs
keep working. Wherever an id is accepted, its **short name** (``burning``) works
too while exactly one declared id has it; a full id always wins, and an ambiguous
short name is refused naming every id it could be (:class:`AmbiguousId`).

A plugin keeps state of its own in the encounter state
(:attr:`~zonekeep.sdk.EncounterState.plugin_state`, under its namespace), declared
with ``zonekeep_plugin_state`` (:class:`StateSpec`) and changed only by the
reducers of the event types it declares with ``zonekeep_event_types``
(:class:`EventTypeSpec`): replaying the log rebuilds it, so rewinds, exports and
restarts keep it. Each piece of state and each event type says who may see it
(``"gm"``, the default, or ``"everyone"``).

:class:`PluginCatalog` is what an engine builds from all of this; the state's fold
uses it for :class:`~zonekeep.sdk.PluginEvent`.
"""

from __future__ import annotations

import copy
import logging
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from ._events import PluginEvent
from ._features import (
    FEATURE_ID,
    FEATURE_KINDS,
    GM_FEATURE,
    NOT_IMPLEMENTED,
    Action,
    FeatureSpec,
    OnHit,
    Trait,
)
from ._names import qualify, short_name
from ._schema import is_json_like, schema_errors, validate

log = logging.getLogger("zonekeep.plugins")

Visibility = Literal["gm", "owner", "everyone"]
VISIBILITIES: tuple[Visibility, ...] = ("gm", "owner", "everyone")
#: The kinds of plugin-declared ids, as errors name them.
ID_KINDS = (
    "command",
    "condition",
    "asset tag",
    "event type",
    "setting",
    *FEATURE_KINDS,  # creature features: "trait", "action", "on_hit"
)
_SHORT_RE = re.compile(r"[a-z][a-z0-9_]*")

#: A reducer: folds one event's payload (``data``, a copy) into the plugin's own state
#: (``state``, every declared key present), in place. It must be deterministic: it runs
#: again for every replay of the log.
Reducer = Callable[[dict[str, Any], dict[str, Any]], None]


@attrs.frozen
class EventTypeSpec:
    """An event type a plugin declares (``zonekeep_event_types``).

    - ``id``: its name (``"brazier_kicked"``); the engine puts it in the plugin's
      namespace (``"hazards.brazier_kicked"``), the event's wire ``type``.
    - ``schema``: a JSON Schema for the payload (an object; see
      :data:`~zonekeep.sdk.host.SCHEMA_KEYWORDS` for the keywords you may use). An event
      whose payload breaks it is never emitted: the emitting hook fails (a contained
      plugin error), the log stays clean.
    - ``reducer``: ``reducer(state, data)`` folds the payload into the plugin's state
      (a dict holding every key declared with ``zonekeep_plugin_state``), in place;
      ``None`` for an event that only records something.
    - ``description``: what the event means, for a person.
    - ``template``: a log line for a client that has never seen the event, with the
      payload's fields in braces (``"{creature} kicked {brazier} over"``).
    - ``visibility``: ``"gm"`` (default: players and spectators get ``{"type":
      "hidden"}`` in its place), ``"owner"`` (per creature: only the player controlling
      the creature the payload's ``creature`` names sees it; the schema must require a
      string ``creature``) or ``"everyone"``.
    """

    id: str
    schema: Mapping[str, Any] = attrs.field(
        factory=lambda: {"type": "object", "additionalProperties": False}
    )
    reducer: Reducer | None = None
    description: str = ""
    template: str = ""
    visibility: Visibility = "gm"


@attrs.frozen
class StateSpec:
    """One piece of a plugin's own state (``zonekeep_plugin_state``).

    - ``key``: its name in the plugin's state (``"kicked"``).
    - ``default``: its value before any event changed it (JSON-like: dicts, lists,
      text, numbers, booleans, ``None``; every encounter starts with its own copy).
    - ``visibility``: ``"gm"`` (default: only the GM's snapshot has it), ``"owner"``
      (per-creature data: a dict keyed by creature id, default ``{}``; a player's
      snapshot has the entries of the creatures it controls, a spectator's none) or
      ``"everyone"``.
    - ``description``: what it holds, for a person.
    - ``schema``: optionally, a JSON Schema its value must keep; checked after every
      fold (a reducer breaking it fails like a reducer that raises).
    """

    key: str
    default: Any = None
    visibility: Visibility = "gm"
    description: str = ""
    schema: Mapping[str, Any] | None = None


class AmbiguousId(ValueError):
    """A short name matches the ids of several plugins; the message names them all."""

    def __init__(self, kind: str, name: str, ids: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.ids = tuple(sorted(ids))
        listed = " and ".join(repr(i) for i in self.ids)
        super().__init__(
            f"The {kind} {name!r} is ambiguous: it could be {listed}; use the full id."
        )


class CustomEventError(ValueError):
    """A plugin event cannot be emitted: unknown type, bad payload, or its reducer failed."""


@attrs.frozen
class _EventEntry:
    plugin: str
    namespace: str
    spec: EventTypeSpec


class PluginCatalog:
    """The namespaces, declared ids, event types and state specs of one engine's plugins."""

    def __init__(self) -> None:
        #: Plugin name -> its namespace (``None``: the built-ins and undeclared plugins).
        self.namespaces: dict[str, str | None] = {}
        #: Kind -> full id -> (namespace, owning plugin).
        self._ids: dict[str, dict[str, tuple[str | None, str]]] = {k: {} for k in ID_KINDS}
        #: Kind -> short name -> full ids.
        self._short: dict[str, dict[str, list[str]]] = {k: {} for k in ID_KINDS}
        #: Event types by full id.
        self.events: dict[str, _EventEntry] = {}
        #: Namespace -> key -> spec, in declaration order.
        self.state: dict[str, dict[str, StateSpec]] = {}
        #: Namespaces of the plugins that are not installed, warned about once each.
        self._warned: set[str] = set()
        #: Creature features the plugins implement: (kind, full id) -> (plugin, spec).
        self.features: dict[tuple[str, str], tuple[str, FeatureSpec]] = {}

    # -- declaring ------------------------------------------------------------------------------

    def namespace(self, plugin: str) -> str | None:
        return self.namespaces.get(plugin)

    def declare(self, kind: str, plugin: str, full: str) -> None:
        """Record that ``plugin`` declares ``full`` (already qualified) of ``kind``."""
        ns = self.namespaces.get(plugin)
        self._ids[kind][full] = (ns, plugin)
        self._short[kind].setdefault(short_name(ns, full), []).append(full)

    def owner(self, kind: str, full: str) -> str | None:
        """The plugin that declares ``full`` of ``kind``, or ``None``."""
        entry = self._ids[kind].get(full)
        return entry[1] if entry else None

    def ids(self, kind: str) -> list[str]:
        return list(self._ids[kind])

    def add_event_type(self, plugin: str, spec: EventTypeSpec) -> list[str]:
        """Register a declared event type; the problems with it (empty when none)."""
        ns = self.namespaces.get(plugin)
        who = f"plugin {plugin!r}"
        if ns is None:
            return [
                f"{who} declares event type {spec.id!r} but has no namespace: event types "
                "and plugin state need a ZONEKEEP_PLUGIN (its name is the namespace)"
            ]
        problems = _short_problems(who, "event type", spec.id, ns)
        reducer: object = spec.reducer
        if reducer is not None and not callable(reducer):
            problems.append(f"{who}: the reducer of event type {spec.id!r} is not callable")
        if spec.visibility not in VISIBILITIES:
            problems.append(
                f"{who}: event type {spec.id!r} has visibility {spec.visibility!r}; "
                "use 'gm', 'owner' or 'everyone'"
            )
        elif spec.visibility == "owner" and not _names_its_creature(spec.schema):
            problems.append(
                f"{who}: event type {spec.id!r} is for its owner: its schema must require "
                "a string 'creature' (the creature whose controller sees it)"
            )
        problems += [f"{who}, event type {spec.id!r}: {p}" for p in _object_schema(spec.schema)]
        problems += _template_problems(who, spec)
        if problems:
            return problems
        full = qualify(ns, spec.id)
        if full in self.events:
            return [f"event type {full!r} is declared twice by plugin {plugin!r}"]
        self.events[full] = _EventEntry(plugin, ns, attrs.evolve(spec, id=full))
        self.declare("event type", plugin, full)
        return []

    def add_state(self, plugin: str, spec: StateSpec) -> list[str]:
        """Register a declared piece of plugin state; the problems with it."""
        ns = self.namespaces.get(plugin)
        who = f"plugin {plugin!r}"
        if ns is None:
            return [
                f"{who} declares plugin state {spec.key!r} but has no namespace: event types "
                "and plugin state need a ZONEKEEP_PLUGIN (its name is the namespace)"
            ]
        problems = []
        if not isinstance(spec.key, str) or not _SHORT_RE.fullmatch(spec.key):
            problems.append(f"{who}: a state key must be a snake_case word, not {spec.key!r}")
        if spec.visibility not in VISIBILITIES:
            problems.append(
                f"{who}: state {spec.key!r} has visibility {spec.visibility!r}; "
                "use 'gm', 'owner' or 'everyone'"
            )
        elif spec.visibility == "owner" and not isinstance(spec.default, dict):
            problems.append(
                f"{who}: state {spec.key!r} is per creature ('owner'): its default must be "
                "an object keyed by creature id, such as {}"
            )
        if not is_json_like(spec.default):
            problems.append(f"{who}: the default of state {spec.key!r} is not JSON-like")
        if spec.schema is not None:
            found = schema_errors(spec.schema, "schema")
            if not found:
                found = validate(spec.schema, spec.default, "default")
            problems += [f"{who}, state {spec.key!r}: {p}" for p in found]
        pieces = self.state.setdefault(ns, {})
        if spec.key in pieces:
            problems.append(f"state {spec.key!r} is declared twice by plugin {plugin!r}")
        if not problems:
            pieces[spec.key] = spec
        return problems

    def add_feature(self, plugin: str, spec: FeatureSpec) -> list[str]:
        """Register a creature feature a plugin implements (``zonekeep_features``); the
        problems with it (empty when none)."""
        ns = self.namespaces.get(plugin)
        who = f"plugin {plugin!r}"
        if spec.kind not in FEATURE_KINDS:
            return [f"{who}: feature {spec.id!r} has kind {spec.kind!r}; use {FEATURE_KINDS}"]
        if not isinstance(spec.id, str) or not FEATURE_ID.match(spec.id) or spec.id == GM_FEATURE:
            return [f"{who}: {spec.id!r} is not a feature id (lower-case letters, digits, - or _)"]
        try:
            full = qualify(ns, spec.id)
        except ValueError as exc:
            return [f"{who}: {exc}"]
        problems = [
            f"{who}, feature {spec.id!r}: {p}"
            for p in schema_errors(spec.params_schema, "params_schema")
        ]
        check: object = spec.check
        if check is not None and not callable(check):
            problems.append(f"{who}, feature {spec.id!r}: check is not callable")
        if (spec.kind, full) in self.features:
            other = self.features[spec.kind, full][0]
            problems.append(
                f"{spec.kind} feature {full!r} is declared by both plugin {other!r} and {who}"
            )
        if problems:
            return problems
        self.features[spec.kind, full] = (plugin, attrs.evolve(spec, id=full))
        self.declare(spec.kind, plugin, full)
        return []

    def feature(self, kind: str, name: str) -> tuple[str, FeatureSpec] | None:
        """The plugin implementing feature ``name`` (a full id or a short name only one
        plugin declares) as a ``kind`` and its spec, or ``None``."""
        try:
            full = self.resolve(kind, name)
        except AmbiguousId:
            return None
        return self.features.get((kind, full))

    def feature_status(
        self,
        kind: str,
        feature_id: str,
        gm: str | None = None,
        disabled: Iterable[str] = (),
    ) -> tuple[bool, str | None]:
        """Whether a feature (a trait, an action or an on-hit rider: ``kind``) with this
        id and ``gm`` mark is automated, and when not, why (its ``gm`` reason; no
        installed plugin declaring its id; an id several plugins declare; its plugin
        switched off in the encounter, one of ``disabled``)."""
        if gm is not None:
            return False, gm
        if feature_id == GM_FEATURE:
            return False, "marked for the GM"
        try:
            full = self.resolve(kind, feature_id)
        except AmbiguousId as exc:
            return False, str(exc)
        found = self.features.get((kind, full))
        if found is None:
            return False, NOT_IMPLEMENTED
        if found[0] in disabled:
            return False, f"its plugin {found[0]!r} is switched off in this encounter"
        return True, None

    def mark_features(self, creature: dict[str, Any], disabled: Iterable[str] = ()) -> None:
        """Fill in ``automated`` (and, when false, ``gm``: the reason) of every trait,
        action and attack rider of ``creature``, a creature as the snapshot writes it
        (in place)."""
        off = tuple(disabled)
        groups: list[tuple[str, Any]] = [
            ("trait", creature.get("traits")),
            ("action", creature.get("actions")),
        ]
        for attack in creature.get("attacks") or ():
            if isinstance(attack, dict):
                groups.append(("on_hit", attack.get("on_hit")))
        for kind, features in groups:
            for feature in features or ():
                if not isinstance(feature, dict):
                    continue
                automated, reason = self.feature_status(
                    kind, str(feature.get("id")), feature.get("gm"), off
                )
                feature["automated"] = automated
                feature["gm"] = reason

    def feature_params_problems(
        self,
        kind: str,
        feature: Trait | Action | OnHit,
        attack_names: Sequence[str],
        where: str,
    ) -> list[str]:
        """The ways ``feature``'s ``params`` break the schema (and the ``check``) of the
        plugin implementing it, each at ``where.params``; none when no plugin does."""
        if feature.gm is not None:
            return []
        found = self.feature(kind, feature.id)
        if found is None:
            return []
        plugin, spec = found
        problems = validate(spec.params_schema, feature.params, f"{where}.params")
        if not problems and spec.check is not None:
            try:
                problems = [
                    f"{where}.params: {p}" for p in spec.check(feature.params, attack_names)
                ]
            except Exception as exc:  # a plugin's check failing is the plugin's fault
                log.exception("plugin %r failed checking feature %r", plugin, feature.id)
                problems = [f"{where}.params: the plugin {plugin!r} failed checking them ({exc!r})"]
        return problems

    def creature_feature_problems(self, creature: Any, where: str = "creature") -> list[str]:
        """Every problem of the params of ``creature``'s traits, actions and attack
        riders (a :class:`~zonekeep.sdk.Creature`, a compendium entry or a sheet) against
        the plugins implementing them, each naming its path."""
        attacks = tuple(getattr(creature, "attacks", ()))
        names = [a.name for a in attacks]
        problems: list[str] = []
        for kind, field in (("trait", "traits"), ("action", "actions")):
            for i, feature in enumerate(getattr(creature, field, ())):
                problems += self.feature_params_problems(
                    kind, feature, names, f"{where}.{field}[{i}]"
                )
        for i, attack in enumerate(attacks):
            for j, rider in enumerate(getattr(attack, "on_hit", ())):
                problems += self.feature_params_problems(
                    "on_hit", rider, names, f"{where}.attacks[{i}].on_hit[{j}]"
                )
        return problems

    # -- resolving ids ------------------------------------------------------------------------------

    def resolve(self, kind: str, name: str) -> str:
        """The full id ``name`` stands for among the ``kind`` ids: itself when it is a
        declared id, else the one declared id whose short name it is, else ``name``
        unchanged (an id nobody declares: the caller decides). Raises
        :class:`AmbiguousId` when several ids have that short name."""
        if name in self._ids[kind]:
            return name
        matches = self._short[kind].get(name, ())
        if len(matches) > 1:
            raise AmbiguousId(kind, name, matches)
        return matches[0] if matches else name

    # -- folding ------------------------------------------------------------------------------

    def initial_state(self, namespace: str) -> dict[str, Any]:
        """A plugin's state before any of its events: every declared key at its default."""
        return {k: copy.deepcopy(s.default) for k, s in self.state.get(namespace, {}).items()}

    def state_of(
        self, plugin_state: Mapping[str, dict[str, Any]], namespace: str
    ) -> dict[str, Any]:
        """A copy of plugin ``namespace``'s state in ``plugin_state`` (defaults filled in)."""
        result = self.initial_state(namespace)
        result.update(copy.deepcopy(plugin_state.get(namespace, {})))
        return result

    def checked(self, event: PluginEvent) -> PluginEvent:
        """``event`` with its full type, its payload checked against the schema.

        Raises :class:`CustomEventError` (or :class:`AmbiguousId`) when it cannot be
        emitted."""
        if not isinstance(event.type, str):
            raise CustomEventError(f"a plugin event's type must be text, not {event.type!r}")
        full = self.resolve("event type", event.type)
        entry = self.events.get(full)
        if entry is None:
            raise CustomEventError(f"no plugin declares the event type {event.type!r}")
        if not isinstance(event.data, dict) or not is_json_like(event.data):
            raise CustomEventError(
                f"the payload of {full!r} must be a JSON object (dicts, lists, text, numbers)"
            )
        problems = validate(entry.spec.schema, event.data, "data")
        if problems:
            raise CustomEventError(f"{full!r} payload: {'; '.join(problems)}")
        return event if full == event.type else PluginEvent(full, event.data)

    def fold(
        self, plugin_state: dict[str, dict[str, Any]], event: PluginEvent, *, strict: bool
    ) -> None:
        """Fold ``event`` into ``plugin_state`` with its plugin's reducer.

        The reducer works on a copy, swapped in only when it succeeds, so a failing one
        changes nothing. ``strict`` (an event being emitted) raises
        :class:`CustomEventError` on a failure; otherwise (a replay of a stored log) the
        failure is logged and the event left unfolded. An event of a plugin that is not
        installed is never folded (see docs/plugins.md, "A log naming a plugin that is
        gone")."""
        entry = self.events.get(event.type)
        if entry is None:
            if strict:
                raise CustomEventError(f"no plugin declares the event type {event.type!r}")
            self._gone(event.type)
            return
        if entry.spec.reducer is None:
            return
        ns = entry.namespace
        work = self.state_of(plugin_state, ns)
        try:
            if not strict:
                problems = validate(entry.spec.schema, event.data, "data")
                if problems:
                    raise CustomEventError("; ".join(problems))
            entry.spec.reducer(work, copy.deepcopy(event.data))
            self._check_state(ns, work)
        except (KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as exc:  # SystemExit included: plugin code, contained
            if strict:
                raise CustomEventError(
                    f"the reducer of {event.type!r} failed: {type(exc).__name__}: {exc}"
                ) from exc
            log.warning("event %r was not folded into plugin state: %r", event.type, exc)
            return
        plugin_state[ns] = work

    def _check_state(self, namespace: str, work: dict[str, Any]) -> None:
        specs = self.state.get(namespace, {})
        unknown = sorted(set(work) - set(specs))
        if unknown:
            raise CustomEventError(f"the reducer set undeclared state key(s) {', '.join(unknown)}")
        if not is_json_like(work):
            raise CustomEventError("the reducer left state that is not JSON-like")
        for key, spec in specs.items():
            if spec.schema is not None:
                problems = validate(spec.schema, work[key], key)
                if problems:
                    raise CustomEventError("; ".join(problems))

    def _gone(self, type_: str) -> None:
        ns = type_.rsplit(".", 1)[0]
        if ns not in self._warned:
            self._warned.add(ns)
            log.warning(
                "the log holds events of %r, a plugin that is not installed: they are kept "
                "but not folded (its state is left empty)",
                ns,
            )

    # -- visibility ----------------------------------------------------------------------------

    def public_event(self, type_: str) -> bool:
        """Whether players and spectators may see events of ``type_`` (an unknown one: no)."""
        entry = self.events.get(type_)
        return entry is not None and entry.spec.visibility == "everyone"

    def public_state(self, namespace: str, key: str) -> bool:
        """Whether players and spectators may see this piece of state (an undeclared one: no)."""
        spec = self.state.get(namespace, {}).get(key)
        return spec is not None and spec.visibility == "everyone"

    def owner_event(self, type_: str) -> bool:
        """Whether events of ``type_`` are for the controller of their ``creature`` only."""
        entry = self.events.get(type_)
        return entry is not None and entry.spec.visibility == "owner"

    def owner_state(self, namespace: str, key: str) -> bool:
        """Whether this piece of state is per creature, each entry for its controller."""
        spec = self.state.get(namespace, {}).get(key)
        return spec is not None and spec.visibility == "owner"


def _names_its_creature(schema: Mapping[str, Any]) -> bool:
    """Whether a payload schema requires a string ``creature``."""
    properties = schema.get("properties")
    creature = properties.get("creature") if isinstance(properties, Mapping) else None
    required = schema.get("required") or ()
    return (
        isinstance(creature, Mapping)
        and creature.get("type") == "string"
        and "creature" in required
    )


def _short_problems(who: str, kind: str, name: object, namespace: str | None) -> list[str]:
    if not isinstance(name, str) or not name:
        return [f"{who} declared a {kind} without an id: {name!r}"]
    try:
        short = short_name(namespace, qualify(namespace, name))
    except ValueError as exc:
        return [f"{who}: {exc}"]
    if not _SHORT_RE.fullmatch(short):
        return [f"{who}: the {kind} {name!r} must be a snake_case word"]
    return []


def _object_schema(schema: object) -> list[str]:
    found = schema_errors(schema, "schema")
    if not found and isinstance(schema, Mapping) and schema.get("type") != "object":
        found.append('schema: a payload schema must have "type": "object"')
    return found


def _template_problems(who: str, spec: EventTypeSpec) -> list[str]:
    if not spec.template:
        return []
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(spec.template) if f is not None]
    except ValueError as exc:
        return [f"{who}: the template of {spec.id!r} cannot be read: {exc}"]
    props = spec.schema.get("properties", {}) if isinstance(spec.schema, Mapping) else {}
    bad = [f for f in fields if f not in props]
    if bad:
        return [
            f"{who}: the template of {spec.id!r} names {', '.join(map(repr, bad))}, "
            "which the payload schema does not declare (use plain {field} names)"
        ]
    return []


__all__ = [
    "ID_KINDS",
    "VISIBILITIES",
    "AmbiguousId",
    "CustomEventError",
    "EventTypeSpec",
    "PluginCatalog",
    "Reducer",
    "StateSpec",
    "Visibility",
    "qualify",
    "short_name",
]
