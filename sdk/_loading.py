"""Finding the plugins an engine runs: the built-ins and every installed third-party plugin.

Third-party plugins are found as pytest finds ``pytest11`` plugins: through the
``zonekeep`` entry-point group of installed distributions. In a plugin's
``pyproject.toml``::

    [project.entry-points.zonekeep]
    shout = "zonekeep_shout"            # or "zonekeep_shout.rules:Shout"

The entry point's name is the plugin's name and its value the module (or object)
pluggy registers. That module must declare ``ZONEKEEP_PLUGIN``, a
:class:`zonekeep.sdk.PluginInfo` of the same name whose ``sdk`` range includes
:data:`zonekeep.sdk.host.SDK_VERSION`; otherwise the server refuses to start, and
:class:`PluginLoadError` lists every problem at once.

Built-in plugins (:data:`zonekeep.plugins.default_plugins`) are named
``zonekeep.<module>`` (``zonekeep.flanking``) and carry zonekeep's own version.
The ``zonekeep.`` prefix is reserved for them.

A third-party plugin's name is also its namespace: the engine puts every id it
declares (commands, conditions, asset tags, event types) under it, so
``hazards``'s ``burning`` is ``hazards.burning`` and two packages may both declare
a ``burning`` (see :mod:`zonekeep.sdk._custom`). The built-ins, named here, have no
namespace. Conflicts are checked when the engine is built: one full id declared
twice (by one plugin, or by two without a namespace) stops it with
:class:`PluginConflict`, naming both.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from collections.abc import Iterable
from types import ModuleType

import attrs

from ._plugin import SDK_VERSION, PluginInfo, VersionRangeError

#: The entry-point group third-party plugins are registered under.
ENTRY_POINT_GROUP = "zonekeep"
#: The ``source`` of a plugin that ships with zonekeep.
BUILT_IN = "built-in"
#: The ``source`` of a plugin object handed to :class:`Engine` directly (tests, the harness).
IN_PROCESS = "in-process"
_RESERVED_PREFIX = "zonekeep."

#: The built-in rule plugins, by module name, loaded by every engine unless told
#: otherwise (in this order). As pytest's ``default_plugins``, they are named here
#: and imported by name, so the SDK does not import the layer above it: the rules
#: in ``zonekeep.plugins`` are plugins on this SDK like any third-party one. The last two,
#: ``zonekeep.plugins.srd``, ``zonekeep.plugins.classes`` and ``zonekeep.plugins.spells``,
#: are content rather than rules: the SRD 5.1 creatures, classes and spells.
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
    "zonekeep.plugins.features",
    "zonekeep.plugins.srd",
    "zonekeep.plugins.classes",
    "zonekeep.plugins.spells",
)


def load_default_plugins() -> list[ModuleType]:
    """Import and return the modules named in :data:`default_plugins`."""
    return [importlib.import_module(name) for name in default_plugins]


class PluginLoadError(RuntimeError):
    """The plugins could not be loaded; ``problems`` lists every reason, one sentence each."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"zonekeep cannot load its plugins:\n{lines}")


@attrs.frozen
class LoadedPlugin:
    """A plugin ready to register: its name, version, where it came from, and the plugin.

    ``source`` is ``"built-in"``, the name of the distribution that installed it,
    or ``"in-process"``. ``commands`` is filled in by the engine that runs it.
    """

    name: str
    version: str
    source: str
    plugin: object
    commands: tuple[str, ...] = ()
    description: str = ""


def zonekeep_version() -> str:
    """The installed zonekeep distribution's version (the built-in plugins' version)."""
    try:
        return importlib.metadata.version("zonekeep")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "unknown"


def builtin_name(module_name: str) -> str:
    """``"zonekeep.plugins.flanking"`` -> ``"zonekeep.flanking"``."""
    return _RESERVED_PREFIX + module_name.rsplit(".", 1)[-1]


def builtin_plugins(disabled: Iterable[str] = ()) -> list[LoadedPlugin]:
    """The built-in plugins in load order, except those named in ``disabled``."""
    skip = set(disabled)
    version = zonekeep_version()
    return [
        LoadedPlugin(builtin_name(module), version, BUILT_IN, importlib.import_module(module))
        for module in default_plugins
        if builtin_name(module) not in skip
    ]


def declared_info(plugin: object) -> object | None:
    """The ``ZONEKEEP_PLUGIN`` of ``plugin``, or of the module that defines it; ``None`` if none."""
    info = getattr(plugin, "ZONEKEEP_PLUGIN", None)
    if info is None and not isinstance(plugin, ModuleType):
        module = sys.modules.get(getattr(plugin, "__module__", None) or "")
        info = getattr(module, "ZONEKEEP_PLUGIN", None)
    return info


