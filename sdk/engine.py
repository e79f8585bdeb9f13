"""zonekeep.sdk.engine: the pure rules engine, plugin loading and plugin isolation.

:class:`Engine` turns an encounter's state and a command into events (or a
:class:`~zonekeep.sdk.Refusal`). Its outcome never reads a clock (a host that times
plugin calls reports overruns as a command), and it holds no sockets and no storage:
the server (``zonekeep.server``) and the in-process harness
(:mod:`zonekeep.sdk.testing`) both drive the same engine.
"""

from ._details import ActionDetail, AttackChoice, ZoneChoice, attack_label
from ._engine import Engine, Outcome, PluginConflict, describe_plugins, make_plugin_manager
from ._isolation import REPORT_OVERRUNS, Budget, Overrun, PluginFailure, describe
from ._loading import (
    BUILT_IN,
    ENTRY_POINT_GROUP,
    IN_PROCESS,
    LoadedPlugin,
    PluginLoadError,
    builtin_name,
    default_plugins,
    discover,
    load_default_plugins,
    zonekeep_version,
)
from ._state import working_copy

__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "IN_PROCESS",
    "REPORT_OVERRUNS",
    "ActionDetail",
    "AttackChoice",
    "Budget",
    "Engine",
    "LoadedPlugin",
    "Outcome",
    "Overrun",
    "PluginConflict",
    "PluginFailure",
    "PluginLoadError",
    "ZoneChoice",
    "attack_label",
    "builtin_name",
    "default_plugins",
    "describe",
    "describe_plugins",
    "discover",
    "load_default_plugins",
    "make_plugin_manager",
    "working_copy",
    "zonekeep_version",
]
