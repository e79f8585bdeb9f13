"""Spellcasting and the SRD 5.1 spells of levels 0-3: a first-party content plugin.

On by default; an operator turns it off with ``plugins_disabled = ["zonekeep.spells"]``.
It implements the ``spellcasting`` trait a character sheet gives its roster creature
(``zonekeep.sdk``'s character model: ability, DC, attack bonus, slots, cantrips and
prepared or known spells), and the ``spellcasting`` action of a monster's stat block
(the same params, plus ``level``, the caster level its cantrips scale with, and
``innate``: ``at_will`` spells and ``per_day`` counts, each spent from the creature's
``innate-<spell>`` resource; a monster's slots start full, from ``slots``, in its
``spell-slots-N`` resources), with the public SDK only, as a third-party plugin would:

- ``cast`` (an action), ``cast_bonus`` (a bonus action): cast a spell the creature
  knows, spending a slot of the spell's level or higher (``slot``: upcasting adds the
  spell's dice per level above its own), from the ``spell-slots-N`` resources (or the
  warlock's ``pact-slots`` when their level is the slot asked for). A cantrip's dice
  grow at character levels 5, 11 and 17.
- Spell attacks roll d20 + the sheet's spell attack bonus against AC, through the
  same hooks as weapon attacks (range and sight, cover, advantage); saves are against
  the sheet's spell save DC.
- The bonus-action spell rule: after a bonus-action spell, only a cantrip with a
  casting time of one action may follow in that turn; after a leveled spell cast
  with the action, no bonus-action spell may. The turn's spells are counted in the
  creature's ``spells-this-turn`` resource (1: a bonus-action spell, 2: a leveled
  action spell, 3: both kinds were ruled out), reset at the start of its turn.
- Wards: bless, shield of faith, barkskin and blur give their targets a condition
  (``bless``: an expertise die, a d4, on attack rolls and saves; ``shield-of-faith``:
  +2 AC; ``barkskin``: AC at least 16; ``blurred``: attack rolls against it have
  disadvantage), and faerie fire ``outlined`` (attack rolls
  against it have advantage), through ``zonekeep_armor_class_bonus`` and
  ``zonekeep_roll_modifiers``.
- Concentration: a concentration spell puts the ``concentrating`` condition on the
  caster (a timed condition effect, its duration) and the spell's effects are its
  children, so they end with it. A new concentration spell ends the old; damage calls
  for a Constitution save, DC 10 or half the damage (the higher); a failure, or being
  incapacitated, ends it.
- Areas: aimed at one zone by the arena's area rules (the target zone in range and in
  sight, spilling into linked zones when larger than it, the table's maximum of
  targets, which the caster must fill while creatures remain); every target saves,
  then one damage roll serves them all. Cones and lines start at the caster: their
  length is their range (docs/rules.md, "Rulings").
- Spells that stay on the field (entangle, web, spiritual weapon, spirit guardians,
  moonbeam, flaming sphere): runtime assets, in ``_zones.py``.

- Counterspell: before a spell takes effect (its slot spent, its targets checked on a
  copy of the state), each foe within 60 ft that knows Counterspell and has its
  reaction and a slot of level 3 or higher is asked in turn (a decision of kind
  ``counterspell``, options ``level-N``, whose trigger ``{"type": "spell", ...}`` holds
  the cast); the cast waits, then resolves or is countered (``_control``).
- Bane, Sleep and Dispel Magic: ``_control``. Every spell effect's source records the
  spell and the level it was cast at (``"Bane (level 2)"``).
- Boons and wards that the SDK's temporary hit points, roll bonuses and creature types
  express (False Life, Heroism, Magic Weapon; Guidance, Resistance, Protection from
  Evil and Good): ``_boons.py`` and ``_wards.py``.

The class features that change a spell as it is cast (Disciple of Life, Sculpt Spells,
Eldritch Invocations) are in ``_class_features.py``, the sorcerer's Metamagic (the
``metamagic`` param) in ``_metamagic.py``, each documented there.

docs/characters.md lists every spell as implemented or "GM adjudicates" with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from zonekeep.sdk import (
    DYING,
    STABLE,
    Action,
    ActionTaken,
    Attack,
    AttackMade,
    Choice,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionRemoved,
    ConditionSpec,
    Creature,
    Damaged,
    Decision,
    EncounterState,
    FeatureSpec,
    Healed,
    Param,
    ReactionOffer,
    ReactionOutcome,
    ResourceRestored,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    Trait,
    apply_damage,
    apply_timed_condition,
    change_zone,
    describe_path,
    force_move,
    hookimpl,
    largest_dimension,
    parse_dice,
    saving_throw,
    sight_path,
)

from . import _control
from ._class_features import *  # noqa: F403  (Disciple of Life, Sculpt Spells, invocations)
from ._class_features import blast_dice, disciple_bonus, repelling_pushes, sculpted
from ._metamagic import *  # noqa: F403  (the sorcerer's Metamagic)
from ._metamagic import Twist, heighten, retwist, twist, untwist
from .catalog import GM_SPELLS, NO_COMBAT_EFFECT, SPELLS, Spell

__all__ = [
    "CONCENTRATING",
    "GM_SPELLS",
    "NO_COMBAT_EFFECT",
    "SPELLS",
    "TURN_KEY",
    "WARDS",
    "Spell",
    "casting_feature",
    "gm_spells_of",
    "innate_key",
    "spell_problems",
    "spell_status",
    "spells_of",
]

#: The conditions the ``ward`` spells (and faerie fire) give, and what each does.
WARDS: Final[dict[str, str]] = {
    "shielded": "Shield: +5 to its AC until the start of its next turn.",
    "shield-of-faith": "Shield of Faith: +2 to its AC.",
    "barkskin": "Barkskin: its AC is at least 16.",
    "blurred": "Blur: attack rolls against it have disadvantage.",
    "outlined": "Faerie Fire: attack rolls against it have advantage (an attacker that can see).",
    "bless": "Bless: an expertise die (a d4) on its attack rolls and saving throws.",
}

#: Shield: the decision kind of its prompt, its condition and what it adds to AC.
SHIELD = "shield"
SHIELDED = "shielded"
SHIELD_AC = 5

#: The condition a creature concentrating on a spell has.
CONCENTRATING = "concentrating"
#: The resource counting what the creature has cast this turn (the bonus-action rule).
TURN_KEY = "spells-this-turn"
_BONUS_CAST = 1
_LEVELED_ACTION = 2


def spell_status(spell_id: str) -> tuple[str, str | None]:
    """``(name, None)`` for a spell the rules resolve, ``(name, reason)`` for one the GM
    adjudicates; ``KeyError`` for a spell the plugin does not know."""
    if spell_id in SPELLS:
        spell = SPELLS[spell_id]
        return spell.name, spell.gm
    name, _level, reason = GM_SPELLS[spell_id]
    return name, reason


# -- the caster's sheet --------------------------------------------------------------------


def _short(spell_id: str) -> str:
    return spell_id.rsplit(".", 1)[-1]


def casting_feature(creature: Creature) -> Trait | Action | None:
    """``creature``'s ``spellcasting`` trait (a character's) or action (a monster's stat
    block), unless the data marks it ``gm``."""
    features: tuple[Trait | Action, ...] = (*creature.traits, *creature.actions)
    for feature in features:
        if _short(feature.id) == "spellcasting" and feature.gm is None:
            return feature
    return None


def _innate(creature: Creature) -> tuple[list[str], dict[str, int]]:
    """The innate spells: those at will, and those with a count per day. A monster's
    only: a player's sheet gets its spells and slots from its validated fields, never
    from params it wrote itself."""
    feature = casting_feature(creature)
    innate = feature.params.get("innate") if feature is not None and not creature.pc else None
    if not isinstance(innate, Mapping):
        return [], {}
    at_will = [_short(str(i)) for i in innate.get("at_will") or ()]
    per_day = innate.get("per_day") or {}
    counts = {
        _short(str(k)): int(v)
        for k, v in (per_day.items() if isinstance(per_day, Mapping) else ())
        if isinstance(v, int)
    }
    return at_will, counts


def innate_key(spell_id: str) -> str:
    """The resource counting the uses left of an innate spell with a count per day."""
    return f"innate-{_short(spell_id)}"


def spells_of(creature: Creature) -> list[str]:
    """The spells ``creature`` can cast now: its cantrips, then its prepared spells (or,
    without any, its known ones), then its innate ones; short ids, each once."""
    feature = casting_feature(creature)
    if feature is None:
        return []
    p = feature.params
    at_will, per_day = _innate(creature)
    ids = [
        *p.get("cantrips", ()),
        *(p.get("prepared") or p.get("known") or ()),
        *at_will,
        *per_day,
    ]
    return list(dict.fromkeys(_short(str(i)) for i in ids))


def gm_spells_of(creature: Creature) -> list[tuple[str, str]]:
    """``(name, reason)`` of each spell ``creature`` has that the GM adjudicates."""
    found = []
    for sid in spells_of(creature):
        if sid in SPELLS or sid in GM_SPELLS:
            name, reason = spell_status(sid)
            if reason is not None:
                found.append((name, reason))
        else:
            found.append((sid, "a spell the spells plugin does not know"))
    return found


def _left(creature: Creature, key: str) -> int:
    """The uses left of ``key``: a spell slot level, an innate spell or pact slots.
    A monster's counts start full, from its ``spellcasting`` params (a player character's
    are its resources, from the sheet's checked slots)."""
    if key in creature.resources:
        return creature.resources[key]
    feature = casting_feature(creature)
    if feature is None or creature.pc:  # a character's counts are its resources alone
        return 0
    if key.startswith("spell-slots-"):
        slots = feature.params.get("slots")
        full = slots.get(key.removeprefix("spell-slots-")) if isinstance(slots, Mapping) else 0
        return full if isinstance(full, int) else 0
    if key.startswith("innate-"):
        return _innate(creature)[1].get(key.removeprefix("innate-"), 0)
    return 0


