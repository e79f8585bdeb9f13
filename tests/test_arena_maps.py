"""Arenas over a battle map (protocol 1.6): the arena's ``map`` and each zone's
``shape`` in the image's pixels, checked by the loader and by the arena schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zonekeep.sdk import Arena, ArenaError, ArenaMap, ZoneShape, parse_arena
from zonekeep.sdk.host import converter, polygon_problem

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads(
    (ROOT / "protocol" / "schemas" / "strict" / "arena.schema.json").read_text(encoding="utf-8")
)
IMAGE = "0123456789abcdef" * 4


def mapped(**shapes: Any) -> dict[str, Any]:
    """A two-zone arena over a 400x300 map, with ``shapes`` by zone id."""
    zones = [{"id": z, "name": z.title(), "size": 30} for z in ("hall", "loft")]
    for zone in zones:
        if zone["id"] in shapes:
            zone["shape"] = shapes[zone["id"]]
    return {
        "id": "mapped",
        "name": "Mapped",
        "map": {"image": IMAGE, "width": 400, "height": 300},
        "zones": zones,
        "links": [{"a": "hall", "b": "loft", "direction": "above"}],
    }


def problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ArenaError) as caught:
        parse_arena(data)
    return [(p.where, p.message) for p in caught.value.problems]


def schema_errors(data: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return [e.message for e in validator.iter_errors(data)]


def test_a_map_and_shapes_load_into_the_model() -> None:
    data = mapped(
        hall={"rect": [0, 0, 200, 300]},
        loft={"polygon": [[200, 0], [400, 0], [400, 300], [250, 300]]},
    )
    arena = parse_arena(data)
    assert arena.map == ArenaMap(image=IMAGE, width=400, height=300)
    assert arena.zone("hall").shape == ZoneShape(rect=(0, 0, 200, 300))
    assert arena.zone("loft").shape == ZoneShape(
        polygon=((200, 0), (400, 0), (400, 300), (250, 300))
    )
    assert arena.zone("loft").shape.bounds() == (200, 0, 400, 300)  # type: ignore[union-attr]
    assert schema_errors(data) == []


def test_a_map_without_shapes_and_an_arena_without_a_map_load() -> None:
    assert parse_arena(mapped()).zone("hall").shape is None
    plain = mapped()
    del plain["map"]
    arena = parse_arena(plain)
    assert arena.map is None
    assert schema_errors(plain) == []


def test_the_model_survives_the_wire_converter_and_old_states_without_the_fields() -> None:
    arena = parse_arena(mapped(hall={"rect": [10, 20, 30, 40]}))
    data = converter.unstructure(arena)
    assert data["map"] == {"image": IMAGE, "width": 400, "height": 300}
    assert data["zones"][0]["shape"] == {"rect": [10, 20, 30, 40], "polygon": None}
    assert converter.structure(data, Arena) == arena
    old = copy.deepcopy(data)  # as stored before protocol 1.6
    del old["map"]
    for zone in old["zones"]:
        del zone["shape"]
    assert converter.structure(old, Arena).map is None


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        (
            {"rect": [300, 0, 101, 10]},
            ("zones[0].shape.rect", "the shape reaches (401, 10), outside the 400x300 map"),
        ),
        (
            {"polygon": [[0, 0], [10, 0], [10, 301]]},
            ("zones[0].shape.polygon", "the shape reaches (10, 301), outside the 400x300 map"),
        ),
        (
            {"rect": [0, 0, 10]},
            ("zones[0].shape.rect", "a rect is [x, y, width, height], got 3 numbers"),
        ),
        (
            {"rect": [-1, 0, 10, 10]},
            (
                "zones[0].shape.rect",
                "a rect's corner must not be left of or above the image, got (-1, 0, 10, 10)",
            ),
        ),
        (
            {"rect": [0, 0, 0, 10]},
            (
                "zones[0].shape.rect",
                "a rect's width and height must be at least 1, got (0, 0, 0, 10)",
            ),
        ),
        (
            {"polygon": [[0, 0], [10, 0]]},
            ("zones[0].shape.polygon", "a polygon has 3 to 64 points, got 2"),
        ),
        (
            {"polygon": [[i, i * i % 7] for i in range(65)]},
            ("zones[0].shape.polygon", "a polygon has 3 to 64 points, got 65"),
        ),
        (
            {"polygon": [[0, 0], [10, 10], [0, 10], [10, 0]]},
            ("zones[0].shape.polygon", "a polygon's sides must not cross (side 1 crosses side 3)"),
        ),
        (
            {"polygon": [[0, 0], [5, 5], [10, 10]]},
            (
                "zones[0].shape.polygon",
                "a polygon must enclose an area (its points are on one line)",
            ),
        ),
        (
            {"polygon": [[0, 0], [10, 0], [0, 0], [0, 10]]},
            ("zones[0].shape.polygon", "a polygon must not repeat a point"),
        ),
        (
            {"polygon": [[0, 0], [10, 0, 3], [0, 10]]},
            ("zones[0].shape.polygon", "point 1 must be [x, y], got 3 numbers"),
        ),
        ({}, ("zones[0].shape.rect", "a shape is a 'rect' or a 'polygon' (exactly one)")),
        (
            {"rect": [0, 0, 1, 1], "polygon": [[0, 0], [1, 0], [0, 1]]},
            ("zones[0].shape.rect", "a shape is a 'rect' or a 'polygon' (exactly one)"),
        ),
        (
            {"rect": [0, 0, 1.5, 1]},
            ("zones[0].shape.rect[2]", "expected an integer, got number 1.5"),
        ),
        (
            {"circle": [0, 0, 5]},
            ("zones[0].shape.circle", "unknown field 'circle'"),
        ),
    ],
)
def test_a_broken_shape_is_a_problem_at_its_place(
    shape: dict[str, Any], expected: tuple[str, str]
) -> None:
    data = mapped(hall=shape)
    assert expected in problems(data)
    # What the schema cannot say (the image's size, a side of at least 1, geometry) only
    # the loader checks; the schema refuses the rest too.
    loader_only = ("the shape reaches", "a rect's width", "a polygon's sides", "a polygon must")
    assert bool(schema_errors(data)) != expected[1].startswith(loader_only)


def test_a_shape_needs_a_map() -> None:
    data = mapped(hall={"rect": [0, 0, 10, 10]})
    del data["map"]
    assert problems(data) == [("zones[0].shape", "a zone's shape needs the arena's 'map'")]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "image",
            "ABC",
            'an image id is the 64 lower-case hex digits of its sha256, got string "ABC"',
        ),
        ("image", IMAGE.upper(), "an image id is the 64 lower-case hex digits of its sha256"),
        ("width", 0, "expected 1 to 16384 pixels, got 0"),
        ("height", 16385, "expected 1 to 16384 pixels, got 16385"),
        ("width", "400", 'expected an integer, got string "400"'),
    ],
)
def test_a_broken_map_is_a_problem(field: str, value: object, expected: str) -> None:
    data = mapped()
    data["map"][field] = value
    found = problems(data)
    assert len(found) == 1
    assert found[0][0] == f"map.{field}"
    assert found[0][1].startswith(expected)
    assert schema_errors(data)


def test_a_map_given_as_null_or_with_unknown_fields_is_refused() -> None:
    data = mapped()
    data["map"] = None
    assert problems(data) == [("map", "expected an object, got null")]
    data["map"] = {"image": IMAGE, "width": 1, "height": 1, "url": "http://x"}
    assert problems(data) == [("map.url", "unknown field 'url'")]


def test_polygon_problem_accepts_a_concave_polygon_and_names_the_crossing() -> None:
    concave = [(0, 0), (10, 0), (10, 10), (5, 4), (0, 10)]
    assert polygon_problem(concave) is None
    assert polygon_problem([(0, 0), (10, 0), (0, 10), (10, 10)]) == (
        "a polygon's sides must not cross (side 0 crosses side 2)"
    )
