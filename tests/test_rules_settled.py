"""The rulings settled in play (docs/rules.md, "Rulings"; the second edition) and the rules that are now
plugin decisions behind hooks, each with its exact outcome.

- Engagement ends with the fight: leaving a zone, dying, defeat, surrender and escape
  end engagements with an ``engagement_ended`` event each (and leaving a zone ends
  adjacency with ``adjacency_ended``); the fold only applies those events.
- Zone capacity counts the size weights: a creature enters only if the occupancy after
  it enters is at most capacity + 1.
- One prop at a time: the refusal says to leave the first position, then take the new.
- Jumping: a long jump covers the Strength score in feet after a 10-ft run-up, half
  without; it draws on the same budget.
- A table's own plugin answers the new rule hooks before the built-ins.
"""

from __future__ import annotations

from typing import Any

import pytest
from arena_fixture import harness
from helpers import left, make

from zonekeep.sdk import (
    DYING,
    ActionTaken,
    AdjacencyEnded,
    AttackMade,
    ConditionApplied,
    Creature,
    Damaged,
    DecisionResolved,
    EncounterState,
    EngagementEnded,
    EngagementStarted,
    ManeuverEnded,
    Moved,
    Refusal,
    RuleContext,
    Size,
    TurnSkipped,
    TurnStarted,
    ZoneEntered,
    hookimpl,
)
from zonekeep.sdk.host import apply_event
from zonekeep.sdk.testing import EncounterHarness


def first_turn(
    creatures: list[Creature], positions: dict[str, str], *, extra: list[object] | None = None
) -> EncounterHarness:
    """The first creature acts first, the others after it in list order."""
    rolls = [20] + [10 - i for i in range(len(creatures) - 1)]
    h = harness(creatures, positions, rolls, extra_plugins=extra)
    assert h.state.active == creatures[0].id
    return h


# -- engagement ends with the fight -----------------------------------------------------------


@pytest.mark.rule("arena.txt:13.4")
def test_leaving_a_zone_ends_engagements_and_adjacency_with_events() -> None:
    h = first_turn(
        [make("aria"), make("gob", "goblins"), make("bram")],
        {"aria": "hall", "gob": "hall", "bram": "hall"},
    )
    h.rolls(15, 15, 4).send("attack", creature="aria", target="gob")  # flanking: advantage
    h.send("move_adjacent", creature="aria", ally="bram")
    assert h.state.engagements == [("aria", "gob")]
    assert h.state.adjacent == [("aria", "bram")]
    h.send("enter", creature="aria", zones=["yard"])
    decision = h.state.pending[0].id
    events = h.send("decide", decision=decision, choice=["decline"])
    assert events == (
        DecisionResolved(decision, ("decline",), "gm", False),
        EngagementEnded("aria", "gob", "left the zone"),
        AdjacencyEnded("aria", "bram", "left the zone"),
        ZoneEntered("aria", "hall", "yard", 15),
        ManeuverEnded("aria", True),
    )
    assert h.state.engagements == []
    assert h.state.adjacent == []
    h.assert_replay_matches()


def test_forced_out_of_the_zone_the_engagements_end_too() -> None:
    h = first_turn([make("aria"), make("gob", "goblins")], {"aria": "hall", "gob": "hall"})
    h.rolls(15, 4).send("attack", creature="aria", target="gob")
    events = h.send("force", forcer="aria", creature="gob", zone="yard")
    assert events == (
        EngagementEnded("gob", "aria", "left the zone"),
        ZoneEntered("gob", "hall", "yard", 0, True, "aria"),
    )
    assert h.state.engagements == []


