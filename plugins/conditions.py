"""What the common conditions do to rolls, saves, movement and attacks.

The rules texts use these conditions without defining them; zonekeep gives them
their familiar (SRD 5.1) effects, mapping "within 5 feet" to the zones' engagement
(the rulings are silent; docs/rules.md, "Conditions", says each choice):

- ``restrained``: speed 0 (no moving, entering, standing, taking positions);
  its attack rolls and Dexterity saves have disadvantage; attack rolls against it
  have advantage.
- ``grappled``: speed 0.
- ``prone``: its attack rolls have disadvantage; attack rolls against it have
  advantage from an attacker within 5 feet (engaged with it, or a melee attack from
  its zone), disadvantage otherwise.
- ``poisoned``: disadvantage on attack rolls and ability checks (initiative and a
  Tumble are checks).
- ``frightened``: disadvantage on attack rolls and ability checks while a source of
  its fear is in line of sight (always, when no source creature is known); on its
  own turn it cannot enter a zone a source is in (``frightened``).
- ``blinded``: its attack rolls have disadvantage, attack rolls against it advantage;
  it cannot make opportunity attacks (they need a creature it can see).
- ``invisible``: its attack rolls have advantage, attack rolls against it
  disadvantage.
- ``incapacitated``: cannot move, act or react (as before).
- ``stunned``, ``paralyzed``: incapacitated; fail Strength and Dexterity saves;
  attack rolls against them have advantage. A hit on a paralyzed creature from
  within 5 feet is a critical hit (``zonekeep.combat``).
- ``unconscious``: as paralyzed, and it falls prone when it becomes unconscious.

A creature's ``condition_immunities`` keep it from ever getting one
(``zonekeep.sdk.apply_condition``). Any other condition is a label the GM reads and
rules on. This plugin declares (``zonekeep_conditions``) every condition the built-in
rules give a meaning to, so that a third-party plugin declaring one of them again is
refused at start.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DEFEATED,
    DODGING,
    DYING,
    ESCAPED,
    INCAPACITATED,
    OPPORTUNITY_ATTACK,
    PARALYZED,
    PRONE,
    SQUEEZING,
    STABLE,
    STUNNED,
    SURRENDERED,
    UNCONSCIOUS,
    CommandSpec,
    ConditionSpec,
    Creature,
    Refusal,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_condition,
    hookimpl,
    line_of_sight,
)

RESTRAINED = "restrained"
GRAPPLED = "grappled"
POISONED = "poisoned"
FRIGHTENED = "frightened"
BLINDED = "blinded"
INVISIBLE = "invisible"
_SPEED_ZERO = (RESTRAINED, GRAPPLED)
#: Conditions that make a creature fail Strength and Dexterity saves.
_FAIL_STR_DEX = (STUNNED, PARALYZED, UNCONSCIOUS, DYING, STABLE)
#: Conditions that give attack rolls against the creature advantage. A creature at 0 hit
#: points, dying or stable, is unconscious (docs/rules.md, "Conditions").
_ATTACKED_WITH_ADVANTAGE = (RESTRAINED, BLINDED, STUNNED, PARALYZED, UNCONSCIOUS, DYING, STABLE)
#: Conditions that give the creature's own attack rolls disadvantage.
_ATTACKS_WITH_DISADVANTAGE = (RESTRAINED, PRONE, POISONED, BLINDED)

_ALL = ("rounds", "turn_start", "turn_end", "save", "until_removed")
_PLAIN = ("until_removed",)


def _spec(
    cid: str, summary: str, description: str, durations: tuple[str, ...] = _ALL
) -> ConditionSpec:
    return ConditionSpec(cid, summary, description=description, durations=durations)


#: The conditions the built-in rules give a meaning to, and where (docs/rules.md).
BUILT_IN_CONDITIONS: tuple[ConditionSpec, ...] = (
    _spec(
        PRONE,
        "Crawls; its attacks have disadvantage; attacked with advantage from within 5 ft.",
        "It can only crawl, and standing up costs half its speed. Its attack rolls have "
        "disadvantage. Attack rolls against it have advantage from a creature engaged with "
        "it (or a melee attack from its zone), and disadvantage otherwise.",
    ),
    _spec(
        RESTRAINED,
        "Speed 0; disadvantage on attacks and Dex saves; attacked with advantage.",
        "Its speed is 0. Its attack rolls and Dexterity saving throws have disadvantage; "
        "attack rolls against it have advantage.",
    ),
    _spec(GRAPPLED, "Speed 0.", "Its speed is 0: it cannot move, enter or take positions."),
    _spec(
        POISONED,
        "Disadvantage on attack rolls and ability checks.",
        "Its attack rolls and ability checks (initiative and Tumbles included) have disadvantage.",
    ),
    _spec(
        FRIGHTENED,
        "Disadvantage on attacks and checks while its fear's source is in sight.",
        "While a source of its fear (the creature named as the source of the effect) is in "
        "line of sight, its attack rolls and ability checks have disadvantage; with no "
        "source creature known, always. On its own turn it cannot enter a zone a source "
        "is in.",
    ),
    _spec(
        BLINDED,
        "Its attacks have disadvantage; attacked with advantage; no opportunity attacks.",
        "Its attack rolls have disadvantage and attack rolls against it have advantage. It "
        "cannot make opportunity attacks (they need a creature it can see); other "
        "sight-based checks are the GM's to fail.",
    ),
    _spec(
        INVISIBLE,
        "Its attacks have advantage; attacks against it have disadvantage.",
        "Its attack rolls have advantage and attack rolls against it have disadvantage.",
    ),
    _spec(SQUEEZING, "Disadvantage on attacks and Dex saves; attacked with advantage.", "", _PLAIN),
    _spec(DODGING, "Attacks against it have disadvantage until its next turn starts.", "", _PLAIN),
    _spec(
        DYING,
        "A PC at 0 hit points: incapacitated, keeps the encounter going.",
        "A PC at 0 hit points, unconscious until stabilized or healed: it cannot move, "
        "act, react or speak; "
        "fails Strength and Dexterity saves; attack rolls against it have advantage, and "
        "a hit from within 5 ft is a critical hit. It keeps the encounter going.",
        _PLAIN,
    ),
    _spec(
        STABLE,
        "A PC at 0 hit points, stabilized: unconscious, no longer keeps the encounter going.",
        "A PC at 0 hit points who no longer makes the encounter wait, unconscious until "
        "healed: as dying, it cannot move, act, react or speak, fails Strength and "
        "Dexterity saves, attack rolls against it have advantage and a hit from within "
        "5 ft is a critical hit.",
        _PLAIN,
    ),
    _spec(DEFEATED, "Out of the fight: its turns are skipped.", "", _PLAIN),
    _spec(SURRENDERED, "Out of the fight: it gave up.", "", _PLAIN),
    _spec(ESCAPED, "Out of the fight: it left the encounter.", "", _PLAIN),
    _spec(INCAPACITATED, "Cannot move, act or react.", "It cannot move, act or react."),
    _spec(
        STUNNED,
        "Incapacitated; fails Str and Dex saves; attacked with advantage.",
        "It cannot move, act or react; it fails Strength and Dexterity saving throws; "
        "attack rolls against it have advantage.",
    ),
    _spec(
        PARALYZED,
        "As stunned; a hit from within 5 ft is a critical hit.",
        "It cannot move, act or react; it fails Strength and Dexterity saving throws; "
        "attack rolls against it have advantage, and a hit from within 5 ft (a melee "
        "attack from its zone, or an attacker engaged with it) is a critical hit.",
    ),
    _spec(
        UNCONSCIOUS,
        "As paralyzed, and it falls prone.",
        "As paralyzed; it falls prone when it becomes unconscious (it holds nothing the "
        "rules track to drop).",
    ),
)


@hookimpl
def zonekeep_conditions() -> Iterable[ConditionSpec]:
    return BUILT_IN_CONDITIONS


@hookimpl
def zonekeep_action_refusal(
    ctx: RuleContext, creature: Creature, spec: CommandSpec
) -> Refusal | None:
    if spec.id == OPPORTUNITY_ATTACK and BLINDED in creature.conditions:
        return Refusal("blinded", f"{creature.name} is blinded: it cannot see to react.")
    if "movement" not in spec.costs:
        return None
    held = next((c for c in _SPEED_ZERO if c in creature.conditions), None)
    if held is None:
        return None
    return Refusal("speed_zero", f"{creature.name} is {held}: its speed is 0.")


def fear_sources(ctx: RuleContext, creature: Creature) -> list[str]:
    """The creatures ``creature`` is frightened of: the sources, when they are creatures
    of the encounter, of the condition effects that make it frightened."""
    s = ctx.state
    return sorted(
        {
            e.source
            for e in s.condition_effects.values()
            if e.creature == creature.id and e.condition == FRIGHTENED and e.source in s.creatures
        }
    )


def _fear_in_sight(ctx: RuleContext, creature: Creature) -> bool:
    if FRIGHTENED not in creature.conditions:
        return False
    sources = fear_sources(ctx, creature)
    if not sources:
        return True
    s = ctx.state
    here = creature.zone
    for sid in sources:
        there = s.creatures[sid].zone
        if here is None or there is None or here == there:
            return True
        arena = s.arena
        if arena.has_zone(here) and arena.has_zone(there) and line_of_sight(arena, here, there):
            return True
    return False


def within_five_feet(
    ctx: RuleContext, attacker: Creature, target: Creature, kind: str | None
) -> bool:
    """The zones' "within 5 feet" of an attack: the attacker is engaged with the target,
    or it makes a melee attack from the target's zone."""
    if kind == "melee" and attacker.zone == target.zone:
        return True
    return attacker.id in ctx.state.engaged_with(target.id)


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier]:
    found: list[RollModifier] = []
    actor = ctx.state.creatures.get(roll.actor)
    target = ctx.state.creatures.get(roll.target) if roll.target else None
    if actor is not None:
        held = actor.conditions
        if roll.kind == "attack":
            found += [
                RollModifier("disadvantage", c) for c in _ATTACKS_WITH_DISADVANTAGE if c in held
            ]
            if INVISIBLE in held:
                found.append(RollModifier("advantage", INVISIBLE))
        if roll.kind == "save" and roll.ability == "dex" and RESTRAINED in held:
            found.append(RollModifier("disadvantage", RESTRAINED))
        if roll.kind in ("check", "initiative") and POISONED in held:
            found.append(RollModifier("disadvantage", POISONED))
        if roll.kind in ("attack", "check", "initiative") and _fear_in_sight(ctx, actor):
            found.append(RollModifier("disadvantage", FRIGHTENED))
    if roll.kind == "attack" and target is not None:
        held = target.conditions
        found += [
            RollModifier("advantage", f"target {c}") for c in _ATTACKED_WITH_ADVANTAGE if c in held
        ]
        if INVISIBLE in held:
            found.append(RollModifier("disadvantage", f"target {INVISIBLE}"))
        if PRONE in held and actor is not None:
            if within_five_feet(ctx, actor, target, roll.attack_kind):
                found.append(RollModifier("advantage", "target prone"))
            else:
                found.append(RollModifier("disadvantage", "target prone"))
    return found


@hookimpl
def zonekeep_save_fails(ctx: RuleContext, creature: Creature, ability: str) -> str | None:
    if ability not in ("str", "dex"):
        return None
    return next((c for c in _FAIL_STR_DEX if c in creature.conditions), None)


@hookimpl
def zonekeep_zone_refusal(ctx: RuleContext, creature: Creature, zone: str) -> Refusal | None:
    """A frightened creature cannot willingly move closer to its fear: on its own turn it
    cannot come into a zone a source of its fear is in."""
    if FRIGHTENED not in creature.conditions or ctx.state.active != creature.id:
        return None
    s = ctx.state
    near = [sid for sid in fear_sources(ctx, creature) if s.creatures[sid].zone == zone]
    if not near:
        return None
    return Refusal(
        "frightened",
        f"{creature.name} is frightened of {s.creatures[near[0]].name} and will not go "
        "closer to it.",
    )


@hookimpl
def zonekeep_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """An unconscious creature falls prone."""
    if condition == UNCONSCIOUS and PRONE not in creature.conditions:
        apply_condition(ctx, creature.id, PRONE, "fell unconscious")
