"""The GM's home and the builder in a real browser (issue 16).

A GM with a key opens the home page, builds an encounter from the tavern arena with
four goblins and a goblin boss from the compendium and two player seats (the draft
survives a reload), starts it; two players open their links, fill in their characters
(one in the form, one from a character file) and everyone plays a round. Another test
uploads a broken arena file and sees each problem listed. The dice always roll their
highest face (``MaxDice``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser.browser_support import STEP_MS, MaxDice, open_page, server_in_thread

from zonekeep.server._app import ZonekeepServer
from zonekeep.server._store import GmKey

KEY = "gm-key-of-gwen-" + "7" * 24
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def keyed_server(tmp_path: Path) -> Iterator[str]:
    """A server with no encounter and one GM key (gwen's), on a free port in a thread;
    its base URL."""

    async def gwen(server: ZonekeepServer) -> None:
        digest = hashlib.sha256(KEY.encode()).hexdigest()
        await server.store.add_gm_key(GmKey("gwen", digest, time.time()))

    with server_in_thread(tmp_path / "server", MaxDice(), gwen) as (base, _):
        yield base


_page = open_page


def _fill_character_by_hand(page: Any) -> None:
    form = page.locator("#character-form")
    form.locator("[name=name]").fill("Aria")
    form.locator("[name=ac]").fill("16")
    form.locator("[name=hp]").fill("24")
    form.locator("[name=passive_perception]").fill("13")
    form.locator("[name=speed_walk]").fill("30")
    for ability, value in {"str": 1, "dex": 3, "con": 1, "int": 0, "wis": 1, "cha": 2}.items():
        form.locator(f"[name=ab_{ability}]").fill(str(value))
    page.locator("#add-attack").click()
    attack = form.locator(".zk-attack").first
    attack.locator("[name=a_name]").fill("rapier")
    attack.locator("[name=a_bonus]").fill("5")
    attack.locator("[name=a_damage]").fill("1d8+3")
    attack.locator("[name=a_type]").select_option("piercing")


def test_a_gm_builds_an_encounter_and_two_players_bring_their_characters(
    browser: Any, keyed_server: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    gm_context = browser.new_context(viewport={"width": 1280, "height": 1000})
    home = _page(gm_context, f"{keyed_server}/table/#gm_key={KEY}")
    expect(home.locator("#gm-name")).to_have_text("gwen")
    assert "gm_key" not in home.url  # kept in localStorage, not in the address
    expect(home.locator("#my-encounters")).to_contain_text("No encounters of yours yet")

    # -- the builder -----------------------------------------------------------------------
    home.locator("#new-encounter").click()
    home.locator("#builder-title").fill("Goblins at the Lantern")
    home.locator("#arena-select").select_option("tavern")
    preview = home.locator(".zk-preview[data-arena=tavern]")
    expect(preview.locator("[data-zone=common_room] .zone-name")).to_have_text("Common room")
    expect(preview.locator("[data-zone=kitchen] .zone-links")).to_contain_text("Cellar")

    search = home.locator("#compendium-search")
    search.locator("[name=text]").fill("goblin")
    search.locator("[name=type]").select_option("humanoid")
    search.locator("[name=cr_max]").fill("1")
    search.get_by_role("button", name="Search").click()
    goblin = home.locator("#compendium-results tr[data-entry='srd.goblin']")
    expect(goblin).to_contain_text("Goblin")
    expect(home.locator("#compendium-results .zk-credit")).to_contain_text("System Reference")
    goblin.locator("[name=count]").fill("4")
    goblin.get_by_role("button", name="Add").click()
    home.locator("#compendium-results tr[data-entry='srd.goblin-boss'] button").click()
    groups = home.locator("#builder-roster .zk-group")
    expect(groups).to_have_count(2)
    expect(groups.nth(0).locator("tbody tr")).to_have_count(4)
    # The boss waits hidden in the kitchen; the first goblin is renamed and tougher.
    boss = groups.nth(1).locator("tbody tr").first
    boss.locator("[name=zone]").select_option("kitchen")
    boss.locator("[name=hidden]").check()
    first = groups.nth(0).locator("tbody tr").first
    first.locator("[name=name]").fill("Snikt")
    first.locator("[name=hp]").fill("10")

    for player in ("Ana", "Ben"):
        home.locator("#seat-name").fill(player)
        home.locator("#add-seat").click()
    expect(home.locator("#builder-seats li")).to_have_count(2)
    turn = home.locator("#builder-options [data-option=turn_seconds]")
    expect(turn).to_contain_text("10 to 3600")
    expect(turn).to_contain_text("turn timer")
    expect(home.locator("#builder-options [data-option=show_enemy_hp]")).to_contain_text(
        "hit points"
    )
    home.locator("#builder-options [data-option=flanking] input").uncheck()

    # The draft survives a reload.
    home.reload()
    expect(home.locator("#builder-roster .zk-group")).to_have_count(2)
    expect(home.locator("#builder-title")).to_have_value("Goblins at the Lantern")
    expect(home.locator("#builder-seats li")).to_have_count(2)
    expect(home.locator("#builder-options [data-option=flanking] input")).not_to_be_checked()
    expect(home.locator("#builder-roster tbody tr").first.locator("[name=name]")).to_have_value(
        "Snikt"
    )

    home.locator("#builder-start").click()
    started = home.locator("#builder-started")
    expect(started).to_contain_text("Goblins at the Lantern")
    links = {}
    for seat in ("gm", "Ana", "Ben"):
        link = started.locator(f"[data-link={seat}] a")
        expect(link).to_have_attribute("href", re.compile(r"/table/#encounter=.+&token=.+"))
        links[seat] = link.get_attribute("href")
    expect(started.locator("[data-link=Ana] button")).to_have_text("Copy")
    row = home.locator("#my-encounters tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("waiting for Ana's character")
    expect(row).to_contain_text("tavern")

    # -- the GM's table says who it waits for ----------------------------------------------
    gm = _page(gm_context, links["gm"])
    expect(gm.locator("#status")).to_contain_text("GM")
    expect(gm.locator("#zk-waiting")).to_contain_text("Waiting for Ana's character.")
    expect(gm.locator("#zk-waiting")).to_contain_text("Waiting for Ben's character.")
    expect(gm.locator("#map [data-zone=kitchen]")).to_contain_text("Goblin Boss")
    expect(gm.locator("#map [data-zone=kitchen]")).to_contain_text("hidden from players")
    expect(gm.locator("#map [data-zone=common_room]")).to_contain_text("Snikt HP 10/10")

    # -- Ana fills in the form; a mistake is shown at its place first ----------------------
    ana = _page(browser.new_context(), links["Ana"])
    expect(ana.locator("#character-panel")).to_be_visible()
    _fill_character_by_hand(ana)
    ana.locator("#character-form [name=hp]").fill("0")
    ana.locator("#send-character").click()
    expect(ana.locator("#character-problems [data-path='character.hp']")).to_be_visible()
    ana.locator("#character-form [name=hp]").fill("24")
    ana.locator("#send-character").click()
    expect(ana.locator("#character-panel")).to_contain_text("Aria joins the encounter")
    expect(gm.locator("#zk-waiting")).not_to_contain_text("Ana")

    # -- Ben loads his character file -----------------------------------------------------
    brom = json.loads((ROOT / "examples" / "characters" / "aria.json").read_text())
    brom.update(name="Brom", abilities={**brom["abilities"], "dex": 1})
    sheet = tmp_path / "brom.json"
    sheet.write_text(json.dumps(brom))
    ben = _page(browser.new_context(), links["Ben"])
    expect(ben.locator("#character-panel")).to_be_visible()
    ben.locator("#character-file").set_input_files(str(sheet))
    expect(ben.locator("#character-form [name=name]")).to_have_value("Brom")
    ben.locator("#send-character").click()
    expect(ben.locator("#character-panel")).to_contain_text("Brom joins the encounter")
    expect(gm.locator("#zk-waiting")).to_have_count(0)
    home.reload()
    expect(home.locator("#my-encounters tbody tr")).not_to_contain_text("waiting for")

    # -- everyone plays a round ------------------------------------------------------------
    for page in (ana, ben):
        expect(page.locator("#status")).to_contain_text("Connected as player")
    gm.locator("[data-setup=set_surprise]").click()
    expect(gm.locator("#log")).to_contain_text("Nobody is surprised.")
    gm.locator("[data-setup=place]").click()
    expect(gm.locator("#log")).to_contain_text("Positions:")
    gm.locator("[data-setup=roll_initiative]").click()
    # The goblins and their boss tie (22 each, both the GM's): the GM settles the order.
    # The goblins' group is said by its members' names, as the prompt says it, never by
    # its id (issue 34, point 13).
    ordering = gm.locator("#prompts .prompt .ordering li .name")
    expect(ordering).to_have_text(["Snikt, Goblin 2 and 2 more", "Goblin Boss"])
    expect(gm.locator("#prompts .prompt .prompt-text")).to_contain_text("Snikt, Goblin Boss")
    gm.locator("#prompts .prompt .confirm-order").click()
    expect(gm.locator("#tracker")).to_contain_text("Round 1")
    pages = {"Ana": ana, "Ben": ben}
    turns = 0
    while gm.evaluate("window.zonekeepTable.state.round") == 1:
        active = gm.evaluate("window.zonekeepTable.state.active")
        creature = gm.evaluate(f"window.zonekeepTable.state.creatures[{json.dumps(active)}]")
        page = pages.get(creature["controller"], gm)
        expect(page.locator("#turn-panel")).to_contain_text(f"Your turn: {creature['name']}")
        page.locator("#turn-panel [data-quick=end_turn]").click()
        expect(gm.locator("#tracker")).not_to_contain_text(f"{creature['name']}'s turn")
        turns += 1
        assert turns <= 7, "more turns than creatures in round 1"
    assert turns == 7  # Aria, Brom, four goblins and the boss
    for page in (gm, ana, ben):
        expect(page.locator("#tracker")).to_contain_text("Round 2")
        assert page.errors == []
    assert home.errors == []


def test_a_broken_arena_file_shows_every_problem(
    browser: Any, keyed_server: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    home = _page(browser.new_context(), f"{keyed_server}/table/#gm_key={KEY}")
    expect(home.locator("#gm-name")).to_have_text("gwen")
    home.locator("#new-encounter").click()
    broken = tmp_path / "pit.toml"
    broken.write_text(
        'id = "pit"\nname = "The pit"\n\n'
        '[[zones]]\nid = "floor"\nname = "Floor"\nsize = "Enormous"\n\n'
        '[[zones]]\nid = "ledge"\n\n'
        '[[links]]\na = "floor"\nb = "cellar"\ndirection = "beside"\n'
    )
    home.locator("#arena-file").set_input_files(str(broken))
    listed = home.locator("#arena-problem-list li")
    expect(listed.first).to_be_visible()
    paths = listed.evaluate_all("items => items.map(i => i.dataset.path)")
    assert len(paths) >= 3, paths
    assert any(p.startswith("zones[0].size") for p in paths), paths
    assert any(p.startswith("zones[1]") for p in paths), paths
    assert any(p.startswith("links[0].b") for p in paths), paths
    expect(home.locator("#arena-problems")).to_contain_text("pit.toml")
    # Not a syntax problem: a TOML error names its line.
    broken.write_text('id = "pit"\nzones = [\n')
    home.locator("#arena-file").set_input_files(str(broken))
    expect(home.locator("#arena-problem-list")).to_contain_text("invalid TOML")
    # A valid upload replaces the problems with the preview.
    home.locator("#arena-file").set_input_files(str(ROOT / "examples" / "arenas" / "swamp.toml"))
    expect(home.locator(".zk-preview[data-arena=swamp]")).to_be_visible()
    expect(home.locator("#arena-chosen")).to_contain_text("uploaded from swamp.toml")
    assert home.errors == []


def test_on_a_keyless_server_the_operator_makes_a_second_encounter_and_manages_them(
    browser: Any, live_server: Any
) -> None:
    """The README's quick start: a server with no key, the browser on the same machine.
    The page needs no key; the lobby lists the served encounter; a second one is built
    without any JSON; links, End (an ended encounter is archived) and Archive work from
    the lobby."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    home = _page(browser.new_context(), f"{live_server.base}/table/")
    home.on("dialog", lambda dialog: dialog.accept())
    first = home.locator(f"#my-encounters tr[data-encounter={live_server.encounter}]")
    expect(first).to_contain_text("Brawl at the Drowned Lantern")
    # No key is needed here: the page says why, and the key box is folded away.
    expect(home.locator("#home-rule")).to_contain_text("its own machine (this browser)")
    expect(home.locator("#key-form")).to_be_hidden()
    expect(home.locator("#key-details summary")).to_have_text("I have a GM key")

    home.locator("#new-encounter").click()
    home.locator("#arena-select").select_option("cliffside")
    expect(home.locator(".zk-preview[data-arena=cliffside] .zone")).not_to_have_count(0)
    search = home.locator("#compendium-search")
    search.locator("[name=text]").fill("bandit")
    search.get_by_role("button", name="Search").click()
    bandit = home.locator("#compendium-results tr[data-entry='srd.bandit']")
    bandit.locator("[name=count]").fill("2")
    bandit.get_by_role("button", name="Add").click()
    home.locator("#seat-name").fill("Cy")
    home.locator("#add-seat").click()
    home.locator("#builder-public").check()
    home.locator("#builder-start").click()
    expect(home.locator("#builder-started [data-link=Cy] a")).to_be_visible()
    # A public encounter gets its spectator link at Start, and the operator's own home
    # lists it under "Public encounters" too (issue 34, point 11).
    watch = home.locator("#builder-started [data-link=spectators] a")
    expect(watch).to_have_attribute("href", re.compile(r"/table/#encounter=.+&token=.+"))
    expect(home.locator("#public-encounters li")).to_have_count(1)
    expect(home.locator("#public-encounters li")).to_contain_text("cliffside")
    rows = home.locator("#my-encounters tbody tr")
    expect(rows).to_have_count(2)
    second = rows.filter(has_text="waiting for Cy's character")
    expect(second).to_contain_text("(public)")

    # Fresh links for the first; then end it, then archive it.
    first.locator("[data-action=links]").click()
    expect(home.locator("#home-links [data-link=gm] a")).to_have_attribute(
        "href", re.compile(rf"#encounter={live_server.encounter}&token=.+")
    )
    first.locator("[data-action=end]").click()
    expect(first.locator("td").nth(2)).to_have_text("ended")  # and archived: no buttons
    expect(first.locator("[data-action]")).to_have_count(0)
    second.locator("[data-action=archive]").click()
    archived = rows.filter(has_text="Cy")
    expect(archived.locator("td").nth(2)).to_have_text("archived")
    expect(archived.locator("[data-action]")).to_have_count(0)
    assert home.errors == []


def test_anyone_watches_a_public_encounter_from_the_home_page(
    browser: Any, keyed_server: str
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    home = _page(browser.new_context(), f"{keyed_server}/table/#gm_key={KEY}")
    home.locator("#new-encounter").click()
    home.locator("#builder-title").fill("Open table")
    home.locator("#arena-select").select_option("tavern")
    home.locator("#seat-name").fill("Di")
    home.locator("#add-seat").click()
    home.locator("#builder-public").check()
    home.locator("#builder-start").click()
    expect(home.locator("#builder-started")).to_be_visible()
    di_link = home.locator("#builder-started [data-link=Di] a").get_attribute("href")
    # A player who lands on the home page pastes their link there.
    di = _page(browser.new_context(), f"{keyed_server}/table/")
    di.locator("#home-link").fill("not a link")
    di.locator("#home-open").get_by_role("button", name="Open").click()
    expect(di.locator("#home-error")).to_contain_text("not a table link")
    di.locator("#home-link").fill(di_link)
    di.locator("#home-open").get_by_role("button", name="Open").click()
    expect(di.locator("#status")).to_have_text("Connected as player Di")
    expect(di.locator("#character-panel")).to_be_visible()
    # The key can be forgotten: the page asks for one again.
    home.locator("#forget-key").click()
    expect(home.locator("#key-form")).to_be_visible()

    stranger = _page(browser.new_context(), f"{keyed_server}/table/")
    listed = stranger.locator("#public-encounters li")
    expect(listed).to_contain_text("Open table")
    expect(stranger.locator("#my-encounters")).to_contain_text("No encounters of yours")
    listed.locator("[data-watch]").click()
    expect(stranger.locator("#status")).to_have_text("Connected as spectator")
    expect(stranger.locator("#encounter-name")).to_have_text("Open table")
    assert stranger.errors == [] and home.errors == [] and di.errors == []


def test_the_builder_shows_the_encounters_difficulty_for_the_party(
    browser: Any, keyed_server: str
) -> None:
    """The difficulty panel by XP: goblins (CR 1/4, 50 XP) and a goblin boss (CR 1,
    200 XP), the multiplier for their number (one step up for a party under three, one
    down from six), the party's thresholds by level; creatures on the party's side do
    not count."""
    from playwright.sync_api import expect

    expect.set_options(timeout=STEP_MS)
    home = _page(browser.new_context(), f"{keyed_server}/table/#gm_key={KEY}")
    home.locator("#new-encounter").click()
    home.locator("#arena-select").select_option("tavern")
    rating = home.locator("#difficulty-rating")
    expect(rating).to_contain_text("Add player seats")

    search = home.locator("#compendium-search")
    search.locator("[name=text]").fill("goblin")
    search.get_by_role("button", name="Search").click()
    goblin = home.locator("#compendium-results tr[data-entry='srd.goblin']")
    goblin.locator("[name=count]").fill("4")
    goblin.get_by_role("button", name="Add").click()
    home.locator("#compendium-results tr[data-entry='srd.goblin-boss'] button").click()
    for player in ("Ana", "Ben"):
        home.locator("#seat-name").fill(player)
        home.locator("#add-seat").click()

    # 4 x 50 + 200 = 400 XP; five creatures x2, one step up for two characters: x2.5.
    # Two 1st-level characters: 50 / 100 / 150 / 200.
    expect(rating).to_have_attribute("data-rating", "deadly")
    expect(rating).to_contain_text(
        "5 creatures worth 400 XP, \u00d7 2.5 for their number = 1000 XP"
    )
    thresholds = home.locator("#builder-difficulty td")
    expect(thresholds).to_have_text(["50", "100", "150", "200"])

    # Two 5th-level characters: 500 / 1000 / 1500 / 2200; 1000 XP is medium.
    for player in ("Ana", "Ben"):
        home.locator(f"#builder-seats li[data-seat={player}] [name=level]").fill("5")
    expect(rating).to_have_attribute("data-rating", "medium")
    expect(thresholds).to_have_text(["500", "1000", "1500", "2200"])

    # A third 5th-level character: x2 for five creatures, 800 XP against 750 / 1500 /
    # 2250 / 3300: easy.
    home.locator("#seat-name").fill("Cid")
    home.locator("#add-seat").click()
    home.locator("#builder-seats li[data-seat=Cid] [name=level]").fill("5")
    expect(rating).to_have_attribute("data-rating", "easy")
    expect(rating).to_contain_text(
        "for 3 characters: 5 creatures worth 400 XP, \u00d7 2 for their number = 800 XP"
    )

    # The boss on the party's side: 4 goblins, 200 XP x2 = 400, below easy.
    boss = home.locator("#builder-roster .zk-group").nth(1)
    boss.locator("[name=side]").select_option("party")
    expect(rating).to_have_attribute("data-rating", "trivial")
    expect(rating).to_contain_text("4 creatures worth 200 XP, \u00d7 2 for their number = 400 XP")
    # The levels are part of the draft: they survive a reload.
    home.reload()
    expect(home.locator("#difficulty-rating")).to_have_attribute("data-rating", "trivial")
    assert home.errors == []
