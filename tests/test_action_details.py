"""``Engine.action_details``: each creature command with its refusal and the legal values
of its parameters, checked against what the engine does when the command is sent.

Every list is compared with the engine's own answer for every candidate value (a value
is listed exactly when sending it is accepted), and every unavailable command's code
and sentence with the refusal a well-formed command gets. Also: ``Engine.ending`` (what
keeps an encounter open) and the rule that nobody engages a creature down at 0 hit
points.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from helpers import make

from zonekeep.sdk import (
    GM_ACTOR,
    Actor,
    Attack,
    Command,
    CommandSpec,
    Creature,
    EncounterState,
    EngagementStarted,
    Param,
    RuleContext,
    hookimpl,
    parse_arena,
)
from zonekeep.sdk.engine import ActionDetail, attack_label
from zonekeep.sdk.testing import EncounterHarness

TAVERN = Path(__file__).parents[1] / "examples" / "arenas" / "tavern.json"
BLADE = Attack("blade", "melee", 4, "1d6+2", "slashing")
BOW = Attack("bow", "ranged", 5, "1d8+3", "piercing", range=80, long_range=320)
ALICE = Actor("player", "alice")


def tavern_fight(
    positions: dict[str, str], creatures: list[Creature], *, extra: list[object] | None = None
) -> EncounterHarness:
    """The tavern, the creatures placed, the first creature's turn."""
    arena = parse_arena(json.loads(TAVERN.read_text()), str(TAVERN))
    h = EncounterHarness(creatures, arena=arena, extra_plugins=extra or [])
    h.start(positions=positions, initiative=[20] + [10 - i for i in range(len(creatures) - 1)])
    assert h.state.active == creatures[0].id
    return h


def archer() -> Creature:
    return make("aria", controller="alice", attacks=[BLADE, BOW])


def details(h: EncounterHarness, cid: str, actor: Actor = ALICE) -> dict[str, ActionDetail]:
    return {d.id: d for d in h.engine.action_details(h.state, cid, actor)}


def accepted(h: EncounterHarness, actor: Actor, type: str, **params: Any) -> bool:
    return h.engine.refusal_for(h.state, Command(type, params, actor)) is None


def well_formed(
    spec: CommandSpec, state: EncounterState, cid: str, others: Iterable[str]
) -> dict[str, Any]:
    """Params of the right types for every required parameter of ``spec``."""
    other = next(iter(others))
    zone = next(z.id for z in state.arena.zones if z.id != state.creatures[cid].zone)
    values: dict[str, Any] = {
        "creature": other,
        "creatures": [other],
        "zone": zone,
        "strings": [zone],
        "string": "tables",
        "integer": 5,
        "boolean": True,
        "object": {},
        "any": 1,
    }
    params = {n: values[p.type] for n, p in spec.params.items() if p.required}
    params["creature"] = cid
    return params


# -- attacks: targets in range and in sight ------------------------------------------------


def test_each_attack_lists_exactly_the_targets_in_its_range_and_sight() -> None:
    h = tavern_fight(
        {"aria": "common_room", "bram": "common_room", "gob": "common_room", "hob": "bar"}
        | {"orc": "kitchen"},
        [archer(), make("bram"), *(make(c, "goblins") for c in ("gob", "hob", "orc"))],
    )
    attack = details(h, "aria")["attack"]
    assert attack.available and attack.code is None and attack.message is None
    assert attack.targets is None and attack.zones is None and attack.props is None
    assert attack.attacks is not None
    blade, bow = attack.attacks
    assert (blade.name, blade.label, blade.bonus, blade.damage) == (
        "blade",
        "Blade +4, 1d6+2",
        4,
        "1d6+2",
    )
    assert bow.label == "Bow +5, 1d8+3"
    # The blade reaches its own zone only; the bow also sees into the bar, not the kitchen
    # (both ways there block sight). Attacking an ally is allowed by the rules.
    assert blade.targets == ("bram", "gob")
    assert bow.targets == ("bram", "gob", "hob")
    for choice in attack.attacks:
        for t in h.state.creatures:
            ok = accepted(h, ALICE, "attack", creature="aria", target=t, attack=choice.name)
            assert ok == (t in choice.targets), (choice.name, t)
    # The sentence a refused target gets is the targeting rule's.
    refusal = h.engine.refusal_for(
        h.state, Command("attack", {"creature": "aria", "target": "orc", "attack": "bow"}, ALICE)
    )
    assert refusal is not None and refusal.code == "no_line_of_sight"


def test_attack_labels_read_like_a_character_sheet() -> None:
    assert attack_label(Attack("rapier", "melee", 5, "1d8+3")) == "Rapier +5, 1d8+3"
    assert attack_label(Attack("claws", "melee", -1, "1d4")) == "Claws -1, 1d4"


