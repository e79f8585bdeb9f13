"""The SRD creatures' features of plugins/srd/_traits.py, each tested from its SRD 5.1
stat block:

- Giant centipede, Bite: +4, 4 (1d4 + 2) piercing, and a DC 11 Constitution save or 10
  (3d6) poison damage; if the poison damage reduces the target to 0 hit points, it is
  stable but poisoned for 1 hour, even after regaining hit points, and paralyzed while
  poisoned this way. The giant wasp's sting: the same with half the poison on a success.
- Wraith, Life Drain: +6, 21 (4d8 + 3) necrotic; a DC 14 Constitution save or the
  target's hit point maximum is reduced by the damage taken, until a long rest; it dies
  if this reduces its maximum to 0.
- Imp, Invisibility: it turns invisible until it attacks or its concentration ends (as
  if concentrating on a spell). Duergar, Invisibility (once per short or long rest): up
  to 1 hour.
- Specter, Incorporeal Movement: it moves through objects as difficult terrain.
- Hobgoblin, Longsword: 5 (1d8 + 1) slashing, or 6 (1d10 + 1) slashing if used with two
  hands; guard, Spear: 1d6 + 1 piercing, or 1d8 + 1 with two hands in melee.
- Animated armor, mimic, gargoyle, False Appearance: while motionless, indistinguishable
  from an object.
- Bulette, Standing Leap: long jump up to 30 ft, with or without a running start; lion,
  Running Leap: with a 10-ft running start, a long jump up to 25 ft.
- Gray ooze, Amorphous: it can move through a space as narrow as 1 inch without squeezing.
- Blink dog, Teleport (Recharge 4-6): up to 40 ft to a space it can see, and one bite
  before or after; unicorn, Teleport (1/day): it and up to three willing creatures
  within 5 ft, to a place up to 1 mile away.
- Death dog, Bite: a DC 12 Constitution save against disease or poisoned until cured.
- Magmin, Touch: +4, 7 (2d6) fire; a creature hit ignites: 3 (1d6) fire damage at the
  end of each of its turns until a creature takes an action to douse the fire.
"""

from __future__ import annotations

import attrs
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    ActionGranted,
    Attack,
    AttackMade,
    ConditionEffectApplied,
    Creature,
    Damaged,
    EncounterOptions,
    Moved,
    OverrideApplied,
    SaveMade,
    hookimpl,
    parse_arena,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str, **overrides: object) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name, **overrides})
    return made


def without_riders(creature: Creature) -> Creature:
    """``creature`` without its attacks' riders (the imp's poison): the feature under test
    alone."""
    return attrs.evolve(creature, attacks=[attrs.evolve(a, on_hit=()) for a in creature.attacks])


#: Three zones in a row: the hall, a wall, the cellar (30 ft), a doorway, the vault; flying
#: links, since the specter only flies.
WALLED = {
    "id": "walled",
    "name": "Walled",
    "zones": [
        {"id": "hall", "name": "Hall", "size": 30},
        {"id": "cellar", "name": "Cellar", "size": 30},
        {"id": "vault", "name": "Vault", "size": 30},
    ],
    "links": [
        {"a": "hall", "b": "cellar", "direction": "beside", "clear": False, "mode": "fly"},
        {"a": "cellar", "b": "vault", "direction": "beside", "mode": "fly"},
    ],
}


def fight(
    first: Creature, *others: Creature, zones: dict[str, str] | None = None
) -> EncounterHarness:
    """``first`` acts first, then the others in order; everyone in the hall unless told."""
    every = [first, *others]
    h = EncounterHarness(
        every, arena=parse_arena(WALLED, "walled"), options=EncounterOptions(flanking=False)
    )
    where = {c.id: "hall" for c in every} | (zones or {})
    h.start(positions=where, initiative=[20, 15, 10, 5][: len(every)])
    return h


def hurt(events: tuple[object, ...]) -> list[tuple[str, int, str]]:
    return [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)]


def effects(h: EncounterHarness, cid: str) -> list[tuple[str, int | None, bool]]:
    """``cid``'s timed conditions: (condition, rounds, whether it hangs on a parent)."""
    return sorted(
        (e.condition, e.rounds, e.parent is not None)
        for e in h.state.condition_effects.values()
        if e.creature == cid
    )