def attack_bonus(creature: Creature) -> int:
    """The spell attack bonus: the sheet's, else the spell DC minus 8."""
    trait = casting_feature(creature)
    given = trait.params.get("attack_bonus") if trait is not None else None
    return int(given) if isinstance(given, int) else creature.spell_dc - 8


def save_dc(creature: Creature) -> int:
    trait = casting_feature(creature)
    given = trait.params.get("dc") if trait is not None else None
    return int(given) if isinstance(given, int) else creature.spell_dc


def _ability_mod(creature: Creature) -> int:
    trait = casting_feature(creature)
    ability = trait.params.get("ability") if trait is not None else None
    if isinstance(ability, str):
        return creature.abilities.get(ability, 0)
    return creature.spell_dc - 8 - creature.proficiency


def character_level(creature: Creature) -> int:
    """The character level from the ``class-levels`` trait, else a monster's caster
    level (its ``spellcasting`` params' ``level``), else 1."""
    for trait in creature.traits:
        if _short(trait.id) == "class-levels":
            level = trait.params.get("level")
            if isinstance(level, int):
                return level
    feature = casting_feature(creature)
    level = feature.params.get("level") if feature is not None else None
    return level if isinstance(level, int) else 1


def cantrip_tier(creature: Creature) -> int:
    """How many times a cantrip's dice it rolls: 1, 2 from level 5, 3 from 11, 4 from 17."""
    level = character_level(creature)
    return 1 + sum(level >= n for n in (5, 11, 17))


def _slot_key(creature: Creature, slot: int) -> str | None:
    """The resource paying for a slot of level ``slot``, or None when none is left."""
    key = f"spell-slots-{slot}"
    if _left(creature, key) > 0:
        return key
    trait = casting_feature(creature)
    pact = trait.params.get("pact_slots") if trait is not None else None
    level_ok = isinstance(pact, Mapping) and pact.get("level") == slot
    if level_ok and _left(creature, "pact-slots") > 0:
        return "pact-slots"
    return None


# -- the dice of a spell --------------------------------------------------------------------


def scaled(dice: str, times: int) -> str:
    """``dice`` with its count multiplied (``1d10`` x2 -> ``2d10``)."""
    parsed = parse_dice(dice)
    text = f"{parsed.count * times}d{parsed.sides}"
    return text + (f"{parsed.modifier:+d}" if parsed.modifier else "")


def upcast_dice(spell: Spell, slot: int) -> str | None:
    """The damage (or healing) dice of ``spell`` cast with a slot of level ``slot``."""
    if spell.damage is None:
        return None
    if spell.upcast is None or slot <= spell.level:
        return spell.damage
    base, extra = parse_dice(spell.damage), parse_dice(spell.upcast)
    assert base.sides == extra.sides, spell.id
    count = base.count + extra.count * (slot - spell.level)
    return f"{count}d{base.sides}" + (f"{base.modifier:+d}" if base.modifier else "")


def ray_count(creature: Creature, spell: Spell, slot: int) -> int:
    """How many attacks, beams or darts: eldritch blast's beams grow with the level."""
    if spell.id == "eldritch-blast":
        return cantrip_tier(creature)
    return spell.rays + spell.more_rays * max(0, slot - spell.level)


# -- casting ----------------------------------------------------------------------------------


