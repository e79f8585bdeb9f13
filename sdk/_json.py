"""JSON-kind checks shared by every cattrs converter of zonekeep (the sdk's, the
arena loader's, the protocol's wire converter): what a JSON value is called in a
client author's words, scalars taken only from their own JSON type, lists only from
arrays and dicts only from objects. Imports nothing of the rules, so any module may
use it.
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


def strict_scalar(kind: type, label: str) -> Any:
    """A structure hook taking a value only of JSON type ``kind`` (an int is a float too;
    true/false is no number), refusing anything else as "expected <label>, not ..."."""

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
