"""The casters' class features that change a spell as it is cast (issue 31, item 2),
each with the exact outcome of scripted dice on a character built from a real sheet:

- Disciple of Life (cleric, Life Domain 1): a healing spell of 1st level or higher
  heals 2 + the slot level more.
- Sculpt Spells (wizard, Evocation 2): an evocation area spell's ``spare`` names up to
  1 + its level of the targets; they succeed on their saves and take no damage.
- Eldritch Invocations (warlock 2): Agonizing Blast (+Cha to each eldritch blast beam)
  and Repelling Blast (a beam that hits pushes its target 10 ft: forced movement).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from helpers import make

from zonekeep.sdk import (
    Arena,
    AttackMade,
    Creature,
    Damaged,
    Healed,
    Link,
    SaveMade,
    Zone,
    ZoneEntered,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness

ROOT = Path(__file__).resolve().parents[1]
SERAPHINE: dict[str, Any] = json.loads(
    (ROOT / "examples" / "characters" / "seraphine.json").read_text(encoding="utf-8")
)


def trait(fid: str, **params: Any) -> dict[str, Any]:
    return {"id": fid, "name": fid.replace("-", " ").title(), "text": fid, "params": params}


def sheet(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(SERAPHINE)
    data.update(changes)
    return data


def wizard(*traits: dict[str, Any]) -> Creature:
    """Seraphine, evocation wizard 5: Int 18, spell DC 15."""
    data = sheet(
        cantrips=["fire-bolt"],
        spells_known=["burning-hands", "fireball", "shatter", "hold-person", "faerie-fire"],
        traits=list(traits),
    )
    data["spells_prepared"] = list(data["spells_known"])
    return character_creature(parse_character(data), "sera", "player-sera")


def cleric(*traits: dict[str, Any]) -> Creature:
    """Hilda, life cleric 5: Wis 18 (+4), spell DC 15."""
    data = sheet(
        name="Hilda",
        classes=[{"name": "cleric", "level": 5, "subclass": "life"}],
        ability_scores={"str": 14, "dex": 8, "con": 15, "int": 10, "wis": 18, "cha": 12},
        spellcasting_ability="wis",
        cantrips=["sacred-flame"],
        spells_known=["cure-wounds", "healing-word"],
        spells_prepared=[],
        traits=list(traits),
    )
    return character_creature(parse_character(data), "hilda", "player-hilda")


def warlock(*traits: dict[str, Any]) -> Creature:
    """Wren, fiend warlock 5: Cha 18 (+4), proficiency +3: +7 to hit; two beams."""
    data = sheet(
        name="Wren",
        classes=[{"name": "warlock", "level": 5, "subclass": "fiend"}],
        ability_scores={"str": 8, "dex": 14, "con": 14, "int": 10, "wis": 12, "cha": 18},
        spellcasting_ability="cha",
        spell_slots={},
        pact_slots={"count": 2, "level": 3},
        cantrips=["eldritch-blast"],
        spells_known=[],
        spells_prepared=[],
        traits=list(traits),
    )
    return character_creature(parse_character(data), "wren", "player-wren")


def keep() -> Arena:
    return Arena(
        "keep",
        "Keep",
        (
            Zone("hall", "Hall", 30),
            Zone("bar", "Bar", 15),
            Zone("yard", "Yard", 30),
            Zone("far", "Far field", 120),
        ),
        (
            Link("hall", "bar", "beside"),
            Link("bar", "yard", "beside"),
            Link("yard", "far", "beside"),
        ),
    )


def fight(
    caster: Creature, *others: Creature, at: dict[str, str] | None = None
) -> EncounterHarness:
    h = EncounterHarness([caster, *others], arena=keep())
    where = {caster.id: "hall", **{o.id: "hall" for o in others}, **(at or {})}
    h.start(positions=where, initiative=[20, *range(10, 10 - len(others), -1)])
    assert h.state.active == caster.id
    return h


def cast(h: EncounterHarness, who: str, kind: str = "cast", **params: Any) -> tuple[Any, ...]:
    return h.send(kind, h.player(f"player-{who}"), creature=who, **params)


def refused(h: EncounterHarness, who: str, **params: Any) -> tuple[str, str]:
    refusal = h.refused("cast", h.player(f"player-{who}"), creature=who, **params)
    return refusal.code, refusal.message


def goblin(cid: str = "gob", hp: int = 40, ac: int = 13) -> Creature:
    return make(cid, "foes", hp=hp, ac=ac)


def ally(cid: str = "ally", hp: int = 40) -> Creature:
    return make(cid, "heroes", hp=hp, controller=f"player-{cid}")


# -- Disciple of Life ---------------------------------------------------------------------------


def test_disciple_of_life_adds_2_plus_the_slot_level_to_a_healing_spell() -> None:
    h = fight(cleric(trait("disciple-of-life")), ally())
    h.send("damage", creature="ally", amount=35)
    # Cure wounds, level 1: 1d8 (5) + Wis 4 + 2 + 1 = 12.
    cast(h.rolls(5), "hilda", spell="cure-wounds", target="ally")
    assert h.of_type(Healed)[-1].amount == 12 and h.creature("ally").hp == 5 + 12
    h.end_turn()
    h.end_turn()
    # Healing word with a level 3 slot: 3d4 (1, 2, 3) + 4 + 2 + 3 = 15.
    cast(h.rolls(1, 2, 3), "hilda", "cast_bonus", spell="healing-word", slot=3, target="ally")
    assert h.of_type(Healed)[-1].amount == 15 and h.creature("ally").hp == 17 + 15
    h.assert_replay_matches()


def test_without_disciple_of_life_the_heal_is_the_spells_alone() -> None:
    h = fight(cleric(), ally())
    h.send("damage", creature="ally", amount=35)
    cast(h.rolls(5), "hilda", spell="cure-wounds", target="ally")
    assert h.of_type(Healed)[-1].amount == 9


def test_a_gm_marked_disciple_of_life_adds_nothing() -> None:
    marked = {**trait("disciple-of-life"), "gm": "the table's house rule"}
    h = fight(cleric(marked), ally())
    h.send("damage", creature="ally", amount=35)
    cast(h.rolls(5), "hilda", spell="cure-wounds", target="ally")
    assert h.of_type(Healed)[-1].amount == 9


# -- Sculpt Spells ------------------------------------------------------------------------------


def test_sculpt_spells_spares_chosen_targets_of_a_fireball() -> None:
    h = fight(
        wizard(trait("sculpt-spells")),
        goblin(),
        ally("kai"),
        ally("mo"),
        at={"gob": "yard", "kai": "yard", "mo": "yard"},
    )
    # Only the goblin rolls its save (3: fails); 8d6 once: 28. Kai and Mo are spared.
    cast(
        h.rolls(3, 3, 4, 5, 6, 1, 2, 3, 4),
        "sera",
        spell="fireball",
        zone="yard",
        targets=["gob", "kai", "mo"],
        spare=["kai", "mo"],
    )
    assert [(e.creature, e.success) for e in h.of_type(SaveMade)] == [("gob", False)]
    assert {e.creature: e.amount for e in h.of_type(Damaged)} == {"gob": 28}
    assert h.creature("kai").hp == 40 and h.creature("mo").hp == 40
    assert h.creature("gob").hp == 40 - 28
    h.assert_replay_matches()


def test_sculpt_spells_spares_1_plus_the_spells_level_and_no_one_rolls_when_all_are() -> None:
    five = ["kai", "mo", "lu", "bo", "gob"]
    h = fight(
        wizard(trait("sculpt-spells")),
        *(ally(c) for c in five[:4]),
        goblin(),
        at=dict.fromkeys(five, "yard"),
    )
    args: dict[str, Any] = {"spell": "fireball", "zone": "yard", "targets": five}
    code, message = refused(h, "sera", spare=five, **args)
    assert code == "too_many_targets" and "up to 4" in message
    assert h.creature("sera").resources["spell-slots-3"] == 2
    # Four spared: the goblin alone saves (19: half of 8d6 = 8 // 2).
    cast(h.rolls(19, *[1] * 8), "sera", spare=five[:4], **args)
    assert [e.creature for e in h.of_type(SaveMade)] == ["gob"]
    assert {e.creature: e.amount for e in h.of_type(Damaged)} == {"gob": 4}
    h = fight(
        wizard(trait("sculpt-spells")),
        *(ally(c) for c in five[:3]),
        at=dict.fromkeys(five[:3], "bar"),
    )
    # Shatter (level 2) spares three: no save and no damage roll at all.
    cast(h, "sera", spell="shatter", zone="bar", targets=five[:3], spare=five[:3])
    assert not h.of_type(SaveMade) and not h.of_type(Damaged)
    assert h.creature("sera").resources["spell-slots-2"] == 2


def test_sculpt_spells_is_refused_without_the_feature_off_evocation_or_off_target() -> None:
    h = fight(wizard(), goblin(), at={"gob": "bar"})
    code, _ = refused(h, "sera", spell="shatter", zone="bar", targets=["gob"], spare=["gob"])
    assert code == "no_such_feature"
    h = fight(wizard(trait("sculpt-spells")), goblin(), ally(), at={"gob": "bar", "ally": "bar"})
    code, _ = refused(
        h, "sera", spell="shatter", zone="bar", targets=["gob", "ally"], spare=["hilda"]
    )
    assert code == "invalid_params"
    assert h.creature("sera").resources["spell-slots-2"] == 3
    assert h.creature("gob").hp == 40


def test_sculpt_spells_works_on_faerie_fire_and_refuses_a_spell_of_another_school(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from zonekeep.plugins.spells import SPELLS

    assert SPELLS["fireball"].school == "evocation"
    assert SPELLS["hold-person"].school == "enchantment"
    h = fight(wizard(trait("sculpt-spells")), goblin(), ally(), at={"gob": "bar", "ally": "bar"})
    # Faerie fire is an evocation: the spared ally makes no save and is not outlined.
    cast(
        h.rolls(2), "sera", spell="faerie-fire", zone="bar", targets=["gob", "ally"], spare=["ally"]
    )
    assert [e.creature for e in h.of_type(SaveMade)] == ["gob"]
    assert "outlined" in h.creature("gob").conditions
    assert "outlined" not in h.creature("ally").conditions
    # Every area spell of the catalog is an evocation: one of another school is refused.
    monkeypatch.setitem(SPELLS, "shatter", attrs.evolve(SPELLS["shatter"], school="conjuration"))
    h = fight(wizard(trait("sculpt-spells")), goblin(), ally(), at={"gob": "bar", "ally": "bar"})
    code, message = refused(
        h, "sera", spell="shatter", zone="bar", targets=["gob", "ally"], spare=["ally"]
    )
    assert code == "invalid_params" and "conjuration" in message


# -- Eldritch Invocations -----------------------------------------------------------------------


def test_agonizing_blast_adds_the_charisma_modifier_to_each_beam() -> None:
    invocations = trait("eldritch-invocations", invocations=["agonizing-blast"])
    h = fight(warlock(invocations), goblin(), at={"gob": "bar"})
    # Two beams (level 5): 15 hits (+7 = 22), 1d10 (6) + 4; 14 hits, 1d10 (3) + 4.
    cast(h.rolls(15, 6, 14, 3), "wren", spell="eldritch-blast", target="gob")
    assert [m.hit for m in h.of_type(AttackMade)] == [True, True]
    assert [e.amount for e in h.of_type(Damaged)] == [10, 7]
    assert h.creature("gob").hp == 40 - 17


def test_without_agonizing_blast_the_beam_is_its_die_alone() -> None:
    invocations = trait("eldritch-invocations", invocations=["repelling-blast"])
    h = fight(warlock(invocations), goblin(), at={"gob": "bar"})
    cast(h.rolls(15, 6, 14, 3), "wren", spell="eldritch-blast", target="gob")
    assert [e.amount for e in h.of_type(Damaged)] == [6, 3]


def test_repelling_blast_pushes_a_creature_a_beam_hits_once() -> None:
    invocations = trait("eldritch-invocations", invocations=["repelling-blast"])
    h = fight(warlock(invocations), goblin())
    # The first beam misses (2), the second hits (15, 1d10: 4): pushed to the bar.
    cast(
        h.rolls(2, 15, 4),
        "wren",
        spell="eldritch-blast",
        target="gob",
        push={"gob": {"zone": "bar"}},
    )
    assert [m.hit for m in h.of_type(AttackMade)] == [False, True]
    assert h.creature("gob").zone == "bar"
    (entered,) = [e for e in h.of_type(ZoneEntered) if e.creature == "gob"]
    assert entered.forced and entered.by == "wren"
    h.assert_replay_matches()


def test_repelling_blast_pushes_no_one_on_misses_and_is_refused_without_it() -> None:
    invocations = trait("eldritch-invocations", invocations=["repelling-blast"])
    h = fight(warlock(invocations), goblin())
    cast(h.rolls(2, 3), "wren", spell="eldritch-blast", target="gob", push={"gob": {"zone": "bar"}})
    assert h.creature("gob").zone == "hall"
    h = fight(warlock(trait("eldritch-invocations", invocations=[])), goblin())
    code, _ = refused(
        h, "wren", spell="eldritch-blast", target="gob", push={"gob": {"zone": "bar"}}
    )
    assert code == "invalid_params" and not h.of_type(AttackMade)
    h = fight(warlock(invocations), goblin(), goblin("orc"))
    code, _ = refused(
        h, "wren", spell="eldritch-blast", target="gob", push={"orc": {"zone": "bar"}}
    )
    assert code == "invalid_params"


# -- Metamagic ------------------------------------------------------------------------------------


def sorcerer(*options: str, points: int = 5) -> Creature:
    """Ysolde, draconic sorcerer 5: Cha 17 (+3), proficiency +3: spell DC 14, +6 to hit;
    five sorcery points (the font-of-magic uses)."""
    data: dict[str, Any] = {
        "name": "Ysolde",
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": "sorcerer", "level": 5, "subclass": "draconic"}],
        "ability_scores": {"str": 8, "dex": 14, "con": 14, "int": 10, "wis": 12, "cha": 17},
        "hp": 32,
        "spellcasting_ability": "cha",
        "spell_slots": {"1": 4, "2": 3, "3": 2},
        "cantrips": ["fire-bolt"],
        "spells_known": ["magic-missile", "hold-person", "fireball", "shatter", "burning-hands"],
        "traits": [trait("metamagic", options=list(options))],
        "actions": [
            {
                "id": "font-of-magic",
                "name": "Font of Magic",
                "kind": "bonus_action",
                "text": "Sorcery points.",
                "uses": {"per": "long_rest", "count": points},
            }
        ],
    }
    return character_creature(parse_character(data), "ysolde", "player-ysolde")


def points(h: EncounterHarness) -> int:
    return h.creature("ysolde").resources["font-of-magic"]


def test_quickened_spell_casts_an_action_spell_as_a_bonus_action_for_2_points() -> None:
    h = fight(sorcerer("quickened", "twinned"), goblin(), at={"gob": "bar"})
    quick = {"option": "quickened"}
    code, _ = refused(h, "ysolde", spell="fire-bolt", target="gob", metamagic=quick)
    assert code == "invalid_params"  # quickened: with cast_bonus
    # Fire bolt at level 5: 2d10. 15 + 6 hits AC 13; 6 + 4 = 10 fire.
    cast(
        h.rolls(15, 6, 4), "ysolde", "cast_bonus", spell="fire-bolt", target="gob", metamagic=quick
    )
    assert [e.amount for e in h.of_type(Damaged)] == [10]
    assert points(h) == 3
    assert h.state.resources.bonus_actions == 0 and h.state.resources.actions == 1
    # The bonus-action spell rule: no leveled spell with the action after it.
    code, _ = refused(h, "ysolde", spell="magic-missile", target="gob")
    assert code == "spell_limit"
    h.assert_replay_matches()


def test_twinned_spell_gives_a_one_target_spell_a_second_target_for_its_level() -> None:
    h = fight(sorcerer("twinned"), goblin(), goblin("orc"), at={"gob": "bar", "orc": "bar"})
    twin = {"option": "twinned"}
    # Hold person (level 2) on two: 2 points; the goblin fails (3), the orc saves (18).
    cast(h.rolls(3, 18), "ysolde", spell="hold-person", targets=["gob", "orc"], metamagic=twin)
    assert points(h) == 3
    assert "paralyzed" in h.creature("gob").conditions
    assert "paralyzed" not in h.creature("orc").conditions
    h.assert_replay_matches()


def test_twinned_fire_bolt_costs_1_point_and_rolls_each_target_apart() -> None:
    h = fight(sorcerer("twinned"), goblin(), goblin("orc"), at={"gob": "bar", "orc": "bar"})
    twin = {"option": "twinned"}
    cast(
        h.rolls(15, 1, 1, 2),
        "ysolde",
        spell="fire-bolt",
        targets=["gob", "orc"],
        metamagic=twin,
    )
    assert [(m.target, m.hit) for m in h.of_type(AttackMade)] == [("gob", True), ("orc", False)]
    assert h.creature("gob").hp == 40 - 2 and points(h) == 4


def test_twinned_is_refused_for_spells_that_can_target_more_than_one() -> None:
    h = fight(sorcerer("twinned"), goblin(), goblin("orc"), at={"gob": "bar", "orc": "bar"})
    twin = {"option": "twinned"}
    two = {"targets": ["gob", "orc"], "metamagic": twin}
    assert refused(h, "ysolde", spell="magic-missile", **two)[0] == "invalid_params"
    code, message = refused(h, "ysolde", spell="hold-person", slot=3, **two)
    assert code == "invalid_params" and "at this level" in message
    code, _ = refused(h, "ysolde", spell="fire-bolt", targets=["gob"], metamagic=twin)
    assert code == "invalid_params"
    assert points(h) == 5 and h.creature("ysolde").resources["spell-slots-3"] == 2


def test_careful_spell_lets_up_to_cha_targets_succeed_on_the_save() -> None:
    h = fight(
        sorcerer("careful"),
        goblin(),
        ally("kai"),
        at={"gob": "yard", "kai": "yard"},
    )
    # Only the goblin rolls (3: fails); 8d6 = 16: the goblin 16, Kai half (8).
    cast(
        h.rolls(3, *[2] * 8),
        "ysolde",
        spell="fireball",
        zone="yard",
        targets=["gob", "kai"],
        spare=["kai"],
        metamagic={"option": "careful"},
    )
    assert [e.creature for e in h.of_type(SaveMade)] == ["gob"]
    assert {e.creature: e.amount for e in h.of_type(Damaged)} == {"gob": 16, "kai": 8}
    assert points(h) == 4


def test_distant_spell_doubles_the_range() -> None:
    far = {"gob": "far"}  # 15 + 30 + 120 = 165 ft: beyond fire bolt's 120, within 240
    h = fight(sorcerer("distant"), goblin(), at=far)
    assert refused(h, "ysolde", spell="fire-bolt", target="gob")[0] == "out_of_range"
    cast(h.rolls(2), "ysolde", spell="fire-bolt", target="gob", metamagic={"option": "distant"})
    assert [m.hit for m in h.of_type(AttackMade)] == [False] and points(h) == 4


def test_heightened_spell_gives_disadvantage_on_the_first_save() -> None:
    h = fight(sorcerer("heightened", "extended"), goblin(), at={"gob": "bar"})
    high = {"option": "heightened", "target": "gob"}
    # Disadvantage: 18 and 3, the 3 kept (Wis +0 against 14): paralyzed.
    cast(h.rolls(18, 3), "ysolde", spell="hold-person", target="gob", metamagic=high)
    (save,) = h.of_type(SaveMade)
    assert save.success is False and save.roll.advantage == "disadvantage"
    assert "paralyzed" in h.creature("gob").conditions
    assert "heightened" not in h.creature("gob").conditions  # its first save only
    assert points(h) == 2
    h.assert_replay_matches()


def test_extended_spell_doubles_a_minute_and_subtle_only_spends() -> None:
    h = fight(sorcerer("extended", "subtle"), goblin(), at={"gob": "bar"})
    cast(h.rolls(18), "ysolde", spell="hold-person", target="gob", metamagic={"option": "extended"})
    (effect,) = [e for e in h.state.condition_effects.values() if e.condition == "concentrating"]
    assert effect.rounds == 20 and points(h) == 4
    h.end_turn()
    h.end_turn()
    code, _ = refused(
        h, "ysolde", spell="fire-bolt", target="gob", metamagic={"option": "extended"}
    )
    assert code == "invalid_params"  # instantaneous
    cast(h.rolls(2), "ysolde", spell="fire-bolt", target="gob", metamagic={"option": "subtle"})
    assert points(h) == 3


def test_metamagic_is_refused_unknown_unchosen_empowered_or_without_points() -> None:
    h = fight(sorcerer("quickened", "empowered", points=1), goblin(), at={"gob": "bar"})
    base: dict[str, Any] = {"spell": "fire-bolt", "target": "gob"}
    assert refused(h, "ysolde", metamagic={"option": "x"}, **base)[0] == "invalid_params"
    assert refused(h, "ysolde", metamagic="quickened", **base)[0] == "invalid_params"
    assert refused(h, "ysolde", metamagic={"option": "twinned"}, **base)[0] == "no_such_feature"
    code, message = refused(h, "ysolde", metamagic={"option": "empowered"}, **base)
    assert code == "invalid_params" and "GM" in message
    r = h.refused(
        "cast_bonus",
        h.player("player-ysolde"),
        creature="ysolde",
        metamagic={"option": "quickened"},
        **base,
    )
    assert r.code == "no_uses_left"
    h = fight(wizard(), goblin(), at={"gob": "bar"})
    code, _ = refused(h, "sera", spell="fire-bolt", target="gob", metamagic={"option": "subtle"})
    assert code == "no_such_feature"
