"""A readable log: one plain sentence per event, as a person at the table would say it;
and the server's own log (:func:`configure_logging`)."""

from __future__ import annotations

import json
import logging
import sys

from zonekeep.sdk import (
    ActionTaken,
    AdjacencyTaken,
    AttackMade,
    Communicated,
    ConditionApplied,
    ConditionRemoved,
    ContestRolled,
    CreatureAdded,
    Damaged,
    Dashed,
    DecisionOpened,
    DecisionResolved,
    Disengaged,
    EffectCreated,
    EffectEnded,
    EncounterContinued,
    EncounterCreated,
    EncounterEnded,
    EncounterState,
    EngagementEnded,
    EngagementStarted,
    Event,
    GroupOrderSet,
    HazardAdded,
    HazardRemoved,
    Healed,
    InitiativeRolled,
    Interacted,
    ManeuverEnded,
    ManeuverStarted,
    ManeuverUpdated,
    Moved,
    MovementSpent,
    NoteAdded,
    NoteRemoved,
    OverrideApplied,
    PositionLeft,
    PositionsEstablished,
    PositionTaken,
    Readied,
    ReadiedCleared,
    Rewound,
    RollRecord,
    RoundEnded,
    RoundStarted,
    SaveMade,
    SpaceShared,
    Sprinted,
    SurpriseDetermined,
    SurpriseEnded,
    TumbleAttempted,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    ZoneEntered,
)


def _roll(r: RollRecord) -> str:
    dice = "+".join(str(d) for d in r.kept)
    if r.advantage != "none":
        dice = f"{r.advantage} {'/'.join(str(d) for d in r.dice)}→{dice}"
    mod = f"{r.modifier:+d}" if r.modifier else ""
    ex = f" +d{r.expertise} {r.expertise_roll}" if r.expertise else ""
    why = f"; {', '.join(s.split(':', 1)[1] for s in r.sources)}" if r.sources else ""
    return f"{r.total} ({r.expr}: {dice}{mod}{ex}{why})"


def describe(event: Event, state: EncounterState) -> str | None:
    """A sentence for ``event``, using ``state`` (before or after it) for names.

    Returns ``None`` for bookkeeping events that a reader does not need.
    """

    def n(cid: str) -> str:
        c = state.creatures.get(cid)
        return c.name if c else cid

    def z(zid: str) -> str:
        return state.arena.zone(zid).name if state.arena.has_zone(zid) else zid

    def a(aid: str) -> str:
        found = state.asset(aid)
        return found.name if found else aid

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
            return f"{n(event.creature)} spends {event.feet} ft of movement ({event.reason})."
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
        case ManeuverStarted() | ManeuverUpdated():
            return None
        case ManeuverEnded():
            return None if event.completed else f"{n(event.creature)}'s move stops: {event.reason}."
        case ZoneEntered():
            to, frm = z(event.to_zone), z(event.from_zone)
            if event.by == "gm" or (event.forced and event.by in ("", "gm")):
                return f"The GM moves {n(event.creature)} to {to}."
            if event.forced:
                return f"{n(event.creature)} is forced from {frm} into {to} by {n(event.by)}."
            return f"{n(event.creature)} enters {to} from {frm}."
        case EngagementStarted():
            return f"{n(event.creature)} engages {n(event.enemy)}."
        case EngagementEnded():
            why = f" ({event.reason})" if event.reason else ""
            return f"{n(event.creature)} is no longer engaged with {n(event.enemy)}{why}."
        case PositionTaken():
            how = f", forced by {n(event.by)}" if event.forced and event.by else ""
            return f"{n(event.creature)} takes position at {a(event.asset)}{how}."
        case PositionLeft():
            why = f" ({event.reason})" if event.reason else ""
            return f"{n(event.creature)} leaves its position at {a(event.asset)}{why}."
        case AdjacencyTaken():
            how = ", back-to-back" if event.back_to_back else ""
            return f"{n(event.creature)} moves next to {n(event.ally)}{how}."
        case TumbleAttempted():
            result = "succeeds" if event.success else "fails"
            return f"{n(event.creature)} tumbles, {event.trigger}: {_roll(event.roll)} against {event.dc}: {result}."
        case SaveMade():
            result = "succeeds" if event.success else "fails"
            why = f" ({event.source})" if event.source else ""
            return (
                f"{n(event.creature)} makes a {event.ability.upper()} save{why}: "
                f"{_roll(event.roll)} against DC {event.dc}: {result}."
            )
        case ContestRolled():
            winner = n(event.creature) if event.won else n(event.target)
            return (
                f"{n(event.creature)} ({event.skill} {event.roll.total}) against "
                f"{n(event.target)} ({event.target_skill} {event.target_roll.total}): {winner} wins."
            )
        case EffectCreated():
            return f"{event.asset.name} fills {z(event.asset.zone)}."
        case EffectEnded():
            return f"{a(event.asset)} ends."
        case SpaceShared():
            return f"{n(event.creature)} ends up in {n(event.other)}'s space."
        case NoteAdded():
            return f"GM note{' (hidden)' if event.note.hidden else ''}: {event.note.text}"
        case NoteRemoved():
            return None
        case Rewound():
            return f"The GM rewinds the encounter to event {event.to_seq}."
        case Sprinted():
            return f"{n(event.creature)} sprints."
    return f"[{event.type}]"


class _JsonFormatter(logging.Formatter):
    """One JSON object per record: ``time``, ``level``, ``logger``, ``message`` (and
    ``traceback`` with an exception)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class _ConfiguredHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler :func:`configure_logging` installs (and replaces when called again)."""


def configure_logging(level: str, fmt: str) -> None:
    """Log every record at ``level`` (``"debug"``, ``"info"``, ``"warning"``,
    ``"error"``) and above to standard error, one line each: readable text
    (``fmt="text"``) or a JSON object (``"json"``). Called again (a SIGHUP reload), it
    replaces what it set before. Process-wide: ``zonekeep serve`` calls it, a server
    embedded in another program does not."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _ConfiguredHandler)]:
        root.removeHandler(handler)
    handler = _ConfiguredHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(_JsonFormatter("%(asctime)s"))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level.upper())
