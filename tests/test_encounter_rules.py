"""Every encounter rule (docs/rules.md, 1-12, and its rulings), each with its exact outcome.

Test names carry the rule number of issue #2's list: rule1 steps, rule2 surprise,
rule3 initiative, rule4 ties, rule5 the turn, rule6 movement modes, rule7 prone,
rule8 other creatures, rule9 size and space, rule10 squeezing, rule11 interaction,
rule12 ending.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from helpers import left, make

from zonekeep.sdk import (
    ActionTaken,
    Arena,
    AttackMade,
    CommandSpec,
    ConditionApplied,
    Damaged,
    DecisionOpened,
    DecisionResolved,
    EncounterEnded,
    EncounterOptions,
    InitiativeRolled,
    Interacted,
    Link,
    Moved,
    MovementSpent,
    Param,
    RoundStarted,
    Size,
    SurpriseEnded,
    TurnEnded,
    TurnStarted,
    Zone,
    can_pass_through,
    can_surround,
    hookimpl,
    max_surrounding,
)
from zonekeep.sdk._context import RollRequest
from zonekeep.sdk.testing import EncounterHarness

ALICE = EncounterHarness.player("player-aria")


def mud_and_yard() -> Arena:
    """Two zones side by side: ``mud`` (difficult terrain, says the arena) and ``yard``."""
    return Arena(
        id="mud",
        name="Mud and yard",
        zones=(Zone(id="mud", name="Mud", size=30, difficult=True), Zone("yard", "Yard", 30)),
        links=(Link("mud", "yard", "beside"),),
    )


def yard_duel() -> EncounterHarness:
    """:func:`duel` in :func:`mud_and_yard`, both in the yard (plain ground)."""
    h = EncounterHarness(
        [make("aria", dex=3, zone="yard"), make("gob", "foes", dex=1, hp=10, zone="yard")],
        arena=mud_and_yard(),
    )
    h.start(initiative=[15, 10])
    assert h.state.active == "aria"
    return h


def duel(**kw: object) -> EncounterHarness:
    """Aria (PC, dex 3, 20 hp) against a goblin (NPC, dex 1, 10 hp); Aria acts first."""
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes", dex=1, hp=10)], **kw)  # type: ignore[arg-type]
    h.start(initiative=[15, 10])
    assert h.state.active == "aria"
    return h


# -- rule 1: the steps of an encounter, in order ------------------------------------------


@pytest.mark.rule("encounter.txt:7.2", "encounter.txt:9.2")
def test_rule1_steps_run_in_order() -> None:
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes")])
    assert h.state.phase == "surprise"
    assert h.refused("place").code == "wrong_phase"
    assert h.refused("roll_initiative").code == "wrong_phase"
    h.send("set_surprise", surprised=[])
    assert h.state.phase == "positions"
    assert h.refused("set_surprise").code == "wrong_phase"
    assert h.refused("roll_initiative").code == "wrong_phase"
    h.send("place", positions={"aria": "field"})
    assert h.state.phase == "initiative"
    assert h.creature("gob").zone == "field"
    assert h.refused("dash", creature="aria").code == "wrong_phase"
    h.rolls(15, 10).send("roll_initiative")
    assert h.state.phase == "turns"
    assert (h.state.round, h.state.active) == (1, "aria")


@pytest.mark.rule(
    "encounter.txt:1.2",
    "encounter.txt:1.3",
    "encounter.txt:2.2",
    "encounter.txt:9.2",
    "encounter.txt:10.2",
    "encounter.txt:10.3",
    "encounter.txt:71.1",
    "encounter.txt:71.2",
    "encounter.txt:71.3",
)
def test_rule1_rounds_follow_each_other_until_no_threat_remains() -> None:
    h = duel()
    h.end_turn()
    assert h.state.active == "gob"
    h.end_turn()
    assert [e.round for e in h.of_type(RoundStarted)] == [1, 2]
    assert h.state.active == "aria"
    # Aria drops the goblin: the last threat is gone and the encounter ends.
    h.rolls(20, 6, 6).send("attack", creature="aria", target="gob")
    assert h.state.phase == "ended"
    ended = h.of_type(EncounterEnded)
    assert len(ended) == 1 and "foes" in ended[0].reason
    assert h.refused("end_turn", creature="aria").code == "encounter_over"
    h.assert_replay_matches()


@pytest.mark.rule("encounter.txt:7.2")
def test_rule1_positions_must_name_zones_of_the_arena() -> None:
    h = EncounterHarness([make("aria"), make("gob", "foes")], zones=("hall", "stairs"))
    h.send("set_surprise")
    assert h.refused("place", positions={"aria": "attic"}).code == "unknown_zone"
    assert h.refused("place", positions={"aria": "hall"}).code == "invalid_params"  # gob has none
    h.send("place", positions={"aria": "hall", "gob": "stairs"})
    assert (h.creature("aria").zone, h.creature("gob").zone) == ("hall", "stairs")


# -- rule 2: surprise ------------------------------------------------------------------------


def surprised_duel(**kw: object) -> EncounterHarness:
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes", dex=1)], **kw)  # type: ignore[arg-type]
    h.start(surprised=["aria"], initiative=[15, 10])
    return h


@pytest.mark.rule("encounter.txt:6.2")
@pytest.mark.parametrize(
    ("command", "params"),
    [
        ("move", {"feet": 5}),
        ("attack", {"target": "gob"}),
        ("dash", {}),
        ("interact", {"object": "door"}),
        ("communicate", {"text": "help"}),
    ],
)
def test_rule2_surprised_creature_cannot_move_or_act_on_its_first_turn(
    command: str, params: dict[str, object]
) -> None:
    h = surprised_duel()
    refusal = h.refused(command, creature="aria", **params)
    assert refusal.code == "surprised"
    assert "cannot move or act" in refusal.message


@pytest.mark.rule("encounter.txt:6.2")
def test_rule2_surprised_creature_cannot_even_stand_up() -> None:
    h = surprised_duel()
    h.send("grant_condition", creature="aria", condition="prone")
    assert h.refused("stand", creature="aria").code == "surprised"


@pytest.mark.rule("encounter.txt:6.2")
def test_rule2_surprised_creature_cannot_react_until_its_first_turn_ends() -> None:
    h = EncounterHarness([make("gob", "foes", dex=5), make("aria", dex=0)], extra_plugins=[Parry])
    h.start(surprised=["aria"], initiative=[15, 10])
    assert h.state.active == "gob"
    assert h.refused("parry", creature="aria").code == "surprised"
    h.end_turn()
    assert h.state.active == "aria"
    events = h.end_turn()
    assert SurpriseEnded("aria") in events
    assert h.state.active == "gob"
    h.send("parry", creature="aria")
    assert ActionTaken("aria", "parry", "reaction") in h.events


@pytest.mark.rule("encounter.txt:6.2")
def test_rule2_surprised_creature_may_still_end_its_turn_and_acts_normally_next_round() -> None:
    h = surprised_duel()
    h.end_turn()
    h.end_turn()
    assert (h.state.round, h.state.active) == (2, "aria")
    h.send("dash", creature="aria")
    h.send("move", creature="aria", feet=60)


@pytest.mark.rule("arena.txt:11.2")
def test_rule2_surprise_switched_off_refuses_surprised_creatures() -> None:
    h = EncounterHarness([make("aria")], options=EncounterOptions(surprise=False))
    assert h.refused("set_surprise", surprised=["aria"]).code == "invalid_params"
    h.send("set_surprise", surprised=[])


# -- rule 3: initiative ------------------------------------------------------------------------


@pytest.mark.rule(
    "encounter.txt:2.1", "encounter.txt:8.2", "encounter.txt:12.2", "encounter.txt:13.1"
)
def test_rule3_initiative_is_d20_plus_dex_plus_bonus_highest_first() -> None:
    h = EncounterHarness(
        [make("aria", dex=3, initiative_bonus=2), make("bram", dex=1), make("gob", "foes", dex=2)]
    )
    h.start(initiative=[4, 12, 9])  # aria 4+5=9, bram 13, gob 11
    totals = {e.slot: e.total for e in h.state.initiative}
    assert totals == {"aria": 9, "bram": 13, "gob": 11}
    assert h.state.order() == ["bram", "gob", "aria"]


@pytest.mark.rule("encounter.txt:12.3")
def test_rule3_a_group_of_identical_creatures_rolls_once_and_acts_together() -> None:
    h = EncounterHarness(
        [
            make("aria", dex=2),
            make("g1", "foes", dex=1, group="goblins"),
            make("g2", "foes", dex=1, group="goblins"),
            make("g3", "foes", dex=1, group="goblins"),
        ]
    )
    h.start(initiative=[10, 15])  # only two d20s: aria, then the goblin group
    assert h.dice.remaining == ()
    assert [e.slot for e in h.state.initiative] == ["goblins", "aria"]
    assert h.state.initiative[0].members == ("g1", "g2", "g3")
    seen = []
    for _ in range(4):
        seen.append(h.state.active)
        h.end_turn()
    assert seen == ["g1", "g2", "g3", "aria"]


@pytest.mark.rule("encounter.txt:12.3")
def test_rule3_gm_sets_the_order_inside_a_group() -> None:
    h = EncounterHarness(
        [make("aria", dex=2), make("g1", "foes", group="gobs"), make("g2", "foes", group="gobs")]
    )
    h.start(initiative=[15, 10])
    assert h.refused("set_group_order", group="gobs", members=["g2"]).code == "invalid_choice"
    assert h.refused("set_group_order", ALICE, group="gobs", members=["g2", "g1"]).code == "gm_only"
    h.send("set_group_order", group="gobs", members=["g2", "g1"])
    h.end_turn()
    assert h.state.active == "g2"


@pytest.mark.rule("encounter.txt:1.3", "encounter.txt:13.3")
def test_rule3_order_stays_the_same_from_round_to_round() -> None:
    h = EncounterHarness([make("aria", dex=1), make("bram", dex=2), make("gob", "foes")])
    h.start(initiative=[5, 18, 11])
    first = h.state.order()
    turns: list[str] = []
    for _ in range(9):
        assert h.state.active is not None
        turns.append(h.state.active)
        h.end_turn()
    assert turns == first * 3
    assert h.state.round == 4


@pytest.mark.rule("encounter.txt:13.3")
def test_rule3_a_creature_added_mid_encounter_rolls_and_is_slotted_in() -> None:
    h = EncounterHarness([make("aria", dex=0), make("gob", "foes", dex=0)])
    h.start(initiative=[18, 8])  # aria 18, gob 8
    ogre = {"id": "ogre", "name": "Ogre", "side": "foes", "dex_mod": -1, "hp": 59}
    h.rolls(13).send("add_creature", creature=ogre)  # 12: between aria and gob
    assert h.state.order() == ["aria", "ogre", "gob"]
    assert h.creature("ogre").zone == "field"
    h.end_turn()
    assert h.state.active == "ogre"  # it acts this very round, in its place
    h.end_turn()
    h.end_turn()
    assert (h.state.round, h.state.active) == (2, "aria")
    h.assert_replay_matches()


@pytest.mark.rule("encounter.txt:13.3")
def test_rule3_a_late_arrival_before_the_current_turn_waits_for_the_next_round() -> None:
    h = EncounterHarness([make("aria", dex=0), make("gob", "foes", dex=0)])
    h.start(initiative=[18, 8])
    h.end_turn()
    assert h.state.active == "gob"
    h.rolls(20).send("add_creature", creature={"id": "wolf", "name": "Wolf", "side": "foes"})
    assert h.state.order() == ["wolf", "aria", "gob"]
    assert h.state.active == "gob"
    h.end_turn()
    assert (h.state.round, h.state.active) == (2, "wolf")


# -- rule 4: ties ---------------------------------------------------------------------------------


@pytest.mark.rule("encounter.txt:14.2")
def test_rule4_pc_against_npc_the_higher_dexterity_modifier_goes_first() -> None:
    h = EncounterHarness([make("aria", dex=1), make("gob", "foes", dex=3)])
    h.start(initiative=[14, 12])  # both 15
    assert h.state.order() == ["gob", "aria"]
    assert h.state.pending == []
    assert h.events[-1] == TurnStarted("gob", 0, 0)


@pytest.mark.rule("encounter.txt:14.1")
def test_rule4_tied_gm_creatures_are_ordered_by_the_gm_while_play_goes_on() -> None:
    h = EncounterHarness([make("aria"), make("orc", "foes", dex=2), make("gob", "foes", dex=2)])
    h.start(initiative=[18, 10, 10])
    assert (h.state.phase, h.state.active) == ("turns", "aria")  # the fight does not wait
    (decision,) = h.state.pending
    assert (decision.kind, decision.controller) == ("initiative_tie", "gm")
    assert decision.options == decision.default == ("orc", "gob")
    assert h.state.order() == ["aria", "orc", "gob"]  # list order stands meanwhile
    assert h.refused("decide", ALICE, decision=decision.id, choice=["gob", "orc"]).code == (
        "not_your_decision"
    )
    assert h.refused("decide", decision=decision.id, choice=["gob"]).code == "invalid_choice"
    h.send("dash", ALICE, creature="aria")
    h.send("decide", decision=decision.id, choice=["gob", "orc"])
    assert h.state.order() == ["aria", "gob", "orc"]
    h.end_turn()
    assert h.state.active == "gob"
    h.assert_replay_matches()


@pytest.mark.rule("encounter.txt:14.1")
def test_rule4_a_ties_choice_closes_when_the_first_tied_creatures_turn_starts() -> None:
    h = EncounterHarness([make("aria"), make("orc", "foes", dex=2), make("gob", "foes", dex=2)])
    h.start(initiative=[18, 10, 10])
    (decision,) = h.state.pending
    events = h.end_turn()
    assert events[-2:] == (
        TurnStarted("orc", 1, 0),
        DecisionResolved(decision.id, ("orc", "gob"), "rules", True),
    )
    assert h.state.pending == []
    assert h.refused("decide", decision=decision.id, choice=["gob", "orc"]).code == (
        "unknown_decision"
    )
    assert h.state.order() == ["aria", "orc", "gob"]
    h.end_turn()
    h.end_turn()
    assert (h.state.round, h.state.active) == (2, "aria")
    h.assert_replay_matches()


@pytest.mark.rule("encounter.txt:14.1")
def test_rule4_a_tie_at_the_top_of_the_order_is_fixed_as_round_1_starts() -> None:
    h = EncounterHarness([make("orc", "foes", dex=2), make("gob", "foes", dex=2), make("aria")])
    h.start(initiative=[10, 10, 3])
    opened = h.of_type(DecisionOpened)[0].decision
    assert h.of_type(DecisionResolved) == [
        DecisionResolved(opened.id, ("orc", "gob"), "rules", True)
    ]
    assert (h.state.phase, h.state.active, h.state.pending) == ("turns", "orc", [])


@pytest.mark.rule("encounter.txt:14.1")
def test_rule4_tied_characters_of_one_player_are_ordered_by_that_player() -> None:
    h = EncounterHarness(
        [make("gob", "foes"), make("aria", controller="alice"), make("bram", controller="alice")]
    )
    h.start(initiative=[15, 9, 9])
    assert h.state.active == "gob"
    (decision,) = h.state.pending
    assert decision.controller == "alice"
    bob = EncounterHarness.player("bob")
    assert h.refused("decide", bob, decision=decision.id, choice=["bram", "aria"]).code == (
        "not_your_decision"
    )
    h.send(
        "decide", EncounterHarness.player("alice"), decision=decision.id, choice=["bram", "aria"]
    )
    assert h.state.order() == ["gob", "bram", "aria"]


@pytest.mark.rule("encounter.txt:14.1")
def test_rule4_an_unanswered_tie_keeps_list_order() -> None:
    h = EncounterHarness(
        [make("gob", "foes"), make("aria", controller="alice"), make("bram", controller="alice")]
    )
    h.start(initiative=[15, 9, 9])
    h.send("decision_timeout", decision=h.state.pending[0].id)
    assert h.state.order() == ["gob", "aria", "bram"]
    assert h.state.active == "gob"
    h.end_turn()
    assert h.state.active == "aria"


@pytest.mark.rule("encounter.txt:14.3")
def test_rule4_still_tied_roll_d20_highest_first_and_reroll_ties() -> None:
    # Two players' characters with the same total: a roll-off, tied once, then decided.
    h = EncounterHarness([make("aria", controller="alice"), make("bram", controller="bob")])
    h.start(initiative=[10, 10, 7, 7, 4, 16])
    (rolled,) = h.of_type(InitiativeRolled)
    assert [(r.contenders, r.rolls) for r in rolled.rolloffs] == [
        (("alice", "bob"), (7, 7)),
        (("alice", "bob"), (4, 16)),
    ]
    assert h.state.order() == ["bram", "aria"]


@pytest.mark.rule("encounter.txt:14.3")
def test_rule4_pc_and_npc_with_equal_dexterity_roll_off() -> None:
    h = EncounterHarness([make("aria", dex=2), make("gob", "foes", dex=2)])
    h.start(initiative=[10, 10, 3, 12])
    assert h.state.order() == ["gob", "aria"]


@pytest.mark.rule("encounter.txt:14.2")
def test_rule4_dexterity_outranks_a_players_own_choice_against_npcs() -> None:
    # aria(dex 4) and bram(dex 0) are alice's; orc (dex 2) sits between them by Dexterity.
    h = EncounterHarness(
        [
            make("aria", controller="alice", dex=4),
            make("bram", controller="alice", dex=0),
            make("orc", "foes", dex=2),
        ]
    )
    h.start(initiative=[6, 10, 8])  # all 10
    assert h.state.order() == ["aria", "orc", "bram"]
    assert h.state.pending == []


# -- rule 5: the turn -------------------------------------------------------------------------------


class Parry:
    """A test plugin: a reaction and a bonus action, to exercise those resources."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Iterable[CommandSpec]:
        creature = {"creature": Param("creature", True, "who")}
        return (
            CommandSpec(
                "parry",
                lambda ctx, cmd: None,
                "Reaction.",
                creature,
                costs=("reaction",),
                on_turn=None,
            ),
            CommandSpec(
                "quick_jab", lambda ctx, cmd: None, "Bonus action.", creature, costs=("bonus",)
            ),
        )


