"""The player's page for casters, on a phone (issue 31, item 6): a level-5 wizard
(examples/characters/seraphine.json) and a level-5 cleric (hilda.json), both Ana's, on a
390x844 touch screen. Ana opens the Spells panel (spells by level, slots left as text
and pips), casts Fireball with a 3rd-level slot at a zone the server offers and sees
the slot count drop; a Shield prompt with its countdown comes when the brute's blade
would hit the wizard, and taking it turns the hit into a miss; the cleric casts Bless
(concentration) and the badge shows on her panel, her token and the glance; class
resources are labelled counters; axe-core finds nothing serious at either size."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from browser.browser_support import LAPTOP_SIZE, STEP_MS, open_page, server_in_thread
from browser.test_web_table_views import PHONE, _axe, _keep, _no_sideways_scroll

from zonekeep.sdk import Arena, Attack, Creature, EncounterOptions, Link, Zone
from zonekeep.sdk.host import character_creature, parse_character
from zonekeep.server._app import ZonekeepServer

ROOT = Path(__file__).resolve().parents[2]


class Dice:
    """Every d20 shows 12 (no critical hit, so Shield is asked; the brute's blade, +4,
    makes 16: a hit against AC 12, a miss against 17), every other die its highest
    face. Initiative: Seraphine 14, the raiders 13, the brute 12, Hilda 11, then Kael
    (a level-5 fighter, told to go last)."""

    def randint(self, sides: int) -> int:
        return 12 if sides == 20 else sides


def _character(
    name: str, cid: str, sheet: dict[str, Any] | None = None, **changes: Any
) -> Creature:
    data = json.loads((ROOT / "examples" / "characters" / f"{name}.json").read_text("utf-8"))
    data.update(sheet or {})
    made = character_creature(parse_character(copy.deepcopy(data)), cid, "ana")
    return attrs.evolve(made, zone="hall", **changes)


def _foe(cid: str, name: str, dex: int, zone: str) -> Creature:
    return Creature(
        cid,
        name,
        "raiders",
        controller="gm",
        dex_mod=dex,
        speeds={"walk": 30},
        hp=20,
        max_hp=20,
        ac=12,
        attacks=[Attack("blade", "melee", 4, "1d6+2", "slashing")],
        zone=zone,
    )


ARENA = Arena(
    "keep",
    "Keep",
    (Zone("hall", "Hall", 30), Zone("bar", "Bar", 15), Zone("yard", "Yard", 30)),
    (Link("hall", "bar", "beside"), Link("bar", "yard", "beside")),
)


@pytest.fixture
def casters(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Seraphine, Hilda and the brute in the hall, two raiders in the yard (45 ft away);
    setup done through to round 1. The GM's link and Ana's."""

    async def setup(server: ZonekeepServer) -> dict[str, str]:
        roster = [
            _character("seraphine", "sera"),
            _character("hilda", "hilda"),
            _character("kael", "kael", initiative_bonus=-10),  # last
            _foe("brute", "Brute", 0, "hall"),
            _foe("r1", "Raider 1", 1, "yard"),
            _foe("r2", "Raider 2", 1, "yard"),
        ]
        room, gm = await server.create_room(
            "Casters", ARENA, roster, EncounterOptions(flanking=False)
        )
        ana = await room.grant("player", "ana")
        base = f"/table/#encounter={room.id}"
        return {"gm": f"{base}&token={gm}", "ana": f"{base}&token={ana}"}

    with server_in_thread(tmp_path / "server", Dice(), setup) as (base, links):
        yield {k: base + v for k, v in links.items()}


