"""Fuzzing one live connection with malformed and illegal frames (hypothesis).

One server and one table (a GM, a player and a spectator joined to one encounter)
per test function. Hypothesis runs in a worker thread (``trio.to_thread``) and hands
each generated case back to the test's trio loop with ``trio.from_thread.run``, so
every example talks over the same real sockets.

For every frame the test checks that the sender gets exactly one reply (followed by
a ``ping`` that still works: the connection survived), that an error reply has a
stable name with its documented number, a readable id echoed, and no server fault
(6xxx), and that a refused frame left the encounter exactly as it was (the GM's
``snapshot`` before and after). An accepted command may change the encounter; the
baseline then moves on. Every message is also validated against the JSON Schemas by
the e2e conftest's hook.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import attrs
import trio
from e2e_support import VALIDATED, Limits, ServerConfig, creatures
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from zonekeep.protocol import METHODS
from zonekeep.protocol._errors import PROTOCOL_ERRORS, rule_error_number
from zonekeep.protocol.client import ZonekeepClient
from zonekeep.sdk import RULE_ERRORS

MakeServer = Callable[..., Any]
WAIT = 5

CREATURE_IDS = ["aria", "aria", "bram", "bram", "gob", "gob", "ogre", "nobody", ""]
ENVELOPE_KEYS = {"id", "method", "params"}


@attrs.frozen
class Case:
    """One frame to send, who sends it, and what the reply must be.

    ``expect`` is the set of acceptable error names, or ``None`` when the frame may
    be accepted (a result) or refused with any stable error.
    """

    sender: str
    frame: str | bytes
    expect: frozenset[str] | None
    label: str


# -- strategies --------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
senders = st.sampled_from(["gm", "gm", "alice", "alice", "spectator"])


def valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and 1 <= len(value) <= 64


def oracle(frame: str | bytes) -> frozenset[str] | None:
    """The error names a frame must get (``None``: it may be valid)."""
    if isinstance(frame, bytes):
        return frozenset({"parse_error"})
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):
        return frozenset({"parse_error"})
    if not isinstance(data, dict):
        return frozenset({"parse_error"})
    method = data.get("method")
    params = data.get("params", {})
    if (
        "id" not in data
        or not valid_id(data["id"])
        or not isinstance(method, str)
        or not method
        or not isinstance(params, dict)
        or set(data) - ENVELOPE_KEYS
    ):
        return frozenset({"invalid_request"})
    if method not in METHODS:
        return frozenset({"unknown_method"})
    return None


def readable_id(frame: str | bytes) -> Any:
    """The id the reply must echo: the frame's id when it is an object with a valid one."""
    if isinstance(frame, bytes):
        return None
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, dict) and "id" in data and valid_id(data["id"]):
        return data["id"]
    return None


def raw_case(sender: str, frame: str | bytes, label: str) -> Case:
    return Case(sender, frame, oracle(frame), label)


@st.composite
def garbage(draw: st.DrawFn) -> Case:
    """Random text, random bytes, random JSON values."""
    kind = draw(st.sampled_from(["text", "binary", "json"]))
    if kind == "text":
        frame: str | bytes = draw(st.text(max_size=200))
    elif kind == "binary":
        frame = draw(st.binary(max_size=64))
    else:
        frame = json.dumps(draw(json_values))
    return raw_case(draw(senders), frame, kind)


@st.composite
def envelopes(draw: st.DrawFn) -> Case:
    """Request envelopes with a wrong or missing field, a wrong type, an extra key."""
    good_id = st.integers(10**6, 10**9) | st.text(min_size=1, max_size=64)
    bad_id = (
        st.booleans()
        | st.none()
        | st.floats(allow_nan=False)
        | st.just("")
        | st.text(min_size=65, max_size=70)
        | st.lists(st.integers(), max_size=2)
        | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
    )
    methods = st.sampled_from(sorted(METHODS)) | st.text(max_size=12) | json_scalars
    message: dict[str, Any] = {}
    message["id"] = draw(good_id if draw(st.integers(0, 3)) else bad_id)
    if draw(st.integers(0, 5)):
        message["method"] = draw(methods)
    if draw(st.booleans()):
        message["params"] = draw(
            st.dictionaries(st.text(max_size=10), json_values, max_size=3) | json_values
        )
    if not draw(st.integers(0, 4)):
        message[draw(st.text(min_size=1, max_size=8))] = draw(json_scalars)
    if not draw(st.integers(0, 9)):
        message.pop("id", None)
    return raw_case(draw(senders), json.dumps(message), "envelope")


