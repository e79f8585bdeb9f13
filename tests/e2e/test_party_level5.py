"""Issue 31's first "done when", in a real server on the default SQLite store: the
pregenerated level-5 party (examples/characters: Kael the fighter, Pip the rogue, Hilda
the cleric, Seraphine the wizard), each player on a websocket seat of their own and the
GM on theirs, fights an ogre and two bugbears (``srd.ogre``, ``srd.bugbear``) to the
end of the encounter, through the protocol only:

- Pip's first hit has no Sneak Attack (no advantage, nobody else engaged with the ogre);
  Kael's Extra Attack and Action Surge (a second action: four attacks in one turn);
- Hilda blesses three of them (a level-1 slot spent, her concentration);
- Seraphine's fireball over the yard: each bugbear's Dexterity save, then one 8d6 roll
  (its dice drawn once) shared by both, full on the failure and half on the success,
  the level-3 slot spent and shown in her player's snapshot;
- the ogre's hit on Seraphine opens a Shield prompt on her player's seat, with its
  deadline; taken, the attack is rolled against AC 17 (12 + 5) and misses;
- Pip's hit the next round, with Kael engaged with the ogre: Sneak Attack, 3d6, once
  (the turn's use spent, and given back when the next turn starts);
- the ogre's hit on Hilda: a Constitution save for her concentration, which fails, and
  bless ends on all three;
- the ogre runs: the four engaged with it are asked in turn, each on their own seat, for
  an opportunity attack; Pip's hit, on the ogre's turn, gets Sneak Attack again (once
  per turn, not per round);
- the party finishes the fight, the rules end the encounter, and its export, as the
  operator's ``zonekeep export`` writes it and as a GM client replays it with ``join``
  from seq 0, passes ``zonekeep verify`` (the real CLI, in a subprocess).

The dice are the encounter's own, seeded (``"dice": {"mode": "seeded"}``: public, every
roll a function of the seed and the roll counter, SPEC.md "Dice"), so the test knows each
die before it is rolled. Where the story needs an outcome (a save that fails), the GM
first passes over dice with free rolls (``roll``, recorded and verified like every
other roll) until the next dice give it; no roll is ever forced or overridden.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import e2e_support
import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig

from zonekeep.plugins.spells import SHIELD, SHIELDED
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import die
from zonekeep.sdk.host import EMPTY_MIX, dice_in
from zonekeep.server._cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
ZONEKEEP = [sys.executable, "-m", "zonekeep.server._cli"]
#: Chosen so that the first six dice (initiative, in roster order: the ogre, the
#: bugbears' group, Kael, Pip, Hilda, Seraphine) give Pip 24, Kael 20, Hilda 18,
#: Seraphine 15, the ogre 8, the bugbears 4.
SEED = "level5-party-593"
ARENA: dict[str, Any] = {
    "id": "keep", "name": "The keep",
    "zones": [
        {"id": "hall", "name": "Hall", "size": 30},
        {"id": "bar", "name": "Bar", "size": 15},
        {"id": "yard", "name": "Yard", "size": 30},
    ],
    "links": [
        {"a": "hall", "b": "bar", "direction": "beside"},
        {"a": "bar", "b": "yard", "direction": "beside"},
    ],
}  # fmt: skip
PLAYERS = {"kael": "alice", "pip": "bob", "hilda": "carol", "seraphine": "dave"}
OGRE, BUGBEAR_1, BUGBEAR_2 = "ogre-1", "bugbear-1", "bugbear-2"


def sheet(name: str) -> dict[str, Any]:
    """A pregenerated character file as a player's client sends it."""
    path = ROOT / "examples" / "characters" / f"{name}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


