"""The operator's commands on a server's store: ``zonekeep gm ...`` (GM keys) and
``zonekeep encounters ...`` (list, show, archive, restore, delete).

They find the store as ``zonekeep serve`` does (``--store``, else ``--data-dir``, else
the config file's and the environment's ``store`` and ``data_dir``, else the default
data directory) and work on it while a server runs: the SQLite file is shared (WAL; each
side waits for the other's short write transaction), a PostgreSQL database too, and the
server notices what they changed within a few seconds (it polls
``EventStore.outside_changes``). Each command is one short transaction.

``zonekeep store copy`` moves a community's data from one store to another (a SQLite
file to a PostgreSQL database): :func:`copy_store`.

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
from typing import Any, Protocol

import attrs

from ._config import is_postgres_url, mask_url
from ._store import EncounterRecord, EventStore, GmKey, StoreError

#: The store's file name inside the data directory (as ``ZonekeepServer.open_store`` uses).
STORE_FILE = "zonekeep.sqlite3"

#: GM key names: 1-64 letters, digits, ``-``, ``_`` or ``.``.
GM_KEY_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")

#: Bytes of randomness in a GM key (``secrets.token_urlsafe``: 43 characters).
GM_KEY_BYTES = 32

OK, NOT_FOUND, BAD_INPUT = 0, 1, 2


class ManagedStore(EventStore, Protocol):
    """What the operator's commands use: a durable store (SQLite or PostgreSQL)."""

    @property
    def location(self) -> str:
        """The file, or the URL with its password masked, for messages."""
        ...

    async def log_summary(self, encounter: str) -> tuple[int, int, dict[str, int]]: ...

    async def adopt_dice_secret(self, secret: bytes) -> None: ...


class AdminError(Exception):
    """A command that cannot be done: its message and exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


# -- finding and opening the store --------------------------------------------------------------


def store_location(
    config_file: str | None, data_dir: str | None, store: str | None = None
) -> Path | str:
    """The store ``zonekeep serve --config config_file --data-dir data_dir --store store``
    uses: its SQLite file, or its PostgreSQL URL."""
    import os

    from ._config import load_settings

    if store is not None:
        if not is_postgres_url(store):
            raise AdminError(
                f"--store {mask_url(store)!r}: expected a postgresql:// URL (for a SQLite "
                "store, give its --data-dir)",
                BAD_INPUT,
            )
        return store
    if data_dir is not None:
        return Path(data_dir) / STORE_FILE
    try:
        config = load_settings(config_file, os.environ).config
    except ValueError as exc:
        raise AdminError(str(exc), BAD_INPUT) from None
    if is_postgres_url(config.store):
        return config.store
    if config.store != "sqlite":
        raise AdminError(
            f"{config_file}: store = {config.store!r}: the server keeps nothing on disk, so "
            "there is no store to manage",
            BAD_INPUT,
        )
    return Path(config.data_dir) / STORE_FILE


Action = Callable[[ManagedStore], Awaitable[int]]


def _run(args: argparse.Namespace, action: Action, *, create: bool = False) -> int:
    """Open the store of ``args`` (making a new one only when ``create``), run ``action``
    on it, close it; report errors as the command's message and exit status."""
    import trio

    try:
        path = store_location(args.config, args.data_dir, getattr(args, "store", None))
        if isinstance(path, Path) and not create and not path.exists():
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


async def open_managed(where: Path | str) -> ManagedStore:
    """Open the store at ``where`` (a SQLite file, or a PostgreSQL URL) for a command."""
    if isinstance(where, str):
        from ._postgres import PostgresStore

        return await PostgresStore.open(where, pool_size=1)
    from ._sqlite import SqliteStore

    return await SqliteStore.open(where)


async def _session(path: Path | str, action: Action) -> int:
    store = await open_managed(path)
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

    async def add(store: ManagedStore) -> int:
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
    async def show(store: ManagedStore) -> int:
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

    async def revoke(store: ManagedStore) -> int:
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


