"""The compendium over the protocol, end to end: ``list_compendium`` (search, filters,
paging, bad params) and ``create_encounter`` rosters naming compendium entries
(copies forming an initiative group, overrides, an unknown id refused by name, every
bundled entry in play), on
servers over the in-memory transport; the operator's compendium folders and the plugins'
``zonekeep_compendium`` sources, a source declared twice refused at start.

Every message the clients receive is validated against the schemas (``memory_support``), the
``list_compendium`` results' entries against ``compendium.schema.json`` among them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import Attack, CompendiumEntry, CompendiumSource, Size, hookimpl
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import CompendiumError, HitPoints
from zonekeep.server import ZonekeepServer
from zonekeep.server._cli import main

MakeServer = Callable[..., Any]
SRD = Path(__file__).resolve().parent.parent / "plugins" / "srd" / "srd-5.1.json"


async def ask(client: ZonekeepClient, **params: Any) -> dict[str, Any]:
    with trio.fail_after(helpers.deadline(5)):
        result: dict[str, Any] = await client.request("list_compendium", **params)
    return result


async def refused(client: ZonekeepClient, method: str, params: dict[str, Any]) -> ClientError:
    with trio.fail_after(helpers.deadline(5)), pytest.raises(ClientError) as info:
        await client.request(method, **params)
    return info.value


def heroes() -> list[dict[str, Any]]:
    sword = {"name": "sword", "bonus": 5, "damage": "1d8+3", "damage_type": "slashing"}
    return [
        {"id": "aria", "name": "Aria", "side": "party", "controller": "ana", "dex_mod": 3,
         "hp": 24, "max_hp": 24, "ac": 16, "zone": "common_room", "attacks": [sword]},
        {"id": "brom", "name": "Brom", "side": "party", "controller": "bo", "dex_mod": 1,
         "hp": 30, "max_hp": 30, "ac": 18, "zone": "common_room", "attacks": [sword]},
    ]  # fmt: skip


def homebrew(name: str = "homebrew", entry_id: str = "bog-hag") -> dict[str, Any]:
    """A compendium file of one creature."""
    return {
        "name": name,
        "title": "Our table's creatures",
        "entries": [
            {
                "id": entry_id,
                "name": "Bog Hag",
                "size": "Medium",
                "type": "fey",
                "ac": 14,
                "hp": {"average": 45, "dice": "10d8"},
                "speeds": {"walk": 30, "swim": 30},
                "abilities": {"str": 3, "dex": 1, "con": 2, "int": 1, "wis": 2, "cha": 1},
                "skills": {"perception": 4},
                "passive_perception": 14,
                "challenge": 3,
                "attacks": [
                    {"name": "claws", "bonus": 5, "damage": "2d6+3", "damage_type": "slashing"}
                ],
                "tags": ["swamp", "hag"],
            }
        ],
    }


# -- list_compendium ----------------------------------------------------------------------------


async def test_search_by_name_finds_the_goblins_with_their_data(running: Running) -> None:
    async with running.client() as client:
        found = await ask(client, text="goblin", type="humanoid")
    ids = [item["id"] for item in found["entries"]]
    # Words are found in names and in tags: the bugbear is a goblinoid.
    assert ids == ["srd.bugbear", "srd.goblin", "srd.goblin-boss", "srd.hobgoblin"]
    assert found["total"] == 4 and found["offset"] == 0
    goblin = found["entries"][1]
    assert goblin["source"] == "srd"
    entry = goblin["entry"]
    assert (entry["name"], entry["size"], entry["ac"], entry["challenge"]) == (
        "Goblin",
        "Small",
        15,
        0.25,
    )
    assert entry["hp"] == {"average": 7, "dice": "2d6"}
    assert entry["abilities"] == {"str": -1, "dex": 2, "con": 0, "int": 0, "wis": -1, "cha": -1}
    assert [a["name"] for a in entry["attacks"]] == ["scimitar", "shortbow"]
    (source,) = found["sources"]
    assert source["name"] == "srd" and source["license"] == "CC-BY-4.0"
    assert "System Reference Document 5.1" in source["attribution"]
    assert "creativecommons.org/licenses/by/4.0/legalcode" in source["attribution"]


async def test_filters_by_type_tag_and_challenge_rating(running: Running) -> None:
    async with running.client() as client:
        undead = await ask(client, type="undead", cr_max=0.25)
        swamp = await ask(client, tag="swamp", cr_min=5)
        dragons = await ask(client, text="young dragon", cr_min=7, cr_max=8)
        nothing = await ask(client, text="tarrasque")
        kept = await ask(client, ids=["srd.ogre", "srd.goblin", "srd.gone", "srd.ogre"])
    assert [i["id"] for i in undead["entries"]] == ["srd.skeleton", "srd.zombie"]
    assert [i["id"] for i in swamp["entries"]] == [
        "srd.troll",
        "srd.young-black-dragon",
        "srd.young-green-dragon",
    ]
    assert [i["id"] for i in dragons["entries"]] == [
        "srd.young-black-dragon",
        "srd.young-green-dragon",
    ]
    assert all(i["entry"]["damage_immunities"] for i in dragons["entries"])
    assert nothing == {"total": 0, "offset": 0, "entries": [], "sources": []}
    assert [i["id"] for i in kept["entries"]] == ["srd.goblin", "srd.ogre"]


async def test_pages_cover_every_entry_once_in_order(running: Running) -> None:
    async with running.client() as client:
        first = await ask(client, limit=50)
        pages = []
        offset = 0
        while True:
            page = await ask(client, offset=offset, limit=7)
            assert page["offset"] == offset and page["total"] == first["total"]
            if not page["entries"]:
                break
            assert len(page["entries"]) <= 7
            pages += [i["id"] for i in page["entries"]]
            offset += 7
    assert first["total"] >= 40
    assert len(pages) == first["total"] == len(set(pages))
    assert pages[: len(first["entries"])] == [i["id"] for i in first["entries"]]
    names = [name.lower() for name in (i.split(".", 1)[1] for i in pages)]
    assert names == sorted(names)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"limit": 0}, "limit must be from 1 to 50"),
        ({"limit": 51}, "limit must be from 1 to 50"),
        ({"offset": -1}, "offset must be 0 or more"),
        ({"cr_min": 31}, "cr_min must be a challenge rating from 0 to 30"),
        ({"cr_min": 2, "cr_max": 1}, "'cr_min' (2) must not be above 'cr_max' (1)"),
        ({"text": 5}, "text"),
        ({"text": "goblin " * 40}, "text must be at most 200 characters"),
        ({"type": ["beast"]}, "type"),
        ({"colour": "green"}, "colour"),
        ({"ids": ["srd.goblin"] * 51}, "ids may hold at most 50 ids"),
        ({"ids": "srd.goblin"}, "ids"),
    ],
)
async def test_bad_params_are_refused_and_the_connection_goes_on(
    running: Running, params: dict[str, Any], words: str
) -> None:
    async with running.client() as client:
        error = await refused(client, "list_compendium", params)
        assert (error.code, error.name) == (1005, "invalid_params")
        assert words in error.message
        assert (await ask(client, text="dire wolf"))["total"] == 1


async def test_pages_count_against_the_reply_byte_budget(make_server: MakeServer) -> None:
    limits = Limits(reply_bytes_burst=20_000, reply_bytes_per_second=1.0)
    running: Running = await make_server(ServerConfig(port=0, limits=limits))
    async with running.client() as client:
        # A full page, tens of KB: sent, and it overdraws the budget.
        every = await ask(client, limit=50)
        assert len(every["entries"]) == 50 <= every["total"]
        error = await refused(client, "list_compendium", {"limit": 1})
        assert (error.code, error.name) == (5001, "rate_limited")
        assert "Retry in" in error.message
        with trio.fail_after(helpers.deadline(5)):
            assert await client.request("ping") == {}  # other requests are not held back


async def test_list_compendium_needs_hello_first(running: Running) -> None:
    async with running.client(hello=False) as client:
        error = await refused(client, "list_compendium", {})
    assert error.name == "hello_required"


# -- rosters by reference -----------------------------------------------------------------------


async def test_four_goblins_and_a_goblin_boss_by_reference(running: Running) -> None:
    roster = [
        *heroes(),
        {"compendium": "srd.goblin", "count": 4, "zone": "common_room", "side": "goblins",
         "overrides": [{"name": "Snikt"}, {}, {}, {"hp": 10}]},
        {"compendium": "srd.goblin-boss", "zone": "kitchen", "side": "goblins", "hidden": True,
         "overrides": {"name": "Grak", "hp": 30, "ac": 18}},
    ]  # fmt: skip
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Goblin ambush", "tavern", roster)
        creatures = created["snapshot"]["creatures"]
        assert list(creatures) == [
            "aria",
            "brom",
            "goblin-1",
            "goblin-2",
            "goblin-3",
            "goblin-4",
            "goblin-boss-1",
        ]
        goblins = [creatures[f"goblin-{n}"] for n in (1, 2, 3, 4)]
        assert [g["name"] for g in goblins] == ["Snikt", "Goblin 2", "Goblin 3", "Goblin 4"]
        assert [(g["hp"], g["max_hp"]) for g in goblins] == [(7, 7), (7, 7), (7, 7), (10, 10)]
        for goblin in goblins:
            assert goblin["group"] == "goblin"
            assert (goblin["side"], goblin["controller"], goblin["pc"]) == ("goblins", "gm", False)
            assert (goblin["size"], goblin["ac"], goblin["dex_mod"]) == ("Small", 15, 2)
            assert goblin["zone"] == "common_room" and not goblin["hidden"]
            assert goblin["passive_perception"] == 9
            assert goblin["saves"] == {
                "str": -1,
                "dex": 2,
                "con": 0,
                "int": 0,
                "wis": -1,
                "cha": -1,
            }
            assert goblin["skills"]["stealth"] == 6
            assert goblin["attacks"][0] == {
                "name": "scimitar",
                "kind": "melee",
                "bonus": 4,
                "damage": "1d6+2",
                "damage_type": "slashing",
                "reach": 5,
                "range": 0,
                "long_range": 0,
                "magical": False,
                "properties": [],
                "extra_damage": [],
                "on_hit": [],
            }
        boss = creatures["goblin-boss-1"]
        assert (boss["name"], boss["hp"], boss["max_hp"], boss["ac"]) == ("Grak", 30, 30, 18)
        assert boss["group"] is None and boss["hidden"] and boss["zone"] == "kitchen"
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
    # The identical goblins roll once and share one slot (encounter.txt:12.3: one roll for a
    # group of identical creatures); the boss and the heroes have their own.
    slots = {entry["slot"]: entry["members"] for entry in snapshot["initiative"]}
    assert slots["goblin"] == ["goblin-1", "goblin-2", "goblin-3", "goblin-4"]
    assert len(slots) == 4 and slots["goblin-boss-1"] == ["goblin-boss-1"]


def rosters_of_bundled_entries(entries: dict[str, dict[str, Any]], room: int) -> list[list[str]]:
    """The entry ids in rosters whose creatures fit in a zone with ``room`` capacity left."""
    rosters: list[list[str]] = [[]]
    used = 0
    for entry_id in sorted(entries):
        need = Size[entries[entry_id]["size"].upper()].occupancy
        if used + need > room:
            rosters.append([])
            used = 0
        rosters[-1].append(entry_id)
        used += need
    return rosters


async def test_every_bundled_entry_joins_an_encounter_and_takes_its_turn(running: Running) -> None:
    """Every SRD entry plays as it stands: named in a roster, it becomes a creature with
    the entry's name, size, hit points, AC and attacks, placed in the tavern's common room,
    and it gets an initiative slot. The entries go in several encounters, as many as the
    common room (capacity 36, two heroes in it) holds at a time."""
    entries = {e["id"]: e for e in json.loads(SRD.read_text(encoding="utf-8"))["entries"]}
    rosters = rosters_of_bundled_entries(entries, room=36 - 2)
    assert sum(len(r) for r in rosters) == len(entries) and len(rosters) > 1
    async with running.client() as gm:
        for roster in rosters:
            refs = [{"compendium": f"srd.{i}", "zone": "common_room"} for i in roster]
            with trio.fail_after(helpers.deadline(10)):
                created = await gm.create_encounter("Menagerie", "tavern", [*heroes(), *refs])
                eid = created["encounter"]
                await gm.command(eid, "set_surprise", surprised=[])
                await gm.command(eid, "place", positions={})
                await gm.command(eid, "roll_initiative")
                snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
            creatures = snapshot["creatures"]
            assert sorted(creatures) == sorted(["aria", "brom", *(f"{i}-1" for i in roster)])
            for entry_id in roster:
                entry, creature = entries[entry_id], creatures[f"{entry_id}-1"]
                assert (creature["name"], creature["size"], creature["ac"]) == (
                    entry["name"],
                    entry["size"],
                    entry["ac"],
                ), entry_id
                assert creature["hp"] == creature["max_hp"] == entry["hp"]["average"], entry_id
                assert creature["zone"] == "common_room", entry_id
                assert [a["name"] for a in creature["attacks"]] == [
                    a["name"] for a in entry["attacks"]
                ], entry_id
            slotted = [m for slot in snapshot["initiative"] for m in slot["members"]]
            assert sorted(slotted) == sorted(creatures)


async def test_two_references_to_one_entry_share_the_group_and_number_on(running: Running) -> None:
    roster = [
        *heroes(),
        {"id": "goblin-1", "name": "Not from the book", "side": "goblins", "zone": "bar"},
        {"compendium": "srd.goblin", "count": 2, "zone": "common_room", "side": "goblins"},
        {"compendium": "srd.goblin", "zone": "kitchen", "side": "goblins"},
        {"compendium": "srd.wolf", "count": 2, "id": "pup", "group": "pack", "zone": "bar"},
    ]
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Two rooms", "tavern", roster)
    creatures = created["snapshot"]["creatures"]
    assert [c for c in creatures if c.startswith("goblin")] == [
        "goblin-1",
        "goblin-2",
        "goblin-3",
        "goblin-4",
    ]
    assert creatures["goblin-1"]["group"] is None  # the one spelled out
    assert [creatures[f"goblin-{n}"]["group"] for n in (2, 3, 4)] == ["goblin"] * 3
    assert creatures["goblin-4"]["zone"] == "kitchen"
    assert [(creatures[p]["group"], creatures[p]["side"]) for p in ("pup-1", "pup-2")] == [
        ("pack", "enemies"),
        ("pack", "enemies"),
    ]


async def test_an_unknown_entry_is_refused_naming_it_and_nothing_is_created(
    running: Running,
) -> None:
    roster = [
        *heroes(),
        {"compendium": "srd.goblin", "count": 2},
        {"compendium": "srd.gobbo", "count": 3},
    ]
    async with running.client() as gm:
        error = await refused(
            gm, "create_encounter", {"name": "Typo", "arena": "tavern", "creatures": roster}
        )
    assert (error.code, error.name) == (4000, "invalid_params")
    assert "creatures[3].compendium: there is no compendium entry 'srd.gobbo'" in error.message
    assert running.server.rooms == {}


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"compendium": "srd.goblin", "count": 0}, "creatures[2].count: must be a whole number"),
        ({"compendium": "srd.goblin", "count": 51}, "creatures[2].count"),
        ({"compendium": "srd.goblin", "count": 2, "overrides": [{}]}, "one object per copy (2)"),
        ({"compendium": "srd.goblin", "overrides": {"hp": 0}}, "overrides.hp: 0 is outside 1"),
        ({"compendium": "srd.goblin", "overrides": {"str": 5}}, "overrides.str: unknown"),
        ({"compendium": "srd.goblin", "zone": "moon"}, "unknown zone 'moon'"),
        ({"compendium": "srd.goblin", "speed": 40}, "creatures[2].speed: unknown key"),
        ({"compendium": 7}, "creatures[2].compendium: must be an entry id"),
        (
            [{"compendium": "srd.giant-rat", "count": 50}] * 5,
            "the compendium references ask for 250 creatures; a roster's references may make at most 200",
        ),
    ],
)
async def test_bad_references_are_refused(
    running: Running, item: dict[str, Any] | list[dict[str, Any]], words: str
) -> None:
    items = item if isinstance(item, list) else [item]
    async with running.client() as gm:
        error = await refused(
            gm,
            "create_encounter",
            {"name": "Bad", "arena": "tavern", "creatures": [*heroes(), *items]},
        )
    assert error.name == "invalid_params"
    assert words in error.message
    assert running.server.rooms == {}


# -- the operator's folders -------------------------------------------------------------------


async def test_a_compendium_folder_adds_its_entries(
    make_server: MakeServer, tmp_path: Path
) -> None:
    folder = tmp_path / "compendium"
    folder.mkdir()
    (folder / "ours.json").write_text(json.dumps(homebrew()), encoding="utf-8")
    (folder / "notes.txt").write_text("not a compendium file", encoding="utf-8")
    running: Running = await make_server(ServerConfig(port=0, compendium_dirs=(folder,)))
    async with running.client() as gm:
        found = await ask(gm, source="homebrew")
        assert [i["id"] for i in found["entries"]] == ["homebrew.bog-hag"]
        assert found["sources"][0]["title"] == "Our table's creatures"
        assert (await ask(gm, tag="hag", source="homebrew"))["total"] == 1  # the SRD has hags
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter(
                "Bog",
                "swamp",
                [*[dict(h, zone=None) for h in heroes()], {"compendium": "homebrew.bog-hag"}],
            )
    hag = created["snapshot"]["creatures"]["bog-hag-1"]
    assert (hag["name"], hag["hp"], hag["ac"], hag["speeds"]) == (
        "Bog Hag",
        45,
        14,
        {"walk": 30, "swim": 30},
    )
    assert hag["maneuver_dc"] == 8 + 2 + 3  # proficiency +2 at CR 3, Strength +3


async def test_an_operator_turns_the_srd_plugin_off(make_server: MakeServer) -> None:
    """The SRD creatures come from the built-in content plugin ``zonekeep.srd``: disabled,
    the server still starts, its compendium has no ``srd`` entry and a roster naming
    one is refused by name, while the rules (and an operator's own files) still play."""
    config = ServerConfig(port=0, store="memory", plugins_disabled=("zonekeep.srd",))
    engine = Engine.from_config(disabled=config.plugins_disabled)
    assert "zonekeep.srd" not in {name for name, _ in engine.pm.list_name_plugin()}
    running: Running = await make_server(config, engine=engine)
    async with running.client() as gm:
        everything = await ask(gm)
        assert everything["total"] == 0 and everything["entries"] == []
        assert (await ask(gm, text="goblin"))["entries"] == []
        error = await refused(
            gm,
            "create_encounter",
            {
                "name": "Ambush",
                "arena": "tavern",
                "creatures": [*heroes(), {"compendium": "srd.goblin"}],
            },
        )
        assert (error.code, error.name) == (4000, "invalid_params")
        assert "creatures[2].compendium: there is no compendium entry 'srd.goblin'" in (
            error.message
        )
        assert running.server.rooms == {}
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter("Duel", "tavern", heroes())
    assert sorted(created["snapshot"]["creatures"]) == ["aria", "brom"]


def test_a_source_declared_twice_is_refused_at_start(tmp_path: Path) -> None:
    folder = tmp_path / "compendium"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(homebrew("ours")), encoding="utf-8")
    (folder / "b.json").write_text(json.dumps(homebrew("ours", "marsh-hag")), encoding="utf-8")
    (folder / "c.json").write_text(json.dumps(homebrew("srd")), encoding="utf-8")
    config = ServerConfig(port=0, store="memory", compendium_dirs=(folder,))
    with pytest.raises(CompendiumError) as info:
        ZonekeepServer(config, engine=Engine())
    message = str(info.value)
    assert f"compendium source 'ours' is declared twice: by {folder / 'a.json'} and by " in message
    assert str(folder / "b.json") in message
    assert (
        f"compendium source 'srd' is declared twice: by {folder / 'c.json'} and by plugin "
        "'zonekeep.srd'"
    ) in message


