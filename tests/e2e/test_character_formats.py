"""Character sheets kept elsewhere, over real websockets to a real server (protocol
1.6): ``check_character`` and ``submit_character`` with ``format`` import a Foundry VTT
dnd5e actor export and an Improved Initiative statblock, answer what did not map, and
refuse a sheet that is not in its format (or too big for a message) without changing
anything; a pregenerated level-5 character sent in the character model plays with its
derived numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e_support import Running
from lobby_support import refused

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "characters"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


async def test_check_character_imports_a_foundry_actor_and_lists_the_unmapped(
    running: Running,
) -> None:
    actor = load(FIXTURES / "foundry-dnd5e-cleric.json")
    async with running.client() as client:
        checked = await client.request("check_character", character=actor, format="foundry")
        assert checked["problems"] == []
        assert checked["character"]["classes"] == [
            {"name": "cleric", "level": 5, "subclass": "life"}
        ]
        assert "item 'Potion of Healing' (consumable)" in checked["unmapped"]
        assert "active effect 'Blessed by the Abbot'" in checked["unmapped"]
        # The same sheet read as a zonekeep file: refused field by field, nothing imported.
        plain = await client.request("check_character", character=actor)
        assert plain["character"] is None and plain["unmapped"] == []
        assert any("unknown field" in p["message"] for p in plain["problems"])
        # Not a Foundry actor at all.
        wrong = await client.request("check_character", character={"Name": "x"}, format="foundry")
        assert wrong["character"] is None
        assert wrong["problems"] == [
            {"path": "character", "message": "not a Foundry VTT actor export: no 'system' object"}
        ]
        error = await refused(client.request("check_character", character=actor, format="pdf"))
        assert error.name == "invalid_params"


async def test_a_player_submits_an_improved_initiative_statblock(running: Running) -> None:
    statblock = load(FIXTURES / "improved-initiative-ranger.json")
    async with running.client() as gm:
        created = await gm.create_encounter(
            "Ambush",
            "tavern",
            [{"compendium": "srd.goblin", "count": 1, "zone": "kitchen"}],
            seats=[{"player": "Ana", "zone": "bar"}],
        )
        eid = created["encounter"]
        async with running.client() as ana:
            await ana.join(eid, created["seats"]["Ana"])
            seq = running.server.rooms[eid].state.seq
            broken = {**statblock, "HP": {"Value": 0}}
            error = await refused(
                ana.request(
                    "submit_character",
                    encounter=eid,
                    character=broken,
                    format="improved-initiative",
                )
            )
            assert error.name == "invalid_params" and "character.hp" in error.message
            assert running.server.rooms[eid].state.seq == seq
            sent = await ana.request(
                "submit_character", encounter=eid, character=statblock, format="improved-initiative"
            )
            assert sent["unmapped"] == [
                "HP.Notes: (4d10+8)",
                "AC.Notes: (studded leather)",
                "Senses: darkvision 60 ft.",
                "Languages",
            ]
            event = await gm.notification("event")
            creature = event["event"]["creature"]
            assert (creature["name"], creature["hp"], creature["ac"]) == ("Ilsa Thornwood", 36, 15)
            assert [a["name"] for a in creature["attacks"]] == ["Longbow", "Shortsword"]


async def test_a_pregenerated_level_5_character_plays_with_its_derived_numbers(
    running: Running,
) -> None:
    kael = load(ROOT / "examples" / "characters" / "kael.json")
    async with running.client() as gm:
        created = await gm.create_encounter(
            "Cliff", "cliffside", [], seats=[{"player": "Ana", "zone": "clifftop"}]
        )
        eid = created["encounter"]
        async with running.client() as ana:
            await ana.join(eid, created["seats"]["Ana"])
            sent = await ana.request("submit_character", encounter=eid, character=kael)
            assert sent["unmapped"] == []
            event = await gm.notification("event")
            creature = event["event"]["creature"]
            assert (creature["ac"], creature["hp"], creature["maneuver_dc"]) == (19, 44, 15)
            assert creature["saves"]["str"] == 7 and creature["skills"]["athletics"] == 7
            assert [(a["name"], a["bonus"], a["damage"]) for a in creature["attacks"]] == [
                ("longsword", 7, "1d8+4"),
                ("longsword (two-handed)", 7, "1d10+4"),
                ("javelin", 7, "1d6+4"),
                ("javelin (thrown)", 7, "1d6+4"),
            ]
