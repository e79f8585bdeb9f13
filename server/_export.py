"""Moving encounters out of and into the store: ``export``, ``replay`` and ``import``.

An exported log is JSON Lines, one event a line, each line exactly the ``params`` of
the protocol's ``event`` notification::

    {"encounter": "e1-4f2a9c", "seq": 1, "event": {"type": "encounter_created", ...}}

- :func:`export_encounter` reads the SQLite store read-only (it never writes to it,
  and works while a server holds the file open: WAL lets readers in).
- :func:`load_log` checks a log: every line against the schema, seqs from 1 without
  gaps, one encounter id, and that the events fold (``rewound`` included).
- :func:`replay_log` folds a checked log into the readable log and the final state.
- :func:`import_log` writes a checked log into a store as an encounter, with a
  snapshot and a fresh GM seat, so that a server started on that store brings it back.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import attrs

from zonekeep.protocol import validate_server_message
from zonekeep.sdk import EncounterCreated, EncounterState, Event, Rewound, replay
from zonekeep.sdk.host import (
    PluginCatalog,
    event_from_dict,
    event_to_dict,
    replay_steps,
    state_to_dict,
)

from ._log import describe
from ._store import StoredGrant

#: The store's file name inside a data directory (as the server opens it).
STORE_FILE = "zonekeep.sqlite3"

#: How many problems a bad log reports before it stops looking.
MAX_PROBLEMS = 20

#: What ``import --as`` accepts as an encounter id.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")


class ExportError(Exception):
    """Something the user can fix: an unknown encounter, a missing store, a taken id.

    The command line prints it and exits with status 2.
    """


class LogError(ExportError):
    """A log that cannot be replayed; ``problems`` holds one ``FILE:LINE: problem`` each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def store_path(data_dir: str | Path) -> Path:
    """The store file of a data directory."""
    return Path(data_dir) / STORE_FILE


# -- export ----------------------------------------------------------------------------------


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the store at ``path``; :class:`ExportError` if it is
    missing, not a zonekeep store, damaged, or of another schema version."""
    from ._sqlite import SCHEMA_VERSION

    if not path.is_file():
        raise ExportError(
            f"{path}: there is no zonekeep store here (is --data-dir, or the config's data_dir, right?)"
        )
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error as exc:
        raise ExportError(f"{path}: cannot open the store: {exc}") from None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"meta", "events", "encounters"} <= tables:
            raise ExportError(f"{path}: this SQLite file is not a zonekeep store.")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row and str(row[0]).isdigit() else -1
        if version != SCHEMA_VERSION:
            newer = version > SCHEMA_VERSION
            raise ExportError(
                f"{path}: store version {version}, this zonekeep reads version {SCHEMA_VERSION}; "
                + (
                    "upgrade zonekeep."
                    if newer
                    else "start `zonekeep serve` on it once to migrate it, then export."
                )
            )
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ExportError(f"{path}: not a zonekeep store, or a damaged one ({exc}).") from None
    except ExportError:
        conn.close()
        raise
    return conn


def known_encounters(data_dir: str | Path) -> list[str]:
    """The ids of every encounter in the store, oldest first (read-only)."""
    path = store_path(data_dir)
    conn = _open_read_only(path)
    try:
        return [r[0] for r in conn.execute("SELECT id FROM encounters ORDER BY created, id")]
    except sqlite3.DatabaseError as exc:
        raise ExportError(f"{path}: cannot read the store: {exc}") from None
    finally:
        conn.close()


def export_lines(data_dir: str | Path, encounter: str) -> Iterator[dict[str, Any]]:
    """Every event of ``encounter`` as an ``event`` notification's params, in seq order.

    The store is opened read-only and read in one transaction (a consistent view,
    even while a server keeps appending). :class:`ExportError` if the encounter is
    unknown; the message lists the known ids.
    """
    path = store_path(data_dir)
    conn = _open_read_only(path)
    try:
        conn.execute("BEGIN")  # one read transaction: a snapshot of the file
        found = conn.execute("SELECT 1 FROM encounters WHERE id=?", (encounter,)).fetchone()
        if found is None:
            ids = [r[0] for r in conn.execute("SELECT id FROM encounters ORDER BY created, id")]
            known = ", ".join(ids) if ids else "none (the store is empty)"
            raise ExportError(f"{path}: no encounter {encounter!r}; known encounters: {known}")
        rows = conn.execute(
            "SELECT seq, data FROM events WHERE encounter=? ORDER BY seq", (encounter,)
        )
        for seq, data in rows:
            yield {"encounter": encounter, "seq": seq, "event": _current(json.loads(data))}
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise ExportError(f"{path}: cannot read the store: {exc}") from None
    finally:
        conn.close()


def _current(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored event as this version writes it: the fields added since it was stored
    get their defaults (a ``damaged`` of protocol 1.3 gains ``raw: null`` and ``steps:
    []``), as the server itself sends it. Data that no longer reads as an event is
    exported as it is (``import`` then names the problem)."""
    try:
        return event_to_dict(event_from_dict(stored))
    except ValueError:
        return stored


