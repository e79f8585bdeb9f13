"""Play an encounter file to its end in-process, with a simple table policy.

Every creature, on its turn: stands up if prone, picks the nearest enemy, moves a
zone toward it when no attack reaches (engaging on arrival), attacks with the first
attack that reaches, and ends its turn. Every offered opportunity attack is taken.
The GM applies the default to ties and stabilizes the dying once the other side is
beaten.
It is a demonstration of the rules engine, not an opponent.
"""

from __future__ import annotations

from collections.abc import Callable

from zonekeep.plugins.targeting import range_refusal
from zonekeep.sdk import (
    DYING,
    GM_ACTOR,
    OPPORTUNITY_ATTACK,
    PRONE,
    Actor,
    Command,
    Creature,
    EncounterState,
    Entropy,
    Event,
    Refusal,
    path_distance,
)
from zonekeep.sdk.engine import Engine

from ._encounter_file import EncounterFile

#: Rounds after which the demonstration GM calls the fight.
MAX_ROUNDS = 50


class Table:
    """An engine and one encounter's state, with every accepted event kept in order."""

    def __init__(
        self,
        engine: Engine,
        state: EncounterState,
        events: list[Event],
        entropy: Entropy,
        on_event: Callable[[Event, EncounterState], None] | None = None,
    ) -> None:
        self.engine = engine
        self.state = state
        self.events = events
        self.entropy = entropy
        self.on_event = on_event

    def send(self, type: str, actor: Actor = GM_ACTOR, **params: object) -> tuple[Event, ...]:
        """Handle one command; on success keep its events and the new state."""
        outcome = self.engine.handle(self.state, Command(type, params, actor), self.entropy)
        before = self.state
        self.state = outcome.state
        self.events.extend(outcome.events)
        if self.on_event:
            for event in outcome.events:
                self.on_event(event, before if before.creatures else outcome.state)
        return outcome.events

    def try_send(self, type: str, actor: Actor = GM_ACTOR, **params: object) -> bool:
        try:
            self.send(type, actor, **params)
        except Refusal:
            return False
        return True


def open_table(
    engine: Engine,
    spec: EncounterFile,
    entropy: Entropy,
    encounter_id: str = "encounter",
    on_event: Callable[[Event, EncounterState], None] | None = None,
) -> Table:
    """Create the encounter described by ``spec`` and run its setup steps up to initiative."""
    outcome = engine.create(
        encounter_id,
        spec.creatures,
        options=spec.options,
        name=spec.name,
        arena=spec.arena,
    )
    table = Table(engine, outcome.state, list(outcome.events), entropy, on_event)
    if on_event:
        for event in outcome.events:
            on_event(event, outcome.state)
    for hazard in spec.hazards:
        table.send(
            "add_hazard",
            id=hazard.id,
            name=hazard.name,
            time_sensitive=hazard.time_sensitive,
            description=hazard.description,
        )
    table.send("set_surprise", surprised=list(spec.surprised))
    table.send("place", positions=dict(spec.positions))
    return table


def _next_step(table: Table, me: Creature, goal: str) -> tuple[str, str | None] | None:
    """The first zone on the shortest way from ``me``'s zone to ``goal``, and the asset
    in its zone that ``me`` must take position at first to cross (a rope), if any."""
    from zonekeep.plugins.zones import usable_link

    start = me.zone
    if start is None or start == goal:
        return None
    ctx = table.engine.context(table.state, table.entropy)
    state = table.state

    def via(zone: str, other: str) -> str | bool | None:
        if usable_link(ctx, me, zone, other) is not None:
            return None
        helper = next((a.id for a in state.assets_in(zone) if other in a.crossing), None)
        return helper if helper is not None else False

    first: dict[str, tuple[str, str | None]] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt: list[str] = []
        for zone in frontier:
            for _link, other in state.arena.neighbours(zone):
                if other in seen:
                    continue
                crossing = via(zone, other)
                if crossing is False:
                    continue
                seen.add(other)
                first[other] = first.get(
                    zone, (other, crossing if isinstance(crossing, str) else None)
                )
                if other == goal:
                    return first[other]
                nxt.append(other)
        frontier = nxt
    return None


