"""The SRD creatures' traits that change the odds (``zonekeep.plugins.srd._odds``), each
tested from its creature's SRD 5.1 stat block:

- Blood Frenzy (hunter shark): advantage on melee attack rolls against a creature that
  does not have all its hit points.
- Brave (knight), Dark Devotion (cultist), Fey Ancestry (drow), Duergar Resilience,
  Sure-Footed (goat), Two Heads (death dog): advantage on saves against what they name
  (frightened; charmed or frightened; charmed; charmed, paralyzed, poison and spells;
  Strength and Dexterity saves against being knocked prone; blinded, charmed, deafened,
  frightened, stunned, knocked unconscious), and the death dog's on Perception checks.
- Magic Resistance (imp): advantage on saves against spells and other magical effects.
- Sunlight Sensitivity (kobold): in sunlight, disadvantage on attack rolls and on
  Perception checks that rely on sight; Sunlight Weakness (shadow): on attack rolls,
  ability checks and saves.
- Reckless (berserker): at the start of its turn, advantage on its melee attack rolls
  that turn; attack rolls against it have advantage until the start of its next turn.
- Steadfast (bearded devil): cannot be frightened while it sees an ally within 30 feet.
- Aversion of Fire (flesh golem): after taking fire damage, disadvantage on attack
  rolls and ability checks until the end of its next turn.
- Ambusher and Surprise Attack (doppelganger, bugbear): in the first round, advantage
  against a creature it surprised, and +3d6 (+2d6 for the bugbear) on a hit.
- Armor while prone (ankheg): AC 14, 11 while prone.
- Bite (vampire spawn): only against a creature grappled by it, incapacitated or
  restrained (a willing one is the GM's call).
"""

from __future__ import annotations

from collections.abc import Iterable

from arena_fixture import arena
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    AttackMade,
    Command,
    CommandSpec,
    ConditionPrevented,
    Creature,
    Damaged,
    EncounterOptions,
    Param,
    RollRequest,
    RuleContext,
    SaveMade,
    affect_zone,
    apply_timed_condition,
    hookimpl,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>`` (side ``enemies``), named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name})
    return made


def versus_aria(
    entry_id: str,
    name: str,
    *,
    options: EncounterOptions | None = None,
    surprised: tuple[str, ...] = (),
    aria_first: bool = False,
) -> EncounterHarness:
    """The SRD creature ``name`` and Aria (AC 12, 20 hp) in the hall; the creature's turn
    first unless ``aria_first``; flanking off."""
    h = EncounterHarness(
        [srd(entry_id, name), make("aria", ac=12)],
        arena=arena(),
        options=options or EncounterOptions(flanking=False),
    )
    me = f"{name.lower()}-1"
    h.start(
        surprised=surprised,
        positions={me: "hall", "aria": "hall"},
        initiative=[10, 20] if aria_first else [20, 10],
    )
    return h


def mods(h: EncounterHarness, request: RollRequest) -> list[tuple[str, str]]:
    """The roll modifiers every plugin gives ``request`` now, as (effect, source)."""
    return [(m.effect, m.source) for m in h.engine.context(h.state).modifiers(request)]


def attack(h: EncounterHarness, who: str, target: str, name: str, *d20: int) -> AttackMade:
    events = h.rolls(*d20).send("attack", creature=who, target=target, attack=name)
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    return made


def save(cid: str, ability: str, *against: str, magical: bool = False) -> RollRequest:
    return RollRequest("save", cid, ability=ability, against=against, magical=magical)


# -- Blood Frenzy ---------------------------------------------------------------------------


