"""The method table (``server/_methods.py``) without sockets: a :class:`Client` answers
through a recording subscriber, the same interface a websocket connection implements.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import trio
import trio.testing
from e2e_support import creatures

from zonekeep.protocol import PROTOCOL_VERSION, validate_server_message
from zonekeep.sdk import RandomEntropy
from zonekeep.sdk.engine import Engine
from zonekeep.server import InMemoryStore, Limits, ServerConfig
from zonekeep.server._methods import Client, Methods
from zonekeep.server._registry import Registry
from zonekeep.server._welcome import Welcome

HELLO = {"protocol": PROTOCOL_VERSION, "client": {"name": "test", "version": "0"}}


class Recorder:
    """A subscriber that keeps what it is sent, parsed, and how it was closed."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.closed: tuple[int, str] | None = None

    def push_text(self, text: str) -> None:
        self.texts.append(text)

    def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def take(self) -> list[dict[str, Any]]:
        """The messages received since the last call, each checked against the schemas."""
        messages = [json.loads(t) for t in self.texts]
        self.texts.clear()
        for message in messages:
            validate_server_message(message)
        return messages


class Table:
    """A registry and a method table over the built-in engine, in a nursery."""

    def __init__(
        self, nursery: trio.Nursery, limits: Limits, store: InMemoryStore | None = None
    ) -> None:
        self.config = ServerConfig(port=0, store="memory", limits=limits)
        engine = Engine()
        self.registry = Registry(self.config, engine, store or InMemoryStore(), RandomEntropy(7))
        self.registry.nursery = nursery
        arenas = self.registry.bundled_arenas
        self.welcome = Welcome(self.config, engine, lambda: arenas())
        self.methods = Methods(self.registry, self.welcome.text)

    def client(self) -> tuple[Client, Recorder]:
        recorder = Recorder()
        # From loopback: on a server with no key at all, it may create encounters.
        return Client(self.methods, recorder, self.config.limits, "127.0.0.1"), recorder


@pytest.fixture
async def table() -> AsyncIterator[Table]:
    async with trio.open_nursery() as nursery:
        yield Table(nursery, Limits(rate_per_second=1000, rate_burst=1000))
        nursery.cancel_scope.cancel()


async def call(client: Client, rid: Any, method: str, /, **params: Any) -> None:
    await client.handle(json.dumps({"id": rid, "method": method, "params": params}))


async def gm_and_alice(table: Table) -> tuple[Client, Recorder, Client, Recorder, str, str]:
    """A GM and a client for Alice, both greeted; the GM created an encounter on the
    tavern (seq 1) with a seat for Alice. Returns both clients and their recorders, the
    encounter id and Alice's token (she has not joined)."""
    gm, gm_out = table.client()
    alice, alice_out = table.client()
    for client, out in ((gm, gm_out), (alice, alice_out)):
        await call(client, 0, "hello", **HELLO)
        out.take()
    await call(gm, 1, "create_encounter", name="T", arena="tavern", creatures=creatures())
    eid = gm_out.take()[0]["result"]["encounter"]
    await call(gm, 2, "create_seat", encounter=eid, player="alice")
    token = gm_out.take()[0]["result"]["token"]
    return gm, gm_out, alice, alice_out, eid, token


async def test_hello_first_then_the_welcome(table: Table) -> None:
    client, out = table.client()
    await call(client, 1, "ping")
    assert out.take() == [
        {
            "id": 1,
            "error": {
                "code": 1003,
                "name": "hello_required",
                "message": "Send 'hello' first.",
                "data": {"retryable": False},
            },
        }
    ]
    await call(client, "h", "hello", **HELLO)
    assert out.texts == ['{"id":"h","result":' + table.welcome.text() + "}"]
    (reply,) = out.take()
    assert reply["result"]["protocol"] == PROTOCOL_VERSION
    assert reply["result"]["limits"]["rate_burst"] == 1000
    await call(client, 2, "hello", **HELLO)
    assert [m["error"]["name"] for m in out.take()] == ["already_greeted"]
    assert out.closed is None


