"""Class features that add to rolls (SRD 5.1, levels 1 to 5), with the public SDK only
(``RollModifier``'s ``"bonus"``: a flat bonus, a bonus die, spent once).

- ``bardic-inspiration`` (bonus action, the ``bardic_inspiration`` command): the bard
  spends a use and gives another creature within 60 feet (``path_distance`` between
  their zones, with line of sight) that can hear it (not deafened) its Bardic
  Inspiration die (d6, d8 from 5th level; a stat block's ``params.die``): the
  creature's resource ``bardic-inspiration-die`` holds the die's size until the die is
  used. The next attack roll, ability check or saving throw it makes adds the die
  (rolled after the d20) and spends it. A creature holds one die at a time; the
  10 minutes it lasts are longer than a fight (the GM takes back an unused die with
  an override).
- ``sacred-weapon`` (action, the ``sacred_weapon`` command: a paladin's Channel
  Divinity, Oath of Devotion): spends a use of the ``channel-divinity`` class resource
  and gives the ``sacred-weapon`` condition for 10 rounds (a minute): its weapon attack
  rolls (its own attacks, not spells) add its Charisma modifier (at least +1), and
  their damage counts as magical (``overcome_nonmagical``). The light is the GM's.
- ``fighting-style`` (a trait with ``params.style``, or the id
  ``fighting-style-<style>``): ``archery``, +2 to its ranged weapon attack rolls;
  ``dueling``, +2 damage with a melee weapon that is not two-handed (the rules do not
  know what the other hand holds: the player keeps it free); ``protection``, a reaction
  offered when an attacker it can see targets another creature adjacent to it
  (``move_adjacent``: "within 5 feet" in zones), giving that attack roll disadvantage
  (the shield it needs is the player's care: a roster creature carries no shield);
  ``defense`` is the +1 the sheet writes in ``armor.bonus``; ``two-weapon-fighting``
  adds the ability modifier to an off-hand attack's damage (``_two_weapons``). Great
  Weapon Fighting (rerolling damage dice) is the GM's.
- ``dark-ones-blessing`` (warlock, the Fiend 1): when damage from the warlock (its
  ``source``) reduces a hostile creature to 0 hit points (the condition that follows is
  given: not a creature already at 0), the warlock gains its Charisma modifier + warlock
  level temporary hit points, at least 1 (``gain_temp_hp``: the larger stay).
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    Attack,
    Command,
    CommandSpec,
    ConditionApplied,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    EncounterState,
    FeatureSpec,
    Param,
    ResourceRestored,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_timed_condition,
    gain_temp_hp,
    hookimpl,
    parse_dice,
    path_distance,
    spend_use,
)

from ._common import class_level, feature_of, no_uses_left
from ._reactions import BARDIC_INSPIRATION, PROTECTION, bardic_die, fighting_styles, has_style
from ._two_weapons import OFF_HAND, offhand_damage

__all__ = [
    "DARK_ONES_BLESSING",
    "INSPIRATION_DIE",
    "PROTECTION",
    "SACRED_WEAPON",
    "bonuses_after_damage",
    "bonuses_attack_damage",
    "bonuses_commands",
    "bonuses_conditions",
    "bonuses_features",
    "bonuses_modify_damage",
    "bonuses_roll_modifiers",
    "fighting_styles",
]

#: The resource holding the size of the Bardic Inspiration die a creature was given.
INSPIRATION_DIE = "bardic-inspiration-die"
#: The condition (and the feature) of a paladin's Sacred Weapon.
SACRED_WEAPON = "sacred-weapon"
#: The class resource Channel Divinity spends.
CHANNEL_DIVINITY = "channel-divinity"
#: The warlock's feature that gives temporary hit points for a kill.
DARK_ONES_BLESSING = "dark-ones-blessing"
#: The source apply_damage gives the condition of a creature reduced to 0 hit points.
_ZERO_HP = "reduced to 0 hit points"
#: How far a Bardic Inspiration reaches, in feet.
INSPIRATION_RANGE = 60
#: The fighting styles the rules apply (Defense is the sheet's armor bonus).
STYLES = ("archery", "defense", "dueling", "protection", "two-weapon-fighting")
_STYLE_BONUS = 2

_NO_PARAMS = {"type": "object", "additionalProperties": True}


@hookimpl(specname="zonekeep_features")
def bonuses_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            BARDIC_INSPIRATION,
            "action",
            {
                "type": "object",
                "properties": {"die": {"enum": ["d6", "d8", "d10", "d12"]}},
                "additionalProperties": True,
            },
            doc="The bardic_inspiration command: a bonus action giving another creature within "
            "60 feet the bard's die, added to its next attack roll, check or save.",
        ),
        FeatureSpec(
            SACRED_WEAPON,
            "action",
            _NO_PARAMS,
            doc="The sacred_weapon command: a Channel Divinity use; for a minute its weapon "
            "attack rolls add its Charisma modifier (at least +1) and their damage is magical.",
        ),
        FeatureSpec(
            "fighting-style",
            "trait",
            {
                "type": "object",
                "properties": {"style": {"type": "string", "maxLength": 40}},
                "additionalProperties": True,
            },
            doc="params.style: archery (+2 to ranged weapon attack rolls), dueling (+2 damage "
            "with a one-handed melee weapon), protection (a reaction: disadvantage on an "
            "attack at an adjacent creature), defense (the sheet's armor bonus), "
            "two-weapon-fighting (the ability modifier on an off-hand attack's damage); "
            "great weapon fighting is the GM's.",
        ),
        FeatureSpec(
            DARK_ONES_BLESSING,
            "trait",
            _NO_PARAMS,
            doc="Reducing a hostile creature to 0 hit points gives it Charisma modifier + "
            "warlock level temporary hit points (at least 1).",
        ),
        *(
            FeatureSpec(
                f"fighting-style-{style}",
                "trait",
                _NO_PARAMS,
                doc=f"The {style} fighting style (as fighting-style with style: {style}).",
            )
            for style in STYLES
        ),
    ]


def _weapon_attack(creature: Creature, name: str | None) -> Attack | None:
    """``creature``'s own attack called ``name`` (a spell's attack is not one of them)."""
    return creature.attack(name) if name else None


@hookimpl(specname="zonekeep_roll_modifiers")
def bonuses_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    actor = ctx.state.creatures.get(roll.actor)
    if actor is None or roll.kind == "initiative":
        return None
    found: list[RollModifier] = []
    die = actor.resources.get(INSPIRATION_DIE, 0)
    if die > 0:
        found.append(RollModifier("bonus", "bardic inspiration", die=die, spends=INSPIRATION_DIE))
    if roll.kind == "attack":
        sacred = SACRED_WEAPON in actor.conditions
        archery = roll.attack_kind == "ranged" and has_style(actor, "archery")
        if (sacred or archery) and _weapon_attack(actor, roll.attack) is not None:
            if sacred:
                cha = max(1, actor.abilities.get("cha", 0))
                found.append(RollModifier("bonus", "sacred weapon", value=cha))
            if archery:
                found.append(RollModifier("bonus", "archery", value=_STYLE_BONUS))
    return found or None


@hookimpl(specname="zonekeep_attack_damage")
def bonuses_attack_damage(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> str | None:
    """An off-hand attack's damage (``_two_weapons``); Dueling: +2 to a one-handed melee
    weapon's damage (not an off-hand attack's: two weapons are held)."""
    if attacker.resources.get(OFF_HAND, 0):
        return offhand_damage(attacker, attack)
    if (
        attack.kind != "melee"
        or not has_style(attacker, "dueling")
        or "two-handed" in attack.properties
        or "two-handed" in attacker.conditions  # a versatile weapon held in both hands
        or _weapon_attack(attacker, attack.name) is None
    ):
        return None
    dice = parse_dice(attack.damage)
    return str(type(dice)(dice.count, dice.sides, dice.modifier + _STYLE_BONUS))


@hookimpl(specname="zonekeep_modify_damage")
def bonuses_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    """A Sacred Weapon's hits are magical."""
    if damage.attacker is None or damage.nonmagical_overcome is not None:
        return None
    attacker = ctx.state.creatures.get(damage.attacker)
    if (
        attacker is None
        or SACRED_WEAPON not in attacker.conditions
        or _weapon_attack(attacker, damage.attack) is None
    ):
        return None
    return damage.overcome_nonmagical("sacred weapon")