@pytest.mark.rule("encounter.txt:16.1", "encounter.txt:18.1")
def test_rule5_one_action_per_turn() -> None:
    h = duel()
    h.send("dash", creature="aria")
    assert h.refused("dodge", creature="aria").code == "no_action_left"
    assert h.refused("attack", creature="aria", target="gob").code == "no_action_left"


@pytest.mark.rule("encounter.txt:19.1")
def test_rule5_one_bonus_action_per_turn() -> None:
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes")], extra_plugins=[Parry])
    h.start(initiative=[15, 10])
    h.send("quick_jab", creature="aria")
    assert h.refused("quick_jab", creature="aria").code == "no_bonus_action_left"
    h.send("dash", creature="aria")  # the action is separate


@pytest.mark.rule("encounter.txt:17.1", "encounter.txt:23.1", "encounter.txt:26.1")
def test_rule5_movement_splits_around_the_action() -> None:
    h = duel()
    h.send("move", creature="aria", feet=10)
    h.rolls(2).send("attack", creature="aria", target="gob")  # a miss
    h.send("move", creature="aria", feet=20)
    assert left(h) == 0
    refusal = h.refused("move", creature="aria", feet=5)
    assert refusal.code == "not_enough_movement"
    assert refusal.message == "Moving 5 ft costs 5 ft; Aria has 0 ft left."


