"""How long conditions last: timed condition effects, as initiative trackers keep them.

The GM applies an effect with ``apply_effect``: a condition on a creature that ends
at the first of

- ``rounds`` running out: the count goes down at the end of every round (applied in
  round 1 for 2 rounds, it ends at the end of round 2);
- the start or end of a named creature's next turn (``until``/``of``; an effect
  applied during that creature's own turn waits for its *next* one);
- a successful saving throw the afflicted creature rolls at the start or end
  (``save_when``) of each of its turns;
- its parent effect ending, for any reason (children, grandchildren, ...); a parent
  may also be an ongoing area effect or an asset, whose end (``effect_ended``,
  ``asset_removed``) ends the effect (``zonekeep_effect_ended``);
- the GM ending it (``end_effect_of``, which ends its descendants too).

A skipped turn (a creature out of the fight) neither starts nor ends, so it
triggers nothing. The condition leaves the creature when its last effect ends,
unless the creature also holds it plainly (see ``EncounterState.plain_overlaps``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from zonekeep.plugins._immunity import refuse_immunity
from zonekeep.sdk import (
    ABILITIES,
    OPEN_PHASES,
    AssetRemoved,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionEffectTicked,
    Creature,
    EffectEnded,
    Param,
    RuleContext,
    apply_timed_condition,
    hookimpl,
    saving_throw,
)

Boundary = Literal["start", "end"]
_UNTIL: dict[str, Boundary] = {"start_of_turn": "start", "end_of_turn": "end"}
_WHEN: dict[str, Boundary] = {"start": "start", "end": "end"}


# -- ending ------------------------------------------------------------------------------------


def descendants(ctx: RuleContext, effect_id: str) -> list[str]:
    """The live effects below ``effect_id`` (children, grandchildren, ...), depth first."""
    found: list[str] = []
    for effect in list(ctx.state.condition_effects.values()):
        if effect.parent == effect_id:
            found.append(effect.id)
            found.extend(descendants(ctx, effect.id))
    return found


def end_effect(ctx: RuleContext, effect_id: str, reason: str, *, expired: bool = False) -> None:
    """End ``effect_id`` and then every effect descended from it, each with its own event.

    ``expired`` says its duration ran out (rounds, a turn boundary, a save); the
    descendants of any effect that ends have expired (they lasted as long as it)."""
    effect = ctx.state.condition_effects.get(effect_id)
    if effect is None:
        return
    below = descendants(ctx, effect_id)
    ctx.emit(ConditionEffectEnded(effect.id, effect.creature, effect.condition, reason, expired))
    for child_id in below:
        child = ctx.state.condition_effects.get(child_id)
        if child is None:
            continue
        parent = child.parent or effect_id
        ctx.emit(
            ConditionEffectEnded(
                child.id,
                child.creature,
                child.condition,
                f"its parent effect {parent} ended",
                True,
            )
        )


def _end_orphans(ctx: RuleContext) -> None:
    """End effects whose parent is gone (ended by an event no rule followed up)."""
    live = ctx.state.condition_effects
    for effect in list(live.values()):
        parent = effect.parent
        # A parent that is an area or an asset holds it while it lasts.
        if (
            effect.id in live
            and parent is not None
            and parent not in live
            and ctx.state.asset(parent) is None
        ):
            end_effect(ctx, effect.id, f"its parent effect {parent} ended", expired=True)


@hookimpl
def zonekeep_effect_ended(
    ctx: RuleContext, ended: ConditionEffectEnded | EffectEnded | AssetRemoved
) -> None:
    """A timed condition tied to an ongoing area or an asset ends with it."""
    if isinstance(ended, ConditionEffectEnded) or not ctx.state.condition_effects:
        return
    gone = ended.asset
    # A hidden asset's id stays out of what players read.
    why = "what held it is gone" if isinstance(ended, AssetRemoved) and ended.hidden else ""
    for effect in list(ctx.state.condition_effects.values()):
        if effect.parent == gone and effect.id in ctx.state.condition_effects:
            end_effect(ctx, effect.id, why or f"{gone} ended", expired=True)


def _turn_boundary(ctx: RuleContext, creature: Creature, when: str) -> None:
    """Run the expiries and saves due at the start or end (``when``) of ``creature``'s turn."""
    if not ctx.state.condition_effects:  # the usual case: nothing to expire or save against
        return
    _end_orphans(ctx)
    s = ctx.state
    for effect in list(s.condition_effects.values()):
        if effect.id not in s.condition_effects or effect.until != when:
            continue
        if effect.until_creature != creature.id:
            continue
        this_turn = effect.applied_round == s.round and effect.applied_turn == creature.id
        if when == "end" and this_turn:
            continue  # applied during this very turn: it lasts until the end of the next one
        end_effect(ctx, effect.id, f"the {when} of {creature.name}'s turn", expired=True)
    for effect in list(s.condition_effects.values()):
        if effect.id not in s.condition_effects or effect.creature != creature.id:
            continue
        if effect.save is None or effect.save_dc is None or effect.save_when != when:
            continue
        saver = s.creatures[creature.id]
        source = f"{effect.condition} ({effect.id})"
        if saving_throw(
            ctx, saver, effect.save, effect.save_dc, source, against=(effect.condition,)
        ):
            end_effect(ctx, effect.id, f"{saver.name} made its {effect.save} save", expired=True)


@hookimpl
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    _turn_boundary(ctx, creature, "start")


@hookimpl
def zonekeep_turn_end(ctx: RuleContext, creature: Creature) -> None:
    _turn_boundary(ctx, creature, "end")


