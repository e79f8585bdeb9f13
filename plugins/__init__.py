"""zonekeep.plugins: the rules themselves, written as plugins on the public SDK.

Each module here is a pluggy plugin. :data:`default_plugins` lists the ones every
engine loads, in order.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: The built-in rule plugins, loaded by every engine unless told otherwise.
default_plugins: tuple[str, ...] = (
    "zonekeep.plugins.setup",
    "zonekeep.plugins.initiative",
    "zonekeep.plugins.decisions",
    "zonekeep.plugins.turns",
    "zonekeep.plugins.movement",
    "zonekeep.plugins.surprise",
    "zonekeep.plugins.combat",
    "zonekeep.plugins.zones",
    "zonekeep.plugins.engagement",
    "zonekeep.plugins.positions",
    "zonekeep.plugins.flanking",
    "zonekeep.plugins.areas",
    "zonekeep.plugins.targeting",
    "zonekeep.plugins.conditions",
    "zonekeep.plugins.durations",
    "zonekeep.plugins.ending",
    "zonekeep.plugins.gm",
)


def load_default_plugins() -> list[ModuleType]:
    """Import and return the modules named in :data:`default_plugins`."""
    return [importlib.import_module(name) for name in default_plugins]


__all__ = ["default_plugins", "load_default_plugins"]
