"""The cost gate: a deterministic count of the work a command costs, against a budget.

Run from the repository root (about a minute; ``tests/test_cost_gate.py`` runs it)::

    python bench/cost_gate.py                 # count, compare with bench/budget.json
    python bench/cost_gate.py --json out.json # the same, every figure in out.json
    python bench/cost_gate.py --write-budget  # set the budget to this checkout's counts

The count is Python's own: every function call, Python or C (the ``call`` and
``c_call`` events of ``sys.setprofile``), divided by the commands played. It does not
depend on the machine, its load or its clock: the same code gives the same count, to
the call. Wall time is never measured. Everything random is fixed first: the hash seed
(the script runs itself again under ``PYTHONHASHSEED=0``), trio's scheduling order,
``random``, the ``secrets`` the server draws ids and tokens from, the store's dice
secret; the clock is trio's ``MockClock``, which never moves, so no timer fires.

Two workloads, each warmed up before it is counted:

- ``engine``: the rules engine alone, ``Engine.handle`` on the real mix of
  ``bench/engine_bench.py`` (6 creatures on the tavern, seeded dice), counting only
  inside ``Engine.handle``.
- ``server``: the whole server path from a request's bytes to the frames written,
  for the load benchmark's command loop (``bench/load/generator.py``: the GM, two
  players and three spectators on one encounter; moves, attacks, opportunity attacks
  taken with ``decide``, notes, turns ended). A real ``ZonekeepServer`` on an
  ``InMemoryStore`` serves six connections whose socket is an in-memory stream: what a
  client sends is fed to the server's ``Connection`` as bytes (masked websocket frames),
  what the server writes (its fast path's non-blocking write and its writer task
  alike) lands in memory. The workload is recorded once on one server (a client that
  reads every reply and event, to answer the opportunity attacks), then replayed byte
  for byte on a second, identical server, where only the server's own work runs
  between a command's bytes in and the moment every task is idle again
  (``trio.testing.wait_all_tasks_blocked``). The replay must give the same frames to
  every connection, or the gate stops (something was not deterministic).

The gate fails (exit status 1) when a count is more than ``tolerance`` (5%) above
``bench/budget.json``. A change that needs more work raises the budget in the same
commit (``--write-budget``) and says why in the commit message. ``ZONEKEEP_COST_GATE_EXTRA=F``
adds F x the budget of deliberate extra calls to every command (the check that the gate
fails on a regression).
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import random
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUDGET = HERE / "budget.json"
SEED = 29
#: Commands counted (after the warm-up) in each workload.
ENGINE_COMMANDS = 5000
SERVER_COMMANDS = 1200
WARMUP_COMMANDS = 40


def _reexec_with_fixed_hash_seed() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        raise SystemExit(subprocess.call([sys.executable, *sys.argv], env=env))


# -- counting --------------------------------------------------------------------------------


class Counter:
    """Counts the calls (Python and C) made while it is on; beside them, for the record
    (not gated), the collector's young collections and the memory blocks kept."""

    def __init__(self) -> None:
        self.calls = 0
        self.c_calls = 0
        self.young_collections = 0
        self.blocks_kept = 0

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            self.calls += 1
        elif event == "c_call":
            self.c_calls += 1

    @contextmanager
    def on(self) -> Iterator[None]:
        young = gc.get_stats()[0]["collections"]
        blocks = sys.getallocatedblocks()
        sys.setprofile(self._profile)
        try:
            yield
        finally:
            sys.setprofile(None)
            self.blocks_kept += sys.getallocatedblocks() - blocks
            self.young_collections += gc.get_stats()[0]["collections"] - young

    def figures(self, commands: int) -> dict[str, Any]:
        return {
            "commands": commands,
            "calls": self.calls,
            "c_calls": self.c_calls,
            "calls_per_command": self.total / commands,
            "young_collections_per_1000_commands": 1000 * self.young_collections / commands,
            "blocks_kept_per_command": self.blocks_kept / commands,
        }

    @property
    def total(self) -> int:
        return self.calls + self.c_calls


