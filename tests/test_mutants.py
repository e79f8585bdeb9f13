"""Tests written to kill mutants that lived through the whole suite.

A mutation sample against the rules (plugins/) left each change named in a test's
docstring alive: no test failed with it applied. Each test here runs the rule
through the in-process harness with scripted dice and asserts the exact outcome,
so the named mutation makes it fail (checked by applying it by hand).
"""

from __future__ import annotations

import pytest
from helpers import make

from zonekeep.sdk import (
    ActionTaken,
    Arena,
    Attack,
    AttackMade,
    ConditionApplied,
    CreatureAdded,
    Damage,
    Damaged,
    DamageStep,
    InitiativeRolled,
    Link,
    OverrideApplied,
    SaveMade,
    ScriptedEntropy,
    Zone,
    hookimpl,
)
from zonekeep.sdk.engine import IN_PROCESS, LoadedPlugin
from zonekeep.sdk.testing import EncounterHarness

BOW = Attack("bow", "ranged", 4, "1d8", "piercing", reach=0, range=30, long_range=120)


def duel(*, gob_ac: int = 12) -> EncounterHarness:
    """Aria (+4 to hit, 1d6+2) acts first against a goblin (20 hp)."""
    h = EncounterHarness([make("aria"), make("gob", "foes", ac=gob_ac)])
    h.start(initiative=[15, 10])
    assert h.state.active == "aria"
    return h


# -- plugins/combat.py: the critical hit ---------------------------------------------------


def test_a_natural_19_is_not_a_critical_hit() -> None:
    """Mutant: ``critical = natural == 20`` -> ``critical = natural >= 19`` (combat.py)."""
    h = duel()
    h.rolls(19, 3, 6).send("attack", creature="aria", target="gob")
    (made,) = h.of_type(AttackMade)
    assert (made.roll.natural, made.roll.total, made.hit, made.critical) == (19, 23, True, False)
    (hurt,) = h.of_type(Damaged)
    assert hurt.roll is not None
    assert (hurt.amount, hurt.hp, hurt.roll.dice) == (5, 15, (3,))  # one d6, not two
    assert h.dice.remaining == (6,)

    # Nor does a 19 hit when the total misses: only a natural 20 always hits.
    h = duel(gob_ac=30)
    h.rolls(19, 3).send("attack", creature="aria", target="gob")
    (made,) = h.of_type(AttackMade)
    assert (made.roll.total, made.target_ac, made.hit, made.critical) == (23, 30, False, False)
    assert h.of_type(Damaged) == []
    assert h.creature("gob").hp == 20
    assert h.dice.remaining == (3,)


# -- plugins/initiative.py: late arrivals tied with the order -------------------------------


@pytest.mark.parametrize(
    ("late", "roll", "order", "index"),
    [
        # An NPC tied with a PC, with the higher Dexterity modifier: before the PC.
        ({"id": "wolf", "side": "foes", "dex_mod": 2}, 13, ["wolf", "aria", "gob"], 0),
        # ... with the same modifier: after the creature already there.
        ({"id": "wolf", "side": "foes", "dex_mod": 0}, 15, ["aria", "wolf", "gob"], 1),
        # ... with a lower one: after.
        ({"id": "wolf", "side": "foes", "dex_mod": -1}, 16, ["aria", "wolf", "gob"], 1),
        # A PC tied with a PC: after, whatever its Dexterity.
        (
            {"id": "bram", "side": "party", "controller": "bob", "dex_mod": 3},
            12,
            ["aria", "bram", "gob"],
            1,
        ),
        # An NPC tied with an NPC: after, whatever its Dexterity (last, here).
        ({"id": "wolf", "side": "foes", "dex_mod": 3}, 7, ["aria", "gob", "wolf"], 2),
    ],
)
def test_a_late_arrival_tied_on_initiative_goes_where_rulings_say(
    late: dict[str, object], roll: int, order: list[str], index: int
) -> None:
    """Mutant: the tie-break in ``insertion_index`` (initiative.py), docs/rules.md, 3 (late arrivals).

    Killed variants: ``new.total > e.total`` -> ``>=``; ``new.dex_mod > e.dex_mod`` ->
    ``>=``; the ``new.pc != e.pc`` clause dropped; the whole tie-break line deleted.
    """
    h = EncounterHarness([make("aria"), make("gob", "foes")])
    h.start(initiative=[15, 10])  # Aria (a PC, Dex +0) 15, the goblin (an NPC, Dex +0) 10
    h.end_turn()
    assert h.state.active == "gob"
    creature = {"name": "Latecomer", **late}
    (added,) = h.rolls(roll).send("add_creature", creature=creature)
    assert isinstance(added, CreatureAdded) and added.entry is not None
    tied_with = 10 if index == 2 else 15  # the total it rolled equals one already there
    assert (added.entry.total, added.index) == (tied_with, index)
    assert h.state.order() == order
    h.assert_replay_matches()


