"""The built wheel, installed the way an operator installs it.

The checkout (without its virtual environment and build leftovers) is copied to a
temporary folder and built there with ``pip wheel`` (build isolation: setuptools from
the registry, as anyone building it gets): the build must print no warning of the
project's own, and the wheel must hold the bundled arenas and example encounters, the
schemas, the web table's files, ``py.typed`` and the LICENSE. The wheel is then
installed into a fresh virtual environment outside the checkout (its dependencies from
the registry) and ``zonekeep serve`` runs from yet another folder: its welcome lists
the bundled arenas, and ``--example goblin-ambush`` (a bundled example, by name) opens an
encounter a client joins.

Needs the package registry (as ``scripts/test`` does). CI runs it with the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio

from zonekeep.protocol import PROTOCOL_VERSION
from zonekeep.protocol.client import ClientError, connect

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "artifacts",
    "load-results.json",
)
ARENAS = ["cliffside", "swamp", "tavern"]


def _run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=helpers.deadline(600),
        check=False,
    )
    assert done.returncode == 0, f"{argv}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what points at the checkout's venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _read_banner(stream: Any, seconds: float = 30.0) -> str:
    got = b""
    deadline = time.monotonic() + helpers.deadline(seconds)
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        while b"Stop with Ctrl-C." not in got:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise AssertionError(f"no banner within {seconds} s: {got!r}")
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"zonekeep serve stopped: {got!r}")
            got += chunk
    return got.decode()


@attrs.define
class Serving:
    """A ``zonekeep serve`` process: its banner, and (once stopped) its exit status and
    what it wrote to standard error (kept in a file, so it never blocks on a full pipe)."""

    banner: str
    process: subprocess.Popen[bytes]
    stderr_path: Path

    @property
    def log(self) -> str:
        return self.stderr_path.read_text()


@contextlib.contextmanager
def _serving(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> Iterator[Serving]:
    """Run ``argv`` (a ``zonekeep serve``) until its banner is out; stop it with SIGTERM
    when the block ends."""
    with log.open("wb") as err:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=err)
    try:
        assert process.stdout is not None
        yield Serving(_read_banner(process.stdout), process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=helpers.deadline(15))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


@attrs.frozen
class Installed:
    """The built wheel, its file names, and the fresh venv it is installed in."""

    wheel: Path
    names: frozenset[str]
    build_output: str
    venv: Path
    elsewhere: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel from a copy of the checkout and install it into a fresh venv
    outside the checkout (once for this module's tests)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    dist = tmp_path / "dist"
    built = _run(
        sys.executable, "-m", "pip", "wheel", source, "--no-deps", "-w", dist, "-v", cwd=tmp_path
    )
    (wheel,) = dist.glob("zonekeep-*.whl")
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    _run(
        venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=tmp_path, env=_clean_env()
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    names = frozenset(zipfile.ZipFile(wheel).namelist())
    return Installed(wheel, names, built, venv, elsewhere)


def test_the_wheel_installs_and_serves_its_bundled_arenas(
    installed: Installed, tmp_path: Path
) -> None:
    built, wheel, names = installed.build_output, installed.wheel, installed.names
    venv, elsewhere, bin_dir = installed.venv, installed.elsewhere, installed.bin
    # setuptools' warnings (deprecated license table, data folders missing from
    # `packages` ...) are classes named *Warning, printed inside "!!" banners.
    own = [line for line in built.splitlines() if "Warning" in line or line.strip() == "!!"]
    assert own == [], "\n".join(own)

    data = "zonekeep/server/examples"
    expected = {
        f"{data}/arenas/cliffside.json",
        f"{data}/arenas/swamp.toml",
        f"{data}/arenas/tavern.json",
        f"{data}/arenas/maps/tavern.png",
        f"{data}/encounters/goblin-ambush.json",
        f"{data}/encounters/cliffside-bandits.json",
        f"{data}/encounters/swamp-lizardfolk.json",
        "zonekeep/protocol/schemas/hello.result.schema.json",
        "zonekeep/protocol/schemas/compendium.schema.json",
        "zonekeep/plugins/srd/srd-5.1.json",
        "zonekeep/protocol/SPEC.md",
        "zonekeep/server/static/index.html",
        "zonekeep/server/static/table.js",
        "zonekeep/server/static/dice.js",
        "zonekeep/server/static/table.css",
        "zonekeep/server/static/chat.js",
        "zonekeep/server/static/chat.css",
        *(f"zonekeep/{p}/py.typed" for p in ("protocol", "sdk", "server", "plugins")),
    }
    assert expected <= names, sorted(expected - names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    meta = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in meta
    assert not any("node_modules" in n or "/hazards/" in n for n in names)

    where = _run(
        bin_dir / "python",
        "-c",
        "import zonekeep.server; print(zonekeep.server.__file__)",
        cwd=elsewhere,
        env=_clean_env(),
    )
    assert Path(where.strip()).is_relative_to(venv), where  # the installed copy, not the checkout
    version = _run(bin_dir / "zonekeep", "--version", cwd=elsewhere, env=_clean_env())
    assert version.splitlines() == ["zonekeep 0.1.0", f"protocol {PROTOCOL_VERSION}"], version

    env = _clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
    argv = [str(bin_dir / "zonekeep"), "serve", "--port", "0", "--example", "goblin-ambush"]
    with _serving(argv, elsewhere, env, tmp_path / "serve.log") as server:
        banner = server.banner
        url = re.search(r"serving on (ws://\S+)", banner)
        encounter = re.search(r"is ready: (\S+)", banner)
        gm_token = re.search(r"GM token:\s+(\S+)", banner)
        assert url and encounter and gm_token, banner
        assert f"Encounters are kept in {tmp_path / 'data' / 'zonekeep'}." in banner

        async def check() -> None:
            with trio.fail_after(helpers.deadline(30)):
                async with connect(url[1], timeout=helpers.deadline(10)) as gm:
                    assert gm.welcome is not None
                    assert sorted(gm.welcome["capabilities"]["arenas"]) == ARENAS
                    joined = await gm.join(encounter[1], gm_token[1])
                    assert joined["role"] == "gm"
                    assert joined["snapshot"]["arena"]["id"] == "tavern"
                    found = await gm.request("list_compendium", text="goblin boss")
                    assert [i["id"] for i in found["entries"]] == ["srd.goblin-boss"]

        trio.run(check)


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    """A plain HTTP GET (``/metrics``, ``/readyz``): the status and the body."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=helpers.deadline(10)) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _sample(metrics: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text ``metrics`` (0 when absent)."""
    wanted = {f'{k}="{v}"' for k, v in labels.items()}
    for line in metrics.splitlines():
        sample, _, value = line.rpartition(" ")
        base, _, rest = sample.partition("{")
        if base == name and set(filter(None, rest.rstrip("}").split(","))) == wanted:
            return float(value)
    return 0.0


