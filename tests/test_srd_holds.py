"""The SRD features of plugins/srd/_holds.py, each tested from its SRD 5.1 stat block:

- Giant spider, Web Walker: "The spider ignores movement restrictions caused by webbing."
- Vampire spawn, Claws: "Instead of dealing damage, the vampire can grapple the target
  (escape DC 13)."
- Stirge, Blood Drain: "the stirge attaches to the target. While attached, the stirge
  doesn't attack. Instead, at the start of each of the stirge's turns, the target loses
  5 (1d4 + 3) hit points due to blood loss. The stirge can detach itself by spending 5
  feet of its movement. It does so after it drains 10 hit points of blood from the
  target or the target dies. A creature, including the target, can use its action to
  detach the stirge."
- Darkmantle, Crush: attaches; with advantage on a Medium or smaller target it engulfs
  its head (blinded); attached, it attacks only that target, with advantage, and moves
  with it; a DC 13 Strength check as an action detaches it.
- Flesh golem, Berserk: "Whenever the golem starts its turn with 40 hit points or fewer,
  roll a d6. On a 6, the golem goes berserk. On each of its turns while berserk, the
  golem attacks the nearest creature it can see ... until it is destroyed or regains all
  its hit points."
"""

from __future__ import annotations

import attrs
from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    AttackMade,
    CheckRolled,
    Creature,
    Damaged,
    EncounterOptions,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str, **overrides: object) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name, **overrides})
    return made


def fight(
    first: Creature, *others: Creature, zones: dict[str, str] | None = None
) -> EncounterHarness:
    """``first`` acts first, then the others in order; everyone in the hall unless told."""
    every = [first, *others]
    where = {c.id: "hall" for c in every} | (zones or {})
    return harness(
        every, where, [20, 15, 10, 5, 3][: len(every)], options=EncounterOptions(flanking=False)
    )


def webs(h: EncounterHarness) -> list[str]:
    return [a.data["holds"] for a in h.state.arena.assets if a.data.get("srd") == "web"]


# -- web walker ---------------------------------------------------------------------------------


def test_a_web_does_not_hold_a_web_walker_but_holds_others() -> None:
    spinner = srd("giant-spider", "Spinner")  # Web +5, range 30/60
    walker = srd("giant-spider", "Walker")  # AC 14, Large, Web Walker
    h = fight(spinner, make("aria"), walker)
    # 10 + 5 = 15 hits Aria's AC 12: restrained by a web.
    h.rolls(10).send("web", creature="spinner-1", target="aria")
    assert "restrained" in h.creature("aria").conditions
    assert webs(h) == ["aria"]
    h.end_turn()
    h.end_turn()
    h.rolls(1).end_turn()  # round 2: the spinner's recharge fails on a 1
    h.end_turn()
    h.end_turn()
    # Walker (its own Web spent on nothing): Spinner recharges it on a 6 next round; here
    # Walker is the target. Round 3: Spinner's recharge on a 6, then the web at Walker.
    h.rolls(6).end_turn()
    events = h.rolls(10).send("web", creature="spinner-1", target="walker-1")
    assert [(e.target, e.hit) for e in events if isinstance(e, AttackMade)] == [("walker-1", True)]
    assert "restrained" not in h.creature("walker-1").conditions
    assert webs(h) == ["aria"]  # Walker's web came off at once; Aria's still holds her
    assert "restrained" in h.creature("aria").conditions
    h.assert_replay_matches()


# -- grapple instead ----------------------------------------------------------------------------