# -- plugins/conditions.py: prone targets and restrained saves ------------------------------


def test_a_melee_attack_against_a_prone_target_has_advantage() -> None:
    """Mutant: ``RollModifier("advantage", "target prone")`` -> ``"disadvantage"``, or the
    prone-target block removed (conditions.py)."""
    h = duel()
    h.send("grant_condition", creature="gob", condition="prone")
    h.rolls(4, 15, 3).send("attack", creature="aria", target="gob")
    (made,) = h.of_type(AttackMade)
    assert made.roll.sources == ("advantage:target prone",)
    assert (made.roll.advantage, made.roll.dice, made.roll.kept) == ("advantage", (4, 15), (15,))
    assert (made.roll.total, made.hit) == (19, True)
    assert h.creature("gob").hp == 15


def test_a_ranged_attack_against_a_prone_target_has_disadvantage() -> None:
    """Mutant: the ranged branch ``RollModifier("disadvantage", "target prone")`` ->
    ``"advantage"``, or the prone-target block removed (conditions.py)."""
    h = EncounterHarness([make("aria", attacks=[BOW]), make("gob", "foes")])
    h.start(initiative=[15, 10])
    h.send("grant_condition", creature="gob", condition="prone")
    h.rolls(15, 4, 7).send("attack", creature="aria", target="gob")  # 7: a d8 if it hit
    (made,) = h.of_type(AttackMade)
    assert made.roll.sources == ("disadvantage:target prone",)
    assert (made.roll.advantage, made.roll.dice, made.roll.kept) == ("disadvantage", (15, 4), (4,))
    assert (made.roll.total, made.hit) == (8, False)
    assert h.creature("gob").hp == 20
    assert h.dice.remaining == (7,)


def test_a_restrained_creature_makes_dexterity_saves_with_disadvantage() -> None:
    """Mutant: the restrained Dexterity-save line removed, or its ``"dex"`` changed
    (conditions.py)."""
    h = EncounterHarness([make("aria", spell_dc=15), make("gob", "foes")])
    h.start(initiative=[15, 10])
    h.send("grant_condition", creature="gob", condition="restrained")
    h.rolls(17, 6, 4).send(
        "area_effect",
        creature="aria",
        zone="field",
        shape="sphere",
        size=5,
        range=0,
        targets=["gob"],
        save="dex",
        damage="1d6",
        damage_type="fire",
        name="Fire burst",
    )
    (save,) = h.of_type(SaveMade)
    assert save.roll.sources == ("disadvantage:restrained",)
    assert (save.roll.dice, save.roll.kept, save.roll.total) == ((17, 6), (6,), 6)
    assert (save.creature, save.ability, save.dc, save.success) == ("gob", "dex", 15, False)
    (hurt,) = h.of_type(Damaged)
    assert (hurt.creature, hurt.amount, hurt.hp) == ("gob", 4, 16)  # a failed save: all of it