def test_a_caster_plays_a_turn_on_a_phone(
    browser: Any, casters: dict[str, str], axe_script: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = open_page(browser.new_context(viewport=LAPTOP_SIZE), casters["gm"])
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True, bypass_csp=True)
    phone = open_page(context, casters["ana"])
    expect(phone.locator("#status")).to_have_text("Connected as player ana")
    gm.locator("[data-setup=roll_initiative]").click()
    expect(gm.locator("#tracker")).to_contain_text("Round 1")

    # Seraphine's turn: her class resource, then the Spells panel, by level, slots as text.
    expect(phone.locator("#turn-title")).to_have_text("Your turn: Seraphine")
    # (A sheet's class resource reaches the page as its id and count: no name, no maximum.)
    expect(phone.locator("#caster dl.class-resources .res")).to_have_text(["Arcane recovery1 left"])
    phone.locator("[data-spells-toggle]").tap()
    spells = phone.locator("#caster details.spells")
    expect(spells.locator(".spell-level-title")).to_have_text(
        [
            "Cantrips",
            "1st level · slots 4 of 4 ●●●●",
            "2nd level · slots 3 of 3 ●●●",
            "3rd level · slots 2 of 2 ●●",
        ]
    )
    expect(spells.locator("[data-level='3'] button.spell")).to_have_text(["Fireball", "Haste"])
    expect(spells.locator("[data-level='0'] button.spell")).to_have_text(
        ["Fire Bolt", "Ray of Frost", "Shocking Grasp"]
    )
    _no_sideways_scroll(phone)

    # Fireball: its slots (3rd level and up: only 3rd exists) and the zones offered.
    spells.locator("button.spell[data-spell=fireball]").tap()
    picker = spells.locator("[data-spell-picker=fireball]")
    expect(picker.locator("button[data-slot]")).to_have_text(["3rd level"])
    expect(picker.locator("button[data-zone]")).to_have_text(["Hall", "Bar", "Yard"])
    expect(picker.locator("button.cast")).to_be_disabled()
    picker.locator("button[data-slot='3']").tap()
    picker.locator("button[data-zone=yard]").tap()
    expect(picker.locator("button[data-target]")).to_have_text(["Raider 1", "Raider 2"])
    expect(picker.locator("button[data-target][aria-pressed=true]")).to_have_count(2)
    _no_sideways_scroll(phone)
    picker.locator("button.cast").scroll_into_view_if_needed()
    _keep(phone, "web-table-caster-390.png")  # the README's screenshot of a caster's turn
    # Leaving a raider out of the area is refused beside the button, and spends nothing.
    picker.locator("button[data-target=r2]").tap()
    picker.locator("button.cast").tap()
    refusal = picker.locator(".refusal[data-error=too_few_targets] span")
    expect(refusal).to_have_text(
        "Fireball must fill its 5 targets while creatures remain in its area: Raider 2 not chosen."
    )
    expect(spells.locator("[data-slots='3'] .count-text")).to_have_text("2 of 2")
    picker.locator("button[data-target=r2]").tap()
    expect(picker.locator("button[data-target][aria-pressed=true]")).to_have_count(2)
    picker.locator("button.cast").tap()
    # Both raiders fail their save (12 against DC 15) and take 8d6 = 48 fire.
    expect(spells.locator("[data-slots='3'] .count-text")).to_have_text("1 of 2")
    expect(spells.locator("[data-slots='1'] .count-text")).to_have_text("4 of 4")
    for raider in ("r1", "r2"):
        token = phone.locator(f"#map [data-creature={raider}]")
        expect(token.locator("[data-condition=defeated]")).to_have_text("defeated")
    expect(spells.locator("[data-casting-unavailable=cast]")).to_have_text(
        "Action spells: Seraphine has no action left this turn."
    )
    # After a leveled action spell the server no longer offers Misty Step (bonus action):
    # the bonus-action spell rule, applied to `actions`' choices; nothing was sent.
    expect(spells.locator("button.spell[data-spell=misty-step]")).to_have_count(0)
    expect(spells.locator("[data-level='2'] p.muted")).to_have_text(
        "No spell of this level can be cast now."
    )
    expect(spells.locator("[data-slots='2'] .count-text")).to_have_text("3 of 3")
    assert phone.evaluate("window.zonekeepTable.sent") == ["cast", "cast"]
    phone.locator("[data-quick=end_turn]").tap()

    # The brute's blade would hit Seraphine: Ana is asked, with the countdown.
    expect(gm.locator("#turn-title")).to_contain_text("Brute")
    gm.locator("#quick button[data-attack=blade]").click()
    gm.locator("#quick button.target[data-target=sera]").click()
    prompt = phone.locator("#prompts .prompt[data-kind=shield]")
    expect(prompt.locator(".prompt-text")).to_have_text(
        "Brute's blade would hit Seraphine (16 against AC 12). Cast Shield (reaction, a "
        "level 1 slot): +5 AC until the start of Seraphine's next turn, making this attack miss?"
    )
    # The countdown ticks from the 30 s the encounter gives a reaction (a bar beside it).
    expect(prompt.locator(".countdown")).to_have_text(re.compile(r"^(30|[12]\d|[1-9]) s left$"))
    expect(prompt.locator(".prompt-bar[data-seconds='30']")).to_be_visible()
    expect(prompt.locator("button")).to_have_text(["Shield", "Decline (default)"])
    _no_sideways_scroll(phone)
    assert _axe(phone, axe_script) == []
    prompt.locator("button[data-choice=shield]").tap()
    expect(phone.locator("#prompts-panel")).to_be_hidden()
    expect(phone.locator("#log")).to_contain_text(
        "Brute attacks Seraphine with blade: 16 against AC 17, a miss."
    )
    expect(phone.locator("#map [data-creature=sera] [data-condition=shielded]")).to_be_visible()
    gm.locator("[data-quick=end_turn]").click()

    # Hilda's turn: her Channel Divinity, then Bless on both (concentration).
    expect(phone.locator("#turn-title")).to_have_text("Your turn: Hilda")
    expect(phone.locator("#caster dl.class-resources .res")).to_have_text(
        ["Channel divinity1 left"]
    )
    if not spells.evaluate("d => d.open"):
        phone.locator("[data-spells-toggle]").tap()
    spells.locator("button.spell[data-spell=bless]").tap()
    picker = spells.locator("[data-spell-picker=bless]")
    expect(picker.locator("button[data-slot]")).to_have_text(
        ["1st level", "2nd level", "3rd level"]
    )
    expect(picker.locator("button.cast")).to_have_text("Cast Bless")
    picker.locator("button[data-slot='2']").tap()  # upcast: the button says so
    expect(picker.locator("button.cast")).to_have_text("Cast Bless at 2nd level")
    picker.locator("button[data-slot='1']").tap()
    expect(picker.locator("button.cast")).to_have_text("Cast Bless")
    picker.locator("button[data-target=sera]").tap()
    picker.locator("button[data-target=hilda]").tap()
    picker.locator("button.cast").tap()
    expect(spells.locator("[data-slots='1'] .count-text")).to_have_text("3 of 4")
    badge = "◎ Concentrating: Bless (level 1)"
    expect(phone.locator("#caster .concentration-line")).to_have_text(badge)
    expect(phone.locator("#map [data-creature=hilda] [data-concentration=hilda]")).to_have_text(
        badge
    )
    expect(phone.locator("#glance [data-concentration=hilda]")).to_have_text(badge)
    _no_sideways_scroll(phone)
    assert _axe(phone, axe_script) == []
    phone.locator("[data-quick=end_turn]").tap()

    # Kael, a fighter: his class resources as labelled counters, and no Spells panel.
    expect(phone.locator("#turn-title")).to_have_text("Your turn: Kael")
    expect(phone.locator("#caster dl.class-resources .res")).to_have_text(
        ["Action Surge1 of 1 ●", "Second Wind1 of 1 ●"]
    )
    expect(phone.locator("#caster details.spells")).to_have_count(0)
    expect(phone.locator("#glance [data-concentration=hilda]")).to_have_text(badge)
    phone.set_viewport_size(LAPTOP_SIZE)
    assert _axe(phone, axe_script) == []
    assert phone.errors == [] and gm.errors == []


