#!/usr/bin/env python3
"""Draw the battle maps of the bundled arenas (examples/arenas/maps/*.png) with Pillow,
and check that each arena's ``map`` and zone ``shape`` entries match them.

Each map is a plain top-down plan: the zones of one level side by side, and the levels
above or below (a balcony, a cellar, the open air) as labelled panels beside it. The
shapes below are the zones' places on the drawing; they are written into the arena
files by hand (JSON and TOML alike) and this script checks them.

Usage: scripts/draw_maps.py [--check]   (--check draws in memory, writes nothing and
exits 1 when a committed image or an arena's map entry differs)
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
ARENAS = ROOT / "examples" / "arenas"
MAPS = ARENAS / "maps"
W, H = 480, 360

Rect = tuple[int, int, int, int]
Shapes = dict[str, dict[str, Any]]


def rect(x: int, y: int, w: int, h: int) -> dict[str, Any]:
    return {"rect": [x, y, w, h]}


def poly(*points: tuple[int, int]) -> dict[str, Any]:
    return {"polygon": [list(p) for p in points]}


#: Each arena's zones on its map.
SHAPES: dict[str, Shapes] = {
    "tavern": {
        "common_room": poly((16, 16), (300, 16), (300, 200), (200, 260), (16, 260)),
        "bar": rect(312, 16, 56, 244),
        "kitchen": rect(380, 16, 84, 244),
        "cellar": rect(240, 276, 224, 68),
        "balcony": rect(16, 276, 208, 68),
    },
    "cliffside": {
        "sky": rect(16, 16, 448, 80),
        "clifftop": rect(16, 108, 200, 112),
        "far_side": rect(284, 108, 180, 112),
        "ledge": rect(16, 232, 120, 40),
        "beach": poly((16, 284), (236, 284), (268, 344), (16, 344)),
        "shallows": rect(280, 284, 84, 60),
        "reef": rect(376, 284, 88, 60),
    },
    "swamp": {
        "hummock": poly((24, 120), (120, 64), (200, 96), (196, 260), (60, 300)),
        "mire": rect(212, 64, 132, 236),
        "channel": rect(356, 64, 100, 236),
        "tower_top": rect(24, 12, 120, 40),
    },
}

#: The colours of each arena's zones (fill, edge), and the background.
PALETTES: dict[str, tuple[str, dict[str, str]]] = {
    "tavern": (
        "#2b2119",
        {
            "common_room": "#8a6a46",
            "bar": "#6b4b2e",
            "kitchen": "#9a8f7a",
            "cellar": "#4f4a44",
            "balcony": "#7d6a52",
        },
    ),
    "cliffside": (
        "#1d3b57",
        {
            "sky": "#9fc6e6",
            "clifftop": "#6f8f4e",
            "far_side": "#6f8f4e",
            "ledge": "#8c7f6d",
            "beach": "#d8c48f",
            "shallows": "#4f9fbf",
            "reef": "#3c7f9a",
        },
    ),
    "swamp": (
        "#1f2a1c",
        {
            "hummock": "#5e7045",
            "mire": "#3e3a2a",
            "channel": "#3a5560",
            "tower_top": "#7a756c",
        },
    ),
}


def outline(shape: dict[str, Any]) -> list[tuple[int, int]]:
    if "rect" in shape:
        x, y, w, h = shape["rect"]
        return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    return [(p[0], p[1]) for p in shape["polygon"]]


def draw(name: str) -> bytes:
    """The PNG of arena ``name``'s map (deterministic: same bytes on every run)."""
    background, fills = PALETTES[name]
    image = Image.new("RGB", (W, H), background)
    pen = ImageDraw.Draw(image)
    for zone, shape in SHAPES[name].items():
        points = outline(shape)
        pen.polygon(points, fill=fills[zone], outline="#1a1a1a", width=3)
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        # A texture: planks, waves or grass strokes, every 12 pixels, inside the box.
        for y in range(min(ys) + 8, max(ys) - 4, 12):
            for x in range(min(xs) + 8, max(xs) - 12, 24):
                if _inside(points, x + 6, y):
                    pen.line([(x, y), (x + 12, y)], fill=_shade(fills[zone]), width=1)
    if name == "tavern":  # the hearth, the counter, the stairs
        pen.rectangle((24, 24, 64, 44), fill="#b5542c")
        pen.rectangle((304, 24, 310, 252), fill="#3b2514")
        pen.rectangle((420, 230, 456, 252), outline="#1a1a1a", width=2)
    elif name == "cliffside":  # the chasm, the rope
        pen.rectangle((224, 108, 276, 220), fill="#0b0f14")
        pen.line([(120, 220), (120, 236)], fill="#c9a86a", width=3)
    else:  # the tower's stones, reeds
        for x in range(30, 140, 16):
            pen.rectangle((x, 18, x + 10, 26), outline="#4d4a44")
        for x in range(220, 340, 20):
            pen.line([(x, 290), (x + 4, 276)], fill="#6b7f3a", width=2)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _shade(colour: str) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"#{max(r - 28, 0):02x}{max(g - 28, 0):02x}{max(b - 28, 0):02x}"


def _inside(points: list[tuple[int, int]], x: int, y: int) -> bool:
    inside = False
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1], strict=True):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def read_arena(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    return data


def main(argv: list[str]) -> int:
    check = "--check" in argv
    status = 0
    for name in SHAPES:
        png = draw(name)
        digest = hashlib.sha256(png).hexdigest()
        target = MAPS / f"{name}.png"
        if check:
            if not target.exists() or target.read_bytes() != png:
                print(f"stale: {target.relative_to(ROOT)}")
                status = 1
        else:
            target.write_bytes(png)
            print(f"wrote: {target.relative_to(ROOT)} ({len(png)} bytes, {digest})")
        path = next(p for p in ARENAS.glob(f"{name}.*") if p.suffix in (".json", ".toml"))
        arena = read_arena(path)
        wanted_map = {"image": digest, "width": W, "height": H}
        if arena.get("map") != wanted_map:
            print(f"{path.relative_to(ROOT)}: its 'map' should be {json.dumps(wanted_map)}")
            status = 1
        for zone in arena["zones"]:
            wanted = SHAPES[name].get(zone["id"])
            if zone.get("shape") != wanted:
                print(
                    f"{path.relative_to(ROOT)}: zone {zone['id']!r}'s 'shape' should be "
                    f"{json.dumps(wanted)}"
                )
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
