"""Every request method and every notification of the protocol, end to end.

The servers here roll loaded dice (every die shows its highest face), so initiative
order, hits and damage are exact: every attack is a critical hit.
"""

from __future__ import annotations

import copy
import itertools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Boom, Loaded, Running, ServerConfig, creatures, start_server

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol import PROTOCOL_VERSION
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import EVENT_TYPES
from zonekeep.server._visibility import sheet_hidden

MakeServer = Callable[..., Any]

DOCUMENTED_OPTIONS = (
    "round_seconds",
    "surprise",
    "reaction_seconds",
    "flanking",
    "adjacency",
    "size_limits",
    "back_to_back",
    "auto_end",
)


async def note(client: ZonekeepClient, method: str | None = None) -> dict[str, Any]:
    with trio.fail_after(helpers.deadline(5)):
        return await client.notification(method)


async def events(client: ZonekeepClient, count: int) -> list[dict[str, Any]]:
    """The next ``count`` event notifications (failing on any other notification)."""
    found = []
    for _ in range(count):
        message = await note(client)
        assert "seq" in message and "event" in message, message
        found.append(message)
    return found


def roster() -> list[dict[str, Any]]:
    """Two heroes (given to their players by create_seat) and a sturdy goblin in the bar."""
    found = [c for c in creatures() if c["id"] != "ogre"]
    for c in found:
        c["controller"] = "gm"
    found[2].update(hp=30, max_hp=30, zone="bar")
    return found


async def loaded(make_server: MakeServer, **config: Any) -> Running:
    running: Running = await make_server(ServerConfig(port=0, **config), entropy=Loaded())
    return running


# -- hello ------------------------------------------------------------------------------------


async def test_hello_announces_version_capabilities_and_limits(running: Running) -> None:
    async with running.client(hello=False) as client:
        with trio.fail_after(helpers.deadline(5)):
            welcome = await client.hello("methods-test", "9.9")
    assert welcome["protocol"] == PROTOCOL_VERSION == "1.7"
    assert welcome["server"]["name"] == "zonekeep"
    caps = welcome["capabilities"]
    engine = Engine()
    by_id = {c["id"]: c for c in caps["commands"]}
    assert set(by_id) == set(engine.commands)
    for cid, spec in engine.commands.items():
        announced = by_id[cid]
        assert announced["who"] == spec.who
        assert announced["summary"] == spec.summary
        assert announced["costs"] == list(spec.costs)
        assert announced["phases"] == list(spec.phases)
        assert announced["params"] == {
            name: {"type": p.type, "required": p.required, "description": p.description}
            for name, p in spec.params.items()
        }
    assert by_id["dash"]["params"] == {
        "creature": {"type": "creature", "required": True, "description": "the acting creature"}
    }
    assert by_id["move"]["params"]["feet"] == {
        "type": "integer",
        "required": True,
        "description": "distance in feet",
    }
    documented = {k: v for k, v in caps["options"].items() if k in DOCUMENTED_OPTIONS}
    assert documented == {
        "round_seconds": 6,
        "surprise": True,
        "reaction_seconds": 30.0,
        "flanking": True,
        "adjacency": True,
        "size_limits": True,
        "back_to_back": True,
        "auto_end": True,
    }
    assert set(caps["event_types"]) == set(EVENT_TYPES)
    assert "hidden" not in caps["event_types"]
    assert {"attack_made", "encounter_created", "zone_entered"} <= set(caps["event_types"])
    assert caps["arenas"] == ["cliffside", "swamp", "tavern"]
    assert welcome["limits"] == {
        "max_message_bytes": 16384,
        "rate_per_second": 20,
        "rate_burst": 40,
        "max_connections_per_encounter": 32,
        "ping_interval_seconds": 20,
        "idle_timeout_seconds": 300,
        "outgoing_queue": 256,
        "reaction_seconds": 30,
        "abuse_refusals": 40,
        "abuse_window_seconds": 10,
        "max_connections_per_token": 4,
        "max_spectators_per_encounter": 16,
        "reply_bytes_burst": 4_000_000,
        "reply_bytes_per_second": 200_000,
        "chat_max_chars": 500,
        "table_rate_per_second": 0.5,
        "table_rate_burst": 10,
    }


