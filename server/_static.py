"""The web table: a browser client served over plain HTTP on the server's own port.

The page refers to its files and to the websocket by relative addresses (``table.js``,
``../ws``), so it works at the site's root and under a path prefix a reverse proxy maps
to the server's ``/`` (``public_url``, docs/deploy.md).

Only the files of ``server/static`` named in :data:`FILES` are ever served, by a fixed table of names
(``/table/`` is ``index.html``): a request path never reaches the file system, so no
path can name a file outside that folder. Every other path under ``/table`` is a 404;
paths outside ``/table`` are left to the websocket handshake (clients may use any path).
Only ``GET`` is ever answered: any other method, on any path, is a 405
(:func:`method_not_allowed`).
"""

from __future__ import annotations

import http
from collections.abc import Sequence
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

#: Where the files are: ``zonekeep/server/static`` in the installed package.
STATIC_DIR = Path(__file__).resolve().parent / "static"

#: The URL prefix of the web table.
PREFIX = "/table"

#: Request path (below ``/table``) -> (file name in ``static/``, Content-Type).
FILES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/table.js": ("table.js", "text/javascript; charset=utf-8"),
    "/dice.js": ("dice.js", "text/javascript; charset=utf-8"),
    "/table.css": ("table.css", "text/css; charset=utf-8"),
    "/home.js": ("home.js", "text/javascript; charset=utf-8"),
    "/builder.js": ("builder.js", "text/javascript; charset=utf-8"),
    "/builder.css": ("builder.css", "text/css; charset=utf-8"),
    "/editor.js": ("editor.js", "text/javascript; charset=utf-8"),
    "/editor.css": ("editor.css", "text/css; charset=utf-8"),
    "/chat.js": ("chat.js", "text/javascript; charset=utf-8"),
    "/chat.css": ("chat.css", "text/css; charset=utf-8"),
}

#: The page talks to its own origin only: no third-party scripts, styles or connections.
_SECURITY_HEADERS = [
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-cache"),
]


def _response(
    status: http.HTTPStatus,
    body: bytes,
    content_type: str,
    *extra: tuple[str, str],
    connect: Sequence[str] = (),
) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body))), *extra])
    for name, value in _SECURITY_HEADERS:
        headers[name] = value
    if connect:  # several nodes: the page may follow 'moved' to the other nodes
        policy = headers["Content-Security-Policy"]
        del headers["Content-Security-Policy"]
        headers["Content-Security-Policy"] = policy.replace(
            "connect-src 'self'", "connect-src 'self' " + " ".join(connect)
        )
    return Response(status.value, status.phrase, headers, body)


def not_found() -> Response:
    """A plain-text 404."""
    return _response(http.HTTPStatus.NOT_FOUND, b"Not found.\n", "text/plain; charset=utf-8")


def method_not_allowed() -> Response:
    """A plain-text 405 naming ``GET`` as the one method allowed."""
    return _response(
        http.HTTPStatus.METHOD_NOT_ALLOWED,
        b"Only GET is allowed.\n",
        "text/plain; charset=utf-8",
        ("Allow", "GET"),
    )


def forbidden(why: str) -> Response:
    """A plain-text 403 saying ``why``."""
    return _response(http.HTTPStatus.FORBIDDEN, why.encode() + b"\n", "text/plain; charset=utf-8")


def serve_static(request: Request, connect: Sequence[str] = ()) -> Response | None:
    """Answer a GET for the web table, or ``None`` when the path is not the table's.

    ``/table`` redirects to ``table/``, relative, so that behind a reverse proxy's path
    prefix (``/zk/table``) the browser stays under the prefix; the fixed names in :data:`FILES` are served
    with their Content-Type; anything else under ``/table/`` is a 404. ``connect``: the
    websocket URLs of the other nodes, which the page may connect to (``moved``).
    """
    path = request.path.split("?", 1)[0].split("#", 1)[0]
    if request.method != "GET":
        return method_not_allowed()
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        return None
    if path == PREFIX:
        return _response(
            http.HTTPStatus.MOVED_PERMANENTLY,
            b"",
            "text/plain; charset=utf-8",
            ("Location", PREFIX.lstrip("/") + "/"),
        )
    entry = FILES.get(path[len(PREFIX) :])
    if entry is None:
        return not_found()
    name, content_type = entry
    try:
        body = (STATIC_DIR / name).read_bytes()
    except OSError:
        return not_found()
    return _response(http.HTTPStatus.OK, body, content_type, connect=connect)
