"""Logs: the server's own log lines (:func:`configure_logging`), and a readable log of
an encounter, one plain sentence per event as a person at the table would say it
(:func:`describe`).

Every line the server logs carries, where it has them, the encounter and the client's
address. Both come from context variables (:data:`encounter_var`, :data:`client_var`):
a connection's task sets the client, a room's task the encounter (and the client of
the command it handles), and trio copies a task's context variables into every task
it starts, so the lines of a connection's or a room's helpers carry them too. A log
call may also name them itself (``extra={"encounter": eid}``).
"""

from __future__ import annotations

import contextvars
import enum
import json
import logging
import string
import sys
import time
from collections.abc import Callable
from typing import IO, Any, Final, Literal

from zonekeep.sdk import (
    ActionTaken,
    AdjacencyTaken,
    AttackMade,
    Communicated,
    ConditionApplied,
    ConditionPrevented,
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
    PluginEvent,
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
from zonekeep.sdk.host import PluginCatalog


def _roll(r: RollRecord) -> str:
    dice = "+".join(str(d) for d in r.kept)
    if r.advantage != "none":
        dice = f"{r.advantage} {'/'.join(str(d) for d in r.dice)}→{dice}"
    mod = f"{r.modifier:+d}" if r.modifier else ""
    ex = f" +d{r.expertise} {r.expertise_roll}" if r.expertise else ""
    ex += f" -d{r.penalty} {r.penalty_roll}" if r.penalty else ""
    why = f"; {', '.join(s.split(':', 1)[1] for s in r.sources)}" if r.sources else ""
    return f"{r.total} ({r.expr}: {dice}{mod}{ex}{why})"


def plugin_line(template: str, data: dict[str, Any], name: Callable[[str], str]) -> str:
    """A plugin event's ``template`` with each ``{field}`` replaced by ``data[field]``
    (text that is a creature id as the creature's name, through ``name``); a field the
    payload lacks stays as written. The web table does the same (table.js)."""
    out: list[str] = []
    for literal, field, _spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if field is None:
            continue
        if field not in data:
            out.append("{" + field + "}")
            continue
        value = data[field]
        out.append(name(value) if isinstance(value, str) else json.dumps(value))
    return "".join(out)


def describe(
    event: Event, state: EncounterState, catalog: PluginCatalog | None = None
) -> str | None:
    """A sentence for ``event``, using ``state`` (before or after it) for names.

    Returns ``None`` for bookkeeping events that a reader does not need. A plugin event
    is told with its type's template (from ``catalog``), else as its type and payload.
    """

    def n(cid: str) -> str:
        c = state.creatures.get(cid)
        return c.name if c else cid

    def z(zid: str) -> str:
        return state.arena.zone(zid).name if state.arena.has_zone(zid) else zid

    def a(aid: str) -> str:
        found = state.asset(aid)
        return found.name if found else aid

    if isinstance(event, PluginEvent):
        entry = catalog.events.get(event.type) if catalog is not None else None
        if entry is not None and entry.spec.template:
            return plugin_line(entry.spec.template, event.data, n)
        if entry is not None and entry.spec.description:
            return f"{entry.spec.description} ({event.type})"
        return f"[{event.type}] {json.dumps(event.data, sort_keys=True)}"
    for told in _LINES:
        line = told(event, n, z, a)
        if line is not _OTHER:
            return line
    return f"[{event.type}]"


class _Other(enum.Enum):
    """What a group of :func:`describe`'s lines answers for an event not of the group."""

    OTHER = 0


_OTHER: Final = _Other.OTHER
#: A creature's, a zone's or an asset's name for its id (what ``describe`` hands each group).
_Name = Callable[[str], str]
#: A group's answer: a sentence, None for a bookkeeping event, ``_OTHER`` when not its own.
_Line = str | _Other | None


def _setup_line(event: Event, n: _Name, z: _Name, a: _Name) -> _Line:
    """The encounter's start: the roster, surprise, positions, initiative, decisions."""
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
    return _OTHER


def _turn_line(event: Event, n: _Name, z: _Name, a: _Name) -> _Line:
    """Rounds and turns, and what a creature does on its own: moving, dashing, readying."""
    match event:
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
        case Sprinted():
            return f"{n(event.creature)} sprints."
        case ManeuverStarted() | ManeuverUpdated():
            return None
        case ManeuverEnded():
            return None if event.completed else f"{n(event.creature)}'s move stops: {event.reason}."
        case Interacted():
            via = "using its action" if event.via == "action" else "as its interaction"
            return f"{n(event.creature)} interacts with {event.object} {via}."
        case Communicated():
            return f'{n(event.creature)} says: "{event.text}"'
        case Readied():
            return f"{n(event.creature)} readies {event.attack} against {n(event.target)}."
        case ReadiedCleared():
            return f"{n(event.creature)}'s readied attack is {event.reason}."
    return _OTHER


def _fight_line(event: Event, n: _Name, z: _Name, a: _Name) -> _Line:
    """Attacks, damage, healing, conditions, saves and contests."""
    match event:
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
            changed = ""
            if event.steps:
                raw = f"{event.raw} {event.raw_type}".rstrip() if event.raw is not None else ""
                how = ", ".join(f"{st.kind} {st.source} -> {st.amount}" for st in event.steps)
                changed = f" [{raw}: {how}]" if raw else f" [{how}]"
            return (
                f"{n(event.creature)} takes {event.amount}{dmg} damage{rolled}{changed}; "
                f"{event.hp} hit points left."
            )
        case ConditionPrevented():
            why = f" ({event.source})" if event.source else ""
            return f"{n(event.creature)} is immune to being {event.condition}{why}."
        case Healed():
            return f"{n(event.creature)} regains {event.amount} hit points ({event.hp} now)."
        case TumbleAttempted():
            result = "succeeds" if event.success else "fails"
            return f"{n(event.creature)} tumbles, {event.trigger}: {_roll(event.roll)} against {event.dc}: {result}."
        case SaveMade():
            result = "succeeds" if event.success else "fails"
            if event.automatic_failure:
                result = f"fails ({event.automatic_failure})"
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
    return _OTHER


def _arena_line(event: Event, n: _Name, z: _Name, a: _Name) -> _Line:
    """Zones, engagement, positions and effects in the arena."""
    match event:
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
        case EffectCreated():
            return f"{event.asset.name} fills {z(event.asset.zone)}."
        case EffectEnded():
            return f"{a(event.asset)} ends."
        case SpaceShared():
            return f"{n(event.creature)} ends up in {n(event.other)}'s space."
    return _OTHER


def _table_line(event: Event, n: _Name, z: _Name, a: _Name) -> _Line:
    """The GM's table: creatures and hazards added, overrides, notes, the end, rewinds."""
    match event:
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
        case NoteAdded():
            return f"GM note{' (hidden)' if event.note.hidden else ''}: {event.note.text}"
        case NoteRemoved():
            return None
        case Rewound():
            return f"The GM rewinds the encounter to event {event.to_seq}."
    return _OTHER


#: :func:`describe`'s groups of lines, tried in turn.
_LINES = (_setup_line, _turn_line, _fight_line, _arena_line, _table_line)


# -- the server's log lines -----------------------------------------------------------------

#: The encounter the current task works for (a room's loop), if any.
encounter_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "zonekeep_encounter", default=None
)
#: The client's address the current task works for (a connection, a command), if any.
client_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "zonekeep_client", default=None
)

