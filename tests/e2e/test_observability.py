"""Logs, metrics, health and the client's address behind a reverse proxy, end to end.

Each test starts a real server on a loopback port (SQLite store in ``tmp_path``) and
talks to it over real sockets: websockets for play, raw HTTP/1.1 for ``/metrics``,
``/healthz`` and ``/readyz``, and raw websocket handshakes carrying
``X-Forwarded-For`` (from 127.0.0.1 and from 127.0.0.2, two peers on the loopback).
Log lines are read from the handler ``configure_logging`` installs, given a buffer.
"""

from __future__ import annotations

import io
import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Boom, Limits, Running, ServerConfig, creatures, parse_response
from prometheus_client.parser import text_string_to_metric_families

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk.engine import Engine
from zonekeep.server import ZonekeepServer, _log, _sqlite
from zonekeep.server._sqlite import SqliteStore

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)  # seconds: the bound on every wait for something that must happen
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"  # a log line's time


# -- helpers ------------------------------------------------------------------------------------


async def http_get(
    port: int, path: str, *headers: str, local: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """A plain HTTP/1.1 GET over a raw TCP stream (from ``local``, an address of this
    machine, when given): status, headers (lower-case names), body."""
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=local)
        async with stream:
            head_lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
            await stream.send_all(("\r\n".join(head_lines) + "\r\n\r\n").encode())
            data = b""
            while chunk := await stream.receive_some():
                data += chunk
    return parse_response(data)


async def open_websocket(
    port: int, *headers: str, local: str | None = None
) -> tuple[int, trio.SocketStream]:
    """A raw websocket opening handshake for ``/ws`` with extra ``headers``, from
    ``local``: the response's status and the stream, left open (close it)."""
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=local)
        lines = [
            "GET /ws HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
            *headers,
        ]
        await stream.send_all(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = await stream.receive_some()
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1]), stream


