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

from ._names import qualify

#: The ways a condition can last (``ConditionSpec.durations``; the arguments of
#: :func:`zonekeep.sdk.apply_timed_condition`): a number of rounds, until the start or
#: the end of a named creature's turn, until a save succeeds, until removed.
CONDITION_DURATIONS: tuple[str, ...] = ("rounds", "turn_start", "turn_end", "save", "until_removed")


def _durations(value: object) -> tuple[str, ...]:
    kinds = tuple(value) if isinstance(value, list | tuple) else ()
    unknown = [k for k in kinds if k not in CONDITION_DURATIONS]
    if not isinstance(value, list | tuple) or unknown:
        raise ValueError(
            f"a condition's durations are some of {', '.join(CONDITION_DURATIONS)}, not {value!r}"
        )
    return kinds


@attrs.frozen
class ConditionSpec:
    """A condition a plugin gives meaning to: its ``id`` (the name on a creature,
    such as ``"restrained"``), a one-line ``summary`` of what it does, and, for
    clients that show a picker, a readable ``name`` (default: the id in words,
    capitalised: ``"Burning"``), a longer ``description`` (default: the summary) and
    the ``durations`` it supports (some of :data:`CONDITION_DURATIONS`; default all).
    ``ConditionSpec(id, summary)`` is all a plugin needs to write."""

    id: str
    summary: str
    name: str = ""
    description: str = ""
    durations: tuple[str, ...] = attrs.field(default=CONDITION_DURATIONS, converter=_durations)

    @property
    def title(self) -> str:
        """The readable name: ``name``, or the id in words (``"Hazards.burning"`` ->
        the part after the last dot: ``"Burning"``)."""
        if self.name.strip():
            return self.name.strip()
        word = self.id.rsplit(".", 1)[-1].replace("_", " ").replace("-", " ")
        return word[:1].upper() + word[1:]

    @property
    def details(self) -> str:
        """The longer description: ``description``, or the summary."""
        return self.description.strip() or self.summary


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


def _no_namespace(_plugin: str) -> str | None:
    return None


def declared_conditions(
    pm: Any,
    describe: Callable[[str], str] = _plain_name,
    namespace: Callable[[str], str | None] = _no_namespace,
    owners: dict[str, str] | None = None,
) -> dict[str, ConditionSpec]:
    """Every condition the plugins of ``pm`` (a pluggy plugin manager) declare, by full id.

    Calls each ``zonekeep_conditions`` implementation once. ``describe`` turns a
    plugin's registered name into how an error names it (its quoted name by default);
    ``namespace`` gives a plugin's namespace (``None``: none), which each id it
    declares is put in (``"burning"`` of plugin ``hazards`` is ``"hazards.burning"``;
    the spec's ``id`` is the full id).

    Raises :class:`ConditionConflict` naming both plugins when a full id is declared
    by two of them (or twice by one), and ``ValueError`` for an empty id or one in
    another plugin's namespace. ``owners``, when given, receives the registered name
    of the plugin declaring each full id (for announcing it).
    """
    return _declared(
        pm,
        "zonekeep_conditions",
        "condition",
        ConditionSpec,
        ConditionConflict,
        describe,
        namespace,
        owners,
    )


def declared_asset_tags(
    pm: Any,
    describe: Callable[[str], str] = _plain_name,
    namespace: Callable[[str], str | None] = _no_namespace,
    owners: dict[str, str] | None = None,
) -> dict[str, AssetTagSpec]:
    """Every asset tag the plugins of ``pm`` declare (``zonekeep_asset_tags``), by full
    id (namespaced as :func:`declared_conditions` does).

    Raises :class:`AssetTagConflict` naming both plugins when two declare one tag.
    """
    return _declared(
        pm,
        "zonekeep_asset_tags",
        "asset tag",
        AssetTagSpec,
        AssetTagConflict,
        describe,
        namespace,
        owners,
    )


_Spec = TypeVar("_Spec", ConditionSpec, AssetTagSpec)


def _declared(
    pm: Any,
    hook: str,
    label: str,
    kind: type[_Spec],
    conflict: type[ValueError],
    describe: Callable[[str], str],
    namespace: Callable[[str], str | None] = _no_namespace,
    owners: dict[str, str] | None = None,
) -> dict[str, _Spec]:
    found: dict[str, _Spec] = {}
    if owners is None:
        owners = {}
    for impl in getattr(pm.hook, hook).get_hookimpls():
        specs = cast("Iterable[_Spec] | None", impl.function())
        for spec in specs or ():
            if not isinstance(spec, kind) or not spec.id.strip():
                raise ValueError(
                    f"plugin {describe(impl.plugin_name)} declared a {label} without an id: "
                    f"{spec!r}"
                )
            try:
                full = qualify(namespace(impl.plugin_name), spec.id)
            except ValueError as exc:
                raise ValueError(f"plugin {describe(impl.plugin_name)}: {exc}") from None
            if full != spec.id:
                spec = attrs.evolve(spec, id=full)
            if spec.id in found:
                raise conflict(
                    f"{label} {spec.id!r} is declared by both plugin "
                    f"{describe(owners[spec.id])} and plugin {describe(impl.plugin_name)}"
                )
            found[spec.id] = spec
            owners[spec.id] = impl.plugin_name
    return found


__all__ = [
    "CONDITION_DURATIONS",
    "AssetTagConflict",
    "AssetTagSpec",
    "ConditionConflict",
    "ConditionSpec",
    "declared_asset_tags",
    "declared_conditions",
]
