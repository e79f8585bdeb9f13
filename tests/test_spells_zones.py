"""Spells that stay on the field (issue 31, item 3): entangle and web (a runtime asset that
restrains, difficult terrain, break_free), spiritual weapon (an asset that strikes, moved
with a bonus action) and spirit guardians (an aura that moves with its caster), each with
the exact outcome of scripted dice on a character built from a real sheet."""

from __future__ import annotations

import copy
from typing import Any

from helpers import make
from test_spells import SERAPHINE, cast, goblin, keep, refused

from zonekeep.plugins.spells import CONCENTRATING, GUARDIANS, SPIRITUAL_WEAPON, spell_choices
from zonekeep.sdk import (
    AssetRemoved,
    AttackMade,
    CheckRolled,
    ConditionEffectEnded,
    Creature,
    Damaged,
    Moved,
    ResourceSpent,
    SaveMade,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def druid(level: int = 5) -> Creature:
    """A level-5 cleric: Wis 18 (+4), proficiency +3: spell DC 15, +7 to hit; slots
    4 / 3 / 2 (at level 7: 4 / 3 / 3 / 1)."""
    data = copy.deepcopy(SERAPHINE)
    data.update(
        name="Hilda",
        classes=[{"name": "cleric", "level": level}],
        ability_scores={"str": 14, "dex": 8, "con": 15, "int": 10, "wis": 18, "cha": 12},
        spellcasting_ability="wis",
        cantrips=["sacred-flame"],
        spells_known=[
            "entangle",
            "web",
            "spiritual-weapon",
            "spirit-guardians",
            "moonbeam",
            "flaming-sphere",
        ],
        spells_prepared=[],
    )
    if level >= 7:
        data["spell_slots"] = {"1": 4, "2": 3, "3": 3, "4": 1}
    return character_creature(parse_character(data), "hilda", "player-hilda")


def fight(
    *others: Creature, where: dict[str, str] | None = None, level: int = 5
) -> EncounterHarness:
    h = EncounterHarness([druid(level), *others], arena=keep())
    positions = {"hilda": "hall", **{o.id: "hall" for o in others}, **(where or {})}
    h.start(positions=positions, initiative=[20, *range(10, 10 - len(others), -1)])
    assert h.state.active == "hilda"
    return h


def bonus(h: EncounterHarness, **params: Any) -> tuple[Any, ...]:
    return h.send("cast_bonus", h.player("player-hilda"), creature="hilda", **params)


def assets(h: EncounterHarness, tag: str) -> list[tuple[str, str]]:
    return [(a.id, a.zone) for a in h.state.arena.assets if tag in a.tags]


def saves(events: tuple[Any, ...]) -> list[tuple[str, str, int, int, bool]]:
    return [
        (e.creature, e.ability, e.roll.total, e.dc, e.success)
        for e in events
        if isinstance(e, SaveMade)
    ]


def hurt(events: tuple[Any, ...]) -> list[tuple[str, int, str]]:
    return [(e.creature, e.amount, e.damage_type) for e in events if isinstance(e, Damaged)]


# -- entangle ------------------------------------------------------------------------------


def test_entangle_restrains_on_a_failed_strength_save_and_makes_difficult_terrain() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "yard"})
    # The goblins' Strength saves: 14 (fails against 15), 15 (succeeds).
    events = cast(h.rolls(14, 15), "hilda", spell="entangle", zone="yard", targets=["gob", "orc"])
    assert saves(events) == [("gob", "str", 14, 15, False), ("orc", "str", 15, 15, True)]
    assert assets(h, "spell_entangle") == [("entangle-yard", "yard")]
    assert "restrained" in h.creature("gob").conditions
    assert "restrained" not in h.creature("orc").conditions
    assert CONCENTRATING in h.creature("hilda").conditions
    assert h.creature("hilda").resources["spell-slots-1"] == 3
    # Difficult terrain: the orc moving 10 ft inside the yard spends 20.
    h.end_turn()
    h.end_turn()  # the goblin's turn
    spent = h.send("move", h.gm, creature="orc", feet=10)
    assert [(e.cost, e.extra) for e in spent if isinstance(e, Moved)] == [(20, ("difficult",))]
    h.assert_replay_matches()


