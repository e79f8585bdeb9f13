"""Two-weapon fighting (SRD 5.1, combat: a bonus-action attack with the other hand),
with the public SDK only (the attack is the SDK's ``make_attack``).

- A creature that, on its own turn and with its action spent (the Attack action, or
  Haste's), attacks with a light weapon it holds (``light`` among the attack's
  ``properties``; a melee attack, or a thrown one) is ready to strike with the other
  hand: its resource ``two-weapon`` holds that attack's place in its attacks (1 for
  the first), until its next turn starts.
- ``offhand_attack`` (a bonus action; ``creature``, ``target``, ``attack``): an attack
  with a different light weapon (another attack of the creature whose weapon is not
  the first one's: ``dagger`` and ``dagger (thrown)`` are one weapon, so a second
  dagger needs an attack of its own name); without ``attack``, the first such attack.
  Its damage does not add the ability modifier (Strength, or Dexterity for a finesse
  weapon, or a thrown one's) unless it is negative; with the Two-Weapon Fighting style
  (``fighting-style`` ``two-weapon-fighting``) it does. While that attack is made its
  attacker's ``off-hand`` resource is 1 (its damage is computed from it, whatever
  reaction the attack waits for), 0 again once the attack is made.

Dueling does not apply to an off-hand attack (two weapons are held).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from zonekeep.sdk import (
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    Creature,
    Damaged,
    EncounterState,
    Param,
    ResourceRestored,
    ResourceSpent,
    RuleContext,
    hookimpl,
    make_attack,
    parse_dice,
)

from ._reactions import has_style

__all__ = [
    "OFF_HAND",
    "TWO_WEAPON",
    "offhand_damage",
    "two_weapons_attack_made",
    "two_weapons_commands",
    "two_weapons_turn_start",
]

#: The resource of a creature ready to strike with its other hand: the place (from 1)
#: of the light weapon's attack it made this turn; 0 when not ready.
TWO_WEAPON: Final = "two-weapon"
#: The resource that is 1 while its off-hand attack is being made.
OFF_HAND: Final = "off-hand"
_THROWN: Final = " (thrown)"


def _light(attack: Attack) -> bool:
    """A light weapon's attack, made in melee or thrown."""
    return "light" in attack.properties and (
        attack.kind == "melee" or "thrown" in attack.properties
    )


def _weapon(attack: Attack) -> str:
    """The weapon an attack is made with: its name, less a thrown variant's suffix."""
    return attack.name.removesuffix(_THROWN)


def _main_hand(me: Creature) -> Attack | None:
    """The light weapon attack ``me`` made this turn (its ``two-weapon`` resource)."""
    place = me.resources.get(TWO_WEAPON, 0)
    return me.attacks[place - 1] if 0 < place <= len(me.attacks) else None


def _off_hand_choices(me: Creature, main: Attack) -> list[Attack]:
    return [a for a in me.attacks if _light(a) and _weapon(a) != _weapon(main)]


def _can_strike(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    """Why ``me`` cannot make an off-hand attack now, or None."""
    main = _main_hand(me)
    if main is None or state.active != me.id:
        return (
            "invalid_params",
            f"{me.name} strikes with the other hand after attacking with a light weapon "
            "(the Attack action) on its turn.",
        )
    if not _off_hand_choices(me, main):
        return (
            "invalid_params",
            f"{me.name} holds no other light weapon than its {_weapon(main)} to strike with.",
        )
    return None


def _offhand_attack(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    main = _main_hand(me)
    assert main is not None  # (_can_strike)
    choices = _off_hand_choices(me, main)
    name = p.get("attack")
    chosen = choices[0] if name is None else next((a for a in choices if a.name == name), None)
    if chosen is None:
        ctx.refuse(
            "invalid_params",
            f"{name!r} is not a light weapon other than the {_weapon(main)} for {me.name}'s "
            f"other hand: {', '.join(a.name for a in choices)}.",
        )
    target = ctx.creature(p.get("target"), role="target")
    ctx.emit(
        ResourceSpent(me.id, TWO_WEAPON, 0),
        ResourceRestored(me.id, OFF_HAND, 1, "two-weapon fighting"),
    )
    make_attack(ctx, me, target, chosen.name)


def offhand_damage(attacker: Creature, attack: Attack) -> str | None:
    """The damage of ``attacker``'s off-hand attack (``attack``) without its ability
    modifier, unless that is negative or the Two-Weapon Fighting style adds it; None
    when this is no off-hand attack (or the damage stays the attack's own)."""
    if attacker.resources.get(OFF_HAND, 0) < 1 or has_style(attacker, "two-weapon-fighting"):
        return None
    scores = attacker.abilities
    finesse = "finesse" in attack.properties
    ability = max(scores.get("str", 0), scores.get("dex", 0)) if finesse else scores.get("str", 0)
    if ability <= 0:
        return None
    dice = parse_dice(attack.damage)
    return str(type(dice)(dice.count, dice.sides, dice.modifier - ability))


@hookimpl(specname="zonekeep_attack_made")
def two_weapons_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    """The off-hand attack is made: its mark goes. A light weapon attacked with on its
    own turn, its action spent: the other hand is ready."""
    if attacker.resources.get(OFF_HAND, 0):
        ctx.emit(ResourceSpent(attacker.id, OFF_HAND, 0))
        return
    state = ctx.state
    if (
        result.reaction
        or state.active != attacker.id
        or state.resources.actions > 0
        or attacker.resources.get(TWO_WEAPON, 0)
        or not _light(attack)
    ):
        return
    for place, mine in enumerate(attacker.attacks, 1):
        if mine.name == attack.name:
            ctx.emit(ResourceRestored(attacker.id, TWO_WEAPON, place, "attack"))
            return


@hookimpl(specname="zonekeep_turn_start")
def two_weapons_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A new turn: the last turn's readiness (and any mark left) lapses."""
    for key in (TWO_WEAPON, OFF_HAND):
        if creature.resources.get(key, 0):
            ctx.emit(ResourceSpent(creature.id, key, 0))


@hookimpl(specname="zonekeep_commands")
def two_weapons_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "offhand_attack",
            _offhand_attack,
            "Bonus action: after attacking with a light weapon (the Attack action), attack "
            "with a different light weapon in the other hand (its damage without the "
            "ability modifier, unless negative or with the Two-Weapon Fighting style).",
            {
                "creature": Param("creature", True, "the attacker"),
                "target": Param("creature", True, "the creature attacked"),
                "attack": Param(
                    "string", False, "the other hand's light weapon (default: the first)"
                ),
            },
            costs=("bonus",),
            requires=_can_strike,
        ),
    )
