"""Damage types, resistances and condition immunity over the protocol, and the
conditions advertised in ``hello``: the real Python client and a server on the default
SQLite store, over the in-memory transport (``memory_support``).

Every message the clients receive is validated against the schemas (``memory_support``): the
``damaged`` event with its ``raw`` amount and ``steps``, the snapshot's creature
defences, ``hello``'s ``capabilities.conditions``.
"""

from __future__ import annotations

from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running

from zonekeep.protocol.client import ClientError, ZonekeepClient


def roster() -> list[dict[str, Any]]:
    sword = {"name": "sword", "bonus": 5, "damage": "1d8+3", "damage_type": "slashing"}
    return [
        {"id": "aria", "name": "Aria", "side": "party", "controller": "ana", "hp": 24,
         "max_hp": 24, "zone": "common_room", "attacks": [sword]},
        {"id": "imp", "name": "Fire Imp", "side": "foes", "hp": 30, "max_hp": 30,
         "zone": "common_room", "damage_resistances": ["cold"], "damage_immunities": ["fire"],
         "damage_vulnerabilities": ["radiant"], "condition_immunities": ["poisoned"]},
        {"compendium": "srd.skeleton", "zone": "common_room", "side": "foes"},
    ]  # fmt: skip


async def events_until(client: ZonekeepClient, seq: int) -> list[dict[str, Any]]:
    found = []
    with trio.fail_after(helpers.deadline(5)):
        while True:
            pushed = await client.notification("event")
            found.append(pushed["event"])
            if pushed["seq"] >= seq:
                return found


async def test_gm_damage_with_a_type_meets_resistance_immunity_and_vulnerability(
    running: Running,
) -> None:
    async with running.client() as gm, running.client() as ana:
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Imps", "tavern", roster())
        eid = created["encounter"]
        imp = created["snapshot"]["creatures"]["imp"]
        assert imp["damage_resistances"] == ["cold"]
        assert imp["damage_immunities"] == ["fire"]
        assert imp["condition_immunities"] == ["poisoned"]
        skeleton = created["snapshot"]["creatures"]["skeleton-1"]
        assert skeleton["damage_vulnerabilities"] == ["bludgeoning"]
        seat = await gm.request("create_seat", encounter=eid, player="ana")
        await ana.join(eid, seat["token"])

        with trio.fail_after(helpers.deadline(5)):
            result = await gm.command(eid, "damage", creature="imp", amount=9, damage_type="cold")
        (cold,) = await events_until(ana, result["last_seq"])
        assert cold["type"] == "damaged"
        assert (cold["amount"], cold["raw"], cold["raw_type"], cold["damage_type"]) == (
            4,
            9,
            "cold",
            "cold",
        )
        assert cold["steps"] == [
            {"kind": "resistance", "source": "damage resistance (cold)", "amount": 4,
             "damage_type": "cold"}
        ]  # fmt: skip
        assert cold["hp"] == "hurt"  # Ana sees the enemy's condition as a word

        with trio.fail_after(helpers.deadline(5)):
            result = await gm.command(eid, "damage", creature="imp", amount=7, damage_type="fire")
            result = await gm.command(
                eid, "damage", creature="skeleton-1", amount=3, damage_type="bludgeoning"
            )
        fire, bones = await events_until(ana, result["last_seq"])
        assert (fire["amount"], fire["raw"], fire["steps"][0]["kind"]) == (0, 7, "immunity")
        assert (bones["amount"], bones["raw"]) == (6, 3)

        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await gm.command(eid, "damage", creature="imp", amount=3, damage_type="hellfire")
        assert info.value.name == "invalid_params"
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as immune:
            await gm.command(eid, "grant_condition", creature="imp", condition="poisoned")
        assert (immune.value.name, immune.value.code) == ("condition_immune", 4060)

        with trio.fail_after(helpers.deadline(5)):
            snapshot = await gm.request("snapshot", encounter=eid)
        assert snapshot["snapshot"]["creatures"]["imp"]["hp"] == 26
        assert snapshot["snapshot"]["creatures"]["imp"]["conditions"] == []


async def test_hello_advertises_the_conditions_with_their_plugin_and_durations(
    running: Running,
) -> None:
    async with running.client() as client:
        welcome = client.welcome
        assert welcome is not None
        assert welcome["protocol"] == "1.7"
        conditions = {c["id"]: c for c in welcome["capabilities"]["conditions"]}
        assert {"poisoned", "frightened", "paralyzed", "prone", "dying"} <= set(conditions)
        assert [c["id"] for c in welcome["capabilities"]["conditions"]] == sorted(conditions)
        poisoned = conditions["poisoned"]
        assert poisoned == {
            "id": "poisoned",
            "name": "Poisoned",
            "summary": "Disadvantage on attack rolls and ability checks.",
            "description": "Its attack rolls and ability checks (initiative and Tumbles "
            "included) have disadvantage.",
            "durations": ["rounds", "turn_start", "turn_end", "save", "until_removed"],
            "plugin": "zonekeep.conditions",
        }
        assert conditions["dying"]["durations"] == ["until_removed"]
