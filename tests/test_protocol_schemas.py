"""The wire protocol's message classes, JSON Schemas and parsers agree with each other.

Every message class is built, unstructured with ``wire`` and validated against its
schema; every schema's fields are the class's fields; broken messages fail both; every
event of real play validates; the generated schemas are up to date.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import attrs
import cattrs
import jsonschema
import pytest
import referencing

from zonekeep.protocol import (
    DEFAULT_LIMITS,
    METHODS,
    NOTIFICATIONS,
    PROTOCOL_VERSION,
    SCHEMA_BASE,
    ActionDetail,
    ActionsParams,
    ActionsResult,
    ArchiveEncounterParams,
    ArchiveEncounterResult,
    ArenaItem,
    AssetTagInfo,
    AttackOption,
    Capabilities,
    ChatParams,
    ChatResult,
    CheckArenaParams,
    CheckArenaResult,
    CheckCharacterParams,
    CheckCharacterResult,
    ClientInfo,
    ClosingNotification,
    CommandInfo,
    CommandParams,
    CommandResult,
    CompendiumItem,
    CompendiumSourceInfo,
    ContributeDiceParams,
    ContributeDiceResult,
    CreateEncounterParams,
    CreateEncounterResult,
    CreateSeatParams,
    CreateSeatResult,
    CreateSpectatorLinkParams,
    CreateSpectatorLinkResult,
    DecisionInfo,
    DeleteArenaParams,
    DeleteArenaResult,
    EncounterClosedNotification,
    EncounterErrorNotification,
    EncounterInfo,
    EncounterLinksParams,
    EncounterLinksResult,
    EncounterOptionsParams,
    EncounterOptionsResult,
    EndingInfo,
    ErrorResponse,
    EventNotification,
    FeatureInfo,
    HelloParams,
    HelloResult,
    JoinParams,
    JoinResult,
    LeaveParams,
    LeaveResult,
    ListArenasParams,
    ListArenasResult,
    ListCompendiumParams,
    ListCompendiumResult,
    ListEncountersParams,
    ListEncountersResult,
    ListSeatsParams,
    ListSeatsResult,
    PingParams,
    PingResult,
    ProblemInfo,
    PromptNotification,
    ProtocolError,
    RemoveSeatParams,
    RemoveSeatResult,
    Request,
    RevokeSpectatorLinkParams,
    RevokeSpectatorLinkResult,
    RewindParams,
    RewindResult,
    RollParams,
    RollResult,
    RotateDiceParams,
    RotateDiceResult,
    RotateGmTokenParams,
    RotateGmTokenResult,
    SaveArenaParams,
    SaveArenaResult,
    SeatInfo,
    SeatRequest,
    SequenceItemInfo,
    ServerInfo,
    SetPublicParams,
    SetPublicResult,
    SettingInfo,
    SnapshotNotification,
    SnapshotParams,
    SnapshotResult,
    SubmitCharacterParams,
    SubmitCharacterResult,
    TableHomeParams,
    TableHomeResult,
    TableLinkParams,
    TableLinkResult,
    TurnTimerNotification,
    ZoneOption,
    _generate,
    dump,
    encode,
    make_error_response,
    make_notification,
    make_response,
    parse_params,
    parse_request,
    schema,
    schema_names,
    validate_server_message,
    wire,
)
from zonekeep.sdk import Attack, Creature, Decision, EncounterOptions, Event
from zonekeep.sdk.host import EVENT_TYPES, event_to_dict, state_to_dict
from zonekeep.sdk.testing import EncounterHarness

# -- real data from a short encounter ----------------------------------------------------------


def _roster() -> list[Creature]:
    sword = Attack("sword", "melee", 5, "1d8+3", "slashing")
    return [
        Creature("aria", "Aria", "party", controller="ana", dex_mod=3, hp=14, attacks=[sword]),
        Creature(
            "gob",
            "Goblin",
            "goblins",
            hp=7,
            max_hp=7,
            attacks=[sword],
            damage_resistances=["slashing"],
            condition_immunities=["poisoned"],
        ),
        Creature("spy", "Spy", "goblins", hidden=True, attacks=[sword]),
    ]


@cache
def short_encounter() -> EncounterHarness:
    """Setup, one attack, a move, a note and the end: a few dozen real events."""
    h = EncounterHarness(_roster(), zones=("hall", "yard"))
    ana = h.player("ana")
    h.send("set_surprise", surprised=[])
    h.send("place", positions={"aria": "hall", "gob": "hall", "spy": "yard"})
    h.rolls(18, 5, 3)
    h.send("roll_initiative")
    assert h.state.active == "aria"
    h.rolls(15, 6)
    h.send("attack", ana, creature="aria", target="gob")
    h.send("add_note", text="The spy watches.", hidden=True)
    h.send("end_turn", ana, creature="aria")
    h.send("end_encounter", force=True, reason="test over")
    return h


@cache
def all_event_examples() -> dict[str, Event]:
    """One event of every type: the short encounter, then the serialization tests' games."""
    from test_serial import first_of_each_type

    found: dict[str, Event] = {}
    for event in short_encounter().events:
        found.setdefault(event.type, event)
    for name, event in first_of_each_type().items():
        found.setdefault(name, event)
    return found


