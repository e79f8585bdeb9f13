"""Ability checks, contests and feature uses as first-class rules actions.

- :func:`check_bonus` is a creature's bonus to a check: the bonus its sheet lists for
  the skill, else its ability modifier, plus its proficiency bonus when ``proficient``
  (twice with ``expertise``). :func:`save_bonus` is its saving throw bonus.
- :func:`ability_check` rolls one check (or, with ``save=True``, a saving throw) through
  the plugins' roll modifiers and emits ``check_rolled``; :func:`contest` rolls two
  checks against each other and emits ``contest_rolled`` (a shove, a grapple's escape).
- :func:`spend_use`, :func:`restore_uses` and :func:`roll_recharge` keep the live counts
  of features with ``uses`` (a breath weapon's recharge, charges, uses per day) in the
  creature's ``resources``, with an event each.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from ._context import RollModifier, RollRequest
from ._events import CheckRolled, ContestRolled, RechargeRolled, ResourceRestored, ResourceSpent
from ._features import Action, Trait, resource_key, uses_max
from ._vocabulary import ABILITIES

if TYPE_CHECKING:
    from ._context import RuleContext
    from ._types import Creature

__all__ = [
    "SKILLS",
    "ability_check",
    "check_bonus",
    "contest",
    "restore_uses",
    "roll_recharge",
    "save_bonus",
    "spend_use",
]

#: The skills of the SRD 5.1 and the ability each is a check of.
SKILLS: Final[dict[str, str]] = {
    "acrobatics": "dex",
    "animal_handling": "wis",
    "arcana": "int",
    "athletics": "str",
    "deception": "cha",
    "history": "int",
    "insight": "wis",
    "intimidation": "cha",
    "investigation": "int",
    "medicine": "wis",
    "nature": "int",
    "perception": "wis",
    "performance": "cha",
    "persuasion": "cha",
    "religion": "int",
    "sleight_of_hand": "dex",
    "stealth": "dex",
    "survival": "wis",
}


def _ability_modifier(creature: Creature, ability: str) -> int:
    if ability in creature.abilities:
        return creature.abilities[ability]
    if ability == "dex":
        return creature.dex_mod
    # A creature spelled out without abilities: its save is the best guess there is.
    return creature.saves.get(ability, 0)


def check_bonus(
    creature: Creature,
    ability: str,
    skill: str | None = None,
    *,
    proficient: bool = False,
    expertise: bool = False,
) -> int:
    """``creature``'s bonus to an ``ability`` check (with ``skill``): the bonus its sheet
    lists for the skill (proficiency already in it), else its ability modifier plus its
    proficiency bonus when ``proficient`` (twice with ``expertise``)."""
    if skill is not None and skill in creature.skills:
        return creature.skills[skill]
    bonus = _ability_modifier(creature, ability)
    if proficient or expertise:
        bonus += creature.proficiency * (2 if expertise else 1)
    return bonus


def save_bonus(creature: Creature, ability: str) -> int:
    """``creature``'s saving throw bonus with ``ability``: the listed one, else its
    ability modifier."""
    if ability in creature.saves:
        return creature.saves[ability]
    return _ability_modifier(creature, ability)


def ability_check(
    ctx: RuleContext,
    creature: Creature,
    ability: str,
    skill: str | None = None,
    dc: int | None = None,
    *,
    save: bool = False,
    source: str = "",
    proficient: bool = False,
    expertise: bool = False,
    extra: Iterable[RollModifier] = (),
    against: tuple[str, ...] = (),
    magical: bool = False,
) -> CheckRolled:
    """Roll ``creature``'s ``ability`` check (with ``skill``) or, with ``save``, its
    saving throw, against ``dc`` (``None``: no DC, the total is what matters), through
    the plugins' roll modifiers (``RollRequest("check" | "save", ...)``); emit and return
    the ``check_rolled`` event. A save's ``against`` and ``magical`` are as
    :func:`saving_throw`'s. A save a plugin says fails whatever the roll
    (``zonekeep_save_fails``) is rolled for the record and fails."""
    if ability not in ABILITIES:
        raise ValueError(f"{ability!r} is not an ability ({', '.join(ABILITIES)})")
    if save:
        request = RollRequest(
            "save", creature.id, ability=ability, against=against, magical=magical
        )
        bonus = save_bonus(creature, ability)
    else:
        request = RollRequest("check", creature.id, ability=ability, skill=skill)
        bonus = check_bonus(creature, ability, skill, proficient=proficient, expertise=expertise)
    result = ctx.roll("d20", request, bonus=bonus, extra=tuple(extra))
    fails = ""
    if save:
        fails = ctx.hook.zonekeep_save_fails(ctx=ctx, creature=creature, ability=ability) or ""
    success = None if dc is None else (not fails and result.total >= dc)
    event = CheckRolled(
        creature.id,
        ability,
        result,
        skill=None if save else skill,
        dc=dc,
        success=success,
        save=save,
        source=source,
        automatic_failure=fails,
    )
    ctx.emit(event)
    return event


def contest(
    ctx: RuleContext,
    creature: Creature,
    target: Creature,
    skill: str,
    target_skills: Iterable[str],
) -> ContestRolled:
    """An ability contest: ``creature``'s ``skill`` check against ``target``'s best of
    ``target_skills`` (by bonus; the first on a tie); emit and return ``contest_rolled``
    (``won``: strictly higher)."""
    options = list(target_skills)
    if not options:
        raise ValueError("a contest needs at least one skill for the target")
    best = max(
        options, key=lambda k: (check_bonus(target, SKILLS.get(k, "str"), k), -options.index(k))
    )
    mine = ctx.roll(
        "d20",
        RollRequest("check", creature.id, ability=SKILLS.get(skill, "str"), skill=skill),
        bonus=check_bonus(creature, SKILLS.get(skill, "str"), skill),
    )
    ability = SKILLS.get(best, "str")
    theirs = ctx.roll(
        "d20",
        RollRequest("check", target.id, ability=ability, skill=best),
        bonus=check_bonus(target, ability, best),
    )
    event = ContestRolled(
        creature.id, target.id, skill, mine, best, theirs, mine.total > theirs.total
    )
    ctx.emit(event)
    return event


# -- uses ----------------------------------------------------------------------------------------


def spend_use(ctx: RuleContext, creature: Creature, feature: Trait | Action) -> int:
    """Spend one use of ``feature`` (which has ``uses``): emit ``resource_spent``; return
    the uses left. Refuses ``no_uses_left`` when none is left; a feature without
    ``uses`` costs nothing (returns -1)."""
    if feature.uses is None:
        return -1
    key = resource_key(feature)
    left = creature.resources.get(key, uses_max(feature.uses))
    if left <= 0:
        how = (
            f"it recharges on a d6 roll of {feature.uses.recharge} or more at the start of its turn"
            if feature.uses.recharge is not None
            else "a rest or the GM restores it"
        )
        ctx.refuse("no_uses_left", f"{creature.name} has no use of {feature.name} left ({how}).")
    ctx.emit(ResourceSpent(creature.id, key, left - 1))
    return left - 1


def restore_uses(
    ctx: RuleContext, creature: Creature, periods: Iterable[str], reason: str
) -> list[str]:
    """Give back every use of ``creature``'s features whose ``uses`` period is one of
    ``periods`` (``"turn"``, ``"round"``, ``"short_rest"``, ``"long_rest"``, ``"day"``,
    ``"charges"``, ``"recharge"``) and that has fewer than its full count: one
    ``resource_restored`` each, with ``reason``. Returns the resource keys restored."""
    wanted = set(periods)
    done = []
    features: tuple[Trait | Action, ...] = (*creature.traits, *creature.actions)
    for feature in features:
        uses = feature.uses
        if uses is None:
            continue
        period = (
            "recharge"
            if uses.recharge is not None
            else "charges"
            if uses.charges is not None
            else uses.per
        )
        key = resource_key(feature)
        full = uses_max(uses)
        if period in wanted and creature.resources.get(key, full) < full:
            ctx.emit(ResourceRestored(creature.id, key, full, reason))
            done.append(key)
    return done


def roll_recharge(ctx: RuleContext, creature: Creature) -> list[RechargeRolled]:
    """Roll a d6 for each spent feature of ``creature`` that recharges (``{"recharge":
    5}``): ``recharge_rolled``, its use back on a roll of at least the number. The
    rules call it at the start of the creature's turn."""
    found = []
    features: tuple[Trait | Action, ...] = (*creature.traits, *creature.actions)
    for feature in features:
        uses = feature.uses
        if uses is None or uses.recharge is None:
            continue
        key = resource_key(feature)
        if creature.resources.get(key, 1) > 0:
            continue
        result = ctx.roll("d6")
        event = RechargeRolled(
            creature.id, key, result, uses.recharge, result.total >= uses.recharge
        )
        ctx.emit(event)
        found.append(event)
    return found