def test_entangle_out_of_90_ft_or_without_a_zone_is_refused_and_changes_nothing() -> None:
    h = fight(goblin(), where={"gob": "far"})
    before = h.state.seq
    # The far field is bar 15 + yard 30 + far 120 = 165 ft away.
    assert refused(h, "hilda", spell="entangle", zone="far", targets=["gob"])[0] == "out_of_range"
    assert refused(h, "hilda", spell="entangle")[0] == "unknown_zone"
    assert h.state.seq == before and assets(h, "spell_entangle") == []


def test_entangle_must_fill_its_targets_while_creatures_remain_in_its_area() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "yard"})
    code, message = refused(h, "hilda", spell="entangle", zone="yard", targets=["gob"])
    assert code == "too_few_targets" and "Orc" in message


def test_break_free_is_an_action_strength_check_against_the_spell_dc() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    cast(h.rolls(2), "hilda", spell="entangle", zone="yard", targets=["gob"])
    h.end_turn()
    # The goblin (Str +0 by default) checks: 14 fails against DC 15.
    events = h.rolls(14).send("break_free", h.gm, creature="gob")
    check = next(e for e in events if isinstance(e, CheckRolled))
    assert (check.ability, check.roll.total, check.dc, check.success) == ("str", 14, 15, False)
    assert "restrained" in h.creature("gob").conditions
    # Its action is spent: no second try this turn.
    assert h.refused("break_free", h.gm, creature="gob").code != ""
    h.end_turn()
    h.end_turn()
    events = h.rolls(15).send("break_free", h.gm, creature="gob")
    assert "restrained" not in h.creature("gob").conditions
    ended = [e for e in events if isinstance(e, ConditionEffectEnded)]
    assert [e.condition for e in ended] == ["restrained"]
    # The plants stay (concentration holds) and a free creature cannot break free again.
    assert assets(h, "spell_entangle") == [("entangle-yard", "yard")]
    assert h.refused("break_free", h.gm, creature="gob").code == "invalid_params"


def test_the_plants_wilt_when_concentration_ends_and_free_who_they_held() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    cast(h.rolls(2), "hilda", spell="entangle", zone="yard", targets=["gob"])
    h.end_turn()
    # 30 damage: DC 15; Hilda's Con save +2 and a 3: 5 fails.
    events = h.rolls(3).send("damage", creature="hilda", amount=30)
    removed = [e.asset for e in events if isinstance(e, AssetRemoved)]
    assert removed == ["entangle-yard"]
    assert "restrained" not in h.creature("gob").conditions
    assert assets(h, "spell_entangle") == []
    h.assert_replay_matches()


# -- web -----------------------------------------------------------------------------------------


def test_web_catches_on_a_failed_dex_save_and_at_the_start_of_a_turn_in_it() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "yard"})
    events = cast(h.rolls(16, 3), "hilda", spell="web", zone="yard", targets=["gob", "orc"])
    assert saves(events) == [("gob", "dex", 16, 15, True), ("orc", "dex", 3, 15, False)]
    assert h.creature("hilda").resources["spell-slots-2"] == 2
    assert "restrained" not in h.creature("gob").conditions
    assert "restrained" in h.creature("orc").conditions
    # The goblin starts its turn in the webs: it saves again, and a 4 fails.
    events = h.rolls(4).end_turn()
    assert saves(events) == [("gob", "dex", 4, 15, False)]
    assert "restrained" in h.creature("gob").conditions
    # A restrained creature starting its turn makes no new save.
    h.end_turn()
    assert saves(h.end_turn()) == []


def test_a_creature_entering_the_web_on_its_turn_saves_or_is_caught() -> None:
    h = fight(goblin(), where={"gob": "bar"})
    cast(h.rolls(), "hilda", spell="web", zone="yard")  # nobody there: no target, no save
    assert assets(h, "spell_web") == [("web-yard", "yard")]
    h.end_turn()
    events = h.rolls(9).send("enter", h.gm, creature="gob", zones=["yard"])
    assert saves(events) == [("gob", "dex", 9, 15, False)]
    assert "restrained" in h.creature("gob").conditions


def test_fire_aimed_at_the_web_burns_it_and_frees_the_caught() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    cast(h.rolls(1), "hilda", spell="web", zone="yard", targets=["gob"])
    assert "restrained" in h.creature("gob").conditions
    events = h.rolls(1).send("damage_zone", h.gm, zone="yard", damage="1", damage_type="fire")
    assert [e.asset for e in events if isinstance(e, AssetRemoved)] == ["web-yard"]
    assert "restrained" not in h.creature("gob").conditions


# -- spiritual weapon ----------------------------------------------------------------------------


