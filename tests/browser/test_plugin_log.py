"""The web table's log shows a readable line for a plugin event it has never seen, from
the template ``hello`` announces for its type (tests/braziers_plugin.py); a GM-only one
stays out of a spectator's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import braziers_plugin as braziers
import helpers
import trio
from browser.browser_support import MaxDice, server_in_thread

from zonekeep.plugins import load_default_plugins
from zonekeep.protocol.client import connect
from zonekeep.sdk.engine import Engine

STEP_MS = helpers.deadline(15_000)
ROSTER = [
    {"id": "aria", "name": "Aria", "side": "party", "hp": 20, "max_hp": 20,
     "initiative_bonus": 10, "zone": "common_room"},
    {"id": "gob", "name": "Gob", "side": "goblins", "hp": 7, "max_hp": 7, "zone": "bar"},
]  # fmt: skip


def test_plugin_events_get_their_announced_log_line(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    engine = Engine([*load_default_plugins(), braziers])
    with server_in_thread(tmp_path / "server", MaxDice(), engine=engine) as (base, _):
        url = base.replace("http://", "ws://") + "/ws"

        async def create() -> tuple[str, str, str]:
            async with connect(url) as gm:
                made = await gm.create_encounter("Braziers", "tavern", ROSTER)
                eid = made["encounter"]
                link = await gm.request("create_spectator_link", encounter=eid)
                return eid, made["gm_token"], link["token"]

        eid, gm_token, watch_token = trio.run(create)
        pages = {}
        for who, token in (("gm", gm_token), ("watcher", watch_token)):
            page = browser.new_page()
            page.set_default_timeout(STEP_MS)
            page.goto(f"{base}/table/#encounter={eid}&token={token}")
            expect(page.locator("#status")).to_contain_text("Connected")
            pages[who] = page

        async def play() -> None:
            async with connect(url) as gm:
                await gm.join(eid, gm_token)
                for command in ("set_surprise", "place", "roll_initiative"):
                    await gm.command(eid, command)
                await gm.command(eid, "kick", creature="aria", brazier="the brass brazier")
                await gm.command(eid, "prime", zone="bar")

        trio.run(play)
        gm_log, watcher_log = pages["gm"].locator("#log"), pages["watcher"].locator("#log")
        expect(gm_log).to_contain_text("Aria kicks the brass brazier over")
        expect(gm_log).to_contain_text("An oil slick is primed in bar")
        expect(watcher_log).to_contain_text("Aria kicks the brass brazier over")
        expect(watcher_log).to_contain_text("Something happens out of sight.")
        assert "oil slick" not in watcher_log.inner_text()
        for page in pages.values():
            page.close()
