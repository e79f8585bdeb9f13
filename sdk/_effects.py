"""Shared rule building blocks for plugins: damage, conditions, saves, positions, zone
changes, forced movement, and maneuvers (moves that may provoke reactions before each
step).

These are functions over a :class:`RuleContext`: they emit events and call the
hooks that let other plugins decide and react, exactly as the built-in rules do.
The decisions themselves are the plugins': what 0 hit points means
(``zonekeep_zero_hit_points``), who is offered an opportunity attack
(``zonekeep_opportunity_attackers``), what leaving a zone or a new condition ends
(``zonekeep_zone_leaving``, ``zonekeep_condition_applied``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import attrs

from ._arena import Asset, SaveEffect
from ._context import RollModifier, RollRequest, RuleContext
from ._damage import Damage, defend
from ._dice import RollRecord
from ._events import (
    ConditionApplied,
    ConditionEffect,
    ConditionEffectApplied,
    ConditionPrevented,
    Damaged,
    Decision,
    DecisionOpened,
    Maneuver,
    ManeuverEnded,
    ManeuverStarted,
    ManeuverUpdated,
    MovementSpent,
    PositionLeft,
    PositionTaken,
    SaveMade,
    SpaceShared,
    TempHpChanged,
    ZoneEntered,
)
from ._state import movement_left
from ._types import DYING, Creature
from ._vocabulary import ABILITIES

#: The decision kind of an offered opportunity attack.
OPPORTUNITY_ATTACK = "opportunity_attack"


def _nonmagical(ctx: RuleContext, damage: Damage) -> bool:
    """Whether ``damage`` comes from an attack whose ``magical`` is false."""
    if damage.attacker is None or damage.attack is None:
        return False
    attacker = ctx.state.creatures.get(damage.attacker)
    attack = attacker.attack(damage.attack) if attacker is not None else None
    return attack is not None and not attack.magical


def apply_damage(
    ctx: RuleContext,
    target: Creature,
    amount: int,
    *,
    damage_type: str = "",
    roll: RollRecord | None = None,
    source: str = "",
    attacker: str | None = None,
    attack: str | None = None,
    critical: bool = False,
    cuts: Iterable[tuple[str, int | None]] = (),
) -> Damaged:
    """Deal ``amount`` damage of ``damage_type`` (one of :data:`DAMAGE_TYPES`, or ``""``
    for untyped damage) to ``target``, through the damage pipeline, in this order:

    1. every ``zonekeep_modify_damage`` implementation, one after the other in hook
       order, each seeing the :class:`Damage` as the one before left it (add, reduce,
       convert, cancel, grant a defence);
    2. the target's immunity (``damage_immunities`` or a granted immunity; with an
       ``attacker``'s ``attack`` that is not ``magical``, also
       ``damage_immunities_nonmagical``, unless a plugin set the damage's
       ``nonmagical_overcome``): no damage;
    3. its resistance (likewise with ``damage_resistances_nonmagical``): halved, rounded
       down, once however many sources;
    4. its vulnerability: doubled, once.

    ``cuts`` come before all of them, in order, each a ``reduce`` step named by its
    source: ``(source, n)`` takes off ``n``, ``(source, None)`` halves (rounded down):
    what reactions to an attack did to its damage (an Uncanny Dodge, a Deflect
    Missiles; :class:`~zonekeep.sdk.ReactionOutcome`).

    Then the ``damaged`` event (the final ``amount``, the ``raw`` amount and type,
    every step) is emitted and returned; hit points stop at 0. A ``roll`` whose dice an
    event of the same command already recorded (one roll for several targets) is
    recorded once: the later events carry its dice without their ``draws``. When damage that is
    more than 0 leaves the target at 0 hit points (and the target is not already
    dying or out of the fight), the plugins say which condition it gets
    (``zonekeep_zero_hit_points``; the built-in rule: a PC is dying, an NPC
    defeated), applied with :func:`apply_condition`. Last the
    ``zonekeep_after_damage`` triggers see the final event. ``attacker``, ``attack``
    and ``critical`` tell the pipeline when an attack dealt it.
    """
    start = Damage(
        target.id,
        max(0, amount),
        damage_type,
        source,
        attacker=attacker,
        attack=attack,
        critical=critical,
    )
    for cut_source, cut in cuts:
        start = start.reduce(start.amount - start.amount // 2 if cut is None else cut, cut_source)
    damage: Damage = ctx.hook.zonekeep_modify_damage.pipe("damage", ctx=ctx, damage=start)
    now = ctx.state.creatures[target.id]
    immunities, resistances = now.damage_immunities, now.damage_resistances
    if (
        (now.damage_immunities_nonmagical or now.damage_resistances_nonmagical)
        and damage.nonmagical_overcome is None
        and _nonmagical(ctx, damage)
    ):
        # A nonmagical attack meets the defences "from nonmagical attacks" too.
        immunities = [*immunities, *now.damage_immunities_nonmagical]
        resistances = [*resistances, *now.damage_resistances_nonmagical]
    damage = defend(damage, immunities, resistances, now.damage_vulnerabilities)
    # Temporary hit points take the damage first (what is left goes on to hit points).
    absorbed = min(now.temp_hp, damage.amount) if now.temp_hp > 0 else 0
    if absorbed:
        ctx.emit(TempHpChanged(target.id, now.temp_hp - absorbed, "damage"))
    hp = max(0, now.hp - (damage.amount - absorbed))
    event = Damaged(
        target.id,
        damage.amount,
        hp,
        damage.damage_type,
        roll,
        source,
        raw=damage.raw,
        raw_type=damage.raw_type,
        steps=damage.steps,
    )
    ctx.emit(event)
    if (
        damage.amount > absorbed
        and hp == 0
        and not now.out_of_fight
        and DYING not in now.conditions
    ):
        after = ctx.state.creatures[target.id]
        condition = ctx.hook.zonekeep_zero_hit_points(ctx=ctx, creature=after)
        if condition is not None:
            apply_condition(ctx, target.id, condition, "reduced to 0 hit points")
    after = ctx.hook.zonekeep_after_damage
    if after.plan:
        after(ctx=ctx, creature=ctx.state.creatures[target.id], damage=event)
    return event


def gain_temp_hp(
    ctx: RuleContext,
    creature_id: str,
    amount: int,
    source: str = "",
    roll: RollRecord | None = None,
) -> int:
    """Give creature ``creature_id`` ``amount`` temporary hit points: they do not add up,
    the larger of its own and the new ones stay (``temp_hp_changed`` when they change).
    Damage takes them first (:func:`apply_damage`); healing does not restore them.
    ``roll``: the roll ``amount`` came from, recorded in the event (its dice in the log).
    Returns its temporary hit points now."""
    now = ctx.state.creatures[creature_id].temp_hp
    if amount > now:
        ctx.emit(TempHpChanged(creature_id, amount, source, roll))
        return amount
    return now


def _immune(ctx: RuleContext, creature: Creature, condition: str) -> bool:
    """Whether ``creature`` is immune to ``condition``: its own ``condition_immunities``,
    or a plugin's answer for the moment (``zonekeep_condition_immunity``)."""
    if condition in creature.condition_immunities:
        return True
    ask = ctx.hook.zonekeep_condition_immunity
    return bool(ask.plan and ask(ctx=ctx, creature=creature, condition=condition))


