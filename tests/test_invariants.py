"""Property test: random encounters under random (legal and illegal) commands keep the invariants.

After every command:

- turn resources are never negative, and no move or stand-up spends more than
  :func:`movement_left` allowed at that moment;
- a creature takes at most one ``action``-cost ``action_taken`` per turn;
- once round 1 has started the initiative order (slot ids and their members) only
  changes through ``add_creature`` (one creature more) or ``set_group_order``
  (same members, new order);
- a refused command leaves the state exactly as it was and yields no events, with a
  numbered refusal code; an accepted one does not touch the state it was given;
- replaying all events rebuilds the live state, and ``seq`` counts them;
- every event round-trips through ``event_to_dict``/``event_from_dict`` and JSON.

Three commands in four are drawn to fit the state (the creature whose turn it is,
acting for its controller, against a target in its zone, into a zone it can reach,
answering a pending decision, ...), the rest blind. The run must reach the rules:
at least a third of the drawn commands accepted, and every command type accepted
at least once.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture.providers import HypothesisProvider

from zonekeep.plugins.areas import max_targets
from zonekeep.sdk import (
    GM,
    GM_ACTOR,
    SYSTEM_ACTOR,
    Action,
    ActionTaken,
    Actor,
    Arena,
    Asset,
    Attack,
    Command,
    Creature,
    Event,
    Link,
    Moved,
    MovementSpent,
    RandomEntropy,
    Refusal,
    Trait,
    TurnStarted,
    Zone,
    ZoneEntered,
)
from zonekeep.sdk._serial import event_from_dict, event_to_dict, state_to_dict
from zonekeep.sdk._state import OVERRIDE_FIELDS, EncounterState, apply_event, movement_left, replay
from zonekeep.sdk._types import MOVE_MODES
from zonekeep.sdk.engine import Engine
from zonekeep.sdk.host import RULE_ERRORS

ENGINE = Engine()
COMMANDS = sorted(ENGINE.commands)
ZONES = ("field", "ridge")
#: Two 30-ft zones side by side, each with a prop to take position at.
ARENA = Arena(
    "prop",
    "Field and ridge",
    (Zone("field", "Field", 30), Zone("ridge", "Ridge", 30)),
    (Link("field", "ridge", "beside"),),
    (Asset("crate", "Crate", "prop", "field"), Asset("rock", "Rock", "prop", "ridge")),
)
P1 = Actor("player", "p1")
ACTORS = [GM_ACTOR, P1, Actor("player", "p2"), Actor("spectator", "watcher"), SYSTEM_ACTOR]
BOGUS_IDS = ["nobody", "", "g1", "P0"]
CONDITIONS = ["prone", "dying", "stable", "defeated", "dodging", "squeezing", "poisoned", ""]

#: Commands of the content plugins (creature features, classes) and of issue 30's GM
#: tools that this generator does not draw yet: its random roster carries no creature
#: with the features they need (a breath weapon, Second Wind, a multiattack...). Each is
#: played by its own tests (tests/test_srd_*.py, test_classes.py, test_features*.py,
#: test_sdk_world.py); drawing them here is open work, and this set must shrink.
NOT_DRAWN_YET = {
    "action_surge", "aggressive", "breath", "call_check", "consume_life", "cunning_action",
    "damage_zone", "death_glare", "dreadful_glare", "escape_grapple", "grappled_save",
    "grip", "healing_touch", "invisibility", "multiattack", "reckless", "scare",
    "second_wind", "teleport", "use_feature", "put_out_fire",
    "enlarge", "stanch", "deadly_leap", "spot", "unstick",  # zonekeep.srd (_gazes.py)
    "hasted_action",  # zonekeep.spells (Haste)
    "leadership", "fetid_cloud", "rampage", "web", "escape_web", "attack_web",
    "grapple_instead", "escape_hold", "detach", "let_go",
    "ink_cloud", "ink_dash", "engulf", "escape_engulf", "pull_out",
    # the classes plugin's barbarian, monk, paladin and sorcerer features
    "divine_smite", "flurry_of_blows", "font_of_magic", "frenzy_attack", "lay_on_hands",
    "martial_arts", "patient_defense", "rage", "reckless_attack", "step_of_the_wind",
    "stunning_strike",
    # the spells plugin's entangle, web, spiritual weapon, moonbeam, flaming sphere
    "break_free", "spiritual_weapon", "move_moonbeam", "move_sphere",
    # the classes plugin's Open Hand Technique and Channel Divinity
    "open_hand_technique", "preserve_life", "turn_the_unholy", "turn_undead",
    "bardic_inspiration", "sacred_weapon", "recover_slots",  # the classes plugin's (part A)
    "retreat_dash", "flame_blade",  # the spells plugin's (plugins/spells/_more.py)
    "offhand_attack",  # the classes plugin's two-weapon fighting (its creatures hold no weapons)
    "call_lightning",  # the spells plugin's (plugins/spells/_zones.py)
}  # fmt: skip
#: Every command the generator draws (not those of :data:`NOT_DRAWN_YET`: a content
#: plugin's new command then leaves the derandomized run's draws as they were), with the
#: turn's own commands drawn more often so that rounds go by.
WEIGHTED = [
    *(c for c in COMMANDS if c not in NOT_DRAWN_YET),
    *["end_turn"] * 10,
    *["move"] * 4,
    *["attack"] * 4,
    *["interact", "dash", "stand", "drop_prone", "ready", "release_readied", "decide"] * 2,
    *["end_encounter", "remove_note", "decision_timeout"] * 2,
    *["add_creature", "set_group_order"] * 2,
]

# -- building an encounter ---------------------------------------------------------------


@st.composite
def creatures(draw: st.DrawFn) -> list[Creature]:
    count = draw(st.integers(2, 5))
    found = []
    for i in range(count):
        # The first creature is p1's, the second the GM's: two sides, always.
        pc = i == 0 or (i > 1 and draw(st.booleans()))
        walk = draw(st.sampled_from([30, 30, 25, 40, 0]))
        speeds = {"walk": walk}
        if draw(st.booleans()):
            speeds[draw(st.sampled_from(["fly", "climb", "swim"]))] = draw(
                st.sampled_from([20, 60])
            )
        hp = draw(st.integers(1, 12))
        found.append(
            Creature(
                f"p{i}" if pc else f"n{i}",
                f"Creature {i}",
                "party" if pc else "foes",
                controller="p1" if pc else "gm",
                dex_mod=draw(st.integers(-2, 4)),
                initiative_bonus=draw(st.sampled_from([0, 0, 2])),
                speeds=speeds,
                hp=hp,
                max_hp=hp,
                ac=draw(st.integers(8, 16)),
                group=None if pc else draw(st.sampled_from([None, "g1", "g1", "g2"])),
                attacks=[Attack("claw", "melee", draw(st.integers(0, 6)), "1d6")],
                # A third creature of the GM's can Nimble Escape (zonekeep.srd's bonus action).
                actions=(Action("nimble-escape", "Nimble Escape", "bonus_action"),)
                if i == 2 and not pc
                else (),
                # The first casts (zonekeep.spells): fire bolt, and healing word with a slot.
                traits=(SPELLCASTING,) if i == 0 else (),
                resources={"spell-slots-1": 2} if i == 0 else {},
            )
        )
    return found


# -- drawing commands -----------------------------------------------------------------------


def wrong_value() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.text(max_size=4),
        st.lists(st.integers(0, 3), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    )


def creature_ids(state: EncounterState) -> list[str]:
    ids = sorted(state.creatures)
    if state.active is not None:
        ids += [state.active] * 3
    return ids + BOGUS_IDS


def creature_value(draw: st.DrawFn, state: EncounterState) -> str:
    if state.active is not None and draw(st.integers(0, 2)) > 0:
        return state.active
    return draw(st.sampled_from(creature_ids(state)))


def creature_dict(draw: st.DrawFn, state: EncounterState) -> Any:
    data: dict[str, Any] = {
        "id": draw(st.sampled_from(["late1", "late2", "late3", *sorted(state.creatures), "g1"])),
        "name": "Latecomer",
        "side": draw(st.sampled_from(["party", "foes"])),
    }
    if data["side"] == "party":
        data["controller"] = draw(st.sampled_from(["p1", "p2"]))
    if draw(st.booleans()):
        data["dex_mod"] = draw(st.integers(-2, 4))
    if draw(st.booleans()):
        data["group"] = draw(st.sampled_from(["g1", "g2", "g3"]))
    if draw(st.booleans()):
        data["zone"] = draw(st.sampled_from([*ZONES, "void"]))
    if draw(st.integers(0, 5)) == 0:
        data[draw(st.sampled_from(["hp", "size", "bogus", "speeds"]))] = draw(wrong_value())
    return data


def string_value(draw: st.DrawFn, state: EncounterState, command: str, name: str) -> Any:
    if name == "field":
        return draw(st.sampled_from([*OVERRIDE_FIELDS, "speeds", "bogus"]))
    if name == "condition":
        return draw(st.sampled_from(CONDITIONS))
    if name == "mode":
        return draw(st.sampled_from([*MOVE_MODES, "teleport"]))
    if name == "decision":
        return draw(st.sampled_from([*(d.id for d in state.pending), "d1", "d99"]))
    if name == "group":
        slots = [e.slot for e in state.initiative]
        return draw(st.sampled_from([*slots, "g1", "g2", "nope"]))
    if name == "id":
        return draw(st.sampled_from(["lava", "fog", ""]))
    if name == "attack":
        return draw(st.sampled_from(["claw", "bite"]))
    if name == "text":
        return draw(st.sampled_from(["Run!", "", "   ", " ".join(["word"] * 16)]))
    return draw(st.text(max_size=8))


def param_value(draw: st.DrawFn, state: EncounterState, command: str, name: str, kind: str) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(wrong_value())
    if kind == "creature" and name == "creature":
        return creature_value(draw, state)
    if kind == "creature":
        return draw(st.sampled_from(creature_ids(state)))
    if kind == "strings" and name == "choice":
        use_pending = draw(st.booleans())
        if state.pending and use_pending:
            return list(draw(st.permutations(state.pending[0].options)))
        return draw(st.lists(st.sampled_from(creature_ids(state)), max_size=3))
    if kind in ("creatures", "strings"):
        if command == "set_group_order":
            groups = [e for e in state.initiative if len(e.members) > 1]
            use_group = draw(st.booleans())
            if groups and use_group:
                return list(draw(st.permutations(groups[0].members)))
        return draw(st.lists(st.sampled_from(creature_ids(state)), max_size=3, unique=True))
    if kind == "integer":
        return draw(st.one_of(st.integers(1, 30), st.integers(-10, 70)))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "zone":
        return draw(st.sampled_from([*ZONES, "void"]))
    if kind == "object":
        if name == "positions":
            ids = draw(st.lists(st.sampled_from(creature_ids(state)), max_size=3))
            return {cid: draw(st.sampled_from([*ZONES, "void"])) for cid in ids}
        return creature_dict(draw, state)
    if kind == "any":
        return draw(
            st.one_of(
                st.integers(-5, 40),
                st.sampled_from([*ZONES, "void", "party", "foes", "p1", *state.creatures]),
                st.none(),
                st.booleans(),
            )
        )
    return string_value(draw, state, command, name)


def random_command(draw: st.DrawFn, state: EncounterState) -> Command:
    """Any command, its parameters often wrong: the refusals' side of the property."""
    kind = draw(st.sampled_from(WEIGHTED))
    spec = ENGINE.commands[kind]
    params: dict[str, Any] = {}
    for name, param in spec.params.items():
        include = draw(st.integers(0, 9)) > (0 if param.required else 7)
        if include:
            params[name] = param_value(draw, state, kind, name, param.type)
    if draw(st.integers(0, 14)) == 0:
        params["unexpected"] = 1
    cid = params.get("creature")
    creature = state.creatures.get(cid) if isinstance(cid, str) else None
    if creature is not None and draw(st.integers(0, 3)) > 0:
        actor = GM_ACTOR if creature.controller == "gm" else Actor("player", creature.controller)
    else:
        actor = draw(st.sampled_from(ACTORS))
    return Command(kind, params, actor)


