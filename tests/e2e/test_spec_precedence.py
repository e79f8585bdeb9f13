"""SPEC.md's error precedence (issue 32, point 6), on a real server: a request that
fails several checks gets the first one's error."""

from __future__ import annotations

import trio
from e2e_support import Running, sturdy_goblin_roster
from helpers import deadline
from lobby_support import refused


async def test_acting_for_anothers_creature_in_the_initiative_step_is_wrong_phase(
    running: Running,
) -> None:
    async with running.client() as gm, running.client() as alice:
        with trio.fail_after(deadline(10)):
            eid = (await gm.create_encounter("Order", "tavern", sturdy_goblin_roster()))[
                "encounter"
            ]
            seat = await gm.request("create_seat", encounter=eid, player="alice")
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})  # now the initiative step
            await alice.join(eid, seat["token"])
            # Bram is bob's: the step comes first, so not not_your_creature.
            error = await refused(alice.command(eid, "dodge", creature="bram"))
            assert (error.code, error.name) == (4004, "wrong_phase")
            # An unknown command comes before the step, and bad params before both.
            error = await refused(alice.command(eid, "fly_away", creature="bram"))
            assert error.name == "unknown_command"
            error = await refused(alice.command(eid, "dodge", creature="bram", extra=1))
            assert (error.code, error.name) == (4000, "invalid_params")
            # In the turns, the same request gets the ownership error.
            await gm.command(eid, "roll_initiative")
            error = await refused(alice.command(eid, "dodge", creature="bram"))
            assert (error.code, error.name) == (3001, "not_your_creature")