def apply_condition(
    ctx: RuleContext, creature_id: str, condition: str, source: str = "", *, override: bool = False
) -> bool:
    """Give a creature a condition: the ``condition_applied`` event (after which, if
    the creature did not have it, the ``zonekeep_condition_applied`` triggers run).
    A plugin's condition may be named short (``"burning"`` for ``"hazards.burning"``).

    A creature immune to the condition (``condition_immunities``, or a plugin's
    ``zonekeep_condition_immunity`` for the moment) is not given it:
    a ``condition_prevented`` event says so instead, unless ``override`` (the GM
    overruling the immunity explicitly): then it is given, and the event says
    ``override``. Returns whether it was applied.
    """
    condition = ctx.resolve("condition", condition)
    creature = ctx.state.creatures[creature_id]
    immune = _immune(ctx, creature, condition)
    if immune and not override:
        ctx.emit(ConditionPrevented(creature_id, condition, source))
        return False
    ctx.emit(ConditionApplied(creature_id, condition, source, immune))
    return True


def apply_timed_condition(
    ctx: RuleContext,
    creature_id: str,
    condition: str,
    *,
    rounds: int | None = None,
    until: Literal["start", "end"] | None = None,
    of: str | None = None,
    save: str | None = None,
    dc: int | None = None,
    save_when: Literal["start", "end"] = "end",
    source: str = "",
    parent: str | None = None,
    override: bool = False,
) -> str | None:
    """Give a creature a condition for a while: a condition effect, ended by the
    built-in ``zonekeep.durations`` rules at the first of

    - ``rounds`` running out (counted down at the end of every round: applied in
      round 1 for 2 rounds, it ends at the end of round 2);
    - the ``"start"`` or ``"end"`` (``until``) of the next turn of creature ``of``
      (default: the affected creature; applied during that creature's own turn, it
      waits for its *next* turn);
    - a successful ``save`` (an ability such as ``"con"``) against ``dc``, rolled by
      the affected creature at the start or end (``save_when``) of each of its turns;
    - its ``parent`` ending (concentration): another timed condition, or an ongoing
      area effect or an asset (the web that restrains), whose end ends it;
    - the GM ending it (``end_effect_of``).

    With none of these it lasts until removed. ``source`` says what caused it (a
    creature id for ``frightened``'s source). The ``condition_effect_applied``
    event is emitted (and ``zonekeep_condition_applied`` runs if the condition is
    new); returns the effect's id (``"c12"``), or ``None`` when the creature is
    immune (a ``condition_prevented`` event instead), unless ``override`` (the GM
    overruling the immunity explicitly; the event says so). Raises ``ValueError`` for
    arguments that make no sense (a plugin's bug, not a player's).
    """
    s = ctx.state
    if creature_id not in s.creatures:
        raise ValueError(f"there is no creature {creature_id!r}")
    if not condition.strip():
        raise ValueError("name the condition")
    condition = ctx.resolve("condition", condition)
    if rounds is not None and (isinstance(rounds, bool) or rounds < 1):
        raise ValueError(f"a condition lasts at least 1 round, not {rounds!r}")
    if until not in (None, "start", "end") or save_when not in ("start", "end"):
        raise ValueError("until and save_when are 'start' or 'end'")
    if of is not None and until is None:
        raise ValueError("'of' names whose turn ends it: give 'until' with it")
    if of is not None and of not in s.creatures:
        raise ValueError(f"there is no creature {of!r}")
    if save is not None and (save not in ABILITIES or dc is None or dc < 1):
        raise ValueError(f"a save names an ability ({', '.join(ABILITIES)}) and a DC of 1 or more")
    if save is None and dc is not None:
        raise ValueError("a dc goes with a save")
    if parent is not None and parent not in s.condition_effects and s.asset(parent) is None:
        raise ValueError(f"there is no condition effect, ongoing effect or asset {parent!r}")
    creature = s.creatures[creature_id]
    immune = _immune(ctx, creature, condition)
    if immune and not override:
        ctx.emit(ConditionPrevented(creature_id, condition, source))
        return None
    eid = f"c{s.seq + 1}"
    while eid in s.condition_effects:
        eid += "'"
    ctx.emit(
        ConditionEffectApplied(
            ConditionEffect(
                id=eid,
                creature=creature_id,
                condition=condition,
                source=source,
                rounds=rounds,
                until=until,
                until_creature=(of or creature_id) if until is not None else None,
                save=save,
                save_dc=dc,
                save_when=save_when,
                parent=parent,
                applied_round=s.round,
                applied_turn=s.active,
            ),
            immune,
        )
    )
    return eid