def snapshot_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(state_to_dict(short_encounter().state)))
    return data


def event_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(event_to_dict(short_encounter().events[-1])))
    return data


# -- schema validation ---------------------------------------------------------------------------


@cache
def registry() -> Any:
    return referencing.Registry().with_resources(
        (SCHEMA_BASE + "strict/" + n, referencing.Resource.from_contents(schema(n)))
        for n in schema_names()
    )


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(name), registry=registry())


def errors(name: str, instance: Any) -> list[str]:
    return [e.message for e in validator(name).iter_errors(instance)]


def on_wire(obj: Any) -> Any:
    """What the other side reads: the object dumped to JSON text and parsed again."""
    return json.loads(dump(obj))


# -- representative messages -----------------------------------------------------------------


def capabilities() -> Capabilities:
    from zonekeep.sdk.engine import Engine

    engine = Engine()
    return Capabilities(
        commands=[CommandInfo.from_spec(s) for s in engine.commands.values()],
        options=wire.unstructure(EncounterOptions()),
        event_types=sorted(EVENT_TYPES),
        arenas=["cliffside", "swamp", "tavern"],
        asset_tags=[
            AssetTagInfo(
                "collapsing_floor",
                "hazards",
                "Drops whoever stands on it.",
                {"type": "object", "properties": {"fall_damage": {"type": "string"}}},
            ),
            AssetTagInfo("tripwire", "hazards", "Rings the alarm.", None),
        ],
        settings=[
            SettingInfo("hazards", "burn_die", "Fire each turn.", {"type": "string"}, "1d6", "1d8")
        ],
    )


def decision() -> DecisionInfo:
    return DecisionInfo(
        "d1", "reaction", "ana", "Attack?", ["attack", "pass"], ["pass"], "aria", False
    )


_ROOT = Path(__file__).resolve().parent.parent


def params_samples() -> dict[str, list[Any]]:
    return {
        "hello": [
            HelloParams("1.0", ClientInfo("zk-test", "0.0.1")),
            HelloParams("1.3", ClientInfo("zk-test", "0.0.1"), gm_key="k3y"),
        ],
        "create_encounter": [
            CreateEncounterParams("Ambush", "tavern", [{"id": "a", "name": "A", "side": "x"}]),
            CreateEncounterParams(
                "Inline",
                {"id": "a", "name": "A", "zones": [{"id": "z", "name": "Z", "size": 30}]},
                [{"id": "a", "name": "A", "side": "x", "hp": 3}],
                options={"flanking": False},
                server_key="k3y",
            ),
            CreateEncounterParams(
                "Shown", "tavern", [{"id": "a", "name": "A", "side": "x"}], public=True
            ),
            CreateEncounterParams("Seated", "tavern", [], seats=[SeatRequest("Ana")]),
            CreateEncounterParams(
                "Seeded",
                "tavern",
                [{"id": "a", "name": "A", "side": "x"}],
                dice={"mode": "seeded", "seed": "s1"},
            ),
        ],
        "join": [
            JoinParams("e1", "tok"),
            JoinParams("e1", "tok", last_seq=0),
            JoinParams("e1"),
            JoinParams("e1", "tok", client_seed="x7"),
        ],
        "create_seat": [CreateSeatParams("e1", "ana"), CreateSeatParams("e1", "ana", ["aria"])],
        "create_spectator_link": [CreateSpectatorLinkParams("e1")],
        "command": [
            CommandParams("e1", "roll_initiative"),
            CommandParams("e1", "move", {"creature": "aria", "feet": 10}),
        ],
        "actions": [ActionsParams("e1", "aria")],
        "snapshot": [SnapshotParams("e1")],
        "leave": [LeaveParams("e1")],
        "ping": [PingParams()],
        "rewind": [RewindParams("e1", 5)],
        "remove_seat": [RemoveSeatParams("e1", "ana")],
        "revoke_spectator_link": [RevokeSpectatorLinkParams("e1", "tok")],
        "rotate_gm_token": [RotateGmTokenParams("e1")],
        "list_compendium": [
            ListCompendiumParams(),
            ListCompendiumParams("goblin", "humanoid", "goblinoid", "srd", 0.125, 1, 20, 5),
        ],
        "list_encounters": [
            ListEncountersParams(),
            ListEncountersParams(public_only=True, offset=100, limit=500),
        ],
        "encounter_links": [EncounterLinksParams("e1")],
        "set_public": [SetPublicParams("e1", True), SetPublicParams("e1", False)],
        "archive_encounter": [ArchiveEncounterParams("e1")],
        "list_arenas": [ListArenasParams(), ListArenasParams(10, 5)],
        "check_arena": [
            CheckArenaParams(arena={"id": "pit"}),
            CheckArenaParams(text='id = "pit"', format="toml"),
        ],
        "check_character": [
            CheckCharacterParams({"name": "Aria"}),
            CheckCharacterParams({"system": {}}, "foundry"),
        ],
        "save_arena": [SaveArenaParams(_tavern())],
        "delete_arena": [DeleteArenaParams("crypt")],
        "submit_character": [
            SubmitCharacterParams("e1", {"name": "Aria"}),
            SubmitCharacterParams("e1", {"name": "Aria"}, "ana"),
            SubmitCharacterParams("e1", {"Name": "Ilsa"}, format="improved-initiative"),
        ],
        "encounter_options": [EncounterOptionsParams()],
        "list_seats": [ListSeatsParams("e1")],
        "table_home": [TableHomeParams()],
        "table_link": [TableLinkParams("e1", "tok")],
        "contribute_dice": [ContributeDiceParams("e1", "lucky-socks")],
        "rotate_dice": [RotateDiceParams("e1")],
        "roll": [
            RollParams("e1", "d20+3"),
            RollParams("e1", "2d6", "Luck", "advantage", True, "k-1"),
        ],
        "chat": [ChatParams("e1", "Hello, table"), ChatParams("e1", "Psst", "gm")],
    }


