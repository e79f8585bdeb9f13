"""The barbarian's, monk's, paladin's and ranger's combat features (SRD 5.1, levels 1 to
5), with the public SDK only. Each hook implementation names its hook with ``specname``
so that this module's hooks sit beside the package's own.

- ``rage`` (bonus action, the ``rage`` command): spends a use and gives the ``raging``
  condition for 10 rounds (a minute). While raging: advantage on Strength checks and
  saves; resistance to bludgeoning, piercing and slashing damage (granted on each
  instance, applied once with the creature's own); the rage damage (``params.damage``,
  else +2, the figure of barbarian levels 1 to 8) added to the damage of a melee
  weapon attack made with Strength (a finesse weapon's when Strength is not the lower
  of Strength and Dexterity), on the hit's own damage, not on its riders. The GM ends a
  rage early (``end_effect_of``) when the barbarian is knocked out or a turn passes
  without it attacking or being damaged; heavy armor and spells are the player's care.
- ``frenzy`` (a berserker's): ``rage`` with ``frenzy: true`` also gives the
  ``frenzied`` condition, which ends with the rage; while frenzied, ``frenzy_attack``
  (bonus action) grants one more attack (a melee weapon attack: the player picks it).
  The level of exhaustion when the frenzy ends is the GM's (exhaustion is not modelled).
- ``reckless-attack`` (the ``reckless_attack`` command, free, on its turn before its
  first attack: its action unspent and no attack granted yet): the ``reckless``
  condition until the start of its next turn; its melee attacks made with Strength
  have advantage during its own turn, and every attack against it has advantage.
- ``danger-sense``: advantage on Dexterity saving throws unless blinded, deafened or
  incapacitated (the rules cannot tell which effects it sees: all of them count).
- ``martial-arts`` (bonus action, the ``martial_arts`` command, once its action is
  spent this turn): one more attack (an unarmed strike: the player picks it); the
  Dexterity and the martial arts die are the sheet's unarmed strike.
- ``ki``: the monk's ki points are the uses of its ``ki`` trait (the monk level, per
  short rest); the ki save DC is 8 + proficiency bonus + Wisdom modifier. Spent by:
- ``flurry-of-blows`` (bonus action, once its action is spent this turn): 1 ki point,
  two more attacks (unarmed strikes: the player picks them).
- ``patient-defense`` (bonus action): 1 ki point, the Dodge action (``dodging``).
- ``step-of-the-wind`` (bonus action): 1 ki point, Dash or Disengage.
- ``stunning-strike`` (the ``stunning_strike`` command, free, declared before the
  attack roll since the rules offer no prompt after a hit): the monk's next melee hit
  this turn spends 1 ki point and the target makes a Constitution save against the ki
  DC or is ``stunned`` until the end of the monk's next turn. The declaration is the
  monk's resource ``stunning-strike`` (1 while declared) and lapses when a turn starts.
- ``lay-on-hands`` (action, the ``lay_on_hands`` command): restores ``amount`` hit
  points to a creature in the paladin's zone (touch; itself included) from the pool:
  its resource ``lay-on-hands``, the sheet's class resource (five times the paladin
  level per long rest; without one, five times the paladin level). The GM's long
  ``rest`` refills the pool the sheet lists as a class resource (without one, the GM
  refills it with an override). Undead and constructs are the GM's to refuse (a roster creature has no
  type).
- ``divine-smite`` (the ``divine_smite`` command, free, declared before the attack roll
  with the ``slot`` level): the paladin's next melee weapon hit this turn spends a spell
  slot of that level and deals 2d8 radiant damage, 1d8 more per slot level above 1st,
  at most 5d8 (doubled on a critical hit). The extra 1d8 against undead and fiends is
  the GM's (a roster creature has no type). The declaration is the paladin's resource
  ``divine-smite`` (the slot level) and lapses when a turn starts.
- ``hunters-prey`` (``params.choice``: ``colossus-slayer``, the default; the other
  choices are the GM's): once per turn, a weapon hit on a creature below its hit point
  maximum deals 1d8 more damage of the attack's type (doubled on a critical hit). Its
  resource ``colossus-slayer`` is 0 once spent and comes back when a turn starts.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DODGING,
    DYING,
    STABLE,
    STUNNED,
    ActionGranted,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    Dashed,
    Disengaged,
    EncounterState,
    FeatureSpec,
    Healed,
    Param,
    Requirement,
    ResourceRestored,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_condition,
    apply_damage,
    apply_timed_condition,
    hookimpl,
    saving_throw,
    spend_use,
)

from ._common import class_level, feature_of, no_uses_left, uses_left, uses_strength
from ._open_hand import mark_flurry

__all__ = [
    "DIVINE_SMITE",
    "FRENZIED",
    "LAY_ON_HANDS",
    "RAGING",
    "RECKLESS",
    "STUNNING_STRIKE",
    "ki_dc",
    "lay_on_hands_pool",
    "warriors_attack_made",
    "warriors_before_attack",
    "warriors_commands",
    "warriors_conditions",
    "warriors_features",
    "warriors_modify_damage",
    "warriors_roll_modifiers",
    "warriors_turn_start",
]

#: The condition of a raging barbarian.
RAGING = "raging"
#: The condition of a berserker raging in a frenzy (it ends with the rage).
FRENZIED = "frenzied"
#: The condition of a barbarian that attacked recklessly this turn.
RECKLESS = "reckless-attack"
#: The resources that hold a declared Stunning Strike (1) and Divine Smite (slot level).
STUNNING_STRIKE = "stunning-strike"
DIVINE_SMITE = "divine-smite"
#: The resource holding what is left of a paladin's Lay on Hands pool.
LAY_ON_HANDS = "lay-on-hands"
#: The resource of a hunter's once-per-turn Colossus Slayer (1 ready, 0 spent).
COLOSSUS_SLAYER = "colossus-slayer"
#: Rage's resisted damage types.
RAGE_RESISTS = ("bludgeoning", "piercing", "slashing")
#: The damage types Divine Smite deals, and its most dice.
SMITE_TYPE = "radiant"
SMITE_MAX_DICE = 5

_NO_PARAMS = {"type": "object", "additionalProperties": True}

#: The attack a raging barbarian is making now, by attacker id: its rage damage goes on
#: the hit's own damage (the first instance of the attack's type), then it is dropped.
#: Set and cleared within one command (before the attack, after it).
_RAGE_PENDING: dict[str, str] = {}


@hookimpl(specname="zonekeep_features")
def warriors_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "rage",
            "action",
            {
                "type": "object",
                "properties": {"damage": {"type": "integer", "minimum": 1, "maximum": 10}},
                "additionalProperties": True,
            },
            doc="The rage command: a bonus action; a minute of advantage on Strength checks "
            "and saves, resistance to bludgeoning, piercing and slashing damage and the rage "
            "damage (params.damage, else +2) on melee weapon attacks made with Strength.",
        ),
        FeatureSpec(
            "frenzy",
            "trait",
            _NO_PARAMS,
            doc="rage with frenzy: true; then frenzy_attack, a bonus-action melee attack on "
            "each of its turns while the rage lasts (the exhaustion after is the GM's).",
        ),
        FeatureSpec(
            "reckless-attack",
            "trait",
            _NO_PARAMS,
            doc="The reckless_attack command: advantage on its melee Strength attacks this "
            "turn; attacks against it have advantage until its next turn.",
        ),
        FeatureSpec(
            "danger-sense",
            "trait",
            _NO_PARAMS,
            doc="Advantage on Dexterity saves unless blinded, deafened or incapacitated.",
        ),
        FeatureSpec(
            "martial-arts",
            "trait",
            _NO_PARAMS,
            doc="The martial_arts command: after its action, one unarmed strike as a bonus action.",
        ),
        FeatureSpec(
            "ki",
            "trait",
            _NO_PARAMS,
            doc="Ki points: the uses of this trait, spent by the monk's ki features; the ki "
            "save DC is 8 + proficiency bonus + Wisdom modifier.",
        ),
        FeatureSpec(
            "flurry-of-blows",
            "action",
            _NO_PARAMS,
            doc="The flurry_of_blows command: 1 ki point, two unarmed strikes as a bonus "
            "action after its action.",
        ),
        FeatureSpec(
            "patient-defense",
            "action",
            _NO_PARAMS,
            doc="The patient_defense command: 1 ki point, Dodge as a bonus action.",
        ),
        FeatureSpec(
            "step-of-the-wind",
            "action",
            _NO_PARAMS,
            doc="The step_of_the_wind command: 1 ki point, Dash or Disengage as a bonus action.",
        ),
        FeatureSpec(
            "stunning-strike",
            "trait",
            _NO_PARAMS,
            doc="The stunning_strike command: its next melee hit this turn spends 1 ki point; "
            "the target saves (Constitution, ki DC) or is stunned until the end of its next "
            "turn.",
        ),
        FeatureSpec(
            "lay-on-hands",
            "action",
            _NO_PARAMS,
            doc="The lay_on_hands command: restore hit points from the pool (the class "
            "resource lay-on-hands, else 5 x paladin level) to a creature in its zone.",
        ),
        FeatureSpec(
            "divine-smite",
            "trait",
            _NO_PARAMS,
            doc="The divine_smite command: its next melee weapon hit this turn spends a spell "
            "slot for 2d8 radiant damage, 1d8 more per slot level above 1st (at most 5d8).",
        ),
        FeatureSpec(
            "hunters-prey",
            "trait",
            {
                "type": "object",
                "properties": {
                    "choice": {"enum": ["colossus-slayer", "giant-killer", "horde-breaker"]}
                },
                "additionalProperties": True,
            },
            doc="Colossus Slayer (params.choice; the default): once per turn, 1d8 more damage "
            "on a weapon hit against a creature below its hit point maximum.",
        ),
    ]


@hookimpl(specname="zonekeep_conditions")
def warriors_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            RAGING,
            "Raging: advantage on Strength checks and saves, resistance to bludgeoning, "
            "piercing and slashing damage, the rage damage on melee Strength attacks.",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            FRENZIED,
            "In a frenzy: one melee weapon attack as a bonus action on each of its turns "
            "(frenzy_attack) while the rage lasts; exhaustion afterwards (the GM's).",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            RECKLESS,
            "Attacked recklessly: its melee Strength attacks this turn have advantage, and "
            "attacks against it have advantage until its next turn.",
        ),
    )


# -- helpers --------------------------------------------------------------------------------


def _has(feature: str, name: str) -> Requirement:
    """A ``requires`` check: the creature has ``feature`` and, with uses, one left."""

    def check(state: EncounterState, me: Creature) -> tuple[str, str] | None:
        found = feature_of(me, feature)
        if found is None:
            return ("no_such_feature", f"{me.name} has no {name}.")
        return no_uses_left(me, found)

    return check


def _ki_check(feature: str, name: str, *, after_action: bool = False) -> Requirement:
    """A ``requires`` check for a ki feature: the feature, 1 ki point and, for those that
    follow the Attack action, the creature's action spent this turn."""

    def check(state: EncounterState, me: Creature) -> tuple[str, str] | None:
        if feature_of(me, feature) is None:
            return ("no_such_feature", f"{me.name} has no {name}.")
        ki = feature_of(me, "ki")
        if ki is None or uses_left(me, ki) < 1:
            return ("no_uses_left", f"{me.name} has no ki point left.")
        if after_action and state.active == me.id and state.resources.actions > 0:
            return ("invalid_params", f"{name} follows the Attack action: attack first.")
        return None

    return check


