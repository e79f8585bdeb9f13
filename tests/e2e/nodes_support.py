"""Nodes as real ``zonekeep serve`` processes on one PostgreSQL store, for the tests
that pause (SIGSTOP) or kill (SIGKILL) one of them, and the lease table as the store
has it."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import helpers
import trio
from helpers import banner_lines, serve_argv
from postgres_support import schema_of, sql


class NodeProcess:
    """One ``zonekeep serve`` node: its id, process and websocket URL."""

    def __init__(self, store: str, name: str, data_dir: Path, lease: float, port: int = 0) -> None:
        self.name = name
        env = {
            **os.environ,
            "ZONEKEEP_SERVER_STORE": store,
            "ZONEKEEP_SERVER_LEASE_SECONDS": str(lease),
            "ZONEKEEP_SERVER_STORE_POOL_SIZE": "2",
        }
        self.log = (data_dir / f"{name}.log").open("a")
        self.proc = subprocess.Popen(
            serve_argv(data_dir / name, "--node-id", name, "--port", str(port)),
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        lines = banner_lines(self.proc)
        serving = next((line for line in lines if " serving on ws://" in line), None)
        if serving is None:
            self.stop()
            raise RuntimeError(f"node {name} did not start: {lines}")
        self.url = serving.split(" serving on ", 1)[1].split()[0]
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(helpers.deadline(10))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(helpers.deadline(15))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(helpers.deadline(5))
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.log.close()


@contextmanager
def nodes(
    store: str, names: list[str], data_dir: Path, lease: float
) -> Iterator[dict[str, NodeProcess]]:
    """Start a node per name (stopped again at the end, each whichever way it ended)."""
    started: dict[str, NodeProcess] = {}
    try:
        for name in names:
            started[name] = NodeProcess(store, name, data_dir, lease)
        yield started
    finally:
        for node in started.values():
            node.stop()


def lease(store: str, eid: str) -> tuple[str, int, bool]:
    """``eid``'s lease: its node, its epoch, whether it is live (not expired)."""
    ((node, epoch, live),) = sql(
        f"SELECT node, epoch, expires > extract(epoch FROM clock_timestamp()) "
        f"FROM {schema_of(store)}.leases WHERE encounter = '{eid}'"
    )
    return str(node), int(str(epoch)), bool(live)


def events(store: str, eid: str) -> list[tuple[int, str]]:
    """Every stored ``(seq, data)`` of ``eid``, in seq order."""
    rows = sql(
        f"SELECT seq, data FROM {schema_of(store)}.events WHERE encounter='{eid}' ORDER BY seq"
    )
    return [(int(str(seq)), str(data)) for seq, data in rows]


async def until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    """Wait for ``condition`` (looked at every 20 ms) for at most ``seconds``."""
    with trio.move_on_after(helpers.deadline(seconds)):
        while not condition():
            await trio.sleep(0.02)
        return
    raise AssertionError(f"not within {seconds:g} s: {what}")
