"""The GM's explicit overrule of a condition immunity: shared by ``gm`` (granting a
condition) and ``durations`` (a timed effect), so that neither imports the other (see
``_attacks``). Not a plugin itself."""

from __future__ import annotations

from zonekeep.sdk import Creature, RuleContext


def refuse_immunity(ctx: RuleContext, c: Creature, condition: str, force: bool) -> None:
    """The GM gives ``condition`` to ``c``: refused (``condition_immune``) when ``c`` is
    immune to it, unless the GM overrules the immunity explicitly (``force``)."""
    if condition in c.condition_immunities and not force:
        ctx.refuse(
            "condition_immune",
            f"{c.name} is immune to being {condition}; send force: true to overrule that.",
        )
