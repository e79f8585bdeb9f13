"""The bundled conditions' familiar (SRD 5.1) effects, with exact outcomes
(plugins/conditions.py and plugins/combat.py; docs/rules.md, "Conditions").

Aria (a PC: blade +4, 1d6+2 slashing; bow +4, 1d8 piercing) and a goblin (20 hp,
AC 12, blade) stand in the hall of a two-zone arena (hall, yard: 30 ft each, one
link); Aria acts first. "Within 5 feet" is the zones' engagement: a creature engaged
with the target, or a melee attack from the target's zone.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make

from zonekeep.sdk import (
    Arena,
    Attack,
    AttackMade,
    ConditionApplied,
    ConditionRemoved,
    Damaged,
    DecisionOpened,
    InitiativeRolled,
    Link,
    RollModifier,
    RollRequest,
    SaveMade,
    Zone,
)
from zonekeep.sdk.testing import EncounterHarness

BOW = Attack("bow", "ranged", 4, "1d8", "piercing", reach=0, range=80, long_range=320)
BLADE = Attack("blade", "melee", 4, "1d6+2", "slashing")


def arena(*, sight: bool = True) -> Arena:
    return Arena(
        id="two",
        name="Two rooms",
        zones=(Zone("hall", "Hall", 30), Zone("yard", "Yard", 30)),
        links=(Link("hall", "yard", "beside", blocks_sight=not sight),),
    )


def fight(
    aria: dict[str, Any] | None = None,
    gob: dict[str, Any] | None = None,
    *,
    where: tuple[str, str] = ("hall", "hall"),
    sight: bool = True,
    initiative: tuple[int, ...] = (15, 10),
) -> EncounterHarness:
    h = EncounterHarness(
        [
            make("aria", attacks=[BLADE, BOW], **(aria or {})),
            make("gob", "foes", **(gob or {})),
        ],
        arena=arena(sight=sight),
    )
    h.start(positions={"aria": where[0], "gob": where[1]}, initiative=list(initiative))
    return h


def attack(
    h: EncounterHarness, who: str, target: str, *dice: int, with_: str = "blade"
) -> AttackMade:
    h.rolls(*dice)
    events = h.send("attack", creature=who, target=target, attack=with_)
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    return made


def area_save(h: EncounterHarness, save: str, natural: int) -> SaveMade:
    """Aria throws a 5 ft sphere on the hall at the goblin (DC 15 ``save``), whose die
    comes up ``natural``: the goblin's save."""
    h.rolls(natural)
    h.send(
        "area_effect",
        creature="aria",
        zone="hall",
        shape="sphere",
        size=5,
        range=0,
        targets=["gob"],
        save=save,
        dc=15,
        name="Burst",
    )
    (made,) = h.of_type(SaveMade)
    return made


def dying_pc(condition: str = "dying") -> dict[str, Any]:
    """The goblin as a PC at 0 hit points, ``dying`` or ``stable``, fresh for each fight."""
    return {"pc": True, "hp": 0, "conditions": [condition]}


# -- poisoned --------------------------------------------------------------------------------------


def test_poisoned_attacks_with_disadvantage() -> None:
    h = fight()
    h.send("grant_condition", creature="aria", condition="poisoned")
    made = attack(h, "aria", "gob", 15, 3)  # keeps the 3: 7 < 12
    assert (made.roll.advantage, made.roll.kept, made.hit) == ("disadvantage", (3,), False)
    assert "disadvantage:poisoned" in made.roll.sources


@pytest.mark.rule("encounter.txt:12.2")
def test_poisoned_makes_its_ability_checks_with_disadvantage_initiative_included() -> None:
    h = fight({"conditions": ["poisoned"]}, initiative=(15, 4, 10))  # Aria keeps the 4
    (rolled,) = h.of_type(InitiativeRolled)
    entry = next(e for e in rolled.entries if e.members == ("aria",))
    assert (entry.roll.advantage, entry.roll.dice, entry.total) == ("disadvantage", (15, 4), 4)
    assert h.state.active == "gob"


# -- frightened ------------------------------------------------------------------------------------


