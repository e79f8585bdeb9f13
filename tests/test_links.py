"""The addresses a server prints (``server/_links.py``) and the bundled examples it finds
(``server/_bundled.py``)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from zonekeep.server._bundled import bundled_dirs, bundled_encounters, find_example
from zonekeep.server._config import default_arena_dirs
from zonekeep.server._links import (
    Links,
    PublicUrlError,
    listen_address,
    listen_host,
    network_address,
    only_this_machine,
    public_links,
    server_links,
)


def test_https_public_url_with_a_prefix_gives_wss_and_the_table_under_it() -> None:
    links = server_links("https://tables.example.org/zk/", "127.0.0.1", 8765)
    assert links == Links(
        websocket="wss://tables.example.org/zk/ws",
        web_table="https://tables.example.org/zk/table/",
    )
    assert links.table_link("e1-ab", "t0k/en+=") == (
        "https://tables.example.org/zk/table/#encounter=e1-ab&token=t0k%2Fen%2B%3D"
    )


@pytest.mark.parametrize(
    ("public_url", "websocket", "web_table"),
    [
        ("https://tables.example.org/zk", "wss://tables.example.org/zk/ws", "https://tables.example.org/zk/table/"),
        ("https://tables.example.org", "wss://tables.example.org/ws", "https://tables.example.org/table/"),
        ("http://192.0.2.1:8080/", "ws://192.0.2.1:8080/ws", "http://192.0.2.1:8080/table/"),
        ("wss://t.example.org/a/b/", "wss://t.example.org/a/b/ws", "https://t.example.org/a/b/table/"),
        ("HTTPS://T.example.org/", "wss://T.example.org/ws", "https://T.example.org/table/"),
    ],
)  # fmt: skip
def test_public_url_forms(public_url: str, websocket: str, web_table: str) -> None:
    assert public_links(public_url) == Links(websocket, web_table)


@pytest.mark.parametrize(
    "bad",
    ["tables.example.org/zk/", "ftp://x.example.org/", "https:///zk/", "https://x.org/?a=1", "https://x.org/#f"],
)  # fmt: skip
def test_a_public_url_that_is_not_an_absolute_http_url_is_refused(bad: str) -> None:
    with pytest.raises(PublicUrlError, match="public_url"):
        server_links(bad, "127.0.0.1", 8765)


def test_without_public_url_the_listening_address() -> None:
    assert server_links(None, "127.0.0.1", 9000) == Links(
        "ws://127.0.0.1:9000/ws", "http://127.0.0.1:9000/table/"
    )
    assert server_links("", "::1", 9000).websocket == "ws://[::1]:9000/ws"
    assert listen_address("::", 9000) == "[::]:9000"  # the banner says where it listens
    # ... but nobody can connect to 0.0.0.0: the links name this machine by its address
    # on the network (a phone reaches that), else by its name.
    where = network_address() or socket.gethostname()
    assert server_links(None, "0.0.0.0", 9000).websocket == f"ws://{where}:9000/ws"
    assert server_links(None, "::", 9000).web_table == f"http://{where}:9000/table/"


def test_the_network_address_is_never_the_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """No route (an offline machine) or a route through the loopback: no network
    address, so the wildcard's links fall back to the machine's name."""
    found = network_address()
    assert found is None or not found.startswith("127.")

    class Offline:
        def __init__(self, *args: object) -> None:
            pass

        def connect(self, where: object) -> None:
            raise OSError("Network is unreachable")

        def close(self) -> None:
            pass

    monkeypatch.setattr(socket, "socket", Offline)
    assert network_address() is None
    assert listen_host("0.0.0.0") == (socket.gethostname() or "localhost")


@pytest.mark.parametrize(
    ("public_url", "host", "alone"),
    [(None, "127.0.0.1", True), ("", "::1", True), (None, "localhost", True),
     (None, "0.0.0.0", False), (None, "192.0.2.7", False),
     ("https://t.example.org/", "127.0.0.1", False)],
)  # fmt: skip
def test_only_this_machine(public_url: str | None, host: str, alone: bool) -> None:
    assert only_this_machine(public_url, host) is alone


def test_the_bundled_examples_are_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {p.name for d in default_arena_dirs() for p in d.iterdir()} >= {"tavern.json"}
    assert default_arena_dirs() == bundled_dirs("arenas")
    assert sorted(bundled_encounters()) == [
        "cliffside-bandits",
        "goblin-ambush",
        "level3-tavern-hobgoblins",
        "level5-cliffside-ogre",
        "swamp-lizardfolk",
    ]
    monkeypatch.chdir(tmp_path)
    assert find_example("goblin-ambush") == bundled_encounters()["goblin-ambush"]
    assert find_example("goblin-ambush.json") == bundled_encounters()["goblin-ambush"]
    (tmp_path / "goblin-ambush.json").write_text("{}")
    assert find_example("goblin-ambush.json") == Path("goblin-ambush.json")  # a file wins
    assert find_example("nope") == Path("nope")  # reported missing by whoever reads it
    assert find_example("sub/goblin-ambush") == Path("sub/goblin-ambush")


def test_the_table_redirect_is_relative_so_it_keeps_a_proxy_prefix() -> None:
    from websockets.datastructures import Headers
    from websockets.http11 import Request

    from zonekeep.server._static import serve_static

    reply = serve_static(Request("/table", Headers()))
    assert reply is not None and reply.status_code == 301
    assert reply.headers["Location"] == "table/"  # /zk/table -> /zk/table/, / -> /table/
