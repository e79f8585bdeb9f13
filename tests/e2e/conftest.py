"""End-to-end fixtures: a real server on a loopback port (on the default SQLite store, in
the test's ``tmp_path``), real websocket clients.

Every message any client receives in these tests is validated against the
protocol's JSON Schemas (``validated_messages`` counts them, so a test can check
the validator really ran).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from e2e_support import Running, ServerConfig, _validate, drop_postgres_schemas, start_server

from zonekeep.protocol.client import MESSAGE_HOOKS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``ZONEKEEP_TEST_STORE=postgresql``, skip the tests that need SQLite (its file,
    or ``zonekeep export``/``import``, which read SQLite files only)."""
    if os.environ.get("ZONEKEEP_TEST_STORE") != "postgresql":
        return
    skip = pytest.mark.skip(reason="needs the SQLite store (ZONEKEEP_TEST_STORE=postgresql)")
    for item in items:
        if item.get_closest_marker("sqlite"):
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def postgres_schemas() -> Any:
    """Under ``ZONEKEEP_TEST_STORE=postgresql``: drop the test schemas at the end."""
    yield
    drop_postgres_schemas()


@pytest.fixture(autouse=True)
def schema_validation() -> Any:
    """Validate every message the server sends to any client, for every e2e test."""
    MESSAGE_HOOKS.append(_validate)
    yield
    MESSAGE_HOOKS.remove(_validate)


@pytest.fixture
async def running(nursery: trio.Nursery, tmp_path: Path) -> AsyncIterator[Running]:
    """A server with default limits on a free loopback port, its SQLite store under
    ``tmp_path``."""
    yield await start_server(nursery, tmp_path / "server", ServerConfig(port=0))


@pytest.fixture
def make_server(nursery: trio.Nursery, tmp_path: Path) -> Callable[..., Any]:
    """Start another server with its own config: ``await make_server(ServerConfig(...))``;
    each server keeps its SQLite store in a directory of its own under ``tmp_path``."""
    servers = itertools.count(1)

    async def make(config: ServerConfig | None = None, **kw: Any) -> Running:
        data_dir = tmp_path / f"server-{next(servers)}"
        return await start_server(nursery, data_dir, config or ServerConfig(port=0), **kw)

    return make
