"""Every die a class feature rolls is in the log (issue 31 follow-up): the roll's record
goes into the event that reports its effect, so that ``zonekeep verify`` finds each die
where the rule used it, not in a loose ``dice_drawn``.

- Second Wind: the ``healed`` event's roll.
- A Bardic Inspiration die on an attack: the attack roll's ``bonus_dice``, with its draw.
- Cutting Words, Deflect Missiles: the reaction's ``action_taken`` event's ``roll``.
"""

from __future__ import annotations

from helpers import make
from test_classes import fight as hall_fight
from test_classes import ogre, pc
from test_classes_bonuses import bard as lore_bard
from test_classes_bonuses import fight as bonus_fight
from test_classes_reactions import bard, goblin, goblins_turn, monk
from test_classes_reactions import fight as reaction_fight

from zonekeep.plugins.classes._reactions import CUTTING_WORDS, DEFLECT_MISSILES
from zonekeep.sdk import ActionTaken, AttackMade, Healed, RollRecord
from zonekeep.sdk.host import dice_in, event_to_dict


def reaction_roll(events: tuple[object, ...], kind: str) -> RollRecord:
    (taken,) = [e for e in events if isinstance(e, ActionTaken) and e.action == kind]
    assert taken.roll is not None
    return taken.roll


def test_second_wind_records_its_die_in_the_healed_event() -> None:
    h = hall_fight(pc("kael"), ogre(), initiative=[20, 5])
    h.send("override", creature="kael", field="hp", value=20)
    events = h.rolls(7).send("second_wind", creature="kael")
    (healed,) = [e for e in events if isinstance(e, Healed)]
    assert healed.roll is not None and healed.roll.dice == (7,) and healed.roll.draws
    assert h.unrecorded_dice() == []


def test_a_bardic_inspiration_die_is_in_the_attack_rolls_record() -> None:
    ally = make("kael", hp=30)
    h = bonus_fight(
        {"lyra": "hall", "kael": "yard", "gob": "yard"}, lore_bard(), ally, make("gob", "foes")
    )
    h.send("bardic_inspiration", creature="lyra", target="kael")
    h.end_turn()
    before = h.dice.counter  # type: ignore[attr-defined]
    events = h.rolls(5, 3, 2).send("attack", creature="kael", target="gob")
    (attack,) = [e for e in events if isinstance(e, AttackMade)]
    assert attack.roll.dice == (5,) and attack.roll.bonus_dice == (3,)
    assert attack.roll.draws == ((before, 20), (before + 1, 6))
    assert attack.roll.total == 12 and attack.roll.sources == ("bonus:bardic inspiration d6=3",)
    assert h.unrecorded_dice() == []
    h.assert_replay_matches()


def test_cutting_words_records_its_die_in_the_reaction_event() -> None:
    ally = make("kael", ac=15, hp=30)
    h = reaction_fight({"lyra": "yard", "kael": "hall", "gob": "hall"}, bard(), ally, goblin())
    goblins_turn(h)
    h.rolls(12).send("attack", creature="gob", target="kael", attack="blade")
    events = h.rolls(4).decide(CUTTING_WORDS, h.player("player-lyra"))
    words = reaction_roll(events, CUTTING_WORDS)
    assert (words.expr, words.dice, words.total, len(words.draws)) == ("d6", (4,), 4, 1)
    assert h.unrecorded_dice() == []
    h.assert_replay_matches()


def test_deflect_missiles_records_its_die_in_the_reaction_event() -> None:
    h = reaction_fight({"sora": "hall", "gob": "bar"}, monk(), goblin())
    goblins_turn(h)
    h.rolls(15).send("attack", creature="gob", target="sora", attack="shortbow")
    events = h.rolls(2, 6).decide(DEFLECT_MISSILES, h.player("player-sora"))
    deflect = reaction_roll(events, DEFLECT_MISSILES)
    assert (deflect.expr, deflect.dice, deflect.modifier, deflect.total) == ("1d10", (2,), 6, 8)
    assert len(deflect.draws) == 1
    assert h.unrecorded_dice() == []
    h.assert_replay_matches()


def test_the_verifier_pairs_a_bonus_die_with_its_draw() -> None:
    """``bonus_dice`` come after the penalty die in the pairing (SPEC.md "Dice")."""
    roll = RollRecord(
        "d20",
        (11,),
        (11,),
        3,
        14,
        penalty=4,
        penalty_roll=2,
        bonus_dice=(4,),
        draws=((0, 20), (1, 4), (2, 6)),
    )
    assert dice_in(event_to_dict(AttackMade("a", "b", "x", "melee", roll, 12, True))) == [
        (0, 20, 11),
        (1, 4, 2),
        (2, 6, 4),
    ]
