"""Asset data and plugin settings (issue 18, points 6 and 7): the SDK's small JSON Schema
validator, the arena loader checking assets' ``data`` against their tags' schemas at
exact paths (JSON and TOML files), the engine refusing bad declarations, settings
checked, kept and read through the context, and the operator's ``plugin_settings``
(file, environment, flags, ``zonekeep config check``, ``config show``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from helpers import example_plugin

from zonekeep.sdk import (
    OPEN_PHASES,
    ArenaError,
    AssetTagSpec,
    Command,
    CommandSpec,
    Creature,
    EncounterOptions,
    EncounterState,
    Refusal,
    RuleContext,
    SettingSpec,
    hookimpl,
    load_arena,
    parse_arena,
)
from zonekeep.sdk.engine import Engine, PluginLoadError
from zonekeep.sdk.host import check_schema, converter, schema_problems
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server import ServerConfig
from zonekeep.server._cli import main
from zonekeep.server._config import ConfigError, load_settings, to_toml
from zonekeep.server._encounter_file import EncounterFileError, parse_encounter

# -- the validator -----------------------------------------------------------------------------

DC = {"type": "integer", "minimum": 1, "maximum": 30}


@pytest.mark.parametrize(
    ("value", "schema", "problems"),
    [
        (12, DC, []),
        ("12", DC, [("dc", 'expected an integer, got string "12"')]),
        (12.0, DC, [("dc", "expected an integer, got number 12.0")]),
        (True, DC, [("dc", "expected an integer, got boolean true")]),
        (0, DC, [("dc", "must be at least 1, got integer 0")]),
        (31, DC, [("dc", "must be at most 30, got integer 31")]),
        (
            2.5,
            {"type": "number", "exclusiveMaximum": 2.5},
            [("dc", "must be less than 2.5, got number 2.5")],
        ),
        (None, {"type": ["string", "null"]}, []),
        (3, {"type": ["string", "null"]}, [("dc", "expected a string or null, got integer 3")]),
        ("fire", {"enum": ["fire", "cold"]}, []),
        (
            "acid",
            {"enum": ["fire", "cold"]},
            [("dc", 'expected one of "fire", "cold", got string "acid"')],
        ),
        (1, {"const": True}, [("dc", "must be true, got integer 1")]),
        ("2d6+1", {"type": "string", "format": "dice"}, []),
        (
            "2d",
            {"type": "string", "format": "dice"},
            [("dc", "bad dice expression string \"2d\"; expected e.g. '2d6', 'd8+1' or '5'")],
        ),
        ("", {"type": "string", "minLength": 1}, [("dc", "must be at least 1 characters long")]),
        (
            [1, "x"],
            {"type": "array", "items": {"type": "integer"}, "maxItems": 1},
            [
                ("dc", "takes at most 1 items, got 2"),
                ("dc[1]", 'expected an integer, got string "x"'),
            ],
        ),
        (
            {"zone": 3, "extra": 1},
            {
                "type": "object",
                "properties": {"zone": {"type": "string"}, "dc": DC},
                "required": ["dc"],
                "additionalProperties": False,
            },
            [
                ("dc.dc", "required field is missing"),
                ("dc.zone", "expected a string, got integer 3"),
                ("dc.extra", "unknown field 'extra' (the fields are: zone, dc)"),
            ],
        ),
        (
            {"a": "x"},
            {"type": "object", "additionalProperties": {"type": "integer"}},
            [
                ("dc.a", 'expected an integer, got string "x"'),
            ],
        ),
    ],
)
def test_the_validator_reports_each_problem_at_its_path(
    value: Any, schema: dict[str, Any], problems: list[tuple[str, str]]
) -> None:
    check_schema(schema)
    assert schema_problems(value, schema, "dc") == problems


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string", "pattern": "^a"}, "s: the keyword 'pattern' is not supported"),
        ({"type": "text"}, "s.type: one of string, integer"),
        ({"format": "email"}, "s.format: only 'dice' is supported, not 'email'"),
        ({"minimum": "1"}, "s.minimum: a number, not '1'"),
        (
            {"properties": {"a": {"oneOf": []}}},
            "s.properties.a: the keyword 'oneOf' is not supported",
        ),
        ({"items": []}, "s.items: a schema must be an object (a dict), not array"),
        ({"enum": []}, "s.enum: a non-empty list of values"),
    ],
)
def test_a_schema_outside_the_subset_is_refused(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        check_schema(schema, "s")


def test_a_schema_nested_too_deeply_is_refused() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(17):
        schema = {"type": "array", "items": schema}
    with pytest.raises(ValueError, match="nested more than 16 levels deep"):
        check_schema(schema)


# -- asset data in arena files ----------------------------------------------------------------

BRAZIER = AssetTagSpec(
    "brazier",
    "Kick it over to set the zone beside it burning.",
    data_schema={
        "type": "object",
        "properties": {"ignites": {"type": "string"}, "dc": DC},
        "required": ["ignites"],
    },
)
BELL = AssetTagSpec("bell", "Rings.", data_schema={"properties": {"loud": {"type": "boolean"}}})
LABEL = AssetTagSpec("label", "A tag without data.")
TAGS = {t.id: t for t in (BRAZIER, BELL, LABEL)}


def arena(*assets: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "hall",
        "name": "Hall",
        "zones": [
            {"id": "hall", "name": "Hall", "size": 30},
            {"id": "yard", "name": "Yard", "size": 30},
        ],
        "links": [{"a": "hall", "b": "yard", "direction": "beside"}],
        "assets": [
            {"id": f"a{i}", "name": f"A{i}", "kind": "prop", "zone": "hall", **asset}
            for i, asset in enumerate(assets)
        ],
    }


def problems(doc: dict[str, Any], tags: dict[str, AssetTagSpec] | None = TAGS) -> list[str]:
    with pytest.raises(ArenaError) as caught:
        parse_arena(doc, "hall.json", asset_tags=tags)
    return [str(p) for p in caught.value.problems]


def test_valid_data_is_kept_on_the_asset() -> None:
    doc = arena(
        {"tags": ["brazier", "bell"], "data": {"ignites": "yard", "dc": 14, "loud": True}},
        {"tags": ["label"]},
    )
    built = parse_arena(doc, asset_tags=TAGS)
    assert built.asset("a0").data == {"ignites": "yard", "dc": 14, "loud": True}
    assert built.asset("a1").data == {}


def test_every_problem_of_the_data_is_reported_at_its_path_among_the_others() -> None:
    doc = arena(
        {"tags": ["brazier"], "data": {"dc": "high"}},
        {"zone": "cellar", "tags": ["brazier", "bell"], "data": {"ignites": "yard", "lound": True}},
        {"tags": ["label"], "data": {"size": 2}},
        {"data": {"size": 2}},
    )
    assert problems(doc) == [
        "assets[0].data.ignites: required field is missing",
        'assets[0].data.dc: expected an integer, got string "high"',
        "assets[1].zone: unknown zone 'cellar'",
        "assets[1].data.lound: unknown field 'lound' (did you mean 'loud'?)",
        "assets[2].data.size: unknown field 'size': no tag of this asset takes data",
        "assets[3].data.size: unknown field 'size': no tag of this asset takes data",
    ]


def test_data_beside_a_tag_no_plugin_declares_is_kept_unchecked() -> None:
    doc = arena({"tags": ["brazier", "oil_slick"], "data": {"ignites": "yard", "spread": 2}})
    assert parse_arena(doc, asset_tags=TAGS).asset("a0").data == {"ignites": "yard", "spread": 2}
    # ... but the declared tag's own fields are still checked.
    doc = arena({"tags": ["brazier", "oil_slick"], "data": {"ignites": 3}})
    assert problems(doc) == ["assets[0].data.ignites: expected a string, got integer 3"]


def test_without_the_plugins_tags_data_is_only_checked_to_be_json() -> None:
    doc = arena({"tags": ["brazier"], "data": {"anything": [1, {"b": None}]}})
    assert parse_arena(doc).asset("a0").data == {"anything": [1, {"b": None}]}
    assert problems(arena({"data": [1]}), None) == ["assets[0].data: expected an object, got array"]


def test_a_toml_file_with_data_is_checked_at_the_same_paths(tmp_path: Path) -> None:
    path = tmp_path / "hall.toml"
    path.write_text(
        """id = "hall"
