"""The addresses a server prints: its websocket URL and web-table links.

Built from ``public_url`` when the operator set one (the address players reach the
server at through a reverse proxy: ``https://tables.example.org/zk/``), else from the
address the server listens on. ``https`` gives ``wss`` for the websocket and ``http``
gives ``ws``; a path in ``public_url`` is the prefix the proxy maps to the server's
``/``, so the websocket is ``<public_url>ws`` and the web table ``<public_url>table/``.
"""

from __future__ import annotations

import socket
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


def listen_host(host: str) -> str:
    """``host`` as it goes in a URL: IPv6 addresses in brackets. The wildcard addresses
    (``0.0.0.0``, ``::``, empty) are no place to connect to: this machine's name
    stands for them."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.gethostname() or "localhost"
    return f"[{host}]" if ":" in host else host


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
