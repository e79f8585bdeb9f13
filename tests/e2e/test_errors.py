"""Every error code a client can provoke: its number, name, sentence and id; nothing changes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Boom, Limits, Loaded, Running, ServerConfig, creatures

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol import PROTOCOL_VERSION
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk.engine import Engine

MakeServer = Callable[..., Any]


def assert_sentence(message: str) -> None:
    """Words for a person (their wording may change; that there are some may not)."""
    assert isinstance(message, str)
    assert len(message) >= 10 and " " in message.strip(), message


_RAW_IDS = iter(range(10_000, 1_000_000))


async def refused(
    client: ZonekeepClient, method: str, code: int, name: str, /, **params: Any
) -> str:
    """Send a request that must fail with ``code``/``name``; return the error's message."""
    if {"name", "client", "method"} & set(params):
        # ZonekeepClient.request cannot send these as params: send the frame ourselves.
        rid = f"raw-{next(_RAW_IDS)}"
        await client.send_raw(json.dumps({"id": rid, "method": method, "params": params}))
        with trio.fail_after(helpers.deadline(5)):
            reply = await client.notification()
        assert reply.get("id") == rid, reply
        error = reply["error"]
        assert (error["code"], error["name"]) == (code, name), error["message"]
        assert_sentence(error["message"])
        message: str = error["message"]
        return message
    with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
        await client.request(method, **params)
    assert (info.value.code, info.value.name) == (code, name), info.value.message
    assert_sentence(info.value.message)
    return info.value.message


async def raw(client: ZonekeepClient, frame: str | bytes) -> dict[str, Any]:
    """Send a frame as is; return the (unmatched) reply."""
    await client.send_raw(frame)
    with trio.fail_after(helpers.deadline(5)):
        return await client.notification("_unmatched")


async def raw_error(
    client: ZonekeepClient, frame: str | bytes, code: int, name: str, rid: Any
) -> str:
    reply = await raw(client, frame)
    assert set(reply) == {"id", "error"}
    assert reply["id"] == rid
    assert (reply["error"]["code"], reply["error"]["name"]) == (code, name)
    assert_sentence(reply["error"]["message"])
    message: str = reply["error"]["message"]
    return message


async def still_usable(client: ZonekeepClient) -> None:
    with trio.fail_after(helpers.deadline(5)):
        assert await client.request("ping") == {}


async def snap(client: ZonekeepClient, eid: str) -> dict[str, Any]:
    with trio.fail_after(helpers.deadline(5)):
        return await client.request("snapshot", encounter=eid)


async def refused_command(
    gm: ZonekeepClient,
    sender: ZonekeepClient,
    eid: str,
    code: int,
    name: str,
    kind: str,
    /,
    **params: Any,
) -> str:
    """A command that must be refused, changing nothing and pushing no event."""
    gm.pending_notifications()
    sender.pending_notifications()
    before = await snap(gm, eid)
    message = await refused(sender, "command", code, name, encounter=eid, type=kind, params=params)
    assert await snap(gm, eid) == before
    assert gm.pending_notifications() == []
    assert sender.pending_notifications() == []
    return message


async def setup(gm: ZonekeepClient, alice: ZonekeepClient, bob: ZonekeepClient) -> str:
    """An encounter in its first turn (Aria's), with alice and bob seated."""
    eid: str = (await gm.create_encounter("Errors", "tavern", creatures()))["encounter"]
    with trio.fail_after(helpers.deadline(5)):
        for client, player in ((alice, "alice"), (bob, "bob")):
            seat = await gm.request("create_seat", encounter=eid, player=player)
            await client.join(eid, seat["token"])
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
    return eid


# -- 1xxx: protocol ----------------------------------------------------------------------------


