"""The generic features the SDK's built-in rules implement (issue 30, points 4, 6, 7, 8):
multiattack, the save-or-condition and grapple riders, extra damage, nonmagical
defences, uses and recharges, ability checks and the GM's ``call_check``, each with
the exact outcome of scripted dice, on ``zonekeep.sdk.testing``."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make

from zonekeep.sdk import (
    Action,
    ActionTaken,
    Attack,
    AttackMade,
    CheckRolled,
    ConditionEffectApplied,
    ContestRolled,
    Creature,
    Damaged,
    ExtraDamage,
    MultiattackUsed,
    OnHit,
    RechargeRolled,
    ResourceRestored,
    SaveMade,
    SequenceItem,
    Trait,
    Uses,
    check_bonus,
)
from zonekeep.sdk.testing import EncounterHarness

SCIMITAR = Attack("scimitar", "melee", 4, "1d6+2", "slashing")


def goblin_boss(**kw: Any) -> Creature:
    """The SRD 5.1 goblin boss's attacks: Multiattack, two scimitar attacks, the second
    with disadvantage (its AC 17 and 21 hit points)."""
    return make(
        "boss",
        "goblins",
        dex=2,
        hp=21,
        ac=17,
        attacks=[SCIMITAR, Attack("shortbow", "ranged", 4, "1d6+2", "piercing", range=80)],
        actions=(
            Action(
                "multiattack",
                "Multiattack",
                text="Two scimitar attacks; the second has disadvantage.",
                params={"sequences": [["scimitar", {"attack": "scimitar", "disadvantage": True}]]},
            ),
        ),
        **kw,
    )


def boss_fight() -> EncounterHarness:
    h = EncounterHarness([goblin_boss(), make("aria", ac=15, hp=30), make("bren", ac=12, hp=30)])
    h.start(initiative=[18, 10, 5])
    assert h.state.active == "boss"
    return h


# -- multiattack (point 8) ---------------------------------------------------------------------


def test_the_goblin_boss_makes_two_scimitar_attacks_the_second_with_disadvantage() -> None:
    h = boss_fight()
    first = h.rolls(14, 3).send("multiattack", creature="boss", target="aria")
    assert [type(e) for e in first][:2] == [ActionTaken, MultiattackUsed]
    assert [e.cost for e in first if isinstance(e, ActionTaken)] == ["action"]
    used = next(e for e in first if isinstance(e, MultiattackUsed))
    assert used.attacks_left == (SequenceItem("scimitar", True),)
    assert used.current == SequenceItem("scimitar")
    made = next(e for e in first if isinstance(e, AttackMade))
    assert (made.roll.dice, made.roll.advantage, made.roll.total, made.hit) == (
        (14,),
        "none",
        18,
        True,
    )
    assert h.creature("aria").hp == 30 - 5
    assert h.state.resources.actions == 0  # the action is spent once, here
    # The second attack, at another target: two d20s, the lower kept.
    second = h.rolls(17, 6).send("multiattack", creature="boss", target="bren")
    made = next(e for e in second if isinstance(e, AttackMade))
    assert made.roll.dice == (17, 6) and made.roll.advantage == "disadvantage"
    assert made.roll.total == 10 and not made.hit
    assert "disadvantage:multiattack" in made.roll.sources
    assert not any(isinstance(e, ActionTaken) for e in second)
    # No third attack, and no other action.
    assert h.refused("multiattack", creature="boss", target="aria").code == "no_action_left"
    assert h.refused("attack", creature="boss", target="aria").code == "no_action_left"
    h.assert_replay_matches()


def test_multiattack_refuses_an_attack_its_sequence_does_not_list() -> None:
    h = boss_fight()
    refusal = h.refused("multiattack", creature="boss", target="aria", attack="shortbow")
    assert refusal.code == "no_such_feature"
    assert "makes no 'shortbow' attack" in refusal.message
    h.rolls(1).send("multiattack", creature="boss", target="aria")  # a natural 1 misses
    refusal = h.refused("multiattack", creature="boss", target="aria", attack="shortbow")
    assert refusal.code == "no_such_feature" and "left: scimitar" in refusal.message
    refusal = h.refused("multiattack", creature="boss", target="aria", sequence=0)
    assert refusal.code == "invalid_params"


def test_a_creature_without_multiattack_is_refused() -> None:
    h = EncounterHarness([make("aria"), make("gob", "foes")])
    h.start(initiative=[15, 10])
    refusal = h.refused("multiattack", creature="aria", target="gob")
    assert refusal.code == "no_such_feature"


def test_a_wolf_like_beast_makes_bite_and_claws_in_the_order_it_chooses() -> None:
    beast = make(
        "beast",
        "wolves",
        attacks=[
            Attack("bite", "melee", 5, "1d8+3", "piercing"),
            Attack("claws", "melee", 5, "2d4+3", "slashing"),
        ],
        actions=(Action("multiattack", "Multiattack", params={"sequences": [["bite", "claws"]]}),),
    )
    h = EncounterHarness([beast, make("aria", ac=10, hp=40)])
    h.start(initiative=[15, 10])
    details = {d.id: d for d in h.engine.action_details(h.state, "beast", h.gm)}
    offered = {a.name: a.targets for a in details["multiattack"].attacks or ()}
    assert offered == {"bite": ("aria",), "claws": ("aria",)}
    h.rolls(12, 2, 3).send("multiattack", creature="beast", target="aria", attack="claws")
    assert h.creature("aria").hp == 40 - (2 + 3 + 3)
    assert h.state.resources.attacks_left == [SequenceItem("bite")]
    details = {d.id: d for d in h.engine.action_details(h.state, "beast", h.gm)}
    offered = {a.name: a.targets for a in details["multiattack"].attacks or ()}
    assert offered == {"bite": ("aria",), "claws": ()}  # only the bite is left
    h.rolls(12, 4).send("multiattack", creature="beast", target="aria")
    assert h.creature("aria").hp == 40 - 8 - 7
    assert h.state.resources.attacks_left == []
    h.end_turn()
    assert h.state.resources.attacks_left == []


def test_multiattack_params_naming_a_missing_attack_are_refused_at_creation() -> None:
    bad = make(
        "x",
        "foes",
        actions=(Action("multiattack", "Multiattack", params={"sequences": [["claw"]]}),),
    )
    from zonekeep.sdk import Refusal

    with pytest.raises(Refusal) as caught:
        EncounterHarness([make("aria"), bad])
    assert "creatures[1].actions[0].params: sequences[0][0]: the creature has no attack 'claw'" in (
        caught.value.message
    )


# -- riders, extra damage, nonmagical defences (point 7) -------------------------------------------


def wolf() -> Creature:
    """The SRD 5.1 wolf's bite: +4, 2d4+2 piercing; DC 11 Strength save or prone."""
    bite = Attack(
        "bite",
        "melee",
        4,
        "2d4+2",
        "piercing",
        on_hit=(OnHit("save-or-condition", {"ability": "str", "dc": 11, "condition": "prone"}),),
    )
    return make("wolf", "wolves", attacks=[bite], traits=(Trait("pack-tactics", "Pack Tactics"),))


