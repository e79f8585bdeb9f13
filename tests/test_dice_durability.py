"""Dice across restarts of a real ``zonekeep serve`` killed with SIGKILL: seeded dice give
the same rolls as a server never killed, and a fair encounter's secret seed and counter
come back (its export verifies once it ends)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from test_durability import roster, validated, zonekeep_serve

from zonekeep.protocol.client import ZonekeepClient, connect
from zonekeep.sdk import die
from zonekeep.sdk.host import EMPTY_MIX, commitment, dice_in
from zonekeep.server._cli import main as cli

__all__ = ["validated"]  # the fixture of test_durability: every message is validated


async def begin(gm: ZonekeepClient, **extra: Any) -> tuple[str, str]:
    with trio.fail_after(helpers.deadline(10)):
        created = await gm.create_encounter("Durable dice", "tavern", roster(), **extra)
        eid = created["encounter"]
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")
    return eid, created["gm_token"]


async def fight(gm: ZonekeepClient, eid: str, turns: int = 3) -> None:
    """A few turns: each active creature attacks someone of the other side."""
    with trio.fail_after(helpers.deadline(20)):
        for _ in range(turns):
            snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
            active = snap["active"]
            side = snap["creatures"][active]["side"]
            foe = next(c for c in snap["creatures"].values() if c["side"] != side)
            await gm.command(eid, "attack", creature=active, target=foe["id"])
            await gm.command(eid, "end_turn", creature=active)


async def all_dice(gm: ZonekeepClient, eid: str, token: str) -> list[tuple[int, int, int]]:
    joined = await gm.join(eid, token, last_seq=0)
    return [d for event in joined["events"] for d in dice_in(event)]


def kill_9(process: trio.Process) -> None:
    process.send_signal(signal.SIGKILL)


@pytest.mark.usefixtures("validated")
async def test_seeded_dice_survive_kill_9_and_match_a_server_never_killed(tmp_path: Path) -> None:
    seeded = {"dice": {"mode": "seeded", "seed": "durable-7"}}
    async with (
        zonekeep_serve(tmp_path / "calm", tmp_path / "calm.log") as calm,
        connect(calm.url) as gm,
    ):
        eid, token = await begin(gm, **seeded)
        await fight(gm, eid, 6)
        unbroken = await all_dice(gm, eid, token)

    data = tmp_path / "killed"
    async with zonekeep_serve(data, tmp_path / "killed.log") as first:
        async with connect(first.url) as gm:
            eid, token = await begin(gm, **seeded)
            await fight(gm, eid, 3)
        kill_9(first.process)
        with trio.fail_after(helpers.deadline(10)):
            await first.process.wait()
    async with (
        zonekeep_serve(data, tmp_path / "killed.log") as second,
        connect(second.url) as gm,
    ):
        await fight_after_join(gm, eid, token, 3)
        again = await all_dice(gm, eid, token)
    assert again == unbroken and len(again) > 8
    assert all(die("durable-7", EMPTY_MIX, c, s) == v for c, s, v in again)


async def fight_after_join(gm: ZonekeepClient, eid: str, token: str, turns: int) -> None:
    with trio.fail_after(helpers.deadline(10)):
        await gm.join(eid, token)
    await fight(gm, eid, turns)


@pytest.mark.usefixtures("validated")
async def test_a_fair_seed_and_its_counter_survive_kill_9(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    async with zonekeep_serve(data, tmp_path / "serve.log") as first:
        async with connect(first.url) as gm:
            eid, token = await begin(gm)
            await fight(gm, eid, 2)
            before = (await gm.request("snapshot", encounter=eid))["snapshot"]["dice"]
            rolled = await all_dice(gm, eid, token)
        kill_9(first.process)
        with trio.fail_after(helpers.deadline(10)):
            await first.process.wait()
    # Everything the killed server left on disk (the store, its WAL).
    left = b"".join(p.read_bytes() for p in sorted(data.iterdir()) if p.is_file())
    async with (
        zonekeep_serve(data, tmp_path / "serve.log") as second,
        connect(second.url) as gm,
    ):
        await fight_after_join(gm, eid, token, 2)
        with trio.fail_after(helpers.deadline(10)):
            await gm.command(eid, "end_encounter", force=True)
        after = (await gm.request("snapshot", encounter=eid))["snapshot"]["dice"]
        everything = await all_dice(gm, eid, token)
    # The same commitment, revealed only now, by a server that never wrote the seed down.
    assert after["commitment"] == before["commitment"] and after["revealed"]
    assert commitment(after["seed"]) == before["commitment"]
    assert everything[: len(rolled)] == rolled
    assert sorted(c for c, _, _ in everything) == list(range(len(everything)))
    assert before["seed"] is None
    assert before["commitment"].encode() in left  # the store was read...
    assert after["seed"].encode() not in left  # ...and it never held the seed
    target = tmp_path / "fair.jsonl"
    assert cli(["export", eid, "--data-dir", str(data), "-o", str(target)]) == 0
    capsys.readouterr()
    assert cli(["verify", str(target)]) == 0, capsys.readouterr().err
