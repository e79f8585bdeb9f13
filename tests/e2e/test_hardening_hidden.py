"""Hardening (issue 14, points 8 to 11): leaks of hidden information, each attack sent
over a real socket to a real server.

docs/rules.md, "Rulings" (what players see): nothing that was hidden when it happened is ever sent to a
viewer in clear later (resume, replay, rewind, roll-off, ``sharing_with``), and the
player who controls a hidden creature still sees it (marked hidden) and plays its turns.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import helpers
import trio
from e2e_support import Limits, Loaded, Running, ServerConfig, creatures

from zonekeep.protocol.client import ClientError, ZonekeepClient
from zonekeep.sdk.host import event_from_dict, replay_steps

MakeServer = Callable[..., Any]


def leaks(messages: Any) -> bool:
    text = json.dumps(messages).lower()
    return "ogre" in text


class Scripted:
    """Entropy that shows ``faces`` in order, then 10 on every die."""

    def __init__(self, *faces: int) -> None:
        self.faces = list(faces)

    def randint(self, sides: int) -> int:
        return min(self.faces.pop(0), sides) if self.faces else min(10, sides)


async def seat(
    gm: ZonekeepClient, clients: dict[str, ZonekeepClient], roster: list[dict[str, Any]]
) -> tuple[str, dict[str, str]]:
    """Create the encounter and join ``clients`` (a player id each, or "spectator")."""
    created = await gm.create_encounter("Hidden", "tavern", roster)
    eid = created["encounter"]
    tokens = {"gm": created["gm_token"]}
    with trio.fail_after(helpers.deadline(5)):
        for who, client in clients.items():
            if who == "spectator":
                token = (await gm.request("create_spectator_link", encounter=eid))["token"]
            else:
                token = (await gm.request("create_seat", encounter=eid, player=who))["token"]
            tokens[who] = token
            await client.join(eid, token)
    return eid, tokens


async def test_point8_sharing_with_never_names_a_hidden_creature(running: Running) -> None:
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _ = await seat(gm, {"alice": alice, "spectator": watcher}, creatures())
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
            # The GM forces Bram into the (hidden) ogre's space.
            await gm.command(eid, "force", forcer="gob", creature="bram", into="ogre")
            full = await gm.request("snapshot", encounter=eid)
            assert full["snapshot"]["creatures"]["bram"]["sharing_with"] == "ogre"
            for client in (alice, watcher):
                snap = await client.request("snapshot", encounter=eid)
                assert snap["snapshot"]["creatures"]["bram"]["sharing_with"] is None
                assert not leaks(snap)
                assert not leaks(client.pending_notifications())


async def test_point9_replay_after_a_rewind_to_before_a_hide(running: Running) -> None:
    roster = creatures()
    roster[3]["hidden"] = False  # the ogre is seen at first
    async with running.client() as gm, running.client() as alice:
        eid, tokens = await seat(gm, {"alice": alice}, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "override", creature="ogre", field="hidden", value=True)  # 2
            await gm.command(eid, "override", creature="ogre", field="hp", value=13)  # 3
            await gm.command(eid, "add_note", text="It waits for dark.")  # 4
            await gm.request("rewind", encounter=eid, to_seq=1)  # 5: the ogre is seen again
            replayed = await alice.join(eid, tokens["alice"], last_seq=1)
        events = replayed["events"]
        assert [e["type"] for e in events] == ["hidden", "hidden", "note_added", "rewound"]
        assert "13" not in json.dumps(events)
        # Now (after the rewind) the ogre is seen, as it is now: unhurt (an enemy's hit
        # points are a word).
        with trio.fail_after(helpers.deadline(5)):
            snap = await alice.request("snapshot", encounter=eid)
        assert snap["snapshot"]["creatures"]["ogre"]["hp"] == "unhurt"


async def test_point9_replay_after_a_reveal_keeps_the_hidden_past(running: Running) -> None:
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, tokens = await seat(gm, {"alice": alice, "spectator": watcher}, creatures())
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])  # 2
            await gm.command(eid, "place", positions={"ogre": "common_room"})  # 3
            await gm.command(eid, "override", creature="ogre", field="hp", value=13)  # 4
            await gm.command(eid, "override", creature="ogre", field="hidden", value=False)  # 5
            for who, client in (("alice", alice), ("spectator", watcher)):
                replayed = await client.join(eid, tokens[who], last_seq=0)
                events = replayed["events"]
                assert [c["id"] for c in events[0]["creatures"]] == ["aria", "bram", "gob"]
                assert events[2]["positions"] == dict.fromkeys(
                    ("aria", "bram", "gob"), "common_room"
                )
                assert events[3] == {"type": "hidden"}
                assert (events[4]["creature"], events[4]["field"]) == ("ogre", "hidden")
                assert not leaks(events[:4])


async def test_point10_a_roll_off_never_names_a_hidden_creatures_controller(
    make_server: MakeServer,
) -> None:
    # d20s: Aria 10 (+3), Bram 1, the goblin 1, the ogre 10 (+3): Aria and the ogre tie at
    # 13 with equal Dexterity, so Alice and the GM roll off (5 against 12).
    running: Running = await make_server(
        ServerConfig(port=0), entropy=Scripted(10, 1, 1, 10, 5, 12)
    )
    roster = creatures()
    roster[3]["dex_mod"] = 3
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, _ = await seat(gm, {"alice": alice, "spectator": watcher}, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            await alice.request("ping")
            await watcher.request("ping")
        rolled = [
            n["params"]["event"]
            for n in gm.pending_notifications()
            if n["method"] == "event" and n["params"]["event"]["type"] == "initiative_rolled"
        ]
        assert rolled[0]["rolloffs"] == [
            {"contenders": ["alice", "gm"], "rolls": [5, 12], "draws": []}
        ]
        for client in (alice, watcher):
            seen = [
                n["params"]["event"]
                for n in client.pending_notifications()
                if n["method"] == "event"
            ]
            [event] = [e for e in seen if e["type"] == "initiative_rolled"]
            assert [e["slot"] for e in event["entries"]] == ["aria", "gob", "bram"]
            assert event["rolloffs"] == []
            assert not leaks(seen)


async def test_point10_a_roll_off_between_seen_slots_is_still_shown(
    make_server: MakeServer,
) -> None:
    # d20s: Aria 10 (+3), Bram 10 (+3 here), the goblin 1, the ogre 1: Alice's and Bob's
    # characters tie at 13, so Alice and Bob roll off (4 against 16), and the players see
    # that roll-off whole.
    running: Running = await make_server(
        ServerConfig(port=0), entropy=Scripted(10, 10, 1, 1, 4, 16)
    )
    roster = creatures()
    roster[1]["dex_mod"] = 3
    async with running.client() as gm, running.client() as alice:
        eid, _ = await seat(gm, {"alice": alice}, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")
            await alice.request("ping")
        [event] = [
            n["params"]["event"]
            for n in alice.pending_notifications()
            if n["method"] == "event" and n["params"]["event"]["type"] == "initiative_rolled"
        ]
        assert event["rolloffs"] == [
            {"contenders": ["alice", "bob"], "rolls": [4, 16], "draws": []}
        ]


async def test_point11_the_controller_keeps_its_hidden_creature(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    roster = creatures()
    roster[3].update(controller="alice", initiative_bonus=10)  # the ogre acts first
    async with (
        running.client() as gm,
        running.client() as alice,
        running.client() as bob,
        running.client() as watcher,
    ):
        eid, tokens = await seat(gm, {"alice": alice, "bob": bob, "spectator": watcher}, roster)
        with trio.fail_after(helpers.deadline(5)):
            snap = await alice.request("snapshot", encounter=eid)
            ogre = snap["snapshot"]["creatures"]["ogre"]
            assert (ogre["controller"], ogre["hidden"]) == ("alice", True)
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
            snap = await alice.request("snapshot", encounter=eid)
            assert snap["snapshot"]["active"] == "ogre"
            assert snap["snapshot"]["resources"] is not None
            actions = await alice.request("actions", encounter=eid, creature="ogre")
            assert "dash" in actions["actions"]
            # Alice plays its turn; Bob and the spectator learn nothing of it.
            await alice.command(eid, "dash", creature="ogre")
            await alice.command(eid, "end_turn", creature="ogre")
            replayed = await alice.join(eid, tokens["alice"], last_seq=0)
            for client in (bob, watcher):
                await client.request("ping")
                got = client.pending_notifications()
                assert not leaks(got)
                assert not leaks(await client.request("snapshot", encounter=eid))
        seen = [
            n["params"]["event"] for n in alice.pending_notifications() if n["method"] == "event"
        ]
        assert {"type": "dashed", "creature": "ogre"}.items() <= next(
            e for e in seen if e["type"] == "dashed"
        ).items()
        assert any(e["type"] == "turn_ended" and e["creature"] == "ogre" for e in seen)
        assert "ogre" in [c["id"] for c in replayed["events"][0]["creatures"]]


def _names_any(value: Any, words: set[str]) -> bool:
    """Whether ``value`` holds one of ``words`` as a string, a key or inside a text."""
    if isinstance(value, str):
        return value in words or any(w in value for w in words if " " in w)
    if isinstance(value, dict):
        return any(_names_any(k, words) or _names_any(v, words) for k, v in value.items())
    if isinstance(value, list):
        return any(_names_any(v, words) for v in value)
    return False


async def test_property_random_hides_reveals_and_rewinds_over_the_socket(
    make_server: Callable[..., Any],
) -> None:
    # The property test (tests/test_hidden_property.py) over a real socket, on one seed:
    # no message to Alice or the spectator names a creature hidden from it when the
    # message's content happened (an event: right after it; anything else: when sent).
    # The GM sends as fast as the socket takes it: this server's rate limit and reply
    # budget are lifted (what is tested here is visibility, not the quotas).
    running: Running = await make_server(
        ServerConfig(
            port=0,
            limits=Limits(
                rate_per_second=10_000.0,
                rate_burst=10_000,
                reply_bytes_burst=100_000_000,
                reply_bytes_per_second=100_000_000.0,
            ),
        )
    )
    rng = random.Random(14)
    roster = creatures()
    roster[1]["name"] = "Bram the Bold"  # names with a space: matched inside texts
    roster[2]["name"] = "Green Goblin"
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, tokens = await seat(gm, {"alice": alice, "spectator": watcher}, roster)
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={"ogre": "common_room"})
            await gm.command(eid, "roll_initiative")
        got: dict[str, list[tuple[int, Any]]] = {"alice": [], "spectator": []}
        ids = ["bram", "gob", "ogre"]
        for _ in range(40):
            op = rng.choice(["hide", "reveal", "hp", "rewind", "note", "force", "sync"])
            who = rng.choice(ids)
            with trio.fail_after(helpers.deadline(5)):
                seq = (await gm.request("snapshot", encounter=eid))["seq"]
                try:
                    if op in ("hide", "reveal"):
                        await gm.command(
                            eid, "override", creature=who, field="hidden", value=op == "hide"
                        )
                    elif op == "hp":
                        await gm.command(
                            eid, "override", creature=who, field="hp", value=rng.randint(1, 9)
                        )
                    elif op == "rewind":
                        await gm.request("rewind", encounter=eid, to_seq=rng.randint(3, seq - 1))
                    elif op == "note":
                        name = next(c["name"] for c in roster if c["id"] == who)
                        await gm.command(eid, "add_note", text=f"{name} waits.")
                    elif op == "force":
                        await gm.command(eid, "force", forcer="aria", creature="aria", into=who)
                    else:
                        for key, client in (("alice", alice), ("spectator", watcher)):
                            snap = await client.request("snapshot", encounter=eid)
                            got[key].append((snap["seq"], snap["snapshot"]))
                except ClientError:
                    pass  # refused: nothing changed
        with trio.fail_after(helpers.deadline(5)):
            full = await gm.join(eid, tokens["gm"], last_seq=0)
            for key, client in (("alice", alice), ("spectator", watcher)):
                await client.request("ping")
                for n in client.pending_notifications():
                    p = n["params"]
                    at = p.get("seq", len(full["events"]))  # a prompt: sent at the end
                    got[key].append((at, p["event"] if n["method"] == "event" else p))
                replayed = await client.join(eid, tokens[key], last_seq=0)
                got[key].extend(enumerate(replayed["events"], 1))
        states = [None, *(s.copy() for s in replay_steps(map(event_from_dict, full["events"])))]
        hides = 0
        for key, player in (("alice", "alice"), ("spectator", None)):
            for seq, item in got[key]:
                state = states[seq]
                assert state is not None
                secret = {
                    c.id for c in state.creatures.values() if c.hidden and c.controller != player
                }
                hides += bool(secret)
                words = secret | {state.creatures[c].name for c in secret}
                assert not _names_any(item, words), (key, seq, item)
        assert hides > 20  # the game really had hidden creatures most of the time


async def test_point12_players_see_an_enemys_hit_points_as_a_word(
    make_server: MakeServer,
) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice, running.client() as watcher:
        eid, tokens = await seat(gm, {"alice": alice, "spectator": watcher}, creatures())
        with trio.fail_after(helpers.deadline(5)):
            await gm.command(eid, "set_surprise", surprised=[])
            await gm.command(eid, "place", positions={})
            await gm.command(eid, "roll_initiative")  # Aria's turn (23)
            await gm.command(eid, "override", creature="gob", field="hp", value=5)
            await gm.command(eid, "override", creature="aria", field="hp", value=17)
            await alice.command(eid, "attack", creature="aria", target="gob")  # a critical hit
            await gm.command(eid, "override", creature="gob", field="max_hp", value=9)
            for client in (alice, watcher):
                await client.request("ping")
            full = await gm.request("snapshot", encounter=eid)
        assert full["snapshot"]["creatures"]["gob"]["hp"] == 0
        assert full["snapshot"]["creatures"]["gob"]["max_hp"] == 9
        for key, client in (("alice", alice), ("spectator", watcher)):
            events = [
                n["params"]["event"]
                for n in client.pending_notifications()
                if n["method"] == "event"
            ]
            overrides = [
                (e["creature"], e["field"], e["value"])
                for e in events
                if e["type"] == "override_applied"
            ]
            assert overrides == [
                ("gob", "hp", "hurt"),
                ("aria", "hp", 17),
                ("gob", "max_hp", "down"),
            ]
            [damaged] = [e for e in events if e["type"] == "damaged"]
            assert (damaged["creature"], damaged["hp"]) == ("gob", "down")
            with trio.fail_after(helpers.deadline(5)):
                snap = (await client.request("snapshot", encounter=eid))["snapshot"]
                replayed = await client.join(eid, tokens[key], last_seq=0)
            gob, aria = snap["creatures"]["gob"], snap["creatures"]["aria"]
            assert (gob["hp"], gob["max_hp"]) == ("down", None)
            assert (aria["hp"], aria["max_hp"]) == (17, 20)
            created = replayed["events"][0]["creatures"]
            assert [(c["id"], c["hp"], c["max_hp"]) for c in created] == [
                ("aria", 20, 20),
                ("bram", 24, 24),
                ("gob", "unhurt", None),
            ]
            assert "damaged" in json.dumps(replayed["events"])
            assert '"hp": 0' not in json.dumps(replayed["events"])


async def test_point12_show_enemy_hp_shows_the_numbers(make_server: MakeServer) -> None:
    running: Running = await make_server(ServerConfig(port=0), entropy=Loaded())
    async with running.client() as gm, running.client() as alice:
        created = await gm.create_encounter(
            "Open", "tavern", creatures(), options={"show_enemy_hp": True}
        )
        eid = created["encounter"]
        with trio.fail_after(helpers.deadline(5)):
            seat_ = await gm.request("create_seat", encounter=eid, player="alice")
            joined = await alice.join(eid, seat_["token"])
        gob = joined["snapshot"]["creatures"]["gob"]
        assert (gob["hp"], gob["max_hp"]) == (7, 7)
