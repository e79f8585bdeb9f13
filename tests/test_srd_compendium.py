"""The bundled SRD 5.1 compendium as a whole: how many creatures it holds, its ids,
every entry through the loader's checks, every attack's damage dice against the stat
block's own figures, and the SRD's CC BY 4.0 attribution on every entry.

Nothing here names a creature's numbers: the checks hold the data file to itself and
to the rules (docs/compendium.md), so they keep holding as creatures are added."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema

import zonekeep.plugins.srd as srd_plugin
from zonekeep.protocol import schema
from zonekeep.sdk import CompendiumEntry, parse_compendium_source, parse_dice
from zonekeep.sdk._compendium import dice_average, entry_problems
from zonekeep.sdk.host import (
    Compendium,
    load_compendium_file,
    proficiency_bonus,
)

ROOT = Path(__file__).resolve().parent.parent
SRD = ROOT / "plugins" / "srd" / "srd-5.1.json"

#: The issue this groundwork is for asks for every SRD creature of challenge 5 or less;
#: 120 is the floor this file must not fall below.
AT_LEAST = 120

#: The credit the SRD's licence (CC BY 4.0) asks for, in the words the licence needs.
LICENCE_WORDS = (
    "System Reference Document 5.1",
    "Wizards of the Coast LLC",
    "Creative Commons Attribution 4.0 International License",
    "https://creativecommons.org/licenses/by/4.0/legalcode",
)

#: The dice stat blocks roll for damage.
DAMAGE_DIE_SIDES = (4, 6, 8, 10, 12)


def raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SRD.read_text(encoding="utf-8"))
    return data


def srd() -> Compendium:
    found = Compendium()
    found.add(load_compendium_file(SRD), "srd")
    return found


def damage_problems(entry: CompendiumEntry) -> list[str]:
    """Where an attack's damage dice disagree with the stat block they come from: the
    average a stat block prints (the dice's, rounded down) must be at least 1, the dice
    must be damage dice, and what the dice add must be the modifier the attack is made
    with (its Strength or Dexterity modifier) or nothing; a flat number (a bat's bite
    deals 1) adds nothing to dice."""
    problems = []
    own = {0, entry.abilities["str"], entry.abilities["dex"]}
    for attack in entry.attacks:
        where = f"{entry.id}.{attack.name}"
        dice = parse_dice(attack.damage)
        if dice_average(attack.damage) < 1:
            problems.append(f"{where}: {attack.damage} averages below 1")
        if dice.count and dice.sides not in DAMAGE_DIE_SIDES:
            problems.append(f"{where}: d{dice.sides} is not a damage die")
        if dice.count and dice.modifier not in own:  # a flat "1" is no dice
            problems.append(
                f"{where}: adds {dice.modifier:+d}, neither its Strength nor its Dexterity modifier"
            )
        ability = attack.bonus - proficiency_bonus(entry.challenge)
        if ability > max(entry.abilities["str"], entry.abilities["dex"]):
            problems.append(f"{where}: +{attack.bonus} to hit is above proficiency + ability")
    return problems


def test_the_srd_file_holds_at_least_120_creatures_under_unique_sorted_ids() -> None:
    entries = raw()["entries"]
    ids = [e["id"] for e in entries]
    assert len(ids) >= AT_LEAST
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)  # the file keeps them in id order, as list_compendium pages
    assert [i for i in ids if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i)] == []
    names = [e["name"] for e in entries]
    assert len(set(names)) == len(names)


def test_every_entry_passes_the_loaders_checks() -> None:
    data = raw()
    jsonschema.Draft202012Validator(schema("compendium.schema.json")).validate(data)
    source = load_compendium_file(SRD)  # raises, listing every problem, if one fails
    assert len(source.entries) == len(data["entries"])
    assert [p for e in source.entries for p in entry_problems(e, e.id)] == []
    # ... and one by one, as a GM's own file holding a single creature would be.
    for entry in data["entries"]:
        (parsed,) = parse_compendium_source(
            {"name": "one", "title": "t", "entries": [entry]}
        ).entries
        assert parsed.attacks, f"{entry['id']} has no attack to play with"
        assert parsed.challenge <= 30


def test_every_attacks_average_damage_is_consistent_with_its_dice() -> None:
    entries = load_compendium_file(SRD).entries
    assert [p for e in entries for p in damage_problems(e)] == []
    assert sum(len(e.attacks) for e in entries) > len(entries)


def test_the_damage_check_finds_attacks_that_disagree_with_their_dice() -> None:
    data = {"name": "t", "title": "t", "entries": [copy.deepcopy(raw()["entries"][0])]}
    attack = data["entries"][0]["attacks"][0]
    strength = data["entries"][0]["abilities"]["str"]
    dexterity = data["entries"][0]["abilities"]["dex"]
    odd = next(m for m in range(1, 12) if m not in (strength, dexterity))
    attack.update(damage=f"1d7+{odd}", bonus=20)
    (entry,) = parse_compendium_source(data).entries
    found = damage_problems(entry)
    assert [p.split(": ", 1)[1] for p in found] == [
        "d7 is not a damage die",
        f"adds +{odd}, neither its Strength nor its Dexterity modifier",
        "+20 to hit is above proficiency + ability",
    ]
    attack.update(damage="1d4-3", bonus=0)
    (entry,) = parse_compendium_source(data).entries
    assert any("averages below 1" in p for p in damage_problems(entry))


def test_every_entry_carries_the_cc_by_attribution_of_its_source() -> None:
    assert srd_plugin.DATA == SRD
    found = srd()
    assert len(found.entries) >= AT_LEAST
    for full_id in found.entries:
        source = found.source_of(full_id)
        assert (source.name, source.license) == ("srd", "CC-BY-4.0"), full_id
        assert [w for w in LICENCE_WORDS if w not in source.attribution] == [], full_id
