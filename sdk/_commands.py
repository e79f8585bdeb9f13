"""Commands, actors and the specs that declare what a command needs and costs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ._actors import GM_ACTOR, Actor

if TYPE_CHECKING:
    from ._context import RuleContext
    from ._state import EncounterState
    from ._types import Creature

#: What a command costs the acting creature. A tuple of costs means "the first available".
#: ``attack`` is one attack of an Attack action already taken (Extra Attack).
Cost = Literal["action", "attack", "bonus", "reaction", "interaction", "movement", "free"]
ParamType = Literal[
    "creature", "string", "integer", "boolean", "zone", "creatures", "strings", "object", "any"
]
#: Who may send a command: the controller of ``params["creature"]``, the GM only, or anyone.
Who = Literal["creature", "gm", "any"]


@attrs.frozen
class Command:
    """A request to change an encounter: a ``type``, its ``params`` and who sent it."""

    type: str
    params: Mapping[str, Any] = attrs.field(factory=dict)
    actor: Actor = GM_ACTOR


@attrs.frozen
class Param:
    """One parameter of a command: its type, whether it is required, and what it means."""

    type: ParamType
    required: bool = True
    description: str = ""


Handler = Callable[["RuleContext", Command], None]
#: A precondition on the acting creature: the refusal's (code, message), or None.
Requirement = Callable[["EncounterState", "Creature"], "tuple[str, str] | None"]


@attrs.frozen
class Choice:
    """One way a creature may send a command now, as the declaring plugin lists it
    (``CommandSpec.choices``): a ``label`` for a person, the ``params`` it fixes (a
    spell: ``{"spell": "fireball"}``) and, for the parameters still to choose, their
    legal values now (``options``: ``{"slot": (3,), "zone": ("hall", "bar")}``) and
    any facts a client may show or use without parsing the label (``info``: JSON
    values; a spell: ``{"level": 3, "concentration": False}``). Creature ids under an
    ``info`` key starting ``targets`` are hidden from a seat as in ``options``."""

    label: str
    params: Mapping[str, Any] = attrs.field(factory=dict)
    options: Mapping[str, tuple[Any, ...]] = attrs.field(factory=dict)
    info: Mapping[str, Any] = attrs.field(factory=dict)


#: Lists a command's :class:`Choice` for a creature (``CommandSpec.choices``).
Chooser = Callable[["EncounterState", "Creature"], "Sequence[Choice]"]


@attrs.frozen
class CommandSpec:
    """Declares a command: who may send it, when, what it costs, and its handler.

    For ``who="creature"`` the command acts for ``params["creature"]``: the engine
    checks that the sender controls it, that the phase is ``turns``, that it is that
    creature's turn when ``on_turn`` (and that it is not, for off-turn reactions when
    ``on_turn`` is ``False``), that ``requires`` (if any) is met and that ``costs``
    can be paid, in that order (docs/plugins.md). It then asks the
    ``zonekeep_action_refusal`` hook and calls ``handler``, after emitting the
    ``action_taken`` event that pays the cost. ``requires`` is an optional
    :data:`Requirement` on the creature (prone to stand up, a readied attack to
    release); it counts when listing what a creature may do now, and without it the
    command is offered to every creature.
    """

    id: str
    handler: Handler
    summary: str
    params: Mapping[str, Param] = attrs.field(factory=dict)
    who: Who = "creature"
    costs: tuple[Cost, ...] = ("free",)
    on_turn: bool | None = True
    phases: tuple[str, ...] = ("turns",)
    needs_capable: bool = True
    requires: Requirement | None = None
    #: Optionally, the ways the creature may send it now (a caster's spells with their
    #: slots, targets and zones): :meth:`Engine.action_details` lists them as the
    #: command's ``choices`` while it is available.
    choices: Chooser | None = attrs.field(default=None, eq=False)