def test_blood_frenzy_gives_advantage_only_against_a_wounded_creature() -> None:
    h = versus_aria("hunter-shark", "Jaws")
    # Aria has all her hit points: the bite (+6) rolls one die; 5 + 6 = 11 misses AC 12.
    first = attack(h, "jaws-1", "aria", "bite", 5)
    assert (first.roll.advantage, first.roll.dice, first.hit) == ("none", (5,), False)
    h.send("damage", creature="aria", amount=1)
    assert h.creature("aria").hp == 19
    h.end_turn()
    h.end_turn()
    # Below her maximum: advantage, the 14 kept of 3 and 14.
    second = attack(h, "jaws-1", "aria", "bite", 3, 14, 1, 1)
    assert (second.roll.advantage, second.roll.dice, second.roll.kept) == (
        "advantage",
        (3, 14),
        (14,),
    )
    assert second.roll.sources == ("advantage:blood frenzy: Aria is wounded",)
    h.assert_replay_matches()


def test_blood_frenzy_is_for_melee_attacks_only() -> None:
    h = versus_aria("hunter-shark", "Jaws")
    h.send("damage", creature="aria", amount=5)
    ranged = RollRequest("attack", "jaws-1", target="aria", attack_kind="ranged")
    assert mods(h, ranged) == []
    melee = RollRequest("attack", "jaws-1", target="aria", attack_kind="melee")
    assert mods(h, melee) == [("advantage", "blood frenzy: Aria is wounded")]


# -- advantage on saves against what they name ---------------------------------------------


def test_brave_knight_has_advantage_on_saves_against_being_frightened_only() -> None:
    h = versus_aria("knight", "Roland")
    assert mods(h, save("roland-1", "wis", "frightened")) == [("advantage", "brave: frightened")]
    assert mods(h, save("roland-1", "wis", "charmed")) == []
    assert mods(h, save("roland-1", "wis")) == []  # a save that says nothing


def test_brave_applies_to_the_save_that_ends_a_timed_frightened_condition() -> None:
    """Durations passes the condition as what the end-of-turn save is against."""
    h = versus_aria("knight", "Roland")
    h.send(
        "apply_effect",
        creature="roland-1",
        condition="frightened",
        save="wis",
        dc=15,
    )
    assert "frightened" in h.creature("roland-1").conditions
    # Roland's end-of-turn Wisdom save (+2): advantage, 4 and 13 -> 13 + 2 = 15, ends it.
    events = h.rolls(4, 13).end_turn()
    (made,) = [e for e in events if isinstance(e, SaveMade)]
    assert (made.roll.advantage, made.roll.dice, made.roll.total, made.success) == (
        "advantage",
        (4, 13),
        15,
        True,
    )
    assert made.roll.sources == ("advantage:brave: frightened",)
    assert "frightened" not in h.creature("roland-1").conditions
    h.assert_replay_matches()


def test_dark_devotion_fey_ancestry_and_duergar_resilience() -> None:
    h = EncounterHarness(
        [srd("cultist", "Cal"), srd("drow", "Dra"), srd("duergar", "Dur"), make("aria")],
        arena=arena(),
    )
    h.start(
        positions={"cal-1": "hall", "dra-1": "hall", "dur-1": "hall", "aria": "hall"},
        initiative=[20, 19, 18, 10],
    )
    # Cultist: charmed or frightened.
    assert mods(h, save("cal-1", "wis", "charmed")) == [("advantage", "dark devotion: charmed")]
    assert mods(h, save("cal-1", "wis", "frightened")) == [
        ("advantage", "dark devotion: frightened")
    ]
    assert mods(h, save("cal-1", "con", "poisoned")) == []
    # Drow: charmed only.
    assert mods(h, save("dra-1", "wis", "charmed")) == [("advantage", "fey ancestry: charmed")]
    assert mods(h, save("dra-1", "wis", "frightened")) == []
    # Duergar: charmed, paralyzed, poison, and spells (a magical save).
    assert mods(h, save("dur-1", "con", "paralyzed")) == [
        ("advantage", "duergar resilience: paralyzed")
    ]
    assert mods(h, save("dur-1", "con", "poisoned")) == [
        ("advantage", "duergar resilience: poisoned")
    ]
    assert mods(h, save("dur-1", "dex", magical=True)) == [
        ("advantage", "duergar resilience: magic")
    ]
    assert mods(h, save("dur-1", "dex", "prone")) == []


