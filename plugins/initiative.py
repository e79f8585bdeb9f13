"""Step 3: roll initiative, break ties, keep the order; slot in late arrivals.

Initiative is d20 + Dexterity modifier + initiative bonus. A group of identical
GM creatures rolls once and takes one slot. Ties (docs/rules.md, "4. Ties"):

1. When the tied slots mix PCs and NPCs, a higher Dexterity modifier goes first.
2. Among tied slots of one controller (the GM, or one player), that controller
   chooses the order: a pending ``initiative_tie`` decision whose default is the
   roster order. The fight does not wait for it: list order stands and round 1
   starts at once; the choice stays open until the turn reaches the first of the
   tied slots (or its deadline passes), and then the order is fixed.
3. Different controllers still tied roll a d20 each, highest first, re-rolling
   ties; each controller's slots stay together in the order it chooses.

The order stays fixed from round to round: slots in order, the members of a slot one
after another (``zonekeep_next_turn``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from zonekeep.plugins._crowding import update_crowding
from zonekeep.plugins._decisions import resolve
from zonekeep.sdk import (
    GM,
    OPEN_PHASES,
    Command,
    CommandSpec,
    Creature,
    CreatureAdded,
    Decision,
    DecisionOpened,
    GroupOrderSet,
    InitiativeEntry,
    InitiativeRolled,
    Param,
    RollOff,
    RollRequest,
    RuleContext,
    creature_from_dict,
    draw,
    hookimpl,
    start_round,
    zone_room,
)

TIE = "initiative_tie"


def slot_key(c: Creature) -> str:
    """The initiative slot of a creature: its group for grouped GM creatures, else itself."""
    return c.group if c.group and c.controller == GM else c.id


def roll_entry(ctx: RuleContext, slot: str, members: Sequence[Creature]) -> InitiativeEntry:
    first = members[0]
    result = ctx.roll(
        "d20",
        RollRequest("initiative", first.id, ability="dex"),
        bonus=first.dex_mod + first.initiative_bonus,
    )
    return InitiativeEntry(
        slot=slot,
        members=tuple(m.id for m in members),
        total=result.total,
        roll=result,
        dex_mod=first.dex_mod,
        pc=bool(first.pc),
        controller=first.controller,
    )


def roll_off(ctx: RuleContext, keys: list[str], log: list[RollOff]) -> list[str]:
    """Order ``keys`` by d20 roll-offs, highest first, re-rolling ties recursively."""
    if len(keys) < 2:
        return keys
    drawn = [draw(ctx.entropy, 20) for _ in keys]
    rolls = [value for value, _ in drawn]
    named = tuple(pair for _, pair in drawn if pair is not None)
    log.append(RollOff(tuple(keys), tuple(rolls), named if len(named) == len(rolls) else ()))
    ordered: list[str] = []
    for value in sorted(set(rolls), reverse=True):
        ordered.extend(
            roll_off(ctx, [k for k, r in zip(keys, rolls, strict=True) if r == value], log)
        )
    return ordered


def _group_by(items: Iterable[InitiativeEntry], key: str) -> dict[object, list[InitiativeEntry]]:
    groups: dict[object, list[InitiativeEntry]] = {}
    for item in items:
        groups.setdefault(getattr(item, key), []).append(item)
    return groups


def resolve_ties(
    ctx: RuleContext, tied: list[InitiativeEntry], log: list[RollOff]
) -> tuple[list[InitiativeEntry], list[list[InitiativeEntry]]]:
    """Order one set of slots with equal totals.

    Returns the order and the blocks (same controller, still tied) that their
    controller may reorder.
    """
    if len(tied) < 2:
        return tied, []
    mixed = any(e.pc for e in tied) and not all(e.pc for e in tied)
    if mixed:
        mods = sorted({e.dex_mod for e in tied}, reverse=True)
        tiers = [[e for e in tied if e.dex_mod == mod] for mod in mods]
    else:
        tiers = [tied]
    order: list[InitiativeEntry] = []
    choices: list[list[InitiativeEntry]] = []
    for tier in tiers:
        blocks = _group_by(tier, "controller")
        names = [str(k) for k in blocks]
        for name in roll_off(ctx, names, log):
            block = blocks[name]
            order.extend(block)
            if len(block) > 1:
                choices.append(block)
    return order, choices


def _roll_initiative(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    if s.initiative:
        ctx.refuse("decision_pending", "Initiative is rolled; tied creatures' order is awaited.")
    slots: dict[str, list[Creature]] = {}
    for creature in s.creatures.values():
        slots.setdefault(slot_key(creature), []).append(creature)
    entries = [roll_entry(ctx, slot, members) for slot, members in slots.items()]
    log: list[RollOff] = []
    order: list[InitiativeEntry] = []
    choices: list[list[InitiativeEntry]] = []
    for total in sorted({e.total for e in entries}, reverse=True):
        part, blocks = resolve_ties(ctx, [e for e in entries if e.total == total], log)
        order.extend(part)
        choices.extend(blocks)
    ctx.emit(InitiativeRolled(tuple(order), tuple(log)))
    for block in choices:
        names = ", ".join(s.creatures[m].name for e in block for m in e.members[:1])
        options = tuple(e.slot for e in block)
        ctx.emit(
            DecisionOpened(
                Decision(
                    id=ctx.next_decision_id(),
                    kind=TIE,
                    controller=block[0].controller,
                    prompt=f"{names} tied at {block[0].total} on initiative: choose their order.",
                    options=options,
                    default=options,
                    ordering=True,
                )
            )
        )
    # A tie does not stop the fight: list order stands until its controller chooses.
    start_round(ctx, 1)


@hookimpl
def zonekeep_decision_resolved(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...], defaulted: bool
) -> None:
    """An encounter stored while it waited in the initiative step for its ties (before
    ties stopped holding the fight) starts round 1 once the last of them is answered."""
    if decision.kind != TIE or ctx.state.phase != "initiative":
        return
    if not any(d.kind == TIE for d in ctx.state.pending):
        start_round(ctx, 1)


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """A tie's choice closes when the turn reaches the first of its tied slots: the
    order is fixed as it stands (list order, when nobody chose)."""
    s = ctx.state
    for decision in [d for d in s.pending if d.kind == TIE]:
        slots = [i for i, e in enumerate(s.initiative) if e.slot in decision.options]
        if slots and s.turn_slot >= min(slots):
            resolve(ctx, decision, decision.default, True, by="rules")


@hookimpl
def zonekeep_next_turn(ctx: RuleContext) -> tuple[int, int]:
    """The order stays fixed: the next member of the current slot, else the next slot's
    first member; past the last slot, ``(len(initiative), 0)`` ends the round."""
    s = ctx.state
    slot, member = s.turn_slot, s.turn_member
    if slot < 0:
        slot, member = 0, 0
    else:
        member += 1
    while slot < len(s.initiative):
        if member < len(s.initiative[slot].members):
            return slot, member
        slot, member = slot + 1, 0
    return len(s.initiative), 0


def insertion_index(order: Sequence[InitiativeEntry], new: InitiativeEntry) -> int:
    """Where a late arrival goes: before the first slot it beats.

    It beats a higher total, or an equal total of the other kind (PC against NPC)
    with a lower Dexterity modifier. Otherwise, those already in the order keep
    their place ahead of it.
    """
    for i, e in enumerate(order):
        if new.total > e.total:
            return i
        if new.total == e.total and new.pc != e.pc and new.dex_mod > e.dex_mod:
            return i
    return len(order)


def _add_creature(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    try:
        creature = creature_from_dict(cmd.params["creature"])
    except (TypeError, ValueError, KeyError) as exc:
        ctx.refuse("invalid_params", f"That creature is not valid: {exc}.")
    problems = ctx.feature_problems(creature)
    if problems:
        ctx.refuse("invalid_params", f"That creature is not valid: {'; '.join(problems)}.")
    groups = {c.group for c in s.creatures.values() if c.group}
    if creature.id in s.creatures or creature.id in groups:
        ctx.refuse("duplicate_id", f"There is already a creature or group with id {creature.id!r}.")
    if creature.group and creature.group in s.creatures:
        ctx.refuse("duplicate_id", f"The group {creature.group!r} has a creature's id.")
    if creature.zone is not None and creature.zone not in s.zones:
        ctx.refuse("unknown_zone", f"There is no zone {creature.zone!r}.")
    placed = s.phase not in ("surprise", "positions")
    if creature.zone is None and placed:
        if len(s.zones) != 1:
            ctx.refuse("invalid_params", f"{creature.name} needs a zone to join the encounter.")
        creature.zone = s.zones[0]
    held = [(creature.position, True)] if creature.position else []
    for aid, as_prop in held + [(e, False) for e in creature.elements]:
        asset = s.asset(aid)
        if asset is None or asset.zone != creature.zone:
            ctx.refuse(
                "invalid_params", f"{creature.name} cannot hold {aid!r}: it is not in its zone."
            )
        if (asset.kind == "prop" and aid not in s.effects) != as_prop:
            where = "position" if as_prop else "elements"
            ctx.refuse("invalid_params", f"{asset.name} does not belong in {where}.")
    if creature.zone is not None and placed:
        full = zone_room(ctx, creature, creature.zone)
        if full:
            ctx.refuse(*full)
    _add(ctx, creature)


def _add(ctx: RuleContext, creature: Creature) -> None:
    s = ctx.state
    # A plugin's condition by its short name ("burning" for "hazards.burning").
    conditions = sorted(ctx.resolve("condition", c) for c in creature.conditions)
    if conditions != creature.conditions:
        creature = attrs.evolve(creature, conditions=conditions)
    if not s.initiative:
        ctx.emit(CreatureAdded(creature))
    else:
        _slot_in(ctx, creature)
    if creature.zone is not None and s.phase not in ("surprise", "positions"):
        update_crowding(ctx, creature.zone)


def _slot_in(ctx: RuleContext, creature: Creature) -> None:
    """Roll the late arrival's initiative and slot it in (or join its group's slot)."""
    s = ctx.state
    slot = slot_key(creature)
    joined = next((e for e in s.initiative if e.slot == slot), None)
    if joined is not None:
        # A new member of an existing group acts with the group, last in its order.
        ctx.emit(CreatureAdded(creature, joined, -1))
        return
    entry = roll_entry(ctx, slot, [creature])
    ctx.emit(CreatureAdded(creature, entry, insertion_index(s.initiative, entry)))


def _set_group_order(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    group = cmd.params["group"]
    members = tuple(cmd.params["members"])
    entry = next((e for e in s.initiative if e.slot == group and len(e.members) > 0), None)
    if entry is None:
        ctx.refuse("unknown_group", f"There is no initiative group {group!r}.")
    if sorted(members) != sorted(entry.members):
        ctx.refuse(
            "invalid_choice",
            f"The order must list exactly the group's members: {', '.join(entry.members)}.",
        )
    if s.active in entry.members:
        ctx.refuse("invalid_choice", "The group is taking its turns now; reorder it after.")
    ctx.emit(GroupOrderSet(group, members))


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "roll_initiative",
            _roll_initiative,
            "Step 3: everyone rolls initiative; ties are broken or put to their controller.",
            who="gm",
            phases=("initiative",),
        ),
        CommandSpec(
            "add_creature",
            _add_creature,
            "Add a creature mid-encounter; once initiative is rolled it rolls and is slotted in.",
            {"creature": Param("object", True, "the creature, as in a roster file")},
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "set_group_order",
            _set_group_order,
            "Set the order in which a group's members take their turns inside its slot.",
            {
                "group": Param("string", True, "the group's slot id"),
                "members": Param("creatures", True, "all its members, in the new order"),
            },
            who="gm",
            phases=("initiative", "turns"),
        ),
    )
