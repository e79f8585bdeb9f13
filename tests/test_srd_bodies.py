"""The SRD creatures' features of plugins/srd/_bodies.py, each tested from its SRD 5.1
stat block:

- Wight, wraith, imp, bearded devil: resistance to bludgeoning, piercing and slashing
  from nonmagical attacks that are not silvered; wererat: immunity to the same.
- Gargoyle: resistance to bludgeoning, piercing and slashing from nonmagical attacks
  that are not adamantine; flesh golem: immunity to the same; xorn: resistance to
  piercing and slashing from nonmagical attacks that are not adamantine.
- Giant toad, Swallow: a bite on a Medium or smaller target it is grappling swallows
  it: blinded, restrained, total cover, 10 (3d6) acid at the start of each of the toad's
  turns; out prone if the toad dies. Giant frog: the same for Small or smaller, 5 (2d4).
- Black pudding, ochre jelly, Split: a Medium or larger one subjected to lightning or
  slashing damage, with at least 10 hit points, splits into two one size smaller, each
  with half its hit points (rounded down).
- Octopus, giant octopus, Ink Cloud (once per rest): a 5-ft (20-ft) radius heavily
  obscured for 1 minute; then the Dash action as a bonus action.
- Gelatinous cube, Engulf: DC 12 Dexterity save or engulfed: 10 (3d6) acid, restrained,
  21 (6d6) acid at the start of each of the cube's turns, a DC 12 Strength check (an
  action) to escape. Ooze Cube: creatures inside have total cover; a creature within
  5 ft pulls one out with an action and a DC 12 Strength check, taking 10 (3d6) acid;
  it holds one Large creature or up to four Medium or smaller.
"""

from __future__ import annotations

import attrs
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Attack,
    AttackMade,
    Creature,
    Damage,
    Damaged,
    Dashed,
    EncounterOptions,
    Size,
    hookimpl,
    movement_left,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str, **overrides: object) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name, **overrides})
    return made


def fight(first: Creature, *others: Creature, extra: tuple[object, ...] = ()) -> EncounterHarness:
    """``first`` acts first, then the others in order; everyone in one zone."""
    every = [first, *others]
    h = EncounterHarness(
        every, zones=["hall"], options=EncounterOptions(flanking=False), extra_plugins=extra
    )
    h.start(positions={c.id: "hall" for c in every}, initiative=[20, 15, 10, 5][: len(every)])
    return h


def hurt(events: tuple[object, ...]) -> list[tuple[str, int, str]]:
    return [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)]


def armed(cid: str, *properties: str, magical: bool = False) -> Creature:
    """A fighter with a +4 longsword, 1d8+2 slashing, made of what ``properties`` say."""
    sword = Attack("longsword", "melee", 4, "1d8+2", "slashing", properties=properties)
    return make(cid, attacks=[attrs.evolve(sword, magical=magical)])


# -- silvered and adamantine weapons -------------------------------------------------------


def test_a_silvered_sword_deals_a_wight_full_damage_and_a_plain_one_half() -> None:
    wight = srd("wight", "Wight")
    h = fight(armed("aria", "silvered"), armed("bram"), wight)
    # +4, 15 hits AC 14; 1d8+2 with 5: 7 slashing, in full through its resistance.
    events = h.rolls(15, 5).send("attack", creature="aria", target="wight-1")
    assert hurt(events) == [("wight-1", 7, "slashing")]
    (hit,) = [e for e in events if isinstance(e, Damaged)]
    assert [s.kind for s in hit.steps] == []
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="bram", target="wight-1")
    assert hurt(events) == [("wight-1", 3, "slashing")]  # 7 halved
    assert h.creature("wight-1").hp == 45 - 7 - 3


def test_silver_does_not_get_past_the_wights_other_resistances() -> None:
    wight = srd("wight", "Wight")
    flail = Attack("flail", "melee", 4, "1d8+2", "necrotic", properties=("silvered",))
    h = fight(make("aria", attacks=[flail]), wight)
    events = h.rolls(15, 5).send("attack", creature="aria", target="wight-1")
    assert hurt(events) == [("wight-1", 3, "necrotic")]  # its own necrotic resistance


def test_the_wererats_immunity_gives_way_only_to_silver() -> None:
    wererat = srd("wererat", "Rat")
    h = fight(armed("aria", "silvered"), armed("bram"), wererat)
    events = h.rolls(15, 5).send("attack", creature="aria", target="rat-1")
    assert hurt(events) == [("rat-1", 7, "slashing")]
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="bram", target="rat-1")
    assert hurt(events) == [("rat-1", 0, "slashing")]
    assert h.creature("rat-1").hp == 33 - 7


