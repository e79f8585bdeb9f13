"""The SRD creatures' features the ``zonekeep.srd`` plugin implements, each tested from
its stat block (SRD 5.1): the wolf's Pack Tactics and Keen Hearing and Smell.

- Pack Tactics: advantage on an attack roll against a creature when at least one of the
  wolf's allies is engaged with it (the zone rules' "within 5 feet") and is not
  incapacitated.
- Keen Hearing and Smell: advantage on Wisdom (Perception) checks that rely on hearing
  or smell; a creature that has lost every keen sense (deafened, for hearing; smell is
  never lost) still has it for smell.
"""

from __future__ import annotations

from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import AttackMade, Creature, EncounterOptions, RollRequest
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def wolf(name: str) -> Creature:
    """A wolf from the SRD entry (``srd.wolf``), named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == "wolf")
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name})
    return made


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
