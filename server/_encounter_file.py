"""Encounter files: a roster, options and setup for one encounter, as JSON.

::

    {
      "name": "Goblin ambush",
      "arena": "../arenas/tavern.json",        # optional; a one-zone field otherwise
      "options": {"surprise": true},           # any EncounterOptions field
      "surprised": ["aria"],
      "positions": {"aria": "common-room"},    # creature id -> zone id
      "hazards": [{"id": "fire", "name": "Spreading fire", "time_sensitive": true}],
      "creatures": [ {...}, ... ]              # see docs/encounters.md
    }

A creature is spelled out, or names a compendium entry (``{"compendium":
"srd.goblin", "count": 4}``, the bundled compendium, or with ``engine`` its plugins'
too), or a player character file (``{"character": "../characters/kael.json", "id":
"kael", "controller": "alice"}``, relative to the encounter file).

Every problem in the file is reported at once, naming the file and the place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from zonekeep.sdk import (
    Arena,
    ArenaError,
    CompendiumSource,
    Creature,
    EncounterOptions,
    Hazard,
    creature_from_dict,
    load_arena,
    parse_compendium_source,
)
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import (
    Compendium,
    CompendiumError,
    character_creature,
    converter,
    describe_errors,
    option_problems,
    parse_character,
    roster_reference,
    single_zone_arena,
)

#: The keys of a roster item naming a character file.
CHARACTER_ITEM_KEYS = ("character", "id", "controller", "side", "zone", "hidden")

_KEYS = {
    "name",
    "arena",
    "options",
    "surprised",
    "positions",
    "hazards",
    "creatures",
    "description",
}


class EncounterFileError(ValueError):
    """An encounter file could not be used; ``problems`` lists every reason."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


@attrs.frozen
class EncounterFile:
    """A validated encounter file: every id it mentions exists, every zone is in the arena."""

    name: str
    arena: Arena
    creatures: tuple[Creature, ...]
    options: EncounterOptions
    surprised: tuple[str, ...]
    positions: Mapping[str, str]
    hazards: tuple[Hazard, ...]
    description: str = ""


