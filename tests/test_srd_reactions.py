"""The SRD reactions of plugins/srd/_reactions.py, offered to the creature's controller as
decisions (the GM's for a monster), each tested from its SRD 5.1 stat block:

- Bandit captain, Parry: "The captain adds 2 to its AC against one melee attack that would
  hit it. To do so, the captain must see the attacker and be wielding a melee weapon."
- Goblin boss, Redirect Attack: "When a creature the goblin can see targets it with an
  attack, the goblin chooses another goblin within 5 feet of it. The two goblins swap
  places, and the chosen goblin becomes the target instead."
"""

from __future__ import annotations

import attrs
import pytest
from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Action,
    ActionTaken,
    Attack,
    AttackMade,
    CheckRolled,
    Creature,
    DecisionResolved,
    EncounterOptions,
    Refusal,
    SaveMade,
    Size,
    movement_left,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str, **overrides: object) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name, **overrides})
    return made


def plain(creature: Creature) -> Creature:
    """``creature`` without its Multiattack and its attacks' riders."""
    return attrs.evolve(
        creature,
        attacks=[attrs.evolve(a, on_hit=()) for a in creature.attacks],
        actions=tuple(a for a in creature.actions if a.id != "multiattack"),
    )


def fight(
    first: Creature, *others: Creature, zones: dict[str, str] | None = None
) -> EncounterHarness:
    """``first`` acts first, then the others in order; everyone in the hall unless told."""
    every = [first, *others]
    where = {c.id: "hall" for c in every} | (zones or {})
    return harness(
        every, where, [20, 15, 10, 5, 3][: len(every)], options=EncounterOptions(flanking=False)
    )


def made(events: tuple[object, ...]) -> list[tuple[str, int, int, bool]]:
    return [
        (e.target, e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)
    ]


def reactions(events: tuple[object, ...]) -> list[tuple[str, str]]:
    return [
        (e.creature, e.action)
        for e in events
        if isinstance(e, ActionTaken) and e.cost == "reaction"
    ]


# -- parry --------------------------------------------------------------------------------


def test_a_parry_is_offered_to_the_gm_and_taken_turns_the_melee_hit_into_a_miss() -> None:
    captain = srd("bandit-captain", "Captain")  # AC 15, Parry +2
    h = fight(make("aria"), make("bram"), make("cleo"), captain)
    # Aria: 14 + 4 = 18 hits even against 17: nothing to offer, no decision.
    events = h.rolls(14, 3).send("attack", creature="aria", target="captain-1", attack="blade")
    assert made(events) == [("captain-1", 18, 15, True)]
    assert h.state.pending == []
    h.end_turn()
    # Bram: 11 + 4 = 15 would hit AC 15: the GM is asked; the attack waits.
    events = h.rolls(11).send("attack", creature="bram", target="captain-1", attack="blade")
    assert made(events) == [] and reactions(events) == []
    offered = h.decision("parry")
    assert (offered.controller, offered.creature, offered.options, offered.default) == (
        "gm",
        "captain-1",
        ("parry", "decline"),
        ("decline",),
    )
    assert "15 against AC 15" in offered.prompt
    # Meanwhile the creatures wait (the attacker's turn included).
    assert h.refused("end_turn", creature="bram").code == "decision_pending"
    # A player cannot answer the GM's decision.
    assert h.refused(
        "decide", h.player("player-bram"), decision=offered.id, choice=["decline"]
    ).code == ("not_your_decision")
    events = h.decide("parry")
    assert reactions(events) == [("captain-1", "parry")]
    assert made(events) == [("captain-1", 15, 17, False)]
    assert h.creature("captain-1").hp == 65 - 5
    h.end_turn()
    # Cleo, the same round: the reaction is spent, nothing offered, 15 hits.
    events = h.rolls(11, 3).send("attack", creature="cleo", target="captain-1", attack="blade")
    assert made(events) == [("captain-1", 15, 15, True)]
    assert h.creature("captain-1").hp == 65 - 5 - 5
    h.assert_replay_matches()


def test_a_declined_or_timed_out_parry_lets_the_hit_land_and_keeps_the_reaction() -> None:
    captain = srd("bandit-captain", "Captain")
    h = fight(make("aria"), make("bram"), captain)
    h.rolls(11).send("attack", creature="aria", target="captain-1", attack="blade")
    events = h.rolls(4).time_out("parry")  # the deadline passes: the default, decline
    resolved = [e for e in events if isinstance(e, DecisionResolved)]
    assert [(e.choice, e.defaulted) for e in resolved] == [(("decline",), True)]
    assert made(events) == [("captain-1", 15, 15, True)]
    assert reactions(events) == [] and h.creature("captain-1").hp == 65 - 6
    h.end_turn()
    # Declined, it is offered again at the next hit of the round; declined again.
    h.rolls(12).send("attack", creature="bram", target="captain-1", attack="blade")
    events = h.rolls(1).decide("decline")
    assert made(events) == [("captain-1", 16, 15, True)]
    assert h.creature("captain-1").hp == 65 - 6 - 3
    assert h.state.has_reaction("captain-1")


