"""Every die a class feature rolls is in the log, on a real server with fair dice (the
default): Second Wind, a Bardic Inspiration die on an attack roll, Cutting Words and
Deflect Missiles are each used once, then the encounter ends (the seed is revealed) and
its export passes ``zonekeep verify`` (the real CLI, in a subprocess). No die of theirs
lands in a loose ``dice_drawn`` event: each is in the event that reports its effect
(``healed``'s roll, the attack roll's ``bonus_dice``, ``action_taken``'s roll).

The dice are fair, so nobody knows them in advance: the table plays round after round
until each feature has come up (a goblin's attack that misses offers no reaction, and is
tried again on its next turn); every other prompt is left to its default.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import e2e_support
import pytest
from e2e_support import Limits, Running, ServerConfig
from test_party_level5 import Table, of, sheet, zonekeep

from zonekeep.protocol.client import ZonekeepClient
from zonekeep.sdk.host import dice_in

ARENA: dict[str, Any] = {
    "id": "hall", "name": "The hall",
    "zones": [{"id": "hall", "name": "Hall", "size": 30}, {"id": "yard", "name": "Yard", "size": 30}],
    "links": [{"a": "hall", "b": "yard", "direction": "beside"}],
}  # fmt: skip
GOB_1, GOB_2 = "goblin-1", "goblin-2"
CUTTING_WORDS, DEFLECT_MISSILES = "cutting-words", "deflect-missiles"


def character(name: str, cls: str, sub: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """A 3rd-level sheet (Dex and Cha 16) as a player's client sends it."""
    return {
        "name": name,
        "size": "Medium",
        "speeds": {"walk": 30},
        "classes": [{"name": cls, "level": 3, "subclass": sub}],
        "ability_scores": {"str": 10, "dex": 16, "con": 12, "int": 10, "wis": 12, "cha": 16},
        "hp": 30,
        "ac": 15,
        "weapons": [{"name": "dagger"}],
        "actions": actions,
    }


BARD = character(
    "Lyra",
    "bard",
    "lore",
    [
        {
            "id": "bardic-inspiration",
            "name": "Bardic Inspiration",
            "kind": "bonus_action",
            "text": "A d6.",
            "uses": {"per": "long_rest", "count": 3},
        },
        {"id": CUTTING_WORDS, "name": "Cutting Words", "kind": "reaction", "text": "Minus."},
    ],
)
MONK = character(
    "Sora",
    "monk",
    "open-hand",
    [{"id": DEFLECT_MISSILES, "name": "Deflect Missiles", "kind": "reaction", "text": "-"}],
)


def rolled(event: dict[str, Any]) -> list[int]:
    """The counters of the dice an event records."""
    return [c for c, _, _ in dice_in(event)]