@pytest.mark.parametrize(("save_roll", "prone"), [(10, True), (11, False)])
def test_a_failed_save_against_the_wolf_bite_knocks_the_target_prone(
    save_roll: int, prone: bool
) -> None:
    h = EncounterHarness([wolf(), make("aria", ac=10, hp=30)])
    h.start(initiative=[15, 10])
    h.rolls(15, 2, 3, save_roll).send("attack", creature="wolf", target="aria")
    save = h.of_type(SaveMade)[-1]
    assert (save.creature, save.ability, save.dc, save.roll.total, save.success) == (
        "aria",
        "str",
        11,
        save_roll,
        not prone,
    )
    assert ("prone" in h.creature("aria").conditions) is prone
    assert h.creature("aria").hp == 30 - 7


def test_a_miss_triggers_no_rider() -> None:
    h = EncounterHarness([wolf(), make("aria", ac=20, hp=30)])
    h.start(initiative=[15, 10])
    h.rolls(5).send("attack", creature="wolf", target="aria")
    assert not h.of_type(SaveMade)


def test_extra_damage_is_rolled_with_a_hit_as_its_own_instance_doubled_on_a_critical() -> None:
    bite = Attack(
        "bite",
        "melee",
        4,
        "1d10+2",
        "piercing",
        extra_damage=(ExtraDamage("1d6", "acid"),),
    )
    h = EncounterHarness(
        [
            make("croc", "foes", attacks=[bite]),
            make("aria", ac=10, hp=60, damage_resistances=["acid"]),
        ]
    )
    h.start(initiative=[15, 10])
    h.rolls(12, 5, 4).send("attack", creature="croc", target="aria")
    hits = h.of_type(Damaged)
    assert [(d.damage_type, d.raw, d.amount) for d in hits] == [("piercing", 7, 7), ("acid", 4, 2)]
    h.end_turn()
    h.end_turn()
    h.rolls(20, 5, 5, 4, 6).send("attack", creature="croc", target="aria")
    crit = h.of_type(Damaged)[-2:]
    assert [(d.damage_type, d.raw) for d in crit] == [("piercing", 12), ("acid", 10)]


