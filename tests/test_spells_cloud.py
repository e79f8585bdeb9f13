"""Stinking Cloud (plugins/spells/_zones.py, ``how="cloud"``): a cloud over every zone
of its area, a Constitution save against poison for a creature starting its turn there,
its action lost on a failure; and Call Lightning (``how="storm"``): a storm cloud over
the caster's zone and a bolt on a zone within 60 ft of it, at the cast and with each
``call_lightning`` action after. Each with the exact outcome of scripted dice.
Seraphine (DC 15) casts them on the keep: Hall (30 ft), Bar (15), Yard (30), Far field
(120)."""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import cast, fight, goblin, wizard
from test_spells_zones import hurt, saves

from zonekeep.plugins.spells import SPELLS, concentration_of, spell_choices
from zonekeep.plugins.spells.catalog import GM_SPELLS
from zonekeep.sdk import ActionTaken, Creature
from zonekeep.sdk.testing import EncounterHarness

TAG = "spell_stinking_cloud"


def sera() -> Creature:
    return wizard(spells_known=["stinking-cloud"], spells_prepared=["stinking-cloud"])


def clouds(h: EncounterHarness) -> list[str]:
    return sorted(a.zone for a in h.state.arena.assets if TAG in a.tags)


def test_stinking_cloud_is_resolved_not_the_gms() -> None:
    spell = SPELLS["stinking-cloud"]
    assert "stinking-cloud" not in GM_SPELLS
    assert (spell.level, spell.how, spell.range, spell.shape, spell.size) == (
        3,
        "cloud",
        90,
        "sphere",
        20,
    )
    assert (spell.concentration, spell.rounds, spell.school) == (True, 10, "conjuration")


def test_the_cloud_fills_its_area_and_a_creature_starting_its_turn_there_loses_its_action() -> None:
    h = fight(sera(), goblin(), goblin("orc"), positions={"gob": "yard", "orc": "yard"})
    events = cast(h, "sera", spell="stinking-cloud", zone="yard")
    assert saves(events) == []  # nothing on the cast
    # 20 ft of radius: 40 ft across, more than the yard's 30: it spills into its links.
    assert clouds(h) == ["bar", "far", "yard"]
    assert h.creature("sera").resources["spell-slots-3"] == 1
    events = h.rolls(5).end_turn()  # the goblin: Con 5 against 15, its action goes
    assert saves(events) == [("gob", "con", 5, 15, False)]
    assert ActionTaken("gob", "stinking cloud", "action") in events
    assert h.state.resources.actions == 0
    assert h.refused("dash", creature="gob").code == "no_action_left"
    h.send("move", creature="gob", feet=5)  # it can still move
    events = h.rolls(15).end_turn()  # the orc: 15 saves, it keeps its action
    assert saves(events) == [("orc", "con", 15, 15, True)]
    assert not [e for e in events if isinstance(e, ActionTaken)]
    assert h.state.resources.actions == 1
    h.assert_replay_matches()


def test_a_creature_immune_to_poison_and_one_outside_the_cloud_roll_nothing() -> None:
    immune = make("golem", "foes", hp=30, damage_immunities=("poison",))
    h = fight(sera(), immune, goblin(), positions={"golem": "yard", "gob": "hall"})
    cast(h, "sera", spell="stinking-cloud", zone="yard")
    events = h.end_turn()  # the golem, in the cloud
    assert saves(events) == [] and h.state.resources.actions == 1
    events = h.end_turn()  # the goblin, in the hall: no cloud there
    assert saves(events) == [] and h.state.resources.actions == 1


def test_the_cloud_goes_with_the_casters_concentration() -> None:
    h = fight(sera(), goblin(), positions={"gob": "yard"})
    cast(h, "sera", spell="stinking-cloud", zone="bar")
    assert clouds(h) == ["bar", "hall", "yard"]
    h.send("damage", creature="sera", amount=100)  # 0 hit points: concentration ends
    assert concentration_of(h.state, "sera") is None
    assert clouds(h) == []
    h.assert_replay_matches()


def test_the_cloud_is_aimed_at_a_zone_in_range_and_takes_no_targets() -> None:
    h = fight(sera(), goblin(), positions={"gob": "yard"})
    me = h.creature("sera")
    (choice,) = [
        c for c in spell_choices(h.state, me, "action") if c.params["spell"] == "stinking-cloud"
    ]
    assert choice.options["zone"] == ("hall", "bar", "yard")  # the far field: 30 ft too far
    assert "targets_by_zone" not in choice.info  # it takes no targets (the page asks none)
    refusal = h.refused("cast", h.player("player-sera"), creature="sera",
                        spell="stinking-cloud", zone="yard", targets=["gob"])  # fmt: skip
    assert refusal.code == "invalid_params"
    refusal = h.refused("cast", h.player("player-sera"), creature="sera",
                        spell="stinking-cloud", zone="far")  # fmt: skip
    assert refusal.code == "out_of_range"
    assert clouds(h) == [] and h.creature("sera").resources["spell-slots-3"] == 2


