"""Channel Divinity (issue 31, item 2) with exact outcomes from scripted dice: the
cleric's Turn Undead, Destroy Undead and Preserve Life, the paladin's Turn the Unholy,
and the creature type and challenge rating a stat block's roster creature carries.

Hilda (examples/characters/hilda.json): life cleric 5, Wis 18, spell save DC 15, one
Channel Divinity per short rest. The arena: the hall (30 ft) beside the yard (15 ft),
then the road (30 ft): the yard is within 30 ft of the hall, the road is not.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from arena_fixture import harness
from helpers import make

import zonekeep.plugins.srd as srd_plugin
from zonekeep.sdk import (
    ActionTaken,
    Creature,
    EncounterOptions,
    Healed,
    ResourceSpent,
    SaveMade,
)
from zonekeep.sdk.host import (
    character_creature,
    entry_creatures,
    parse_character,
    state_to_dict,
)
from zonekeep.sdk.testing import EncounterHarness

ROOT = Path(__file__).resolve().parents[1]
HILDA: dict[str, Any] = json.loads(
    (ROOT / "examples" / "characters" / "hilda.json").read_text(encoding="utf-8")
)


def hilda(*, destroy: bool = True, level: int = 5) -> Creature:
    data = copy.deepcopy(HILDA)
    data["classes"][0]["level"] = level
    if not destroy:
        data["traits"] = [t for t in data["traits"] if t["id"] != "destroy-undead"]
    return character_creature(parse_character(data), "hilda", controller="player-hilda")


def stat_block(entry_id: str, cid: str, **overrides: Any) -> Creature:
    entry = next(e for e in srd_plugin.srd_source().entries if e.id == entry_id)
    (creature,) = entry_creatures(entry, id_prefix=cid, overrides=overrides or None)
    return creature


def fight(*creatures: Creature, at: dict[str, str] | None = None) -> EncounterHarness:
    return harness(
        list(creatures),
        {c.id: (at or {}).get(c.id, "hall") for c in creatures},
        [20, *range(10, 10 - len(creatures) + 1, -1)],
        options=EncounterOptions(flanking=False),
    )


def send(h: EncounterHarness, kind: str, **params: Any) -> tuple[Any, ...]:
    return h.send(kind, h.player("player-hilda"), creature="hilda", **params)


def refused(h: EncounterHarness, kind: str, **params: Any) -> tuple[str, str]:
    r = h.refused(kind, h.player("player-hilda"), creature="hilda", **params)
    return r.code, r.message


# -- the creature type and challenge rating ---------------------------------------------------


def test_a_stat_blocks_roster_creature_carries_its_type_and_challenge_rating() -> None:
    zombie = stat_block("zombie", "zombie")
    assert (zombie.type, zombie.challenge) == ("undead", 0.25)
    imp = stat_block("imp", "imp")
    assert (imp.type, imp.challenge) == ("fiend", 1.0)
    me = hilda()
    assert (me.type, me.challenge) == (None, None)  # a sheet names neither
    h = fight(me, zombie)
    snapshot = state_to_dict(h.state)["creatures"]["zombie-1"]
    assert (snapshot["type"], snapshot["challenge"]) == ("undead", 0.25)
    h.assert_replay_matches()


def test_a_player_sees_a_creatures_type_but_not_its_challenge_rating() -> None:
    from zonekeep.server._visibility import sheet_hidden

    shown = sheet_hidden(
        state_to_dict(fight(hilda(), stat_block("ghoul", "ghoul")).state)["creatures"]["ghoul-1"]
    )
    assert shown["type"] == "undead" and shown["challenge"] is None


# -- Turn Undead, Destroy Undead ----------------------------------------------------------------


def test_turn_undead_turns_or_destroys_the_undead_within_30_ft_on_a_failed_wis_save() -> None:
    zombie = stat_block("zombie", "zombie")  # CR 1/4, Wis save +0
    ghoul = stat_block("ghoul", "ghoul")  # CR 1, Wis +0
    far = stat_block("skeleton", "skel")  # on the road: 45 ft away
    imp = stat_block("imp", "imp")  # a fiend: not undead
    h = fight(hilda(), zombie, ghoul, far, imp, at={"ghoul-1": "yard", "skel-1": "road"})
    # The zombie rolls 14 (fails against 15): CR 1/4, destroyed; the ghoul 9: turned.
    events = send(h.rolls(14, 9), "turn_undead")
    assert ActionTaken("hilda", "turn_undead", "action") in events
    assert ResourceSpent("hilda", "channel-divinity", 0) in events
    saves = [(e.creature, e.ability, e.dc, e.success) for e in events if isinstance(e, SaveMade)]
    assert saves == [("zombie-1", "wis", 15, False), ("ghoul-1", "wis", 15, False)]
    assert "defeated" in h.creature("zombie-1").conditions
    assert "turned" in h.creature("ghoul-1").conditions
    assert not h.state.has_reaction("ghoul-1")
    assert "turned" not in h.creature("skel-1").conditions
    assert "turned" not in h.creature("imp-1").conditions
    code, _ = refused(h, "turn_undead")
    assert code == "no_uses_left"  # (checked before the spent action)
    h.assert_replay_matches()


def test_a_successful_save_resists_and_without_destroy_undead_a_zombie_is_only_turned() -> None:
    h = fight(hilda(destroy=False), stat_block("zombie", "zombie"), stat_block("zombie", "zed"))
    send(h.rolls(3, 15), "turn_undead")
    assert "turned" in h.creature("zombie-1").conditions
    assert "defeated" not in h.creature("zombie-1").conditions
    assert "turned" not in h.creature("zed-1").conditions  # 15 meets the DC


def test_a_turned_undead_only_dashes_or_dodges_has_no_reaction_and_damage_ends_it() -> None:
    ghoul = stat_block("ghoul", "ghoul")
    h = fight(hilda(), ghoul, make("ally", hp=30, controller="player-ally"))
    send(h.rolls(2), "turn_undead")
    h.end_turn()  # the ghoul's turn
    assert h.state.active == "ghoul-1" and not h.state.has_reaction("ghoul-1")
    code = h.refused("attack", creature="ghoul-1", target="hilda").code
    assert code == "invalid_params"
    h.send("dash", creature="ghoul-1")
    h.end_turn()  # the ally's turn: a hit ends the turning
    h.rolls(19, 3).send("attack", h.player("player-ally"), creature="ally", target="ghoul-1")
    assert "turned" not in h.creature("ghoul-1").conditions
    h.assert_replay_matches()


def test_turning_lasts_a_minute_and_turn_undead_needs_the_feature_and_a_use() -> None:
    h = fight(hilda(), stat_block("ghoul", "ghoul"))
    send(h.rolls(2), "turn_undead")
    for _ in range(2 * 9):
        h.end_turn()
    assert "turned" in h.creature("ghoul-1").conditions  # round 10
    h.end_turn()
    h.end_turn()
    assert "turned" not in h.creature("ghoul-1").conditions
    assert refused(h, "turn_undead")[0] == "no_uses_left"
    plain = copy.deepcopy(HILDA)
    plain["actions"] = []
    h = fight(character_creature(parse_character(plain), "hilda", controller="player-hilda"))
    assert refused(h, "turn_undead")[0] == "no_such_feature"


# -- Turn the Unholy --------------------------------------------------------------------------------


def paladin() -> Creature:
    """Brenna-like devotion paladin 3: Cha 16, proficiency +2: spell DC 13."""
    data: dict[str, Any] = {
        "name": "Dara",
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": "paladin", "level": 3, "subclass": "devotion"}],
        "ability_scores": {"str": 16, "dex": 10, "con": 14, "int": 8, "wis": 10, "cha": 16},
        "hp": 28,
        "ac": 18,
        "save_proficiencies": ["wis", "cha"],
        "spellcasting_ability": "cha",
        "spell_slots": {"1": 3},
        "resources": [
            {"id": "channel-divinity", "name": "Channel Divinity", "count": 1, "per": "short_rest"}
        ],
        "actions": [
            {
                "id": "turn-the-unholy",
                "name": "Channel Divinity: Turn the Unholy",
                "kind": "action",
                "text": "Fiends and undead within 30 ft save or are turned.",
            }
        ],
    }
    return character_creature(parse_character(data), "dara", controller="player-dara")


def test_turn_the_unholy_turns_fiends_and_undead_and_magic_resistance_counts() -> None:
    h = fight(
        paladin(), stat_block("imp", "imp"), stat_block("zombie", "zombie"), make("gob", "foes")
    )
    assert h.creature("dara").spell_dc == 13
    # The imp's Magic Resistance: advantage (12, 5: keeps 12 + Wis 1 = 13, saved);
    # the zombie 4: turned, never destroyed (a paladin has no Destroy Undead).
    events = h.rolls(12, 5, 4).send("turn_the_unholy", h.player("player-dara"), creature="dara")
    saves = {e.creature: e.success for e in events if isinstance(e, SaveMade)}
    assert saves == {"imp-1": True, "zombie-1": False}
    assert "turned" in h.creature("zombie-1").conditions
    assert "turned" not in h.creature("imp-1").conditions
    assert "defeated" not in h.creature("zombie-1").conditions


# -- Preserve Life ---------------------------------------------------------------------------------


def hurt(cid: str, hp: int, zone: str = "hall") -> Creature:
    return make(cid, "party", hp=hp, controller=f"player-{cid}")


def test_preserve_life_shares_25_hit_points_none_above_half_its_maximum() -> None:
    h = fight(hilda(), hurt("kai", 40), hurt("mo", 20), at={"mo": "yard"})
    h.send("damage", creature="kai", amount=35)  # 5 of 40: up to 20
    h.send("damage", creature="mo", amount=18)  # 2 of 20: up to 10
    events = send(h, "preserve_life", heal={"kai": 15, "mo": 8})
    assert ResourceSpent("hilda", "channel-divinity", 0) in events
    assert [(e.creature, e.amount, e.hp) for e in events if isinstance(e, Healed)] == [
        ("kai", 15, 20),
        ("mo", 8, 10),
    ]
    h.assert_replay_matches()


@pytest.mark.parametrize(
    ("heal", "code"),
    [
        ({"kai": 16}, "invalid_params"),  # above half its maximum (20)
        ({"kai": 15, "mo": 8, "lu": 3}, "invalid_params"),  # 26: more than 25
        ({"far": 5}, "out_of_range"),  # on the road, 45 ft away
        ({"zombie-1": 5}, "invalid_target"),  # undead
        ({"kai": 0}, "invalid_params"),
        ({"nobody": 3}, "unknown_creature"),
        ({}, "invalid_params"),
    ],
)
def test_preserve_life_refuses_a_bad_split_and_changes_nothing(
    heal: dict[str, int], code: str
) -> None:
    h = fight(
        hilda(),
        hurt("kai", 40),
        hurt("mo", 20),
        hurt("lu", 20),
        hurt("far", 20),
        stat_block("zombie", "zombie"),
        at={"far": "road"},
    )
    for cid, amount in (("kai", 35), ("mo", 18), ("lu", 18), ("far", 18)):
        h.send("damage", creature=cid, amount=amount)
    assert refused(h, "preserve_life", heal=heal)[0] == code
    assert h.creature("hilda").resources["channel-divinity"] == 1
