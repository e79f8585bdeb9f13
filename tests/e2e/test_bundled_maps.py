"""The three bundled arenas each have a battle map and shapes (issue 35): every zone is
drawn on the map, the map file beside them is the image the arena names (its sha256 and
size), and the server serves each one over real HTTP."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import helpers
import pytest
import trio
from e2e_support import Running, parse_response
from PIL import Image

from zonekeep.sdk import load_arena

ARENAS = Path(__file__).resolve().parents[2] / "examples" / "arenas"
BUNDLED = ("tavern.json", "cliffside.json", "swamp.toml")


def test_the_bundled_arenas_are_the_three_named_here() -> None:
    assert sorted(p.name for p in ARENAS.iterdir() if p.is_file()) == sorted(BUNDLED)


@pytest.mark.parametrize("name", BUNDLED)
def test_a_bundled_arena_has_a_map_and_every_zone_a_shape(name: str) -> None:
    arena = load_arena(ARENAS / name)  # the loader checks every shape lies in the map
    assert arena.map is not None
    assert [z.id for z in arena.zones if z.shape is None] == []
    image = ARENAS / "maps" / f"{Path(name).stem}.png"
    data = image.read_bytes()
    assert hashlib.sha256(data).hexdigest() == arena.map.image
    with Image.open(io.BytesIO(data)) as opened:
        assert opened.size == (arena.map.width, arena.map.height)


async def get(port: int | None, path: str) -> tuple[int, dict[str, str], bytes]:
    assert port is not None
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    with trio.fail_after(helpers.deadline(10)):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(request.encode())
            data = b""
            while chunk := await stream.receive_some():
                data += chunk
    return parse_response(data)


async def test_the_server_serves_every_bundled_map(running: Running) -> None:
    for name in BUNDLED:
        arena = load_arena(ARENAS / name)
        assert arena.map is not None
        status, headers, body = await get(running.server.port, f"/images/{arena.map.image}")
        assert (name, status, headers["content-type"]) == (name, 200, "image/png")
        assert hashlib.sha256(body).hexdigest() == arena.map.image
