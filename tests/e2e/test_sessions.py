"""The recorded sessions of the conformance kit (issue 32, points 5 and 8): GM, player
and spectator views of a whole encounter (a resume, a prompt, a rewind, the end) in
``protocol/conformance/sessions/``, recorded through ``zonekeep proxy`` from a real
server. Every server message in them is valid; folding each view's events from its
first snapshot gives the server's own snapshot at the end; a recording made now has
the same shape (so they do not drift from the server); a client plays them back.

``ZONEKEEP_RECORD_SESSIONS=1`` makes the recording test write the files anew.
"""

from __future__ import annotations

import json
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
import trio
from e2e_support import Loaded, ServerConfig, start_server, sturdy_goblin_roster
from helpers import deadline

from zonekeep.protocol import validate_server_message
from zonekeep.protocol.client import connect
from zonekeep.protocol.fold import GmFold, SeatFold
from zonekeep.server._proxy import Proxy, SessionPlayer, read_session

SESSIONS = Path(__file__).parents[2] / "protocol" / "conformance" / "sessions"
VIEWS = {"gm": [1], "player": [2, 4], "spectator": [3]}


async def record(nursery: trio.Nursery, data: Path) -> dict[str, list[dict[str, Any]]]:
    """Play the scripted encounter through a recording proxy; the entries per view."""
    running = await start_server(
        nursery, data, ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    entries: list[dict[str, Any]] = []
    proxy = Proxy(running.url, record=entries.append)
    url = f"ws://127.0.0.1:{await nursery.start(proxy.run, '127.0.0.1', 0)}/ws"
    with trio.fail_after(deadline(30)):
        async with AsyncExitStack() as stack:
            gm = await stack.enter_async_context(connect(url))  # connection 1
            created = await gm.create_encounter("Recorded", "tavern", sturdy_goblin_roster())
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            link = await gm.request("create_spectator_link", encounter=eid)
            alice = await stack.enter_async_context(connect(url))  # connection 2
            await alice.join(eid, seat["token"])
            watcher = await stack.enter_async_context(connect(url))  # connection 3
            await watcher.join(eid, link["token"])
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            await alice.request(
                "command",
                encounter=eid,
                type="attack",
                params={"creature": "aria", "target": "gob"},
                idempotency_key="alice-attack-1",
            )
            last = (await alice.request("snapshot", encounter=eid))["seq"]
            await alice.ws.aclose()  # alice drops out
            await gm.command(eid, "add_note", text="Aria's player dropped out.")
            back = await stack.enter_async_context(connect(url))  # connection 4: she resumes
            resumed = await back.join(eid, seat["token"], last_seq=last)
            assert [e["type"] for e in resumed["events"]] == ["note_added"]
            # Table talk (protocol 1.6): a line, a whisper to the GM, the GM's private roll.
            await back.request("chat", encounter=eid, text="Sorry, my connection dropped.")
            await back.request("chat", encounter=eid, text="Is the goblin hurt?", to="gm")
            await gm.request("roll", encounter=eid, dice="d20", label="Morale", private=True)
            await back.command(eid, "end_turn", creature="aria")
            await gm.command(eid, "enter", creature="gob", zones=["bar"])
            prompt = await back.notification("prompt")
            decision = prompt["decision"]["id"]
            await back.command(eid, "decide", decision=decision, choice=["attack"])
            now = (await gm.request("snapshot", encounter=eid))["seq"]
            await gm.request("rewind", encounter=eid, to_seq=now - 2)
            await gm.command(eid, "end_encounter", force=True)
            for client in (gm, back, watcher):
                await client.request("snapshot", encounter=eid)
    await running.server.shutdown()
    return {
        view: [
            {**e, "connection": numbers.index(e["connection"]) + 1}
            for e in entries
            if e["connection"] in numbers
        ]
        for view, numbers in VIEWS.items()
    }


def write(directory: Path, views: dict[str, list[dict[str, Any]]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for view, entries in views.items():
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
        (directory / f"{view}.jsonl").write_text(text, encoding="utf-8")


def committed(view: str) -> list[dict[str, Any]]:
    return read_session((SESSIONS / f"{view}.jsonl").read_text(encoding="utf-8"))


def shape(entries: list[dict[str, Any]]) -> list[Any]:
    """What must not change between recordings: what each side sent on each connection
    (a request's method, a reply, a notification's method, an event's type), in order.
    How the two sides' messages interleave depends on timing, so it is left out."""
    found: list[Any] = []
    for e in entries:
        m: dict[str, Any] = e.get("message") or {}
        if "close" in e:
            found.append(("close", e["connection"], e["by"]))
        elif e["from"] == "client":
            found.append(
                ("client", e["connection"], m["method"], (m.get("params") or {}).get("type"))
            )
        elif "method" in m:
            event = (m.get("params") or {}).get("event") or {}
            found.append(("server", e["connection"], m["method"], event.get("type")))
        else:
            found.append(("server", e["connection"], "error" if "error" in m else "result"))
    return sorted(found, key=lambda item: (item[0], item[1]))  # stable: each side's order kept


async def test_a_recording_made_now_has_the_shape_of_the_committed_sessions(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    views = await record(nursery, tmp_path / "data")
    if os.environ.get("ZONEKEEP_RECORD_SESSIONS") == "1":
        write(SESSIONS, views)
    for view, entries in views.items():
        assert shape(entries) == shape(committed(view)), view


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_every_server_message_of_the_sessions_is_valid(view: str) -> None:
    entries = committed(view)
    assert entries
    methods: dict[tuple[int, Any], str] = {}
    for e in entries:
        if e.get("from") == "client":
            methods[(e["connection"], e["message"]["id"])] = e["message"]["method"]
        elif e.get("from") == "server":
            m = e["message"]
            validate_server_message(m, methods.get((e["connection"], m.get("id"))))


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_folding_each_view_gives_the_servers_snapshot_at_the_end(view: str) -> None:
    """From the view's first snapshot (``create_encounter``'s or ``join``'s), fold every
    ``event`` and ``snapshot`` notification (and a resume's events) with the reference
    fold; at the end it is the snapshot the server gave that view."""
    entries = committed(view)
    methods: dict[tuple[int, Any], str] = {}
    fold: GmFold | None = None
    last: dict[str, Any] | None = None
    invalid = 0
    for e in entries:
        if e.get("from") == "client":
            methods[(e["connection"], e["message"]["id"])] = e["message"]["method"]
            continue
        if e.get("from") != "server":
            continue
        m = e["message"]
        method = methods.get((e["connection"], m.get("id")))
        result = m.get("result")
        if method in ("create_encounter", "join") and result is not None:
            if fold is None:
                kind = GmFold if view == "gm" else SeatFold
                fold = kind(result["snapshot"], result["seq"])
            elif result.get("events") is not None:  # a resume: the events missed
                first = fold.seq + 1
                for offset, event in enumerate(result["events"]):
                    fold.event(first + offset, event)
        elif method == "snapshot" and result is not None:
            last = result
        elif fold is not None and "method" in m:
            fold.notification(m)
            invalid += not fold.valid
    assert fold is not None and last is not None
    assert fold.valid and fold.seq == last["seq"]
    assert fold.snapshot == last["snapshot"]
    assert invalid > 0  # the rewind made it invalid until its snapshot
    assert last["snapshot"]["phase"] == "ended"


async def test_a_client_plays_a_session_against_the_fake_server(nursery: trio.Nursery) -> None:
    """``zonekeep proxy --play``: the spectator's session, played back; a client that
    sends what the recording has gets the recorded answers; one that does not is told."""
    entries = committed("spectator")
    player = SessionPlayer(entries)
    url = f"ws://127.0.0.1:{await nursery.start(player.run, '127.0.0.1', 0)}/ws"
    join = next(
        e["message"]
        for e in entries
        if e.get("from") == "client" and e["message"]["method"] == "join"
    )
    with trio.fail_after(deadline(10)):
        async with connect(url) as watcher:
            joined = await watcher.join(**join["params"])
            assert joined["role"] == "spectator"
            final = await watcher.request("snapshot", encounter=join["params"]["encounter"])
            assert final["snapshot"]["phase"] == "ended"
    assert player.problems == []
