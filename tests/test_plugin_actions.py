"""A third-party plugin's actions over the wire: announced with a JSON Schema for their
parameters and the plugin's name, usable by a generic client, and isolated when the
plugin fails (the sender gets ``plugin_error``, the GM an ``encounter_error`` naming
the plugin, players nothing, and the encounter keeps working)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helpers
import jsonschema
import pytest
import trio
from e2e_support import Running, creatures

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import (
    CommandSpec,
    Note,
    NoteAdded,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    hookimpl,
)
from zonekeep.sdk._loading import IN_PROCESS, LoadedPlugin
from zonekeep.sdk.engine import Engine

MakeServer = Callable[..., Any]
PHASES = ("surprise", "positions", "initiative", "turns")


class Hazards:
    """``mark``: a creature marks another (a note); ``collapse``: a GM tool that raises."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def mark(ctx: RuleContext, cmd: Any) -> None:
            p = cmd.params
            if p.get("label") == "boom":
                raise ZeroDivisionError("division by zero")
            if p.get("loud"):
                ctx.roll("d20", RollRequest("check", p["creature"], skill="jinxed"))
            number = len(ctx.state.notes) + 1
            text = f"{p['creature']} marks {p['target']}: {p.get('label', '')}"
            text += f" x{p.get('strength', 1)} {','.join(p.get('tags', []))}"
            ctx.emit(NoteAdded(Note(f"mark-{number}", text.strip())))

        def collapse(ctx: RuleContext, cmd: Any) -> None:
            ctx.emit(NoteAdded(Note("ceiling", "The ceiling cracks.")))
            raise RuntimeError("the ceiling fell on the plugin")

        return (
            CommandSpec(
                "mark",
                mark,
                "Free: mark a creature as your quarry.",
                {
                    "creature": Param("creature", True, "the marking creature"),
                    "target": Param("creature", True, "the creature marked"),
                    "label": Param("string", False, "a name for the mark"),
                    "strength": Param("integer", False, "how strong the mark is"),
                    "tags": Param("strings", False, "free-form tags"),
                    "loud": Param("boolean", False, "shout it (rolls a check)"),
                },
                on_turn=None,
                phases=PHASES,
            ),
            CommandSpec(
                "collapse", collapse, "GM: bring the ceiling down.", who="gm", phases=PHASES
            ),
        )


class Jinx:
    """Its roll modifiers raise for a ``jinxed`` check: skipped, recorded for the GM."""

    @staticmethod
    @hookimpl
    def zonekeep_roll_modifiers(roll: RollRequest) -> Any:
        if roll.skill == "jinxed":
            raise LookupError("no luck left")
        return [RollModifier("advantage", "jinx")] if roll.skill == "lucky" else None


def engine() -> Engine:
    return Engine(
        [
            *load_default_plugins(),
            LoadedPlugin("hazards", "1.0.0", IN_PROCESS, Hazards),
            LoadedPlugin("jinx", "0.2.0", IN_PROCESS, Jinx),
        ]
    )


MARK_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "creature": {"type": "string", "description": "the marking creature"},
        "target": {"type": "string", "description": "the creature marked"},
        "label": {"type": ["string", "null"], "description": "a name for the mark"},
        "strength": {"type": ["integer", "null"], "description": "how strong the mark is"},
        "tags": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": "free-form tags",
        },
        "loud": {"type": ["boolean", "null"], "description": "shout it (rolls a check)"},
    },
    "required": ["creature", "target"],
    "additionalProperties": False,
}


async def table(
    running: Running, gm: ZonekeepClient, alice: ZonekeepClient
) -> tuple[str, dict[str, Any]]:
    with trio.fail_after(helpers.deadline(5)):
        created = await gm.create_encounter("Marks", "tavern", creatures())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice", creatures=["aria"])
        await alice.join(eid, seat["token"])
        await gm.request("ping")
    gm.pending_notifications()
    return eid, created


async def quiet(client: ZonekeepClient) -> list[dict[str, Any]]:
    """Every notification pushed to ``client`` so far (a ping makes sure they arrived)."""
    with trio.fail_after(helpers.deadline(5)):
        await client.request("ping")
    return client.pending_notifications()


async def test_hello_lists_a_plugin_action_with_its_schema_and_plugin(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=engine())
    async with running.client() as client:
        assert client.welcome is not None
        by_id = {c["id"]: c for c in client.welcome["capabilities"]["commands"]}
    mark = by_id["mark"]
    assert mark["plugin"] == "hazards"
    assert mark["schema"] == MARK_SCHEMA
    assert by_id["collapse"]["plugin"] == "hazards"
    assert by_id["collapse"]["schema"]["properties"] == {}
    assert by_id["attack"]["plugin"] == "zonekeep.combat"
    for command in by_id.values():
        jsonschema.Draft202012Validator.check_schema(command["schema"])
        assert set(command["schema"]["properties"]) == set(command["params"])
        required = {n for n, p in command["params"].items() if p["required"]}
        assert set(command["schema"]["required"]) == required
        assert command["schema"]["additionalProperties"] is False