async def test_hello_announces_configured_limits(make_server: MakeServer) -> None:
    from e2e_support import Limits

    running = await make_server(
        ServerConfig(
            port=0,
            reaction_seconds=12,
            limits=Limits(max_message_bytes=5000, rate_burst=9, max_connections_per_encounter=3),
        )
    )
    async with running.client() as client:
        assert client.welcome is not None
        limits = client.welcome["limits"]
    assert limits["max_message_bytes"] == 5000
    assert limits["rate_burst"] == 9
    assert limits["max_connections_per_encounter"] == 3
    assert limits["reaction_seconds"] == 12


async def test_an_arena_added_while_the_server_runs_is_announced_at_the_next_hello(
    make_server: MakeServer, tmp_path: Path
) -> None:
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    tavern = Path(__file__).parents[1] / "examples" / "arenas" / "tavern.json"
    shutil.copy(tavern, arenas / "tavern.json")
    running = await make_server(ServerConfig(port=0, arena_dirs=(arenas,)))
    async with running.client() as first, running.client() as second:
        assert first.welcome is not None and second.welcome is not None
        assert first.welcome == second.welcome  # the same welcome, served again
        assert first.welcome["capabilities"]["arenas"] == ["tavern"]
    shutil.copy(tavern, arenas / "inn.json")
    async with running.client() as third:
        assert third.welcome is not None
        assert third.welcome["capabilities"]["arenas"] == ["inn", "tavern"]
        assert {k: v for k, v in third.welcome.items() if k != "capabilities"} == {
            k: v for k, v in first.welcome.items() if k != "capabilities"
        }
        with trio.fail_after(helpers.deadline(5)):
            created = await third.create_encounter("New arena", "inn", creatures())
        assert created["seq"] == 1


# -- create_encounter -------------------------------------------------------------------------


async def test_create_encounter_with_bundled_arena(running: Running) -> None:
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Bundled", "tavern", creatures())
        assert created["role"] == "gm"
        assert created["seq"] == 1
        assert isinstance(created["gm_token"], str) and len(created["gm_token"]) >= 22
        snap = created["snapshot"]
        assert snap["id"] == created["encounter"]
        assert snap["name"] == "Bundled"
        assert snap["phase"] == "surprise"
        assert snap["seq"] == 1
        assert snap["round"] == 0
        assert snap["arena"]["id"] == "tavern"
        assert list(snap["creatures"]) == ["aria", "bram", "gob", "ogre"]
        assert snap["creatures"]["ogre"]["hidden"] is True
        assert snap["creatures"]["aria"]["zone"] == "common_room"
        # No event notification for encounter_created.
        with trio.fail_after(helpers.deadline(5)):
            await gm.request("ping")
        assert gm.pending_notifications() == []


async def test_create_encounter_with_inline_arena_and_options(running: Running) -> None:
    arena = {
        "id": "yard",
        "name": "The yard",
        "zones": [
            {"id": "gate", "name": "Gate", "size": 30},
            {"id": "well", "name": "Well", "size": 30},
        ],
        "links": [{"a": "gate", "b": "well", "direction": "beside"}],
    }
    roster = [
        {"id": "aria", "name": "Aria", "side": "party", "zone": "gate"},
        {"id": "gob", "name": "Goblin", "side": "goblins", "zone": "well"},
    ]
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter(
                "Inline", arena, roster, options={"flanking": False}
            )
        snap = created["snapshot"]
        assert snap["arena"]["id"] == "yard"
        assert [z["id"] for z in snap["arena"]["zones"]] == ["gate", "well"]
        assert snap["options"]["flanking"] is False
        assert snap["options"]["surprise"] is True
        assert snap["creatures"]["gob"]["zone"] == "well"
        assert snap["creatures"]["aria"]["controller"] == "gm"


# -- join, create_seat, create_spectator_link --------------------------------------------------


