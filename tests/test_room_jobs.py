"""A room runs one job at a time, in order, whether the job runs in its sender's task
(``Room.submit`` when the room is idle: no task switch, no inbox) or in the room's
loop (when another job is running or queued). On trio's mock clock, no sockets; the
store holds an append until the test lets it go, so that jobs overlap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import trio
import trio.testing
from helpers import deadline
from test_room_deadlines import engaged

from zonekeep.protocol import CommandResult
from zonekeep.sdk import GM_ACTOR, Command, Event
from zonekeep.server._room import Job, Room
from zonekeep.server._store import InMemoryStore


class HeldStore(InMemoryStore):
    """Appends wait for ``release`` while ``hold`` is set; ``entered`` counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.release = trio.Event()
        self.entered = 0

    async def append(
        self,
        encounter: str,
        first_seq: int,
        events: Sequence[Event],
        *,
        snapshot: dict[str, Any] | None = None,
        finished: bool = False,
    ) -> None:
        self.entered += 1
        if self.hold:
            await self.release.wait()
        await super().append(encounter, first_seq, events, snapshot=snapshot, finished=finished)


def note(text: str) -> Job:
    return Job(GM_ACTOR, Command("add_note", {"text": text}, GM_ACTOR), None)


def held_room() -> tuple[Room, HeldStore]:
    """The deadlines tests' engaged encounter, in a room on a :class:`HeldStore`."""
    h = engaged()
    store = HeldStore()
    store.append_now("test", 1, h.events)
    return Room("test", h.engine, store, h.state), store


async def test_an_idle_room_runs_a_job_in_its_senders_task() -> None:
    room, store = held_room()
    # No loop runs: the job can only have run in this task.
    with trio.fail_after(deadline(5)):
        job = await room.submit(note("first"))
    assert job.error is None and isinstance(job.result, CommandResult)
    assert store.entered == 1
    assert room.state.seq == job.result.last_seq


async def test_jobs_overlapping_run_one_at_a_time_in_order() -> None:
    room, store = held_room()
    store.hold = True
    done: list[str] = []

    async def send(text: str) -> None:
        job = await room.submit(note(text))
        assert job.error is None
        done.append(text)

    with trio.fail_after(deadline(5)):
        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(room.run)
                nursery.start_soon(send, "first")  # idle room: runs in this task, held
                await trio.testing.wait_all_tasks_blocked()
                assert store.entered == 1
                nursery.start_soon(send, "second")  # queued for the loop, which waits
                await trio.testing.wait_all_tasks_blocked()
                assert store.entered == 1 and done == []
                drained = trio.Event()

                async def drain() -> None:
                    await room.drain()
                    drained.set()

                nursery.start_soon(drain)
                await trio.testing.wait_all_tasks_blocked()
                assert not drained.is_set()
                store.release.set()
                await drained.wait()
                assert done == ["first", "second"]  # the drain waited for both
                nursery.cancel_scope.cancel()
            finally:
                store.release.set()  # a held append is shielded: never leave it waiting
    texts = [n.text for n in room.state.notes.values()]
    assert texts[-2:] == ["first", "second"]


async def test_a_job_run_in_its_senders_task_survives_the_sender_going_away() -> None:
    room, store = held_room()
    store.hold = True
    before = room.state.seq
    with trio.fail_after(deadline(5)):
        async with trio.open_nursery() as nursery:
            sender = trio.CancelScope()

            async def send() -> None:
                with sender:
                    await room.submit(note("kept"))

            try:
                nursery.start_soon(send)
                await trio.testing.wait_all_tasks_blocked()
                sender.cancel()  # the client went away while its command was being stored
                await trio.testing.wait_all_tasks_blocked()
                assert room.state.seq == before  # still being stored: nothing half done
            finally:
                store.release.set()
    assert room.state.seq == before + 1
    assert list(room.state.notes.values())[-1].text == "kept"
    # And the room is idle again: the next job runs at once.
    store.hold = False
    with trio.fail_after(deadline(5)):
        job = await room.submit(note("next"))
    assert job.error is None and list(room.state.notes.values())[-1].text == "next"


async def test_a_job_run_in_its_senders_task_stops_with_the_rooms_loop() -> None:
    """A store that never answers does not hold up the server's stop: when the loop is
    cancelled (the room unloaded, the server stopping), so is a job running in its
    sender's task, as the loop's own job would be; nothing changed."""
    room, store = held_room()
    store.hold = True
    before = room.state.seq
    jobs: list[Job] = []

    async def send() -> None:
        jobs.append(await room.submit(note("never stored")))

    with trio.fail_after(deadline(5)):
        async with trio.open_nursery() as nursery:
            loop = trio.CancelScope()

            async def run_loop() -> None:
                with loop:
                    await room.run()

            nursery.start_soon(run_loop)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(send)
            await trio.testing.wait_all_tasks_blocked()
            assert store.entered == 1
            loop.cancel()
            await trio.testing.wait_all_tasks_blocked()
            store.release.set()  # (too late to matter, unless the job outlived the loop)
    (job,) = jobs
    assert job.result is None and job.error is not None
    assert job.error.name == "unknown_encounter"
    assert room.state.seq == before