def saving_throw(
    ctx: RuleContext,
    creature: Creature,
    ability: str,
    dc: int,
    source: str,
    *,
    extra: tuple[RollModifier, ...] = (),
    against: tuple[str, ...] = (),
    magical: bool = False,
) -> bool:
    """Roll ``creature``'s saving throw against ``dc``; emit ``save_made``; return success.

    ``against`` (the conditions a failure would impose) and ``magical`` (a spell or
    another magical effect) reach the plugins' roll modifiers on the
    :class:`RollRequest`: a creature with advantage on saves against being knocked
    prone, or against magic, gets it only when the caller says so.

    When a plugin says it fails whatever the roll (``zonekeep_save_fails``: a paralyzed
    creature's Dexterity save), it is still rolled, for the record, and fails; the
    event names why (``automatic_failure``).
    """
    result = ctx.roll(
        "d20",
        RollRequest("save", creature.id, ability=ability, against=against, magical=magical),
        bonus=creature.saves.get(ability, 0),
        extra=extra,
    )
    fails = ctx.hook.zonekeep_save_fails(ctx=ctx, creature=creature, ability=ability) or ""
    success = not fails and result.total >= dc
    ctx.emit(SaveMade(creature.id, ability, result, dc, success, source, fails))
    return success


def asset_save(
    ctx: RuleContext, cid: str, save: SaveEffect, dc: int, asset: Asset, source: str
) -> bool:
    """Roll an asset's save for ``cid``; on a failure apply its damage and conditions.

    Returns whether the save succeeded.
    """
    if saving_throw(
        ctx, ctx.state.creatures[cid], save.ability, dc, source, against=tuple(save.conditions)
    ):
        return True
    if save.damage:
        dmg = ctx.roll(save.damage)
        apply_damage(
            ctx,
            ctx.state.creatures[cid],
            dmg.total,
            damage_type=save.damage_type,
            roll=dmg,
            source=asset.id,
        )
    for condition in save.conditions:
        if condition not in ctx.state.creatures[cid].conditions:
            apply_condition(ctx, cid, condition, asset.name)
    return False


