"""``zonekeep serve --example`` after a restart (issue 32, point 1): the same encounter
and the same tokens, printed again; the GM and the players who joined with them keep
their seats. ``--new-links`` is the one way to get fresh links (the old GM token
revoked, as ``encounter_links``)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio
from helpers import banner_lines, deadline, serve_argv
from lobby_support import refused

from zonekeep.protocol.client import connect
from zonekeep.server._links import EXAMPLE_TOKENS_FILE

EXAMPLE = Path(__file__).parents[2] / "examples" / "encounters" / "goblin-ambush.json"


class Banner:
    """What a ``zonekeep serve --example`` printed: its URL, encounter and tokens."""

    def __init__(self, lines: list[str]) -> None:
        self.text = "\n".join(lines)
        serving = next(x for x in lines if " serving on " in x)
        self.url = serving.split(" serving on ", 1)[1].split()[0]
        self.encounter = next(x for x in lines if x.startswith("Encounter ")).rsplit(" ", 1)[-1]
        self.gm = next(x for x in lines if "GM token:" in x).split()[-1]
        self.alice = next(x for x in lines if x.lstrip().startswith("seat alice:")).split()[2]
        self.spectator = next(x for x in lines if "spectators:" in x).split()[-1]


@contextmanager
def serving(data: Path, *extra: str) -> Iterator[Banner]:
    """A real ``zonekeep serve --example`` keeping its encounters in ``data``, stopped
    with Ctrl-C (a clean shutdown) at the end."""
    proc = subprocess.Popen(
        serve_argv(data, "--example", str(EXAMPLE), *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = banner_lines(proc, deadline(30))
        assert lines and lines[-1].startswith("Stop with Ctrl-C"), "\n".join(lines)
        yield Banner(lines)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=deadline(20)) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def joined_role(url: str, encounter: str, token: str) -> str:
    async with connect(url) as client:
        role: str = (await client.join(encounter, token))["role"]
        return role


async def test_a_restart_prints_the_same_tokens_and_they_still_open_their_seats(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with trio.fail_after(deadline(120)):
        with serving(data) as first:
            assert "is ready" in first.text
            assert await joined_role(first.url, first.encounter, first.gm) == "gm"
            assert await joined_role(first.url, first.encounter, first.alice) == "player"
        kept = data / EXAMPLE_TOKENS_FILE
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600  # tokens: the owner's only
        with serving(data) as second:
            assert f"is back: {first.encounter}" in second.text
            assert (second.gm, second.alice, second.spectator) == (
                first.gm,
                first.alice,
                first.spectator,
            )
            # The GM who had the table keeps it: the token was not revoked.
            assert await joined_role(second.url, first.encounter, first.gm) == "gm"
            assert await joined_role(second.url, first.encounter, first.alice) == "player"
            assert await joined_role(second.url, first.encounter, first.spectator) == "spectator"


async def test_new_links_only_when_asked_and_then_the_old_gm_token_is_revoked(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with trio.fail_after(deadline(120)):
        with serving(data) as first:
            pass
        with serving(data, "--new-links") as fresh:
            assert f"is back: {first.encounter}" in fresh.text
            assert fresh.gm != first.gm and fresh.alice != first.alice
            async with connect(fresh.url) as gm:
                error = await refused(gm.join(first.encounter, first.gm))
                assert error.name == "bad_token"
                assert (await gm.join(first.encounter, fresh.gm))["role"] == "gm"
            # Seats are added, not taken away: alice's old token still opens hers.
            assert await joined_role(fresh.url, first.encounter, first.alice) == "player"
        with serving(data) as third:  # the fresh links are the ones kept from now on
            assert (third.gm, third.alice) == (fresh.gm, fresh.alice)


async def test_a_token_the_gm_revoked_is_not_printed_again(tmp_path: Path) -> None:
    """A kept token that no longer opens its seat (the GM rotated it) is replaced by a
    new one, never printed as if it worked."""
    data = tmp_path / "data"
    with trio.fail_after(deadline(120)):
        with serving(data) as first:
            async with connect(first.url) as gm:
                await gm.join(first.encounter, first.gm)
                await gm.request("rotate_gm_token", encounter=first.encounter)
        with serving(data) as second:
            assert second.gm != first.gm
            assert second.alice == first.alice
            assert await joined_role(second.url, first.encounter, second.gm) == "gm"
