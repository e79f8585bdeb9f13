"""The SRD creatures' actions and riders of plugins/srd/_actions.py, each tested from its
SRD 5.1 stat block:

- Hell hound, Fire Breath (Recharge 5-6): a 15-foot cone; DC 12 Dexterity save, 21
  (6d6) fire damage on a failure, half on a success.
- Brass dragon wyrmling, Sleep Breath: a 15-foot cone, DC 11 Constitution save or
  unconscious for 1 minute, until it takes damage.
- Giant spider's bite: DC 11 Constitution save, 9 (2d8) poison damage on a failure, half
  on a success; the spider's bite (DC 9) deals nothing on a success.
- Quasit, Scare (1/day): one creature within 20 feet, DC 10 Wisdom save or frightened for
  1 minute (saving again at the end of each of its turns).
- Mummy, Dreadful Glare: one creature within 60 feet, DC 11 Wisdom save or frightened
  until the end of the mummy's next turn; a failure by 5 or more also paralyzes it.
- Sea hag, Death Glare: a frightened creature within 30 feet, DC 11 Wisdom save or it
  drops to 0 hit points.
- Unicorn, Healing Touch (3/day): 11 (2d8 + 2) hit points and the poison cured.
- Will-o'-wisp, Consume Life (bonus action): a creature at 0 hit points within 5 feet,
  DC 10 Constitution save or it dies, and the wisp regains 10 (3d6) hit points.
- Chuul, Tentacles: a creature it grapples, DC 13 Constitution save or poisoned for 1
  minute and paralyzed while poisoned.
- Otyugh, Tentacle Slam: creatures it grapples, DC 14 Constitution save or 10 (2d6 + 3)
  bludgeoning damage and stunned until the end of its next turn; half and no stun on a
  success.
- Spy, Cunning Action: Dash, Disengage or Hide as a bonus action.
"""

from __future__ import annotations

import attrs
from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    AttackMade,
    ConditionEffectApplied,
    ConditionEffectEnded,
    Creature,
    Damaged,
    Dashed,
    Disengaged,
    EncounterOptions,
    Healed,
    OnHit,
    RechargeRolled,
    ResourceSpent,
    SaveMade,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str, **overrides: object) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name, **overrides})
    return made


def plain(creature: Creature, escape_dc: int | None = None) -> Creature:
    """``creature`` without its Multiattack and its attacks' riders, but a grapple rider
    (``escape_dc``) when given: the actions under test alone, whatever the SDK makes of
    the rest of the stat block."""
    riders = (OnHit("grapple", {"escape_dc": escape_dc}),) if escape_dc is not None else ()
    return attrs.evolve(
        creature,
        attacks=[attrs.evolve(a, on_hit=riders) for a in creature.attacks],
        actions=tuple(a for a in creature.actions if a.id != "multiattack"),
    )


def fight(
    first: Creature, *others: Creature, zones: dict[str, str] | None = None
) -> EncounterHarness:
    """``first`` acts first, then the others in order; everyone in the hall unless told."""
    every = [first, *others]
    where = {c.id: "hall" for c in every} | (zones or {})
    return harness(
        every,
        where,
        [20, 15, 10, 5, 3][: len(every)],
        options=EncounterOptions(flanking=False),
    )


def saves(events: tuple[object, ...]) -> list[tuple[str, int, bool]]:
    return [(e.creature, e.roll.total, e.success) for e in events if isinstance(e, SaveMade)]


def hurt(events: tuple[object, ...]) -> list[tuple[str, int, str]]:
    return [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)]


# -- breath ---------------------------------------------------------------------------------


