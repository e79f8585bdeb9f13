"""Encounter state and the fold that applies events to it.

State is a fold over events: :func:`replay` of an encounter's events rebuilds
exactly the state that was built live. :func:`apply_event` is the only code that
changes a state; rules decide events, they never assign to the state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import attrs

from . import _events as ev
from ._arena import Arena, Asset, single_zone_arena
from ._fairdice import EMPTY_MIX, next_mix
from ._features import SequenceItem
from ._types import Attack, Creature, EncounterOptions, Size

if TYPE_CHECKING:
    from ._custom import PluginCatalog

Phase = Literal["surprise", "positions", "initiative", "turns", "ended"]
#: The steps of an encounter, in order (docs/rules.md, 1).
PHASES: tuple[Phase, ...] = ("surprise", "positions", "initiative", "turns", "ended")
#: Every phase but ``ended``: where a command that works until the encounter ends runs.
OPEN_PHASES: tuple[Phase, ...] = PHASES[:-1]

#: Override fields the GM may set directly, with the Python type each takes.
OVERRIDE_FIELDS: dict[str, tuple[type, ...]] = {
    "hp": (int,),
    "max_hp": (int,),
    #: Temporary hit points the GM gives or takes away (set as they are: no "larger stays").
    "temp_hp": (int,),
    "ac": (int,),
    "sharing_with": (str, type(None)),
    "hidden": (bool,),
    "side": (str,),
    "controller": (str,),
    "pc": (bool,),
    "condition_immunities": (list,),
    #: A size name (``"Small"``): a creature that grows or shrinks (an ooze splitting).
    "size": (str,),
}


@attrs.define
class TurnResources:
    """What the creature whose turn it is has left.

    Guarantees (kept by the rules): no count is ever negative and
    ``movement_spent`` never exceeds what :func:`movement_left` allowed.
    """

    movement_spent: int = 0
    dashes: int = 0
    actions: int = 1
    bonus_actions: int = 1
    interactions: int = 1
    disengaged: bool = False
    sprinting: bool = False
    entered_zone: str | None = None
    #: The attacks left of the Attack action the creature took this turn, beyond the
    #: first (Extra Attack): each ``attack`` command spends one instead of an action.
    attacks: int = 0
    #: The attacks left of the multiattack the creature is making this turn (its
    #: action already spent), in no order: it makes them in the order it chooses.
    attacks_left: list[SequenceItem] = attrs.field(factory=list)
    #: The multiattack attack being made now (its disadvantage, if any, applies).
    multiattack_current: SequenceItem | None = None


@attrs.define
class ReadiedAttack:
    target: str
    attack: str
    trigger: str


@attrs.frozen
class DiceState:
    """The encounter's dice as every viewer sees them (SPEC.md, "Dice").

    ``mode`` is ``fair`` or ``seeded``; ``commitment`` is the SHA-256 of the current
    seed; ``seed`` is public for seeded dice, and for fair dice once ``revealed``.
    ``mix`` is the hex of the contributions' mix so far, ``contributions`` their
    number, ``epoch`` the number of seeds committed so far (1 for the first).
    """

    mode: Literal["fair", "seeded"]
    commitment: str
    seed: str | None = None
    revealed: bool = False
    mix: str = EMPTY_MIX.hex()
    contributions: int = 0
    epoch: int = 1


@attrs.define
class EncounterState:
    """Everything about one encounter, rebuilt by folding its events.

    ``initiative`` is the fixed order of slots; ``turn_slot``/``turn_member`` point
    at the current turn and ``active`` names the creature taking it (``None``
    between turns). ``seq`` counts the events applied so far.
    """

    id: str = ""
    name: str = ""
    options: EncounterOptions = attrs.field(factory=EncounterOptions)
    phase: Phase = "surprise"
    round: int = 0
    creatures: dict[str, Creature] = attrs.field(factory=dict)
    arena: Arena = attrs.field(factory=single_zone_arena)
    surprised: list[str] = attrs.field(factory=list)
    initiative: list[ev.InitiativeEntry] = attrs.field(factory=list)
    turn_slot: int = -1
    turn_member: int = -1
    active: str | None = None
    resources: TurnResources = attrs.field(factory=TurnResources)
    reactions_used: list[str] = attrs.field(factory=list)
    pending: list[ev.Decision] = attrs.field(factory=list)
    decisions_opened: int = 0
    hazards: dict[str, ev.Hazard] = attrs.field(factory=dict)
    readied: dict[str, ReadiedAttack] = attrs.field(factory=dict)
    turns_taken: list[str] = attrs.field(factory=list)
    keep_going: bool = False
    ended_reason: str | None = None
    engagements: list[tuple[str, str]] = attrs.field(factory=list)
    last_melee: dict[str, str] = attrs.field(factory=dict)
    adjacent: list[tuple[str, str]] = attrs.field(factory=list)
    back_to_back: list[tuple[str, str]] = attrs.field(factory=list)
    effects: dict[str, Asset] = attrs.field(factory=dict)
    #: The assets (of the arena, or ongoing effects) hidden from players and
    #: spectators, sorted (``asset_placed`` with ``hidden``, ``asset_changed``).
    hidden_assets: list[str] = attrs.field(factory=list)
    maneuver: ev.Maneuver | None = None
    notes: dict[str, ev.Note] = attrs.field(factory=dict)
    #: Timed condition effects in play, by id, in the order they were applied.
    condition_effects: dict[str, ev.ConditionEffect] = attrs.field(factory=dict)
    #: ``(creature, condition)`` pairs held plainly (the roster, a ``condition_applied``)
    #: while an effect also gives them: when the last such effect ends, the condition stays.
    plain_overlaps: list[tuple[str, str]] = attrs.field(factory=list)
    #: Calls over the server's time budget so far, per plugin (``plugin_overran``).
    plugin_overruns: dict[str, int] = attrs.field(factory=dict)
    #: Plugins switched off for this encounter (``plugin_disabled``), in order.
    disabled_plugins: list[str] = attrs.field(factory=list)
    #: The dice's mode and commitment (SPEC.md, "Dice"), or ``None`` for dice the shell
    #: does not make verifiable (a test's entropy). Kept across rewinds: it follows
    #: the log, not the timeline.
    dice: DiceState | None = None
    #: Each plugin's own state, by namespace (``{"hazards": {"kicked": ["b1"]}}``):
    #: plain JSON-like values, changed only by the reducers of the event types the plugin
    #: declares (``zonekeep_event_types``), so a replay of the log rebuilds it. A key not
    #: here yet has its declared default; read it with ``RuleContext.plugin_state``.
    plugin_state: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    seq: int = 0

    @property
    def zones(self) -> tuple[str, ...]:
        """The ids of the arena's zones."""
        return tuple(z.id for z in self.arena.zones)

    def asset(self, asset_id: str) -> Asset | None:
        """An arena asset or an ongoing effect, by id."""
        if asset_id in self.effects:
            return self.effects[asset_id]
        try:
            return self.arena.asset(asset_id)
        except KeyError:
            return None

    def assets_in(self, zone: str) -> list[Asset]:
        """The arena's assets and the ongoing effects in ``zone``."""
        found = list(self.arena.assets_in(zone)) if self.arena.has_zone(zone) else []
        return found + [a for a in self.effects.values() if a.zone == zone]

    def in_zone(self, zone: str) -> list[Creature]:
        """Creatures in ``zone`` that are still in the fight, in roster order."""
        return [c for c in self.creatures.values() if c.zone == zone and not c.out_of_fight]

    def occupancy(self, zone: str) -> int:
        """How much of ``zone``'s capacity its creatures use (Tiny 0 ... Colossal 5)."""
        return sum(c.size.occupancy for c in self.creatures.values() if c.zone == zone)

    def engaged_with(self, cid: str) -> list[str]:
        """Ids of the creatures engaged with ``cid`` that are still in the fight."""
        found = []
        for a, b in self.engagements:
            other = b if a == cid else a if b == cid else None
            if other is not None and not self.creatures[other].out_of_fight:
                found.append(other)
        return found

    def is_engaged(self, a: str, b: str) -> bool:
        return _pair(a, b) in self.engagements

    def adjacent_to(self, cid: str) -> list[str]:
        return [b if a == cid else a for a, b in self.adjacent if cid in (a, b)]

    def copy(self) -> EncounterState:
        """A deep copy that shares nothing mutable with this state.

        Equal to ``copy.deepcopy(self)``, but much cheaper: immutable values (the
        arena, the options, frozen records such as notes, decisions and initiative
        entries) are shared, and only the mutable parts (the containers, the
        creatures, the turn resources, readied attacks) are copied. See
        :func:`_copier`.
        """
        if type(self) is not EncounterState:
            return copy.deepcopy(self)
        result: EncounterState = _copy_state(self)
        return result

    def creature(self, cid: str) -> Creature:
        return self.creatures[cid]

    def order(self) -> list[str]:
        """Creature ids in turn order: slots in order, members inside each slot."""
        return [m for e in self.initiative for m in e.members]

    def slot_of(self, cid: str) -> int:
        for i, e in enumerate(self.initiative):
            if cid in e.members:
                return i
        return -1

    def has_reaction(self, cid: str) -> bool:
        return cid not in self.reactions_used

    def decision(self, did: str) -> ev.Decision | None:
        return next((d for d in self.pending if d.id == did), None)


