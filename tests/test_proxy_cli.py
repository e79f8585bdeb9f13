"""``zonekeep proxy --check`` as a command (issue 32, point 8): it reports a client's
broken message on standard error and in ``--report`` (JSON Lines), and exits 1 when
stopped after one."""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import trio
from helpers import deadline
from test_node_client import ROOT, SERVER, _wait_for_port
from websockets.trio.client import connect as ws_connect


async def _ping_before_hello(url: str) -> dict[str, object]:
    with trio.fail_after(deadline(10)):
        async with ws_connect(url, compression=None) as ws:
            await ws.send(json.dumps({"id": 1, "method": "ping", "params": {}}))
            reply: dict[str, object] = json.loads(await ws.recv())
            return reply


def test_the_proxy_reports_a_broken_message_and_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    report = tmp_path / "problems.jsonl"
    with log.open("w") as log_file:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(tmp_path / "server")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
    proxy = None
    try:
        port = _wait_for_port(server, log)
        proxy = subprocess.Popen(
            [
                *(sys.executable, "-m", "zonekeep.server._cli", "proxy", "--check"),
                *("--upstream", f"ws://127.0.0.1:{port}/ws", "--port", "0"),
                *("--report", str(report)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proxy.stdout is not None
        ready, _, _ = select.select([proxy.stdout], [], [], deadline(20))
        banner = proxy.stdout.readline() if ready else ""
        found = re.search(r"on ws://127\.0\.0\.1:(\d+)/ws -> ws://", banner)
        assert found, banner
        reply = trio.run(_ping_before_hello, f"ws://127.0.0.1:{found.group(1)}/ws")
        assert reply["error"]["name"] == "hello_required"  # type: ignore[index]
        proxy.send_signal(signal.SIGINT)
        out, err = proxy.communicate(timeout=deadline(20))
        assert proxy.returncode == 1, out + err
        assert "zonekeep proxy: before_hello: 'ping' sent before 'hello' was answered." in err
        assert "1 problem(s) in the client's messages" in out
        (line,) = report.read_text().splitlines()
        assert json.loads(line)["rule"] == "before_hello"
    finally:
        for process in (proxy, server):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
