"""The ``zonekeep`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import attrs

from zonekeep.sdk import EncounterState, Event, RandomEntropy, event_to_dict
from zonekeep.sdk._arena import ArenaError

from ._app import VERSION
from ._encounter_file import EncounterFileError, load_encounter
from ._engine import Engine
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

    from ._app import ServerConfig, ZonekeepServer, load_config, serve_until_signalled

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
    server = ZonekeepServer(config)

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
            room, gm_token = await running.open_encounter_file(spec)
            print(f"\nEncounter '{spec.name}' is ready: {room.id}")
            print(f"  GM token:         {gm_token}")
            players = sorted({c.controller for c in spec.creatures if c.controller != "gm"})
            for player in players:
                names = ", ".join(c.name for c in spec.creatures if c.controller == player)
                print(f"  seat {player + ':':<12} {await room.grant('player', player)}   ({names})")
            print(f"  spectators:       {await room.grant('spectator')}")
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