# -- call lightning -------------------------------------------------------------------------


def storm_caster(**changes: Any) -> Creature:
    return wizard(spells_known=["call-lightning"], spells_prepared=["call-lightning"], **changes)


def bolt(h: EncounterHarness, kind: str, *dice: int, **params: object) -> tuple[object, ...]:
    me = h.player("player-sera")
    if kind == "cast":
        return h.rolls(*dice).send("cast", me, creature="sera", spell="call-lightning", **params)
    return h.rolls(*dice).send("call_lightning", me, creature="sera", **params)


def test_call_lightning_forms_the_cloud_and_strikes_at_once_then_again_each_turn() -> None:
    h = fight(storm_caster(), goblin(), goblin("orc"), positions={"gob": "yard", "orc": "yard"})
    assert h.refused("call_lightning", h.player("player-sera"), creature="sera",
                     zone="yard").code == "no_such_feature"  # fmt: skip
    # Dex 5 fails, 15 saves (DC 15); one 3d10 roll = 4 + 5 + 6: 15 and half, 7.
    events = bolt(h, "cast", 5, 15, 4, 5, 6, zone="yard", targets=["gob", "orc"])
    assert saves(events) == [("gob", "dex", 5, 15, False), ("orc", "dex", 15, 15, True)]
    assert hurt(events) == [("gob", 15, "lightning"), ("orc", 7, "lightning")]
    storms = [(a.id, a.zone) for a in h.state.arena.assets if "spell_call_lightning" in a.tags]
    assert storms == [("call-lightning-sera", "hall")]  # over the caster, where it formed
    assert h.creature("sera").resources["spell-slots-3"] == 1
    assert h.refused("call_lightning", h.player("player-sera"), creature="sera",
                     zone="yard", targets=["gob", "orc"]).code == "no_action_left"  # fmt: skip
    for _ in range(3):
        h.end_turn()
    assert h.state.active == "sera"
    events = bolt(h, "call", 2, 2, 10, 10, 10, zone="yard", targets=["gob", "orc"])
    assert hurt(events) == [("gob", 30, "lightning"), ("orc", 30, "lightning")]
    assert h.creature("sera").resources["spell-slots-3"] == 1  # no slot for a new bolt
    assert h.state.resources.actions == 0
    h.assert_replay_matches()


def test_a_bolt_strikes_only_under_the_cloud_and_fills_its_targets() -> None:
    h = fight(storm_caster(), goblin(), goblin("orc"), positions={"gob": "yard", "orc": "yard"})
    refusal = h.refused("cast", h.player("player-sera"), creature="sera",
                        spell="call-lightning", zone="far")  # fmt: skip
    assert refusal.code == "out_of_range"
    refusal = h.refused("cast", h.player("player-sera"), creature="sera",
                        spell="call-lightning", zone="yard", targets=["gob"])  # fmt: skip
    assert refusal.code == "too_few_targets"
    assert h.creature("sera").resources["spell-slots-3"] == 2  # refused: nothing spent
    assert concentration_of(h.state, "sera") is None
    bolt(h, "cast", 20, 20, 1, 1, 1, slot=3, zone="bar")  # nobody in the bar: no roll
    assert h.creature("gob").hp == 30
    h.send("move", h.player("player-sera"), creature="sera", feet=5)
    h.send("enter", h.gm, creature="sera", zones=["bar", "yard"])  # (the GM moves her)
    for _ in range(3):
        h.end_turn()
    # From the yard she sees the far field, but the cloud stays over the hall: too far.
    refusal = h.refused("call_lightning", h.player("player-sera"), creature="sera",
                        zone="far")  # fmt: skip
    assert refusal.code == "out_of_range" and "not under the storm cloud" in refusal.message


def test_the_storm_goes_with_the_casters_concentration_and_upcasts() -> None:
    slots = {"1": 4, "2": 3, "3": 3, "4": 1}
    h = fight(storm_caster(spell_slots=slots), goblin(hp=60), positions={"gob": "yard"})
    events = bolt(h, "cast", 1, 1, 1, 1, 1, slot=4, zone="yard", targets=["gob"])
    assert hurt(events) == [("gob", 4, "lightning")]  # 4d10 at 4th level
    h.send("damage", creature="sera", amount=100)  # 0 hit points: concentration ends
    assert [a for a in h.state.arena.assets if "spell_call_lightning" in a.tags] == []
    h.assert_replay_matches()
