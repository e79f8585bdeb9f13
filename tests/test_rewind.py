"""GM rewind over the protocol: everyone gets the ``rewound`` event and a fresh snapshot
of the earlier state, the log keeps everything, play goes on, and only the GM may do it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Loaded, Running, ServerConfig, sturdy_goblin_roster

from zonekeep.protocol.client import ClientError, ZonekeepClient

MakeServer = Callable[..., Any]


def without_seq(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in snapshot.items() if k != "seq"}


async def table(running: Running, gm: ZonekeepClient, *others: ZonekeepClient) -> dict[str, Any]:
    """An encounter at Aria's first turn; alice (and then a spectator) joined if given."""
    with trio.fail_after(helpers.deadline(5)):
        created = await gm.create_encounter("Rewind", "tavern", sturdy_goblin_roster())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        link = await gm.request("create_spectator_link", encounter=eid)
        tokens = [seat["token"], link["token"]]
        for client, token in zip(others, tokens, strict=False):
            await client.join(eid, token)
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
    return {
        "eid": eid,
        "gm": created["gm_token"],
        "alice": seat["token"],
        "spectator": link["token"],
    }


async def rewind_notes(client: ZonekeepClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """The next event and snapshot notifications, in the order they must come."""
    with trio.fail_after(helpers.deadline(5)):
        while True:
            message = await client._notes.receive()
            if message["method"] == "event":
                event = message["params"]
                if event["event"]["type"] == "rewound":
                    break
        following = await client._notes.receive()
    assert following["method"] == "snapshot", following
    return event, following["params"]


async def test_rewind_restores_the_state_for_everyone_and_keeps_the_log(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        t = await table(running, gm, alice, watcher)
        eid = t["eid"]
        with trio.fail_after(helpers.deadline(5)):
            # The state to come back to, as each seat sees it.
            at = {
                name: await c.request("snapshot", encounter=eid)
                for name, c in (("gm", gm), ("alice", alice), ("watcher", watcher))
            }
            to_seq = at["gm"]["seq"]
            assert at["alice"]["seq"] == at["watcher"]["seq"] == to_seq
            hit = await alice.command(eid, "attack", creature="aria", target="gob")
            await alice.command(eid, "move", creature="aria", feet=10)
            await gm.command(eid, "add_note", text="A chair breaks.")
            later = await gm.request("snapshot", encounter=eid)
        assert later["snapshot"]["creatures"]["gob"]["hp"] == 60 - 14
        assert later["snapshot"]["resources"]["movement_spent"] == 10
        before_rewind = {
            n["params"]["seq"]: n["params"]["event"]
            for n in gm.pending_notifications()
            if n["method"] == "event"
        }
        assert max(before_rewind) == later["seq"]
        with trio.fail_after(helpers.deadline(5)):
            result = await gm.request("rewind", encounter=eid, to_seq=to_seq)
        assert result == {"seq": later["seq"] + 1}
        for name, client in (("gm", gm), ("alice", alice), ("watcher", watcher)):
            event, snap = await rewind_notes(client)
            assert event == {
                "encounter": eid,
                "seq": result["seq"],
                "event": {"type": "rewound", "to_seq": to_seq, "by": "gm", "undone_rolls": []},
            }, name
            assert (snap["encounter"], snap["seq"]) == (eid, result["seq"])
            assert snap["snapshot"]["seq"] == result["seq"]
            assert without_seq(snap["snapshot"]) == without_seq(at[name]["snapshot"]), name
        with trio.fail_after(helpers.deadline(5)):
            now = await gm.request("snapshot", encounter=eid)
        assert now["seq"] == result["seq"]
        assert without_seq(now["snapshot"]) == without_seq(at["gm"]["snapshot"])
        assert now["snapshot"]["creatures"]["gob"]["hp"] == 60
        assert now["snapshot"]["notes"] == {}

        # The audit log keeps everything: the undone events and the rewound event.
        async with running.client() as auditor:
            with trio.fail_after(helpers.deadline(5)):
                log = await auditor.join(eid, t["gm"], last_seq=0)
        assert log["seq"] == result["seq"]
        assert len(log["events"]) == result["seq"]
        for seq, event in before_rewind.items():
            assert log["events"][seq - 1] == event
        undone = [e["type"] for e in log["events"][to_seq : later["seq"]]]
        assert "attack_made" in undone and "note_added" in undone
        assert log["events"][-1] == {
            "type": "rewound",
            "to_seq": to_seq,
            "by": "gm",
            "undone_rolls": [],
        }

        # Play goes on from the rewound state, at the next seq.
        with trio.fail_after(helpers.deadline(5)):
            again = await alice.command(eid, "attack", creature="aria", target="gob")
            live = await watcher.notification("event")
            after = await gm.request("snapshot", encounter=eid)
        assert again["first_seq"] == result["seq"] + 1 == live["seq"]
        # The move was undone: her movement is unspent, her action is spent again.
        assert after["snapshot"]["resources"]["movement_spent"] == 0
        assert (
            after["snapshot"]["resources"]["actions"] == later["snapshot"]["resources"]["actions"]
        )
        # One critical hit of 2d6+2 (as before the rewind), not two.
        assert hit["first_seq"] > to_seq
        assert after["snapshot"]["creatures"]["gob"]["hp"] == 60 - 14


@pytest.mark.parametrize("who", ["alice", "spectator"])
async def test_only_the_gm_may_rewind(running: Running, who: str) -> None:
    async with running.client() as gm, running.client() as other:
        t = await table(running, gm)
        eid = t["eid"]
        with trio.fail_after(helpers.deadline(5)):
            await other.join(eid, t[who])
            before = await gm.request("snapshot", encounter=eid)
            with pytest.raises(ClientError) as info:
                await other.request("rewind", encounter=eid, to_seq=2)
            after = await gm.request("snapshot", encounter=eid)
        expected = (3002, "gm_only") if who == "alice" else (3004, "spectator_read_only")
        assert (info.value.code, info.value.name) == expected
        assert after == before
        assert [n for n in other.pending_notifications() if n["method"] == "event"] == []


@pytest.mark.parametrize("offset", [0, 1, 50])
async def test_to_seq_must_be_an_earlier_event(running: Running, offset: int) -> None:
    async with running.client() as gm:
        eid = (await table(running, gm))["eid"]
        with trio.fail_after(helpers.deadline(5)):
            before = await gm.request("snapshot", encounter=eid)
            with pytest.raises(ClientError) as info:
                await gm.request("rewind", encounter=eid, to_seq=before["seq"] + offset)
            after = await gm.request("snapshot", encounter=eid)
        assert (info.value.code, info.value.name) == (1005, "invalid_params")
        assert after == before


async def test_to_seq_zero_is_invalid(running: Running) -> None:
    async with running.client() as gm:
        eid = (await table(running, gm))["eid"]
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await gm.request("rewind", encounter=eid, to_seq=0)
        assert (info.value.code, info.value.name) == (1005, "invalid_params")


async def test_rewinding_over_a_pending_decision_removes_it(make_server: MakeServer) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    async with running.client() as gm, running.client() as alice:
        t = await table(running, gm, alice)
        eid = t["eid"]
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "attack", creature="aria", target="gob")
            await alice.command(eid, "end_turn", creature="aria")
            before_enter = await gm.request("snapshot", encounter=eid)
            await gm.command(eid, "enter", creature="gob", zones=["bar"])
            prompt = await alice.notification("prompt")
        room = running.server.rooms[eid]
        assert prompt["decision"]["id"] in room.deadlines
        with trio.fail_after(helpers.deadline(5)):
            result = await gm.request("rewind", encounter=eid, to_seq=before_enter["seq"])
            _, snap = await rewind_notes(alice)
        assert snap["snapshot"]["pending"] == []
        assert snap["snapshot"]["maneuver"] is None
        assert room.deadlines == {}  # no default will fire for it later
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await alice.command(eid, "decide", decision=prompt["decision"]["id"], choice=["attack"])
        assert info.value.code >= 4000
        # The goblin's turn goes on: it can enter the bar again (and be prompted again).
        with trio.fail_after(helpers.deadline(5)):
            entered = await gm.command(eid, "enter", creature="gob", zones=["bar"])
            again = await alice.notification("prompt")
        assert entered["first_seq"] == result["seq"] + 1
        assert again["decision"]["kind"] == "opportunity_attack"
        assert 29 < again["deadline_seconds"] <= 30
