"""The class features that add to rolls (issue 31), each tested from the SRD 5.1 text with
characters built from sheets and scripted dice:

- Bardic Inspiration (bard 1): a bonus action gives another creature within 60 feet
  that can hear the bard a d6 (d8 from 5th level), added once to an attack roll,
  ability check or saving throw.
- Sacred Weapon (paladin, Oath of Devotion 3, Channel Divinity): for a minute, the
  Charisma modifier (at least +1) on weapon attack rolls; the weapon is magical.
- Fighting Style (fighter 1, paladin 2, ranger 2): Archery, +2 to ranged weapon attack
  rolls; Dueling, +2 damage with a melee weapon in one hand; Protection, a reaction giving
  disadvantage to an attack on a creature beside it.
- Dark One's Blessing (warlock, the Fiend 1): reducing a hostile creature to 0 hit
  points gives Charisma modifier + warlock level temporary hit points (the SDK's
  temporary hit points: damage takes them first, the larger stay, healing leaves them).

Str 16 and Dex 16 (+3), proficiency +2 at 3rd level: longsword +5 (1d8+3 slashing),
longbow +5 (1d8+3 piercing). Goblins: AC 12, 20 hit points.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make
from test_spells import keep

from zonekeep.plugins.classes._bonuses import (
    DARK_ONES_BLESSING,
    INSPIRATION_DIE,
    PROTECTION,
    SACRED_WEAPON,
    fighting_styles,
)
from zonekeep.sdk import (
    ActionTaken,
    AttackMade,
    CheckRolled,
    ConditionEffectApplied,
    Creature,
    Damaged,
    EncounterOptions,
    Refusal,
    ResourceRestored,
    ResourceSpent,
    TempHpChanged,
)
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.sdk.testing import EncounterHarness


def sheet(cid: str, cls: str, sub: str, **extra: Any) -> Creature:
    data: dict[str, Any] = {
        "name": cid.capitalize(),
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": cls, "level": 3, "subclass": sub}],
        "ability_scores": {"str": 16, "dex": 16, "con": 12, "int": 10, "wis": 10, "cha": 16},
        "hp": 30,
        "ac": 15,
        "weapons": [{"name": "longsword"}, {"name": "longbow"}],
        **extra,
    }
    return character_creature(parse_character(data), cid, controller=f"player-{cid}")


def bard(level: int = 3) -> Creature:
    inspiration = {
        "id": "bardic-inspiration",
        "name": "Bardic Inspiration",
        "kind": "bonus_action",
        "text": "A die.",
        "uses": {"per": "long_rest", "count": 3},
    }
    me = sheet("lyra", "bard", "lore", actions=[inspiration])
    if level != 3:
        data: dict[str, Any] = {
            "name": "Lyra",
            "size": "Medium",
            "speeds": {"walk": 30},
            "classes": [{"name": "bard", "level": level, "subclass": "lore"}],
            "ability_scores": {"str": 10, "dex": 14, "con": 12, "int": 10, "wis": 10, "cha": 16},
            "hp": 30,
            "ac": 13,
            "actions": [inspiration],
        }
        me = character_creature(parse_character(data), "lyra", controller="player-lyra")
    return me


def paladin() -> Creature:
    weapon = {"id": SACRED_WEAPON, "name": "Sacred Weapon", "kind": "action", "text": "+Cha."}
    divinity = {"id": "channel-divinity", "name": "Channel Divinity", "count": 1}
    return sheet(
        "aldric",
        "paladin",
        "devotion",
        actions=[weapon],
        resources=[divinity | {"per": "short_rest"}],
    )


def fighter(style: dict[str, Any]) -> Creature:
    return sheet("kael", "fighter", "champion", traits=[style])


def fight(where: dict[str, str], *creatures: Creature) -> EncounterHarness:
    """The creatures in ``where``'s zones, in this order of initiative; flanking off."""
    h = EncounterHarness(list(creatures), arena=keep(), options=EncounterOptions(flanking=False))
    h.start(positions=where, initiative=list(range(20, 20 - len(creatures), -1)))
    return h


def rolled(events: tuple[object, ...]) -> list[tuple[int, int, tuple[str, ...]]]:
    return [
        (e.roll.total, e.roll.modifier, e.roll.sources) for e in events if isinstance(e, AttackMade)
    ]


def damage(events: tuple[object, ...]) -> list[int]:
    return [e.amount for e in events if isinstance(e, Damaged)]


# -- Bardic Inspiration ----------------------------------------------------------------------