def _line(params: dict[str, Any]) -> str:
    return json.dumps(params, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def export_encounter(data_dir: str | Path, encounter: str, out: TextIO) -> int:
    """Write ``encounter``'s log to ``out`` as JSON Lines; returns how many events."""
    count = 0
    for params in export_lines(data_dir, encounter):
        out.write(_line(params))
        count += 1
    return count


def export_to_file(data_dir: str | Path, encounter: str, target: str | Path) -> int:
    """Like :func:`export_encounter`, into ``target``, which is replaced only once the
    whole log is written (a failed export leaves no half file)."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            count = export_encounter(data_dir, encounter, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


# -- reading and checking a log ------------------------------------------------------------


@attrs.frozen
class Log:
    """A checked log: the encounter id and its events, ``events[i]`` having seq ``i + 1``."""

    path: Path
    encounter: str
    events: tuple[Event, ...]


def _schema_problem(exc: ValueError) -> str:
    text = str(exc).removesuffix(" (schema event.schema.json)")
    text = re.sub(r"^\$\.params", "$", text)
    return re.sub(r" is not one of \[.*\]$", " is not a known value", text)


def _keeps(written: Any, read: Any) -> bool:
    """Whether ``read`` says all that ``written`` says: the same values, with perhaps
    more members in its objects (fields added since ``written`` was written)."""
    if isinstance(written, dict):
        return isinstance(read, dict) and all(
            key in read and _keeps(value, read[key]) for key, value in written.items()
        )
    if isinstance(written, list):
        return (
            isinstance(read, list)
            and len(read) == len(written)
            and all(_keeps(w, r) for w, r in zip(written, read, strict=True))
        )
    return type(written) is type(read) and bool(written == read)


def _written_earlier(params: Any) -> dict[str, Any] | None:
    """An event line an earlier server wrote, before some of its fields existed, as this
    server writes it (each missing field at its default: SPEC.md says a field added in
    a MINOR version has one); None if the line is not that (it is damaged or made up)."""
    if not isinstance(params, dict) or not isinstance(params.get("event"), dict):
        return None
    try:
        event = event_to_dict(event_from_dict(params["event"]))
    except (ValueError, TypeError, KeyError):
        return None
    if not _keeps(params["event"], event):
        return None  # reading it changed what it says: not merely older
    upgraded = {**params, "event": event}
    try:
        validate_server_message({"method": "event", "params": upgraded})
    except ValueError:
        return None
    return upgraded


def load_log(path: str | Path) -> Log:
    """Read and check the log at ``path``; :class:`LogError` lists the first problems.

    Every line must be an ``event`` notification's params (the protocol's schema; a line
    an earlier server wrote, without the fields added since, is read with their
    defaults), seqs
    must run from 1 without gaps, every line must name the same encounter, the first
    event must be ``encounter_created`` (for that encounter), and the events must fold.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LogError([f"{path}: cannot read it: {exc}"]) from None
    problems: list[str] = []
    events: list[Event] = []
    lines: list[int] = []
    encounter: str | None = None
    expected = 1

    def problem(number: int, message: str) -> None:
        problems.append(f"{path}:{number}: {message}")

    for number, raw in enumerate(text.splitlines(), 1):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(f"{path}: (stopped after {MAX_PROBLEMS} problems)")
            break
        if not raw.strip():
            continue
        try:
            params = json.loads(raw)
        except json.JSONDecodeError as exc:
            problem(number, f"not JSON: {exc.msg} (column {exc.colno})")
            expected += 1
            continue
        try:
            validate_server_message({"method": "event", "params": params})
        except ValueError as exc:
            upgraded = _written_earlier(params)
            if upgraded is not None:
                params = upgraded
            else:
                problem(number, _schema_problem(exc))
                seq = params.get("seq") if isinstance(params, dict) else None
                expected = (
                    seq + 1 if isinstance(seq, int) and not isinstance(seq, bool) else expected + 1
                )
                continue
        seq = params["seq"]
        if seq != expected:
            if expected == 1:
                problem(number, f"seq {seq}: a log must start at seq 1")
            elif seq < expected:
                problem(number, f"seq {seq} again or out of order (expected {expected})")
            else:
                missing = f"{expected}" if seq == expected + 1 else f"{expected}-{seq - 1}"
                problem(number, f"seq {seq} after {expected - 1}: seq {missing} missing")
        expected = seq + 1
        if encounter is None:
            encounter = params["encounter"]
        elif params["encounter"] != encounter:
            problem(
                number,
                f"encounter {params['encounter']!r}, but the log is of encounter {encounter!r} "
                "(one encounter per file)",
            )
        try:
            event = event_from_dict(params["event"])
        except ValueError as exc:
            problem(number, f"event: {exc}")
            continue
        if not events and not isinstance(event, EncounterCreated):
            problem(number, f"the first event must be encounter_created, not {event.type}")
        elif events and isinstance(event, EncounterCreated):
            problem(number, "a second encounter_created")
        elif isinstance(event, EncounterCreated) and event.encounter != params["encounter"]:
            problem(
                number,
                f"encounter_created is of encounter {event.encounter!r}, "
                f"but the line says {params['encounter']!r}",
            )
        if isinstance(event, Rewound) and not 1 <= event.to_seq < seq:
            problem(number, f"rewound to seq {event.to_seq}, which is not an earlier event")
        events.append(event)
        lines.append(number)
    if not problems and not events:
        problems.append(f"{path}: no events in it")
    if problems:
        raise LogError(problems[: MAX_PROBLEMS + 1])
    assert encounter is not None
    # The events must fold: a log edited by hand may name creatures that do not exist.
    try:
        _fold(tuple(events), lines=lines)
    except _FoldError as exc:
        raise LogError([f"{path}:{exc.line}: {exc.message}"]) from None
    return Log(path, encounter, tuple(events))