@pytest.mark.rule("encounter.txt:16.1")
def test_rule5_resources_refresh_each_turn() -> None:
    h = duel()
    h.send("dash", creature="aria")
    h.send("move", creature="aria", feet=45)
    h.end_turn()
    h.end_turn()
    assert left(h) == 30
    h.send("dash", creature="aria")


@pytest.mark.rule("encounter.txt:21.1")
def test_rule5_one_reaction_per_round_on_any_turn_refreshed_on_own_turn() -> None:
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes")], extra_plugins=[Parry])
    h.start(initiative=[15, 10])
    h.send("parry", creature="aria")  # on its own turn: a reaction may answer any trigger
    h.end_turn()
    assert h.refused("parry", creature="aria").code == "no_reaction_left"
    h.send("parry", creature="gob")  # the goblin reacts on its own turn too
    h.end_turn()  # the goblin's turn ends; round 2 starts with aria's turn
    assert h.state.active == "aria"
    h.send("parry", creature="aria")
    assert h.refused("parry", creature="aria").code == "no_reaction_left"


@pytest.mark.rule("encounter.txt:21.1")
@pytest.mark.rule("encounter.txt:21.1")
def test_rule5_a_mover_answers_the_opportunity_attack_it_provoked_with_its_reaction() -> None:
    h = EncounterHarness(
        [make("aria", zone="yard"), make("gob", "foes", zone="yard")],
        arena=mud_and_yard(),
        extra_plugins=[Parry],
    )
    h.start(initiative=[15, 10])
    h.rolls(2).send("attack", creature="aria", target="gob")  # a miss engages
    h.send("enter", creature="aria", zones=["mud"])
    (offer,) = h.state.pending
    assert (offer.kind, offer.creature) == ("opportunity_attack", "gob")
    assert h.refused("dash", creature="aria").code == "decision_pending"
    h.send("parry", creature="aria")  # its own reaction, on its own turn, mid-move
    assert not h.state.has_reaction("aria")
    h.send("decide", decision=offer.id, choice=["decline"])
    assert h.creature("aria").zone == "mud"


