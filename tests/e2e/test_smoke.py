"""The simplest end-to-end path: hello, create, seat, join, play a command, see the event."""

from __future__ import annotations

from e2e_support import VALIDATED, Running, creatures


async def test_create_join_and_play(running: Running) -> None:
    before = VALIDATED[0]
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter("Smoke", "tavern", creatures())
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
        joined = await alice.join(eid, seat["token"])
        assert joined["role"] == "player" and joined["player"] == "alice"
        assert "ogre" not in joined["snapshot"]["creatures"]
        result = await gm.command(eid, "set_surprise", surprised=[])
        assert result == {"first_seq": 2, "last_seq": 2}
        pushed = await alice.notification("event")
        assert (pushed["seq"], pushed["event"]["type"]) == (2, "surprise_determined")
    assert VALIDATED[0] > before
