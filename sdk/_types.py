"""The rules data types: sizes, creatures, attacks, encounter options."""

from __future__ import annotations

import enum
from typing import Any, Literal

import attrs

from ._features import Action, ExtraDamage, OnHit, Trait, initial_resources, resource_key

# The shared name sets, re-exported here for the modules that import them from _types.
from ._vocabulary import ABILITIES as ABILITIES
from ._vocabulary import DAMAGE_TYPES as DAMAGE_TYPES
from ._vocabulary import MOVE_MODES as MOVE_MODES
from ._vocabulary import MoveMode as MoveMode

#: The controller id of the game master. Players are any other string.
GM = "gm"

AttackKind = Literal["melee", "ranged"]

#: Conditions the core rules know by name. Plugins may add more.
PRONE = "prone"
DYING = "dying"
STABLE = "stable"
DEFEATED = "defeated"
SURRENDERED = "surrendered"
ESCAPED = "escaped"
INCAPACITATED = "incapacitated"
SQUEEZING = "squeezing"
DODGING = "dodging"
#: Conditions that take a creature out of the fight for the purpose of ending it.
OUT_OF_FIGHT: frozenset[str] = frozenset({DEFEATED, SURRENDERED, ESCAPED})
#: Conditions that stop a creature from moving, acting, reacting and speaking. A
#: creature at 0 hit points, dying or stable, is unconscious (docs/rules.md, "Conditions").
STUNNED = "stunned"
PARALYZED = "paralyzed"
UNCONSCIOUS = "unconscious"
INCAPACITATING: frozenset[str] = frozenset(
    {INCAPACITATED, DYING, STABLE, DEFEATED, UNCONSCIOUS, STUNNED, PARALYZED}
)


class Size(enum.IntEnum):
    """Size categories, ordered so that comparisons and differences are meaningful."""

    TINY = 0
    SMALL = 1
    MEDIUM = 2
    LARGE = 3
    HUGE = 4
    GARGANTUAN = 5
    COLOSSAL = 6

    @classmethod
    def parse(cls, value: str | int | Size) -> Size:
        """Accept ``"Medium"``, ``"medium"``, ``2`` or a ``Size``."""
        if isinstance(value, Size):
            return value
        if isinstance(value, bool):
            raise ValueError(f"expected a size name such as 'Medium', not {value!r}")
        if isinstance(value, int):
            return cls(value)
        if not isinstance(value, str):
            raise ValueError(f"expected a size name such as 'Medium', not {value!r}")
        try:
            return cls[value.strip().upper()]
        except KeyError:
            names = ", ".join(s.name.capitalize() for s in cls)
            raise ValueError(f"unknown size {value!r}; expected one of {names}") from None

    @property
    def label(self) -> str:
        return self.name.capitalize()

    @property
    def space(self) -> float:
        """The side of the square the creature controls, in feet (docs/rules.md, 9)."""
        return (2.5, 5.0, 5.0, 10.0, 15.0, 20.0, 20.0)[self]

    @property
    def occupancy(self) -> int:
        """How much of a zone's capacity the creature uses (docs/rules.md, "Rulings")."""
        return (0, 1, 1, 2, 3, 4, 5)[self]

    @property
    def room(self) -> int:
        """Number of 5-ft squares around the creature's space (docs/rules.md, "Rulings")."""
        return (8, 8, 8, 12, 16, 20, 20)[self]

    @property
    def footprint(self) -> int:
        """Squares of that room a creature of this size takes when it surrounds another."""
        return (1, 1, 1, 2, 3, 4, 5)[self]


def max_surrounding(target: Size, surrounder: Size) -> int:
    """How many creatures of size ``surrounder`` fit around one of size ``target``.

    Eight Medium around a Medium, four Large around a Medium, twenty Medium around
    a Gargantuan (docs/rules.md, 9).
    """
    return target.room // surrounder.footprint


def can_surround(target: Size, surrounders: list[Size]) -> bool:
    """Whether all of ``surrounders`` fit around ``target`` at once."""
    return sum(s.footprint for s in surrounders) <= target.room


