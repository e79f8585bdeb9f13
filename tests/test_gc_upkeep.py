"""The garbage-collection upkeep of ``zonekeep serve`` (server/_gc.py): its schedule on a
mock clock with recording stand-ins for the gc calls, and once with the real ones."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from zonekeep.server import ServerConfig, load_config
from zonekeep.server._gc import NEVER, YOUNG_BURST, GcUpkeep


class Recorder:
    """Stand-ins for the gc calls, writing down what was called, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.thresholds = (700, 10, 10)

    def upkeep(self, **kw: Any) -> GcUpkeep:
        return GcUpkeep(
            **kw,
            collect=self.collect,
            freeze=lambda: self.calls.append("freeze"),
            unfreeze=lambda: self.calls.append("unfreeze"),
            suspend=self.suspend,
            resume=self.resume,
        )

    def collect(self, generation: int) -> int:
        self.calls.append(f"collect{generation}")
        return 0

    def suspend(self) -> tuple[int, int, int]:
        saved = self.thresholds
        self.thresholds = (saved[0], NEVER, NEVER)
        return saved

    def resume(self, saved: tuple[int, int, int]) -> None:
        self.thresholds = saved


async def run_for(upkeep: GcUpkeep, seconds: float) -> None:
    with trio.move_on_after(seconds):
        await upkeep.run()


async def test_start_collects_everything_once_then_freezes() -> None:
    rec = Recorder()
    rec.upkeep().start()
    assert rec.calls == ["collect2", "freeze"]


async def test_young_collections_every_20_ms_and_a_freeze_every_second(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rec = Recorder()
    upkeep = rec.upkeep(freeze_seconds=1.0, full_seconds=0)
    await run_for(upkeep, 2.5)
    assert rec.calls.count("freeze") == 2 == upkeep.rounds
    assert set(rec.calls) == {"collect1", "freeze"}  # never a full collection
    # 125 ticks of 20 ms in 2.5 s, two of them freezes (give or take the last tick)
    assert 121 <= rec.calls.count("collect1") == upkeep.young_rounds <= 123
    assert rec.thresholds == (700, 10, 10)  # restored on the way out


async def test_older_generations_are_left_alone_only_while_it_runs(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rec = Recorder()
    upkeep = rec.upkeep()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(upkeep.run)
        await trio.sleep(0.5)
        assert rec.thresholds == (700, NEVER, NEVER)
        nursery.cancel_scope.cancel()
    assert rec.thresholds == (700, 10, 10)


async def test_a_full_collection_unfreezes_collects_all_and_freezes_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    rec = Recorder()
    upkeep = rec.upkeep(freeze_seconds=1.0, full_seconds=5.0)
    await run_for(upkeep, 11.0)
    assert upkeep.full_rounds == 2  # at 5 s and at 10 s
    first = rec.calls.index("unfreeze")
    assert rec.calls[first : first + 3] == ["unfreeze", "collect2", "freeze"]
    assert rec.calls.count("unfreeze") == rec.calls.count("collect2") == 2


async def test_turned_off_it_does_nothing(autojump_clock: trio.testing.MockClock) -> None:
    rec = Recorder()
    upkeep = rec.upkeep(freeze_seconds=0)
    upkeep.start()
    await run_for(upkeep, 3.0)
    assert rec.calls == []
    assert rec.thresholds == (700, 10, 10)


async def test_with_the_real_collector_objects_are_frozen_and_thresholds_restored() -> None:
    before = gc.get_threshold()
    upkeep = GcUpkeep(freeze_seconds=0.05, full_seconds=0.2)
    try:
        upkeep.start()
        assert gc.get_freeze_count() > 0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(upkeep.run)
            await trio.sleep(0.01)
            assert gc.get_threshold() == (max(before[0], YOUNG_BURST), NEVER, NEVER)
            await trio.sleep(0.4)
            nursery.cancel_scope.cancel()
        assert upkeep.rounds >= 1 and upkeep.full_rounds >= 1 and upkeep.young_rounds >= 1
        assert upkeep.last_full_pause > 0
        assert gc.get_threshold() == before
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_config_refuses_negative_seconds(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="gc_freeze_seconds must be a number of seconds"):
        ServerConfig(gc_freeze_seconds=-1)
    path = tmp_path / "server.toml"
    path.write_text("[server]\ngc_full_seconds = -5\n")
    with pytest.raises(
        ValueError, match=r"server\.toml: server\.gc_full_seconds: -5 is not a number"
    ):
        load_config(path)
    path.write_text("[server]\ngc_freeze_seconds = 0\ngc_full_seconds = 600\n")
    config = load_config(path)
    assert (config.gc_freeze_seconds, config.gc_full_seconds) == (0, 600)


def test_accepted_commands_and_a_players_masked_command_leave_no_reference_cycles() -> None:
    """Played commands make no reference cycles, which only the collector can free (a
    recursive closure in ``Room.mask`` made one per player command, 4 objects each, found
    by the collector's young rounds; a refused command's traceback still makes some)."""
    from test_server_methods import Table, call, gm_and_alice

    from zonekeep.sdk import Command
    from zonekeep.server import Limits

    measured: list[list[object]] = []

    async def play() -> None:
        async with trio.open_nursery() as nursery:
            table = Table(nursery, Limits(rate_per_second=1000, rate_burst=1000))
            gm, gm_out, alice, _, eid, token = await gm_and_alice(table)
            await call(alice, 3, "join", encounter=eid, token=token)
            room = table.registry.get(eid)
            assert room is not None
            member = alice.rooms[eid]
            note = {"type": "add_note", "params": {"text": "x"}}
            for first in (10, 100):  # a first round imports and builds what play needs
                if first == 100:  # from here, what a collection finds is kept to look at
                    gc.collect()
                    gc.set_debug(gc.DEBUG_SAVEALL)
                for rid in range(first, first + 30):
                    await call(gm, rid, "command", encounter=eid, **note)
                    # The ogre is hidden from players: the mask swaps its id for another.
                    attack = Command("attack", {"creature": "aria", "target": "ogre"}, member.actor)
                    masked, swaps = room.mask(attack, member)
                    assert masked.params["target"] != "ogre" and list(swaps.values()) == ["ogre"]
                assert [m.get("method") for m in gm_out.take()] == ["event", None] * 30
            gc.collect()
            measured.append(list(gc.garbage))
            nursery.cancel_scope.cancel()

    try:
        trio.run(play)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert measured == [[]]