def frightened_of_gob(h: EncounterHarness) -> None:
    h.send("apply_effect", creature="aria", condition="frightened", rounds=10, source="gob")


def test_frightened_has_disadvantage_while_its_fear_is_in_sight() -> None:
    h = fight(where=("hall", "yard"))
    frightened_of_gob(h)
    made = attack(h, "aria", "gob", 15, 2, with_="bow")
    assert made.roll.advantage == "disadvantage"
    assert "disadvantage:frightened" in made.roll.sources


def test_frightened_checks_have_disadvantage_only_while_its_fear_is_in_sight() -> None:
    check = RollRequest("check", "aria", ability="dex", skill="athletics")
    for sight, expected in ((True, [RollModifier("disadvantage", "frightened")]), (False, [])):
        h = fight(where=("hall", "yard"), sight=sight)
        frightened_of_gob(h)
        assert h.engine.context(h.state).modifiers(check) == expected


def test_frightened_cannot_enter_the_zone_of_its_fear() -> None:
    h = fight(where=("hall", "yard"))
    frightened_of_gob(h)
    refusal = h.refused("enter", creature="aria", zones=["yard"])
    assert (refusal.code, refusal.message) == (
        "frightened",
        "Aria is frightened of Gob and will not go closer to it.",
    )
    assert h.creature("aria").zone == "hall"


def test_frightened_of_an_unknown_source_always_has_disadvantage() -> None:
    h = fight()
    h.send("grant_condition", creature="aria", condition="frightened")
    made = attack(h, "aria", "gob", 15, 2)
    assert made.roll.advantage == "disadvantage"
    h = fight(where=("hall", "yard"))
    h.send("grant_condition", creature="aria", condition="frightened")
    h.send("enter", creature="aria", zones=["yard"])  # no source to keep away from
    assert h.creature("aria").zone == "yard"


# -- blinded and invisible -------------------------------------------------------------------------


def test_blinded_attacks_with_disadvantage_and_is_attacked_with_advantage() -> None:
    h = fight({"conditions": ["blinded"]})
    assert attack(h, "aria", "gob", 15, 2).roll.advantage == "disadvantage"
    h.end_turn()
    made = attack(h, "gob", "aria", 3, 9, 4)  # keeps the 9: 13 >= 12, a hit
    assert (made.roll.advantage, made.roll.kept, made.hit) == ("advantage", (9,), True)
    assert "advantage:target blinded" in made.roll.sources


def test_a_blinded_creature_is_offered_no_opportunity_attack() -> None:
    def leaving(blind: bool) -> list[DecisionOpened]:
        h = fight()
        attack(h, "aria", "gob", 15, 3)  # a melee attack engages them
        if blind:
            h.send("grant_condition", creature="aria", condition="blinded")
        h.end_turn()
        events = h.send("enter", creature="gob", zones=["yard"])
        return [e for e in events if isinstance(e, DecisionOpened)]

    (offer,) = leaving(blind=False)
    assert offer.decision.creature == "aria"
    assert leaving(blind=True) == []


def test_invisible_attacks_with_advantage_and_is_attacked_with_disadvantage() -> None:
    h = fight({"conditions": ["invisible"]})
    made = attack(h, "aria", "gob", 3, 10, 4)  # keeps the 10: 14 >= 12
    assert (made.roll.advantage, made.hit) == ("advantage", True)
    h.end_turn()
    made = attack(h, "gob", "aria", 18, 5)
    assert (made.roll.advantage, made.roll.kept, made.hit) == ("disadvantage", (5,), False)


# -- stunned, paralyzed, unconscious ---------------------------------------------------------------


def test_stunned_cannot_act_fails_str_and_dex_saves_and_is_attacked_with_advantage() -> None:
    h = fight(gob={"conditions": ["stunned"]})
    made = attack(h, "aria", "gob", 2, 9, 1)
    assert (made.roll.advantage, made.hit) == ("advantage", True)
    h.end_turn()
    assert h.state.active == "gob"
    assert h.refused("dash", creature="gob").code == "incapacitated"