async def test_a_generic_client_validates_and_sends_a_plugin_action(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=engine())
    async with running.client() as gm, running.client() as alice:
        eid, _ = await table(running, gm, alice)
        assert alice.welcome is not None
        announced = {c["id"]: c for c in alice.welcome["capabilities"]["commands"]}
        validator = jsonschema.Draft202012Validator(announced["mark"]["schema"])

        # What the schema refuses, the server refuses too (and the other way round).
        wrong: list[dict[str, Any]] = [
            {"creature": "aria"},
            {"creature": "aria", "target": "gob", "strength": "high"},
            {"creature": "aria", "target": "gob", "tags": [1]},
            {"creature": "aria", "target": "gob", "colour": "red"},
            {"creature": "aria", "target": "gob", "loud": "yes"},
        ]
        for params in wrong:
            assert not validator.is_valid(params), params
            with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
                await alice.command(eid, "mark", **params)
            assert (info.value.code, info.value.name) == (4000, "invalid_params")

        params = {
            "creature": "aria",
            "target": "gob",
            "label": "quarry",
            "strength": 2,
            "tags": ["hunt", "first"],
            "loud": None,
        }
        validator.validate(params)
        with trio.fail_after(helpers.deadline(5)):
            result = await alice.command(eid, "mark", **params)
        assert result["first_seq"] == result["last_seq"]
        expected = {
            "type": "note_added",
            "note": {
                "id": "mark-1",
                "text": "aria marks gob: quarry x2 hunt,first",
                "hidden": False,
            },
        }
        for client in (alice, gm):
            with trio.fail_after(helpers.deadline(5)):
                pushed = await client.notification("event")
            assert pushed["seq"] == result["first_seq"]
            assert pushed["event"] == expected


async def test_a_failing_plugin_action_is_refused_and_reported_to_the_gm(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=engine())
    async with running.client() as gm, running.client() as alice, running.client() as gm2:
        eid, created = await table(running, gm, alice)
        with trio.fail_after(helpers.deadline(5)):
            await gm2.join(eid, created["gm_token"])
        before = await gm.request("snapshot", encounter=eid)

        # A player's command whose handler raises.
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await alice.command(eid, "mark", creature="aria", target="gob", label="boom")
        assert (info.value.code, info.value.name) == (6002, "plugin_error")
        assert "'hazards'" in info.value.message and "'mark'" in info.value.message
        assert "ZeroDivisionError" not in info.value.message  # the details go to the GM
        for client in (gm, gm2):
            with trio.fail_after(helpers.deadline(5)):
                error = await client.notification("encounter_error")
            assert error["encounter"] == eid
            assert "'hazards'" in error["message"]
            assert "zonekeep_commands" in error["message"]
            assert "ZeroDivisionError" in error["message"]
            assert "Nothing changed" in error["message"]
        assert await quiet(alice) == []  # players get no encounter_error, and no event

        # A GM tool that emitted an event and then raised: the event never happens.
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "collapse")
        assert (info.value.code, info.value.name) == (6002, "plugin_error")
        with trio.fail_after(helpers.deadline(5)):
            error = await gm.notification("encounter_error")
        assert "'hazards'" in error["message"] and "collapse" in error["message"]
        assert [n["method"] for n in await quiet(gm)] == []
        assert await quiet(alice) == []
        with trio.fail_after(helpers.deadline(5)):
            assert await gm.request("snapshot", encounter=eid) == before

        # The encounter keeps working, for the plugin's own action too.
        with trio.fail_after(helpers.deadline(5)):
            result = await alice.command(eid, "mark", creature="aria", target="gob")
            assert result["first_seq"] == before["seq"] + 1
            await gm.command(eid, "set_surprise", surprised=[])


async def test_a_skipped_contribution_is_a_plugin_error_event_for_the_gm_only(
    make_server: MakeServer,
) -> None:
    running = await make_server(engine=engine())
    async with running.client() as gm, running.client() as alice:
        eid, _ = await table(running, gm, alice)
        with trio.fail_after(helpers.deadline(5)):
            result = await alice.command(eid, "mark", creature="aria", target="gob", loud=True)
        assert result["last_seq"] == result["first_seq"] + 1
        with trio.fail_after(helpers.deadline(5)):
            seen_by_gm = [(await gm.notification("event"))["event"] for _ in range(2)]
            seen_by_alice = [(await alice.notification("event"))["event"] for _ in range(2)]
        assert seen_by_gm[0] == {
            "type": "plugin_error",
            "plugin": "jinx",
            "hook": "zonekeep_roll_modifiers",
            "error": "LookupError('no luck left')",
        }
        assert seen_by_alice[0] == {"type": "hidden"}
        assert seen_by_gm[1]["type"] == seen_by_alice[1]["type"] == "note_added"
        # Replayed on join: still hidden from players.
        async with running.client() as again:
            with trio.fail_after(helpers.deadline(5)):
                token = (await gm.request("create_seat", encounter=eid, player="carol"))["token"]
                joined = await again.join(eid, token, last_seq=0)
            replayed = [e["type"] for e in joined["events"]]
            assert "note_added" in replayed and "hidden" in replayed
            assert "plugin_error" not in replayed


async def test_a_crash_outside_any_plugin_is_still_encounter_crashed(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = await make_server(engine=engine())
    async with running.client() as gm, running.client() as alice:
        eid, _ = await table(running, gm, alice)

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the engine itself")

        monkeypatch.setattr(running.server.engine, "handle", broken)
        with pytest.raises(ClientError) as info, trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
        assert (info.value.code, info.value.name) == (6001, "encounter_crashed")
        with trio.fail_after(helpers.deadline(5)):
            error = await gm.notification("encounter_error")
        assert "set_surprise" in error["message"]
        monkeypatch.undo()
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