def test_an_unavailable_attack_still_names_each_attack_with_no_target() -> None:
    h = tavern_fight(
        {"aria": "common_room", "gob": "common_room"}, [archer(), make("gob", "goblins")]
    )
    h.rolls(1, 1).send("attack", ALICE, creature="aria", target="gob")
    attack = details(h, "aria")["attack"]
    assert (attack.available, attack.code) == (False, "no_action_left")
    assert attack.attacks is not None
    assert [(a.name, a.targets) for a in attack.attacks] == [("blade", ()), ("bow", ())]


# -- zones: what entering costs, and nothing with no movement left ------------------------


def test_zones_are_those_enter_accepts_with_what_entering_costs() -> None:
    h = tavern_fight({"aria": "common_room", "gob": "cellar"}, [archer(), make("gob", "goblins")])
    enter = details(h, "aria")["enter"]
    assert enter.available and enter.zones is not None
    found = {z.zone: (z.cost_feet, z.path) for z in enter.zones}
    assert found == {
        "bar": (30, ("bar",)),
        "kitchen": (30, ("kitchen",)),
        "balcony": (30, ("balcony",)),
        "cellar": (30, ("kitchen", "cellar")),  # 30 ft > the kitchen's 15: one further
    }
    for choice in enter.zones:
        assert accepted(h, ALICE, "enter", creature="aria", zones=list(choice.path))
    ids = [z.id for z in h.state.arena.zones]
    for zone in ids:
        if zone not in found:
            for path in ([zone], *([first, zone] for first in ids)):
                assert not accepted(h, ALICE, "enter", creature="aria", zones=path), path
    events = h.send("enter", ALICE, creature="aria", zones=["bar"])
    assert h.creature("aria").zone == "bar", events
    # Every way out of the bar is now refused for the same reason: enter is unavailable.
    enter = details(h, "aria")["enter"]
    assert enter.zones == ()
    sent = h.engine.refusal_for(
        h.state, Command("enter", {"creature": "aria", "zones": ["common_room"]}, ALICE)
    )
    assert sent is not None and sent.code == "not_enough_movement"
    assert (enter.available, enter.code, enter.message) == (False, sent.code, sent.message)
    h.send("dash", ALICE, creature="aria")  # the speed again: 30 ft, the zones come back
    assert {z.zone: z.cost_feet for z in details(h, "aria")["enter"].zones or ()} == {
        "common_room": 30,
        "kitchen": 30,
        "cellar": 30,  # past the 15-ft kitchen; not the balcony past the 30-ft common room
    }


def test_a_dash_opens_the_zones_one_further() -> None:
    # From the kitchen, with a dash (60 ft): the balcony lies past the 30-ft common room.
    h = tavern_fight({"aria": "kitchen", "gob": "balcony"}, [archer(), make("gob", "goblins")])
    h.send("dash", ALICE, creature="aria")
    zones = {z.zone: z.path for z in details(h, "aria")["enter"].zones or ()}
    assert zones["cellar"] == ("cellar",)
    assert zones["common_room"] == ("common_room",)
    assert zones["balcony"] == ("common_room", "balcony")  # 60 ft > the common room's 30


# -- props, targets, plugin commands ---------------------------------------------------------


def test_props_are_the_assets_take_position_accepts() -> None:
    h = tavern_fight({"aria": "common_room", "gob": "cellar"}, [archer(), make("gob", "goblins")])
    take = details(h, "aria")["take_position"]
    assert take.props == ("tables", "chairs")
    for asset in h.state.arena.assets:
        ok = accepted(h, ALICE, "take_position", creature="aria", asset=asset.id)
        assert ok == (asset.id in take.props)


def test_targeted_commands_list_exactly_the_creatures_the_rules_accept() -> None:
    h = tavern_fight(
        {"aria": "common_room", "bram": "common_room", "gob": "common_room", "hob": "bar"},
        [archer(), make("bram"), make("gob", "goblins"), make("hob", "goblins")],
    )
    found = details(h, "aria")
    assert found["shove"].targets == ("bram", "gob")
    assert found["move_adjacent"].targets == ("bram",)
    for command, param in (("shove", "target"), ("move_adjacent", "ally")):
        listed = found[command].targets or ()
        for t in h.state.creatures:
            assert accepted(h, ALICE, command, creature="aria", **{param: t}) == (t in listed)
    # Not engaged: withdraw is refused whatever the target, and says why.
    withdraw = found["withdraw"]
    assert (withdraw.available, withdraw.code, withdraw.targets) == (False, "invalid_target", ())