def can_pass_through(mover: Size, other: Size) -> bool:
    """An enemy's space can be crossed only when it is at least two sizes apart."""
    return abs(int(mover) - int(other)) >= 2


@attrs.define
class Attack:
    """One attack a creature can make: ``bonus`` to hit, ``damage`` dice, reach or range."""

    name: str
    kind: AttackKind = "melee"
    bonus: int = 0
    damage: str = "1d4"
    damage_type: str = ""
    reach: int = 5
    range: int = 0
    long_range: int = 0
    #: A magical attack: nonmagical resistances and immunities do not apply to it.
    magical: bool = attrs.field(
        default=False,
        metadata={
            "doc": "A magical attack: the target's nonmagical resistances and immunities "
            "do not apply."
        },
    )
    #: The weapon properties of the weapon it is made with (``finesse``, ``light``,
    #: ``thrown``...), for the rules that read them (a rogue's Sneak Attack).
    properties: tuple[str, ...] = attrs.field(
        default=(),
        metadata={
            "doc": "The properties of the weapon it is made with (finesse, light, "
            "thrown, ...), for the rules that read them."
        },
    )
    #: More damage a hit deals, each with its own type (a bite's 1d6 acid).
    extra_damage: tuple[ExtraDamage, ...] = attrs.field(
        default=(), metadata={"doc": "More damage a hit deals, each with its damage type."}
    )
    #: What a hit does besides damage (knocked prone on a failed save, grappled).
    on_hit: tuple[OnHit, ...] = attrs.field(
        default=(), metadata={"doc": "Riders a hit triggers (ids plugins implement)."}
    )


#: The words players and spectators see for an enemy's hit points (docs/rules.md,
#: "Rulings", unless ``show_enemy_hp``): full, above half, half or less, 0.
HP_WORDS = ("unhurt", "hurt", "bloodied", "down")

#: What the protocol's schemas say of ``hp`` and ``max_hp``: numbers, except where a
#: player or spectator sees an enemy's condition as a word (and ``max_hp`` as null).
HP_METADATA = {
    "schema": {"anyOf": [{"type": "integer"}, {"enum": list(HP_WORDS)}]},
    "doc": "Hit points; for a player or spectator, an enemy's condition as a word "
    "(unhurt, hurt, bloodied, down) unless the option show_enemy_hp is set.",
}
TEMP_HP_METADATA = {
    "schema": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "doc": "Temporary hit points (0: none), which damage takes first; null for a player or "
    "spectator where hp is a word.",
}
MAX_HP_METADATA = {
    "schema": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "doc": "Maximum hit points; null for a player or spectator where hp is a word.",
}


#: A number of a creature's sheet that a player or spectator does not get for a creature
#: its seat does not control (SPEC.md, "Stat blocks"): null there.
def _sheet_number(doc: str) -> dict[str, object]:
    return {
        "schema": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "doc": f"{doc}; null for a player or spectator, of a creature its seat does not control.",
    }


def _damage_types_doc(text: str) -> dict[str, object]:
    return {
        "doc": text,
        "schema": {"type": "array", "uniqueItems": True, "items": {"enum": list(DAMAGE_TYPES)}},
    }


