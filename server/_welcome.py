"""The result of ``hello``: the protocol, the server, its capabilities and limits,
built as the protocol's :class:`~zonekeep.protocol.HelloResult` and kept serialized."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

import zonekeep.sdk.host as host
from zonekeep.protocol import (
    PROTOCOL_VERSION,
    Capabilities,
    CommandInfo,
    ConditionInfo,
    FeatureSpecInfo,
    HelloResult,
    PluginEventInfo,
    PluginStateInfo,
    ServerInfo,
)
from zonekeep.sdk import EncounterOptions
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import converter

from ._config import VERSION, ServerConfig
from ._plugin_data import asset_tag_infos, server_settings, setting_infos
from ._wire import encode_message


class Welcome:
    """The ``hello`` result of one server, serialized once and kept while the arena
    folders list the same arenas (an arena file added while the server runs is
    announced from the next ``hello`` on): the commands, their schemas and the limits
    do not change while a server runs, and building and serializing them (about
    40 KB) for each of thousands of reconnecting clients cost more than everything
    else a connection does to join."""

    def __init__(
        self, config: ServerConfig, engine: Engine, arenas: Callable[[], Iterable[str]]
    ) -> None:
        self.config = config
        self.engine = engine
        self._arenas = arenas
        self._cache: tuple[list[str], str] | None = None

    def reconfigure(self, config: ServerConfig) -> None:
        """Announce ``config``'s limits and decision time from the next ``hello`` on (a
        SIGHUP reload)."""
        self.config = config
        self._cache = None

    def text(self, gm: str | None = None) -> str:
        """The ``hello`` result as JSON text (see :func:`_wire.encoded_response_text`);
        for a connection authenticated by a GM key, with that GM's name (``gm``), built
        afresh (those are few)."""
        arenas = sorted(self._arenas())
        if gm is not None:
            return encode_message(attrs.evolve(self.result(arenas), gm=gm))
        cached = self._cache
        if cached is None or cached[0] != arenas:
            cached = self._cache = (arenas, encode_message(self.result(arenas)))
        return cached[1]

    def result(self, arenas: list[str]) -> HelloResult:
        """The ``hello`` result announcing ``arenas``."""
        engine = self.engine
        reaction = self.config.reaction_seconds
        return HelloResult(
            protocol=PROTOCOL_VERSION,
            server=ServerInfo(name="zonekeep", version=VERSION),
            capabilities=Capabilities(
                commands=[
                    CommandInfo.from_spec(spec, engine.command_owners.get(spec.id, ""))
                    for spec in engine.commands.values()
                ],
                options=converter.unstructure(
                    EncounterOptions(settings=server_settings(self.config, engine))
                ),
                event_types=sorted([*host.EVENT_TYPES, *engine.catalog.events]),
                arenas=arenas,
                plugin_events=plugin_events(engine),
                plugin_state=plugin_state(engine),
                conditions=[
                    ConditionInfo.from_spec(spec, engine.condition_owners.get(cid, ""))
                    for cid, spec in sorted(engine.conditions.items())
                ],
                asset_tags=asset_tag_infos(engine),
                settings=setting_infos(self.config, engine),
                features=[
                    FeatureSpecInfo(
                        id=spec.id,
                        kind=spec.kind,
                        plugin=plugin,
                        summary=spec.doc,
                        params_schema=dict(spec.params_schema),
                    )
                    for (_kind, _id), (plugin, spec) in sorted(engine.catalog.features.items())
                ],
            ),
            limits=self.config.limits.announced(
                reaction if reaction is not None else EncounterOptions().reaction_seconds
            ),
            gm=None,
        )


def plugin_events(engine: Engine) -> list[PluginEventInfo]:
    """The event types ``engine``'s plugins declare, as ``hello`` announces them."""
    return [
        PluginEventInfo(
            id=full,
            plugin=entry.plugin,
            description=entry.spec.description,
            template=entry.spec.template,
            schema=dict(entry.spec.schema),
            visibility=entry.spec.visibility,
        )
        for full, entry in sorted(engine.catalog.events.items())
    ]


def plugin_state(engine: Engine) -> list[PluginStateInfo]:
    """The pieces of plugin state ``engine``'s plugins declare, as ``hello`` announces them."""
    return [
        PluginStateInfo(
            plugin=ns,
            key=key,
            description=spec.description,
            visibility=spec.visibility,
            default=spec.default,
            schema=dict(spec.schema) if spec.schema is not None else None,
        )
        for ns, pieces in sorted(engine.catalog.state.items())
        for key, spec in pieces.items()
    ]
