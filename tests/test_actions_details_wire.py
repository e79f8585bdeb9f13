"""`actions`' `details` and `ending`, and `join`'s `history`, through the
real client and server (the in-memory transport).

- Each attack lists the targets in its range and sight, never a hidden creature for a
  player; the GM's own view lists it.
- ``enter`` lists the zones with what entering costs, and none (unavailable, with the
  refusal) once no movement is left.
- Every unavailable command, sent as it is, gets exactly the code and sentence its
  detail announced (and changes nothing); a plugin's command too.
- The GM's ``ending`` names the dying PC that keeps the encounter open; a dying PC is
  engaged with nobody.
- ``join`` with ``history`` gives a fresh page the recent log, filtered for its seat.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, Loaded, Running, ServerConfig, creatures

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import Command, CommandSpec, Param, RuleContext, hookimpl
from zonekeep.sdk.engine import IN_PROCESS, Engine, LoadedPlugin, load_default_plugins
from zonekeep.server import InMemoryStore

MakeServer = Callable[..., Any]

BOW = {
    "name": "bow",
    "kind": "ranged",
    "bonus": 5,
    "damage": "1d8+3",
    "damage_type": "piercing",
    "range": 80,
    "long_range": 320,
}


def roster() -> list[dict[str, Any]]:
    """The tavern roster: Aria (alice) with a blade and a bow, Bram (bob) and the goblin in
    the common room, the hidden ogre there too, an orc out of sight in the kitchen."""
    found = creatures()
    found[0]["attacks"] = [*found[0]["attacks"], BOW]
    found[3]["zone"] = "common_room"  # the ogre, hidden
    orc = {**found[2], "id": "orc", "name": "Orc", "zone": "kitchen", "dex_mod": 0}
    return [*found, orc]


class Taunt:
    """A table's plugin: ``taunt`` an enemy in your zone (a bonus action)."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def taunt(ctx: RuleContext, cmd: Command) -> None:
            me = ctx.creature(cmd.params["creature"])
            target = ctx.creature(cmd.params["target"], role="target")
            if target.side == me.side or target.zone != me.zone:
                ctx.refuse("invalid_target", f"{me.name} can only taunt an enemy nearby.")

        return (
            CommandSpec(
                "taunt",
                taunt,
                "Bonus action: taunt an enemy.",
                {
                    "creature": Param("creature", True, "the taunter"),
                    "target": Param("creature", True, "the enemy"),
                },
                costs=("bonus",),
            ),
        )


async def table(
    make_server: MakeServer,
) -> tuple[Running, Callable[..., Any]]:
    """A server whose dice show their highest face (Aria acts first) with the taunt plugin."""
    engine = Engine([*load_default_plugins(), LoadedPlugin("taunt", "1.0", IN_PROCESS, Taunt)])
    # Many refused commands in a row, on purpose: no rate limit or abuse rule in the way.
    limits = Limits(rate_per_second=100_000, rate_burst=100_000, abuse_refusals=100_000)
    config = ServerConfig(port=0, limits=limits)
    running = await make_server(config, engine=engine, entropy=Loaded())
    return running, running.client