async def test_join_with_and_without_last_seq(running: Running) -> None:
    async with running.client() as gm, running.client() as alice, running.client() as again:
        created = await gm.create_encounter("Join", "tavern", creatures())
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await gm.command(eid, "set_surprise", surprised=["gob"])
            await gm.command(eid, "place", positions={})
            joined = await alice.join(eid, seat["token"])
            assert joined["role"] == "player"
            assert joined["player"] == "alice"
            assert joined["seq"] == 3
            assert joined["events"] is None
            assert joined["snapshot"]["seq"] == 3
            assert joined["snapshot"]["phase"] == "initiative"
            assert joined["snapshot"]["surprised"] == ["gob"]

            resumed = await again.join(eid, seat["token"], last_seq=1)
            assert resumed["snapshot"] is None
            assert resumed["seq"] == 3
            assert resumed["events"] == [
                {"type": "surprise_determined", "surprised": ["gob"]},
                {
                    "type": "positions_established",
                    "positions": {
                        "aria": "common_room",
                        "bram": "common_room",
                        "gob": "common_room",
                    },
                },
            ]
            nothing_missed = await again.join(eid, seat["token"], last_seq=3)
            assert nothing_missed["events"] == []
            assert nothing_missed["snapshot"] is None

            gm_again = await again.join(eid, created["gm_token"])
            assert gm_again["role"] == "gm"
            assert gm_again["player"] is None
            assert "ogre" in gm_again["snapshot"]["creatures"]


async def test_create_seat_hands_over_creatures_with_override_events(running: Running) -> None:
    async with running.client() as gm, running.client() as bob:
        created = await gm.create_encounter("Seats", "tavern", roster())
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            seat = await gm.request(
                "create_seat", encounter=eid, player="bob", creatures=["bram", "gob"]
            )
        assert seat["player"] == "bob"
        assert isinstance(seat["token"], str) and seat["token"]
        pushed = gm.pending_notifications()  # pushed before the reply
        events = [(m["method"], m["params"]["seq"], m["params"]["event"]) for m in pushed]
        assert events == [
            (
                "event",
                seq,
                {"type": "override_applied", "by": "gm", "creature": cid, "field": f, "value": v},
            )
            for seq, (cid, f, v) in enumerate(
                [
                    ("bram", "controller", "bob"),
                    ("bram", "pc", True),
                    ("gob", "controller", "bob"),
                    ("gob", "pc", True),
                ],
                start=2,
            )
        ]
        with trio.fail_after(helpers.deadline(5)):
            # A creature the player already controls causes no event.
            second = await gm.request(
                "create_seat", encounter=eid, player="bob", creatures=["bram"]
            )
            assert second["token"] != seat["token"]
            assert gm.pending_notifications() == []
            joined = await bob.join(eid, seat["token"])  # the first token stays valid
            assert joined["snapshot"]["creatures"]["bram"]["controller"] == "bob"
            # Handed to a player, a GM's creature is a player character (it makes death saves).
            assert joined["snapshot"]["creatures"]["gob"]["pc"] is True
            assert joined["snapshot"]["creatures"]["gob"]["controller"] == "bob"
            assert joined["snapshot"]["creatures"]["aria"]["controller"] == "gm"
            assert joined["seq"] == 5


async def test_a_creature_handed_to_a_player_stays_a_pc_after_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """``pc`` follows ``create_seat`` by an event, so the stored log replays it."""
    first = await start_server(nursery, tmp_path / "data")
    async with first.client() as gm:
        created = await gm.create_encounter("Seats", "tavern", roster())
        eid = created["encounter"]
        assert created["snapshot"]["creatures"]["gob"]["pc"] is False
        with trio.fail_after(helpers.deadline(5)):
            seat = await gm.request("create_seat", encounter=eid, player="bob", creatures=["gob"])
    await first.server.shutdown()

    second = await start_server(nursery, tmp_path / "data")
    async with second.client() as bob:
        with trio.fail_after(helpers.deadline(5)):
            joined = await bob.join(eid, seat["token"])
    gob = joined["snapshot"]["creatures"]["gob"]
    assert (gob["controller"], gob["pc"]) == ("bob", True)