# -- drawing commands that fit the state -------------------------------------------------------
#
# Most commands are drawn to fit the state: the creature whose turn it is acts for its
# controller, a target in its zone, a zone it can reach, a decision that is pending,
# an effect that is running, and so on. Each builder returns the parameters and actor
# of one command, or None when the state offers nothing to send it about.

Built = tuple[dict[str, Any], Actor] | None
Builder = Callable[[st.DrawFn, EncounterState], Built]


def controller_of(c: Creature) -> Actor:
    return GM_ACTOR if c.controller == GM else Actor("player", c.controller)


def active(state: EncounterState) -> Creature | None:
    return state.creatures.get(state.active) if state.active else None


def pick(draw: st.DrawFn, items: list[Any]) -> Any:
    return draw(st.sampled_from(items)) if items else None


def others_here(state: EncounterState, me: Creature, *, enemies: bool | None = None) -> list[str]:
    """Creatures in ``me``'s zone still in the fight (enemies only, allies only, or any)."""
    return [
        c.id
        for c in state.creatures.values()
        if c.id != me.id
        and c.zone == me.zone
        and not c.out_of_fight
        and (enemies is None or (c.side != me.side) == enemies)
    ]


def other_zone(zone: str | None) -> str:
    return "ridge" if zone == "field" else "field"