def spend_half_speed(ctx: RuleContext, creature: Creature, why: str) -> None:
    """Spend half ``creature``'s speed on ``why`` ("Taking position at Table"), or refuse."""
    cost = creature.speed // 2
    left = movement_left(ctx.state, creature)
    if creature.speed <= 0 or cost > left:
        ctx.refuse(
            "not_enough_movement",
            f"{why} costs {cost} ft (half of {creature.speed} ft); {creature.name} has {left} ft left.",
        )
    ctx.emit(MovementSpent(creature.id, cost, why[0].lower() + why[1:]))


# -- positions -------------------------------------------------------------------------------


def take_position(
    ctx: RuleContext, creature: Creature, asset: Asset, *, forced: bool = False, by: str = ""
) -> None:
    """``creature`` takes position at a prop (leaving any other prop) or in an element/terrain."""
    current = creature.position
    if (
        asset.kind == "prop"
        and asset.id not in ctx.state.effects
        and current not in (None, asset.id)
    ):
        old = ctx.state.asset(current) if current else None
        if old is not None:
            leave_position(ctx, creature, old, "took position elsewhere")
    ctx.emit(PositionTaken(creature.id, asset.id, forced, by))
    ctx.hook.zonekeep_position_taken(
        ctx=ctx, creature=ctx.state.creatures[creature.id], asset=asset, forced=forced
    )


def leave_position(ctx: RuleContext, creature: Creature, asset: Asset, reason: str = "") -> None:
    """``creature`` leaves its position at or in ``asset``."""
    ctx.emit(PositionLeft(creature.id, asset.id, reason))
    ctx.hook.zonekeep_position_left(ctx=ctx, creature=ctx.state.creatures[creature.id], asset=asset)


def held_assets(ctx: RuleContext, creature: Creature) -> list[Asset]:
    """The prop and the elements/terrain ``creature`` holds a position at, in that order."""
    if not creature.position and not creature.elements:  # the usual case: none
        return []
    ids = ([creature.position] if creature.position else []) + list(creature.elements)
    return [a for a in (ctx.state.asset(i) for i in ids) if a is not None]


# -- zones ------------------------------------------------------------------------------------


def change_zone(
    ctx: RuleContext,
    creature: Creature,
    to_zone: str,
    *,
    cost: int = 0,
    forced: bool = False,
    by: str = "",
) -> None:
    """Move ``creature`` into ``to_zone``: leave the positions held in the old zone, run
    the ``zonekeep_zone_leaving`` triggers (the engagement rules end engagements and
    adjacency there, each with its event), then the ``zone_entered`` event and the
    ``zonekeep_zone_entered`` triggers."""
    from_zone = creature.zone or ""
    for asset in held_assets(ctx, creature):
        if asset.zone != to_zone:
            leave_position(ctx, creature, asset, "left the zone")
    ctx.hook.zonekeep_zone_leaving(
        ctx=ctx, creature=ctx.state.creatures[creature.id], to_zone=to_zone, forced=forced
    )
    ctx.emit(ZoneEntered(creature.id, from_zone, to_zone, cost, forced, by))
    ctx.hook.zonekeep_zone_entered(
        ctx=ctx, creature=ctx.state.creatures[creature.id], from_zone=from_zone, forced=forced
    )