async def test_create_spectator_link_gives_a_watching_seat(running: Running) -> None:
    async with running.client() as gm, running.client() as watcher:
        eid = (await gm.create_encounter("Watch", "tavern", creatures()))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            link = await gm.request("create_spectator_link", encounter=eid)
            assert set(link) == {"token"}
            joined = await watcher.join(eid, link["token"])
            assert joined["role"] == "spectator"
            assert joined["player"] is None
            assert "ogre" not in joined["snapshot"]["creatures"]
            await gm.command(eid, "set_surprise", surprised=[])
        assert (await note(watcher, "event"))["seq"] == 2
        with trio.fail_after(helpers.deadline(5)):
            acts = await watcher.request("actions", encounter=eid, creature="aria")
        assert (acts["creature"], acts["actions"], acts["ending"]) == ("aria", [], None)
        assert {d["code"] for d in acts["details"]} == {"spectator_read_only"}


# -- command, actions, snapshot, leave, ping ---------------------------------------------------


async def test_events_have_gap_free_seqs_for_every_member(make_server: MakeServer) -> None:
    running = await loaded(make_server)
    async with running.client() as gm, running.client() as alice, running.client() as bob:
        eid = (await gm.create_encounter("Seqs", "tavern", roster()))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            a = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
            b = await gm.request("create_seat", encounter=eid, player="bob", creatures=["bram"])
            assert [n["params"]["seq"] for n in gm.pending_notifications()] == [
                2,
                3,
                4,
                5,
            ]  # controller and pc of each
            await alice.join(eid, a["token"], last_seq=5)
            await bob.join(eid, b["token"], last_seq=5)
        results = []
        with trio.fail_after(helpers.deadline(5)):
            results.append(await gm.command(eid, "set_surprise", surprised=[]))
            results.append(await gm.command(eid, "place", positions={}))
            results.append(await gm.command(eid, "roll_initiative"))
            results.append(await alice.command(eid, "dash", creature="aria"))
            results.append(await alice.command(eid, "communicate", creature="aria", text="Hi!"))
            results.append(await alice.command(eid, "end_turn", creature="aria"))
            results.append(await gm.command(eid, "dodge", creature="gob"))
            results.append(await gm.command(eid, "end_turn", creature="gob"))
            results.append(await bob.command(eid, "disengage", creature="bram"))
            results.append(await bob.command(eid, "end_turn", creature="bram"))
        # The results tile the seqs without gaps.
        assert results[0]["first_seq"] == 6
        for before, after in itertools.pairwise(results):
            assert after["first_seq"] == before["last_seq"] + 1
            assert after["last_seq"] >= after["first_seq"]
        last = results[-1]["last_seq"]
        seen = {}
        for name, client in (("gm", gm), ("alice", alice), ("bob", bob)):
            got = await events(client, last - 5)
            assert [m["seq"] for m in got] == list(range(6, last + 1)), name
            assert all(m["encounter"] == eid for m in got)
            seen[name] = [m["event"] for m in got]
        assert seen["gm"] == seen["alice"] == seen["bob"]
        types = [e["type"] for e in seen["gm"]]
        assert types[:5] == [
            "surprise_determined",
            "positions_established",
            "initiative_rolled",
            "round_started",
            "turn_started",
        ]
        assert seen["gm"][4] == {"type": "turn_started", "creature": "aria", "slot": 0, "member": 0}
        assert types[-4:] == ["turn_ended", "round_ended", "round_started", "turn_started"]
        assert seen["gm"][-1] == {
            "type": "turn_started",
            "creature": "aria",
            "slot": 0,
            "member": 0,
        }
        with trio.fail_after(helpers.deadline(5)):
            snap = await gm.request("snapshot", encounter=eid)
        assert snap["seq"] == last == snap["snapshot"]["seq"]