def _move_toward(table: Table, me: Creature, goal: str) -> None:
    step = _next_step(table, me, goal)
    if step is None:
        return
    zone, asset = step
    if asset is not None and me.position != asset:
        if me.position is not None:
            table.try_send("leave_position", GM_ACTOR, creature=me.id)
            _settle(table)
        table.try_send("take_position", GM_ACTOR, creature=me.id, asset=asset)
        _settle(table)
    if table.state.active == me.id and not table.state.creatures[me.id].incapacitated:
        table.try_send("enter", GM_ACTOR, creature=me.id, zones=[zone])
        _settle(table)


def _distance(table: Table, a: str, b: str) -> int:
    """Feet between two zones; unreachable zones sort last."""
    found = path_distance(table.state.arena, a, b) if a and b else None
    return found if found is not None else 10**6


def _pick_attack(table: Table, me: Creature, target: Creature) -> str | None:
    """The first of ``me``'s attacks that can reach ``target`` from where it stands."""
    for attack in me.attacks:
        melee = attack.kind == "melee"
        reach = attack.reach if melee else max(attack.range, attack.long_range)
        if range_refusal(table.state, me.id, target.id, reach, melee=melee) is None:
            name: str = attack.name
            return name
    return None


def _take_turn(table: Table, cid: str) -> None:
    actor = GM_ACTOR
    me = table.state.creatures[cid]
    if not me.incapacitated:
        if PRONE in me.conditions:
            table.try_send("stand", actor, creature=cid)
        enemies = [
            c
            for c in table.state.creatures.values()
            if c.side != me.side and not c.out_of_fight and c.zone is not None
        ]
        if enemies and me.attacks:
            here = me.zone or ""
            # The nearest enemy still standing; the dying only when nobody else is left.
            target = min(
                enemies, key=lambda c: (DYING in c.conditions, _distance(table, here, c.zone or ""))
            )
            attack = _pick_attack(table, me, target)
            if attack is None:
                _move_toward(table, me, target.zone or "")
                me = table.state.creatures[cid]
                if me.zone == target.zone and not target.out_of_fight:
                    table.try_send("engage", actor, creature=cid, target=target.id)
                attack = _pick_attack(table, me, target)
            if attack is not None and table.state.active == cid:
                table.try_send("attack", actor, creature=cid, target=target.id, attack=attack)
    _settle(table)
    if table.state.phase == "turns" and table.state.active == cid:
        table.send("end_turn", actor, creature=cid)


def _settle(table: Table) -> None:
    """Answer pending reactions: the table always takes its opportunity attacks."""
    while table.state.phase != "ended" and table.state.pending:
        decision = table.state.pending[0]
        choice = ["attack"] if decision.kind == OPPORTUNITY_ATTACK else list(decision.default)
        table.send("decide", decision=decision.id, choice=choice)


def play_to_end(table: Table) -> EncounterState:
    """Run the initiative step and the turns until the encounter ends."""
    table.send("roll_initiative")
    while table.state.pending:
        table.send("decision_timeout", decision=table.state.pending[0].id)
    _settle(table)
    engine = table.engine
    while table.state.phase == "turns":
        s = table.state
        ctx = engine.context(s, table.entropy)
        if engine.hook.zonekeep_encounter_over(ctx=ctx) is not None:
            dying = [c.id for c in s.creatures.values() if DYING in c.conditions]
            for cid in dying:
                table.send("stabilize", creature=cid)
            if table.state.phase == "turns":
                table.send("end_encounter", force=True, reason="the fight is over")
            break
        if s.round > MAX_ROUNDS or s.active is None:
            table.send("end_encounter", force=True, reason=f"the GM calls it after round {s.round}")
            break
        _take_turn(table, s.active)
    return table.state
