"""The SRD goblin boss in a real server (issue 30): the compendium's ``srd.goblin-boss``
makes its Multiattack, two scimitar attacks, the second with disadvantage, offered in
``actions`` as one choice with its sequence."""

from __future__ import annotations

from typing import Any

import helpers
import trio
from e2e_support import Running, ServerConfig

from zonekeep.sdk import ScriptedEntropy

#: A compendium reference's ``id`` names its copies: the first is ``<id>-1``.
BOSS = "boss-1"
ARIA: dict[str, Any] = {
    "id": "aria",
    "name": "Aria",
    "side": "party",
    "zone": "common_room",
    "hp": 30,
    "max_hp": 30,
    "ac": 15,
    "attacks": [
        {"name": "spear", "kind": "melee", "bonus": 4, "damage": "1d6+2", "damage_type": "piercing"}
    ],
}


async def _events(client: Any, done: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of the command whose result is ``done``, as ``client`` sees them."""
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < done["last_seq"]:
            seen.append(await client.notification("event"))
    return [n["event"] for n in seen if n["seq"] >= done["first_seq"]]


async def test_the_compendium_goblin_boss_multiattacks_the_second_with_disadvantage(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 5])  # initiative: the boss, then Aria
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm:
        cast = [{"compendium": "srd.goblin-boss", "id": "boss", "zone": "common_room"}, ARIA]
        created = await gm.create_encounter("Boss", "tavern", cast, options={"flanking": False})
        eid = created["encounter"]
        for command in ("set_surprise", "place", "roll_initiative"):
            await _events(gm, await gm.command(eid, command))
        actions = await gm.request("actions", encounter=eid, creature=BOSS)
        detail = next(d for d in actions["details"] if d["id"] == "multiattack")
        assert detail["available"] is True
        assert detail["sequences"] == [
            [
                {"attack": "scimitar", "disadvantage": False},
                {"attack": "scimitar", "disadvantage": True},
            ]
        ]
        # The first scimitar: 14 + 4 = 18 hits AC 15 (4 + 2 slashing); the second with
        # disadvantage: 17 and 3, the 3 kept, 3 + 4 = 7 misses.
        dice.push(14, 4)
        first = await _events(
            gm, await gm.command(eid, "multiattack", creature=BOSS, target="aria")
        )
        dice.push(17, 3)
        second = await _events(
            gm, await gm.command(eid, "multiattack", creature=BOSS, target="aria")
        )
        made = [e for e in [*first, *second] if e["type"] == "attack_made"]
        assert [
            (m["attack"], m["roll"]["dice"], m["roll"]["advantage"], m["hit"]) for m in made
        ] == [
            ("scimitar", [14], "none", True),
            ("scimitar", [17, 3], "disadvantage", False),
        ]
        spent = [e for e in [*first, *second] if e["type"] == "action_taken"]
        assert [(e["action"], e["cost"]) for e in spent] == [("multiattack", "action")]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"]["aria"]["hp"] == 30 - 6
