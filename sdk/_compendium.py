"""The creature compendium: stat blocks by id, and player character files.

A compendium entry (:class:`CompendiumEntry`) is a creature's published statistics as
data: size, speeds, ability modifiers, AC, hit points (average and dice), passive
Perception, attacks, saves, condition immunities, damage resistances, vulnerabilities
and immunities, challenge rating, type and tags. Entries come in sources
(:class:`CompendiumSource`, one file or one plugin's contribution), each with a name;
an entry's id is ``<source>.<entry id>`` (``srd.goblin``), so two sources never clash
silently, and :class:`Compendium` refuses a source name declared twice.

:func:`entry_creatures` turns an entry, a count and per-copy overrides into roster
creatures; copies of one entry form one initiative group (docs/rules.md, 3;
``encounter.txt:12.3``). :func:`roster_reference` does the same
for a roster item that names an entry (``{"compendium": "srd.goblin", "count": 4}``).

Player character files (docs/characters.md) are in :mod:`._character`; they share
this module's ranges and checks of attacks, abilities and damage types.

The damage resistances, vulnerabilities and immunities and the condition immunities
go onto the roster creatures, where :func:`zonekeep.sdk.apply_damage` and
:func:`zonekeep.sdk.apply_condition` apply them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, get_args

import attrs
import cattrs

from ._dice import DiceError, parse_dice
from ._features import USES_RANGES, Action, Trait, feature_data_problems
from ._serial import converter, creature_from_dict, describe_errors
from ._types import GM, Attack, Creature, Size
from ._vocabulary import ABILITIES, DAMAGE_TYPES

__all__ = [
    "CHALLENGE_RATINGS",
    "COMPENDIUM_RANGES",
    "CREATURE_TYPES",
    "ENTRY_SPEED_MODES",
    "Compendium",
    "CompendiumEntry",
    "CompendiumError",
    "CompendiumSource",
    "HitPoints",
    "entry_creatures",
    "expand_roster",
    "load_compendium_file",
    "parse_compendium_source",
    "proficiency_bonus",
    "roster_reference",
    "source_problems",
]

#: The challenge ratings a stat block may have (SRD 5.1: 0, 1/8, 1/4, 1/2, 1 to 30).
CHALLENGE_RATINGS: Final[tuple[float, ...]] = (0, 0.125, 0.25, 0.5, *range(1, 31))

#: The creature types of SRD 5.1.
CreatureType = Literal[
    "aberration",
    "beast",
    "celestial",
    "construct",
    "dragon",
    "elemental",
    "fey",
    "fiend",
    "giant",
    "humanoid",
    "monstrosity",
    "ooze",
    "plant",
    "undead",
]
CREATURE_TYPES: Final[tuple[str, ...]] = get_args(CreatureType)

#: The movement modes an entry may give a speed for: the arena's link modes and burrow
#: (which no link needs; kept as data).
EntrySpeedMode = Literal["walk", "climb", "swim", "fly", "burrow"]
ENTRY_SPEED_MODES: Final[tuple[str, ...]] = get_args(EntrySpeedMode)

#: The ranges the rules accept, both ends included: checked by :func:`entry_problems`
#: and ``character_problems``, and written into the generated JSON Schemas.
COMPENDIUM_RANGES: Final[dict[str, tuple[int, int]]] = {
    "ac": (1, 30),
    "hp": (1, 999),
    "ability": (-5, 10),
    "save": (-5, 20),
    "skill": (-5, 20),
    "speed": (0, 300),
    "passive_perception": (1, 40),
    "attack_bonus": (-5, 20),
    "reach": (5, 30),
    "range": (0, 1000),
    "dc": (1, 30),
    "sense": (0, 300),
    "proficiency_bonus": (2, 9),
    # An attack's damage dice, NdS+M: N, S and M (a flat damage is M alone, at least 1).
    "damage_dice": (1, 20),
    "damage_die": (2, 20),
    "damage_modifier": (-5, 20),
    # A trait's or action's uses: recharge (the lowest d6 roll), count per period, charges.
    **USES_RANGES,
}

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_SOURCE = re.compile(r"^[a-z][a-z0-9_-]*$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9 _-]*$")


class CompendiumError(ValueError):
    """A compendium file, source or entry with problems (every one listed), or a
    source name declared twice."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def proficiency_bonus(challenge: float) -> int:
    """The proficiency bonus of a creature of this challenge rating (SRD 5.1: +2 up to
    CR 4, +3 for 5-8, ... +9 for 29-30)."""
    return 2 + max(0, math.ceil(challenge) - 1) // 4


