"""The hazards plugin, tested in-process with zonekeep's harness: no server, no sockets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zonekeep_hazards as hazards

from zonekeep.sdk import (
    ArenaError,
    Attack,
    ConditionApplied,
    ConditionRemoved,
    Creature,
    Damaged,
    EncounterOptions,
    SaveMade,
    ZoneEntered,
    load_arena,
    parse_arena,
)
from zonekeep.sdk.testing import EncounterHarness

TAVERN_FILE = Path(__file__).resolve().parents[4] / "examples" / "arenas" / "tavern.json"
TAVERN = load_arena(TAVERN_FILE)
TAVERN_DOC: dict[str, Any] = json.loads(TAVERN_FILE.read_text(encoding="utf-8"))


def creature(cid: str, side: str, zone: str, **kw: Any) -> Creature:
    return Creature(
        cid, cid.capitalize(), side, zone=zone, hp=20, max_hp=20, attacks=[Attack("fist")], **kw
    )


def table(*creatures: Creature, rolls: list[int]) -> EncounterHarness:
    h = EncounterHarness(list(creatures), arena=TAVERN, extra_plugins=[hazards])
    h.start(initiative=rolls)
    return h


def test_a_collapsing_floor_drops_a_creature_that_fails_its_save() -> None:
    h = table(
        creature("aria", "party", "balcony"), creature("gob", "foes", "common_room"), rolls=[15, 10]
    )
    h.rolls(15).send("set_position", creature="aria", asset="rotten_boards")  # its own save: 15
    h.end_turn()
    h.rolls(5, 4).end_turn()  # round 1 ends: Aria's save 5 < 12, the floor gives way; 4 damage
    save = h.of_type(SaveMade)[-1]
    assert (save.creature, save.dc, save.success) == ("aria", 12, False)
    assert ZoneEntered("aria", "balcony", "common_room", 0, True, "rotten_boards") in h.events
    assert h.creature("aria").hp == 16
    assert h.creature("aria").has("prone")
    assert h.creature("aria").elements == []
    h.assert_replay_matches()


def test_a_collapsing_floor_holds_on_a_success() -> None:
    h = table(
        creature("aria", "party", "balcony"), creature("gob", "foes", "common_room"), rolls=[15, 10]
    )
    h.rolls(15).send("set_position", creature="aria", asset="rotten_boards")
    h.end_turn()
    h.rolls(12).end_turn()
    assert h.creature("aria").zone == "balcony"


def test_burning_hurts_each_turn_until_a_save_puts_it_out() -> None:
    h = table(
        creature("aria", "party", "common_room"),
        creature("gob", "foes", "common_room"),
        rolls=[15, 10],
    )
    h.send("ignite", creature="gob")
    assert h.refused("ignite", creature="gob").code == "invalid_params"
    h.rolls(3).end_turn()  # the goblin's turn starts: it burns for 3
    h.rolls(2).end_turn()  # its save at the end of its turn: 2 < 10, still burning
    h.rolls(4).end_turn()  # ... and aria's turn passes; the goblin burns again next turn
    burns = [e for e in h.of_type(Damaged) if e.damage_type == "fire"]
    assert [b.amount for b in burns] == [3, 4]
    assert h.creature("gob").hp == 20 - 7
    assert ConditionApplied("gob", "hazards.burning", "set alight") in h.events


def test_burning_ends_on_a_successful_save() -> None:
    h = table(
        creature("gob", "foes", "common_room"),
        creature("aria", "party", "common_room"),
        rolls=[15, 10],
    )
    h.send("ignite", creature="gob")
    h.rolls(10).end_turn()  # the goblin ends its turn: DEX save 10 >= 10
    assert ConditionRemoved("gob", "hazards.burning", "put out") in h.events
    assert not h.creature("gob").has("hazards.burning")


def test_shoving_into_a_hazard_uses_forced_movement_and_the_assets_save() -> None:
    h = table(
        creature("ogre", "foes", "kitchen", skills={"athletics": 5}, maneuver_dc=15),
        creature("aria", "party", "kitchen"),
        rolls=[15, 10],
    )
    # Ogre wins 18 to 4; Aria is forced into the kitchen fire and saves against the fire.
    h.rolls(13, 4, 2, 6, 6).send("shove_into", creature="ogre", target="aria", asset="kitchen_fire")
    assert h.creature("aria").elements == ["kitchen_fire"]
    assert any(isinstance(e, SaveMade) and e.creature == "aria" for e in h.events)
    assert h.refused("shove_into", creature="ogre", target="aria", asset="tables").code in (
        "invalid_target",
        "no_action_left",
    )


def test_a_tripwire_rings_the_alarm() -> None:
    h = table(
        creature("aria", "party", "kitchen"), creature("gob", "foes", "common_room"), rolls=[15, 10]
    )
    h.send("take_position", creature="aria", asset="cellar_door")
    assert "alarm" in h.state.hazards
    note = next(iter(h.state.notes.values()))
    assert note.text == "Aria set off Cellar trapdoor: the alarm rings!"


def test_its_ids_are_in_its_namespace_and_short_names_find_them() -> None:
    h = table(
        creature("aria", "party", "common_room"),
        creature("gob", "foes", "common_room"),
        rolls=[15, 10],
    )
    assert {"hazards.ignite", "hazards.shove_into"} <= set(h.engine.commands)
    assert "ignite" not in h.engine.commands
    assert {"hazards.burning"} <= set(h.engine.conditions)
    assert {"hazards.collapsing_floor", "hazards.tripwire"} <= set(h.engine.asset_tags)
    # The tavern's arena file says "collapsing_floor": the encounter holds the full id.
    floors = [a for a in h.state.arena.assets if "hazards.collapsing_floor" in a.tags]
    assert floors and not [a for a in h.state.arena.assets if "collapsing_floor" in a.tags]
    # The GM may name the condition short; the creature gets the full id.
    h.send("grant_condition", creature="aria", condition="burning")
    assert h.creature("aria").conditions == ["hazards.burning"]
    h.send("remove_condition", creature="aria", condition="burning")
    assert h.creature("aria").conditions == []
    # A full command id works as well as the short one.
    h.send("hazards.ignite", creature="gob")
    assert h.creature("gob").has("hazards.burning")


def test_a_roster_and_a_late_arrival_may_name_its_condition_short() -> None:
    burning = creature("gob", "foes", "common_room", conditions=["burning"])
    h = EncounterHarness(
        [creature("aria", "party", "common_room"), burning], arena=TAVERN, extra_plugins=[hazards]
    )
    assert h.creature("gob").conditions == ["hazards.burning"]
    h.send(
        "add_creature",
        creature={"id": "imp", "name": "Imp", "side": "foes", "conditions": ["burning", "prone"]},
    )
    assert h.creature("imp").conditions == ["hazards.burning", "prone"]
    h.assert_replay_matches()


def test_a_collapsing_floor_deals_the_fall_damage_its_data_gives() -> None:
    data = dict(TAVERN_DOC)
    data["assets"] = [
        dict(a, data={"fall_damage": "2d6"}) if a["id"] == "rotten_boards" else a
        for a in TAVERN_DOC["assets"]
    ]
    engine = EncounterHarness([creature("x", "party", "balcony")], extra_plugins=[hazards]).engine
    arena = parse_arena(data, "tavern", asset_tags=engine.asset_tags)
    assert arena.asset("rotten_boards").data == {"fall_damage": "2d6"}
    h = EncounterHarness(
        [creature("aria", "party", "balcony"), creature("gob", "foes", "common_room")],
        arena=arena,
        extra_plugins=[hazards],
    )
    h.start(initiative=[15, 10])
    h.rolls(15).send("set_position", creature="aria", asset="rotten_boards")
    h.end_turn()
    h.rolls(5, 3, 4).end_turn()  # the save fails (5 < 12); the fall: 2d6 = 3 + 4
    fall = h.of_type(Damaged)[-1]
    assert (fall.creature, fall.amount, fall.damage_type) == ("aria", 7, "bludgeoning")
    assert fall.roll is not None and fall.roll.expr == "2d6"


def test_a_collapsing_floors_data_is_checked_by_the_loader() -> None:
    data = dict(TAVERN_DOC)
    data["assets"] = [
        dict(a, data={"fall_damage": "a lot"}) if a["id"] == "rotten_boards" else a
        for a in TAVERN_DOC["assets"]
    ]
    engine = EncounterHarness([creature("x", "party", "balcony")], extra_plugins=[hazards]).engine
    index = next(i for i, a in enumerate(TAVERN_DOC["assets"]) if a["id"] == "rotten_boards")
    with pytest.raises(ArenaError) as caught:
        parse_arena(data, "tavern", asset_tags=engine.asset_tags)
    assert [str(p) for p in caught.value.problems] == [
        f'assets[{index}].data.fall_damage: bad dice expression string "a lot"; '
        "expected e.g. '2d6', 'd8+1' or '5'"
    ]


def test_burning_uses_the_encounters_settings() -> None:
    options = EncounterOptions(settings={"hazards": {"burn_die": "1d10", "burn_dc": 15}})
    h = EncounterHarness(
        [creature("gob", "foes", "common_room"), creature("aria", "party", "common_room")],
        arena=TAVERN,
        extra_plugins=[hazards],
        options=options,
    )
    h.start(initiative=[15, 10])
    h.send("ignite", creature="gob")
    h.rolls(14).end_turn()  # the goblin's save: 14 < the encounter's DC 15
    h.rolls(9).end_turn()  # its next turn starts: 1d10 fire = 9
    save = h.of_type(SaveMade)[-1]
    assert (save.dc, save.success) == (15, False)
    burn = h.of_type(Damaged)[-1]
    assert (burn.amount, burn.roll.expr if burn.roll else None) == (9, "1d10")
    h.assert_replay_matches()  # the encounter_created event keeps the settings


def test_burning_uses_the_defaults_without_settings() -> None:
    h = table(
        creature("gob", "foes", "common_room"),
        creature("aria", "party", "common_room"),
        rolls=[15, 10],
    )
    assert h.state.options.settings["hazards"] == {"burn_die": "1d6", "burn_dc": 10}
    h.send("ignite", creature="gob")
    h.rolls(9).end_turn()
    h.rolls(6).end_turn()
    assert h.of_type(SaveMade)[-1].dc == 10
    burn = h.of_type(Damaged)[-1]
    assert burn.roll is not None and burn.roll.expr == "1d6"
