"""Hardening for the operator (issue 27, points 14 to 18), each on a real ``zonekeep
serve`` process (or the ``zonekeep`` command beside one) over real sockets.

14. the store's folder and file are made 0700 and 0600 whatever the umask; 15. a port
in use is one line naming it, and a failure; 16. ``zonekeep export`` and ``import`` use
the configured data directory; 17. ``config check`` reaches a PostgreSQL store (or says
why not, within a bounded time) and ``config show`` reads back as a config; 18. the
systemd unit verifies, and its ``ExecStart`` with its environment runs the server.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from e2e_support import creatures
from helpers import deadline, missing_component, serve_argv

from zonekeep.protocol.client import ClientError, connect

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "examples" / "deploy" / "zonekeep.service"
ZONEKEEP = [sys.executable, "-m", "zonekeep.server._cli"]
#: A line of the server's text log (``2026-12-01T19:02:11.482Z INFO ...``).
LOG_RECORD = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z [A-Z]+ ")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without any ``ZONEKEEP_`` setting or ``XDG_DATA_HOME``, with
    ``home`` as ``HOME`` (so the default data directory is under it), plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ZONEKEEP_") and k != "XDG_DATA_HOME"
    }
    env["HOME"] = str(home)
    if "ZONEKEEP_TEST_TIMEOUT_SCALE" in os.environ:
        env["ZONEKEEP_TEST_TIMEOUT_SCALE"] = os.environ["ZONEKEEP_TEST_TIMEOUT_SCALE"]
    return {**env, **extra}


class Served:
    """A running ``zonekeep serve``: what it printed up to ``Stop with Ctrl-C.``."""

    def __init__(self, process: trio.Process, banner: list[str]) -> None:
        self.process = process
        self.banner = banner
        serving = next(line for line in banner if " serving on ws://" in line)
        self.url = serving.split(" serving on ", 1)[1].split()[0]
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


@asynccontextmanager
async def zonekeep_serve(
    argv: list[str], log: Path, *, env: Mapping[str, str] | None = None, umask: int = 0o022
) -> AsyncIterator[Served]:
    """Run ``argv`` (a ``zonekeep serve``) with ``umask``, its standard error in ``log``;
    yield once it has printed its banner; stop it with SIGINT (it must exit 0)."""
    with log.open("wb") as err:
        process = await trio.lowlevel.open_process(
            argv, stdout=subprocess.PIPE, stderr=err, env=env, umask=umask
        )
    assert process.stdout is not None
    try:
        text = b""
        with trio.fail_after(deadline(30)):
            while b"Stop with Ctrl-C." not in text:
                chunk = await process.stdout.receive_some()
                assert chunk, f"zonekeep serve stopped: {text!r} {log.read_text()}"
                text += chunk
        yield Served(process, text.decode().splitlines())
        process.send_signal(signal.SIGINT)
        with trio.fail_after(deadline(20)):
            assert await process.wait() == 0, log.read_text()
    finally:
        if process.returncode is None:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()


async def zk(
    *argv: str, env: Mapping[str, str] | None = None, seconds: float = 30
) -> subprocess.CompletedProcess[bytes]:
    """Run ``zonekeep argv...`` to its end (within ``seconds``)."""
    with trio.fail_after(deadline(seconds)):
        return await trio.run_process(
            [*ZONEKEEP, *argv], capture_stdout=True, capture_stderr=True, check=False, env=env
        )


# -- 14. the store is private -------------------------------------------------------------------


@pytest.mark.sqlite
async def test_a_new_store_is_0600_in_a_new_0700_folder_whatever_the_umask(
    tmp_path: Path,
) -> None:
    data = tmp_path / "new" / "zonekeep"  # neither folder exists yet
    env = clean_env(tmp_path)
    async with zonekeep_serve(serve_argv(data), tmp_path / "serve.log", env=env) as served:
        async with connect(served.url) as gm:  # a write: SQLite now has its -wal and -shm
            await gm.create_encounter("Private", "tavern", creatures())
        files = {p.name: mode(p) for p in data.iterdir()}
    assert files == {
        "zonekeep.sqlite3": 0o600,
        "zonekeep.sqlite3-wal": 0o600,
        "zonekeep.sqlite3-shm": 0o600,
    }
    assert (mode(tmp_path / "new"), mode(data)) == (0o700, 0o700)
    assert mode(data / "zonekeep.sqlite3") == 0o600  # the WAL folded in at the stop


@pytest.mark.sqlite
async def test_a_store_made_in_an_existing_open_folder_is_still_0600(tmp_path: Path) -> None:
    data = tmp_path / "shared"
    data.mkdir()
    data.chmod(0o755)  # the operator's folder: its mode is theirs to choose
    log = tmp_path / "serve.log"
    async with zonekeep_serve(serve_argv(data), log, env=clean_env(tmp_path)) as served:
        async with connect(served.url) as gm:
            await gm.create_encounter("Private", "tavern", creatures())
        assert {p.name: mode(p) for p in data.iterdir()} == {
            "zonekeep.sqlite3": 0o600,
            "zonekeep.sqlite3-wal": 0o600,
            "zonekeep.sqlite3-shm": 0o600,
        }
    assert mode(data) == 0o755
    # `zonekeep import` and `zonekeep gm add` make a store the same way.
    elsewhere = tmp_path / "made-by-the-cli"
    done = await zk("gm", "add", "alice", "--data-dir", str(elsewhere), env=clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (mode(elsewhere), mode(elsewhere / "zonekeep.sqlite3")) == (0o700, 0o600)


# -- 15. a port in use ----------------------------------------------------------------------------


async def test_a_port_in_use_is_one_line_naming_host_and_port_and_exit_1(
    tmp_path: Path,
) -> None:
    with trio.socket.socket() as taken:
        await taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = await zk(
            "serve", "--port", str(port), "--data-dir", str(tmp_path), env=clean_env(tmp_path)
        )
    err = done.stderr.decode()
    assert done.returncode == 1
    assert done.stdout == b""
    assert "Traceback" not in err
    # besides log records (the store opened first), one line
    assert [line for line in err.splitlines() if not LOG_RECORD.match(line)] == [
        f"zonekeep: cannot listen on 127.0.0.1:{port}: Address already in use (another "
        "program listens there: stop it, or choose another port with --port)"
    ]


# -- 16. export and import find the store as serve does -------------------------------------------


@pytest.mark.sqlite
async def test_export_and_import_use_the_configured_data_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"  # the default data directory would be under it
    data = tmp_path / "configured"
    config = tmp_path / "zonekeep.toml"
    config.write_text(f'[server]\ndata_dir = "{data}"\n', encoding="utf-8")
    env = clean_env(home)
    argv = [*ZONEKEEP, "serve", "--port", "0", "--config", str(config)]
    async with zonekeep_serve(argv, tmp_path / "serve.log", env=env) as served:
        async with connect(served.url) as gm:
            created = await gm.create_encounter("Configured", "tavern", creatures())
        eid = created["encounter"]

        # export: the config file's data_dir, then the environment's, like serve
        exported = await zk("export", eid, "--config", str(config), env=env)
        assert exported.returncode == 0, exported.stderr
        first = json.loads(exported.stdout.decode().splitlines()[0])
        assert first["event"]["type"] == "encounter_created"
        from_env = await zk("export", eid, env={**env, "ZONEKEEP_SERVER_DATA_DIR": str(data)})
        assert from_env.stdout == exported.stdout
        log = tmp_path / "log.jsonl"
        log.write_bytes(exported.stdout)

        # import lands in the running server's store: it serves the copy
        imported = await zk("import", str(log), "--as", "copy-1", "--config", str(config), env=env)
        assert imported.returncode == 0, imported.stderr
        out = imported.stdout.decode()
        assert f"into {data / 'zonekeep.sqlite3'}." in out
        gm_token = re.search(r"GM token: (\S+)", out)
        assert gm_token is not None
        async with connect(served.url) as gm:
            joined = await gm.join("copy-1", gm_token.group(1))
            assert joined["role"] == "gm"
    assert not (home / ".local").exists()  # the default data directory was never made

    # a config whose store is not a SQLite file is refused, naming it (never its password)
    pg = tmp_path / "pg.toml"
    pg.write_text('[server]\nstore = "postgresql://zk:hunter2@127.0.0.1:1/zk"\n')
    for argv2 in (("export", eid), ("import", str(log))):
        refused = await zk(*argv2, "--config", str(pg), env=env)
        err = refused.stderr.decode()
        assert refused.returncode == 2
        assert "postgresql://zk:********@127.0.0.1:1/zk" in err and "SQLite" in err
        assert "hunter2" not in err
    # --data-dir still wins over the config, as for serve
    other = await zk("export", eid, "--config", str(config), "--data-dir", str(tmp_path / "x"))
    assert other.returncode == 2 and b"no zonekeep store here" in other.stderr


# -- 17. config check reaches the store; config show reads back -----------------------------------


def pg_config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "pg.toml"
    path.write_text(f'[server]\nstore = "{url}"\n', encoding="utf-8")
    return path


async def test_config_check_says_why_a_postgresql_store_cannot_be_reached(
    tmp_path: Path,
) -> None:
    env = clean_env(tmp_path)
    with trio.socket.socket() as free:  # a port nothing listens on
        await free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    config = pg_config(tmp_path, f"postgresql://zk:hunter2@127.0.0.1:{port}/zk")
    done = await zk("config", "check", "--config", str(config), env=env)
    err = done.stderr.decode()
    assert (done.returncode, done.stdout) == (2, b"")
    assert err.startswith(
        f"{config}: server.store: cannot reach postgresql://zk:********@127.0.0.1:{port}/zk: "
    )
    assert "Connection refused" in err and "hunter2" not in err
    assert len(err.splitlines()) == 1


async def test_config_check_gives_up_on_a_silent_store_within_its_timeout(
    tmp_path: Path,
) -> None:
    """A listener that accepts and never answers (a silent network cut, a hung proxy):
    the check ends, failed, after about its --connect-timeout, not never."""
    with trio.socket.socket() as silent:
        await silent.bind(("127.0.0.1", 0))
        silent.listen()  # the kernel completes the handshake; nobody ever reads
        port = silent.getsockname()[1]
        config = pg_config(tmp_path, f"postgresql://zk@127.0.0.1:{port}/zk")
        start = trio.current_time()
        done = await zk(
            "config", "check", "--config", str(config), "--connect-timeout", "2",
            env=clean_env(tmp_path), seconds=20,
        )  # fmt: skip
        took = trio.current_time() - start
    assert done.returncode == 2
    assert f"cannot reach postgresql://zk@127.0.0.1:{port}/zk: " in done.stderr.decode()
    assert "timeout" in done.stderr.decode()
    assert 2 <= took < 2 + deadline(8)


async def test_config_check_says_ok_when_the_postgresql_store_answers(tmp_path: Path) -> None:
    from postgres_support import POSTGRES_URL, needs_postgres

    needs_postgres()
    config = pg_config(tmp_path, POSTGRES_URL)
    done = await zk("config", "check", "--config", str(config), env=clean_env(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"ok\n", b"")


@pytest.mark.sqlite
async def test_config_show_output_is_a_config_that_serves_the_same_way(tmp_path: Path) -> None:
    key = tmp_path / "server-key"
    key.write_text("the-server-key\n")
    config = tmp_path / "zonekeep.toml"
    config.write_text(
        "[server]\n"
        f'data_dir = "{tmp_path / "data"}"\n'
        f'server_key_file = "{key}"\n'
        'metrics_token = "the-metrics-token"\n'
        'trusted_proxies = ["10.0.0.0/8"]\n'
        'allowed_origins = ["https://tables.example.org"]\n'
        "reaction_seconds = 45\n"
        "port = 0\n"
        "[limits]\nmax_encounters = 7\nrate_per_second = 3\n",
        encoding="utf-8",
    )
    env = clean_env(tmp_path, ZONEKEEP_LIMITS_OPEN_ENCOUNTERS="3")
    shown = await zk("config", "show", "--config", str(config), env=env)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert "the-server-key" not in text and "the-metrics-token" not in text
    again = tmp_path / "again.toml"
    again.write_bytes(shown.stdout)
    checked = await zk("config", "check", "--config", str(again), env=clean_env(tmp_path))
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, b"ok\n", b"")
    # shown again, it is the same config (but the secret given directly, left out)
    twice = await zk("config", "show", "--config", str(again), env=clean_env(tmp_path))
    first, second = _settings_lines(shown.stdout), _settings_lines(twice.stdout)
    assert '# metrics_token = "********"' in first and 'metrics_token = ""' in second
    assert [line for line in first if "metrics_token =" not in line] == [
        line for line in second if "metrics_token =" not in line
    ]
    assert '# server_key = "********"' in first and f'server_key_file = "{key}"' in first
    # and a server runs on it: the key (read from its file again) is still needed
    argv = [*ZONEKEEP, "serve", "--config", str(again)]
    async with zonekeep_serve(argv, tmp_path / "serve.log", env=clean_env(tmp_path)) as served:
        async with connect(served.url) as client:
            assert client.welcome is not None
            assert client.welcome["limits"]["rate_per_second"] == 3.0
            with pytest.raises(ClientError) as refused:
                await client.create_encounter("No key", "tavern", creatures())
            assert refused.value.name == "server_key_required"
        async with connect(served.url) as gm:
            created = await gm.create_encounter(
                "Keyed", "tavern", creatures(), server_key="the-server-key"
            )
            assert created["encounter"]


def _settings_lines(toml: bytes) -> list[str]:
    """The settings of a ``config show`` output, without the comments saying where
    each came from."""
    return [line.split("  #", 1)[0] for line in toml.decode().splitlines() if " = " in line]


# -- 18. the systemd unit ---------------------------------------------------------------------------


def unit_lines(key: str) -> list[str]:
    """The values of every ``key=`` line of the unit (comments skipped)."""
    found = []
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{key}="):
            found.append(line.split("=", 1)[1])
    return found


def test_the_unit_verifies_with_every_hardening_option_it_promises(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        missing_component("systemd-analyze is not installed (apt-get install systemd)")
    options = {line.split("=", 1)[0] for line in UNIT.read_text().splitlines() if "=" in line}
    for option in (
        "RestartPreventExitStatus",
        "StartLimitIntervalSec",
        "StartLimitBurst",
        "IPAddressDeny",
        "IPAddressAllow",
        "SocketBindAllow",
        "SocketBindDeny",
        "PrivateUsers",
        "ProcSubset",
        "LimitCORE",
    ):
        assert option in options, option
    assert unit_lines("IPAddressDeny") == ["any"]
    assert unit_lines("LimitCORE") == ["0"]
    assert unit_lines("RestartPreventExitStatus") == ["2"]  # a bad config: no restart loop
    # verify it as it is, but with this machine's zonekeep in place of /opt/zonekeep's
    unit = tmp_path / "zonekeep.service"
    here = str(Path(sys.executable).parent / "zonekeep")
    unit.write_text(UNIT.read_text().replace("/opt/zonekeep/bin/zonekeep", here))
    done = subprocess.run(
        [analyze, "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=deadline(60),
        check=False,
    )
    assert (done.returncode, done.stderr.strip()) == (0, "")


def unit_command(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """The arguments of the unit's ExecStart (after its program) and the environment its
    Environment= lines make: %d (the credentials directory) a folder of the test's
    holding the metrics token, the state directory another, the port 0 (a free one)."""
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "metrics-token").write_text("the-metrics-token\n")
    state = tmp_path / "var-lib-zonekeep"
    env = clean_env(tmp_path)
    for line in unit_lines("Environment"):
        name, value = line.split("=", 1)
        env[name] = value.replace("%d", str(credentials)).replace("/var/lib/zonekeep", str(state))
    env["ZONEKEEP_SERVER_PORT"] = "0"
    (command,) = unit_lines("ExecStart")
    program, *args = command.split()
    assert program == "/opt/zonekeep/bin/zonekeep"
    return args, env


async def test_the_units_execstart_and_environment_run_the_server(tmp_path: Path) -> None:
    """What systemd would run: ExecStart's command line with the unit's Environment=
    lines; a bad config exits 2, the status RestartPreventExitStatus names."""
    args, env = unit_command(tmp_path)
    state = tmp_path / "var-lib-zonekeep"
    argv = [*ZONEKEEP, *args]
    async with zonekeep_serve(argv, tmp_path / "serve.log", env=env, umask=0o077) as served:
        with trio.fail_after(deadline(10)):
            stream = await trio.open_tcp_stream("127.0.0.1", served.port)
            async with stream:
                await stream.send_all(
                    b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Authorization: Bearer the-metrics-token\r\nConnection: close\r\n\r\n"
                )
                reply = b""
                while chunk := await stream.receive_some():
                    reply += chunk
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    assert (state / "zonekeep.sqlite3").exists()
    # the status of a bad config, which the unit does not restart
    env["ZONEKEEP_SERVER_LOG_LEVEL"] = "loud"
    bad = await zk(*args, env=env)
    assert bad.returncode == int(unit_lines("RestartPreventExitStatus")[0]) == 2


#: Run inside the namespaces: start ``zonekeep serve`` (argv[1:]), wait for its banner,
#: then print what the sandbox looks like from inside and the answers of /readyz and
#: /metrics over loopback, as JSON; stop it with SIGTERM and print its exit status.
SANDBOXED = """
import json, os, resource, socket, subprocess, sys, urllib.request
server = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)
address = None
for line in server.stdout:
    if " serving on ws://" in line:
        address = line.split(" serving on ws://", 1)[1].split("/", 1)[0]
    if line.startswith("Stop with Ctrl-C."):
        break