# -- plugins/targeting.py: long range ---------------------------------------------------------


def lane() -> Arena:
    """A Large hall beside a Small bar, the bar beside a Medium yard (45 ft from the hall)."""
    return Arena(
        "lane",
        "Lane",
        (Zone("hall", "Hall", 60), Zone("bar", "Bar", 15), Zone("yard", "Yard", 30)),
        (Link("hall", "bar", "beside"), Link("bar", "yard", "beside")),
    )


def test_a_ranged_attack_beyond_normal_range_has_disadvantage() -> None:
    """Mutant: the targeting plugin's ``zonekeep_roll_modifiers`` returns ``None`` instead of
    ``(RollModifier("disadvantage", "long range"),)`` (targeting.py)."""
    longbow = Attack("longbow", "ranged", 4, "1d8", "piercing", reach=0, range=150, long_range=600)
    h = EncounterHarness([make("aria", attacks=[BOW, longbow]), make("gob", "foes")], arena=lane())
    h.start(positions={"aria": "hall", "gob": "yard"}, initiative=[15, 10])
    h.rolls(18, 5, 7).send("attack", creature="aria", target="gob", attack="bow")  # 45 ft > 30
    (made,) = h.of_type(AttackMade)
    assert made.roll.sources == ("disadvantage:long range",)
    assert (made.roll.advantage, made.roll.dice, made.roll.kept) == ("disadvantage", (18, 5), (5,))
    assert (made.roll.total, made.hit) == (9, False)
    assert h.dice.remaining == (7,)  # no damage rolled

    # Within normal range the same shot is a plain roll.
    h.end_turn()
    h.end_turn()
    h.dice = ScriptedEntropy([18, 5])
    h.send("attack", creature="aria", target="gob", attack="longbow")
    made = h.of_type(AttackMade)[-1]
    assert (made.roll.sources, made.roll.dice, made.roll.total, made.hit) == ((), (18,), 22, True)
    assert h.creature("gob").hp == 15


# -- plugins/gm.py: no negative hit points ------------------------------------------------------


@pytest.mark.parametrize("field", ["hp", "max_hp"])
def test_the_gm_cannot_set_negative_hit_points(field: str) -> None:
    """Mutant: the guard ``value < 0`` -> ``value < -1``, or the guard removed (gm.py)."""
    h = duel()
    refusal = h.refused("override", creature="aria", field=field, value=-1)
    assert (refusal.code, refusal.message) == ("invalid_params", "Hit points cannot be negative.")
    assert h.send("override", creature="aria", field=field, value=0)[0] == OverrideApplied(
        "gm", "aria", field, 0
    )
    assert getattr(h.creature("aria"), field) == 0


# -- issue 28: four mutants that lived -----------------------------------------------------------


def test_a_tie_between_pcs_is_rolled_off_whatever_their_dexterity() -> None:
    """Mutant: ``mixed = any(pc) and not all(pc)`` -> ``mixed = any(pc)`` (initiative.py,
    ``resolve_ties``): PCs tied only with PCs would go by Dexterity tiers, the higher
    modifier first and no roll-off, where the rules roll off between the players."""
    h = EncounterHarness(
        [
            make("aria", controller="alice", dex=3, pc=True),
            make("bran", controller="bob", dex=0, pc=True),
            make("gob", "foes"),
        ]
    )
    # Aria 10 + 3 and Bran 13 + 0 tie at 13; the goblin 5. The roll-off: Alice 4, Bob 18.
    h.start(initiative=[10, 13, 5, 4, 18])
    (rolled,) = h.of_type(InitiativeRolled)
    assert [(e.members, e.total) for e in rolled.entries] == [
        (("bran",), 13),
        (("aria",), 13),
        (("gob",), 5),
    ]
    assert [(r.contenders, r.rolls) for r in rolled.rolloffs] == [(("alice", "bob"), (4, 18))]
    assert h.state.active == "bran"
    assert h.dice.remaining == ()