async def _record(store: ManagedStore, encounter: str) -> EncounterRecord:
    found = await store.get_record(encounter)
    if found is None:
        raise AdminError(f"{store.location}: no encounter {encounter!r}", NOT_FOUND)
    return found


def _encounters_list(args: argparse.Namespace) -> int:
    async def show(store: ManagedStore) -> int:
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
    async def show(store: ManagedStore) -> int:
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
    async def archive(store: ManagedStore) -> int:
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
    async def restore(store: ManagedStore) -> int:
        record = await _record(store, args.encounter)
        if record.status != "archived":
            _say(f"{record.id} is not archived (it is {record.status}).")
            return OK
        await store.set_status(record.id, "open", last_activity=time.time())
        _say(f"Restored {record.id}: it is open again and loads on its first join.")
        return OK

    return _run(args, restore)


def _encounters_delete(args: argparse.Namespace) -> int:
    async def delete(store: ManagedStore) -> int:
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


# -- zonekeep store copy ---------------------------------------------------------------------------

#: Events per append when copying a log.
COPY_CHUNK = 500


@attrs.frozen
class Copied:
    """What :func:`copy_store` copied."""

    encounters: int
    events: int
    grants: int
    gm_keys: int
    images: int = 0
    arenas: int = 0


async def copy_store(source: EventStore, target: ManagedStore, *, force: bool = False) -> Copied:
    """Copy everything of ``source`` into ``target`` through the store interface: each
    encounter's record, events (same seqs), latest snapshot, grants, ``finished`` mark
    and the sealed answers of its keyed token and lobby requests, the GM keys and the dice secret (so the copied encounters' fair dice stay
    verifiable), the map images (by their id, with their owner and last use, so quotas
    and the unused-image grace carry over) and the library arenas (with their owner).
    ``target`` must be empty (:class:`AdminError` otherwise) unless
    ``force``: then an encounter it has already is replaced by the source's, and so is a
    GM key or library arena of the same name (an image of the same id is the same
    image); but a target whose encounters' dice come from another
    secret is refused all the same. Only the latest snapshot of each encounter is
    copied (all that loading one needs). Nobody may be writing to ``source`` meanwhile
    (stop its server)."""
    there = await target.encounters()
    keys_there = {k.name for k in await target.gm_keys()}
    arenas_there = {a.name for a in await target.library_arenas()}
    images_there = await target.image_ids()
    if (there or keys_there or arenas_there or images_there) and not force:
        raise AdminError(
            f"the target already holds {len(there)} encounter(s), {len(keys_there)} GM "
            f"key(s), {len(images_there)} map image(s) and {len(arenas_there)} library "
            "arena(s); copy into an empty store, or give --force to replace those the "
            "source has too",
            BAD_INPUT,
        )
    secret = await source.dice_secret()
    if there and await target.dice_secret() != secret:
        raise AdminError(
            "the target's encounters roll their fair dice from another dice secret than the "
            "source's, so one of the two sets could not be verified any more; copy into an "
            "empty store",
            BAD_INPUT,
        )
    await target.adopt_dice_secret(secret)
    unfinished = {s.id for s in await source.unfinished()}
    events = grants = 0
    ids = await source.encounters()
    for eid in ids:
        if eid in there:
            await target.delete(eid)
        stored = await source.load(eid)
        record = await source.get_record(eid)
        if record is not None:
            await target.put_record(record)
        log = await source.read(eid)
        if log and (await source.oldest_kept(eid) != 1 or log[0][0] != 1):
            raise AdminError(f"{eid}: the source has lost its first events", NOT_FOUND)
        start = 0
        while start < len(log):
            end = min(start + COPY_CHUNK, len(log))
            if stored is not None and stored.snapshot is not None:
                snap_at = stored.snapshot_seq - 1  # its index in ``log``
                if start <= snap_at < end - 1:
                    end = snap_at + 1  # a chunk ends where the snapshot was taken
            chunk = log[start:end]
            last_seq = chunk[-1][0]
            await target.append(
                eid,
                chunk[0][0],
                [e for _, e in chunk],
                snapshot=stored.snapshot
                if stored is not None and stored.snapshot_seq == last_seq
                else None,
                finished=end == len(log) and eid not in unfinished,
            )
            start = end
        events += len(log)
        for grant in stored.grants if stored is not None else ():
            await target.add_grant(eid, grant)
            grants += 1
        for scope, request_id, sealed in await source.requests_of(eid):
            await target.put_request(eid, scope, request_id, sealed)
    keys = await source.gm_keys()
    for key in keys:
        if key.name in keys_there:
            await target.revoke_gm_key(key.name)
        await target.add_gm_key(key)
    image_ids = await source.image_ids()
    for image_id in image_ids:
        blob = await source.get_image(image_id)
        if blob is None:  # deleted meanwhile (nobody should be writing to the source)
            raise AdminError(f"map image {image_id}: gone from the source", NOT_FOUND)
        await target.put_image(blob)
    arenas = await source.library_arenas()
    for arena in arenas:
        if arena.name in arenas_there:
            await target.delete_arena(arena.name, None)
        # No quota here: the operator moves what the source holds, all of it.
        outcome = await target.save_arena(arena, len(arenas) + len(arenas_there) + 1)
        if outcome not in ("created", "replaced"):  # pragma: no cover (deleted above)
            raise AdminError(f"library arena {arena.name}: {outcome}", BAD_INPUT)
    return Copied(len(ids), events, grants, len(keys), len(image_ids), len(arenas))