# -- poison paralysis ---------------------------------------------------------------------------


def test_the_centipedes_poison_bringing_the_target_to_0_leaves_it_stable_and_paralyzed() -> None:
    centipede = srd("giant-centipede", "Centipede")
    h = fight(centipede, make("aria", hp=12, ac=10))
    # Bite +4: 15 hits; 1d4+2 (3 -> 5): Aria at 7. DC 11 Con save 6 fails: 3d6 (2+3+4 = 9)
    # poison brings her to 0: stable, poisoned for 1 hour, paralyzed while poisoned.
    events = h.rolls(15, 3, 6, 2, 3, 4).send(
        "attack", creature="centipede-1", target="aria", attack="bite"
    )
    assert hurt(events) == [("aria", 5, "piercing"), ("aria", 9, "poison")]
    aria = h.creature("aria")
    assert aria.hp == 0
    assert "dying" not in aria.conditions and "stable" in aria.conditions
    assert {"poisoned", "paralyzed"} <= set(aria.conditions)
    assert effects(h, "aria") == [("paralyzed", None, True), ("poisoned", 600, False)]
    paralyzed = next(e for e in h.state.condition_effects.values() if e.condition == "paralyzed")
    poisoned = next(e for e in h.state.condition_effects.values() if e.condition == "poisoned")
    assert paralyzed.parent == poisoned.id
    # Healed, she stays poisoned and paralyzed: the hour is not over.
    h.send("heal", creature="aria", amount=5)
    assert {"poisoned", "paralyzed"} <= set(h.creature("aria").conditions)


def test_a_centipede_bite_whose_piercing_drops_the_target_does_not_paralyze() -> None:
    centipede = srd("giant-centipede", "Centipede")
    h = fight(centipede, make("aria", hp=5, ac=10))
    # 1d4+2 (4 -> 6) drops Aria to 0 before the poison: she is dying, not paralyzed.
    h.rolls(15, 4, 20).send("attack", creature="centipede-1", target="aria", attack="bite")
    aria = h.creature("aria")
    assert aria.hp == 0 and "dying" in aria.conditions
    assert "paralyzed" not in aria.conditions and "poisoned" not in aria.conditions


def test_a_poison_that_leaves_hit_points_only_hurts() -> None:
    centipede = srd("giant-centipede", "Centipede")
    h = fight(centipede, make("aria", hp=30, ac=10))
    h.rolls(15, 3, 6, 2, 3, 4).send("attack", creature="centipede-1", target="aria", attack="bite")
    aria = h.creature("aria")
    assert aria.hp == 16 and aria.conditions == []


def test_the_wasps_halved_poison_still_paralyzes_when_it_is_what_drops_the_target() -> None:
    wasp = srd("giant-wasp", "Wasp")
    h = fight(wasp, make("aria", hp=10, ac=10))
    # Sting +4: 1d6+2 (4 -> 6), Aria at 4; save 18 succeeds: 3d6 (3+3+3 = 9) halved to 4.
    events = h.rolls(15, 4, 18, 3, 3, 3).send(
        "attack", creature="wasp-1", target="aria", attack="sting"
    )
    assert hurt(events) == [("aria", 6, "piercing"), ("aria", 4, "poison")]
    assert {"stable", "poisoned", "paralyzed"} <= set(h.creature("aria").conditions)


# -- life drain -----------------------------------------------------------------------------------


def test_the_wraiths_life_drain_lowers_the_maximum_by_the_damage_on_a_failed_save() -> None:
    wraith = srd("wraith", "Wraith")
    h = fight(wraith, make("aria", hp=40, ac=10), make("bram", hp=40, ac=10))
    # +6: 15 hits; 4d8+3 (1+2+3+4 = 10 -> 13) necrotic; DC 14 Con save 9 fails.
    events = h.rolls(15, 1, 2, 3, 4, 9).send(
        "attack", creature="wraith-1", target="aria", attack="life drain"
    )
    assert hurt(events) == [("aria", 13, "necrotic")]
    assert [(e.creature, e.field, e.value) for e in events if isinstance(e, OverrideApplied)] == [
        ("aria", "max_hp", 27)
    ]
    aria = h.creature("aria")
    assert (aria.hp, aria.max_hp) == (27, 27)
    h.send("heal", creature="aria", amount=10)
    assert h.creature("aria").hp == 27  # no higher than the drained maximum
    # A save of 14 succeeds: the maximum stays.
    h.end_turn()
    h.end_turn()
    h.end_turn()
    h.rolls(15, 1, 2, 3, 4, 14).send(
        "attack", creature="wraith-1", target="bram", attack="life drain"
    )
    bram = h.creature("bram")
    assert (bram.hp, bram.max_hp) == (27, 40)


