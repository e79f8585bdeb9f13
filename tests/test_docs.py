"""The hook reference in docs/plugins.md matches the hookspecs exactly."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from zonekeep.sdk import _hookspecs

pytestmark = pytest.mark.docs

DOC = Path(__file__).parent.parent / "docs" / "plugins.md"


def hookspecs() -> dict[str, str]:
    found = {}
    for name, fn in inspect.getmembers(_hookspecs, inspect.isfunction):
        if name.startswith("zonekeep_"):
            sig = str(inspect.signature(fn)).replace("'", "")
            found[name] = f"def {name}{sig}"
    return found


def documented() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    result = {}
    for section in sections:
        name = section.splitlines()[0].strip()
        m = re.search(r"```python\n(def [^\n]+)\n```", section)
        result[name] = m.group(1) if m else ""
    return result


def test_every_hook_has_a_section_and_every_section_a_hook() -> None:
    assert set(documented()) == set(hookspecs())


def test_every_documented_signature_is_exact() -> None:
    docs = documented()
    for name, signature in hookspecs().items():
        assert docs[name] == signature, f"docs/plugins.md is out of date for {name}"


def test_first_result_hooks_say_so_in_the_docs() -> None:
    text = DOC.read_text(encoding="utf-8")
    sections = {s.splitlines()[0].strip(): s for s in re.split(r"^## ", text, flags=re.M)[1:]}
    for name, fn in inspect.getmembers(_hookspecs, inspect.isfunction):
        if name.startswith("zonekeep_"):
            first = vars(fn)["zonekeep_spec"]["firstresult"]
            assert ("*First result.*" in sections[name]) == first, name
