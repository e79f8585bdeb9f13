"""Creature features as data: traits, actions, on-hit riders, extra damage and uses.

A creature (a compendium entry, a roster creature, a character) carries ``traits``
(passive or triggered features), ``actions`` (things it chooses to do: an action, a
bonus action, a reaction ...) and, on its attacks, ``on_hit`` riders and
``extra_damage``. Each trait, action and rider has an ``id`` that a plugin implements:
a plugin declares the ids it implements with the ``zonekeep_features`` hook
(:class:`FeatureSpec`: the id, where it may appear, the JSON Schema of its ``params``,
what it does). A feature is **automated** when an installed plugin declares its id
for its place (and it is not marked ``gm``); any other is shown to the GM as "GM
adjudicates" with its text and the reason (:func:`feature_status`), never dropped.

``uses`` (on a trait or an action) limits how often it may be used: exactly one of
``{"recharge": 5}`` (regained on a d6 roll of 5 or more at the start of the creature's
turn), ``{"per": "turn" | "round" | "short_rest" | "long_rest" | "day", "count": N}``
or ``{"charges": N}``. The live count is in the creature's ``resources``, by the
feature's :func:`resource_key`.

This module holds the data classes and the checks that need no plugin; the engine
checks each ``params`` against the declaring plugin's schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, get_args

import attrs

from ._dice import DiceError, parse_dice
from ._vocabulary import DAMAGE_TYPES

__all__ = [
    "ACTION_KINDS",
    "FEATURE_ID",
    "FEATURE_KINDS",
    "GM_FEATURE",
    "MULTIATTACK",
    "NOT_IMPLEMENTED",
    "USES_PERIODS",
    "Action",
    "ExtraDamage",
    "FeatureSpec",
    "OnHit",
    "SequenceItem",
    "Trait",
    "Uses",
    "feature_data_problems",
    "initial_resources",
    "multiattack_sequences",
    "resource_key",
    "text_trait",
    "uses_max",
]

#: A feature id: lower-case words, optionally namespaced (``pack-tactics``,
#: ``srd.pack-tactics``).
FEATURE_ID: Final = re.compile(r"^[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*)?$")
#: The id of a feature no plugin is meant to implement: the GM adjudicates it.
GM_FEATURE: Final = "gm"
#: The reason shown for a feature whose id no installed plugin declares.
NOT_IMPLEMENTED: Final = "no installed plugin implements it"

ActionKind = Literal["action", "bonus_action", "reaction", "legendary"]
#: What using an action costs: an action, a bonus action, a reaction, or a legendary
#: action (taken at the end of another creature's turn; the GM triggers it).
ACTION_KINDS: Final[tuple[str, ...]] = get_args(ActionKind)
UsesPeriod = Literal["turn", "round", "short_rest", "long_rest", "day"]
#: The periods of ``{"per": ..., "count": N}`` uses.
USES_PERIODS: Final[tuple[str, ...]] = get_args(UsesPeriod)
FeatureKind = Literal["trait", "action", "on_hit"]
#: Where a feature id may appear: a creature's ``traits``, its ``actions``, an attack's
#: ``on_hit``.
FEATURE_KINDS: Final[tuple[str, ...]] = get_args(FeatureKind)

#: Bounds of the numbers in ``uses``.
USES_RANGES: Final[dict[str, tuple[int, int]]] = {
    "recharge": (2, 6),
    "count": (1, 20),
    "charges": (1, 99),
}
#: At most this many traits, actions or riders on one creature or attack.
MAX_FEATURES: Final = 40

_AUTOMATED_DOC = {
    "doc": "Filled in by the server in snapshots: whether an installed plugin automates it "
    "(false: the GM adjudicates it, `gm` says why). Null in files and stored events; a "
    "file must leave it out."
}
_GM_DOC = {
    "doc": 'Marks it "GM adjudicates", with the reason the server cannot automate it. In '
    "a snapshot, the reason it is not automated whatever it is (also when no installed "
    "plugin implements its id)."
}
_PARAMS_DOC = {
    "doc": "Its parameters, checked against the schema the implementing plugin declares "
    "(`zonekeep_features`)."
}


@attrs.frozen
class Uses:
    """How often a feature may be used: exactly one of ``recharge`` (the lowest d6 roll
    that regains it at the start of the creature's turn: 5 for "Recharge 5-6"),
    ``per`` with ``count`` (uses per turn, round, short rest, long rest or day), or
    ``charges`` (a number of uses that only a rest command or the GM restores)."""

    recharge: int | None = attrs.field(
        default=None,
        metadata={"doc": "Regained on a d6 roll of this or more at the start of its turn."},
    )
    per: UsesPeriod | None = attrs.field(
        default=None, metadata={"doc": "The period `count` uses are regained over."}
    )
    count: int | None = attrs.field(default=None, metadata={"doc": "Uses per `per`."})
    charges: int | None = attrs.field(
        default=None, metadata={"doc": "A number of uses, restored by a rest or the GM."}
    )


@attrs.frozen
class ExtraDamage:
    """Damage an attack deals on a hit on top of its own (``1d6`` acid), rolled with it."""

    damage: str = attrs.field(metadata={"doc": "Dice, e.g. 1d6 or 2d8+1."})
    damage_type: str = attrs.field(metadata={"doc": "Its damage type."})


@attrs.frozen
class OnHit:
    """Something that happens when an attack hits (``save-or-condition``, ``grapple``):
    an id a plugin implements, and its params."""

    id: str = attrs.field(metadata={"doc": "The rider's id (implemented by a plugin)."})
    params: dict[str, Any] = attrs.field(factory=dict, hash=False, metadata=_PARAMS_DOC)
    text: str = attrs.field(default="", metadata={"doc": "What it does, for the GM."})
    gm: str | None = attrs.field(default=None, metadata=_GM_DOC)
    automated: bool | None = attrs.field(default=None, metadata=_AUTOMATED_DOC)


@attrs.frozen
class Trait:
    """A passive or triggered feature (Pack Tactics, Keen Hearing and Smell). ``name``
    and ``text`` are what the GM reads; ``gm`` marks one the server does not automate,
    with the reason."""

    id: str = attrs.field(metadata={"doc": "The feature id a plugin implements, or `gm`."})
    name: str = attrs.field(metadata={"doc": "Its name, as the stat block gives it."})
    text: str = attrs.field(default="", metadata={"doc": "What it does, in own words."})
    params: dict[str, Any] = attrs.field(factory=dict, hash=False, metadata=_PARAMS_DOC)
    uses: Uses | None = attrs.field(
        default=None, metadata={"doc": "How often it may be used (absent: no limit)."}
    )
    gm: str | None = attrs.field(default=None, metadata=_GM_DOC)
    automated: bool | None = attrs.field(default=None, metadata=_AUTOMATED_DOC)


@attrs.frozen
class Action:
    """Something a creature chooses to do (Multiattack, a breath weapon, Nimble Escape,
    Parry); ``kind`` is what it costs."""

    id: str = attrs.field(metadata={"doc": "The feature id a plugin implements, or `gm`."})
    name: str = attrs.field(metadata={"doc": "Its name, as the stat block gives it."})
    kind: ActionKind = attrs.field(
        default="action",
        metadata={"doc": "What using it costs: action, bonus_action, reaction or legendary."},
    )
    text: str = attrs.field(default="", metadata={"doc": "What it does, in own words."})
    params: dict[str, Any] = attrs.field(factory=dict, hash=False, metadata=_PARAMS_DOC)
    uses: Uses | None = attrs.field(
        default=None, metadata={"doc": "How often it may be used (absent: no limit)."}
    )
    gm: str | None = attrs.field(default=None, metadata=_GM_DOC)
    automated: bool | None = attrs.field(default=None, metadata=_AUTOMATED_DOC)


@attrs.frozen
class SequenceItem:
    """One attack of a multiattack sequence: the attack's name and whether it is made
    with disadvantage (the goblin boss's second scimitar attack)."""

    attack: str
    disadvantage: bool = False


#: The id of the multiattack action the SDK's built-in rules implement.
MULTIATTACK: Final = "multiattack"


def multiattack_sequences(action: Action) -> list[tuple[SequenceItem, ...]]:
    """The alternatives of a ``multiattack`` action's ``params.sequences``, each a tuple of
    :class:`SequenceItem`: an item is an attack's name (``"scimitar"``) or an object
    ``{"attack": "scimitar", "disadvantage": true}``; ``params.disadvantage``, a list of
    places (``[1]``: the second), marks the items at those places. Items of another shape are left
    out (the params schema refuses them where the creature is loaded)."""
    found = []
    # ``"disadvantage": [1]``: the items at those places of every sequence (the second).
    marked = {i for i in action.params.get("disadvantage", ()) or () if isinstance(i, int)}
    for sequence in action.params.get("sequences", ()) or ():
        if not isinstance(sequence, list | tuple):
            continue
        items: list[SequenceItem] = []
        for item in sequence:
            at = len(items) in marked
            if isinstance(item, str):
                items.append(SequenceItem(item, at))
            elif isinstance(item, Mapping) and isinstance(item.get("attack"), str):
                items.append(SequenceItem(item["attack"], at or bool(item.get("disadvantage"))))
        if items:
            found.append(tuple(items))
    return found


#: A check a :class:`FeatureSpec` may add to its params schema: given the params and
#: the attack names of the creature carrying the feature, the problems (sentences).
ParamsCheck = Callable[[Mapping[str, Any], Sequence[str]], Iterable[str]]


@attrs.frozen
class FeatureSpec:
    """A feature id a plugin implements (``zonekeep_features``).

    - ``id``: the feature's id (``"multiattack"``); put in the plugin's namespace
      (``"srd.pack-tactics"``) like every id a plugin declares; data may use the short
      name while only one plugin declares it.
    - ``kind``: where it may appear: ``"trait"``, ``"action"`` or ``"on_hit"`` (an
      attack's rider). One id may be declared for several kinds by several specs.
    - ``params_schema``: the JSON Schema (the supported subset,
      :data:`~zonekeep.sdk.host.SCHEMA_KEYWORDS`) of the feature's ``params``; a
      creature whose params break it is refused where it is loaded, naming the path.
    - ``doc``: what it does, for people (``hello``'s ``capabilities.features`` shows it).
    - ``check``: optionally, ``check(params, attack_names)`` yielding more problems
      (sentences) that a schema cannot say (multiattack naming attacks the creature has).
    """

    id: str
    kind: FeatureKind
    params_schema: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "object"})
    doc: str = ""
    check: ParamsCheck | None = attrs.field(default=None, eq=False)


