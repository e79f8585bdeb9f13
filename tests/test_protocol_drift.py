"""SPEC.md against what the server really sends: the snapshot table against the schema's
required keys, and the prompt example against a real opportunity-attack decision."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from arena_fixture import harness
from helpers import make

from zonekeep.protocol import validate_server_message
from zonekeep.sdk import Attack

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
SPEC = (ROOT / "protocol" / "SPEC.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    return SPEC.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def table_keys(text: str) -> list[str]:
    return re.findall(r"^\| `([a-z_]+)` \|", text, re.MULTILINE)


def test_the_snapshot_table_has_every_key_the_schema_requires() -> None:
    schema = json.loads((ROOT / "protocol" / "schemas" / "snapshot.schema.json").read_text())
    listed = table_keys(section("## Snapshot"))
    missing = [key for key in schema["required"] if key not in listed]
    assert missing == [], f"SPEC.md's Snapshot table lacks {missing}"
    assert sorted(listed) == sorted(schema["properties"])


def prompt_example() -> dict[str, Any]:
    text = section("### Notification: `prompt`")
    block = text.split("**Example**", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    example: dict[str, Any] = json.loads(block)
    return example


def test_the_prompt_example_is_valid() -> None:
    validate_server_message(prompt_example())


def test_the_prompt_example_is_what_the_engine_offers() -> None:
    """Goblin, engaged with Ana's Aria, leaves the Hall: Aria is offered an attack."""
    goblin = attrs.evolve(make("gob", "foes"), name="Goblin")
    rapier = [Attack("rapier", "melee", 5, "1d8+3", "piercing")]
    aria = make("aria", controller="ana", attacks=rapier)
    h = harness([aria, goblin], {"aria": "hall", "gob": "hall"}, [10, 20])
    assert h.state.active == "gob"
    h.state.engagements.append(("aria", "gob"))
    h.send("enter", creature="gob", zones=["yard"])
    [offer] = h.state.pending
    shown = prompt_example()["params"]["decision"]
    real = {
        "kind": offer.kind,
        "controller": offer.controller,
        "prompt": offer.prompt,
        "options": list(offer.options),
        "default": list(offer.default),
        "creature": offer.creature,
        "ordering": offer.ordering,
    }
    assert {key: shown[key] for key in real} == real
