"""The class reactions offered as prompts after a roll (issue 31), each tested from the
SRD 5.1 text with characters built from sheets and scripted dice:

- Uncanny Dodge (rogue 5): when an attacker it can see hits it, halve the damage.
- Deflect Missiles (monk 3): when a ranged weapon attack hits it, reduce the damage by
  1d10 + Dexterity modifier + monk level.
- Cutting Words (bard, College of Lore 3): when a creature it can see within 60 feet
  makes an attack roll, spend a Bardic Inspiration use and subtract the die from the
  roll, after the roll and before the outcome.

Goblins: blade +4 (1d6+2 slashing), shortbow +4 (1d6+2 piercing, 80/320 ft).
"""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import keep

from zonekeep.plugins.classes._reactions import CUTTING_WORDS, DEFLECT_MISSILES, UNCANNY_DODGE
from zonekeep.sdk import (
    ActionTaken,
    Attack,
    AttackMade,
    AttackTrigger,
    Creature,
    Damaged,
    DamageStep,
    EncounterOptions,
    ResourceSpent,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness

BOW = Attack("shortbow", "ranged", 4, "1d6+2", "piercing", range=80, long_range=320)
BLADE = Attack("blade", "melee", 4, "1d6+2", "slashing")


def sheet(cid: str, name: str, cls: str, level: int, sub: str, **extra: Any) -> Creature:
    data: dict[str, Any] = {
        "name": name,
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": cls, "level": level, "subclass": sub}],
        "ability_scores": {"str": 10, "dex": 16, "con": 12, "int": 10, "wis": 12, "cha": 16},
        "hp": 30,
        "ac": 15,
        "weapons": [{"name": "dagger"}],
        **extra,
    }
    return character_creature(parse_character(data), cid, controller=f"player-{cid}")


def rogue() -> Creature:
    reaction = {"id": UNCANNY_DODGE, "name": "Uncanny Dodge", "kind": "reaction", "text": "Half."}
    return sheet("pip", "Pip", "rogue", 5, "thief", actions=[reaction])


def monk() -> Creature:
    reaction = {"id": DEFLECT_MISSILES, "name": "Deflect Missiles", "kind": "reaction", "text": "-"}
    return sheet("sora", "Sora", "monk", 3, "open-hand", actions=[reaction])


def bard() -> Creature:
    actions = [
        {
            "id": "bardic-inspiration",
            "name": "Bardic Inspiration",
            "kind": "bonus_action",
            "text": "A d6.",
            "uses": {"per": "long_rest", "count": 3},
        },
        {"id": CUTTING_WORDS, "name": "Cutting Words", "kind": "reaction", "text": "Minus."},
    ]
    return sheet("lyra", "Lyra", "bard", 3, "lore", actions=actions)


def goblin(cid: str = "gob") -> Creature:
    return make(cid, "foes", attacks=[BLADE, BOW])


def fight(where: dict[str, str], *creatures: Creature) -> EncounterHarness:
    """The creatures in ``where``'s zones, in this order of initiative; flanking off."""
    h = EncounterHarness(list(creatures), arena=keep(), options=EncounterOptions(flanking=False))
    h.start(positions=where, initiative=list(range(20, 20 - len(creatures), -1)))
    return h


def goblins_turn(h: EncounterHarness) -> None:
    while h.state.active != "gob":
        h.end_turn()


def made(events: tuple[object, ...]) -> list[tuple[int, int, bool, bool]]:
    return [
        (e.roll.total, e.target_ac, e.hit, e.critical) for e in events if isinstance(e, AttackMade)
    ]


def damaged(
    events: tuple[object, ...],
) -> list[tuple[str, int, int | None, tuple[DamageStep, ...]]]:
    return [(e.creature, e.amount, e.raw, e.steps) for e in events if isinstance(e, Damaged)]


# -- Uncanny Dodge ---------------------------------------------------------------------------


def test_uncanny_dodge_is_offered_on_a_hit_and_halves_the_damage() -> None:
    h = fight({"pip": "hall", "gob": "hall"}, rogue(), goblin())
    goblins_turn(h)
    # 15 + 4 = 19 hits AC 15: Pip's player is asked before the damage is rolled.
    events = h.rolls(15).send("attack", creature="gob", target="pip", attack="blade")
    assert made(events) == [] and damaged(events) == []
    offered = h.decision(UNCANNY_DODGE)
    assert (offered.controller, offered.creature, offered.options) == (
        "player-pip",
        "pip",
        (UNCANNY_DODGE, "decline"),
    )
    assert offered.trigger is not None and offered.trigger["moment"] == "damage"
    # 5 + 2 = 7, halved: 3.
    events = h.rolls(5).decide(UNCANNY_DODGE, h.player("player-pip"))
    assert ActionTaken("pip", UNCANNY_DODGE, "reaction") in events
    assert made(events) == [(19, 15, True, False)]
    assert damaged(events) == [("pip", 3, 7, (DamageStep("reduce", UNCANNY_DODGE, 3, "slashing"),))]
    assert h.creature("pip").hp == 27
    assert not h.state.has_reaction("pip")
    h.assert_replay_matches()


def test_uncanny_dodge_halves_a_critical_hit_and_is_not_offered_twice_a_round() -> None:
    h = fight({"pip": "hall", "gob": "hall", "gob2": "hall"}, rogue(), goblin(), goblin("gob2"))
    goblins_turn(h)
    h.rolls(20).send("attack", creature="gob", target="pip", attack="blade")
    # A critical hit: 2d6 + 2 = 6 + 5 + 2 = 13, halved: 6.
    events = h.rolls(6, 5).decide(UNCANNY_DODGE, h.player("player-pip"))
    assert made(events) == [(24, 15, True, True)]
    assert [d[:3] for d in damaged(events)] == [("pip", 6, 13)]
    h.end_turn()
    # The second goblin: Pip's reaction is spent, the full damage lands, nobody is asked.
    events = h.rolls(15, 5).send("attack", creature="gob2", target="pip", attack="blade")
    assert [d[:3] for d in damaged(events)] == [("pip", 7, 7)] and h.state.pending == []


def test_declined_uncanny_dodge_keeps_the_reaction_and_the_full_damage() -> None:
    h = fight({"pip": "hall", "gob": "hall"}, rogue(), goblin())
    goblins_turn(h)
    h.rolls(15).send("attack", creature="gob", target="pip", attack="blade")
    events = h.rolls(5).decide("decline", h.player("player-pip"))
    assert [d[:3] for d in damaged(events)] == [("pip", 7, 7)]
    assert h.state.has_reaction("pip")


def test_a_miss_or_an_unseen_attacker_offers_no_uncanny_dodge() -> None:
    h = fight({"pip": "hall", "gob": "hall"}, rogue(), goblin())
    goblins_turn(h)
    events = h.rolls(5).send("attack", creature="gob", target="pip", attack="blade")
    assert made(events) == [(9, 15, False, False)] and h.state.pending == []
    hidden = make("gob", "foes", attacks=[BLADE, BOW], conditions=["invisible"])
    h = fight({"pip": "hall", "gob": "hall"}, rogue(), hidden)
    goblins_turn(h)
    events = h.rolls(15, 15, 5).send("attack", creature="gob", target="pip", attack="blade")
    assert [d[:3] for d in damaged(events)] == [("pip", 7, 7)] and h.state.pending == []


# -- Deflect Missiles ------------------------------------------------------------------------


def test_deflect_missiles_reduces_a_ranged_hit_by_1d10_dex_and_monk_level() -> None:
    h = fight({"sora": "hall", "gob": "bar"}, monk(), goblin())
    goblins_turn(h)
    h.rolls(15).send("attack", creature="gob", target="sora", attack="shortbow")
    offered = h.decision(DEFLECT_MISSILES)
    assert (offered.controller, offered.options) == ("player-sora", (DEFLECT_MISSILES, "decline"))
    assert "1d10 + 3 + 3" in offered.prompt
    # The reduction: 2 + 3 (Dex) + 3 (monk level) = 8; the damage 6 + 2 = 8: none left.
    events = h.rolls(2, 6).decide(DEFLECT_MISSILES, h.player("player-sora"))
    assert [(e.creature, e.action, e.cost) for e in events if isinstance(e, ActionTaken)] == [
        ("sora", DEFLECT_MISSILES, "reaction")
    ]
    assert damaged(events) == [
        ("sora", 0, 8, (DamageStep("reduce", DEFLECT_MISSILES, 0, "piercing"),))
    ]
    assert h.creature("sora").hp == 30
    h.end_turn()  # (the round goes on: a new goblin turn next round)


def test_deflect_missiles_leaves_what_the_reduction_does_not_cover() -> None:
    h = fight({"sora": "hall", "gob": "bar"}, monk(), goblin())
    goblins_turn(h)
    h.rolls(20).send("attack", creature="gob", target="sora", attack="shortbow")
    # A critical hit: 6 + 6 + 2 = 14, less 1 + 3 + 3 = 7: 7.
    events = h.rolls(1, 6, 6).decide(DEFLECT_MISSILES, h.player("player-sora"))
    assert [d[:3] for d in damaged(events)] == [("sora", 7, 14)]


def test_deflect_missiles_is_not_offered_against_a_melee_attack() -> None:
    h = fight({"sora": "hall", "gob": "hall"}, monk(), goblin())
    goblins_turn(h)
    events = h.rolls(15, 5).send("attack", creature="gob", target="sora", attack="blade")
    assert [d[:3] for d in damaged(events)] == [("sora", 7, 7)] and h.state.pending == []


# -- Cutting Words ---------------------------------------------------------------------------


def test_cutting_words_takes_the_die_off_an_attack_roll_before_its_outcome() -> None:
    ally = make("kael", ac=15, hp=30)
    h = fight({"lyra": "yard", "kael": "hall", "gob": "hall"}, bard(), ally, goblin())
    goblins_turn(h)
    # 12 + 4 = 16 would hit AC 15: Lyra (45 ft away, in the yard) is asked.
    events = h.rolls(12).send("attack", creature="gob", target="kael", attack="blade")
    assert made(events) == []
    offered = h.decision(CUTTING_WORDS)
    assert (offered.controller, offered.creature, offered.options) == (
        "player-lyra",
        "lyra",
        (CUTTING_WORDS, "decline"),
    )
    assert "16 against AC 15" in offered.prompt and "d6" in offered.prompt
    # A d6 of 4: 16 - 4 = 12, a miss.
    events = h.rolls(4).decide(CUTTING_WORDS, h.player("player-lyra"))
    assert [(e.creature, e.action, e.cost) for e in events if isinstance(e, ActionTaken)] == [
        ("lyra", CUTTING_WORDS, "reaction")
    ]
    assert ResourceSpent("lyra", "bardic-inspiration", 2) in events
    assert made(events) == [(12, 15, False, False)]
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    assert attack.roll.modifier == 0 and "penalty:cutting-words -4" in attack.roll.sources
    assert h.creature("kael").hp == 30 and h.state.pending == []
    h.assert_replay_matches()


def test_cutting_words_that_falls_short_leaves_the_hit() -> None:
    ally = make("kael", ac=15, hp=30)
    h = fight({"lyra": "hall", "kael": "hall", "gob": "hall"}, bard(), ally, goblin())
    goblins_turn(h)
    h.rolls(15).send("attack", creature="gob", target="kael", attack="blade")
    # 19 - 1 = 18 still hits: the damage 3 + 2 = 5.
    events = h.rolls(1, 3).decide(CUTTING_WORDS, h.player("player-lyra"))
    assert made(events) == [(18, 15, True, False)]
    assert [d[:3] for d in damaged(events)] == [("kael", 5, 5)]


def test_cutting_words_is_not_offered_out_of_range_deafened_or_without_a_use() -> None:
    far = {"lyra": "far", "kael": "hall", "gob": "hall"}
    h = fight(far, bard(), make("kael", ac=15, hp=30), goblin())
    goblins_turn(h)
    events = h.rolls(12, 3).send("attack", creature="gob", target="kael", attack="blade")
    assert made(events) == [(16, 15, True, False)] and h.state.pending == []
    near = {"lyra": "hall", "kael": "hall", "gob": "hall"}
    deaf = make("gob", "foes", attacks=[BLADE, BOW], conditions=["deafened"])
    h = fight(near, bard(), make("kael", ac=15, hp=30), deaf)
    goblins_turn(h)
    events = h.rolls(12, 3).send("attack", creature="gob", target="kael", attack="blade")
    assert made(events) == [(16, 15, True, False)] and h.state.pending == []
    spent = bard()
    spent.resources["bardic-inspiration"] = 0
    h = fight(near, spent, make("kael", ac=15, hp=30), goblin())
    goblins_turn(h)
    events = h.rolls(12, 3).send("attack", creature="gob", target="kael", attack="blade")
    assert made(events) == [(16, 15, True, False)] and h.state.pending == []


def test_the_attack_trigger_carries_the_damage_cuts_through_its_data() -> None:
    trigger = AttackTrigger("gob", "pip", "blade", damage_cuts=(("uncanny-dodge", None), ("x", 3)))
    assert AttackTrigger.from_data(trigger.to_data()) == trigger