def _spell(ctx: RuleContext, me: Creature, given: object, casting: str) -> Spell:
    if not isinstance(given, str) or not given.strip():
        ctx.refuse("invalid_params", "Name the spell to cast (for example 'fire-bolt').")
    sid = _short(given.strip().lower())
    if casting_feature(me) is None:
        ctx.refuse("no_such_feature", f"{me.name} has no Spellcasting.")
    if sid not in spells_of(me):
        known = ", ".join(spells_of(me)) or "none"
        ctx.refuse(
            "no_such_feature", f"{me.name} cannot cast {given[:60]!r} (it can cast: {known})."
        )
    spell = SPELLS.get(sid)
    if spell is None or spell.gm is not None or spell.how == "gm":
        name, reason = spell_status(sid) if sid in SPELLS or sid in GM_SPELLS else (sid, None)
        ctx.refuse(
            "no_such_feature",
            f"The rules do not resolve {name} ({reason or 'an unknown spell'}): the GM "
            "adjudicates it.",
        )
    if spell.casting == "reaction":
        ctx.refuse(
            "invalid_params",
            f"{spell.name} is cast as a reaction, when its trigger happens: the server "
            "offers it then, as a prompt.",
        )
    if spell.casting != casting:
        needs = {"action": "cast", "bonus": "cast_bonus"}
        ctx.refuse(
            "invalid_params",
            f"{spell.name} takes {'a bonus action' if spell.casting == 'bonus' else 'an action'}"
            f" to cast: send {needs[spell.casting]}.",
        )
    return spell


def _slot(ctx: RuleContext, me: Creature, spell: Spell, given: object) -> tuple[int, str | None]:
    """The slot level and the resource paying for it (None for a cantrip)."""
    if spell.cantrip:
        if given is not None:
            ctx.refuse("invalid_params", f"{spell.name} is a cantrip: it takes no slot.")
        return 0, None
    at_will, per_day = _innate(me)
    if spell.id in at_will or spell.id in per_day:
        if given is not None and (isinstance(given, bool) or given != spell.level):
            ctx.refuse(
                "invalid_params",
                f"{me.name} casts {spell.name} innately, at its own level ({spell.level}).",
            )
        if spell.id in at_will:
            return spell.level, None
        innate = innate_key(spell.id)
        if _left(me, innate) <= 0:
            ctx.refuse("no_uses_left", f"{me.name} has no use of {spell.name} left today.")
        return spell.level, innate
    slot = spell.level if given is None else given
    if not isinstance(slot, int) or isinstance(slot, bool) or not spell.level <= slot <= 9:
        ctx.refuse(
            "invalid_params",
            f"{spell.name} is a level {spell.level} spell: its slot is {spell.level} to 9.",
        )
    key = _slot_key(me, slot)
    if key is None:
        ctx.refuse("no_uses_left", f"{me.name} has no level {slot} spell slot left.")
    return slot, key


def _turn_rule(ctx: RuleContext, me: Creature, spell: Spell, casting: str) -> None:
    """The bonus-action spell rule (refuses); marks what this cast rules out."""
    done = me.resources.get(TURN_KEY, 0) if ctx.state.active == me.id else 0
    if done & _BONUS_CAST and not (casting == "action" and spell.cantrip):
        ctx.refuse(
            "spell_limit",
            f"{me.name} cast a bonus-action spell this turn: only a cantrip with a casting "
            "time of one action may follow.",
        )
    if casting == "bonus" and done & _LEVELED_ACTION:
        ctx.refuse(
            "spell_limit",
            f"{me.name} cast a leveled spell with its action this turn: a bonus-action "
            "spell would break the bonus-action spell rule.",
        )
    mark = _BONUS_CAST if casting == "bonus" else _LEVELED_ACTION if not spell.cantrip else 0
    if mark and ctx.state.active == me.id and not done & mark:
        ctx.emit(ResourceSpent(me.id, TURN_KEY, done | mark))


def _reach(ctx: RuleContext, me: Creature, target: Creature, spell: Spell, reach: int) -> None:
    """Refuse a target out of sight or beyond ``reach`` feet (docs/rules.md, A9)."""
    if target.out_of_fight:
        ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
    _zone_reach(ctx, me, target.zone, reach, spell, target.name)


def _zone_reach(
    ctx: RuleContext, me: Creature, zone: str | None, reach: int, spell: Spell, what: str
) -> None:
    arena = ctx.state.arena
    if me.zone is None or zone is None or not arena.has_zone(zone):
        ctx.refuse("out_of_range", f"{what} and {me.name} must both be in zones of the arena.")
    if zone == me.zone:
        return
    path = sight_path(arena, me.zone, zone)
    if path is None:
        ctx.refuse("no_line_of_sight", f"{me.name} has no line of sight to {what}.")
    distance = sum(arena.zone(z).size for z in path)
    if distance > reach:
        ctx.refuse(
            "out_of_range",
            f"{what} is {distance} ft from {me.name} ({describe_path(arena, path)}); "
            f"{spell.name} reaches {reach} ft.",
        )


def _targets(ctx: RuleContext, p: Mapping[str, Any]) -> list[Creature]:
    ids: list[str] = []
    if p.get("target") is not None:
        ids.append(p["target"])
    ids += list(p.get("targets") or ())
    return [ctx.creature(t, role="target") for t in ids]


def _cast(ctx: RuleContext, cmd: Command, casting: str) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    meta = p.get("metamagic")
    quick = isinstance(meta, Mapping) and meta.get("option") == "quickened"
    if quick and casting != "bonus":
        ctx.refuse("invalid_params", "Quickened Spell casts an action spell: send cast_bonus.")
    spell = _spell(ctx, me, p.get("spell"), "action" if quick else casting)
    _option(ctx, spell, p.get("option"))
    slot, key = _slot(ctx, me, spell, p.get("slot"))
    _turn_rule(ctx, me, spell, casting)
    if key is not None:
        ctx.emit(ResourceSpent(me.id, key, _left(me, key) - 1))
    twisted = twist(ctx, ctx.state.creatures[me.id], spell, slot, meta, p)  # Metamagic
    me = ctx.state.creatures[me.id]
    if _control.pause_for_counterspell(ctx, me, twisted.spell, slot, p):
        return  # it waits for a foe's Counterspell decision (_control.decision_resolved)
    carry_out(ctx, me, spell, slot, p, twisted)


def _option(ctx: RuleContext, spell: Spell, option: object) -> None:
    """A spell with options (a ward with ``choices``) needs one of them; others take none."""
    options = spell.choices if spell.how == "ward" else ()
    if option is None and not options:
        return
    if not options:
        ctx.refuse("invalid_params", f"{spell.name} takes no option.")
    if option not in options:
        ctx.refuse(
            "invalid_params",
            f"{spell.name} needs its option (option): one of {', '.join(options)}.",
        )


