"""The character model (docs/characters.md), without a server: the pregenerated parties
and every number derived from a sheet (ability scores, proficiency bonus from the level,
saves, skills and expertise, AC from armor, attacks from weapons and their
properties, spellcasting), the checks of each new field at its place, the schema
agreeing with the checks, and encounter files that name character files and
compendium entries."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zonekeep.protocol import schema
from zonekeep.sdk.host import (
    ability_modifier,
    character_creature,
    character_problems,
    level_proficiency,
    parse_character,
    sheet_values,
)
from zonekeep.server._encounter_file import EncounterFileError, load_encounter, parse_encounter

ROOT = Path(__file__).resolve().parent.parent
CHARACTERS = ROOT / "examples" / "characters"
ENCOUNTERS = ROOT / "examples" / "encounters"
PARTIES = {
    3: ("brenna", "wren", "tamsin", "orrin"),
    5: ("kael", "pip", "hilda", "seraphine"),
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CHARACTERS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema("character.schema.json"))


def creature_of(data: dict[str, Any]) -> Any:
    return character_creature(parse_character(data), "pc", controller="ana")


# -- the pregenerated parties ----------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for party in PARTIES.values() for n in party])
def test_every_pregenerated_character_is_valid_for_the_function_and_the_schema(name: str) -> None:
    data = load(name)
    assert character_problems(data) == []
    assert list(validator().iter_errors(data)) == []


@pytest.mark.parametrize(("level", "names"), sorted(PARTIES.items()))
def test_each_party_is_a_fighter_a_rogue_a_cleric_and_a_wizard_of_its_level(
    level: int, names: tuple[str, ...]
) -> None:
    sheets = [parse_character(load(n)) for n in names]
    assert [[(c.name, c.level) for c in s.classes] for s in sheets] == [
        [("fighter", level)],
        [("rogue", level)],
        [("cleric", level)],
        [("wizard", level)],
    ]


def test_the_level_5_fighter_derives_srd_numbers() -> None:
    kael = creature_of(load("kael"))
    # Chain mail 16 + shield 2 + Defense 1; level 5: proficiency +3; STR 18: +4.
    assert (kael.ac, kael.hp, kael.passive_perception, kael.dex_mod) == (19, 44, 14, 2)
    assert kael.saves == {"str": 7, "dex": 2, "con": 5, "int": -1, "wis": 1, "cha": 0}
    assert kael.skills["athletics"] == 7 and kael.skills["perception"] == 4
    assert kael.maneuver_dc == 8 + 3 + 4
    assert [
        (a.name, a.kind, a.bonus, a.damage, a.reach, a.range, a.long_range) for a in kael.attacks
    ] == [
        ("longsword", "melee", 7, "1d8+4", 5, 0, 0),
        ("longsword (two-handed)", "melee", 7, "1d10+4", 5, 0, 0),
        ("javelin", "melee", 7, "1d6+4", 5, 0, 0),
        ("javelin (thrown)", "ranged", 7, "1d6+4", 5, 30, 120),
    ]


def test_the_level_5_rogue_uses_dexterity_for_finesse_and_doubles_expertise() -> None:
    pip = creature_of(load("pip"))
    assert (pip.ac, pip.hp, pip.size.label, pip.speeds) == (15, 38, "Small", {"walk": 25})
    # DEX 19 (+4), proficiency +3, expertise in stealth and perception.
    assert pip.skills["stealth"] == 4 + 6 and pip.skills["perception"] == 1 + 6
    assert pip.skills["sleight of hand"] == 4 + 3 and pip.skills["athletics"] == -1
    assert pip.passive_perception == 17
    assert [(a.name, a.bonus, a.damage) for a in pip.attacks] == [
        ("shortsword", 7, "1d6+4"),
        ("shortbow", 7, "1d6+4"),
        ("dagger", 7, "1d4+4"),
        ("dagger (thrown)", 7, "1d4+4"),
    ]


def test_the_casters_derive_their_spell_dc_from_their_ability() -> None:
    hilda = creature_of(load("hilda"))
    seraphine = creature_of(load("seraphine"))
    orrin = creature_of(load("orrin"))
    assert (hilda.spell_dc, hilda.ac, hilda.damage_resistances) == (15, 18, ["poison"])
    assert (seraphine.spell_dc, seraphine.ac, seraphine.hp) == (15, 12, 32)
    assert (orrin.spell_dc, orrin.saves["int"]) == (13, 5)
    values = sheet_values(parse_character(load("seraphine")))
    assert (values.spell_attack_bonus, values.proficiency, values.level) == (7, 3, 5)
    assert values.hit_dice == {"d6": 5}


def test_the_level_5_wizard_carries_its_spells_and_slots_faithfully() -> None:
    sheet = parse_character(load("seraphine"))
    assert sheet.spell_slots == {"1": 4, "2": 3, "3": 2}
    assert "fireball" in sheet.spells_prepared and "counterspell" in sheet.spells_prepared
    assert set(sheet.spells_prepared) <= set(sheet.spells_known)
    assert len(sheet.spells_prepared) == 4 + 5  # Intelligence modifier + wizard level
    assert [(r.id, r.count, r.per) for r in sheet.resources] == [("arcane-recovery", 1, "day")]


# -- derived numbers -------------------------------------------------------------------------------


def minimal(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "Test",
        "size": "Medium",
        "speeds": {"walk": 30},
        "ability_scores": {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 10},
        "hp": 10,
    }
    data.update(extra)
    return data


@pytest.mark.parametrize(
    ("score", "modifier"), [(1, -5), (3, -4), (8, -1), (9, -1), (10, 0), (11, 0), (15, 2), (30, 10)]
)
def test_an_ability_modifier_is_half_the_score_above_10_rounded_down(
    score: int, modifier: int
) -> None:
    assert ability_modifier(score) == modifier


@pytest.mark.parametrize(
    ("level", "bonus"), [(1, 2), (4, 2), (5, 3), (8, 3), (9, 4), (13, 5), (17, 6), (20, 6)]
)
def test_the_proficiency_bonus_follows_the_total_level(level: int, bonus: int) -> None:
    assert level_proficiency(level) == bonus
    data = minimal(classes=[{"name": "fighter", "level": level}])
    assert sheet_values(parse_character(data)).proficiency == bonus


def test_levels_in_two_classes_add_up() -> None:
    data = minimal(
        classes=[{"name": "fighter", "level": 3}, {"name": "wizard", "level": 2}],
        save_proficiencies=["str"],
    )
    values = sheet_values(parse_character(data))
    assert (values.level, values.proficiency, values.saves["str"]) == (5, 3, 3)
    assert values.hit_dice == {"d10": 3, "d6": 2}


@pytest.mark.parametrize(
    ("armor", "dex", "ac"),
    [
        (None, 16, 13),
        ({"name": "leather"}, 18, 15),
        ({"name": "half plate"}, 18, 17),  # medium: at most +2 from Dexterity
        ({"name": "plate", "shield": True}, 18, 20),  # heavy: no Dexterity
        ({"name": "none", "shield": True, "bonus": 1}, 12, 14),
    ],
)
def test_ac_is_derived_from_the_armor(armor: dict[str, Any] | None, dex: int, ac: int) -> None:
    data = minimal()
    data["ability_scores"]["dex"] = dex
    if armor is not None:
        data["armor"] = armor
    assert creature_of(data).ac == ac
    data["ac"] = 21  # a given AC wins (a magic item the tables do not know)
    assert creature_of(data).ac == 21


def test_weapon_properties_shape_the_attacks() -> None:
    data = minimal(
        ability_scores={"str": 14, "dex": 16, "con": 10, "int": 10, "wis": 10, "cha": 10},
        classes=[{"name": "fighter", "level": 1}],
        weapons=[
            {"name": "glaive"},
            {"name": "Whisper", "base": "rapier", "bonus": 1, "magical": True},
            {"name": "handaxe"},
            {"name": "longbow"},
            {"name": "greatclub", "proficient": False},
            {
                "name": "Star",
                "kind": "ranged",
                "damage": "1d4",
                "damage_type": "radiant",
                "properties": ["thrown"],
                "range": 30,
                "long_range": 90,
                "ability": "str",
            },
        ],
    )
    attacks = [
        (a.name, a.kind, a.bonus, a.damage, a.damage_type, a.reach, a.range, a.long_range)
        for a in creature_of(data).attacks
    ]
    assert attacks == [
        ("glaive", "melee", 4, "1d10+2", "slashing", 10, 0, 0),  # reach
        ("Whisper", "melee", 6, "1d8+4", "piercing", 5, 0, 0),  # finesse: DEX; +1 weapon
        ("handaxe", "melee", 4, "1d6+2", "slashing", 5, 0, 0),
        ("handaxe (thrown)", "ranged", 4, "1d6+2", "slashing", 5, 20, 60),
        ("longbow", "ranged", 5, "1d8+3", "piercing", 5, 150, 600),  # ranged: DEX
        ("greatclub", "melee", 2, "1d8+2", "bludgeoning", 5, 0, 0),  # not proficient
        ("Star", "ranged", 4, "1d4+2", "radiant", 5, 30, 90),
    ]


def test_given_bonuses_win_over_derived_ones_and_old_files_load_unchanged() -> None:
    data = minimal(
        classes=[{"name": "rogue", "level": 1}],
        skill_proficiencies=["stealth"],
        expertise=["stealth"],
        skills={"stealth": 9},
        save_proficiencies=["dex"],
        saves={"dex": 8},
    )
    creature = creature_of(data)
    assert (creature.skills["stealth"], creature.saves["dex"]) == (9, 8)
    old = json.loads((CHARACTERS / "aria.json").read_text(encoding="utf-8"))
    assert character_problems(old) == []
    assert creature_of(old).ac == 16 and creature_of(old).saves["dex"] == 5


# -- the checks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (
            {"ability_scores": {"str": 10}},
            "character.ability_scores: missing dex, con, int, wis, cha",
        ),
        ({"ability_scores": None, "abilities": None}, "character: needs ability_scores"),
        (
            {"classes": [{"name": "fighter", "level": 21}]},
            "character.classes[0].level: 21 is outside 1 to 20",
        ),
        ({"classes": [{"name": "Fighter!", "level": 1}]}, "character.classes[0].name"),
        (
            {"classes": [{"name": "fighter", "level": 12}, {"name": "wizard", "level": 9}]},
            "character.classes: the levels add up to 21, more than 20",
        ),
        (
            {"classes": [{"name": "artificer", "level": 2}]},
            "character.hit_dice: needed for artificer",
        ),
        (
            {"classes": [{"name": "fighter", "level": 5}], "proficiency_bonus": 2},
            "character.proficiency_bonus: 2 is not the bonus of a level-5 character (+3)",
        ),
        ({"hit_dice": {"d7": 1}}, "character.hit_dice.d7: not a hit die"),
        (
            {"save_proficiencies": ["luck"]},
            "character.save_proficiencies: 'luck' is not an ability",
        ),
        (
            {"skill_proficiencies": ["flying"]},
            "character.skill_proficiencies: 'flying' is not a skill",
        ),
        ({"expertise": ["stealth"]}, "character.expertise: 'stealth' needs proficiency in it"),
        ({"armor": {"name": "mithral"}}, "character.armor.name: 'mithral' is not an SRD armor"),
        ({"weapons": [{"name": "laser"}]}, "character.weapons[0]: 'laser' is not an SRD weapon"),
        ({"weapons": [{"name": "x", "base": "lightsaber"}]}, "character.weapons[0].base"),
        (
            {"weapons": [{"name": "dagger", "bonus": 9}]},
            "character.weapons[0].bonus: 9 is outside 0 to 3",
        ),
        (
            {"weapons": [{"name": "dagger", "properties": ["sharp"]}]},
            "character.weapons[0].properties",
        ),
        ({"weapons": [{"name": "dagger"}, {"name": "dagger"}]}, "two attacks are named 'dagger'"),
        ({"spell_slots": {"10": 1}}, "character.spell_slots.10: a spell level is 1 to 9"),
        ({"spell_slots": {"1": 2}}, "character.spellcasting_ability: a caster needs it"),
        ({"spells_known": ["Fire Bolt"], "spellcasting_ability": "int"}, "is not a spell id"),
        (
            {
                "spells_known": ["shield"],
                "spells_prepared": ["fireball"],
                "spellcasting_ability": "int",
            },
            "character.spells_prepared: 'fireball' is not among spells_known",
        ),
        ({"spellcasting_ability": "str"}, "character.spellcasting_ability"),
        (
            {"resources": [{"id": "ki", "name": "Ki", "count": 0}]},
            "character.resources[0].count: 0 is outside 1 to 99",
        ),
        (
            {"resources": [{"id": "ki", "name": "Ki", "count": 2, "per": "week"}]},
            "character.resources[0].per",
        ),
        ({"traits": [{"id": "Bad Id", "name": "x"}]}, "character.traits[0].id"),
        (
            {"traits": [{"id": "x", "name": "x", "colour": "red"}]},
            "character.traits[0]: unknown field(s): colour",
        ),
        ({"actions": [{"id": "x", "name": "x", "kind": "free"}]}, "character.actions[0].kind"),
        (
            {"actions": [{"id": "x", "name": "x", "kind": "action", "uses": {"recharge": 7}}]},
            "uses.recharge",
        ),
        (
            {
                "actions": [
                    {
                        "id": "x",
                        "name": "x",
                        "kind": "action",
                        "uses": {"per": "day", "count": 1, "charges": 2},
                    }
                ]
            },
            "character.actions[0].uses: give exactly one of",
        ),
        (
            {"traits": [{"id": "x", "name": "x", "params": []}]},
            "character.traits[0].params: expected an object",
        ),
    ],
)
def test_a_broken_new_field_is_refused_at_its_place(extra: dict[str, Any], problem: str) -> None:
    data = minimal()
    for key, value in extra.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    problems = character_problems(data)
    assert any(problem in p for p in problems), problems
    with pytest.raises(ValueError):
        parse_character(data)


def test_deeply_nested_params_are_refused_not_recursed() -> None:
    params: dict[str, Any] = {}
    inner = params
    for _ in range(200):
        inner["x"] = {}
        inner = inner["x"]
    data = minimal(traits=[{"id": "deep", "name": "Deep", "params": params}])
    assert character_problems(data) == [
        "character.traits[0].params: nested too deep (at most 8 levels)"
    ]


def test_the_schema_refuses_what_the_checks_refuse() -> None:
    base = minimal()
    for change in (
        {"ability_scores": {**base["ability_scores"], "str": 31}},
        {"classes": [{"name": "fighter", "level": 0}]},
        {"weapons": [{"name": "dagger", "bonus": 4}]},
        {"spell_slots": {"0": 1}},
        {"expertise": ["juggling"]},
        {"armor": {"name": "mithral"}},
        {"actions": [{"id": "x", "name": "x", "kind": "free"}]},
    ):
        data = copy.deepcopy(base) | change
        assert character_problems(data), change
        assert list(validator().iter_errors(data)), change


# -- encounter files naming characters -------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "party"),
    [("level3-tavern-hobgoblins.json", PARTIES[3]), ("level5-cliffside-ogre.json", PARTIES[5])],
)
def test_each_party_has_an_example_encounter(file: str, party: tuple[str, ...]) -> None:
    spec = load_encounter(ENCOUNTERS / file)
    pcs = [c for c in spec.creatures if c.pc]
    assert [c.id for c in pcs] == list(party)
    assert all(spec.positions[c.id] for c in pcs)
    kael_like = character_creature(parse_character(load(party[0])), party[0], controller="alice")
    assert pcs[0].attacks == kael_like.attacks and pcs[0].hp == kael_like.hp


def test_a_broken_character_item_is_reported_at_its_place(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"name": "Bad"}', encoding="utf-8")
    data = {
        "name": "x",
        "creatures": [
            {"character": "bad.json", "id": "bad", "controller": "ana"},
            {"character": "missing.json", "id": "gone", "controller": "ana"},
            {"character": "bad.json", "controller": "ana", "colour": "red"},
        ],
    }
    with pytest.raises(EncounterFileError) as caught:
        parse_encounter(data, "f", base=tmp_path)
    text = "\n".join(caught.value.problems)
    assert "creatures[0].character.size: required field missing" in text
    assert "creatures[1].character: cannot read 'missing.json'" in text
    assert "creatures[2].colour: unknown key" in text
    assert "creatures[2].id: required text" in text


# -- what the roster creature carries for the features to come ----------------------------------


def test_the_creature_carries_abilities_proficiency_features_and_resources() -> None:
    hilda = creature_of(load("hilda"))
    assert hilda.abilities == {"str": 2, "dex": -1, "con": 2, "int": 0, "wis": 4, "cha": 1}
    assert hilda.proficiency == 3
    assert [t.id for t in hilda.traits][:2] == ["class-levels", "spellcasting"]
    classes, casting = hilda.traits[0], hilda.traits[1]
    assert classes.params == {
        "classes": [{"name": "cleric", "level": 5, "subclass": "life"}],
        "level": 5,
        "hit_dice": {"d8": 5},
        "resources": [
            {"id": "channel-divinity", "name": "Channel Divinity", "count": 1, "per": "short_rest"}
        ],
    }
    assert casting.params["dc"] == 15 and casting.params["attack_bonus"] == 7
    assert casting.params["slots"] == {"1": 4, "2": 3, "3": 2}
    assert "spirit-guardians" in casting.params["prepared"]
    assert casting.params["cantrips"] == ["sacred-flame", "spare-the-dying", "guidance", "light"]
    assert "spell save DC 15" in casting.text
    assert [a.id for a in hilda.actions] == ["turn-undead", "preserve-life"]
    assert hilda.resources == {
        "channel-divinity": 1,
        "spell-slots-1": 4,
        "spell-slots-2": 3,
        "spell-slots-3": 2,
    }
    kael = creature_of(load("kael"))
    assert kael.resources == {"action-surge": 1, "second-wind": 1}
    assert "spellcasting" not in [t.id for t in kael.traits]
    pip = creature_of(load("pip"))
    sneak = next(t for t in pip.traits if t.id == "sneak-attack")
    assert sneak.params == {"damage": "3d6"}  # the srd plugin's sneak-attack automates it
    assert pip.resources["sneak-attack"] == 1  # once per turn
    assert [(a.id, a.kind) for a in pip.actions] == [
        ("cunning-action", "bonus_action"),
        ("uncanny-dodge", "reaction"),
    ]


def test_a_magic_weapon_makes_magical_attacks_with_its_extra_damage() -> None:
    data = minimal(
        weapons=[
            {"name": "Flame Tongue", "base": "longsword", "magical": True,
             "extra_damage": [{"damage": "2d6", "damage_type": "fire"}]},
            {"name": "Edge", "base": "dagger", "bonus": 1},
            {"name": "club"},
        ]
    )  # fmt: skip
    attacks = creature_of(data).attacks
    assert [(a.name, a.magical) for a in attacks] == [
        ("Flame Tongue", True),
        ("Flame Tongue (two-handed)", True),
        ("Edge", True),
        ("Edge (thrown)", True),
        ("club", False),
    ]
    assert [(e.damage, e.damage_type) for e in attacks[0].extra_damage] == [("2d6", "fire")]


def test_a_class_resource_may_not_count_what_a_feature_or_a_slot_counts() -> None:
    data = minimal(
        actions=[{"id": "second-wind", "name": "Second Wind", "kind": "bonus_action",
                  "uses": {"per": "short_rest", "count": 1}}],
        resources=[{"id": "second-wind", "name": "Wind", "count": 1},
                   {"id": "spell-slots-1", "name": "Slots", "count": 2}],
    )  # fmt: skip
    assert character_problems(data) == [
        "character.resources[0].id: 'second-wind' already counts a feature's uses or spell "
        "slots; give the resource another id",
        "character.resources[1].id: 'spell-slots-1' already counts a feature's uses or spell "
        "slots; give the resource another id",
    ]