@hookimpl
def zonekeep_round_end(ctx: RuleContext, round: int) -> None:
    _end_orphans(ctx)
    s = ctx.state
    for effect in list(s.condition_effects.values()):
        if effect.id not in s.condition_effects or effect.rounds is None:
            continue
        left = effect.rounds - 1
        if left <= 0:
            end_effect(
                ctx, effect.id, f"its rounds ran out at the end of round {round}", expired=True
            )
        else:
            ctx.emit(ConditionEffectTicked(effect.id, effect.creature, left))


# -- commands ----------------------------------------------------------------------------------


def _optional_int(ctx: RuleContext, cmd: Command, name: str) -> int | None:
    value = cmd.params.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        ctx.refuse("invalid_params", f"{name} must be a whole number.")
    return value


def _optional_str(ctx: RuleContext, cmd: Command, name: str) -> str | None:
    value = cmd.params.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        ctx.refuse("invalid_params", f"{name} must be a non-empty text.")
    return value.strip()


def _apply(ctx: RuleContext, cmd: Command) -> None:
    s = ctx.state
    c = ctx.creature(cmd.params["creature"])
    condition = cmd.params["condition"].strip()
    if not condition:
        ctx.refuse("invalid_params", "Name the condition.")
    rounds = _optional_int(ctx, cmd, "rounds")
    if rounds is not None and rounds < 1:
        ctx.refuse("invalid_params", f"An effect lasts at least 1 round, not {rounds}.")
    until_word = _optional_str(ctx, cmd, "until")
    of = _optional_str(ctx, cmd, "of")
    until: Boundary | None = None
    until_creature: str | None = None
    if until_word is not None:
        if until_word not in _UNTIL:
            ctx.refuse(
                "invalid_params",
                f"until is 'start_of_turn' or 'end_of_turn', not {until_word!r}.",
            )
        until = _UNTIL[until_word]
        until_creature = ctx.creature(of, role="creature (of)").id if of is not None else c.id
    elif of is not None:
        ctx.refuse(
            "invalid_params",
            "'of' names whose turn ends the effect: give 'until' (start_of_turn or end_of_turn) "
            "with it.",
        )
    save = _optional_str(ctx, cmd, "save")
    dc = _optional_int(ctx, cmd, "dc")
    save_when = _optional_str(ctx, cmd, "save_when")
    if save is not None:
        save = save.lower()
        if save not in ABILITIES:
            ctx.refuse(
                "invalid_params",
                f"A save names an ability ({', '.join(ABILITIES)}), not {save!r}.",
            )
        if dc is None:
            ctx.refuse("invalid_params", f"A {save} save needs a DC (dc).")
        if dc < 1:
            ctx.refuse("invalid_params", f"A save DC is at least 1, not {dc}.")
    elif dc is not None or save_when is not None:
        ctx.refuse(
            "invalid_params",
            "dc and save_when only go with a save: name the ability (save).",
        )
    if save_when is not None and save_when not in _WHEN:
        ctx.refuse("invalid_params", f"save_when is 'start' or 'end', not {save_when!r}.")
    when = _WHEN[save_when or "end"]
    parent = _optional_str(ctx, cmd, "parent")
    if parent is not None and parent not in s.condition_effects and s.asset(parent) is None:
        ctx.refuse(
            "unknown_effect",
            f"There is no condition effect, ongoing effect or asset {parent!r} to be a parent.",
        )
    source = _optional_str(ctx, cmd, "source") or f"GM ({ctx.actor.id})"
    force = cmd.params.get("force") is True
    refuse_immunity(ctx, c, condition, force)
    apply_timed_condition(
        ctx,
        c.id,
        condition,
        rounds=rounds,
        until=until,
        of=until_creature,
        save=save,
        dc=dc,
        save_when=when,
        source=source,
        parent=parent,
        override=force,
    )


def _end(ctx: RuleContext, cmd: Command) -> None:
    eid = cmd.params["effect"]
    if eid not in ctx.state.condition_effects:
        known = ", ".join(ctx.state.condition_effects) or "none"
        ctx.refuse("unknown_effect", f"There is no condition effect {eid!r} (in play: {known}).")
    reason = (cmd.params.get("reason") or "").strip() or f"ended by the GM ({ctx.actor.id})"
    end_effect(ctx, eid, reason)


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "apply_effect",
            _apply,
            "GM: give a creature a condition that lasts rounds, until a turn's start or end, "
            "until it saves, or as long as a parent effect.",
            {
                "creature": Param("creature", True, "the creature affected"),
                "condition": Param("string", True, "the condition's name"),
                "rounds": Param("integer", False, "rounds it lasts, counted at each round's end"),
                "until": Param(
                    "string", False, "start_of_turn or end_of_turn: ends at that point of a turn"
                ),
                "of": Param(
                    "creature", False, "whose next turn 'until' means (default: the creature)"
                ),
                "save": Param("string", False, "the ability it saves with to end it (wis, ...)"),
                "dc": Param("integer", False, "the save's DC"),
                "save_when": Param(
                    "string", False, "start or end: when in its turns it saves (default end)"
                ),
                "parent": Param(
                    "string",
                    False,
                    "a condition effect, an ongoing effect or an asset: this ends when it ends",
                ),
                "source": Param("string", False, "what caused it (a spell, a creature)"),
                "force": Param(
                    "boolean", False, "overrule the creature's immunity to the condition"
                ),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "end_effect_of",
            _end,
            "GM: end a condition effect and every effect descended from it.",
            {
                "effect": Param("string", True, "the condition effect's id"),
                "reason": Param("string", False, "why it ends"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
    )