def text_trait(text: str) -> Trait:
    """A trait written as a sentence (compendium files before structured traits): a
    "GM adjudicates" trait with that text, named by its first words."""
    head = re.split(r"[.:(;,]", text, maxsplit=1)[0].strip()
    name = head[:60] if head else "Trait"
    return Trait(
        id=GM_FEATURE,
        name=name,
        text=text,
        gm="written as a sentence, without structured data",
    )


def resource_key(feature: Trait | Action) -> str:
    """The key of a feature's live count in the creature's ``resources``: its id, or
    for a ``gm`` feature its name in lower case with dashes (``legendary-resistance``)."""
    if feature.id != GM_FEATURE:
        return feature.id
    slug = re.sub(r"[^a-z0-9]+", "-", feature.name.lower()).strip("-")
    return f"gm-{slug or 'feature'}"


def uses_max(uses: Uses) -> int:
    """The most uses a feature can have left: 1 for a recharge, else its count or charges."""
    if uses.recharge is not None:
        return 1
    return uses.count or uses.charges or 1


def initial_resources(features: Iterable[Trait | Action]) -> dict[str, int]:
    """Every feature with ``uses`` at its full count, by :func:`resource_key`."""
    return {resource_key(f): uses_max(f.uses) for f in features if f.uses is not None}


