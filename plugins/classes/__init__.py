"""The SRD 5.1 classes at levels 1 to 5: a first-party content plugin, on by default.

``classes-5.1.json``, shipped beside this module, lists every feature of the twelve SRD
classes with their SRD subclass (fighter/Champion, rogue/Thief, cleric/Life Domain,
wizard/School of Evocation, barbarian/Berserker, bard/Lore, druid/Land, monk/Open Hand,
paladin/Devotion, ranger/Hunter, sorcerer/Draconic Bloodline, warlock/Fiend) at levels
1 to 5, with each class's hit die, saving throws, proficiencies and per-level figures,
in the project's own words, each either implemented here, carried by the
character model itself (``sheet``: the numbers a sheet derives), or marked ``gm`` with
the reason the GM adjudicates it. docs/characters.md has the generated coverage table
(scripts/class_coverage.py).

A character gets a feature from its sheet's ``traits`` and ``actions``, by id, as a
creature gets its features from the compendium (docs/characters.md): the pregenerated
characters list theirs. What this plugin implements (declared with
``zonekeep_features``, so the GM does not see them as "GM adjudicates"):

- ``second-wind`` (bonus action, the ``second_wind`` command): regain 1d10 + fighter
  level hit points, spending a use (one per short rest).
- ``action-surge`` (the ``action_surge`` command, free, on its turn): one more action
  this turn (``action_granted``), spending a use (one per short rest).
- ``improved-critical``: its attacks are critical hits on a natural 19 or 20
  (``zonekeep_critical_threshold``).
- ``extra-attack``: its Attack action makes two attacks (``zonekeep_attacks_per_action``;
  the second ``attack`` command of the turn spends the granted attack).
- ``sneak-attack``: once per turn, a hit with a finesse or ranged weapon (for a
  creature without rogue levels, a stat block's spy, any of its attacks) deals the extra
  dice (``params.dice`` or ``params.damage``, else 1d6 per two rogue levels, rounded up;
  doubled on a critical hit) when the attack roll had advantage, or when another enemy of the target, not
  incapacitated, is engaged with it (in zones, "within 5 feet") and the roll had no
  disadvantage. Spending it sets the creature's resource ``sneak-attack`` to 0
  (``resource_spent``); the start of the next turn, anyone's, gives it back
  (``resource_restored``).
- ``cunning-action`` (bonus action, the ``cunning_action`` command): Dash or Disengage;
  Hide is refused with the reason (the rules have no hiding: the GM adjudicates it).

The reactions after a roll (Uncanny Dodge, Deflect Missiles, Cutting Words) are in
``_reactions.py``, the bonuses to rolls (Bardic Inspiration, Sacred Weapon, the Archery
and Dueling fighting styles) in ``_bonuses.py``, the short rest's slot recovery (Arcane
Recovery, Natural Recovery) in ``_rests.py``.
The barbarian's, monk's, paladin's and ranger's features (Rage, Frenzy, Reckless
Attack, Danger Sense, Martial Arts, Ki, Flurry of Blows, Patient Defense, Step of the
Wind, Stunning Strike, Lay on Hands, Divine Smite, Colossus Slayer) are in
``_warriors.py``, the sorcerer's Font of Magic in ``_sorcery.py``, the monk's Open Hand
Technique in ``_open_hand.py``, Channel Divinity (Turn Undead, Destroy Undead, Preserve
Life, Turn the Unholy) in ``_divinity.py``, two-weapon fighting (the off-hand attack)
in ``_two_weapons.py``, each documented there; Extra Attack above serves every class that has it. The casters' ``spellcasting``
is the spells plugin's (``zonekeep.spells``).

It uses the public SDK only, as a third-party content plugin would. An operator turns
it off with ``plugins_disabled = ["zonekeep.classes"]``; the features then show as "GM
adjudicates" again.

The class data paraphrases the System Reference Document 5.1 by Wizards of the Coast
LLC, licensed under CC BY 4.0; the file's ``attribution`` carries the credit.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zonekeep.sdk import (
    Action,
    ActionGranted,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    Creature,
    Damaged,
    Dashed,
    Disengaged,
    EncounterState,
    FeatureSpec,
    Healed,
    Param,
    ResourceRestored,
    ResourceSpent,
    RuleContext,
    Trait,
    apply_damage,
    hookimpl,
    resource_key,
    spend_use,
)

from ._bonuses import *  # noqa: F403  (Bardic Inspiration, Sacred Weapon, Fighting Style)
from ._common import class_level, feature_of
from ._divinity import *  # noqa: F403  (Channel Divinity: turning, Preserve Life)
from ._open_hand import *  # noqa: F403  (the monk's Open Hand Technique)
from ._reactions import *  # noqa: F403  (Uncanny Dodge, Deflect Missiles, Cutting Words)
from ._rests import *  # noqa: F403  (Arcane Recovery, Natural Recovery)
from ._sorcery import *  # noqa: F403  (the sorcerer's Font of Magic)
from ._two_weapons import *  # noqa: F403  (two-weapon fighting: the off-hand attack)
from ._warriors import *  # noqa: F403  (barbarian, monk, paladin, ranger)

__all__ = ["DATA", "class_data", "class_level"]

#: The class data this plugin implements (package data, shipped in the wheel).
DATA = Path(__file__).resolve().parent / "classes-5.1.json"
#: The resource that says whether a rogue's Sneak Attack is spent this turn (1 or 0).
SNEAK_ATTACK = "sneak-attack"


@functools.cache
def class_data() -> dict[str, Any]:
    """The classes and their features, read once per process (the file never changes)."""
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


_feature = feature_of


_NO_PARAMS = {"type": "object", "additionalProperties": True}


@hookimpl
def zonekeep_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "second-wind",
            "action",
            _NO_PARAMS,
            doc="The second_wind command: a bonus action that heals 1d10 + fighter level.",
        ),
        FeatureSpec(
            "action-surge",
            "trait",
            _NO_PARAMS,
            doc="The action_surge command: one more action this turn.",
        ),
        FeatureSpec(
            "improved-critical",
            "trait",
            _NO_PARAMS,
            doc="Its attacks are critical hits on a natural 19 or 20.",
        ),
        FeatureSpec(
            "extra-attack",
            "trait",
            {
                "type": "object",
                "properties": {"attacks": {"type": "integer", "minimum": 2, "maximum": 4}},
                "additionalProperties": True,
            },
            doc="Its Attack action makes two attacks (params.attacks: more).",
        ),
        FeatureSpec(
            "sneak-attack",
            "trait",
            {
                "type": "object",
                "properties": {
                    "dice": {"type": "string", "maxLength": 4},
                    "damage": {"type": "string", "maxLength": 4},
                },
                "additionalProperties": True,
            },
            doc="Once per turn, extra damage dice on a finesse or ranged hit with advantage, "
            "or with another enemy of the target engaged with it and no disadvantage.",
        ),
        FeatureSpec(
            "cunning-action",
            "action",
            _NO_PARAMS,
            doc="The cunning_action command: Dash or Disengage as a bonus action (Hide "
            "is the GM's).",
        ),
    ]


# -- fighter ----------------------------------------------------------------------------------


def _uses_left(creature: Creature, feature: Trait | Action) -> tuple[str, str] | None:
    if feature.uses is None:
        return None
    left = creature.resources.get(resource_key(feature), 1)
    if left <= 0:
        return ("no_uses_left", f"{creature.name} has no use of {feature.name} left.")
    return None


def _has_second_wind(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    feature = _feature(me, "second-wind")
    if feature is None:
        return ("no_such_feature", f"{me.name} has no Second Wind.")
    return _uses_left(me, feature)


def _second_wind(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    feature = _feature(me, "second-wind")
    assert feature is not None  # (requires)
    level = class_level(me, "fighter") or 1
    spend_use(ctx, me, feature)
    roll = ctx.roll(f"1d10+{level}")
    me = ctx.state.creatures[me.id]
    hp = max(me.hp, min(me.max_hp, me.hp + roll.total))
    ctx.emit(Healed(me.id, roll.total, hp, "second-wind", roll=roll))


def _has_action_surge(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    feature = _feature(me, "action-surge")
    if feature is None:
        return ("no_such_feature", f"{me.name} has no Action Surge.")
    return _uses_left(me, feature)


def _action_surge(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    feature = _feature(me, "action-surge")
    assert feature is not None  # (requires)
    spend_use(ctx, me, feature)
    ctx.emit(ActionGranted(me.id, "action", "action-surge"))


@hookimpl
def zonekeep_critical_threshold(ctx: RuleContext, attacker: Creature, attack: Attack) -> int | None:
    return 19 if _feature(attacker, "improved-critical") is not None else None


@hookimpl
def zonekeep_attacks_per_action(ctx: RuleContext, creature: Creature) -> int | None:
    feature = _feature(creature, "extra-attack")
    if feature is None:
        return None
    count = feature.params.get("attacks", 2)
    return count if isinstance(count, int) and not isinstance(count, bool) else 2


# -- rogue ------------------------------------------------------------------------------------


def _sneak_dice(creature: Creature, feature: Trait | Action) -> str:
    dice = feature.params.get("dice", feature.params.get("damage"))
    if isinstance(dice, str) and dice.endswith("d6") and dice[:-2].isdigit():
        return dice
    level = class_level(creature, "rogue") or 1
    return f"{(level + 1) // 2}d6"


def _sneak_ally(ctx: RuleContext, attacker: Creature, target: Creature) -> Creature | None:
    """Another enemy of ``target`` engaged with it and not incapacitated, or None."""
    for cid in ctx.state.engaged_with(target.id):
        other = ctx.state.creatures.get(cid)
        if (
            other is not None
            and other.id != attacker.id
            and not other.incapacitated
            and not other.out_of_fight
            and ctx.is_enemy(other, target)
        ):
            return other
    return None


@hookimpl
def zonekeep_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not result.hit or target.out_of_fight:
        return
    feature = _feature(attacker, "sneak-attack")
    if feature is None:
        return
    if (
        class_level(attacker, "rogue")
        and attack.kind != "ranged"
        and "finesse" not in attack.properties
    ):
        return  # a rogue's needs a finesse or ranged weapon (a stat block's says nothing)
    if attacker.resources.get(SNEAK_ATTACK, 1) <= 0:
        return  # once per turn
    advantage = result.roll.advantage
    if advantage != "advantage" and (
        advantage == "disadvantage" or _sneak_ally(ctx, attacker, target) is None
    ):
        return
    dice = _sneak_dice(attacker, feature)
    if feature.uses is not None:  # a stat block's "(1/Turn)"
        spend_use(ctx, attacker, feature)
    else:
        ctx.emit(ResourceSpent(attacker.id, SNEAK_ATTACK, 0))
    roll = ctx.roll(dice, double_dice=result.critical)
    apply_damage(
        ctx,
        ctx.state.creatures[target.id],
        roll.total,
        damage_type=attack.damage_type,
        roll=roll,
        source=attacker.id,
        attacker=attacker.id,
        attack=attack.name,
        critical=result.critical,
    )


def _has_cunning_action(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _feature(me, "cunning-action") is None:
        return ("no_such_feature", f"{me.name} has no Cunning Action.")
    return None


_CUNNING = ("dash", "disengage", "hide")


def _cunning_action(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    choice = cmd.params.get("choice")
    if choice == "hide":
        ctx.refuse(
            "invalid_params",
            "The rules do not model hiding yet: the GM adjudicates a Hide "
            f"(and can hide {me.name} from the others with an override).",
        )
    if choice == "dash":
        ctx.emit(Dashed(me.id))
    elif choice == "disengage":
        ctx.emit(Disengaged(me.id))
    else:
        ctx.refuse("invalid_params", f"Cunning Action is dash, disengage or hide, not {choice!r}.")


# -- declarations -----------------------------------------------------------------------------


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A new turn: every rogue that dealt its Sneak Attack may deal it again."""
    for other in list(ctx.state.creatures.values()):
        if other.resources.get(SNEAK_ATTACK) == 0 and _feature(other, SNEAK_ATTACK):
            ctx.emit(ResourceRestored(other.id, SNEAK_ATTACK, 1, "turn"))


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "second_wind",
            _second_wind,
            "Bonus action: Second Wind, regain 1d10 + your fighter level hit points "
            "(once per short rest).",
            {"creature": Param("creature", True, "the fighter")},
            costs=("bonus",),
            requires=_has_second_wind,
        ),
        CommandSpec(
            "action_surge",
            _action_surge,
            "Action Surge: take one more action this turn (once per short rest).",
            {"creature": Param("creature", True, "the fighter")},
            costs=("free",),
            requires=_has_action_surge,
        ),
        CommandSpec(
            "cunning_action",
            _cunning_action,
            "Bonus action: Cunning Action, Dash or Disengage (Hide is the GM's).",
            {
                "creature": Param("creature", True, "the rogue"),
                "choice": Param("string", True, "dash, disengage or hide"),
            },
            costs=("bonus",),
            requires=_has_cunning_action,
        ),
    )