def test_the_vampire_spawns_claws_grapple_instead_of_dealing_damage() -> None:
    spawn = srd("vampire-spawn", "Spawn")  # claws +6, 2d4+3 slashing; escape DC 13
    h = fight(spawn, make("aria", hp=20))
    assert h.refused("escape_hold", creature="spawn-1").code == "invalid_target"
    h.send("grapple_instead", creature="spawn-1", grapple=True)
    assert "grapple-instead" in h.creature("spawn-1").conditions
    # 10 + 6 = 16 hits AC 12; the 2d4 + 3 (2, 2) is not dealt: Aria is grappled instead.
    events = h.rolls(10, 2, 2).send("attack", creature="spawn-1", target="aria", attack="claws")
    assert [e.amount for e in events if isinstance(e, Damaged)] == [0]
    assert h.creature("aria").hp == 20
    assert "grappled" in h.creature("aria").conditions
    h.end_turn()
    # Aria (no Athletics or Acrobatics bonus): 12 fails DC 13.
    events = h.rolls(12).send("escape_hold", creature="aria")
    assert [(e.roll.total, e.dc, e.success) for e in events if isinstance(e, CheckRolled)] == [
        (12, 13, False)
    ]
    assert "grappled" in h.creature("aria").conditions
    h.end_turn()
    # The spawn deals damage again: claws (10, then 2 and 2 + 3) wound Aria for 7.
    h.send("grapple_instead", creature="spawn-1", grapple=False)
    assert "grapple-instead" not in h.creature("spawn-1").conditions
    h.rolls(10, 2, 2).send("attack", creature="spawn-1", target="aria", attack="claws")
    assert h.creature("aria").hp == 13
    h.end_turn()
    h.rolls(13).send("escape_hold", creature="aria")  # 13 meets DC 13: free
    assert "grappled" not in h.creature("aria").conditions
    h.assert_replay_matches()


def test_only_a_creature_with_grapple_instead_may_choose_it() -> None:
    h = fight(make("aria"), make("bram"))
    assert h.refused("grapple_instead", creature="aria", grapple=True).code == "no_such_feature"
    h = fight(srd("vampire-spawn", "Spawn"), make("aria"))
    assert h.refused("grapple_instead", creature="spawn-1", grapple="yes").code == "invalid_params"
    assert "grapple-instead" not in h.creature("spawn-1").conditions


def test_the_grapple_ends_when_the_grappler_leaves_the_zone() -> None:
    spawn = srd("vampire-spawn", "Spawn")
    h = fight(spawn, make("aria", hp=20), make("bram", "foes"))
    h.send("grapple_instead", creature="spawn-1", grapple=True)
    h.rolls(10, 2, 2).send("attack", creature="spawn-1", target="aria", attack="claws")
    assert "grappled" in h.creature("aria").conditions
    h.send("move_to_zone", creature="spawn-1", zone="yard")
    assert "grappled" not in h.creature("aria").conditions


# -- attach: the stirge -------------------------------------------------------------------------


def test_the_stirge_drains_at_the_start_of_its_turns_and_lets_go_once_sated() -> None:
    stirge = srd("stirge", "Stirge")  # blood drain +5, 1d4+3; drains 1d4+3, up to 10
    h = fight(stirge, make("aria", hp=20))
    # 10 + 5 = 15 hits AC 12; 2 + 3 = 5 piercing: 15 left, and the stirge attaches.
    h.rolls(10, 2).send("attack", creature="stirge-1", target="aria", attack="blood drain")
    assert h.creature("aria").hp == 15
    assert "attached" in h.creature("stirge-1").conditions
    h.end_turn()
    # Round 2: the stirge's turn starts: 4 + 3 = 7 drained, Aria at 8.
    h.rolls(4).end_turn()
    assert h.creature("aria").hp == 8
    assert h.creature("stirge-1").resources["blood-drained"] == 7
    # While attached it makes no attack.
    assert h.refused("attack", creature="stirge-1", target="aria").code == "invalid_target"
    h.end_turn()
    h.rolls(1).end_turn()  # round 3: 1 + 3 = 4 more: 11 drained, Aria at 4; it lets go
    assert h.creature("aria").hp == 4
    assert "attached" not in h.creature("stirge-1").conditions
    assert h.creature("stirge-1").resources["blood-drained"] == 0
    h.assert_replay_matches()


