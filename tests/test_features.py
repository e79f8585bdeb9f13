"""Creature features as data (issue 30, point 7): traits, actions, attack riders, extra
damage and uses on compendium entries and roster creatures; the ``zonekeep_features``
hook; what is automated and what the GM adjudicates, and why."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zonekeep.sdk import (
    Action,
    Attack,
    Creature,
    FeatureSpec,
    OnHit,
    Refusal,
    Trait,
    Uses,
    creature_from_dict,
    hookimpl,
    parse_compendium_source,
)
from zonekeep.sdk.engine import Engine, PluginLoadError
from zonekeep.sdk.host import CompendiumError, creature_to_dict, entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def _entry(**extra: Any) -> dict[str, Any]:
    return {
        "id": "wolfish",
        "name": "Wolfish",
        "size": "Medium",
        "type": "beast",
        "ac": 13,
        "hp": {"average": 11, "dice": "2d8+2"},
        "speeds": {"walk": 40},
        "abilities": {"str": 1, "dex": 2, "con": 1, "int": -4, "wis": 1, "cha": -2},
        "passive_perception": 11,
        "challenge": 0.25,
        "attacks": [
            {
                "name": "bite",
                "kind": "melee",
                "bonus": 4,
                "damage": "2d4+2",
                "damage_type": "piercing",
                "on_hit": [
                    {
                        "id": "save-or-condition",
                        "params": {"ability": "str", "dc": 11, "condition": "prone"},
                    }
                ],
            }
        ],
        **extra,
    }


def _source(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"name": "test", "title": "Test", "entries": list(entries)}


class Features:
    """A plugin implementing a trait, an action and a rider, with params schemas."""

    @hookimpl
    def zonekeep_features(self) -> list[FeatureSpec]:
        return [
            FeatureSpec("hive-tactics", "trait", doc="advantage with an ally engaged"),
            FeatureSpec(
                "spit",
                "action",
                {
                    "type": "object",
                    "required": ["damage"],
                    "properties": {"damage": {"type": "string", "format": "dice"}},
                },
            ),
            FeatureSpec(
                "knock-down",
                "on_hit",
                {
                    "type": "object",
                    "required": ["ability", "dc", "condition"],
                    "properties": {"dc": {"type": "integer", "minimum": 1, "maximum": 30}},
                },
            ),
        ]


# -- the data ------------------------------------------------------------------------------


def test_a_plain_string_trait_still_loads_as_a_gm_adjudicated_trait() -> None:
    source = parse_compendium_source(
        _source(_entry(traits=["Keen Hearing and Smell. Advantage on checks that hear or smell."]))
    )
    (trait,) = source.entries[0].traits
    assert trait == Trait(
        id="gm",
        name="Keen Hearing and Smell",
        text="Keen Hearing and Smell. Advantage on checks that hear or smell.",
        gm="written as a sentence, without structured data",
    )


def test_the_srd_data_has_no_trait_left_as_a_sentence() -> None:
    """The SRD creatures (the ``zonekeep.srd`` plugin's file) carry structured features:
    no trait there loads as a sentence, and every one has a name and a text."""
    from zonekeep.plugins.srd import DATA
    from zonekeep.sdk.host import load_compendium_file

    source = load_compendium_file(DATA)
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    assert all(isinstance(t, dict) for e in raw["entries"] for t in e.get("traits", ()))
    features: list[Trait | Action] = [*(t for e in source.entries for t in e.traits)]
    features += [a for e in source.entries for a in e.actions]
    assert len(features) > 300
    assert all(f.name and f.text for f in features)
    assert not [f for f in features if f.gm == "written as a sentence, without structured data"]


def test_structured_features_load_onto_entries_and_their_creatures() -> None:
    source = parse_compendium_source(
        _source(
            _entry(
                traits=[{"id": "hive-tactics", "name": "Hive Tactics", "text": "Ally near."}],
                actions=[
                    {
                        "id": "spit",
                        "name": "Fire Breath",
                        "kind": "action",
                        "uses": {"recharge": 5},
                        "params": {"damage": "7d6"},
                    },
                    {
                        "id": "gm",
                        "name": "Howl",
                        "kind": "bonus_action",
                        "uses": {"per": "day", "count": 3},
                        "gm": "it frightens by the GM's word",
                    },
                ],
                damage_resistances_nonmagical=["bludgeoning", "piercing", "slashing"],
            )
        )
    )
    entry = source.entries[0]
    (wolf,) = entry_creatures(entry)
    assert wolf.traits == entry.traits
    assert wolf.actions == entry.actions
    assert wolf.resources == {"spit": 1, "gm-howl": 3}
    assert wolf.abilities == {"str": 1, "dex": 2, "con": 1, "int": -4, "wis": 1, "cha": -2}
    assert wolf.proficiency == 2
    assert wolf.damage_resistances_nonmagical == ["bludgeoning", "piercing", "slashing"]
    assert wolf.attacks[0].on_hit == (
        OnHit("save-or-condition", {"ability": "str", "dc": 11, "condition": "prone"}),
    )
    assert wolf.attacks[0].magical is False


def test_a_roster_creature_spells_out_features_and_round_trips() -> None:
    data = {
        "id": "w",
        "name": "W",
        "side": "wolves",
        "abilities": {"str": 3},
        "proficiency": 3,
        "traits": [{"id": "hive-tactics", "name": "Hive Tactics"}],
        "actions": [{"id": "gm", "name": "Bark", "gm": "flavour", "uses": {"charges": 2}}],
        "attacks": [
            {
                "name": "bite",
                "magical": True,
                "extra_damage": [{"damage": "1d6", "damage_type": "acid"}],
            }
        ],
    }
    creature = creature_from_dict(data)
    assert creature.resources == {"gm-bark": 2}
    assert creature.attacks[0].extra_damage[0].damage_type == "acid"
    assert creature_from_dict(creature_to_dict(creature)) == creature


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"traits": [{"id": "Pack", "name": "P"}]}, "test.entries[0].traits[0].id: 'Pack' must"),
        (
            {"traits": [{"id": "p", "name": " "}]},
            "test.entries[0].traits[0].name: must not be empty",
        ),
        ({"traits": [7]}, "test.entries[0].traits[0]: a trait is an object"),
        (
            {"actions": [{"id": "a", "name": "A", "uses": {"recharge": 5, "charges": 2}}]},
            "test.entries[0].actions[0].uses: give exactly one of recharge, per with count, "
            "or charges (not recharge and charges)",
        ),
        (
            {"actions": [{"id": "a", "name": "A", "uses": {"per": "day"}}]},
            "test.entries[0].actions[0].uses: per and count go together",
        ),
        (
            {"actions": [{"id": "a", "name": "A", "uses": {"recharge": 7}}]},
            "test.entries[0].actions[0].uses.recharge: 7 is outside 2 to 6",
        ),
        (
            {"actions": [{"id": "a", "name": "A", "kind": "free"}]},
            "test.entries[0].actions[0].kind",
        ),
        (
            {"actions": [{"id": "a", "name": "A", "automated": True}]},
            "test.entries[0].actions[0].automated: the server fills it in; leave it out",
        ),
        (
            {
                "actions": [
                    {"id": "a", "name": "A", "uses": {"charges": 1}},
                    {"id": "a", "name": "B", "uses": {"charges": 1}},
                ]
            },
            "test.entries[0].actions[1]: its uses are counted as 'a'",
        ),
        (
            {"damage_immunities_nonmagical": ["wood"]},
            "test.entries[0].damage_immunities_nonmagical: 'wood' is not a damage type",
        ),
    ],
)
def test_bad_feature_data_is_refused_naming_the_path(extra: dict[str, Any], problem: str) -> None:
    with pytest.raises(CompendiumError) as caught:
        parse_compendium_source(_source(_entry(**extra)), "test")
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems


def test_bad_extra_damage_on_a_roster_attack_is_refused() -> None:
    with pytest.raises(ValueError, match=r"c\.attacks\[0\]\.extra_damage\[0\]\.damage_type"):
        creature_from_dict(
            {
                "id": "c",
                "name": "C",
                "side": "x",
                "attacks": [{"name": "a", "extra_damage": [{"damage": "1d6", "damage_type": "x"}]}],
            },
            "c",
        )


# -- automated, or the GM adjudicates ---------------------------------------------------------


def _wolf() -> Creature:
    return Creature(
        "w",
        "Wolf",
        "wolves",
        traits=(
            Trait("hive-tactics", "Hive Tactics", "text"),
            Trait("tremor-sense", "Tremor Sense", "nobody implements it"),
            Trait("gm", "False Appearance", "looks like a rock", gm="the GM decides"),
        ),
        actions=(Action("spit", "Fire Breath", params={"damage": "7d6"}, uses=Uses(recharge=5)),),
        attacks=[
            Attack(
                "bite",
                on_hit=(OnHit("knock-down", {"ability": "str", "dc": 11, "condition": "prone"}),),
            )
        ],
    )


def test_the_snapshot_view_marks_each_feature_automated_or_gm_with_the_reason() -> None:
    h = EncounterHarness([_wolf()], extra_plugins=[Features()])
    view = h.creature_view("w")
    traits = [(t["id"], t["automated"], t["gm"]) for t in view["traits"]]
    assert traits == [
        ("hive-tactics", True, None),
        ("tremor-sense", False, "no installed plugin implements it"),
        ("gm", False, "the GM decides"),
    ]
    assert [(a["id"], a["automated"], a["gm"]) for a in view["actions"]] == [("spit", True, None)]
    rider = view["attacks"][0]["on_hit"][0]
    assert (rider["automated"], rider["gm"]) == (True, None)
    # The state itself keeps the data only: the view fills in the status.
    assert h.creature("w").traits[0].automated is None


def test_without_the_plugin_every_feature_is_shown_as_gm_adjudicated() -> None:
    h = EncounterHarness([_wolf()])
    view = h.creature_view("w")
    assert [t["automated"] for t in view["traits"]] == [False, False, False]
    assert view["traits"][0]["gm"] == "no installed plugin implements it"
    assert view["traits"][0]["text"] == "text"  # never dropped: the GM reads it
    assert view["actions"][0]["gm"] == "no installed plugin implements it"


def test_params_breaking_the_declared_schema_refuse_the_encounter_naming_the_path() -> None:
    bad = Creature(
        "w",
        "Wolf",
        "wolves",
        actions=(Action("spit", "Fire Breath", params={"damage": "lots"}),),
    )
    engine = Engine(_plugins_with(Features()))
    with pytest.raises(Refusal) as caught:
        engine.create("e", [Creature("a", "A", "party"), bad])
    assert caught.value.code == "invalid_params"
    assert "creatures[1].actions[0].params.damage" in caught.value.message


def _plugins_with(*extra: object) -> list[object]:
    from zonekeep.sdk.engine import load_default_plugins

    return [*load_default_plugins(), *extra]


class _Twice:
    @hookimpl
    def zonekeep_features(self) -> list[FeatureSpec]:
        return [FeatureSpec("hive-tactics", "trait")]


class _BadSchema:
    @hookimpl
    def zonekeep_features(self) -> list[FeatureSpec]:
        return [FeatureSpec("odd", "trait", {"type": "object", "pattern": "x"})]


@pytest.mark.parametrize(
    ("plugin", "problem"),
    [
        (_Twice(), "trait feature 'hive-tactics' is declared by both"),
        (_BadSchema(), "feature 'odd': params_schema: the keyword 'pattern' is not supported"),
    ],
)
def test_a_bad_feature_declaration_stops_the_engine(plugin: object, problem: str) -> None:
    with pytest.raises(PluginLoadError, match=problem):
        Engine(_plugins_with(Features(), plugin))
