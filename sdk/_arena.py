"""Arena data model and loader.

An arena is a set of zones joined by links, plus the assets (props, elements,
terrain) that sit in those zones.  This module holds the immutable data types and
the loader that turns a GM's JSON or TOML file into them.  It contains no movement
rules: those live in the engine, which asks an :class:`Arena` questions such as
"what is beside this zone?" or "is this path straight?".

The file format is documented in ``docs/arenas.md`` and described by the JSON
Schema ``protocol/schemas/arena.schema.json`` (generated from these classes).

Each check is written once.  A field's own rule (an id without spaces, a dice
expression, one of a set of names...) is a :class:`_Rule` validator on the attrs
field; a check across the fields of one object raises :class:`_FieldError` naming
the field to blame; checks across the arena (unknown zones, duplicate ids, straight
lines) are :func:`_cross_problems`, which :class:`Arena` runs on construction.  The
loader structures a document with cattrs (detailed validation), which runs the same
rules at each field, and turns cattrs' path-aware errors into :class:`ArenaProblem`
entries, every problem of a file at once.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import AttributeValidationNote, IterableValidationNote
from cattrs.gen import make_dict_structure_fn, override

from ._json import strict_containers
from ._schema import check_schema, schema_problems
from ._vocabulary import ABILITIES, DAMAGE_TYPES, LINK_MODES, Ability, LinkMode

if TYPE_CHECKING:
    from ._conditions import AssetTagSpec

__all__ = [
    "ABILITIES",
    "ASSET_KINDS",
    "DAMAGE_TYPES",
    "DIRECTIONS",
    "LINK_MODES",
    "MAX_MAP_SIDE",
    "MAX_POLYGON_POINTS",
    "NAMED_ZONE_SIZES",
    "Ability",
    "Arena",
    "ArenaError",
    "ArenaMap",
    "ArenaProblem",
    "Asset",
    "AssetKind",
    "Direction",
    "ForcedEffect",
    "Link",
    "LinkMode",
    "PositionEffect",
    "SaveEffect",
    "Zone",
    "ZoneShape",
    "asset_data_problems",
    "check_tag_schema",
    "default_capacity",
    "load_arena",
    "parse_arena",
    "polygon_problem",
    "single_zone_arena",
]

Direction = Literal["beside", "above", "below"]
AssetKind = Literal["prop", "element", "terrain"]

DIRECTIONS: Final[tuple[Direction, ...]] = get_args(Direction)
ASSET_KINDS: Final[tuple[AssetKind, ...]] = get_args(AssetKind)

#: Named zone sizes (keys are lower case; the loader matches case-insensitively).
NAMED_ZONE_SIZES: Final[Mapping[str, int]] = {"small": 15, "medium": 30, "large": 60}

_INVERSE: Final[Mapping[Direction, Direction]] = {
    "beside": "beside",
    "above": "below",
    "below": "above",
}

# A dice expression: "2d6", "d8", "1d10+2", "3d4-1", or a flat amount "5".
_DICE_RE: Final = re.compile(r"(?:[1-9][0-9]*)?d[1-9][0-9]*(?:[+-][0-9]+)?|[1-9][0-9]*")
# Ids: non-empty, no whitespace.
_ID_RE: Final = re.compile(r"\S+")
# Roll kinds, conditions and tags: lower-case snake_case words, or a plugin's namespaced
# id made of such words ("hazards.burning").
_WORD_RE: Final = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*")


def default_capacity(size: int) -> int:
    """The capacity a zone of ``size`` feet gets when none is given.

    It is the number of 5-foot squares in a square zone whose side is ``size``:
    ``(size // 5) ** 2``.  Small (15 ft) gives 9, Medium (30 ft) 36, Large (60 ft) 144.
    """
    return (size // 5) ** 2


# --------------------------------------------------------------------------- field rules


@attrs.frozen
class _Rule:
    """An attrs validator: ``check`` raises ValueError for a bad value, or for a bad
    item of a tuple when ``each``.  The loader runs the same check on each decoded
    value and reports its message at the field's (or the item's) path."""

    check: Callable[[Any], None]
    each: bool = False

    def __call__(self, _instance: object, _attribute: object, value: Any) -> None:
        for item in value if self.each else (value,):
            self.check(item)


class _FieldError(ValueError):
    """A check across several fields of one object failed; ``field`` is where the
    loader reports it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _id(value: str) -> None:
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise ValueError(f"an id must be non-empty and contain no spaces, got {value!r}")


def _name(value: str) -> None:
    if not str(value).strip():
        raise ValueError("a name must not be empty")


def _word(value: str) -> None:
    if not isinstance(value, str) or not _WORD_RE.fullmatch(value):
        raise ValueError(f"expected a lower-case snake_case word, got {value!r}")


def _dice(value: str | None) -> None:
    if value is not None and not _DICE_RE.fullmatch(value):
        raise ValueError(f"bad dice expression {value!r}; expected e.g. '2d6', 'd8+1' or '5'")


def _at_least(least: int, message: str) -> _Rule:
    def check(value: int | None) -> None:
        if value is not None and (type(value) is not int or value < least):
            raise ValueError(f"{message}, got {value!r}")

    return _Rule(check)


def _one_of(what: str, choices: Sequence[str], *, blank: bool = False) -> _Rule:
    def check(value: str) -> None:
        if value not in choices and not (blank and value == ""):
            options = ", ".join(repr(c) for c in choices)
            raise ValueError(f"unknown {what} {value!r}; expected one of {options}")

    return _Rule(check)


_ID: Final = _Rule(_id)
_NAME: Final = _Rule(_name)
_WORDS: Final = _Rule(_word, each=True)


# --------------------------------------------------------------------------- model