# -- copying -------------------------------------------------------------------------------------

#: How :meth:`EncounterState.copy` copies each field of the mutable classes in a state.
#: ``share``: an immutable value (an atom, a frozen record made of tuples and atoms, the
#: arena); ``list``/``dict``: a container of such values (copied one level); ``object``:
#: a mutable record made of atoms (copied one level); ``creatures``: the creatures,
#: each copied with its own plan. A field missing here (one added later) is deep-copied.
_COPY_PLANS: dict[str, dict[str, str]] = {
    # (extra_damage and on_hit: tuples of frozen records, never changed in place)
    "Attack": {"extra_damage": "share", "on_hit": "share"},
    "Creature": {
        "traits": "share",
        "actions": "share",
        "speeds": "dict",
        "attacks": "attacks",
        "saves": "dict",
        "skills": "dict",
        "conditions": "list",
        "elements": "list",
    },
    "EncounterState": {
        "options": "share",
        "arena": "share",
        "maneuver": "share",
        "creatures": "creatures",
        "surprised": "list",
        "initiative": "list",
        "resources": "object",
        "reactions_used": "list",
        "pending": "list",
        "hazards": "dict",
        "readied": "readied",
        "turns_taken": "list",
        "engagements": "list",
        "last_melee": "dict",
        "adjacent": "list",
        "back_to_back": "list",
        "effects": "dict",
        "hidden_assets": "list",
        "notes": "dict",
        "condition_effects": "dict",
        "plain_overlaps": "list",
        "plugin_overruns": "dict",
        "disabled_plugins": "list",
        "dice": "share",
    },
}

_ATOMS = (str, int, float, bool, type(None))

#: The copiers of the mutable records made of atoms (``TurnResources``,
#: ``ReadiedAttack``), by class (filled in once the copiers are built, below).
_FLAT_COPIERS: dict[type, Callable[[Any], Any]] = {}

#: Fields whose values no reducer changes in place (they are only ever replaced whole,
#: or never changed): the working copy a command is decided on
#: (:func:`working_copy`) shares them with the state it was made from instead of
#: copying them. A field added later is not here, so it is copied as its plan says.
#: A reducer that starts changing one of these in place must take it off this list
#: (``tests/test_state_sharing.py`` checks that deciding commands never changes the
#: state they were decided against).
_WORKING_SHARED: dict[str, frozenset[str]] = {
    "Creature": frozenset(
        {
            "speeds",
            "attacks",
            "saves",
            "skills",
            "damage_resistances",
            "damage_vulnerabilities",
            "damage_immunities",
            "condition_immunities",
            "damage_resistances_nonmagical",
            "damage_immunities_nonmagical",
            "abilities",
            # Replaced whole by its reducers (resource_spent, resource_restored,
            # recharge_rolled), never changed in place.
            "resources",
        }
    ),
    "EncounterState": frozenset(),
}

#: Fields a working copy copies less deeply than :data:`_COPY_PLANS` says, because
#: no reducer changes the values inside them in place. ``plugin_state``: only
#: ``PluginCatalog.fold`` changes it, and it puts a new dict in for the namespace it
#: folds (the reducer works on a copy), so one level is copied, the namespaces' dicts
#: shared (a deep copy of it on every command before).
_WORKING_PLANS: dict[str, dict[str, str]] = {
    "EncounterState": {"plugin_state": "dict"},
}