def test_silver_is_not_adamantine_for_the_gargoyle_nor_the_flesh_golem() -> None:
    gargoyle = srd("gargoyle", "Gargoyle")
    golem = srd("flesh-golem", "Golem")
    h = fight(armed("aria", "silvered"), armed("bram", "adamantine"), gargoyle, golem)
    events = h.rolls(15, 5).send("attack", creature="aria", target="gargoyle-1")
    assert hurt(events) == [("gargoyle-1", 3, "slashing")]
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="bram", target="gargoyle-1")
    assert hurt(events) == [("gargoyle-1", 7, "slashing")]
    h.end_turn()
    h.end_turn()
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="aria", target="golem-1")
    assert hurt(events) == [("golem-1", 0, "slashing")]
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="bram", target="golem-1")
    assert hurt(events) == [("golem-1", 7, "slashing")]


def test_the_xorns_adamantine_exception_and_its_plain_bludgeoning() -> None:
    xorn = srd("xorn", "Xorn")
    maul = Attack("maul", "melee", 4, "1d8+2", "bludgeoning")
    h = fight(armed("aria", "adamantine"), make("bram", attacks=[maul]), xorn)
    events = h.rolls(19, 5).send("attack", creature="aria", target="xorn-1")
    assert hurt(events) == [("xorn-1", 7, "slashing")]
    h.end_turn()
    events = h.rolls(19, 5).send("attack", creature="bram", target="xorn-1")
    assert hurt(events) == [("xorn-1", 7, "bludgeoning")]  # it never resisted bludgeoning


def test_a_gm_marked_trait_leaves_the_resistance_whole() -> None:
    wight = srd("wight", "Wight")
    wight = attrs.evolve(
        wight,
        traits=tuple(
            attrs.evolve(t, gm="the GM rules on it") if t.id == "silvered-weapons" else t
            for t in wight.traits
        ),
    )
    h = fight(armed("aria", "silvered"), wight)
    events = h.rolls(15, 5).send("attack", creature="aria", target="wight-1")
    assert hurt(events) == [("wight-1", 3, "slashing")]


class _Blessing:
    """A test plugin: every attack against a creature named in ``blessed`` overcomes its
    nonmagical defences."""

    def __init__(self, blessed: str) -> None:
        self.blessed = blessed

    @hookimpl
    def zonekeep_modify_damage(self, ctx: object, damage: Damage) -> Damage | None:
        if damage.target != self.blessed:
            return None
        return damage.overcome_nonmagical("blessed")


def test_overcome_nonmagical_sets_aside_only_the_nonmagical_defences() -> None:
    # The SDK's Damage.overcome_nonmagical, by any plugin: resistance from nonmagical
    # attacks no longer halves, its plain resistance still does.
    ogre = make(
        "ogre",
        "foes",
        damage_resistances=["fire"],
        damage_resistances_nonmagical=["slashing"],
    )
    torch = Attack("torch", "melee", 4, "1d8+2", "fire")
    h = fight(armed("aria"), make("bram", attacks=[torch]), ogre, extra=(_Blessing("ogre"),))
    events = h.rolls(15, 5).send("attack", creature="aria", target="ogre")
    assert hurt(events) == [("ogre", 7, "slashing")]
    h.end_turn()
    events = h.rolls(15, 5).send("attack", creature="bram", target="ogre")
    assert hurt(events) == [("ogre", 3, "fire")]
    assert Damage("x", 4).overcome_nonmagical("why").nonmagical_overcome == "why"


# -- swallow ---------------------------------------------------------------------------------


def effects(h: EncounterHarness, cid: str) -> list[tuple[str, str]]:
    """``cid``'s timed conditions: (condition, source)."""
    return sorted(
        (e.condition, e.source) for e in h.state.condition_effects.values() if e.creature == cid
    )


