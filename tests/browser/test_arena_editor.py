"""The arena editor in a real browser (issue 35, point 1), as a GM uses it.

A GM uploads a battle map, draws four zones over it (three rectangles and a polygon) and
three links between them by dragging (one above, one that is no clear path), places a
prop with a tag and its data, sees the problem `check_arena` finds in that data at its
place on the map, fixes it (and undoes and redoes the fix), saves the arena to the
library, builds an encounter on it and plays a round with a player on a phone (390 x
844, touch) who sees the map with the tokens; then she exports the arena (one file, the
image inside) and imports it on a fresh server. Another test runs axe-core on the
editor at 1280 x 800.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from browser.browser_support import STEP_MS, MaxDice, open_page, server_in_thread
from browser.test_builder import _fill_character_by_hand
from browser.test_web_table_views import _axe

from zonekeep.server._app import ZonekeepServer
from zonekeep.server._store import GmKey

KEY = "gm-key-of-gwen-" + "5" * 24
WIDTH, HEIGHT = 480, 360


def _with_key(key: str) -> Callable[[ZonekeepServer], Awaitable[None]]:
    async def add(server: ZonekeepServer) -> None:
        digest = hashlib.sha256(key.encode()).hexdigest()
        await server.store.add_gm_key(GmKey("gwen", digest, time.time()))

    return add


def _map_png(path: Path) -> Path:
    """A small battle map: four rooms on a stone floor."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (WIDTH, HEIGHT), (120, 110, 100))
    draw = ImageDraw.Draw(image)
    for box in ((20, 20, 200, 160), (240, 20, 460, 160), (20, 200, 200, 340)):
        draw.rectangle(box, fill=(200, 190, 170), outline=(40, 30, 20), width=3)
    draw.polygon([(260, 200), (460, 200), (460, 340), (300, 340)], fill=(170, 190, 200))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    return path


def _at(page: Any, x: float, y: float) -> tuple[float, float]:
    """The page position of the map's pixel (x, y), the map scrolled into the window."""
    page.locator("#editor-shapes").scroll_into_view_if_needed()
    box = page.locator("#editor-shapes").bounding_box()
    assert box is not None
    return box["x"] + x * box["width"] / WIDTH, box["y"] + y * box["height"] / HEIGHT


def _drag(page: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*_at(page, *start))
    page.mouse.down()
    page.mouse.move(*_at(page, (start[0] + end[0]) / 2, (start[1] + end[1]) / 2), steps=3)
    page.mouse.move(*_at(page, *end), steps=3)
    page.mouse.up()


def _set(page: Any, selector: str, value: str) -> None:
    """Type a value and leave the field (the editor takes it on change)."""
    page.locator(selector).fill(value)
    page.locator(selector).press("Tab")


def _open_editor(page: Any) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#gm-name")).to_have_text("gwen")
    page.locator("#open-editor").click()
    expect(page.locator("#home-editor h2")).to_have_text("Arena editor")


