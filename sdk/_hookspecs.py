"""Hook specifications: the one door through which rules, built-in or third-party, plug in.

Every built-in rule of zonekeep is a plugin implementing these hooks, loaded from
:data:`zonekeep.plugins.default_plugins`. Rules must never assign to the state they
are given: they announce changes with ``ctx.emit(event)``, which applies the event
to the command's working copy, or refuse with ``ctx.refuse(code, message)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from ._arena import Asset, Link
    from ._commands import CommandSpec
    from ._compendium import CompendiumSource
    from ._conditions import AssetTagSpec, ConditionSpec
    from ._context import MoveRequest, ObserverContext, RollModifier, RollRequest, RuleContext
    from ._custom import EventTypeSpec, StateSpec
    from ._damage import Damage
    from ._errors import Refusal
    from ._events import (
        AssetRemoved,
        AttackMade,
        ConditionEffectEnded,
        Damaged,
        Decision,
        EffectEnded,
        Event,
        Maneuver,
        ZoneAffected,
    )
    from ._features import FeatureSpec
    from ._reactions import ReactionOffer, ReactionOutcome
    from ._settings import SettingSpec
    from ._types import Attack, Creature

PROJECT = "zonekeep"
hookspec = pluggy.HookspecMarker(PROJECT)
#: Decorate plugin functions with this to implement a hook.
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def zonekeep_commands() -> Iterable[CommandSpec]:
    """Declare the commands (actions, moves, GM tools) this plugin adds.

    Called once, when the engine is built.

    :return: the :class:`CommandSpec` objects. Each id is put in the plugin's
        namespace (``ignite`` of plugin ``hazards`` is ``hazards.ignite``; built-ins
        have none); a full id declared twice is an error at start-up that names both
        plugins.
    """


@hookspec
def zonekeep_conditions() -> Iterable[ConditionSpec]:
    """Declare the conditions this plugin gives a meaning to (``"restrained"``, ...).

    Called once, when the engine is built (see :func:`zonekeep.sdk.host.declared_conditions`).
    A condition nobody declares is still allowed on a creature: a label the GM reads.

    :return: the :class:`ConditionSpec` objects, their ids put in the plugin's
        namespace (``hazards.burning``); a full id declared twice is an error at
        start-up that names both plugins.
    """


@hookspec
def zonekeep_asset_tags() -> Iterable[AssetTagSpec]:
    """Declare the asset tags this plugin gives behaviour to (``"collapsing_floor"``).

    Called once, when the engine is built (see :func:`zonekeep.sdk.host.declared_asset_tags`).
    Arena files put tags on assets; a tag nobody declares does nothing. A tag whose
    spec has a ``data_schema`` takes fields in the asset's ``data``, which the arena
    loader checks against it (docs/arenas.md, "Asset data"); hooks read ``asset.data``.

    :return: the :class:`AssetTagSpec` objects, their ids put in the plugin's
        namespace (``hazards.collapsing_floor``); a full id declared twice is an error
        at start-up that names both plugins, and so is a ``data_schema`` outside the
        supported subset.
    """


@hookspec
def zonekeep_event_types() -> Iterable[EventTypeSpec]:
    """Declare the event types this plugin adds, each with a JSON Schema for its
    payload and a reducer folding it into the plugin's own state.

    Called once, when the engine is built. Each id is put in the plugin's namespace
    (``brazier_kicked`` of plugin ``hazards`` is ``hazards.brazier_kicked``); the
    plugin needs a ``ZONEKEEP_PLUGIN`` for that. Emit one with
    ``ctx.emit(plugin_event("hazards.brazier_kicked", brazier="b1"))``: the payload is
    checked against the schema and the reducer runs at once; either failing fails the
    emitting hook (contained, never a bad event in the log). The types are announced in
    ``hello``'s ``capabilities.plugin_events``.

    :return: the :class:`~zonekeep.sdk.EventTypeSpec` objects; a bad schema, a
        template naming a field the schema lacks, or an id declared twice is an error
        at start-up naming the plugin.
    """


@hookspec
def zonekeep_plugin_state() -> Iterable[StateSpec]:
    """Declare the pieces of this plugin's own state: their keys, defaults and who may
    see them.

    Called once, when the engine is built. The state lives in the encounter state
    under the plugin's namespace (``EncounterState.plugin_state["hazards"]``); hooks
    read it with ``ctx.plugin_state("hazards")``; only the reducers of the plugin's
    event types (:func:`zonekeep_event_types`) change it, so a replay rebuilds it. A
    piece with ``visibility="gm"`` (the default) is in the GM's snapshot only.

    :return: the :class:`~zonekeep.sdk.StateSpec` objects; a key declared twice, a
        default that is not JSON-like or a bad visibility is an error at start-up.
    """


@hookspec
def zonekeep_settings() -> Iterable[SettingSpec]:
    """Declare the settings this plugin lets the operator and the GM choose
    (``"burn_die"``), each with a JSON Schema of its value and a default.

    Called once, when the engine is built (see :func:`zonekeep.sdk.host.declared_settings`).
    Settings are keyed by the plugin's name: the operator sets them server-wide
    (``plugin_settings`` in the server's config), the GM per encounter
    (``options.settings`` of ``create_encounter``); rules read the effective value with
    ``ctx.setting(plugin, id)`` (the GM's over the operator's over the default).

    :return: the :class:`SettingSpec` objects; an id that is not a snake_case word or is
        declared twice, a schema outside the supported subset, or a default the schema
        refuses is an error at start-up that names the plugin.
    """


@hookspec
def zonekeep_compendium() -> Iterable[CompendiumSource]:
    """Contribute creatures to the server's compendium (``list_compendium``, roster
    references): stat blocks as data, in named sources.

    Called once, when the server starts (not by the engine, nor per encounter). Each
    :class:`CompendiumSource` names its entries' ids: source ``"fey"`` with an entry
    ``"sprite"`` is ``fey.sprite``. Every entry is checked as a compendium file's are
    (docs/compendium.md).

    :return: the :class:`CompendiumSource` objects (or dicts in the compendium file
        format); a source name another source also declares (a plugin, the built-in
        ``zonekeep.srd``'s ``srd``, an operator's compendium file), an invalid entry or a raise stops the
        server from starting, naming the plugin.
    """


@hookspec
def zonekeep_features() -> Iterable[FeatureSpec]:
    """Declare the creature feature ids this plugin implements: traits (``pack-tactics``),
    actions (``multiattack``) and attack riders (``save-or-condition``), each with the
    JSON Schema of its ``params``.

    Called once, when the engine is built. Each id is put in the plugin's namespace, like
    commands (built-ins have none); creature data may name it by its short name while
    only one plugin declares it. A trait, action or rider whose id no installed plugin
    declares for its kind (or that is marked ``gm``) is shown to the GM as "GM
    adjudicates" with its text and the reason (the snapshot's ``automated`` and ``gm``);
    one whose ``params`` break the declared schema is refused where the creature is
    loaded (``create_encounter``, ``add_creature``), naming the path.

    The behaviour itself comes from the plugin's other hooks (``zonekeep_roll_modifiers``
    reading ``creature.traits``, a command for an action ...); the declaration is what
    tells the GM it is automated.

    :return: the :class:`~zonekeep.sdk.FeatureSpec` objects; an id or schema that is not
        valid, or a ``(kind, id)`` declared twice, is an error at start-up naming the plugin.
    """


@hookspec
def zonekeep_arenas() -> Iterable[Mapping[str, Any]]:
    """Contribute arenas to the server's arena library (``hello``'s arena names,
    ``list_arenas``, ``create_encounter`` by name), beside the operator's arena folders.

    Called once, when the server starts (not by the engine, nor per encounter).

    :return: arena objects in the arena file format (docs/arenas.md), each listed under
        its ``id``. An invalid arena, an id that another plugin's arena also has, or a
        raise stops the server from starting, naming the plugin; an arena file of the
        same name in the operator's folders is used instead of the plugin's (and a
        warning logged), so an operator can always replace one.
    """


@hookspec(firstresult=True)
def zonekeep_action_refusal(
    ctx: RuleContext, creature: Creature, spec: CommandSpec
) -> Refusal | None:
    """Say whether ``creature`` may use ``spec`` now.

    Called before every creature command is handled (after the engine's own turn,
    seat and cost checks), and for every command when listing what a creature may
    do now (:meth:`Engine.available_actions`).

    :param ctx: the rule context, read-only (``ctx.read_only``); read ``ctx.state``:
        ``ctx.emit`` raises there, and counts as this plugin's failure.
    :param creature: the creature that would act.
    :param spec: the command it would use.
    :return: a :class:`Refusal` to forbid it, or ``None`` to allow it.

    Stops at first non-None result.
    """


@hookspec
def zonekeep_roll_modifiers(ctx: RuleContext, roll: RollRequest) -> Iterable[RollModifier] | None:
    """Contribute advantage, disadvantage, expertise, penalty or bonus sources to a roll.

    Called for every attack roll, saving throw, ability check and initiative roll
    before the dice are rolled. Advantage and disadvantage cancel; each distinct
    expertise source grows the expertise die (d4, d6, d8); a ``"penalty"`` modifier
    subtracts a die of its ``die`` sides (Bane's d4), one penalty die per roll, the
    largest; a ``"bonus"`` adds its ``value`` and, with a ``die``, one die of that size
    (:class:`RollModifier`).

    :param ctx: the rule context (read-only use).
    :param roll: what is being rolled, by whom, against whom.
    :return: modifiers to add, or ``None``. Results of all plugins are combined.
    """


@hookspec
def zonekeep_movement_surcharges(
    ctx: RuleContext, creature: Creature, move: MoveRequest
) -> Iterable[str] | None:
    """Name the surcharges that make each foot of a move cost 1 extra foot.

    Called for every move before its cost is computed. Surcharges are
    de-duplicated by name, so difficult terrain never counts twice: the cost is
    ``feet * (1 + number of distinct names)``.

    :param ctx: the rule context (read-only use).
    :param creature: the creature moving.
    :param move: the move asked for.
    :return: names such as ``"difficult"``, ``"crawling"``, ``"squeezing"``, or ``None``.
    """


@hookspec
def zonekeep_turn_start(ctx: RuleContext, creature: Creature) -> None:
    """Trigger effects at the start of ``creature``'s turn.

    Called right after the ``turn_started`` event is applied. Emit events with
    ``ctx.emit``.

    :param ctx: the rule context.
    :param creature: the creature whose turn starts.
    """


@hookspec
def zonekeep_turn_end(ctx: RuleContext, creature: Creature) -> None:
    """Trigger effects at the end of ``creature``'s turn.

    Called just before the ``turn_ended`` event is emitted. Emit events with
    ``ctx.emit``.

    :param ctx: the rule context.
    :param creature: the creature whose turn ends.
    """


@hookspec
def zonekeep_round_start(ctx: RuleContext, round: int) -> None:
    """Trigger effects at the start of a round.

    Called right after ``round_started``, before the first turn of the round.

    :param ctx: the rule context.
    :param round: the round number, starting at 1.
    """


@hookspec
def zonekeep_round_end(ctx: RuleContext, round: int) -> None:
    """Trigger effects at the end of a round.

    Called after the last turn of the round ended, before ``round_ended``.

    :param ctx: the rule context.
    :param round: the round that ends.
    """


@hookspec
def zonekeep_end_blockers(ctx: RuleContext) -> Iterable[str] | None:
    """Name what keeps the encounter from ending: time-sensitive threats.

    Called when the rules check whether the encounter is over, and when the GM
    asks to end it.

    :param ctx: the rule context (read-only use).
    :return: sentences such as ``"Aria is dying"``, or ``None``.
    """


@hookspec(firstresult=True)
def zonekeep_encounter_over(ctx: RuleContext) -> str | None:
    """Say whether the fight itself is over, and why.

    Called after every command while turns are being taken, unless the GM chose to
    keep the encounter going. The encounter ends only if no
    ``zonekeep_end_blockers`` remain.

    :param ctx: the rule context (read-only use).
    :return: the reason (``"the goblins are all defeated"``), or ``None``.

    Stops at first non-None result.
    """


@hookspec
def zonekeep_decision_resolved(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...], defaulted: bool
) -> None:
    """Carry out an answered decision.

    Called after the ``decision_resolved`` event for ``decision`` is applied,
    whether a person answered or the default applied (``defaulted``). The plugin
    that opened decisions of ``decision.kind`` emits what follows from the choice.

    :param ctx: the rule context.
    :param decision: the decision, as it was opened.
    :param choice: the validated answer: an ordering of all options when
        ``decision.ordering``, otherwise a single option.
    :param defaulted: true when nobody answered and the default applied.
    """


@hookspec
def zonekeep_before_attack(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, reaction: bool
) -> None:
    """Check and prepare an attack before any die is rolled.

    Called for every attack (actions, reactions, readied attacks) after the
    attack and target are known. Refuse with ``ctx.refuse`` (out of range, no
    room to engage); emit what declaring it causes (a melee attack engages).

    :param ctx: the rule context.
    :param attacker: the creature attacking.
    :param target: the creature attacked.
    :param attack: the attack used.
    :param reaction: true for opportunity attacks and other reactions.
    """


@hookspec(firstresult=True)
def zonekeep_attack_redirect(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> str | None:
    """Make another creature the target of an attack, as a reaction of the target's side
    played by the server with no prompt (a reaction that is its controller's choice is
    offered with ``zonekeep_attack_reactions``).

    Called for every attack on a target with ``actions`` (a reaction is one of the
    creature's actions: a target without any is never asked) once the attack and its
    target are known, before
    ``zonekeep_before_attack`` and any die. The plugin that answers emits what the
    redirection costs and causes (the ``action_taken`` of the reaction spent) and names
    the new target; the attack then goes on against it (``zonekeep_before_attack``, the
    roll, the damage). Asked once per attack: a redirected attack is not redirected again.

    :param ctx: the rule context.
    :param attacker: the creature attacking.
    :param target: the creature attacked.
    :param attack: the attack used.
    :return: the id of the new target (a creature in the fight, not the attacker), or
        ``None`` to leave the target as it is.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_hit_reaction(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack, total: int, ac: int
) -> int | None:
    """Raise the target's AC against an attack roll that would hit it, as a reaction the
    server plays with no prompt (one the controller chooses: ``zonekeep_attack_reactions``).

    Called after the attack roll, for a target with ``actions`` (a reaction is one of
    them), only when the roll (``total``, not a natural 20) meets
    the AC (``ac``, with every ``zonekeep_armor_class_bonus`` added): the plugin that
    answers spends what it costs (the target's reaction: an ``action_taken`` event) and
    returns the bonus; the attack hits only when ``total`` still meets ``ac`` plus it.
    The ``attack_made`` event carries the AC with the bonus (``target_ac``). A plugin answers only when
    its reaction turns the hit into a miss, or says why it spends it anyway.

    :param ctx: the rule context.
    :param attacker: the creature attacking.
    :param target: the creature hit.
    :param attack: the attack used.
    :param total: the attack roll's total.
    :param ac: the AC it is compared with.
    :return: an AC bonus (whole number), or ``None``.

    Stops at first non-None result.
    """


@hookspec
def zonekeep_attack_reactions(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    moment: str,
    total: int | None,
    ac: int | None,
) -> Iterable[ReactionOffer] | None:
    """Offer reactions to an attack, as decisions for the reactors' controllers.

    Called at three moments of every attack (the reactor may be the target, or anyone:
    a Shield, a protecting ally): ``"targeted"``, once the attack and its target are
    known and ``zonekeep_before_attack`` accepted it, before any die (``total`` and
    ``ac`` are ``None``); ``"hit"``, after a roll that would hit (not a critical hit), with the
    roll's ``total`` and the ``ac`` it meets (every bonus so far added); ``"damage"``,
    once the attack hits (a critical hit too), before its damage is rolled, with the
    same ``total`` and ``ac`` (a reaction that halves or reduces the damage: an
    Uncanny Dodge). The first offer
    whose creature was not yet asked at that moment, and still has its reaction,
    becomes a decision (:func:`~zonekeep.sdk.offer_reaction`) and the attack waits for
    it; once it closes, the hook is asked again (the creatures asked are left out),
    until nobody more is offered. Offer only what may be taken now (the reaction
    unspent, the creature able to see, in reach...): say nothing otherwise.

    :param ctx: the rule context (read-only use: open nothing, emit nothing).
    :param attacker: the creature attacking.
    :param target: the creature attacked.
    :param attack: the attack used.
    :param moment: ``"targeted"``, ``"hit"`` or ``"damage"``.
    :param total: the attack roll's total (at ``"hit"`` and ``"damage"``).
    :param ac: the AC it meets (at ``"hit"`` and ``"damage"``).
    :return: :class:`~zonekeep.sdk.ReactionOffer` objects, or ``None``.
    """


@hookspec(firstresult=True)
def zonekeep_reaction_taken(
    ctx: RuleContext, decision: Decision, choice: tuple[str, ...]
) -> ReactionOutcome | None:
    """Carry out a reaction its controller took (a choice other than ``decline``).

    Called when a decision opened by :func:`~zonekeep.sdk.offer_reaction` for an
    attack closes with one of the offer's options; the plugin that opened decisions of
    ``decision.kind`` checks that the reaction may still be taken, emits what it costs
    (the reactor's reaction: an ``action_taken`` event) and what it does (a swap of
    places), and says what it changes in the attack. The attack then resumes
    (:class:`~zonekeep.sdk.AttackTrigger` in ``decision.trigger``).

    :param ctx: the rule context.
    :param decision: the decision, as it was opened (``creature`` is the reactor).
    :param choice: the option chosen (one of them).
    :return: a :class:`~zonekeep.sdk.ReactionOutcome`, or ``None`` (nothing changes).

    Stops at first non-None result.
    """


@hookspec
def zonekeep_provocations(
    ctx: RuleContext, creature: Creature, maneuver: Maneuver
) -> Iterable[str] | None:
    """Name the creatures offered an opportunity attack against the maneuver's next step.

    Called once before each step of a maneuver (entering or passing through a
    zone, taking or leaving a position, moving adjacent, withdrawing from an
    enemy's reach), by the built-in ``zonekeep_opportunity_attackers``, which drops
    those who cannot react (no reaction left, incapacitated, refused by
    ``zonekeep_action_refusal``), and all of them when the mover disengaged or
    tumbled successfully.

    :param ctx: the rule context (read-only use).
    :param creature: the creature moving.
    :param maneuver: the maneuver; ``maneuver.steps[maneuver.step]`` is the next step.
    :return: creature ids, or ``None``.
    """


@hookspec(firstresult=True)
def zonekeep_maneuver_step(ctx: RuleContext, maneuver: Maneuver) -> bool | None:
    """Perform the next step of a maneuver of a kind this plugin owns.

    Called when the step's reactions are settled. Emit the step's events (the
    zone entered, the position taken).

    :param ctx: the rule context.
    :param maneuver: the maneuver; perform ``maneuver.steps[maneuver.step]``.
    :return: ``True`` when this plugin performed it, ``None`` otherwise.

    Stops at first non-None result.
    """


@hookspec
def zonekeep_zone_entered(
    ctx: RuleContext, creature: Creature, from_zone: str, forced: bool
) -> None:
    """Trigger effects when a creature has entered a zone.

    Called after every ``zone_entered`` event (own moves, forced movement, GM
    moves). ``creature.zone`` is the new zone.

    :param ctx: the rule context.
    :param creature: the creature, as it is now.
    :param from_zone: the zone it left (or passed through).
    :param forced: whether it was forced (or placed by the GM).
    """


@hookspec
def zonekeep_position_taken(
    ctx: RuleContext, creature: Creature, asset: Asset, forced: bool
) -> None:
    """Trigger effects when a creature has taken position at or in an asset.

    Called after every ``position_taken`` event, including forced movement into
    an asset and the targets of a new ongoing effect.

    :param ctx: the rule context.
    :param creature: the creature.
    :param asset: the prop, element, terrain or ongoing effect.
    :param forced: true when it was forced there.
    """


@hookspec
def zonekeep_position_left(ctx: RuleContext, creature: Creature, asset: Asset) -> None:
    """Trigger effects when a creature has left a position (on purpose or by leaving the zone).

    Called after every ``position_left`` event.

    :param ctx: the rule context.
    :param creature: the creature.
    :param asset: the asset it left.
    """


@hookspec
def zonekeep_armor_class_bonus(
    ctx: RuleContext, target: Creature, attacker: Creature, attack: Attack
) -> int | None:
    """Add to ``target``'s armor class against one attack (cover from a position, a spell).

    Called for every attack roll, after ``zonekeep_before_attack``.

    :param ctx: the rule context (read-only use).
    :param target: the creature attacked.
    :param attacker: the attacker.
    :param attack: the attack.
    :return: a bonus (or penalty) to add, or ``None``. All plugins' bonuses add up.
    """


@hookspec
def zonekeep_attacks_per_action(ctx: RuleContext, creature: Creature) -> int | None:
    """Say how many attacks ``creature``'s Attack action makes (a fighter's Extra Attack: 2).

    Called when the ``attack`` command spends an action; the attacks beyond the first
    are granted at once (``action_granted``, cost ``attack``) and each later ``attack``
    command that turn spends one of them instead of an action.

    :param ctx: the rule context (read-only use).
    :param creature: the attacker.
    :return: the number of attacks (1 to 4), or ``None``. The highest answer wins;
        without one, the Attack action makes one attack.
    """


@hookspec(firstresult=True)
def zonekeep_attack_damage(
    ctx: RuleContext, attacker: Creature, target: Creature, attack: Attack
) -> str | None:
    """Name other damage dice for a hit of ``attack`` than its own ``damage`` (a
    versatile weapon wielded with two hands: ``"1d10+3"`` for a ``"1d8+3"`` longsword).

    Called by the built-in attack (``zonekeep.combat``'s ``make_attack``: actions,
    opportunity attacks, readied attacks) on every hit, right before the damage is
    rolled (doubled dice on a critical hit). The damage type stays the attack's.

    :param ctx: the rule context (read-only use).
    :param attacker: the attacker.
    :param target: the creature hit.
    :param attack: the attack.
    :return: the dice (``"1d10+3"``), or ``None`` for the attack's own. An answer that
        is not dice is the plugin's failure (skipped).

    Stops at first non-None result.
    """


@hookspec
def zonekeep_jump_distance(ctx: RuleContext, creature: Creature, running: bool) -> int | None:
    """Let ``creature`` long-jump farther than its Strength allows (a bulette's Standing
    Leap: 30 ft, with or without a running start).

    Called by the built-in movement rule (``zonekeep.movement``) for every jump (the
    ``move`` command in mode ``jump``), before the distance is checked.

    :param ctx: the rule context (read-only use).
    :param creature: the creature jumping.
    :param running: whether it ran at least 10 ft on foot right before (a running jump).
    :return: how far it can jump, in feet, or ``None``. The highest answer counts when
        it beats the Strength rule (the score after a run-up, half without); answers
        below 0 are ignored.
    """


@hookspec
def zonekeep_critical_threshold(ctx: RuleContext, attacker: Creature, attack: Attack) -> int | None:
    """Lower the natural d20 roll from which ``attacker``'s attack roll is a critical hit
    (a champion fighter's Improved Critical: 19).

    Called for every attack roll, after the d20 is rolled. A critical hit always hits and
    doubles the damage dice.

    :param ctx: the rule context (read-only use).
    :param attacker: the attacker.
    :param attack: the attack.
    :return: the lowest natural roll that is a critical hit (2 to 20), or ``None``. The
        lowest answer wins; without one, only a natural 20 is.
    """


@hookspec(firstresult=True)
def zonekeep_zero_hit_points(ctx: RuleContext, creature: Creature) -> str | None:
    """Name the condition a creature gets when damage leaves it at 0 hit points.

    Called by :func:`zonekeep.sdk.apply_damage` right after the ``damaged`` event that
    brought ``creature`` to 0, unless it is already dying or out of the fight. The
    condition is applied with :func:`zonekeep.sdk.apply_condition` (so
    ``zonekeep_condition_applied`` runs). The built-in rule (``zonekeep.combat``): a
    PC is ``dying``, an NPC ``defeated``.

    :param ctx: the rule context (read-only use).
    :param creature: the creature, as it is now (``hp`` is 0).
    :return: the condition (``"dying"``, ``"defeated"``), or ``None`` for no answer;
        when no plugin answers, the creature gets no condition.

    Stops at first non-None result.
    """


@hookspec
def zonekeep_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    """Trigger effects when a creature has been given a condition it did not have.

    Called by ``ctx.emit`` right after any event that gives a creature a condition it
    did not hold (``condition_applied``, ``condition_effect_applied``), whoever emitted
    it: :func:`zonekeep.sdk.apply_condition`, :func:`zonekeep.sdk.apply_timed_condition`
    or a plugin's own event. Not called when the creature already had it, nor for a
    condition it is immune to (it is not given). The engagement plugin ends the
    engagements of a creature that is now dying, defeated, surrendered or escaped
    (docs/rules.md, "Rulings"); the conditions plugin makes an
    unconscious creature fall prone.

    :param ctx: the rule context.
    :param creature: the creature, as it is now.
    :param condition: the condition it was given.
    """


@hookspec
def zonekeep_condition_removed(
    ctx: RuleContext, creature: Creature, condition: str, reason: str, expired: bool
) -> None:
    """Trigger effects when a creature has lost a condition.

    Called by ``ctx.emit`` right after any event that takes a condition away
    (``condition_removed``; ``condition_effect_ended`` when no other effect or plain
    hold keeps it), once per creature and condition. Not called when the creature
    keeps the condition from another source.

    :param ctx: the rule context.
    :param creature: the creature, as it is now (without the condition).
    :param condition: the condition it lost.
    :param reason: the event's reason ("stood up", "its rounds ran out ...").
    :param expired: true when its duration ran out (a timed condition's rounds, the
        turn boundary it lasted until, a successful save, its parent effect ending);
        false when it was removed (the GM, a rule, standing up).
    """


@hookspec
def zonekeep_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    """Trigger effects after an attack, hit or miss.

    Called by the built-in attack (``zonekeep.combat``'s ``make_attack``: actions,
    opportunity attacks, readied attacks) once the ``attack_made`` event and, on a
    hit, the damage are applied.

    :param ctx: the rule context.
    :param attacker: the attacker, as it is now.
    :param target: the target, as it is now (after the damage).
    :param attack: the attack used.
    :param result: the ``attack_made`` event: the roll, the AC, ``hit``, ``critical``.
    :param damage: the ``damaged`` event of a hit (its roll, raw amount and steps), or
        ``None`` for a miss.
    """


@hookspec
def zonekeep_modify_damage(ctx: RuleContext, damage: Damage) -> Damage | None:
    """See, and change, an instance of damage before it applies.

    Called by :func:`zonekeep.sdk.apply_damage` for every instance of damage (attacks,
    areas, assets, conditions, the GM's ``damage``), before the target's own
    immunity, resistance and vulnerability. The implementations run one after the
    other in hook order (the last registered first, ``tryfirst`` ones before and
    ``trylast`` ones after), each receiving the damage as the one before left it.

    :param ctx: the rule context (read-only use).
    :param damage: the :class:`~zonekeep.sdk.Damage`: target, amount, type, source,
        attacker, attack, critical, and the steps so far.
    :return: a changed copy made with ``damage.add``, ``reduce``, ``convert``,
        ``cancel`` or ``grant`` (each records its step), or ``None`` to leave it as it
        is. An answer about another target is the plugin's failure (skipped).
    """


@hookspec
def zonekeep_after_damage(ctx: RuleContext, creature: Creature, damage: Damaged) -> None:
    """Trigger effects after an instance of damage applied, seeing its final amount.

    Called by :func:`zonekeep.sdk.apply_damage` (attacks, areas, assets, conditions,
    :func:`zonekeep.sdk.affect_zone`, the GM's ``damage``) right after the ``damaged``
    event and, when it left the target at 0 hit points, the condition that follows
    (``zonekeep_zero_hit_points``). So the events an implementation emits come after
    the hit's own ``damaged``; those a ``zonekeep_modify_damage`` implementation would
    emit come before it (emit here instead).

    :param ctx: the rule context.
    :param creature: the creature damaged, as it is now.
    :param damage: the ``damaged`` event: the final ``amount`` (after every plugin,
        immunity, resistance and vulnerability; 0 when nothing got through), ``hp``,
        ``damage_type``, the ``raw`` amount and type, the ``steps`` and the ``roll``.
    """


@hookspec
def zonekeep_effect_ended(
    ctx: RuleContext, ended: ConditionEffectEnded | EffectEnded | AssetRemoved
) -> None:
    """Trigger effects when something ongoing ends, whatever ended it.

    Called by ``ctx.emit`` right after each ``condition_effect_ended`` (a timed
    condition: the GM's ``end_effect``, its rounds or turn running out, a successful
    save, its parent ending; ``expired`` tells the duration and the save from the GM),
    ``effect_ended`` (an ongoing area: the GM, a rule) and ``asset_removed`` (an asset
    taken out of the arena) event, after the condition hooks that event set off. The
    built-in durations plugin ends here the timed conditions tied to an area or an asset
    (``apply_timed_condition``'s ``parent``) that ended.

    :param ctx: the rule context.
    :param ended: the event: its ``effect`` or ``asset`` id, and why.
    """


@hookspec
def zonekeep_zone_affected(ctx: RuleContext, effect: ZoneAffected) -> None:
    """Trigger effects when an effect is aimed at a zone, occupied or not.

    Called by :func:`zonekeep.sdk.affect_zone` after the ``zone_affected`` event and the
    damage to the creatures in the zone: a web in it burns, oil catches fire.

    :param ctx: the rule context.
    :param effect: the ``zone_affected`` event: ``zone``, ``damage_type``, ``damage``
        (the amount before each creature's defences), ``roll`` and ``source``.
    """


@hookspec(firstresult=True)
def zonekeep_save_fails(ctx: RuleContext, creature: Creature, ability: str) -> str | None:
    """Say whether a saving throw fails whatever the roll.

    Called by :func:`zonekeep.sdk.saving_throw` before every save. The built-in rule
    (``zonekeep.conditions``): a stunned, paralyzed or unconscious creature fails
    Strength and Dexterity saves.

    :param ctx: the rule context (read-only use).
    :param creature: the creature saving.
    :param ability: the ability (``"str"``, ``"dex"``, ...).
    :return: the reason (``"paralyzed"``), recorded in the ``save_made`` event's
        ``automatic_failure``; ``None`` to let the roll decide.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_condition_immunity(ctx: RuleContext, creature: Creature, condition: str) -> str | None:
    """Say that a creature cannot be given a condition right now (an immunity that
    depends on the moment: "cannot be frightened while it sees an ally").

    Called by :func:`zonekeep.sdk.apply_condition` and
    :func:`zonekeep.sdk.apply_timed_condition` when the creature's own
    ``condition_immunities`` do not already list the condition; an answer makes it
    prevented exactly as those do (a ``condition_prevented`` event, nothing given)
    unless the caller overrides immunities (the GM).

    :param ctx: the rule context (read-only use).
    :param creature: the creature about to be given the condition.
    :param condition: the condition's full id (``"frightened"``).
    :return: why it is immune (shown in the logs), or ``None``.

    Stops at first non-None result.
    """


@hookspec
def zonekeep_event_applied(ctx: ObserverContext, event: Event) -> None:
    """Observe every event, right after it is applied: a log, a statistic, a UI hint.

    Called by ``ctx.emit`` for each event a command's rules emit (not for
    ``encounter_created``, not during replay, not for the ``plugin_error`` events an
    observer's own failure causes), before the triggers that event sets off.

    :param ctx: a restricted, read-only :class:`~zonekeep.sdk.ObserverContext`:
        ``ctx.state`` (as it is right after the event) and ``ctx.actor``. It has no dice
        and ``ctx.emit`` raises; a failing observer is skipped and reported to the GM
        (``plugin_error``), and never changes or refuses the command.
    :param event: the event just applied. Any answer but nothing is the plugin's
        failure.
    """


@hookspec
def zonekeep_zone_leaving(ctx: RuleContext, creature: Creature, to_zone: str, forced: bool) -> None:
    """Trigger effects when a creature is about to leave its zone.

    Called by :func:`zonekeep.sdk.change_zone` (own moves, each zone of a move
    that goes on, forced movement, GM moves) after the positions held in the old
    zone were left and before the ``zone_entered`` event. The engagement plugin
    ends every engagement and adjacency of the creature here, each with its event.

    :param ctx: the rule context.
    :param creature: the creature, still in the zone it leaves (``creature.zone``).
    :param to_zone: the zone it is about to enter.
    :param forced: whether it is forced (or placed by the GM).
    """


@hookspec(firstresult=True)
def zonekeep_opportunity_attackers(
    ctx: RuleContext, creature: Creature, maneuver: Maneuver
) -> Iterable[str] | None:
    """Decide who is offered an opportunity attack before a maneuver's next step.

    Called once before each step of a maneuver (see ``zonekeep_provocations``).
    The SDK opens one ``opportunity_attack`` decision for each creature named, in
    order, and the maneuver waits for the answers. The built-in rule
    (``zonekeep.engagement``) gathers ``zonekeep_provocations`` and keeps the
    enemies that can react (a reaction left, a melee attack, not incapacitated, not
    refused by ``zonekeep_action_refusal``); nobody when the mover disengaged this
    turn or its Tumble succeeds (it rolls the Tumble here, a ``tumble_attempted``
    event).

    :param ctx: the rule context.
    :param creature: the creature moving.
    :param maneuver: the maneuver; ``maneuver.steps[maneuver.step]`` is the next step.
    :return: creature ids (an empty list: nobody), or ``None`` for no answer; when
        no plugin answers, nobody is offered one.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_next_turn(ctx: RuleContext) -> tuple[int, int] | None:
    """Say whose turn comes next: a ``(slot, member)`` position in the initiative order.

    Called by :func:`zonekeep.sdk.advance` when a turn ended (or a round started,
    or a turn was skipped), with ``ctx.state.turn_slot``/``turn_member`` at the
    turn just over (``-1, -1`` at the start of a round). The built-in rule
    (``zonekeep.initiative``): the next member of the current slot, else the
    first member of the next slot; the order stays fixed from round to round.

    :param ctx: the rule context (read-only use).
    :return: ``(slot, member)`` indices into ``ctx.state.initiative`` and that
        slot's ``members``; a slot equal to ``len(ctx.state.initiative)`` ends the
        round; ``None`` for no answer (when no plugin answers, the round ends).

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_skip_turn(ctx: RuleContext, creature: Creature) -> str | None:
    """Say why ``creature`` does not take the turn that comes to it.

    Called by :func:`zonekeep.sdk.advance` for each creature whose turn comes up,
    before ``turn_started``. A skipped turn is a ``turn_skipped`` event with the
    reason; it neither starts nor ends, so no turn trigger runs. The built-in rule
    (``zonekeep.turns``): a creature out of the fight (defeated, surrendered,
    escaped) is skipped.

    :param ctx: the rule context (read-only use).
    :param creature: the creature whose turn it would be.
    :return: the reason (``"out of the fight"``), or ``None`` to let it take its turn.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_area_max_targets(ctx: RuleContext, shape: str, size: int, width: int) -> int | None:
    """Say how many targets an area of effect can have.

    Called by the ``area_effect`` command once its parameters are checked. The
    built-in rule (``zonekeep.areas``) is the arena text's table of area
    targets (``arena.txt:29.1``-``33.1``): the largest row the area equals or exceeds (2, 3, 5 or 8), 1 below
    the first row.

    :param ctx: the rule context (read-only use).
    :param shape: ``cone``, ``cube``, ``sphere``, ``cylinder`` or ``line``.
    :param size: feet: a cone's or line's length, a cube's side, a sphere's or
        cylinder's radius.
    :param width: a line's width in feet (5 for the other shapes).
    :return: the maximum number of target slots, or ``None`` for no answer (when no
        plugin answers: 1).

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_area_target_weight(ctx: RuleContext, creature: Creature) -> int | None:
    """Say how many of an area's target slots ``creature`` fills.

    Called by the ``area_effect`` command for each chosen target. A creature whose
    weight does not fit the slots left may still be chosen while one slot remains;
    it then gains an expertise die on its save. The built-in rule
    (``zonekeep.areas``): Huge 2, Gargantuan 3, Colossal 4, anything smaller 1.

    :param ctx: the rule context (read-only use).
    :param creature: the target.
    :return: the number of slots, or ``None`` for no answer (when no plugin
        answers: 1).

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_area_zones(
    ctx: RuleContext, zone: str, largest_dimension: int
) -> Iterable[str] | None:
    """Say which zones an area aimed at ``zone`` affects.

    Called by the ``area_effect`` command once the target zone is known to be in
    range. The built-in rule (``zonekeep.areas``): the target zone, and every zone
    linked to it when ``largest_dimension`` exceeds its size. Whatever the answer,
    the target zone is affected (and listed first); zones the arena does not have
    are ignored.

    :param ctx: the rule context (read-only use).
    :param zone: the target zone's id.
    :param largest_dimension: the area's largest dimension in feet (a cone's
        length, a cube's side, a sphere's diameter, a line's length).
    :return: zone ids, or ``None`` for no answer (when no plugin answers: the
        target zone only).

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_link_crossing(ctx: RuleContext, creature: Creature, link: Link) -> str | None:
    """Let ``creature`` cross a link that has no clear path (a wall it climbs like a
    spider, a wall an incorporeal creature passes through).

    Called by the built-in zones rule (``zonekeep.zones``) for each link without a
    clear path (``link.clear`` false) between the zone a creature is in and a zone it
    would enter: when its ``enter`` is checked, before each step of the move, and when
    listing where it can go. Read-only (``ctx.emit`` raises). An answer opens the link
    for this creature as a clear one would: the link's ``mode`` still applies (a
    ``fly`` link needs a flying speed; climbing or swimming without that speed costs
    double), and so do the zone's capacity and the other rules of entering.

    :param ctx: the rule context (read-only use).
    :param creature: the creature that would cross.
    :param link: the link, from the arena (``link.a``/``link.b``, ``link.mode``).
    :return: a short reason (``"spider climb"``) to let it cross, or ``None``.

    Stops at first non-None result.
    """


@hookspec(firstresult=True)
def zonekeep_zone_refusal(ctx: RuleContext, creature: Creature, zone: str) -> Refusal | None:
    """Say whether ``creature`` may come into ``zone``.

    Called by :func:`zonekeep.sdk.zone_room` before a creature enters a zone, is
    forced or moved there by the GM, or is added there mid-encounter (never for a
    creature already in it). The built-in rule (``zonekeep.zones``) is the zone's
    capacity [``size_limits``]: occupancy counts Tiny 0, Small and Medium 1, Large 2,
    Huge 3, Gargantuan 4, Colossal 5, and the occupancy after it comes in may be at
    most the capacity + 1 (refusal ``zone_full``).

    :param ctx: the rule context (read-only use).
    :param creature: the creature that would come in.
    :param zone: the zone's id.
    :return: a :class:`Refusal` to keep it out, or ``None`` to let it in.

    Stops at first non-None result.
    """
