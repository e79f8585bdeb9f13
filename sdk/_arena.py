"""Arena data model and loader.

An arena is a set of zones joined by links, plus the assets (props, elements,
terrain) that sit in those zones.  This module holds the immutable data types and
the loader that turns a GM's JSON or TOML file into them.  It contains no movement
rules: those live in the engine, which asks an :class:`Arena` questions such as
"what is beside this zone?" or "is this path straight?".

The file format is documented in ``docs/arenas.md`` and described by the JSON
Schema ``sdk/schemas/arena.schema.json``.  Validation here is hand-written, does
not need ``jsonschema`` and reports every problem in a file at once as an
:class:`ArenaError`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Final, Literal, TypeVar, cast, get_args

import attrs

from ._vocabulary import ABILITIES, DAMAGE_TYPES, LINK_MODES, Ability, LinkMode

__all__ = [
    "ABILITIES",
    "ASSET_KINDS",
    "DAMAGE_TYPES",
    "DIRECTIONS",
    "LINK_MODES",
    "NAMED_ZONE_SIZES",
    "Ability",
    "Arena",
    "ArenaError",
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
    "default_capacity",
    "load_arena",
    "parse_arena",
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
# Roll kinds and conditions: lower-case snake_case words.
_WORD_RE: Final = re.compile(r"[a-z][a-z0-9_]*")


def default_capacity(size: int) -> int:
    """The capacity a zone of ``size`` feet gets when none is given.

    It is the number of 5-foot squares in a square zone whose side is ``size``:
    ``(size // 5) ** 2``.  Small (15 ft) gives 9, Medium (30 ft) 36, Large (60 ft) 144.
    """
    return (size // 5) ** 2


def _check_dice(
    _instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None and not _DICE_RE.fullmatch(value):
        raise ValueError(f"{attribute.name} must be a dice expression like '2d6', got {value!r}")


def _check_words(
    _instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for word in value:
        if not isinstance(word, str) or not _WORD_RE.fullmatch(word):
            raise ValueError(f"{attribute.name} entries must be snake_case words, got {word!r}")


def _check_id(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise ValueError(f"{attribute.name} must be a non-empty string without spaces: {value!r}")


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

    ability: Ability = attrs.field(validator=attrs.validators.in_(ABILITIES))
    dc: int | None = attrs.field(default=None)
    damage: str | None = attrs.field(default=None, validator=_check_dice)
    damage_type: str = ""
    conditions: tuple[str, ...] = attrs.field(default=(), validator=_check_words)
    description: str = ""

    @dc.validator
    def _check_dc(self, _attribute: attrs.Attribute[int | None], value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or value < 1):
            raise ValueError(f"dc must be None or at least 1, got {value!r}")

    def __attrs_post_init__(self) -> None:
        if self.damage is not None and self.damage_type not in DAMAGE_TYPES:
            raise ValueError(f"damage needs a damage_type from {DAMAGE_TYPES}")
        if self.damage is None and self.damage_type:
            raise ValueError("damage_type given without damage")


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
    advantage_on: tuple[str, ...] = attrs.field(default=(), validator=_check_words)
    disadvantage_on: tuple[str, ...] = attrs.field(default=(), validator=_check_words)
    expertise_on: tuple[str, ...] = attrs.field(default=(), validator=_check_words)
    difficult: bool = False
    conditions: tuple[str, ...] = attrs.field(default=(), validator=_check_words)
    save: SaveEffect | None = None


@attrs.frozen
class ForcedEffect:
    """What happens when a creature is forced (pushed, thrown) into an asset.

    Being forced into an asset also counts as taking position at it.  ``save`` is
    always present; its ``dc`` of ``None`` means the forcer's maneuver DC or spell
    save DC.
    """

    save: SaveEffect


@attrs.frozen
class Zone:
    """One zone of an arena.

    Guarantees: ``id`` is non-empty without whitespace and unique in its arena;
    ``size`` (feet, roughly the zone's longest horizontal distance) is at least 1;
    ``capacity`` (how many occupancy points fit, see RULINGS.md) is at least 0 and
    defaults to :func:`default_capacity` of the size.  ``difficult`` makes the
    whole zone difficult terrain.
    """

    id: str = attrs.field(validator=_check_id)
    name: str
    size: int = attrs.field()
    capacity: int = attrs.field(
        default=attrs.Factory(lambda self: default_capacity(self.size), takes_self=True)
    )
    difficult: bool = False
    description: str = ""

    @size.validator
    def _check_size(self, _attribute: attrs.Attribute[int], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"zone size must be a positive number of feet, got {value!r}")

    @capacity.validator
    def _check_capacity(self, _attribute: attrs.Attribute[int], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"zone capacity must be 0 or more, got {value!r}")


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

    a: str = attrs.field(validator=_check_id)
    b: str = attrs.field(validator=_check_id)
    direction: Direction = attrs.field(validator=attrs.validators.in_(DIRECTIONS))
    clear: bool = True
    mode: LinkMode = attrs.field(default="walk", validator=attrs.validators.in_(LINK_MODES))
    blocks_sight: bool = False

    def __attrs_post_init__(self) -> None:
        if self.a == self.b:
            raise ValueError(f"a link cannot join zone {self.a!r} to itself")

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

    Guarantees: ``id`` is unique in its arena; ``kind`` is one of
    :data:`ASSET_KINDS`; ``zone`` names a zone of the arena; each ``crossing`` zone
    is a different zone linked to ``zone``.

    * ``position``: what taking position at the asset grants or costs.
    * ``forced``: what happens to a creature forced into it (None: nothing extra).
    * ``time_sensitive``: a hazard that keeps the encounter from ending.
    * ``crossing``: zones that a creature in position at (or using) the asset can
      reach across a link that is not a clear path, e.g. a rope up a cliff.
    * ``tags``: lower-case words that plugins recognise ("collapsing_floor"); the
      built-in rules ignore them.
    """

    id: str = attrs.field(validator=_check_id)
    name: str
    kind: AssetKind = attrs.field(validator=attrs.validators.in_(ASSET_KINDS))
    zone: str = attrs.field(validator=_check_id)
    description: str = ""
    position: PositionEffect = attrs.field(factory=PositionEffect)
    forced: ForcedEffect | None = None
    time_sensitive: bool = False
    crossing: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@attrs.frozen
class Arena:
    """A complete arena: zones, the links between them, assets and straight lines.

    Pass tuples (not lists) so that the arena stays immutable and hashable.

    Guarantees (checked on construction; violations raise :class:`ArenaError`):

    * there is at least one zone and zone ids are unique; asset ids are unique;
    * every link, asset zone, asset ``crossing`` entry and straight-line entry
      names a zone of this arena;
    * links between the same two zones agree on their direction;
    * each straight line has at least 3 distinct zones, each linked to the next.

    Lookups (:meth:`zone`, :meth:`neighbours`, :meth:`links_between`,
    :meth:`assets_in`, :meth:`asset`, :meth:`is_straight`) are O(1) dictionary
    lookups plus the size of the answer.  Results keep declaration order.
    Methods taking a zone id raise KeyError for a zone not in the arena.
    """

    id: str = attrs.field(validator=_check_id)
    name: str
    zones: tuple[Zone, ...]
    links: tuple[Link, ...]
    assets: tuple[Asset, ...] = ()
    straight_lines: tuple[tuple[str, ...], ...] = ()
    description: str = ""

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
        problems = _integrity_problems(self)
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


def _integrity_problems(arena: Arena) -> list[ArenaProblem]:
    """Cross-reference checks on an already typed arena (for direct construction)."""
    problems: list[ArenaProblem] = []

    def add(where: str, message: str) -> None:
        problems.append(ArenaProblem(where, message))

    if not arena.zones:
        add("zones", "an arena needs at least one zone")
    zone_ids: set[str] = set()
    for i, zone in enumerate(arena.zones):
        if zone.id in zone_ids:
            add(f"zones[{i}].id", f"duplicate zone id {zone.id!r}")
        zone_ids.add(zone.id)
    directions: dict[tuple[str, str], Direction] = {}
    for i, link in enumerate(arena.links):
        for end in ("a", "b"):
            if getattr(link, end) not in zone_ids:
                add(f"links[{i}].{end}", f"unknown zone {getattr(link, end)!r}")
        key, direction = _normalised(link.a, link.b, link.direction)
        if directions.setdefault(key, direction) != direction:
            add(f"links[{i}].direction", f"contradicts an earlier link between {key}")
    linked = {frozenset(pair) for pair in directions}
    asset_ids: set[str] = set()
    for i, asset in enumerate(arena.assets):
        if asset.id in asset_ids:
            add(f"assets[{i}].id", f"duplicate asset id {asset.id!r}")
        asset_ids.add(asset.id)
        if asset.zone not in zone_ids:
            add(f"assets[{i}].zone", f"unknown zone {asset.zone!r}")
        for j, target in enumerate(asset.crossing):
            if frozenset((asset.zone, target)) not in linked:
                add(
                    f"assets[{i}].crossing[{j}]", f"zone {target!r} is not linked to {asset.zone!r}"
                )
    for i, line in enumerate(arena.straight_lines):
        if len(line) < 3 or len(set(line)) != len(line):
            add(f"straight_lines[{i}]", "a straight line needs at least 3 different zones")
        for j, zone_id in enumerate(line):
            if zone_id not in zone_ids:
                add(f"straight_lines[{i}][{j}]", f"unknown zone {zone_id!r}")
            elif j and frozenset((line[j - 1], zone_id)) not in linked:
                add(f"straight_lines[{i}][{j}]", f"not linked to {line[j - 1]!r}")
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


def load_arena(path: str | os.PathLike[str]) -> Arena:
    """Load an arena file: JSON for ``.json``, TOML for ``.toml``.

    Raises :class:`ArenaError` (naming ``path``) listing every problem: syntax
    errors with their line, then structural and cross-reference problems.  OSError
    from reading the file propagates unchanged.
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
    return parse_arena(data, source)


def parse_arena(data: object, source: str = "<arena>") -> Arena:
    """Build an :class:`Arena` from decoded JSON/TOML data.

    Every problem is collected before failing; :class:`ArenaError` is raised with
    all of them, ``source`` naming the input in messages.
    """
    parser = _Parser()
    arena = parser.arena(data)
    if parser.problems or arena is None:
        raise ArenaError(source, parser.problems)
    return arena


_T = TypeVar("_T")
_D = TypeVar("_D")

_ARENA_KEYS: Final = (
    "$schema",
    "id",
    "name",
    "description",
    "zones",
    "links",
    "assets",
    "straight_lines",
)
_ZONE_KEYS: Final = ("id", "name", "size", "capacity", "difficult", "description")
_LINK_KEYS: Final = ("a", "b", "direction", "clear", "mode", "blocks_sight")
_ASSET_KEYS: Final = (
    "id",
    "name",
    "kind",
    "zone",
    "description",
    "position",
    "forced",
    "time_sensitive",
    "crossing",
    "tags",
)
_POSITION_KEYS: Final = (
    "ac_bonus",
    "advantage_on",
    "disadvantage_on",
    "expertise_on",
    "difficult",
    "conditions",
    "save",
)
_FORCED_KEYS: Final = ("save",)
_SAVE_KEYS: Final = ("ability", "dc", "damage", "damage_type", "conditions", "description")


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _shown(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool) else ""
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{_json_type(value)} {text}".rstrip()


class _Parser:
    """Walks the decoded document, collecting problems and building typed objects.

    Each method returns the typed value or ``None`` when that part is invalid; it
    never raises for bad input.
    """

    def __init__(self) -> None:
        self.problems: list[ArenaProblem] = []
        self.zone_ids: dict[str, str] = {}  # id -> path of the zone that defined it
        self.asset_ids: dict[str, str] = {}  # id -> path of the asset that defined it
        self.linked: set[frozenset[str]] = set()
        # False when "zones" is missing or not an array: references are not checked,
        # to avoid one "unknown zone" per reference.
        self.zones_known = True
        # sorted zone pair -> (direction of the second seen from the first, link path)
        self.directions: dict[tuple[str, str], tuple[Direction, str]] = {}

    def add(self, where: str, message: str) -> None:
        self.problems.append(ArenaProblem(where, message))

    # ---- generic checks

    def obj(
        self, value: object, path: str, keys: Sequence[str], required: Collection[str]
    ) -> dict[str, object] | None:
        if not isinstance(value, dict):
            self.add(path, f"expected an object, got {_shown(value)}")
            return None
        for key in getattr(value, "duplicates", ()):
            self.add(_at(path, key), "field given more than once")
        for key in value:
            if key not in keys:
                hint = difflib.get_close_matches(str(key), keys, n=1)
                suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
                self.add(_at(path, str(key)), f"unknown field {key!r}{suffix}")
        for key in keys:
            if key in required and key not in value:
                self.add(_at(path, key), "required field is missing")
        return cast(dict[str, object], value)

    def field(
        self,
        d: Mapping[str, object],
        key: str,
        path: str,
        check: Callable[[object, str], _T | None],
        default: _D,
    ) -> _T | _D | None:
        """``check`` the value at ``key``; ``default`` when absent (missing-required
        fields were already reported by :meth:`obj`, and give None here)."""
        if key not in d:
            return default
        return check(d[key], _at(path, key))

    def string(self, value: object, path: str) -> str | None:
        if not isinstance(value, str):
            self.add(path, f"expected a string, got {_shown(value)}")
            return None
        return value

    def name(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is not None and not text.strip():
            self.add(path, "must not be empty")
            return None
        return text

    def ident(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is not None and not _ID_RE.fullmatch(text):
            self.add(path, f"an id must be non-empty and contain no spaces, got {text!r}")
            return None
        return text

    def word(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is not None and not _WORD_RE.fullmatch(text):
            self.add(path, f"expected a lower-case snake_case word, got {text!r}")
            return None
        return text

    def integer(self, value: object, path: str) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(path, f"expected an integer, got {_shown(value)}")
            return None
        return value

    def boolean(self, value: object, path: str) -> bool | None:
        if not isinstance(value, bool):
            self.add(path, f"expected true or false, got {_shown(value)}")
            return None
        return value

    def choice(self, value: object, path: str, choices: Sequence[str], what: str) -> str | None:
        text = self.string(value, path)
        if text is None:
            return None
        if text not in choices:
            options = ", ".join(repr(c) for c in choices)
            self.add(path, f"unknown {what} {text!r}; expected one of {options}")
            return None
        return text

    def array(
        self, value: object, path: str, item: Callable[[object, str], _T | None]
    ) -> tuple[_T, ...] | None:
        if not isinstance(value, list | tuple):
            self.add(path, f"expected an array, got {_shown(value)}")
            return None
        items = [item(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if any(x is None for x in items):
            return None
        return tuple(cast(list[_T], items))

    def words(self, value: object, path: str) -> tuple[str, ...] | None:
        return self.array(value, path, self.word)

    def unique_id(
        self, d: Mapping[str, object], path: str, seen: dict[str, str], what: str
    ) -> str | None:
        """The object's ``id`` field, refused if an earlier ``what`` used it; else
        remembered in ``seen`` (id -> path of the object that defined it)."""
        ident = self.field(d, "id", path, self.ident, None)
        if ident is None:
            return None
        if ident in seen:
            self.add(
                _at(path, "id"), f"duplicate {what} id {ident!r} (first used at {seen[ident]})"
            )
            return None
        seen[ident] = path
        return ident

    def zone_ref(self, value: object, path: str) -> str | None:
        zone_id = self.ident(value, path)
        if zone_id is not None and self.zones_known and zone_id not in self.zone_ids:
            self.add(path, f"unknown zone {zone_id!r}")
            return None
        return zone_id

    # ---- document parts

    def arena(self, data: object) -> Arena | None:
        d = self.obj(data, "", _ARENA_KEYS, ("id", "name", "zones"))
        if d is None:
            return None
        self.field(d, "$schema", "", self.string, "")
        arena_id = self.field(d, "id", "", self.ident, None)
        name = self.field(d, "name", "", self.name, None)
        description = self.field(d, "description", "", self.string, "")
        self.zones_known = "zones" in d
        zones = self.field(d, "zones", "", self.zones, None)
        links = self.field(d, "links", "", self.links, ())
        assets = self.field(d, "assets", "", self.assets, ())
        lines = self.field(d, "straight_lines", "", self.straight_lines, ())
        if (
            self.problems
            or arena_id is None
            or name is None
            or description is None
            or zones is None
            or links is None
            or assets is None
            or lines is None
        ):
            return None
        return Arena(
            id=arena_id,
            name=name,
            zones=zones,
            links=links,
            assets=assets,
            straight_lines=lines,
            description=description,
        )

    def zones(self, value: object, path: str) -> tuple[Zone, ...] | None:
        if not isinstance(value, list | tuple):
            self.zones_known = False
        if isinstance(value, list | tuple) and not value:
            self.zones_known = False
            self.add(path, "an arena needs at least one zone")
            return None
        return self.array(value, path, self.zone)

    def zone(self, value: object, path: str) -> Zone | None:
        d = self.obj(value, path, _ZONE_KEYS, ("id", "name", "size"))
        if d is None:
            return None
        zone_id = self.unique_id(d, path, self.zone_ids, "zone")
        name = self.field(d, "name", path, self.name, None)
        size = self.field(d, "size", path, self.size, None)
        capacity: int | None = None  # None: not given, use the default
        capacity_ok = True
        if "capacity" in d:
            capacity = self.capacity(d["capacity"], _at(path, "capacity"))
            capacity_ok = capacity is not None
        difficult = self.field(d, "difficult", path, self.boolean, False)
        description = self.field(d, "description", path, self.string, "")
        if (
            zone_id is None
            or name is None
            or size is None
            or not capacity_ok
            or difficult is None
            or description is None
        ):
            return None
        if capacity is None:
            capacity = default_capacity(size)
        return Zone(zone_id, name, size, capacity, difficult, description)

    def size(self, value: object, path: str) -> int | None:
        if isinstance(value, str):
            size = NAMED_ZONE_SIZES.get(value.strip().lower())
            if size is None:
                names = ", ".join(f"{k.title()!r}" for k in NAMED_ZONE_SIZES)
                self.add(path, f"unknown named size {value!r}; expected feet or one of {names}")
            return size
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(path, f"expected feet (an integer) or a named size, got {_shown(value)}")
            return None
        if value < 1:
            self.add(path, f"size must be a positive number of feet, got {value}")
            return None
        return value

    def capacity(self, value: object, path: str) -> int | None:
        capacity = self.integer(value, path)
        if capacity is not None and capacity < 0:
            self.add(path, f"capacity must be 0 or more, got {capacity}")
            return None
        return capacity

    def links(self, value: object, path: str) -> tuple[Link, ...] | None:
        return self.array(value, path, self.link)

    def link(self, value: object, path: str) -> Link | None:
        d = self.obj(value, path, _LINK_KEYS, ("a", "b", "direction"))
        if d is None:
            return None
        a = self.field(d, "a", path, self.zone_ref, None)
        b = self.field(d, "b", path, self.zone_ref, None)
        direction = self.field(
            d, "direction", path, lambda v, p: self.choice(v, p, DIRECTIONS, "direction"), None
        )
        clear = self.field(d, "clear", path, self.boolean, True)
        mode = self.field(
            d, "mode", path, lambda v, p: self.choice(v, p, LINK_MODES, "mode"), "walk"
        )
        blocks_sight = self.field(d, "blocks_sight", path, self.boolean, False)
        if a is not None and b is not None:
            if a == b:
                self.add(_at(path, "b"), f"a link cannot join zone {a!r} to itself")
                return None
            self.linked.add(frozenset((a, b)))
            if direction is not None:
                key, normal = _normalised(a, b, cast(Direction, direction))
                earlier = self.directions.setdefault(key, (normal, path))
                if earlier[0] != normal:
                    self.add(
                        _at(path, "direction"),
                        f"contradicts {earlier[1]}: {key[1]!r} cannot be both"
                        f" {earlier[0]} and {normal} {key[0]!r}",
                    )
                    return None
        if (
            a is None
            or b is None
            or direction is None
            or clear is None
            or mode is None
            or blocks_sight is None
        ):
            return None
        return Link(a, b, cast(Direction, direction), clear, cast(LinkMode, mode), blocks_sight)

    def assets(self, value: object, path: str) -> tuple[Asset, ...] | None:
        return self.array(value, path, self.asset)

    def asset(self, value: object, path: str) -> Asset | None:
        d = self.obj(value, path, _ASSET_KEYS, ("id", "name", "kind", "zone"))
        if d is None:
            return None
        asset_id = self.unique_id(d, path, self.asset_ids, "asset")
        name = self.field(d, "name", path, self.name, None)
        kind = self.field(
            d, "kind", path, lambda v, p: self.choice(v, p, ASSET_KINDS, "asset kind"), None
        )
        zone = self.field(d, "zone", path, self.zone_ref, None)
        description = self.field(d, "description", path, self.string, "")
        position = self.field(d, "position", path, self.position, PositionEffect())
        forced: ForcedEffect | None = None
        forced_ok = True
        if "forced" in d:
            forced = self.forced(d["forced"], _at(path, "forced"))
            forced_ok = forced is not None
        time_sensitive = self.field(d, "time_sensitive", path, self.boolean, False)
        crossing = self.field(d, "crossing", path, lambda v, p: self.array(v, p, self.zone_ref), ())
        if crossing is not None and zone is not None:
            for i, target in enumerate(crossing):
                if target == zone:
                    self.add(f"{path}.crossing[{i}]", "an asset cannot cross to its own zone")
                    crossing = None
                elif frozenset((zone, target)) not in self.linked:
                    self.add(f"{path}.crossing[{i}]", f"zone {target!r} is not linked to {zone!r}")
                    crossing = None
        tags = self.field(d, "tags", path, self.words, ())
        if (
            asset_id is None
            or name is None
            or kind is None
            or zone is None
            or description is None
            or position is None
            or not forced_ok
            or time_sensitive is None
            or crossing is None
            or tags is None
        ):
            return None
        return Asset(
            asset_id,
            name,
            cast(AssetKind, kind),
            zone,
            description,
            position,
            forced,
            time_sensitive,
            crossing,
            tags,
        )

    def position(self, value: object, path: str) -> PositionEffect | None:
        d = self.obj(value, path, _POSITION_KEYS, ())
        if d is None:
            return None
        ac_bonus = self.field(d, "ac_bonus", path, self.integer, 0)
        advantage_on = self.field(d, "advantage_on", path, self.words, ())
        disadvantage_on = self.field(d, "disadvantage_on", path, self.words, ())
        expertise_on = self.field(d, "expertise_on", path, self.words, ())
        difficult = self.field(d, "difficult", path, self.boolean, False)
        conditions = self.field(d, "conditions", path, self.words, ())
        save: SaveEffect | None = None
        save_ok = True
        if "save" in d:
            save = self.save(d["save"], _at(path, "save"))
            save_ok = save is not None
        if (
            ac_bonus is None
            or advantage_on is None
            or disadvantage_on is None
            or expertise_on is None
            or difficult is None
            or conditions is None
            or not save_ok
        ):
            return None
        return PositionEffect(
            ac_bonus, advantage_on, disadvantage_on, expertise_on, difficult, conditions, save
        )

    def forced(self, value: object, path: str) -> ForcedEffect | None:
        d = self.obj(value, path, _FORCED_KEYS, _FORCED_KEYS)
        if d is None or "save" not in d:
            return None
        save = self.save(d["save"], _at(path, "save"))
        return None if save is None else ForcedEffect(save)

    def save(self, value: object, path: str) -> SaveEffect | None:
        d = self.obj(value, path, _SAVE_KEYS, ("ability",))
        if d is None:
            return None
        ability = self.field(
            d, "ability", path, lambda v, p: self.choice(v, p, ABILITIES, "ability"), None
        )
        # dc and damage may be null (the same as leaving them out).
        ok = True
        dc: int | None = None
        if d.get("dc") is not None:
            dc = self.dc(d["dc"], _at(path, "dc"))
            ok = ok and dc is not None
        damage: str | None = None
        if d.get("damage") is not None:
            damage = self.damage(d["damage"], _at(path, "damage"))
            ok = ok and damage is not None
        damage_type = self.field(d, "damage_type", path, self.damage_type, "")
        conditions = self.field(d, "conditions", path, self.words, ())
        description = self.field(d, "description", path, self.string, "")
        if damage is not None and damage_type == "":
            self.add(_at(path, "damage_type"), f"damage {damage!r} needs a damage_type")
            ok = False
        if d.get("damage") is None and damage_type:
            self.add(_at(path, "damage_type"), "damage_type given without damage")
            ok = False
        if (
            not ok
            or ability is None
            or damage_type is None
            or conditions is None
            or description is None
        ):
            return None
        return SaveEffect(cast(Ability, ability), dc, damage, damage_type, conditions, description)

    def dc(self, value: object, path: str) -> int | None:
        dc = self.integer(value, path)
        if dc is not None and dc < 1:
            self.add(path, f"dc must be at least 1 (or null for the forcer's DC), got {dc}")
            return None
        return dc

    def damage(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is not None and not _DICE_RE.fullmatch(text):
            self.add(path, f"bad dice expression {text!r}; expected e.g. '2d6', 'd8+1' or '5'")
            return None
        return text

    def damage_type(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is None or text == "":
            return text
        return self.choice(text, path, DAMAGE_TYPES, "damage type")

    def straight_lines(self, value: object, path: str) -> tuple[tuple[str, ...], ...] | None:
        return self.array(value, path, self.straight_line)

    def straight_line(self, value: object, path: str) -> tuple[str, ...] | None:
        line = self.array(value, path, self.zone_ref)
        if line is None:
            return None
        if len(line) < 3:
            self.add(path, f"a straight line needs at least 3 zones, got {len(line)}")
            return None
        ok = True
        for i in range(1, len(line)):
            if line[i] in line[:i]:
                self.add(f"{path}[{i}]", f"zone {line[i]!r} appears twice in the line")
                ok = False
            elif frozenset((line[i - 1], line[i])) not in self.linked:
                self.add(f"{path}[{i}]", f"zone {line[i]!r} is not linked to {line[i - 1]!r}")
                ok = False
        return line if ok else None
