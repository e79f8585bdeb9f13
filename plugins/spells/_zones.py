"""Spells that stay on the field (issue 31): entangle, web, spiritual weapon, spirit
guardians, moonbeam, flaming sphere and stinking cloud, each a runtime asset (``place_asset``) carrying its facts in its data, whose
life hangs on a condition effect of its caster (its concentration, or the spiritual
weapon's minute): when that effect ends, for whatever reason, the asset goes
(``zonekeep_effect_ended``), and every condition hanging on the asset with it.

- **Entangle** and **web** (``how="snare"``): the caster aims them at a zone in range
  (an area by the arena's rules: it spills into linked zones when larger than the zone,
  and the table's maximum of targets, which the caster must fill, save at the cast).
  Each zone of the area holds the asset (``spell_entangle``, ``spell_web``): difficult
  terrain for everyone (``zonekeep_movement_surcharges``); a creature that fails the
  save (Strength, Dexterity) is ``restrained``, a condition that hangs on the asset. Web
  also catches a creature that enters it during its own turn or starts its turn in it;
  fire aimed at a webbed zone burns the webs away. A restrained creature spends its
  action on ``break_free``: a Strength check against the caster's DC. A creature moved
  out of the asset's zone is free of it.
- **Spiritual weapon** (``how="weapon"``): a bonus action places the spectral weapon
  (``spell_spiritual_weapon``) in a zone within 60 ft and makes a melee spell attack
  against a creature there (1d8 + the spellcasting modifier, force; +1d8 per two slot
  levels above 2nd). The weapon lasts a minute (the caster's ``spiritual-weapon``
  condition, 10 rounds) or until cast again; ``spiritual_weapon`` (a bonus action) moves
  it up to 20 ft (to a zone whose path from the weapon's zone is 20 ft or less) and
  attacks again. The weapon is not a creature: its attack engages nobody and sets off
  no melee trigger against the caster.
- **Spirit guardians** (``how="aura"``): an aura in the caster's zone that moves with
  it (the asset, ``spell_spirit_guardians``, is placed anew where the caster enters).
  A creature of another side (the caster spares its allies) that enters the caster's
  zone on its turn or starts its turn there makes a Wisdom save: 3d8 radiant, half on
  a success, +1d8 per slot above 3rd; once per turn per caster (an evil caster's
  necrotic spirits are the GM's: creatures have no alignment). The zone is difficult
  terrain for those creatures (their speed is halved).
- **Moonbeam** and **flaming sphere** (``how="hazard"``): an asset in a zone in range,
  under concentration. The beam hurts a creature entering its zone on its own turn or
  starting its turn there (a Constitution save, 2d10 radiant, half on a success, once a
  turn); ``move_moonbeam`` (an action) moves it 60 ft. The sphere hurts a creature
  ending its turn in its zone (a Dexterity save, 2d6 fire, half on a success);
  ``move_sphere`` (a bonus action) rolls it 30 ft and rams a creature there (the save).
- **Stinking cloud** (``how="cloud"``): a 20-ft-radius sphere aimed at a zone in range,
  as an area (it spills into linked zones when larger than the zone), under
  concentration; every zone of it holds the cloud (``spell_stinking_cloud``). A creature
  that starts its turn in it makes a Constitution save against poison, or spends its
  action that turn retching (``action_taken`` of its action, ``stinking cloud``); a
  creature immune to poison damage or to being poisoned succeeds without rolling (the
  rules do not know which creatures need no breath). Two clouds over one zone ask for
  one save, against the higher DC. That the cloud heavily obscures its zones is the GM's.
- **Call lightning** (``how="storm"``): the storm cloud (``spell_call_lightning``) forms
  over the caster's zone, under concentration, and a bolt strikes at once: a zone within
  60 ft of the cloud's (the caster's sight decides, as for any zone aimed at), the
  creatures there as an area's targets (a 5-ft-radius cylinder, the table's maximum,
  which the caster fills while creatures remain), a Dexterity save, 3d10 lightning,
  half on a success, +1d10 per slot level above 3rd, one roll for all. Each later turn,
  ``call_lightning`` (an action) calls another bolt, from the cloud where it formed
  (the caster may walk away from it). The storm's stronger bolts outdoors in a storm
  are the GM's.

A hidden caster's assets are hidden, and unnamed, too; the assets go by the rules'
own hand (``change_asset(..., by_rule=True)``), whoever sent the command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from zonekeep.sdk import (
    ActionTaken,
    Asset,
    AssetRemoved,
    AssetTagSpec,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionSpec,
    Creature,
    EffectEnded,
    EncounterState,
    MoveRequest,
    Param,
    ResourceSpent,
    RollRequest,
    RuleContext,
    ZoneAffected,
    ability_check,
    apply_damage,
    apply_timed_condition,
    change_asset,
    hookimpl,
    path_distance,
    place_asset,
    saving_throw,
)

from . import (
    CONCENTRATING,
    Spell,
    _ability_mod,
    _area_targets,
    _zone_reach,
    area_most,
    area_zones,
    attack_bonus,
    begin_concentration,
    save_dc,
    upcast_dice,
)
from .catalog import SPELLS

__all__ = [
    "GUARDIANS",
    "HAZARDS",
    "SNARES",
    "SPIRITUAL_WEAPON",
    "WEAPON_MOVE",
    "spell_assets",
    "zones_asset_tags",
    "zones_commands",
    "zones_conditions",
    "zones_effect_ended",
    "zones_movement_surcharges",
    "zones_turn_end",
    "zones_turn_start",
    "zones_zone_affected",
    "zones_zone_entered",
]

#: The asset tag of each spell that places an asset.
SNARES: Final[dict[str, str]] = {"entangle": "spell_entangle", "web": "spell_web"}
WEAPON_TAG = "spell_spiritual_weapon"
GUARDIANS_TAG = "spell_spirit_guardians"
CLOUD_TAG = "spell_stinking_cloud"
STORM_TAG = "spell_call_lightning"
#: How far from the storm cloud's zone a bolt may strike, in feet (its radius).
STORM_REACH = 60
#: The hazards a caster places and moves: the tag, the command moving it, how far it
#: moves, and when it hurts (``enter``: entering on one's turn or starting a turn in
#: its zone; ``end``: ending a turn there).
HAZARDS: Final[dict[str, tuple[str, str, int, str]]] = {
    "moonbeam": ("spell_moonbeam", "move_moonbeam", 60, "enter"),
    "flaming-sphere": ("spell_flaming_sphere", "move_sphere", 30, "end"),
}
_TAGS: Final = (
    *SNARES.values(),
    WEAPON_TAG,
    GUARDIANS_TAG,
    CLOUD_TAG,
    STORM_TAG,
    *(tag for tag, _command, _feet, _when in HAZARDS.values()),
)
#: The condition a caster of spiritual weapon has while its weapon lasts.
SPIRITUAL_WEAPON = "spiritual-weapon"
#: The condition a caster of spirit guardians has while they last.
GUARDIANS = "spirit-guardians"
#: How far the spiritual weapon moves with each bonus action.
WEAPON_MOVE = 20
#: The resource on a creature: the turn the spirit guardians last hurt it.
_GUARDED = "guardians-turn"


_TAGSET: Final = frozenset(
    (
        "spell_entangle",
        "spell_web",
        "spell_spiritual_weapon",
        "spell_spirit_guardians",
        "spell_moonbeam",
        "spell_flaming_sphere",
        "spell_stinking_cloud",
        "spell_call_lightning",
    )
)


def _none_placed(state: EncounterState) -> bool:
    """Whether no asset of these spells is in the arena: the hooks' fast way out (they
    run on every move and turn), in plain loops, with no call per asset."""
    for asset in state.arena.assets:
        for tag in asset.tags:
            if tag in _TAGSET:
                return False
    return True


#: A spell asset's name when its caster is hidden (the saves and the log name it).
_PLAIN_NAMES: Final = {
    "spell_spiritual_weapon": "A spiritual weapon",
    "spell_spirit_guardians": "Spirit guardians",
    "spell_moonbeam": "A moonbeam",
    "spell_flaming_sphere": "A flaming sphere",
    "spell_stinking_cloud": "A stinking cloud",
    "spell_call_lightning": "A storm cloud",
}


def _place(ctx: RuleContext, me: Creature, asset: Asset) -> Asset:
    """Place a spell's asset: hidden from the players while its caster is hidden (its
    data and, for the guardians, its zone would give the caster away), and then named
    without the caster's name."""
    hidden = ctx.state.creatures[me.id].hidden
    plain = next((_PLAIN_NAMES[t] for t in asset.tags if t in _PLAIN_NAMES), None)
    if hidden and plain is not None:
        asset = attrs.evolve(asset, name=plain, description="")
    return place_asset(ctx, asset, hidden=hidden)


