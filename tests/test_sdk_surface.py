"""The SDK's public surface: ``zonekeep.sdk`` for plugin authors, ``zonekeep.sdk.host`` for
hosts, every name of both listed in docs/writing-plugins.md (section 15), so that a name
is never exported, nor dropped, without the docs saying so (issue 28)."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

import zonekeep.sdk as sdk
import zonekeep.sdk.host as host

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "writing-plugins.md"
SECTION = "## 15. Every name of the SDK"
HOSTS = "### For hosts: `zonekeep.sdk.host`"


def listed(start: str, end: str | None) -> list[str]:
    """The names in the bullets of the part of the walkthrough from ``start`` to ``end``."""
    text = DOC.read_text(encoding="utf-8")
    assert start in text, f"docs/writing-plugins.md lost its heading {start!r}"
    part = text[text.index(start) :]
    if end is not None:
        part = part[: part.index(end)]
    names: list[str] = []
    bullet = ""
    for line in [*part.splitlines(), ""]:
        if line.startswith("- ") or not line.startswith("  "):
            names += re.findall(r"`([A-Za-z_]\w*)`", bullet.partition(": ")[2])
            bullet = line if line.startswith("- ") else ""
        else:
            bullet += " " + line.strip()
    return names


@pytest.mark.docs
@pytest.mark.parametrize(
    ("module", "start", "end"), [(sdk, SECTION, HOSTS), (host, HOSTS, None)], ids=["sdk", "host"]
)
def test_every_exported_name_is_documented_and_every_documented_name_exported(
    module: ModuleType, start: str, end: str | None
) -> None:
    documented = listed(start, end)
    exported = list(module.__all__)
    assert len(set(exported)) == len(exported), "a name is exported twice"
    assert len(set(documented)) == len(documented), "a name is documented twice"
    undocumented = sorted(set(exported) - set(documented))
    assert not undocumented, f"exported by {module.__name__}, not in {DOC.name}: {undocumented}"
    stale = sorted(set(documented) - set(exported))
    assert not stale, f"in {DOC.name}, not exported by {module.__name__}: {stale}"
    for name in exported:
        assert hasattr(module, name), name


def test_a_name_is_either_for_plugins_or_for_hosts() -> None:
    assert not set(sdk.__all__) & set(host.__all__)
    assert not [n for n in sdk.__all__ if n.startswith("_")]


def test_plugins_use_the_sdk_not_the_host_module() -> None:
    """The built-in rules and the example plugins are written as any plugin is: nothing
    from ``zonekeep.sdk.host`` (their tests, hosts themselves, may)."""
    sources = [*(ROOT / "plugins").glob("*.py")]
    for package in (ROOT / "examples" / "plugins").glob("*/zonekeep_*"):
        sources += package.rglob("*.py")
    assert len(sources) > 10
    for path in sources:
        assert "zonekeep.sdk.host" not in path.read_text(encoding="utf-8"), path
