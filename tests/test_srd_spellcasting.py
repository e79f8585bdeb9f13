"""The SRD creatures cast from their stat blocks (issue 30): the ``spellcasting`` action's
params (ability, save DC, attack bonus, slots by level, spells, innate spells at will or
per day) played by the spells plugin, each tested with the exact outcome of scripted
dice on the creature made from its ``srd-5.1.json`` entry:

- Acolyte (1st-level cleric, Wisdom, save DC 12, +4 to hit; 3 level-1 slots): sacred
  flame, Dexterity save or 1d8 radiant; cure wounds, 1d8 + 2.
- Cult fanatic (4th-level cleric, save DC 11, +3 to hit; 4 level-1 and 3 level-2
  slots): hold person, Wisdom save or paralyzed, with concentration; inflict wounds,
  +3 to hit, 3d10 necrotic; shield of faith (bonus action), +2 AC.
- Drow (Innate Spellcasting, Charisma, DC 11): faerie fire 1/day, Dexterity save or
  outlined, attacks against it with advantage; darkness stays the GM's.
- Green hag (innate, DC 12): vicious mockery at will, Wisdom save or 1d4 psychic.
- Steam mephit (blur 1/day): attacks against it with disadvantage.
- Druid (4th-level druid, DC 12, +4 to hit): barkskin, AC at least 16; produce
  flame, +4 to hit, 1d8 fire.
"""

from __future__ import annotations

from typing import Any

import attrs
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.plugins.spells import (
    CONCENTRATING,
    GM_SPELLS,
    NO_COMBAT_EFFECT,
    SPELLS,
    TURN_KEY,
    gm_spells_of,
    spell_problems,
    spells_of,
)
from zonekeep.sdk import (
    Arena,
    AttackMade,
    ConditionEffectApplied,
    Creature,
    Damaged,
    EncounterOptions,
    Healed,
    Link,
    ResourceSpent,
    SaveMade,
    Trait,
    Zone,
)
from zonekeep.sdk.host import entry_creatures
from zonekeep.sdk.testing import EncounterHarness


def srd(entry_id: str, cid: str) -> Creature:
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (made,) = entry_creatures(entry, id_prefix=cid)
    return attrs.evolve(made, id=cid)


def pc(cid: str, ac: int = 12, hp: int = 30, **saves: int) -> Creature:
    return make(cid, "party", hp=hp, ac=ac, saves=saves)


def hall() -> Arena:
    """Hall (30 ft) beside Yard (30 ft) beside Far field (120 ft)."""
    return Arena(
        "keep",
        "Keep",
        (Zone("hall", "Hall", 30), Zone("yard", "Yard", 30), Zone("far", "Far field", 120)),
        (Link("hall", "yard", "beside"), Link("yard", "far", "beside")),
    )


def fight(caster: Creature, *others: Creature, zones: dict[str, str] | None = None) -> Any:
    # (no flanking: the spells under test alone decide advantage)
    h = EncounterHarness([caster, *others], arena=hall(), options=EncounterOptions(flanking=False))
    where = {c.id: "hall" for c in (caster, *others)} | (zones or {})
    h.start(positions=where, initiative=[20, *range(10, 10 - len(others), -1)])
    assert h.state.active == caster.id
    return h


def saves(events: tuple[object, ...]) -> list[tuple[str, str, int, int, bool]]:
    return [
        (e.creature, e.ability, e.roll.total, e.dc, e.success)
        for e in events
        if isinstance(e, SaveMade)
    ]


def hurt(events: tuple[object, ...]) -> list[tuple[str, int, str]]:
    return [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)]


def spent(events: tuple[object, ...]) -> list[tuple[str, int]]:
    """The uses spent: slots and innate spells (not the turn's spell count)."""
    return [
        (e.resource, e.left)
        for e in events
        if isinstance(e, ResourceSpent) and e.resource != TURN_KEY
    ]


# -- the data ---------------------------------------------------------------------------


IMPLEMENTED = {
    "acolyte",
    "cult-fanatic",
    "drow",
    "druid",
    "dust-mephit",
    "dryad",
    "green-hag",
    "steam-mephit",
    "unicorn",
}


def _spellcasters() -> dict[str, Any]:
    return {
        e.id: next(a for a in e.actions if a.id == "spellcasting")
        for e in srd_plugin.srd_source().entries
        if any(a.id == "spellcasting" for a in e.actions)
    }


