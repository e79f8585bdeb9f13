"""What ``actions`` tells a caster's page (issue 31 follow-up): the spell choices
follow the bonus-action spell rule both ways, carry the spell's level and
concentration in ``info``, and an area's choice lists the candidates in each zone."""

from __future__ import annotations

from typing import Any

from helpers import make
from test_spells import cast, cleric, fight, goblin, wizard

from zonekeep.sdk import Choice
from zonekeep.sdk.testing import EncounterHarness


def _choices(h: EncounterHarness, cid: str, player: str) -> dict[str, dict[str, Choice]]:
    details = h.engine.action_details(h.state, cid, h.player(player))
    return {d.id: {c.params["spell"]: c for c in d.choices or ()} for d in details}


def test_after_a_bonus_action_spell_only_action_cantrips_are_offered() -> None:
    h = fight(cleric(), make("ally", hp=20, controller="player-ally"), goblin())
    before = _choices(h, "hilda", "player-hilda")
    assert "guiding-bolt" in before["cast"] and "healing-word" in before["cast_bonus"]
    h.rolls(1).send(
        "cast_bonus",
        h.player("player-hilda"),
        creature="hilda",
        spell="healing-word",
        target="ally",
    )
    after = _choices(h, "hilda", "player-hilda")
    offered = set(after["cast"])
    assert offered and all(after["cast"][s].info["level"] == 0 for s in offered)
    assert "sacred-flame" in offered and "guiding-bolt" not in offered


def test_after_a_leveled_action_spell_no_bonus_action_spell_is_offered() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "yard"})
    assert "misty-step" in _choices(h, "sera", "player-sera")["cast_bonus"]
    cast(h.rolls(1, 1, 1), "sera", spell="magic-missile", target="gob")
    assert h.state.resources.bonus_actions == 1
    assert _choices(h, "sera", "player-sera")["cast_bonus"] == {}


def test_a_cantrip_leaves_the_bonus_action_spells_offered() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "yard"})
    cast(h.rolls(15, 3, 4), "sera", spell="fire-bolt", target="gob")
    assert "misty-step" in _choices(h, "sera", "player-sera")["cast_bonus"]


def test_each_choice_carries_its_level_and_concentration() -> None:
    h = fight(wizard(), goblin(), positions={"gob": "yard"})
    cast_choices = _choices(h, "sera", "player-sera")["cast"]
    assert cast_choices["fireball"].info["level"] == 3
    assert cast_choices["fireball"].info["concentration"] is False
    assert cast_choices["fire-bolt"].info == {"level": 0, "concentration": False}
    assert cast_choices["hold-person"].info == {"level": 2, "concentration": True}


def test_an_area_choice_lists_the_creatures_in_each_zone_it_may_be_aimed_at() -> None:
    h = fight(
        wizard(),
        goblin(),
        goblin("gob2"),
        positions={"gob": "yard", "gob2": "bar"},
    )
    fireball = _choices(h, "sera", "player-sera")["cast"]["fireball"]
    expected: dict[str, Any] = {"hall": ["sera"], "bar": ["gob2"], "yard": ["gob"]}
    assert fireball.info["targets_by_zone"] == expected
    assert "targets_by_zone" not in _choices(h, "sera", "player-sera")["cast"]["fire-bolt"].info