def _spend_ki(ctx: RuleContext, me: Creature) -> None:
    ki = feature_of(me, "ki")
    assert ki is not None  # (requires)
    spend_use(ctx, me, ki)


def ki_dc(creature: Creature) -> int:
    """The ki save DC: 8 + proficiency bonus + Wisdom modifier."""
    return 8 + creature.proficiency + creature.abilities.get("wis", 0)


def _rage_damage(creature: Creature) -> int:
    feature = feature_of(creature, "rage")
    given = feature.params.get("damage") if feature is not None else None
    return given if isinstance(given, int) and not isinstance(given, bool) else 2


# -- barbarian --------------------------------------------------------------------------------


def _not_raging(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    refusal = _has("rage", "Rage")(state, me)
    if refusal is None and RAGING in me.conditions:
        return ("invalid_params", f"{me.name} is raging already.")
    return refusal


def _rage(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    feature = feature_of(me, "rage")
    assert feature is not None  # (requires)
    frenzy = cmd.params.get("frenzy", False)
    if frenzy and feature_of(me, "frenzy") is None:
        ctx.refuse("no_such_feature", f"{me.name} has no Frenzy.")
    spend_use(ctx, me, feature)
    rage = apply_timed_condition(ctx, me.id, RAGING, rounds=10, source="rage")
    if frenzy and rage is not None:
        apply_timed_condition(ctx, me.id, FRENZIED, rounds=10, source="frenzy", parent=rage)


def _frenzied(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if FRENZIED not in me.conditions:
        return ("invalid_params", f"{me.name} is not in a frenzy (rage with frenzy: true).")
    return None


def _frenzy_attack(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(ActionGranted(cmd.params["creature"], "attack", "frenzy", 1))


def _reckless_ready(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if feature_of(me, "reckless-attack") is None:
        return ("no_such_feature", f"{me.name} has no Reckless Attack.")
    if state.active != me.id or state.resources.actions < 1 or state.resources.attacks:
        return ("invalid_params", "Reckless Attack is decided on the first attack of its turn.")
    if RECKLESS in me.conditions:
        return ("invalid_params", f"{me.name} attacks recklessly already.")
    return None


def _reckless_attack(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    apply_timed_condition(ctx, me.id, RECKLESS, until="start", source="reckless-attack")


@hookimpl(specname="zonekeep_roll_modifiers")
def warriors_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    creatures = ctx.state.creatures
    actor = creatures.get(roll.actor)
    if actor is None:
        return None
    found: list[RollModifier] = []
    if roll.kind in ("check", "save") and roll.ability == "str" and RAGING in actor.conditions:
        found.append(RollModifier("advantage", "rage"))
    if (
        roll.kind == "save"
        and roll.ability == "dex"
        and feature_of(actor, "danger-sense") is not None
        and not {"blinded", "deafened"} & set(actor.conditions)
        and not actor.incapacitated
    ):
        found.append(RollModifier("advantage", "danger-sense"))
    if roll.kind == "attack":
        attack = actor.attack(roll.attack) if roll.attack else None
        if (
            RECKLESS in actor.conditions
            and ctx.state.active == actor.id
            and attack is not None
            and uses_strength(actor, attack)
        ):
            found.append(RollModifier("advantage", "reckless-attack"))
        target = creatures.get(roll.target) if roll.target else None
        if target is not None and RECKLESS in target.conditions:
            found.append(RollModifier("advantage", f"{target.name} attacks recklessly"))
    return found or None


@hookimpl(specname="zonekeep_before_attack")
def warriors_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if RAGING in attacker.conditions and uses_strength(attacker, attack):
        _RAGE_PENDING[attacker.id] = attack.name
    else:
        _RAGE_PENDING.pop(attacker.id, None)


@hookimpl(specname="zonekeep_modify_damage")
def warriors_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    creatures = ctx.state.creatures
    changed = damage
    attacker = creatures.get(damage.attacker) if damage.attacker else None
    if (
        attacker is not None
        and damage.attack is not None
        and _RAGE_PENDING.get(attacker.id) == damage.attack
        and RAGING in attacker.conditions
    ):
        attack = attacker.attack(damage.attack)
        if attack is not None and damage.raw_type == attack.damage_type:
            del _RAGE_PENDING[attacker.id]
            changed = changed.add(_rage_damage(attacker), "rage")
    target = creatures.get(damage.target)
    if target is not None and RAGING in target.conditions and damage.damage_type in RAGE_RESISTS:
        changed = changed.grant("resistance", "rage")
    return None if changed is damage else changed


# -- monk -------------------------------------------------------------------------------------


def _martial_arts(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(ActionGranted(cmd.params["creature"], "attack", "martial-arts", 1))


def _martial_ready(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if feature_of(me, "martial-arts") is None:
        return ("no_such_feature", f"{me.name} has no Martial Arts.")
    if state.active == me.id and state.resources.actions > 0:
        return (
            "invalid_params",
            "The Martial Arts strike follows the Attack action: attack first.",
        )
    return None


def _flurry(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    _spend_ki(ctx, me)
    ctx.emit(ActionGranted(me.id, "attack", "flurry-of-blows", 2))
    mark_flurry(ctx, me, 2)  # Open Hand Technique


def _patient_defense(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    _spend_ki(ctx, me)
    apply_condition(ctx, me.id, DODGING, "patient-defense")


def _step_of_the_wind(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    choice = cmd.params.get("choice")
    if choice not in ("dash", "disengage"):
        ctx.refuse("invalid_params", f"Step of the Wind is dash or disengage, not {choice!r}.")
    _spend_ki(ctx, me)
    ctx.emit(Dashed(me.id) if choice == "dash" else Disengaged(me.id))


def _declare_stunning_strike(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    if me.resources.get(STUNNING_STRIKE, 0) > 0:
        ctx.refuse("invalid_params", f"{me.name}'s Stunning Strike is declared already.")
    ctx.emit(ResourceRestored(me.id, STUNNING_STRIKE, 1, "declared"))


def _stunning_strike(
    ctx: RuleContext, attacker: Creature, target: Creature, result: AttackMade
) -> None:
    ki = feature_of(attacker, "ki")
    if ki is None or uses_left(attacker, ki) < 1:
        return
    ctx.emit(ResourceSpent(attacker.id, STUNNING_STRIKE, 0))
    spend_use(ctx, attacker, ki)
    if target.out_of_fight:
        return
    if not saving_throw(ctx, target, "con", ki_dc(attacker), "stunning-strike", against=(STUNNED,)):
        apply_timed_condition(
            ctx, target.id, STUNNED, until="end", of=attacker.id, source=attacker.id
        )


# -- paladin ----------------------------------------------------------------------------------


def lay_on_hands_pool(creature: Creature) -> int:
    """The hit points left in ``creature``'s Lay on Hands pool: its resource
    ``lay-on-hands`` (the sheet's class resource), else five times its paladin level."""
    return creature.resources.get(LAY_ON_HANDS, 5 * class_level(creature, "paladin"))


def _has_lay_on_hands(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if feature_of(me, "lay-on-hands") is None:
        return ("no_such_feature", f"{me.name} has no Lay on Hands.")
    if lay_on_hands_pool(me) < 1:
        return ("no_uses_left", f"{me.name}'s Lay on Hands pool is empty.")
    return None


def _lay_on_hands(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    amount = cmd.params["amount"]
    left = lay_on_hands_pool(me)
    if not isinstance(amount, int) or isinstance(amount, bool) or not 1 <= amount <= left:
        ctx.refuse("invalid_params", f"'amount' is 1 to the pool's {left} hit points left.")
    if target.id != me.id and (target.zone is None or target.zone != me.zone):
        ctx.refuse("out_of_range", f"Lay on Hands is a touch: {target.name} is not in reach.")
    ctx.emit(ResourceSpent(me.id, LAY_ON_HANDS, left - amount))
    hp = max(target.hp, min(target.max_hp, target.hp + amount))
    ctx.emit(Healed(target.id, amount, hp, me.id))
    for condition in (DYING, STABLE):
        if hp > 0 and condition in target.conditions:
            ctx.emit(ConditionRemoved(target.id, condition, "healed by Lay on Hands"))


def _slots_left(me: Creature, level: int) -> int:
    return me.resources.get(f"spell-slots-{level}", 0)


def _declare_divine_smite(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    slot = cmd.params.get("slot", 1)
    if not isinstance(slot, int) or isinstance(slot, bool) or not 1 <= slot <= 9:
        ctx.refuse("invalid_params", "'slot' is a spell slot level, 1 to 9.")
    if _slots_left(me, slot) < 1:
        ctx.refuse("no_uses_left", f"{me.name} has no spell slot of level {slot} left.")
    if me.resources.get(DIVINE_SMITE, 0) > 0:
        ctx.refuse("invalid_params", f"{me.name}'s Divine Smite is declared already.")
    ctx.emit(ResourceRestored(me.id, DIVINE_SMITE, slot, "declared"))


def _divine_smite(
    ctx: RuleContext, attacker: Creature, target: Creature, result: AttackMade
) -> None:
    slot = attacker.resources.get(DIVINE_SMITE, 0)
    ctx.emit(ResourceSpent(attacker.id, DIVINE_SMITE, 0))
    left = _slots_left(attacker, slot)
    if left < 1:
        return
    ctx.emit(ResourceSpent(attacker.id, f"spell-slots-{slot}", left - 1))
    if target.out_of_fight:
        return
    dice = min(SMITE_MAX_DICE, 1 + slot)
    roll = ctx.roll(f"{dice}d8", double_dice=result.critical)
    apply_damage(
        ctx,
        ctx.state.creatures[target.id],
        roll.total,
        damage_type=SMITE_TYPE,
        roll=roll,
        source=attacker.id,
        attacker=attacker.id,
        attack=result.attack,
        critical=result.critical,
    )


# -- ranger -----------------------------------------------------------------------------------


def _colossus_slayer(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged,
) -> None:
    feature = feature_of(attacker, "hunters-prey")
    if feature is None or feature.params.get("choice", "colossus-slayer") != "colossus-slayer":
        return
    if attacker.resources.get(COLOSSUS_SLAYER, 1) <= 0 or target.out_of_fight:
        return
    before = damage.hp + damage.amount  # its hit points when the attack hit
    if before >= target.max_hp:
        return
    ctx.emit(ResourceSpent(attacker.id, COLOSSUS_SLAYER, 0))
    roll = ctx.roll("1d8", double_dice=result.critical)
    apply_damage(
        ctx,
        target,
        roll.total,
        damage_type=attack.damage_type,
        roll=roll,
        source=attacker.id,
        attacker=attacker.id,
        attack=attack.name,
        critical=result.critical,
    )


# -- hooks --------------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_attack_made")
def warriors_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    _RAGE_PENDING.pop(attacker.id, None)
    if not result.hit:
        return
    if (
        attack.kind == "melee"
        and attacker.resources.get(STUNNING_STRIKE, 0) > 0
        and feature_of(attacker, "stunning-strike") is not None
    ):
        _stunning_strike(
            ctx, ctx.state.creatures[attacker.id], ctx.state.creatures[target.id], result
        )
    if (
        attack.kind == "melee"
        and ctx.state.creatures[attacker.id].resources.get(DIVINE_SMITE, 0) > 0
        and feature_of(attacker, "divine-smite") is not None
    ):
        _divine_smite(ctx, ctx.state.creatures[attacker.id], ctx.state.creatures[target.id], result)
    if damage is not None:
        _colossus_slayer(
            ctx,
            ctx.state.creatures[attacker.id],
            ctx.state.creatures[target.id],
            attack,
            result,
            damage,
        )


@hookimpl(specname="zonekeep_turn_start")
def warriors_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A new turn: declared strikes and smites lapse; Colossus Slayer is ready again."""
    for other in list(ctx.state.creatures.values()):
        for key in (STUNNING_STRIKE, DIVINE_SMITE):
            if other.resources.get(key, 0) > 0:
                ctx.emit(ResourceSpent(other.id, key, 0))
        if other.resources.get(COLOSSUS_SLAYER) == 0 and feature_of(other, "hunters-prey"):
            ctx.emit(ResourceRestored(other.id, COLOSSUS_SLAYER, 1, "turn"))


@hookimpl(specname="zonekeep_commands")
def warriors_commands() -> Iterable[CommandSpec]:
    me = Param("creature", True, "the creature using the feature")
    return (
        CommandSpec(
            "rage",
            _rage,
            "Bonus action: Rage for a minute (uses per long rest); frenzy: a berserker's "
            "frenzy too.",
            {"creature": me, "frenzy": Param("boolean", False, "rage in a frenzy (Frenzy)")},
            costs=("bonus",),
            requires=_not_raging,
        ),
        CommandSpec(
            "frenzy_attack",
            _frenzy_attack,
            "Bonus action: in a frenzy, one melee weapon attack (Frenzy).",
            {"creature": me},
            costs=("bonus",),
            requires=_frenzied,
        ),
        CommandSpec(
            "reckless_attack",
            _reckless_attack,
            "Reckless Attack, before the first attack of the turn: advantage on melee "
            "Strength attacks this turn, attacks against it have advantage until its next turn.",
            {"creature": me},
            costs=("free",),
            requires=_reckless_ready,
        ),
        CommandSpec(
            "martial_arts",
            _martial_arts,
            "Bonus action: after the Attack action, one unarmed strike (Martial Arts).",
            {"creature": me},
            costs=("bonus",),
            requires=_martial_ready,
        ),
        CommandSpec(
            "flurry_of_blows",
            _flurry,
            "Bonus action: after the Attack action, 1 ki point for two unarmed strikes.",
            {"creature": me},
            costs=("bonus",),
            requires=_ki_check("flurry-of-blows", "Flurry of Blows", after_action=True),
        ),
        CommandSpec(
            "patient_defense",
            _patient_defense,
            "Bonus action: 1 ki point, the Dodge action.",
            {"creature": me},
            costs=("bonus",),
            requires=_ki_check("patient-defense", "Patient Defense"),
        ),
        CommandSpec(
            "step_of_the_wind",
            _step_of_the_wind,
            "Bonus action: 1 ki point, Dash or Disengage.",
            {"creature": me, "choice": Param("string", True, "dash or disengage")},
            costs=("bonus",),
            requires=_ki_check("step-of-the-wind", "Step of the Wind"),
        ),
        CommandSpec(
            "stunning_strike",
            _declare_stunning_strike,
            "Stunning Strike: the next melee hit this turn spends 1 ki point; the target "
            "saves (Constitution) or is stunned until the end of the monk's next turn.",
            {"creature": me},
            costs=("free",),
            requires=_ki_check("stunning-strike", "Stunning Strike"),
        ),
        CommandSpec(
            "lay_on_hands",
            _lay_on_hands,
            "Action: Lay on Hands, restore hit points from the pool to a creature in reach.",
            {
                "creature": me,
                "target": Param("creature", True, "the creature healed (itself included)"),
                "amount": Param("integer", True, "hit points, from the pool"),
            },
            costs=("action",),
            requires=_has_lay_on_hands,
        ),
        CommandSpec(
            "divine_smite",
            _declare_divine_smite,
            "Divine Smite: the next melee weapon hit this turn spends a spell slot of 'slot' "
            "level for 2d8 radiant damage, +1d8 per level above 1st (at most 5d8).",
            {"creature": me, "slot": Param("integer", False, "the slot level (default 1)")},
            costs=("free",),
            requires=_has("divine-smite", "Divine Smite"),
        ),
    )