def _copier(
    cls: type,
    plan: dict[str, str],
    shared: frozenset[str] = frozenset(),
    creature_copier: str = "_copy_creature",
    creature_fn: Callable[[Any], Any] | None = None,
) -> Callable[[Any], Any]:
    """A function copying an instance of the attrs class ``cls`` field by field.

    Fields typed as plain atoms (``str``, ``int``, ``bool``, ``float``, ``None`` and
    their unions, ``Literal``s, :class:`~._types.Size`) are shared; the others follow
    ``plan`` (see :data:`_COPY_PLANS`) or are deep-copied. Copies are made without
    running ``__init__`` or any on-setattr hook (they are equal to the original by
    construction). A container field holding another type than planned (a tuple
    where a list is expected, say) is deep-copied, as before. The fields named in
    ``shared`` are shared whatever their plan (see :data:`_WORKING_SHARED`);
    ``creature_copier`` names the function copying each creature of a ``creatures``
    field (``_working_creature`` for a working copy); ``creature_fn``, when given, is
    the copier of exact :class:`Creature` instances that function calls, called
    directly (any other value of the dict is deep-copied, as that function does).

    The copier is generated code (``exec``), the sdk's one place for it: a copy is one
    plain attribute store per field, which no loop over the fields matches. Measured
    with ``bench/engine_bench.py --loop-only --budget 0.25`` (issue 28): a loop copier
    (``operator.attrgetter`` for the shared fields, one ``object.__setattr__`` per
    field) took a working copy of 8 creatures from 4.7 to 33 µs and cost 26-31% of a
    command's CPU, over the 20% that generated code must save to stay.
    """
    lines = ["def copy_(o):", "    n = _new(cls)"]
    # Without on-setattr hooks (validators, converters, frozen), plain assignment is
    # exactly object.__setattr__, only faster.
    plain = cls.__setattr__ is cast(Any, object.__setattr__)
    for f in attrs.fields(cls):
        how = "share" if f.name in shared else plan.get(f.name)
        if how is None and _is_atom_type(f.type):
            how = "share"
        if how is None:
            how = _flat_container(f.type)
        value = f"o.{f.name}"
        expr = {
            None: f"_deepcopy({value})",
            "share": value,
            # (The value read once, into v.)
            "list": f"v[:] if type(v := {value}) is list else _deepcopy(v)",
            "dict": f"v.copy() if type(v := {value}) is dict else _deepcopy(v)",
            "object": f"_flat[t](v) if (t := type(v := {value})) in _flat else _deepcopy(v)",
            "creatures": (
                f"{{k: {creature_copier}(v) for k, v in {value}.items()}} "
                if creature_fn is None
                else f"{{k: _cfn(v) if type(v) is _Creature else _deepcopy(v) "
                f"for k, v in {value}.items()}} "
            )
            + f"if type({value}) is dict else _deepcopy({value})",
            "attacks": f"[_copy_attack(a) for a in {value}] if type({value}) is list "
            f"else _deepcopy({value})",
            "readied": f"{{k: _copy_object(v) for k, v in {value}.items()}} "
            f"if type({value}) is dict else _deepcopy({value})",
        }[how]
        if plain:
            lines.append(f"    n.{f.name} = {expr}")
        else:
            lines.append(f"    _set(n, {f.name!r}, {expr})")
    lines.append("    return n")
    namespace: dict[str, Any] = {
        "cls": cls,
        "_new": object.__new__,
        "_set": object.__setattr__,
        "_deepcopy": copy.deepcopy,
        "_copy_object": _copy_object,
        "_copy_creature": _copy_creature,
        "_copy_attack": _copy_attack,
        "_working_creature": _working_creature,
        "_cfn": creature_fn,
        "_flat": _FLAT_COPIERS,
        "_Creature": Creature,
    }
    exec("\n".join(lines), namespace)  # generated from attrs field names only
    fn: Callable[[Any], Any] = namespace["copy_"]
    return fn


def _is_atom_type(t: Any) -> bool:
    """Whether a field annotation (a string, under ``from __future__ import annotations``)
    names only immutable atoms."""
    if not isinstance(t, str):
        return False
    parts = [p.strip() for p in t.split("|")]
    return all(
        p in ("str", "int", "float", "bool", "None", "Size", "Phase", "AttackKind")
        or p.startswith("Literal[")
        for p in parts
    )


def _flat_container(t: Any) -> str | None:
    """``"list"`` or ``"dict"`` for a field annotated as a list of atoms or a dict from
    atoms to atoms (``list[str]``, ``dict[str, int]``), which a one-level copy copies
    whole; ``None`` (deep-copied) for anything else. A field added later with such a
    type is thus copied cheaply without being named in :data:`_COPY_PLANS`."""
    if not isinstance(t, str) or not t.endswith("]"):
        return None
    for prefix, how in (("list[", "list"), ("dict[", "dict")):
        if t.startswith(prefix):
            inner = [p.strip() for p in t[len(prefix) : -1].split(",")]
            if len(inner) == (1 if how == "list" else 2) and all(_is_atom_type(p) for p in inner):
                return how
    return None


def _copy_object(o: Any) -> Any:
    """A copy of a mutable record made of atoms (``TurnResources``, ``ReadiedAttack``)."""
    if type(o) in _FLAT_COPIERS:
        return _FLAT_COPIERS[type(o)](o)
    return copy.deepcopy(o)


def _copy_creature(c: Creature) -> Creature:
    if type(c) is not Creature:
        return copy.deepcopy(c)
    result: Creature = _CREATURE_COPIER(c)
    return result


def _working_creature(c: Creature) -> Creature:
    if type(c) is not Creature:
        return copy.deepcopy(c)
    result: Creature = _WORKING_CREATURE_COPIER(c)
    return result


def working_copy(state: EncounterState) -> EncounterState:
    """The copy of ``state`` a command is decided on: equal to :meth:`EncounterState.copy`,
    and like it never changed by what changes the copy through :func:`apply_event`, but
    cheaper: the fields of :data:`_WORKING_SHARED` (which no reducer changes in place)
    are shared with ``state``. Code that changes a state other than through
    :func:`apply_event` must use :meth:`EncounterState.copy`."""
    if type(state) is not EncounterState:
        return copy.deepcopy(state)
    result: EncounterState = _working_state(state)
    return result


def _copy_attack(a: Any) -> Any:
    if type(a) is not Attack:
        return copy.deepcopy(a)
    return _ATTACK_COPIER(a)


def movement_left(state: EncounterState, creature: Creature, mode: str = "walk") -> int:
    """Feet of movement ``creature`` has left this turn for a move in ``mode``.

    Every mode draws on one budget: the speed for that mode (walking speed for
    climbing or swimming without the speed), plus the speed again for each Dash,
    less everything already spent this turn.
    """
    if state.active != creature.id:
        return 0
    speed = creature.speed_for(mode)
    res = state.resources
    return max(0, speed * (1 + res.dashes) - res.movement_spent)


