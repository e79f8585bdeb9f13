"""One fight per rule section, played through a real server on a loopback port over
real websockets (docs/rules.md, "Rule sentences"): the steps of an encounter,
surprise, initiative, the turn, movement costs, size and space, ending; running an
arena, zones, engagement, flanking, positions, forced movement, targeting, areas.

The dice are scripted (``ScriptedEntropy``: each test pushes the faces the next
command rolls), the arena is the rule tests' arena (tests/arena_fixture.py) sent
inline, and every outcome is asserted exactly from the events the GM's connection
receives. Every message is validated against the protocol's schemas (conftest).
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from arena_fixture import ARENA
from e2e_support import Running, ServerConfig
from helpers import deadline

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import ScriptedEntropy

BLADE = {"name": "blade", "kind": "melee", "bonus": 4, "damage": "1d6+2",
         "damage_type": "slashing"}  # fmt: skip
BOW = {"name": "bow", "kind": "ranged", "bonus": 4, "damage": "1d8", "damage_type": "piercing",
       "reach": 0, "range": 80, "long_range": 80}  # fmt: skip
SLING = {"name": "sling", "kind": "ranged", "bonus": 4, "damage": "1d4",
         "damage_type": "bludgeoning", "reach": 0, "range": 10, "long_range": 10}  # fmt: skip


def creature(cid: str, side: str = "party", **kw: Any) -> dict[str, Any]:
    """A roster entry: 20 hp, AC 12, speed 30, the blade; a party creature is a PC of
    its own player."""
    entry: dict[str, Any] = {
        "id": cid,
        "name": cid.capitalize(),
        "side": side,
        "controller": f"player-{cid}" if side == "party" else "gm",
        "hp": 20,
        "max_hp": 20,
        "ac": 12,
        "attacks": [BLADE],
    }
    entry.update(kw)
    return entry


class Table:
    """The GM's connection to one encounter on a server whose dice are scripted."""

    def __init__(self, gm: ZonekeepClient, eid: str, dice: ScriptedEntropy) -> None:
        self.gm, self.eid, self.dice = gm, eid, dice

    async def send(self, type: str, *rolls: int, **params: Any) -> list[dict[str, Any]]:
        """Send a command as the GM, the dice showing ``rolls``; its events, in order."""
        self.dice.push(*rolls)
        with trio.fail_after(deadline(5)):
            result = await self.gm.command(self.eid, type, **params)
            events: list[dict[str, Any]] = []
            while len(events) < result["last_seq"] - result["first_seq"] + 1:
                events.append((await self.gm.notification("event"))["event"])
        assert self.dice.remaining == (), f"{type} left dice unrolled: {self.dice.remaining}"
        return events

    async def refused(self, type: str, **params: Any) -> ClientError:
        with trio.fail_after(deadline(5)), pytest.raises(ClientError) as refusal:
            await self.gm.command(self.eid, type, **params)
        return refusal.value

    async def snapshot(self) -> dict[str, Any]:
        with trio.fail_after(deadline(5)):
            reply = await self.gm.request("snapshot", encounter=self.eid)
        snapshot: dict[str, Any] = reply["snapshot"]
        return snapshot

    async def start(self, initiative: list[int], surprised: tuple[str, ...] = ()) -> None:
        await self.send("set_surprise", surprised=list(surprised))
        await self.send("place")
        await self.send("roll_initiative", *initiative)


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


Play = Callable[..., Any]


@pytest.fixture
def table(make_server: Callable[..., Any]) -> Play:
    """``async with table(roster, options=..., arena=...) as t``: a new encounter on a
    server of its own with scripted dice, the GM connected."""

    @asynccontextmanager
    async def open_table(
        roster: list[dict[str, Any]],
        *,
        options: dict[str, Any] | None = None,
        arena: dict[str, Any] | None = None,
    ) -> AsyncIterator[Table]:
        dice = ScriptedEntropy()
        running: Running = await make_server(ServerConfig(port=0), entropy=dice)
        async with running.client() as gm:
            extra = {"options": options} if options else {}
            with trio.fail_after(deadline(5)):
                created = await gm.create_encounter("Rules", arena or ARENA, roster, **extra)
            yield Table(gm, created["encounter"], dice)

    return open_table


# -- the encounter rules -------------------------------------------------------------------------


