"""SDK 3 (issue 30, part 1): the world changes at runtime, tested in-process on
``zonekeep.sdk.testing`` with the third-party web plugin (tests/web_plugin.py).

Assets placed, changed, hidden, revealed and removed (arena assets too); movement
surcharges asked for ``enter``; effects aimed at a zone, occupied or empty; the
after-damage hook and the order of its events; one roll for several targets recorded
once, and the harness's dice check that catches a roll recorded twice; hook order.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import web_plugin
from helpers import make

import zonekeep.sdk as sdk
from zonekeep.sdk import (
    Arena,
    Asset,
    AssetChanged,
    AssetPlaced,
    AssetRemoved,
    Creature,
    Damaged,
    Link,
    PositionLeft,
    Refusal,
    RuleContext,
    SaveMade,
    Zone,
    ZoneAffected,
    apply_damage,
    change_asset,
    hookimpl,
    place_asset,
)
from zonekeep.sdk.testing import EncounterHarness


def arena() -> Arena:
    """A gate, a 15 ft passage and a hall in a line; a barrel in the passage."""
    return Arena(
        "line",
        "Line",
        (Zone("gate", "Gate", 30), Zone("passage", "Passage", 15), Zone("hall", "Hall", 30)),
        (Link("gate", "passage", "beside"), Link("passage", "hall", "beside")),
        assets=(Asset("barrel", "Barrel", "prop", "passage", data={"full": True}),),
    )


def cast() -> list[Creature]:
    return [
        make("aria", controller="alice", zone="gate", hp=20),
        make("gob", "foes", zone="passage", hp=12),
        make("orc", "foes", zone="passage", hp=30, damage_resistances=["fire"]),
    ]


def harness(*extra: object) -> EncounterHarness:
    h = EncounterHarness(cast(), arena=arena(), extra_plugins=[web_plugin, OneOff, *extra])
    h.start(initiative=[20, 5, 4])  # Aria acts first
    return h


# -- the plugin is a third party's -------------------------------------------------------------


def test_the_web_plugin_imports_only_public_sdk_names() -> None:
    import ast

    tree = ast.parse(Path(web_plugin.__file__).read_text(encoding="utf-8"))
    imported = [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("zonekeep")
        for alias in node.names
    ]
    assert imported and {m for m, _ in imported} == {"zonekeep.sdk"}
    assert [n for _, n in imported if n not in sdk.__all__] == []


# -- assets at runtime -------------------------------------------------------------------------


def test_a_web_placed_at_runtime_is_an_asset_of_the_arena_and_survives_replay() -> None:
    h = harness()
    events = h.send("web.spin_web", h.player("alice"), creature="aria", zone="passage")
    placed = [e for e in events if isinstance(e, AssetPlaced)]
    assert len(placed) == 1 and placed[0].hidden is False and placed[0].by == "alice"
    web = h.state.asset("web-passage")
    assert web is not None and web.zone == "passage" and web.tags == ("web",)
    assert web.data == {"dc": 12, "spun_by": "aria"}
    assert [a.id for a in h.state.assets_in("passage")] == ["barrel", "web-passage"]
    assert h.state.hidden_assets == []
    h.assert_replay_matches()


def test_placing_an_asset_whose_id_is_taken_picks_the_next_free_id() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage", hidden=True)
    h.end_turn()
    h.send("web.spin_web", creature="gob", zone="passage")
    assert [a.id for a in h.state.assets_in("passage")] == [
        "barrel",
        "web-passage",
        "web-passage-2",
    ]
    assert h.state.hidden_assets == ["web-passage"]


def test_a_hidden_web_is_listed_hidden_and_revealed_by_the_gm_only() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage", hidden=True)
    assert h.state.hidden_assets == ["web-passage"]
    refusal = h.refused("web.reveal_web", h.player("alice"), asset="web-passage")
    assert refusal.code == "gm_only"
    events = h.send("web.reveal_web", asset="web-passage")
    assert events == (AssetChanged("web-passage", None, False),)
    assert h.state.hidden_assets == []
    h.assert_replay_matches()


def test_an_arena_asset_changes_data_and_is_removed_with_the_positions_held_at_it() -> None:
    h = harness()
    h.end_turn()
    h.send("take_position", creature="gob", asset="barrel")
    assert h.creature("gob").position == "barrel"

    def tip(ctx: RuleContext) -> None:
        change_asset(ctx, "barrel", data={"full": False})
        change_asset(ctx, "barrel", hidden=True)
        change_asset(ctx, "barrel", remove=True, reason="smashed")

    events = run(h, tip)
    assert [type(e) for e in events] == [AssetChanged, AssetChanged, PositionLeft, AssetRemoved]
    assert events[0] == AssetChanged("barrel", {"full": False}, None)
    assert events[2] == PositionLeft("gob", "barrel", "smashed")
    assert events[3] == AssetRemoved("barrel", "smashed", hidden=True)
    assert h.state.asset("barrel") is None and h.creature("gob").position is None
    assert h.state.hidden_assets == [] and [a.id for a in h.state.arena.assets] == []
    h.assert_replay_matches()


def test_changing_an_unknown_asset_or_placing_one_in_an_unknown_zone_is_refused() -> None:
    h = harness()
    with pytest.raises(Refusal) as unknown:
        run(h, lambda ctx: change_asset(ctx, "nothing", hidden=True))
    assert (unknown.value.code, unknown.value.message) == (
        "unknown_asset",
        "There is no asset 'nothing'.",
    )
    with pytest.raises(Refusal) as nowhere:
        run(h, lambda ctx: place_asset(ctx, Asset("rock", "Rock", "prop", "moon")))
    assert nowhere.value.code == "unknown_zone"
    assert h.state.asset("rock") is None


def test_a_player_cannot_change_a_hidden_asset_and_learns_nothing_from_the_refusal() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage", hidden=True)
    ran: list[Refusal] = []
    for name in ("web-passage", "no-such-web"):
        with pytest.raises(Refusal) as refused:
            run(h, lambda ctx, n=name: change_asset(ctx, n, hidden=False), h.player("alice"))
        ran.append(refused.value)
    assert [r.code for r in ran] == ["unknown_asset", "unknown_asset"]
    assert ran[0].message.replace("web-passage", "X") == ran[1].message.replace("no-such-web", "X")
    assert h.state.hidden_assets == ["web-passage"]


def test_a_rule_changes_a_hidden_asset_whoever_sent_the_command() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage", hidden=True)
    # A rule of its own (by_rule): the player's command goes on, and the web goes.
    run(
        h,
        lambda ctx: change_asset(ctx, "web-passage", remove=True, reason="ended", by_rule=True),
        h.player("alice"),
    )
    assert h.state.asset("web-passage") is None and h.state.hidden_assets == []
    # An unknown id is still refused.
    with pytest.raises(Refusal) as unknown:
        run(h, lambda ctx: change_asset(ctx, "web-passage", by_rule=True), h.player("alice"))
    assert unknown.value.code == "unknown_asset"


# -- movement surcharges for enter -------------------------------------------------------------


def test_the_web_surcharges_going_on_past_its_zone_and_entering_it_restrains() -> None:
    # Without the web Aria (30 ft) goes on past the 15 ft passage: 30 > 15.
    free = harness()
    free.send("enter", creature="aria", zones=["passage", "hall"])
    assert free.creature("aria").zone == "hall"

    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage", hidden=True)
    h.end_turn()
    h.end_turn()
    h.end_turn()  # round 2, Aria again with her 30 ft
    refusal = h.refused("enter", h.player("alice"), creature="aria", zones=["passage", "hall"])
    assert refusal.code == "not_enough_movement"
    assert refusal.message == (
        "Aria has 15 ft of movement available (divided by 2: difficult); going on past "
        "Passage needs more than its 15 ft."
    )
    # Entering the passage only: a DC 12 Dexterity save, failed on a 5, restrains her.
    h.rolls(5).send("enter", h.player("alice"), creature="aria", zones=["passage"])
    saves = h.of_type(SaveMade)
    assert [(s.creature, s.ability, s.dc, s.success) for s in saves] == [("aria", "dex", 12, False)]
    assert h.creature("aria").zone == "passage" and "restrained" in h.creature("aria").conditions
    # Per-creature data: the webs caught Aria once.
    assert h.plugin_state("web")["caught"] == {"aria": 1}
    assert [e.data for e in h.plugin_events("caught")] == [
        {"creature": "aria", "web": "Sticky webs"}
    ]


def test_the_surcharge_hook_receives_an_enter_request_naming_the_zone_passed_through() -> None:
    seen: list[sdk.MoveRequest] = []

    class Spy:
        @staticmethod
        @hookimpl
        def zonekeep_movement_surcharges(
            ctx: RuleContext, creature: Creature, move: sdk.MoveRequest
        ) -> Iterable[str] | None:
            seen.append(move)
            return None

    h = harness(Spy)
    h.send("enter", creature="aria", zones=["passage", "hall"])
    assert seen == [sdk.MoveRequest(30, "walk", False, False, (), kind="enter", zone="passage")]


# -- effects aimed at a zone, and the after-damage hook ----------------------------------------


def test_fire_aimed_at_the_webbed_zone_burns_the_web_and_everyone_in_it() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage")
    # The GM's fire: 2d6 showing 3 and 4 (7); then the web burns: 2d4 showing 2 and 1 (3).
    events = h.rolls(3, 4, 2, 1).send(
        "damage_zone", zone="passage", damage="2d6", damage_type="fire"
    )
    kinds = [e.type for e in events]
    assert kinds == [
        "zone_affected",
        "damaged",
        "damaged",
        "web.web_burned",
        "asset_removed",
        "zone_affected",
        "damaged",
        "damaged",
    ]
    fire, burn = h.of_type(ZoneAffected)
    assert (fire.zone, fire.damage_type, fire.damage, fire.roll and fire.roll.dice) == (
        "passage",
        "fire",
        7,
        (3, 4),
    )
    assert (burn.damage, burn.source, burn.roll and burn.roll.dice) == (3, "burning webs", (2, 1))
    hurt = [(d.creature, d.amount, d.hp) for d in h.of_type(Damaged)]
    # The orc resists fire: 7 -> 3, then 3 -> 1.
    assert hurt == [("gob", 7, 5), ("orc", 3, 27), ("gob", 3, 2), ("orc", 1, 26)]
    assert h.state.asset("web-passage") is None
    h.assert_replay_matches()


def test_fire_aimed_at_an_empty_zone_still_reaches_what_is_in_it() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="hall")
    events = h.rolls(6, 2, 4, 1).send("damage_zone", zone="hall", damage="2d6", damage_type="fire")
    assert [e.type for e in events] == [
        "zone_affected",
        "web.web_burned",
        "asset_removed",
        "zone_affected",
    ]
    assert h.state.asset("web-hall") is None and h.of_type(Damaged) == []


def test_a_zone_aimed_save_halves_the_one_roll_for_those_who_make_it() -> None:
    h = harness()
    # The damage, 4 and 6 (10), then the saves in roster order: the goblin 20 (made: 5),
    # the orc 1 (failed: 10, no fire to resist).
    h.rolls(4, 6, 20, 1).send(
        "damage_zone", zone="passage", damage="2d6", damage_type="cold", save="dex", dc=13
    )
    assert [(d.creature, d.amount) for d in h.of_type(Damaged)] == [("gob", 5), ("orc", 10)]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"zone": "moon", "damage": "1d6"}, "unknown_zone"),
        ({"zone": "hall", "damage": "lots"}, "invalid_params"),
        ({"zone": "hall", "damage": "1d6", "damage_type": "cheese"}, "invalid_params"),
        ({"zone": "hall", "damage": "1d6", "save": "luck", "dc": 10}, "invalid_params"),
        ({"zone": "hall", "damage": "1d6", "save": "dex"}, "invalid_params"),
    ],
)
def test_damage_zone_refuses_bad_input(params: dict[str, Any], code: str) -> None:
    h = harness()
    assert h.refused("damage_zone", **params).code == code


def test_damage_zone_is_the_gms() -> None:
    h = harness()
    assert h.refused("damage_zone", h.player("alice"), zone="hall", damage="1d6").code == "gm_only"


def test_the_after_damage_hook_sees_the_final_amount_and_its_events_follow_damaged() -> None:
    seen: list[tuple[str, int, int | None]] = []

    class Thorns:
        @staticmethod
        @hookimpl
        def zonekeep_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
            seen.append((creature.id, damage.amount, damage.raw))
            if damage.amount and creature.id == "orc":
                apply_damage(ctx, ctx.state.creatures["aria"], 1, source="thorns")

    h = harness(Thorns)
    events = h.send("damage", creature="orc", amount=9, damage_type="fire")
    assert seen == [("orc", 4, 9), ("aria", 1, 1)]
    assert [(e.type, getattr(e, "creature", None)) for e in events] == [
        ("damaged", "orc"),
        ("damaged", "aria"),
    ]


# -- ends of things ------------------------------------------------------------------------------


def test_a_condition_tied_to_the_web_ends_when_the_web_burns() -> None:
    h = harness()
    h.send("web.spin_web", creature="aria", zone="passage")
    # The GM moves Aria into the webs: her DC 12 Dexterity save fails (3).
    h.rolls(3).send("move_to_zone", creature="aria", zone="passage")
    (effect,) = h.state.condition_effects.values()
    assert (effect.creature, effect.condition, effect.parent) == (
        "aria",
        "restrained",
        "web-passage",
    )
    # Fire at the passage (2d6: 1, 1; the burn 2d4: 1, 1): the web goes, and her bonds.
    events = h.rolls(1, 1, 1, 1).send(
        "damage_zone", zone="passage", damage="2d6", damage_type="fire"
    )
    kinds = [e.type for e in events]
    removed = kinds.index("asset_removed")
    assert kinds[removed + 1] == "condition_effect_ended"
    ended = events[removed + 1]
    assert isinstance(ended, sdk.ConditionEffectEnded)
    assert (ended.creature, ended.condition, ended.reason, ended.expired) == (
        "aria",
        "restrained",
        "web-passage ended",
        True,
    )
    assert [e.data for e in h.plugin_events("caught")] == [
        {"creature": "aria", "web": "Sticky webs"}
    ]
    assert "restrained" not in h.creature("aria").conditions
    h.assert_replay_matches()


def test_a_condition_tied_to_a_missing_parent_is_refused() -> None:
    h = harness()
    refusal = h.refused("apply_effect", creature="gob", condition="poisoned", parent="nothing")
    assert refusal.code == "unknown_effect"
    # An arena asset is a parent: the barrel's poison lasts while the barrel stands.
    h.send("apply_effect", creature="gob", condition="poisoned", parent="barrel")
    h.end_turn()
    h.end_turn()
    h.end_turn()  # a whole round: its parent is there, so it goes on
    assert "poisoned" in h.creature("gob").conditions
    run(h, lambda ctx: change_asset(ctx, "barrel", remove=True, reason="smashed"))
    assert "poisoned" not in h.creature("gob").conditions


def test_the_effect_ended_hook_sees_the_gm_the_duration_a_save_and_an_asset_end() -> None:
    ended: list[tuple[str, str, bool | None]] = []

    class Watch:
        @staticmethod
        @hookimpl
        def zonekeep_effect_ended(
            ctx: RuleContext,
            ended: sdk.ConditionEffectEnded | sdk.EffectEnded | sdk.AssetRemoved,
        ) -> None:
            if isinstance(ended, sdk.ConditionEffectEnded):
                seen.append((ended.type, ended.effect, ended.expired))
            else:
                seen.append((ended.type, ended.asset, None))

    seen = ended
    h = harness(Watch)
    h.send("apply_effect", creature="aria", condition="poisoned", rounds=1)
    h.send("apply_effect", creature="gob", condition="frightened", save="wis", dc=10)
    h.send("apply_effect", creature="orc", condition="poisoned")
    poison, fright, orc = list(h.state.condition_effects)
    h.send("end_effect_of", effect=orc)  # the GM
    h.end_turn()  # Aria's
    h.rolls(15).end_turn()  # the goblin saves at its turn's end (15 against 10)
    h.end_turn()  # the orc's: the round ends, and Aria's 1 round with it
    run(h, lambda ctx: change_asset(ctx, "barrel", remove=True))
    assert ended == [
        ("condition_effect_ended", orc, False),
        ("condition_effect_ended", fright, True),
        ("condition_effect_ended", poison, True),
        ("asset_removed", "barrel", None),
    ]


# -- per-creature plugin data -------------------------------------------------------------------


def test_owner_visibility_needs_a_creature_field_and_a_per_creature_default() -> None:
    from types import SimpleNamespace

    from zonekeep.sdk.engine import Engine, PluginLoadError, load_default_plugins

    bad = SimpleNamespace(ZONEKEEP_PLUGIN=sdk.PluginInfo("marks", "1.0", ">=0.1"))

    @hookimpl
    def zonekeep_event_types() -> Iterable[sdk.EventTypeSpec]:
        return (sdk.EventTypeSpec("marked", {"type": "object"}, None, visibility="owner"),)

    @hookimpl
    def zonekeep_plugin_state() -> Iterable[sdk.StateSpec]:
        return (sdk.StateSpec("marks", default=[], visibility="owner"),)

    bad.zonekeep_event_types = zonekeep_event_types
    bad.zonekeep_plugin_state = zonekeep_plugin_state
    with pytest.raises(PluginLoadError) as exc:
        Engine([*load_default_plugins(), bad])
    assert sorted(exc.value.problems) == [
        "plugin 'marks': event type 'marked' is for its owner: its schema must require a "
        "string 'creature' (the creature whose controller sees it)",
        "plugin 'marks': state 'marks' is per creature ('owner'): its default must be an "
        "object keyed by creature id, such as {}",
    ]


# -- hook order ---------------------------------------------------------------------------------


def test_trylast_sees_the_damage_after_every_other_plugin() -> None:
    """A plugin runs after another with ``trylast`` (docs/plugins.md, "Hook order"),
    whatever the registration order; wrappers are refused (test_plugin_isolation)."""
    order: list[tuple[str, int]] = []

    class Last:
        @staticmethod
        @hookimpl(trylast=True)
        def zonekeep_modify_damage(ctx: RuleContext, damage: sdk.Damage) -> sdk.Damage:
            order.append(("last", damage.amount))
            return damage.reduce(1, "last")

    class Plus:
        @staticmethod
        @hookimpl
        def zonekeep_modify_damage(ctx: RuleContext, damage: sdk.Damage) -> sdk.Damage:
            order.append(("plus", damage.amount))
            return damage.add(2, "plus")

    class First:
        @staticmethod
        @hookimpl(tryfirst=True)
        def zonekeep_modify_damage(ctx: RuleContext, damage: sdk.Damage) -> sdk.Damage:
            order.append(("first", damage.amount))
            return damage.add(10, "first")

    # Registered Last, then Plus, then First: the marks, not the registration, decide.
    h = harness(Last, Plus, First)
    h.send("damage", creature="gob", amount=3)
    assert order == [("first", 3), ("plus", 13), ("last", 15)]
    hit = h.of_type(Damaged)[0]
    assert (hit.raw, hit.amount, [step.source for step in hit.steps]) == (
        3,
        14,
        ["first", "plus", "last"],
    )


# -- one roll, several targets: recorded once --------------------------------------------------


def test_one_roll_for_several_targets_records_its_dice_once() -> None:
    h = harness()
    h.rolls(3, 4).send("damage_zone", zone="passage", damage="2d6", damage_type="fire")
    zone, gob, orc = h.events[-3:]
    assert isinstance(zone, ZoneAffected) and zone.roll is not None
    assert zone.roll.draws == ((0 + zone.roll.draws[0][0], 6), (zone.roll.draws[0][0] + 1, 6))
    assert isinstance(gob, Damaged) and isinstance(orc, Damaged)
    assert gob.roll is not None and orc.roll is not None
    assert (gob.roll.dice, gob.roll.draws, orc.roll.dice, orc.roll.draws) == (
        (3, 4),
        (),
        (3, 4),
        (),
    )


def test_the_harness_counts_dice_as_the_server_does_and_gives_back_a_refused_commands() -> None:
    h = harness()  # the initiative rolled counters 0, 1 and 2
    assert h.recorded == {0, 1, 2}
    h.rolls(1).refused("attack", creature="aria", target="gob")  # not in reach: no die kept
    h.rolls(3, 4).send("damage_zone", zone="passage", damage="2d6")
    assert h.recorded == {0, 1, 2, 3, 4}


def test_the_harness_fails_a_roll_recorded_twice_as_verify_would() -> None:
    """A roll handed to two events goes through ``ctx.emit``, which records it once (the
    oil slick of docs/writing-plugins.md, step 8, failed verify before); one put twice
    into the same event is still a die drawn twice, and the harness says so."""
    h = harness()

    def twice(ctx: RuleContext) -> None:
        roll = ctx.roll("1d20")
        ctx.emit(sdk.ContestRolled("aria", "gob", "athletics", roll, "athletics", roll, False))

    with pytest.raises(
        AssertionError,
        match=r"die #3 \(a d20 showing 5\) a second time.*"
        r"a die drawn twice",
    ):
        run(h.rolls(5), twice)


# -- helpers -----------------------------------------------------------------------------------


class OneOff:
    """A test plugin whose command ``one_off`` runs :attr:`action` as its handler."""

    action: Any = None

    @staticmethod
    @hookimpl
    def zonekeep_commands() -> Iterable[sdk.CommandSpec]:
        return (
            sdk.CommandSpec(
                "one_off",
                lambda ctx, cmd: OneOff.action(ctx),
                "a test's action",
                {},
                who="any",
                on_turn=None,
                phases=sdk.PHASES,
            ),
        )


def run(h: EncounterHarness, action: Any, actor: sdk.Actor = sdk.GM_ACTOR) -> tuple[Any, ...]:
    """Run ``action(ctx)`` as the handler of a one-off command."""
    OneOff.action = action
    return h.send("one_off", actor)
