"""The second example plugin (examples/plugins/wildfire), installed as a user installs it
(scripts/test: ``pip install -e examples/plugins/wildfire``, beside hazards), found through
its entry point, loaded into a real server and played over the protocol: the arena it
contributes, a brazier kicked over, its custom events and its state as each seat may see
them, and fire damage halved by a resistance."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import Running, ServerConfig
from helpers import example_plugin

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import ScriptedEntropy
from zonekeep.sdk.engine import Engine

example_plugin("zonekeep_wildfire")
example_plugin("zonekeep_hazards")


def roster() -> list[dict[str, Any]]:
    fist = {"name": "fist", "kind": "melee", "bonus": 3, "damage": "1d4", "damage_type": ""}
    return [
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "controller": "alice",
            "zone": "forge",
            "hp": 20,
            "max_hp": 20,
            "attacks": [fist],
        },
        {
            "id": "gob",
            "name": "Goblin",
            "side": "foes",
            "zone": "woodshed",
            "hp": 15,
            "max_hp": 15,
            "attacks": [fist],
        },
        {
            "id": "orc",
            "name": "Orc",
            "side": "foes",
            "zone": "woodshed",
            "hp": 30,
            "max_hp": 30,
            "damage_resistances": ["fire"],
            "attacks": [fist],
        },
    ]


def events(client: ZonekeepClient) -> dict[int, dict[str, Any]]:
    """The events a client has been sent so far, by seq."""
    return {
        n["params"]["seq"]: n["params"]["event"]
        for n in client.pending_notifications()
        if n["method"] == "event"
    }


KICKED = {
    "type": "wildfire.brazier_kicked",
    "data": {"brazier": "hearth_brazier", "creature": "aria", "zone": "woodshed"},
}
EMBERS = {"type": "wildfire.embers_left", "data": {"zone": "woodshed", "source": "hearth_brazier"}}
PUBLIC = {"kicked": ["hearth_brazier"], "ignited": []}


async def test_wildfire_is_loaded_beside_hazards_and_played_over_the_protocol(
    make_server: Any,
) -> None:
    engine = Engine.from_config()  # every installed plugin, as `zonekeep serve` loads them
    assert engine.command_owners["wildfire.kick_brazier"] == "wildfire"
    assert engine.command_owners["hazards.ignite"] == "hazards"
    # Initiative: Aria 20, the goblin 5, the orc 4. Then the two DC 13 Dexterity saves
    # (the goblin 3, the orc 2: both catch fire), then a 6 for each burn at a turn's start.
    dice = ScriptedEntropy([20, 5, 4, 3, 2, 6, 6])
    running: Running = await make_server(ServerConfig(port=0), engine=engine, entropy=dice)
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        caps: dict[str, Any] = gm.welcome["capabilities"]  # type: ignore[index]
        # hello announces the plugin's arena, conditions (both burnings), events and state.
        assert "forge" in caps["arenas"]
        conditions = {c["id"]: c for c in caps["conditions"]}
        assert {"hazards.burning", "wildfire.burning", "wildfire.soaked"} <= set(conditions)
        assert conditions["wildfire.burning"]["plugin"] == "wildfire"
        kinds = {e["id"]: e for e in caps["plugin_events"]}
        assert kinds["wildfire.brazier_kicked"]["template"] == (
            "{creature} kicks {brazier} over: fire spreads into {zone}"
        )
        assert kinds["wildfire.embers_left"]["visibility"] == "gm"
        state_specs = {
            (s["key"], s["visibility"]) for s in caps["plugin_state"] if s["plugin"] == "wildfire"
        }
        assert state_specs == {("kicked", "everyone"), ("ignited", "everyone"), ("embers", "gm")}

        # The GM's settings for this encounter: a hotter fire (the burn die is a d8).
        created = await gm.create_encounter(
            "Fire at the forge",
            "forge",
            roster(),
            options={"settings": {"wildfire": {"burn_die": "1d8"}}},
        )
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
        await alice.join(eid, seat["token"])
        link = await gm.request("create_spectator_link", encounter=eid)
        await watcher.join(eid, link["token"])
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)

        # Only a creature next to a standing brazier is offered the kick; douse nobody yet.
        offered = set((await alice.actions(eid, "aria"))["actions"])
        assert "wildfire.kick_brazier" in offered and "wildfire.douse" not in offered

        # Alice kicks it over, by its short name (only wildfire declares kick_brazier).
        kick = await alice.command(eid, "kick_brazier", creature="aria", brazier="hearth_brazier")
        for client in (gm, alice, watcher):
            await client.request("ping")  # every notification of the command has arrived
        stream = {"gm": events(gm), "alice": events(alice), "watcher": events(watcher)}
        first, last = kick["first_seq"], kick["last_seq"]
        mine = [stream["gm"][seq] for seq in range(first, last + 1)]
        assert mine[0]["type"] == "action_taken" and mine[0]["action"] == "wildfire.kick_brazier"
        assert mine[1:3] == [KICKED, EMBERS]
        # The public event reaches every seat; the GM-only one reaches players as hidden.
        kicked_seq, embers_seq = first + 1, first + 2
        for who in ("alice", "watcher"):
            assert stream[who][kicked_seq] == KICKED
            assert stream[who][embers_seq] == {"type": "hidden"}
        saves = [(e["creature"], e["dc"], e["success"]) for e in mine if e["type"] == "save_made"]
        assert saves == [("gob", 13, False), ("orc", 13, False)]

        # Plugin state, per seat: the embers are the GM's secret.
        seen = {
            who: (await c.request("snapshot", encounter=eid))["snapshot"]
            for who, c in (("gm", gm), ("alice", alice), ("watcher", watcher))
        }
        assert seen["gm"]["plugin_state"] == {
            "wildfire": {**PUBLIC, "embers": {"woodshed": "hearth_brazier"}}
        }
        assert seen["alice"]["plugin_state"] == {"wildfire": PUBLIC}
        assert seen["watcher"]["plugin_state"] == {"wildfire": PUBLIC}
        assert seen["gm"]["creatures"]["orc"]["conditions"] == ["wildfire.burning"]

        # The brazier lies on the floor: kicking it again is refused with the plugin's code.
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "kick_brazier", creature="aria", brazier="hearth_brazier")
        assert (refused.value.code, refused.value.name) == (4900, "no_brazier")

        # The goblin's turn starts: it burns for 6 (1d8); then the orc's: 6, halved by resistance.
        await gm.command(eid, "end_turn", creature="aria")
        await gm.command(eid, "end_turn", creature="gob")
        await gm.request("ping")
        burns = [
            (e["creature"], e["amount"], e["damage_type"], e["raw"], e["roll"]["expr"])
            for seq, e in events(gm).items()
            if seq > last and e["type"] == "damaged"
        ]
        assert burns == [("gob", 6, "fire", 6, "1d8"), ("orc", 3, "fire", 6, "1d8")]
        snapshot = (await watcher.request("snapshot", encounter=eid))["snapshot"]
        assert (snapshot["creatures"]["orc"]["hp"], snapshot["creatures"]["gob"]["hp"]) == (
            "hurt",
            "hurt",
        )
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert (snapshot["creatures"]["orc"]["hp"], snapshot["creatures"]["gob"]["hp"]) == (27, 9)
