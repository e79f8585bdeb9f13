"""Encounter files (``server/_encounter_file.py``): what a valid one gives, and every
problem of a bad one reported at once, each naming its place, in the file's order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_support import creatures

from zonekeep.sdk import EncounterOptions, Hazard
from zonekeep.sdk.engine import Engine
from zonekeep.server._encounter_file import (
    EncounterFileError,
    load_encounter,
    parse_encounter,
)

ROOT = Path(__file__).resolve().parent.parent
ARENAS = ROOT / "examples" / "arenas"


def valid(**changes: Any) -> dict[str, Any]:
    """A valid encounter on the tavern (the roster of the e2e tests), with ``changes``."""
    data: dict[str, Any] = {
        "name": "Ambush",
        "arena": "tavern.json",
        "options": {"surprise": True},
        "surprised": ["aria"],
        "positions": {"gob": "kitchen"},
        "hazards": [{"id": "fire", "name": "Spreading fire", "time_sensitive": True}],
        "creatures": creatures(),
        "description": "Goblins.",
    }
    data.update(changes)
    return data


def problems(data: Any, engine: Engine | None = None) -> list[str]:
    with pytest.raises(EncounterFileError) as info:
        parse_encounter(data, "f.json", base=ARENAS, engine=engine)
    assert info.value.source == "f.json"
    assert str(info.value) == "\n".join(f"f.json: {p}" for p in info.value.problems)
    return info.value.problems


def test_a_valid_file_gives_every_part() -> None:
    found = parse_encounter(valid(), "f.json", base=ARENAS)
    assert found.name == "Ambush"
    assert found.arena.id == "tavern"
    assert [c.id for c in found.creatures] == [c["id"] for c in creatures()]
    assert found.options == EncounterOptions(surprise=True)
    assert (found.surprised, dict(found.positions)) == (("aria",), {"gob": "kitchen"})
    assert found.hazards == (Hazard("fire", "Spreading fire", time_sensitive=True),)
    assert found.description == "Goblins."


def test_the_defaults_a_one_zone_field_and_no_setup() -> None:
    roster = [{**c, "zone": None} for c in creatures()]
    found = parse_encounter({"name": "Bare", "creatures": roster})
    assert [z.id for z in found.arena.zones] == ["field"]
    assert (found.surprised, dict(found.positions), found.hazards) == ((), {}, ())
    assert (found.options, found.description) == (EncounterOptions(), "")


def test_the_top_level_must_be_an_object() -> None:
    assert problems([valid()]) == ["the top level must be an object"]


def test_every_problem_at_once_in_the_files_order() -> None:
    roster = creatures()
    roster[1] = {**roster[1], "id": "aria"}  # a duplicate id
    roster[2] = {**roster[2], "zone": "attic"}
    roster[3] = {**roster[3], "hp": "lots"}
    roster.append({**creatures()[2], "id": "gob2", "group": "aria"})
    data = valid(
        extra=1,
        options={"surprise": "yes"},
        creatures=roster,
        surprised=["aria", "nobody"],
        positions={"ghost": "kitchen", "aria": "attic"},
        hazards=[{"id": "fire"}],
        name="",
    )
    assert problems(data) == [
        "extra: unknown key (expected one of arena, creatures, description, hazards, "
        "name, options, positions, surprised)",
        "options.surprise: expected true or false, not text",
        "creatures[1].id: duplicate creature id 'aria'",
        "creatures[2].zone: unknown zone 'attic'",
        "creatures[3].hp: expected a whole number, not text",
        "creatures: the group 'aria' has the same id as a creature",
        "surprised: unknown creature 'nobody'",
        "positions.ghost: unknown creature 'ghost'",
        "positions.aria: unknown zone 'attic'",
        "hazards[0]: required field missing @ hazard.name",
        "name: must be a non-empty string",
    ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"arena": 7}, "arena: must be a path to an arena file"),
        ({"arena": "nowhere.json"}, "arena: cannot read 'nowhere.json': No such file or directory"),
        ({"creatures": []}, "creatures: must be a non-empty list of creatures"),
        ({"creatures": {"aria": {}}}, "creatures: must be a non-empty list of creatures"),
        ({"surprised": "aria"}, "surprised: must be a list of creature ids"),
        ({"surprised": [1]}, "surprised: must be a list of creature ids"),
        ({"positions": ["aria"]}, "positions: must map creature ids to zone ids"),
        ({"hazards": 3}, "hazards: must be a list of hazards"),
        ({"hazards": {"id": "fire"}}, "hazards: must be a list of hazards"),
        ({"name": 3}, "name: must be a non-empty string"),
    ],
)
def test_a_part_of_the_wrong_shape_is_one_problem(changes: dict[str, Any], expected: str) -> None:
    roster = [{**c, "zone": None} for c in creatures()] if "arena" in changes else creatures()
    data = valid(**{"surprised": [], "positions": {}, "creatures": roster, **changes})
    assert problems(data) == [expected]


def test_a_creature_that_is_not_an_object_is_named_by_its_place() -> None:
    found = problems(valid(creatures=[*creatures(), "goblin"]))
    assert found == ["creatures[4]: a creature must be an object"]


def test_an_arena_with_problems_is_reported_and_a_field_stands_in(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"id": "bad"}')
    data = valid(arena="bad.json", positions={}, surprised=[])
    with pytest.raises(EncounterFileError) as info:
        parse_encounter(data, "f.json", base=tmp_path)
    # The creatures' zones are then checked against the stand-in (one zone, "field").
    assert info.value.problems == [
        f"arena: {tmp_path / 'bad.json'}: invalid arena (2 problems)\n"
        f"{tmp_path / 'bad.json'}: name: required field is missing\n"
        f"{tmp_path / 'bad.json'}: zones: required field is missing",
        "creatures[0].zone: unknown zone 'common_room'",
        "creatures[1].zone: unknown zone 'common_room'",
        "creatures[2].zone: unknown zone 'common_room'",
        "creatures[3].zone: unknown zone 'kitchen'",
    ]


def test_with_an_engine_the_plugins_settings_are_checked() -> None:
    data = valid(options={"settings": {"nosuch": {"x": 1}}})
    assert parse_encounter(valid(), "f.json", base=ARENAS, engine=Engine()).name == "Ambush"
    assert problems(data, Engine()) == [
        "options.settings.nosuch: no plugin called 'nosuch' declares settings (zonekeep.srd do)"
    ]


def test_load_reads_the_file_relative_to_its_folder(tmp_path: Path) -> None:
    (tmp_path / "arenas").mkdir()
    (tmp_path / "arenas" / "tavern.json").write_text((ARENAS / "tavern.json").read_text())
    path = tmp_path / "fight.json"
    path.write_text(json.dumps(valid(arena="arenas/tavern.json")))
    assert load_encounter(path).arena.id == "tavern"
    assert load_encounter(str(path)).name == "Ambush"


def test_load_reports_an_unreadable_file_or_bad_json(tmp_path: Path) -> None:
    with pytest.raises(EncounterFileError) as info:
        load_encounter(tmp_path / "missing.json")
    assert info.value.problems == ["cannot read the file: No such file or directory"]
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "name": "x",\n  oops\n}')
    with pytest.raises(EncounterFileError) as info:
        load_encounter(bad)
    assert info.value.problems == [
        "line 3, column 3: invalid JSON: Expecting property name enclosed in double quotes"
    ]
    assert info.value.source == str(bad)