async def test_parse_error_binary_invalid_json_and_non_objects(running: Running) -> None:
    async with running.client() as client:
        assert "Binary" in await raw_error(client, b'{"id": 1}', 1000, "parse_error", None)
        message = await raw_error(client, '{"id": 1,\n "method": }', 1000, "parse_error", None)
        assert "line 2" in message and "column" in message
        await raw_error(client, '[{"id": 1, "method": "ping"}]', 1000, "parse_error", None)
        await raw_error(client, '"ping"', 1000, "parse_error", None)
        await raw_error(client, "", 1000, "parse_error", None)
        await still_usable(client)


@pytest.mark.parametrize(
    ("frame", "rid"),
    [
        ({"method": "ping"}, None),
        ({"id": None, "method": "ping"}, None),
        ({"id": True, "method": "ping"}, None),
        ({"id": 1.5, "method": "ping"}, None),
        ({"id": "", "method": "ping"}, None),
        ({"id": "x" * 65, "method": "ping"}, None),
        ({"id": [1], "method": "ping"}, None),
        ({"id": 7}, 7),
        ({"id": "r-8", "method": ""}, "r-8"),
        ({"id": 9, "method": 5}, 9),
        ({"id": 10, "method": "ping", "params": []}, 10),
        ({"id": 11, "method": "ping", "params": "x"}, 11),
        ({"id": 12, "method": "ping", "jsonrpc": "2.0"}, 12),
        ({"id": "x" * 64, "method": "ping", "extra": 1}, "x" * 64),
    ],
)
async def test_invalid_request_echoes_the_id_when_readable(
    running: Running, frame: dict[str, Any], rid: Any
) -> None:
    async with running.client() as client:
        await raw_error(client, json.dumps(frame), 1001, "invalid_request", rid)
        await still_usable(client)


async def test_unknown_method_before_and_after_hello(running: Running) -> None:
    async with running.client(hello=False) as client:
        assert "fly" in await raw_error(
            client, '{"id": 1, "method": "fly"}', 1002, "unknown_method", 1
        )
        await client.hello()
        await refused(client, "fly", 1002, "unknown_method")
        # Method names are exact.
        await refused(client, "Ping", 1002, "unknown_method")


async def test_hello_required_first(running: Running) -> None:
    async with running.client(hello=False) as client:
        await refused(client, "ping", 1003, "hello_required")
        await refused(client, "join", 1003, "hello_required", encounter="e", token="t")
        await refused(client, "create_encounter", 1003, "hello_required", name="x")
        await client.hello()
        await still_usable(client)


async def test_unsupported_version_keeps_the_connection(running: Running) -> None:
    async with running.client(hello=False) as client:
        message = await refused(
            client,
            "hello",
            1004,
            "unsupported_version",
            protocol="2.0",
            client={"name": "a", "version": "1"},
        )
        assert "2.0" in message
        await refused(client, "ping", 1003, "hello_required")  # not greeted
        with trio.fail_after(helpers.deadline(5)):
            welcome = await client.hello(protocol="1.7")
        assert welcome["protocol"] == PROTOCOL_VERSION == "1.7"
        await still_usable(client)


async def test_invalid_params_of_protocol_methods(running: Running) -> None:
    async with running.client(hello=False) as client, running.client() as gm:
        message = await refused(client, "hello", 1005, "invalid_params", protocol="1.0")
        assert "client" in message
        message = await refused(
            client,
            "hello",
            1005,
            "invalid_params",
            protocol="one",
            client={"name": "a", "version": "1"},
        )
        assert "protocol" in message
        created = await gm.create_encounter("Params", "tavern", creatures())
        eid = created["encounter"]
        message = await refused(
            gm, "join", 1005, "invalid_params", encounter=eid, token=created["gm_token"], seq=3
        )
        assert "seq" in message
        message = await refused(
            gm,
            "join",
            1005,
            "invalid_params",
            encounter=eid,
            token=created["gm_token"],
            last_seq=-1,
        )
        assert "last_seq" in message
        message = await refused(gm, "join", 1005, "invalid_params", encounter=eid, token=5)
        assert "token" in message
        message = await refused(gm, "snapshot", 1005, "invalid_params")
        assert "encounter" in message
        message = await refused(
            gm, "create_seat", 1005, "invalid_params", encounter=eid, player="gm"
        )
        assert "player" in message
        await refused(gm, "create_seat", 1005, "invalid_params", encounter=eid, player="")
        message = await refused(
            gm,
            "create_seat",
            1005,
            "invalid_params",
            encounter=eid,
            player="p",
            creatures=["nobody"],
        )
        assert "nobody" in message
        message = await refused(gm, "ping", 1005, "invalid_params", now=1)
        assert "now" in message
        message = await refused(
            gm, "command", 1005, "invalid_params", encounter=eid, type="dash", params=[]
        )
        assert "params" in message
        # Nothing changed.
        assert (await snap(gm, eid))["snapshot"] == created["snapshot"]


