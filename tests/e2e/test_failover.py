"""Nodes as real processes on one PostgreSQL store (tests/e2e/nodes_support.py), paused
and killed while clients play.

- **Fencing**: a node paused (SIGSTOP) past its lease loses the encounter to another
  node, which plays on; resumed (SIGCONT), it has its late command refused, gives the
  room up and tells its clients (``encounter_closed``, ``moved``), whose Python client
  follows the encounter to its new node with no event missed; no seq is written twice.
- **Failover**: the owner is killed (SIGKILL) while four clients play, round after
  round; each time the clients come back through another node and resume by seq, with
  no acknowledged event lost and no gap in what they saw or in the store.

Leases here last 2 s. Every wait is for a condition, with a deadline.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
from e2e_support import creatures
from nodes_support import NodeProcess, events, lease, nodes, until
from postgres_support import fresh_schema

from zonekeep.protocol.client import ClientError, ConnectionLost, ZonekeepClient, connect

LEASE = 2.0


def note_texts(store: str, eid: str) -> dict[int, str]:
    found = {}
    for seq, data in events(store, eid):
        event = json.loads(data)
        if event["type"] == "note_added":
            found[seq] = event["note"]["text"]
    return found


async def join_somewhere(client: ZonekeepClient, eid: str, token: str, last: int) -> dict[str, Any]:
    """``join``, retried while the encounter is being handed over between nodes."""
    with trio.fail_after(helpers.deadline(30)):
        while True:
            try:
                return await client.join(eid, token, last_seq=last)
            except ClientError as exc:
                if exc.name != "store_unavailable":
                    raise
            await trio.sleep(0.05)


async def test_a_paused_node_past_its_lease_can_never_append_again(tmp_path: Path) -> None:
    with fresh_schema() as store, nodes(store, ["a", "b"], tmp_path, LEASE) as up:
        a, b = up["a"], up["b"]
        with trio.fail_after(helpers.deadline(60)):
            async with (
                connect(a.url, timeout=helpers.deadline(15), follow_moved=False) as stale,
                connect(a.url, timeout=helpers.deadline(15)) as alice,
            ):
                created = await stale.create_encounter("Paused", "tavern", creatures())
                eid, token = created["encounter"], created["gm_token"]
                seat = await stale.request("create_seat", encounter=eid, player="alice")
                joined = await alice.join(eid, seat["token"])
                first = await stale.command(eid, "add_note", text="before the pause")
                seen: list[int] = []

                async def watch() -> None:
                    while True:
                        seen.append((await alice.notification("event"))["seq"])

                async with trio.open_nursery() as watching:
                    watching.start_soon(watch)
                    await until(lambda: first["last_seq"] in seen, 10, "alice sees the note")
                    assert lease(store, eid)[:2] == ("a", 1)

                    a.pause()
                    await until(lambda: not lease(store, eid)[2], 15, "a's lease runs out")
                    async with connect(b.url, timeout=helpers.deadline(15)) as gm:
                        await join_somewhere(gm, eid, token, first["last_seq"])
                        assert gm.moves == 0  # b took the lease itself
                        assert lease(store, eid)[:2] == ("b", 2)
                        taken = await gm.command(eid, "add_note", text="b plays on")
                        assert taken["first_seq"] == first["last_seq"] + 1

                        # a's client sends a command while a is still stopped; a
                        # wakes up to it: refused, nothing stored.
                        late: dict[str, ClientError] = {}

                        async def late_note() -> None:
                            with pytest.raises(ClientError) as info:
                                await stale.command(eid, "add_note", text="a, too late")
                            late["error"] = info.value

                        watching.start_soon(late_note)
                        await trio.sleep(0)
                        a.resume()
                        closed = await stale.notification("encounter_closed")
                        assert (closed["encounter"], closed["reason"]) == (eid, "moved")
                        await until(lambda: "error" in late, 15, "a answers the late note")
                        assert late["error"].name in ("store_unavailable", "not_joined")
                        # alice followed the encounter to b by herself, missing nothing.
                        await until(lambda: alice.url == b.url, 15, "alice moves to b")
                        after = await gm.command(eid, "add_note", text="after the pause")
                        await until(lambda: after["last_seq"] in seen, 10, "alice sees b's note")
                    watching.cancel_scope.cancel()
        stored = events(store, eid)
        assert [seq for seq, _ in stored] == list(range(1, after["last_seq"] + 1))
        texts = note_texts(store, eid)
        assert "a, too late" not in texts.values()
        assert texts[taken["first_seq"]] == "b plays on"
        assert seen == list(range(joined["seq"] + 1, after["last_seq"] + 1))


@attrs.define
class Player:
    """One of the four clients: the notes it had acknowledged (seq -> text) and every
    event seq it saw, in order."""

    client: ZonekeepClient
    index: int
    acked: dict[int, str] = attrs.field(factory=dict)
    seen: list[int] = attrs.field(factory=list)
    lost_requests: int = 0


async def play(player: Player, eid: str) -> None:
    for k in itertools.count():
        text = f"client {player.index}, note {k}"
        try:
            result = await player.client.command(eid, "add_note", text=text)
        except (ConnectionLost, ClientError) as exc:
            # In flight when its node died (or was being handed over): not acknowledged.
            if isinstance(exc, ClientError) and exc.name not in ("store_unavailable", "not_joined"):
                raise
            player.lost_requests += 1
            await trio.sleep(0.05)
            continue
        player.acked[result["first_seq"]] = text
        await trio.sleep(0.01)  # a table's pace, roughly: a few commands a second each


async def watch(player: Player) -> None:
    while True:
        player.seen.append((await player.client.notification("event"))["seq"])


ROUNDS = 3


async def test_killing_the_owner_fails_over_with_no_acknowledged_event_lost(
    tmp_path: Path,
) -> None:
    names = ["a", "b", "c"]
    with fresh_schema() as store, nodes(store, names, tmp_path, LEASE) as up:
        urls = [up[n].url for n in names]
        with trio.fail_after(helpers.deadline(180)):
            async with connect(urls[0], timeout=helpers.deadline(15)) as gm:
                created = await gm.create_encounter("Failover", "tavern", creatures())
                eid, token = created["encounter"], created["gm_token"]
            async with trio.open_nursery() as table:
                players = []
                for i in range(4):
                    entry = urls[i % len(urls)]
                    client = await table.start(_client, entry, urls)
                    await client.join(eid, token)
                    assert client.url == up[lease(store, eid)[0]].url
                    players.append(Player(client, i))
                for p in players:
                    table.start_soon(play, p, eid)
                    table.start_soon(watch, p)
                for round_ in range(ROUNDS):
                    plays = _all_past(players, 3)
                    await until(
                        plays,
                        20,
                        f"round {round_}: everyone plays",
                    )
                    owner, epoch, _ = lease(store, eid)
                    up[owner].kill()
                    # Two more each (one reply may have been on its way from the dead
                    # node), on a connection made again since the kill.
                    await until(
                        _resumed_since_now(players),
                        30,
                        f"round {round_}: everyone resumed after {owner} was killed",
                    )
                    now_owner, now_epoch, _ = lease(store, eid)
                    assert now_owner != owner and now_epoch > epoch
                    await until(
                        lambda: all(p.client.url == up[lease(store, eid)[0]].url for p in players),
                        10,
                        "every client on the new owner",
                    )
                    # Back, at the same address (as behind a proxy), as a spare.
                    up[owner].stop()
                    up[owner] = NodeProcess(store, owner, tmp_path, LEASE, port=up[owner].port)
                table.cancel_scope.cancel()
        stored = events(store, eid)
        last = stored[-1][0]
        assert [seq for seq, _ in stored] == list(range(1, last + 1))  # no gap, none twice
        texts = note_texts(store, eid)
        for p in players:
            assert all(texts.get(seq) == text for seq, text in p.acked.items())  # 0 lost
            assert p.seen == list(range(p.seen[0], p.seen[-1] + 1)), _jumps(
                p.seen
            )  # no gap, none twice
            assert p.client.moves >= 1


def _all_past(players: list[Player], more: int) -> Callable[[], bool]:
    """Whether every player has had ``more`` commands acknowledged since now."""
    counts = [len(p.acked) for p in players]
    return lambda: all(len(p.acked) >= c + more for p, c in zip(players, counts, strict=True))


def _resumed_since_now(players: list[Player]) -> Callable[[], bool]:
    """Whether every player connected again since now and had two more commands
    acknowledged (one reply may have been on its way from the dead node)."""
    played_on = _all_past(players, 2)
    moves = [p.client.moves for p in players]
    return lambda: (
        played_on() and all(p.client.moves > m for p, m in zip(players, moves, strict=True))
    )


async def _client(
    url: str, urls: list[str], *, task_status: trio.TaskStatus[ZonekeepClient]
) -> None:
    async with connect(url, timeout=helpers.deadline(15), also=urls, reconnect=True) as client:
        task_status.started(client)
        await trio.sleep_forever()


def _jumps(seen: list[int]) -> list[tuple[int, int, int]]:
    """Where ``seen`` skips or goes back: (index, seq, next seq)."""
    return [(i, a, b) for i, (a, b) in enumerate(itertools.pairwise(seen)) if b != a + 1]