def test_spiritual_weapon_appears_in_a_zone_and_strikes_1d8_plus_wisdom_force() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    # 10 + 7 = 17 against AC 13: a hit; the 1d8 rolls 5, + 4 (Wisdom).
    events = bonus(h.rolls(10, 5), spell="spiritual-weapon", target="gob")
    made = next(e for e in events if isinstance(e, AttackMade))
    assert (made.kind, made.roll.total, made.hit) == ("melee", 17, True)
    assert hurt(events) == [("gob", 9, "force")]
    assert assets(h, "spell_spiritual_weapon") == [("spiritual-weapon-hilda", "yard")]
    assert SPIRITUAL_WEAPON in h.creature("hilda").conditions
    assert CONCENTRATING not in h.creature("hilda").conditions
    # The weapon strikes; the caster engages nobody across the zones.
    assert h.state.engaged_with("hilda") == []


def test_spiritual_weapon_upcast_adds_a_d8_per_two_slot_levels() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    events = bonus(h.rolls(10, 5, 6), spell="spiritual-weapon", slot=3, target="gob")
    assert hurt(events) == [("gob", 5 + 4, "force")]  # 3rd: still 1d8
    weapon = h.state.arena.asset("spiritual-weapon-hilda")
    assert weapon.data["dice"] == "1d8+4"


def test_the_weapon_moves_20_ft_and_strikes_again_as_a_bonus_action() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "bar"})
    bonus(h.rolls(1), spell="spiritual-weapon", zone="yard", target="gob")  # a 1 misses
    h.end_turn()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "hilda"
    # Yard to the far field is 120 ft: too far.
    code = h.refused(
        "spiritual_weapon", h.player("player-hilda"), creature="hilda", zone="far"
    ).code
    assert code == "out_of_range"
    # Yard to bar: 15 ft. 12 + 7 = 19 hits the orc; 1d8 = 8, + 4.
    events = h.rolls(12, 8).send(
        "spiritual_weapon", h.player("player-hilda"), creature="hilda", zone="bar", target="orc"
    )
    assert hurt(events) == [("orc", 12, "force")]
    assert assets(h, "spell_spiritual_weapon") == [("spiritual-weapon-hilda", "bar")]
    # The bonus action is spent.
    again = h.refused("spiritual_weapon", h.player("player-hilda"), creature="hilda")
    assert again.code != ""


def test_without_a_weapon_the_command_is_refused_and_the_weapon_lasts_a_minute() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    refusal = h.refused("spiritual_weapon", h.player("player-hilda"), creature="hilda")
    assert refusal.code == "no_such_feature"
    bonus(h, spell="spiritual-weapon", zone="yard")
    for _ in range(20):  # ten rounds of two turns
        h.end_turn()
    assert assets(h, "spell_spiritual_weapon") == []
    assert SPIRITUAL_WEAPON not in h.creature("hilda").conditions


# -- spirit guardians ---------------------------------------------------------------------------


def test_spirit_guardians_hurt_a_foe_starting_its_turn_in_the_casters_zone() -> None:
    ally = make("ally", "party", hp=20)
    h = fight(goblin(), ally)
    events = cast(h, "hilda", spell="spirit-guardians")
    assert saves(events) == [] and hurt(events) == []  # no save on the cast
    assert GUARDIANS in h.creature("hilda").conditions
    assert assets(h, "spell_spirit_guardians") == [("spirit-guardians-hilda", "hall")]
    # The goblin's Wisdom save: 8 fails against 15; 3d8 = 4 + 5 + 6.
    events = h.rolls(8, 4, 5, 6).end_turn()
    assert saves(events) == [("gob", "wis", 8, 15, False)]
    assert hurt(events) == [("gob", 15, "radiant")]
    # Its speed is halved in the hall (difficult terrain): 5 ft costs 10.
    events = h.send("move", h.gm, creature="gob", feet=5)
    assert [(e.cost, e.extra) for e in events if isinstance(e, Moved)] == [(10, ("difficult",))]
    # The ally is spared: no save, and its 5 ft cost 5.
    assert saves(h.end_turn()) == []
    events = h.send("move", h.player("player-ally"), creature="ally", feet=5)
    assert [(e.cost, e.extra) for e in events if isinstance(e, Moved)] == [(5, ())]


