"""Who may send which command: roles x commands, each on a fresh encounter at the right step.

Roles: the GM; alice, who controls Aria; bob, who controls Bram; a spectator. The
goblin is the GM's. Dice are loaded (every die shows its highest face), so the
initiative order is Aria (23), Goblin (22), Bram (21).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, Loaded, Running, ServerConfig, sturdy_goblin_roster

from zonekeep.protocol.client import ClientError, ZonekeepClient

MakeServer = Callable[..., Any]
OK = "ok"

ROLES = ("gm", "alice", "bob", "spectator")
GM_ONLY = {"gm": OK, "alice": 3002, "bob": 3002, "spectator": 3004}
ARIAS = {"gm": OK, "alice": OK, "bob": 3001, "spectator": 3004}
BRAMS = {"gm": OK, "alice": 3001, "bob": OK, "spectator": 3004}
GMS_CREATURE = {"gm": OK, "alice": 3001, "bob": 3001, "spectator": 3004}

NAMES = {
    3001: "not_your_creature",
    3002: "gm_only",
    3003: "not_your_decision",
    3004: "spectator_read_only",
    4005: "not_your_turn",
}


# (name, step, command, params, expected outcome by role)
TABLE: list[tuple[str, str, str, dict[str, Any], dict[str, Any]]] = [
    ("set_surprise", "surprise", "set_surprise", {"surprised": []}, GM_ONLY),
    ("place", "positions", "place", {"positions": {}}, GM_ONLY),
    ("roll_initiative", "initiative", "roll_initiative", {}, GM_ONLY),
    ("move-aria", "aria_turn", "move", {"creature": "aria", "feet": 5}, ARIAS),
    ("enter-aria", "aria_turn", "enter", {"creature": "aria", "zones": ["bar"]}, ARIAS),
    ("attack-aria", "aria_turn", "attack", {"creature": "aria", "target": "gob"}, ARIAS),
    ("dash-aria", "aria_turn", "dash", {"creature": "aria"}, ARIAS),
    ("move-bram", "bram_turn", "move", {"creature": "bram", "feet": 5}, BRAMS),
    ("enter-bram", "bram_turn", "enter", {"creature": "bram", "zones": ["bar"]}, BRAMS),
    ("attack-bram", "bram_turn", "attack", {"creature": "bram", "target": "gob"}, BRAMS),
    ("dash-bram", "bram_turn", "dash", {"creature": "bram"}, BRAMS),
    ("move-gob", "gob_turn", "move", {"creature": "gob", "feet": 5}, GMS_CREATURE),
    ("enter-gob", "gob_turn", "enter", {"creature": "gob", "zones": ["bar"]}, GMS_CREATURE),
    ("attack-gob", "gob_turn", "attack", {"creature": "gob", "target": "aria"}, GMS_CREATURE),
    ("dash-gob", "gob_turn", "dash", {"creature": "gob"}, GMS_CREATURE),
    (
        "dash-bram-off-turn",
        "aria_turn",
        "dash",
        {"creature": "bram"},
        {"gm": 4005, "alice": 3001, "bob": 4005, "spectator": 3004},
    ),
    (
        "decide-alices",
        "alice_decision",
        "decide",
        {"decision": "d1", "choice": ["attack"]},
        {"gm": OK, "alice": OK, "bob": 3003, "spectator": 3004},
    ),
    (
        "decide-bobs",
        "bob_decision",
        "decide",
        {"decision": "d1", "choice": ["attack"]},
        {"gm": OK, "alice": 3003, "bob": OK, "spectator": 3004},
    ),
    ("add_note", "aria_turn", "add_note", {"text": "Smoke.", "hidden": False}, GM_ONLY),
    (
        "override",
        "aria_turn",
        "override",
        {"creature": "aria", "field": "hp", "value": 3},
        GM_ONLY,
    ),
    (
        "end_encounter",
        "aria_turn",
        "end_encounter",
        {"force": True, "reason": "Everyone goes home."},
        GM_ONLY,
    ),
]

CASES = [
    pytest.param(step, kind, params, expected, id=name)
    for name, step, kind, params, expected in TABLE
]


async def _send_setup(gm: ZonekeepClient, eid: str, kind: str) -> None:
    setups: dict[str, dict[str, Any]] = {
        "set_surprise": {"surprised": []},
        "place": {"positions": {}},
    }
    await gm.command(eid, kind, **setups.get(kind, {}))


@pytest.mark.parametrize(("step", "kind", "params", "expected"), CASES)
async def test_permission_table(
    make_server: MakeServer,
    step: str,
    kind: str,
    params: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    """One row of the table: for each role, a fresh encounter at ``step``, then the command."""
    # Four encounters' worth of set-up from one GM connection: more than the default burst.
    limits = Limits(rate_per_second=1000, rate_burst=1000)
    running: Running = await make_server(ServerConfig(port=0, limits=limits), entropy=Loaded())
    outcomes: dict[str, Any] = {}
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as spectator,
    ):
        clients = {"gm": gm, "alice": alice, "bob": bob, "spectator": spectator}
        for role in ROLES:
            with trio.fail_after(helpers.deadline(5)):
                eid = await prepare_steps(clients, step)
                before = await gm.request("snapshot", encounter=eid)
                if step.endswith("_decision"):
                    pending = before["snapshot"]["pending"]
                    assert [(d["id"], d["controller"]) for d in pending] == [
                        ("d1", step.split("_")[0])
                    ]
                try:
                    result = await clients[role].command(eid, kind, **params)
                except ClientError as err:
                    outcomes[role] = err.code
                    assert err.name == NAMES.get(err.code, err.name), (role, err)
                    assert await gm.request("snapshot", encounter=eid) == before, role
                else:
                    outcomes[role] = OK
                    assert result["first_seq"] == before["seq"] + 1, role
                    assert result["last_seq"] >= result["first_seq"], role
    assert outcomes == expected


async def prepare_steps(clients: dict[str, ZonekeepClient], step: str) -> str:
    gm = clients["gm"]
    eid: str = (await gm.create_encounter("Rights", "tavern", sturdy_goblin_roster()))["encounter"]
    # Joining with last_seq=1 replays nothing (and spares validating three snapshots).
    for player in ("alice", "bob"):
        seat = await gm.request("create_seat", encounter=eid, player=player)
        assert (await clients[player].join(eid, seat["token"], last_seq=1))["events"] == []
    link = await gm.request("create_spectator_link", encounter=eid)
    assert (await clients["spectator"].join(eid, link["token"], last_seq=1))["events"] == []
    order = ["set_surprise", "place", "roll_initiative"]
    wanted = {"surprise": 0, "positions": 1, "initiative": 2}.get(step, 3)
    for kind in order[:wanted]:
        await _send_setup(gm, eid, kind)
    if step in ("surprise", "positions", "initiative", "aria_turn"):
        return eid
    if step == "alice_decision":
        await gm.command(eid, "attack", creature="aria", target="gob")
        await gm.command(eid, "end_turn", creature="aria")
        await gm.command(eid, "enter", creature="gob", zones=["bar"])
        return eid
    await gm.command(eid, "end_turn", creature="aria")
    if step == "gob_turn":
        return eid
    if step == "bob_decision":
        await gm.command(eid, "attack", creature="gob", target="bram")
        await gm.command(eid, "enter", creature="gob", zones=["bar"])
        return eid
    assert step == "bram_turn", step
    await gm.command(eid, "end_turn", creature="gob")
    return eid


def test_table_covers_every_role_and_family() -> None:
    assert len(CASES) == len(TABLE)
    assert all(set(row[4]) == set(ROLES) for row in TABLE)
    kinds = {row[2] for row in TABLE}
    assert {"set_surprise", "place", "roll_initiative", "move", "enter", "attack", "dash"} <= kinds
    assert {"decide", "add_note", "override", "end_encounter"} <= kinds