_S = TypeVar("_S", bound=ev.Event)
_REDUCERS: dict[type[ev.Event], Callable[[EncounterState, Any], None]] = {}


def reducer(cls: type[_S]) -> Callable[[Callable[[EncounterState, _S], None]], None]:
    """Make the decorated function the reducer of event class ``cls``. Its docstring says
    how it changes the state in the event's terms, in Markdown: it is the "how" of
    SPEC.md's fold table (``zonekeep.protocol._folds.fold_hows``), which clients write
    their folds from."""

    def deco(fn: Callable[[EncounterState, _S], None]) -> None:
        _REDUCERS[cls] = fn

    return deco


def apply_event(
    state: EncounterState,
    event: ev.Event,
    catalog: PluginCatalog | None = None,
    *,
    strict: bool = False,
) -> None:
    """Apply one event to ``state`` in place and advance ``seq``.

    A :class:`~zonekeep.sdk.PluginEvent` is folded by its plugin's reducer, found in
    ``catalog`` (the engine's ``Engine.catalog``); without a catalog, or when its
    plugin is not installed, it is kept in the log but changes nothing but ``seq``.
    ``strict`` (an event being emitted) raises
    :class:`~zonekeep.sdk.host.CustomEventError` when its reducer fails, instead of
    logging it. Raises ``KeyError`` for an event class that has no reducer.
    """
    if type(event) is ev.PluginEvent:
        if catalog is not None:
            catalog.fold(state.plugin_state, event, strict=strict)
        elif strict:
            raise KeyError(f"no plugin catalog to fold {event.type!r} with")
    else:
        _REDUCERS[type(event)](state, event)
    state.seq += 1


def replay(events: Iterable[ev.Event], catalog: PluginCatalog | None = None) -> EncounterState:
    """Fold ``events`` from an empty state. The first must be ``encounter_created``.

    A ``rewound`` event brings the state back to how it was after event ``to_seq``
    (the events in between stay in the log); ``seq`` keeps counting every event.
    Plugin events are folded with ``catalog`` (see :func:`apply_event`).
    """
    state = EncounterState()
    for after in replay_steps(events, catalog):
        state = after
    return state


def replay_steps(
    events: Iterable[ev.Event],
    catalog: PluginCatalog | None = None,
    start: EncounterState | None = None,
) -> Iterator[EncounterState]:
    """Fold ``events`` as :func:`replay` does, yielding the state after each one.

    The state is changed in place from one step to the next (a ``rewound`` event
    yields a new one): copy it to keep it. One pass over the log whatever the number
    of rewinds: the state after each event that some rewind goes back to is kept
    (copied) on the way. Raises ``ValueError`` for a rewind to a seq that is not an
    earlier event. ``start``, when given, is the state after event ``start.seq`` (never
    changed here) and ``events`` the ones after it: a rewind must then go back to
    ``start.seq`` or later (``KeyError`` otherwise).
    """
    log = list(events)
    targets = {e.to_seq for e in log if isinstance(e, ev.Rewound)}
    base = 0 if start is None else start.seq
    state = EncounterState() if start is None else working_copy(start)
    kept: dict[int, EncounterState] = {base: state.copy()} if base in targets else {}
    for seq, event in enumerate(log, base + 1):
        if isinstance(event, ev.Rewound):
            if not 0 <= event.to_seq < seq:
                raise ValueError(
                    f"rewound to seq {event.to_seq}, which is not an earlier event (this is {seq})"
                )
            dice = state.dice
            state = kept[event.to_seq].copy()
            state.seq = seq
            state.dice = dice
        else:
            apply_event(state, event, catalog)
        if seq in targets:
            kept[seq] = state.copy()
        yield state


@reducer(ev.Rewound)
def _rewound(s: EncounterState, e: ev.Rewound) -> None:
    raise ValueError(
        "a 'rewound' event needs the log before it: fold it with replay(), not apply_event()"
    )


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _drop_pairs(pairs: list[tuple[str, str]], cid: str) -> None:
    pairs[:] = [p for p in pairs if cid not in p]


_Item = TypeVar("_Item", str, tuple[str, str])


def _add_sorted(items: list[_Item], item: _Item) -> None:
    """Add ``item`` to a list kept sorted and free of duplicates (if it is not there yet)."""
    if item not in items:
        items.append(item)
        items.sort()


def _discard(items: list[_Item], item: _Item) -> None:
    """Remove ``item`` from ``items`` if it is there."""
    if item in items:
        items.remove(item)


@reducer(ev.EncounterCreated)
def _created(s: EncounterState, e: ev.EncounterCreated) -> None:
    """`id` becomes the event's `encounter`; `name`, `options` and `arena` the event's;
    `creatures` its `creatures`, by id; `phase` becomes `surprise`."""
    s.id = e.encounter
    s.name = e.name
    s.options = e.options
    s.arena = e.arena
    s.creatures = {c.id: _copy_creature(c) for c in e.creatures}
    s.phase = "surprise"


@reducer(ev.SurpriseDetermined)
def _surprise(s: EncounterState, e: ev.SurpriseDetermined) -> None:
    """`surprised` becomes the event's list; `phase` becomes `positions`."""
    s.surprised = list(e.surprised)
    s.phase = "positions"


@reducer(ev.PositionsEstablished)
def _positions(s: EncounterState, e: ev.PositionsEstablished) -> None:
    """Each creature named in `positions` gets that `zone`; `phase` becomes `initiative`."""
    for cid, zone in e.positions.items():
        s.creatures[cid].zone = zone
    s.phase = "initiative"


@reducer(ev.InitiativeRolled)
def _initiative(s: EncounterState, e: ev.InitiativeRolled) -> None:
    """`initiative` becomes the event's `entries`."""
    s.initiative = list(e.entries)


@reducer(ev.DecisionOpened)
def _decision_opened(s: EncounterState, e: ev.DecisionOpened) -> None:
    """The `decision` is appended to `pending`; `decisions_opened` goes up by one."""
    s.pending.append(e.decision)
    s.decisions_opened += 1


@reducer(ev.DecisionResolved)
def _decision_resolved(s: EncounterState, e: ev.DecisionResolved) -> None:
    """The decision with that id leaves `pending` (nothing changes if it is not there). For
    an `initiative_tie`, the `initiative` entries whose `slot` is in `choice` are put in the
    order of `choice`, in the places they held between them."""
    decision = s.decision(e.decision)
    if decision is None:
        return
    s.pending.remove(decision)
    if decision.kind == "initiative_tie":
        positions = sorted(i for i, entry in enumerate(s.initiative) if entry.slot in e.choice)
        by_slot = {entry.slot: entry for entry in s.initiative}
        for pos, slot in zip(positions, e.choice, strict=True):
            s.initiative[pos] = by_slot[slot]