async def start(
    gm: ZonekeepClient, alice: ZonekeepClient, bob: ZonekeepClient | None = None
) -> tuple[str, str]:
    """The encounter at Aria's first turn; alice seated for Aria (and bob for Bram)."""
    with trio.fail_after(helpers.deadline(5)):
        eid: str = (await gm.create_encounter("Details", "tavern", roster()))["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
        await alice.join(eid, seat["token"])
        if bob is not None:
            other = await gm.request("create_seat", encounter=eid, player="bob")
            await bob.join(eid, other["token"])
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
        snap = await gm.request("snapshot", encounter=eid)
    assert snap["snapshot"]["active"] == "aria"
    return eid, seat["token"]


async def details(client: ZonekeepClient, eid: str, cid: str) -> dict[str, dict[str, Any]]:
    with trio.fail_after(helpers.deadline(5)):
        reply = await client.actions(eid, cid)
    assert reply["actions"] == [d["id"] for d in reply["details"] if d["available"]]
    return {d["id"]: d for d in reply["details"]}


def well_formed(client: ZonekeepClient, command: str, cid: str, other: str) -> dict[str, Any]:
    """Params of the right type for each required parameter of ``command`` (from
    ``hello``'s capabilities, as a third-party client would build them)."""
    assert client.welcome is not None
    info = next(c for c in client.welcome["capabilities"]["commands"] if c["id"] == command)
    values = {
        "creature": other,
        "creatures": [other],
        "zone": "bar",
        "strings": ["bar"],
        "string": "tables",
        "integer": 5,
        "boolean": True,
        "object": {},
        "any": 1,
    }
    params = {n: values[p["type"]] for n, p in info["params"].items() if p["required"]}
    params["creature"] = cid
    return params


async def sent_each_unavailable(
    client: ZonekeepClient, eid: str, cid: str, other: str
) -> list[str]:
    """Send every command the details call unavailable; check each refusal matches."""
    found = await details(client, eid, cid)
    before = (await client.request("snapshot", encounter=eid))["seq"]
    checked = []
    for command, detail in found.items():
        if detail["available"]:
            continue
        params = well_formed(client, command, cid, other)
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await client.command(eid, command, **params)
        assert (info.value.name, info.value.message) == (detail["code"], detail["message"])
        checked.append(command)
    assert (await client.request("snapshot", encounter=eid))["seq"] == before
    return checked


# -- targets in range and sight, never hidden for a player --------------------------------


async def test_targets_are_those_in_range_and_sight_and_never_hidden_for_a_player(
    make_server: MakeServer,
) -> None:
    _running, client = await table(make_server)
    async with client() as gm, client() as alice, client() as watcher:
        eid, _token = await start(gm, alice)
        mine = await details(alice, eid, "aria")
        attack = mine["attack"]
        assert attack["available"] and attack["code"] is None and attack["message"] is None
        assert attack["targets"] is None and attack["zones"] is None
        by_name = {a["name"]: a for a in attack["attacks"]}
        assert by_name["blade"]["label"] == "Blade +4, 1d6+2"
        assert by_name["bow"]["label"] == "Bow +5, 1d8+3"
        # Out of sight in the kitchen: the orc for neither; the hidden ogre for nobody here.
        assert by_name["blade"]["targets"] == ["bram", "gob"]
        assert by_name["bow"]["targets"] == ["bram", "gob"]
        assert mine["shove"]["targets"] == ["bram", "gob"]
        assert mine["taunt"]["targets"] == ["gob"]
        assert "ogre" not in json.dumps(mine).lower()
        # The GM's view of the same creature: the ogre is a target the rules allow.
        gm_view = await details(gm, eid, "aria")
        blade = next(a for a in gm_view["attack"]["attacks"] if a["name"] == "blade")
        assert blade["targets"] == ["bram", "gob", "ogre"]
        assert gm_view["taunt"]["targets"] == ["gob", "ogre"]
        # A spectator: every command refused as a spectator's command is, no values.
        with trio.fail_after(helpers.deadline(5)):
            link = await gm.request("create_spectator_link", encounter=eid)
            await watcher.join(eid, link["token"])
        seen = await details(watcher, eid, "aria")
        assert {(d["available"], d["code"]) for d in seen.values()} == {
            (False, "spectator_read_only")
        }
        assert all(d["attacks"] is None and d["targets"] is None for d in seen.values())
        assert await sent_each_unavailable(watcher, eid, "aria", "gob")


async def test_a_revealed_creature_becomes_a_target_for_the_player(
    make_server: MakeServer,
) -> None:
    _running, client = await table(make_server)
    async with client() as gm, client() as alice:
        eid, _token = await start(gm, alice)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="ogre", field="hidden", value=False)
        blade = (await details(alice, eid, "aria"))["attack"]["attacks"][0]
        assert blade["targets"] == ["bram", "gob", "ogre"]


# -- zones and their cost ------------------------------------------------------------------