@attrs.frozen
class SaveEffect:
    """A saving throw an asset forces on a creature.

    Guarantees: ``ability`` is one of :data:`ABILITIES`; ``dc`` is ``None`` or at
    least 1; ``damage`` is ``None`` or a dice expression (``"2d6"``, ``"d8+1"``,
    ``"5"``); ``damage_type`` is non-empty (one of :data:`DAMAGE_TYPES`) exactly when
    ``damage`` is set; ``conditions`` are snake_case condition names.

    ``dc`` of ``None`` means the DC is not fixed by the asset: the creature that
    caused the effect uses its maneuver DC (physical means) or its spell save DC
    (magic).  ``damage`` and ``conditions`` apply on a failed save.
    """

    ability: Ability = attrs.field(validator=_one_of("ability", ABILITIES))
    dc: int | None = attrs.field(
        default=None, validator=_at_least(1, "dc must be at least 1 (or null for the forcer's DC)")
    )
    damage: str | None = attrs.field(default=None, validator=_Rule(_dice))
    damage_type: str = attrs.field(
        default="", validator=_one_of("damage type", DAMAGE_TYPES, blank=True)
    )
    conditions: tuple[str, ...] = attrs.field(default=(), validator=_WORDS)
    description: str = ""

    def __attrs_post_init__(self) -> None:
        if self.damage is not None and not self.damage_type:
            raise _FieldError("damage_type", f"damage {self.damage!r} needs a damage_type")
        if self.damage is None and self.damage_type:
            raise _FieldError("damage_type", "damage_type given without damage")


@attrs.frozen
class PositionEffect:
    """What taking position at an asset grants or costs its occupant.

    Guarantees: every roll kind and condition is a snake_case word.  Roll kinds
    name the rolls affected: ``"attack"`` (all attack rolls the occupant makes),
    ``"melee_attack"``, ``"ranged_attack"``, ``"spell_attack"``, ``"attacked"``
    (attack rolls made *against* the occupant), saves such as ``"dex_save"``, checks
    such as ``"stealth"`` or ``"perception"``, and ``"tumble"``.  The vocabulary is
    open (any snake_case word is accepted) so plugins can add kinds of their own.

    * ``ac_bonus``: added to the occupant's AC (2 is half cover, 5 three-quarters;
      negative values are a penalty).
    * ``advantage_on`` / ``disadvantage_on`` / ``expertise_on``: roll kinds that get
      advantage, disadvantage or an expertise die while in position.
    * ``difficult``: the occupant moves as in difficult terrain.
    * ``conditions``: conditions the occupant has while in position.
    * ``save``: a save forced on a creature when it takes position (failing applies
      the save's damage and conditions).
    """

    ac_bonus: int = 0
    advantage_on: tuple[str, ...] = attrs.field(default=(), validator=_WORDS)
    disadvantage_on: tuple[str, ...] = attrs.field(default=(), validator=_WORDS)
    expertise_on: tuple[str, ...] = attrs.field(default=(), validator=_WORDS)
    difficult: bool = False
    conditions: tuple[str, ...] = attrs.field(default=(), validator=_WORDS)
    save: SaveEffect | None = None


@attrs.frozen
class ForcedEffect:
    """What happens when a creature is forced (pushed, thrown) into an asset.

    Being forced into an asset also counts as taking position at it.  ``save`` is
    always present. Its save is made against the forcer's maneuver DC or spell save
    DC; the save's own ``dc`` applies only when nobody forced the move (the GM's
    ``force`` without a forcer: a trap, a fall).
    """

    save: SaveEffect


#: The most points a zone's polygon may have, and the largest side of a map image.
MAX_POLYGON_POINTS: Final = 64
MAX_MAP_SIDE: Final = 16384

_SHA256_RE: Final = re.compile(r"[0-9a-f]{64}")


def _image_id(value: str) -> None:
    if not isinstance(value, str) or not _SHA256_RE.fullmatch(value):
        raise ValueError(
            f"an image id is the 64 lower-case hex digits of its sha256, got {_shown(value)}"
        )


def _side(value: int) -> None:
    if type(value) is not int or not 1 <= value <= MAX_MAP_SIDE:
        raise ValueError(f"expected 1 to {MAX_MAP_SIDE} pixels, got {value!r}")


@attrs.frozen
class ArenaMap:
    """The battle map an arena is drawn over: an image the server stores.

    Guarantees: ``image`` is the id of a stored image (the sha256, in lower-case hex,
    of its re-encoded bytes; ``POST /images`` answers it) and ``width`` and ``height``
    are its size in pixels (1 to :data:`MAX_MAP_SIDE`), the frame of the zones' shapes.
    The arena does not check that the image exists: the server does when it saves one.
    """

    image: str = attrs.field(validator=_Rule(_image_id))
    width: int = attrs.field(validator=_Rule(_side))
    height: int = attrs.field(validator=_Rule(_side))


def _rect(value: tuple[int, ...] | None) -> None:
    if value is None:
        return
    if len(value) != 4:
        raise ValueError(f"a rect is [x, y, width, height], got {len(value)} numbers")
    if value[0] < 0 or value[1] < 0:
        raise ValueError(f"a rect's corner must not be left of or above the image, got {value!r}")
    if value[2] < 1 or value[3] < 1:
        raise ValueError(f"a rect's width and height must be at least 1, got {value!r}")


def _polygon(value: tuple[tuple[int, ...], ...] | None) -> None:
    if value is None:
        return
    if not 3 <= len(value) <= MAX_POLYGON_POINTS:
        raise ValueError(f"a polygon has 3 to {MAX_POLYGON_POINTS} points, got {len(value)}")
    for i, point in enumerate(value):
        if len(point) != 2:
            raise ValueError(f"point {i} must be [x, y], got {len(point)} numbers")
        if point[0] < 0 or point[1] < 0:
            raise ValueError(f"point {i} lies left of or above the image: {list(point)}")
    problem = polygon_problem([(p[0], p[1]) for p in value])
    if problem:
        raise ValueError(problem)


def polygon_problem(points: Sequence[tuple[int, int]]) -> str | None:
    """What is self-evidently wrong with a polygon's ``points``, or ``None``: a point
    given twice, no area (all on one line), or two sides that cross."""
    if len(set(points)) != len(points):
        return "a polygon must not repeat a point"
    twice_area = sum(
        points[i - 1][0] * points[i][1] - points[i][0] * points[i - 1][1]
        for i in range(len(points))
    )
    sides = [(points[i - 1], points[i]) for i in range(len(points))]
    for i, (p, q) in enumerate(sides):
        for j in range(i + 1, len(sides)):
            if j == i + 1 or (i == 0 and j == len(sides) - 1):
                continue  # neighbours share a point
            r, s = sides[j]
            if _crossing(p, q, r, s):
                return f"a polygon's sides must not cross (side {i} crosses side {j})"
    if twice_area == 0:
        return "a polygon must enclose an area (its points are on one line)"
    return None


