"""The operator's commands on a server's store: ``zonekeep gm ...`` (GM keys) and
``zonekeep encounters ...`` (list, show, archive, restore, delete).

They find the store as ``zonekeep serve`` does (``--data-dir``, else the config file's
``data_dir``, else the default data directory) and work on it while a server runs: the
SQLite file is shared (WAL; each side waits for the other's short write transaction),
and the server notices what they changed within a few seconds (it polls
``EventStore.outside_changes``). Each command is one short transaction.

Exit status: 0 done (also when there was nothing to do: archiving an archived
encounter); 1 not found (no such key, encounter or store) or the store cannot be used;
2 bad input (a name that is not valid, a key name taken, deleting an encounter that is
not archived, ``delete`` without ``--yes``). Messages go to standard error; standard
output carries only the result (a new key, a list, a record), so scripts can read it.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ._store import EncounterRecord, GmKey, StoreError

#: The store's file name inside the data directory (as ``ZonekeepServer.open_store`` uses).
STORE_FILE = "zonekeep.sqlite3"

#: GM key names: 1-64 letters, digits, ``-``, ``_`` or ``.``.
GM_KEY_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")

#: Bytes of randomness in a GM key (``secrets.token_urlsafe``: 43 characters).
GM_KEY_BYTES = 32

OK, NOT_FOUND, BAD_INPUT = 0, 1, 2

if TYPE_CHECKING:
    from ._sqlite import SqliteStore


class AdminError(Exception):
    """A command that cannot be done: its message and exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


# -- finding and opening the store --------------------------------------------------------------


def store_location(config_file: str | None, data_dir: str | None) -> Path:
    """The store file ``zonekeep serve --config config_file --data-dir data_dir`` uses."""
    import os

    from ._config import load_settings

    if data_dir is not None:
        return Path(data_dir) / STORE_FILE
    try:
        config = load_settings(config_file, os.environ).config
    except ValueError as exc:
        raise AdminError(str(exc), BAD_INPUT) from None
    if config.store != "sqlite":
        raise AdminError(
            f"{config_file}: store = {config.store!r}: the server keeps nothing on disk, so "
            "there is no store to manage",
            BAD_INPUT,
        )
    return Path(config.data_dir) / STORE_FILE


Action = Callable[["SqliteStore"], Awaitable[int]]


def _run(args: argparse.Namespace, action: Action, *, create: bool = False) -> int:
    """Open the store of ``args`` (making a new one only when ``create``), run ``action``
    on it, close it; report errors as the command's message and exit status."""
    import trio

    try:
        path = store_location(args.config, args.data_dir)
        if not create and not path.exists():
            raise AdminError(
                f"{path}: no store here (no server has kept encounters in this data "
                "directory); give the server's --data-dir or --config",
                NOT_FOUND,
            )
        return trio.run(_session, path, action)
    except AdminError as exc:
        print(f"zonekeep {args.what}: {exc}", file=sys.stderr)
        return exc.status
    except StoreError as exc:
        print(f"zonekeep {args.what}: {exc}", file=sys.stderr)
        return NOT_FOUND


async def _session(path: Path, action: Action) -> int:
    from ._sqlite import SqliteStore

    store = await SqliteStore.open(path)
    try:
        return await action(store)
    finally:
        await store.aclose()


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _table(header: Sequence[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [list(header), *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)) for r in rows]
    head = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    return "\n".join(line.rstrip() for line in [head, *lines])


# -- zonekeep gm ----------------------------------------------------------------------------------


def _gm_name(name: str) -> str:
    if not GM_KEY_NAME.fullmatch(name):
        raise AdminError(
            f"{name!r} is not a GM key name: use 1-64 letters, digits, '-', '_' or '.'",
            BAD_INPUT,
        )
    return name


def _gm_add(args: argparse.Namespace) -> int:
    from ._room import token_hash

    try:
        name = _gm_name(args.name)
    except AdminError as exc:
        _say(f"zonekeep gm add: {exc}")
        return exc.status
    key = secrets.token_urlsafe(GM_KEY_BYTES)

    async def add(store: SqliteStore) -> int:
        try:
            await store.add_gm_key(GmKey(name, token_hash(key), time.time()))
        except ValueError:
            raise AdminError(
                f"there is already a GM key named {name!r} (revoke it first to replace it)",
                BAD_INPUT,
            ) from None
        print(key, flush=True)
        _say(
            f"Added the GM key {name!r}. The key (on standard output) is shown this once: "
            "only its hash is stored. Give it to the GM; a running server accepts it "
            "within a few seconds."
        )
        return OK

    return _run(args, add, create=True)


