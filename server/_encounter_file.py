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
    Creature,
    EncounterOptions,
    Hazard,
    creature_from_dict,
    load_arena,
)
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import converter, describe_errors, option_problems, single_zone_arena

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
    problems: list[str] = []
    if not isinstance(data, dict):
        raise EncounterFileError(source, ["the top level must be an object"])
    for key in sorted(set(data) - _KEYS):
        problems.append(f"{key}: unknown key (expected one of {', '.join(sorted(_KEYS))})")

    arena = single_zone_arena()
    ref = data.get("arena")
    if ref is not None:
        if not isinstance(ref, str):
            problems.append("arena: must be a path to an arena file")
        else:
            try:
                tags = engine.asset_tags if engine is not None else None
                arena = load_arena((base or Path.cwd()) / ref, asset_tags=tags)
            except ArenaError as exc:
                problems.append(f"arena: {exc}")
            except OSError as exc:
                problems.append(f"arena: cannot read {ref!r}: {exc.strerror}")
    zone_ids = tuple(z.id for z in arena.zones)

    options = EncounterOptions()
    try:
        options = converter.structure(data.get("options", {}), EncounterOptions)
    except cattrs.BaseValidationError as exc:
        problems.extend(describe_errors(exc, "options"))
    problems.extend(option_problems(options))
    if engine is not None:
        problems.extend(engine.settings_problems(options.settings))

    creatures: list[Creature] = []
    raw = data.get("creatures")
    if not isinstance(raw, list) or not raw:
        problems.append("creatures: must be a non-empty list of creatures")
        raw = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        cid = item.get("id") if isinstance(item, dict) else None
        if isinstance(cid, str):
            if cid in seen:
                problems.append(f"creatures[{i}].id: duplicate creature id {cid!r}")
            seen.add(cid)
        try:
            creature = creature_from_dict(item, f"creatures[{i}]")
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if creature.zone is not None and creature.zone not in zone_ids:
            problems.append(f"creatures[{i}].zone: unknown zone {creature.zone!r}")
        creatures.append(creature)
    groups = {c.group for c in creatures if c.group}
    for clash in sorted(groups & seen):
        problems.append(f"creatures: the group {clash!r} has the same id as a creature")

    surprised = data.get("surprised", [])
    if not isinstance(surprised, list) or not all(isinstance(s, str) for s in surprised):
        problems.append("surprised: must be a list of creature ids")
        surprised = []
    for cid in surprised:
        if cid not in seen:
            problems.append(f"surprised: unknown creature {cid!r}")

    positions = data.get("positions", {})
    if not isinstance(positions, dict):
        problems.append("positions: must map creature ids to zone ids")
        positions = {}
    for cid, zone in positions.items():
        if cid not in seen:
            problems.append(f"positions.{cid}: unknown creature {cid!r}")
        if zone not in zone_ids:
            problems.append(f"positions.{cid}: unknown zone {zone!r}")

    hazards: list[Hazard] = []
    for i, item in enumerate(data.get("hazards", [])):
        try:
            hazards.append(converter.structure(item, Hazard))
        except cattrs.BaseValidationError as exc:
            problems.extend(
                f"hazards[{i}]: {m}" for m in cattrs.transform_error(exc, path="hazard")
            )
    name = data.get("name", "")
    if not isinstance(name, str) or not name:
        problems.append("name: must be a non-empty string")
        name = "encounter"
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
