"""Verifiable dice over the protocol (SPEC.md, "Dice"): a fair encounter played to its end
verifies (``zonekeep verify`` on its export), a tampered export does not; contributions,
rotation, rewinds past rolls, seeded dice and bad input."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, creatures, sturdy_goblin_roster

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk import die
from zonekeep.sdk.host import EMPTY_MIX, commitment, dice_in, next_mix
from zonekeep.server._cli import main as cli

MakeServer = Callable[..., Any]


def roster() -> list[dict[str, Any]]:
    """Aria and Bram against one 7-hp goblin (the hidden ogre left out)."""
    return [c for c in creatures() if c["id"] != "ogre"]


#: The tests play whole fights as fast as they can: no rate limit gets in the way.
UNLIMITED = Limits(rate_per_second=100_000.0, rate_burst=100_000)


async def fair_server(make_server: MakeServer) -> Running:
    """A server with no test entropy: its dice are the fair ones."""
    running: Running = await make_server(ServerConfig(port=0, limits=UNLIMITED), entropy=None)
    return running


async def setup(
    gm: ZonekeepClient, cast: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    with trio.fail_after(helpers.deadline(10)):
        created = await gm.create_encounter("Dice", "tavern", cast or roster(), **extra)
        eid = created["encounter"]
        seat = await gm.request("create_seat", encounter=eid, player="alice")
    return {"eid": eid, "created": created, "alice": seat["token"], "gm": created["gm_token"]}


async def start(gm: ZonekeepClient, eid: str) -> None:
    with trio.fail_after(helpers.deadline(10)):
        await gm.command(eid, "set_surprise", surprised=[])
        await gm.command(eid, "place", positions={})
        await gm.command(eid, "roll_initiative")


async def play_to_the_end(gm: ZonekeepClient, eid: str, rounds: int = 40) -> dict[str, Any]:
    """The GM plays every creature: attack the first standing enemy, end the turn; ties
    and reactions get their defaults. Returns the final snapshot."""
    with trio.fail_after(helpers.deadline(60)):
        for _ in range(rounds * 4):
            snap: dict[str, Any] = (await gm.request("snapshot", encounter=eid))["snapshot"]
            if snap["phase"] == "ended":
                return snap
            for decision in snap["pending"]:
                await gm.command(eid, "decision_timeout", decision=decision["id"])
            if snap["pending"]:
                continue
            active = snap["active"]
            if active is None:
                continue
            me = snap["creatures"][active]
            foes = [
                c["id"]
                for c in snap["creatures"].values()
                if c["side"] != me["side"] and c["hp"] > 0
            ]
            if foes and me["hp"] > 0:
                with contextlib.suppress(ClientError):
                    await gm.command(eid, "attack", creature=active, target=foes[0])
            with contextlib.suppress(ClientError):
                await gm.command(eid, "end_turn", creature=active)
        await gm.command(eid, "end_encounter", force=True)
        final: dict[str, Any] = (await gm.request("snapshot", encounter=eid))["snapshot"]
        return final


def export(running: Running, eid: str, target: Path) -> list[dict[str, Any]]:
    data_dir = running.server.config.data_dir
    assert cli(["export", eid, "--data-dir", str(data_dir), "-o", str(target)]) == 0
    return [json.loads(line) for line in target.read_text().splitlines()]


def write(lines: list[dict[str, Any]], target: Path) -> Path:
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return target


@pytest.mark.sqlite  # zonekeep export/import read SQLite files
async def test_a_fair_encounter_played_to_its_end_verifies_and_a_tampered_one_does_not(
    make_server: MakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running = await fair_server(make_server)
    async with running.client() as gm, running.client() as alice:
        table = await setup(gm)
        eid = table["eid"]
        dice = table["created"]["snapshot"]["dice"]
        assert dice["mode"] == "fair" and dice["seed"] is None and len(dice["commitment"]) == 64
        joined = await alice.join(eid, table["alice"], client_seed="alices-lucky-socks")
        assert joined["snapshot"]["dice"]["contributions"] == 1
        assert joined["snapshot"]["dice"]["seed"] is None  # secret until the end
        await start(gm, eid)
        final = await play_to_the_end(gm, eid)
        assert final["phase"] == "ended"
        assert final["dice"]["revealed"] and commitment(final["dice"]["seed"]) == dice["commitment"]
    lines = export(running, eid, tmp_path / "fight.jsonl")
    kinds = [line["event"]["type"] for line in lines]
    assert kinds[1] == "dice_committed" and kinds[-1] == "dice_revealed"
    assert "dice_contributed" in kinds
    rolled = [d for line in lines for d in dice_in(line["event"])]
    assert len(rolled) > 5 and sorted(c for c, _, _ in rolled) == list(range(len(rolled)))
    # The construction, recomputed here from the revealed seed and alice's contribution.
    seed = lines[-1]["event"]["seed"]
    mix = next_mix(EMPTY_MIX, "alices-lucky-socks")
    assert all(die(seed, mix, c, s) == v for c, s, v in rolled)

    capsys.readouterr()
    assert cli(["verify", str(tmp_path / "fight.jsonl")]) == 0
    assert f"dice verified: {len(rolled)} rolls (fair)" in capsys.readouterr().out

    # A tampered roll: the first die of the first attack shows another face.
    first = next(i for i, line in enumerate(lines) if line["event"]["type"] == "attack_made")
    tampered = json.loads(json.dumps(lines))
    roll = tampered[first]["event"]["roll"]
    roll["dice"][0] = roll["dice"][0] % 20 + 1
    counter = roll["draws"][0][0]
    assert cli(["verify", str(write(tampered, tmp_path / "tampered.jsonl"))]) == 1
    assert f"roll #{counter}" in capsys.readouterr().err

    # A wrong commitment, a missing reveal, a truncated file.
    wrong = json.loads(json.dumps(lines))
    wrong[1]["event"]["commitment"] = commitment("something else")
    assert cli(["verify", str(write(wrong, tmp_path / "wrong.jsonl"))]) == 1
    assert "does not match its commitment" in capsys.readouterr().err
    assert cli(["verify", str(write(lines[:-1], tmp_path / "unrevealed.jsonl"))]) == 1
    err = capsys.readouterr().err
    assert "roll #0" in err and "never revealed" in err
    cut = tmp_path / "cut.jsonl"
    text = (tmp_path / "fight.jsonl").read_text()
    cut.write_text(text[: len(text) - 40])
    assert cli(["verify", str(cut)]) == 1
    err = capsys.readouterr().err
    assert "cut or damaged" in err and "roll #0" in err


@pytest.mark.sqlite  # zonekeep export/import read SQLite files
async def test_rotation_reveals_the_seed_and_rewinds_keep_their_undone_rolls(
    make_server: MakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running = await fair_server(make_server)
    async with running.client() as gm, running.client() as alice:
        table = await setup(gm, sturdy_goblin_roster())  # no attack ends the fight
        eid = table["eid"]
        await alice.join(eid, table["alice"])
        with pytest.raises(ClientError) as refused:
            await alice.request("rotate_dice", encounter=eid)
        assert refused.value.name == "gm_only"
        await alice.request("contribute_dice", encounter=eid, value="one-more")
        await start(gm, eid)
        before = (await gm.request("snapshot", encounter=eid))["snapshot"]["dice"]
        rotated = await gm.request("rotate_dice", encounter=eid)
        assert rotated["commitment"] != before["commitment"]
        after = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert after["dice"]["epoch"] == 2 and after["dice"]["seed"] is None
        mark = after["seq"]
        active = after["active"]
        foe = next(
            c
            for c in after["creatures"].values()
            if c["side"] != after["creatures"][active]["side"]
        )
        await gm.command(eid, "attack", creature=active, target=foe["id"])
        rewound = await gm.request("rewind", encounter=eid, to_seq=mark)
        await gm.command(eid, "attack", creature=active, target=foe["id"])
        await gm.command(eid, "end_encounter", force=True)
    lines = export(running, eid, tmp_path / "log.jsonl")
    events = {line["seq"]: line["event"] for line in lines}
    revealed = [e for e in events.values() if e["type"] == "dice_revealed"]
    assert [e["reason"] for e in revealed] == ["rotated", "ended"]
    assert revealed[0]["commitment"] == before["commitment"]
    undone = events[rewound["seq"]]["undone_rolls"]
    assert undone  # the attack's dice
    redone = [c for e in list(events.values())[rewound["seq"] :] for c, _, _ in dice_in(e)]
    assert min(redone) > max(undone)  # the counter never goes back
    capsys.readouterr()
    assert cli(["verify", str(tmp_path / "log.jsonl")]) == 0
    out = capsys.readouterr().out
    assert (
        f"the rewind at event {rewound['seq']} undid rolls: " + ", ".join(f"#{c}" for c in undone)
        in out
    )


async def test_a_rewind_past_the_end_commits_a_new_seed(make_server: MakeServer) -> None:
    running = await fair_server(make_server)
    async with running.client() as gm:
        table = await setup(gm, sturdy_goblin_roster())
        eid = table["eid"]
        await start(gm, eid)
        mark = (await gm.request("snapshot", encounter=eid))["snapshot"]
        ended = await gm.command(eid, "end_encounter", force=True)
        revealed = (await gm.request("snapshot", encounter=eid))["snapshot"]["dice"]
        assert revealed["revealed"] and revealed["epoch"] == 1
        # Back before the end: the revealed seed is never used again.
        rewound = await gm.request("rewind", encounter=eid, to_seq=mark["seq"])
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        dice = snap["dice"]
        assert snap["phase"] == "turns" and dice["epoch"] == 2 and not dice["revealed"]
        assert dice["commitment"] != revealed["commitment"] and dice["seed"] is None
        joined = await gm.join(eid, table["gm"], last_seq=ended["last_seq"])
        kinds = [e["type"] for e in joined["events"]]
        assert kinds == ["rewound", "dice_committed"]
        assert rewound["seq"] == ended["last_seq"] + 1


async def test_seeded_dice_are_the_same_on_every_server(make_server: MakeServer) -> None:
    rolls = []
    for _ in range(2):
        running = await make_server(ServerConfig(port=0, limits=UNLIMITED), entropy=None)
        async with running.client() as gm:
            table = await setup(gm, dice={"mode": "seeded", "seed": "ci-seed-42"})
            snap = table["created"]["snapshot"]
            assert snap["dice"] == {**snap["dice"], "mode": "seeded", "seed": "ci-seed-42"}
            await start(gm, table["eid"])
            joined = await gm.join(table["eid"], table["gm"], last_seq=0)
            rolls.append([d for e in joined["events"] for d in dice_in(e)])
    assert rolls[0] == rolls[1] and len(rolls[0]) >= 3
    assert all(die("ci-seed-42", EMPTY_MIX, c, s) == v for c, s, v in rolls[0])


@pytest.mark.parametrize(
    "dice",
    [
        {"mode": "seeded"},
        {"mode": "seeded", "seed": ""},
        {"mode": "seeded", "seed": "has spaces"},
        {"mode": "seeded", "seed": "x" * 129},
        {"mode": "seeded", "seed": 42},
        {"mode": "loaded"},
        {"mode": "fair", "seed": "mine"},
        {"mode": "fair", "rolls": [20, 20]},
        "fair",
    ],
)
async def test_malformed_seeds_are_refused_and_nothing_is_created(
    make_server: MakeServer, dice: Any
) -> None:
    running = await fair_server(make_server)
    async with running.client() as gm:
        with pytest.raises(ClientError) as refused:
            await gm.create_encounter("Bad", "tavern", roster(), dice=dice)
        assert refused.value.name == "invalid_params"
    assert running.server.registry.rooms == {}


@pytest.mark.parametrize("value", ["", "with space", "é", "x" * 129])
async def test_malformed_contributions_are_refused(make_server: MakeServer, value: str) -> None:
    running = await fair_server(make_server)
    async with running.client() as gm, running.client() as alice:
        table = await setup(gm)
        eid = table["eid"]
        seq = table["created"]["seq"]
        with pytest.raises(ClientError) as refused:
            await alice.join(eid, table["alice"], client_seed=value)
        assert refused.value.name == "invalid_params"
        with pytest.raises(ClientError) as refused:
            await gm.request("contribute_dice", encounter=eid, value=value)
        assert refused.value.name == "invalid_params"
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snap["seq"] == seq and snap["dice"]["contributions"] == 0


@pytest.mark.sqlite  # zonekeep export/import read SQLite files
async def test_an_imported_unfinished_encounter_gets_a_new_seed_before_its_next_roll(
    make_server: MakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = await fair_server(make_server)
    async with first.client() as gm:
        table = await setup(gm, sturdy_goblin_roster())
        eid = table["eid"]
        await start(gm, eid)
    export(first, eid, tmp_path / "moving.jsonl")
    other = tmp_path / "other"
    capsys.readouterr()
    argv = ["import", str(tmp_path / "moving.jsonl"), "--data-dir", str(other)]
    assert await trio.to_thread.run_sync(cli, argv) == 0  # the command runs trio itself
    token = capsys.readouterr().out.split("GM token: ")[1].split()[0]
    # The other store has another dice secret: the old seed cannot be had there.
    second: Running = await make_server(
        ServerConfig(port=0, data_dir=other, limits=UNLIMITED), entropy=None
    )
    async with second.client() as gm:
        await gm.join(eid, token)
        snap = (await gm.request("snapshot", encounter=eid))["snapshot"]
        assert snap["dice"]["epoch"] == 2 and not snap["dice"]["revealed"]
        active = snap["active"]
        foe = next(
            c for c in snap["creatures"].values() if c["side"] != snap["creatures"][active]["side"]
        )
        await gm.command(eid, "attack", creature=active, target=foe["id"])
        await gm.command(eid, "end_encounter", force=True)
    lines = export(second, eid, tmp_path / "moved.jsonl")
    events = [line["event"] for line in lines]
    committed = [i for i, e in enumerate(events) if e["type"] == "dice_committed"]
    assert len(committed) == 2 and committed[1] == snap["seq"] - 1  # before any new roll
    new_seed = events[-1]["seed"]
    assert commitment(new_seed) == events[committed[1]]["commitment"]
    later = [d for e in events[committed[1] :] for d in dice_in(e)]
    assert later and all(die(new_seed, EMPTY_MIX, c, s) == v for c, s, v in later)
    # The rolls made under the first seed can never be checked: verify says so.
    capsys.readouterr()
    assert cli(["verify", str(tmp_path / "moved.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "roll #0" in err and "committed before this one was revealed" in err


async def test_a_seat_with_a_hidden_creature_sees_no_counters(make_server: MakeServer) -> None:
    # The counters of the dice a seat sees would count the rolls of the creatures it
    # does not see (the hidden ogre's initiative): while something is hidden from a
    # seat, its events carry no counters.
    running = await fair_server(make_server)
    async with running.client() as gm, running.client() as alice:
        table = await setup(gm, creatures())  # the ogre is hidden
        eid = table["eid"]
        await alice.join(eid, table["alice"])
        await start(gm, eid)
        seen = await alice.join(eid, table["alice"], last_seq=0)
        full = await gm.join(eid, table["gm"], last_seq=0)
    rolled = next(e for e in seen["events"] if e["type"] == "initiative_rolled")
    assert len(rolled["entries"]) == 3  # the ogre's entry is not there
    assert all(entry["roll"]["draws"] == [] for entry in rolled["entries"])
    assert [d for e in seen["events"] for d in dice_in(e)] == []
    gm_rolled = next(e for e in full["events"] if e["type"] == "initiative_rolled")
    counters = sorted(c for c, _, _ in dice_in(gm_rolled))  # four d20s, then any roll-offs
    assert len(gm_rolled["entries"]) == 4 and counters == list(range(len(counters))) != []
    assert len(counters) >= 4


async def test_the_dice_of_an_ended_encounter_do_not_change(make_server: MakeServer) -> None:
    running = await fair_server(make_server)
    async with running.client() as gm, running.client() as alice:
        table = await setup(gm)
        eid = table["eid"]
        await start(gm, eid)
        await gm.command(eid, "end_encounter", force=True)
        before = (await gm.request("snapshot", encounter=eid))["snapshot"]
        with pytest.raises(ClientError) as refused:
            await gm.request("contribute_dice", encounter=eid, value="late")
        assert refused.value.name == "encounter_over"
        with pytest.raises(ClientError) as refused:
            await gm.request("rotate_dice", encounter=eid)
        assert refused.value.name == "encounter_over"
        await alice.join(eid, table["alice"], client_seed="too-late")  # joins, mixes nothing
        after = (await gm.request("snapshot", encounter=eid))["snapshot"]
    assert after == before and after["dice"]["revealed"]
