"""Declared conditions: the condition ids plugins give a meaning to, and their conflicts.

A plugin declares the conditions whose effects it implements with the
``zonekeep_conditions`` hook. Two plugins declaring the same id would each apply
their own meaning to one name, so :func:`declared_conditions` refuses that,
naming both plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

import attrs


@attrs.frozen
class ConditionSpec:
    """A condition a plugin gives meaning to: its ``id`` (the name on a creature,
    such as ``"restrained"``) and a one-line ``summary`` of what it does."""

    id: str
    summary: str


class ConditionConflict(ValueError):
    """Two plugins declared the same condition id (the message names both)."""


def _plain_name(name: str) -> str:
    return repr(name)


def declared_conditions(
    pm: Any, describe: Callable[[str], str] = _plain_name
) -> dict[str, ConditionSpec]:
    """Every condition the plugins of ``pm`` (a pluggy plugin manager) declare, by id.

    Calls each ``zonekeep_conditions`` implementation once. ``describe`` turns a
    plugin's registered name into how an error names it (its quoted name by default).

    Raises :class:`ConditionConflict` naming both plugins when an id is declared by
    two of them (or twice by one), and ``ValueError`` for an empty id.
    """
    found: dict[str, ConditionSpec] = {}
    owners: dict[str, str] = {}
    for impl in pm.hook.zonekeep_conditions.get_hookimpls():
        specs = cast("Iterable[ConditionSpec] | None", impl.function())
        for spec in specs or ():
            if not isinstance(spec, ConditionSpec) or not spec.id.strip():
                raise ValueError(
                    f"plugin {describe(impl.plugin_name)} declared a condition without an id: "
                    f"{spec!r}"
                )
            if spec.id in found:
                raise ConditionConflict(
                    f"condition {spec.id!r} is declared by both plugin "
                    f"{describe(owners[spec.id])} and plugin {describe(impl.plugin_name)}"
                )
            found[spec.id] = spec
            owners[spec.id] = impl.plugin_name
    return found


__all__ = ["ConditionConflict", "ConditionSpec", "declared_conditions"]