@pytest.mark.rule(
    "encounter.txt:1.2", "encounter.txt:1.3", "encounter.txt:7.2", "encounter.txt:9.2",
    "encounter.txt:10.2",
)  # fmt: skip
async def test_steps_surprise_positions_initiative_then_rounds_of_turns(table: Play) -> None:
    async with table([creature("aria", zone="hall"), creature("gob", "foes", zone="yard")]) as t:
        assert (await t.snapshot())["phase"] == "surprise"
        await t.send("set_surprise", surprised=[])
        assert (await t.snapshot())["phase"] == "positions"
        await t.send("place", positions={"aria": "yard"})
        await t.send("roll_initiative", 15, 10)
        snap = await t.snapshot()
        assert (snap["phase"], snap["round"], snap["active"]) == ("turns", 1, "aria")
        assert (snap["creatures"]["aria"]["zone"], snap["creatures"]["gob"]["zone"]) == (
            "yard",
        ) * 2
        await t.send("end_turn", creature="aria")
        events = await t.send("end_turn", creature="gob")
        assert [e["type"] for e in events] == [
            "turn_ended",
            "round_ended",
            "round_started",
            "turn_started",
        ]
        assert (events[2]["round"], events[3]["creature"]) == (2, "aria")


@pytest.mark.rule("encounter.txt:6.2")
async def test_surprise_a_surprised_creature_cannot_move_or_act_on_its_first_turn(
    table: Play,
) -> None:
    async with table([creature("aria", zone="hall"), creature("gob", "foes", zone="hall")]) as t:
        await t.start([10, 15], surprised=("gob",))
        refusal = await t.refused("dash", creature="gob")
        assert (refusal.name, refusal.code) == ("surprised", 4012)
        events = await t.send("end_turn", creature="gob")
        assert events[:2] == [
            {"type": "surprise_ended", "creature": "gob"},
            {"type": "turn_ended", "creature": "gob"},
        ]
        await t.send("end_turn", creature="aria")
        await t.send("dash", creature="gob")  # round 2: it acts


@pytest.mark.rule(
    "encounter.txt:2.1", "encounter.txt:8.2", "encounter.txt:12.2", "encounter.txt:13.1",
    "encounter.txt:14.1",
)  # fmt: skip
async def test_initiative_a_tie_does_not_stop_the_fight(table: Play) -> None:
    async with table(
        [
            creature("aria", zone="hall", dex_mod=3),
            creature("orc", "foes", zone="hall", dex_mod=2),
            creature("gob", "foes", zone="hall", dex_mod=2),
        ]
    ) as t:
        events = await t.send("set_surprise")
        await t.send("place")
        events = await t.send("roll_initiative", 18, 10, 10)
        (rolled,) = of(events, "initiative_rolled")
        assert [(e["slot"], e["total"]) for e in rolled["entries"]] == [
            ("aria", 21),
            ("orc", 12),
            ("gob", 12),
        ]
        (opened,) = of(events, "decision_opened")
        assert (opened["decision"]["kind"], opened["decision"]["options"]) == (
            "initiative_tie",
            ["orc", "gob"],
        )
        assert events[-1] == {"type": "turn_started", "creature": "aria", "slot": 0, "member": 0}
        await t.send("decide", decision=opened["decision"]["id"], choice=["gob", "orc"])
        events = await t.send("end_turn", creature="aria")
        assert events[-1] == {"type": "turn_started", "creature": "gob", "slot": 1, "member": 0}


@pytest.mark.rule(
    "encounter.txt:16.1", "encounter.txt:18.1", "encounter.txt:20.1", "encounter.txt:21.1",
    "encounter.txt:67.3",
)  # fmt: skip
async def test_turn_one_action_one_interaction_and_a_reaction_on_ones_own_turn(
    table: Play,
) -> None:
    async with table([creature("aria", zone="hall"), creature("gob", "foes", zone="hall")]) as t:
        await t.start([15, 10])
        await t.send("ready", creature="aria", target="gob", trigger="when it blinks")
        events = await t.send("release_readied", 15, 3, creature="aria")  # its own turn
        (made,) = of(events, "attack_made")
        assert (made["reaction"], made["hit"], made["roll"]["total"]) == (True, True, 19)
        assert (await t.snapshot())["creatures"]["gob"]["hp"] == 20 - 5
        await t.send("interact", creature="aria", object="the door")
        refusal = await t.refused("interact", creature="aria", object="a second door")
        assert (refusal.name, refusal.message) == (
            "no_action_left",
            "Aria has no action left this turn.",
        )
        assert (await t.refused("dash", creature="aria")).name == "no_action_left"
        assert (await t.refused("release_readied", creature="aria")).name == "nothing_readied"