def test_every_spellcasting_entry_is_structured_and_names_only_known_spells() -> None:
    casters = _spellcasters()
    assert len(casters) == 11
    for entry_id, action in casters.items():
        assert action.params.get("ability") in ("wis", "cha"), entry_id
        assert spell_problems(action.params) == [], entry_id
    automated = {e for e, a in casters.items() if a.gm is None}
    assert automated == IMPLEMENTED


def test_an_implemented_entry_can_cast_a_combat_spell_and_says_which_are_the_gms() -> None:
    for entry_id in sorted(IMPLEMENTED):
        creature = srd(entry_id, "caster")
        resolved = [s for s in spells_of(creature) if s in SPELLS and SPELLS[s].gm is None]
        assert resolved, entry_id
        text = next(a for a in creature.actions if a.id == "spellcasting").text.lower()
        for name, _reason in gm_spells_of(creature):
            assert name.lower() in text, (entry_id, name)


def test_a_gm_marked_entry_has_no_combat_spell_the_rules_resolve() -> None:
    for entry_id, action in _spellcasters().items():
        if action.gm is None:
            continue
        creature = srd(entry_id, "caster")
        named = [*action.params["innate"].get("at_will", ()), *action.params["innate"]["per_day"]]
        assert all(s in GM_SPELLS for s in named), entry_id
        assert any(s not in NO_COMBAT_EFFECT for s in named), entry_id
        h = fight(creature, pc("aria"))
        refusal = h.refused("cast", h.gm, creature="caster", spell=named[0])
        assert refusal.code == "no_such_feature"


# -- the acolyte ------------------------------------------------------------------------


def test_the_acolyte_casts_sacred_flame_dex_save_dc_12_or_1d8_radiant() -> None:
    h = fight(srd("acolyte", "aco"), pc("aria", dex=1), pc("bram", dex=1))
    # Aria rolls 10 + 1 = 11 < 12: fails; the 1d8 rolls 6.
    events = h.rolls(10, 6).send("cast", h.gm, creature="aco", spell="sacred-flame", target="aria")
    assert saves(events) == [("aria", "dex", 11, 12, False)]
    assert hurt(events) == [("aria", 6, "radiant")]
    assert spent(events) == []  # a cantrip spends no slot
    h.send("end_turn", h.gm, creature="aco")
    h.send("end_turn", h.player("player-aria"), creature="aria")
    h.send("end_turn", h.player("player-bram"), creature="bram")
    # Bram rolls 11 + 1 = 12: saves, nothing happens.
    events = h.rolls(11).send("cast", h.gm, creature="aco", spell="sacred-flame", target="bram")
    assert saves(events) == [("bram", "dex", 12, 12, True)]
    assert hurt(events) == []


def test_the_acolyte_casts_cure_wounds_1d8_plus_2_from_its_three_slots() -> None:
    ally = make("guard", "enemies", hp=11)
    ally = attrs.evolve(ally, hp=3)
    h = fight(srd("acolyte", "aco"), ally)
    events = h.rolls(4).send("cast", h.gm, creature="aco", spell="cure-wounds", target="guard")
    healed = [(e.creature, e.amount, e.hp) for e in events if isinstance(e, Healed)]
    assert healed == [("guard", 6, 9)]  # 4 + Wisdom 2
    assert spent(events) == [("spell-slots-1", 2)]
    assert h.state.creatures["aco"].resources["spell-slots-1"] == 2


def test_the_acolyte_out_of_slots_is_refused_and_sanctuary_is_the_gms() -> None:
    aco = srd("acolyte", "aco")
    aco = attrs.evolve(aco, resources={**aco.resources, "spell-slots-1": 0})
    h = fight(aco, pc("aria"))
    refusal = h.refused("cast", h.gm, creature="aco", spell="cure-wounds", target="aco")
    assert refusal.code == "no_uses_left"
    refusal = h.refused("cast", h.gm, creature="aco", spell="sanctuary", target="aco")
    assert refusal.code == "no_such_feature"
    assert "Sanctuary" in refusal.message and "GM adjudicates" in refusal.message