def test_stunned_fails_str_and_dex_saves_whatever_the_roll() -> None:
    h = fight(gob={"conditions": ["stunned"]})
    save = area_save(h, "dex", 20)  # a natural 20 on the Dex save still fails
    assert (save.roll.natural, save.success, save.automatic_failure) == (20, False, "stunned")


def test_a_stunned_creatures_other_saves_roll_normally() -> None:
    h = fight(gob={"conditions": ["stunned"]})
    save = area_save(h, "wis", 15)
    assert (save.success, save.automatic_failure) == (True, "")


def test_a_hit_on_a_paralyzed_creature_from_its_zone_is_a_critical_hit() -> None:
    h = fight(gob={"conditions": ["paralyzed"]})
    made = attack(h, "aria", "gob", 4, 10, 3, 4)  # advantage keeps 10: hit; 2d6+2 = 9
    assert (made.hit, made.critical, made.roll.natural) == (True, True, 10)
    (damage,) = h.of_type(Damaged)
    assert (damage.roll is not None and damage.roll.expr, damage.amount) == ("1d6+2", 9)
    assert damage.roll is not None and len(damage.roll.dice) == 2


def test_a_ranged_hit_from_another_zone_on_a_paralyzed_creature_is_not_critical() -> None:
    h = fight(gob={"conditions": ["paralyzed"]}, where=("hall", "yard"))
    made = attack(h, "aria", "gob", 4, 10, 5, with_="bow")
    assert (made.hit, made.critical) == (True, False)
    assert h.creature("gob").hp == 15


def test_falling_unconscious_knocks_a_creature_prone() -> None:
    h = fight()
    events = h.send("grant_condition", creature="gob", condition="unconscious")
    assert ConditionApplied("gob", "prone", "fell unconscious") in events
    assert h.creature("gob").conditions == ["prone", "unconscious"]
    made = attack(h, "aria", "gob", 2, 11, 1, 2)
    assert (made.roll.advantage, made.critical) == ("advantage", True)
    h.assert_replay_matches()


def test_a_dying_creature_is_attacked_with_advantage_and_critically_hit_from_its_zone() -> None:
    # Our ruling (docs/rules.md, "dying"): at 0 hit points a PC is unconscious.
    h = fight(gob=dying_pc())
    made = attack(h, "aria", "gob", 4, 10, 3, 4)  # advantage keeps 10: hit; 2d6+2
    assert (made.roll.advantage, made.hit, made.critical) == ("advantage", True, True)
    (damage,) = h.of_type(Damaged)
    assert damage.roll is not None and len(damage.roll.dice) == 2


def test_a_ranged_hit_from_another_zone_on_a_dying_creature_is_not_critical() -> None:
    h = fight(gob=dying_pc(), where=("hall", "yard"))
    made = attack(h, "aria", "gob", 4, 10, 5, with_="bow")
    assert (made.roll.advantage, made.hit, made.critical) == ("advantage", True, False)


def test_a_dying_creature_fails_its_dex_save() -> None:
    h = fight(gob=dying_pc())
    save = area_save(h, "dex", 20)
    assert (save.roll.natural, save.success, save.automatic_failure) == (20, False, "dying")


# -- 0 hit points, dying or stable: unconscious ------------------------------------------------------


@pytest.mark.parametrize("down", ["dying", "stable"])
def test_at_0_hit_points_dying_or_stable_it_is_attacked_as_unconscious(down: str) -> None:
    h = fight(gob=dying_pc(down))
    made = attack(h, "aria", "gob", 4, 10, 3, 4)  # advantage keeps 10: a critical hit
    assert (made.roll.advantage, made.hit, made.critical) == ("advantage", True, True)
    assert made.roll.sources == (f"advantage:target {down}",)
    (damage,) = h.of_type(Damaged)
    assert damage.roll is not None and damage.roll.dice == (3, 4)


@pytest.mark.parametrize("down", ["dying", "stable"])
@pytest.mark.parametrize("ability", ["str", "dex"])
def test_at_0_hit_points_dying_or_stable_it_fails_str_and_dex_saves(
    down: str, ability: str
) -> None:
    h = fight(gob=dying_pc(down))
    save = area_save(h, ability, 20)
    assert (save.roll.natural, save.success, save.automatic_failure) == (20, False, down)


