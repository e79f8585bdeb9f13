"""The GM's explicit overrule of a condition immunity: shared by ``gm`` (granting a
condition) and ``durations`` (a timed effect), so that neither imports the other (see
``_crowding``). Not a plugin itself."""

from __future__ import annotations

from zonekeep.sdk import Creature, RuleContext


def refuse_immunity(ctx: RuleContext, c: Creature, condition: str, force: bool) -> None:
    """The GM gives ``condition`` to ``c``: refused (``condition_immune``) when ``c`` is
    immune to it (its ``condition_immunities``, or a plugin's answer for the moment:
    ``zonekeep_condition_immunity``), unless the GM overrules the immunity explicitly
    (``force``)."""
    if force:
        return
    if condition in c.condition_immunities:
        ctx.refuse(
            "condition_immune",
            f"{c.name} is immune to being {condition}; send force: true to overrule that.",
        )
    why = ctx.hook.zonekeep_condition_immunity(ctx=ctx, creature=c, condition=condition)
    if why:
        ctx.refuse(
            "condition_immune",
            f"{c.name} cannot be {condition} now ({why}); send force: true to overrule that.",
        )
