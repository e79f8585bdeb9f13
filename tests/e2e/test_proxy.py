"""``zonekeep proxy --check`` (issue 32, point 8): a proxy between a client and a real
server, over real websockets, that passes every frame on and reports each message of
the client that breaks the schemas or the protocol. The clock is trio's ``MockClock``
(the server's, the proxy's and the test's): it moves only when the test moves it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing
from e2e_support import Loaded, Running, ServerConfig, sturdy_goblin_roster
from helpers import deadline
from lobby_support import refused
from prompt_support import to_a_prompt
from websockets.trio.client import ClientConnection
from websockets.trio.client import connect as ws_connect

from zonekeep.protocol.client import connect
from zonekeep.server._config import Limits
from zonekeep.server._proxy import Proxy

MakeServer = Callable[..., Any]


async def proxied(nursery: trio.Nursery, running: Running) -> tuple[Proxy, str]:
    proxy = Proxy(running.url)
    port = await nursery.start(proxy.run, "127.0.0.1", 0)
    return proxy, f"ws://127.0.0.1:{port}/ws"


@asynccontextmanager
async def raw(url: str) -> AsyncIterator[ClientConnection]:
    async with ws_connect(url, compression=None) as ws:
        yield ws


async def ask(ws: ClientConnection, rid: Any, method: str, **params: Any) -> dict[str, Any]:
    """Send a request and read frames until its reply (notifications are skipped)."""
    await ws.send(json.dumps({"id": rid, "method": method, "params": params}))
    while True:
        message: dict[str, Any] = json.loads(await ws.recv())
        if message.get("id") == rid:
            return message


def rules(proxy: Proxy) -> list[str]:
    return [p.rule for p in proxy.checker.problems]


async def test_a_client_that_keeps_the_rules_passes_and_is_served(
    nursery: trio.Nursery, running: Running
) -> None:
    proxy, url = await proxied(nursery, running)
    async with connect(url) as gm:  # (hello first, fresh ids, as the library does)
        with trio.fail_after(deadline(10)):
            created = await gm.create_encounter("Proxied", "tavern", sturdy_goblin_roster())
            eid = created["encounter"]
            await gm.command(eid, "set_surprise", surprised=[])
            seq = (await gm.request("snapshot", encounter=eid))["seq"]
    async with connect(url) as again:
        with trio.fail_after(deadline(10)):
            resumed = await again.join(eid, created["gm_token"], last_seq=seq)
            assert resumed["role"] == "gm" and resumed["events"] == []
    assert proxy.checker.problems == []


async def test_the_frame_rules_before_hello_reused_ids_and_schemas(
    nursery: trio.Nursery, running: Running
) -> None:
    proxy, url = await proxied(nursery, running)
    async with raw(url) as ws:
        with trio.fail_after(deadline(10)):
            early = await ask(ws, 1, "ping")
            assert early["error"]["name"] == "hello_required"  # passed on to the server
            await ask(ws, 2, "hello", protocol="1.5", client={"name": "t", "version": "0"})
            # Two requests with one id, the first not yet answered.
            await ws.send(json.dumps({"id": 7, "method": "ping", "params": {}}))
            await ws.send(json.dumps({"id": 7, "method": "ping", "params": {}}))
            for _ in range(2):
                assert json.loads(await ws.recv())["id"] == 7
            wrong = await ask(ws, 8, "ping", loud=True)
            assert wrong["error"]["name"] == "invalid_params"
            await ws.send("not json")
            await ws.recv()
            await ask(ws, 9, "ping")  # fine again: id 7 was answered long ago
    assert rules(proxy) == ["before_hello", "id_reused", "schema", "schema"]
    problem = proxy.checker.problems[0]
    assert problem.connection == 1 and json.loads(problem.frame)["method"] == "ping"
    assert json.loads(problem.to_json())["rule"] == "before_hello"


async def test_a_resume_without_last_seq_is_reported(
    nursery: trio.Nursery, running: Running
) -> None:
    proxy, url = await proxied(nursery, running)
    async with connect(url) as gm:
        with trio.fail_after(deadline(10)):
            created = await gm.create_encounter("Proxied", "tavern", sturdy_goblin_roster())
            eid, token = created["encounter"], created["gm_token"]
    async with connect(url) as again:
        with trio.fail_after(deadline(10)):
            await again.join(eid, token)  # the client knew the encounter: no last_seq
    assert rules(proxy) == ["resume_without_last_seq"]


async def test_an_answer_after_the_prompts_deadline_is_reported(
    mock_clock: trio.testing.MockClock, nursery: trio.Nursery, make_server: MakeServer
) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, reaction_seconds=30), entropy=Loaded()
    )
    proxy, url = await proxied(nursery, running)
    async with running.client() as gm, connect(url) as alice:
        with trio.fail_after(deadline(10)):
            eid, prompt = await to_a_prompt(gm, alice)
        decision = prompt["decision"]["id"]
        mock_clock.jump(29)  # in time: not reported
        with trio.fail_after(deadline(10)):
            await alice.request(
                "actions", encounter=eid, creature="aria"
            )  # (any request: the clock moved)
        assert rules(proxy) == []
        mock_clock.jump(2)  # 31 seconds after the prompt: too late
        with trio.fail_after(deadline(10)):
            await refused(alice.command(eid, "decide", decision=decision, choice=["attack"]))
    assert rules(proxy) == ["late_answer"]


async def test_a_retry_sooner_than_retry_after_ms_is_reported(
    mock_clock: trio.testing.MockClock, nursery: trio.Nursery, make_server: MakeServer
) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, limits=Limits(rate_per_second=1.0, rate_burst=2))
    )
    proxy, url = await proxied(nursery, running)
    async with raw(url) as ws:
        with trio.fail_after(deadline(10)):
            await ask(ws, 1, "hello", protocol="1.5", client={"name": "t", "version": "0"})
            await ask(ws, 2, "ping")
            limited = await ask(ws, 3, "ping")
        assert limited["error"]["data"] == {"retryable": True, "retry_after_ms": 1000}
        mock_clock.jump(0.5)
        with trio.fail_after(deadline(10)):
            await ask(ws, 4, "ping")  # half a second early
        assert rules(proxy) == ["early_retry"]
        mock_clock.jump(1.0)
        with trio.fail_after(deadline(10)):
            assert "result" in await ask(ws, 5, "ping")
    assert rules(proxy) == ["early_retry"]