def zone_room(ctx: RuleContext, creature: Creature, zone: str) -> tuple[str, str] | None:
    """A refusal ``(code, message)`` when ``creature`` may not come into ``zone`` (enter
    it, be forced or moved there, be added there); ``None`` when it may.

    The plugins decide (``zonekeep_zone_refusal``; the built-in rule of
    ``zonekeep.zones`` is the zone's capacity). Always ``None`` for a creature
    already there.
    """
    s = ctx.state
    if creature.id in s.creatures and s.creatures[creature.id].zone == zone:
        return None
    refusal = ctx.hook.zonekeep_zone_refusal(ctx=ctx, creature=creature, zone=zone)
    return None if refusal is None else (refusal.code, refusal.message)


# -- forced movement ----------------------------------------------------------------------------


def forcer_dc(forcer: Creature, magical: bool) -> int:
    """The DC a forcer imposes: its spell save DC for magic, its maneuver DC otherwise."""
    return forcer.spell_dc if magical else forcer.maneuver_dc


def force_move(
    ctx: RuleContext,
    forcer: Creature | None,
    target: Creature,
    *,
    zone: str | None = None,
    asset: str | None = None,
    into: str | None = None,
    magical: bool = False,
) -> None:
    """Forcibly move ``target`` (docs/rules.md, A6); no movement is spent.

    - ``zone``: an adjacent zone joined by a clear path;
    - ``asset``: an asset (in the target's zone, or in ``zone``): it counts as taking
      position there, and the asset's forced effect makes the target save against
      the forcer's maneuver DC (spell save DC when ``magical``); the asset's own DC
      only when nobody forced the move (``forcer`` is ``None``: a trap, a fall);
    - ``into``: another creature in the same zone, whose space the target now shares.

    Refuses (``invalid_params``, ``no_clear_path``, ``unknown_zone``, ``zone_full``)
    with a sentence when the destination is not allowed, or when nobody forced the
    move into an asset whose forced effect has no DC of its own.
    """
    s = ctx.state
    if zone is None and asset is None and into is None:
        ctx.refuse(
            "invalid_params", "Say where the creature is forced: a zone, an asset or a creature."
        )
    here = target.zone or ""
    if zone is not None and zone != here:
        if not s.arena.has_zone(zone):
            ctx.refuse("unknown_zone", f"There is no zone {zone!r}.")
        links = s.arena.links_between(here, zone)
        if not any(link.clear for link in links):
            ctx.refuse(
                "no_clear_path",
                f"{target.name} can only be forced into an adjacent zone with a clear path; "
                f"there is none from {s.arena.zone(here).name} to {s.arena.zone(zone).name}.",
            )
        full = zone_room(ctx, target, zone)
        if full:
            ctx.refuse(*full)
    dest_zone = zone or here
    chosen: Asset | None = None
    if asset is not None:
        chosen = s.asset(asset)
        if chosen is None or chosen.zone != dest_zone:
            ctx.refuse(
                "invalid_params", f"There is no asset {asset!r} where {target.name} would land."
            )
    other: Creature | None = None
    if into is not None:
        other = ctx.creature(into)
        if other.id == target.id or other.zone != dest_zone:
            ctx.refuse(
                "invalid_target",
                f"{target.name} can only be forced into a creature in the same zone.",
            )
    dc: int | None = None
    if chosen is not None and chosen.forced is not None:
        dc = forcer_dc(forcer, magical) if forcer is not None else chosen.forced.save.dc
        if dc is None:
            ctx.refuse(
                "invalid_params",
                f"{chosen.name} has no DC of its own: name the creature that forced "
                f"{target.name} into it, whose DC applies.",
            )
    by = forcer.id if forcer is not None else ctx.actor.id
    if dest_zone != here:
        change_zone(ctx, target, dest_zone, forced=True, by=by)
    if other is not None:
        ctx.emit(SpaceShared(target.id, other.id, by))
    if chosen is not None:
        take_position(ctx, ctx.state.creatures[target.id], chosen, forced=True, by=by)
        if chosen.forced is not None and dc is not None:
            save = chosen.forced.save
            how = f"forced into {chosen.name}" if forcer is not None else f"fell into {chosen.name}"
            asset_save(ctx, target.id, save, dc, chosen, how)


