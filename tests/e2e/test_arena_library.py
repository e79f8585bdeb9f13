"""The server's arena library (issue 35, points 2 and 5) over real websockets:
``save_arena`` (checked as ``check_arena``, its map image stored), ``list_arenas``'
``library`` and ``yours``, ``create_encounter`` by a library name, ``delete_arena``,
owners and quotas; and on two nodes of one PostgreSQL store, an arena saved through one
is used through the other."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import helpers
import pytest
import trio
from e2e_support import Limits, Running, ServerConfig, creatures, start_server
from lobby_support import add_gm_key, refused
from PIL import Image
from postgres_support import fresh_schema
from test_images import http, upload

WAIT = helpers.deadline(20)
TAVERN_MAP = json.loads(
    (Path(__file__).resolve().parents[2] / "examples" / "arenas" / "tavern.json").read_text(
        encoding="utf-8"
    )
)["map"]


def crypt(image: dict[str, Any] | None = None, arena_id: str = "crypt") -> dict[str, Any]:
    """A two-zone arena over ``image`` (an upload's answer; the tavern's map if None)."""
    frame = (
        TAVERN_MAP
        if image is None
        else {"image": image["id"], "width": image["width"], "height": image["height"]}
    )
    return {
        "id": arena_id,
        "name": "The crypt",
        "map": frame,
        "zones": [
            {"id": "nave", "name": "Nave", "size": 30, "shape": {"rect": [0, 0, 40, 30]}},
            {
                "id": "vault",
                "name": "Vault",
                "size": 15,
                "shape": {"polygon": [[40, 0], [80, 0], [80, 60], [40, 60]]},
            },
        ],
        "links": [{"a": "nave", "b": "vault", "direction": "below"}],
    }


def map_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 90), "#444444").save(out, format="PNG")
    return out.getvalue()


def in_nave() -> list[dict[str, Any]]:
    return [{**creature, "zone": "nave"} for creature in creatures()[:1]]


async def library(client: Any) -> dict[str, dict[str, Any]]:
    listed = await client.request("list_arenas", limit=20)
    return {item["name"]: item for item in listed["arenas"]}


async def test_a_gm_saves_lists_plays_and_deletes_a_library_arena(running: Running) -> None:
    gwen_key = await add_gm_key(running, "gwen")
    bob_key = await add_gm_key(running, "bob")
    status, image = await upload(running, map_png(), gwen_key)
    assert status == 201
    with trio.fail_after(WAIT):
        async with running.client(gm_key=gwen_key) as gwen, running.client(gm_key=bob_key) as bob:
            saved = await gwen.request("save_arena", arena=crypt(image))
            assert saved == {"saved": True, "name": "crypt", "replaced": False, "problems": []}
            mine = (await library(gwen))["crypt"]
            assert (mine["library"], mine["yours"]) == (True, True)
            assert mine["arena"]["map"]["image"] == image["id"]
            theirs = (await library(bob))["crypt"]
            assert (theirs["library"], theirs["yours"]) == (True, False)
            assert (await library(bob))["tavern"]["library"] is False
            # Anyone who may create uses it by name; the snapshot carries map and shapes.
            created = await bob.create_encounter("In the crypt", "crypt", in_nave())
            joined = await bob.join(created["encounter"], created["gm_token"])
            arena = joined["snapshot"]["arena"]
            assert arena["map"] == crypt(image)["map"]
            assert arena["zones"][0]["shape"]["rect"] == [0, 0, 40, 30]
            # Bob may neither overwrite nor delete it; nothing changes.
            other = crypt(image)
            other["name"] = "Bob's crypt"
            error = await refused(bob.request("save_arena", arena=other))
            assert (error.code, error.name) == (3006, "not_your_arena")
            error = await refused(bob.request("delete_arena", name="crypt"))
            assert (error.code, error.name) == (3006, "not_your_arena")
            assert (await library(gwen))["crypt"]["arena"]["name"] == "The crypt"
            # Gwen replaces it, then deletes it; the encounter keeps its copy.
            renamed = crypt(image)
            renamed["name"] = "The crypt, flooded"
            saved = await gwen.request("save_arena", arena=renamed)
            assert (saved["saved"], saved["replaced"]) == (True, True)
            assert await gwen.request("delete_arena", name="crypt") == {"name": "crypt"}
            assert "crypt" not in await library(gwen)
            error = await refused(gwen.request("delete_arena", name="crypt"))
            assert error.name == "invalid_params"
            error = await refused(bob.create_encounter("Gone", "crypt", in_nave()))
            assert error.name == "invalid_params" and "crypt" in error.message
            again = await bob.join(created["encounter"], created["gm_token"])
            assert again["snapshot"]["arena"]["name"] == "The crypt"


async def test_a_broken_arena_or_an_unknown_image_is_not_saved(running: Running) -> None:
    with trio.fail_after(WAIT):
        async with running.client() as operator:  # loopback on a keyless server
            broken = crypt()
            broken["zones"][1]["shape"] = {"rect": [400, 0, 100, 10]}
            result = await operator.request("save_arena", arena=broken)
            assert result == {
                "saved": False,
                "name": "crypt",
                "replaced": False,
                "problems": [
                    {
                        "path": "zones[1].shape.rect",
                        "message": "the shape reaches (500, 10), outside the 480x360 map",
                    }
                ],
            }
            unknown = crypt()
            unknown["map"] = {**unknown["map"], "image": "f" * 64}
            result = await operator.request("save_arena", arena=unknown)
            assert result["saved"] is False
            assert [p["path"] for p in result["problems"]] == ["map.image"]
            error = await refused(operator.request("save_arena", arena=crypt(arena_id="tavern")))
            assert error.name == "not_your_arena"
            assert not any(item["library"] for item in (await library(operator)).values())
            # The bundled map's image is known: this one is saved, the operator's.
            assert (await operator.request("save_arena", arena=crypt()))["saved"] is True
            assert (await library(operator))["crypt"]["yours"] is True


async def test_saving_needs_a_gm_key_once_keys_exist_and_counts_toward_a_quota(
    make_server: Any,
) -> None:
    running = await make_server(ServerConfig(port=0, limits=Limits(arenas_per_key=1)))
    key = await add_gm_key(running, "gwen")
    with trio.fail_after(WAIT):
        async with running.client() as anyone, running.client(gm_key=key) as gwen:
            error = await refused(anyone.request("save_arena", arena=crypt()))
            assert (error.code, error.name) == (2004, "gm_key_required")
            assert (await gwen.request("save_arena", arena=crypt()))["saved"] is True
            error = await refused(gwen.request("save_arena", arena=crypt(arena_id="crypt2")))
            assert (error.code, error.name) == (5003, "quota_exceeded")
            # Replacing the one it has is not a new arena.
            assert (await gwen.request("save_arena", arena=crypt()))["replaced"] is True
            assert [n for n, i in (await library(gwen)).items() if i["library"]] == ["crypt"]


@pytest.fixture
def store_url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


async def test_an_arena_saved_on_one_node_is_used_on_the_other(
    nursery: trio.Nursery, tmp_path: Path, store_url: str
) -> None:
    made = []
    for name in ("a", "b"):
        config = ServerConfig(
            port=0,
            store=store_url,
            store_pool_size=2,
            node_id=name,
            lease_seconds=2.0,
            limits=attrs.evolve(Limits()),
        )
        made.append(await start_server(nursery, tmp_path / name, config))
    a, b = made
    status, image = await upload(a, map_png())
    assert status == 201
    with trio.fail_after(WAIT):
        async with a.client() as on_a, b.client() as on_b:
            assert (await on_a.request("save_arena", arena=crypt(image)))["saved"] is True
            assert (await library(on_b))["crypt"]["library"] is True
            created = await on_b.create_encounter("Over there", "crypt", in_nave())
            assert created["encounter"]
    # The image uploaded through a is served by b.
    found, headers, body = await http(b.server.port, "GET", image["url"])
    assert found == 200 and headers["content-type"] == "image/png"
    assert hashlib.sha256(body).hexdigest() == image["id"]
