"""Regenerate the parts of the protocol that are derived from the code.

``python -m zonekeep.protocol._generate`` rewrites, from the attrs classes of
:mod:`zonekeep.sdk` and the commands of :class:`zonekeep.sdk.engine.Engine`:

- ``schemas/event_payload.schema.json``: the Event object, discriminated by ``type``;
- ``schemas/snapshot.schema.json``: the Snapshot object (the encounter state);
- the generated tables in ``SPEC.md`` (events, their nested types, commands).

``--check`` writes nothing and exits 1 when a file is out of date. The tests compare
:func:`generated_files` with the files in the repository.
"""

from __future__ import annotations

import enum
import json
import re
import sys
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import attrs

from zonekeep.sdk import EVENT_TYPES, EncounterState, Size, converter

from ._messages import JSON_SCHEMA_DRAFT, SCHEMA_BASE

HERE = Path(__file__).resolve().parent

BEGIN = "<!-- BEGIN GENERATED: {} (python -m zonekeep.protocol._generate) -->"
END = "<!-- END GENERATED: {} -->"


# -- Python types to JSON Schema -------------------------------------------------------------


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _wire_fields(cls: type) -> list[attrs.Attribute[Any]]:
    """The attrs fields that travel on the wire (cattrs leaves out ``init=False`` ones)."""
    return [f for f in attrs.fields(cls) if f.init]


def _first_line(doc: str | None) -> str:
    if not doc:
        return ""
    paragraph = doc.strip().split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


class SchemaBuilder:
    """Turns annotated attrs classes into JSON Schema ``$defs``.

    ``external`` maps class names already defined in another schema file to that
    file, so that a class is defined once and referred to elsewhere.
    """

    def __init__(self, external: dict[str, str] | None = None) -> None:
        self.defs: dict[str, Any] = {}
        self.external = external or {}

    def type_schema(self, tp: Any) -> dict[str, Any]:
        if tp is Any:
            return {}
        if tp is type(None):
            return {"type": "null"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer"}
        if tp is float:
            return {"type": "number"}
        if tp is str:
            return {"type": "string"}
        if tp is Size:
            self._define_size()
            return {"$ref": self.ref("Size")}
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is Literal:
            return {"enum": list(args)}
        if origin in (Union, types.UnionType):
            options = [self.type_schema(a) for a in args]
            return {"anyOf": options}
        if origin in (list, tuple) or origin is Sequence:
            if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
                return {
                    "type": "array",
                    "prefixItems": [self.type_schema(a) for a in args],
                    "items": False,
                    "minItems": len(args),
                }
            return {"type": "array", "items": self.type_schema(args[0])}
        if origin is dict:
            return {"type": "object", "additionalProperties": self.type_schema(args[1])}
        if isinstance(tp, type) and attrs.has(tp):
            return {"$ref": self.ref(self.define(tp))}
        raise TypeError(f"no JSON Schema mapping for {tp!r}")

    def ref(self, name: str) -> str:
        if name in self.external:
            return f"{self.external[name]}#/$defs/{name}"
        return f"#/$defs/{name}"

    def _define_size(self) -> None:
        if "Size" not in self.defs and "Size" not in self.external:
            self.defs["Size"] = {
                "description": "A size category, by name.",
                "enum": [s.label for s in Size],
            }

    def define(
        self, cls: type, name: str | None = None, extra: dict[str, Any] | None = None
    ) -> str:
        """Define ``cls`` (once) and return its name in ``$defs``."""
        name = name or cls.__name__
        if name in self.defs or name in self.external:
            return name
        self.defs[name] = {}  # reserve against recursion
        hints = _hints(cls)
        properties: dict[str, Any] = dict(extra or {})
        for f in _wire_fields(cls):
            prop = self.type_schema(hints[f.name])
            default = _json_default(f)
            if default is not _NO_DEFAULT:
                prop = {**prop, "default": default}
            properties[f.name] = prop
        definition: dict[str, Any] = {"type": "object"}
        description = _first_line(cls.__doc__)
        if description and not description.startswith(cls.__name__ + "("):
            definition["description"] = description
        definition |= {
            "required": list(properties),
            "properties": properties,
            "additionalProperties": False,
        }
        self.defs[name] = definition
        return name


_NO_DEFAULT = object()


def _json_default(f: attrs.Attribute[Any]) -> Any:
    if f.default is attrs.NOTHING or isinstance(f.default, attrs.Factory):  # type: ignore[arg-type]
        return _NO_DEFAULT
    value = converter.unstructure(f.default)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, enum.Enum):
        return _NO_DEFAULT
    return value


