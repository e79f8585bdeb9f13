"""``zonekeep proxy --check`` as a command (issue 32, point 8): it reports a client's
broken message on standard error and in ``--report`` (JSON Lines), and exits 1 when
stopped after one."""

from __future__ import annotations

import json
from pathlib import Path

import helpers
import trio
from helpers import deadline
from test_node_client import _start_proxy, _stop, serving
from websockets.trio.client import connect as ws_connect


async def _ping_before_hello(url: str) -> dict[str, object]:
    with trio.fail_after(deadline(10)):
        async with ws_connect(url, compression=None) as ws:
            await ws.send(json.dumps({"id": 1, "method": "ping", "params": {}}))
            reply: dict[str, object] = json.loads(await ws.recv())
            return reply


def test_the_proxy_reports_a_broken_message_and_exits_1(tmp_path: Path) -> None:
    report = tmp_path / "problems.jsonl"
    with serving(tmp_path) as (_, port):
        proxy, url = _start_proxy(
            "--check", "--upstream", f"ws://127.0.0.1:{port}/ws", "--report", str(report)
        )
        try:
            reply = trio.run(_ping_before_hello, url)
            assert reply["error"]["name"] == "hello_required"  # type: ignore[index]
            out, err = _stop(proxy)
        finally:
            if proxy.poll() is None:
                proxy.kill()
                proxy.wait(timeout=helpers.deadline(10))
    assert proxy.returncode == 1, out + err
    assert "zonekeep proxy: before_hello: 'ping' sent before 'hello' was answered." in err
    assert "1 problem(s) in the client's messages" in out
    (line,) = report.read_text().splitlines()
    assert json.loads(line)["rule"] == "before_hello"
