"""Property test: random encounters under random (legal and illegal) commands keep the invariants.

After every command:

- turn resources are never negative, and no move or stand-up spends more than
  :func:`movement_left` allowed at that moment;
- a creature takes at most one ``action``-cost ``action_taken`` per turn;
- once round 1 has started the initiative order (slot ids and their members) only
  changes through ``add_creature`` (one creature more) or ``set_group_order``
  (same members, new order);
- a refused command leaves the state exactly as it was and yields no events, with a
  numbered refusal code; an accepted one does not touch the state it was given;
- replaying all events rebuilds the live state, and ``seq`` counts them;
- every event round-trips through ``event_to_dict``/``event_from_dict`` and JSON.
"""

from __future__ import annotations

import json
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zonekeep.sdk import (
    GM_ACTOR,
    RULE_ERRORS,
    SYSTEM_ACTOR,
    ActionTaken,
    Actor,
    Attack,
    Command,
    Creature,
    Event,
    Moved,
    MovementSpent,
    RandomEntropy,
    Refusal,
    TurnStarted,
)
from zonekeep.sdk._serial import event_from_dict, event_to_dict, state_to_dict
from zonekeep.sdk._state import OVERRIDE_FIELDS, EncounterState, apply_event, movement_left, replay
from zonekeep.sdk._types import MOVE_MODES
from zonekeep.sdk.engine import Engine

ENGINE = Engine()
COMMANDS = sorted(ENGINE.commands)
ZONES = ("field", "ridge")
P1 = Actor("player", "p1")
ACTORS = [GM_ACTOR, P1, Actor("player", "p2"), Actor("spectator", "watcher"), SYSTEM_ACTOR]
BOGUS_IDS = ["nobody", "", "g1", "P0"]
CONDITIONS = ["prone", "dying", "stable", "defeated", "dodging", "squeezing", "poisoned", ""]

#: Every command, with the turn's own commands drawn more often so that rounds go by.
WEIGHTED = [
    *COMMANDS,
    *["end_turn"] * 10,
    *["move"] * 4,
    *["attack"] * 4,
    *["interact", "dash", "stand", "drop_prone", "ready", "release_readied", "decide"] * 2,
    *["add_creature", "set_group_order"] * 2,
]

# -- building an encounter ---------------------------------------------------------------


@st.composite
def creatures(draw: st.DrawFn) -> list[Creature]:
    count = draw(st.integers(2, 5))
    found = []
    for i in range(count):
        # The first creature is p1's, the second the GM's: two sides, always.
        pc = i == 0 or (i > 1 and draw(st.booleans()))
        walk = draw(st.sampled_from([30, 30, 25, 40, 0]))
        speeds = {"walk": walk}
        if draw(st.booleans()):
            speeds[draw(st.sampled_from(["fly", "climb", "swim"]))] = draw(
                st.sampled_from([20, 60])
            )
        hp = draw(st.integers(1, 12))
        found.append(
            Creature(
                f"p{i}" if pc else f"n{i}",
                f"Creature {i}",
                "party" if pc else "foes",
                controller="p1" if pc else "gm",
                dex_mod=draw(st.integers(-2, 4)),
                initiative_bonus=draw(st.sampled_from([0, 0, 2])),
                speeds=speeds,
                hp=hp,
                max_hp=hp,
                ac=draw(st.integers(8, 16)),
                group=None if pc else draw(st.sampled_from([None, "g1", "g1", "g2"])),
                attacks=[Attack("claw", "melee", draw(st.integers(0, 6)), "1d6")],
            )
        )
    return found


# -- drawing commands -----------------------------------------------------------------------


def wrong_value() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.text(max_size=4),
        st.lists(st.integers(0, 3), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    )


def creature_ids(state: EncounterState) -> list[str]:
    ids = sorted(state.creatures)
    if state.active is not None:
        ids += [state.active] * 3
    return ids + BOGUS_IDS


def creature_value(draw: st.DrawFn, state: EncounterState) -> str:
    if state.active is not None and draw(st.integers(0, 2)) > 0:
        return state.active
    return draw(st.sampled_from(creature_ids(state)))


def creature_dict(draw: st.DrawFn, state: EncounterState) -> Any:
    data: dict[str, Any] = {
        "id": draw(st.sampled_from(["late1", "late2", "late3", *sorted(state.creatures), "g1"])),
        "name": "Latecomer",
        "side": draw(st.sampled_from(["party", "foes"])),
    }
    if data["side"] == "party":
        data["controller"] = draw(st.sampled_from(["p1", "p2"]))
    if draw(st.booleans()):
        data["dex_mod"] = draw(st.integers(-2, 4))
    if draw(st.booleans()):
        data["group"] = draw(st.sampled_from(["g1", "g2", "g3"]))
    if draw(st.booleans()):
        data["zone"] = draw(st.sampled_from([*ZONES, "void"]))
    if draw(st.integers(0, 5)) == 0:
        data[draw(st.sampled_from(["hp", "size", "bogus", "speeds"]))] = draw(wrong_value())
    return data


