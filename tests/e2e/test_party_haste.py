"""Issue 31's "Sneak Attack once per turn only when the rules allow it", in a real server:
the level-5 party of tests/e2e/test_party_level5.py (same pregens, arena, roster and
seed, its helpers imported), where Seraphine casts Haste on Pip so that he can hit twice
in one turn:

- round 1: Kael's melee attack engages the ogre (a miss); Seraphine's Haste on Pip (a
  level-3 slot, her concentration);
- round 2: Pip's turn starts with his hasted action; his Attack hits the ogre with Kael
  engaged with it: Sneak Attack, 3d6, the turn's use spent; his ``hasted_action``
  attack also hits, Kael still engaged, and gets no Sneak Attack (the use is spent);
- the next turn (Kael's) gives the use back; round 3: Pip's hasted attack, made first
  this time, gets Sneak Attack again, and his Attack after it gets none.

Seeded dice; the GM passes over dice with free private rolls until the next ones give
the story (``Table.steer``), as in the first test. Every message the connections receive
is checked against the schemas by the fixtures.
"""

from __future__ import annotations

from typing import Any

import e2e_support
import pytest
from e2e_support import Running, ServerConfig
from test_party_level5 import (
    BUGBEAR_1,
    BUGBEAR_2,
    LIMITS,
    OGRE,
    PLAYERS,
    Table,
    attacks,
    damage,
    of,
    seat_the_party,
)

from zonekeep.protocol.client import ClientError

#: Haste's condition and the resource of the hasted creature's extra action.
HASTED, HASTE_ACTION = "hasted", "haste-action"


def spent(events: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(e["creature"], e["resource"], e["left"]) for e in of(events, "resource_spent")]


async def raiders_hold(table: Table) -> list[dict[str, Any]]:
    """The GM ends the raiders' turns (the ogre's, then each bugbear's in the group's
    turn); the events of the last, which starts the next round."""
    seen: list[dict[str, Any]] = []
    for raider in (OGRE, BUGBEAR_1, BUGBEAR_2):
        assert await table.active() == raider
        seen = await table.send(table.gm, "end_turn", creature=raider)
    return seen


