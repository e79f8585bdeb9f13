"""Declared conditions: the condition ids plugins give a meaning to, and their conflicts.

A plugin declares the conditions whose effects it implements with the
``zonekeep_conditions`` hook. Two plugins declaring the same id would each apply
their own meaning to one name, so :func:`declared_conditions` refuses that,
naming both plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

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


@attrs.frozen
class AssetTagSpec:
    """An asset tag a plugin gives behaviour to (``"collapsing_floor"``), with a
    one-line ``summary`` of what an asset with that tag does.

    ``data_schema``, when given, is a JSON Schema of the fields an asset with this tag
    takes in its ``data`` (docs/arenas.md, "Asset data"): an object schema with
    ``properties`` (and ``required``), in the subset docs/plugins.md lists. The arena
    loader checks an asset's ``data`` against it and reports each problem at its path
    (``assets[2].data.dc``); the plugin's hooks read ``asset.data``. ``None``: the tag
    takes no data.
    """

    id: str
    summary: str
    data_schema: Mapping[str, Any] | None = attrs.field(default=None, hash=False)


class AssetTagConflict(ValueError):
    """Two plugins declared the same asset tag (the message names both)."""


def declared_conditions(
    pm: Any, describe: Callable[[str], str] = _plain_name
) -> dict[str, ConditionSpec]:
    """Every condition the plugins of ``pm`` (a pluggy plugin manager) declare, by id.

    Calls each ``zonekeep_conditions`` implementation once. ``describe`` turns a
    plugin's registered name into how an error names it (its quoted name by default).

    Raises :class:`ConditionConflict` naming both plugins when an id is declared by
    two of them (or twice by one), and ``ValueError`` for an empty id.
    """
    return _declared(
        pm, "zonekeep_conditions", "condition", ConditionSpec, ConditionConflict, describe
    )


def declared_asset_tags(
    pm: Any, describe: Callable[[str], str] = _plain_name
) -> dict[str, AssetTagSpec]:
    """Every asset tag the plugins of ``pm`` declare (``zonekeep_asset_tags``), by id.

    Raises :class:`AssetTagConflict` naming both plugins when two declare one tag.
    """
    return _declared(
        pm, "zonekeep_asset_tags", "asset tag", AssetTagSpec, AssetTagConflict, describe
    )


_Spec = TypeVar("_Spec", ConditionSpec, AssetTagSpec)


def _declared(
    pm: Any,
    hook: str,
    label: str,
    kind: type[_Spec],
    conflict: type[ValueError],
    describe: Callable[[str], str],
) -> dict[str, _Spec]:
    found: dict[str, _Spec] = {}
    owners: dict[str, str] = {}
    for impl in getattr(pm.hook, hook).get_hookimpls():
        specs = cast("Iterable[_Spec] | None", impl.function())
        for spec in specs or ():
            if not isinstance(spec, kind) or not spec.id.strip():
                raise ValueError(
                    f"plugin {describe(impl.plugin_name)} declared a {label} without an id: "
                    f"{spec!r}"
                )
            if spec.id in found:
                raise conflict(
                    f"{label} {spec.id!r} is declared by both plugin "
                    f"{describe(owners[spec.id])} and plugin {describe(impl.plugin_name)}"
                )
            found[spec.id] = spec
            owners[spec.id] = impl.plugin_name
    return found


__all__ = [
    "AssetTagConflict",
    "AssetTagSpec",
    "ConditionConflict",
    "ConditionSpec",
    "declared_asset_tags",
    "declared_conditions",
]