def test_no_parry_offered_against_a_ranged_attack_or_when_blinded() -> None:
    captain = srd("bandit-captain", "Captain")
    bow = Attack("bow", "ranged", 4, "1d6", "piercing", range=80, long_range=320)
    h = fight(make("aria", attacks=[bow]), make("bram"), captain)
    events = h.rolls(11, 2).send("attack", creature="aria", target="captain-1", attack="bow")
    assert made(events) == [("captain-1", 15, 15, True)] and h.state.pending == []
    h.end_turn()
    h.send("grant_condition", creature="captain-1", condition="blinded")
    # Blinded: it cannot see the attacker (and Bram has advantage: 11 and 3, 11 kept).
    events = h.rolls(11, 3, 2).send("attack", creature="bram", target="captain-1", attack="blade")
    assert made(events) == [("captain-1", 15, 15, True)] and h.state.pending == []


# -- redirect attack ------------------------------------------------------------------------


def test_the_goblin_boss_redirect_is_the_gms_choice_of_goblin_and_swaps_the_target() -> None:
    boss = plain(srd("goblin-boss", "Boss"))
    h = fight(make("aria"), make("bram"), boss, srd("goblin", "Goblin"), srd("goblin", "Goblins"))
    events = h.send("attack", creature="aria", target="boss-1", attack="blade")
    assert made(events) == []  # no die before the choice
    offered = h.decision("redirect_attack")
    assert offered.options == ("goblin-1", "goblins-1", "decline")
    assert offered.controller == "gm" and offered.default == ("decline",)
    # Not an option: refused, nothing changes.
    assert h.refused("decide", decision=offered.id, choice=["aria"]).code == "invalid_choice"
    events = h.rolls(15, 3).decide("goblins-1")
    assert reactions(events) == [("boss-1", "redirect-attack")]
    assert made(events) == [("goblins-1", 19, 15, True)]
    assert (h.creature("goblins-1").hp, h.creature("goblin-1").hp, h.creature("boss-1").hp) == (
        7 - 5,
        7,
        21,
    )
    h.end_turn()
    # Its reaction is spent: Bram's attack stays on the boss, nothing offered.
    events = h.rolls(15, 3).send("attack", creature="bram", target="boss-1", attack="blade")
    assert reactions(events) == [] and h.state.pending == []
    assert made(events) == [("boss-1", 19, 17, True)]
    h.assert_replay_matches()


def test_a_declined_redirect_leaves_the_boss_the_target() -> None:
    boss = plain(srd("goblin-boss", "Boss"))
    h = fight(make("aria"), boss, srd("goblin", "Goblin"))
    h.send("attack", creature="aria", target="boss-1", attack="blade")
    events = h.rolls(15, 3).time_out("redirect_attack")
    assert made(events) == [("boss-1", 19, 17, True)] and reactions(events) == []


def test_no_goblin_in_its_zone_no_redirect_offered() -> None:
    boss = plain(srd("goblin-boss", "Boss"))
    h = fight(make("aria"), boss, srd("goblin", "Goblin"), zones={"goblin-1": "yard"})
    events = h.rolls(15, 3).send("attack", creature="aria", target="boss-1", attack="blade")
    assert h.state.pending == []
    assert made(events) == [("boss-1", 19, 17, True)]


def test_an_attack_the_rules_refuse_opens_no_redirect_decision() -> None:
    boss = plain(srd("goblin-boss", "Boss"))
    h = fight(make("aria"), boss, srd("goblin", "Goblin"), zones={"aria": "yard"})
    # A melee attack from the yard: out of reach, refused before anything is offered.
    assert h.refused("attack", creature="aria", target="boss-1").code == "out_of_range"
    assert h.state.pending == []


def test_a_goblin_gone_before_the_answer_is_not_redirected_to() -> None:
    boss = plain(srd("goblin-boss", "Boss"))
    h = fight(make("aria"), boss, srd("goblin", "Goblin"))
    h.send("attack", creature="aria", target="boss-1", attack="blade")
    h.send("damage", creature="goblin-1", amount=7)  # an NPC at 0: defeated
    events = h.rolls(15, 3).decide("goblin-1")
    assert reactions(events) == [] and made(events) == [("boss-1", 19, 17, True)]