@pytest.mark.rule("encounter.txt:24.3", "encounter.txt:29.1", "encounter.txt:33.2")
async def test_movement_costs_difficult_ground_and_crawling_from_one_budget(table: Play) -> None:
    async with table([creature("aria", zone="closet"), creature("gob", "foes", zone="hall")]) as t:
        await t.start([15, 10])
        (moved,) = await t.send("move", creature="aria", feet=5)
        assert (moved["cost"], moved["extra"]) == (10, ["difficult"])  # the arena says so
        await t.send("drop_prone", creature="aria")
        (moved,) = await t.send("move", creature="aria", feet=5, mode="crawl")
        assert (moved["cost"], moved["extra"]) == (15, ["crawling", "difficult"])
        refusal = await t.refused("stand", creature="aria")  # half of 30 with 5 ft left
        assert refusal.name == "not_enough_movement"


@pytest.mark.rule("encounter.txt:60.1", "encounter.txt:60.3")
async def test_size_a_zone_one_over_capacity_squeezes_everyone_and_admits_no_more(
    table: Play,
) -> None:
    closet = {"zone": "closet"}
    async with table(
        [
            creature("orc", "foes", zone="hall"),
            creature("aria", **closet),
            creature("bram", **closet),
            creature("gob", "foes", **closet),
        ]
    ) as t:
        await t.start([20, 10, 9, 8])
        snap = await t.snapshot()
        assert all(
            "squeezing" in snap["creatures"][c]["conditions"] for c in ("aria", "bram", "gob")
        )
        refusal = await t.refused("enter", creature="orc", zones=["closet"])
        assert refusal.name == "zone_full"
        await t.send("end_turn", creature="orc")
        (moved,) = await t.send("move", creature="aria", feet=5)
        assert (moved["cost"], sorted(moved["extra"])) == (15, ["difficult", "squeezing"])


@pytest.mark.rule(
    "encounter.txt:71.1", "encounter.txt:71.2", "encounter.txt:71.3", "encounter.txt:72.1",
)  # fmt: skip
async def test_ending_not_while_a_pc_is_dying_then_when_one_side_is_defeated(
    table: Play,
) -> None:
    async with table(
        [
            creature("gob", "foes", zone="hall", hp=1, max_hp=1),
            creature("aria", zone="hall"),
            creature("bram", zone="hall", hp=1, max_hp=1, pc=True),
        ]
    ) as t:
        await t.start([20, 15, 10])
        events = await t.send("attack", 15, 3, creature="gob", target="bram")
        assert {"type": "condition_applied", "creature": "bram", "condition": "dying",
                "source": "reduced to 0 hit points", "override": False} in events  # fmt: skip
        await t.send("end_turn", creature="gob")
        # Bram, dying, cannot act: two against one no longer flanks (one d20, no advantage).
        events = await t.send("attack", 15, 3, creature="aria", target="gob")
        assert of(events, "attack_made")[0]["roll"]["advantage"] == "none"
        assert of(events, "encounter_ended") == []  # Bram is dying: the fight goes on
        assert (await t.snapshot())["phase"] == "turns"
        events = await t.send("stabilize", creature="bram")
        (ended,) = of(events, "encounter_ended")
        assert ended["by"] == "rules"
        assert (await t.snapshot())["phase"] == "ended"


