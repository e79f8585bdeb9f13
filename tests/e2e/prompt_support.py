"""An encounter brought to a prompt, for the protocol's tests (retries, the proxy)."""

from __future__ import annotations

from typing import Any

from e2e_support import sturdy_goblin_roster

from zonekeep.protocol.client import ZonekeepClient


async def to_a_prompt(gm: ZonekeepClient, alice: ZonekeepClient) -> tuple[str, dict[str, Any]]:
    """With ``Loaded`` dice: the GM's encounter at the goblin's turn, the goblin leaving
    Aria's reach, so that alice (joined here) is prompted for an opportunity attack.
    Returns the encounter id and the ``prompt``'s params."""
    eid: str = (await gm.create_encounter("Prompt", "tavern", sturdy_goblin_roster()))["encounter"]
    seat = await gm.request("create_seat", encounter=eid, player="alice")
    await gm.command(eid, "set_surprise", surprised=[])
    await gm.command(eid, "place", positions={})
    await gm.command(eid, "roll_initiative")
    await alice.join(eid, seat["token"])
    await alice.command(eid, "attack", creature="aria", target="gob")
    await alice.command(eid, "end_turn", creature="aria")
    await gm.command(eid, "enter", creature="gob", zones=["bar"])
    return eid, await alice.notification("prompt")