def carry_out(
    ctx: RuleContext,
    me: Creature,
    spell: Spell,
    slot: int,
    p: Mapping[str, Any],
    twisted: Twist | None = None,
) -> None:
    """Carry out ``spell``, its slot and Metamagic paid and no Counterspell stopping it:
    each run of its resolver (two for a twinned spell). ``twisted``: what the Metamagic
    changes (worked out again from ``p`` when the cast resumes after a prompt)."""
    if twisted is None:
        twisted = retwist(ctx, me, spell, slot, p)
    _more.before_cast(ctx, me, twisted.spell, slot, p)
    heighten(ctx, twisted)
    for run in twisted.runs:  # two for a twinned one-target spell
        resolver(twisted.spell)(ctx, ctx.state.creatures[me.id], twisted.spell, slot, run)
        _more.after_cast(ctx, ctx.state.creatures[me.id], twisted.spell, slot, run)
    untwist(ctx, twisted)


def resolver(spell: Spell) -> Any:
    """The function that carries out ``spell`` (its slot spent)."""
    return {
        "attack": _attack_spell,
        "save": _save_spell,
        "darts": _darts,
        "heal": _heal,
        "area": _area,
        "condition": _condition_spell,
        "teleport": _teleport,
        "ward": _ward,
        **_zones.RESOLVERS,
        "control": _control.resolve,
        **_boons.RESOLVERS,
    }.get(spell.how) or _more.RESOLVERS[spell.how]


# -- attack spells ---------------------------------------------------------------------------