# -- the entry ---------------------------------------------------------------------------------


@attrs.frozen
class HitPoints:
    """Hit points as a stat block gives them: the ``average`` and the ``dice`` it is
    the average of (``"2d6"``, ``"11d10+22"``)."""

    average: int
    dice: str


@attrs.frozen
class CompendiumEntry:
    """One creature's statistics. ``id`` is its name inside its source (the full id is
    ``<source>.<id>``); ``abilities`` the six ability modifiers; ``saves`` and ``skills``
    only the bonuses the stat block lists (a save it does not list is its ability
    modifier); ``challenge`` the challenge rating (0.125 for 1/8). ``maneuver_dc`` and
    ``spell_dc``, when absent, are 8 + proficiency bonus + Strength modifier and 10."""

    id: str
    name: str
    size: Size
    type: CreatureType
    ac: int
    hp: HitPoints
    speeds: dict[str, int]
    abilities: dict[str, int]
    passive_perception: int
    challenge: float
    attacks: tuple[Attack, ...] = ()
    armor: str = ""
    saves: dict[str, int] = attrs.field(factory=dict)
    skills: dict[str, int] = attrs.field(factory=dict)
    senses: dict[str, int] = attrs.field(factory=dict)
    condition_immunities: tuple[str, ...] = ()
    damage_resistances: tuple[str, ...] = ()
    damage_vulnerabilities: tuple[str, ...] = ()
    damage_immunities: tuple[str, ...] = ()
    maneuver_dc: int | None = None
    spell_dc: int | None = None
    traits: tuple[Trait, ...] = ()
    tags: tuple[str, ...] = ()
    actions: tuple[Action, ...] = ()
    damage_resistances_nonmagical: tuple[str, ...] = ()
    damage_immunities_nonmagical: tuple[str, ...] = ()

    @property
    def proficiency(self) -> int:
        return proficiency_bonus(self.challenge)


@attrs.frozen
class CompendiumSource:
    """A named set of entries: one compendium file, or what one plugin contributes.
    ``name`` prefixes every id (``srd`` -> ``srd.goblin``); ``attribution`` is the
    credit its licence requires (shown by ``list_compendium`` with every entry)."""

    name: str
    title: str
    entries: tuple[CompendiumEntry, ...]
    attribution: str = ""
    license: str = ""


def _in_range(problems: list[str], where: str, key: str, value: int) -> None:
    low, high = COMPENDIUM_RANGES[key]
    if not low <= value <= high:
        problems.append(f"{where}: {value} is outside {low} to {high}")


def _attack_problems(attack: Attack, where: str) -> list[str]:
    problems: list[str] = []
    if not attack.name.strip():
        problems.append(f"{where}.name: must not be empty")
    _in_range(problems, f"{where}.bonus", "attack_bonus", attack.bonus)
    problems += _damage_problems(attack.damage, f"{where}.damage")
    if attack.damage_type not in DAMAGE_TYPES:
        problems.append(f"{where}.damage_type: {attack.damage_type!r} is not a damage type")
    if attack.kind not in ("melee", "ranged"):
        problems.append(f"{where}.kind: must be melee or ranged")
    if attack.kind == "melee":
        _in_range(problems, f"{where}.reach", "reach", attack.reach)
        if attack.reach % 5:
            problems.append(f"{where}.reach: must be a multiple of 5 feet")
    else:
        if attack.range <= 0:
            problems.append(f"{where}.range: a ranged attack needs a range")
        _in_range(problems, f"{where}.range", "range", attack.range)
        _in_range(problems, f"{where}.long_range", "range", attack.long_range)
        if attack.long_range and attack.long_range < attack.range:
            problems.append(f"{where}.long_range: shorter than the normal range")
    return problems


