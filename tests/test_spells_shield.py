"""Shield (issue 31): a reaction spell, offered to the caster's controller as a prompt when
an attack would hit; taken, it spends a slot and the caster's reaction and gives +5 AC
until the start of its next turn, against the triggering attack too. Seraphine (AC 12,
four level-1 slots at level 5) against two goblins (blade +4)."""

from __future__ import annotations

import attrs
from helpers import make
from test_spells import keep, wizard

from zonekeep.plugins.spells import SHIELD, SHIELDED
from zonekeep.sdk import (
    ActionTaken,
    AttackMade,
    ConditionEffectApplied,
    ConditionEffectEnded,
    Creature,
    EncounterOptions,
    ResourceSpent,
)
from zonekeep.sdk.testing import EncounterHarness


def fight(caster: Creature, *others: Creature) -> EncounterHarness:
    """Everyone in the hall, the caster first; flanking off, so that every attack roll
    here is one d20."""
    h = EncounterHarness([caster, *others], arena=keep(), options=EncounterOptions(flanking=False))
    where = {c.id: "hall" for c in (caster, *others)}
    h.start(positions=where, initiative=[20, *range(10, 10 - len(others), -1)])
    return h


def duel() -> EncounterHarness:
    """Seraphine first, then the goblins; her turn is over, the first goblin's begins."""
    h = fight(wizard(), make("gob", "foes"), make("gob2", "foes"))
    h.end_turn()
    assert h.state.active == "gob"
    return h


def made(events: tuple[object, ...]) -> list[tuple[int, int, bool]]:
    return [(e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)]


def test_shield_is_offered_when_a_hit_lands_and_taken_turns_it_into_a_miss() -> None:
    h = duel()
    # 9 + 4 = 13 would hit AC 12: Seraphine's player is asked; the attack waits.
    events = h.rolls(9).send("attack", creature="gob", target="sera", attack="blade")
    assert made(events) == []
    offered = h.decision(SHIELD)
    assert (offered.controller, offered.creature, offered.options, offered.default) == (
        "player-sera",
        "sera",
        (SHIELD, "decline"),
        ("decline",),
    )
    assert "13 against AC 12" in offered.prompt and "making this attack miss" in offered.prompt
    events = h.decide(SHIELD, h.player("player-sera"))
    assert [(e.creature, e.action, e.cost) for e in events if isinstance(e, ActionTaken)] == [
        ("sera", SHIELD, "reaction")
    ]
    assert [(e.creature, e.resource, e.left) for e in events if isinstance(e, ResourceSpent)] == [
        ("sera", "spell-slots-1", 3)
    ]
    assert [e.effect.condition for e in events if isinstance(e, ConditionEffectApplied)] == [
        SHIELDED
    ]
    assert made(events) == [(13, 17, False)]
    assert h.creature("sera").hp == h.creature("sera").max_hp
    h.end_turn()
    # The second goblin, the same round: AC 17 still holds; 12 + 4 = 16 misses, and
    # nothing is offered (her reaction is spent).
    events = h.rolls(12).send("attack", creature="gob2", target="sera", attack="blade")
    assert made(events) == [(16, 17, False)] and h.state.pending == []
    # 13 + 4 = 17 meets AC 17: a hit.
    h.end_turn()
    # Her turn starts: the barrier is gone.
    assert h.state.active == "sera"
    assert SHIELDED not in h.creature("sera").conditions
    ended = h.of_type(ConditionEffectEnded)
    assert [e.condition for e in ended] == [SHIELDED]
    h.assert_replay_matches()


def test_a_total_that_beats_ac_plus_5_still_hits_and_the_prompt_says_so() -> None:
    h = duel()
    h.rolls(19).send("attack", creature="gob", target="sera", attack="blade")
    offered = h.decision(SHIELD)
    assert "23 against AC 12" in offered.prompt and "still hits" in offered.prompt
    events = h.rolls(2).decide(SHIELD, h.player("player-sera"))
    assert made(events) == [(23, 17, True)]
    assert h.creature("sera").hp == h.creature("sera").max_hp - 4  # 2 + 2 slashing


def test_declined_shield_spends_nothing_and_the_hit_lands() -> None:
    h = duel()
    h.rolls(9).send("attack", creature="gob", target="sera", attack="blade")
    events = h.rolls(2).decide("decline", h.player("player-sera"))
    assert made(events) == [(13, 12, True)]
    assert h.creature("sera").hp == h.creature("sera").max_hp - 4
    assert h.creature("sera").resources["spell-slots-1"] == 4
    assert h.state.has_reaction("sera") and SHIELDED not in h.creature("sera").conditions


def test_shield_is_never_cast_as_an_action_nor_offered_without_a_slot() -> None:
    h = fight(wizard(), make("gob", "foes"))
    refusal = h.refused("cast", h.player("player-sera"), creature="sera", spell="shield")
    assert refusal.code == "invalid_params" and "reaction" in refusal.message
    # No slot of any level left: no prompt, the hit lands.
    spent = wizard(level=5)
    slots = {key: 0 for key in spent.resources if key.startswith("spell-slots-")}
    h = fight(attrs.evolve(spent, resources={**spent.resources, **slots}), make("gob", "foes"))
    h.end_turn()
    events = h.rolls(9, 2).send("attack", creature="gob", target="sera", attack="blade")
    assert made(events) == [(13, 12, True)] and h.state.pending == []
