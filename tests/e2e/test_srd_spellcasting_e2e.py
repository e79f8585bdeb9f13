"""Issue 30, monsters casting from their stat blocks, in a real server: the GM makes a
cult fanatic (``srd.cult-fanatic``: 4th-level cleric, Wisdom, save DC 11) cast hold
person at a player's character: a Wisdom save against DC 11, paralyzed on a failure,
held by the fanatic's concentration; one of its three level-2 slots is spent. A spell
of its stat block the rules do not resolve (command) is refused with the reason, and
changes nothing."""

from __future__ import annotations

from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, ServerConfig

from zonekeep.protocol.client import ClientError
from zonekeep.sdk import ScriptedEntropy


async def _events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return seen


async def test_the_gm_makes_a_cult_fanatic_cast_hold_person_from_its_stat_block(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 5])  # initiative: the fanatic, then Aria
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm:
        announced = {(f["kind"], f["id"]) for f in gm.welcome["capabilities"]["features"]}  # type: ignore[index]
        assert ("action", "spellcasting") in announced
        aria: dict[str, Any] = {
            "id": "aria", "name": "Aria", "side": "party", "controller": "alice",
            "zone": "common_room", "hp": 20, "max_hp": 20, "ac": 14, "saves": {"wis": 1},
        }  # fmt: skip
        roster: list[dict[str, Any]] = [
            {"compendium": "srd.cult-fanatic", "id": "fanatic", "zone": "common_room"},
            aria,
        ]
        created = await gm.create_encounter("Cult", "tavern", roster)
        eid = created["encounter"]
        (fid,) = [c for c in created["snapshot"]["creatures"] if c.startswith("fanatic")]
        fanatic = created["snapshot"]["creatures"][fid]
        casting = next(a for a in fanatic["actions"] if a["id"] == "spellcasting")
        assert (casting["automated"], casting["params"]["slots"]) == (True, {"1": 4, "2": 3})
        # The GM reads which of its spells are theirs to adjudicate.
        assert "command is the GM's" in casting["text"]
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)

        # A spell of its stat block the rules leave to the GM: refused, nothing changes.
        with pytest.raises(ClientError) as refused:
            await gm.command(eid, "cast", creature=fid, spell="command", target="aria")
        assert refused.value.name == "no_such_feature"
        assert "Command" in str(refused.value)

        # Aria's Wisdom save: 9 + 1 = 10 against DC 11, a failure.
        dice.push(9)
        done = await gm.command(eid, "cast", creature=fid, spell="hold-person", target="aria")
        seen = [n["event"] for n in await _events_until(gm, done["last_seq"])]
        saves = [(e["creature"], e["ability"], e["roll"]["total"], e["dc"], e["success"])
                 for e in seen if e["type"] == "save_made"]  # fmt: skip
        assert saves == [("aria", "wis", 10, 11, False)]
        applied = [e["effect"] for e in seen if e["type"] == "condition_effect_applied"]
        assert [(e["creature"], e["condition"]) for e in applied] == [
            (fid, "concentrating"),
            ("aria", "paralyzed"),
        ]
        assert applied[1]["parent"] == applied[0]["id"]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert "paralyzed" in snapshot["creatures"]["aria"]["conditions"]
        assert "concentrating" in snapshot["creatures"][fid]["conditions"]
        assert snapshot["creatures"][fid]["resources"]["spell-slots-2"] == 2
