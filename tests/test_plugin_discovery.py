"""Third-party plugins: found through the ``zonekeep`` entry-point group, checked, configured.

Each test builds a real distribution in ``tmp_path``: a package declaring
``ZONEKEEP_PLUGIN`` and a ``zonekeep_commands`` hookimpl, its ``pyproject.toml``,
and the ``.dist-info`` directory an installer would write (``METADATA`` and
``entry_points.txt``). Putting that directory on ``sys.path`` makes
``importlib.metadata`` find it exactly as if it were pip-installed, without
touching the shared virtualenv.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import example_plugin

from zonekeep.sdk import PluginInfo, Refusal
from zonekeep.sdk.engine import (
    BUILT_IN,
    Engine,
    LoadedPlugin,
    PluginConflict,
    PluginLoadError,
    describe_plugins,
    discover,
    zonekeep_version,
)
from zonekeep.sdk.host import SDK_VERSION, VersionRangeError, parse_version, version_in_range
from zonekeep.server import ServerConfig, ZonekeepServer, load_config

MakeDist = Callable[..., Path]


@pytest.fixture
def make_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeDist]:
    """Build and "install" a distribution providing one zonekeep plugin."""
    before = set(sys.modules)

    def make(
        dist: str,
        plugin: str,
        *,
        version: str = "1.0.0",
        sdk: str = ">=0.1,<0.2",
        commands: tuple[str, ...] = (),
        declare: bool = True,
        info_name: str | None = None,
        body: str = "",
    ) -> Path:
        module = f"zk_test_{dist.replace('-', '_')}"
        root = tmp_path / dist
        package = root / module
        package.mkdir(parents=True)
        specs = ", ".join(
            f'CommandSpec({c!r}, lambda ctx, cmd: None, "Test command {c}.", who="gm", '
            f'costs=("free",), on_turn=None, phases=())'
            for c in commands
        )
        declaration = (
            f"ZONEKEEP_PLUGIN = PluginInfo(name={info_name or plugin!r}, version={version!r}, "
            f'sdk={sdk!r}, description="A test plugin.")'
            if declare
            else ""
        )
        (package / "__init__.py").write_text(
            textwrap.dedent(
                """\
                from zonekeep.sdk import CommandSpec, PluginInfo, hookimpl

                {declaration}

                @hookimpl
                def zonekeep_commands():
                    return ({specs})
                """
            ).format(declaration=declaration, specs=specs + "," if specs else "")
            + body,
            encoding="utf-8",
        )
        (root / "pyproject.toml").write_text(
            textwrap.dedent(
                f"""\
                [project]
                name = "{dist}"
                version = "{version}"
                dependencies = ["zonekeep"]

                [project.entry-points.zonekeep]
                {plugin} = "{module}"
                """
            ),
            encoding="utf-8",
        )
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(
            f"[zonekeep]\n{plugin} = {module}\n", encoding="utf-8"
        )
        monkeypatch.syspath_prepend(str(root))
        return root

    yield make
    for name in set(sys.modules) - before:
        if name.startswith("zk_test_"):
            del sys.modules[name]


def _problems(exc: pytest.ExceptionInfo[PluginLoadError]) -> tuple[str, ...]:
    return exc.value.problems


# -- the SDK's version ranges -------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("0.1.0", ">=0.1,<0.2", True),
        ("0.2.0", ">=0.1,<0.2", False),
        ("0.1.0", ">0.1", False),
        ("0.1.1", ">0.1", True),
        ("0.1.0", "==0.1", True),
        ("0.1.0", "!=0.1.0", False),
        ("0.1.0", "<=0.1.0, >= 0.0.9", True),
        ("1.0", "<1.0.1", True),
    ],
)
def test_version_ranges(version: str, spec: str, expected: bool) -> None:
    assert version_in_range(version, spec) is expected


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("", "empty"),
        (">=0.1,", "empty part"),
        ("0.1", "does not start with one of"),
        ("~=0.1", "does not start with one of"),
        (">=0.1a1", "dotted whole numbers"),
        (">=", "dotted whole numbers"),
    ],
)
def test_a_malformed_range_says_what_is_wrong(spec: str, says: str) -> None:
    with pytest.raises(VersionRangeError, match=says):
        version_in_range("0.1.0", spec)


def test_sdk_version_is_a_version() -> None:
    assert parse_version(SDK_VERSION) == (0, 1, 0)
    assert PluginInfo("x", "1.0", ">=0.1,<0.2").supports()
    assert not PluginInfo("x", "1.0", ">=0.2").supports()


# -- discovery ------------------------------------------------------------------------------


def test_an_installed_plugin_is_discovered_and_its_command_served(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", commands=("shout",))
    # Only this test's plugin among the third-party ones (the example package may be
    # installed too).
    loaded = discover(enabled=["shout"])
    shout = next(p for p in loaded if p.name == "shout")
    assert (shout.version, shout.source) == ("1.0.0", "zk-shout")
    assert shout.description == "A test plugin."
    assert [p.source for p in loaded[:-1]] == [BUILT_IN] * (len(loaded) - 1)

    engine = Engine.from_config(enabled=["shout"])
    # Its command is in its namespace; the short name still finds it.
    assert "shout.shout" in engine.commands
    assert "shout" not in engine.commands
    assert engine.resolve("command", "shout") == "shout.shout"
    assert engine.command_owners["shout.shout"] == "shout"
    assert {p.name: p.commands for p in engine.plugins}["shout"] == ("shout.shout",)


def test_the_server_builds_its_engine_from_the_config(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", commands=("shout",))
    assert "shout.shout" in ZonekeepServer(ServerConfig(store="memory")).engine.commands
    config = ServerConfig(store="memory", plugins_disabled=["shout"])
    assert config.plugins_disabled == ("shout",)
    assert "shout.shout" not in ZonekeepServer(config).engine.commands
    given = Engine()
    assert ZonekeepServer(ServerConfig(store="memory"), engine=given).engine is given


def test_the_config_file_names_plugins(make_dist: MakeDist, tmp_path: Path) -> None:
    make_dist("zk-shout", "shout", commands=("shout",))
    path = tmp_path / "zonekeep.toml"
    path.write_text(
        '[server]\nstore = "memory"\nplugins_enabled = ["shout"]\n'
        'plugins_disabled = ["zonekeep.flanking"]\n',
        encoding="utf-8",
    )
    config = load_config(path)
    assert (config.plugins_enabled, config.plugins_disabled) == (("shout",), ("zonekeep.flanking",))
    names = [p.name for p in ZonekeepServer(config).engine.plugins]
    assert "shout" in names
    assert "zonekeep.flanking" not in names


def test_disabled_plugins_are_skipped_without_being_imported(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", commands=("shout",))
    make_dist("zk-broken", "broken", body="raise RuntimeError('never import me')\n")
    engine = Engine.from_config(disabled=["shout", "broken"])
    assert "shout" not in engine.commands
    assert {"shout", "broken"}.isdisjoint(p.name for p in engine.plugins)
    assert "zk_test_zk_broken" not in sys.modules


def test_a_plugin_that_fails_to_import_is_reported(make_dist: MakeDist) -> None:
    make_dist("zk-broken", "broken", body="raise RuntimeError('boom')\n")
    with pytest.raises(PluginLoadError) as exc:
        discover()
    assert _problems(exc) == (
        "plugin 'broken' (from distribution 'zk-broken') could not be loaded from "
        "'zk_test_zk_broken': RuntimeError: boom",
    )


def test_a_built_in_plugin_can_be_disabled() -> None:
    engine = Engine.from_config(disabled=["zonekeep.flanking"])
    assert "zonekeep.flanking" not in [p.name for p in engine.plugins]
    assert "zonekeep.combat" in [p.name for p in engine.plugins]


def test_enabled_loads_only_those_third_party_plugins(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", commands=("shout",))
    make_dist("zk-whisper", "whisper", commands=("whisper",))
    engine = Engine.from_config(enabled=["whisper"])
    assert "whisper.whisper" in engine.commands
    assert "shout.shout" not in engine.commands
    assert "attack" in engine.commands  # built-ins always load
    both = Engine.from_config()
    assert {"shout.shout", "whisper.whisper"} <= set(both.commands)


def test_unknown_names_are_errors(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout")
    with pytest.raises(PluginLoadError) as exc:
        discover(enabled=["shuot"], disabled=["nope", "shout"])
    problems = _problems(exc)
    assert len(problems) == 2
    assert problems[0].startswith("there is no plugin called 'shuot' to enable; known plugins: ")
    assert "shout" in problems[0]
    assert "zonekeep.combat" in problems[0]
    assert problems[1].startswith("there is no plugin called 'nope' to disable")


def test_enabling_and_disabling_the_same_plugin_is_an_error(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout")
    with pytest.raises(PluginLoadError) as exc:
        discover(enabled=["shout"], disabled=["shout"])
    assert _problems(exc) == ("plugin 'shout' is both enabled and disabled",)


def test_a_plugin_made_for_another_sdk_is_refused(make_dist: MakeDist) -> None:
    make_dist("zk-future", "future", version="2.3.0", sdk=">=0.2,<0.3")
    with pytest.raises(PluginLoadError) as exc:
        Engine.from_config()
    assert _problems(exc) == (
        "plugin 'future' 2.3.0 (from distribution 'zk-future') needs zonekeep SDK "
        "'>=0.2,<0.3', but this zonekeep provides SDK 0.1.0; install a version of "
        "'future' made for SDK 0.1.0",
    )
    assert str(exc.value).startswith("zonekeep cannot load its plugins:\n  - plugin 'future'")


def test_a_plugin_with_an_unreadable_sdk_range_is_refused(make_dist: MakeDist) -> None:
    make_dist("zk-odd", "odd", sdk="0.1")
    with pytest.raises(PluginLoadError) as exc:
        discover()
    (problem,) = _problems(exc)
    assert problem.startswith(
        "plugin 'odd' 1.0.0 (from distribution 'zk-odd') declares an sdk range that cannot be read: "
    )


def test_a_plugin_without_zonekeep_plugin_is_refused(make_dist: MakeDist) -> None:
    make_dist("zk-anon", "anon", declare=False)
    with pytest.raises(PluginLoadError) as exc:
        discover()
    assert _problems(exc) == (
        "plugin 'anon' (from distribution 'zk-anon') declares no ZONEKEEP_PLUGIN",
    )


def test_a_declaration_under_another_name_is_refused(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", info_name="yell")
    with pytest.raises(PluginLoadError, match="calls itself 'yell' in ZONEKEEP_PLUGIN"):
        discover()


def test_every_problem_is_listed_at_once(make_dist: MakeDist) -> None:
    make_dist("zk-anon", "anon", declare=False)
    make_dist("zk-future", "future", sdk=">=9")
    make_dist("zk-shout", "shout")
    with pytest.raises(PluginLoadError) as exc:
        discover(disabled=["ghost"])
    problems = _problems(exc)
    assert len(problems) == 3
    assert "'ghost'" in problems[0]
    assert "'anon'" in problems[1]
    assert "'future'" in problems[2]


def test_the_built_in_prefix_is_reserved(make_dist: MakeDist) -> None:
    make_dist("zk-fake", "zonekeep.fake")
    with pytest.raises(PluginLoadError, match="reserved for zonekeep's built-in plugins"):
        discover()


def test_two_plugins_declaring_one_command_both_load_and_the_short_name_is_ambiguous(
    make_dist: MakeDist,
) -> None:
    make_dist("zk-shout", "shout", commands=("shout",))
    make_dist("zk-yell", "yell", commands=("shout",))
    engine = Engine.from_config(enabled=["shout", "yell"])
    assert {"shout.shout", "yell.shout"} <= set(engine.commands)
    with pytest.raises(Refusal) as exc:
        engine.resolve("command", "shout")
    assert exc.value.code == "ambiguous_id"
    assert exc.value.message == (
        "The command 'shout' is ambiguous: it could be 'shout.shout' and 'yell.shout'; "
        "use the full id."
    )
    assert engine.resolve("command", "yell.shout") == "yell.shout"


def test_one_plugin_declaring_a_command_twice_is_refused_at_start(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", commands=("shout", "shout"))
    with pytest.raises(PluginConflict) as exc:
        Engine.from_config(enabled=["shout"])
    assert str(exc.value) == (
        "command 'shout.shout' is declared by both plugin 'shout' (from distribution "
        "'zk-shout') and plugin 'shout' (from distribution 'zk-shout')"
    )


def test_a_plugin_command_named_like_a_built_in_one_leaves_the_built_in_its_id(
    make_dist: MakeDist,
) -> None:
    make_dist("zk-dash", "dash2", commands=("dash",))
    engine = Engine.from_config(enabled=["dash2"])
    assert engine.command_owners["dash"] == "zonekeep.turns"
    assert engine.command_owners["dash2.dash"] == "dash2"
    # A full id wins over a short name: "dash" stays the built-in's.
    assert engine.resolve("command", "dash") == "dash"


def test_a_plugin_may_not_declare_an_id_in_another_namespace(make_dist: MakeDist) -> None:
    make_dist("zk-dash", "dash2", commands=("zonekeep.dash",))
    with pytest.raises(PluginLoadError) as exc:
        Engine.from_config(enabled=["dash2"])
    assert _problems(exc) == (
        "plugin 'dash2' (from distribution 'zk-dash'): 'zonekeep.dash' is in another "
        "namespace; plugin 'dash2' declares its ids short ('dash') or as 'dash2'.<name>",
    )


# -- describing ------------------------------------------------------------------------------


def test_describe_plugins_lists_built_ins_and_the_plugin(make_dist: MakeDist) -> None:
    make_dist("zk-shout", "shout", commands=("shout", "bellow"))
    text = describe_plugins(Engine.from_config(enabled=["shout"]))
    lines = text.splitlines()
    assert len(lines) == len(Engine().plugins) + 1
    by_name = {line.split()[0]: line.split(None, 3) for line in lines}
    assert by_name["shout"] == ["shout", "1.0.0", "zk-shout", "shout.shout, shout.bellow"]
    assert by_name["zonekeep.combat"][1:3] == [zonekeep_version(), "built-in"]
    assert "attack" in by_name["zonekeep.combat"][3]
    assert by_name["zonekeep.flanking"][3] == "(nothing)"
    assert "condition prone" in by_name["zonekeep.conditions"][3]


def test_plugins_handed_to_the_engine_are_described_too() -> None:
    from zonekeep.plugins import load_default_plugins
    from zonekeep.sdk import CommandSpec, hookimpl

    class Wave:
        ZONEKEEP_PLUGIN = PluginInfo("wave", "0.3.0", ">=0.1")

        @staticmethod
        @hookimpl
        def zonekeep_commands() -> tuple[CommandSpec, ...]:
            return (CommandSpec("wave", lambda ctx, cmd: None, "Wave.", who="gm"),)

    engine = Engine([*load_default_plugins(), Wave])
    wave = engine.plugins[-1]
    assert isinstance(wave, LoadedPlugin)
    assert (wave.version, wave.source, wave.commands) == ("0.3.0", "in-process", ("wave.wave",))
    assert engine.plugins[0].name == "zonekeep.setup"
    # A plugin that declares ZONEKEEP_PLUGIN goes by its declared name.
    assert describe_plugins(engine).splitlines()[-1].split() == [
        "wave",
        "0.3.0",
        "in-process",
        "wave.wave",
    ]


def test_a_config_file_must_list_plugin_names(tmp_path: Path) -> None:
    path = tmp_path / "zonekeep.toml"
    path.write_text('[server]\nplugins_disabled = "zonekeep.flanking"\n', encoding="utf-8")
    with pytest.raises(
        ValueError, match=r'plugins_disabled: "zonekeep\.flanking" is not a list of strings'
    ):
        load_config(path)


def test_two_plugins_giving_behaviour_to_one_asset_tag_are_refused_naming_both() -> None:
    from zonekeep.plugins import load_default_plugins
    from zonekeep.sdk import AssetTagSpec, hookimpl
    from zonekeep.sdk.engine import PluginConflict

    class Floors:
        @staticmethod
        @hookimpl
        def zonekeep_asset_tags() -> tuple[AssetTagSpec, ...]:
            return (AssetTagSpec("collapsing_floor", "Falls."),)

    class MoreFloors:
        @staticmethod
        @hookimpl
        def zonekeep_asset_tags() -> tuple[AssetTagSpec, ...]:
            return (AssetTagSpec("collapsing_floor", "Falls too."),)

    assert "collapsing_floor" in Engine([*load_default_plugins(), Floors]).asset_tags
    with pytest.raises(PluginConflict, match="asset tag 'collapsing_floor' is declared by both"):
        Engine([*load_default_plugins(), Floors, MoreFloors])


# -- namespaced ids ------------------------------------------------------------------------------

_BURNING_TOO = """