def result_samples() -> dict[str, list[Any]]:
    return {
        "hello": [
            HelloResult(
                PROTOCOL_VERSION,
                ServerInfo("zonekeep", "0.1.0"),
                capabilities(),
                DEFAULT_LIMITS,
                None,
            ),
            HelloResult(
                PROTOCOL_VERSION,
                ServerInfo("zonekeep", "0.1.0"),
                capabilities(),
                DEFAULT_LIMITS,
                gm="gwen",
            ),
        ],
        "create_encounter": [
            CreateEncounterResult("e1", "secret", "gm", 1, snapshot_data(), {}),
            CreateEncounterResult("e1", "secret", "gm", 1, snapshot_data(), {"Ana": "tok"}),
        ],
        "join": [
            JoinResult("gm", None, 12, snapshot_data(), None, None),
            JoinResult("player", "ana", 12, None, [event_data(), {"type": "hidden"}], None),
            JoinResult("spectator", None, 12, None, [], None),
            JoinResult("player", "ana", 12, snapshot_data(), None, [{"type": "hidden"}]),
        ],
        "create_seat": [CreateSeatResult("tok", "ana")],
        "create_spectator_link": [CreateSpectatorLinkResult("tok")],
        "command": [CommandResult(3, 5), CommandResult(6, 5)],
        "actions": [
            ActionsResult(
                "aria",
                ["dash", "attack", "enter", "take_position"],
                [
                    ActionDetail("dash", True, None, None, None, None, None, None, None, None),
                    ActionDetail(
                        "stand",
                        False,
                        "not_prone",
                        "Aria is not prone.",
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                    ),
                    ActionDetail(
                        "attack",
                        True,
                        None,
                        None,
                        [AttackOption("rapier", "Rapier +5, 1d8+3", 5, "1d8+3", ["g1"])],
                        None,
                        None,
                        None,
                        None,
                        None,
                    ),
                    ActionDetail("shove", True, None, None, None, ["g1"], None, None, None, None),
                    ActionDetail(
                        "enter",
                        True,
                        None,
                        None,
                        None,
                        None,
                        [ZoneOption("bar", 30, ["bar"])],
                        None,
                        None,
                        None,
                    ),
                    ActionDetail(
                        "take_position", True, None, None, None, None, None, ["table"], None, None
                    ),
                    ActionDetail(
                        "multiattack",
                        True,
                        None,
                        None,
                        [AttackOption("bite", "Bite +4, 2d4+2", 4, "2d4+2", ["g1"])],
                        None,
                        None,
                        None,
                        [[SequenceItemInfo("bite", False), SequenceItemInfo("bite", True)]],
                        [SequenceItemInfo("bite", True)],
                    ),
                ],
                None,
                [
                    FeatureInfo(
                        "multiattack", "Multiattack", "action", "Two bites.", True, None, None, None
                    ),
                    FeatureInfo(
                        "gm",
                        "Fire Breath",
                        "action",
                        "A cone of fire.",
                        False,
                        "no installed plugin implements it",
                        {"recharge": 5},
                        0,
                    ),
                ],
            ),
            ActionsResult("gob", [], [], EndingInfo(None, ["Aria is dying"], ["aria"]), []),
        ],
        "snapshot": [SnapshotResult(12, snapshot_data())],
        "leave": [LeaveResult()],
        "ping": [PingResult()],
        "rewind": [RewindResult(13)],
        "remove_seat": [RemoveSeatResult(2)],
        "revoke_spectator_link": [RevokeSpectatorLinkResult(0)],
        "rotate_gm_token": [RotateGmTokenResult("new-token", 1)],
        "list_compendium": [
            ListCompendiumResult(0, 40, [], []),
            ListCompendiumResult(
                1,
                0,
                [CompendiumItem("srd.goblin", "srd", _goblin_entry())],
                [CompendiumSourceInfo("srd", "SRD 5.1", "CC-BY-4.0", "credit")],
            ),
        ],
        "list_encounters": [
            ListEncountersResult([], 0),
            ListEncountersResult(
                [
                    EncounterInfo(
                        "e1",
                        "Ambush",
                        "tavern",
                        "open",
                        "turns",
                        2,
                        [SeatInfo("ana", 1, False), SeatInfo("bo", 0, True)],
                        False,
                        "2026-12-01T06:14:00Z",
                        True,
                    ),
                    EncounterInfo(
                        "e2",
                        "Old",
                        "swamp",
                        "archived",
                        "ended",
                        5,
                        [SeatInfo("ana", None, None)],
                        True,
                        "2026-11-01T00:00:00Z",
                        False,
                    ),
                ],
                7,
            ),
        ],
        "encounter_links": [EncounterLinksResult("e1", "gm-tok", {"ana": "ana-tok"}, "watch", 1)],
        "set_public": [SetPublicResult("e1", True)],
        "archive_encounter": [ArchiveEncounterResult("e1", 3)],
        "list_arenas": [
            ListArenasResult(0, 0, []),
            ListArenasResult(1, 0, [ArenaItem("tavern", _tavern())]),
            ListArenasResult(1, 0, [ArenaItem("crypt", _tavern(), True, True)]),
        ],
        "save_arena": [
            SaveArenaResult(True, "crypt", False, []),
            SaveArenaResult(False, "crypt", False, [ProblemInfo("map.image", "no image")]),
        ],
        "delete_arena": [DeleteArenaResult("crypt")],
        "check_arena": [
            CheckArenaResult([], _tavern()),
            CheckArenaResult(
                [ProblemInfo("zones[0].size", "bad size"), ProblemInfo("", "x")], None
            ),
        ],
        "check_character": [
            CheckCharacterResult([], [], None),
            CheckCharacterResult([ProblemInfo("character.hp", "must be 1 to 999")], [], None),
            CheckCharacterResult([], ["item 'Rope' (loot)"], {"name": "Marta"}),
        ],
        "submit_character": [
            SubmitCharacterResult("aria", "ana", 2, []),
            SubmitCharacterResult("ilsa-3f9c1e", "ana", 3, ["Languages"]),
        ],
        "encounter_options": [
            EncounterOptionsResult({"type": "object", "properties": {}}, []),
            EncounterOptionsResult(
                {"type": "object", "properties": {}},
                [SettingInfo("hazards", "burn_dc", "The DC.", {"type": "integer"}, 10, 12)],
            ),
        ],
        "list_seats": [ListSeatsResult([SeatInfo("ana", 1, False)]), ListSeatsResult([])],
        "table_home": [TableHomeResult("http://10.0.0.2:8765/table/", False, "Ask for a key.")],
        "table_link": [TableLinkResult("http://10.0.0.2:8765/table/#encounter=e1", "<svg/>")],
        "contribute_dice": [ContributeDiceResult(7)],
        "rotate_dice": [RotateDiceResult(9, "ab" * 32)],
        "roll": [RollResult(12, 17)],
        "chat": [ChatResult(13)],
    }


