"""What the web table's home asks (``table_home``, ``table_link``): the address a
player's phone can reach (``public_url``, else the address the page was opened on), a
seat link as a QR code rendered here (segno, SVG), and who may create encounters."""

from __future__ import annotations

import io
import re
from urllib.parse import quote

import segno

from ._config import ServerConfig
from ._links import server_links

#: A handshake's ``Host`` that may go in a link: a name or IPv4 address, or an IPv6
#: address in brackets, and an optional port. Anything else is not echoed back.
_HOST_HEADER = re.compile(r"(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")

_ADD_KEY = "its operator makes one with 'zonekeep gm add NAME' on the server"


def table_home_url(config: ServerConfig, host: str | None) -> str:
    """The web table's home page for a connection whose handshake named ``host``: under
    ``public_url`` when set, else at ``host`` (the address the page was opened on),
    else at the address the server listens on."""
    if config.public_url or host is None or not _HOST_HEADER.fullmatch(host):
        return server_links(config.public_url, config.host, config.port).web_table
    return f"http://{host}/table/"


def creation_rule(
    config: ServerConfig, gm: str | None, loopback: bool, keyless: bool
) -> tuple[bool, str]:
    """Whether a connection (of GM ``gm``; from the server's own machine: ``loopback``;
    on a server with no key at all: ``keyless``) may create encounters, and one sentence
    saying who may and how to get the right."""
    if gm is not None:
        return True, f"You are signed in with {gm}'s GM key: you may create encounters."
    if config.creation == "open":
        return True, "This server is open: anyone may create encounters."
    if keyless and loopback:
        return True, (
            "This server has no GM key, so its own machine (this browser) may create "
            "encounters without one. To create from another device, "
            f"{_ADD_KEY}."
        )
    if keyless:
        return False, (
            "This server has no GM key, so only its own machine may create encounters: "
            "open this page there (http://127.0.0.1 and the server's port), or "
            f"{_ADD_KEY} and you type it below."
        )
    return False, (
        "Creating encounters on this server needs a GM key: ask the server's operator "
        f"for one ({_ADD_KEY}) and type it below."
    )


def table_link(base: str, encounter: str, token: str) -> tuple[str, str]:
    """The link that opens ``encounter`` with ``token`` under the web table ``base``,
    and that link as a QR code (an SVG document, black on white)."""
    url = f"{base}#encounter={quote(encounter, safe='')}&token={quote(token, safe='')}"
    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(
        out, kind="svg", scale=4, border=4, dark="#000", light="#fff", xmldecl=False
    )
    return url, out.getvalue().decode("utf-8")
