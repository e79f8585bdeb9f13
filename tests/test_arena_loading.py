"""Arena data model and loader: example files, validation errors, lookups."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zonekeep.sdk._arena import (
    Arena,
    ArenaError,
    ArenaProblem,
    Asset,
    ForcedEffect,
    Link,
    PositionEffect,
    SaveEffect,
    Zone,
    default_capacity,
    load_arena,
    parse_arena,
    single_zone_arena,
)

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples" / "arenas"
SCHEMA_PATH = (
    ROOT / "protocol" / "schemas" / "strict" / "arena.schema.json"
)  # the strict one: the published one is open
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json")) + sorted(EXAMPLES.glob("*.toml"))

Doc = dict[str, Any]


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def read_doc(path: Path) -> Doc:
    import tomllib

    if path.suffix == ".toml":
        return tomllib.loads(path.read_text(encoding="utf-8"))
    data: Doc = json.loads(path.read_text(encoding="utf-8"))
    return data


def base() -> Doc:
    """A small valid arena used as the starting point for the error tests."""
    return {
        "id": "test",
        "name": "Test arena",
        "zones": [
            {"id": "hall", "name": "Hall", "size": 30},
            {"id": "yard", "name": "Yard", "size": "Large"},
            {"id": "loft", "name": "Loft", "size": 15},
        ],
        "links": [
            {"a": "hall", "b": "yard", "direction": "beside"},
            {"a": "hall", "b": "loft", "direction": "above", "mode": "climb"},
        ],
        "assets": [
            {
                "id": "table",
                "name": "Table",
                "kind": "prop",
                "zone": "hall",
                "position": {"ac_bonus": 2},
                "forced": {"save": {"ability": "dex", "damage": "1d6", "damage_type": "fire"}},
            },
            {"id": "ladder", "name": "Ladder", "kind": "prop", "zone": "hall"},
        ],
    }


def problems_of(data: object) -> list[tuple[str, str]]:
    with pytest.raises(ArenaError) as info:
        parse_arena(data, "test.json")
    return [(p.where, p.message) for p in info.value.problems]


# ----------------------------------------------------------------- example files


def test_there_are_three_examples() -> None:
    assert {p.name for p in EXAMPLE_FILES} == {"tavern.json", "cliffside.json", "swamp.toml"}


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_matches_schema_and_loads(
    path: Path, validator: jsonschema.protocols.Validator
) -> None:
    doc = read_doc(path)
    errors = [e.message for e in validator.iter_errors(doc)]
    assert errors == []
    arena = load_arena(path)
    assert arena == parse_arena(doc, path.name)
    assert arena.id == path.stem


def test_tavern_contents() -> None:
    arena = load_arena(EXAMPLES / "tavern.json")
    assert arena.asset("bar_counter").position.ac_bonus == 2
    assert arena.asset("bar_counter").zone == "bar"
    assert {a.id for a in arena.assets_in("common_room")} == {"tables", "chairs"}
    (cellar_link,) = arena.links_between("cellar", "kitchen")
    assert cellar_link.direction_from("kitchen") == "below"
    assert cellar_link.direction_from("cellar") == "above"
    (stairs, railing) = arena.links_between("balcony", "common_room")
    assert stairs.direction_from("common_room") == railing.direction_from("common_room") == "above"
    assert arena.zone("bar").capacity == 4
    assert arena.zone("common_room").capacity == 36
    assert arena.asset("kitchen_fire").time_sensitive


def test_cliffside_contents() -> None:
    arena = load_arena(EXAMPLES / "cliffside.json")
    rope = arena.asset("rope")
    assert rope.kind == "prop"
    assert rope.crossing == ("clifftop",)
    (up,) = arena.links_between(rope.zone, "clifftop")
    assert not up.clear and up.direction_from("ledge") == "above"
    (chasm,) = arena.links_between("clifftop", "far_side")
    assert not chasm.clear
    assert any(link.mode == "climb" for link in arena.links)
    assert arena.is_straight("beach", "shallows", "reef")
    assert arena.is_straight("clifftop", "ledge", "beach")  # vertical
    assert arena.is_straight("beach", "ledge", "clifftop")


def test_swamp_contents() -> None:
    arena = load_arena(EXAMPLES / "swamp.toml")
    mud = arena.asset("sucking_mud")
    assert mud.kind == "terrain"
    assert mud.position.difficult
    assert mud.position.save is not None
    assert mud.position.save.ability == "str"
    assert mud.position.save.conditions == ("restrained",)
    fog = arena.asset("fog_cloud")
    assert fog.kind == "element"
    assert fog.position.advantage_on == ("stealth",)
    assert fog.position.disadvantage_on == ("ranged_attack",)
    spikes = arena.asset("wall_of_spikes")
    assert spikes.forced == ForcedEffect(
        SaveEffect(
            ability="dex",
            dc=None,
            damage="2d6",
            damage_type="piercing",
            conditions=("impaled",),
            description="Thrown against the stakes and impaled.",
        )
    )
    assert any(link.mode == "swim" for link in arena.links)


def _walk(value: object, path: str) -> Iterator[tuple[str, object]]:
    """Yield (schema-ish path, value) for every key, with array indexes dropped."""
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else key
            yield sub, item
            yield from _walk(item, sub)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, f"{path}[]")


def _schema_paths(schema: Doc) -> set[str]:
    defs = schema["$defs"]
    found: set[str] = set()

    def visit(node: Doc, path: str) -> None:
        if "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        if node.get("type") == "array" and "items" in node:
            visit(node["items"], f"{path}[]")
        for key, sub in node.get("properties", {}).items():
            child = f"{path}.{key}" if path else key
            found.add(child)
            visit(sub, child)

    visit(schema, "")
    return found


def test_examples_use_every_feature() -> None:
    used: dict[str, list[object]] = {}
    for path in EXAMPLE_FILES:
        for key, value in _walk(read_doc(path), ""):
            used.setdefault(key, []).append(value)
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert _schema_paths(schema) - set(used) == set()
    assert set(used["links[].direction"]) == {"beside", "above", "below"}
    assert set(used["links[].mode"]) == {"walk", "climb", "swim", "fly"}
    assert set(used["assets[].kind"]) == {"prop", "element", "terrain"}
    sizes = used["zones[].size"]
    assert {str(s).lower() for s in sizes if isinstance(s, str)} == {"small", "medium", "large"}
    assert any(isinstance(s, int) for s in sizes)
    assert False in used["links[].clear"]
    assert True in used["links[].blocks_sight"]
    assert True in used["zones[].difficult"]
    assert True in used["assets[].time_sensitive"]
    # A forced save with the forcer's DC (dc absent) and one with a fixed DC.
    forced = [s for s in used["assets[].forced.save"] if isinstance(s, dict)]
    assert any("dc" not in s for s in forced) and any("dc" in s for s in forced)


# ----------------------------------------------------------------- model and lookups


def test_named_sizes_are_case_insensitive() -> None:
    doc = base()
    doc["zones"][0]["size"] = "SMALL"
    doc["zones"][1]["size"] = "medium"
    doc["zones"][2]["size"] = " Large "
    arena = parse_arena(doc)
    assert [z.size for z in arena.zones] == [15, 30, 60]


def test_default_capacity() -> None:
    doc = base()
    doc["zones"][2]["capacity"] = 0
    arena = parse_arena(doc)
    assert arena.zone("hall").capacity == (30 // 5) ** 2 == 36
    assert arena.zone("yard").capacity == 144
    assert arena.zone("loft").capacity == 0
    assert default_capacity(15) == 9
    assert Zone("z", "Z", 15).capacity == 9
    assert Zone("z", "Z", 15, 2).capacity == 2


def test_defaults_are_filled_in() -> None:
    arena = parse_arena(base())
    link = arena.links[0]
    assert (link.clear, link.mode, link.blocks_sight) == (True, "walk", False)
    ladder = arena.asset("ladder")
    assert ladder.position == PositionEffect()
    assert (ladder.forced, ladder.time_sensitive, ladder.crossing) == (None, False, ())
    assert arena.zone("hall").difficult is False
    assert arena.description == "" and arena.straight_lines == ()


def test_links_are_optional_in_the_file() -> None:
    arena = parse_arena(
        {"id": "one", "name": "One", "zones": [{"id": "z", "name": "Z", "size": 5}]}
    )
    assert arena.links == () and arena.neighbours("z") == ()


def test_link_direction_from_and_other() -> None:
    up = Link("hall", "loft", "above")
    assert up.direction_from("hall") == "above"
    assert up.direction_from("loft") == "below"
    assert Link("hall", "cellar", "below").direction_from("cellar") == "above"
    side = Link("hall", "yard", "beside")
    assert side.direction_from("hall") == side.direction_from("yard") == "beside"
    assert up.other("hall") == "loft" and up.other("loft") == "hall"
    with pytest.raises(ValueError, match="not an end"):
        up.other("yard")
    with pytest.raises(ValueError, match="not an end"):
        up.direction_from("yard")


def test_neighbours_and_lookups() -> None:
    arena = parse_arena(base())
    hall_yard, hall_loft = arena.links
    assert arena.neighbours("hall") == ((hall_yard, "yard"), (hall_loft, "loft"))
    assert arena.neighbours("loft") == ((hall_loft, "hall"),)
    assert arena.links_between("loft", "hall") == (hall_loft,)
    assert arena.links_between("yard", "loft") == ()
    assert arena.zone("yard").name == "Yard"
    assert [a.id for a in arena.assets_in("hall")] == ["table", "ladder"]
    assert arena.assets_in("yard") == ()
    assert arena.asset("table").position.ac_bonus == 2
    assert arena.has_zone("hall") and not arena.has_zone("cellar")
    for call in (
        lambda: arena.zone("cellar"),
        lambda: arena.neighbours("cellar"),
        lambda: arena.assets_in("cellar"),
        lambda: arena.links_between("hall", "cellar"),
        lambda: arena.asset("chair"),
    ):
        with pytest.raises(KeyError):
            call()


def _line_arena() -> Arena:
    zones = tuple(Zone(z, z.title(), 30) for z in ("w", "c", "e", "n", "up", "top", "down"))
    links = (
        Link("w", "c", "beside"),
        Link("c", "e", "beside"),
        Link("c", "n", "beside"),
        Link("c", "up", "above", mode="climb"),
        Link("top", "up", "below"),  # up is below top
        Link("c", "down", "below"),
    )
    return Arena("lines", "Lines", zones, links, straight_lines=(("w", "c", "e"),))


def test_is_straight() -> None:
    arena = _line_arena()
    assert arena.is_straight("w", "c", "e")
    assert arena.is_straight("e", "c", "w")  # either direction along a line
    assert not arena.is_straight("w", "c", "n")  # a branch to the side
    assert not arena.is_straight("n", "c", "e")  # beside links not in a declared line
    assert arena.is_straight("down", "c", "up")  # vertical: above then above
    assert arena.is_straight("top", "up", "c")  # below then below, via an inverted link
    assert arena.is_straight("c", "up", "top")
    assert arena.is_straight("up", "c", "down")  # below then below
    assert not arena.is_straight("w", "c", "up")  # beside then above
    assert not arena.is_straight("up", "c", "up")  # below then above
    with pytest.raises(KeyError):
        arena.is_straight("w", "c", "nowhere")


def test_single_zone_arena() -> None:
    arena = single_zone_arena()
    assert [z.id for z in arena.zones] == ["field"]
    assert arena.zone("field").size == 30
    assert arena.links == () and arena.assets == ()
    assert single_zone_arena(60).zone("field").size == 60


def test_models_are_frozen_and_hashable() -> None:
    arena = load_arena(EXAMPLES / "tavern.json")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        arena.name = "x"  # type: ignore[misc]
    assert hash(arena) == hash(load_arena(EXAMPLES / "tavern.json"))
    assert arena == attrs.evolve(arena)


def test_direct_construction_is_checked() -> None:
    hall = Zone("hall", "Hall", 30)
    with pytest.raises(ArenaError) as info:
        Arena(
            "bad",
            "Bad",
            (hall, hall),
            (Link("hall", "cellar", "beside"),),
            (Asset("rope", "Rope", "prop", "attic", crossing=("hall",)),),
            (("hall", "cellar"),),
        )
    assert [p.where for p in info.value.problems] == [
        "zones[1].id",
        "links[0].b",
        "assets[0].zone",
        "assets[0].crossing[0]",
        "straight_lines[0]",
        "straight_lines[0][1]",
    ]
    with pytest.raises(ValueError):
        Zone("z", "Z", 0)
    with pytest.raises(ValueError):
        Zone("z", "Z", 30, -1)
    with pytest.raises(ValueError):
        Link("a", "a", "beside")
    with pytest.raises(ValueError):
        Link("a", "b", "up")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SaveEffect("luck")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SaveEffect("dex", damage="2d")
    with pytest.raises(ValueError):
        SaveEffect("dex", damage="2d6")  # no damage type
    with pytest.raises(ValueError):
        Asset("a", "A", "furniture", "z")  # type: ignore[arg-type]


# ----------------------------------------------------------------- validation errors

Mutation = Callable[[Doc], object]


def _set(path: str, value: object) -> Mutation:
    """A mutation setting a value at a dotted path with [i] indexes."""

    def mutate(doc: Doc) -> None:
        parts = path.replace("[", ".").replace("]", "").split(".")
        node: Any = doc
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        last = parts[-1]
        node[int(last) if last.isdigit() else last] = value

    return mutate


def _delete(path: str) -> Mutation:
    def mutate(doc: Doc) -> None:
        parts = path.replace("[", ".").replace("]", "").split(".")
        node: Any = doc
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        del node[parts[-1]]

    return mutate


def _append(path: str, value: object) -> Mutation:
    def mutate(doc: Doc) -> None:
        doc.setdefault(path, []).append(value)

    return mutate


def _crossing_unlinked(doc: Doc) -> None:
    doc["zones"].append({"id": "kitchen", "name": "Kitchen", "size": 15})
    doc["assets"][1]["crossing"] = ["kitchen"]


# (mutation, where, message fragment)
ERROR_CASES: dict[str, tuple[Mutation, str, str]] = {
    "missing arena id": (_delete("id"), "id", "required field is missing"),
    "missing zones": (_delete("zones"), "zones", "required field is missing"),
    "missing zone name": (_delete("zones[0].name"), "zones[0].name", "required field is missing"),
    "missing zone size": (_delete("zones[1].size"), "zones[1].size", "required field is missing"),
    "missing link direction": (
        _delete("links[1].direction"),
        "links[1].direction",
        "required field is missing",
    ),
    "missing asset kind": (_delete("assets[1].kind"), "assets[1].kind", "required field"),
    "missing forced save": (_set("assets[0].forced", {}), "assets[0].forced.save", "required"),
    "missing save ability": (
        _delete("assets[0].forced.save.ability"),
        "assets[0].forced.save.ability",
        "required field is missing",
    ),
    "root not an object": (lambda d: [d], "", "expected an object, got array"),
    "zones not an array": (_set("zones", {"hall": {}}), "zones", "expected an array, got object"),
    "zone not an object": (
        _append("zones", "cellar"),
        "zones[3]",
        "expected an object, got string",
    ),
    "name not a string": (_set("name", 7), "name", "expected a string, got integer 7"),
    "empty name": (_set("zones[0].name", "  "), "zones[0].name", "must not be empty"),
    "id with space": (
        _append("zones", {"id": "great hall", "name": "Great hall", "size": 60}),
        "zones[3].id",
        "no spaces",
    ),
    "size wrong type": (_set("zones[0].size", True), "zones[0].size", "expected feet"),
    "size float": (_set("zones[0].size", 30.5), "zones[0].size", "got number 30.5"),
    "capacity wrong type": (_set("zones[0].capacity", "9"), "zones[0].capacity", "an integer"),
    "difficult wrong type": (
        _set("zones[0].difficult", "yes"),
        "zones[0].difficult",
        'expected true or false, got string "yes"',
    ),
    "clear wrong type": (_set("links[0].clear", 0), "links[0].clear", "true or false"),
    "ac_bonus wrong type": (
        _set("assets[0].position.ac_bonus", "2"),
        "assets[0].position.ac_bonus",
        "expected an integer",
    ),
    "position not an object": (
        _set("assets[1].position", "behind"),
        "assets[1].position",
        "expected an object",
    ),
    "advantage_on not an array": (
        _set("assets[1].position.advantage_on", "stealth"),
        "assets[1].position.advantage_on",
        "expected an array",
    ),
    "roll kind not a word": (
        _set("assets[1].position.advantage_on", ["Ranged Attack"]),
        "assets[1].position.advantage_on[0]",
        "snake_case",
    ),
    "condition not a string": (
        _set("assets[0].forced.save.conditions", [3]),
        "assets[0].forced.save.conditions[0]",
        "expected a string",
    ),
    "unknown zone in link": (
        _set("links[1].b", "cellar"),
        "links[1].b",
        "unknown zone 'cellar'",
    ),
    "unknown zone in asset": (_set("assets[1].zone", "attic"), "assets[1].zone", "unknown zone"),
    "unknown zone in crossing": (
        _set("assets[1].crossing", ["loft", "roof"]),
        "assets[1].crossing[1]",
        "unknown zone 'roof'",
    ),
    "unknown zone in straight line": (
        _set("straight_lines", [["yard", "hall", "road"]]),
        "straight_lines[0][2]",
        "unknown zone 'road'",
    ),
    "zero size": (_set("zones[0].size", 0), "zones[0].size", "positive number of feet, got 0"),
    "negative size": (_set("zones[2].size", -15), "zones[2].size", "positive"),
    "unknown named size": (
        _set("zones[0].size", "Huge"),
        "zones[0].size",
        "unknown named size 'Huge'",
    ),
    "negative capacity": (_set("zones[1].capacity", -1), "zones[1].capacity", "0 or more"),
    "duplicate zone id": (
        _append("zones", {"id": "hall", "name": "Other hall", "size": 30}),
        "zones[3].id",
        "duplicate zone id 'hall' (first used at zones[0])",
    ),
    "duplicate asset id": (
        _set("assets[1].id", "table"),
        "assets[1].id",
        "duplicate asset id 'table'",
    ),
    "unknown asset kind": (
        _set("assets[1].kind", "furniture"),
        "assets[1].kind",
        "unknown asset kind 'furniture'",
    ),
    "unknown direction": (_set("links[0].direction", "north"), "links[0].direction", "'north'"),
    "unknown mode": (_set("links[0].mode", "teleport"), "links[0].mode", "unknown mode"),
    "unknown ability": (
        _set("assets[0].forced.save.ability", "luck"),
        "assets[0].forced.save.ability",
        "unknown ability 'luck'",
    ),
    "self link": (_set("links[0].b", "hall"), "links[0].b", "cannot join zone 'hall' to itself"),
    "contradicting directions": (
        _append("links", {"a": "loft", "b": "hall", "direction": "above"}),
        "links[2].direction",
        "contradicts links[1]",
    ),
    "unknown top-level key": (
        _set("straight_line", []),
        "straight_line",
        "unknown field 'straight_line' (did you mean 'straight_lines'?)",
    ),
    "unknown zone key": (_set("zones[0].sise", 30), "zones[0].sise", "did you mean 'size'?"),
    "unknown link key": (_set("links[0].blocks", True), "links[0].blocks", "unknown field"),
    "unknown asset key": (_set("assets[0].zones", "hall"), "assets[0].zones", "unknown field"),
    "unknown position key": (
        _set("assets[0].position.cover", 2),
        "assets[0].position.cover",
        "unknown field 'cover'",
    ),
    "unknown save key": (
        _set("assets[0].forced.save.DC", 12),
        "assets[0].forced.save.DC",
        "unknown field 'DC'",
    ),
    "bad dice": (
        _set("assets[0].forced.save.damage", "2d"),
        "assets[0].forced.save.damage",
        "bad dice expression '2d'",
    ),
    "dice with spaces": (
        _set("assets[0].forced.save.damage", "2d6 + 1"),
        "assets[0].forced.save.damage",
        "bad dice expression",
    ),
    "dc zero": (_set("assets[0].forced.save.dc", 0), "assets[0].forced.save.dc", "at least 1"),
    "damage without type": (
        _delete("assets[0].forced.save.damage_type"),
        "assets[0].forced.save.damage_type",
        "needs a damage_type",
    ),
    "type without damage": (
        _delete("assets[0].forced.save.damage"),
        "assets[0].forced.save.damage_type",
        "damage_type given without damage",
    ),
    "unknown damage type": (
        _set("assets[0].forced.save.damage_type", "sonic"),
        "assets[0].forced.save.damage_type",
        "unknown damage type 'sonic'",
    ),
    "no zones": (_set("zones", []), "zones", "at least one zone"),
    "short straight line": (
        _set("straight_lines", [["yard", "hall"]]),
        "straight_lines[0]",
        "at least 3 zones",
    ),
    "straight line not linked": (
        _set("straight_lines", [["yard", "loft", "hall"]]),
        "straight_lines[0][1]",
        "zone 'loft' is not linked to 'yard'",
    ),
    "straight line repeats": (
        _set("straight_lines", [["yard", "hall", "yard"]]),
        "straight_lines[0][2]",
        "appears twice",
    ),
    "crossing own zone": (
        _set("assets[1].crossing", ["yard", "hall"]),
        "assets[1].crossing[1]",
        "cannot cross to its own zone",
    ),
    "crossing to unlinked zone": (
        _crossing_unlinked,
        "assets[1].crossing[0]",
        "zone 'kitchen' is not linked to 'hall'",
    ),
}


@pytest.mark.parametrize("case", list(ERROR_CASES), ids=str)
def test_validation_error(case: str) -> None:
    mutate, where, fragment = ERROR_CASES[case]
    doc = base()
    replaced = mutate(doc)
    found = problems_of(doc if replaced is None else replaced)
    assert len(found) == 1, found
    assert found[0][0] == where
    assert fragment in found[0][1]


def test_base_document_is_valid(validator: jsonschema.protocols.Validator) -> None:
    parse_arena(base())
    assert list(validator.iter_errors(base())) == []


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    doc = base()
    doc["zones"][1]["size"] = -5
    doc["links"][1]["b"] = "cellar"
    doc["assets"][0]["kind"] = "furniture"
    doc["assets"][0]["forced"]["save"]["ability"] = "luck"
    path = tmp_path / "tavern.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ArenaError) as info:
        load_arena(path)
    err = info.value
    assert err.source == str(path)
    assert [p.where for p in err.problems] == [
        "zones[1].size",
        "links[1].b",
        "assets[0].kind",
        "assets[0].forced.save.ability",
    ]
    lines = str(err).splitlines()
    assert lines[0] == f"{path}: invalid arena (4 problems)"
    assert lines[2] == f"{path}: links[1].b: unknown zone 'cellar'"
    assert len(lines) == 5


def test_error_message_format() -> None:
    doc = base()
    doc["links"][1]["b"] = "cellar"
    with pytest.raises(ArenaError) as info:
        parse_arena(doc, "tavern.json")
    assert str(info.value) == (
        "tavern.json: invalid arena (1 problem)\ntavern.json: links[1].b: unknown zone 'cellar'"
    )
    assert info.value.problems == [ArenaProblem("links[1].b", "unknown zone 'cellar'")]
    assert isinstance(info.value, ValueError)
    copied = pickle.loads(pickle.dumps(info.value))
    assert str(copied) == str(info.value)


def test_parse_arena_default_source() -> None:
    with pytest.raises(ArenaError, match=r"^<arena>: "):
        parse_arena(None)


def test_unknown_zone_does_not_cascade_when_zones_are_broken() -> None:
    doc = base()
    doc["zones"] = "hall, yard"
    assert problems_of(doc) == [("zones", 'expected an array, got string "hall, yard"')]


def test_a_broken_zone_still_defines_its_id() -> None:
    doc = base()
    doc["zones"][2]["size"] = "tiny"
    # The links and assets that refer to 'loft' are not reported as well.
    assert [w for w, _ in problems_of(doc)] == ["zones[2].size"]


# ----------------------------------------------------------------- files and syntax


def test_json_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "id": "x",\n  "name": "X"\n  "zones": []\n}\n', encoding="utf-8")
    with pytest.raises(ArenaError) as info:
        load_arena(path)
    (problem,) = info.value.problems
    assert problem.where == "line 4"
    assert problem.message.startswith("invalid JSON: Expecting ',' delimiter")
    assert f"{path}: line 4: invalid JSON" in str(info.value)


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('id = "x"\nname = "X"\n[[zones]\nid = "a"\n', encoding="utf-8")
    with pytest.raises(ArenaError) as info:
        load_arena(str(path))
    (problem,) = info.value.problems
    assert problem.where == "line 3"
    assert problem.message.startswith("invalid TOML: ")
    assert f"{path}: line 3: invalid TOML" in str(info.value)


def test_json_duplicate_keys_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    text = json.dumps(base()).replace('"size": 30', '"size": 30, "size": 60', 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ArenaError) as info:
        load_arena(path)
    assert [(p.where, p.message) for p in info.value.problems] == [
        ("zones[0].size", "field given more than once")
    ]


def test_toml_problems_use_the_same_paths(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'id = "t"\nname = "T"\n'
        '[[zones]]\nid = "a"\nname = "A"\nsize = "Tiny"\n'
        '[[links]]\na = "a"\nb = "b"\ndirection = "beside"\n',
        encoding="utf-8",
    )
    with pytest.raises(ArenaError) as info:
        load_arena(path)
    assert [p.where for p in info.value.problems] == ["zones[0].size", "links[0].b"]


def test_json_and_toml_give_the_same_arena(tmp_path: Path) -> None:
    toml_text = """
