"""The class features of a short rest (SRD 5.1, levels 1 to 5), with the public SDK only.
The GM's ``rest`` (``zonekeep.features``) gives back the features' uses, the class
resources, pact slots and, on a long rest, spell slots; what a class adds at a short
rest is here.

- ``arcane-recovery`` (wizard 1) and ``natural-recovery`` (druid, Circle of the Land 2):
  once a day, after a short rest, the GM's ``recover_slots`` gives back spent spell
  slots of a combined level up to half the wizard (or druid) level, rounded up, none of
  6th level or higher (``slots``: ``{"1": 2}`` for two 1st-level slots). The use is the
  creature's resource ``arcane-recovery`` (or ``natural-recovery``): the sheet's class
  resource, one a day, back on a long rest; without one, one use, which the GM gives
  back with an override. The rules do not know when a short rest ends: the GM sends it
  right after the ``rest``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zonekeep.sdk import (
    OPEN_PHASES,
    Command,
    CommandSpec,
    Creature,
    FeatureSpec,
    Param,
    ResourceRestored,
    ResourceSpent,
    RuleContext,
    hookimpl,
)

from ._common import class_level

__all__ = ["ARCANE_RECOVERY", "NATURAL_RECOVERY", "rests_commands", "rests_features"]

ARCANE_RECOVERY = "arcane-recovery"
NATURAL_RECOVERY = "natural-recovery"
#: The highest slot level a recovery gives back.
HIGHEST_RECOVERED = 5

_NO_PARAMS = {"type": "object", "additionalProperties": True}


@hookimpl(specname="zonekeep_features")
def rests_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            ARCANE_RECOVERY,
            "trait",
            _NO_PARAMS,
            doc="After a short rest, the GM's recover_slots: spent slots of a combined level "
            "up to half the wizard level (rounded up), none of 6th level or higher; once a day.",
        ),
        FeatureSpec(
            NATURAL_RECOVERY,
            "trait",
            _NO_PARAMS,
            doc="As Arcane Recovery, for a druid of the Circle of the Land (half the druid "
            "level, rounded up).",
        ),
    ]


def _recovery(creature: Creature) -> tuple[str, int] | None:
    """The recovery ``creature`` has and the level it counts: Arcane Recovery with its
    wizard level, Natural Recovery with its druid level (Circle of the Land, from 2nd)."""
    wizard = class_level(creature, "wizard")
    if wizard:
        return ARCANE_RECOVERY, wizard
    druid = class_level(creature, "druid")
    if druid >= 2 and _subclass(creature, "druid") == "land":
        return NATURAL_RECOVERY, druid
    return None


def _subclass(creature: Creature, class_id: str) -> str:
    for trait in creature.traits:
        if trait.id == "class-levels":
            for entry in trait.params.get("classes", ()):
                if isinstance(entry, Mapping) and entry.get("name") == class_id:
                    return str(entry.get("subclass", ""))
    return ""


def _full_slots(creature: Creature) -> dict[int, int]:
    for trait in creature.traits:
        if trait.id == "spellcasting" and isinstance(trait.params.get("slots"), Mapping):
            return {
                int(level): count
                for level, count in trait.params["slots"].items()
                if str(level).isdigit() and isinstance(count, int)
            }
    return {}


def _recover_slots(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    found = _recovery(me)
    if found is None:
        ctx.refuse(
            "no_such_feature",
            f"{me.name} has neither Arcane Recovery (a wizard) nor Natural Recovery (a "
            "druid of the Circle of the Land).",
        )
    key, level = found
    left = me.resources.get(key, 1)
    if left <= 0:
        ctx.refuse("no_uses_left", f"{me.name} has recovered slots today already.")
    wanted = cmd.params["slots"]
    if not isinstance(wanted, Mapping) or not wanted:
        ctx.refuse("invalid_params", "'slots' maps slot levels to counts: {\"1\": 2}.")
    cap = (level + 1) // 2
    chosen: dict[int, int] = {}
    for name, count in wanted.items():
        if not (isinstance(name, str) and name.isdigit() and 1 <= int(name) <= 9):
            ctx.refuse("invalid_params", f"{name!r} is not a slot level (1 to 9).")
        if int(name) > HIGHEST_RECOVERED:
            ctx.refuse("invalid_params", "No slot of 6th level or higher is recovered.")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 9:
            ctx.refuse("invalid_params", f"The count of level {name} slots is 1 to 9.")
        chosen[int(name)] = count
    total = sum(lvl * n for lvl, n in chosen.items())
    if total > cap:
        ctx.refuse(
            "invalid_params",
            f"{me.name} recovers slots of a combined level up to {cap}, not {total}.",
        )
    full = _full_slots(me)
    for lvl, n in sorted(chosen.items()):
        now = me.resources.get(f"spell-slots-{lvl}", 0)
        spent = full.get(lvl, 0) - now
        if n > spent:
            ctx.refuse(
                "invalid_params",
                f"{me.name} has {max(spent, 0)} level {lvl} slot(s) spent, not {n}.",
            )
    ctx.emit(ResourceSpent(me.id, key, left - 1))
    for lvl, n in sorted(chosen.items()):
        now = me.resources.get(f"spell-slots-{lvl}", 0)
        ctx.emit(ResourceRestored(me.id, f"spell-slots-{lvl}", now + n, key))


@hookimpl(specname="zonekeep_commands")
def rests_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "recover_slots",
            _recover_slots,
            "GM: after a short rest, Arcane Recovery or Natural Recovery gives back spent "
            "spell slots (combined level up to half the class level, rounded up; once a day).",
            {
                "creature": Param("creature", True, "the wizard or land druid"),
                "slots": Param("object", True, 'slot levels and counts: {"1": 2}'),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
    )
