"""Plugin state and custom event types on the in-process harness: declared, emitted,
validated, folded by the plugin's reducer, read by its hooks, replayed, rewound, kept
through a JSON round trip, left alone when the plugin is gone, and filtered per seat."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import braziers_plugin as braziers
import jsonschema
import pytest

from zonekeep.plugins import load_default_plugins
from zonekeep.sdk import (
    Attack,
    AttackMade,
    CommandSpec,
    Creature,
    EventTypeSpec,
    PluginEvent,
    PluginInfo,
    Rewound,
    StateSpec,
    hookimpl,
    plugin_event,
    replay,
)
from zonekeep.sdk.engine import Engine, PluginFailure, PluginLoadError
from zonekeep.sdk.host import event_from_dict, event_to_dict, state_to_dict
from zonekeep.sdk.testing import EncounterHarness
from zonekeep.server._visibility import Viewer, event_for, snapshot_for

SCHEMAS = Path(__file__).resolve().parents[1] / "protocol" / "schemas" / "strict"


def roster() -> list[Creature]:
    return [
        Creature(
            "aria", "Aria", "party", controller="alice", hp=20, max_hp=20, attacks=[Attack("fist")]
        ),
        Creature("gob", "Goblin", "foes", hp=7, max_hp=7, ac=30, attacks=[Attack("fist")]),
        Creature("ogre", "Ogre", "foes", hp=30, max_hp=30, hidden=True, attacks=[Attack("fist")]),
    ]


def table() -> EncounterHarness:
    h = EncounterHarness(roster(), zones=["hall", "bar"], extra_plugins=[braziers])
    h.start(positions={"aria": "hall", "gob": "hall", "ogre": "bar"}, initiative=[15, 10, 5])
    assert h.state.active == "aria"
    return h


def test_the_plugins_ids_and_state_start_at_their_defaults() -> None:
    h = table()
    assert h.engine.catalog.namespace("braziers") == "braziers"
    assert sorted(h.engine.catalog.events) == [
        "braziers.brazier_kicked",
        "braziers.oil_spilled",
        "braziers.slick_primed",
    ]
    assert {"braziers.kick", "braziers.prime"} <= set(h.engine.commands)
    assert h.state.plugin_state == {}
    assert h.plugin_state("braziers") == {"kicked": [], "kickers": [], "slicks": {}}


def test_an_event_is_emitted_by_short_name_folded_and_read_by_the_plugin() -> None:
    h = table()
    events = h.send("kick", creature="aria", brazier="b1")
    assert events[-1] == PluginEvent(
        "braziers.brazier_kicked", {"brazier": "b1", "creature": "aria"}
    )
    assert h.state.plugin_state == {
        "braziers": {"kicked": ["b1"], "kickers": ["aria"], "slicks": {}}
    }
    # The command reads the state through its context: the same brazier twice is refused.
    refusal = h.refused("braziers.kick", creature="aria", brazier="b1")
    assert (refusal.code, refusal.message) == (
        "already_kicked",
        "b1 is already lying on the floor.",
    )
    # A hook reads it too: the kicker attacks with advantage.
    h.rolls(4, 17)
    h.send("attack", creature="aria", target="gob")
    (attack,) = h.of_type(AttackMade)
    assert (attack.roll.dice, attack.roll.kept, attack.roll.advantage) == (
        (4, 17),
        (17,),
        "advantage",
    )
    assert attack.roll.sources == ("advantage:braziers.kicked",)
    h.assert_replay_matches()


def test_hooks_get_a_copy_of_the_state_and_only_events_change_it() -> None:
    h = table()
    h.send("misbehave", how="mutate")
    assert h.plugin_state("braziers") == {"kicked": [], "kickers": [], "slicks": {"bar": "gm"}}


@pytest.mark.parametrize(
    ("how", "problem"),
    [
        (
            "payload",
            "'braziers.brazier_kicked' payload: data.brazier: expected a string, got integer 3",
        ),
        ("unknown", "no plugin declares the event type 'braziers.nothing_like_it'"),
        ("reducer", "the reducer of 'braziers.oil_spilled' failed: RuntimeError"),
    ],
)
def test_an_event_that_cannot_be_emitted_is_a_contained_plugin_error(
    how: str, problem: str
) -> None:
    h = table()
    before = state_to_dict(h.state)
    count = len(h.events)
    with pytest.raises(PluginFailure) as exc:
        h.send("misbehave", how=how)
    assert exc.value.plugin == "braziers"
    assert problem in str(exc.value)
    assert state_to_dict(h.state) == before
    assert len(h.events) == count


def test_replay_through_json_rebuilds_the_plugin_state() -> None:
    h = table()
    h.send("kick", creature="aria", brazier="b1")
    h.send("prime", zone="bar")
    stored = [json.loads(json.dumps(event_to_dict(e))) for e in h.events]
    assert stored[-1] == {"type": "braziers.slick_primed", "data": {"zone": "bar", "by": "gm"}}
    events = [event_from_dict(d) for d in stored]
    assert events == h.events
    again = replay(events, h.engine.catalog)
    assert state_to_dict(again) == state_to_dict(h.state)
    assert again.plugin_state["braziers"]["slicks"] == {"bar": "gm"}


def test_a_rewind_takes_the_plugin_state_back() -> None:
    h = table()
    seq = h.state.seq
    h.send("kick", creature="aria", brazier="b1")
    assert h.plugin_state("braziers")["kicked"] == ["b1"]
    rewound = replay([*h.events, Rewound(seq)], h.engine.catalog)
    assert rewound.plugin_state == {}
    # ... and the copy a rewind is made from shares nothing with the live state.
    copy = h.state.copy()
    copy.plugin_state["braziers"]["kicked"].append("b2")
    assert h.state.plugin_state["braziers"]["kicked"] == ["b1"]


def test_a_log_naming_a_plugin_that_is_gone_still_loads() -> None:
    h = table()
    h.send("kick", creature="aria", brazier="b1")
    h.send("end_turn", creature="aria")
    stored = [event_from_dict(event_to_dict(e)) for e in h.events]
    without = Engine()  # the built-ins only: braziers is not installed
    state = without.replay(stored)
    assert state.seq == h.state.seq
    assert state.plugin_state == {}
    assert state.active == h.state.active == "gob"
    mine = state_to_dict(h.state)
    theirs = state_to_dict(state)
    assert {k: v for k, v in theirs.items() if k != "plugin_state"} == {
        k: v for k, v in mine.items() if k != "plugin_state"
    }
    # Its events reach the GM as they are, and nobody else.
    payload = event_to_dict(stored[-3])
    assert payload["type"] == "braziers.brazier_kicked"
    assert event_for(payload, state, True, without.catalog) == payload
    assert event_for(payload, state, Viewer(player="alice"), without.catalog) == {"type": "hidden"}


def test_each_seat_sees_the_state_and_events_its_visibility_allows() -> None:
    h = table()
    h.send("kick", creature="aria", brazier="b1")
    h.send("prime", zone="bar")
    catalog = h.engine.catalog
    gm = snapshot_for(h.state, True, catalog)
    assert gm["plugin_state"] == {
        "braziers": {"kicked": ["b1"], "kickers": ["aria"], "slicks": {"bar": "gm"}}
    }
    for view in (Viewer(player="alice"), Viewer()):
        seen = snapshot_for(h.state, view, catalog)
        assert seen["plugin_state"] == {"braziers": {"kicked": ["b1"], "kickers": ["aria"]}}
    kicked, primed = (event_to_dict(e) for e in h.events[-2:])
    alice = Viewer(player="alice")
    assert event_for(kicked, h.state, alice, catalog) == kicked
    assert event_for(primed, h.state, alice, catalog) == {"type": "hidden"}
    assert event_for(primed, h.state, True, catalog) == primed


def test_a_hidden_creature_named_in_public_state_or_events_stays_hidden() -> None:
    h = table()
    h.end_turn()
    h.end_turn()
    assert h.state.active == "ogre"
    h.send("kick", creature="ogre", brazier="b9")
    catalog = h.engine.catalog
    alice = Viewer(player="alice")
    seen = snapshot_for(h.state, alice, catalog)
    assert seen["plugin_state"] == {"braziers": {"kicked": ["b9"], "kickers": []}}
    assert snapshot_for(h.state, True, catalog)["plugin_state"]["braziers"]["kickers"] == ["ogre"]
    kicked = event_to_dict(h.events[-1])
    assert kicked["data"]["creature"] == "ogre"
    assert event_for(kicked, h.state, alice, catalog) == {"type": "hidden"}


def test_the_event_schema_takes_plugin_events_and_keeps_built_ins_strict() -> None:
    schema = json.loads((SCHEMAS / "event_payload.schema.json").read_text(encoding="utf-8"))
    check = jsonschema.Draft202012Validator(schema)
    h = table()
    h.send("kick", creature="aria", brazier="b1")
    check.validate(event_to_dict(h.events[-1]))
    for bad in (
        {"type": "braziers.brazier_kicked"},  # no data
        {"type": "braziers.brazier_kicked", "data": [], "extra": 1},
        {"type": "moved", "creature": "aria", "feet": 5, "mode": "walk", "cost": 5, "bogus": 1},
        {"type": "no_such_event"},
        {"type": "turn_ended"},  # a built-in one missing its field
    ):
        assert not check.is_valid(bad), bad
    check.validate({"type": "turn_ended", "creature": "aria"})


# -- declaring ---------------------------------------------------------------------------------


def _plugin(name: str | None, **hooks: Any) -> Any:
    ns = SimpleNamespace()
    if name is not None:
        ns.ZONEKEEP_PLUGIN = PluginInfo(name, "1.0", ">=0.1")
    for hook, value in hooks.items():

        def impl(value: Any = value) -> Any:
            return value

        impl.__name__ = hook
        setattr(ns, hook, hookimpl(impl))
    return ns


def _problems(plugin: Any) -> tuple[str, ...]:
    with pytest.raises(PluginLoadError) as exc:
        Engine([*load_default_plugins(), plugin])
    return exc.value.problems


def test_event_types_and_state_need_a_namespace() -> None:
    problems = _problems(_plugin(None, zonekeep_event_types=[EventTypeSpec("ping")]))
    assert len(problems) == 1
    assert "declares event type 'ping' but has no namespace" in problems[0]


def test_bad_declarations_stop_the_engine_naming_every_problem() -> None:
    problems = _problems(
        _plugin(
            "oops",
            zonekeep_event_types=[
                EventTypeSpec("a", {"type": "object", "patternProperties": {}}),
                EventTypeSpec("b", {"type": "array"}),
                EventTypeSpec("c", template="{who} did it"),
                EventTypeSpec("other.d"),
                EventTypeSpec("e", visibility="players"),  # type: ignore[arg-type]
                EventTypeSpec("f"),
                EventTypeSpec("f"),
            ],
            zonekeep_plugin_state=[
                StateSpec("k", default=object()),
                StateSpec("k2", default=1, schema={"type": "string"}),
                StateSpec("k3"),
                StateSpec("k3"),
            ],
        )
    )
    assert problems == (
        "plugin 'oops': the default of state 'k' is not JSON-like",
        "plugin 'oops', state 'k2': default: expected a string, got integer 1",
        "state 'k3' is declared twice by plugin 'oops'",
        "plugin 'oops', event type 'a': schema: the keyword 'patternProperties' is not "
        "supported (supported: type, enum, const, minimum, maximum, exclusiveMinimum, "
        "exclusiveMaximum, minLength, maxLength, format, properties, required, "
        "additionalProperties, items, minItems, maxItems, anyOf)",
        "plugin 'oops', event type 'b': schema: a payload schema must have \"type\": \"object\"",
        "plugin 'oops': the template of 'c' names 'who', which the payload schema does not "
        "declare (use plain {field} names)",
        "plugin 'oops': 'other.d' is in another namespace; plugin 'oops' declares its ids "
        "short ('d') or as 'oops'.<name>",
        "plugin 'oops': event type 'e' has visibility 'players'; use 'gm', 'owner' or 'everyone'",
        "event type 'oops.f' is declared twice by plugin 'oops'",
    )


def test_a_reducer_may_only_set_declared_json_state() -> None:
    def sneaky(state: dict[str, Any], data: dict[str, Any]) -> None:
        state["undeclared"] = 1

    def opaque(state: dict[str, Any], data: dict[str, Any]) -> None:
        state["k"] = {1, 2}

    def emit(type_: str) -> Any:
        def handler(ctx: Any, cmd: Any) -> None:
            ctx.emit(plugin_event(type_))

        return handler

    plugin = _plugin(
        "strict",
        zonekeep_plugin_state=[StateSpec("k", default=0)],
        zonekeep_event_types=[
            EventTypeSpec("sneaky", reducer=sneaky),
            EventTypeSpec("opaque", reducer=opaque),
        ],
        zonekeep_commands=[
            CommandSpec("go_sneaky", emit("sneaky"), "GM.", who="gm", phases=()),
            CommandSpec("go_opaque", emit("opaque"), "GM.", who="gm", phases=()),
        ],
    )
    h = EncounterHarness(roster(), extra_plugins=[plugin])
    with pytest.raises(PluginFailure, match="undeclared state key"):
        h.send("go_sneaky")
    with pytest.raises(PluginFailure, match="not JSON-like"):
        h.send("go_opaque")
    assert h.state.plugin_state == {}


def test_one_plugin_declaring_a_condition_twice_still_fails_at_start() -> None:
    from zonekeep.sdk import ConditionSpec
    from zonekeep.sdk.engine import PluginConflict

    twice = _plugin(
        "twice",
        zonekeep_conditions=[ConditionSpec("burning", "a"), ConditionSpec("twice.burning", "b")],
    )
    with pytest.raises(PluginConflict) as exc:
        Engine([*load_default_plugins(), twice])
    assert str(exc.value) == (
        "condition 'twice.burning' is declared by both plugin 'twice' and plugin 'twice'"
    )
