"""How a server runs: the operator's configuration and its limits (no I/O but reading
the config file and the secret files it names).

:class:`Limits` is the one definition of the limits: its announced part (the
``limits`` object of the ``hello`` result) is the protocol's
:class:`zonekeep.protocol.Limits`, built from it by :meth:`Limits.announced`, and the
defaults of that part are the protocol's :data:`~zonekeep.protocol.DEFAULT_LIMITS`.

:class:`ServerConfig` and :class:`Limits` are the single source of the settings: the
``#:`` comment above a field is its documentation (docs/configuration.md is generated
from them by ``_config_doc``), its type and validator are what the loader checks.
:func:`load_settings` reads them, in this order, each over the one before: the
defaults, a TOML file (``[server]`` and ``[limits]``), ``ZONEKEEP_<SECTION>_<KEY>``
environment variables, then command-line flags. It uses a cattrs converter whose
hooks accept only the right types (TOML ``"fast"`` is not a number, ``8765.0`` is not
a port) and run each field's validator, so every problem is found in one pass and
reported with its key, its value and what was expected.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import math
import os
import re
import tomllib
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import urlsplit, urlunsplit

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, override

from zonekeep import protocol
from zonekeep.protocol import DEFAULT_LIMITS

from ._bundled import bundled_dirs

VERSION = "0.1.0"


def default_data_dir() -> Path:
    """Where encounters are kept unless the operator says otherwise:
    ``$XDG_DATA_HOME/zonekeep``, else ``~/.local/share/zonekeep``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "zonekeep"


def default_arena_dirs() -> tuple[Path, ...]:
    """Where bundled arenas are looked up: those installed with the package
    (``zonekeep/server/examples/arenas``), then ``examples/arenas`` of a checkout."""
    return bundled_dirs("arenas")


class InvalidSetting(ValueError):
    """A setting's value is not what it must be: ``expected`` says what it must be
    (``"a number, 0 or more"``), ``name`` is the field when known."""

    def __init__(self, value: object, expected: str, name: str | None = None) -> None:
        self.value = value
        self.expected = expected
        self.name = name
        what = f"{name} must be" if name else "expected"
        super().__init__(f"{what} {expected}, not {value!r}")