def _store_copy(args: argparse.Namespace) -> int:
    import trio

    def where(text: str) -> Path | str:
        return text if is_postgres_url(text) else Path(text)

    source, target = where(args.source), where(args.target)
    if isinstance(source, Path) and not source.is_file():
        _say(f"zonekeep store copy: {source}: no such store file")
        return NOT_FOUND
    if source == target:
        _say("zonekeep store copy: --from and --to are the same store")
        return BAD_INPUT

    async def copy() -> Copied:
        src = await open_managed(source)
        try:
            dst = await open_managed(target)
            try:
                return await copy_store(src, dst, force=args.force)
            finally:
                await dst.aclose()
        finally:
            await src.aclose()

    try:
        done = trio.run(copy)
    except AdminError as exc:
        _say(f"zonekeep store copy: {exc}")
        return exc.status
    except StoreError as exc:
        _say(f"zonekeep store copy: {exc}")
        return NOT_FOUND
    shown = mask_url(target) if isinstance(target, str) else str(target)
    _say(
        f"Copied {done.encounters} encounter(s) ({done.events} events, {done.grants} seats "
        f"and links), {done.gm_keys} GM key(s), {done.images} map image(s) and "
        f"{done.arenas} library arena(s) into {shown}. Start the server on it: "
        "zonekeep serve --store ..."
    )
    return OK


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
            "--config", default=None, help="the server's config file (for its store)"
        )
        parser.add_argument(
            "--store",
            default=None,
            metavar="URL",
            help="the server's PostgreSQL store, postgresql://... (default: the config's)",
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

    store = sub.add_parser("store", help="move a community's store (SQLite to PostgreSQL)")
    store_sub = store.add_subparsers(dest="store_command", required=True)
    copy = store_sub.add_parser(
        "copy",
        help="copy every encounter (events, snapshot, seats, record) and GM key into "
        "another store; stop the server first",
    )
    copy.add_argument(
        "--from",
        dest="source",
        required=True,
        help="the store to copy: a zonekeep.sqlite3 file (or a postgresql:// URL)",
    )
    copy.add_argument(
        "--to",
        dest="target",
        required=True,
        help="the store to fill: postgresql://user@host/db (or a SQLite file)",
    )
    copy.add_argument(
        "--force",
        action="store_true",
        help="copy into a store that is not empty (replacing its encounters and GM keys "
        "of the same ids and names)",
    )
    copy.set_defaults(func=_store_copy, what="store copy")