def _damage_problems(expr: str, where: str) -> list[str]:
    """An attack's damage: dice (:func:`parse_dice`, which bounds every expression), then
    the ranges of an attack's dice, die and modifier, like every other number of a sheet."""
    try:
        dice = parse_dice(expr)
    except DiceError as exc:
        return [f"{where}: {exc}"]
    problems: list[str] = []
    if dice.count == 0:
        if dice.modifier < 1:
            problems.append(f"{where}: a flat damage is at least 1, not {dice.modifier}")
        _in_range(problems, where, "damage_modifier", dice.modifier)
        return problems
    for key, value, what in (
        ("damage_dice", dice.count, "number of dice"),
        ("damage_die", dice.sides, "die's sides"),
        ("damage_modifier", dice.modifier, "modifier"),
    ):
        low, high = COMPENDIUM_RANGES[key]
        if not low <= value <= high:
            problems.append(f"{where}: the {what} ({value}) must be from {low} to {high}")
    return problems


#: The fields of a creature, an entry or a sheet that name damage types.
DEFENCE_FIELDS: Final[tuple[str, ...]] = (
    "damage_resistances",
    "damage_vulnerabilities",
    "damage_immunities",
)


def damage_type_problems(holder: object, where: str) -> list[str]:
    """A sentence for every damage type ``holder`` (a creature, entry or sheet) names in
    its resistances, vulnerabilities or immunities that is not one of
    :data:`DAMAGE_TYPES`, and for every condition immunity that is blank."""
    problems: list[str] = []
    for field in DEFENCE_FIELDS:
        for kind in getattr(holder, field, ()):
            if kind not in DAMAGE_TYPES:
                problems.append(
                    f"{where}.{field}: {kind!r} is not a damage type ({', '.join(DAMAGE_TYPES)})"
                )
    for condition in getattr(holder, "condition_immunities", ()):
        if not isinstance(condition, str) or not condition.strip():
            problems.append(f"{where}.condition_immunities: a condition needs a name")
    return problems


def dice_average(expr: str) -> int:
    """The average of a dice expression, rounded down, as stat blocks give hit points."""
    dice = parse_dice(expr)
    return math.floor(dice.count * (dice.sides + 1) / 2 + dice.modifier)


def _modes_problems(speeds: Mapping[Any, int], where: str, modes: Iterable[str]) -> list[str]:
    problems: list[str] = []
    for mode, feet in speeds.items():
        if mode not in modes:
            problems.append(f"{where}.{mode}: not a movement mode ({', '.join(modes)})")
        _in_range(problems, f"{where}.{mode}", "speed", feet)
        if feet % 5:
            problems.append(f"{where}.{mode}: must be a multiple of 5 feet")
    if "walk" not in speeds:
        problems.append(f"{where}: needs a walk speed (0 for none)")
    return problems


def _abilities_problems(
    values: Mapping[str, int], where: str, key: str, *, all_six: bool
) -> list[str]:
    problems: list[str] = []
    for name, value in values.items():
        if name not in ABILITIES:
            problems.append(f"{where}.{name}: not an ability ({', '.join(ABILITIES)})")
        _in_range(problems, f"{where}.{name}", key, value)
    missing = [a for a in ABILITIES if a not in values]
    if all_six and missing:
        problems.append(f"{where}: missing {', '.join(missing)} (all six abilities are needed)")
    return problems