def _attack_spell(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    targets = _targets(ctx, p)
    rays = ray_count(me, spell, slot)
    if len(targets) == 1 and rays > 1:
        targets = targets * rays
    if len(targets) != rays:
        ctx.refuse(
            "invalid_params",
            f"{spell.name} makes {rays} attack{'s' if rays > 1 else ''}: give "
            + ("a target" if rays == 1 else f"{rays} targets (repeat one to hit it again)")
            + ".",
        )
    assert spell.damage is not None
    dice = upcast_dice(spell, slot) or spell.damage
    if spell.cantrip and spell.id != "eldritch-blast":
        dice = scaled(spell.damage, cantrip_tier(me))
    dice = blast_dice(me, spell, dice)  # Agonizing Blast
    attack = Attack(
        spell.name,
        "melee" if spell.melee else "ranged",
        attack_bonus(me),
        dice,
        spell.damage_type,
        reach=spell.range if spell.melee else 5,
        range=0 if spell.melee else spell.range,
        magical=True,
    )
    for target in targets:
        if target.id == me.id:
            ctx.refuse("invalid_target", f"{me.name} cannot aim {spell.name} at itself.")
        _reach(ctx, me, target, spell, spell.range)
    pushes = repelling_pushes(ctx, me, spell, targets, p.get("push"))  # Repelling Blast
    for target in targets:
        target = ctx.state.creatures[target.id]
        if target.out_of_fight:
            continue  # an earlier ray dropped it: the rest are spent on nothing
        hit = _spell_attack(ctx, ctx.state.creatures[me.id], target, attack)
        where = pushes.pop(target.id, None) if hit else None
        now = ctx.state.creatures[target.id]
        if where is not None and not now.out_of_fight:
            force_move(
                ctx,
                ctx.state.creatures[me.id],
                now,
                zone=where.get("zone"),
                asset=where.get("asset"),
                magical=True,
            )


def _spell_attack(ctx: RuleContext, me: Creature, target: Creature, attack: Attack) -> bool:
    """One spell attack, through the hooks weapon attacks use; whether it hit."""
    ctx.hook.zonekeep_before_attack(
        ctx=ctx, attacker=me, target=target, attack=attack, reaction=False
    )
    request = RollRequest("attack", me.id, target.id, attack_kind=attack.kind, attack=attack.name)
    result = ctx.roll("d20", request, bonus=attack.bonus)
    bonuses = ctx.hook.zonekeep_armor_class_bonus(
        ctx=ctx, target=target, attacker=me, attack=attack
    )
    ac = target.ac + sum(b for b in bonuses if b)
    hit = result.natural == 20 or (result.natural != 1 and result.total >= ac)
    critical = result.natural == 20
    made = AttackMade(me.id, target.id, attack.name, attack.kind, result, ac, hit, critical, False)
    ctx.emit(made)
    damaged: Damaged | None = None
    if hit:
        damage = ctx.roll(attack.damage, double_dice=critical)
        damaged = apply_damage(
            ctx,
            target,
            damage.total,
            damage_type=attack.damage_type,
            roll=damage,
            source=me.id,
            attacker=me.id,
            attack=attack.name,
            critical=critical,
        )
    s = ctx.state
    ctx.hook.zonekeep_attack_made(
        ctx=ctx,
        attacker=s.creatures[me.id],
        target=s.creatures[target.id],
        attack=attack,
        result=made,
        damage=damaged,
    )
    return hit


def _darts(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    targets = _targets(ctx, p)
    darts = ray_count(me, spell, slot)
    if len(targets) == 1:
        targets = targets * darts
    if len(targets) != darts:
        ctx.refuse(
            "invalid_params",
            f"{spell.name} at level {slot} makes {darts} darts: give one target, or "
            f"{darts} targets (repeat one to send it more darts).",
        )
    for target in targets:
        if target.id == me.id:
            ctx.refuse("invalid_target", f"{me.name} cannot aim {spell.name} at itself.")
        _reach(ctx, me, target, spell, spell.range)
    assert spell.damage is not None
    for target in targets:
        target = ctx.state.creatures[target.id]
        if target.out_of_fight:
            continue
        roll = ctx.roll(spell.damage)
        apply_damage(
            ctx, target, roll.total, damage_type=spell.damage_type, roll=roll, source=me.id
        )


# -- save spells -----------------------------------------------------------------------------


def _one_target(ctx: RuleContext, me: Creature, spell: Spell, p: Mapping[str, Any]) -> Creature:
    targets = _targets(ctx, p)
    if len(targets) != 1:
        ctx.refuse("invalid_params", f"{spell.name} has one target: give target.")
    target = targets[0]
    _reach(ctx, me, target, spell, spell.range)
    return target


def _save_spell(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    target = _one_target(ctx, me, spell, p)
    if target.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} cannot aim {spell.name} at itself.")
    assert spell.save is not None and spell.damage is not None
    ok = saving_throw(ctx, target, spell.save, save_dc(me), spell.name, magical=True)
    if ok and not spell.half_on_save:
        return
    dice = scaled(spell.damage, cantrip_tier(me)) if spell.cantrip else upcast_dice(spell, slot)
    assert dice is not None
    roll = ctx.roll(dice)
    amount = roll.total // 2 if ok else roll.total
    apply_damage(ctx, target, amount, damage_type=spell.damage_type, roll=roll, source=me.id)


def _heal(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    target = _one_target(ctx, me, spell, p)
    dice = upcast_dice(spell, slot)
    assert dice is not None
    roll = ctx.roll(dice, bonus=_ability_mod(me))
    amount = _more.heal_amount(target, dice, roll.total, _ability_mod(me)) + disciple_bonus(
        me, spell, slot
    )
    hp = max(target.hp, min(target.max_hp, target.hp + amount))
    ctx.emit(Healed(target.id, amount, hp, me.id, roll=roll))
    for condition in (DYING, STABLE):
        if hp > 0 and condition in target.conditions:
            ctx.emit(ConditionRemoved(target.id, condition, f"healed by {spell.name}"))


def _against(spell: Spell) -> dict[str, Any]:
    """A spell's save is against magic (Magic Resistance), and against the condition
    it gives (a trait's advantage against being paralyzed)."""
    return {"magical": True, "against": (spell.condition,) if spell.condition else ()}


def _condition_spell(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    targets = _targets(ctx, p)
    most = spell.targets + max(0, slot - spell.level)
    if not 1 <= len(targets) <= most:
        ctx.refuse(
            "too_many_targets" if targets else "invalid_params",
            f"{spell.name} at level {slot} takes 1 to {most} target{'s' if most > 1 else ''}.",
        )
    if len({t.id for t in targets}) != len(targets):
        ctx.refuse("invalid_params", "Each target is chosen once.")
    for target in targets:
        _reach(ctx, me, target, spell, spell.range)
    assert spell.save is not None and spell.condition is not None
    parent = begin_concentration(ctx, me, spell, slot) if spell.concentration else None
    dc = save_dc(me)
    for target in targets:
        target = ctx.state.creatures[target.id]
        if saving_throw(ctx, target, spell.save, dc, spell.name, **_against(spell)):
            continue
        apply_timed_condition(
            ctx,
            target.id,
            spell.condition,
            rounds=None if parent else spell.rounds,
            save=spell.save if spell.repeat_save else None,
            dc=dc if spell.repeat_save else None,
            save_when="end",
            source=me.id,
            parent=parent,
        )


def _ward(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """A willing creature in range (the caster alone at range 0) gets the spell's
    condition, no save; it ends with the caster's concentration."""
    targets = _targets(ctx, p) or [me]
    per_slot = 1 if spell.targets > 1 else spell.more_targets
    most = spell.targets + max(0, slot - spell.level) * per_slot
    if len(targets) > most:
        ctx.refuse(
            "too_many_targets",
            f"{spell.name} at level {slot} takes 1 to {most} target{'s' if most > 1 else ''}.",
        )
    if len({t.id for t in targets}) != len(targets):
        ctx.refuse("invalid_params", "Each target is chosen once.")
    for target in targets:
        if spell.range == 0 and target.id != me.id:
            ctx.refuse("invalid_target", f"{spell.name} affects only its caster, {me.name}.")
        _reach(ctx, me, target, spell, spell.range)
    assert spell.condition is not None
    # A ward with options: the condition of the one chosen ("resist-*": resist-fire).
    condition = (
        spell.condition.replace("*", str(p.get("option"))) if spell.choices else spell.condition
    )
    parent = begin_concentration(ctx, me, spell, slot) if spell.concentration else None
    for target in targets:
        apply_timed_condition(
            ctx,
            target.id,
            condition,
            rounds=None if parent else spell.rounds,
            source=me.id,
            parent=parent,
        )


def _teleport(
    ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]
) -> None:
    zone = p.get("zone")
    if not isinstance(zone, str) or not ctx.state.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"{spell.name} needs the zone to teleport to.")
    if zone == me.zone:
        ctx.refuse("invalid_params", f"{me.name} is already in that zone.")
    _zone_reach(ctx, me, zone, spell.range, spell, ctx.state.arena.zone(zone).name)
    change_zone(ctx, me, zone, by=me.id)


# -- areas -------------------------------------------------------------------------------------


def area_reach(spell: Spell) -> int:
    """How far an area spell may be aimed: its range, or a cone's or line's length
    (it starts at the caster: docs/rules.md, "Rulings")."""
    return spell.range if spell.range else spell.size


def area_zones(ctx: RuleContext, spell: Spell, zone: str) -> list[str]:
    """The zones ``spell``'s area aimed at ``zone`` covers: that zone, then the linked
    zones it spills into when it is larger (the arena's area rules)."""
    assert spell.shape is not None
    arena = ctx.state.arena
    dimension = largest_dimension(spell.shape, spell.size, 5)
    spilled = ctx.hook.zonekeep_area_zones(ctx=ctx, zone=zone, largest_dimension=dimension)
    return [zone, *(z for z in dict.fromkeys(spilled or ()) if z != zone and arena.has_zone(z))]


def area_most(ctx: RuleContext, spell: Spell) -> int:
    """The most creatures ``spell``'s area takes (the arena's table; 1 when no rule says)."""
    assert spell.shape is not None
    answer = ctx.hook.zonekeep_area_max_targets(
        ctx=ctx, shape=spell.shape, size=spell.size, width=5
    )
    return 1 if answer is None else int(answer)


def _area(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    assert spell.shape is not None and spell.save is not None
    zone = p.get("zone") or me.zone
    arena = ctx.state.arena
    if not isinstance(zone, str) or not arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {zone!r} to aim {spell.name} at.")
    name = arena.zone(zone).name
    _zone_reach(ctx, me, zone, area_reach(spell), spell, name)
    affected = area_zones(ctx, spell, zone)
    chosen = _area_targets(ctx, me, spell, affected, area_most(ctx, spell), p)
    pushes = _pushes(ctx, spell, chosen, p.get("push"))
    spared, harmless = sculpted(ctx, me, spell, chosen, p.get("spare"), p.get("metamagic"))
    dc = save_dc(me)
    parent = begin_concentration(ctx, me, spell, slot) if spell.concentration else None
    outcomes = [
        (t, t.id in spared or saving_throw(ctx, t, spell.save, dc, spell.name, **_against(spell)))
        for t in chosen
    ]
    if spell.condition is not None:
        for target, ok in outcomes:
            if not ok and not ctx.state.creatures[target.id].out_of_fight:
                apply_timed_condition(
                    ctx,
                    target.id,
                    spell.condition,
                    rounds=None if parent else spell.rounds,
                    source=me.id,
                    parent=parent,
                )
    dice = upcast_dice(spell, slot)
    unhurt = spared if harmless else frozenset()  # Sculpt Spells (Careful: saves only)
    hurt = any(not ok or spell.half_on_save for t, ok in outcomes if t.id not in unhurt)
    if dice is not None and hurt:
        roll = ctx.roll(dice)  # one roll for every target (the arena's area rules)
        for target, ok in outcomes:
            amount = roll.total // 2 if ok else roll.total
            if amount > 0 and target.id not in unhurt:
                apply_damage(
                    ctx,
                    ctx.state.creatures[target.id],
                    amount,
                    damage_type=spell.damage_type,
                    roll=roll,
                    source=me.id,
                )
    for target, ok in outcomes:
        where = pushes.get(target.id)
        now = ctx.state.creatures[target.id]
        if ok or where is None or now.out_of_fight:
            continue
        force_move(
            ctx,
            ctx.state.creatures[me.id],
            now,
            zone=where.get("zone"),
            asset=where.get("asset"),
            magical=True,
        )


def _pushes(
    ctx: RuleContext, spell: Spell, chosen: Sequence[Creature], given: object
) -> dict[str, dict[str, str]]:
    """Where each target that fails is pushed: ``{"gob": {"zone": "bar"}}`` or
    ``{"gob": {"asset": "spikes"}}`` (both: an asset in that zone). A target left out
    is pushed within its zone (10 ft moves no one out of a zone by itself)."""
    if given is None:
        return {}
    if not spell.push:
        ctx.refuse("invalid_params", f"{spell.name} pushes no one.")
    if not isinstance(given, Mapping):
        ctx.refuse("invalid_params", 'push is an object: {"<target>": {"zone": "<zone>"}}.')
    ids = {t.id for t in chosen}
    found: dict[str, dict[str, str]] = {}
    for cid, where in given.items():
        if cid not in ids:
            ctx.refuse("invalid_params", f"push names {str(cid)[:60]!r}, not a chosen target.")
        ok = isinstance(where, Mapping) and where and set(where) <= {"zone", "asset"}
        if not ok or not all(isinstance(v, str) for v in where.values()):
            ctx.refuse(
                "invalid_params",
                f'push.{cid}: give "zone" (a linked zone) and/or "asset" (where it lands).',
            )
        found[cid] = dict(where)
    return found


def _area_targets(
    ctx: RuleContext,
    me: Creature,
    spell: Spell,
    affected: Sequence[str],
    maximum: int,
    p: Mapping[str, Any],
) -> list[Creature]:
    """The chosen targets, checked against the area, its maximum and the rule that the
    caster fills the maximum while other creatures remain in the area."""
    chosen = _targets(ctx, p)
    if len({t.id for t in chosen}) != len(chosen):
        ctx.refuse("invalid_params", "Each target is chosen once.")
    weight = 0
    for target in chosen:
        if target.out_of_fight:
            ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
        if target.zone not in affected:
            ctx.refuse(
                "invalid_target", f"{target.name} is outside {spell.name}'s area ({affected})."
            )
        w = ctx.hook.zonekeep_area_target_weight(ctx=ctx, creature=target)
        weight += 1 if w is None else int(w)
        if weight > maximum and len(chosen) > 1:
            ctx.refuse(
                "too_many_targets",
                f"{spell.name} ({spell.size}-ft {spell.shape}) has at most {maximum} targets.",
            )
    if weight < maximum:
        ids = {t.id for t in chosen}
        left = [
            c.name
            for z in affected
            for c in ctx.state.in_zone(z)
            if c.id not in ids and c.id != me.id and not c.hidden and not c.out_of_fight
        ]
        if left:
            ctx.refuse(
                "too_few_targets",
                f"{spell.name} must fill its {maximum} targets while creatures remain in its "
                f"area: {', '.join(left)} not chosen.",
            )
    return chosen


# -- concentration ----------------------------------------------------------------------------


def concentration_of(state: EncounterState, creature_id: str) -> str | None:
    """The id of the ``concentrating`` effect ``creature_id`` holds, or None."""
    for effect in state.condition_effects.values():
        if effect.creature == creature_id and effect.condition == CONCENTRATING:
            return effect.id
    return None


def _below(state: EncounterState, effect_id: str) -> list[str]:
    found: list[str] = []
    for effect in state.condition_effects.values():
        if effect.parent == effect_id:
            found += [effect.id, *_below(state, effect.id)]
    return found


def end_concentration(ctx: RuleContext, creature_id: str, reason: str) -> None:
    """End ``creature_id``'s concentration and every effect that hangs on it."""
    eid = concentration_of(ctx.state, creature_id)
    if eid is None:
        return
    for effect_id in [eid, *_below(ctx.state, eid)]:
        effect = ctx.state.condition_effects.get(effect_id)
        if effect is not None:
            why = reason if effect_id == eid else f"{reason}: its concentration ended"
            ctx.emit(ConditionEffectEnded(effect.id, effect.creature, effect.condition, why))


def begin_concentration(ctx: RuleContext, me: Creature, spell: Spell, slot: int = 0) -> str:
    """Start concentrating on ``spell`` cast at ``slot`` (ending any other); the effect id
    its effects hang on. Its source records the spell and its level (Dispel Magic)."""
    end_concentration(ctx, me.id, f"{me.name} began concentrating on {spell.name}")
    source = _control.spell_source(spell, slot)
    eid = apply_timed_condition(
        ctx, me.id, CONCENTRATING, rounds=spell.rounds, source=source, override=True
    )
    assert eid is not None
    return eid


@hookimpl
def zonekeep_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    _control.after_damage(ctx, creature, damage)
    if damage.amount <= 0 or concentration_of(ctx.state, creature.id) is None:
        return
    if creature.incapacitated or creature.hp <= 0:
        end_concentration(ctx, creature.id, f"{creature.name} is incapacitated")
        return
    dc = max(10, damage.amount // 2)
    if not saving_throw(ctx, creature, "con", dc, "concentration"):
        end_concentration(ctx, creature.id, f"{creature.name} failed a concentration save")


@hookimpl
def zonekeep_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    if creature.incapacitated and concentration_of(ctx.state, creature.id) is not None:
        end_concentration(ctx, creature.id, f"{creature.name} is {condition}")


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if creature.resources.get(TURN_KEY, 0):
        ctx.emit(ResourceRestored(creature.id, TURN_KEY, 0, "turn"))
    _control.turn_start(ctx, ctx.state.creatures[creature.id])


@hookimpl
def zonekeep_action_refusal(ctx: RuleContext, creature: Creature, spec: CommandSpec) -> Any:
    """Slow's limits on a slowed creature; a lethargic one (Haste ended) cannot react."""
    return _control.action_refusal(ctx, creature, spec)


@hookimpl
def zonekeep_condition_removed(
    ctx: RuleContext, creature: Creature, condition: str, reason: str, expired: bool
) -> None:
    _control.condition_removed(ctx, creature, condition)


@hookimpl
def zonekeep_skip_turn(ctx: RuleContext, creature: Creature) -> str | None:
    """A lethargic creature (its Haste ended) loses its turn."""
    return _control.skip_turn(creature)


# -- declarations -----------------------------------------------------------------------------


@hookimpl
def zonekeep_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            CONCENTRATING,
            "Keeps a spell going; damage calls for a Constitution save (DC 10 or half the "
            "damage), and a failure, incapacitation or another concentration spell ends it.",
            durations=("rounds", "until_removed"),
        ),
        *(
            ConditionSpec(cid, summary, durations=("rounds", "until_removed"))
            for cid, summary in WARDS.items()
        ),
        ConditionSpec(
            _control.BANE,
            "Bane: a penalty die (a d4) subtracted from its attack rolls and saving throws.",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            _control.HASTED,
            "Haste: +2 AC, advantage on Dexterity saves, its speed doubled, one more action "
            "each turn (hasted_action: one weapon attack, Dash or Disengage).",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            _control.SLOWED,
            "Slow: -2 AC and to Dexterity saves, half its speed, no reactions, an action or "
            "a bonus action but not both, one attack.",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            _control.LETHARGIC,
            "Its Haste ended: it loses its next turn (it cannot move or act).",
            durations=("rounds", "until_removed"),
        ),
    )


@hookimpl
def zonekeep_armor_class_bonus(
    ctx: RuleContext, target: Creature, attacker: Creature, attack: Attack
) -> int | None:
    bonus = 0
    if "shield-of-faith" in target.conditions:
        bonus += 2
    if SHIELDED in target.conditions:
        bonus += SHIELD_AC
    if "barkskin" in target.conditions:
        bonus += max(0, 16 - target.ac)
    bonus += _control.armor_class_bonus(target)
    return bonus or None


# -- Shield: a reaction spell, offered as a prompt ---------------------------------------------


def _shield_slot(creature: Creature) -> str | None:
    """The resource a Shield would spend: the lowest slot left (or an innate use)."""
    if SHIELD not in spells_of(creature):
        return None
    at_will, per_day = _innate(creature)
    if SHIELD in at_will:
        return ""
    if SHIELD in per_day:
        innate = innate_key(SHIELD)
        return innate if _left(creature, innate) > 0 else None
    for slot in range(1, 10):
        key = _slot_key(creature, slot)
        if key is not None:
            return key
    return None


@hookimpl
def zonekeep_attack_reactions(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    moment: str,
    total: int | None,
    ac: int | None,
) -> Iterable[ReactionOffer] | None:
    """Shield is offered to a caster who knows it when an attack would hit it (not a
    critical hit, which the rules never ask about), with its reaction and a slot left."""
    if moment != "hit" or casting_feature(target) is None or SHIELDED in target.conditions:
        return None
    if not ctx.state.has_reaction(target.id) or target.incapacitated or target.out_of_fight:
        return None
    if _shield_slot(target) is None:
        return None
    turned = total is not None and ac is not None and total < ac + SHIELD_AC
    return (
        ReactionOffer(
            target.id,
            SHIELD,
            f"{attacker.name}'s {attack.name} would hit {target.name} ({total} against AC "
            f"{ac}). Cast Shield (reaction, a level 1 slot): +{SHIELD_AC} AC until the start "
            f"of {target.name}'s next turn, "
            + ("making this attack miss?" if turned else "though this attack still hits?"),
            (SHIELD,),
        ),
    )


@hookimpl
def zonekeep_reaction_taken(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...]
) -> ReactionOutcome | None:
    if decision.kind != SHIELD or choice[:1] != (SHIELD,):
        return None
    me = ctx.state.creatures.get(decision.creature or "")
    if me is None or me.incapacitated or me.out_of_fight:
        return None  # it can no longer cast: the attack goes on as it was
    key = _shield_slot(me)
    if key is None:
        return None  # its last slot went since the prompt
    ctx.emit(ActionTaken(me.id, SHIELD, "reaction"))
    if key:
        ctx.emit(ResourceSpent(me.id, key, _left(me, key) - 1))
    apply_timed_condition(ctx, me.id, SHIELDED, until="start", of=me.id, source=me.id)
    # The condition's +5 counts from now on; the outcome adds it to this attack, which
    # was rolled against the AC before it.
    return ReactionOutcome(ac_bonus=SHIELD_AC)


@hookimpl
def zonekeep_decision_resolved(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...], defaulted: bool
) -> None:
    """A Counterspell prompt closed: the spell it held resumes, or is countered."""
    _control.decision_resolved(ctx, decision, choice)


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    actor = ctx.state.creatures.get(roll.actor)
    blessed = (
        [RollModifier("expertise", "bless")]
        if roll.kind in ("attack", "save") and actor is not None and "bless" in actor.conditions
        else []
    ) + _control.roll_modifiers(ctx, roll)
    if roll.kind != "attack" or roll.target not in ctx.state.creatures:
        return blessed or None
    target = ctx.state.creatures[roll.target]
    attacker = actor
    found = blessed
    if "outlined" in target.conditions and (
        attacker is None or "blinded" not in attacker.conditions
    ):
        found.append(RollModifier("advantage", f"faerie fire: {target.name} is outlined"))
    if "blurred" in target.conditions:
        found.append(RollModifier("disadvantage", f"blur: {target.name} is blurred"))
    return found or None


_SPELL_IDS: Final = {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 40}
#: The params of a monster's ``spellcasting`` action (SRD 5.1 stat blocks).
ACTION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "ability": {"enum": ["int", "wis", "cha"]},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "attack_bonus": {"type": "integer", "minimum": -5, "maximum": 20},
        "level": {"type": "integer", "minimum": 1, "maximum": 20},
        "slots": {
            "type": "object",
            "properties": {
                str(n): {"type": "integer", "minimum": 0, "maximum": 9} for n in range(1, 10)
            },
            "additionalProperties": False,
        },
        "cantrips": _SPELL_IDS,
        "prepared": _SPELL_IDS,
        "known": _SPELL_IDS,
        "innate": {
            "type": "object",
            "properties": {
                "at_will": _SPELL_IDS,
                "per_day": {
                    "type": "object",
                    "additionalProperties": {"type": "integer", "minimum": 1, "maximum": 9},
                },
            },
            "additionalProperties": False,
        },
    },
    "required": ["ability"],
    "additionalProperties": False,
}