def test_sure_footed_is_for_strength_and_dexterity_saves_against_prone() -> None:
    h = versus_aria("goat", "Billy")
    assert mods(h, save("billy-1", "str", "prone")) == [("advantage", "sure-footed: prone")]
    assert mods(h, save("billy-1", "dex", "prone")) == [("advantage", "sure-footed: prone")]
    assert mods(h, save("billy-1", "con", "prone")) == []
    assert mods(h, save("billy-1", "str", "restrained")) == []


def test_two_heads_perception_and_saves() -> None:
    h = versus_aria("death-dog", "Orthrus")
    perception = RollRequest("check", "orthrus-1", ability="wis", skill="perception")
    assert mods(h, perception) == [("advantage", "two-headed: perception")]
    for condition in ("blinded", "charmed", "deafened", "frightened", "stunned", "unconscious"):
        assert mods(h, save("orthrus-1", "con", condition)) == [
            ("advantage", f"two-headed: {condition}")
        ]
    assert mods(h, save("orthrus-1", "con", "poisoned")) == []
    assert mods(h, RollRequest("check", "orthrus-1", ability="dex", skill="stealth")) == []


class Blast:
    """A test plugin: the GM's ``blast`` aims 4 force damage at a zone, Dexterity save
    DC 13 for half, magical or not as asked (``affect_zone``'s ``magical``)."""

    @staticmethod
    def _blast(ctx: RuleContext, cmd: Command) -> None:
        affect_zone(
            ctx,
            cmd.params["zone"],
            damage=4,
            damage_type="force",
            save="dex",
            dc=13,
            source="blast",
            magical=cmd.params.get("magical") is True,
        )

    @hookimpl
    def zonekeep_commands(self) -> Iterable[CommandSpec]:
        return (
            CommandSpec(
                "blast",
                self._blast,
                "Test: 4 force damage at a zone, Dexterity save DC 13 for half.",
                {
                    "zone": Param("zone", True, "the zone"),
                    "magical": Param("boolean", False, "a magical effect"),
                },
                who="gm",
            ),
        )


def test_magic_resistance_imp_saves_with_advantage_against_a_magical_blast_only() -> None:
    h = EncounterHarness([srd("imp", "Quip"), make("aria")], arena=arena(), extra_plugins=[Blast()])
    h.start(positions={"quip-1": "yard", "aria": "hall"}, initiative=[20, 10])
    # Magical: Dex +3 with advantage, 5 and 14 -> 17, a success: half of 4 is 2.
    events = h.rolls(5, 14).send("blast", zone="yard", magical=True)
    (made,) = [e for e in events if isinstance(e, SaveMade)]
    assert (made.roll.advantage, made.roll.kept, made.roll.total, made.success) == (
        "advantage",
        (14,),
        17,
        True,
    )
    assert made.roll.sources == ("advantage:magic resistance: magic",)
    assert [d.amount for d in events if isinstance(d, Damaged)] == [2]
    # Not magical: one die, 5 + 3 = 8 fails, the full 4.
    events = h.rolls(5).send("blast", zone="yard")
    (made,) = [e for e in events if isinstance(e, SaveMade)]
    assert (made.roll.advantage, made.roll.dice, made.success) == ("none", (5,), False)
    assert [d.amount for d in events if isinstance(d, Damaged)] == [4]
    assert h.creature("quip-1").hp == 10 - 6
    h.assert_replay_matches()


def test_magic_resistance_is_for_magical_saves_only() -> None:
    h = versus_aria("imp", "Quip")
    assert mods(h, save("quip-1", "dex", magical=True)) == [
        ("advantage", "magic resistance: magic")
    ]
    assert mods(h, save("quip-1", "dex")) == []
    assert mods(h, save("quip-1", "wis", "frightened")) == []