def test_bardic_inspiration_gives_a_d6_added_once_to_the_next_attack_roll() -> None:
    ally = make("kael", hp=30)
    h = fight({"lyra": "hall", "kael": "yard", "gob": "yard"}, bard(), ally, make("gob", "foes"))
    events = h.send("bardic_inspiration", creature="lyra", target="kael")
    assert ResourceSpent("lyra", "bardic-inspiration", 2) in events
    assert ResourceRestored("kael", INSPIRATION_DIE, 6, "bardic-inspiration") in events
    h.end_turn()
    # Kael's blade: 5 + 4, then the d6: 3 -> 12 against AC 12, a hit; the die is spent.
    events = h.rolls(5, 3, 2).send("attack", creature="kael", target="gob")
    assert rolled(events) == [(12, 7, ("bonus:bardic inspiration d6=3",))]
    assert ResourceSpent("kael", INSPIRATION_DIE, 0) in events
    assert damage(events) == [4]
    # The next roll has no die.
    h.end_turn()
    h.end_turn()
    h.end_turn()
    events = h.rolls(5).send("attack", creature="kael", target="gob")
    assert rolled(events) == [(9, 4, ())]
    h.assert_replay_matches()


def test_an_inspiration_die_goes_on_a_saving_throw_and_a_bard_of_5th_level_gives_a_d8() -> None:
    ally = make("kael", hp=30)
    h = fight({"lyra": "hall", "kael": "hall"}, bard(level=5), ally)
    h.send("bardic_inspiration", creature="lyra", target="kael")
    assert h.creature("kael").resources[INSPIRATION_DIE] == 8
    events = h.rolls(10, 7).send("call_check", creatures=["kael"], ability="dex", save=True)
    (save,) = [e.roll for e in events if isinstance(e, CheckRolled) and e.save]
    assert (save.total, save.sources) == (17, ("bonus:bardic inspiration d8=7",))
    assert h.creature("kael").resources[INSPIRATION_DIE] == 0


def test_bardic_inspiration_is_refused_on_itself_out_of_range_twice_or_without_uses() -> None:
    where = {"lyra": "hall", "kael": "hall", "far": "far"}
    h = fight(where, bard(), make("kael"), make("far"))
    assert h.refused("bardic_inspiration", creature="lyra", target="lyra").code == "invalid_target"
    assert h.refused("bardic_inspiration", creature="lyra", target="far").code == "out_of_range"
    h.send("bardic_inspiration", creature="lyra", target="kael")
    # Its bonus action is spent this turn; on the next, Kael still holds its die.
    assert h.refused("bardic_inspiration", creature="lyra", target="kael").code in (
        "no_bonus_action_left",
        "invalid_target",
    )
    spent = bard()
    spent.resources["bardic-inspiration"] = 0
    h = fight({"lyra": "hall", "kael": "hall"}, spent, make("kael"))
    assert h.refused("bardic_inspiration", creature="lyra", target="kael").code == "no_uses_left"
    deaf = make("kael", conditions=["deafened"])
    h = fight({"lyra": "hall", "kael": "hall"}, bard(), deaf)
    assert h.refused("bardic_inspiration", creature="lyra", target="kael").code == "invalid_target"


def test_a_creature_holds_one_inspiration_die_at_a_time() -> None:
    held = make("kael")
    held.resources[INSPIRATION_DIE] = 6
    h = fight({"lyra": "hall", "kael": "hall"}, bard(), held)
    refusal = h.refused("bardic_inspiration", creature="lyra", target="kael")
    assert refusal.code == "invalid_target" and "already holds" in refusal.message


# -- Sacred Weapon ---------------------------------------------------------------------------


def test_sacred_weapon_adds_the_charisma_modifier_and_makes_the_weapon_magical() -> None:
    tough = make("gob", "foes", hp=30, damage_resistances_nonmagical=["slashing"])
    h = fight({"aldric": "hall", "gob": "hall"}, paladin(), tough)
    events = h.send("sacred_weapon", creature="aldric")
    assert ResourceSpent("aldric", "channel-divinity", 0) in events
    applied = [e for e in events if isinstance(e, ConditionEffectApplied)]
    assert [(e.effect.condition, e.effect.rounds) for e in applied] == [(SACRED_WEAPON, 10)]
    h.end_turn()
    h.end_turn()
    # Longsword +5, and +3: 4 + 8 = 12 hits AC 12; 6 + 3 = 9 slashing, not halved (magical).
    events = h.rolls(4, 6).send("attack", creature="aldric", target="gob", attack="longsword")
    assert rolled(events) == [(12, 8, ("bonus:sacred weapon +3",))]
    assert damage(events) == [9]
    # A second use: none left.
    assert h.refused("sacred_weapon", creature="aldric").code == "no_uses_left"