def test_a_log_written_by_zonekeep_0_1_leaves_no_engagement_behind_a_move() -> None:
    # zonekeep 0.1 logged a creature leaving its zone with no engagement_ended: folding
    # such a stored log still ends the engagement (the rules today emit the event first,
    # so the fold finds nothing left to drop: tests/test_invariants.py checks that).
    state = EncounterState()
    state.creatures = {"a": make("a"), "b": make("b", "goblins")}
    apply_event(state, EngagementStarted("a", "b", "melee attack"))
    apply_event(state, ZoneEntered("a", "hall", "yard", 0, True, "gm"))
    assert state.engagements == []


def test_a_pc_who_starts_dying_is_engaged_with_nobody() -> None:
    h = first_turn(
        [make("hob", "goblins"), make("gob", "goblins"), make("aria", hp=3)],
        {"hob": "hall", "gob": "hall", "aria": "hall"},
    )
    h.rolls(2, 2).send("attack", creature="hob", target="aria")  # a miss still engages
    h.end_turn()
    events = h.rolls(15, 15, 1).send("attack", creature="gob", target="aria")
    assert [type(e) for e in events[:4]] == [ActionTaken, EngagementStarted, AttackMade, Damaged]
    assert events[1] == EngagementStarted("gob", "aria", "melee attack")
    assert events[4:] == (
        ConditionApplied("aria", DYING, "reduced to 0 hit points"),
        EngagementEnded("aria", "gob", "Aria is dying"),
        EngagementEnded("aria", "hob", "Aria is dying"),
    )
    assert h.creature("aria").hp == 0
    assert h.state.engagements == []
    # A melee attack against a dying creature engages nobody.
    h.end_turn()
    h.end_turn()  # Aria's turn (dying): nothing to do
    assert h.state.active == "hob"
    # A hit on the dying from its zone is a critical hit (docs/rules.md, "dying"): 2d6.
    events = h.rolls(15, 15, 1, 1).send("attack", creature="hob", target="aria")
    assert [e.critical for e in events if isinstance(e, AttackMade)] == [True]
    assert not [e for e in events if isinstance(e, EngagementStarted)]
    assert h.state.engagements == []
    h.assert_replay_matches()


def test_a_defeated_npc_is_engaged_with_nobody() -> None:
    h = first_turn(
        [make("aria"), make("gob", "goblins", hp=3), make("hob", "goblins")],
        {"aria": "hall", "gob": "hall", "hob": "yard"},
    )
    events = h.rolls(15, 1).send("attack", creature="aria", target="gob")
    assert events[-3:] == (
        events[-3],
        ConditionApplied("gob", "defeated", "reduced to 0 hit points"),
        EngagementEnded("gob", "aria", "Gob is defeated"),
    )
    assert h.state.engagements == []


@pytest.mark.rule("encounter.txt:71.2")
@pytest.mark.parametrize(
    ("condition", "reason"), [("surrendered", "Gob surrendered"), ("escaped", "Gob escaped")]
)
def test_surrender_and_escape_end_engagements(condition: str, reason: str) -> None:
    h = first_turn([make("aria"), make("gob", "goblins")], {"aria": "hall", "gob": "hall"})
    h.rolls(15, 4).send("attack", creature="aria", target="gob")
    events = h.send("grant_condition", creature="gob", condition=condition)
    assert events[:2] == (
        ConditionApplied("gob", condition, "GM override by gm"),
        EngagementEnded("gob", "aria", reason),
    )
    assert h.state.engagements == []


def test_other_conditions_leave_engagements_alone() -> None:
    h = first_turn([make("aria"), make("gob", "goblins")], {"aria": "hall", "gob": "hall"})
    h.rolls(15, 4).send("attack", creature="aria", target="gob")
    events = h.send("grant_condition", creature="gob", condition="prone")
    assert events == (ConditionApplied("gob", "prone", "GM override by gm"),)
    assert h.state.engagements == [("aria", "gob")]


def test_an_effect_that_defeats_ends_engagements() -> None:
    h = first_turn([make("aria"), make("gob", "goblins")], {"aria": "hall", "gob": "hall"})
    h.rolls(15, 4).send("attack", creature="aria", target="gob")
    events = h.send("apply_effect", creature="gob", condition="surrendered", rounds=1)
    assert events[1] == EngagementEnded("gob", "aria", "Gob surrendered")
    assert h.state.engagements == []


