"""The web table on a battle map (issue 35, point 3), on a phone (390 x 844): the
tavern's map drawn under the zones, each zone's box over its shape, the tokens inside
their zones' boxes, the zones still buttons; pinch-zoom and pan move the map."""

from __future__ import annotations

from typing import Any

from browser.browser_support import STEP_MS, open_page


def test_a_player_on_a_phone_sees_the_map_with_the_tokens_in_their_zones(
    browser: Any, live_server: Any
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    url = (
        f"{live_server.base}/table/#encounter={live_server.encounter}&token={live_server.gm_token}"
    )
    page = open_page(context, url)
    expect(page.locator("#status")).to_have_text("Connected as GM")
    expect(page.locator("#map.on-map")).to_be_visible()
    image = page.locator("#map img.map-image")
    expect(image).to_have_count(1)
    expect(image).to_have_js_property("complete", True)
    expect(image).to_have_js_property("naturalWidth", 480)
    state = page.evaluate("window.zonekeepTable.state")
    arena = state["arena"]
    assert image.get_attribute("src") == f"../images/{arena['map']['image']}"
    frame = page.locator("#map").bounding_box()
    assert frame is not None
    assert 300 <= frame["width"] <= 390
    scale = frame["width"] / arena["map"]["width"]
    assert abs(frame["height"] - arena["map"]["height"] * scale) < 2  # the image's ratio
    for zone in arena["zones"]:
        box = page.locator(f"#map .zone.placed[data-zone={zone['id']}]")
        expect(box).to_have_count(1)
        found = box.bounding_box()
        assert found is not None
        shape = zone["shape"]
        points = (
            [
                shape["rect"][:2],
                [shape["rect"][0] + shape["rect"][2], shape["rect"][1] + shape["rect"][3]],
            ]
            if shape.get("rect")
            else shape["polygon"]
        )
        left = min(p[0] for p in points) * scale + frame["x"]
        top = min(p[1] for p in points) * scale + frame["y"]
        assert abs(found["x"] - left) < 2 and abs(found["y"] - top) < 2, zone["id"]
        # Still a button, named by the zone, for the keyboard and screen readers.
        expect(box.locator("button.zone-button")).to_have_count(1)
        expect(box.get_by_role("button", name=zone["name"], exact=False)).to_have_count(1)
    # Each placed creature's token is drawn inside its zone's box.
    for creature in state["creatures"].values():
        if not creature.get("zone"):
            continue
        zone_box = page.locator(f"#map .zone[data-zone={creature['zone']}]").bounding_box()
        token = (
            page.locator(f"#map .zone[data-zone={creature['zone']}] .tokens")
            .get_by_text(creature["name"], exact=False)
            .first
        )
        expect(token).to_be_visible()
        assert zone_box is not None
        centre = token.bounding_box()
        assert centre is not None
        cx, cy = centre["x"] + centre["width"] / 2, centre["y"] + centre["height"] / 2
        assert zone_box["x"] <= cx <= zone_box["x"] + zone_box["width"], creature["id"]
        assert zone_box["y"] <= cy <= zone_box["y"] + zone_box["height"] + 40, creature["id"]
    # The outlines: one per zone, over the image.
    assert page.locator("#map svg.shapes rect, #map svg.shapes polygon").count() == len(
        arena["zones"]
    )
    # Pan: a drag on the map (not on a zone's button) moves it; a double tap puts it back.
    page.evaluate(
        """() => {
          const map = document.getElementById('map');
          const at = (type, id, x, y) => map.dispatchEvent(new PointerEvent(type,
            {pointerId: id, clientX: x, clientY: y, bubbles: true}));
          at('pointerdown', 1, 200, 150); at('pointerdown', 2, 240, 150);
          at('pointermove', 2, 280, 150); at('pointerup', 1, 200, 150); at('pointerup', 2, 280, 150);
        }"""
    )
    transform = page.evaluate("document.getElementById('map').style.transform")
    assert "scale(2)" in transform
    page.evaluate(
        "document.getElementById('map').dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))"
    )
    assert page.evaluate("document.getElementById('map').style.transform") == ""
    assert page.errors == []
    context.close()