def command_cases(
    eid: str, commands: list[dict[str, Any]], zones: list[str], active: Callable[[], str | None]
) -> st.SearchStrategy[Case]:
    """Schema-valid ``command`` requests: real or unknown command types, params for the
    encounter's creatures and zones (or wrong ones), sent by any of the three seats.

    ``active`` tells whose turn it is now, so that many commands are for that creature
    (and some get accepted, moving the encounter on).
    """
    creature = st.sampled_from(CREATURE_IDS) | st.builds(lambda: active() or "aria")
    zone = st.sampled_from([*zones, "nowhere"])
    by_type: dict[str, st.SearchStrategy[Any]] = {
        "creature": creature,
        "zone": zone,
        "integer": st.integers(-50, 200),
        "boolean": st.booleans(),
        "string": st.sampled_from(["decline", "attack", "walk", "table", "d1", "fire"])
        | st.text(max_size=12),
        "creatures": st.lists(creature, max_size=3),
        "strings": st.lists(st.sampled_from(["attack", "decline", "yard", "aria"]), max_size=3),
        "object": st.dictionaries(st.text(max_size=6), json_scalars, max_size=2),
        "any": json_values,
    }

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        spec = draw(st.sampled_from(commands))
        params: dict[str, Any] = {}
        for name, param in spec["params"].items():
            if param["required"] or not draw(st.integers(0, 3)):
                if draw(st.integers(0, 19)):
                    params[name] = draw(by_type[param["type"]])
                else:  # a value of the wrong type
                    params[name] = draw(json_values)
        if not draw(st.integers(0, 19)):
            params[draw(st.text(min_size=1, max_size=6))] = draw(json_scalars)
        kind = spec["id"] if draw(st.integers(0, 19)) else draw(st.text(max_size=10))
        encounter = eid if draw(st.integers(0, 19)) else draw(st.text(max_size=10))
        rid = f"cmd-{draw(st.integers(0, 10**6))}"
        frame = json.dumps(
            {
                "id": rid,
                "method": "command",
                "params": {"encounter": encounter, "type": kind, "params": params},
            }
        )
        return Case(draw(senders), frame, None, f"command {kind}")

    return build()


# -- checks ----------------------------------------------------------------------------------------


def check_error(error: dict[str, Any]) -> None:
    """A stable, documented name with its documented number, and no server fault."""
    name, code = error["name"], error["code"]
    assert name in PROTOCOL_ERRORS or name in RULE_ERRORS, f"unknown error name {name!r}"
    assert code in {PROTOCOL_ERRORS.get(name), rule_error_number(name)}, (name, code)
    assert code < 6000, f"server fault: {error}"
    assert error["message"]


class Table:
    """The live connections and the baseline the fuzzing compares against."""

    def __init__(self, eid: str, clients: dict[str, ZonekeepClient]) -> None:
        self.eid = eid
        self.clients = clients
        self.gm = clients["gm"]
        self.baseline: dict[str, Any] = {}
        self.probes = itertools.count()
        self.seen: dict[str, int] = {}

    async def snapshot(self) -> dict[str, Any]:
        return await self.gm.request("snapshot", encounter=self.eid)

    async def play(self, case: Case) -> None:
        client = self.clients[case.sender]
        assert not client.closed.is_set(), "the connection was closed"
        probe = f"probe-{next(self.probes)}"
        with trio.fail_after(WAIT):
            await client.send_raw(case.frame)
            await client.send_raw(json.dumps({"id": probe, "method": "ping"}))
            replies = []
            while True:
                # Replies to raw frames come as "_unmatched" notifications whose params are
                # the whole reply; other notifications (events ...) have no "id".
                params = await client.notification()
                if "id" not in params:
                    assert {"encounter"} <= set(params), params
                    continue
                if params["id"] == probe:
                    assert params == {"id": probe, "result": {}}
                    break
                replies.append(params)
            for other in self.clients.values():
                other.pending_notifications()  # keep the other queues short
            after = await self.snapshot()

        assert len(replies) == 1, f"{case.label}: expected one reply, got {replies}"
        (reply,) = replies
        assert reply.get("id") == readable_id(case.frame), (case.label, reply)
        if "error" in reply:
            check_error(reply["error"])
            if case.expect is not None:
                assert reply["error"]["name"] in case.expect, (case.label, reply)
            assert after == self.baseline, f"{case.label} was refused but changed the encounter"
            self.seen[reply["error"]["name"]] = self.seen.get(reply["error"]["name"], 0) + 1
        else:
            assert case.expect is None, f"{case.label}: expected an error, got {reply}"
            self.seen["(accepted)"] = self.seen.get("(accepted)", 0) + 1
            self.baseline = after