id = "test"
name = "Test arena"
straight_lines = [["yard", "hall", "porch"]]

[[zones]]
id = "hall"
name = "Hall"
size = "Medium"

[[zones]]
id = "yard"
name = "Yard"
size = 60

[[zones]]
id = "porch"
name = "Porch"
size = "small"
capacity = 3

[[links]]
a = "yard"
b = "hall"
direction = "beside"

[[links]]
a = "hall"
b = "porch"
direction = "beside"
clear = false

[[assets]]
id = "rope"
name = "Rope"
kind = "prop"
zone = "hall"
crossing = ["porch"]
[assets.position]
expertise_on = ["tumble"]
[assets.forced.save]
ability = "str"
"""
    doc = {
        "id": "test",
        "name": "Test arena",
        "zones": [
            {"id": "hall", "name": "Hall", "size": 30},
            {"id": "yard", "name": "Yard", "size": "Large"},
            {"id": "porch", "name": "Porch", "size": 15, "capacity": 3},
        ],
        "links": [
            {"a": "yard", "b": "hall", "direction": "beside"},
            {"a": "hall", "b": "porch", "direction": "beside", "clear": False},
        ],
        "assets": [
            {
                "id": "rope",
                "name": "Rope",
                "kind": "prop",
                "zone": "hall",
                "crossing": ["porch"],
                "position": {"expertise_on": ["tumble"]},
                "forced": {"save": {"ability": "str", "dc": None}},
            }
        ],
        "straight_lines": [["yard", "hall", "porch"]],
    }
    (tmp_path / "a.toml").write_text(toml_text, encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps(doc), encoding="utf-8")
    from_toml = load_arena(tmp_path / "a.toml")
    assert from_toml == load_arena(tmp_path / "a.json")
    assert from_toml.is_straight("porch", "hall", "yard")


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "arena.yaml"
    path.write_text("id: x\n", encoding="utf-8")
    with pytest.raises(ArenaError, match=r"unsupported file type '\.yaml'"):
        load_arena(path)


def test_missing_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_arena(tmp_path / "nope.json")


# ----------------------------------------------------------------- schema agreement

BAD_FOR_BOTH = [
    "missing zone name",
    "zones not an array",
    "name not a string",
    "empty name",
    "id with space",
    "size wrong type",
    "size float",
    "zero size",
    "unknown named size",
    "negative capacity",
    "unknown asset kind",
    "unknown direction",
    "unknown mode",
    "unknown ability",
    "unknown top-level key",
    "unknown save key",
    "roll kind not a word",
    "bad dice",
    "dc zero",
    "damage without type",
    "type without damage",
    "unknown damage type",
    "no zones",
    "short straight line",
    "straight line repeats",
]


@pytest.mark.parametrize("case", BAD_FOR_BOTH, ids=str)
def test_schema_and_loader_reject(case: str, validator: jsonschema.protocols.Validator) -> None:
    mutate, _, _ = ERROR_CASES[case]
    doc = base()
    replaced = mutate(doc)
    bad = doc if replaced is None else replaced
    assert list(validator.iter_errors(bad)), "schema accepted it"
    with pytest.raises(ArenaError):
        parse_arena(bad)


def test_schema_accepts_what_loader_accepts(validator: jsonschema.protocols.Validator) -> None:
    doc = base()
    doc["zones"][0]["size"] = "mEdIuM"
    doc["assets"][0]["forced"]["save"].update(dc=None, damage="d8+1")
    doc["assets"][1]["position"] = {"ac_bonus": -2, "conditions": ["prone"]}
    doc["straight_lines"] = [["yard", "hall", "loft"]]
    doc["$schema"] = "arena.schema.json"
    parse_arena(copy.deepcopy(doc))
    assert list(validator.iter_errors(doc)) == []


# ----------------------------------------------------------------- robustness

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-100, 100) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["id", "name", "size", "zones", "links", "a", "b", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_garbage_gives_arena_error_only(data: object) -> None:
    try:
        parse_arena(data)
    except ArenaError as err:
        assert err.problems


# ----------------------------------------------------------------- one set of checks


def test_every_problem_of_one_object_is_reported() -> None:
    doc = base()
    doc["zones"][0].update(id="great hall", name=" ", size=0, capacity=-1, difficult="no")
    doc["zones"][0]["sise"] = 30
    assert problems_of(doc) == [
        ("zones[0].sise", "unknown field 'sise' (did you mean 'size'?)"),
        ("zones[0].id", "an id must be non-empty and contain no spaces, got 'great hall'"),
        ("zones[0].name", "a name must not be empty"),
        ("zones[0].size", "size must be a positive number of feet, got 0"),
        ("zones[0].capacity", "capacity must be 0 or more, got -1"),
        ("zones[0].difficult", 'expected true or false, got string "no"'),
        # 'hall' is no longer defined, so what refers to it is reported too.
        ("links[0].a", "unknown zone 'hall'"),
        ("links[1].a", "unknown zone 'hall'"),
        ("assets[0].zone", "unknown zone 'hall'"),
        ("assets[1].zone", "unknown zone 'hall'"),
    ]


def test_references_in_a_broken_object_are_still_checked() -> None:
    doc = base()
    doc["links"][1].update(b="attic", mode="teleport")
    doc["assets"][1].update(zone="cellar", kind="furniture")
    assert problems_of(doc) == [
        (
            "links[1].mode",
            "unknown mode 'teleport'; expected one of 'walk', 'climb', 'swim', 'fly'",
        ),
        ("links[1].b", "unknown zone 'attic'"),
        (
            "assets[1].kind",
            "unknown asset kind 'furniture'; expected one of 'prop', 'element', 'terrain'",
        ),
        ("assets[1].zone", "unknown zone 'cellar'"),
    ]


def test_a_broken_link_still_joins_its_zones() -> None:
    doc = base()
    doc["links"][1]["mode"] = "teleport"
    doc["assets"][1]["crossing"] = ["loft"]
    doc["straight_lines"] = [["yard", "hall", "loft"]]
    assert [w for w, _ in problems_of(doc)] == ["links[1].mode"]


def test_zones_without_a_usable_id_do_not_make_every_reference_unknown() -> None:
    doc = base()
    doc["zones"] = ["hall", {"name": "Yard", "size": 30}]
    assert problems_of(doc) == [
        ("zones[0]", 'expected an object, got string "hall"'),
        ("zones[1].id", "required field is missing"),
    ]


def test_checks_across_fields_are_reported_at_the_field_they_blame() -> None:
    doc = base()
    doc["links"][0]["b"] = "hall"
    doc["assets"][0]["forced"]["save"]["damage_type"] = ""
    assert problems_of(doc) == [
        ("links[0].b", "a link cannot join zone 'hall' to itself"),
        ("assets[0].forced.save.damage_type", "damage '1d6' needs a damage_type"),
    ]


def test_null_is_refused_for_objects_but_allowed_for_dc_and_damage() -> None:
    doc = base()
    doc["assets"][0]["forced"] = None
    doc["assets"][1]["position"] = {"save": None}
    assert problems_of(doc) == [
        ("assets[0].forced", "expected an object, got null"),
        ("assets[1].position.save", "expected an object, got null"),
    ]
    doc = base()
    doc["assets"][1]["forced"] = {"save": {"ability": "wis", "dc": None, "damage": None}}
    assert parse_arena(doc).asset("ladder").forced == ForcedEffect(SaveEffect("wis"))


def test_schema_key_must_be_text_and_is_only_allowed_at_the_top() -> None:
    doc = base()
    doc["$schema"] = 3
    doc["zones"][0]["$schema"] = "x"
    assert problems_of(doc) == [
        ("$schema", "expected a string, got integer 3"),
        ("zones[0].$schema", "unknown field '$schema'"),
    ]


def test_words_are_checked_one_by_one() -> None:
    doc = base()
    doc["assets"][1]["tags"] = ["trap", "Trip Wire", "fire-trap"]
    assert problems_of(doc) == [
        ("assets[1].tags[1]", "expected a lower-case snake_case word, got 'Trip Wire'"),
        ("assets[1].tags[2]", "expected a lower-case snake_case word, got 'fire-trap'"),
    ]


def test_the_model_and_the_loader_share_their_rules() -> None:
    """A rule that the loader reports is also refused when building the model in Python."""
    for build in (
        lambda: Zone("hall", " ", 30),
        lambda: Zone("hall", "Hall", 30, "9"),  # type: ignore[arg-type]
        lambda: Asset("rope", "Rope", "prop", "hall", tags=("Not A Word",)),
        lambda: SaveEffect("dex", damage_type="sonic"),
        lambda: SaveEffect("dex", damage_type="fire"),
        lambda: Link("a", "b", "beside", mode="jump"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValueError):
            build()
    hall = Zone("hall", "Hall", 30)
    with pytest.raises(ArenaError) as info:
        Arena(
            "x",
            "X",
            (hall, Zone("yard", "Yard", 30)),
            (Link("hall", "yard", "beside"), Link("yard", "hall", "above")),
        )
    assert info.value.problems == [
        ArenaProblem(
            "links[1].direction",
            "contradicts links[0]: 'yard' cannot be both beside and below 'hall'",
        )
    ]


def test_move_modes_and_link_modes() -> None:
    import zonekeep.sdk as sdk
    from zonekeep.sdk import _arena, _types, _vocabulary

    assert sdk.MOVE_MODES == ("walk", "climb", "swim", "fly", "jump", "crawl")
    assert sdk.LINK_MODES == ("walk", "climb", "swim", "fly")
    assert sdk.ABILITIES == ("str", "dex", "con", "int", "wis", "cha")
    assert "thunder" in sdk.DAMAGE_TYPES
    # One definition, re-exported where the names were imported from before.
    assert _types.MOVE_MODES is _vocabulary.MOVE_MODES is sdk.MOVE_MODES
    assert _types.ABILITIES is _arena.ABILITIES is _vocabulary.ABILITIES
    assert _arena.DAMAGE_TYPES is _vocabulary.DAMAGE_TYPES
    assert not hasattr(_arena, "MOVE_MODES")
    doc = base()
    doc["links"][0]["mode"] = "crawl"  # a creature may crawl, but no link needs it
    assert [w for w, _ in problems_of(doc)] == ["links[0].mode"]
