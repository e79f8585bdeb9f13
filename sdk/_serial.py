"""Turning rules data into plain JSON-able structures and back (cattrs).

Events unstructure to ``{"type": ..., ...fields}`` and structure back by their
``type``; sizes travel as their names ("Medium"); roll records as objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, get_args, get_origin

import cattrs
from cattrs.cols import (
    homogenous_tuple_structure_factory,
    list_structure_factory,
    mapping_structure_factory,
)
from cattrs.gen import make_dict_structure_fn

from ._events import EVENT_TYPES, Event
from ._state import EncounterState
from ._types import Creature, Size

converter = cattrs.Converter(forbid_extra_keys=True)
converter.register_unstructure_hook(Size, lambda s: s.label)
converter.register_structure_hook(Size, lambda v, _: Size.parse(v))


def _structure_any(value: Any, _: Any) -> Any:
    return value


def _strict(kind: type, label: str) -> Any:
    def hook(value: Any, _: Any) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise ValueError(f"expected {label}, not true/false")
        if kind is float and isinstance(value, int):
            return float(value)
        if not isinstance(value, kind):
            raise ValueError(f"expected {label}, not {json_kind(value)}")
        return value

    return hook


def json_kind(value: object) -> str:
    """What a JSON value is, in a client author's words ("text", "a list", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return "a " + type(value).__name__


converter.register_structure_hook(Any, _structure_any)
converter.register_structure_hook(int, _strict(int, "a whole number"))
converter.register_structure_hook(bool, _strict(bool, "true or false"))
converter.register_structure_hook(str, _strict(str, "text"))
converter.register_structure_hook(float, _strict(float, "a number"))


def _is_sequence(t: Any) -> bool:
    origin = get_origin(t)
    if origin is list:
        return True
    args = get_args(t)
    return origin is tuple and len(args) == 2 and args[1] is Ellipsis


def _is_mapping(t: Any) -> bool:
    return get_origin(t) is dict


def _not_a_container(kind: Literal["array", "object"], value: object) -> str:
    return f"expected {'a list' if kind == 'array' else 'an object'}, not {json_kind(value)}"


def strict_containers(
    conv: cattrs.Converter,
    refusal: Callable[[Literal["array", "object"], object], str] = _not_a_container,
) -> None:
    """Make ``conv`` take lists (and ``tuple[X, ...]``) only from JSON arrays and dicts
    only from JSON objects, never from a string or another kind of value. Used by the
    sdk's converter, the protocol's wire converter and the arena loader; ``refusal``
    words the error for a value that is not the ``"array"`` or ``"object"`` expected
    (by default "expected a list, not text")."""

    def sequence(t: Any) -> Any:
        if get_origin(t) is tuple:
            base = homogenous_tuple_structure_factory(t, conv)
        else:
            base = list_structure_factory(t, conv)

        def hook(value: Any, type_: Any) -> Any:
            if not isinstance(value, list | tuple):
                raise ValueError(refusal("array", value))
            return base(value, type_)

        return hook

    def mapping(t: Any) -> Any:
        base = mapping_structure_factory(t, conv)

        def hook(value: Any, type_: Any) -> Any:
            if not isinstance(value, Mapping):
                raise ValueError(refusal("object", value))
            return base(value, type_)

        return hook

    conv.register_structure_hook_factory(_is_sequence, sequence)
    conv.register_structure_hook_factory(_is_mapping, mapping)


strict_containers(converter)
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
        return converter.structure(dict(data), Creature)
    except cattrs.BaseValidationError as exc:
        details = "; ".join(describe_errors(exc, path))
        raise ValueError(details) from None


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
    cls = EVENT_TYPES.get(str(name))
    if cls is None:
        raise ValueError(f"unknown event type {name!r}")
    try:
        event: Event = converter.structure(fields, cls)
    except cattrs.BaseValidationError as exc:
        raise ValueError("; ".join(describe_errors(exc, str(name)))) from None
    return event


def state_to_dict(state: EncounterState) -> dict[str, Any]:
    """A plain snapshot of ``state`` (for comparisons, logs and clients)."""
    result: dict[str, Any] = converter.unstructure(state)
    return result
