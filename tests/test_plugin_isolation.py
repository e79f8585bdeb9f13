"""Plugin isolation: a hook that raises, or answers with the wrong shape, never crashes.

For every hook, the documented outcome exactly (docs/plugins.md, "When a plugin fails"):

- a contribution hook's failing answer is skipped: the command's events are exactly
  those of the same command without the faulty plugin, plus one ``plugin_error``
  event naming the plugin and the hook;
- a trigger hook's or a command handler's failure refuses the command with
  :class:`PluginFailure` naming the plugin and the hook, and nothing changes;
- a declaration hook's failure stops the engine from being built.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
from arena_fixture import harness
from helpers import make

from zonekeep.plugins import load_default_plugins
from zonekeep.sdk import (
    Action,
    Actor,
    AttackMade,
    AttackTrigger,
    CommandSpec,
    Damage,
    Decision,
    DecisionOpened,
    Event,
    Param,
    PluginErrorRecorded,
    ReactionOffer,
    Refusal,
    RollModifier,
    RollRequest,
    RuleContext,
    _hookspecs,
    hookimpl,
    offer_reaction,
)
from zonekeep.sdk._isolation import CONTRIBUTIONS, STARTUP_HOOKS, TRIGGER_ANSWERS, policy
from zonekeep.sdk._loading import IN_PROCESS, LoadedPlugin, PluginLoadError
from zonekeep.sdk.engine import Engine, PluginFailure
from zonekeep.sdk.host import state_to_dict
from zonekeep.sdk.testing import EncounterHarness

RAISE = object()
ALICE = Actor("player", "player-aria")


class Faulty:
    """A plugin implementing ``hook``: harmless (``None``) until armed, then it raises
    (or answers ``answer``). ``calls`` counts the armed calls."""

    def __init__(self, hook: str, answer: object = RAISE) -> None:
        self.armed = False
        self.calls = 0

        def impl() -> Any:
            if not self.armed:
                return None
            self.calls += 1
            if answer is RAISE:
                raise RuntimeError(f"kaboom in {hook}")
            return answer

        setattr(self, hook, hookimpl(impl))


def loaded(plugin: object, name: str = "faulty") -> LoadedPlugin:
    return LoadedPlugin(name, "0.1", IN_PROCESS, plugin)


class Ask:
    """A GM command that opens a plain yes/no decision (nobody carries it out)."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def ask(ctx: RuleContext, cmd: Any) -> None:
            did = f"d{ctx.state.decisions_opened + 1}"
            ctx.emit(
                DecisionOpened(Decision(did, "question", "gm", "Yes?", ("yes", "no"), ("no",)))
            )

        def ask_reaction(ctx: RuleContext, cmd: Any) -> None:
            # The goblin is offered a reaction to Aria's attack, which waits for it.
            trigger = AttackTrigger("aria", "gob", "blade")
            offer = ReactionOffer("gob", "duck", "Duck?", ("duck",))
            offer_reaction(ctx, offer, trigger.to_data())

        return (
            CommandSpec("ask", ask, "GM: ask a question.", who="gm", phases=("turns",)),
            CommandSpec(
                "ask_reaction", ask_reaction, "GM: offer a reaction.", who="gm", phases=("turns",)
            ),
        )


def table(*extra: object) -> EncounterHarness:
    """Aria (a player's) and a goblin in the hall of the test arena; Aria's turn. The
    goblin has a reaction (one the GM plays), so that the attack reaction hooks ask it."""
    duck = Action("gm", "Duck", kind="reaction", text="ducks", gm="the GM's")
    h = harness(
        [make("aria"), make("gob", "goblins", actions=(duck,))],
        {"aria": "hall", "gob": "hall"},
        [20, 10],
        extra_plugins=[loaded(Ask, "ask"), *extra],
    )
    assert h.state.active == "aria"
    return h


Setup = Callable[[EncounterHarness], None]
Send = Callable[[EncounterHarness], tuple[str, dict[str, Any]]]


def nothing(h: EncounterHarness) -> None:
    pass


def send(kind: str, **params: Any) -> Send:
    return lambda h: (kind, params)


def aria_done(h: EncounterHarness) -> None:
    h.end_turn()


