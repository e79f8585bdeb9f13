"""Zone geometry: paths, distances and line of sight between zones; area sizes.

Pure functions over an :class:`~zonekeep.sdk.Arena`.  Nothing here emits events,
refuses commands or decides a rule: these are the measurements the rule plugins
share.  The rules that use them live in plugins: who is in range of an attack
(``zonekeep.plugins.targeting``), how many targets an area has and where it spills
(``zonekeep.plugins.areas``, behind ``zonekeep_area_max_targets``,
``zonekeep_area_target_weight`` and ``zonekeep_area_zones``).

The measurements are the targeting rules (docs/rules.md, A9; ``arena.txt:26.1``,
``arena.txt:27.1``): inside your own zone the distance is 0; reaching another
zone takes the sum of the sizes of every zone on the path except your own, along
the shortest path whose links do not block sight.  Links that are not a clear path
for movement still carry sight and range.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Final, Literal, get_args

from ._arena import Arena

__all__ = [
    "AREA_SHAPES",
    "AreaShape",
    "check_area",
    "describe_path",
    "largest_dimension",
    "line_of_sight",
    "path_distance",
    "sight_path",
]

AreaShape = Literal["cone", "cube", "sphere", "cylinder", "line"]
#: The area shapes the arena text's table knows.
AREA_SHAPES: Final[tuple[AreaShape, ...]] = get_args(AreaShape)


# --------------------------------------------------------------------------- range


def sight_path(arena: Arena, from_zone: str, to_zone: str) -> tuple[str, ...] | None:
    """The shortest path with line of sight from ``from_zone`` to ``to_zone``.

    Returns the zones entered along the path, in order, *without* the starting
    zone and *with* ``to_zone`` last; ``()`` when both are the same zone; ``None``
    when every path crosses a link that blocks sight (or there is no path at all).

    "Shortest" is by the sum of the sizes of the zones entered (docs/rules.md,
    A9).  Links that are not a clear path still count: range and sight
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


# --------------------------------------------------------------------------- areas


def check_area(shape: str, size: int, width: int = 0) -> None:
    """Raise ``ValueError`` for an unknown area shape or a negative size or width."""
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
    check_area(shape, size, width)
    if shape in ("sphere", "cylinder"):
        return 2 * size
    if shape == "line":
        return max(size, width)
    return size
