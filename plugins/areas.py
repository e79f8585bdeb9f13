"""Areas of effect: one zone targeted, spilling into its neighbours, a capped number of targets.

The rules are docs/rules.md's A10 and A11 (``arena.txt:36.1``-``40.4``), as the
rulings settle them (docs/rules.md, "Rulings"):

- The area targets one zone in range: the caster's own zone always; another zone
  when there is line of sight and the effect's range is at least the path
  distance (:func:`zonekeep.sdk.path_distance`).
- It also affects every zone linked to the target zone when its largest dimension
  exceeds the target zone's size.
- The caster chooses targets in the affected zones, up to the maximum of the
  table "Area of Effect Targets".  Huge creatures count as 2 targets, Gargantuan
  3, Colossal 4; such a creature can still be chosen while at least one slot
  remains, and when its weight does not fit it gains an expertise die on its saves
  against the effect.  The caster must keep choosing while slots remain and other
  creatures are in the affected zones (it never has to choose itself or a hidden
  creature).  Creatures listed as unaffected count but roll nothing.
- Dice order: each affected target's save in the order given, then the damage
  once for the whole effect (only when someone takes damage).  A failed save (or
  no save at all) takes full damage and the conditions; a success takes half
  (rounded down) when ``half_on_save``, else nothing.
- An ongoing area becomes an element in each affected zone (ids ``<slug>-<n>`` for
  the target zone and ``<slug>-<n>@<zone>`` for each zone it spilled into), and
  every chosen target (unaffected ones included) takes position in the one in its
  zone, through :func:`~zonekeep.sdk.take_position` (so ``zonekeep_position_taken``
  runs).  The element itself carries no save: the effect's save was just made, and
  what it does to later arrivals is the GM's (or a plugin's) call.
  ``end_effect`` (GM) ends an effect and all of its parts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from zonekeep.sdk import (
    ABILITIES,
    AREA_SHAPES,
    DAMAGE_TYPES,
    Ability,
    Arena,
    Asset,
    Command,
    CommandSpec,
    Creature,
    DiceError,
    EffectCreated,
    EffectEnded,
    EncounterState,
    Param,
    RollModifier,
    RuleContext,
    Size,
    apply_condition,
    apply_damage,
    check_area,
    describe_path,
    hookimpl,
    largest_dimension,
    parse_dice,
    saving_throw,
    sight_path,
    take_position,
)

# -- the rules' tables: maximum targets, weights, spilling ---------------------------------


@attrs.frozen
class AreaRow:
    """One row of the arena text's table of area targets; all sizes in feet.

    ``cone`` is a cone's length, ``cube`` a cube's side, ``radius`` a sphere's or
    cylinder's radius, and ``lines`` the ``(width, length)`` alternatives for lines.
    """

    targets: int
    cone: int
    cube: int
    radius: int
    lines: tuple[tuple[int, int], ...]


#: The table of area targets (``arena.txt:29.1``-``33.1``), smallest row first.
AREA_TARGET_TABLE: Final[tuple[AreaRow, ...]] = (
    AreaRow(2, cone=15, cube=10, radius=5, lines=((5, 30),)),
    AreaRow(3, cone=30, cube=15, radius=10, lines=((5, 60),)),
    AreaRow(5, cone=60, cube=30, radius=20, lines=((5, 120), (10, 60))),
    AreaRow(8, cone=120, cube=60, radius=40, lines=((10, 120),)),
)

_WEIGHTS: Final[Mapping[Size, int]] = {Size.HUGE: 2, Size.GARGANTUAN: 3, Size.COLOSSAL: 4}


def max_targets(shape: str, size: int, width: int = 5) -> int:
    """The maximum number of targets of an area (docs/rules.md, A10).

    The largest table row the area equals or exceeds: 2, 3, 5 or 8; 1 when it is
    smaller than the first row.  ``size`` is as for :func:`largest_dimension`
    (radius for spheres and cylinders).  A line meets a row when, for one of the
    row's ``(width, length)`` alternatives, its width and length are both at least
    as large: a 5 by 60 ft line gets 3, a 10 by 60 ft line 5.  Raises
    ``ValueError`` for an unknown shape or a negative size or width.
    """
    check_area(shape, size, width)
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


#: The source named on the expertise die of a creature too large for the area.
TOO_LARGE = "too large for the area"

_WORD_RE = re.compile(r"[a-z][a-z0-9_]*")
_SLUG_RE = re.compile(r"[^a-z0-9]+")


def _names(names: Sequence[str], last: str = "and") -> str:
    """``"A"``, ``"A and B"``, ``"A, B and C"`` (or ``"A, B or C"`` with ``last="or"``)."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def _a(text: str) -> str:
    """``text`` with its article: "a 15-ft cone", "an 8-ft cube", "an 11-ft cube"."""
    digits = text[: len(text) - len(text.lstrip("0123456789"))]
    vowel = digits.startswith("8") or digits in ("11", "18") or text[:1] in tuple("aeiou")
    return f"{'an' if vowel else 'a'} {text}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def describe_area(shape: str, size: int, width: int = 5) -> str:
    """An area as a person says it: ``"20-ft radius sphere"``, ``"5 by 60 ft line"``."""
    if shape in ("sphere", "cylinder"):
        return f"{size}-ft radius {shape}"
    if shape == "line":
        return f"{width} by {size} ft line"
    return f"{size}-ft {shape}"


