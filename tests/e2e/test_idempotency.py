"""Idempotency keys (issue 32, point 3; SPEC.md, "Idempotency"), on a real server over
real websockets: a keyed request repeated from the same seat, on another connection,
after a resume or after a restart, gets its first answer and makes no new event; its
events carry the key to that seat's connections only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
from e2e_support import Loaded, Running, ServerConfig, start_server, sturdy_goblin_roster
from helpers import deadline
from lobby_support import refused

from zonekeep.protocol.client import ZonekeepClient

MakeServer = Callable[..., Any]
ROOT = Path(__file__).parents[2]
#: The GM token of each encounter :func:`start` made.
GM_TOKENS: dict[str, str] = {}


async def start(gm: ZonekeepClient) -> tuple[str, str, str]:
    """An encounter at Aria's (alice's) first turn; its id, alice's and bob's tokens."""
    created = await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster())
    eid: str = created["encounter"]
    GM_TOKENS[eid] = created["gm_token"]
    alice = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
    bob = (await gm.request("create_seat", encounter=eid, player="bob"))["token"]
    await gm.command(eid, "set_surprise", surprised=[])
    await gm.command(eid, "place", positions={})
    await gm.command(eid, "roll_initiative")
    return eid, alice, bob


async def events_until(client: ZonekeepClient, last: int) -> list[dict[str, Any]]:
    """The ``event`` notifications ``client`` gets up to seq ``last``."""
    found: list[dict[str, Any]] = []
    while not found or found[-1]["seq"] < last:
        found.append(await client.notification("event"))
    return found


def dodge(eid: str, key: str | None = "dodge-1") -> dict[str, Any]:
    params: dict[str, Any] = {"encounter": eid, "type": "dodge", "params": {"creature": "aria"}}
    if key is not None:
        params["idempotency_key"] = key
    return params


async def test_a_reply_lost_with_its_socket_is_had_again_on_resume_with_no_new_event(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm:
        with trio.fail_after(deadline(10)):
            eid, alice_token, _ = await start(gm)
            before = (await gm.request("snapshot", encounter=eid))["seq"]
            gm.pending_notifications()
            async with running.client() as alice:
                joined = await alice.join(eid, alice_token)
                await alice.ws.send(
                    json.dumps({"id": 1, "method": "command", "params": dodge(eid)})
                )
                # The dodge is applied (the GM sees its events), and the socket dies
                # before alice reads the reply.
                seen = await gm.notification("event")
                await trio.aclose_forcefully(alice.ws.stream)
            assert seen["seq"] == before + 1
            after = (await gm.request("snapshot", encounter=eid))["seq"]
            gm.pending_notifications()
            async with running.client() as again:
                resumed = await again.join(eid, alice_token, last_seq=joined["seq"])
                assert [e["type"] for e in resumed["events"]] == [
                    "action_taken",
                    "condition_applied",
                ]
                first = await again.request("command", **dodge(eid))
                assert first == {"first_seq": before + 1, "last_seq": after}
                # Repeated again on the same connection: the same answer once more.
                assert await again.request("command", **dodge(eid)) == first
                # Nothing new happened: not one event, and the seq is where it was.
                assert (await gm.request("snapshot", encounter=eid))["seq"] == after
                assert [n for n in gm.pending_notifications() if n["method"] == "event"] == []
                # A new key is a new request: aria has no action left for another dodge.
                error = await refused(again.request("command", **dodge(eid, "dodge-2")))
                assert error.name == "no_action_left"


async def test_keyed_requests_are_answered_once_across_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """Every kind of keyed request (a command, a rewind, both dice requests), by the GM
    and a player: after a clean restart, each repeat gets its first answer."""
    data = tmp_path / "data"
    asked: list[tuple[str, str, dict[str, Any]]] = [
        ("gm", "command", {"type": "add_note", "params": {"text": "a"}}),
        ("alice", "contribute_dice", {"value": "alice-luck"}),
        ("gm", "rotate_dice", {}),
        ("gm", "rewind", {"to_seq": 3}),
    ]

    async def ask_all(clients: dict[str, ZonekeepClient], eid: str) -> list[dict[str, Any]]:
        return [
            await clients[who].request(method, encounter=eid, idempotency_key=f"k-{n}", **params)
            for n, (who, method, params) in enumerate(asked)
        ]

    # No test entropy: the dice are the verifiable ones (contribute_dice, rotate_dice).
    first_server = await start_server(nursery, data, ServerConfig(port=0), entropy=None)
    async with first_server.client() as gm, first_server.client() as alice:
        with trio.fail_after(deadline(10)):
            eid, alice_token, _ = await start(gm)
            await alice.join(eid, alice_token)
            answers = await ask_all({"gm": gm, "alice": alice}, eid)
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
    await first_server.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0), entropy=None)
    async with second.client() as gm, second.client() as alice:
        with trio.fail_after(deadline(10)):
            assert (await gm.join(eid, GM_TOKENS[eid]))["seq"] == seq
            await alice.join(eid, alice_token)
            assert await ask_all({"gm": gm, "alice": alice}, eid) == answers
            assert (await gm.request("snapshot", encounter=eid))["seq"] == seq  # no new event
            assert [n for n in alice.pending_notifications() if n["method"] == "event"] == []


async def test_the_key_goes_to_the_seats_connections_only(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as alice_phone,
        running.client() as bob,
    ):
        with trio.fail_after(deadline(10)):
            eid, alice_token, bob_token = await start(gm)
            for client, token in (
                (alice, alice_token),
                (alice_phone, alice_token),
                (bob, bob_token),
            ):
                await client.join(eid, token)
            gm.pending_notifications()
            result = await alice.request("command", **dodge(eid, "k-42"))
            last = result["last_seq"]
            mine = await events_until(alice, last)
            phone = await events_until(alice_phone, last)
            theirs = await events_until(bob, last)
            gms = await events_until(gm, last)
        assert len(mine) == 2 and {e["idempotency_key"] for e in mine} == {"k-42"}
        assert phone == mine  # another connection of the same seat
        assert all("idempotency_key" not in e for e in theirs + gms)
        assert [e["event"] for e in theirs] == [e["event"] for e in mine]


async def test_a_key_used_again_for_another_request_is_refused_and_changes_nothing(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(deadline(10)):
            eid, alice_token, _ = await start(gm)
            await alice.join(eid, alice_token)
            await alice.request("command", **dodge(eid, "same"))
            seq = (await alice.request("snapshot", encounter=eid))["seq"]
            move = {"creature": "aria", "feet": 5}
            error = await refused(
                alice.request(
                    "command", encounter=eid, type="move", params=move, idempotency_key="same"
                )
            )
            assert (error.code, error.name) == (1011, "idempotency_key_reused")
            assert (await alice.request("snapshot", encounter=eid))["seq"] == seq
            # The GM's keys are the GM's: the same key is new for another seat.
            note = await gm.request(
                "command",
                encounter=eid,
                type="add_note",
                params={"text": "hm"},
                idempotency_key="same",
            )
            assert note["first_seq"] == seq + 1


async def test_a_refused_request_does_not_spend_its_key(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(deadline(10)):
            eid, alice_token, _ = await start(gm)
            await alice.join(eid, alice_token)
            refusal = await refused(
                alice.request(
                    "command",
                    encounter=eid,
                    type="dodge",
                    params={"creature": "gob"},
                    idempotency_key="oops",
                )
            )
            assert refusal.name == "not_your_creature"
            answer = await alice.request("command", **dodge(eid, "ok"))
            assert answer["last_seq"] == answer["first_seq"] + 1


async def test_a_character_sent_twice_with_its_key_is_added_once(running: Running) -> None:
    character = json.loads((ROOT / "examples" / "characters" / "aria.json").read_text())
    async with running.client() as gm, running.client() as cora:
        with trio.fail_after(deadline(10)):
            created = await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster())
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="cora")
            await cora.join(eid, seat["token"])
            params = {"encounter": eid, "character": character, "idempotency_key": "c-1"}
            first = await cora.request("submit_character", **params)
            again = await cora.request("submit_character", **params)
            assert again == first
            snap = await gm.request("snapshot", encounter=eid)
            assert snap["seq"] == first["seq"]
            added = [
                c["id"] for c in snap["snapshot"]["creatures"].values() if c["controller"] == "cora"
            ]
            assert added == [first["creature"]]  # one creature, not two


async def test_a_key_must_be_printable_ascii(running: Running) -> None:
    async with running.client() as gm:
        with trio.fail_after(deadline(10)):
            eid = (await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster()))["encounter"]
            for bad in ("", "with space", "x" * 65, "ключ"):
                error = await refused(
                    gm.request(
                        "command",
                        encounter=eid,
                        type="add_note",
                        params={"text": "x"},
                        idempotency_key=bad,
                    )
                )
                assert error.name == "invalid_params", bad
