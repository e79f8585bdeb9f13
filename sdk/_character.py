"""Player character files (docs/characters.md): what a player uploads for their seat.

:class:`CharacterSheet` is the file's content; :func:`character_problems` lists every
problem with its place, :func:`parse_character` checks and structures one, and
:func:`character_creature` makes the roster creature (a PC). The ranges and the checks
of attacks, abilities and damage types are the compendium's (:mod:`._compendium`).

A sheet gives either the ability modifiers (``abilities``, the first format) or the
ability scores (``ability_scores``); class levels, proficiencies, armor and weapons
let the numbers be derived rather than typed: the proficiency bonus from the total
level, saves and skills from their proficiencies, AC from the armor, attacks from the
weapons (SRD 5.1's tables, :data:`SRD_WEAPONS` and :data:`SRD_ARMOR`). A number the
sheet gives wins over the derived one, so the first format loads unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal, get_args

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
from ._features import Action, ExtraDamage, Trait, feature_data_problems, resource_key
from ._types import Attack, Creature, Size
from ._vocabulary import ABILITIES, DAMAGE_TYPES

__all__ = [
    "CHARACTER_RANGES",
    "CLASS_HIT_DICE",
    "SKILL_ABILITIES",
    "SPELL_SLOT_KEYS",
    "SRD_ARMOR",
    "SRD_WEAPONS",
    "WEAPON_PROPERTIES",
    "ArmorWorn",
    "CharacterSheet",
    "ClassLevel",
    "ClassResource",
    "PactSlots",
    "SheetValues",
    "Weapon",
    "ability_modifier",
    "character_attacks",
    "character_creature",
    "character_problems",
    "character_resources",
    "character_traits",
    "level_proficiency",
    "parse_character",
    "sheet_values",
]

#: The ranges of the character file's own numbers (the rest are the compendium's).
CHARACTER_RANGES: Final[dict[str, tuple[int, int]]] = {
    "score": (1, 30),
    "level": (1, 20),
    "hit_dice": (1, 20),
    "slots": (0, 9),
    "slot_level": (1, 9),
    "pact_count": (1, 4),
    "pact_level": (1, 5),
    "weapon_bonus": (0, 3),
    "armor_bonus": (0, 10),
    "resource_count": (1, 99),
    "spells": (0, 200),
    "params_depth": (0, 8),
}

#: The skills of SRD 5.1 and the ability each uses.
SKILL_ABILITIES: Final[dict[str, str]] = {
    "acrobatics": "dex",
    "animal handling": "wis",
    "arcana": "int",
    "athletics": "str",
    "deception": "cha",
    "history": "int",
    "insight": "wis",
    "intimidation": "cha",
    "investigation": "int",
    "medicine": "wis",
    "nature": "int",
    "perception": "wis",
    "performance": "cha",
    "persuasion": "cha",
    "religion": "int",
    "sleight of hand": "dex",
    "stealth": "dex",
    "survival": "wis",
}

#: The hit die of each SRD 5.1 class (a level of another class names its die in
#: ``hit_dice``).
CLASS_HIT_DICE: Final[dict[str, str]] = {
    "barbarian": "d12",
    "bard": "d8",
    "cleric": "d8",
    "druid": "d8",
    "fighter": "d10",
    "monk": "d8",
    "paladin": "d10",
    "ranger": "d10",
    "rogue": "d8",
    "sorcerer": "d6",
    "warlock": "d8",
    "wizard": "d6",
}

WeaponProperty = Literal[
    "ammunition",
    "finesse",
    "heavy",
    "light",
    "loading",
    "reach",
    "special",
    "thrown",
    "two-handed",
    "versatile",
]
#: The weapon properties a sheet may name.
WEAPON_PROPERTIES: Final[tuple[str, ...]] = get_args(WeaponProperty)

#: SRD 5.1's weapons (net left out: it deals no damage): kind, damage, damage type,
#: properties, and for thrown or ranged weapons the normal and long ranges, for
#: versatile ones the two-handed damage.
SRD_WEAPONS: Final[dict[str, dict[str, Any]]] = {
    name: {
        "kind": kind,
        "damage": damage,
        "damage_type": damage_type,
        "properties": tuple(props.split()) if props else (),
        **({"range": ranges[0], "long_range": ranges[1]} if ranges else {}),
        **({"versatile": versatile} if versatile else {}),
    }
    for name, kind, damage, damage_type, props, ranges, versatile in (
        ("club", "melee", "1d4", "bludgeoning", "light", None, None),
        ("dagger", "melee", "1d4", "piercing", "finesse light thrown", (20, 60), None),
        ("greatclub", "melee", "1d8", "bludgeoning", "two-handed", None, None),
        ("handaxe", "melee", "1d6", "slashing", "light thrown", (20, 60), None),
        ("javelin", "melee", "1d6", "piercing", "thrown", (30, 120), None),
        ("light hammer", "melee", "1d4", "bludgeoning", "light thrown", (20, 60), None),
        ("mace", "melee", "1d6", "bludgeoning", "", None, None),
        ("quarterstaff", "melee", "1d6", "bludgeoning", "versatile", None, "1d8"),
        ("sickle", "melee", "1d4", "slashing", "light", None, None),
        ("spear", "melee", "1d6", "piercing", "thrown versatile", (20, 60), "1d8"),
        (
            "light crossbow",
            "ranged",
            "1d8",
            "piercing",
            "ammunition loading two-handed",
            (80, 320),
            None,
        ),
        ("dart", "ranged", "1d4", "piercing", "finesse thrown", (20, 60), None),
        ("shortbow", "ranged", "1d6", "piercing", "ammunition two-handed", (80, 320), None),
        ("sling", "ranged", "1d4", "bludgeoning", "ammunition", (30, 120), None),
        ("battleaxe", "melee", "1d8", "slashing", "versatile", None, "1d10"),
        ("flail", "melee", "1d8", "bludgeoning", "", None, None),
        ("glaive", "melee", "1d10", "slashing", "heavy reach two-handed", None, None),
        ("greataxe", "melee", "1d12", "slashing", "heavy two-handed", None, None),
        ("greatsword", "melee", "2d6", "slashing", "heavy two-handed", None, None),
        ("halberd", "melee", "1d10", "slashing", "heavy reach two-handed", None, None),
        ("lance", "melee", "1d12", "piercing", "reach special", None, None),
        ("longsword", "melee", "1d8", "slashing", "versatile", None, "1d10"),
        ("maul", "melee", "2d6", "bludgeoning", "heavy two-handed", None, None),
        ("morningstar", "melee", "1d8", "piercing", "", None, None),
        ("pike", "melee", "1d10", "piercing", "heavy reach two-handed", None, None),
        ("rapier", "melee", "1d8", "piercing", "finesse", None, None),
        ("scimitar", "melee", "1d6", "slashing", "finesse light", None, None),
        ("shortsword", "melee", "1d6", "piercing", "finesse light", None, None),
        ("trident", "melee", "1d6", "piercing", "thrown versatile", (20, 60), "1d8"),
        ("war pick", "melee", "1d8", "piercing", "", None, None),
        ("warhammer", "melee", "1d8", "bludgeoning", "versatile", None, "1d10"),
        ("whip", "melee", "1d4", "slashing", "finesse reach", None, None),
        ("blowgun", "ranged", "1", "piercing", "ammunition loading", (25, 100), None),
        (
            "hand crossbow",
            "ranged",
            "1d6",
            "piercing",
            "ammunition light loading",
            (30, 120),
            None,
        ),
        (
            "heavy crossbow",
            "ranged",
            "1d10",
            "piercing",
            "ammunition heavy loading two-handed",
            (100, 400),
            None,
        ),
        ("longbow", "ranged", "1d8", "piercing", "ammunition heavy two-handed", (150, 600), None),
    )
}

#: SRD 5.1's armor: its category and base AC (light adds the Dexterity modifier,
#: medium at most +2, heavy none).
SRD_ARMOR: Final[dict[str, tuple[str, int]]] = {
    "padded": ("light", 11),
    "leather": ("light", 11),
    "studded leather": ("light", 12),
    "hide": ("medium", 12),
    "chain shirt": ("medium", 13),
    "scale mail": ("medium", 14),
    "breastplate": ("medium", 14),
    "half plate": ("medium", 15),
    "ring mail": ("heavy", 14),
    "chain mail": ("heavy", 16),
    "splint": ("heavy", 17),
    "plate": ("heavy", 18),
}

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: A feature's or spell's id: lower-case, optionally namespaced (``srd.fire-bolt``).
_FEATURE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)?$")

RestPeriod = Literal["turn", "round", "short_rest", "long_rest", "day"]

#: The keys of the roster creature's ``resources`` counting spell slots left: one per
#: spell level, and the warlock's pact slots.
SPELL_SLOT_KEYS: Final[tuple[str, ...]] = (
    *(f"spell-slots-{n}" for n in range(1, 10)),
    "pact-slots",
)


@attrs.frozen
class ClassLevel:
    """Levels in one class: ``name`` (``fighter``), ``level`` (1 to 20) and the
    ``subclass`` chosen, if any (``champion``)."""

    name: str
    level: int
    subclass: str = ""


@attrs.frozen
class ArmorWorn:
    """What the character wears: an SRD armor by ``name`` (or ``none``), a
    ``shield``, and a ``bonus`` to AC on top (magic armor, a ring of protection, the
    Defense fighting style)."""

    name: str = "none"
    shield: bool = False
    bonus: int = 0


@attrs.frozen
class Weapon:
    """A weapon: ``name`` (unique; an SRD weapon's name fills in the rest), or spelled
    out with ``kind``, ``damage``, ``damage_type``, ``properties``, ``range`` and
    ``long_range`` (thrown or ranged), ``versatile`` (the two-handed damage).
    ``bonus`` is a magic weapon's +1 to +3 (a weapon with a bonus is ``magical``);
    ``extra_damage`` what a hit deals on top (a flame tongue's 2d6 fire); ``proficient`` whether the proficiency
    bonus applies; ``ability`` forces the ability (otherwise Strength, Dexterity for a
    ranged weapon, the better one for a finesse weapon); ``base`` names the SRD weapon
    when ``name`` is the character's own (``"Flametongue"`` based on ``longsword``)."""

    name: str
    base: str | None = None
    kind: Literal["melee", "ranged"] | None = None
    damage: str | None = None
    damage_type: str | None = None
    properties: tuple[WeaponProperty, ...] | None = None
    range: int | None = None
    long_range: int | None = None
    versatile: str | None = None
    bonus: int = 0
    magical: bool = False
    extra_damage: tuple[ExtraDamage, ...] = ()
    proficient: bool = True
    ability: Literal["str", "dex", "con", "int", "wis", "cha"] | None = None


@attrs.frozen
class ClassResource:
    """A class resource used up and regained: ``count`` uses ``per`` rest (ki points,
    Channel Divinity, Second Wind). The live count is the creature's."""

    id: str
    name: str
    count: int
    per: RestPeriod = "long_rest"


@attrs.frozen
class PactSlots:
    """A warlock's Pact Magic slots: ``count`` slots, all of ``level``."""

    level: int
    count: int


@attrs.frozen
class CharacterSheet:
    """A player character file (docs/characters.md): what the player fills in for their
    seat. ``abilities`` are the six ability modifiers, or ``ability_scores`` the six
    scores (one of the two); ``hp`` the maximum hit points; ``saves`` and ``skills``
    bonuses that win over the ones derived from ``save_proficiencies``,
    ``skill_proficiencies`` and ``expertise``; ``ac`` wins over the one derived from
    ``armor``; ``proficiency_bonus`` is derived from the total level of ``classes``
    (2 without classes); ``maneuver_dc`` by default 8 + proficiency bonus + Strength
    modifier; ``spell_dc`` and ``spell_attack_bonus`` derived from
    ``spellcasting_ability``."""

    name: str
    size: Size
    speeds: dict[str, int]
    hp: int
    abilities: dict[str, int] = attrs.field(factory=dict)
    ability_scores: dict[str, int] = attrs.field(factory=dict)
    ac: int | None = None
    passive_perception: int | None = None
    classes: tuple[ClassLevel, ...] = ()
    hit_dice: dict[str, int] = attrs.field(factory=dict)
    armor: ArmorWorn | None = None
    weapons: tuple[Weapon, ...] = ()
    attacks: tuple[Attack, ...] = ()
    saves: dict[str, int] = attrs.field(factory=dict)
    save_proficiencies: tuple[str, ...] = ()
    skills: dict[str, int] = attrs.field(factory=dict)
    skill_proficiencies: tuple[str, ...] = ()
    expertise: tuple[str, ...] = ()
    proficiency_bonus: int | None = None
    initiative_bonus: int = 0
    spellcasting_ability: Literal["int", "wis", "cha"] | None = None
    spell_dc: int | None = None
    spell_attack_bonus: int | None = None
    spell_slots: dict[str, int] = attrs.field(factory=dict)
    pact_slots: PactSlots | None = None
    cantrips: tuple[str, ...] = ()
    spells_known: tuple[str, ...] = ()
    spells_prepared: tuple[str, ...] = ()
    resources: tuple[ClassResource, ...] = ()
    traits: tuple[Trait, ...] = ()
    actions: tuple[Action, ...] = ()
    maneuver_dc: int | None = None
    damage_resistances: tuple[str, ...] = ()
    damage_vulnerabilities: tuple[str, ...] = ()
    damage_immunities: tuple[str, ...] = ()
    condition_immunities: tuple[str, ...] = ()


def ability_modifier(score: int) -> int:
    """The modifier of an ability score: (score - 10) / 2, rounded down."""
    return (score - 10) // 2


def level_proficiency(level: int) -> int:
    """The proficiency bonus of a character of this total level (+2 at 1-4, +3 at 5-8,
    ... +6 at 17-20)."""
    return 2 + (max(level, 1) - 1) // 4


@attrs.frozen
class SheetValues:
    """The numbers a sheet gives or implies (:func:`sheet_values`)."""

    abilities: dict[str, int]
    level: int
    proficiency: int
    ac: int
    saves: dict[str, int]
    skills: dict[str, int]
    passive_perception: int
    spell_dc: int | None
    spell_attack_bonus: int | None
    hit_dice: dict[str, int]


def _modifiers(sheet: CharacterSheet) -> dict[str, int]:
    if sheet.ability_scores:
        return {a: ability_modifier(s) for a, s in sheet.ability_scores.items()}
    return dict(sheet.abilities)


def _armor_ac(sheet: CharacterSheet, dex: int) -> int:
    worn = sheet.armor or ArmorWorn()
    category, base = SRD_ARMOR.get(worn.name, ("none", 10))
    if category == "heavy":
        ac = base
    elif category == "medium":
        ac = base + min(dex, 2)
    else:
        ac = base + dex
    return ac + (2 if worn.shield else 0) + worn.bonus


def _hit_dice(sheet: CharacterSheet) -> dict[str, int]:
    if sheet.hit_dice:
        return dict(sheet.hit_dice)
    dice: dict[str, int] = {}
    for cls in sheet.classes:
        die = CLASS_HIT_DICE.get(cls.name)
        if die:
            dice[die] = dice.get(die, 0) + cls.level
    return dice


def sheet_values(sheet: CharacterSheet) -> SheetValues:
    """The numbers the roster creature gets: what the sheet gives, else what it implies.
    Call on a sheet :func:`character_problems` accepts."""
    mods = _modifiers(sheet)
    level = sum(c.level for c in sheet.classes)
    prof = sheet.proficiency_bonus or (level_proficiency(level) if level else 2)
    saves: dict[str, int] = {
        a: sheet.saves.get(a, mods.get(a, 0) + (prof if a in sheet.save_proficiencies else 0))
        for a in ABILITIES
    }
    skills = {
        "athletics": mods.get("str", 0),
        "acrobatics": mods.get("dex", 0),
    }
    for skill in sheet.skill_proficiencies:
        factor = 2 if skill in sheet.expertise else 1
        skills[skill] = mods.get(SKILL_ABILITIES[skill], 0) + factor * prof
    skills.update(sheet.skills)
    perception = skills.get("perception", mods.get("wis", 0))
    ability = sheet.spellcasting_ability
    spell_dc = sheet.spell_dc
    attack = sheet.spell_attack_bonus
    if ability is not None:
        spell_dc = spell_dc if spell_dc is not None else 8 + prof + mods.get(ability, 0)
        attack = attack if attack is not None else prof + mods.get(ability, 0)
    return SheetValues(
        abilities=mods,
        level=level,
        proficiency=prof,
        ac=sheet.ac if sheet.ac is not None else _armor_ac(sheet, mods.get("dex", 0)),
        saves=saves,
        skills=skills,
        passive_perception=(
            sheet.passive_perception if sheet.passive_perception is not None else 10 + perception
        ),
        spell_dc=spell_dc,
        spell_attack_bonus=attack,
        hit_dice=_hit_dice(sheet),
    )


def _weapon_fields(weapon: Weapon) -> dict[str, Any]:
    """A weapon's fields: the SRD table's (by ``base`` or ``name``), then its own."""
    key = (weapon.base or weapon.name).strip().lower()
    fields: dict[str, Any] = dict(SRD_WEAPONS.get(key, {}))
    for name in ("kind", "damage", "damage_type", "properties", "range", "long_range"):
        value = getattr(weapon, name)
        if value is not None:
            fields[name] = value
    if weapon.versatile is not None:
        fields["versatile"] = weapon.versatile
    return fields


def _with_modifier(dice: str, modifier: int) -> str:
    if modifier == 0:
        return dice
    return f"{dice}{modifier:+d}"


def character_attacks(sheet: CharacterSheet, values: SheetValues | None = None) -> list[Attack]:
    """The attacks the sheet's weapons give, then its own ``attacks``: a melee weapon's
    attack (reach 10 feet with ``reach``), its thrown attack (``"dagger (thrown)"``) and
    its two-handed one (``"longsword (two-handed)"``); a ranged weapon's attack. The
    bonus to hit is the ability modifier + the proficiency bonus (if proficient) + the
    weapon's bonus; the damage adds the modifier and the bonus."""
    values = values or sheet_values(sheet)
    mods = values.abilities
    attacks: list[Attack] = []
    for weapon in sheet.weapons:
        fields = _weapon_fields(weapon)
        properties = set(fields.get("properties", ()))
        kind = fields.get("kind", "melee")
        if weapon.ability is not None:
            ability = weapon.ability
        elif "finesse" in properties:
            ability = "dex" if mods.get("dex", 0) > mods.get("str", 0) else "str"
        else:
            ability = "dex" if kind == "ranged" else "str"
        mod = mods.get(ability, 0)
        to_hit = mod + (values.proficiency if weapon.proficient else 0) + weapon.bonus
        extra = mod + weapon.bonus
        damage_type = str(fields.get("damage_type", ""))
        damage = str(fields.get("damage", ""))
        template = Attack(
            name=weapon.name,
            bonus=to_hit,
            damage_type=damage_type,
            magical=weapon.magical or weapon.bonus > 0,
            properties=tuple(p for p in WEAPON_PROPERTIES if p in properties),
            extra_damage=weapon.extra_damage,
            reach=10 if "reach" in properties else 5,
            range=int(fields.get("range") or 0),
            long_range=int(fields.get("long_range") or 0),
        )

        def make(
            name: str, dice: str, melee: bool, base: Attack = template, plus: int = extra
        ) -> Attack:
            return attrs.evolve(
                base,
                name=name,
                kind="melee" if melee else "ranged",
                damage=dice if dice.isdigit() else _with_modifier(dice, plus),
                reach=base.reach if melee else 5,
                range=0 if melee else base.range,
                long_range=0 if melee else base.long_range,
            )

        if kind == "melee":
            attacks.append(make(weapon.name, damage, True))
            if "versatile" in properties and fields.get("versatile"):
                attacks.append(make(f"{weapon.name} (two-handed)", fields["versatile"], True))
            if "thrown" in properties:
                attacks.append(make(f"{weapon.name} (thrown)", damage, False))
        else:
            attacks.append(make(weapon.name, damage, False))
    attacks.extend(attrs.evolve(a) for a in sheet.attacks)
    return attacks


# -- the checks ------------------------------------------------------------------------------------


def _within(problems: list[str], where: str, key: str, value: int) -> None:
    low, high = CHARACTER_RANGES[key]
    if not low <= value <= high:
        problems.append(f"{where}: {value} is outside {low} to {high}")


def _depth(value: object, limit: int) -> bool:
    """Whether ``value`` nests objects and lists at most ``limit`` deep."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            if depth >= limit:
                return False
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children)
    return True


def _params_depth_problems(sheet: CharacterSheet, where: str) -> list[str]:
    """A feature's ``params`` nested deeper than a file needs: refused before any plugin
    walks them."""
    problems: list[str] = []
    limit = CHARACTER_RANGES["params_depth"][1]
    for field in ("traits", "actions"):
        features: tuple[Trait | Action, ...] = getattr(sheet, field)
        for i, feature in enumerate(features):
            if not _depth(feature.params, limit):
                problems.append(
                    f"{where}.{field}[{i}].params: nested too deep (at most {limit} levels)"
                )
    return problems


def _weapon_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    for i, weapon in enumerate(sheet.weapons):
        at = f"{where}.weapons[{i}]"
        if not weapon.name.strip() or len(weapon.name) > 100:
            problems.append(f"{at}.name: must be text of 1-100 characters")
            continue
        if weapon.base is not None and weapon.base not in SRD_WEAPONS:
            problems.append(f"{at}.base: {weapon.base!r} is not an SRD weapon")
            continue
        fields = _weapon_fields(weapon)
        if "damage" not in fields or "damage_type" not in fields:
            problems.append(
                f"{at}: {weapon.name!r} is not an SRD weapon: give its damage and damage_type "
                "(or its base)"
            )
            continue
        if fields["damage_type"] not in DAMAGE_TYPES:
            problems.append(f"{at}.damage_type: {fields['damage_type']!r} is not a damage type")
        _within(problems, f"{at}.bonus", "weapon_bonus", weapon.bonus)
        properties = set(fields.get("properties", ()))
        ranged = fields.get("kind", "melee") == "ranged"
        if (ranged or "thrown" in properties) and not fields.get("range"):
            problems.append(f"{at}.range: a ranged or thrown weapon needs its range")
        if "versatile" in properties and not fields.get("versatile"):
            problems.append(f"{at}.versatile: a versatile weapon needs its two-handed damage")
    values = sheet_values(sheet)
    derived = character_attacks(sheet, values)[
        : len(character_attacks(sheet, values)) - len(sheet.attacks)
    ]
    if not problems:
        for attack in derived:
            problems += _attack_problems(attack, f"{where}.weapons ({attack.name})")
    return problems


def _character_sheet_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    if not sheet.name.strip() or len(sheet.name) > 100:
        problems.append(f"{where}.name: must be text of 1-100 characters")
    problems += _modes_problems(sheet.speeds, f"{where}.speeds", ENTRY_SPEED_MODES)
    if not sheet.abilities and not sheet.ability_scores:
        problems.append(f"{where}: needs ability_scores (or abilities, the six modifiers)")
    if sheet.abilities:
        problems += _abilities_problems(
            sheet.abilities, f"{where}.abilities", "ability", all_six=True
        )
    for ability, score in sheet.ability_scores.items():
        if ability not in ABILITIES:
            problems.append(
                f"{where}.ability_scores.{ability}: not an ability ({', '.join(ABILITIES)})"
            )
        _within(problems, f"{where}.ability_scores.{ability}", "score", score)
    missing = [a for a in ABILITIES if a not in sheet.ability_scores]
    if sheet.ability_scores and missing:
        problems.append(
            f"{where}.ability_scores: missing {', '.join(missing)} (all six are needed)"
        )
    if sheet.abilities and sheet.ability_scores:
        for ability in ABILITIES:
            given = sheet.ability_scores.get(ability)
            if given is not None and sheet.abilities.get(ability) != ability_modifier(given):
                problems.append(
                    f"{where}.abilities.{ability}: {sheet.abilities.get(ability)} is not the "
                    f"modifier of the score {given} ({ability_modifier(given):+d})"
                )
    problems += _abilities_problems(sheet.saves, f"{where}.saves", "save", all_six=False)
    for skill, bonus in sheet.skills.items():
        _in_range(problems, f"{where}.skills.{skill}", "skill", bonus)
    if sheet.ac is not None:
        _in_range(problems, f"{where}.ac", "ac", sheet.ac)
    _in_range(problems, f"{where}.hp", "hp", sheet.hp)
    if sheet.passive_perception is not None:
        _in_range(
            problems,
            f"{where}.passive_perception",
            "passive_perception",
            sheet.passive_perception,
        )
    _in_range(problems, f"{where}.initiative_bonus", "skill", sheet.initiative_bonus)
    for dc_field in ("maneuver_dc", "spell_dc"):
        dc = getattr(sheet, dc_field)
        if dc is not None:
            _in_range(problems, f"{where}.{dc_field}", "dc", dc)
    if sheet.spell_attack_bonus is not None:
        _in_range(problems, f"{where}.spell_attack_bonus", "attack_bonus", sheet.spell_attack_bonus)
    problems += _class_problems(sheet, where)
    problems += _proficiency_problems(sheet, where)
    problems += _armor_problems(sheet, where)
    problems += _spell_problems(sheet, where)
    problems += _resource_problems(sheet, where)
    problems += feature_data_problems(sheet, where)
    problems += _params_depth_problems(sheet, where)
    for i, attack in enumerate(sheet.attacks):
        problems += _attack_problems(attack, f"{where}.attacks[{i}]")
    problems += damage_type_problems(sheet, where)
    if problems:
        return problems
    # The derived numbers, once every field is sound.
    problems += _weapon_problems(sheet, where)
    if problems:
        return problems
    values = sheet_values(sheet)
    for key, value in (("ac", values.ac), ("passive_perception", values.passive_perception)):
        _in_range(problems, f"{where}.{key} (derived)", key, value)
    for ability, bonus in values.saves.items():
        _in_range(problems, f"{where}.saves.{ability} (derived)", "save", bonus)
    for skill, bonus in values.skills.items():
        _in_range(problems, f"{where}.skills.{skill} (derived)", "skill", bonus)
    names = [a.name for a in character_attacks(sheet, values)]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{where}.attacks: two attacks are named {name!r}")
    return problems


def _class_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    names = [c.name for c in sheet.classes]
    for i, cls in enumerate(sheet.classes):
        at = f"{where}.classes[{i}]"
        if not _ID.match(cls.name) or len(cls.name) > 40:
            problems.append(f"{at}.name: {cls.name!r} must be a lower-case class id (fighter)")
        elif names.count(cls.name) > 1 and names.index(cls.name) == i:
            problems.append(f"{at}.name: {cls.name!r} is listed twice (add its levels)")
        if cls.subclass and (not _ID.match(cls.subclass) or len(cls.subclass) > 40):
            problems.append(f"{at}.subclass: {cls.subclass!r} must be a lower-case id (champion)")
        _within(problems, f"{at}.level", "level", cls.level)
    level = sum(c.level for c in sheet.classes)
    if level > CHARACTER_RANGES["level"][1]:
        problems.append(f"{where}.classes: the levels add up to {level}, more than 20")
    for die, count in sheet.hit_dice.items():
        if die not in ("d6", "d8", "d10", "d12"):
            problems.append(f"{where}.hit_dice.{die}: not a hit die (d6, d8, d10, d12)")
        _within(problems, f"{where}.hit_dice.{die}", "hit_dice", count)
    if sheet.hit_dice and level and sum(sheet.hit_dice.values()) != level:
        problems.append(
            f"{where}.hit_dice: {sum(sheet.hit_dice.values())} dice for {level} levels "
            "(one die per level)"
        )
    unknown = [c.name for c in sheet.classes if c.name not in CLASS_HIT_DICE]
    if unknown and not sheet.hit_dice and _ID.match(unknown[0]):
        problems.append(
            f"{where}.hit_dice: needed for {', '.join(unknown)} (not an SRD class: name its die)"
        )
    if sheet.proficiency_bonus is not None:
        _in_range(
            problems, f"{where}.proficiency_bonus", "proficiency_bonus", sheet.proficiency_bonus
        )
        if level and 1 <= level <= 20 and sheet.proficiency_bonus != level_proficiency(level):
            problems.append(
                f"{where}.proficiency_bonus: {sheet.proficiency_bonus} is not the bonus of a "
                f"level-{level} character (+{level_proficiency(level)}); leave it out"
            )
    return problems


def _proficiency_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    for ability in sheet.save_proficiencies:
        if ability not in ABILITIES:
            problems.append(
                f"{where}.save_proficiencies: {ability!r} is not an ability "
                f"({', '.join(ABILITIES)})"
            )
    for field in ("skill_proficiencies", "expertise"):
        listed: tuple[str, ...] = getattr(sheet, field)
        for skill in listed:
            if skill not in SKILL_ABILITIES:
                problems.append(
                    f"{where}.{field}: {skill!r} is not a skill ({', '.join(SKILL_ABILITIES)})"
                )
    for skill in sheet.expertise:
        if skill in SKILL_ABILITIES and skill not in sheet.skill_proficiencies:
            problems.append(
                f"{where}.expertise: {skill!r} needs proficiency in it (skill_proficiencies)"
            )
    return problems


def _armor_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    if sheet.armor is None:
        return problems
    if sheet.armor.name != "none" and sheet.armor.name not in SRD_ARMOR:
        problems.append(
            f"{where}.armor.name: {sheet.armor.name!r} is not an SRD armor "
            f"(none, {', '.join(SRD_ARMOR)}); give ac instead"
        )
    _within(problems, f"{where}.armor.bonus", "armor_bonus", sheet.armor.bonus)
    return problems


def _spell_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    for level, count in sheet.spell_slots.items():
        if level not in {str(n) for n in range(1, 10)}:
            problems.append(f"{where}.spell_slots.{level}: a spell level is 1 to 9")
        _within(problems, f"{where}.spell_slots.{level}", "slots", count)
    if sheet.pact_slots is not None:
        _within(problems, f"{where}.pact_slots.level", "pact_level", sheet.pact_slots.level)
        _within(problems, f"{where}.pact_slots.count", "pact_count", sheet.pact_slots.count)
    for field in ("cantrips", "spells_known", "spells_prepared"):
        ids: tuple[str, ...] = getattr(sheet, field)
        _within(problems, f"{where}.{field} (count)", "spells", len(ids))
        for spell in ids:
            if not _FEATURE_ID.match(spell) or len(spell) > 100:
                problems.append(f"{where}.{field}: {spell[:100]!r} is not a spell id (fire-bolt)")
        for spell in sorted({s for s in ids if ids.count(s) > 1}):
            problems.append(f"{where}.{field}: {spell!r} is listed twice")
    if sheet.spells_known:
        for spell in sheet.spells_prepared:
            if spell not in sheet.spells_known:
                problems.append(f"{where}.spells_prepared: {spell!r} is not among spells_known")
    casting = (
        sheet.spell_slots
        or sheet.pact_slots
        or sheet.cantrips
        or sheet.spells_known
        or sheet.spells_prepared
    )
    if casting and sheet.spellcasting_ability is None and sheet.spell_dc is None:
        problems.append(
            f"{where}.spellcasting_ability: a caster needs it (int, wis or cha) or spell_dc"
        )
    return problems


def _resource_problems(sheet: CharacterSheet, where: str) -> list[str]:
    problems: list[str] = []
    ids = [r.id for r in sheet.resources]
    for i, resource in enumerate(sheet.resources):
        at = f"{where}.resources[{i}]"
        if not _FEATURE_ID.match(resource.id) or len(resource.id) > 100:
            problems.append(f"{at}.id: must be lower-case letters, digits, - or _")
        elif ids.count(resource.id) > 1 and ids.index(resource.id) == i:
            problems.append(f"{at}.id: {resource.id!r} is listed twice")
        if not resource.name.strip() or len(resource.name) > 100:
            problems.append(f"{at}.name: must be text of 1-100 characters")
        _within(problems, f"{at}.count", "resource_count", resource.count)
    features: tuple[Trait | Action, ...] = (*sheet.traits, *sheet.actions)
    counted = {resource_key(f) for f in features if f.uses is not None}
    for i, resource in enumerate(sheet.resources):
        if resource.id in counted or resource.id in SPELL_SLOT_KEYS:
            problems.append(
                f"{where}.resources[{i}].id: {resource.id!r} already counts a feature's uses "
                "or spell slots; give the resource another id"
            )
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


def character_traits(sheet: CharacterSheet, values: SheetValues | None = None) -> list[Trait]:
    """The traits the roster creature carries for what a sheet gives beyond numbers:
    ``class-levels`` (its classes, levels and subclasses, and its class resources'
    full counts and rests: ``resources``, when it has any) and ``spellcasting`` (its
    ability, DC, attack bonus, slots and spells by id), each with its data in
    ``params`` for the plugins that implement them, then the sheet's own traits. Until
    a plugin implements them, the GM sees them as "GM adjudicates"."""
    values = values or sheet_values(sheet)
    made: list[Trait] = []
    if sheet.classes:
        label = ", ".join(
            f"{c.name} {c.level}" + (f" ({c.subclass})" if c.subclass else "")
            for c in sheet.classes
        )
        made.append(
            Trait(
                id="class-levels",
                name=f"Class levels: {label}"[:100],
                text=f"Level {values.level}: {label}; hit dice "
                + ", ".join(f"{n}{die}" for die, n in values.hit_dice.items()),
                params={
                    "classes": [attrs.asdict(c) for c in sheet.classes],
                    "level": values.level,
                    "hit_dice": dict(values.hit_dice),
                    **(
                        {"resources": [attrs.asdict(r) for r in sheet.resources]}
                        if sheet.resources
                        else {}
                    ),
                },
            )
        )
    casting = sheet.spellcasting_ability or sheet.cantrips or sheet.spells_known
    if casting or sheet.spells_prepared or sheet.spell_slots or sheet.pact_slots:
        slots = {level: n for level, n in sorted(sheet.spell_slots.items()) if n}
        parts = [f"spell save DC {values.spell_dc}"]
        if values.spell_attack_bonus is not None:
            parts.append(f"{values.spell_attack_bonus:+d} to hit with spell attacks")
        if slots:
            parts.append("slots " + ", ".join(f"level {k}: {n}" for k, n in slots.items()))
        prepared = sheet.spells_prepared or sheet.spells_known
        if sheet.cantrips:
            parts.append("cantrips " + ", ".join(sheet.cantrips))
        if prepared:
            parts.append("spells " + ", ".join(prepared))
        params: dict[str, Any] = {
            "ability": sheet.spellcasting_ability,
            "dc": values.spell_dc,
            "attack_bonus": values.spell_attack_bonus,
            "slots": slots,
            "cantrips": list(sheet.cantrips),
            "known": list(sheet.spells_known),
            "prepared": list(sheet.spells_prepared),
        }
        if sheet.pact_slots is not None:
            params["pact_slots"] = attrs.asdict(sheet.pact_slots)
        made.append(
            Trait(
                id="spellcasting",
                name="Spellcasting",
                text=("; ".join(parts) + ".")[:4000],
                params={k: v for k, v in params.items() if v is not None},
            )
        )
    return [*made, *sheet.traits]


def character_resources(sheet: CharacterSheet) -> dict[str, int]:
    """The live counts the roster creature starts with beyond its features' uses: each
    class resource at its full count (by id), the spell slots by level
    (``spell-slots-1`` ...) and the pact slots (``pact-slots``)."""
    counts = {r.id: r.count for r in sheet.resources}
    for level, n in sorted(sheet.spell_slots.items()):
        if n:
            counts[f"spell-slots-{level}"] = n
    if sheet.pact_slots is not None:
        counts["pact-slots"] = sheet.pact_slots.count
    return counts


def character_creature(
    sheet: CharacterSheet, creature_id: str, controller: str, side: str = "party"
) -> Creature:
    """The roster creature of a player's character: a PC controlled by ``controller``,
    with the numbers the sheet gives or implies (:func:`sheet_values`), the attacks of
    its weapons and its own (:func:`character_attacks`), its ability modifiers and
    proficiency bonus, its traits (:func:`character_traits`) and actions, and its
    resources: the features' uses, its class resources and spell slots
    (:func:`character_resources`)."""
    values = sheet_values(sheet)
    abilities = values.abilities
    creature = Creature(
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
        ac=values.ac,
        passive_perception=values.passive_perception,
        attacks=character_attacks(sheet, values),
        saves=values.saves,
        skills=values.skills,
        maneuver_dc=sheet.maneuver_dc or 8 + values.proficiency + abilities.get("str", 0),
        spell_dc=values.spell_dc if values.spell_dc is not None else 10,
        damage_resistances=list(sheet.damage_resistances),
        damage_vulnerabilities=list(sheet.damage_vulnerabilities),
        damage_immunities=list(sheet.damage_immunities),
        condition_immunities=list(sheet.condition_immunities),
        abilities={a: abilities.get(a, 0) for a in ABILITIES},
        proficiency=values.proficiency,
        traits=tuple(character_traits(sheet, values)),
        actions=sheet.actions,
    )
    for key, count in character_resources(sheet).items():
        creature.resources.setdefault(key, count)
    return creature
