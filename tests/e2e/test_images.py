"""Map images over real HTTP (issue 35, point 4): ``POST /images`` checks, re-encodes and
stores an upload; ``GET /images/<id>.<ext>`` serves it. Hostile uploads (a decompression
bomb, a PNG that is something else, an oversized file, an SVG, a polyglot) are refused
with a stable code and change nothing."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import helpers
import pytest
import trio
from e2e_support import Running, parse_response
from lobby_support import add_gm_key
from PIL import Image, PngImagePlugin

from zonekeep.server import ServerConfig
from zonekeep.server._config import Limits

WAIT = helpers.deadline(10)
ARENAS = Path(__file__).resolve().parents[2] / "examples" / "arenas"


def png(size: tuple[int, int] = (64, 48), colour: str = "#5e7045", **info: str) -> bytes:
    meta = PngImagePlugin.PngInfo()
    for key, value in info.items():
        meta.add_text(key, value)
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG", pnginfo=meta)
    return out.getvalue()


def jpeg() -> bytes:
    out = io.BytesIO()
    exif = Image.Exif()
    exif[0x010F] = "SecretCam"  # Make
    Image.new("RGB", (40, 30), "#336699").save(out, format="JPEG", exif=exif.tobytes())
    return out.getvalue()


def with_size(data: bytes, width: int, height: int) -> bytes:
    """``data`` (a PNG) with its header claiming another size (its CRC made right)."""
    ihdr = data[16:29]
    ihdr = struct.pack(">II", width, height) + ihdr[8:]
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return data[:16] + ihdr + crc + data[33:]


async def http(
    port: int | None,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    *,
    length: int | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request over a raw TCP stream; the answer, read to the end."""
    assert port is not None, "the server is not listening"
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body) if length is None else length}")
    with trio.fail_after(WAIT):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
            data = b""
            try:
                while chunk := await stream.receive_some():
                    data += chunk
            except trio.BrokenResourceError:
                pass
    assert data, f"no answer to {method} {path}"
    return parse_response(data)


async def upload(
    running: Running, data: bytes, key: str | None = None, **kw: Any
) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "image/png"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    status, found, body = await http(running.server.port, "POST", "/images", data, headers, **kw)
    assert found["content-type"] == "application/json"
    return status, json.loads(body)


async def stored_bytes(running: Running, owner: str = "operator") -> int:
    return await running.server.store.image_bytes(owner)


async def test_an_upload_is_re_encoded_stored_by_its_hash_and_served(running: Running) -> None:
    original = png(secret="the GM's home address") + b""
    status, answer = await upload(running, original)
    assert status == 201
    image_id = answer["id"]
    assert answer == {
        "id": image_id,
        "url": f"/images/{image_id}.png",
        "width": 64,
        "height": 48,
        "type": "image/png",
    }
    status, headers, body = await http(running.server.port, "GET", answer["url"])
    assert status == 200
    assert hashlib.sha256(body).hexdigest() == image_id
    assert b"home address" not in body and b"tEXt" not in body  # metadata stripped
    assert headers["content-type"] == "image/png"
    assert headers["cache-control"] == "public, max-age=31536000, immutable"
    assert headers["x-content-type-options"] == "nosniff"
    with Image.open(io.BytesIO(body)) as image:
        assert image.size == (64, 48) and image.getpixel((3, 3)) == (0x5E, 0x70, 0x45)
    # The same image again: the same id, stored once.
    used = await stored_bytes(running)
    assert used == len(body)
    assert (await upload(running, png(other="x")))[1]["id"] == image_id
    assert await stored_bytes(running) == used
    # Not under another extension, nor a wrong id.
    for path in (f"/images/{image_id}.webp", f"/images/{'0' * 64}.png", "/images/x.png"):
        status, _, body = await http(running.server.port, "GET", path)
        assert status == 404
        assert json.loads(body)["error"]["code"] == "unknown_image"


async def test_a_jpeg_becomes_a_webp_without_its_exif(running: Running) -> None:
    status, answer = await upload(running, jpeg())
    assert status == 201
    assert answer["type"] == "image/webp" and answer["url"].endswith(".webp")
    status, headers, body = await http(running.server.port, "GET", answer["url"])
    assert status == 200 and headers["content-type"] == "image/webp"
    assert b"SecretCam" not in body
    with Image.open(io.BytesIO(body)) as image:
        assert image.format == "WEBP" and image.size == (40, 30)
        assert not image.getexif()


