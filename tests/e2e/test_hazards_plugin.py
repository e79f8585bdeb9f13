"""The example plugin package, installed and found through the `zonekeep` entry point,
loaded into a real server and played over the protocol."""

from __future__ import annotations

from typing import Any

import helpers
import trio
from e2e_support import Running, ServerConfig
from helpers import example_plugin

from zonekeep.sdk import ScriptedEntropy
from zonekeep.sdk.engine import Engine

example_plugin("zonekeep_hazards")


def roster() -> list[dict[str, Any]]:
    fist = {"name": "fist", "kind": "melee", "bonus": 5, "damage": "1d4+3"}
    return [
        {
            "id": "ogre",
            "name": "Ogre",
            "side": "foes",
            "zone": "kitchen",
            "hp": 40,
            "max_hp": 40,
            "skills": {"athletics": 5},
            "maneuver_dc": 15,
            "attacks": [fist],
        },
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "controller": "alice",
            "zone": "kitchen",
            "hp": 20,
            "max_hp": 20,
            "attacks": [fist],
        },
    ]


async def test_the_hazards_plugin_is_loaded_through_its_entry_point_and_played(
    make_server: Any,
) -> None:
    engine = Engine.from_config()
    assert engine.command_owners["hazards.shove_into"] == "hazards"
    dice = ScriptedEntropy([20, 5])  # initiative: the ogre first
    running: Running = await make_server(ServerConfig(port=0), engine=engine, entropy=dice)
    async with running.client() as gm, running.client() as alice:
        commands = {c["id"]: c for c in gm.welcome["capabilities"]["commands"]}  # type: ignore[index]
        # Its commands are announced with their full, namespaced ids ...
        assert {"hazards.shove_into", "hazards.ignite"} <= set(commands)
        assert set(commands["hazards.shove_into"]["params"]) == {"creature", "target", "asset"}
        created = await gm.create_encounter("Kitchen brawl", "tavern", roster())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        await alice.join(eid, seat["token"])
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        # The ogre wins the contest 18 to 4 and shoves Aria into the grease fire:
        # she takes position in it and fails its DC 13 save (2): 2d6 = 12 fire damage.
        dice.push(13, 4, 2, 6, 6)
        result = await gm.command(
            eid, "shove_into", creature="ogre", target="aria", asset="kitchen_fire"
        )
        seen: list[dict[str, Any]] = []
        with trio.fail_after(helpers.deadline(5)):
            while not seen or seen[-1]["seq"] < result["last_seq"]:
                seen.append(await alice.notification("event"))
        kinds = [n["event"]["type"] for n in seen if n["seq"] >= result["first_seq"]]
        assert kinds[:3] == ["action_taken", "contest_rolled", "position_taken"]
        # ... which the log holds, although the command was sent by its short name.
        taken = next(n["event"] for n in seen if n["seq"] == result["first_seq"])
        assert taken["action"] == "hazards.shove_into"
        damaged = next(n["event"] for n in seen if n["event"]["type"] == "damaged")
        assert (damaged["creature"], damaged["amount"], damaged["damage_type"]) == (
            "aria",
            12,
            "fire",
        )
        snapshot = (await alice.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"]["aria"]["elements"] == ["kitchen_fire"]
        assert snapshot["creatures"]["aria"]["hp"] == 8