def entry_problems(entry: CompendiumEntry, where: str = "entry") -> list[str]:
    """Every way ``entry`` breaks the rules' ranges or contradicts itself: one sentence
    each, naming the field. An empty list means it is fine."""
    problems: list[str] = []
    if not _ID.match(entry.id):
        problems.append(f"{where}.id: {entry.id!r} must be lower-case letters, digits, - or _")
    if not entry.name.strip():
        problems.append(f"{where}.name: must not be empty")
    _in_range(problems, f"{where}.ac", "ac", entry.ac)
    _in_range(problems, f"{where}.hp.average", "hp", entry.hp.average)
    try:
        expected = dice_average(entry.hp.dice)
    except DiceError as exc:
        problems.append(f"{where}.hp.dice: {exc}")
    else:
        if expected != entry.hp.average:
            problems.append(
                f"{where}.hp: {entry.hp.dice} averages {expected}, not {entry.hp.average}"
            )
    problems += _modes_problems(entry.speeds, f"{where}.speeds", ENTRY_SPEED_MODES)
    problems += _abilities_problems(entry.abilities, f"{where}.abilities", "ability", all_six=True)
    problems += _abilities_problems(entry.saves, f"{where}.saves", "save", all_six=False)
    for skill, bonus in entry.skills.items():
        _in_range(problems, f"{where}.skills.{skill}", "skill", bonus)
    for sense, feet in entry.senses.items():
        _in_range(problems, f"{where}.senses.{sense}", "sense", feet)
    _in_range(
        problems, f"{where}.passive_perception", "passive_perception", entry.passive_perception
    )
    perception = entry.skills.get("perception", entry.abilities.get("wis", 0))
    if entry.passive_perception != 10 + perception:
        problems.append(
            f"{where}.passive_perception: {entry.passive_perception} is not 10 + its "
            f"Perception ({perception:+d})"
        )
    if entry.challenge not in CHALLENGE_RATINGS:
        problems.append(f"{where}.challenge: {entry.challenge} is not a challenge rating")
    for i, attack in enumerate(entry.attacks):
        problems += _attack_problems(attack, f"{where}.attacks[{i}]")
    names = [a.name for a in entry.attacks]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{where}.attacks: two attacks are named {name!r}")
    problems += damage_type_problems(entry, where)
    problems += feature_data_problems(entry, where)
    for dc_field in ("maneuver_dc", "spell_dc"):
        dc = getattr(entry, dc_field)
        if dc is not None:
            _in_range(problems, f"{where}.{dc_field}", "dc", dc)
    for tag in entry.tags:
        if not _TAG.match(tag):
            problems.append(f"{where}.tags: {tag!r} must be lower-case words")
    return problems


def _structure(data: object, cls: type[Any], where: str) -> Any:
    if not isinstance(data, Mapping):
        raise CompendiumError([f"{where}: must be an object"])
    try:
        return converter.structure(dict(data), cls)
    except cattrs.BaseValidationError as exc:
        raise CompendiumError(describe_errors(exc, where)) from None


def parse_compendium_source(data: object, where: str = "compendium") -> CompendiumSource:
    """A compendium file's content (or a plugin's source as a dict) checked in full:
    :class:`CompendiumError` lists every problem, each with its place."""
    if isinstance(data, Mapping):
        data = {k: v for k, v in data.items() if k != "$schema"}
    source: CompendiumSource = _structure(data, CompendiumSource, where)
    problems = source_problems(source, where)
    if problems:
        raise CompendiumError(problems)
    return source


def source_problems(source: CompendiumSource, where: str = "compendium") -> list[str]:
    """What is wrong with ``source``: its name, each entry, ids used twice."""
    problems: list[str] = []
    if not _SOURCE.match(source.name):
        problems.append(
            f"{where}.name: {source.name!r} must start with a lower-case letter and hold only "
            "lower-case letters, digits, - or _ (no dots: it prefixes every id)"
        )
    seen: set[str] = set()
    for i, entry in enumerate(source.entries):
        problems += entry_problems(entry, f"{where}.entries[{i}]")
        if entry.id in seen:
            problems.append(f"{where}.entries[{i}].id: {entry.id!r} is used twice")
        seen.add(entry.id)
    return problems


