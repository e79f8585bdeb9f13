"""The SRD creatures' features of plugins/srd/_bodies.py, each tested from its SRD 5.1
stat block:

- Wight, wraith, imp, bearded devil: resistance to bludgeoning, piercing and slashing
  from nonmagical attacks that are not silvered; wererat: immunity to the same.
- Gargoyle: resistance to bludgeoning, piercing and slashing from nonmagical attacks
  that are not adamantine; flesh golem: immunity to the same; xorn: resistance to
  piercing and slashing from nonmagical attacks that are not adamantine.
"""

from __future__ import annotations

import attrs
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    Attack,
    Creature,
    Damage,
    Damaged,
    EncounterOptions,
    hookimpl,
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