def test_the_hell_hounds_fire_breath_hits_its_zone_with_one_roll_and_a_dex_save() -> None:
    hound = srd("hell-hound", "Hound")
    h = fight(hound, make("aria", hp=40), make("bram", hp=40))
    # Aria saves (15 against DC 12), Bram fails (5); then 6d6 once: 1+2+3+4+5+6 = 21.
    events = h.rolls(15, 5, 1, 2, 3, 4, 5, 6).send("breath", creature="hound-1")
    assert saves(events) == [("aria", 15, True), ("bram", 5, False)]
    assert hurt(events) == [("aria", 10, "fire"), ("bram", 21, "fire")]
    damaged = [e for e in events if isinstance(e, Damaged)]
    assert damaged[0].roll is not None and damaged[0].roll.dice == (1, 2, 3, 4, 5, 6)
    assert [e.left for e in events if isinstance(e, ResourceSpent)] == [0]
    assert (h.creature("aria").hp, h.creature("bram").hp) == (30, 19)
    assert h.state.resources.actions == 0


def test_the_fire_breath_recharges_only_on_a_5_or_6_at_the_start_of_the_hounds_turn() -> None:
    hound = srd("hell-hound", "Hound")
    h = fight(hound, make("aria", hp=90))
    h.rolls(1, 1, 1, 1, 1, 1, 1).send("breath", creature="hound-1")
    h.end_turn()
    h.rolls(4).end_turn()  # Aria's turn ends: the hound's starts with a d6 for its breath
    assert [(e.roll.total, e.recharged) for e in h.of_type(RechargeRolled)] == [(4, False)]
    refusal = h.refused("breath", creature="hound-1")
    assert refusal.code == "no_uses_left"
    h.end_turn()
    h.rolls(5).end_turn()
    assert [(e.roll.total, e.recharged) for e in h.of_type(RechargeRolled)] == [
        (4, False),
        (5, True),
    ]
    events = h.rolls(20, 6, 6, 6, 6, 6, 6).send("breath", creature="hound-1")
    assert hurt(events) == [("aria", 18, "fire")]  # 36, halved by the save


def test_the_breath_reaches_a_zone_within_its_length_and_no_further() -> None:
    hound = srd("hell-hound", "Hound")
    # The yard (15 ft) is the next zone from the hall: a 15-ft cone reaches it; the road
    # beyond the yard is 45 ft away.
    h = fight(
        hound, make("aria", hp=40), make("bram", hp=40), zones={"aria": "yard", "bram": "road"}
    )
    refusal = h.refused("breath", creature="hound-1", zone="road")
    assert (refusal.code, "45 ft" in refusal.message) == ("out_of_range", True)
    events = h.rolls(2, 6, 6, 6, 6, 6, 6).send("breath", creature="hound-1", zone="yard")
    assert saves(events) == [("aria", 2, False)]
    assert hurt(events) == [("aria", 36, "fire")]


def test_a_15_ft_cone_has_two_targets_the_breather_chooses_when_more_are_in_it() -> None:
    hound = srd("hell-hound", "Hound")
    h = fight(hound, make("aria"), make("bram"), make("cleo"))
    assert h.refused("breath", creature="hound-1").code == "too_many_targets"
    assert h.refused("breath", creature="hound-1", targets=["aria"]).code == "too_few_targets"
    assert (
        h.refused("breath", creature="hound-1", targets=["aria", "hound-1"]).code
        == "invalid_target"
    )
    events = h.rolls(1, 1, 1, 1, 1, 1, 1, 1).send(
        "breath", creature="hound-1", targets=["cleo", "aria"]
    )
    assert [c for c, _, _ in saves(events)] == ["cleo", "aria"]
    assert h.creature("bram").hp == 20


def test_a_creature_without_a_breath_weapon_cannot_breathe() -> None:
    h = fight(make("aria"), srd("hell-hound", "Hound"))
    assert h.refused("breath", creature="aria").code == "no_such_feature"


def test_the_sleep_breath_ends_when_the_sleeper_takes_damage() -> None:
    wyrm = srd("brass-dragon-wyrmling", "Wyrm")
    h = fight(wyrm, make("aria", hp=40), make("bram", hp=40))
    assert h.refused("breath", creature="wyrm-1").code == "invalid_params"  # which breath?
    # Constitution saves against DC 11: Aria 3 (asleep), Bram 11 (awake). No damage roll.
    events = h.rolls(3, 11).send("breath", creature="wyrm-1", option="sleep breath")
    assert saves(events) == [("aria", 3, False), ("bram", 11, True)]
    (applied,) = [e for e in events if isinstance(e, ConditionEffectApplied)]
    assert (applied.effect.creature, applied.effect.condition, applied.effect.rounds) == (
        "aria",
        "unconscious",
        10,
    )
    assert "unconscious" in h.creature("aria").conditions
    h.send("damage", creature="aria", amount=1)
    assert "unconscious" not in h.creature("aria").conditions
    assert [e.reason for e in h.of_type(ConditionEffectEnded)] == ["took damage"]


