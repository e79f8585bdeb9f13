"""The published schemas accept what a client must ignore, the strict ones refuse it,
both from one model (issue 32, point 4), and every schema compiles in ajv's strict mode
(``protocol/tools/check_schemas.mjs``, run with Node.js)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from helpers import deadline, missing_component

from zonekeep.protocol import NOTIFICATIONS, SCHEMA_BASE, _generate, schema, schema_names

ROOT = Path(__file__).parents[1]
TOOLS = ROOT / "protocol" / "tools"


@cache
def validators(strict: bool) -> dict[str, jsonschema.Draft202012Validator]:
    base = SCHEMA_BASE + ("strict/" if strict else "")
    schemas = {n: schema(n, strict=strict) for n in schema_names(strict=strict)}
    registry: Any = referencing.Registry().with_resources(
        (base + n, referencing.Resource.from_contents(s)) for n, s in schemas.items()
    )
    return {
        n.removesuffix(".schema.json"): jsonschema.Draft202012Validator(s, registry=registry)
        for n, s in schemas.items()
    }


def problems(name: str, instance: Any, *, strict: bool) -> list[str]:
    return [e.message for e in validators(strict)[name].iter_errors(instance)]


EVENT: dict[str, Any] = {
    "method": "event",
    "params": {
        "encounter": "e1",
        "seq": 4,
        "event": {"type": "turn_ended", "creature": "aria"},
    },
}


def test_a_later_servers_unknown_field_is_accepted_by_the_published_schemas_only() -> None:
    later = copy.deepcopy(EVENT)
    later["params"]["event"]["flourish"] = "with style"  # a field of a later version
    later["params"]["mood"] = "calm"
    assert problems("event", EVENT, strict=False) == problems("event", EVENT, strict=True) == []
    assert problems("event", later, strict=False) == []
    assert problems("server_message", later, strict=False) == []
    assert problems("event", later, strict=True) != []


def test_unknown_event_types_and_notifications_pass_the_published_schemas_only() -> None:
    unknown_event = copy.deepcopy(EVENT)
    unknown_event["params"]["event"] = {"type": "weather_changed", "sky": "stormy"}
    unknown_note = {"method": "weather", "params": {"sky": "stormy"}}
    for message in (unknown_event, unknown_note):
        assert problems("server_message", message, strict=False) == []
        assert problems("server_message", message, strict=True) != []


def test_the_published_schemas_still_check_what_they_know() -> None:
    wrong = copy.deepcopy(EVENT)
    wrong["params"]["event"] = {"type": "turn_ended", "creature": 7}  # a known type, wrong
    assert problems("event", wrong, strict=False) != []
    missing = {"method": "event", "params": {"encounter": "e1", "seq": 4}}
    assert problems("server_message", missing, strict=False) != []
    # What a client sends stays closed: the server refuses unknown params.
    ping = {"extra": 1}
    assert problems("ping.params", ping, strict=False) != []


def test_both_sets_come_from_one_model() -> None:
    """The published schema is the strict one with ``additionalProperties: false`` left
    out (a client's messages: the same), and for two files one rule more."""
    files = _generate.all_schema_files()
    for name in _generate.schema_files():
        strict = json.loads(files[f"strict/{name}"])
        published = json.loads(files[name])
        for document in (strict, published):
            del document["$id"], document["$comment"]
        if name.endswith(".params.schema.json") or name == "request.schema.json":
            assert published == strict, name
            continue
        if name == "event_payload.schema.json":
            assert published["properties"]["type"] == {"type": "string", "minLength": 1}
            published["properties"]["type"] = strict["properties"]["type"]
        if name == "server_message.schema.json":
            later = published["oneOf"].pop()
            assert later["properties"]["method"]["not"]["enum"] == sorted(NOTIFICATIONS)
        assert published == _generate._opened(strict), name
        assert '"additionalProperties": false' not in json.dumps(published), name


def test_every_schema_compiles_in_ajvs_strict_mode() -> None:
    node = shutil.which("node")
    if node is None:
        missing_component("Node.js is not installed (CI installs it)")
    if not (TOOLS / "node_modules" / "ajv").is_dir():
        missing_component(f"{TOOLS}/node_modules is missing: run `npm ci` in {TOOLS}")
    done = subprocess.run(
        [node, str(TOOLS / "check_schemas.mjs")],
        capture_output=True,
        text=True,
        timeout=deadline(60),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ok: {2 * len(schema_names())} schemas compile" in done.stdout