@attrs.define
class Creature:
    """A participant of an encounter: its sheet and its live state.

    ``zone`` is the zone it is in; ``position`` the prop it has taken position at
    (one at a time); ``elements`` the elements and terrain (ongoing effects
    included) it has taken position in, on top of that.
    ``controller`` is :data:`GM` or a player id. ``pc`` marks player characters;
    it defaults to "not controlled by the GM". ``group`` names a group of identical
    GM creatures that rolls initiative once. ``conditions`` is kept sorted and
    free of duplicates by the event fold. ``damage_resistances``,
    ``damage_vulnerabilities`` and ``damage_immunities`` name damage types
    (:data:`DAMAGE_TYPES`), applied by :func:`zonekeep.sdk.apply_damage`;
    ``condition_immunities`` names conditions :func:`zonekeep.sdk.apply_condition`
    never gives it.
    """

    id: str
    name: str
    side: str
    controller: str = GM
    pc: bool | None = None
    size: Size = Size.MEDIUM
    speeds: dict[str, int] = attrs.field(factory=lambda: {"walk": 30})
    dex_mod: int = attrs.field(default=0, metadata=_sheet_number("Dexterity modifier"))
    initiative_bonus: int = attrs.field(
        default=0, metadata=_sheet_number("Initiative bonus beyond Dexterity")
    )
    hp: int = attrs.field(default=10, metadata=HP_METADATA)
    max_hp: int = attrs.field(default=10, metadata=MAX_HP_METADATA)
    #: Temporary hit points: damage takes them first; healing does not restore them.
    temp_hp: int = attrs.field(default=0, metadata=TEMP_HP_METADATA)
    ac: int = attrs.field(default=10, metadata=_sheet_number("Armor class"))
    passive_perception: int = attrs.field(default=10, metadata=_sheet_number("Passive Perception"))
    attacks: list[Attack] = attrs.field(factory=list)
    saves: dict[str, int] = attrs.field(factory=dict)
    skills: dict[str, int] = attrs.field(factory=dict)
    maneuver_dc: int = attrs.field(default=10, metadata=_sheet_number("Maneuver DC"))
    spell_dc: int = attrs.field(default=10, metadata=_sheet_number("Spell save DC"))
    group: str | None = None
    hidden: bool = False
    conditions: list[str] = attrs.field(factory=list)
    zone: str | None = None
    sharing_with: str | None = None
    position: str | None = None
    elements: list[str] = attrs.field(factory=list)
    #: Damage types it takes half damage from (rounded down), once however many sources.
    damage_resistances: list[str] = attrs.field(
        factory=list, metadata=_damage_types_doc("Damage types it resists: half damage.")
    )
    #: Damage types it takes double damage from, once however many sources.
    damage_vulnerabilities: list[str] = attrs.field(
        factory=list,
        metadata=_damage_types_doc("Damage types it is vulnerable to: double damage."),
    )
    #: Damage types it takes no damage from.
    damage_immunities: list[str] = attrs.field(
        factory=list, metadata=_damage_types_doc("Damage types it is immune to: no damage.")
    )
    #: Conditions it never gets (a rule giving one does nothing; the GM is refused).
    condition_immunities: list[str] = attrs.field(
        factory=list,
        metadata={"doc": "Conditions it is immune to: it is never given them."},
    )
    #: Damage types it resists from nonmagical attacks only (``Attack.magical`` false).
    damage_resistances_nonmagical: list[str] = attrs.field(
        factory=list,
        metadata=_damage_types_doc(
            "Damage types it resists from nonmagical attacks: half damage from an attack "
            "whose `magical` is false."
        ),
    )
    #: Damage types it takes no damage from when a nonmagical attack deals them.
    damage_immunities_nonmagical: list[str] = attrs.field(
        factory=list,
        metadata=_damage_types_doc(
            "Damage types it is immune to from nonmagical attacks: no damage from an "
            "attack whose `magical` is false."
        ),
    )
    #: The six ability modifiers (``{"str": 1, "dex": 2, ...}``); an ability left out is
    #: unknown (a check with it uses +0 unless ``saves``/``skills`` say more).
    abilities: dict[str, int] = attrs.field(
        factory=dict,
        metadata={"doc": "Ability modifiers by ability (str, dex, con, int, wis, cha)."},
    )
    #: The proficiency bonus (checks and saves it is proficient in add it).
    proficiency: int = attrs.field(default=2, metadata=_sheet_number("Its proficiency bonus"))
    #: Passive or triggered features (Pack Tactics): ids plugins implement.
    traits: tuple[Trait, ...] = attrs.field(
        default=(), metadata={"doc": "Its traits: passive or triggered features."}
    )
    #: Things it chooses to do besides attacking (Multiattack, a breath weapon).
    actions: tuple[Action, ...] = attrs.field(
        default=(),
        metadata={"doc": "Its actions, bonus actions and reactions beyond its attacks."},
    )
    #: Uses left of its traits' and actions' ``uses``, by feature key (filled in at
    #: creation: every feature with uses starts full).
    resources: dict[str, int] = attrs.field(
        factory=dict,
        metadata={
            "doc": "Uses left of its features that have `uses`, by feature id (a `gm` "
            "feature by `gm-<its name>`); a recharge counts 1 (ready) or 0 (spent)."
        },
    )
    #: The stat block's hit dice (``2d6``, ``7d10+21``), when it came from one.
    hit_dice: str | None = attrs.field(
        default=None,
        metadata={"doc": "Its stat block's hit dice (`2d6`, `7d10+21`); null when not known."},
    )
    #: Its special senses in feet (``{"darkvision": 60}``).
    senses: dict[str, int] = attrs.field(
        factory=dict,
        metadata={"doc": 'Its special senses in feet (`{"darkvision": 60}`).'},
    )
    #: Its creature type (``undead``, ``fiend``: the compendium's ``type``), when known.
    type: str | None = attrs.field(
        default=None,
        metadata={
            "doc": "Its creature type (aberration ... undead: the stat block's `type`); null "
            "when not known (a character's sheet gives none)."
        },
    )
    #: Its challenge rating (0.125 for 1/8), when it came from a stat block.
    challenge: float | None = attrs.field(
        default=None,
        metadata={"doc": "Its stat block's challenge rating (0.125 for 1/8); null when not known."},
    )

    def __attrs_post_init__(self) -> None:
        if self.pc is None:
            self.pc = self.controller != GM
        if self.traits or self.actions:
            missing = {
                key: full
                for key, full in initial_resources((*self.traits, *self.actions)).items()
                if key not in self.resources
            }
            if missing:  # (a new dict: the one given may be another creature's)
                self.resources = {**self.resources, **missing}

    def feature(self, key: str) -> Trait | Action | None:
        """The trait or action whose id (or resource key) is ``key``."""
        features: tuple[Trait | Action, ...] = (*self.actions, *self.traits)
        for f in features:
            if f.id == key or resource_key(f) == key:
                return f
        return None

    @property
    def speed(self) -> int:
        """The walking speed: the base of the turn's movement budget."""
        return self.speeds.get("walk", 0)

    def speed_for(self, mode: str) -> int:
        """The speed that bounds a move in ``mode``.

        Climbing or swimming without that speed uses the walking speed (at double
        cost); crawling and jumping use the walking speed; flying needs a fly speed.
        """
        if mode in ("climb", "swim", "fly"):
            own = self.speeds.get(mode, 0)
            if own or mode == "fly":
                return own
        return self.speed

    def skill(self, name: str, fallback: int = 0) -> int:
        """The bonus for a skill check, or ``fallback`` when the sheet does not list it."""
        return self.skills.get(name, fallback)

    def has(self, condition: str) -> bool:
        return condition in self.conditions

    @property
    def incapacitated(self) -> bool:
        return not INCAPACITATING.isdisjoint(self.conditions)

    @property
    def out_of_fight(self) -> bool:
        return not OUT_OF_FIGHT.isdisjoint(self.conditions)

    def attack(self, name: str | None) -> Attack | None:
        if name is None:
            return self.attacks[0] if self.attacks else None
        return next((a for a in self.attacks if a.name == name), None)


