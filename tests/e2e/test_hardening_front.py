"""Hardening of the HTTP front (issue 27, points 2, 3, 9 and 10), each attack sent over
a real socket to a real server on a loopback port.

2. a page on a DNS name rebound to 127.0.0.1 is not the operator; 3. unfinished
handshakes: a deadline, and a count per address; 9. methods other than GET on every
plain HTTP path; 10. a repeated Host, Origin or Authorization header, and query strings
in the log. Point 1 (``X-Forwarded-For`` through a real nginx) is in test_nginx.py.

Two client addresses come from the loopback: 127.0.0.1 and 127.0.0.2 (Linux answers
on all of 127.0.0.0/8).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, creatures, parse_response
from helpers import deadline

from zonekeep.protocol.client import ClientError, ZonekeepClient, connect

MakeServer = Callable[..., Any]
SECRET = "s3cr3t-t0ken"  # put in query strings: it must never reach the log


async def exchange(
    port: int, request: str, *, local: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Send one raw HTTP request (from ``local``, an address of this machine, when
    given): the response's status, headers (lower-case names) and body. A response
    other than 101 is read until the server closes the connection."""
    with trio.fail_after(deadline(5)):
        stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=local)
        async with stream:
            await stream.send_all(request.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await stream.receive_some()
                assert chunk, f"closed before the response's head: {data!r}"
                data += chunk
            if not data.startswith(b"HTTP/1.1 101 "):
                while chunk := await stream.receive_some():
                    data += chunk
    return parse_response(data)


def request(method: str, path: str, *headers: str, upgrade: bool = False) -> str:
    """An HTTP/1.1 request's text (a websocket opening handshake with ``upgrade``)."""
    lines = [f"{method} {path} HTTP/1.1", *headers]
    if upgrade:
        lines += [
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
        ]
    return "\r\n".join(lines) + "\r\n\r\n"


async def refused(call: Any) -> ClientError:
    """The :class:`ClientError` awaiting ``call`` raises (failing if it succeeds)."""
    with pytest.raises(ClientError) as caught, trio.fail_after(deadline(5)):
        await call
    return caught.value


# -- 9. methods -------------------------------------------------------------------------------


PLAIN_PATHS = ("/healthz", "/readyz", "/metrics", "/table/", "/table/table.js", "/ws", "/")


async def test_other_methods_get_405_with_allow_on_every_plain_path(running: Running) -> None:
    port = running.server.port
    assert port is not None
    host = f"Host: 127.0.0.1:{port}"
    for path in PLAIN_PATHS:
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            status, headers, body = await exchange(
                port, request(method, path, host, "Content-Length: 0")
            )
            assert (status, headers.get("allow"), body) == (405, "GET", b"Only GET is allowed.\n")
    # A websocket handshake with another method: 405 too, and nothing opens.
    status, headers, _ = await exchange(port, request("POST", "/ws", host, upgrade=True))
    assert (status, headers.get("allow")) == (405, "GET")
    assert running.server.connections == set()
    # GET is answered as before.
    for path, wanted in (("/healthz", 200), ("/readyz", 200), ("/metrics", 200), ("/table/", 200)):
        status, _, _ = await exchange(port, request("GET", path, host))
        assert status == wanted, path
    status, _, _ = await exchange(port, request("GET", "/ws", host, upgrade=True))
    assert status == 101


# -- 10. repeated headers, and query strings in the log ---------------------------------------


async def test_a_repeated_host_origin_or_authorization_header_gets_400(
    make_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    running: Running = await make_server(ServerConfig(port=0, metrics_token="m-token"))
    port = running.server.port
    assert port is not None
    twice = {
        "Host": [f"Host: 127.0.0.1:{port}", "Host: 127.0.0.1:1"],
        "Origin": [f"Origin: http://127.0.0.1:{port}", f"Origin: http://127.0.0.1:{port}"],
        "Authorization": ["Authorization: Bearer m-token", "Authorization: Bearer other"],
    }
    for name, lines in twice.items():
        host = [] if name == "Host" else [f"Host: 127.0.0.1:{port}"]
        for path, upgrade in (("/ws", True), ("/metrics", False), ("/healthz", False)):
            status, _, body = await exchange(
                port, request("GET", f"{path}?token={SECRET}", *host, *lines, upgrade=upgrade)
            )
            assert status == 400, (name, path, body)
            assert body == f"Bad request: more than one {name} header.\n".encode()
    assert running.server.metrics.handshakes_refused["bad_request"] == 9
    assert running.server.connections == set()
    records = caplog.records
    assert not [r for r in records if r.exc_info or r.levelno >= logging.ERROR]
    assert not [r for r in records if SECRET in r.getMessage()]
    warned = [r.getMessage() for r in records if "HTTP 400" in r.getMessage()]
    assert "refused a request (HTTP 400) for /ws: more than one Host header" in warned
    # One of each opens (and reads /metrics) as before.
    auth = "Authorization: Bearer m-token"
    status, _, _ = await exchange(port, request("GET", "/metrics", f"Host: 127.0.0.1:{port}", auth))
    assert status == 200
    async with running.client() as gm:
        assert (await gm.create_encounter("After", "tavern", creatures()))["encounter"]


async def test_the_log_never_quotes_a_query_string(
    running: Running, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that fails inside the server (a 500, with its traceback logged) is
    logged by its path: what follows ``?`` (a token, in a careless link) is left out."""
    caplog.set_level(logging.DEBUG)
    port = running.server.port
    assert port is not None

    async def broken(*args: Any, **kw: Any) -> None:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(running.server.metrics, "refresh_stored", broken)
    status, _, _ = await exchange(
        port, request("GET", f"/metrics?token={SECRET}&x=1", f"Host: 127.0.0.1:{port}")
    )
    assert status == 500
    failed = [r for r in caplog.records if r.exc_info]
    assert [r.getMessage() for r in failed] == ["answering /metrics failed"]
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    assert SECRET not in caplog.text


# -- 2. DNS rebinding ---------------------------------------------------------------------------


def as_host(running: Running, name: str, **kw: Any) -> Any:
    """A client of ``running`` whose request names ``name`` (``Host``, and the page's
    ``Origin`` as a browser on ``http://name:port`` sends it) while it connects to
    127.0.0.1: a page whose DNS name was rebound to the loopback."""
    port = running.server.port
    origin = kw.pop("origin", f"http://{name}:{port}")
    return connect(f"ws://{name}:{port}/ws", host="127.0.0.1", origin=origin, **kw)


async def operator_powers(client: ZonekeepClient, eid: str) -> bool:
    """Whether ``client`` sees the private ``eid`` as its own (the operator's lobby)."""
    listed = await client.list_encounters()
    return any(e["id"] == eid and e["mine"] for e in listed["encounters"])


async def test_a_rebound_dns_name_is_not_the_operator(running: Running) -> None:
    async with running.client() as operator:
        eid = (await operator.create_encounter("Private", "tavern", creatures()))["encounter"]
        assert await operator_powers(operator, eid)
    async with as_host(running, "rebound.example") as page:
        # The handshake itself is allowed (Origin == Host), but nothing of the operator's.
        made = await refused(page.create_encounter("Mine now", "tavern", creatures()))
        assert made.name == "gm_key_required"
        listed = await page.list_encounters()
        assert listed == {"encounters": [], "total": 0}
        links = await refused(page.encounter_links(eid))
        assert links.name == "gm_key_required"
        archived = await refused(page.request("archive_encounter", encounter=eid))
        assert archived.name == "gm_key_required"
    # A loopback name, a loopback address (any of 127/8, ::1) keeps the operator's powers.
    for name in ("localhost", "LocalHost.", "table.localhost", "127.0.0.2", "[::1]"):
        async with as_host(running, name) as local:
            assert await operator_powers(local, eid), name
    async with running.client(local_address="127.0.0.2") as other_loopback:
        assert await operator_powers(other_loopback, eid)
    # Without Origin (not a browser), a rebound Host is no operator either.
    async with as_host(running, "rebound.example", origin=None) as tool:
        assert not await operator_powers(tool, eid)


async def test_the_public_name_keeps_the_operators_powers(make_server: MakeServer) -> None:
    running: Running = await make_server(
        ServerConfig(port=0, public_url="https://tables.example.org/zk/")
    )
    async with as_host(running, "tables.example.org", origin="https://tables.example.org") as gm:
        eid = (await gm.create_encounter("Home", "tavern", creatures()))["encounter"]
        assert await operator_powers(gm, eid)
    async with as_host(running, "tables.example.org.evil.example") as page:
        assert not await operator_powers(page, eid)
        assert (await refused(page.encounter_links(eid))).name == "gm_key_required"


# -- 3. unfinished handshakes -------------------------------------------------------------------


HALF = b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"  # never finished


async def half_open(port: int, count: int) -> list[trio.SocketStream]:
    """``count`` connections from 127.0.0.1, each having sent part of a request."""
    streams = []
    for _ in range(count):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(HALF)
        streams.append(stream)
    return streams


async def outcome(stream: trio.SocketStream) -> tuple[bytes, float]:
    """Everything the server sends on ``stream`` until it closes it, and when it did."""
    data = b""
    async with stream:
        while chunk := await stream.receive_some():
            data += chunk
    return data, trio.current_time()


async def outcomes(streams: list[trio.SocketStream]) -> list[tuple[bytes, float]]:
    found: list[tuple[bytes, float]] = []

    async def one(stream: trio.SocketStream) -> None:
        found.append(await outcome(stream))

    async with trio.open_nursery() as nursery:
        for stream in streams:
            nursery.start_soon(one, stream)
    return found


TOO_MANY = b"HTTP/1.1 429 Too Many Requests\r\n"


async def test_unfinished_handshakes_are_counted_per_address_and_closed_at_the_deadline(
    make_server: MakeServer,
) -> None:
    limits = Limits(max_handshakes_per_ip=4, handshake_timeout_seconds=1)
    running: Running = await make_server(ServerConfig(port=0, limits=limits))
    port = running.server.port
    assert port is not None
    with trio.fail_after(deadline(8)):
        started = trio.current_time()
        streams = await half_open(port, 40)
        # Another address still gets in, and plays, while they hang.
        async with running.client(local_address="127.0.0.2") as other:
            assert (await other.create_encounter("Still open", "tavern", creatures()))["encounter"]
        found = await outcomes(streams)
    refusals = [data for data, _ in found if data]
    closed = [when - started for data, when in found if not data]
    # Four were let in to finish their request; the others were answered at once.
    assert len(refusals) == 36 and len(closed) == 4
    assert all(data.startswith(TOO_MANY) for data in refusals)
    assert refusals[0].endswith(b"\r\n\r\nToo many unfinished requests from your address.\n")
    # The four were closed without an answer once the 1 s deadline passed, not before.
    assert all(seconds >= 1.0 for seconds in closed), closed
    assert running.server.metrics.handshakes_refused["too_many_handshakes"] == 36
    # Nothing is left counted: the address gets in again at once.
    listener = running.server._listener
    assert listener is not None and listener.pending == {}
    async with running.client() as again:
        assert again.welcome is not None


async def test_a_trusted_proxy_is_not_held_to_the_count_of_unfinished_handshakes(
    make_server: MakeServer,
) -> None:
    limits = Limits(max_handshakes_per_ip=2, handshake_timeout_seconds=1)
    running: Running = await make_server(
        ServerConfig(port=0, limits=limits, trusted_proxies=["127.0.0.1"])
    )
    port = running.server.port
    assert port is not None
    with trio.fail_after(deadline(8)):
        started = trio.current_time()
        found = await outcomes(await half_open(port, 6))
    assert [data for data, _ in found] == [b""] * 6  # none refused; all closed at the deadline
    assert all(when - started >= 1.0 for _, when in found)


async def test_the_handshake_settings_are_bounded() -> None:
    for wrong in ({"handshake_timeout_seconds": 0.5}, {"handshake_timeout_seconds": 61}):
        with pytest.raises(ValueError, match="a number of seconds from 1 to 60"):
            Limits(**wrong)
    with pytest.raises(ValueError, match="a whole number, 1 or more"):
        Limits(max_handshakes_per_ip=0)
