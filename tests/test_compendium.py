"""The compendium and character formats, without a server: every bundled entry against
the schema and the rules' ranges, the SRD attribution, the sample of ten recorded in
docs/compendium.md against the data file, what the checks refuse, entries turned into
roster creatures (groups, ids, overrides), and player character files."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import zonekeep.plugins.srd as srd_plugin
from zonekeep.protocol import ROSTER_REFERENCE_KEYS, schema
from zonekeep.sdk import ABILITIES, DAMAGE_TYPES, Size, creature_from_dict, parse_compendium_source
from zonekeep.sdk._compendium import REFERENCE_KEYS, dice_average
from zonekeep.sdk.host import (
    CHALLENGE_RATINGS,
    Compendium,
    CompendiumError,
    character_creature,
    character_problems,
    entry_creatures,
    expand_roster,
    load_compendium_file,
    parse_character,
    proficiency_bonus,
    roster_reference,
)

ROOT = Path(__file__).resolve().parent.parent
SRD = ROOT / "plugins" / "srd" / "srd-5.1.json"
DOC = ROOT / "docs" / "compendium.md"
ARIA = ROOT / "examples" / "characters" / "aria.json"
ATTRIBUTION = (
    "This work includes material taken from the System Reference Document 5.1 (“SRD 5.1”) "
    "by Wizards of the Coast LLC and available at "
    "https://dnd.wizards.com/resources/systems-reference-document. The SRD 5.1 is licensed "
    "under the Creative Commons Attribution 4.0 International License available at "
    "https://creativecommons.org/licenses/by/4.0/legalcode."
)


def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SRD.read_text(encoding="utf-8"))
    return data


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(name))


def compendium() -> Compendium:
    found = Compendium()
    found.add(load_compendium_file(SRD), "srd")
    return found


ENTRY_IDS = [e["id"] for e in raw()["entries"]]


# -- the bundled data ---------------------------------------------------------------------------


def test_the_bundled_file_is_the_srd_with_its_attribution() -> None:
    assert srd_plugin.DATA == SRD
    assert srd_plugin.srd_source() == load_compendium_file(SRD)
    data = raw()
    assert (data["name"], data["license"]) == ("srd", "CC-BY-4.0")
    assert data["attribution"] == ATTRIBUTION
    assert ATTRIBUTION in DOC.read_text(encoding="utf-8")
    validator("compendium.schema.json").validate(data)
    source = load_compendium_file(SRD)
    assert len(source.entries) >= 40


@pytest.mark.parametrize("entry_id", ENTRY_IDS)
def test_every_entry_fits_the_schema_and_the_rules_ranges(entry_id: str) -> None:
    entry = next(e for e in raw()["entries"] if e["id"] == entry_id)
    one = {"name": "srd", "title": "one", "entries": [entry]}
    validator("compendium.schema.json").validate(one)
    (parsed,) = parse_compendium_source(one).entries  # the rules' ranges and cross-checks
    assert set(parsed.abilities) == set(ABILITIES)
    assert all(-5 <= v <= 10 for v in parsed.abilities.values())
    assert 1 <= parsed.ac <= 30 and parsed.hp.average == dice_average(parsed.hp.dice)
    assert parsed.challenge in CHALLENGE_RATINGS
    assert parsed.attacks, f"{entry_id} has no attack"
    for attack in parsed.attacks:
        assert attack.damage_type in DAMAGE_TYPES
        assert (attack.kind == "ranged") == (attack.range > 0)
    perception = parsed.skills.get("perception", parsed.abilities["wis"])
    assert parsed.passive_perception == 10 + perception
    for save, bonus in parsed.saves.items():  # a listed save is proficient: above the modifier
        assert bonus >= parsed.abilities[save] + proficiency_bonus(parsed.challenge) - 1
    # ... and it makes a valid roster creature.
    (creature,) = entry_creatures(parsed)
    from zonekeep.sdk.host import creature_to_dict

    assert creature_from_dict(creature_to_dict(creature)) == creature


def test_the_example_arenas_get_fitting_foes() -> None:
    found = compendium()
    wanted = [
        "goblin", "goblin-boss", "bandit", "bandit-captain", "thug", "lizardfolk", "wolf",
        "dire-wolf", "skeleton", "zombie", "ogre", "giant-frog", "crocodile", "harpy", "orc",
        "hobgoblin", "kobold", "giant-spider", "ghoul", "gnoll", "bugbear", "cultist", "guard",
        "veteran", "scout",
    ]  # fmt: skip
    assert [w for w in wanted if f"srd.{w}" not in found.entries] == []
    assert found.search(type="dragon", text="young")
    for arena in ("tavern", "swamp", "cliffside"):
        assert (ROOT / "examples" / "arenas").glob(f"{arena}.*")
        foes = found.search(tag=arena)
        assert len(foes) >= 8, arena
        assert {found.entries[f].challenge for f in foes} & {0.125, 0.25, 0.5}, arena
        assert any(found.entries[f].challenge >= 2 for f in foes), arena


def test_the_docs_table_lists_every_entry_as_the_data_says() -> None:
    rows = re.findall(r"^\| `srd\.([a-z0-9-]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \| (\d+) \| (\d+) \((\S+)\) \|", DOC.read_text(encoding="utf-8"), re.M)  # fmt: skip
    entries = {e["id"]: e for e in raw()["entries"]}
    assert sorted(r[0] for r in rows) == sorted(entries)
    for entry_id, name, size_type, cr, ac, hp, dice in rows:
        e = entries[entry_id]
        assert name.strip() == e["name"]
        assert size_type.strip() == f"{e['size']} {e['type']}"
        assert _cr(cr.strip()) == e["challenge"]
        assert (int(ac), int(hp), dice) == (e["ac"], e["hp"]["average"], e["hp"]["dice"])


def _cr(text: str) -> float:
    if "/" in text:
        top, bottom = text.split("/")
        return int(top) / int(bottom)
    return float(text)


# -- the sample of ten ----------------------------------------------------------------------------


def sample_rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- sample of ten: tests/test_compendium.py reads this table -->", 1)[1]
    lines = [line for line in table.strip().splitlines() if line.startswith("| `srd.")]
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def test_ten_entries_were_checked_against_the_document_and_match_it() -> None:
    rows = sample_rows()
    assert len(rows) == 10 and len({r[0] for r in rows}) == 10
    entries = {e["id"]: e for e in raw()["entries"]}
    for ident, ac, hp, speeds, cr, attacks, where in rows:
        e = entries[ident.strip("`").removeprefix("srd.")]
        assert int(ac) == e["ac"], ident
        assert hp == f"{e['hp']['average']} ({e['hp']['dice']})", ident
        assert (
            dict((mode, int(feet)) for mode, feet in (part.split() for part in speeds.split(", ")))
            == e["speeds"]
        ), ident
        assert _cr(cr) == e["challenge"], ident
        by_name = {a["name"]: a for a in e["attacks"]}
        for written in attacks.split("; "):
            name, bonus, damage = written.rsplit(" ", 2)
            assert (by_name[name]["bonus"], by_name[name]["damage"]) == (int(bonus), damage), (
                f"{ident} {name}"
            )
        assert where, ident


# -- what the checks refuse ----------------------------------------------------------------------


def goblin_file() -> dict[str, Any]:
    entry = next(e for e in raw()["entries"] if e["id"] == "goblin")
    return {"name": "test", "title": "test", "entries": [copy.deepcopy(entry)]}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda e: e["hp"].update(average=8), "entries[0].hp: 2d6 averages 7, not 8"),
        (lambda e: e.update(passive_perception=12), "is not 10 + its Perception (-1)"),
        (lambda e: e["attacks"][0].update(damage_type="sonic"), "'sonic' is not a damage type"),
        (lambda e: e["attacks"][0].update(damage="lots"), "is not a dice expression"),
        (lambda e: e.update(challenge=0.3), "0.3 is not a challenge rating"),
        (lambda e: e.update(ac=31), "entries[0].ac: 31 is outside 1 to 30"),
        (lambda e: e["abilities"].pop("con"), "missing con"),
        (lambda e: e["speeds"].update(walk=32), "must be a multiple of 5 feet"),
        (lambda e: e["speeds"].update(teleport=30), "teleport: not a movement mode"),
        (lambda e: e.update(id="Goblin.Boss"), "must be lower-case letters"),
        (lambda e: e.update(damage_immunities=["radiation"]), "'radiation' is not a damage type"),
        (lambda e: e.update(colour="green"), "unknown field(s): colour"),
        (lambda e: e.update(type="goblinoid"), "entries[0].type"),
        (lambda e: e["attacks"].append(dict(e["attacks"][0])), "two attacks are named 'scimitar'"),
    ],
)
def test_a_broken_entry_is_refused_by_the_parser_and_the_schema(change: Any, problem: str) -> None:
    data = goblin_file()
    change(data["entries"][0])
    with pytest.raises(CompendiumError) as info:
        parse_compendium_source(data, "file")
    assert problem in str(info.value)
    structural = ("averages", "10 + its Perception", "two attacks are named")
    if not any(words in problem for words in structural):  # what a schema cannot say
        assert list(validator("compendium.schema.json").iter_errors(data)), problem


def test_every_problem_is_listed_at_once_and_ids_once_per_source() -> None:
    data = goblin_file()
    data["entries"].append(copy.deepcopy(data["entries"][0]))
    data["entries"][0]["ac"] = 0
    data["name"] = "Not.Good"
    with pytest.raises(CompendiumError) as info:
        parse_compendium_source(data, "f.json")
    assert info.value.problems == [
        "f.json.name: 'Not.Good' must start with a lower-case letter and hold only lower-case "
        "letters, digits, - or _ (no dots: it prefixes every id)",
        "f.json.entries[0].ac: 0 is outside 1 to 30",
        "f.json.entries[1].id: 'goblin' is used twice",
    ]


def test_a_source_name_added_twice_is_refused_naming_both() -> None:
    found = compendium()
    with pytest.raises(CompendiumError) as info:
        found.add(load_compendium_file(SRD), "/srv/mine.json")
    assert (
        str(info.value) == "compendium source 'srd' is declared twice: by srd and by /srv/mine.json"
    )


# -- searching -----------------------------------------------------------------------------------


def test_search_by_words_type_tag_source_and_challenge() -> None:
    found = compendium()
    assert found.search("young dragon") == [
        "srd.young-black-dragon",
        "srd.young-green-dragon",
        "srd.young-red-dragon",
    ]
    # Words are found in the type too: the ogre and the troll are giants (no "giant" in
    # their names), found with every other giant and nothing else.
    giants = found.search("GIANT", type="giant")
    assert {"srd.ogre", "srd.troll"} <= set(giants)
    assert set(giants) == {f for f, e in found.entries.items() if e.type == "giant"}
    assert found.search("giant toad") == ["srd.giant-toad"]
    assert found.search(tag="swamp", cr_min=5, cr_max=7) == ["srd.troll", "srd.young-black-dragon"]
    assert found.search(source="other") == []
    assert len(found.search()) == len(ENTRY_IDS)


# -- roster creatures -----------------------------------------------------------------------------


def test_copies_form_one_group_and_skip_taken_ids() -> None:
    found = compendium()
    goblin = found.entries["srd.goblin"]
    one = entry_creatures(goblin)
    assert [(c.id, c.name, c.group) for c in one] == [("goblin-1", "Goblin", None)]
    four = entry_creatures(
        goblin,
        4,
        side="goblins",
        taken={"goblin-2", "goblin"},
        overrides=[{"name": "Snikt"}, {}, {"hp": 3, "ac": 12}, {"zone": "bar", "hidden": True}],
        zone="common_room",
    )
    assert [c.id for c in four] == ["goblin-1", "goblin-3", "goblin-4", "goblin-5"]
    assert [c.name for c in four] == ["Snikt", "Goblin 3", "Goblin 4", "Goblin 5"]
    assert {c.group for c in four} == {"goblin-group"}  # "goblin" is a creature's id
    assert [(c.hp, c.max_hp, c.ac) for c in four] == [
        (7, 7, 15),
        (7, 7, 15),
        (3, 3, 12),
        (7, 7, 15),
    ]
    assert [(c.zone, c.hidden) for c in four] == [("common_room", False)] * 3 + [("bar", True)]
    assert all(not c.pc and c.controller == "gm" and c.size is Size.SMALL for c in four)


def test_derived_fields_saves_skills_and_dcs() -> None:
    found = compendium()
    (captain,) = entry_creatures(found.entries["srd.bandit-captain"])
    assert captain.saves == {"str": 4, "dex": 5, "con": 2, "int": 2, "wis": 2, "cha": 2}
    assert captain.skills == {"athletics": 4, "acrobatics": 3, "deception": 4}
    assert captain.maneuver_dc == 8 + 2 + 2 and captain.spell_dc == 10
    (fanatic,) = entry_creatures(found.entries["srd.cult-fanatic"])
    assert fanatic.spell_dc == 11
    (dragon,) = entry_creatures(found.entries["srd.young-red-dragon"])
    assert dragon.maneuver_dc == 8 + 4 + 6  # proficiency +4 at CR 10
    assert dragon.speeds == {"walk": 40, "climb": 40, "fly": 80}
    assert [(a.name, a.reach) for a in dragon.attacks] == [("bite", 10), ("claw", 5)]


def test_expand_roster_mixes_spelled_out_creatures_and_references() -> None:
    found = compendium()
    items: list[object] = [
        {"id": "wolf-1", "name": "Old Grey", "side": "wolves"},
        {"compendium": "srd.wolf", "count": 2, "side": "wolves"},
        {"compendium": "srd.wolf", "side": "wolves", "zone": "ridge"},
        {"compendium": "srd.ogre"},
        {"compendium": "srd.orc", "group": "raiders", "overrides": {"name": "Ugg"}},
    ]
    creatures, problems = expand_roster(items, found)
    assert problems == []
    assert [(c.id, c.group) for c in creatures] == [
        ("wolf-1", None),
        ("wolf-2", "wolf"),
        ("wolf-3", "wolf"),
        ("wolf-4", "wolf"),  # a second reference to the wolf joins the group
        ("ogre-1", None),
        ("orc-1", "raiders"),
    ]
    _, problems = expand_roster([{"compendium": "srd.nope"}, {"id": 3}], found)
    assert problems[0] == "creatures[0].compendium: there is no compendium entry 'srd.nope'"
    assert problems[1].startswith("creatures[1]")


def test_reference_keys_are_the_protocols() -> None:
    assert set(REFERENCE_KEYS) == set(ROSTER_REFERENCE_KEYS)
    with pytest.raises(ValueError, match=r"creatures\[4\]\.count: must be a whole number"):
        roster_reference({"compendium": "srd.wolf", "count": True}, compendium(), "creatures[4]")


# -- player character files ----------------------------------------------------------------------


def aria() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ARIA.read_text(encoding="utf-8"))
    return data


def test_the_example_character_is_valid_and_becomes_a_pc() -> None:
    data = aria()
    validator("character.schema.json").validate(data)
    assert character_problems(data) == []
    sheet = parse_character(data)
    creature = character_creature(sheet, "aria", controller="ana")
    assert (creature.id, creature.name, creature.controller, creature.pc) == (
        "aria",
        "Aria",
        "ana",
        True,
    )
    assert (creature.hp, creature.max_hp, creature.ac, creature.dex_mod) == (24, 24, 16, 3)
    assert creature.saves == {"str": 1, "dex": 5, "con": 1, "int": 2, "wis": 1, "cha": 2}
    assert creature.skills["athletics"] == 1 and creature.skills["acrobatics"] == 5
    assert creature.maneuver_dc == 8 + 2 + 1
    assert [a.name for a in creature.attacks] == ["rapier", "shortbow"]
    assert creature.attacks[1].long_range == 320


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("hp"), "character.hp: required field missing"),
        (lambda d: d["abilities"].pop("wis"), "character.abilities: missing wis"),
        (lambda d: d.update(ac="sixteen"), "character.ac"),
        (lambda d: d.update(hp=0), "character.hp: 0 is outside 1 to 999"),
        (lambda d: d.update(size="Enormous"), "character.size"),
        (lambda d: d["speeds"].pop("walk"), "needs a walk speed"),
        (lambda d: d["attacks"][1].update(range=0), "a ranged attack needs a range"),
        (lambda d: d["attacks"][0].pop("damage_type"), "'' is not a damage type"),
        (lambda d: d.update(level=3), "unknown field(s): level"),
        (lambda d: d.update(name=""), "character.name: must be text of 1-100 characters"),
    ],
)
def test_a_broken_character_is_refused_by_the_function_and_the_schema(
    change: Any, problem: str
) -> None:
    data = aria()
    change(data)
    problems = character_problems(data)
    assert any(problem in p for p in problems), problems
    with pytest.raises(ValueError):
        parse_character(data)
    assert list(validator("character.schema.json").iter_errors(data)), problem


def test_every_character_problem_is_listed_at_once() -> None:
    data = aria()
    data["ac"] = 0
    data["passive_perception"] = 99
    data["attacks"][0]["damage_type"] = "sonic"
    assert character_problems(data, "seat ana") == [
        "seat ana.ac: 0 is outside 1 to 30",
        "seat ana.passive_perception: 99 is outside 1 to 40",
        "seat ana.attacks[0].damage_type: 'sonic' is not a damage type",
    ]
    assert character_problems("not an object") == ["character: must be an object"]
