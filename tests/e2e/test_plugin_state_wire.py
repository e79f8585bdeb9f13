"""Plugin state and custom events over a real server (tests/braziers_plugin.py): announced
in ``hello``, stored, sent to each seat as its visibility allows (live, on join and in the
catch-up of a rejoin), rewound, kept across a restart from the store, exported, replayed
and imported, and a log whose plugin is gone still loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import braziers_plugin as braziers
import helpers
import trio
from e2e_support import Running, creatures, start_server

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import ZonekeepClient
from zonekeep.sdk import ScriptedEntropy
from zonekeep.sdk.engine import Engine
from zonekeep.server import ServerConfig
from zonekeep.server._export import export_to_file, import_log, load_log, replay_log

PUBLIC = {"braziers": {"kicked": ["b1"], "kickers": ["aria"]}}
FULL = {"braziers": {"kicked": ["b1"], "kickers": ["aria"], "slicks": {"bar": "gm"}}}


def engine(with_braziers: bool = True) -> Engine:
    return Engine([*load_default_plugins(), *([braziers] if with_braziers else [])])


def dice() -> ScriptedEntropy:
    return ScriptedEntropy([20, 15, 10, 5] * 4)  # initiative: Aria first


async def play(
    gm: ZonekeepClient, alice: ZonekeepClient, watcher: ZonekeepClient
) -> dict[str, Any]:
    """Seat everyone, kick a brazier (Alice) and prime a slick (GM); what they were told."""
    with trio.fail_after(helpers.deadline(10)):
        created = await gm.create_encounter("Braziers", "tavern", creatures())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
        await alice.join(eid, seat["token"])
        link = await gm.request("create_spectator_link", encounter=eid)
        await watcher.join(eid, link["token"])
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        started = await gm.request("snapshot", encounter=eid)
        assert started["snapshot"]["active"] == "aria"
        kick = await alice.command(eid, "kick", creature="aria", brazier="b1")
        prime = await gm.command(eid, "braziers.prime", zone="bar")
        for client in (gm, alice, watcher):
            await client.request("ping")
    return {
        "eid": eid,
        "gm_token": created["gm_token"],
        "alice": seat["token"],
        "kick": kick,
        "prime": prime,
        "link": link["token"],
    }


def events(client: ZonekeepClient) -> dict[int, dict[str, Any]]:
    return {
        n["params"]["seq"]: n["params"]["event"]
        for n in client.pending_notifications()
        if n["method"] == "event"
    }


async def test_hello_announces_the_plugin_events_and_state(make_server: Any) -> None:
    running: Running = await make_server(ServerConfig(port=0), engine=engine())
    async with running.client() as client:
        caps = client.welcome["capabilities"]  # type: ignore[index]
    assert {"braziers.brazier_kicked", "braziers.slick_primed"} <= set(caps["event_types"])
    kicked = next(e for e in caps["plugin_events"] if e["id"] == "braziers.brazier_kicked")
    assert kicked == {
        "id": "braziers.brazier_kicked",
        "plugin": "braziers",
        "description": "A creature kicked a brazier over.",
        "template": "{creature} kicks {brazier} over",
        "schema": {
            "type": "object",
            "properties": {
                "brazier": {"type": "string", "minLength": 1},
                "creature": {"type": "string"},
            },
            "required": ["brazier", "creature"],
            "additionalProperties": False,
        },
        "visibility": "everyone",
    }
    assert [
        (s["plugin"], s["key"], s["visibility"], s["default"]) for s in caps["plugin_state"]
    ] == [
        ("braziers", "kicked", "everyone", []),
        ("braziers", "kickers", "everyone", []),
        ("braziers", "slicks", "gm", {}),
    ]
    assert "braziers.kick" in {c["id"] for c in caps["commands"]}


async def test_each_seat_gets_the_plugin_events_and_state_it_may_see(make_server: Any) -> None:
    running: Running = await make_server(ServerConfig(port=0), engine=engine(), entropy=dice())
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        done = await play(gm, alice, watcher)
        eid, kick, prime = done["eid"], done["kick"], done["prime"]
        kicked_seq, primed_seq = kick["last_seq"], prime["last_seq"]
        stream = {"gm": events(gm), "alice": events(alice), "watcher": events(watcher)}
        kicked = {"type": "braziers.brazier_kicked", "data": {"brazier": "b1", "creature": "aria"}}
        primed = {"type": "braziers.slick_primed", "data": {"zone": "bar", "by": "gm"}}
        assert stream["gm"][kicked_seq] == kicked
        assert stream["gm"][primed_seq] == primed
        for who in ("alice", "watcher"):
            assert stream[who][kicked_seq] == kicked
            assert stream[who][primed_seq] == {"type": "hidden"}
        with trio.fail_after(helpers.deadline(5)):
            seen = {
                who: (await c.request("snapshot", encounter=eid))["snapshot"]["plugin_state"]
                for who, c in (("gm", gm), ("alice", alice), ("watcher", watcher))
            }
        assert seen == {"gm": FULL, "alice": PUBLIC, "watcher": PUBLIC}
        # A rejoin's catch-up and a fresh join's snapshot filter them the same way.
        async with running.client() as again, running.client() as late:
            with trio.fail_after(helpers.deadline(5)):
                joined = await again.join(eid, done["alice"], last_seq=kicked_seq - 1)
                fresh = await late.join(eid, done["link"], history=2)
        caught = dict(enumerate(joined["events"], kicked_seq))
        assert caught[kicked_seq] == kicked
        assert caught[primed_seq] == {"type": "hidden"}
        assert fresh["snapshot"]["plugin_state"] == PUBLIC
        assert fresh["history"] == [kicked, {"type": "hidden"}]  # join's history: the same
        # The GM's rewind takes the plugin state back, for everyone.
        with trio.fail_after(helpers.deadline(5)):
            await gm.request("rewind", encounter=eid, to_seq=kicked_seq - 1)
            after = await gm.request("snapshot", encounter=eid)
            mine = await alice.request("snapshot", encounter=eid)
        assert after["snapshot"]["plugin_state"] == {}
        assert mine["snapshot"]["plugin_state"] == {}
        with trio.fail_after(helpers.deadline(5)):  # the brazier stands again: it can be kicked
            await alice.command(eid, "kick", creature="aria", brazier="b1")


async def test_plugin_state_survives_a_restart_export_replay_and_import(
    tmp_path: Path, nursery: trio.Nursery
) -> None:
    data = tmp_path / "data"
    async with trio.open_nursery() as first_run:
        first = await start_server(
            first_run, data, ServerConfig(port=0), engine=engine(), entropy=dice()
        )
        async with first.client() as gm, first.client() as alice, first.client() as watcher:
            done = await play(gm, alice, watcher)
            with trio.fail_after(helpers.deadline(5)):
                before = await gm.request("snapshot", encounter=done["eid"])
        first_run.cancel_scope.cancel()
    await first.server.store.aclose()
    assert before["snapshot"]["plugin_state"] == FULL

    # A server restarted on the same store folds the stored plugin events again.
    async with trio.open_nursery() as second_run:
        second = await start_server(second_run, data, ServerConfig(port=0), engine=engine())
        async with second.client() as gm, second.client() as alice:
            with trio.fail_after(helpers.deadline(5)):
                joined = await gm.join(done["eid"], done["gm_token"])
                seat = await alice.join(done["eid"], done["alice"])
        second_run.cancel_scope.cancel()
    await second.server.store.aclose()
    assert joined["snapshot"] == before["snapshot"]
    assert seat["snapshot"]["plugin_state"] == PUBLIC

    # Export, replay and import keep the plugin events and fold them.
    exported = tmp_path / "braziers.jsonl"
    export_to_file(data, done["eid"], exported)
    log = load_log(exported)
    replayed = replay_log(log, engine().catalog)
    assert replayed.state.plugin_state == FULL
    assert "Aria kicks b1 over" in replayed.sentences
    imported = await import_log(log, tmp_path / "other", "copy", engine().catalog)
    assert imported.state.plugin_state == FULL

    # Without the plugin installed, the log still loads: its events are kept, unfolded.
    gone = replay_log(log, engine(with_braziers=False).catalog)
    assert gone.state.plugin_state == {}
    assert gone.state.seq == replayed.state.seq
    assert '[braziers.brazier_kicked] {"brazier": "b1", "creature": "aria"}' in gone.sentences
    bare = await start_server(
        nursery, data, ServerConfig(port=0), engine=engine(with_braziers=False)
    )
    async with bare.client() as gm, bare.client() as alice:
        with trio.fail_after(helpers.deadline(5)):
            joined = await gm.join(done["eid"], done["gm_token"], last_seq=0)
            seat = await alice.join(done["eid"], done["alice"], last_seq=0)
            theirs = await alice.request("snapshot", encounter=done["eid"])
    assert theirs["snapshot"]["plugin_state"] == {}  # nothing declares it public now
    gm_events = dict(enumerate(joined["events"], 1))
    alice_events = dict(enumerate(seat["events"], 1))
    kicked_seq = done["kick"]["last_seq"]
    assert gm_events[kicked_seq]["type"] == "braziers.brazier_kicked"
    assert alice_events[kicked_seq] == {"type": "hidden"}  # its visibility is unknown now
    assert joined["snapshot"] is None


def _shouter(name: str) -> Any:
    """A namespaced plugin declaring a GM command ``shout`` (a note)."""
    from zonekeep.sdk import CommandSpec, Note, NoteAdded, PluginInfo, hookimpl

    class Shouter:
        ZONEKEEP_PLUGIN = PluginInfo(name, "1.0.0", ">=0.1")

        @staticmethod
        @hookimpl
        def zonekeep_commands() -> Any:
            def shout(ctx: Any, cmd: Any) -> None:
                ctx.emit(NoteAdded(Note(f"{name}-{ctx.state.seq}", f"{name} shouts")))

            return (CommandSpec("shout", shout, "GM: shout.", who="gm", phases=()),)

    return Shouter


async def test_an_ambiguous_short_name_is_refused_naming_both(make_server: Any) -> None:
    from zonekeep.protocol.client import ClientError

    rules = Engine([*load_default_plugins(), _shouter("yell"), _shouter("holler")])
    running: Running = await make_server(ServerConfig(port=0), engine=rules)
    async with running.client() as gm:
        ids = {c["id"] for c in gm.welcome["capabilities"]["commands"]}  # type: ignore[index]
        assert {"yell.shout", "holler.shout"} <= ids
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Loud", "tavern", creatures())
            eid = created["encounter"]
            try:
                await gm.command(eid, "shout")
            except ClientError as exc:
                refused = exc
            else:
                raise AssertionError("an ambiguous short name was accepted")
            done = await gm.command(eid, "holler.shout")
            snapshot = await gm.request("snapshot", encounter=eid)
    assert (refused.code, refused.name) == (4049, "ambiguous_id")
    assert refused.message == (
        "The command 'shout' is ambiguous: it could be 'holler.shout' and 'yell.shout'; "
        "use the full id."
    )
    assert done["first_seq"] == done["last_seq"]
    assert [n["text"] for n in snapshot["snapshot"]["notes"].values()] == ["holler shouts"]
