"""Counterspell, Bane, Sleep, Dispel Magic, Haste and Slow (issue 31, item 3), and the
SDK's penalty die and flat roll bonus they need.
Seraphine (Int 18: +4, spell DC 15) from her real sheet, against goblins (no save
bonus, blade +4); flanking is off, so that every attack roll is one d20."""

from __future__ import annotations

import copy
from typing import Any

import attrs
from helpers import make
from test_spells import SERAPHINE, keep

import zonekeep.plugins.srd as srd_plugin
from zonekeep.plugins.spells import CONCENTRATING, spell_choices
from zonekeep.plugins.spells._control import spell_level, spell_source
from zonekeep.plugins.spells.catalog import SPELLS
from zonekeep.sdk import (
    Action,
    ActionTaken,
    AttackMade,
    CheckRolled,
    ConditionEffectEnded,
    Creature,
    Damaged,
    EncounterOptions,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    SaveMade,
    ScriptedEntropy,
    Trait,
    TurnSkipped,
    ZoneAffected,
    movement_left,
    roll,
)
from zonekeep.sdk.host import (
    character_creature,
    dice_in,
    entry_creatures,
    event_to_dict,
    parse_character,
)
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server._log import describe

SPELL_IDS = [
    "bane",
    "sleep",
    "dispel-magic",
    "hold-person",
    "magic-missile",
    "counterspell",
    "haste",
    "slow",
]


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
    assert "15 (d20: 14+4 -d4 3; bane)" in (describe(made, h.state) or "")  # the server's log
    # The verifier pairs the penalty die with its draw, after the d20's.
    assert [(sides, face) for _, sides, face in dice_in(event_to_dict(made))] == [(20, 14), (4, 3)]
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
    # The pool's 5d8 is in the zone_affected event aimed at the yard, not a loose die.
    (aimed,) = [e for e in events if isinstance(e, ZoneAffected)]
    assert (aimed.zone, aimed.damage, aimed.source) == ("yard", 0, "Sleep (level 1)")
    assert aimed.roll is not None and (aimed.roll.expr, aimed.roll.total) == ("5d8", 15)
    assert h.unrecorded_dice() == []
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


# -- Counterspell ------------------------------------------------------------------------------


def foe(cid: str = "vex", level: int = 5) -> Creature:
    """A twin of Seraphine on the other side, who knows Counterspell."""
    return attrs.evolve(mage(cid, level), side="foes")


def spent_by(events: tuple[Any, ...], who: str) -> list[tuple[str, int]]:
    return [
        (e.resource, e.left)
        for e in events
        if isinstance(e, ResourceSpent)
        and e.creature == who
        and e.resource.startswith("spell")
        and e.resource != "spells-this-turn"
    ]


def test_a_foe_is_asked_before_the_spell_and_its_counterspell_stops_it() -> None:
    h = fight(mage(), foe(), goblin("gob", hp=30))
    events = cast(h, "sera", spell="magic-missile", target="gob")
    assert not [e for e in events if isinstance(e, Damaged)]  # it waits
    assert spent_by(events, "sera") == [("spell-slots-1", 3)]
    offered = h.decision("counterspell")
    assert (offered.controller, offered.creature, offered.options) == (
        "player-vex",
        "vex",
        ("level-3", "decline"),
    )
    assert "Sera is casting Magic Missile (level 1)" in offered.prompt
    # Sera's next command waits for the answer.
    assert h.refused("end_turn", h.player("player-sera"), creature="sera").code == (
        "decision_pending"
    )
    events = h.decide("level-3", h.player("player-vex"))
    assert [(e.creature, e.action, e.cost) for e in events if isinstance(e, ActionTaken)] == [
        ("vex", "counterspell", "reaction")
    ]
    assert spent_by(events, "vex") == [("spell-slots-3", 1)]
    assert not [e for e in events if isinstance(e, (Damaged, CheckRolled))]
    assert h.creature("gob").hp == 30 and not h.state.has_reaction("vex")
    h.assert_replay_matches()


def test_a_declined_counterspell_lets_the_spell_resolve() -> None:
    h = fight(mage(), foe(), goblin("gob", hp=30))
    cast(h, "sera", spell="magic-missile", target="gob")
    events = h.rolls(1, 2, 3).decide("decline", h.player("player-vex"))
    assert [e.amount for e in events if isinstance(e, Damaged)] == [2, 3, 4]
    assert h.creature("vex").resources["spell-slots-3"] == 2 and h.state.has_reaction("vex")