def _tavern() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_ROOT / "examples" / "arenas" / "tavern.json").read_text())
    data.pop("$schema")
    return data


def _goblin_entry() -> dict[str, Any]:
    entries = json.loads((_ROOT / "plugins" / "srd" / "srd-5.1.json").read_text())["entries"]
    entry: dict[str, Any] = next(e for e in entries if e["id"] == "goblin")
    return entry


def notification_samples() -> dict[str, list[Any]]:
    return {
        "event": [EventNotification("e1", 4, event_data())],
        "prompt": [PromptNotification("e1", decision(), 29.5)],
        "turn_timer": [TurnTimerNotification("e1", "aria", 2, 59.5)],
        "snapshot": [SnapshotNotification("e1", 12, snapshot_data())],
        "encounter_error": [EncounterErrorNotification("e1", "It broke; nothing changed.")],
        "encounter_closed": [
            EncounterClosedNotification("e1", "archived", "The GM archived the encounter."),
            EncounterClosedNotification("e1", "deleted", "The operator deleted it."),
        ],
        "closing": [ClosingNotification("The server is shutting down.")],
    }


def notification_schema(method: str) -> str:
    return "snapshot.notification" if method == "snapshot" else method


def test_samples_cover_every_method_and_notification() -> None:
    assert set(params_samples()) == set(METHODS) == set(result_samples())
    assert set(notification_samples()) == set(NOTIFICATIONS)


def test_every_expected_schema_file_exists_and_is_valid() -> None:
    expected = {"request", "error", "server_message", "event_payload", "snapshot", "arena"}
    expected |= {"compendium", "character"}
    expected |= {f"{m}.params" for m in METHODS} | {f"{m}.result" for m in METHODS}
    expected |= {notification_schema(m) for m in NOTIFICATIONS}
    present = {n.removesuffix(".schema.json") for n in schema_names()}
    assert present == expected
    for name in schema_names():
        document = schema(name)
        jsonschema.Draft202012Validator.check_schema(document)
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert document["$id"] == SCHEMA_BASE + "strict/" + name
        assert document.get("description"), f"{name} has no description"
        assert document["$comment"].startswith(_generate.MARK), f"{name} is not generated"
        published = schema(name, strict=False)
        assert published["$id"] == SCHEMA_BASE + name
        assert published["$comment"].startswith(_generate.MARK)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_params_classes_validate_and_roundtrip(method: str) -> None:
    cls = METHODS[method][0]
    for sample in params_samples()[method]:
        assert type(sample) is cls
        data = on_wire(sample)
        assert errors(f"{method}.params", data) == []
        assert parse_params(method, data) == sample
        request = on_wire(Request(1, method, data))
        assert errors("request", request) == []