async def test_command_result_and_events_before_reply(running: Running) -> None:
    async with running.client() as gm:
        eid = (await gm.create_encounter("Order", "tavern", creatures()))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            result = await gm.command(eid, "add_note", text="Rain on the roof.")
        assert result == {"first_seq": 2, "last_seq": 2}
        pushed = gm.pending_notifications()  # already there when the reply arrived
        assert len(pushed) == 1
        assert pushed[0]["method"] == "event"
        assert pushed[0]["params"]["seq"] == 2
        event = pushed[0]["params"]["event"]
        assert event["type"] == "note_added"
        assert event["note"]["text"] == "Rain on the roof."
        assert event["note"]["hidden"] is False


async def test_actions_lists_what_a_seat_may_do(make_server: MakeServer) -> None:
    running = await loaded(make_server)
    async with running.client() as gm, running.client() as alice:
        eid = (await gm.create_encounter("Actions", "tavern", roster()))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            seat = await gm.request(
                "create_seat", encounter=eid, player="alice", creatures=["aria"]
            )
            await alice.join(eid, seat["token"])
            before = await alice.request("actions", encounter=eid, creature="aria")
            assert (before["creature"], before["actions"]) == ("aria", [])  # not in turns yet
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            mine = await alice.request("actions", encounter=eid, creature="aria")
            assert mine["creature"] == "aria"
            assert {"end_turn", "dash", "disengage", "dodge", "attack", "move", "enter"} <= set(
                mine["actions"]
            )
            assert "release_readied" not in mine["actions"]
            others = await alice.request("actions", encounter=eid, creature="bram")
            assert (others["creature"], others["actions"]) == ("bram", [])
            await alice.command(eid, "dash", creature="aria")
            after = await alice.request("actions", encounter=eid, creature="aria")
            assert "dash" not in after["actions"]
            assert "end_turn" in after["actions"]
            gm_view = await gm.request("actions", encounter=eid, creature="gob")
            assert gm_view["actions"] == []  # not the goblin's turn


async def test_snapshot_leave_and_ping(running: Running) -> None:
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter("Leave", "tavern", creatures())
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            assert await gm.request("ping") == {}
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await alice.join(eid, seat["token"])
            snap = await alice.request("snapshot", encounter=eid)
            assert snap["seq"] == 1
            expected = copy.deepcopy(created["snapshot"])
            del expected["creatures"]["ogre"]
            # Alice sees the goblin's (an enemy's) hit points as a word, and no temporary ones.
            expected["creatures"]["gob"].update(hp="unhurt", max_hp=None, temp_hp=None)
            # ...and no stat block of a creature she does not control.
            for cid, creature in expected["creatures"].items():
                if creature["controller"] != "alice":
                    expected["creatures"][cid] = sheet_hidden(creature)
            assert snap["snapshot"] == expected
            assert await alice.request("leave", encounter=eid) == {}
            await gm.command(eid, "set_surprise", surprised=[])
            assert await alice.request("ping") == {}
        assert alice.pending_notifications() == []  # no events after leave
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await alice.request("snapshot", encounter=eid)
        assert (info.value.code, info.value.name) == (1008, "not_joined")
        with trio.fail_after(helpers.deadline(5)):
            rejoined = await alice.join(eid, seat["token"], last_seq=1)  # the token stays valid
        assert rejoined["events"] == [{"type": "surprise_determined", "surprised": []}]


async def test_ping_with_string_id_and_no_params(running: Running) -> None:
    async with running.client() as client:
        await client.send_raw('{"id": "keepalive-12", "method": "ping"}')
        reply = await note(client, "_unmatched")
    assert reply == {"id": "keepalive-12", "result": {}}


# -- notifications ------------------------------------------------------------------------------