# -- zone capacity counts the size weights -------------------------------------------------------


@pytest.mark.rule("encounter.txt:60.1")
def test_a_large_creature_cannot_enter_a_full_zone_of_capacity_two() -> None:
    h = first_turn(
        [make("ogre", size=Size.LARGE), make("bram"), make("cleo")],
        {"ogre": "hall", "bram": "closet", "cleo": "closet"},
    )
    refusal = h.refused("enter", creature="ogre", zones=["closet"])
    assert refusal.code == "zone_full"
    assert refusal.message == (
        "Closet has room for 2 and holds 2; Ogre (Large, 2) would bring it to 4, more than "
        "one over its capacity, so Ogre cannot get in."
    )


@pytest.mark.rule("encounter.txt:60.1")
def test_a_medium_creature_can_enter_and_then_everyone_squeezes() -> None:
    h = first_turn(
        [make("aria"), make("bram"), make("cleo")],
        {"aria": "hall", "bram": "closet", "cleo": "closet"},
    )
    h.send("enter", creature="aria", zones=["closet"])
    assert h.state.occupancy("closet") == 3
    assert [c.id for c in h.state.creatures.values() if c.has("squeezing")] == [
        "aria",
        "bram",
        "cleo",
    ]


def test_a_tiny_creature_still_fits_a_zone_one_over() -> None:
    h = first_turn(
        [make("pip", size=Size.TINY), make("aria"), make("bram"), make("cleo")],
        {"pip": "hall", "aria": "closet", "bram": "closet", "cleo": "closet"},
    )
    assert h.state.occupancy("closet") == 3
    h.send("enter", creature="pip", zones=["closet"])  # Tiny counts 0: still 3 <= 2 + 1
    assert h.creature("pip").zone == "closet"


def test_a_large_creature_fits_one_medium_in_a_zone_of_capacity_two() -> None:
    h = first_turn(
        [make("ogre", size=Size.LARGE), make("bram")], {"ogre": "hall", "bram": "closet"}
    )
    h.send("enter", creature="ogre", zones=["closet"])  # 1 + 2 = 3 = capacity + 1
    assert h.creature("ogre").zone == "closet"
    assert h.creature("ogre").has("squeezing")


def test_placing_counts_the_weights_too() -> None:
    h = EncounterHarness(
        [make("ogre", size=Size.LARGE), make("bram"), make("cleo")],
        arena=harness([], {}, []).state.arena,
    )
    h.send("set_surprise")
    refusal = h.refused("place", positions={"ogre": "closet", "bram": "closet", "cleo": "closet"})
    assert refusal.code == "zone_full"
    assert refusal.message == (
        "Closet holds 2; placing 4 there is more than one over its capacity."
    )
    h.send("place", positions={"ogre": "closet", "bram": "closet", "cleo": "hall"})
    assert h.state.occupancy("closet") == 3


# -- one prop at a time ---------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:20.1")
def test_a_second_prop_is_refused_with_what_to_do() -> None:
    h = first_turn([make("aria", speed=60)], {"aria": "hall"})
    h.send("take_position", creature="aria", asset="table")
    refusal = h.refused("take_position", creature="aria", asset="chair")
    assert refusal.code == "already_in_position"
    assert refusal.message == (
        "Aria is in position at Table and holds one prop at a time: leave that position "
        "first (leave_position, half its speed: 30 ft), then take position at Chair (half "
        "its speed again: 30 ft)."
    )
    h.send("dash", creature="aria")  # 120 ft this turn: three half-speed costs fit
    h.send("leave_position", creature="aria")
    h.send("take_position", creature="aria", asset="chair")
    assert h.creature("aria").position == "chair"
    assert left(h) == 120 - 3 * 30


# -- jumping ---------------------------------------------------------------------------------------