@pytest.mark.parametrize("method", sorted(METHODS))
def test_result_classes_validate_and_roundtrip(method: str) -> None:
    cls = METHODS[method][1]
    for sample in result_samples()[method]:
        assert type(sample) is cls
        data = on_wire(sample)
        assert errors(f"{method}.result", data) == []
        assert wire.structure(data, cls) == sample
        message = on_wire(make_response("r-1", sample))
        validate_server_message(message, method)
        assert errors("server_message", message) == []


@pytest.mark.parametrize("method", sorted(NOTIFICATIONS))
def test_notification_classes_validate_and_roundtrip(method: str) -> None:
    cls = NOTIFICATIONS[method]
    for sample in notification_samples()[method]:
        assert type(sample) is cls
        message = on_wire(make_notification(sample))
        assert message["method"] == method
        assert errors(notification_schema(method), message) == []
        assert errors("server_message", message) == []
        validate_server_message(message)
        assert wire.structure(message["params"], cls) == sample


def test_error_replies_validate() -> None:
    for rid in (1, "abc", None):
        for error in (
            ProtocolError("not_joined", "Join the encounter first."),
            ProtocolError.from_refusal("not_your_turn", "It is not Aria's turn."),
            ProtocolError.from_refusal("gm_only", "Only the GM can do that."),
            ProtocolError.from_refusal("my_plugin_code", "The plugin says no."),
        ):
            message = on_wire(make_error_response(rid, error))
            assert errors("error", message) == []
            assert errors("server_message", message) == []
            validate_server_message(message)
            assert wire.structure(message, ErrorResponse).error.code == error.code


def test_refusal_numbers() -> None:
    assert ProtocolError.from_refusal("not_your_turn", "").code == 4005
    assert ProtocolError.from_refusal("invalid_params", "").code == 4000
    assert ProtocolError("invalid_params", "").code == 1005
    assert ProtocolError.from_refusal("not_your_creature", "").code == 3001
    assert ProtocolError.from_refusal("gm_only", "").code == 3002
    assert ProtocolError.from_refusal("not_your_decision", "").code == 3003
    assert ProtocolError.from_refusal("plugin_thing", "").code == 4900


# -- classes and schemas have the same fields ------------------------------------------------------


def _object_schema(name: str) -> dict[str, Any]:
    document = schema(name)
    if "properties" in document and "method" in document["properties"]:
        return dict(document["properties"]["params"])  # a notification's params
    return document


def _class_schema_pairs() -> list[tuple[type, str]]:
    pairs: list[tuple[type, str]] = []
    for method, (params_cls, result_cls) in METHODS.items():
        pairs += [(params_cls, f"{method}.params"), (result_cls, f"{method}.result")]
    for method, cls in NOTIFICATIONS.items():
        pairs.append((cls, notification_schema(method)))
    return pairs


@pytest.mark.parametrize(("cls", "name"), _class_schema_pairs(), ids=lambda x: str(x))
def test_schema_fields_are_class_fields(cls: type, name: str) -> None:
    document = _object_schema(name)
    fields = {f.name: f for f in attrs.fields(cls)}
    assert set(document["properties"]) == set(fields), name
    assert set(document["required"]) <= set(fields)
    assert document["additionalProperties"] is False
    required_by_class = {n for n, f in fields.items() if f.default is attrs.NOTHING}
    assert required_by_class <= set(document["required"]), name
    if name.endswith(".params"):
        assert set(document["required"]) == required_by_class, name
    else:
        # The server always sends every field of a result or a notification, but those
        # present only at times (an event's ``idempotency_key``, for its seat alone).
        sometimes = {n for n, f in fields.items() if f.metadata.get("added_later")}
        assert set(document["required"]) == set(fields) - sometimes, name


def test_decision_info_matches_the_sdk_decision() -> None:
    assert [f.name for f in attrs.fields(DecisionInfo)] == [f.name for f in attrs.fields(Decision)]
    d = Decision("d1", "reaction", "ana", "Attack?", ("attack", "pass"), ("pass",), "aria")
    assert wire.structure(json.loads(json.dumps(wire.unstructure(d))), DecisionInfo) == (
        DecisionInfo(
            "d1", "reaction", "ana", "Attack?", ["attack", "pass"], ["pass"], "aria", False
        )
    )