#: The range each numeric option must lie in, both ends included (docs/rules.md,
#: "Rulings"; ``round_seconds`` is the length of a round in game time). The schema
#: carries them as ``minimum``/``maximum``; :func:`option_problems` checks them.
OPTION_RANGES: dict[str, tuple[int, int]] = {
    "round_seconds": (1, 60),
    "reaction_seconds": (5, 600),
    "turn_seconds": (10, 3600),
}


def _bounded(name: str, meaning: str) -> dict[str, object]:
    low, high = OPTION_RANGES[name]
    return {"constraints": {"minimum": low, "maximum": high}, "doc": meaning}


def _meaning(text: str, *, added_later: bool = False) -> dict[str, object]:
    """An option's meaning, the ``description`` of its schema (a form shows it);
    ``added_later``: encounters stored before the option existed lack it, so the
    schemas do not require it."""
    return {"doc": text, "added_later": True} if added_later else {"doc": text}


@attrs.frozen
class EncounterOptions:
    """Per-encounter table choices (docs/rules.md, "Rulings", names them in brackets).

    ``turn_seconds`` is an optional turn timer: when set, the server ends a turn
    that has run that long (``None``: no timer). The numeric options have the ranges
    of :data:`OPTION_RANGES`; the class itself does not check them (an encounter
    stored before the ranges existed must still load), :func:`option_problems` does.
    """

    round_seconds: int = attrs.field(
        default=6,
        metadata=_bounded(
            "round_seconds", "The length of a round in seconds, for durations given in time."
        ),
    )
    surprise: bool = attrs.field(default=True, metadata=_meaning("Surprise is in use."))
    reaction_seconds: float = attrs.field(
        default=30.0,
        metadata=_bounded(
            "reaction_seconds", "How long a reaction prompt waits for its answer, in seconds."
        ),
    )
    turn_seconds: float | None = attrs.field(
        default=None,
        metadata=_bounded(
            "turn_seconds",
            "A turn timer: the server ends a turn that has run this many seconds (none: no timer).",
        ),
    )
    flanking: bool = attrs.field(
        default=True, metadata=_meaning("Flanking gives advantage (switch off to streamline).")
    )
    adjacency: bool = attrs.field(
        default=True,
        metadata=_meaning("Allies can stand adjacent to each other (switch off to streamline)."),
    )
    size_limits: bool = attrs.field(
        default=True,
        metadata=_meaning("Zones hold only as many creatures as their size allows."),
    )
    back_to_back: bool = attrs.field(
        default=True,
        metadata=_meaning("Adjacent allies can stand back-to-back against flanking."),
    )
    auto_end: bool = attrs.field(
        default=True, metadata=_meaning("The rules end the encounter when no threat remains.")
    )
    #: Players and spectators see enemies' hit points as numbers (docs/rules.md: default off,
    #: they see a word: unhurt, hurt, bloodied, down).
    show_enemy_hp: bool = attrs.field(
        default=False,
        metadata=_meaning(
            "Players and spectators see enemies' hit points as numbers; off, they see a "
            "word (unhurt, hurt, bloodied, down)."
        ),
    )
    #: The plugins' settings for this encounter, by plugin name then setting id
    #: (``{"hazards": {"burn_die": "1d8"}}``; docs/plugins.md, "Settings"). Given at
    #: creation, they are checked against the plugins' schemas; the encounter keeps the
    #: effective value of every declared setting (the GM's over the server's over the
    #: plugin's default).
    settings: dict[str, dict[str, Any]] = attrs.field(
        factory=dict,
        hash=False,
        metadata=_meaning(
            "The plugins' settings, by plugin name then setting id; each value is checked "
            "against the setting's schema (`hello`'s `capabilities.settings`). A setting "
            "left out gets the server's value, else the plugin's default; the encounter "
            "keeps the effective value of each. Since protocol 1.4 (absent from encounters "
            "stored before).",
            added_later=True,
        ),
    )


