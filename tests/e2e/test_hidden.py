"""Hidden creatures (the 'Lurking Ogre') and hidden notes never reach players or spectators."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Loaded, Running, ServerConfig, creatures

from zonekeep.protocol.client import ClientError, ZonekeepClient

MakeServer = Callable[..., Any]


def leaks(messages: Any) -> bool:
    text = json.dumps(messages).lower()
    return "ogre" in text or "secret" in text


async def error_of(client: ZonekeepClient, method: str, **params: Any) -> tuple[int, str, str]:
    with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
        await client.request(method, **params)
    return info.value.code, info.value.name, info.value.message


async def seat_all(
    gm: ZonekeepClient, alice: ZonekeepClient, watcher: ZonekeepClient, roster: list[dict[str, Any]]
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    created = await gm.create_encounter("Hidden", "tavern", roster)
    eid = created["encounter"]
    with trio.fail_after(helpers.deadline(5)):
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        joined = await alice.join(eid, seat["token"])
        link = await gm.request("create_spectator_link", encounter=eid)
        watched = await watcher.join(eid, link["token"])
    return eid, created, {"alice": joined, "spectator": watched, "token": seat["token"]}


async def test_hidden_creature_and_note_in_snapshots_events_and_replays(running: Running) -> None:
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, created, joins = await seat_all(gm, alice, watcher, creatures())
        assert "ogre" in created["snapshot"]["creatures"]
        for who in ("alice", "spectator"):
            snap = joins[who]["snapshot"]
            assert list(snap["creatures"]) == ["aria", "bram", "gob"]
            assert not leaks(snap)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(
                eid, "add_note", text="The secret door is behind the ogre.", hidden=True
            )
            await gm.command(eid, "add_note", text="It smells of ale.")
            await gm.command(eid, "set_surprise", surprised=["ogre", "gob"])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
        gm_events = {n["params"]["seq"]: n["params"]["event"] for n in gm.pending_notifications()}
        assert gm_events[2]["type"] == "note_added"
        assert gm_events[5]["positions"]["ogre"] == "common_room"
        assert "ogre" in {m for e in gm_events[6]["entries"] for m in e["members"]}
        for client in (alice, watcher):
            seen = [n["params"] for n in client.pending_notifications()]
            assert [(n["seq"], n["event"]["type"]) for n in seen][:5] == [
                (2, "hidden"),
                (3, "note_added"),
                (4, "surprise_determined"),
                (5, "positions_established"),
                (6, "initiative_rolled"),
            ]
            assert seen[0]["event"] == {"type": "hidden"}
            assert seen[2]["event"] == {"type": "surprise_determined", "surprised": ["gob"]}
            assert "ogre" not in seen[3]["event"]["positions"]
            assert {e["slot"] for e in seen[4]["event"]["entries"]} == {"aria", "gob", "bram"}
            assert not leaks(seen)
        with trio.fail_after(helpers.deadline(5)):
            for client in (alice, watcher):
                snap = await client.request("snapshot", encounter=eid)
                notes = list(snap["snapshot"]["notes"].values())
                assert [(n["text"], n["hidden"]) for n in notes] == [("It smells of ale.", False)]
                slots = {e["slot"] for e in snap["snapshot"]["initiative"]}
                assert slots == {"aria", "gob", "bram"}
                assert not leaks(snap)
            full = await gm.request("snapshot", encounter=eid)
            assert len(full["snapshot"]["notes"]) == 2
            assert "ogre" in full["snapshot"]["creatures"]
            # A replay from the start: encounter_created without the ogre, the note hidden.
            replay = await alice.join(eid, joins["token"], last_seq=0)
            assert replay["snapshot"] is None
            assert replay["seq"] == 8
            assert len(replay["events"]) == 8
            first = replay["events"][0]
            assert first["type"] == "encounter_created"
            assert [c["id"] for c in first["creatures"]] == ["aria", "bram", "gob"]
            assert replay["events"][1] == {"type": "hidden"}
            assert not leaks(replay)
            gm_replay = await gm.join(eid, created["gm_token"], last_seq=0)
            assert [c["id"] for c in gm_replay["events"][0]["creatures"]][-1] == "ogre"
            assert "secret" in json.dumps(gm_replay["events"][1])


async def test_hidden_creatures_turn_and_actions(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    roster = creatures()
    roster[3]["initiative_bonus"] = 10  # the ogre acts first (29)
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            gm_snap = await gm.request("snapshot", encounter=eid)
            assert gm_snap["snapshot"]["active"] == "ogre"
            snap = await alice.request("snapshot", encounter=eid)
        assert snap["snapshot"]["active"] is None
        assert snap["snapshot"]["resources"] is None
        seen = [n["params"]["event"] for n in alice.pending_notifications()]
        assert seen[-2:] == [{"type": "round_started", "round": 1}, {"type": "hidden"}]
        # It is the ogre's turn: the message names "someone".
        code, name, message = await error_of(
            alice, "command", encounter=eid, type="dash", params={"creature": "aria"}
        )
        assert (code, name) == (4005, "not_your_turn")
        assert message == "It is not Aria's turn (it is someone's turn)."
        gm_error = await error_of(
            gm, "command", encounter=eid, type="dash", params={"creature": "aria"}
        )
        assert gm_error[2] == "It is not Aria's turn (it is Lurking Ogre's turn)."
        # actions about the ogre: exactly as about a creature that does not exist.
        for client in (alice, watcher):
            hidden = await error_of(client, "actions", encounter=eid, creature="ogre")
            missing = await error_of(client, "actions", encounter=eid, creature="troll")
            assert hidden[:2] == missing[:2] == (4002, "unknown_creature")
            assert hidden[2] == missing[2].replace("troll", "ogre")
        with trio.fail_after(helpers.deadline(5)):
            assert (
                "dash" in (await gm.request("actions", encounter=eid, creature="ogre"))["actions"]
            )


async def player_names(
    client: ZonekeepClient, eid: str, kind: str, params: dict[str, Any], key: str
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    hidden = await error_of(
        client, "command", encounter=eid, type=kind, params={**params, key: "ogre"}
    )
    missing = await error_of(
        client, "command", encounter=eid, type=kind, params={**params, key: "troll"}
    )
    return hidden, (missing[0], missing[1], missing[2].replace("troll", "ogre"))


async def test_command_naming_the_ogre_on_own_turn_is_unknown_creature(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, creatures())
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="aria", field="controller", value="alice")
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")  # Aria's turn
        hidden, missing = await player_names(alice, eid, "attack", {"creature": "aria"}, "target")
        assert hidden[:2] == (4002, "unknown_creature")
        assert hidden[:2] == missing[:2]


async def test_command_naming_the_ogre_is_exactly_like_a_missing_id(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, creatures())
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="aria", field="controller", value="alice")
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")  # Aria's turn
        differing = []
        for kind, params, key in (
            ("attack", {"creature": "aria"}, "target"),  # her turn
            ("attack", {"creature": "bram"}, "target"),  # not her creature
            ("override", {"field": "hp", "value": 1}, "creature"),  # GM only
        ):
            hidden, missing = await player_names(alice, eid, kind, params, key)
            if hidden != missing:
                differing.append((kind, hidden, missing))
        assert differing == []


async def test_decision_about_hidden_creature_prompts_its_controller_and_the_gm(
    make_server: MakeServer,
) -> None:
    # docs/rules.md, "Rulings": the player who controls a hidden creature still sees it and plays it.
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    roster = creatures()
    roster[3].update(controller="alice", initiative_bonus=10)  # the ogre acts first
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="aria", field="controller", value="alice")
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
            await gm.command(eid, "attack", creature="ogre", target="bram")
            await gm.command(eid, "end_turn", creature="ogre")
            alice.pending_notifications()
            watcher.pending_notifications()
            await gm.command(eid, "end_turn", creature="aria")
            await gm.command(eid, "end_turn", creature="gob")
            # Bram leaves the common room: the ogre he is engaged with may react.
            result = await gm.command(eid, "enter", creature="bram", zones=["bar"])
            prompts = [n["params"] for n in gm.pending_notifications() if n["method"] == "prompt"]
            await alice.request("ping")
            await watcher.request("ping")
        about = {p["decision"]["creature"]: p["decision"] for p in prompts}
        assert set(about) == {"ogre"}
        assert about["ogre"]["controller"] == "alice"
        got = alice.pending_notifications()
        [prompt] = [n["params"] for n in got if n["method"] == "prompt"]
        assert prompt["decision"] == about["ogre"]
        seen = watcher.pending_notifications()
        assert [n["method"] for n in seen] == ["event"] * len(seen)  # no prompt at all
        assert seen[-1]["params"]["seq"] == result["last_seq"]
        assert not leaks(seen)
        with trio.fail_after(helpers.deadline(5)):
            snap = await alice.request("snapshot", encounter=eid)
            rejoined = await alice.join(eid, _joins["token"])
            await alice.request("ping")
            watched = await watcher.request("snapshot", encounter=eid)
        assert [d["id"] for d in snap["snapshot"]["pending"]] == [about["ogre"]["id"]]
        assert rejoined["snapshot"]["creatures"]["ogre"]["hidden"] is True
        again = alice.pending_notifications()
        assert [n["params"]["decision"]["id"] for n in again if n["method"] == "prompt"] == [
            about["ogre"]["id"]
        ]
        assert watched["snapshot"]["pending"] == []
        assert not leaks(watched)


async def test_controller_answers_its_hidden_creatures_decision(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    roster = creatures()
    roster[3].update(controller="alice", initiative_bonus=10)
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
            await gm.command(eid, "attack", creature="ogre", target="bram")
            for cid in ("ogre", "aria", "gob"):
                await gm.command(eid, "end_turn", creature=cid)
            await gm.command(eid, "enter", creature="bram", zones=["bar"])
            before = await gm.request("snapshot", encounter=eid)
        [decision] = before["snapshot"]["pending"]
        assert (decision["creature"], decision["controller"]) == ("ogre", "alice")
        watcher.pending_notifications()
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "decide", decision=decision["id"], choice=["decline"])
            after = await gm.request("snapshot", encounter=eid)
            await watcher.request("ping")
        assert after["snapshot"]["pending"] == []
        assert not leaks(watcher.pending_notifications())


async def test_hidden_mover_is_not_named_in_a_players_prompt(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    roster = creatures()
    roster[3]["initiative_bonus"] = 10  # the ogre acts first
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="aria", field="controller", value="alice")
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
            await gm.command(eid, "attack", creature="ogre", target="aria")
            await gm.command(eid, "enter", creature="ogre", zones=["kitchen"])
            gm_prompt = await gm.notification("prompt")
            assert "Lurking Ogre" in gm_prompt["decision"]["prompt"]
            await alice.request("ping")
            snap = await alice.request("snapshot", encounter=eid)
        got = alice.pending_notifications()
        assert not leaks(got)
        assert not leaks(snap)


async def test_reveal_pushes_snapshot_with_the_ogre(running: Running) -> None:
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _created, _joins = await seat_all(gm, alice, watcher, creatures())
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="ogre", field="hp", value=50)
            result = await gm.command(eid, "override", creature="ogre", field="hidden", value=False)
        for client in (alice, watcher):
            with trio.fail_after(helpers.deadline(5)):
                before = await client.notification()
                event = await client.notification()
                pushed = await client.notification()
            assert before == {"encounter": eid, "seq": 2, "event": {"type": "hidden"}}
            assert event["seq"] == result["last_seq"] == 3
            assert event["event"]["creature"] == "ogre"
            assert pushed["seq"] == 3
            ogre = pushed["snapshot"]["creatures"]["ogre"]
            # An enemy's hit points reach players and spectators as a word (50 of 59).
            assert (ogre["name"], ogre["hp"], ogre["hidden"]) == ("Lurking Ogre", "hurt", False)
            with trio.fail_after(helpers.deadline(5)):
                snap = await client.request("snapshot", encounter=eid)
            assert snap == {"seq": 3, "snapshot": pushed["snapshot"]}
        # Hiding it again: players get a snapshot without it.
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="ogre", field="hidden", value=True)
            hidden_event = await alice.notification()
            again = await alice.notification()
        assert hidden_event == {"encounter": eid, "seq": 4, "event": {"type": "hidden"}}
        assert "ogre" not in again["snapshot"]["creatures"]