def test_limits_defaults() -> None:
    assert wire.unstructure(DEFAULT_LIMITS) == {
        "max_message_bytes": 16384,
        "rate_per_second": 20,
        "rate_burst": 40,
        "max_connections_per_encounter": 32,
        "ping_interval_seconds": 20,
        "idle_timeout_seconds": 300,
        "outgoing_queue": 256,
        "reaction_seconds": 30,
        "abuse_refusals": 40,
        "abuse_window_seconds": 10,
        "max_connections_per_token": 4,
        "max_spectators_per_encounter": 16,
        "reply_bytes_burst": 4_000_000,
        "reply_bytes_per_second": 200_000,
        "chat_max_chars": 500,
        "table_rate_per_second": 0.5,
        "table_rate_burst": 10,
    }


# -- broken messages fail both the schema and the classes ------------------------------------------

WRONG: dict[str, Any] = {"string": 5, "integer": "5", "boolean": "yes", "object": [], "array": {}}


def _wrong_value(prop: dict[str, Any]) -> Any:
    if "type" in prop:
        return WRONG[prop["type"]]
    if "$ref" in prop:
        return "not an object"
    if "anyOf" in prop:
        kinds = {o.get("type") for o in prop["anyOf"]}
        return True if "boolean" not in kinds else 5
    if "enum" in prop or "const" in prop:
        return "no-such-value"
    raise AssertionError(f"no wrong value for {prop}")


def _cases(kind: str) -> list[tuple[str, str, Any, type]]:
    """(schema name, description, broken data, class) for every field of every sample."""
    found = []
    if kind == "params":
        samples = {m: (f"{m}.params", METHODS[m][0], s[-1]) for m, s in params_samples().items()}
    else:
        samples = {m: (f"{m}.result", METHODS[m][1], s[0]) for m, s in result_samples().items()}
    for name, cls, sample in samples.values():
        data = on_wire(sample)
        document = schema(name)
        for field in document["required"]:
            broken = {k: v for k, v in data.items() if k != field}
            found.append((name, f"missing {field}", broken, cls))
        for field, prop in document["properties"].items():
            if field in data:
                found.append((name, f"wrong {field}", {**data, field: _wrong_value(prop)}, cls))
        found.append((name, "extra key", {**data, "bogus": 1}, cls))
    return found


@pytest.mark.parametrize(
    ("name", "what", "data", "cls"), _cases("params"), ids=lambda x: x if isinstance(x, str) else ""
)
def test_broken_params_fail_schema_and_parser(name: str, what: str, data: Any, cls: type) -> None:
    assert errors(name, data), f"{name}: {what} passed the schema"
    method = name.removesuffix(".params")
    with pytest.raises(ProtocolError) as info:
        parse_params(method, data)
    assert info.value.name == "invalid_params"
    assert info.value.code == 1005
    field = what.split()[-1]
    assert (field if field != "key" else "bogus") in info.value.message


@pytest.mark.parametrize(
    ("name", "what", "data", "cls"), _cases("result"), ids=lambda x: x if isinstance(x, str) else ""
)
def test_broken_results_fail_schema_and_classes(name: str, what: str, data: Any, cls: type) -> None:
    assert errors(name, data), f"{name}: {what} passed the schema"
    with pytest.raises(cattrs.BaseValidationError):
        wire.structure(data, cls)
    with pytest.raises(ValueError, match=r"\$\.result"):
        validate_server_message({"id": 1, "result": data}, name.removesuffix(".result"))


@pytest.mark.parametrize(
    "params",
    [
        {"protocol": "one", "client": {"name": "a", "version": "1"}},
        {"protocol": "1.0", "client": {"name": "a", "version": 1}},
        {"protocol": "1.0", "client": {"name": "a", "version": "1", "os": "x"}},
    ],
)
def test_nested_and_value_problems_fail_both(params: dict[str, Any]) -> None:
    assert errors("hello.params", params)
    with pytest.raises(ProtocolError, match="invalid_params"):
        parse_params("hello", params)


@pytest.mark.parametrize(
    ("method", "params", "words"),
    [
        ("join", {"encounter": "e", "token": "t", "last_seq": -1}, "last_seq must be 0 or more"),
        ("create_seat", {"encounter": "e", "player": "gm"}, 'player cannot be "gm"'),
        ("create_seat", {"encounter": "e", "player": ""}, "player must be 1 to 64"),
        ("create_seat", {"encounter": "e", "player": "p", "creatures": [1]}, "creatures[0]"),
        ("join", {"encounter": "e", "token": 5}, "params.token"),
        ("list_encounters", {"limit": 0}, "limit must be from 1 to 500"),
        ("list_encounters", {"offset": -1}, "offset must be 0 or more"),
        ("ping", {"x": 1}, "unknown field(s) 'x'"),
        ("command", {"encounter": "e", "type": ""}, "type must not be empty"),
        ("create_encounter", {"name": "n", "arena": 3, "creatures": []}, "arena"),
    ],
)
def test_params_errors_name_the_field(method: str, params: dict[str, Any], words: str) -> None:
    assert errors(f"{method}.params", params)
    with pytest.raises(ProtocolError) as info:
        parse_params(method, params)
    assert info.value.name == "invalid_params"
    assert words in info.value.message
    assert info.value.message.endswith(".")