def test_the_acolyte_blesses_three_creatures_a_d4_on_their_attacks_and_saves() -> None:
    allies = [make(cid, "enemies") for cid in ("ann", "ben", "cid")]
    h = fight(srd("acolyte", "aco"), *allies, pc("aria", ac=14))
    refusal = h.refused(
        "cast", h.gm, creature="aco", spell="bless", targets=["aco", "ann", "ben", "cid"]
    )
    assert refusal.code == "too_many_targets"  # three at level 1
    events = h.send("cast", h.gm, creature="aco", spell="bless", targets=["aco", "ann", "ben"])
    applied = [(e.effect.creature, e.effect.condition) for e in events if isinstance(e, ConditionEffectApplied)]  # fmt: skip
    assert applied == [("aco", CONCENTRATING), ("aco", "bless"), ("ann", "bless"), ("ben", "bless")]
    assert spent(events) == [("spell-slots-1", 2)]
    h.send("end_turn", h.gm, creature="aco")
    # Ann's blade: 8 + 4 = 12 misses AC 14; the d4 (3) makes it 15, a hit (1d6+2: 2 + 2).
    events = h.rolls(8, 3, 2).send("attack", h.gm, creature="ann", target="aria")
    made = [(e.roll.total, e.roll.expertise, e.roll.expertise_roll, e.hit) for e in events if isinstance(e, AttackMade)]  # fmt: skip
    assert made == [(15, 4, 3, True)]
    h.send("end_turn", h.gm, creature="ann")
    h.send("end_turn", h.gm, creature="ben")
    # Cid, not blessed: no die, 8 + 4 = 12 misses.
    events = h.rolls(8).send("attack", h.gm, creature="cid", target="aria")
    unblessed = [(e.roll.total, e.roll.expertise, e.hit) for e in events if isinstance(e, AttackMade)]  # fmt: skip
    assert unblessed == [(12, 0, False)]
    h.send("end_turn", h.gm, creature="cid")
    # Aria hits the acolyte (AC 10) for 1d6+2 = 5: its concentration save (Con +0,
    # DC 10) rolls 8 and the d4 2: 10, it keeps concentrating.
    events = h.rolls(15, 3, 8, 2).send(
        "attack", h.player("player-aria"), creature="aria", target="aco"
    )
    assert saves(events) == [("aco", "con", 10, 10, True)]
    assert CONCENTRATING in h.state.creatures["aco"].conditions


# -- the cult fanatic ---------------------------------------------------------------------


def test_the_cult_fanatic_casts_hold_person_wis_dc_11_paralyzed_with_concentration() -> None:
    h = fight(srd("cult-fanatic", "fan"), pc("aria", wis=2))
    # Aria rolls 8 + 2 = 10 < 11: paralyzed, held by the fanatic's concentration.
    events = h.rolls(8).send("cast", h.gm, creature="fan", spell="hold-person", target="aria")
    assert saves(events) == [("aria", "wis", 10, 11, False)]
    applied = [e.effect for e in events if isinstance(e, ConditionEffectApplied)]
    assert [(e.creature, e.condition) for e in applied] == [
        ("fan", CONCENTRATING),
        ("aria", "paralyzed"),
    ]
    assert applied[1].parent == applied[0].id
    assert spent(events) == [("spell-slots-2", 2)]
    assert "paralyzed" in h.state.creatures["aria"].conditions


def test_the_cult_fanatic_casts_inflict_wounds_plus_3_to_hit_3d10_necrotic() -> None:
    h = fight(srd("cult-fanatic", "fan"), pc("aria", ac=13))
    events = h.rolls(10, 7, 6, 5).send(
        "cast", h.gm, creature="fan", spell="inflict-wounds", target="aria"
    )
    made = [(e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)]
    assert made == [(13, 13, True)]
    assert hurt(events) == [("aria", 18, "necrotic")]
    assert spent(events) == [("spell-slots-1", 3)]


def test_shield_of_faith_gives_2_ac_and_then_only_a_cantrip_may_follow() -> None:
    guard = make("guard", "enemies", ac=13)
    h = fight(srd("cult-fanatic", "fan"), guard, pc("aria"))
    events = h.send("cast_bonus", h.gm, creature="fan", spell="shield-of-faith", target="guard")
    applied = [(e.effect.creature, e.effect.condition) for e in events if isinstance(e, ConditionEffectApplied)]  # fmt: skip
    assert applied == [("fan", CONCENTRATING), ("guard", "shield-of-faith")]
    refusal = h.refused("cast", h.gm, creature="fan", spell="hold-person", target="aria")
    assert refusal.code == "spell_limit"
    for who in ("fan", "guard"):
        h.send("end_turn", h.gm, creature=who)
    # Aria's blade: 10 + 4 = 14 would hit AC 13; it misses AC 15.
    events = h.rolls(10).send("attack", h.player("player-aria"), creature="aria", target="guard")
    made = [(e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)]
    assert made == [(14, 15, False)]


# -- innate spellcasting -------------------------------------------------------------------


