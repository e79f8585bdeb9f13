"""The builder's requests over real websockets to a real server (issue 16):
``list_arenas``, ``check_arena``, ``check_character``, ``encounter_options``, seats
without characters in ``create_encounter`` and ``submit_character``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_support import Running, ServerConfig
from lobby_support import refused

from zonekeep.sdk import hookimpl
from zonekeep.sdk.engine import Engine, load_default_plugins
from zonekeep.server import ZonekeepServer
from zonekeep.server._registry import ArenaLibraryError, plugin_arenas

ROOT = Path(__file__).parents[2]
MakeServer = Callable[..., Any]
ARIA = json.loads((ROOT / "examples" / "characters" / "aria.json").read_text())


def goblins() -> list[dict[str, Any]]:
    return [{"compendium": "srd.goblin", "count": 2, "zone": "common_room"}]


async def test_list_arenas_pages_the_bundled_arenas_with_their_zones(running: Running) -> None:
    async with running.client() as client:
        first = await client.request("list_arenas", limit=2)
        assert first["total"] == 3 and first["offset"] == 0
        assert [a["name"] for a in first["arenas"]] == ["cliffside", "swamp"]
        rest = await client.request("list_arenas", offset=2)
        [tavern] = rest["arenas"]
        assert tavern["name"] == "tavern"
        zones = [z["id"] for z in tavern["arena"]["zones"]]
        assert "common_room" in zones and "cellar" in zones
        assert {"a": "kitchen", "b": "cellar"}.items() <= tavern["arena"]["links"][3].items()
        swamp = first["arenas"][1]["arena"]  # a TOML file, converted to an object
        assert swamp["zones"] and "$schema" not in tavern["arena"]
        error = await refused(client.request("list_arenas", limit=21))
        assert error.name == "invalid_params"


async def test_check_arena_lists_every_problem_at_its_path(running: Running) -> None:
    broken = {
        "id": "pit",
        "name": "The pit",
        "zones": [{"id": "floor", "name": "Floor", "size": "Enormous"}, {"id": "ledge"}],
        "links": [{"a": "floor", "b": "cellar", "direction": "beside"}],
    }
    async with running.client() as client:
        checked = await client.request("check_arena", arena=broken)
        assert checked["arena"] is None
        paths = [p["path"] for p in checked["problems"]]
        assert any(p.startswith("zones[0].size") for p in paths), paths
        assert any(p.startswith("zones[1]") for p in paths), paths
        assert any(p.startswith("links[0].b") for p in paths), paths
        assert len(paths) >= 3
        toml = (ROOT / "examples" / "arenas" / "swamp.toml").read_text()
        good = await client.request("check_arena", text=toml, format="toml")
        assert good["problems"] == [] and good["arena"]["id"] == "swamp"
        bad = await client.request("check_arena", text='id = "x"\nzones = [', format="toml")
        assert bad["arena"] is None and bad["problems"][0]["message"].startswith("invalid TOML")
        bad = await client.request("check_arena", text="{nope", format="json")
        assert bad["problems"][0]["path"] == "line 1"
        for text, kind in (("a = " + "[" * 5000, "toml"), ("[" * 5000, "json")):
            deep = await client.request("check_arena", text=text, format=kind)
            assert deep["arena"] is None
            assert deep["problems"][0]["message"].startswith(f"invalid {kind.upper()}")
        error = await refused(client.request("check_arena"))
        assert error.name == "invalid_params"
        # A checked arena creates an encounter as it is.
        created = await client.create_encounter(
            "Swamp", good["arena"], goblins()[:0], seats=[{"player": "Ana"}]
        )
        assert created["snapshot"]["arena"]["id"] == "swamp"


async def test_encounter_options_gives_each_option_its_range_and_meaning(
    running: Running,
) -> None:
    async with running.client() as client:
        schema = (await client.request("encounter_options"))["schema"]
    props = schema["properties"]
    assert props["round_seconds"]["minimum"] == 1 and props["round_seconds"]["maximum"] == 60
    assert "show_enemy_hp" in props and props["show_enemy_hp"]["default"] is False
    assert all(p.get("description") for p in props.values()), props


async def test_seats_wait_for_characters_that_players_submit(running: Running) -> None:
    async with running.client() as gm:
        created = await gm.create_encounter(
            "Ambush",
            "tavern",
            goblins(),
            seats=[{"player": "Ana", "zone": "bar"}, {"player": "Ben"}],
        )
        eid = created["encounter"]
        assert set(created["seats"]) == {"Ana", "Ben"}
        listed = await gm.list_encounters()
        [info] = listed["encounters"]
        assert {s["player"]: s["waiting"] for s in info["seats"]} == {"Ana": True, "Ben": True}
        async with running.client() as ana, running.client() as ben, running.client() as spy:
            joined = await ana.join(eid, created["seats"]["Ana"])
            assert joined["role"] == "player"
            await ben.join(eid, created["seats"]["Ben"])
            # A character with problems: every one named, nothing changed.
            wrong = {**ARIA, "abilities": {"str": 1}, "hp": 0}
            checked = await ana.request("check_character", character=wrong)
            paths = {p["path"] for p in checked["problems"]}
            assert {"character.abilities", "character.hp"} <= paths, paths
            seq = created["seq"]
            error = await refused(ana.request("submit_character", encounter=eid, character=wrong))
            assert error.name == "invalid_params"
            assert "character.abilities" in error.message and "character.hp" in error.message
            assert running.server.rooms[eid].state.seq == seq
            # A player cannot fill another seat.
            error = await refused(
                ana.request("submit_character", encounter=eid, character=ARIA, player="Ben")
            )
            assert error.name == "not_your_creature"
            sent = await ana.request("submit_character", encounter=eid, character=ARIA)
            assert (sent["player"], sent["seq"]) == ("Ana", seq + 1)
            assert re.fullmatch(r"aria-[0-9a-f]{6}", sent["creature"])  # a random suffix
            event = await gm.notification("event")
            assert event["event"]["type"] == "creature_added"
            assert event["event"]["creature"]["controller"] == "Ana"
            assert event["event"]["creature"]["zone"] == "bar"
            error = await refused(ana.request("submit_character", encounter=eid, character=ARIA))
            assert "already" in error.message
            listed = await gm.list_encounters()
            waiting = {s["player"]: s["waiting"] for s in listed["encounters"][0]["seats"]}
            assert waiting == {"Ana": False, "Ben": True}
            seats = (await gm.request("list_seats", encounter=eid))["seats"]
            assert seats == [
                {"player": "Ana", "connections": 1, "waiting": False},
                {"player": "Ben", "connections": 1, "waiting": True},
            ]
            error = await refused(ana.request("list_seats", encounter=eid))
            assert error.name == "gm_only"
            # A spectator cannot send one.
            links = await gm.request("create_spectator_link", encounter=eid)
            await spy.join(eid, links["token"])
            error = await refused(
                spy.request("submit_character", encounter=eid, character=ARIA, player="Ben")
            )
            assert error.name == "spectator_read_only"
            # Once the GM has placed everyone, it is too late: the GM adds creatures then.
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            ben_sheet = {**ARIA, "name": "Ben the Bold"}
            error = await refused(
                ben.request("submit_character", encounter=eid, character=ben_sheet)
            )
            assert (error.code, error.name) == (4004, "wrong_phase")
            await gm.command(eid, "roll_initiative")
            assert running.server.rooms[eid].state.initiative  # initiative has started
            seq = running.server.rooms[eid].state.seq
            error = await refused(
                ben.request("submit_character", encounter=eid, character=ben_sheet)
            )
            assert error.name == "wrong_phase" and "ask the gm" in error.message.lower()
            assert running.server.rooms[eid].state.seq == seq
    # The character is an event of the log (replay and export keep it).
    events = [e for _, e in await running.server.store.read(eid)]
    assert any(type(e).__name__ == "CreatureAdded" for e in events)


async def test_the_gm_may_fill_a_waiting_seat(running: Running) -> None:
    async with running.client() as gm:
        created = await gm.create_encounter("Ambush", "tavern", [], seats=[{"player": "Cy"}])
        eid = created["encounter"]
        sent = await gm.request("submit_character", encounter=eid, character=ARIA, player="Cy")
        assert sent["player"] == "Cy"
        cy = running.server.rooms[eid].state.creatures[sent["creature"]]
        assert cy.zone == "common_room" and cy.pc  # no zone asked for: the first zone
        error = await refused(
            gm.request("submit_character", encounter=eid, character=ARIA, player="Dee")
        )
        assert error.name == "invalid_params" and "no seat" in error.message
        error = await refused(
            gm.create_encounter("Twice", "tavern", [], seats=[{"player": "A"}, {"player": "A"}])
        )
        assert error.name == "invalid_params"
        error = await refused(gm.create_encounter("None", "tavern", []))
        assert error.name == "invalid_params"
        error = await refused(
            gm.create_encounter("Far", "tavern", [], seats=[{"player": "A", "zone": "moon"}])
        )
        assert "seats[0].zone" in error.message


# -- arenas contributed by plugins (zonekeep_arenas) --------------------------------------------

WATCHTOWER = {
    "id": "watchtower",
    "name": "Watchtower",
    "zones": [
        {"id": "gate", "name": "Gate", "size": "Medium"},
        {"id": "top", "name": "Top of the tower", "size": "Small"},
    ],
    "links": [{"a": "gate", "b": "top", "direction": "above"}],
}


class TowerPlugin:
    @staticmethod
    @hookimpl
    def zonekeep_arenas() -> Any:
        return [WATCHTOWER]


class TavernPlugin:
    """An arena named like a bundled file: the operator's file wins."""

    @staticmethod
    @hookimpl
    def zonekeep_arenas() -> Any:
        return [{**WATCHTOWER, "id": "tavern", "name": "Not the tavern"}]