from zonekeep.sdk import ConditionSpec


@hookimpl
def zonekeep_conditions():
    return (ConditionSpec("burning", "Another package's burning."),)
"""


def test_the_hazards_example_installs_beside_another_package_declaring_burning(
    make_dist: MakeDist,
) -> None:
    example_plugin("zonekeep_hazards")
    make_dist("zk-fire", "fire", body=_BURNING_TOO)
    engine = Engine.from_config(enabled=["hazards", "fire"])
    assert {"hazards.burning", "fire.burning"} <= set(engine.conditions)
    assert engine.conditions["fire.burning"].summary == "Another package's burning."
    with pytest.raises(Refusal) as exc:
        engine.resolve("condition", "burning")
    assert exc.value.code == "ambiguous_id"
    assert "'fire.burning' and 'hazards.burning'" in exc.value.message
    # The GM's grant_condition refuses the ambiguous short name, naming both ...
    from zonekeep.sdk import Creature
    from zonekeep.sdk.testing import EncounterHarness

    h = EncounterHarness(
        [Creature("gob", "Gob", "foes", hp=7, max_hp=7)],
        plugins=discover(enabled=["hazards", "fire"]),
    )
    refusal = h.refused("grant_condition", creature="gob", condition="burning")
    assert refusal.code == "ambiguous_id"
    assert "'fire.burning' and 'hazards.burning'" in refusal.message
    # ... and takes either full id; the hazards plugin's own short command name still works.
    h.send("grant_condition", creature="gob", condition="fire.burning")
    h.start(initiative=[10])
    h.send("ignite", creature="gob")
    assert h.creature("gob").conditions == ["fire.burning", "hazards.burning"]
