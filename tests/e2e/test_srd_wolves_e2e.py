"""The SRD wolf in a real server (issue 30): two compendium wolves (``srd.wolf``) against
Aria. Pack Tactics gives a wolf advantage only while an ally of its is engaged with the
target and not incapacitated; a failed Strength save against the bite knocks the target
prone. Flanking is off, so that the only advantage is the pack's."""

from __future__ import annotations

from typing import Any

import helpers
import trio
from e2e_support import Running, ServerConfig

from zonekeep.sdk import ScriptedEntropy

#: A compendium reference's ``id`` names its copies: the first is ``<id>-1``.
AKELA, RAKSHA = "akela-1", "raksha-1"


def cast() -> list[dict[str, Any]]:
    return [
        {"compendium": "srd.wolf", "id": "akela", "zone": "common_room"},
        {"compendium": "srd.wolf", "id": "raksha", "zone": "common_room"},
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "zone": "common_room",
            "hp": 30,
            "max_hp": 30,
            "ac": 15,
            "abilities": {"str": 0, "dex": 0, "con": 0, "int": 0, "wis": 0, "cha": 0},
            "attacks": [
                {
                    "name": "spear",
                    "kind": "melee",
                    "bonus": 4,
                    "damage": "1d6+2",
                    "damage_type": "piercing",
                }
            ],
        },
    ]


async def _events(client: Any, done: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of the command whose result is ``done``, as ``client`` sees them."""
    seen: list[dict[str, Any]] = []
    with trio.fail_after(helpers.deadline(5)):
        while not seen or seen[-1]["seq"] < done["last_seq"]:
            seen.append(await client.notification("event"))
    return [n["event"] for n in seen if n["seq"] >= done["first_seq"]]


def _one(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [found] = [e for e in events if e["type"] == kind]
    return found


async def test_pack_tactics_and_the_bite_that_knocks_prone_in_a_real_server(
    make_server: Any,
) -> None:
    dice = ScriptedEntropy([20, 5])  # initiative: the wolves (one group: Akela, Raksha), Aria
    running: Running = await make_server(ServerConfig(port=0), entropy=dice)
    async with running.client() as gm:
        created = await gm.create_encounter("Wolves", "tavern", cast(), options={"flanking": False})
        eid = created["encounter"]
        wolf = created["snapshot"]["creatures"][AKELA]
        assert [(t["id"], t["automated"]) for t in wolf["traits"]] == [
            ("keen-senses", True),
            ("pack-tactics", True),
        ]
        [bite] = wolf["attacks"]
        assert (bite["name"], bite["bonus"], bite["damage"]) == ("bite", 4, "2d4+2")
        assert [(r["id"], r["params"]) for r in bite["on_hit"]] == [
            ("save-or-condition", {"ability": "str", "dc": 11, "condition": "prone"})
        ]
        for command in ("set_surprise", "place", "roll_initiative"):
            await _events(gm, await gm.command(eid, command))
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["active"] == AKELA
        assert [e["members"] for e in snapshot["initiative"]] == [[AKELA, RAKSHA], ["aria"]]

        # Akela bites first: no ally of hers is engaged with Aria yet, so no advantage
        # (3 + 4 = 7 misses AC 15); the bite engages her with Aria.
        dice.push(3)
        first = await _events(gm, await gm.command(eid, "attack", creature=AKELA, target="aria"))
        made = _one(first, "attack_made")
        assert (made["roll"]["dice"], made["roll"]["advantage"], made["hit"]) == (
            [3],
            "none",
            False,
        )
        await _events(gm, await gm.command(eid, "end_turn", creature=AKELA))

        # Raksha's bite: Akela is engaged with Aria and can act: advantage (15 and 2, the
        # 15 kept: 19 hits), 2 + 3 + 2 = 7 piercing, and a Strength save of 10 against
        # DC 11 fails: Aria is knocked prone.
        dice.push(15, 2, 2, 3, 10)
        second = await _events(gm, await gm.command(eid, "attack", creature=RAKSHA, target="aria"))
        made = _one(second, "attack_made")
        assert (made["roll"]["dice"], made["roll"]["kept"], made["roll"]["advantage"]) == (
            [15, 2],
            [15],
            "advantage",
        )
        assert [s for s in made["roll"]["sources"] if "pack tactics" in s] == [
            "advantage:pack tactics: " + wolf["name"]
        ]
        assert made["hit"] is True
        save = _one(second, "save_made")
        assert (save["creature"], save["ability"], save["dc"], save["roll"]["total"]) == (
            "aria",
            "str",
            11,
            10,
        )
        assert save["success"] is False
        snapshot = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snapshot["creatures"]["aria"]["hp"] == 30 - 7
        assert "prone" in snapshot["creatures"]["aria"]["conditions"]

        # Akela is stunned and Aria stands up: in the next round Raksha's bite has no
        # advantage, as her only engaged ally cannot act.
        await _events(gm, await gm.command(eid, "end_turn", creature=RAKSHA))
        for command, params in (
            ("grant_condition", {"creature": AKELA, "condition": "stunned"}),
            ("remove_condition", {"creature": "aria", "condition": "prone"}),
            ("end_turn", {"creature": "aria"}),
            ("end_turn", {"creature": AKELA}),
        ):
            await _events(gm, await gm.command(eid, command, **params))
        dice.push(3)
        third = await _events(gm, await gm.command(eid, "attack", creature=RAKSHA, target="aria"))
        made = _one(third, "attack_made")
        assert (made["roll"]["dice"], made["roll"]["advantage"], made["hit"]) == (
            [3],
            "none",
            False,
        )
        assert not any("pack tactics" in s for s in made["roll"]["sources"])
