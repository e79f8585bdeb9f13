"""More SRD 5.1 spells of levels 1-3 (issue 31, plugins/spells/_more.py), each with
the exact outcome of scripted dice; Seraphine (DC 15, +7 to hit) casts them."""

from __future__ import annotations

from helpers import make
from test_spells import cast, fight, goblin, refused, wizard
from test_spells_more import bonus, effects_of, sera

from zonekeep.plugins.spells import CONCENTRATING, spell_choices
from zonekeep.sdk import AttackMade, Creature, Damaged, Healed, SaveMade

# -- level 1 ---------------------------------------------------------------------------------


def test_charm_person_saves_with_advantage_and_forbids_attacking_the_charmer() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(5, 9), "sera", spell="charm-person", target="gob")
    save = h.of_type(SaveMade)[-1]
    assert save.roll.advantage == "advantage" and not save.success
    assert "charmed" in h.creature("gob").conditions
    h.end_turn()
    refusal = h.refused("attack", creature="gob", target="sera")
    assert refusal.code == "charmed"
    h.end_turn()
    cast(h.rolls(5, 3, 4), "sera", spell="poison-spray", target="gob")
    assert "charmed" not in h.creature("gob").conditions  # harmed by the charmer


def test_animal_friendship_charms_for_24_hours_with_no_save_each_turn() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(4, 6), "sera", spell="animal-friendship", target="gob")  # advantage, both fail
    (effect,) = effects_of(h, "gob", "charmed")
    assert (effect.rounds, effect.save, effect.source) == (14400, None, "sera")
    h.end_turn()
    assert h.refused("attack", creature="gob", target="sera").code == "charmed"
    h.end_turn()  # the goblin's turn ends: no save
    assert "charmed" in h.creature("gob").conditions


def test_divine_favor_adds_1d4_radiant_to_weapon_hits() -> None:
    h = fight(sera(), goblin())
    bonus(h, spell="divine-favor")
    assert "divine-favor" in h.creature("sera").conditions
    h.rolls(15, 3, 4).send("attack", creature="sera", target="gob", attack="dagger")
    kinds = [(d.amount, d.damage_type) for d in h.of_type(Damaged)]
    assert kinds[-1] == (4, "radiant")
    assert h.creature("gob").hp == 30 - (3 + 2) - 4  # dagger 1d4 + Dex 2, then 1d4 radiant


def test_hunters_mark_adds_1d6_to_the_markers_weapon_hits_on_the_marked() -> None:
    h = fight(sera(), goblin())
    bonus(h, spell="hunters-mark", target="gob")
    h.rolls(15, 1, 6).send("attack", creature="sera", target="gob", attack="dagger")
    assert h.of_type(Damaged)[-1].amount == 6
    assert h.creature("gob").hp == 30 - 3 - 6
    assert effects_of(h, "sera", CONCENTRATING)


def test_mage_armor_makes_the_ac_at_least_13_plus_dex() -> None:
    h = fight(sera(), goblin())
    assert h.creature("sera").ac == 12  # Dex 15, no armour
    cast(h, "sera", spell="mage-armor")
    h.end_turn()
    h.rolls(10).send("attack", creature="gob", target="sera")  # 10 + 4 = 14 < 15
    made = h.of_type(AttackMade)[-1]
    assert made.target_ac == 15 and not made.hit


def test_jump_triples_the_long_jump() -> None:
    h = fight(sera(), goblin())  # Str 8: a standing jump of 4 ft, 8 ft after a run-up
    assert refused(h, "sera", "move", feet=5, mode="jump")[0] == "cannot_move"
    cast(h, "sera", spell="jump")
    assert "jumping" in h.creature("sera").conditions
    code, message = refused(h, "sera", "move", feet=13, mode="jump")
    assert code == "cannot_move" and "at most 12 ft" in message
    h.send("move", h.player("player-sera"), creature="sera", feet=12, mode="jump")
    assert h.state.resources.movement_spent == 12