@pytest.mark.sqlite  # zonekeep export reads SQLite files
async def test_feature_dice_are_in_their_events_and_the_fair_export_verifies(
    make_server: Any, tmp_path: Path
) -> None:
    limits = Limits(
        rate_per_second=1000.0, rate_burst=1000, table_rate_per_second=1000.0, table_rate_burst=1000
    )
    running: Running = await make_server(ServerConfig(port=0, limits=limits), entropy=None)
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as carol,
    ):
        seats: dict[str, ZonekeepClient] = {"alice": alice, "bob": bob, "carol": carol}
        created = await gm.create_encounter(
            "Fair hall",
            ARENA,
            [{"compendium": "srd.goblin", "count": 2, "zone": "hall", "side": "raiders"}],
            options={"flanking": False},
            seats=[{"player": p, "zone": "hall"} for p in seats],
        )
        eid = created["encounter"]
        assert created["snapshot"]["dice"]["mode"] == "fair"
        table = Table(gm, eid, created["seq"])
        ids: dict[str, str] = {}
        for player, data in (("alice", sheet("kael")), ("bob", BARD), ("carol", MONK)):
            await seats[player].join(eid, created["seats"][player])
            joined = await seats[player].request("submit_character", encounter=eid, character=data)
            ids[player] = joined["creature"]
            await table.events_until(joined["seq"])
        kael, lyra, sora = ids["alice"], ids["bob"], ids["carol"]
        await table.send(gm, "set_surprise")
        await table.send(gm, "place")
        await table.send(gm, "override", creature=kael, field="hp", value=20)
        await table.send(gm, "roll_initiative")
        owners = {kael: alice, lyra: bob, sora: carol}
        done: dict[str, list[dict[str, Any]]] = {}

        async def settle() -> None:
            """Answer every open prompt: take the reaction the test waits for, leave the
            others (a tie, a reaction already seen) to their defaults."""
            while True:
                pending = (await table.snapshot())["pending"]
                if not pending:
                    return
                decision = pending[0]
                kind = decision["kind"]
                if kind in (CUTTING_WORDS, DEFLECT_MISSILES) and kind not in done:
                    seen = await table.send(
                        owners[decision["creature"]],
                        "decide",
                        decision=decision["id"],
                        choice=[kind],
                    )
                    done[kind] = seen
                else:
                    await table.send(gm, "decision_timeout", decision=decision["id"])

        await settle()
        for _ in range(40):  # turns: every feature comes up in a few rounds
            if len(done) == 4:
                break
            active = await table.active()
            snap = await table.snapshot()
            if active == kael:
                if "second_wind" not in done:
                    done["second_wind"] = await table.send(alice, "second_wind", creature=kael)
                inspired = snap["creatures"][kael]["resources"].get("bardic-inspiration-die")
                target = GOB_1 if snap["creatures"][GOB_1]["hp"] > 0 else GOB_2
                if inspired and "inspired_attack" not in done:
                    done["inspired_attack"] = await table.send(
                        alice, "attack", creature=kael, target=target, attack="longsword"
                    )
                    await settle()
            elif active == lyra:
                inspired = snap["creatures"][kael]["resources"].get("bardic-inspiration-die")
                if not inspired and "inspired_attack" not in done:
                    await table.send(bob, "bardic_inspiration", creature=lyra, target=kael)
            elif active in (GOB_1, GOB_2) and snap["creatures"][active]["hp"] > 0:
                if CUTTING_WORDS not in done:
                    await table.send(gm, "attack", creature=active, target=kael, attack="scimitar")
                elif DEFLECT_MISSILES not in done:
                    await table.send(gm, "attack", creature=active, target=sora, attack="shortbow")
                await settle()
            await table.send(owners.get(active, gm), "end_turn", creature=active)
            await settle()
        assert sorted(done) == sorted(
            ["second_wind", "inspired_attack", CUTTING_WORDS, DEFLECT_MISSILES]
        )
        await table.send(gm, "end_encounter", force=True)

        # Each feature's dice are in the event that reports its effect.
        (healed,) = of(done["second_wind"], "healed")
        assert healed["source"] == "second-wind" and len(rolled(healed)) == 1
        (made,) = of(done["inspired_attack"], "attack_made")
        assert len(made["roll"]["bonus_dice"]) == 1
        assert "bonus:bardic inspiration" in " ".join(made["roll"]["sources"])
        assert len(made["roll"]["draws"]) == len(made["roll"]["dice"]) + 1
        for kind in (CUTTING_WORDS, DEFLECT_MISSILES):
            (taken,) = [e for e in of(done[kind], "action_taken") if e["action"] == kind]
            assert len(rolled(taken)) == 1, kind

        async with running.client() as again:
            replay = await again.join(eid, created["gm_token"], last_seq=0)
        client_log = replay["events"]
        assert [e["type"] for e in client_log].count("dice_revealed") == 1

    # No die is loose: none in a dice_drawn event, and every counter once.
    assert of(client_log, "dice_drawn") == []
    rolls = sorted(c for e in client_log for c in rolled(e))
    assert rolls == list(range(len(rolls))) and rolls
    exported = tmp_path / "fair-hall.jsonl"
    data_dir = running.server.config.data_dir
    ran = zonekeep("export", eid, "--data-dir", str(data_dir), "-o", str(exported))
    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    assert [line["event"] for line in lines] == client_log
    ran = zonekeep("verify", str(exported))
    assert (ran.returncode, ran.stderr) == (0, "")
    assert f"dice verified: {len(rolls)} rolls (fair)" in ran.stdout
    assert e2e_support.VALIDATED[0] > 0
