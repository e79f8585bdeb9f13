"""Hardening (issue 27, points 4 to 8): the game's own requests, each attack sent over real
sockets to a real server on a loopback port.

4. a player's or spectator's resume costs what it missed (not a refold of the whole
   log), and that work is counted: a flood of resumes is refused (``rate_limited``);
5. four connections holding one seat token, sending a character at the same moment,
   give the seat one character; the others are refused;
6. a character's damage is bounded like every other number of its sheet;
7. a submitted character's id says nothing about hidden creatures;
8. huge integers in dice strings are refused by the dice parser: ``check_character``
   lists a problem (no ``internal_error``), a player's ``area_effect`` is refused
   (``invalid_params``: no ``plugin_error``, nothing for the GM, no traceback).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from e2e_support import (
    Limits,
    Loaded,
    Running,
    ServerConfig,
    creatures,
    sturdy_goblin_roster,
    thunderclap,
)
from helpers import deadline
from lobby_support import refused

from zonekeep.protocol.client import ZonekeepClient
from zonekeep.sdk.host import event_to_dict, replay_steps
from zonekeep.server._visibility import Viewer, event_for

ROOT = Path(__file__).parents[2]
ARIA: dict[str, Any] = json.loads((ROOT / "examples" / "characters" / "aria.json").read_text())
MakeServer = Callable[..., Any]


def with_damage(damage: str) -> dict[str, Any]:
    """Aria's character file, her first attack dealing ``damage``."""
    attacks = [dict(a) for a in ARIA["attacks"]]
    attacks[0]["damage"] = damage
    return {**ARIA, "attacks": attacks}


async def seat_encounter(
    gm: ZonekeepClient, roster: list[dict[str, Any]], players: tuple[str, ...] = ("Ana",)
) -> tuple[str, dict[str, str]]:
    """An encounter over the tavern with ``roster`` and seats waiting for characters."""
    created = await gm.create_encounter(
        "Hardening", "tavern", roster, seats=[{"player": p} for p in players]
    )
    return created["encounter"], created["seats"]


# -- 4. a resume costs what it missed, and is paid for ----------------------------------------

FAST = Limits(rate_per_second=1000.0, rate_burst=1000)


