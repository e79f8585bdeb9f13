"""Issue 31, item 3, in a real server: a GM-run cleric (a stat block's ``spellcasting``
action: Wisdom, DC 13, prepared web and spirit guardians) webs the cellar, where Aria
fails her Dexterity save and is restrained (the web is an asset of the arena in the
snapshot, and the player sees it); a player's ``break_free`` with nothing holding
another creature is refused and changes nothing; next round the cleric casts spirit
guardians, whose concentration ends the web's (the asset goes, Aria is free), and Bram,
a foe starting his turn in the cleric's zone, makes the Wisdom save and takes 3d8
radiant."""

from __future__ import annotations

from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, ServerConfig

from zonekeep.protocol.client import ClientError
from zonekeep.sdk import ScriptedEntropy


async def _events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    """The events notified up to ``last_seq`` (those of earlier commands too)."""
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return [n["event"] for n in seen]


ARENA: dict[str, Any] = {
    "id": "chapel",
    "name": "The chapel",
    "zones": [
        {"id": "nave", "name": "Nave", "size": 30},
        {"id": "cellar", "name": "Cellar", "size": 30},
    ],
    "links": [{"a": "nave", "b": "cellar", "direction": "beside"}],
}


def _roster() -> list[dict[str, Any]]:
    casting = {
        "id": "spellcasting",
        "name": "Spellcasting",
        "kind": "action",
        "text": "5th-level cleric (Wisdom, save DC 13, +5 to hit): web, spirit guardians.",
        "params": {
            "ability": "wis",
            "dc": 13,
            "attack_bonus": 5,
            "slots": {"2": 2, "3": 1},
            "prepared": ["web", "spirit-guardians"],
        },
    }
    return [
        {
            "id": "cleric", "name": "Cleric", "side": "foes", "zone": "nave",
            "hp": 30, "max_hp": 30, "ac": 15, "abilities": {"wis": 3},
            "actions": [casting],
        },
        {
            "id": "aria", "name": "Aria", "side": "party", "controller": "alice",
            "zone": "cellar", "hp": 20, "max_hp": 20, "ac": 14,
        },
        {
            "id": "bram", "name": "Bram", "side": "party", "controller": "alice",
            "zone": "nave", "hp": 30, "max_hp": 30, "ac": 14, "saves": {"wis": 1},
        },
    ]  # fmt: skip


async def test_web_restrains_then_spirit_guardians_end_it_and_hurt_a_foe(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 5, 10])  # initiative: the cleric 20, Aria 5, Bram 10
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter("Webs", ARENA, _roster())
        eid = created["encounter"]
        seat = await gm.request(
            "create_seat", encounter=eid, player="alice", creatures=["aria", "bram"]
        )
        await alice.join(eid, seat["token"])
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        # Only the cleric, Bram, Aria in this order.
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snap["active"] == "cleric"

        # Web at the cellar (30 ft away): Aria's Dexterity save, a 4, fails against 13.
        dice.push(4)
        done = await gm.command(
            eid, "cast", creature="cleric", spell="web", zone="cellar", targets=["aria"]
        )
        seen = await _events_until(gm, done["last_seq"])
        saves = [(e["creature"], e["ability"], e["roll"]["total"], e["dc"], e["success"])
                 for e in seen if e["type"] == "save_made"]  # fmt: skip
        assert saves == [("aria", "dex", 4, 13, False)]
        placed = [e["asset"] for e in seen if e["type"] == "asset_placed"]
        assert [(a["id"], a["zone"], a["tags"]) for a in placed] == [
            ("web-cellar", "cellar", ["spell_web"])
        ]
        seen_by_alice = (await alice.request("snapshot", encounter=eid))["snapshot"]
        assert [a["id"] for a in seen_by_alice["arena"]["assets"] if "spell_web" in a["tags"]] == [
            "web-cellar"
        ]
        assert "restrained" in seen_by_alice["creatures"]["aria"]["conditions"]

        # Bram's turn: he is held by nothing, so break_free is refused and changes nothing.
        await gm.command(eid, "end_turn", creature="cleric")
        before = (await gm.request("snapshot", encounter=eid))["snapshot"]["seq"]
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "break_free", creature="bram")
        assert refused.value.name == "invalid_params"
        assert (await gm.request("snapshot", encounter=eid))["snapshot"]["seq"] == before
        await alice.command(eid, "end_turn", creature="bram")
        await alice.command(eid, "end_turn", creature="aria")  # restrained: no new save

        # Round 2: spirit guardians; the web's concentration ends with the new one.
        done = await gm.command(eid, "cast", creature="cleric", spell="spirit-guardians")
        seen = await _events_until(gm, done["last_seq"])
        assert [e["asset"] for e in seen if e["type"] == "asset_removed"] == ["web-cellar"]
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert "restrained" not in snap["creatures"]["aria"]["conditions"]
        guardians = [a for a in snap["arena"]["assets"] if "spell_spirit_guardians" in a["tags"]]
        assert [(a["id"], a["zone"]) for a in guardians] == [("spirit-guardians-cleric", "nave")]
        assert snap["creatures"]["cleric"]["resources"]["spell-slots-3"] == 0

        # Bram starts his turn in the cleric's zone: Wisdom 9 + 1 = 10 fails against 13;
        # 3d8 = 2 + 3 + 4 radiant.
        dice.push(9, 2, 3, 4)
        done = await gm.command(eid, "end_turn", creature="cleric")
        seen = await _events_until(gm, done["last_seq"])
        saves = [(e["creature"], e["ability"], e["roll"]["total"], e["dc"], e["success"])
                 for e in seen if e["type"] == "save_made"]  # fmt: skip
        assert saves == [("bram", "wis", 10, 13, False)]
        hurt = [(e["creature"], e["amount"], e["damage_type"])
                for e in seen if e["type"] == "damaged"]  # fmt: skip
        assert hurt == [("bram", 9, "radiant")]
        snap = (await alice.request("snapshot", encounter=eid))["snapshot"]
        assert snap["creatures"]["bram"]["hp"] == 21