def _uses_problems(uses: Uses, where: str) -> list[str]:
    forms = [
        name
        for name, present in (
            ("recharge", uses.recharge is not None),
            ("per", uses.per is not None or uses.count is not None),
            ("charges", uses.charges is not None),
        )
        if present
    ]
    if len(forms) != 1:
        return [
            f"{where}: give exactly one of recharge, per with count, or charges"
            + (f" (not {' and '.join(forms)})" if forms else "")
        ]
    problems = []
    if forms == ["per"] and (uses.per is None or uses.count is None):
        problems.append(f"{where}: per and count go together")
    for key in ("recharge", "count", "charges"):
        value = getattr(uses, key)
        low, high = USES_RANGES[key]
        if value is not None and not low <= value <= high:
            problems.append(f"{where}.{key}: {value} is outside {low} to {high}")
    return problems


def _feature_problems(
    feature: Trait | Action | OnHit, where: str, *, named: bool = True
) -> list[str]:
    problems = []
    if not FEATURE_ID.match(feature.id):
        problems.append(
            f"{where}.id: {feature.id!r} must be lower-case letters, digits, - or _ "
            "(optionally <plugin>.<id>)"
        )
    if named and isinstance(feature, Trait | Action) and not feature.name.strip():
        problems.append(f"{where}.name: must not be empty")
    if feature.gm is not None and not feature.gm.strip():
        problems.append(f"{where}.gm: the reason must not be empty")
    if feature.automated is not None:
        problems.append(f"{where}.automated: the server fills it in; leave it out")
    if isinstance(feature, Trait | Action) and feature.uses is not None:
        problems += _uses_problems(feature.uses, f"{where}.uses")
    return problems