def test_spirit_guardians_half_on_a_success_and_once_a_turn() -> None:
    h = fight(goblin(hp=40), where={"gob": "bar"}, level=7)
    cast(h, "hilda", spell="spirit-guardians", slot=4)
    # Entering the hall on its turn: 15 saves, 4d8 = 8 + 8 + 8 + 8: half, 16.
    h.end_turn()
    events = h.rolls(15, 8, 8, 8, 8).send("enter", h.gm, creature="gob", zones=["hall"])
    assert saves(events) == [("gob", "wis", 15, 15, True)]
    assert hurt(events) == [("gob", 16, "radiant")]
    assert len([e for e in events if isinstance(e, ResourceSpent)]) == 1
    # Out and back in on the same turn (the GM moves it): no second save.
    h.send("move_to_zone", h.gm, creature="gob", zone="bar")
    events = h.send("move_to_zone", h.gm, creature="gob", zone="hall")
    assert saves(events) == [] and hurt(events) == []


def test_the_guardians_move_with_their_caster_and_end_with_concentration() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    cast(h, "hilda", spell="spirit-guardians")
    h.send("enter", h.player("player-hilda"), creature="hilda", zones=["bar"])
    assert assets(h, "spell_spirit_guardians") == [("spirit-guardians-hilda", "bar")]
    h.end_turn()
    # The goblin enters the bar on its turn: it saves (a 20) and takes half of 3d8 (3).
    events = h.rolls(20, 1, 1, 1).send("enter", h.gm, creature="gob", zones=["bar"])
    assert hurt(events) == [("gob", 1, "radiant")]
    # Concentration broken: the aura goes.
    events = h.rolls(1).send("damage", creature="hilda", amount=12)
    assert [e.asset for e in events if isinstance(e, AssetRemoved)] == ["spirit-guardians-hilda"]
    assert GUARDIANS not in h.creature("hilda").conditions
    h.assert_replay_matches()


def test_spirit_guardians_refuse_a_target_or_another_zone() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    assert refused(h, "hilda", spell="spirit-guardians", target="gob")[0] == "invalid_params"
    assert refused(h, "hilda", spell="spirit-guardians", zone="yard")[0] == "invalid_params"
    assert assets(h, "spell_spirit_guardians") == []


def test_the_action_details_list_the_zone_spells_with_their_zones() -> None:
    h = fight(goblin(), where={"gob": "yard"})
    me = h.creature("hilda")
    actions = {c.params["spell"]: c.options for c in spell_choices(h.state, me, "action")}
    assert actions["entangle"]["zone"] == ("hall", "bar", "yard")
    assert actions["spirit-guardians"] == {"slot": (3,)}
    bonuses = {c.params["spell"]: c for c in spell_choices(h.state, me, "bonus")}
    weapon = bonuses["spiritual-weapon"]
    assert weapon.options["zone"] == ("hall", "bar", "yard")
    # It strikes one creature of its zone at most; a moonbeam takes none.
    assert weapon.info["most_targets"] == 1 and weapon.info["targets_by_zone"]["yard"] == ["gob"]
    moonbeam = {c.params["spell"]: c for c in spell_choices(h.state, me, "action")}["moonbeam"]
    assert "targets_by_zone" not in moonbeam.info and "most_targets" not in moonbeam.info


# -- the edges -----------------------------------------------------------------------------------


def test_entangle_catches_only_those_there_when_cast_web_frees_one_moved_out() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "bar", "orc": "yard"})
    cast(h.rolls(1), "hilda", spell="entangle", zone="yard", targets=["orc"])
    h.end_turn()
    # The goblin walks into the plants on its turn: no save, only difficult ground.
    events = h.send("enter", h.gm, creature="gob", zones=["yard"])
    assert saves(events) == [] and "restrained" not in h.creature("gob").conditions
    # The orc, held, is moved out of the yard by the GM: the plants no longer hold it.
    events = h.send("move_to_zone", h.gm, creature="orc", zone="bar")
    ended = [e for e in events if isinstance(e, ConditionEffectEnded)]
    assert [(e.creature, e.condition) for e in ended] == [("orc", "restrained")]
    assert "restrained" not in h.creature("orc").conditions