def option_problems(options: EncounterOptions) -> list[str]:
    """What is wrong with ``options``: one sentence per numeric option outside its
    range (NaN and the infinities included), naming the option and the range."""
    problems = []
    for name, (low, high) in OPTION_RANGES.items():
        value = getattr(options, name)
        if value is None and name == "turn_seconds":
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            shown = value if not isinstance(value, int) or abs(value) < 10**12 else "too large"
            absent = " or absent" if name == "turn_seconds" else ""
            problems.append(
                f"'options.{name}' must be a number from {low:,} to {high:,}{absent}, not {shown}"
            )
    return problems


def clamp_options(options: EncounterOptions) -> tuple[EncounterOptions, list[str]]:
    """``options`` with every numeric option brought into its range (NaN: the default),
    and a sentence per change: for encounters stored before the ranges were enforced."""
    defaults = EncounterOptions()
    changes: dict[str, Any] = {}
    notes = []
    for name, (low, high) in OPTION_RANGES.items():
        value = getattr(options, name)
        if value is None and name == "turn_seconds":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            fixed: Any = getattr(defaults, name)
        elif value < low:
            fixed = low
        elif value > high:
            fixed = high
        else:
            continue
        changes[name] = fixed
        notes.append(f"{name} {value!r} is outside {low}-{high}; using {fixed!r}")
    return (attrs.evolve(options, **changes) if changes else options), notes