class _FoldError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _fold(
    events: tuple[Event, ...],
    *,
    lines: list[int] | None = None,
    sentences: list[str] | None = None,
    catalog: PluginCatalog | None = None,
) -> EncounterState:
    """Fold ``events`` one by one (as :func:`zonekeep.sdk.replay` does), collecting the
    readable log in ``sentences``; :class:`_FoldError` names the line of an event that
    does not apply."""
    state = EncounterState()
    steps = replay_steps(events, catalog)
    for i, event in enumerate(events):
        # A sentence names creatures as they were before the event (as ``play`` does),
        # or after it while there were none yet.
        had_creatures = bool(state.creatures)
        text = describe(event, state, catalog) if sentences is not None and had_creatures else None
        try:
            state = next(steps)
        except Exception as exc:
            line = lines[i] if lines else i + 1
            raise _FoldError(line, f"seq {i + 1} ({event.type}) does not apply: {exc!r}") from None
        if sentences is not None:
            if not had_creatures:
                text = describe(event, state, catalog)
            if text:
                sentences.append(text)
    return state


@attrs.frozen
class Replayed:
    """A replayed log: its readable sentences and the final state."""

    log: Log
    sentences: tuple[str, ...]
    state: EncounterState

    @property
    def summary(self) -> str:
        s = self.state
        return f"{len(self.log.events)} events, {s.round} round(s), phase {s.phase!r}."


def replay_log(log: Log, catalog: PluginCatalog | None = None) -> Replayed:
    """The readable log of ``log`` and its final state (:func:`zonekeep.sdk.replay`),
    its plugin events folded with ``catalog`` (the engine's: the installed plugins)."""
    sentences: list[str] = []
    state = _fold(log.events, sentences=sentences, catalog=catalog)
    return Replayed(log, tuple(sentences), state)


# -- import ------------------------------------------------------------------------------------


@attrs.frozen
class Imported:
    """What :func:`import_log` did."""

    encounter: str
    store: Path
    events: int
    state: EncounterState
    gm_token: str

    @property
    def finished(self) -> bool:
        return self.state.phase == "ended"


def _renamed(events: tuple[Event, ...], new_id: str) -> tuple[Event, ...]:
    first = events[0]
    assert isinstance(first, EncounterCreated)
    data = event_to_dict(first)
    data["encounter"] = new_id
    return (event_from_dict(data), *events[1:])


async def import_log(
    log: Log,
    data_dir: str | Path,
    new_id: str | None = None,
    catalog: PluginCatalog | None = None,
) -> Imported:
    """Write ``log`` into the store of ``data_dir`` as encounter ``new_id`` (default:
    the log's own id), with a snapshot of its final state, marked finished if it has
    ended, and a new GM seat whose token is returned (only its hash is stored).

    :class:`ExportError` if the id is taken or not a valid id;
    :class:`~zonekeep.server._store.StoreError` if the store cannot be used.
    """
    from ._room import new_token, token_hash
    from ._sqlite import SqliteStore

    eid = log.encounter if new_id is None else new_id
    if new_id is not None and not _ID.fullmatch(new_id):
        raise ExportError(
            f"--as {new_id!r}: an encounter id is 1-100 letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or digit"
        )
    events = log.events if eid == log.encounter else _renamed(log.events, eid)
    state = replay(events, catalog)
    path = store_path(data_dir)
    store = await SqliteStore.open(path)
    try:
        if eid in await store.encounters():
            hint = "" if new_id is not None else "; import it under another id with --as NEW_ID"
            raise ExportError(f"{path}: there is already an encounter {eid!r}{hint}")
        await store.append(
            eid,
            1,
            events,
            snapshot=state_to_dict(state),
            finished=state.phase == "ended",
        )
        token = new_token()
        await store.add_grant(eid, StoredGrant(token_hash(token), "gm"))
    finally:
        await store.aclose()
    return Imported(eid, path, len(events), state, token)