def load_compendium_file(path: Path) -> CompendiumSource:
    """Read and check one compendium file (JSON); :class:`CompendiumError` names the
    file in every problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CompendiumError([f"{path}: cannot read it: {exc.strerror}"]) from None
    except ValueError as exc:
        raise CompendiumError([f"{path}: not JSON: {exc}"]) from None
    return parse_compendium_source(data, str(path))


# -- the compendium ------------------------------------------------------------------------------


class Compendium:
    """Entries by full id, from sources added one by one. A source name added twice is
    a :class:`CompendiumError` naming where each came from."""

    def __init__(self) -> None:
        self.sources: dict[str, CompendiumSource] = {}
        self.origins: dict[str, str] = {}
        self.entries: dict[str, CompendiumEntry] = {}
        self._source_of: dict[str, str] = {}
        self._data: dict[str, dict[str, Any]] = {}

    def add(self, source: CompendiumSource, origin: str) -> None:
        """Add ``source`` (checked already), found at ``origin`` (a file, a plugin)."""
        if source.name in self.sources:
            raise CompendiumError(
                [
                    f"compendium source {source.name!r} is declared twice: by "
                    f"{self.origins[source.name]} and by {origin}"
                ]
            )
        self.sources[source.name] = source
        self.origins[source.name] = origin
        for entry in source.entries:
            full = f"{source.name}.{entry.id}"
            self.entries[full] = entry
            self._source_of[full] = source.name

    def get(self, entry_id: str) -> CompendiumEntry | None:
        return self.entries.get(entry_id)

    def entry_data(self, entry_id: str) -> dict[str, Any]:
        """The entry as plain JSON data, in the compendium file format (kept once made)."""
        data = self._data.get(entry_id)
        if data is None:
            data = self._data[entry_id] = converter.unstructure(self.entries[entry_id])
        return data

    def source_of(self, entry_id: str) -> CompendiumSource:
        return self.sources[self._source_of[entry_id]]

    def search(
        self,
        text: str = "",
        *,
        type: str | None = None,
        tag: str | None = None,
        source: str | None = None,
        cr_min: float | None = None,
        cr_max: float | None = None,
        ids: Iterable[str] | None = None,
    ) -> list[str]:
        """The full ids of the entries that match, by name then id. ``text`` is found
        case-insensitively in the name, the id, the type or a tag (every word of it);
        ``ids`` keeps only those entries."""
        words = text.lower().split()
        found = []
        only = None if ids is None else set(ids)
        for full, entry in self.entries.items():
            if only is not None and full not in only:
                continue
            if type is not None and entry.type != type:
                continue
            if tag is not None and tag.lower() not in entry.tags:
                continue
            if source is not None and self._source_of[full] != source:
                continue
            if cr_min is not None and entry.challenge < cr_min:
                continue
            if cr_max is not None and entry.challenge > cr_max:
                continue
            haystack = " ".join((entry.name.lower(), full, entry.type, *entry.tags))
            if all(word in haystack for word in words):
                found.append(full)
        return sorted(found, key=lambda f: (self.entries[f].name.lower(), f))


# -- roster creatures ------------------------------------------------------------------------------

#: What a roster reference's ``overrides`` may change, per copy or for every copy.
OVERRIDE_KEYS: Final[tuple[str, ...]] = ("name", "hp", "ac", "zone", "hidden")

#: The keys of a roster item that names a compendium entry.
REFERENCE_KEYS: Final[tuple[str, ...]] = (
    "compendium",
    "count",
    "id",
    "side",
    "zone",
    "hidden",
    "group",
    "overrides",
    "hp",
)

#: A roster reference's ``hp``: the entry's average (the default) or rolled hit dice.
HP_CHOICES: Final[tuple[str, ...]] = ("average", "roll")

#: Copies one roster reference may ask for.
MAX_COUNT = 50
#: Creatures all the references of one roster may make together: a short request must
#: not make thousands of creatures (a roster spelled out is bounded by the message size).
MAX_REFERENCED = 200


def _override_problems(data: object, where: str) -> list[str]:
    if not isinstance(data, Mapping):
        return [f"{where}: must be an object"]
    problems = []
    for key, value in data.items():
        if key not in OVERRIDE_KEYS:
            problems.append(
                f"{where}.{key}: unknown (overrides may set {', '.join(OVERRIDE_KEYS)})"
            )
        elif key == "name":
            if not isinstance(value, str) or not value.strip() or len(value) > 100:
                problems.append(f"{where}.name: must be text of 1-100 characters")
        elif key in ("hp", "ac"):
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(f"{where}.{key}: must be a whole number")
            else:
                _in_range(problems, f"{where}.{key}", key, value)
        elif key == "zone":
            if value is not None and not isinstance(value, str):
                problems.append(f"{where}.zone: must be a zone id")
        elif key == "hidden" and not isinstance(value, bool):
            problems.append(f"{where}.hidden: must be true or false")
    return problems


def entry_creatures(
    entry: CompendiumEntry,
    count: int = 1,
    *,
    side: str = "enemies",
    id_prefix: str | None = None,
    zone: str | None = None,
    hidden: bool = False,
    group: str | None = None,
    overrides: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    taken: Iterable[str] = (),
    copies: int | None = None,
) -> list[Creature]:
    """``count`` roster creatures from ``entry``, controlled by the GM.

    Ids are ``<id_prefix>-1`` ... (``entry.id`` by default), skipping those in
    ``taken``; names are the entry's, numbered when there are several copies. Two or
    more copies form one initiative group, ``group`` (by default the entry's id; the
    rules' "group of identical creatures": their stat block is the same even when an
    override changes one copy's name or hit points); ``copies`` is how many copies of the
    entry the whole roster has, when other items name it too. ``overrides`` (``name``, ``hp``,
    ``ac``, ``zone``, ``hidden``) is one object for every copy, or a list with one
    object per copy. Saves the entry does not list are its ability modifiers;
    Athletics and Acrobatics default to Strength and Dexterity.
    """
    if isinstance(overrides, Mapping):
        per_copy: list[Mapping[str, Any]] = [overrides] * count
    else:
        per_copy = list(overrides or [{}] * count)
    used = set(taken)
    prefix = id_prefix or entry.id
    if group is None and max(count, copies or 0) > 1:
        group = entry.id if entry.id not in used else f"{entry.id}-group"
    abilities = entry.abilities
    saves: dict[str, int] = {a: entry.saves.get(a, abilities.get(a, 0)) for a in ABILITIES}
    skills = {
        "athletics": abilities.get("str", 0),
        "acrobatics": abilities.get("dex", 0),
        **entry.skills,
    }
    maneuver_dc = entry.maneuver_dc or 8 + entry.proficiency + abilities.get("str", 0)
    made: list[Creature] = []
    number = 0
    for index in range(count):
        number += 1
        while f"{prefix}-{number}" in used:
            number += 1
        cid = f"{prefix}-{number}"
        used.add(cid)
        change = per_copy[index] if index < len(per_copy) else {}
        hp = int(change.get("hp", entry.hp.average))
        made.append(
            Creature(
                id=cid,
                name=str(
                    change.get("name") or (f"{entry.name} {number}" if count > 1 else entry.name)
                ),
                side=side,
                controller=GM,
                pc=False,
                size=entry.size,
                speeds={str(mode): feet for mode, feet in entry.speeds.items()},
                dex_mod=abilities.get("dex", 0),
                hp=hp,
                max_hp=hp,
                ac=int(change.get("ac", entry.ac)),
                passive_perception=entry.passive_perception,
                attacks=[attrs.evolve(a) for a in entry.attacks],
                saves=dict(saves),
                skills=dict(skills),
                maneuver_dc=maneuver_dc,
                spell_dc=entry.spell_dc if entry.spell_dc is not None else 10,
                group=group,
                hidden=bool(change.get("hidden", hidden)),
                zone=change.get("zone", zone),
                damage_resistances=list(entry.damage_resistances),
                damage_vulnerabilities=list(entry.damage_vulnerabilities),
                damage_immunities=list(entry.damage_immunities),
                condition_immunities=list(entry.condition_immunities),
                damage_resistances_nonmagical=list(entry.damage_resistances_nonmagical),
                damage_immunities_nonmagical=list(entry.damage_immunities_nonmagical),
                abilities={a: abilities.get(a, 0) for a in ABILITIES},
                proficiency=entry.proficiency,
                hit_dice=entry.hp.dice or None,
                senses=dict(entry.senses),
                type=entry.type,
                challenge=entry.challenge,
                traits=entry.traits,
                actions=entry.actions,
            )
        )
    return made


def roster_reference(
    item: Mapping[str, Any],
    compendium: Compendium,
    where: str,
    taken: Iterable[str] = (),
    copies: int | None = None,
    rolled: list[str] | None = None,
) -> list[Creature]:
    """The creatures a roster item naming a compendium entry stands for::

        {"compendium": "srd.goblin", "count": 4, "zone": "common_room", "hidden": false,
         "side": "goblins", "overrides": {"hp": 9}}

    ``count`` (default 1, at most 50), ``id`` (the prefix of the copies' ids), ``side``
    (default ``"enemies"``), ``zone``, ``hidden``, ``group`` and ``overrides`` (one
    object, or a list of one per copy) are optional. ``hp`` is ``"average"`` (the
    default: the entry's average hit points) or ``"roll"``: the ids of the copies whose
    hit points are to be rolled from the entry's hit dice (by the caller, with the
    encounter's dice) are added to ``rolled`` (a copy whose ``overrides`` set ``hp``
    keeps that number). Raises ``ValueError`` listing every problem, each at ``where``;
    an unknown entry is named.
    """
    problems = []
    for key in item:
        if key not in REFERENCE_KEYS:
            problems.append(
                f"{where}.{key}: unknown key (expected one of {', '.join(REFERENCE_KEYS)})"
            )
    ref = item.get("compendium")
    entry = compendium.get(ref) if isinstance(ref, str) else None
    if not isinstance(ref, str):
        problems.append(f"{where}.compendium: must be an entry id such as 'srd.goblin'")
    elif entry is None:
        problems.append(f"{where}.compendium: there is no compendium entry {ref!r}")
    count = item.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        problems.append(f"{where}.count: must be a whole number from 1 to {MAX_COUNT}")
        count = 1
    texts = {"id": item.get("id"), "side": item.get("side", "enemies"), "group": item.get("group")}
    for key, value in texts.items():
        if value is not None and (not isinstance(value, str) or not _ID.match(value)):
            problems.append(f"{where}.{key}: must be lower-case letters, digits, - or _")
    zone = item.get("zone")
    if zone is not None and not isinstance(zone, str):
        problems.append(f"{where}.zone: must be a zone id")
    hidden = item.get("hidden", False)
    if not isinstance(hidden, bool):
        problems.append(f"{where}.hidden: must be true or false")
    hp_choice = item.get("hp", "average")
    if hp_choice not in HP_CHOICES:
        problems.append(f'{where}.hp: must be "average" or "roll"')
    elif hp_choice == "roll" and entry is not None and not entry.hp.dice:
        problems.append(f"{where}.hp: the entry {ref!r} has no hit dice to roll")
    overrides = item.get("overrides")
    if isinstance(overrides, list):
        if len(overrides) != count:
            problems.append(f"{where}.overrides: a list needs one object per copy ({count})")
        for i, one in enumerate(overrides):
            problems += _override_problems(one, f"{where}.overrides[{i}]")
    elif overrides is not None:
        problems += _override_problems(overrides, f"{where}.overrides")
    if problems or entry is None:
        raise ValueError("; ".join(problems))
    made = entry_creatures(
        entry,
        count,
        side=str(texts["side"]),
        id_prefix=texts["id"],
        zone=zone,
        hidden=hidden,
        group=texts["group"],
        overrides=overrides,
        taken=taken,
        copies=copies,
    )
    if hp_choice == "roll" and rolled is not None:
        per_copy = overrides if isinstance(overrides, list) else [overrides or {}] * count
        rolled.extend(c.id for c, change in zip(made, per_copy, strict=True) if "hp" not in change)
    return made


def expand_roster(
    items: Sequence[object],
    compendium: Compendium,
    where: str = "creatures",
    rolled: list[str] | None = None,
) -> tuple[list[Creature], list[str]]:
    """A roster's creatures, spelled out (``creature_from_dict``) or named by
    :func:`roster_reference`, in order; and every problem, each at ``where[i]``.

    The copies of compendium entries skip the ids spelled out in the roster; all the
    copies of one entry (over every item naming it) form one group, unless an item
    names its own ``group``. The references together may make at most
    :data:`MAX_REFERENCED` creatures. The ids of the copies whose hit points are to
    be rolled (a reference's ``hp: "roll"``) are added to ``rolled``, when given.
    """
    taken = {
        item["id"]
        for item in items
        if isinstance(item, Mapping)
        and "compendium" not in item
        and isinstance(item.get("id"), str)
    }
    copies: dict[str, int] = {}
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("compendium"), str):
            count = item.get("count", 1)
            number = count if isinstance(count, int) and not isinstance(count, bool) else 1
            copies[item["compendium"]] = copies.get(item["compendium"], 0) + number
    if sum(copies.values()) > MAX_REFERENCED:
        return [], [
            f"{where}: the compendium references ask for {sum(copies.values())} creatures; "
            f"a roster's references may make at most {MAX_REFERENCED}"
        ]
    creatures: list[Creature] = []
    problems: list[str] = []
    for i, item in enumerate(items):
        try:
            if isinstance(item, Mapping) and "compendium" in item:
                ref = item["compendium"]
                made = roster_reference(
                    item,
                    compendium,
                    f"{where}[{i}]",
                    taken,
                    copies.get(ref) if isinstance(ref, str) else None,
                    rolled,
                )
                taken.update(c.id for c in made)
                creatures.extend(made)
            else:
                creatures.append(creature_from_dict(item, f"{where}[{i}]"))
        except ValueError as exc:
            problems.append(str(exc))
    return creatures, problems
