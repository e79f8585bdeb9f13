"""Quotas are per GM key (issue 35): one key at its library's or its images' quota
leaves every other key free to save and upload, and deleting its own arena frees its
library quota. Over real websockets and HTTP."""

from __future__ import annotations

import io
from typing import Any

import trio
from e2e_support import Limits, ServerConfig
from lobby_support import add_gm_key, refused
from PIL import Image
from test_arena_library import WAIT, crypt, library
from test_images import upload

from zonekeep.server._images import reencode


def map_png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 90), colour).save(out, format="PNG")
    return out.getvalue()


async def test_each_gm_key_has_its_own_library_and_image_quota(make_server: Any) -> None:
    one_map = len(reencode(map_png("#444444"), 25_000_000).data)
    running = await make_server(
        ServerConfig(port=0, limits=Limits(arenas_per_key=1, image_bytes_per_key=one_map + 10))
    )
    gwen_key = await add_gm_key(running, "gwen")
    bob_key = await add_gm_key(running, "bob")
    # Images: gwen's second map passes her quota; bob's is his first.
    status, image = await upload(running, map_png("#444444"), gwen_key)
    assert status == 201
    status, answer = await upload(running, map_png("#884422"), gwen_key)
    assert (status, answer["error"]["code"]) == (413, "quota_exceeded")
    assert await running.server.store.image_bytes("gm:gwen") == one_map
    status, _ = await upload(running, map_png("#884422"), bob_key)
    assert status == 201
    assert await running.server.store.image_bytes("gm:bob") > 0
    # The library: one arena per key.
    with trio.fail_after(WAIT):
        async with running.client(gm_key=gwen_key) as gwen, running.client(gm_key=bob_key) as bob:
            assert (await gwen.request("save_arena", arena=crypt(image)))["saved"] is True
            error = await refused(gwen.request("save_arena", arena=crypt(arena_id="crypt2")))
            assert error.name == "quota_exceeded"
            assert (await bob.request("save_arena", arena=crypt(arena_id="bobs")))["saved"]
            error = await refused(bob.request("save_arena", arena=crypt(arena_id="bobs2")))
            assert error.name == "quota_exceeded"
            owned = {n: i["yours"] for n, i in (await library(gwen)).items() if i["library"]}
            assert owned == {"crypt": True, "bobs": False}
            # Deleting her arena frees her quota (not bob's).
            assert await gwen.request("delete_arena", name="crypt") == {"name": "crypt"}
            assert (await gwen.request("save_arena", arena=crypt(arena_id="crypt2")))["saved"]
            error = await refused(bob.request("save_arena", arena=crypt(arena_id="bobs2")))
            assert error.name == "quota_exceeded"