def _zone_name(state: EncounterState, zone_id: str | None) -> str:
    if zone_id is None or not state.arena.has_zone(zone_id):
        return "no zone"
    return state.arena.zone(zone_id).name


def _weight(ctx: RuleContext, creature: Creature) -> int:
    """How many targets ``creature`` counts as (``zonekeep_area_target_weight``; 1 unanswered)."""
    weight = ctx.hook.zonekeep_area_target_weight(ctx=ctx, creature=creature)
    return 1 if weight is None else int(weight)


def _counted(ctx: RuleContext, creature: Creature) -> str:
    weight = _weight(ctx, creature)
    if weight == 1:
        return creature.name
    return f"{creature.name} ({creature.size.label}, counts as {weight})"


def _free_id(state: EncounterState, name: str, spilled: Sequence[str]) -> str:
    """The smallest ``<slug>-<n>`` such that it and its ``@<zone>`` parts are all unused."""
    slug = _SLUG_RE.sub("-", name.lower()).strip("-") or "effect"
    n = 1
    while True:
        base = f"{slug}-{n}"
        ids = [base, *(f"{base}@{z}" for z in spilled)]
        if all(state.asset(i) is None for i in ids):
            return base
        n += 1


@attrs.frozen
class _Area:
    """An ``area_effect`` command's parameters, each checked on its own."""

    name: str
    shape: str
    size: int
    width: int
    reach: int
    area: str  # its words: "a 20 ft sphere"
    save: Ability | None
    dc: int
    damage: str | None
    damage_type: str
    half_on_save: bool
    conditions: tuple[str, ...]
    ongoing: bool
    targets: tuple[str, ...]
    unaffected: tuple[str, ...]


def _area_effect(ctx: RuleContext, cmd: Command) -> None:
    caster = ctx.creature(cmd.params["creature"])
    spec = _area_params(ctx, cmd.params, caster)
    zone_id = cmd.params["zone"]
    affected, maximum = _affected_zones(ctx, spec, caster, zone_id)
    chosen, oversized = _choose_targets(ctx, spec, caster, affected, maximum)
    _resolve(ctx, spec, caster, chosen, oversized)
    if spec.ongoing:
        _place_elements(ctx, spec, caster, affected, chosen)


# -- the parameters on their own -----------------------------------------------------