def samples(page: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page: (name, sorted labels) -> value."""
    found = {}
    for family in text_string_to_metric_families(page.decode()):
        for sample in family.samples:
            found[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return found


async def scrape(running: Running, *headers: str) -> dict[tuple[str, Any], float]:
    port = running.server.port
    assert port is not None
    status, found, body = await http_get(port, "/metrics", *headers)
    assert status == 200, body
    assert found["content-type"].startswith("text/plain")
    return samples(body)


def value(page: dict[tuple[str, Any], float], name: str, **labels: str) -> float:
    return page.get((name, tuple(sorted(labels.items()))), 0.0)


async def table(gm: ZonekeepClient) -> tuple[str, dict[str, str]]:
    """An encounter in the tavern; tokens for alice and a spectator."""
    created = await gm.create_encounter("Observed", "tavern", creatures())
    eid = created["encounter"]
    return eid, {
        "gm": created["gm_token"],
        "alice": (await gm.request("create_seat", encounter=eid, player="alice"))["token"],
        "spectator": (await gm.request("create_spectator_link", encounter=eid))["token"],
    }


async def until(condition: Callable[[], bool]) -> None:
    """Let the server run until ``condition`` holds (bounded)."""
    with trio.fail_after(WAIT):
        while not condition():
            await trio.sleep(0.01)


@pytest.fixture
def log_buffer() -> Iterator[Callable[[str, str], io.StringIO]]:
    """``configure(level, fmt)``: the server logs into a fresh buffer, returned; the
    logging set-up is put back afterwards."""
    root = logging.getLogger()
    quiet = {name: logging.getLogger(name).level for name in _log.QUIET}
    level = root.level

    def configure(level: str, fmt: str) -> io.StringIO:
        buffer = io.StringIO()
        _log.configure_logging(level, fmt, stream=buffer)  # type: ignore[arg-type]
        return buffer

    yield configure
    _log.unconfigure_logging()
    root.setLevel(level)
    for name, old in quiet.items():
        logging.getLogger(name).setLevel(old)


# -- /metrics -----------------------------------------------------------------------------------


async def test_metrics_count_a_session(make_server: MakeServer) -> None:
    running: Running = await make_server(engine=Engine([*load_default_plugins(), Boom()]))
    running.server.metrics.stored_ttl = 0  # count the stored encounters at every scrape
    before = await scrape(running)
    assert value(before, "zonekeep_encounters_stored") == 0
    assert value(before, "zonekeep_connections", role="unjoined") == 0
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as watcher,
        running.client(),  # connected, joined nowhere
    ):
        eid, tokens = await table(gm)
        await alice.join(eid, tokens["alice"])
        await watcher.join(eid, tokens["spectator"])
        with pytest.raises(ClientError) as refused:
            await alice.command(eid, "set_surprise", surprised=[])
        assert refused.value.name == "gm_only"
        await gm.command(eid, "set_surprise", surprised=[])
        with pytest.raises(ClientError) as unknown:
            await gm.command(eid, "no such command, free text")
        with pytest.raises(ClientError) as bad:
            await alice.join(eid, "not a token")
        assert bad.value.name == "bad_token"
        with pytest.raises(ClientError) as failed:
            await gm.command(eid, "boom")
        assert failed.value.name == "plugin_error"

        page = await scrape(running)
        assert value(page, "zonekeep_connections", role="gm") == 1
        assert value(page, "zonekeep_connections", role="player") == 1
        assert value(page, "zonekeep_connections", role="spectator") == 1
        assert value(page, "zonekeep_connections", role="unjoined") == 1
        assert value(page, "zonekeep_connections_opened_total") == 4
        assert value(page, "zonekeep_encounters_loaded", state="open") == 1
        assert value(page, "zonekeep_encounters_stored") == 1
        assert value(page, "zonekeep_commands_accepted_total", type="set_surprise") == 1
        assert (
            value(page, "zonekeep_commands_refused_total", type="set_surprise", code="gm_only") == 1
        )
        # A type nobody knows is "other": a label is never a client's free text.
        assert (
            value(page, "zonekeep_commands_refused_total", type="other", code=unknown.value.name)
            == 1
        )
        assert not [k for k in page if "free text" in str(k)]
        assert value(page, "zonekeep_requests_refused_total", method="join", code="bad_token") == 1
        failures = {k: v for k, v in page.items() if k[0] == "zonekeep_plugin_failures_total"}
        assert list(failures.values()) == [1], failures
        assert value(page, "zonekeep_command_broadcast_seconds_count") == 1
        assert value(page, "zonekeep_store_commit_seconds_count") >= 2  # creation, command
        assert value(page, "zonekeep_sent_bytes_total") > value(before, "zonekeep_sent_bytes_total")
        assert ("zonekeep_event_loop_lag_seconds", ()) in page
        assert value(page, "zonekeep_store_healthy") == 1

    await until(lambda: not running.server.connections)
    after = await scrape(running)
    assert sum(v for k, v in after.items() if k[0] == "zonekeep_connections") == 0


async def test_metrics_need_the_bearer_token_when_one_is_set(make_server: MakeServer) -> None:
    secret = "metrics-secret-4e1f"
    running: Running = await make_server(ServerConfig(port=0, metrics_token=secret))
    port = running.server.port
    assert port is not None
    for headers in [(), ("Authorization: Bearer wrong",), (f"Authorization: Basic {secret}",)]:
        status, found, body = await http_get(port, "/metrics", *headers)
        assert status == 401, body
        assert found["www-authenticate"].startswith("Bearer")
        assert b"zonekeep_" not in body
    page = await scrape(running, f"Authorization: Bearer {secret}")
    assert ("zonekeep_encounters_stored", ()) in page
    # Without a token set, the page is open.
    other: Running = await make_server()
    assert ("zonekeep_encounters_stored", ()) in await scrape(other)


async def test_each_server_counts_for_itself(make_server: MakeServer) -> None:
    one: Running = await make_server()
    two: Running = await make_server()
    async with one.client() as gm:
        await table(gm)
    page_one, page_two = await scrape(one), await scrape(two)
    assert value(page_one, "zonekeep_connections_opened_total") == 1
    assert value(page_two, "zonekeep_connections_opened_total") == 0
    assert value(page_two, "zonekeep_store_commit_seconds_count") == 0


# -- /healthz and /readyz -----------------------------------------------------------------------


async def health(running: Running) -> tuple[int, dict[str, Any]]:
    port = running.server.port
    assert port is not None
    status, found, body = await http_get(port, "/healthz")
    assert found["content-type"] == "application/json"
    return status, json.loads(body)


async def test_healthz_fails_while_the_event_loop_lags(make_server: MakeServer) -> None:
    running: Running = await make_server()
    running.server.metrics.lag_window = 0.5
    assert await health(running) == (
        200,
        {"status": "ok", "encounters": 0, "connections": 0},
    )
    time.sleep(1.5)  # blocks the event loop: the server's and this test's
    status, body = await health(running)
    assert status == 503, body
    assert body["status"] == "unhealthy"
    assert any("event loop lags" in p for p in body["problems"]), body
    lag = samples((await http_get(running.server.port or 0, "/metrics"))[2])
    assert lag["zonekeep_event_loop_lag_seconds", ()] >= 0  # the gauge is there
    # Once the loop runs freely for a while, it is healthy again.
    with trio.fail_after(WAIT):
        while (await health(running))[0] != 200:
            await trio.sleep(0.1)


@pytest.mark.sqlite
async def test_healthz_fails_while_the_store_cannot_commit(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    running: Running = await make_server()
    async with running.client() as gm:
        eid, _ = await table(gm)
        assert (await health(running))[0] == 200
        original = _sqlite._write_batch

        def failing(conn: sqlite3.Connection, batch: Any) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(_sqlite, "_write_batch", failing)
        with pytest.raises(ClientError) as refused:
            await gm.command(eid, "set_surprise", surprised=[])
        assert refused.value.name == "store_unavailable"
        status, body = await health(running)
        assert status == 503, body
        assert any(
            "store cannot commit" in p and "disk I/O error" in p for p in body["problems"]
        ), body
        assert value(await scrape(running), "zonekeep_store_healthy") == 0

        # The next commit that succeeds clears it.
        monkeypatch.setattr(_sqlite, "_write_batch", original)
        await gm.command(eid, "set_surprise", surprised=[])
        assert await health(running) == (
            200,
            {"status": "ok", "encounters": 1, "connections": 1},
        )


async def test_readyz_only_while_the_server_accepts_joins(
    nursery: trio.Nursery, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The start is held at its last step (counting the stored encounters), the
    # shutdown while a command waits for the store.
    started, hold, held = trio.Event(), trio.Event(), trio.Event()
    counting, append = SqliteStore.encounters, SqliteStore.append

    async def slow_count(self: SqliteStore) -> list[str]:
        await started.wait()
        return await counting(self)

    async def slow_append(self: SqliteStore, *args: Any, **kw: Any) -> None:
        if hold.is_set():
            held.set()
            await trio.sleep_forever()  # cancelled when the server stops
        await append(self, *args, **kw)

    monkeypatch.setattr(SqliteStore, "encounters", slow_count)
    monkeypatch.setattr(SqliteStore, "append", slow_append)
    server = ZonekeepServer(ServerConfig(port=0, data_dir=tmp_path / "server"), engine=Engine())
    nursery.start_soon(server.run)
    await until(lambda: server._listener is not None)
    port = server.port
    assert port is not None
    status, _, body = await http_get(port, "/readyz")
    assert (status, json.loads(body)) == (503, {"status": "starting"})
    started.set()
    await until(lambda: server.ready)
    status, _, body = await http_get(port, "/readyz")
    assert (status, json.loads(body)) == (200, {"status": "ready"})

    running = Running(server)
    async with running.client() as gm:
        eid, _ = await table(gm)
        hold.set()
        command = {"encounter": eid, "type": "set_surprise", "params": {"surprised": []}}
        await gm.send_raw(json.dumps({"id": "c1", "method": "command", "params": command}))
        with trio.fail_after(WAIT):
            await held.wait()  # the command is in flight: the shutdown waits for it
        async with trio.open_nursery() as inner:
            inner.start_soon(server.shutdown)
            await until(lambda: not server.ready)
            status, _, body = await http_get(port, "/readyz")
            assert (status, json.loads(body)) == (503, {"status": "shutting down"})
            inner.cancel_scope.cancel()


# -- the client's address -----------------------------------------------------------------------


async def test_forwarded_for_is_believed_from_trusted_proxies_only(
    make_server: MakeServer, log_buffer: Callable[[str, str], io.StringIO]
) -> None:
    log = log_buffer("info", "text")
    running: Running = await make_server(
        ServerConfig(
            port=0,
            trusted_proxies=("127.0.0.1", "10.0.0.0/8"),
            limits=Limits(max_connections_per_ip=1),
        )
    )
    server = running.server
    port = server.port
    assert port is not None
    opened: list[trio.SocketStream] = []
    try:
        # From the trusted proxy: the rightmost address it did not get from a trusted
        # proxy (10.1.2.3 is one; 198.51.100.1 is what the client claimed).
        status, stream = await open_websocket(
            port, "X-Forwarded-For: 198.51.100.1, 203.0.113.7, 10.1.2.3"
        )
        opened.append(stream)
        assert status == 101
        await until(lambda: len(server.connections) == 1)
        assert [c.address for c in server.connections] == ["203.0.113.7"]
        # Two header lines are one list; every one trusted: the leftmost.
        status, stream = await open_websocket(
            port, "X-Forwarded-For: 10.9.9.9", "X-Forwarded-For: 10.0.0.1"
        )
        opened.append(stream)
        assert status == 101
        await until(lambda: len(server.connections) == 2)
        assert {c.address for c in server.connections} == {"203.0.113.7", "10.9.9.9"}
        # The per-address cap counts the client's address, not the proxy's.
        status, stream = await open_websocket(port, "X-Forwarded-For: 203.0.113.7")
        opened.append(stream)
        assert status == 429
        # Malformed: refused (400), never the proxy's own address, and no crash.
        for header in ["X-Forwarded-For: not-an-ip", "X-Forwarded-For: 203.0.113.9:443, ,"]:
            status, stream = await open_websocket(port, header)
            opened.append(stream)
            assert status == 400
            assert "127.0.0.1" not in {c.address for c in server.connections}

        # From a peer that is not trusted (127.0.0.2), the header is ignored: the
        # connection is the peer's, and so is its place under the cap.
        status, stream = await open_websocket(
            port, "X-Forwarded-For: 192.0.2.50", local="127.0.0.2"
        )
        opened.append(stream)
        assert status == 101
        await until(lambda: "127.0.0.2" in {c.address for c in server.connections})
        assert "192.0.2.50" not in {c.address for c in server.connections}
        status, stream = await open_websocket(
            port, "X-Forwarded-For: 192.0.2.51", local="127.0.0.2"
        )
        opened.append(stream)
        assert status == 429
    finally:
        for stream in opened:
            await stream.aclose()

    await until(lambda: not server.connections)
    page = await scrape(running)
    assert value(page, "zonekeep_connections_refused_total", reason="too_many_per_address") == 2
    lines = log.getvalue().splitlines()
    opened_from = [
        m.group(1) for line in lines if (m := re.search(r" client=(\S+) connection opened$", line))
    ]
    assert opened_from[:2] == ["203.0.113.7", "10.9.9.9"]
    assert "127.0.0.2" in opened_from
    assert "192.0.2.50" not in log.getvalue()
    assert any(
        "client=203.0.113.7" in line and "HTTP 429" in line and " WARNING " in line
        for line in lines
    ), lines


async def test_the_forwarded_address_is_the_creators_for_the_quotas(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(
        ServerConfig(
            port=0,
            trusted_proxies=("127.0.0.1",),
            creation="open",
            limits=Limits(open_encounters=1),
        )
    )
    headers = {"X-Forwarded-For": "203.0.113.77"}
    async with (
        running.client(additional_headers=headers) as proxied,
        running.client(additional_headers=headers) as same,
        running.client() as direct,
    ):
        clients = sorted(c.address for c in running.server.connections)
        assert clients == ["127.0.0.1", "203.0.113.77", "203.0.113.77"]
        await proxied.create_encounter("Proxied", "tavern", creatures())
        # The quota is the forwarded client's: another connection of it is refused...
        with pytest.raises(ClientError) as refused:
            await same.create_encounter("Again", "tavern", creatures())
        assert refused.value.name == "quota_exceeded"
        # ...and the proxy's own address (a client on the same machine) is not.
        await direct.create_encounter("Direct", "tavern", creatures())


async def test_a_foreign_origin_is_counted_and_logged(
    make_server: MakeServer, log_buffer: Callable[[str, str], io.StringIO]
) -> None:
    log = log_buffer("warning", "text")
    running: Running = await make_server()
    port = running.server.port
    assert port is not None
    status, stream = await open_websocket(port, "Origin: https://evil.example")
    await stream.aclose()
    assert status == 403
    page = await scrape(running)
    assert value(page, "zonekeep_connections_refused_total", reason="origin") == 1
    assert value(page, "zonekeep_connections_opened_total") == 0
    (line,) = log.getvalue().splitlines()
    assert re.fullmatch(
        rf"{TIME} WARNING zonekeep\.server client=127\.0\.0\.1 "
        r"refused a connection \(HTTP 403\): origin not allowed",
        line,
    )


# -- the log ------------------------------------------------------------------------------------


async def test_text_log_lines_name_the_encounter_and_the_client(
    make_server: MakeServer, log_buffer: Callable[[str, str], io.StringIO]
) -> None:
    log = log_buffer("info", "text")
    running: Running = await make_server(engine=Engine([*load_default_plugins(), Boom()]))
    async with running.client() as gm, running.client() as alice:
        eid, tokens = await table(gm)
        await alice.join(eid, tokens["alice"])
        with pytest.raises(ClientError):
            await gm.command(eid, "boom")
        for _ in range(3):
            await alice.send_raw("x" * 10)  # parse errors: DEBUG, not shown at INFO
    await until(lambda: not running.server.connections)
    text = log.getvalue()
    lines = text.splitlines()
    e = re.escape(eid)
    patterns = {
        "created": rf"^{TIME} INFO zonekeep\.server client=127\.0\.0\.1 encounter={e} "
        r"encounter created: 'Observed' by address 127\.0\.0\.1$",
        "joined": rf"^{TIME} INFO zonekeep\.session client=127\.0\.0\.1 encounter={e} "
        r"joined as player alice$",
        "opened": rf"^{TIME} INFO zonekeep\.connection client=127\.0\.0\.1 connection opened$",
        "closed": rf"^{TIME} INFO zonekeep\.connection client=127\.0\.0\.1 connection closed",
        "plugin": rf"^{TIME} ERROR zonekeep\.room client=127\.0\.0\.1 encounter={e} .*boom",
    }
    for what, pattern in patterns.items():
        assert any(re.search(pattern, line) for line in lines), (what, text)
    # The traceback of the plugin's failure follows its line.
    assert "RuntimeError: boom" in text
    assert "refused" not in text  # the parse errors are DEBUG


async def test_json_log_lines(
    make_server: MakeServer, log_buffer: Callable[[str, str], io.StringIO]
) -> None:
    log = log_buffer("debug", "json")
    running: Running = await make_server(engine=Engine([*load_default_plugins(), Boom()]))
    async with running.client() as gm, running.client() as alice:
        eid, tokens = await table(gm)
        await alice.join(eid, tokens["alice"])
        with pytest.raises(ClientError):
            await alice.join(eid, "wrong")
        with pytest.raises(ClientError):
            await gm.command(eid, "boom")
    await until(lambda: not running.server.connections)
    records = [json.loads(line) for line in log.getvalue().splitlines()]
    assert records
    for record in records:
        assert {"time", "level", "logger", "message", "encounter", "client"} <= set(record)
        assert re.fullmatch(TIME, record["time"])
    joined = [r for r in records if r["message"] == "joined as player alice"]
    assert joined == [
        {
            "time": joined[0]["time"],
            "level": "INFO",
            "logger": "zonekeep.session",
            "message": "joined as player alice",
            "encounter": eid,
            "client": "127.0.0.1",
        }
    ]
    refused = [r for r in records if r["message"] == "refused join: bad_token"]
    assert [(r["level"], r["encounter"]) for r in refused] == [("WARNING", eid)]
    failed = [r for r in records if r["level"] == "ERROR" and r["encounter"] == eid]
    assert failed and "RuntimeError: boom" in failed[0]["traceback"]


async def test_no_secret_is_ever_logged(
    make_server: MakeServer,
    log_buffer: Callable[[str, str], io.StringIO],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    text_log = log_buffer("debug", "text")
    key, metrics_token = "server-key-9c2d71", "metrics-token-5b8e03"
    running: Running = await make_server(
        ServerConfig(port=0, server_key=key, metrics_token=metrics_token)
    )
    secrets = [key, metrics_token, "wrong-key-17ab", "wrong-token-2cd4", "wrong-metrics-88ef"]
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        with pytest.raises(ClientError):
            await gm.create_encounter("Secret", "tavern", creatures(), server_key=secrets[2])
        created = await gm.create_encounter("Secret", "tavern", creatures(), server_key=key)
        eid = created["encounter"]
        seat = (await gm.request("create_seat", encounter=eid, player="alice"))["token"]
        link = (await gm.request("create_spectator_link", encounter=eid))["token"]
        await alice.join(eid, seat)
        await watcher.join(eid, link)
        with pytest.raises(ClientError):
            await watcher.join(eid, secrets[3])
        rotated = (await gm.request("rotate_gm_token", encounter=eid))["token"]
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.request("revoke_spectator_link", encounter=eid, token=link)
        secrets += [created["gm_token"], seat, link, rotated]
        await scrape(running, f"Authorization: Bearer {metrics_token}")
        status, _, _ = await http_get(
            running.server.port or 0, "/metrics", f"Authorization: Bearer {secrets[4]}"
        )
        assert status == 401
    await until(lambda: not running.server.connections)
    logged = text_log.getvalue() + caplog.text
    assert "joined as player alice" in logged and "refused join: bad_token" in logged
    assert f"encounter={eid}" in logged
    for secret in secrets:
        assert secret not in logged, secret
