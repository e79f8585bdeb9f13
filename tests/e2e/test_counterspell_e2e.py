"""Issue 31, Counterspell in a real server: a cult fanatic (``srd.cult-fanatic``) casts
hold person; before the spell takes effect a warden of the other side who knows
Counterspell is asked (a ``decision_opened`` of kind ``counterspell`` whose ``trigger``
holds the spell being cast), and the fanatic's cast waits. The GM, the warden's
controller, takes it with a level 3 slot: the warden's reaction and slot are spent, the
fanatic's level 2 slot stays spent, and nobody saves."""

from __future__ import annotations

from typing import Any

import helpers
import trio
from e2e_support import Running, ServerConfig

from zonekeep.sdk import ScriptedEntropy


async def _events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return seen


async def test_a_warden_counters_a_cult_fanatics_hold_person(make_server: Any) -> None:
    dice = ScriptedEntropy([20, 5, 3])  # initiative: the fanatic, Aria, the warden
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm:
        aria: dict[str, Any] = {
            "id": "aria", "name": "Aria", "side": "party", "controller": "alice",
            "zone": "common_room", "hp": 20, "max_hp": 20, "ac": 14, "saves": {"wis": 1},
        }  # fmt: skip
        warden: dict[str, Any] = {
            "id": "warden", "name": "Warden", "side": "party", "zone": "common_room",
            "hp": 30, "max_hp": 30, "ac": 12, "abilities": {"int": 3},
            "traits": [{"id": "spellcasting", "name": "Spellcasting", "params": {
                "ability": "int", "slots": {"3": 1}, "prepared": ["counterspell"]}}],
        }  # fmt: skip
        roster: list[dict[str, Any]] = [
            {"compendium": "srd.cult-fanatic", "id": "fanatic", "zone": "common_room"},
            aria,
            warden,
        ]
        created = await gm.create_encounter("Cult", "tavern", roster)
        eid = created["encounter"]
        (fid,) = [c for c in created["snapshot"]["creatures"] if c.startswith("fanatic")]
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)

        done = await gm.command(eid, "cast", creature=fid, spell="hold-person", target="aria")
        seen = [n["event"] for n in await _events_until(gm, done["last_seq"])]
        assert not [e for e in seen if e["type"] == "save_made"]  # the spell waits
        (opened,) = [e["decision"] for e in seen if e["type"] == "decision_opened"]
        assert (opened["kind"], opened["creature"], opened["options"]) == (
            "counterspell",
            "warden",
            ["level-3", "decline"],
        )
        trigger = opened["trigger"]
        assert (trigger["type"], trigger["caster"], trigger["spell"], trigger["slot"]) == (
            "spell",
            fid,
            "hold-person",
            2,
        )
        done = await gm.command(eid, "decide", decision=opened["id"], choice=["level-3"])
        seen = [n["event"] for n in await _events_until(gm, done["last_seq"])]
        taken = [
            (e["creature"], e["action"], e["cost"]) for e in seen if e["type"] == "action_taken"
        ]
        assert taken == [("warden", "counterspell", "reaction")]
        assert not [e for e in seen if e["type"] in ("save_made", "condition_effect_applied")]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"]["warden"]["resources"]["spell-slots-3"] == 0
        assert snapshot["creatures"][fid]["resources"]["spell-slots-2"] == 2
        assert "paralyzed" not in snapshot["creatures"]["aria"]["conditions"]