class Taunt:
    """A table's plugin: ``taunt`` an enemy in your zone (a bonus action)."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def taunt(ctx: RuleContext, cmd: Command) -> None:
            me = ctx.creature(cmd.params["creature"])
            target = ctx.creature(cmd.params["target"], role="target")
            if target.side == me.side or target.zone != me.zone:
                ctx.refuse("invalid_target", f"{me.name} can only taunt an enemy nearby.")

        return (
            CommandSpec(
                "taunt",
                taunt,
                "Bonus action: taunt an enemy.",
                {
                    "creature": Param("creature", True, "the taunter"),
                    "target": Param("creature", True, "the enemy"),
                },
                costs=("bonus",),
            ),
        )


def test_a_plugin_command_gets_its_refusal_and_its_targets() -> None:
    h = tavern_fight(
        {"aria": "common_room", "bram": "common_room", "gob": "common_room", "hob": "bar"},
        [archer(), make("bram"), make("gob", "goblins"), make("hob", "goblins")],
        extra=[Taunt()],
    )
    taunt = details(h, "aria")["taunt"]
    assert (taunt.available, taunt.targets) == (True, ("gob",))
    h.send("taunt", ALICE, creature="aria", target="gob")
    taunt = details(h, "aria")["taunt"]
    assert (taunt.available, taunt.code, taunt.targets) == (False, "no_bonus_action_left", ())
    assert taunt.message == "Aria has no bonus action left this turn."


# -- every unavailable command: the refusal sending it gets ----------------------------------


@pytest.mark.parametrize("moment", ["others_turn", "action_spent", "gm_for_npc", "prone"])
def test_each_unavailable_command_says_what_sending_it_would_get(moment: str) -> None:
    h = tavern_fight(
        {"aria": "common_room", "bram": "common_room", "gob": "common_room"},
        [archer(), make("bram"), make("gob", "goblins")],
    )
    who, actor = "aria", ALICE
    if moment == "others_turn":
        who, actor = "bram", Actor("player", "player-bram")
    elif moment == "action_spent":
        h.rolls(1, 1).send("attack", ALICE, creature="aria", target="gob")
    elif moment == "gm_for_npc":
        who, actor = "gob", GM_ACTOR
    else:
        h.send("drop_prone", ALICE, creature="aria")
    unavailable = [d for d in h.engine.action_details(h.state, who, actor) if not d.available]
    assert unavailable
    for detail in unavailable:
        spec = h.engine.commands[detail.id]
        others = [c for c in h.state.creatures if c != who]
        params = well_formed(spec, h.state, who, others)
        refusal = h.engine.refusal_for(h.state, Command(detail.id, params, actor))
        assert refusal is not None, detail
        assert (detail.code, detail.message) == (refusal.code, refusal.message), detail
    available = [d.id for d in h.engine.action_details(h.state, who, actor) if d.available]
    assert available == h.engine.available_actions(h.state, who, actor)
    if moment == "prone":
        assert "stand" in available


def test_available_actions_checks_the_parameters_too() -> None:
    h = tavern_fight({"aria": "common_room", "gob": "cellar"}, [archer(), make("gob", "goblins")])
    offered = h.engine.available_actions(h.state, "aria", ALICE)
    assert offered == [d.id for d in h.engine.action_details(h.state, "aria", ALICE) if d.available]
    assert {"attack", "enter", "take_position"} <= set(offered)
    assert "leave_position" not in offered  # Aria holds no position: refused whole
    h.send("enter", ALICE, creature="aria", zones=["bar"])
    assert "enter" not in h.engine.available_actions(h.state, "aria", ALICE)  # 0 ft left
    assert h.engine.available_actions(h.state, "gob", ALICE) == []


# -- what keeps the encounter open ---------------------------------------------------------


def test_ending_names_the_dying_creature_that_keeps_the_fight_open() -> None:
    h = tavern_fight(
        {"gob": "common_room", "aria": "common_room"},
        [make("gob", "goblins", hp=3), make("aria", controller="alice", hp=2)],
    )
    assert h.engine.ending(h.state) == (None, [])
    h.rolls(15, 6).send("attack", creature="gob", target="aria")
    assert h.creature("aria").has("dying")
    assert h.engine.ending(h.state) == (None, ["Aria is dying"])
    h.send("grant_condition", creature="gob", condition="defeated")
    over, blockers = h.engine.ending(h.state)
    assert over == "every creature of the side 'goblins' is defeated, surrendered or escaped"
    assert blockers == ["Aria is dying"]
    assert h.state.phase == "turns"
    h.send("stabilize", creature="aria")
    assert h.state.phase == "ended"


# -- engagement ends with the fight: a stable creature too ---------------------------------


def test_nobody_engages_a_creature_stable_at_zero_hit_points() -> None:
    h = tavern_fight(
        {"gob": "common_room", "aria": "common_room", "bram": "common_room"},
        [make("gob", "goblins", hp=30), make("aria", hp=2), make("bram")],
    )
    h.rolls(15, 6).send("attack", creature="gob", target="aria")
    assert h.state.engagements == []  # dying: the hit's engagement ended at once
    h.send("stabilize", creature="aria")
    assert h.creature("aria").has("stable")
    h.end_turn()
    h.end_turn()  # Aria, stable at 0: nothing to do
    h.end_turn()  # Bram
    # Stable at 0 is unconscious: advantage (15 kept) and a critical hit (2d6)
    events = h.rolls(15, 3, 1, 1).send("attack", creature="gob", target="aria")
    assert not [e for e in events if isinstance(e, EngagementStarted)]
    assert h.state.engagements == []
    refusal = h.refused("engage", creature="gob", target="aria")
    assert refusal.code in ("cannot_engage", "invalid_target")
    h.assert_replay_matches()