def test_a_player_answers_for_its_own_creature_only() -> None:
    """A PC with Parry: its player is asked; the GM may answer too."""
    captain = attrs.evolve(
        srd("bandit-captain", "Captain"), controller="player-cap", side="party", pc=True
    )
    h = fight(make("orc", "foes"), captain)
    h.rolls(11).send("attack", creature="orc", target="captain-1", attack="blade")
    offered = h.decision("parry")
    assert offered.controller == "player-cap"
    with pytest.raises(Refusal):
        h.decide("parry", h.player("someone-else"))
    events = h.decide("parry", h.player("player-cap"))
    assert made(events) == [("captain-1", 15, 17, False)]


# -- leadership -------------------------------------------------------------------------------


def rolled(events: tuple[object, ...]) -> list[tuple[int, int, int]]:
    """Each attack roll's total, its expertise die and that die's roll."""
    return [
        (e.roll.total, e.roll.expertise, e.roll.expertise_roll)
        for e in events
        if isinstance(e, AttackMade)
    ]


def test_the_knights_leadership_adds_a_d4_to_its_sides_attacks_and_saves_within_30_ft() -> None:
    """Knight, Leadership (Recharges after a Short or Long Rest): "For 1 minute, the knight
    can utter a special command or warning whenever a nonhostile creature that it can see
    within 30 feet of it makes an attack roll or a saving throw. The creature can add a d4
    to its roll provided it can hear and understand the knight. [...] This effect ends if
    the knight is incapacitated." """
    knight = plain(srd("knight", "Knight"))
    bow = Attack("bow", "ranged", 4, "1d6", "piercing", range=80, long_range=320)
    ally, far = make("ally", "enemies"), make("far", "enemies", attacks=[bow])  # its side
    h = fight(knight, ally, make("aria"), far, zones={"far": "road"})  # the road: 45 ft
    h.send("leadership", creature="knight-1")
    assert "leadership" in h.creature("knight-1").conditions
    assert h.refused("leadership", creature="knight-1").code == "no_action_left"
    h.end_turn()
    # The ally: d20 10 + 4, and a d4 of 3: 17.
    events = h.rolls(10, 3, 2).send("attack", creature="ally", target="aria")
    assert rolled(events) == [(17, 4, 3)]
    h.end_turn()
    # Aria's area: each Dexterity save, the ally's with a d4; Aria, an enemy, none.
    events = h.rolls(8, 4, 9).send(
        "area_effect", creature="aria", zone="hall", shape="sphere", size=5, range=0,
        targets=["ally", "aria"], name="Burst", save="dex", dc=10,
    )  # fmt: skip
    assert [(e.creature, e.roll.total, e.roll.expertise, e.success) for e in events
            if isinstance(e, SaveMade)] == [("ally", 12, 4, True), ("aria", 9, 0, False)]  # fmt: skip
    h.end_turn()
    # Beyond 30 ft (the road, 45 ft away): no die.
    events = h.rolls(10, 2).send("attack", creature="far", target="aria")
    assert rolled(events) == [(14, 0, 0)]
    h.end_turn()
    # The knight is stunned: the Leadership ends.
    h.send("grant_condition", creature="knight-1", condition="stunned")
    assert "leadership" not in h.creature("knight-1").conditions
    h.end_turn()
    events = h.rolls(10, 2).send("attack", creature="ally", target="aria")
    assert rolled(events) == [(14, 0, 0)]
    # Its one use (per short or long rest) is spent.
    assert h.creature("knight-1").resources == {"leadership": 0}


# -- fetid cloud --------------------------------------------------------------------------------