def _orientation(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> int:
    cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    return (cross > 0) - (cross < 0)


def _on_segment(a: tuple[int, int], b: tuple[int, int], c: tuple[int, int]) -> bool:
    """``c`` (on the line through ``a`` and ``b``) lies between them."""
    return min(a[0], b[0]) <= c[0] <= max(a[0], b[0]) and min(a[1], b[1]) <= c[1] <= max(a[1], b[1])


def _crossing(
    p: tuple[int, int], q: tuple[int, int], r: tuple[int, int], s: tuple[int, int]
) -> bool:
    """Whether the segments ``pq`` and ``rs`` touch (cross or overlap)."""
    o1, o2, o3, o4 = (
        _orientation(p, q, r),
        _orientation(p, q, s),
        _orientation(r, s, p),
        _orientation(r, s, q),
    )
    if o1 != o2 and o3 != o4:
        return True
    return (
        (o1 == 0 and _on_segment(p, q, r))
        or (o2 == 0 and _on_segment(p, q, s))
        or (o3 == 0 and _on_segment(r, s, p))
        or (o4 == 0 and _on_segment(r, s, q))
    )


@attrs.frozen
class ZoneShape:
    """Where a zone lies on its arena's map, in the image's pixels (x to the right, y
    down from the top-left corner): ``rect`` ``[x, y, width, height]`` or ``polygon``
    ``[[x, y], ...]``, exactly one of them.

    Guarantees: a rect's corner is at 0 or more and its sides at least 1; a polygon has 3
    to :data:`MAX_POLYGON_POINTS` points at 0 or more, no point twice, an area and no
    crossing sides. In an :class:`Arena`, the arena has a map and the shape lies inside
    its image.
    """

    rect: tuple[int, ...] | None = attrs.field(default=None, validator=_Rule(_rect))
    polygon: tuple[tuple[int, ...], ...] | None = attrs.field(
        default=None, validator=_Rule(_polygon)
    )

    def __attrs_post_init__(self) -> None:
        if (self.rect is None) == (self.polygon is None):
            raise _FieldError("rect", "a shape is a 'rect' or a 'polygon' (exactly one)")

    def bounds(self) -> tuple[int, int, int, int]:
        """The smallest ``(left, top, right, bottom)`` box holding the shape."""
        if self.rect is not None:
            x, y, w, h = self.rect
            return x, y, x + w, y + h
        assert self.polygon is not None
        xs = [p[0] for p in self.polygon]
        ys = [p[1] for p in self.polygon]
        return min(xs), min(ys), max(xs), max(ys)


@attrs.frozen
class Zone:
    """One zone of an arena.

    Guarantees: ``id`` is non-empty without whitespace and unique in its arena;
    ``name`` is not blank; ``size`` (feet, roughly the zone's longest horizontal
    distance) is at least 1; ``capacity`` (how many occupancy points fit, see
    docs/rules.md, "Rulings") is at least 0 and defaults to :func:`default_capacity` of the size.
    ``difficult`` makes the whole zone difficult terrain.
    """

    id: str = attrs.field(validator=_ID)
    name: str = attrs.field(validator=_NAME)
    size: int = attrs.field(validator=_at_least(1, "size must be a positive number of feet"))
    capacity: int = attrs.field(
        default=attrs.Factory(lambda self: default_capacity(self.size), takes_self=True),
        validator=_at_least(0, "capacity must be 0 or more"),
    )
    difficult: bool = False
    description: str = ""
    shape: ZoneShape | None = attrs.field(
        default=None, metadata={"added_later": True}
    )  # since protocol 1.6


@attrs.frozen
class Link:
    """A link between two zones.

    Links are undirected for adjacency: a creature may cross from ``a`` to ``b`` or
    from ``b`` to ``a``.  ``direction`` says where ``b`` is relative to ``a``; seen
    from ``b`` it is inverted (see :meth:`direction_from`).

    Guarantees: ``a != b``; ``direction`` is one of :data:`DIRECTIONS` and ``mode``
    one of :data:`LINK_MODES`.  ``clear=False`` means there is no clear path (a wall,
    altitude, a chasm): it can only be crossed through an asset whose ``crossing``
    names the far zone, a skill check or a GM override.  ``mode`` is the movement
    needed to cross (climbing or swimming without that speed costs double).
    ``blocks_sight`` means there is no line of sight across the link.
    """

    a: str = attrs.field(validator=_ID)
    b: str = attrs.field(validator=_ID)
    direction: Direction = attrs.field(validator=_one_of("direction", DIRECTIONS))
    clear: bool = True
    mode: LinkMode = attrs.field(default="walk", validator=_one_of("mode", LINK_MODES))
    blocks_sight: bool = False

    def __attrs_post_init__(self) -> None:
        if self.a == self.b:
            raise _FieldError("b", f"a link cannot join zone {self.a!r} to itself")

    def other(self, zone_id: str) -> str:
        """The zone at the other end from ``zone_id``; ValueError if not an end."""
        if zone_id == self.a:
            return self.b
        if zone_id == self.b:
            return self.a
        raise ValueError(f"zone {zone_id!r} is not an end of link {self.a!r}-{self.b!r}")

    def direction_from(self, zone_id: str) -> Direction:
        """Where the other end lies as seen from ``zone_id``.

        From ``a`` this is ``direction``; from ``b`` it is the inverse ("above" and
        "below" swap, "beside" stays).  ValueError if ``zone_id`` is not an end.
        """
        if zone_id == self.a:
            return self.direction
        if zone_id == self.b:
            return _INVERSE[self.direction]
        raise ValueError(f"zone {zone_id!r} is not an end of link {self.a!r}-{self.b!r}")


@attrs.frozen
class Asset:
    """A prop, element or terrain in a zone.

    Guarantees: ``id`` is a valid id (see :class:`Zone`) and ``name`` is not blank;
    ``kind`` is one of :data:`ASSET_KINDS`; ``tags`` are snake_case words.  In an
    :class:`Arena`, ``id`` is unique, ``zone`` names a zone of the arena and each
    ``crossing`` zone is a different zone linked to ``zone``.

    * ``position``: what taking position at the asset grants or costs.
    * ``forced``: what happens to a creature forced into it (None: nothing extra).
    * ``time_sensitive``: a hazard that keeps the encounter from ending.
    * ``crossing``: zones that a creature in position at (or using) the asset can
      reach across a link that is not a clear path, e.g. a rope up a cliff.
    * ``tags``: lower-case words that plugins recognise ("collapsing_floor"); the
      built-in rules ignore them.
    * ``data``: the fields the asset's tags take (a JSON object, docs/arenas.md,
      "Asset data"), such as ``{"dc": 13}``; the plugin that declares a tag says which
      (:class:`~zonekeep.sdk.AssetTagSpec`'s ``data_schema``) and its hooks read them
      here. Treat it as read-only: the arena is shared by every copy of a state.
    """

    id: str = attrs.field(validator=_ID)
    name: str = attrs.field(validator=_NAME)
    kind: AssetKind = attrs.field(validator=_one_of("asset kind", ASSET_KINDS))
    zone: str = attrs.field(validator=_ID)
    description: str = ""
    position: PositionEffect = attrs.field(factory=PositionEffect)
    forced: ForcedEffect | None = None
    time_sensitive: bool = False
    crossing: tuple[str, ...] = ()
    tags: tuple[str, ...] = attrs.field(default=(), validator=_WORDS)
    data: dict[str, Any] = attrs.field(
        factory=dict, hash=False, metadata={"added_later": True}
    )  # arenas stored before protocol 1.4 lack it


@attrs.frozen
class Arena:
    """A complete arena: zones, the links between them, assets and straight lines.

    Pass tuples (not lists) so that the arena stays immutable and hashable.

    Guarantees (checked on construction; violations raise :class:`ArenaError`):

    * there is at least one zone and zone ids are unique; asset ids are unique;
    * every link, asset zone, asset ``crossing`` entry and straight-line entry
      names a zone of this arena;
    * links between the same two zones agree on their direction;
    * an asset's ``crossing`` zones are other zones linked to its zone;
    * each straight line has at least 3 distinct zones, each linked to the next.

    Lookups (:meth:`zone`, :meth:`neighbours`, :meth:`links_between`,
    :meth:`assets_in`, :meth:`asset`, :meth:`is_straight`) are O(1) dictionary
    lookups plus the size of the answer.  Results keep declaration order.
    Methods taking a zone id raise KeyError for a zone not in the arena.
    """

    id: str = attrs.field(validator=_ID)
    name: str = attrs.field(validator=_NAME)
    zones: tuple[Zone, ...]
    links: tuple[Link, ...]
    assets: tuple[Asset, ...] = ()
    straight_lines: tuple[tuple[str, ...], ...] = ()
    description: str = ""
    map: ArenaMap | None = attrs.field(
        default=None, metadata={"added_later": True}
    )  # since protocol 1.6

    _zone_index: dict[str, Zone] = attrs.field(init=False, repr=False, eq=False, factory=dict)
    _neighbour_index: dict[str, tuple[tuple[Link, str], ...]] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
    )
    _pair_index: dict[frozenset[str], tuple[Link, ...]] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
    )
    _asset_index: dict[str, Asset] = attrs.field(init=False, repr=False, eq=False, factory=dict)
    _assets_by_zone: dict[str, tuple[Asset, ...]] = attrs.field(
        init=False, repr=False, eq=False, factory=dict
    )
    _straight_triples: frozenset[tuple[str, str, str]] = attrs.field(
        init=False, repr=False, eq=False, factory=frozenset
    )

    def __attrs_post_init__(self) -> None:
        problems = _cross_problems(
            list(enumerate(zone.id for zone in self.zones)),
            [(i, link.a, link.b, link.direction) for i, link in enumerate(self.links)],
            [(i, a.id, a.zone, a.crossing) for i, a in enumerate(self.assets)],
            list(enumerate(self.straight_lines)),
        )
        problems += _shape_problems(self.map, [(i, z.shape) for i, z in enumerate(self.zones)])
        if problems:
            raise ArenaError(f"<Arena {self.id!r}>", problems)
        zones = {z.id: z for z in self.zones}
        neighbours: dict[str, list[tuple[Link, str]]] = {z: [] for z in zones}
        pairs: dict[frozenset[str], list[Link]] = {}
        for link in self.links:
            neighbours[link.a].append((link, link.b))
            neighbours[link.b].append((link, link.a))
            pairs.setdefault(frozenset((link.a, link.b)), []).append(link)
        by_zone: dict[str, list[Asset]] = {z: [] for z in zones}
        for asset in self.assets:
            by_zone[asset.zone].append(asset)
        triples: set[tuple[str, str, str]] = set()
        for line in self.straight_lines:
            for i in range(len(line) - 2):
                triples.add((line[i], line[i + 1], line[i + 2]))
                triples.add((line[i + 2], line[i + 1], line[i]))
        setattr_ = object.__setattr__
        setattr_(self, "_zone_index", zones)
        setattr_(self, "_neighbour_index", {k: tuple(v) for k, v in neighbours.items()})
        setattr_(self, "_pair_index", {k: tuple(v) for k, v in pairs.items()})
        setattr_(self, "_asset_index", {a.id: a for a in self.assets})
        setattr_(self, "_assets_by_zone", {k: tuple(v) for k, v in by_zone.items()})
        setattr_(self, "_straight_triples", frozenset(triples))

    def __deepcopy__(self, memo: dict[int, object]) -> Arena:
        """Arenas are immutable: copying an encounter state shares its arena."""
        return self

    def _known(self, zone_id: str) -> str:
        if zone_id not in self._zone_index:
            raise KeyError(f"unknown zone {zone_id!r} in arena {self.id!r}")
        return zone_id

    def has_zone(self, zone_id: str) -> bool:
        """Whether ``zone_id`` is a zone of this arena."""
        return zone_id in self._zone_index

    def zone(self, zone_id: str) -> Zone:
        """The zone with this id (KeyError if there is none)."""
        return self._zone_index[self._known(zone_id)]

    def neighbours(self, zone_id: str) -> tuple[tuple[Link, str], ...]:
        """Every ``(link, other_zone_id)`` touching ``zone_id``, clear or not.

        A zone linked twice (say a stair and a climbable wall) appears twice.
        """
        return self._neighbour_index[self._known(zone_id)]

    def links_between(self, a: str, b: str) -> tuple[Link, ...]:
        """The links joining ``a`` and ``b`` in either orientation (may be empty)."""
        return self._pair_index.get(frozenset((self._known(a), self._known(b))), ())

    def assets_in(self, zone_id: str) -> tuple[Asset, ...]:
        """The assets placed in ``zone_id``."""
        return self._assets_by_zone[self._known(zone_id)]

    def asset(self, asset_id: str) -> Asset:
        """The asset with this id (KeyError if there is none)."""
        try:
            return self._asset_index[asset_id]
        except KeyError:
            raise KeyError(f"unknown asset {asset_id!r} in arena {self.id!r}") from None

    def is_straight(self, prev: str, cur: str, nxt: str) -> bool:
        """Whether moving ``prev`` -> ``cur`` -> ``nxt`` goes straight ahead (Sprint).

        True when the three zones appear consecutively, in either order, in one of
        :attr:`straight_lines`, or when a link takes ``prev`` to ``cur`` and a link
        takes ``cur`` to ``nxt`` in the same vertical direction (both "above" or
        both "below").  It does not check that the links are clear.
        """
        for zone_id in (prev, cur, nxt):
            self._known(zone_id)
        if (prev, cur, nxt) in self._straight_triples:
            return True
        first = {link.direction_from(prev) for link in self.links_between(prev, cur)}
        second = {link.direction_from(cur) for link in self.links_between(cur, nxt)}
        return bool(first & second & {"above", "below"})


