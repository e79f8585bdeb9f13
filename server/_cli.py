"""The ``zonekeep`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from zonekeep.sdk import EncounterState, Event, RandomEntropy, event_to_dict
from zonekeep.sdk._arena import ArenaError

from ._encounter_file import EncounterFileError, load_encounter
from ._engine import Engine
from ._log import describe
from ._play import open_table, play_to_end


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
