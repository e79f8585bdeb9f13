"""The working copy a command is decided on shares what no reducer changes in place
(``_WORKING_SHARED`` in sdk/_state.py): deciding commands must never change the state
they were decided against, and the new state must be what a full copy would give."""

from __future__ import annotations

import random
from pathlib import Path

from zonekeep.sdk import (
    GM_ACTOR,
    Actor,
    Attack,
    Command,
    Creature,
    EncounterState,
    RandomEntropy,
    Refusal,
    load_arena,
)
from zonekeep.sdk._state import working_copy
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import apply_event, state_to_dict

TAVERN = Path(__file__).resolve().parent.parent / "examples" / "arenas" / "tavern.json"


def _roster() -> list[Creature]:
    found = []
    for i in range(6):
        party = i % 2 == 0
        cid = f"{'hero' if party else 'foe'}{i // 2 + 1}"
        found.append(
            Creature(
                cid,
                cid.capitalize(),
                "party" if party else "foes",
                controller=f"player-{cid}" if party else "gm",
                hp=12,
                max_hp=12,
                ac=12,
                attacks=[Attack("blade", "melee", 5, "1d8+3", "slashing")],
                saves={"dex": 1},
                skills={"athletics": 2},
            )
        )
    return found


def _decide(engine: Engine, state: EncounterState, command: Command, seed: int) -> EncounterState:
    """Handle ``command``; check ``state`` is untouched and the result is the fold of
    the events over a full copy."""
    before = state_to_dict(state)
    try:
        outcome = engine.handle(state, command, RandomEntropy(seed))
    except Refusal:
        assert state_to_dict(state) == before
        return state
    assert state_to_dict(state) == before, command
    folded = state.copy()
    for event in outcome.events:
        apply_event(folded, event)
    assert state_to_dict(outcome.state) == state_to_dict(folded)
    return outcome.state


def test_deciding_commands_never_changes_the_state_decided_against() -> None:
    engine = Engine()
    arena = load_arena(TAVERN)
    choice = random.Random(5)
    state = engine.create("share", _roster(), arena=arena).state
    zones = ("common_room", "bar")
    setup = [
        Command("set_surprise", {"surprised": []}, GM_ACTOR),
        Command(
            "place",
            {"positions": {c: zones[i % 2] for i, c in enumerate(state.creatures)}},
            GM_ACTOR,
        ),
        Command("roll_initiative", {}, GM_ACTOR),
    ]
    for n, command in enumerate(setup):
        state = _decide(engine, state, command, n)
    kinds: set[str] = set()
    for n in range(400):
        if state.phase == "ended":
            break
        for decision in list(state.pending):
            who = decision.controller
            actor = GM_ACTOR if who == "gm" else Actor("player", who)
            if "attack" in decision.options:
                params = {"decision": decision.id, "choice": ["attack"]}
                state = _decide(engine, state, Command("decide", params, actor), n)
            if state.pending and state.pending[0].id == decision.id:
                params = {"decision": decision.id}
                state = _decide(engine, state, Command("decision_timeout", params, GM_ACTOR), n)
        if state.active is None:
            continue
        me = state.creatures[state.active]
        foes = [c.id for c in state.in_zone(me.zone or "") if c.side != me.side]
        other = "bar" if me.zone == "common_room" else "common_room"
        options = [
            Command("move", {"creature": me.id, "feet": 5}, GM_ACTOR),
            Command("enter", {"creature": me.id, "zones": [other]}, GM_ACTOR),
            Command("add_note", {"text": f"note {n}"}, GM_ACTOR),
            Command("end_turn", {"creature": me.id}, GM_ACTOR),
        ]
        if foes:
            options.append(Command("attack", {"creature": me.id, "target": foes[0]}, GM_ACTOR))
            caught = [c.id for c in state.in_zone(me.zone or "") if c.id != me.id]
            area = {"creature": me.id, "name": "Burst", "zone": me.zone, "shape": "sphere",
                    "size": 10, "range": 0, "targets": caught, "save": "dex", "dc": 12,
                    "damage": "2d6", "damage_type": "fire"}  # fmt: skip
            options.append(Command("area_effect", area, GM_ACTOR))
        command = choice.choice(options)
        after = _decide(engine, state, command, n)
        if after is not state:
            kinds.add(command.type)
        state = after
    # The walk reached the commands that change creatures, not only refusals.
    assert {"attack", "enter", "end_turn"} <= kinds, kinds


def test_a_working_copy_equals_a_full_copy() -> None:
    engine = Engine()
    state = engine.create("share", _roster(), arena=load_arena(TAVERN)).state
    assert working_copy(state) == state.copy() == state
    assert state_to_dict(working_copy(state)) == state_to_dict(state)