def test_life_drain_takes_what_got_through_a_resistance() -> None:
    wraith = srd("wraith", "Wraith")
    h = fight(wraith, make("aria", hp=40, ac=10, damage_resistances=["necrotic"]))
    h.rolls(15, 1, 2, 3, 4, 9).send(
        "attack", creature="wraith-1", target="aria", attack="life drain"
    )
    aria = h.creature("aria")
    assert (aria.hp, aria.max_hp) == (34, 34)  # 13 halved to 6


def test_life_drain_to_a_maximum_of_0_kills() -> None:
    wraith = srd("wraith", "Wraith")
    h = fight(wraith, make("aria", hp=12, ac=10))
    # 13 necrotic: Aria at 0 and dying; the failed save takes her maximum to 0: dead.
    h.rolls(15, 1, 2, 3, 4, 2).send(
        "attack", creature="wraith-1", target="aria", attack="life drain"
    )
    aria = h.creature("aria")
    assert (aria.hp, aria.max_hp) == (0, 0)
    assert "defeated" in aria.conditions and "dying" not in aria.conditions


def test_a_missed_life_drain_asks_for_no_save() -> None:
    wraith = srd("wraith", "Wraith")
    h = fight(wraith, make("aria", hp=40, ac=20))
    events = h.rolls(2).send("attack", creature="wraith-1", target="aria", attack="life drain")
    assert [e for e in events if isinstance(e, SaveMade)] == []
    assert h.creature("aria").max_hp == 40


# -- invisibility ---------------------------------------------------------------------------------


def test_the_imp_turns_invisible_and_attacks_with_advantage_which_ends_it() -> None:
    imp = without_riders(srd("imp", "Imp"))
    h = fight(imp, make("aria", hp=40, ac=10))
    events = h.send("invisibility", creature="imp-1")
    applied = [e.effect for e in events if isinstance(e, ConditionEffectApplied)]
    assert [e.condition for e in applied] == ["concentrating", "invisible"]
    assert applied[1].parent == applied[0].id
    assert h.state.resources.actions == 0
    assert {"invisible", "concentrating"} <= set(h.creature("imp-1").conditions)
    h.end_turn()
    # Aria's attack on the invisible imp has disadvantage: 18 and 4, the 4 counts (+4: 8).
    h.rolls(18, 4).send("attack", creature="aria", target="imp-1")
    h.end_turn()
    # The imp's sting (+5) has advantage: 3 and 15, the 15 counts; 1d4+3 (2 -> 5).
    events = h.rolls(3, 15, 2).send("attack", creature="imp-1", target="aria", attack="sting")
    assert hurt(events) == [("aria", 5, "piercing")]
    imp_now = h.creature("imp-1")
    assert "invisible" not in imp_now.conditions and "concentrating" not in imp_now.conditions


def test_damage_breaks_the_imps_concentration_and_its_invisibility() -> None:
    imp = without_riders(srd("imp", "Imp"))
    aria = make("aria", hp=40, attacks=[Attack("bolt", "melee", 4, "1d6+2", "force")])
    h = fight(imp, aria)
    h.send("invisibility", creature="imp-1")
    h.end_turn()
    # Disadvantage: 18 and 19 (+4: 22 hits AC 13); 1d6+2 (3 -> 5) force; the imp's
    # concentration save (DC 10, Con +1) rolls 3: the invisibility ends.
    events = h.rolls(18, 19, 3, 3).send("attack", creature="aria", target="imp-1")
    assert hurt(events) == [("imp-1", 5, "force")]
    assert [(e.creature, e.roll.total, e.success) for e in events if isinstance(e, SaveMade)] == [
        ("imp-1", 4, False)
    ]
    assert "invisible" not in h.creature("imp-1").conditions


