"""Hardening (issue 14, points 13 to 16), each attack sent over a real socket to a real
server on a loopback port:

13. the server decides every fact: a ``move`` pays for the difficult ground the arena
    says it is on (the client's ``difficult`` flag is gone), and a player's area effect
    saves against the caster's own spell DC, not one the client picked;
14. a plugin that emits on a read-only rule context (while the server answers an
    ``actions`` question) changes nothing: the live state and the stored log agree;
15. ``SystemExit`` raised by a plugin's command handler is that plugin's failure
    (``plugin_error``), and the server goes on serving;
16. plugin code that blocks past the configured budget is reported to the GM
    (``plugin_overran``) and, after the configured number of overruns, switched off for
    that encounter (``plugin_disabled``): its commands are refused from then on.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Loaded, Running, ServerConfig, creatures, thunderclap

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import (
    OPEN_PHASES,
    CommandSpec,
    Note,
    NoteAdded,
    Refusal,
    RuleContext,
    hookimpl,
)
from zonekeep.sdk._loading import IN_PROCESS, LoadedPlugin
from zonekeep.sdk.engine import Engine

MakeServer = Callable[..., Any]


def engine_with(name: str, plugin: object) -> Engine:
    return Engine([*load_default_plugins(), LoadedPlugin(name, "1.0.0", IN_PROCESS, plugin)])


async def seated(
    running: Running, gm: ZonekeepClient, alice: ZonekeepClient, roster: list[dict[str, Any]]
) -> str:
    """An encounter over the tavern with alice seated for Aria, at Aria's first turn
    (the server's dice are :class:`Loaded`: Aria has the best initiative)."""
    with trio.fail_after(helpers.deadline(5)):
        eid: str = (await gm.create_encounter("Hardening", "tavern", roster))["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
        await alice.join(eid, seat["token"])
        for kind, params in (
            ("set_surprise", {"surprised": []}),
            ("place", {"positions": {}}),
            ("roll_initiative", {}),
        ):
            await gm.command(eid, kind, **params)
        snapshot = await state(gm, eid)
        assert snapshot["active"] == "aria"
    gm.pending_notifications()
    alice.pending_notifications()
    return eid


async def state(client: ZonekeepClient, eid: str) -> dict[str, Any]:
    """The encounter's snapshot as ``client`` may see it."""
    snapshot: dict[str, Any] = (await client.request("snapshot", encounter=eid))["snapshot"]
    return snapshot


async def events_of(client: ZonekeepClient, count: int) -> list[dict[str, Any]]:
    with trio.fail_after(helpers.deadline(5)):
        return [(await client.notification("event"))["event"] for _ in range(count)]


# -- 13. the server decides every fact ---------------------------------------------------------


async def test_a_move_pays_for_the_difficult_ground_the_arena_says_it_is_on(
    make_server: MakeServer,
) -> None:
    roster = [c for c in creatures() if c["id"] != "ogre"]
    roster[0]["zone"] = "cellar"  # the tavern's cellar is difficult terrain
    running = await make_server(entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        eid = await seated(running, gm, alice, roster)
        # The flag the client used to send is refused: nothing a client says sets a cost.
        for flag in ({"difficult": False}, {"squeeze": False}):
            with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
                await alice.command(eid, "move", creature="aria", feet=5, **flag)
            assert (info.value.code, info.value.name) == (4000, "invalid_params")
        with trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "move", creature="aria", feet=5)
        [moved] = await events_of(alice, 1)
        assert moved == {
            "type": "moved",
            "creature": "aria",
            "feet": 5,
            "mode": "walk",
            "cost": 10,
            "extra": ["difficult"],
            "through": [],
        }
        with trio.fail_after(helpers.deadline(5)):
            snapshot = await state(gm, eid)
        assert snapshot["resources"]["movement_spent"] == 10


async def test_a_players_area_effect_saves_against_the_casters_own_dc(
    make_server: MakeServer,
) -> None:
    roster = [c for c in creatures() if c["id"] != "ogre"]
    running = await make_server(entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        eid = await seated(running, gm, alice, roster)
        before = await state(gm, eid)
        spell = thunderclap()
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "area_effect", **spell, dc=30)
        assert (info.value.code, info.value.name) == (4000, "invalid_params")
        assert info.value.message == (
            "The save DC is Aria's spell DC (10); only the GM can set another (30)."
        )
        with trio.fail_after(helpers.deadline(5)):
            assert await state(gm, eid) == before
            # Without a DC (or with its own), the caster's spell DC is used.
            result = await alice.command(eid, "area_effect", **spell, dc=10)
        seen = await events_of(alice, result["last_seq"] - result["first_seq"] + 1)
        made = [e for e in seen if e["type"] == "save_made"]
        assert {(e["creature"], e["dc"]) for e in made} == {("gob", 10), ("bram", 10)}


# -- 14. a read-only context cannot emit --------------------------------------------------------


class Meddler:
    """Its refusal hook emits a note on whatever context it is handed (a plugin bug)."""

    @staticmethod
    @hookimpl
    def zonekeep_action_refusal(ctx: RuleContext) -> Refusal | None:
        ctx.emit(NoteAdded(Note(f"meddle-{ctx.state.seq}", "meddled")))
        return None


async def test_a_plugin_emitting_while_actions_are_asked_changes_nothing(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=engine_with("meddler", Meddler), entropy=Loaded())
    roster = [c for c in creatures() if c["id"] != "ogre"]
    async with running.client() as gm, running.client() as alice:
        eid = await seated(running, gm, alice, roster)
        with trio.fail_after(helpers.deadline(5)):
            before = await state(gm, eid)
            answer = await alice.request("actions", encounter=eid, creature="aria")
        assert "dash" in answer["actions"] and "move" in answer["actions"]
        with trio.fail_after(helpers.deadline(5)):
            after = await state(gm, eid)
        assert after == before  # the live state did not move (it was 7 -> 24 before the fix)
        assert after["notes"] == {}
        # The stored log agrees with the live state: a fresh join replays up to its seq.
        async with running.client() as again:
            with trio.fail_after(helpers.deadline(5)):
                token = (await gm.request("create_seat", encounter=eid, player="carol"))["token"]
                joined = await again.join(eid, token, last_seq=0)
        assert len(joined["events"]) == joined["seq"] == after["seq"]
        assert gm.pending_notifications() == [] and alice.pending_notifications() == []


# -- 15. SystemExit from a plugin ---------------------------------------------------------------


class Quitter:
    """Its command ``quit`` (anyone, any open phase) calls ``sys.exit()``."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def leave(ctx: RuleContext, cmd: Any) -> None:
            raise SystemExit(3)

        return (CommandSpec("quit", leave, "Stop the server?", who="any", phases=OPEN_PHASES),)


async def test_system_exit_in_a_players_command_is_the_plugins_failure(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=engine_with("quitter", Quitter))
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(helpers.deadline(5)):
            eid = (await gm.create_encounter("Exit", "tavern", creatures()))["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await alice.join(eid, seat["token"])
            before = await state(gm, eid)
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "quit")
        assert (info.value.code, info.value.name) == (6002, "plugin_error")
        with trio.fail_after(helpers.deadline(5)):
            error = await gm.notification("encounter_error")
        assert "'quitter'" in error["message"] and "SystemExit(3)" in error["message"]
        # The server and the encounter are still there.
        with trio.fail_after(helpers.deadline(5)):
            assert await state(gm, eid) == before
            await gm.command(eid, "set_surprise", surprised=[])
        async with running.client() as late:
            with trio.fail_after(helpers.deadline(5)):
                assert await late.request("ping") is not None


# -- 16. plugins must not block -----------------------------------------------------------------


#: How often each blocking plugin function ran (a switched-off plugin's never runs again).
RAN: collections.Counter[str] = collections.Counter()


class Sloth:
    """Its GM command ``nap`` blocks the event loop for 0.15 s, then adds a note."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def nap(ctx: RuleContext, cmd: Any) -> None:
            RAN["nap"] += 1
            time.sleep(0.15)  # what a plugin must never do
            ctx.emit(NoteAdded(Note(f"nap-{len(ctx.state.notes) + 1}", "zzz")))

        return (CommandSpec("nap", nap, "GM: take a nap.", who="gm", phases=OPEN_PHASES),)


async def test_a_plugin_that_keeps_blocking_is_reported_then_switched_off(
    make_server: MakeServer,
) -> None:
    config = ServerConfig(port=0, plugin_call_budget_seconds=0.05, plugin_overrun_limit=2)
    running = await make_server(config, engine=engine_with("sloth", Sloth))
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(helpers.deadline(5)):
            eid = (await gm.create_encounter("Naps", "tavern", creatures()))["encounter"]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await alice.join(eid, seat["token"])
            await gm.request("ping")
        gm.pending_notifications()

        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "nap")
        first = await events_of(gm, 2)
        assert first[0] == {
            "type": "note_added",
            "note": {"id": "nap-1", "text": "zzz", "hidden": False},
        }
        overran = first[1]
        assert overran["type"] == "plugin_overran"
        assert (overran["plugin"], overran["hook"], overran["budget_ms"]) == (
            "sloth",
            "zonekeep_commands",
            50,
        )
        assert overran["ms"] >= 150
        # Players see that something happened, not what.
        assert [e["type"] for e in await events_of(alice, 2)] == ["note_added", "hidden"]

        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "nap")
        second = await events_of(gm, 3)
        assert [e["type"] for e in second] == ["note_added", "plugin_overran", "plugin_disabled"]
        assert second[2] == {
            "type": "plugin_disabled",
            "plugin": "sloth",
            "reason": "Plugin 'sloth' took longer than 50 ms 2 times; it is switched off "
            "for the rest of this encounter.",
        }
        assert [e["type"] for e in await events_of(alice, 3)] == [
            "note_added",
            "hidden",
            "plugin_disabled",
        ]
        with trio.fail_after(helpers.deadline(5)):
            snapshot = await state(gm, eid)
        assert snapshot["disabled_plugins"] == ["sloth"]
        assert snapshot["plugin_overruns"] == {"sloth": 2}

        # Switched off: its command is refused at once, without running (no block).
        ran = RAN["nap"]
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "nap")
        assert RAN["nap"] == ran
        assert (info.value.code, info.value.name) == (6002, "plugin_error")
        with trio.fail_after(helpers.deadline(5)):
            error = await gm.notification("encounter_error")
        assert "switched off" in error["message"]
        with trio.fail_after(helpers.deadline(5)):
            assert await state(gm, eid) == snapshot
            # The rest of the encounter plays on.
            await gm.command(eid, "set_surprise", surprised=[])


