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
from e2e_support import Loaded, Running, creatures, sturdy_goblin_roster
from helpers import deadline
from lobby_support import refused

from zonekeep.protocol.client import ZonekeepClient

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
        spell = {
            "creature": "aria",
            "zone": "common_room",
            "shape": "sphere",
            "size": 10,
            "range": 0,
            "targets": ["gob", "bram"],
            "save": "dex",
            "damage_type": "thunder",
            "name": "Thunderclap",
        }
        for damage in HUGE:
            with trio.fail_after(deadline(5)):
                error = await refused(alice.command(eid, "area_effect", **spell, damage=damage))
            assert (error.code, error.name) == (4000, "invalid_params"), error
            assert error.message.startswith("The damage is not dice: ")
            assert len(error.message) < 200
        with trio.fail_after(deadline(5)):
            await gm.request("ping")
        assert running.server.rooms[eid].state.seq == seq
        assert [n["method"] for n in gm.pending_notifications()] == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
