"""The server's log lines (``_log.configure_logging``) and the client's address behind
a reverse proxy (``_connection.client_address``), as plain functions."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
import trio

from zonekeep.server import ServerConfig, ZonekeepServer, _log
from zonekeep.server._connection import ForwardedError, client_address, parse_networks

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    quiet = {name: logging.getLogger(name).level for name in _log.QUIET}
    yield
    _log.unconfigure_logging()
    root.setLevel(level)
    for name, old in quiet.items():
        logging.getLogger(name).setLevel(old)


def ours() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if isinstance(h, _log._Handler)]


def test_text_lines(restore_logging: None) -> None:
    buffer = io.StringIO()
    _log.configure_logging("info", "text", stream=buffer)
    log = logging.getLogger("zonekeep.test")
    log.info("nobody in particular")
    client = _log.client_var.set("203.0.113.7")
    encounter = _log.encounter_var.set("e1-ab12")
    try:
        log.info("joined as player %s", "alice")
        log.debug("not shown at info")
        log.warning("a name with a newline\nFAKE 2026 INFO forged line")
        log.info("named by the call", extra={"encounter": "e9-ffff"})
    finally:
        _log.encounter_var.reset(encounter)
        _log.client_var.reset(client)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert re.fullmatch(rf"{TIME} INFO zonekeep\.test nobody in particular", lines[0])
    assert re.fullmatch(
        rf"{TIME} INFO zonekeep\.test client=203\.0\.113\.7 encounter=e1-ab12 "
        r"joined as player alice",
        lines[1],
    )
    # A newline in a message cannot start a line of its own.
    assert lines[2].endswith(r"a name with a newline\nFAKE 2026 INFO forged line")
    assert " WARNING " in lines[2]
    assert "encounter=e9-ffff named by the call" in lines[3]


def test_json_lines_and_tracebacks(restore_logging: None) -> None:
    buffer = io.StringIO()
    _log.configure_logging("debug", "json", stream=buffer)
    log = logging.getLogger("zonekeep.test")
    token = _log.client_var.set("2001:db8::1")
    try:
        log.debug("details")
        try:
            raise ValueError("bad thing")
        except ValueError:
            log.exception("it failed")
    finally:
        _log.client_var.reset(token)
    first, second = (json.loads(line) for line in buffer.getvalue().splitlines())
    assert first == {
        "time": first["time"],
        "level": "DEBUG",
        "logger": "zonekeep.test",
        "message": "details",
        "encounter": None,
        "client": "2001:db8::1",
    }
    assert re.fullmatch(TIME, first["time"])
    assert second["level"] == "ERROR"
    assert second["message"] == "it failed"
    assert second["traceback"].startswith("Traceback (most recent call last):")
    assert "ValueError: bad thing" in second["traceback"]


def test_configure_is_idempotent_and_changes_level_and_format(restore_logging: None) -> None:
    first = io.StringIO()
    _log.configure_logging("warning", "text", stream=first)
    _log.configure_logging("warning", "text")
    assert len(ours()) == 1
    log = logging.getLogger("zonekeep.test")
    log.info("hidden")
    log.warning("shown")
    _log.configure_logging("info", "json")  # a reload: same handler, same stream
    assert len(ours()) == 1
    log.info("now shown")
    lines = first.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].endswith("WARNING zonekeep.test shown")
    assert json.loads(lines[1])["message"] == "now shown"
    # websockets would log every frame (tokens) at DEBUG: never below INFO.
    _log.configure_logging("debug", "text")
    assert not logging.getLogger("websockets.server").isEnabledFor(logging.DEBUG)
    assert logging.getLogger("zonekeep.test").isEnabledFor(logging.DEBUG)


@pytest.mark.parametrize(("level", "fmt"), [("verbose", "text"), ("info", "xml")])
def test_configure_refuses_unknown_values(level: str, fmt: str) -> None:
    with pytest.raises(ValueError, match="must be"):
        _log.configure_logging(level, fmt)  # type: ignore[arg-type]
    assert not ours()


async def test_tasks_inherit_the_client_and_encounter() -> None:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.addFilter(_log.ContextFilter())
    handler.setFormatter(_log.TextFormatter())
    log = logging.getLogger("zonekeep.test.tasks")
    log.addHandler(handler)
    log.setLevel(logging.INFO)

    async def connection(address: str) -> None:
        _log.client_var.set(address)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(room, f"e-{address[-1]}")
        log.info("back in the connection")

    async def room(eid: str) -> None:
        _log.encounter_var.set(eid)
        log.info("in the room")

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection, "192.0.2.1")
            nursery.start_soon(connection, "192.0.2.2")
    finally:
        log.removeHandler(handler)
    lines = sorted(line.split(" ", 2)[2] for line in buffer.getvalue().splitlines())
    assert lines == [
        "zonekeep.test.tasks client=192.0.2.1 back in the connection",
        "zonekeep.test.tasks client=192.0.2.1 encounter=e-1 in the room",
        "zonekeep.test.tasks client=192.0.2.2 back in the connection",
        "zonekeep.test.tasks client=192.0.2.2 encounter=e-2 in the room",
    ]
    assert _log.client_var.get() is None


# -- the client's address -----------------------------------------------------------------------

TRUSTED = parse_networks(["10.0.0.0/8", "192.168.1.1", "fd00::/8"])


@pytest.mark.parametrize(
    ("peer", "headers", "expected"),
    [
        # No header, or a peer that is not trusted: the peer.
        ("10.0.0.5", [], "10.0.0.5"),
        ("198.51.100.3", ["203.0.113.7"], "198.51.100.3"),
        # A trusted peer: the rightmost untrusted address.
        ("10.0.0.5", ["203.0.113.7"], "203.0.113.7"),
        ("10.0.0.5", ["6.6.6.6, 203.0.113.7, 192.168.1.1"], "203.0.113.7"),
        ("10.0.0.5", ["6.6.6.6", "203.0.113.7,10.2.3.4"], "203.0.113.7"),
        # Every one trusted: the leftmost.
        ("10.0.0.5", ["10.1.1.1, 192.168.1.1"], "10.1.1.1"),
        # IPv6, and IPv4 mapped into IPv6.
        ("fd00::1", [" 2001:db8::7 "], "2001:db8::7"),
        ("::ffff:10.0.0.5", ["::ffff:203.0.113.8"], "203.0.113.8"),
        # Malformed to the left of the client does not matter.
        ("10.0.0.5", ["garbage, 203.0.113.7"], "203.0.113.7"),
        # A port some proxies append, an IPv6 address in brackets.
        ("10.0.0.5", ["203.0.113.7:4711"], "203.0.113.7"),
        ("10.0.0.5", ["[2001:db8::7]"], "2001:db8::7"),
        ("10.0.0.5", ["[2001:db8::7]:443, 10.0.0.9"], "2001:db8::7"),
        # However long the list, the client is the first untrusted one from the right.
        ("10.0.0.5", [", ".join(["198.51.100.1"] * 500 + ["203.0.113.7"])], "203.0.113.7"),
        ("10.0.0.5", [", ".join(["garbage"] * 200 + ["203.0.113.7", "10.0.0.9"])], "203.0.113.7"),
        # Not a socket.
        ("?", ["203.0.113.7"], "?"),
    ],
)
def test_client_address(peer: str, headers: list[str], expected: str) -> None:
    assert client_address(peer, headers, TRUSTED) == expected


def test_client_address_with_no_trusted_proxy() -> None:
    assert client_address("127.0.0.1", ["203.0.113.7"], ()) == "127.0.0.1"


@pytest.mark.parametrize(
    "headers",
    [
        # An entry that is not an address before the client's: no client named.
        ["garbage"],
        ["203.0.113.7, garbage"],
        ["203.0.113.7, unknown, 10.0.0.9"],
        ["[2001:db8::7"],
        ["203.0.113.7:port"],
        ["[203.0.113.7]"],
        [""],
        [",,,"],
        ["\x00\xff"],
        # More trusted proxies in a row than are ever read.
        [", ".join(["10.0.0.9"] * 500)],
        [", ".join(["203.0.113.7"] + ["10.0.0.9"] * 32)],
    ],
)
def test_a_header_naming_no_client_never_falls_back_to_the_proxy(headers: list[str]) -> None:
    with pytest.raises(ForwardedError):
        client_address("10.0.0.5", headers, TRUSTED)
    # The same header from an untrusted peer is not read at all.
    assert client_address("198.51.100.3", headers, TRUSTED) == "198.51.100.3"


def test_up_to_32_trusted_proxies_are_read() -> None:
    chain = ", ".join(["203.0.113.7"] + ["10.0.0.9"] * 31)
    assert client_address("10.0.0.5", [chain], TRUSTED) == "203.0.113.7"
    assert client_address("10.0.0.5", [", ".join(["10.0.0.8"] * 32)], TRUSTED) == "10.0.0.8"


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    assert [str(n) for n in parse_networks(["127.0.0.1", " 10.0.0.0/8", "::1"])] == [
        "127.0.0.1/32",
        "10.0.0.0/8",
        "::1/128",
    ]
    with pytest.raises(ValueError, match="'nginx' is not an IP address or network"):
        parse_networks(["nginx"])
    # The config refuses it before any server is built.
    with pytest.raises(ValueError, match="trusted_proxies must be a list of IP addresses"):
        ZonekeepServer(ServerConfig(trusted_proxies=("127.0.0.1", "localhost")))