def _document(filename: str, title: str, description: str, body: dict[str, Any]) -> str:
    schema = {
        "$schema": JSON_SCHEMA_DRAFT,
        "$id": SCHEMA_BASE + filename,
        "title": title,
        "description": description,
        **body,
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def event_payload_schema() -> str:
    """``event_payload.schema.json``: every event type, discriminated by ``type``."""
    builder = SchemaBuilder()
    names = []
    for type_name, cls in sorted(EVENT_TYPES.items()):
        name = builder.define(
            cls,
            name=f"event.{type_name}",
            extra={"type": {"const": type_name}},
        )
        names.append((type_name, name))
    builder.defs["event.hidden"] = {
        "type": "object",
        "description": "An event a player or spectator may not see, sent in its place.",
        "required": ["type"],
        "properties": {"type": {"const": "hidden"}},
        "additionalProperties": False,
    }
    names.append(("hidden", "event.hidden"))
    body = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": [t for t, _ in names]}},
        "allOf": [
            {
                "if": {"properties": {"type": {"const": t}}, "required": ["type"]},
                "then": {"$ref": f"#/$defs/{n}"},
            }
            for t, n in names
        ],
        "$defs": dict(sorted(builder.defs.items())),
    }
    return _document(
        "event_payload.schema.json",
        "zonekeep event",
        "One event of an encounter, as sent in the `event` notification and in `join`'s "
        "`events`: `type` names the event, the other fields are its own. Generated from "
        "the attrs event classes of zonekeep.sdk by protocol/_generate.py; do not edit.",
        body,
    )


def snapshot_schema() -> str:
    """``snapshot.schema.json``: the encounter state as ``state_to_dict`` writes it."""
    shared = SchemaBuilder()
    for cls in EVENT_TYPES.values():
        shared.define(cls, name=f"event.{cls.type}")
    external = {n: "event_payload.schema.json" for n in shared.defs if not n.startswith("event.")}
    builder = SchemaBuilder(external)
    name = builder.define(EncounterState, name="Snapshot")
    top = builder.defs.pop(name)
    # A player's or spectator's snapshot has no turn resources while a hidden creature acts.
    top["properties"]["resources"] = {
        "anyOf": [top["properties"]["resources"], {"type": "null"}],
        "description": "Null for a player or spectator while a hidden creature takes its turn.",
    }
    top.pop("description", None)
    body = {**top, "$defs": dict(sorted(builder.defs.items()))}
    return _document(
        "snapshot.schema.json",
        "zonekeep snapshot",
        "The state of an encounter as one seat may see it (zonekeep.sdk.state_to_dict, "
        "filtered for players and spectators). Generated from the attrs class "
        "EncounterState by protocol/_generate.py; do not edit.",
        body,
    )


# -- Markdown tables -------------------------------------------------------------------------


