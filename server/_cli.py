"""The ``zonekeep`` command line."""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zonekeep.sdk import ArenaError, EncounterState, Event, RandomEntropy
from zonekeep.sdk.engine import Engine, PluginConflict, PluginLoadError, describe_plugins
from zonekeep.sdk.host import CompendiumError, event_to_dict, state_to_dict

from ._admin import add_admin_commands
from ._bundled import find_example
from ._compendium import build_compendium
from ._config import (
    MASK,
    VERSION,
    ConfigError,
    ServerConfig,
    Settings,
    is_postgres_url,
    load_settings,
    mask_url,
    to_toml,
)
from ._encounter_file import EncounterFileError, load_encounter
from ._links import (
    ExampleTokens,
    PublicUrlError,
    listen_address,
    load_example_tokens,
    only_this_machine,
    save_example_tokens,
    server_links,
)
from ._log import describe
from ._play import open_table, play_to_end
from ._plugin_data import plugin_settings_problems
from ._registry import ArenaLibraryError, plugin_arenas
from ._store import StoreError

if TYPE_CHECKING:
    from zonekeep.protocol.conformance import Problem

    from ._app import ZonekeepServer
    from ._room import Role, Room


def _play(args: argparse.Namespace) -> int:
    # The installed plugins too, as ``serve`` runs them: an encounter file may be written
    # for a plugin's arena (examples/plugins/wildfire's forge).
    engine = _plugin_engine(args.config)
    if isinstance(engine, int):
        return engine
    try:
        spec = load_encounter(args.file, engine)
    except (EncounterFileError, ArenaError) as exc:
        print(exc, file=sys.stderr)
        return 2
    out = sys.stdout

    def show(event: Event, state: EncounterState) -> None:
        if args.json:
            out.write(json.dumps(event_to_dict(event), sort_keys=True) + "\n")
            return
        text = describe(event, state, engine.catalog)
        if text:
            out.write(text + "\n")

    table = open_table(engine, spec, RandomEntropy(args.seed), on_event=show)
    final = play_to_end(table)
    if not args.json:
        out.write(f"\n{len(table.events)} events, {final.round} round(s).\n")
    return 0


#: The ``serve`` flags that set a config key (``--data-dir`` sets ``server.data_dir``).
_SERVE_FLAGS = (
    "host",
    "port",
    "server_key",
    "data_dir",
    "store",
    "node_id",
    "public_url",
    "durability",
    "log_level",
    "log_format",
)

SERVER_KEY_WARNING = (
    "zonekeep: warning: --server-key shows the key to everyone on this machine who can "
    "list processes (ps). Put it in a file named by server_key_file (config) or "
    "ZONEKEEP_SERVER_SERVER_KEY_FILE, or in ZONEKEEP_SERVER_SERVER_KEY."
)


def _settings(
    config_file: str | None, flags: dict[str, object] | None = None
) -> Settings | list[str]:
    """The settings from ``config_file``, the environment and ``flags``; or the problems."""
    try:
        return load_settings(config_file, os.environ, flags)
    except ConfigError as exc:
        return exc.problems


def _plugin_setting_flags(given: Sequence[str]) -> dict[str, dict[str, Any]] | list[str]:
    """``--plugin-setting PLUGIN.ID=VALUE`` flags as plugin settings (the value read as
    JSON, else as text; the plugin's name may hold dots, the id does not); or the
    problems."""
    found: dict[str, dict[str, Any]] = {}
    problems = []
    for item in given:
        name, sep, text = item.partition("=")
        plugin, dot, key = name.strip().rpartition(".")
        if not sep or not dot or not plugin or not key:
            problems.append(f"--plugin-setting {item!r}: write PLUGIN.SETTING=VALUE")
            continue
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        found.setdefault(plugin, {})[key] = value
    return problems or found


def _print_problems(problems: list[str]) -> int:
    for problem in problems:
        print(problem, file=sys.stderr)
    return 2