def test_against_a_higher_spell_a_check_dc_10_plus_its_level() -> None:
    # Hold Person with a level 4 slot against Counterspell at level 3: DC 14, Int +4.
    for d20, countered in ((9, False), (10, True)):
        h = fight(mage(level=7), foe(), goblin("gob"))
        cast(h, "sera", spell="hold-person", slot=4, target="gob")
        events = h.rolls(d20, 2).decide("level-3", h.player("player-vex"))
        checks = [
            (e.creature, e.roll.total, e.dc, e.success)
            for e in events
            if isinstance(e, CheckRolled)
        ]
        assert checks == [("vex", d20 + 4, 14, countered)]
        assert ("paralyzed" in h.creature("gob").conditions) is not countered
        assert h.creature("sera").resources["spell-slots-4"] == 0


def test_an_upcast_counterspell_stops_a_level_4_spell_without_a_check() -> None:
    h = fight(mage(level=7), foe(level=7), goblin("gob"))
    cast(h, "sera", spell="hold-person", slot=4, target="gob")
    assert h.decision("counterspell").options == ("level-3", "level-4", "decline")
    events = h.decide("level-4", h.player("player-vex"))
    assert not [e for e in events if isinstance(e, CheckRolled)]
    assert spent_by(events, "vex") == [("spell-slots-4", 0)]
    assert "paralyzed" not in h.creature("gob").conditions


def test_no_prompt_for_an_ally_a_foe_beyond_60_ft_or_one_without_a_reaction() -> None:
    ally = mage("ally")
    h = fight(mage(), ally, foe(), goblin("gob", hp=30), where={"vex": "far"})
    events = h.rolls(1, 1, 1).send(
        "cast", h.player("player-sera"), creature="sera", spell="magic-missile", target="gob"
    )
    assert h.state.pending == [] and len([e for e in events if isinstance(e, Damaged)]) == 3


def test_a_refused_cast_asks_nobody_and_spends_nothing() -> None:
    h = fight(mage(), foe(), goblin("gob"), where={"gob": "far"})
    code, _ = refused(h, "sera", spell="hold-person", target="gob")  # beyond 60 ft
    assert code == "out_of_range"
    assert h.state.pending == [] and h.creature("sera").resources["spell-slots-2"] == 3


def test_two_foes_are_asked_in_turn() -> None:
    h = fight(mage(), foe("vex"), foe("nix"), goblin("gob", hp=30))
    cast(h, "sera", spell="magic-missile", target="gob")
    h.decide("decline", h.player("player-vex"))
    assert h.decision("counterspell").creature == "nix"
    h.decide("level-3", h.player("player-nix"))
    assert h.state.pending == [] and h.creature("gob").hp == 30


def test_an_srd_caster_is_countered_and_a_monster_counters() -> None:
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == "cult-fanatic")
    (made,) = entry_creatures(entry, id_prefix="fan")
    fanatic = attrs.evolve(made, id="fan")
    # A monster's Spellcasting that knows Counterspell: the GM is asked for it.
    archmage = make(
        "arc",
        "foes",
        actions=(
            Action(
                "spellcasting",
                "Spellcasting",
                params={
                    "ability": "int",
                    "dc": 14,
                    "slots": {"3": 2},
                    "prepared": ["counterspell"],
                },
            ),
        ),
        abilities={"int": 3},
    )
    h = fight(mage(), archmage, fanatic, goblin("gob", hp=30))
    cast(h, "sera", spell="magic-missile", target="gob")
    offered = h.decision("counterspell")
    assert (offered.controller, offered.creature, offered.options) == (
        "gm",
        "arc",
        ("level-3", "decline"),
    )
    h.decide("level-3")
    assert h.creature("gob").hp == 30 and h.creature("arc").resources["spell-slots-3"] == 1
    h.end_turn()  # (the fanatic's initiative comes before the other foe's)
    # The cult fanatic's Inflict Wounds (level 1): Sera is asked, counters it.
    assert h.state.active == "fan"
    h.send("cast", creature="fan", spell="inflict-wounds", target="sera")
    offered = h.decision("counterspell")
    assert offered.creature == "sera" and "Cult Fanatic is casting Inflict Wounds" in offered.prompt
    events = h.decide("level-3", h.player("player-sera"))
    assert not [e for e in events if isinstance(e, (AttackMade, Damaged))]
    assert h.creature("fan").resources["spell-slots-1"] == 3
    assert h.creature("sera").resources["spell-slots-3"] == 1
    h.assert_replay_matches()


