"""The server's creature compendium: the operator's compendium folders (``[server]
compendium_dirs``) and what plugins contribute (``zonekeep_compendium``: the SRD 5.1
creatures come from the built-in content plugin ``zonekeep.srd``), built once at start.

Every source has a name that prefixes its entries' ids (``srd.goblin``); a name
declared twice, a file that cannot be read, an invalid entry or a plugin that fails
stops the server from starting, with every problem listed (:class:`CompendiumError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zonekeep.sdk import CompendiumSource, parse_compendium_source
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import (
    Compendium,
    CompendiumError,
    load_compendium_file,
    source_problems,
)

from ._config import ServerConfig

__all__ = ["CompendiumError", "build_compendium"]


def _plugin_sources(engine: Engine, problems: list[str]) -> list[tuple[CompendiumSource, str]]:
    found: list[tuple[CompendiumSource, str]] = []
    for impl in engine.pm.hook.zonekeep_compendium.get_hookimpls():
        origin = f"plugin {impl.plugin_name!r}"
        try:
            answer: Any = impl.function()
            items: list[Any] = list(answer or ())
        except Exception as exc:
            problems.append(f"{origin} failed in zonekeep_compendium: {exc!r}")
            continue
        for i, item in enumerate(items):
            where = f"{origin}, source {i}"
            if isinstance(item, Mapping):
                try:
                    found.append((parse_compendium_source(item, where), origin))
                except CompendiumError as exc:
                    problems += exc.problems
            elif isinstance(item, CompendiumSource):
                wrong = source_problems(item, where)
                if wrong:
                    problems += wrong
                else:
                    found.append((item, origin))
            else:
                problems.append(
                    f"{where}: expected a CompendiumSource or a dict, not {type(item).__name__}"
                )
    return found


def build_compendium(config: ServerConfig, engine: Engine) -> Compendium:
    """The compendium of a server with ``config`` and ``engine``'s plugins: each folder
    of ``compendium_dirs`` (its ``*.json`` files, by name), then the plugins' sources
    (the built-in ``zonekeep.srd`` among them unless disabled). Raises
    :class:`CompendiumError` listing every problem."""
    problems: list[str] = []
    sources: list[tuple[CompendiumSource, str]] = []
    for folder in config.compendium_dirs:
        if not folder.is_dir():
            problems.append(f"{folder}: the compendium folder does not exist")
            continue
        for path in sorted(folder.glob("*.json")):
            try:
                sources.append((load_compendium_file(path), str(path)))
            except CompendiumError as exc:
                problems += exc.problems
    sources += _plugin_sources(engine, problems)
    compendium = Compendium()
    for source, origin in sources:
        try:
            compendium.add(source, origin)
        except CompendiumError as exc:
            problems += exc.problems
    if problems:
        raise CompendiumError(problems)
    return compendium
