"""Zone geometry: range, line of sight and areas of effect between zones.

Pure functions over an :class:`~zonekeep.sdk.Arena` (and, for the creature-level
checks, an :class:`~zonekeep.sdk.EncounterState`).  Nothing here emits events or
refuses commands; rules call these and decide what to do with the answers.

The rules are ``arena.txt`` ("Targeting", "Areas of Effect") as settled by
RULINGS.md ("Targeting and areas"):

* Inside your own zone everything is in range and in line of sight.
* Reaching another zone needs line of sight and a range at least the sum of the
  sizes of every zone on the path except your own, along the shortest such path.
  A link with ``blocks_sight`` cannot be part of that path; links that are not a
  clear path for movement still carry sight and range.
* An area targets one zone and spills into every adjacent zone when its largest
  dimension exceeds that zone's size.  Its maximum number of targets comes from
  the arena text's table; Huge creatures count as 2 targets, Gargantuan 3,
  Colossal 4.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, get_args

import attrs

from ._arena import Arena
from ._types import Size

if TYPE_CHECKING:
    from ._state import EncounterState

__all__ = [
    "AREA_SHAPES",
    "AREA_TARGET_TABLE",
    "AreaRow",
    "AreaShape",
    "describe_path",
    "largest_dimension",
    "line_of_sight",
    "long_range_disadvantage",
    "max_targets",
    "path_distance",
    "range_refusal",
    "sight_path",
    "spill_zones",
    "target_weight",
]

AreaShape = Literal["cone", "cube", "sphere", "cylinder", "line"]
#: The area shapes the arena text's table knows.
AREA_SHAPES: Final[tuple[AreaShape, ...]] = get_args(AreaShape)


@attrs.frozen
class AreaRow:
    """One row of the table "Area of Effect Targets" (arena.txt); all sizes in feet.

    ``cone`` is a cone's length, ``cube`` a cube's side, ``radius`` a sphere's or
    cylinder's radius, and ``lines`` the ``(width, length)`` alternatives for lines.
    """

    targets: int
    cone: int
    cube: int
    radius: int
    lines: tuple[tuple[int, int], ...]


#: The table "Area of Effect Targets" (arena.txt), smallest row first.
AREA_TARGET_TABLE: Final[tuple[AreaRow, ...]] = (
    AreaRow(2, cone=15, cube=10, radius=5, lines=((5, 30),)),
    AreaRow(3, cone=30, cube=15, radius=10, lines=((5, 60),)),
    AreaRow(5, cone=60, cube=30, radius=20, lines=((5, 120), (10, 60))),
    AreaRow(8, cone=120, cube=60, radius=40, lines=((10, 120),)),
)

_WEIGHTS: Final[Mapping[Size, int]] = {Size.HUGE: 2, Size.GARGANTUAN: 3, Size.COLOSSAL: 4}


# --------------------------------------------------------------------------- range


def sight_path(arena: Arena, from_zone: str, to_zone: str) -> tuple[str, ...] | None:
    """The shortest path with line of sight from ``from_zone`` to ``to_zone``.

    Returns the zones entered along the path, in order, *without* the starting
    zone and *with* ``to_zone`` last; ``()`` when both are the same zone; ``None``
    when every path crosses a link that blocks sight (or there is no path at all).

    "Shortest" is by the sum of the sizes of the zones entered (RULINGS, "Range
    between zones").  Links that are not a clear path still count: range and sight
    do not need a walkable way.  Among paths of equal length the one with fewer
    zones wins, then the one found first in link declaration order, so the answer
    is deterministic.  Raises ``KeyError`` for a zone not in the arena.
    """
    arena.zone(from_zone)
    arena.zone(to_zone)
    if from_zone == to_zone:
        return ()
    best: dict[str, tuple[int, int]] = {from_zone: (0, 0)}
    previous: dict[str, str] = {}
    counter = 0
    queue: list[tuple[int, int, int, str]] = [(0, 0, counter, from_zone)]
    done: set[str] = set()
    while queue:
        distance, hops, _, zone_id = heapq.heappop(queue)
        if zone_id in done:
            continue
        done.add(zone_id)
        if zone_id == to_zone:
            break
        for link, other in arena.neighbours(zone_id):
            if link.blocks_sight or other in done:
                continue
            candidate = (distance + arena.zone(other).size, hops + 1)
            if other not in best or candidate < best[other]:
                best[other] = candidate
                previous[other] = zone_id
                counter += 1
                heapq.heappush(queue, (*candidate, counter, other))
    if to_zone not in done:
        return None
    path = [to_zone]
    while path[-1] in previous and previous[path[-1]] != from_zone:
        path.append(previous[path[-1]])
    return tuple(reversed(path))


def path_distance(arena: Arena, from_zone: str, to_zone: str) -> int | None:
    """The range in feet needed to reach ``to_zone`` from ``from_zone``.

    0 inside one's own zone; otherwise the sum of the sizes of every zone on the
    shortest path with line of sight, except the starting zone (an adjacent Small
    zone is 15 ft away).  ``None`` when there is no line of sight.  Raises
    ``KeyError`` for a zone not in the arena.
    """
    path = sight_path(arena, from_zone, to_zone)
    if path is None:
        return None
    return _path_length(arena, path)


def _path_length(arena: Arena, path: Sequence[str]) -> int:
    """The sum of the sizes of the zones of ``path`` (a :func:`sight_path` answer)."""
    return sum(arena.zone(z).size for z in path)


def line_of_sight(arena: Arena, a: str, b: str) -> bool:
    """Whether there is line of sight between zones ``a`` and ``b``.

    Always true inside one zone; otherwise true when some chain of links that do
    not block sight joins them.  Symmetric.  Raises ``KeyError`` for an unknown zone.
    """
    return sight_path(arena, a, b) is not None


def describe_path(arena: Arena, path: Sequence[str]) -> str:
    """A path as a person reads it, with each zone's size: ``"Bar 15 ft + Kitchen 30 ft"``."""
    return " + ".join(f"{arena.zone(z).name} {arena.zone(z).size} ft" for z in path)


def range_refusal(
    state: EncounterState,
    attacker_id: str,
    target_id: str,
    reach_or_range: int,
    long_range: int = 0,
    *,
    melee: bool,
    what: str = "the attack",
) -> tuple[str, str] | None:
    """Whether ``attacker_id`` can reach ``target_id``; the refusal if not.

    Returns ``None`` when the target can be targeted, else ``(code, sentence)`` with
    code ``"no_line_of_sight"`` or ``"out_of_range"`` and a sentence that names both
    creatures, the distance and the path.  ``what`` names the attack or ability in
    the sentence (``"Aria's shortbow"``).

    * The same zone is always in range and in sight, melee or not.
    * A melee attack reaches another zone only when ``reach_or_range`` is at least
      the path distance (a 5-ft reach never does).
    * A ranged attack reaches up to ``reach_or_range``, or up to ``long_range``
      when that is larger; beyond the normal range the attack is allowed and
      :func:`long_range_disadvantage` tells the caller to add disadvantage.
    * A creature that is not in any zone is out of range of everything.

    Raises ``KeyError`` for an unknown creature id.
    """
    attacker = state.creatures[attacker_id]
    target = state.creatures[target_id]
    for creature in (attacker, target):
        if creature.zone is None or not state.arena.has_zone(creature.zone):
            return ("out_of_range", f"{creature.name} is not in any zone of the arena.")
    assert attacker.zone is not None and target.zone is not None
    if attacker.zone == target.zone:
        return None
    arena = state.arena
    path = sight_path(arena, attacker.zone, target.zone)
    where = arena.zone(target.zone).name
    if path is None:
        return (
            "no_line_of_sight",
            f"{attacker.name} has no line of sight to {target.name} in {where}: "
            "every way there crosses something that blocks sight.",
        )
    distance = _path_length(arena, path)
    away = f"{target.name} is {distance} ft from {attacker.name} ({describe_path(arena, path)})"
    if melee:
        if reach_or_range >= distance:
            return None
        return (
            "out_of_range",
            f"{away}; {what} reaches {reach_or_range} ft, so a melee attack needs "
            f"{target.name} in {attacker.name}'s zone or a reach of {distance} ft.",
        )
    if distance <= max(reach_or_range, long_range):
        return None
    if long_range > reach_or_range:
        reaches = f"{what} reaches {reach_or_range} ft, or {long_range} ft at long range"
    else:
        reaches = f"{what} reaches only {reach_or_range} ft"
    return ("out_of_range", f"{away}; {reaches}.")


def long_range_disadvantage(
    state: EncounterState,
    attacker_id: str,
    target_id: str,
    normal_range: int,
    long_range: int,
) -> bool:
    """Whether a ranged attack is at long range and so has disadvantage.

    True exactly when the target is in another zone, in sight, farther than
    ``normal_range`` and no farther than ``long_range``.  False whenever
    :func:`range_refusal` would refuse the attack or the target is within normal
    range.  Raises ``KeyError`` for an unknown creature id.
    """
    a = state.creatures[attacker_id].zone
    b = state.creatures[target_id].zone
    if a is None or b is None or not (state.arena.has_zone(a) and state.arena.has_zone(b)):
        return False
    distance = path_distance(state.arena, a, b)
    return distance is not None and normal_range < distance <= long_range


# --------------------------------------------------------------------------- areas


def _check_area(shape: str, size: int, width: int) -> None:
    if shape not in AREA_SHAPES:
        raise ValueError(f"unknown area shape {shape!r}; expected one of {', '.join(AREA_SHAPES)}")
    if size < 0 or width < 0:
        raise ValueError(f"an area's size and width cannot be negative (got {size}, {width})")


def largest_dimension(shape: str, size: int, width: int = 0) -> int:
    """The largest dimension of an area, in feet, for deciding whether it spills.

    ``size`` is a cone's length, a cube's side, a sphere's or cylinder's radius
    (so the answer is the diameter, ``2 * size``), or a line's length (the answer
    is the larger of length and ``width``, which is the length for any real line).
    Raises ``ValueError`` for an unknown shape or a negative size or width.
    """
    _check_area(shape, size, width)
    if shape in ("sphere", "cylinder"):
        return 2 * size
    if shape == "line":
        return max(size, width)
    return size


def max_targets(shape: str, size: int, width: int = 5) -> int:
    """The maximum number of targets of an area (arena.txt, "Area of Effect Targets").

    The largest table row the area equals or exceeds: 2, 3, 5 or 8; 1 when it is
    smaller than the first row.  ``size`` is as for :func:`largest_dimension`
    (radius for spheres and cylinders).  A line meets a row when, for one of the
    row's ``(width, length)`` alternatives, its width and length are both at least
    as large: a 5 by 60 ft line gets 3, a 10 by 60 ft line 5.  Raises
    ``ValueError`` for an unknown shape or a negative size or width.
    """
    _check_area(shape, size, width)
    best = 1
    for row in AREA_TARGET_TABLE:
        if shape == "line":
            meets = any(width >= w and size >= length for w, length in row.lines)
        elif shape == "cone":
            meets = size >= row.cone
        elif shape == "cube":
            meets = size >= row.cube
        else:
            meets = size >= row.radius
        if meets:
            best = row.targets
    return best


def spill_zones(arena: Arena, target_zone: str, largest_dimension: int) -> tuple[str, ...]:
    """The zones an area aimed at ``target_zone`` affects, target zone first.

    When ``largest_dimension`` exceeds the target zone's size (strictly), every zone
    linked to it is added, whatever the link (clear or not, blocking sight or not),
    each once, in link declaration order.  Otherwise only the target zone.  Raises
    ``KeyError`` for a zone not in the arena.
    """
    zone = arena.zone(target_zone)
    zones = [target_zone]
    if largest_dimension > zone.size:
        for _link, other in arena.neighbours(target_zone):
            if other not in zones:
                zones.append(other)
    return tuple(zones)


def target_weight(size: Size) -> int:
    """How many targets a creature of ``size`` counts as: Huge 2, Gargantuan 3, Colossal 4, else 1."""
    return _WEIGHTS.get(size, 1)