@attrs.frozen
class _Check:
    """An attrs validator with a description of what it accepts (``expected``, shown in
    errors and in docs/configuration.md)."""

    expected: str
    test: Callable[[Any], bool]

    def __call__(self, _obj: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not self.test(value):
            raise InvalidSetting(value, self.expected, attribute.name)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


def _url(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _networks(value: object) -> bool:
    try:
        for item in value:  # type: ignore[attr-defined]
            ipaddress.ip_network(item, strict=False)
    except (TypeError, ValueError):
        return False
    return True


_COUNT = _Check("a whole number, 0 or more", _is_count)
_AMOUNT = _Check("a number, 0 or more", lambda v: _is_number(v) and v >= 0)
_SECONDS = _Check("a number of seconds, 0 or more", lambda v: _is_number(v) and v >= 0)
_DAYS = _Check(
    "a number of days, 0 or more, or none", lambda v: v is None or (_is_number(v) and v >= 0)
)
_POOL = _Check("a whole number, 1 or more", lambda v: type(v) is int and v >= 1)
_PORT = _Check("a port number from 0 to 65535", lambda v: type(v) is int and 0 <= v <= 65535)
_REACTION = _Check(
    "a number from 5 to 600", lambda v: v is None or (_is_number(v) and 5 <= v <= 600)
)
_PUBLIC_URL = _Check("an http:// or https:// URL with a host", _url)
_NODE_ID = _Check(
    "1 to 64 letters, digits, '.', '_' or '-'",
    lambda v: (
        v is None or (isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,64}", v) is not None)
    ),
)
_LEASE = _Check("a number of seconds from 1 to 300", lambda v: _is_number(v) and 1 <= v <= 300)
_PROXIES = _Check('a list of IP addresses or networks ("10.0.0.0/8")', _networks)
_HOST = _Check("a host name or address", lambda v: isinstance(v, str) and bool(v.strip()))
_HANDSHAKE = _Check("a number of seconds from 1 to 60", lambda v: _is_number(v) and 1 <= v <= 60)

#: The schemes of a PostgreSQL store's URL (libpq's).
POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres_url(value: object) -> bool:
    """Whether ``value`` names a PostgreSQL store: a ``postgresql://`` (or ``postgres://``)
    URL. Its host may be empty (libpq's default: the local socket)."""
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        return False
    return parts.scheme in POSTGRES_SCHEMES and value.startswith(parts.scheme + "://")


def mask_url(value: str) -> str:
    """``value`` with the password of a URL masked (in its user part, or a ``password=``
    parameter): what may be shown or logged of a store's URL."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return MASK if "@" in value or "password" in value else value
    netloc, query = parts.netloc, parts.query
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":" + MASK
        netloc = f"{user}@{host}"
    if "password" in query.lower():
        query = "&".join(
            f"{item.split('=', 1)[0]}={MASK}" if item.lower().startswith("password") else item
            for item in query.split("&")
        )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _plugin_tables(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, Mapping) and all(isinstance(n, str) for n in v)
        for k, v in value.items()
    )


_PLUGIN_SETTINGS = _Check("a table per plugin name, each of its settings", _plugin_tables)

_STORE = _Check(
    'one of "sqlite", "memory", or a postgresql:// URL',
    lambda v: v in ("sqlite", "memory") or is_postgres_url(v),
)


@attrs.frozen
class Limits:
    """The limits in force; documented in SPEC.md ("Limits"). Every field also in
    :class:`zonekeep.protocol.Limits` is announced in the ``hello`` result, with the
    protocol's default; the others (abuse, encounters per server) are the server's own.
    The seconds and the rate are floats (announced as ``20.0``, not ``20``)."""

    #: The longest message a client may send, in UTF-8 bytes: a longer one is refused
    #: (``message_too_large``); one over 4 times this closes the connection (1009).
    max_message_bytes: int = attrs.field(default=DEFAULT_LIMITS.max_message_bytes, validator=_COUNT)
    #: Messages a connection may send per second on average (a token bucket refilled
    #: at this rate); past it, ``rate_limited``.
    rate_per_second: float = attrs.field(
        default=float(DEFAULT_LIMITS.rate_per_second), validator=_AMOUNT
    )
    #: The token bucket's size: up to this many messages at once.
    rate_burst: int = attrs.field(default=DEFAULT_LIMITS.rate_burst, validator=_COUNT)
    #: More refused messages than this within ``abuse_window_seconds`` close the
    #: connection (1008, ``rate limit abuse``).
    abuse_refusals: int = attrs.field(default=40, validator=_COUNT)
    #: The window, in seconds, over which ``abuse_refusals`` are counted.
    abuse_window_seconds: float = attrs.field(default=10.0, validator=_SECONDS)
    #: GM and player connections joined to one encounter (spectators are counted apart);
    #: another ``join`` is refused with ``too_many_connections``.
    max_connections_per_encounter: int = attrs.field(
        default=DEFAULT_LIMITS.max_connections_per_encounter, validator=_COUNT
    )
    #: Seconds of silence after which the server pings a connection; one that does not
    #: answer within as long is closed (1011). 0 turns pings off.
    ping_interval_seconds: float = attrs.field(
        default=float(DEFAULT_LIMITS.ping_interval_seconds), validator=_SECONDS
    )
    #: Seconds a connection may send nothing before it is closed (4001).
    idle_timeout_seconds: float = attrs.field(
        default=float(DEFAULT_LIMITS.idle_timeout_seconds), validator=_SECONDS
    )
    #: Messages waiting to be sent to one connection; a client that stops reading fills
    #: it and is closed (4000), without slowing anyone else.
    outgoing_queue: int = attrs.field(default=DEFAULT_LIMITS.outgoing_queue, validator=_COUNT)
    #: Encounters not yet ended on the server (ended ones free their slot at once).
    max_encounters: int = attrs.field(default=1000, validator=_COUNT)
    #: Per creator (the server key used, or the client's IP address without one): the
    #: encounters created in the last hour, and those created and not yet ended.
    encounters_per_hour: int = attrs.field(default=60, validator=_COUNT)
    #: Per creator: the encounters created and not yet ended.
    open_encounters: int = attrs.field(default=10, validator=_COUNT)
    #: Connections joined to one encounter with the same token (GM, seat or link).
    max_connections_per_token: int = attrs.field(default=4, validator=_COUNT)
    #: Spectator connections of one encounter; counted apart from
    #: ``max_connections_per_encounter`` (the GM's and players'), so spectators can never
    #: take the GM's or a seat's place.
    max_spectators_per_encounter: int = attrs.field(default=16, validator=_COUNT)
    #: Open websocket connections from one IP address (more are refused with HTTP 429).
    max_connections_per_ip: int = attrs.field(default=64, validator=_COUNT)
    #: Connections from one IP address whose HTTP request is not read yet (a handshake
    #: under way): another one is answered HTTP 429 and closed before anything of it is
    #: read. A trusted proxy (``trusted_proxies``), which sends whole requests, is not
    #: held to it.
    max_handshakes_per_ip: int = attrs.field(default=16, validator=_POOL)
    #: Seconds a connection gets to send its whole HTTP request and be answered (the
    #: opening handshake), from 1 to 60; past it, it is closed without an answer.
    handshake_timeout_seconds: float = attrs.field(default=10.0, validator=_HANDSHAKE)
    #: Bytes of snapshots and replayed events one connection may be sent, refilled at
    #: ``reply_bytes_per_second`` (past it: ``rate_limited`` with the seconds to wait).
    reply_bytes_burst: int = attrs.field(default=4_000_000, validator=_COUNT)
    #: Bytes a second at which ``reply_bytes_burst`` refills.
    reply_bytes_per_second: float = attrs.field(default=200_000.0, validator=_AMOUNT)
    #: The largest map image ``POST /images`` takes, in bytes (its Content-Length; a
    #: bigger one is answered 413 before any of it is read).
    max_image_bytes: int = attrs.field(default=10_000_000, validator=_COUNT)
    #: The most pixels (width times height) of a map image, read from its header before
    #: anything is decoded (decompression bombs); at most 16384 on a side besides.
    max_image_pixels: int = attrs.field(default=25_000_000, validator=_COUNT)
    #: Seconds a client gets to send the whole body of a ``POST`` (1 to 60).
    upload_timeout_seconds: float = attrs.field(default=30.0, validator=_HANDSHAKE)
    #: Per GM key (or the operator's): bytes of map images stored, counted as stored
    #: (re-encoded); past it, ``POST /images`` answers 413 ``quota_exceeded``.
    image_bytes_per_key: int = attrs.field(default=100_000_000, validator=_COUNT)
    #: Per GM key (or the operator's): arenas in the server's library (``save_arena``).
    arenas_per_key: int = attrs.field(default=200, validator=_COUNT)
    #: The longest table chat message (``chat``), in characters.
    chat_max_chars: int = attrs.field(default=DEFAULT_LIMITS.chat_max_chars, validator=_COUNT)
    #: ``chat`` and ``roll`` requests one seat (the GM, or one player, over all its
    #: connections) may send per second on average (a token bucket refilled at this rate);
    #: past it, ``rate_limited``. Every one is an event stored in the encounter's log.
    table_rate_per_second: float = attrs.field(
        default=DEFAULT_LIMITS.table_rate_per_second, validator=_AMOUNT
    )
    #: The size of that bucket: up to this many ``chat`` and ``roll`` requests at once.
    table_rate_burst: int = attrs.field(default=DEFAULT_LIMITS.table_rate_burst, validator=_COUNT)

    def announced(self, reaction_seconds: float) -> protocol.Limits:
        """The limits as the ``hello`` result announces them, with the decision time
        (``reaction_seconds``) that new encounters get."""
        return protocol.Limits(
            max_message_bytes=self.max_message_bytes,
            rate_per_second=self.rate_per_second,
            rate_burst=self.rate_burst,
            max_connections_per_encounter=self.max_connections_per_encounter,
            ping_interval_seconds=self.ping_interval_seconds,
            idle_timeout_seconds=self.idle_timeout_seconds,
            outgoing_queue=self.outgoing_queue,
            reaction_seconds=reaction_seconds,
            abuse_refusals=self.abuse_refusals,
            abuse_window_seconds=self.abuse_window_seconds,
            max_connections_per_token=self.max_connections_per_token,
            max_spectators_per_encounter=self.max_spectators_per_encounter,
            reply_bytes_burst=self.reply_bytes_burst,
            reply_bytes_per_second=self.reply_bytes_per_second,
            chat_max_chars=self.chat_max_chars,
            table_rate_per_second=self.table_rate_per_second,
            table_rate_burst=self.table_rate_burst,
        )


def _names(value: Iterable[str]) -> tuple[str, ...]:
    """Plugin names as a tuple; a single string is refused (it would become letters)."""
    if isinstance(value, str):
        raise TypeError(f"plugin names must be a list of strings, not the string {value!r}")
    return tuple(value)


def _origins(value: Iterable[str] | None) -> tuple[str, ...] | None:
    """Allowed origins as a tuple (``None`` stays: the default); a single string is refused."""
    if value is None:
        return None
    if isinstance(value, str):
        raise TypeError(f"allowed_origins must be a list of strings, not the string {value!r}")
    return tuple(value)


def _optional_path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


@attrs.frozen
class ServerConfig:
    """How a server runs. ``server_key``, when set, is needed to create encounters."""

    #: The address to listen on: ``"127.0.0.1"`` (this machine only), ``"0.0.0.0"``
    #: (every IPv4 address), ``"::"``.
    host: str = attrs.field(default="127.0.0.1", validator=_HOST)
    #: The port to listen on; 0 picks a free one.
    port: int = attrs.field(default=8765, validator=_PORT)
    #: When set, ``create_encounter`` needs this key (besides the GM keys). Prefer
    #: ``server_key_file`` or the environment to a flag or the config file.
    server_key: str | None = None
    limits: Limits = attrs.field(factory=Limits)
    #: Folders where arenas are found by name (``create_encounter``'s ``arena``); the
    #: first holding a name wins.
    arena_dirs: tuple[Path, ...] = attrs.field(factory=default_arena_dirs)
    #: Folders of compendium files (``*.json``, docs/compendium.md) added to the SRD 5.1
    #: creatures of the built-in plugin ``zonekeep.srd``; each file's ``name`` prefixes its entries' ids, and a name
    #: declared twice stops the server from starting.
    compendium_dirs: tuple[Path, ...] = ()
    #: The decision time (seconds) new encounters get unless their options say: 5 to 600
    #: (docs/rules.md, "Rulings"), as ``options.reaction_seconds``; ``None``: the rules' default.
    reaction_seconds: float | None = attrs.field(default=None, validator=_REACTION)
    #: ``"sqlite"`` (durable, the default), ``"memory"`` (lost on restart), or a
    #: PostgreSQL database's URL, ``"postgresql://user:password@host:5432/dbname"``
    #: (needs ``pip install 'zonekeep[postgresql]'``; see docs/storage.md). The URL's
    #: password is a secret: never logged, masked by ``zonekeep config show``.
    store: str = attrs.field(default="sqlite", validator=_STORE)
    #: Where the SQLite store is kept (``zonekeep.sqlite3`` in it).
    data_dir: Path = attrs.field(factory=default_data_dir, converter=Path)
    #: ``"full"``: every event durable before anyone sees it; ``"normal"``: faster, may
    #: lose the last moments on a power cut (see docs/storage.md).
    durability: Literal["full", "normal"] = "full"
    #: Connections a PostgreSQL store keeps open (at least 1), and so the most of its
    #: reads and writes run at once.
    store_pool_size: int = attrs.field(default=4, validator=_POOL)
    #: Third-party plugins to load; empty means every installed one (see ``_plugins.discover``).
    plugins_enabled: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: Plugins (third-party or built-in, such as ``"zonekeep.flanking"``) not to load.
    plugins_disabled: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: Seconds between two small garbage-collection rounds (collect what is new, then
    #: freeze it); 0 leaves CPython's own schedule. Process-wide: applied by
    #: :func:`serve_until_signalled` only (see ``_gc.py`` and docs/performance.md).
    gc_freeze_seconds: float = attrs.field(default=1.0, validator=_SECONDS)
    #: Seconds between two full collections of everything (one pause as long as a
    #: full collection of the heap; logged); 0 never.
    gc_full_seconds: float = attrs.field(default=3600.0, validator=_SECONDS)
    #: Seconds one call of a plugin's code (a hook or a command handler) may take: one
    #: over it is logged and reported to the GM (``plugin_overran``); 0 turns this off.
    #: Plugins must not block: every encounter waits while one runs (docs/plugins.md).
    plugin_call_budget_seconds: float = attrs.field(default=0.25, validator=_SECONDS)
    #: Overruns after which a third-party plugin is switched off for that encounter
    #: (``plugin_disabled``); 0 never switches one off.
    plugin_overrun_limit: int = attrs.field(default=3, validator=_COUNT)
    #: The plugins' settings for the whole server, by plugin name then setting id
    #: (docs/plugins.md, "Settings"): in the file a table per plugin,
    #: ``[server.plugin_settings.hazards]`` then ``burn_die = "1d8"``; in the environment a
    #: JSON object, ``{"hazards": {"burn_die": "1d8"}}``; as a flag ``--plugin-setting
    #: hazards.burn_die=1d8`` (repeatable; the value is read as JSON, else as text). The
    #: layers merge setting by setting. Checked against the plugins' schemas at start and
    #: by ``zonekeep config check``; new encounters get these values unless the GM's
    #: ``options.settings`` say otherwise, and keep them.
    plugin_settings: dict[str, dict[str, Any]] = attrs.field(
        factory=dict, hash=False, validator=_PLUGIN_SETTINGS
    )
    #: The URL players reach the server at from outside (``"https://dice.example.org"``),
    #: when it is not the address it listens on (a reverse proxy); its origin is allowed,
    #: and its host is, besides the loopback's names, a ``Host`` under which a loopback
    #: client keeps the operator's privileges (see :attr:`creation`).
    public_url: str | None = attrs.field(default=None, validator=_PUBLIC_URL)
    # -- several nodes on PostgreSQL (docs/scale-out.md; issue 21) --------------------------------
    #: This node's id among the nodes sharing a PostgreSQL store (unique among them;
    #: keep it across restarts). ``None``: the machine's name (up to 40 of its letters,
    #: digits, ``.``, ``_`` and ``-``; any other character a ``-``), the process id and six
    #: random hex digits, ``web1-4242-9f3c2a``: a new id at every start. Only for a
    #: PostgreSQL store; a SQLite server is one node and needs none.
    node_id: str | None = attrs.field(default=None, validator=_NODE_ID)
    #: Seconds an encounter's lease lasts unless its node renews it (every third of it):
    #: how long a crashed node's encounters wait before another node may take them
    #: (failover takes this plus one ``join``). From 1 to 300; PostgreSQL store only.
    lease_seconds: float = attrs.field(default=10.0, validator=_LEASE)
    #: The ``Origin`` values a websocket handshake may carry (``"https://host:port"``; ``"*"``
    #: for any). The default, ``None``, allows the server's own origin (the host and port it
    #: listens on or is reached at) and :attr:`public_url`'s. A handshake without ``Origin`` (a
    #: non-browser client) is always allowed; any other is refused with HTTP 403. An allowed
    #: origin opens a websocket, nothing more: a page on a name rebound to 127.0.0.1 is not
    #: the operator (see :attr:`creation`).
    allowed_origins: tuple[str, ...] | None = attrs.field(default=None, converter=_origins)
    # -- operations (docs/configuration.md; issue 15) ------------------------------------------
    #: Who may create encounters: ``"keys"`` (a GM key, or ``server_key``; with no key
    #: defined at all, a connection from loopback may, when its ``Host`` is a loopback name
    #: or address, ``localhost``, or :attr:`public_url`'s host) or ``"open"`` (anyone, held
    #: to the per-IP quotas of :class:`Limits`).
    creation: Literal["keys", "open"] = "keys"
    #: Minutes a loaded encounter stays in memory with nobody connected and no timer
    #: running, before it is unloaded (it stays in the store; the next join loads it).
    idle_unload_minutes: float = attrs.field(default=15.0, validator=_AMOUNT)
    #: Days after which an unfinished encounter nobody has joined is archived; ``None``: never.
    archive_after_days: float | None = attrs.field(default=30.0, validator=_DAYS)
    #: Days after which an archived encounter is deleted from the store; ``None``: never.
    delete_archived_after_days: float | None = attrs.field(default=None, validator=_DAYS)
    #: Peers (IP addresses or networks, ``"10.0.0.0/8"``) whose ``X-Forwarded-For`` header
    #: is believed for the client's address (a reverse proxy in front of the server): read
    #: from the right, the first address that is not a trusted proxy is the client. From
    #: such a peer, a header that names no client (an entry that is not an IP address
    #: before the client's, or more than 32 trusted proxies in a row) is refused with
    #: HTTP 400, never taken for the proxy's own address.
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), converter=_names, validator=_PROXIES)
    #: ``"debug"``, ``"info"``, ``"warning"`` or ``"error"``.
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    #: ``"text"`` (one readable line per record) or ``"json"`` (one JSON object per line).
    log_format: Literal["text", "json"] = "text"
    #: When set, ``GET /metrics`` needs ``Authorization: Bearer <metrics_token>``.
    #: Prefer ``metrics_token_file`` or the environment to the config file.
    metrics_token: str | None = None
    #: A file holding ``server_key`` (one trailing newline is dropped), read at start and
    #: on SIGHUP; for a systemd credential or a Docker secret.
    server_key_file: Path | None = attrs.field(default=None, converter=_optional_path)
    #: A file holding ``metrics_token`` (one trailing newline is dropped), read at start
    #: and on SIGHUP.
    metrics_token_file: Path | None = attrs.field(default=None, converter=_optional_path)


attrs.resolve_types(Limits)
attrs.resolve_types(ServerConfig)

SECTIONS = ("server", "limits")
#: The secrets: masked by ``zonekeep config show``, never logged, each with the key
#: of the file it may be read from.
SECRETS = {
    "server.server_key": "server.server_key_file",
    "server.metrics_token": "server.metrics_token_file",
}
MASK = "********"
_PARTNER = {**SECRETS, **{file: secret for secret, file in SECRETS.items()}}


def settings() -> Iterator[tuple[str, attrs.Attribute[Any]]]:
    """Every setting as ``("section.key", field)``, in the classes' order."""
    for field in attrs.fields(ServerConfig):
        if field.name != "limits":
            yield f"server.{field.name}", field
    for field in attrs.fields(Limits):
        yield f"limits.{field.name}", field


def env_name(key: str) -> str:
    """The environment variable of a setting: ``limits.max_encounters`` ->
    ``ZONEKEEP_LIMITS_MAX_ENCOUNTERS``."""
    return "ZONEKEEP_" + key.replace(".", "_").upper()


# -- what a SIGHUP does with each setting ----------------------------------------------------

RESTART = "needs a restart"
NEW_CONNECTIONS = "new connections"
#: When a setting changed in the config takes effect on SIGHUP; one not listed applies
#: at once (at its next use: the next join, creation, handshake, sweep or log line).
_ON_RELOAD = {
    **dict.fromkeys(
        (
            "server.host",
            "server.port",
            "server.store",
            "server.data_dir",
            "server.durability",
            "server.store_pool_size",
            "server.node_id",
            "server.lease_seconds",
            "server.plugins_enabled",
            "server.plugins_disabled",
            "server.compendium_dirs",
            "server.gc_freeze_seconds",
            "server.gc_full_seconds",
            "server.plugin_settings",
        ),
        RESTART,
    ),
    "server.reaction_seconds": "new encounters",
    **dict.fromkeys(
        (
            "limits.max_message_bytes",
            "limits.rate_per_second",
            "limits.rate_burst",
            "limits.abuse_refusals",
            "limits.abuse_window_seconds",
            "limits.ping_interval_seconds",
            "limits.idle_timeout_seconds",
            "limits.outgoing_queue",
            "limits.reply_bytes_burst",
            "limits.reply_bytes_per_second",
            "limits.max_handshakes_per_ip",
            "limits.handshake_timeout_seconds",
            "server.trusted_proxies",
        ),
        NEW_CONNECTIONS,
    ),
}


def on_reload(key: str) -> str:
    """When a changed ``key`` takes effect on SIGHUP: :data:`RESTART`,
    :data:`NEW_CONNECTIONS`, ``"new encounters"`` or ``"at once"``."""
    return _ON_RELOAD.get(key, "at once")


def flatten(config: ServerConfig) -> dict[str, Any]:
    """Every setting's value by ``"section.key"``."""
    return {
        key: getattr(config.limits if key.startswith("limits.") else config, field.name)
        for key, field in settings()
    }


def with_values(config: ServerConfig, values: Mapping[str, Any]) -> ServerConfig:
    """``config`` with the settings of ``values`` (by ``"section.key"``) changed."""
    server = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("server.")}
    limits = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("limits.")}
    return attrs.evolve(config, **server, limits=attrs.evolve(config.limits, **limits))


