"""The web table checks fair dice itself: once the seed is revealed, each page recomputes
every roll it can see (Web Crypto, server/static/dice.js) and says "Dice verified"; a
seeded encounter is marked "seeded dice"; the same JavaScript refuses a tampered log."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from browser.browser_support import STEP_MS, open_page, server_in_thread

from zonekeep.protocol.client import ClientError, connect

VECTORS = Path(__file__).resolve().parents[1] / "fixtures" / "dice_vectors.json"


@pytest.fixture
def fair_server(tmp_path: Path) -> Iterator[str]:
    """A server in a thread with no test entropy (its dice are the fair ones); its base URL."""
    with server_in_thread(tmp_path / "server") as (base, _):
        yield base


ROSTER = [
    {"id": "aria", "name": "Aria", "side": "party", "controller": "alice", "hp": 20,
     "max_hp": 20, "ac": 14, "zone": "common_room",
     "attacks": [{"name": "blade", "kind": "melee", "bonus": 4, "damage": "1d6+2"}]},
    {"id": "gob", "name": "Goblin", "side": "goblins", "hp": 30, "max_hp": 30, "ac": 13,
     "zone": "common_room",
     "attacks": [{"name": "blade", "kind": "melee", "bonus": 4, "damage": "1d6+2"}]},
]  # fmt: skip


def protocol(base: str, steps: Any) -> Any:
    async def run() -> Any:
        async with connect(base.replace("http://", "ws://") + "/ws") as gm:
            return await steps(gm)

    return trio.run(run)


def _open(browser: Any, url: str) -> Any:
    return open_page(browser.new_context(viewport={"width": 1280, "height": 900}), url)


def test_a_fair_encounter_played_to_its_end_is_verified_in_the_page(
    browser: Any, fair_server: str
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)

    async def create(gm: Any) -> tuple[str, str, str]:
        made = await gm.create_encounter("Fair fight", "tavern", ROSTER)
        eid = made["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        return eid, made["gm_token"], seat["token"]

    eid, gm_token, alice_token = protocol(fair_server, create)
    gm = _open(browser, f"{fair_server}/table/#encounter={eid}&token={gm_token}")
    alice = _open(browser, f"{fair_server}/table/#encounter={eid}&token={alice_token}")
    for page in (gm, alice):
        expect(page.locator("#status")).to_contain_text("Connected as")
        expect(page.locator("#dice")).to_have_text(
            re.compile(r"^Fair dice · commitment [0-9a-f]{12}…$")
        )

    async def play(client: Any) -> int:
        await client.join(eid, gm_token)
        await client.command(eid, "set_surprise", surprised=[])
        await client.command(eid, "place", positions={})
        await client.command(eid, "roll_initiative")
        # A free roll at the table (protocol 1.6) is checked like the rules' rolls.
        await client.request("roll", encounter=eid, dice="2d6+1", label="Luck")
        for _ in range(6):
            snap = (await client.request("snapshot", encounter=eid))["snapshot"]
            if snap["phase"] == "ended":  # the dice decided it early
                break
            active = snap["active"]
            target = "gob" if active == "aria" else "aria"
            with contextlib.suppress(ClientError):  # a creature down cannot attack
                await client.command(eid, "attack", creature=active, target=target)
            with contextlib.suppress(ClientError):
                await client.command(eid, "end_turn", creature=active)
        snap = (await client.request("snapshot", encounter=eid))["snapshot"]
        if snap["phase"] != "ended":
            await client.command(eid, "end_encounter", force=True)
        joined = await client.join(eid, gm_token, last_seq=0)
        from zonekeep.sdk.host import dice_in

        return sum(len(dice_in(e)) for e in joined["events"])

    rolls = protocol(fair_server, play)
    assert rolls >= 3
    for page in (gm, alice):
        expect(page.locator("#dice")).to_have_text(f"Dice verified: {rolls} rolls")
        assert page.errors == []


def test_a_seeded_encounter_is_marked_and_a_tampered_log_fails_in_the_browser(
    browser: Any, fair_server: str
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)

    async def create(gm: Any) -> tuple[str, str]:
        made = await gm.create_encounter(
            "Replay", "tavern", ROSTER, dice={"mode": "seeded", "seed": "replay-1"}
        )
        return made["encounter"], made["gm_token"]

    eid, token = protocol(fair_server, create)
    page = _open(browser, f"{fair_server}/table/#encounter={eid}&token={token}")
    expect(page.locator("#dice")).to_have_text("seeded dice")
    # The page's own verifier (Chromium's Web Crypto) on the shared vectors.
    vectors = json.loads(VECTORS.read_text())
    results = page.evaluate(
        """async (logs) => {
            const out = [];
            for (const c of logs) {
              try { await window.zonekeepDice.verifyLog(c.log); out.push(null); }
              catch (e) { out.push(e.counter); }
            }
            return out;
        }""",
        vectors["logs"],
    )
    assert results == [None if c["ok"] else c["counter"] for c in vectors["logs"]]
    assert page.errors == []
