"""Issue 30's "done when" for SDK 3, over real websockets: a plugin written with public
``zonekeep.sdk`` names only (tests/web_plugin.py) places a hidden web at runtime, which
no player learns of (snapshots, events, errors, actions); the web slows ``enter``
through its zone (the surcharge); fire the GM aims at that zone burns it; and the
encounter's export passes ``zonekeep verify`` (fair dice, several targets of one roll).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
import web_plugin
from e2e_support import Limits, Running, ServerConfig

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk.engine import Engine, load_default_plugins
from zonekeep.server._cli import main as cli

WEB = "web-passage"

ARENA: dict[str, Any] = {
    "id": "webbed_line",
    "name": "The webbed passage",
    "zones": [
        {"id": "gate", "name": "Gate", "size": 30},
        {"id": "passage", "name": "Passage", "size": 15},
        {"id": "hall", "name": "Hall", "size": 30},
    ],
    "links": [
        {"a": "gate", "b": "passage", "direction": "beside"},
        {"a": "passage", "b": "hall", "direction": "beside"},
    ],
}


def roster() -> list[dict[str, Any]]:
    bite = {"name": "bite", "kind": "melee", "bonus": 3, "damage": "1d4", "damage_type": ""}
    return [
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "controller": "alice",
            "hp": 30,
            "max_hp": 30,
            "zone": "gate",
            "attacks": [bite],
        },
        {
            "id": "gob",
            "name": "Goblin",
            "side": "foes",
            "hp": 40,
            "max_hp": 40,
            "zone": "passage",
            "attacks": [bite],
        },
        {
            "id": "spider",
            "name": "Giant spider",
            "side": "foes",
            "hp": 26,
            "max_hp": 26,
            "zone": "hall",
            "attacks": [bite],
        },
    ]


async def seen(client: ZonekeepClient, eid: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every notification the client was sent so far (taken from its queue) and its
    snapshot now: the snapshot's reply comes after the notifications sent before it."""
    snap: dict[str, Any] = (await client.request("snapshot", encounter=eid))["snapshot"]
    return list(client.pending_notifications()), snap


def events_of(notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n["params"]["event"] for n in notes if n["method"] == "event"]


async def turn_of(gm: ZonekeepClient, eid: str, creature: str) -> None:
    """End turns (as the GM) until ``creature``'s starts: the fair dice chose the order."""
    for _ in range(6):
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        if snap["active"] == creature:
            return
        await gm.command(eid, "end_turn", creature=snap["active"])
    raise AssertionError(f"{creature}'s turn never came")