class Dozer:
    """Blocks for 0.15 s where no accepted command can report it: ``doze`` (GM) blocks
    and then refuses; ``ponder`` (a creature's) has a ``requires`` check that blocks,
    which every ``actions`` question runs."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def doze(ctx: RuleContext, cmd: Any) -> None:
            RAN["doze"] += 1
            time.sleep(0.15)  # what a plugin must never do
            ctx.refuse("invalid_params", "Too sleepy.")

        def slow_check(state: Any, creature: Any) -> None:
            RAN["slow_check"] += 1
            time.sleep(0.15)
            return None

        return (
            CommandSpec("doze", doze, "GM: doze off.", who="gm", phases=OPEN_PHASES),
            CommandSpec("ponder", lambda ctx, cmd: None, "Ponder.", requires=slow_check),
        )


async def test_a_plugin_blocking_in_refused_commands_is_switched_off_too(
    make_server: MakeServer,
) -> None:
    config = ServerConfig(port=0, plugin_call_budget_seconds=0.05, plugin_overrun_limit=2)
    running = await make_server(config, engine=engine_with("dozer", Dozer))
    async with running.client() as gm:
        with trio.fail_after(helpers.deadline(5)):
            eid = (await gm.create_encounter("Naps", "tavern", creatures()))["encounter"]
        gm.pending_notifications()
        for _ in range(2):
            with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
                await gm.command(eid, "doze")
            assert info.value.name == "invalid_params"  # refused: nothing of it is stored
        reported = await events_of(gm, 3)
        assert [(e["type"], e.get("plugin")) for e in reported] == [
            ("plugin_overran", "dozer"),
            ("plugin_overran", "dozer"),
            ("plugin_disabled", "dozer"),
        ]
        assert reported[0]["hook"] == "zonekeep_commands"
        ran = RAN["doze"]
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "doze")
        assert RAN["doze"] == ran
        assert info.value.name == "plugin_error"


async def test_a_plugin_blocking_in_the_actions_question_is_switched_off_too(
    make_server: MakeServer,
) -> None:
    config = ServerConfig(port=0, plugin_call_budget_seconds=0.05, plugin_overrun_limit=2)
    running = await make_server(config, engine=engine_with("dozer", Dozer), entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        eid = await seated(running, gm, alice, creatures())
        for _ in range(2):
            with trio.fail_after(helpers.deadline(5)):
                found = await alice.request("actions", encounter=eid, creature="aria")
            assert "ponder" in found["actions"]
        reported = await events_of(gm, 3)
        assert [(e["type"], e.get("plugin")) for e in reported] == [
            ("plugin_overran", "dozer"),
            ("plugin_overran", "dozer"),
            ("plugin_disabled", "dozer"),
        ]
        # Switched off: its check no longer runs, and its action is no longer offered.
        ran = RAN["slow_check"]
        with trio.fail_after(helpers.deadline(5)):
            found = await alice.request("actions", encounter=eid, creature="aria")
        assert RAN["slow_check"] == ran
        assert "ponder" not in found["actions"]