def _serve(args: argparse.Namespace) -> int:
    import trio

    from ._app import ZonekeepServer, serve_until_signalled
    from ._log import configure_logging

    if args.server_key is not None:
        print(SERVER_KEY_WARNING, file=sys.stderr)
    flags: dict[str, object] = {
        f"server.{name}": getattr(args, name)
        for name in _SERVE_FLAGS
        if getattr(args, name) is not None
    }
    if args.plugin_setting:
        parsed = _plugin_setting_flags(args.plugin_setting)
        if isinstance(parsed, list):
            return _print_problems(parsed)
        flags["server.plugin_settings"] = parsed
    loaded = _settings(args.config, flags)
    if isinstance(loaded, list):
        return _print_problems(loaded)
    config = loaded.config
    configure_logging(config.log_level, config.log_format)

    def reload_config() -> ServerConfig:  # SIGHUP: the same file, environment and flags
        return load_settings(args.config, os.environ, flags).config

    try:
        engine = Engine.from_config(config.plugins_enabled, config.plugins_disabled)
    except (PluginLoadError, PluginConflict) as exc:
        print(f"zonekeep: cannot load the plugins: {exc}", file=sys.stderr)
        return 2
    spec = None
    if args.example:
        try:
            spec = load_encounter(find_example(args.example), engine)
        except (EncounterFileError, ArenaError) as exc:
            print(exc, file=sys.stderr)
            return 2
    try:
        server = ZonekeepServer(config, engine=engine)
    except ConfigError as exc:  # the plugin settings, against the plugins loaded
        return _print_problems(exc.problems)
    except CompendiumError as exc:
        print(f"zonekeep: cannot load the compendium:\n{exc}", file=sys.stderr)
        return 2
    except ArenaLibraryError as exc:
        print(f"zonekeep: cannot load the plugins' arenas:\n{exc}", file=sys.stderr)
        return 2

    try:
        server_links(config.public_url, config.host, config.port)
    except PublicUrlError as exc:
        print(f"zonekeep: {exc}", file=sys.stderr)
        return 2

    async def ready(running: ZonekeepServer) -> None:
        port = running.port if running.port is not None else config.port
        here = listen_address(config.host, port)
        links = server_links(config.public_url, config.host, port)
        print(f"zonekeep {VERSION} serving on ws://{here}/ws  (health: http://{here}/healthz)")
        print(f"Home: {links.web_table}  (open it to build encounters and hand out links)")
        if config.public_url:
            print(f"Players reach it at {links.websocket}  (web table: {links.web_table})")
        elif only_this_machine(config.public_url, config.host):
            print(
                "Only this machine can open these links: for players on other devices, "
                "serve with --host 0.0.0.0 or set public_url."
            )
        if config.store == "sqlite":
            print(f"Encounters are kept in {config.data_dir}.")
        elif config.store != "memory":
            print(f"Encounters are kept in {mask_url(config.store)}.")
            node = running.registry.node
            if node is not None:
                print(f"This is node {node.id}; other nodes send its players to {node.url}.")
        waiting = len(await running.store.records(status="open"))
        if waiting:
            print(f"{waiting} unfinished encounter(s) in the store, each loaded on its first join.")
        if spec is not None:
            room, gm_token, reused = await running.registry.reuse_or_open_file(
                spec, Path(args.example)
            )
            players = sorted({c.controller for c in spec.creatures if c.controller != "gm"})
            kept_in = None if config.store == "memory" else config.data_dir
            tokens = await _example_tokens(
                running, room, gm_token, players, kept_in, args.new_links and reused
            )
            print(f"\nEncounter '{spec.name}' is {'back' if reused else 'ready'}: {room.id}")
            print(f"  GM token:         {tokens.gm}")
            print(f"    web table:      {links.table_link(room.id, tokens.gm)}")
            for player in players:
                names = ", ".join(c.name for c in spec.creatures if c.controller == player)
                token = tokens.seats[player]
                print(f"  seat {player + ':':<12} {token}   ({names})")
                print(f"    web table:      {links.table_link(room.id, token)}")
            spectator = tokens.spectator or ""
            print(f"  spectators:       {spectator}")
            print(f"    web table:      {links.table_link(room.id, spectator)}")
            print(
                "\nConnect with any client: send hello, then "
                f'join {{"encounter": "{room.id}", "token": "<a token above>"}}.'
            )
        print("Stop with Ctrl-C.", flush=True)

    try:
        trio.run(serve_until_signalled, server, ready, reload_config)
    except (StoreError, OSError, BaseExceptionGroup) as exc:
        line = _start_failure(exc, config, listening=server.port is not None)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 1
    return 0


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``, however deeply grouped (trio's nurseries group
    what their tasks raise)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _start_failure(exc: BaseException, config: ServerConfig, *, listening: bool) -> str | None:
    """The one line that says why ``serve`` stopped (issue 27: a port in use printed a
    33-line ExceptionGroup): a store that cannot be used, or, before it was
    ``listening``, an address it cannot listen on; ``None`` for anything else (a bug:
    its traceback is shown)."""
    leaves = _leaves(exc)
    allowed = StoreError if listening else (StoreError, OSError)
    if not leaves or not all(isinstance(e, allowed) for e in leaves):
        return None
    first = leaves[0]
    if isinstance(first, StoreError):
        return f"zonekeep: {first}"
    assert isinstance(first, OSError)
    where = listen_address(config.host, config.port)
    reason = first.strerror or str(first)
    hint = ""
    if first.errno == errno.EADDRINUSE:
        hint = " (another program listens there: stop it, or choose another port with --port)"
    elif first.errno == errno.EACCES:
        hint = " (ports below 1024 need privileges: choose another with --port)"
    return f"zonekeep: cannot listen on {where}: {reason}{hint}"