def as_loaded(plugin: object) -> LoadedPlugin:
    """Describe a plugin object handed to :class:`Engine` directly.

    A :class:`LoadedPlugin` is returned as is; a built-in module gets its built-in
    name; anything else keeps the name pluggy would give it.
    """
    if isinstance(plugin, LoadedPlugin):
        return plugin
    module_name = getattr(plugin, "__name__", None)
    if isinstance(plugin, ModuleType) and module_name in default_plugins:
        return LoadedPlugin(builtin_name(plugin.__name__), zonekeep_version(), BUILT_IN, plugin)
    info = declared_info(plugin)
    version = info.version if isinstance(info, PluginInfo) else ""
    description = info.description if isinstance(info, PluginInfo) else ""
    if isinstance(info, PluginInfo):
        name = info.name
    elif isinstance(module_name, str):
        name = module_name
    else:  # an instance: its class, made unique by its id
        cls = type(plugin)
        name = f"{cls.__module__}.{cls.__qualname__}#{id(plugin) % 10_000:04d}"
    return LoadedPlugin(name, version, IN_PROCESS, plugin, description=description)


def _distribution(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist
    return dist.name if dist is not None else "unknown"


def _check(name: str, dist: str, plugin: object) -> tuple[PluginInfo | None, str | None]:
    """The plugin's declaration, or the reason it is refused."""
    who = f"plugin {name!r} (from distribution {dist!r})"
    info = declared_info(plugin)
    if info is None:
        return None, f"{who} declares no ZONEKEEP_PLUGIN"
    if not isinstance(info, PluginInfo):
        return None, (
            f"{who}: ZONEKEEP_PLUGIN must be a zonekeep.sdk.PluginInfo, not {type(info).__name__}"
        )
    if info.name != name:
        return None, (
            f"{who} calls itself {info.name!r} in ZONEKEEP_PLUGIN; "
            "the entry point name and ZONEKEEP_PLUGIN.name must match"
        )
    who = f"plugin {name!r} {info.version} (from distribution {dist!r})"
    try:
        supported = info.supports(SDK_VERSION)
    except VersionRangeError as exc:
        return None, f"{who} declares an sdk range that cannot be read: {exc}"
    if not supported:
        return None, (
            f"{who} needs zonekeep SDK {info.sdk!r}, but this zonekeep provides SDK "
            f"{SDK_VERSION}; install a version of {name!r} made for SDK {SDK_VERSION}"
        )
    return info, None


def discover(enabled: Iterable[str] = (), disabled: Iterable[str] = ()) -> list[LoadedPlugin]:
    """The built-in plugins, then every installed third-party plugin, ready for an engine.

    ``disabled`` names plugins (built-in or third-party) to skip; a non-empty
    ``enabled`` loads only those third-party plugins (built-ins always load unless
    disabled). Plugins left out are never imported. Raises :class:`PluginLoadError`
    listing every problem: unknown names, plugins that fail to import, declare no
    ``ZONEKEEP_PLUGIN`` or need another SDK version, names claimed twice.
    """
    enabled, disabled = tuple(enabled), tuple(disabled)
    problems: list[str] = []
    builtins = [builtin_name(m) for m in default_plugins]
    by_name: dict[str, list[importlib.metadata.EntryPoint]] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        by_name.setdefault(ep.name, []).append(ep)
    known = sorted({*builtins, *by_name})

    for name in sorted(set(enabled) & set(disabled)):
        problems.append(f"plugin {name!r} is both enabled and disabled")
    for verb, names in (("enable", enabled), ("disable", disabled)):
        for name in dict.fromkeys(names):
            if name not in known:
                problems.append(
                    f"there is no plugin called {name!r} to {verb}; "
                    f"known plugins: {', '.join(known)}"
                )

    third_party: list[LoadedPlugin] = []
    for name in sorted(by_name):
        if name in disabled or (enabled and name not in enabled):
            continue
        eps = by_name[name]
        if len(eps) > 1:
            dists = " and ".join(repr(_distribution(ep)) for ep in eps)
            problems.append(f"plugin {name!r} is provided by more than one distribution: {dists}")
            continue
        ep = eps[0]
        dist = _distribution(ep)
        if name.startswith(_RESERVED_PREFIX):
            problems.append(
                f"plugin {name!r} (from distribution {dist!r}) uses the prefix "
                f"{_RESERVED_PREFIX!r}, which is reserved for zonekeep's built-in plugins"
            )
            continue
        try:
            plugin = ep.load()
        except Exception as exc:
            problems.append(
                f"plugin {name!r} (from distribution {dist!r}) could not be loaded "
                f"from {ep.value!r}: {type(exc).__name__}: {exc}"
            )
            continue
        info, problem = _check(name, dist, plugin)
        if problem is not None:
            problems.append(problem)
            continue
        assert info is not None
        third_party.append(LoadedPlugin(name, info.version, dist, plugin, (), info.description))

    if problems:
        raise PluginLoadError(problems)
    return [*builtin_plugins(disabled), *third_party]


__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "IN_PROCESS",
    "LoadedPlugin",
    "PluginLoadError",
    "as_loaded",
    "builtin_name",
    "builtin_plugins",
    "declared_info",
    "default_plugins",
    "discover",
    "load_default_plugins",
    "zonekeep_version",
]