def test_the_duergars_invisibility_lasts_an_hour_once_per_rest() -> None:
    duergar = srd("duergar", "Duergar")
    h = fight(duergar, make("aria"))
    h.send("invisibility", creature="duergar-1")
    assert effects(h, "duergar-1") == [("concentrating", 600, False), ("invisible", None, True)]
    h.end_turn()
    h.end_turn()
    assert h.refused("invisibility", creature="duergar-1").code == "no_uses_left"


def test_a_creature_without_the_action_cannot_turn_invisible() -> None:
    h = fight(make("aria"), make("bram"))
    assert h.refused("invisibility", creature="aria").code == "invalid_params"


# -- incorporeal movement ---------------------------------------------------------------------


def test_the_specter_passes_through_a_wall_that_stops_others() -> None:
    specter = srd("specter", "Specter")
    h = fight(specter, make("aria", speeds={"fly": 30}))
    h.send("enter", creature="specter-1", zones=["cellar"])
    assert h.creature("specter-1").zone == "cellar"
    h.end_turn()
    refusal = h.refused("enter", creature="aria", zones=["cellar"])
    assert refusal.code == "no_clear_path"


def test_going_on_past_a_zone_reached_through_a_wall_costs_as_difficult_terrain() -> None:
    specter = srd("specter", "Specter")  # flying 50 ft
    h = fight(specter, make("aria"), zones={"aria": "vault"})
    # Through the wall into the 30-ft cellar and on into the vault: 50 / 2 = 25, not
    # more than 30 (without the wall, 50 would be).
    refusal = h.refused("enter", creature="specter-1", zones=["cellar", "vault"])
    assert refusal.code == "not_enough_movement"
    assert "divided by 2: incorporeal" in refusal.message
    h.send("enter", creature="specter-1", zones=["cellar"])
    h.end_turn()
    h.end_turn()
    # From the cellar, through the doorway: no wall, so 50 ft go on past the vault's...
    # the cellar to the hall is the wall again, but it is the zone entered last: free.
    h.send("enter", creature="specter-1", zones=["hall"])
    assert h.creature("specter-1").zone == "hall"


# -- versatile weapons ---------------------------------------------------------------------------


def test_the_hobgoblins_longsword_in_both_hands_rolls_1d10() -> None:
    hobgoblin = srd("hobgoblin", "Hobgoblin")
    h = fight(hobgoblin, make("aria", hp=60, ac=10))
    # Longsword +3, 1d8+1 slashing in one hand: 15 hits, 8 -> 9.
    events = h.rolls(15, 8).send(
        "attack", creature="hobgoblin-1", target="aria", attack="longsword"
    )
    assert hurt(events) == [("aria", 9, "slashing")]
    h.end_turn()
    h.end_turn()
    h.send("grip", creature="hobgoblin-1", hands=2)
    assert "two-handed" in h.creature("hobgoblin-1").conditions
    assert h.state.resources.actions == 1  # the grip is free
    # 1d10+1 with two hands: 10 -> 11, more than one hand can deal.
    events = h.rolls(15, 10).send(
        "attack", creature="hobgoblin-1", target="aria", attack="longsword"
    )
    assert hurt(events) == [("aria", 11, "slashing")]
    damaged = next(e for e in events if isinstance(e, Damaged))
    assert damaged.roll is not None and damaged.roll.dice == (10,)


def test_a_critical_two_handed_hit_doubles_the_two_handed_dice() -> None:
    hobgoblin = srd("hobgoblin", "Hobgoblin")
    h = fight(hobgoblin, make("aria", hp=60, ac=10))
    h.send("grip", creature="hobgoblin-1", hands=2)
    events = h.rolls(20, 10, 9).send(
        "attack", creature="hobgoblin-1", target="aria", attack="longsword"
    )
    assert hurt(events) == [("aria", 20, "slashing")]  # 2d10+1: 10 + 9 + 1