@pytest.mark.sqlite  # zonekeep export reads SQLite files
async def test_a_hidden_web_placed_at_runtime_slows_enter_burns_and_the_log_verifies(
    make_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = Engine([*load_default_plugins(), web_plugin])
    limits = Limits(rate_per_second=100_000.0, rate_burst=100_000)
    running: Running = await make_server(
        ServerConfig(port=0, limits=limits), engine=engine, entropy=None
    )
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(helpers.deadline(30)):
            created = await gm.create_encounter("Webs", ARENA, roster())
            eid = created["encounter"]
            assert created["snapshot"]["dice"]["mode"] == "fair"
            seat = await gm.request(
                "create_seat", encounter=eid, player="alice", creatures=["aria"]
            )
            await alice.join(eid, seat["token"])
            for command in ("set_surprise", "place", "roll_initiative"):
                await gm.command(eid, command)

            # The spider spins a web in the passage, hidden from the players.
            await turn_of(gm, eid, "spider")
            await seen(alice, eid)
            await gm.command(eid, "web.spin_web", creature="spider", zone="passage", hidden=True)
            gm_snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
            assert gm_snap["hidden_assets"] == [WEB]
            web = next(a for a in gm_snap["arena"]["assets"] if a["id"] == WEB)
            assert (web["zone"], web["tags"], web["data"]) == (
                "passage",
                ["web"],
                {"dc": 12, "spun_by": "spider"},
            )
            # Alice: the action's event, and the web's as "hidden"; nothing names it.
            told, snap = await seen(alice, eid)
            kinds = [e["type"] for e in events_of(told)]
            assert kinds == ["action_taken", "hidden"]
            assert snap["arena"]["assets"] == [] and snap["hidden_assets"] == []
            assert WEB not in json.dumps([told, snap])

            # Aria's turn: going on past the passage costs double (the web), refused.
            await turn_of(gm, eid, "aria")
            with pytest.raises(ClientError) as slowed:
                await alice.command(eid, "enter", creature="aria", zones=["passage", "hall"])
            assert slowed.value.name == "not_enough_movement"
            assert slowed.value.message == (
                "Aria has 15 ft of movement available (divided by 2: difficult); going on "
                "past Passage needs more than its 15 ft."
            )
            # Naming the hidden web is refused exactly as naming a web that never was.
            refusals = []
            for asset in (WEB, "web-nowhere"):
                with pytest.raises(ClientError) as probe:
                    await alice.command(eid, "take_position", creature="aria", asset=asset)
                refusals.append((probe.value.name, probe.value.message.replace(asset, "X")))
            assert refusals[0] == refusals[1] == ("unknown_asset", "There is no asset 'X'.")
            actions = await alice.actions(eid, "aria")
            assert WEB not in json.dumps(actions)
            await seen(alice, eid)

            # The GM aims fire at the passage: the goblin burns, the web burns away.
            hp_before = gm_snap["creatures"]["gob"]["hp"]
            await gm.command(eid, "damage_zone", zone="passage", damage="2d6", damage_type="fire")
            gm_snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
            assert gm_snap["hidden_assets"] == [] and gm_snap["arena"]["assets"] == []
            assert gm_snap["creatures"]["gob"]["hp"] < hp_before
            told, snap = await seen(alice, eid)
            shown = events_of(told)
            assert [e["type"] for e in shown] == [
                "zone_affected",
                "damaged",
                "hidden",  # web.web_burned, naming the hidden web
                "hidden",  # asset_removed of a web hidden until then
                "zone_affected",
                "damaged",
            ]
            fire, burn = shown[0], shown[4]
            assert (fire["zone"], fire["damage_type"], fire["source"]) == (
                "passage",
                "fire",
                "GM gm",
            )
            assert (burn["damage_type"], burn["source"]) == ("fire", "burning webs")
            assert fire["damage"] == shown[1]["amount"]  # no resistance: all of it
            assert WEB not in json.dumps([told, snap])

            # Now the way is clear: Aria goes on past the passage into the hall.
            await alice.command(eid, "enter", creature="aria", zones=["passage", "hall"])
            snap = (await alice.request("snapshot", encounter=eid))["snapshot"]
            assert snap["creatures"]["aria"]["zone"] in ("passage", "hall")  # reactions may wait
            await gm.command(eid, "end_encounter", force=True)

    data_dir = running.server.config.data_dir
    target = tmp_path / "webs.jsonl"
    assert cli(["export", eid, "--data-dir", str(data_dir), "-o", str(target)]) == 0
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    # The fire's 2d6 is in the log once: on zone_affected, not again on the damaged event.
    fire_line = next(i for i, line in enumerate(lines) if line["event"]["type"] == "zone_affected")
    assert len(lines[fire_line]["event"]["roll"]["draws"]) == 2
    assert lines[fire_line + 1]["event"]["type"] == "damaged"
    assert lines[fire_line + 1]["event"]["roll"]["draws"] == []
    capsys.readouterr()
    assert cli(["verify", str(target)]) == 0
    assert "dice verified" in capsys.readouterr().out


async def test_per_creature_data_reaches_its_controller_only_and_the_webs_hold_while_they_last(
    make_server: Any,
) -> None:
    """The web's ``caught`` count (``visibility="owner"``): Alice sees her creature's entry
    and event, not the spider's; a spectator sees none. The restraint, a timed condition
    tied to the web, ends when fire burns the web."""
    engine = Engine([*load_default_plugins(), web_plugin])
    limits = Limits(rate_per_second=100_000.0, rate_burst=100_000)
    running: Running = await make_server(
        ServerConfig(port=0, limits=limits), engine=engine, entropy=None
    )
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        with trio.fail_after(helpers.deadline(30)):
            created = await gm.create_encounter("Webs", ARENA, roster())
            eid = created["encounter"]
            seat = await gm.request(
                "create_seat", encounter=eid, player="alice", creatures=["aria"]
            )
            await alice.join(eid, seat["token"])
            link = await gm.request("create_spectator_link", encounter=eid)
            await watcher.join(eid, link["token"])
            for command in ("set_surprise", "place", "roll_initiative"):
                await gm.command(eid, command)
            # A DC 30 web: no save (a d20, no bonus) can make it.
            await turn_of(gm, eid, "spider")
            await gm.command(eid, "web.spin_web", creature="spider", zone="passage", dc=30)
            await gm.command(eid, "move_to_zone", creature="spider", zone="passage")
            await turn_of(gm, eid, "aria")
            await seen(alice, eid)
            await seen(watcher, eid)
            await alice.command(eid, "enter", creature="aria", zones=["passage"])

            caught = {"type": "web.caught", "data": {"creature": "aria", "web": "Sticky webs"}}
            told, snap = await seen(alice, eid)
            assert caught in events_of(told)
            assert snap["plugin_state"] == {"web": {"caught": {"aria": 1}}}
            assert "restrained" in snap["creatures"]["aria"]["conditions"]
            gm_snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
            assert gm_snap["plugin_state"]["web"]["caught"] == {"aria": 1, "spider": 1}
            watched, watcher_snap = await seen(watcher, eid)
            assert caught not in events_of(watched)
            assert watcher_snap["plugin_state"] == {"web": {"caught": {}}}  # nobody's entry
            assert "web.caught" not in json.dumps(watched)

            # Fire burns the web: the restraint it held ends with it.
            await gm.command(eid, "damage_zone", zone="passage", damage="1d4", damage_type="fire")
            told, snap = await seen(alice, eid)
            ended = [e for e in events_of(told) if e["type"] == "condition_effect_ended"]
            assert [(e["creature"], e["condition"], e["reason"], e["expired"]) for e in ended] == [
                ("spider", "restrained", "web-passage ended", True),  # caught first
                ("aria", "restrained", "web-passage ended", True),
            ]
            assert "restrained" not in snap["creatures"]["aria"]["conditions"]
            assert snap["plugin_state"] == {"web": {"caught": {"aria": 1}}}
