"""SRD creature features that turn creatures to stone (part of the ``zonekeep.srd``
plugin, issue 30).

Only public ``zonekeep.sdk`` names are used, as a third-party content plugin would. Each
hook implementation carries a name of its own (``gazes_...``) and names its hook with
``specname``.

- ``petrify`` (an attack's ``on_hit``, ``ability``, ``dc``, optional ``rounds``): the
  creature hit saves or starts turning to stone: ``restrained`` (a timed condition with
  no end of its own, its source ``petrify:<attacker>``). At the end of its next turn it
  saves again: a success ends the restraint, a failure turns it to stone:
  ``petrified`` for ``rounds`` (the cockatrice's 24 hours: 14,400), or until the GM ends
  it (``end_effect``) when no rounds are given. A creature already turning to stone or
  petrified by that creature is not asked again.
- ``gaze`` with ``effect`` ``petrify`` (trait, ``within``, ``ability``, ``dc``): the
  basilisk's Petrifying Gaze. A creature starting its turn within ``within`` feet (path
  distance) of it, when the two can see each other (neither is blinded, there is a path
  between their zones, the gazer is not incapacitated), saves as against ``petrify``, and
  repeats the save at the end of that turn (the first end of its turn after it began to
  turn). Averting the eyes is the player's choice the GM honours (ending the effect).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from zonekeep.sdk import (
    ABILITIES,
    Attack,
    AttackMade,
    ConditionEffectEnded,
    Creature,
    Damaged,
    EncounterState,
    FeatureSpec,
    RuleContext,
    apply_timed_condition,
    hookimpl,
    path_distance,
    saving_throw,
)

__all__ = ["gazes_attack_made", "gazes_features", "gazes_turn_end", "gazes_turn_start"]

#: The prefix of the source of the restraint of a creature turning to stone.
TURNING: Final = "petrify:"
#: The prefix of the source of a petrification (a creature turned to stone).
STONE: Final = "stone:"

PETRIFY_SCHEMA: Final = {
    "type": "object",
    "required": ["ability", "dc"],
    "properties": {
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 14_400},
    },
    "additionalProperties": False,
}
GAZE_SCHEMA: Final = {
    "type": "object",
    "required": ["effect", "within", "ability", "dc"],
    "properties": {
        "effect": {"enum": ["petrify"]},
        "within": {"type": "integer", "minimum": 5, "maximum": 300},
        "ability": {"enum": list(ABILITIES)},
        "dc": {"type": "integer", "minimum": 1, "maximum": 30},
        "rounds": {"type": "integer", "minimum": 1, "maximum": 14_400},
    },
    "additionalProperties": False,
}


@hookimpl(specname="zonekeep_features")
def gazes_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "petrify",
            "on_hit",
            PETRIFY_SCHEMA,
            doc="The creature hit saves or is restrained as it turns to stone; at the end of "
            "its next turn it saves again: free on a success, petrified (for the rounds, if "
            "given) on a failure.",
        ),
        FeatureSpec(
            "gaze",
            "trait",
            GAZE_SCHEMA,
            doc="A creature starting its turn within range that sees the gazer (and is seen) "
            "saves or begins to turn to stone (as petrify), saving again at the end of that "
            "turn. Averting the eyes is the GM's.",
        ),
    )


def _gaze(creature: Creature) -> dict[str, Any] | None:
    for trait in creature.traits:
        if trait.id in ("gaze", "zonekeep.srd.gaze") and trait.gm is None:
            return dict(trait.params)
    return None


def _stone_effects(state: EncounterState, creature_id: str, by: str) -> list[str]:
    return [
        e.id
        for e in state.condition_effects.values()
        if e.creature == creature_id and e.source in (f"{TURNING}{by}", f"{STONE}{by}")
    ]


def _begin_petrify(
    ctx: RuleContext, by: Creature, target: Creature, params: dict[str, Any], source: str
) -> None:
    now = ctx.state.creatures[target.id]
    if now.out_of_fight or _stone_effects(ctx.state, now.id, by.id):
        return
    if saving_throw(
        ctx,
        now,
        str(params["ability"]),
        int(params["dc"]),
        source,
        against=("restrained", "petrified"),
        magical=True,
    ):
        return
    apply_timed_condition(ctx, now.id, "restrained", source=f"{TURNING}{by.id}")


@hookimpl(specname="zonekeep_attack_made")
def gazes_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if not result.hit or not attack.on_hit:
        return
    for rider in attack.on_hit:
        if rider.gm is None and rider.id == "petrify":
            _begin_petrify(ctx, attacker, target, rider.params, f"{attacker.name}'s {attack.name}")


def _sees(ctx: RuleContext, a: Creature, b: Creature, within: int) -> bool:
    if a.zone is None or b.zone is None or a.out_of_fight or b.out_of_fight:
        return False
    if "blinded" in a.conditions or "blinded" in b.conditions:
        return False
    distance = path_distance(ctx.state.arena, a.zone, b.zone)
    return distance is not None and distance <= within


@hookimpl(specname="zonekeep_turn_start")
def gazes_turn_start(ctx: RuleContext, creature: Creature) -> None:
    for gazer in list(ctx.state.creatures.values()):
        if gazer.id == creature.id or not gazer.traits:
            continue
        params = _gaze(gazer)
        if params is None or params.get("effect") != "petrify":
            continue
        if "incapacitated" in gazer.conditions or any(
            c in gazer.conditions for c in ("paralyzed", "petrified", "stunned", "unconscious")
        ):
            continue
        now = ctx.state.creatures[creature.id]
        if not _sees(ctx, now, gazer, int(params["within"])):
            continue
        name = next((t.name for t in gazer.traits if t.id in ("gaze", "zonekeep.srd.gaze")), "")
        _begin_petrify(ctx, gazer, now, params, f"{gazer.name}'s {name}")


def _petrify_params(by: Creature | None) -> dict[str, Any] | None:
    if by is None:
        return None
    for attack in by.attacks:
        for rider in attack.on_hit:
            if rider.id == "petrify" and rider.gm is None:
                return dict(rider.params)
    return _gaze(by)


@hookimpl(specname="zonekeep_turn_end")
def gazes_turn_end(ctx: RuleContext, creature: Creature) -> None:
    turning = [
        e
        for e in ctx.state.condition_effects.values()
        if e.creature == creature.id and e.source.startswith(TURNING)
    ]
    for effect in turning:
        by_id = effect.source.removeprefix(TURNING)
        by = ctx.state.creatures.get(by_id)
        params = _petrify_params(by)
        if params is None:
            continue
        now = ctx.state.creatures[creature.id]
        source = f"{by.name if by else by_id}: turning to stone"
        saved = saving_throw(
            ctx,
            now,
            str(params["ability"]),
            int(params["dc"]),
            source,
            against=("petrified",),
            magical=True,
        )
        ctx.emit(
            ConditionEffectEnded(
                effect.id,
                creature.id,
                effect.condition,
                "it resisted the petrification" if saved else "turned to stone",
            )
        )
        if not saved:
            rounds = params.get("rounds")
            apply_timed_condition(
                ctx,
                creature.id,
                "petrified",
                rounds=int(rounds) if rounds else None,
                source=f"{STONE}{by_id}",
            )
