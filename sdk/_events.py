"""Events: every change to an encounter is one of these.

Each event class is frozen, carries everything needed to apply it (dice results
included) and is registered under its wire ``type`` name in :data:`EVENT_TYPES`.
The fold that applies them lives in :mod:`zonekeep.sdk._state`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeVar

import attrs

from ._arena import Arena, Asset, single_zone_arena
from ._damage import DamageStep
from ._dice import RollRecord
from ._features import SequenceItem
from ._types import HP_METADATA, Creature, EncounterOptions

EVENT_TYPES: dict[str, type[Event]] = {}

_E = TypeVar("_E", bound="type[Event]")


def event_type(name: str) -> Any:
    """Class decorator: register an event class under its wire ``type`` name."""

    def deco(cls: _E) -> _E:
        if name in EVENT_TYPES:
            raise ValueError(f"event type {name!r} is registered twice")
        cls.type = name
        EVENT_TYPES[name] = cls
        return cls

    return deco


@attrs.frozen
class Event:
    """Base class of all events. ``type`` is the registered wire name."""

    type: ClassVar[str] = "event"


@attrs.frozen
class InitiativeEntry:
    """One slot of the initiative order: a creature, or a group acting together.

    ``members`` take their turns one after another inside the slot, in list order.
    """

    slot: str
    members: tuple[str, ...]
    total: int
    roll: RollRecord
    dex_mod: int
    pc: bool
    controller: str


@attrs.frozen
class RollOff:
    """One round of a d20 roll-off: ``contenders[i]`` rolled ``rolls[i]``; highest first.

    Contenders are controllers (``gm`` or a player id) whose tied slots stay
    together. Those who tie again roll again in a further ``RollOff``. ``draws`` is
    ``[counter, sides]`` for each of ``rolls`` when the dice are verifiable.
    """

    contenders: tuple[str, ...]
    rolls: tuple[int, ...]
    #: ``(counter, sides)`` of each roll when the dice are verifiable; empty otherwise.
    draws: tuple[tuple[int, int], ...] = ()


@attrs.frozen
class Decision:
    """A pending choice the engine waits on.

    ``controller`` is who may answer (``gm`` or a player id); ``default`` is what
    applies if nobody answers in time. ``kind`` says how the choice is used. When
    ``ordering`` is true the answer is an ordering of all ``options``; otherwise it
    is exactly one of them. ``trigger``: what a reaction decision interrupted (opened
    with :func:`~zonekeep.sdk.offer_reaction`: an attack waiting for the answer, as
    :meth:`~zonekeep.sdk.AttackTrigger.to_data` writes it, or what a plugin's own
    reaction point waits with: the spells plugin's ``{"type": "spell", ...}``, a spell
    being cast, for Counterspell), ``None`` for the others;
    while one is pending the creatures' commands wait (reactions excepted).
    """

    id: str
    kind: str
    controller: str
    prompt: str
    options: tuple[str, ...]
    default: tuple[str, ...]
    creature: str | None = None
    ordering: bool = False
    trigger: dict[str, Any] | None = attrs.field(
        default=None,
        metadata={
            "added_later": True,
            "null": False,
            "schema": {"type": "object"},
            "doc": "What the reaction decision interrupted (an attack waiting for the "
            'answer: `{"type": "attack", ...}`); absent for other decisions. Since 1.6.',
        },
    )


@attrs.frozen
class Hazard:
    """A threat in play that is not a creature. A time-sensitive one keeps the encounter going."""

    id: str
    name: str
    time_sensitive: bool = True
    description: str = ""


@event_type("encounter_created")
@attrs.frozen
class EncounterCreated(Event):
    """The encounter began: its options, roster and arena (always event 1)."""

    encounter: str
    options: EncounterOptions
    creatures: tuple[Creature, ...]
    name: str = ""
    arena: Arena = attrs.field(factory=single_zone_arena)


@event_type("surprise_determined")
@attrs.frozen
class SurpriseDetermined(Event):
    """The GM said which creatures are surprised (``surprised`` may be empty)."""

    surprised: tuple[str, ...]


@event_type("positions_established")
@attrs.frozen
class PositionsEstablished(Event):
    """The GM put every creature in its starting zone (``positions``: creature id to zone id)."""

    positions: dict[str, str]


@event_type("initiative_rolled")
@attrs.frozen
class InitiativeRolled(Event):
    """Initiative was rolled: ``entries`` is the turn order, ``rolloffs`` the d20 roll-offs
    that broke ties."""

    entries: tuple[InitiativeEntry, ...]
    rolloffs: tuple[RollOff, ...] = ()


@event_type("decision_opened")
@attrs.frozen
class DecisionOpened(Event):
    """The engine now waits on ``decision`` (an initiative tie to order, a reaction to take)."""

    decision: Decision


@event_type("decision_resolved")
@attrs.frozen
class DecisionResolved(Event):
    """Decision ``decision`` was answered with ``choice`` by ``by`` (``defaulted`` when its
    deadline passed, or an initiative tie closed when its first tied slot's turn came)."""

    decision: str
    choice: tuple[str, ...]
    by: str
    defaulted: bool = False


@event_type("group_order_set")
@attrs.frozen
class GroupOrderSet(Event):
    """The GM set the order in which the members of group ``group`` take their turns."""

    group: str
    members: tuple[str, ...]


@event_type("round_started")
@attrs.frozen
class RoundStarted(Event):
    """Round ``round`` began."""

    round: int


@event_type("round_ended")
@attrs.frozen
class RoundEnded(Event):
    """Round ``round`` ended."""

    round: int


@event_type("turn_started")
@attrs.frozen
class TurnStarted(Event):
    """``creature``'s turn began (member ``member`` of initiative slot ``slot``)."""

    creature: str
    slot: int
    member: int


@event_type("turn_skipped")
@attrs.frozen
class TurnSkipped(Event):
    """``creature``'s turn was passed over for ``reason`` (for example, it is out of the fight)."""

    creature: str
    slot: int
    member: int
    reason: str


@event_type("turn_ended")
@attrs.frozen
class TurnEnded(Event):
    """``creature``'s turn ended."""

    creature: str


@event_type("surprise_ended")
@attrs.frozen
class SurpriseEnded(Event):
    """``creature`` is no longer surprised."""

    creature: str


@event_type("action_taken")
@attrs.frozen
class ActionTaken(Event):
    """``creature`` used ``action``, paying ``cost`` (action, bonus, interaction, reaction, free).
    ``roll`` is the action's own roll when its effect is a number rolled for it (a Cutting
    Words die, Deflect Missiles' 1d10 + Dexterity modifier + monk level), so that its dice
    are in the log."""

    creature: str
    action: str
    cost: str
    roll: RollRecord | None = None


@event_type("action_granted")
@attrs.frozen
class ActionGranted(Event):
    """``creature``, whose turn it is, gets ``count`` more ``cost`` this turn: an
    ``action`` (a fighter's Action Surge), a ``bonus`` action, or an ``attack`` of the
    Attack action it has just taken (Extra Attack); ``source`` says what gave it."""

    creature: str
    cost: str
    source: str
    count: int = 1


@event_type("movement_spent")
@attrs.frozen
class MovementSpent(Event):
    """``creature`` used ``feet`` feet of its movement for ``reason`` without moving (standing
    up, a surcharge)."""

    creature: str
    feet: int
    reason: str


@event_type("moved")
@attrs.frozen
class Moved(Event):
    """A move of ``feet`` in ``mode`` that cost ``cost`` feet; ``extra`` names the surcharges."""

    creature: str
    feet: int
    mode: str
    cost: int
    extra: tuple[str, ...] = ()
    through: tuple[str, ...] = ()


@event_type("dashed")
@attrs.frozen
class Dashed(Event):
    """``creature`` took the Dash action: extra movement equal to its speed this turn."""

    creature: str


@event_type("sprinted")
@attrs.frozen
class Sprinted(Event):
    """Like a Dash, but a further zone entered must be straight ahead."""

    creature: str


@event_type("disengaged")
@attrs.frozen
class Disengaged(Event):
    """``creature`` took the Disengage action: its movement provokes no opportunity attacks
    this turn."""

    creature: str


@event_type("condition_applied")
@attrs.frozen
class ConditionApplied(Event):
    """``creature`` gained ``condition`` (from ``source``); ``override``: the GM gave it
    to a creature immune to it, saying so explicitly."""

    creature: str
    condition: str
    source: str = ""
    override: bool = False


@event_type("condition_removed")
@attrs.frozen
class ConditionRemoved(Event):
    """``creature`` lost ``condition`` (``reason`` says why)."""

    creature: str
    condition: str
    reason: str = ""


@attrs.frozen
class ConditionEffect:
    """A condition with a duration on one creature, as initiative trackers keep them.

    ``id`` names it (``"c7"``). It ends at the first of: ``rounds`` running out (the
    rounds left, counted down at the end of every round: applied in round 1 with
    ``rounds=2``, it ends at the end of round 2); the start or end (``until``) of
    ``until_creature``'s next turn; a successful ``save`` (an ability such as
    ``"wis"``) against ``save_dc``, rolled by ``creature`` at the start or end
    (``save_when``) of each of its turns; its ``parent`` effect ending; the GM ending
    it. With none of these it lasts until ended. ``applied_round`` and
    ``applied_turn`` (whose turn was running) tell when it began: an effect applied
    during ``until_creature``'s turn lasts until the end of its *next* turn.
    """

    id: str
    creature: str
    condition: str
    source: str = ""
    rounds: int | None = None
    until: Literal["start", "end"] | None = None
    until_creature: str | None = None
    save: str | None = None
    save_dc: int | None = None
    save_when: Literal["start", "end"] = "end"
    parent: str | None = None
    applied_round: int = 0
    applied_turn: str | None = None


@event_type("condition_effect_applied")
@attrs.frozen
class ConditionEffectApplied(Event):
    """A timed effect began; its condition is now on the creature. ``override``: the GM
    gave it to a creature immune to it, saying so explicitly."""

    effect: ConditionEffect
    override: bool = False


@event_type("condition_effect_ticked")
@attrs.frozen
class ConditionEffectTicked(Event):
    """A round ended: effect ``effect`` on ``creature`` has ``rounds`` rounds left (at least 1)."""

    effect: str
    creature: str
    rounds: int


@event_type("condition_effect_ended")
@attrs.frozen
class ConditionEffectEnded(Event):
    """Effect ``effect`` ended (``reason``: its rounds ran out, a turn boundary, a save, its
    parent ended, the GM). ``condition`` leaves ``creature`` unless another effect still
    gives it or the creature also holds it plainly (a ``condition_applied``)."""

    effect: str
    creature: str
    condition: str
    reason: str = ""
    #: True when its duration ran out (rounds, a turn's start or end, a save, its
    #: parent ending); false when the GM or a rule ended it early.
    expired: bool = False


@event_type("condition_prevented")
@attrs.frozen
class ConditionPrevented(Event):
    """``creature`` is immune to ``condition``, so ``source`` did not give it (nothing
    changes; the event says why the condition is not there)."""

    creature: str
    condition: str
    source: str = ""


@event_type("attack_made")
@attrs.frozen
class AttackMade(Event):
    """``attacker`` attacked ``target`` with ``attack``: ``roll`` against ``target_ac``, a
    ``hit`` or a miss (``reaction`` when made as a reaction)."""

    attacker: str
    target: str
    attack: str
    kind: str
    roll: RollRecord
    target_ac: int
    hit: bool
    critical: bool = False
    reaction: bool = False


@event_type("damaged")
@attrs.frozen
class Damaged(Event):
    """``creature`` took ``amount`` damage of ``damage_type`` and now has ``hp`` hit points.

    ``raw`` and ``raw_type`` are what the damage was before the pipeline changed it
    (plugins' ``zonekeep_modify_damage``, then the creature's immunity, resistance and
    vulnerability), ``steps`` each change in order; ``raw`` is null in events stored
    before protocol 1.4."""

    creature: str
    amount: int
    hp: int = attrs.field(metadata=HP_METADATA)
    damage_type: str = ""
    roll: RollRecord | None = None
    source: str = ""
    raw: int | None = None
    raw_type: str | None = None
    steps: tuple[DamageStep, ...] = ()


@event_type("healed")
@attrs.frozen
class Healed(Event):
    """``creature`` regained ``amount`` hit points and now has ``hp``. ``roll`` is the
    healing's roll when it was rolled (Second Wind, a cure wounds), so that its dice are
    in the log."""

    creature: str
    amount: int
    hp: int = attrs.field(metadata=HP_METADATA)
    source: str = ""
    roll: RollRecord | None = None


@event_type("temp_hp_changed")
@attrs.frozen
class TempHpChanged(Event):
    """``creature`` now has ``temp_hp`` temporary hit points: gained (the larger of its
    own and the new ones: they do not add up), or spent by damage (``source``
    ``damage``), or lost. ``roll`` is the roll they were gained by (False Life's 1d4 + 4,
    Bear's Endurance's 2d6), so that its dice are in the log; null when none was rolled.
    For a player or spectator, an enemy's ``temp_hp`` and ``roll`` are null."""

    creature: str
    temp_hp: int | None
    source: str = ""
    roll: RollRecord | None = None


@event_type("interacted")
@attrs.frozen
class Interacted(Event):
    """``creature`` interacted with ``object``, paying with ``via`` (its object interaction or
    its action)."""

    creature: str
    object: str
    via: str


@event_type("communicated")
@attrs.frozen
class Communicated(Event):
    """``creature`` said ``text`` (up to fifteen words)."""

    creature: str
    text: str


@event_type("readied")
@attrs.frozen
class Readied(Event):
    """``creature`` readied ``attack`` against ``target``, to release when ``trigger`` happens."""

    creature: str
    target: str
    attack: str
    trigger: str


@event_type("readied_cleared")
@attrs.frozen
class ReadiedCleared(Event):
    """``creature``'s readied attack is gone (``reason``: released, or expired at the start of
    its turn)."""

    creature: str
    reason: str


@event_type("creature_added")
@attrs.frozen
class CreatureAdded(Event):
    """``creature`` joined the encounter; once initiative is rolled, ``entry`` is its place in
    the order at ``index``."""

    creature: Creature
    entry: InitiativeEntry | None = None
    index: int = -1


@event_type("hazard_added")
@attrs.frozen
class HazardAdded(Event):
    """``hazard`` came into play."""

    hazard: Hazard


@event_type("hazard_removed")
@attrs.frozen
class HazardRemoved(Event):
    """Hazard ``hazard`` went out of play."""

    hazard: str


@event_type("override_applied")
@attrs.frozen
class OverrideApplied(Event):
    """The GM (``by``) set ``field`` of ``creature`` to ``value``, overruling the rules."""

    by: str
    creature: str
    field: str
    value: Any


@event_type("encounter_continued")
@attrs.frozen
class EncounterContinued(Event):
    """``by`` (the GM) chose to keep the encounter going although the rules would end it."""

    by: str


@event_type("encounter_ended")
@attrs.frozen
class EncounterEnded(Event):
    """The encounter ended for ``reason`` (``by``: the rules or the GM)."""

    reason: str
    by: str = "rules"


@attrs.frozen
class Maneuver:
    """A move that may provoke reactions before each of its steps.

    ``kind`` names it (``enter``, ``take_position``, ``leave_position``,
    ``adjacent``, ``withdraw``, or a plugin's own); ``steps`` are its targets in
    order (zones entered, the asset, the ally, the enemy left); ``step`` is the
    next one to perform and ``offered`` tells whether its reactions were offered.
    ``tumble`` asks for an Acrobatics check against each triggering event;
    ``options`` carries kind-specific flags such as ``"position:<asset>"``.
    """

    creature: str
    kind: str
    steps: tuple[str, ...]
    step: int = 0
    offered: bool = False
    tumble: bool = False
    options: tuple[str, ...] = ()

    def option(self, prefix: str) -> str | None:
        """The value of an option written ``prefix:value``, or ``None``."""
        for opt in self.options:
            if opt.startswith(prefix + ":"):
                return opt[len(prefix) + 1 :]
        return None


@event_type("maneuver_started")
@attrs.frozen
class ManeuverStarted(Event):
    """A move that may provoke reactions began (``maneuver``)."""

    maneuver: Maneuver


@event_type("maneuver_updated")
@attrs.frozen
class ManeuverUpdated(Event):
    """A move waiting on reactions went on to its next step (``maneuver``)."""

    maneuver: Maneuver


@event_type("maneuver_ended")
@attrs.frozen
class ManeuverEnded(Event):
    """``creature``'s move that waited on reactions ended, ``completed`` or cut short
    (``reason``)."""

    creature: str
    completed: bool
    reason: str = ""


@event_type("zone_entered")
@attrs.frozen
class ZoneEntered(Event):
    """``creature`` went from ``from_zone`` into ``to_zone`` for ``cost`` feet of movement.

    ``forced`` marks forced movement (no movement spent); ``by`` names who moved it
    when it was not its own move (the forcer, or the GM for an override). Leaving a
    zone ends the creature's engagements, adjacency and positions there.
    """

    creature: str
    from_zone: str
    to_zone: str
    cost: int = 0
    forced: bool = False
    by: str = ""


@event_type("engagement_started")
@attrs.frozen
class EngagementStarted(Event):
    """``creature`` and ``enemy`` became engaged in melee."""

    creature: str
    enemy: str
    reason: str = ""


@event_type("engagement_ended")
@attrs.frozen
class EngagementEnded(Event):
    """``creature`` and ``enemy`` are no longer engaged (``reason`` says why)."""

    creature: str
    enemy: str
    reason: str = ""


@event_type("position_taken")
@attrs.frozen
class PositionTaken(Event):
    """``creature`` took position at ``asset`` (a prop) or in it (an element or terrain)."""

    creature: str
    asset: str
    forced: bool = False
    by: str = ""


@event_type("position_left")
@attrs.frozen
class PositionLeft(Event):
    """``creature`` left its position at ``asset`` (``reason`` says why)."""

    creature: str
    asset: str
    reason: str = ""


@event_type("adjacency_taken")
@attrs.frozen
class AdjacencyTaken(Event):
    """``creature`` moved next to its ally ``ally`` (``back_to_back`` when they stand back-to-
    back)."""

    creature: str
    ally: str
    back_to_back: bool = False


@event_type("adjacency_ended")
@attrs.frozen
class AdjacencyEnded(Event):
    """``creature`` and ``ally`` are no longer adjacent (``reason`` says why)."""

    creature: str
    ally: str
    reason: str = ""


@event_type("tumble_attempted")
@attrs.frozen
class TumbleAttempted(Event):
    """One Acrobatics check against the highest passive Perception (``dc``) of those
    who would react to ``trigger``; on a success none of them is offered a reaction."""

    creature: str
    roll: RollRecord
    dc: int
    success: bool
    trigger: str


@event_type("save_made")
@attrs.frozen
class SaveMade(Event):
    """``creature`` made a ``ability`` saving throw: ``roll`` against ``dc`` (from ``source``),
    a ``success`` or a failure. ``automatic_failure`` names why it failed whatever the
    roll (``"paralyzed"``: see ``zonekeep_save_fails``), empty when the roll decided."""

    creature: str
    ability: str
    roll: RollRecord
    dc: int
    success: bool
    source: str = ""
    automatic_failure: str = ""


@event_type("effect_created")
@attrs.frozen
class EffectCreated(Event):
    """An ongoing area effect became an element (``asset``) in its zone."""

    asset: Asset
    owner: str = ""


@event_type("effect_ended")
@attrs.frozen
class EffectEnded(Event):
    """The ongoing area effect ``asset`` ended (``reason`` says why)."""

    asset: str
    reason: str = ""


@event_type("asset_placed")
@attrs.frozen
class AssetPlaced(Event):
    """``asset`` came into the arena while the encounter runs (a plugin's web, the GM's
    barricade), placed by ``by``; ``hidden``: no player or spectator sees it until it
    is revealed (``asset_changed``)."""

    asset: Asset
    hidden: bool = False
    by: str = ""


@event_type("asset_changed")
@attrs.frozen
class AssetChanged(Event):
    """Asset ``asset`` (of the arena, placed at runtime, or an ongoing effect) changed:
    ``data``, when not null, is its whole new data; ``hidden``, when not null, hides it
    from players (true) or reveals it (false)."""

    asset: str
    data: dict[str, Any] | None = None
    hidden: bool | None = None


@event_type("asset_removed")
@attrs.frozen
class AssetRemoved(Event):
    """Asset ``asset`` left the arena (``reason`` says why); the creatures that held a
    position at or in it left that position first (``position_left``). ``hidden``: it
    was hidden from players until then, so they never see this event either."""

    asset: str
    reason: str = ""
    hidden: bool = False


@event_type("zone_affected")
@attrs.frozen
class ZoneAffected(Event):
    """An effect was aimed at ``zone`` (occupied or not): ``damage`` of ``damage_type``
    (``roll`` the one roll every creature in it takes its damage from, null for none),
    from ``source``. The ``damaged`` events of the creatures in it follow. With no damage,
    ``roll`` is the roll the effect is measured by (the hit points Sleep puts to sleep),
    and its other events follow (the conditions it gives)."""

    zone: str
    damage_type: str = ""
    damage: int = 0
    roll: RollRecord | None = None
    source: str = ""


@event_type("space_shared")
@attrs.frozen
class SpaceShared(Event):
    """``creature`` was put in ``other``'s space (by forced movement or the GM)."""

    creature: str
    other: str
    by: str = ""


@event_type("contest_rolled")
@attrs.frozen
class ContestRolled(Event):
    """An ability contest: ``creature``'s ``roll`` against ``target``'s; ``won`` if strictly higher."""

    creature: str
    target: str
    skill: str
    roll: RollRecord
    target_skill: str
    target_roll: RollRecord
    won: bool


@event_type("check_rolled")
@attrs.frozen
class CheckRolled(Event):
    """``creature`` made an ability check (``skill`` names the skill, if any) or, with
    ``save``, a saving throw, with ``ability``: ``roll`` against ``dc`` (``None``: no DC,
    the GM reads the total), a ``success`` or a failure (``None`` without a DC).
    ``source`` says what called for it (``"call_check"``: the GM; a rule's name).
    ``automatic_failure`` names why a save failed whatever the roll (``"paralyzed"``)."""

    creature: str
    ability: str
    roll: RollRecord
    skill: str | None = None
    dc: int | None = None
    success: bool | None = None
    save: bool = False
    source: str = ""
    automatic_failure: str = ""


@event_type("resource_spent")
@attrs.frozen
class ResourceSpent(Event):
    """``creature`` used one of its feature ``resource``'s uses (a breath weapon, a
    charge); ``left`` remain."""

    creature: str
    resource: str
    left: int


@event_type("resource_restored")
@attrs.frozen
class ResourceRestored(Event):
    """``creature``'s feature ``resource`` has ``left`` uses again, because of
    ``reason`` (``turn``, ``round``, ``short_rest``, ``long_rest``, ``gm``)."""

    creature: str
    resource: str
    left: int
    reason: str


@event_type("recharge_rolled")
@attrs.frozen
class RechargeRolled(Event):
    """At the start of its turn, ``creature`` rolled a d6 (``roll``) for its spent
    ``resource`` with a recharge: ``recharged`` (its use is back) when the roll is at least
    ``needed``."""

    creature: str
    resource: str
    roll: RollRecord
    needed: int
    recharged: bool


@event_type("multiattack_used")
@attrs.frozen
class MultiattackUsed(Event):
    """``creature`` is making its multiattack ``action`` (its action, spent once): the
    attacks it has still to make are ``attacks_left``; ``current`` is the one it makes now
    (``None`` when it only started)."""

    creature: str
    action: str
    attacks_left: tuple[SequenceItem, ...]
    current: SequenceItem | None = None


@attrs.frozen
class Note:
    """A GM note on the encounter; a ``hidden`` one never reaches players or spectators."""

    id: str
    text: str
    hidden: bool = False


@event_type("note_added")
@attrs.frozen
class NoteAdded(Event):
    """The GM wrote ``note`` on the encounter."""

    note: Note


@event_type("note_removed")
@attrs.frozen
class NoteRemoved(Event):
    """The GM removed note ``note``."""

    note: str


@event_type("rewound")
@attrs.frozen
class Rewound(Event):
    """The GM (``by``) rewound the encounter to how it was right after event ``to_seq``.

    Nothing is erased: the events after ``to_seq`` stay in the log (the audit trail)
    and this event follows them; the state after it equals the state at ``to_seq``.
    """

    to_seq: int
    by: str = "gm"
    #: The counters of the dice this rewind undid (those of the events it takes back
    #: that were still in play), when the dice are verifiable: a public record of how
    #: often a GM rewound past a roll.
    undone_rolls: tuple[int, ...] = ()


@event_type("dice_committed")
@attrs.frozen
class DiceCommitted(Event):
    """The server committed to the seed of the dice that follow (SPEC.md, "Dice").

    ``mode`` is ``fair`` (the seed is secret until a ``dice_revealed`` event) or
    ``seeded`` (the seed was chosen at creation and is public: ``seed``).
    ``commitment`` is the SHA-256 of the seed's UTF-8 bytes, lower-case hex.
    """

    mode: Literal["fair", "seeded"]
    commitment: str
    seed: str | None = None


@event_type("dice_contributed")
@attrs.frozen
class DiceContributed(Event):
    """A seat (``by``: ``gm`` or a player id) mixed ``value`` into the dice: every die
    after this event depends on it."""

    by: str
    value: str


@event_type("dice_revealed")
@attrs.frozen
class DiceRevealed(Event):
    """The secret seed of the last ``dice_committed`` event, revealed because the
    encounter ended (``reason`` ``ended``) or the GM rotated it (``rotated``)."""

    seed: str
    commitment: str
    reason: Literal["ended", "rotated"] = "ended"


@event_type("dice_drawn")
@attrs.frozen
class DiceDrawn(Event):
    """Dice a rule drew without recording them in a roll: ``(counter, sides, value)``
    each, so that every counter is accounted for."""

    draws: tuple[tuple[int, int, int], ...]


@event_type("dice_rolled")
@attrs.frozen
class DiceRolled(Event):
    """A seat (``by``: ``gm`` or a player id) rolled dice at the table: a free roll that
    changes nothing in the fight, with the same verifiable dice as every rule's roll.
    ``label`` says what it was for (empty when not said). A ``private`` roll is seen by
    the seat that rolled it and the GM only."""

    by: str
    roll: RollRecord
    label: str = ""
    private: bool = False


@event_type("chat_sent")
@attrs.frozen
class ChatSent(Event):
    """A seat (``by``: ``gm`` or a player id) wrote ``text`` to the table (``to`` is
    ``None``) or whispered it to one seat (``to``: ``gm``, or the GM to a player id): a
    whisper is seen by its two seats only."""

    by: str
    text: str
    to: str | None = None


@event_type("plugin_error")
@attrs.frozen
class PluginErrorRecorded(Event):
    """A plugin's hook raised or answered with the wrong shape, so its contribution was
    skipped (the command went on without it); only the GM sees this event.

    ``plugin`` is the plugin's registered name, ``hook`` the hook it failed in and
    ``error`` what went wrong, in a few words (``"ZeroDivisionError('division by zero')"``).
    """

    plugin: str
    hook: str
    error: str


@event_type("plugin_overran")
@attrs.frozen
class PluginOverran(Event):
    """One call of a plugin's hook or command handler took longer than the server's time
    budget for a call (it blocked every encounter meanwhile); only the GM sees this event.

    ``plugin`` is the plugin's registered name, ``hook`` the hook (``zonekeep_commands``
    for a command handler), ``ms`` how long the call took and ``budget_ms`` the budget,
    both in whole milliseconds. The state counts these per plugin
    (``EncounterState.plugin_overruns``).
    """

    plugin: str
    hook: str
    ms: int
    budget_ms: int


@event_type("plugin_disabled")
@attrs.frozen
class PluginDisabled(Event):
    """A plugin is switched off for the rest of this encounter: its hooks are skipped and its commands refused.

    ``plugin`` is the plugin's registered name and ``reason`` why, in a sentence (it
    kept overrunning the server's time budget). Replaying the log keeps it off.
    """

    plugin: str
    reason: str


@attrs.frozen
class PluginEvent(Event):
    """An event of a type a plugin declared (``zonekeep_event_types``), not one of the
    built-in classes above.

    ``type`` is the event type's full id, ``<plugin>.<name>`` (``"hazards.brazier_kicked"``),
    and ``data`` its payload: a JSON object that the declared schema checks when the
    event is emitted. The plugin's reducer folds it into the plugin's own state
    (:attr:`EncounterState.plugin_state`). On the wire it is
    ``{"type": "<plugin>.<name>", "data": {...}}``. Make one with :func:`plugin_event`.
    """

    type: str  # type: ignore[misc]  # a plugin event's type is per instance
    data: dict[str, Any] = attrs.field(factory=dict)


def plugin_event(type: str, data: dict[str, Any] | None = None, **fields: Any) -> PluginEvent:
    """A plugin event of ``type`` with ``data`` and ``fields`` as its payload:
    ``ctx.emit(plugin_event("hazards.brazier_kicked", brazier="b1"))``.

    ``type`` may be the short name (``"brazier_kicked"``) while no other plugin
    declares an event type of that name: :meth:`RuleContext.emit` turns it into the
    full id, checks the payload against the schema and folds it."""
    return PluginEvent(type, {**(data or {}), **fields})
