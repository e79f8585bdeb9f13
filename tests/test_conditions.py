"""Condition durations (plugins/durations.py) and declared condition ids, with exact outcomes.

Aria, Bram (party) and a goblin act in that order (initiative 15, 12, 10). Effects
are applied by the GM with ``apply_effect`` and end on their own at the end of a
round, at a turn's start or end, on a save, or with their parent.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from helpers import make

from zonekeep.sdk import (
    ConditionConflict,
    ConditionEffect,
    ConditionEffectApplied,
    ConditionEffectEnded,
    ConditionEffectTicked,
    ConditionSpec,
    Event,
    RoundEnded,
    SaveMade,
    TurnEnded,
    TurnStarted,
    hookimpl,
)
from zonekeep.sdk._serial import event_from_dict, event_to_dict
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import declared_conditions, state_to_dict
from zonekeep.sdk.testing import EncounterHarness

ALICE = EncounterHarness.player("player-aria")


def trio() -> EncounterHarness:
    """Aria, Bram and a goblin (Wisdom save +2), taking their turns in that order."""
    h = EncounterHarness([make("aria"), make("bram"), make("gob", "foes", saves={"wis": 2})])
    h.start(initiative=[15, 12, 10])
    assert (h.state.round, h.state.active) == (1, "aria")
    return h


def apply(h: EncounterHarness, **params: object) -> ConditionEffect:
    """Apply an effect as the GM and return it as the event carried it."""
    (event,) = h.send("apply_effect", **params)
    assert isinstance(event, ConditionEffectApplied)
    assert h.state.condition_effects[event.effect.id] == event.effect
    return event.effect


def ended(events: Iterable[Event]) -> list[tuple[str, str]]:
    return [(e.effect, e.reason) for e in events if isinstance(e, ConditionEffectEnded)]


def end_turns(h: EncounterHarness, count: int) -> tuple[Event, ...]:
    """End ``count`` turns; return the events of the last one."""
    events: tuple[Event, ...] = ()
    for _ in range(count):
        events = h.end_turn()
    return events


# -- durations in rounds ---------------------------------------------------------------------------


def test_a_two_round_effect_applied_in_round_1_ends_at_the_end_of_round_2() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="restrained", rounds=2, source="Web")
    assert effect.id == f"c{h.state.seq}"  # named after the event that applied it
    assert (effect.rounds, effect.applied_round, effect.applied_turn) == (2, 1, "aria")
    assert effect.source == "Web"
    assert "restrained" in h.creature("gob").conditions

    last = end_turns(h, 3)  # aria, bram, gob: round 1 ends
    ticked = [e for e in last if isinstance(e, ConditionEffectTicked)]
    assert ticked == [ConditionEffectTicked(effect.id, "gob", 1)]
    assert last.index(ticked[0]) < last.index(RoundEnded(1))
    assert h.state.condition_effects[effect.id].rounds == 1
    assert (h.state.round, "restrained" in h.creature("gob").conditions) == (2, True)

    assert ended(end_turns(h, 2)) == []  # aria, bram in round 2
    last = h.end_turn()  # the goblin's turn ends, then round 2
    assert ended(last) == [(effect.id, "its rounds ran out at the end of round 2")]
    end = next(e for e in last if isinstance(e, ConditionEffectEnded))
    assert (end.creature, end.condition) == ("gob", "restrained")
    assert last.index(TurnEnded("gob")) < last.index(end) < last.index(RoundEnded(2))
    assert "restrained" not in h.creature("gob").conditions
    assert h.state.condition_effects == {}
    h.assert_replay_matches()


def test_an_effect_applied_before_the_first_round_counts_round_1() -> None:
    h = EncounterHarness([make("aria"), make("gob", "foes")])
    h.send("set_surprise", surprised=[])
    effect = apply(h, creature="gob", condition="hexed", rounds=1)
    assert effect.applied_round == 0
    h.send("place", positions={})
    h.rolls(15, 10).send("roll_initiative")
    h.end_turn()
    last = h.end_turn()
    assert ended(last) == [(effect.id, "its rounds ran out at the end of round 1")]
    h.assert_replay_matches()


# -- until the start or end of a named creature's turn ------------------------------------------


def test_until_the_start_of_a_named_creatures_next_turn() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="frightened", until="start_of_turn", of="aria")
    assert (effect.until, effect.until_creature) == ("start", "aria")
    assert ended(end_turns(h, 2)) == []  # aria, bram
    assert "frightened" in h.creature("gob").conditions
    last = h.end_turn()  # the goblin ends its turn; round 2 starts with Aria
    assert ended(last) == [(effect.id, "the start of Aria's turn")]
    end = next(e for e in last if isinstance(e, ConditionEffectEnded))
    assert last.index(TurnStarted("aria", 0, 0)) < last.index(end)
    assert "frightened" not in h.creature("gob").conditions
    h.assert_replay_matches()


def test_until_the_end_of_the_turn_of_whoever_is_acting_waits_for_its_next_turn() -> None:
    # Stunning Strike: "until the end of your next turn", applied during that turn.
    h = trio()
    effect = apply(h, creature="gob", condition="stunned", until="end_of_turn", of="aria")
    assert ended(h.end_turn()) == []  # Aria's current turn does not count
    assert ended(end_turns(h, 2)) == []  # bram, gob
    assert h.state.round == 2
    assert "stunned" in h.creature("gob").conditions
    last = h.end_turn()  # Aria's next turn ends
    assert ended(last) == [(effect.id, "the end of Aria's turn")]
    end = next(e for e in last if isinstance(e, ConditionEffectEnded))
    assert last.index(end) < last.index(TurnEnded("aria"))
    assert "stunned" not in h.creature("gob").conditions
    h.assert_replay_matches()


def test_until_the_end_of_its_own_turn_by_default() -> None:
    h = trio()
    effect = apply(h, creature="bram", condition="blessed", until="end_of_turn")
    assert effect.until_creature == "bram"
    assert ended(h.end_turn()) == []  # aria
    assert ended(h.end_turn()) == [(effect.id, "the end of Bram's turn")]  # bram, round 1
    assert h.state.round == 1
    h.assert_replay_matches()


def test_rounds_and_a_turn_boundary_end_at_whichever_comes_first() -> None:
    h = trio()
    effect = apply(
        h, creature="gob", condition="slowed", rounds=3, until="start_of_turn", of="bram"
    )
    assert ended(h.end_turn()) == [(effect.id, "the start of Bram's turn")]
    assert h.state.condition_effects == {}


# -- save ends -----------------------------------------------------------------------------------------


def test_a_save_ends_effect_fails_then_succeeds_at_the_end_of_the_creatures_turns() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="paralyzed", save="WIS", dc=13)
    assert (effect.save, effect.save_dc, effect.save_when) == ("wis", 13, "end")
    end_turns(h, 2)  # aria, bram: nobody rolls (no dice are scripted)

    last = h.rolls(10).end_turn()  # 10 + 2 = 12 against 13
    (save,) = [e for e in last if isinstance(e, SaveMade)]
    assert (save.creature, save.ability, save.roll.total, save.dc, save.success) == (
        "gob",
        "wis",
        12,
        13,
        False,
    )
    assert save.source == f"paralyzed ({effect.id})"
    assert last.index(save) < last.index(TurnEnded("gob"))
    assert ended(last) == []
    assert "paralyzed" in h.creature("gob").conditions

    end_turns(h, 2)  # aria, bram in round 2
    last = h.rolls(11).end_turn()  # 13 against 13: saved
    (save,) = [e for e in last if isinstance(e, SaveMade)]
    assert (save.roll.total, save.dc, save.success) == (13, 13, True)
    assert ended(last) == [(effect.id, "Gob made its wis save")]
    assert last.index(save) < last.index(
        next(e for e in last if isinstance(e, ConditionEffectEnded))
    )
    assert "paralyzed" not in h.creature("gob").conditions
    assert h.dice.remaining == ()
    h.assert_replay_matches()


def test_a_save_at_the_start_of_its_turns() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="charmed", save="wis", dc=10, save_when="start")
    h.end_turn()  # aria
    last = h.rolls(8).end_turn()  # bram ends; the goblin's turn starts: 10 against 10
    (save,) = [e for e in last if isinstance(e, SaveMade)]
    assert last.index(TurnStarted("gob", 2, 0)) < last.index(save)
    assert (save.roll.total, save.success) == (10, True)
    assert ended(last) == [(effect.id, "Gob made its wis save")]
    h.assert_replay_matches()


# -- parents and children ------------------------------------------------------------------------------


def test_ending_a_parent_ends_its_children_and_grandchildren() -> None:
    h = trio()
    concentration = apply(h, creature="aria", condition="concentrating")
    held = apply(h, creature="gob", condition="restrained", parent=concentration.id)
    blind = apply(h, creature="gob", condition="blinded", parent=held.id)
    other = apply(h, creature="bram", condition="blessed")
    events = h.send("end_effect_of", effect=concentration.id)
    assert ended(events) == [
        (concentration.id, "ended by the GM (gm)"),
        (held.id, f"its parent effect {concentration.id} ended"),
        (blind.id, f"its parent effect {held.id} ended"),
    ]
    assert list(h.state.condition_effects) == [other.id]
    assert "concentrating" not in h.creature("aria").conditions
    assert {"restrained", "blinded"}.isdisjoint(h.creature("gob").conditions)
    assert "blessed" in h.creature("bram").conditions
    h.assert_replay_matches()


def test_children_end_when_the_parent_runs_out_or_is_saved_against() -> None:
    h = trio()
    parent = apply(h, creature="gob", condition="paralyzed", save="wis", dc=5)
    child = apply(h, creature="gob", condition="prone", parent=parent.id)
    grandchild = apply(h, creature="aria", condition="guarding", parent=child.id)
    end_turns(h, 2)
    last = h.rolls(3).end_turn()  # 5 against 5
    assert ended(last) == [
        (parent.id, "Gob made its wis save"),
        (child.id, f"its parent effect {parent.id} ended"),
        (grandchild.id, f"its parent effect {child.id} ended"),
    ]
    assert h.state.condition_effects == {}
    h.assert_replay_matches()


def test_a_child_ends_with_its_parent_at_the_end_of_a_round() -> None:
    h = trio()
    parent = apply(h, creature="aria", condition="concentrating", rounds=1)
    child = apply(h, creature="gob", condition="restrained", parent=parent.id, rounds=5)
    last = end_turns(h, 3)
    assert ended(last) == [
        (parent.id, "its rounds ran out at the end of round 1"),
        (child.id, f"its parent effect {parent.id} ended"),
    ]
    assert not any(isinstance(e, ConditionEffectTicked) for e in last)


# -- the condition and its sources ------------------------------------------------------------------


def test_a_condition_still_given_by_another_effect_stays() -> None:
    h = trio()
    short = apply(h, creature="gob", condition="restrained", rounds=1)
    lasting = apply(h, creature="gob", condition="restrained")
    assert h.creature("gob").conditions.count("restrained") == 1
    last = end_turns(h, 3)
    assert ended(last) == [(short.id, "its rounds ran out at the end of round 1")]
    assert "restrained" in h.creature("gob").conditions  # still given by the other effect
    h.send("end_effect_of", effect=lasting.id, reason="the web burns")
    assert ended(h.events[-1:]) == [(lasting.id, "the web burns")]
    assert "restrained" not in h.creature("gob").conditions
    h.assert_replay_matches()


def test_a_condition_held_plainly_outlives_an_effect_that_also_gives_it() -> None:
    h = trio()
    h.send("grant_condition", creature="gob", condition="restrained")
    effect = apply(h, creature="gob", condition="restrained", rounds=1)
    assert h.state.plain_overlaps == [("gob", "restrained")]
    end_turns(h, 3)
    assert ended(h.events) == [(effect.id, "its rounds ran out at the end of round 1")]
    assert "restrained" in h.creature("gob").conditions
    assert h.state.plain_overlaps == []
    h.send("remove_condition", creature="gob", condition="restrained")
    assert "restrained" not in h.creature("gob").conditions


def test_a_plain_grant_during_an_effect_outlives_it() -> None:
    h = trio()
    effect = apply(h, creature="aria", condition="dodging")
    h.send("dodge", ALICE, creature="aria")  # a plain condition_applied of the same name
    h.send("end_effect_of", effect=effect.id)
    assert "dodging" in h.creature("aria").conditions
    h.assert_replay_matches()


def test_a_plain_removal_takes_the_effects_that_give_it_and_their_children() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="restrained")
    child = apply(h, creature="gob", condition="blinded", parent=effect.id)
    other = apply(h, creature="gob", condition="deafened")
    h.send("remove_condition", creature="gob", condition="restrained")
    assert list(h.state.condition_effects) == [other.id]
    assert child.id not in h.state.condition_effects
    assert sorted(h.creature("gob").conditions) == ["deafened"]
    h.assert_replay_matches()


# -- refusals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        (
            {"parent": "c999"},
            "unknown_effect",
            "no condition effect, ongoing effect or asset 'c999'",
        ),
        ({"of": "bram"}, "invalid_params", "give 'until'"),
        ({"until": "next_tuesday"}, "invalid_params", "'start_of_turn' or 'end_of_turn'"),
        ({"until": "end_of_turn", "of": "nobody"}, "unknown_creature", "'nobody'"),
        ({"save": "wis"}, "invalid_params", "needs a DC"),
        ({"dc": 12}, "invalid_params", "only go with a save"),
        ({"save_when": "start"}, "invalid_params", "only go with a save"),
        ({"save": "luck", "dc": 12}, "invalid_params", "not 'luck'"),
        ({"save": "wis", "dc": 12, "save_when": "noon"}, "invalid_params", "not 'noon'"),
        ({"save": "wis", "dc": 0}, "invalid_params", "at least 1"),
        ({"rounds": 0}, "invalid_params", "at least 1 round"),
        ({"condition": "  "}, "invalid_params", "Name the condition"),
        ({"creature": "nobody"}, "unknown_creature", "'nobody'"),
    ],
)
def test_apply_effect_refusals(params: dict[str, object], code: str, words: str) -> None:
    h = trio()
    refusal = h.refused("apply_effect", **{"creature": "gob", "condition": "hexed", **params})
    assert refusal.code == code
    assert words in refusal.message


def test_only_the_gm_applies_and_ends_effects() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="hexed")
    assert h.refused("apply_effect", ALICE, creature="gob", condition="hexed").code == "gm_only"
    assert h.refused("end_effect_of", ALICE, effect=effect.id).code == "gm_only"


def test_ending_an_unknown_effect_is_refused() -> None:
    h = trio()
    effect = apply(h, creature="gob", condition="hexed")
    refusal = h.refused("end_effect_of", effect="c999")
    assert refusal.code == "unknown_effect"
    assert f"in play: {effect.id}" in refusal.message
    h.send("end_effect_of", effect=effect.id)
    assert h.refused("end_effect_of", effect=effect.id).code == "unknown_effect"


# -- replay and the wire --------------------------------------------------------------------------------


def test_replay_equals_live_state_and_the_events_round_trip() -> None:
    h = trio()
    parent = apply(h, creature="aria", condition="concentrating", rounds=10)
    apply(h, creature="gob", condition="restrained", parent=parent.id, save="str", dc=12)
    apply(h, creature="bram", condition="blessed", until="start_of_turn", of="aria")
    end_turns(h, 2)
    h.rolls(4).end_turn()  # the goblin fails: 4 + 0 < 12
    h.send("end_effect_of", effect=parent.id)
    h.assert_replay_matches()
    kinds = {type(e) for e in h.events}
    assert {ConditionEffectApplied, ConditionEffectTicked, ConditionEffectEnded} <= kinds
    for event in h.events:
        assert event_from_dict(event_to_dict(event)) == event
    assert state_to_dict(h.replayed())["condition_effects"] == {}


# -- declared conditions ------------------------------------------------------------------------------


class Hexes:
    """A third-party plugin giving meaning to 'hexed'."""

    @staticmethod
    @hookimpl
    def zonekeep_conditions() -> Iterable[ConditionSpec]:
        return (ConditionSpec("hexed", "Takes 1d6 extra damage from the hexer."),)


class MoreHexes:
    @staticmethod
    @hookimpl
    def zonekeep_conditions() -> Iterable[ConditionSpec]:
        return (ConditionSpec("hexed", "Disadvantage on one ability's checks."),)


class Knockdown:
    @staticmethod
    @hookimpl
    def zonekeep_conditions() -> Iterable[ConditionSpec]:
        return (ConditionSpec("prone", "Lying down."),)


def test_the_built_in_conditions_are_declared() -> None:
    found = declared_conditions(Engine().pm)
    assert sorted(found) == [
        "acid-burned",  # the spells plugin's (plugins/spells/_more.py), as "charmed", "chilled", ...
        "aided",
        "attached",  # zonekeep.srd's (plugins/srd/_holds.py: a stirge, a darkmantle)
        "bane",  # the spells plugin's (Bane)
        "barkskin",  # the spells plugin's, as "bless", "blurred", "outlined", ...
        "bears-endurance",  # the spells plugin's Enhance Ability (plugins/spells/_wards.py), as
        # "bulls-strength", "cats-grace", "eagles-splendor", "foxs-cunning" and "owls-wisdom"
        "berserk",  # zonekeep.srd's (plugins/srd/_holds.py: a flesh golem)
        "bless",
        "blinded",
        "blurred",
        "bulls-strength",
        "cats-grace",
        "charmed",
        "chilled",
        "concentrating",  # the spells plugin's
        "defeated",
        "divine-favor",
        "dodging",
        "dying",
        "eagles-splendor",
        "enfeebled",
        "engulfed",  # zonekeep.srd's (plugins/srd/_bodies.py: a gelatinous cube's)
        "enlarged",  # zonekeep.srd's (plugins/srd/_gazes.py: a duergar's Enlarge)
        "escaped",
        "fire-averse",  # zonekeep.srd's, as "reckless"
        "flame-blade",
        "foxs-cunning",
        "frenzied",  # zonekeep.classes's, as "raging" and "reckless-attack"
        "frightened",
        "grapple-instead",  # zonekeep.srd's (plugins/srd/_holds.py: a vampire spawn's claws)
        "grappled",
        "guided",  # the spells plugin's (plugins/spells/_wards.py: Guidance), as "protected"
        "hasted",  # the spells plugin's (Haste), as "lethargic" and "slowed" (Slow)
        "heightened",  # the spells plugin's (Heightened Spell)
        "heroic",  # the spells plugin's (plugins/spells/_boons.py: Heroism)
        "hopeful",
        "hunters-mark",
        "ignited",  # zonekeep.srd's (plugins/srd/_traits.py: a magmin's touch)
        "incapacitated",
        "infernal-wound",  # zonekeep.srd's (plugins/srd/_gazes.py: a bearded devil's glaive)
        "invisible",
        "jumping",
        "leadership",  # zonekeep.srd's (the knight)
        "lethargic",
        "mage-armor",
        "magic-weapon",  # the spells plugin's (plugins/spells/_boons.py)
        "no-reactions",  # zonekeep.classes's (Open Hand Technique)
        "object-form",  # zonekeep.srd's (plugins/srd/_gazes.py: a mimic's form, given by the GM)
        "outlined",
        "owls-wisdom",
        "paralyzed",
        "poison-warded",
        "poisoned",
        "prone",
        "protected",  # Protection from Evil and Good
        "raging",
        "reckless",
        "reckless-attack",
        "regeneration_stopped",  # zonekeep.srd's, as "stench_immune"
        "resist-acid",  # Protection from Energy (plugins/spells/_wards.py), one per type
        "resist-cold",
        "resist-fire",
        "resist-lightning",
        "resist-thunder",
        "resistant",  # Resistance (plugins/spells/_wards.py)
        "restrained",
        "retreating",
        "sacred-weapon",  # zonekeep.classes's (a paladin's Channel Divinity)
        "shield-of-faith",
        "shielded",  # the spells plugin's (Shield)
        "slowed",
        "spirit-guardians",  # the spells plugin's (plugins/spells/_zones.py)
        "spiritual-weapon",  # the spells plugin's (plugins/spells/_zones.py)
        "squeezing",
        "stable",
        "stench_immune",
        "stunned",
        "surrendered",
        "swallowed",  # zonekeep.srd's (plugins/srd/_bodies.py: a giant frog's, a giant toad's)
        "true-struck",
        "turned",  # zonekeep.classes's (Turn Undead, Turn the Unholy)
        "two-handed",  # zonekeep.srd's (plugins/srd/_traits.py: a versatile weapon's grip)
        "unconscious",
        "warded-bond",
    ]
    assert all(spec.summary for spec in found.values())
    assert "hexed" in declared_conditions(Engine(extra(Hexes)).pm)


def extra(*plugins: object) -> list[object]:
    from zonekeep.plugins import load_default_plugins

    return [*load_default_plugins(), *plugins]


def test_two_plugins_declaring_one_condition_are_refused_naming_both() -> None:
    from zonekeep.sdk.engine import make_plugin_manager

    with pytest.raises(ConditionConflict) as info:
        declared_conditions(make_plugin_manager(extra(Hexes, MoreHexes)))
    message = str(info.value)
    assert "condition 'hexed' is declared by both plugin" in message
    assert "Hexes" in message and "MoreHexes" in message


def test_redeclaring_a_built_in_condition_names_the_built_in_plugin() -> None:
    from zonekeep.sdk.engine import make_plugin_manager

    pm = make_plugin_manager(extra(Knockdown))
    with pytest.raises(ValueError, match="condition 'prone'") as info:
        declared_conditions(pm)
    assert "'zonekeep.conditions'" in str(info.value)
    assert "Knockdown" in str(info.value)
    with pytest.raises(ConditionConflict, match=r"<Knockdown>"):
        declared_conditions(pm, describe=lambda name: f"<{name.rsplit('.', 1)[-1]}>")


def test_the_engine_refuses_two_plugins_declaring_the_same_condition() -> None:
    from zonekeep.plugins import load_default_plugins
    from zonekeep.sdk import ConditionSpec, hookimpl
    from zonekeep.sdk.engine import Engine, PluginConflict

    class Grease:
        @staticmethod
        @hookimpl
        def zonekeep_conditions() -> tuple[ConditionSpec, ...]:
            return (ConditionSpec("prone", "Slipped in the grease."),)

    with pytest.raises(PluginConflict, match="condition 'prone' is declared by both plugin"):
        Engine([*load_default_plugins(), Grease])
    assert "prone" in Engine().conditions
