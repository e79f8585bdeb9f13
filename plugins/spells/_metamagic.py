"""The sorcerer's Metamagic (SRD 5.1, 3rd level), with the public SDK only.

A creature with the ``metamagic`` trait (``params.options``: the options its sheet
chose) twists one spell per cast with the ``metamagic`` param of ``cast`` or
``cast_bonus``, ``{"option": "<name>"}`` (plus ``target`` for Heightened), spending its
sorcery points: the uses of its ``font-of-magic`` action. Refused, changing nothing,
for an option the sheet did not choose, too few points, or a spell it cannot twist.

- ``quickened`` (2 points): a spell with a casting time of one action, cast with
  ``cast_bonus`` (the bonus-action spell rule then holds as for any bonus-action spell).
- ``twinned`` (the slot level in points, 1 for a cantrip): a spell that can target only
  one creature (not the caster alone) gets a second: ``targets`` names the two.
- ``careful`` (1 point): ``spare`` names up to the Charisma modifier (at least 1) of an
  area spell's targets: they succeed on their saves (damage is then as on a success).
- ``distant`` (1 point): the spell's range doubles (a touch becomes 30 ft).
- ``heightened`` (3 points): ``target`` (one of the spell's targets) has disadvantage
  on its first save against the spell (the ``heightened`` condition, given before the
  spell and taken away after it).
- ``extended`` (1 point): a spell lasting a minute or more lasts twice as long (its
  rounds doubled).
- ``subtle`` (1 point): spent, and nothing else: the rules model no spell components
  (what it hides is the GM's to rule).
- ``empowered`` is the GM's: rerolling dice of the player's choosing after the damage
  roll needs a prompt between the roll and the damage (refused with that reason).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from zonekeep.sdk import (
    ConditionRemoved,
    ConditionSpec,
    Creature,
    FeatureSpec,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    apply_condition,
    hookimpl,
    resource_key,
)

from ._class_features import caster_feature
from .catalog import Spell

__all__ = [
    "HEIGHTENED",
    "METAMAGIC",
    "Twist",
    "metamagic_conditions",
    "metamagic_features",
    "metamagic_roll_modifiers",
    "sorcery_points",
    "twist",
    "untwist",
]

#: The options and their fixed costs (Twinned's is the spell's level).
METAMAGIC: Final[dict[str, int]] = {
    "careful": 1,
    "distant": 1,
    "empowered": 1,
    "extended": 1,
    "heightened": 3,
    "quickened": 2,
    "subtle": 1,
    "twinned": 0,
}
#: The condition of a creature with disadvantage on its next save (Heightened Spell).
HEIGHTENED: Final = "heightened"


@attrs.frozen
class Twist:
    """What Metamagic does to one cast: the spell as twisted, the params' sets to
    resolve it with (two for a twinned one-target spell), careful targets, and the
    heightened target."""

    spell: Spell
    runs: tuple[Mapping[str, Any], ...]
    careful: bool = False
    heightened: str | None = None


def sorcery_points(creature: Creature) -> tuple[str, int] | None:
    """The resource holding ``creature``'s sorcery points and how many are left."""
    font = caster_feature(creature, "font-of-magic")
    if font is None or font.uses is None:
        return None
    key = resource_key(font)
    full = font.uses.count or font.uses.charges or 1
    return key, creature.resources.get(key, full)


def _one_target(spell: Spell, slot: int) -> bool:
    """Whether ``spell`` cast at ``slot`` can target only one creature, not the caster
    alone (Twinned Spell)."""
    if spell.how in ("attack", "darts"):
        return spell.how == "attack" and spell.rays == 1 and spell.id != "eldritch-blast"
    if spell.how in ("save", "heal"):
        return True
    if spell.how in ("condition", "ward"):
        upcast = slot > spell.level and (spell.how == "condition" or spell.targets > 1)
        return spell.targets == 1 and spell.range > 0 and not upcast
    return False


def twist(
    ctx: RuleContext,
    me: Creature,
    spell: Spell,
    slot: int,
    given: object,
    p: Mapping[str, Any],
) -> Twist:
    """Check and pay for the ``metamagic`` param; what it changes (refuses first)."""
    if given is None:
        return Twist(spell, (p,))
    if not isinstance(given, Mapping) or not isinstance(given.get("option"), str):
        ctx.refuse("invalid_params", 'metamagic is {"option": "quickened"} (one option).')
    option = str(given["option"])
    if option not in METAMAGIC:
        ctx.refuse("invalid_params", f"{option[:40]!r} is not a Metamagic option.")
    feature = caster_feature(me, "metamagic")
    chosen = feature.params.get("options") if feature is not None else None
    if feature is None or not isinstance(chosen, list) or option not in chosen:
        ctx.refuse("no_such_feature", f"{me.name} does not know the {option} Metamagic.")
    if set(given) - {"option", "target"} or ("target" in given and option != "heightened"):
        ctx.refuse("invalid_params", "metamagic takes option (and target, for heightened).")
    if option == "empowered":
        ctx.refuse(
            "invalid_params",
            "Empowered Spell is the GM's: rerolling the dice of your choosing after the "
            "damage roll needs a prompt the rules do not have yet.",
        )
    cost = max(1, slot) if option == "twinned" else METAMAGIC[option]
    points = sorcery_points(me)
    if points is None or points[1] < cost:
        have = 0 if points is None else points[1]
        ctx.refuse(
            "no_uses_left",
            f"{option.title()} Spell costs {cost} sorcery points; {me.name} has {have}.",
        )
    twisted = _apply(ctx, me, spell, slot, option, given, p)
    assert points is not None
    ctx.emit(ResourceSpent(me.id, points[0], points[1] - cost))
    return twisted