# -- Sunlight -------------------------------------------------------------------------------


def sunlit(*zones: str) -> EncounterOptions:
    return EncounterOptions(flanking=False, settings={"zonekeep.srd": {"sunlight": list(zones)}})


def test_sunlight_sensitivity_in_a_sunlit_zone_only() -> None:
    h = versus_aria("kobold", "Snik", options=sunlit("hall"))
    made = attack(h, "snik-1", "aria", "dagger", 17, 3)
    # Disadvantage: 17 and 3, the 3 kept: 3 + 4 = 7 misses.
    assert (made.roll.advantage, made.roll.dice, made.roll.kept, made.hit) == (
        "disadvantage",
        (17, 3),
        (3,),
        False,
    )
    assert made.roll.sources == ("disadvantage:sunlight sensitivity: in sunlight",)
    perception = RollRequest("check", "snik-1", ability="wis", skill="perception")
    assert mods(h, perception) == [("disadvantage", "sunlight sensitivity: in sunlight")]
    # Other checks and saves are untouched for a kobold.
    assert mods(h, RollRequest("check", "snik-1", ability="dex", skill="stealth")) == []
    assert mods(h, save("snik-1", "dex")) == []
    h.assert_replay_matches()


def test_no_sunlight_outside_the_sunlit_zones_or_by_default() -> None:
    shaded = versus_aria("kobold", "Snik", options=sunlit("yard"))
    melee = RollRequest("attack", "snik-1", target="aria", attack_kind="melee")
    assert mods(shaded, melee) == []
    default = versus_aria("kobold", "Snik")
    assert mods(default, melee) == []
    everywhere = versus_aria("kobold", "Snik", options=sunlit("*"))
    assert mods(everywhere, melee) == [("disadvantage", "sunlight sensitivity: in sunlight")]


def test_sunlight_weakness_hampers_the_shadows_checks_and_saves_too() -> None:
    h = versus_aria("shadow", "Umbra", options=sunlit("hall"))
    weak = ("disadvantage", "sunlight weakness: in sunlight")
    assert mods(h, RollRequest("check", "umbra-1", ability="dex", skill="stealth")) == [weak]
    assert mods(h, save("umbra-1", "con")) == [weak]
    melee = RollRequest("attack", "umbra-1", target="aria", attack_kind="melee")
    assert mods(h, melee) == [weak]


# -- Reckless -------------------------------------------------------------------------------


def test_reckless_berserker_attacks_with_advantage_and_is_attacked_with_advantage() -> None:
    h = versus_aria("berserker", "Bjorn")
    h.send("reckless", creature="bjorn-1")
    assert "reckless" in h.creature("bjorn-1").conditions
    # Greataxe +5 with advantage: 2 and 9 -> 9 + 5 = 14 hits AC 12.
    axe = attack(h, "bjorn-1", "aria", "greataxe", 2, 9, 6)
    assert (axe.roll.advantage, axe.roll.kept, axe.hit) == ("advantage", (9,), True)
    assert axe.roll.sources == ("advantage:reckless",)
    h.end_turn()
    # Aria's turn: her blade against Bjorn has advantage (he is still reckless).
    blade = attack(h, "aria", "bjorn-1", "blade", 1, 12, 3)
    assert (blade.roll.advantage, blade.roll.kept) == ("advantage", (12,))
    assert blade.roll.sources == ("advantage:reckless: Bjorn",)
    h.end_turn()
    # The start of Bjorn's next turn ends it: no advantage either way now.
    assert "reckless" not in h.creature("bjorn-1").conditions
    plain = attack(h, "bjorn-1", "aria", "greataxe", 2)
    assert (plain.roll.advantage, plain.roll.dice) == ("none", (2,))
    h.assert_replay_matches()