@reducer(ev.GroupOrderSet)
def _group_order(s: EncounterState, e: ev.GroupOrderSet) -> None:
    """The `initiative` entry whose `slot` is `group` gets `members`."""
    for i, entry in enumerate(s.initiative):
        if entry.slot == e.group:
            s.initiative[i] = attrs.evolve(entry, members=e.members)


@reducer(ev.RoundStarted)
def _round_started(s: EncounterState, e: ev.RoundStarted) -> None:
    """`phase` becomes `turns` and `round` the event's; `turn_slot` and `turn_member` become
    -1."""
    s.phase = "turns"
    s.round = e.round
    s.turn_slot = -1
    s.turn_member = -1


@reducer(ev.RoundEnded)
def _round_ended(s: EncounterState, e: ev.RoundEnded) -> None:
    """`active` becomes null."""
    s.active = None


@reducer(ev.TurnStarted)
def _turn_started(s: EncounterState, e: ev.TurnStarted) -> None:
    """`turn_slot` and `turn_member` become the event's `slot` and `member`, `active` its
    `creature`; `resources` start afresh (`movement_spent` 0, `dashes` 0, `actions` 1,
    `bonus_actions` 1, `interactions` 1, `disengaged` and `sprinting` false, `entered_zone`
    null, `attacks_left` empty, `multiattack_current` null); the creature leaves
    `reactions_used`."""
    s.turn_slot, s.turn_member = e.slot, e.member
    s.active = e.creature
    s.resources = TurnResources()
    _discard(s.reactions_used, e.creature)


@reducer(ev.TurnSkipped)
def _turn_skipped(s: EncounterState, e: ev.TurnSkipped) -> None:
    """`turn_slot` and `turn_member` become the event's `slot` and `member`; `active`
    becomes null."""
    s.turn_slot, s.turn_member = e.slot, e.member
    s.active = None


@reducer(ev.TurnEnded)
def _turn_ended(s: EncounterState, e: ev.TurnEnded) -> None:
    """`active` becomes null and `resources` start afresh (as at `turn_started`); the
    creature is appended to `turns_taken` unless it is there."""
    s.active = None
    s.resources = TurnResources()
    if e.creature not in s.turns_taken:
        s.turns_taken.append(e.creature)


@reducer(ev.SurpriseEnded)
def _surprise_ended(s: EncounterState, e: ev.SurpriseEnded) -> None:
    """The creature leaves `surprised`."""
    _discard(s.surprised, e.creature)


@reducer(ev.ActionTaken)
def _action_taken(s: EncounterState, e: ev.ActionTaken) -> None:
    """By `cost`: `action`, `attack`, `bonus` and `interaction` take one from `resources`'
    `actions`, `attacks`, `bonus_actions` and `interactions`; `reaction` appends the creature to `reactions_used`
    unless it is there; `free` changes nothing."""
    r = s.resources
    if e.cost == "action":
        r.actions -= 1
    elif e.cost == "attack":
        r.attacks -= 1
    elif e.cost == "bonus":
        r.bonus_actions -= 1
    elif e.cost == "interaction":
        r.interactions -= 1
    elif e.cost == "reaction" and e.creature not in s.reactions_used:
        s.reactions_used.append(e.creature)


@reducer(ev.ActionGranted)
def _action_granted(s: EncounterState, e: ev.ActionGranted) -> None:
    """By `cost`: `action`, `attack` or `bonus` adds `count` to `resources`' `actions`,
    `attacks` or `bonus_actions` (the creature is the one whose turn it is)."""
    if e.cost == "action":
        s.resources.actions += e.count
    elif e.cost == "attack":
        s.resources.attacks += e.count
    elif e.cost == "bonus":
        s.resources.bonus_actions += e.count


@reducer(ev.MovementSpent)
def _movement_spent(s: EncounterState, e: ev.MovementSpent) -> None:
    """`resources.movement_spent` goes up by `feet`."""
    s.resources.movement_spent += e.feet


@reducer(ev.Moved)
def _moved(s: EncounterState, e: ev.Moved) -> None:
    """`resources.movement_spent` goes up by `cost`; when `feet` is above 0, the creature's
    `sharing_with` becomes null."""
    s.resources.movement_spent += e.cost
    if e.feet > 0:
        s.creatures[e.creature].sharing_with = None


@reducer(ev.Dashed)
def _dashed(s: EncounterState, e: ev.Dashed) -> None:
    """`resources.dashes` goes up by one."""
    s.resources.dashes += 1


@reducer(ev.Disengaged)
def _disengaged(s: EncounterState, e: ev.Disengaged) -> None:
    """`resources.disengaged` becomes true."""
    s.resources.disengaged = True


@reducer(ev.ConditionApplied)
def _condition_applied(s: EncounterState, e: ev.ConditionApplied) -> None:
    """The condition joins the creature's `conditions` (a sorted set). When a condition
    effect already gives the creature that condition, the pair [creature, condition] joins
    `plain_overlaps` (a sorted set): the condition then outlasts the effect."""
    if _given_by_effect(s, e.creature, e.condition):
        _add_sorted(s.plain_overlaps, (e.creature, e.condition))
    _add_sorted(s.creatures[e.creature].conditions, e.condition)


@reducer(ev.ConditionRemoved)
def _condition_removed(s: EncounterState, e: ev.ConditionRemoved) -> None:
    """The condition leaves the creature's `conditions`, and the pair [creature, condition]
    leaves `plain_overlaps`. Every effect of `condition_effects` giving the creature that condition is
    dropped as `condition_effect_ended` drops one, and with it each effect whose `parent` is
    a dropped one, down the line: no effect outlives its condition."""
    _discard(s.creatures[e.creature].conditions, e.condition)
    _discard(s.plain_overlaps, (e.creature, e.condition))
    giving = [
        x.id
        for x in s.condition_effects.values()
        if x.creature == e.creature and x.condition == e.condition
    ]
    for eid in giving:
        _drop_effect_tree(s, eid)


def _given_by_effect(s: EncounterState, cid: str, condition: str) -> bool:
    return any(x.creature == cid and x.condition == condition for x in s.condition_effects.values())


