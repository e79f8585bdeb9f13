"""The last gaps of idempotency (issue 32, point 3; SPEC.md, "Idempotency", since 1.6), on
a real server over real websockets: a keyed ``save_arena`` or ``delete_arena`` repeated
on another connection of the same owner, and after a restart, gets its first answer and
changes nothing more; a keyed ``join``'s ``client_seed`` is mixed once however often the
join is sent; a keyed ``rotate_gm_token`` whose reply was lost is answered again to the
GM token it revoked (its ``token``), for a bounded time, and nothing else opens with it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
from e2e_support import Running, ServerConfig, start_server, sturdy_goblin_roster
from helpers import deadline
from lobby_support import add_gm_key, refused
from test_arena_library import crypt

from zonekeep.protocol.client import ZonekeepClient

MakeServer = Callable[..., Any]


async def arenas(running: Running) -> dict[str, tuple[str, str, float]]:
    """The library as stored: name -> (owner, text, updated)."""
    return {
        a.name: (a.owner, a.text, a.updated) for a in await running.server.store.library_arenas()
    }


async def test_keyed_save_and_delete_arena_are_done_once_across_connections_and_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    gwen = await add_gm_key(first, "gwen")
    bob = await add_gm_key(first, "bob")
    save: dict[str, Any] = {"arena": crypt(), "idempotency_key": "save-crypt-1"}
    delete: dict[str, Any] = {"name": "crypt", "idempotency_key": "delete-crypt-1"}
    async with first.client(gm_key=gwen) as one, first.client(gm_key=gwen) as two:
        with trio.fail_after(deadline(10)):
            saved = await one.request("save_arena", **save)
            assert saved == {"saved": True, "name": "crypt", "replaced": False, "problems": []}
            stored = await arenas(first)
            # Repeated on another connection of the same key: the first answer (not
            # "replaced"), and the arena is not saved again (its time is the first one's).
            assert await two.request("save_arena", **save) == saved
            assert await arenas(first) == stored
            # The same key for another arena is refused, and saves nothing.
            other: dict[str, Any] = {**save, "arena": crypt(arena_id="tomb")}
            error = await refused(two.request("save_arena", **other))
            assert (error.code, error.name) == (1011, "idempotency_key_reused")
            assert await arenas(first) == stored

            deleted = await one.request("delete_arena", **delete)
            assert deleted == {"name": "crypt"}
            # The repeat answers as the first did, not "no such arena".
            assert await two.request("delete_arena", **delete) == deleted
            # A late repeat of the save does not bring the deleted arena back.
            assert await two.request("save_arena", **save) == saved
            assert await arenas(first) == {}
            # Without a key the delete is a new request: refused, there is none.
            error = await refused(one.request("delete_arena", name="crypt"))
            assert error.name == "invalid_params"
            # A save with problems saves nothing and spends no key: the same key then
            # saves the mended arena.
            broken = crypt(arena_id="tomb")
            broken["links"] = [{"a": "nave", "b": "nowhere"}]
            spare: dict[str, Any] = {"arena": broken, "idempotency_key": "save-tomb"}
            assert (await one.request("save_arena", **spare))["saved"] is False
            mended = await one.request("save_arena", **{**spare, "arena": crypt(arena_id="tomb")})
            assert mended == {"saved": True, "name": "tomb", "replaced": False, "problems": []}
    await first.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    async with second.client(gm_key=gwen) as gm, second.client(gm_key=bob) as other_gm:
        with trio.fail_after(deadline(10)):
            before = await arenas(second)
            assert sorted(before) == ["tomb"]
            assert await gm.request("save_arena", **save) == saved
            assert await gm.request("delete_arena", **delete) == deleted
            assert await arenas(second) == before  # nothing saved, nothing deleted
            # Another owner's same key is another key: bob's save is done.
            bobs = await other_gm.request("save_arena", **save)
            assert bobs == saved
            assert (await arenas(second))["crypt"][0] == "gm:bob"
            # And gwen's repeated delete still deletes nothing (bob's crypt stays).
            assert await gm.request("delete_arena", **delete) == deleted
            assert "crypt" in await arenas(second)


async def contributions(client: ZonekeepClient, eid: str) -> tuple[int, int]:
    """The encounter's (seq, dice contributions) as ``client`` sees it."""
    snap = await client.request("snapshot", encounter=eid)
    return snap["seq"], snap["snapshot"]["dice"]["contributions"]