@attrs.frozen
class Changes:
    """What a new config changes in a running server's (see :func:`compare`)."""

    #: The config to run with: the new one, but with the settings that need a restart
    #: left as they were.
    config: ServerConfig
    #: The settings changed and now in force, by ``"section.key"``.
    applied: tuple[str, ...]
    #: The settings changed in the config that need a restart (kept as they were).
    needs_restart: tuple[str, ...]


def compare(old: ServerConfig, new: ServerConfig) -> Changes:
    """What reloading ``new`` over the running ``old`` does."""
    before, after = flatten(old), flatten(new)
    changed = [key for key in before if before[key] != after[key]]
    restart = tuple(key for key in changed if on_reload(key) == RESTART)
    applied = tuple(key for key in changed if key not in restart)
    config = with_values(new, {key: before[key] for key in restart})
    return Changes(config, applied, restart)


def describe_change(key: str, old: object, new: object) -> str:
    """A changed setting for the log; a secret's value is never shown."""
    if key in SECRETS:
        return f"{key} changed"
    return f"{key} {_show(_masked(key, _plain(old)))} -> {_show(_masked(key, _plain(new)))}"


#: Settings that are not secrets but may hold one (a password in the store's URL).
_HOLDS_SECRET = ("server.store",)


def _masked(key: str, value: object) -> object:
    """``value`` as it may be shown: a URL's password masked, for :data:`_HOLDS_SECRET`."""
    return mask_url(value) if key in _HOLDS_SECRET and isinstance(value, str) else value