async def open_table(make_server: MakeServer, stack: AsyncExitStack) -> Table:
    running = await make_server(
        ServerConfig(port=0, limits=Limits(rate_per_second=100_000, rate_burst=100_000))
    )
    gm = await stack.enter_async_context(running.client())
    alice = await stack.enter_async_context(running.client())
    spectator = await stack.enter_async_context(running.client())
    created = await gm.create_encounter("Fuzz", "tavern", creatures())
    eid = created["encounter"]
    seat = await gm.request("create_seat", encounter=eid, player="alice")
    link = await gm.request("create_spectator_link", encounter=eid)
    await alice.join(eid, seat["token"])
    await spectator.join(eid, link["token"])
    table = Table(eid, {"gm": gm, "alice": alice, "spectator": spectator})
    table.baseline = await table.snapshot()
    return table


FUZZ_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


async def run_cases(table: Table, strategy: st.SearchStrategy[Case], *examples: Case) -> None:
    """Run hypothesis in a worker thread; each example plays on this trio loop."""

    def play(case: Case) -> None:
        trio.from_thread.run(table.play, case)

    test = given(case=strategy)(play)
    for case in examples:
        test = example(case=case)(test)
    await trio.to_thread.run_sync(FUZZ_SETTINGS(test))
    # The connections all survived, and still answer.
    for client in table.clients.values():
        assert await client.request("ping") == {}


async def test_fuzzed_frames_get_one_stable_error_and_change_nothing(
    make_server: MakeServer,
) -> None:
    before = VALIDATED[0]
    async with AsyncExitStack() as stack:
        table = await open_table(make_server, stack)
        await run_cases(
            table,
            garbage() | envelopes(),
            raw_case("gm", "", "empty"),
            raw_case("gm", b"\x00\xff", "binary"),
            raw_case("alice", "[" * 5000 + "]" * 5000, "deep nesting"),
            raw_case("gm", "NaN", "NaN"),
            raw_case("spectator", '{"id": 1, "method": "ping", "id": true}', "duplicate key"),
            raw_case("gm", '{"id": true, "method": "ping"}', "boolean id"),
            raw_case("gm", '{"id": 7, "method": "ping", "extra": 1}', "extra key"),
            raw_case("gm", '{"id": "x", "method": "nope"}', "unknown method"),
        )
        assert table.seen.get("parse_error") and table.seen.get("invalid_request")
    assert VALIDATED[0] > before


async def test_fuzzed_commands_are_refused_cleanly_or_applied(make_server: MakeServer) -> None:
    async with AsyncExitStack() as stack:
        table = await open_table(make_server, stack)
        welcome = table.gm.welcome
        assert welcome is not None
        commands = welcome["capabilities"]["commands"]
        # Into the turns, where most commands apply.
        await table.gm.command(table.eid, "set_surprise", surprised=[])
        await table.gm.command(table.eid, "place", positions={})
        await table.gm.command(table.eid, "roll_initiative")
        table.baseline = await table.snapshot()
        assert table.baseline["snapshot"]["phase"] == "turns"
        zones = sorted(z["id"] for z in table.baseline["snapshot"]["arena"]["zones"])
        await run_cases(
            table,
            command_cases(table.eid, commands, zones, lambda: table.baseline["snapshot"]["active"]),
        )
        refused = sum(n for name, n in table.seen.items() if name != "(accepted)")
        assert refused > 0
