"""The SRD 5.1 creatures: a first-party content plugin, on by default.

It contributes the compendium source ``srd`` (``srd.goblin``, ``srd.wolf``, ...) from
``srd-5.1.json``, shipped beside this module, through the public hook
``zonekeep_compendium`` only, as a third-party content plugin would. An operator turns
it off with ``plugins_disabled = ["zonekeep.srd"]`` (docs/compendium.md); the server
then starts without the ``srd`` entries.

The data is the System Reference Document 5.1 by Wizards of the Coast LLC, licensed
under CC BY 4.0; the source's ``attribution`` carries the credit the licence requires.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path

from zonekeep.sdk import CompendiumSource, hookimpl, parse_compendium_source

__all__ = ["DATA", "srd_source"]

#: The compendium file this plugin contributes (package data, shipped in the wheel).
DATA = Path(__file__).resolve().parent / "srd-5.1.json"


@functools.cache
def srd_source() -> CompendiumSource:
    """The ``srd`` source, read and checked once per process (the file never changes)."""
    return parse_compendium_source(json.loads(DATA.read_text(encoding="utf-8")), str(DATA))


@hookimpl
def zonekeep_compendium() -> Iterable[CompendiumSource]:
    return [srd_source()]