def asked(h: EncounterHarness) -> None:
    h.send("ask")


def reaction_asked(h: EncounterHarness) -> None:
    h.send("ask_reaction")


def duck(h: EncounterHarness) -> tuple[str, dict[str, Any]]:
    return "decide", {"decision": h.state.pending[0].id, "choice": ["duck"]}


def decide(h: EncounterHarness) -> tuple[str, dict[str, Any]]:
    return "decide", {"decision": h.state.pending[0].id, "choice": ["yes"]}


def aria_poisoned(h: EncounterHarness) -> None:
    h.send("apply_effect", creature="aria", condition="poisoned")


def end_the_effect(h: EncounterHarness) -> tuple[str, dict[str, Any]]:
    return "end_effect_of", {"effect": next(iter(h.state.condition_effects))}


def at_rope(h: EncounterHarness) -> None:
    h.send("take_position", creature="aria", asset="rope")


def at_chair(h: EncounterHarness) -> None:
    h.send("take_position", creature="aria", asset="chair")


ATTACK = send("attack", creature="aria", target="gob")
ENTER = send("enter", creature="aria", zones=["yard"])
DICE = [15, 4]
AREA = send(
    "area_effect",
    creature="aria",
    zone="hall",
    shape="sphere",
    size=5,
    range=0,
    targets=["gob"],
    name="Burst",
)


AREA_SAVE = send(
    "area_effect",
    creature="aria",
    zone="hall",
    shape="sphere",
    size=5,
    range=0,
    targets=["gob"],
    name="Burst",
    save="dex",
    dc=10,
)


def aria_prone(h: EncounterHarness) -> None:
    h.send("grant_condition", creature="aria", condition="prone")


def gob_at_1_hp(h: EncounterHarness) -> None:
    h.send("override", creature="gob", field="hp", value=1)


#: hook: (policy, setup, the command that runs the hook, dice for it)
SCENARIOS: dict[str, tuple[str, Setup, Send, list[int]]] = {
    "zonekeep_action_refusal": ("skip", nothing, send("dash", creature="aria"), []),
    "zonekeep_roll_modifiers": ("skip", nothing, ATTACK, DICE),
    "zonekeep_movement_surcharges": ("skip", nothing, send("move", creature="aria", feet=10), []),
    "zonekeep_end_blockers": ("skip", nothing, send("end_encounter"), []),
    "zonekeep_encounter_over": ("skip", nothing, send("end_turn", creature="aria"), []),
    "zonekeep_provocations": ("skip", nothing, ENTER, DICE),
    "zonekeep_armor_class_bonus": ("skip", nothing, ATTACK, DICE),
    "zonekeep_critical_threshold": ("skip", nothing, ATTACK, DICE),
    "zonekeep_attack_damage": ("skip", nothing, ATTACK, DICE),
    "zonekeep_jump_distance": (
        "skip",
        nothing,
        send("move", creature="aria", feet=5, mode="jump"),
        [],
    ),
    "zonekeep_attacks_per_action": ("skip", nothing, ATTACK, DICE),
    "zonekeep_zero_hit_points": ("skip", gob_at_1_hp, ATTACK, DICE),
    "zonekeep_skip_turn": ("skip", nothing, send("end_turn", creature="aria"), []),
    "zonekeep_area_max_targets": ("skip", nothing, AREA, []),
    "zonekeep_area_target_weight": ("skip", nothing, AREA, []),
    "zonekeep_area_zones": ("skip", nothing, AREA, []),
    "zonekeep_condition_applied": ("refuse", nothing, send("dodge", creature="aria"), []),
    "zonekeep_condition_removed": ("refuse", aria_prone, send("stand", creature="aria"), []),
    "zonekeep_attack_made": ("refuse", nothing, ATTACK, DICE),
    "zonekeep_modify_damage": ("skip", nothing, ATTACK, DICE),
    "zonekeep_after_damage": ("refuse", nothing, ATTACK, DICE),
    "zonekeep_effect_ended": ("refuse", aria_poisoned, end_the_effect, []),
    "zonekeep_zone_affected": ("refuse", nothing, send("damage_zone", zone="yard", damage="3"), []),
    "zonekeep_save_fails": ("skip", nothing, AREA_SAVE, [12]),
    "zonekeep_condition_immunity": ("skip", nothing, send("dodge", creature="aria"), []),
    "zonekeep_event_applied": ("skip", nothing, send("dodge", creature="aria"), []),
    "zonekeep_zone_leaving": ("refuse", nothing, ENTER, DICE),
    "zonekeep_zone_refusal": ("skip", nothing, ENTER, DICE),
    "zonekeep_link_crossing": ("skip", at_rope, send("enter", creature="aria", zones=["pit"]), []),
    "zonekeep_opportunity_attackers": ("refuse", nothing, ENTER, DICE),
    "zonekeep_next_turn": ("refuse", nothing, send("end_turn", creature="aria"), []),
    "zonekeep_turn_start": ("refuse", nothing, send("end_turn", creature="aria"), []),
    "zonekeep_turn_end": ("refuse", nothing, send("end_turn", creature="aria"), []),
    "zonekeep_round_start": ("refuse", aria_done, send("end_turn", creature="gob"), []),
    "zonekeep_round_end": ("refuse", aria_done, send("end_turn", creature="gob"), []),
    "zonekeep_decision_resolved": ("refuse", asked, decide, []),
    "zonekeep_before_attack": ("refuse", nothing, ATTACK, DICE),
    "zonekeep_attack_redirect": ("refuse", nothing, ATTACK, DICE),
    "zonekeep_hit_reaction": ("refuse", nothing, ATTACK, DICE),
    "zonekeep_attack_reactions": ("refuse", nothing, ATTACK, DICE),
    "zonekeep_reaction_taken": ("refuse", reaction_asked, duck, DICE),
    "zonekeep_maneuver_step": ("refuse", nothing, ENTER, DICE),
    "zonekeep_zone_entered": ("refuse", nothing, ENTER, DICE),
    "zonekeep_position_taken": (
        "refuse",
        nothing,
        send("take_position", creature="aria", asset="chair"),
        DICE,
    ),
    "zonekeep_position_left": (
        "refuse",
        at_chair,
        send("leave_position", creature="aria", asset="chair"),
        DICE,
    ),
}

