"""A small JSON Schema checker for the schemas plugins declare (custom events' payloads).

The SDK must not depend on a full JSON Schema library at run time, and a plugin's
schema must mean the same to the server as to a client that reads it from the
``hello`` result, so plugins may use only the keywords listed in
:data:`SUPPORTED_KEYWORDS` (a subset of JSON Schema 2020-12, with their standard
meaning). :func:`schema_problems` refuses a schema using any other keyword when the
engine starts, instead of silently not enforcing it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ._json import json_kind

#: The JSON Schema keywords a plugin's schema may use.
SUPPORTED_KEYWORDS = frozenset(
    {
        "$comment",
        "additionalProperties",
        "anyOf",
        "const",
        "default",
        "description",
        "enum",
        "examples",
        "items",
        "maxItems",
        "maxLength",
        "maximum",
        "minItems",
        "minLength",
        "minimum",
        "properties",
        "required",
        "title",
        "type",
    }
)

_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
#: How many problems one check reports at most (a hostile payload cannot make it long).
MAX_PROBLEMS = 20


def schema_problems(schema: object, path: str = "schema") -> list[str]:
    """What is wrong with ``schema`` as a plugin schema (empty when it is usable)."""
    found: list[str] = []
    _check_schema(schema, path, found)
    return found


def _check_schema(schema: object, path: str, found: list[str]) -> None:
    if not isinstance(schema, Mapping):
        found.append(f"{path}: a schema must be an object, not {json_kind(schema)}")
        return
    for key in sorted(set(schema) - SUPPORTED_KEYWORDS):
        found.append(
            f"{path}: the keyword {key!r} is not supported "
            f"(use {', '.join(sorted(SUPPORTED_KEYWORDS))})"
        )
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for k in kinds:
        if k not in _TYPES:
            found.append(f"{path}.type: unknown type {k!r}")
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        found.append(f"{path}.properties: must be an object")
    else:
        for name, sub in props.items():
            _check_schema(sub, f"{path}.properties.{name}", found)
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        _check_schema(extra, f"{path}.additionalProperties", found)
    if "items" in schema:
        _check_schema(schema["items"], f"{path}.items", found)
    for i, sub in enumerate(schema.get("anyOf", ())):
        _check_schema(sub, f"{path}.anyOf[{i}]", found)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        found.append(f"{path}.required: must be a list of property names")
    if "enum" in schema and not isinstance(schema["enum"], list):
        found.append(f"{path}.enum: must be a list")


def validate(schema: Mapping[str, Any], value: object, path: str = "") -> list[str]:
    """The ways ``value`` breaks ``schema`` (one sentence each, at most
    :data:`MAX_PROBLEMS`); empty when it is valid. ``schema`` must have passed
    :func:`schema_problems`."""
    found: list[str] = []
    _validate(schema, value, path or "(payload)", found)
    return found[:MAX_PROBLEMS]


def _is_type(value: object, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, list | tuple)
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return value is None  # "null"


def _validate(schema: Mapping[str, Any], value: object, path: str, found: list[str]) -> None:
    if len(found) >= MAX_PROBLEMS:
        return
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(value, k) for k in kinds):
            found.append(f"{path}: expected {' or '.join(kinds)}, not {json_kind(value)}")
            return
    if "const" in schema and value != schema["const"]:
        found.append(f"{path}: must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: must be one of {', '.join(repr(e) for e in schema['enum'])}")
    if "anyOf" in schema and not any(not validate(sub, value, path) for sub in schema["anyOf"]):
        found.append(f"{path}: matches none of the allowed shapes")
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and "minimum" in schema and value < schema["minimum"]:
        found.append(f"{path}: must be at least {schema['minimum']}")
    if number and "maximum" in schema and value > schema["maximum"]:
        found.append(f"{path}: must be at most {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append(f"{path}: must be at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            found.append(f"{path}: must be at most {schema['maxLength']} characters")
    if isinstance(value, list | tuple):
        _validate_array(schema, value, path, found)
    if isinstance(value, Mapping):
        _validate_object(schema, value, path, found)


def _validate_array(
    schema: Mapping[str, Any], value: Sequence[Any], path: str, found: list[str]
) -> None:
    if len(value) < schema.get("minItems", 0):
        found.append(f"{path}: must have at least {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(f"{path}: must have at most {schema['maxItems']} items")
        return
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            _validate(items, item, f"{path}[{i}]", found)


def _validate_object(
    schema: Mapping[str, Any], value: Mapping[Any, Any], path: str, found: list[str]
) -> None:
    props: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            found.append(f"{path}.{name}: required field missing")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = f"{path}.{key}"
        if not isinstance(key, str):
            found.append(f"{path}: keys must be text")
        elif key in props:
            _validate(props[key], item, where, found)
        elif extra is False:
            found.append(f"{where}: unknown field")
        elif isinstance(extra, Mapping):
            _validate(extra, item, where, found)


def is_json_like(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is made only of ``dict`` (text keys), ``list``, ``str``,
    ``int``, ``float``, ``bool`` and ``None`` (what plugin state may hold)."""
    if depth > 32:
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, list):
        return all(is_json_like(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_json_like(v, depth + 1) for k, v in value.items())
    return False


__all__ = ["MAX_PROBLEMS", "SUPPORTED_KEYWORDS", "is_json_like", "schema_problems", "validate"]