async def test_a_keyed_join_mixes_its_client_seed_once(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0), entropy=None)
    async with first.client() as gm, first.client() as alice, first.client() as again:
        with trio.fail_after(deadline(10)):
            created = await gm.create_encounter("Dice", "tavern", sturdy_goblin_roster())
            eid = created["encounter"]
            assert created["snapshot"]["dice"]["mode"] == "fair"
            seat = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
            joined = await alice.join(eid, seat, client_seed="socks", idempotency_key="j-1")
            assert joined["snapshot"]["dice"]["contributions"] == 1
            mixed = await contributions(gm, eid)
            # The join sent again (its reply lost) on another connection, resuming: it
            # joins, and mixes nothing (no event, the same count).
            resumed = await again.join(
                eid, seat, last_seq=joined["seq"], client_seed="socks", idempotency_key="j-1"
            )
            assert (resumed["role"], resumed["player"], resumed["events"]) == (
                "player",
                "alice",
                [],
            )
            assert await contributions(gm, eid) == mixed
            # The same key with another seed is refused, and mixes nothing.
            error = await refused(again.join(eid, seat, client_seed="boots", idempotency_key="j-1"))
            assert (error.code, error.name) == (1011, "idempotency_key_reused")
            assert await contributions(gm, eid) == mixed
            # The GM's seat has keys of its own: the same key there is a new one.
            await gm.join(eid, created["gm_token"], client_seed="dm-dice", idempotency_key="j-1")
            mixed = await contributions(gm, eid)
            assert mixed[1] == 2
    await first.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0), entropy=None)
    async with second.client() as alice, second.client() as gm:
        with trio.fail_after(deadline(10)):
            await alice.join(eid, seat, client_seed="socks", idempotency_key="j-1")
            await gm.join(eid, created["gm_token"], client_seed="dm-dice", idempotency_key="j-1")
            assert await contributions(gm, eid) == mixed  # after a restart too
            # Without a key every join's seed is mixed (as before 1.6).
            await alice.join(eid, seat, client_seed="socks")
            assert await contributions(gm, eid) == (mixed[0] + 1, 3)


async def test_a_lost_rotation_is_answered_again_to_the_revoked_token_for_a_while(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0))
    async with first.client() as gm:
        with trio.fail_after(deadline(10)):
            created = await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster())
            eid, old = created["encounter"], created["gm_token"]
            rotate: dict[str, Any] = {"encounter": eid, "idempotency_key": "rotate-9c1e"}
            rotated = await gm.request("rotate_gm_token", **rotate)
    # The GM whose reply was lost holds only the old token, revoked: it opens nothing ...
    async with first.client() as lost:
        with trio.fail_after(deadline(10)):
            assert (await refused(lost.join(eid, old))).name == "bad_token"
            # ... but the rotation repeated with it and its key gets the first answer,
            # again and again, and rotates nothing.
            assert await lost.request("rotate_gm_token", token=old, **rotate) == rotated
            assert await lost.request("rotate_gm_token", token=old, **rotate) == rotated
            assert (await lost.join(eid, rotated["token"]))["role"] == "gm"
            room = first.server.registry.get(eid)
            assert room is not None
            assert [g.role for g in room.grants] == ["gm"]
    async with first.client() as stranger:
        with trio.fail_after(deadline(10)):
            # Everything else with the old token is refused: another key, no key, a
            # request it does not repeat, a join.
            tried: list[dict[str, Any]] = [
                {"encounter": eid, "token": old, "idempotency_key": "rotate-guess"},
                {"encounter": eid, "token": old},
                {"encounter": eid, "token": rotated["token"], "idempotency_key": "x"},
            ]
            for params in tried:
                error = await refused(stranger.request("rotate_gm_token", **params))
                assert error.name == "bad_token", params
            # Malformed: a clear refusal.
            for bad in ("", "x" * 201):
                error = await refused(stranger.request("rotate_gm_token", token=bad, **rotate))
                assert error.name == "invalid_params" and "token" in error.message
            error = await refused(stranger.request("create_seat", encounter=eid, player="p"))
            assert error.name == "not_joined"
            assert (await refused(stranger.join(eid, old))).name == "bad_token"
    await first.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0))
    async with second.client() as lost:
        with trio.fail_after(deadline(10)):
            # After a restart, the encounter not loaded yet: the same first answer.
            assert second.server.registry.get(eid) is None
            assert await lost.request("rotate_gm_token", token=old, **rotate) == rotated
            # Past the window the old token gets nothing.
            later = time.time() + 601
            second.server.registry.clock = lambda: later
            error = await refused(lost.request("rotate_gm_token", token=old, **rotate))
            assert error.name == "bad_token" and "too long ago" in error.message
            second.server.registry.clock = time.time
            # Rotated again since: the first answer's token is no longer the GM's, and the
            # old token gets nothing either.
            async with second.client() as gm:
                await gm.join(eid, rotated["token"])
                await gm.request("rotate_gm_token", encounter=eid, idempotency_key="again")
            error = await refused(lost.request("rotate_gm_token", token=old, **rotate))
            assert error.name == "bad_token"