def test_expeditious_retreat_dashes_now_and_as_a_bonus_action_later() -> None:
    h = fight(sera(), goblin())
    me = h.player("player-sera")
    assert h.refused("retreat_dash", me, creature="sera").code == "no_such_feature"
    bonus(h, spell="expeditious-retreat")
    assert h.state.resources.dashes == 1 and "retreating" in h.creature("sera").conditions
    assert effects_of(h, "sera", CONCENTRATING)
    h.end_turn()
    h.end_turn()  # her next turn
    events = h.send("retreat_dash", me, creature="sera")
    assert h.state.resources.dashes == 1 and h.state.resources.bonus_actions == 0
    assert [type(e).__name__ for e in events] == ["ActionTaken", "Dashed"]


def test_hideous_laughter_leaves_a_failed_target_prone_and_incapacitated() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(3), "sera", spell="hideous-laughter", target="gob")
    conditions = h.creature("gob").conditions
    assert "incapacitated" in conditions and "prone" in conditions
    h2 = fight(sera(), goblin())
    cast(h2.rolls(18), "sera", spell="hideous-laughter", target="gob")
    assert "prone" not in h2.creature("gob").conditions


def test_grease_knocks_prone_who_fails_the_dex_save() -> None:
    h = fight(sera(), goblin(), positions={"gob": "bar"})
    cast(h.rolls(4), "sera", spell="grease", zone="bar", targets=["gob"])
    assert "prone" in h.creature("gob").conditions


# -- level 2 ---------------------------------------------------------------------------------


def test_acid_arrow_burns_again_at_the_end_of_the_targets_next_turn() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(12, 1, 2, 3, 4), "sera", spell="acid-arrow", target="gob")
    assert h.creature("gob").hp == 30 - 10 and "acid-burned" in h.creature("gob").conditions
    h.end_turn()
    h.rolls(2, 2).end_turn()  # the goblin's turn ends: 2d4 acid
    assert h.creature("gob").hp == 30 - 10 - 4
    assert "acid-burned" not in h.creature("gob").conditions


def test_acid_arrow_upcast_and_a_miss_deals_half_the_first_dice() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(2, 4, 4, 4, 4, 3), "sera", spell="acid-arrow", target="gob", slot=3)
    assert h.of_type(Damaged)[-1].amount == 19 // 2  # 5d4 on a miss: half
    assert "acid-burned" not in h.creature("gob").conditions


def test_flame_blade_is_held_and_attacks_as_an_action_for_3d6_fire() -> None:
    h = fight(sera(), goblin())
    me = h.player("player-sera")
    assert h.refused("flame_blade", me, creature="sera", target="gob").code == "no_such_feature"
    choices = spell_choices(h.state, h.creature("sera"), "bonus")
    (blade,) = [c for c in choices if c.params == {"spell": "flame-blade"}]
    assert blade.options == {"slot": (2, 3)}  # no target: the blade is the caster's
    bonus(h, spell="flame-blade")
    assert "flame-blade" in h.creature("sera").conditions
    h.rolls(10, 1, 2, 3).send("flame_blade", me, creature="sera", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert (made.kind, made.roll.total, made.hit) == ("melee", 17, True)
    assert h.creature("gob").hp == 30 - 6 and h.of_type(Damaged)[-1].damage_type == "fire"
    assert h.state.resources.actions == 0


def test_flame_blade_upcast_two_levels_adds_a_die() -> None:
    h = fight(sera(level=7, spell_slots={"1": 4, "2": 3, "3": 3, "4": 1}), goblin())
    h.send("cast_bonus", h.player("player-sera"), creature="sera", spell="flame-blade", slot=4)
    h.rolls(10, 1, 1, 1, 1).send(
        "flame_blade", h.player("player-sera"), creature="sera", target="gob"
    )
    assert h.creature("gob").hp == 30 - 4


def test_blindness_blinds_on_a_failed_con_save_two_targets_upcast() -> None:
    h = fight(sera(), goblin(), goblin("orc"))
    cast(h.rolls(3, 20), "sera", spell="blindness-deafness", targets=["gob", "orc"], slot=3)
    assert "blinded" in h.creature("gob").conditions
    assert "blinded" not in h.creature("orc").conditions


def test_invisibility_ends_when_its_creature_casts_a_spell() -> None:
    h = fight(sera(), goblin())
    cast(h, "sera", spell="invisibility")
    assert "invisible" in h.creature("sera").conditions
    h.end_turn()
    h.end_turn()
    cast(h.rolls(10, 5, 5), "sera", spell="poison-spray", target="gob")
    assert "invisible" not in h.creature("sera").conditions


def test_lesser_restoration_ends_paralysis_first_and_refuses_a_healthy_target() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20))
    assert refused(h, "sera", spell="lesser-restoration", target="ally")[0] == "invalid_target"
    h.send("apply_effect", creature="ally", condition="poisoned", rounds=10)
    h.send("apply_effect", creature="ally", condition="paralyzed", rounds=10)
    cast(h, "sera", spell="lesser-restoration", target="ally")
    conditions = h.creature("ally").conditions
    assert "paralyzed" not in conditions and "poisoned" in conditions