async def test_create_join_and_fan_out(table: Table) -> None:
    gm, gm_out = table.client()
    alice, alice_out = table.client()
    for client, out in ((gm, gm_out), (alice, alice_out)):
        await call(client, 0, "hello", **HELLO)
        out.take()

    await call(gm, 1, "create_encounter", name="Table", arena="tavern", creatures=creatures())
    ((created,),) = [gm_out.take()]
    eid = created["result"]["encounter"]
    assert (created["id"], created["result"]["role"], created["result"]["seq"]) == (1, "gm", 1)
    await call(gm, 2, "create_seat", encounter=eid, player="alice")
    token = gm_out.take()[0]["result"]["token"]

    await call(alice, 3, "join", encounter=eid, token=token)
    (joined,) = alice_out.take()
    assert (joined["id"], joined["result"]["role"], joined["result"]["player"]) == (
        3,
        "player",
        "alice",
    )
    assert "ogre" not in joined["result"]["snapshot"]["creatures"]  # hidden from players

    await call(gm, 4, "command", encounter=eid, type="set_surprise", params={"surprised": []})
    event, reply = gm_out.take()
    assert reply == {"id": 4, "result": {"first_seq": 2, "last_seq": 2}}
    assert (event["method"], event["params"]["seq"]) == ("event", 2)
    assert alice_out.take() == [event]  # the same event, serialized once for both views here

    # A player may not do what only the GM may.
    await call(alice, 5, "create_spectator_link", encounter=eid)
    assert [m["error"]["name"] for m in alice_out.take()] == ["gm_only"]

    # Once the client is gone, nothing reaches its subscriber.
    alice.leave_all()
    await call(gm, 6, "command", encounter=eid, type="add_note", params={"text": "hi"})
    assert [m.get("method") for m in gm_out.take()] == ["event", None]
    assert alice_out.take() == []


async def test_a_rate_limited_request_is_answered_with_its_id() -> None:
    async with trio.open_nursery() as nursery:
        table = Table(
            nursery,
            Limits(rate_per_second=0.001, rate_burst=1, abuse_refusals=3, max_message_bytes=100),
        )
        client, out = table.client()
        await call(client, 0, "hello", **HELLO)
        out.take()
        message = "Too many messages: at most 0.001 a second (bursts of 1). This one was ignored."
        await call(client, 41, "ping")
        await client.handle("not json")
        too_large = json.dumps({"id": 43, "method": "ping"}) + " " * 100  # not even read
        await client.handle(too_large)
        refused = out.take()
        # The bucket gains a token in about 1000 seconds (0.001 a second).
        waits = [r["error"]["data"].pop("retry_after_ms") for r in refused]
        assert all(999_000 < w <= 1_000_000 for w in waits), waits
        error = {"code": 5001, "name": "rate_limited", "message": message}
        error["data"] = {"retryable": True}
        assert refused == [
            {"id": 41, "error": error},
            {"id": None, "error": error},
            {"id": None, "error": error},
        ]
        assert out.closed is None
        await call(client, 42, "ping")  # the fourth refusal in the window: abuse
        assert out.take() == []
        assert out.closed == (1008, "rate limit abuse")
        nursery.cancel_scope.cancel()


class _StallingStore(InMemoryStore):
    """An in-memory store whose reads wait while ``held``: a join that reads the log
    and awaits, as it does on a real store, while other commands go through."""

    def __init__(self) -> None:
        super().__init__()
        self.held = False
        self.reading = trio.Event()
        self.release = trio.Event()

    async def read(self, encounter: str, after: int = 0) -> list[tuple[int, Any]]:
        if self.held:
            self.reading.set()
            await self.release.wait()
        return await super().read(encounter, after)


@pytest.mark.parametrize("resume", [True, False], ids=["resume", "fresh-with-history"])
async def test_a_join_reply_comes_before_every_live_event_after_it(resume: bool) -> None:
    """Commands applied while a join reads the log never reach the joining connection
    before its reply, nor twice: the reply covers the log up to its ``seq``, and the
    live events that follow it start at ``seq + 1``."""
    store = _StallingStore()
    async with trio.open_nursery() as nursery:
        table = Table(nursery, Limits(rate_per_second=1000, rate_burst=1000), store)
        gm, _, alice, alice_out, eid, token = await gm_and_alice(table)
        note = {"type": "add_note", "params": {"text": "x"}}

        store.held = True
        # (From seq 0: a resume that missed nothing reads nothing, so it would not wait.)
        join = {"last_seq": 0} if resume else {"history": 50}
        nursery.start_soon(lambda: call(alice, 3, "join", encounter=eid, token=token, **join))
        await store.reading.wait()  # the join is reading the log
        await call(gm, 4, "command", encounter=eid, **note)  # seq 2
        await call(gm, 5, "command", encounter=eid, **note)  # seq 3
        assert alice_out.take() == []  # nothing reaches the seat before its reply
        store.held = False
        store.release.set()
        await trio.testing.wait_all_tasks_blocked()
        await call(gm, 6, "command", encounter=eid, **note)  # seq 4, after the reply
        messages = alice_out.take()
        nursery.cancel_scope.cancel()

    assert messages[0]["id"] == 3, messages[0]
    reply = messages[0]["result"]
    assert reply["seq"] == 3
    if resume:
        assert [e["type"] for e in reply["events"]] == [
            "encounter_created",
            "note_added",
            "note_added",
        ]
    else:
        assert [e["type"] for e in reply["history"]][-2:] == ["note_added", "note_added"]
    assert [m["params"]["seq"] for m in messages[1:] if m.get("method") == "event"] == [4]