def test_inline_arena_is_checked_against_the_arena_schema() -> None:
    good = on_wire(params_samples()["create_encounter"][1])
    assert errors("create_encounter.params", good) == []
    assert schema("create_encounter.params")["properties"]["arena"]["anyOf"][1] == {
        "$ref": "arena.schema.json"
    }
    for bad_arena in (
        {"id": "a", "name": "A", "zones": []},
        {"id": "a", "name": "A", "zones": [{"id": "z", "name": "Z", "size": 0}]},
        {"id": "a b", "name": "A", "zones": [{"id": "z", "name": "Z", "size": 30}]},
        {"id": "a", "zones": [{"id": "z", "name": "Z", "size": 30}]},
        {**good["arena"], "bogus": 1},
    ):
        assert errors("create_encounter.params", {**good, "arena": bad_arena}), bad_arena
    assert errors("create_encounter.params", {**good, "arena": ""})


def test_null_optional_params_mean_absent() -> None:
    data = {"encounter": "e", "token": "t", "last_seq": None}
    assert errors("join.params", data) == []
    assert parse_params("join", data) == JoinParams("e", "t")
    assert dump(JoinParams("e", "t")) == '{"encounter":"e","token":"t"}'


def test_unknown_method() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_params("launch", {})
    assert (info.value.name, info.value.code) == ("unknown_method", 1002)
    assert "'launch'" in info.value.message and "hello" in info.value.message


def test_broken_notifications_fail() -> None:
    good = on_wire(make_notification(notification_samples()["prompt"][0]))
    cases = [
        {**good, "id": 1},
        {"method": "prompt", "params": {**good["params"], "deadline_seconds": "soon"}},
        {
            "method": "prompt",
            "params": {k: v for k, v in good["params"].items() if k != "decision"},
        },
        {"method": "bogus", "params": {}},
    ]
    for message in cases:
        assert errors("server_message", message)
        with pytest.raises(ValueError, match=r"^\$"):
            validate_server_message(message)


# -- events of real play -----------------------------------------------------------------------------


def test_every_event_type_has_an_example() -> None:
    assert set(all_event_examples()) == set(EVENT_TYPES)


def test_every_event_of_the_short_encounter_validates() -> None:
    events = short_encounter().events
    assert len(events) > 10
    payload = validator("event_payload")
    for seq, event in enumerate(events, start=1):
        data = on_wire(event_to_dict(event))
        assert list(payload.iter_errors(data)) == [], data
        validate_server_message(on_wire(make_notification(EventNotification("e", seq, data))))


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_every_event_type_validates(name: str) -> None:
    data = on_wire(event_to_dict(all_event_examples()[name]))
    assert errors("event_payload", data) == []
    broken = {k: v for k, v in data.items() if k != list(data)[-1]} if len(data) > 1 else None
    if broken is not None:
        assert errors("event_payload", broken), f"{name} without {list(data)[-1]} passed"
    assert errors("event_payload", {**data, "surplus": 1})


def test_hidden_and_unknown_events() -> None:
    assert errors("event_payload", {"type": "hidden"}) == []
    assert errors("event_payload", {"type": "hidden", "creature": "spy"})
    assert errors("event_payload", {"type": "no_such_event"})
    assert errors("event_payload", {"creature": "aria"})


def test_wrong_nested_event_field_is_reported_with_its_path() -> None:
    attack = next(e for e in short_encounter().events if e.type == "attack_made")
    data = on_wire(event_to_dict(attack))
    data["roll"]["total"] = "nineteen"
    message = on_wire(make_notification(EventNotification("e", 9, data)))
    with pytest.raises(ValueError, match=r"\$\.params\.event\.roll\.total"):
        validate_server_message(message)


# -- snapshots ----------------------------------------------------------------------------------------


def test_snapshot_schema_requires_every_state_key() -> None:
    data = snapshot_data()
    document = schema("snapshot")
    assert document["required"] == list(data)
    assert errors("snapshot", data) == []
    for key in data:
        assert errors("snapshot", {k: v for k, v in data.items() if k != key}), key
    assert errors("snapshot", {**data, "extra": 1})


def test_filtered_snapshot_validates() -> None:
    data = snapshot_data()
    data["creatures"] = {k: v for k, v in data["creatures"].items() if not v["hidden"]}
    data["resources"] = None
    data["active"] = None
    assert errors("snapshot", data) == []


# -- generated files ------------------------------------------------------------------------------------


@pytest.mark.docs  # SPEC.md's generated tables, with the schema files
def test_generated_files_are_up_to_date() -> None:
    stale = _generate.stale_files()
    assert stale == [], f"out of date: {', '.join(stale)}; run {_generate.COMMAND}"
    assert _generate.main(["--check"]) == 0


def test_every_schema_file_is_generated() -> None:
    files = {f"{name}.schema.json" for name in ("request", "error", "server_message")}
    generated = set(_generate.schema_files())
    assert set(schema_names()) == generated == set(schema_names(strict=False))
    assert files <= generated