def test_the_drow_casts_faerie_fire_once_a_day_and_attacks_on_the_outlined_have_advantage() -> None:
    h = fight(srd("drow", "drow"), pc("aria", dex=0, ac=20), pc("bram", dex=0))
    # Aria rolls 9 (< 11): outlined; Bram rolls 11: not.
    events = h.rolls(9, 11).send(
        "cast", h.gm, creature="drow", spell="faerie-fire", zone="hall", targets=["aria", "bram"]
    )
    assert saves(events) == [("aria", "dex", 9, 11, False), ("bram", "dex", 11, 11, True)]
    assert spent(events) == [("innate-faerie-fire", 0)]
    assert "outlined" in h.state.creatures["aria"].conditions
    assert "outlined" not in h.state.creatures["bram"].conditions
    assert CONCENTRATING in h.state.creatures["drow"].conditions
    h.send("end_turn", h.gm, creature="drow")
    h.send("end_turn", h.player("player-aria"), creature="aria")
    # Bram attacks Aria with advantage: 3 and 16, the higher: 16 + 4 = 20 hits AC 20.
    events = h.rolls(3, 16, 2).send(
        "attack", h.player("player-bram"), creature="bram", target="aria"
    )
    made = [(e.roll.total, e.hit) for e in events if isinstance(e, AttackMade)]
    assert made == [(20, True)]
    h.send("end_turn", h.player("player-bram"), creature="bram")
    refusal = h.refused(
        "cast", h.gm, creature="drow", spell="faerie-fire", zone="hall", targets=["aria", "bram"]
    )
    assert refusal.code == "no_uses_left"
    refusal = h.refused("cast", h.gm, creature="drow", spell="darkness", zone="hall")
    assert refusal.code == "no_such_feature" and "Darkness" in refusal.message


def test_the_green_hag_casts_vicious_mockery_at_will_wis_dc_12_1d4_psychic() -> None:
    h = fight(srd("green-hag", "hag"), pc("aria", wis=1))
    events = h.rolls(10, 3).send(
        "cast", h.gm, creature="hag", spell="vicious-mockery", target="aria"
    )
    assert saves(events) == [("aria", "wis", 11, 12, False)]
    assert hurt(events) == [("aria", 3, "psychic")]
    assert spent(events) == []


def test_the_steam_mephits_blur_gives_attacks_against_it_disadvantage() -> None:
    h = fight(srd("steam-mephit", "mephit"), pc("aria"))
    events = h.send("cast", h.gm, creature="mephit", spell="blur")
    assert spent(events) == [("innate-blur", 0)]
    assert "blurred" in h.state.creatures["mephit"].conditions
    h.send("end_turn", h.gm, creature="mephit")
    # Aria's blade with disadvantage: 18 and 2, the lower: 2 + 4 = 6 misses AC 10.
    events = h.rolls(18, 2).send(
        "attack", h.player("player-aria"), creature="aria", target="mephit"
    )
    made = [(e.roll.total, e.hit) for e in events if isinstance(e, AttackMade)]
    assert made == [(6, False)]


def test_the_druids_barkskin_makes_its_ac_at_least_16() -> None:
    druid = srd("druid", "druid")
    assert druid.ac == 11
    h = fight(druid, pc("aria", ac=12))
    events = h.send("cast", h.gm, creature="druid", spell="barkskin", target="druid")
    assert spent(events) == [("spell-slots-2", 2)]
    h.send("end_turn", h.gm, creature="druid")
    # Aria's blade: 11 + 4 = 15 would hit AC 11; barkskin makes it 16.
    events = h.rolls(11).send("attack", h.player("player-aria"), creature="aria", target="druid")
    made = [(e.roll.total, e.target_ac, e.hit) for e in events if isinstance(e, AttackMade)]
    assert made == [(15, 16, False)]


def test_the_druids_produce_flame_plus_4_to_hit_1d8_fire_within_30_ft() -> None:
    h = fight(
        srd("druid", "druid"), pc("aria", ac=12), pc("bram"), zones={"aria": "yard", "bram": "far"}
    )
    refusal = h.refused("cast", h.gm, creature="druid", spell="produce-flame", target="bram")
    assert refusal.code == "out_of_range"  # the far field is beyond 30 ft
    events = h.rolls(9, 5).send(
        "cast", h.gm, creature="druid", spell="produce-flame", target="aria"
    )
    made = [(e.roll.total, e.hit) for e in events if isinstance(e, AttackMade)]
    assert made == [(13, True)]
    assert hurt(events) == [("aria", 5, "fire")]
    assert spent(events) == []


# -- the choices offered, and what is refused --------------------------------------------


