"""The class features that change a spell as it is cast (SRD 5.1, issue 31), with the
public SDK only. The classes plugin lists them (plugins/classes/classes-5.1.json); they
live here because the casting is this plugin's, and a creature gets them from its
sheet's ``traits`` by id, as every feature:

- ``disciple-of-life`` (cleric, Life Domain 1): a healing spell cast with a slot of 1st
  level or higher restores 2 + the slot level more hit points.
- ``sculpt-spells`` (wizard, School of Evocation 2): an evocation area spell's ``spare``
  param names up to 1 + the spell's level of its targets; each succeeds on its save
  without rolling and takes no damage (nor the spell's condition or push). Refused for
  a caster without the feature, a spell of another school, or a creature not targeted.
- ``eldritch-invocations`` (warlock 2): the invocations the sheet lists in
  ``params.invocations``. ``agonizing-blast`` adds the Charisma modifier to each
  eldritch blast beam's damage; ``repelling-blast`` pushes a creature an eldritch blast
  beam hits 10 feet away: the cast's ``push`` says where (``{"gob": {"zone": "bar"}}``,
  as thunderwave's; forced movement, once per creature per cast: its first beam that
  hits). The other invocations change no roll the rules make (Armor of Shadows is the
  sheet's AC, Devil's Sight and the rest are senses or out of combat): the GM's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from zonekeep.sdk import Action, Creature, FeatureSpec, RuleContext, Trait, hookimpl

from .catalog import Spell

__all__ = [
    "AUTOMATED_INVOCATIONS",
    "blast_dice",
    "caster_feature",
    "caster_features",
    "disciple_bonus",
    "invocations",
    "repelling_pushes",
    "sculpted",
]

#: The invocations the rules resolve (the others are the GM's, or the sheet's).
AUTOMATED_INVOCATIONS: Final = ("agonizing-blast", "repelling-blast")


def caster_feature(creature: Creature, feature: str) -> Trait | Action | None:
    """``creature``'s trait or action ``feature`` (its short id, or the classes' or this
    plugin's namespaced one), unless its data marks it ``gm``."""
    ids = (feature, f"zonekeep.classes.{feature}", f"zonekeep.spells.{feature}")
    found: tuple[Trait | Action, ...] = (*creature.traits, *creature.actions)
    for item in found:
        if item.id in ids and item.gm is None:
            return item
    return None


# -- Disciple of Life ---------------------------------------------------------------------------


def disciple_bonus(creature: Creature, spell: Spell, slot: int) -> int:
    """The hit points Disciple of Life adds to a healing spell cast with ``slot``."""
    if spell.how != "heal" or slot < 1 or caster_feature(creature, "disciple-of-life") is None:
        return 0
    return 2 + slot


# -- Sculpt Spells ------------------------------------------------------------------------------


def sculpted(
    ctx: RuleContext,
    me: Creature,
    spell: Spell,
    chosen: Sequence[Creature],
    given: object,
    metamagic: object = None,
) -> tuple[frozenset[str], bool]:
    """The ids of the targets ``spare`` names (refuses a ``spare`` it cannot), and
    whether they take no damage: Sculpt Spells; with Careful Spell (``metamagic``) they
    only succeed on their saves."""
    careful = isinstance(metamagic, Mapping) and metamagic.get("option") == "careful"
    if given is None or given == []:
        return frozenset(), True
    if not careful and caster_feature(me, "sculpt-spells") is None:
        ctx.refuse("no_such_feature", f"{me.name} has no Sculpt Spells: it spares no one.")
    if not careful and spell.school != "evocation":
        ctx.refuse(
            "invalid_params",
            f"Sculpt Spells shapes evocation spells; {spell.name} is "
            f"{spell.school or 'of no school the rules know'}.",
        )
    if not isinstance(given, list) or not all(isinstance(c, str) for c in given):
        ctx.refuse("invalid_params", "spare is a list of creature ids.")
    ids = {t.id for t in chosen}
    for cid in given:
        if cid not in ids:
            ctx.refuse("invalid_params", f"spare names {cid[:60]!r}, not one of the targets.")
    most = max(1, me.abilities.get("cha", 0)) if careful else 1 + spell.level
    if len(set(given)) != len(given) or len(given) > most:
        ctx.refuse(
            "too_many_targets",
            f"{'Careful Spell' if careful else 'Sculpt Spells'} spares up to {most} "
            f"creature{'s' if most > 1 else ''} from {spell.name}"
            + (" (the Charisma modifier)" if careful else " (1 + its level)")
            + ", each once.",
        )
    return frozenset(given), not careful