def test_back_to_one_hand_and_the_thrown_spear_keep_their_own_damage() -> None:
    guard = srd("guard", "Guard")
    h = fight(guard, make("aria", hp=60, ac=10))
    h.send("grip", creature="guard-1", hands=2)
    # The thrown spear (+3, 1d6+1) is not the melee spear: 6 -> 7 whatever the grip.
    events = h.rolls(15, 6).send(
        "attack", creature="guard-1", target="aria", attack="spear (thrown)"
    )
    assert hurt(events) == [("aria", 7, "piercing")]
    assert h.refused("grip", creature="guard-1", hands=2).code == "invalid_params"
    h.send("grip", creature="guard-1", hands=1)
    assert "two-handed" not in h.creature("guard-1").conditions
    assert h.refused("grip", creature="guard-1", hands=1).code == "invalid_params"
    assert h.refused("grip", creature="guard-1", hands=3).code == "invalid_params"


def test_a_creature_without_a_versatile_weapon_has_no_grip() -> None:
    h = fight(make("aria"), make("bram"))
    assert h.refused("grip", creature="aria", hands=2).code == "invalid_params"


class TwoDFour:
    """A plugin answering ``zonekeep_attack_damage`` with 2d4 for every hit."""

    @staticmethod
    @hookimpl
    def zonekeep_attack_damage(attack: Attack) -> str | None:
        return "2d4"


def test_the_attack_damage_hook_replaces_the_dice_of_a_hit() -> None:
    every = [make("aria", hp=30, ac=10), make("bram", "foes", hp=30, ac=10)]
    h = EncounterHarness(
        every,
        arena=parse_arena(WALLED, "walled"),
        options=EncounterOptions(flanking=False),
        extra_plugins=[TwoDFour()],
    )
    h.start(positions={"aria": "hall", "bram": "hall"}, initiative=[20, 10])
    # The blade's 1d6+2 becomes 2d4 (1 + 2), with the blade's damage type.
    events = h.rolls(15, 1, 2).send("attack", creature="aria", target="bram")
    assert hurt(events) == [("bram", 3, "slashing")]


# -- false appearance ----------------------------------------------------------------------------


def test_hidden_animated_armor_stays_hidden_while_still_and_is_revealed_when_it_attacks() -> None:
    armor = without_riders(srd("animated-armor", "Armor", hidden=True))
    h = fight(make("aria", hp=60, ac=10), armor)
    assert h.creature("armor-1").hidden
    h.end_turn()
    h.end_turn()  # the armor's turn passes: it did nothing, it still looks like armor
    assert h.creature("armor-1").hidden
    h.end_turn()
    # Slam +4: 15 hits, 1d6+2 (1 -> 3): the attack gives it away.
    events = h.rolls(15, 1).send("attack", creature="armor-1", target="aria", attack="slam")
    revealed = [
        (e.by, e.creature, e.field, e.value) for e in events if isinstance(e, OverrideApplied)
    ]
    assert revealed == [("armor-1", "armor-1", "hidden", False)]
    assert not h.creature("armor-1").hidden


def test_a_hidden_gargoyle_that_moves_is_revealed() -> None:
    gargoyle = srd("gargoyle", "Gargoyle", hidden=True)
    h = fight(gargoyle, make("aria"), zones={"gargoyle-1": "cellar", "aria": "vault"})
    h.send("enter", creature="gargoyle-1", zones=["vault"])
    assert not h.creature("gargoyle-1").hidden


def test_a_hidden_creature_without_false_appearance_stays_hidden_when_it_attacks() -> None:
    lurker = make("lurker", "foes", hidden=True)
    h = fight(lurker, make("aria", hp=60, ac=10))
    h.rolls(15, 1).send("attack", creature="lurker", target="aria")
    h.end_turn()
    assert h.creature("lurker").hidden  # revealing it is the GM's


def test_a_hidden_mimic_that_takes_an_action_is_revealed_at_the_end_of_its_turn() -> None:
    mimic = srd("mimic", "Mimic", hidden=True)
    h = fight(mimic, make("aria"))
    h.send("dodge", creature="mimic-1")
    assert h.creature("mimic-1").hidden
    h.end_turn()
    assert not h.creature("mimic-1").hidden


# -- leap -----------------------------------------------------------------------------------------


