"""Importing the sheets players keep elsewhere (docs/characters.md, "Importing"): a
Foundry VTT dnd5e actor export and an Improved Initiative statblock, written in those
formats in tests/fixtures/characters/, become valid character files with the exact
numbers of the sheet, and every part with no place in a character file is listed by
name; hostile sheets (wrong types, huge lists, deep nesting, not the format at all)
are listed or refused, never raised from deep inside."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from zonekeep.sdk.host import (
    MAX_IMPORTED_ITEMS,
    character_creature,
    character_problems,
    import_character,
    parse_character,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "characters"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


FOUNDRY = "foundry-dnd5e-cleric.json"
IMPROVED = "improved-initiative-ranger.json"


def test_a_foundry_actor_becomes_a_valid_character_with_its_numbers() -> None:
    made = import_character(fixture(FOUNDRY), "foundry")
    data = made.character
    assert character_problems(data) == []
    assert data["ability_scores"] == {
        "str": 14,
        "dex": 10,
        "con": 14,
        "int": 10,
        "wis": 17,
        "cha": 12,
    }
    assert data["classes"] == [{"name": "cleric", "level": 5, "subclass": "life"}]
    assert data["hit_dice"] == {"d8": 5}
    assert data["save_proficiencies"] == ["wis", "cha"]
    assert data["skill_proficiencies"] == ["insight", "medicine", "religion"]
    assert data["expertise"] == ["medicine"]
    assert data["armor"] == {"name": "chain mail", "shield": True}
    assert data["spell_slots"] == {"1": 4, "2": 3, "3": 2}
    assert data["cantrips"] == ["sacred-flame", "guidance"]
    assert data["spells_prepared"] == [
        "bless",
        "cure-wounds",
        "healing-word",
        "spiritual-weapon",
        "spirit-guardians",
    ]
    assert "command" in data["spells_known"] and "command" not in data["spells_prepared"]
    assert data["resources"] == [
        {"id": "channel-divinity", "name": "Channel Divinity", "count": 1, "per": "short_rest"}
    ]
    assert data["actions"][0]["id"] == "channel-divinity-preserve-life"
    assert data["actions"][0]["uses"] == {"per": "short_rest", "count": 1}
    creature = character_creature(parse_character(data), "marta", controller="ana")
    assert (creature.ac, creature.hp, creature.spell_dc, creature.passive_perception) == (
        18,
        38,
        14,
        13,
    )
    assert creature.damage_resistances == ["necrotic"]
    assert [(a.name, a.bonus, a.damage, a.magical) for a in creature.attacks] == [
        ("Mace", 5, "1d6+2", False),
        ("Sunblade Hammer", 6, "1d8+3", True),
        ("Sunblade Hammer (two-handed)", 6, "1d10+3", True),
    ]
    assert [(e.damage, e.damage_type) for e in creature.attacks[1].extra_damage] == [
        ("1d6", "radiant")
    ]


def test_what_a_foundry_actor_holds_beyond_a_character_file_is_listed_by_name() -> None:
    unmapped = import_character(fixture(FOUNDRY), "foundry").unmapped
    assert unmapped == (
        "sense darkvision 60 ft.",
        "system.traits.dr.custom: psychic from dreams",
        "skill perception: proficiency 0.5 (only 0, 1 and 2 map)",
        "item 'Potion of Healing' (consumable)",
        "item 'Holy Symbol' (loot)",
        "active effect 'Blessed by the Abbot'",
        "system.traits.languages",
        "system.currency",
    )


def test_an_improved_initiative_statblock_becomes_a_valid_character() -> None:
    made = import_character(fixture(IMPROVED), "improved-initiative")
    data = made.character
    assert character_problems(data) == []
    creature = character_creature(parse_character(data), "ilsa", controller="ana")
    assert (creature.ac, creature.hp, creature.passive_perception) == (15, 36, 14)
    assert creature.speeds == {"walk": 35, "climb": 35}
    assert creature.saves["dex"] == 5 and creature.saves["wis"] == 2
    assert creature.skills["stealth"] == 5
    assert [
        (a.name, a.kind, a.bonus, a.damage, a.range, a.long_range) for a in creature.attacks
    ] == [
        ("Longbow", "ranged", 5, "1d8+3", 150, 600),
        ("Shortsword", "melee", 5, "1d6+3", 0, 0),
    ]
    assert [t["id"] for t in data["traits"]] == ["fey-ancestry", "favored-enemy"]
    assert data["actions"] == [
        {
            "id": "hunter-s-mark",
            "name": "Hunter's Mark",
            "kind": "action",
            "text": "Bonus action spell: mark a creature; deal an extra 1d6 damage to it on a weapon hit.",
            "gm": "imported from a character sheet: the GM applies its text",
        }
    ]
    # Imported features are the GM's: a trait named as a plugin's (Fey Ancestry) carries
    # no params, so it is never refused for lacking them.
    assert all(t["gm"] for t in data["traits"])
    assert made.unmapped == (
        "HP.Notes: (4d10+8)",
        "AC.Notes: (studded leather)",
        "Senses: darkvision 60 ft.",
        "Languages",
    )


def test_the_zonekeep_format_passes_through_unchanged() -> None:
    data = {"name": "x"}
    made = import_character(data, "zonekeep")
    assert made.character == data and made.unmapped == ()


@pytest.mark.parametrize(
    ("data", "format", "message"),
    [
        ({"name": "x"}, "foundry", "not a Foundry VTT actor export"),
        ({"Name": "x"}, "improved-initiative", "not an Improved Initiative statblock"),
        ([1, 2], "foundry", "must be a JSON object"),
        ({}, "pdf", "unknown character format 'pdf'"),
    ],
)
def test_a_sheet_not_in_its_format_is_refused_with_a_sentence(
    data: Any, format: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        import_character(data, format)


def test_wrong_types_in_a_foundry_actor_are_listed_not_raised() -> None:
    data = fixture(FOUNDRY)
    data["system"]["abilities"]["str"]["value"] = "strong"
    data["system"]["attributes"]["hp"] = "lots"
    data["system"]["traits"]["size"] = ["med"]
    data["system"]["skills"]["ath"] = 7
    data["items"][0]["system"]["levels"] = {"a": 1}
    data["items"][2] = "a mace"
    data["items"][3]["system"]["damage"] = None
    data["effects"] = "none"
    made = import_character(data, "foundry")
    assert "system.abilities.str.value (missing or not a number)" in made.unmapped
    assert "system.attributes.hp (no maximum hit points)" in made.unmapped
    assert "system.traits.size (read as Medium)" in made.unmapped
    assert "class 'Cleric' (no levels)" in made.unmapped
    assert "items[2] (not an object)" in made.unmapped
    assert "effects (not a list)" in made.unmapped
    assert character_problems(made.character) == ["character.hp: required field missing"]
    made.character["hp"] = 30
    assert character_problems(made.character) == [
        "character.ability_scores: missing str (all six are needed)"
    ]


def test_a_huge_foundry_actor_is_cut_to_its_first_items_with_a_note() -> None:
    data = fixture(FOUNDRY)
    spell = {"name": "Light", "type": "spell", "system": {"level": 0}}
    data["items"] = [copy.deepcopy(spell) for _ in range(MAX_IMPORTED_ITEMS + 50)]
    made = import_character(data, "foundry")
    assert f"items: 50 past the first {MAX_IMPORTED_ITEMS}" in made.unmapped
    assert len(made.character["cantrips"]) == MAX_IMPORTED_ITEMS
    # The character file refuses the repeats, at their place.
    assert any("character.cantrips" in p for p in character_problems(made.character))


def test_deep_nesting_in_a_sheet_is_never_walked() -> None:
    deep: Any = "bottom"
    for _ in range(5000):
        deep = {"x": deep}
    data = fixture(FOUNDRY)
    data["flags"] = deep
    data["items"][14]["system"]["description"]["value"] = deep
    made = import_character(data, "foundry")
    assert character_problems(made.character) == []
    statblock = fixture(IMPROVED)
    statblock["Traits"][0]["Content"] = deep
    statblock["Description"] = deep
    made = import_character(statblock, "improved-initiative")
    assert made.character["traits"][0]["text"] == ""
    assert "Description" in made.unmapped


def test_an_improved_initiative_action_that_is_not_an_attack_stays_a_feature() -> None:
    statblock = fixture(IMPROVED)
    statblock["Actions"] = [
        {
            "Name": "Bite",
            "Content": "Melee Weapon Attack: +4 to hit, reach 5 ft., one target. "
            "Hit: 5 (1d6 + 2) piercing damage, and the target must succeed on a DC 11 "
            "Strength saving throw or be knocked prone.",
        },
        {
            "Name": "Zap",
            "Content": "Ranged Spell Attack: +4 to hit, range 60 ft. Hit: 7 (2d6) sonic damage.",
        },
    ]
    made = import_character(statblock, "improved-initiative")
    assert made.character["attacks"] == [
        {
            "name": "Bite",
            "kind": "melee",
            "bonus": 4,
            "damage": "1d6+2",
            "damage_type": "piercing",
            "reach": 5,
        }
    ]
    assert [a["id"] for a in made.character["actions"]] == ["zap"]
    assert any(u.startswith("Actions: Bite: what follows its damage") for u in made.unmapped)