async def test_zones_come_with_their_cost_and_go_when_no_movement_is_left(
    make_server: MakeServer,
) -> None:
    _running, client = await table(make_server)
    async with client() as gm, client() as alice:
        eid, _token = await start(gm, alice)
        enter = (await details(alice, eid, "aria"))["enter"]
        assert enter["available"]
        assert {z["zone"]: (z["cost_feet"], z["path"]) for z in enter["zones"]} == {
            "bar": (30, ["bar"]),
            "kitchen": (30, ["kitchen"]),
            "balcony": (30, ["balcony"]),
            "cellar": (30, ["kitchen", "cellar"]),
        }
        assert (await details(alice, eid, "aria"))["take_position"]["props"] == [
            "tables",
            "chairs",
        ]
        with trio.fail_after(helpers.deadline(5)):
            before = (await gm.request("snapshot", encounter=eid))["seq"]
            await alice.command(eid, "enter", creature="aria", zones=["bar"])
        enter = (await details(alice, eid, "aria"))["enter"]
        assert enter["zones"] == []
        assert (await details(alice, eid, "aria"))["enter"] == enter  # asked again
        # A rewind to before the move: the answer follows the state, not a kept one.
        with trio.fail_after(helpers.deadline(5)):
            await gm.request("rewind", encounter=eid, to_seq=before)
        assert len((await details(alice, eid, "aria"))["enter"]["zones"]) == 4
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "enter", creature="aria", zones=["bar"])
        enter = (await details(alice, eid, "aria"))["enter"]
        assert enter["zones"] == []
        assert (enter["available"], enter["code"]) == (False, "not_enough_movement")
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await alice.command(eid, "enter", creature="aria", zones=["common_room"])
        assert (info.value.name, info.value.message) == ("not_enough_movement", enter["message"])
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "dash", creature="aria")
        enter = (await details(alice, eid, "aria"))["enter"]
        assert enter["available"]
        assert {z["zone"]: z["cost_feet"] for z in enter["zones"]} == {
            "common_room": 30,
            "kitchen": 30,
            "cellar": 30,
        }


# -- every unavailable command, sent: the same refusal -------------------------------------


async def test_each_unavailable_command_sent_gets_the_announced_refusal(
    make_server: MakeServer,
) -> None:
    _running, client = await table(make_server)
    async with client() as gm, client() as alice, client() as bob:
        eid, _token = await start(gm, alice, bob)
        # At the start of Aria's turn (the reaction and the stand-up are not for now).
        assert {"release_readied", "stand", "engage", "withdraw"} <= set(
            await sent_each_unavailable(alice, eid, "aria", "gob")
        )
        # Bob for Bram, on Aria's turn: everything but the reaction, for the same reason.
        checked = await sent_each_unavailable(bob, eid, "bram", "gob")
        assert "attack" in checked and "taunt" in checked and "end_turn" in checked
        codes = {c: d["code"] for c, d in (await details(bob, eid, "bram")).items()}
        assert {codes[c] for c in checked if c != "release_readied"} == {"not_your_turn"}
        assert codes["release_readied"] == "nothing_readied"
        # Alice for Bram, who is not hers.
        assert "attack" in await sent_each_unavailable(alice, eid, "bram", "gob")
        # Her action and bonus action spent: attack, dash, taunt ... are refused.
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "attack", creature="aria", target="gob", attack="bow")
            await alice.command(eid, "taunt", creature="aria", target="gob")
        checked = await sent_each_unavailable(alice, eid, "aria", "gob")
        assert {"attack", "dash", "dodge", "taunt", "shove"} <= set(checked)
        found = await details(alice, eid, "aria")
        assert found["taunt"]["code"] == "no_bonus_action_left"
        assert [a["targets"] for a in found["attack"]["attacks"]] == [[], []]
        # The hidden ogre's turn: the refusals name nobody a player may not see.
        with trio.fail_after(helpers.deadline(5)):
            active = "aria"
            while active != "ogre":  # the GM may end anyone's turn
                await gm.command(eid, "end_turn", creature=active)
                active = (await gm.request("snapshot", encounter=eid))["snapshot"]["active"]
        found = await details(alice, eid, "aria")
        assert found["dash"]["code"] == "not_your_turn"
        assert "ogre" not in json.dumps(found).lower()
        assert "dash" in await sent_each_unavailable(alice, eid, "aria", "gob")


