"""Issue 30's "done when", in a real server: a hell hound from the compendium
(``srd.hell-hound``) breathes fire at its zone: each creature there makes a Dexterity
save (DC 12), the 6d6 are rolled once for all of them, half on a success; the breath
is spent, and it comes back only on a 5 or 6 rolled at the start of the hound's turn."""

from __future__ import annotations

from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, ServerConfig

from zonekeep.protocol.client import ClientError
from zonekeep.sdk import ScriptedEntropy


def _pc(cid: str, name: str, controller: str) -> dict[str, Any]:
    return {
        "id": cid,
        "name": name,
        "side": "party",
        "controller": controller,
        "zone": "common_room",
        "hp": 60,
        "max_hp": 60,
        "ac": 15,
        "saves": {"dex": 2},
        "attacks": [
            {"name": "sword", "kind": "melee", "bonus": 4, "damage": "1d8+2",
             "damage_type": "slashing"}
        ],
    }  # fmt: skip


async def _events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return seen


async def test_a_hell_hounds_breath_recharges_on_5_6_and_hits_a_zone_with_a_dex_save(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 10, 5])  # initiative: the hound, Aria, Bram
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm:
        announced = {(f["kind"], f["id"]) for f in gm.welcome["capabilities"]["features"]}  # type: ignore[index]
        assert ("action", "breath") in announced
        roster = [
            {"compendium": "srd.hell-hound", "id": "hound", "zone": "common_room"},
            _pc("aria", "Aria", "alice"),
            _pc("bram", "Bram", "bob"),
        ]
        created = await gm.create_encounter("Hound", "tavern", roster)
        eid = created["encounter"]
        (hound_id,) = [c for c in created["snapshot"]["creatures"] if c.startswith("hound")]
        hound = created["snapshot"]["creatures"][hound_id]
        breath = next(a for a in hound["actions"] if a["id"] == "breath")
        assert (breath["name"], breath["automated"]) == ("Fire Breath", True)
        assert hound["resources"] == {"breath": 1}
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        # Aria saves (13 + 2 = 15 against 12), Bram fails (4 + 2 = 6); then 6d6 once.
        dice.push(13, 4, 6, 5, 4, 3, 2, 1)
        done = await gm.command(eid, "breath", creature=hound_id, zone="common_room")
        seen = [n["event"] for n in await _events_until(gm, done["last_seq"])]
        saves = [(e["creature"], e["ability"], e["roll"]["total"], e["success"])
                 for e in seen if e["type"] == "save_made"]  # fmt: skip
        assert saves == [("aria", "dex", 15, True), ("bram", "dex", 6, False)]
        damaged = [e for e in seen if e["type"] == "damaged"]
        assert [(e["creature"], e["amount"], e["damage_type"]) for e in damaged] == [
            ("aria", 10, "fire"),
            ("bram", 21, "fire"),
        ]
        # One roll for both: its dice are drawn once.
        assert damaged[0]["roll"]["dice"] == damaged[1]["roll"]["dice"] == [6, 5, 4, 3, 2, 1]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"][hound_id]["resources"] == {"breath": 0}
        assert (snapshot["creatures"]["aria"]["hp"], snapshot["creatures"]["bram"]["hp"]) == (
            50,
            39,
        )
        await gm.command(eid, "end_turn", creature=hound_id)
        await gm.command(eid, "end_turn", creature="aria")
        # The hound's turn starts: a d6 for the spent breath, 4: not back.
        dice.push(4)
        ended = await gm.command(eid, "end_turn", creature="bram")
        seen = [n["event"] for n in await _events_until(gm, ended["last_seq"])]
        rolled = [(e["resource"], e["roll"]["total"], e["recharged"])
                  for e in seen if e["type"] == "recharge_rolled"]  # fmt: skip
        assert rolled == [("breath", 4, False)]
        with pytest.raises(ClientError) as refused:
            await gm.command(eid, "breath", creature=hound_id)
        assert refused.value.name == "no_uses_left"
        for who in (hound_id, "aria"):
            await gm.command(eid, "end_turn", creature=who)
        dice.push(5)  # the next start of its turn: 5, the breath is back
        ended = await gm.command(eid, "end_turn", creature="bram")
        seen = [n["event"] for n in await _events_until(gm, ended["last_seq"])]
        rolled = [(e["resource"], e["roll"]["total"], e["recharged"])
                  for e in seen if e["type"] == "recharge_rolled"]  # fmt: skip
        assert rolled == [("breath", 5, True)]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"][hound_id]["resources"] == {"breath": 1}