def test_any_creature_pulls_the_stirge_off_with_its_action_and_it_moves_with_its_prey() -> None:
    stirge = srd("stirge", "Stirge")
    h = fight(stirge, make("aria", hp=20), make("bram"))
    h.rolls(10, 2).send("attack", creature="stirge-1", target="aria", attack="blood drain")
    assert h.refused("enter", creature="stirge-1", zones=["yard"]).code == "cannot_move"
    h.end_turn()
    # Aria walks to the yard without disengaging: the stirge engaged with her is offered
    # no opportunity attack (nobody is: Bram is her ally), and it is carried along.
    events = h.send("enter", creature="aria", zones=["yard"])
    assert [e for e in events if type(e).__name__ == "DecisionOpened"] == []
    assert h.creature("stirge-1").zone == "yard"
    h.end_turn()
    # Bram is in the hall: out of reach.
    assert h.refused("detach", creature="bram", attached="stirge-1").code == "out_of_range"
    h.rolls(1).end_turn()  # round 2: the stirge drains 4, Aria at 11
    assert h.creature("aria").hp == 11
    h.end_turn()
    # The target pulls it off herself, as her action.
    h.send("detach", creature="aria", attached="stirge-1")
    assert "attached" not in h.creature("stirge-1").conditions
    h.assert_replay_matches()


def test_the_stirge_lets_go_with_5_feet_of_its_movement() -> None:
    stirge = srd("stirge", "Stirge")
    h = fight(stirge, make("aria", hp=20))
    assert h.refused("let_go", creature="stirge-1").code == "invalid_target"
    h.rolls(10, 2).send("attack", creature="stirge-1", target="aria", attack="blood drain")
    h.send("let_go", creature="stirge-1")
    assert "attached" not in h.creature("stirge-1").conditions
    assert h.state.resources.movement_spent == 5


# -- attach: the darkmantle ---------------------------------------------------------------------


def test_the_darkmantle_blinds_a_head_it_engulfs_and_attacks_only_it_with_advantage() -> None:
    darkmantle = srd("darkmantle", "Darkmantle")  # crush +5, 1d6+3; escape DC 13
    h = fight(darkmantle, make("aria", hp=30), make("bram"))
    # Aria is prone: the darkmantle attacks with advantage (18 of 5 and 18): a hit.
    h.send("grant_condition", creature="aria", condition="prone")
    events = h.rolls(5, 18, 1).send(
        "attack", creature="darkmantle-1", target="aria", attack="crush"
    )
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.hit, made.roll.advantage) == (True, "advantage")
    assert "attached" in h.creature("darkmantle-1").conditions
    assert "blinded" in h.creature("aria").conditions
    h.end_turn()
    # Aria stands and cannot pull it off: 12 fails the Strength check against DC 13.
    h.send("stand", creature="aria")
    events = h.rolls(12).send("detach", creature="aria", attached="darkmantle-1")
    assert [(e.dc, e.success) for e in events if isinstance(e, CheckRolled)] == [(13, False)]
    assert "attached" in h.creature("darkmantle-1").conditions
    h.end_turn()
    # Bram: 13 meets it: the darkmantle is off, and Aria sees again.
    h.rolls(13).send("detach", creature="bram", attached="darkmantle-1")
    assert "attached" not in h.creature("darkmantle-1").conditions
    assert "blinded" not in h.creature("aria").conditions
    h.assert_replay_matches()