def string_value(draw: st.DrawFn, state: EncounterState, command: str, name: str) -> Any:
    if name == "field":
        return draw(st.sampled_from([*OVERRIDE_FIELDS, "speeds", "bogus"]))
    if name == "condition":
        return draw(st.sampled_from(CONDITIONS))
    if name == "mode":
        return draw(st.sampled_from([*MOVE_MODES, "teleport"]))
    if name == "decision":
        return draw(st.sampled_from([*(d.id for d in state.pending), "d1", "d99"]))
    if name == "group":
        slots = [e.slot for e in state.initiative]
        return draw(st.sampled_from([*slots, "g1", "g2", "nope"]))
    if name == "id":
        return draw(st.sampled_from(["lava", "fog", ""]))
    if name == "attack":
        return draw(st.sampled_from(["claw", "bite"]))
    if name == "text":
        return draw(st.sampled_from(["Run!", "", "   ", " ".join(["word"] * 16)]))
    return draw(st.text(max_size=8))


def param_value(draw: st.DrawFn, state: EncounterState, command: str, name: str, kind: str) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(wrong_value())
    if kind == "creature" and name == "creature":
        return creature_value(draw, state)
    if kind == "creature":
        return draw(st.sampled_from(creature_ids(state)))
    if kind == "strings" and name == "choice":
        use_pending = draw(st.booleans())
        if state.pending and use_pending:
            return list(draw(st.permutations(state.pending[0].options)))
        return draw(st.lists(st.sampled_from(creature_ids(state)), max_size=3))
    if kind in ("creatures", "strings"):
        if command == "set_group_order":
            groups = [e for e in state.initiative if len(e.members) > 1]
            use_group = draw(st.booleans())
            if groups and use_group:
                return list(draw(st.permutations(groups[0].members)))
        return draw(st.lists(st.sampled_from(creature_ids(state)), max_size=3, unique=True))
    if kind == "integer":
        return draw(st.one_of(st.integers(1, 30), st.integers(-10, 70)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "zone":
        return draw(st.sampled_from([*ZONES, "void"]))
    if kind == "object":
        if name == "positions":
            ids = draw(st.lists(st.sampled_from(creature_ids(state)), max_size=3))
            return {cid: draw(st.sampled_from([*ZONES, "void"])) for cid in ids}
        return creature_dict(draw, state)
    if kind == "any":
        return draw(
            st.one_of(
                st.integers(-5, 40),
                st.sampled_from([*ZONES, "void", "party", "foes", "p1", *state.creatures]),
                st.none(),
                st.booleans(),
            )
        )
    return string_value(draw, state, command, name)


def draw_command(draw: st.DrawFn, state: EncounterState) -> Command:
    kind = draw(st.sampled_from(WEIGHTED))
    spec = ENGINE.commands[kind]
    params: dict[str, Any] = {}
    for name, param in spec.params.items():
        include = draw(st.integers(0, 9)) > (0 if param.required else 7)
        if include:
            params[name] = param_value(draw, state, kind, name, param.type)
    if draw(st.integers(0, 14)) == 0:
        params["unexpected"] = 1
    cid = params.get("creature")
    creature = state.creatures.get(cid) if isinstance(cid, str) else None
    if creature is not None and draw(st.integers(0, 3)) > 0:
        actor = GM_ACTOR if creature.controller == "gm" else Actor("player", creature.controller)
    else:
        actor = draw(st.sampled_from(ACTORS))
    return Command(kind, params, actor)


# -- invariants --------------------------------------------------------------------------------


def order_of(state: EncounterState) -> list[tuple[str, tuple[str, ...]]]:
    return [(e.slot, e.members) for e in state.initiative]


def check_resources(state: EncounterState) -> None:
    r = state.resources
    assert r.actions >= 0, r
    assert r.bonus_actions >= 0, r
    assert r.interactions >= 0, r
    assert r.movement_spent >= 0, r
    assert r.dashes >= 0, r


def check_events_one_by_one(
    before: EncounterState, events: tuple[Event, ...], actions: dict[str, int]
) -> EncounterState:
    """Fold ``events`` onto a copy of ``before``, checking movement and actions on the way."""
    state = before.copy()
    for event in events:
        if isinstance(event, Moved):
            creature = state.creatures[event.creature]
            left = movement_left(state, creature, event.mode)
            assert event.cost <= left, f"{event} spends more than the {left} ft left"
            assert event.cost >= event.feet > 0
        if isinstance(event, MovementSpent):
            left = movement_left(state, state.creatures[event.creature])
            assert 0 <= event.feet <= left, f"{event} spends more than the {left} ft left"
        if isinstance(event, TurnStarted):
            actions.clear()
        if isinstance(event, ActionTaken) and event.cost == "action":
            actions[event.creature] = actions.get(event.creature, 0) + 1
            assert actions[event.creature] <= 1, f"{event.creature} took two actions in a turn"
        apply_event(state, event)
        check_resources(state)
    return state


def check_roundtrip(event: Event) -> None:
    data = event_to_dict(event)
    text = json.dumps(data)
    assert event_from_dict(json.loads(text)) == event


def check_order_change(
    kind: str, before: list[tuple[str, tuple[str, ...]]], after: list[tuple[str, tuple[str, ...]]]
) -> None:
    if before == after:
        return
    assert kind in ("add_creature", "set_group_order"), f"{kind} changed the initiative order"
    if kind == "set_group_order":
        assert [s for s, _ in before] == [s for s, _ in after]
        assert [sorted(m) for _, m in before] == [sorted(m) for _, m in after]
        return
    old_members = [m for _, ms in before for m in ms]
    new_members = [m for _, ms in after for m in ms]
    assert len(new_members) == len(old_members) + 1
    if len(after) == len(before):  # joined an existing group, last in its order
        assert [s for s, _ in before] == [s for s, _ in after]
        changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
        assert len(changed) == 1
        (_, old), (_, new) = changed[0]
        assert new[:-1] == old
    else:  # a new slot was inserted; everything else keeps its place
        assert len(after) == len(before) + 1
        remaining = list(after)
        for entry in before:
            assert entry in remaining
        kept = [e for e in after if e in before]
        assert kept == before


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(roster=creatures(), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_random_commands_keep_invariants(
    roster: list[Creature], seed: int, data: st.DataObject
) -> None:
    entropy = RandomEntropy(seed)
    outcome = ENGINE.create("prop", roster, zones=ZONES)
    state = outcome.state
    events: list[Event] = list(outcome.events)
    surprised = data.draw(st.lists(st.sampled_from([c.id for c in roster]), unique=True))
    positions = {c.id: data.draw(st.sampled_from(ZONES)) for c in roster}
    setup = [
        Command("set_surprise", {"surprised": surprised}),
        Command("place", {"positions": positions}),
        Command("roll_initiative"),
    ]
    commands_seen: list[str] = []
    actions: dict[str, int] = {}

    def step(command: Command, *, must_pass: bool = False) -> None:
        nonlocal state
        before_dict = state_to_dict(state)
        before_order = order_of(state)
        try:
            result = ENGINE.handle(state, command, entropy)
        except Refusal as refusal:
            assert not must_pass, f"setup command {command.type} refused: {refusal}"
            assert refusal.code in RULE_ERRORS, f"unnumbered refusal code {refusal.code!r}"
            assert refusal.message.strip()
            assert state_to_dict(state) == before_dict, "a refused command changed the state"
            hypothesis.event(f"refused {refusal.code}")
            return
        assert state_to_dict(state) == before_dict, "handle() modified the state it was given"
        folded = check_events_one_by_one(state, result.events, actions)
        assert state_to_dict(folded) == state_to_dict(result.state)
        check_resources(result.state)
        if state.round >= 1:
            check_order_change(command.type, before_order, order_of(result.state))
        for event in result.events:
            check_roundtrip(event)
        events.extend(result.events)
        state = result.state
        commands_seen.append(command.type)
        hypothesis.event(f"accepted {command.type}")
        assert state.seq == len(events)
        assert state_to_dict(replay(events)) == state_to_dict(state)

    for command in setup:
        step(command, must_pass=True)
    for _ in range(data.draw(st.integers(0, 40), label="steps")):
        step(data.draw(_command_for(state)))
    hypothesis.event(f"reached round {min(state.round, 3)}")
    hypothesis.event(f"phase {state.phase}")


def _command_for(state: EncounterState) -> st.SearchStrategy[Command]:
    @st.composite
    def build(draw: st.DrawFn) -> Command:
        return draw_command(draw, state)

    return build()


def test_a_creature_may_not_share_its_id_with_a_group() -> None:
    roster = [
        Creature("p0", "Aria", "party", controller="p1"),
        Creature("n1", "Goblin 1", "foes", group="g1"),
        Creature("n2", "Goblin 2", "foes", group="g1"),
    ]
    state = ENGINE.create("clash", roster, zones=("field",)).state
    late = {"id": "g1", "name": "Sneaky", "side": "party", "controller": "p1"}
    with pytest.raises(Refusal) as info:
        ENGINE.handle(state, Command("add_creature", {"creature": late}), RandomEntropy(1))
    assert info.value.code == "duplicate_id"
    joined = {"id": "n3", "name": "Goblin 3", "side": "foes", "group": "p0"}
    with pytest.raises(Refusal) as info:
        ENGINE.handle(state, Command("add_creature", {"creature": joined}), RandomEntropy(1))
    assert info.value.code == "duplicate_id"
    with pytest.raises(Refusal, match="group 'p0' has the same id as a creature"):
        ENGINE.create("clash", [*roster, Creature("n3", "G3", "foes", group="p0")])