def test_rule5_a_readied_attack_can_be_released_on_its_owners_own_turn() -> None:
    h = duel()
    h.send("ready", creature="aria", target="gob", trigger="when it flinches")
    h.rolls(15, 3).send("release_readied", creature="aria")
    made = h.of_type(AttackMade)[-1]
    assert (made.attacker, made.target, made.reaction, made.hit) == ("aria", "gob", True, True)
    assert h.creature("gob").hp == 10 - 5
    assert not h.state.has_reaction("aria")


def test_rule5_players_act_only_for_their_own_creatures_and_in_turn() -> None:
    h = duel()
    bob = EncounterHarness.player("bob")
    assert h.refused("dash", bob, creature="aria").code == "not_your_creature"
    assert h.refused("dash", ALICE, creature="gob").code == "not_your_creature"
    h.send("dash", ALICE, creature="aria")
    h.end_turn()
    assert h.refused("move", ALICE, creature="aria", feet=5).code == "not_your_turn"


@pytest.mark.rule("encounter.txt:21.1")
def test_rule5_readied_attack_is_released_with_the_reaction() -> None:
    h = duel()
    h.send("ready", creature="aria", target="gob", trigger="when it moves")
    h.end_turn()
    h.rolls(15, 3).send("release_readied", creature="aria")
    made = h.of_type(AttackMade)[-1]
    assert (made.attacker, made.reaction, made.hit) == ("aria", True, True)
    assert h.creature("gob").hp == 10 - 5
    assert h.refused("release_readied", creature="aria").code == "nothing_readied"


