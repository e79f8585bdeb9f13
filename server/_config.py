"""How a server runs: the operator's configuration and its limits (no I/O but reading
the config file).

:class:`Limits` is the one definition of the limits: its announced part (the
``limits`` object of the ``hello`` result) is the protocol's
:class:`zonekeep.protocol.Limits`, built from it by :meth:`Limits.announced`, and the
defaults of that part are the protocol's :data:`~zonekeep.protocol.DEFAULT_LIMITS`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import attrs

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


@attrs.frozen
class Limits:
    """The limits in force; documented in SPEC.md ("Limits"). Every field also in
    :class:`zonekeep.protocol.Limits` is announced in the ``hello`` result, with the
    protocol's default; the others (abuse, encounters per server) are the server's own.
    The seconds and the rate are floats (announced as ``20.0``, not ``20``)."""

    max_message_bytes: int = DEFAULT_LIMITS.max_message_bytes
    rate_per_second: float = float(DEFAULT_LIMITS.rate_per_second)
    rate_burst: int = DEFAULT_LIMITS.rate_burst
    abuse_refusals: int = 40
    abuse_window_seconds: float = 10.0
    max_connections_per_encounter: int = DEFAULT_LIMITS.max_connections_per_encounter
    ping_interval_seconds: float = float(DEFAULT_LIMITS.ping_interval_seconds)
    idle_timeout_seconds: float = float(DEFAULT_LIMITS.idle_timeout_seconds)
    outgoing_queue: int = DEFAULT_LIMITS.outgoing_queue
    #: Encounters not yet ended on the server (ended ones free their slot at once).
    max_encounters: int = 1000
    #: Per creator (the server key used, or the client's IP address without one): the
    #: encounters created in the last hour, and those created and not yet ended.
    encounters_per_hour: int = 60
    open_encounters: int = 10
    #: Connections joined to one encounter with the same token (GM, seat or link).
    max_connections_per_token: int = 4
    #: Spectator connections of one encounter; counted apart from
    #: ``max_connections_per_encounter`` (the GM's and players'), so spectators can never
    #: take the GM's or a seat's place.
    max_spectators_per_encounter: int = 16
    #: Open websocket connections from one IP address (more are refused with HTTP 429).
    max_connections_per_ip: int = 64
    #: Bytes of snapshots and replayed events one connection may be sent, refilled at
    #: ``reply_bytes_per_second`` (past it: ``rate_limited`` with the seconds to wait).
    reply_bytes_burst: int = 4_000_000
    reply_bytes_per_second: float = 200_000.0

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


def _not_negative(_obj: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not isinstance(value, int | float) or value < 0:
        raise TypeError(f"{attribute.name} must be a number of seconds, 0 or more (got {value!r})")


def _reaction_seconds(
    _obj: object, _attribute: attrs.Attribute[float | None], value: object
) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not 5 <= value <= 600:
        raise ValueError(f"reaction_seconds must be a number from 5 to 600, not {value!r}")


@attrs.frozen
class ServerConfig:
    """How a server runs. ``server_key``, when set, is needed to create encounters."""

    host: str = "127.0.0.1"
    port: int = 8765
    server_key: str | None = None
    limits: Limits = attrs.field(factory=Limits)
    arena_dirs: tuple[Path, ...] = attrs.field(factory=default_arena_dirs)
    #: The decision time (seconds) new encounters get unless their options say: 5 to 600
    #: (RULINGS.md), as ``options.reaction_seconds``; ``None``: the rules' default.
    reaction_seconds: float | None = attrs.field(default=None, validator=_reaction_seconds)
    #: ``"sqlite"`` (durable, the default) or ``"memory"`` (lost on restart).
    store: Literal["sqlite", "memory"] = "sqlite"
    data_dir: Path = attrs.field(factory=default_data_dir, converter=Path)
    #: ``"full"``: every event durable before anyone sees it; ``"normal"``: faster, may
    #: lose the last moments on a power cut (see docs/storage.md).
    durability: Literal["full", "normal"] = "full"
    #: Third-party plugins to load; empty means every installed one (see ``_plugins.discover``).
    plugins_enabled: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: Plugins (third-party or built-in, such as ``"zonekeep.flanking"``) not to load.
    plugins_disabled: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: Seconds between two small garbage-collection rounds (collect what is new, then
    #: freeze it); 0 leaves CPython's own schedule. Process-wide: applied by
    #: :func:`serve_until_signalled` only (see ``_gc.py`` and docs/performance.md).
    gc_freeze_seconds: float = attrs.field(default=1.0, validator=_not_negative)
    #: Seconds between two full collections of everything (one pause as long as a
    #: full collection of the heap; logged); 0 never.
    gc_full_seconds: float = attrs.field(default=3600.0, validator=_not_negative)
    #: Seconds one call of a plugin's code (a hook or a command handler) may take: one
    #: over it is logged and reported to the GM (``plugin_overran``); 0 turns this off.
    #: Plugins must not block: every encounter waits while one runs (docs/plugins.md).
    plugin_call_budget_seconds: float = attrs.field(default=0.25, validator=_not_negative)
    #: Overruns after which a third-party plugin is switched off for that encounter
    #: (``plugin_disabled``); 0 never switches one off.
    plugin_overrun_limit: int = attrs.field(default=3, validator=attrs.validators.ge(0))
    #: The URL players reach the server at from outside (``"https://dice.example.org"``),
    #: when it is not the address it listens on (a reverse proxy); its origin is allowed.
    public_url: str | None = None
    #: The ``Origin`` values a websocket handshake may carry (``"https://host:port"``; ``"*"``
    #: for any). ``None`` (the default): the server's own origin (the host and port it listens
    #: on or is reached at) and :attr:`public_url`'s. A handshake without ``Origin`` (a
    #: non-browser client) is always allowed; any other is refused with HTTP 403.
    allowed_origins: tuple[str, ...] | None = attrs.field(default=None, converter=_origins)
    # -- operations (docs/configuration.md; issue 15) ------------------------------------------
    #: Who may create encounters: ``"keys"`` (a GM key, or ``server_key``; with no key
    #: defined at all, a connection from loopback may) or ``"open"`` (anyone, held to the
    #: per-IP quotas of :class:`Limits`).
    creation: Literal["keys", "open"] = "keys"
    #: Minutes a loaded encounter stays in memory with nobody connected and no timer
    #: running, before it is unloaded (it stays in the store; the next join loads it).
    idle_unload_minutes: float = attrs.field(default=15.0, validator=_not_negative)
    #: Days after which an unfinished encounter nobody has joined is archived; ``None``: never.
    archive_after_days: float | None = 30.0
    #: Days after which an archived encounter is deleted from the store; ``None``: never.
    delete_archived_after_days: float | None = None
    #: Peers (IP addresses or networks, ``"10.0.0.0/8"``) whose ``X-Forwarded-For`` header
    #: is believed for the client's address (a reverse proxy in front of the server).
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), converter=_names)
    #: ``"debug"``, ``"info"``, ``"warning"`` or ``"error"``.
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    #: ``"text"`` (one readable line per record) or ``"json"`` (one JSON object per line).
    log_format: Literal["text", "json"] = "text"
    #: When set, ``GET /metrics`` needs ``Authorization: Bearer <metrics_token>``.
    metrics_token: str | None = None


def load_config(path: str | Path) -> ServerConfig:
    """Read a TOML config file (``[server]`` and ``[limits]`` tables); clear errors on mistakes."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    server = dict(data.get("server", {}))
    limits = dict(data.get("limits", {}))
    unknown = sorted(set(data) - {"server", "limits"})
    if unknown:
        raise ValueError(f"{path}: unknown table(s): {', '.join(unknown)}")
    if "arena_dirs" in server:
        server["arena_dirs"] = tuple(Path(p) for p in server["arena_dirs"])
    try:
        return ServerConfig(**server, limits=Limits(**limits))
    except TypeError as exc:
        raise ValueError(f"{path}: {exc}") from None
