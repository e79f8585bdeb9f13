"""The typed config: file, environment and flags; every problem with its key, value and
what was expected; secrets from files; ``zonekeep config check/show``; ``--version``;
docs/configuration.md kept exact; SIGHUP reloading a running server (in process and a
real ``zonekeep serve``)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
from e2e_support import creatures, start_server
from helpers import serve_argv

from zonekeep.protocol import PROTOCOL_VERSION
from zonekeep.protocol.client import ClientError, ZonekeepClient, connect
from zonekeep.server import ServerConfig
from zonekeep.server._cli import SERVER_KEY_WARNING, main
from zonekeep.server._config import (
    MASK,
    ConfigError,
    Limits,
    compare,
    load_config,
    load_settings,
    settings,
    to_toml,
)
from zonekeep.server._config_doc import MissingDoc, field_comments, render

ROOT = Path(__file__).resolve().parent.parent


def problems(
    path: Path | None = None, env: dict[str, str] | None = None, **flags: Any
) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_settings(path, env or {}, {f"server.{k}": v for k, v in flags.items()})
    return info.value.problems


def write(tmp_path: Path, text: str, name: str = "zonekeep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- types, ranges, unknown keys -----------------------------------------------------------------


def test_a_rate_that_is_not_a_number_is_refused_before_the_server_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before the typed config this started, then every connection crashed.
    path = write(tmp_path, '[limits]\nrate_per_second = "fast"\n')
    assert problems(path) == [f'{path}: limits.rate_per_second: "fast" is not a number']
    assert main(["serve", "--port", "0", "--config", str(path), "--data-dir", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert out.err == f'{path}: limits.rate_per_second: "fast" is not a number\n'
    assert "serving on" not in out.out
    assert not (tmp_path / "zonekeep.sqlite3").exists()


def test_every_problem_is_reported_at_once_with_key_value_and_what_was_expected(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "[server]\n"
        "port = 8765.0\n"
        "prot = 3\n"
        'creation = "closed"\n'
        'public_url = "ftp://tables.example.org"\n'
        'trusted_proxies = ["10.0.0.0/8", "the proxy"]\n'
        'plugins_disabled = "zonekeep.flanking"\n'
        'archive_after_days = "soon"\n'
        "gc_full_seconds = -5\n"
        'log_format = "xml"\n'
        "[limits]\n"
        "max_encounters = -1\n"
        "rate_burst = true\n"
        "[extra]\n",
    )
    assert problems(path) == [
        f"{path}: server.prot: unknown key (did you mean port?)",
        f"{path}: [extra]: unknown table (expected [server] or [limits])",
        f"{path}: server.port: 8765.0 is not a whole number",
        f'{path}: server.plugins_disabled: "zonekeep.flanking" is not a list of strings',
        f"{path}: server.gc_full_seconds: -5 is not a number of seconds, 0 or more",
        f'{path}: server.public_url: "ftp://tables.example.org" is not an http:// or '
        "https:// URL with a host",
        f'{path}: server.creation: "closed" is not one of "keys", "open"',
        f'{path}: server.archive_after_days: "soon" is not a number (or "" for none)',
        f'{path}: server.trusted_proxies: ["10.0.0.0/8", "the proxy"] is not a list of IP '
        'addresses or networks ("10.0.0.0/8")',
        f'{path}: server.log_format: "xml" is not one of "text", "json"',
        f"{path}: limits.rate_burst: true is not a whole number",
        f"{path}: limits.max_encounters: -1 is not a whole number, 0 or more",
    ]


def test_ranges_the_server_knows_are_checked_in_python_too() -> None:
    for bad in (
        {"port": 70000},
        {"port": -1},
        {"public_url": "tables.example.org"},
        {"trusted_proxies": ["10.0.0.300"]},
        {"archive_after_days": -1},
        {"idle_unload_minutes": -0.5},
    ):
        with pytest.raises(ValueError, match="must be"):
            ServerConfig(**bad)
    with pytest.raises(ValueError, match="max_encounters must be a whole number, 0 or more"):
        Limits(max_encounters=-1)
    with pytest.raises(ValueError, match="rate_per_second must be a number, 0 or more"):
        Limits(rate_per_second=float("nan"))
    config = ServerConfig(port=0, public_url="https://tables.example.org/zk/")
    assert config.public_url == "https://tables.example.org/zk/"


def test_a_missing_or_broken_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert problems(missing) == [f"{missing}: cannot read it: No such file or directory"]
    broken = write(tmp_path, "[server\nport = 1\n")
    (problem,) = problems(broken)
    assert problem.startswith(f"{broken}: ") and "line 1" in problem


# -- the environment and the flags ---------------------------------------------------------------


def test_environment_variables_override_the_file_and_flags_override_both(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[server]\nport = 7000\nhost = "0.0.0.0"\nlog_level = "debug"\n'
        "[limits]\nmax_encounters = 10\nrate_burst = 5\n",
    )
    env = {
        "ZONEKEEP_SERVER_PORT": "9000",
        "ZONEKEEP_LIMITS_MAX_ENCOUNTERS": "50",
        "ZONEKEEP_LIMITS_RATE_PER_SECOND": "2.5",
        "ZONEKEEP_SERVER_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.0/8",
        "ZONEKEEP_SERVER_ARCHIVE_AFTER_DAYS": "",
        "ZONEKEEP_SERVER_PLUGINS_DISABLED": "",
        "ZONEKEEP_FUZZ_SEED": "14",  # not a setting: left alone
        "HOME": "/somewhere",
    }
    loaded = load_settings(path, env, {"server.port": 9100, "server.log_level": "warning"})
    config = loaded.config
    assert (config.host, config.port, config.log_level) == ("0.0.0.0", 9100, "warning")
    assert config.limits.max_encounters == 50
    assert config.limits.rate_per_second == 2.5
    assert config.limits.rate_burst == 5
    assert config.trusted_proxies == ("10.0.0.1", "10.0.0.0/8")
    assert config.archive_after_days is None  # "" is none
    assert config.plugins_disabled == ()
    assert loaded.sources == {
        "server.port": "--port",
        "server.host": str(path),
        "server.log_level": "--log-level",
        "limits.max_encounters": "ZONEKEEP_LIMITS_MAX_ENCOUNTERS",
        "limits.rate_burst": str(path),
        "limits.rate_per_second": "ZONEKEEP_LIMITS_RATE_PER_SECOND",
        "server.trusted_proxies": "ZONEKEEP_SERVER_TRUSTED_PROXIES",
        "server.archive_after_days": "ZONEKEEP_SERVER_ARCHIVE_AFTER_DAYS",
        "server.plugins_disabled": "ZONEKEEP_SERVER_PLUGINS_DISABLED",
    }


def test_unknown_or_malformed_environment_variables_stop_the_start() -> None:
    env = {
        "ZONEKEEP_SERVER_PROT": "9000",
        "ZONEKEEP_PORT": "9000",
        "ZONEKEEP_LIMITS_RATE_PER_SECOND": "fast",
        "ZONEKEEP_SERVER_PORT": "80a",
        "ZONEKEEP_SERVER_STORE": "postgres",
    }
    assert problems(env=env) == [
        "ZONEKEEP_PORT: unknown setting (did you mean ZONEKEEP_SERVER_PORT?)",
        "ZONEKEEP_SERVER_PROT: unknown setting (did you mean ZONEKEEP_SERVER_PORT?)",
        'ZONEKEEP_SERVER_PORT: "80a" is not a whole number',
        'ZONEKEEP_SERVER_STORE: "postgres" is not one of "sqlite", "memory", or a postgresql:// URL',
        'ZONEKEEP_LIMITS_RATE_PER_SECOND: "fast" is not a number',
    ]
    assert problems(port=70000) == ["--port: 70000 is not a port number from 0 to 65535"]


def test_a_bad_value_overridden_later_is_still_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "[server]\nport = 65536\n")
    assert problems(path, {"ZONEKEEP_SERVER_PORT": "9000"}) == [
        f"{path}: server.port: 65536 is not a port number from 0 to 65535"
    ]


# -- secrets -------------------------------------------------------------------------------------


def test_secrets_come_from_files_with_one_trailing_newline_dropped(tmp_path: Path) -> None:
    key = write(tmp_path, "s3cret key\n\n", "server_key")
    token = write(tmp_path, "metrics-token\r\n", "metrics_token")
    path = write(tmp_path, f'[server]\nserver_key_file = "{key}"\nmetrics_token_file = "{token}"\n')
    config = load_settings(path, {}).config
    assert config.server_key == "s3cret key\n"  # only one newline is dropped
    assert config.metrics_token == "metrics-token"
    assert config.server_key_file == key
    # from the environment too, and a secret in a later source wins over an earlier file
    env = {"ZONEKEEP_SERVER_METRICS_TOKEN": "from-env", "ZONEKEEP_SERVER_SERVER_KEY_FILE": ""}
    config = load_settings(path, env).config
    assert (config.server_key, config.metrics_token) == (None, "from-env")
    assert config.metrics_token_file is None


def test_a_missing_or_empty_secret_file_or_both_forms_stop_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-key"
    empty = write(tmp_path, "\n", "empty")
    path = write(
        tmp_path, f'[server]\nserver_key_file = "{missing}"\nmetrics_token_file = "{empty}"\n'
    )
    assert problems(path) == [
        f"{path}: server.server_key_file: cannot read {missing}: No such file or directory",
        f"{path}: server.metrics_token_file: {empty} is empty",
    ]
    both = write(tmp_path, f'[server]\nserver_key = "a"\nserver_key_file = "{empty}"\n', "b.toml")
    assert problems(both) == [
        f"{both} and {both}: set the secret or its file, not both",
    ]
    assert problems(
        env={"ZONEKEEP_SERVER_SERVER_KEY": "a", "ZONEKEEP_SERVER_SERVER_KEY_FILE": str(empty)}
    ) == [
        "ZONEKEEP_SERVER_SERVER_KEY and ZONEKEEP_SERVER_SERVER_KEY_FILE: "
        "set the secret or its file, not both"
    ]


def test_a_malformed_secret_is_never_repeated(tmp_path: Path) -> None:
    path = write(tmp_path, "[server]\nserver_key = 123456789\nmetrics_token = [987654321]\n")
    found = problems(path, {"ZONEKEEP_SERVER_SERVER_KEY": "fine"})
    assert found == [
        f'{path}: server.server_key: its value is not a string (or "" for none)',
        f'{path}: server.metrics_token: its value is not a string (or "" for none)',
    ]
    assert "123456789" not in str(found) and "987654321" not in str(found)


def test_the_server_key_flag_warns_that_ps_shows_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path, "[server]\nport = -1\n")  # so that the server does not start
    assert main(["serve", "--server-key", "hunter2", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(SERVER_KEY_WARNING + "\n")
    assert "(ps)" in SERVER_KEY_WARNING and "server_key_file" in SERVER_KEY_WARNING
    assert "ZONEKEEP_SERVER_SERVER_KEY" in SERVER_KEY_WARNING
    assert "hunter2" not in err


# -- zonekeep config check / show, --version ------------------------------------------------------


def test_config_check_says_ok_or_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = write(tmp_path, "[limits]\nmax_encounters = 20\n")
    assert main(["config", "check", "--config", str(good)]) == 0
    assert capsys.readouterr().out == "ok\n"
    monkeypatch.setenv("ZONEKEEP_SERVER_PORT", "eighty")
    bad = write(tmp_path, '[server]\nplugins_enabled = ["no-such-plugin"]\nlog_level = 3\n', "b")
    assert main(["config", "check", "--config", str(bad)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        'ZONEKEEP_SERVER_PORT: "eighty" is not a whole number',
        f'{bad}: server.log_level: 3 is not one of "debug", "info", "warning", "error"',
    ]
    monkeypatch.delenv("ZONEKEEP_SERVER_PORT")
    bad.write_text('[server]\nplugins_enabled = ["no-such-plugin"]\n')
    assert main(["config", "check", "--config", str(bad)]) == 2
    assert "no-such-plugin" in capsys.readouterr().err


def test_config_show_prints_the_config_in_force_with_secrets_masked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = write(tmp_path, "the-server-key\n", "key")
    path = write(
        tmp_path,
        f'[server]\nserver_key_file = "{key}"\nlog_format = "json"\n'
        f'data_dir = "{tmp_path}"\narena_dirs = []\n',
    )
    monkeypatch.setenv("ZONEKEEP_SERVER_METRICS_TOKEN", "the-metrics-token")
    monkeypatch.setenv("ZONEKEEP_LIMITS_MAX_ENCOUNTERS", "50")
    assert main(["config", "show", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "the-server-key" not in out and "the-metrics-token" not in out
    # a secret is a comment: the output reads back as a config, never with the mask as a key
    assert f'# server_key = "{MASK}"  # read from server_key_file' in lines
    assert f'# metrics_token = "{MASK}"  # ZONEKEEP_SERVER_METRICS_TOKEN; not shown' in lines
    assert f'server_key_file = "{key}"  # {path}' in lines
    assert f'log_format = "json"  # {path}' in lines
    assert "max_encounters = 50  # ZONEKEEP_LIMITS_MAX_ENCOUNTERS" in lines
    assert 'public_url = ""  # none' in lines  # defaults are shown
    assert "rate_per_second = 20.0" in lines
    assert len([line for line in lines if " = " in line]) == len(list(settings()))


def test_config_show_reads_back_as_the_same_config(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[server]\nport = 9000\ntrusted_proxies = ["10.0.0.0/8"]\narchive_after_days = ""\n'
        'data_dir = "/srv/zk"\narena_dirs = ["/srv/arenas"]\nreaction_seconds = 45\n'
        "[limits]\nrate_per_second = 3\n",
    )
    loaded = load_settings(path, {})
    again = write(tmp_path, to_toml(loaded), "again.toml")
    assert load_config(again) == loaded.config


def test_config_show_leaves_a_store_passwords_out_and_the_mask_is_never_a_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        '[server]\nstore = "postgresql://zk:hunter2@db.example.org:5432/zk?password=x&sslmode=require"\n',
    )
    loaded = load_settings(path, {})
    shown = to_toml(loaded)
    assert "hunter2" not in shown and "password" not in shown.split("#")[0]
    line = next(line for line in shown.splitlines() if line.startswith("store = "))
    assert line == (
        'store = "postgresql://zk@db.example.org:5432/zk?sslmode=require"  '
        f"# {path}; password not shown: give it in ~/.pgpass or PGPASSWORD"
    )
    again = write(tmp_path, shown, "again.toml")
    assert load_config(again).store == "postgresql://zk@db.example.org:5432/zk?sslmode=require"
    # "********" pasted back as a secret is refused, for each secret and from each source
    pasted = write(tmp_path, f'[server]\nserver_key = "{MASK}"\n', "pasted.toml")
    assert problems(pasted) == [
        f'{pasted}: server.server_key: "{MASK}" is the mask zonekeep config show prints, '
        "not a secret: give the secret itself (or its file)"
    ]
    assert problems(env={"ZONEKEEP_SERVER_METRICS_TOKEN": MASK}) == [
        f'ZONEKEEP_SERVER_METRICS_TOKEN: "{MASK}" is the mask zonekeep config show prints, '
        "not a secret: give the secret itself (or its file)"
    ]


def test_version_prints_the_package_and_protocol_versions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert (
        capsys.readouterr().out == f"zonekeep {version('zonekeep')}\nprotocol {PROTOCOL_VERSION}\n"
    )


# -- docs/configuration.md -----------------------------------------------------------------------


@pytest.mark.docs
def test_the_configuration_doc_is_generated_and_current() -> None:
    current = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert current == render(), (
        "docs/configuration.md is out of date: run python -m zonekeep.server._config_doc "
        "(or scripts/generate)"
    )


@pytest.mark.docs
def test_every_setting_is_documented_with_type_default_and_variable() -> None:
    text = render()
    for key, field in settings():
        section, name = key.split(".")
        assert field.name in field_comments(ServerConfig if section == "server" else Limits)
        assert f"### `{name}`" in text
        assert f"`ZONEKEEP_{section.upper()}_{name.upper()}`" in text
    assert "Default: `16384`." in text and "A port number from 0 to 65535." in text


@pytest.mark.docs
def test_the_generator_refuses_an_undocumented_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from zonekeep.server import _config_doc

    real = _config_doc.field_comments
    monkeypatch.setattr(
        _config_doc,
        "field_comments",
        lambda cls: {k: v for k, v in real(cls).items() if k != "rate_burst"},
    )
    with pytest.raises(MissingDoc, match=r"limits\.rate_burst has no #: comment"):
        render()


@pytest.mark.docs
def test_generate_check_fails_on_a_stale_doc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from zonekeep.server import _config_doc

    (tmp_path / "docs").mkdir()
    stale = tmp_path / "docs" / "configuration.md"
    stale.write_text(render().replace("0 picks a free one", "pick one"))
    assert _config_doc.main(["--check"], root=tmp_path) == 1
    assert "out of date: docs/configuration.md" in capsys.readouterr().out
    assert _config_doc.main([], root=tmp_path) == 0
    assert stale.read_text() == render()
    assert _config_doc.main(["--check"], root=tmp_path) == 0


# -- SIGHUP: reloading a running server ----------------------------------------------------------


def test_compare_keeps_what_needs_a_restart() -> None:
    old = ServerConfig(port=8000, server_key="a")
    new = ServerConfig(port=9000, server_key="b", limits=Limits(rate_burst=5), store="memory")
    changes = compare(old, new)
    assert changes.applied == ("server.server_key", "limits.rate_burst")
    assert changes.needs_restart == ("server.port", "server.store")
    assert changes.config == attrs.evolve(new, port=8000, store="sqlite")


async def create(client: ZonekeepClient, key: str | None) -> dict[str, Any]:
    with trio.fail_after(helpers.deadline(10)):
        return await client.create_encounter("Reload", "tavern", creatures(), server_key=key)


async def test_reload_applies_keys_limits_and_caps_at_once_and_keeps_the_port(
    nursery: trio.Nursery, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = ServerConfig(
        port=0, server_key="old-key", limits=Limits(max_connections_per_encounter=8)
    )
    running = await start_server(nursery, tmp_path / "data", config)
    server = running.server
    async with running.client() as gm:
        created = await create(gm, "old-key")
        room = server.rooms[created["encounter"]]
        assert room.max_members == 8 + 16
        new = attrs.evolve(
            server.config,
            port=server.config.port + 1,
            server_key="new-key",
            limits=Limits(max_connections_per_encounter=2, rate_per_second=5.0),
            reaction_seconds=45,
        )
        with caplog.at_level(logging.INFO, logger="zonekeep.server"):
            changes = server.reload(new)
        assert changes.needs_restart == ("server.port",)
        assert set(changes.applied) == {
            "server.server_key",
            "server.reaction_seconds",
            "limits.rate_per_second",
            "limits.max_connections_per_encounter",
        }
        assert server.config.port == 0 and server.config.server_key == "new-key"
        assert room.max_members == 2 + 16  # loaded encounters' caps change
        with pytest.raises(ClientError) as refused:
            await create(gm, "old-key")
        assert refused.value.name == "bad_server_key"
        await create(gm, "new-key")
    async with running.client() as late:  # the next hello announces the new limits
        assert late.welcome is not None
        assert late.welcome["limits"]["rate_per_second"] == 5.0
        assert late.welcome["limits"]["reaction_seconds"] == 45
    log = caplog.text
    assert "config reloaded: " in log
    assert "server.server_key changed (at once)" in log
    assert "limits.rate_per_second 20.0 -> 5.0 (new connections)" in log
    assert "server.port 0 -> 1 needs a restart" in log
    assert "GM keys are read from the store" in log
    assert "old-key" not in log and "new-key" not in log


class Output:
    """What a process wrote on one pipe so far; :meth:`wait_for` reads until a phrase."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.text = ""

    async def wait_for(self, phrase: str, start: int = 0) -> int:
        with trio.fail_after(helpers.deadline(20)):
            while phrase not in self.text[start:]:
                chunk = await self.stream.receive_some()
                if not chunk:
                    raise AssertionError(f"the server stopped: {self.text}")
                self.text += chunk.decode()
        return len(self.text)