# -- rule 6: movement modes, one budget -------------------------------------------------------------


@pytest.mark.rule("encounter.txt:23.2")
def test_rule6_a_turn_may_end_without_moving() -> None:
    h = duel()
    events = h.end_turn()
    assert [type(e) for e in events] == [TurnEnded, TurnStarted]
    assert events[-1] == TurnStarted("gob", 1, 0)
    assert not h.of_type(Moved)


@pytest.mark.rule("encounter.txt:24.1", "encounter.txt:24.2", "encounter.txt:24.3")
def test_rule6_modes_draw_on_one_budget() -> None:
    h = duel()
    h.send("move", creature="aria", feet=10)
    h.send("move", creature="aria", feet=5, mode="jump")
    h.send("move", creature="aria", feet=5, mode="climb")  # no climb speed: costs 10
    assert left(h) == 5
    ev = h.events[-1]
    assert isinstance(ev, Moved) and (ev.cost, ev.extra) == (10, ("climb without a climb speed",))


@pytest.mark.rule("encounter.txt:24.3")
def test_rule6_climbing_or_swimming_with_the_speed_costs_normal() -> None:
    h = EncounterHarness([make("aria", dex=3, speeds={"climb": 30, "swim": 20})])
    h.start(initiative=[10])
    h.send("move", creature="aria", feet=10, mode="climb")
    assert left(h, "climb") == 20
    assert left(h, "swim") == 10  # swimming is bounded by its own speed, less what was spent
    refusal = h.refused("move", creature="aria", feet=15, mode="swim")
    assert refusal.code == "not_enough_movement"


def test_rule6_flying_needs_a_fly_speed() -> None:
    h = duel()
    refusal = h.refused("move", creature="aria", feet=5, mode="fly")
    assert (refusal.code, refusal.message) == ("cannot_move", "Aria has no flying speed.")


@pytest.mark.rule("encounter.txt:29.1", "encounter.txt:30.2")
def test_rule6_difficult_terrain_costs_one_extra_foot_and_never_stacks() -> None:
    h = EncounterHarness(
        [make("aria", dex=3, zone="mud"), make("gob", "foes", size=Size.TINY, zone="mud")],
        arena=mud_and_yard(),
    )
    h.start(initiative=[15, 10])
    # The arena says the mud is difficult: the client sends no flag for it.
    h.send("move", creature="aria", feet=5)
    assert left(h) == 20
    assert h.events[-1] == Moved("aria", 5, "walk", 10, ("difficult",))
    # Difficult ground *and* an enemy's space (also difficult): still one extra foot per foot.
    h.send("move", creature="aria", feet=5, through=["gob"])
    assert left(h) == 10
    assert h.events[-1] == Moved("aria", 5, "walk", 10, ("difficult",), ("gob",))


# -- rule 7: prone -----------------------------------------------------------------------------------


@pytest.mark.rule("encounter.txt:32.1")
def test_rule7_dropping_prone_is_free() -> None:
    h = duel()
    h.send("drop_prone", creature="aria")
    assert h.creature("aria").has("prone")
    assert left(h) == 30
    assert h.refused("drop_prone", creature="aria").code == "already_prone"


@pytest.mark.rule("encounter.txt:32.2")
def test_rule7_standing_costs_half_speed() -> None:
    h = duel()
    h.send("drop_prone", creature="aria")
    events = h.send("stand", creature="aria")
    assert events[0] == MovementSpent("aria", 15, "stand up")
    assert left(h) == 15
    assert not h.creature("aria").has("prone")
    assert h.refused("stand", creature="aria").code == "not_prone"


@pytest.mark.rule("encounter.txt:32.4")
def test_rule7_cannot_stand_without_enough_movement_left() -> None:
    h = duel()
    h.send("move", creature="aria", feet=20)
    h.send("drop_prone", creature="aria")
    refusal = h.refused("stand", creature="aria")
    assert refusal.code == "not_enough_movement"
    assert refusal.message == "Standing up costs 15 ft (half of 30 ft); Aria has 10 ft left."


