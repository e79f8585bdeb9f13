"""Bane, Sleep and Dispel Magic (issue 31, item 3), and the SDK's penalty die Bane needs.
Seraphine (Int 18: +4, spell DC 15) from her real sheet, against goblins (no save
bonus, blade +4); flanking is off, so that every attack roll is one d20."""

from __future__ import annotations

import copy
from typing import Any

from helpers import make
from test_spells import SERAPHINE, keep

from zonekeep.plugins.spells import CONCENTRATING
from zonekeep.plugins.spells._control import spell_level, spell_source
from zonekeep.plugins.spells.catalog import SPELLS
from zonekeep.sdk import (
    AttackMade,
    CheckRolled,
    ConditionEffectEnded,
    Creature,
    EncounterOptions,
    RollModifier,
    RuleContext,
    SaveMade,
    ScriptedEntropy,
    roll,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness

SPELL_IDS = ["bane", "sleep", "dispel-magic", "hold-person", "magic-missile"]


def mage(cid: str = "sera", level: int = 5) -> Creature:
    """Seraphine (or a twin called ``cid``) with the spells of these tests."""
    data = copy.deepcopy(SERAPHINE)
    data["classes"][0]["level"] = level
    data["name"] = cid.capitalize()
    data["spells_known"] = list(SPELL_IDS)
    data["spells_prepared"] = list(SPELL_IDS)
    if level >= 7:
        data["spell_slots"] = {"1": 4, "2": 3, "3": 3, "4": 1}
    return character_creature(parse_character(data), cid, f"player-{cid}")


def fight(
    caster: Creature, *others: Creature, where: dict[str, str] | None = None
) -> EncounterHarness:
    h = EncounterHarness([caster, *others], arena=keep(), options=EncounterOptions(flanking=False))
    places = {c.id: "hall" for c in (caster, *others)} | (where or {})
    h.start(positions=places, initiative=[20, *range(10, 10 - len(others), -1)])
    assert h.state.active == caster.id
    return h


def cast(h: EncounterHarness, who: str, **params: Any) -> tuple[Any, ...]:
    return h.send("cast", h.player(f"player-{who}"), creature=who, **params)


def refused(h: EncounterHarness, who: str, **params: Any) -> tuple[str, str]:
    refusal = h.refused("cast", h.player(f"player-{who}"), creature=who, **params)
    return refusal.code, refusal.message


def goblin(cid: str, hp: int = 7, **kw: Any) -> Creature:
    return make(cid, "foes", hp=hp, ac=13, **kw)


# -- the penalty die (SDK) ---------------------------------------------------------------------


def test_a_penalty_die_is_drawn_last_and_subtracted_from_the_total() -> None:
    record = roll(ScriptedEntropy([12, 3, 2]), "d20", expertise=4, penalty=4, bonus=5)
    assert (record.kept, record.expertise_roll, record.penalty, record.penalty_roll) == (
        (12,),
        3,
        4,
        2,
    )
    assert record.total == 12 + 3 - 2 + 5
    plain = roll(ScriptedEntropy([12]), "d20", bonus=5)
    assert (plain.penalty, plain.penalty_roll, plain.total) == (0, 0, 17)


def test_two_penalty_sources_give_one_die_the_largest() -> None:
    h = fight(mage(), goblin("gob"))
    ctx = RuleContext(h.state, ScriptedEntropy([10, 4, 6]), h.engine.hook)
    extra = (RollModifier("penalty", "bane", die=4), RollModifier("penalty", "curse", die=6))
    record = ctx.roll("d20", extra=extra)
    assert (record.penalty, record.penalty_roll, record.total) == (6, 4, 6)


# -- Bane ---------------------------------------------------------------------------------------


def test_bane_takes_a_d4_from_the_attacks_and_saves_of_those_who_fail() -> None:
    h = fight(mage(), goblin("gob"), goblin("gob2"))
    # Charisma saves against DC 15: 3 fails, 15 succeeds.
    events = cast(h.rolls(3, 15), "sera", spell="bane", targets=["gob", "gob2"])
    assert [(e.creature, e.roll.total, e.success) for e in events if isinstance(e, SaveMade)] == [
        ("gob", 3, False),
        ("gob2", 15, True),
    ]
    assert "bane" in h.creature("gob").conditions and "bane" not in h.creature("gob2").conditions
    concentration = next(
        e for e in h.state.condition_effects.values() if e.condition == CONCENTRATING
    )
    assert concentration.source == "Bane (level 1)"
    assert h.creature("sera").resources["spell-slots-1"] == 3
    h.end_turn()
    # The goblin's blade: d20 14, then the penalty d4 3: 14 + 4 - 3 = 15 against AC 12.
    events = h.rolls(14, 3, 1, 15).send("attack", creature="gob", target="sera", attack="blade")
    made = next(e for e in events if isinstance(e, AttackMade))
    assert (made.roll.total, made.roll.penalty, made.roll.penalty_roll, made.hit) == (
        15,
        4,
        3,
        True,
    )
    assert "penalty:bane" in made.roll.sources
    h.end_turn()
    # The other goblin is not baned: 14 + 4.
    events = h.rolls(14, 1, 15).send("attack", creature="gob2", target="sera", attack="blade")
    made = next(e for e in events if isinstance(e, AttackMade))
    assert (made.roll.total, made.roll.penalty) == (18, 0)
    h.assert_replay_matches()


def test_bane_upcast_takes_a_fourth_target_and_no_more() -> None:
    foes = [goblin(f"g{i}") for i in range(5)]
    h = fight(mage(), *foes)
    code, _ = refused(h, "sera", spell="bane", slot=2, targets=[f"g{i}" for i in range(5)])
    assert code == "too_many_targets"
    assert h.creature("sera").resources["spell-slots-2"] == 3
    cast(h.rolls(1, 1, 1, 1), "sera", spell="bane", slot=2, targets=[f"g{i}" for i in range(4)])
    assert [("bane" in h.creature(f"g{i}").conditions) for i in range(5)] == [
        True,
        True,
        True,
        True,
        False,
    ]


def test_bane_out_of_range_is_refused_and_ending_concentration_ends_it() -> None:
    h = fight(mage(), goblin("gob"), goblin("far"), where={"far": "yard"})
    code, _ = refused(h, "sera", spell="bane", targets=["far"])  # 45 ft > 30 ft
    assert code == "out_of_range" and h.creature("sera").resources["spell-slots-1"] == 4
    cast(h.rolls(2), "sera", spell="bane", targets=["gob"])
    for _ in range(3):
        h.end_turn()
    assert h.state.active == "sera" and "bane" in h.creature("gob").conditions
    cast(h.rolls(2), "sera", spell="hold-person", target="gob")  # a new concentration
    assert "bane" not in h.creature("gob").conditions


# -- Sleep --------------------------------------------------------------------------------------


def sleepers() -> EncounterHarness:
    return fight(
        mage(),
        goblin("g5", hp=5),
        goblin("g7", hp=7),
        goblin("g12", hp=12),
        goblin("g9", hp=9, condition_immunities=["charmed"]),
        where={"g5": "yard", "g7": "yard", "g12": "yard", "g9": "yard"},
    )


def test_sleep_puts_the_fewest_hit_points_to_sleep_first_while_the_pool_lasts() -> None:
    h = sleepers()
    # 5d8 = 15: g5 (5) then g7 (7) fall asleep, 3 left is not enough for g12; g9 is
    # immune to being charmed: skipped.
    events = cast(h.rolls(3, 3, 3, 3, 3), "sera", spell="sleep", zone="yard")
    asleep = [c for c in ("g5", "g7", "g12", "g9") if "unconscious" in h.creature(c).conditions]
    assert asleep == ["g5", "g7"]
    effects = [e for e in h.state.condition_effects.values() if e.condition == "unconscious"]
    assert {(e.creature, e.source, e.rounds) for e in effects} == {
        ("g5", "Sleep (level 1)", 10),
        ("g7", "Sleep (level 1)", 10),
    }
    assert len(events) > 0 and h.creature("sera").resources["spell-slots-1"] == 3
    h.assert_replay_matches()


def test_damage_wakes_a_sleeper() -> None:
    h = sleepers()
    cast(h.rolls(3, 3, 3, 3, 3), "sera", spell="sleep", zone="yard")
    h.end_turn()
    # One hit point of damage (the GM's) wakes g7.
    h.send("damage", creature="g7", amount=1, damage_type="force")
    assert "unconscious" not in h.creature("g7").conditions
    assert "unconscious" in h.creature("g5").conditions
    ended = [e for e in h.of_type(ConditionEffectEnded) if e.creature == "g7"]
    assert [e.reason for e in ended] == ["G7 took damage"]


def test_sleep_upcast_rolls_7d8_and_wants_no_targets() -> None:
    h = sleepers()
    code, _ = refused(h, "sera", spell="sleep", zone="yard", targets=["g5"])
    assert code == "invalid_params"
    # 7d8 = 7 * 4 = 28: 5 + 7 + 12 = 24 <= 28: three asleep.
    cast(h.rolls(4, 4, 4, 4, 4, 4, 4), "sera", spell="sleep", slot=2, zone="yard")
    asleep = [c for c in ("g5", "g7", "g12", "g9") if "unconscious" in h.creature(c).conditions]
    assert asleep == ["g5", "g7", "g12"]
    assert {
        e.source for e in h.state.condition_effects.values() if e.condition == "unconscious"
    } == {"Sleep (level 2)"}


# -- Dispel Magic ------------------------------------------------------------------------------


def test_dispel_magic_ends_a_concentration_spell_at_its_source() -> None:
    h = fight(mage(), mage("vex"), goblin("gob"))
    cast(h.rolls(2), "sera", spell="hold-person", target="gob")
    assert "paralyzed" in h.creature("gob").conditions
    h.end_turn()
    events = cast(h, "vex", spell="dispel-magic", target="gob")
    assert "paralyzed" not in h.creature("gob").conditions
    assert CONCENTRATING not in h.creature("sera").conditions
    assert not [e for e in events if isinstance(e, CheckRolled)]  # level 2 <= 3: no check
    assert h.creature("vex").resources["spell-slots-3"] == 1
    h.assert_replay_matches()


def test_a_higher_spell_needs_a_check_dc_10_plus_its_level() -> None:
    # Hold Person cast with a level 4 slot: Dispel Magic at level 3 needs DC 14 with
    # Intelligence (+4): 9 + 4 = 13 fails, 10 + 4 = 14 succeeds.
    for d20, ends in ((9, False), (10, True)):
        h = fight(mage(level=7), mage("vex"), goblin("gob"))
        cast(h.rolls(2), "sera", spell="hold-person", slot=4, target="gob")
        held = [e for e in h.state.condition_effects.values() if e.condition == CONCENTRATING]
        assert [spell_level(e.source) for e in held] == [("Hold Person", 4)]
        h.end_turn()
        events = cast(h.rolls(d20), "vex", spell="dispel-magic", target="gob")
        checks = [(e.roll.total, e.dc, e.success) for e in events if isinstance(e, CheckRolled)]
        assert checks == [(d20 + 4, 14, ends)]
        assert ("paralyzed" in h.creature("gob").conditions) is not ends


def test_dispel_magic_upcast_to_4_ends_a_level_4_spell_without_a_check() -> None:
    h = fight(mage(level=7), mage("vex", level=7), goblin("gob"))
    cast(h.rolls(2), "sera", spell="hold-person", slot=4, target="gob")
    h.end_turn()
    events = cast(h, "vex", spell="dispel-magic", slot=4, target="gob")
    assert not [e for e in events if isinstance(e, CheckRolled)]
    assert "paralyzed" not in h.creature("gob").conditions


def test_dispel_magic_ends_sleep_and_bane_on_its_target_only() -> None:
    h = fight(mage(), mage("vex"), goblin("gob"), goblin("gob2"))
    cast(h.rolls(1, 1), "sera", spell="bane", targets=["gob", "gob2"])
    h.end_turn()
    cast(h, "vex", spell="dispel-magic", target="gob2")
    # Bane is one spell: ending it at its source frees both goblins.
    assert "bane" not in h.creature("gob").conditions
    assert CONCENTRATING not in h.creature("sera").conditions


def test_dispel_magic_on_a_creature_without_spells_spends_the_slot_only() -> None:
    h = fight(mage(), goblin("gob"))
    events = cast(h, "sera", spell="dispel-magic", target="gob")
    assert not [e for e in events if isinstance(e, ConditionEffectEnded)]
    assert h.creature("sera").resources["spell-slots-3"] == 1


def test_the_sources_record_name_and_level() -> None:
    assert spell_source(SPELLS["bane"], 3) == "Bane (level 3)"
    assert spell_level("Bane (level 3)") == ("Bane", 3)
    assert spell_level("gob") is None and spell_level("Bane") is None