def test_reckless_is_chosen_before_moving_or_acting_and_only_by_the_reckless() -> None:
    h = versus_aria("berserker", "Bjorn")
    h.rolls(2).send("attack", creature="bjorn-1", target="aria", attack="greataxe")
    late = h.refused("reckless", creature="bjorn-1")
    assert late.code == "invalid_params" and "before it moves or acts" in late.message
    assert "reckless" not in h.creature("bjorn-1").conditions
    h.end_turn()
    refusal = h.refused("reckless", h.player("player-aria"), creature="aria")
    assert (refusal.code, refusal.message) == ("invalid_params", "Aria has no Reckless.")


# -- Steadfast ------------------------------------------------------------------------------


class Scare:
    """A test plugin: the GM's ``frighten`` (``scare`` is the quasit's) frightens a creature as a rule would (through
    ``apply_timed_condition``, not the GM's immunity check)."""

    @staticmethod
    def _scare(ctx: RuleContext, cmd: Command) -> None:
        apply_timed_condition(ctx, cmd.params["creature"], "frightened", rounds=1, source="scare")

    @hookimpl
    def zonekeep_commands(self) -> Iterable[CommandSpec]:
        return (
            CommandSpec(
                "frighten",
                self._scare,
                "Test: frighten a creature for a round.",
                {"creature": Param("creature", True, "the creature")},
                who="gm",
            ),
        )


def devil_and_imp(imp_zone: str) -> EncounterHarness:
    h = EncounterHarness(
        [srd("bearded-devil", "Barb"), srd("imp", "Quip"), make("aria")],
        arena=arena(),
        extra_plugins=[Scare()],
    )
    h.start(
        positions={"barb-1": "hall", "quip-1": imp_zone, "aria": "hall"}, initiative=[20, 15, 10]
    )
    return h


def test_steadfast_devil_cannot_be_frightened_with_an_ally_in_sight_within_30_ft() -> None:
    # The imp is in the yard, 15 ft away (the yard's size).
    h = devil_and_imp("yard")
    refusal = h.refused("grant_condition", creature="barb-1", condition="frightened")
    assert (refusal.code, refusal.message) == (
        "condition_immune",
        "Barb cannot be frightened now (steadfast: Quip in sight); send force: true to "
        "overrule that.",
    )
    # A rule frightening it meets the immunity: prevented, nothing given.
    events = h.send("frighten", creature="barb-1")
    assert [e for e in events if isinstance(e, ConditionPrevented)] == [
        ConditionPrevented("barb-1", "frightened", "scare")
    ]
    assert "frightened" not in h.creature("barb-1").conditions
    assert h.state.condition_effects == {}
    # The imp stunned (incapacitated) is no help: now the devil can be frightened.
    h.send("grant_condition", creature="quip-1", condition="stunned")
    h.send("frighten", creature="barb-1")
    assert "frightened" in h.creature("barb-1").conditions
    h.assert_replay_matches()


def test_steadfast_needs_the_ally_within_30_ft_and_the_devil_able_to_see() -> None:
    # The road is 45 ft from the hall (the yard's 15 ft, then the road's 30): too far.
    far = devil_and_imp("road")
    far.send("frighten", creature="barb-1")
    assert "frightened" in far.creature("barb-1").conditions
    blind = devil_and_imp("hall")
    blind.send("grant_condition", creature="barb-1", condition="blinded")
    blind.send("frighten", creature="barb-1")
    assert "frightened" in blind.creature("barb-1").conditions
    # The GM can overrule the immunity explicitly.
    forced = devil_and_imp("hall")
    forced.send("grant_condition", creature="barb-1", condition="frightened", force=True)
    assert "frightened" in forced.creature("barb-1").conditions


# -- Aversion of Fire -----------------------------------------------------------------------