def test_protection_from_poison_cures_and_halves_poison_damage() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20))
    h.send("apply_effect", creature="ally", condition="poisoned", rounds=10)
    cast(h, "sera", spell="protection-from-poison", target="ally")
    assert "poisoned" not in h.creature("ally").conditions
    h.send("damage", creature="ally", amount=9, damage_type="poison")
    assert h.creature("ally").hp == 20 - 4


def test_ray_of_enfeeblement_halves_the_targets_strength_weapon_damage() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(13), "sera", spell="ray-of-enfeeblement", target="gob")  # 20 against AC 13
    assert h.of_type(AttackMade)[-1].hit and not h.of_type(Damaged)
    assert "enfeebled" in h.creature("gob").conditions
    h.end_turn()  # the goblin's turn starts; its save comes at its end
    h.rolls(15, 5, 12).send("attack", creature="gob", target="sera")  # 7, halved; her save
    assert h.creature("sera").hp == 32 - 3
    h.rolls(3).end_turn()  # a failed Con save: still enfeebled
    save = h.of_type(SaveMade)[-1]
    assert (save.creature, save.ability, save.dc, save.success) == ("gob", "con", 15, False)
    assert "enfeebled" in h.creature("gob").conditions
    h2 = fight(sera(), goblin())
    cast(h2.rolls(2), "sera", spell="ray-of-enfeeblement", target="gob")  # a miss
    assert "enfeebled" not in h2.creature("gob").conditions
    assert not effects_of(h2, "sera", CONCENTRATING)


def test_warding_bond_gives_ac_and_resistance_and_its_warder_takes_the_damage() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20, ac=12))
    assert refused(h, "sera", spell="warding-bond", target="sera")[0] == "invalid_target"
    cast(h, "sera", spell="warding-bond", target="ally")
    h.send("damage", creature="ally", amount=9, damage_type="fire")
    assert (h.creature("ally").hp, h.creature("sera").hp) == (20 - 4, 32 - 4)
    h.end_turn()
    h.rolls(8).send("attack", creature="gob", target="ally")  # 8 + 4 = 12 < AC 12 + 1
    assert not h.of_type(AttackMade)[-1].hit


# -- level 3 ---------------------------------------------------------------------------------


def test_beacon_of_hope_gives_advantage_on_wis_saves_and_the_most_healing() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20))
    h.send("damage", creature="ally", amount=15)
    cast(h, "sera", spell="beacon-of-hope", targets=["ally", "sera"])
    assert "hopeful" in h.creature("ally").conditions
    for _ in range(3):
        h.end_turn()
    cast(h.rolls(1), "sera", spell="cure-wounds", target="ally")
    assert h.of_type(Healed)[-1].amount == 8 + 4  # 1d8 at its most + Int 4


def test_fear_frightens_who_fails_with_the_caster_as_its_source() -> None:
    h = fight(sera(), goblin(), goblin("orc"))
    cast(h.rolls(2, 19), "sera", spell="fear", targets=["gob", "orc"])
    assert "frightened" in h.creature("gob").conditions
    assert "frightened" not in h.creature("orc").conditions
    assert [e.source for e in effects_of(h, "gob", "frightened")] == ["sera"]