def test_the_dust_mephit_casts_its_sleep_once_a_day_and_fey_ancestry_resists() -> None:
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == "dust-mephit")
    (made,) = entry_creatures(entry, id_prefix="dus")
    mephit = attrs.evolve(made, id="dus")
    elf = make(
        "elf",
        hp=4,
        traits=(Trait("fey-ancestry", "Fey Ancestry", params={"against": ["charmed"]}),),
    )
    h = fight(mephit, elf, make("aria", hp=10), make("bram", hp=30))
    # 5d8 = 10: the elf (4 hit points) is passed over; Aria (10) falls asleep, Bram not.
    h.rolls(2, 2, 2, 2, 2).send("cast", creature="dus", spell="sleep", zone="hall")
    asleep = [c for c in ("elf", "aria", "bram") if "unconscious" in h.creature(c).conditions]
    assert asleep == ["aria"]
    assert h.creature("dus").resources["innate-sleep"] == 0


# -- Haste ----------------------------------------------------------------------------------


def hasted() -> EncounterHarness:
    """Sera hastes Aria (AC 12, speed 30); then the goblin, then Aria's turn."""
    h = fight(mage(), goblin("gob", hp=30), make("aria", hp=20))
    assert [c for c in h.state.creatures] == ["sera", "gob", "aria"]
    cast(h, "sera", spell="haste", target="aria")
    assert "hasted" in h.creature("aria").conditions
    return h


def test_haste_gives_plus_2_ac_and_advantage_on_dex_saves() -> None:
    h = hasted()
    held = [e for e in h.state.condition_effects.values() if e.condition == CONCENTRATING]
    assert [e.source for e in held] == ["Haste (level 3)"]
    h.end_turn()
    events = h.rolls(10, 1).send("attack", creature="gob", target="aria", attack="blade")
    made = next(e for e in events if isinstance(e, AttackMade))
    assert (made.target_ac, made.hit) == (14, True)  # 10 + 4 against 12 + 2
    ctx = RuleContext(h.state, ScriptedEntropy([5, 17]), h.engine.hook)
    save = ctx.roll("d20", RollRequest("save", "aria", ability="dex"))
    assert (save.advantage, save.total) == ("advantage", 17)
    assert ctx.modifiers(RollRequest("save", "aria", ability="wis")) == []


def test_a_hasted_turn_doubles_speed_and_has_one_limited_extra_action() -> None:
    h = hasted()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "aria"
    assert movement_left(h.state, h.creature("aria")) == 60
    assert h.creature("aria").resources["haste-action"] == 1
    aria = h.player("player-aria")
    refusal = h.refused("hasted_action", aria, creature="aria", use="hide")
    assert refusal.code == "invalid_params"
    h.rolls(15, 3).send("hasted_action", aria, creature="aria", use="attack", target="gob")
    assert h.creature("gob").hp == 30 - 5  # one blade: 3 + 2
    assert h.refused("hasted_action", aria, creature="aria", use="dash").code == "no_uses_left"
    # Its own action is still there: a Dash.
    h.send("dash", aria, creature="aria")
    assert movement_left(h.state, h.creature("aria")) == 90


def test_when_haste_ends_the_creature_loses_its_next_turn() -> None:
    h = hasted()
    for _ in range(3):
        h.end_turn()
    assert h.state.active == "sera"
    cast(h.rolls(1), "sera", spell="bane", targets=["gob"])  # a new concentration ends Haste
    assert "hasted" not in h.creature("aria").conditions
    assert "lethargic" in h.creature("aria").conditions and not h.state.has_reaction("aria")
    h.end_turn()  # Sera's; then the goblin's
    events = h.end_turn()
    skipped = [e for e in events if isinstance(e, TurnSkipped)]
    assert [(e.creature, e.reason) for e in skipped] == [("aria", "lethargic: Haste ended")]
    assert h.state.active == "sera"  # round 3
    h.end_turn()
    h.end_turn()
    assert h.state.active == "aria" and "lethargic" not in h.creature("aria").conditions
    assert h.state.has_reaction("aria")


def test_hasted_action_without_haste_is_refused() -> None:
    h = fight(mage(), goblin("gob"))
    refusal = h.refused("hasted_action", h.player("player-sera"), creature="sera", use="dash")
    assert refusal.code == "not_hasted"


# -- Slow -----------------------------------------------------------------------------------


def slowed() -> EncounterHarness:
    """Sera slows a goblin (it fails, 3) and not another (15): the first loses its reaction."""
    h = fight(mage(), make("aria", hp=20), goblin("gob"), goblin("gob2"))
    events = cast(h.rolls(3, 15), "sera", spell="slow", zone="hall", targets=["gob", "gob2"])
    assert [(e.creature, e.success) for e in events if isinstance(e, SaveMade)] == [
        ("gob", False),
        ("gob2", True),
    ]
    assert "slowed" in h.creature("gob").conditions
    assert not h.state.has_reaction("gob") and h.state.has_reaction("gob2")
    return h