# -- maneuvers --------------------------------------------------------------------------------


def start_maneuver(ctx: RuleContext, maneuver: Maneuver) -> None:
    """Begin a maneuver and run it as far as it goes before a reaction is awaited."""
    ctx.emit(ManeuverStarted(maneuver))
    run_maneuver(ctx)


def reactions_pending(ctx: RuleContext) -> bool:
    """Whether a reaction is awaited: an opportunity attack offered, or a reaction
    decision that interrupted something (:func:`~zonekeep.sdk.offer_reaction`)."""
    return any(d.kind == OPPORTUNITY_ATTACK or d.trigger is not None for d in ctx.state.pending)


def run_maneuver(ctx: RuleContext) -> None:
    """Advance the current maneuver: offer reactions before each step, then perform it.

    Before each step the plugins say who is offered an opportunity attack
    (``zonekeep_opportunity_attackers``); each gets an ``opportunity_attack``
    decision. The step itself is performed by ``zonekeep_maneuver_step``.

    Stops while opportunity-attack decisions are pending; resumes when called
    again after they are resolved. A mover that can no longer move (dropped,
    incapacitated) stops where it is.
    """
    while (m := ctx.state.maneuver) is not None:
        if reactions_pending(ctx):
            return
        mover = ctx.state.creatures[m.creature]
        if mover.incapacitated or mover.out_of_fight:
            ctx.emit(ManeuverEnded(m.creature, False, f"{mover.name} can no longer move"))
            return
        if not m.offered:
            answer = ctx.hook.zonekeep_opportunity_attackers(ctx=ctx, creature=mover, maneuver=m)
            reactors = [
                r for r in dict.fromkeys(answer or ()) if r in ctx.state.creatures and r != mover.id
            ]
            ctx.emit(ManeuverUpdated(attrs.evolve(m, offered=True)))
            for rid in reactors:
                _offer(ctx, ctx.state.creatures[rid], mover, m)
            if reactors:
                return
            continue
        done = ctx.hook.zonekeep_maneuver_step(ctx=ctx, maneuver=m)
        if not done:
            ctx.emit(ManeuverEnded(m.creature, False, f"no rule performs a {m.kind!r} step"))
            return
        current = ctx.state.maneuver
        if current is None:
            return
        if current.step + 1 >= len(current.steps):
            ctx.emit(ManeuverEnded(m.creature, True))
            return
        ctx.emit(ManeuverUpdated(attrs.evolve(current, step=current.step + 1, offered=False)))


def describe_step(ctx: RuleContext, m: Maneuver) -> str:
    """A few words for what the maneuver's next step is ("leaving the Common Room")."""
    s = ctx.state
    mover = s.creatures[m.creature]
    target = m.steps[m.step] if m.step < len(m.steps) else ""
    if m.kind == "enter":
        here = mover.zone or ""
        name = s.arena.zone(here).name if s.arena.has_zone(here) else here
        return f"leaving {name}"
    if m.kind in ("take_position", "leave_position"):
        asset = s.asset(target)
        verb = "taking position at" if m.kind == "take_position" else "leaving its position at"
        return f"{verb} {asset.name if asset else target}"
    if target in s.creatures:
        name = s.creatures[target].name
        return f"moving next to {name}" if m.kind == "adjacent" else f"leaving {name}'s reach"
    return m.kind


def _offer(ctx: RuleContext, reactor: Creature, mover: Creature, m: Maneuver) -> None:
    # The prompt names the weapon the attack is made with: the reactor's first melee
    # attack, the one the engagement rules swing when the offer is taken.
    weapon = next((a.name for a in reactor.attacks if a.kind == "melee"), None)
    with_weapon = f" with {weapon}" if weapon else ""
    ctx.emit(
        DecisionOpened(
            Decision(
                id=ctx.next_decision_id(),
                kind=OPPORTUNITY_ATTACK,
                controller=reactor.controller,
                prompt=(
                    f"{reactor.name} may make an opportunity attack{with_weapon} against "
                    f"{mover.name}, who is {describe_step(ctx, m)}."
                ),
                options=("attack", "decline"),
                default=("decline",),
                creature=reactor.id,
            )
        )
    )