def single_zone_arena(size: int = 30) -> Arena:
    """A one-zone arena (zone id ``"field"``) for an encounter without an arena."""
    return Arena(
        id="field",
        name="Open field",
        zones=(Zone(id="field", name="Field", size=size),),
        links=(),
        description="A single open zone.",
    )


# --------------------------------------------------------------------------- errors


@attrs.frozen
class ArenaProblem:
    """One problem in an arena file.

    ``where`` is a path into the document such as ``links[2].b`` or
    ``assets[0].position.save.dc`` (``""`` for the document as a whole, or
    ``"line 7"`` for a syntax error); ``message`` is a human sentence.
    """

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class ArenaError(ValueError):
    """An arena file (or arena) is invalid.  ``problems`` lists every problem found.

    ``str()`` gives a header line naming the source, then one line per problem,
    e.g. ``tavern.json: links[2].b: unknown zone 'cellar'``.
    """

    def __init__(self, source: str, problems: Sequence[ArenaProblem]) -> None:
        super().__init__(source, list(problems))
        self.source = source
        self.problems: list[ArenaProblem] = list(problems)

    def __str__(self) -> str:
        count = len(self.problems)
        lines = [f"{self.source}: invalid arena ({count} problem{'s' if count != 1 else ''})"]
        lines.extend(f"{self.source}: {problem}" for problem in self.problems)
        return "\n".join(lines)