class _NoDataDir(Exception):
    """The config names no SQLite data directory (problems printed, exit 2)."""


async def _example_tokens(
    running: ZonekeepServer,
    room: Room,
    gm_token: str | None,
    players: list[str],
    kept_in: Path | None,
    new_links: bool,
) -> ExampleTokens:
    """The tokens ``serve --example`` prints for ``room``: the ones it printed before
    (kept in ``kept_in``) while they still open their seats, a new one for each that
    does not (never revoking any), or, with ``new_links``, fresh links as
    ``encounter_links`` gives them (the old GM tokens revoked)."""
    if new_links:
        fresh = await running.registry.fresh_links(room)
        tokens = ExampleTokens(fresh.gm_token, dict(fresh.seats), fresh.spectator_token)
    else:
        saved = load_example_tokens(kept_in, room.id) if kept_in is not None else None

        async def kept(token: str | None, role: Role, player: str | None = None) -> str:
            grant = room.find_grant(token) if token else None
            if token and grant is not None and (grant.role, grant.player) == (role, player):
                return token
            return await room.grant(role, player)

        gm = gm_token or await kept(saved.gm if saved else None, "gm")
        seats = {p: await kept(saved.seats.get(p) if saved else None, "player", p) for p in players}
        spectator = await kept(saved.spectator if saved else None, "spectator")
        tokens = ExampleTokens(gm, seats, spectator)
    if kept_in is not None:
        save_example_tokens(kept_in, room.id, tokens)
    return tokens