def load_encounter(path: str | Path, engine: Engine | None = None) -> EncounterFile:
    """Read and validate an encounter file; raise :class:`EncounterFileError` listing all
    problems. With ``engine``, its arena's asset data and its ``options.settings`` are
    checked against that engine's plugins too."""
    path = Path(path)
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EncounterFileError(source, [f"cannot read the file: {exc.strerror}"]) from None
    except json.JSONDecodeError as exc:
        raise EncounterFileError(
            source, [f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"]
        ) from None
    return parse_encounter(data, source, base=path.parent, engine=engine)


def parse_encounter(
    data: Any, source: str = "<encounter>", base: Path | None = None, engine: Engine | None = None
) -> EncounterFile:
    """Validate already-parsed encounter data (see :func:`load_encounter`)."""
    if not isinstance(data, dict):
        raise EncounterFileError(source, ["the top level must be an object"])
    problems = [
        f"{key}: unknown key (expected one of {', '.join(sorted(_KEYS))})"
        for key in sorted(set(data) - _KEYS)
    ]
    arena = _arena(data.get("arena"), base, engine, problems)
    zone_ids = tuple(z.id for z in arena.zones)
    options = _options(data.get("options", {}), engine, problems)
    creatures, ids = _creatures(data.get("creatures"), zone_ids, problems, base, engine)
    surprised = _surprised(data.get("surprised", []), ids, problems)
    positions = _positions(data.get("positions", {}), ids, zone_ids, problems)
    hazards = _hazards(data.get("hazards", []), problems)
    name = data.get("name", "")
    if not isinstance(name, str) or not name:
        problems.append("name: must be a non-empty string")
    if problems:
        raise EncounterFileError(source, problems)
    return EncounterFile(
        name=name,
        arena=arena,
        creatures=tuple(creatures),
        options=options,
        surprised=tuple(surprised),
        positions=dict(positions),
        hazards=tuple(hazards),
        description=str(data.get("description", "")),
    )


# Each part of the file below: its value (or a stand-in when it has problems), and its
# problems appended to ``problems``, so that every problem is reported at once.


def _arena(ref: Any, base: Path | None, engine: Engine | None, problems: list[str]) -> Arena:
    """The arena file ``ref`` names, relative to ``base``; a one-zone field without one."""
    if ref is None:
        return single_zone_arena()
    if not isinstance(ref, str):
        problems.append("arena: must be a path to an arena file")
        return single_zone_arena()
    try:
        tags = engine.asset_tags if engine is not None else None
        return load_arena((base or Path.cwd()) / ref, asset_tags=tags)
    except ArenaError as exc:
        problems.append(f"arena: {exc}")
    except OSError as exc:
        problems.append(f"arena: cannot read {ref!r}: {exc.strerror}")
    return single_zone_arena()


def _options(raw: Any, engine: Engine | None, problems: list[str]) -> EncounterOptions:
    """The options (and, with ``engine``, its plugins' settings among them)."""
    options = EncounterOptions()
    try:
        options = converter.structure(raw, EncounterOptions)
    except cattrs.BaseValidationError as exc:
        problems.extend(describe_errors(exc, "options"))
    problems.extend(option_problems(options))
    if engine is not None:
        problems.extend(engine.settings_problems(options.settings))
    return options


def _creatures(
    raw: Any,
    zone_ids: tuple[str, ...],
    problems: list[str],
    base: Path | None = None,
    engine: Engine | None = None,
) -> tuple[list[Creature], set[str]]:
    """The creatures that are valid, and every creature id the file gives (a creature
    with problems still counts as named, so its other mentions are not reported too)."""
    if not isinstance(raw, list) or not raw:
        problems.append("creatures: must be a non-empty list of creatures")
        raw = []
    creatures: list[Creature] = []
    seen: set[str] = set()
    spelled = {
        item["id"]
        for item in raw
        if isinstance(item, dict) and "compendium" not in item and isinstance(item.get("id"), str)
    }
    compendium: Compendium | None = None
    for i, item in enumerate(raw):
        where = f"creatures[{i}]"
        made: list[Creature] = []
        try:
            if isinstance(item, dict) and "compendium" in item:
                if compendium is None:
                    compendium = _plugins_compendium(engine)
                made = roster_reference(item, compendium, where, taken=seen | spelled)
            elif isinstance(item, dict) and "character" in item:
                made = [_character_item(item, base, where)]
            else:
                made = [creature_from_dict(item, where)]
        except ValueError as exc:
            problems.append(str(exc))
            cid = item.get("id") if isinstance(item, dict) else None
            if isinstance(cid, str):
                seen.add(cid)
            continue
        for creature in made:
            if creature.id in seen:
                problems.append(f"{where}.id: duplicate creature id {creature.id!r}")
            seen.add(creature.id)
            if creature.zone is not None and creature.zone not in zone_ids:
                problems.append(f"{where}.zone: unknown zone {creature.zone!r}")
            creatures.append(creature)
    groups = {c.group for c in creatures if c.group}
    for clash in sorted(groups & seen):
        problems.append(f"creatures: the group {clash!r} has the same id as a creature")
    return creatures, seen


def _plugins_compendium(engine: Engine | None) -> Compendium:
    """The compendium the plugins contribute (``zonekeep_compendium``: the SRD 5.1
    creatures of the built-in ``zonekeep.srd`` among them), those of ``engine`` or, without
    one, of the default plugins."""
    engine = engine if engine is not None else Engine()
    compendium = Compendium()
    for answer in engine.pm.hook.zonekeep_compendium():
        for i, item in enumerate(answer or ()):
            source = (
                item
                if isinstance(item, CompendiumSource)
                else parse_compendium_source(item, f"compendium source {i}")
            )
            compendium.add(source, "a plugin")
    return compendium


def _character_item(item: Mapping[str, Any], base: Path | None, where: str) -> Creature:
    """The creature of a roster item naming a player character file."""
    problems = [
        f"{where}.{key}: unknown key (expected one of {', '.join(CHARACTER_ITEM_KEYS)})"
        for key in item
        if key not in CHARACTER_ITEM_KEYS
    ]
    for key in ("character", "id", "controller"):
        if not isinstance(item.get(key), str) or not item[key]:
            problems.append(f"{where}.{key}: required text")
    if not isinstance(item.get("side", "party"), str):
        problems.append(f"{where}.side: must be text")
    if not isinstance(item.get("zone", ""), str | None):
        problems.append(f"{where}.zone: must be a zone id")
    if not isinstance(item.get("hidden", False), bool):
        problems.append(f"{where}.hidden: must be true or false")
    if problems:
        raise ValueError("; ".join(problems))
    path = (base or Path.cwd()) / item["character"]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(
            f"{where}.character: cannot read {item['character']!r}: {exc.strerror}"
        ) from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{where}.character: {item['character']!r} is not JSON: {exc.msg}"
        ) from None
    try:
        sheet = parse_character(data, f"{where}.character")
    except CompendiumError as exc:
        raise ValueError("; ".join(exc.problems)) from None
    creature = character_creature(
        sheet, item["id"], controller=item["controller"], side=str(item.get("side", "party"))
    )
    creature.zone = item.get("zone")
    creature.hidden = bool(item.get("hidden", False))
    return creature


def _surprised(raw: Any, ids: set[str], problems: list[str]) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        problems.append("surprised: must be a list of creature ids")
        return []
    problems.extend(f"surprised: unknown creature {cid!r}" for cid in raw if cid not in ids)
    return raw


def _positions(
    raw: Any, ids: set[str], zone_ids: tuple[str, ...], problems: list[str]
) -> dict[str, Any]:
    if not isinstance(raw, dict):
        problems.append("positions: must map creature ids to zone ids")
        return {}
    for cid, zone in raw.items():
        if cid not in ids:
            problems.append(f"positions.{cid}: unknown creature {cid!r}")
        if zone not in zone_ids:
            problems.append(f"positions.{cid}: unknown zone {zone!r}")
    return raw


def _hazards(raw: Any, problems: list[str]) -> list[Hazard]:
    if not isinstance(raw, list):
        problems.append("hazards: must be a list of hazards")
        return []
    hazards: list[Hazard] = []
    for i, item in enumerate(raw):
        try:
            hazards.append(converter.structure(item, Hazard))
        except cattrs.BaseValidationError as exc:
            problems.extend(
                f"hazards[{i}]: {m}" for m in cattrs.transform_error(exc, path="hazard")
            )
    return hazards