def _move(ctx: RuleContext, me: Creature, asset: Asset, zone: str) -> Asset:
    """Move ``me``'s spell asset to ``zone``: taken away, then placed there again as
    :func:`_place` places it."""
    change_asset(ctx, asset.id, remove=True, reason="moved", by_rule=True)
    moved = Asset(
        asset.id,
        asset.name,
        asset.kind,
        zone,
        description=asset.description,
        tags=asset.tags,
        data=dict(asset.data),
    )
    return _place(ctx, me, moved)


def spell_assets(state: EncounterState, tag: str, zone: str | None = None) -> list[Asset]:
    """The runtime assets with ``tag`` (in ``zone``, when given)."""
    found = state.arena.assets if zone is None else state.assets_in(zone)
    return [a for a in found if tag in a.tags]


def _turn_stamp(state: EncounterState) -> int:
    """A number naming the current turn (0 outside a turn)."""
    if state.active is None:
        return 0
    return state.round * 10_000 + (state.turn_slot + 1) * 100 + state.turn_member + 1


# -- casting ----------------------------------------------------------------------------------


def _aimed_zone(ctx: RuleContext, me: Creature, spell: Spell, p: Mapping[str, Any]) -> str:
    zone = p.get("zone")
    arena = ctx.state.arena
    if not isinstance(zone, str) or not arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"{spell.name} needs the zone to aim it at (zone).")
    _zone_reach(ctx, me, zone, spell.range, spell, arena.zone(zone).name)
    return zone