def test_generated_event_schema_lists_every_event_type() -> None:
    document = schema("event_payload")
    built_in, plugin = document["properties"]["type"]["anyOf"]
    assert set(built_in["enum"]) == {*EVENT_TYPES, "hidden"}
    # A plugin's event type is dotted (since 1.4); no built-in one is.
    assert plugin == {"type": "string", "pattern": r"^[^.\s]+(\.[^.\s]+)+$"}
    assert not any("." in name for name in EVENT_TYPES)
    assert document["$defs"]["event.plugin"]["required"] == ["type", "data"]
    for name, cls in EVENT_TYPES.items():
        definition = document["$defs"][f"event.{name}"]
        assert list(definition["properties"]) == ["type", *(f.name for f in attrs.fields(cls))]


# -- parse_request --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "words", "request_id"),
    [
        ('{"id": 1,', "parse_error", "not valid JSON", None),
        ('{"id": 1, "method": "ping"\n x}', "parse_error", "line 2, column 2", None),
        ("[1, 2]", "parse_error", "must be a JSON object, not a list", None),
        ('"hello"', "parse_error", "not text", None),
        ('{"method": "ping"}', "invalid_request", 'no "id"', None),
        ('{"id": null, "method": "ping"}', "invalid_request", "not null", None),
        ('{"id": true, "method": "ping"}', "invalid_request", "not true/false", None),
        ('{"id": 1.5, "method": "ping"}', "invalid_request", "not a number", None),
        ('{"id": "", "method": "ping"}', "invalid_request", "1 to 64 characters", None),
        ('{"id": "' + "x" * 65 + '", "method": "ping"}', "invalid_request", "1 to 64", None),
        ('{"id": 7}', "invalid_request", 'no "method"', 7),
        ('{"id": 7, "method": 3}', "invalid_request", '"method" must be a non-empty string', 7),
        ('{"id": "a", "method": "ping", "params": []}', "invalid_request", "not a list", "a"),
        ('{"id": 7, "method": "ping", "params": null}', "invalid_request", "not null", 7),
        ('{"id": 7, "method": "ping", "jsonrpc": "2.0"}', "invalid_request", "jsonrpc", 7),
    ],
)
def test_parse_request_errors(text: str, name: str, words: str, request_id: Any) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_request(text)
    error = info.value
    assert error.name == name
    assert error.code == {"parse_error": 1000, "invalid_request": 1001}[name]
    assert words in error.message
    assert error.message[0].isupper() and error.message.endswith(".")
    assert error.request_id == request_id
    reply = on_wire(make_error_response(error.request_id, error))
    validate_server_message(reply)


def test_parse_request_accepts_good_requests() -> None:
    assert parse_request('{"id": 1, "method": "ping"}') == Request(1, "ping", {})
    assert parse_request('{"id":"x-1","method":"join","params":{"a":1}}') == Request(
        "x-1", "join", {"a": 1}
    )
    text = dump(Request(3, "hello", on_wire(params_samples()["hello"][0])))
    assert errors("request", json.loads(text)) == []
    assert parse_request(text).params["protocol"] == "1.0"


def test_request_schema_rejects_what_parse_request_rejects() -> None:
    for text in ['{"method": "ping"}', '{"id": true, "method": "p"}', '{"id": 1, "x": 1}']:
        assert errors("request", json.loads(text))
        with pytest.raises(ProtocolError):
            parse_request(text)


def test_encode_writes_what_servers_always_sent() -> None:
    note = PromptNotification("e1", decision(), 29.5)
    message = make_notification(note)
    server_text = json.JSONEncoder(separators=(",", ":")).encode(on_wire(message))
    assert encode(message) == server_text
    assert encode({"b": "é—"}) == '{"b":"\\u00e9\\u2014"}'
    assert json.loads(encode(message)) == json.loads(dump(message))


def test_dump_is_compact() -> None:
    assert dump(make_response(1, PingResult())) == '{"id":1,"result":{}}'
    assert dump({"b": "é"}) == '{"b":"é"}'


# -- without jsonschema ------------------------------------------------------------------------------


def test_importable_and_usable_without_jsonschema() -> None:
    good = on_wire(make_notification(notification_samples()["closing"][0]))
    bad = {"method": "closing", "params": {"reason": 5}}
    script = f"""
import sys
sys.modules["jsonschema"] = None
import zonekeep.protocol as p
p.validate_server_message({good!r})
try:
    p.validate_server_message({bad!r})
except ValueError as exc:
    print("refused:", exc)
assert "jsonschema" not in [m for m in sys.modules if sys.modules[m] is not None]
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert "refused:" in out and "reason" in out


def test_schema_lookup() -> None:
    assert schema("join.params") == schema("join.params.schema.json")
    first = schema("ping.result")
    first["mutated"] = True
    assert "mutated" not in schema("ping.result")
    with pytest.raises(KeyError):
        schema("no_such")


def test_validate_server_message_rejects_non_objects_and_unknown_methods() -> None:
    with pytest.raises(ValueError):
        validate_server_message([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        validate_server_message({"id": 1, "result": {}}, "no_such_method")
    with pytest.raises(ValueError):
        validate_server_message({"id": 1})
    copy.deepcopy(schema("server_message"))