def test_without_sacred_weapon_the_roll_and_the_resistance_are_as_usual() -> None:
    tough = make("gob", "foes", hp=30, damage_resistances_nonmagical=["slashing"])
    h = fight({"aldric": "hall", "gob": "hall"}, paladin(), tough)
    events = h.rolls(7, 6).send("attack", creature="aldric", target="gob", attack="longsword")
    assert rolled(events) == [(12, 5, ())]
    assert damage(events) == [4]


# -- Fighting Style --------------------------------------------------------------------------


def test_archery_adds_2_to_ranged_weapon_attack_rolls_only() -> None:
    style = {"id": "fighting-style", "name": "Fighting Style", "params": {"style": "archery"}}
    h = fight({"kael": "hall", "gob": "bar"}, fighter(style), make("gob", "foes", ac=13))
    # Longbow +5, +2: 6 + 7 = 13 hits AC 13.
    events = h.rolls(6, 1).send("attack", creature="kael", target="gob", attack="longbow")
    assert rolled(events) == [(13, 7, ("bonus:archery +2",))]
    assert fighting_styles(h.creature("kael")) == {"archery"}


def test_archery_does_not_touch_a_melee_attack() -> None:
    style = {"id": "fighting-style-archery", "name": "Fighting Style: Archery"}
    h = fight({"kael": "hall", "gob": "hall"}, fighter(style), make("gob", "foes", ac=13))
    events = h.rolls(6).send("attack", creature="kael", target="gob", attack="longsword")
    assert rolled(events) == [(11, 5, ())]


@pytest.mark.parametrize(
    ("style", "expected"),
    [({"style": "dueling"}, [10]), ({"style": "defense"}, [8])],
)
def test_dueling_adds_2_to_a_one_handed_melee_weapons_damage(
    style: dict[str, Any], expected: list[int]
) -> None:
    trait = {"id": "fighting-style", "name": "Fighting Style", "params": style}
    h = fight({"kael": "hall", "gob": "hall"}, fighter(trait), make("gob", "foes", hp=30))
    # 5 + 3 = 8, and +2 with Dueling.
    events = h.rolls(15, 5).send("attack", creature="kael", target="gob", attack="longsword")
    assert damage(events) == expected


def test_a_refused_command_changes_nothing() -> None:
    h = fight({"kael": "hall", "gob": "hall"}, make("kael"), make("gob", "foes"))
    with pytest.raises(Refusal) as caught:
        h.send("sacred_weapon", creature="kael")
    assert caught.value.code == "no_such_feature"
    assert h.refused("bardic_inspiration", creature="kael", target="gob").code == "no_such_feature"


def test_protection_gives_disadvantage_to_an_attack_on_an_adjacent_ally() -> None:
    style = {"id": "fighting-style", "name": "Fighting Style", "params": {"style": "protection"}}
    where = {"kael": "hall", "pip": "hall", "gob": "hall"}
    h = fight(where, fighter(style), make("pip", ac=12, hp=20), make("gob", "foes"))
    h.send("move_adjacent", creature="kael", ally="pip")
    h.end_turn()
    h.end_turn()
    # The goblin attacks Pip, beside Kael: Kael's player is asked before the roll.
    events = h.send("attack", creature="gob", target="pip", attack="blade")
    assert rolled(events) == []
    offered = h.decision(PROTECTION)
    assert (offered.controller, offered.creature, offered.options) == (
        "player-kael",
        "kael",
        (PROTECTION, "decline"),
    )
    # Disadvantage: 15 and 3, the 3 kept: 7 misses AC 12.
    events = h.rolls(15, 3).decide(PROTECTION, h.player("player-kael"))
    assert ActionTaken("kael", PROTECTION, "reaction") in events
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    assert (attack.roll.total, attack.roll.advantage, attack.hit) == (7, "disadvantage", False)
    assert "disadvantage:protection" in attack.roll.sources
    h.assert_replay_matches()


def test_protection_is_not_offered_for_a_creature_not_beside_it_nor_for_itself() -> None:
    style = {"id": "fighting-style", "name": "Fighting Style", "params": {"style": "protection"}}
    where = {"kael": "hall", "pip": "hall", "gob": "hall"}
    h = fight(where, fighter(style), make("pip", ac=12, hp=20), make("gob", "foes"))
    h.end_turn()
    h.end_turn()
    events = h.rolls(15, 1).send("attack", creature="gob", target="pip", attack="blade")
    assert rolled(events) == [(19, 4, ())] and h.state.pending == []
    # Kael itself attacked (next round): Protection guards another creature only.
    for _ in range(3):
        h.end_turn()
    events = h.rolls(5).send("attack", creature="gob", target="kael", attack="blade")
    assert rolled(events) == [(9, 4, ())] and h.state.pending == []