def _drop_effect(s: EncounterState, eid: str) -> None:
    """Forget effect ``eid``; its condition goes unless another effect or a plain hold keeps it."""
    effect = s.condition_effects.pop(eid, None)
    if effect is None or _given_by_effect(s, effect.creature, effect.condition):
        return
    pair = (effect.creature, effect.condition)
    if pair in s.plain_overlaps:
        s.plain_overlaps.remove(pair)
    else:
        _discard(s.creatures[effect.creature].conditions, effect.condition)


def _drop_effect_tree(s: EncounterState, eid: str) -> None:
    _drop_effect(s, eid)
    for child in [x.id for x in s.condition_effects.values() if x.parent == eid]:
        _drop_effect_tree(s, child)


@reducer(ev.ConditionEffectApplied)
def _condition_effect_applied(s: EncounterState, e: ev.ConditionEffectApplied) -> None:
    """The `effect` is kept in `condition_effects` under its `id`, and its condition joins
    the creature's `conditions` (a sorted set). When the creature had the condition already
    and no effect gave it, the pair [creature, condition] joins `plain_overlaps` (a sorted
    set)."""
    effect = e.effect
    c = s.creatures[effect.creature]
    if effect.condition in c.conditions and not _given_by_effect(
        s, effect.creature, effect.condition
    ):
        _add_sorted(s.plain_overlaps, (effect.creature, effect.condition))
    s.condition_effects[effect.id] = effect
    _add_sorted(c.conditions, effect.condition)


@reducer(ev.ConditionEffectTicked)
def _condition_effect_ticked(s: EncounterState, e: ev.ConditionEffectTicked) -> None:
    """The effect's `rounds` becomes the event's (if the effect is still in
    `condition_effects`)."""
    effect = s.condition_effects.get(e.effect)
    if effect is not None:
        s.condition_effects[e.effect] = attrs.evolve(effect, rounds=e.rounds)


@reducer(ev.ConditionEffectEnded)
def _condition_effect_ended(s: EncounterState, e: ev.ConditionEffectEnded) -> None:
    """The effect leaves `condition_effects` (nothing changes if it is not there). Unless
    another effect still gives its creature its condition: if the pair [creature, condition]
    is in `plain_overlaps`, the pair leaves that list and the condition stays; otherwise the
    condition leaves the creature's `conditions`."""
    _drop_effect(s, e.effect)


@reducer(ev.AttackMade)
def _attack_made(s: EncounterState, e: ev.AttackMade) -> None:
    """A `melee` attack sets `last_melee[target]` to the attacker; other kinds change
    nothing there. When `resources.multiattack_current` is not null and the attacker is
    `active`, it becomes null (that attack of the multiattack is made)."""
    if e.kind == "melee":
        s.last_melee[e.target] = e.attacker
    if s.resources.multiattack_current is not None and e.attacker == s.active:
        s.resources.multiattack_current = None


@reducer(ev.ResourceSpent)
def _resource_spent(s: EncounterState, e: ev.ResourceSpent) -> None:
    """The creature's `resources[resource]` becomes `left`."""
    c = s.creatures[e.creature]
    c.resources = {**c.resources, e.resource: e.left}  # (replaced: see _WORKING_SHARED)


@reducer(ev.ResourceRestored)
def _resource_restored(s: EncounterState, e: ev.ResourceRestored) -> None:
    """The creature's `resources[resource]` becomes `left`."""
    c = s.creatures[e.creature]
    c.resources = {**c.resources, e.resource: e.left}


@reducer(ev.RechargeRolled)
def _recharge_rolled(s: EncounterState, e: ev.RechargeRolled) -> None:
    """When `recharged` is true, the creature's `resources[resource]` becomes 1; otherwise
    nothing changes."""
    if e.recharged:
        c = s.creatures[e.creature]
        c.resources = {**c.resources, e.resource: 1}


@reducer(ev.MultiattackUsed)
def _multiattack_used(s: EncounterState, e: ev.MultiattackUsed) -> None:
    """`resources.attacks_left` becomes the event's `attacks_left` and
    `resources.multiattack_current` its `current`."""
    s.resources.attacks_left = list(e.attacks_left)
    s.resources.multiattack_current = e.current


@reducer(ev.Damaged)
def _damaged(s: EncounterState, e: ev.Damaged) -> None:
    """The creature's `hp` becomes the event's `hp` (for a player or spectator, an enemy's
    is a word)."""
    s.creatures[e.creature].hp = e.hp


@reducer(ev.Healed)
def _healed(s: EncounterState, e: ev.Healed) -> None:
    """The creature's `hp` becomes the event's `hp` (for a player or spectator, an enemy's
    is a word)."""
    s.creatures[e.creature].hp = e.hp


@reducer(ev.TempHpChanged)
def _temp_hp_changed(s: EncounterState, e: ev.TempHpChanged) -> None:
    """The creature's `temp_hp` becomes the event's `temp_hp` (for a player or spectator,
    an enemy's is null)."""
    s.creatures[e.creature].temp_hp = e.temp_hp  # type: ignore[assignment]


@reducer(ev.Readied)
def _readied(s: EncounterState, e: ev.Readied) -> None:
    """`readied[creature]` becomes `{target, attack, trigger}` from the event."""
    s.readied[e.creature] = ReadiedAttack(e.target, e.attack, e.trigger)


@reducer(ev.ReadiedCleared)
def _readied_cleared(s: EncounterState, e: ev.ReadiedCleared) -> None:
    """The creature's entry leaves `readied`."""
    s.readied.pop(e.creature, None)


@reducer(ev.CreatureAdded)
def _creature_added(s: EncounterState, e: ev.CreatureAdded) -> None:
    """The `creature` is added to `creatures`. With an `entry`: if an `initiative` entry has
    its `slot`, the creature's id is appended to that entry's `members`; otherwise `entry`
    is inserted into `initiative` at `index`, and `turn_slot` goes up by one if it was
    `index` or more."""
    s.creatures[e.creature.id] = _copy_creature(e.creature)
    if e.entry is None:
        return
    existing = next((i for i, x in enumerate(s.initiative) if x.slot == e.entry.slot), None)
    if existing is not None:
        entry = s.initiative[existing]
        s.initiative[existing] = attrs.evolve(entry, members=(*entry.members, e.creature.id))
        return
    s.initiative.insert(e.index, e.entry)
    if s.turn_slot >= e.index:
        s.turn_slot += 1


@reducer(ev.HazardAdded)
def _hazard_added(s: EncounterState, e: ev.HazardAdded) -> None:
    """`hazards[hazard.id]` becomes the `hazard`."""
    s.hazards[e.hazard.id] = e.hazard


