"""A reaction is the controller's choice, in a real server: Aria attacks a goblin boss
(``srd.goblin-boss``); the GM, who controls it, is prompted for its Redirect Attack
("When a creature the goblin can see targets it with an attack, the goblin chooses
another goblin within 5 feet of it. The two goblins swap places, and the chosen goblin
becomes the target instead."), the attack waits, and once the GM picks the goblin the
attack is rolled against the goblin instead."""

from __future__ import annotations

from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, ServerConfig

from zonekeep.protocol.client import ClientError
from zonekeep.sdk import ScriptedEntropy

ARIA: dict[str, Any] = {
    "id": "aria", "name": "Aria", "side": "party", "controller": "alice",
    "zone": "common_room", "hp": 30, "max_hp": 30, "ac": 15,
    "attacks": [{"name": "sword", "kind": "melee", "bonus": 4, "damage": "1d8+2",
                 "damage_type": "slashing"}],
}  # fmt: skip


async def _events_until(client: Any, last_seq: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < last_seq:
            seen.append(await client.notification("event"))
    return [n["event"] for n in seen]


async def test_the_goblin_boss_redirect_attack_is_a_gm_prompt_and_answered_swaps_the_goblin_in(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 10, 5])  # initiative: Aria, the boss, the goblin
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm, running.client() as alice:
        roster: list[dict[str, Any]] = [
            ARIA,
            {"compendium": "srd.goblin-boss", "id": "boss", "zone": "common_room"},
            {"compendium": "srd.goblin", "id": "gob", "zone": "common_room"},
        ]
        created = await gm.create_encounter("Redirect", "tavern", roster)
        eid = created["encounter"]
        ids = list(created["snapshot"]["creatures"])
        (boss,) = [c for c in ids if c.startswith("boss")]
        (gob,) = [c for c in ids if c.startswith("gob")]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        await alice.join(eid, seat["token"])
        gm.pending_notifications()
        # Aria attacks the boss: no die yet, the GM is prompted.
        sent = await alice.command(eid, "attack", creature="aria", target=boss, attack="sword")
        seen = await _events_until(gm, sent["last_seq"])
        assert [e["type"] for e in seen if e["type"] == "attack_made"] == []
        with trio.fail_after(helpers.deadline(5)):
            prompt = (await gm.notification("prompt"))["decision"]
        assert (prompt["kind"], prompt["controller"], prompt["creature"]) == (
            "redirect_attack",
            "gm",
            boss,
        )
        assert (prompt["options"], prompt["default"]) == ([gob, "decline"], ["decline"])
        # Alice is not asked, and cannot answer, nor act while the GM decides.
        assert [n for n in alice.pending_notifications() if n["method"] == "prompt"] == []
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "decide", decision=prompt["id"], choice=[gob])
        assert refused.value.name == "not_your_decision"
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "end_turn", creature="aria")
        assert refused.value.name == "decision_pending"
        # The GM picks the goblin: 15 + 4 = 19 hits its AC 15, 1d8+2 = 5 + 2.
        dice.push(15, 5)
        answered = await gm.command(eid, "decide", decision=prompt["id"], choice=[gob])
        seen = await _events_until(gm, answered["last_seq"])
        taken = [
            (e["creature"], e["action"], e["cost"]) for e in seen if e["type"] == "action_taken"
        ]
        assert taken == [(boss, "redirect-attack", "reaction")]
        made = [(e["attacker"], e["target"], e["roll"]["total"], e["hit"])
                for e in seen if e["type"] == "attack_made"]  # fmt: skip
        assert made == [("aria", gob, 19, True)]
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["pending"] == []
        assert (snapshot["creatures"][gob]["hp"], snapshot["creatures"][boss]["hp"]) == (0, 21)
        await alice.command(eid, "end_turn", creature="aria")  # play goes on
