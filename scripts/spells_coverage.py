"""Write the spells' coverage table into docs/characters.md.

Every spell the ``zonekeep.spells`` plugin knows (``zonekeep.plugins.spells.SPELLS``
and ``GM_SPELLS``) gets a row: its level, *implemented* when the rules resolve it, or
*GM adjudicates* with the reason. Run by scripts/generate; tests/test_spells_coverage.py
fails when docs/characters.md is not what this writes, and when a spell is neither.

    python scripts/spells_coverage.py          # rewrite the table in docs/characters.md
    python scripts/spells_coverage.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "characters.md"
BEGIN = "<!-- spells coverage: written by scripts/spells_coverage.py -->"
END = "<!-- end of the spells coverage table -->"


def rows() -> list[tuple[int, str, str, str]]:
    """``(level, name, status, how or why)`` for every spell, by level then name."""
    from zonekeep.plugins.spells import GM_SPELLS, SPELLS

    found = []
    for spell in SPELLS.values():
        if spell.gm is None and spell.how != "gm":
            found.append((spell.level, spell.name, "implemented", spell.text))
        else:
            found.append((spell.level, spell.name, "GM adjudicates", spell.gm or ""))
    for name, level, reason in GM_SPELLS.values():
        found.append((level, name, "GM adjudicates", reason))
    return sorted(found)


def table() -> str:
    spells = rows()
    done = sum(1 for r in spells if r[2] == "implemented")
    lines = [
        BEGIN,
        "",
        f"{done} of {len(spells)} spells implemented; the rest GM adjudicates, with the reason.",
        "",
        "| Level | Spell | Status | What the rules do, or why the GM adjudicates |",
        "|---|---|---|---|",
    ]
    for level, name, status, what in spells:
        shown = "cantrip" if level == 0 else str(level)
        lines.append(f"| {shown} | {name} | {status} | {what.replace('|', '/')} |")
    lines += ["", END]
    return "\n".join(lines)


def written(text: str) -> str:
    """``text`` (docs/characters.md) with the table between its markers replaced."""
    head, sep, rest = text.partition(BEGIN)
    if not sep:
        raise SystemExit(f"{DOC}: the marker {BEGIN!r} is missing")
    _old, sep, tail = rest.partition(END)
    if not sep:
        raise SystemExit(f"{DOC}: the marker {END!r} is missing")
    return head + table() + tail


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    new = written(text)
    if "--check" in argv:
        if new != text:
            print(f"{DOC} is stale: run scripts/spells_coverage.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