def _draw_the_crypt(home: Any, map_file: Path) -> None:
    from playwright.sync_api import expect

    _set(home, "#editor-id", "crypt")
    _set(home, "#editor-name", "The crypt")
    home.locator("#editor-image").set_input_files(str(map_file))
    expect(home.locator("#editor-message")).to_contain_text("Map uploaded: 480 by 360")
    expect(home.locator("#editor-stage img.ed-image")).to_have_js_property("naturalWidth", 480)
    # Three rectangles by dragging, a polygon by clicking its corners.
    home.locator("input[name=editor-tool][value=rect]").check()
    for left, top, right, bottom in ((20, 20, 200, 160), (240, 20, 460, 160), (20, 200, 200, 340)):
        _drag(home, (left, top), (right, bottom))
    home.locator("input[name=editor-tool][value=polygon]").check()
    for x, y in ((260, 200), (460, 200), (460, 340), (300, 340)):
        home.mouse.click(*_at(home, x, y))
    expect(home.locator("#editor-finish-polygon")).to_contain_text("4 points")
    home.locator("#editor-finish-polygon").click()
    zones = home.locator("#editor-shapes .ed-zone")
    expect(zones).to_have_count(4)
    arena = home.evaluate("window.zonekeepEditor.state.arena")
    assert [z["shape"] for z in arena["zones"]] == [
        {"rect": [20, 20, 180, 140]},
        {"rect": [240, 20, 220, 140]},
        {"rect": [20, 200, 180, 140]},
        {"polygon": [[260, 200], [460, 200], [460, 340], [300, 340]]},
    ]
    for index, (zone_id, name) in enumerate(
        (("hall", "Hall"), ("gallery", "Gallery"), ("vault", "Vault"), ("shrine", "Shrine"))
    ):
        _set(home, f"#editor-zone-{index} [name=zone_id]", zone_id)
        _set(home, f"#editor-zone-{index} [name=zone_name]", name)
    home.locator("#editor-zone-3 [name=zone_size]").select_option("Large")

    # Three links, each dragged from one zone to another.
    home.locator("input[name=editor-tool][value=link]").check()
    _drag(home, (110, 90), (350, 90))  # hall -> gallery
    _drag(home, (110, 90), (110, 270))  # hall -> vault
    _drag(home, (350, 90), (400, 280))  # gallery -> shrine
    expect(home.locator("#editor-shapes .ed-link")).to_have_count(3)
    home.locator("#editor-link-1 [name=link_direction]").select_option("above")
    home.locator("#editor-link-2 [name=link_clear]").uncheck()
    home.locator("#editor-link-2 [name=link_mode]").select_option("climb")
    home.locator("#editor-link-2 [name=link_blocks_sight]").check()
    expect(home.locator("#editor-shapes .ed-link.ed-blocked")).to_have_count(1)