# The references that _cross_problems checks, each with its index in the document;
# None stands for a reference that is malformed (and reported as such already).
_LinkRefs = tuple[int, str | None, str | None, Direction | None]  # a, b, direction
_AssetRefs = tuple[int, str | None, str | None, Sequence[str | None]]  # id, zone, crossing


def _cross_problems(
    zone_ids: Sequence[tuple[int, str]] | None,
    links: Iterable[_LinkRefs],
    assets: Iterable[_AssetRefs],
    lines: Iterable[tuple[int, Sequence[str]]],
) -> list[ArenaProblem]:
    """The problems no field's type can express: duplicate ids, references to zones,
    directions of links between the same zones, crossings and straight lines.

    ``zone_ids`` is None when the zones are unknown (missing, not an array); zone
    references are then not checked, nor when there is no zone at all.
    """
    problems: list[ArenaProblem] = []

    def add(where: str, message: str) -> None:
        problems.append(ArenaProblem(where, message))

    def unknown(where: str, zone_id: str | None) -> bool:
        if zone_id is None or not known or zone_id in known:
            return False
        add(where, f"unknown zone {zone_id!r}")
        return True

    known: dict[str, int] = {}  # zone id -> index of the zone that defined it
    for i, zone_id in zone_ids or ():
        if zone_id in known:
            add(
                f"zones[{i}].id",
                f"duplicate zone id {zone_id!r} (first used at zones[{known[zone_id]}])",
            )
        known.setdefault(zone_id, i)
    if zone_ids is not None and not zone_ids:
        add("zones", "an arena needs at least one zone")
    linked: set[frozenset[str]] = set()
    directions: dict[tuple[str, str], tuple[Direction, int]] = {}
    for i, a, b, direction in links:
        unknown(f"links[{i}].a", a)
        unknown(f"links[{i}].b", b)
        if a is None or b is None:
            continue
        linked.add(frozenset((a, b)))
        if direction is None:
            continue
        key, seen = _normalised(a, b, direction)
        earlier, j = directions.setdefault(key, (seen, i))
        if earlier != seen:
            add(
                f"links[{i}].direction",
                f"contradicts links[{j}]: {key[1]!r} cannot be both {earlier} and {seen} {key[0]!r}",
            )
    asset_ids: dict[str, int] = {}
    for i, asset_id, zone, crossing in assets:
        if asset_id in asset_ids:
            add(
                f"assets[{i}].id",
                f"duplicate asset id {asset_id!r} (first used at assets[{asset_ids[asset_id]}])",
            )
        if asset_id is not None:
            asset_ids.setdefault(asset_id, i)
        unknown(f"assets[{i}].zone", zone)
        for j, target in enumerate(crossing):
            where = f"assets[{i}].crossing[{j}]"
            if target is None or zone is None or unknown(where, target):
                continue
            if target == zone:
                add(where, "an asset cannot cross to its own zone")
            elif frozenset((zone, target)) not in linked:
                add(where, f"zone {target!r} is not linked to {zone!r}")
    for i, line in lines:
        if len(line) < 3:
            add(f"straight_lines[{i}]", f"a straight line needs at least 3 zones, got {len(line)}")
        for j, zone_id in enumerate(line):
            where = f"straight_lines[{i}][{j}]"
            if unknown(where, zone_id):
                continue
            if zone_id in line[:j]:
                add(where, f"zone {zone_id!r} appears twice in the line")
            elif j and frozenset((line[j - 1], zone_id)) not in linked:
                add(where, f"zone {zone_id!r} is not linked to {line[j - 1]!r}")
    return problems