@reducer(ev.HazardRemoved)
def _hazard_removed(s: EncounterState, e: ev.HazardRemoved) -> None:
    """The `hazard` (an id) leaves `hazards`."""
    s.hazards.pop(e.hazard, None)


@reducer(ev.OverrideApplied)
def _override(s: EncounterState, e: ev.OverrideApplied) -> None:
    """The creature's field named `field` becomes `value` (a `size` by its name)."""
    value = Size.parse(e.value) if e.field == "size" else e.value
    setattr(s.creatures[e.creature], e.field, value)


@reducer(ev.EncounterContinued)
def _continued(s: EncounterState, e: ev.EncounterContinued) -> None:
    """`keep_going` becomes true."""
    s.keep_going = True


@reducer(ev.EncounterEnded)
def _ended(s: EncounterState, e: ev.EncounterEnded) -> None:
    """`phase` becomes `ended`, `active` null and `ended_reason` the event's `reason`;
    `pending` is emptied."""
    s.phase = "ended"
    s.active = None
    s.ended_reason = e.reason
    s.pending.clear()


@reducer(ev.ManeuverStarted)
def _maneuver_started(s: EncounterState, e: ev.ManeuverStarted) -> None:
    """`maneuver` becomes the event's `maneuver`."""
    s.maneuver = e.maneuver


@reducer(ev.ManeuverUpdated)
def _maneuver_updated(s: EncounterState, e: ev.ManeuverUpdated) -> None:
    """`maneuver` becomes the event's `maneuver`."""
    s.maneuver = e.maneuver


@reducer(ev.ManeuverEnded)
def _maneuver_ended(s: EncounterState, e: ev.ManeuverEnded) -> None:
    """`maneuver` becomes null."""
    s.maneuver = None


@reducer(ev.ZoneEntered)
def _zone_entered(s: EncounterState, e: ev.ZoneEntered) -> None:
    """The creature's `zone` becomes `to_zone` and its `sharing_with` null; every pair
    holding it leaves `engagements`, `adjacent` and `back_to_back`. Its `position` becomes
    null unless that asset (an arena asset, or an ongoing effect of `effects`) is in
    `to_zone`, and its `elements` keep only the assets in `to_zone`. When the move is not
    `forced` and the creature is `active`, `resources.movement_spent` goes up by `cost` and
    `resources.entered_zone` becomes `to_zone`."""
    c = s.creatures[e.creature]
    c.zone = e.to_zone
    c.sharing_with = None
    # The rules end every engagement and adjacency of a creature leaving its zone with
    # events before this one (engagement_ended, adjacency_ended), so in a log written
    # since zonekeep 0.2 there is nothing left to drop here. Logs written by 0.1 had no
    # such events: for them, this keeps the engagements from outliving the move.
    _drop_pairs(s.engagements, c.id)
    _drop_pairs(s.adjacent, c.id)
    _drop_pairs(s.back_to_back, c.id)
    if c.position is not None:
        asset = s.asset(c.position)
        if asset is None or asset.zone != e.to_zone:
            c.position = None
    c.elements = [a for a in c.elements if (x := s.asset(a)) is not None and x.zone == e.to_zone]
    if not e.forced and s.active == c.id:
        s.resources.movement_spent += e.cost
        s.resources.entered_zone = e.to_zone


@reducer(ev.EngagementStarted)
def _engagement_started(s: EncounterState, e: ev.EngagementStarted) -> None:
    """The pair of `creature` and `enemy` joins `engagements` (a sorted set of pairs)."""
    _add_sorted(s.engagements, _pair(e.creature, e.enemy))


@reducer(ev.EngagementEnded)
def _engagement_ended(s: EncounterState, e: ev.EngagementEnded) -> None:
    """The pair of `creature` and `enemy` leaves `engagements`."""
    _discard(s.engagements, _pair(e.creature, e.enemy))


@reducer(ev.PositionTaken)
def _position_taken(s: EncounterState, e: ev.PositionTaken) -> None:
    """If `asset` is an arena asset of `kind` `prop` (and not an ongoing effect), it becomes
    the creature's `position`; otherwise it joins the creature's `elements` (a sorted
    set)."""
    c = s.creatures[e.creature]
    asset = s.asset(e.asset)
    if asset is not None and asset.kind == "prop" and e.asset not in s.effects:
        c.position = e.asset
    else:
        _add_sorted(c.elements, e.asset)


@reducer(ev.PositionLeft)
def _position_left(s: EncounterState, e: ev.PositionLeft) -> None:
    """The creature's `position` becomes null if it is `asset`; `asset` leaves the
    creature's `elements`."""
    c = s.creatures[e.creature]
    if c.position == e.asset:
        c.position = None
    _discard(c.elements, e.asset)


@reducer(ev.AdjacencyTaken)
def _adjacency_taken(s: EncounterState, e: ev.AdjacencyTaken) -> None:
    """The pair of `creature` and `ally` joins `adjacent`, and `back_to_back` too when the
    event's `back_to_back` is true (sorted sets of pairs)."""
    pair = _pair(e.creature, e.ally)
    _add_sorted(s.adjacent, pair)
    if e.back_to_back:
        _add_sorted(s.back_to_back, pair)


@reducer(ev.EffectCreated)
def _effect_created(s: EncounterState, e: ev.EffectCreated) -> None:
    """`effects[asset.id]` becomes the `asset`."""
    s.effects[e.asset.id] = e.asset


@reducer(ev.EffectEnded)
def _effect_ended(s: EncounterState, e: ev.EffectEnded) -> None:
    """The `asset` (an id) leaves `effects` and every creature's `elements`."""
    s.effects.pop(e.asset, None)
    for c in s.creatures.values():
        _discard(c.elements, e.asset)


def _asset_replaced(s: EncounterState, asset: Asset) -> None:
    if asset.id in s.effects:
        s.effects[asset.id] = asset
        return
    assets = tuple(asset if a.id == asset.id else a for a in s.arena.assets)
    s.arena = attrs.evolve(s.arena, assets=assets)


@reducer(ev.AssetPlaced)
def _asset_placed(s: EncounterState, e: ev.AssetPlaced) -> None:
    """The `asset` is appended to `arena.assets`; when `hidden` is true, its id joins
    `hidden_assets` (a sorted set)."""
    s.arena = attrs.evolve(s.arena, assets=(*s.arena.assets, e.asset))
    if e.hidden:
        _add_sorted(s.hidden_assets, e.asset.id)