#: Answers of the wrong shape, for the hooks whose answer matters.
WRONG: dict[str, list[object]] = {
    "zonekeep_action_refusal": ["nope", ("some_code", "a message")],
    "zonekeep_roll_modifiers": [["advantage"], RollModifier("advantage", "x")],
    "zonekeep_movement_surcharges": ["difficult", [1]],
    "zonekeep_end_blockers": ["Aria is dying", 3],
    "zonekeep_encounter_over": [42, ["over"]],
    "zonekeep_provocations": ["gob", [None]],
    "zonekeep_armor_class_bonus": ["2", True, 1.5],
    "zonekeep_critical_threshold": ["19", True, 19.0],
    "zonekeep_attack_damage": ["two dice", 6, ["1d6"]],
    "zonekeep_jump_distance": ["30", True, 30.0],
    "zonekeep_attacks_per_action": ["2", True, 2.0],
    "zonekeep_maneuver_step": ["done", 1],
    "zonekeep_zero_hit_points": [3, ["dying"]],
    "zonekeep_skip_turn": [1, ["asleep"]],
    "zonekeep_area_max_targets": ["2", True],
    "zonekeep_area_target_weight": ["1", 1.5],
    "zonekeep_area_zones": ["hall", [1]],
    "zonekeep_opportunity_attackers": ["gob", [None]],
    "zonekeep_next_turn": ["1", (1,), (True, 0), (-1, 0), [1, 0]],
    "zonekeep_attack_redirect": [3, ["gob"]],
    "zonekeep_hit_reaction": ["2", True, 1.5],
    "zonekeep_attack_reactions": ["gob", [None], [("gob", "duck")]],
    "zonekeep_reaction_taken": [2, {"ac_bonus": 2}, ["gob"]],
    "zonekeep_zone_refusal": ["nope", ("zone_full", "Full.")],
    "zonekeep_link_crossing": [True, ["spider climb"]],
    "zonekeep_modify_damage": ["nope", 3, Damage("aria", 1)],
    "zonekeep_save_fails": [1, ["paralyzed"]],
    "zonekeep_condition_immunity": [1, ["frightened"]],
    "zonekeep_event_applied": ["seen", 1],
}