def test_nonmagical_resistance_applies_to_a_nonmagical_attack_only() -> None:
    club = Attack("club", "melee", 4, "1d6+2", "bludgeoning")
    staff = Attack("staff", "melee", 4, "1d6+2", "bludgeoning", magical=True)
    gargoyle = make(
        "garg",
        "foes",
        ac=10,
        hp=50,
        damage_resistances_nonmagical=["bludgeoning", "piercing", "slashing"],
        damage_immunities_nonmagical=["slashing"],
    )
    h = EncounterHarness([make("aria", attacks=[club, staff, SCIMITAR]), gargoyle])
    h.start(initiative=[15, 10])
    h.rolls(15, 5).send("attack", creature="aria", target="garg", attack="club")
    assert h.of_type(Damaged)[-1].amount == 3  # 7 halved
    h.end_turn()
    h.end_turn()
    h.rolls(15, 5).send("attack", creature="aria", target="garg", attack="staff")
    assert h.of_type(Damaged)[-1].amount == 7  # magical: whole
    h.end_turn()
    h.end_turn()
    h.rolls(15, 5).send("attack", creature="aria", target="garg", attack="scimitar")
    assert h.of_type(Damaged)[-1].amount == 0  # immune to nonmagical slashing
    assert h.creature("garg").hp == 50 - 3 - 7


def test_a_grapple_rider_grapples_and_the_target_escapes_against_the_escape_dc() -> None:
    tentacle = Attack(
        "tentacle",
        "melee",
        4,
        "1d6",
        "bludgeoning",
        on_hit=(OnHit("grapple", {"escape_dc": 13}),),
    )
    h = EncounterHarness(
        [
            make("kraken", "foes", attacks=[tentacle]),
            make("aria", ac=10, hp=30, skills={"athletics": 3}),
        ]
    )
    h.start(initiative=[15, 10])
    h.rolls(15, 4).send("attack", creature="kraken", target="aria")
    assert "grappled" in h.creature("aria").conditions
    assert h.of_type(ConditionEffectApplied)[-1].effect.source == "grapple:kraken:tentacle"
    h.end_turn()
    h.rolls(9).send("escape_grapple", creature="aria")  # 9 + 3 = 12 < 13
    check = h.of_type(CheckRolled)[-1]
    assert (check.skill, check.roll.total, check.dc, check.success) == ("athletics", 12, 13, False)
    assert "grappled" in h.creature("aria").conditions
    h.end_turn()
    h.end_turn()
    h.rolls(10).send("escape_grapple", creature="aria")  # 13: free
    assert h.of_type(CheckRolled)[-1].success is True
    assert "grappled" not in h.creature("aria").conditions
    assert h.refused("escape_grapple", creature="aria").code in ("invalid_target", "no_action_left")
    h.assert_replay_matches()


# -- uses and recharge (point 6) --------------------------------------------------------------------


def breather() -> Creature:
    return make(
        "hound",
        "foes",
        actions=(
            Action("spit", "Fire Breath", uses=Uses(recharge=5)),
            Action("gm", "Howl", kind="bonus_action", uses=Uses(per="turn", count=1)),
            Action("gm", "Rally", uses=Uses(charges=2)),
        ),
    )


def test_recharge_and_rest_through_commands() -> None:
    h = EncounterHarness([breather(), make("aria")], extra_plugins=[SpendPlugin()])
    h.start(initiative=[15, 10])
    h.send("spend", creature="hound", feature="Fire Breath")
    h.send("spend", creature="hound", feature="Howl")
    h.send("spend", creature="hound", feature="Rally")
    assert h.creature("hound").resources == {"spit": 0, "gm-howl": 0, "gm-rally": 1}
    assert h.refused("spend", creature="hound", feature="Fire Breath").code == "no_uses_left"
    h.end_turn()
    h.rolls(4).end_turn()  # the hound's turn starts: a 4 does not recharge it
    rolled = h.of_type(RechargeRolled)
    assert [(r.resource, r.roll.total, r.needed, r.recharged) for r in rolled] == [
        ("spit", 4, 5, False)
    ]
    assert h.creature("hound").resources == {"spit": 0, "gm-howl": 1, "gm-rally": 1}
    assert [(r.resource, r.reason) for r in h.of_type(ResourceRestored)] == [("gm-howl", "turn")]
    h.end_turn()
    h.rolls(5).end_turn()
    assert h.of_type(RechargeRolled)[-1].recharged is True
    assert h.creature("hound").resources["spit"] == 1
    h.send("rest", kind="short")
    assert h.creature("hound").resources["gm-rally"] == 1  # charges wait for a long rest
    h.send("rest", kind="long", creatures=["hound"])
    assert h.creature("hound").resources["gm-rally"] == 2
    assert h.refused("rest", kind="nap").code == "invalid_params"
    h.assert_replay_matches()


