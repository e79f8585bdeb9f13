"""Serialization: every event type round-trips; sizes travel by name; rosters are validated."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from zonekeep.sdk import (
    ActionGranted,
    Asset,
    AssetChanged,
    AssetPlaced,
    AssetRemoved,
    Attack,
    ChatSent,
    CheckRolled,
    ConditionPrevented,
    Creature,
    DiceCommitted,
    DiceContributed,
    DiceDrawn,
    DiceRevealed,
    DiceRolled,
    Event,
    MultiattackUsed,
    PluginDisabled,
    PluginErrorRecorded,
    PluginOverran,
    RechargeRolled,
    ResourceRestored,
    ResourceSpent,
    Rewound,
    RollRecord,
    SequenceItem,
    Size,
    TempHpChanged,
)
from zonekeep.sdk._serial import (
    creature_from_dict,
    creature_to_dict,
    event_from_dict,
    event_to_dict,
    state_to_dict,
)
from zonekeep.sdk._state import replay, replay_steps
from zonekeep.sdk.host import EVENT_TYPES, commitment
from zonekeep.sdk.testing import EncounterHarness

#: Event types built by hand because no command of the built-in rules produces them.
#: Keep it short: only types that cannot be reached by playing the engine belong here.
#: (``rewound`` is written by the server when the GM rewinds, not by a rule.)
HAND_MADE: dict[str, Event] = {"rewound": Rewound(to_seq=3, by="gm")}
#: (``plugin_error`` is recorded only when a plugin's hook fails.)
HAND_MADE["plugin_error"] = PluginErrorRecorded(
    "zonekeep-hazards", "zonekeep_roll_modifiers", "ZeroDivisionError('division by zero')"
)
#: (``plugin_overran`` and ``plugin_disabled`` only when a plugin keeps blocking.)
HAND_MADE["plugin_overran"] = PluginOverran("zonekeep-hazards", "zonekeep_turn_started", 3012, 250)
HAND_MADE["plugin_disabled"] = PluginDisabled(
    "zonekeep-hazards", "It took longer than 250 ms 3 times."
)
#: (The dice events are the server's, around the rules' events: SPEC.md "Dice".)
HAND_MADE["dice_committed"] = DiceCommitted("seeded", commitment("table-7"), "table-7")
HAND_MADE["dice_contributed"] = DiceContributed("alice", "lucky-socks")
HAND_MADE["dice_revealed"] = DiceRevealed("ab" * 32, commitment("ab" * 32), "rotated")
HAND_MADE["dice_drawn"] = DiceDrawn(((0, 6, 3), (1, 20, 17)))
#: (The asset events come from plugins only: ``place_asset`` and ``change_asset``. Like
#: the features' events below, they name played()'s zones and creatures: test_node_fold.py
#: folds them after its events.)
HAND_MADE["asset_placed"] = AssetPlaced(
    Asset("web", "Webs", "terrain", "field", tags=("web",), data={"dc": 12}), True, "gm"
)
HAND_MADE["asset_changed"] = AssetChanged("web", {"dc": 14}, False)
HAND_MADE["asset_removed"] = AssetRemoved("web", "burned", hidden=True)
#: (The table's free rolls and chat are the server's too: the ``roll`` and ``chat`` requests.)
HAND_MADE["dice_rolled"] = DiceRolled(
    "alice", RollRecord("2d6+1", (3, 5), (3, 5), 1, 9, draws=((4, 6), (5, 6))), "Luck", True
)
HAND_MADE["chat_sent"] = ChatSent("alice", "Is the door locked?", "gm")
#: (``condition_prevented`` only when a rule gives a creature a condition it is immune to.)
HAND_MADE["condition_prevented"] = ConditionPrevented("gob", "poisoned", "Stench")
#: (The creature features' events are played in tests/test_features_rules.py, with
#: creatures that have features; here, each as the log stores it.)
HAND_MADE["check_rolled"] = CheckRolled(
    "aria", "wis", RollRecord("d20+5", (10,), (10,), 5, 15), "perception", 13, True, False, "gm"
)
HAND_MADE["action_granted"] = ActionGranted("aria", "action", "action-surge")
HAND_MADE["resource_spent"] = ResourceSpent("ogre", "breath", 0)
HAND_MADE["resource_restored"] = ResourceRestored("ogre", "gm-howl", 1, "turn")
HAND_MADE["recharge_rolled"] = RechargeRolled(
    "ogre", "breath", RollRecord("d6", (5,), (5,), 0, 5), 5, True
)
HAND_MADE["temp_hp_changed"] = TempHpChanged("aria", 5, "dark-ones-blessing")
HAND_MADE["multiattack_used"] = MultiattackUsed(
    "ogre", "Multiattack", (SequenceItem("scimitar", True),), SequenceItem("scimitar")
)


def roster() -> list[Creature]:
    blade = Attack("blade", "melee", 5, "1d6+2", "slashing")
    bow = Attack("bow", "ranged", 4, "1d8", "piercing", reach=0, range=80, long_range=320)
    return [
        Creature(
            "aria",
            "Aria",
            "party",
            controller="alice",
            dex_mod=3,
            hp=12,
            max_hp=12,
            attacks=[blade, bow],
            skills={"acrobatics": 5},
            saves={"dex": 5},
        ),
        Creature("bram", "Bram", "party", controller="alice", dex_mod=1, attacks=[blade]),
        Creature(
            "g1", "Goblin 1", "goblins", dex_mod=1, hp=4, max_hp=4, group="gobs", attacks=[blade]
        ),
        Creature(
            "g2", "Goblin 2", "goblins", dex_mod=1, hp=4, max_hp=4, group="gobs", attacks=[blade]
        ),
        Creature(
            "ogre",
            "Ogre",
            "goblins",
            dex_mod=1,
            size=Size.LARGE,
            hp=30,
            max_hp=30,
            speeds={"walk": 40, "climb": 20},
            attacks=[blade],
        ),
    ]


@cache
def played() -> tuple[Event, ...]:
    """A short encounter that produces every event type the built-in rules know."""
    h = EncounterHarness(roster(), zones=("field", "ridge"))
    alice = h.player("alice")
    h.send("set_surprise", surprised=["ogre"])
    h.send(
        "place",
        positions={"aria": "field", "bram": "field", "g1": "field", "g2": "field", "ogre": "ridge"},
    )
    # aria 15+3; bram, gobs and ogre all 10+1: PC against NPCs with equal Dexterity
    # modifiers -> a roll-off between alice (5) and the GM (12), then the GM orders
    # its two tied slots.
    h.rolls(15, 10, 10, 10, 5, 12)
    h.send("roll_initiative")
    decision = h.state.pending[0]
    h.send("decide", decision=decision.id, choice=["ogre", "gobs"])
    assert h.state.active == "aria"
    # A timed condition: it counts down at the end of round 1 and the GM ends it in round 2.
    h.send("apply_effect", creature="ogre", condition="hexed", rounds=3, source="Hex")

    # Round 1. Aria moves, drops prone, stands, crits a goblin and opens a door.
    h.send("move", alice, creature="aria", feet=10)
    h.send("drop_prone", alice, creature="aria")
    h.send("stand", alice, creature="aria")
    h.rolls(20, 3, 4)
    h.send("attack", alice, creature="aria", target="g1")
    assert "defeated" in h.creature("g1").conditions
    h.send("interact", alice, creature="aria", object="door")
    h.send("end_turn", alice, creature="aria")
    assert h.state.active == "ogre"  # surprised: it can only end its turn
    h.end_turn()
    assert h.state.active == "g2"  # g1 is defeated and skipped
    h.send("disengage", creature="g2")
    h.end_turn()
    assert h.state.active == "bram"
    h.send("communicate", alice, creature="bram", text="Hold the line!")
    h.send("ready", alice, creature="bram", target="g2", trigger="it moves")
    h.send("end_turn", alice, creature="bram")

    # Round 2.
    assert h.state.round == 2
    assert h.state.active == "aria"
    h.rolls(2, 2)  # two against one: the goblin is flanked
    h.send("release_readied", alice, creature="bram")
    h.send("dodge", alice, creature="aria")
    h.send("end_turn", alice, creature="aria")
    h.send("dash", creature="ogre")
    h.send("move", creature="ogre", feet=20, mode="climb")
    h.rolls(9)
    h.send(
        "add_creature",
        creature={"id": "wolf", "name": "Wolf", "side": "goblins", "dex_mod": 2, "zone": "ridge"},
    )
    h.send("set_group_order", group="gobs", members=["g2", "g1"])
    h.send("end_effect_of", effect=next(iter(h.state.condition_effects)))
    h.send("add_note", text="The ogre fears fire.", hidden=True)
    h.send("remove_note", note="n1")
    h.send("add_hazard", id="lava", name="Rising lava", description="The floor melts.")
    h.send("remove_hazard", id="lava")
    h.send("override", creature="aria", field="hp", value=3)
    h.send("heal", creature="aria", amount=4)
    h.send("continue_encounter")
    h.send("end_encounter", reason="the goblins flee")
    h.assert_replay_matches()
    return tuple(h.events)


@cache
def played_arena() -> tuple[Event, ...]:
    """A fight on the test arena that produces every arena event type."""
    from arena_fixture import harness
    from helpers import make

    aria = make("aria", speed=60, skills={"acrobatics": 9}, spell_dc=14)
    bram = make("bram", skills={"athletics": 5})
    creatures = [aria, bram, make("gob", "foes", saves={"dex": 1}), make("orc", "foes")]
    h = harness(creatures, {c.id: "hall" for c in creatures}, [20, 10, 9, 8])
    h.rolls(2).send("attack", creature="aria", target="gob")  # two against two: no flank
    h.send("move_adjacent", creature="aria", ally="bram")  # engages nothing new
    h.send("override", creature="bram", field="side", value="rebels")  # ends the adjacency
    h.send("override", creature="bram", field="side", value="party")
    h.rolls(15).send("withdraw", creature="aria", target="gob", tumble=True)  # 24 vs 10
    h.send("take_position", creature="aria", asset="table")
    h.send("end_turn", creature="aria")
    h.rolls(15, 3).send("shove", creature="bram", target="orc", into="gob")
    h.send("end_turn", creature="bram")
    h.send("end_turn", creature="gob")
    h.send("end_turn", creature="orc")
    h.send("sprint", creature="aria")
    h.send("enter", creature="aria", zones=["yard", "road"])
    h.send("end_turn", creature="aria")
    h.rolls(3, 2, 2).send("force", forcer="aria", creature="gob", asset="spikes")
    h.send("move_to_zone", creature="aria", zone="hall")
    h.send(
        "area_effect",
        creature="bram",
        zone="hall",
        shape="cube",
        size=10,
        range=0,
        targets=["gob", "orc"],
        name="Cloud",
        ongoing=True,
    )
    h.send("end_effect", asset=next(iter(h.state.effects)))
    h.rolls(4).send("damage_zone", zone="hall", damage="1d6", damage_type="fire")
    h.assert_replay_matches()
    return tuple(h.events)


def first_of_each_type() -> dict[str, Event]:
    found: dict[str, Event] = dict(HAND_MADE)
    for event in (*played(), *played_arena()):
        found.setdefault(event.type, event)
    return found


def roundtrip(event: Event) -> Event:
    data = event_to_dict(event)
    assert data["type"] == event.type
    return event_from_dict(json.loads(json.dumps(data)))


def test_every_event_type_is_covered() -> None:
    missing = sorted(set(EVENT_TYPES) - set(first_of_each_type()))
    assert missing == [], f"event types neither played nor built by hand: {missing}"


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_event_roundtrips(name: str) -> None:
    event = first_of_each_type().get(name)
    if event is None:
        pytest.fail(f"no {name!r} event was played or built by hand")
    assert type(event) is EVENT_TYPES[name]
    back = roundtrip(event)
    assert type(back) is type(event)
    assert back == event


def test_every_played_event_roundtrips_and_replays() -> None:
    events = played()
    dumped = json.dumps([event_to_dict(e) for e in events])
    loaded = [event_from_dict(d) for d in json.loads(dumped)]
    assert loaded == list(events)
    assert state_to_dict(replay(loaded)) == state_to_dict(replay(events))


def test_played_encounter_carries_nested_data() -> None:
    # The round trips above are only meaningful if nested data was really there.
    events = {e.type: e for e in played()}
    rolled = event_to_dict(events["initiative_rolled"])
    # The harness counts the dice as the server does: each die names its counter.
    assert rolled["rolloffs"] == [
        {"contenders": ["alice", "gm"], "rolls": [5, 12], "draws": [(4, 20), (5, 20)]}
    ]
    assert rolled["entries"][0]["roll"]["kept"] == [15]
    attack = event_to_dict(next(e for e in played() if e.type == "attack_made"))
    assert attack["critical"] is True
    added = event_to_dict(events["creature_added"])
    assert added["creature"]["id"] == "wolf"
    assert added["entry"]["slot"] == "wolf"


def test_event_from_dict_rejects_unknown_type() -> None:
    with pytest.raises(ValueError, match="unknown event type 'no_such_event'"):
        event_from_dict({"type": "no_such_event"})
    with pytest.raises(ValueError, match="unknown event type None"):
        event_from_dict({"round": 1})


def test_event_from_dict_rejects_extra_fields() -> None:
    with pytest.raises(Exception) as info:
        event_from_dict({"type": "round_started", "round": 1, "bogus": True})
    assert "bogus" in str(info.value) or any(
        "bogus" in str(e) for e in getattr(info.value, "exceptions", ())
    )


# -- sizes ---------------------------------------------------------------------------------


def test_size_serializes_by_name() -> None:
    c = Creature("a", "A", "x")
    assert creature_to_dict(c)["size"] == "Medium"
    big = Creature("o", "O", "x", size=Size.LARGE)
    assert creature_to_dict(big)["size"] == "Large"
    assert creature_from_dict({"id": "o", "name": "O", "side": "x", "size": "Large"}) == big


@pytest.mark.parametrize("size", list(Size))
def test_every_size_roundtrips_by_label(size: Size) -> None:
    c = Creature("a", "A", "x", size=size)
    data = creature_to_dict(c)
    assert data["size"] == size.label == size.name.capitalize()
    assert creature_from_dict(json.loads(json.dumps(data))) == c


def test_size_in_events_travels_as_name() -> None:
    created = next(e for e in played() if e.type == "encounter_created")
    data = event_to_dict(created)
    assert [c["size"] for c in data["creatures"]] == [
        "Medium",
        "Medium",
        "Medium",
        "Medium",
        "Large",
    ]


@pytest.mark.parametrize(
    ("given", "size"), [("medium", Size.MEDIUM), ("HUGE", Size.HUGE), (1, Size.SMALL)]
)
def test_creature_from_dict_accepts_size_spellings(given: object, size: Size) -> None:
    assert creature_from_dict({"id": "a", "name": "A", "side": "x", "size": given}).size == size


# -- creature_from_dict ----------------------------------------------------------------------

BASE: dict[str, Any] = {"id": "orc", "name": "Orc", "side": "foes"}


def test_creature_from_dict_full_roundtrip() -> None:
    for creature in roster():
        data = json.loads(json.dumps(creature_to_dict(creature)))
        assert creature_from_dict(data) == creature


def test_creature_from_dict_minimal() -> None:
    c = creature_from_dict(BASE)
    assert (c.id, c.name, c.side, c.size, c.pc) == ("orc", "Orc", "foes", Size.MEDIUM, False)


def test_creature_from_dict_rejects_unknown_key() -> None:
    with pytest.raises(ValueError) as info:
        creature_from_dict({**BASE, "hitpoints": 7})
    assert "hitpoints" in str(info.value)


def test_creature_from_dict_rejects_unknown_nested_key() -> None:
    with pytest.raises(ValueError, match=r"oops") as info:
        creature_from_dict({**BASE, "attacks": [{"name": "axe", "oops": 1}]})
    assert "attacks[0]" in str(info.value)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"hp": "ten"}, "hp"),
        ({"size": "Huuge"}, "size"),
        ({"size": 9}, "size"),
        ({"speeds": [30]}, "speeds"),
        ({"speeds": {"walk": "fast"}}, "speeds['walk']"),
        ({"attacks": [{"name": "axe", "bonus": "big"}]}, "attacks[0].bonus"),
        ({"ac": None}, "ac"),
    ],
)
def test_creature_from_dict_rejects_wrong_type_naming_field(
    extra: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError) as info:
        creature_from_dict({**BASE, **extra})
    assert f".{field}" in str(info.value)


def test_creature_from_dict_names_missing_field() -> None:
    with pytest.raises(ValueError, match=r"\.id\b"):
        creature_from_dict({"name": "Nameless", "side": "foes"})
    with pytest.raises(ValueError, match=r"\.side\b"):
        creature_from_dict({"id": "orc", "name": "Orc"})


def test_creature_from_dict_reports_every_problem() -> None:
    with pytest.raises(ValueError) as info:
        creature_from_dict({**BASE, "bogus": 1, "hp": "ten"})
    message = str(info.value)
    assert "bogus" in message
    assert ".hp" in message


@pytest.mark.parametrize("data", [[1, 2], "orc", None, 3])
def test_creature_from_dict_rejects_non_objects(data: object) -> None:
    with pytest.raises(ValueError, match="a creature must be an object"):
        creature_from_dict(data)


# Values of the wrong JSON type that are rejected (not coerced).
STRICT = [
    ({"hp": "10"}, "hp"),
    ({"hp": 1.5}, "hp"),
    ({"hp": True}, "hp"),
    ({"name": 5}, "name"),
    ({"group": 3}, "group"),
    ({"pc": "no"}, "pc"),
    ({"hidden": 1}, "hidden"),
    ({"controller": None}, "controller"),
]


@pytest.mark.parametrize(("extra", "field"), STRICT)
def test_creature_from_dict_does_not_coerce(extra: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError) as info:
        creature_from_dict({**BASE, **extra})
    assert f".{field}" in str(info.value)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        pytest.param({"conditions": "prone"}, "conditions"),
        pytest.param({"size": True}, "size"),
        pytest.param({"speeds": [30]}, "speeds"),
    ],
)
def test_creature_from_dict_rejects_coercible_wrong_types(
    extra: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError) as info:
        creature_from_dict({**BASE, **extra})
    assert f".{field}" in str(info.value)


def test_creature_from_dict_string_for_list_is_one_readable_error() -> None:
    with pytest.raises(ValueError) as info:
        creature_from_dict({**BASE, "attacks": "axe"})
    message = str(info.value)
    assert ".attacks" in message
    assert "attacks[1]" not in message
    assert "expected a list, not text" in message


def test_replay_of_a_rewind_restores_the_earlier_state_and_keeps_counting() -> None:
    events = list(played())
    at = 20
    rewound = replay([*events, Rewound(to_seq=at, by="gm")])
    earlier = replay(events[:at])
    assert rewound.seq == len(events) + 1
    expected = state_to_dict(earlier)
    expected["seq"] = len(events) + 1
    assert state_to_dict(rewound) == expected
    # A rewind of a rewind: back to the later point, counting on.
    again = replay([*events, Rewound(to_seq=at, by="gm"), Rewound(to_seq=len(events), by="gm")])
    later = state_to_dict(replay(events))
    later["seq"] = len(events) + 2
    assert state_to_dict(again) == later


def test_rewinds_to_rewinds_fold_in_one_pass_to_the_first_rewinds_state() -> None:
    # Each rewind goes back to the one before it: the state stays the one after seq 20.
    # (Folding every rewind's prefix again, as replay once did, took 2^k passes here.)
    events = list(played())
    log: list[Event] = [*events, Rewound(to_seq=20, by="gm")]
    for _ in range(60):
        log.append(Rewound(to_seq=len(log), by="gm"))
    expected = state_to_dict(replay(events[:20]))
    expected["seq"] = len(log)
    assert state_to_dict(replay(log)) == expected


def test_replay_steps_yields_the_state_after_each_event() -> None:
    events = list(played())
    log: list[Event] = [*events[:30], Rewound(to_seq=10, by="gm"), *events[10:20]]
    # seq 31 is the first rewind; 32-41 are events[10:20] again
    log += [Rewound(to_seq=31, by="gm"), Rewound(to_seq=5, by="gm"), Rewound(to_seq=41, by="gm")]
    seen = [state_to_dict(state) for state in replay_steps(log)]
    assert len(seen) == len(log)
    for seq in range(1, len(log) + 1):
        assert seen[seq - 1] == state_to_dict(replay(log[:seq])), seq
    # rewound to seq 41: the state after the ten events replayed after the first rewind
    assert seen[-1] == {**state_to_dict(replay(events[:20])), "seq": len(log)}
    assert seen[-2] == {**state_to_dict(replay(events[:5])), "seq": len(log) - 1}
    assert seen[-3] == {**state_to_dict(replay(events[:10])), "seq": len(log) - 2}


def test_replay_refuses_a_rewind_to_a_later_event() -> None:
    events = list(played())[:5]
    with pytest.raises(ValueError, match="rewound to seq 6, which is not an earlier event"):
        replay([*events, Rewound(to_seq=6, by="gm")])


def test_apply_event_refuses_a_rewind_without_its_log() -> None:
    from zonekeep.sdk.host import apply_event

    state = replay(played()[:5])
    with pytest.raises(ValueError, match="needs the log before it"):
        apply_event(state, Rewound(to_seq=2))


def test_state_copy_equals_a_deep_copy_and_shares_nothing_mutable() -> None:
    import copy

    for events in (played(), played_arena()):
        state = replay(events)
        fast = state.copy()
        assert state_to_dict(fast) == state_to_dict(copy.deepcopy(state))
        # Mutating the copy never reaches the original.
        before = state_to_dict(state)
        for c in fast.creatures.values():
            c.conditions.append("x-test")
            c.speeds["walk"] = -1
            c.attacks.clear()
        fast.pending.clear()
        fast.engagements.append(("a", "b"))
        fast.resources.actions = 99
        fast.creatures.clear()
        assert state_to_dict(state) == before
