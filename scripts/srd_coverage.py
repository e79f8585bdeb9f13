"""Write the SRD creatures' coverage table into docs/compendium.md.

Every feature of every creature of the ``zonekeep.srd`` plugin's data
(plugins/srd/srd-5.1.json) is counted: each trait, each action, each attack (place
``attack``, id ``attack``: a plain attack, which the built-in attack rules play, the
``attack`` command) and each rider of an attack (``attacks[*].on_hit``). A feature is
*implemented* when a plugin the engine loads by default declares its id (the built-in
rules and ``zonekeep.srd`` itself), or, for an attack, always;
*GM adjudicates* when the data marks it with a ``gm`` reason; otherwise it is not
implemented yet, and the GM sees it as "GM adjudicates" with the reason "no installed
plugin implements it". The table has one row per id and one row per creature. Run by
scripts/generate; tests/test_srd_coverage.py fails when docs/compendium.md is not what
this writes, and when a feature is none of the three.

    python scripts/srd_coverage.py          # rewrite the table in docs/compendium.md
    python scripts/srd_coverage.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compendium.md"
DATA = ROOT / "plugins" / "srd" / "srd-5.1.json"
BEGIN = "<!-- coverage: written by scripts/srd_coverage.py from plugins/srd/srd-5.1.json -->"
END = "<!-- end of the coverage table -->"
#: The ``(place, id)`` every plain attack counts as: the built-in attack rules (the
#: ``attack`` command: attack roll against AC, damage, the extra damage) play it.
ATTACK = ("attack", "attack")


def features(entry: dict[str, Any]) -> Iterator[tuple[str, str, str, str | None]]:
    """``(place, id, shown kind, gm reason or None)`` for every feature of an entry: its
    traits, its actions, its attacks and their on-hit riders (``place`` is where a
    plugin declares the id: ``trait``, ``action`` or ``on_hit``; an attack is
    ``("attack", "attack")``, shown as ``melee attack`` or ``ranged attack``)."""
    for trait in entry.get("traits", ()):
        if isinstance(trait, dict):
            yield "trait", trait["id"], "trait", trait.get("gm")
    for action in entry.get("actions", ()):
        shown = action.get("kind", "action").replace("_", " ")
        yield "action", action["id"], shown, action.get("gm")
    for attack in entry.get("attacks", ()):
        yield "attack", ATTACK[1], f"{attack.get('kind', 'melee')} attack", None
        for rider in attack.get("on_hit", ()):
            yield "on_hit", rider["id"], "on hit", rider.get("gm")


def implemented_ids() -> frozenset[tuple[str, str]]:
    """The ``(place, id)`` of every feature the plugins an engine loads by default (the
    built-in rules and ``zonekeep.srd``) declare with ``zonekeep_features``, and
    :data:`ATTACK` (a plain attack is the attack rules')."""
    from zonekeep.sdk.engine import Engine

    features = getattr(Engine().catalog, "features", {})
    return frozenset(features) | {ATTACK}


def coverage(data: dict[str, Any], implemented: frozenset[tuple[str, str]]) -> dict[str, Any]:
    """Counts by id and by creature, and the totals."""
    by_id: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"kinds": set(), "creatures": [], "gm": set(), "count": 0, "gm_count": 0}
    )
    by_creature = []
    totals = {"features": 0, "implemented": 0, "gm": 0, "pending": 0}
    for entry in data["entries"]:
        row = {
            "id": entry["id"],
            "name": entry["name"],
            "features": 0,
            "implemented": 0,
            "gm": 0,
            "pending": 0,
        }
        for place, fid, shown, gm in features(entry):
            done = (place, fid) in implemented
            status = "gm" if gm else ("implemented" if done else "pending")
            item = by_id[fid]
            item["kinds"].add(shown)
            item["implemented"] = item.get("implemented", False) or done
            item["count"] += 1
            if entry["id"] not in item["creatures"]:
                item["creatures"].append(entry["id"])
            if gm:
                item["gm"].add(gm)
                item["gm_count"] += 1
            row["features"] += 1
            row[status] += 1
            totals["features"] += 1
            totals[status] += 1
        by_creature.append(row)
    return {"by_id": dict(by_id), "by_creature": by_creature, "totals": totals}


def percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 100.0


def table(data: dict[str, Any], implemented: frozenset[tuple[str, str]]) -> str:
    found = coverage(data, implemented)
    t = found["totals"]
    lines = [
        BEGIN,
        "",
        f"{t['features']} features (traits, actions, attacks and on-hit riders) on "
        f"{len(data['entries'])} creatures: **{t['implemented']} implemented "
        f'({percent(t["implemented"], t["features"])}%)**, {t["gm"]} marked "GM adjudicates" '
        f'with their reason, {t["pending"]} not implemented yet (shown to the GM as "GM '
        'adjudicates": no installed plugin implements them).',
        "",
        "| id | kind | features | creatures | status |",
        "| --- | --- | --- | --- | --- |",
    ]
    for fid in sorted(found["by_id"]):
        item = found["by_id"][fid]
        names = ", ".join(f"`{c}`" for c in item["creatures"][:6])
        if len(item["creatures"]) > 6:
            names += f" and {len(item['creatures']) - 6} more"
        if item["gm_count"] == item["count"]:
            status = "GM adjudicates: " + "; ".join(sorted(item["gm"]))
        elif item.get("implemented"):
            status = "implemented"
            if item["gm"]:
                status += " (GM adjudicates where marked: " + "; ".join(sorted(item["gm"])) + ")"
        else:
            status = "not implemented yet"
            if item["gm"]:
                status += " (GM adjudicates where marked: " + "; ".join(sorted(item["gm"])) + ")"
        kinds = ", ".join(sorted(item["kinds"]))
        lines.append(
            f"| `{fid}` | {kinds} | {item['count']} | {names} | {status.replace('|', '/')} |"
        )
    lines += [
        "",
        "By creature:",
        "",
        "| creature | features | implemented | GM adjudicates | not yet |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in found["by_creature"]:
        lines.append(
            f"| {row['name']} (`srd.{row['id']}`) | {row['features']} | {row['implemented']} | "
            f"{row['gm']} | {row['pending']} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        print(f"{DOC} has no coverage markers", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + table(data, implemented_ids()) + tail
    if "--check" in argv:
        if new != text:
            print("docs/compendium.md's SRD coverage table is stale: run scripts/generate")
            return 1
        return 0
    if new != text:
        DOC.write_text(new, encoding="utf-8")
        print("wrote: docs/compendium.md (the SRD coverage table)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