def _gm_list(args: argparse.Namespace) -> int:
    async def show(store: SqliteStore) -> int:
        keys = await store.gm_keys()
        if args.json:
            print(json.dumps([{"name": k.name, "created": k.created} for k in keys], indent=2))
        elif keys:
            print(_table(("NAME", "CREATED"), [[k.name, _when(k.created)] for k in keys]))
        else:
            _say("No GM keys (add one with: zonekeep gm add NAME).")
        return OK

    return _run(args, show)


def _gm_revoke(args: argparse.Namespace) -> int:
    try:
        name = _gm_name(args.name)
    except AdminError as exc:
        _say(f"zonekeep gm revoke: {exc}")
        return exc.status

    async def revoke(store: SqliteStore) -> int:
        if not await store.revoke_gm_key(name):
            raise AdminError(f"no GM key named {name!r}", NOT_FOUND)
        _say(
            f"Revoked the GM key {name!r}. A running server notices within a few seconds "
            "and closes the connections it opened."
        )
        return OK

    return _run(args, revoke)


# -- zonekeep encounters --------------------------------------------------------------------------


def record_to_json(record: EncounterRecord) -> dict[str, Any]:
    """A record as ``--json`` prints it: its fields, times in Unix seconds."""
    data = attrs.asdict(record)
    data["players"] = list(record.players)
    return data


async def _record(store: SqliteStore, encounter: str) -> EncounterRecord:
    found = await store.get_record(encounter)
    if found is None:
        raise AdminError(f"{store.path}: no encounter {encounter!r}", NOT_FOUND)
    return found


def _encounters_list(args: argparse.Namespace) -> int:
    async def show(store: SqliteStore) -> int:
        records = await store.records()
        if not args.all:
            records = [r for r in records if r.status != "archived"]
        if args.json:
            print(json.dumps([record_to_json(r) for r in records], indent=2))
            return OK
        if not records:
            _say(
                "No encounters in the store."
                if args.all
                else "No open encounters (--all lists the archived ones too)."
            )
            return OK
        rows = [
            [
                r.id,
                r.status,
                r.phase,
                str(r.round),
                ",".join(r.players) or "-",
                _when(r.last_activity),
                r.creator or "-",
                r.title,
            ]
            for r in records
        ]
        header = ("ID", "STATUS", "PHASE", "ROUND", "SEATS", "LAST ACTIVITY", "CREATOR", "TITLE")
        print(_table(header, rows))
        return OK

    return _run(args, show)


def _encounters_show(args: argparse.Namespace) -> int:
    async def show(store: SqliteStore) -> int:
        record = await _record(store, args.encounter)
        events, last_seq, grants = await store.log_summary(record.id)
        if args.json:
            data = record_to_json(record)
            data.update(events=events, last_seq=last_seq, grants=grants)
            print(json.dumps(data, indent=2))
            return OK
        lines = [
            ("id", record.id),
            ("title", record.title),
            ("arena", record.arena),
            ("status", record.status),
            ("phase", f"{record.phase}, round {record.round}"),
            ("seats", ", ".join(record.players) or "-"),
            ("public", "yes" if record.public else "no"),
            ("creator", record.creator or "-"),
            ("created", _when(record.created)),
            ("last activity", _when(record.last_activity)),
            ("source", record.source or "-"),
            ("events", f"{events} (last seq {last_seq})"),
            ("grants", ", ".join(f"{n} {role}" for role, n in grants.items()) or "-"),
        ]
        for label, value in lines:
            print(f"{label + ':':<15}{value}")
        return OK

    return _run(args, show)