def test_the_weapon_strikes_only_in_its_zone_and_a_new_casting_replaces_it() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "bar"}, level=7)
    refusal = h.refused(
        "cast_bonus",
        h.player("player-hilda"),
        creature="hilda",
        spell="spiritual-weapon",
        zone="yard",
        target="orc",
    )
    assert refusal.code == "out_of_range"
    assert assets(h, "spell_spiritual_weapon") == []
    bonus(h, spell="spiritual-weapon", zone="yard")
    for _ in range(3):
        h.end_turn()
    # Upcast at 4th: 2d8 + 4; the old weapon goes, the new one appears in the bar.
    events = bonus(h.rolls(15, 3, 4), spell="spiritual-weapon", slot=4, target="orc")
    assert [e.asset for e in events if isinstance(e, AssetRemoved)] == ["spiritual-weapon-hilda"]
    assert hurt(events) == [("orc", 11, "force")]
    assert assets(h, "spell_spiritual_weapon") == [("spiritual-weapon-hilda", "bar")]
    assert sum(e.condition == SPIRITUAL_WEAPON for e in h.state.condition_effects.values()) == 1


# -- moonbeam and flaming sphere ----------------------------------------------------------------


def test_moonbeam_burns_who_starts_a_turn_or_enters_and_moves_60_ft_as_an_action() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "bar"})
    events = cast(h, "hilda", spell="moonbeam", zone="yard")
    assert saves(events) == []  # nothing on the cast
    assert assets(h, "spell_moonbeam") == [("moonbeam-hilda", "yard")]
    # The goblin starts its turn in the beam: Con 7 fails against 15; 2d10 = 3 + 9.
    events = h.rolls(7, 3, 9).end_turn()
    assert saves(events) == [("gob", "con", 7, 15, False)]
    assert hurt(events) == [("gob", 12, "radiant")]
    # The orc walks in on its turn: 15 saves, half of 2d10 = 10 + 1: 5.
    h.end_turn()
    events = h.rolls(15, 10, 1).send("enter", h.gm, creature="orc", zones=["yard"])
    assert hurt(events) == [("orc", 5, "radiant")]
    h.end_turn()
    # Hilda's action moves the beam: the far field is 120 ft away, the bar 15.
    refusal = h.refused("move_moonbeam", h.player("player-hilda"), creature="hilda", zone="far")
    assert refusal.code == "out_of_range"
    h.send("move_moonbeam", h.player("player-hilda"), creature="hilda", zone="bar")
    assert assets(h, "spell_moonbeam") == [("moonbeam-hilda", "bar")]
    assert h.state.resources.actions == 0


def test_flaming_sphere_burns_at_the_end_of_a_turn_and_rams_as_a_bonus_action() -> None:
    h = fight(goblin(), goblin("orc"), where={"gob": "yard", "orc": "bar"})
    refusal = h.refused("move_sphere", h.player("player-hilda"), creature="hilda", zone="bar")
    assert refusal.code == "no_such_feature"
    cast(h, "hilda", spell="flaming-sphere", zone="yard")
    assert assets(h, "spell_flaming_sphere") == [("flaming-sphere-hilda", "yard")]
    h.end_turn()
    # The goblin ends its turn by the sphere: Dex 3 fails; 2d6 = 4 + 5 fire.
    events = h.rolls(3, 4, 5).end_turn()
    assert saves(events) == [("gob", "dex", 3, 15, False)]
    assert hurt(events) == [("gob", 9, "fire")]
    h.end_turn()
    # Rolled 15 ft into the bar, it rams the orc: 20 saves, half of 2d6 = 6 + 6: 6.
    events = h.rolls(20, 6, 6).send(
        "move_sphere", h.player("player-hilda"), creature="hilda", zone="bar", target="orc"
    )
    assert hurt(events) == [("orc", 6, "fire")]
    assert assets(h, "spell_flaming_sphere") == [("flaming-sphere-hilda", "bar")]
    assert h.state.resources.bonus_actions == 0
    h.assert_replay_matches()


def test_a_hidden_casters_spell_assets_are_hidden_from_the_players() -> None:
    import attrs

    h = EncounterHarness([attrs.evolve(druid(), hidden=True), goblin()], arena=keep())
    h.start(positions={"hilda": "hall", "gob": "yard"}, initiative=[20, 10])
    cast(h, "hilda", spell="spirit-guardians")
    assert h.state.hidden_assets == ["spirit-guardians-hilda"]
    assert h.state.asset("spirit-guardians-hilda").name == "Spirit guardians"  # type: ignore[union-attr]
    h.send("enter", h.player("player-hilda"), creature="hilda", zones=["bar"])
    assert assets(h, "spell_spirit_guardians") == [("spirit-guardians-hilda", "bar")]
    assert h.state.hidden_assets == ["spirit-guardians-hilda"]
