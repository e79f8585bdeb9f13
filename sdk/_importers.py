"""Character sheets players already keep, turned into zonekeep character files.

:func:`import_character` reads a Foundry VTT dnd5e actor export (the JSON its "Export
Data" writes) or an Improved Initiative statblock (the open JSON format of that combat
tracker, which many tools export to) and returns the character file's content, with
every part of the sheet that has no place in it listed by name (``unmapped``): nothing
is dropped silently. The result is then checked like any character file
(:func:`zonekeep.sdk.host.character_problems`).

Every value is read with its type checked: a wrong type is listed as unmapped, never
raised; a list longer than :data:`MAX_IMPORTED_ITEMS` is cut with a note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

from ._character import SKILL_ABILITIES, SRD_ARMOR, SRD_WEAPONS
from ._vocabulary import ABILITIES, DAMAGE_TYPES

__all__ = ["CHARACTER_FORMATS", "MAX_IMPORTED_ITEMS", "CharacterImport", "import_character"]

#: The formats a character may come in: zonekeep's own, a Foundry VTT dnd5e actor
#: export, an Improved Initiative statblock.
CHARACTER_FORMATS: Final[tuple[str, ...]] = ("zonekeep", "foundry", "improved-initiative")

#: The most items, features or spells read from one sheet.
MAX_IMPORTED_ITEMS: Final[int] = 300


@attrs.frozen
class CharacterImport:
    """A sheet turned into a character file's content (``character``), and what of it
    has no place there (``unmapped``: one short line per part, by name)."""

    character: dict[str, Any]
    unmapped: tuple[str, ...] = ()


def import_character(data: object, format: str) -> CharacterImport:
    """``data`` (parsed JSON) in ``format`` (one of :data:`CHARACTER_FORMATS`) as a
    character file's content and the list of what did not map. ``ValueError`` for an
    unknown format or data that is not an object."""
    if format not in CHARACTER_FORMATS:
        raise ValueError(f"unknown character format {format!r} ({', '.join(CHARACTER_FORMATS)})")
    if not isinstance(data, Mapping):
        raise ValueError("a character sheet must be a JSON object")
    if format == "zonekeep":
        return CharacterImport(dict(data))
    if format == "foundry":
        return _Foundry(data).run()
    return _ImprovedInitiative(data).run()


def slug(text: str) -> str:
    """A lower-case id made of a name (``"Fire Bolt"`` -> ``fire-bolt``)."""
    made = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return made[:100] or "unnamed"


def _text(value: object, limit: int = 100) -> str:
    return value.strip()[:limit] if isinstance(value, str) else ""


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,4}", value.strip()):
        return int(value)
    return None


def _get(data: object, *path: str) -> object:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _plain(html: object, limit: int = 4000) -> str:
    """Text of an HTML description, tags removed, whitespace folded."""
    if not isinstance(html, str):
        return ""
    text = re.sub(r"<[^>]{0,500}>", " ", html[: limit * 4])
    return re.sub(r"\s+", " ", text).strip()[:limit]


class _Reader:
    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.out: dict[str, Any] = {}
        self.unmapped: list[str] = []

    def skip(self, what: str) -> None:
        if what not in self.unmapped:
            self.unmapped.append(what)

    def items(self, value: object, where: str) -> list[Any]:
        if not isinstance(value, list):
            if value is not None:
                self.skip(f"{where} (not a list)")
            return []
        if len(value) > MAX_IMPORTED_ITEMS:
            self.skip(
                f"{where}: {len(value) - MAX_IMPORTED_ITEMS} past the first {MAX_IMPORTED_ITEMS}"
            )
        return value[:MAX_IMPORTED_ITEMS]

    def feature(self, name: str, text: str, kind: str | None = None) -> dict[str, Any]:
        base = slug(name)
        taken = {f["id"] for f in self.out.get("traits", []) + self.out.get("actions", [])}
        fid, n = base, 1
        while fid in taken:
            n += 1
            fid = f"{base}-{n}"[:100]
        feature: dict[str, Any] = {"id": fid, "name": name[:100] or fid}
        if kind is not None:
            feature["kind"] = kind
        feature["text"] = text[:4000]
        # A sheet's feature is text without the params a plugin implementing an id of the
        # same name would need: the GM applies it (never refused for missing params).
        feature["gm"] = "imported from a character sheet: the GM applies its text"
        return feature

    def result(self) -> CharacterImport:
        return CharacterImport(self.out, tuple(self.unmapped))


# -- Foundry VTT dnd5e ----------------------------------------------------------------------------

_FOUNDRY_SIZES = {
    "tiny": "Tiny",
    "sm": "Small",
    "med": "Medium",
    "lg": "Large",
    "huge": "Huge",
    "grg": "Gargantuan",
}
_FOUNDRY_SKILLS = {
    "acr": "acrobatics",
    "ani": "animal handling",
    "arc": "arcana",
    "ath": "athletics",
    "dec": "deception",
    "his": "history",
    "ins": "insight",
    "itm": "intimidation",
    "inv": "investigation",
    "med": "medicine",
    "nat": "nature",
    "prc": "perception",
    "prf": "performance",
    "per": "persuasion",
    "rel": "religion",
    "slt": "sleight of hand",
    "ste": "stealth",
    "sur": "survival",
}
_FOUNDRY_PROPERTIES = {
    "amm": "ammunition",
    "fin": "finesse",
    "hvy": "heavy",
    "lgt": "light",
    "lod": "loading",
    "rch": "reach",
    "spc": "special",
    "thr": "thrown",
    "two": "two-handed",
    "ver": "versatile",
}
_FOUNDRY_ACTIVATION = {"action": "action", "bonus": "bonus_action", "reaction": "reaction"}
_FOUNDRY_PER = {"sr": "short_rest", "lr": "long_rest", "day": "day"}
#: A warlock's Pact Magic slot level by warlock level (SRD 5.1).
_PACT_LEVEL = (1, 1, 2, 2, 3, 3, 4, 4, 5)


class _Foundry(_Reader):
    def run(self) -> CharacterImport:
        data = self.data
        # dnd5e 2.x and later export "system"; older versions "data".
        system = data.get("system") if isinstance(data.get("system"), Mapping) else None
        if system is None and isinstance(data.get("data"), Mapping):
            system = data["data"]
        if system is None:
            raise ValueError("not a Foundry VTT actor export: no 'system' object")
        if data.get("type") not in (None, "character"):
            self.skip(f"type {str(data.get('type'))[:40]!r} (read as a character)")
        self.out["name"] = _text(data.get("name")) or "Unnamed"
        self.abilities(system)
        self.attributes(system)
        self.traits(system)
        self.skills(system)
        self.resources(system)
        for i, item in enumerate(self.items(data.get("items"), "items")):
            self.item(item, i)
        self.slots(system)
        self.spells_check()
        for effect in self.items(data.get("effects"), "effects"):
            self.skip(f"active effect {_text(_get(effect, 'name') or _get(effect, 'label'))!r}")
        languages = _get(system, "traits", "languages", "value")
        if isinstance(languages, list) and languages:
            self.skip("system.traits.languages")
        for section in ("currency", "bonuses"):
            if system.get(section):
                self.skip(f"system.{section}")
        return self.result()

    def abilities(self, system: Mapping[str, Any]) -> None:
        scores: dict[str, int] = {}
        saves: list[str] = []
        for ability in ABILITIES:
            value = _int(_get(system, "abilities", ability, "value"))
            if value is not None:
                scores[ability] = value
            else:
                self.skip(f"system.abilities.{ability}.value (missing or not a number)")
            if _get(system, "abilities", ability, "proficient") in (1, True):
                saves.append(ability)
            bonus = _get(system, "abilities", ability, "bonuses")
            if isinstance(bonus, Mapping) and any(bonus.values()):
                self.skip(f"system.abilities.{ability}.bonuses")
        self.out["ability_scores"] = scores
        if saves:
            self.out["save_proficiencies"] = saves

    def attributes(self, system: Mapping[str, Any]) -> None:
        attributes = _get(system, "attributes")
        hp = _int(_get(attributes, "hp", "max"))
        if hp is None:
            hp = _int(_get(attributes, "hp", "value"))
            if hp is not None:
                self.skip("system.attributes.hp.max (empty: the current hit points were used)")
        if hp is not None:
            self.out["hp"] = hp
        else:
            self.skip("system.attributes.hp (no maximum hit points)")
        ac = _get(attributes, "ac")
        calc = _get(ac, "calc")
        flat = _int(_get(ac, "flat"))
        if calc in ("flat", "natural") and flat is not None:
            self.out["ac"] = flat
        elif calc not in (None, "default", "flat", "natural"):
            self.skip(f"system.attributes.ac.calc {str(calc)[:40]!r} (give ac by hand)")
        speeds: dict[str, int] = {}
        for mode in ("walk", "climb", "swim", "fly", "burrow"):
            feet = _int(_get(attributes, "movement", mode))
            if feet:
                speeds[mode] = feet
        speeds.setdefault("walk", 0 if speeds else 30)
        self.out["speeds"] = speeds
        if _get(attributes, "movement", "hover"):
            self.skip("system.attributes.movement.hover")
        init = _int(_get(attributes, "init", "bonus"))
        if init:
            self.out["initiative_bonus"] = init
        elif _get(attributes, "init", "bonus") not in (None, "", 0):
            self.skip("system.attributes.init.bonus (a formula)")
        casting = _get(attributes, "spellcasting")
        if casting in ("int", "wis", "cha"):
            self.out["spellcasting_ability"] = casting
        senses = _get(attributes, "senses")
        if isinstance(senses, Mapping):
            for sense, value in senses.items():
                if sense not in ("units", "special") and _int(value):
                    self.skip(f"sense {sense} {value} ft.")
            if _text(senses.get("special")):
                self.skip(f"senses: {_text(senses.get('special'))}")

    def traits(self, system: Mapping[str, Any]) -> None:
        size = _FOUNDRY_SIZES.get(str(_get(system, "traits", "size")))
        self.out["size"] = size or "Medium"
        if size is None:
            self.skip("system.traits.size (read as Medium)")
        for key, field in (
            ("dr", "damage_resistances"),
            ("dv", "damage_vulnerabilities"),
            ("di", "damage_immunities"),
        ):
            values = [v for v in self.items(_get(system, "traits", key, "value"), key) if v]
            kinds = [v for v in values if v in DAMAGE_TYPES]
            for other in values:
                if other not in DAMAGE_TYPES:
                    self.skip(f"system.traits.{key}: {str(other)[:40]}")
            if kinds:
                self.out[field] = kinds
            if _text(_get(system, "traits", key, "custom")):
                self.skip(
                    f"system.traits.{key}.custom: {_text(_get(system, 'traits', key, 'custom'))}"
                )
        conditions = [
            str(c)[:40] for c in self.items(_get(system, "traits", "ci", "value"), "ci") if c
        ]
        if conditions:
            self.out["condition_immunities"] = conditions

    def skills(self, system: Mapping[str, Any]) -> None:
        skills = _get(system, "skills")
        if not isinstance(skills, Mapping):
            return
        proficient, expert = [], []
        for code, name in _FOUNDRY_SKILLS.items():
            value = _get(skills, code, "value")
            if value == 1:
                proficient.append(name)
            elif value == 2:
                proficient.append(name)
                expert.append(name)
            elif value not in (None, 0):
                self.skip(f"skill {name}: proficiency {str(value)[:10]} (only 0, 1 and 2 map)")
        if proficient:
            self.out["skill_proficiencies"] = proficient
        if expert:
            self.out["expertise"] = expert

    def resources(self, system: Mapping[str, Any]) -> None:
        resources = _get(system, "resources")
        if not isinstance(resources, Mapping):
            return
        found = []
        for key in ("primary", "secondary", "tertiary"):
            label = _text(_get(resources, key, "label"))
            count = _int(_get(resources, key, "max"))
            if not label:
                continue
            if not count or count < 1:
                self.skip(f"resource {label!r} (no maximum)")
                continue
            per = "short_rest" if _get(resources, key, "sr") else "long_rest"
            found.append({"id": slug(label), "name": label, "count": count, "per": per})
        if found:
            self.out["resources"] = found

    def item(self, item: object, index: int) -> None:
        if not isinstance(item, Mapping):
            self.skip(f"items[{index}] (not an object)")
            return
        kind = item.get("type")
        name = _text(item.get("name")) or f"items[{index}]"
        system = item.get("system") if isinstance(item.get("system"), Mapping) else item.get("data")
        if not isinstance(system, Mapping):
            system = {}
        if kind == "class":
            self.klass(name, system)
        elif kind == "subclass":
            self.out.setdefault("_subclasses", {})[_text(system.get("classIdentifier"))] = _text(
                system.get("identifier")
            ) or slug(name)
        elif kind == "weapon":
            self.weapon(name, system)
        elif kind == "equipment":
            self.equipment(name, system)
        elif kind == "spell":
            self.spell(name, system)
        elif kind == "feat":
            self.feat(name, system)
        else:
            self.skip(f"item {name!r} ({str(kind)[:20]})")

    def klass(self, name: str, system: Mapping[str, Any]) -> None:
        level = _int(system.get("levels"))
        if level is None:
            self.skip(f"class {name!r} (no levels)")
            return
        cid = _text(system.get("identifier")) or slug(name)
        self.out.setdefault("classes", []).append({"name": cid, "level": level})
        die = system.get("hitDice") or _get(system, "hd", "denomination")
        if isinstance(die, str) and die in ("d6", "d8", "d10", "d12"):
            dice = self.out.setdefault("hit_dice", {})
            dice[die] = dice.get(die, 0) + level
        if cid == "warlock":
            self.out["_warlock"] = level

    def weapon(self, name: str, system: Mapping[str, Any]) -> None:
        base = _text(_get(system, "type", "baseItem")) or _text(system.get("baseItem"))
        base_name = (
            base.replace("crossbowhand", "hand crossbow")
            .replace("crossbowlight", "light crossbow")
            .replace("crossbowheavy", "heavy crossbow")
            .replace("lighthammer", "light hammer")
        )
        base_name = base_name.replace("warpick", "war pick")
        props_raw = system.get("properties")
        if isinstance(props_raw, Mapping):
            codes = [k for k, v in props_raw.items() if v]
        elif isinstance(props_raw, list):
            codes = [c for c in props_raw if isinstance(c, str)]
        else:
            codes = []
        weapon: dict[str, Any] = {"name": name}
        bonus = _int(system.get("magicalBonus")) or 0
        if bonus:
            weapon["bonus"] = bonus
        if "mgc" in codes or bonus:
            weapon["magical"] = True
        if system.get("proficient") in (0, False):
            weapon["proficient"] = False
        srd = base_name if base_name in SRD_WEAPONS else name.lower()
        if srd in SRD_WEAPONS:
            if name != srd:
                weapon["base"] = srd
        elif not self.spelled_weapon(weapon, system, codes):
            self.skip(f"weapon {name!r} (its damage could not be read)")
            return
        parts = _get(system, "damage", "parts")
        for part in parts[1:5] if isinstance(parts, list) else []:
            dice = (
                re.fullmatch(r"\s*(\d{1,2}d\d{1,2})\s*", str(part[0]))
                if isinstance(part, list) and len(part) == 2
                else None
            )
            if dice and part[1] in DAMAGE_TYPES:
                weapon.setdefault("extra_damage", []).append(
                    {"damage": dice.group(1), "damage_type": part[1]}
                )
            else:
                self.skip(f"weapon {name!r}: the damage part {str(part)[:40]}")
        if isinstance(parts, list) and len(parts) > 5:
            self.skip(f"weapon {name!r}: damage parts past the fifth")
        self.out.setdefault("weapons", []).append(weapon)

    def spelled_weapon(
        self, weapon: dict[str, Any], system: Mapping[str, Any], codes: list[str]
    ) -> bool:
        formula, damage_type = None, None
        parts = _get(system, "damage", "parts")
        base = _get(system, "damage", "base")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and len(parts[0]) == 2:
            formula, damage_type = parts[0]
        elif isinstance(base, Mapping):
            number, die = _int(base.get("number")), _int(base.get("denomination"))
            types = base.get("types")
            if number and die:
                formula = f"{number}d{die}"
            if isinstance(types, list) and types:
                damage_type = types[0]
        if not isinstance(formula, str) or damage_type not in DAMAGE_TYPES:
            return False
        dice = re.match(r"\s*(\d{1,2}d\d{1,2})", formula)
        if not dice:
            return False
        weapon["damage"] = dice.group(1)
        weapon["damage_type"] = damage_type
        action = system.get("actionType")
        wtype = _text(_get(system, "type", "value")) or _text(system.get("weaponType"))
        ranged = action == "rwak" or wtype.endswith("R")
        weapon["kind"] = "ranged" if ranged else "melee"
        weapon["properties"] = [_FOUNDRY_PROPERTIES[c] for c in codes if c in _FOUNDRY_PROPERTIES]
        near, far = _int(_get(system, "range", "value")), _int(_get(system, "range", "long"))
        if near:
            weapon["range"] = near
        if far:
            weapon["long_range"] = far
        versatile = _get(system, "damage", "versatile")
        if isinstance(versatile, str) and re.match(r"\s*\d{1,2}d\d{1,2}", versatile):
            weapon["versatile"] = re.match(r"\s*(\d{1,2}d\d{1,2})", versatile).group(1)  # type: ignore[union-attr]
        return True

    def equipment(self, name: str, system: Mapping[str, Any]) -> None:
        category = _text(_get(system, "type", "value")) or _text(_get(system, "armor", "type"))
        if category not in ("light", "medium", "heavy", "shield"):
            self.skip(f"item {name!r} (equipment)")
            return
        if system.get("equipped") is False:
            self.skip(f"armor {name!r} (not equipped)")
            return
        armor = self.out.setdefault("armor", {"name": "none"})
        bonus = _int(_get(system, "armor", "magicalBonus")) or 0
        if category == "shield":
            armor["shield"] = True
        else:
            base = _text(_get(system, "type", "baseItem")) or name.lower()
            base = {"studded": "studded leather", "chainshirt": "chain shirt"}.get(base, base)
            base = {"scalemail": "scale mail", "halfplate": "half plate"}.get(base, base)
            base = {"ringmail": "ring mail", "chainmail": "chain mail"}.get(base, base)
            if base in SRD_ARMOR:
                armor["name"] = base
            else:
                self.skip(f"armor {name!r} (not an SRD armor: give ac by hand)")
                return
        if bonus:
            armor["bonus"] = armor.get("bonus", 0) + bonus

    def spell(self, name: str, system: Mapping[str, Any]) -> None:
        level = _int(system.get("level"))
        sid = slug(name)
        if level == 0:
            self.out.setdefault("cantrips", []).append(sid)
            return
        if level is None:
            self.skip(f"spell {name!r} (no level)")
            return
        known = self.out.setdefault("spells_known", [])
        if sid not in known:
            known.append(sid)
        mode = _get(system, "preparation", "mode")
        prepared = _get(system, "preparation", "prepared")
        if mode in ("always", "pact", "innate", "atwill") or prepared is True:
            if mode in ("innate", "atwill"):
                self.skip(f"spell {name!r}: cast {mode}, not from slots")
            self.out.setdefault("spells_prepared", []).append(sid)

    def feat(self, name: str, system: Mapping[str, Any]) -> None:
        text = _plain(_get(system, "description", "value"))
        activation = _get(system, "activation", "type")
        kind = _FOUNDRY_ACTIVATION.get(str(activation))
        feature = self.feature(name, text, kind)
        per = _FOUNDRY_PER.get(str(_get(system, "uses", "per")))
        count = _int(_get(system, "uses", "max"))
        recharge = _int(_get(system, "recharge", "value"))
        if per and count and count > 0:
            feature["uses"] = {"per": per, "count": count}
        elif recharge and 2 <= recharge <= 6:
            feature["uses"] = {"recharge": recharge}
        elif _get(system, "uses", "max"):
            self.skip(f"feature {name!r}: its uses ({str(_get(system, 'uses', 'max'))[:20]})")
        self.out.setdefault("actions" if kind else "traits", []).append(feature)

    def slots(self, system: Mapping[str, Any]) -> None:
        spells = _get(system, "spells")
        slots: dict[str, int] = {}
        for level in range(1, 10):
            slot = _get(spells, f"spell{level}")
            count = _int(_get(slot, "override"))
            if count is None:
                count = _int(_get(slot, "max"))
            if count is None:
                count = _int(_get(slot, "value"))
            if count:
                slots[str(level)] = count
        if slots:
            self.out["spell_slots"] = slots
        pact = _get(spells, "pact")
        count = _int(_get(pact, "override")) or _int(_get(pact, "max")) or _int(_get(pact, "value"))
        warlock = self.out.pop("_warlock", None)
        if count and isinstance(warlock, int):
            level = _PACT_LEVEL[min(max(warlock, 1), 9) - 1]
            self.out["pact_slots"] = {"level": level, "count": count}
        elif count:
            self.skip("system.spells.pact (no warlock class to give its level)")
        subclasses = self.out.pop("_subclasses", {})
        for cls in self.out.get("classes", []):
            if cls["name"] in subclasses:
                cls["subclass"] = subclasses[cls["name"]]

    def spells_check(self) -> None:
        known = self.out.get("spells_known", [])
        prepared = self.out.get("spells_prepared", [])
        self.out["spells_prepared"] = list(dict.fromkeys(prepared))
        if not self.out["spells_prepared"]:
            del self.out["spells_prepared"]
        if known and "spellcasting_ability" not in self.out:
            self.skip("system.attributes.spellcasting (the spellcasting ability is missing)")


# -- Improved Initiative ---------------------------------------------------------------------------

_ATTACK = re.compile(
    r"(?P<kind>Melee|Ranged) (?:Weapon|Spell) Attack:\s*(?P<bonus>[+-]\d{1,2}) to hit,"
    r"\s*(?:reach (?P<reach>\d{1,3}) ft\.|range (?P<range>\d{1,4})(?:/(?P<long>\d{1,4}))? ft\.)"
    r".{0,200}?Hit:\s*(?:\d{1,4} )?\((?P<dice>\d{1,2}d\d{1,2}(?:\s*[+-]\s*\d{1,2})?)\)\s*"
    r"(?P<type>[a-z]{3,12}) damage",
    re.IGNORECASE | re.DOTALL,
)
_SPEED = re.compile(r"^\s*(?:(?P<mode>walk|climb|swim|fly|burrow)\s+)?(?P<feet>\d{1,3})\s*ft", re.I)


class _ImprovedInitiative(_Reader):
    def run(self) -> CharacterImport:
        data = self.data
        if "Abilities" not in data or "HP" not in data:
            raise ValueError("not an Improved Initiative statblock: no Abilities or HP")
        self.out["name"] = _text(data.get("Name")) or "Unnamed"
        type_text = _text(data.get("Type"), 200)
        size = type_text.split(" ", 1)[0].capitalize() if type_text else ""
        sizes = ("Tiny", "Small", "Medium", "Large", "Huge", "Gargantuan")
        self.out["size"] = size if size in sizes else "Medium"
        if size not in sizes:
            self.skip(f"Type {type_text[:60]!r} (size read as Medium)")
        if data.get("Player") not in ("player", None, ""):
            self.skip(f"Player {str(data.get('Player'))[:40]!r}")
        scores = {}
        for ability in ABILITIES:
            value = _int(_get(data, "Abilities", ability.capitalize()))
            if value is None:
                self.skip(f"Abilities.{ability.capitalize()} (missing or not a number)")
            else:
                scores[ability] = value
        self.out["ability_scores"] = scores
        for key, field in (("HP", "hp"), ("AC", "ac")):
            value = _int(_get(data, key, "Value"))
            if value is None:
                self.skip(f"{key}.Value (missing or not a number)")
            else:
                self.out[field] = value
            if _text(_get(data, key, "Notes")):
                self.skip(f"{key}.Notes: {_text(_get(data, key, 'Notes'))}")
        init = _int(data.get("InitiativeModifier"))
        if init:
            self.out["initiative_bonus"] = init
        self.speeds(data)
        for key, field in (("Saves", "saves"), ("Skills", "skills")):
            found: dict[str, int] = {}
            for item in self.items(data.get(key), key):
                label = _text(_get(item, "Name")).lower()
                value = _int(_get(item, "Modifier"))
                name = label[:3] if field == "saves" else label
                valid = name in ABILITIES if field == "saves" else name in SKILL_ABILITIES
                if valid and value is not None:
                    found[name] = value
                else:
                    self.skip(f"{key}: {label[:40] or '?'}")
            if found:
                self.out[field] = found
        self.defences(data)
        for sense in self.items(data.get("Senses"), "Senses"):
            text = _text(sense)
            match = re.fullmatch(r"passive perception (\d{1,2})", text.lower())
            if match:
                self.out["passive_perception"] = int(match.group(1))
            elif text:
                self.skip(f"Senses: {text}")
        for key in ("Traits", "Actions", "BonusActions", "Reactions", "LegendaryActions"):
            kind = {
                "Traits": None,
                "Actions": "action",
                "BonusActions": "bonus_action",
                "Reactions": "reaction",
                "LegendaryActions": "legendary",
            }[key]
            for item in self.items(data.get(key), key):
                self.entry(item, kind, key)
        for key in ("Languages", "Challenge", "Description", "Source", "ImageURL"):
            value = data.get(key)
            if value not in (None, "", []):
                self.skip(key)
        return self.result()

    def speeds(self, data: Mapping[str, Any]) -> None:
        speeds: dict[str, int] = {}
        for item in self.items(data.get("Speed"), "Speed"):
            for part in _text(item, 200).split(","):
                match = _SPEED.match(part)
                if match:
                    speeds[(match.group("mode") or "walk").lower()] = int(match.group("feet"))
                elif part.strip():
                    self.skip(f"Speed: {part.strip()[:60]}")
        speeds.setdefault("walk", 30 if not speeds else 0)
        self.out["speeds"] = speeds

    def defences(self, data: Mapping[str, Any]) -> None:
        for key, field in (
            ("DamageResistances", "damage_resistances"),
            ("DamageVulnerabilities", "damage_vulnerabilities"),
            ("DamageImmunities", "damage_immunities"),
        ):
            kinds = []
            for item in self.items(data.get(key), key):
                text = _text(item).lower()
                if text in DAMAGE_TYPES:
                    kinds.append(text)
                elif text:
                    self.skip(f"{key}: {text}")
            if kinds:
                self.out[field] = kinds
        conditions = [
            _text(c).lower()
            for c in self.items(data.get("ConditionImmunities"), "ConditionImmunities")
            if _text(c)
        ]
        if conditions:
            self.out["condition_immunities"] = conditions

    def entry(self, item: object, kind: str | None, key: str) -> None:
        name = _text(_get(item, "Name"))
        content = _text(_get(item, "Content"), 4000)
        if not name:
            self.skip(f"{key}: an entry without a name")
            return
        match = _ATTACK.search(content) if kind == "action" else None
        if match and match.group("type").lower() in DAMAGE_TYPES:
            attack: dict[str, Any] = {
                "name": name,
                "kind": match.group("kind").lower(),
                "bonus": int(match.group("bonus")),
                "damage": re.sub(r"\s+", "", match.group("dice")),
                "damage_type": match.group("type").lower(),
            }
            if match.group("reach"):
                attack["reach"] = int(match.group("reach"))
            if match.group("range"):
                attack["range"] = int(match.group("range"))
                attack["long_range"] = int(match.group("long") or match.group("range"))
            names = {a["name"] for a in self.out.get("attacks", [])}
            if name not in names:
                self.out.setdefault("attacks", []).append(attack)
                rest = content[match.end() :].strip(" .")
                if rest:
                    self.skip(f"{key}: {name}: what follows its damage ({rest[:60]})")
                return
        feature = self.feature(name, content, kind)
        self.out.setdefault("actions" if kind else "traits", []).append(feature)
