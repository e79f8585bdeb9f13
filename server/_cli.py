"""The ``zonekeep`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import attrs

from zonekeep.sdk import (
    ArenaError,
    EncounterState,
    Event,
    RandomEntropy,
    event_to_dict,
    state_to_dict,
)
from zonekeep.sdk.engine import Engine, PluginConflict, PluginLoadError, describe_plugins

from ._config import VERSION
from ._encounter_file import EncounterFileError, load_encounter
from ._log import describe
from ._play import open_table, play_to_end
from ._store import StoreError


def _play(args: argparse.Namespace) -> int:
    try:
        spec = load_encounter(args.file)
    except (EncounterFileError, ArenaError) as exc:
        print(exc, file=sys.stderr)
        return 2
    out = sys.stdout

    def show(event: Event, state: EncounterState) -> None:
        if args.json:
            out.write(json.dumps(event_to_dict(event), sort_keys=True) + "\n")
            return
        text = describe(event, state)
        if text:
            out.write(text + "\n")

    engine = Engine()
    table = open_table(engine, spec, RandomEntropy(args.seed), on_event=show)
    final = play_to_end(table)
    if not args.json:
        out.write(f"\n{len(table.events)} events, {final.round} round(s).\n")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import trio

    from ._app import ZonekeepServer, serve_until_signalled
    from ._config import ServerConfig, load_config

    try:
        config = load_config(args.config) if args.config else ServerConfig()
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    config = attrs.evolve(
        config,
        host=args.host if args.host is not None else config.host,
        port=args.port if args.port is not None else config.port,
        server_key=args.server_key if args.server_key is not None else config.server_key,
        data_dir=args.data_dir if args.data_dir is not None else config.data_dir,
        store=args.store if args.store is not None else config.store,
        durability=args.durability if args.durability is not None else config.durability,
    )
    spec = None
    if args.example:
        try:
            spec = load_encounter(args.example)
        except (EncounterFileError, ArenaError) as exc:
            print(exc, file=sys.stderr)
            return 2
    try:
        engine = Engine.from_config(config.plugins_enabled, config.plugins_disabled)
    except (PluginLoadError, PluginConflict) as exc:
        print(f"zonekeep: cannot load the plugins: {exc}", file=sys.stderr)
        return 2
    server = ZonekeepServer(config, engine=engine)

    async def ready(running: ZonekeepServer) -> None:
        host = config.host if ":" not in config.host else f"[{config.host}]"
        url = f"ws://{host}:{running.port}/ws"
        print(
            f"zonekeep {VERSION} serving on {url}  (health: http://{host}:{running.port}/healthz)"
        )
        if config.store == "sqlite":
            print(f"Encounters are kept in {config.data_dir}.")
        if running.restored:
            ids = ", ".join(sorted(running.rooms))
            print(f"Brought back {running.restored} unfinished encounter(s): {ids}.")
        if spec is not None:
            room, gm_token, reused = await running.registry.reuse_or_open_file(
                spec, Path(args.example)
            )
            print(f"\nEncounter '{spec.name}' is {'back' if reused else 'ready'}: {room.id}")
            web = f"http://{host}:{running.port}/table/#encounter={quote(room.id)}&token="
            print(f"  GM token:         {gm_token}")
            print(f"    web table:      {web}{quote(gm_token)}")
            players = sorted({c.controller for c in spec.creatures if c.controller != "gm"})
            for player in players:
                names = ", ".join(c.name for c in spec.creatures if c.controller == player)
                token = await room.grant("player", player)
                print(f"  seat {player + ':':<12} {token}   ({names})")
                print(f"    web table:      {web}{quote(token)}")
            spectator = await room.grant("spectator")
            print(f"  spectators:       {spectator}")
            print(f"    web table:      {web}{quote(spectator)}")
            print(
                "\nConnect with any client: send hello, then "
                f'join {{"encounter": "{room.id}", "token": "<a token above>"}}.'
            )
        print("Stop with Ctrl-C.", flush=True)

    try:
        trio.run(serve_until_signalled, server, ready)
    except StoreError as exc:
        print(f"zonekeep: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(
            f"zonekeep: cannot listen on {config.host}:{config.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return 1
    return 0


def _data_dir(args: argparse.Namespace) -> Path:
    if args.data_dir is not None:
        return Path(args.data_dir)
    from ._config import default_data_dir

    return default_data_dir()


def _export(args: argparse.Namespace) -> int:
    from ._export import ExportError, export_encounter, export_to_file

    data_dir = _data_dir(args)
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


def _replay(args: argparse.Namespace) -> int:
    from ._export import LogError, load_log, replay_log

    try:
        replayed = replay_log(load_log(args.file))
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


def _import(args: argparse.Namespace) -> int:
    import trio

    from ._export import ExportError, LogError, import_log, load_log

    try:
        log = load_log(args.file)
    except LogError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    try:
        done = trio.run(import_log, log, _data_dir(args), args.new_id)
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
    print("A server already running on this data directory does not see it until it is restarted.")
    return 0


def _plugins(args: argparse.Namespace) -> int:
    from ._config import ServerConfig, load_config

    try:
        config = load_config(args.config) if args.config else ServerConfig()
        engine = Engine.from_config(config.plugins_enabled, config.plugins_disabled)
    except (ValueError, PluginLoadError, PluginConflict) as exc:
        print(f"zonekeep: {exc}", file=sys.stderr)
        return 2
    print(describe_plugins(engine))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zonekeep", description="A server for zone-based tabletop-RPG combat encounters."
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
    play.set_defaults(func=_play)
    serve = sub.add_parser("serve", help="run the websocket server")
    serve.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=None, help="port (default 8765; 0 picks a free one)"
    )
    serve.add_argument("--config", default=None, help="a TOML config file ([server] and [limits])")
    serve.add_argument("--server-key", default=None, help="require this key to create encounters")
    serve.add_argument(
        "--example", default=None, help="open this encounter file at start and print its tokens"
    )
    serve.add_argument(
        "--data-dir",
        default=None,
        help="where encounters are kept (default ~/.local/share/zonekeep)",
    )
    serve.add_argument(
        "--store", choices=("sqlite", "memory"), default=None, help="sqlite (default) or memory"
    )
    serve.add_argument(
        "--durability",
        choices=("full", "normal"),
        default=None,
        help="full (default): durable before anyone sees it; normal: faster (docs/storage.md)",
    )
    serve.set_defaults(func=_serve)
    plugins = sub.add_parser(
        "plugins", help="list the plugins a server would load, their versions and commands"
    )
    plugins.add_argument(
        "--config", default=None, help="a server config (plugins_enabled/disabled)"
    )
    plugins.set_defaults(func=_plugins)
    data_help = "the server's data directory (default ~/.local/share/zonekeep)"
    export = sub.add_parser(
        "export", help="write an encounter's event log from the store as JSON Lines"
    )
    export.add_argument("encounter", help="the encounter id")
    export.add_argument("--data-dir", default=None, help=data_help)
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
    replay_cmd.set_defaults(func=_replay)
    import_cmd = sub.add_parser(
        "import", help="check an exported log and add it to the store as an encounter"
    )
    import_cmd.add_argument("file", help="an exported log (JSON Lines)")
    import_cmd.add_argument("--data-dir", default=None, help=data_help)
    import_cmd.add_argument(
        "--as", dest="new_id", default=None, metavar="NEW_ID", help="import under this id"
    )
    import_cmd.set_defaults(func=_import)
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
