"""Player character files (docs/characters.md): what a player uploads for their seat.

:class:`CharacterSheet` is the file's content; :func:`character_problems` lists every
problem with its place, :func:`parse_character` checks and structures one, and
:func:`character_creature` makes the roster creature (a PC). The ranges and the checks
of attacks, abilities and damage types are the compendium's (:mod:`._compendium`).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ._compendium import (
    ENTRY_SPEED_MODES,
    CompendiumError,
    _abilities_problems,
    _attack_problems,
    _in_range,
    _modes_problems,
    _structure,
    damage_type_problems,
)
from ._types import Attack, Creature, Size
from ._vocabulary import ABILITIES

__all__ = [
    "CharacterSheet",
    "character_creature",
    "character_problems",
    "parse_character",
]


# -- player character files ----------------------------------------------------------------------


@attrs.frozen
class CharacterSheet:
    """A player character file (docs/characters.md): what the player fills in for their
    seat. ``abilities`` are the six ability modifiers; ``hp`` the maximum hit points;
    ``saves`` and ``skills`` only those that differ from the ability modifier;
    ``maneuver_dc`` by default 8 + ``proficiency_bonus`` + Strength modifier."""

    name: str
    size: Size
    speeds: dict[str, int]
    abilities: dict[str, int]
    ac: int
    hp: int
    passive_perception: int
    attacks: tuple[Attack, ...] = ()
    saves: dict[str, int] = attrs.field(factory=dict)
    skills: dict[str, int] = attrs.field(factory=dict)
    proficiency_bonus: int = 2
    initiative_bonus: int = 0
    spell_dc: int | None = None
    maneuver_dc: int | None = None
    damage_resistances: tuple[str, ...] = ()
    damage_vulnerabilities: tuple[str, ...] = ()
    damage_immunities: tuple[str, ...] = ()
    condition_immunities: tuple[str, ...] = ()


def _character_sheet_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    if not sheet.name.strip() or len(sheet.name) > 100:
        problems.append(f"{where}.name: must be text of 1-100 characters")
    problems += _modes_problems(sheet.speeds, f"{where}.speeds", ENTRY_SPEED_MODES)
    problems += _abilities_problems(sheet.abilities, f"{where}.abilities", "ability", all_six=True)
    problems += _abilities_problems(sheet.saves, f"{where}.saves", "save", all_six=False)
    for skill, bonus in sheet.skills.items():
        _in_range(problems, f"{where}.skills.{skill}", "skill", bonus)
    _in_range(problems, f"{where}.ac", "ac", sheet.ac)
    _in_range(problems, f"{where}.hp", "hp", sheet.hp)
    _in_range(
        problems, f"{where}.passive_perception", "passive_perception", sheet.passive_perception
    )
    _in_range(problems, f"{where}.proficiency_bonus", "proficiency_bonus", sheet.proficiency_bonus)
    _in_range(problems, f"{where}.initiative_bonus", "skill", sheet.initiative_bonus)
    for dc_field in ("maneuver_dc", "spell_dc"):
        dc = getattr(sheet, dc_field)
        if dc is not None:
            _in_range(problems, f"{where}.{dc_field}", "dc", dc)
    for i, attack in enumerate(sheet.attacks):
        problems += _attack_problems(attack, f"{where}.attacks[{i}]")
    problems += damage_type_problems(sheet, where)
    names = [a.name for a in sheet.attacks]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{where}.attacks: two attacks are named {name!r}")
    return problems


def character_problems(data: object, where: str = "character") -> list[str]:
    """Every problem of a character file's content, one sentence each with its place
    (``character.abilities: missing con``); empty when it is valid."""
    if isinstance(data, Mapping):
        data = {k: v for k, v in data.items() if k != "$schema"}
    try:
        sheet: CharacterSheet = _structure(data, CharacterSheet, where)
    except CompendiumError as exc:
        return exc.problems
    return _character_sheet_problems(sheet, where)


def parse_character(data: object, where: str = "character") -> CharacterSheet:
    """A character file's content as a :class:`CharacterSheet`; ``ValueError``
    (:class:`CompendiumError`) listing every problem when it is not valid."""
    problems = character_problems(data, where)
    if problems:
        raise CompendiumError(problems)
    assert isinstance(data, Mapping)
    sheet: CharacterSheet = _structure(
        {k: v for k, v in data.items() if k != "$schema"}, CharacterSheet, where
    )
    return sheet


def character_creature(
    sheet: CharacterSheet, creature_id: str, controller: str, side: str = "party"
) -> Creature:
    """The roster creature of a player's character: a PC controlled by ``controller``."""
    abilities = sheet.abilities
    return Creature(
        id=creature_id,
        name=sheet.name,
        side=side,
        controller=controller,
        pc=True,
        size=sheet.size,
        speeds={str(mode): feet for mode, feet in sheet.speeds.items()},
        dex_mod=abilities.get("dex", 0),
        initiative_bonus=sheet.initiative_bonus,
        hp=sheet.hp,
        max_hp=sheet.hp,
        ac=sheet.ac,
        passive_perception=sheet.passive_perception,
        attacks=[attrs.evolve(a) for a in sheet.attacks],
        saves={a: sheet.saves.get(a, abilities.get(a, 0)) for a in ABILITIES},
        skills={
            "athletics": abilities.get("str", 0),
            "acrobatics": abilities.get("dex", 0),
            **sheet.skills,
        },
        maneuver_dc=sheet.maneuver_dc or 8 + sheet.proficiency_bonus + abilities.get("str", 0),
        spell_dc=sheet.spell_dc if sheet.spell_dc is not None else 10,
        damage_resistances=list(sheet.damage_resistances),
        damage_vulnerabilities=list(sheet.damage_vulnerabilities),
        damage_immunities=list(sheet.damage_immunities),
        condition_immunities=list(sheet.condition_immunities),
    )