def test_the_bulettes_standing_leap_reaches_30_ft_without_a_run_up() -> None:
    bulette = srd("bulette", "Bulette")  # Strength 19: 9 ft from a standing start by the rule
    h = fight(bulette, make("aria"))
    refusal = h.refused("move", creature="bulette-1", feet=35, mode="jump")
    assert (refusal.code, refusal.message) == (
        "cannot_move",
        "Bulette can jump at most 30 ft; 35 ft is too far.",
    )
    events = h.send("move", creature="bulette-1", feet=30, mode="jump")
    assert [(e.feet, e.mode) for e in events if isinstance(e, Moved)] == [(30, "jump")]


def test_the_lions_running_leap_needs_its_10_ft_run() -> None:
    lion = srd("lion", "Lion")  # Strength 17: 8 ft standing, 17 running by the rule
    h = fight(lion, make("aria"))
    refusal = h.refused("move", creature="lion-1", feet=10, mode="jump")
    assert refusal.code == "cannot_move" and "half its Strength" in refusal.message
    assert h.refused("move", creature="lion-1", feet=30, mode="jump", run_up=10).message == (
        "Lion can jump at most 25 ft; 30 ft is too far."
    )
    events = h.send("move", creature="lion-1", feet=25, mode="jump", run_up=10)
    assert [(e.feet, e.mode) for e in events if isinstance(e, Moved)] == [
        (10, "walk"),
        (25, "jump"),
    ]


# -- amorphous -------------------------------------------------------------------------------------


def test_the_gray_ooze_does_not_squeeze_in_a_crowded_zone() -> None:
    ooze = srd("gray-ooze", "Ooze")
    arena = parse_arena(
        {
            "id": "den",
            "name": "Den",
            "zones": [{"id": "den", "name": "Den", "size": 15, "capacity": 2}],
        },
        "den",
    )
    every = [ooze, make("aria", hp=40, ac=10), make("bram")]
    h = EncounterHarness(every, arena=arena, options=EncounterOptions(flanking=False))
    h.start(positions={c.id: "den" for c in every}, initiative=[20, 15, 10])
    # Three Medium creatures in a den for two: the others squeeze, the ooze does not.
    assert "squeezing" in h.creature("aria").conditions
    assert "squeezing" in h.creature("bram").conditions
    assert "squeezing" not in h.creature("ooze-1").conditions
    # Its 10 ft of walking cost 10 ft (squeezing would double it).
    events = h.send("move", creature="ooze-1", feet=10)
    assert [(e.feet, e.cost) for e in events if isinstance(e, Moved)] == [(10, 10)]
    # Its pseudopod (+3) against squeezing Aria has advantage, which no squeezing of its
    # own cancels: two d20s, 15 and 3, the 15 counts; 1d6+1 (2 -> 3), and 2d6 acid.
    events = h.rolls(15, 3, 2, 1, 1).send(
        "attack", creature="ooze-1", target="aria", attack="pseudopod"
    )
    assert hurt(events) == [("aria", 3, "bludgeoning"), ("aria", 2, "acid")]
    made = next(e for e in events if isinstance(e, AttackMade))
    assert made.roll.dice == (15, 3) and made.roll.total == 18


# -- teleport -------------------------------------------------------------------------------------


def test_the_blink_dog_teleports_within_40_ft_and_then_bites() -> None:
    dog = srd("blink-dog", "Dog")
    h = fight(dog, make("aria", hp=30, ac=10), zones={"aria": "cellar"})
    refusal = h.refused("teleport", creature="dog-1", zone="vault")
    assert (refusal.code, refusal.message) == (
        "out_of_range",
        "vault is 60 ft away; Teleport reaches 40 ft.",
    )
    # Through the wall to the cellar, 30 ft away: no movement spent, then the bite.
    events = h.send("teleport", creature="dog-1", zone="cellar")
    assert h.creature("dog-1").zone == "cellar"
    assert [(e.cost, e.count) for e in events if isinstance(e, ActionGranted)] == [("attack", 1)]
    assert (h.state.resources.actions, h.state.resources.movement_spent) == (0, 0)
    # Bite +3: 15 hits, 1d6+1 (4 -> 5).
    events = h.rolls(15, 4).send("attack", creature="dog-1", target="aria", attack="bite")
    assert hurt(events) == [("aria", 5, "piercing")]
    # Recharge 4-6: spent until a 4 or more at the start of its turn.
    h.end_turn()
    h.rolls(3).end_turn()
    assert h.refused("teleport", creature="dog-1", zone="hall").code == "no_uses_left"


