"""What the protocol package promises about itself (protocol/__init__.py): the message
model does no I/O and loads no transport; the client is the module that does; the
schema check's one optional dependency is a declared extra."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import helpers

_LOADED = """
import json, sys
import {module}
print(json.dumps(sorted(m for m in ("trio", "websockets", "jsonschema") if m in sys.modules)))
"""


def _loaded_by(module: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _LOADED.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
        timeout=helpers.deadline(60),
    )
    loaded: list[str] = json.loads(out.stdout)
    return loaded


def test_the_message_model_loads_no_transport_and_no_jsonschema() -> None:
    assert _loaded_by("zonekeep.protocol") == []


def test_the_client_is_the_module_with_the_transport() -> None:
    assert _loaded_by("zonekeep.protocol.client") == ["trio", "websockets"]


def test_jsonschema_is_the_validate_extra() -> None:
    meta = importlib.metadata.metadata("zonekeep")
    assert "validate" in meta.get_all("Provides-Extra", [])
    wanted = [r for r in meta.get_all("Requires-Dist", []) if r.startswith("jsonschema")]
    assert any('extra == "validate"' in r for r in wanted), wanted
    assert not any("extra" not in r for r in wanted)  # never a dependency of every install
