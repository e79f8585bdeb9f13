"""Fuzzing live connections with malformed and illegal frames: hypothesis, and a
seeded fuzzer of thousands of frames (``test_seeded_fuzzer_...``, documented in
docs/security.md, "The fuzzer").

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
import os
import random
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import attrs
import helpers
import trio
from e2e_support import VALIDATED, Limits, Running, ServerConfig, creatures
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from zonekeep.protocol import METHODS
from zonekeep.protocol._errors import PROTOCOL_ERRORS, rule_error_number
from zonekeep.protocol.client import ZonekeepClient
from zonekeep.sdk.host import RULE_ERRORS

MakeServer = Callable[..., Any]
WAIT = helpers.deadline(5)

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
    return await open_table_on(running, stack)


async def open_table_on(running: Running, stack: AsyncExitStack) -> Table:
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


# -- the seeded fuzzer: thousands of frames per run ------------------------------------------------
#
# ZONEKEEP_FUZZ_FRAMES (default 5,000) frames from the seed ZONEKEEP_FUZZ_SEED (default
# 14), over the three live connections, in batches that end with a ``ping`` probe per
# connection. Run 100,000 with:
#
#     ZONEKEEP_FUZZ_FRAMES=100000 .venv/bin/python -m pytest -q -p no:cacheprovider \
#         tests/e2e/test_fuzz.py -k seeded

FUZZ_FRAMES = int(os.environ.get("ZONEKEEP_FUZZ_FRAMES", "5000"))
FUZZ_SEED = int(os.environ.get("ZONEKEEP_FUZZ_SEED", "14"))
BATCH = 100
#: Methods a near miss may call: not ``leave``, ``join``, ``hello`` or ``rewind``, which
#: change the connection's seat or send snapshots rather than answer.
NEAR_METHODS = ["ping", "snapshot", "actions", "command", "create_seat", "create_spectator_link"]


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend(
                (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def read_strictly(frame: str | bytes) -> bool:
    """Whether the server reads ``frame`` as JSON at all: text, no NaN or Infinity, no
    number beyond what Python holds, nested at most 32 deep (SPEC: parse_error)."""
    if isinstance(frame, bytes) or len(frame.encode("utf-8")) > FUZZ_MAX_BYTES:
        return False
    try:
        data = json.loads(frame, parse_constant=_no_constant, parse_float=_finite)
    except (ValueError, RecursionError):
        return False
    return _depth(data) <= 32


class Fuzzer:
    """Seeded frames of every kind the issue lists; each with the error names its reply
    must have (``None``: any stable error, or a result)."""

    def __init__(self, rng: random.Random, eid: str, commands: list[dict[str, Any]]) -> None:
        self.rng = rng
        self.eid = eid
        self.commands = commands
        self.ids = itertools.count(1)

    def scalar(self) -> Any:
        r = self.rng
        return r.choice(
            [
                None,
                True,
                False,
                r.randint(-(2**40), 2**40),
                r.uniform(-1e6, 1e6),
                "".join(chr(r.randint(32, 0x2FF)) for _ in range(r.randint(0, 12))),
                r.choice(["aria", "gob", "ogre", "yard", "attack", "decline", "", self.eid]),
            ]
        )

    def value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if depth >= 4 or r < 0.5:
            return self.scalar()
        if r < 0.75:
            return [self.value(depth + 1) for _ in range(self.rng.randint(0, 4))]
        return {
            str(self.scalar())[:8]: self.value(depth + 1) for _ in range(self.rng.randint(0, 4))
        }

    def valid(self) -> dict[str, Any]:
        """A plausible request (it may well be refused by the rules)."""
        r = self.rng
        method = r.choice(NEAR_METHODS)
        params: dict[str, Any] = {"encounter": self.eid}
        if method == "ping":
            params = {}
        elif method == "actions":
            params["creature"] = r.choice(CREATURE_IDS)
        elif method == "create_seat":
            params["player"] = r.choice(["alice", "carol", ""])
        elif method == "command":
            spec = r.choice(self.commands)
            inner: dict[str, Any] = {}
            for name, param in spec["params"].items():
                if param["required"] or r.random() < 0.3:
                    inner[name] = self.param(param["type"])
            params.update(type=spec["id"], params=inner)
        return {"id": f"f{next(self.ids)}", "method": method, "params": params}

    def param(self, kind: str) -> Any:
        r = self.rng
        if kind == "creature":
            return r.choice(CREATURE_IDS)
        if kind == "creatures":
            return [r.choice(CREATURE_IDS) for _ in range(r.randint(0, 3))]
        if kind == "integer":
            return r.randint(-50, 200)
        if kind == "boolean":
            return r.random() < 0.5
        if kind == "zone":
            return r.choice(["common_room", "kitchen", "yard", "nowhere"])
        return self.value(2)

    def mutate(self, message: dict[str, Any]) -> dict[str, Any]:
        """A near miss: one change to a plausible request."""
        r = self.rng
        where: dict[str, Any] = message
        if "params" in message and r.random() < 0.7:
            where = message["params"]
            if isinstance(where.get("params"), dict) and r.random() < 0.6:
                where = where["params"]
        keys = list(where)
        choice = r.randrange(6)
        if choice == 0 and keys:
            del where[r.choice(keys)]
        elif choice == 1 and keys:
            where[r.choice(keys)] = self.value()
        elif choice == 2:
            where[str(self.scalar())[:10] or "x"] = self.value()
        elif choice == 3:
            method = str(message.get("method", ""))
            cut = r.randint(0, len(method))
            message["method"] = method[:cut] + r.choice(["", "_", "x"]) + method[cut + 1 :]
        elif choice == 4:
            message["id"] = r.choice([None, True, 1.5, "", "x" * 65, [1], {"a": 1}])
        else:
            message["params"] = r.choice([[], "params", 7, None])
        return message

    def frame(self) -> tuple[str, str | bytes, frozenset[str] | None]:
        """(category, frame, expected error names)."""
        r = self.rng
        kind = r.choice(
            ["bytes", "binary", "text", "json", "near", "near", "near", "plain", "plain",
             "deep", "huge_int",
             "huge_float", "nan", "long", "duplicate"]
        )  # fmt: skip
        if kind == "binary":
            return kind, r.randbytes(r.randint(0, 200)), frozenset({"parse_error"})
        if kind == "bytes":  # random bytes that happen to be text
            frame: str = r.randbytes(r.randint(0, 200)).decode("latin-1")
            return kind, frame, oracle(frame)
        if kind == "text":
            pieces = ['{', '}', '[', ']', '"', ':', ',', "1", "-", "e", "null", "true", "id",
                      '"method"', '"params"', " ", "\\", "NaN", "ping"]  # fmt: skip
            frame = "".join(r.choice(pieces) for _ in range(r.randint(0, 40)))
            expected: frozenset[str] | None = oracle(frame)
            if not read_strictly(frame) and expected != frozenset({"parse_error"}):
                # NaN, or a number such as 1e1111 (invalid_params): refused unread.
                expected = frozenset({"parse_error", "invalid_params"})
            return kind, frame, expected
        if kind == "json":
            frame = json.dumps(self.value())
            return kind, frame, oracle(frame)
        if kind == "near":
            frame = json.dumps(self.mutate(self.valid()))
            return kind, frame, oracle(frame)
        if kind == "plain":  # a plausible request as it is: refused by the rules or applied
            frame = json.dumps(self.valid())
            return kind, frame, oracle(frame)
        message = self.valid()
        body = json.dumps(message)
        slot = '"__slot__"'
        holder = message.get("params") or {}
        holder[r.choice(["x", "params", "creature", "to"])] = "__slot__"
        message["params"] = holder
        body = json.dumps(message)
        if kind == "deep":
            depth = r.choice([33, 40, 600, 5000])
            nest = r.choice(["[", '{"a":'])
            close = "]" if nest == "[" else "}"
            frame = body.replace(slot, nest * depth + "1" + close * depth)
            expected = frozenset({"parse_error"})
        elif kind == "nan":
            frame = body.replace(slot, r.choice(["NaN", "Infinity", "-Infinity"]))
            expected = frozenset({"parse_error"})
        elif kind == "huge_int":
            frame = body.replace(slot, "9" * r.randint(4301, 12000))
            expected = frozenset({"invalid_params"})
        elif kind == "huge_float":
            frame = body.replace(slot, r.choice(["1e400", "-1e999", "1" * 400 + ".5e10"]))
            expected = frozenset({"invalid_params"})
        elif kind == "long":
            frame = body.replace(slot, json.dumps("x" * r.randint(100, 30_000)))
            expected = None
        else:  # duplicate keys: the last one wins, as for any JSON reader
            frame = body[:-1] + ', "id": ' + json.dumps(self.scalar()) + "}"
            expected = oracle(frame)
        if len(frame.encode("utf-8")) > FUZZ_MAX_BYTES:
            expected = frozenset({"message_too_large"})
        return kind, frame, expected


FUZZ_MAX_BYTES = 16_384


async def test_seeded_fuzzer_keeps_the_server_up_and_refusals_change_nothing(
    make_server: MakeServer,
) -> None:
    """FUZZ_FRAMES seeded frames: each gets exactly one reply, schema-valid (the e2e
    hook), an error with a stable name and number below 6000 (or a result); a batch with
    no accepted command leaves the encounter exactly as it was, and one with accepted
    commands moves its seq by exactly their events."""
    rng = random.Random(FUZZ_SEED)
    before = VALIDATED[0]
    async with AsyncExitStack() as stack:
        running = await make_server(
            ServerConfig(
                port=0,
                reaction_seconds=600,
                limits=Limits(
                    rate_per_second=1_000_000,
                    rate_burst=1_000_000,
                    max_message_bytes=FUZZ_MAX_BYTES,
                ),
            )
        )
        table = await open_table_on(running, stack)
        await table.gm.command(table.eid, "set_surprise", surprised=[])
        await table.gm.command(table.eid, "place", positions={})
        await table.gm.command(table.eid, "roll_initiative")
        table.baseline = await table.snapshot()
        welcome = table.gm.welcome
        assert welcome is not None
        fuzzer = Fuzzer(rng, table.eid, welcome["capabilities"]["commands"])
        seen: dict[str, int] = {}
        sent = 0
        while sent < FUZZ_FRAMES:
            batch = [
                (rng.choice(["gm", "alice", "spectator"]), *fuzzer.frame()) for _ in range(BATCH)
            ]
            sent += len(batch)
            events = 0
            accepted = False
            for name, client in table.clients.items():
                mine = [b for b in batch if b[0] == name]
                with trio.fail_after(WAIT * 4):
                    for _, _, frame, _ in mine:
                        await client.send_raw(frame)
                    probe = f"probe-{next(table.probes)}"
                    await client.send_raw(json.dumps({"id": probe, "method": "ping"}))
                    replies = []
                    while True:
                        params = await client.notification()
                        if "id" not in params:
                            continue  # an event or another notification
                        if params["id"] == probe:
                            break
                        replies.append(params)
                assert len(replies) == len(mine), (name, len(replies), len(mine))
                for (_, kind, frame, expected), reply in zip(mine, replies, strict=True):
                    label = f"{kind}: {frame[:120]!r}"
                    unread = not read_strictly(frame)
                    assert reply.get("id") == (None if unread else readable_id(frame)), (
                        label,
                        reply,
                    )
                    if "error" in reply:
                        check_error(reply["error"])
                        if expected is not None:
                            assert reply["error"]["name"] in expected, (label, reply)
                        key = f"{kind}:{reply['error']['name']}"
                    else:
                        assert expected is None, (label, reply)
                        result = reply["result"]
                        if "first_seq" in result:
                            accepted = True
                            events += result["last_seq"] - result["first_seq"] + 1
                        key = f"{kind}:(accepted)"
                    seen[key] = seen.get(key, 0) + 1
            for client in table.clients.values():
                client.pending_notifications()
            after = await table.snapshot()
            if accepted:
                assert after["seq"] == table.baseline["seq"] + events
                table.baseline = after
            else:
                assert after == table.baseline, "a batch of refused frames changed the encounter"
        for client in table.clients.values():
            assert await client.request("ping") == {}
    assert sent >= FUZZ_FRAMES
    kinds = {key.split(":")[0] for key in seen}
    assert kinds >= {"binary", "deep", "nan", "huge_int", "near", "long", "duplicate"}, seen
    if FUZZ_FRAMES >= 5000:  # the commands reached the rules, and some applied
        assert seen.get("plain:(accepted)", 0) > 0, seen
        assert any(k.startswith("plain:") and k.split(":")[1] in RULE_ERRORS for k in seen)
    assert VALIDATED[0] - before >= sent