def test_aversion_of_fire_after_fire_damage_until_the_end_of_its_next_turn() -> None:
    h = versus_aria("flesh-golem", "Adam", aria_first=True)
    # Cold damage changes nothing; fire damage (on Aria's turn) makes it fire-averse.
    h.send("damage", creature="adam-1", amount=4, damage_type="cold")
    assert "fire-averse" not in h.creature("adam-1").conditions
    h.send("damage", creature="adam-1", amount=4, damage_type="fire")
    assert "fire-averse" in h.creature("adam-1").conditions
    h.end_turn()
    # The golem's slam (+7) with disadvantage: 15 and 4 -> 4 + 7 = 11 misses AC 12.
    slam = attack(h, "adam-1", "aria", "slam", 15, 4)
    assert (slam.roll.advantage, slam.roll.kept, slam.hit) == ("disadvantage", (4,), False)
    assert slam.roll.sources == ("disadvantage:aversion of fire",)
    check = RollRequest("check", "adam-1", ability="str", skill="athletics")
    assert mods(h, check) == [("disadvantage", "aversion of fire")]
    assert mods(h, save("adam-1", "con")) == []  # saves are not hampered
    h.end_turn()  # the end of its next turn ends it
    assert "fire-averse" not in h.creature("adam-1").conditions
    h.assert_replay_matches()


# -- Ambusher, Surprise Attack --------------------------------------------------------------


def test_doppelganger_ambushes_a_surprised_creature_in_the_first_round() -> None:
    h = versus_aria("doppelganger", "Mimic", surprised=("aria",))
    # Slam +6 with advantage (3 and 10 -> 16 hits), 1d6+4 = 2+4 = 6, then 3d6 = 1+2+3 = 6.
    events = h.rolls(3, 10, 2, 1, 2, 3).send(
        "attack", creature="mimic-1", target="aria", attack="slam"
    )
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert (made.roll.advantage, made.roll.kept, made.hit) == ("advantage", (10,), True)
    assert made.roll.sources == ("advantage:ambusher: Aria is surprised",)
    damage = [(d.amount, d.damage_type) for d in events if isinstance(d, Damaged)]
    assert damage == [(6, "bludgeoning"), (6, "bludgeoning")]
    assert h.creature("aria").hp == 8
    h.assert_replay_matches()


def test_no_ambush_against_a_creature_that_was_not_surprised_or_after_round_one() -> None:
    h = versus_aria("bugbear", "Grok")
    # Aria is not surprised: the morningstar (+4) hits 10 + 4 = 14 for 2d8+2 = 3+4+2 = 9 only.
    events = h.rolls(10, 3, 4).send(
        "attack", creature="grok-1", target="aria", attack="morningstar"
    )
    assert [d.amount for d in events if isinstance(d, Damaged)] == [9]
    later = versus_aria("bugbear", "Grok", surprised=("aria",))
    later.end_turn()  # Grok waits
    later.end_turn()  # Aria's surprised turn
    assert (later.state.round, later.state.active, later.state.surprised) == (2, "grok-1", [])
    events = later.rolls(10, 3, 4).send(
        "attack", creature="grok-1", target="aria", attack="morningstar"
    )
    assert [d.amount for d in events if isinstance(d, Damaged)] == [9]


def test_bugbear_surprise_attack_adds_2d6_in_the_first_round() -> None:
    h = versus_aria("bugbear", "Grok", surprised=("aria",))
    # Morningstar 10 + 4 = 14 hits; 2d8+2 = 3+4+2 = 9; surprise 2d6 = 5+6 = 11 piercing.
    events = h.rolls(10, 3, 4, 5, 6).send(
        "attack", creature="grok-1", target="aria", attack="morningstar"
    )
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    assert made.roll.advantage == "none"  # the bugbear is no ambusher
    assert [(d.amount, d.damage_type) for d in events if isinstance(d, Damaged)] == [
        (9, "piercing"),
        (11, "piercing"),
    ]
    assert h.creature("aria").hp == 0
    h.assert_replay_matches()