@pytest.mark.rule("encounter.txt:32.1", "encounter.txt:32.4")
def test_rule7_speed_zero_can_neither_drop_prone_nor_stand() -> None:
    h = EncounterHarness([make("aria", speed=0)])
    h.start(initiative=[10])
    assert h.refused("drop_prone", creature="aria").code == "speed_zero"
    h.send("grant_condition", creature="aria", condition="prone")
    assert h.refused("stand", creature="aria").code == "speed_zero"


@pytest.mark.rule("encounter.txt:33.1", "encounter.txt:33.2", "encounter.txt:33.3")
def test_rule7_crawling_costs_double_and_triple_in_difficult_terrain() -> None:
    h = yard_duel()
    h.send("drop_prone", creature="aria")
    h.send("move", creature="aria", feet=5, mode="crawl")
    assert left(h) == 20
    h.send("move_to_zone", creature="aria", zone="mud")  # difficult ground
    h.send("move", creature="aria", feet=5, mode="crawl")
    assert left(h) == 5
    assert h.events[-1] == Moved("aria", 5, "crawl", 15, ("crawling", "difficult"))
    assert h.refused("move", creature="aria", feet=5, mode="climb").code == "cannot_move"


# -- rule 8: moving around other creatures ---------------------------------------------------------


def crowd() -> EncounterHarness:
    h = EncounterHarness(
        [
            make("aria", dex=5),
            make("bram"),
            make("orc", "foes"),
            make("imp", "foes", size=Size.TINY),
            make("giant", "foes", size=Size.HUGE),
            make("zombie", "foes", hp=1),
        ]
    )
    h.start(initiative=[20, 2, 3, 4, 5, 6])
    assert h.state.active == "aria"
    return h


@pytest.mark.rule("encounter.txt:35.1")
def test_rule8_moving_through_an_ally_or_an_incapacitated_creature() -> None:
    h = crowd()
    h.send("move", creature="aria", feet=5, through=["bram"])
    assert left(h) == 25
    h.send("grant_condition", creature="zombie", condition="incapacitated")
    h.send("move", creature="aria", feet=5, through=["zombie"])
    assert left(h) == 20  # an incapacitated enemy's space is not difficult


@pytest.mark.rule("encounter.txt:30.2", "encounter.txt:35.2")
def test_rule8_an_enemy_blocks_unless_two_sizes_apart() -> None:
    h = crowd()
    refusal = h.refused("move", creature="aria", feet=5, through=["orc"])
    assert refusal.code == "blocked_by_creature"
    assert "two sizes apart" in refusal.message
    h.send("move", creature="aria", feet=5, through=["imp"])  # Tiny vs Medium
    h.send("move", creature="aria", feet=5, through=["giant"])  # Huge vs Medium
    assert left(h) == 10  # each enemy space is difficult terrain


@pytest.mark.rule("encounter.txt:36.1")
def test_rule8_no_willingly_ending_a_move_in_an_occupied_space() -> None:
    h = crowd()
    refusal = h.refused("move", creature="aria", feet=5, end_in="bram")
    assert refusal.code == "occupied_space"


@pytest.mark.rule("encounter.txt:36.2")
@pytest.mark.parametrize(
    ("size", "falls"),
    [(Size.MEDIUM, True), (Size.SMALL, True), (Size.LARGE, False), (Size.TINY, False)],
)
def test_rule8_ending_a_turn_in_another_creatures_space(size: Size, falls: bool) -> None:
    h = EncounterHarness([make("aria", dex=5, size=size), make("orc", "foes")])
    h.start(initiative=[20, 1])
    h.send("override", creature="aria", field="sharing_with", value="orc")
    events = h.end_turn()
    fell = ConditionApplied("aria", "prone", "ended its turn in an occupied space")
    assert (fell in events) is falls
    assert h.creature("aria").has("prone") is falls


# -- rule 9: size and space -------------------------------------------------------------------------


@pytest.mark.rule(
    "encounter.txt:56.2",
    "encounter.txt:56.3",
    "encounter.txt:57.1",
    "encounter.txt:58.1",
    "encounter.txt:58.2",
)
def test_rule9_how_many_can_surround_a_creature() -> None:
    assert max_surrounding(Size.MEDIUM, Size.MEDIUM) == 8
    assert max_surrounding(Size.MEDIUM, Size.LARGE) == 4
    assert max_surrounding(Size.GARGANTUAN, Size.MEDIUM) == 20
    assert max_surrounding(Size.LARGE, Size.MEDIUM) == 12
    assert can_surround(Size.MEDIUM, [Size.LARGE] * 4)
    assert not can_surround(Size.MEDIUM, [Size.LARGE] * 4 + [Size.SMALL])


@pytest.mark.rule(
    "encounter.txt:43.1",
    "encounter.txt:45.1",
    "encounter.txt:47.1",
    "encounter.txt:49.1",
    "encounter.txt:51.1",
    "encounter.txt:53.1",
)
def test_rule9_space_by_size() -> None:
    assert [s.space for s in Size][:6] == [2.5, 5.0, 5.0, 10.0, 15.0, 20.0]
    assert can_pass_through(Size.MEDIUM, Size.TINY)
    assert not can_pass_through(Size.MEDIUM, Size.LARGE)
    assert can_pass_through(Size.SMALL, Size.LARGE)
    assert Size.parse("gargantuan") is Size.GARGANTUAN
    with pytest.raises(ValueError, match="unknown size 'Enormous'"):
        Size.parse("Enormous")


# -- rule 10: squeezing --------------------------------------------------------------------------------


