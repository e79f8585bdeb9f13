"""Spells the SDK's temporary hit points and roll bonuses allow (issue 31 follow-up,
plugins/spells/_boons.py): False Life, Heroism and Magic Weapon, each with the exact
outcome of scripted dice; Seraphine (Int 18: +4, level 5) casts them."""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import cast, fight, goblin, refused, wizard
from test_spells_more import bonus, effects_of

from zonekeep.plugins.spells import CONCENTRATING, SPELLS
from zonekeep.plugins.spells.catalog import GM_SPELLS
from zonekeep.sdk import AttackMade, ConditionPrevented, Creature, Damaged, TempHpChanged

BOONS = ["false-life", "heroism", "magic-weapon"]


def sera(**changes: Any) -> Creature:
    return wizard(spells_known=BOONS, spells_prepared=list(BOONS), **changes)


def test_the_three_spells_are_in_the_catalog_not_the_gm_list() -> None:
    for sid in BOONS:
        assert sid in SPELLS and sid not in GM_SPELLS
    assert (SPELLS["heroism"].level, SPELLS["magic-weapon"].level) == (1, 2)
    assert SPELLS["magic-weapon"].casting == "bonus"


# -- false life ---------------------------------------------------------------------------------


def test_false_life_gives_1d4_plus_4_temporary_hit_points() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(3), "sera", spell="false-life")
    assert h.creature("sera").temp_hp == 7
    gained = h.of_type(TempHpChanged)[-1]
    assert gained.source == "False Life"
    assert gained.roll is not None and (gained.roll.dice, gained.roll.total) == ((3,), 7)
    assert h.unrecorded_dice() == []  # the die is in the event, not a loose dice_drawn
    assert h.creature("sera").resources["spell-slots-1"] == 3
    h.assert_replay_matches()


def test_false_life_upcast_adds_5_per_slot_level_and_the_larger_pool_stays() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(2), "sera", spell="false-life", slot=3)
    assert h.creature("sera").temp_hp == 6 + 10
    h.end_turn()
    h.end_turn()
    cast(h.rolls(4), "sera", spell="false-life")  # 8: fewer than the 16 she has
    assert h.creature("sera").temp_hp == 16


def test_false_life_on_another_creature_is_refused_and_spends_nothing() -> None:
    h = fight(sera(), make("bob"), goblin())
    code, _ = refused(h, "sera", spell="false-life", target="bob")
    assert code == "invalid_target"
    assert h.creature("sera").resources["spell-slots-1"] == 4
    assert h.creature("bob").temp_hp == 0


# -- heroism ------------------------------------------------------------------------------------


def test_heroism_gives_the_casters_modifier_at_the_start_of_each_turn_and_no_fright() -> None:
    h = fight(sera(), make("bob"), goblin())
    cast(h, "sera", spell="heroism", target="bob")
    assert "heroic" in h.creature("bob").conditions
    assert h.creature("bob").temp_hp == 0  # not until the start of its turn
    h.end_turn()  # Bob's turn starts: 4 (Seraphine's Intelligence modifier)
    assert h.creature("bob").temp_hp == 4
    refusal = h.refused(
        "apply_effect", creature="bob", condition="frightened", rounds=10, source="gob"
    )
    assert refusal.code == "condition_immune" and "heroism" in refusal.message
    forced = h.send(
        "apply_effect", creature="bob", condition="frightened", rounds=10, source="gob", force=True
    )
    assert not [e for e in forced if isinstance(e, ConditionPrevented)]  # the GM overrules
    h.send("remove_condition", creature="bob", condition="frightened")
    h.send("damage", creature="bob", amount=3)
    assert h.creature("bob").temp_hp == 1 and h.creature("bob").hp == 20
    h.end_turn()
    h.end_turn()
    h.end_turn()  # Bob's next turn: back to 4 (they do not add up)
    assert h.creature("bob").temp_hp == 4


