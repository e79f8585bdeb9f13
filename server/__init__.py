"""zonekeep.server: the engine, the command line and (later) the websocket server."""

from ._engine import Engine, Outcome, PluginConflict, make_plugin_manager

__all__ = ["Engine", "Outcome", "PluginConflict", "make_plugin_manager"]
