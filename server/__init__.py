"""zonekeep.server: the engine, the websocket server, sessions and seats, the CLI."""

from ._app import Limits, ServerConfig, ZonekeepServer, load_config, serve_until_signalled
from ._engine import Engine, Outcome, PluginConflict, make_plugin_manager
from ._isolation import PluginFailure
from ._store import EventStore, InMemoryStore

__all__ = [
    "Engine",
    "EventStore",
    "InMemoryStore",
    "Limits",
    "Outcome",
    "PluginConflict",
    "PluginFailure",
    "ServerConfig",
    "ZonekeepServer",
    "load_config",
    "make_plugin_manager",
    "serve_until_signalled",
]