def test_the_unicorn_teleports_away_with_up_to_three_allies_in_its_zone() -> None:
    unicorn = srd("unicorn", "Unicorn")
    side = unicorn.side
    h = fight(unicorn, make("aria"), make("elf", side), make("fox", side), zones={"fox": "vault"})
    # Aria is no willing ally; the fox is not within 5 feet; four would be too many.
    assert h.refused("teleport", creature="unicorn-1", creatures=["aria"]).code == (
        "invalid_target"
    )
    assert h.refused("teleport", creature="unicorn-1", creatures=["fox"]).code == "out_of_range"
    assert (
        h.refused("teleport", creature="unicorn-1", creatures=["elf", "fox", "aria", "elf"]).code
        == "invalid_params"
    )
    h.send("teleport", creature="unicorn-1", creatures=["elf"])
    assert [cid for cid, c in h.state.creatures.items() if "escaped" in c.conditions] == [
        "unicorn-1",
        "elf",
    ]


# -- disease and ignite ----------------------------------------------------------------------------


def test_the_death_dogs_bite_poisons_with_disease_until_cured() -> None:
    dog = srd("death-dog", "Dog")
    h = fight(dog, make("aria", hp=40, ac=10), make("bram", hp=40, ac=10))
    # Bite +4: 15 hits, 1d6+2 (3 -> 5); DC 12 Con save 11 fails: poisoned, no end.
    events = h.rolls(15, 3, 11).send("attack", creature="dog-1", target="aria", attack="bite")
    assert [(e.creature, e.roll.total, e.success) for e in events if isinstance(e, SaveMade)] == [
        ("aria", 11, False)
    ]
    assert effects(h, "aria") == [("poisoned", None, False)]
    h.end_turn()
    h.end_turn()
    h.end_turn()
    # Sick already: a second bite asks for no second save.
    events = h.rolls(15, 3).send("attack", creature="dog-1", target="aria", attack="bite")
    assert [e for e in events if isinstance(e, SaveMade)] == []
    h.end_turn()
    h.end_turn()
    h.end_turn()
    # A save of 12 resists it.
    h.rolls(15, 3, 12).send("attack", creature="dog-1", target="bram", attack="bite")
    assert "poisoned" not in h.creature("bram").conditions


def test_the_magmins_touch_ignites_until_someone_douses_the_fire() -> None:
    magmin = srd("magmin", "Magmin")
    h = fight(magmin, make("aria", hp=40, ac=10), make("bram", hp=40))
    # Touch +4: 15 hits, 2d6 (3 + 4) fire; Aria is ignited.
    events = h.rolls(15, 3, 4).send("attack", creature="magmin-1", target="aria", attack="touch")
    assert hurt(events) == [("aria", 7, "fire")]
    assert "ignited" in h.creature("aria").conditions
    h.end_turn()
    # The end of Aria's turn: 1d6 (5) fire.
    events = h.rolls(5).end_turn()
    assert hurt(events) == [("aria", 5, "fire")]
    # Bram douses her (his action): no more burning.
    assert h.refused("put_out_fire", creature="bram", target="bram").code == "invalid_target"
    h.send("put_out_fire", creature="bram", target="aria")
    assert "ignited" not in h.creature("aria").conditions
    assert h.state.resources.actions == 0
    h.end_turn()
    h.end_turn()
    events = h.end_turn()
    assert hurt(events) == []


def test_turning_invisible_ends_the_concentration_it_held() -> None:
    imp = without_riders(srd("imp", "Imp"))
    h = fight(imp, make("aria"))
    # Concentrating on something else (a spell, given here by the GM) for 10 rounds.
    h.send("apply_effect", creature="imp-1", condition="concentrating", rounds=10)
    (held,) = [e.id for e in h.state.condition_effects.values() if e.creature == "imp-1"]
    h.send("invisibility", creature="imp-1")
    assert held not in h.state.condition_effects
    assert effects(h, "imp-1") == [("concentrating", None, False), ("invisible", None, True)]