async def test_sighup_reloads_a_running_zonekeep_serve_and_a_bad_config_changes_nothing(
    tmp_path: Path,
) -> None:
    key = write(tmp_path, "first-key\n", "server_key")
    config = write(tmp_path, f'[server]\nserver_key_file = "{key}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZONEKEEP_")}
    process = await trio.lowlevel.open_process(
        serve_argv(tmp_path / "data", "--config", str(config)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        out, err = Output(process.stdout), Output(process.stderr)
        await out.wait_for("Stop with Ctrl-C.")
        url = out.text.split(" serving on ")[1].split()[0]
        async with connect(url) as gm:
            await create(gm, "first-key")
            key.write_text("second-key\n")
            config.write_text(
                f'[server]\nserver_key_file = "{key}"\nlog_format = "json"\ngc_full_seconds = 60\n'
                "[limits]\nmax_encounters = 7\n"
            )
            process.send_signal(signal.SIGHUP)
            seen = await err.wait_for("GM keys are read from the store")
            logged = [json.loads(line) for line in err.text.splitlines() if line.startswith("{")]
            assert any(  # the log format changed to JSON
                entry["message"].startswith("config reloaded: ") for entry in logged
            )
            assert "server.server_key changed (at once)" in err.text
            assert "limits.max_encounters 1000 -> 7 (at once)" in err.text
            assert "server.gc_full_seconds 3600.0 -> 60.0 needs a restart" in err.text
            with pytest.raises(ClientError):
                await create(gm, "first-key")
            await create(gm, "second-key")

            config.write_text('[limits]\nrate_per_second = "fast"\n')  # a broken config
            process.send_signal(signal.SIGHUP)
            await err.wait_for("nothing was changed", seen)
            assert f'{config}: limits.rate_per_second: \\"fast\\" is not a number' in err.text
            await create(gm, "second-key")  # still the key in force
        assert "first-key" not in err.text and "second-key" not in err.text
        process.send_signal(signal.SIGTERM)  # still the graceful stop
        with trio.fail_after(helpers.deadline(20)):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_serve_configures_logging_from_its_flags_and_reloads_with_the_same_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zonekeep.server import _log

    configured: list[tuple[str, str]] = []
    started: list[tuple[Any, ...]] = []
    monkeypatch.setattr(_log, "configure_logging", lambda *a: configured.append(a))
    monkeypatch.setattr(trio, "run", lambda *a: started.append(a))
    path = write(tmp_path, '[server]\nlog_level = "error"\n[limits]\nmax_encounters = 3\n')
    monkeypatch.setenv("ZONEKEEP_LIMITS_RATE_BURST", "9")
    argv = ["serve", "--config", str(path), "--port", "0", "--data-dir", str(tmp_path)]
    assert main([*argv, "--log-level", "debug", "--log-format", "json"]) == 0
    assert configured == [("debug", "json")]
    (_run, server, _ready, reload_config) = started[0]
    assert (server.config.log_level, server.config.limits.max_encounters) == ("debug", 3)
    path.write_text('[server]\nlog_level = "error"\n[limits]\nmax_encounters = 5\n')
    again = reload_config()  # what SIGHUP reads: the file again, the flags still over it
    assert (again.log_level, again.log_format, again.port) == ("debug", "json", 0)
    assert (again.limits.max_encounters, again.limits.rate_burst) == (5, 9)