def _area_params(ctx: RuleContext, p: Mapping[str, Any], caster: Creature) -> _Area:
    shape, size, width, reach = _shape(ctx, p)
    name = p["name"].strip()
    if not name:
        ctx.refuse("invalid_params", "Name the effect (for example 'Fireball').")
    save, dc = _save(ctx, p, caster)
    damage, damage_type = _damage(ctx, p)
    conditions = _conditions(ctx, p.get("conditions", ()))
    targets, unaffected = _target_ids(ctx, p)
    return _Area(
        name=name,
        shape=shape,
        size=size,
        width=width,
        reach=reach,
        area=describe_area(shape, size, width),
        save=save,
        dc=dc,
        damage=damage,
        damage_type=damage_type,
        half_on_save=p.get("half_on_save", True),
        conditions=conditions,
        ongoing=p.get("ongoing", False),
        targets=targets,
        unaffected=unaffected,
    )


def _shape(ctx: RuleContext, p: Mapping[str, Any]) -> tuple[str, int, int, int]:
    """The shape, its size and width, and the range."""
    shape = p["shape"]
    if shape not in AREA_SHAPES:
        ctx.refuse(
            "invalid_params", f"The shape must be {_names(AREA_SHAPES, 'or')}, not {shape!r}."
        )
    size = p["size"]
    if size < 1:
        ctx.refuse("invalid_params", f"An area's size must be at least 1 ft, not {size} ft.")
    if "width" in p and shape != "line":
        ctx.refuse("invalid_params", f"Only a line has a width; a {shape} is given by its size.")
    width = p.get("width", 5 if shape == "line" else 0)
    if shape == "line" and width < 1:
        ctx.refuse("invalid_params", f"A line's width must be at least 1 ft, not {width} ft.")
    reach = p["range"]
    if reach < 0:
        ctx.refuse("invalid_params", f"A range cannot be negative ({reach} ft); use 0 for self.")
    return shape, size, width, reach


def _save(ctx: RuleContext, p: Mapping[str, Any], caster: Creature) -> tuple[Ability | None, int]:
    """The saving ability, if any, and the DC (the caster's unless the GM sets one)."""
    save: Ability | None = None
    if p.get("save") is not None:
        save = next((a for a in ABILITIES if a == p["save"].strip().lower()), None)
        if save is None:
            ctx.refuse(
                "invalid_params", f"The save must be {_names(ABILITIES, 'or')}, not {p['save']!r}."
            )
    if "dc" in p and save is None:
        ctx.refuse("invalid_params", "A DC was given but no save; say which ability saves.")
    dc: int = p.get("dc", caster.spell_dc)
    if dc != caster.spell_dc and not ctx.actor.is_gm:
        # The DC is the caster's, from its sheet: only the GM may set another one.
        ctx.refuse(
            "invalid_params",
            f"The save DC is {caster.name}'s spell DC ({caster.spell_dc}); only the GM can "
            f"set another ({dc}).",
        )
    if dc < 1:
        ctx.refuse("invalid_params", f"A save DC must be at least 1, not {dc}.")
    return save, dc


def _damage(ctx: RuleContext, p: Mapping[str, Any]) -> tuple[str | None, str]:
    """The damage dice, if any, and their type."""
    damage: str | None = None
    if p.get("damage") is not None:
        try:
            parsed = parse_dice(p["damage"])
        except DiceError as exc:
            ctx.refuse("invalid_params", f"The damage is not dice: {exc}.")
        if parsed.count == 0 and parsed.modifier < 1:
            ctx.refuse("invalid_params", f"The damage must be at least 1, not {p['damage']!r}.")
        if parsed.count and parsed.modifier < 0:
            ctx.refuse("invalid_params", f"The damage cannot subtract, got {p['damage']!r}.")
        damage = str(parsed)
    damage_type: str = p.get("damage_type", "").strip().lower()
    if damage is not None and damage_type not in DAMAGE_TYPES:
        what = f"not {damage_type!r}" if damage_type else "and none was given"
        ctx.refuse(
            "invalid_params",
            f"The damage needs a damage_type ({_names(DAMAGE_TYPES, 'or')}), {what}.",
        )
    if damage is None and damage_type:
        ctx.refuse("invalid_params", f"A damage_type ({damage_type}) was given without damage.")
    return damage, damage_type