def test_zonekeep_serve_refuses_to_start_with_a_clash(tmp_path: Path) -> None:
    folder = tmp_path / "compendium"
    folder.mkdir()
    (folder / "mine.json").write_text(json.dumps(homebrew("srd")), encoding="utf-8")
    config = tmp_path / "server.toml"
    config.write_text(
        f'[server]\nport = 0\nstore = "memory"\ncompendium_dirs = ["{folder}"]\n',
        encoding="utf-8",
    )
    # In a process of its own: serve configures the process's logging.
    done = subprocess.run(
        [sys.executable, "-m", "zonekeep.server._cli", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=helpers.deadline(60),
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("zonekeep: cannot load the compendium:\n")
    assert f"by {folder / 'mine.json'} and by plugin 'zonekeep.srd'" in done.stderr


def test_config_check_reports_compendium_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "compendium"
    folder.mkdir()
    config = tmp_path / "server.toml"
    config.write_text(f'[server]\ncompendium_dirs = ["{folder}"]\n', encoding="utf-8")
    (folder / "ours.json").write_text(json.dumps(homebrew()), encoding="utf-8")
    assert main(["config", "check", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "ok\n"
    (folder / "theirs.json").write_text(json.dumps(homebrew()), encoding="utf-8")
    assert main(["config", "check", "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"compendium: compendium source 'homebrew' is declared twice: by {folder / 'ours.json'} "
        f"and by {folder / 'theirs.json'}\n"
    )


def test_an_invalid_file_is_refused_at_start_with_every_problem(tmp_path: Path) -> None:
    folder = tmp_path / "compendium"
    folder.mkdir()
    broken = homebrew()
    broken["entries"][0]["hp"] = {"average": 44, "dice": "10d8"}
    broken["entries"][0]["attacks"][0]["damage_type"] = "sonic"
    (folder / "broken.json").write_text(json.dumps(broken), encoding="utf-8")
    (folder / "junk.json").write_text("{not json", encoding="utf-8")
    config = ServerConfig(port=0, store="memory", compendium_dirs=(folder, tmp_path / "nowhere"))
    with pytest.raises(CompendiumError) as info:
        ZonekeepServer(config, engine=Engine())
    problems = info.value.problems
    where = f"{folder / 'broken.json'}.entries[0]"
    assert f"{where}.hp: 10d8 averages 45, not 44" in problems
    assert f"{where}.attacks[0].damage_type: 'sonic' is not a damage type" in problems
    assert any(p.startswith(f"{folder / 'junk.json'}: not JSON") for p in problems)
    assert f"{tmp_path / 'nowhere'}: the compendium folder does not exist" in problems


# -- plugins ------------------------------------------------------------------------------------


def _fey() -> CompendiumSource:
    sprite = CompendiumEntry(
        id="sprite",
        name="Sprite",
        size=Size.TINY,
        type="fey",
        ac=15,
        hp=HitPoints(2, "1d4"),
        speeds={"walk": 10, "fly": 40},
        abilities={"str": -4, "dex": 4, "con": 0, "int": 2, "wis": 1, "cha": 0},
        passive_perception=13,
        challenge=0.25,
        attacks=(Attack("longsword", "melee", 2, "1", "slashing"),),
        skills={"perception": 3, "stealth": 8},
        tags=("forest",),
    )
    return CompendiumSource("fey", "Fey of the plugin", (sprite,), attribution="by us")


class FeyPlugin:
    @staticmethod
    @hookimpl
    def zonekeep_compendium() -> Any:
        return [_fey()]


class ClashingPlugin:
    @staticmethod
    @hookimpl
    def zonekeep_compendium() -> Any:
        return [homebrew("srd")]


class BrokenPlugin:
    @staticmethod
    @hookimpl
    def zonekeep_compendium() -> Any:
        raise RuntimeError("no data today")


async def test_a_plugin_contributes_entries(make_server: MakeServer) -> None:
    running: Running = await make_server(engine=Engine([*load_default_plugins(), FeyPlugin()]))
    async with running.client() as gm:
        found = await ask(gm, text="sprite")
        assert [i["id"] for i in found["entries"]] == ["fey.sprite"]
        assert found["sources"] == [
            {"name": "fey", "title": "Fey of the plugin", "license": "", "attribution": "by us"}
        ]
        assert (await ask(gm, type="fey", source="fey"))["total"] == 1  # the SRD has fey too
        with trio.fail_after(helpers.deadline(5)):
            created = await gm.create_encounter(
                "Glade", "tavern", [*heroes(), {"compendium": "fey.sprite", "count": 2}]
            )
    sprites = [created["snapshot"]["creatures"][f"sprite-{n}"] for n in (1, 2)]
    assert [(s["size"], s["group"]) for s in sprites] == [("Tiny", "sprite"), ("Tiny", "sprite")]


@pytest.mark.parametrize(
    ("plugin", "words"),
    [
        (ClashingPlugin(), "compendium source 'srd' is declared twice: by plugin 'zonekeep.srd'"),
        (BrokenPlugin(), "failed in zonekeep_compendium: RuntimeError('no data today')"),
    ],
)
def test_a_plugin_that_clashes_or_fails_stops_the_start(plugin: object, words: str) -> None:
    engine = Engine([*load_default_plugins(), plugin])
    with pytest.raises(CompendiumError) as info:
        ZonekeepServer(ServerConfig(port=0, store="memory"), engine=engine)
    assert words in str(info.value)
    assert "plugin '" in str(info.value)
