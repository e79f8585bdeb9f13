"""The SRD creatures' traits of movement and senses (plugins/srd/_moves.py), each tested
from its creature's stat block (SRD 5.1):

- the elk's Hooves: +5 to hit, reach 5 ft., one prone creature, 8 (2d4 + 3) bludgeoning
  (prone-only); its Ram hits any target;
- the owl's Flyby: it provokes no opportunity attack when it flies out of an enemy's
  reach (a blood hawk, which flies without Flyby, does);
- the grick's Stone Camouflage: advantage on Dexterity (Stealth) checks to hide in
  rocky terrain;
- the gelatinous cube's blindsight 60 ft. (blind beyond this radius);
- hover, amphibious and hold-breath, declared with what they (do not) change;
- the coverage table counts each plain attack as automated.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from arena_fixture import ARENA, harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Attack,
    AttackMade,
    Creature,
    EncounterOptions,
    Link,
    RollRequest,
    RuleContext,
    Size,
    hookimpl,
    parse_arena,
)
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, name: str) -> Creature:
    """A creature from the SRD entry ``srd.<entry_id>``, named ``name``."""
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=name.lower(), overrides={"name": name})
    return made


def attack_made(events: tuple[Any, ...]) -> AttackMade:
    (made,) = [e for e in events if isinstance(e, AttackMade)]
    return made


# -- prone-only: the elk's Hooves -------------------------------------------------------------


def elk_and_aria() -> EncounterHarness:
    """Bramble the elk (its turn first) and Aria (AC 12, 20 hp) in the hall."""
    return harness(
        [srd("elk", "Bramble"), make("aria", ac=12)],
        {"bramble-1": "hall", "aria": "hall"},
        [20, 10],
        options=EncounterOptions(flanking=False),
    )


def test_the_elk_data_names_hooves_as_its_prone_only_attack() -> None:
    elk = srd("elk", "Bramble")
    hooves = next(a for a in elk.attacks if a.name == "hooves")
    assert (hooves.bonus, hooves.damage, hooves.damage_type) == (5, "2d4+3", "bludgeoning")
    assert [(t.id, t.params) for t in elk.traits if t.id == "prone-only"] == [
        ("prone-only", {"attack": "hooves"})
    ]


def test_hooves_are_refused_against_a_standing_creature_and_nothing_is_spent() -> None:
    h = elk_and_aria()
    refusal = h.refused("attack", creature="bramble-1", target="aria", attack="hooves")
    assert (refusal.code, refusal.message) == (
        "invalid_target",
        "Bramble's hooves can only hit a prone creature, and Aria is not prone.",
    )
    assert h.state.resources.actions == 1
    assert h.creature("aria").hp == 20
    # The ram hits a standing target: 12 to hit (7 + 5) against AC 12, 1d6 + 3 = 4 + 3.
    made = attack_made(
        h.rolls(7, 4).send("attack", creature="bramble-1", target="aria", attack="ram")
    )
    assert (made.hit, made.roll.total) == (True, 12)
    assert h.creature("aria").hp == 13


def test_hooves_hit_a_prone_creature() -> None:
    h = elk_and_aria()
    h.send("grant_condition", creature="aria", condition="prone")
    # Prone within 5 feet: advantage (6 and 2, the 6 kept), 6 + 5 = 11 < 12 misses ...
    missed = attack_made(
        h.rolls(6, 2).send("attack", creature="bramble-1", target="aria", attack="hooves")
    )
    assert (missed.roll.advantage, missed.roll.total, missed.hit) == ("advantage", 11, False)
    h.end_turn()
    h.end_turn()
    # ... and 9 + 5 = 14 hits: 2d4 + 3 = 3 + 4 + 3 = 10 bludgeoning.
    hit = attack_made(
        h.rolls(9, 1, 3, 4).send("attack", creature="bramble-1", target="aria", attack="hooves")
    )
    assert (hit.hit, hit.roll.total) == (True, 14)
    assert h.creature("aria").hp == 10
    h.assert_replay_matches()


# -- flyby: the owl ------------------------------------------------------------------------------


def flier_engaged_with_aria(entry_id: str, name: str) -> EncounterHarness:
    """``name`` (its turn first) bites Aria in the hall (a miss: 2), so they are engaged."""
    cid = f"{name.lower()}-1"
    h = harness(
        [srd(entry_id, name), make("aria", ac=12)],
        {cid: "hall", "aria": "hall"},
        [20, 10],
        options=EncounterOptions(flanking=False),
    )
    attack = h.creature(cid).attacks[0].name
    h.rolls(2).send("attack", creature=cid, target="aria", attack=attack)
    assert h.state.engaged_with(cid) == ["aria"]
    return h


def test_the_owl_flies_out_of_reach_without_provoking() -> None:
    h = flier_engaged_with_aria("owl", "Hoot")
    assert h.creature("hoot-1").speeds == {"walk": 5, "fly": 60}
    h.send("enter", creature="hoot-1", zones=["yard"])
    assert h.state.pending == []  # Aria is offered no opportunity attack
    assert h.creature("hoot-1").zone == "yard"
    assert h.state.reactions_used == []
    h.assert_replay_matches()


def test_a_flier_without_flyby_provokes() -> None:
    h = flier_engaged_with_aria("blood-hawk", "Kestrel")
    assert "flyby" not in [t.id for t in h.creature("kestrel-1").traits]
    h.send("enter", creature="kestrel-1", zones=["yard"])
    (offer,) = h.state.pending
    assert (offer.kind, offer.creature) == ("opportunity_attack", "aria")


def test_a_prone_owl_cannot_fly_and_provokes() -> None:
    h = flier_engaged_with_aria("owl", "Hoot")
    h.send("grant_condition", creature="hoot-1", condition="prone")
    h.send("enter", creature="hoot-1", zones=["yard"])
    (offer,) = h.state.pending
    assert (offer.kind, offer.creature) == ("opportunity_attack", "aria")


# -- camouflage: the grick -----------------------------------------------------------------------


def rocky_arena() -> dict[str, Any]:
    data = copy.deepcopy(ARENA)
    data["assets"].append(
        {"id": "scree", "name": "Scree", "kind": "terrain", "zone": "road", "tags": ["rocky"]}
    )
    return data


def stealth(h: EncounterHarness, cid: str) -> list[tuple[str, str]]:
    check = RollRequest("check", cid, ability="dex", skill="stealth")
    return [(m.effect, m.source) for m in h.engine.context(h.state).modifiers(check)]


def test_stone_camouflage_gives_advantage_on_stealth_only_in_rocky_terrain() -> None:
    grick = srd("grick", "Lurk")
    (trait,) = [t for t in grick.traits if t.id == "camouflage"]
    assert trait.params == {"skill": "stealth", "where": "rocky terrain", "tag": "rocky"}
    h = EncounterHarness(
        [grick, make("aria")], arena=parse_arena(rocky_arena(), "rocky"), extra_plugins=[]
    )
    h.start(positions={"lurk-1": "road", "aria": "road"}, initiative=[20, 10])
    assert stealth(h, "lurk-1") == [("advantage", "camouflage: rocky")]
    # Aria has no camouflage; a Perception check is not helped.
    assert stealth(h, "aria") == []
    perception = RollRequest("check", "lurk-1", ability="wis", skill="perception")
    assert h.engine.context(h.state).modifiers(perception) == []
    # Out of the rocks (the yard has fog and mud, nothing rocky): no advantage.
    h.send("enter", creature="lurk-1", zones=["yard"])
    assert stealth(h, "lurk-1") == []


def test_the_camouflage_terrains_are_declared_asset_tags() -> None:
    tags = Engine().asset_tags
    for tag in ("rocky", "snowy", "underwater"):
        assert any(key == tag or key.endswith("." + tag) for key in tags), tag


# -- blind-beyond: the gelatinous cube -----------------------------------------------------------


def archer() -> Creature:
    return make(
        "aria",
        ac=12,
        speeds={"fly": 30},
        attacks=[Attack("longbow", "ranged", 5, "1d8+3", "piercing", range=150, long_range=600)],
    )


def cube_and_archer(zone: str) -> EncounterHarness:
    """Aria the archer (her turn first) in ``zone``, a gelatinous cube in the hall."""
    return harness(
        [archer(), srd("gelatinous-cube", "Cube")],
        {"aria": zone, "cube-1": "hall"},
        [20, 10],
        options=EncounterOptions(flanking=False),
    )


def test_the_cube_sees_nothing_beyond_60_feet_so_a_far_archer_has_advantage() -> None:
    cube = srd("gelatinous-cube", "Cube")
    assert [(t.id, t.params) for t in cube.traits if t.id == "blind-beyond"] == [
        ("blind-beyond", {"range": 60})
    ]
    assert cube.size is Size.LARGE
    # The sky is 90 ft from the hall (yard 15 + roof 15 + sky 60): beyond the blindsight.
    h = cube_and_archer("sky")
    far = attack_made(
        h.rolls(3, 2, 5).send("attack", creature="aria", target="cube-1", attack="longbow")
    )
    assert (far.roll.advantage, far.roll.dice, far.roll.kept) == ("advantage", (3, 2), (3,))
    assert far.roll.sources == ("advantage:target blind beyond its blindsight",)


def test_within_60_feet_the_cube_perceives_the_archer() -> None:
    # The road is 45 ft from the hall (yard 15 + road 30): within the blindsight.
    h = cube_and_archer("road")
    near = attack_made(
        h.rolls(3, 5).send("attack", creature="aria", target="cube-1", attack="longbow")
    )
    assert (near.roll.advantage, near.roll.dice) == ("none", (3,))


def test_the_cube_attacking_beyond_its_blindsight_has_disadvantage() -> None:
    h = cube_and_archer("sky")
    ctx = h.engine.context(h.state)
    roll = RollRequest("attack", "cube-1", target="aria", attack_kind="melee")
    assert [(m.effect, m.source) for m in ctx.modifiers(roll)] == [
        ("disadvantage", "blindsight only: target beyond it")
    ]


# -- spider-climb: the giant spider ---------------------------------------------------------------


def crag_arena() -> dict[str, Any]:
    """The test arena with a crag above the hall, up a sheer wall: climbing, no clear path."""
    data = copy.deepcopy(ARENA)
    data["zones"].append({"id": "crag", "name": "Crag", "size": 15})
    data["links"].append(
        {"a": "hall", "b": "crag", "direction": "above", "mode": "climb", "clear": False}
    )
    return data


def spider_and_goblin() -> EncounterHarness:
    h = EncounterHarness(
        [srd("giant-spider", "Weaver"), srd("goblin", "Snikt")],
        arena=parse_arena(crag_arena(), "crag"),
        options=EncounterOptions(flanking=False),
    )
    h.start(positions={"weaver-1": "hall", "snikt-1": "hall"}, initiative=[20, 10])
    return h


def test_the_giant_spider_climbs_the_sheer_wall_without_a_check() -> None:
    h = spider_and_goblin()
    assert h.creature("weaver-1").speeds == {"walk": 30, "climb": 30}
    h.send("enter", creature="weaver-1", zones=["crag"])
    assert h.creature("weaver-1").zone == "crag"
    h.assert_replay_matches()


def test_spider_climb_opens_only_climbing_links() -> None:
    h = spider_and_goblin()
    # The pit's closed link is not a climb: the spider needs the rope like anyone.
    assert h.refused("enter", creature="weaver-1", zones=["pit"]).code == "no_clear_path"
    h.end_turn()
    # The goblin has no Spider Climb: the wall is closed to it.
    assert h.refused("enter", creature="snikt-1", zones=["crag"]).code == "no_clear_path"


# -- what the others declare, and the coverage table ---------------------------------------------


def test_movement_and_senses_ids_are_declared_or_left_to_the_gm() -> None:
    features = Engine().catalog.features
    for fid in ("prone-only", "flyby", "camouflage", "blind-beyond", "hover", "amphibious"):
        assert ("trait", fid) in features, fid
    assert ("trait", "hold-breath") in features
    assert ("trait", "spider-climb") in features
    gm = {
        (t.id, t.gm is not None)
        for entry in srd_plugin.srd_source().entries
        for t in entry.traits
        if t.id in ("water-breathing", "echolocation", "spider-climb", "incorporeal-movement")
    }
    assert gm == {
        ("water-breathing", True),
        ("echolocation", True),
        ("spider-climb", False),
        ("incorporeal-movement", False),  # plugins/srd/_traits.py
    }


def test_plain_attacks_count_as_automated_in_the_coverage() -> None:
    from test_srd_coverage import coverage

    data = json.loads(coverage.DATA.read_text(encoding="utf-8"))
    wolf = next(e for e in data["entries"] if e["id"] == "wolf")
    rows = list(coverage.features(wolf))
    assert ("attack", "attack", "melee attack", None) in rows
    assert coverage.ATTACK in coverage.implemented_ids()


# -- the SDK's zonekeep_link_crossing (used by spider-climb) -------------------------------------


class OpensThePit:
    """A plugin that lets Aria alone cross the hall's closed link down to the pit."""

    @staticmethod
    @hookimpl
    def zonekeep_link_crossing(ctx: RuleContext, creature: Creature, link: Link) -> str | None:
        if creature.id == "aria" and {link.a, link.b} == {"hall", "pit"}:
            return "a secret stair"
        return None


def test_a_plugin_opens_a_closed_link_for_one_creature() -> None:
    h = harness(
        [make("aria"), make("bren")],
        {"aria": "hall", "bren": "hall"},
        [20, 10],
        extra_plugins=[OpensThePit()],
    )
    assert not any(link.clear for link in h.state.arena.links_between("hall", "pit"))
    h.send("enter", creature="aria", zones=["pit"])
    assert h.creature("aria").zone == "pit"
    h.end_turn()
    refusal = h.refused("enter", h.player("player-bren"), creature="bren", zones=["pit"])
    assert refusal.code == "no_clear_path"
    h.assert_replay_matches()


def test_without_the_plugin_the_closed_link_stays_closed() -> None:
    h = harness([make("aria")], {"aria": "hall"}, [20])
    assert h.refused("enter", h.player("player-aria"), creature="aria", zones=["pit"]).code == (
        "no_clear_path"
    )
