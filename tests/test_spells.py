"""The spells plugin (issue 31, point 3): slots and upcasting, spell attacks and saves
from the sheet, concentration, the bonus-action spell rule, areas on zones, and the
first SRD 5.1 spells, each with the exact outcome of scripted dice on a character
built from a real sheet (``parse_character`` + ``character_creature``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from helpers import make

from zonekeep.plugins.spells import CONCENTRATING, TURN_KEY
from zonekeep.sdk import (
    Arena,
    AttackMade,
    ConditionEffectEnded,
    Creature,
    Damaged,
    Healed,
    Link,
    ResourceSpent,
    SaveMade,
    Zone,
    ZoneEntered,
    parse_arena,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness

ROOT = Path(__file__).resolve().parents[1]
SERAPHINE: dict[str, Any] = json.loads(
    (ROOT / "examples" / "characters" / "seraphine.json").read_text(encoding="utf-8")
)


def wizard(level: int = 5, **changes: Any) -> Creature:
    """Seraphine (Int 18, proficiency +3: spell DC 15, +7 to hit), with every spell of
    the tests prepared; ``changes`` replace fields of her sheet."""
    data = copy.deepcopy(SERAPHINE)
    data["classes"][0]["level"] = level
    data["cantrips"] = ["fire-bolt", "ray-of-frost", "shocking-grasp"]
    data["spells_known"] = [
        "magic-missile",
        "burning-hands",
        "scorching-ray",
        "shatter",
        "fireball",
        "lightning-bolt",
        "thunderwave",
        "misty-step",
        "hold-person",
        "shield",
    ]
    data["spells_prepared"] = list(data["spells_known"])
    data.update(changes)
    sheet = parse_character(data)
    return character_creature(sheet, "sera", "player-sera")


def cleric() -> Creature:
    """A level-5 cleric: Wis 18 (+4), proficiency +3: spell DC 15, +7 to hit."""
    data = copy.deepcopy(SERAPHINE)
    data.update(
        name="Hilda",
        classes=[{"name": "cleric", "level": 5}],
        ability_scores={"str": 14, "dex": 8, "con": 15, "int": 10, "wis": 18, "cha": 12},
        spellcasting_ability="wis",
        cantrips=["sacred-flame"],
        spells_known=["cure-wounds", "healing-word", "guiding-bolt", "hold-person"],
        spells_prepared=[],
    )
    return character_creature(parse_character(data), "hilda", "player-hilda")


def keep() -> Arena:
    """Hall (30 ft) beside Bar (15) beside Yard (30); a Vault beside the Yard that the
    hall cannot see past (150 ft of zones away is out of everything but fireball)."""
    return Arena(
        "keep",
        "Keep",
        (
            Zone("hall", "Hall", 30),
            Zone("bar", "Bar", 15),
            Zone("yard", "Yard", 30),
            Zone("far", "Far field", 120),
        ),
        (
            Link("hall", "bar", "beside"),
            Link("bar", "yard", "beside"),
            Link("yard", "far", "beside"),
        ),
    )


def fight(
    caster: Creature, *others: Creature, positions: dict[str, str] | None = None
) -> EncounterHarness:
    h = EncounterHarness([caster, *others], arena=keep())
    where = {caster.id: "hall", **{o.id: "hall" for o in others}, **(positions or {})}
    h.start(positions=where, initiative=[20, *range(10, 10 - len(others), -1)])
    assert h.state.active == caster.id
    return h


def cast(h: EncounterHarness, who: str, **params: Any) -> tuple[Any, ...]:
    return h.send("cast", h.player(f"player-{who}"), creature=who, **params)


def refused(h: EncounterHarness, who: str, kind: str = "cast", **params: Any) -> tuple[str, str]:
    refusal = h.refused(kind, h.player(f"player-{who}"), creature=who, **params)
    return refusal.code, refusal.message


def goblin(cid: str = "gob", hp: int = 30, ac: int = 13, **kw: Any) -> Creature:
    return make(cid, "foes", hp=hp, ac=ac, **kw)


# -- the caster's numbers come from the sheet ----------------------------------------------------


def test_the_sheet_gives_the_dc_the_attack_bonus_and_the_slots() -> None:
    sera = wizard()
    assert sera.spell_dc == 15
    assert (sera.resources["spell-slots-1"], sera.resources["spell-slots-3"]) == (4, 2)
    h = fight(sera, goblin())
    events = h.rolls(10, 7, 1).send(
        "cast", h.player("player-sera"), creature="sera", spell="fire-bolt", target="gob"
    )
    made = next(e for e in events if isinstance(e, AttackMade))
    assert made.roll.total == 17 and made.hit  # 10 + 7 against AC 13


# -- cantrips ----------------------------------------------------------------------------------


def test_fire_bolt_at_level_5_deals_2d10_fire_and_spends_no_slot() -> None:
    h = fight(wizard(), goblin())
    cast(h.rolls(12, 4, 9), "sera", spell="fire-bolt", target="gob")
    assert h.creature("gob").hp == 30 - 13
    damaged = h.of_type(Damaged)[-1]
    assert damaged.damage_type == "fire" and damaged.roll is not None
    assert damaged.roll.dice == (4, 9)
    assert not any(
        isinstance(e, ResourceSpent) and e.resource.startswith("spell") for e in h.events
    )
    assert h.state.resources.actions == 0
    h.assert_replay_matches()


def test_fire_bolt_at_level_4_rolls_one_die_and_misses_on_a_natural_1() -> None:
    h = fight(wizard(level=4), goblin())
    cast(h.rolls(1), "sera", spell="fire-bolt", target="gob")
    assert not h.of_type(AttackMade)[-1].hit and h.creature("gob").hp == 30
    h2 = fight(wizard(level=4), goblin())
    cast(h2.rolls(20, 3, 5), "sera", spell="fire-bolt", target="gob")  # a critical: 2d10
    assert h2.creature("gob").hp == 30 - 8


def test_a_spell_attack_out_of_range_is_refused_and_changes_nothing() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "far"})
    # Shocking grasp is a touch: another zone is out of reach.
    code, _ = refused(h, "sera", spell="shocking-grasp", target="gob")
    assert code == "out_of_range"
    assert h.state.resources.actions == 1


def test_shocking_grasp_is_a_melee_spell_attack_for_1d8_times_the_tier() -> None:
    h = fight(wizard(), goblin())
    cast(h.rolls(8, 5, 6), "sera", spell="shocking-grasp", target="gob")
    made = h.of_type(AttackMade)[-1]
    assert made.kind == "melee" and made.roll.total == 15 and made.hit
    assert h.creature("gob").hp == 30 - 11
    assert h.of_type(Damaged)[-1].damage_type == "lightning"


def test_ray_of_frost_reaches_60_ft_not_farther() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "yard"})  # bar 15 + yard 30 = 45 ft
    cast(h.rolls(15, 2, 2), "sera", spell="ray-of-frost", target="gob")
    assert h.creature("gob").hp == 30 - 4
    h2 = fight(wizard(), goblin(), positions={"gob": "far"})  # 165 ft
    assert refused(h2, "sera", spell="ray-of-frost", target="gob")[0] == "out_of_range"


def test_sacred_flame_is_a_dex_save_with_no_damage_on_a_success() -> None:
    h = fight(cleric(), goblin(), goblin("orc"))
    cast(h.rolls(14, 1, 1), "hilda", spell="sacred-flame", target="gob")  # 14 - 1 < 15
    save = h.of_type(SaveMade)[-1]
    assert (save.ability, save.dc, save.success) == ("dex", 15, False)
    # 2d8 at level 5 (the roll above was the save; then the damage dice)
    h2 = fight(cleric(), goblin())
    cast(h2.rolls(3, 6, 7), "hilda", spell="sacred-flame", target="gob")
    assert h2.creature("gob").hp == 30 - 13
    h3 = fight(cleric(), goblin())
    cast(h3.rolls(15), "hilda", spell="sacred-flame", target="gob")  # 15: a success
    assert h3.creature("gob").hp == 30 and not h3.of_type(Damaged)


def test_eldritch_blast_makes_two_beams_at_level_5_each_its_own_attack() -> None:
    warlock = wizard(cantrips=["eldritch-blast"])
    h = fight(warlock, goblin(), goblin("orc"))
    cast(h.rolls(15, 6, 2, 3), "sera", spell="eldritch-blast", targets=["gob", "orc"])
    made = h.of_type(AttackMade)
    assert [(m.target, m.hit) for m in made] == [("gob", True), ("orc", False)]
    assert h.creature("gob").hp == 30 - 6 and h.creature("orc").hp == 30
    code, message = refused(
        fight(warlock, goblin()), "sera", spell="eldritch-blast", targets=["gob", "gob", "gob"]
    )
    assert code == "invalid_params" and "2 attacks" in message


# -- leveled spells and slots --------------------------------------------------------------------


def test_magic_missile_spends_a_slot_and_upcast_adds_a_dart() -> None:
    h = fight(wizard(), goblin(), goblin("orc"))
    cast(
        h.rolls(1, 2, 3, 4),
        "sera",
        spell="magic-missile",
        slot=2,
        targets=["gob", "gob", "orc", "orc"],
    )
    assert h.creature("gob").hp == 30 - (2 + 3)
    assert h.creature("orc").hp == 30 - (4 + 5)
    assert h.creature("sera").resources["spell-slots-2"] == 2
    assert h.creature("sera").resources["spell-slots-1"] == 4
    h.assert_replay_matches()


def test_no_slot_left_is_refused() -> None:
    sera = wizard(spell_slots={"1": 1})
    h = fight(sera, goblin())
    cast(h.rolls(1, 1, 1), "sera", spell="magic-missile", target="gob")
    h.end_turn()
    h.end_turn()
    assert h.state.active == "sera"
    code, message = refused(h, "sera", spell="magic-missile", target="gob")
    assert code == "no_uses_left" and "level 1" in message


def test_a_slot_below_the_spells_level_and_a_slot_for_a_cantrip_are_refused() -> None:
    h = fight(wizard(), goblin())
    assert refused(h, "sera", spell="fireball", slot=2, zone="hall", targets=["gob"])[0] == (
        "invalid_params"
    )
    assert refused(h, "sera", spell="fire-bolt", slot=1, target="gob")[0] == "invalid_params"


def test_an_unknown_or_unprepared_spell_is_refused_naming_what_it_can_cast() -> None:
    h = fight(wizard(), goblin())
    code, message = refused(h, "sera", spell="wish", target="gob")
    assert code == "no_such_feature" and "fire-bolt" in message
    code, message = refused(h, "sera", spell="shield")  # a reaction: offered as a prompt
    assert code == "invalid_params" and "reaction" in message
    known = ["magic-missile", "fog-cloud"]
    h3 = fight(wizard(spells_known=known, spells_prepared=known), goblin())
    code, message = refused(h3, "sera", spell="fog-cloud", zone="hall")
    assert code == "no_such_feature" and "GM adjudicates" in message
    fighter = make("bob", controller="player-bob")
    h2 = fight(fighter, goblin())
    assert refused(h2, "bob", spell="fire-bolt", target="gob")[0] == "no_such_feature"


def test_scorching_ray_makes_three_attacks_of_2d6() -> None:
    h = fight(wizard(), goblin())
    cast(h.rolls(10, 1, 2, 1, 10, 3, 4), "sera", spell="scorching-ray", target="gob")
    assert [m.hit for m in h.of_type(AttackMade)] == [True, False, True]
    assert h.creature("gob").hp == 30 - 3 - 7


# -- areas -----------------------------------------------------------------------------------------


def test_fireball_dex_saves_then_one_shared_damage_roll_half_on_a_success() -> None:
    h = fight(
        wizard(),
        goblin(hp=40),
        goblin("orc", hp=40),
        goblin("imp", hp=40),
        positions={"gob": "yard", "orc": "yard", "imp": "yard"},
    )
    # Saves 3 (fail), 18 (success), 9 (fail); then 8d6 once: 3+4+5+6+1+2+3+4 = 28.
    cast(
        h.rolls(3, 18, 9, 3, 4, 5, 6, 1, 2, 3, 4),
        "sera",
        spell="fireball",
        zone="yard",
        targets=["gob", "orc", "imp"],
    )
    saves = {e.creature: e.success for e in h.of_type(SaveMade)}
    assert saves == {"gob": False, "orc": True, "imp": False}
    assert {e.creature: e.amount for e in h.of_type(Damaged)} == {"gob": 28, "orc": 14, "imp": 28}
    # One roll, the same dice drawn once, for all three (zonekeep verify accepts it).
    rolls = [e.roll for e in h.of_type(Damaged) if e.roll is not None]
    assert [r.dice for r in rolls] == [(3, 4, 5, 6, 1, 2, 3, 4)] * 3
    assert [len(r.draws) for r in rolls] == [8, 0, 0]  # its dice recorded once
    assert h.creature("sera").resources["spell-slots-3"] == 1
    h.assert_replay_matches()


def test_fireball_upcast_adds_a_d6_and_must_fill_its_targets() -> None:
    h = fight(wizard(), goblin(hp=60), goblin("orc"), positions={"gob": "yard", "orc": "yard"})
    code, message = refused(h, "sera", spell="fireball", zone="yard", targets=["gob"])
    assert code == "too_few_targets" and "Orc" in message
    # 9d6 at level 4 (the slot: 4 is not on the sheet, so refused)
    assert (
        refused(h, "sera", spell="fireball", slot=4, zone="yard", targets=["gob", "orc"])[0]
        == "no_uses_left"
    )


def test_fireball_beyond_150_ft_is_out_of_range() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "far"})  # 15 + 30 + 120 = 165 ft
    assert refused(h, "sera", spell="fireball", zone="far", targets=["gob"])[0] == "out_of_range"


def test_burning_hands_is_a_cone_from_the_caster_its_length_its_range() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "bar"})  # the bar is 15 ft away
    cast(h.rolls(20, 1, 2, 3), "sera", spell="burning-hands", zone="bar", targets=["gob"])
    assert h.creature("gob").hp == 30 - 3  # saved: half of 6
    h2 = fight(wizard(), goblin(), positions={"gob": "yard"})  # 45 ft: beyond the cone
    code, _ = refused(h2, "sera", spell="burning-hands", zone="yard", targets=["gob"])
    assert code == "out_of_range"


def test_lightning_bolt_reaches_100_ft_along_its_line() -> None:
    h = fight(wizard(), goblin(hp=60), positions={"gob": "yard"})
    cast(h.rolls(2, *([1] * 8)), "sera", spell="lightning-bolt", zone="yard", targets=["gob"])
    assert h.creature("gob").hp == 60 - 8
    assert h.of_type(Damaged)[-1].damage_type == "lightning"


def test_shatter_is_a_con_save_for_3d8_upcast_to_4d8() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "bar"})
    cast(h.rolls(2, 1, 1, 1, 1), "sera", spell="shatter", slot=3, zone="bar", targets=["gob"])
    assert h.of_type(SaveMade)[-1].ability == "con"
    assert h.creature("gob").hp == 30 - 4


# -- healing -----------------------------------------------------------------------------------------


def test_cure_wounds_heals_1d8_plus_the_wisdom_modifier_never_above_the_maximum() -> None:
    h = fight(cleric(), make("ally", hp=20, controller="player-ally"))
    h.send("damage", creature="ally", amount=15)
    cast(h.rolls(5), "hilda", spell="cure-wounds", target="ally")
    assert h.of_type(Healed)[-1].amount == 9 and h.creature("ally").hp == 14
    assert h.creature("hilda").resources["spell-slots-1"] == 3


def test_healing_word_is_a_bonus_action_with_an_upcast_die() -> None:
    h = fight(cleric(), make("ally", hp=20, controller="player-ally"), positions={"ally": "yard"})
    h.send("damage", creature="ally", amount=19)
    code, message = refused(h, "hilda", spell="healing-word", target="ally")
    assert code == "invalid_params" and "cast_bonus" in message
    h.rolls(2, 3).send(
        "cast_bonus",
        h.player("player-hilda"),
        creature="hilda",
        spell="healing-word",
        slot=2,
        target="ally",
    )
    assert h.creature("ally").hp == 1 + 2 + 3 + 4
    assert h.state.resources.bonus_actions == 0 and h.state.resources.actions == 1


# -- the bonus-action spell rule ------------------------------------------------------------------------


def test_after_a_bonus_action_spell_only_an_action_cantrip_may_follow() -> None:
    h = fight(cleric(), make("ally", hp=20, controller="player-ally"), goblin())
    h.rolls(1).send(
        "cast_bonus",
        h.player("player-hilda"),
        creature="hilda",
        spell="healing-word",
        target="ally",
    )
    assert h.creature("hilda").resources[TURN_KEY] == 1
    code, message = refused(h, "hilda", spell="guiding-bolt", target="gob")
    assert code == "spell_limit" and "cantrip" in message
    cast(h.rolls(1, 1, 1), "hilda", spell="sacred-flame", target="gob")  # allowed
    assert h.creature("hilda").resources["spell-slots-1"] == 3  # only the healing word


def test_after_a_leveled_action_spell_no_bonus_action_spell_and_the_next_turn_is_free() -> None:
    h = fight(cleric(), make("ally", hp=20, controller="player-ally"), goblin())
    cast(h.rolls(1), "hilda", spell="guiding-bolt", target="gob")
    code, _ = refused(h, "hilda", "cast_bonus", spell="healing-word", target="ally")
    assert code == "spell_limit"
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "hilda" and h.creature("hilda").resources[TURN_KEY] == 0
    h.rolls(1).send(
        "cast_bonus",
        h.player("player-hilda"),
        creature="hilda",
        spell="healing-word",
        target="ally",
    )


# -- concentration ------------------------------------------------------------------------------------


def _held(h: EncounterHarness) -> None:
    cast(h.rolls(4), "sera", spell="hold-person", target="gob")  # 4 < 15: paralyzed
    assert "paralyzed" in h.creature("gob").conditions
    assert CONCENTRATING in h.creature("sera").conditions


def test_hold_person_paralyzes_on_a_failed_wisdom_save_under_concentration() -> None:
    h = fight(wizard(), goblin())
    _held(h)
    save = h.of_type(SaveMade)[-1]
    assert (save.ability, save.dc) == ("wis", 15)
    effect = next(e for e in h.state.condition_effects.values() if e.condition == "paralyzed")
    assert (effect.save, effect.save_dc, effect.save_when) == ("wis", 15, "end")


def test_damage_calls_for_a_con_save_dc_10_or_half_and_a_failure_ends_the_spell() -> None:
    h = fight(wizard(), goblin())
    _held(h)
    h.end_turn()
    # 24 damage: DC 12. Seraphine's Con save is +2: a 9 makes 11, a failure.
    h.rolls(9).send("damage", creature="sera", amount=24)
    save = h.of_type(SaveMade)[-1]
    assert (save.creature, save.ability, save.dc, save.success) == ("sera", "con", 12, False)
    ended = {e.condition for e in h.of_type(ConditionEffectEnded)}
    assert ended == {CONCENTRATING, "paralyzed"}
    assert "paralyzed" not in h.creature("gob").conditions
    h.assert_replay_matches()


def test_a_small_hit_is_dc_10_and_a_success_keeps_the_spell() -> None:
    h = fight(wizard(), goblin())
    _held(h)
    h.rolls(8).send("damage", creature="sera", amount=3)  # 8 + 2 = 10 against DC 10
    save = h.of_type(SaveMade)[-1]
    assert (save.dc, save.success) == (10, True)
    assert "paralyzed" in h.creature("gob").conditions


def test_a_new_concentration_spell_ends_the_old_one() -> None:
    h = fight(wizard(), goblin(), goblin("orc"))
    _held(h)
    h.end_turn()
    h.rolls(2).end_turn()  # the goblin's save at the end of its turn: 2 fails
    h.end_turn()
    assert h.state.active == "sera"
    cast(h.rolls(3), "sera", spell="hold-person", target="orc")
    assert "paralyzed" not in h.creature("gob").conditions
    assert "paralyzed" in h.creature("orc").conditions
    assert sum(e.condition == CONCENTRATING for e in h.state.condition_effects.values()) == 1


def test_hold_person_upcast_takes_a_second_target_not_a_third() -> None:
    h = fight(wizard(), goblin(), goblin("orc"), goblin("imp"))
    code, _ = refused(h, "sera", spell="hold-person", slot=3, targets=["gob", "orc", "imp"])
    assert code == "too_many_targets"
    cast(h.rolls(20, 1), "sera", spell="hold-person", slot=3, targets=["gob", "orc"])
    assert "paralyzed" not in h.creature("gob").conditions
    assert "paralyzed" in h.creature("orc").conditions


# -- misty step ------------------------------------------------------------------------------------------


def test_misty_step_teleports_to_a_zone_within_30_ft_as_a_bonus_action() -> None:
    h = fight(wizard(), goblin())
    h.send("cast_bonus", h.player("player-sera"), creature="sera", spell="misty-step", zone="bar")
    assert h.creature("sera").zone == "bar"
    assert h.of_type(ZoneEntered)[-1].cost == 0
    assert h.creature("sera").resources["spell-slots-2"] == 2
    h2 = fight(wizard(), goblin())
    code, _ = refused(h2, "sera", "cast_bonus", spell="misty-step", zone="yard")  # 45 ft
    assert code == "out_of_range"


# -- thunderwave: the push is forced movement --------------------------------------------------------


def hall_with_spikes() -> Arena:
    return parse_arena(
        {
            "id": "spiked",
            "name": "Spiked hall",
            "zones": [
                {"id": "hall", "name": "Hall", "size": 15},
                {"id": "bar", "name": "Bar", "size": 15},
            ],
            "links": [{"a": "hall", "b": "bar", "direction": "beside"}],
            "assets": [
                {
                    "id": "spikes",
                    "name": "Wall of spikes",
                    "kind": "prop",
                    "zone": "hall",
                    "forced": {
                        "save": {"ability": "dex", "damage": "2d6", "damage_type": "piercing"}
                    },
                }
            ],
        }
    )


def test_thunderwave_pushes_a_failed_target_into_a_zone_or_onto_spikes() -> None:
    h = EncounterHarness(
        [wizard(), goblin(), goblin("orc"), goblin("imp")], arena=hall_with_spikes()
    )
    h.start(
        positions={"sera": "hall", "gob": "hall", "orc": "hall", "imp": "hall"},
        initiative=[20, 10, 9, 8],
    )
    # Con saves: gob 3 (fails), orc 19 (succeeds), imp 2 (fails); 2d8 once: 5 + 3 = 8;
    # the imp, forced onto the spikes, saves (Dex) against Seraphine's spell DC: 4 fails,
    # and takes 2d6: 6 + 6.
    cast(
        h.rolls(3, 19, 2, 5, 3, 4, 6, 6),
        "sera",
        spell="thunderwave",
        targets=["gob", "orc", "imp"],
        push={"gob": {"zone": "bar"}, "orc": {"zone": "bar"}, "imp": {"asset": "spikes"}},
    )
    assert {e.creature: e.amount for e in h.of_type(Damaged) if e.damage_type == "thunder"} == {
        "gob": 8,
        "orc": 4,
        "imp": 8,
    }
    assert h.creature("gob").zone == "bar"
    entered = [e for e in h.of_type(ZoneEntered) if e.creature == "gob"]
    assert entered[-1].forced and entered[-1].by == "sera"
    assert h.creature("orc").zone == "hall"  # it saved: not pushed
    assert h.creature("imp").position == "spikes"
    spike_save = h.of_type(SaveMade)[-1]
    assert (spike_save.creature, spike_save.dc, spike_save.success) == ("imp", 15, False)
    assert h.creature("imp").hp == 30 - 8 - 12
    h.assert_replay_matches()


def test_a_push_to_a_zone_that_is_not_linked_or_for_a_non_target_is_refused() -> None:
    h = fight(wizard(), goblin())
    code, _ = refused(
        h.rolls(1, 1, 1),
        "sera",
        spell="thunderwave",
        targets=["gob"],
        push={"gob": {"zone": "yard"}},
    )
    assert code == "no_clear_path"
    assert h.creature("gob").hp == 30 and h.creature("sera").resources["spell-slots-1"] == 4
    code, _ = refused(
        h, "sera", spell="thunderwave", targets=["gob"], push={"orc": {"zone": "bar"}}
    )
    assert code == "invalid_params"
    code, _ = refused(h, "sera", spell="fireball", targets=["gob"], push={"gob": {"zone": "bar"}})
    assert code == "invalid_params"


# -- the actions list each castable spell --------------------------------------------------------------


def test_the_action_details_list_each_castable_spell_with_slots_and_targets_or_zones() -> None:
    h = fight(wizard(spell_slots={"1": 0, "2": 1, "3": 2}), goblin(), positions={"gob": "yard"})
    details = {d.id: d for d in h.engine.action_details(h.state, "sera", h.player("player-sera"))}
    cast_detail = details["cast"]
    assert cast_detail.available and cast_detail.choices is not None
    choices = {c.params["spell"]: c for c in cast_detail.choices}
    # No level-1 slot left: a level-1 spell is offered with the higher slots only.
    assert choices["magic-missile"].options == {"slot": (2, 3), "target": ("gob",)}
    assert choices["thunderwave"].options == {"slot": (2, 3), "zone": ("hall", "bar")}
    assert choices["fire-bolt"].options == {"target": ("gob",)}  # 45 ft away, in sight
    assert choices["shocking-grasp"].options == {"target": ()}  # a touch: nobody near
    assert choices["scorching-ray"].options["slot"] == (2, 3)
    assert choices["fireball"].options == {"slot": (3,), "zone": ("hall", "bar", "yard")}
    assert choices["lightning-bolt"].options["zone"] == ("hall", "bar", "yard")
    assert choices["fireball"].label == "Fireball (level 3)"
    bonus = {c.params["spell"]: c for c in details["cast_bonus"].choices or ()}
    assert bonus["misty-step"].options == {"slot": (2, 3), "zone": ("bar",)}
    fighter = make("bob", controller="player-bob")
    h2 = fight(fighter, goblin())
    no = {d.id: d for d in h2.engine.action_details(h2.state, "bob", h2.player("player-bob"))}
    assert not no["cast"].available and no["cast"].code == "no_such_feature"
    assert no["cast"].choices == ()
