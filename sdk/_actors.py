"""Who sends a command: the actors (the GM, a player, the server itself, a spectator)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from ._types import Creature

Role = Literal["gm", "player", "system", "spectator"]


@attrs.frozen
class Actor:
    """Who sent a command: a role and, for players, the player id that controls creatures."""

    role: Role
    id: str = ""

    @property
    def is_gm(self) -> bool:
        return self.role in ("gm", "system")

    def controls(self, creature: Creature) -> bool:
        """The GM (and the server itself) controls everything; a player its own creatures."""
        return self.is_gm or (self.role == "player" and creature.controller == self.id)


GM_ACTOR = Actor("gm", "gm")
SYSTEM_ACTOR = Actor("system", "server")