def _snare(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Entangle or web: the asset in every zone of the area, a save for each target."""
    assert spell.shape is not None and spell.save is not None
    zone = _aimed_zone(ctx, me, spell, p)
    affected = area_zones(ctx, spell, zone)
    chosen = _area_targets(ctx, me, spell, affected, area_most(ctx, spell), p)
    if p.get("push") is not None:
        ctx.refuse("invalid_params", f"{spell.name} pushes no one.")
    effect = begin_concentration(ctx, me, spell)
    dc = save_dc(me)
    placed = {
        z: _place(
            ctx,
            me,
            Asset(
                f"{spell.id}-{z}",
                spell.name,
                "terrain",
                z,
                description=f"{spell.name} cast by {me.name}: difficult terrain; a creature "
                f"caught makes a {spell.save.upper()} save (DC {dc}) or is restrained.",
                tags=(SNARES[spell.id],),
                data={
                    "spell": spell.id,
                    "caster": me.id,
                    "dc": dc,
                    "save": spell.save,
                    "effect": effect,
                },
            ),
        )
        for z in affected
    }
    for target in chosen:
        now = ctx.state.creatures[target.id]
        if now.zone in placed:
            _catch(ctx, now, placed[now.zone])


def _catch(ctx: RuleContext, creature: Creature, asset: Asset) -> None:
    """``creature`` saves against the snare ``asset`` or is restrained by it."""
    if creature.out_of_fight or _held_by(ctx.state, creature.id, asset.id):
        return
    save, dc = str(asset.data["save"]), int(asset.data["dc"])
    if saving_throw(ctx, creature, save, dc, asset.name, against=("restrained",), magical=True):
        return
    apply_timed_condition(
        ctx, creature.id, "restrained", source=str(asset.data["caster"]), parent=asset.id
    )


def _held_by(state: EncounterState, creature_id: str, asset_id: str | None = None) -> list[str]:
    """The ids of the condition effects restraining ``creature_id`` that hang on a snare
    (``asset_id``: on that one)."""
    snares = {a.id for tag in SNARES.values() for a in spell_assets(state, tag)}
    return [
        e.id
        for e in state.condition_effects.values()
        if e.creature == creature_id
        and e.condition == "restrained"
        and e.parent in snares
        and (asset_id is None or e.parent == asset_id)
    ]


def _weapon_attack(ctx: RuleContext, me: Creature, weapon: Asset, target: Creature) -> None:
    """The weapon's melee spell attack: rolled as the caster's, with no engagement (the
    weapon, not the caster, strikes)."""
    if target.out_of_fight:
        ctx.refuse("invalid_target", f"{target.name} is already out of the fight.")
    if target.id == me.id:
        ctx.refuse("invalid_target", f"{me.name} cannot strike itself with {weapon.name}.")
    if target.zone != weapon.zone:
        ctx.refuse(
            "out_of_range",
            f"{target.name} is not in {ctx.state.arena.zone(weapon.zone).name}, where "
            f"{weapon.name} is.",
        )
    attack = Attack(
        weapon.name,
        "melee",
        attack_bonus(me),
        str(weapon.data["dice"]),
        "force",
        magical=True,
    )
    request = RollRequest("attack", me.id, target.id, attack_kind="melee", attack=attack.name)
    result = ctx.roll("d20", request, bonus=attack.bonus)
    bonuses = ctx.hook.zonekeep_armor_class_bonus(
        ctx=ctx, target=target, attacker=me, attack=attack
    )
    ac = target.ac + sum(b for b in bonuses if b)
    critical = result.natural == 20
    hit = critical or (result.natural != 1 and result.total >= ac)
    ctx.emit(AttackMade(me.id, target.id, attack.name, "melee", result, ac, hit, critical, False))
    if hit:
        damage = ctx.roll(attack.damage, double_dice=critical)
        apply_damage(
            ctx,
            target,
            damage.total,
            damage_type="force",
            roll=damage,
            source=me.id,
            attacker=me.id,
            attack=attack.name,
            critical=critical,
        )


def _weapon_dice(me: Creature, spell: Spell, slot: int) -> str:
    dice = 1 + (slot - spell.level) // 2  # +1d8 per two slot levels above 2nd
    mod = _ability_mod(me)
    return f"{dice}d8" + (f"{mod:+d}" if mod else "")


def _weapon(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Spiritual weapon: the weapon in a zone in range, and its first attack."""
    target = ctx.creature(p["target"], role="target") if p.get("target") is not None else None
    if p.get("targets") or p.get("push") is not None:
        ctx.refuse("invalid_params", f"{spell.name} takes a zone and one target at most.")
    given = dict(p)
    if given.get("zone") is None and target is not None:
        given["zone"] = target.zone
    zone = _aimed_zone(ctx, me, spell, given)
    if target is not None and target.zone != zone:
        ctx.refuse("out_of_range", f"{target.name} is not in the zone the weapon appears in.")
    for old in spell_assets(ctx.state, WEAPON_TAG):
        if old.data.get("caster") == me.id:
            _end_effect(ctx, str(old.data["effect"]), f"{me.name} cast {spell.name} again")
    effect = apply_timed_condition(
        ctx, me.id, SPIRITUAL_WEAPON, rounds=spell.rounds, source=me.id, override=True
    )
    assert effect is not None
    weapon = _place(
        ctx,
        me,
        Asset(
            f"spiritual-weapon-{me.id}",
            f"{me.name}'s spiritual weapon",
            "element",
            zone,
            description="A floating spectral weapon: its caster moves it 20 ft and strikes "
            "with it as a bonus action.",
            tags=(WEAPON_TAG,),
            data={"caster": me.id, "dice": _weapon_dice(me, spell, slot), "effect": effect},
        ),
    )
    if target is not None:
        _weapon_attack(ctx, ctx.state.creatures[me.id], weapon, ctx.state.creatures[target.id])


def _aura(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Spirit guardians: the aura in the caster's zone, under concentration."""
    if p.get("target") is not None or p.get("targets") or p.get("push") is not None:
        ctx.refuse("invalid_params", f"{spell.name} surrounds its caster: it takes no target.")
    if p.get("zone") not in (None, me.zone):
        ctx.refuse("invalid_params", f"{spell.name} surrounds its caster, in its own zone.")
    if me.zone is None:
        ctx.refuse("out_of_range", f"{me.name} is in no zone.")
    concentration = begin_concentration(ctx, me, spell)
    effect = apply_timed_condition(
        ctx, me.id, GUARDIANS, source=me.id, parent=concentration, override=True
    )
    assert effect is not None
    _place_guardians(
        ctx,
        me,
        me.zone,
        {
            "caster": me.id,
            "dc": save_dc(me),
            "dice": upcast_dice(spell, slot),
            "damage_type": spell.damage_type,
            "effect": concentration,
        },
    )


def _place_guardians(ctx: RuleContext, me: Creature, zone: str, data: Mapping[str, Any]) -> None:
    _place(
        ctx,
        me,
        Asset(
            f"spirit-guardians-{me.id}",
            f"{me.name}'s spirit guardians",
            "element",
            zone,
            description=f"Spirits around {me.name}: its foes here are slowed, and one that "
            f"enters or starts its turn here makes a Wisdom save (DC {data['dc']}) or takes "
            f"{data['dice']} {data['damage_type']} (half on a success).",
            tags=(GUARDIANS_TAG,),
            data=dict(data),
        ),
    )


def _guardians_of(state: EncounterState, creature: Creature) -> list[tuple[Creature, Asset]]:
    """The spirit guardians whose caster shares ``creature``'s zone and is its foe."""
    found = []
    for asset in spell_assets(state, GUARDIANS_TAG):
        caster = state.creatures.get(str(asset.data.get("caster")))
        if caster is None or caster.zone is None or caster.zone != creature.zone:
            continue
        if caster.side != creature.side and caster.id != creature.id:
            found.append((caster, asset))
    return found


def _guard(ctx: RuleContext, creature: Creature) -> None:
    """Each spirit guardians around ``creature`` hurts it, once per turn."""
    stamp = _turn_stamp(ctx.state)
    for _caster, asset in _guardians_of(ctx.state, creature):
        now = ctx.state.creatures[creature.id]
        if now.out_of_fight or (stamp and now.resources.get(_GUARDED) == stamp):
            return  # the same spell cast twice does not add up: one hurts it per turn
        if stamp:
            ctx.emit(ResourceSpent(now.id, _GUARDED, stamp))
        now = ctx.state.creatures[creature.id]
        ok = saving_throw(ctx, now, "wis", int(asset.data["dc"]), asset.name, magical=True)
        roll = ctx.roll(str(asset.data["dice"]))
        amount = roll.total // 2 if ok else roll.total
        apply_damage(
            ctx,
            ctx.state.creatures[now.id],
            amount,
            damage_type=str(asset.data["damage_type"]),
            roll=roll,
            source=str(asset.data["caster"]),
        )


def _hazard(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Moonbeam, flaming sphere: the hazard placed in a zone in range, under concentration;
    no save on the cast."""
    if p.get("target") is not None or p.get("targets") or p.get("push") is not None:
        ctx.refuse("invalid_params", f"{spell.name} is aimed at a zone (zone), not a creature.")
    zone = _aimed_zone(ctx, me, spell, p)
    assert spell.save is not None
    tag, command, feet, when = HAZARDS[spell.id]
    effect = begin_concentration(ctx, me, spell)
    dice = upcast_dice(spell, slot)
    dc = save_dc(me)
    _place(
        ctx,
        me,
        Asset(
            f"{spell.id}-{me.id}",
            f"{me.name}'s {spell.name.lower()}",
            "element",
            zone,
            description=f"{spell.name}: a {spell.save.upper()} save (DC {dc}) or {dice} "
            f"{spell.damage_type} (half on a success) for a creature "
            + ("entering or starting its turn here" if when == "enter" else "ending its turn here")
            + f"; {command} moves it {feet} ft.",
            tags=(tag,),
            data={
                "spell": spell.id,
                "caster": me.id,
                "dc": dc,
                "save": spell.save,
                "dice": dice,
                "damage_type": spell.damage_type,
                "effect": effect,
            },
        ),
    )


def _cloud(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Stinking cloud: the cloud in every zone of the area, under concentration; no save
    on the cast (a creature saves when its turn starts there)."""
    assert spell.shape is not None and spell.save is not None
    if p.get("target") is not None or p.get("targets") or p.get("push") is not None:
        ctx.refuse("invalid_params", f"{spell.name} is aimed at a zone (zone), not a creature.")
    zone = _aimed_zone(ctx, me, spell, p)
    affected = area_zones(ctx, spell, zone)
    effect = begin_concentration(ctx, me, spell, slot)
    dc = save_dc(me)
    for z in affected:
        _place(
            ctx,
            me,
            Asset(
                f"{spell.id}-{me.id}-{z}",
                f"{me.name}'s {spell.name.lower()}",
                "element",
                z,
                description=f"{spell.name}: a creature starting its turn here makes a "
                f"{spell.save.upper()} save (DC {dc}) against poison or spends its action "
                "retching.",
                tags=(CLOUD_TAG,),
                data={
                    "spell": spell.id,
                    "caster": me.id,
                    "dc": dc,
                    "save": spell.save,
                    "effect": effect,
                },
            ),
        )


def _storm(ctx: RuleContext, me: Creature, spell: Spell, slot: int, p: Mapping[str, Any]) -> None:
    """Call lightning: the storm cloud over the caster's zone, then the first bolt."""
    assert me.zone is not None and spell.save is not None
    if p.get("push") is not None:
        ctx.refuse("invalid_params", f"{spell.name} pushes no one.")
    dice = upcast_dice(spell, slot)
    dc = save_dc(me)
    storm = Asset(
        f"{spell.id}-{me.id}",
        f"{me.name}'s storm cloud",
        "element",
        me.zone,
        description=f"{spell.name}: a storm cloud; its caster's action calls a bolt down on a "
        f"zone within {STORM_REACH} ft ({spell.save.upper()} save DC {dc}, {dice} "
        f"{spell.damage_type}, half on a success).",
        tags=(STORM_TAG,),
        data={
            "spell": spell.id,
            "caster": me.id,
            "dc": dc,
            "save": spell.save,
            "dice": dice,
            "damage_type": spell.damage_type,
        },
    )
    _bolt(ctx, me, storm, spell, p, check_only=True)  # refused before anything is spent
    effect = begin_concentration(ctx, me, spell, slot)
    placed = _place(ctx, me, attrs.evolve(storm, data={**storm.data, "effect": effect}))
    _bolt(ctx, ctx.state.creatures[me.id], placed, spell, p)


def _bolt(
    ctx: RuleContext,
    me: Creature,
    storm: Asset,
    spell: Spell,
    p: Mapping[str, Any],
    *,
    check_only: bool = False,
) -> None:
    """A bolt from ``storm`` on the zone ``p["zone"]``: the area's targets save, one roll
    hurts them (half on a success). ``check_only``: only the checks that may refuse."""
    assert spell.shape is not None
    zone = p.get("zone")
    arena = ctx.state.arena
    if not isinstance(zone, str) or not arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"{spell.name} needs the zone a bolt strikes (zone).")
    name = arena.zone(zone).name
    far = 0 if zone == storm.zone else path_distance(arena, storm.zone, zone)
    if far is None or far > STORM_REACH:
        ctx.refuse(
            "out_of_range",
            f"{name} is not under the storm cloud: a bolt strikes within {STORM_REACH} ft of "
            f"{arena.zone(storm.zone).name}.",
        )
    _zone_reach(ctx, me, zone, spell.range + STORM_REACH, spell, name)  # in the caster's sight
    chosen = _area_targets(ctx, me, spell, area_zones(ctx, spell, zone), area_most(ctx, spell), p)
    if check_only:
        return
    save, dc = str(storm.data["save"]), int(storm.data["dc"])
    outcomes = [(t, saving_throw(ctx, t, save, dc, spell.name, magical=True)) for t in chosen]
    if not outcomes:
        return
    roll = ctx.roll(str(storm.data["dice"]))  # one roll for every target
    for target, ok in outcomes:
        now = ctx.state.creatures[target.id]
        amount = roll.total // 2 if ok else roll.total
        if amount > 0 and not now.out_of_fight:
            apply_damage(ctx, now, amount, damage_type=spell.damage_type, roll=roll, source=me.id)


def _my_storm(state: EncounterState, me: Creature) -> Asset | None:
    if _none_placed(state):
        return None
    return next((a for a in spell_assets(state, STORM_TAG) if a.data.get("caster") == me.id), None)


def _has_storm(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _my_storm(state, me) is None:
        return ("no_such_feature", f"{me.name} has no storm cloud: cast call-lightning first.")
    return None


def _call_lightning(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    storm = _my_storm(ctx.state, me)
    if storm is None:
        ctx.refuse("no_such_feature", f"{me.name} has no storm cloud: cast call-lightning first.")
    _bolt(ctx, me, storm, SPELLS["call-lightning"], p)


def _reel(ctx: RuleContext, creature: Creature) -> None:
    """``creature`` starts its turn in a stinking cloud: a Constitution save against
    poison (the highest DC of the clouds over its zone), or its action goes."""
    clouds = spell_assets(ctx.state, CLOUD_TAG, creature.zone)
    if not clouds:
        return
    cloud = max(clouds, key=lambda a: int(a.data["dc"]))
    if "poison" in creature.damage_immunities or "poisoned" in creature.condition_immunities:
        return  # immune to poison: it succeeds without rolling
    ok = saving_throw(
        ctx,
        creature,
        str(cloud.data["save"]),
        int(cloud.data["dc"]),
        cloud.name,
        against=("poisoned",),  # a save against poison (a dwarf's advantage)
        magical=True,
    )
    if not ok and ctx.state.active == creature.id and ctx.state.resources.actions > 0:
        ctx.emit(ActionTaken(creature.id, "stinking cloud", "action"))


def _hazards_in(state: EncounterState, zone: str | None, when: str) -> list[Asset]:
    return [
        a
        for tag, _command, _feet, hurts in HAZARDS.values()
        if hurts == when
        for a in spell_assets(state, tag, zone)
    ]


def _scorch(ctx: RuleContext, creature: Creature, asset: Asset, once: bool) -> None:
    """``creature`` saves against the hazard ``asset``: its damage, half on a success
    (``once``: not again this turn, as a resource on the creature says)."""
    now = ctx.state.creatures[creature.id]
    if now.out_of_fight:
        return
    stamp, key = _turn_stamp(ctx.state), f"{asset.data['spell']}-turn"
    if once and stamp:
        if now.resources.get(key) == stamp:
            return
        ctx.emit(ResourceSpent(now.id, key, stamp))
        now = ctx.state.creatures[creature.id]
    save, dc = str(asset.data["save"]), int(asset.data["dc"])
    ok = saving_throw(ctx, now, save, dc, asset.name, magical=True)
    roll = ctx.roll(str(asset.data["dice"]))
    apply_damage(
        ctx,
        ctx.state.creatures[now.id],
        roll.total // 2 if ok else roll.total,
        damage_type=str(asset.data["damage_type"]),
        roll=roll,
        source=str(asset.data["caster"]),
    )


def _has_hazard(spell_id: str) -> Any:
    tag = HAZARDS[spell_id][0]

    def requires(state: EncounterState, me: Creature) -> tuple[str, str] | None:
        if not _none_placed(state) and any(
            a.data.get("caster") == me.id for a in spell_assets(state, tag)
        ):
            return None
        return ("no_such_feature", f"{me.name} has no {spell_id.replace('-', ' ')} to move.")

    return requires


def _move_hazard(spell_id: str) -> Any:
    tag, _command, feet, _when = HAZARDS[spell_id]

    def handler(ctx: RuleContext, cmd: Command) -> None:
        p = cmd.params
        me = ctx.creature(p["creature"])
        asset = next(
            (a for a in spell_assets(ctx.state, tag) if a.data.get("caster") == me.id), None
        )
        if asset is None:
            ctx.refuse("no_such_feature", f"{me.name} has no {spell_id.replace('-', ' ')} to move.")
        zone = p.get("zone")
        arena = ctx.state.arena
        if not isinstance(zone, str) or not arena.has_zone(zone):
            ctx.refuse("unknown_zone", f"There is no zone {str(zone)[:60]!r} to move it to.")
        distance = 0 if zone == asset.zone else path_distance(arena, asset.zone, zone)
        if distance is None or distance > feet:
            far = "out of sight" if distance is None else f"{distance} ft away"
            ctx.refuse(
                "out_of_range", f"{arena.zone(zone).name} is {far}: {asset.name} moves {feet} ft."
            )
        target = ctx.creature(p["target"], role="target") if p.get("target") is not None else None
        if target is not None and spell_id != "flaming-sphere":
            ctx.refuse("invalid_params", f"{asset.name} rams no one: give only the zone.")
        if target is not None and (target.zone != zone or target.out_of_fight):
            ctx.refuse("out_of_range", f"{target.name} is not in {arena.zone(zone).name}.")
        if zone != asset.zone:
            asset = _move(ctx, me, asset, zone)
        if target is not None:
            _scorch(ctx, ctx.state.creatures[target.id], asset, once=False)

    return handler


# -- the commands -------------------------------------------------------------------------------


def _end_effect(ctx: RuleContext, effect_id: str, reason: str) -> None:
    effect = ctx.state.condition_effects.get(effect_id)
    if effect is not None:
        ctx.emit(ConditionEffectEnded(effect.id, effect.creature, effect.condition, reason))


def _snared(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if "restrained" not in me.conditions or not _held_by(state, me.id):
        return ("invalid_params", f"{me.name} is not restrained by entangle or web.")
    return None


def _break_free(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    held = _held_by(ctx.state, me.id)
    if not held:
        ctx.refuse("invalid_params", f"{me.name} is not restrained by entangle or web.")
    effect = ctx.state.condition_effects[held[0]]
    asset = ctx.state.asset(effect.parent or "")
    assert asset is not None
    dc = int(asset.data["dc"])
    check = ability_check(ctx, me, "str", dc=dc, source=asset.name)
    if check.success:
        for eid in _held_by(ctx.state, me.id, asset.id):
            _end_effect(ctx, eid, f"{me.name} broke free of {asset.name}")


def _my_weapon(state: EncounterState, me: Creature) -> Asset | None:
    return next((a for a in spell_assets(state, WEAPON_TAG) if a.data.get("caster") == me.id), None)


def _has_weapon(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _none_placed(state) or _my_weapon(state, me) is None:
        return (
            "no_such_feature",
            f"{me.name} has no spiritual weapon: cast spiritual-weapon first.",
        )
    return None


def _strike(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    me = ctx.creature(p["creature"])
    weapon = _my_weapon(ctx.state, me)
    if weapon is None:
        ctx.refuse(
            "no_such_feature", f"{me.name} has no spiritual weapon: cast spiritual-weapon first."
        )
    target = ctx.creature(p["target"], role="target") if p.get("target") is not None else None
    zone = p.get("zone") or weapon.zone
    arena = ctx.state.arena
    if not isinstance(zone, str) or not arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {str(zone)[:60]!r} to move the weapon to.")
    if zone != weapon.zone:
        distance = path_distance(arena, weapon.zone, zone)
        if distance is None or distance > WEAPON_MOVE:
            far = "out of its sight" if distance is None else f"{distance} ft away"
            ctx.refuse(
                "out_of_range",
                f"{arena.zone(zone).name} is {far} from the weapon: it moves {WEAPON_MOVE} ft.",
            )
    if target is not None and target.zone != zone:
        ctx.refuse("out_of_range", f"{target.name} is not in {arena.zone(zone).name}.")
    if target is not None and (target.out_of_fight or target.id == me.id):
        ctx.refuse("invalid_target", f"The weapon cannot strike {target.name}.")
    if zone != weapon.zone:
        weapon = _move(ctx, me, weapon, zone)
    if target is not None:
        _weapon_attack(ctx, ctx.state.creatures[me.id], weapon, ctx.state.creatures[target.id])


@hookimpl(specname="zonekeep_commands")
def zones_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "call_lightning",
            _call_lightning,
            "Action: call another bolt from your storm cloud (Call Lightning) down on a zone "
            "within 60 ft of it (zone), striking the creatures there (targets).",
            {
                "creature": Param("creature", True, "the caster"),
                "zone": Param("zone", True, "the zone the bolt strikes"),
                "targets": Param("creatures", False, "the creatures there it strikes"),
            },
            costs=("action",),
            requires=_has_storm,
        ),
        CommandSpec(
            "break_free",
            _break_free,
            "Action: a Strength check against the caster's spell DC to break free of "
            "entangle or web.",
            {"creature": Param("creature", True, "the restrained creature")},
            costs=("action",),
            requires=_snared,
        ),
        CommandSpec(
            "spiritual_weapon",
            _strike,
            "Bonus action: move your spiritual weapon up to 20 ft (zone) and strike a "
            "creature in its zone with a melee spell attack (target).",
            {
                "creature": Param("creature", True, "the caster"),
                "zone": Param("zone", False, "where the weapon moves (default: where it is)"),
                "target": Param("creature", False, "the creature it strikes, in that zone"),
            },
            costs=("bonus",),
            requires=_has_weapon,
        ),
        CommandSpec(
            "move_moonbeam",
            _move_hazard("moonbeam"),
            "Action: move your moonbeam up to 60 ft, to a zone (zone).",
            {
                "creature": Param("creature", True, "the caster"),
                "zone": Param("zone", True, "where the beam moves"),
            },
            costs=("action",),
            requires=_has_hazard("moonbeam"),
        ),
        CommandSpec(
            "move_sphere",
            _move_hazard("flaming-sphere"),
            "Bonus action: roll your flaming sphere up to 30 ft, to a zone (zone), and ram a "
            "creature there (target): its Dexterity save against the sphere's damage.",
            {
                "creature": Param("creature", True, "the caster"),
                "zone": Param("zone", True, "where the sphere rolls"),
                "target": Param("creature", False, "the creature it rams, in that zone"),
            },
            costs=("bonus",),
            requires=_has_hazard("flaming-sphere"),
        ),
    )


# -- the hooks ----------------------------------------------------------------------------------


@hookimpl(specname="zonekeep_conditions")
def zones_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            SPIRITUAL_WEAPON,
            "Spiritual Weapon: its spectral weapon floats in the arena; a bonus action "
            "moves it 20 ft and strikes (spiritual_weapon).",
            durations=("rounds", "until_removed"),
        ),
        ConditionSpec(
            GUARDIANS,
            "Spirit Guardians: its foes in its zone are slowed, and one that enters or "
            "starts its turn there makes a Wisdom save or takes the spirits' damage.",
            durations=("rounds", "until_removed"),
        ),
    )


@hookimpl(specname="zonekeep_asset_tags")
def zones_asset_tags() -> Iterable[AssetTagSpec]:
    return (
        AssetTagSpec(
            SNARES["entangle"],
            "Entangle: grasping plants, difficult terrain; restrained until the caster's "
            "concentration ends or the creature breaks free.",
        ),
        AssetTagSpec(
            SNARES["web"],
            "Web: sticky webs, difficult terrain; a creature entering or starting its turn "
            "in them saves or is restrained; fire burns them away.",
        ),
        AssetTagSpec(
            WEAPON_TAG, "Spiritual Weapon: its caster's spectral weapon (a bonus action strikes)."
        ),
        AssetTagSpec(
            GUARDIANS_TAG, "Spirit Guardians: spirits around their caster that hurt its foes."
        ),
        AssetTagSpec(
            HAZARDS["moonbeam"][0],
            "Moonbeam: a beam of pale light; a creature entering it or starting its turn in "
            "it makes a Constitution save or takes radiant damage (half on a success).",
        ),
        AssetTagSpec(
            STORM_TAG,
            "Call Lightning: a storm cloud; its caster's action calls down a bolt of "
            "lightning within 60 ft of it.",
        ),
        AssetTagSpec(
            CLOUD_TAG,
            "Stinking Cloud: nauseating gas; a creature starting its turn in it makes a "
            "Constitution save against poison or spends its action retching.",
        ),
        AssetTagSpec(
            HAZARDS["flaming-sphere"][0],
            "Flaming Sphere: a rolling ball of fire; a creature ending its turn beside it "
            "makes a Dexterity save or takes fire damage (half on a success).",
        ),
    )


@hookimpl(specname="zonekeep_movement_surcharges")
def zones_movement_surcharges(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> Iterable[str] | None:
    if _none_placed(ctx.state):
        return None
    zone = move.zone if move.kind == "enter" else creature.zone
    if zone is None:
        return None
    if any(spell_assets(ctx.state, tag, zone) for tag in SNARES.values()):
        return ["difficult"]
    for asset in spell_assets(ctx.state, GUARDIANS_TAG):
        caster = ctx.state.creatures.get(str(asset.data.get("caster")))
        if caster is not None and caster.zone == zone and caster.side != creature.side:
            return ["difficult"]
    return None


@hookimpl(specname="zonekeep_zone_entered")
def zones_zone_entered(ctx: RuleContext, creature: Creature, from_zone: str, forced: bool) -> None:
    if _none_placed(ctx.state):
        return
    # A creature moved out of a snare's zone is free of it.
    for eid in _held_by(ctx.state, creature.id):
        effect = ctx.state.condition_effects[eid]
        asset = ctx.state.asset(effect.parent or "")
        if asset is not None and asset.zone != creature.zone:
            _end_effect(ctx, eid, f"{creature.name} left {asset.name}")
    # The aura moves with its caster.
    for asset in spell_assets(ctx.state, GUARDIANS_TAG):
        if asset.data.get("caster") == creature.id and creature.zone is not None:
            data = dict(asset.data)
            change_asset(ctx, asset.id, remove=True, reason="moved with its caster", by_rule=True)
            _place_guardians(ctx, creature, creature.zone, data)
    now = ctx.state.creatures[creature.id]
    if now.zone is None or ctx.state.active != now.id:
        return  # web and spirit guardians catch a creature entering on its own turn
    for web in spell_assets(ctx.state, SNARES["web"], now.zone):
        _catch(ctx, ctx.state.creatures[now.id], web)
    _guard(ctx, ctx.state.creatures[now.id])
    for beam in _hazards_in(ctx.state, now.zone, "enter"):
        _scorch(ctx, ctx.state.creatures[now.id], beam, once=True)


@hookimpl(specname="zonekeep_turn_start")
def zones_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if creature.zone is None or creature.out_of_fight or _none_placed(ctx.state):
        return
    for web in spell_assets(ctx.state, SNARES["web"], creature.zone):
        _catch(ctx, ctx.state.creatures[creature.id], web)
    _guard(ctx, ctx.state.creatures[creature.id])
    for beam in _hazards_in(ctx.state, creature.zone, "enter"):
        _scorch(ctx, ctx.state.creatures[creature.id], beam, once=True)
    now = ctx.state.creatures[creature.id]
    if not now.out_of_fight:
        _reel(ctx, now)


@hookimpl(specname="zonekeep_turn_end")
def zones_turn_end(ctx: RuleContext, creature: Creature) -> None:
    if creature.zone is None or creature.out_of_fight or _none_placed(ctx.state):
        return
    for sphere in _hazards_in(ctx.state, creature.zone, "end"):
        _scorch(ctx, ctx.state.creatures[creature.id], sphere, once=False)


@hookimpl(specname="zonekeep_effect_ended")
def zones_effect_ended(
    ctx: RuleContext, ended: ConditionEffectEnded | EffectEnded | AssetRemoved
) -> None:
    """The assets hanging on an effect that ended go with it."""
    if not isinstance(ended, ConditionEffectEnded):
        return
    if ended.condition not in (CONCENTRATING, SPIRITUAL_WEAPON) or _none_placed(ctx.state):
        return
    for tag in _TAGS:
        for asset in spell_assets(ctx.state, tag):
            if asset.data.get("effect") == ended.effect:
                change_asset(ctx, asset.id, remove=True, reason=f"{asset.name} ended", by_rule=True)
    for effect in list(ctx.state.condition_effects.values()):
        if effect.parent == ended.effect and effect.condition == GUARDIANS:
            _end_effect(ctx, effect.id, "its concentration ended")


@hookimpl(specname="zonekeep_zone_affected")
def zones_zone_affected(ctx: RuleContext, effect: ZoneAffected) -> None:
    if effect.damage_type != "fire" or _none_placed(ctx.state):
        return
    for web in spell_assets(ctx.state, SNARES["web"], effect.zone):
        change_asset(ctx, web.id, remove=True, reason="burned away", by_rule=True)


RESOLVERS: Final = {
    "snare": _snare,
    "weapon": _weapon,
    "aura": _aura,
    "hazard": _hazard,
    "cloud": _cloud,
    "storm": _storm,
}