def test_an_operator_runs_the_installed_server_from_the_environment(
    installed: Installed, tmp_path: Path
) -> None:
    """Issue 15's "Done when": the installed wheel, run from another folder with its
    settings from environment variables; a GM key added with the command line creates an
    encounter over the protocol, sees it in the lobby, ends it, and sees it archived and
    its slot free; the counters read from ``/metrics`` (behind its bearer token)."""
    data = tmp_path / "data"
    env = _clean_env(
        ZONEKEEP_SERVER_PORT="0",
        ZONEKEEP_SERVER_DATA_DIR=str(data),
        ZONEKEEP_LIMITS_MAX_ENCOUNTERS="1",
        ZONEKEEP_SERVER_METRICS_TOKEN="metrics-secret-for-the-test",
        ZONEKEEP_SERVER_LOG_FORMAT="json",
    )
    zonekeep = str(installed.bin / "zonekeep")
    added = subprocess.run(
        [zonekeep, "gm", "add", "ana"],
        cwd=installed.elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=helpers.deadline(60),
        check=False,
    )
    assert added.returncode == 0, added.stderr
    key = added.stdout.strip()
    assert len(key) >= 32 and "ana" not in key, added.stdout
    assert (data / "zonekeep.sqlite3").is_file()  # found through ZONEKEEP_SERVER_DATA_DIR

    roster = json.loads((ROOT / "examples" / "encounters" / "goblin-ambush.json").read_text())
    creatures = roster["creatures"]
    with _serving([zonekeep, "serve"], installed.elsewhere, env, tmp_path / "serve.log") as server:
        banner = server.banner
        url = re.search(r"serving on (ws://\S+)/ws", banner)
        assert url, banner
        assert f"Encounters are kept in {data}." in banner
        http = url[1].replace("ws://", "http://")
        assert _get(f"{http}/readyz")[0] == 200

        async def play() -> str:
            with trio.fail_after(helpers.deadline(60)):
                # A key is defined, so a keyless connection (even from loopback) may not create.
                async with connect(url[1] + "/ws", timeout=helpers.deadline(10)) as stranger:
                    try:
                        await stranger.create_encounter("Nope", "tavern", creatures)
                    except ClientError as exc:
                        assert exc.name == "gm_key_required", exc
                    else:
                        raise AssertionError("a keyless connection created an encounter")
                async with connect(url[1] + "/ws", timeout=helpers.deadline(10), gm_key=key) as gm:
                    assert gm.welcome is not None and gm.welcome["gm"] == "ana"
                    made = await gm.create_encounter("Goblins at the inn", "tavern", creatures)
                    eid, gm_token = made["encounter"], made["gm_token"]
                    lobby = await gm.list_encounters()
                    (mine,) = [e for e in lobby["encounters"] if e["id"] == eid]
                    assert (mine["title"], mine["arena"], mine["status"], mine["mine"]) == (
                        "Goblins at the inn",
                        "tavern",
                        "open",
                        True,
                    ), mine
                    # max_encounters is 1 (from the environment): the server is full.
                    try:
                        await gm.create_encounter("Second", "tavern", creatures)
                    except ClientError as exc:
                        assert exc.name == "server_full", exc
                    else:
                        raise AssertionError("max_encounters from the environment was ignored")
                    await gm.join(eid, gm_token)
                    await gm.command(eid, "end_encounter", force=True)
                    lobby = await gm.list_encounters()
                    (mine,) = [e for e in lobby["encounters"] if e["id"] == eid]
                    assert mine["status"] == "archived", mine
                    # Its slot is free at once: another encounter can be created.
                    again = await gm.create_encounter("Second", "tavern", creatures)
                    assert again["encounter"] != eid
                return str(eid)

        eid = trio.run(play)

        listed = subprocess.run(
            [zonekeep, "encounters", "list", "--all", "--json"],
            cwd=installed.elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=helpers.deadline(60),
            check=False,
        )
        assert listed.returncode == 0, listed.stderr
        status = {r["id"]: r["status"] for r in json.loads(listed.stdout)}
        assert status[eid] == "archived", status

        assert _get(f"{http}/metrics")[0] == 401  # the token came from the environment
        code, metrics = _get(f"{http}/metrics", "metrics-secret-for-the-test")
        assert code == 200, metrics
        assert _sample(metrics, "zonekeep_commands_accepted_total", type="end_encounter") == 1
        assert (
            _sample(
                metrics,
                "zonekeep_requests_refused_total",
                method="create_encounter",
                code="server_full",
            )
            == 1
        )
        # Counted at most every few seconds (at start: none yet); present all the same.
        assert "\nzonekeep_encounters_stored " in metrics
        assert _sample(metrics, "zonekeep_encounters_loaded", state="open") == 1  # the second one
        assert _sample(metrics, "zonekeep_connections_opened_total") >= 2
    log = server.log
    assert server.process.returncode == 0, log[-3000:]
    assert key not in log and "metrics-secret-for-the-test" not in log
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert any("creat" in line["message"] and line.get("encounter") == eid for line in lines), log[
        -3000:
    ]
