"""Who may create encounters (GM keys, the server key, loopback, open mode) and the lobby
(``list_encounters``, ``encounter_links``, ``set_public``, ``archive_encounter``), over
real websockets to a real server (issue 15)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from browser.browser_support import lan_address, qr_matrix, qr_of
from e2e_support import Limits, Running, ServerConfig, creatures
from lobby_support import add_gm_key, closed_with, from_outside, refused

from zonekeep.protocol import CreateEncounterParams, ProtocolError
from zonekeep.protocol.client import connect
from zonekeep.server._registry import is_loopback

MakeServer = Callable[..., Any]
ARENAS = Path(__file__).parents[2] / "examples" / "arenas"


# -- who may create ----------------------------------------------------------------------------


async def test_with_gm_keys_only_a_gm_creates_and_the_encounter_is_theirs(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with running.client() as anyone:
        # A key is defined now: loopback alone no longer creates.
        error = await refused(anyone.create_encounter("Nope", "tavern", creatures()))
        assert (error.code, error.name) == (2004, "gm_key_required")
        assert "GM key" in error.message
    assert running.server.rooms == {}
    async with running.client(gm_key=key) as gwen:
        assert gwen.welcome is not None and gwen.welcome["gm"] == "gwen"
        created = await gwen.create_encounter("Gwen's table", "tavern", creatures())
    record = await running.server.store.get_record(created["encounter"])
    assert record is not None
    assert (record.creator, record.title, record.arena, record.status, record.public) == (
        "gm:gwen",
        "Gwen's table",
        "tavern",
        "open",
        False,
    )
    async with running.client() as anyone:
        assert anyone.welcome is not None and anyone.welcome["gm"] is None


async def test_a_wrong_gm_key_is_refused_and_the_connection_stays_unauthenticated(
    make_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with running.client(hello=False) as client:
        error = await refused(client.hello(gm_key=key[:-1] + "x"))
        assert (error.code, error.name) == (2003, "bad_gm_key")
        # Not greeted: anything but hello is refused; hello may be tried again.
        error = await refused(client.request("list_encounters"))
        assert error.name == "hello_required"
        welcome = await client.hello()
        assert welcome["gm"] is None
        error = await refused(client.create_encounter("Nope", "tavern", creatures()))
        assert error.name == "gm_key_required"
    assert key not in caplog.text and key[:-1] + "x" not in caplog.text


async def test_the_server_key_still_creates_beside_gm_keys(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0, server_key="op-s3cret"))
    await add_gm_key(running, "gwen")
    async with running.client() as client:
        error = await refused(client.create_encounter("K", "tavern", creatures()))
        assert error.name == "gm_key_required"
        created = await client.create_encounter("K", "tavern", creatures(), server_key="op-s3cret")
    record = await running.server.store.get_record(created["encounter"])
    assert record is not None and record.creator is not None
    assert record.creator.startswith("key:") and "op-s3cret" not in record.creator


async def test_with_no_key_loopback_creates_and_the_start_log_says_why(
    make_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="zonekeep.server")
    running: Running = await make_server()
    assert "creation: keys; no key defined, so loopback connections may create" in caplog.text
    async with running.client() as client:
        created = await client.create_encounter("Quick start", "tavern", creatures())
    record = await running.server.store.get_record(created["encounter"])
    assert record is not None and record.creator == "ip:127.0.0.1"


async def test_with_no_key_a_remote_address_may_not_create(make_server: MakeServer) -> None:
    # The server's decision for a client address other than loopback (an e2e client
    # always connects from loopback).
    running: Running = await make_server()
    registry = running.server.registry
    params = CreateEncounterParams(name="K", arena="tavern", creatures=creatures())
    for address in ("203.0.113.5", "2001:db8::1", "?"):
        with pytest.raises(ProtocolError) as info:
            await registry.creator_for(params, address, None)
        assert info.value.name == "gm_key_required"
    for address in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        assert is_loopback(address)
        assert await registry.creator_for(params, address, None) == f"ip:{address}"
    assert await registry.creator_for(params, "203.0.113.5", "gwen") == "gm:gwen"


async def test_open_creation_holds_anyone_to_the_per_ip_quotas(
    make_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="zonekeep.server")
    running: Running = await make_server(
        ServerConfig(port=0, creation="open", limits=Limits(open_encounters=1))
    )
    assert "creation: open" in caplog.text
    await add_gm_key(running, "gwen")  # a key is defined: "keys" would refuse anyone else
    async with running.client() as one, running.client() as two:
        first = await one.create_encounter("One", "tavern", creatures())
        error = await refused(two.create_encounter("Two", "tavern", creatures()))
        assert (error.code, error.name) == (5003, "quota_exceeded")
        assert "open_encounters" in error.message
        await one.command(first["encounter"], "end_encounter", force=True)
        assert (await two.create_encounter("Two", "tavern", creatures()))["role"] == "gm"
    registry = running.server.registry
    params = CreateEncounterParams(name="K", arena="tavern", creatures=creatures())
    assert await registry.creator_for(params, "203.0.113.5", None) == "ip:203.0.113.5"


# -- the lobby ---------------------------------------------------------------------------------


async def test_each_gm_lists_their_own_and_everyone_the_public_ones(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    gwen_key = await add_gm_key(running, "gwen")
    hal_key = await add_gm_key(running, "hal")
    async with (
        running.client(gm_key=gwen_key) as gwen,
        running.client(gm_key=hal_key) as hal,
        running.client() as anyone,
        running.client() as alice,
    ):
        private = (await gwen.create_encounter("Private", "tavern", creatures()))["encounter"]
        inline = json.loads((ARENAS / "tavern.json").read_text(encoding="utf-8"))
        inline["name"] = "The Copied Tavern"
        public = (await gwen.create_encounter("Public", inline, creatures(), public=True))[
            "encounter"
        ]
        hals = (await hal.create_encounter("Hal's", "tavern", creatures()))["encounter"]
        seat = (await gwen.request("create_seat", encounter=private, player="alice"))["token"]
        await alice.join(private, seat)

        listed = await gwen.list_encounters()
        by_id = {e["id"]: e for e in listed["encounters"]}
        assert set(by_id) == {private, public} and listed["total"] == 2
        assert by_id[private]["mine"] and by_id[public]["mine"]
        entry = by_id[private]
        assert (entry["title"], entry["arena"], entry["status"], entry["public"]) == (
            "Private",
            "tavern",
            "open",
            False,
        )
        assert entry["seats"] == [{"player": "alice", "connections": 1, "waiting": False}]
        assert entry["last_activity"].endswith("Z") and entry["phase"] == "surprise"
        assert by_id[public]["arena"] == "The Copied Tavern" and by_id[public]["public"]

        hal_list = {e["id"]: e["mine"] for e in (await hal.list_encounters())["encounters"]}
        assert hal_list == {hals: True, public: False}
        # Without a key (keys are defined, so loopback is nobody special): public ones.
        assert [e["id"] for e in (await anyone.list_encounters())["encounters"]] == [public]
        only_public = await gwen.list_encounters(public_only=True)
        assert [e["id"] for e in only_public["encounters"]] == [public]
        page = await gwen.list_encounters(limit=1, offset=1)
        assert page["total"] == 2 and len(page["encounters"]) == 1
        error = await refused(gwen.list_encounters(limit=0))
        assert (error.code, error.name) == (1005, "invalid_params")


async def test_encounter_links_rotate_the_gm_token_and_close_the_old_gm(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with (
        running.client(gm_key=key) as creator,
        running.client() as other_gm,
        running.client(gm_key=key) as lobby,
    ):
        created = await creator.create_encounter("Table", "tavern", creatures())
        eid, old = created["encounter"], created["gm_token"]
        await other_gm.join(eid, old)
        links = await lobby.encounter_links(eid)
        assert links["encounter"] == eid and links["gm_token"] != old
        assert sorted(links["seats"]) == ["alice", "bob"]  # the creatures' controllers
        # Both connections joined with the old GM token are closed (the asker was not
        # joined): the creator's too.
        assert links["closed"] == 2
        assert await closed_with(other_gm) == (4002, "token revoked")
        assert await closed_with(creator) == (4002, "token revoked")
        async with running.client() as again:
            error = await refused(again.join(eid, old))
            assert (error.code, error.name) == (2000, "bad_token")
            assert (await again.join(eid, links["gm_token"]))["role"] == "gm"
            joined = await again.join(eid, links["seats"]["bob"])
            assert (joined["role"], joined["player"]) == ("player", "bob")
            assert (await again.join(eid, links["spectator_token"]))["role"] == "spectator"
        # The GM who asks while joined as GM stays joined, with the new token.
        await lobby.join(eid, links["gm_token"])
        again_links = await lobby.encounter_links(eid)
        assert again_links["closed"] == 0
        assert "token" in await lobby.request("create_spectator_link", encounter=eid)


async def test_encounter_links_with_keep_gm_never_cost_the_gm_their_seat(
    make_server: MakeServer,
) -> None:
    """The lobby's "Open" and "Fresh links" (``keep_gm``): the GM's running table stays
    joined and its token keeps working; the new GM token works too; only a rotation
    (without ``keep_gm``) closes the table."""
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with running.client(gm_key=key) as creator, running.client(gm_key=key) as lobby:
        created = await creator.create_encounter("Table", "tavern", creatures())
        eid, old = created["encounter"], created["gm_token"]
        await creator.join(eid, old)
        kept = await lobby.request("encounter_links", encounter=eid, keep_gm=True)
        assert kept["closed"] == 0 and kept["gm_token"] != old
        assert sorted(kept["seats"]) == ["alice", "bob"]
        again = await lobby.request("encounter_links", encounter=eid, keep_gm=True)
        assert again["seats"]["alice"] != kept["seats"]["alice"]
        # The running table still acts as the GM.
        assert "token" in await creator.request("create_spectator_link", encounter=eid)
        async with running.client() as other:
            assert (await other.join(eid, old))["role"] == "gm"
            assert (await other.join(eid, kept["gm_token"]))["role"] == "gm"
            assert (await other.join(eid, kept["seats"]["alice"]))["player"] == "alice"
            error = await refused(other.request("encounter_links", encounter=eid, keep_gm="yes"))
            assert (error.code, error.name) == (1005, "invalid_params")
        # The deliberate rotation closes every table open with an earlier GM token.
        rotated = await lobby.encounter_links(eid)
        assert rotated["closed"] == 1
        assert await closed_with(creator) == (4002, "token revoked")
        async with running.client() as late:
            for token in (old, kept["gm_token"], again["gm_token"]):
                error = await refused(late.join(eid, token))
                assert (error.code, error.name) == (2000, "bad_token")


async def test_only_the_gm_who_created_it_manages_an_encounter(make_server: MakeServer) -> None:
    running: Running = await make_server()
    gwen_key = await add_gm_key(running, "gwen")
    hal_key = await add_gm_key(running, "hal")
    async with (
        running.client(gm_key=gwen_key) as gwen,
        running.client(gm_key=hal_key) as hal,
        running.client() as anyone,
    ):
        eid = (await gwen.create_encounter("Gwen's", "tavern", creatures()))["encounter"]
        for call in (
            hal.encounter_links(eid),
            hal.set_public(eid, True),
            hal.archive_encounter(eid),
        ):
            error = await refused(call)
            assert (error.code, error.name) == (3005, "not_your_encounter")
        for call in (anyone.encounter_links(eid), anyone.archive_encounter(eid)):
            error = await refused(call)
            assert (error.code, error.name) == (2004, "gm_key_required")
        error = await refused(gwen.encounter_links("e999-nothere"))
        assert (error.code, error.name) == (1007, "unknown_encounter")
        record = await running.server.store.get_record(eid)
        assert record is not None and record.status == "open" and not record.public


async def test_a_public_encounter_is_listed_and_watched_without_a_token(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with running.client(gm_key=key) as gwen, running.client() as watcher:
        eid = (await gwen.create_encounter("Show", "tavern", creatures()))["encounter"]
        error = await refused(watcher.join(eid, None))
        assert (error.code, error.name) == (2000, "bad_token")
        assert (await watcher.list_encounters())["encounters"] == []

        assert await gwen.set_public(eid, True) == {"encounter": eid, "public": True}
        assert [e["id"] for e in (await watcher.list_encounters())["encounters"]] == [eid]
        joined = await watcher.join(eid, None)
        assert joined["role"] == "spectator"
        assert "ogre" not in joined["snapshot"]["creatures"]  # a spectator's view
        error = await refused(watcher.command(eid, "add_note", text="hi"))
        assert error.name == "spectator_read_only"
        record = await running.server.store.get_record(eid)
        assert record is not None and record.public

        await gwen.set_public(eid, False)
        assert (await watcher.list_encounters())["encounters"] == []


async def test_archiving_tells_the_members_and_unloads_the_encounter(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with running.client(gm_key=key) as gwen, running.client() as alice:
        created = await gwen.create_encounter("Old", "tavern", creatures())
        eid = created["encounter"]
        seat = (await gwen.request("create_seat", encounter=eid, player="alice"))["token"]
        await alice.join(eid, seat)
        assert await gwen.archive_encounter(eid) == {"encounter": eid, "closed": 2}
        with trio.fail_after(helpers.deadline(10)):
            told = await alice.notification("encounter_closed")
        assert (told["encounter"], told["reason"]) == (eid, "archived")
        assert eid not in running.server.rooms
        # The connections stay open, no longer joined.
        assert await alice.request("ping") == {}
        error = await refused(alice.request("snapshot", encounter=eid))
        assert error.name == "unknown_encounter"
        error = await refused(alice.join(eid, seat))
        assert (error.code, error.name) == (1009, "encounter_archived")
        assert f"zonekeep encounters restore {eid}" in error.message
        (entry,) = (await gwen.list_encounters())["encounters"]
        assert (entry["id"], entry["status"]) == (eid, "archived")
        error = await refused(gwen.encounter_links(eid))
        assert error.name == "encounter_archived"


async def test_revoking_a_gm_key_closes_its_connections(make_server: MakeServer) -> None:
    running: Running = await make_server()
    key = await add_gm_key(running, "gwen")
    async with (
        running.client(gm_key=key) as lobby,
        running.client() as gm_seat,
        running.client() as alice,
    ):
        created = await lobby.create_encounter("Revoked", "tavern", creatures())
        eid, token = created["encounter"], created["gm_token"]
        seat = (await lobby.request("create_seat", encounter=eid, player="alice"))["token"]
        await gm_seat.join(eid, token)
        await alice.join(eid, seat)
        assert await from_outside(running, lambda store: store.revoke_gm_key("gwen"))
        assert await closed_with(lobby) == (4003, "gm key revoked")
        assert await closed_with(gm_seat) == (4003, "gm key revoked")
        assert await alice.request("ping") == {}  # players play on
    # The key opens nothing any more; the GM token handed out still opens the encounter.
    async with running.client(hello=False) as client:
        error = await refused(client.hello(gm_key=key))
        assert error.name == "bad_gm_key"
        await client.hello()
        assert (await client.join(eid, token))["role"] == "gm"


async def test_a_gm_key_is_held_to_the_quotas(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0, limits=Limits(open_encounters=1)))
    key = await add_gm_key(running, "gwen")
    async with running.client(gm_key=key) as gwen, running.client(gm_key=key) as again:
        first = (await gwen.create_encounter("One", "tavern", creatures()))["encounter"]
        # Another connection with the same key is the same creator.
        error = await refused(again.create_encounter("Two", "tavern", creatures()))
        assert (error.code, error.name) == (5003, "quota_exceeded")
        await gwen.archive_encounter(first)  # archiving frees the slot, as ending does
        assert (await again.create_encounter("Two", "tavern", creatures()))["role"] == "gm"


async def test_with_no_key_the_loopback_operator_sees_and_manages_everything(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server()
    async with running.client() as one, running.client() as operator:
        eid = (await one.create_encounter("Anyone's", "tavern", creatures()))["encounter"]
        (entry,) = (await operator.list_encounters())["encounters"]
        assert (entry["id"], entry["mine"]) == (eid, True)
        assert entry["seats"] == []
        links = await operator.encounter_links(eid)
        assert sorted(links["seats"]) == ["alice", "bob"]
        (entry,) = (await operator.list_encounters())["encounters"]
        # Issuing the links created the players' seats.
        assert entry["seats"] == [
            {"player": "alice", "connections": 0, "waiting": False},
            {"player": "bob", "connections": 0, "waiting": False},
        ]
    # Once a key exists, loopback is nobody special.
    await add_gm_key(running, "gwen")
    async with running.client() as nobody:
        assert (await nobody.list_encounters())["encounters"] == []
        error = await refused(nobody.archive_encounter(eid))
        assert error.name == "gm_key_required"


# -- the web table's home: where phones reach it, who may create, QR codes ---------------------


async def test_table_home_says_where_phones_reach_it_and_who_may_create(
    make_server: MakeServer,
) -> None:
    """A keyless server listening on every address: the operator's own machine may create
    (and its links are its own address); a laptop or phone that reaches it on the
    network is told, before building anything, that it may not and how to get a key, and
    its links and QR codes carry the address it reached the server at."""
    lan = lan_address()
    running: Running = await make_server(ServerConfig(host="0.0.0.0", port=0))
    port = running.server.port
    async with running.client() as operator:
        home = await operator.request("table_home")
        assert home["url"] == f"http://127.0.0.1:{port}/table/"
        assert home["may_create"] is True
        assert "its own machine (this browser) may create" in home["how"]
    async with connect(f"ws://{lan}:{port}/ws") as phone:
        home = await phone.request("table_home")
        assert home["url"] == f"http://{lan}:{port}/table/"
        assert home["may_create"] is False
        assert "zonekeep gm add NAME" in home["how"] and "only its own machine" in home["how"]
        # What the home says is what creating does.
        error = await refused(phone.create_encounter("Nope", "tavern", creatures()))
        assert error.name == "gm_key_required"
        link = await phone.request("table_link", encounter="e1-ab", token="t0k&en")
        url = f"http://{lan}:{port}/table/#encounter=e1-ab&token=t0k%26en"
        assert link["url"] == url
        assert link["qr_svg"].startswith("<svg")
        assert qr_matrix(link["qr_svg"]) == qr_of(url)
        for encounter, token in (("e" * 101, "t"), ("e1", "t" * 201)):
            error = await refused(phone.request("table_link", encounter=encounter, token=token))
            assert (error.code, error.name) == (1005, "invalid_params")
        error = await refused(phone.request("table_link", encounter="e1"))
        assert error.name == "invalid_params"
    key = await add_gm_key(running, "gwen")
    async with connect(f"ws://{lan}:{port}/ws", gm_key=key) as gwen:
        home = await gwen.request("table_home")
        assert (home["may_create"], home["url"]) == (True, f"http://{lan}:{port}/table/")
        assert "gwen's GM key" in home["how"]
    async with running.client() as anyone:
        home = await anyone.request("table_home")
        assert home["may_create"] is False
        assert home["how"].startswith("Creating encounters on this server needs a GM key")


async def test_links_use_public_url_whatever_address_the_page_was_opened_on(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, public_url="https://tables.example.org/zk")
    )
    async with running.client() as client:
        home = await client.request("table_home")
        assert home["url"] == "https://tables.example.org/zk/table/"
        link = await client.request("table_link", encounter="e2", token="abc")
        assert link["url"] == "https://tables.example.org/zk/table/#encounter=e2&token=abc"
