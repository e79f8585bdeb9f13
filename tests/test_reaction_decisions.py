"""The SDK's reaction decisions (zonekeep.sdk: ``offer_reaction``,
``zonekeep_attack_reactions``, ``zonekeep_reaction_taken``), on the test harness with
throwaway plugins: a Shield (+5 AC when hit), a Ward (anyone in the zone may be offered
a reaction to stop an attack) and a Swap (the target chooses a new target)."""

from __future__ import annotations

from typing import Any

from arena_fixture import arena, harness
from helpers import make

from zonekeep.sdk import (
    ActionTaken,
    AttackMade,
    AttackTrigger,
    Creature,
    Decision,
    DecisionOpened,
    EncounterOptions,
    ReactionOffer,
    ReactionOutcome,
    RuleContext,
    hookimpl,
)
from zonekeep.sdk.host import event_from_dict, event_to_dict
from zonekeep.sdk.testing import EncounterHarness

OPTIONS = EncounterOptions(flanking=False)


class Shield:
    """Aria may cast Shield when an attack roll would hit her: +5 AC against it."""

    @staticmethod
    @hookimpl
    def zonekeep_attack_reactions(
        ctx: RuleContext,
        attacker: Creature,
        target: Creature,
        attack: Any,
        moment: str,
        total: int | None,
        ac: int | None,
    ) -> Any:
        if moment == "hit" and target.id == "aria":
            return [ReactionOffer("aria", "shield", f"Shield? ({total} vs AC {ac})", ("cast",))]
        return None

    @staticmethod
    @hookimpl
    def zonekeep_reaction_taken(ctx: RuleContext, decision: Decision, choice: Any) -> Any:
        if decision.kind != "shield":
            return None
        ctx.emit(ActionTaken("aria", "shield", "reaction"))
        return ReactionOutcome(ac_bonus=5)


class Ward:
    """Bram, in the zone, may stop any attack on Aria before it is rolled."""

    @staticmethod
    @hookimpl
    def zonekeep_attack_reactions(
        ctx: RuleContext,
        attacker: Creature,
        target: Creature,
        attack: Any,
        moment: str,
        total: int | None,
        ac: int | None,
    ) -> Any:
        if moment == "targeted" and target.id == "aria":
            return [ReactionOffer("bram", "ward", "Ward Aria?", ("ward",))]
        return None

    @staticmethod
    @hookimpl
    def zonekeep_reaction_taken(ctx: RuleContext, decision: Decision, choice: Any) -> Any:
        if decision.kind != "ward":
            return None
        ctx.emit(ActionTaken("bram", "ward", "reaction"))
        return ReactionOutcome(cancel=True)


def table(*plugins: object) -> EncounterHarness:
    """A goblin (+4, 1d6+2) acts first against Aria (AC 12) and
    Bram, all in the hall."""
    creatures = [make("gob", "foes"), make("aria"), make("bram")]
    return harness(
        creatures,
        {"gob": "hall", "aria": "hall", "bram": "hall"},
        [20, 10, 5],
        options=OPTIONS,
        extra_plugins=list(plugins),
    )


def made(events: tuple[object, ...]) -> list[tuple[str, int, int, bool]]:
    return [
        (e.target, e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)
    ]


def test_a_reaction_offered_at_the_hit_is_a_decision_and_the_attack_waits_for_it() -> None:
    h = table(Shield())
    events = h.rolls(10).send("attack", creature="gob", target="aria")
    assert made(events) == []  # 14 would hit AC 12: the attack waits
    (opened,) = [e.decision for e in events if isinstance(e, DecisionOpened)]
    assert (opened.kind, opened.controller, opened.creature) == ("shield", "player-aria", "aria")
    assert (opened.options, opened.default) == (("cast", "decline"), ("decline",))
    trigger = AttackTrigger.from_data(opened.trigger or {})
    assert trigger is not None
    assert (trigger.attacker, trigger.target, trigger.moment, trigger.asked) == (
        "gob",
        "aria",
        "hit",
        ("aria",),
    )
    assert trigger.roll is not None and (trigger.roll.total, trigger.ac) == (14, 12)
    # The decision's trigger survives the wire (the log, a restart).
    again = event_from_dict(event_to_dict(events[-1]))
    assert isinstance(again, DecisionOpened) and again.decision == opened
    # Everyone waits; a player answers for her creature.
    assert h.refused("end_turn", creature="gob").code == "decision_pending"
    events = h.decide("cast", h.player("player-aria"))
    assert [e for e in events if isinstance(e, ActionTaken)] == [
        ActionTaken("aria", "shield", "reaction")
    ]
    assert made(events) == [("aria", 14, 17, False)]
    assert h.state.pending == [] and h.creature("aria").hp == 20
    # The roll's die is recorded once (in the decision), the log replays.
    h.assert_replay_matches()
    assert not h.state.has_reaction("aria")


