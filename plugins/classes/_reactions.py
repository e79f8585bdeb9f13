"""The class reactions to an attack, offered as prompts (SRD 5.1, levels 1 to 5), with
the public SDK only: ``zonekeep_attack_reactions`` offers them, the controller answers,
``zonekeep_reaction_taken`` carries them out (docs/writing-plugins.md, "Reactions").

- ``uncanny-dodge`` (rogue 5): when an attack it can see hits it (a critical hit too),
  at the ``damage`` moment, before the damage is rolled: its reaction halves the
  attack's damage against it (rounded down, a ``reduce`` step of the damage, before its
  resistances). "Can see": it is not blinded and the attacker is not invisible.
- ``deflect-missiles`` (monk 3): when a ranged attack hits it (a critical hit too; the
  spells plugin's spell attacks prompt nothing), at the ``damage`` moment: its reaction
  reduces the damage by 1d10 + its Dexterity modifier + its monk level. Catching the
  missile and throwing it back with a ki point is the GM's.
- ``cutting-words`` (bard, College of Lore 3): when a creature it can see within 60 feet
  (``path_distance`` between their zones, with line of sight) makes an attack roll that
  would hit (the ``hit`` moment: after the roll, before the outcome): its reaction spends
  a use of its ``bardic-inspiration`` and subtracts its Bardic Inspiration die (the bard
  level's: d6, d8 at 5th; a stat block's ``params.die``) from the roll. A creature that
  cannot hear (deafened) or is immune to being charmed is not offered. Its use against
  an ability check or a damage roll is the GM's.
- the Protection fighting style (``_bonuses.py`` says the styles): when an attacker it
  can see targets another creature adjacent to it, at the ``targeted`` moment, its
  reaction gives the attack roll disadvantage.

The hook runs for every attack, three times: it looks for the features with plain loops
before anything costlier (the cost gate counts every call).
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    ActionTaken,
    Attack,
    Creature,
    Decision,
    FeatureSpec,
    ReactionOffer,
    ReactionOutcome,
    RuleContext,
    hookimpl,
    path_distance,
    spend_use,
)

from ._common import class_level, feature_of, uses_left

__all__ = [
    "CUTTING_WORDS",
    "DEFLECT_MISSILES",
    "PROTECTION",
    "UNCANNY_DODGE",
    "bardic_die",
    "fighting_styles",
    "has_style",
    "reactions_attack",
    "reactions_features",
    "reactions_taken",
]

UNCANNY_DODGE = "uncanny-dodge"
DEFLECT_MISSILES = "deflect-missiles"
CUTTING_WORDS = "cutting-words"
#: The feature whose uses Cutting Words spends.
BARDIC_INSPIRATION = "bardic-inspiration"
#: The reaction decision of the Protection fighting style.
PROTECTION = "protection"
#: How far a bard's Cutting Words reaches, in feet.
CUTTING_WORDS_RANGE = 60

_NO_PARAMS = {"type": "object", "additionalProperties": True}
_DIE = {
    "type": "object",
    "properties": {"die": {"enum": ["d6", "d8", "d10", "d12"]}},
    "additionalProperties": True,
}


def bardic_die(creature: Creature) -> str:
    """``creature``'s Bardic Inspiration die: d6, d8 from bard level 5 (d10 at 10th,
    d12 at 15th); without bard levels its ``bardic-inspiration`` feature's
    ``params.die``, else d6."""
    level = class_level(creature, "bard")
    if level:
        return "d12" if level >= 15 else "d10" if level >= 10 else "d8" if level >= 5 else "d6"
    feature = feature_of(creature, BARDIC_INSPIRATION)
    die = feature.params.get("die") if feature is not None else None
    return die if die in ("d6", "d8", "d10", "d12") else "d6"


@hookimpl(specname="zonekeep_features")
def reactions_features() -> Iterable[FeatureSpec]:
    specs = []
    for place in ("action", "trait"):  # a reaction; a sheet may list it with its traits
        specs += [
            FeatureSpec(
                UNCANNY_DODGE,
                place,
                _NO_PARAMS,
                doc="Offered when an attack it can see hits it: its reaction halves the damage.",
            ),
            FeatureSpec(
                DEFLECT_MISSILES,
                place,
                _NO_PARAMS,
                doc="Offered when a ranged attack hits it: its reaction reduces the damage by "
                "1d10 + Dexterity modifier + monk level.",
            ),
            FeatureSpec(
                CUTTING_WORDS,
                place,
                _DIE,
                doc="Offered when a creature it sees within 60 feet would hit with an attack "
                "roll: its reaction spends a Bardic Inspiration use and takes its die off the "
                "roll.",
            ),
        ]
    return specs


def fighting_styles(creature: Creature) -> set[str]:
    """The fighting styles ``creature``'s traits name (``fighting-style`` with
    ``params.style``, or ``fighting-style-<style>``)."""
    found = set()
    for trait in creature.traits:
        if trait.gm is not None:
            continue
        name = trait.id.removeprefix("zonekeep.classes.")
        if name == "fighting-style":
            style = trait.params.get("style")
            if isinstance(style, str):
                found.add(style.lower().replace(" ", "-"))
        elif name.startswith("fighting-style-"):
            found.add(name.removeprefix("fighting-style-"))
    return found


def has_style(creature: Creature, style: str) -> bool:
    """Whether ``creature`` has fighting style ``style``: a plain loop first, the rest
    only for a creature with a fighting style."""
    for trait in creature.traits:
        if "fighting-style" in trait.id:
            return style in fighting_styles(creature)
    return False


def _has(creature: Creature, feature: str) -> bool:
    """Whether ``creature`` lists ``feature`` (a plain loop: no call per item)."""
    namespaced = "zonekeep.classes." + feature
    for item in creature.actions:
        if item.id == feature or item.id == namespaced:
            return True
    for trait in creature.traits:  # noqa: SIM110  (a loop makes no call per item)
        if trait.id == feature or trait.id == namespaced:
            return True
    return False


def _sees(me: Creature, other: Creature) -> bool:
    return "blinded" not in me.conditions and "invisible" not in other.conditions


def _able(ctx: RuleContext, me: Creature) -> bool:
    return ctx.state.has_reaction(me.id) and not me.incapacitated and not me.out_of_fight


def _cutting_words_offers(
    ctx: RuleContext, attacker: Creature, total: int | None, ac: int | None
) -> list[ReactionOffer]:
    offers = []
    for bard in ctx.state.creatures.values():
        for item in bard.actions:
            if item.id == CUTTING_WORDS or item.id == "zonekeep.classes." + CUTTING_WORDS:
                break
        else:
            continue  # the common case: no Cutting Words, no call made
        feature = feature_of(bard, BARDIC_INSPIRATION)
        if (
            bard.id == attacker.id
            or feature_of(bard, CUTTING_WORDS) is None
            or feature is None
            or "deafened" in attacker.conditions
            or "charmed" in attacker.condition_immunities
            or not ctx.is_enemy(bard, attacker)
            or not _able(ctx, bard)
            or not _sees(bard, attacker)
            or (feature.uses is not None and uses_left(bard, feature) <= 0)
            or bard.zone is None
            or attacker.zone is None
        ):
            continue
        distance = path_distance(ctx.state.arena, bard.zone, attacker.zone)
        if distance is None or distance > CUTTING_WORDS_RANGE:
            continue
        offers.append(
            ReactionOffer(
                bard.id,
                CUTTING_WORDS,
                f"{attacker.name}'s attack roll is {total} against AC {ac}: it would hit. "
                f"Cutting Words (reaction, a Bardic Inspiration use): take "
                f"{bardic_die(bard)} off the roll?",
                (CUTTING_WORDS,),
            )
        )
    return offers


def _protection_offers(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> list[ReactionOffer]:
    offers = []
    for cid in ctx.state.adjacent_to(target.id):
        me = ctx.state.creatures.get(cid)
        if (
            me is None
            or me.id == attacker.id
            or not has_style(me, PROTECTION)
            or not _able(ctx, me)
            or not _sees(me, attacker)
        ):
            continue
        offers.append(
            ReactionOffer(
                me.id,
                PROTECTION,
                f"{attacker.name} attacks {target.name}, beside {me.name}, with "
                f"{attack.name}. Protection (reaction, with a shield): give the attack roll "
                "disadvantage?",
                (PROTECTION,),
            )
        )
    return offers


@hookimpl(specname="zonekeep_attack_reactions")
def reactions_attack(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    moment: str,
    total: int | None,
    ac: int | None,
) -> Iterable[ReactionOffer] | None:
    if moment == "targeted":
        return _protection_offers(ctx, attacker, target, attack) if ctx.state.adjacent else None
    if moment == "hit":
        return _cutting_words_offers(ctx, attacker, total, ac) or None
    if moment != "damage":
        return None
    if _has(target, UNCANNY_DODGE):
        if feature_of(target, UNCANNY_DODGE) is None or not _sees(target, attacker):
            return None
        kind, text = UNCANNY_DODGE, "Uncanny Dodge (reaction): halve its damage?"
    elif attack.kind == "ranged" and _has(target, DEFLECT_MISSILES):
        if feature_of(target, DEFLECT_MISSILES) is None:
            return None
        kind = DEFLECT_MISSILES
        text = (
            f"Deflect Missiles (reaction): reduce its damage by 1d10 + "
            f"{target.abilities.get('dex', 0)} + {class_level(target, 'monk')}?"
        )
    else:
        return None
    if not _able(ctx, target):
        return None
    return (
        ReactionOffer(
            target.id,
            kind,
            f"{attacker.name}'s {attack.name} hits {target.name}. {text}",
            (kind,),
        ),
    )


_KINDS = (UNCANNY_DODGE, DEFLECT_MISSILES, CUTTING_WORDS, PROTECTION)


@hookimpl(specname="zonekeep_reaction_taken")
def reactions_taken(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...]
) -> ReactionOutcome | None:
    kind = decision.kind
    if kind not in _KINDS or choice[:1] != (kind,):
        return None
    me = ctx.state.creatures.get(decision.creature or "")
    if me is None or me.incapacitated or me.out_of_fight or not ctx.state.has_reaction(me.id):
        return None  # it can no longer react: the attack goes on as it was
    if kind == PROTECTION:
        ctx.emit(ActionTaken(me.id, kind, "reaction"))
        return ReactionOutcome(disadvantage=True)
    if kind == CUTTING_WORDS:
        feature = feature_of(me, BARDIC_INSPIRATION)
        if feature is None or (feature.uses is not None and uses_left(me, feature) <= 0):
            return None  # its last use went since the prompt
        words = ctx.roll(bardic_die(me))
        ctx.emit(ActionTaken(me.id, kind, "reaction", roll=words))  # the die is in the log
        spend_use(ctx, me, feature)
        return ReactionOutcome(roll_penalty=words.total)
    if kind == UNCANNY_DODGE:
        ctx.emit(ActionTaken(me.id, kind, "reaction"))
        return ReactionOutcome(halve_damage=True)
    level = class_level(me, "monk")
    roll = ctx.roll("1d10", bonus=me.abilities.get("dex", 0) + level)
    ctx.emit(ActionTaken(me.id, kind, "reaction", roll=roll))
    return ReactionOutcome(damage_reduction=max(0, roll.total))
