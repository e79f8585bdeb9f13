"""Per-plugin settings: what a plugin lets the operator and the GM choose.

A plugin declares its settings with the ``zonekeep_settings`` hook, each a
:class:`SettingSpec` with a JSON Schema (the subset of :mod:`._schema`) and a
default. Settings are keyed by the plugin's name, then the setting's id::

    {"hazards": {"burn_die": "1d6"}}

The effective value of a setting in an encounter is the GM's (the encounter's
``options.settings``) over the operator's (the server's ``plugin_settings``) over the
plugin's default. The server writes the effective value of every declared setting
into a new encounter's options (:func:`effective_settings`), so the encounter keeps
them through a restart, a replay and an export, whatever the server's configuration
says later. Rules read them with :meth:`RuleContext.setting
<zonekeep.sdk.RuleContext.setting>`.
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, cast

import attrs

from ._schema import check_schema, schema_problems

__all__ = [
    "SettingSpec",
    "SettingsError",
    "declared_settings",
    "effective_settings",
    "settings_problems",
]

_SETTING_ID: Final = re.compile(r"[a-z][a-z0-9_]*")


@attrs.frozen
class SettingSpec:
    """A setting a plugin declares (``zonekeep_settings``).

    ``id`` is a lower-case snake_case word, unique in its plugin (``"burn_die"``);
    ``summary`` says what it changes, for a person (a form shows it); ``schema`` is a
    JSON Schema of its value in the subset docs/plugins.md lists (``{"type": "string",
    "format": "dice"}``); ``default`` is its value unless the operator or the GM sets
    one, and must satisfy ``schema``.
    """

    id: str
    summary: str
    schema: Mapping[str, Any] = attrs.field(hash=False)
    default: Any = attrs.field(hash=False)


class SettingsError(ValueError):
    """A plugin's settings cannot be used (a bad id, schema or default): the engine
    does not start. The message names the plugin."""


def declared_settings(
    pm: Any, describe: Callable[[str], str] = repr
) -> dict[str, dict[str, SettingSpec]]:
    """Every setting the plugins of ``pm`` declare, by plugin name then id (plugins
    without settings are left out). Calls each ``zonekeep_settings`` once.

    Raises :class:`SettingsError` naming the plugin for an id that is not a snake_case
    word or is declared twice by it, a schema :func:`~zonekeep.sdk._schema.check_schema`
    refuses, or a default the schema refuses.
    """
    found: dict[str, dict[str, SettingSpec]] = {}
    for impl in pm.hook.zonekeep_settings.get_hookimpls():
        who = f"plugin {describe(impl.plugin_name)}"
        specs = cast("Iterable[SettingSpec] | None", impl.function())
        # A plugin may implement the hook more than once (a package whose modules
        # each declare their own settings): its settings are the union.
        mine: dict[str, SettingSpec] = found.get(impl.plugin_name, {})
        for spec in specs or ():
            if not isinstance(spec, SettingSpec):
                raise SettingsError(f"{who} declared a setting that is not a SettingSpec: {spec!r}")
            if not isinstance(spec.id, str) or not _SETTING_ID.fullmatch(spec.id):
                raise SettingsError(
                    f"{who} declared the setting {spec.id!r}: an id must be a lower-case "
                    "snake_case word"
                )
            if spec.id in mine:
                raise SettingsError(f"{who} declared the setting {spec.id!r} twice")
            try:
                check_schema(spec.schema, f"the schema of setting {spec.id!r}")
            except ValueError as exc:
                raise SettingsError(f"{who}: {exc}") from None
            bad = schema_problems(spec.default, spec.schema, spec.id)
            if bad:
                where, message = bad[0]
                raise SettingsError(f"{who}: the default of setting {where}: {message}")
            mine[spec.id] = spec
        if mine:
            found[impl.plugin_name] = mine
    return found


def settings_problems(
    given: object, declared: Mapping[str, Mapping[str, SettingSpec]], path: str = "settings"
) -> list[tuple[str, str]]:
    """Every problem of ``given`` as plugin settings (``{plugin: {id: value}}``), as
    ``(path, sentence)``: a plugin that declares no settings, an unknown setting (with
    the closest id), and each value its schema refuses, at
    ``<path>.<plugin>.<id>...``."""
    if not isinstance(given, Mapping):
        return [(path, "expected an object of plugin names, each an object of settings")]
    problems: list[tuple[str, str]] = []
    for plugin, values in given.items():
        where = f"{path}.{plugin}"
        specs = declared.get(plugin) if isinstance(plugin, str) else None
        if specs is None:
            names = ", ".join(sorted(declared)) or "none"
            problems.append((where, f"no plugin called {plugin!r} declares settings ({names} do)"))
            continue
        if not isinstance(values, Mapping):
            problems.append((where, "expected an object of settings"))
            continue
        for key, value in values.items():
            spec = specs.get(key) if isinstance(key, str) else None
            if spec is None:
                hint = difflib.get_close_matches(str(key), list(specs), n=1)
                known = ", ".join(specs)
                suffix = f" (did you mean {hint[0]!r}?)" if hint else f" (it has: {known})"
                problems.append((f"{where}.{key}", f"unknown setting{suffix}"))
                continue
            problems.extend(schema_problems(value, spec.schema, f"{where}.{key}"))
    return problems


def effective_settings(
    declared: Mapping[str, Mapping[str, SettingSpec]], *layers: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Every declared setting's value: its default, then each of ``layers`` (checked
    ones, ``{plugin: {id: value}}``: the server's, then the encounter's) over the one
    before. Values of a plugin or setting not declared (an encounter made on a server
    with another plugin) are kept as they were."""
    result: dict[str, dict[str, Any]] = {  # copies: no encounter shares a default's list
        plugin: {key: copy.deepcopy(spec.default) for key, spec in specs.items()}
        for plugin, specs in declared.items()
    }
    for layer in layers:
        for plugin, values in layer.items():
            if isinstance(values, Mapping):
                result.setdefault(plugin, {}).update(values)
    return result