def test_the_drows_cast_choices_offer_its_innate_spells_without_slots_while_uses_remain() -> None:
    h = fight(srd("drow", "drow"), pc("aria"), zones={"aria": "yard"})

    def offered() -> dict[str, Any]:
        details = {d.id: d for d in h.engine.action_details(h.state, "drow", h.gm)}
        return {c.params["spell"]: c.options for c in details["cast"].choices or ()}

    # Darkness and dancing lights are the GM's: not offered. Faerie fire, 60 ft: both zones.
    assert offered() == {"faerie-fire": {"zone": ("hall", "yard")}}
    h.rolls(15).send(
        "cast", h.gm, creature="drow", spell="faerie-fire", zone="yard", targets=["aria"]
    )
    assert h.state.creatures["drow"].resources["innate-faerie-fire"] == 0
    h.send("end_turn", h.gm, creature="drow")
    h.send("end_turn", h.player("player-aria"), creature="aria")
    assert offered() == {}  # its one use a day is spent


def test_an_innate_spell_takes_no_other_slot_and_a_spell_not_in_the_stat_block_is_refused() -> None:
    h = fight(srd("drow", "drow"), pc("aria"))
    refusal = h.refused(
        "cast", h.gm, creature="drow", spell="faerie-fire", slot=2, zone="hall", targets=["aria"]
    )
    assert refusal.code == "invalid_params"
    refusal = h.refused(
        "cast", h.gm, creature="drow", spell="faerie-fire", slot=True, zone="hall", targets=["aria"]
    )
    assert refusal.code == "invalid_params"
    refusal = h.refused("cast", h.gm, creature="drow", spell="fireball", zone="hall")
    assert refusal.code == "no_such_feature" and "faerie-fire" in refusal.message
    # Shield of faith is a bonus action: sent as an action, it is refused.
    h2 = fight(srd("cult-fanatic", "fan"), pc("aria"))
    refusal = h2.refused("cast", h2.gm, creature="fan", spell="shield-of-faith", target="fan")
    assert refusal.code == "invalid_params" and "cast_bonus" in refusal.message


def test_blur_affects_only_its_caster_and_a_ward_ends_with_concentration() -> None:
    h = fight(srd("steam-mephit", "mephit"), pc("aria"))
    refusal = h.refused("cast", h.gm, creature="mephit", spell="blur", target="aria")
    assert refusal.code == "invalid_target"
    h2 = fight(srd("cult-fanatic", "fan"), make("guard", "enemies", ac=13), pc("aria", wis=0))
    h2.send("cast_bonus", h2.gm, creature="fan", spell="shield-of-faith", target="guard")
    assert "shield-of-faith" in h2.state.creatures["guard"].conditions
    # A new concentration spell (hold person, next turn) ends shield of faith.
    for who in ("fan", "guard"):
        h2.send("end_turn", h2.gm, creature=who)
    h2.send("end_turn", h2.player("player-aria"), creature="aria")
    h2.rolls(3).send("cast", h2.gm, creature="fan", spell="hold-person", target="aria")
    assert "shield-of-faith" not in h2.state.creatures["guard"].conditions
    assert "paralyzed" in h2.state.creatures["aria"].conditions


def test_a_spells_save_is_magical_the_dryads_magic_resistance_gives_it_advantage() -> None:
    h = fight(srd("acolyte", "aco"), srd("dryad", "dryad"))
    # The dryad (Dex +1) rolls 4 and 15 with advantage: 15 + 1 = 16 saves against DC 12.
    events = h.rolls(4, 15).send("cast", h.gm, creature="aco", spell="sacred-flame", target="dryad")
    assert saves(events) == [("dryad", "dex", 16, 12, True)]
    assert hurt(events) == []


def test_a_players_own_spellcasting_params_give_no_slots_and_no_innate_spells() -> None:
    """Hostile input: a sheet's own ``spellcasting`` trait naming slots and innate spells
    gets neither (a character's slots are its resources, from the checked sheet)."""
    forged = Trait(
        "spellcasting",
        "Spellcasting",
        params={
            "ability": "cha",
            "prepared": ["magic-missile"],
            "slots": {"1": 9},
            "innate": {"at_will": ["fireball"], "per_day": {"hold-person": 9}},
        },
    )
    h = fight(make("aria", "party", traits=(forged,)), make("gob", "enemies"))
    assert spells_of(h.state.creatures["aria"]) == ["magic-missile"]
    player = h.player("player-aria")
    refusal = h.refused("cast", player, creature="aria", spell="magic-missile", target="gob")
    assert refusal.code == "no_uses_left"
    refusal = h.refused("cast", player, creature="aria", spell="fireball", zone="hall")
    assert refusal.code == "no_such_feature"
