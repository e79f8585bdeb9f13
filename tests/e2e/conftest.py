"""End-to-end fixtures: a real server on a loopback port, real websocket clients.

Every message any client receives in these tests is validated against the
protocol's JSON Schemas (``validated_messages`` counts them, so a test can check
the validator really ran).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import trio
from e2e_support import Running, ServerConfig, _validate, start_server

from zonekeep.protocol.client import MESSAGE_HOOKS


@pytest.fixture(autouse=True)
def schema_validation() -> Any:
    """Validate every message the server sends to any client, for every e2e test."""
    MESSAGE_HOOKS.append(_validate)
    yield
    MESSAGE_HOOKS.remove(_validate)


@pytest.fixture
async def running(nursery: trio.Nursery) -> AsyncIterator[Running]:
    """A server with default limits on a free loopback port."""
    yield await start_server(nursery, ServerConfig(port=0))


@pytest.fixture
def make_server(nursery: trio.Nursery) -> Callable[..., Any]:
    """Start another server with its own config: ``await make_server(ServerConfig(...))``."""

    async def make(config: ServerConfig | None = None, **kw: Any) -> Running:
        return await start_server(nursery, config or ServerConfig(port=0), **kw)

    return make