def _plain(value: object) -> object:
    return (
        [str(v) if isinstance(v, Path) else v for v in value] if isinstance(value, tuple) else value
    )


# -- loading -------------------------------------------------------------------------------------


class ConfigError(ValueError):
    """A config that cannot be used: ``problems`` are its sentences, one per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@attrs.frozen
class Settings:
    """A loaded config and where each setting not at its default came from (a file's
    path, an environment variable's name, a flag)."""

    config: ServerConfig
    sources: dict[str, str] = attrs.field(factory=dict)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _show(value: object) -> str:
    """A value as the operator wrote it (TOML-like: ``"fast"``, ``5``, ``true``; a table
    inline, ``{ hazards = { burn_die = "1d8" } }``)."""
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, Mapping):
        items = [
            f"{k if _BARE_KEY.fullmatch(str(k)) else _show(str(k))} = {_show(v)}"
            for k, v in value.items()
        ]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, list | tuple) and any(isinstance(v, Mapping) for v in value):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value) if not hasattr(value, "isoformat") else str(value)


def _optional_of(t: Any) -> Any:
    """``X`` for ``X | None`` (``None`` for any other type)."""
    if get_origin(t) in (Union, types.UnionType):
        args = [a for a in get_args(t) if a is not type(None)]
        if len(args) == 1 and len(get_args(t)) == 2:
            return args[0]
    return None