def _shape_problems(
    map_: ArenaMap | None, shapes: Iterable[tuple[int, ZoneShape | None]]
) -> list[ArenaProblem]:
    """The zones' shapes against the arena's map: a shape needs a map, and lies inside
    its image."""
    problems: list[ArenaProblem] = []
    for i, shape in shapes:
        if shape is None:
            continue
        where = f"zones[{i}].shape"
        if map_ is None:
            problems.append(ArenaProblem(where, "a zone's shape needs the arena's 'map'"))
            continue
        right, bottom = shape.bounds()[2:]
        if right > map_.width or bottom > map_.height:
            problems.append(
                ArenaProblem(
                    f"{where}.{'rect' if shape.rect is not None else 'polygon'}",
                    f"the shape reaches ({right}, {bottom}), outside the "
                    f"{map_.width}x{map_.height} map",
                )
            )
    return problems


def _normalised(a: str, b: str, direction: Direction) -> tuple[tuple[str, str], Direction]:
    """The pair in sorted order, with the direction of the second seen from the first."""
    if a <= b:
        return (a, b), direction
    return (b, a), _INVERSE[direction]


# --------------------------------------------------------------------------- loading


class _DupDict(dict[str, object]):
    """A JSON object that remembers keys given more than once."""

    duplicates: tuple[str, ...] = ()


def _pairs_hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = _DupDict()
    seen: list[str] = []
    for key, value in pairs:
        if key in result and key not in seen:
            seen.append(key)
        result[key] = value
    if seen:
        result.duplicates = tuple(seen)
    return result


_TOML_POS_RE: Final = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def load_arena(
    path: str | os.PathLike[str], *, asset_tags: Mapping[str, AssetTagSpec] | None = None
) -> Arena:
    """Load an arena file: JSON for ``.json``, TOML for ``.toml``.

    Raises :class:`ArenaError` (naming ``path``) listing every problem: syntax
    errors with their line, then structural and cross-reference problems, and with
    ``asset_tags`` (an engine's :attr:`~zonekeep.sdk.engine.Engine.asset_tags`) the
    assets' ``data`` checked against their tags' schemas (see :func:`parse_arena`).
    OSError from reading the file propagates unchanged.
    """
    source = os.fspath(path)
    suffix = os.path.splitext(source)[1].lower()
    if suffix not in (".json", ".toml"):
        raise ArenaError(
            source, [ArenaProblem("", f"unsupported file type {suffix!r}; use .json or .toml")]
        )
    with open(source, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArenaError(source, [ArenaProblem("", f"file is not valid UTF-8: {exc}")]) from None
    data: object
    if suffix == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_pairs_hook)
        except json.JSONDecodeError as exc:
            problem = ArenaProblem(
                f"line {exc.lineno}", f"invalid JSON: {exc.msg} (column {exc.colno})"
            )
            raise ArenaError(source, [problem]) from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            match = _TOML_POS_RE.search(message)
            if match:
                where = f"line {match.group(1)}"
                message = f"{message[: match.start()]} (column {match.group(2)})"
            else:
                where = ""
            raise ArenaError(source, [ArenaProblem(where, f"invalid TOML: {message}")]) from None
    return parse_arena(data, source, asset_tags=asset_tags)


def parse_arena(
    data: object,
    source: str = "<arena>",
    *,
    asset_tags: Mapping[str, AssetTagSpec] | None = None,
) -> Arena:
    """Build an :class:`Arena` from decoded JSON/TOML data.

    Every problem is collected before failing; :class:`ArenaError` is raised with
    all of them in document order, ``source`` naming the input in messages.

    ``asset_tags`` are the tags the plugins declare, by id (an engine's
    :attr:`~zonekeep.sdk.engine.Engine.asset_tags`; the server always passes its
    own): each asset's ``data`` is then checked against the ``data_schema`` of each of
    its tags (:func:`asset_data_problems`). Without them, ``data`` is only checked to
    be a JSON object.
    """
    problems: list[ArenaProblem] = []
    arena: Arena | None = None
    try:
        arena = _converter().structure(data, Arena)
    except (cattrs.BaseValidationError, ValueError) as exc:
        problems = _located(exc)
    if asset_tags is not None:
        problems.extend(asset_data_problems(data, asset_tags))
    if problems or arena is None:
        raise ArenaError(source, sorted(problems, key=_document_order))
    return arena


# --------------------------------------------------------------------------- asset data


def check_tag_schema(spec: AssetTagSpec) -> None:
    """Raise ``ValueError`` when ``spec.data_schema`` cannot describe an asset's data:
    a keyword :func:`~zonekeep.sdk._schema.check_schema` does not support, a ``type``
    other than ``"object"``, no ``properties``, a top-level ``additionalProperties``
    (the loader decides which keys are unknown: those no tag of the asset declares) or
    a ``required`` field missing from ``properties``. The engine runs it at start."""
    schema = spec.data_schema
    if schema is None:
        return
    where = f"the data_schema of asset tag {spec.id!r}"
    check_schema(schema, where)
    if schema.get("type", "object") != "object":
        raise ValueError(f"{where}: an asset's data is an object: 'type' must be 'object'")
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        raise ValueError(f"{where}: needs 'properties', the fields an asset takes")
    if "additionalProperties" in schema:
        raise ValueError(
            f"{where}: leave 'additionalProperties' out at the top: a key no tag of the "
            "asset declares is refused by the loader"
        )
    missing = [name for name in schema.get("required", []) if name not in properties]
    if missing:
        raise ValueError(f"{where}: required field(s) {', '.join(missing)} not in 'properties'")


def _tag_spec(asset_tags: Mapping[str, AssetTagSpec], tag: str) -> AssetTagSpec | None:
    """The declared tag an arena's ``tag`` names: its id, or the one declared id that
    ends in ``.<tag>`` (a namespaced id given by its short name)."""
    spec = asset_tags.get(tag)
    if spec is not None:
        return spec
    found = [s for key, s in asset_tags.items() if key.endswith("." + tag)]
    return found[0] if len(found) == 1 else None


