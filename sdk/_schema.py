"""A small, bounded JSON Schema validator for the data plugins declare: asset-tag
data (:class:`~zonekeep.sdk.AssetTagSpec`'s ``data_schema``), plugin settings
(:class:`~zonekeep.sdk.SettingSpec`'s ``schema``), custom events' payloads and
plugin state (:class:`~zonekeep.sdk.EventTypeSpec`, :class:`~zonekeep.sdk.StateSpec`).

The server must not need ``jsonschema`` at run time, and a plugin's schema is
checked against data a GM sends (an arena, an encounter's options), so this module
supports a documented subset of JSON Schema 2020-12 and nothing else
(docs/plugins.md, "Data schemas"):

* ``type`` (one name or a list of names: ``"string"``, ``"integer"``, ``"number"``,
  ``"boolean"``, ``"object"``, ``"array"``, ``"null"``), ``enum``, ``const``;
* numbers: ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``;
* strings: ``minLength``, ``maxLength``, and ``format: "dice"`` (zonekeep's own: a dice
  expression such as ``"2d6"``, ``"d8+1"`` or ``"5"``);
* objects: ``properties``, ``required``, ``additionalProperties`` (true, false or a
  schema);
* arrays: ``items`` (one schema), ``minItems``, ``maxItems``;
* ``anyOf`` (a list of schemas, one of which the value must meet);
* annotations, which check nothing: ``title``, ``description``, ``default``,
  ``examples``, ``$comment``.

:func:`check_schema` refuses any other keyword (a plugin would otherwise believe a
``pattern`` it wrote is checked), so it runs once, when the engine is built. Checking
a value walks the value and the schema together: its cost is bounded by the size of
the value (which the server's message and file limits bound) times the schema's.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from ._dice import DiceError, parse_dice

__all__ = [
    "MAX_PROBLEMS",
    "SCHEMA_KEYWORDS",
    "check_schema",
    "is_json_like",
    "schema_errors",
    "schema_problems",
    "validate",
]

_TYPES: Final = ("string", "integer", "number", "boolean", "object", "array", "null")
_ANNOTATIONS: Final = ("title", "description", "default", "examples", "$comment")
#: Every keyword the validator understands (the annotations check nothing).
SCHEMA_KEYWORDS: Final = (
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "anyOf",
    *_ANNOTATIONS,
)
_FORMATS: Final = ("dice",)
_DICE_RE: Final = re.compile(r"(?:[1-9][0-9]*)?d[1-9][0-9]*(?:[+-][0-9]+)?|[1-9][0-9]*")
#: How deep a declared schema may nest (objects in arrays in objects ...).
MAX_DEPTH: Final = 16
#: How many problems :func:`validate` reports at most (a hostile payload cannot make it long).
MAX_PROBLEMS: Final = 20
_ARTICLE: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def check_schema(schema: object, where: str = "schema") -> None:
    """Raise ``ValueError`` naming the first keyword of ``schema`` this validator does
    not support, or a keyword whose value is malformed (``where`` names the schema in
    the message)."""
    for problem in _schema_errors(schema, where, 0):
        raise ValueError(problem)


def schema_errors(schema: object, where: str = "schema") -> list[str]:
    """Every problem :func:`check_schema` would raise for, one sentence each (empty
    when ``schema`` is usable)."""
    return list(_schema_errors(schema, where, 0))


def _schema_errors(schema: object, where: str, depth: int) -> Iterator[str]:
    if depth > MAX_DEPTH:
        yield f"{where}: nested more than {MAX_DEPTH} levels deep"
        return
    if not isinstance(schema, Mapping):
        yield f"{where}: a schema must be an object (a dict), not {_kind(schema)}"
        return
    for key in schema:
        if key not in SCHEMA_KEYWORDS:
            supported = ", ".join(k for k in SCHEMA_KEYWORDS if k not in _ANNOTATIONS)
            yield f"{where}: the keyword {key!r} is not supported (supported: {supported})"
    kinds = schema.get("type")
    names = [kinds] if isinstance(kinds, str) else kinds
    if "type" in schema and (
        not isinstance(names, list) or not names or any(n not in _TYPES for n in names)
    ):
        yield f"{where}.type: one of {', '.join(_TYPES)} (or a list of them), not {kinds!r}"
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        yield f"{where}.enum: a non-empty list of values"
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema and not _is_number(schema[key]):
            yield f"{where}.{key}: a number, not {schema[key]!r}"
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        if key in schema and not (type(schema[key]) is int and schema[key] >= 0):
            yield f"{where}.{key}: a whole number, 0 or more, not {schema[key]!r}"
    if "format" in schema and schema["format"] not in _FORMATS:
        yield f"{where}.format: only 'dice' is supported, not {schema['format']!r}"
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        yield f"{where}.properties: an object of schemas"
    else:
        for name, sub in properties.items():
            yield from _schema_errors(sub, f"{where}.properties.{name}", depth + 1)
    required = schema.get("required", [])
    if not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        yield f"{where}.required: a list of property names"
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        yield from _schema_errors(extra, f"{where}.additionalProperties", depth + 1)
    if "items" in schema:
        yield from _schema_errors(schema["items"], f"{where}.items", depth + 1)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if not (isinstance(options, list) and options):
            yield f"{where}.anyOf: a non-empty list of schemas"
        else:
            for i, sub in enumerate(options):
                yield from _schema_errors(sub, f"{where}.anyOf[{i}]", depth + 1)


def schema_problems(
    value: object, schema: Mapping[str, Any], path: str = ""
) -> list[tuple[str, str]]:
    """Every way ``value`` fails ``schema`` (one :func:`check_schema` accepted), as
    ``(path, sentence)`` pairs: ``path`` extends ``path`` with ``.key`` and ``[index]``
    (``"data.dc"``, ``"data.zones[1]"``)."""
    found: list[tuple[str, str]] = []
    _check(value, schema, path, found)
    return found


def validate(schema: Mapping[str, Any], value: object, path: str = "") -> list[str]:
    """The ways ``value`` breaks ``schema`` as sentences (``"data.dc: expected an
    integer, got string \"x\""``), at most :data:`MAX_PROBLEMS`; empty when it is valid."""
    return [
        f"{where or '(value)'}: {message}"
        for where, message in schema_problems(value, schema, path)[:MAX_PROBLEMS]
    ]


def is_json_like(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is made only of ``dict`` (text keys), ``list``, ``str``,
    ``int``, finite ``float``, ``bool`` and ``None``, nested at most 32 levels (what
    plugin state and event payloads may hold)."""
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


