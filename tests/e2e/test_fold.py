"""The reference fold of the GM's view (``zonekeep.protocol.fold``; issue 32, point 5)
on a real server over real websockets: the GM's state kept from the events of a whole
session (a prompt, a rewind, the end) is the server's own snapshot, event after
event; a rewind leaves it invalid until the snapshot that follows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio
from e2e_support import Loaded, Running, ServerConfig, sturdy_goblin_roster
from helpers import deadline

from zonekeep.protocol.client import ZonekeepClient
from zonekeep.protocol.fold import GmFold

MakeServer = Callable[..., Any]


async def settle(gm: ZonekeepClient, fold: GmFold, eid: str) -> dict[str, Any]:
    """Fold every notification the GM has until its fold reaches the server's seq; the
    server's snapshot then."""
    current = await gm.request("snapshot", encounter=eid)
    while fold.seq < current["seq"] or not fold.valid:
        fold.notification(await _next(gm))
    return current


async def _next(gm: ZonekeepClient) -> dict[str, Any]:
    message = await gm._notes.receive()
    return message


async def test_the_gms_fold_is_the_servers_snapshot_through_a_whole_session(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(deadline(20)):
            created = await gm.create_encounter("Fold", "tavern", sturdy_goblin_roster())
            eid = created["encounter"]
            fold = GmFold(created["snapshot"], created["seq"])
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await alice.join(eid, seat["token"])
            steps: list[tuple[ZonekeepClient, str, dict[str, Any]]] = [
                (gm, "set_surprise", {"surprised": []}),
                (gm, "place", {"positions": {}}),
                (gm, "roll_initiative", {}),
                (alice, "attack", {"creature": "aria", "target": "gob"}),
                (gm, "add_note", {"text": "Aria strikes first."}),
                (alice, "end_turn", {"creature": "aria"}),
                (gm, "enter", {"creature": "gob", "zones": ["bar"]}),  # a prompt for aria
            ]
            checked = 0
            for client, command, params in steps:
                await client.command(eid, command, **params)
                current = await settle(gm, fold, eid)
                assert fold.valid, command
                mine, theirs = fold.snapshot, current["snapshot"]
                assert {k for k in mine if mine[k] != theirs.get(k)} == set(), (
                    command,
                    {k: (mine[k], theirs.get(k)) for k in mine if mine[k] != theirs.get(k)},
                )
                checked += 1
            pending = current["snapshot"]["pending"]
            assert [d["kind"] for d in pending] == ["opportunity_attack"]
            await alice.command(eid, "decide", decision=pending[0]["id"], choice=["attack"])
            current = await settle(gm, fold, eid)
            assert fold.snapshot == current["snapshot"]
            # A rewind: the fold is invalid from the rewound event to the snapshot after it.
            rewind_to = current["seq"] - 3
            await gm.request("rewind", encounter=eid, to_seq=rewind_to)
            current = await gm.request("snapshot", encounter=eid)
            invalid_seen = False
            while fold.seq < current["seq"] or not fold.valid:
                message = await _next(gm)
                fold.notification(message)
                invalid_seen = invalid_seen or not fold.valid
            assert invalid_seen
            assert fold.snapshot == current["snapshot"]
            await gm.command(eid, "end_encounter", force=True)
            current = await settle(gm, fold, eid)
            assert current["snapshot"]["phase"] == "ended"
            assert fold.snapshot == current["snapshot"]
            assert checked == len(steps)