@hookimpl(specname="zonekeep_after_damage")
def bonuses_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    """Dark One's Blessing: a hostile creature the warlock's damage reduced to 0."""
    if damage.hp != 0 or damage.amount <= 0 or not damage.source:
        return
    warlock = ctx.state.creatures.get(damage.source)
    if (
        warlock is None
        or warlock.out_of_fight
        or feature_of(warlock, DARK_ONES_BLESSING) is None
        or not ctx.is_enemy(warlock, creature)
    ):
        return
    events = ctx.events
    at = next((i for i in range(len(events) - 1, -1, -1) if events[i] is damage), None)
    if at is None or not any(
        isinstance(e, ConditionApplied) and e.creature == creature.id and e.source == _ZERO_HP
        for e in events[at + 1 :]
    ):
        return  # it was at 0 hit points already
    level = class_level(warlock, "warlock")
    amount = max(1, warlock.abilities.get("cha", 0) + level)
    gain_temp_hp(ctx, warlock.id, amount, DARK_ONES_BLESSING)


@hookimpl(specname="zonekeep_conditions")
def bonuses_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            SACRED_WEAPON,
            "Sacred Weapon: its weapon attack rolls add its Charisma modifier (at least +1) "
            "and their damage is magical.",
            durations=("rounds", "until_removed"),
        ),
    )