def hookspecs() -> set[str]:
    return {
        name
        for name, fn in inspect.getmembers(_hookspecs, inspect.isfunction)
        if name.startswith("zonekeep_")
    }


def run(hook: str, faulty: Faulty) -> tuple[EncounterHarness, Send, list[int]]:
    """The scenario of ``hook`` set up with ``faulty`` loaded, then armed."""
    _, setup, command, dice = SCENARIOS[hook]
    h = table(loaded(faulty))
    setup(h)
    faulty.armed = True
    h.rolls(*dice)
    return h, command, dice


def without_seq(h: EncounterHarness) -> dict[str, Any]:
    data = state_to_dict(h.state)
    data.pop("seq")
    return data


def check_skipped(hook: str, answer: object) -> PluginErrorRecorded:
    """The command goes on as if the faulty plugin were absent, plus one plugin_error."""
    faulty = Faulty(hook, answer)
    h, command, _ = run(hook, faulty)
    kind, params = command(h)
    events = h.send(kind, **params)
    assert faulty.calls >= 1, f"the scenario never called {hook}"

    control, _, _ = run(hook, Faulty(hook, None))
    expected = control.send(kind, **params)
    errors = [e for e in events if isinstance(e, PluginErrorRecorded)]
    assert len(errors) == 1, errors
    assert (errors[0].plugin, errors[0].hook) == ("faulty", hook)
    assert [e for e in events if not isinstance(e, PluginErrorRecorded)] == list(expected)
    assert without_seq(h) == without_seq(control)
    assert h.state.seq == control.state.seq + 1
    h.assert_replay_matches()
    return errors[0]


def check_refused(hook: str, answer: object) -> PluginFailure:
    """The command is refused, naming the plugin and the hook; nothing changes; the
    same command works once the plugin behaves."""
    faulty = Faulty(hook, answer)
    h, command, dice = run(hook, faulty)
    kind, params = command(h)
    before, count = state_to_dict(h.state), len(h.events)
    with pytest.raises(PluginFailure) as info:
        h.send(kind, **params)
    assert faulty.calls >= 1, f"the scenario never called {hook}"
    assert (info.value.plugin, info.value.hook) == ("faulty", hook)
    assert "faulty" in str(info.value) and hook in str(info.value)
    assert state_to_dict(h.state) == before
    assert len(h.events) == count
    faulty.armed = False
    h.rolls(*dice)
    h.send(kind, **params)  # the encounter keeps working
    h.assert_replay_matches()
    return info.value


# -- every hook has a documented policy and a test -------------------------------------------


def test_every_hook_has_a_policy_and_a_scenario() -> None:
    specs = hookspecs()
    assert set(SCENARIOS) <= specs
    assert specs - set(SCENARIOS) <= STARTUP_HOOKS, "add a scenario for the new hook"
    for hook, (kind, *_rest) in SCENARIOS.items():
        assert policy(hook) == kind, hook
    assert set(CONTRIBUTIONS) == {h for h, s in SCENARIOS.items() if s[0] == "skip"}
    assert set(WRONG) == set(CONTRIBUTIONS) | set(TRIGGER_ANSWERS)
    assert policy("zonekeep_commands") == "startup"
    assert policy("zonekeep_some_future_hook") == "refuse"


@pytest.mark.parametrize("hook", sorted(SCENARIOS))
def test_a_raising_hook(hook: str) -> None:
    if SCENARIOS[hook][0] == "skip":
        error = check_skipped(hook, RAISE)
        assert error.error == f"RuntimeError('kaboom in {hook}')"
    else:
        failure = check_refused(hook, RAISE)
        assert isinstance(failure.error, RuntimeError)
        assert str(failure.error) == f"kaboom in {hook}"


