"""The closed sets of names that the rules and the arena format share.

Each set is written once here, as a ``Literal`` type for annotations and a tuple of
its values for membership checks and messages; ``_types`` (creatures, moves) and
``_arena`` (arena files) import them from here.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "ABILITIES",
    "DAMAGE_TYPES",
    "LINK_MODES",
    "MOVE_MODES",
    "Ability",
    "LinkMode",
    "MoveMode",
]

#: The six abilities, by the short names saves and checks use.
Ability = Literal["str", "dex", "con", "int", "wis", "cha"]
ABILITIES: Final[tuple[Ability, ...]] = get_args(Ability)

#: The movement an arena link needs to be crossed (docs/rules.md, "Rulings":
#: walk, climb, swim or fly).
LinkMode = Literal["walk", "climb", "swim", "fly"]
LINK_MODES: Final[tuple[LinkMode, ...]] = get_args(LinkMode)

#: The modes a creature can move in (docs/rules.md, 6: walking, jumping, climbing,
#: swimming, crawling; and flying): every link mode, plus jumping and crawling,
#: which no link requires.
MoveMode = Literal[LinkMode, "jump", "crawl"]
MOVE_MODES: Final[tuple[MoveMode, ...]] = get_args(MoveMode)

#: The damage types a save's damage may have (``SaveEffect.damage_type``, area effects).
DAMAGE_TYPES: Final[tuple[str, ...]] = (
    "acid",
    "bludgeoning",
    "cold",
    "fire",
    "force",
    "lightning",
    "necrotic",
    "piercing",
    "poison",
    "psychic",
    "radiant",
    "slashing",
    "thunder",
)
