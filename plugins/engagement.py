"""Engagement and opportunity attacks (docs/rules.md, A3 and A4).

- A melee attack engages the attacker and its target. A creature that entered a
  zone this turn with its action still unused may engage an enemy there at once
  (``engage``); leaving a position to engage costs nothing extra.
- A creature can be engaged by only as many enemies as fit around it
  [``size_limits``]: room 8/12/16/20 squares by size, each engager taking 1-4.
- Ranged attacks against an enemy you are engaged with have disadvantage.
- Leaving a zone ends all of a creature's engagements (and its adjacency), each
  with its event (``zonekeep_zone_leaving``). A creature that is dying, stable (at 0
  hit points), defeated, surrendered or escaped is engaged with nobody: its
  engagements end when that happens (``zonekeep_condition_applied``), and nobody
  engages it.
- Leaving or passing through
  a zone offers an opportunity attack to every enemy engaged with it there;
  leaving an enemy's reach inside the zone (``withdraw``) offers one to that
  enemy; taking or leaving a position, or moving next to an ally, while engaged
  offers one to the last enemy that made a melee attack against it.
- Only enemies that can react are offered one: a reaction left, a melee attack,
  not incapacitated or out of the fight, not refused by another rule (surprise)
  (``zonekeep_opportunity_attackers``).
- Disengage avoids them all for the turn; a Tumble avoids those of one event.
- Adjacent allies [``adjacency``]: moving next to an ally costs half speed and
  needs room around it; if the ally is engaged, the mover engages the same
  enemies unless it spends a bonus action to stand back-to-back [``back_to_back``].
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    DEFEATED,
    DYING,
    ESCAPED,
    OPPORTUNITY_ATTACK,
    STABLE,
    SURRENDERED,
    ActionTaken,
    AdjacencyEnded,
    AdjacencyTaken,
    Attack,
    Command,
    CommandSpec,
    Creature,
    Decision,
    EncounterState,
    EngagementEnded,
    EngagementStarted,
    Maneuver,
    ManeuverEnded,
    Param,
    RollModifier,
    RollRequest,
    RuleContext,
    TumbleAttempted,
    can_surround,
    describe_step,
    hookimpl,
    leave_position,
    make_attack,
    reactions_pending,
    run_maneuver,
    spend_half_speed,
    start_maneuver,
)

#: The conditions that end a creature's engagements: it is out of the fight, dying, or
#: stable at 0 hit points (docs/rules.md, A3).
DOWN: dict[str, str] = {
    DYING: "is dying",
    STABLE: "is down (stable)",
    DEFEATED: "is defeated",
    SURRENDERED: "surrendered",
    ESCAPED: "escaped",
}

#: What an opportunity attack is, for ``zonekeep_action_refusal`` (surprise refuses it).
OPPORTUNITY_ATTACK_SPEC = CommandSpec(
    OPPORTUNITY_ATTACK,
    lambda ctx, cmd: None,
    "Reaction: one melee attack against a creature that provoked it.",
    costs=("reaction",),
    on_turn=None,
)


def is_down(creature: Creature) -> bool:
    """Whether ``creature`` is dying or out of the fight, and so engaged with nobody."""
    return any(c in DOWN for c in creature.conditions)


def _down_word(creature: Creature) -> str:
    return next(DOWN[c] for c in DOWN if c in creature.conditions)


def room_refusal(ctx: RuleContext, target: Creature, newcomer: Creature) -> tuple[str, str] | None:
    """A refusal when ``newcomer`` cannot fit around ``target`` beside those already there.

    Those already there are its engaged enemies and its adjacent allies.
    """
    s = ctx.state
    if not s.options.size_limits:
        return None
    around = [s.creatures[c].size for c in s.engaged_with(target.id) + s.adjacent_to(target.id)]
    if can_surround(target.size, [*around, newcomer.size]):
        return None
    return (
        "no_room",
        f"There is no room left around {target.name} ({target.size.label}) for "
        f"{newcomer.name} ({newcomer.size.label}).",
    )


def engage(ctx: RuleContext, creature: Creature, enemy: Creature, reason: str) -> None:
    """Engage ``creature`` with ``enemy`` (a no-op if they already are), checking the room."""
    if ctx.state.is_engaged(creature.id, enemy.id):
        return
    refusal = room_refusal(ctx, enemy, creature)
    if refusal:
        ctx.refuse(*refusal)
    ctx.emit(EngagementStarted(creature.id, enemy.id, reason))


@hookimpl
def zonekeep_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    if (
        attack.kind != "melee"
        or not ctx.is_enemy(attacker, target)
        or ctx.state.is_engaged(attacker.id, target.id)
        or is_down(target)
        or is_down(attacker)
    ):
        return
    if reaction and room_refusal(ctx, target, attacker):
        return  # an opportunity attack never fails for lack of room; it just does not engage
    engage(ctx, attacker, target, "melee attack")


@hookimpl
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    if (
        roll.kind == "attack"
        and roll.attack_kind == "ranged"
        and roll.target is not None
        and ctx.state.is_engaged(roll.actor, roll.target)
    ):
        return (RollModifier("disadvantage", "ranged attack against an engaged enemy"),)
    return None


@hookimpl
def zonekeep_provocations(
    ctx: RuleContext, creature: Creature, maneuver: Maneuver
) -> Iterable[str]:
    s = ctx.state
    engaged = s.engaged_with(creature.id)
    if maneuver.kind == "enter":
        return [c for c in engaged if s.creatures[c].zone == creature.zone]
    if maneuver.kind == "withdraw":
        return [c for c in maneuver.steps[maneuver.step : maneuver.step + 1] if c in engaged]
    if maneuver.kind in ("take_position", "leave_position", "adjacent"):
        last = s.last_melee.get(creature.id)
        if last is not None and last in engaged and s.creatures[last].zone == creature.zone:
            return [last]
    return []


def can_react(ctx: RuleContext, creature: Creature) -> bool:
    """Whether ``creature`` could take an opportunity attack now: a reaction left, a
    melee attack, not incapacitated or out of the fight, not refused by a rule."""
    if creature.incapacitated or creature.out_of_fight or not ctx.state.has_reaction(creature.id):
        return False
    if not any(a.kind == "melee" for a in creature.attacks):
        return False
    refusal = ctx.hook.zonekeep_action_refusal(
        ctx=ctx, creature=creature, spec=OPPORTUNITY_ATTACK_SPEC
    )
    return refusal is None


@hookimpl
def zonekeep_opportunity_attackers(
    ctx: RuleContext, creature: Creature, maneuver: Maneuver
) -> Iterable[str]:
    """The provoked enemies that can react; nobody after Disengage or a good Tumble."""
    s = ctx.state
    ids: list[str] = []
    for batch in ctx.hook.zonekeep_provocations(ctx=ctx, creature=creature, maneuver=maneuver):
        for rid in batch or ():
            other = s.creatures.get(rid)
            if (
                other is not None
                and rid not in ids
                and rid != creature.id
                and ctx.is_enemy(creature, other)
                and can_react(ctx, other)
            ):
                ids.append(rid)
    if not ids:
        return []
    if s.active == creature.id and s.resources.disengaged:
        return []
    if maneuver.tumble:
        dc = max(s.creatures[r].passive_perception for r in ids)
        result = ctx.roll(
            "d20",
            RollRequest("check", creature.id, ability="dex", skill="tumble"),
            bonus=creature.skill("acrobatics", creature.dex_mod),
        )
        success = result.total >= dc
        ctx.emit(TumbleAttempted(creature.id, result, dc, success, describe_step(ctx, maneuver)))
        if success:
            return []
    return ids


@hookimpl
def zonekeep_zone_leaving(ctx: RuleContext, creature: Creature, to_zone: str, forced: bool) -> None:
    """Leaving the zone ends every engagement and every adjacency of the creature."""
    s = ctx.state
    for a, b in list(s.engagements):
        if creature.id in (a, b):
            ctx.emit(EngagementEnded(creature.id, b if a == creature.id else a, "left the zone"))
    for a, b in list(s.adjacent):
        if creature.id in (a, b):
            ctx.emit(AdjacencyEnded(creature.id, b if a == creature.id else a, "left the zone"))


@hookimpl
def zonekeep_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """A creature that is now dying or out of the fight is engaged with nobody."""
    if condition not in DOWN:
        return
    for a, b in list(ctx.state.engagements):
        if creature.id in (a, b):
            other = b if a == creature.id else a
            ctx.emit(EngagementEnded(creature.id, other, f"{creature.name} {DOWN[condition]}"))


@hookimpl
def zonekeep_decision_resolved(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...], defaulted: bool
) -> None:
    if decision.kind != OPPORTUNITY_ATTACK:
        return
    s = ctx.state
    m = s.maneuver
    reactor = s.creatures.get(decision.creature or "")
    if choice == ("attack",) and m is not None and reactor is not None:
        mover = s.creatures[m.creature]
        melee = next((a for a in reactor.attacks if a.kind == "melee"), None)
        if (
            melee is not None
            and s.has_reaction(reactor.id)
            and not reactor.incapacitated
            and not mover.out_of_fight
        ):
            ctx.emit(ActionTaken(reactor.id, OPPORTUNITY_ATTACK, "reaction"))
            make_attack(ctx, reactor, mover, melee.name, reaction=True)
    if not reactions_pending(ctx):
        run_maneuver(ctx)


# -- commands -------------------------------------------------------------------------------------


def _engage(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    me = ctx.creature(cmd.params["creature"])
    enemy = ctx.creature(cmd.params["target"], role="target")
    if enemy.id == me.id or not ctx.is_enemy(me, enemy):
        ctx.refuse("invalid_target", f"{me.name} can only engage an enemy.")
    if enemy.zone != me.zone or enemy.out_of_fight:
        ctx.refuse("invalid_target", f"{enemy.name} is not in {me.name}'s zone to engage.")
    if is_down(enemy):
        ctx.refuse(
            "invalid_target",
            f"{enemy.name} {_down_word(enemy)}: a creature that is down is engaged with nobody.",
        )
    if s.is_engaged(me.id, enemy.id):
        ctx.refuse("invalid_params", f"{me.name} is already engaged with {enemy.name}.")
    just_entered = _just_entered(s, me)
    position = s.asset(me.position) if me.position else None
    if position is not None and not just_entered:
        leave_position(ctx, me, position, "left to engage")
    engage(
        ctx,
        ctx.state.creatures[me.id],
        enemy,
        "engaged on arrival" if just_entered else "left a position to engage",
    )


def _just_entered(state: EncounterState, me: Creature) -> bool:
    """Whether ``me`` entered its zone this turn and still has its action (it may engage)."""
    return state.resources.entered_zone == me.zone and state.resources.actions > 0


def _can_engage(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _just_entered(state, me) or me.position is not None:
        return None
    return (
        "cannot_engage",
        f"{me.name} can engage at once only right after entering a zone with its action "
        "unused, or by leaving a position; otherwise a melee attack engages.",
    )


def _is_engaged(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if state.engaged_with(me.id):
        return None
    return ("invalid_target", f"{me.name} is not engaged with anyone.")


def _withdraw(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    enemy = ctx.creature(cmd.params["target"], role="target")
    if not ctx.state.is_engaged(me.id, enemy.id):
        ctx.refuse("invalid_target", f"{me.name} is not engaged with {enemy.name}.")
    start_maneuver(
        ctx, Maneuver(me.id, "withdraw", (enemy.id,), tumble=bool(cmd.params.get("tumble", False)))
    )


def _adjacent(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    if not s.options.adjacency:
        ctx.refuse("option_off", "Adjacency is switched off for this encounter.")
    me = ctx.creature(cmd.params["creature"])
    ally = ctx.creature(cmd.params["ally"], role="ally")
    if ally.id == me.id or ctx.is_enemy(me, ally):
        ctx.refuse("invalid_target", f"{me.name} can only move next to an ally.")
    if ally.zone != me.zone:
        ctx.refuse("invalid_target", f"{ally.name} is not in {me.name}'s zone.")
    if ally.id in s.adjacent_to(me.id):
        ctx.refuse("invalid_params", f"{me.name} is already next to {ally.name}.")
    refusal = room_refusal(ctx, ally, me)
    if refusal:
        ctx.refuse(*refusal)
    back = bool(cmd.params.get("back_to_back", False))
    if back:
        if not s.options.back_to_back:
            ctx.refuse("option_off", "Standing back-to-back is switched off for this encounter.")
        if s.resources.bonus_actions <= 0:
            ctx.refuse(
                "no_bonus_action_left", f"{me.name} has no bonus action left to stand back-to-back."
            )
    else:
        for enemy_id in s.engaged_with(ally.id):
            enemy = s.creatures[enemy_id]
            if not s.is_engaged(me.id, enemy_id):
                refusal = room_refusal(ctx, enemy, me)
                if refusal:
                    ctx.refuse(
                        "no_room",
                        f"Next to {ally.name}, {me.name} would engage {enemy.name}: {refusal[1]}",
                    )
    spend_half_speed(ctx, me, "Moving next to an ally")
    if back:
        ctx.emit(ActionTaken(me.id, "back_to_back", "bonus"))
    start_maneuver(
        ctx,
        Maneuver(
            me.id,
            "adjacent",
            (ally.id,),
            tumble=bool(cmd.params.get("tumble", False)),
            options=("back_to_back:yes",) if back else (),
        ),
    )


@hookimpl
def zonekeep_maneuver_step(ctx: RuleContext, maneuver: Maneuver) -> bool | None:
    s = ctx.state
    if maneuver.kind == "withdraw":
        if s.is_engaged(maneuver.creature, maneuver.steps[0]):
            ctx.emit(EngagementEnded(maneuver.creature, maneuver.steps[0], "withdrew"))
        return True
    if maneuver.kind == "adjacent":
        me = s.creatures[maneuver.creature]
        ally = s.creatures[maneuver.steps[0]]
        if ally.zone != me.zone or ally.out_of_fight:
            ctx.emit(ManeuverEnded(me.id, False, f"{ally.name} is no longer there"))
            return True
        back = maneuver.option("back_to_back") == "yes"
        ctx.emit(AdjacencyTaken(me.id, ally.id, back))
        if not back:
            for enemy_id in s.engaged_with(ally.id):
                if (
                    not s.is_engaged(me.id, enemy_id)
                    and room_refusal(ctx, s.creatures[enemy_id], me) is None
                ):
                    ctx.emit(EngagementStarted(me.id, enemy_id, f"moved next to {ally.name}"))
        return True
    return None


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    creature = Param("creature", True, "the acting creature")
    tumble = Param("boolean", False, "tumble past those who would react")
    return (
        CommandSpec(
            "engage",
            _engage,
            "Engage an enemy in your zone right after entering it (action unused), or by leaving a position.",
            {"creature": creature, "target": Param("creature", True, "the enemy")},
            requires=_can_engage,
        ),
        CommandSpec(
            "withdraw",
            _withdraw,
            "Leave an engaged enemy's reach inside the zone (it may make an opportunity attack).",
            {
                "creature": creature,
                "target": Param("creature", True, "the enemy left"),
                "tumble": tumble,
            },
            costs=("movement",),
            requires=_is_engaged,
        ),
        CommandSpec(
            "move_adjacent",
            _adjacent,
            "Spend half your speed to stand next to an ally (engaging its enemies unless back-to-back).",
            {
                "creature": creature,
                "ally": Param("creature", True, "the ally"),
                "back_to_back": Param(
                    "boolean", False, "spend a bonus action to stand back-to-back"
                ),
                "tumble": tumble,
            },
            costs=("movement",),
        ),
    )
