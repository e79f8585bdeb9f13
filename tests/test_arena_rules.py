"""Every arena rule (docs/rules.md, A1-A13, and its rulings), each with its exact outcome.

Test names carry the rule number of issue #3's list: rule1 movement, rule2 adjacent
allies, rule3 engaging, rule4 opportunity attacks, rule5 flanking, rule6 forced
movement, rule7 taking position, rule8 triggered effects, rule12 streamlining,
rule13 GM overrides. Targeting and areas (rules 9-11) are in test_arena_targeting.py
and test_arena_areas.py.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

import pytest
from arena_fixture import ARENA, harness
from helpers import left, make

from zonekeep.sdk import (
    ActionTaken,
    AdjacencyTaken,
    Attack,
    AttackMade,
    Creature,
    Damaged,
    DecisionOpened,
    EncounterOptions,
    EngagementStarted,
    Maneuver,
    ManeuverEnded,
    Moved,
    PositionLeft,
    PositionTaken,
    RuleContext,
    SaveMade,
    Size,
    SpaceShared,
    TumbleAttempted,
    ZoneEntered,
    hookimpl,
    parse_arena,
)
from zonekeep.sdk.testing import EncounterHarness


def first_turn(
    creatures: list[Creature],
    positions: dict[str, str],
    *,
    options: EncounterOptions | None = None,
    extra_plugins: list[object] | None = None,
) -> EncounterHarness:
    """The first creature acts first (initiative 20, everyone else lower)."""
    rolls = [20] + [10 - i for i in range(len(creatures) - 1)]
    h = harness(creatures, positions, rolls, options=options, extra_plugins=extra_plugins)
    assert h.state.active == creatures[0].id
    return h


# -- rule 1: movement between zones ----------------------------------------------------------


@pytest.mark.rule("arena.txt:6.2")
def test_rule1_inside_a_zone_moving_is_free_and_only_what_spends_movement_is_charged() -> None:
    h = first_turn([make("aria"), make("gob", "foes")], {"aria": "hall", "gob": "hall"})
    h.rolls(2).send("attack", creature="aria", target="gob")  # whoever stands in the zone
    assert left(h) == 30
    assert not h.of_type(Moved)
    h.send("take_position", creature="aria", asset="table")  # this spends: half speed
    assert left(h) == 15


@pytest.mark.rule("arena.txt:6.3")
def test_rule1_entering_an_adjacent_zone_spends_all_movement() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    h.send("move", creature="aria", feet=5)  # moving inside the zone is tracked, not required
    events = h.send("enter", creature="aria", zones=["yard"])
    assert ZoneEntered("aria", "hall", "yard", 25) in events
    assert h.creature("aria").zone == "yard"
    assert left(h) == 0
    refusal = h.refused("enter", creature="aria", zones=["road"])
    assert refusal.code == "not_enough_movement"
    h.assert_replay_matches()


@pytest.mark.rule("arena.txt:6.3", "arena.txt:6.5")
def test_rule1_only_adjacent_zones_with_a_clear_path() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    assert h.refused("enter", creature="aria", zones=["road"]).code == "not_adjacent"
    refusal = h.refused("enter", creature="aria", zones=["pit"])
    assert refusal.code == "no_clear_path"
    assert "an asset, a skill check the GM calls for, or a GM override" in refusal.message
    assert h.refused("enter", creature="aria", zones=["attic"]).code == "unknown_zone"


@pytest.mark.rule("arena.txt:6.5")
def test_rule1_an_asset_crosses_a_link_without_a_clear_path() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    h.send("take_position", creature="aria", asset="rope")  # 15 ft
    h.send("enter", creature="aria", zones=["pit"])
    assert h.creature("aria").zone == "pit"
    assert h.creature("aria").position is None  # the rope stays in the hall


@pytest.mark.rule("arena.txt:7.1", "arena.txt:7.2")
def test_rule1_a_further_zone_when_movement_exceeds_the_zone_size() -> None:
    h = first_turn(
        [make("aria", speed=30), make("bram", speed=15)], {"aria": "hall", "bram": "hall"}
    )
    h.send("enter", creature="aria", zones=["yard", "road"])  # 30 > Yard's 15 ft
    assert [e.to_zone for e in h.of_type(ZoneEntered)] == ["yard", "road"]
    h.end_turn()
    refusal = h.refused("enter", creature="bram", zones=["yard", "road"])  # 15 is not > 15
    assert refusal.code == "not_enough_movement"
    assert refusal.message == (
        "Bram has 15 ft of movement available; going on past Yard needs more than its 15 ft."
    )
    h.send("dash", creature="bram")  # Dash adds the speed: 30 > 15
    h.send("enter", creature="bram", zones=["yard", "road"])
    assert h.creature("bram").zone == "road"


@pytest.mark.rule("arena.txt:7.1")
def test_rule1_difficult_terrain_divides_the_movement_compared_with_the_zone() -> None:
    h = first_turn([make("aria", speed=30)], {"aria": "hall"})
    refusal = h.refused("enter", creature="aria", zones=["closet", "garden"])
    assert "15 ft of movement available (divided by 2: difficult)" in refusal.message
    h.send("dash", creature="aria")  # 60 / 2 = 30 > 15
    h.send("enter", creature="aria", zones=["closet", "garden"])
    assert h.creature("aria").zone == "garden"


FLYER = {"climb": 60, "fly": 60}


@pytest.mark.rule("arena.txt:7.2", "arena.txt:7.3")
@pytest.mark.parametrize(
    ("walkers", "start", "turned", "straight"),
    [
        # between beside links, only the arena's straight line (hall, yard, road)
        ((make("aria"), make("bram")), "hall", ["yard", "garden"], ["yard", "road"]),
        # up stays up; up then beside is a turn
        (
            (make("owl", speed=60, speeds=FLYER), make("bat", speed=60, speeds=FLYER)),
            "yard",
            ["roof", "tower"],
            ["roof", "sky"],
        ),
    ],
)
def test_rule1_sprint_goes_on_only_straight_ahead(
    walkers: tuple[Creature, Creature], start: str, turned: list[str], straight: list[str]
) -> None:
    sprinter, dasher = walkers
    h = first_turn(list(walkers), {sprinter.id: start, dasher.id: start})
    h.send("sprint", creature=sprinter.id)
    refusal = h.refused("enter", creature=sprinter.id, zones=turned)
    passed = h.state.arena.zone(turned[0]).name
    assert (refusal.code, refusal.message) == (
        "not_straight",
        f"Sprinting, {sprinter.name} can only go on straight ahead from {passed}.",
    )
    h.send("enter", creature=sprinter.id, zones=straight)
    assert h.creature(sprinter.id).zone == straight[-1]
    h.end_turn()
    h.send("dash", creature=dasher.id)  # a Dash may turn
    h.send("enter", creature=dasher.id, zones=turned)
    assert h.creature(dasher.id).zone == turned[-1]


@pytest.mark.rule("arena.txt:6.4")
def test_rule1_climbing_without_a_climb_speed_counts_double_against_the_zone() -> None:
    creatures = [make("aria", speed=30), make("cat", speed=30, speeds={"climb": 30})]
    h = first_turn(creatures, {"aria": "yard", "cat": "yard"})
    refusal = h.refused("enter", creature="aria", zones=["roof", "tower"])
    assert refusal.message == (
        "Aria has 15 ft of movement available (divided by 2: climb without a climb speed); "
        "going on past Roof needs more than its 15 ft."
    )
    h.send("enter", creature="aria", zones=["roof"])  # one zone is always reachable
    assert h.creature("aria").zone == "roof"
    h.end_turn()
    h.send("enter", creature="cat", zones=["roof", "tower"])  # a climber: 30 > 15
    assert h.creature("cat").zone == "tower"


@pytest.mark.rule("arena.txt:6.3")
def test_rule1_flying_needs_a_flying_speed() -> None:
    h = first_turn(
        [make("aria"), make("hawk", speeds={"fly": 60})], {"aria": "roof", "hawk": "roof"}
    )
    refusal = h.refused("enter", creature="aria", zones=["sky"])
    assert (refusal.code, refusal.message) == (
        "cannot_move",
        "Reaching Sky from Roof needs a flying speed.",
    )
    h.end_turn()
    h.send("enter", creature="hawk", zones=["sky"])
    assert h.creature("hawk").zone == "sky"


class Sentry:
    """A test plugin: whoever leaves the Yard provokes the sentry (a readied-style trigger)."""

    @staticmethod
    @hookimpl
    def zonekeep_provocations(
        ctx: RuleContext, creature: Creature, maneuver: Maneuver
    ) -> Iterable[str]:
        if maneuver.kind == "enter" and creature.zone == "yard":
            return ["sentry"]
        return []


@pytest.mark.rule("arena.txt:7.4")
def test_rule1_passing_through_a_zone_triggers_what_leaving_it_triggers() -> None:
    h = first_turn(
        [make("aria"), make("sentry", "foes")],
        {"aria": "hall", "sentry": "road"},
        extra_plugins=[Sentry()],
    )
    h.send("enter", creature="aria", zones=["yard", "road"])
    # Passing through the Yard counts as leaving it: the sentry is offered its attack.
    (offer,) = h.state.pending
    assert offer.creature == "sentry"
    assert (
        offer.prompt
        == "Sentry may make an opportunity attack with blade against Aria, who is leaving Yard."
    )
    assert h.creature("aria").zone == "yard"  # the move waits on the reaction
    h.send("decide", decision=offer.id, choice=["decline"])
    assert h.creature("aria").zone == "road"


@pytest.mark.rule("encounter.txt:60.1")
def test_rule1_a_zone_over_capacity_squeezes_everyone_and_admits_no_more() -> None:
    creatures = [make("aria"), make("bram"), make("cleo"), make("dain")]
    h = first_turn(creatures, {"aria": "hall", "bram": "closet", "cleo": "closet", "dain": "hall"})
    h.send("enter", creature="aria", zones=["closet"])  # 3 in a closet for 2: one over
    for cid in ("aria", "bram", "cleo"):
        assert h.creature(cid).has("squeezing")
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "dain"
    refusal = h.refused("enter", creature="dain", zones=["closet"])
    assert refusal.code == "zone_full"
    assert refusal.message == "Closet is already over its capacity (3 of 2); Dain cannot get in."


def test_rule1_leaving_a_crowded_zone_ends_the_squeeze() -> None:
    creatures = [make("aria"), make("bram"), make("cleo")]
    h = first_turn(creatures, {"aria": "closet", "bram": "closet", "cleo": "hall"})
    h.send("move_to_zone", creature="cleo", zone="closet")
    assert h.creature("aria").has("squeezing")
    h.send("enter", creature="aria", zones=["hall"])
    assert not h.creature("aria").has("squeezing")
    assert not h.creature("bram").has("squeezing")


# -- rule 2: adjacent allies -----------------------------------------------------------------


@pytest.mark.rule("arena.txt:9.1")
def test_rule2_moving_next_to_an_ally_costs_half_speed() -> None:
    h = first_turn([make("aria"), make("bram")], {"aria": "hall", "bram": "hall"})
    events = h.send("move_adjacent", creature="aria", ally="bram")
    assert AdjacencyTaken("aria", "bram", False) in events
    assert left(h) == 15
    assert h.state.adjacent_to("bram") == ["aria"]


@pytest.mark.rule("arena.txt:9.2")
def test_rule2_next_to_an_engaged_ally_engages_its_enemy() -> None:
    h = first_turn(
        [make("aria"), make("bram"), make("gob", "foes")],
        {"aria": "hall", "bram": "hall", "gob": "hall"},
    )
    h.send("grant_condition", creature="gob", condition="placeholder")
    h.state.engagements.append(("bram", "gob"))  # set up directly, as a GM would
    h.send("move_adjacent", creature="aria", ally="bram")
    assert h.state.is_engaged("aria", "gob")
    assert EngagementStarted("aria", "gob", "moved next to Bram") in h.events


@pytest.mark.rule("arena.txt:9.2")
def test_rule2_standing_back_to_back_costs_a_bonus_action_and_does_not_engage() -> None:
    h = first_turn(
        [make("aria"), make("bram"), make("gob", "foes")],
        {"aria": "hall", "bram": "hall", "gob": "hall"},
    )
    h.state.engagements.append(("bram", "gob"))
    h.send("move_adjacent", creature="aria", ally="bram", back_to_back=True)
    assert not h.state.is_engaged("aria", "gob")
    assert ActionTaken("aria", "back_to_back", "bonus") in h.events
    assert h.state.resources.bonus_actions == 0
    assert h.state.back_to_back == [("aria", "bram")]


@pytest.mark.rule("arena.txt:9.3")
def test_rule2_only_while_there_is_room_around_the_ally() -> None:
    big = [make(f"ogre{i}", "foes", size=Size.LARGE) for i in range(4)]
    h = first_turn(
        [make("aria"), make("bram"), *big],
        {c.id: "hall" for c in [make("aria"), make("bram"), *big]},
    )
    for ogre in big:  # four Large engaged around Bram fill his eight squares
        h.state.engagements.append(("bram", ogre.id))
    refusal = h.refused("move_adjacent", creature="aria", ally="bram")
    assert (refusal.code, refusal.message) == (
        "no_room",
        "There is no room left around Bram (Medium) for Aria (Medium).",
    )


# -- rule 3: engaging ------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:13.1")
def test_rule3_a_melee_attack_engages() -> None:
    h = first_turn([make("aria"), make("gob", "foes")], {"aria": "hall", "gob": "hall"})
    h.rolls(2).send("attack", creature="aria", target="gob")  # even a miss engages
    assert h.state.is_engaged("aria", "gob")
    assert h.state.last_melee == {"gob": "aria"}


@pytest.mark.rule("arena.txt:14.1")
def test_rule3_engaging_at_once_after_entering_with_the_action_unused() -> None:
    h = first_turn(
        [make("aria"), make("gob", "foes"), make("orc", "foes")],
        {"aria": "hall", "gob": "yard", "orc": "hall"},
    )
    assert h.refused("engage", creature="aria", target="orc").code == "cannot_engage"
    h.send("enter", creature="aria", zones=["yard"])
    h.send("engage", creature="aria", target="gob")
    assert h.state.is_engaged("aria", "gob")
    assert h.state.resources.actions == 1  # engaging is not the action
    h.rolls(2).send("attack", creature="aria", target="gob")


@pytest.mark.rule("encounter.txt:56.2", "arena.txt:14.2")
def test_rule3_engagement_capacity_by_size() -> None:
    ogres = [make(f"ogre{i}", "foes", size=Size.LARGE) for i in range(5)]
    everyone = [*ogres, make("aria")]
    h = first_turn(everyone, {c.id: "hall" for c in everyone})
    for ogre in ogres[1:4]:
        h.state.engagements.append(("aria", ogre.id))
    h.rolls(2, 2).send("attack", creature="ogre0", target="aria")  # the fourth Large fits
    for _ in range(4):
        h.end_turn()
    assert h.state.active == "ogre4"
    refusal = h.refused("attack", creature="ogre4", target="aria")
    assert refusal.code == "no_room"


@pytest.mark.rule("arena.txt:13.2")
def test_rule3_ranged_attacks_against_an_engaged_enemy_have_disadvantage() -> None:
    bow = Attack("bow", "ranged", 4, "1d8", range=80)
    h = first_turn(
        [make("aria", attacks=[bow, Attack("blade")]), make("gob", "foes")],
        {"aria": "hall", "gob": "hall"},
    )
    h.state.engagements.append(("aria", "gob"))
    h.rolls(15, 3).send("attack", creature="aria", target="gob", attack="bow")
    made = h.of_type(AttackMade)[-1]
    assert made.roll.advantage == "disadvantage"
    assert "disadvantage:ranged attack against an engaged enemy" in made.roll.sources


@pytest.mark.rule("arena.txt:13.4")
def test_rule3_leaving_the_zone_ends_engagement() -> None:
    h = first_turn(
        [make("aria"), make("gob", "foes"), make("orc", "foes")],
        {"aria": "hall", "gob": "hall", "orc": "hall"},
    )
    h.state.engagements.extend([("aria", "gob"), ("aria", "orc")])
    h.send("disengage", creature="aria")
    h.send("enter", creature="aria", zones=["yard"])
    assert h.state.engagements == []
    assert h.state.engaged_with("gob") == []


# -- rule 4: opportunity attacks ---------------------------------------------------------------


def engaged_pair(**kw: object) -> EncounterHarness:
    """Aria (first) engaged in the Hall with two goblins, each able to react."""
    h = first_turn(
        [
            make("aria", hp=30, skills={"acrobatics": 4}),
            make("gob", "foes", passive_perception=12),
            make("orc", "foes", passive_perception=15),
        ],
        {"aria": "hall", "gob": "hall", "orc": "hall"},
        **kw,  # type: ignore[arg-type]
    )
    h.state.engagements.extend([("aria", "gob"), ("aria", "orc")])
    return h


@pytest.mark.rule("arena.txt:13.3")
def test_rule4_leaving_a_zone_offers_every_engaged_enemy_an_attack() -> None:
    h = engaged_pair()
    h.send("enter", creature="aria", zones=["yard"])
    offers = [d for d in h.state.pending]
    assert [(d.kind, d.creature, d.controller, d.default) for d in offers] == [
        ("opportunity_attack", "gob", "gm", ("decline",)),
        ("opportunity_attack", "orc", "gm", ("decline",)),
    ]
    assert h.creature("aria").zone == "hall"
    assert h.refused("dash", creature="aria").code == "decision_pending"
    # Two goblins against Aria alone: she is flanked, so two d20s (15 and 3).
    h.rolls(15, 3, 4).send("decide", decision=offers[0].id, choice=["attack"])
    made = h.of_type(AttackMade)[-1]
    assert (made.attacker, made.target, made.reaction) == ("gob", "aria", True)
    assert ActionTaken("gob", "opportunity_attack", "reaction") in h.events
    assert h.creature("aria").zone == "hall"  # still waiting on the orc
    h.send("decision_timeout", decision=offers[1].id)  # the default: no attack
    assert h.creature("aria").zone == "yard"
    assert h.state.engaged_with("aria") == []
    assert not h.state.has_reaction("gob") and h.state.has_reaction("orc")
    h.assert_replay_matches()


@pytest.mark.rule("arena.txt:13.5", "arena.txt:22.2")
def test_rule4_disengage_avoids_them() -> None:
    h = engaged_pair()
    h.send("disengage", creature="aria")
    h.send("enter", creature="aria", zones=["yard"])
    assert h.state.pending == []
    assert h.creature("aria").zone == "yard"


@pytest.mark.rule("arena.txt:24.3")
def test_rule4_a_successful_tumble_beats_the_highest_passive_perception() -> None:
    h = engaged_pair()
    h.rolls(11).send("enter", creature="aria", zones=["yard"], tumble=True)  # 11 + 4 = 15 >= 15
    (tumble,) = h.of_type(TumbleAttempted)
    assert (tumble.dc, tumble.roll.total, tumble.success) == (15, 15, True)
    assert h.state.pending == []
    assert h.creature("aria").zone == "yard"


@pytest.mark.rule("arena.txt:24.3")
def test_rule4_a_failed_tumble_leaves_the_attacks_offered() -> None:
    h = engaged_pair()
    h.rolls(10).send("enter", creature="aria", zones=["yard"], tumble=True)  # 14 < 15
    assert [d.creature for d in h.state.pending] == ["gob", "orc"]


@pytest.mark.rule("arena.txt:13.6", "arena.txt:13.7")
def test_rule4_leaving_an_enemys_reach_offers_only_that_enemy() -> None:
    h = engaged_pair()
    h.send("withdraw", creature="aria", target="orc")
    (offer,) = h.state.pending
    assert offer.creature == "orc"
    assert (
        offer.prompt
        == "Orc may make an opportunity attack with blade against Aria, who is leaving Orc's reach."
    )
    h.send("decide", decision=offer.id, choice=["decline"])
    assert h.state.engaged_with("aria") == ["gob"]


@pytest.mark.rule("arena.txt:19.3", "arena.txt:19.4")
def test_rule4_taking_a_position_while_engaged_provokes_the_last_melee_attacker() -> None:
    h = engaged_pair()
    h.end_turn()
    h.rolls(2, 2).send("attack", creature="gob", target="aria")
    h.end_turn()
    h.rolls(2, 2).send("attack", creature="orc", target="aria")
    h.end_turn()
    assert h.state.active == "aria" and h.state.last_melee["aria"] == "orc"
    h.send("take_position", creature="aria", asset="table")
    assert [d.creature for d in h.state.pending] == ["orc"]


def test_rule4_an_attack_that_drops_the_mover_stops_the_move() -> None:
    h = engaged_pair()
    h.send("override", creature="aria", field="hp", value=2)
    h.send("enter", creature="aria", zones=["yard"])
    h.rolls(15, 3, 4).send("decide", decision=h.state.pending[0].id, choice=["attack"])
    assert h.creature("aria").has("dying")
    assert h.state.pending == [] or all(d.kind == "opportunity_attack" for d in h.state.pending)
    for d in list(h.state.pending):
        h.send("decide", decision=d.id, choice=["decline"])
    assert h.creature("aria").zone == "hall"
    assert ManeuverEnded("aria", False, "Aria can no longer move") in h.events


@pytest.mark.rule("arena.txt:13.3")
def test_rule4_only_the_controller_answers_and_a_used_reaction_is_not_offered() -> None:
    h = first_turn(
        [make("aria"), make("gob", "foes"), make("bram", controller="bob")],
        {"aria": "hall", "gob": "hall", "bram": "hall"},
    )
    h.state.engagements.append(("aria", "gob"))
    h.state.reactions_used.append("gob")
    h.send("enter", creature="aria", zones=["yard"])
    assert h.state.pending == []
    assert h.creature("aria").zone == "yard"


# -- rule 5: flanking --------------------------------------------------------------------------


def melee_roll_sources(h: EncounterHarness) -> tuple[str, ...]:
    return h.of_type(AttackMade)[-1].roll.sources


@pytest.mark.rule("arena.txt:4.1")
def test_rule5_outnumbered_two_to_one_is_flanked() -> None:
    h = first_turn(
        [make("aria"), make("bram"), make("gob", "foes")],
        {"aria": "hall", "bram": "hall", "gob": "hall"},
    )
    h.rolls(3, 15, 1).send("attack", creature="aria", target="gob")
    assert melee_roll_sources(h) == ("advantage:flanking: outnumbered 2 to 1",)
    assert h.of_type(AttackMade)[-1].roll.kept == (15,)


@pytest.mark.rule("arena.txt:4.1")
def test_rule5_a_creature_that_cannot_act_counts_for_neither_side() -> None:
    """Our ruling (docs/rules.md, A5): a dying ally does not make two against one, and a
    stunned ally of the target does not keep it from being outnumbered."""
    dying = make("bram", hp=0, conditions=["dying"])
    h = first_turn(
        [make("aria"), dying, make("gob", "foes")], {c: "hall" for c in ("aria", "bram", "gob")}
    )
    h.rolls(3, 4).send("attack", creature="aria", target="gob")  # with advantage: 4 kept
    assert melee_roll_sources(h) == ()
    assert h.of_type(AttackMade)[-1].roll.kept == (3,)
    creatures = [
        make("aria"),
        make("bram"),
        make("gob", "foes"),
        make("orc", "foes", conditions=["stunned"]),
    ]
    h = first_turn(creatures, {c.id: "hall" for c in creatures})
    h.rolls(3, 15, 1).send("attack", creature="aria", target="gob")
    assert melee_roll_sources(h) == ("advantage:flanking: outnumbered 2 to 1",)


@pytest.mark.rule("arena.txt:4.2", "arena.txt:4.3")
def test_rule5_two_non_adjacent_allies_engaged_flank_and_it_does_not_stack() -> None:
    creatures = [make("aria"), make("bram"), make("gob", "foes"), make("orc", "foes")]
    h = first_turn(creatures, {c.id: "hall" for c in creatures})
    h.state.engagements.extend([("aria", "gob"), ("bram", "gob")])
    h.rolls(3, 15, 1).send("attack", creature="aria", target="gob")
    assert melee_roll_sources(h) == ("advantage:flanking: engaged from two sides",)


@pytest.mark.rule("arena.txt:4.2")
def test_rule5_adjacent_allies_do_not_flank_and_ranged_attacks_gain_nothing() -> None:
    bow = Attack("bow", "ranged", 4, "1d8", range=80)
    creatures = [
        make("aria", attacks=[Attack("blade"), bow]),
        make("bram"),
        make("gob", "foes"),
        make("orc", "foes"),
    ]
    h = first_turn(creatures, {c.id: "hall" for c in creatures})
    h.state.engagements.extend([("aria", "gob"), ("bram", "gob")])
    h.state.adjacent.append(("aria", "bram"))
    h.rolls(3, 1).send("attack", creature="aria", target="gob")
    assert melee_roll_sources(h) == ()


@pytest.mark.rule("arena.txt:11.2")
def test_rule5_flanking_switched_off() -> None:
    creatures = [make("aria"), make("bram"), make("gob", "foes")]
    h = first_turn(
        creatures, {c.id: "hall" for c in creatures}, options=EncounterOptions(flanking=False)
    )
    h.rolls(3, 1).send("attack", creature="aria", target="gob")
    assert melee_roll_sources(h) == ()


# -- rule 6: forced movement --------------------------------------------------------------------


def shover() -> EncounterHarness:
    return first_turn(
        [
            make("aria", skills={"athletics": 5}, maneuver_dc=14, spell_dc=16),
            make("gob", "foes", saves={"dex": 1}),
        ],
        {"aria": "hall", "gob": "hall"},
    )


@pytest.mark.rule("arena.txt:16.1")
def test_rule6_shoved_into_an_adjacent_zone_with_a_clear_path() -> None:
    h = shover()
    h.rolls(15, 8).send("shove", creature="aria", target="gob", zone="yard")
    assert ZoneEntered("gob", "hall", "yard", 0, True, "aria") in h.events
    assert h.creature("gob").zone == "yard"


def test_rule6_a_lost_contest_moves_nothing() -> None:
    h = shover()
    h.rolls(5, 18).send("shove", creature="aria", target="gob", zone="yard")
    assert h.creature("gob").zone == "hall"
    assert h.state.resources.actions == 0


@pytest.mark.rule("arena.txt:16.1")
def test_rule6_not_into_a_zone_without_a_clear_path() -> None:
    h = shover()
    refusal = h.refused("force", forcer="aria", creature="gob", zone="pit")
    assert refusal.code == "no_clear_path"


@pytest.mark.rule("arena.txt:16.4")
def test_rule6_forced_movement_spends_no_movement() -> None:
    h = shover()
    h.send("force", forcer="gob", creature="aria", zone="yard")
    assert h.creature("aria").zone == "yard"
    assert left(h) == 30


@pytest.mark.rule("arena.txt:16.1")
def test_rule6_into_a_creature_shares_its_space() -> None:
    h = first_turn(
        [make("gob", "foes"), make("aria"), make("bram")],
        {"gob": "hall", "aria": "hall", "bram": "hall"},
    )
    h.send("force", forcer="gob", creature="aria", into="bram")
    assert SpaceShared("aria", "bram", "gob") in h.events
    assert h.creature("aria").sharing_with == "bram"


@pytest.mark.rule("arena.txt:16.2", "arena.txt:16.3", "arena.txt:17.2")
@pytest.mark.parametrize(("magical", "dc"), [(False, 14), (True, 16)])
def test_rule6_forced_into_an_asset_takes_position_and_saves_against_the_forcers_dc(
    magical: bool, dc: int
) -> None:
    h = shover()
    h.rolls(12, 3, 4).send("force", forcer="aria", creature="gob", asset="spikes", magical=magical)
    assert PositionTaken("gob", "spikes", True, "aria") in h.events
    save = h.of_type(SaveMade)[-1]
    assert (save.ability, save.dc, save.roll.total, save.success) == ("dex", dc, 13, False)
    assert h.creature("gob").hp == 20 - 7
    assert h.creature("gob").has("impaled")
    assert h.creature("gob").position == "spikes"


def spiked_shover(dc: int | None) -> EncounterHarness:
    """:func:`shover` with the wall of spikes given its own DC ``dc``."""
    doc = copy.deepcopy(ARENA)
    spikes = next(a for a in doc["assets"] if a["id"] == "spikes")
    spikes["forced"]["save"]["dc"] = dc
    h = EncounterHarness(
        [
            make("aria", skills={"athletics": 5}, maneuver_dc=14, spell_dc=16),
            make("gob", "foes", saves={"dex": 1}),
        ],
        arena=parse_arena(doc, "test-arena"),
    )
    h.start(positions={"aria": "hall", "gob": "hall"}, initiative=[20, 10])
    return h


@pytest.mark.rule("arena.txt:17.2")
def test_rule6_forced_into_an_asset_with_a_dc_of_its_own_the_forcers_dc_still_applies() -> None:
    h = spiked_shover(10)
    h.rolls(12, 3, 4).send("force", forcer="aria", creature="gob", asset="spikes")
    save = h.of_type(SaveMade)[-1]
    assert (save.dc, save.roll.total, save.success) == (14, 13, False)  # 13 beat the asset's 10
    assert h.creature("gob").hp == 20 - 7


@pytest.mark.rule("arena.txt:17.2")
def test_rule6_a_shove_into_an_asset_uses_the_shovers_maneuver_dc() -> None:
    h = spiked_shover(10)
    h.rolls(15, 8, 12, 3, 4).send("shove", creature="aria", target="gob", asset="spikes")
    save = h.of_type(SaveMade)[-1]
    assert (save.dc, save.roll.total, save.success) == (14, 13, False)
    assert PositionTaken("gob", "spikes", True, "aria") in h.events


@pytest.mark.rule("arena.txt:17.2")
def test_rule6_when_nobody_forced_the_move_the_assets_own_dc_applies() -> None:
    h = spiked_shover(10)
    h.rolls(8, 3, 4).send("force", creature="gob", asset="spikes")
    assert PositionTaken("gob", "spikes", True, "gm") in h.events
    save = h.of_type(SaveMade)[-1]
    assert (save.dc, save.roll.total, save.success) == (10, 9, False)
    assert h.creature("gob").hp == 20 - 7
    h.rolls(10).send("force", creature="aria", asset="spikes")
    save = h.of_type(SaveMade)[-1]
    assert (save.creature, save.dc, save.roll.total, save.success) == ("aria", 10, 10, True)


@pytest.mark.rule("arena.txt:17.2")
def test_rule6_nobody_forcing_an_asset_without_a_dc_of_its_own_is_refused() -> None:
    h = shover()
    refusal = h.refused("force", creature="gob", asset="spikes")
    assert (refusal.code, refusal.message) == (
        "invalid_params",
        "Wall of spikes has no DC of its own: name the creature that forced Gob into "
        "it, whose DC applies.",
    )
    refusal = h.refused("force", creature="gob", zone="yard", magical=True)
    assert refusal.code == "invalid_params"


@pytest.mark.rule("arena.txt:16.2")
def test_rule6_a_successful_save_avoids_the_assets_effect() -> None:
    h = shover()
    h.rolls(19).send("force", forcer="aria", creature="gob", asset="spikes")
    assert h.creature("gob").hp == 20 and not h.creature("gob").has("impaled")


# -- rule 7: taking position ----------------------------------------------------------------------


@pytest.mark.rule("arena.txt:6.2", "arena.txt:19.2")
def test_rule7_taking_position_costs_half_speed() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    h.send("take_position", creature="aria", asset="table")
    assert left(h) == 15
    assert h.creature("aria").position == "table"
    h.send("leave_position", creature="aria")
    assert left(h) == 0
    assert h.creature("aria").position is None


@pytest.mark.rule("arena.txt:20.2")
def test_rule7_one_prop_at_a_time_elements_and_terrain_on_top() -> None:
    h = first_turn([make("aria", speed=60, saves={"str": 5})], {"aria": "yard"})
    h.send("dash", creature="aria")  # 120 ft: three positions at 30 ft each
    h.send("take_position", creature="aria", asset="ledge")
    refusal = h.refused("take_position", creature="aria", asset="ledge")
    assert refusal.code == "invalid_params"
    h.send("take_position", creature="aria", asset="fog")
    h.rolls(10).send("take_position", creature="aria", asset="mud")  # 15 >= 12: no mud grip
    assert (h.creature("aria").position, h.creature("aria").elements) == ("ledge", ["fog", "mud"])
    assert not h.creature("aria").has("restrained")


@pytest.mark.rule("arena.txt:20.4")
def test_rule7_a_creature_in_position_still_acts_in_its_zone_unless_a_condition_stops_it() -> None:
    h = first_turn([make("aria"), make("gob", "foes")], {"aria": "hall", "gob": "hall"})
    h.send("take_position", creature="aria", asset="table")
    h.send("interact", creature="aria", object="a mug on the table")
    h.rolls(15, 4).send("attack", creature="aria", target="gob")
    assert h.creature("gob").hp == 20 - 6
    assert h.creature("aria").position == "table"
    h.send("grant_condition", creature="aria", condition="restrained")
    refusal = h.refused("leave_position", creature="aria")
    assert (refusal.code, refusal.message) == ("speed_zero", "Aria is restrained: its speed is 0.")


@pytest.mark.rule("arena.txt:40.3", "arena.txt:40.4")
def test_rule11_anyone_takes_or_leaves_position_in_an_ongoing_area_on_top_of_a_prop() -> None:
    h = first_turn([make("aria"), make("gob", "foes")], {"aria": "hall", "gob": "hall"})
    h.send("take_position", creature="aria", asset="table")
    fog = {"zone": "hall", "shape": "cube", "size": 10, "range": 0, "name": "Fog"}
    h.send("area_effect", creature="aria", targets=["gob"], ongoing=True, **fog)
    assert h.creature("gob").elements == ["fog-1"]
    h.send("take_position", creature="aria", asset="fog-1")  # not a target: it walks in
    aria = h.creature("aria")
    assert (aria.position, aria.elements, left(h)) == ("table", ["fog-1"], 0)
    h.end_turn()
    h.send("leave_position", creature="gob", asset="fog-1")
    assert (h.creature("gob").elements, left(h)) == ([], 15)
    h.assert_replay_matches()


@pytest.mark.rule("arena.txt:20.1")
def test_rule7_a_second_prop_needs_the_first_left() -> None:
    h = first_turn([make("aria", speed=60)], {"aria": "hall"})
    h.send("take_position", creature="aria", asset="table")
    refusal = h.refused("take_position", creature="aria", asset="chair")
    assert refusal.code == "already_in_position"


@pytest.mark.rule("arena.txt:19.2")
def test_rule7_the_asset_must_be_in_the_zone() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    assert h.refused("take_position", creature="aria", asset="fog").code == "invalid_target"
    assert h.refused("take_position", creature="aria", asset="nowhere").code == "unknown_asset"


@pytest.mark.rule("arena.txt:19.5")
def test_rule7_dash_on_entering_takes_position_at_once() -> None:
    h = first_turn([make("aria")], {"aria": "hall"})
    h.send("enter", creature="aria", zones=["yard"], position="ledge")
    assert ActionTaken("aria", "dash", "action") in h.events
    assert h.creature("aria").position == "ledge"
    assert h.creature("aria").zone == "yard"


@pytest.mark.rule("arena.txt:19.6")
def test_rule7_leaving_a_position_to_engage_costs_nothing() -> None:
    h = first_turn([make("aria"), make("gob", "foes")], {"aria": "hall", "gob": "hall"})
    h.send("take_position", creature="aria", asset="table")
    h.send("engage", creature="aria", target="gob")
    assert PositionLeft("aria", "table", "left to engage") in h.events
    assert left(h) == 15  # only the position's own cost was paid
    assert h.state.is_engaged("aria", "gob")


@pytest.mark.rule("arena.txt:19.1")
def test_rule7_what_a_position_grants() -> None:
    h = first_turn([make("gob", "foes"), make("aria", ac=12)], {"gob": "hall", "aria": "hall"})
    h.send("set_position", creature="aria", asset="table")
    h.rolls(9, 3).send("attack", creature="gob", target="aria")  # 13 vs AC 12 + 2
    made = h.of_type(AttackMade)[-1]
    assert (made.target_ac, made.hit) == (14, False)


def test_rule7_leaving_the_zone_leaves_its_positions_and_their_conditions() -> None:
    h = first_turn([make("aria")], {"aria": "yard"})
    h.send("take_position", creature="aria", asset="ledge")
    assert h.creature("aria").has("hanging")
    h.end_turn()
    h.end_turn()
    h.send("enter", creature="aria", zones=["hall"])
    assert h.creature("aria").position is None
    assert not h.creature("aria").has("hanging")


# -- rule 8: triggered effects ---------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    @hookimpl
    def zonekeep_zone_entered(
        self, ctx: RuleContext, creature: Creature, from_zone: str, forced: bool
    ) -> None:
        self.seen.append(("entered", from_zone, creature.zone or ""))

    @hookimpl
    def zonekeep_position_taken(
        self, ctx: RuleContext, creature: Creature, asset: object, forced: bool
    ) -> None:
        self.seen.append(("position", creature.id, getattr(asset, "id", "")))


@pytest.mark.rule("arena.txt:22.1")
def test_rule8_triggers_fire_on_entering_leaving_and_taking_position() -> None:
    rec = Recorder()
    h = first_turn([make("aria", speed=60)], {"aria": "hall"}, extra_plugins=[rec])
    h.send("enter", creature="aria", zones=["yard", "road"])
    assert rec.seen == [("entered", "hall", "yard"), ("entered", "yard", "road")]
    h.end_turn()
    h.send("move_to_zone", creature="aria", zone="yard")
    h.send("set_position", creature="aria", asset="ledge")
    assert rec.seen[-1] == ("position", "aria", "ledge")


def test_rule8_sucking_mud_grips_on_a_failed_save() -> None:
    h = first_turn([make("aria", saves={"str": 1})], {"aria": "yard"})
    h.rolls(5).send("take_position", creature="aria", asset="mud")
    save = h.of_type(SaveMade)[-1]
    assert (save.ability, save.dc, save.success) == ("str", 12, False)
    assert h.creature("aria").has("restrained")


@pytest.mark.rule("arena.txt:24.4")
def test_rule8_an_asset_grants_an_expertise_die_on_the_tumble() -> None:
    h = first_turn(
        [make("aria", skills={"acrobatics": 2}), make("gob", "foes", passive_perception=14)],
        {"aria": "yard", "gob": "yard"},
    )
    h.send("set_position", creature="aria", asset="ledge")
    h.state.engagements.append(("aria", "gob"))
    h.rolls(9, 3).send("enter", creature="aria", zones=["hall"], tumble=True)  # 9+2+d4 3 = 14
    (tumble,) = h.of_type(TumbleAttempted)
    assert (tumble.roll.expertise, tumble.roll.total, tumble.success) == (4, 14, True)


# -- rule 12: streamlining ------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:11.2")
def test_rule12_adjacency_switched_off() -> None:
    options = EncounterOptions(adjacency=False)
    h = first_turn([make("aria"), make("bram")], {"aria": "hall", "bram": "hall"}, options=options)
    assert h.refused("move_adjacent", creature="aria", ally="bram").code == "option_off"


@pytest.mark.rule("arena.txt:11.2")
def test_rule12_back_to_back_switched_off() -> None:
    options = EncounterOptions(back_to_back=False)
    h = first_turn([make("aria"), make("bram")], {"aria": "hall", "bram": "hall"}, options=options)
    refusal = h.refused("move_adjacent", creature="aria", ally="bram", back_to_back=True)
    assert refusal.code == "option_off"
    h.send("move_adjacent", creature="aria", ally="bram")


@pytest.mark.rule("arena.txt:11.2")
def test_rule12_size_limits_switched_off() -> None:
    options = EncounterOptions(size_limits=False)
    creatures = [make("aria"), make("bram"), make("cleo")]
    h = first_turn(creatures, {"aria": "hall", "bram": "closet", "cleo": "closet"}, options=options)
    h.send("enter", creature="aria", zones=["closet"])
    assert not h.creature("aria").has("squeezing")
    ogres = [make(f"ogre{i}", "foes", size=Size.LARGE) for i in range(5)]
    everyone = [make("aria"), *ogres]
    h = first_turn(everyone, {c.id: "hall" for c in everyone}, options=options)
    for ogre in ogres[:4]:
        h.state.engagements.append(("aria", ogre.id))
    h.end_turn()
    h.end_turn()
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "ogre4"
    h.rolls(2, 2).send("attack", creature="ogre4", target="aria")  # a fifth Large: no limit
    assert h.state.is_engaged("aria", "ogre4")


# -- rule 13: GM overrides --------------------------------------------------------------------------


@pytest.mark.rule("arena.txt:2.1")
def test_rule13_every_override_is_an_event_naming_who() -> None:
    h = first_turn([make("aria"), make("gob", "foes")], {"aria": "hall", "gob": "hall"})
    h.send("move_to_zone", creature="gob", zone="pit")
    assert ZoneEntered("gob", "hall", "pit", 0, True, "gm") in h.events
    h.send("set_position", creature="aria", asset="table")
    assert PositionTaken("aria", "table", True, "gm") in h.events
    h.send("set_position", creature="aria")
    assert PositionLeft("aria", "table", "GM override by gm") in h.events
    player = EncounterHarness.player("player-aria")
    assert h.refused("move_to_zone", player, creature="aria", zone="yard").code == "gm_only"
    assert h.refused("force", player, forcer="aria", creature="gob", zone="hall").code == "gm_only"


def test_rule13_gm_damage_is_damage_dying_pcs_and_defeated_npcs_leave_engagements() -> None:
    h = engaged_pair()  # Aria (30 hp) engaged with Gob and Orc (20 hp each)
    h.send("damage", creature="gob", amount=3, damage_type="fire")
    assert Damaged("gob", 3, 17, "fire", None, "GM gm", raw=3, raw_type="fire") in h.events
    assert h.state.creatures["gob"].conditions == []
    h.send("damage", creature="gob", amount=25)
    assert "defeated" in h.state.creatures["gob"].conditions  # an NPC at 0: defeated
    assert not h.state.is_engaged("aria", "gob")
    assert h.state.is_engaged("aria", "orc")
    h.send("damage", creature="aria", amount=30)
    assert "dying" in h.state.creatures["aria"].conditions  # a PC at 0: dying
    assert not h.state.is_engaged("aria", "orc")
    assert h.refused("damage", creature="orc", amount=0).code == "invalid_params"
    player = EncounterHarness.player("player-aria")
    assert h.refused("damage", player, creature="orc", amount=2).code == "gm_only"


def test_decision_opened_prompt_names_the_step() -> None:
    h = engaged_pair()
    h.send("enter", creature="aria", zones=["yard"])
    opened = h.of_type(DecisionOpened)
    assert opened[0].decision.prompt == (
        "Gob may make an opportunity attack with blade against Aria, who is leaving Hall."
    )