# -- Eldritch Invocations -----------------------------------------------------------------------


def invocations(creature: Creature) -> frozenset[str]:
    """The invocations ``creature``'s sheet lists (short ids), or none."""
    feature = caster_feature(creature, "eldritch-invocations")
    listed = feature.params.get("invocations") if feature is not None else None
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(str(i).rsplit(".", 1)[-1] for i in listed)


def blast_dice(creature: Creature, spell: Spell, dice: str) -> str:
    """Eldritch blast's beam damage with Agonizing Blast: + the Charisma modifier."""
    if spell.id != "eldritch-blast" or "agonizing-blast" not in invocations(creature):
        return dice
    cha = creature.abilities.get("cha", 0)
    return f"{dice}{cha:+d}" if cha else dice


def repelling_pushes(
    ctx: RuleContext, me: Creature, spell: Spell, targets: Sequence[Creature], given: object
) -> dict[str, dict[str, str]]:
    """Where Repelling Blast pushes each creature a beam hits (refuses a bad ``push``)."""
    if given is None:
        return {}
    if spell.id != "eldritch-blast" or "repelling-blast" not in invocations(me):
        ctx.refuse(
            "invalid_params",
            f"{spell.name} pushes no one"
            + (" (Repelling Blast is an invocation the sheet lacks)." if spell.rays else "."),
        )
    if not isinstance(given, Mapping):
        ctx.refuse("invalid_params", 'push is an object: {"<target>": {"zone": "<zone>"}}.')
    ids = {t.id for t in targets}
    found: dict[str, dict[str, str]] = {}
    for cid, where in given.items():
        if cid not in ids:
            ctx.refuse("invalid_params", f"push names {str(cid)[:60]!r}, not a target.")
        ok = isinstance(where, Mapping) and where and set(where) <= {"zone", "asset"}
        if not ok or not all(isinstance(v, str) for v in where.values()):
            ctx.refuse(
                "invalid_params",
                f'push.{cid}: give "zone" (a linked zone) and/or "asset" (where it lands).',
            )
        found[cid] = dict(where)
    return found


_INVOCATIONS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "invocations": {
            "type": "array",
            "items": {"type": "string", "maxLength": 60},
            "maxItems": 8,
        }
    },
    "additionalProperties": True,
}


@hookimpl(specname="zonekeep_features")
def caster_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "disciple-of-life",
            "trait",
            {"type": "object", "additionalProperties": True},
            doc="A healing spell cast with a slot of 1st level or higher restores 2 + the "
            "slot level more hit points.",
        ),
        FeatureSpec(
            "sculpt-spells",
            "trait",
            {"type": "object", "additionalProperties": True},
            doc="An evocation area spell's spare param: up to 1 + the spell's level of its "
            "targets succeed on their saves and take no damage.",
        ),
        FeatureSpec(
            "eldritch-invocations",
            "trait",
            _INVOCATIONS_SCHEMA,
            doc="params.invocations: agonizing-blast (+Charisma modifier to each eldritch "
            "blast beam's damage) and repelling-blast (a beam that hits pushes its target "
            "10 ft: the cast's push) are automated; the others are the GM's.",
        ),
    )
