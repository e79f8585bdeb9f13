"""The wildfire plugin, tested in-process with zonekeep's harness: no server, no sockets.

The arena is the plugin's own forge (zonekeep_wildfire/forge.json): the forge, with a
brazier that sets the woodshed beside it burning (DC 13), the woodshed, with a slick of
lamp oil (2d6), and the yard. Every die is scripted, in the order it is rolled.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import zonekeep_hazards as hazards
import zonekeep_wildfire as wildfire

from zonekeep.sdk import (
    ArenaError,
    Attack,
    ConditionEffectEnded,
    ConditionPrevented,
    ConditionRemoved,
    Creature,
    Damaged,
    EncounterOptions,
    Refusal,
    SaveMade,
    load_arena,
    parse_arena,
)
from zonekeep.sdk.testing import EncounterHarness

FORGE = load_arena(wildfire.ARENA_FILE)
FORGE_DOC: dict[str, Any] = json.loads(wildfire.ARENA_FILE.read_text(encoding="utf-8"))
BURNING = "wildfire.burning"
SOAKED = "wildfire.soaked"


def creature(cid: str, zone: str, side: str = "foes", **kw: Any) -> Creature:
    kw.setdefault("attacks", [Attack("fist", bonus=5, damage="1d4")])
    return Creature(cid, cid.capitalize(), side, zone=zone, hp=30, max_hp=30, **kw)


def forge(
    *creatures: Creature, initiative: list[int], options: EncounterOptions | None = None
) -> EncounterHarness:
    h = EncounterHarness(list(creatures), arena=FORGE, extra_plugins=[wildfire], options=options)
    h.start(initiative=initiative)
    return h


def aria(zone: str = "forge") -> Creature:
    return creature("aria", zone, "party", controller="alice")


def fire(h: EncounterHarness) -> list[tuple[str, int]]:
    """Every instance of fire damage so far: (creature, amount)."""
    return [(d.creature, d.amount) for d in h.of_type(Damaged) if d.damage_type == "fire"]


def payloads(h: EncounterHarness, type: str) -> list[dict[str, Any]]:
    return [dict(e.data) for e in h.plugin_events(type)]


# -- braziers, plugin state, custom events -------------------------------------------------------


def test_kicking_the_brazier_sets_the_zone_beside_it_burning() -> None:
    h = forge(
        aria(), creature("gob", "woodshed"), creature("orc", "woodshed"), initiative=[15, 10, 5]
    )
    assert h.state.active == "aria"
    # The goblin fails its DC 13 Dexterity save (4), the orc makes it (13).
    h.rolls(4, 13).send(
        "kick_brazier", h.player("alice"), creature="aria", brazier="hearth_brazier"
    )
    assert payloads(h, "brazier_kicked") == [
        {"brazier": "hearth_brazier", "creature": "aria", "zone": "woodshed"}
    ]
    saves = [(s.creature, s.dc, s.success) for s in h.of_type(SaveMade)]
    assert saves == [("gob", 13, False), ("orc", 13, True)]
    assert h.creature("gob").conditions == [BURNING]
    assert h.creature("orc").conditions == []
    assert h.plugin_state("wildfire") == {
        "kicked": ["hearth_brazier"],
        "ignited": [],
        "embers": {"woodshed": "hearth_brazier"},
    }
    h.assert_replay_matches()


def test_a_brazier_is_kicked_once_and_only_from_its_zone() -> None:
    h = forge(aria(), creature("gob", "yard"), initiative=[15, 10])
    h.send("kick_brazier", creature="aria", brazier="hearth_brazier")
    h.end_turn()
    # The goblin in the yard has no brazier in reach: the action is not even offered.
    refusal = h.refused("kick_brazier", creature="gob", brazier="hearth_brazier")
    assert (refusal.code, refusal.message) == (
        "no_brazier",
        "There is no brazier standing in Gob's zone.",
    )
    h.end_turn()
    # Aria's next turn: the brazier is on the floor, so none stands in the forge.
    assert h.refused("kick_brazier", creature="aria", brazier="hearth_brazier").code == (
        "no_brazier"
    )
    assert len(h.plugin_events("brazier_kicked")) == 1


def test_the_soaked_and_the_immune_do_not_catch_fire() -> None:
    h = forge(
        aria(),
        creature("wet", "woodshed", conditions=[SOAKED]),
        creature("mephit", "woodshed", condition_immunities=[BURNING]),
        initiative=[15, 10, 5],
    )
    h.rolls(1).send("kick_brazier", creature="aria", brazier="hearth_brazier")
    # Only the mephit saves (the soaked one is not even asked); it fails, and is immune.
    assert [(s.creature, s.success) for s in h.of_type(SaveMade)] == [("mephit", False)]
    assert h.of_type(ConditionPrevented) == [
        ConditionPrevented("mephit", BURNING, "hearth_brazier")
    ]
    assert (h.creature("wet").conditions, h.creature("mephit").conditions) == ([SOAKED], [])


def test_kicking_something_that_is_not_a_brazier_is_refused() -> None:
    h = forge(aria(), creature("gob", "yard"), initiative=[15, 10])
    assert h.refused("kick_brazier", creature="aria", brazier="trough").code == "invalid_target"


# -- burning: a timed condition, fire damage, defences ----------------------------------------------


def test_burning_deals_fire_damage_halved_by_resistance_and_none_to_the_immune() -> None:
    h = forge(
        aria(),
        creature("gob", "woodshed"),
        creature("orc", "woodshed", damage_resistances=["fire"]),
        creature("salamander", "woodshed", damage_immunities=["fire"]),
        initiative=[20, 15, 10, 5],
    )
    h.rolls(1, 1, 1).send("kick_brazier", creature="aria", brazier="hearth_brazier")  # all fail
    assert all(h.creature(c).has(BURNING) for c in ("gob", "orc", "salamander"))
    h.rolls(5).end_turn()  # the goblin's turn starts: 5 fire
    h.rolls(5).end_turn()  # the orc's: 5, halved by resistance
    h.rolls(5).end_turn()  # the salamander's: 5, none by immunity
    assert fire(h) == [("gob", 5), ("orc", 2), ("salamander", 0)]
    assert [h.creature(c).hp for c in ("gob", "orc", "salamander")] == [25, 28, 30]
    orc = h.of_type(Damaged)[1]
    assert (orc.raw, orc.raw_type, [s.kind for s in orc.steps]) == (5, "fire", ["resistance"])
    h.assert_replay_matches()


def test_burning_runs_out_after_three_rounds_with_a_readable_event() -> None:
    h = forge(aria(), creature("gob", "woodshed"), initiative=[15, 10])
    h.rolls(1).send("kick_brazier", creature="aria", brazier="hearth_brazier")  # round 1
    for _ in range(3):
        h.rolls(2).end_turn()  # the goblin's turn starts: 2 fire
        h.end_turn()  # the round ends; the goblin burned in rounds 1, 2 and 3
    assert fire(h) == [("gob", 2)] * 3
    assert not h.creature("gob").has(BURNING)
    ended = h.of_type(ConditionEffectEnded)[-1]
    assert (ended.creature, ended.condition, ended.expired) == ("gob", BURNING, True)
    assert payloads(h, "burned_out") == [{"creature": "gob"}]
    h.rolls(6).end_turn()
    assert fire(h) == [("gob", 2)] * 3  # no more burning in round 4
    h.assert_replay_matches()


def test_burning_lasts_the_encounters_rounds_with_its_die() -> None:
    options = EncounterOptions(settings={"wildfire": {"burn_die": "1d10", "burn_rounds": 1}})
    h = forge(aria(), creature("gob", "woodshed"), initiative=[15, 10], options=options)
    assert h.state.options.settings["wildfire"] == {"burn_die": "1d10", "burn_rounds": 1, "soak": 2}
    h.rolls(1).send("kick_brazier", creature="aria", brazier="hearth_brazier")
    h.rolls(9).end_turn()  # 1d10 = 9
    h.end_turn()  # round 1 ends, and so does burning
    burn = h.of_type(Damaged)[-1]
    assert (burn.amount, burn.roll.expr if burn.roll else None) == (9, "1d10")
    assert not h.creature("gob").has(BURNING)
    assert payloads(h, "burned_out") == [{"creature": "gob"}]
    h.assert_replay_matches()  # the encounter_created event keeps the settings


# -- douse: a command with `requires`; soaked: the damage pipeline ------------------------------


def test_douse_is_offered_only_to_a_burning_creature() -> None:
    h = forge(aria(), creature("gob", "forge"), initiative=[15, 10])
    refusal = h.refused("douse", creature="aria")
    assert (refusal.code, refusal.message) == ("not_burning", "Aria is not on fire.")
    offered = h.engine.available_actions(h.state, "aria", h.player("alice"))
    assert "wildfire.douse" not in offered
    h.send("grant_condition", creature="aria", condition="burning")  # the only "burning" here
    assert "wildfire.douse" in h.engine.available_actions(h.state, "aria", h.player("alice"))


def test_dousing_puts_the_flames_out_and_soaks_the_creature() -> None:
    h = forge(
        aria(), creature("gob", "woodshed"), creature("orc", "woodshed"), initiative=[20, 15, 10]
    )
    h.rolls(1, 1).send("kick_brazier", creature="aria", brazier="hearth_brazier")
    h.rolls(3).end_turn()  # the goblin burns for 3 ...
    h.send("douse", creature="gob")  # ... and spends its action to put it out
    assert ConditionRemoved("gob", BURNING, "doused") in h.events
    assert h.creature("gob").conditions == [SOAKED]
    assert h.refused("douse", creature="gob").code == "not_burning"
    assert payloads(h, "burned_out") == []  # doused, not burned out
    # Soaked: it cannot catch fire, and fire hurts it 2 less (before resistance).
    h.send("damage", creature="gob", amount=5, damage_type="fire")
    soaked = h.of_type(Damaged)[-1]
    assert (soaked.amount, [(s.kind, s.source) for s in soaked.steps]) == (
        3,
        [("reduce", "soaked")],
    )
    h.rolls(4).end_turn()  # the orc's turn starts: it burns for 4
    h.end_turn()  # round 2: Aria
    h.end_turn()  # the goblin's second turn: not burning, still soaked ...
    assert h.creature("gob").conditions == [SOAKED]
    h.rolls(1).end_turn()  # ... until it ends (and the orc burns again)
    assert h.creature("gob").conditions == []
    assert fire(h) == [("gob", 3), ("gob", 3), ("orc", 4), ("orc", 1)]
    h.assert_replay_matches()


def test_soaked_fire_damage_is_reduced_before_resistance_halves_it() -> None:
    h = forge(
        aria(),
        creature("orc", "forge", damage_resistances=["fire"], conditions=[SOAKED]),
        initiative=[15, 10],
    )
    h.send("damage", creature="orc", amount=9, damage_type="fire")
    hit = h.of_type(Damaged)[-1]
    assert (hit.amount, [s.kind for s in hit.steps]) == (3, ["reduce", "resistance"])  # (9-2)//2


# -- oil slicks: the zone-entered hook ----------------------------------------------------------------


def test_a_burning_creature_walking_into_the_oil_sets_it_alight_once() -> None:
    h = forge(
        creature("gob", "forge", conditions=[BURNING]),
        aria("woodshed"),
        creature("imp", "woodshed", damage_immunities=["fire"]),
        # The goblin's first turn starts at once: it burns for 2 (the roster's burning
        # has no duration: it lasts until removed).
        initiative=[20, 15, 10, 2],
    )
    h.rolls(3, 4).send("enter", creature="gob", zones=["woodshed"])  # into the oil: 2d6 = 7
    assert payloads(h, "slick_ignited") == [
        {"slick": "lamp_oil", "creature": "gob", "zone": "woodshed"}
    ]
    assert fire(h)[-3:] == [("gob", 7), ("aria", 7), ("imp", 0)]
    assert h.plugin_state("wildfire")["ignited"] == ["lamp_oil"]
    assert h.plugin_state("wildfire")["embers"] == {"woodshed": "lamp_oil"}
    # The slick has burned: going out and back in (the GM moving it) sets nothing alight.
    h.send("move_to_zone", creature="gob", zone="forge")
    h.send("move_to_zone", creature="gob", zone="woodshed")
    assert len(h.plugin_events("slick_ignited")) == 1
    assert fire(h) == [("gob", 2), ("gob", 7), ("aria", 7), ("imp", 0)]
    h.assert_replay_matches()


def test_a_creature_that_is_not_burning_walks_through_the_oil_safely() -> None:
    h = forge(creature("gob", "forge"), aria("woodshed"), initiative=[20, 15])
    h.send("enter", creature="gob", zones=["woodshed"])
    assert payloads(h, "slick_ignited") == []
    assert fire(h) == []


# -- embers: GM-only state, a GM command ----------------------------------------------------------


def test_the_gm_rekindles_the_embers_a_fire_left() -> None:
    h = forge(aria(), creature("gob", "woodshed"), initiative=[15, 10])
    assert h.refused("rekindle", zone="woodshed").code == "no_embers"
    h.rolls(20).send("kick_brazier", creature="aria", brazier="hearth_brazier")  # the goblin saves
    assert not h.creature("gob").has(BURNING)
    h.rolls(3).send("rekindle", zone="woodshed")  # DC 12: 3 fails
    assert h.creature("gob").has(BURNING)
    assert h.plugin_state("wildfire")["embers"] == {}
    assert payloads(h, "embers_rekindled") == [{"zone": "woodshed"}]
    h.assert_replay_matches()


def test_its_state_and_events_declare_who_sees_them() -> None:
    h = forge(aria(), creature("gob", "woodshed"), initiative=[15, 10])
    catalog = h.engine.catalog
    pieces = {(s.key, s.visibility) for s in catalog.state["wildfire"].values()}
    assert pieces == {("kicked", "everyone"), ("ignited", "everyone"), ("embers", "gm")}
    kinds = {
        full: entry.spec.visibility
        for full, entry in catalog.events.items()
        if entry.namespace == "wildfire"
    }
    assert kinds == {
        "wildfire.brazier_kicked": "everyone",
        "wildfire.slick_ignited": "everyone",
        "wildfire.burned_out": "everyone",
        "wildfire.embers_left": "gm",
        "wildfire.embers_rekindled": "gm",
    }


# -- attacks: zonekeep_attack_made --------------------------------------------------------------------


def test_a_critical_hit_with_a_fire_attack_sets_the_target_burning() -> None:
    torch = Attack("torch", bonus=4, damage="1d4", damage_type="fire")
    h = forge(
        creature("aria", "forge", "party", attacks=[torch]),
        creature("gob", "forge"),
        initiative=[15, 10],
    )
    h.rolls(20, 2, 3).send("attack", creature="aria", target="gob", attack="torch")  # crit: 2d4
    assert fire(h) == [("gob", 5)]
    assert h.creature("gob").has(BURNING)
    h.send("remove_condition", creature="gob", condition="burning")
    h.end_turn()
    h.end_turn()  # Aria's next turn: a plain hit (15 + 4) does not set it alight
    h.rolls(15, 3).send("attack", creature="aria", target="gob", attack="torch")
    assert fire(h) == [("gob", 5), ("gob", 3)]
    assert h.creature("gob").conditions == []


# -- an observer: zonekeep_event_applied -------------------------------------------------------------


def test_the_observer_logs_every_instance_of_fire_damage(caplog: pytest.LogCaptureFixture) -> None:
    h = forge(aria(), creature("gob", "woodshed"), initiative=[15, 10])
    h.rolls(1).send("kick_brazier", creature="aria", brazier="hearth_brazier")
    with caplog.at_level(logging.INFO, logger="zonekeep_wildfire"):
        h.rolls(4).end_turn()
        h.send("damage", creature="gob", amount=3)  # untyped: not fire
    assert [r.getMessage() for r in caplog.records if r.name == "zonekeep_wildfire"] == [
        "encounter test: gob takes 4 fire damage (wildfire.burning), 26 hp left"
    ]


# -- asset data ------------------------------------------------------------------------------------


def test_the_arena_loader_checks_the_assets_data() -> None:
    engine = EncounterHarness([aria()], extra_plugins=[wildfire]).engine
    arena = parse_arena(FORGE_DOC, "forge", asset_tags=engine.asset_tags)
    assert arena.asset("hearth_brazier").data == {"ignites": "woodshed", "dc": 13}
    bad = dict(FORGE_DOC)
    bad["assets"] = [
        dict(a, data={"dc": "high"}) if a["id"] == "hearth_brazier" else a
        for a in FORGE_DOC["assets"]
    ]
    with pytest.raises(ArenaError) as caught:
        parse_arena(bad, "forge", asset_tags=engine.asset_tags)
    assert sorted(str(p) for p in caught.value.problems) == [
        'assets[0].data.dc: expected an integer, got string "high"',
        "assets[0].data.ignites: required field is missing",
    ]


def test_the_plugin_contributes_its_arena() -> None:
    (arena,) = wildfire.zonekeep_arenas()
    assert arena == FORGE_DOC and arena["id"] == "forge"


# -- namespaced ids: installed beside hazards, which declares a "burning" too -------------------------


def test_beside_hazards_the_short_name_burning_is_ambiguous_and_full_ids_work() -> None:
    h = EncounterHarness(
        [aria(), creature("gob", "woodshed")], arena=FORGE, extra_plugins=[hazards, wildfire]
    )
    h.start(initiative=[15, 10])
    assert {"hazards.burning", "wildfire.burning"} <= set(h.engine.conditions)
    refusal = h.refused("grant_condition", creature="gob", condition="burning")
    assert refusal.code == "ambiguous_id"
    assert refusal.message == (
        "The condition 'burning' is ambiguous: it could be 'hazards.burning' and "
        "'wildfire.burning'; use the full id."
    )
    h.send("grant_condition", creature="gob", condition="wildfire.burning")
    assert h.creature("gob").conditions == ["wildfire.burning"]
    # Short names nobody else declares still work; the settings stay apart, by plugin.
    h.send("kick_brazier", creature="aria", brazier="hearth_brazier")  # the goblin burns already
    assert h.state.options.settings["wildfire"]["burn_die"] == "1d6"
    assert h.state.options.settings["hazards"]["burn_dc"] == 10
    h.rolls(2).end_turn()  # only wildfire's burning hurts the goblin
    assert fire(h) == [("gob", 2)]
    h.send("hazards.ignite", creature="gob")
    assert h.creature("gob").conditions == ["hazards.burning", "wildfire.burning"]
    h.assert_replay_matches()


def test_an_arena_naming_the_short_condition_is_refused_beside_hazards() -> None:
    with pytest.raises(Refusal) as caught:
        EncounterHarness(
            [creature("gob", "forge", conditions=["burning"])],
            arena=FORGE,
            extra_plugins=[hazards, wildfire],
        )
    assert caught.value.code == "ambiguous_id"


def test_a_whole_fight_replays_to_the_same_state() -> None:
    h = forge(
        aria(),
        creature("gob", "woodshed"),
        creature("orc", "woodshed", damage_resistances=["fire"]),
        initiative=[20, 15, 10],
    )
    h.rolls(2, 2).send("kick_brazier", creature="aria", brazier="hearth_brazier")  # both catch
    h.rolls(3).end_turn()  # the goblin burns for 3 ...
    h.send("douse", creature="gob")  # ... and douses itself
    h.rolls(4).end_turn()  # the orc burns for 4, halved ...
    h.send("enter", creature="orc", zones=["yard"])  # ... and steps out into the yard
    h.end_turn()  # round 2: Aria
    h.end_turn()  # the goblin, soaked until this turn ends
    h.rolls(5).end_turn()  # the orc burns for 5, halved ...
    h.rolls(3, 3).send("enter", creature="orc", zones=["woodshed"])  # ... and lights the oil: 6
    h.rolls(15).send("rekindle", zone="woodshed")  # the goblin saves (15 >= 12)
    assert fire(h) == [("gob", 3), ("orc", 2), ("orc", 2), ("gob", 6), ("orc", 3)]
    assert h.plugin_state("wildfire") == {
        "kicked": ["hearth_brazier"],
        "ignited": ["lamp_oil"],
        "embers": {},
    }
    replayed = h.replayed()
    assert replayed.plugin_state == h.state.plugin_state
    h.assert_replay_matches()