def test_a_gm_draws_an_arena_on_a_map_plays_on_it_and_moves_it_to_a_fresh_server(
    browser: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    map_file = _map_png(tmp_path / "crypt.png")
    with server_in_thread(tmp_path / "server", MaxDice(), _with_key(KEY)) as (base, _):
        gm_context = browser.new_context(viewport={"width": 1280, "height": 800})
        home = open_page(gm_context, f"{base}/table/#gm_key={KEY}")
        _open_editor(home)
        _draw_the_crypt(home, map_file)

        # A prop with a tag and its data; a mistake in the data is shown on the map.
        home.locator("#editor-asset-kind").select_option("prop")
        home.locator("#editor-add-asset").click()
        asset = home.locator("#editor-asset-0")
        _set(home, "#editor-asset-0 [name=asset_id]", "sarcophagus")
        _set(home, "#editor-asset-0 [name=asset_name]", "Cracked sarcophagus")
        asset.locator("[name=asset_tag][value$=collapsing_floor]").check()
        _set(home, "#editor-asset-0 [name=data_fall_damage]", "a lot")
        badge = home.locator("#editor-shapes .ed-problem[data-path='assets[0].data.fall_damage']")
        expect(badge).to_have_count(1)
        expect(asset.locator(".ed-item-problems")).to_contain_text("bad dice expression")
        expect(home.locator("#editor-problems li")).to_have_count(1)
        expect(home.locator("#editor-shapes .ed-asset.ed-bad")).to_have_count(1)
        _set(home, "#editor-asset-0 [name=data_fall_damage]", "2d6")
        expect(home.locator("#editor-valid")).to_be_visible()
        expect(badge).to_have_count(0)
        # Undo brings the mistake back, redo the fix.
        home.locator("#editor-undo").click()
        expect(home.locator("#editor-asset-0 [name=data_fall_damage]")).to_have_value("a lot")
        expect(badge).to_have_count(1)
        home.locator("#editor-redo").click()
        expect(home.locator("#editor-valid")).to_be_visible()

        # The builder, open beside the editor, offers the arena once it is saved.
        home.locator("#new-encounter").click()
        expect(home.locator("#arena-select option[value=tavern]")).to_have_count(1)
        expect(home.locator("#arena-select option[value=crypt]")).to_have_count(0)
        home.locator("#editor-save").click()
        expect(home.locator("#editor-message")).to_contain_text("Saved “The crypt”")
        expect(home.locator("#arena-select option[value=crypt]")).to_have_count(1)
        saved = home.evaluate(
            "window.zonekeepEditor.state.conn.request('list_arenas', {limit: 20})"
        )
        crypt = next(item for item in saved["arenas"] if item["name"] == "crypt")
        assert crypt["library"] and crypt["yours"]
        arena = crypt["arena"]
        assert [z["id"] for z in arena["zones"]] == ["hall", "gallery", "vault", "shrine"]
        assert arena["zones"][3]["size"] == "Large"
        assert arena["links"] == [
            {"a": "hall", "b": "gallery", "direction": "beside"},
            {"a": "hall", "b": "vault", "direction": "above"},
            {
                "a": "gallery",
                "b": "shrine",
                "direction": "beside",
                "clear": False,
                "mode": "climb",
                "blocks_sight": True,
            },
        ]
        (prop,) = arena["assets"]
        assert prop["kind"] == "prop" and prop["zone"] == "hall"
        assert prop["data"] == {"fall_damage": "2d6"}
        assert prop["tags"][0].endswith("collapsing_floor")

        # -- an encounter on it ---------------------------------------------------------
        home.locator("#new-encounter").click()
        home.locator("#builder-title").fill("In the crypt")
        home.locator("#arena-select").select_option("crypt")
        search = home.locator("#compendium-search")
        search.locator("[name=text]").fill("goblin")
        search.get_by_role("button", name="Search").click()
        home.locator("#compendium-results tr[data-entry='srd.goblin'] button").click()
        home.locator("#seat-name").fill("Ana")
        home.locator("#add-seat").click()
        home.locator("#builder-start").click()
        started = home.locator("#builder-started")
        expect(started).to_contain_text("In the crypt")
        links = {
            seat: started.locator(f"[data-link={seat}] a").get_attribute("href")
            for seat in ("gm", "Ana")
        }

        gm = open_page(gm_context, links["gm"])
        expect(gm.locator("#status")).to_contain_text("GM")
        phone = browser.new_context(
            viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
        )
        ana = open_page(phone, links["Ana"])
        expect(ana.locator("#character-panel")).to_be_visible()
        _fill_character_by_hand(ana)
        ana.locator("#send-character").tap()
        expect(ana.locator("#character-panel")).to_contain_text("Aria joins the encounter")
        expect(ana.locator("#status")).to_contain_text("Connected as player")
        # The phone draws the map, the zones over their shapes, the tokens inside.
        expect(ana.locator("#map.on-map img.map-image")).to_have_count(1)
        expect(ana.locator("#map img.map-image")).to_have_js_property("naturalWidth", 480)
        expect(ana.locator("#map svg.shapes polygon")).to_have_count(1)
        expect(ana.locator("#map .zone.placed")).to_have_count(4)
        hall = ana.locator("#map .zone.placed[data-zone=hall]")
        expect(hall.locator(".tokens")).to_contain_text("Aria")
        expect(hall.locator(".tokens")).to_contain_text("Goblin")

        gm.locator("[data-setup=set_surprise]").click()
        expect(gm.locator("#log")).to_contain_text("Nobody is surprised.")
        gm.locator("[data-setup=place]").click()
        gm.locator("[data-setup=roll_initiative]").click()
        expect(gm.locator("#tracker")).to_contain_text("Round 1")
        turns = 0
        while gm.evaluate("window.zonekeepTable.state.round") == 1:
            active = gm.evaluate("window.zonekeepTable.state.active")
            creature = gm.evaluate(f"window.zonekeepTable.state.creatures[{json.dumps(active)}]")
            page = ana if creature["controller"] == "Ana" else gm
            expect(page.locator("#turn-panel")).to_contain_text(f"Your turn: {creature['name']}")
            button = page.locator("#turn-panel [data-quick=end_turn]")
            button.tap() if page is ana else button.click()
            expect(gm.locator("#tracker")).not_to_contain_text(f"{creature['name']}'s turn")
            turns += 1
            assert turns <= 2, "more turns than creatures in round 1"
        assert turns == 2
        expect(ana.locator("#tracker")).to_contain_text("Round 2")

        # -- export: one file, the image inside -----------------------------------------
        with home.expect_download() as download:
            home.locator("#editor-export").click()
        exported = tmp_path / "crypt.arena.json"
        download.value.save_as(str(exported))
        document = json.loads(exported.read_text())
        assert document["format"] == "zonekeep.arena-export"
        assert document["version"] == 1
        assert document["image"].startswith("data:image/png;base64,")
        assert document["arena"] == arena
        for page in (home, gm, ana):
            assert page.errors == []

    # -- import on a fresh server --------------------------------------------------------
    other = "gm-key-of-gwen-" + "6" * 24
    with server_in_thread(tmp_path / "fresh", MaxDice(), _with_key(other)) as (base, _):
        fresh = open_page(
            browser.new_context(viewport={"width": 1280, "height": 800}),
            f"{base}/table/#gm_key={other}",
        )
        _open_editor(fresh)
        fresh.locator("#editor-import").set_input_files(str(exported))
        expect(fresh.locator("#editor-message")).to_contain_text("Saved “The crypt”")
        expect(fresh.locator("#editor-stage img.ed-image")).to_have_js_property("naturalWidth", 480)
        expect(fresh.locator("#editor-shapes .ed-zone")).to_have_count(4)
        expect(fresh.locator("#editor-valid")).to_be_visible()
        listed = fresh.evaluate(
            "window.zonekeepEditor.state.conn.request('list_arenas', {limit: 20})"
        )
        copy = next(item for item in listed["arenas"] if item["name"] == "crypt")
        assert copy["yours"]
        assert copy["arena"]["zones"] == arena["zones"]
        assert copy["arena"]["links"] == arena["links"]
        assert copy["arena"]["assets"] == arena["assets"]
        status = fresh.evaluate(
            f"fetch('../images/{copy['arena']['map']['image']}').then(r => r.status)"
        )
        assert status == 200
        assert fresh.errors == []


def test_axe_finds_nothing_serious_in_the_editor(
    browser: Any, tmp_path: Path, axe_script: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    with server_in_thread(tmp_path / "server", MaxDice(), _with_key(KEY)) as (base, _):
        context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
        home = open_page(context, f"{base}/table/#gm_key={KEY}")
        _open_editor(home)
        _draw_the_crypt(home, _map_png(tmp_path / "crypt.png"))
        home.locator("#editor-add-asset").click()
        home.locator("#editor-asset-0 [name=asset_tag][value$=collapsing_floor]").check()
        _set(home, "#editor-asset-0 [name=data_fall_damage]", "a lot")
        expect(home.locator("#editor-problems li")).to_have_count(1)
        assert _axe(home, axe_script) == []
        # Keyboard: the tools are reachable and a zone is added without a pointer.
        home.locator("#editor-add-zone").focus()
        home.keyboard.press("Enter")
        expect(home.locator("#editor-shapes .ed-zone")).to_have_count(5)
        home.locator("#editor-undo").focus()
        home.keyboard.press("Enter")
        expect(home.locator("#editor-shapes .ed-zone")).to_have_count(4)
        assert home.errors == []


def test_an_arena_too_large_for_one_message_is_said_and_the_editor_keeps_working(
    browser: Any, tmp_path: Path
) -> None:
    """The server answers a frame over ``max_message_bytes`` (16 KiB) with an error no
    request waits for: the editor says so instead of sending it, and goes on."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    big = {
        "id": "big",
        "name": "Too big",
        "zones": [
            {"id": f"z{n}", "name": f"Zone {n}", "size": 30, "description": "x" * 1000}
            for n in range(20)
        ],
    }
    file = tmp_path / "big.json"
    file.write_text(json.dumps(big))
    with server_in_thread(tmp_path / "server", MaxDice(), _with_key(KEY)) as (base, _):
        home = open_page(
            browser.new_context(viewport={"width": 1280, "height": 800}),
            f"{base}/table/#gm_key={KEY}",
        )
        _open_editor(home)
        home.locator("#editor-import").set_input_files(str(file))
        expect(home.locator("#editor-message")).to_contain_text(
            "more than this server takes in one message"
        )
        expect(home.locator("#editor-problems")).to_contain_text("max_message_bytes, 16384")
        # Still connected: a new arena is checked by the server again.
        home.locator("#editor-new").click()
        expect(home.locator("#editor-problems li")).to_have_count(1)
        expect(home.locator("#editor-problems")).to_contain_text("zones")
        listed = home.evaluate("window.zonekeepEditor.state.conn.request('list_arenas', {})")
        assert all(item["name"] != "big" for item in listed["arenas"])
        assert home.errors == []


def test_the_draft_survives_a_reload_and_a_saved_arena_opens_again_from_the_library(
    browser: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    with server_in_thread(tmp_path / "server", MaxDice(), _with_key(KEY)) as (base, _):
        home = open_page(
            browser.new_context(viewport={"width": 1280, "height": 800}),
            f"{base}/table/#gm_key={KEY}",
        )
        _open_editor(home)
        expect(home.locator("#editor-library option")).to_have_text(["— none saved yet —"])
        _set(home, "#editor-id", "yard")
        _set(home, "#editor-name", "The yard")
        home.locator("#editor-add-zone").click()
        home.locator("#editor-add-zone").click()
        expect(home.locator("#editor-zones fieldset")).to_have_count(2)
        home.reload()
        _open_editor(home)
        expect(home.locator("#editor-name")).to_have_value("The yard")
        expect(home.locator("#editor-zones fieldset")).to_have_count(2)
        expect(home.locator("#editor-valid")).to_be_visible()
        home.locator("#editor-save").click()
        expect(home.locator("#editor-message")).to_contain_text("Saved “The yard”")
        expect(home.locator("#editor-library option[value=yard]")).to_have_count(1)
        home.locator("#editor-new").click()
        expect(home.locator("#editor-zones fieldset")).to_have_count(0)
        home.locator("#editor-library").select_option("yard")
        expect(home.locator("#editor-message")).to_contain_text("Opened “The yard”")
        expect(home.locator("#editor-zones fieldset")).to_have_count(2)
        expect(home.locator("#editor-id")).to_have_value("yard")
        assert home.errors == []


def _shapes(page: Any) -> list[dict[str, Any]]:
    return [z["shape"] for z in page.evaluate("window.zonekeepEditor.state.arena")["zones"]]


def test_a_drawn_zone_is_moved_and_resized_by_pointer_and_keyboard_with_undo(
    browser: Any, tmp_path: Path
) -> None:
    """After drawing: a rectangle or a polygon is dragged to another place, a rectangle
    resized by its corner handle; the arrow keys on the map move the selected zone
    (Shift: 10 pixels, never out of the map), Alt with them resizes a rectangle; each
    is one step of undo and redo."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    with server_in_thread(tmp_path / "server", MaxDice(), _with_key(KEY)) as (base, _):
        home = open_page(
            browser.new_context(viewport={"width": 1280, "height": 800}),
            f"{base}/table/#gm_key={KEY}",
        )
        _open_editor(home)
        home.locator("#editor-image").set_input_files(str(_map_png(tmp_path / "crypt.png")))
        expect(home.locator("#editor-message")).to_contain_text("Map uploaded: 480 by 360")
        expect(home.locator("#editor-stage img.ed-image")).to_have_js_property("naturalWidth", 480)
        home.locator("input[name=editor-tool][value=rect]").check()
        _drag(home, (20, 20), (200, 160))
        home.locator("input[name=editor-tool][value=polygon]").check()
        for x, y in ((260, 200), (460, 200), (460, 340), (300, 340)):
            home.mouse.click(*_at(home, x, y))
        home.locator("#editor-finish-polygon").click()
        expect(home.locator("#editor-shapes .ed-zone")).to_have_count(2)
        polygon = [[260, 200], [460, 200], [460, 340], [300, 340]]
        assert _shapes(home) == [{"rect": [20, 20, 180, 140]}, {"polygon": polygon}]

        # The pointer: move the rectangle, resize it by its handle, move the polygon.
        home.locator("input[name=editor-tool][value=select]").check()
        _drag(home, (100, 90), (130, 110))
        assert _shapes(home)[0] == {"rect": [50, 40, 180, 140]}
        expect(home.locator("#editor-zone-0")).to_have_class("ed-item ed-selected")
        handle = home.locator("#editor-shapes .ed-handle")
        expect(handle).to_have_count(1)
        _drag(home, (230, 180), (250, 200))
        assert _shapes(home)[0] == {"rect": [50, 40, 200, 160]}
        _drag(home, (380, 280), (370, 260))  # the polygon, 10 left and 20 up
        moved = [[x - 10, y - 20] for x, y in polygon]
        assert _shapes(home)[1] == {"polygon": moved}
        expect(handle).to_have_count(0)  # a polygon has no resize handle
        # Dragged past the map's edge, a shape stops at it.
        _drag(home, (380, 280), (479, 359))
        assert _shapes(home)[1] == {"polygon": [[x + 20, y + 20] for x, y in polygon]}
        home.locator("#editor-undo").click()
        assert _shapes(home)[1] == {"polygon": moved}

        # Each drag was one step of undo; redo brings them back.
        home.locator("#editor-undo").click()
        assert _shapes(home) == [{"rect": [50, 40, 200, 160]}, {"polygon": polygon}]
        home.locator("#editor-undo").click()
        assert _shapes(home)[0] == {"rect": [50, 40, 180, 140]}
        home.locator("#editor-undo").click()
        assert _shapes(home)[0] == {"rect": [20, 20, 180, 140]}
        home.locator("#editor-redo").click()
        home.locator("#editor-redo").click()
        assert _shapes(home)[0] == {"rect": [50, 40, 200, 160]}

        # The keyboard: select the rectangle through its form, then the arrow keys on
        # the map.
        home.locator("#editor-zone-0 [name=zone_name]").focus()
        expect(home.locator("#editor-zone-0")).to_have_class("ed-item ed-selected")
        shapes = home.locator("#editor-shapes")
        shapes.focus()
        shapes.press("ArrowRight")
        shapes.press("ArrowDown")
        assert _shapes(home)[0] == {"rect": [51, 41, 200, 160]}
        shapes.press("Shift+ArrowLeft")
        assert _shapes(home)[0] == {"rect": [41, 41, 200, 160]}
        for _ in range(6):
            shapes.press("Shift+ArrowUp")  # stops at the map's top
        assert _shapes(home)[0] == {"rect": [41, 0, 200, 160]}
        expect(home.locator("#editor-message")).to_contain_text("rectangle 41, 0, 200, 160")
        shapes.press("Alt+ArrowRight")
        shapes.press("Alt+Shift+ArrowDown")
        assert _shapes(home)[0] == {"rect": [41, 0, 201, 170]}
        expect(shapes).to_be_focused()  # the keys never take focus away from the map
        shapes.press("Control+z")
        assert _shapes(home)[0] == {"rect": [41, 0, 201, 160]}
        shapes.press("Control+y")
        assert _shapes(home)[0] == {"rect": [41, 0, 201, 170]}
        # The polygon moves with the keys too, and is not resized.
        home.locator("#editor-zone-1 [name=zone_name]").focus()
        shapes.focus()
        shapes.press("ArrowLeft")
        assert _shapes(home)[1] == {"polygon": [[x - 1, y] for x, y in polygon]}
        shapes.press("Alt+ArrowLeft")
        expect(home.locator("#editor-message")).to_contain_text("Only a rectangle is resized")
        assert _shapes(home)[1] == {"polygon": [[x - 1, y] for x, y in polygon]}
        expect(home.locator("#editor-valid")).to_be_visible()
        assert home.errors == []