def turn_command(
    extra: Callable[[st.DrawFn, EncounterState, Creature], dict[str, Any] | None] | None = None,
) -> Builder:
    """A command of the creature whose turn it is, sent by its controller."""

    def build(draw: st.DrawFn, state: EncounterState) -> Built:
        me = active(state)
        if me is None:
            return None
        params = {} if extra is None else extra(draw, state, me)
        if params is None:
            return None
        return {"creature": me.id, **params}, controller_of(me)

    return build


def gm_command(build: Callable[[st.DrawFn, EncounterState], dict[str, Any] | None]) -> Builder:
    def run(draw: st.DrawFn, state: EncounterState) -> Built:
        params = build(draw, state)
        return None if params is None else (params, GM_ACTOR)

    return run


def _target(key: str, *, enemies: bool | None = True) -> Callable[..., dict[str, Any] | None]:
    def build(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
        target = pick(draw, others_here(state, me, enemies=enemies))
        return None if target is None else {key: target}

    return build


def _move(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    left = movement_left(state, me) // (2 if "prone" in me.conditions else 1)  # crawling
    return {"feet": draw(st.integers(1, left // 5)) * 5} if left >= 5 else None


def _take_position(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    props = [a.id for a in state.assets_in(me.zone or "") if a.id != me.position]
    return None if not props else {"asset": pick(draw, props)}


def _leave_position(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    return None if me.position is None else {}


def _engage(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    # An enemy here that is up and not yet engaged with me, when I may engage at all
    # (just arrived with my action left, or leaving a position): docs/rules.md, A3.
    if not (me.position or (state.resources.entered_zone == me.zone and state.resources.actions)):
        return None
    up = [
        cid
        for cid in others_here(state, me, enemies=True)
        if "dying" not in state.creatures[cid].conditions and not state.is_engaged(me.id, cid)
    ]
    target = pick(draw, up)
    return None if target is None else {"target": target}


def _withdraw(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    target = pick(draw, state.engaged_with(me.id))
    return None if target is None else {"target": target}


def _shove(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    target = pick(draw, others_here(state, me))
    return None if target is None else {"target": target, "zone": other_zone(me.zone)}


def _area(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    return {
        "zone": me.zone,
        "shape": "sphere",
        "size": 5,
        "range": 0,
        # Every creature it can see in the area, up to its targets (docs/rules.md, A10)
        "targets": [c.id for c in state.in_zone(me.zone or "") if c.id != me.id and not c.hidden][
            : max_targets("sphere", 5)
        ],
        "save": "dex",
        "dc": 12,
        "damage": "1d4",
        "damage_type": "fire",
        "ongoing": draw(st.integers(0, 3)) > 0,
        "name": "Burst",
    }


def _release(draw: st.DrawFn, state: EncounterState) -> Built:
    cid = pick(draw, sorted(c for c in state.readied if c != state.active))
    return None if cid is None else ({"creature": cid}, controller_of(state.creatures[cid]))


def _decide(draw: st.DrawFn, state: EncounterState) -> Built:
    decision = pick(draw, state.pending)
    if decision is None:
        return None
    if decision.ordering:
        choice = list(draw(st.permutations(decision.options)))
    else:
        choice = [draw(st.sampled_from(decision.options))]
    actor = GM_ACTOR if decision.controller == GM else Actor("player", decision.controller)
    return {"decision": decision.id, "choice": choice}, actor


def _any_creature(state: EncounterState) -> list[str]:
    return sorted(state.creatures)


def _override(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    field, value = draw(
        st.sampled_from(
            [
                ("hp", st.sampled_from([0, 1, 1, 1, 2, 6, 12])),
                ("ac", st.integers(8, 16)),
                ("hidden", st.booleans()),
            ]
        ).flatmap(lambda fv: st.tuples(st.just(fv[0]), fv[1]))
    )
    return {"creature": pick(draw, _any_creature(state)), "field": field, "value": value}


def _grant(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    cid = pick(draw, _any_creature(state))
    missing = [
        c
        for c in ("prone", "poisoned", "restrained", "charmed")
        if c not in state.creatures[cid].conditions
    ]
    return None if not missing else {"creature": cid, "condition": pick(draw, missing)}


def _remove(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    held = [(c.id, k) for c in state.creatures.values() for k in c.conditions]
    if not held:
        return None
    cid, condition = pick(draw, held)
    return {"creature": cid, "condition": condition}


def _stabilize(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    dying = [c.id for c in state.creatures.values() if "dying" in c.conditions]
    return None if not dying else {"creature": pick(draw, dying)}


def _group_order(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    groups = [e for e in state.initiative if len(e.members) > 1 and state.active not in e.members]
    group = pick(draw, groups)
    if group is None:
        return None
    return {"group": group.slot, "members": list(draw(st.permutations(group.members)))}


def _late(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    taken = {*state.creatures, *(c.group for c in state.creatures.values() if c.group)}
    cid = next(f"late{i}" for i in range(1, 99) if f"late{i}" not in taken)
    data: dict[str, Any] = {"id": cid, "name": "Latecomer", "zone": draw(st.sampled_from(ZONES))}
    if draw(st.booleans()):
        data.update(side="party", controller=draw(st.sampled_from(["p1", "p2"])))
    else:
        data.update(side="foes", group=draw(st.sampled_from([None, "g1", "g2"])))
    return data


def _move_to_zone(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    cid = pick(draw, _any_creature(state))
    return {"creature": cid, "zone": other_zone(state.creatures[cid].zone)}


def _force(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    forcer, cid = draw(st.permutations(_any_creature(state)))[:2]
    return {"forcer": forcer, "creature": cid, "zone": other_zone(state.creatures[cid].zone)}


def _set_position(draw: st.DrawFn, state: EncounterState) -> dict[str, Any] | None:
    cid = pick(draw, _any_creature(state))
    props = [a.id for a in state.assets_in(state.creatures[cid].zone or "")]
    if len(props) > 0 and draw(st.booleans()):
        return {"creature": cid, "asset": pick(draw, props)}
    return {"creature": cid}


def _caster(state: EncounterState, me: Creature) -> bool:
    return any(t.id == "spellcasting" for t in me.traits)


def _fire_bolt(draw: st.DrawFn, state: EncounterState, me: Creature) -> dict[str, Any] | None:
    target = _target("target")(draw, state, me) if _caster(state, me) else None
    return None if target is None else {"spell": "fire-bolt", **target}


#: The first creature's Spellcasting (the zonekeep.spells plugin's trait).
SPELLCASTING = Trait(
    "spellcasting",
    "Spellcasting",
    params={"dc": 13, "attack_bonus": 5, "cantrips": ["fire-bolt"], "prepared": ["healing-word"]},
)


#: How to draw each command so that it fits the state (and how often, by repetition).
BUILDERS: dict[str, Builder] = {
    "end_turn": turn_command(),
    "move": turn_command(_move),
    "attack": turn_command(lambda d, s, me: _target("target")(d, s, me) if me.attacks else None),
    "dash": turn_command(),
    "disengage": turn_command(),
    "nimble_escape": turn_command(
        lambda d, s, me: {} if any(a.id == "nimble-escape" for a in me.actions) else None
    ),
    "cast": turn_command(_fire_bolt),
    "cast_bonus": turn_command(
        lambda d, s, me: {"spell": "healing-word", "target": me.id} if _caster(s, me) else None
    ),
    "dodge": turn_command(),
    "sprint": turn_command(),
    "stand": turn_command(lambda d, s, me: {} if "prone" in me.conditions else None),
    "drop_prone": turn_command(
        lambda d, s, me: None if "prone" in me.conditions or not me.speed_for("walk") else {}
    ),
    "interact": turn_command(lambda d, s, me: {"object": "the door"}),
    "communicate": turn_command(lambda d, s, me: {"text": "Hold the line!"}),
    "ready": turn_command(lambda d, s, me: _target("target")(d, s, me) if me.attacks else None),
    "enter": turn_command(lambda d, s, me: {"zones": [other_zone(me.zone)]}),
    "take_position": turn_command(_take_position),
    "leave_position": turn_command(_leave_position),
    "engage": turn_command(_engage),
    "withdraw": turn_command(_withdraw),
    "move_adjacent": turn_command(_target("ally", enemies=False)),
    "shove": turn_command(_shove),
    "area_effect": turn_command(_area),
    "release_readied": _release,
    "decide": _decide,
    "decision_timeout": gm_command(
        lambda d, s: {"decision": s.pending[0].id} if s.pending else None
    ),
    "rest": gm_command(lambda d, s: {"kind": d(st.sampled_from(["short", "long"]))}),
    "override": gm_command(_override),
    "grant_condition": gm_command(_grant),
    "remove_condition": gm_command(_remove),
    "heal": gm_command(
        lambda d, s: {"creature": pick(d, _any_creature(s)), "amount": d(st.integers(1, 8))}
    ),
    "damage": gm_command(
        lambda d, s: {"creature": pick(d, _any_creature(s)), "amount": d(st.integers(1, 3))}
    ),
    "stabilize": gm_command(_stabilize),
    "add_note": gm_command(lambda d, s: {"text": "The roof creaks.", "hidden": d(st.booleans())}),
    "remove_note": gm_command(lambda d, s: {"note": pick(d, sorted(s.notes))} if s.notes else None),
    "apply_effect": gm_command(
        lambda d, s: {
            "creature": pick(d, _any_creature(s)),
            "condition": "charmed",
            "rounds": d(st.integers(1, 2)),
        }
    ),
    "end_effect_of": gm_command(
        lambda d, s: (
            {"effect": pick(d, sorted(s.condition_effects))} if s.condition_effects else None
        )
    ),
    "end_effect": gm_command(
        lambda d, s: {"asset": pick(d, sorted(s.effects))} if s.effects else None
    ),
    "add_hazard": gm_command(
        lambda d, s: {
            "id": d(st.sampled_from(["lava", "smoke", "flood"])),
            "name": "Hazard",
            "time_sensitive": d(st.booleans()),
        }
    ),
    "remove_hazard": gm_command(
        lambda d, s: {"id": pick(d, sorted(s.hazards))} if s.hazards else None
    ),
    "end_encounter": gm_command(lambda d, s: {"force": d(st.integers(0, 7)) == 0}),
    "continue_encounter": gm_command(lambda d, s: {}),
    "set_group_order": gm_command(_group_order),
    "add_creature": gm_command(lambda d, s: {"creature": _late(d, s)}),
    "move_to_zone": gm_command(_move_to_zone),
    "force": gm_command(_force),
    "set_position": gm_command(_set_position),
}

#: The turn's own commands more often, the GM's and the rare ones less.
SENSIBLE_WEIGHTS: dict[str, int] = {
    "end_turn": 8,
    "attack": 6,
    "cast": 6,  # the first creature's fire bolt: its turn comes once a round
    "move": 4,
    "ready": 4,
    "area_effect": 4,
    "end_encounter": 1,
    "continue_encounter": 1,
}


def weight(kind: str) -> int:
    """The turn's commands three times as often as the GM's, unless told otherwise."""
    return SENSIBLE_WEIGHTS.get(kind, 3 if ENGINE.commands[kind].who == "creature" else 1)


#: What a surprised creature cannot spend (plugins/surprise.py).
BLOCKED_BY_SURPRISE = {"action", "bonus", "interaction", "reaction", "movement"}


def fits(kind: str, state: EncounterState) -> bool:
    """Whether ``kind`` is worth drawing now: its phase, and for the creature whose turn
    it is, whether it can act at all (capable, not surprised)."""
    spec = ENGINE.commands[kind]
    if state.phase not in spec.phases:
        return False
    if kind == "end_encounter" and state.round < 2:  # let the fight happen first
        return False
    if spec.who != "creature" or kind == "release_readied":
        return True
    me = active(state)
    if me is None:
        return False
    if kind != "end_turn" and (me.incapacitated or me.out_of_fight):
        return False
    if me.id in state.surprised and BLOCKED_BY_SURPRISE.intersection(spec.costs):
        return False
    res = state.resources
    if "action" in spec.costs and res.actions <= 0 and "interaction" not in spec.costs:
        return False
    if "interaction" in spec.costs and res.interactions <= 0 and res.actions <= 0:
        return False
    return "movement" not in spec.costs or movement_left(state, me) >= half_speed(me)


def half_speed(me: Creature) -> int:
    """What taking or leaving a position, or standing up, costs (at least 5 ft to move)."""
    return max(5, -(-me.speed_for("walk") // 2))


def openings(state: EncounterState) -> list[str]:
    """The commands that only make sense in a passing state, when that state is here."""
    found: list[str] = []
    me = active(state)
    if state.pending:
        found += ["decide", "decide", "decision_timeout"]
    if any(c != state.active for c in state.readied):
        found.append("release_readied")
    # The rarer openings are drawn several times, so that a run reaches each of them.
    if any("dying" in c.conditions for c in state.creatures.values()):
        found += ["stabilize"] * 3
    if state.effects:
        found += ["end_effect"] * 3
    if state.condition_effects:
        found.append("end_effect_of")
    if state.hazards:
        found.append("remove_hazard")
    if me is not None and state.engaged_with(me.id):
        found.append("withdraw")
    if me is not None and me.position:
        found += ["leave_position", "engage"]
    if me is not None and state.resources.entered_zone == me.zone and state.resources.actions:
        # The chance to engage on arrival is short-lived (this action, this zone): take it often.
        found += ["engage", "engage", "engage"]
    if me is not None and "prone" in me.conditions:
        found.append("stand")
    if any(len(e.members) > 1 and state.active not in e.members for e in state.initiative):
        found.append("set_group_order")
    if me is not None and others_here(state, me, enemies=True):
        found += ["ready", "attack", "attack", "shove", "area_effect"]
    if me is not None and others_here(state, me, enemies=False):
        found.append("move_adjacent")
    found += ["sprint", "dodge", "dash", "disengage"]
    return [k for k in found if fits(k, state)]


def sensible_command(draw: st.DrawFn, state: EncounterState) -> Command | None:
    """A command that fits the state, or None when no command can be built for it."""
    usable = openings(state)
    if not usable or draw(st.booleans()):
        usable = [k for k in BUILDERS if fits(k, state)]
    weighted = [k for k in usable for _ in range(weight(k))]
    for _ in range(4):  # a few tries: many commands need something the state may lack
        if not weighted:
            return None
        kind = draw(st.sampled_from(weighted))
        built = BUILDERS[kind](draw, state)
        if built is not None:
            params, actor = built
            return Command(kind, params, actor)
        weighted = [k for k in weighted if k != kind]
    return None


def draw_command(draw: st.DrawFn, state: EncounterState) -> Command:
    """Three commands in four fit the state; the others are drawn blind."""
    if draw(st.integers(0, 3)) > 0:
        command = sensible_command(draw, state)
        if command is not None:
            return command
    return random_command(draw, state)


# -- invariants --------------------------------------------------------------------------------


def order_of(state: EncounterState) -> list[tuple[str, tuple[str, ...]]]:
    return [(e.slot, e.members) for e in state.initiative]


def check_resources(state: EncounterState) -> None:
    r = state.resources
    assert r.actions >= 0, r
    assert r.bonus_actions >= 0, r
    assert r.interactions >= 0, r
    assert r.movement_spent >= 0, r
    assert r.dashes >= 0, r


def check_events_one_by_one(
    before: EncounterState, events: tuple[Event, ...], actions: dict[str, int]
) -> EncounterState:
    """Fold ``events`` onto a copy of ``before``, checking movement and actions on the way."""
    state = before.copy()
    for event in events:
        if isinstance(event, Moved):
            creature = state.creatures[event.creature]
            left = movement_left(state, creature, event.mode)
            assert event.cost <= left, f"{event} spends more than the {left} ft left"
            assert event.cost >= event.feet > 0
        if isinstance(event, MovementSpent):
            left = movement_left(state, state.creatures[event.creature])
            assert 0 <= event.feet <= left, f"{event} spends more than the {left} ft left"
        if isinstance(event, TurnStarted):
            actions.clear()
        if isinstance(event, ZoneEntered):
            # Every engagement and adjacency of a creature leaving its zone has ended by an
            # event before the move (docs/rules.md, A3: an engagement ends with an event); the fold's
            # own drop is only for logs written before that.
            pairs = [*state.engagements, *state.adjacent, *state.back_to_back]
            assert [p for p in pairs if event.creature in p] == [], f"{event} left pairs"
        if isinstance(event, ActionTaken) and event.cost == "action":
            actions[event.creature] = actions.get(event.creature, 0) + 1
            assert actions[event.creature] <= 1, f"{event.creature} took two actions in a turn"
        apply_event(state, event)
        check_resources(state)
    return state


def check_roundtrip(event: Event) -> None:
    data = event_to_dict(event)
    text = json.dumps(data)
    assert event_from_dict(json.loads(text)) == event


def check_order_change(
    kind: str, before: list[tuple[str, tuple[str, ...]]], after: list[tuple[str, tuple[str, ...]]]
) -> None:
    if before == after:
        return
    assert kind in ("add_creature", "set_group_order", "decide"), (
        f"{kind} changed the initiative order"
    )
    if kind == "decide":  # an initiative tie settled: the same slots, the tied ones reordered
        assert sorted(before) == sorted(after)
        return
    if kind == "set_group_order":
        assert [s for s, _ in before] == [s for s, _ in after]
        assert [sorted(m) for _, m in before] == [sorted(m) for _, m in after]
        return
    old_members = [m for _, ms in before for m in ms]
    new_members = [m for _, ms in after for m in ms]
    assert len(new_members) == len(old_members) + 1
    if len(after) == len(before):  # joined an existing group, last in its order
        assert [s for s, _ in before] == [s for s, _ in after]
        changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
        assert len(changed) == 1
        (_, old), (_, new) = changed[0]
        assert new[:-1] == old
    else:  # a new slot was inserted; everything else keeps its place
        assert len(after) == len(before) + 1
        remaining = list(after)
        for entry in before:
            assert entry in remaining
        kept = [e for e in after if e in before]
        assert kept == before


#: The setup commands, which every example sends and must see accepted.
SETUP = {"set_surprise", "place", "roll_initiative"}
#: At least this share of the generated commands (after setup) must be accepted per run.
ACCEPTED_SHARE = 1 / 3


def test_random_commands_keep_invariants(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random encounters keep the invariants, and the commands reach the rules.

    Over one run (every example), at least a third of the generated commands are
    accepted and every command type is accepted at least once: a run whose commands
    mostly bounce off permission and parameter checks tests little of the rules.

    Hypothesis now and then draws a constant it found in the source of the project's
    modules loaded so far (tests included), so which examples a derandomized run draws
    changed with which test modules were collected before this one: after one that
    imports ``zonekeep.protocol``, no ``decide`` was ever accepted. Off here, so the run
    is the same whatever else is collected; ``raising=True`` makes a Hypothesis without
    that method fail here rather than quietly differ.
    """
    monkeypatch.setattr(
        HypothesisProvider, "_maybe_draw_constant", lambda *a, **k: None, raising=True
    )
    drawn: Counter[str] = Counter()
    accepted: Counter[str] = Counter()

    @settings(
        max_examples=250,
        # The coverage asserted below is over the whole run: derandomized, the run is
        # the same every time, so it is met or missed for the code, not for a seed.
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(roster=creatures(), seed=st.integers(0, 2**32 - 1), data=st.data())
    def encounters(roster: list[Creature], seed: int, data: st.DataObject) -> None:
        random_encounter(roster, seed, data, drawn, accepted)

    encounters()
    share = sum(accepted.values()) / max(1, sum(drawn.values()))
    assert share >= ACCEPTED_SHARE, f"only {share:.0%} of the commands were accepted: {accepted}"
    never = sorted(set(COMMANDS) - set(accepted) - SETUP - NOT_DRAWN_YET)
    assert never == [], f"never accepted in this run: {never}"


def random_encounter(
    roster: list[Creature],
    seed: int,
    data: st.DataObject,
    drawn: Counter[str],
    accepted: Counter[str],
) -> None:
    """Set up one encounter and send it up to 40 drawn commands, checking every step.

    ``drawn`` counts the commands drawn after setup by type, ``accepted`` the accepted
    ones. The setup commands must pass.
    """
    entropy = RandomEntropy(seed)
    outcome = ENGINE.create("prop", roster, arena=ARENA)
    state = outcome.state
    events: list[Event] = list(outcome.events)
    surprised = data.draw(st.lists(st.sampled_from([c.id for c in roster]), unique=True))
    positions = {c.id: data.draw(st.sampled_from(ZONES)) for c in roster}
    setup = [
        Command("set_surprise", {"surprised": surprised}),
        Command("place", {"positions": positions}),
        Command("roll_initiative"),
    ]
    actions: dict[str, int] = {}

    def step(command: Command, *, must_pass: bool = False) -> None:
        nonlocal state
        before_dict = state_to_dict(state)
        before_order = order_of(state)
        try:
            result = ENGINE.handle(state, command, entropy)
        except Refusal as refusal:
            assert not must_pass, f"setup command {command.type} refused: {refusal}"
            assert refusal.code in RULE_ERRORS, f"unnumbered refusal code {refusal.code!r}"
            assert refusal.message.strip()
            assert state_to_dict(state) == before_dict, "a refused command changed the state"
            hypothesis.event(f"refused {refusal.code}")
            return
        assert state_to_dict(state) == before_dict, "handle() modified the state it was given"
        folded = check_events_one_by_one(state, result.events, actions)
        assert state_to_dict(folded) == state_to_dict(result.state)
        check_resources(result.state)
        if state.round >= 1:
            check_order_change(command.type, before_order, order_of(result.state))
        for event in result.events:
            check_roundtrip(event)
        events.extend(result.events)
        state = result.state
        if not must_pass:
            accepted[command.type] += 1
        hypothesis.event(f"accepted {command.type}")
        assert state.seq == len(events)
        assert state_to_dict(replay(events)) == state_to_dict(state)

    for command in setup:
        step(command, must_pass=True)
    after_end = 0
    for _ in range(data.draw(st.integers(20, 40), label="steps")):
        after_end += state.phase == "ended"
        if after_end > 3:  # an ended encounter only takes notes: a few are enough
            break
        command = data.draw(_command_for(state))
        drawn[command.type] += 1
        step(command)
    hypothesis.event(f"reached round {min(state.round, 3)}")
    hypothesis.event(f"phase {state.phase}")


def _command_for(state: EncounterState) -> st.SearchStrategy[Command]:
    @st.composite
    def build(draw: st.DrawFn) -> Command:
        return draw_command(draw, state)

    return build()


def test_a_creature_may_not_share_its_id_with_a_group() -> None:
    roster = [
        Creature("p0", "Aria", "party", controller="p1"),
        Creature("n1", "Goblin 1", "foes", group="g1"),
        Creature("n2", "Goblin 2", "foes", group="g1"),
    ]
    state = ENGINE.create("clash", roster, zones=("field",)).state
    late = {"id": "g1", "name": "Sneaky", "side": "party", "controller": "p1"}
    with pytest.raises(Refusal) as info:
        ENGINE.handle(state, Command("add_creature", {"creature": late}), RandomEntropy(1))
    assert info.value.code == "duplicate_id"
    joined = {"id": "n3", "name": "Goblin 3", "side": "foes", "group": "p0"}
    with pytest.raises(Refusal) as info:
        ENGINE.handle(state, Command("add_creature", {"creature": joined}), RandomEntropy(1))
    assert info.value.code == "duplicate_id"
    with pytest.raises(Refusal, match="group 'p0' has the same id as a creature"):
        ENGINE.create("clash", [*roster, Creature("n3", "G3", "foes", group="p0")])