def test_a_natural_20_or_a_miss_offers_nothing() -> None:
    h = table(Shield())
    events = h.rolls(20, 3, 3).send("attack", creature="gob", target="aria")
    assert made(events) == [("aria", 24, 12, True)] and h.state.pending == []
    h.end_turn()
    h.end_turn()
    h.end_turn()
    events = h.rolls(2).send("attack", creature="gob", target="aria")
    assert made(events) == [("aria", 6, 12, False)] and h.state.pending == []


def test_the_deadline_declines_and_the_hit_lands() -> None:
    h = table(Shield())
    h.rolls(10).send("attack", creature="gob", target="aria")
    events = h.rolls(3).time_out("shield")
    assert made(events) == [("aria", 14, 12, True)]
    assert h.creature("aria").hp == 20 - 5 and h.state.has_reaction("aria")


def test_offers_are_asked_one_after_the_other_and_a_taken_one_can_cancel_the_attack() -> None:
    h = table(Shield(), Ward())
    # Targeted: Bram's Ward first. Declined, the roll comes, then Aria's Shield.
    events = h.send("attack", creature="gob", target="aria")
    assert made(events) == [] and h.decision().kind == "ward"
    assert h.decision().controller == "player-bram"
    h.rolls(10).decide("decline")
    assert h.decision().kind == "shield"
    events = h.rolls(3).decide("decline")
    assert made(events) == [("aria", 14, 12, True)]
    h.end_turn()
    h.end_turn()
    h.end_turn()
    # Taken, the Ward stops the attack: no die, no attack_made, the goblin's action spent.
    h.send("attack", creature="gob", target="aria")
    events = h.decide("ward")
    assert made(events) == [] and h.state.pending == []
    assert ActionTaken("bram", "ward", "reaction") in events
    assert h.state.resources.actions == 0


def test_an_opportunity_attack_waits_for_the_reaction_and_then_the_move_goes_on() -> None:
    h = EncounterHarness(
        [make("aria"), make("gob", "foes")],
        arena=arena(),
        options=OPTIONS,
        extra_plugins=[Shield()],
    )
    h.start(positions={"aria": "hall", "gob": "hall"}, initiative=[5, 15])
    h.rolls(2).send("attack", creature="gob", target="aria")  # a miss engages
    h.end_turn()
    h.send("enter", creature="aria", zones=["yard"])
    h.rolls(10).decide("attack")  # the goblin's opportunity attack: 14 would hit
    assert h.decision().kind == "shield"
    assert h.creature("aria").zone == "hall"  # the move waits for the reaction too
    events = h.decide("cast", h.player("player-aria"))
    assert made(events) == [("aria", 14, 17, False)]
    assert h.creature("aria").zone == "yard"
    h.assert_replay_matches()


def test_an_attacker_dropped_by_the_gm_while_waiting_makes_no_attack() -> None:
    h = harness(
        [make("gob", "foes"), make("aria"), make("orc", "foes")],
        {"gob": "hall", "aria": "hall", "orc": "hall"},
        [20, 10, 5],
        options=OPTIONS,
        extra_plugins=[Shield()],
    )
    h.rolls(10).send("attack", creature="gob", target="aria")
    h.send("damage", creature="gob", amount=20)  # the GM: the goblin is defeated meanwhile
    assert "defeated" in h.creature("gob").conditions
    events = h.time_out("shield")
    assert made(events) == [] and h.state.pending == []
    assert h.creature("aria").hp == 20