class BrokenArenaPlugin:
    @staticmethod
    @hookimpl
    def zonekeep_arenas() -> Any:
        return [{**WATCHTOWER, "links": [{"a": "gate", "b": "nowhere", "direction": "above"}]}]


async def test_a_plugin_contributes_an_arena(make_server: MakeServer) -> None:
    engine = Engine([*load_default_plugins(), TowerPlugin(), TavernPlugin()])
    running: Running = await make_server(engine=engine)
    async with running.client() as gm:
        assert gm.welcome is not None
        assert gm.welcome["capabilities"]["arenas"] == [
            "cliffside",
            "swamp",
            "tavern",
            "watchtower",
        ]
        listed = await gm.request("list_arenas")
        arenas = {a["name"]: a["arena"] for a in listed["arenas"]}
        assert arenas["watchtower"] == WATCHTOWER
        assert arenas["tavern"]["name"] != "Not the tavern"  # the operator's file wins
        created = await gm.create_encounter(
            "On the tower", "watchtower", [], seats=[{"player": "ana", "zone": "top"}]
        )
        assert created["snapshot"]["arena"]["id"] == "watchtower"


def test_a_plugin_arena_that_is_broken_or_contributed_twice_stops_the_start() -> None:
    for plugins, words in (
        ([BrokenArenaPlugin()], "plugin "),
        ([TowerPlugin(), TowerPlugin()], "arena 'watchtower' is contributed twice"),
    ):
        engine = Engine([*load_default_plugins(), *plugins])
        with pytest.raises(ArenaLibraryError) as info:
            ZonekeepServer(ServerConfig(port=0, store="memory"), engine=engine)
        assert words in str(info.value)
    with pytest.raises(ArenaLibraryError) as broken:
        plugin_arenas(Engine([*load_default_plugins(), BrokenArenaPlugin()]))
    assert "nowhere" in str(broken.value)  # the arena loader's problem, at its path
