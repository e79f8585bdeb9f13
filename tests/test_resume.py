"""Reconnecting and resuming: missed events in order, snapshots, prompts still open."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import helpers
import trio
from e2e_support import Loaded, Running, ServerConfig, sturdy_goblin_roster

from zonekeep.protocol.client import ZonekeepClient
from zonekeep.server._visibility import sheet_hidden

MakeServer = Callable[..., Any]


async def start(running: Running, gm: ZonekeepClient) -> tuple[str, str]:
    """An encounter at Aria's first turn; returns its id and alice's token."""
    with trio.fail_after(helpers.deadline(5)):
        eid: str = (await gm.create_encounter("Resume", "tavern", sturdy_goblin_roster()))[
            "encounter"
        ]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
    return eid, seat["token"]


def gm_events(gm: ZonekeepClient) -> dict[int, dict[str, Any]]:
    return {
        n["params"]["seq"]: n["params"]["event"]
        for n in gm.pending_notifications()
        if n["method"] == "event"
    }


async def test_resume_mid_turn_gets_exactly_the_missed_events(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm:
        eid, token = await start(running, gm)
        seen = gm_events(gm)
        async with running.client() as alice:
            with trio.fail_after(helpers.deadline(5)):
                joined = await alice.join(eid, token)
                last_seq = joined["seq"]
                result = await alice.command(eid, "move", creature="aria", feet=10)
                pushed = await alice.notification("event")
            assert pushed["seq"] == result["first_seq"] == last_seq + 1
            last_seq = result["last_seq"]
        # alice is gone; the turn goes on without her.
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "add_note", text="Aria's player lost her connection.")
            await gm.command(eid, "dash", creature="aria")
            final = await gm.command(eid, "move", creature="aria", feet=5)
        seen.update(gm_events(gm))
        assert len(running.server.rooms[eid].members) == 1
        async with running.client() as alice:
            with trio.fail_after(helpers.deadline(5)):
                resumed = await alice.join(eid, token, last_seq=last_seq)
            assert resumed["snapshot"] is None
            assert resumed["seq"] == final["last_seq"]
            assert resumed["events"] == [
                seen[s] for s in range(last_seq + 1, final["last_seq"] + 1)
            ]
            assert [e["type"] for e in resumed["events"]] == [
                "note_added",
                "action_taken",
                "dashed",
                "moved",
            ]
            # ... and plays on: live events continue from seq + 1.
            with trio.fail_after(helpers.deadline(5)):
                result = await alice.command(eid, "end_turn", creature="aria")
                live = await alice.notification("event")
            assert live["seq"] == result["first_seq"] == resumed["seq"] + 1
            assert live["event"] == {"type": "turn_ended", "creature": "aria"}
            with trio.fail_after(helpers.deadline(5)):
                snap = await alice.request("snapshot", encounter=eid)
            assert snap["snapshot"]["active"] == "gob"
            assert snap["snapshot"]["resources"]["movement_spent"] == 0


async def test_join_with_last_seq_beyond_current_gets_a_snapshot(running: Running) -> None:
    async with running.client() as gm, running.client() as alice:
        eid, token = await start(running, gm)
        with trio.fail_after(helpers.deadline(5)):
            current = await gm.request("snapshot", encounter=eid)
            joined = await alice.join(eid, token, last_seq=current["seq"] + 5)
        assert joined["events"] is None
        assert joined["seq"] == current["seq"]
        # Alice sees the goblin's (an enemy's) hit points as a word.
        expected = {**current["snapshot"], "creatures": dict(current["snapshot"]["creatures"])}
        expected["creatures"]["gob"] = {**expected["creatures"]["gob"], "hp": "unhurt"}
        expected["creatures"]["gob"]["max_hp"] = None
        expected["creatures"]["gob"]["temp_hp"] = None  # hidden with its hit points
        # ...and no stat block of a creature she does not control.
        for cid, creature in expected["creatures"].items():
            if creature["controller"] != "alice":
                expected["creatures"][cid] = sheet_hidden(creature)
        assert joined["snapshot"] == expected


async def test_reconnect_mid_prompt_and_answer_it(make_server: MakeServer) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    async with running.client() as gm:
        eid, token = await start(running, gm)
        async with running.client() as alice:
            with trio.fail_after(helpers.deadline(5)):
                joined = await alice.join(eid, token, last_seq=0)
                await alice.command(eid, "attack", creature="aria", target="gob")
                await alice.command(eid, "end_turn", creature="aria")
                entered = await gm.command(eid, "enter", creature="gob", zones=["bar"])
                first = await alice.notification("prompt")  # after the enter's events
            assert joined["seq"] == 6
            assert first["deadline_seconds"] == 30
            last_seq = entered["last_seq"]
        async with running.client() as alice:
            with trio.fail_after(helpers.deadline(5)):
                resumed = await alice.join(eid, token, last_seq=last_seq)
                again = await alice.notification("prompt")
            assert resumed["events"] == []
            assert again["decision"] == first["decision"]
            assert 0 < again["deadline_seconds"] < first["deadline_seconds"]
            with trio.fail_after(helpers.deadline(5)):
                result = await alice.command(
                    eid, "decide", decision=first["decision"]["id"], choice=["attack"]
                )
            got = [n["params"] for n in alice.pending_notifications() if n["method"] == "event"]
            assert [n["seq"] for n in got] == list(
                range(result["first_seq"], result["last_seq"] + 1)
            )
            events = [n["event"] for n in got]
            assert [e["type"] for e in events] == [
                "decision_resolved",
                "action_taken",
                "attack_made",
                "damaged",
                "engagement_ended",
                "zone_entered",
                "maneuver_ended",
            ]
            assert events[0] == {
                "type": "decision_resolved",
                "decision": first["decision"]["id"],
                "choice": ["attack"],
                "by": "alice",
                "defaulted": False,
            }
            assert (events[2]["attacker"], events[2]["target"], events[2]["reaction"]) == (
                "aria",
                "gob",
                True,
            )
            # Two critical hits of 2d6+2: 60 - 14 - 14 = 32, which Alice sees as "hurt".
            assert (events[3]["creature"], events[3]["hp"]) == ("gob", "hurt")


async def test_prompts_come_right_after_the_join_reply(make_server: MakeServer) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    async with running.client() as gm, running.client() as alice:
        eid, token = await start(running, gm)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="aria", field="controller", value="alice")
            await gm.command(eid, "attack", creature="aria", target="gob")
            await gm.command(eid, "end_turn", creature="aria")
            await gm.command(eid, "enter", creature="gob", zones=["bar"])
            await alice.send_raw(
                json.dumps(
                    {"id": "rejoin", "method": "join", "params": {"encounter": eid, "token": token}}
                )
            )
            first = await alice._notes.receive()  # the whole message, to see its kind
            second = await alice._notes.receive()
        assert (first["method"], second["method"]) == ("_unmatched", "prompt")
        assert first["params"]["id"] == "rejoin"