# -- the GM's hint, and engagements of a dying PC -------------------------------------------


async def test_the_gm_is_told_what_keeps_the_encounter_open(make_server: MakeServer) -> None:
    _running, client = await table(make_server)
    async with client() as gm, client() as alice:
        eid, _token = await start(gm, alice)
        with trio.fail_after(helpers.deadline(5)):
            first = await gm.request("actions", encounter=eid, creature="gob")
            theirs = await alice.request("actions", encounter=eid, creature="aria")
        fire = "'Grease fire' threatens whoever is in Kitchen"  # the orc is there
        assert first["ending"] == {"over": None, "blockers": [fire], "dying": []}
        assert theirs["ending"] is None
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "end_turn", creature="aria")  # the goblin's turn
            await gm.command(eid, "override", creature="aria", field="hp", value=1)
            await gm.command(eid, "attack", creature="gob", target="aria")  # engages, then hits
            snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
            hint = (await gm.request("actions", encounter=eid, creature="gob"))["ending"]
        assert "dying" in snap["creatures"]["aria"]["conditions"]
        assert snap["engagements"] == []  # a dying creature is engaged with nobody
        assert hint == {"over": None, "blockers": ["Aria is dying", fire], "dying": ["aria"]}
        with trio.fail_after(helpers.deadline(5)):
            for foe in ("gob", "ogre", "orc"):
                await gm.command(eid, "grant_condition", creature=foe, condition="defeated")
            hint = (await gm.request("actions", encounter=eid, creature="bram"))["ending"]
            snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snap["phase"] == "turns"  # the goblins are beaten, but Aria is dying
        assert hint["over"] == (
            "every creature of the side 'goblins' is defeated, surrendered or escaped"
        )
        assert hint["blockers"] == ["Aria is dying"]  # the fire threatens nobody now


# -- the recent log on join -----------------------------------------------------------------


async def test_join_with_history_gives_the_recent_log_filtered_for_the_seat(
    make_server: MakeServer,
) -> None:
    _running, client = await table(make_server)
    async with client() as gm, client() as alice:
        eid, token = await start(gm, alice)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "add_note", text="The ogre waits.", hidden=True)
            await gm.command(eid, "add_note", text="It smells of ale.")
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
        async with client() as page, client() as fresh:
            with trio.fail_after(helpers.deadline(5)):
                joined = await page.join(eid, token, history=3)
            assert joined["snapshot"] is not None and joined["events"] is None
            history = joined["history"]
            assert len(history) == 3
            assert [e["type"] for e in history[-2:]] == ["hidden", "note_added"]
            assert history[-1]["note"]["text"] == "It smells of ale."
            assert "ogre" not in json.dumps(joined).lower()
            with trio.fail_after(helpers.deadline(5)):
                whole = await fresh.join(eid, token, history=500)
            assert len(whole["history"]) == seq  # the whole log: shorter than asked
            assert whole["history"][-3:] == history
            # Without history, or resuming with last_seq: no history.
            with trio.fail_after(helpers.deadline(5)):
                plain = await fresh.join(eid, token)
                resumed = await fresh.join(eid, token, last_seq=seq - 1, history=3)
            assert plain["history"] is None
            assert resumed["history"] is None and len(resumed["events"]) == 1
            for bad in (0, 501, -1):
                with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
                    await fresh.join(eid, token, history=bad)
                assert info.value.name == "invalid_params"


async def test_history_from_a_trimmed_log_is_what_is_kept_for_the_gm_only(
    make_server: MakeServer,
) -> None:
    # Only the in-memory store trims its log (SQLite keeps every event): a store that
    # keeps 4 events per encounter shows what a page gets from a trimmed log.
    engine = Engine([*load_default_plugins()])
    running = await make_server(ServerConfig(port=0), engine=engine, store=InMemoryStore(4))
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Trimmed", "tavern", roster())
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
        assert seq > 4
        async with running.client() as page, running.client() as player:
            with trio.fail_after(helpers.deadline(5)):
                as_gm = await page.join(eid, created["gm_token"], history=10)
                as_player = await player.join(eid, seat["token"], history=10)
            assert [e["type"] for e in as_gm["history"]][-1] == "turn_started"
            assert len(as_gm["history"]) == 4  # the events still kept
            assert as_player["history"] is None and as_player["snapshot"] is not None