LogFormat = Literal["text", "json"]
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
#: Loggers of libraries that would log what a client sends at DEBUG (websockets logs
#: every frame and header: tokens, keys): never below INFO.
QUIET = ("websockets",)


def current_client() -> str | None:
    """The client address of the current task (see :data:`client_var`)."""
    return client_var.get()


class ContextFilter(logging.Filter):
    """Puts the encounter and the client of the current task on every record (unless
    the log call named them itself with ``extra``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "encounter", None) is None:
            record.encounter = encounter_var.get()
        if getattr(record, "client", None) is None:
            record.client = client_var.get()
        return True


def _utc(record: logging.LogRecord) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{stamp}.{int(record.msecs):03d}Z"


def _one_line(text: str) -> str:
    """``text`` on one line: control characters (a newline a client slipped into a name)
    escaped, so that no line of the log can be forged."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class TextFormatter(logging.Formatter):
    """``2026-12-01T06:40:00.123Z INFO zonekeep.session client=203.0.113.7
    encounter=e1-ab12 joined as player alice``; a traceback follows on its own lines."""

    def format(self, record: logging.LogRecord) -> str:
        parts = [_utc(record), record.levelname, record.name]
        client = getattr(record, "client", None)
        if client is not None:
            parts.append(f"client={_one_line(str(client))}")
        encounter = getattr(record, "encounter", None)
        if encounter is not None:
            parts.append(f"encounter={_one_line(str(encounter))}")
        parts.append(_one_line(record.getMessage()))
        line = " ".join(parts)
        trace = _traceback(self, record)
        return f"{line}\n{trace}" if trace else line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time``, ``level``, ``logger``, ``message``,
    ``encounter``, ``client`` (``null`` when none), and ``traceback`` for an error
    logged with one."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "time": _utc(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "encounter": getattr(record, "encounter", None),
            "client": getattr(record, "client", None),
        }
        trace = _traceback(self, record)
        if trace:
            data["traceback"] = trace
        return json.dumps(data, ensure_ascii=False, default=str)


def _traceback(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    parts = []
    if record.exc_info:
        parts.append(formatter.formatException(record.exc_info))
    if record.stack_info:
        parts.append(formatter.formatStack(record.stack_info))
    return "\n".join(parts)


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The one handler :func:`configure_logging` installs on the root logger."""


def configure_logging(
    level: str = "info", fmt: LogFormat = "text", *, stream: IO[str] | None = None
) -> None:
    """Log to ``stream`` (standard error by default) at ``level`` (``"debug"``,
    ``"info"``, ``"warning"``, ``"error"``) in ``fmt`` (``"text"`` or ``"json"``).

    Idempotent: called again (at a reload), it changes the level and the format of the
    handler it installed, and its stream when one is given; it never adds a second one.
    Handlers that others installed (pytest's) are left alone.
    """
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, not {level!r}")
    if fmt not in ("text", "json"):
        raise ValueError(f"log format must be 'text' or 'json', not {fmt!r}")
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _Handler)), None)
    if handler is None:
        handler = _Handler(stream if stream is not None else sys.stderr)
        handler.addFilter(ContextFilter())
        root.addHandler(handler)
    elif stream is not None:
        handler.setStream(stream)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    numeric = LEVELS[level]
    handler.setLevel(numeric)
    root.setLevel(numeric)
    for name in QUIET:
        logging.getLogger(name).setLevel(max(numeric, logging.INFO))


def unconfigure_logging() -> None:
    """Remove the handler :func:`configure_logging` installed (for tests)."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(handler)