def test_the_dretchs_fetid_cloud_poisons_who_starts_a_turn_in_it_for_one_minute() -> None:
    """Dretch, Fetid Cloud (1/Day): "A 10-foot radius of disgusting green gas extends out
    from the dretch. [...] It lasts for 1 minute [...]. Any creature that starts its turn
    in that area must succeed on a DC 11 Constitution saving throw or be poisoned until the
    start of its next turn. While poisoned in this way, the target can take either an
    action or a bonus action on its turn, not both, and can't take reactions." """
    dretch = plain(srd("dretch", "Dretch"))
    escape = Action("nimble-escape", "Nimble Escape", kind="bonus_action", text="disengage")
    aria = make("aria", actions=(escape,))
    h = fight(dretch, aria, make("gob", "foes"), make("cleo"), zones={"cleo": "yard"})
    h.send("fetid_cloud", creature="dretch-1")
    (cloud,) = [a for a in h.state.arena.assets if a.name == "Fetid Cloud"]
    assert (cloud.zone, cloud.kind) == ("hall", "element")
    assert h.creature("dretch-1").resources == {"fetid-cloud": 0}
    # Aria starts her turn in it: 5 against DC 11, poisoned until the start of her next.
    events = h.rolls(5).end_turn()
    assert [(e.creature, e.roll.total, e.dc, e.success) for e in events
            if isinstance(e, SaveMade)] == [("aria", 5, 11, False)]  # fmt: skip
    assert "poisoned" in h.creature("aria").conditions
    h.rolls(15, 3).send("attack", creature="aria", target="gob")  # her action (engages)
    refused = h.refused("nimble_escape", creature="aria")
    assert refused.code == "no_bonus_action_left"
    # The goblin saves (15); it leaves Aria's reach: she can take no reaction, no offer.
    h.rolls(15).end_turn()
    h.send("enter", creature="gob", zones=["yard"])
    assert h.state.pending == [] and h.creature("gob").zone == "yard"
    h.end_turn()  # Cleo, in the yard, rolls nothing
    assert "poisoned" in h.creature("aria").conditions
    # Round 2: the dretch saves (immune to the condition anyway), then Aria's poison ends
    # at the start of her turn and she saves again: 12, not poisoned.
    events = h.rolls(20).end_turn()
    events = h.rolls(12).end_turn()
    assert "poisoned" not in h.creature("aria").conditions
    assert [(e.creature, e.success) for e in events if isinstance(e, SaveMade)] == [("aria", True)]
    # The minute: the cloud is there through round 10, gone when round 11 starts.
    while h.state.round < 11:
        assert any(a.name == "Fetid Cloud" for a in h.state.arena.assets)
        h.rolls(20).end_turn()
    assert not any(a.name == "Fetid Cloud" for a in h.state.arena.assets)
    h.assert_replay_matches()


# -- rampage --------------------------------------------------------------------------------


def test_the_gnolls_rampage_after_a_melee_kill_moves_half_its_speed_and_bites() -> None:
    """Gnoll, Rampage: "When the gnoll reduces a creature to 0 hit points with a melee
    attack on its turn, the gnoll can take a bonus action to move up to half its speed
    and make a bite attack." (bite: +4 to hit, 1d4 + 2 piercing; speed 30 ft)"""
    gnoll = plain(srd("gnoll", "Gnoll"))
    h = fight(gnoll, make("weak", hp=3), make("aria"), zones={"aria": "yard"})
    assert h.refused("rampage", creature="gnoll-1").code == "invalid_params"  # no kill yet
    # The spear (+4): 12 + 4 = 16 hits; 1d6 + 2 = 5 drops Weak (3 hit points) to 0.
    h.rolls(12, 3).send("attack", creature="gnoll-1", target="weak", attack="spear")
    assert h.creature("weak").hp == 0
    assert h.creature("gnoll-1").resources == {"rampage": 1}
    assert movement_left(h.state, h.creature("gnoll-1")) == 30
    h.send("rampage", creature="gnoll-1")
    assert movement_left(h.state, h.creature("gnoll-1")) == 30 + 15  # half its speed more
    assert h.state.resources.bonus_actions == 0
    # It moves into the yard (15 ft) and bites Aria: 10 + 4 = 14 hits, 1d4 + 2 = 5.
    h.send("enter", creature="gnoll-1", zones=["yard"])
    events = h.rolls(10, 3).send("attack", creature="gnoll-1", target="aria", attack="bite")
    assert [(e.target, e.attack, e.roll.total, e.hit) for e in events
            if isinstance(e, AttackMade)] == [("aria", "bite", 14, True)]  # fmt: skip
    assert h.creature("aria").hp == 20 - 5
    assert h.refused("attack", creature="gnoll-1", target="aria").code == "no_action_left"
    h.end_turn()
    assert h.creature("gnoll-1").resources == {"rampage": 0}


def test_no_rampage_without_a_kill_by_a_melee_attack_on_its_turn() -> None:
    gnoll = plain(srd("gnoll", "Gnoll"))
    h = fight(gnoll, make("weak", hp=3), make("aria"), zones={"weak": "yard"})
    # The longbow drops Weak: a ranged attack, no rampage.
    h.rolls(12, 2).send("attack", creature="gnoll-1", target="weak", attack="longbow")
    assert h.creature("weak").hp == 0
    assert h.refused("rampage", creature="gnoll-1").code == "invalid_params"


