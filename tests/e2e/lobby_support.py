"""Helpers for the lobby and lifecycle tests: GM keys in a running server's store, changes
made "by another process", waiting for what the server does on its own."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import helpers
import trio
import trio.testing
from e2e_support import Running

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.server._store import EventStore, GmKey, InMemoryStore

WAIT = helpers.deadline(10)  # seconds: the bound on every wait for something that must happen


async def add_gm_key(running: Running, name: str) -> str:
    """Add a GM key named ``name`` to the server's store (as ``zonekeep gm add`` does);
    returns the key."""
    key = f"key-of-{name}-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    digest = hashlib.sha256(key.encode()).hexdigest()
    await running.server.store.add_gm_key(GmKey(name, digest, time.time()))
    return key


async def from_outside(running: Running, change: Callable[[EventStore], Awaitable[Any]]) -> Any:
    """Make ``change`` to the server's store as another process would (the ``zonekeep``
    command line): on SQLite or PostgreSQL through a store of its own, in memory by
    telling the store that someone outside changed it."""
    store = running.server.store
    if isinstance(store, InMemoryStore):
        result = await change(store)
        store.bump_outside()
        return result
    from zonekeep.server._postgres import PostgresStore
    from zonekeep.server._sqlite import SqliteStore

    other: EventStore
    if isinstance(store, PostgresStore):
        other = await PostgresStore.open(running.server.config.store, pool_size=1)
    else:
        other = await SqliteStore.open(running.server.config.data_dir / "zonekeep.sqlite3")
    try:
        return await change(other)
    finally:
        await other.aclose()


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (at most :data:`WAIT` seconds of trio's clock) until ``condition()`` holds."""
    with trio.move_on_after(WAIT):
        while not condition():
            await trio.sleep(0.01)
        return
    raise AssertionError(f"still waiting for {what}")


async def refused(call: Awaitable[Any]) -> ClientError:
    try:
        await call
    except ClientError as exc:
        return exc
    raise AssertionError("the request was not refused")


async def closed_with(client: ZonekeepClient) -> tuple[int | None, str | None]:
    """Wait until the server closed ``client``; its close code and reason."""
    with trio.fail_after(WAIT):
        await client.closed.wait()
    return client.ws.close_code, client.ws.close_reason


def store_kw() -> dict[str, Any]:
    """What to pass to :func:`e2e_support.start_server` so that servers started one after
    the other share one store: nothing (they share the data directory's SQLite file)."""
    return {}


async def settle(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """With trio's clock standing still (a test's ``MockClock``, moved by hand), let the
    server's tasks run until ``check()`` holds: at most 300 rounds (times the deadline
    scale), each until every task has waited for 10 ms of real time (a store's worker
    thread may be writing)."""
    for _ in range(round(helpers.deadline(300))):
        if await check():
            return
        await trio.testing.wait_all_tasks_blocked(0.01)
    raise AssertionError(f"still waiting for {what}")