async def test_already_greeted(running: Running) -> None:
    async with running.client() as client:
        await refused(
            client,
            "hello",
            1006,
            "already_greeted",
            protocol="1.0",
            client={"name": "a", "version": "1"},
        )
        await still_usable(client)


async def test_unknown_encounter_and_not_joined(running: Running) -> None:
    async with running.client() as gm, running.client() as other:
        created = await gm.create_encounter("Joined", "tavern", creatures())
        eid = created["encounter"]
        for method, params in (
            ("join", {"token": created["gm_token"]}),
            ("snapshot", {}),
            ("actions", {"creature": "aria"}),
            ("leave", {}),
            ("create_seat", {"player": "p"}),
            ("create_spectator_link", {}),
            ("command", {"type": "dash", "params": {"creature": "aria"}}),
        ):
            message = await refused(
                other, method, 1007, "unknown_encounter", encounter="e-nope", **params
            )
            assert "e-nope" in message
        for method, params in (
            ("snapshot", {}),
            ("actions", {"creature": "aria"}),
            ("leave", {}),
            ("create_seat", {"player": "p"}),
            ("create_spectator_link", {}),
            ("command", {"type": "set_surprise", "params": {}}),
        ):
            await refused(other, method, 1008, "not_joined", encounter=eid, **params)
        assert (await snap(gm, eid))["snapshot"] == created["snapshot"]


# -- 2xxx: authentication --------------------------------------------------------------------------


async def test_bad_token(running: Running) -> None:
    async with running.client() as gm, running.client() as other:
        created = await gm.create_encounter("Tokens", "tavern", creatures())
        second = await gm.create_encounter("Other", "tavern", creatures())
        await refused(
            other, "join", 2000, "bad_token", encounter=created["encounter"], token="guess"
        )
        # A token of another encounter does not open this one.
        await refused(
            other,
            "join",
            2000,
            "bad_token",
            encounter=created["encounter"],
            token=second["gm_token"],
        )
        await refused(other, "snapshot", 1008, "not_joined", encounter=created["encounter"])


async def test_server_key_required_and_bad(make_server: MakeServer) -> None:
    running = await make_server(ServerConfig(port=0, server_key="s3cret-key"))
    async with running.client() as client:
        await refused(
            client,
            "create_encounter",
            2001,
            "server_key_required",
            name="K",
            arena="tavern",
            creatures=creatures(),
        )
        await refused(
            client,
            "create_encounter",
            2002,
            "bad_server_key",
            name="K",
            arena="tavern",
            creatures=creatures(),
            server_key="s3cret-kez",
        )
        assert running.server.rooms == {}
        with trio.fail_after(helpers.deadline(5)):
            created = await client.create_encounter(
                "K", "tavern", creatures(), server_key="s3cret-key"
            )
        assert created["role"] == "gm"


# -- 3xxx: permission ------------------------------------------------------------------------------


async def test_permission_errors(running: Running) -> None:
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as watcher,
    ):
        eid = await setup(gm, alice, bob)
        link = await gm.request("create_spectator_link", encounter=eid)
        await watcher.join(eid, link["token"])
        await refused_command(gm, bob, eid, 3001, "not_your_creature", "dash", creature="aria")
        await refused_command(gm, alice, eid, 3002, "gm_only", "heal", creature="aria", amount=1)
        await refused(alice, "create_seat", 3002, "gm_only", encounter=eid, player="eve")
        await refused(alice, "create_spectator_link", 3002, "gm_only", encounter=eid)
        await refused_command(
            gm, watcher, eid, 3004, "spectator_read_only", "dash", creature="aria"
        )
        await refused(
            watcher, "create_seat", 3004, "spectator_read_only", encounter=eid, player="x"
        )
        await refused(watcher, "create_spectator_link", 3004, "spectator_read_only", encounter=eid)


