"""Wards the SDK's one-use bonus dice and creature types allow (issue 31 follow-up,
plugins/spells/_wards.py): Guidance, Resistance and Protection from Evil and Good, each
with the exact outcome of scripted dice; Seraphine (Int 18: +4, level 5) casts them on
Bob (no ability modifiers, no proficiencies)."""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import cast, fight, goblin, wizard

from zonekeep.plugins.spells import SPELLS, concentration_of
from zonekeep.plugins.spells.catalog import GM_SPELLS
from zonekeep.sdk import AttackMade, CheckRolled, Creature, Damaged, RollRecord
from zonekeep.sdk.testing import EncounterHarness

WARDS = ["guidance", "resistance", "protection-from-evil-and-good"]


def sera(**changes: Any) -> Creature:
    return wizard(
        cantrips=["fire-bolt", "guidance", "resistance"],
        spells_known=["bless", "protection-from-evil-and-good"],
        spells_prepared=["bless", "protection-from-evil-and-good"],
        **changes,
    )


def rolled(h: EncounterHarness, *dice: int, save: bool, ability: str) -> RollRecord:
    """Bob's roll of a check or save the GM calls, with ``dice`` scripted."""
    events = h.rolls(*dice).send("call_check", creatures=["bob"], ability=ability, save=save, dc=12)
    (check,) = [e for e in events if isinstance(e, CheckRolled)]
    return check.roll


def test_the_three_spells_are_in_the_catalog_not_the_gm_list() -> None:
    for sid in WARDS:
        assert sid in SPELLS and sid not in GM_SPELLS
        assert SPELLS[sid].concentration and SPELLS[sid].range == 5
    assert [SPELLS[s].level for s in WARDS] == [0, 0, 1]
    assert [SPELLS[s].school for s in WARDS] == ["divination", "abjuration", "abjuration"]
    assert [SPELLS[s].rounds for s in WARDS] == [10, 10, 100]


# -- resistance ---------------------------------------------------------------------------------


def test_resistance_adds_a_d4_to_the_next_save_only_and_ends_at_the_end_of_that_turn() -> None:
    h = fight(sera(), make("bob"), goblin())
    cast(h, "sera", spell="resistance", target="bob")
    bob = h.creature("bob")
    assert "resistant" in bob.conditions and bob.resources["resistance-die"] == 1
    assert concentration_of(h.state, "sera") is not None
    check = rolled(h, 9, save=False, ability="wis")  # a check: not Resistance's
    assert (check.total, check.bonus_dice) == (9, ())
    save = rolled(h, 8, 3, save=True, ability="wis")
    assert (save.dice, save.bonus_dice, save.total) == ((8,), (3,), 11)
    assert save.sources == ("bonus:resistance d4=3",)
    assert h.creature("bob").resources["resistance-die"] == 0
    again = rolled(h, 8, save=True, ability="wis")  # spent: no die on the next save
    assert (again.total, again.bonus_dice) == (8, ())
    assert "resistant" in h.creature("bob").conditions  # until the end of this turn
    h.end_turn()
    assert "resistant" not in h.creature("bob").conditions
    assert concentration_of(h.state, "sera") is None
    assert h.unrecorded_dice() == []
    h.assert_replay_matches()


def test_an_unused_die_goes_when_the_spell_ends() -> None:
    h = fight(sera(), make("bob"), goblin())
    cast(h, "sera", spell="resistance", target="bob")
    for _ in range(3):
        h.end_turn()
    assert h.state.active == "sera"
    cast(h, "sera", spell="bless", targets=["sera"])  # another concentration spell
    bob = h.creature("bob")
    assert "resistant" not in bob.conditions and bob.resources["resistance-die"] == 0
    save = rolled(h, 8, save=True, ability="wis")
    assert (save.total, save.bonus_dice) == (8, ())
    h.assert_replay_matches()


# -- guidance -----------------------------------------------------------------------------------


def test_guidance_adds_a_d4_to_the_next_ability_check_not_to_a_save() -> None:
    h = fight(sera(), make("bob"), goblin())
    cast(h, "sera", spell="guidance", target="bob")
    assert h.creature("bob").resources["guidance-die"] == 1
    save = rolled(h, 10, save=True, ability="str")
    assert (save.total, save.bonus_dice) == (10, ())
    check = rolled(h, 7, 4, save=False, ability="str")
    assert (check.dice, check.bonus_dice, check.total) == ((7,), (4,), 11)
    assert check.sources == ("bonus:guidance d4=4",)
    h.end_turn()
    assert "guided" not in h.creature("bob").conditions
    assert concentration_of(h.state, "sera") is None
    assert h.unrecorded_dice() == []
    h.assert_replay_matches()


# -- protection from evil and good ------------------------------------------------------------