def retwist(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> Twist:
    """What the ``metamagic`` param of ``p``, checked and paid already by :func:`twist`,
    changes: worked out again when a cast resumes after a Counterspell prompt."""
    given = p.get("metamagic")
    if not isinstance(given, Mapping) or str(given.get("option")) not in METAMAGIC:
        return Twist(spell, (p,))
    return _apply(ctx, me, spell, slot, str(given["option"]), given, p)


def _apply(
    ctx: RuleContext,
    me: Creature,
    spell: Spell,
    slot: int,
    option: str,
    given: Mapping[str, Any],
    p: Mapping[str, Any],
) -> Twist:
    if option == "quickened":
        return Twist(spell, (p,))  # the casting time: the cast command checks it
    if option == "subtle":
        return Twist(spell, (p,))
    if option == "distant":
        if spell.range <= 0:
            ctx.refuse("invalid_params", f"{spell.name}'s range is self: nothing to double.")
        far = 30 if spell.range <= 5 else spell.range * 2
        return Twist(attrs.evolve(spell, range=far), (p,))
    if option == "extended":
        if spell.rounds is None or spell.rounds < 10:
            ctx.refuse(
                "invalid_params",
                f"Extended Spell needs a duration of a minute or more; {spell.name} has none.",
            )
        return Twist(attrs.evolve(spell, rounds=spell.rounds * 2), (p,))
    if option == "careful":
        if spell.how != "area" or spell.save is None:
            ctx.refuse("invalid_params", "Careful Spell shields targets of an area spell's save.")
        return Twist(spell, (p,), careful=True)
    if option == "heightened":
        return _heightened(ctx, spell, given, p)
    return _twinned(ctx, spell, slot, p)


def _heightened(
    ctx: RuleContext, spell: Spell, given: Mapping[str, Any], p: Mapping[str, Any]
) -> Twist:
    if spell.save is None:
        ctx.refuse("invalid_params", f"{spell.name} calls for no saving throw to heighten.")
    targets = [t for t in (p.get("target"), *(p.get("targets") or ())) if t is not None]
    target = given.get("target", targets[0] if len(targets) == 1 else None)
    if not isinstance(target, str) or target not in targets:
        ctx.refuse("invalid_params", "Heightened Spell's target is one of the spell's targets.")
    return Twist(spell, (p,), heightened=target)


def _twinned(ctx: RuleContext, spell: Spell, slot: int, p: Mapping[str, Any]) -> Twist:
    if not _one_target(spell, slot):
        ctx.refuse(
            "invalid_params",
            f"Twinned Spell needs a spell that can target only one creature; {spell.name} "
            + ("at this level " if slot > spell.level else "")
            + "is not one.",
        )
    targets = list(p.get("targets") or ())
    if p.get("target") is not None or len(targets) != 2 or targets[0] == targets[1]:
        ctx.refuse("invalid_params", "Twinned Spell: give its two targets in targets.")
    if spell.how in ("condition", "ward"):
        return Twist(attrs.evolve(spell, targets=2), (p,))
    runs = tuple({**{k: v for k, v in p.items() if k != "targets"}, "target": t} for t in targets)
    return Twist(spell, runs)


def untwist(ctx: RuleContext, twisted: Twist) -> None:
    """After the spell: a heightened target's disadvantage is over (its first save)."""
    cid = twisted.heightened
    if cid is not None and HEIGHTENED in ctx.state.creatures[cid].conditions:
        ctx.emit(ConditionRemoved(cid, HEIGHTENED, "the heightened spell is cast"))


def heighten(ctx: RuleContext, twisted: Twist) -> None:
    """Before the spell: the heightened target gets its disadvantage."""
    if twisted.heightened is not None:
        apply_condition(ctx, twisted.heightened, HEIGHTENED, "heightened-spell")


@hookimpl(specname="zonekeep_roll_modifiers")
def metamagic_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if roll.kind != "save":
        return None
    actor = ctx.state.creatures.get(roll.actor)
    if actor is None or HEIGHTENED not in actor.conditions:
        return None
    return (RollModifier("disadvantage", "heightened spell"),)


@hookimpl(specname="zonekeep_conditions")
def metamagic_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            HEIGHTENED,
            "Heightened Spell: disadvantage on its first saving throw against the spell "
            "being cast (taken away once the spell is cast).",
            durations=("until_removed",),
        ),
    )


@hookimpl(specname="zonekeep_features")
def metamagic_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "metamagic",
            "trait",
            {
                "type": "object",
                "properties": {
                    "options": {
                        "type": "array",
                        "items": {"enum": sorted(METAMAGIC)},
                        "maxItems": 8,
                    }
                },
                "additionalProperties": True,
            },
            doc='The cast\'s metamagic param, {"option": ...}, for sorcery points (the '
            "font-of-magic uses): quickened, twinned, careful, distant, heightened, "
            "extended, subtle (empowered is the GM's); params.options: the sheet's.",
        ),
    )