@pytest.mark.rule("encounter.txt:24.1")
def test_a_standing_jump_covers_half_the_strength_score() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})  # no Strength save listed: score 10
    refusal = h.refused("move", creature="aria", feet=6, mode="jump")
    assert refusal.code == "cannot_move"
    assert refusal.message == (
        "Aria can jump at most 5 ft from a standing start (half its Strength score, 10); a "
        "run-up of at least 10 ft on foot right before it (run_up) allows 10 ft."
    )
    events = h.send("move", creature="aria", feet=5, mode="jump")
    assert events == (Moved("aria", 5, "jump", 5),)
    assert left(h) == 25


@pytest.mark.rule("encounter.txt:24.1")
def test_a_running_jump_covers_the_strength_score_and_the_run_up_is_paid() -> None:
    h = first_turn([make("aria", saves={"str": 3})], {"aria": "hall"})  # score 16
    assert h.refused("move", creature="aria", feet=9, mode="jump").code == "cannot_move"
    refusal = h.refused("move", creature="aria", feet=17, mode="jump", run_up=10)
    assert refusal.message == (
        "Aria can jump at most 16 ft with a run-up (its Strength score, 16); 17 ft is too far."
    )
    events = h.send("move", creature="aria", feet=16, mode="jump", run_up=10)
    assert events == (Moved("aria", 10, "walk", 10), Moved("aria", 16, "jump", 16))
    assert left(h) == 4


def test_a_short_run_up_is_a_standing_jump() -> None:
    h = first_turn([make("aria", saves={"str": 3})], {"aria": "hall"})
    assert h.refused("move", creature="aria", feet=9, mode="jump", run_up=9).code == "cannot_move"
    events = h.send("move", creature="aria", feet=8, mode="jump", run_up=9)
    assert events == (Moved("aria", 9, "walk", 9), Moved("aria", 8, "jump", 8))


@pytest.mark.rule("encounter.txt:24.2")
def test_a_jump_draws_on_the_same_budget() -> None:
    h = first_turn([make("aria", saves={"str": 5})], {"aria": "hall"})  # score 20
    h.send("move", creature="aria", feet=5)
    refusal = h.refused("move", creature="aria", feet=16, mode="jump", run_up=10)
    assert refusal.code == "not_enough_movement"
    assert refusal.message == "Running 10 ft and jumping 16 ft costs 26 ft; Aria has 25 ft left."
    # In the closet (difficult terrain, says the arena) the same jump costs double.
    h.send("move_to_zone", creature="aria", zone="closet")
    refusal = h.refused("move", creature="aria", feet=8, mode="jump", run_up=10)
    assert refusal.message == (
        "Running 10 ft and jumping 8 ft costs 36 ft (difficult); Aria has 25 ft left."
    )
    h.send("move_to_zone", creature="aria", zone="hall")
    h.send("move", creature="aria", feet=15, mode="jump", run_up=10)
    assert left(h) == 0


def test_a_run_up_goes_with_a_jump_only() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    refusal = h.refused("move", creature="aria", feet=5, run_up=10)
    assert (refusal.code, refusal.message) == (
        "invalid_params",
        "A run-up goes with a jump (mode 'jump').",
    )
    assert h.refused("move", creature="aria", feet=5, mode="jump", run_up=-1).code == (
        "invalid_params"
    )


def test_a_weak_creature_still_jumps_a_little() -> None:
    h = first_turn([make("aria", saves={"str": -5})], {"aria": "hall"})  # score at least 1
    assert h.refused("move", creature="aria", feet=1, mode="jump").code == "cannot_move"
    assert h.send("move", creature="aria", feet=1, mode="jump", run_up=10)[-1] == Moved(
        "aria", 1, "jump", 1
    )


# -- a table's own rules answer first ---------------------------------------------------------------