@pytest.mark.parametrize("down", ["dying", "stable"])
def test_at_0_hit_points_dying_or_stable_it_cannot_move_act_react_or_speak(down: str) -> None:
    h = fight(aria=dying_pc(down), gob={"attacks": [BLADE]})
    assert h.state.active == "aria"
    for command, params in (
        ("move", {"feet": 5}),
        ("attack", {"target": "gob"}),
        ("dash", {}),
        ("communicate", {"text": "help me"}),
        ("enter", {"zones": ["yard"]}),
    ):
        refusal = h.refused(command, creature="aria", **params)
        assert (refusal.code, refusal.message) == (
            "incapacitated",
            "Aria is incapacitated and cannot act.",
        ), command
    h.end_turn()  # ending the turn stays open to it
    h.send("ready", creature="gob", target="aria")
    h.end_turn()
    h.end_turn()  # round 2: the goblin, engaged with nobody, leaves; Aria cannot react
    h.send("enter", creature="gob", zones=["yard"])
    assert h.creature("gob").zone == "yard"
    assert not h.of_type(DecisionOpened)


def test_healed_above_0_a_stable_creature_wakes_and_acts() -> None:
    h = fight(aria=dying_pc("stable"))
    h.send("override", creature="aria", field="max_hp", value=20)
    assert h.refused("dash", creature="aria").code == "incapacitated"
    events = h.send("heal", creature="aria", amount=1)
    assert ConditionRemoved("aria", "stable", "healed") in events
    assert (h.creature("aria").hp, h.creature("aria").conditions) == (1, [])
    h.send("dash", creature="aria")


def test_stabilizing_keeps_the_creature_unconscious() -> None:
    h = fight(gob=dying_pc())
    h.send("stabilize", creature="gob")
    assert h.creature("gob").conditions == ["stable"]
    made = attack(h, "aria", "gob", 4, 10, 3, 4)
    assert (made.roll.advantage, made.critical) == ("advantage", True)


# -- prone, restrained, grappled -------------------------------------------------------------------


def test_prone_is_attacked_with_advantage_from_within_5_feet_and_disadvantage_beyond() -> None:
    near = fight(gob={"conditions": ["prone"]})
    assert attack(near, "aria", "gob", 4, 12, 3).roll.advantage == "advantage"
    far = fight(gob={"conditions": ["prone"]}, where=("hall", "yard"))
    made = attack(far, "aria", "gob", 15, 4, with_="bow")
    assert (made.roll.advantage, made.hit) == ("disadvantage", False)
    assert "disadvantage:target prone" in made.roll.sources


def test_a_ranged_attack_on_a_prone_creature_by_one_engaged_with_it_gains_its_advantage() -> None:
    h = fight(gob={"conditions": ["prone"]})
    attack(h, "aria", "gob", 4, 12, 3)  # the melee attack engages them
    h.end_turn()
    h.end_turn()
    made = attack(h, "aria", "gob", 2, with_="bow")
    # the prone target's advantage cancels the disadvantage of shooting an engaged enemy
    assert "advantage:target prone" in made.roll.sources
    assert made.roll.advantage == "none"


def test_restrained_and_grappled_have_speed_0() -> None:
    for condition in ("restrained", "grappled"):
        h = fight({"conditions": [condition]})
        refusal = h.refused("enter", creature="aria", zones=["yard"])
        assert (refusal.code, refusal.message) == (
            "speed_zero",
            f"Aria is {condition}: its speed is 0.",
        )


def test_restrained_attacks_and_dex_saves_with_disadvantage_and_is_attacked_with_advantage() -> (
    None
):
    h = fight({"conditions": ["restrained"]})
    assert attack(h, "aria", "gob", 15, 2).roll.advantage == "disadvantage"
    h.end_turn()
    assert attack(h, "gob", "aria", 2, 15, 3).roll.advantage == "advantage"