def test_heroism_ends_a_fright_and_its_temporary_hit_points_go_with_it() -> None:
    h = fight(sera(), make("bob"), goblin())
    h.send("apply_effect", creature="bob", condition="frightened", rounds=10, source="gob")
    assert "frightened" in h.creature("bob").conditions
    cast(h, "sera", spell="heroism", target="bob")
    assert "frightened" not in h.creature("bob").conditions
    h.end_turn()
    assert h.creature("bob").temp_hp == 4
    (concentration,) = effects_of(h, "sera", CONCENTRATING)
    h.send("end_effect_of", effect=concentration.id)
    assert "heroic" not in h.creature("bob").conditions
    assert h.creature("bob").temp_hp == 0


def test_heroism_takes_one_more_creature_per_slot_level_above_1st() -> None:
    h = fight(sera(), make("bob"), make("cal"), make("dee"), goblin())
    code, _ = refused(h, "sera", spell="heroism", targets=["bob", "cal"])
    assert code == "too_many_targets"
    cast(h, "sera", spell="heroism", slot=2, targets=["bob", "cal"])
    assert all("heroic" in h.creature(c).conditions for c in ("bob", "cal"))
    assert h.creature("sera").resources["spell-slots-2"] == 2


# -- magic weapon ---------------------------------------------------------------------------------


def test_magic_weapon_adds_1_to_the_attack_and_the_damage_of_the_touched_creature() -> None:
    h = fight(sera(), make("bob"), goblin(ac=15), goblin("orc"))  # two a side: no flanking
    bonus(h, spell="magic-weapon", target="bob")
    assert "magic-weapon" in h.creature("bob").conditions
    assert h.creature("sera").resources["spell-slots-2"] == 2
    h.end_turn()
    h.rolls(10, 3).send("attack", h.player("player-bob"), creature="bob", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert made.roll.total == 10 + 4 + 1 and made.hit  # 15 against AC 15
    assert h.of_type(Damaged)[-1].amount == 3 + 2 + 1
    assert h.creature("gob").hp == 30 - 6
    h.assert_replay_matches()


def test_magic_weapon_from_a_4th_level_slot_is_plus_2() -> None:
    h = fight(
        sera(spell_slots={"1": 4, "2": 3, "3": 3, "4": 1}),
        make("bob"),
        goblin(ac=30),
        goblin("orc"),
    )
    bonus(h, spell="magic-weapon", slot=4, target="bob")
    h.end_turn()
    h.rolls(10).send("attack", h.player("player-bob"), creature="bob", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert made.roll.total == 10 + 4 + 2 and not made.hit


def test_magic_weapon_ends_with_the_concentration() -> None:
    h = fight(sera(), make("bob"), goblin(ac=15), goblin("orc"))  # two a side: no flanking
    bonus(h, spell="magic-weapon", target="bob")
    (concentration,) = effects_of(h, "sera", CONCENTRATING)
    h.send("end_effect_of", effect=concentration.id)
    h.end_turn()
    h.rolls(10).send("attack", h.player("player-bob"), creature="bob", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert made.roll.total == 14 and not made.hit


def test_the_choices_offer_false_life_to_the_caster_alone_and_heroism_to_those_in_touch() -> None:
    h = fight(sera(), make("bob"), goblin(), positions={"gob": "yard"})
    details = h.engine.action_details(h.state, "sera", h.player("player-sera"))
    found = {d.id: {c.params["spell"]: c for c in d.choices or ()} for d in details}
    assert found["cast"]["false-life"].options == {"slot": (1, 2, 3)}
    assert found["cast"]["heroism"].options == {"slot": (1, 2, 3), "target": ("sera", "bob")}
    assert found["cast_bonus"]["magic-weapon"].info == {"level": 2, "concentration": True}


def test_magic_weapon_hits_are_magical_against_a_resistance_to_nonmagical_attacks() -> None:
    tough = make("gob", "foes", hp=30, ac=15, damage_resistances_nonmagical=["slashing"])
    h = fight(sera(), make("bob"), tough, goblin("orc"))
    bonus(h, spell="magic-weapon", target="bob")
    h.end_turn()
    h.rolls(12, 5).send("attack", h.player("player-bob"), creature="bob", target="gob")
    assert h.of_type(Damaged)[-1].amount == 5 + 2 + 1  # not halved