class HouseRules:
    """NPCs drop dying too; nobody is offered opportunity attacks; the stunned sit out;
    areas hold one target more."""

    @staticmethod
    @hookimpl
    def zonekeep_zero_hit_points(ctx: RuleContext, creature: Creature) -> str:
        return DYING

    @staticmethod
    @hookimpl
    def zonekeep_opportunity_attackers(ctx: RuleContext) -> list[str]:
        return []

    @staticmethod
    @hookimpl
    def zonekeep_skip_turn(ctx: RuleContext, creature: Creature) -> str | None:
        return "stunned" if creature.has("stunned") else None

    @staticmethod
    @hookimpl
    def zonekeep_area_max_targets(ctx: RuleContext, shape: str, size: int, width: int) -> Any:
        return None if size < 30 else 9


def test_house_rules_replace_the_built_in_answers() -> None:
    h = first_turn(
        [make("aria"), make("gob", "goblins", hp=3), make("hob", "goblins")],
        {"aria": "hall", "gob": "hall", "hob": "hall"},
        extra=[HouseRules],
    )
    events = h.rolls(15, 1).send("attack", creature="aria", target="gob")
    assert ConditionApplied("gob", DYING, "reduced to 0 hit points") in events
    assert EngagementEnded("gob", "aria", "Gob is dying") in events
    h.send("grant_condition", creature="hob", condition="stunned")
    h.send("end_turn", creature="aria")
    assert h.state.active == "gob"  # dying, not out of the fight: its turn comes
    events = h.send("end_turn", creature="gob")
    assert TurnSkipped("hob", 2, 0, "stunned") in events
    assert events[-1] == TurnStarted("aria", 0, 0)
    h.send("enter", creature="aria", zones=["yard"])  # engaged with nobody offered
    assert h.state.pending == []
    assert h.creature("aria").zone == "yard"
    ctx = h.engine.context(h.state)
    ask = h.engine.hook.zonekeep_area_max_targets
    assert ask(ctx=ctx, shape="sphere", size=30, width=5) == 9  # the house rule
    assert ask(ctx=ctx, shape="sphere", size=5, width=5) == 2  # the arena text's table


def test_the_next_turn_can_be_a_plugins_choice() -> None:
    class Backwards:
        @staticmethod
        @hookimpl
        def zonekeep_next_turn(ctx: RuleContext) -> tuple[int, int]:
            s = ctx.state
            slot = len(s.initiative) - 1 if s.turn_slot < 0 else s.turn_slot - 1
            return (slot, 0) if slot >= 0 else (len(s.initiative), 0)

    creatures = [make("aria"), make("bram"), make("cleo")]
    h = EncounterHarness(creatures, extra_plugins=[Backwards])
    h.start(initiative=[20, 10, 5])
    assert h.state.active == "cleo"
    assert h.end_turn()[-1] == TurnStarted("bram", 1, 0)
    h.end_turn()
    assert h.state.active == "aria"
    events = h.end_turn()
    assert events[-1] == TurnStarted("cleo", 2, 0)
    assert h.state.round == 2


def test_a_plugin_can_keep_creatures_out_of_a_zone() -> None:
    class NoGoblinsInTheYard:
        @staticmethod
        @hookimpl
        def zonekeep_zone_refusal(ctx: RuleContext, creature: Creature, zone: str) -> Any:
            if zone == "yard" and creature.side == "goblins":
                return Refusal("zone_full", "The yard is warded against goblins.")
            return None

    h = first_turn(
        [make("gob", "goblins"), make("aria")],
        {"gob": "hall", "aria": "hall"},
        extra=[NoGoblinsInTheYard],
    )
    refusal = h.refused("enter", creature="gob", zones=["yard"])
    assert (refusal.code, refusal.message) == ("zone_full", "The yard is warded against goblins.")
    assert h.refused("move_to_zone", creature="gob", zone="yard").code == "zone_full"
    h.send("move_to_zone", creature="aria", zone="yard")
    assert h.creature("aria").zone == "yard"