def test_the_toad_swallows_a_creature_it_already_grapples_and_digests_it() -> None:
    toad = srd("giant-toad", "Toad")
    h = fight(toad, make("aria", hp=60, ac=10), make("bram", hp=30, ac=10))
    # Bite +4, 15 hits: 1d10+2 (5: 7) piercing, 1d10 (4) poison, grappled (escape DC 13).
    h.rolls(15, 5, 4).send("attack", creature="toad-1", target="aria", attack="bite")
    assert effects(h, "aria") == [("grappled", "grapple:toad-1:bite")]
    h.end_turn()
    h.end_turn()
    h.end_turn()
    # Its next bite hits the Aria it grapples: swallowed, the grapple over.
    h.rolls(15, 5, 4).send("attack", creature="toad-1", target="aria", attack="bite")
    assert effects(h, "aria") == [
        ("blinded", "swallow:toad-1"),
        ("restrained", "swallow:toad-1"),
        ("swallowed", "swallow:toad-1"),
    ]
    assert h.creature("aria").hp == 60 - 11 - 11
    # Total cover: Bram cannot reach her; she reaches only the toad.
    h.end_turn()
    h.end_turn()
    assert h.refused("attack", creature="bram", target="aria").code == "invalid_target"
    # The start of the toad's turn: 3d6 (2+3+4 = 9) acid.
    events = h.rolls(2, 3, 4).end_turn()
    assert hurt(events) == [("aria", 9, "acid")]
    assert h.creature("aria").hp == 60 - 22 - 9


def test_the_hit_that_grapples_does_not_also_swallow() -> None:
    toad = srd("giant-toad", "Toad")
    h = fight(toad, make("aria", hp=60, ac=10))
    h.rolls(15, 5, 4).send("attack", creature="toad-1", target="aria", attack="bite")
    assert "swallowed" not in h.creature("aria").conditions
    assert "grappled" in h.creature("aria").conditions


def test_the_frog_cannot_swallow_a_medium_creature() -> None:
    frog = srd("giant-frog", "Frog")
    h = fight(frog, make("aria", hp=60, ac=10))
    h.rolls(15, 3).send("attack", creature="frog-1", target="aria", attack="bite")
    h.end_turn()
    h.end_turn()
    h.rolls(15, 3).send("attack", creature="frog-1", target="aria", attack="bite")
    assert effects(h, "aria") == [("grappled", "grapple:frog-1:bite")]


def test_a_swallowed_creature_attacks_only_its_swallower_and_comes_out_prone_when_it_dies() -> None:
    frog = srd("giant-frog", "Frog", hp=6)
    h = fight(frog, make("pip", hp=40, ac=10, size=Size.SMALL), make("bram", ac=10))
    h.rolls(15, 3).send("attack", creature="frog-1", target="pip", attack="bite")
    h.end_turn()
    h.end_turn()
    h.end_turn()
    h.rolls(15, 3).send("attack", creature="frog-1", target="pip", attack="bite")
    assert "swallowed" in h.creature("pip").conditions
    h.end_turn()
    assert h.refused("attack", creature="pip", target="bram").code == "invalid_target"
    # Blinded and restrained, she stabs from inside: 1d6+2 (4: 6) kills the frog.
    h.rolls(15, 15, 4).send("attack", creature="pip", target="frog-1")
    assert h.creature("frog-1").out_of_fight
    pip = h.creature("pip")
    assert "swallowed" not in pip.conditions and "blinded" not in pip.conditions
    assert "restrained" not in pip.conditions and "prone" in pip.conditions
    assert effects(h, "pip") == []


def test_a_swallowed_creature_moves_with_its_swallower() -> None:
    toad = srd("giant-toad", "Toad")
    aria = make("aria", hp=60, ac=10)
    h = EncounterHarness([toad, aria], zones=["hall", "yard"])
    h.start(positions={"toad-1": "hall", "aria": "hall"}, initiative=[20, 15])
    h.rolls(15, 5, 4).send("attack", creature="toad-1", target="aria", attack="bite")
    h.end_turn()
    h.end_turn()
    h.rolls(15, 5, 4).send("attack", creature="toad-1", target="aria", attack="bite")
    assert "swallowed" in h.creature("aria").conditions
    h.send("enter", creature="toad-1", zones=["yard"])
    assert h.creature("toad-1").zone == "yard"
    assert h.creature("aria").zone == "yard"


# -- split ------------------------------------------------------------------------------------


def sizes(h: EncounterHarness) -> dict[str, tuple[str, int, int, str | None]]:
    """Every creature's (size, hp, max_hp, zone)."""
    return {c.id: (c.size.label, c.hp, c.max_hp, c.zone) for c in h.state.creatures.values()}