def _proxy(args: argparse.Namespace) -> int:
    """``zonekeep proxy``: pass a client's frames to a server and back; with ``--check``,
    report every client message that breaks the schemas or the protocol."""
    import signal

    import trio

    from ._proxy import Proxy, SessionPlayer, read_session

    if (args.upstream is None) == (args.play is None):
        print(
            "zonekeep proxy: give --upstream URL or --play SESSION (one of them)", file=sys.stderr
        )
        return 2
    report_file = open(args.report, "w", encoding="utf-8") if args.report else None  # noqa: SIM115
    record_file = open(args.record, "w", encoding="utf-8") if args.record else None  # noqa: SIM115

    def report(problem: Problem) -> None:
        if not args.check and args.play is None:
            return
        print(f"zonekeep proxy: {problem.rule}: {problem.message}", file=sys.stderr, flush=True)
        if report_file is not None:
            report_file.write(problem.to_json() + "\n")
            report_file.flush()

    def record(entry: dict[str, Any]) -> None:
        if record_file is not None:
            record_file.write(json.dumps(entry, ensure_ascii=False) + "\n")
            record_file.flush()

    player = None
    if args.play is not None:
        try:
            entries = read_session(Path(args.play).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"zonekeep proxy: cannot read the session {args.play}: {exc}", file=sys.stderr)
            return 2
        player = SessionPlayer(entries, report)
    proxy = Proxy(args.upstream or "", report, record)
    run = player.run if player is not None else proxy.run
    target = f"the recorded session {args.play}" if args.play else args.upstream

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(run, args.host, args.port)
            print(
                f"zonekeep proxy on ws://{listen_address(args.host, port)}/ws -> {target}"
                + ("  (checking the client's messages)" if args.check else ""),
                flush=True,
            )
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break

    try:
        trio.run(main)
    except OSError as exc:
        print(f"zonekeep proxy: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    finally:
        for opened in (report_file, record_file):
            if opened is not None:
                opened.close()
    found = player.problems if player is not None else proxy.checker.problems
    if args.check or player is not None:
        print(f"zonekeep proxy: {len(found)} problem(s) in the client's messages", flush=True)
        return 1 if found else 0
    return 0


def _data_dir(args: argparse.Namespace) -> Path:
    """The SQLite data directory ``zonekeep serve`` would use with the same
    ``--data-dir`` and ``--config``: the flag, else the config file's and the
    environment's ``data_dir``, else the default (issue 27: export and import used the
    default whatever the config said). :class:`_NoDataDir` (after printing why) when the
    config has problems or keeps its encounters elsewhere than in a SQLite file."""
    if args.data_dir is not None:
        return Path(args.data_dir)
    loaded = _settings(args.config)
    if isinstance(loaded, list):
        _print_problems(loaded)
        raise _NoDataDir
    config = loaded.config
    if config.store != "sqlite":
        where = mask_url(config.store)
        print(
            f"zonekeep {args.command}: the config's store is {where}, not a SQLite data "
            "directory: export and import read and write SQLite stores only (give "
            "--data-dir, or move the encounters with zonekeep store copy)",
            file=sys.stderr,
        )
        raise _NoDataDir
    return config.data_dir


def _export(args: argparse.Namespace) -> int:
    from ._export import ExportError, export_encounter, export_to_file

    try:
        data_dir = _data_dir(args)
    except _NoDataDir:
        return 2
    try:
        if args.output is None:
            export_encounter(data_dir, args.encounter, sys.stdout)
            sys.stdout.flush()
        else:
            count = export_to_file(data_dir, args.encounter, args.output)
            print(f"Exported {count} events of {args.encounter} to {args.output}.", file=sys.stderr)
    except ExportError as exc:
        print(f"zonekeep export: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise
    except OSError as exc:
        print(f"zonekeep export: {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _plugin_engine(config_file: str | None) -> Engine | int:
    """The engine of the installed plugins (as ``serve`` would run them with
    ``config_file``), whose event types fold a log's plugin events; or the exit code
    after printing why it cannot be built."""
    loaded = _settings(config_file)
    if isinstance(loaded, list):
        return _print_problems(loaded)
    try:
        return Engine.from_config(loaded.config.plugins_enabled, loaded.config.plugins_disabled)
    except (PluginLoadError, PluginConflict) as exc:
        print(f"zonekeep: cannot load the plugins: {exc}", file=sys.stderr)
        return 2


def _replay(args: argparse.Namespace) -> int:
    from ._export import LogError, load_log, replay_log

    engine = _plugin_engine(args.config)
    if isinstance(engine, int):
        return engine
    try:
        replayed = replay_log(load_log(args.file), engine.catalog)
    except LogError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    out = sys.stdout
    if args.json:
        out.write(json.dumps(state_to_dict(replayed.state), indent=2, sort_keys=True) + "\n")
        return 0
    for sentence in replayed.sentences:
        out.write(sentence + "\n")
    out.write(f"\n{replayed.summary}\n")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """``zonekeep verify FILE``: 0 when the dice verify, 1 (naming the first roll that
    fails) when they do not."""
    from ._dice import verify_export

    ok, lines = verify_export(args.file)
    for line in lines:
        print(line, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def _import(args: argparse.Namespace) -> int:
    import trio

    from ._export import ExportError, LogError, import_log, load_log

    try:
        log = load_log(args.file)
    except LogError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    engine = _plugin_engine(args.config)
    if isinstance(engine, int):
        return engine
    try:
        data_dir = _data_dir(args)
    except _NoDataDir:
        return 2
    try:
        done = trio.run(import_log, log, data_dir, args.new_id, engine.catalog)
    except ExportError as exc:
        print(f"zonekeep import: {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"zonekeep import: {exc}", file=sys.stderr)
        return 1
    s = done.state
    print(
        f"Imported encounter {done.encounter} ({done.events} events, round {s.round}, "
        f"phase {s.phase!r}) into {done.store}."
    )
    print(f"  GM token: {done.gm_token}")
    if done.finished:
        print("It has ended, so a server keeps it in the store but does not bring it back to play.")
    else:
        print(
            "A server started on this data directory brings it back; join it with the GM "
            "token and create seats for the players (their old tokens were not exported)."
        )
    print("A server already running on this data directory loads it on its first join.")
    return 0


def _plugins(args: argparse.Namespace) -> int:
    loaded = _settings(args.config)
    if isinstance(loaded, list):
        return _print_problems(loaded)
    config = loaded.config
    try:
        engine = Engine.from_config(config.plugins_enabled, config.plugins_disabled)
    except (PluginLoadError, PluginConflict) as exc:
        print(f"zonekeep: {exc}", file=sys.stderr)
        return 2
    print(describe_plugins(engine))
    return 0


def _config_check(args: argparse.Namespace) -> int:
    loaded = _settings(args.config)
    if isinstance(loaded, list):
        return _print_problems(loaded)
    config = loaded.config
    try:  # the plugin names too: serve would stop on an unknown one
        engine = Engine.from_config(config.plugins_enabled, config.plugins_disabled)
    except (PluginLoadError, PluginConflict) as exc:
        return _print_problems([f"plugins: {exc}"])
    problems = plugin_settings_problems(config, engine)  # checked against the plugins
    if problems:
        return _print_problems(problems)
    try:  # and the compendium: serve would stop on a clash or a broken file
        build_compendium(config, engine)
    except CompendiumError as exc:
        return _print_problems([f"compendium: {p}" for p in exc.problems])
    try:  # and the plugins' arenas, likewise
        plugin_arenas(engine)
    except ArenaLibraryError as exc:
        return _print_problems([f"arenas: {p}" for p in exc.problems])
    problem = _reach_store(config.store, args.connect_timeout)  # and the database
    if problem is not None:
        source = loaded.sources.get("server.store")
        label = source if source and source.startswith(("ZONEKEEP_", "--")) else "server.store"
        if source and label == "server.store":
            label = f"{source}: server.store"
        return _print_problems([f"{label}: {problem}"])
    print("ok")
    return 0


def _seconds(text: str) -> float:
    """A number of seconds from 1 to 300 (``--connect-timeout``)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 1 <= value <= 300:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 1 to 300")
    return value


#: Seconds ``zonekeep config check`` waits for a PostgreSQL store to answer by default.
CHECK_CONNECT_SECONDS = 5.0


def _reach_store(store: str, seconds: float) -> str | None:
    """Why the PostgreSQL store ``store`` cannot be reached within ``seconds`` (connect,
    log in, ``SELECT 1``; nothing is made or changed), or ``None`` when it answers or is
    not a PostgreSQL store. The URL's password never appears in the answer."""
    if not is_postgres_url(store):
        return None
    where = mask_url(store)
    try:
        import psycopg
    except ImportError:
        return f"{where}: a PostgreSQL store needs psycopg 3: pip install 'zonekeep[postgresql]'"
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            # libpq's connect_timeout is whole seconds, 2 at least; the join below bounds it too
            with psycopg.connect(store, connect_timeout=max(2, math.ceil(seconds))) as conn:
                conn.execute("SELECT 1")
            outcome.append(None)
        except Exception as exc:  # psycopg.Error, or a URL libpq cannot parse
            text = str(exc).strip().splitlines()
            outcome.append(text[0] if text else type(exc).__name__)

    worker = threading.Thread(target=attempt, name="zonekeep-config-check", daemon=True)
    worker.start()
    worker.join(max(2.0, seconds) + 1.0)
    if not outcome:
        return f"cannot reach {where}: no answer within {seconds:g} s"
    reason = outcome[0]
    if reason is None:
        return None
    for secret in _url_secrets(store):
        reason = reason.replace(secret, MASK)
    return f"cannot reach {where}: {reason}"


def _url_secrets(url: str) -> list[str]:
    """The password of a store's URL (in its user part or a ``password=`` parameter)."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    for key, values in parse_qs(parts.query).items():
        if key.lower() == "password":
            found.extend(v for v in values if v)
    return found


def _config_show(args: argparse.Namespace) -> int:
    loaded = _settings(args.config)
    if isinstance(loaded, list):
        return _print_problems(loaded)
    sys.stdout.write(to_toml(loaded))
    return 0


def version_text() -> str:
    """``zonekeep <version>`` (the installed distribution's, else :data:`VERSION`) and
    the protocol's version on a second line."""
    from importlib.metadata import PackageNotFoundError, version

    from zonekeep.protocol import PROTOCOL_VERSION

    try:
        installed = version("zonekeep")
    except PackageNotFoundError:
        installed = VERSION
    return f"zonekeep {installed}\nprotocol {PROTOCOL_VERSION}\n"


class _Version(argparse.Action):
    """``--version``: print :func:`version_text` as it is (argparse's own version
    action rewraps it into one line) and exit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help=kwargs.get("help"))

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        sys.stdout.write(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zonekeep", description="A server for zone-based tabletop-RPG combat encounters."
    )
    parser.add_argument(
        "--version", action=_Version, help="print the version and the protocol's, then exit"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser(
        "play", help="play an encounter file to its end in-process and print the log"
    )
    play.add_argument(
        "file", help="an encounter file, such as examples/encounters/goblin-ambush.json"
    )
    play.add_argument("--seed", type=int, default=None, help="seed the dice for a repeatable fight")
    play.add_argument("--json", action="store_true", help="print the events as JSON lines")
    play.add_argument(
        "--config",
        default=None,
        help="a server config: its plugins_enabled/disabled choose the plugins that play "
        "(default: every installed plugin, as zonekeep serve)",
    )
    play.set_defaults(func=_play)
    serve = sub.add_parser("serve", help="run the websocket server")
    serve.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=None, help="port (default 8765; 0 picks a free one)"
    )
    serve.add_argument(
        "--config",
        default=None,
        help="a TOML config file ([server] and [limits]; docs/configuration.md); "
        "ZONEKEEP_<SECTION>_<KEY> variables and these flags override it",
    )
    serve.add_argument(
        "--server-key",
        default=None,
        help="require this key to create encounters (visible in ps: prefer server_key_file "
        "or ZONEKEEP_SERVER_SERVER_KEY)",
    )
    serve.add_argument(
        "--example",
        default=None,
        help="open this encounter file (or bundled example, such as goblin-ambush) at start "
        "and print its tokens (after a restart: the same encounter and the same tokens)",
    )
    serve.add_argument(
        "--new-links",
        action="store_true",
        help="with --example: print fresh links to the reused encounter, revoking its old "
        "GM tokens (as the GM's encounter_links)",
    )
    serve.add_argument(
        "--data-dir",
        default=None,
        help="where encounters are kept (default ~/.local/share/zonekeep)",
    )
    serve.add_argument(
        "--store",
        default=None,
        metavar="STORE",
        help="sqlite (default), memory, or postgresql://user@host/db (a password there is "
        "seen by everyone on this machine: prefer ZONEKEEP_SERVER_STORE or ~/.pgpass)",
    )
    serve.add_argument(
        "--node-id",
        default=None,
        help="this node's id among several sharing a PostgreSQL store (default: the "
        "machine's name, the process id and six random hex digits, new at every start; "
        "docs/scale-out.md)",
    )
    serve.add_argument(
        "--public-url",
        default=None,
        help="the URL players reach this server (or node) at, e.g. https://example.org/zk/ "
        "(behind a proxy; docs/deploy.md, docs/scale-out.md)",
    )
    serve.add_argument(
        "--durability",
        choices=("full", "normal"),
        default=None,
        help="full (default): durable before anyone sees it; normal: faster (docs/storage.md)",
    )
    serve.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default=None,
        help="log this level and above (default info)",
    )
    serve.add_argument(
        "--plugin-setting",
        action="append",
        default=[],
        metavar="PLUGIN.SETTING=VALUE",
        help="set a plugin's setting server-wide, such as hazards.burn_die=1d8 (repeatable; "
        "the value is read as JSON, else as text; docs/plugins.md)",
    )
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default=None,
        help="text (default): readable lines; json: one JSON object per line",
    )
    serve.set_defaults(func=_serve)
    config_cmd = sub.add_parser(
        "config", help="check or show the config (file, ZONEKEEP_ variables, defaults)"
    )
    config_actions = config_cmd.add_subparsers(dest="action", required=True)
    for name, func, text in (
        (
            "check",
            _config_check,
            "check the config and that its PostgreSQL store answers; print ok, or every "
            "problem (exit 2)",
        ),
        (
            "show",
            _config_show,
            "print the config in force as TOML (a config file as it is), secrets masked",
        ),
    ):
        action = config_actions.add_parser(name, help=text)
        action.add_argument("--config", default=None, help="a TOML config file")
        action.set_defaults(func=func)
        if name == "check":
            action.add_argument(
                "--connect-timeout",
                type=_seconds,
                default=CHECK_CONNECT_SECONDS,
                metavar="SECONDS",
                help="how long to wait for a PostgreSQL store to answer (default "
                f"{CHECK_CONNECT_SECONDS:g})",
            )
    plugins = sub.add_parser(
        "plugins", help="list the plugins a server would load, their versions and commands"
    )
    plugins.add_argument(
        "--config", default=None, help="a server config (plugins_enabled/disabled)"
    )
    plugins.set_defaults(func=_plugins)
    data_help = (
        "the server's data directory (default: the config's and the environment's "
        "data_dir, as for zonekeep serve, else ~/.local/share/zonekeep)"
    )
    export = sub.add_parser(
        "export", help="write an encounter's event log from the store as JSON Lines"
    )
    export.add_argument("encounter", help="the encounter id")
    export.add_argument("--data-dir", default=None, help=data_help)
    export.add_argument(
        "--config", default=None, help="the server's config file (its data_dir is the store's)"
    )
    export.add_argument(
        "-o", "--output", default=None, help="write to this file (default: standard output)"
    )
    export.set_defaults(func=_export)
    replay_cmd = sub.add_parser(
        "replay", help="check an exported log and print the fight it records"
    )
    replay_cmd.add_argument("file", help="an exported log (JSON Lines)")
    replay_cmd.add_argument(
        "--json", action="store_true", help="print the final state as JSON instead"
    )
    plugins_help = (
        "a server config: its plugins_enabled/disabled choose the plugins whose events "
        "the log's plugin events are folded with (default: every installed plugin)"
    )
    replay_cmd.add_argument("--config", default=None, help=plugins_help)
    replay_cmd.set_defaults(func=_replay)
    import_cmd = sub.add_parser(
        "import", help="check an exported log and add it to the store as an encounter"
    )
    import_cmd.add_argument("file", help="an exported log (JSON Lines)")
    import_cmd.add_argument("--data-dir", default=None, help=data_help)
    import_cmd.add_argument(
        "--as", dest="new_id", default=None, metavar="NEW_ID", help="import under this id"
    )
    import_cmd.add_argument(
        "--config",
        default=None,
        help=plugins_help + "; its data_dir is the store imported into, as for zonekeep serve",
    )
    import_cmd.set_defaults(func=_import)
    verify_cmd = sub.add_parser(
        "verify",
        help="check the dice of an exported log: commitments, every roll, the reveals",
    )
    verify_cmd.add_argument("file", help="an exported log (JSON Lines)")
    verify_cmd.set_defaults(func=_verify)
    proxy = sub.add_parser(
        "proxy",
        help="a websocket proxy between a client and a server; --check reports every "
        "client message that breaks the schemas or the protocol (docs/clients.md)",
    )
    proxy.add_argument(
        "--upstream",
        default=None,
        help="the server's websocket URL, e.g. ws://127.0.0.1:8765/ws",
    )
    proxy.add_argument(
        "--play",
        default=None,
        metavar="SESSION",
        help="no server: play this recorded session back as a fake server (JSON Lines, "
        "as --record writes; protocol/conformance/sessions/)",
    )
    proxy.add_argument("--record", default=None, help="write the session to this file (JSON Lines)")
    proxy.add_argument("--host", default="127.0.0.1", help="address to listen on")
    proxy.add_argument("--port", type=int, default=8766, help="port (0 picks a free one)")
    proxy.add_argument(
        "--check",
        action="store_true",
        help="report each problem (standard error), and exit 1 at the end if there was one",
    )
    proxy.add_argument(
        "--report", default=None, help="also write the problems to this file (JSON Lines)"
    )
    proxy.set_defaults(func=_proxy)
    add_admin_commands(sub)  # zonekeep gm ..., zonekeep encounters ...
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result: int = args.func(args)
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        sys.stderr.close()
        return 0
    return result


if __name__ == "__main__":
    raise SystemExit(main())
