"""Helpers for the end-to-end tests: a real server on a loopback port, on the default
(SQLite) store in a temporary directory, and real clients.

``ZONEKEEP_TEST_STORE=postgresql`` runs them on the PostgreSQL store instead: each data
directory gets a schema of its own in the test database (tests/postgres_support.py),
so servers started one after the other on one data directory share its store.
"""

from __future__ import annotations

import os
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import attrs
import trio

from zonekeep.protocol import validate_server_message
from zonekeep.protocol.client import ZonekeepClient, connect
from zonekeep.sdk import OPEN_PHASES, CommandSpec, RandomEntropy, hookimpl
from zonekeep.sdk.engine import Engine
from zonekeep.server import Limits, ServerConfig, ZonekeepServer

VALIDATED: list[int] = [0]


def _validate(message: dict[str, Any], method: str | None) -> None:
    validate_server_message(message, method)
    VALIDATED[0] += 1


def creatures() -> list[dict[str, Any]]:
    """A small roster for the tavern: two heroes of two players, two goblins, a hidden ogre."""
    blade = {
        "name": "blade",
        "kind": "melee",
        "bonus": 4,
        "damage": "1d6+2",
        "damage_type": "slashing",
    }
    return [
        {
            "id": "aria",
            "name": "Aria",
            "side": "party",
            "controller": "alice",
            "dex_mod": 3,
            "hp": 20,
            "max_hp": 20,
            "ac": 14,
            "zone": "common_room",
            "attacks": [blade],
        },
        {
            "id": "bram",
            "name": "Bram",
            "side": "party",
            "controller": "bob",
            "dex_mod": 1,
            "hp": 24,
            "max_hp": 24,
            "ac": 15,
            "zone": "common_room",
            "attacks": [blade],
        },
        {
            "id": "gob",
            "name": "Goblin",
            "side": "goblins",
            "dex_mod": 2,
            "hp": 7,
            "max_hp": 7,
            "ac": 13,
            "zone": "common_room",
            "attacks": [blade],
        },
        {
            "id": "ogre",
            "name": "Lurking Ogre",
            "side": "goblins",
            "dex_mod": -1,
            "hp": 59,
            "max_hp": 59,
            "ac": 11,
            "zone": "kitchen",
            "hidden": True,
            "attacks": [blade],
        },
    ]


def sturdy_goblin_roster() -> list[dict[str, Any]]:
    """The tavern roster without the ogre: Aria, Bram and a 60-hp goblin (it survives a
    critical hit or two)."""
    found = [c for c in creatures() if c["id"] != "ogre"]
    found[2].update(hp=60, max_hp=60)
    return found


def thunderclap(**params: Any) -> dict[str, Any]:
    """Aria's area effect in the tavern's common room (a 10-ft sphere around her taking
    the goblin and Bram, a Dex save, 1d6 thunder damage), with ``params`` over it."""
    return {
        "creature": "aria",
        "zone": "common_room",
        "shape": "sphere",
        "size": 10,
        "range": 0,
        "targets": ["gob", "bram"],
        "save": "dex",
        "damage": "1d6",
        "damage_type": "thunder",
        "name": "Thunderclap",
        **params,
    }


class Loaded:
    """Entropy whose every die shows its highest face: initiative follows the dexterity
    bonuses (Aria 23, Goblin 22, Bram 21, then the ogre) and every attack is a critical hit."""

    def randint(self, sides: int) -> int:
        return sides


class Boom:
    """A plugin whose one command, ``boom`` (GM, any phase before the end), always raises."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def explode(ctx: Any, cmd: Any) -> None:
            raise RuntimeError("boom")

        return (CommandSpec("boom", explode, "GM: blow up.", who="gm", phases=OPEN_PHASES),)


class Running:
    """A running server and a way to open clients to it."""

    def __init__(self, server: ZonekeepServer) -> None:
        self.server = server

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.server.port}/ws"

    def client(self, **kw: Any) -> AbstractAsyncContextManager[ZonekeepClient]:
        return connect(self.url, **kw)


def server_for(
    data_dir: Path, config: ServerConfig | None = None, *, sqlite: bool = False, **kw: Any
) -> ZonekeepServer:
    """The server :func:`start_server` starts (also served in memory, ``memory_support``)."""
    config = config or ServerConfig(port=0)
    if config.data_dir == ServerConfig().data_dir:
        config = attrs.evolve(config, data_dir=data_dir)
    if (
        not sqlite
        and config.store == "sqlite"
        and os.environ.get("ZONEKEEP_TEST_STORE") == "postgresql"
    ):
        config = attrs.evolve(config, store=postgres_store_for(config.data_dir))
    kw.setdefault("engine", Engine())  # the built-ins only, whatever else is installed
    return ZonekeepServer(config, entropy=kw.pop("entropy", RandomEntropy(7)), **kw)


async def start_server(
    nursery: trio.Nursery,
    data_dir: Path,
    config: ServerConfig | None = None,
    *,
    sqlite: bool = False,
    **kw: Any,
) -> Running:
    """Start a server under ``nursery``, as ``zonekeep serve`` would: its store is the
    default one (SQLite, full durability), kept in ``data_dir`` unless ``config`` names a
    ``data_dir`` of its own (never the user's); ``sqlite``: SQLite even under
    ``ZONEKEEP_TEST_STORE=postgresql``. ``kw`` go to :class:`ZonekeepServer`."""
    server = server_for(data_dir, config, sqlite=sqlite, **kw)
    await nursery.start(server.run)
    return Running(server)


def parse_response(data: bytes) -> tuple[int, dict[str, str], bytes]:
    """An HTTP/1.1 response as read from a raw socket: its status, headers (lower-case
    names) and body (what follows the head)."""
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, body


_SCHEMAS: dict[Path, str] = {}


def postgres_store_for(data_dir: Path) -> str:
    """The PostgreSQL store URL standing in for ``data_dir``'s SQLite file: one new schema
    per data directory, dropped at the end of the session (:func:`drop_postgres_schemas`)."""
    import uuid

    from postgres_support import in_schema, needs_postgres, sql

    if data_dir not in _SCHEMAS:
        needs_postgres()
        schema = f"zk_test_{uuid.uuid4().hex[:12]}"
        sql(f"CREATE SCHEMA {schema}")
        _SCHEMAS[data_dir] = in_schema(schema)
    return _SCHEMAS[data_dir]


def drop_postgres_schemas() -> None:
    """Drop the schemas :func:`postgres_store_for` made (at the end of the session)."""
    from postgres_support import schema_of, sql

    while _SCHEMAS:
        _, url = _SCHEMAS.popitem()
        sql(f"DROP SCHEMA IF EXISTS {schema_of(url)} CASCADE")


__all__ = [
    "VALIDATED",
    "Boom",
    "Limits",
    "Loaded",
    "Running",
    "ServerConfig",
    "creatures",
    "parse_response",
    "start_server",
    "sturdy_goblin_roster",
    "thunderclap",
]