def spell_problems(params: Mapping[str, Any], attack_names: Sequence[str] = ()) -> list[str]:
    """The spells a ``spellcasting`` action names that the plugin does not know (a
    spell it knows but the rules do not resolve is fine: the GM adjudicates it)."""
    innate = params.get("innate")
    innate = innate if isinstance(innate, Mapping) else {}
    per_day = innate.get("per_day")
    named = [
        *(params.get("cantrips") or ()),
        *(params.get("prepared") or ()),
        *(params.get("known") or ()),
        *(innate.get("at_will") or ()),
        *(per_day if isinstance(per_day, Mapping) else ()),
    ]
    return [
        f"{str(sid)[:60]!r} is not a spell the spells plugin knows"
        for sid in named
        if _short(str(sid)) not in SPELLS and _short(str(sid)) not in GM_SPELLS
    ]


@hookimpl
def zonekeep_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "spellcasting",
            "trait",
            {"type": "object"},
            doc="Casts the spells it knows with cast and cast_bonus: slots and upcasting, "
            "spell attacks and save DC, concentration, the bonus-action spell rule.",
        ),
        FeatureSpec(
            "spellcasting",
            "action",
            ACTION_SCHEMA,
            doc="A stat block's Spellcasting or Innate Spellcasting: casts its spells with "
            "cast and cast_bonus (slots by level, innate spells at will or per day), "
            "against its save DC and with its spell attack bonus; the spells the rules "
            "do not resolve are the GM's, each with the reason.",
            check=spell_problems,
        ),
    )