async def test_prompt_for_opportunity_attack_has_deadline(make_server: MakeServer) -> None:
    running = await loaded(make_server, reaction_seconds=25)
    async with running.client() as gm, running.client() as alice:
        eid = (await gm.create_encounter("Prompt", "tavern", roster()))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            seat = await gm.request(
                "create_seat", encounter=eid, player="alice", creatures=["aria"]
            )
            await alice.join(eid, seat["token"], last_seq=2)
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"gob": "common_room"})
            await gm.command(eid, "roll_initiative")
            await alice.command(eid, "attack", creature="aria", target="gob")
            await alice.command(eid, "end_turn", creature="aria")
            alice.pending_notifications()
            result = await gm.command(eid, "enter", creature="gob", zones=["bar"])
        notes = alice.pending_notifications()
        assert [n["method"] for n in notes] == ["event"] * (len(notes) - 1) + ["prompt"]
        opened = [n["params"]["event"] for n in notes if n["method"] == "event"]
        assert [e["type"] for e in opened] == [
            "maneuver_started",
            "maneuver_updated",
            "decision_opened",
        ]
        prompt = notes[-1]["params"]
        assert prompt["encounter"] == eid
        assert prompt["decision"] == opened[-1]["decision"]
        decision = prompt["decision"]
        assert decision["kind"] == "opportunity_attack"
        assert decision["controller"] == "alice"
        assert decision["creature"] == "aria"
        assert decision["options"] == ["attack", "decline"]
        assert decision["default"] == ["decline"]
        assert decision["ordering"] is False
        assert 24 < prompt["deadline_seconds"] <= 25
        assert result["last_seq"] == notes[-2]["params"]["seq"]
        gm_prompt = await note(gm, "prompt")  # the GM is prompted too
        assert gm_prompt["decision"] == decision


async def test_reveal_pushes_snapshot_notification(running: Running) -> None:
    async with running.client() as gm, running.client() as alice:
        eid = (await gm.create_encounter("Reveal", "tavern", creatures()))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            joined = await alice.join(eid, seat["token"])
            assert "ogre" not in joined["snapshot"]["creatures"]
            await gm.command(eid, "override", creature="ogre", field="hidden", value=False)
        event = await note(alice)
        assert event["seq"] == 2
        assert event["event"] == {
            "type": "override_applied",
            "by": "gm",
            "creature": "ogre",
            "field": "hidden",
            "value": False,
        }
        pushed = await note(alice)
        assert set(pushed) == {"encounter", "seq", "snapshot"}
        assert pushed["seq"] == 2
        assert pushed["snapshot"]["creatures"]["ogre"]["name"] == "Lurking Ogre"
        assert pushed["snapshot"]["creatures"]["ogre"]["hidden"] is False
        with trio.fail_after(helpers.deadline(5)):
            await gm.request("ping")
        assert [n["method"] for n in gm.pending_notifications()] == ["event"]  # no snapshot


async def test_encounter_error_when_a_plugin_raises(make_server: MakeServer) -> None:
    running = await make_server(engine=Engine([*load_default_plugins(), Boom()]))
    async with running.client() as gm, running.client() as gm2:
        created = await gm.create_encounter("Boom", "tavern", creatures())
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            await gm2.join(eid, created["gm_token"])
            assert gm.welcome is not None
            assert "boom" in {c["id"] for c in gm.welcome["capabilities"]["commands"]}
            with pytest.raises(ClientError) as info:
                await gm.command(eid, "boom")
        assert (info.value.code, info.value.name) == (6002, "plugin_error")
        for client in (gm, gm2):
            crashed = await note(client)
            assert crashed["encounter"] == eid
            assert "boom" in crashed["message"]
            assert "Nothing changed" in crashed["message"]
        with trio.fail_after(helpers.deadline(5)):
            after = await gm.request("snapshot", encounter=eid)
            assert after["snapshot"] == created["snapshot"]
            # The encounter still works.
            assert await gm.command(eid, "set_surprise", surprised=[]) == {
                "first_seq": 2,
                "last_seq": 2,
            }


# -- a whole fight --------------------------------------------------------------------------