def _conditions(ctx: RuleContext, given: Iterable[str]) -> tuple[str, ...]:
    """The conditions a failed save brings, each once, in the order given."""
    conditions: list[str] = []
    for condition in given:
        if not _WORD_RE.fullmatch(condition):
            ctx.refuse(
                "invalid_params",
                f"Conditions are snake_case words such as 'prone', not {condition!r}.",
            )
        if condition not in conditions:
            conditions.append(condition)
    return tuple(conditions)


def _target_ids(ctx: RuleContext, p: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The targets' ids (each once) and the unaffected ones among them."""
    target_ids: list[str] = list(p["targets"])
    duplicates = sorted({t for t in target_ids if target_ids.count(t) > 1})
    if duplicates:
        ctx.refuse("invalid_params", f"Each target is chosen once; repeated: {_names(duplicates)}.")
    unaffected: list[str] = list(p.get("unaffected", ()))
    strays = [u for u in unaffected if u not in target_ids]
    if strays:
        ctx.refuse(
            "invalid_params",
            f"Unaffected creatures must also be chosen as targets (they still count); "
            f"not among the targets: {_names(strays)}.",
        )
    return tuple(target_ids), tuple(unaffected)


# -- the target zone, and the zones it spills into -----------------------------------


def _affected_zones(
    ctx: RuleContext, spec: _Area, caster: Creature, zone_id: str
) -> tuple[tuple[str, ...], int]:
    """The zones the area affects (the target zone first) and its maximum of targets."""
    arena = ctx.state.arena
    if not arena.has_zone(zone_id):
        ctx.refuse(
            "unknown_zone",
            f"There is no zone {zone_id!r} in this arena; its zones are "
            f"{_names([z.id for z in arena.zones])}.",
        )
    if caster.zone is None or not arena.has_zone(caster.zone):
        ctx.refuse("out_of_range", f"{caster.name} is not in any zone, so it can target none.")
    if zone_id != caster.zone:
        _check_reach(ctx, spec, caster, caster.zone, zone_id)
    dimension = largest_dimension(spec.shape, spec.size, spec.width)
    spilled = ctx.hook.zonekeep_area_zones(ctx=ctx, zone=zone_id, largest_dimension=dimension)
    others = [z for z in dict.fromkeys(spilled or ()) if z != zone_id and arena.has_zone(z)]
    answer = ctx.hook.zonekeep_area_max_targets(
        ctx=ctx,
        shape=spec.shape,
        size=spec.size,
        width=spec.width if spec.shape == "line" else 5,
    )
    return (zone_id, *others), 1 if answer is None else int(answer)


def _check_reach(ctx: RuleContext, spec: _Area, caster: Creature, start: str, zone_id: str) -> None:
    """Refuse a zone out of sight or beyond the effect's range from ``start``."""
    arena = ctx.state.arena
    zone = arena.zone(zone_id)
    path = sight_path(arena, start, zone_id)
    if path is None:
        ctx.refuse(
            "no_line_of_sight",
            f"{caster.name} has no line of sight to {zone.name}: every way there "
            "crosses something that blocks sight.",
        )
    distance = sum(arena.zone(z).size for z in path)
    if distance > spec.reach:
        has = (
            f"has no range, so it can only target {caster.name}'s own zone"
            f" ({_zone_name(ctx.state, start)})"
            if spec.reach == 0
            else f"has a range of {spec.reach} ft"
        )
        ctx.refuse(
            "out_of_range",
            f"{zone.name} is {distance} ft from {caster.name} "
            f"({describe_path(arena, path)}); {spec.name} {has}.",
        )


# -- the targets ---------------------------------------------------------------------


def _choose_targets(
    ctx: RuleContext,
    spec: _Area,
    caster: Creature,
    affected: tuple[str, ...],
    maximum: int,
) -> tuple[list[Creature], set[str]]:
    """The targets, checked against the area and its slots; the ids of those whose
    weight did not fit (they save with an expertise die)."""
    state = ctx.state
    reached = _names([state.arena.zone(z).name for z in affected])
    chosen: list[Creature] = []
    for tid in spec.targets:
        target = ctx.creature(tid, role="target")
        if target.out_of_fight:
            ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
        if target.zone not in affected:
            ctx.refuse(
                "invalid_target",
                f"{target.name} is in {_zone_name(state, target.zone)}, outside {spec.name}'s "
                f"area (it affects {reached}).",
            )
        chosen.append(target)
    used = 0
    oversized: set[str] = set()
    for i, target in enumerate(chosen):
        if used >= maximum:
            ctx.refuse(
                "too_many_targets",
                f"{spec.name} ({_a(spec.area)}) can have at most {_plural(maximum, 'target')}; "
                f"{_names([_counted(ctx, c) for c in chosen[:i]])} already "
                f"{'fills' if i == 1 else 'fill'} {'it' if maximum == 1 else 'them'}, "
                f"so {target.name} cannot be added.",
            )
        weight = _weight(ctx, target)
        if used + weight > maximum:
            oversized.add(target.id)
            used = maximum
        else:
            used += weight
    if used < maximum:
        left_out = [
            c.name
            for z in affected
            for c in state.in_zone(z)
            if c.id not in spec.targets and c.id != caster.id and not c.hidden
        ]
        if left_out:
            ctx.refuse(
                "too_few_targets",
                f"{spec.name} ({_a(spec.area)}) has {_plural(maximum - used, 'target slot')} "
                f"left and must fill them while creatures remain in its area: "
                f"{_names(left_out)} {'is' if len(left_out) == 1 else 'are'} not chosen.",
            )
    return chosen, oversized


# -- saves, then one damage roll, then the outcome per target ------------------------


def _resolve(
    ctx: RuleContext, spec: _Area, caster: Creature, chosen: list[Creature], oversized: set[str]
) -> None:
    outcomes: list[tuple[Creature, bool]] = []
    for target in chosen:
        if target.id in spec.unaffected:
            continue
        succeeded = False
        if spec.save is not None:
            extra = (RollModifier("expertise", TOO_LARGE),) if target.id in oversized else ()
            succeeded = saving_throw(ctx, target, spec.save, spec.dc, spec.name, extra=extra)
        outcomes.append((target, succeeded))
    hurt = any(not ok or spec.half_on_save for _, ok in outcomes)
    damage_roll = ctx.roll(spec.damage) if spec.damage is not None and hurt else None
    for target, succeeded in outcomes:
        if damage_roll is not None:
            amount = damage_roll.total
            if succeeded:
                amount = amount // 2 if spec.half_on_save else 0
            if amount > 0:
                apply_damage(
                    ctx,
                    target,
                    amount,
                    damage_type=spec.damage_type,
                    roll=damage_roll,
                    source=caster.id,
                )
        if not succeeded:
            for condition in spec.conditions:
                if condition not in target.conditions:
                    apply_condition(ctx, target.id, condition, spec.name)


# -- an ongoing area becomes elements its targets are in -----------------------------


def _place_elements(
    ctx: RuleContext,
    spec: _Area,
    caster: Creature,
    affected: tuple[str, ...],
    chosen: list[Creature],
) -> None:
    zone_id, spilled_into = affected[0], affected[1:]
    zone = ctx.state.arena.zone(zone_id)
    base = _free_id(ctx.state, spec.name, spilled_into)
    elements: dict[str, Asset] = {}
    for z in affected:
        spilled = "" if z == zone_id else f", spilling from {zone.name}"
        elements[z] = Asset(
            base if z == zone_id else f"{base}@{z}",
            spec.name,
            "element",
            z,
            description=f"{spec.name}: {_a(spec.area)} by {caster.name}{spilled}.",
        )
        ctx.emit(EffectCreated(elements[z], owner=caster.id))
    for target in chosen:
        assert target.zone is not None
        take_position(ctx, target, elements[target.zone], by=caster.id)


def _end_effect(ctx: RuleContext, cmd: Command) -> None:
    asset_id = cmd.params["asset"]
    state = ctx.state
    if asset_id not in state.effects:
        if state.asset(asset_id) is not None:
            ctx.refuse(
                "unknown_effect",
                f"{asset_id!r} is part of the arena, not an ongoing effect, so it cannot end.",
            )
        running = _names(sorted(state.effects)) or "none"
        ctx.refuse(
            "unknown_effect", f"There is no ongoing effect {asset_id!r}; ongoing now: {running}."
        )
    reason = cmd.params.get("reason", "").strip() or f"ended by {ctx.actor.id}"
    parts = [a for a in state.effects if a.startswith(f"{asset_id}@")]
    for part in [asset_id, *parts]:
        ctx.emit(EffectEnded(part, reason))


@hookimpl
def zonekeep_area_max_targets(ctx: RuleContext, shape: str, size: int, width: int) -> int:
    return max_targets(shape, size, width)


@hookimpl
def zonekeep_area_target_weight(ctx: RuleContext, creature: Creature) -> int:
    return target_weight(creature.size)


@hookimpl
def zonekeep_area_zones(ctx: RuleContext, zone: str, largest_dimension: int) -> Iterable[str]:
    return spill_zones(ctx.state.arena, zone, largest_dimension)


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "area_effect",
            _area_effect,
            "Action: create an area effect (a spell or ability) aimed at one zone in range.",
            {
                "creature": Param("creature", True, "the creature creating the effect"),
                "zone": Param("zone", True, "the zone the area is aimed at"),
                "shape": Param("string", True, "cone, cube, sphere, cylinder or line"),
                "size": Param(
                    "integer",
                    True,
                    "feet: a cone's or line's length, a cube's side, a sphere's or "
                    "cylinder's radius",
                ),
                "width": Param("integer", False, "a line's width in feet (default 5)"),
                "range": Param(
                    "integer", True, "the effect's range in feet (0: only the own zone)"
                ),
                "targets": Param(
                    "creatures", True, "the creatures chosen, in order (Huge+ count more)"
                ),
                "unaffected": Param(
                    "creatures", False, "chosen targets that are unaffected but still count"
                ),
                "save": Param("string", False, "the saving throw's ability (str ... cha)"),
                "dc": Param(
                    "integer",
                    False,
                    "the save DC: the caster's spell DC (another one: the GM only)",
                ),
                "damage": Param("string", False, "damage dice, rolled once for everyone"),
                "damage_type": Param("string", False, "the damage type (fire, cold, ...)"),
                "half_on_save": Param(
                    "boolean", False, "a successful save halves the damage (default true)"
                ),
                "conditions": Param("strings", False, "conditions applied on a failed save"),
                "ongoing": Param(
                    "boolean", False, "the area persists as an element its targets are in"
                ),
                "name": Param("string", True, "the effect's name, e.g. 'Fireball'"),
            },
            costs=("action",),
            on_turn=True,
        ),
        CommandSpec(
            "end_effect",
            _end_effect,
            "GM: end an ongoing area effect (and the parts that spilled into other zones).",
            {
                "asset": Param("string", True, "the effect's id"),
                "reason": Param("string", False, "why it ends (default: ended by the GM)"),
            },
            who="gm",
        ),
    )
