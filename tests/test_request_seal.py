"""The sealed answers of keyed token and lobby requests (``server/_idempotency.py``;
SPEC.md, "Idempotency", since 1.6; docs/security.md): a seal opens only with the
(scope, key) it was made with and only undamaged, and holds nothing in clear; the
stores keep the newest answers of each scope and forget them with the encounter."""

from __future__ import annotations

import base64
from contextlib import ExitStack
from pathlib import Path

import pytest
import trio
from helpers import deadline

from zonekeep.server._idempotency import request_scope, seal, seal_keys, unseal
from zonekeep.server._sqlite import SqliteStore
from zonekeep.server._store import REQUESTS_PER_SCOPE, EventStore, InMemoryStore

ANSWER = {"method": "create_seat", "fingerprint": "f" * 64, "answer": {"token": "T0KEN-xyz"}}


def test_a_seal_opens_with_its_scope_and_key_only() -> None:
    keys = seal_keys(request_scope("e1", "gm"), "key-1")
    sealed = seal(keys, ANSWER)
    assert unseal(keys, sealed) == ANSWER
    assert b"T0KEN" not in base64.b64decode(sealed)
    assert b"create_seat" not in base64.b64decode(sealed)
    assert seal(keys, ANSWER) != sealed  # a fresh nonce each time
    for other in (
        seal_keys(request_scope("e1", "gm"), "key-2"),
        seal_keys(request_scope("e1", "owner"), "key-1"),
        seal_keys(request_scope("e2", "gm"), "key-1"),
    ):
        assert other.id != keys.id
        assert unseal(other, sealed) is None


def test_a_damaged_seal_does_not_open() -> None:
    keys = seal_keys("e1/gm", "key-1")
    raw = bytearray(base64.b64decode(seal(keys, ANSWER)))
    for where in (0, 20, len(raw) - 1):
        damaged = bytearray(raw)
        damaged[where] ^= 1
        assert unseal(keys, base64.b64encode(bytes(damaged)).decode()) is None
    assert unseal(keys, "not base64!") is None
    assert unseal(keys, base64.b64encode(b"short").decode()) is None


async def _open(kind: str, tmp_path: Path, stack: ExitStack) -> EventStore:
    if kind == "memory":
        return InMemoryStore()
    if kind == "sqlite":
        return await SqliteStore.open(tmp_path / "z.sqlite3")
    from postgres_support import fresh_schema

    from zonekeep.server._postgres import PostgresStore

    url = stack.enter_context(fresh_schema())
    with trio.fail_after(deadline(20)):
        return await PostgresStore.open(url)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgresql"])
async def test_the_stores_keep_the_newest_answers_per_scope_and_forget_them_with_the_encounter(
    tmp_path: Path, kind: str
) -> None:
    with ExitStack() as stack:
        store = await _open(kind, tmp_path, stack)
        try:
            await _keep_and_forget(store)
        finally:
            if not isinstance(store, InMemoryStore):
                await store.aclose()


async def _keep_and_forget(store: EventStore) -> None:
    for n in range(REQUESTS_PER_SCOPE + 2):
        await store.put_request("e1", "gm", f"id-{n}", f"sealed-{n}")
    await store.put_request("e1", "owner", "id-0", "owner-0")
    await store.put_request("e10", "gm", "id-0", "other-0")
    assert await store.get_request("e1", "gm", "id-0") is None  # the oldest went
    assert await store.get_request("e1", "gm", "id-1") is None
    assert await store.get_request("e1", "gm", "id-2") == "sealed-2"
    last = REQUESTS_PER_SCOPE + 1
    assert await store.get_request("e1", "gm", f"id-{last}") == f"sealed-{last}"
    assert await store.get_request("e1", "owner", "id-0") == "owner-0"
    await store.delete("e1")
    assert await store.get_request("e1", "gm", "id-2") is None
    assert await store.get_request("e1", "owner", "id-0") is None
    assert await store.get_request("e10", "gm", "id-0") == "other-0"  # not a prefix match


async def test_a_store_copy_keeps_the_answers(tmp_path: Path) -> None:
    """``zonekeep store copy``: a repeat after the move still gets its first answer."""
    from zonekeep.sdk import EncounterCreated, EncounterOptions
    from zonekeep.server._admin import copy_store

    source = await SqliteStore.open(tmp_path / "a.sqlite3")
    target = await SqliteStore.open(tmp_path / "b.sqlite3")
    try:
        await source.append("e1", 1, [EncounterCreated("e1", EncounterOptions(), (), "Keys")])
        await source.put_request("e1", "gm", "id-a", "sealed-a")
        await source.put_request("e1", "owner", "id-b", "sealed-b")
        await copy_store(source, target)
        assert await target.requests_of("e1") == await source.requests_of("e1")
        assert await target.get_request("e1", "owner", "id-b") == "sealed-b"
    finally:
        await source.aclose()
        await target.aclose()
