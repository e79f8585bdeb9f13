"""Table tools over real websockets (issue 34, point 12; SPEC.md, `roll` and `chat`): free
dice rolls that verify like every roll, table chat, whispers that reach their two seats
only (never another player, a spectator, a snapshot or a replay), their bounds and
rate, a restart that loses nothing, and the GM's export that holds every line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, start_server, sturdy_goblin_roster
from helpers import deadline
from lobby_support import refused

from zonekeep.protocol.client import ZonekeepClient
from zonekeep.sdk.host import dice_in
from zonekeep.server._cli import main as cli

MakeServer = Callable[..., Any]

#: A whisper's words, searched for in everything the other seats receive.
SECRET = "the trapdoor key is under the third barrel"
GM_SECRET = "bob: the innkeeper is lying"


async def table(gm: ZonekeepClient) -> dict[str, str]:
    """An encounter with alice's and bob's seats and a spectator link (setup phase)."""
    created = await gm.create_encounter("Talk", "tavern", sturdy_goblin_roster())
    eid: str = created["encounter"]
    alice = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
    bob = (await gm.request("create_seat", encounter=eid, player="bob"))["token"]
    watch = (await gm.request("create_spectator_link", encounter=eid))["token"]
    return {"eid": eid, "gm": created["gm_token"], "alice": alice, "bob": bob, "watch": watch}


async def settled(*clients: ZonekeepClient) -> list[list[dict[str, Any]]]:
    """Each client's notifications so far: a request answered after them (a ``ping``)
    comes after every event broadcast before it."""
    found = []
    for client in clients:
        await client.request("ping")
        found.append(client.pending_notifications())
    return found


def events_of(notes: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {n["params"]["seq"]: n["params"]["event"] for n in notes if n["method"] == "event"}


async def test_whispers_reach_their_two_seats_only_live_in_replays_and_snapshots(
    running: Running,
) -> None:
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as watcher,
    ):
        with trio.fail_after(deadline(10)):
            t = await table(gm)
            eid = t["eid"]
            await alice.join(eid, t["alice"])
            await bob.join(eid, t["bob"])
            await watcher.join(eid, t["watch"])
            await settled(gm, alice, bob, watcher)

            said = await alice.request("chat", encounter=eid, text="Hello, table <b>!</b>")
            whisper = await alice.request("chat", encounter=eid, text=SECRET, to="gm")
            answer = await gm.request("chat", encounter=eid, text=GM_SECRET, to="bob")
            assert whisper["seq"] == said["seq"] + 1 and answer["seq"] == said["seq"] + 2
            seen = [events_of(notes) for notes in await settled(gm, alice, bob, watcher)]
            gm_sees, alice_sees, bob_sees, watcher_sees = seen

            public = {"type": "chat_sent", "by": "alice", "text": "Hello, table <b>!</b>"}
            to_gm = {"type": "chat_sent", "by": "alice", "text": SECRET, "to": "gm"}
            to_bob = {"type": "chat_sent", "by": "gm", "text": GM_SECRET, "to": "bob"}
            hidden = {"type": "hidden"}
            # Every seat sees the table line, as written (no markup is taken out or added).
            for view in seen:
                assert view[said["seq"]] == {**public, "to": None}
            assert gm_sees[whisper["seq"]] == to_gm and gm_sees[answer["seq"]] == to_bob
            assert alice_sees[whisper["seq"]] == to_gm and alice_sees[answer["seq"]] == hidden
            assert bob_sees[whisper["seq"]] == hidden and bob_sees[answer["seq"]] == to_bob
            assert watcher_sees[whisper["seq"]] == hidden
            assert watcher_sees[answer["seq"]] == hidden

            # A fresh join from the start (a reloaded page) replays the same views...
            again = {}
            for name, client, token in (
                ("bob", bob, t["bob"]),
                ("watcher", watcher, t["watch"]),
                ("alice", alice, t["alice"]),
            ):
                await client.request("leave", encounter=eid)
                joined = await client.join(eid, token, last_seq=0)
                again[name] = joined["events"]
            assert again["bob"][whisper["seq"] - 1] == hidden
            assert again["bob"][answer["seq"] - 1] == to_bob
            assert again["watcher"][whisper["seq"] - 1] == hidden
            assert again["watcher"][answer["seq"] - 1] == hidden
            assert again["alice"][whisper["seq"] - 1] == to_gm
            assert again["alice"][answer["seq"] - 1] == hidden

            # ... and no snapshot holds a word of either whisper, for anyone.
            for client in (gm, alice, bob, watcher):
                snap = await client.request("snapshot", encounter=eid)
                assert SECRET not in json.dumps(snap) and GM_SECRET not in json.dumps(snap)
            # Nothing bob or the spectator got, in any message, holds alice's whisper.
            for name in ("bob", "watcher"):
                assert SECRET not in json.dumps(again[name])
            assert GM_SECRET not in json.dumps(again["watcher"] + again["alice"])


async def test_chat_refusals_change_nothing_and_reveal_no_seat(running: Running) -> None:
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        with trio.fail_after(deadline(10)):
            t = await table(gm)
            eid = t["eid"]
            await alice.join(eid, t["alice"])
            await watcher.join(eid, t["watch"])
            assert alice.welcome is not None
            limit = alice.welcome["limits"]["chat_max_chars"]
            assert limit == 500
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
            bad: list[tuple[ZonekeepClient, dict[str, Any], str]] = [
                (alice, {"text": "x" * (limit + 1)}, "invalid_params"),
                (alice, {"text": ""}, "invalid_params"),
                (alice, {"text": " \n\t "}, "invalid_params"),
                (alice, {"text": "bell \x07"}, "invalid_params"),
                (alice, {"text": "hi", "to": "bob"}, "invalid_params"),  # players: GM only
                (gm, {"text": "hi", "to": "gm"}, "invalid_params"),
                (gm, {"text": "hi", "to": "carol"}, "invalid_params"),  # no such seat
                (gm, {"text": "hi", "to": ""}, "invalid_params"),
                (gm, {"text": 5}, "invalid_params"),
                (gm, {"text": "hi", "colour": "red"}, "invalid_params"),
                (watcher, {"text": "hi"}, "spectator_read_only"),
            ]
            for client, params, name in bad:
                error = await refused(client.request("chat", encounter=eid, **params))
                assert error.name == name, (params, error)
            # A lone surrogate (valid JSON, no character) is refused too, not stored.
            raw = {"id": 900, "method": "chat", "params": {"encounter": eid, "text": "LONE"}}
            await alice.send_raw(json.dumps(raw).replace("LONE", "\\ud800"))
            # (alice's next request is handled after it: one connection's come in order)
            assert (await alice.request("snapshot", encounter=eid))["seq"] == seq
            # The longest message passes, line breaks and all.
            text = "a\n" + "b" * (limit - 2)
            done = await alice.request("chat", encounter=eid, text=text)
            assert done["seq"] == seq + 1
            (gm_notes,) = await settled(gm)
            assert events_of(gm_notes)[seq + 1]["text"] == text
            # A player's refused whisper to another player names no one's seat.
            error = await refused(alice.request("chat", encounter=eid, text="x", to="carol"))
            assert "carol" not in error.message


async def test_the_seat_bucket_bounds_chat_and_rolls_across_its_connections(
    make_server: MakeServer,
) -> None:
    limits = Limits(table_rate_per_second=0.001, table_rate_burst=3)
    running: Running = await make_server(ServerConfig(port=0, limits=limits))
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as alice_phone,
    ):
        with trio.fail_after(deadline(10)):
            t = await table(gm)
            eid = t["eid"]
            assert alice.welcome is not None
            assert alice.welcome["limits"]["table_rate_burst"] == 3
            assert alice.welcome["limits"]["table_rate_per_second"] == 0.001
            await alice.join(eid, t["alice"])
            await alice_phone.join(eid, t["alice"])
            one = await alice.request("chat", encounter=eid, text="one", idempotency_key="t-1")
            await alice_phone.request("roll", encounter=eid, dice="d20")
            await alice.request("chat", encounter=eid, text="three")
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
            over: list[tuple[ZonekeepClient, str, dict[str, Any]]] = [
                (alice, "chat", {"text": "four"}),
                (alice_phone, "roll", {"dice": "d6"}),
            ]
            for client, method, params in over:
                error = await refused(client.request(method, encounter=eid, **params))
                assert error.name == "rate_limited"
                assert error.retry_after_ms is not None and error.retry_after_ms > 1000
            assert (await gm.request("snapshot", encounter=eid))["seq"] == seq
            # A keyed repeat (a lost reply, from her other device) is not a new message:
            # it gets its first answer, with the bucket empty, and writes nothing.
            again = await alice_phone.request(
                "chat", encounter=eid, text="one", idempotency_key="t-1"
            )
            assert again == one
            assert (await gm.request("snapshot", encounter=eid))["seq"] == seq
            # The GM's bucket is its own.
            await gm.request("chat", encounter=eid, text="the GM is not held up")


@pytest.mark.sqlite  # zonekeep export reads SQLite files
async def test_free_rolls_verify_private_ones_stay_private_and_the_export_has_every_line(
    make_server: MakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=None)  # fair dice
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as watcher,
    ):
        with trio.fail_after(deadline(10)):
            t = await table(gm)
            eid = t["eid"]
            for client, token in ((alice, t["alice"]), (bob, t["bob"]), (watcher, t["watch"])):
                await client.join(eid, token)
            await settled(gm, alice, bob, watcher)
            asked: dict[str, Any] = {
                "dice": "d20+3",
                "label": "Perception",
                "advantage": "advantage",
            }
            public = await alice.request("roll", encounter=eid, idempotency_key="r-1", **asked)
            private = await alice.request("roll", encounter=eid, dice="3d6", private=True)
            secret = await gm.request("roll", encounter=eid, dice="d100", private=True)
            await gm.request("chat", encounter=eid, text=GM_SECRET, to="bob")
            views = [events_of(notes) for notes in await settled(gm, alice, bob, watcher)]
            gm_sees, alice_sees, bob_sees, watcher_sees = views
            rolled = gm_sees[public["seq"]]
            assert rolled["type"] == "dice_rolled" and rolled["by"] == "alice"
            assert rolled["label"] == "Perception" and rolled["private"] is False
            roll = rolled["roll"]
            assert roll["expr"] == "d20+3" and roll["advantage"] == "advantage"
            assert len(roll["dice"]) == 2 and roll["kept"] == [max(roll["dice"])]
            assert roll["total"] == public["total"] == max(roll["dice"]) + 3
            assert [d[1] for d in roll["draws"]] == [20, 20]  # counted: it verifies
            for view in views:
                assert view[public["seq"]] == rolled
            assert sum(gm_sees[private["seq"]]["roll"]["dice"]) + 0 == private["total"]
            assert alice_sees[private["seq"]] == gm_sees[private["seq"]]
            assert bob_sees[private["seq"]] == watcher_sees[private["seq"]] == {"type": "hidden"}
            assert gm_sees[secret["seq"]]["roll"]["total"] == secret["total"]
            for view in (alice_sees, bob_sees, watcher_sees):
                assert view[secret["seq"]] == {"type": "hidden"}
            # Bad rolls change nothing.
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
            wrong: list[tuple[dict[str, Any], str]] = [
                ({"dice": "1000d6"}, "invalid_params"),
                ({"dice": "d1"}, "invalid_params"),
                ({"dice": "fireball"}, "invalid_params"),
                ({"dice": "d20", "label": "x" * 81}, "invalid_params"),
                ({"dice": "d20", "label": "a\nb"}, "invalid_params"),
                ({"dice": "d20", "advantage": "lucky"}, "invalid_params"),
            ]
            for params, name in wrong:
                error = await refused(alice.request("roll", encounter=eid, **params))
                assert error.name == name, params
            error = await refused(watcher.request("roll", encounter=eid, dice="d20"))
            assert error.name == "spectator_read_only"
            # A keyed repeat gets the first roll's answer: the dice are not rolled again.
            again = await alice.request("roll", encounter=eid, idempotency_key="r-1", **asked)
            assert again == public
            assert (await gm.request("snapshot", encounter=eid))["seq"] == seq
            await gm.command(eid, "end_encounter", force=True)
            error = await refused(alice.request("roll", encounter=eid, dice="d20"))
            assert error.name == "encounter_over"
            error = await refused(alice.request("chat", encounter=eid, text="gg"))
            assert error.name == "encounter_over"

    target = tmp_path / "talk.jsonl"
    data_dir = running.server.config.data_dir
    assert cli(["export", eid, "--data-dir", str(data_dir), "-o", str(target)]) == 0
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    by_seq = {line["seq"]: line["event"] for line in lines}
    # The export is the GM's view: the private rolls and the whisper are in it, whole.
    assert by_seq[private["seq"]]["private"] is True
    assert by_seq[secret["seq"]]["roll"]["total"] == secret["total"]
    assert GM_SECRET in target.read_text()
    counters = [c for seq in (public, private, secret) for c, _, _ in dice_in(by_seq[seq["seq"]])]
    assert len(counters) == 2 + 3 + 1
    capsys.readouterr()
    assert cli(["verify", str(target)]) == 0
    out = capsys.readouterr().out
    assert "dice verified" in out
    # A tampered free roll is caught like any other.
    line = next(x for x in lines if x["seq"] == private["seq"])
    faces = line["event"]["roll"]["dice"]
    faces[0] = faces[0] % 6 + 1
    target.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert cli(["verify", str(target)]) == 1
    assert "NOT verified" in capsys.readouterr().err


async def test_chat_and_rolls_outlive_a_restart_with_each_seat_view_kept(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0))
    async with first.client() as gm, first.client() as alice:
        with trio.fail_after(deadline(10)):
            t = await table(gm)
            eid = t["eid"]
            await alice.join(eid, t["alice"])
            said = await alice.request("chat", encounter=eid, text="Before the restart")
            whisper = await alice.request("chat", encounter=eid, text=SECRET, to="gm")
            rolled = await alice.request("roll", encounter=eid, dice="2d8+1", label="Luck")
    await first.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0))
    async with second.client() as gm, second.client() as bob, second.client() as alice:
        with trio.fail_after(deadline(10)):
            gm_log = (await gm.join(eid, t["gm"], last_seq=0))["events"]
            bob_log = (await bob.join(eid, t["bob"], last_seq=0))["events"]
            alice_log = (await alice.join(eid, t["alice"], last_seq=0))["events"]
            assert gm_log[said["seq"] - 1]["text"] == "Before the restart"
            assert bob_log[said["seq"] - 1] == gm_log[said["seq"] - 1]
            assert gm_log[whisper["seq"] - 1]["text"] == SECRET
            assert alice_log[whisper["seq"] - 1] == gm_log[whisper["seq"] - 1]
            assert bob_log[whisper["seq"] - 1] == {"type": "hidden"}
            assert SECRET not in json.dumps(bob_log)
            assert bob_log[rolled["seq"] - 1]["roll"]["total"] == rolled["total"]
            assert bob_log[rolled["seq"] - 1]["label"] == "Luck"
            # The chat goes on after the restart, numbered after what was stored.
            after = await bob.request("chat", encounter=eid, text="And after it")
            assert after["seq"] == rolled["seq"] + 1