@pytest.mark.rule("encounter.txt:60.3")
def test_rule10_squeezing_costs_an_extra_foot_per_foot() -> None:
    h = yard_duel()
    # Squeezing is the state's to say (a crowded zone, or the GM), never a client flag.
    h.send("grant_condition", creature="aria", condition="squeezing")
    h.send("move", creature="aria", feet=5)
    assert left(h) == 20
    assert h.events[-1] == Moved("aria", 5, "walk", 10, ("squeezing",))
    h.send("move_to_zone", creature="aria", zone="mud")  # (leaving the yard ends it)
    h.send("grant_condition", creature="aria", condition="squeezing")
    h.send("move", creature="aria", feet=5)
    assert left(h) == 5  # 3 ft per foot: squeezing and difficult both apply
    h.send("remove_condition", creature="aria", condition="squeezing")
    h.send("move", creature="aria", feet=2)
    assert h.events[-1] == Moved("aria", 2, "walk", 4, ("difficult",))  # the mud alone
    assert left(h) == 1


@pytest.mark.rule("encounter.txt:60.3")
def test_rule10_a_squeezing_creature_attacks_with_disadvantage() -> None:
    h = duel()
    h.send("grant_condition", creature="aria", condition="squeezing")
    h.rolls(18, 3).send("attack", creature="aria", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert made.roll.advantage == "disadvantage"
    assert made.roll.kept == (3,)
    assert not made.hit


@pytest.mark.rule("encounter.txt:60.4")
def test_rule10_attacks_against_a_squeezing_creature_have_advantage() -> None:
    h = duel()
    h.send("grant_condition", creature="gob", condition="squeezing")
    h.rolls(3, 18, 2).send("attack", creature="aria", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert (made.roll.advantage, made.roll.kept, made.hit) == ("advantage", (18,), True)


@pytest.mark.rule("encounter.txt:60.3")
def test_rule10_a_squeezing_creature_has_disadvantage_on_dexterity_saves() -> None:
    h = duel()
    h.send("grant_condition", creature="aria", condition="squeezing")
    ctx = h.engine.context(h.state, h.rolls(17, 4).dice)
    result = ctx.roll("d20", RollRequest("save", "aria", ability="dex"), bonus=2)
    assert (result.advantage, result.total) == ("disadvantage", 6)
    h.rolls(9)
    strength = ctx.roll("d20", RollRequest("save", "aria", ability="str"))
    assert (strength.advantage, strength.total) == ("none", 9)


# -- rule 11: interaction ------------------------------------------------------------------------------


@pytest.mark.rule(
    "encounter.txt:20.1", "encounter.txt:62.1", "encounter.txt:67.1", "encounter.txt:67.3"
)
def test_rule11_one_object_with_the_interaction_a_second_costs_the_action() -> None:
    h = duel()
    h.send("interact", creature="aria", object="door")
    h.send("interact", creature="aria", object="potion")
    via = [e.via for e in h.of_type(Interacted)]
    assert via == ["interaction", "action"]
    assert h.state.resources.actions == 0
    assert h.refused("interact", creature="aria", object="lever").code == "no_action_left"


@pytest.mark.rule("encounter.txt:62.1", "encounter.txt:64.1", "encounter.txt:64.3")
def test_rule11_communication_is_the_interaction_and_brief() -> None:
    h = duel()
    long = " ".join(["word"] * 16)
    refusal = h.refused("communicate", creature="aria", text=long)
    assert refusal.code == "invalid_params"
    assert refusal.message == (
        "A brief communication is at most 15 words (16 given); longer speech needs the "
        "Influence action."
    )
    h.send("communicate", creature="aria", text="Hold the door!")
    assert h.refused("communicate", creature="aria", text="Now!").code == "no_interaction_left"


# -- rule 12: ending ------------------------------------------------------------------------------------


@pytest.mark.rule("encounter.txt:72.1")
def test_rule12_a_dying_creature_keeps_the_encounter_going() -> None:
    h = EncounterHarness(
        [make("aria", dex=3, hp=4), make("bram", hp=30), make("gob", "foes", hp=5)]
    )
    h.start(initiative=[1, 2, 20])
    assert h.state.active == "gob"
    h.rolls(15, 6).send("attack", creature="gob", target="aria")  # 8 damage
    assert h.creature("aria").has("dying")
    h.end_turn()
    h.end_turn()  # aria (dying) ends her turn
    # Two against one: the goblin is flanked, so bram rolls two d20s (20 and 1).
    h.rolls(20, 1, 1, 1).send("attack", creature="bram", target="gob")  # crit, 4 damage: 1 left
    assert h.creature("gob").hp == 1
    h.send("override", creature="gob", field="hp", value=0)
    h.send("grant_condition", creature="gob", condition="defeated")
    assert h.state.phase == "turns"  # the goblins are beaten but aria is dying
    refusal = h.refused("end_encounter")
    assert refusal.code == "threat_remains"
    assert "Aria is dying" in refusal.message
    h.send("stabilize", creature="aria")
    assert h.state.phase == "ended"
    h.assert_replay_matches()


@pytest.mark.rule("encounter.txt:73.1")
def test_rule12_a_time_sensitive_hazard_keeps_the_encounter_going() -> None:
    h = duel()
    h.send("add_hazard", id="lava", name="Rising lava")
    h.rolls(20, 6, 6).send("attack", creature="aria", target="gob")
    assert h.creature("gob").has("defeated")
    assert h.state.phase == "turns"
    assert "Rising lava" in h.refused("end_encounter").message
    events = h.send("remove_hazard", id="lava")
    assert h.state.phase == "ended"  # the rules check after every command
    assert isinstance(events[-1], EncounterEnded)


@pytest.mark.rule("encounter.txt:71.4")
def test_rule12_the_gm_can_end_it_anyway_or_keep_it_going() -> None:
    h = duel()
    h.send("add_hazard", id="lava", name="Rising lava")
    h.send("end_encounter", force=True, reason="we stop here")
    assert h.events[-1] == EncounterEnded("we stop here", "gm")

    h = duel()
    h.send("continue_encounter")
    h.rolls(20, 6, 6).send("attack", creature="aria", target="gob")
    assert h.state.phase == "turns"
    h.end_turn()
    assert h.state.active == "aria"  # the defeated goblin's turn is skipped
    h.send("end_encounter")
    assert h.state.phase == "ended"


@pytest.mark.rule("encounter.txt:71.4")
def test_rule12_only_the_gm_ends_the_encounter() -> None:
    h = duel()
    assert h.refused("end_encounter", ALICE).code == "gm_only"


# -- attacks (for later rules to modify) --------------------------------------------------------------


def test_attack_hits_on_total_equal_to_ac_and_deals_damage() -> None:
    h = duel()
    h.rolls(8, 3).send("attack", creature="aria", target="gob")  # 8+4 = 12 vs AC 12
    made, damaged = h.events[-2:]
    assert isinstance(made, AttackMade) and made.hit and made.roll.total == 12
    assert isinstance(damaged, Damaged) and (damaged.amount, damaged.hp) == (5, 5)


def test_attack_natural_one_misses_and_natural_twenty_doubles_the_dice() -> None:
    h = duel()
    h.send("override", creature="gob", field="ac", value=1)
    h.rolls(1).send("attack", creature="aria", target="gob")
    assert not h.of_type(AttackMade)[-1].hit
    h.end_turn()
    h.rolls(20, 4, 5).send("attack", creature="gob", target="aria")
    dmg = h.of_type(Damaged)[-1]
    assert dmg.roll is not None
    assert (dmg.amount, dmg.roll.dice) == (11, (4, 5))


def test_attack_refusals() -> None:
    h = duel()
    assert h.refused("attack", creature="aria", target="aria").code == "invalid_target"
    assert h.refused("attack", creature="aria", target="nobody").code == "unknown_creature"
    assert h.refused("attack", creature="aria", target="gob", attack="axe").code == "unknown_attack"


@pytest.mark.rule("encounter.txt:72.1")
def test_npc_at_zero_is_defeated_pc_is_dying() -> None:
    h = EncounterHarness([make("aria", hp=3), make("gob", "foes", hp=3)])
    h.start(initiative=[20, 1])
    h.rolls(15, 6).send("attack", creature="aria", target="gob")
    assert h.creature("gob").has("defeated") and h.creature("gob").hp == 0


# -- commands in general ---------------------------------------------------------------------------------


def test_unknown_commands_and_bad_params_are_refused_clearly() -> None:
    h = duel()
    assert h.refused("fly_away", creature="aria").code == "unknown_command"
    r = h.refused("move", creature="aria", feet="ten")
    assert (r.code, r.message) == (
        "invalid_params",
        "'move' parameter 'feet' must be a whole number, not text.",
    )
    r = h.refused("move", creature="aria", feet=True)
    assert r.code == "invalid_params"
    r = h.refused("move", creature="aria", feet=5, speed=10)
    assert "does not take the parameter(s) speed" in r.message
    assert h.refused("move", creature="aria").message == "'move' needs the parameter 'feet'."
    spectator = EncounterHarness.player("x")
    assert h.refused("dash", type(spectator)("spectator", "x"), creature="aria").code == (
        "not_your_creature"
    )


def test_available_actions_follow_the_rules() -> None:
    h = surprised_duel()
    assert h.engine.available_actions(h.state, "aria", ALICE) == ["end_turn", "drop_prone"]
    h.end_turn()
    assert h.engine.available_actions(h.state, "aria", ALICE) == []
    gob = h.engine.available_actions(h.state, "gob", h.gm)
    assert {"attack", "dash", "move", "end_turn"} <= set(gob)


def test_a_second_plugin_declaring_the_same_command_is_refused_naming_both() -> None:
    from zonekeep.sdk.engine import Engine, PluginConflict

    class Dup:
        @staticmethod
        @hookimpl
        def zonekeep_commands() -> Iterable[CommandSpec]:
            return (CommandSpec("dash", lambda c, m: None, "Another dash."),)

    with pytest.raises(PluginConflict, match="'dash' is declared by both plugin"):
        from zonekeep.plugins import load_default_plugins

        Engine([*load_default_plugins(), Dup()])


def test_refused_command_inside_a_handler_leaves_no_trace() -> None:
    # The attack rolls dice and spends the action before the target check fails.
    h = duel()
    h.refused("attack", creature="aria", target="aria")
    assert h.state.resources.actions == 1


def test_decision_opened_event_carries_the_prompt() -> None:
    h = EncounterHarness([make("orc", "foes"), make("gob", "foes")])
    h.start(initiative=[10, 10])
    opened = h.of_type(DecisionOpened)[0]
    assert opened.decision.prompt == "Orc, Gob tied at 10 on initiative: choose their order."


def test_an_optional_parameter_sent_as_null_means_left_out() -> None:
    h = EncounterHarness([make("aria", dex=3), make("gob", "foes")])
    h.send("set_surprise", surprised=None)
    h.send("place", positions=None)
    h.rolls(15, 10).send("roll_initiative")
    h.send("move", creature="aria", feet=5, mode=None, through=None)
    assert h.refused("move", creature="aria", feet=None).message == (
        "'move' needs the parameter 'feet'."
    )