def test_a_breath_option_the_gm_adjudicates_is_refused_with_its_reason() -> None:
    h = fight(srd("copper-dragon-wyrmling", "Wyrm"), make("aria"), make("bram"))
    refusal = h.refused("breath", creature="wyrm-1", option="Slowing Breath")
    assert refusal.code == "gm_adjudicates"


# -- save-for-damage ----------------------------------------------------------------------


def test_the_giant_spiders_bite_poison_is_halved_by_a_con_save() -> None:
    spider = srd("giant-spider", "Spider")
    h = fight(spider, make("aria", hp=60, ac=10), make("bram", hp=60, ac=10))
    # Bite +5: 15 hits; 1d8+3 piercing (4 -> 7); DC 11 Con save 14: 2d8 (5+6) halved to 5.
    events = h.rolls(15, 4, 14, 5, 6).send(
        "attack", creature="spider-1", target="aria", attack="bite"
    )
    assert hurt(events) == [("aria", 7, "piercing"), ("aria", 5, "poison")]
    # A failed save (3) takes the whole 11.
    h.end_turn()
    h.end_turn()
    h.end_turn()
    events = h.rolls(15, 4, 3, 5, 6).send(
        "attack", creature="spider-1", target="bram", attack="bite"
    )
    assert hurt(events) == [("bram", 7, "piercing"), ("bram", 11, "poison")]


def test_a_save_without_half_takes_nothing_and_rolls_no_damage() -> None:
    spider = srd("spider", "Spider")
    h = fight(spider, make("aria", hp=60, ac=10))
    # Bite +4: 16 hits, 1 piercing; DC 9 Con save 9 succeeds: no 1d4 rolled at all.
    events = h.rolls(16, 9).send("attack", creature="spider-1", target="aria", attack="bite")
    assert hurt(events) == [("aria", 1, "piercing")]
    assert saves(events) == [("aria", 9, True)]


def test_a_miss_has_no_poison_save() -> None:
    spider = srd("giant-spider", "Spider")
    h = fight(spider, make("aria", hp=60, ac=20))
    events = h.rolls(2).send("attack", creature="spider-1", target="aria", attack="bite")
    assert [e.hit for e in events if isinstance(e, AttackMade)] == [False]
    assert saves(events) == []


# -- scare and the glares -----------------------------------------------------------------


def test_the_quasits_scare_frightens_for_a_minute_with_a_save_each_turn_once_a_day() -> None:
    quasit = plain(srd("quasit", "Quasit"))
    h = fight(quasit, make("aria"), zones={"aria": "yard"})  # 15 ft away: within 20
    events = h.rolls(9).send("scare", creature="quasit-1", target="aria")
    assert saves(events) == [("aria", 9, False)]
    (applied,) = [e for e in events if isinstance(e, ConditionEffectApplied)]
    effect = applied.effect
    assert (effect.condition, effect.rounds, effect.save, effect.save_dc, effect.source) == (
        "frightened",
        10,
        "wis",
        10,
        "quasit-1",
    )
    h.end_turn()
    events = h.rolls(10).end_turn()  # Aria's save at the end of her turn: 10 ends it
    assert saves(events) == [("aria", 10, True)]
    assert "frightened" not in h.creature("aria").conditions
    assert h.refused("scare", creature="quasit-1", target="aria").code == "no_uses_left"


def test_scare_reaches_20_feet() -> None:
    h = fight(plain(srd("quasit", "Quasit")), make("aria"), zones={"aria": "road"})  # 45 ft
    assert h.refused("scare", creature="quasit-1", target="aria").code == "out_of_range"