def type_text(tp: Any) -> str:
    """A short, language-neutral name for a field's type, as used in SPEC.md."""
    if tp is Any:
        return "any"
    if tp is type(None):
        return "null"
    simple = {bool: "boolean", int: "integer", float: "number", str: "string", Size: "Size"}
    if tp in simple:
        return simple[tp]
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return " or ".join(json.dumps(a) for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join(type_text(a) for a in args)
    if origin in (list, tuple):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return "[" + ", ".join(type_text(a) for a in args) + "]"
        return f"array of {type_text(args[0])}"
    if origin is dict:
        return f"object of {type_text(args[1])}"
    if isinstance(tp, type) and attrs.has(tp):
        return tp.__name__
    raise TypeError(f"no name for {tp!r}")


def _field_text(cls: type) -> str:
    hints = _hints(cls)
    parts = []
    for f in _wire_fields(cls):
        text = f"`{f.name}`: {type_text(hints[f.name])}"
        default = _json_default(f)
        if default is not _NO_DEFAULT:
            text += f" = `{json.dumps(default)}`"
        parts.append(text)
    return "; ".join(parts) or "(none)"


def _nested_classes() -> list[type]:
    found: dict[str, type] = {}

    def visit(tp: Any) -> None:
        for arg in get_args(tp):
            visit(arg)
        if isinstance(tp, type) and attrs.has(tp) and tp.__name__ not in found:
            found[tp.__name__] = tp
            for hint in _hints(tp).values():
                visit(hint)

    for cls in [*EVENT_TYPES.values(), EncounterState]:
        for hint in _hints(cls).values():
            visit(hint)
    return [found[n] for n in sorted(found)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def events_table() -> str:
    lines = ["| type | fields | meaning |", "|---|---|---|"]
    for name, cls in sorted(EVENT_TYPES.items()):
        lines.append(
            f"| `{name}` | {_cell(_field_text(cls))} | {_cell(_first_line(cls.__doc__))} |"
        )
    lines.append(
        "| `hidden` | (none) | Stands in for an event a player or spectator may not see. |"
    )
    return "\n".join(lines)


def types_table() -> str:
    lines = ["| type | fields | meaning |", "|---|---|---|"]
    sizes = ", ".join(f'"{s.label}"' for s in Size)
    lines.append(f"| `Size` | one of {sizes} | A size category, by name. |")
    for cls in _nested_classes():
        fields = _cell(_field_text(cls))
        lines.append(f"| `{cls.__name__}` | {fields} | {_cell(_first_line(cls.__doc__))} |")
    return "\n".join(lines)


def commands_table() -> str:
    from zonekeep.sdk.engine import Engine

    engine = Engine()
    lines = ["| command | who | costs | phases | params | summary |", "|---|---|---|---|---|---|"]
    for cid, spec in engine.commands.items():
        params = "<br>".join(
            f"`{n}`{'' if p.required else '?'}: {p.type} — {p.description}"
            for n, p in spec.params.items()
        )
        lines.append(
            f"| `{cid}` | {spec.who} | {', '.join(spec.costs)} | {', '.join(spec.phases)} "
            f"| {_cell(params) or '(none)'} | {_cell(spec.summary)} |"
        )
    return "\n".join(lines)


TABLES: dict[str, Callable[[], str]] = {
    "events": events_table,
    "event types": types_table,
    "commands": commands_table,
}


def fill_spec(text: str) -> str:
    """``text`` (SPEC.md) with every generated block replaced by its fresh content."""
    for key, make in TABLES.items():
        begin, end = BEGIN.format(key), END.format(key)
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
        match = pattern.search(text)
        if match is None:
            raise ValueError(f"SPEC.md has no generated block for {key!r}")
        block = f"{begin}\n{make()}\n{end}"
        text = text[: match.start()] + block + text[match.end() :]
    return text


def generated_files(root: Path = HERE) -> dict[str, str]:
    """Relative path (under ``protocol/``) -> the text the generator writes there."""
    spec = (root / "SPEC.md").read_text(encoding="utf-8")
    return {
        "schemas/event_payload.schema.json": event_payload_schema(),
        "schemas/snapshot.schema.json": snapshot_schema(),
        "SPEC.md": fill_spec(spec),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Write the generated files (or, with ``--check``, report the stale ones)."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    stale = []
    for rel, text in generated_files().items():
        path = HERE / rel
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(rel)
        if not check:
            path.write_text(text, encoding="utf-8")
    for rel in stale:
        print(f"{'out of date' if check else 'wrote'}: protocol/{rel}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
