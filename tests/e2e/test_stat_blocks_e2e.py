"""Stat blocks over real websockets (issue 30): the GM's snapshot carries every creature's
whole stat block (hit dice and senses included); a player gets only its own creature's,
never another's, in snapshots, in replayed and in live events; ``create_encounter``'s
roster reference ``hp: "roll"`` rolls hit points from the hit dice with the encounter's
verifiable dice, logged in a ``dice_drawn`` event that ``zonekeep verify`` checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, ServerConfig, creatures
from lobby_support import refused

from zonekeep.sdk import die, parse_dice
from zonekeep.sdk.host import EMPTY_MIX, dice_in
from zonekeep.server._cli import main as cli

MakeServer = Callable[..., Any]

#: What a player never gets of a creature it does not control (server/_visibility.py).
EMPTY_SHEET: dict[str, Any] = {
    "ac": None,
    "dex_mod": None,
    "initiative_bonus": None,
    "passive_perception": None,
    "maneuver_dc": None,
    "spell_dc": None,
    "proficiency": None,
    "hit_dice": None,
    "challenge": None,
    "attacks": [],
    "traits": [],
    "actions": [],
    "damage_resistances": [],
    "damage_vulnerabilities": [],
    "damage_immunities": [],
    "condition_immunities": [],
    "damage_resistances_nonmagical": [],
    "damage_immunities_nonmagical": [],
    "abilities": {},
    "saves": {},
    "skills": {},
    "resources": {},
    "senses": {},
}


def sheet(creature: dict[str, Any]) -> dict[str, Any]:
    return {k: creature[k] for k in EMPTY_SHEET}


def roster() -> list[dict[str, Any]]:
    """Aria (alice's) and Bram (bob's) against two SRD goblins and a brass dragon
    wyrmling (a breath weapon with a recharge)."""
    heroes = [c for c in creatures() if c["id"] in ("aria", "bram")]
    return [
        *heroes,
        {"compendium": "srd.goblin", "count": 2, "zone": "common_room"},
        {"compendium": "srd.brass-dragon-wyrmling", "id": "wyrm", "zone": "common_room"},
    ]


async def test_a_player_never_receives_another_creatures_stat_block(running: Running) -> None:
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(helpers.deadline(10)):
            created = await gm.create_encounter("Sheets", "tavern", roster())
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            full = created["snapshot"]["creatures"]
            # The GM's snapshot: the whole stat block, hit dice and senses included.
            goblin = full["goblin-1"]
            assert goblin["ac"] == 15 and goblin["hit_dice"] == "2d6"
            assert goblin["senses"] == {"darkvision": 60} and goblin["skills"]["stealth"] == 6
            [escape] = goblin["actions"]
            assert escape["id"] == "nimble-escape" and escape["kind"] == "bonus_action"
            assert escape["automated"] is True and escape["gm"] is None and escape["text"]
            wyrm = full["wyrm-1"]
            assert wyrm["resources"] == {"breath": 1} and wyrm["damage_immunities"] == ["fire"]
            assert any(a["uses"]["recharge"] == 5 for a in wyrm["actions"] if a["id"] == "breath")

            joined = await alice.join(eid, seat["token"], history=50)
            mine = joined["snapshot"]["creatures"]
            # Her own creature's sheet in full; every other one's (Bram's included) empty.
            assert sheet(mine["aria"]) == sheet(full["aria"]) and mine["aria"]["ac"] == 14
            for cid in ("bram", "goblin-1", "goblin-2", "wyrm-1"):
                assert sheet(mine[cid]) == EMPTY_SHEET, cid
                assert mine[cid]["name"] == full[cid]["name"]
            # The replayed creation event carries no other creature's sheet either.
            [made] = [e for e in joined["history"] if e["type"] == "encounter_created"]
            for c in made["creatures"]:
                if c["id"] != "aria":
                    assert sheet(c) == EMPTY_SHEET, c["id"]
            # A creature added later: its event reaches alice without the sheet.
            await gm.command(
                eid,
                "add_creature",
                creature={
                    "id": "ogre",
                    "name": "Ogre",
                    "side": "enemies",
                    "ac": 11,
                    "hp": 59,
                    "max_hp": 59,
                    "zone": "common_room",
                    "abilities": {"str": 4},
                    "skills": {"athletics": 6},
                },
            )
            while True:
                note = await alice.notification("event")
                if note["event"]["type"] == "creature_added":
                    break
            assert sheet(note["event"]["creature"]) == EMPTY_SHEET
            # Overriding a sheet number: alice learns it happened, not the number.
            await gm.command(eid, "override", creature="ogre", field="ac", value=17)
            while True:
                note = await alice.notification("event")
                if note["event"]["type"] == "override_applied":
                    break
            assert note["event"]["field"] == "ac" and note["event"]["value"] is None
            again = await alice.request("snapshot", encounter=eid)
            assert again["snapshot"]["creatures"]["ogre"]["ac"] is None
            assert again["snapshot"]["creatures"]["aria"]["ac"] == 14


async def fair_server(make_server: MakeServer) -> Running:
    running: Running = await make_server(ServerConfig(port=0), entropy=None)
    return running


def hit_dice_range(expr: str) -> tuple[int, int]:
    dice = parse_dice(expr)
    return dice.count + dice.modifier, dice.count * dice.sides + dice.modifier


@pytest.mark.sqlite  # zonekeep export reads SQLite files
async def test_hp_roll_rolls_hit_dice_with_the_encounters_verifiable_dice(
    make_server: MakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running = await fair_server(make_server)
    cast: list[dict[str, Any]] = [
        {
            "compendium": "srd.ogre",
            "count": 3,
            "zone": "common_room",
            "hp": "roll",
            "overrides": [{}, {"hp": 50}, {}],
        },
        {"compendium": "srd.goblin", "count": 2, "zone": "common_room"},
        {"compendium": "srd.wolf", "zone": "common_room", "hp": "average"},
    ]
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(10)):
            created = await gm.create_encounter("Rolled", "tavern", cast)
            eid = created["encounter"]
            found = created["snapshot"]["creatures"]
            ogres = [found[f"ogre-{i}"] for i in (1, 2, 3)]
            assert {o["hit_dice"] for o in ogres} == {"7d10+21"}
            low, high = hit_dice_range(ogres[0]["hit_dice"])
            assert (low, high) == (28, 91)
            for ogre in (ogres[0], ogres[2]):
                assert low <= ogre["max_hp"] <= high and ogre["hp"] == ogre["max_hp"]
            assert ogres[1]["hp"] == ogres[1]["max_hp"] == 50  # its override stands
            assert found["goblin-1"]["hp"] == found["goblin-2"]["hp"] == 7  # the average
            assert found["wolf-1"]["hp"] == 11
            await gm.command(eid, "end_encounter", force=True, reason="a test")
    data_dir = running.server.config.data_dir
    target = tmp_path / "rolled.jsonl"
    assert cli(["export", eid, "--data-dir", str(data_dir), "-o", str(target)]) == 0
    lines = [json.loads(line) for line in target.read_text().splitlines() if line.strip()]
    kinds = [line["event"]["type"] for line in lines]
    assert kinds[:3] == ["encounter_created", "dice_committed", "dice_drawn"]
    draws = lines[2]["event"]["draws"]
    # Seven d10 for each rolled ogre, in roster order, the first dice of the encounter.
    assert [c for c, _, _ in draws] == list(range(14)) and {s for _, s, _ in draws} == {10}
    made = {c["id"]: c for c in lines[0]["event"]["creatures"]}
    assert made["ogre-1"]["max_hp"] == sum(v for _, _, v in draws[:7]) + 21
    assert made["ogre-3"]["max_hp"] == sum(v for _, _, v in draws[7:]) + 21
    # Each die is the construction's, from the seed revealed at the end.
    assert kinds[-1] == "dice_revealed"
    seed = lines[-1]["event"]["seed"]
    assert all(die(seed, EMPTY_MIX, c, s) == v for c, s, v in draws)
    assert all(c >= 14 for line in lines[3:] for c, _, _ in dice_in(line["event"]))
    capsys.readouterr()
    assert cli(["verify", str(target)]) == 0
    assert "dice verified: 14 rolls (fair)" in capsys.readouterr().out


async def test_hp_takes_only_average_or_roll(running: Running) -> None:
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(10)):
            for bad in ("max", 12, True, None, ["roll"]):
                item: dict[str, Any] = {
                    "compendium": "srd.goblin",
                    "zone": "common_room",
                    "hp": bad,
                }
                error = await refused(gm.create_encounter("Bad", "tavern", [item]))
                assert error.name == "invalid_params", bad
                assert "creatures[0].hp" in error.message, error.message
            listed = await gm.request("list_encounters")
            assert listed["encounters"] == []
            # A test's entropy (not verifiable) still rolls within the hit dice.
            item = {"compendium": "srd.goblin", "count": 4, "hp": "roll"}
            created = await gm.create_encounter("Goblins", "tavern", [item])
            hps = [c["max_hp"] for c in created["snapshot"]["creatures"].values()]
            assert len(hps) == 4 and all(2 <= hp <= 12 for hp in hps)
