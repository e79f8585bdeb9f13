"""What a third-party plugin declares about itself, and the SDK version it is checked against.

A plugin module (or the object its entry point names) declares one module-level
:class:`PluginInfo` called ``ZONEKEEP_PLUGIN``::

    from zonekeep.sdk import PluginInfo, hookimpl

    ZONEKEEP_PLUGIN = PluginInfo(
        name="shout",
        version="1.0.0",
        sdk=">=0.1,<0.2",
        description="A bonus action to shout.",
    )

The server refuses to start with a plugin whose ``sdk`` range does not include
:data:`SDK_VERSION`. Ranges are comma-separated comparisons (``>=``, ``>``,
``<=``, ``<``, ``==``, ``!=``) against dotted whole-number versions; missing
trailing parts count as zero, so ``<0.2`` is ``<0.2.0``.
"""

from __future__ import annotations

import re

import attrs

#: The version of the plugin SDK (``zonekeep.sdk``) this zonekeep provides.
SDK_VERSION = "0.1.0"

_OPERATORS = ("==", "!=", ">=", "<=", ">", "<")
_VERSION = re.compile(r"\d+(\.\d+)*")


class VersionRangeError(ValueError):
    """A version or a version range that cannot be read."""


def parse_version(text: str) -> tuple[int, ...]:
    """``"0.1.2"`` -> ``(0, 1, 2)``; :class:`VersionRangeError` if it is not dotted whole numbers."""
    cleaned = text.strip()
    if not _VERSION.fullmatch(cleaned):
        raise VersionRangeError(
            f"{text!r} is not a version: use dotted whole numbers such as '0.1' or '1.2.3'"
        )
    return tuple(int(part) for part in cleaned.split("."))


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def parse_range(spec: str) -> list[tuple[str, tuple[int, ...]]]:
    """Read a range such as ``">=0.1,<0.2"`` into ``[(operator, version), ...]``.

    Raises :class:`VersionRangeError` naming the part that cannot be read.
    """
    if not spec.strip():
        raise VersionRangeError("the version range is empty; write one such as '>=0.1,<0.2'")
    clauses = []
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            raise VersionRangeError(f"the version range {spec!r} has an empty part")
        op = next((o for o in _OPERATORS if part.startswith(o)), None)
        if op is None:
            raise VersionRangeError(
                f"{part!r} in the version range {spec!r} does not start with one of "
                f"{', '.join(_OPERATORS)}"
            )
        try:
            version = parse_version(part[len(op) :])
        except VersionRangeError as exc:
            raise VersionRangeError(f"{part!r} in the version range {spec!r}: {exc}") from None
        clauses.append((op, version))
    return clauses


def version_in_range(version: str, spec: str) -> bool:
    """Whether ``version`` satisfies every comparison in ``spec``.

    Raises :class:`VersionRangeError` when either cannot be read.
    """
    have = parse_version(version)
    for op, bound in parse_range(spec):
        a, b = _padded(have, bound)
        ok = {
            "==": a == b,
            "!=": a != b,
            ">=": a >= b,
            "<=": a <= b,
            ">": a > b,
            "<": a < b,
        }[op]
        if not ok:
            return False
    return True


@attrs.frozen
class PluginInfo:
    """A plugin's declaration of itself: the module-level ``ZONEKEEP_PLUGIN``.

    ``name`` must be the plugin's entry point name; ``sdk`` is the range of SDK
    versions it works with, such as ``">=0.1,<0.2"``.
    """

    name: str
    version: str
    sdk: str
    description: str = ""

    def id(self, name: str) -> str:
        """``name`` in this plugin's namespace: ``ZONEKEEP_PLUGIN.id("burning")`` is
        ``"hazards.burning"`` for plugin ``hazards``. Every id the plugin declares (its
        commands, conditions, asset tags, event types) is put there by the engine; use
        this to name them in the plugin's own code."""
        return name if name.startswith(self.name + ".") else f"{self.name}.{name}"

    def supports(self, sdk_version: str = SDK_VERSION) -> bool:
        """Whether this plugin's ``sdk`` range includes ``sdk_version``.

        Raises :class:`VersionRangeError` when the range cannot be read.
        """
        return version_in_range(sdk_version, self.sdk)


__all__ = [
    "SDK_VERSION",
    "PluginInfo",
    "VersionRangeError",
    "parse_range",
    "parse_version",
    "version_in_range",
]