class Table:
    """The GM's view of the fight: every event it is sent, in order, and the roll
    counter (one more than the highest counter in the events so far)."""

    def __init__(self, gm: ZonekeepClient, eid: str, seq: int) -> None:
        self.gm, self.eid, self.seq = gm, eid, seq
        self.next_die = 0
        self.log: list[dict[str, Any]] = []

    async def events_until(self, seq: int) -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        with trio.fail_after(helpers.deadline(10)):
            while self.seq < seq:
                note = await self.gm.notification("event")
                assert note["seq"] == self.seq + 1
                self.seq = note["seq"]
                for counter, _, _ in dice_in(note["event"]):
                    self.next_die = max(self.next_die, counter + 1)
                self.log.append(note["event"])
                seen.append(note["event"])
        return seen

    async def send(self, client: ZonekeepClient, kind: str, **params: Any) -> list[dict[str, Any]]:
        """``client`` sends the command; the events it caused, as the GM saw them."""
        done = await client.command(self.eid, kind, **params)
        return await self.events_until(done["last_seq"])

    async def steer(self, sides: list[int], ok: Callable[[list[int]], bool]) -> list[int]:
        """The GM passes over dice (free d2 rolls, private, recorded like any roll) until
        the next dice, of ``sides``, satisfy ``ok``; returns their faces."""
        skip = 0
        while True:
            start = self.next_die + skip
            faces = [die(SEED, EMPTY_MIX, start + i, s) for i, s in enumerate(sides)]
            if ok(faces):
                break
            skip += 1
            assert skip < 20_000, "no such dice ahead"
        while skip:
            count = min(skip, 100)
            done = await self.gm.request(
                "roll", encounter=self.eid, dice=f"{count}d2", label="passing", private=True
            )
            await self.events_until(done["seq"])
            skip -= count
        return faces

    async def snapshot(self, client: ZonekeepClient | None = None) -> dict[str, Any]:
        reply = await (client or self.gm).request("snapshot", encounter=self.eid)
        snap: dict[str, Any] = reply["snapshot"]
        return snap

    async def active(self) -> str:
        active: str = (await self.snapshot())["active"]
        return active


def damage(events: list[dict[str, Any]]) -> list[tuple[str, int, list[int]]]:
    return [(e["creature"], e["amount"], e["roll"]["dice"]) for e in of(events, "damaged")]


def attacks(events: list[dict[str, Any]]) -> list[tuple[str, str, int, int, bool]]:
    return [
        (e["attacker"], e["target"], e["roll"]["total"], e["target_ac"], e["hit"])
        for e in of(events, "attack_made")
    ]


def zonekeep(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ZONEKEEP, *args],
        capture_output=True,
        text=True,
        timeout=helpers.deadline(60),
        check=False,
    )


#: High request rates: the GM's private d2 rolls that pass dice use the table's bucket.
LIMITS = Limits(
    rate_per_second=1000.0, rate_burst=1000, table_rate_per_second=1000.0, table_rate_burst=1000
)


async def seat_the_party(
    gm: Any, seats: dict[str, Any]
) -> tuple[Table, dict[str, Any], dict[str, str]]:
    """Create the keep's encounter (an ogre and two bugbears, seeded dice, flanking off:
    the only advantage in these fights is the one the story says), seat each player and
    submit its pregenerated sheet. The table, ``create_encounter``'s result and each
    hero's creature id by its name."""
    roster: list[dict[str, Any]] = [
        {"compendium": "srd.ogre", "zone": "hall", "side": "raiders"},
        {"compendium": "srd.bugbear", "count": 2, "zone": "yard", "side": "raiders"},
    ]
    created = await gm.create_encounter(
        "The keep",
        ARENA,
        roster,
        dice={"mode": "seeded", "seed": SEED},
        options={"flanking": False},
        seats=[{"player": p, "zone": "hall"} for p in PLAYERS.values()],
    )
    eid = created["encounter"]
    table = Table(gm, eid, created["seq"])
    ids: dict[str, str] = {}
    for name, player in PLAYERS.items():
        await seats[player].join(eid, created["seats"][player])
        done = await seats[player].request("submit_character", encounter=eid, character=sheet(name))
        assert (done["player"], done["unmapped"]) == (player, [])
        ids[name] = done["creature"]
        await table.events_until(done["seq"])
    return table, created, ids


