"""A hidden caster's spells hurt a player's creature without telling that player who
cast them (issue 31 follow-up; SPEC.md "Hidden information"): a GM-run priest, hidden,
casts spirit guardians, then moonbeam on the next round; Bram, a player's creature,
starts his turn among the guardians and fails his Wisdom save, then in the moonbeam
and fails his Constitution save. Nothing the player's seat receives (events, the snapshot) holds the
priest's id or name: not the damage's ``source``, not the save's, not the spells'
assets (named after their caster). The GM sees it all."""

from __future__ import annotations

import json
from typing import Any

import helpers
import trio
from e2e_support import Running, ServerConfig

from zonekeep.sdk import ScriptedEntropy

PRIEST, NAME = "veiled-priest", "Morwen"
ARENA: dict[str, Any] = {
    "id": "chapel",
    "name": "The chapel",
    "zones": [
        {"id": "nave", "name": "Nave", "size": 30},
        {"id": "cellar", "name": "Cellar", "size": 30},
    ],
    "links": [{"a": "nave", "b": "cellar", "direction": "beside"}],
}


def roster() -> list[dict[str, Any]]:
    casting = {
        "id": "spellcasting",
        "name": "Spellcasting",
        "kind": "action",
        "text": "5th-level cleric (Wisdom, save DC 13, +5 to hit): spirit guardians, moonbeam.",
        "params": {
            "ability": "wis",
            "dc": 13,
            "attack_bonus": 5,
            "slots": {"2": 2, "3": 1},
            "prepared": ["spirit-guardians", "moonbeam"],
        },
    }
    return [
        {
            "id": PRIEST, "name": NAME, "side": "foes", "zone": "nave", "hidden": True,
            "hp": 30, "max_hp": 30, "ac": 15, "abilities": {"wis": 3},
            "actions": [casting],
        },
        {
            "id": "bram", "name": "Bram", "side": "party", "controller": "alice",
            "zone": "nave", "hp": 60, "max_hp": 60, "ac": 14, "saves": {"wis": 1, "con": 1},
        },
    ]  # fmt: skip


async def events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return [n["event"] for n in seen]


def leaks(value: Any) -> list[str]:
    text = json.dumps(value)
    return [word for word in (PRIEST, NAME) if word in text]


async def test_a_hidden_casters_spell_damage_does_not_name_it_to_the_player(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 10])  # initiative: the priest 20, Bram 10
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter("Veiled", ARENA, roster())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice", creatures=["bram"])
        joined = await alice.join(eid, seat["token"])
        received: list[Any] = [joined]
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snap["active"] == PRIEST and snap["creatures"][PRIEST]["hidden"]

        await gm.command(eid, "cast", creature=PRIEST, spell="spirit-guardians")
        # Bram starts his turn among the guardians: Wisdom 4 + 1 fails; 3d8 = 2 + 3 + 4.
        dice.push(4, 2, 3, 4)
        done = await gm.command(eid, "end_turn", creature=PRIEST)
        by_gm = await events_until(gm, done["last_seq"])
        assert [
            (e["creature"], e["amount"], e["source"]) for e in by_gm if e["type"] == "damaged"
        ] == [("bram", 9, PRIEST)]  # the GM sees who did it
        seen = await events_until(alice, done["last_seq"])
        received += seen
        # The damage names the priest (its ``source``): Bram's player gets the event as
        # {"type": "hidden"} (SPEC.md "Hidden information"), the save with its source
        # scrubbed, and Bram's hit points in the snapshot.
        assert [e["type"] for e in seen if e["type"] in ("damaged", "save_made")] == ["save_made"]
        assert [e["source"] for e in seen if e["type"] == "save_made"] == ["someone"]
        snap = (await alice.request("snapshot", encounter=eid))["snapshot"]
        received.append(snap)
        assert snap["creatures"]["bram"]["hp"] == 51
        await alice.command(eid, "end_turn", creature="bram")

        # Round 2: moonbeam on the nave (spirit guardians' concentration ends); Bram
        # starts his turn in it: Constitution 4 + 1 fails; 2d10 = 5 + 6.
        await gm.command(eid, "cast", creature=PRIEST, spell="moonbeam", zone="nave")
        dice.push(4, 5, 6)
        done = await gm.command(eid, "end_turn", creature=PRIEST)
        by_gm = await events_until(gm, done["last_seq"])
        assert [
            (e["creature"], e["amount"], e["source"]) for e in by_gm if e["type"] == "damaged"
        ] == [("bram", 11, PRIEST)]
        seen = await events_until(alice, done["last_seq"])
        received += seen
        assert [e["type"] for e in seen if e["type"] in ("damaged", "save_made")] == ["save_made"]
        snap = (await alice.request("snapshot", encounter=eid))["snapshot"]
        received.append(snap)
        assert snap["creatures"]["bram"]["hp"] == 40
        assert snap["arena"]["assets"] == []  # the spells' assets are named after the priest
        received += alice.pending_notifications()
        assert leaks(received) == []