# -- Armor while prone, Bite's targets ------------------------------------------------------


def test_ankheg_armor_class_drops_to_11_while_prone() -> None:
    h = versus_aria("ankheg", "Digger", aria_first=True)
    # Aria's blade (+4): 7 + 4 = 11 misses AC 14.
    assert attack(h, "aria", "digger-1", "blade", 7).hit is False
    h.end_turn()
    h.end_turn()
    h.send("grant_condition", creature="digger-1", condition="prone")
    # Prone: AC 11; 7 + 4 = 11 hits (advantage from prone within 5 ft: 7 and 2, 7 kept).
    made = attack(h, "aria", "digger-1", "blade", 7, 2, 3)
    assert (made.roll.kept, made.hit) == ((7,), True)
    assert made.roll.total == 11


def test_vampire_spawn_bites_only_a_grappled_incapacitated_or_restrained_creature() -> None:
    h = versus_aria("vampire-spawn", "Vlad")
    refusal = h.refused("attack", creature="vlad-1", target="aria", attack="bite")
    assert refusal.code == "invalid_target"
    assert refusal.message == (
        "Vlad's bite only reaches a creature that is grappled or incapacitated or "
        "restrained (grappled by it; a willing one is the GM's call): Aria is not."
    )
    assert h.state.resources.actions == 1  # nothing spent
    # The claws are not restricted.
    attack(h, "vlad-1", "aria", "claws", 2)
    h.end_turn()
    h.end_turn()
    h.send("grant_condition", creature="aria", condition="restrained")
    # Restrained, Aria may be bitten (with advantage: 2 and 3, 3 + 6 = 9 misses AC 12).
    bite = attack(h, "vlad-1", "aria", "bite", 2, 3)
    assert (bite.attack, bite.roll.advantage, bite.roll.kept, bite.hit) == (
        "bite",
        "advantage",
        (3,),
        False,
    )
    h.assert_replay_matches()


def test_vampire_spawn_bites_a_creature_grappled_by_it_not_by_another() -> None:
    h = versus_aria("vampire-spawn", "Vlad")
    h.send("apply_effect", creature="aria", condition="grappled", source="grapple:ogre-1:grab")
    assert h.refused("attack", creature="vlad-1", target="aria", attack="bite").code == (
        "invalid_target"
    )
    h.send("apply_effect", creature="aria", condition="grappled", source="grapple:vlad-1:claws")
    bite = attack(h, "vlad-1", "aria", "bite", 2)
    assert (bite.attack, bite.hit) == ("bite", False)


def test_sure_footed_giant_goat_saves_with_advantage_against_a_wolfs_knockdown() -> None:
    """The wolf's bite: DC 11 Strength save or prone; the giant goat (Str +3) has
    advantage on it, through the rider's save (features' save-or-condition)."""
    h = EncounterHarness(
        [srd("wolf", "Akela"), srd("giant-goat", "Billy")],
        arena=arena(),
        options=EncounterOptions(flanking=False),
    )
    h.start(positions={"akela-1": "hall", "billy-1": "hall"}, initiative=[20, 10])
    # Bite +4: 12 + 4 = 16 hits AC 11; 2d4+2 = 1+1+2 = 4; the save: 3 and 8 -> 8 + 3 = 11.
    events = h.rolls(12, 1, 1, 3, 8).send(
        "attack", creature="akela-1", target="billy-1", attack="bite"
    )
    (made,) = [e for e in events if isinstance(e, SaveMade)]
    assert (made.ability, made.roll.advantage, made.roll.kept, made.roll.total) == (
        "str",
        "advantage",
        (8,),
        11,
    )
    assert made.roll.sources == ("advantage:sure-footed: prone",)
    assert made.success is True
    assert "prone" not in h.creature("billy-1").conditions
    h.assert_replay_matches()