async def test_the_bundled_arenas_maps_are_served(running: Running) -> None:
    arena = json.loads((ARENAS / "tavern.json").read_text(encoding="utf-8"))
    image_id = arena["map"]["image"]
    status, headers, body = await http(running.server.port, "GET", f"/images/{image_id}.png")
    assert status == 200 and headers["content-type"] == "image/png"
    assert hashlib.sha256(body).hexdigest() == image_id


def bomb() -> bytes:
    """A real decompression bomb: 6000 x 6000 one-bit pixels (36 million, over the
    default 25 million) in a few kilobytes."""
    out = io.BytesIO()
    Image.new("1", (6000, 6000)).save(out, format="PNG", optimize=True)
    return out.getvalue()


HOSTILE = {
    "bomb": (bomb, 413, "image_too_large"),
    "header claiming 100000 x 100000": (
        lambda: with_size(png(), 100_000, 100_000),
        413,
        "image_too_large",
    ),
    "text named a png": (
        lambda: b"<html><script>alert(1)</script></html>",
        415,
        "unsupported_image",
    ),
    "svg": (
        lambda: b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        415,
        "unsupported_image",
    ),
    "gif": (lambda: b"GIF89a" + b"\0" * 32, 415, "unsupported_image"),
    "png signature then garbage": (
        lambda: b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + b"garbage" * 20,
        422,
        "unreadable_image",
    ),
    "truncated png": (lambda: png()[:60], 422, "unreadable_image"),
    "polyglot png + html": (
        lambda: png() + b"<html><script>alert(1)</script></html>",
        422,
        "image_trailing_data",
    ),
    "polyglot jpeg + zip": (
        lambda: jpeg() + b"PK\x03\x04" + b"\0" * 40,
        422,
        "image_trailing_data",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_a_hostile_upload_is_refused_and_changes_nothing(running: Running, name: str) -> None:
    make, status, code = HOSTILE[name]
    found, answer = await upload(running, make())
    assert (found, answer["error"]["code"]) == (status, code)
    assert answer["error"]["message"]
    assert await stored_bytes(running) == 0
    # The server still takes a good image afterwards.
    assert (await upload(running, png()))[0] == 201


async def test_an_oversized_upload_is_refused_before_its_body_is_read(
    make_server: Any,
) -> None:
    running = await make_server(ServerConfig(port=0, limits=Limits(max_image_bytes=1000)))
    # Announced as 50 MB, of which nothing is sent: answered at once all the same.
    status, answer = await upload(running, b"", length=50_000_000)
    assert (status, answer["error"]["code"]) == (413, "image_too_large")
    assert "1000" in answer["error"]["message"]
    assert await stored_bytes(running) == 0


async def test_a_post_needs_one_content_length_and_only_images_take_posts(
    running: Running,
) -> None:
    port = running.server.port
    status, _, body = await http(port, "POST", "/images", headers={"Transfer-Encoding": "chunked"})
    assert status == 411 and b"Content-Length" in body
    status, headers, _ = await http(port, "POST", "/table/", b"x")
    assert status == 405 and headers["allow"] == "GET"
    status, _, _ = await http(port, "PUT", "/images")
    assert status == 405
    assert await stored_bytes(running) == 0


async def test_uploads_need_a_gm_key_once_keys_exist_and_count_toward_its_quota(
    make_server: Any,
) -> None:
    running = await make_server(
        ServerConfig(port=0, limits=Limits(image_bytes_per_key=len(png()) + 10))
    )
    key = await add_gm_key(running, "gwen")
    status, answer = await upload(running, png())  # loopback, but keys exist
    assert (status, answer["error"]["code"]) == (401, "gm_key_required")
    status, answer = await upload(running, png(), key[:-1] + "x")
    assert (status, answer["error"]["code"]) == (401, "bad_gm_key")
    status, answer = await upload(running, png(), key)
    assert status == 201
    used = await stored_bytes(running, "gm:gwen")
    assert used > 0
    status, answer = await upload(running, png(colour="#ff0000"), key)
    assert (status, answer["error"]["code"]) == (413, "quota_exceeded")
    assert await stored_bytes(running, "gm:gwen") == used
    # The image already stored costs nothing again.
    assert (await upload(running, png(), key))[0] == 201


async def test_the_table_page_allows_images_from_its_own_origin(running: Running) -> None:
    status, headers, _ = await http(running.server.port, "GET", "/table/")
    assert status == 200
    policy = headers["content-security-policy"]
    assert "img-src 'self'" in policy
