"""``protocol/asyncapi.yaml``: the protocol as an AsyncAPI 3.0 document, generated from
the message classes (through the published JSON Schemas, ``_generate.all_schema_files``)
by ``python -m zonekeep.protocol._generate``.

One channel (the websocket, ``/ws``); an operation per request method (the client
sends it, the reply is its result or an error) and per notification (the client
receives it). The payload schemas are the published ones, each a component, their
``$defs`` components of their own (``<file>.<Def>``), in the AsyncAPI Schema format
(JSON Schema draft 07): ``prefixItems`` becomes a list of ``items``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import _messages as m

#: The components' prefix for references.
_SCHEMAS = "#/components/schemas/"


def _rewrite(node: Any, stem: str) -> Any:
    """``node`` (a piece of schema file ``stem``) with its references pointed at the
    components, ``$defs`` left out (they become components) and draft 2020-12's
    ``prefixItems`` written as draft 07's ``items`` list."""
    if isinstance(node, list):
        return [_rewrite(v, stem) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$defs", "$schema", "$id", "$comment"):
            continue
        if key == "$ref" and isinstance(value, str):
            out[key] = _target(value, stem)
        elif key == "prefixItems":
            out["items"] = _rewrite(value, stem)
            if node.get("items") is False or "items" not in node:
                out["additionalItems"] = False
        elif key == "items" and "prefixItems" in node:
            continue
        else:
            out[key] = _rewrite(value, stem)
    return out


def _target(ref: str, stem: str) -> str:
    """A schema file's reference as a reference to the components."""
    file, _, pointer = ref.partition("#")
    owner = file.removesuffix(".schema.json") if file else stem
    if not pointer:
        return _SCHEMAS + owner
    found = re.fullmatch(r"/\$defs/(.+)", pointer)
    if found is None:
        raise ValueError(f"{stem}: cannot point {ref!r} at a component")
    return f"{_SCHEMAS}{owner}.{found.group(1)}"


def components(files: dict[str, str]) -> dict[str, Any]:
    """The published schema files (name -> text) as AsyncAPI schema components."""
    found: dict[str, Any] = {}
    for name, text in sorted(files.items()):
        if "/" in name:  # the strict ones
            continue
        stem = name.removesuffix(".schema.json")
        schema = json.loads(text)
        for def_name, definition in schema.get("$defs", {}).items():
            found[f"{stem}.{def_name}"] = _rewrite(definition, stem)
        found[stem] = _rewrite(schema, stem)
    return found


def _request_id() -> dict[str, Any]:
    return {"description": "Chosen by the client; echoed in the reply.", **m._REQUEST_ID_SCHEMA}


def document(files: dict[str, str]) -> dict[str, Any]:
    """The AsyncAPI 3.0 document."""
    channel = {"$ref": "#/channels/table"}
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for method, (params, result) in m.METHODS.items():
        messages[f"{method}.request"] = {
            "name": method,
            "title": f"{method} request",
            "summary": _first_line(params.__doc__),
            "payload": {
                "type": "object",
                "required": ["id", "method"],
                "properties": {
                    "id": _request_id(),
                    "method": {"const": method},
                    "params": {"$ref": f"{_SCHEMAS}{method}.params"},
                },
            },
        }
        messages[f"{method}.result"] = {
            "name": f"{method}.result",
            "title": f"{method} result",
            "summary": _first_line(result.__doc__),
            "payload": {
                "type": "object",
                "required": ["id", "result"],
                "properties": {
                    "id": _request_id(),
                    "result": {"$ref": f"{_SCHEMAS}{method}.result"},
                },
            },
        }
        operations[method] = {
            "action": "send",
            "channel": channel,
            "summary": _first_line(params.__doc__),
            "messages": [{"$ref": f"#/channels/table/messages/{method}.request"}],
            "reply": {
                "channel": channel,
                "messages": [
                    {"$ref": f"#/channels/table/messages/{method}.result"},
                    {"$ref": "#/channels/table/messages/error"},
                ],
            },
        }
    messages["error"] = {
        "name": "error",
        "title": "error reply",
        "summary": _first_line(m.ErrorResponse.__doc__),
        "payload": {"$ref": f"{_SCHEMAS}error"},
    }
    for method, cls in m.NOTIFICATIONS.items():
        stem = "snapshot.notification" if method == "snapshot" else method
        messages[f"{method}.notification"] = {
            "name": method,
            "title": f"{method} notification",
            "summary": _first_line(cls.__doc__),
            "payload": {"$ref": f"{_SCHEMAS}{stem}"},
        }
        operations[f"on_{method}"] = {
            "action": "receive",
            "channel": channel,
            "summary": _first_line(cls.__doc__),
            "messages": [{"$ref": f"#/channels/table/messages/{method}.notification"}],
        }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "zonekeep wire protocol",
            "version": m.PROTOCOL_VERSION,
            "description": (
                "JSON messages over one websocket (`/ws`) between a zonekeep server and its "
                "clients: requests with an `id` and their replies, and notifications. "
                "protocol/SPEC.md is the whole contract; this document is generated from the "
                "same message classes (python -m zonekeep.protocol._generate); do not edit."
            ),
            "license": {"name": "MIT"},
        },
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": "localhost:8765",
                "protocol": "ws",
                "pathname": "/ws",
                "description": "`zonekeep serve` on its default port (behind a proxy: wss).",
            }
        },
        "channels": {
            "table": {
                "address": "/ws",
                "title": "The websocket",
                "description": "Every message of the protocol, both ways, as JSON text frames.",
                "messages": {name: {"$ref": f"#/components/messages/{name}"} for name in messages},
            }
        },
        "operations": operations,
        "components": {"messages": messages, "schemas": components(files)},
    }


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def to_yaml(value: Any, indent: int = 0) -> str:
    """``value`` (JSON data) as block YAML; every string quoted as JSON (valid YAML)."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        lines = []
        for key, item in value.items():
            head = f"{pad}{json.dumps(key)}:"
            if isinstance(item, dict | list) and item:
                lines.append(f"{head}\n{to_yaml(item, indent + 1)}")
            else:
                lines.append(f"{head} {to_yaml(item, indent + 1)}")
        return "\n".join(lines)
    if isinstance(value, list):
        if not value:
            return "[]"
        lines = []
        for item in value:
            if isinstance(item, dict | list) and item:
                inner = to_yaml(item, indent + 1).lstrip()
                lines.append(f"{pad}- {inner}")
            else:
                lines.append(f"{pad}- {to_yaml(item, indent + 1)}")
        return "\n".join(lines)
    return json.dumps(value, ensure_ascii=False)


def asyncapi_text(files: dict[str, str]) -> str:
    """The text of ``protocol/asyncapi.yaml``."""
    head = "# Generated by `python -m zonekeep.protocol._generate` from the message classes; do not edit.\n"
    return head + to_yaml(document(files)) + "\n"