def test_slow_takes_2_from_ac_and_dex_saves() -> None:
    h = slowed()
    h.end_turn()
    events = h.rolls(7, 1).send("attack", h.player("player-aria"), creature="aria", target="gob")
    made = next(e for e in events if isinstance(e, AttackMade))
    assert (made.target_ac, made.hit) == (11, True)  # 7 + 4 against 13 - 2
    ctx = RuleContext(h.state, ScriptedEntropy([12]), h.engine.hook)
    save = ctx.roll("d20", RollRequest("save", "gob", ability="dex"), bonus=1)
    assert (save.modifier, save.total, save.sources) == (-1, 11, ("bonus:slow -2",))


def test_a_slowed_turn_has_half_speed_no_reaction_and_it_saves_at_its_end() -> None:
    h = slowed()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "gob"
    assert movement_left(h.state, h.creature("gob")) == 15
    assert not h.state.has_reaction("gob")
    events = h.rolls(16).end_turn()  # Wisdom save at the end of its turn: 16 >= 15
    ended = [e for e in events if isinstance(e, ConditionEffectEnded) and e.creature == "gob"]
    assert [e.condition for e in ended] == ["slowed"]


def test_a_slowed_creature_takes_an_action_or_a_bonus_action_not_both() -> None:
    h = fight(mage(), cleric_ally(), goblin("gob"))
    cast(h.rolls(2), "sera", spell="slow", zone="hall", targets=["hilda"])
    while h.state.active != "hilda":
        h.end_turn()
    hilda = h.player("player-hilda")
    h.rolls(1).send("cast_bonus", hilda, creature="hilda", spell="healing-word", target="sera")
    refusal = h.refused("dash", hilda, creature="hilda")
    assert refusal.code == "slowed" and "not both" in refusal.message


def test_slow_takes_at_most_six_targets_in_its_area() -> None:
    foes = [goblin(f"g{i}") for i in range(7)]
    h = fight(mage(), *foes, where={"g6": "far"})
    code, _ = refused(h, "sera", spell="slow", zone="hall", targets=[f"g{i}" for i in range(7)])
    assert code == "too_many_targets"
    code, _ = refused(h, "sera", spell="slow", zone="hall", targets=["g0", "g6"])
    assert code == "invalid_target"
    assert h.creature("sera").resources["spell-slots-3"] == 2


def cleric_ally() -> Creature:
    from test_spells import cleric

    return cleric()


def test_a_slowed_creature_with_extra_attack_makes_one_attack() -> None:
    brute = goblin("gob", traits=(Trait("extra-attack", "Extra Attack"),))
    h = fight(mage(), brute, make("aria", hp=30))
    cast(h.rolls(2), "sera", spell="slow", zone="hall", targets=["gob"])
    h.end_turn()
    assert h.state.active == "gob"
    h.rolls(1).send("attack", creature="gob", target="aria")  # a natural 1: a miss
    assert h.state.resources.attacks == 1  # Extra Attack granted one more...
    refusal = h.refused("attack", creature="gob", target="aria")
    assert refusal.code == "slowed" and "one attack" in refusal.message  # ...Slow forbids it


def test_a_counterspell_prompt_left_to_its_deadline_lets_the_spell_resolve() -> None:
    h = fight(mage(), foe(), goblin("gob", hp=30))
    cast(h, "sera", spell="magic-missile", target="gob")
    events = h.rolls(1, 1, 1).time_out("counterspell")
    assert [e.amount for e in events if isinstance(e, Damaged)] == [2, 2, 2]
    assert h.creature("vex").resources["spell-slots-3"] == 2


def test_haste_and_dispel_magic_may_target_the_caster() -> None:
    h = fight(mage(), goblin("gob"))
    choices = {
        c.label: c.options.get("target", ())
        for c in spell_choices(h.state, h.creature("sera"), "action")
    }
    assert "sera" in choices["Haste (level 3)"] and "sera" in choices["Dispel Magic (level 3)"]
    assert "sera" not in choices["Hold Person (level 2)"]


def test_sleep_is_offered_its_zones_and_no_targets() -> None:
    """Sleep chooses its own sleepers (by hit points): its choice lists no targets, so a
    client does not send any (the server refuses them)."""
    h = sleepers()
    (choice,) = [
        c
        for c in spell_choices(h.state, h.creature("sera"), "action")
        if c.params["spell"] == "sleep"
    ]
    assert "yard" in choice.options["zone"]
    assert "targets_by_zone" not in choice.info
