"""A readable log: one plain sentence per event, as a person at the table would say it."""

from __future__ import annotations

from zonekeep.sdk import (
    ActionTaken,
    AttackMade,
    Communicated,
    ConditionApplied,
    ConditionRemoved,
    CreatureAdded,
    Damaged,
    Dashed,
    DecisionOpened,
    DecisionResolved,
    Disengaged,
    EncounterContinued,
    EncounterCreated,
    EncounterEnded,
    EncounterState,
    Event,
    GroupOrderSet,
    HazardAdded,
    HazardRemoved,
    Healed,
    InitiativeRolled,
    Interacted,
    Moved,
    MovementSpent,
    OverrideApplied,
    PositionsEstablished,
    Readied,
    ReadiedCleared,
    RollRecord,
    RoundEnded,
    RoundStarted,
    SurpriseDetermined,
    SurpriseEnded,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
)


def _roll(r: RollRecord) -> str:
    dice = "+".join(str(d) for d in r.kept)
    if r.advantage != "none":
        dice = f"{r.advantage} {'/'.join(str(d) for d in r.dice)}→{dice}"
    mod = f"{r.modifier:+d}" if r.modifier else ""
    ex = f" +d{r.expertise} {r.expertise_roll}" if r.expertise else ""
    return f"{r.total} ({r.expr}: {dice}{mod}{ex})"


def describe(event: Event, state: EncounterState) -> str | None:
    """A sentence for ``event``, using ``state`` (before or after it) for names.

    Returns ``None`` for bookkeeping events that a reader does not need.
    """

    def n(cid: str) -> str:
        c = state.creatures.get(cid)
        return c.name if c else cid

    match event:
        case EncounterCreated():
            names = ", ".join(c.name for c in event.creatures)
            return f"Encounter '{event.name or event.encounter}' begins with {names}."
        case SurpriseDetermined():
            if not event.surprised:
                return "Nobody is surprised."
            return "Surprised: " + ", ".join(n(c) for c in event.surprised) + "."
        case PositionsEstablished():
            return (
                "Positions: "
                + ", ".join(f"{n(c)} in {z}" for c, z in event.positions.items())
                + "."
            )
        case InitiativeRolled():
            lines = ["Initiative order:"]
            for i, e in enumerate(event.entries, 1):
                who = ", ".join(n(m) for m in e.members)
                lines.append(f"  {i}. {who}: {_roll(e.roll)}")
            for r in event.rolloffs:
                lines.append(
                    "  roll-off: "
                    + ", ".join(f"{s} {v}" for s, v in zip(r.contenders, r.rolls, strict=True))
                )
            return "\n".join(lines)
        case DecisionOpened():
            return f"Waiting on {event.decision.controller}: {event.decision.prompt}"
        case DecisionResolved():
            how = "by default" if event.defaulted else f"by {event.by}"
            return f"Decided {how}: {', '.join(event.choice)}."
        case GroupOrderSet():
            return f"The {event.group} will act in this order: {', '.join(n(m) for m in event.members)}."
        case RoundStarted():
            return f"— Round {event.round} —"
        case RoundEnded():
            return None
        case TurnStarted():
            return f"{n(event.creature)}'s turn."
        case TurnSkipped():
            return f"{n(event.creature)} is skipped ({event.reason})."
        case TurnEnded():
            return f"{n(event.creature)} ends its turn."
        case SurpriseEnded():
            return f"{n(event.creature)} is no longer surprised."
        case ActionTaken():
            return None
        case MovementSpent():
            return f"{n(event.creature)} spends {event.feet} ft of movement to {event.reason}."
        case Moved():
            extra = f" ({', '.join(event.extra)})" if event.extra else ""
            return f"{n(event.creature)} moves {event.feet} ft ({event.mode}) for {event.cost} ft of movement{extra}."
        case Dashed():
            return f"{n(event.creature)} dashes."
        case Disengaged():
            return f"{n(event.creature)} disengages."
        case ConditionApplied():
            why = f" ({event.source})" if event.source else ""
            return f"{n(event.creature)} is {event.condition}{why}."
        case ConditionRemoved():
            why = f" ({event.reason})" if event.reason else ""
            return f"{n(event.creature)} is no longer {event.condition}{why}."
        case AttackMade():
            result = "a critical hit" if event.critical else ("a hit" if event.hit else "a miss")
            how = " as a reaction" if event.reaction else ""
            return (
                f"{n(event.attacker)} attacks {n(event.target)} with {event.attack}{how}: "
                f"{_roll(event.roll)} against AC {event.target_ac}: {result}."
            )
        case Damaged():
            dmg = f" {event.damage_type}" if event.damage_type else ""
            rolled = f" ({_roll(event.roll).split(' (', 1)[1]}" if event.roll else ""
            return f"{n(event.creature)} takes {event.amount}{dmg} damage{rolled}; {event.hp} hit points left."
        case Healed():
            return f"{n(event.creature)} regains {event.amount} hit points ({event.hp} now)."
        case Interacted():
            via = "using its action" if event.via == "action" else "as its interaction"
            return f"{n(event.creature)} interacts with {event.object} {via}."
        case Communicated():
            return f'{n(event.creature)} says: "{event.text}"'
        case Readied():
            return f"{n(event.creature)} readies {event.attack} against {n(event.target)}."
        case ReadiedCleared():
            return f"{n(event.creature)}'s readied attack is {event.reason}."
        case CreatureAdded():
            return f"{event.creature.name} joins the encounter."
        case HazardAdded():
            return f"Hazard: {event.hazard.name}."
        case HazardRemoved():
            return f"The hazard {event.hazard} is gone."
        case OverrideApplied():
            return f"GM override by {event.by}: {n(event.creature)}'s {event.field} is now {event.value!r}."
        case EncounterContinued():
            return "The GM keeps the encounter going."
        case EncounterEnded():
            return f"The encounter ends: {event.reason}."
    return f"[{event.type}]"
