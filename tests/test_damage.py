"""The damage pipeline (zonekeep.sdk.apply_damage, docs/plugins.md "zonekeep_modify_damage")
and condition immunity, with exact outcomes.

Aria (a PC, 1d6+2 slashing blade, +4) and a goblin (20 hp, AC 12) share one zone; Aria
acts first. The order under test: plugins (last registered first), then immunity,
then resistance (halved, rounded down, once), then vulnerability (doubled, once).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Attack,
    ConditionApplied,
    ConditionEffectApplied,
    ConditionPrevented,
    Damage,
    Damaged,
    DamageStep,
    OverrideApplied,
    PluginErrorRecorded,
    RuleContext,
    hookimpl,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def fight(*extra: object, **gob: Any) -> EncounterHarness:
    h = EncounterHarness([make("aria"), make("gob", "foes", **gob)], extra_plugins=list(extra))
    h.start(initiative=[15, 10])
    assert h.state.active == "aria"
    return h


def damaged(h: EncounterHarness, amount: int, damage_type: str = "") -> Damaged:
    params: dict[str, Any] = {"creature": "gob", "amount": amount}
    if damage_type:
        params["damage_type"] = damage_type
    (event, *_rest) = h.send("damage", **params)
    assert isinstance(event, Damaged)
    return event


# -- the creature's defences ---------------------------------------------------------------------


def test_resistance_halves_rounding_down_and_the_event_says_why() -> None:
    h = fight(damage_resistances=["fire"])
    event = damaged(h, 7, "fire")
    assert event == Damaged(
        "gob",
        3,
        17,
        "fire",
        None,
        "GM gm",
        raw=7,
        raw_type="fire",
        steps=(DamageStep("resistance", "damage resistance (fire)", 3, "fire"),),
    )
    assert h.creature("gob").hp == 17
    h.assert_replay_matches()


def test_vulnerability_doubles_and_immunity_takes_all() -> None:
    h = fight(damage_vulnerabilities=["bludgeoning"], damage_immunities=["poison"])
    assert damaged(h, 4, "bludgeoning").amount == 8
    immune = damaged(h, 9, "poison")
    assert (immune.amount, immune.hp, immune.raw) == (0, 12, 9)
    assert immune.steps == (DamageStep("immunity", "damage immunity (poison)", 0, "poison"),)
    assert h.creature("gob").hp == 12
    h.assert_replay_matches()


def test_other_types_and_untyped_damage_are_not_resisted() -> None:
    h = fight(damage_resistances=["fire", "cold"])
    assert damaged(h, 5, "slashing").amount == 5
    plain = damaged(h, 5)
    assert (plain.amount, plain.damage_type, plain.steps) == (5, "", ())
    assert h.creature("gob").hp == 10


def test_resistance_then_vulnerability_each_once() -> None:
    # 5e: resistance and then vulnerability, after every other modifier: 9 -> 4 -> 8.
    h = fight(damage_resistances=["fire"], damage_vulnerabilities=["fire"])
    event = damaged(h, 9, "fire")
    assert [(s.kind, s.amount) for s in event.steps] == [("resistance", 4), ("vulnerability", 8)]
    assert event.amount == 8


def test_an_attack_deals_its_damage_type_through_the_pipeline() -> None:
    h = fight(damage_resistances=["slashing"])
    h.rolls(15, 5)  # hits AC 12; 1d6+2 = 7 slashing, resisted: 3
    events = h.send("attack", creature="aria", target="gob")
    (hit,) = [e for e in events if isinstance(e, Damaged)]
    assert (hit.raw, hit.amount, hit.damage_type, hit.hp) == (7, 3, "slashing", 17)
    h.assert_replay_matches()


def test_the_gm_damage_command_names_a_known_type() -> None:
    h = fight()
    refusal = h.refused("damage", creature="gob", amount=3, damage_type="hellfire")
    assert refusal.code == "invalid_params"
    assert "acid, bludgeoning, cold, fire" in refusal.message
    assert h.creature("gob").hp == 20


def test_damage_cut_to_nothing_does_not_drop_a_creature_already_at_zero() -> None:
    h = fight(damage_immunities=["fire"])
    h.send("override", creature="gob", field="hp", value=0)
    event = damaged(h, 10, "fire")
    assert event.amount == 0
    assert "defeated" not in h.creature("gob").conditions


# -- plugins in the pipeline -----------------------------------------------------------------------


class Ward:
    """Reduces fire by 3 (registered first: runs after later plugins)."""

    seen: list[tuple[int, str]] = []

    @staticmethod
    @hookimpl
    def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
        Ward.seen.append((damage.amount, damage.damage_type))
        if damage.damage_type == "fire":
            return damage.reduce(3, "fire ward")
        return None


class Hellfire:
    """Turns cold into fire and adds 2 (registered last: runs first)."""

    @staticmethod
    @hookimpl
    def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
        if damage.damage_type == "cold":
            return damage.convert("fire", "hellfire").add(2, "hellfire")
        return None


def test_plugins_run_in_hook_order_each_seeing_the_last_change_then_the_defences() -> None:
    Ward.seen = []
    h = fight(Ward, Hellfire, damage_resistances=["fire"])
    event = damaged(h, 10, "cold")
    # Hellfire (last registered) first: 10 cold -> fire -> 12; Ward: 12 fire -> 9;
    # then the goblin's fire resistance: 4.
    assert Ward.seen == [(12, "fire")]
    assert event.steps == (
        DamageStep("convert", "hellfire", 10, "fire"),
        DamageStep("add", "hellfire", 12, "fire"),
        DamageStep("reduce", "fire ward", 9, "fire"),
        DamageStep("resistance", "damage resistance (fire)", 4, "fire"),
    )
    assert (event.raw, event.raw_type, event.amount, event.damage_type) == (10, "cold", 4, "fire")
    h.assert_replay_matches()


class Potion:
    @staticmethod
    @hookimpl
    def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage:
        return damage.grant("resistance", "potion of fire resistance")


def test_a_granted_resistance_and_an_own_one_halve_once() -> None:
    h = fight(Potion, damage_resistances=["fire"])
    event = damaged(h, 10, "fire")
    assert event.amount == 5
    assert [s.kind for s in event.steps] == ["resistance"]
    h2 = fight(Potion)
    assert damaged(h2, 10, "fire").steps == (
        DamageStep("resistance", "potion of fire resistance", 5, "fire"),
    )


class Shield:
    @staticmethod
    @hookimpl
    def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage:
        return damage.cancel("force shield")


def test_cancelled_damage_is_recorded_and_skips_the_defences() -> None:
    h = fight(Shield, damage_vulnerabilities=["fire"])
    event = damaged(h, 6, "fire")
    assert (event.amount, event.hp, event.raw) == (0, 20, 6)
    assert event.steps == (DamageStep("cancel", "force shield", 0, "fire"),)


class Thief:
    """Answers about another creature: its answer is skipped."""

    @staticmethod
    @hookimpl
    def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage:
        return Damage("aria", 99, "fire")


def test_an_answer_about_another_target_is_skipped_and_reported() -> None:
    h = fight(Thief)
    events = h.send("damage", creature="gob", amount=4, damage_type="fire")
    assert [e.amount for e in events if isinstance(e, Damaged)] == [4]
    (error,) = [e for e in events if isinstance(e, PluginErrorRecorded)]
    assert error.hook == "zonekeep_modify_damage"
    assert h.creature("aria").hp == 20


def test_a_damage_cannot_be_negative() -> None:
    with pytest.raises(ValueError, match="at least 0"):
        Damage("gob", -1)
    assert Damage("gob", 3).reduce(10, "x").amount == 0


# -- condition immunity ----------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:2.1")
def test_the_gm_is_refused_a_condition_the_creature_is_immune_to() -> None:
    h = fight(condition_immunities=["poisoned"])
    refusal = h.refused("grant_condition", creature="gob", condition="poisoned")
    assert (refusal.code, refusal.message) == (
        "condition_immune",
        "Gob is immune to being poisoned; send force: true to overrule that.",
    )
    assert h.refused("apply_effect", creature="gob", condition="poisoned", rounds=2).code == (
        "condition_immune"
    )
    assert h.creature("gob").conditions == []
    assert h.state.condition_effects == {}


@pytest.mark.rule("arena.txt:2.1")
def test_the_gm_overrules_an_immunity_explicitly_and_the_event_records_it() -> None:
    h = fight(condition_immunities=["poisoned"])
    events = h.send("grant_condition", creature="gob", condition="poisoned", force=True)
    assert events == (ConditionApplied("gob", "poisoned", "GM override by gm", True),)
    assert h.creature("gob").conditions == ["poisoned"]
    # force on a condition the creature is not immune to is a plain grant
    events = h.send("grant_condition", creature="gob", condition="prone", force=True)
    assert events == (ConditionApplied("gob", "prone", "GM override by gm", False),)
    h.assert_replay_matches()


def test_a_timed_effect_overrules_an_immunity_only_with_force() -> None:
    h = fight(condition_immunities=["frightened"])
    events = h.send("apply_effect", creature="gob", condition="frightened", rounds=1, force=True)
    (applied,) = [e for e in events if isinstance(e, ConditionEffectApplied)]
    assert (applied.effect.creature, applied.effect.condition, applied.override) == (
        "gob",
        "frightened",
        True,
    )
    assert h.creature("gob").conditions == ["frightened"]
    h.assert_replay_matches()


def test_the_gm_overrides_a_creatures_condition_immunities() -> None:
    h = fight(condition_immunities=["poisoned"])
    events = h.send("override", creature="gob", field="condition_immunities", value=[])
    assert events == (OverrideApplied("gm", "gob", "condition_immunities", []),)
    h.send("grant_condition", creature="gob", condition="poisoned")
    assert h.creature("gob").conditions == ["poisoned"]
    h.send("override", creature="gob", field="condition_immunities", value=["prone", " prone"])
    assert h.creature("gob").condition_immunities == ["prone"]
    for bad in (["", "x"], [3], ["x"] * 51, "prone"):
        refusal = h.refused("override", creature="gob", field="condition_immunities", value=bad)
        assert refusal.code == "invalid_params"
    h.assert_replay_matches()


def test_a_rule_giving_an_immune_creature_a_condition_does_not_apply_it() -> None:
    h = fight(condition_immunities=["poisoned"])
    h.rolls(3, 4)  # the goblin's Con save fails (3 + 0 < 13); 1d6 = 4 poison
    events = h.send(
        "area_effect",
        creature="aria",
        zone="field",
        shape="sphere",
        size=5,
        range=0,
        targets=["gob"],
        save="con",
        dc=13,
        damage="1d6",
        damage_type="poison",
        conditions=["poisoned"],
        name="Stinking cloud",
    )
    assert ConditionPrevented("gob", "poisoned", "Stinking cloud") in events
    assert not [e for e in events if isinstance(e, ConditionApplied)]
    assert "poisoned" not in h.creature("gob").conditions
    h.assert_replay_matches()


def test_a_compendium_entrys_defences_reach_the_creature() -> None:
    srd = srd_plugin.srd_source()
    entry = next(e for e in srd.entries if e.id == "skeleton")
    (skeleton,) = entry_creatures(entry)
    assert skeleton.damage_vulnerabilities == ["bludgeoning"]
    assert skeleton.damage_immunities == ["poison"]
    assert skeleton.condition_immunities == ["exhaustion", "poisoned"]


def test_a_roster_creature_with_an_unknown_damage_type_is_refused() -> None:
    from zonekeep.sdk import creature_from_dict

    with pytest.raises(ValueError, match=r"creatures\[0\]\.damage_resistances: 'hellfire'"):
        creature_from_dict(
            {"id": "imp", "name": "Imp", "side": "foes", "damage_resistances": ["hellfire"]},
            "creatures[0]",
        )
    good = creature_from_dict(
        {"id": "imp", "name": "Imp", "side": "foes", "damage_resistances": ["fire"]}
    )
    assert good.damage_resistances == ["fire"]
    with pytest.raises(ValueError, match=r"imp\.attacks\[0\]\.damage_type: 'hellfire'"):
        creature_from_dict(
            {"id": "imp", "name": "Imp", "side": "foes",
             "attacks": [{"name": "sting", "damage_type": "hellfire"}]},
            "imp",
        )  # fmt: skip
    assert Attack("x").damage_type == ""


def test_the_web_tables_damage_types_are_the_sdks() -> None:
    import json
    import re
    from pathlib import Path

    from zonekeep.sdk import DAMAGE_TYPES

    source = (Path(__file__).parent.parent / "server" / "static" / "table.js").read_text()
    found = re.search(r"const DAMAGE_TYPES = (\[[^\]]*\]);", source)
    assert found is not None
    assert tuple(json.loads(found.group(1))) == DAMAGE_TYPES