def test_hypnotic_pattern_incapacitates_until_damage() -> None:
    h = fight(sera(), goblin(), positions={"gob": "yard"})
    cast(h.rolls(6), "sera", spell="hypnotic-pattern", zone="yard", targets=["gob"])
    assert {"incapacitated", "charmed"} <= set(h.creature("gob").conditions)
    h.send("damage", creature="gob", amount=2)
    assert not {"incapacitated", "charmed"} & set(h.creature("gob").conditions)


def test_mass_healing_word_heals_several_with_one_roll() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20), make("bo", hp=20))
    h.send("damage", creature="ally", amount=10)
    h.send("damage", creature="bo", amount=10)
    bonus(h.rolls(3), spell="mass-healing-word", targets=["ally", "bo"])
    assert [e.amount for e in h.of_type(Healed)] == [7, 7]  # 1d4 + 4, once


def test_aid_raises_the_maximum_and_the_hit_points_of_three_by_5_more_upcast() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20))
    h.send("damage", creature="ally", amount=10)
    cast(h, "sera", spell="aid", targets=["ally", "sera"], slot=3)
    ally = h.creature("ally")
    assert (ally.max_hp, ally.hp) == (30, 20) and "aided" in ally.conditions
    assert (h.creature("sera").max_hp, h.creature("sera").hp) == (42, 42)
    h.assert_replay_matches()
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert refused(h, "sera", spell="aid", targets=["ally"])[0] == "invalid_target"


def test_revivify_brings_back_a_defeated_creature_with_1_hit_point() -> None:
    h = fight(sera(), goblin(), make("hireling", controller="gm", hp=12))
    h.send("damage", creature="hireling", amount=12)
    assert "defeated" in h.creature("hireling").conditions
    assert refused(h, "sera", spell="revivify", target="gob")[0] == "invalid_target"
    cast(h, "sera", spell="revivify", target="hireling")
    hireling = h.creature("hireling")
    assert hireling.hp == 1 and "defeated" not in hireling.conditions
    assert h.creature("sera").resources["spell-slots-3"] == 1
    h.assert_replay_matches()


def test_vampiric_touch_heals_the_caster_half_the_damage() -> None:
    h = fight(sera(), goblin())
    h.send("damage", creature="sera", amount=20)
    cast(h.rolls(12, 6, 5, 4), "sera", spell="vampiric-touch", target="gob")
    assert h.creature("gob").hp == 30 - 15
    assert h.of_type(Healed)[-1].amount == 7
    assert effects_of(h, "sera", CONCENTRATING)


# -- Hellish Rebuke: a reaction, offered at a hit ----------------------------------------------


def rebuker() -> Creature:
    """Seraphine knowing Hellish Rebuke (four level-1 slots)."""
    return wizard(spells_known=["hellish-rebuke"], spells_prepared=["hellish-rebuke"])


def test_hellish_rebuke_is_offered_at_a_hit_and_burns_the_attacker() -> None:
    h = fight(rebuker(), goblin())
    h.end_turn()
    h.rolls(15).send("attack", creature="gob", target="sera")  # 19 hits AC 12
    offered = h.decision("hellish-rebuke")
    assert offered.creature == "sera" and "Dexterity save" in offered.prompt
    events = h.rolls(6, 7, 8, 3).decide("hellish-rebuke", h.player("player-sera"))
    save = next(e for e in events if isinstance(e, SaveMade))
    assert (save.creature, save.ability, save.dc, save.success) == ("gob", "dex", 15, False)
    assert h.creature("gob").hp == 30 - 15  # 2d10 fire: 7 + 8
    assert h.creature("sera").resources["spell-slots-1"] == 3
    assert h.creature("sera").hp == 32 - 5  # the goblin's hit lands: 1d6+2
    assert not h.state.has_reaction("sera")


def test_hellish_rebuke_declined_spends_nothing_and_is_never_cast_as_an_action() -> None:
    h = fight(rebuker(), goblin())
    assert refused(h, "sera", spell="hellish-rebuke", target="gob")[0] == "invalid_params"
    h.end_turn()
    h.rolls(15).send("attack", creature="gob", target="sera")
    h.rolls(3).decide("decline", h.player("player-sera"))
    assert h.creature("gob").hp == 30 and h.creature("sera").resources["spell-slots-1"] == 4
