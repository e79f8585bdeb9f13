"""The SRD creatures' features the ``zonekeep.srd`` plugin implements, each tested from
its stat block (SRD 5.1): the wolf's Pack Tactics and Keen Hearing and Smell, the
goblin's Nimble Escape.

- Pack Tactics: advantage on an attack roll against a creature when at least one of the
  wolf's allies is engaged with it (the zone rules' "within 5 feet") and is not
  incapacitated.
- Keen Hearing and Smell: advantage on Wisdom (Perception) checks that rely on hearing
  or smell; a creature that has lost every keen sense (deafened, for hearing; smell is
  never lost) still has it for smell.
- Nimble Escape: the goblin takes the Disengage (or Hide) action as a bonus action on
  each of its turns; the rules have no hiding yet, so Hide is refused as the GM's.
"""

from __future__ import annotations

from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    GM_ACTOR,
    ActionTaken,
    AttackMade,
    Creature,
    Disengaged,
    EncounterOptions,
    RollRequest,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name})
    return made


def wolf(name: str) -> Creature:
    return srd("wolf", name)


def pack() -> EncounterHarness:
    """Akela, then Raksha (two wolves), then Aria (AC 12), all in the hall; flanking off,
    so that the only advantage is the pack's."""
    return harness(
        [wolf("Akela"), wolf("Raksha"), make("aria", ac=12)],
        {"akela-1": "hall", "raksha-1": "hall", "aria": "hall"},
        [20, 15, 10],
        options=EncounterOptions(flanking=False),
    )


def bite(h: EncounterHarness, wolf_id: str, *d20: int) -> AttackMade:
    events = h.rolls(*d20).send("attack", creature=wolf_id, target="aria", attack="bite")
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    return made


def test_the_wolf_data_names_pack_tactics_and_keen_senses() -> None:
    w = wolf("Akela")
    assert [(t.id, t.params) for t in w.traits] == [
        ("keen-senses", {"senses": ["hearing", "smell"]}),
        ("pack-tactics", {}),
    ]


def test_pack_tactics_gives_advantage_only_with_an_ally_engaged_with_the_target() -> None:
    h = pack()
    # Akela bites first: no ally of hers is engaged with Aria yet.
    first = bite(h, "akela-1", 3)
    assert (first.roll.advantage, first.roll.dice, first.hit) == ("none", (3,), False)
    assert ("akela-1", "aria") in h.state.engagements
    h.end_turn()
    # Raksha's bite: Akela is engaged with Aria and can act: advantage (3 and 2, the 3 kept).
    second = bite(h, "raksha-1", 3, 2)
    assert (second.roll.advantage, second.roll.dice, second.roll.kept) == (
        "advantage",
        (3, 2),
        (3,),
    )
    assert second.roll.sources == ("advantage:pack tactics: Akela",)
    h.assert_replay_matches()


def test_an_incapacitated_ally_gives_no_pack_tactics() -> None:
    h = pack()
    bite(h, "akela-1", 3)
    h.end_turn()
    h.send("grant_condition", creature="akela-1", condition="stunned")
    assert h.creature("akela-1").incapacitated
    second = bite(h, "raksha-1", 3)
    assert (second.roll.advantage, second.roll.dice) == ("none", (3,))
    assert not any("pack tactics" in s for s in second.roll.sources)


def test_keen_hearing_and_smell_gives_advantage_on_perception_checks() -> None:
    h = pack()
    check = RollRequest("check", "akela-1", ability="wis", skill="perception")
    assert [m.effect for m in h.engine.context(h.state).modifiers(check)] == ["advantage"]
    # Deafened, the wolf still smells: advantage stays, by smell alone.
    h.send("grant_condition", creature="akela-1", condition="deafened")
    (mod,) = h.engine.context(h.state).modifiers(check)
    assert (mod.effect, mod.source) == ("advantage", "keen senses: smell")
    # No keen sense helps a Stealth check, nor Aria, who has none.
    assert (
        h.engine.context(h.state).modifiers(RollRequest("check", "akela-1", skill="stealth")) == []
    )
    assert (
        h.engine.context(h.state).modifiers(RollRequest("check", "aria", skill="perception")) == []
    )


# -- Nimble Escape -------------------------------------------------------------------------------


def goblin_next_to_aria() -> EncounterHarness:
    """Snikt the goblin (its turn first) engaged with Aria in the hall."""
    h = harness(
        [srd("goblin", "Snikt"), make("aria", ac=12)],
        {"snikt-1": "hall", "aria": "hall"},
        [20, 10],
        options=EncounterOptions(flanking=False),
    )
    h.rolls(3).send("attack", creature="snikt-1", target="aria", attack="scimitar")
    assert h.state.engaged_with("snikt-1") == ["aria"]
    return h


def test_nimble_escape_disengages_as_a_bonus_action_and_leaves_without_provoking() -> None:
    h = goblin_next_to_aria()
    assert "nimble_escape" in h.engine.available_actions(h.state, "snikt-1", GM_ACTOR)
    events = h.send("nimble_escape", creature="snikt-1")
    assert events == (ActionTaken("snikt-1", "nimble_escape", "bonus"), Disengaged("snikt-1"))
    assert h.state.resources.bonus_actions == 0 and h.state.resources.actions == 0
    h.send("enter", creature="snikt-1", zones=["yard"])
    assert h.state.pending == []  # Aria is offered no opportunity attack
    assert h.creature("snikt-1").zone == "yard"
    # One bonus action a turn: a second Nimble Escape is refused.
    assert h.refused("nimble_escape", creature="snikt-1").code == "no_bonus_action_left"
    h.assert_replay_matches()


def test_nimble_escape_is_only_the_goblins_and_hide_is_left_to_the_gm() -> None:
    h = goblin_next_to_aria()
    hide = h.refused("nimble_escape", creature="snikt-1", choice="hide")
    assert hide.code == "invalid_params" and "the GM adjudicates a Hide" in hide.message
    assert h.state.resources.bonus_actions == 1  # nothing was spent
    h.end_turn()
    # Aria has no Nimble Escape: not offered, and refused by name.
    assert "nimble_escape" not in h.engine.available_actions(
        h.state, "aria", h.player("player-aria")
    )
    refusal = h.refused("nimble_escape", h.player("player-aria"), creature="aria")
    assert (refusal.code, refusal.message) == ("invalid_params", "Aria has no Nimble Escape.")