def test_the_mummys_glare_paralyzes_too_on_a_failure_by_5_or_more() -> None:
    mummy = plain(srd("mummy", "Mummy"))
    h = fight(mummy, make("aria"), make("bram"))
    events = h.rolls(6).send("dreadful_glare", creature="mummy-1", target="aria")
    conditions = [
        (e.effect.condition, e.effect.until, e.effect.until_creature)
        for e in events
        if isinstance(e, ConditionEffectApplied)
    ]
    assert conditions == [("frightened", "end", "mummy-1"), ("paralyzed", "end", "mummy-1")]
    h.end_turn()
    h.end_turn()
    h.end_turn()
    events = h.rolls(7).send("dreadful_glare", creature="mummy-1", target="bram")
    assert [e.effect.condition for e in events if isinstance(e, ConditionEffectApplied)] == [
        "frightened"
    ]
    h.end_turn()  # the end of the mummy's next turn ends Aria's
    assert "frightened" not in h.creature("aria").conditions
    assert "paralyzed" not in h.creature("aria").conditions


def test_the_sea_hags_death_glare_drops_a_frightened_creature_to_0() -> None:
    hag = srd("sea-hag", "Hag")
    h = fight(hag, make("aria", hp=30))
    assert h.refused("death_glare", creature="hag-1", target="aria").code == "invalid_target"
    h.send("grant_condition", creature="aria", condition="frightened")
    assert h.rolls(11).send("death_glare", creature="hag-1", target="aria")
    assert h.creature("aria").hp == 30  # 11 saves
    h.end_turn()
    h.end_turn()
    h.rolls(10).send("death_glare", creature="hag-1", target="aria")
    assert h.creature("aria").hp == 0


# -- healing, consuming -----------------------------------------------------------------------


def test_the_unicorns_healing_touch_heals_and_cures_poison_three_times_a_day() -> None:
    unicorn = srd("unicorn", "Uni")
    aria = make("aria", hp=40)
    h = fight(unicorn, aria)
    h.send("damage", creature="aria", amount=30)
    h.send("grant_condition", creature="aria", condition="poisoned")
    events = h.rolls(3, 4).send("healing_touch", creature="uni-1", target="aria")
    assert [(e.creature, e.amount, e.hp) for e in events if isinstance(e, Healed)] == [
        ("aria", 9, 19)
    ]
    assert "poisoned" not in h.creature("aria").conditions
    for _ in range(2):
        h.end_turn()
        h.end_turn()
        h.rolls(1, 1).send("healing_touch", creature="uni-1", target="aria")
    h.end_turn()
    h.end_turn()
    assert h.refused("healing_touch", creature="uni-1", target="aria").code == "no_uses_left"


def test_healing_touch_needs_a_touch_in_the_unicorns_zone() -> None:
    h = fight(srd("unicorn", "Uni"), make("aria"), zones={"aria": "yard"})
    assert h.refused("healing_touch", creature="uni-1", target="aria").code == "out_of_range"


def test_the_wisp_consumes_a_dying_creature_that_fails_and_regains_3d6() -> None:
    wisp = srd("will-o-wisp", "Wisp")
    h = fight(wisp, make("aria", hp=20), make("bram", hp=20))
    assert h.refused("consume_life", creature="wisp-1", target="aria").code == "invalid_target"
    h.send("damage", creature="wisp-1", amount=15)
    h.send("damage", creature="aria", amount=20)
    events = h.rolls(9, 2, 3, 4).send("consume_life", creature="wisp-1", target="aria")
    assert saves(events) == [("aria", 9, False)]
    assert "defeated" in h.creature("aria").conditions
    assert [(e.creature, e.amount) for e in events if isinstance(e, Healed)] == [("wisp-1", 9)]
    assert h.state.resources.bonus_actions == 0


# -- the creatures it grapples ---------------------------------------------------------------