# -- Temporary hit points and Dark One's Blessing ---------------------------------------------


def warlock() -> Creature:
    blessing = {"id": DARK_ONES_BLESSING, "name": "Dark One's Blessing", "text": "Temp HP."}
    return sheet("vex", "warlock", "fiend", traits=[blessing])


def temp(events: tuple[object, ...]) -> list[tuple[str, int | None, str]]:
    return [(e.creature, e.temp_hp, e.source) for e in events if isinstance(e, TempHpChanged)]


def test_dark_ones_blessing_gives_cha_plus_level_temp_hp_for_a_kill() -> None:
    h = fight({"vex": "hall", "gob": "hall"}, warlock(), make("gob", "foes", hp=5))
    # Longsword +5: 10 + 5 hits; 4 + 3 = 7 drops the goblin (5): 3 + 3 temporary hit points.
    events = h.rolls(10, 4).send("attack", creature="vex", target="gob", attack="longsword")
    assert damage(events) == [7]
    assert temp(events) == [("vex", 6, DARK_ONES_BLESSING)]
    assert h.creature("vex").temp_hp == 6
    h.assert_replay_matches()


def test_temp_hp_take_the_damage_first_and_healing_does_not_restore_them() -> None:
    vex = warlock()
    vex.temp_hp = 6
    h = fight({"gob": "hall", "vex": "hall"}, make("gob", "foes"), vex)
    while h.state.active != "gob":
        h.end_turn()
    # The goblin's blade: 15 + 4 hits; 2 + 2 = 4, all taken by the temporary hit points.
    events = h.rolls(15, 2).send("attack", creature="gob", target="vex", attack="blade")
    assert temp(events) == [("vex", 2, "damage")]
    assert [(e.amount, e.hp) for e in events if isinstance(e, Damaged)] == [(4, 30)]
    h.end_turn()
    h.end_turn()
    # 6 + 2 = 8 more: 2 temporary, 6 from the hit points.
    events = h.rolls(15, 6).send("attack", creature="gob", target="vex", attack="blade")
    assert temp(events) == [("vex", 0, "damage")]
    assert [(e.amount, e.hp) for e in events if isinstance(e, Damaged)] == [(8, 24)]
    events = h.send("heal", creature="vex", amount=3)
    assert temp(events) == [] and h.creature("vex").temp_hp == 0
    h.assert_replay_matches()


def test_the_larger_temp_hp_stay_and_a_creature_at_0_or_an_ally_gives_none() -> None:
    vex = warlock()
    vex.temp_hp = 10
    h = fight({"vex": "hall", "gob": "hall"}, vex, make("gob", "foes", hp=5))
    events = h.rolls(10, 4).send("attack", creature="vex", target="gob", attack="longsword")
    assert damage(events) == [7] and temp(events) == [] and h.creature("vex").temp_hp == 10
    # An ally dropped (the GM's doing): no blessing; nor for damage by another.
    h = fight({"vex": "hall", "pal": "hall"}, warlock(), make("pal", hp=5))
    events = h.rolls(10, 4).send("attack", creature="vex", target="pal", attack="longsword")
    assert damage(events) == [7] and temp(events) == []
    h = fight({"vex": "hall", "gob": "hall"}, warlock(), make("gob", "foes", hp=5))
    events = h.send("damage", creature="gob", amount=9)
    assert temp(events) == [] and h.creature("vex").temp_hp == 0


def test_a_smaller_gain_is_replaced_by_a_larger() -> None:
    vex = warlock()
    vex.temp_hp = 2
    h = fight({"vex": "hall", "gob": "hall"}, vex, make("gob", "foes", hp=5))
    events = h.rolls(10, 4).send("attack", creature="vex", target="gob", attack="longsword")
    assert temp(events) == [("vex", 6, DARK_ONES_BLESSING)]


def test_the_gm_sets_temp_hp_with_an_override_and_never_below_0() -> None:
    h = fight({"vex": "hall", "gob": "hall"}, warlock(), make("gob", "foes"))
    h.send("override", creature="vex", field="temp_hp", value=4)
    assert h.creature("vex").temp_hp == 4
    h.send("override", creature="vex", field="temp_hp", value=0)
    assert h.creature("vex").temp_hp == 0
    assert h.refused("override", creature="vex", field="temp_hp", value=-1).code == (
        "invalid_params"
    )
