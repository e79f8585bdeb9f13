"""Creatures as data in a real server (issue 30, points 4, 6, 7, 8): the goblin boss's
Multiattack over the protocol (one choice in `actions`, two attacks, the second with
disadvantage), a breath weapon's recharge on a d6 at the start of its turn, and the GM's
`call_check` (the GM sees every result, a player only its own)."""

from __future__ import annotations

from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, ServerConfig

from zonekeep.protocol.client import ClientError
from zonekeep.sdk import ScriptedEntropy

SCIMITAR = {
    "name": "scimitar",
    "kind": "melee",
    "bonus": 4,
    "damage": "1d6+2",
    "damage_type": "slashing",
}


def roster() -> list[dict[str, Any]]:
    return [
        {
            "id": "boss",
            "name": "Goblin Boss",
            "side": "goblins",
            "zone": "common_room",
            "hp": 21,
            "max_hp": 21,
            "ac": 17,
            "dex_mod": 2,
            "abilities": {"str": 0, "dex": 2, "con": 0, "int": 0, "wis": -1, "cha": 0},
            "skills": {"stealth": 6},
            "attacks": [SCIMITAR],
            "actions": [
                {
                    "id": "multiattack",
                    "name": "Multiattack",
                    "text": "Two scimitar attacks; the second has disadvantage.",
                    "params": {
                        "sequences": [["scimitar", {"attack": "scimitar", "disadvantage": True}]]
                    },
                },
                {
                    "id": "gm",
                    "name": "Fire Breath",
                    "text": "A cone of fire (played by the GM here).",
                    "gm": "the test plays the area by hand",
                    "uses": {"recharge": 5},
                },
            ],
            "traits": ["Redirect Attack. Swaps places with a goblin nearby."],
        },
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "controller": "alice",
            "zone": "common_room",
            "hp": 20,
            "max_hp": 20,
            "ac": 15,
            "abilities": {"str": 0, "dex": 3, "con": 0, "int": 0, "wis": 1, "cha": 0},
            "attacks": [SCIMITAR],
        },
    ]


async def _events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return seen


async def test_multiattack_recharge_and_call_check_in_a_real_server(make_server: Any) -> None:
    dice = ScriptedEntropy([20, 5])  # initiative: the boss first
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm, running.client() as alice:
        announced = {(f["kind"], f["id"]): f for f in gm.welcome["capabilities"]["features"]}  # type: ignore[index]
        assert {
            ("action", "multiattack"),
            ("on_hit", "save-or-condition"),
            ("on_hit", "grapple"),
        } <= (set(announced))
        assert announced["action", "multiattack"]["plugin"] == "zonekeep.features"
        created = await gm.create_encounter("Boss fight", "tavern", roster())
        eid = created["encounter"]
        boss = created["snapshot"]["creatures"]["boss"]
        # Every feature is shown, with whether the server plays it.
        assert [(a["id"], a["automated"], a["gm"]) for a in boss["actions"]] == [
            ("multiattack", True, None),
            ("gm", False, "the test plays the area by hand"),
        ]
        assert boss["traits"][0]["automated"] is False
        assert boss["traits"][0]["text"].startswith("Redirect Attack")
        assert boss["resources"] == {"gm-fire-breath": 1}
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        await alice.join(eid, seat["token"])
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        # `actions` offers Multiattack as one choice, with its sequence.
        actions = await gm.request("actions", encounter=eid, creature="boss")
        detail = next(d for d in actions["details"] if d["id"] == "multiattack")
        assert detail["available"] is True
        assert detail["sequences"] == [
            [
                {"attack": "scimitar", "disadvantage": False},
                {"attack": "scimitar", "disadvantage": True},
            ]
        ]
        assert [(a["name"], a["targets"]) for a in detail["attacks"]] == [("scimitar", ["aria"])]
        features = {f["name"]: f for f in actions["features"]}
        assert features["Multiattack"]["automated"] is True
        assert (features["Fire Breath"]["automated"], features["Fire Breath"]["left"]) == (False, 1)
        # The first attack (14 + 4 = 18 hits AC 15; 4 + 2 damage), the second with
        # disadvantage (17 and 3: 3 + 4 misses).
        dice.push(14, 4)
        await gm.command(eid, "multiattack", creature="boss", target="aria")
        dice.push(17, 3)
        second = await gm.command(eid, "multiattack", creature="boss", target="aria")
        seen = await _events_until(gm, second["last_seq"])
        made = [n["event"] for n in seen if n["event"]["type"] == "attack_made"]
        assert [(m["roll"]["dice"], m["roll"]["advantage"], m["hit"]) for m in made] == [
            ([14], "none", True),
            ([17, 3], "disadvantage", False),
        ]
        spent = [n["event"] for n in seen if n["event"]["type"] == "action_taken"]
        assert [(e["action"], e["cost"]) for e in spent] == [("multiattack", "action")]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"]["aria"]["hp"] == 14
        with pytest.raises(ClientError) as refused:
            await gm.command(eid, "multiattack", creature="boss", target="aria")
        assert refused.value.name == "no_action_left"
        # The GM plays the breath by hand; the server counts the use and its recharge.
        await gm.command(eid, "use_feature", creature="boss", feature="gm-fire-breath")
        await gm.command(eid, "end_turn", creature="boss")
        # On Aria's turn the GM calls a Dexterity (Stealth) check, DC 12, for both.
        dice.push(10, 10)
        called = await gm.command(
            eid, "call_check", creatures=["aria", "boss"], ability="dex", skill="stealth", dc=12
        )
        gm_seen = await _events_until(gm, called["last_seq"])
        checks = [n["event"] for n in gm_seen if n["event"]["type"] == "check_rolled"]
        assert [(c["creature"], c["roll"]["total"], c["success"]) for c in checks] == [
            ("aria", 13, True),
            ("boss", 16, True),
        ]
        mine = await _events_until(alice, called["last_seq"])
        tail = [n["event"] for n in mine if n["seq"] >= called["first_seq"]]
        assert [e["type"] for e in tail] == ["check_rolled", "hidden"]
        assert tail[0]["creature"] == "aria"
        # The boss's next turn starts: its spent breath rolls a d6 (6: recharged).
        dice.push(6)
        ended = await gm.command(eid, "end_turn", creature="aria")
        seen = await _events_until(gm, ended["last_seq"])
        recharge = [n["event"] for n in seen if n["event"]["type"] == "recharge_rolled"]
        assert [
            (r["resource"], r["roll"]["total"], r["needed"], r["recharged"]) for r in recharge
        ] == [("gm-fire-breath", 6, 5, True)]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"]["boss"]["resources"] == {"gm-fire-breath": 1}