def asset_data_problems(data: object, asset_tags: Mapping[str, AssetTagSpec]) -> list[ArenaProblem]:
    """The problems of the assets' ``data`` in the arena document ``data``, each at its
    path (``assets[2].data.dc``):

    * each declared tag of the asset with a ``data_schema`` checks the fields its
      schema lists (types, ranges, ``required`` ...);
    * a field no declared tag of the asset lists is refused as unknown, unless the
      asset also has a tag no plugin here declares (a plugin not installed on this
      server): its fields are then kept, unchecked, and no rule reads them.

    Malformed assets (``data`` not an object, ``tags`` not a list) are left to the
    structural checks, which report them."""
    doc: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    assets = doc.get("assets")
    problems: list[ArenaProblem] = []
    for i, asset in enumerate(assets if isinstance(assets, list) else []):
        if not isinstance(asset, Mapping):
            continue
        fields = asset.get("data", {})
        raw_tags = asset.get("tags", [])
        if not isinstance(fields, Mapping) or not isinstance(raw_tags, list):
            continue
        tags = [t for t in raw_tags if isinstance(t, str)]
        specs = [(t, _tag_spec(asset_tags, t)) for t in tags]
        undeclared = any(spec is None for _, spec in specs)
        where = f"assets[{i}].data"
        known: dict[str, list[str]] = {}  # field -> the tags that take it
        for tag, spec in specs:
            if spec is None or spec.data_schema is None:
                continue
            properties = spec.data_schema.get("properties", {})
            for name in properties:
                known.setdefault(name, []).append(tag)
            mine = {k: v for k, v in fields.items() if k in properties}
            for path, message in schema_problems(mine, spec.data_schema, where):
                problems.append(ArenaProblem(path, message))
        for key in fields:
            if key in known or undeclared:
                continue
            if not known:
                message = f"unknown field {key!r}: no tag of this asset takes data"
            else:
                hint = difflib.get_close_matches(str(key), list(known), n=1)
                suffix = (
                    f"did you mean {hint[0]!r}?" if hint else f"its tags take {', '.join(known)}"
                )
                message = f"unknown field {key!r} ({suffix})"
            problems.append(ArenaProblem(f"{where}.{key}", message))
    return problems


def _located(exc: Exception) -> list[ArenaProblem]:
    """One problem per error in cattrs' tree of structuring errors, at its path."""
    problems = []
    for line in cattrs.transform_error(exc, path="", format_exception=_sentence):
        message, _, where = line.rpartition(" @ ")
        problems.append(ArenaProblem(where.removeprefix("."), message))
    return problems


def _sentence(exc: BaseException, _type: object) -> str:
    return "required field is missing" if isinstance(exc, KeyError) else str(exc)


_TOP_FIELDS: Final = [a.name for a in attrs.fields(Arena)]


def _document_order(problem: ArenaProblem) -> tuple[int, int]:
    """Sorts problems by top-level field, then by the index in that field's array
    (a stable sort keeps cattrs' field order inside one zone, link or asset)."""
    match = re.match(r"([^.\[]*)(?:\[(\d+)\])?", problem.where)
    assert match is not None  # the pattern matches any string
    field, index = match.groups()
    rank = _TOP_FIELDS.index(field) if field in _TOP_FIELDS else -1
    return rank, int(index) if index else -1


def _references(
    data: object,
) -> tuple[
    list[tuple[int, str]] | None,
    list[_LinkRefs],
    list[_AssetRefs],
    list[tuple[int, Sequence[str]]],
]:
    """The arguments of :func:`_cross_problems` for a document that did not load:
    every id, zone reference and direction that is well formed on its own, so that a
    zone with a bad size still defines its id and a link with a bad mode still joins
    its zones (and a problem is not reported again as an unknown zone)."""
    doc: Mapping[str, Any] = data if isinstance(data, Mapping) else {}

    def array(value: object) -> list[tuple[int, Any]]:
        return list(enumerate(value)) if isinstance(value, list) else []

    def objects(key: str) -> list[tuple[int, Mapping[str, Any]]]:
        return [(i, x) for i, x in array(doc.get(key)) if isinstance(x, Mapping)]

    def ref(value: object) -> str | None:
        return value if isinstance(value, str) and _ID_RE.fullmatch(value) else None

    zone_ids = None  # unknown, unless the zones are an array with a usable id (or empty)
    if isinstance(zones := doc.get("zones"), list):
        ids = [(i, zone_id) for i, x in objects("zones") if (zone_id := ref(x.get("id")))]
        zone_ids = ids if ids or not zones else None
    links: list[_LinkRefs] = [
        (
            i,
            ref(x.get("a")),
            ref(x.get("b")),
            d if (d := x.get("direction")) in DIRECTIONS else None,
        )
        for i, x in objects("links")
    ]
    assets: list[_AssetRefs] = [
        (i, ref(x.get("id")), ref(x.get("zone")), [ref(c) for _, c in array(x.get("crossing"))])
        for i, x in objects("assets")
    ]
    lines: list[tuple[int, Sequence[str]]] = []  # lines whose every entry is well formed
    for i, line in array(doc.get("straight_lines")):
        zones = [zone_id for _, z in array(line) if (zone_id := ref(z))]
        if isinstance(line, list) and len(zones) == len(line):
            lines.append((i, zones))
    return zone_ids, links, assets, lines


# --------------------------------------------------------------------------- the converter

_Hook = Callable[[Any, Any], Any]


@functools.cache
def _converter() -> cattrs.Converter:
    """The converter for arena documents: JSON types only (no number from a string,
    no list from a string), every model class through :func:`_model_hook`.  Built on
    first use."""
    conv = cattrs.Converter()  # detailed validation: errors carry their paths
    text = _exactly(str, "a string")
    conv.register_structure_hook(str, text)
    conv.register_structure_hook(int, _exactly(int, "an integer"))
    conv.register_structure_hook(bool, _exactly(bool, "true or false"))
    # A name from a set: the field's rule says which names (see _one_of).
    conv.register_structure_hook_factory(_is_literal, lambda _: text)
    strict_containers(conv, lambda kind, value: f"expected an {kind}, got {_shown(value)}")
    conv.register_structure_hook_factory(attrs.has, lambda cls: _model_hook(conv, cls))
    # An optional object may be left out, but not given as null.
    conv.register_structure_hook_factory(
        _optional_model, lambda t: conv.get_structure_hook(get_args(t)[0])
    )
    return conv