def _encounters_archive(args: argparse.Namespace) -> int:
    async def archive(store: SqliteStore) -> int:
        record = await _record(store, args.encounter)
        if record.status == "archived":
            _say(f"{record.id} is already archived.")
            return OK
        await store.set_status(record.id, "archived")
        _say(
            f"Archived {record.id}: a running server unloads it within a few seconds "
            f"(closing its connections). `zonekeep encounters restore {record.id}` "
            "brings it back."
        )
        return OK

    return _run(args, archive)


def _encounters_restore(args: argparse.Namespace) -> int:
    async def restore(store: SqliteStore) -> int:
        record = await _record(store, args.encounter)
        if record.status != "archived":
            _say(f"{record.id} is not archived (it is {record.status}).")
            return OK
        await store.set_status(record.id, "open", last_activity=time.time())
        _say(f"Restored {record.id}: it is open again and loads on its first join.")
        return OK

    return _run(args, restore)


def _encounters_delete(args: argparse.Namespace) -> int:
    async def delete(store: SqliteStore) -> int:
        record = await _record(store, args.encounter)
        if record.status != "archived":
            raise AdminError(
                f"{record.id} is {record.status}: archive it first "
                f"(zonekeep encounters archive {record.id})",
                BAD_INPUT,
            )
        events, _, _ = await store.log_summary(record.id)
        if not args.yes:
            raise AdminError(
                f"deleting {record.id} ({events} events) cannot be undone: add --yes "
                f"(zonekeep export {record.id} keeps a copy of its log)",
                BAD_INPUT,
            )
        await store.delete(record.id)
        _say(f"Deleted {record.id} and its {events} events.")
        return OK

    return _run(args, delete)


# -- the parsers --------------------------------------------------------------------------------


def add_admin_commands(sub: Any) -> None:
    """Add ``gm`` and ``encounters`` to the ``zonekeep`` parser's subcommands ``sub``."""

    def where(parser: argparse.ArgumentParser, what: str, func: Callable[..., int]) -> None:
        parser.add_argument(
            "--data-dir",
            default=None,
            help="the server's data directory (default: the config's data_dir, else "
            "~/.local/share/zonekeep)",
        )
        parser.add_argument(
            "--config", default=None, help="the server's config file (for its data_dir)"
        )
        parser.set_defaults(func=func, what=what)

    gm = sub.add_parser("gm", help="GM keys: who may create encounters and open the lobby")
    gm_sub = gm.add_subparsers(dest="gm_command", required=True)
    add = gm_sub.add_parser("add", help="add a GM key and print it (once)")
    add.add_argument("name", help="the key's name: 1-64 letters, digits, '-', '_' or '.'")
    where(add, "gm add", _gm_add)
    listing = gm_sub.add_parser("list", help="list the GM keys (names and dates, never keys)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    where(listing, "gm list", _gm_list)
    revoke = gm_sub.add_parser("revoke", help="revoke a GM key")
    revoke.add_argument("name", help="the key's name")
    where(revoke, "gm revoke", _gm_revoke)

    enc = sub.add_parser(
        "encounters", help="list, show, archive, restore or delete the stored encounters"
    )
    enc_sub = enc.add_subparsers(dest="encounters_command", required=True)
    listing = enc_sub.add_parser("list", help="list the encounters (open ones unless --all)")
    listing.add_argument("--all", action="store_true", help="include the archived ones")
    listing.add_argument("--json", action="store_true", help="print JSON")
    where(listing, "encounters list", _encounters_list)
    show = enc_sub.add_parser("show", help="show one encounter's record and log size")
    show.add_argument("encounter", help="the encounter id")
    show.add_argument("--json", action="store_true", help="print JSON")
    where(show, "encounters show", _encounters_show)
    archive = enc_sub.add_parser("archive", help="archive an encounter (out of play, kept)")
    archive.add_argument("encounter", help="the encounter id")
    where(archive, "encounters archive", _encounters_archive)
    restore = enc_sub.add_parser("restore", help="bring an archived encounter back")
    restore.add_argument("encounter", help="the encounter id")
    where(restore, "encounters restore", _encounters_restore)
    delete = enc_sub.add_parser("delete", help="delete an archived encounter for good")
    delete.add_argument("encounter", help="the encounter id")
    delete.add_argument("--yes", action="store_true", help="yes, delete it (required)")
    where(delete, "encounters delete", _encounters_delete)
