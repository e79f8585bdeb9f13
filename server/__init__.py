"""zonekeep.server: the websocket server, rooms, seats and tokens, the stores, the CLI.

The rules engine it drives is :class:`zonekeep.sdk.engine.Engine`.
"""

from ._app import ZonekeepServer, serve_until_signalled
from ._config import Limits, ServerConfig, load_config
from ._store import EventStore, InMemoryStore

__all__ = [
    "EventStore",
    "InMemoryStore",
    "Limits",
    "ServerConfig",
    "ZonekeepServer",
    "load_config",
    "serve_until_signalled",
]