async def test_short_encounter_played_to_its_end(make_server: MakeServer) -> None:
    running = await loaded(make_server)
    async with running.client() as gm, running.client() as alice, running.client() as bob:
        eid = (await gm.create_encounter("Brawl", "tavern", roster()))["encounter"]

        async def send(client: ZonekeepClient, kind: str, **params: Any) -> list[dict[str, Any]]:
            with trio.fail_after(helpers.deadline(5)):
                result = await client.command(eid, kind, **params)
            got = await events(gm, result["last_seq"] - result["first_seq"] + 1)
            assert [m["seq"] for m in got] == list(
                range(result["first_seq"], result["last_seq"] + 1)
            )
            return [m["event"] for m in got]

        with trio.fail_after(helpers.deadline(5)):
            a = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
            b = await gm.request("create_seat", encounter=eid, player="bob", creatures=["bram"])
            await events(gm, 4)  # controller and pc of each
            await alice.join(eid, a["token"])
            await bob.join(eid, b["token"])

        assert [e["type"] for e in await send(gm, "set_surprise", surprised=[])] == [
            "surprise_determined"
        ]
        await send(gm, "place", positions={})
        rolled = await send(gm, "roll_initiative")
        assert [e["slot"] for e in rolled[0]["entries"]] == ["aria", "gob", "bram"]
        assert [e["total"] for e in rolled[0]["entries"]] == [23, 22, 21]
        assert rolled[1:] == [
            {"type": "round_started", "round": 1},
            {"type": "turn_started", "creature": "aria", "slot": 0, "member": 0},
        ]

        # Aria runs into the bar and hits the goblin (a critical: 2d6+2 = 14).
        entered = await send(alice, "enter", creature="aria", zones=["bar"])
        assert {
            "type": "zone_entered",
            "creature": "aria",
            "from_zone": "common_room",
            "to_zone": "bar",
            "cost": 30,
            "forced": False,
            "by": "",
        } in entered
        hit = await send(alice, "attack", creature="aria", target="gob")
        damaged = [e for e in hit if e["type"] == "damaged"]
        assert [(e["creature"], e["amount"], e["hp"]) for e in damaged] == [("gob", 14, 16)]
        assert any(e["type"] == "attack_made" and e["critical"] for e in hit)
        await send(alice, "end_turn", creature="aria")

        # The goblin flees to the common room; Aria takes her opportunity attack.
        alice.pending_notifications()
        fled = await send(gm, "enter", creature="gob", zones=["common_room"])
        assert fled[-1]["type"] == "decision_opened"
        prompt = await note(alice, "prompt")
        assert prompt["decision"]["kind"] == "opportunity_attack"
        assert (await note(gm))["decision"] == prompt["decision"]
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await bob.command(eid, "decide", decision=prompt["decision"]["id"], choice=["attack"])
        assert (info.value.code, info.value.name) == (3003, "not_your_decision")
        reacted = await send(alice, "decide", decision=prompt["decision"]["id"], choice=["attack"])
        assert [e["type"] for e in reacted] == [
            "decision_resolved",
            "action_taken",
            "attack_made",
            "damaged",
            "engagement_ended",
            "zone_entered",
            "maneuver_ended",
        ]
        assert reacted[4] == {
            "type": "engagement_ended",
            "creature": "gob",
            "enemy": "aria",
            "reason": "left the zone",
        }
        assert reacted[0]["by"] == "alice"
        assert reacted[2]["reaction"] is True
        assert (reacted[3]["creature"], reacted[3]["hp"]) == ("gob", 2)
        await send(gm, "end_turn", creature="gob")

        # Bram finishes it.
        finished = await send(bob, "attack", creature="bram", target="gob")
        assert finished[-1] == {
            "type": "encounter_ended",
            "reason": finished[-1]["reason"],
            "by": "rules",
        }
        with trio.fail_after(helpers.deadline(5)):
            snap = await bob.request("snapshot", encounter=eid)
        assert snap["snapshot"]["phase"] == "ended"
        assert snap["snapshot"]["creatures"]["gob"]["hp"] == "down"  # an enemy: a word
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await bob.command(eid, "end_turn", creature="bram")
        assert (info.value.code, info.value.name) == (4025, "encounter_over")
        # Every seat saw the same events to the end.
        for client in (alice, bob):
            seqs = [
                n["params"]["seq"] for n in client.pending_notifications() if n["method"] == "event"
            ]
            assert seqs[-1] == snap["seq"]
