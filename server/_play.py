"""Play an encounter file to its end in-process, with a simple table policy.

Every creature, on its turn: stands up if prone, closes in (a 10-ft move), attacks
the first enemy still in the fight, and ends its turn. The GM applies the default
to every pending decision and stabilizes the dying once the other side is beaten.
It is a demonstration of the rules engine, not an opponent.
"""

from __future__ import annotations

from collections.abc import Callable

from zonekeep.sdk import (
    DYING,
    GM_ACTOR,
    PRONE,
    Actor,
    Command,
    EncounterState,
    Entropy,
    Event,
    Refusal,
)

from ._encounter_file import EncounterFile
from ._engine import Engine

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


def _take_turn(table: Table, cid: str) -> None:
    s = table.state
    me = s.creatures[cid]
    actor = GM_ACTOR
    if not me.incapacitated:
        if PRONE in me.conditions:
            table.try_send("stand", actor, creature=cid)
        table.try_send("move", actor, creature=cid, feet=min(10, me.speed) or 1)
        enemies = [
            c for c in table.state.creatures.values() if c.side != me.side and not c.out_of_fight
        ]
        if enemies and me.attacks:
            table.try_send("attack", actor, creature=cid, target=enemies[0].id)
    if table.state.phase == "turns" and table.state.active == cid:
        table.send("end_turn", actor, creature=cid)


def play_to_end(table: Table) -> EncounterState:
    """Run the initiative step and the turns until the encounter ends."""
    table.send("roll_initiative")
    while table.state.pending:
        table.send("decision_timeout", decision=table.state.pending[0].id)
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
