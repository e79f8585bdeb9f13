"""Idempotency keys on the GM's token requests and the lobby's (issue 32, point 3;
SPEC.md, "Idempotency", since 1.6), on a real server over real websockets: a keyed
``create_seat``, ``create_spectator_link``, ``remove_seat``, ``revoke_spectator_link``,
``rotate_gm_token``, ``encounter_links``, ``set_public`` or ``archive_encounter``
repeated on another connection of the same GM seat or owner, and after a restart, gets
its first answer and changes nothing (no token made, revoked or rotated twice); the
answers kept for it hold no token a reader of the store could see."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
from e2e_support import Running, ServerConfig, start_server, sturdy_goblin_roster
from helpers import deadline
from lobby_support import add_gm_key, refused

from zonekeep.protocol.client import ZonekeepClient

MakeServer = Callable[..., Any]


def grants(running: Running, eid: str) -> list[tuple[str, str | None]]:
    """The loaded encounter's grants, as (role, player), sorted."""
    room = running.server.registry.get(eid)
    assert room is not None
    return sorted(((g.role, g.player) for g in room.grants), key=str)


async def test_token_requests_repeated_on_another_gm_connection_are_done_once(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0))
    async with running.client() as gm, running.client() as gm2, running.client() as watcher:
        with trio.fail_after(deadline(10)):
            created = await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster())
            eid = created["encounter"]
            await gm2.join(eid, created["gm_token"])

            seat = {"encounter": eid, "player": "carol", "idempotency_key": "seat-carol"}
            first_seat = await gm.request("create_seat", **seat)
            assert await gm2.request("create_seat", **seat) == first_seat
            link = {"encounter": eid, "idempotency_key": "link-1"}
            first_link = await gm.request("create_spectator_link", **link)
            assert await gm2.request("create_spectator_link", **link) == first_link
            assert grants(running, eid) == [("gm", None), ("player", "carol"), ("spectator", None)]

            # Taking back: the first revokes and closes; a repeat answers the same.
            await watcher.join(eid, first_link["token"])
            revoke = {"encounter": eid, "token": first_link["token"], "idempotency_key": "rv"}
            revoked = await gm.request("revoke_spectator_link", **revoke)
            assert revoked == {"closed": 1}
            assert await gm2.request("revoke_spectator_link", **revoke) == revoked
            # Without a key the same revocation is a new request, refused: it is gone.
            unkeyed = {k: v for k, v in revoke.items() if k != "idempotency_key"}
            assert (await refused(gm.request("revoke_spectator_link", **unkeyed))).name == (
                "invalid_params"
            )
            remove = {"encounter": eid, "player": "carol", "idempotency_key": "rm"}
            removed = await gm.request("remove_seat", **remove)
            assert await gm2.request("remove_seat", **remove) == removed
            assert grants(running, eid) == [("gm", None)]

            # A repeated rotation rotates nothing: the first answer's token stays the GM's.
            rotate = {"encounter": eid, "idempotency_key": "rot-1"}
            rotated = await gm.request("rotate_gm_token", **rotate)
            assert rotated["closed"] == 1  # gm2, joined with the old token
            assert await gm.request("rotate_gm_token", **rotate) == rotated
            assert grants(running, eid) == [("gm", None)]
            async with running.client() as gm3:
                assert (await gm3.join(eid, rotated["token"]))["role"] == "gm"
                assert await gm3.request("rotate_gm_token", **rotate) == rotated
            async with running.client() as old:
                assert (await refused(old.join(eid, created["gm_token"]))).name == "bad_token"


async def test_a_key_used_for_another_token_request_is_refused_and_makes_nothing(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0))
    async with running.client() as gm:
        with trio.fail_after(deadline(10)):
            eid = (await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster()))["encounter"]
            await gm.request("create_seat", encounter=eid, player="carol", idempotency_key="k")
            others: list[tuple[str, dict[str, Any]]] = [
                ("create_seat", {"player": "dave"}),
                ("create_spectator_link", {}),
                ("rotate_gm_token", {}),
            ]
            for method, params in others:
                error = await refused(
                    gm.request(method, encounter=eid, idempotency_key="k", **params)
                )
                assert (error.code, error.name) == (1011, "idempotency_key_reused"), method
            assert grants(running, eid) == [("gm", None), ("player", "carol")]
            # A refused request spends no key: a seat for nobody's creature, then the same
            # key for a request that works.
            error = await refused(
                gm.request(
                    "create_seat",
                    encounter=eid,
                    player="erin",
                    creatures=["nobody"],
                    idempotency_key="k2",
                )
            )
            assert error.name == "invalid_params"
            made = await gm.request(
                "create_seat", encounter=eid, player="erin", idempotency_key="k2"
            )
            assert made["player"] == "erin"