@pytest.mark.parametrize(
    ("hook", "answer"), [(h, a) for h, answers in sorted(WRONG.items()) for a in answers]
)
def test_a_wrong_answer(hook: str, answer: object) -> None:
    if SCENARIOS[hook][0] == "skip":
        error = check_skipped(hook, answer)
        assert error.error.startswith("returned ")
        assert "expected" in error.error
    else:
        failure = check_refused(hook, answer)
        assert isinstance(failure.error, TypeError)
        assert "expected" in str(failure.error)


# -- contributions: the others still count; refusals still refuse ------------------------------


class Advantage:
    @staticmethod
    @hookimpl
    def zonekeep_roll_modifiers(roll: RollRequest) -> Any:
        return [RollModifier("advantage", "blessing")] if roll.kind == "attack" else None


def test_a_skipped_contribution_leaves_the_others() -> None:
    faulty = Faulty("zonekeep_roll_modifiers")
    h = table(loaded(Advantage, "blessing"), loaded(faulty))
    faulty.armed = True
    h.rolls(3, 17, 4)
    events = h.send("attack", creature="aria", target="gob")
    attack = next(e for e in events if isinstance(e, AttackMade))
    assert "advantage:blessing" in attack.roll.sources
    assert attack.roll.natural == 17
    assert [e for e in events if isinstance(e, PluginErrorRecorded)] == [
        PluginErrorRecorded(
            "faulty", "zonekeep_roll_modifiers", "RuntimeError('kaboom in zonekeep_roll_modifiers')"
        )
    ]


