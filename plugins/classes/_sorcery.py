"""The sorcerer's Font of Magic (SRD 5.1, 2nd level), with the public SDK only.

- ``font-of-magic`` (bonus action, the ``font_of_magic`` command): the sorcery points
  are the uses of the ``font-of-magic`` action (the sorcerer level, per long rest).
  ``make: "points"`` spends a spell slot of level ``slot`` (the ``spell-slots-N``
  resource the spells plugin casts from) for as many points; ``make: "slot"`` spends
  2, 3, 5, 6 or 7 points for one slot of level 1 to 5. A slot made this way vanishing
  at the next long rest is the GM's care (the rest gives the sheet's slots back).
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    Command,
    CommandSpec,
    Creature,
    EncounterState,
    FeatureSpec,
    Param,
    ResourceRestored,
    ResourceSpent,
    RuleContext,
    hookimpl,
    resource_key,
)

from ._common import feature_of, uses_left

__all__ = ["SLOT_COSTS", "sorcery_commands", "sorcery_features"]

#: The sorcery points a spell slot of each level costs (Creating Spell Slots).
SLOT_COSTS = {1: 2, 2: 3, 3: 5, 4: 6, 5: 7}


@hookimpl(specname="zonekeep_features")
def sorcery_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "font-of-magic",
            "action",
            {"type": "object", "additionalProperties": True},
            doc="The font_of_magic command: a bonus action that turns a spell slot into "
            "sorcery points (its uses) or sorcery points into a slot of level 1 to 5.",
        )
    ]


def _has_font(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    feature = feature_of(me, "font-of-magic")
    if feature is None or feature.uses is None:
        return ("no_such_feature", f"{me.name} has no Font of Magic (with its sorcery points).")
    return None


def _font_of_magic(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    feature = feature_of(me, "font-of-magic")
    assert feature is not None  # (requires)
    make = cmd.params["make"]
    level = cmd.params["slot"]
    if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= 9:
        ctx.refuse("invalid_params", "'slot' is a spell slot level, 1 to 9.")
    points = uses_left(me, feature)
    key = resource_key(feature)
    slot_key = f"spell-slots-{level}"
    slots = me.resources.get(slot_key, 0)
    if make == "points":
        if slots < 1:
            ctx.refuse("no_uses_left", f"{me.name} has no spell slot of level {level} left.")
        ctx.emit(ResourceSpent(me.id, slot_key, slots - 1))
        ctx.emit(ResourceRestored(me.id, key, points + level, "font-of-magic"))
    elif make == "slot":
        cost = SLOT_COSTS.get(level)
        if cost is None:
            ctx.refuse("invalid_params", "Font of Magic makes spell slots of level 1 to 5 only.")
        if points < cost:
            ctx.refuse(
                "no_uses_left",
                f"A level {level} slot costs {cost} sorcery points; {me.name} has {points}.",
            )
        ctx.emit(ResourceSpent(me.id, key, points - cost))
        ctx.emit(ResourceRestored(me.id, slot_key, slots + 1, "font-of-magic"))
    else:
        ctx.refuse("invalid_params", f"'make' is points or slot, not {make!r}.")


@hookimpl(specname="zonekeep_commands")
def sorcery_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "font_of_magic",
            _font_of_magic,
            "Bonus action: Font of Magic, a spell slot into sorcery points (make: points) "
            "or sorcery points into a slot of level 1 to 5 (make: slot).",
            {
                "creature": Param("creature", True, "the sorcerer"),
                "make": Param("string", True, "points or slot"),
                "slot": Param("integer", True, "the slot level spent or made"),
            },
            costs=("bonus",),
            requires=_has_font,
        ),
    )