# -- the arena rules ----------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:2.1", "arena.txt:11.2")
async def test_running_an_arena_the_gm_overrules_visibly_and_switches_mechanics_off(
    table: Play,
) -> None:
    async with table(
        [
            creature("aria", zone="hall"),
            creature("bram", zone="hall"),
            creature("gob", "foes", zone="hall", condition_immunities=["poisoned"]),
        ],
        options={"flanking": False},
    ) as t:
        await t.start([20, 10, 5])
        refusal = await t.refused("grant_condition", creature="gob", condition="poisoned")
        assert (refusal.name, refusal.code) == ("condition_immune", 4060)
        (applied,) = await t.send(
            "grant_condition", creature="gob", condition="poisoned", force=True
        )
        assert applied == {"type": "condition_applied", "creature": "gob", "condition": "poisoned",
                           "source": "GM override by gm", "override": True}  # fmt: skip
        (override,) = await t.send(
            "override", creature="gob", field="condition_immunities", value=[]
        )
        assert (override["by"], override["field"], override["value"]) == (
            "gm",
            "condition_immunities",
            [],
        )
        # Two against one, but flanking is off for this encounter: no advantage.
        events = await t.send("attack", 15, 3, creature="aria", target="gob")
        (made,) = of(events, "attack_made")
        assert (made["roll"]["advantage"], made["roll"]["dice"]) == ("none", [15])


@pytest.mark.rule("arena.txt:6.3", "arena.txt:7.1", "arena.txt:7.2", "arena.txt:7.3")
async def test_zones_a_sprint_goes_on_straight_ahead_only(table: Play) -> None:
    async with table([creature("aria", zone="hall"), creature("gob", "foes", zone="road")]) as t:
        await t.start([20, 10])
        await t.send("sprint", creature="aria")
        refusal = await t.refused("enter", creature="aria", zones=["yard", "garden"])
        assert (refusal.name, refusal.message) == (
            "not_straight",
            "Sprinting, Aria can only go on straight ahead from Yard.",
        )
        events = await t.send("enter", creature="aria", zones=["yard", "road"])
        entered = [(e["from_zone"], e["to_zone"]) for e in of(events, "zone_entered")]
        assert entered == [("hall", "yard"), ("yard", "road")]
        refusal = await t.refused("enter", creature="aria", zones=["yard"])  # all movement spent
        assert refusal.name == "not_enough_movement"


@pytest.mark.rule("arena.txt:13.1", "arena.txt:13.3", "arena.txt:13.4")
async def test_engagement_leaving_the_zone_offers_an_opportunity_attack(table: Play) -> None:
    async with table([creature("aria", zone="hall"), creature("gob", "foes", zone="hall")]) as t:
        await t.start([20, 10])
        events = await t.send("attack", 2, creature="aria", target="gob")  # a miss engages too
        assert of(events, "engagement_started") == [
            {"type": "engagement_started", "creature": "aria", "enemy": "gob",
             "reason": "melee attack"}
        ]  # fmt: skip
        await t.send("end_turn", creature="aria")
        events = await t.send("enter", creature="gob", zones=["yard"])
        (opened,) = of(events, "decision_opened")
        decision = opened["decision"]
        assert (decision["kind"], decision["creature"], decision["options"]) == (
            "opportunity_attack",
            "aria",
            ["attack", "decline"],
        )
        events = await t.send("decide", 15, 3, decision=decision["id"], choice=["attack"])
        (made,) = of(events, "attack_made")
        assert (made["attacker"], made["reaction"], made["hit"]) == ("aria", True, True)
        assert of(events, "engagement_ended")[0]["reason"] == "left the zone"
        snap = await t.snapshot()
        assert (
            snap["creatures"]["gob"]["zone"],
            snap["creatures"]["gob"]["hp"],
            snap["engagements"],
        ) == (
            "yard",
            20 - 5,
            [],
        )


@pytest.mark.rule("arena.txt:4.1")
async def test_flanking_two_to_one_gives_melee_attacks_advantage(table: Play) -> None:
    async with table(
        [
            creature("aria", zone="hall"),
            creature("bram", zone="hall"),
            creature("gob", "foes", zone="hall"),
        ]
    ) as t:
        await t.start([20, 10, 5])
        events = await t.send("attack", 3, 15, 3, creature="aria", target="gob")
        (made,) = of(events, "attack_made")
        assert (made["roll"]["advantage"], made["roll"]["dice"], made["roll"]["kept"]) == (
            "advantage",
            [3, 15],
            [15],
        )
        assert made["hit"] is True


@pytest.mark.rule("arena.txt:19.2", "arena.txt:20.1")
async def test_positions_half_speed_and_one_prop_at_a_time(table: Play) -> None:
    async with table([creature("aria", zone="hall"), creature("gob", "foes", zone="yard")]) as t:
        await t.start([20, 10])
        events = await t.send("take_position", creature="aria", asset="table")
        (taken,) = of(events, "position_taken")
        assert taken == {"type": "position_taken", "creature": "aria", "asset": "table",
                         "forced": False, "by": ""}  # fmt: skip
        refusal = await t.refused("take_position", creature="aria", asset="chair")
        assert refusal.name == "already_in_position"
        await t.send("leave_position", creature="aria")
        refusal = await t.refused("take_position", creature="aria", asset="chair")  # 30 ft spent
        assert refusal.name == "not_enough_movement"