def _is_caster(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if casting_feature(me) is None:
        return ("no_such_feature", f"{me.name} has no Spellcasting.")
    return None


def slot_levels(creature: Creature, spell: Spell) -> tuple[int, ...]:
    """The slot levels ``creature`` could cast ``spell`` with now (``(0,)``: a cantrip)."""
    if spell.cantrip:
        return (0,)
    at_will, per_day = _innate(creature)
    if spell.id in at_will:
        return (spell.level,)
    if spell.id in per_day:
        return (spell.level,) if _left(creature, innate_key(spell.id)) > 0 else ()
    return tuple(n for n in range(spell.level, 10) if _slot_key(creature, n) is not None)


def _reaches(state: EncounterState, me: Creature, zone: str | None, reach: int) -> bool:
    arena = state.arena
    if me.zone is None or zone is None or not arena.has_zone(zone):
        return False
    if zone == me.zone:
        return True
    path = sight_path(arena, me.zone, zone)
    return path is not None and sum(arena.zone(z).size for z in path) <= reach


def spell_choices(state: EncounterState, me: Creature, casting: str) -> list[Choice]:
    """Each spell ``me`` can cast now with ``casting``, its slot levels and its legal
    targets (creatures in reach and sight) or zones (where an area may be aimed)."""
    found = []
    done = me.resources.get(TURN_KEY, 0) if state.active == me.id else 0
    for sid in spells_of(me):
        spell = SPELLS.get(sid)
        if spell is None or spell.gm is not None or spell.casting != casting:
            continue
        if done & _BONUS_CAST and not (casting == "action" and spell.cantrip):
            continue  # the bonus-action spell rule (_turn_rule refuses it too)
        if casting == "bonus" and done & _LEVELED_ACTION:
            continue
        slots = slot_levels(me, spell)
        if not slots:
            continue
        innate = sid in _innate(me)[0] or sid in _innate(me)[1]
        options: dict[str, tuple[Any, ...]] = {} if spell.cantrip or innate else {"slot": slots}
        info: dict[str, Any] = {
            "level": 0 if spell.cantrip else spell.level,
            "concentration": spell.concentration,
        }
        if (spell.how in ("ward", "temp") and spell.range == 0) or spell.how == "blade":
            pass  # the caster alone
        elif spell.how == "aura":
            pass  # around the caster
        elif (
            spell.how in ("area", "teleport", "snare", "weapon", "hazard")
            or spell.shape is not None
        ):
            reach = area_reach(spell) if spell.shape is not None else spell.range
            zones = [
                z.id
                for z in state.arena.zones
                if _reaches(state, me, z.id, reach) and (spell.how != "teleport" or z.id != me.zone)
            ]
            options["zone"] = tuple(zones)
            if (
                spell.shape is not None and spell.how not in ("hazard", "cloud") and sid != "sleep"
            ) or (spell.how == "weapon"):
                # candidates in each aimed-at zone (spills aside); a moonbeam, a flaming
                # sphere, a stinking cloud or sleep (which chooses its own, by hit points)
                # takes no targets: it has none
                info["targets_by_zone"] = {z: [c.id for c in state.in_zone(z)] for z in zones}
            if spell.how == "weapon":
                info["most_targets"] = 1  # the spiritual weapon strikes one, if any
        else:
            others = spell.how not in (
                "heal",
                "ward",
                "heals",
                "stabilize",
                "cure",
                "toughen",
            ) and not _control.on_self_too(spell)
            options["target"] = tuple(
                c.id
                for c in state.creatures.values()
                if not c.out_of_fight
                and not (others and c.id == me.id)
                and _reaches(state, me, c.zone, spell.range)
            )
        if spell.how == "ward" and spell.choices:
            options["option"] = spell.choices  # Enhance Ability's, Protection from Energy's
        level = "cantrip" if spell.cantrip else f"level {spell.level}"
        found.append(Choice(f"{spell.name} ({level})", {"spell": sid}, options, info))
    return found


_PARAMS = {
    "creature": Param("creature", True, "the caster"),
    "spell": Param("string", True, "the spell's id (fire-bolt)"),
    "slot": Param("integer", False, "the slot level (default: the spell's level)"),
    "target": Param("creature", False, "the target of a one-target spell"),
    "targets": Param(
        "creatures", False, "the targets (rays and darts may repeat one; an area's choice)"
    ),
    "zone": Param("zone", False, "the zone an area is aimed at (default: the caster's)"),
    "push": Param(
        "object",
        False,
        "thunderwave (a target that fails), Repelling Blast (a creature hit): where it lands "
        '{"gob": {"zone": "bar"}}',
    ),
    "spare": Param(
        "creatures",
        False,
        "Sculpt Spells (1 + the level) or Careful Spell (Cha): an area's targets spared",
    ),
    "metamagic": Param(
        "object", False, 'Metamagic: {"option": "quickened"} (heightened: and "target")'
    ),
    "option": Param(
        "string",
        False,
        "the spell's option, for a spell that has them: Enhance Ability's "
        "(bears-endurance ...), Protection from Energy's damage type (fire ...)",
    ),
}


def _casting_command(casting: Literal["action", "bonus"]) -> Any:
    def handler(ctx: RuleContext, cmd: Command) -> None:
        _cast(ctx, cmd, casting)

    return handler


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "cast",
            _casting_command("action"),
            "Action: cast a spell (a slot of its level or higher; cantrips are free).",
            _PARAMS,
            costs=("action",),
            requires=_is_caster,
            choices=lambda state, me: spell_choices(state, me, "action"),
        ),
        CommandSpec(
            "cast_bonus",
            _casting_command("bonus"),
            "Bonus action: cast a bonus-action spell (healing word, misty step); then only "
            "an action cantrip may follow this turn.",
            _PARAMS,
            costs=("bonus",),
            requires=_is_caster,
            choices=lambda state, me: spell_choices(state, me, "bonus"),
        ),
        _control.HASTED_ACTION,
    )


# Entangle, web, spiritual weapon and spirit guardians: assets that stay (spells-b2).
# and more SRD spells (plugins/spells/_more.py).
from . import _boons, _more, _zones  # noqa: E402
from ._boons import *  # noqa: E402, F403
from ._more import *  # noqa: E402, F403
from ._wards import *  # noqa: E402, F403
from ._zones import *  # noqa: E402, F403