class Fumble:
    """A plugin whose ``fumble`` command's precondition always fails (raises)."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def broken(state: Any, creature: Any) -> None:
            raise RuntimeError("fumbled")

        return (
            CommandSpec(
                "fumble",
                lambda ctx, cmd: None,
                "Fumble.",
                {"creature": Param("creature", True, "who")},
                requires=broken,
            ),
        )


async def test_a_failing_plugin_command_is_unavailable_as_sending_it_is_refused(
    make_server: MakeServer,
) -> None:
    engine = Engine([*load_default_plugins(), LoadedPlugin("fumble", "1.0", IN_PROCESS, Fumble)])
    running = await make_server(ServerConfig(port=0), engine=engine, entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        eid, _token = await start(gm, alice)
        fumble = (await details(alice, eid, "aria"))["fumble"]
        assert (fumble["available"], fumble["code"]) == (False, "plugin_error")
        with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
            await alice.command(eid, "fumble", creature="aria")
        assert (info.value.name, info.value.message) == ("plugin_error", fumble["message"])


# -- a caster's spells: each with its slots and its targets or zones --------------------------


async def test_a_casters_actions_list_its_spells_and_a_cast_spends_a_slot(
    make_server: MakeServer,
) -> None:
    _running, client = await table(make_server)
    found = roster()
    found[0]["traits"] = [
        {
            "id": "spellcasting",
            "name": "Spellcasting",
            "params": {
                "ability": "int",
                "dc": 15,
                "attack_bonus": 7,
                "cantrips": ["fire-bolt"],
                "prepared": ["fireball"],
            },
        }
    ]
    found[0]["resources"] = {"spell-slots-3": 2}
    async with client() as gm, client() as alice:
        with trio.fail_after(helpers.deadline(5)):
            eid: str = (await gm.create_encounter("Spells", "tavern", found))["encounter"]
            seat = await gm.request(
                "create_seat", encounter=eid, player="alice", creatures=["aria"]
            )
            await alice.join(eid, seat["token"])
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
        mine = await details(alice, eid, "aria")
        spells = {c["params"]["spell"]: c for c in mine["cast"]["choices"]}
        assert spells["fire-bolt"]["label"] == "Fire Bolt (cantrip)"
        assert spells["fire-bolt"]["options"] == {"target": ["bram", "gob"]}  # no hidden ogre
        assert spells["fireball"]["options"]["slot"] == [3]
        assert "common_room" in spells["fireball"]["options"]["zone"]
        assert spells["fire-bolt"]["info"] == {"level": 0, "concentration": False}
        by_zone = spells["fireball"]["info"]["targets_by_zone"]
        assert set(by_zone) == set(spells["fireball"]["options"]["zone"])
        seen_ids = sorted(i for ids in by_zone.values() for i in ids)
        assert seen_ids == ["aria", "bram", "gob"]  # the hidden ogre left out here too
        assert mine["attack"]["choices"] is None
        gm_view = await details(gm, eid, "aria")
        gm_spells = {c["params"]["spell"]: c for c in gm_view["cast"]["choices"]}
        assert gm_spells["fire-bolt"]["options"]["target"] == ["bram", "gob", "ogre"]
        gm_zones = gm_spells["fireball"]["info"]["targets_by_zone"]
        assert sorted(i for ids in gm_zones.values() for i in ids) == [
            "aria",
            "bram",
            "gob",
            "ogre",
        ]
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "cast", creature="aria", spell="fire-bolt", target="gob")
            snap = await alice.request("snapshot", encounter=eid)
        aria = snap["snapshot"]["creatures"]["aria"]
        assert aria["resources"] == {"spell-slots-3": 2}  # a cantrip spends no slot
        again = await details(alice, eid, "aria")
        assert not again["cast"]["available"] and again["cast"]["choices"] == []