def _burn(n: int) -> None:
    """``n`` deliberate calls (the injected regression of ``ZONEKEEP_COST_GATE_EXTRA``)."""
    for _ in range(n):
        _nothing()


def _nothing() -> None:
    return None


def extra_calls(workload: str) -> int:
    """Calls to add to each command of ``workload``: ``ZONEKEEP_COST_GATE_EXTRA`` x its budget."""
    fraction = float(os.environ.get("ZONEKEEP_COST_GATE_EXTRA", "0") or 0)
    if not fraction:
        return 0
    budget = json.loads(BUDGET.read_text())["calls_per_command"][workload]
    return round(fraction * budget)


def fix_randomness() -> None:
    """The same draws in every run: ``random``, trio's scheduler, and the ``secrets``
    the server's modules take ids and tokens from (a seeded stand-in of their own, so
    that the client's draws, websocket keys and masks, do not move them)."""
    import types

    import trio

    import zonekeep.server

    random.seed(SEED)
    rng = random.Random(SEED)

    def token_bytes(n: int | None = 32) -> bytes:
        return rng.randbytes(32 if n is None else n)

    seeded = types.SimpleNamespace(
        token_bytes=token_bytes,
        token_hex=lambda n=32: token_bytes(n).hex(),
        token_urlsafe=lambda n=32: token_bytes(n).hex(),
        compare_digest=secrets.compare_digest,
    )
    for name, module in list(sys.modules.items()):
        if name.startswith(zonekeep.server.__name__) and getattr(module, "secrets", None) in (
            secrets,
            SEEDED[0],
        ):
            module.secrets = seeded  # type: ignore[attr-defined]
    SEEDED[0] = seeded
    trio._core._run._r.seed(SEED)  # the order a batch of runnable tasks runs in


#: The current seeded stand-in for ``secrets`` (see :func:`fix_randomness`).
SEEDED: list[Any] = [None]


# -- the engine alone --------------------------------------------------------------------------