def feature_data_problems(holder: object, where: str) -> list[str]:
    """Every problem of the traits, actions, riders and extra damage of ``holder`` (a
    creature, a compendium entry or a character sheet) that needs no plugin to see:
    ids, names, ``uses``, two features counting ``uses`` under one key, extra damage's
    dice and damage type. One sentence each, naming the path."""
    problems: list[str] = []
    keys: dict[str, str] = {}
    for field in ("traits", "actions"):
        features: Sequence[Trait | Action] = getattr(holder, field, ())
        if len(features) > MAX_FEATURES:
            problems.append(f"{where}.{field}: at most {MAX_FEATURES}")
        for i, feature in enumerate(features):
            at = f"{where}.{field}[{i}]"
            problems += _feature_problems(feature, at)
            if feature.uses is not None:
                key = resource_key(feature)
                if key in keys:
                    problems.append(
                        f"{at}: its uses are counted as {key!r}, like {keys[key]}'s; "
                        "give it another id or name"
                    )
                keys.setdefault(key, at)
    for i, attack in enumerate(getattr(holder, "attacks", ())):
        at = f"{where}.attacks[{i}]"
        riders: Sequence[OnHit] = getattr(attack, "on_hit", ())
        if len(riders) > MAX_FEATURES:
            problems.append(f"{at}.on_hit: at most {MAX_FEATURES}")
        for j, rider in enumerate(riders):
            problems += _feature_problems(rider, f"{at}.on_hit[{j}]", named=False)
        for j, extra in enumerate(getattr(attack, "extra_damage", ())):
            ex = f"{at}.extra_damage[{j}]"
            try:
                dice = parse_dice(extra.damage)
            except DiceError as exc:
                problems.append(f"{ex}.damage: {exc}")
            else:
                if dice.count == 0 and dice.modifier < 1:
                    problems.append(f"{ex}.damage: a flat damage is at least 1")
            if extra.damage_type not in DAMAGE_TYPES:
                problems.append(
                    f"{ex}.damage_type: {extra.damage_type!r} is not a damage type "
                    f"({', '.join(DAMAGE_TYPES)})"
                )
    for field in ("damage_resistances_nonmagical", "damage_immunities_nonmagical"):
        for kind in getattr(holder, field, ()):
            if kind not in DAMAGE_TYPES:
                problems.append(
                    f"{where}.{field}: {kind!r} is not a damage type ({', '.join(DAMAGE_TYPES)})"
                )
    return problems