def attack_on_bob(attacker: Creature) -> RollRecord:
    """``attacker``'s first attack on a warded Bob, on its turn, with 15 and 4 scripted."""
    h = fight(sera(), make("bob", hp=40), attacker)
    cast(h, "sera", spell="protection-from-evil-and-good", target="bob")
    assert "protected" in h.creature("bob").conditions
    assert h.creature("sera").resources["spell-slots-1"] == 3
    h.end_turn()
    h.end_turn()
    assert h.state.active == attacker.id
    events = h.rolls(15, 4).send("attack", creature=attacker.id, target="bob")
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    h.assert_replay_matches()
    return attack.roll


def test_an_undead_attacks_a_warded_creature_with_disadvantage() -> None:
    roll = attack_on_bob(goblin("ghoul", type="undead"))
    assert (roll.dice, roll.kept, roll.advantage) == ((15, 4), (4,), "disadvantage")
    assert roll.sources == ("disadvantage:protection from evil and good: Bob is warded",)


def test_a_fiend_too_but_not_a_humanoid_nor_a_creature_of_no_known_type() -> None:
    assert attack_on_bob(goblin("imp", type="fiend")).advantage == "disadvantage"
    for kind in ("humanoid", None):
        roll = attack_on_bob(goblin("gob", type=kind))
        assert (roll.dice, roll.advantage, roll.sources) == ((15,), "none", ())


# -- enhance ability and protection from energy: a spell's option -------------------------------


def optioned() -> Creature:
    spells = ["enhance-ability", "protection-from-energy"]
    return wizard(spells_known=spells, spells_prepared=spells)


def test_a_spell_with_options_needs_one_and_another_spell_takes_none() -> None:
    h = fight(optioned(), make("bob"), goblin())
    me = h.player("player-sera")
    for spell, option in (("enhance-ability", None), ("protection-from-energy", "poison")):
        params = {"option": option} if option else {}
        refusal = h.refused("cast", me, creature="sera", spell=spell, target="bob", **params)
        assert refusal.code == "invalid_params" and "needs its option" in refusal.message
    refusal = h.refused("cast", me, creature="sera", spell="fire-bolt", target="gob", option="fire")
    assert (refusal.code, refusal.message) == ("invalid_params", "Fire Bolt takes no option.")
    assert h.creature("sera").resources["spell-slots-2"] == 3  # nothing spent


def test_bears_endurance_gives_2d6_temporary_hit_points_and_advantage_on_con_checks() -> None:
    h = fight(optioned(), make("bob"), make("kim"), goblin())
    cast(h.rolls(3, 4, 5, 1), "sera", spell="enhance-ability", slot=3, targets=["bob", "kim"],
         option="bears-endurance")  # fmt: skip
    assert [h.creature(c).temp_hp for c in ("bob", "kim")] == [7, 6]
    assert h.unrecorded_dice() == []  # each 2d6 in its temp_hp_changed event
    assert "bears-endurance" in h.creature("bob").conditions
    con = rolled(h, 5, 17, save=False, ability="con")
    assert (con.dice, con.advantage, con.total) == ((5, 17), "advantage", 17)
    strength = rolled(h, 5, save=False, ability="str")  # another ability: no advantage
    assert (strength.dice, strength.advantage) == ((5,), "none")
    save = rolled(h, 6, save=True, ability="con")  # checks only, not saves
    assert (save.dice, save.advantage) == ((6,), "none")
    h.assert_replay_matches()


def test_protection_from_energy_resists_the_chosen_type_only() -> None:
    h = fight(optioned(), make("bob", hp=40), goblin())
    cast(h, "sera", spell="protection-from-energy", target="bob", option="fire")
    assert "resist-fire" in h.creature("bob").conditions
    assert h.creature("sera").resources["spell-slots-3"] == 1
    fire = [e for e in h.send("damage", creature="bob", amount=11, damage_type="fire")
            if isinstance(e, Damaged)]  # fmt: skip
    assert (fire[0].amount, fire[0].steps[0].kind) == (5, "resistance")
    cold = [e for e in h.send("damage", creature="bob", amount=11, damage_type="cold")
            if isinstance(e, Damaged)]  # fmt: skip
    assert (cold[0].amount, cold[0].steps) == (11, ())
    assert h.creature("bob").hp == 40 - 5 - 11
    h.assert_replay_matches()


def test_a_check_naming_no_ability_gets_no_enhancement_from_another_condition() -> None:
    """Only an Enhance Ability condition gives its advantage: a deafened creature's check
    with no ability named (a stat block's perception) gets none."""
    from zonekeep.plugins.spells import _wards
    from zonekeep.sdk import RollRequest, RuleContext, ScriptedEntropy

    h = fight(optioned(), make("bob", conditions=["deafened"]), goblin())
    ctx = RuleContext(h.state, ScriptedEntropy([]), h.engine.hook)
    for ability in (None, "wis", "con"):
        request = RollRequest("check", "bob", ability=ability, skill="perception")
        assert _wards.roll_modifiers(ctx, request) == []
