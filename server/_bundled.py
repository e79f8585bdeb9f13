"""The data shipped with zonekeep: the bundled arenas and example encounters.

They live in the checkout's ``examples/arenas`` and ``examples/encounters`` and ship in
the wheel as package data, at ``zonekeep/server/examples/arenas`` and
``zonekeep/server/examples/encounters`` (the two folders side by side, as in the
checkout, so an encounter's ``"../arenas/tavern.json"`` resolves in both places).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

#: The checkout this module sits in, when it runs from one (``server/_bundled.py``).
_CHECKOUT = Path(__file__).resolve().parent.parent


def bundled_dirs(kind: str) -> tuple[Path, ...]:
    """The folders holding the bundled ``kind`` (``"arenas"`` or ``"encounters"``):
    the installed package's data first, then the checkout's ``examples/<kind>`` (a
    source tree or an editable install); only those that exist, each once."""
    found: list[Path] = []
    packaged = resources.files("zonekeep.server") / "examples" / kind
    for folder in (packaged, _CHECKOUT / "examples" / kind):
        if not isinstance(folder, Path) or not folder.is_dir():
            continue  # not on the file system (a zip import), or not there
        if all(folder.resolve() != seen.resolve() for seen in found):
            found.append(folder)
    return tuple(found)


def bundled_encounters() -> dict[str, Path]:
    """The bundled example encounters by name (``"goblin-ambush"``; the first of a name wins)."""
    found: dict[str, Path] = {}
    for folder in bundled_dirs("encounters"):
        for path in sorted(folder.iterdir()):
            if path.suffix == ".json":
                found.setdefault(path.stem, path)
    return found


def find_example(value: str) -> Path:
    """The encounter file ``--example`` names: a path, or else the name of a bundled
    example (``goblin-ambush``, with or without ``.json``). An unknown name is returned
    as the path it would be, so reading it reports the file as missing."""
    path = Path(value)
    if path.exists():
        return path
    name = path.name.removesuffix(".json")
    if path.parent == Path(".") and name in (known := bundled_encounters()):
        return known[name]
    return path