class Checks:
    """A GM command that rolls three checks for Aria."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def checks(ctx: RuleContext, cmd: Any) -> None:
            for _ in range(3):
                ctx.roll("d20", RollRequest("check", "aria", ability="str"))

        return (CommandSpec("checks", checks, "GM: roll checks.", who="gm", phases=("turns",)),)


def test_one_plugin_error_per_plugin_and_hook_per_command() -> None:
    faulty = Faulty("zonekeep_roll_modifiers")
    h = table(loaded(Checks, "checks"), loaded(faulty))
    faulty.armed = True
    for _ in range(2):
        events = h.rolls(5, 6, 7).send("checks")
        assert faulty.calls % 3 == 0
        assert events == (
            PluginErrorRecorded(
                "faulty",
                "zonekeep_roll_modifiers",
                "RuntimeError('kaboom in zonekeep_roll_modifiers')",
            ),
        )
    assert faulty.calls == 6


def test_a_refusal_from_a_contribution_hook_refuses_the_command() -> None:
    class Strict:
        @staticmethod
        @hookimpl
        def zonekeep_movement_surcharges(ctx: RuleContext) -> Any:
            ctx.refuse("too_muddy", "Too muddy to move.")

    h = table(loaded(Strict, "strict"))
    refusal = h.refused("move", creature="aria", feet=5)
    assert (refusal.code, refusal.message) == ("too_muddy", "Too muddy to move.")


def test_available_actions_skip_a_failing_refusal() -> None:
    faulty = Faulty("zonekeep_action_refusal")
    h = table(loaded(faulty))
    expected = h.engine.available_actions(h.state, "aria", ALICE)
    faulty.armed = True
    assert h.engine.available_actions(h.state, "aria", ALICE) == expected
    assert faulty.calls >= 1


def test_a_nested_failure_names_the_plugin_that_failed() -> None:
    class Mover:
        """Its turn-end trigger moves the creature (running the zone triggers)."""

        @staticmethod
        @hookimpl
        def zonekeep_turn_end(ctx: RuleContext, creature: Any) -> None:
            from zonekeep.sdk import change_zone

            change_zone(ctx, creature, "yard")

    faulty = Faulty("zonekeep_zone_entered")
    h = table(loaded(Mover, "mover"), loaded(faulty))
    faulty.armed = True
    with pytest.raises(PluginFailure) as info:
        h.send("end_turn", creature="aria")
    assert (info.value.plugin, info.value.hook) == ("faulty", "zonekeep_zone_entered")


# -- pluggy's call order is kept ----------------------------------------------------------------


def test_calls_follow_pluggys_order_and_first_result() -> None:
    called: list[str] = []

    def plugin(
        name: str, answer: Any = None, *, tryfirst: bool = False, trylast: bool = False
    ) -> LoadedPlugin:
        class P:
            @staticmethod
            @hookimpl(tryfirst=tryfirst, trylast=trylast)
            def zonekeep_action_refusal() -> Any:
                called.append(name)
                return answer

            @staticmethod
            @hookimpl(tryfirst=tryfirst, trylast=trylast)
            def zonekeep_roll_modifiers() -> Any:
                called.append(name)
                return [RollModifier("expertise", name)]

        return loaded(P, name)

    engine = Engine(
        [
            plugin("last", trylast=True),
            plugin("a"),
            plugin("first", tryfirst=True),
            plugin("b", Refusal("no", "No.")),
            plugin("c"),
        ]
    )
    ctx = engine.context(table().state)
    request = RollRequest("check", "aria")
    raw = engine.pm.hook.zonekeep_roll_modifiers(ctx=ctx, roll=request)
    raw_order, called[:] = list(called), []
    safe = engine.hook.zonekeep_roll_modifiers(ctx=ctx, roll=request)
    assert called == raw_order == ["first", "c", "b", "a", "last"]
    assert [list(batch) for batch in safe] == [list(batch) for batch in raw]
    called.clear()
    kwargs: dict[str, Any] = {"ctx": ctx, "creature": None, "spec": None}
    raw_refusal = engine.pm.hook.zonekeep_action_refusal(**kwargs)
    raw_order, called[:] = list(called), []
    assert engine.hook.zonekeep_action_refusal(**kwargs) is raw_refusal
    assert called == raw_order == ["first", "c", "b"]


def test_hook_wrappers_are_refused_at_start() -> None:
    class Wrapper:
        @staticmethod
        @hookimpl(wrapper=True)
        def zonekeep_roll_modifiers() -> Any:
            return (yield)

    with pytest.raises(PluginLoadError, match="wrapper"):
        Engine([*load_default_plugins(), loaded(Wrapper, "wrapper")])


# -- command handlers and declarations ---------------------------------------------------------


class Tools:
    """A plugin with a command that raises and one whose ``requires`` raises."""

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Any:
        def explode(ctx: RuleContext, cmd: Any) -> None:
            ctx.emit(DecisionOpened(Decision("dx", "q", "gm", "?", ("a",), ("a",))))
            raise KeyError("gob9")

        def broken(state: Any, creature: Any) -> Any:
            raise ValueError("no idea")

        return (
            CommandSpec(
                "explode",
                explode,
                "GM: blow up.",
                {"size": Param("integer", False, "how big")},
                who="gm",
                phases=("turns",),
            ),
            CommandSpec(
                "fizzle",
                lambda ctx, cmd: None,
                "Action: fizzle.",
                {"creature": Param("creature", True, "who")},
                requires=broken,
            ),
        )


@pytest.mark.parametrize(
    ("kind", "params", "where", "error"),
    [
        ("explode", {}, "the handler of 'explode'", KeyError),
        ("fizzle", {"creature": "aria"}, "the 'requires' check of 'fizzle'", ValueError),
    ],
)
def test_a_raising_command_is_refused(
    kind: str, params: dict[str, Any], where: str, error: type[Exception]
) -> None:
    h = table(loaded(Tools, "tools"))
    before, count = state_to_dict(h.state), len(h.events)
    with pytest.raises(PluginFailure) as info:
        h.send(kind, **params)
    assert (info.value.plugin, info.value.hook, info.value.where) == (
        "tools",
        "zonekeep_commands",
        where,
    )
    assert isinstance(info.value.error, error)
    assert state_to_dict(h.state) == before and len(h.events) == count
    h.end_turn()  # still works
    assert "fizzle" not in h.engine.available_actions(h.state, "gob", h.gm)


@pytest.mark.parametrize("answer", [RAISE, ["not a spec"], [None]])
def test_a_failing_command_declaration_stops_the_start(answer: object) -> None:
    faulty = Faulty("zonekeep_commands", answer)
    faulty.armed = True
    with pytest.raises(PluginLoadError) as info:
        Engine([*load_default_plugins(), loaded(faulty)])
    assert "'faulty'" in str(info.value) and "zonekeep_commands" in str(info.value)


def test_a_failing_condition_declaration_stops_the_start() -> None:
    if "zonekeep_conditions" not in hookspecs():
        pytest.skip("no zonekeep_conditions hook")
    from zonekeep.sdk.host import declared_conditions

    faulty = Faulty("zonekeep_conditions")
    faulty.armed = True
    with pytest.raises(Exception, match="kaboom"):
        engine = Engine([*load_default_plugins(), loaded(faulty)])
        declared_conditions(engine.pm)


def test_a_plugin_error_event_is_plain_data() -> None:
    event: Event = PluginErrorRecorded("x", "zonekeep_turn_start", "boom")
    assert event.type == "plugin_error"


def test_a_hook_is_called_alike_with_and_without_a_time_budget() -> None:
    """With and without a time budget a hook answers, skips contributions, records plugin
    errors, leaves switched-off plugins out and refuses (a trigger hook's failure) alike:
    one call logic (``SafeHookCaller._run``) times a call or not, nothing else."""

    def modifier(source: str) -> Any:
        @hookimpl
        def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Any:
            if source == "raises":
                raise RuntimeError("boom")
            if source == "wrong":
                return ["advantage"]
            return [RollModifier("advantage", source)]

        return type(source, (), {"zonekeep_roll_modifiers": staticmethod(zonekeep_roll_modifiers)})

    @hookimpl
    def zonekeep_turn_start(ctx: RuleContext, creature: Any) -> None:
        raise RuntimeError("a trigger fails")

    def run(budget: float | None) -> tuple[Any, ...]:
        plugins: list[Any] = [
            *load_default_plugins(),
            *(LoadedPlugin(n, "1", IN_PROCESS, modifier(n)) for n in ("a", "raises", "wrong", "b")),
            LoadedPlugin("off", "1", IN_PROCESS, modifier("off")),
            LoadedPlugin(
                "t",
                "1",
                IN_PROCESS,
                type("T", (), {"zonekeep_turn_start": staticmethod(zonekeep_turn_start)}),
            ),
        ]
        engine = Engine(plugins)
        engine.set_hook_budget(budget, 0)
        state = engine.create("e", [make("aria", "party"), make("orc", "foes")]).state
        state.disabled_plugins.append("off")
        ctx = RuleContext(state, None, engine.hook)  # type: ignore[arg-type]
        found = engine.hook.zonekeep_roll_modifiers(ctx=ctx, roll=RollRequest("attack", "aria"))
        with pytest.raises(PluginFailure) as failure:
            engine.hook.zonekeep_turn_start(ctx=ctx, creature=state.creatures["aria"])
        return (
            found,
            [(type(e).__name__, getattr(e, "plugin", None)) for e in ctx.events],
            (failure.value.plugin, failure.value.hook),
        )

    untimed = run(None)
    assert untimed == run(3600.0)
    sources = [m.source for batch in untimed[0] for m in batch]
    assert sources == ["b", "a"]  # the last registered first; "off" is switched off
    assert [e for e in untimed[1] if e[0] == "PluginErrorRecorded"] == [
        ("PluginErrorRecorded", "wrong"),
        ("PluginErrorRecorded", "raises"),
    ]
    assert untimed[2] == ("t", "zonekeep_turn_start")


def test_registering_and_unregistering_a_plugin_is_seen_by_the_next_call() -> None:
    """The hooks keep what to call between calls; the plugin manager drops it whenever a
    plugin comes or goes, so the next call runs exactly pluggy's implementations."""

    def modifier(source: str) -> Any:
        class M:
            @staticmethod
            @hookimpl
            def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Any:
                return [RollModifier("advantage", source)]

        return M

    engine = Engine([*load_default_plugins(), LoadedPlugin("a", "1", IN_PROCESS, modifier("a"))])
    ctx = engine.context(table().state)
    roll = RollRequest("check", "aria")

    def sources() -> list[str]:
        return [
            m.source
            for batch in engine.hook.zonekeep_roll_modifiers(ctx=ctx, roll=roll)
            for m in batch
        ]

    assert sources() == ["a"]
    late = modifier("late")
    engine.pm.register(late, name="late")
    assert sources() == ["late", "a"]
    engine.pm.unregister(name="a")
    assert sources() == ["late"]
    engine.pm.set_blocked("late")
    assert sources() == []
