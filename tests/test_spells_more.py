"""More SRD 5.1 spells of levels 0-3 (issue 31, plugins/spells/_more.py and the
catalog's new entries), each with the exact outcome of scripted dice, cast by
Seraphine (spell DC 15, +7 to hit, level 5) built from her real sheet."""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import cast, fight, goblin, refused, wizard

from zonekeep.plugins.spells import CONCENTRATING
from zonekeep.sdk import (
    AttackMade,
    Creature,
    Damaged,
    Healed,
    SaveMade,
)
from zonekeep.sdk.testing import EncounterHarness

CANTRIPS = ["acid-splash", "chill-touch", "poison-spray", "spare-the-dying", "true-strike"]
LEVELED = [
    "charm-person",
    "animal-friendship",
    "divine-favor",
    "hunters-mark",
    "mage-armor",
    "jump",
    "expeditious-retreat",
    "hideous-laughter",
    "grease",
    "acid-arrow",
    "blindness-deafness",
    "invisibility",
    "lesser-restoration",
    "protection-from-poison",
    "gust-of-wind",
    "beacon-of-hope",
    "fear",
    "hypnotic-pattern",
    "mass-healing-word",
    "aid",
    "flame-blade",
    "vampiric-touch",
    "revivify",
    "ray-of-enfeeblement",
    "warding-bond",
    "cure-wounds",
]


def sera(**changes: Any) -> Creature:
    """Seraphine with every spell of these tests (slots 4, 3 and 2 at level 5)."""
    return wizard(cantrips=CANTRIPS, spells_known=LEVELED, spells_prepared=list(LEVELED), **changes)


def bonus(h: EncounterHarness, **params: Any) -> tuple[Any, ...]:
    return h.send("cast_bonus", h.player("player-sera"), creature="sera", **params)


def effects_of(h: EncounterHarness, cid: str, condition: str) -> list[Any]:
    return [
        e
        for e in h.state.condition_effects.values()
        if e.creature == cid and e.condition == condition
    ]


# -- cantrips --------------------------------------------------------------------------------


def test_acid_splash_hits_two_creatures_of_one_zone_with_one_roll() -> None:
    h = fight(sera(), goblin(), goblin("orc"))
    cast(h.rolls(10, 15, 3, 4), "sera", spell="acid-splash", targets=["gob", "orc"])
    saves = [(s.creature, s.dc, s.success) for s in h.of_type(SaveMade)]
    assert saves == [("gob", 15, False), ("orc", 15, True)]
    assert (h.creature("gob").hp, h.creature("orc").hp) == (30 - 7, 30)  # 2d6 at level 5
    assert h.of_type(Damaged)[-1].damage_type == "acid"
    h.assert_replay_matches()


def test_acid_splash_refuses_targets_in_two_zones_or_three_targets() -> None:
    h = fight(sera(), goblin(), goblin("orc"), goblin("elf"), positions={"orc": "bar"})
    code, _ = refused(h, "sera", spell="acid-splash", targets=["gob", "orc"])
    assert code == "invalid_target"
    code, _ = refused(h, "sera", spell="acid-splash", targets=["gob", "elf", "orc"])
    assert code == "too_many_targets"
    assert h.state.resources.actions == 1


def test_chill_touch_stops_healing_until_the_start_of_the_casters_next_turn() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(10, 2, 3), "sera", spell="chill-touch", target="gob")
    assert h.creature("gob").hp == 30 - 5 and "chilled" in h.creature("gob").conditions
    assert h.of_type(Damaged)[-1].damage_type == "necrotic"
    h.end_turn()  # the goblin's turn: still chilled
    assert "chilled" in h.creature("gob").conditions
    h.end_turn()  # sera's next turn starts: it ends
    assert "chilled" not in h.creature("gob").conditions


def test_a_chilled_creature_regains_nothing_from_a_healing_spell() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20))
    h.send("damage", creature="ally", amount=10)
    h.send("apply_effect", creature="ally", condition="chilled", rounds=1)
    cast(h.rolls(6), "sera", spell="cure-wounds", target="ally")
    assert h.of_type(Healed)[-1].amount == 0 and h.creature("ally").hp == 10


def test_poison_spray_is_a_con_save_for_2d12_poison_within_10_ft() -> None:
    h = fight(sera(), goblin())
    cast(h.rolls(5, 6, 7), "sera", spell="poison-spray", target="gob")
    assert h.of_type(SaveMade)[-1].ability == "con"
    assert h.creature("gob").hp == 30 - 13
    h2 = fight(sera(), goblin(), positions={"gob": "bar"})
    assert refused(h2, "sera", spell="poison-spray", target="gob")[0] == "out_of_range"


def test_spare_the_dying_makes_a_dying_creature_stable() -> None:
    h = fight(sera(), goblin(), make("ally", hp=20))
    h.send("damage", creature="ally", amount=20)
    assert "dying" in h.creature("ally").conditions
    cast(h, "sera", spell="spare-the-dying", target="ally")
    conditions = h.creature("ally").conditions
    assert "stable" in conditions and "dying" not in conditions
    h2 = fight(sera(), goblin())
    assert refused(h2, "sera", spell="spare-the-dying", target="gob")[0] == "invalid_target"


def test_true_strike_gives_advantage_on_the_first_attack_next_turn_only() -> None:
    h = fight(sera(), goblin())
    cast(h, "sera", spell="true-strike", target="gob")
    assert "true-struck" in h.creature("gob").conditions
    h.end_turn()
    h.end_turn()  # sera's next turn
    h.rolls(3, 17, 4).send("attack", creature="sera", target="gob", attack="dagger")
    made = h.of_type(AttackMade)[-1]
    assert made.roll.advantage == "advantage" and made.roll.natural == 17
    assert "true-struck" not in h.creature("gob").conditions  # spent
    assert not effects_of(h, "sera", CONCENTRATING)