def test_a_ranged_hit_from_the_same_zone_on_a_dying_creature_is_not_critical() -> None:
    """Mutant: the ``attack.kind == "melee"`` check dropped from ``_helpless_and_close``
    (combat.py): a bow shot from the dying creature's own zone would be a critical hit,
    which only a melee attack from there (or one by a creature engaged with it) is."""
    h = EncounterHarness(
        [make("aria", attacks=[BOW]), make("gob", "foes", pc=True, hp=0, conditions=["dying"])]
    )
    h.start(initiative=[15, 10])
    # Advantage against the dying goblin (unconscious) keeps the 10: 14 hits AC 12; 1d8: 5.
    events = h.rolls(4, 10, 5).send("attack", creature="aria", target="gob", attack="bow")
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.roll.advantage, made.roll.kept, made.hit, made.critical) == (
        "advantage",
        (10,),
        True,
        False,
    )
    (hurt,) = [e for e in events if isinstance(e, Damaged)]
    assert hurt.roll is not None and (hurt.amount, hurt.roll.dice) == (5, (5,))  # one d8
    assert h.dice.remaining == ()


class _Ward:
    """Reduces every damage by ``by`` (a negative ``by``: a plugin's arithmetic gone wrong)."""

    def __init__(self, by: int) -> None:
        self.by = by

    @hookimpl
    def zonekeep_modify_damage(self, damage: Damage) -> Damage:
        return damage.reduce(self.by, "ward")


@pytest.mark.parametrize(("by", "amount"), [(-3, 5), (0, 5), (2, 3), (9, 0)])
def test_reducing_damage_by_a_negative_amount_adds_nothing(by: int, amount: int) -> None:
    """Mutant: ``max(0, self.amount - max(0, amount))`` -> ``max(0, self.amount - amount)``
    (``Damage.reduce``, sdk/_damage.py): reducing by -3 would add 3 damage."""
    h = EncounterHarness(
        [make("aria"), make("gob", "foes")],
        extra_plugins=[LoadedPlugin("ward", "1", IN_PROCESS, _Ward(by))],
    )
    h.start(initiative=[15, 10])
    h.rolls(15, 3).send("attack", creature="aria", target="gob")  # 19 hits; 1d6+2 = 5
    (hurt,) = h.of_type(Damaged)
    assert (hurt.amount, hurt.hp, hurt.raw) == (amount, 20 - amount, 5)
    assert hurt.steps == (DamageStep("reduce", "ward", amount, "slashing"),)
    assert Damage("gob", 5).add(-3, "rider").amount == 5  # nor does adding take any away


def test_a_dying_creature_hit_again_is_not_made_dying_again() -> None:
    """Mutant: ``DYING not in now.conditions`` dropped from ``damage`` (sdk/_effects.py):
    a dying hero hit again would get a second ``condition_applied`` of ``dying``."""
    h = EncounterHarness(
        [make("aria", attacks=[BOW]), make("gob", "foes", pc=True, hp=0, conditions=["dying"])],
        arena=Arena(
            id="two",
            name="Two rooms",
            zones=(Zone("hall", "Hall", 30), Zone("yard", "Yard", 30)),
            links=(Link("hall", "yard", "beside"),),
        ),
    )
    h.start(positions={"aria": "hall", "gob": "yard"}, initiative=[15, 10])
    events = h.rolls(4, 10, 5).send("attack", creature="aria", target="gob", attack="bow")
    assert [type(e) for e in events] == [ActionTaken, AttackMade, Damaged]
    assert (events[2].amount, events[2].hp) == (5, 0)  # type: ignore[attr-defined]
    assert h.creature("gob").conditions == ["dying"]
    assert [e.condition for e in h.of_type(ConditionApplied)] == []
    h.assert_replay_matches()
