"""The SRD 5.1 spells the spells plugin knows, as data: levels 0-3, and the spells the
SRD creatures' Spellcasting names (issue 30).

Each :class:`Spell` says how the rules resolve it (``how``) or, with ``gm``, why the
GM adjudicates it. Numbers are the SRD 5.1's; the descriptions are our own words.
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

How = Literal[
    "attack",
    "save",
    "darts",
    "heal",
    "area",
    "condition",
    "teleport",
    "ward",
    "snare",
    "weapon",
    "aura",
    "hazard",
    "cloud",
    "storm",
    "control",
    "gm",
    # plugins/spells/_more.py:
    "saves",
    "heals",
    "stabilize",
    "mark",
    "cure",
    "toughen",
    "ray",
    "revive",
    "blade",
    # plugins/spells/_boons.py:
    "temp",
]
Casting = Literal["action", "bonus", "reaction"]


@attrs.frozen
class Spell:
    """One spell: its level (0: a cantrip), casting time, range in feet (0: self,
    5: touch) and what it does, as the rules resolve it.

    - ``how``: ``attack`` (a spell attack per ray/beam, ``melee`` or ranged), ``save``
      (one target saves against the caster's DC), ``darts`` (automatic hits, each
      rolled), ``heal``, ``area`` (an area aimed at a zone, by the arena's area rules),
      ``condition`` (targets save or get ``condition``, saving again at the end of each
      of their turns unless ``repeat_save`` is false), ``teleport``, ``ward``
      (``targets`` willing creatures in range, or the caster alone at range 0, get ``condition``,
      no save: the plugin gives the condition its meaning), ``snare`` (an area that
      stays, as an asset: difficult terrain, a save or ``condition``), ``weapon`` (the
      spiritual weapon), ``aura`` (around the caster, moving with it), ``hazard`` (a
      moonbeam, a flaming sphere: an asset the caster moves), ``control`` (resolved one
      by one in ``_control``: bane, sleep, dispel magic, counterspell, haste, slow) or
      ``gm`` (plugins/spells/_zones.py has snare, weapon, aura and hazard). An ``area`` with a ``condition``
      gives it to each target that fails its save.
      plugins/spells/_more.py resolves ``saves`` (``save`` on up to ``targets``
      creatures of one zone, one damage roll), ``heals`` (``heal`` on up to
      ``targets`` creatures), ``stabilize`` (a dying creature becomes stable),
      ``mark`` (``condition`` on one creature, no save, its source the caster) and
      ``cure`` (ends the first of the conditions in ``choices`` the target has) and
      ``toughen`` (up to ``targets`` creatures' hit point maximum and hit points rise
      by ``damage``, a number, and as much again per slot level above the spell's) and
      ``ray`` (a spell attack with no damage: a hit gives ``condition``, saved against
      at the end of each of the target's turns) and ``revive`` (a defeated creature at 0
      hit points is no longer defeated and has 1 hit point) and ``blade`` (the caster
      holds a spell weapon, ``condition``, and attacks with it as an action: a melee
      spell attack for ``damage``, one more die per two slot levels above the spell's).
    - ``damage`` and ``upcast``: the dice, and the dice added per slot level above the
      spell's (a cantrip's dice grow at character levels 5, 11 and 17 instead).
    - ``rays``: the number of attacks, beams or darts (more per slot: ``more_rays``).
    - ``shape``/``size``: the area (a sphere's radius, a cone's or line's length).
    - ``school``: its school of magic, from :data:`SCHOOLS` (the SRD's).
    """

    id: str
    name: str
    level: int
    how: How
    text: str
    casting: Casting = "action"
    range: int = 0
    melee: bool = False
    damage: str | None = None
    damage_type: str = ""
    upcast: str | None = None
    save: str | None = None
    half_on_save: bool = False
    rays: int = 1
    more_rays: int = 0
    shape: str | None = None
    size: int = 0
    concentration: bool = False
    rounds: int | None = None
    condition: str | None = None
    targets: int = 1
    #: One-target spells: the targets added per slot level above its own (heroism: 1).
    more_targets: int = 0
    push: bool = False
    gm: str | None = None
    #: Its school of magic (``evocation``: Sculpt Spells); see :data:`SCHOOLS`.
    school: str = ""
    choices: tuple[str, ...] = ()
    repeat_save: bool = True

    @property
    def cantrip(self) -> bool:
        return self.level == 0


_CATALOG: Final[tuple[Spell, ...]] = (
    # -- cantrips ----------------------------------------------------------------------
    Spell(
        "fire-bolt",
        "Fire Bolt",
        0,
        "attack",
        "A mote of fire hurled at one creature: a ranged spell attack, 1d10 fire.",
        range=120,
        damage="1d10",
        damage_type="fire",
    ),
    Spell(
        "sacred-flame",
        "Sacred Flame",
        0,
        "save",
        "Radiance falls on one creature in sight: Dexterity save or 1d8 radiant.",
        range=60,
        damage="1d8",
        damage_type="radiant",
        save="dex",
    ),
    Spell(
        "eldritch-blast",
        "Eldritch Blast",
        0,
        "attack",
        "Beams of force, one attack each: 1d10 force per beam; one beam, two from "
        "character level 5, three from 11, four from 17.",
        range=120,
        damage="1d10",
        damage_type="force",
    ),
    Spell(
        "ray-of-frost",
        "Ray of Frost",
        0,
        "attack",
        "A freezing ray: a ranged spell attack, 1d8 cold (its 10-ft speed loss is the "
        "GM's: zones have no speed change yet).",
        range=60,
        damage="1d8",
        damage_type="cold",
    ),
    Spell(
        "shocking-grasp",
        "Shocking Grasp",
        0,
        "attack",
        "A touch of lightning: a melee spell attack, 1d8 lightning (advantage against "
        "metal armour and the lost reaction are the GM's).",
        range=5,
        melee=True,
        damage="1d8",
        damage_type="lightning",
    ),
    Spell(
        "produce-flame",
        "Produce Flame",
        0,
        "attack",
        "A flame in the hand, thrown at a creature within 30 ft: a ranged spell attack, "
        "1d8 fire (the light it sheds is the GM's).",
        range=30,
        damage="1d8",
        damage_type="fire",
    ),
    Spell(
        "vicious-mockery",
        "Vicious Mockery",
        0,
        "save",
        "A cutting insult at a creature within 60 ft that can hear it: Wisdom save or "
        "1d4 psychic (the disadvantage on its next attack roll is the GM's).",
        range=60,
        damage="1d4",
        damage_type="psychic",
        save="wis",
    ),
    Spell(
        "acid-splash",
        "Acid Splash",
        0,
        "saves",
        "A bubble of acid at one creature within 60 ft, or two in one zone: each makes a "
        "Dexterity save or takes 1d6 acid (one roll for both).",
        range=60,
        damage="1d6",
        damage_type="acid",
        save="dex",
        targets=2,
    ),
    Spell(
        "chill-touch",
        "Chill Touch",
        0,
        "attack",
        "A ghostly hand at a creature within 120 ft: a ranged spell attack, 1d8 necrotic; "
        "a creature hit is chilled: it regains no hit points until the start of the "
        "caster's next turn (an undead's disadvantage against the caster is the GM's: "
        "creatures carry no type).",
        range=120,
        damage="1d8",
        damage_type="necrotic",
        condition="chilled",
    ),
    Spell(
        "poison-spray",
        "Poison Spray",
        0,
        "save",
        "A puff of noxious gas at a creature within 10 ft: Constitution save or 1d12 poison.",
        range=10,
        damage="1d12",
        damage_type="poison",
        save="con",
    ),
    Spell(
        "spare-the-dying",
        "Spare the Dying",
        0,
        "stabilize",
        "A touch makes a dying creature (0 hit points) stable.",
        range=5,
    ),
    Spell(
        "true-strike",
        "True Strike",
        0,
        "mark",
        "The caster reads a creature's defences within 30 ft: its first attack roll "
        "against it on its next turn has advantage (concentration, until the end of that "
        "turn).",
        range=30,
        concentration=True,
        condition="true-struck",
    ),
    # -- level 1 -----------------------------------------------------------------------
    Spell(
        "magic-missile",
        "Magic Missile",
        1,
        "darts",
        "Three glowing darts that always hit, 1d4+1 force each, at one creature or "
        "several; one more dart per slot level above 1st.",
        range=120,
        damage="1d4+1",
        damage_type="force",
        rays=3,
        more_rays=1,
    ),
    Spell(
        "burning-hands",
        "Burning Hands",
        1,
        "area",
        "A 15-ft cone of flame: Dexterity save, 3d6 fire, half on a success; +1d6 per "
        "slot level above 1st.",
        damage="3d6",
        damage_type="fire",
        upcast="1d6",
        save="dex",
        half_on_save=True,
        shape="cone",
        size=15,
    ),
    Spell(
        "thunderwave",
        "Thunderwave",
        1,
        "area",
        "A 15-ft cube of thunder from the caster: Constitution save, 2d8 thunder, half on "
        "a success; a creature that fails is pushed 10 ft away (into a linked zone or "
        "an asset, as forced movement); +1d8 per slot level above 1st.",
        damage="2d8",
        damage_type="thunder",
        upcast="1d8",
        save="con",
        half_on_save=True,
        shape="cube",
        size=15,
        push=True,
    ),
    Spell(
        "cure-wounds",
        "Cure Wounds",
        1,
        "heal",
        "A touch restores 1d8 + the caster's spellcasting modifier hit points; +1d8 per "
        "slot level above 1st.",
        range=5,
        damage="1d8",
        upcast="1d8",
    ),
    Spell(
        "healing-word",
        "Healing Word",
        1,
        "heal",
        "A word restores 1d4 + the caster's spellcasting modifier hit points to a "
        "creature within 60 ft; +1d4 per slot level above 1st.",
        casting="bonus",
        range=60,
        damage="1d4",
        upcast="1d4",
    ),
    Spell(
        "guiding-bolt",
        "Guiding Bolt",
        1,
        "attack",
        "A bolt of light: a ranged spell attack, 4d6 radiant; +1d6 per slot level above "
        "1st (the advantage it grants the next attack is the GM's).",
        range=120,
        damage="4d6",
        damage_type="radiant",
        upcast="1d6",
    ),
    Spell(
        "bless",
        "Bless",
        1,
        "ward",
        "Up to three creatures within 30 ft add a d4 to their attack rolls and saving "
        "throws (concentration, up to 1 minute), as the table's expertise die (with "
        "another expertise source the die grows to a d6, then a d8); one more creature "
        "per slot level above 1st.",
        range=30,
        concentration=True,
        rounds=10,
        condition="bless",
        targets=3,
    ),
    Spell(
        "inflict-wounds",
        "Inflict Wounds",
        1,
        "attack",
        "A necrotic touch: a melee spell attack, 3d10 necrotic; +1d10 per slot level above 1st.",
        range=5,
        melee=True,
        damage="3d10",
        damage_type="necrotic",
        upcast="1d10",
    ),
    Spell(
        "shield",
        "Shield",
        1,
        "ward",
        "A reaction when an attack hits the caster: an unseen barrier gives +5 AC until the "
        "start of its next turn, against the triggering attack too (offered as a prompt, "
        "never cast as an action).",
        casting="reaction",
        condition="shielded",
    ),
    Spell(
        "shield-of-faith",
        "Shield of Faith",
        1,
        "ward",
        "A shimmering field around a creature within 60 ft: +2 to its AC "
        "(concentration, up to 10 minutes).",
        casting="bonus",
        range=60,
        concentration=True,
        rounds=100,
        condition="shield-of-faith",
    ),
    Spell(
        "faerie-fire",
        "Faerie Fire",
        1,
        "area",
        "A 20-ft cube of coloured light 60 ft away: each creature in it makes a Dexterity "
        "save or is outlined (concentration, up to 1 minute): attack rolls against an "
        "outlined creature have advantage, and it cannot be hidden or invisible to them "
        "(its dim light is the GM's).",
        range=60,
        save="dex",
        shape="cube",
        size=20,
        concentration=True,
        rounds=10,
        condition="outlined",
    ),
    Spell(
        "entangle",
        "Entangle",
        1,
        "snare",
        "Grasping plants fill a 20-ft square within 90 ft (concentration, up to 1 minute): "
        "difficult terrain; each creature there when it is cast makes a Strength save or "
        "is restrained until the spell ends, or until it breaks free (its action: a "
        "Strength check against the spell DC).",
        range=90,
        save="str",
        shape="cube",
        size=20,
        concentration=True,
        rounds=10,
        condition="restrained",
    ),
    Spell(
        "bane",
        "Bane",
        1,
        "control",
        "Up to three creatures within 30 ft make a Charisma save; each that fails "
        "subtracts a d4 from its attack rolls and saving throws (a penalty die; "
        "concentration, up to 1 minute); one more creature per slot level above 1st.",
        range=30,
        save="cha",
        concentration=True,
        rounds=10,
        condition="bane",
        targets=3,
    ),
    Spell(
        "sleep",
        "Sleep",
        1,
        "control",
        "A 20-ft-radius area 90 ft away: roll 5d8, the hit points it can put to sleep; "
        "the creatures there, lowest current hit points first, fall unconscious for 1 "
        "minute while the pool covers their hit points (each one's hit points are taken "
        "from the pool); +2d8 per slot level above 1st. Creatures immune to being charmed, "
        "with Fey Ancestry, and those already unconscious are skipped (sparing undead is the GM's: the rules "
        "know no creature types). A sleeper wakes when it takes damage, or when the GM "
        "ends the effect (a creature shaking it awake with its action).",
        range=90,
        damage="5d8",
        upcast="2d8",
        shape="sphere",
        size=20,
        rounds=10,
        condition="unconscious",
    ),
    Spell(
        "animal-friendship",
        "Animal Friendship",
        1,
        "condition",
        "A beast within 30 ft makes a Wisdom save or is charmed for 24 hours: it cannot "
        "attack the caster; harm from the caster or its side ends it; one more target per "
        "slot level above 1st (only a beast of Intelligence 3 or less: the GM's, creatures "
        "carry no type).",
        range=30,
        save="wis",
        rounds=14400,
        condition="charmed",
        repeat_save=False,
    ),
    Spell(
        "charm-person",
        "Charm Person",
        1,
        "condition",
        "A creature within 30 ft makes a Wisdom save (with advantage when its side is not "
        "the caster's) or is charmed for 1 hour: it cannot attack the caster; harm from "
        "the caster or its side ends it; one more target per slot level above 1st "
        "(only humanoids: the GM's, creatures carry no type).",
        range=30,
        save="wis",
        rounds=600,
        condition="charmed",
        repeat_save=False,
    ),
    Spell(
        "divine-favor",
        "Divine Favor",
        1,
        "ward",
        "The caster's weapon attacks deal 1d4 radiant more on a hit (concentration, up to "
        "1 minute).",
        casting="bonus",
        concentration=True,
        rounds=10,
        condition="divine-favor",
    ),
    Spell(
        "false-life",
        "False Life",
        1,
        "temp",
        "The caster gains 1d4 + 4 temporary hit points for 1 hour, 5 more for each slot "
        "level above 1st.",
        damage="1d4+4",
    ),
    Spell(
        "heroism",
        "Heroism",
        1,
        "ward",
        "A willing creature touched is immune to being frightened and gains temporary hit "
        "points equal to the caster's spellcasting modifier at the start of each of its "
        "turns; it loses those left when the spell ends (concentration, up to 1 minute). "
        "One more creature for each slot level above 1st.",
        range=5,
        concentration=True,
        rounds=10,
        condition="heroic",
        more_targets=1,
    ),
    Spell(
        "magic-weapon",
        "Magic Weapon",
        2,
        "ward",
        "A creature touched: its weapon attacks get +1 to attack and damage rolls and are "
        "magical (concentration, up to 1 hour); +2 with a 4th- or 5th-level slot, +3 with "
        "a 6th-level or higher.",
        casting="bonus",
        range=5,
        concentration=True,
        rounds=600,
        condition="magic-weapon",
    ),
    Spell(
        "hunters-mark",
        "Hunter's Mark",
        1,
        "mark",
        "The caster marks a creature within 90 ft: its weapon attacks deal 1d6 more on a "
        "hit against it (concentration, up to 1 hour; moving the mark is the GM's).",
        casting="bonus",
        range=90,
        concentration=True,
        rounds=600,
        condition="hunters-mark",
    ),
    Spell(
        "mage-armor",
        "Mage Armor",
        1,
        "ward",
        "A willing creature touched (wearing no armour: the GM's) has an AC of at least "
        "13 + its Dexterity modifier for 8 hours.",
        range=5,
        rounds=4800,
        condition="mage-armor",
    ),
    Spell(
        "jump",
        "Jump",
        1,
        "ward",
        "A creature touched jumps three times as far for 1 minute (its long jump: the "
        "Strength score after a run-up, half without, as the movement rules reckon it).",
        range=5,
        rounds=10,
        condition="jumping",
    ),
    Spell(
        "hellish-rebuke",
        "Hellish Rebuke",
        1,
        "save",
        "A reaction when an attack by a creature within 60 ft hits the caster (offered as "
        "a prompt at the hit, before its damage: the rules have no prompt after damage): "
        "the attacker makes a Dexterity save, 2d10 fire, half on a success; +1d10 per slot "
        "level above 1st (never cast as an action).",
        casting="reaction",
        range=60,
        damage="2d10",
        damage_type="fire",
        upcast="1d10",
        save="dex",
        half_on_save=True,
    ),
    Spell(
        "expeditious-retreat",
        "Expeditious Retreat",
        1,
        "ward",
        "The caster Dashes as it casts it, then may Dash as a bonus action on each of its "
        "turns (the retreat_dash command; concentration, up to 10 minutes).",
        casting="bonus",
        concentration=True,
        rounds=100,
        condition="retreating",
    ),
    Spell(
        "hideous-laughter",
        "Hideous Laughter",
        1,
        "condition",
        "A creature within 30 ft makes a Wisdom save or falls prone, incapacitated with "
        "laughter (concentration, up to 1 minute; it saves again at the end of each of its "
        "turns; the advantaged save on damage and the Intelligence 4 or less exemption are "
        "the GM's).",
        range=30,
        save="wis",
        concentration=True,
        rounds=10,
        condition="incapacitated",
    ),
    Spell(
        "grease",
        "Grease",
        1,
        "area",
        "Slick grease covers a 10-ft square within 60 ft: each creature in it makes a "
        "Dexterity save or falls prone (the slick ground for the next minute is the GM's).",
        range=60,
        save="dex",
        shape="cube",
        size=10,
        condition="prone",
    ),
    # -- level 2 -----------------------------------------------------------------------
    Spell(
        "scorching-ray",
        "Scorching Ray",
        2,
        "attack",
        "Three rays of fire, one ranged spell attack each, 2d6 fire per ray; one more "
        "ray per slot level above 2nd.",
        range=120,
        damage="2d6",
        damage_type="fire",
        rays=3,
        more_rays=1,
    ),
    Spell(
        "shatter",
        "Shatter",
        2,
        "area",
        "A ringing burst, 10-ft radius, 60 ft away: Constitution save, 3d8 thunder, half "
        "on a success; +1d8 per slot level above 2nd.",
        range=60,
        damage="3d8",
        damage_type="thunder",
        upcast="1d8",
        save="con",
        half_on_save=True,
        shape="sphere",
        size=10,
    ),
    Spell(
        "hold-person",
        "Hold Person",
        2,
        "condition",
        "A humanoid within 60 ft makes a Wisdom save or is paralyzed (concentration, up "
        "to 1 minute; it saves again at the end of each of its turns); one more target "
        "per slot level above 2nd.",
        range=60,
        save="wis",
        concentration=True,
        rounds=10,
        condition="paralyzed",
    ),
    Spell(
        "blur",
        "Blur",
        2,
        "ward",
        "The caster's shape shifts and wavers: attack rolls against it have disadvantage "
        "(concentration, up to 1 minute; an attacker with blindsight or truesight, or "
        "that does not rely on sight, is the GM's).",
        concentration=True,
        rounds=10,
        condition="blurred",
    ),
    Spell(
        "barkskin",
        "Barkskin",
        2,
        "ward",
        "A willing creature touched has bark-hard skin: its AC is at least 16 "
        "(concentration, up to 1 hour).",
        range=5,
        concentration=True,
        rounds=600,
        condition="barkskin",
    ),
    Spell(
        "misty-step",
        "Misty Step",
        2,
        "teleport",
        "The caster teleports to a zone it can see within 30 ft.",
        casting="bonus",
        range=30,
    ),
    Spell(
        "web",
        "Web",
        2,
        "snare",
        "Sticky webs fill a 20-ft cube within 60 ft (concentration, up to 1 hour): "
        "difficult terrain; a creature in them when it is cast, entering them on its turn "
        "or starting its turn there makes a Dexterity save or is restrained while it stays "
        "in them, or until it breaks free (its action: a Strength check against the spell "
        "DC); fire burns them away (its lightly obscured area is the GM's).",
        range=60,
        save="dex",
        shape="cube",
        size=20,
        concentration=True,
        rounds=600,
        condition="restrained",
    ),
    Spell(
        "spiritual-weapon",
        "Spiritual Weapon",
        2,
        "weapon",
        "A floating spectral weapon appears in a zone within 60 ft for 1 minute: a melee "
        "spell attack against a creature there, 1d8 + the spellcasting modifier force; "
        "later, a bonus action moves it 20 ft and strikes again (spiritual_weapon); +1d8 "
        "per two slot levels above 2nd.",
        casting="bonus",
        range=60,
        melee=True,
        damage="1d8",
        damage_type="force",
        rounds=10,
    ),
    Spell(
        "moonbeam",
        "Moonbeam",
        2,
        "hazard",
        "A beam of pale light in a zone within 120 ft (concentration, up to 1 minute): a "
        "creature entering its zone on its turn or starting its turn there makes a "
        "Constitution save, 2d10 radiant, half on a success, once a turn; later, an action "
        "moves it 60 ft (move_moonbeam); +1d10 per slot level above 2nd (a shapechanger's "
        "disadvantage and forced true form are the GM's).",
        range=120,
        damage="2d10",
        damage_type="radiant",
        upcast="1d10",
        save="con",
        half_on_save=True,
        shape="cylinder",
        size=5,
        concentration=True,
        rounds=10,
    ),
    Spell(
        "flaming-sphere",
        "Flaming Sphere",
        2,
        "hazard",
        "A 5-ft ball of fire in a zone within 60 ft (concentration, up to 1 minute): a "
        "creature ending its turn in its zone makes a Dexterity save, 2d6 fire, half on a "
        "success; a bonus action rolls it 30 ft and rams a creature there, which makes the "
        "save too (move_sphere); +1d6 per slot level above 2nd (its light and the objects "
        "it ignites are the GM's).",
        range=60,
        damage="2d6",
        damage_type="fire",
        upcast="1d6",
        save="dex",
        half_on_save=True,
        shape="sphere",
        size=5,
        concentration=True,
        rounds=10,
    ),
    Spell(
        "aid",
        "Aid",
        2,
        "toughen",
        "Up to three creatures within 30 ft gain 5 to their hit point maximum and hit "
        "points for 8 hours (the encounter: its end, and a second casting, are the GM's); "
        "5 more per slot level above 2nd.",
        range=30,
        damage="5",
        rounds=4800,
        condition="aided",
        targets=3,
    ),
    Spell(
        "flame-blade",
        "Flame Blade",
        2,
        "blade",
        "A fiery blade in the caster's hand (concentration, up to 10 minutes): as an action "
        "(the flame_blade command), a melee spell attack for 3d6 fire; one more d6 for "
        "every two slot levels above 2nd.",
        casting="bonus",
        range=5,
        melee=True,
        damage="3d6",
        damage_type="fire",
        concentration=True,
        rounds=100,
        condition="flame-blade",
    ),
    Spell(
        "acid-arrow",
        "Acid Arrow",
        2,
        "attack",
        "A green arrow at a creature within 90 ft: a ranged spell attack, 4d4 acid on a "
        "hit and 2d4 acid at the end of its next turn; on a miss, half the 4d4 and nothing "
        "later; +1d4 to both per slot level above 2nd.",
        range=90,
        damage="4d4",
        damage_type="acid",
        upcast="1d4",
        condition="acid-burned",
    ),
    Spell(
        "blindness-deafness",
        "Blindness/Deafness",
        2,
        "condition",
        "A creature within 30 ft makes a Constitution save or is blinded for 1 minute (it "
        "saves again at the end of each of its turns; deafness is the GM's: hearing is not "
        "modelled); one more target per slot level above 2nd.",
        range=30,
        save="con",
        rounds=10,
        condition="blinded",
    ),
    Spell(
        "invisibility",
        "Invisibility",
        2,
        "ward",
        "A creature touched is invisible until it attacks or casts a spell "
        "(concentration, up to 1 hour).",
        range=5,
        concentration=True,
        rounds=600,
        condition="invisible",
    ),
    Spell(
        "lesser-restoration",
        "Lesser Restoration",
        2,
        "cure",
        "A touch ends one condition: paralyzed, else blinded, else poisoned (another "
        "choice, deafness and disease are the GM's).",
        range=5,
        choices=("paralyzed", "blinded", "poisoned"),
    ),
    Spell(
        "protection-from-poison",
        "Protection from Poison",
        2,
        "ward",
        "A creature touched is no longer poisoned and for 1 hour has advantage on saves "
        "against being poisoned and resistance to poison damage.",
        range=5,
        rounds=600,
        condition="poison-warded",
    ),
    Spell(
        "ray-of-enfeeblement",
        "Ray of Enfeeblement",
        2,
        "ray",
        "A black beam at a creature within 60 ft: a ranged spell attack; on a hit it deals "
        "half damage with Strength weapon attacks (its melee attacks but finesse ones) "
        "(concentration, up to 1 minute; a Constitution save at the end of each of its "
        "turns ends it).",
        range=60,
        save="con",
        concentration=True,
        rounds=10,
        condition="enfeebled",
    ),
    Spell(
        "warding-bond",
        "Warding Bond",
        2,
        "ward",
        "A willing creature touched gets +1 AC and resistance to all damage for 1 hour, "
        "and the caster takes the same damage it takes (its +1 to saves is the GM's: the "
        "rules have no flat save bonus; so is the 60-ft tether).",
        range=5,
        rounds=600,
        condition="warded-bond",
    ),
    # -- level 3 -----------------------------------------------------------------------
    Spell(
        "fireball",
        "Fireball",
        3,
        "area",
        "A 20-ft-radius burst 150 ft away: Dexterity save, 8d6 fire, half on a success "
        "(one damage roll for all); +1d6 per slot level above 3rd.",
        range=150,
        damage="8d6",
        damage_type="fire",
        upcast="1d6",
        save="dex",
        half_on_save=True,
        shape="sphere",
        size=20,
    ),
    Spell(
        "dispel-magic",
        "Dispel Magic",
        3,
        "control",
        "Ends the spells on one creature within 120 ft: each spell of the slot's level or "
        "lower ends; a higher one ends on an ability check with the caster's spellcasting "
        "ability against DC 10 + its level. A concentration spell ends at its source (the "
        "caster's concentration, and every effect hanging on it). Upcast with a higher "
        "slot, it ends spells up to that level automatically.",
        range=120,
    ),
    Spell(
        "counterspell",
        "Counterspell",
        3,
        "control",
        "A reaction when a foe within 60 ft is seen casting a spell: a slot of the spell's "
        "level or higher stops it (its slot is spent and nothing else happens); a lower "
        "one (level 3 at least) needs an ability check with the spellcasting ability "
        "against DC 10 + the spell's level. Offered as a prompt while the cast waits, "
        "never cast as an action; cantrips and innate spells can be countered too.",
        casting="reaction",
        range=60,
    ),
    Spell(
        "haste",
        "Haste",
        3,
        "control",
        "A willing creature within 30 ft is hasted (concentration, up to 1 minute): +2 AC, "
        "advantage on Dexterity saves, its speed doubled (at the start of each of its "
        "turns it gains its speed again, as a Dash gives), and each turn one more action "
        "(hasted_action): one weapon attack, Dash, Disengage, Hide or Use an Object. When "
        "the spell ends it loses its next turn (lethargic: it cannot move or act).",
        range=30,
        concentration=True,
        rounds=10,
        condition="hasted",
    ),
    Spell(
        "slow",
        "Slow",
        3,
        "control",
        "Up to six creatures of the caster's choice in a 40-ft cube within 120 ft make a "
        "Wisdom save; each that fails is slowed (concentration, up to 1 minute; it saves "
        "again at the end of each of its turns): -2 AC and to Dexterity saves, half its "
        "speed, no reactions, an action or a bonus action on its turn but not both, and "
        "one attack only. Its chance of losing a somatic spell, and the delayed spell, "
        "are the GM's.",
        range=120,
        save="wis",
        shape="cube",
        size=40,
        concentration=True,
        rounds=10,
        condition="slowed",
        targets=6,
    ),
    Spell(
        "lightning-bolt",
        "Lightning Bolt",
        3,
        "area",
        "A 100-ft line of lightning from the caster: Dexterity save, 8d6 lightning, half "
        "on a success; +1d6 per slot level above 3rd.",
        damage="8d6",
        damage_type="lightning",
        upcast="1d6",
        save="dex",
        half_on_save=True,
        shape="line",
        size=100,
    ),
    Spell(
        "spirit-guardians",
        "Spirit Guardians",
        3,
        "aura",
        "Spirits fill the caster's zone and move with it (concentration, up to 10 "
        "minutes): its foes there are slowed (difficult terrain), and one that enters on "
        "its turn or starts its turn there makes a Wisdom save, 3d8 radiant, half on a "
        "success, once a turn; +1d8 per slot level above 3rd (an evil caster's necrotic "
        "is the GM's).",
        damage="3d8",
        damage_type="radiant",
        upcast="1d8",
        save="wis",
        half_on_save=True,
        shape="sphere",
        size=15,
        concentration=True,
        rounds=100,
    ),
    Spell(
        "beacon-of-hope",
        "Beacon of Hope",
        3,
        "ward",
        "Any number of creatures within 30 ft have advantage on Wisdom saves and the "
        "healing spells they receive heal the most their dice can (concentration, up to 1 "
        "minute; death saves are the GM's).",
        range=30,
        concentration=True,
        rounds=10,
        condition="hopeful",
        targets=20,
    ),
    Spell(
        "fear",
        "Fear",
        3,
        "area",
        "A 30-ft cone of dread from the caster: each creature in it makes a Wisdom save "
        "or is frightened of the caster (concentration, up to 1 minute; dropping what it "
        "holds, fleeing and its save out of sight are the GM's).",
        save="wis",
        shape="cone",
        size=30,
        concentration=True,
        rounds=10,
        condition="frightened",
    ),
    Spell(
        "hypnotic-pattern",
        "Hypnotic Pattern",
        3,
        "area",
        "A twisting pattern in a 30-ft cube within 120 ft: each creature in it makes a "
        "Wisdom save or is charmed and incapacitated (concentration, up to 1 minute); "
        "damage ends both for that creature (shaking it awake is the GM's).",
        range=120,
        save="wis",
        shape="cube",
        size=30,
        concentration=True,
        rounds=10,
        condition="incapacitated",
    ),
    Spell(
        "mass-healing-word",
        "Mass Healing Word",
        3,
        "heals",
        "Up to six creatures within 60 ft each regain 1d4 + the caster's spellcasting "
        "modifier hit points (one roll for all); +1d4 per slot level above 3rd.",
        casting="bonus",
        range=60,
        damage="1d4",
        upcast="1d4",
        targets=6,
    ),
    Spell(
        "revivify",
        "Revivify",
        3,
        "revive",
        "A touch brings back a creature defeated at 0 hit points with 1 hit point (that it "
        "died within the last minute, and the 300 gp diamond, are the GM's word).",
        range=5,
    ),
    Spell(
        "vampiric-touch",
        "Vampiric Touch",
        3,
        "attack",
        "A shadowy touch: a melee spell attack, 3d6 necrotic, and the caster regains half "
        "the damage dealt; +1d6 per slot level above 3rd (the touches again as an action "
        "while it concentrates are the GM's).",
        range=5,
        melee=True,
        damage="3d6",
        damage_type="necrotic",
        upcast="1d6",
        concentration=True,
        rounds=10,
    ),
    Spell(
        "stinking-cloud",
        "Stinking Cloud",
        3,
        "cloud",
        "A 20-ft-radius sphere of yellow gas within 90 ft (concentration, up to 1 minute): a "
        "creature starting its turn in it makes a Constitution save against poison or "
        "spends its action that turn retching; one immune to poison succeeds (the gas "
        "heavily obscures the area: the GM's).",
        range=90,
        shape="sphere",
        size=20,
        save="con",
        concentration=True,
        rounds=10,
    ),
    Spell(
        "call-lightning",
        "Call Lightning",
        3,
        "storm",
        "A storm cloud forms over the caster (concentration, up to 10 minutes) and a bolt "
        "strikes a zone within 60 ft of it: each creature there, as an area's targets (a "
        "5-ft-radius cylinder), makes a Dexterity save, 3d10 lightning, half on a success; "
        "each later turn the caster's action calls another (call_lightning); +1d10 per slot "
        "level above 3rd (the stronger bolts of a storm already raging are the GM's).",
        range=60,
        damage="3d10",
        damage_type="lightning",
        upcast="1d10",
        save="dex",
        half_on_save=True,
        shape="cylinder",
        size=5,
        concentration=True,
        rounds=100,
    ),
    # -- wards the roll modifiers and creature types allow (plugins/spells/_wards.py) ------
    Spell(
        "enhance-ability",
        "Enhance Ability",
        2,
        "ward",
        "A creature touched gets one enhancement, the caster's option (concentration, up to "
        "1 hour): advantage on ability checks of one ability, Constitution (bears-endurance, "
        "with 2d6 temporary hit points), Strength (bulls-strength), Dexterity (cats-grace), "
        "Charisma (eagles-splendor), Intelligence (foxs-cunning) or Wisdom (owls-wisdom); one "
        "more creature per slot level above 2nd (the carrying and falling benefits are the "
        "GM's).",
        range=5,
        concentration=True,
        rounds=600,
        condition="*",
        more_targets=1,
        choices=(
            "bears-endurance",
            "bulls-strength",
            "cats-grace",
            "eagles-splendor",
            "foxs-cunning",
            "owls-wisdom",
        ),
    ),
    Spell(
        "protection-from-energy",
        "Protection from Energy",
        3,
        "ward",
        "A willing creature touched has resistance to one damage type, the caster's option: "
        "acid, cold, fire, lightning or thunder (concentration, up to 1 hour).",
        range=5,
        concentration=True,
        rounds=600,
        condition="resist-*",
        choices=("acid", "cold", "fire", "lightning", "thunder"),
    ),
    Spell(
        "guidance",
        "Guidance",
        0,
        "ward",
        "A willing creature touched adds a d4 to its first ability check, and the spell ends "
        "at the end of that turn (concentration, up to 1 minute; the rules take the first "
        "check where the creature could choose one).",
        range=5,
        concentration=True,
        rounds=10,
        condition="guided",
    ),
    Spell(
        "resistance",
        "Resistance",
        0,
        "ward",
        "A willing creature touched adds a d4 to its first saving throw, and the spell ends "
        "at the end of that turn (concentration, up to 1 minute; the rules take the first "
        "save where the creature could choose one).",
        range=5,
        concentration=True,
        rounds=10,
        condition="resistant",
    ),
    Spell(
        "protection-from-evil-and-good",
        "Protection from Evil and Good",
        1,
        "ward",
        "A willing creature touched is warded against aberrations, celestials, elementals, "
        "fey, fiends and undead: they have disadvantage on attack rolls against it "
        "(concentration, up to 10 minutes; that they cannot charm, frighten or possess it "
        "is the GM's).",
        range=5,
        concentration=True,
        rounds=100,
        condition="protected",
    ),
)

#: The school of each spell the plugin resolves (SRD 5.1): a table beside the catalog,
#: read into each :class:`Spell`'s ``school`` (Sculpt Spells needs the evocations).
SCHOOLS: Final[dict[str, str]] = {
    **dict.fromkeys(
        (
            "fire-bolt",
            "sacred-flame",
            "eldritch-blast",
            "ray-of-frost",
            "shocking-grasp",
            "magic-missile",
            "burning-hands",
            "thunderwave",
            "cure-wounds",
            "healing-word",
            "guiding-bolt",
            "faerie-fire",
            "scorching-ray",
            "shatter",
            "fireball",
            "lightning-bolt",
        ),
        "evocation",
    ),
    "produce-flame": "conjuration",
    "misty-step": "conjuration",
    "vicious-mockery": "enchantment",
    "bless": "enchantment",
    "hold-person": "enchantment",
    "inflict-wounds": "necromancy",
    "shield": "abjuration",
    "shield-of-faith": "abjuration",
    "blur": "illusion",
    "barkskin": "transmutation",
    "false-life": "necromancy",
    "heroism": "enchantment",
    "magic-weapon": "transmutation",
    "stinking-cloud": "conjuration",
    "call-lightning": "conjuration",
    "guidance": "divination",
    "resistance": "abjuration",
    "protection-from-evil-and-good": "abjuration",
    "enhance-ability": "transmutation",
    "protection-from-energy": "abjuration",
}

#: The spells the plugin resolves or marks, by id.
SPELLS: Final[dict[str, Spell]] = {
    s.id: attrs.evolve(s, school=SCHOOLS.get(s.id, s.school)) for s in _CATALOG
}

#: The other named spells of issue 31, each "GM adjudicates" with the reason, until
#: the rules resolve them.
GM_SPELLS: Final[dict[str, tuple[str, int, str]]] = {
    # The SRD creatures' other spells (issue 30): no combat effect the rules model, or
    # one they cannot express yet.
    "light": ("Light", 0, "no combat effect: light is not modelled"),
    "thaumaturgy": ("Thaumaturgy", 0, "no combat effect: minor wonders the GM narrates"),
    "dancing-lights": ("Dancing Lights", 0, "no combat effect: light is not modelled"),
    "druidcraft": ("Druidcraft", 0, "no combat effect: minor nature tricks the GM narrates"),
    "minor-illusion": ("Minor Illusion", 0, "illusions and the checks to see through them"),
    "shillelagh": (
        "Shillelagh",
        0,
        "changing a club's or quarterstaff's attack for a minute is not modelled",
    ),
    "sanctuary": (
        "Sanctuary",
        1,
        "an attacker's Wisdom save to choose another target needs an attack prompt",
    ),
    "command": ("Command", 1, "the one-word command's effect is the GM's to rule"),
    "fog-cloud": ("Fog Cloud", 1, "heavily obscured areas are not modelled yet"),
    "goodberry": ("Goodberry", 1, "berries eaten later with an action are not modelled"),
    "longstrider": ("Longstrider", 1, "a speed change for an hour is not modelled"),
    "speak-with-animals": ("Speak with Animals", 1, "no combat effect"),
    "detect-evil-and-good": ("Detect Evil and Good", 1, "no combat effect: a sense"),
    "darkness": ("Darkness", 2, "magical darkness: heavily obscured areas are not modelled"),
    "animal-messenger": ("Animal Messenger", 2, "no combat effect"),
    "pass-without-trace": ("Pass without Trace", 2, "the rules have no hiding yet"),
    "heat-metal": ("Heat Metal", 2, "a heated metal object held or worn is not modelled"),
    "calm-emotions": ("Calm Emotions", 2, "suppressing charm, fear and hostility"),
    "dispel-evil-and-good": (
        "Dispel Evil and Good",
        5,
        "a ward against creature types, and its break enchantment and dismissal",
    ),
    # More SRD 5.1 spells of levels 0-3 with a combat effect the rules cannot resolve yet.
    "mage-hand": ("Mage Hand", 0, "a spectral hand moving objects: objects are not modelled"),
    "feather-fall": ("Feather Fall", 1, "falling is the GM's"),
    "enlarge-reduce": ("Enlarge/Reduce", 2, "a size change with its damage die is not modelled"),
    "mirror-image": ("Mirror Image", 2, "duplicates that attacks may hit instead"),
    "silence": ("Silence", 2, "sound and verbal components are not modelled"),
    "see-invisibility": ("See Invisibility", 2, "no combat roll: the GM rules what it sees"),
    "prayer-of-healing": ("Prayer of Healing", 2, "cast over 10 minutes: between fights"),
    "bestow-curse": ("Bestow Curse", 3, "the curse the caster chooses is the GM's"),
    "blink": ("Blink", 3, "vanishing to the Ethereal Plane on a d20 each turn"),
    "fly": ("Fly", 3, "flying is not modelled by the zones"),
    "gaseous-form": ("Gaseous Form", 3, "a gaseous body's movement and resistances"),
    "sleet-storm": ("Sleet Storm", 3, "a lasting area of ice, obscurement and falls"),
    "wind-wall": ("Wind Wall", 3, "a wall against missiles and gases"),
    "silent-image": ("Silent Image", 1, "illusions and the checks to see through them"),
    "alter-self": ("Alter Self", 2, "natural weapons and new shapes are not modelled"),
    "levitate": ("Levitate", 2, "rising and hanging in the air is not modelled"),
    "suggestion": ("Suggestion", 2, "the course of action suggested is the GM's to rule"),
    "spike-growth": ("Spike Growth", 2, "damage per 5 ft moved: movement in a zone is not counted"),
    "animate-dead": ("Animate Dead", 3, "raised servants: the GM adds them to the roster"),
    "conjure-animals": ("Conjure Animals", 3, "summoned beasts: the GM adds them to the roster"),
    "glyph-of-warding": ("Glyph of Warding", 3, "a triggered glyph: an asset the GM places"),
    "magic-circle": (
        "Magic Circle",
        3,
        "a 10-ft cylinder that warded creature types cannot cross: an edge inside a zone "
        "is not modelled",
    ),
    "major-image": ("Major Image", 3, "illusions and the checks to see through them"),
    "plant-growth": (
        "Plant Growth",
        3,
        "overgrowth costing 4 ft per foot: zones have no such cost",
    ),
    "gust-of-wind": (
        "Gust of Wind",
        2,
        "a lasting line of wind that pushes who starts a turn in it",
    ),
}

#: The spells of the SRD creatures' Spellcasting with no effect in a fight: the GM
#: narrates them (they do not make a creature's spellcasting "GM adjudicates").
NO_COMBAT_EFFECT: Final[frozenset[str]] = frozenset(
    {
        "light",
        "thaumaturgy",
        "dancing-lights",
        "druidcraft",
        "speak-with-animals",
        "detect-evil-and-good",
        "animal-messenger",
    }
)
