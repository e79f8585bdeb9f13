"""Dice: expressions, rolls, advantage, the expertise die, scripted entropy, RuleContext.roll."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

from zonekeep.sdk import (
    Attack,
    Command,
    Creature,
    DiceError,
    RandomEntropy,
    RollModifier,
    RollRecord,
    RollRequest,
    RuleContext,
    ScriptedEntropy,
    ScriptExhausted,
    combine_advantage,
    expertise_die,
    hookimpl,
    parse_dice,
    roll,
)
from zonekeep.sdk._dice import DiceExpr
from zonekeep.sdk._engine import make_plugin_manager
from zonekeep.sdk._state import EncounterState
from zonekeep.sdk.engine import PluginFailure
from zonekeep.sdk.testing import EncounterHarness

# -- parse_dice ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count", "sides", "modifier", "canonical"),
    [
        ("2d6+3", 2, 6, 3, "2d6+3"),
        ("d20", 1, 20, 0, "1d20"),
        ("1d8-1", 1, 8, -1, "1d8-1"),
        ("  3d4 + 2 ", 3, 4, 2, "3d4+2"),
        ("100d1000", 100, 1000, 0, "100d1000"),
        ("1d2", 1, 2, 0, "1d2"),
        ("4", 0, 0, 4, "4"),
        ("-2", 0, 0, -2, "-2"),
        ("+5", 0, 0, 5, "5"),
        (" 0 ", 0, 0, 0, "0"),
    ],
)
def test_parse_dice_valid(text: str, count: int, sides: int, modifier: int, canonical: str) -> None:
    parsed = parse_dice(text)
    assert parsed == DiceExpr(count, sides, modifier)
    assert str(parsed) == canonical


@pytest.mark.parametrize(
    "text", ["", "   ", "abc", "d", "2d", "d20+", "2d6+3+1", "2x6", "d-6", "1.5d6"]
)
def test_parse_dice_not_dice(text: str) -> None:
    with pytest.raises(DiceError) as info:
        parse_dice(text)
    assert str(info.value) == f"{text!r} is not a dice expression like '2d6+3'"


@pytest.mark.parametrize("text", ["0d6", "101d6", "1d1", "d0", "1d1001", "2d0+1"])
def test_parse_dice_unreasonable(text: str) -> None:
    with pytest.raises(DiceError) as info:
        parse_dice(text)
    assert str(info.value) == f"{text!r} asks for an unreasonable number or size of dice"


@pytest.mark.parametrize(
    "text", ["1d4+99999999999999999999", "1d6+1001", "d8-1001", "1001", "-1001"]
)
def test_parse_dice_refuses_a_modifier_past_its_bound(text: str) -> None:
    with pytest.raises(DiceError) as info:
        parse_dice(text)
    assert str(info.value) == (
        f"{text!r} adds too much: a modifier or a flat number is from -1000 to 1000"
    )


@pytest.mark.parametrize("text", ["1d6+1000", "100d1000-1000", "1000", "-1000"])
def test_parse_dice_takes_a_modifier_at_its_bound(text: str) -> None:
    assert abs(parse_dice(text).modifier) == 1000


def test_parse_dice_refuses_huge_dice_counts_without_converting_thousands_of_digits() -> None:
    with pytest.raises(DiceError, match="unreasonable number or size of dice"):
        parse_dice("99999999999d6")
    # Past 4,300 digits int() itself raises a ValueError that is not a DiceError: the
    # length is refused before any conversion, and the text is not quoted back.
    for text in ("1d4+" + "9" * 5000, "9" * 5000 + "d6", "9" * 5000, " " * 41 + "d6"):
        with pytest.raises(DiceError) as info:
            parse_dice(text)
        assert str(info.value) == (f"a dice expression is at most 40 characters, not {len(text)}")


@pytest.mark.parametrize("text", ["\u0661d6", "1d\u0666", "1d6+\uff13", "\u0663"])
def test_parse_dice_takes_ascii_digits_only(text: str) -> None:
    with pytest.raises(DiceError, match="is not a dice expression"):
        parse_dice(text)


def test_parse_dice_refuses_what_is_not_text() -> None:
    with pytest.raises(DiceError, match="is text like '2d6\\+3', not int"):
        parse_dice(7)  # type: ignore[arg-type]


def test_dice_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=re.escape("'nope' is not a dice expression")):
        parse_dice("nope")


# -- plain rolls ----------------------------------------------------------------


def test_roll_sums_dice_and_modifier() -> None:
    dice = ScriptedEntropy([3, 5])
    result = roll(dice, "2d6+3")
    assert result.dice == (3, 5)
    assert result.kept == (3, 5)
    assert result.modifier == 3
    assert result.total == 11
    assert result.expr == "2d6+3"
    assert dice.asked == [6, 6]
    assert dice.remaining == ()


def test_roll_bonus_adds_to_modifier() -> None:
    result = roll(ScriptedEntropy([4]), "1d8-1", bonus=5)
    assert result.modifier == 4
    assert result.total == 8


def test_flat_expression_rolls_no_dice() -> None:
    dice = ScriptedEntropy()
    result = roll(dice, "7", bonus=1)
    assert result.dice == ()
    assert result.total == 8
    assert dice.asked == []


def test_roll_rejects_bad_expression() -> None:
    with pytest.raises(DiceError):
        roll(ScriptedEntropy([1]), "2d")


def test_random_entropy_stays_on_the_die_and_is_seedable() -> None:
    a = RandomEntropy(7)
    b = RandomEntropy(7)
    seq_a = [a.randint(6) for _ in range(200)]
    assert seq_a == [b.randint(6) for _ in range(200)]
    assert set(seq_a) == {1, 2, 3, 4, 5, 6}


# -- advantage and disadvantage --------------------------------------------------


@pytest.mark.parametrize("values", [(7, 15), (15, 7)])
def test_advantage_keeps_the_higher(values: tuple[int, int]) -> None:
    dice = ScriptedEntropy(values)
    result = roll(dice, "d20", advantage="advantage", bonus=2)
    assert result.dice == values
    assert result.kept == (15,)
    assert result.natural == 15
    assert result.total == 17
    assert result.advantage == "advantage"
    assert dice.asked == [20, 20]


@pytest.mark.parametrize("values", [(7, 15), (15, 7)])
def test_disadvantage_keeps_the_lower(values: tuple[int, int]) -> None:
    result = roll(ScriptedEntropy(values), "d20", advantage="disadvantage")
    assert result.kept == (7,)
    assert result.total == 7
    assert result.advantage == "disadvantage"


def test_advantage_ignored_for_multi_die_expressions() -> None:
    dice = ScriptedEntropy([2, 6])
    result = roll(dice, "2d6", advantage="advantage")
    assert result.advantage == "none"
    assert result.kept == (2, 6)
    assert result.total == 8
    assert dice.asked == [6, 6]


@pytest.mark.parametrize(
    ("adv", "dis", "expected"),
    [
        (0, 0, "none"),
        (1, 0, "advantage"),
        (3, 0, "advantage"),
        (0, 1, "disadvantage"),
        (0, 2, "disadvantage"),
        (1, 1, "none"),
        (2, 1, "none"),
        (1, 3, "none"),
    ],
)
def test_combine_advantage_cancels(adv: int, dis: int, expected: str) -> None:
    assert combine_advantage(adv, dis) == expected


# -- expertise ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sources", "die"), [(-1, 0), (0, 0), (1, 4), (2, 6), (3, 8), (4, 8), (9, 8)]
)
def test_expertise_die_sizes(sources: int, die: int) -> None:
    assert expertise_die(sources) == die


def test_expertise_roll_is_added_to_total() -> None:
    dice = ScriptedEntropy([10, 3])
    result = roll(dice, "d20", expertise=4, bonus=2)
    assert dice.asked == [20, 4]
    assert result.expertise == 4
    assert result.expertise_roll == 3
    assert result.kept == (10,)
    assert result.total == 15


def test_expertise_with_advantage_rolls_the_extra_die_last() -> None:
    dice = ScriptedEntropy([4, 12, 6])
    result = roll(dice, "d20", advantage="advantage", expertise=6)
    assert dice.asked == [20, 20, 6]
    assert result.kept == (12,)
    assert result.expertise_roll == 6
    assert result.total == 18


# -- critical hits -----------------------------------------------------------------


def test_double_dice_doubles_dice_not_modifier() -> None:
    dice = ScriptedEntropy([5, 7])
    result = roll(dice, "1d8+2", double_dice=True)
    assert dice.asked == [8, 8]
    assert result.dice == (5, 7)
    assert result.total == 14


def test_double_dice_on_several_dice() -> None:
    dice = ScriptedEntropy([1, 2, 3, 4])
    result = roll(dice, "2d6", double_dice=True)
    assert len(result.dice) == 4
    assert result.total == 10


def test_double_dice_cancels_advantage() -> None:
    dice = ScriptedEntropy([5, 7])
    result = roll(dice, "d8", advantage="advantage", double_dice=True)
    assert result.advantage == "none"
    assert result.kept == (5, 7)
    assert result.total == 12


# -- scripted entropy ----------------------------------------------------------------


def test_scripted_entropy_in_order_and_push() -> None:
    dice = ScriptedEntropy([2])
    dice.push(5, 1)
    assert dice.remaining == (2, 5, 1)
    assert [dice.randint(6), dice.randint(20), dice.randint(4)] == [2, 5, 1]
    assert dice.asked == [6, 20, 4]
    assert len(dice.remaining) == 0


def test_scripted_entropy_exhausted() -> None:
    dice = ScriptedEntropy([3])
    dice.randint(20)
    with pytest.raises(ScriptExhausted, match=r"^no scripted roll left for a d20$"):
        dice.randint(20)


def test_scripted_exhausted_is_not_a_value_error() -> None:
    assert not issubclass(ScriptExhausted, ValueError)
    with pytest.raises(ScriptExhausted):
        roll(ScriptedEntropy([6]), "2d6")


@pytest.mark.parametrize(("value", "sides"), [(7, 6), (21, 20), (0, 20), (-1, 4)])
def test_scripted_value_must_fit_the_die(value: int, sides: int) -> None:
    dice = ScriptedEntropy([value])
    with pytest.raises(ValueError, match=rf"^scripted roll {value} cannot come up on a d{sides}$"):
        dice.randint(sides)
    assert dice.asked == []


# -- RollRecord.natural -----------------------------------------------------------------


def test_natural_is_the_single_kept_die() -> None:
    assert roll(ScriptedEntropy([20]), "d20+5").natural == 20
    assert roll(ScriptedEntropy([3, 18]), "d20", advantage="disadvantage").natural == 3


def test_natural_is_zero_without_a_single_die() -> None:
    assert roll(ScriptedEntropy([1, 2]), "2d6").natural == 0
    assert roll(ScriptedEntropy(), "5").natural == 0
    assert RollRecord("2d20", (20, 20), (20, 20), 0, 40).natural == 0


# -- RuleContext.roll with a plugin ---------------------------------------------------------


class ModPlugin:
    """A test plugin contributing fixed modifiers to rolls of one kind."""

    def __init__(self, kind: str, *mods: tuple[str, str]) -> None:
        self.kind = kind
        self.mods = [RollModifier(effect, source) for effect, source in mods]  # type: ignore[arg-type]
        self.seen: list[RollRequest] = []

    @hookimpl
    def zonekeep_roll_modifiers(
        self, ctx: RuleContext, roll: RollRequest
    ) -> Iterable[RollModifier] | None:
        self.seen.append(roll)
        return list(self.mods) if roll.kind == self.kind else None


def context(values: Iterable[int], *plugins: object) -> tuple[RuleContext, ScriptedEntropy]:
    pm = make_plugin_manager(list(plugins))
    dice = ScriptedEntropy(values)
    return RuleContext(EncounterState(), dice, pm.hook), dice


ATTACK = RollRequest("attack", "a", "b", attack_kind="melee")


def test_context_roll_passes_request_to_plugins() -> None:
    plugin = ModPlugin("attack")
    ctx, dice = context([12], plugin)
    result = ctx.roll("d20", ATTACK, bonus=3)
    assert plugin.seen == [ATTACK]
    assert result.total == 15
    assert result.sources == ()
    assert dice.asked == [20]


def test_context_roll_without_request_asks_no_plugin() -> None:
    plugin = ModPlugin("attack", ("advantage", "x"))
    ctx, dice = context([4], plugin)
    result = ctx.roll("d20")
    assert plugin.seen == []
    assert result.advantage == "none"
    assert dice.asked == [20]


def test_context_roll_plugin_advantage() -> None:
    ctx, dice = context([5, 16], ModPlugin("attack", ("advantage", "flanking")))
    result = ctx.roll("d20", ATTACK)
    assert result.advantage == "advantage"
    assert result.kept == (16,)
    assert result.sources == ("advantage:flanking",)
    assert dice.asked == [20, 20]


def test_context_roll_other_kind_unaffected() -> None:
    ctx, dice = context([5], ModPlugin("save", ("advantage", "x")))
    result = ctx.roll("d20", ATTACK)
    assert result.advantage == "none"
    assert dice.asked == [20]


def test_context_roll_advantage_and_disadvantage_from_two_plugins_cancel() -> None:
    ctx, dice = context(
        [9],
        ModPlugin("attack", ("advantage", "flanking"), ("advantage", "hidden")),
        ModPlugin("attack", ("disadvantage", "dodging")),
    )
    result = ctx.roll("d20", ATTACK)
    assert result.advantage == "none"
    assert result.dice == (9,)
    assert dice.asked == [20]
    assert sorted(result.sources) == [
        "advantage:flanking",
        "advantage:hidden",
        "disadvantage:dodging",
    ]


def test_context_roll_extra_modifiers_combine_with_plugins() -> None:
    ctx, dice = context([3, 11], ModPlugin("attack", ("disadvantage", "squeezing")))
    result = ctx.roll("d20", ATTACK, extra=[RollModifier("disadvantage", "prone")])
    assert result.advantage == "disadvantage"
    assert result.kept == (3,)
    ctx, dice = context([3], ModPlugin("attack", ("disadvantage", "squeezing")))
    result = ctx.roll("d20", ATTACK, extra=[RollModifier("advantage", "help")])
    assert result.advantage == "none"
    assert dice.asked == [20]


def test_context_roll_two_distinct_expertise_sources_give_d6() -> None:
    ctx, dice = context(
        [10, 5],
        ModPlugin("attack", ("expertise", "rope")),
        ModPlugin("attack", ("expertise", "training")),
    )
    result = ctx.roll("d20", ATTACK)
    assert dice.asked == [20, 6]
    assert result.expertise == 6
    assert result.expertise_roll == 5
    assert result.total == 15


def test_context_roll_same_expertise_source_twice_gives_d4() -> None:
    ctx, dice = context(
        [10, 4],
        ModPlugin("attack", ("expertise", "rope")),
        ModPlugin("attack", ("expertise", "rope")),
    )
    result = ctx.roll("d20", ATTACK)
    assert dice.asked == [20, 4]
    assert result.expertise == 4
    assert result.total == 14


def test_context_roll_same_source_from_plugin_and_extra_counts_once() -> None:
    ctx, dice = context([10, 1], ModPlugin("attack", ("expertise", "rope")))
    result = ctx.roll("d20", ATTACK, extra=[RollModifier("expertise", "rope")])
    assert dice.asked == [20, 4]
    assert result.expertise == 4


@pytest.mark.parametrize(("count", "die"), [(1, 4), (3, 8), (5, 8)])
def test_context_roll_expertise_grows_with_sources(count: int, die: int) -> None:
    mods = [("expertise", f"source{i}") for i in range(count)]
    ctx, dice = context([10, 1], ModPlugin("check", *mods))
    result = ctx.roll("d20", RollRequest("check", "a", ability="dex", skill="acrobatics"))
    assert dice.asked == [20, die]
    assert result.expertise == die
    assert result.total == 11


def _aria_and_goblin() -> EncounterHarness:
    h = EncounterHarness(
        [
            Creature(
                "a",
                "Aria",
                "party",
                controller="alice",
                hp=10,
                max_hp=10,
                attacks=[Attack("rapier")],
            ),
            Creature("g", "Goblin", "foes", hp=7, max_hp=7, attacks=[Attack("scimitar")]),
        ]
    )
    h.start(initiative=[15, 10])
    return h


def test_the_harness_says_when_its_scripted_dice_ran_out() -> None:
    # The attack roll happens inside a plugin's command handler, which the engine would
    # blame on the plugin: the harness names the test's mistake instead.
    h = _aria_and_goblin()
    with pytest.raises(ScriptExhausted, match=r"^no scripted roll left for a d20$"):
        h.send("attack", creature="a", target="g")
    assert h.events[-1].type != "attack_made"
    h.rolls(15, 4)  # scripted now: the same attack goes through
    assert [e.type for e in h.send("attack", creature="a", target="g")][-2:] == [
        "attack_made",
        "damaged",
    ]


def test_dice_running_out_outside_the_harness_is_the_plugins_failure() -> None:
    # Production isolation lets nothing through for tests: an engine given scripted dice
    # that run out refuses the command as the failing plugin's (plugin_error).
    h = _aria_and_goblin()
    with pytest.raises(PluginFailure) as failure:
        h.engine.handle(
            h.state, Command("attack", {"creature": "a", "target": "g"}), ScriptedEntropy()
        )
    assert isinstance(failure.value.error, ScriptExhausted)
    assert failure.value.plugin == "zonekeep.combat"
