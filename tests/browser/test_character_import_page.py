"""A player loads a sheet kept elsewhere into the character form, on a phone (docs/
characters.md, "Importing"): a Foundry VTT dnd5e actor export fills the form (its
ability scores shown as read-only modifiers), what did not map is listed by name, and
the character sent is the imported one; a pregenerated character in the character
model is sent as it is, its derived numbers reaching the GM."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser.browser_support import STEP_MS, open_page, server_in_thread

from zonekeep.protocol.client import connect

ROOT = Path(__file__).resolve().parents[2]
FOUNDRY = ROOT / "tests" / "fixtures" / "characters" / "foundry-dnd5e-cleric.json"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def seats(tmp_path: Path) -> Iterator[tuple[str, str, dict[str, str], Any]]:
    """A server in a thread with one encounter waiting for Ana's and Ben's characters:
    its base URL, the encounter, the seats' tokens and the server."""
    made: dict[str, Any] = {}

    async def setup(server: Any) -> None:
        async with connect(f"ws://127.0.0.1:{server.port}/ws") as gm:
            created = await gm.create_encounter(
                "Cliff",
                "cliffside",
                [{"compendium": "srd.goblin", "count": 1, "zone": "ledge"}],
                seats=[{"player": "Ana", "zone": "clifftop"}, {"player": "Ben"}],
            )
        made.update(created)
        made["server"] = server

    with server_in_thread(tmp_path / "server", None, setup) as (base, _):
        yield base, made["encounter"], made["seats"], made["server"]


def test_a_foundry_sheet_and_a_pregenerated_character_load_into_the_form_on_a_phone(
    browser: Any, seats: tuple[str, str, dict[str, str], Any], tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    base, encounter, tokens, server = seats

    def phone(player: str) -> Any:
        context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
        return open_page(context, f"{base}/table/#encounter={encounter}&token={tokens[player]}")

    ana = phone("Ana")
    expect(ana.locator("#character-panel")).to_be_visible()
    sheet = tmp_path / "marta.json"
    shutil.copy(FOUNDRY, sheet)
    ana.locator("#character-file").set_input_files(str(sheet))
    form = ana.locator("#character-form")
    expect(form.locator("[name=name]")).to_have_value("Marta Quill")
    expect(form.locator("[name=hp]")).to_have_value("38")
    expect(form.locator("[name=ab_wis]")).to_have_value("3")  # score 17
    expect(form.locator("[name=ab_wis]")).to_have_attribute("readonly", "")
    expect(form.locator("[name=ac]")).to_have_value("")  # derived from the armor
    unmapped = ana.locator("#character-unmapped")
    expect(unmapped).to_contain_text("Not carried over from your Foundry VTT sheet")
    expect(unmapped.locator("li")).to_contain_text(
        ["item 'Potion of Healing' (consumable)", "active effect 'Blessed by the Abbot'"]
    )
    expect(ana.locator("#character-problems")).to_be_hidden()
    box = unmapped.bounding_box()
    assert box is not None and box["width"] <= PHONE["width"]
    ana.locator("#send-character").click()
    expect(ana.locator("#character-panel")).to_contain_text("Marta Quill joins the encounter")

    ben = phone("Ben")
    expect(ben.locator("#character-panel")).to_be_visible()
    ben.locator("#character-file").set_input_files(
        str(ROOT / "examples" / "characters" / "kael.json")
    )
    expect(ben.locator("#character-form [name=name]")).to_have_value("Kael")
    expect(ben.locator("#character-unmapped")).to_be_hidden()
    ben.locator("#send-character").click()
    expect(ben.locator("#character-panel")).to_contain_text("Kael joins the encounter")

    def creatures() -> dict[str, Any]:
        state = server.rooms[encounter].state
        return {c.name: c for c in state.creatures.values()}

    found = creatures()
    marta, kael = found["Marta Quill"], found["Kael"]
    assert (marta.ac, marta.hp, marta.spell_dc, marta.controller) == (18, 38, 14, "Ana")
    assert (kael.ac, kael.hp, kael.controller) == (19, 44, "Ben")
    assert [a.name for a in kael.attacks][:2] == ["longsword", "longsword (two-handed)"]
