"""Write the class features' coverage table into docs/characters.md.

Every feature of every class of the ``zonekeep.classes`` plugin's data
(plugins/classes/classes-5.1.json, SRD 5.1 levels 1 to 5) is counted once per class. A
feature is *implemented* when a plugin the engine loads by default declares its id
(``zonekeep_features``) for its place (``action`` for an action, bonus action or
reaction; ``trait`` otherwise); *in the sheet* when the data says how the character model
itself carries it (``sheet``: the ability scores, the expertise, the subclass); *GM
adjudicates* when the data marks it with a ``gm`` reason; *no combat effect* when the data
marks it with a ``no_combat`` reason (a language, downtime, travel: nothing a fight's
rules decide), counted apart: the automated share is of the combat features, the others.
A feature that is none of the four, or that is implemented and marked too, is a problem: tests/test_class_coverage.py
fails on it, and when docs/characters.md is not what this writes. Run by
scripts/generate.

    python scripts/class_coverage.py          # rewrite the table in docs/characters.md
    python scripts/class_coverage.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "characters.md"
DATA = ROOT / "plugins" / "classes" / "classes-5.1.json"
BEGIN = "<!-- class coverage: written by scripts/class_coverage.py from plugins/classes/classes-5.1.json -->"
END = "<!-- end of the class coverage table -->"


def place(feature: dict[str, Any]) -> str:
    """Where a plugin declares the feature's id: ``trait`` or ``action``."""
    return "trait" if feature.get("kind", "trait") == "trait" else "action"


def implemented_ids() -> frozenset[tuple[str, str]]:
    """The ``(place, id)`` of every feature the plugins an engine loads by default
    declare with ``zonekeep_features``."""
    from zonekeep.sdk.engine import Engine

    return frozenset(getattr(Engine().catalog, "features", {}))


def status(feature: dict[str, Any], implemented: frozenset[tuple[str, str]]) -> str:
    """``implemented``, ``sheet``, ``gm``, ``no_combat``, or ``problem`` (none of them,
    or two)."""
    found = [
        name
        for name, yes in (
            ("implemented", (place(feature), feature["id"]) in implemented),
            ("sheet", bool(feature.get("sheet"))),
            ("gm", bool(feature.get("gm"))),
            ("no_combat", bool(feature.get("no_combat"))),
        )
        if yes
    ]
    return found[0] if len(found) == 1 else "problem"


def rows(
    data: dict[str, Any], implemented: frozenset[tuple[str, str]]
) -> list[tuple[str, dict[str, Any], str]]:
    """``(class id, feature, status)`` for every feature, class by class, by level."""
    return [
        (cls["id"], feature, status(feature, implemented))
        for cls in data["classes"]
        for feature in sorted(cls["features"], key=lambda f: f["level"])
    ]


def totals(data: dict[str, Any], implemented: frozenset[tuple[str, str]]) -> dict[str, int]:
    """The counts by status; ``combat`` is the features less those without a combat
    effect: the automated share's denominator."""
    counts = {
        "features": 0,
        "combat": 0,
        "implemented": 0,
        "sheet": 0,
        "gm": 0,
        "no_combat": 0,
        "problem": 0,
    }
    for _, _, state in rows(data, implemented):
        counts["features"] += 1
        counts["combat"] += state != "no_combat"
        counts[state] += 1
    return counts


def share(data: dict[str, Any], implemented: frozenset[tuple[str, str]]) -> float:
    """The automated share of the combat features, in percent."""
    t = totals(data, implemented)
    return percent(t["implemented"] + t["sheet"], t["combat"])


def percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 100.0


def table(data: dict[str, Any], implemented: frozenset[tuple[str, str]]) -> str:
    t = totals(data, implemented)
    automated = t["implemented"] + t["sheet"]
    names = ", ".join(f"{c['name'].lower()} ({c['subclass_name']})" for c in data["classes"])
    lines = [
        BEGIN,
        "",
        f"{t['features']} class features at levels 1 to 5 of {len(data['classes'])} classes "
        f"({names}); {t['no_combat']} of them have no combat effect (marked with the "
        f"reason, counted apart). Of the {t['combat']} combat features: "
        f"**{automated} automated ({percent(automated, t['combat'])}%)**, "
        f"{t['implemented']} by a plugin and {t['sheet']} by the character model itself; "
        f'{t["gm"]} marked "GM adjudicates" with their reason.',
        "",
        "| class | level | feature | kind | status |",
        "| --- | --- | --- | --- | --- |",
    ]
    for class_id, feature, state in rows(data, implemented):
        sub = f" ({feature['subclass']})" if feature.get("subclass") else ""
        if state == "implemented":
            shown = "implemented"
        elif state == "sheet":
            shown = "in the sheet: " + feature["sheet"]
        elif state == "gm":
            shown = "GM adjudicates: " + feature["gm"]
        elif state == "no_combat":
            shown = "no combat effect: " + feature["no_combat"]
        else:
            shown = "**neither implemented nor marked**"
        kind = feature.get("kind", "trait").replace("_", " ")
        lines.append(
            f"| {class_id}{sub} | {feature['level']} | {feature['name']} (`{feature['id']}`) "
            f"| {kind} | {shown.replace('|', '/')} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        print(f"{DOC} has no class coverage markers", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + table(data, implemented_ids()) + tail
    if "--check" in argv:
        if new != text:
            print("docs/characters.md's class coverage table is stale: run scripts/generate")
            return 1
        return 0
    if new != text:
        DOC.write_text(new, encoding="utf-8")
        print("wrote: docs/characters.md (the class coverage table)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