def _one_caster(tmp_path: Path, caster: Creature) -> Iterator[dict[str, str]]:
    """``caster`` (Ana's) in the hall, two raiders in the yard: the GM's link and Ana's."""

    async def setup(server: ZonekeepServer) -> dict[str, str]:
        roster = [caster, _foe("r1", "Raider 1", 1, "yard"), _foe("r2", "Raider 2", 1, "yard")]
        room, gm = await server.create_room(
            "One caster", ARENA, roster, EncounterOptions(flanking=False)
        )
        ana = await room.grant("player", "ana")
        base = f"/table/#encounter={room.id}"
        return {"gm": f"{base}&token={gm}", "ana": f"{base}&token={ana}"}

    with server_in_thread(tmp_path / "server", Dice(), setup) as (base, links):
        yield {k: base + v for k, v in links.items()}


@pytest.fixture
def cloud_caster(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Seraphine with Stinking Cloud and Protection from Energy prepared."""
    spells = ["stinking-cloud", "protection-from-energy"]
    book = {"spells_known": spells, "spells_prepared": spells}
    yield from _one_caster(tmp_path, _character("seraphine", "sera", book))


@pytest.fixture
def weapon_caster(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Hilda (spiritual weapon prepared), first in the order."""
    yield from _one_caster(tmp_path, _character("hilda", "hilda", initiative_bonus=5))


def _spell_picked(
    browser: Any, links: dict[str, str], who: str, spell: str
) -> tuple[Any, Any, Any, Any]:
    """The GM's page and Ana's phone, round 1 begun, on ``who``'s turn with the Spells
    panel open and ``spell``'s picker open: the pages, the panel and the picker."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm = open_page(browser.new_context(viewport=LAPTOP_SIZE), links["gm"])
    expect(gm.locator("#status")).to_have_text("Connected as GM")
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    phone = open_page(context, links["ana"])
    expect(phone.locator("#status")).to_have_text("Connected as player ana")
    gm.locator("[data-setup=roll_initiative]").click()
    expect(phone.locator("#turn-title")).to_have_text(f"Your turn: {who}")
    phone.locator("[data-spells-toggle]").tap()
    spells = phone.locator("#caster details.spells")
    spells.locator(f"button.spell[data-spell={spell}]").tap()
    return gm, phone, spells, spells.locator(f"[data-spell-picker={spell}]")


def test_a_spell_aimed_at_a_zone_that_takes_no_targets_asks_only_the_zone(
    browser: Any, cloud_caster: dict[str, str]
) -> None:
    """Stinking Cloud: the server sends no `targets_by_zone` for it, so the page offers
    its zones and no targets, and the cast it sends names only the zone."""
    from playwright.sync_api import expect

    gm, phone, spells, picker = _spell_picked(browser, cloud_caster, "Seraphine", "stinking-cloud")
    expect(picker.locator("button[data-zone]")).to_have_text(["Hall", "Bar", "Yard"])
    picker.locator("button[data-zone=yard]").tap()
    expect(picker.locator("button[data-target]")).to_have_count(0)
    picker.locator("button.cast").tap()
    expect(spells.locator("[data-slots='3'] .count-text")).to_have_text("1 of 2")
    expect(phone.locator("#log")).to_contain_text("stinking cloud")
    assert phone.evaluate("window.zonekeepTable.sent") == ["cast"]
    assert phone.errors == [] and gm.errors == []


def test_a_spell_with_options_asks_for_one_before_it_is_cast(
    browser: Any, cloud_caster: dict[str, str]
) -> None:
    """Protection from Energy: the server offers its damage types as `option`; the cast
    button waits for one, and the ward given is that type's."""
    from playwright.sync_api import expect

    gm, phone, spells, picker = _spell_picked(
        browser, cloud_caster, "Seraphine", "protection-from-energy"
    )
    expect(picker.locator("button[data-option]")).to_have_text(
        ["acid", "cold", "fire", "lightning", "thunder"]
    )
    picker.locator("button[data-target=sera]").tap()
    expect(picker.locator("button.cast")).to_be_disabled()
    expect(picker.locator("button.cast")).to_have_attribute("title", "Choose an option first.")
    picker.locator("button[data-option=fire]").tap()
    picker.locator("button.cast").tap()
    token = phone.locator("#map [data-creature=sera]")
    expect(token.locator("[data-condition=resist-fire]")).to_be_visible()
    expect(spells.locator("[data-slots='3'] .count-text")).to_have_text("1 of 2")
    assert phone.evaluate("window.zonekeepTable.sent") == ["cast"]
    assert phone.errors == [] and gm.errors == []


def test_the_spiritual_weapon_strikes_one_creature_of_its_zone_chosen_or_none(
    browser: Any, weapon_caster: dict[str, str]
) -> None:
    """Spiritual Weapon (`info.most_targets` 1): the page chooses no raider by itself,
    one tap chooses one (another tap another, instead), and the cast sends that one as
    `target` with the zone; the weapon appears in the yard and strikes."""
    from playwright.sync_api import expect

    gm, phone, spells, picker = _spell_picked(browser, weapon_caster, "Hilda", "spiritual-weapon")
    picker.locator("button[data-zone=yard]").tap()
    expect(picker.locator("button[data-target]")).to_have_text(["Raider 1", "Raider 2"])
    expect(picker.locator("button[data-target][aria-pressed=true]")).to_have_count(0)
    picker.locator("button[data-target=r1]").tap()
    picker.locator("button[data-target=r2]").tap()  # one at a time: r2 instead of r1
    expect(picker.locator("button[data-target][aria-pressed=true]")).to_have_count(1)
    expect(picker.locator("button[data-target=r2]")).to_have_attribute("aria-pressed", "true")
    picker.locator("button.cast").tap()
    expect(phone.locator("#log")).to_contain_text("Raider 2")
    expect(spells.locator("[data-slots='2'] .count-text")).to_have_text("2 of 3")
    assert phone.evaluate("window.zonekeepTable.sent") == ["cast_bonus"]
    assert phone.errors == [] and gm.errors == []