name = "Hall"

[[zones]]
id = "hall"
name = "Hall"
size = 30

[[assets]]
id = "brazier"
name = "Brazier"
kind = "prop"
zone = "hall"
tags = ["brazier"]
data = { ignites = "hall", dc = 0 }

[[assets]]
id = "clock"
name = "Clock"
kind = "prop"
zone = "hall"
tags = ["oil_slick"]

[assets.data]
lit = 1979-05-27T07:32:00
"""
    )
    with pytest.raises(ArenaError) as caught:
        load_arena(path, asset_tags=TAGS)
    assert [str(p) for p in caught.value.problems] == [
        "assets[0].data.dc: must be at least 1, got integer 0",
        "assets[1].data: lit: expected JSON data, got datetime",
    ]
    path.write_text(
        path.read_text()
        .replace("dc = 0", "dc = 9")
        .replace("lit = 1979-05-27T07:32:00", "lit = true")
    )
    loaded = load_arena(path, asset_tags=TAGS)
    assert loaded.asset("brazier").data == {"ignites": "hall", "dc": 9}
    assert loaded.asset("clock").data == {"lit": True}


def test_a_json_file_with_data_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "hall.json"
    path.write_text(
        json.dumps(arena({"tags": ["brazier"], "data": {"ignites": "yard", "dc": 2.5}}))
    )
    with pytest.raises(ArenaError) as caught:
        load_arena(path, asset_tags=TAGS)
    assert str(caught.value).splitlines()[1:] == [
        f"{path}: assets[0].data.dc: expected an integer, got number 2.5"
    ]


class _Tags:
    def __init__(self, *specs: AssetTagSpec) -> None:
        self.specs = specs

    @hookimpl
    def zonekeep_asset_tags(self) -> Iterable[AssetTagSpec]:
        return self.specs


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"properties": {"a": {"pattern": "x"}}}, "the keyword 'pattern' is not supported"),
        ({"type": "array", "items": {}}, "'type' must be 'object'"),
        ({"type": "object"}, "needs 'properties'"),
        (
            {"properties": {"a": {}}, "additionalProperties": False},
            "leave 'additionalProperties' out",
        ),
        ({"properties": {"a": {}}, "required": ["b"]}, "required field(s) b not in 'properties'"),
    ],
)
def test_the_engine_refuses_a_tag_schema_it_cannot_check(
    schema: dict[str, Any], message: str
) -> None:
    with pytest.raises(PluginLoadError) as caught:
        EncounterHarness([], extra_plugins=[_Tags(AssetTagSpec("odd", "x", data_schema=schema))])
    assert message in str(caught.value)
    assert "asset tag 'odd'" in str(caught.value)


def test_an_asset_tag_spec_of_two_arguments_still_works() -> None:
    spec = AssetTagSpec("bell", "Rings.")
    assert spec.data_schema is None
    h = EncounterHarness([], extra_plugins=[_Tags(spec)])
    assert h.engine.asset_tags["bell"] == spec


# -- settings --------------------------------------------------------------------------------


class Burning:
    """A plugin with two settings and a command that reports what it reads."""

    ZONEKEEP_PLUGIN = None
    read: list[tuple[Any, Any]] = []

    @hookimpl
    def zonekeep_settings(self) -> Iterable[SettingSpec]:
        return (
            SettingSpec("burn_die", "Fire each turn.", {"type": "string", "format": "dice"}, "1d6"),
            SettingSpec("rounds", "How long.", {"type": "integer", "minimum": 1}, 3),
        )

    @hookimpl
    def zonekeep_commands(self) -> Iterable[CommandSpec]:
        def peek(ctx: RuleContext, cmd: Command) -> None:
            Burning.read.append((ctx.setting("burning", "burn_die"), ctx.settings("burning")))

        return (CommandSpec("peek", peek, "Read the settings.", who="gm", phases=OPEN_PHASES),)


def burning_harness(**settings: Any) -> EncounterHarness:
    from zonekeep.sdk.engine import LoadedPlugin

    plugin = LoadedPlugin("burning", "1.0", "in-process", Burning())
    options = EncounterOptions(settings={"burning": settings}) if settings else None
    return EncounterHarness([Creature("a", "A", "party")], extra_plugins=[plugin], options=options)


def test_the_encounter_keeps_every_effective_setting_and_hooks_read_them() -> None:
    Burning.read.clear()
    h = burning_harness(burn_die="2d4")
    assert h.state.options.settings["burning"] == {"burn_die": "2d4", "rounds": 3}
    h.send("peek")
    assert Burning.read == [("2d4", {"burn_die": "2d4", "rounds": 3})]


def test_a_setting_missing_from_an_older_encounter_reads_as_its_default() -> None:
    h = burning_harness()
    ctx = RuleContext(EncounterState(), h.dice, h.engine.hook)  # options without settings
    assert ctx.setting("burning", "rounds") == 3
    assert ctx.settings("burning") == {"burn_die": "1d6", "rounds": 3}
    with pytest.raises(KeyError, match="declares no setting 'colour'"):
        ctx.setting("burning", "colour")


def test_bad_settings_refuse_the_encounter_naming_each_path() -> None:
    h = burning_harness()
    given = {"burning": {"burn_die": "hot", "rounds": 0, "colour": "red"}, "frost": {}}
    with pytest.raises(Refusal) as caught:
        h.engine.create("x", [], options=EncounterOptions(settings=given))
    assert caught.value.code == "invalid_params"
    assert caught.value.message == (
        'options.settings.burning.burn_die: bad dice expression string "hot"; expected e.g. '
        "'2d6', 'd8+1' or '5'; options.settings.burning.rounds: must be at least 1, got "
        "integer 0; options.settings.burning.colour: unknown setting (it has: burn_die, "
        "rounds); options.settings.frost: no plugin called 'frost' declares settings "
        "(burning, zonekeep.srd do)."
    )


class _Settings:
    def __init__(self, *specs: object) -> None:
        self.specs = specs

    @hookimpl
    def zonekeep_settings(self) -> Iterable[object]:
        return self.specs


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ((SettingSpec("Burn Die", "x", {"type": "string"}, "a"),), "an id must be a lower-case"),
        (
            (SettingSpec("a", "x", {}, 1), SettingSpec("a", "y", {}, 2)),
            "declared the setting 'a' twice",
        ),
        (
            (SettingSpec("a", "x", {"type": "string", "pattern": "."}, "a"),),
            "'pattern' is not supported",
        ),
        (
            (SettingSpec("a", "x", {"type": "integer"}, "3"),),
            "the default of setting a: expected an integer",
        ),
        (("a",), "not a SettingSpec"),
    ],
)
def test_the_engine_refuses_bad_setting_declarations(
    specs: tuple[object, ...], message: str
) -> None:
    from zonekeep.sdk.engine import LoadedPlugin

    with pytest.raises(PluginLoadError) as caught:
        Engine([LoadedPlugin("mine", "1", "in-process", _Settings(*specs))])
    assert message in str(caught.value) and "plugin 'mine'" in str(caught.value)


def test_options_with_settings_round_trip_and_old_options_still_load() -> None:
    options = EncounterOptions(settings={"burning": {"burn_die": "1d8"}})
    assert converter.structure(converter.unstructure(options), EncounterOptions) == options
    old = converter.unstructure(EncounterOptions())
    del old["settings"]
    assert converter.structure(old, EncounterOptions).settings == {}


def test_an_encounter_file_s_settings_are_checked_with_the_engine() -> None:
    h = burning_harness()
    data = {
        "name": "x",
        "creatures": [{"id": "a", "name": "A", "side": "p"}],
        "options": {"settings": {"burning": {"rounds": "many"}}},
    }
    with pytest.raises(EncounterFileError) as caught:
        parse_encounter(data, engine=h.engine)
    assert caught.value.problems == [
        'options.settings.burning.rounds: expected an integer, got string "many"'
    ]


# -- the operator's plugin_settings -------------------------------------------------------------


def test_plugin_settings_come_from_the_file_the_environment_and_flags_merged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "zonekeep.toml"
    path.write_text(
        '[server.plugin_settings.hazards]\nburn_die = "1d8"\nburn_dc = 11\n'
        '[server.plugin_settings."zonekeep.x"]\nmode = "on"\n'
    )
    assert load_settings(path).config.plugin_settings == {
        "hazards": {"burn_die": "1d8", "burn_dc": 11},
        "zonekeep.x": {"mode": "on"},
    }
    environ = {"ZONEKEEP_SERVER_PLUGIN_SETTINGS": '{"hazards": {"burn_dc": 14}}'}
    flags = {"server.plugin_settings": {"hazards": {"burn_die": "2d6"}}}
    loaded = load_settings(path, environ, flags)
    assert loaded.config.plugin_settings == {
        "hazards": {"burn_die": "2d6", "burn_dc": 14},
        "zonekeep.x": {"mode": "on"},
    }
    # config show writes it back as TOML that reads as the same settings
    shown = tmp_path / "shown.toml"
    shown.write_text(to_toml(loaded))
    assert load_settings(shown).config.plugin_settings == loaded.config.plugin_settings


def test_malformed_plugin_settings_are_refused_with_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, {"ZONEKEEP_SERVER_PLUGIN_SETTINGS": "burn_die=1d8"})
    assert caught.value.problems == [
        'ZONEKEEP_SERVER_PLUGIN_SETTINGS: "burn_die=1d8" is not a table per plugin name, '
        "each of its settings"
    ]
    with pytest.raises(ConfigError) as caught:
        load_settings(None, {"ZONEKEEP_SERVER_PLUGIN_SETTINGS": '{"hazards": 3}'})
    assert caught.value.problems[0].startswith("ZONEKEEP_SERVER_PLUGIN_SETTINGS: ")


def test_the_server_refuses_to_start_with_a_bad_plugin_setting() -> None:
    from zonekeep.sdk.engine import LoadedPlugin
    from zonekeep.server import ZonekeepServer

    engine = Engine([LoadedPlugin("burning", "1.0", "in-process", Burning())])
    config = ServerConfig(plugin_settings={"burning": {"rounds": 0, "burn_dei": "1d8"}})
    with pytest.raises(ConfigError) as caught:
        ZonekeepServer(config, engine=engine)
    assert caught.value.problems == [
        "server.plugin_settings.burning.rounds: must be at least 1, got integer 0",
        "server.plugin_settings.burning.burn_dei: unknown setting (did you mean 'burn_die'?)",
    ]


def test_config_check_and_serve_check_plugin_settings_against_the_plugins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example_plugin("zonekeep_hazards")
    path = tmp_path / "zonekeep.toml"
    path.write_text('[server.plugin_settings.hazards]\nburn_die = "hot"\n')
    assert main(["config", "check", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        'server.plugin_settings.hazards.burn_die: bad dice expression string "hot"; '
        "expected e.g. '2d6', 'd8+1' or '5'\n"
    )
    path.write_text('[server.plugin_settings.hazards]\nburn_die = "1d8"\n')
    assert main(["config", "check", "--config", str(path)]) == 0
    assert capsys.readouterr().out == "ok\n"
    # serve's --plugin-setting flag: checked the same way before anything starts
    status = main(
        ["serve", "--port", "0", "--store", "memory", "--plugin-setting", "hazards.burn_dc=0"]
    )
    assert status == 2
    assert capsys.readouterr().err.endswith(
        "server.plugin_settings.hazards.burn_dc: must be at least 1, got integer 0\n"
    )
    assert main(["serve", "--plugin-setting", "burn_dc"]) == 2
    assert "--plugin-setting 'burn_dc': write PLUGIN.SETTING=VALUE" in capsys.readouterr().err


class _ArenaWithData:
    """A plugin that declares the brazier tag and contributes an arena using it."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @hookimpl
    def zonekeep_asset_tags(self) -> Iterable[AssetTagSpec]:
        return (BRAZIER,)

    @hookimpl
    def zonekeep_arenas(self) -> Iterable[dict[str, Any]]:
        return [arena({"tags": ["brazier"], "data": self.data})]


def test_a_plugins_arena_with_bad_data_stops_the_start_at_its_path() -> None:
    from zonekeep.sdk.engine import LoadedPlugin
    from zonekeep.server._registry import ArenaLibraryError, plugin_arenas

    bad = Engine([LoadedPlugin("fire", "1", "in-process", _ArenaWithData({"dc": 3}))])
    with pytest.raises(ArenaLibraryError) as caught:
        plugin_arenas(bad)
    assert caught.value.problems[0].splitlines()[1:] == [
        "plugin 'fire', arena 0: assets[0].data.ignites: required field is missing"
    ]
    good = Engine([LoadedPlugin("fire", "1", "in-process", _ArenaWithData({"ignites": "yard"}))])
    assert plugin_arenas(good)["hall"]["assets"][0]["data"] == {"ignites": "yard"}