def count_engine(commands: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from engine_bench import Engine, Player  # the benchmark's real mix, seeded

    engine = Engine()
    counter = Counter()
    handle = engine.handle
    burn = extra_calls("engine")

    def counted(*args: Any, **kwargs: Any) -> Any:
        with counter.on():
            if burn:
                _burn(burn)
            return handle(*args, **kwargs)

    player = Player(engine, 6, SEED, mix="real")
    while player.commands < WARMUP_COMMANDS * 5:
        player.turn()
    engine.handle = counted  # type: ignore[method-assign]
    start = player.commands
    while player.commands - start < commands:
        player.turn()
    done = player.commands - start
    return {**counter.figures(done), "refused": player.refused}


# -- the whole server path, in memory -------------------------------------------------------------


def count_server(commands: int) -> dict[str, Any]:
    import trio
    import trio.testing

    recording: list[tuple[int, bytes, bool]] = []
    first = trio.run(_record, recording, commands, clock=trio.testing.MockClock())
    counter = Counter()
    second = trio.run(_replay, recording, counter, clock=trio.testing.MockClock())
    if first["frames"] != second["frames"]:
        raise SystemExit(
            "cost gate: the replay sent other frames than the recording "
            f"({first['frames']} and {second['frames']}): the workload is not deterministic"
        )
    played = sum(1 for _, _, counted in recording if counted)
    return {
        **counter.figures(played),
        "events": first["events"],
        "events_per_command": first["events"] / played,
        "frames": second["frames"],
        "refused": first["refused"],
    }


class MemorySocket:
    """The server's end of one connection, in memory. ``feed`` hands it the client's
    bytes; everything the server writes, by its fast path's ``write_now`` or by
    ``send_all``, lands in ``out``."""

    def __init__(self) -> None:
        import trio

        self.out = io.BytesIO()
        self.read_at = 0
        self._incoming = bytearray()
        self._lot = trio.lowlevel.ParkingLot()
        self._closed = False

    def feed(self, data: bytes) -> None:
        self._incoming += data
        self._lot.unpark_all()

    def take_output(self) -> bytes:
        data = self.out.getvalue()[self.read_at :]
        self.read_at += len(data)
        return data


def _stream_class() -> type:
    import trio

    class MemoryStream(trio.abc.HalfCloseableStream):
        def __init__(self, socket: MemorySocket) -> None:
            self.socket = socket

        async def receive_some(self, max_bytes: int | None = None) -> bytes:
            sock = self.socket
            if sock._incoming or sock._closed:
                await trio.lowlevel.checkpoint()
            while not sock._incoming and not sock._closed:
                await sock._lot.park()
            data = bytes(sock._incoming)
            sock._incoming.clear()
            return data

        async def send_all(self, data: bytes | bytearray | memoryview) -> None:
            self.socket.out.write(data)
            await trio.lowlevel.checkpoint()

        async def wait_send_all_might_not_block(self) -> None:
            await trio.lowlevel.checkpoint()

        async def send_eof(self) -> None:
            await trio.lowlevel.checkpoint()

        async def aclose(self) -> None:
            self.socket._closed = True
            self.socket._lot.unpark_all()
            await trio.lowlevel.checkpoint()

    return MemoryStream


class Harness:
    """A ``ZonekeepServer`` on an ``InMemoryStore``, without listeners: connections are
    opened in memory and handed to the server's own connection handler."""

    def __init__(self, nursery: Any) -> None:
        from zonekeep.server import _metrics
        from zonekeep.server._app import ZonekeepServer
        from zonekeep.server._config import Limits, ServerConfig
        from zonekeep.server._store import InMemoryStore

        fix_randomness()
        store = InMemoryStore()
        store._dice_secret = b"zonekeep cost gate".ljust(32, b".")
        big = 1_000_000
        limits = Limits(
            rate_per_second=float(big), rate_burst=big, abuse_refusals=big,
            max_connections_per_encounter=64, max_spectators_per_encounter=64,
            max_connections_per_token=big, max_connections_per_ip=big,
            encounters_per_hour=big, open_encounters=big, reply_bytes_burst=big * big,
            idle_timeout_seconds=float(big),
        )  # fmt: skip
        self.server = ZonekeepServer(
            ServerConfig(port=0, store="memory", limits=limits), store=store
        )
        self.bound = _metrics.bind(self.server.metrics)
        self.nursery = nursery
        self.stream_class = _stream_class()

    async def start(self) -> None:
        server = self.server
        server._nursery = server.registry.nursery = self.nursery
        await server.registry.start()
        self.nursery.start_soon(server.flusher.run)
        server.ready = True

    def open(self) -> tuple[MemorySocket, Any]:
        """A connection whose opening handshake is done: its socket and the client's
        Sans-I/O protocol (OPEN)."""
        from websockets.client import ClientProtocol
        from websockets.server import ServerProtocol
        from websockets.uri import parse_uri

        from zonekeep.server._connection import Connection, _protocol_log

        limits = self.server.config.limits
        client = ClientProtocol(parse_uri("ws://127.0.0.1/ws"))
        client.send_request(client.connect())
        protocol = ServerProtocol(max_size=4 * limits.max_message_bytes, logger=_protocol_log)
        protocol.receive_data(b"".join(client.data_to_send()))
        (request,) = protocol.events_received()
        protocol.send_response(protocol.accept(request))
        client.receive_data(b"".join(protocol.data_to_send()))
        client.events_received()
        sock = MemorySocket()
        connection = Connection(
            self.stream_class(sock),
            protocol,
            limits,
            self.server.flusher,
            "127.0.0.1",
            sock.out.write,
        )
        connection.host = "127.0.0.1"  # the handshake's Host: the operator, on the loopback
        self.nursery.start_soon(self.server._handler, connection)
        return sock, client


async def _record(recording: list[tuple[int, bytes, bool]], commands: int) -> dict[str, Any]:
    """Play the load benchmark's loop on one encounter through six in-memory
    connections, reading every reply and event; record every client's bytes."""
    import trio
    import trio.testing
    from websockets.frames import Frame, Opcode

    sys.path.insert(0, str(HERE / "load"))
    from generator import POSITIONS, ROSTER, Plan

    async with trio.open_nursery() as nursery:
        harness = Harness(nursery)
        await harness.start()
        conns = [harness.open() for _ in range(6)]
        ids = iter(range(1, 1 << 30))
        frames = [0] * 6
        events_seen = 0
        refused = 0

        async def send(ci: int, method: str, counted: bool, **params: Any) -> list[Any]:
            """Send a request from connection ``ci``; every connection's messages since."""
            sock, client = conns[ci]
            rid = next(ids)
            client.send_text(json.dumps({"id": rid, "method": method, "params": params}).encode())
            data = b"".join(client.data_to_send())
            recording.append((ci, data, counted))
            sock.feed(data)
            await trio.testing.wait_all_tasks_blocked()
            received: list[Any] = []
            for i, (s, c) in enumerate(conns):
                c.receive_data(s.take_output())
                for event in c.events_received():
                    if isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                        frames[i] += 1
                        received.append((i, json.loads(event.data)))
            for i, msg in received:
                if i == ci and msg.get("id") == rid:
                    return [msg, received]
            raise RuntimeError(f"no reply to {method}")

        def result(answer: list[Any]) -> dict[str, Any]:
            if "error" in answer[0]:
                raise RuntimeError(f"refused: {answer[0]['error']}")
            found: dict[str, Any] = answer[0]["result"]
            return found

        hello = {"protocol": "1.0", "client": {"name": "cost-gate", "version": "1"}}
        for ci in range(6):
            await send(ci, "hello", False, **hello)
        made = result(await send(0, "create_encounter", False, name="gate", arena="tavern",
                                 creatures=ROSTER))  # fmt: skip
        eid = made["encounter"]
        alice = result(await send(0, "create_seat", False, encounter=eid, player="alice"))
        bob = result(await send(0, "create_seat", False, encounter=eid, player="bob"))
        spec = result(await send(0, "create_spectator_link", False, encounter=eid))
        for kind, params in (
            ("set_surprise", {"surprised": []}),
            ("place", {"positions": POSITIONS}),
            ("roll_initiative", {}),
        ):
            result(await send(0, "command", False, encounter=eid, type=kind, params=params))
        tokens = [made["gm_token"], alice["token"], bob["token"], spec["token"]]
        for ci in range(6):
            result(await send(ci, "join", False, encounter=eid, token=tokens[min(ci, 3)]))
        plan = Plan(6)
        offers: list[str] = []
        active: str | None = None
        for n in range(WARMUP_COMMANDS + commands):
            cmd = plan.next(offers)
            answer = await send(
                cmd.sender, "command", n >= WARMUP_COMMANDS,
                encounter=eid, type=cmd.type, params=cmd.params,
            )  # fmt: skip
            for i, msg in answer[1]:
                if i != 0 or msg.get("method") != "event":
                    continue
                event = msg["params"]["event"]
                if n >= WARMUP_COMMANDS:
                    events_seen += 1
                kind = event.get("type")
                if kind == "decision_opened":
                    offers.append(event["decision"]["id"])
                elif kind == "decision_resolved" and event["decision"] in offers:
                    offers.remove(event["decision"])
                elif kind == "turn_started":
                    active = event["creature"]
            if "error" in answer[0]:
                refused += 1
                if active is not None:
                    plan.resync(active)
        nursery.cancel_scope.cancel()
    return {"frames": frames, "events": events_seen, "refused": refused}


async def _replay(recording: list[tuple[int, bytes, bool]], counter: Counter) -> dict[str, Any]:
    """The recorded bytes again, on a fresh server; count the commands' work."""
    import trio
    import trio.testing
    from websockets.frames import Frame, Opcode

    async with trio.open_nursery() as nursery:
        harness = Harness(nursery)
        await harness.start()
        conns = [harness.open() for _ in range(6)]
        wait = trio.testing.wait_all_tasks_blocked
        burn = extra_calls("server")
        for ci, data, counted in recording:
            sock = conns[ci][0]
            if counted:
                with counter.on():
                    if burn:
                        _burn(burn)
                    sock.feed(data)
                    await wait()
            else:
                sock.feed(data)
                await wait()
        frames = [0] * 6
        for i, (sock, client) in enumerate(conns):
            client.receive_data(sock.take_output())
            frames[i] = sum(
                1
                for e in client.events_received()
                if isinstance(e, Frame) and e.opcode is Opcode.TEXT
            )
        nursery.cancel_scope.cancel()
    return {"frames": frames}


# -- the gate ------------------------------------------------------------------------------------


def measure() -> dict[str, Any]:
    return {"engine": count_engine(ENGINE_COMMANDS), "server": count_server(SERVER_COMMANDS)}


def check(figures: dict[str, Any], budget: dict[str, Any]) -> list[str]:
    """What is over budget, each as a line of the failure message."""
    tolerance = budget["tolerance"]
    over = []
    for workload, allowed in budget["calls_per_command"].items():
        found = figures[workload]["calls_per_command"]
        if found > allowed * (1 + tolerance):
            over.append(
                f"{workload}: {found:,.0f} calls a command, {found / allowed - 1:+.1%} over the "
                f"budget of {allowed:,.0f} (more than {tolerance:.0%})"
            )
    return over


def versions() -> dict[str, str]:
    """The versions the count depends on besides zonekeep's own code."""
    from importlib.metadata import version

    return {
        "python": ".".join(map(str, sys.version_info[:2])),
        **{name: version(name) for name in ("trio", "websockets", "attrs", "cattrs", "pluggy")},
    }


HOW_TO_RAISE = """\
A change made each command cost more work than bench/budget.json allows. Either make it
cheaper again, or, if the work is needed, raise the budget in the same commit:

    python bench/cost_gate.py --write-budget

and say in that commit's message why the command needs the extra work."""


def main(argv: list[str] | None = None) -> int:
    _reexec_with_fixed_hash_seed()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", default="", metavar="OUT", help="write every figure to OUT")
    parser.add_argument(
        "--write-budget", action="store_true", help="set bench/budget.json to these counts"
    )
    args = parser.parse_args(argv)
    figures = measure()
    budget = json.loads(BUDGET.read_text()) if BUDGET.exists() else None
    print("cost gate: calls (Python and C) per command, a deterministic count")
    for workload in ("engine", "server"):
        f = figures[workload]
        allowed = budget["calls_per_command"].get(workload) if budget else None
        versus = (
            f" (budget {allowed:,.0f}: {f['calls_per_command'] / allowed - 1:+.1%})"
            if allowed
            else ""
        )
        print(
            f"  {workload}: {f['calls_per_command']:,.1f} over {f['commands']} commands{versus}; "
            f"not gated: {f['young_collections_per_1000_commands']:.1f} young collections a "
            f"1000 commands, {f['blocks_kept_per_command']:.1f} memory blocks kept a command"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    if args.write_budget:
        new = {
            "tolerance": budget["tolerance"] if budget else 0.05,
            "measured_with": versions(),
            "calls_per_command": {
                w: round(figures[w]["calls_per_command"]) for w in ("engine", "server")
            },
        }
        BUDGET.write_text(json.dumps(new, indent=2) + "\n")
        print(f"wrote {BUDGET.relative_to(ROOT)}: say why in the commit message")
        return 0
    if budget is None:
        print("cost gate: no bench/budget.json (write one with --write-budget)")
        return 1
    if budget.get("measured_with") != versions():
        print(
            f"note: the budget was counted with {budget.get('measured_with')}, this is "
            f"{versions()}: other versions make other calls"
        )
    over = check(figures, budget)
    if over:
        print("COST GATE FAILED:")
        for line in over:
            print("   ", line)
        print(HOW_TO_RAISE)
        return 1
    print("cost gate: OK, within the budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