async def test_not_your_decision(make_server: MakeServer) -> None:
    running = await make_server(entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as bob:
        roster = creatures()
        roster[2].update(hp=40, max_hp=40)
        eid = (await gm.create_encounter("Decide", "tavern", roster))["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            for client, player in ((alice, "alice"), (bob, "bob")):
                seat = await gm.request("create_seat", encounter=eid, player=player)
                await client.join(eid, seat["token"])
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            await alice.command(eid, "attack", creature="aria", target="gob")
            await alice.command(eid, "end_turn", creature="aria")
            await gm.command(eid, "enter", creature="gob", zones=["bar"])
            prompt = await alice.notification("prompt")
        did = prompt["decision"]["id"]
        await refused_command(
            gm, bob, eid, 3003, "not_your_decision", "decide", decision=did, choice=["attack"]
        )
        await refused_command(
            gm, alice, eid, 4023, "invalid_choice", "decide", decision=did, choice=["maybe"]
        )
        await refused_command(
            gm, alice, eid, 4021, "unknown_decision", "decide", decision="d99", choice=["attack"]
        )


# -- 4xxx: rules -------------------------------------------------------------------------------------


async def test_rule_refusals_through_command(make_server: MakeServer) -> None:
    running = await make_server(entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as bob:
        eid = await setup(gm, alice, bob)
        # Initiative with loaded dice: Aria 23, Goblin 22, Bram 21, Ogre 19.
        message = await refused_command(
            gm, bob, eid, 4005, "not_your_turn", "dash", creature="bram"
        )
        assert message == "It is not Bram's turn (it is Aria's turn)."
        await refused_command(
            gm, alice, eid, 4002, "unknown_creature", "attack", creature="aria", target="nobody"
        )
        await refused_command(
            gm,
            alice,
            eid,
            4019,
            "unknown_attack",
            "attack",
            creature="aria",
            target="gob",
            attack="axe",
        )
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "dash", creature="aria")
        message = await refused_command(
            gm, alice, eid, 4006, "no_action_left", "dodge", creature="aria"
        )
        assert message == "Aria has no action left this turn."
        message = await refused_command(
            gm, alice, eid, 4000, "invalid_params", "move", creature="aria", feet="ten"
        )
        assert "feet" in message
        message = await refused_command(
            gm, alice, eid, 4000, "invalid_params", "dodge", creature="aria", fast=True
        )
        assert "fast" in message
        await refused_command(gm, alice, eid, 4000, "invalid_params", "move", creature="aria")
        message = await refused_command(gm, gm, eid, 4004, "wrong_phase", "roll_initiative")
        assert "turns" in message
        await refused_command(gm, gm, eid, 4004, "wrong_phase", "set_surprise", surprised=[])
        message = await refused_command(gm, alice, eid, 4001, "unknown_command", "summon_dragon")
        assert "summon_dragon" in message
        await refused_command(
            gm, alice, eid, 4027, "unknown_zone", "enter", creature="aria", zones=["attic"]
        )


async def test_bad_roster_and_arena_are_rules_invalid_params(running: Running) -> None:
    async with running.client() as gm:
        roster = creatures()
        roster[1]["hp"] = "lots"
        message = await refused(
            gm,
            "create_encounter",
            4000,
            "invalid_params",
            name="R",
            arena="tavern",
            creatures=roster,
        )
        assert "creatures[1]" in message and "hp" in message
        message = await refused(
            gm,
            "create_encounter",
            4000,
            "invalid_params",
            name="R",
            arena="moon",
            creatures=creatures(),
        )
        assert "moon" in message
        await refused(
            gm,
            "create_encounter",
            4000,
            "invalid_params",
            name="R",
            arena={"id": "x", "name": "X", "zones": []},
            creatures=creatures(),
        )
        await refused(
            gm, "create_encounter", 4000, "invalid_params", name="R", arena="tavern", creatures=[]
        )
        await refused(
            gm,
            "create_encounter",
            4000,
            "invalid_params",
            name="R",
            arena="tavern",
            creatures=creatures(),
            options={"flanking": "sometimes"},
        )
        twice = [*creatures(), creatures()[0]]
        message = await refused(
            gm, "create_encounter", 4026, "duplicate_id", name="R", arena="tavern", creatures=twice
        )
        assert "aria" in message
        # create_encounter's own missing field is a protocol error.
        await refused(gm, "create_encounter", 1005, "invalid_params", name="R", arena="tavern")
        assert running.server.rooms == {}


# -- 5xxx: limits -------------------------------------------------------------------------------------


async def test_message_too_large_keeps_the_connection(make_server: MakeServer) -> None:
    running = await make_server(ServerConfig(port=0, limits=Limits(max_message_bytes=2000)))
    async with running.client() as client:
        frame = json.dumps({"id": 1, "method": "ping", "params": {}})
        padded = frame[:-1] + " " * (2001 - len(frame)) + "}"
        assert len(padded.encode()) == 2001
        message = await raw_error(client, padded, 5000, "message_too_large", None)
        assert "2000" in message
        # Multi-byte characters count as bytes: 1000 'é' is 2000 bytes plus the envelope.
        wide = json.dumps(
            {"id": 2, "method": "ping", "params": {"x": "é" * 1000}}, ensure_ascii=False
        )
        await raw_error(client, wide, 5000, "message_too_large", None)
        # Exactly the limit is fine (and then fails on its params, not its size).
        exact = frame[:-1] + " " * (2000 - len(frame)) + "}"
        assert await raw(client, exact) == {"id": 1, "result": {}}
        await still_usable(client)


async def test_too_many_connections(make_server: MakeServer) -> None:
    running = await make_server(
        ServerConfig(port=0, limits=Limits(max_connections_per_encounter=2))
    )
    async with running.client() as gm, running.client() as one, running.client() as two:
        created = await gm.create_encounter("Full", "tavern", creatures())
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            await one.join(eid, created["gm_token"])
        message = await refused(
            two, "join", 5002, "too_many_connections", encounter=eid, token=created["gm_token"]
        )
        assert "2" in message
        # Joining again on a joined connection replaces its join: no new slot needed.
        with trio.fail_after(helpers.deadline(5)):
            await one.join(eid, created["gm_token"], last_seq=1)
            await one.request("leave", encounter=eid)
            joined = await two.join(eid, created["gm_token"])
        assert joined["role"] == "gm"


# -- 6xxx: server faults -------------------------------------------------------------------------------


async def test_internal_error_changes_nothing(make_server: MakeServer) -> None:
    running = await make_server(engine=Engine([*load_default_plugins(), Boom()]))
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter("Boom", "tavern", creatures())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        await alice.join(eid, seat["token"])
        before = await snap(gm, eid)
        message = await refused(gm, "command", 6002, "plugin_error", encounter=eid, type="boom")
        assert "boom" in message
        assert "RuntimeError" not in message  # the details go to the GM's encounter_error
        with trio.fail_after(helpers.deadline(5)):
            crashed = await gm.notification("encounter_error")
        assert crashed["encounter"] == eid
        assert await snap(gm, eid) == before
        await refused(alice, "command", 3002, "gm_only", encounter=eid, type="boom")
        with trio.fail_after(helpers.deadline(5)):
            await alice.request("ping")
        assert alice.pending_notifications() == []  # players get no encounter_error
        with trio.fail_after(helpers.deadline(5)):
            assert await gm.command(eid, "set_surprise", surprised=[]) == {
                "first_seq": 2,
                "last_seq": 2,
            }