async def test_haste_gives_pip_a_second_hit_in_a_turn_and_no_second_sneak_attack(
    make_server: Any,
) -> None:
    validated = e2e_support.VALIDATED[0]
    running: Running = await make_server(ServerConfig(port=0, limits=LIMITS), entropy=None)
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as carol,
        running.client() as dave,
    ):
        seats = {"alice": alice, "bob": bob, "carol": carol, "dave": dave}
        table, created, ids = await seat_the_party(gm, seats)
        eid = created["encounter"]
        kael, pip, hilda, sera = (ids[n] for n in PLAYERS)
        await table.send(gm, "set_surprise")
        await table.send(gm, "place")
        rolled = of(await table.send(gm, "roll_initiative"), "initiative_rolled")
        order = [e["slot"] for e in rolled[0]["entries"]]
        assert order == [pip, kael, hilda, sera, OGRE, "bugbear"]
        ogre_hp = 59
        assert (await table.snapshot())["creatures"][OGRE]["hp"] == ogre_hp

        # -- round 1 ------------------------------------------------------------------------
        # Pip waits. Haste is not his yet: the hasted action is refused, nothing rolled.
        mark = table.next_die
        with pytest.raises(ClientError) as refused:
            await bob.command(eid, "hasted_action", creature=pip, use="dash")
        assert refused.value.name == "not_hasted"
        assert table.next_die == mark
        await table.send(bob, "end_turn", creature=pip)
        # Kael's longsword engages the ogre (a miss: the ogre keeps its hit points).
        (miss,) = await table.steer([20], lambda f: f[0] + 7 < 11)
        seen = await table.send(alice, "attack", creature=kael, target=OGRE, attack="longsword")
        assert attacks(seen) == [(kael, OGRE, miss + 7, 11, False)]
        assert [(e["creature"], e["enemy"]) for e in of(seen, "engagement_started")] == [
            (kael, OGRE)
        ]
        await table.send(alice, "end_turn", creature=kael)
        await table.send(carol, "end_turn", creature=hilda)
        # Seraphine hastes Pip: a level-3 slot, her concentration.
        seen = await table.send(dave, "cast", creature=sera, spell="haste", target=pip)
        assert spent(seen) == [(sera, "spells-this-turn", 2), (sera, "spell-slots-3", 1)]
        applied = [e["effect"] for e in of(seen, "condition_effect_applied")]
        assert [(e["creature"], e["condition"]) for e in applied] == [
            (sera, "concentrating"),
            (pip, HASTED),
        ]
        assert applied[1]["parent"] == applied[0]["id"]
        await table.send(dave, "end_turn", creature=sera)
        seen = await raiders_hold(table)

        # -- round 2 ------------------------------------------------------------------------
        # Pip's turn starts hasted: his speed again and his extra action.
        assert [
            (e["creature"], e["resource"], e["left"], e["reason"])
            for e in of(seen, "resource_restored")
        ] == [(pip, HASTE_ACTION, 1, "haste")]
        mine = (await table.snapshot(bob))["creatures"][pip]
        assert (mine["resources"][HASTE_ACTION], mine["resources"]["sneak-attack"]) == (1, 1)

        def lives(hp: int) -> Any:
            """A hit (shortsword +7 against AC 11, no critical) whose damage, Sneak Attack
            included, leaves the ogre standing for the rest of the story."""
            return lambda f: 4 <= f[0] <= 19 and f[1] + 4 + sum(f[2:]) < hp

        # The Attack action: a hit with Kael engaged with the ogre: Sneak Attack, 3d6.
        d20, d6, *sneak = await table.steer([20, 6, 6, 6, 6], lives(ogre_hp - 10 - 14))
        seen = await table.send(bob, "attack", creature=pip, target=OGRE, attack="shortsword")
        assert [(e["action"], e["cost"]) for e in of(seen, "action_taken")] == [
            ("attack", "action")
        ]
        assert attacks(seen) == [(pip, OGRE, d20 + 7, 11, True)]
        assert of(seen, "attack_made")[0]["roll"]["advantage"] == "none"
        assert damage(seen) == [(OGRE, d6 + 4, [d6]), (OGRE, sum(sneak), sneak)]
        assert spent(seen) == [(pip, "sneak-attack", 0)]
        ogre_hp -= d6 + 4 + sum(sneak)
        # The hasted attack: a hit, Kael still engaged: no Sneak Attack this turn.
        assert [kael, OGRE] in (await table.snapshot())["engagements"]
        d20, d6 = await table.steer([20, 6], lives(ogre_hp - 10 - 18))
        seen = await table.send(
            bob, "hasted_action", creature=pip, use="attack", target=OGRE, attack="shortsword"
        )
        assert [(e["action"], e["cost"]) for e in of(seen, "action_taken")] == [
            ("hasted attack", "free")
        ]
        assert attacks(seen) == [(pip, OGRE, d20 + 7, 11, True)]
        assert of(seen, "attack_made")[0]["roll"]["advantage"] == "none"
        assert damage(seen) == [(OGRE, d6 + 4, [d6])]
        assert spent(seen) == [(pip, HASTE_ACTION, 0)]
        ogre_hp -= d6 + 4
        mine = (await table.snapshot(bob))["creatures"][pip]
        assert (mine["resources"][HASTE_ACTION], mine["resources"]["sneak-attack"]) == (0, 0)
        assert (await table.snapshot())["creatures"][OGRE]["hp"] == ogre_hp
        # The next turn (Kael's) gives the use back.
        seen = await table.send(bob, "end_turn", creature=pip)
        assert [
            (e["creature"], e["resource"], e["left"], e["reason"])
            for e in of(seen, "resource_restored")
        ] == [(pip, "sneak-attack", 1, "turn")]
        await table.send(alice, "dodge", creature=kael)  # Kael holds, still engaged
        await table.send(alice, "end_turn", creature=kael)
        await table.send(carol, "end_turn", creature=hilda)
        await table.send(dave, "end_turn", creature=sera)
        seen = await raiders_hold(table)
        assert [
            (e["creature"], e["resource"], e["left"], e["reason"])
            for e in of(seen, "resource_restored")
        ] == [(pip, HASTE_ACTION, 1, "haste")]

        # -- round 3 ------------------------------------------------------------------------
        # Pip's hasted attack first this time: the turn's first qualifying hit, so it
        # deals the Sneak Attack; his Attack after it, also a qualifying hit, does not.
        d20, d6, *sneak = await table.steer([20, 6, 6, 6, 6], lives(ogre_hp - 10))
        seen = await table.send(
            bob, "hasted_action", creature=pip, use="attack", target=OGRE, attack="shortsword"
        )
        assert attacks(seen) == [(pip, OGRE, d20 + 7, 11, True)]
        assert damage(seen) == [(OGRE, d6 + 4, [d6]), (OGRE, sum(sneak), sneak)]
        assert spent(seen) == [(pip, HASTE_ACTION, 0), (pip, "sneak-attack", 0)]
        ogre_hp -= d6 + 4 + sum(sneak)
        d20, d6 = await table.steer([20, 6], lives(ogre_hp))
        seen = await table.send(bob, "attack", creature=pip, target=OGRE, attack="shortsword")
        assert attacks(seen) == [(pip, OGRE, d20 + 7, 11, True)]
        assert damage(seen) == [(OGRE, d6 + 4, [d6])]
        assert spent(seen) == []
        ogre_hp -= d6 + 4
        # A third attack this turn is refused, and rolls nothing.
        mark = table.next_die
        with pytest.raises(ClientError) as refused:
            await bob.command(
                eid, "hasted_action", creature=pip, use="attack", target=OGRE, attack="shortsword"
            )
        assert refused.value.name == "no_uses_left"
        final = await table.snapshot()
        assert (table.next_die, final["creatures"][OGRE]["hp"]) == (mark, ogre_hp)
        assert HASTED in final["creatures"][pip]["conditions"]

    # Every message the five connections received was checked against the schemas.
    assert e2e_support.VALIDATED[0] - validated > len(table.log)