# -- commands ---------------------------------------------------------------------------------


def _can_inspire(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    feature = feature_of(me, BARDIC_INSPIRATION)
    if feature is None:
        return ("no_such_feature", f"{me.name} has no Bardic Inspiration.")
    return no_uses_left(me, feature)


def _bardic_inspiration(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    other = ctx.creature(cmd.params["target"])
    feature = feature_of(me, BARDIC_INSPIRATION)
    assert feature is not None  # (requires)
    if other.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} inspires another creature, not itself.")
    if other.out_of_fight:
        ctx.refuse("invalid_target", f"{other.name} is out of the fight.")
    if "deafened" in other.conditions:
        ctx.refuse("invalid_target", f"{other.name} is deafened: it cannot hear {me.name}.")
    distance = (
        path_distance(ctx.state.arena, me.zone, other.zone) if me.zone and other.zone else None
    )
    if distance is None or distance > INSPIRATION_RANGE:
        ctx.refuse(
            "out_of_range",
            f"{other.name} is not within {INSPIRATION_RANGE} feet of {me.name} in sight.",
        )
    if other.resources.get(INSPIRATION_DIE, 0) > 0:
        ctx.refuse("invalid_target", f"{other.name} already holds a Bardic Inspiration die.")
    spend_use(ctx, me, feature)
    die = int(bardic_die(me).removeprefix("d"))
    ctx.emit(ResourceRestored(other.id, INSPIRATION_DIE, die, BARDIC_INSPIRATION))


def _can_sacred_weapon(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if feature_of(me, SACRED_WEAPON) is None:
        return ("no_such_feature", f"{me.name} has no Sacred Weapon.")
    if me.resources.get(CHANNEL_DIVINITY, 0) <= 0:
        return ("no_uses_left", f"{me.name} has no Channel Divinity use left.")
    return None


def _sacred_weapon(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    left = me.resources.get(CHANNEL_DIVINITY, 0)
    ctx.emit(ResourceSpent(me.id, CHANNEL_DIVINITY, left - 1))
    apply_timed_condition(ctx, me.id, SACRED_WEAPON, rounds=10, source=me.id)


@hookimpl(specname="zonekeep_commands")
def bonuses_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "bardic_inspiration",
            _bardic_inspiration,
            "Bonus action: Bardic Inspiration, give another creature within 60 feet your die "
            "for its next attack roll, check or save.",
            {
                "creature": Param("creature", True, "the bard"),
                "target": Param("creature", True, "who is inspired"),
            },
            costs=("bonus",),
            requires=_can_inspire,
        ),
        CommandSpec(
            "sacred_weapon",
            _sacred_weapon,
            "Action: Channel Divinity: Sacred Weapon, your Charisma modifier to your weapon "
            "attack rolls for a minute.",
            {"creature": Param("creature", True, "the paladin")},
            costs=("action",),
            requires=_can_sacred_weapon,
        ),
    )
