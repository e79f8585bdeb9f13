"""zonekeep.plugins: the rules themselves, written as plugins on the public SDK.

Each module here is a pluggy plugin. :data:`default_plugins` lists the ones every
engine loads, in order (the list lives in the SDK, as pytest's ``default_plugins``
lives in its config, so that the engine can name them without importing this layer).
"""

from __future__ import annotations

from zonekeep.sdk.engine import default_plugins, load_default_plugins

__all__ = ["default_plugins", "load_default_plugins"]
