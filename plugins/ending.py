"""Ending an encounter (docs/rules.md, 12).

The fight is over when every creature of one side is defeated, surrendered or
escaped. The encounter still does not end while a creature is dying or a hazard
marked time-sensitive remains. The GM can end it anyway (``force``) or keep it
going past the rules' end.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DYING,
    OPEN_PHASES,
    Command,
    CommandSpec,
    EncounterContinued,
    EncounterEnded,
    Hazard,
    HazardAdded,
    HazardRemoved,
    Param,
    RuleContext,
    hookimpl,
)


@hookimpl
def zonekeep_end_blockers(ctx: RuleContext) -> Iterable[str]:
    found = [f"{c.name} is dying" for c in ctx.state.creatures.values() if DYING in c.conditions]
    found += [
        f"the hazard '{h.name}' is time-sensitive"
        for h in ctx.state.hazards.values()
        if h.time_sensitive
    ]
    # A time-sensitive asset is a threat while someone is where it can harm them.
    assets = [*ctx.state.arena.assets, *ctx.state.effects.values()]
    occupied = {c.zone for c in ctx.state.creatures.values() if not c.out_of_fight}
    found += [
        f"'{a.name}' threatens whoever is in {ctx.state.arena.zone(a.zone).name}"
        for a in assets
        if a.time_sensitive and a.zone in occupied
    ]
    return found


@hookimpl
def zonekeep_encounter_over(ctx: RuleContext) -> str | None:
    # Whether every creature of each side is out of the fight, the sides in roster order.
    sides: dict[str, bool] = {}
    for c in ctx.state.creatures.values():
        side = c.side
        if sides.get(side, True):  # new, or every one so far out: this one decides
            sides[side] = c.out_of_fight
    if len(sides) < 2:
        return None
    for side, beaten in sides.items():
        if beaten:
            return f"every creature of the side '{side}' is defeated, surrendered or escaped"
    return None


def _end(ctx: RuleContext, cmd: Command) -> None:
    blockers = ctx.end_blockers()
    if blockers and not cmd.params.get("force", False):
        ctx.refuse(
            "threat_remains",
            f"The encounter cannot end yet: {'; '.join(blockers)}. "
            "Send force: true to end it anyway.",
        )
    reason = cmd.params.get("reason") or "the GM ended the encounter"
    ctx.emit(EncounterEnded(reason, ctx.actor.id))


def _continue(ctx: RuleContext, cmd: Command) -> None:
    ctx.emit(EncounterContinued(ctx.actor.id))


def _add_hazard(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    if p["id"] in ctx.state.hazards:
        ctx.refuse("duplicate_id", f"There is already a hazard {p['id']!r}.")
    ctx.emit(
        HazardAdded(
            Hazard(p["id"], p["name"], p.get("time_sensitive", True), p.get("description", ""))
        )
    )


def _remove_hazard(ctx: RuleContext, cmd: Command) -> None:
    if cmd.params["id"] not in ctx.state.hazards:
        ctx.refuse("unknown_hazard", f"There is no hazard {cmd.params['id']!r}.")
    ctx.emit(HazardRemoved(cmd.params["id"]))


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "end_encounter",
            _end,
            "End the encounter; refused while a time-sensitive threat remains unless forced.",
            {
                "force": Param("boolean", False, "end it despite remaining threats"),
                "reason": Param("string", False, "why, for the log"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "continue_encounter",
            _continue,
            "Keep the encounter going even when the rules would end it.",
            who="gm",
            phases=("turns",),
        ),
        CommandSpec(
            "add_hazard",
            _add_hazard,
            "Put a hazard in play; a time-sensitive one keeps the encounter going.",
            {
                "id": Param("string", True, "a unique id"),
                "name": Param("string", True, "what players see"),
                "time_sensitive": Param("boolean", False, "default true"),
                "description": Param("string", False, "what it is and does, for the table"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "remove_hazard",
            _remove_hazard,
            "Take a hazard out of play.",
            {"id": Param("string", True, "the hazard id")},
            who="gm",
            phases=OPEN_PHASES,
        ),
    )