class ReadCounter:
    """Counts the events ``store.read`` hands the server for one encounter."""

    def __init__(self, running: Running, eid: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events = 0
        store = running.server.store
        read = store.read

        async def counted(encounter: str, after_seq: int = 0) -> Any:
            found = await read(encounter, after_seq)
            if encounter == eid:
                self.events += len(found)
            return found

        monkeypatch.setattr(store, "read", counted)


async def notes(gm: ZonekeepClient, eid: str, count: int, *, hidden: bool = False) -> int:
    """``count`` notes by the GM, one event each; the seq of the last."""
    seq = 0
    for n in range(count):
        seq = (await gm.command(eid, "add_note", text=f"note {n}", hidden=hidden))["last_seq"]
    return seq


def reference(log: list[tuple[int, Any]], catalog: Any, view: Viewer, after: int) -> list[Any]:
    """The events after ``after`` as ``view`` may see them, each filtered with the state
    folded from the start of the log: the resume as the server used to build it."""
    steps = zip(log, replay_steps((e for _, e in log), catalog), strict=True)
    return [
        event_for(event_to_dict(e), state, view, catalog)
        for (seq, e), state in steps
        if seq > after
    ]


async def test_a_resume_folds_what_it_missed_not_the_whole_log(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    running: Running = await make_server(ServerConfig(port=0, limits=FAST, durability="normal"))
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        with trio.fail_after(deadline(30)):
            created = await gm.create_encounter("Resume", "tavern", creatures())
            eid = created["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            link = await gm.request("create_spectator_link", encounter=eid)
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            seq = await notes(gm, eid, 150 - running.server.rooms[eid].state.seq)
        assert seq == 150
        room = running.server.rooms[eid]
        reads = ReadCounter(running, eid, monkeypatch)
        for client, token in ((alice, seat["token"]), (watcher, link["token"])):
            # Nothing missed: nothing read, nothing folded (it used to be all 150 events).
            with trio.fail_after(deadline(5)):
                joined = await client.join(eid, token, last_seq=seq)
            assert (joined["seq"], joined["events"]) == (seq, [])
            assert reads.events == 0
            assert room.folded == 0
        # Three events missed: folded from the state the room kept at seq 128 (the
        # first of its block of 128 seqs), not from the start.
        with trio.fail_after(deadline(5)):
            await gm.command(eid, "add_note", text="The ogre waits.", hidden=True)
            await gm.command(eid, "add_note", text="Rain.")
            await gm.command(eid, "override", creature="ogre", field="hp", value=50)
        async with running.client() as again:
            with trio.fail_after(deadline(5)):
                resumed = await again.join(eid, seat["token"], last_seq=seq)
        assert [e["type"] for e in resumed["events"]] == ["hidden", "note_added", "hidden"]
        assert reads.events == 153 - 128
        assert room.folded == 153 - 128

        async def same_as_the_whole_fold(*afters: int) -> None:
            log = await running.server.store.read(eid)
            catalog = running.server.engine.catalog
            for token, view in ((seat["token"], Viewer(player="alice")), (link["token"], Viewer())):
                for after in afters:
                    async with running.client() as client:
                        with trio.fail_after(deadline(5)):
                            got = await client.join(eid, token, last_seq=after)
                    assert got["events"] == reference(log, catalog, view, after), (view, after)
                    assert got["seq"] == log[-1][0]

        # Every resume is the one the whole log's fold gives, across a rewind to after
        # the kept state (folded from it) and one to before it (from the start).
        with trio.fail_after(deadline(5)):
            await gm.request("rewind", encounter=eid, to_seq=152)
            await gm.command(eid, "add_note", text="Thunder.")  # 155
        await same_as_the_whole_fold(0, 127, 128, 140, 151, 152, 153, 154)
        with trio.fail_after(deadline(5)):
            await gm.request("rewind", encounter=eid, to_seq=60)
            await notes(gm, eid, 2)  # 158
        await same_as_the_whole_fold(0, 59, 60, 128, 152, 154, 155, 156, 157)


async def test_a_flood_of_resumes_is_refused_once_their_folds_spent_the_budget(
    make_server: MakeServer,
) -> None:
    limits = Limits(
        rate_per_second=1000.0,
        rate_burst=1000,
        reply_bytes_burst=30_000,
        reply_bytes_per_second=1.0,
    )
    running: Running = await make_server(ServerConfig(port=0, limits=limits, durability="normal"))
    async with running.client() as gm, running.client() as stranger:
        with trio.fail_after(deadline(30)):
            created = await gm.create_encounter("Public", "tavern", creatures(), public=True)
            eid = created["encounter"]
            seq = await notes(gm, eid, 150, hidden=True)
        room = running.server.rooms[eid]
        # No token: a public encounter's spectator. Each replay from the start is a
        # short reply (every event hidden, 17 bytes) but folds the whole log.
        with trio.fail_after(deadline(5)):
            first = await stranger.join(eid, None, last_seq=0)
        assert len(first["events"]) == seq
        assert len(json.dumps(first)) < 12_000  # the bytes alone would allow two more
        with trio.fail_after(deadline(5)):
            error = await refused(stranger.join(eid, None, last_seq=0))
        assert (error.code, error.name) == (5001, "rate_limited")
        assert room.folded == seq
        assert error.message.startswith("Too many bytes of snapshots and replays")
        assert room.folded == seq  # refused before anything was read or folded
        # A connection of its own has its own budget; the GM's is not touched.
        with trio.fail_after(deadline(5)):
            again = await gm.join(eid, created["gm_token"], last_seq=0)
        assert len(again["events"]) == seq


# -- 5. one character per seat, whatever the race --------------------------------------------


async def test_four_sockets_sending_one_seats_character_at_once_make_one_character(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    methods = running.server.methods
    entered = [0]
    all_in = trio.Event()
    submit = methods.m_submit_character

    async def counted(client: Any, params: Any) -> Any:
        entered[0] += 1
        if entered[0] == 4:
            all_in.set()
        return await submit(client, params)

    monkeypatch.setattr(methods, "m_submit_character", counted)
    names = ("Aria", "Brom", "Cass", "Dara")
    async with running.client() as gm:
        with trio.fail_after(deadline(5)):
            eid, seats = await seat_encounter(gm, [])
        room = running.server.rooms[eid]
        commit = room.commit

        async def gated(*args: Any, **kw: Any) -> None:
            # The first character's event waits until all four requests reached the server.
            await all_in.wait()
            await commit(*args, **kw)

        monkeypatch.setattr(room, "commit", gated)
        outcomes: dict[str, Any] = {}
        async with (
            running.client() as a,
            running.client() as b,
            running.client() as c,
            running.client() as d,
        ):
            clients = dict(zip(names, (a, b, c, d), strict=True))
            with trio.fail_after(deadline(5)):
                for client in clients.values():
                    await client.join(eid, seats["Ana"])

                async def send(name: str, client: ZonekeepClient) -> None:
                    sheet = {**ARIA, "name": name}
                    try:
                        outcomes[name] = await client.request(
                            "submit_character", encounter=eid, character=sheet
                        )
                    except Exception as exc:  # ClientError, asserted below
                        outcomes[name] = exc

                async with trio.open_nursery() as nursery:
                    for name, client in clients.items():
                        nursery.start_soon(send, name, client)
    sent = {n: o for n, o in outcomes.items() if isinstance(o, dict)}
    others = {n: o for n, o in outcomes.items() if not isinstance(o, dict)}
    assert len(sent) == 1, outcomes
    assert len(others) == 3
    for error in others.values():
        assert (error.code, error.name) == (1005, "invalid_params")
        assert error.message == "Ana's seat already has its character in the encounter."
    [(name, result)] = sent.items()
    state = running.server.rooms[eid].state
    mine = [c for c in state.creatures.values() if c.controller == "Ana"]
    assert [(c.id, c.name) for c in mine] == [(result["creature"], name)]
    stored = [type(e).__name__ for _, e in await running.server.store.read(eid)]
    assert stored.count("CreatureAdded") == 1


# -- 6. a character's damage is bounded --------------------------------------------------------


async def test_a_characters_damage_is_bounded_like_the_rest_of_its_sheet(
    running: Running,
) -> None:
    async with running.client() as gm, running.client() as ana:
        with trio.fail_after(deadline(5)):
            eid, seats = await seat_encounter(gm, [])
            await ana.join(eid, seats["Ana"])
            seq = running.server.rooms[eid].state.seq
            where = "character.attacks[0].damage"
            for damage, message in (
                ("1d4+999", "the modifier (999) must be from -5 to 20"),
                ("1d8-6", "the modifier (-6) must be from -5 to 20"),
                ("21d6", "the number of dice (21) must be from 1 to 20"),
                ("2d100+3", "the die's sides (100) must be from 2 to 20"),
                ("0", "a flat damage is at least 1, not 0"),
                ("21", "21 is outside -5 to 20"),
            ):
                checked = await ana.request("check_character", character=with_damage(damage))
                assert checked["problems"] == [{"path": where, "message": message}], damage
                error = await refused(
                    ana.request("submit_character", encounter=eid, character=with_damage(damage))
                )
                assert error.name == "invalid_params"
                assert error.message == f"That character is not valid: {where}: {message}."
            assert running.server.rooms[eid].state.seq == seq
            # At the bounds, it is a character.
            for damage in ("20d20+20", "1d4-5", "20"):
                checked = await ana.request("check_character", character=with_damage(damage))
                assert checked["problems"] == [], damage
            sent = await ana.request(
                "submit_character", encounter=eid, character=with_damage("20d20+20")
            )
        aria = running.server.rooms[eid].state.creatures[sent["creature"]]
        assert aria.attacks[0].damage == "20d20+20"


# -- 7. ids that say nothing of hidden creatures -------------------------------------------------


async def test_a_characters_id_does_not_say_that_a_hidden_creature_bears_its_name(
    running: Running,
) -> None:
    assassin = {**creatures()[3], "id": "assassin", "name": "Assassin", "hidden": True}
    async with running.client() as gm:
        ids = {}
        for label, roster in (("hidden", [assassin]), ("none", [])):
            with trio.fail_after(deadline(5)):
                eid, seats = await seat_encounter(gm, roster)
                async with running.client() as ana:
                    await ana.join(eid, seats["Ana"])
                    sheet = {**ARIA, "name": "Assassin"}
                    sent = await ana.request("submit_character", encounter=eid, character=sheet)
                    snapshot = (await ana.request("snapshot", encounter=eid))["snapshot"]
            ids[label] = sent["creature"]
            # The player sees the new creature under that id, and no hidden one.
            assert list(snapshot["creatures"]) == [sent["creature"]]
            assert running.server.rooms[eid].state.creatures[sent["creature"]].name == "Assassin"
    # Both ids have the same form: the name, then a random suffix that counts nothing.
    for cid in ids.values():
        assert re.fullmatch(r"assassin-[0-9a-f]{6}", cid), ids
    assert ids["hidden"] != "assassin-2"


# -- 8. huge integers in dice strings ---------------------------------------------------------

HUGE = ("1d4+" + "9" * 5000, "9" * 5000 + "d6", "1d4+99999999999999999999", "99999999999d6")


async def test_check_character_lists_a_huge_number_in_its_damage_as_a_problem(
    running: Running,
) -> None:
    async with running.client() as client:
        for damage in HUGE:
            with trio.fail_after(deadline(5)):
                checked = await client.request("check_character", character=with_damage(damage))
            [problem] = checked["problems"]
            assert problem["path"] == "character.attacks[0].damage"
            assert "dice" in problem["message"] or "adds too much" in problem["message"]
            assert len(problem["message"]) < 200  # the thousands of digits are not echoed


async def test_a_players_area_effect_with_a_huge_number_is_refused_at_the_parser(
    make_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    running: Running = await make_server(entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(deadline(5)):
            eid = (await gm.create_encounter("Dice", "tavern", sturdy_goblin_roster()))["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await alice.join(eid, seat["token"])
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
        state = running.server.rooms[eid].state
        assert state.active == "aria"
        seq = state.seq
        gm.pending_notifications()
        for damage in HUGE:
            with trio.fail_after(deadline(5)):
                error = await refused(
                    alice.command(eid, "area_effect", **thunderclap(damage=damage))
                )
            assert (error.code, error.name) == (4000, "invalid_params"), error
            assert error.message.startswith("The damage is not dice: ")
            assert len(error.message) < 200
        with trio.fail_after(deadline(5)):
            await gm.request("ping")
        assert running.server.rooms[eid].state.seq == seq
        assert [n["method"] for n in gm.pending_notifications()] == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_roster_creature_with_a_huge_number_in_its_damage_is_refused(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    gob = sturdy_goblin_roster()[2]
    async with running.client() as gm:
        for damage in HUGE:
            brute = {**gob, "id": "brute", "attacks": [{**gob["attacks"][0], "damage": damage}]}
            with trio.fail_after(deadline(5)):
                error = await refused(gm.create_encounter("Brutes", "tavern", [brute]))
            assert (error.code, error.name) == (4000, "invalid_params")
            assert "creatures[0].attacks[0].damage: " in error.message
            assert len(error.message) < 300
        with trio.fail_after(deadline(5)):
            eid = (await gm.create_encounter("Brutes", "tavern", [gob]))["encounter"]
            seq = running.server.rooms[eid].state.seq
            error = await refused(gm.command(eid, "add_creature", creature=brute))
        assert (error.code, error.name) == (4000, "invalid_params")
        assert running.server.rooms[eid].state.seq == seq
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
