"""The command line and encounter files: playing an example to its end, reporting bad files."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import helpers
import pytest
from helpers import banner_lines, example_plugin, serve_argv

from zonekeep.sdk import RandomEntropy, replay
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import event_from_dict, state_to_dict
from zonekeep.server._cli import main
from zonekeep.server._encounter_file import EncounterFileError, load_encounter, parse_encounter
from zonekeep.server._links import network_address
from zonekeep.server._play import open_table, play_to_end

EXAMPLES = Path(__file__).parent.parent / "examples" / "encounters"
ENCOUNTERS = sorted(EXAMPLES.glob("*.json"))


@pytest.mark.parametrize("path", ENCOUNTERS, ids=lambda p: p.name)
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_every_example_encounter_plays_to_its_end(path: Path, seed: int) -> None:
    spec = load_encounter(path)
    table = open_table(Engine(), spec, RandomEntropy(seed))
    final = play_to_end(table)
    assert final.phase == "ended"
    assert state_to_dict(replay(table.events)) == state_to_dict(final)


def test_an_example_titled_after_a_place_names_its_own_arena() -> None:
    """A title that names one of the bundled arenas' places names the arena the
    encounter is fought in (the goblin ambush once named a tavern of another story)."""
    arenas = {
        path.name: json.loads(path.read_text(encoding="utf-8"))["name"]
        for path in (EXAMPLES.parent / "arenas").glob("*.json")
    }
    places = {name: name.removeprefix("The ") for name in arenas.values()}
    checked = 0
    for path in ENCOUNTERS:
        spec = load_encounter(path)
        named = [place for place in places.values() if place in spec.name]
        if named:
            checked += 1
            assert named == [spec.arena.name.removeprefix("The ")], (path.name, spec.name)
    assert checked >= 1
    assert load_encounter(EXAMPLES / "goblin-ambush.json").name == (
        "Goblin ambush at the Drowned Lantern"
    )


def test_play_prints_a_readable_log(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", str(EXAMPLES / "goblin-ambush.json"), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Encounter 'Goblin ambush at the Drowned Lantern' begins with Aria")
    assert "Surprised: Brom." in out
    assert "Initiative order:" in out
    assert "— Round 1 —" in out
    assert "The encounter ends:" in out


def test_play_json_lines_are_the_events(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", str(EXAMPLES / "goblin-ambush.json"), "--seed", "9", "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    events = [event_from_dict(json.loads(line)) for line in lines]
    assert events[0].type == "encounter_created"
    assert events[-1].type == "encounter_ended"
    assert replay(events).phase == "ended"


def test_same_seed_same_fight(capsys: pytest.CaptureFixture[str]) -> None:
    main(["play", str(EXAMPLES / "goblin-ambush.json"), "--seed", "11"])
    first = capsys.readouterr().out
    main(["play", str(EXAMPLES / "goblin-ambush.json"), "--seed", "11"])
    assert capsys.readouterr().out == first


WILDFIRE = Path(__file__).parent.parent / "examples" / "plugins" / "wildfire"


def test_play_loads_the_installed_plugins(capsys: pytest.CaptureFixture[str]) -> None:
    """`zonekeep play` runs the installed plugins, as `zonekeep serve` does: the wildfire
    example's encounter plays on its forge, where a burning goblin lights the oil."""
    example_plugin("zonekeep_wildfire")
    encounter = WILDFIRE / "encounters" / "forge-fire.json"
    assert main(["play", str(encounter), "--seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("Goblin arsonist enters Woodshed from Forge.")
    assert out[start : start + 5] == [
        "Goblin arsonist enters Woodshed from Forge.",
        "Goblin arsonist sets lamp_oil alight: woodshed goes up in flames",
        "Embers smoulder in woodshed",
        "Aria takes 9 fire damage (2d6: 5+4); 15 hit points left.",
        "Brom takes 4 fire damage (2d6: 5+4) [9 fire: resistance damage resistance (fire) -> 4]; "
        "26 hit points left.",
    ]
    # Its arena's asset data, checked against the plugin's schemas when the file loads.
    spec = load_encounter(encounter, Engine.from_config())
    assert spec.arena.asset("hearth_brazier").data == {"ignites": "woodshed", "dc": 13}


def test_a_bad_file_lists_every_problem_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "name": "x",
                "options": {"surprise": "yes"},
                "surprised": ["zed"],
                "positions": {"a": "attic"},
                "creatures": [
                    {"id": "a", "name": "A", "side": "p", "hp": "ten", "colour": "red"},
                    {"id": "a", "name": "B", "side": "q"},
                ],
                "extra": 1,
            }
        )
    )
    assert main(["play", str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{bad}: extra: unknown key (expected one of arena, creatures, description, hazards, "
        "name, options, positions, surprised)",
        f"{bad}: options.surprise: expected true or false, not text",
        f"{bad}: creatures[0].hp: expected a whole number, not text; "
        "creatures[0]: unknown field(s): colour",
        f"{bad}: creatures[1].id: duplicate creature id 'a'",
        f"{bad}: surprised: unknown creature 'zed'",
        f"{bad}: positions.a: unknown zone 'attic'",
    ]


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"name": "x",\n "creatures": [}\n')
    with pytest.raises(EncounterFileError) as info:
        load_encounter(bad)
    assert info.value.problems == ["line 2, column 16: invalid JSON: Expecting value"]


def test_an_arena_reference_must_load(tmp_path: Path) -> None:
    with pytest.raises(EncounterFileError, match=r"arena: cannot read 'missing\.json'"):
        parse_encounter(
            {
                "name": "x",
                "arena": "missing.json",
                "creatures": [{"id": "a", "name": "A", "side": "p"}],
            },
            base=tmp_path,
        )


def test_group_names_may_not_shadow_creature_ids() -> None:
    with pytest.raises(EncounterFileError, match="the group 'a' has the same id as a creature"):
        parse_encounter(
            {
                "name": "x",
                "creatures": [
                    {"id": "a", "name": "A", "side": "p"},
                    {"id": "b", "name": "B", "side": "q", "group": "a"},
                ],
            }
        )


def test_the_console_script_runs() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "zonekeep.server._cli",
            "play",
            str(EXAMPLES / "goblin-ambush.json"),
            "--seed",
            "2",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "The encounter ends:" in proc.stdout


def test_serve_prints_how_to_connect_and_stops_on_sigint(tmp_path: Path) -> None:
    import signal

    proc = subprocess.Popen(
        serve_argv(tmp_path, "--example", str(EXAMPLES / "goblin-ambush.json")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = banner_lines(proc, 20)
        text = "\n".join(lines)
        assert text.startswith("zonekeep 0.1.0 serving on ws://127.0.0.1:")
        port = lines[0].split("ws://127.0.0.1:", 1)[1].split("/", 1)[0]
        # The home the GM opens, and why players elsewhere cannot reach it.
        assert lines[1] == (
            f"Home: http://127.0.0.1:{port}/table/  (open it to build encounters and hand out links)"
        )
        assert lines[2] == (
            "Only this machine can open these links: for players on other devices, "
            "serve with --host 0.0.0.0 or set public_url."
        )
        assert "GM token:" in text
        assert "seat alice:" in text and "(Aria, Sel)" in text
        assert "seat bob:" in text
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=helpers.deadline(10)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _home_lines(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> list[str]:
    """The banner of a ``zonekeep serve`` started with ``extra`` (stopped after)."""
    proc = subprocess.Popen(
        serve_argv(tmp_path, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        return banner_lines(proc, 20)
    finally:
        proc.kill()
        proc.wait()


def test_serve_on_every_address_prints_the_network_home(tmp_path: Path) -> None:
    """Listening on every address, the home (and every link) carries the machine's
    address on its network, the one a phone on the same network reaches."""
    lines = _home_lines(tmp_path, "--host", "0.0.0.0")
    assert lines[0].startswith("zonekeep 0.1.0 serving on ws://0.0.0.0:")
    port = lines[0].split("ws://0.0.0.0:", 1)[1].split("/", 1)[0]
    where = network_address() or socket.gethostname()
    assert where != "127.0.0.1"
    assert lines[1] == (
        f"Home: http://{where}:{port}/table/  (open it to build encounters and hand out links)"
    )
    assert not any("Only this machine" in line for line in lines)


def test_serve_with_a_public_url_prints_it_as_the_home(tmp_path: Path) -> None:
    lines = _home_lines(
        tmp_path, env={"ZONEKEEP_SERVER_PUBLIC_URL": "https://tables.example.org/zk/"}
    )
    assert lines[1] == (
        "Home: https://tables.example.org/zk/table/  "
        "(open it to build encounters and hand out links)"
    )
    assert lines[2] == (
        "Players reach it at wss://tables.example.org/zk/ws  "
        "(web table: https://tables.example.org/zk/table/)"
    )
    assert not any("Only this machine" in line for line in lines)


def test_plugins_lists_the_built_ins_with_their_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["zonekeep.setup", "0.1.0", "built-in"]
    assert any(line.startswith("zonekeep.combat") and line.endswith("attack") for line in lines)


def test_plugins_refuses_an_unknown_plugin_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "server.toml"
    config.write_text('[server]\nplugins_disabled = ["no-such-plugin"]\n')
    assert main(["plugins", "--config", str(config)]) == 2
    assert "no-such-plugin" in capsys.readouterr().err