@pytest.mark.sqlite  # zonekeep export reads SQLite files
async def test_the_level5_party_fights_to_the_end_and_the_export_verifies(
    make_server: Any, tmp_path: Path
) -> None:
    validated = e2e_support.VALIDATED[0]
    running: Running = await make_server(ServerConfig(port=0, limits=LIMITS), entropy=None)
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as carol,
        running.client() as dave,
    ):
        seats = {"alice": alice, "bob": bob, "carol": carol, "dave": dave}
        table, created, ids = await seat_the_party(gm, seats)
        eid = created["encounter"]
        assert created["snapshot"]["dice"]["mode"] == "seeded"
        kael, pip, hilda, sera = (ids[n] for n in PLAYERS)
        await table.send(gm, "set_surprise")
        await table.send(gm, "place")
        rolled = of(await table.send(gm, "roll_initiative"), "initiative_rolled")
        order = [(e["slot"], e["total"]) for e in rolled[0]["entries"]]
        assert order == [(pip, 24), (kael, 20), (hilda, 18), (sera, 15), (OGRE, 8), ("bugbear", 4)]
        snap = await table.snapshot()
        sheets = {c: snap["creatures"][c] for c in (kael, pip, hilda, sera, OGRE)}
        assert [(s["hp"], s["ac"]) for s in sheets.values()] == [
            (44, 19), (38, 15), (43, 18), (32, 12), (59, 11)
        ]  # fmt: skip
        assert snap["engagements"] == []
        ogre_hp = 59

        # -- round 1 ------------------------------------------------------------------------
        # Pip's shortsword (+7, 1d6+4): a hit, but nobody else is engaged with the ogre and
        # Pip has no advantage: no Sneak Attack.
        d20, d6 = await table.steer([20, 6], lambda f: 4 <= f[0] <= 19)
        seen = await table.send(bob, "attack", creature=pip, target=OGRE, attack="shortsword")
        assert attacks(seen) == [(pip, OGRE, d20 + 7, 11, True)]
        assert of(seen, "attack_made")[0]["roll"]["advantage"] == "none"
        assert damage(seen) == [(OGRE, d6 + 4, [d6])]
        assert of(seen, "resource_spent") == []
        ogre_hp -= d6 + 4
        await table.send(bob, "end_turn", creature=pip)

        # Kael: the Attack action (Extra Attack: two attacks), then Action Surge (one more
        # action: two more attacks). Longsword +7, 1d8+4; criticals on 19-20.
        hits = []
        for surge in (False, True):
            if surge:
                seen = await table.send(alice, "action_surge", creature=kael)
                assert [
                    (e["type"], e["creature"], e.get("resource"), e.get("left"), e.get("cost"))
                    for e in seen
                ] == [
                    ("resource_spent", kael, "action-surge", 0, None),
                    ("action_granted", kael, None, None, "action"),
                ]
                assert of(seen, "action_granted")[0]["source"] == "action-surge"
            hit, d8, miss = await table.steer(
                [20, 8, 20], lambda f: 4 <= f[0] <= 18 and f[1] <= 4 and f[2] <= 3
            )
            seen = await table.send(alice, "attack", creature=kael, target=OGRE, attack="longsword")
            taken = [(e["action"], e["cost"]) for e in of(seen, "action_taken")]
            assert taken == [("attack", "action")]
            granted = [(e["cost"], e["source"]) for e in of(seen, "action_granted")]
            assert granted == [("attack", "extra attack")]
            assert attacks(seen) == [(kael, OGRE, hit + 7, 11, True)]
            assert damage(seen) == [(OGRE, d8 + 4, [d8])]
            seen = await table.send(alice, "attack", creature=kael, target=OGRE, attack="longsword")
            assert [(e["action"], e["cost"]) for e in of(seen, "action_taken")] == [
                ("attack", "attack")
            ]
            assert attacks(seen) == [(kael, OGRE, miss + 7, 11, False)]
            hits.append(d8 + 4)
        ogre_hp -= sum(hits)
        mark = table.next_die
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "attack", creature=kael, target=OGRE, attack="longsword")
        assert refused.value.name == "no_action_left"
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "action_surge", creature=kael)
        assert refused.value.name == "no_uses_left"
        assert (
            table.next_die == mark and (await table.snapshot())["creatures"][OGRE]["hp"] == ogre_hp
        )
        await table.send(alice, "end_turn", creature=kael)

        # Hilda blesses Kael, Pip and herself: a level-1 slot, her concentration.
        seen = await table.send(
            carol, "cast", creature=hilda, spell="bless", targets=[kael, pip, hilda]
        )
        assert [(e["resource"], e["left"]) for e in of(seen, "resource_spent")] == [
            ("spells-this-turn", 2),
            ("spell-slots-1", 3),
        ]
        applied = [e["effect"] for e in of(seen, "condition_effect_applied")]
        assert [(e["creature"], e["condition"]) for e in applied] == [
            (hilda, "concentrating"), (kael, "bless"), (pip, "bless"), (hilda, "bless"),
        ]  # fmt: skip
        assert all(e["parent"] == applied[0]["id"] for e in applied[1:])
        await table.send(carol, "end_turn", creature=hilda)

        # Seraphine's fireball over the yard (spell DC 15): bugbear 1 fails its Dexterity
        # save (+2), bugbear 2 makes it; one 8d6 roll for both.
        faces = await table.steer(
            [20, 20, *[6] * 8], lambda f: f[0] + 2 < 15 <= f[1] + 2 and sum(f[2:]) >= 27
        )
        save_1, save_2, fire = faces[0], faces[1], faces[2:]
        seen = await table.send(
            dave,
            "cast",
            creature=sera,
            spell="fireball",
            zone="yard",
            targets=[BUGBEAR_1, BUGBEAR_2],
        )
        assert [(e["resource"], e["left"]) for e in of(seen, "resource_spent")] == [
            ("spells-this-turn", 2),
            ("spell-slots-3", 1),
        ]
        saves = [
            (e["creature"], e["ability"], e["roll"]["total"], e["dc"], e["success"])
            for e in of(seen, "save_made")
        ]
        assert saves == [
            (BUGBEAR_1, "dex", save_1 + 2, 15, False),
            (BUGBEAR_2, "dex", save_2 + 2, 15, True),
        ]
        burnt = of(seen, "damaged")
        assert [(e["creature"], e["amount"], e["hp"], e["damage_type"]) for e in burnt] == [
            (BUGBEAR_1, sum(fire), 0, "fire"),
            (BUGBEAR_2, sum(fire) // 2, 27 - sum(fire) // 2, "fire"),
        ]
        # One roll: the same dice on both events, drawn (counted) once, on the first.
        assert [e["roll"]["dice"] for e in burnt] == [fire, fire]
        assert [len(e["roll"]["draws"]) for e in burnt] == [8, 0]
        assert [(e["creature"], e["condition"]) for e in of(seen, "condition_applied")] == [
            (BUGBEAR_1, "defeated")
        ]
        # The slot spent, as Seraphine's player sees it.
        shown = (await table.snapshot(dave))["creatures"][sera]["resources"]
        assert (shown["spell-slots-1"], shown["spell-slots-2"], shown["spell-slots-3"]) == (4, 3, 1)
        await table.send(dave, "end_turn", creature=sera)
        assert await table.active() == OGRE

        # The ogre clubs Seraphine (+6 against AC 12): a hit that Shield would turn.
        (club,) = await table.steer([20], lambda f: 12 <= f[0] + 6 <= 16)
        for client in seats.values():
            client.pending_notifications()
        seen = await table.send(gm, "attack", creature=OGRE, target=sera, attack="greatclub")
        assert attacks(seen) == []  # the attack waits for her player's answer
        with trio.fail_after(helpers.deadline(5)):
            prompt = await dave.notification("prompt")
        offered = prompt["decision"]
        assert (offered["kind"], offered["controller"], offered["creature"]) == (
            SHIELD,
            "dave",
            sera,
        )
        assert (offered["options"], offered["default"]) == ([SHIELD, "decline"], ["decline"])
        assert f"{club + 6} against AC 12" in offered["prompt"]
        assert 29 < prompt["deadline_seconds"] <= 30  # the table's reaction window, just opened
        for other in (alice, bob, carol):
            assert [n for n in other.pending_notifications() if n["method"] == "prompt"] == []
        seen = await table.send(dave, "decide", decision=offered["id"], choice=[SHIELD])
        assert [(e["creature"], e["action"], e["cost"]) for e in of(seen, "action_taken")] == [
            (sera, SHIELD, "reaction")
        ]
        assert [(e["resource"], e["left"]) for e in of(seen, "resource_spent")] == [
            ("spell-slots-1", 3)
        ]
        assert [e["effect"]["condition"] for e in of(seen, "condition_effect_applied")] == [
            SHIELDED
        ]
        assert attacks(seen) == [(OGRE, sera, club + 6, 17, False)]  # AC 12 + 5: a miss
        assert damage(seen) == []
        mine = (await table.snapshot(dave))["creatures"][sera]
        assert (mine["hp"], SHIELDED in mine["conditions"], mine["resources"]["spell-slots-1"]) == (
            32,
            True,
            3,
        )
        await table.send(gm, "end_turn", creature=OGRE)
        assert await table.active() == BUGBEAR_2  # the group's turn: bugbear 1 is down
        await table.send(gm, "end_turn", creature=BUGBEAR_2)

        # -- round 2 ------------------------------------------------------------------------
        # Pip again, and now Kael is engaged with the ogre: Sneak Attack, 3d6, once.
        # Bless adds its d4 to the attack roll.
        assert await table.active() == pip
        d20, d4, d6, *sneak = await table.steer(
            [20, 4, 6, 6, 6, 6], lambda f: 4 <= f[0] <= 19 and f[2] + 4 + sum(f[3:]) < ogre_hp
        )
        seen = await table.send(bob, "attack", creature=pip, target=OGRE, attack="shortsword")
        made = of(seen, "attack_made")[0]["roll"]
        assert (made["advantage"], made["expertise_roll"], made["total"]) == (
            "none",
            d4,
            d20 + 7 + d4,
        )
        assert damage(seen) == [(OGRE, d6 + 4, [d6]), (OGRE, sum(sneak), sneak)]
        assert [(e["resource"], e["left"]) for e in of(seen, "resource_spent")] == [
            ("sneak-attack", 0)
        ]
        ogre_hp -= d6 + 4 + sum(sneak)
        seen_by_bob = (await table.snapshot(bob))["creatures"][pip]
        assert (seen_by_bob["resources"]["sneak-attack"], "bless" in seen_by_bob["conditions"]) == (
            0,
            True,
        )
        seen = await table.send(bob, "end_turn", creature=pip)
        assert [
            (e["creature"], e["resource"], e["left"], e["reason"])
            for e in of(seen, "resource_restored")
        ] == [(pip, "sneak-attack", 1, "turn")]
        # Kael and Hilda hold (the ogre must live to swing at Hilda).
        await table.send(alice, "dodge", creature=kael)
        await table.send(alice, "end_turn", creature=kael)
        # Seraphine's turn starts: her Shield ends.
        seen = await table.send(carol, "end_turn", creature=hilda)
        ended = [(e["creature"], e["condition"]) for e in of(seen, "condition_effect_ended")]
        assert ended == [(sera, SHIELDED)]
        await table.send(dave, "end_turn", creature=sera)

        # The ogre clubs Hilda (AC 18): 2d8+4; her concentration save (Constitution +2,
        # bless's d4) against DC 10 or half the damage fails, and bless ends for all.
        hit, a, b, con, bless = await table.steer(
            [20, 8, 8, 20, 4],
            lambda f: 12 <= f[0] <= 19 and f[3] + 2 + f[4] < max(10, (f[1] + f[2] + 4) // 2),
        )
        dealt = a + b + 4
        seen = await table.send(gm, "attack", creature=OGRE, target=hilda, attack="greatclub")
        assert attacks(seen) == [(OGRE, hilda, hit + 6, 18, True)]
        assert damage(seen) == [(hilda, dealt, [a, b])]
        (save,) = of(seen, "save_made")
        assert (save["creature"], save["ability"], save["dc"], save["success"]) == (
            hilda,
            "con",
            max(10, dealt // 2),
            False,
        )
        assert (save["roll"]["dice"], save["roll"]["expertise_roll"], save["roll"]["total"]) == (
            [con],
            bless,
            con + 2 + bless,
        )
        ended = [(e["creature"], e["condition"]) for e in of(seen, "condition_effect_ended")]
        assert sorted(ended) == sorted(
            [(hilda, "concentrating"), (kael, "bless"), (pip, "bless"), (hilda, "bless")]
        )
        shown_to_carol = (await table.snapshot(carol))["creatures"]
        assert shown_to_carol[hilda]["hp"] == 43 - dealt
        assert [
            c
            for c in (kael, pip, hilda)
            if {"bless", "concentrating"} & set(shown_to_carol[c]["conditions"])
        ] == []

        # Then the ogre runs for the bar, out of its foes' reach: each of them engaged
        # with it is asked, on their own seat, for an opportunity attack. Pip's hit, on
        # the ogre's turn, is a new turn's: Kael is still engaged, and Sneak Attack
        # comes again (once per turn, not once per round).
        mine_of = {kael: alice, pip: bob, hilda: carol, sera: dave}
        await table.send(gm, "enter", creature=OGRE, zones=["bar"])
        asked: list[str] = []
        fled: list[dict[str, Any]] = []
        for _ in range(4):
            pending = (await table.snapshot())["pending"]
            if not pending:
                break
            decision = pending[0]
            assert decision["kind"] == "opportunity_attack"
            who = decision["creature"]
            asked.append(who)
            if who == pip:

                def lives(f: list[int], hp: int = ogre_hp) -> bool:
                    return 4 <= f[0] <= 19 and f[1] + 4 + sum(f[2:]) < hp

                d20, d6, *sneak = await table.steer([20, 6, 6, 6, 6], lives)
                strike = await table.send(bob, "decide", decision=decision["id"], choice=["attack"])
                hit_back = of(strike, "attack_made")
                assert [(e["attacker"], e["reaction"], e["hit"]) for e in hit_back] == [
                    (pip, True, True)
                ]
                assert hit_back[0]["roll"]["total"] == d20 + 7
                assert damage(strike) == [(OGRE, d6 + 4, [d6]), (OGRE, sum(sneak), sneak)]
                assert [(e["resource"], e["left"]) for e in of(strike, "resource_spent")] == [
                    ("sneak-attack", 0)
                ]
                ogre_hp -= d6 + 4 + sum(sneak)
                fled += strike
            else:
                client = mine_of[who]
                fled += await table.send(
                    client, "decide", decision=decision["id"], choice=["decline"]
                )
        assert asked == [hilda, kael, pip, sera]  # one after the other, by id
        assert [e["creature"] for e in of(fled, "zone_entered")] == [OGRE]
        ogre = (await table.snapshot())["creatures"][OGRE]
        assert (ogre["zone"], ogre["hp"]) == ("bar", ogre_hp)
        await table.send(gm, "end_turn", creature=OGRE)
        await table.send(gm, "end_turn", creature=BUGBEAR_2)

        # -- to the end: the party strikes, the raiders (the GM) hold -----------------------
        over: list[dict[str, Any]] = []
        for _ in range(60):
            active = await table.active()
            snap = await table.snapshot()
            foes = [f for f in (OGRE, BUGBEAR_2) if snap["creatures"][f]["hp"] > 0]
            client = mine_of.get(active, gm)
            if active in mine_of and foes:
                near = snap["creatures"][foes[0]]["zone"] == snap["creatures"][active]["zone"]
                if active == sera:
                    seen = await table.send(
                        client, "cast", creature=sera, spell="fire-bolt", target=foes[0]
                    )
                elif active == hilda:
                    seen = await table.send(
                        client, "cast", creature=hilda, spell="sacred-flame", target=foes[0]
                    )
                else:
                    weapon = {
                        kael: "longsword" if near else "javelin (thrown)",
                        pip: "shortsword" if near else "shortbow",
                    }
                    seen = await table.send(
                        client, "attack", creature=active, target=foes[0], attack=weapon[active]
                    )
                over = of(seen, "encounter_ended")
                if over:
                    break
            seen = await table.send(client, "end_turn", creature=active)
            over = of(seen, "encounter_ended")
            if over:
                break
        assert [(e["reason"], e["by"]) for e in over] == [
            ("every creature of the side 'raiders' is defeated, surrendered or escaped", "rules")
        ]
        final = await table.snapshot()
        assert final["phase"] == (await table.snapshot(dave))["phase"] == "ended"
        assert [final["creatures"][f]["hp"] for f in (OGRE, BUGBEAR_1, BUGBEAR_2)] == [0, 0, 0]

        # The log as a client gets it: the GM joins again from seq 0.
        async with running.client() as again:
            replay = await again.join(eid, created["gm_token"], last_seq=0)
        client_log = replay["events"]
        assert client_log[created["seq"] :] == table.log
        assert [e["type"] for e in client_log[: created["seq"]]] == [
            "encounter_created",
            "dice_committed",
        ]

    # The log as a client got it passes zonekeep verify (the real CLI, in a process of
    # its own): every die, the GM's passing rolls too, from the public seed.
    rolls = sorted(c for e in client_log for c, _, _ in dice_in(e))
    assert rolls == list(range(table.next_die))
    from_client = tmp_path / "as-the-gm-got-it.jsonl"
    from_client.write_text(
        "".join(json.dumps({"seq": i, "event": e}) + "\n" for i, e in enumerate(client_log, 1)),
        encoding="utf-8",
    )
    ran = zonekeep("verify", str(from_client))
    assert (ran.returncode, ran.stderr) == (0, "")
    assert f"dice verified: {len(rolls)} rolls (seeded)" in ran.stdout
    # The operator's export (zonekeep export) holds the same events, and verifies too.
    exported = tmp_path / "keep.jsonl"
    data_dir = running.server.config.data_dir
    assert cli(["export", eid, "--data-dir", str(data_dir), "-o", str(exported)]) == 0
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert [(line["seq"], line["event"]) for line in lines] == list(enumerate(client_log, 1))
    assert cli(["verify", str(exported)]) == 0
    # Every message the five connections received was checked against the schemas.
    assert e2e_support.VALIDATED[0] - validated > len(client_log)
