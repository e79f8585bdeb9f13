"""The Node.js reference client (examples/clients/node) plays against a real server.

A zonekeep server runs in a subprocess on a free loopback port; ``node client.mjs``
connects to it, plays a few rounds and must exit 0 with its summary line. Skipped
only when ``node`` or the client's ``node_modules`` (``npm ci`` in that folder) is
missing.
"""

from __future__ import annotations

import json
import re
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import helpers
import pytest
from helpers import deadline, missing_component

ROOT = Path(__file__).resolve().parent.parent
CLIENT_DIR = ROOT / "examples" / "clients" / "node"

# Start a server on a port the OS picks (its SQLite store in the directory given as the
# argument), print the port once it listens, serve forever.
SERVER = """
import sys
import trio
from zonekeep.server import ServerConfig, ZonekeepServer

async def main():
    server = ZonekeepServer(ServerConfig(port=0, data_dir=sys.argv[1]))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        print(server.port, flush=True)

trio.run(main)
"""

SUMMARY = re.compile(
    r"^OK: encounter \S+, \d round\(s\), events up to seq \d+ without gaps, "
    r"folded to the server's snapshot, "
    r"\d+ attacks \(\d+ hits\), \d+ decision\(s\), ",
    re.MULTILINE,
)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        missing_component("node is not installed (the Node.js example client needs Node.js 18+)")
    if not (CLIENT_DIR / "node_modules").is_dir():
        missing_component(f"{CLIENT_DIR / 'node_modules'} is missing: run `npm ci` in {CLIENT_DIR}")
    return node


def _wait_for_port(server: subprocess.Popen[str], log: Path, timeout: float = 20.0) -> int:
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], timeout)
    line = server.stdout.readline() if ready else ""
    if not line.strip().isdigit():
        server.kill()
        server.wait()
        pytest.fail(
            f"the server did not start (stdout {line!r}); its log:\n"
            + log.read_text(errors="replace")
        )
    return int(line)


@contextmanager
def serving(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A server in a subprocess (its store and log under ``tmp_path``), and its port;
    killed at the end."""
    log = tmp_path / "server.log"
    with log.open("w") as log_file:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(tmp_path / "server")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
    try:
        yield server, _wait_for_port(server, log)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=helpers.deadline(10))
        if server.stdout is not None:
            server.stdout.close()


def test_node_client_plays_against_a_real_server(tmp_path: Path) -> None:
    node = _node()
    with serving(tmp_path) as (_, port):
        client = subprocess.run(
            [node, "client.mjs", f"ws://127.0.0.1:{port}/ws"],
            cwd=CLIENT_DIR,
            capture_output=True,
            text=True,
            timeout=helpers.deadline(60),
        )
        output = f"stdout:\n{client.stdout}\nstderr:\n{client.stderr}"
        assert client.returncode == 0, output
        assert SUMMARY.search(client.stdout), output
        assert "warning:" not in client.stderr, output


def _start_proxy(*options: str) -> tuple[subprocess.Popen[str], str]:
    """``zonekeep proxy`` with ``options`` on a free port; the process and its URL."""
    proxy = subprocess.Popen(
        [sys.executable, "-m", "zonekeep.server._cli", "proxy", "--port", "0", *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdout is not None
    ready, _, _ = select.select([proxy.stdout], [], [], deadline(20))
    banner = proxy.stdout.readline() if ready else ""
    found = re.search(r"on (ws://127\.0\.0\.1:\d+/ws)", banner)
    if found is None:
        proxy.kill()
        _, err = proxy.communicate(timeout=helpers.deadline(10))
        pytest.fail(f"zonekeep proxy did not start: {banner!r} {err}")
    return proxy, found.group(1)


def _stop(proxy: subprocess.Popen[str]) -> tuple[str, str]:
    proxy.send_signal(signal.SIGINT)
    return proxy.communicate(timeout=deadline(20))


def _play(node: str, url: str) -> str:
    client = subprocess.run(
        [node, "client.mjs", url],
        cwd=CLIENT_DIR,
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    output = f"stdout:\n{client.stdout}\nstderr:\n{client.stderr}"
    assert client.returncode == 0, output
    assert SUMMARY.search(client.stdout), output
    return client.stdout


def test_node_client_runs_through_the_conformance_kit(tmp_path: Path) -> None:
    """The conformance kit (docs/clients.md) with the Node.js client: through
    ``zonekeep proxy --check`` to a real server, the proxy finds nothing wrong in what
    it sent, and records the session; then ``zonekeep proxy --play`` plays that
    session back as a fake server, and the client plays the same game against it."""
    node = _node()
    report = tmp_path / "problems.jsonl"
    session = tmp_path / "session.jsonl"
    processes: list[subprocess.Popen[str]] = []
    try:
        with serving(tmp_path) as (_, port):
            proxy, url = _start_proxy(
                *("--check", "--upstream", f"ws://127.0.0.1:{port}/ws"),
                *("--report", str(report), "--record", str(session)),
            )
            processes.append(proxy)
            live = _play(node, url)
            out, err = _stop(proxy)
        assert report.read_text() == "", err
        assert "0 problem(s) in the client's messages" in out, out + err
        assert proxy.returncode == 0, out + err
        entries = [json.loads(line) for line in session.read_text().splitlines()]
        assert {e["connection"] for e in entries} == {1, 2}  # the GM's and alice's
        assert any(e.get("from") == "client" for e in entries)

        # The server is gone: the fake server alone from here.
        player, url = _start_proxy("--play", str(session))
        processes.append(player)
        try:
            replayed = _play(node, url)
        except AssertionError:
            _, err = _stop(player)
            raise AssertionError(f"the fake server said:\n{err}") from None
        out, err = _stop(player)
        assert "0 problem(s)" in out, out + err
        assert player.returncode == 0, out + err
        assert replayed.splitlines()[-1] == live.splitlines()[-1]  # the same game
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=helpers.deadline(10))


# Two nodes on one PostgreSQL store (its URL the argument), each printing its port.
NODES = """
import sys
import trio
from zonekeep.server import ServerConfig, ZonekeepServer

async def main():
    async with trio.open_nursery() as nursery:
        for name in ("a", "b"):
            config = ServerConfig(port=0, store=sys.argv[1], store_pool_size=2, node_id=name)
            server = ZonekeepServer(config)
            await nursery.start(server.run)
            print(server.port, flush=True)

trio.run(main)
"""


def test_node_client_follows_moved_to_the_node_that_serves_the_encounter(
    tmp_path: Path,
) -> None:
    from postgres_support import fresh_schema

    node = _node()
    log = tmp_path / "nodes.log"
    with fresh_schema() as store, log.open("w") as log_file:
        nodes = subprocess.Popen(
            [sys.executable, "-c", NODES, store],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
        try:
            a, b = _wait_for_port(nodes, log), _wait_for_port(nodes, log)
            client = subprocess.run(
                [node, "client.mjs", f"ws://127.0.0.1:{a}/ws", f"ws://127.0.0.1:{b}/ws"],
                cwd=CLIENT_DIR,
                capture_output=True,
                text=True,
                timeout=helpers.deadline(60),
            )
            output = f"stdout:\n{client.stdout}\nstderr:\n{client.stderr}"
            assert client.returncode == 0, output
            # The GM created it on a; alice asked b, which sent her to a.
            assert f"alice: moved to ws://127.0.0.1:{a}/ws" in client.stdout, output
            assert SUMMARY.search(client.stdout), output
        finally:
            nodes.kill()
            nodes.wait(timeout=helpers.deadline(10))
            if nodes.stdout is not None:
                nodes.stdout.close()