def test_the_chuuls_tentacles_poison_and_paralyze_what_it_grapples() -> None:
    chuul = plain(srd("chuul", "Chuul"), escape_dc=14)
    h = fight(chuul, make("aria", hp=60, ac=10), make("bram", hp=60, ac=10))
    assert h.refused("grappled_save", creature="chuul-1", feature="tentacles").code == (
        "invalid_target"
    )
    # Pincer +6: 14 hits, 2d6+4 (3, 3 -> 10): Aria is grappled (escape DC 14).
    h.rolls(14, 3, 3).send("attack", creature="chuul-1", target="aria", attack="pincer")
    assert "grappled" in h.creature("aria").conditions
    events = h.rolls(12).send("grappled_save", creature="chuul-1", feature="tentacles")
    assert saves(events) == [("aria", 12, False)]
    applied = [e.effect for e in events if isinstance(e, ConditionEffectApplied)]
    assert [(e.condition, e.rounds, e.save, e.save_dc) for e in applied] == [
        ("poisoned", 10, "con", 13),
        ("paralyzed", None, None, None),
    ]
    assert applied[1].parent == applied[0].id
    assert h.creature("bram").conditions == []
    # Once a turn (with its Multiattack, its action spent).
    refusal = h.refused("grappled_save", creature="chuul-1", feature="tentacles")
    assert refusal.code == "no_uses_left"


def test_the_otyughs_slam_halves_and_does_not_stun_on_a_success() -> None:
    otyugh = plain(srd("otyugh", "Otyugh"), escape_dc=13)
    h = fight(otyugh, make("aria", hp=60, ac=10), make("bram", hp=60, ac=10))
    # Tentacle hits (+6): 1d8+3 bludgeoning and 1d8 piercing; each target grappled.
    h.rolls(15, 1, 1).send("attack", creature="otyugh-1", target="aria", attack="tentacle")
    assert h.creature("aria").hp == 55
    assert h.refused("grappled_save", creature="otyugh-1", feature="tentacle-slam").code == (
        "no_action_left"
    )
    for _ in range(3):
        h.end_turn()
    h.rolls(15, 1, 1).send("attack", creature="otyugh-1", target="bram", attack="tentacle")
    for _ in range(3):
        h.end_turn()
    # Aria fails (13 < 14): 2d6+3 = 4+5+3 = 12 and stunned; Bram saves (14): 3+3+3 = 9, halved to 4.
    events = h.rolls(13, 4, 5, 14, 3, 3).send(
        "grappled_save", creature="otyugh-1", feature="tentacle-slam"
    )
    assert hurt(events) == [("aria", 12, "bludgeoning"), ("bram", 4, "bludgeoning")]
    assert "stunned" in h.creature("aria").conditions
    assert "stunned" not in h.creature("bram").conditions


# -- cunning action -----------------------------------------------------------------------


def test_the_spys_cunning_action_dashes_or_disengages_as_a_bonus_action() -> None:
    spy = srd("spy", "Spy")
    h = fight(spy, make("aria"))
    events = h.send("cunning_action", creature="spy-1", choice="dash")
    assert [e.creature for e in events if isinstance(e, Dashed)] == ["spy-1"]
    assert h.state.resources.bonus_actions == 0
    assert h.refused("cunning_action", creature="spy-1", choice="disengage").code == (
        "no_bonus_action_left"
    )
    h.end_turn()
    assert h.refused("cunning_action", creature="aria", choice="dash").code == "no_such_feature"
    h.end_turn()
    assert h.refused("cunning_action", creature="spy-1", choice="hide").code == "invalid_params"
    events = h.send("cunning_action", creature="spy-1", choice="disengage")
    assert [e.creature for e in events if isinstance(e, Disengaged)] == ["spy-1"]


def test_the_orcs_aggressive_bonus_action_gives_its_speed_again_while_it_sees_a_foe() -> None:
    orc = srd("orc", "Orc")
    h = fight(orc, make("aria"), zones={"aria": "road"})
    events = h.send("aggressive", creature="orc-1")
    assert [e.creature for e in events if isinstance(e, Dashed)] == ["orc-1"]
    assert h.state.resources.bonus_actions == 0
    h.end_turn()
    h.end_turn()
    h.send("override", creature="aria", field="hidden", value=True)
    assert h.refused("aggressive", creature="orc-1").code == "invalid_target"
