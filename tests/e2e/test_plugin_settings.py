"""Plugin settings and asset data over a real server (issue 18, points 6, 7 and 9): the
installed hazards example declares the settings ``burn_die`` and ``burn_dc`` and gives
its ``collapsing_floor`` tag a data schema; the operator sets one setting server-wide,
the GM another per encounter, a bad one is refused and changes nothing, the plugin's
hooks read the effective values, and a restart keeps them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from e2e_support import Running, ServerConfig, start_server
from helpers import example_plugin

from zonekeep.protocol.client import ClientError
from zonekeep.sdk import ScriptedEntropy
from zonekeep.sdk.engine import Engine

example_plugin("zonekeep_hazards")


def roster() -> list[dict[str, Any]]:
    fist = {"name": "fist", "kind": "melee", "bonus": 5, "damage": "1d4+3"}
    return [
        {
            "id": "ogre",
            "name": "Ogre",
            "side": "foes",
            "zone": "kitchen",
            "hp": 40,
            "max_hp": 40,
            "attacks": [fist],
        },
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "controller": "alice",
            "zone": "kitchen",
            "hp": 20,
            "max_hp": 20,
            "attacks": [fist],
        },
    ]


def events_of(client: Any) -> list[dict[str, Any]]:
    return [n["params"]["event"] for n in client.pending_notifications() if n["method"] == "event"]


async def refused(call: Any) -> ClientError:
    with pytest.raises(ClientError) as caught:
        await call
    return caught.value


async def test_settings_are_announced_checked_kept_and_read_by_the_hooks(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    # The hazards example only (enabled by name), whatever else is installed: the settings
    # announced and kept below are exactly its own.
    engine = Engine.from_config(["hazards"])
    dice = ScriptedEntropy([20, 5])  # initiative: the ogre first
    config = ServerConfig(port=0, plugin_settings={"hazards": {"burn_dc": 12}})
    first: Running = await start_server(nursery, data, config, engine=engine, entropy=dice)
    async with first.client() as gm:
        capabilities = gm.welcome["capabilities"]  # type: ignore[index]
        settings = {(s["plugin"], s["id"]): s for s in capabilities["settings"]}
        assert settings[("hazards", "burn_die")]["default"] == "1d6"
        assert settings[("hazards", "burn_die")]["value"] == "1d6"
        assert settings[("hazards", "burn_die")]["schema"] == {"type": "string", "format": "dice"}
        assert (
            settings[("hazards", "burn_dc")]["default"],
            settings[("hazards", "burn_dc")]["value"],
        ) == (10, 12)
        assert capabilities["options"]["settings"] == {
            "hazards": {"burn_die": "1d6", "burn_dc": 12},
            "zonekeep.srd": {"sunlight": []},  # the built-in content plugin's setting
        }
        tags = {t["id"]: t for t in capabilities["asset_tags"]}
        assert tags["hazards.collapsing_floor"]["plugin"] == "hazards"
        assert (
            tags["hazards.collapsing_floor"]["data_schema"]["properties"]["fall_damage"]["format"]
            == "dice"
        )
        assert tags["hazards.tripwire"]["data_schema"] is None

        options = await gm.request("encounter_options")
        hazards = options["schema"]["properties"]["settings"]["properties"]["hazards"]
        assert hazards["properties"]["burn_dc"]["default"] == 12  # the server's value
        assert hazards["additionalProperties"] is False
        assert [
            (s["plugin"], s["id"], s["value"])
            for s in options["settings"]
            if s["plugin"] != "zonekeep.srd"  # the built-in content plugin's sunlight
        ] == [
            ("hazards", "burn_die", "1d6"),
            ("hazards", "burn_dc", 12),
        ]

        # A bad value, an unknown setting, a plugin without settings: refused, nothing made.
        before = len(first.server.rooms)
        bad = {"hazards": {"burn_die": "lots"}}
        error = await refused(
            gm.create_encounter("Brawl", "tavern", roster(), options={"settings": bad})
        )
        assert error.name == "invalid_params"
        assert error.message == (
            'options.settings.hazards.burn_die: bad dice expression string "lots"; '
            "expected e.g. '2d6', 'd8+1' or '5'."
        )
        typo = {"hazards": {"burn_dei": "1d8"}, "nobody": {"x": 1}}
        error = await refused(
            gm.create_encounter("Brawl", "tavern", roster(), options={"settings": typo})
        )
        assert error.message == (
            "options.settings.hazards.burn_dei: unknown setting (did you mean 'burn_die'?); "
            "options.settings.nobody: no plugin called 'nobody' declares settings (hazards, zonekeep.srd do)."
        )
        assert len(first.server.rooms) == before

        # The GM's burn_die over the plugin's default; the operator's burn_dc kept.
        created = await gm.create_encounter(
            "Brawl", "tavern", roster(), options={"settings": {"hazards": {"burn_die": "1d8"}}}
        )
        eid, token = created["encounter"], created["gm_token"]
        joined = await gm.join(eid, token)
        kept = {"hazards": {"burn_die": "1d8", "burn_dc": 12}, "zonekeep.srd": {"sunlight": []}}
        assert joined["snapshot"]["options"]["settings"] == kept
        for command in ("set_surprise", "place", "roll_initiative"):
            await gm.command(eid, command)
        await gm.command(eid, "ignite", creature="aria")
        gm.pending_notifications()
        # Aria's turn starts: she burns for the GM's 1d8 (a 7); it ends: the DC 12 save
        # (the operator's) fails on an 11.
        dice.push(7)
        await gm.command(eid, "end_turn", creature="ogre")
        dice.push(11)
        await gm.command(eid, "end_turn", creature="aria")
        seen = events_of(gm)
        burned = next(e for e in seen if e["type"] == "damaged")
        assert (burned["creature"], burned["amount"], burned["damage_type"]) == ("aria", 7, "fire")
        assert burned["roll"]["expr"] == "1d8"
        save = next(e for e in seen if e["type"] == "save_made")
        assert (save["creature"], save["dc"], save["success"]) == ("aria", 12, False)
    await first.server.shutdown()

    # Another operator value after a restart: the encounter keeps the ones it started with.
    later = ServerConfig(port=0, plugin_settings={"hazards": {"burn_dc": 5, "burn_die": "1d4"}})
    second: Running = await start_server(
        nursery, data, later, engine=Engine.from_config(["hazards"])
    )
    async with second.client() as gm:
        joined = await gm.join(eid, token)
        assert joined["snapshot"]["options"]["settings"] == kept
        assert gm.welcome["capabilities"]["options"]["settings"] == {  # type: ignore[index]
            "hazards": {"burn_die": "1d4", "burn_dc": 5},
            "zonekeep.srd": {"sunlight": []},
        }
    await second.server.shutdown()


async def test_asset_data_is_checked_against_the_tags_schema_at_its_path(
    make_server: Any,
) -> None:
    running: Running = await make_server(
        ServerConfig(port=0), engine=Engine.from_config(["hazards"])
    )
    arena = {
        "id": "pit",
        "name": "Pit",
        "zones": [
            {"id": "top", "name": "Top", "size": 30},
            {"id": "pit", "name": "Pit", "size": 30},
        ],
        "links": [{"a": "top", "b": "pit", "direction": "below", "clear": False}],
        "assets": [
            {"id": "rope", "name": "Rope", "kind": "prop", "zone": "top", "data": {"knots": 3}},
            {
                "id": "boards",
                "name": "Boards",
                "kind": "element",
                "zone": "top",
                "tags": ["collapsing_floor"],
                "data": {"fall_damage": 6, "fall_dammage": "1d6"},
            },
        ],
    }
    async with running.client() as gm:
        checked = await gm.request("check_arena", arena=arena)
        assert checked["problems"] == [
            {
                "path": "assets[0].data.knots",
                "message": "unknown field 'knots': no tag of this asset takes data",
            },
            {"path": "assets[1].data.fall_damage", "message": "expected a string, got integer 6"},
            {
                "path": "assets[1].data.fall_dammage",
                "message": "unknown field 'fall_dammage' (did you mean 'fall_damage'?)",
            },
        ]
        error = await refused(gm.create_encounter("Pit", arena, roster()[:1]))
        assert error.name == "invalid_params"
        assert "assets[1].data.fall_damage: expected a string, got integer 6" in error.message
        arena["assets"][0]["data"] = {}  # type: ignore[index]
        arena["assets"][1]["data"] = {"fall_damage": "2d6"}  # type: ignore[index]
        assert (await gm.request("check_arena", arena=arena))["problems"] == []
        roster_top = [dict(roster()[0], zone="top")]
        created = await gm.create_encounter("Pit", arena, roster_top)
        joined = await gm.join(created["encounter"], created["gm_token"])
        boards = joined["snapshot"]["arena"]["assets"][1]
        assert boards["data"] == {"fall_damage": "2d6"}
