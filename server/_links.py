"""The addresses a server prints: its websocket URL and web-table links.

Built from ``public_url`` when the operator set one (the address players reach the
server at through a reverse proxy: ``https://tables.example.org/zk/``), else from the
address the server listens on. ``https`` gives ``wss`` for the websocket and ``http``
gives ``ws``; a path in ``public_url`` is the prefix the proxy maps to the server's
``/``, so the websocket is ``<public_url>ws`` and the web table ``<public_url>table/``.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import attrs

_WEBSOCKET_SCHEME = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
_PAGE_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}


class PublicUrlError(ValueError):
    """``public_url`` is not an absolute http(s) URL."""


@attrs.frozen
class Links:
    """Where clients reach a server."""

    #: The websocket URL (``wss://tables.example.org/zk/ws``).
    websocket: str
    #: The web table's page (``https://tables.example.org/zk/table/``).
    web_table: str

    def table_link(self, encounter: str, token: str) -> str:
        """The web-table link that opens ``encounter`` with ``token``."""
        return (
            f"{self.web_table}#encounter={quote(encounter, safe='')}&token={quote(token, safe='')}"
        )


def network_address() -> str | None:
    """This machine's IPv4 address on its network (the one its default route leaves
    from), or None when it has none besides the loopback. No packet is sent: connecting
    a UDP socket only picks the route."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    if address.startswith("127.") or address == "0.0.0.0":
        return None
    return address


def listen_host(host: str) -> str:
    """``host`` as it goes in a URL: IPv6 addresses in brackets. The wildcard addresses
    (``0.0.0.0``, ``::``, empty) are no place to connect to: this machine's address on
    its network stands for them (a phone on the same network reaches it), else its
    name."""
    if host in ("", "0.0.0.0", "::"):
        host = network_address() or socket.gethostname() or "localhost"
    return f"[{host}]" if ":" in host else host


def only_this_machine(public_url: str | None, host: str) -> bool:
    """Whether the links name an address only the server's own machine can open (no
    ``public_url``, listening on a loopback address)."""
    if public_url:
        return False
    return host in ("localhost", "::1") or host.startswith("127.")


def listen_address(host: str, port: int) -> str:
    """``host:port`` as the server listens (``[::1]:8765``), for its banner."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listening_links(host: str, port: int) -> Links:
    """The links for the address the server listens on (plain ``ws``/``http``)."""
    base = f"{listen_host(host)}:{port}"
    return Links(websocket=f"ws://{base}/ws", web_table=f"http://{base}/table/")


def public_links(public_url: str) -> Links:
    """The links under ``public_url``; :class:`PublicUrlError` if it is not an absolute
    ``http(s)://`` (or ``ws(s)://``) URL without a query or fragment."""
    parts = urlsplit(public_url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _WEBSOCKET_SCHEME or not parts.netloc:
        raise PublicUrlError(
            f"public_url must be an absolute https:// or http:// URL, not {public_url!r}"
        )
    if parts.query or parts.fragment:
        raise PublicUrlError(f"public_url may not have a query or a fragment: {public_url!r}")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"

    def at(new_scheme: str, tail: str) -> str:
        return urlunsplit((new_scheme, parts.netloc, path + tail, "", ""))

    return Links(
        websocket=at(_WEBSOCKET_SCHEME[scheme], "ws"),
        web_table=at(_PAGE_SCHEME[scheme], "table/"),
    )


def server_links(public_url: str | None, host: str, port: int) -> Links:
    """The links players use: under ``public_url`` when set, else the listening address."""
    if public_url:
        return public_links(public_url)
    return listening_links(host, port)


# -- the tokens ``zonekeep serve --example`` printed ------------------------------------------

#: The file in the data directory that keeps the tokens ``serve --example`` printed.
EXAMPLE_TOKENS_FILE = "example-tokens.json"


@attrs.frozen
class ExampleTokens:
    """The tokens ``zonekeep serve --example`` printed for one encounter.

    The store keeps only tokens' hashes, so the operator's command keeps the tokens it
    showed in a file of its own (``example-tokens.json`` in the data directory, readable
    by its owner only): a restart prints the same links, and the GM and the players who
    hold them keep their seats. Tokens end only when the GM takes them back.
    """

    gm: str
    seats: dict[str, str] = attrs.field(factory=dict)
    spectator: str | None = None


def load_example_tokens(data_dir: Path, encounter: str) -> ExampleTokens | None:
    """The tokens kept for ``encounter``, or None (no file, none kept, or unreadable)."""
    try:
        kept = json.loads((data_dir / EXAMPLE_TOKENS_FILE).read_text("utf-8"))
        entry = kept[encounter]
        seats = entry.get("seats", {})
        spectator = entry.get("spectator")
        if not (
            isinstance(entry["gm"], str)
            and isinstance(seats, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in seats.items())
            and (spectator is None or isinstance(spectator, str))
        ):
            return None
        return ExampleTokens(entry["gm"], dict(seats), spectator)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save_example_tokens(data_dir: Path, encounter: str, tokens: ExampleTokens) -> None:
    """Keep ``tokens`` for ``encounter`` (the file replaced whole, mode 0600)."""
    path = data_dir / EXAMPLE_TOKENS_FILE
    try:
        kept = json.loads(path.read_text("utf-8"))
        if not isinstance(kept, dict):
            kept = {}
    except (OSError, ValueError):
        kept = {}
    kept[encounter] = attrs.asdict(tokens)
    data_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(kept, out, indent=1, sort_keys=True)
    os.replace(partial, path)