def _check(
    value: object, schema: Mapping[str, Any], path: str, found: list[tuple[str, str]]
) -> None:
    def add(message: str) -> None:
        found.append((path, message))

    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is_type(value, name) for name in names):
            wanted = " or ".join(_ARTICLE[n] for n in names)
            add(f"expected {wanted}, got {_shown(value)}")
            return
    if "const" in schema and not _same(value, schema["const"]):
        add(f"must be {_literal(schema['const'])}, got {_shown(value)}")
    if "enum" in schema and not any(_same(value, choice) for choice in schema["enum"]):
        choices = ", ".join(_literal(c) for c in schema["enum"])
        add(f"expected one of {choices}, got {_shown(value)}")
    if "anyOf" in schema and all(schema_problems(value, sub, path) for sub in schema["anyOf"]):
        add(f"matches none of the allowed shapes, got {_shown(value)}")
    if _is_number(value):
        assert isinstance(value, int | float)
        if "minimum" in schema and value < schema["minimum"]:
            add(f"must be at least {schema['minimum']}, got {_shown(value)}")
        if "maximum" in schema and value > schema["maximum"]:
            add(f"must be at most {schema['maximum']}, got {_shown(value)}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            add(f"must be more than {schema['exclusiveMinimum']}, got {_shown(value)}")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            add(f"must be less than {schema['exclusiveMaximum']}, got {_shown(value)}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            add(f"must be at least {schema['minLength']} characters long")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            add(f"must be at most {schema['maxLength']} characters long")
        if schema.get("format") == "dice" and not _DICE_RE.fullmatch(value):
            add(f"bad dice expression {_shown(value)}; expected e.g. '2d6', 'd8+1' or '5'")
        elif schema.get("format") == "dice":
            try:  # the shape is right: the parser's bounds (digits, sizes, modifier)
                parse_dice(value)
            except DiceError as exc:
                add(f"bad dice expression: {exc}")
    if isinstance(value, Mapping):
        _check_object(value, schema, path, found)
    if isinstance(value, list | tuple):
        _check_array(value, schema, path, found)


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, found: list[tuple[str, str]]
) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            found.append((_join(path, name), "required field is missing"))
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = _join(path, str(key))
        if key in properties:
            _check(item, properties[key], where, found)
        elif extra is False:
            known = ", ".join(properties) or "none"
            found.append((where, f"unknown field {key!r} (the fields are: {known})"))
        elif isinstance(extra, Mapping):
            _check(item, extra, where, found)


def _check_array(
    value: Sequence[Any], schema: Mapping[str, Any], path: str, found: list[tuple[str, str]]
) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        found.append((path, f"needs at least {schema['minItems']} items, got {len(value)}"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append((path, f"takes at most {schema['maxItems']} items, got {len(value)}"))
    items = schema.get("items")
    if items is not None:
        for i, item in enumerate(value):
            _check(item, items, f"{path}[{i}]", found)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_type(value: object, name: str) -> bool:
    if name == "integer":
        return type(value) is int  # strict, as the arena loader: 2.0 is not an integer
    if name == "number":
        return _is_number(value)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, Mapping)
    if name == "array":
        return isinstance(value, list | tuple)
    return value is None


def _same(a: object, b: object) -> bool:
    """JSON equality: ``1`` is not ``true``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _literal(value: object) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _kind(value: object) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "object", "array"):
        if name == "integer" and type(value) is not int:
            continue
        if _is_type(value, name):
            return name
    return type(value).__name__


def _shown(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool) else ""
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{_kind(value)} {text}".rstrip()
