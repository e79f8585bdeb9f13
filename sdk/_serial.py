"""Turning rules data into plain JSON-able structures and back (cattrs).

Events unstructure to ``{"type": ..., ...fields}`` and structure back by their
``type``; sizes travel as their names ("Medium"); roll records as objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ._dice import DiceError, parse_dice
from ._events import EVENT_TYPES, Decision, Event, PluginEvent
from ._features import Trait, feature_data_problems, text_trait
from ._json import strict_containers, strict_scalar
from ._state import EncounterState
from ._types import Creature, Size
from ._vocabulary import DAMAGE_TYPES

converter = cattrs.Converter(forbid_extra_keys=True)
converter.register_unstructure_hook(Size, lambda s: s.label)
converter.register_structure_hook(Size, lambda v, _: Size.parse(v))


def _structure_any(value: Any, _: Any) -> Any:
    return value


converter.register_structure_hook(Any, _structure_any)
converter.register_structure_hook(int, strict_scalar(int, "a whole number"))
converter.register_structure_hook(bool, strict_scalar(bool, "true or false"))
converter.register_structure_hook(str, strict_scalar(str, "text"))
converter.register_structure_hook(float, strict_scalar(float, "a number"))


strict_containers(converter)
# A decision's ``trigger`` (since 1.6) is left out when it has none: the decisions written
# before it, and every decision that interrupts nothing, read as they always did.
converter.register_unstructure_hook(
    Decision,
    make_dict_unstructure_fn(Decision, converter, trigger=override(omit_if_default=True)),
)
_trait_fields = make_dict_structure_fn(Trait, converter, _cattrs_forbid_extra_keys=True)


def _structure_trait(value: Any, _: Any) -> Trait:
    """A trait: an object, or (files written before structured traits) a sentence, which
    loads as a "GM adjudicates" trait with that text (:func:`text_trait`)."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("a trait needs a text")
        return text_trait(value)
    if not isinstance(value, Mapping):
        raise ValueError("a trait is an object (id, name, text ...) or a sentence")
    trait: Trait = _trait_fields(value, Trait)
    return trait


converter.register_structure_hook(Trait, _structure_trait)
converter.register_structure_hook(
    Creature, make_dict_structure_fn(Creature, converter, _cattrs_forbid_extra_keys=True)
)


def _format_error(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"unknown field(s): {', '.join(sorted(exc.extra_fields))}"
    if isinstance(exc, ValueError | TypeError) and str(exc):
        return str(exc)
    return f"invalid value, expected {getattr(type_, '__name__', type_)}"


def describe_errors(exc: cattrs.BaseValidationError, path: str) -> list[str]:
    """One readable line per problem in a cattrs validation error: ``path.field: problem``."""
    lines = cattrs.transform_error(exc, path=path, format_exception=_format_error)
    result = []
    for line in lines:
        message, _, where = line.rpartition(" @ ")
        result.append(f"{where}: {message}" if message else line)
    return result


def creature_from_dict(data: object, path: str = "creature") -> Creature:
    """Build a creature from a roster entry, rejecting unknown keys and wrong types.

    Raises ``ValueError`` with a readable description of every problem.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: a creature must be an object")
    try:
        creature = converter.structure(dict(data), Creature)
    except cattrs.BaseValidationError as exc:
        details = "; ".join(describe_errors(exc, path))
        raise ValueError(details) from None
    problems = [
        f"{path}.{field}: {kind!r} is not a damage type ({', '.join(DAMAGE_TYPES)})"
        for field in ("damage_resistances", "damage_vulnerabilities", "damage_immunities")
        for kind in getattr(creature, field)
        if kind not in DAMAGE_TYPES
    ]
    problems += [
        f"{path}.attacks[{i}].damage_type: {attack.damage_type!r} is not a damage type "
        f"({', '.join(DAMAGE_TYPES)}, or empty)"
        for i, attack in enumerate(creature.attacks)
        if attack.damage_type and attack.damage_type not in DAMAGE_TYPES
    ]
    for i, attack in enumerate(creature.attacks):
        try:  # the dice parser's bounds, here rather than at the first attack's roll
            parse_dice(attack.damage)
        except DiceError as exc:
            problems.append(f"{path}.attacks[{i}].damage: {exc}")
    problems += feature_data_problems(creature, path)
    if problems:
        raise ValueError("; ".join(problems))
    return creature


def creature_to_dict(creature: Creature) -> dict[str, Any]:
    result: dict[str, Any] = converter.unstructure(creature)
    return result


def event_to_dict(event: Event) -> dict[str, Any]:
    """``{"type": <wire name>, **fields}`` for ``event``."""
    data: dict[str, Any] = converter.unstructure(event)
    return {"type": event.type, **data}


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """The event that :func:`event_to_dict` produced. Raises ``ValueError`` if unknown."""
    fields = dict(data)
    name = fields.pop("type", None)
    fields.pop("_request", None)  # the server's record of the keyed request (not the event's)
    cls = EVENT_TYPES.get(str(name))
    if cls is None and is_plugin_event_type(name):
        return _plugin_event(str(name), fields)
    if cls is None:
        raise ValueError(f"unknown event type {name!r}")
    try:
        event: Event = converter.structure(fields, cls)
    except cattrs.BaseValidationError as exc:
        raise ValueError("; ".join(describe_errors(exc, str(name)))) from None
    return event


def is_plugin_event_type(name: object) -> bool:
    """Whether ``name`` is written as a plugin's event type: ``<plugin>.<name>`` (the
    built-in types have no dot)."""
    return isinstance(name, str) and "." in name and name not in EVENT_TYPES


def _plugin_event(name: str, fields: dict[str, Any]) -> PluginEvent:
    """A stored or imported plugin event: ``{"type": "<plugin>.<name>", "data": {...}}``.

    Whether its plugin is installed does not matter here (a log naming a plugin that
    is gone still loads); its payload is checked when it is folded."""
    extra = sorted(set(fields) - {"data"})
    if extra:
        raise ValueError(f"{name}: unknown field(s): {', '.join(extra)}")
    payload = fields.get("data", {})
    if not isinstance(payload, dict):
        raise ValueError(f"{name}.data: expected an object")
    return PluginEvent(name, dict(payload))


def state_to_dict(state: EncounterState) -> dict[str, Any]:
    """A plain snapshot of ``state`` (for comparisons, logs and clients)."""
    result: dict[str, Any] = converter.unstructure(state)
    return result