class SpendPlugin:
    """A test plugin spending a feature's use by name (as a content plugin's action does)."""

    from zonekeep.sdk import hookimpl

    @hookimpl
    def zonekeep_commands(self) -> list[object]:
        from zonekeep.sdk import CommandSpec, Param, spend_use

        def spend(ctx, cmd):  # type: ignore[no-untyped-def]
            me = ctx.creature(cmd.params["creature"])
            feature = next(a for a in me.actions if a.name == cmd.params["feature"])
            spend_use(ctx, me, feature)

        return [
            CommandSpec(
                "spend",
                spend,
                "spend a use",
                {
                    "creature": Param("creature", True, "who"),
                    "feature": Param("string", True, "which"),
                },
            )
        ]


# -- checks (point 4) -------------------------------------------------------------------------------


def test_check_bonus_uses_listed_skills_else_the_ability_and_proficiency() -> None:
    c = make("c", abilities={"str": 3, "dex": 1}, proficiency=3, skills={"stealth": 7})
    assert check_bonus(c, "dex", "stealth") == 7
    assert check_bonus(c, "str", "athletics") == 3
    assert check_bonus(c, "str", "athletics", proficient=True) == 6
    assert check_bonus(c, "str", "athletics", expertise=True) == 9


def test_call_check_rolls_a_check_or_save_for_each_creature() -> None:
    h = EncounterHarness(
        [
            make("aria", abilities={"wis": 2}, skills={"perception": 5}),
            make("bren", abilities={"wis": -1}),
            make("gob", "foes", saves={"dex": 4}),
        ]
    )
    events = h.rolls(10, 12).send(
        "call_check", creatures=["aria", "bren"], ability="wis", skill="perception", dc=13
    )
    checks = [e for e in events if isinstance(e, CheckRolled)]
    assert [(c.creature, c.roll.total, c.success, c.source) for c in checks] == [
        ("aria", 15, True, "call_check"),
        ("bren", 11, False, "call_check"),
    ]
    (save,) = h.rolls(6).send("call_check", creatures=["gob"], ability="dex", save=True)
    assert isinstance(save, CheckRolled)
    assert (save.save, save.roll.total, save.dc, save.success) == (True, 10, None, None)
    for bad in (
        {"creatures": [], "ability": "wis"},
        {"creatures": ["aria"], "ability": "luck"},
        {"creatures": ["aria"], "ability": "wis", "skill": "juggling"},
        {"creatures": ["aria"], "ability": "dex", "skill": "stealth", "save": True},
        {"creatures": ["aria", "aria"], "ability": "wis"},
        {"creatures": ["aria"], "ability": "wis", "dc": 31},
    ):
        assert h.refused("call_check", **bad).code == "invalid_params", bad
    assert h.refused("call_check", creatures=["nobody"], ability="wis").code == "unknown_creature"
    assert h.refused(
        "call_check", h.player("player-aria"), creatures=["aria"], ability="wis"
    ).code == ("gm_only")


def test_the_shove_contest_uses_the_sdk_checks() -> None:
    h = EncounterHarness(
        [make("aria", skills={"athletics": 5}), make("gob", "foes", skills={"acrobatics": 2})],
        zones=["field", "yard"],
    )
    h.start(positions={"aria": "field", "gob": "field"}, initiative=[15, 10])
    h.rolls(10, 10).send("shove", creature="aria", target="gob", zone="yard")
    contest = h.of_type(ContestRolled)[-1]
    assert (contest.skill, contest.roll.total, contest.target_skill, contest.target_roll.total) == (
        "athletics",
        15,
        "acrobatics",
        12,
    )
    assert contest.won
    assert h.creature("gob").zone == "yard"


def test_the_gm_spends_a_use_of_an_adjudicated_feature_and_it_recharges_on_its_own() -> None:
    h = EncounterHarness([breather(), make("aria")])
    h.start(initiative=[15, 10])
    h.send("use_feature", feature="spit", creature="hound")
    assert h.creature("hound").resources["spit"] == 0
    assert h.refused("use_feature", feature="spit", creature="hound").code == "no_uses_left"
    refusal = h.refused("use_feature", feature="bite", creature="hound")
    assert refusal.code == "no_such_feature" and "gm-howl, gm-rally, spit" in refusal.message
    h.end_turn()
    h.rolls(6).end_turn()
    assert h.creature("hound").resources["spit"] == 1


def test_a_creature_added_mid_encounter_has_its_feature_params_checked() -> None:
    h = EncounterHarness([make("aria"), make("gob", "foes")])
    h.start(initiative=[15, 10])
    bad = {
        "id": "ogre",
        "name": "Ogre",
        "side": "foes",
        "actions": [{"id": "multiattack", "name": "Multiattack", "params": {"sequences": []}}],
    }
    refusal = h.refused("add_creature", creature=bad)
    assert refusal.code == "invalid_params"
    assert "creature.actions[0].params.sequences" in refusal.message
