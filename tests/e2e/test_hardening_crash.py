"""Hardening (issue 14, points 1 and 2): frames that used to kill an encounter or start a
runaway, sent over a real socket to a real server.

- A command nested hundreds of levels deep is refused at parse time (``parse_error``),
  and the encounter plays on.
- Whatever fails while the room's loop handles one command (masking, rules, store,
  fan-out) is answered to its sender as ``internal_error``, reported to the GM, and
  the loop goes on.
- Numeric encounter options are bounded; ``NaN``/``Infinity`` are not JSON; integers
  too long to read are ``invalid_params``; a store that already holds a bad option is
  clamped when loaded instead of running away.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, creatures

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import (
    GM_ACTOR,
    Command,
    EncounterOptions,
    RandomEntropy,
    creature_from_dict,
    load_arena,
)
from zonekeep.sdk.engine import Engine
from zonekeep.server import ZonekeepServer
from zonekeep.server._encounter_file import EncounterFileError, load_encounter, parse_encounter
from zonekeep.server._fanout import fan_out
from zonekeep.server._room import Room, token_hash
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import StoredGrant
from zonekeep.server._wire import encode_message

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)


class Table:
    """An encounter with its GM and one seated player (alice, who controls aria)."""

    def __init__(self, eid: str, gm: ZonekeepClient, alice: ZonekeepClient) -> None:
        self.eid, self.gm, self.alice = eid, gm, alice

    async def snapshot(self) -> dict[str, Any]:
        with trio.fail_after(WAIT):
            snapshot: dict[str, Any] = (await self.gm.request("snapshot", encounter=self.eid))[
                "snapshot"
            ]
            return snapshot


@asynccontextmanager
async def table(running: Running, **create: Any) -> AsyncIterator[Table]:
    async with AsyncExitStack() as stack:
        gm = await stack.enter_async_context(running.client())
        alice = await stack.enter_async_context(running.client())
        created = await gm.create_encounter("Hardening", "tavern", creatures(), **create)
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        await alice.join(eid, seat["token"])
        yield Table(eid, gm, alice)


async def raw_reply(client: ZonekeepClient, frame: str) -> dict[str, Any]:
    """Send ``frame`` as is; the reply (matched by nobody, so an ``_unmatched`` one)."""
    await client.send_raw(frame)
    with trio.fail_after(WAIT):
        return await client.notification("_unmatched")


async def plays_on(t: Table) -> None:
    """The GM's setup commands still apply: the room's loop is alive."""
    with trio.fail_after(WAIT):
        snapshot = await t.snapshot()
        before = snapshot["seq"]
        kind, params = NEXT_SETUP_STEP[snapshot["phase"]]
        result = await t.gm.command(t.eid, kind, **params)
        assert result["first_seq"] == before + 1
        assert (await t.snapshot())["seq"] == result["last_seq"]


#: The GM's next setup command in each phase before the turns.
NEXT_SETUP_STEP: dict[str, tuple[str, dict[str, Any]]] = {
    "surprise": ("set_surprise", {"surprised": []}),
    "positions": ("place", {"positions": {}}),
    "initiative": ("roll_initiative", {}),
}


def nested(depth: int) -> str:
    return "[" * depth + '"aria"' + "]" * depth


# -- point 1: one frame killed an encounter ------------------------------------------------------


@pytest.mark.parametrize("depth", [33, 600])
async def test_a_deeply_nested_command_is_refused_and_the_encounter_plays_on(
    running: Running, depth: int
) -> None:
    async with table(running) as t:
        before = await t.snapshot()
        frame = (
            '{"id":"deep","method":"command","params":{"encounter":'
            + json.dumps(t.eid)
            + ',"type":"move","params":{"creature":'
            + nested(depth)
            + ',"to":"yard"}}}'
        )
        reply = await raw_reply(t.alice, frame)
        assert reply["id"] is None
        assert (reply["error"]["name"], reply["error"]["code"]) == ("parse_error", 1000)
        assert "32 levels" in reply["error"]["message"]
        assert await t.snapshot() == before
        await plays_on(t)


async def test_nesting_at_the_limit_is_still_read(running: Running) -> None:
    """32 levels (the request object is the first) reach the method: no parse_error."""
    async with table(running) as t:
        frame = (
            '{"id":"edge","method":"command","params":{"encounter":'
            + json.dumps(t.eid)
            + ',"type":"move","params":{"creature":'
            + nested(29)
            + ',"to":"yard"}}}'
        )
        reply = await raw_reply(t.alice, frame)
        assert reply["id"] == "edge"
        assert reply["error"]["name"] != "parse_error"
        await plays_on(t)


async def test_a_hundred_thousand_levels_are_a_parse_error(make_server: MakeServer) -> None:
    """Past a frame size limit raised for the test, the parser itself refuses 100,000
    levels (``json.loads`` would recurse) with ``parse_error``; the connection lives."""
    running = await make_server(ServerConfig(port=0, limits=Limits(max_message_bytes=1_000_000)))
    async with table(running) as t:
        for depth in (100_000, 3_000):
            frame = '{"id":1,"method":"ping","params":{"x":' + nested(depth) + "}}"
            reply = await raw_reply(t.gm, frame)
            assert reply["error"]["name"] == "parse_error", reply
        await plays_on(t)


@pytest.mark.parametrize("stage", ["masking", "rules", "store", "fan-out"])
async def test_a_failure_in_any_stage_is_an_internal_error_and_the_loop_goes_on(
    running: Running, monkeypatch: pytest.MonkeyPatch, stage: str, caplog: Any
) -> None:
    """One injected failure per stage: the sender gets ``internal_error`` (the rules'
    own crash keeps its ``encounter_crashed``), the GM an ``encounter_error``, the log
    names the encounter, and the next commands play on."""
    armed = [True]

    def once(original: Callable[..., Any]) -> Callable[..., Any]:
        def fail_once(*args: Any, **kw: Any) -> Any:
            if armed[0]:
                armed[0] = False
                raise RuntimeError(f"injected {stage} failure")
            return original(*args, **kw)

        return fail_once

    async with table(running) as t:
        if stage == "masking":
            monkeypatch.setattr(Room, "mask", once(Room.mask))
        elif stage == "rules":
            engine = running.server.engine
            monkeypatch.setattr(engine, "handle", once(engine.handle))
        elif stage == "store":
            store = running.server.store
            original = store.append

            async def append(*args: Any, **kw: Any) -> None:
                if armed[0]:
                    armed[0] = False
                    raise RuntimeError("injected store failure")
                await original(*args, **kw)

            monkeypatch.setattr(store, "append", append)
        else:
            monkeypatch.setattr("zonekeep.server._room.fan_out", once(fan_out))
        sender = t.alice if stage == "masking" else t.gm
        t.gm.pending_notifications()
        caplog.set_level(logging.ERROR, logger="zonekeep.room")
        with trio.fail_after(WAIT), pytest.raises(ClientError) as info:
            if stage == "masking":
                await sender.command(t.eid, "move", creature="aria", to="yard")
            else:
                await sender.command(t.eid, "set_surprise", surprised=[])
        expected = "encounter_crashed" if stage == "rules" else "internal_error"
        assert info.value.name == expected, info.value.message
        assert not armed[0]
        with trio.fail_after(WAIT):
            report = await t.gm.notification("encounter_error")
        assert report["encounter"] == t.eid
        if stage == "fan-out":
            # The command was stored before the fan-out failed: everyone is brought up
            # to date with a snapshot.
            with trio.fail_after(WAIT):
                fresh = await t.alice.notification("snapshot")
            assert fresh["snapshot"]["phase"] == "positions"
        if stage != "rules":
            assert f"injected {stage} failure" in report["message"]
            assert any(t.eid in r.getMessage() for r in caplog.records), caplog.records
        await plays_on(t)
        # And once more, from the player's side.
        with trio.fail_after(WAIT), pytest.raises(ClientError) as again:
            await t.alice.command(t.eid, "move", creature="gob", to="yard")
        assert again.value.name != "encounter_crashed"


# -- point 2: numeric options ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "named", "range_text"),
    [
        ({"turn_seconds": 0}, "turn_seconds", "10 to 3,600"),
        ({"turn_seconds": -5}, "turn_seconds", "10 to 3,600"),
        ({"turn_seconds": 9.5}, "turn_seconds", "10 to 3,600"),
        ({"turn_seconds": 3601}, "turn_seconds", "10 to 3,600"),
        ({"turn_seconds": 10**40}, "turn_seconds", "10 to 3,600"),
        ({"reaction_seconds": 0}, "reaction_seconds", "5 to 600"),
        ({"reaction_seconds": 601}, "reaction_seconds", "5 to 600"),
        ({"round_seconds": 0}, "round_seconds", "1 to 60"),
    ],
)
async def test_numeric_options_out_of_range_are_refused_naming_option_and_range(
    running: Running, options: dict[str, Any], named: str, range_text: str
) -> None:
    async with running.client() as gm:
        with trio.fail_after(WAIT), pytest.raises(ClientError) as info:
            await gm.create_encounter("Runaway", "tavern", creatures(), options=options)
        assert info.value.name == "invalid_params", info.value.message
        assert f"options.{named}" in info.value.message
        assert range_text in info.value.message
        assert running.server.rooms == {}


async def test_options_at_the_ends_of_their_ranges_are_accepted(running: Running) -> None:
    async with running.client() as gm:
        for options in (
            {"turn_seconds": 10, "reaction_seconds": 5, "round_seconds": 1},
            {"turn_seconds": 3600, "reaction_seconds": 600, "round_seconds": 60},
            {"turn_seconds": None},
        ):
            created = await gm.create_encounter("Edge", "tavern", creatures(), options=options)
            assert created["encounter"] in running.server.rooms


def _create_with_turn_seconds(request_id: str, number: str) -> str:
    """A ``create_encounter`` frame whose ``options.turn_seconds`` is ``number``, as written."""
    return (
        f'{{"id":"{request_id}","method":"create_encounter","params":{{"name":"x",'
        f'"arena":"tavern","creatures":{json.dumps(creatures())},'
        f'"options":{{"turn_seconds":{number}}}}}}}'
    )


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_are_not_json(running: Running, literal: str) -> None:
    async with running.client() as gm:
        frame = _create_with_turn_seconds("n", literal)
        reply = await raw_reply(gm, frame)
        assert reply["error"]["name"] == "parse_error", reply
        assert literal in reply["error"]["message"]
        assert running.server.rooms == {}
        assert await gm.request("ping") == {}


@pytest.mark.parametrize("number", ["1e400", "-1e400", "9" * 5000])
async def test_numbers_python_cannot_hold_are_invalid_params(
    running: Running, number: str, caplog: Any
) -> None:
    async with running.client() as gm:
        caplog.set_level(logging.ERROR)
        frame = _create_with_turn_seconds("big", number)
        reply = await raw_reply(gm, frame)
        assert reply["error"]["name"] == "invalid_params", reply
        assert running.server.rooms == {}
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
        assert await gm.request("ping") == {}


def test_the_serializer_never_writes_nan_or_infinity() -> None:
    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError):
            encode_message({"x": value})


async def write_runaway_store(path: Path, turn_seconds: float) -> tuple[str, str]:
    """A SQLite store holding an encounter in its turns with ``turn_seconds`` stored as
    an older server let it be; returns its id and GM token."""
    engine = Engine()
    entropy = RandomEntropy(3)
    arena = load_arena(Path(__file__).parents[2] / "examples" / "arenas" / "tavern.json")
    roster = [creature_from_dict(c, "c") for c in creatures() if c["id"] != "ogre"]
    eid = "e1-runaway"
    outcome = engine.create(
        eid, roster, options=EncounterOptions(turn_seconds=turn_seconds), name="old", arena=arena
    )
    events = list(outcome.events)
    state = outcome.state
    for kind, params in (
        ("set_surprise", {"surprised": []}),
        ("place", {"positions": {}}),
        ("roll_initiative", {}),
    ):
        step = engine.handle(state, Command(kind, params, GM_ACTOR), entropy)
        events += step.events
        state = step.state
    assert state.phase == "turns"
    store = await SqliteStore.open(path)
    token = "gm-token-of-an-old-encounter"
    try:
        await store.append(eid, 1, events)
        await store.add_grant(eid, StoredGrant(token_hash(token), "gm"))
    finally:
        await store.aclose()
    return eid, token


@pytest.mark.parametrize("turn_seconds", [0.0, -3.0])
async def test_a_stored_runaway_option_is_clamped_on_restore(
    nursery: trio.Nursery, tmp_path: Path, turn_seconds: float, caplog: Any
) -> None:
    path = tmp_path / "old.sqlite"
    eid, token = await write_runaway_store(path, turn_seconds)
    caplog.set_level(logging.WARNING, logger="zonekeep.server")
    store = await SqliteStore.open(path)
    server = ZonekeepServer(ServerConfig(port=0), engine=Engine(), store=store)
    await nursery.start(server.run)
    running = Running(server)
    assert eid not in server.rooms  # loaded by its first join, and clamped there
    async with running.client() as gm:
        await gm.join(eid, token)
        assert eid in server.rooms
        assert any(
            "turn_seconds" in r.getMessage() and eid in r.getMessage() for r in caplog.records
        )
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snap["options"]["turn_seconds"] == 10
        seq = snap["seq"]
        await trio.sleep(1.0)
        later = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert later["seq"] == seq, "turns end by themselves in a loop"
        # The rewind path replays the stored log: still clamped.
        await gm.request("rewind", encounter=eid, to_seq=seq - 1)
        await trio.sleep(0.5)
        rewound = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert rewound["options"]["turn_seconds"] == 10
        assert rewound["seq"] == seq + 1


def test_an_encounter_file_with_an_option_out_of_range_is_refused() -> None:
    """The other way options come in (``zonekeep serve --encounter``): the same check."""
    examples = Path(__file__).parents[2] / "examples" / "encounters"
    path = examples / "goblin-ambush.json"
    data = json.loads(path.read_text())
    load_encounter(path)  # the example itself is fine
    data["options"] = {**data.get("options", {}), "turn_seconds": 0}
    with pytest.raises(EncounterFileError) as info:
        parse_encounter(data, str(path), examples)
    assert "options.turn_seconds" in str(info.value)
    assert "10 to 3,600" in str(info.value)


@pytest.mark.parametrize("value", [0, 4.9, 601, float("nan"), float("inf")])
def test_the_servers_own_decision_time_is_bounded_too(value: float) -> None:
    # The server-wide default for new encounters' decision deadlines (docs/rules.md: 5 to 600).
    with pytest.raises(ValueError, match=r"^reaction_seconds must be a number from 5 to 600"):
        ServerConfig(reaction_seconds=value)
    assert ServerConfig(reaction_seconds=5).reaction_seconds == 5
    assert ServerConfig(reaction_seconds=600).reaction_seconds == 600
