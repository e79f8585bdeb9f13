"""The SRD 5.1 creatures: a first-party content plugin, on by default.

It contributes the compendium source ``srd`` (``srd.goblin``, ``srd.wolf``, ...) from
``srd-5.1.json``, shipped beside this module, through the public hook
``zonekeep_compendium``, and implements some of the features that data names (declared
with ``zonekeep_features``; docs/compendium.md lists what is implemented): Pack Tactics
and keen senses, through ``zonekeep_roll_modifiers``; Nimble Escape, the bonus action
command ``nimble_escape``. It uses the public SDK only, as a
third-party content plugin would. An operator turns
it off with ``plugins_disabled = ["zonekeep.srd"]`` (docs/compendium.md); the server
then starts without the ``srd`` entries.

The data is the System Reference Document 5.1 by Wizards of the Coast LLC, licensed
under CC BY 4.0; the source's ``attribution`` carries the credit the licence requires.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path

from zonekeep.plugins.srd._strikes import *  # noqa: F403  (damage and hit points: srd-a2)
from zonekeep.sdk import (
    Action,
    Command,
    CommandSpec,
    CompendiumSource,
    Creature,
    Disengaged,
    EncounterState,
    FeatureSpec,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    Trait,
    hookimpl,
    parse_compendium_source,
)

from ._actions import *  # noqa: F403  (breath weapons, glares, riders: srd-b)
from ._bodies import *  # noqa: F403  (silvered weapons, swallowing, splitting: srd3)
from ._gazes import *  # noqa: F403  (petrifying gazes and bites: srd4)
from ._holds import *  # noqa: F403  (web walker, grapple instead, attach, berserk: srd2)
from ._moves import *  # noqa: F403  (movement and senses: srd-c)
from ._odds import *  # noqa: F403  # advantage, disadvantage and saves (srd-a1)
from ._reactions import *  # noqa: F403  (reactions offered as decisions: parry, redirect)
from ._traits import *  # noqa: F403  (poisons, drains, invisibility, walls: srd-traits)

__all__ = ["DATA", "srd_source"]

#: The compendium file this plugin contributes (package data, shipped in the wheel).
DATA = Path(__file__).resolve().parent / "srd-5.1.json"


@functools.cache
def srd_source() -> CompendiumSource:
    """The ``srd`` source, read and checked once per process (the file never changes)."""
    return parse_compendium_source(json.loads(DATA.read_text(encoding="utf-8")), str(DATA))


@hookimpl
def zonekeep_compendium() -> Iterable[CompendiumSource]:
    return [srd_source()]


# -- the features it implements -------------------------------------------------------------

_SENSES = ("sight", "hearing", "smell")
#: A sense a condition takes away: a blinded creature's keen sight is no help.
_LOST_WITH = {"sight": "blinded", "hearing": "deafened"}


def _has(creature: Creature, feature: str) -> Trait | None:
    """``creature``'s trait ``feature`` (``pack-tactics``), unless the data marks it ``gm``."""
    for trait in creature.traits:
        if trait.id in (feature, f"zonekeep.srd.{feature}") and trait.gm is None:
            return trait
    return None


@hookimpl
def zonekeep_features() -> Iterable[FeatureSpec]:
    return [
        FeatureSpec(
            "pack-tactics",
            "trait",
            {"type": "object", "properties": {}, "additionalProperties": False},
            doc="Advantage on its attack rolls against a creature engaged with at least one "
            "of its allies that is not incapacitated.",
        ),
        FeatureSpec(
            "nimble-escape",
            "action",
            {"type": "object", "additionalProperties": True},
            doc="The nimble_escape command: Disengage as a bonus action (Hide is left to "
            "the GM: the rules have no hiding yet).",
        ),
        FeatureSpec(
            "keen-senses",
            "trait",
            {
                "type": "object",
                "properties": {
                    "senses": {
                        "type": "array",
                        "items": {"enum": list(_SENSES)},
                        "minItems": 1,
                        "maxItems": 3,
                    }
                },
                "required": ["senses"],
                "additionalProperties": False,
            },
            doc="Advantage on its Wisdom (Perception) checks, unless every listed sense is "
            "one it has lost (sight while blinded, hearing while deafened).",
        ),
    ]


def _action(creature: Creature, feature: str) -> Action | None:
    """``creature``'s action ``feature`` (``nimble-escape``), unless the data marks it ``gm``."""
    for action in creature.actions:
        if action.id in (feature, f"zonekeep.srd.{feature}") and action.gm is None:
            return action
    return None


def _has_nimble_escape(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "nimble-escape") is None:
        return ("invalid_params", f"{me.name} has no Nimble Escape.")
    return None


def _nimble_escape(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    choice = cmd.params.get("choice", "disengage")
    if choice == "hide":
        ctx.refuse(
            "invalid_params",
            "The rules do not model hiding yet: the GM adjudicates a Hide "
            f"(and can hide {me.name} from the players with an override).",
        )
    if choice != "disengage":
        ctx.refuse("invalid_params", f"Nimble Escape is disengage or hide, not {choice!r}.")
    ctx.emit(Disengaged(me.id))


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "nimble_escape",
            _nimble_escape,
            "Bonus action: Nimble Escape, take the Disengage action; your movement "
            "provokes no opportunity attacks this turn (Hide is the GM's).",
            {
                "creature": Param("creature", True, "the acting creature"),
                "choice": Param("string", False, "disengage (the default) or hide"),
            },
            costs=("bonus",),
            requires=_has_nimble_escape,
        ),
    )


def _pack_ally(state: EncounterState, attacker: Creature, target: str) -> str | None:
    """An ally of ``attacker`` engaged with ``target`` and not incapacitated, or None."""
    for cid in state.engaged_with(target):
        ally = state.creatures[cid]
        if cid != attacker.id and ally.side == attacker.side and not ally.incapacitated:
            return cid
    return None


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    creature = ctx.state.creatures.get(roll.actor)
    if creature is None:
        return None
    if (
        roll.kind == "attack"
        and roll.target in ctx.state.creatures
        and _has(creature, "pack-tactics")
    ):
        ally = _pack_ally(ctx.state, creature, roll.target)
        if ally is not None:
            return (RollModifier("advantage", f"pack tactics: {ctx.state.creatures[ally].name}"),)
    if roll.kind == "check" and roll.skill == "perception":
        keen = _has(creature, "keen-senses")
        if keen is not None:
            senses = [s for s in keen.params.get("senses", ()) if s in _SENSES]
            usable = [s for s in senses if _LOST_WITH.get(s) not in creature.conditions]
            if usable:
                return (RollModifier("advantage", f"keen senses: {', '.join(usable)}"),)
    return None
