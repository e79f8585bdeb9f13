"""The Node.js reference client (examples/clients/node) plays against a real server.

A zonekeep server runs in a subprocess on a free loopback port; ``node client.mjs``
connects to it, plays a few rounds and must exit 0 with its summary line. Skipped
only when ``node`` or the client's ``node_modules`` (``npm ci`` in that folder) is
missing.
"""

from __future__ import annotations

import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import helpers
import pytest
from helpers import missing_component

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


def test_node_client_plays_against_a_real_server(tmp_path: Path) -> None:
    node = _node()
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
        port = _wait_for_port(server, log)
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
    finally:
        server.kill()
        server.wait(timeout=helpers.deadline(10))
        if server.stdout is not None:
            server.stdout.close()


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
