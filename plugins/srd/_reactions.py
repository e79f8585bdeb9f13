"""SRD creatures' reactions, offered to their controller as decisions (issue 30).

A reaction is the controller's choice (the GM's for a monster): the attack asks the
plugins what may be offered (``zonekeep_attack_reactions``), the SDK opens a decision
(``offer_reaction``: the reaction's options and ``decline``, the default when the
deadline passes) and the attack waits for it; a taken reaction is carried out here
(``zonekeep_reaction_taken``), then the attack goes on.

- ``parry`` (the noble, the knight, the bandit captain, the gladiator...): when a melee
  attack's roll would hit it and ``ac_bonus`` more AC would turn the hit into a miss,
  while it sees the attacker (not blinded) and wields a melee weapon (it has a melee
  attack), its controller may spend its reaction: +``ac_bonus`` AC against that attack.
- ``redirect-attack`` (the goblin boss): when a creature it sees (not blinded) targets
  it with an attack, its controller may choose another creature whose name has
  ``ally_tag`` ("goblin") within ``within`` feet (its zone, the zone rules' "within
  5 feet"; not the attacker): the two swap places (in the same zone, no zone changes)
  and the chosen one becomes the attack's target. A redirected attack is not redirected
  again.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    Action,
    ActionTaken,
    Attack,
    Creature,
    Decision,
    FeatureSpec,
    ReactionOffer,
    ReactionOutcome,
    RuleContext,
    hookimpl,
)

#: The hook implementations, imported by the package (plugins/srd/__init__.py) under
#: these names: pluggy registers each for its ``specname`` beside the package's own.
__all__ = [
    "srd_reactions_attack",
    "srd_reactions_features",
    "srd_reactions_taken",
]

#: The decision kinds this module opens.
PARRY = "parry"
REDIRECT = "redirect_attack"


@hookimpl(specname="zonekeep_features")
def srd_reactions_features() -> Iterable[FeatureSpec]:
    return (
        FeatureSpec(
            "parry",
            "action",
            {
                "type": "object",
                "required": ["ac_bonus"],
                "properties": {"ac_bonus": {"type": "integer", "minimum": 1, "maximum": 10}},
                "additionalProperties": False,
            },
            "Reaction, offered to the controller (a `parry` decision) when a melee attack "
            "would hit and +ac_bonus AC would make it miss (it sees the attacker and has a "
            "melee attack): taken, +ac_bonus AC against that attack.",
        ),
        FeatureSpec(
            "redirect-attack",
            "action",
            {
                "type": "object",
                "properties": {
                    "within": {"type": "integer", "minimum": 0, "maximum": 30},
                    "ally_tag": {"type": "string"},
                },
                "additionalProperties": False,
            },
            "Reaction, offered to the controller (a `redirect_attack` decision) when an "
            "attack targets the creature (it sees the attacker): the controller picks a "
            "creature whose name has ally_tag (a goblin) in its zone; they swap places and "
            "it becomes the target.",
        ),
    )


def _action(creature: Creature, feature: str) -> Action | None:
    """``creature``'s action ``feature``, unless the data marks it ``gm``."""
    for action in creature.actions:
        if action.id in (feature, f"zonekeep.srd.{feature}") and action.gm is None:
            return action
    return None


def _able(ctx: RuleContext, creature: Creature) -> bool:
    """Whether ``creature`` may take a reaction that needs it to see: its reaction left,
    not incapacitated, out of the fight or blinded."""
    return (
        ctx.state.has_reaction(creature.id)
        and not creature.incapacitated
        and not creature.out_of_fight
        and "blinded" not in creature.conditions
    )


def _redirect_choices(ctx: RuleContext, me: Creature, attacker_id: str) -> list[Creature]:
    """The creatures ``me``'s Redirect Attack may choose: another creature whose name has
    the ``ally_tag``, in its zone, not the attacker, still in the fight."""
    redirect = _action(me, "redirect-attack")
    if redirect is None or me.zone is None:
        return []
    tag = str(redirect.params.get("ally_tag", "")).lower()
    return [
        c
        for c in ctx.state.in_zone(me.zone)
        if c.id not in (me.id, attacker_id) and not c.out_of_fight and tag in c.name.lower()
    ]


@hookimpl(specname="zonekeep_attack_reactions")
def srd_reactions_attack(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    moment: str,
    total: int | None,
    ac: int | None,
) -> Iterable[ReactionOffer] | None:
    if not target.actions or not _able(ctx, target):
        return None
    if moment == "targeted" and _action(target, "redirect-attack") is not None:
        choices = _redirect_choices(ctx, target, attacker.id)
        if not choices:
            return None
        names = ", ".join(c.name for c in choices)
        return (
            ReactionOffer(
                target.id,
                REDIRECT,
                f"{attacker.name} attacks {target.name} with {attack.name}. Redirect Attack "
                f"(reaction): choose a goblin within 5 feet ({names}) to swap places with "
                f"{target.name} and become the target instead, or decline.",
                tuple(c.id for c in choices),
            ),
        )
    parry = _action(target, "parry")
    if moment != "hit" or parry is None or attack.kind != "melee":
        return None
    if total is None or ac is None or not any(a.kind == "melee" for a in target.attacks):
        return None  # it wields no melee weapon
    bonus = int(parry.params.get("ac_bonus", 0))
    if total >= ac + bonus:
        return None  # a parry would not turn the hit aside: nothing to choose
    return (
        ReactionOffer(
            target.id,
            PARRY,
            f"{attacker.name}'s {attack.name} would hit {target.name} ({total} against AC "
            f"{ac}). Parry (reaction): +{bonus} AC against it, making it miss?",
            ("parry",),
        ),
    )


@hookimpl(specname="zonekeep_reaction_taken")
def srd_reactions_taken(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...]
) -> ReactionOutcome | None:
    if decision.kind not in (PARRY, REDIRECT):
        return None
    me = ctx.state.creatures.get(decision.creature or "")
    if me is None or not _able(ctx, me):
        return None  # it can no longer react: the attack goes on as it was
    trigger = decision.trigger or {}
    if decision.kind == PARRY:
        parry = _action(me, "parry")
        if parry is None:
            return None
        ctx.emit(ActionTaken(me.id, "parry", "reaction"))
        return ReactionOutcome(ac_bonus=int(parry.params.get("ac_bonus", 0)))
    chosen = {c.id: c for c in _redirect_choices(ctx, me, str(trigger.get("attacker", "")))}
    if choice[0] not in chosen:
        return None  # the chosen goblin is gone or moved away
    ctx.emit(ActionTaken(me.id, "redirect-attack", "reaction"))
    return ReactionOutcome(target=choice[0])