# -- web ----------------------------------------------------------------------------------------


def test_the_ettercaps_web_restrains_until_a_strength_check_or_the_web_is_destroyed() -> None:
    """Ettercap, Web (Recharge 5-6): "Ranged Weapon Attack: +4 to hit, range 30/60 ft., one
    Large or smaller creature. Hit: The creature is restrained by webbing. As an action,
    the restrained creature can make a DC 11 Strength check, escaping from the webbing on
    a success. The effect also ends if the webbing is destroyed. The webbing has AC 10, 5
    hit points, vulnerability to fire damage, and immunity to bludgeoning, poison, and
    psychic damage." """
    ettercap = plain(srd("ettercap", "Ettercap"))
    torch = Attack("torch", "melee", 2, "1d4", "fire")
    club = Attack("club", "melee", 2, "1d4", "bludgeoning")
    giant = make("giant", size=Size.HUGE)
    h = fight(ettercap, make("aria", attacks=[club, torch]), make("bram"), giant,
              zones={"aria": "yard", "bram": "yard", "giant": "yard"})  # fmt: skip
    assert h.refused("web", creature="ettercap-1", target="giant").code == "invalid_target"
    # The yard is 15 ft away: 10 + 4 = 14 hits Aria's AC 12.
    events = h.rolls(10).send("web", creature="ettercap-1", target="aria")
    assert [(e.target, e.attack, e.roll.total, e.target_ac, e.hit) for e in events
            if isinstance(e, AttackMade)] == [("aria", "Web", 14, 12, True)]  # fmt: skip
    assert "restrained" in h.creature("aria").conditions
    assert h.creature("ettercap-1").resources == {"web": 0}
    (web,) = [a for a in h.state.arena.assets if a.name == "Web"]
    assert (web.zone, web.data["hp"], web.data["ac"]) == ("yard", 5, 10)
    h.end_turn()
    # Aria's club (bludgeoning; restrained, she rolls with disadvantage: 12 and 12): 12 + 2
    # hits AC 10, but the web is immune to its 4: 5 hit points still.
    h.rolls(12, 12, 4).send("attack_web", creature="aria", web=web.id, attack="club")
    assert h.state.asset(web.id) is not None and h.state.asset(web.id).data["hp"] == 5  # type: ignore[union-attr]
    h.end_turn()
    # Bram's blade (1d6 + 2 slashing): 10 + 4 hits; 1 + 2 = 3 damage, 2 hit points left.
    h.rolls(10, 1).send("attack_web", creature="bram", web=web.id)
    assert h.state.asset(web.id).data["hp"] == 2  # type: ignore[union-attr]
    assert "restrained" in h.creature("aria").conditions
    h.end_turn()
    h.rolls(1).end_turn()  # the ettercap's recharge at the start of its turn: a 1
    h.end_turn()
    # Aria's torch (fire, doubled): 1 becomes 2: the web is destroyed, Aria is free.
    h.rolls(12, 12, 1).send("attack_web", creature="aria", web=web.id, attack="torch")
    assert h.state.asset(web.id) is None
    assert "restrained" not in h.creature("aria").conditions
    h.assert_replay_matches()


def test_a_strength_check_at_the_dc_frees_the_webbed_creature() -> None:
    spider = plain(srd("giant-spider", "Spider"))  # Web +5, escape DC 12
    h = fight(spider, make("aria"))
    assert h.refused("escape_web", creature="spider-1").code == "invalid_params"
    h.rolls(2).send("web", creature="spider-1", target="aria")  # 2 + 5 = 7: a miss
    assert "restrained" not in h.creature("aria").conditions
    assert [a for a in h.state.arena.assets if a.name == "Web"] == []
    h.end_turn()
    h.rolls(6).end_turn()  # round 2: the spider's web recharges on a 6
    h.rolls(10).send("web", creature="spider-1", target="aria")  # 15 hits AC 12
    assert "restrained" in h.creature("aria").conditions
    h.end_turn()
    # Aria (Strength +0): 11 fails the DC 12.
    events = h.rolls(11).send("escape_web", creature="aria")
    assert [(e.roll.total, e.dc, e.success) for e in events if isinstance(e, CheckRolled)] == [
        (11, 12, False)
    ]
    assert "restrained" in h.creature("aria").conditions
    h.rolls(1).end_turn()  # the spider's recharge at the start of its turn: a 1
    h.end_turn()
    # 12 meets it: free, the web gone.
    h.rolls(12).send("escape_web", creature="aria")
    assert "restrained" not in h.creature("aria").conditions
    assert [a for a in h.state.arena.assets if a.name == "Web"] == []
