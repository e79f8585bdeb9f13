"""One scripted fight per example arena, from setup to ``encounter_ended``.

Every fight runs through the real engine and plugins with exact scripted dice, and
checks the outcomes along the way: zones, positions, engagement, opportunity
attacks, the save DC used, damage, who is defeated and how the encounter ends.
The arenas are the real files in ``examples/arenas``, loaded with ``load_arena``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from helpers import left

from zonekeep.sdk import (
    ActionTaken,
    Attack,
    AttackMade,
    ContestRolled,
    Creature,
    Damaged,
    EncounterEnded,
    EngagementStarted,
    Event,
    ManeuverEnded,
    PositionLeft,
    PositionTaken,
    RollRequest,
    SaveMade,
    ScriptedEntropy,
    ZoneEntered,
    load_arena,
)
from zonekeep.sdk.testing import EncounterHarness

ARENAS = Path(__file__).resolve().parent.parent / "examples" / "arenas"


def fighter(
    cid: str,
    side: str,
    *,
    hp: int,
    ac: int,
    to_hit: int = 5,
    damage: str = "1d8+3",
    **kw: object,
) -> Creature:
    """A creature with one melee attack; PCs are controlled by ``player-<id>``."""
    controller = f"player-{cid}" if side == "party" else "gm"
    attacks = kw.pop("attacks", [Attack("blade", "melee", to_hit, damage, "slashing")])
    return Creature(
        cid,
        cid.capitalize(),
        side,
        controller=controller,
        hp=hp,
        max_hp=hp,
        ac=ac,
        attacks=attacks,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def phase(h: EncounterHarness) -> str:
    """The phase as a plain string (so that type checkers do not narrow it)."""
    return str(h.state.phase)


E = TypeVar("E", bound=Event)


def last(h: EncounterHarness, cls: type[E]) -> E:
    found = h.of_type(cls)
    assert found, f"no {cls.__name__} event"
    return found[-1]


def since(h: EncounterHarness, start: int, cls: type[E]) -> list[E]:
    return [e for e in h.events[start:] if isinstance(e, cls)]


# -- the tavern --------------------------------------------------------------------------------


def test_tavern_brawl_behind_the_bar() -> None:
    """Aria and Bram against a goblin and an orc in the Drowned Lantern.

    Tables and the bar give cover, the goblin flees the common room while engaged
    and eats an opportunity attack, Bram shoves it into the counter (the counter's
    own DC 12, not Bram's maneuver DC), and Aria cuts down the orc behind the bar.
    The grease fire is time-sensitive but threatens nobody, so the rules end the fight.
    """
    arena = load_arena(ARENAS / "tavern.json")
    h = EncounterHarness(
        [
            fighter("aria", "party", hp=20, ac=14, skills={"athletics": 5}, maneuver_dc=13),
            fighter(
                "bram",
                "party",
                hp=18,
                ac=13,
                to_hit=4,
                damage="1d6+2",
                skills={"athletics": 3},
                maneuver_dc=15,
            ),
            fighter("gob", "foes", hp=15, ac=12, to_hit=4, damage="1d6+2"),
            fighter("orc", "foes", hp=9, ac=13, to_hit=5, damage="1d12+3"),
        ],
        arena=arena,
    )
    h.start(
        positions={
            "aria": "common_room",
            "bram": "common_room",
            "gob": "common_room",
            "orc": "bar",
        },
        initiative=[20, 5, 15, 10],
    )
    assert h.state.order() == ["aria", "gob", "orc", "bram"]
    assert [c.id for c in h.state.in_zone("common_room")] == ["aria", "bram", "gob"]
    assert h.state.occupancy("bar") == 1

    # Round 1, Aria: ducks behind a table (half speed), then cuts at the goblin.
    assert h.state.active == "aria"
    h.send("take_position", creature="aria", asset="tables")
    assert h.creature("aria").position == "tables"
    assert left(h) == 15
    h.rolls(14, 3, 5).send("attack", creature="aria", target="gob")
    made = last(h, AttackMade)
    # Two heroes against one goblin in the common room: it is flanked.
    assert made.roll.sources == ("advantage:flanking: outnumbered 2 to 1",)
    assert (made.roll.kept, made.roll.total, made.target_ac, made.hit) == ((14,), 19, 12, True)
    assert h.creature("gob").hp == 15 - 8
    assert h.state.engagements == [("aria", "gob")]
    assert h.state.last_melee == {"gob": "aria"}
    h.end_turn()

    # Goblin: the table's cover turns a 15 into a miss (AC 14 + 2).
    assert h.state.active == "gob"
    h.rolls(11).send("attack", creature="gob", target="aria")
    made = last(h, AttackMade)
    assert (made.roll.total, made.target_ac, made.hit) == (15, 16, False)
    assert h.creature("aria").hp == 20
    # It bolts for the bar while engaged: Aria is offered an opportunity attack.
    h.send("enter", creature="gob", zones=["bar"])
    (offer,) = h.state.pending
    assert (offer.kind, offer.creature, offer.controller, offer.options, offer.default) == (
        "opportunity_attack",
        "aria",
        "player-aria",
        ("attack", "decline"),
        ("decline",),
    )
    assert offer.prompt == (
        "Aria may make an opportunity attack with blade against Gob, who is leaving Common room."
    )
    assert h.creature("gob").zone == "common_room"  # the move waits on the reaction
    assert h.refused("end_turn", creature="gob").code == "decision_pending"
    # Only Aria's player answers for Aria.
    refusal = h.refused(
        "decide", EncounterHarness.player("player-bram"), decision=offer.id, choice=["attack"]
    )
    assert refusal.code == "not_your_decision"
    h.rolls(16, 2, 3).send(
        "decide", EncounterHarness.player("player-aria"), decision=offer.id, choice=["attack"]
    )
    made = last(h, AttackMade)
    assert (made.attacker, made.target, made.reaction, made.hit) == ("aria", "gob", True, True)
    assert made.roll.total == 21
    assert ActionTaken("aria", "opportunity_attack", "reaction") in h.events
    assert h.creature("gob").hp == 1
    assert not h.state.has_reaction("aria")
    assert h.state.pending == []
    assert h.creature("gob").zone == "bar"
    assert ZoneEntered("gob", "common_room", "bar", 30) in h.events
    assert h.state.engagements == []  # leaving the zone ended the engagement
    assert h.creature("aria").position == "tables"  # Aria's position is unaffected
    h.end_turn()

    # Orc: takes position behind the bar.
    assert h.state.active == "orc"
    h.send("take_position", creature="orc", asset="bar_counter")
    assert h.creature("orc").position == "bar_counter"
    h.end_turn()

    # Bram: into the bar, then shoves the goblin into the counter.
    assert h.state.active == "bram"
    h.send("enter", creature="bram", zones=["bar"])
    assert h.creature("bram").zone == "bar"
    assert [c.id for c in h.state.in_zone("bar")] == ["bram", "gob", "orc"]
    start = len(h.events)
    h.rolls(15, 4, 1, 1).send("shove", creature="bram", target="gob", asset="bar_counter")
    (contest,) = since(h, start, ContestRolled)
    assert (contest.roll.total, contest.target_roll.total, contest.won) == (18, 4, True)
    assert PositionTaken("gob", "bar_counter", True, "bram") in h.events
    (save,) = since(h, start, SaveMade)
    # Bram forced the move: his maneuver DC (15) applies, not the counter's own DC 12.
    assert (save.creature, save.ability, save.dc, save.roll.total, save.success) == (
        "gob",
        "dex",
        15,
        1,
        False,
    )
    (hurt,) = since(h, start, Damaged)
    assert (hurt.creature, hurt.amount, hurt.hp, hurt.damage_type, hurt.source) == (
        "gob",
        1,
        0,
        "bludgeoning",
        "bar_counter",
    )
    assert h.creature("gob").has("defeated")
    assert h.creature("gob").has("prone")
    assert phase(h) == "turns"
    h.end_turn()

    # Round 2, Aria: leaves her table for the bar and engages the orc on arrival.
    assert (h.state.round, h.state.active) == (2, "aria")
    assert h.state.has_reaction("aria")  # refreshed at the start of her turn
    h.send("enter", creature="aria", zones=["bar"])
    assert PositionLeft("aria", "tables", "left the zone") in h.events
    assert h.creature("aria").position is None
    assert h.state.occupancy("bar") == 4  # the defeated goblin still takes up room
    assert not h.creature("aria").has("squeezing")
    h.send("engage", creature="aria", target="orc")
    assert EngagementStarted("aria", "orc", "engaged on arrival") in h.events
    assert h.state.resources.actions == 1
    h.rolls(12, 9, 6).send("attack", creature="aria", target="orc")
    made = last(h, AttackMade)
    # The bar gives the orc half cover: AC 13 + 2.
    assert (made.roll.total, made.target_ac, made.hit) == (17, 15, True)
    assert h.creature("orc").hp == 0
    assert h.creature("orc").has("defeated")

    # Every foe is down and nobody stands in the burning kitchen: the rules end it.
    assert phase(h) == "ended"
    assert last(h, EncounterEnded) == EncounterEnded(
        "every creature of the side 'foes' is defeated, surrendered or escaped", "rules"
    )
    assert h.state.pending == []
    assert h.replayed().active is None  # no turn runs once it has ended
    assert {c.id for c in h.state.creatures.values() if c.out_of_fight} == {"gob", "orc"}
    h.assert_replay_matches()


# -- the cliffside -----------------------------------------------------------------------------


def test_cliffside_climb_the_rope_sprint_the_beach_and_the_rising_tide() -> None:
    """Aria climbs from the beach to the ledge and up the rope to the clifftop; Bram
    sprints along the beach's straight line to the reef and is shoved into the rising
    tide; the captain tries to cross the chasm on the fallen pine and is cut down. The
    tide keeps the fight going while Bram is still on the reef."""
    arena = load_arena(ARENAS / "cliffside.json")
    h = EncounterHarness(
        [
            fighter("aria", "party", hp=20, ac=14),
            fighter("bram", "party", hp=18, ac=13, to_hit=4, damage="1d6+2"),
            fighter("pirate", "foes", hp=6, ac=12, to_hit=3, skills={"athletics": 4}),
            fighter("captain", "foes", hp=14, ac=13, to_hit=5, damage="1d6+3"),
        ],
        arena=arena,
    )
    h.start(
        positions={"aria": "beach", "bram": "beach", "pirate": "reef", "captain": "clifftop"},
        initiative=[20, 18, 12, 8],
    )
    assert h.state.order() == ["aria", "bram", "pirate", "captain"]

    # Round 1, Aria: climbs the cliff face to the ledge (climb link, no climb speed).
    refusal = h.refused("enter", creature="aria", zones=["ledge", "clifftop"])
    assert refusal.code == "not_enough_movement"
    assert refusal.message == (
        "Aria has 15 ft of movement available (divided by 2: climb without a climb speed); "
        "going on past Ledge needs more than its 15 ft."
    )
    h.send("enter", creature="aria", zones=["ledge"])
    assert ZoneEntered("aria", "beach", "ledge", 30) in h.events
    assert h.creature("aria").zone == "ledge"
    assert left(h) == 0
    h.end_turn()

    # Bram: walking, the difficult shallows stop him; sprinting, he goes straight on.
    refusal = h.refused("enter", creature="bram", zones=["shallows", "reef"])
    assert refusal.message == (
        "Bram has 15 ft of movement available (divided by 2: difficult); "
        "going on past Shallows needs more than its 15 ft."
    )
    h.send("sprint", creature="bram")
    assert h.state.resources.sprinting
    start = len(h.events)
    h.send("enter", creature="bram", zones=["shallows", "reef"])
    assert since(h, start, ZoneEntered) == [
        ZoneEntered("bram", "beach", "shallows", 60),
        ZoneEntered("bram", "shallows", "reef", 0),
    ]
    assert h.creature("bram").zone == "reef"
    assert h.creature("bram").elements == []  # entering the reef is not standing in the tide
    assert h.refused("attack", creature="bram", target="pirate").code == "no_action_left"
    h.end_turn()

    # Pirate: shoves Bram into the rising tide (forced: it counts as taking position).
    start = len(h.events)
    h.rolls(15, 5, 4).send("shove", creature="pirate", target="bram", asset="rising_tide")
    (contest,) = since(h, start, ContestRolled)
    assert (contest.roll.total, contest.target_roll.total, contest.won) == (19, 5, True)
    assert PositionTaken("bram", "rising_tide", True, "pirate") in h.events
    assert h.creature("bram").elements == ["rising_tide"]
    assert h.creature("bram").has("prone")
    (save,) = since(h, start, SaveMade)
    assert (save.ability, save.dc, save.roll.total, save.success) == ("con", 10, 4, False)
    assert h.creature("bram").hp == 18  # the tide's save carries no damage
    h.end_turn()

    # Captain: waits on the clifftop.
    assert h.state.active == "captain"
    h.end_turn()

    # Round 2, Aria: the cliff has no clear path; the rope crosses it.
    assert (h.state.round, h.state.active) == (2, "aria")
    refusal = h.refused("enter", creature="aria", zones=["clifftop"])
    assert refusal.code == "no_clear_path"
    h.send("take_position", creature="aria", asset="rope")
    assert h.creature("aria").position == "rope"
    assert left(h) == 15
    h.send("enter", creature="aria", zones=["clifftop"])
    assert ZoneEntered("aria", "ledge", "clifftop", 15) in h.events
    assert PositionLeft("aria", "rope", "left the zone") in h.events
    assert (h.creature("aria").zone, h.creature("aria").position) == ("clifftop", None)
    h.send("engage", creature="aria", target="captain")
    assert h.state.engagements == [("aria", "captain")]
    h.rolls(15, 6).send("attack", creature="aria", target="captain")
    made = last(h, AttackMade)
    assert (made.roll.total, made.roll.sources, made.hit) == (20, (), True)
    assert h.creature("captain").hp == 14 - 9
    h.end_turn()

    # Bram, prone in the tide, stabs the pirate.
    h.rolls(13, 14, 4).send("attack", creature="bram", target="pirate")
    made = last(h, AttackMade)
    assert (made.roll.sources, made.roll.kept, made.hit) == (("disadvantage:prone",), (13,), True)
    assert h.creature("pirate").hp == 0
    assert h.creature("pirate").has("defeated")
    assert phase(h) == "turns"
    h.end_turn()

    # The pirate's turn is skipped; the captain tries the fallen pine across the chasm.
    assert h.state.active == "captain"
    assert h.refused("enter", creature="captain", zones=["far_side"]).code == "no_clear_path"
    h.send("take_position", creature="captain", asset="fallen_pine")
    # Taking position while engaged provokes the last enemy that hit it in melee.
    (offer,) = h.state.pending
    assert (offer.creature, offer.prompt) == (
        "aria",
        "Aria may make an opportunity attack with blade against Captain, who is taking position at "
        "Fallen pine.",
    )
    h.send("decision_timeout", decision=offer.id)  # the default: no attack
    assert h.creature("captain").position == "fallen_pine"
    assert h.state.has_reaction("aria")
    # Leaving the clifftop while engaged: Aria is offered the attack again, and takes it.
    h.send("enter", creature="captain", zones=["far_side"])
    (offer,) = h.state.pending
    assert offer.prompt == (
        "Aria may make an opportunity attack with blade against Captain, who is leaving Clifftop."
    )
    h.rolls(7, 12, 5).send(
        "decide", EncounterHarness.player("player-aria"), decision=offer.id, choice=["attack"]
    )
    made = last(h, AttackMade)
    # On the exposed trunk, attacks against the captain have advantage.
    assert made.roll.sources == ("advantage:target at Fallen pine",)
    assert (made.roll.kept, made.roll.total, made.reaction, made.hit) == ((12,), 17, True, True)
    assert h.creature("captain").hp == 0
    assert h.creature("captain").has("defeated")
    assert ManeuverEnded("captain", False, "Captain can no longer move") in h.events
    assert h.creature("captain").zone == "clifftop"  # it never made it across

    # Every foe is down, but the rising tide threatens Bram on the reef.
    assert phase(h) == "turns"
    refusal = h.refused("end_encounter")
    assert refusal.code == "threat_remains"
    assert "'Rising tide' threatens whoever is in Reef" in refusal.message
    h.end_turn()
    assert (h.state.round, h.state.active) == (3, "aria")
    h.end_turn()

    # Bram wades out of the tide: its prone goes with it, and the fight is over.
    assert h.state.active == "bram"
    h.send("enter", creature="bram", zones=["shallows"])
    assert PositionLeft("bram", "rising_tide", "left the zone") in h.events
    assert h.creature("bram").elements == []
    assert not h.creature("bram").has("prone")
    assert phase(h) == "ended"
    assert last(h, EncounterEnded) == EncounterEnded(
        "every creature of the side 'foes' is defeated, surrendered or escaped", "rules"
    )
    h.assert_replay_matches()


# -- the swamp ---------------------------------------------------------------------------------


def test_swamp_spikes_fog_mud_and_swamp_gas() -> None:
    """Aria shoves the bog troll into the wall of spikes (her maneuver DC), Wren shoots
    from inside the fog (disadvantage) and would hide well there (advantage on
    Stealth), Aria is caught in the sucking mud, and Wren's swamp gas fills the hummock
    and spills into the mire; a small cube would not have reached it."""
    arena = load_arena(ARENAS / "swamp.toml")
    bow = Attack("bow", "ranged", 5, "1d8", "piercing", range=80)
    h = EncounterHarness(
        [
            fighter(
                "aria",
                "party",
                hp=20,
                ac=14,
                skills={"athletics": 5},
                saves={"str": 2},
                maneuver_dc=14,
                spell_dc=16,
            ),
            fighter(
                "wren",
                "party",
                hp=14,
                ac=12,
                attacks=[bow, Attack("dagger", "melee", 5, "1d4+3", "piercing")],
                skills={"stealth": 4},
                spell_dc=15,
            ),
            fighter(
                "bog",
                "foes",
                hp=20,
                ac=12,
                damage="1d6+2",
                saves={"dex": 1},
                skills={"athletics": 2},
                maneuver_dc=17,
            ),
            fighter("hag", "foes", hp=12, ac=11, to_hit=4, damage="1d6"),
        ],
        arena=arena,
    )
    h.start(
        positions={"aria": "hummock", "wren": "hummock", "bog": "hummock", "hag": "mire"},
        initiative=[20, 17, 12, 8],
    )
    assert h.state.order() == ["aria", "wren", "bog", "hag"]

    # Round 1, Aria: shoves the troll into the wall of spikes.
    start = len(h.events)
    h.rolls(15, 6, 9, 4, 5).send("shove", creature="aria", target="bog", asset="wall_of_spikes")
    (contest,) = since(h, start, ContestRolled)
    assert (contest.target_skill, contest.roll.total, contest.target_roll.total) == (
        "athletics",
        20,
        8,
    )
    assert PositionTaken("bog", "wall_of_spikes", True, "aria") in h.events
    (save,) = since(h, start, SaveMade)
    # The spikes have no DC of their own: Aria's maneuver DC 14 (not her spell DC 16).
    assert (save.creature, save.ability, save.dc, save.roll.total, save.success) == (
        "bog",
        "dex",
        14,
        10,
        False,
    )
    (hurt,) = since(h, start, Damaged)
    assert hurt.roll is not None
    assert (hurt.amount, hurt.hp, hurt.damage_type, hurt.roll.dice) == (9, 11, "piercing", (4, 5))
    assert h.creature("bog").has("impaled")
    assert h.creature("bog").position == "wall_of_spikes"
    assert h.creature("bog").zone == "hummock"
    h.end_turn()

    # Wren: steps into the fog; her arrows fly with disadvantage from inside it.
    h.send("take_position", creature="wren", asset="fog_cloud")
    assert h.creature("wren").elements == ["fog_cloud"]
    assert h.creature("wren").position is None  # an element is not a prop
    assert h.creature("wren").has("lightly_obscured")
    h.rolls(17, 4).send("attack", creature="wren", target="bog", attack="bow")
    made = last(h, AttackMade)
    assert made.roll.sources == ("disadvantage:Fog cloud",)
    # The troll is in position at the spikes: AC 12 + 2.
    assert (made.roll.kept, made.roll.total, made.target_ac, made.hit) == ((4,), 9, 14, False)
    assert h.state.engagements == []  # a ranged attack engages nobody
    # A Stealth check rolled through the rules context has advantage in the fog...
    ctx = h.engine.context(h.state, ScriptedEntropy([3, 18]))
    stealth = RollRequest("check", "wren", ability="dex", skill="stealth")
    hide = ctx.roll("d20", stealth, bonus=4)
    assert (hide.advantage, hide.kept, hide.total, hide.sources) == (
        "advantage",
        (18,),
        22,
        ("advantage:Fog cloud",),
    )
    # ... and none for Aria, who is not in it.
    ctx = h.engine.context(h.state, ScriptedEntropy([3]))
    plain = ctx.roll("d20", RollRequest("check", "aria", ability="dex", skill="stealth"))
    assert (plain.advantage, plain.total, plain.sources) == ("none", 3, ())
    h.end_turn()

    # The troll, impaled, claws Wren.
    assert h.state.active == "bog"
    h.rolls(14, 3).send("attack", creature="bog", target="wren")
    made = last(h, AttackMade)
    assert (made.roll.sources, made.roll.total, made.hit) == ((), 19, True)
    assert h.creature("wren").hp == 14 - 5
    assert h.state.engagements == [("bog", "wren")]
    h.end_turn()

    # The hag waits in the mire.
    assert h.state.active == "hag"
    h.end_turn()

    # Round 2, Aria: Dashes into the mire and straight into the sucking mud.
    assert (h.state.round, h.state.active) == (2, "aria")
    start = len(h.events)
    h.rolls(5).send("enter", creature="aria", zones=["mire"], position="sucking_mud")
    assert ActionTaken("aria", "dash", "action") in h.events[start:]
    assert ZoneEntered("aria", "hummock", "mire", 60) in h.events[start:]
    assert PositionTaken("aria", "sucking_mud", False, "") in h.events[start:]
    assert h.state.pending == []  # Aria was engaged with nobody
    (save,) = since(h, start, SaveMade)
    assert (save.ability, save.dc, save.roll.total, save.success) == ("str", 12, 7, False)
    assert h.creature("aria").has("restrained")
    assert (h.creature("aria").zone, h.creature("aria").elements) == ("mire", ["sucking_mud"])
    assert h.refused("engage", creature="aria", target="hag").code == "cannot_engage"
    h.end_turn()

    # Wren: a 10-ft cube fits the 30-ft hummock, so it cannot reach the hag in the mire.
    gas: dict[str, Any] = {
        "creature": "wren",
        "zone": "hummock",
        "range": 150,
        "save": "dex",
        "damage": "3d6",
        "damage_type": "poison",
        "name": "Swamp gas",
    }
    refusal = h.refused("area_effect", **gas, shape="cube", size=10, targets=["bog", "hag"])
    assert refusal.code == "invalid_target"
    assert refusal.message == ("Hag is in Mire, outside Swamp gas's area (it affects Hummock).")
    # A 20-ft radius sphere (40 ft across) spills into the mire (and the empty tower
    # top); five targets, and Aria is shielded from it but still counts.
    start = len(h.events)
    h.rolls(4, 16, 6, 5, 4).send(
        "area_effect",
        **gas,
        shape="sphere",
        size=20,
        targets=["bog", "hag", "aria"],
        unaffected=["aria"],
    )
    saves = since(h, start, SaveMade)
    assert [(s.creature, s.dc, s.roll.total, s.success) for s in saves] == [
        ("bog", 15, 5, False),
        ("hag", 15, 16, True),
    ]
    hurts = since(h, start, Damaged)
    assert [(d.creature, d.amount, d.hp, d.damage_type) for d in hurts] == [
        ("bog", 15, 0, "poison"),
        ("hag", 7, 5, "poison"),
    ]
    assert h.creature("aria").hp == 20
    assert h.creature("bog").has("defeated")
    assert h.state.engaged_with("wren") == []  # a defeated troll engages nobody
    assert phase(h) == "turns"
    h.end_turn()

    # The troll's turn is skipped; the hag misses Aria in the mud.
    assert h.state.active == "hag"
    h.rolls(2, 1).send("attack", creature="hag", target="aria")
    made = last(h, AttackMade)
    assert (made.roll.sources, made.hit) == (("advantage:target restrained",), False)
    h.end_turn()

    # Round 3, Aria, stuck fast, still swings: the hag falls and the fight is over.
    assert (h.state.round, h.state.active) == (3, "aria")
    h.rolls(15, 16, 4).send("attack", creature="aria", target="hag")  # restrained: disadvantage
    assert h.creature("hag").hp == 0
    assert h.creature("hag").has("defeated")
    assert phase(h) == "ended"
    assert last(h, EncounterEnded) == EncounterEnded(
        "every creature of the side 'foes' is defeated, surrendered or escaped", "rules"
    )
    assert {c.id for c in h.state.creatures.values() if c.out_of_fight} == {"bog", "hag"}
    h.assert_replay_matches()