def test_slashing_splits_the_ochre_jelly_in_two_medium_jellies_then_small_ones() -> None:
    jelly = srd("ochre-jelly", "Jelly")
    h = fight(armed("aria"), jelly)
    # Slashing: immune, no damage, but it splits: 45 -> two Medium jellies of 22.
    events = h.rolls(15, 5).send("attack", creature="aria", target="jelly-1")
    assert hurt(events) == [("jelly-1", 0, "slashing")]
    assert sizes(h) == {
        "aria": ("Medium", 20, 20, "hall"),
        "jelly-1": ("Medium", 22, 22, "hall"),
        "jelly-1-2": ("Medium", 22, 22, "hall"),
    }
    assert h.creature("jelly-1-2").name == "Jelly (2)"
    # The copy acts in the jelly's initiative slot, after it.
    (slot,) = [e for e in h.state.initiative if "jelly-1" in e.members]
    assert slot.members == ("jelly-1", "jelly-1-2")
    h.end_turn()
    assert h.state.active == "jelly-1"
    h.end_turn()
    assert h.state.active == "jelly-1-2"
    # Lightning (the GM's damage) splits the Medium one again: two Small ones of 11.
    h.send("damage", creature="jelly-1-2", amount=8, damage_type="lightning")
    assert sizes(h)["jelly-1-2"] == ("Small", 11, 11, "hall")
    assert sizes(h)["jelly-1-2-2"] == ("Small", 11, 11, "hall")
    # A Small jelly does not split.
    h.send("damage", creature="jelly-1-2-2", amount=8, damage_type="slashing")
    assert len(h.state.creatures) == 4
    assert sizes(h)["jelly-1-2-2"] == ("Small", 11, 11, "hall")


def test_other_damage_and_too_few_hit_points_do_not_split_it() -> None:
    pudding = srd("black-pudding", "Pudding", hp=10)
    jelly = srd("ochre-jelly", "Jelly", hp=9)
    h = fight(armed("aria"), pudding, jelly)
    h.send("damage", creature="pudding-1", amount=3, damage_type="fire")
    assert sizes(h)["pudding-1"] == ("Large", 7, 10, "hall")
    h.send("damage", creature="jelly-1", amount=3, damage_type="slashing")
    assert sizes(h)["jelly-1"] == ("Large", 9, 9, "hall")
    assert set(h.state.creatures) == {"aria", "pudding-1", "jelly-1"}


def test_the_gm_overrides_a_size_by_name_and_a_bad_one_is_refused() -> None:
    h = fight(make("aria"))
    h.send("override", creature="aria", field="size", value="large")
    assert h.creature("aria").size is Size.LARGE
    assert h.refused("override", creature="aria", field="size", value="vast").code == (
        "invalid_params"
    )
    assert h.refused("override", creature="aria", field="size", value=3).code == "invalid_params"
    assert h.creature("aria").size is Size.LARGE


# -- ink cloud --------------------------------------------------------------------------------


def attack_mods(events: tuple[object, ...]) -> tuple[str, tuple[str, ...]]:
    """The attack roll's advantage state and its sources."""
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    return made.roll.advantage, made.roll.sources


def test_the_octopus_inks_its_zone_then_dashes_as_a_bonus_action() -> None:
    octopus = srd("giant-octopus", "Octopus")
    h = EncounterHarness([octopus, make("aria")], zones=["pool", "shore"])
    h.start(positions={"octopus-1": "pool", "aria": "shore"}, initiative=[20, 15])
    assert h.refused("ink_dash", creature="octopus-1").code == "invalid_params"
    h.send("ink_cloud", creature="octopus-1")
    (cloud,) = [a for a in h.state.arena.assets if a.data.get("srd") == "ink"]
    assert (cloud.zone, cloud.kind, cloud.data["until_round"]) == ("pool", "element", 10)
    me = h.creature("octopus-1")
    before = movement_left(h.state, me, "swim")
    events = h.send("ink_dash", creature="octopus-1")
    assert [e.creature for e in events if isinstance(e, Dashed)] == ["octopus-1"]
    assert movement_left(h.state, h.creature("octopus-1"), "swim") == before + 60
    assert h.refused("ink_dash", creature="octopus-1").code in ("invalid_params", "no_bonus")
    h.end_turn()
    h.end_turn()
    # Once per short rest.
    assert h.refused("ink_cloud", creature="octopus-1").code == "no_uses_left"