def describe_type(t: Any) -> str:
    """What a value of type ``t`` is, as errors and docs say it."""
    inner = _optional_of(t)
    if inner is not None:
        return f"{describe_type(inner)}, or none"
    if get_origin(t) is Literal:
        return "one of " + ", ".join(_show(a) for a in get_args(t))
    if get_origin(t) is tuple:
        return "a list of " + {str: "strings", Path: "paths"}.get(get_args(t)[0], "values")
    return {
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        str: "a string",
        Path: "a path",
    }.get(t, getattr(t, "__name__", str(t)))


def _structure_int(value: Any, _t: Any) -> int:
    if type(value) is not int:
        raise InvalidSetting(value, "a whole number")
    return value


def _structure_float(value: Any, _t: Any) -> float:
    if not _is_number(value):
        raise InvalidSetting(value, "a number")
    return float(value)


def _structure_str(value: Any, _t: Any) -> str:
    if not isinstance(value, str):
        raise InvalidSetting(value, "a string")
    return value


def _structure_bool(value: Any, _t: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidSetting(value, "true or false")
    return value


def _structure_path(value: Any, _t: Any) -> Path:
    if isinstance(value, Path):
        return value
    if not isinstance(value, str) or not value:
        raise InvalidSetting(value, "a path")
    return Path(value).expanduser()


def _structure_tables(value: Any, _t: Any) -> dict[str, dict[str, Any]]:
    if not _plugin_tables(value):
        raise InvalidSetting(value, "a table per plugin name, each of its settings")
    return {plugin: dict(values) for plugin, values in value.items()}


def _structure_literal(value: Any, t: Any) -> Any:
    if value not in get_args(t) or isinstance(value, bool):
        raise InvalidSetting(value, describe_type(t))
    return value


def _structure_tuple(value: Any, t: Any) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise InvalidSetting(value, describe_type(t))
    item = get_args(t)[0]
    try:
        return tuple(_converter.structure(v, item) for v in value)
    except InvalidSetting:
        raise InvalidSetting(value, describe_type(t)) from None


def _structure_optional(value: Any, t: Any) -> Any:
    if value is None or value == "":
        return None
    try:
        return _converter.structure(value, _optional_of(t))
    except InvalidSetting as exc:
        raise InvalidSetting(value, f'{exc.expected} (or "" for none)') from None


def _attribute_hook(field: attrs.Attribute[Any]) -> Callable[[Any, Any], Any]:
    """Structure one field's value by its type, then run its validator, so that every
    field's problem is found (the class's ``__init__`` would stop at the first)."""

    wanted: Any = field.type

    def hook(value: Any, _t: Any) -> Any:
        result = _converter.structure(value, wanted)
        if field.validator is not None:
            try:
                field.validator(None, field, result)
            except InvalidSetting as exc:  # name the value as written (-5, not -5.0)
                raise InvalidSetting(value, exc.expected, field.name) from None
        return result

    return hook


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(float, _structure_float)
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(Path, _structure_path)
    converter.register_structure_hook_func(_is_literal, _structure_literal)
    converter.register_structure_hook_func(_is_tuple, _structure_tuple)
    converter.register_structure_hook_func(_is_optional, _structure_optional)
    converter.register_structure_hook_func(_is_dict, _structure_tables)
    return converter


def _is_literal(t: Any) -> bool:
    return get_origin(t) is Literal


def _is_dict(t: Any) -> bool:
    return get_origin(t) is dict


def _is_tuple(t: Any) -> bool:
    return get_origin(t) is tuple


def _is_optional(t: Any) -> bool:
    return _optional_of(t) is not None


_converter = _make_converter()
for _cls in (Limits, ServerConfig):
    _overrides: dict[str, Any] = {
        f.name: override(struct_hook=_attribute_hook(f)) for f in attrs.fields(_cls)
    }
    _converter.register_structure_hook(_cls, make_dict_structure_fn(_cls, _converter, **_overrides))


def _problems(exc: BaseException, path: str) -> Iterator[tuple[str, str]]:
    """``(key, sentence)`` for every problem in a cattrs validation error (a walk like
    ``cattrs.transform_error``'s, keeping the value our hooks put in the exception)."""
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            yield from _problems(inner, f"{path}.{note.name}" if path else note.name)
        for inner in without:
            yield from _problems(inner, path)
    elif isinstance(exc, ForbiddenExtraKeysError):
        for extra in sorted(exc.extra_fields):
            yield f"{path}.{extra}" if path else extra, "unknown key"
    elif isinstance(exc, InvalidSetting):
        yield path, f"{_show(exc.value)} is not {exc.expected}"
    else:
        yield path, str(exc)


def _from_env(text: str, t: Any) -> Any:
    """An environment variable's text as a value of type ``t`` where it reads as one;
    otherwise the text itself, which the converter then refuses with what it expected.
    Lists are comma-separated; ``""`` is none (or an empty list); booleans are
    ``true``/``false``."""
    inner = _optional_of(t)
    if inner is not None:
        return "" if text.strip() == "" else _from_env(text, inner)
    if get_origin(t) is tuple:
        return [item.strip() for item in text.split(",") if item.strip()]
    if get_origin(t) is dict:  # plugin_settings: a JSON object
        try:
            return json.loads(text)
        except ValueError:
            return text
    try:
        if t is int:
            return int(text.strip())
        if t is float:
            return float(text.strip())
    except ValueError:
        return text
    if t is bool and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    return text


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""


class _Layers:
    """The raw values of the settings, each layer (file, environment, flags) over the
    ones before, with where each came from and the problems found on the way."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.problems: list[str] = []
        #: Values a higher layer overrode, with their source: checked all the same.
        self.shadowed: list[tuple[str, Any, str]] = []

    def label(self, key: str) -> str:
        source = self.sources[key]
        if source.startswith(("ZONEKEEP_", "--")):
            return source
        return f"{source}: {key}"

    def add(self, layer: dict[str, Any], source: Callable[[str], str]) -> None:
        for secret, file_key in SECRETS.items():
            if layer.get(secret) not in (None, "") and layer.get(file_key) not in (None, ""):
                self.problems.append(
                    f"{source(secret)} and {source(file_key)}: set the secret or its file, not both"
                )
        for key, value in layer.items():
            below = self.values.get(key)
            if key in _MERGED and isinstance(below, Mapping) and isinstance(value, Mapping):
                value = _merged(below, value)  # setting by setting, not the whole table
                self.values.pop(key)
                del self.sources[key]
            # this layer's value wins; its secret (or file) also over a lower one's file
            # (or secret)
            for old in (key, _PARTNER.get(key)):
                if old is not None and old in self.values:
                    self.shadowed.append((old, self.values.pop(old), self.label(old)))
                    del self.sources[old]
            self.values[key] = value
            self.sources[key] = source(key)

    def check_shadowed(self) -> None:
        """Report the problems of the values a higher layer overrode (a bad port in the
        file is a problem even while an environment variable sets the port)."""
        for key, value, where in self.shadowed:
            try:
                _attribute_hook(_KEYS[key])(value, None)
            except InvalidSetting as exc:
                # never a secret's value, nor a URL's password
                shown = "its value" if key in SECRETS else _show(_masked(key, value))
                self.problems.append(f"{where}: {shown} is not {exc.expected}")

    def structure(self) -> ServerConfig | None:
        raw: dict[str, Any] = {"limits": {}}
        for key, value in self.values.items():
            section, name = key.split(".", 1)
            (raw["limits"] if section == "limits" else raw)[name] = value
        try:
            return _converter.structure(raw, ServerConfig)
        except ClassValidationError as exc:
            found = sorted(_problems(exc, ""), key=lambda p: p[0].startswith("limits."))
            for path, sentence in found:  # [server]'s, then [limits]'s
                key = path if path.startswith("limits.") else f"server.{path}"
                if key in SECRETS and " is not " in sentence:  # never repeat a secret
                    sentence = "its value" + sentence[sentence.index(" is not ") :]
                elif key in _HOLDS_SECRET and " is not " in sentence:
                    value = _masked(key, self.values.get(key))
                    sentence = _show(value) + sentence[sentence.index(" is not ") :]
                where = self.label(key) if key in self.sources else key
                self.problems.append(f"{where}: {sentence}")
            return None


_KEYS = {key: field for key, field in settings()}
#: Settings whose layers merge table by table (a flag for one plugin setting keeps the
#: file's others).
_MERGED = ("server.plugin_settings",)


def _merged(below: Mapping[str, Any], above: Mapping[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = dict(below)
    for plugin, values in above.items():
        if isinstance(values, Mapping) and isinstance(result.get(plugin), Mapping):
            result[plugin] = {**result[plugin], **values}
        else:
            result[plugin] = values
    return result


def _file_layer(path: Path, layers: _Layers) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        layers.problems.append(f"{path}: cannot read it: {exc.strerror or exc}")
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        layers.problems.append(f"{path}: {exc}")
        return {}
    layer: dict[str, Any] = {}
    for section, table in data.items():
        if section not in SECTIONS:
            layers.problems.append(
                f"{path}: [{section}]: unknown table (expected [server] or [limits])"
            )
            continue
        if not isinstance(table, dict):
            layers.problems.append(f"{path}: {section}: expected a table ([{section}])")
            continue
        for name, value in table.items():
            key = f"{section}.{name}"
            if key not in _KEYS:
                known = [k.split(".", 1)[1] for k in _KEYS if k.startswith(section + ".")]
                layers.problems.append(f"{path}: {key}: unknown key{_suggest(name, known)}")
                continue
            layer[key] = value
    return layer


def _env_layer(environ: Mapping[str, str], layers: _Layers) -> dict[str, Any]:
    names = {env_name(key): key for key in _KEYS}
    bare = {"ZONEKEEP_" + key.split(".", 1)[1].upper(): env_name(key) for key in _KEYS}
    layer: dict[str, Any] = {}
    for var in sorted(environ):
        if var in names:
            key = names[var]
            layer[key] = _from_env(environ[var], _KEYS[key].type)
        elif var.startswith(("ZONEKEEP_SERVER_", "ZONEKEEP_LIMITS_")):
            layers.problems.append(f"{var}: unknown setting{_suggest(var, names)}")
        elif var in bare:
            layers.problems.append(f"{var}: unknown setting (did you mean {bare[var]}?)")
        # other ZONEKEEP_ variables (the test suite's, a plugin's) are not settings
    return layer


def _read_secret(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def load_settings(
    path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
) -> Settings:
    """The config from the defaults, the TOML file at ``path``, the ``ZONEKEEP_``
    variables of ``environ`` and ``flags`` (by ``"section.key"``; a flag's name is
    ``--key``), each over the ones before; the secrets' files are read. Raises
    :class:`ConfigError` with every problem found."""
    layers = _Layers()
    if path is not None:
        source = str(path)
        layers.add(_file_layer(Path(path), layers), lambda key: source)
    layers.add(_env_layer(environ or {}, layers), env_name)
    if flags:
        layers.add(dict(flags), lambda key: "--" + key.split(".", 1)[1].replace("_", "-"))
    layers.check_shadowed()
    config = layers.structure()
    if config is None or layers.problems:
        raise ConfigError(layers.problems)
    for secret in SECRETS:
        if flatten(config)[secret] == MASK:  # pasted from `zonekeep config show`
            layers.problems.append(
                f"{layers.label(secret)}: {_show(MASK)} is the mask zonekeep config show "
                "prints, not a secret: give the secret itself (or its file)"
            )
    secrets: dict[str, str] = {}
    for secret, file_key in SECRETS.items():
        file = flatten(config)[file_key]
        if file is None:
            continue
        try:
            secrets[secret] = value = _read_secret(file)
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            layers.problems.append(f"{layers.label(file_key)}: cannot read {file}: {reason}")
            continue
        if not value:
            layers.problems.append(f"{layers.label(file_key)}: {file} is empty")
    if layers.problems:
        raise ConfigError(layers.problems)
    return Settings(with_values(config, secrets), dict(layers.sources))


def load_config(path: str | Path) -> ServerConfig:
    """Read a TOML config file (``[server]`` and ``[limits]`` tables), without the
    environment; :class:`ConfigError` (a ``ValueError``) lists every problem."""
    return load_settings(path).config


def to_toml(settings: Settings, *, mask: bool = True) -> str:
    """The config as a TOML file with every setting, defaults included; each one not at
    its default says where it came from. None is written ``""``, which reads back as
    none. Unless ``mask`` is false, no secret is written: a secret is a comment (its
    file's key, when it came from one, is a setting, so the file is read again), and a
    store URL's password is left out (issue 27: the output reads back as a config, and
    never with ``"********"`` for a key)."""
    values = flatten(settings.config)
    lines: list[str] = []
    for section in SECTIONS:
        if lines:
            lines.append("")
        lines.append(f"[{section}]")
        for key, value in values.items():
            if not key.startswith(section + "."):
                continue
            name = key.split(".", 1)[1]
            source = settings.sources.get(key)
            if mask and key in SECRETS and value is not None:
                file_key = SECRETS[key].split(".", 1)[1]
                why = f"read from {file_key}" if source is None else f"{source}; not shown"
                lines.append(f"# {name} = {_show(MASK)}  # {why}")
                continue
            if value is None:
                text = '""'
            elif mask and key in _HOLDS_SECRET and isinstance(value, str):
                shown = url_without_password(value)
                if shown != value:
                    source = f"{source}; " if source else ""
                    source += "password not shown: give it in ~/.pgpass or PGPASSWORD"
                text = _show(shown)
            else:
                text = _show(_plain(value))
            line = f"{name} = {text}"
            if value is None:
                source = f"none ({source})" if source else "none"
            lines.append(f"{line}  # {source}" if source else line)
    return "\n".join(lines) + "\n"


def url_without_password(value: str) -> str:
    """A store's URL without its password (in the user part, or ``password=``)."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = "&".join(
        item for item in parts.query.split("&") if not item.lower().startswith("password")
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query))
