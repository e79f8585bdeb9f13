"""The Python client against the real server: what a rate-limited request and an abusive
client end with (an exception, never a hang), and that the end-to-end servers run on the
store users get by default (SQLite, in the test's temporary directory)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, creatures

from zonekeep.protocol.client import ClientError, ConnectionLost
from zonekeep.server import InMemoryStore

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)  # seconds: the bound on every wait for something that must happen


def flood_limits(**kw: Any) -> ServerConfig:
    """Practically no refill: hello takes the first of ``rate_burst`` tokens."""
    return ServerConfig(port=0, limits=Limits(rate_per_second=0.001, **kw))


async def test_a_rate_limited_request_raises_instead_of_hanging(make_server: MakeServer) -> None:
    running: Running = await make_server(flood_limits(rate_burst=2, abuse_refusals=5))
    async with running.client() as client:
        with trio.fail_after(WAIT):
            assert await client.request("ping") == {}
            with pytest.raises(ClientError) as refused:
                await client.request("ping")
            assert (refused.value.code, refused.value.name) == (5001, "rate_limited")
            with pytest.raises(ClientError) as again:
                await client.request("ping")
            assert again.value.name == "rate_limited"
        assert client.pending_notifications() == []  # nothing was left unmatched


async def test_a_request_the_server_closes_on_raises_with_the_close_code(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(flood_limits(rate_burst=1, abuse_refusals=1))
    async with running.client() as client:
        with trio.fail_after(WAIT):
            with pytest.raises(ClientError):
                await client.request("ping")  # the first refusal is tolerated ...
            with pytest.raises(ConnectionLost) as lost:
                await client.request("ping")  # ... the second closes the connection
    assert (lost.value.code, lost.value.reason) == (1008, "rate limit abuse")


@pytest.mark.sqlite
async def test_end_to_end_servers_run_on_the_default_sqlite_store(
    running: Running, tmp_path: Path
) -> None:
    assert ServerConfig().store == "sqlite"
    assert running.server.config.store == "sqlite"
    assert running.server.config.data_dir.parent == tmp_path
    assert not isinstance(running.server.store, InMemoryStore)
    async with running.client() as gm:
        created = await gm.create_encounter("Stored", "tavern", creatures())
    eid = created["encounter"]
    assert eid in await running.server.store.encounters()
    # The encounter is in the SQLite file (read by another connection, whatever the schema).
    reader = sqlite3.connect(running.server.config.data_dir / "zonekeep.sqlite3")
    try:
        assert any(eid in line for line in reader.iterdump())
    finally:
        reader.close()