def _exactly(kind: type, label: str) -> _Hook:
    def hook(value: Any, _: Any) -> Any:
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
            raise ValueError(f"expected {label}, got {_shown(value)}")
        return value

    return hook


def _is_literal(t: Any) -> bool:
    return get_origin(t) is Literal


def _optional_model(t: Any) -> bool:
    """``X | None`` for a model class ``X``."""
    return get_args(t)[-1:] == (type(None),) and attrs.has(get_args(t)[0])


def _zone_size(value: Any, _: Any) -> int:
    """A zone's size: feet, or a name from :data:`NAMED_ZONE_SIZES` in any case."""
    if isinstance(value, str):
        size = NAMED_ZONE_SIZES.get(value.strip().lower())
        if size is None:
            names = ", ".join(f"{k.title()!r}" for k in NAMED_ZONE_SIZES)
            raise ValueError(f"unknown named size {value!r}; expected feet or one of {names}")
        return size
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected feet (an integer) or a named size, got {_shown(value)}")
    return value


_MAX_DATA_DEPTH: Final = 32


def _json_object(value: Any, _: Any) -> dict[str, Any]:
    """An asset's ``data``: a JSON object of JSON values (not a TOML date), nested at
    most :data:`_MAX_DATA_DEPTH` deep; its fields are checked against the tags'
    schemas by :func:`asset_data_problems`."""
    if not isinstance(value, Mapping):
        raise ValueError(f"expected an object, got {_shown(value)}")

    def walk(item: Any, path: str, depth: int) -> None:
        if depth > _MAX_DATA_DEPTH:
            raise ValueError(f"{path or 'data'}: nested more than {_MAX_DATA_DEPTH} levels deep")
        if isinstance(item, Mapping):
            for key, inner in item.items():
                walk(inner, f"{path}.{key}" if path else str(key), depth + 1)
        elif isinstance(item, list):
            for i, inner in enumerate(item):
                walk(inner, f"{path}[{i}]", depth + 1)
        elif item is not None and not isinstance(item, str | int | float | bool):
            raise ValueError(f"{path}: expected JSON data, got {_shown(item)}")
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{path}: expected a finite number, got {item!r}")

    walk(value, "", 0)
    return dict(value)


def _model_hook(conv: cattrs.Converter, cls: type) -> _Hook:
    """Structure ``cls`` from a JSON object.  Each field's :class:`_Rule` runs on its
    structured value; unknown and repeated keys, and a :class:`_FieldError` from the
    constructor, become errors at their field, next to cattrs' own."""
    fields = [a for a in attrs.fields(attrs.resolve_types(cls)) if a.init]
    names = [a.name for a in fields]
    allowed = [*names, "$schema"] if cls is Arena else names
    overrides: dict[str, Any] = {a.name: override(struct_hook=_ruled(conv, cls, a)) for a in fields}
    build: _Hook = make_dict_structure_fn(cls, conv, **overrides)

    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError(f"expected an object, got {_shown(value)}")
        errors: list[Exception] = []
        for key in getattr(value, "duplicates", ()):
            errors.append(_at_field(ValueError("field given more than once"), key))
        for key in value:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), allowed, n=1)
                suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
                errors.append(_at_field(ValueError(f"unknown field {key!r}{suffix}"), str(key)))
        if "$schema" in allowed and not isinstance(value.get("$schema", ""), str):
            message = f"expected a string, got {_shown(value['$schema'])}"
            errors.append(_at_field(ValueError(message), "$schema"))
        given = {k: v for k, v in value.items() if k in names}
        if cls is Arena:
            given.setdefault("links", [])  # a file may leave them out (docs/arenas.md)
        result = None
        try:
            result = build(given, cls)
        except cattrs.ClassValidationError as exc:
            errors.extend(e for error in exc.exceptions for e in _blamed(error))
            if cls is Arena and not any(isinstance(e, ArenaError) for e in exc.exceptions):
                # Fields failed, so no Arena checked its references: check those that can be.
                cross = _cross_problems(*_references(value))
                errors.extend(_blamed(ArenaError("", cross)))
        if errors:
            raise cattrs.ClassValidationError(f"invalid {cls.__name__}", errors, cls)
        return result

    return hook


def _ruled(conv: cattrs.Converter, cls: type, field: attrs.Attribute[Any]) -> _Hook:
    """The hook for one field: its type's hook, then the field's rule if any."""
    special = {(Zone, "size"): _zone_size, (Asset, "data"): _json_object}
    base = special.get((cls, field.name)) or conv.get_structure_hook(field.type)
    rule = field.validator if isinstance(field.validator, _Rule) else None
    if rule is None:
        return base

    def hook(value: Any, type_: Any) -> Any:
        result: Any = base(value, type_)
        if not rule.each:
            rule.check(result)
            return result
        errors: list[Exception] = []
        for i, item in enumerate(result):
            try:
                rule.check(item)
            except ValueError as exc:
                exc.add_note(IterableValidationNote(f"Structuring item {i}", i, str))
                errors.append(exc)
        if errors:
            raise cattrs.IterableValidationError(f"invalid items of {field.name}", errors, tuple)
        return result

    return hook


def _blamed(error: Exception) -> list[Exception]:
    """``error`` as errors at the fields it concerns (cattrs wraps an error from a
    constructor without saying which field).  An :class:`ArenaError`'s problems come
    with their whole path, which serves as the field name (paths are joined by text)."""
    if isinstance(error, ArenaError):
        return [_at_field(ValueError(p.message), p.where) for p in error.problems]
    if isinstance(error, _FieldError):
        return [_at_field(error, error.field)]
    return [error]


def _at_field(exc: Exception, name: str) -> Exception:
    exc.add_note(AttributeValidationNote(f"Structuring field {name}", name, None))
    return exc


_JSON_TYPES: Final = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (Mapping, "object"),
    (list | tuple, "array"),
)


def _shown(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool) else ""
    if len(text) > 40:
        text = text[:37] + "..."
    kind = next((name for t, name in _JSON_TYPES if isinstance(value, t)), type(value).__name__)
    return f"{kind} {text}".rstrip()
