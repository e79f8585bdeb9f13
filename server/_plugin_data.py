"""What the server announces and applies of the plugins' asset tags and settings:
``hello``'s ``capabilities.asset_tags`` and ``capabilities.settings``,
``encounter_options``' settings and schema, and the operator's ``plugin_settings``
(checked against the plugins' schemas at start, merged into new encounters' options)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from zonekeep.protocol import AssetTagInfo, SettingInfo
from zonekeep.sdk import EncounterOptions
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import effective_settings

from ._config import ServerConfig


def plugin_settings_problems(config: ServerConfig, engine: Engine) -> list[str]:
    """Every problem of the operator's ``plugin_settings`` against the plugins'
    declarations, as ``"server.plugin_settings.<plugin>.<id>: sentence"``."""
    return engine.settings_problems(config.plugin_settings, "server.plugin_settings")


def server_settings(config: ServerConfig, engine: Engine) -> dict[str, dict[str, Any]]:
    """Every declared setting with this server's value: the operator's, else the default."""
    values = effective_settings(engine.settings, config.plugin_settings)
    return {plugin: values[plugin] for plugin in engine.settings}


def with_server_settings(
    options: EncounterOptions | None, config: ServerConfig
) -> EncounterOptions:
    """``options`` (the GM's) with the operator's ``plugin_settings`` under them: the
    GM's value of a setting wins over the server's (the engine adds the defaults)."""
    options = options or EncounterOptions()
    merged: dict[str, dict[str, Any]] = {k: dict(v) for k, v in config.plugin_settings.items()}
    for plugin, values in options.settings.items():
        if isinstance(values, Mapping) and isinstance(merged.get(plugin), dict):
            merged[plugin].update(values)
        else:
            merged[plugin] = values
    return attrs.evolve(options, settings=merged)


def asset_tag_infos(engine: Engine) -> list[AssetTagInfo]:
    """Every declared asset tag, in declaration order, with its plugin and data schema."""
    return [
        AssetTagInfo(
            id=tag,
            plugin=engine.asset_tag_owners.get(tag, ""),
            summary=spec.summary,
            data_schema=copy.deepcopy(dict(spec.data_schema))
            if spec.data_schema is not None
            else None,
        )
        for tag, spec in engine.asset_tags.items()
    ]


def setting_infos(config: ServerConfig, engine: Engine) -> list[SettingInfo]:
    """Every declared setting, by plugin then id, with this server's value."""
    values = server_settings(config, engine)
    return [
        SettingInfo(
            plugin=plugin,
            id=key,
            summary=spec.summary,
            schema=copy.deepcopy(dict(spec.schema)),
            default=copy.deepcopy(spec.default),
            value=copy.deepcopy(values[plugin][key]),
        )
        for plugin, specs in engine.settings.items()
        for key, spec in specs.items()
    ]


def settings_schema(config: ServerConfig, engine: Engine) -> dict[str, Any]:
    """The JSON Schema of ``options.settings`` on this server: an object per plugin
    that declares settings, each setting's schema with this server's value as its
    ``default`` and its summary as its ``description``; nothing else is accepted."""
    values = server_settings(config, engine)
    plugins: dict[str, Any] = {}
    for plugin, specs in engine.settings.items():
        properties = {}
        for key, spec in specs.items():
            prop = copy.deepcopy(dict(spec.schema))
            prop["default"] = copy.deepcopy(values[plugin][key])
            prop.setdefault("description", spec.summary)
            properties[key] = prop
        plugins[plugin] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
    return {
        "type": "object",
        "description": "The plugins' settings, by plugin name then setting id.",
        "properties": plugins,
        "additionalProperties": False,
    }