def test_no_one_sees_through_the_ink_but_blindsight_does() -> None:
    octopus = srd("octopus", "Octopus")
    bat = make("bat", senses={"blindsight": 60})
    h = EncounterHarness(
        [octopus, make("aria"), bat],
        zones=["pool", "shore"],
        options=EncounterOptions(flanking=False),
    )
    h.start(positions={"octopus-1": "pool", "aria": "pool", "bat": "pool"}, initiative=[20, 15, 10])
    h.send("ink_cloud", creature="octopus-1")
    h.end_turn()
    # Aria cannot see the octopus in the ink, nor it her: the two cancel.
    events = h.rolls(2).send("attack", creature="aria", target="octopus-1")
    assert attack_mods(events) == (
        "none",
        ("disadvantage:ink cloud: target unseen", "advantage:ink cloud: attacker unseen"),
    )
    h.end_turn()
    # The bat feels it out: it has advantage, the octopus cannot see it.
    events = h.rolls(5, 4).send("attack", creature="bat", target="octopus-1")
    assert attack_mods(events) == ("advantage", ("advantage:ink cloud: attacker unseen",))


def test_the_ink_disperses_after_a_minute() -> None:
    octopus = srd("octopus", "Octopus")
    h = EncounterHarness([octopus, make("aria")], zones=["pool", "shore"])
    h.start(positions={"octopus-1": "pool", "aria": "shore"}, initiative=[20, 15])
    h.send("ink_cloud", creature="octopus-1")
    for _ in range(9):
        h.end_turn()
        h.end_turn()
    assert h.state.round == 10
    assert [a.id for a in h.state.arena.assets if a.data.get("srd") == "ink"] == ["ink-cloud"]
    h.end_turn()
    h.end_turn()
    assert h.state.round == 11
    assert [a for a in h.state.arena.assets if a.data.get("srd") == "ink"] == []


# -- engulf ------------------------------------------------------------------------------------


def test_the_cube_engulfs_who_fails_the_save_and_a_friend_pulls_her_out() -> None:
    cube = srd("gelatinous-cube", "Cube")
    h = fight(cube, make("aria", hp=40), make("bram", hp=20))
    # Aria's Dexterity save 5 fails DC 12: 3d6 (2+3+4 = 9) acid, engulfed; Bram's 15 holds.
    events = h.rolls(5, 2, 3, 4, 15).send("engulf", creature="cube-1", creatures=["aria", "bram"])
    assert hurt(events) == [("aria", 9, "acid")]
    assert effects(h, "aria") == [("engulfed", "engulf:cube-1"), ("restrained", "engulf:cube-1")]
    assert effects(h, "bram") == []
    h.end_turn()
    assert h.refused("attack", creature="aria", target="bram").code == "invalid_target"
    # Her Strength check 8 fails DC 12.
    h.rolls(8).send("escape_engulf", creature="aria")
    assert "engulfed" in h.creature("aria").conditions
    h.end_turn()
    assert h.refused("attack", creature="bram", target="aria").code == "invalid_target"
    # Bram reaches in: 3d6 (1+1+1 = 3) acid burns him, his check 14 pulls her out.
    events = h.rolls(1, 1, 1, 14).send("pull_out", creature="bram", target="aria")
    assert hurt(events) == [("bram", 3, "acid")]
    assert effects(h, "aria") == []
    assert "restrained" not in h.creature("aria").conditions


def test_an_engulfed_creature_dissolves_at_the_start_of_the_cubes_turns_until_it_escapes() -> None:
    cube = srd("gelatinous-cube", "Cube")
    h = fight(cube, make("aria", hp=60))
    h.rolls(5, 2, 3, 4).send("engulf", creature="cube-1", creatures=["aria"])
    h.end_turn()
    # The cube's turn: 6d6 (1+2+3+4+5+6 = 21) acid.
    events = h.rolls(1, 2, 3, 4, 5, 6).end_turn()
    assert hurt(events) == [("aria", 21, "acid")]
    h.end_turn()
    h.rolls(12).send("escape_engulf", creature="aria")
    assert effects(h, "aria") == []
    assert h.refused("escape_engulf", creature="aria").code == "invalid_params"


def test_the_cube_holds_one_large_creature_or_four_smaller_ones() -> None:
    cube = srd("gelatinous-cube", "Cube")
    ogre = make("ogre", size=Size.LARGE)
    huge = make("giant", size=Size.HUGE)
    h = fight(cube, ogre, make("aria"), huge)
    assert h.refused("engulf", creature="cube-1", creatures=["giant"]).code == "invalid_target"
    assert (
        h.refused("engulf", creature="cube-1", creatures=["ogre", "aria"]).code == "invalid_target"
    )
    assert h.refused("engulf", creature="cube-1", creatures=["cube-1"]).code == "invalid_target"
    h.rolls(5, 1, 1, 1).send("engulf", creature="cube-1", creatures=["ogre"])
    assert "engulfed" in h.creature("ogre").conditions