async def test_token_and_lobby_requests_are_answered_once_across_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    key = await add_gm_key(first, "gwen")
    gm_asks: list[tuple[str, dict[str, Any]]] = [
        ("create_seat", {"player": "carol", "idempotency_key": "a"}),
        ("create_spectator_link", {"idempotency_key": "b"}),
        ("rotate_gm_token", {"idempotency_key": "c"}),
    ]
    owner_asks: list[tuple[str, dict[str, Any]]] = [
        ("set_public", {"public": True, "idempotency_key": "d"}),
        ("encounter_links", {"idempotency_key": "e"}),
    ]
    archive: list[tuple[str, dict[str, Any]]] = [("archive_encounter", {"idempotency_key": "f"})]

    async def ask(client: ZonekeepClient, eid: str, asks: list[Any]) -> list[dict[str, Any]]:
        return [await client.request(m, encounter=eid, **p) for m, p in asks]

    async with first.client(gm_key=key) as gm:
        with trio.fail_after(deadline(10)):
            eid = (await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster()))["encounter"]
            gm_answers = await ask(gm, eid, gm_asks)
            owner_answers = await ask(gm, eid, owner_asks)
            links = owner_answers[1]
            # Repeated at once on another connection of the owner: the links are not made
            # again, and the GM token they gave still opens the encounter.
            async with first.client(gm_key=key) as owner:
                assert await ask(owner, eid, owner_asks) == owner_answers
            async with first.client() as table:
                assert (await table.join(eid, links["gm_token"]))["role"] == "gm"
            owner_answers += await ask(gm, eid, archive)
    assert owner_answers[2] == {"encounter": eid, "closed": 1}
    secrets = [
        gm_answers[0]["token"],
        gm_answers[1]["token"],
        gm_answers[2]["token"],
        links["gm_token"],
        links["spectator_token"],
        *links["seats"].values(),
    ]
    await first.server.shutdown()

    # The store keeps the answers, but no token of theirs can be read from its files.
    stored = b"".join(p.read_bytes() for p in data.iterdir() if p.is_file())
    assert b"request:" + eid.encode() in stored  # the answers are there ...
    for secret in secrets:
        assert secret.encode() not in stored  # ... sealed

    second = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    async with second.client(gm_key=key) as owner:
        with trio.fail_after(deadline(10)):
            # Archived: the owner's repeats still get their first answers, and change
            # nothing (an unkeyed encounter_links would be refused: it is archived).
            assert await ask(owner, eid, owner_asks + archive) == owner_answers
            record = await second.server.store.get_record(eid)
            assert record is not None and record.status == "archived" and record.public
            error = await refused(owner.request("encounter_links", encounter=eid))
            assert error.name == "encounter_archived"


async def test_the_gm_seats_repeats_survive_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0))
    asks: list[tuple[str, dict[str, Any]]] = [
        ("create_seat", {"player": "carol", "idempotency_key": "a"}),
        ("create_spectator_link", {"idempotency_key": "b"}),
        ("rotate_gm_token", {"idempotency_key": "c"}),
        ("remove_seat", {"player": "carol", "idempotency_key": "d"}),
    ]
    async with first.client() as gm:
        with trio.fail_after(deadline(10)):
            eid = (await gm.create_encounter("Keys", "tavern", sturdy_goblin_roster()))["encounter"]
            answers = [await gm.request(m, encounter=eid, **p) for m, p in asks]
            before = grants(first, eid)
    await first.server.shutdown()

    second = await start_server(nursery, data, ServerConfig(port=0))
    async with second.client() as gm:
        with trio.fail_after(deadline(10)):
            await gm.join(eid, answers[2]["token"])  # the rotated token opens it
            again = [await gm.request(m, encounter=eid, **p) for m, p in asks]
            assert again == answers
            assert grants(second, eid) == before == [("gm", None), ("spectator", None)]
            async with second.client() as watcher:
                joined = await watcher.join(eid, answers[1]["token"])
                assert joined["role"] == "spectator"


async def test_a_keyed_create_encounter_makes_one_encounter_across_connections_and_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """A creation whose reply was lost is sent again with its key: no second encounter;
    the repeat joins the first one as its GM, with the first answer's ids and tokens."""
    data = tmp_path / "data"
    first = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    key = await add_gm_key(first, "gwen")
    other_key = await add_gm_key(first, "hal")
    ask: dict[str, Any] = {
        "name": "Once",
        "arena": "tavern",
        "creatures": sturdy_goblin_roster(),
        "seats": [{"player": "ana"}],
        "idempotency_key": "make-once-7f3a",
    }
    async with first.client(gm_key=key) as gm:
        with trio.fail_after(deadline(10)):
            made = await gm.request("create_encounter", **ask)
    eid = made["encounter"]
    async with first.client(gm_key=key) as again:
        with trio.fail_after(deadline(10)):
            repeat = await again.request("create_encounter", **ask)
            assert {k: repeat[k] for k in ("encounter", "gm_token", "role", "seats")} == {
                k: made[k] for k in ("encounter", "gm_token", "role", "seats")
            }
            # The repeat's connection is the GM's: it can act on the encounter.
            assert (await again.request("create_seat", encounter=eid, player="ben"))["token"]
            # The same key with other params is refused and makes nothing.
            changed = {**ask, "name": "Twice"}
            error = await refused(again.request("create_encounter", **changed))
            assert error.name == "idempotency_key_reused"
    # Another creator's same key is another key: it makes its own encounter.
    async with first.client(gm_key=other_key) as hal:
        with trio.fail_after(deadline(10)):
            hals = await hal.request("create_encounter", **ask)
            assert hals["encounter"] != eid
    assert sorted(await first.server.store.encounters()) == sorted([eid, hals["encounter"]])
    await first.server.shutdown()
    stored = b"".join(p.read_bytes() for p in data.iterdir() if p.is_file())
    assert made["gm_token"].encode() not in stored  # the kept answer is sealed

    second = await start_server(nursery, data, ServerConfig(port=0), sqlite=True)
    async with second.client(gm_key=key) as gm:
        with trio.fail_after(deadline(10)):
            after = await gm.request("create_encounter", **ask)
            assert (after["encounter"], after["gm_token"]) == (eid, made["gm_token"])
            assert after["seats"] == made["seats"]
            # Rotated since: the repeat makes nothing and says why.
            await gm.request("rotate_gm_token", encounter=eid)
    async with second.client(gm_key=key) as late:
        with trio.fail_after(deadline(10)):
            error = await refused(late.request("create_encounter", **ask))
            assert error.name == "bad_token"
    assert len(await second.server.store.encounters()) == 2