metrics = urllib.request.Request(
    f"http://{address}/metrics", headers={"Authorization": "Bearer the-metrics-token"}
)
found = {
    "readyz": urllib.request.urlopen(f"http://{address}/readyz", timeout=10).status,
    "metrics": urllib.request.urlopen(metrics, timeout=10).status,
    "core": resource.getrlimit(resource.RLIMIT_CORE)[1],
    "proc_stat": os.path.exists("/proc/stat"),
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
}
server.terminate()
found["status"] = server.wait(timeout=30)
print(json.dumps(found))
"""


async def test_the_server_runs_under_the_units_sandbox_as_far_as_it_can_be_built_here(
    tmp_path: Path,
) -> None:
    """Without systemd as PID 1 the unit cannot run here; what its new options do is
    built with namespaces instead, and the server started as ExecStart says must serve
    in it: PrivateUsers (a user namespace), IPAddressDeny=any with localhost allowed (a
    network namespace with loopback only), ProcSubset=pid and ProtectProc=invisible
    (/proc mounted subset=pid,hidepid=invisible), LimitCORE=0 (prlimit). Not built:
    SocketBindAllow (a cgroup BPF program; the server binds its port alone)."""
    unshare, prlimit = shutil.which("unshare"), shutil.which("prlimit")
    if unshare is None or prlimit is None or shutil.which("ip") is None:
        pytest.skip("needs unshare, prlimit and ip (util-linux, iproute2)")
    sandbox = [unshare, "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork"]
    probe = subprocess.run(
        [*sandbox, "--mount-proc", "true"], capture_output=True, timeout=deadline(20), check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"this machine does not allow namespaces: {probe.stderr.decode().strip()}")
    args, env = unit_command(tmp_path)
    script = tmp_path / "sandboxed.py"
    script.write_text(SANDBOXED)
    inside = shlex.join([prlimit, "--core=0", sys.executable, str(script), *ZONEKEEP, *args])
    setup = "ip link set lo up && mount -t proc -o subset=pid,hidepid=invisible proc /proc"
    with trio.fail_after(deadline(60)):
        done = await trio.run_process(
            [*sandbox, "--mount-proc", "sh", "-c", f"{setup} && exec {inside}"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == {
        "readyz": 200,
        "metrics": 200,
        "core": 0,
        "proc_stat": False,
        "interfaces": ["lo"],
        "status": 0,
    }