def test_an_attached_darkmantle_attacks_no_other_creature_and_has_advantage() -> None:
    darkmantle = srd("darkmantle", "Darkmantle")
    h = fight(darkmantle, make("aria", hp=30), make("bram"))
    # No advantage (a plain 15): it attaches, but Aria is not blinded.
    h.rolls(15, 1).send("attack", creature="darkmantle-1", target="aria", attack="crush")
    assert "attached" in h.creature("darkmantle-1").conditions
    assert "blinded" not in h.creature("aria").conditions
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert h.refused("attack", creature="darkmantle-1", target="bram").code == "invalid_target"
    events = h.rolls(3, 16, 1).send(
        "attack", creature="darkmantle-1", target="aria", attack="crush"
    )
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.roll.advantage, made.roll.total, made.hit) == ("advantage", 21, True)


# -- berserk ------------------------------------------------------------------------------------


def test_the_flesh_golem_goes_berserk_on_a_6_and_must_attack_the_nearest() -> None:
    golem = attrs.evolve(srd("flesh-golem", "Golem"), hp=40)  # at 40 hit points: it rolls
    h2 = fight(make("aria"), golem, make("bram", "foes"), zones={"aria": "yard", "golem-1": "yard"})
    h2.rolls(5).end_turn()  # a 5: not berserk
    assert "berserk" not in h2.creature("golem-1").conditions
    h2.end_turn()
    h2.end_turn()
    h2.rolls(6).end_turn()  # round 2: a 6: berserk
    assert "berserk" in h2.creature("golem-1").conditions
    # Bram (its ally, in the hall 15 ft away) is not the nearest: Aria in the yard is.
    refused = h2.refused("attack", creature="golem-1", target="bram")
    assert refused.code == "invalid_target" and "Aria" in refused.message
    h2.rolls(15, 3, 3).send("attack", creature="golem-1", target="aria", attack="slam")
    assert h2.creature("aria").hp == 10  # 3 + 3 + 4 = 10 of 20
    h2.assert_replay_matches()


def test_a_berserk_golem_calms_when_it_starts_a_turn_with_all_its_hit_points() -> None:
    golem = attrs.evolve(srd("flesh-golem", "Golem"), hp=30)
    h = fight(make("aria"), golem)
    h.rolls(6).end_turn()  # the golem's turn: a 6
    assert "berserk" in h.creature("golem-1").conditions
    h.end_turn()
    h.send("heal", creature="golem-1", amount=63)  # back to 93 of 93
    h.end_turn()  # round 2, the golem's turn: all its hit points: calm, and no die
    assert h.creature("golem-1").hp == 93
    assert "berserk" not in h.creature("golem-1").conditions


def test_a_golem_above_the_threshold_rolls_no_die() -> None:
    golem = attrs.evolve(srd("flesh-golem", "Golem"), hp=41)
    h = fight(make("aria"), golem)
    events = h.end_turn()  # no die is drawn (the harness would fail on a missing one)
    assert "berserk" not in h.creature("golem-1").conditions
    assert not [e for e in events if type(e).__name__ == "DiceRolled"]
    assert attrs.has(type(events[0]))


# -- barkskin -----------------------------------------------------------------------------------


def test_the_dryads_innate_barkskin_makes_its_ac_16() -> None:
    """Dryad: "Armor Class 11 (16 with barkskin)"; Innate Spellcasting: barkskin 1/day."""
    dryad = srd("dryad", "Dryad")
    assert dryad.ac == 11
    h = fight(dryad, make("aria"))
    # Before: Aria's blade, 7 + 4 = 11, hits AC 11.
    h.end_turn()
    events = h.rolls(7, 1).send("attack", creature="aria", target="dryad-1")
    assert [(e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)] == [(11, True)]
    h.end_turn()
    h.send("cast", creature="dryad-1", spell="barkskin", target="dryad-1")
    assert "barkskin" in h.creature("dryad-1").conditions
    assert h.creature("dryad-1").resources["innate-barkskin"] == 0  # its 1/day
    h.end_turn()
    # 11 + 4 = 15 would hit AC 11; with barkskin the AC is 16: a miss.
    events = h.rolls(11).send("attack", creature="aria", target="dryad-1")
    assert [(e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)] == [
        (15, 16, False)
    ]