@pytest.mark.rule("arena.txt:16.3", "arena.txt:16.4", "arena.txt:17.2")
async def test_forced_movement_into_an_asset_uses_the_forcers_dc(table: Play) -> None:
    arena = copy.deepcopy(ARENA)
    spikes = next(a for a in arena["assets"] if a["id"] == "spikes")
    spikes["forced"]["save"]["dc"] = 10  # the wall's own DC: only when nobody forced it
    async with table(
        [
            creature("aria", zone="hall", maneuver_dc=14),
            creature("gob", "foes", zone="hall", saves={"dex": 1}),
        ],
        arena=arena,
    ) as t:
        await t.start([20, 10])
        events = await t.send("force", 12, 3, 4, forcer="aria", creature="gob", asset="spikes")
        (save,) = of(events, "save_made")
        assert (save["dc"], save["roll"]["total"], save["success"]) == (14, 13, False)
        assert of(events, "position_taken")[0]["by"] == "aria"
        events = await t.send("force", 9, 3, 4, creature="aria", asset="spikes")  # nobody forced it
        (save,) = of(events, "save_made")
        assert (save["creature"], save["dc"], save["roll"]["total"], save["success"]) == (
            "aria",
            10,
            9,
            False,
        )
        snap = await t.snapshot()
        assert (snap["creatures"]["gob"]["hp"], snap["resources"]["movement_spent"]) == (20 - 7, 0)


@pytest.mark.rule("arena.txt:26.1", "arena.txt:27.1", "arena.txt:27.2")
async def test_targeting_range_to_another_zone_sums_the_zones(table: Play) -> None:
    async with table(
        [
            creature("aria", zone="hall", attacks=[BLADE, BOW, SLING]),
            creature("gob", "foes", zone="yard"),
        ]
    ) as t:
        await t.start([20, 10])
        refusal = await t.refused("attack", creature="aria", target="gob", attack="sling")
        assert refusal.name == "out_of_range"
        assert "15 ft" in refusal.message  # Yard, a Small zone: 15 ft away
        events = await t.send("attack", 15, 4, creature="aria", target="gob", attack="bow")
        (made,) = of(events, "attack_made")
        assert (made["kind"], made["hit"]) == ("ranged", True)


@pytest.mark.rule(
    "arena.txt:36.1", "arena.txt:37.1", "arena.txt:37.2", "arena.txt:38.1", "arena.txt:38.2"
)
async def test_areas_the_table_caps_the_targets_and_a_huge_creature_counts_two(
    table: Play,
) -> None:
    async with table(
        [
            creature("aria", zone="hall", spell_dc=15),
            creature("gob", "foes", zone="hall"),
            creature("ogre", "foes", zone="hall", size="Huge"),
        ]
    ) as t:
        await t.start([20, 10, 5])
        burst = {"creature": "aria", "zone": "hall", "shape": "cone", "size": 15, "range": 0,
                 "name": "Burst", "save": "dex", "damage": "2d6", "damage_type": "fire"}  # fmt: skip
        refusal = await t.refused("area_effect", **burst, targets=["ogre", "gob"])
        assert (refusal.name, refusal.message) == (
            "too_many_targets",
            "Burst (a 15-ft cone) can have at most 2 targets; Ogre (Huge, counts as 2) "
            "already fills them, so Gob cannot be added.",
        )
        # Gob first: the ogre still fits the last slot, with an expertise die on its save.
        events = await t.send("area_effect", 14, 3, 2, 6, 5, **burst, targets=["gob", "ogre"])
        gob, ogre = of(events, "save_made")
        assert (gob["creature"], gob["roll"]["total"], gob["success"]) == ("gob", 14, False)
        assert (ogre["roll"]["expertise"], ogre["roll"]["total"], ogre["success"]) == (4, 5, False)
        assert [(d["creature"], d["amount"]) for d in of(events, "damaged")] == [
            ("gob", 11),
            ("ogre", 11),
        ]