@reducer(ev.AssetChanged)
def _asset_changed(s: EncounterState, e: ev.AssetChanged) -> None:
    """Nothing changes unless `asset` is an id in `arena.assets` or `effects`. When `data`
    is not null, that asset's `data` becomes it (in `effects` if it is an ongoing effect,
    else in `arena.assets`, in its place). When `hidden` is true, `asset` joins
    `hidden_assets` (a sorted set); when false, it leaves it; when null, nothing there."""
    asset = s.asset(e.asset)
    if asset is None:
        return
    if e.data is not None:
        _asset_replaced(s, attrs.evolve(asset, data=dict(e.data)))
    if e.hidden is True:
        _add_sorted(s.hidden_assets, e.asset)
    elif e.hidden is False:
        _discard(s.hidden_assets, e.asset)


@reducer(ev.AssetRemoved)
def _asset_removed(s: EncounterState, e: ev.AssetRemoved) -> None:
    """`asset` (an id) leaves `effects` if it is there, else `arena.assets`; it leaves
    `hidden_assets` and every creature's `elements`, and each creature whose `position` it
    is gets `position` null."""
    if s.effects.pop(e.asset, None) is None:
        assets = tuple(a for a in s.arena.assets if a.id != e.asset)
        if len(assets) != len(s.arena.assets):
            s.arena = attrs.evolve(s.arena, assets=assets)
    _discard(s.hidden_assets, e.asset)
    for c in s.creatures.values():
        _discard(c.elements, e.asset)
        if c.position == e.asset:
            c.position = None


@reducer(ev.ZoneAffected)
def _zone_affected(s: EncounterState, e: ev.ZoneAffected) -> None:
    # No change: the damaged events that follow change hp.
    pass


@reducer(ev.SpaceShared)
def _space_shared(s: EncounterState, e: ev.SpaceShared) -> None:
    """The creature's `sharing_with` becomes `other`."""
    s.creatures[e.creature].sharing_with = e.other


@reducer(ev.Sprinted)
def _sprinted(s: EncounterState, e: ev.Sprinted) -> None:
    """`resources.dashes` goes up by one and `resources.sprinting` becomes true."""
    s.resources.dashes += 1
    s.resources.sprinting = True


@reducer(ev.AdjacencyEnded)
def _adjacency_ended(s: EncounterState, e: ev.AdjacencyEnded) -> None:
    """The pair of `creature` and `ally` leaves `adjacent` and `back_to_back`."""
    pair = _pair(e.creature, e.ally)
    for pairs in (s.adjacent, s.back_to_back):
        _discard(pairs, pair)


@reducer(ev.NoteAdded)
def _note_added(s: EncounterState, e: ev.NoteAdded) -> None:
    """`notes[note.id]` becomes the `note`."""
    s.notes[e.note.id] = e.note


@reducer(ev.NoteRemoved)
def _note_removed(s: EncounterState, e: ev.NoteRemoved) -> None:
    """The `note` (an id) leaves `notes`."""
    s.notes.pop(e.note, None)


@reducer(ev.PluginOverran)
def _plugin_overran(s: EncounterState, e: ev.PluginOverran) -> None:
    """`plugin_overruns[plugin]` goes up by one (from 0)."""
    s.plugin_overruns[e.plugin] = s.plugin_overruns.get(e.plugin, 0) + 1


@reducer(ev.PluginDisabled)
def _plugin_disabled(s: EncounterState, e: ev.PluginDisabled) -> None:
    """`plugin` is appended to `disabled_plugins` unless it is there."""
    if e.plugin not in s.disabled_plugins:
        s.disabled_plugins.append(e.plugin)


# -- copiers (built once, after the classes) -------------------------------------------------------

_FLAT_COPIERS.update(
    {
        TurnResources: _copier(
            TurnResources, {"attacks_left": "list", "multiattack_current": "share"}
        ),
        ReadiedAttack: _copier(ReadiedAttack, {}),
    }
)
_ATTACK_COPIER = _copier(Attack, _COPY_PLANS["Attack"])
_CREATURE_COPIER = _copier(Creature, _COPY_PLANS["Creature"])
_copy_state = _copier(EncounterState, _COPY_PLANS["EncounterState"], creature_fn=_CREATURE_COPIER)
_WORKING_CREATURE_COPIER = _copier(Creature, _COPY_PLANS["Creature"], _WORKING_SHARED["Creature"])
_working_state = _copier(
    EncounterState,
    {**_COPY_PLANS["EncounterState"], **_WORKING_PLANS["EncounterState"]},
    _WORKING_SHARED["EncounterState"],
    creature_copier="_working_creature",
    creature_fn=_WORKING_CREATURE_COPIER,
)


@reducer(ev.DiceCommitted)
def _dice_committed(s: EncounterState, e: ev.DiceCommitted) -> None:
    """`dice` becomes `{mode, commitment, seed}` from the event (`seed` null when absent),
    with `revealed` false, `mix` and `contributions` kept from the `dice` before (64 zeros
    and 0 when there was none) and `epoch` one more than before (1 for the first)."""
    old = s.dice
    s.dice = DiceState(
        mode=e.mode,
        commitment=e.commitment,
        seed=e.seed,
        mix=old.mix if old else EMPTY_MIX.hex(),
        contributions=old.contributions if old else 0,
        epoch=(old.epoch if old else 0) + 1,
    )


@reducer(ev.DiceContributed)
def _dice_contributed(s: EncounterState, e: ev.DiceContributed) -> None:
    """When there are `dice`: `mix` becomes the hex SHA-256 of the previous mix's bytes
    followed by the UTF-8 bytes of `value`, and `contributions` goes up by one."""
    if s.dice is not None:
        mix = next_mix(bytes.fromhex(s.dice.mix), e.value).hex()
        s.dice = attrs.evolve(s.dice, mix=mix, contributions=s.dice.contributions + 1)


@reducer(ev.DiceRevealed)
def _dice_revealed(s: EncounterState, e: ev.DiceRevealed) -> None:
    """When there are `dice`: `seed` becomes the event's and `revealed` true."""
    if s.dice is not None:
        s.dice = attrs.evolve(s.dice, seed=e.seed, revealed=True)


def _record_only(s: EncounterState, e: ev.Event) -> None:
    """Events that only record what happened (rolls, words, errors): no state change."""


for _cls in (
    ev.Interacted,
    ev.Communicated,
    ev.TumbleAttempted,
    ev.SaveMade,
    ev.ConditionPrevented,
    ev.ContestRolled,
    ev.CheckRolled,
    ev.PluginErrorRecorded,
    ev.DiceDrawn,
    ev.DiceRolled,
    ev.ChatSent,
):
    _REDUCERS[_cls] = _record_only
