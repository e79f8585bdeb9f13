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
- ``leadership`` (the knight; the ``leadership`` command, an action, one use per short
  or long rest): for ``rounds`` rounds the knight has the ``leadership`` condition; while
  it has it and is not incapacitated, each creature of its side (not itself) within
  ``within`` feet of it in its sight (the zone rules' distances) and not deafened adds a
  d4 to its attack rolls and saving throws: the roll's expertise die
  (``RollModifier("expertise", "leadership")``; one die however many knights). The
  effect ends when the knight is incapacitated.
- ``fetid-cloud`` (the dretch; the ``fetid_cloud`` command, an action, once a day): a
  cloud of gas (an element asset, ``Fetid Cloud``) fills the dretch's zone (a 10-ft
  radius around it: its zone, the zone rules' nearest) for ``rounds`` rounds (to the end
  of the round ``rounds - 1`` after this one). A creature that starts its turn there
  makes the Constitution save or is poisoned until the start of its next turn; poisoned
  this way it takes an action or a bonus action on its turn, not both, and no reactions
  (``zonekeep_action_refusal``). The lightly obscured area is left to the GM.
- ``rampage`` (the gnoll, the giant hyena; the ``rampage`` command, a bonus action): once
  it reduces a creature to 0 hit points with a melee attack on its turn (it is then
  "ready to rampage": its resource ``rampage`` is 1 until the end of that turn), it may
  move up to half its speed more (taken as a Dash less the other half: its movement
  grows by half its speed) and make one more attack, its bite (``action_granted`` of
  an ``attack``: the next ``attack`` command, with the bite, spends it).
- ``web`` (the ettercap, the giant spider; the ``web`` command, an action, recharge 5-6):
  a ranged attack roll (``bonus``) at a creature in sight within ``long_range`` ft
  (disadvantage beyond ``range``; no larger than ``max_size``), against its AC; a hit
  restrains it, held by a web (an element asset, ``Web``, in its zone, that keeps the
  web's AC and hit points) that the restrained condition lasts as long as. The creature
  escapes with the ``escape_web`` command (an action: a Strength check against
  ``escape_dc``); anyone may attack the web (``attack_web``: one of its attacks against
  the web's AC; the damage through the web's vulnerabilities and immunities), and at 0
  hit points it is destroyed: both end the restraint.
"""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.sdk import (
    Action,
    ActionGranted,
    ActionTaken,
    Asset,
    Attack,
    AttackMade,
    Command,
    CommandSpec,
    ConditionEffectEnded,
    ConditionSpec,
    Creature,
    Damage,
    Damaged,
    Dashed,
    Decision,
    EncounterState,
    FeatureSpec,
    MovementSpent,
    Param,
    ReactionOffer,
    ReactionOutcome,
    Refusal,
    ResourceRestored,
    ResourceSpent,
    RollModifier,
    RollRequest,
    RuleContext,
    ability_check,
    apply_timed_condition,
    change_asset,
    defend,
    hookimpl,
    place_asset,
    saving_throw,
    spend_use,
)

from ._actions import _distance

#: The hook implementations, imported by the package (plugins/srd/__init__.py) under
#: these names: pluggy registers each for its ``specname`` beside the package's own.
__all__ = [
    "srd_reactions_action_refusal",
    "srd_reactions_attack",
    "srd_reactions_attack_made",
    "srd_reactions_commands",
    "srd_reactions_condition_applied",
    "srd_reactions_conditions",
    "srd_reactions_features",
    "srd_reactions_roll_modifiers",
    "srd_reactions_round_end",
    "srd_reactions_taken",
    "srd_reactions_turn_end",
    "srd_reactions_turn_start",
]

#: The decision kinds this module opens.
PARRY = "parry"
REDIRECT = "redirect_attack"
#: The condition a knight has while its Leadership lasts.
LEADING = "leadership"
#: The size categories a web's ``max_size`` names, smallest first.
_SIZES = ["Tiny", "Small", "Medium", "Large", "Huge", "Gargantuan"]


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
        FeatureSpec(
            "leadership",
            "action",
            {
                "type": "object",
                "properties": {
                    "within": {"type": "integer", "minimum": 5, "maximum": 120},
                    "bonus_die": {"const": "1d4"},
                    "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "additionalProperties": False,
            },
            "The `leadership` command (an action, its uses): for `rounds` rounds, the "
            "creatures of its side within `within` ft in its sight (not deafened) add a d4 "
            "to attack rolls and saves (an expertise die), until it is incapacitated.",
        ),
        FeatureSpec(
            "fetid-cloud",
            "action",
            {
                "type": "object",
                "required": ["save"],
                "properties": {
                    "area": {
                        "type": "object",
                        "properties": {
                            "shape": {"const": "radius"},
                            "size": {"type": "integer", "minimum": 5, "maximum": 30},
                        },
                        "additionalProperties": False,
                    },
                    "save": {
                        "type": "object",
                        "required": ["ability", "dc"],
                        "properties": {
                            "ability": {"enum": ["str", "dex", "con", "int", "wis", "cha"]},
                            "dc": {"type": "integer", "minimum": 1, "maximum": 30},
                        },
                        "additionalProperties": False,
                    },
                    "condition": {"const": "poisoned"},
                    "rounds": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "additionalProperties": False,
            },
            "The `fetid_cloud` command (an action, its uses): a cloud fills its zone for "
            "`rounds` rounds; a creature starting its turn there saves or is poisoned until "
            "the start of its next turn, with an action or a bonus action, not both, and no "
            "reactions.",
        ),
        FeatureSpec(
            "rampage",
            "action",
            {
                "type": "object",
                "properties": {
                    "attack": {"type": "string", "minLength": 1},
                    "move": {"const": "half"},
                },
                "additionalProperties": False,
            },
            "The `rampage` command (a bonus action), once it dropped a creature to 0 hit "
            "points with a melee attack on its turn: half its speed more movement and one "
            "more attack, its bite.",
        ),
        FeatureSpec(
            "web",
            "action",
            {
                "type": "object",
                "required": ["bonus", "range", "escape_dc", "web"],
                "properties": {
                    "bonus": {"type": "integer", "minimum": -5, "maximum": 20},
                    "range": {"type": "integer", "minimum": 5, "maximum": 600},
                    "long_range": {"type": "integer", "minimum": 5, "maximum": 600},
                    "condition": {"const": "restrained"},
                    "escape_dc": {"type": "integer", "minimum": 1, "maximum": 30},
                    "max_size": {"enum": _SIZES},
                    "web": {
                        "type": "object",
                        "required": ["ac", "hp"],
                        "properties": {
                            "ac": {"type": "integer", "minimum": 1, "maximum": 30},
                            "hp": {"type": "integer", "minimum": 1, "maximum": 100},
                            "vulnerabilities": {"type": "array", "items": {"type": "string"}},
                            "immunities": {"type": "array", "items": {"type": "string"}},
                        },
                        "additionalProperties": False,
                    },
                },
                "additionalProperties": False,
            },
            "The `web` command (an action, its recharge): a ranged attack roll; a hit "
            "restrains the target in a web (AC, hit points, defences) until it escapes "
            "(`escape_web`, a Strength check) or the web is destroyed (`attack_web`).",
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


# -- leadership ---------------------------------------------------------------------------


@hookimpl(specname="zonekeep_conditions")
def srd_reactions_conditions() -> Iterable[ConditionSpec]:
    return (
        ConditionSpec(
            LEADING,
            "Leadership: the creatures of its side within 30 ft that it sees add a d4 to "
            "their attack rolls and saving throws while it is not incapacitated.",
            durations=("rounds",),
        ),
    )


def _leads(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "leadership") is None:
        return ("no_such_feature", f"{me.name} has no Leadership.")
    return None


def _leadership(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "leadership")
    assert action is not None  # (requires)
    spend_use(ctx, me, action)
    for effect in list(ctx.state.condition_effects.values()):
        if effect.creature == me.id and effect.condition == LEADING:  # a new minute
            ctx.emit(ConditionEffectEnded(effect.id, me.id, LEADING, "used again"))
    apply_timed_condition(
        ctx, me.id, LEADING, rounds=int(action.params.get("rounds", 10)), source=me.id
    )


@hookimpl(specname="zonekeep_commands")
def srd_reactions_commands() -> Iterable[CommandSpec]:
    return (
        CommandSpec(
            "leadership",
            _leadership,
            "Action: Leadership: for 1 minute, the creatures of your side within 30 ft "
            "that you see add a d4 to their attack rolls and saves.",
            {"creature": Param("creature", True, "the leading creature")},
            costs=("action",),
            requires=_leads,
        ),
        CommandSpec(
            "fetid_cloud",
            _fetid_cloud,
            "Action: Fetid Cloud: gas fills your zone for 1 minute; a creature starting its "
            "turn there saves or is poisoned (an action or a bonus action, no reactions).",
            {"creature": Param("creature", True, "the creature releasing the gas")},
            costs=("action",),
            requires=_has_cloud,
        ),
        CommandSpec(
            "rampage",
            _rampage,
            "Bonus action: Rampage, after you dropped a creature to 0 hit points with a "
            "melee attack this turn: move up to half your speed and make a bite attack "
            "(the next attack command).",
            {"creature": Param("creature", True, "the rampaging creature")},
            costs=("bonus",),
            requires=_ready_to_rampage,
        ),
        CommandSpec(
            "web",
            _web,
            "Action: Web: a ranged attack roll; a hit restrains the target in webbing.",
            {
                "creature": Param("creature", True, "the creature spinning the web"),
                "target": Param("creature", True, "the creature webbed"),
            },
            costs=("action",),
            requires=_has_web,
        ),
        CommandSpec(
            "escape_web",
            _escape_web,
            "Action: try to break free of the web that restrains you (a Strength check).",
            {"creature": Param("creature", True, "the webbed creature")},
            costs=("action",),
            requires=_webbed,
        ),
        CommandSpec(
            "attack_web",
            _attack_web,
            "Action: attack the web that restrains a creature (its AC and hit points); "
            "destroyed, it lets the creature go.",
            {
                "creature": Param("creature", True, "the attacker"),
                "web": Param("string", True, "the web (its asset id)"),
                "attack": Param("string", False, "which attack (default: the first)"),
            },
            costs=("attack", "action"),
        ),
    )


def _leader(ctx: RuleContext, actor: Creature) -> Creature | None:
    """A creature of ``actor``'s side whose Leadership reaches it now, or None."""
    if "deafened" in actor.conditions:
        return None  # it cannot hear the knight's command
    for knight in ctx.state.creatures.values():
        if (
            LEADING not in knight.conditions
            or knight.id == actor.id
            or ctx.is_enemy(knight, actor)
            or knight.incapacitated
            or knight.out_of_fight
            or "blinded" in knight.conditions
        ):
            continue
        action = _action(knight, "leadership")
        within = int(action.params.get("within", 30)) if action is not None else 30
        distance = _distance(ctx.state, knight.zone, actor.zone)
        if distance is not None and distance <= within:
            return knight
    return None


@hookimpl(specname="zonekeep_roll_modifiers")
def srd_reactions_roll_modifiers(
    ctx: RuleContext, roll: RollRequest
) -> Iterable[RollModifier] | None:
    if roll.kind not in ("attack", "save"):
        return None
    if not any(LEADING in c.conditions for c in ctx.state.creatures.values()):
        return None  # the usual case: nobody leads
    actor = ctx.state.creatures.get(roll.actor)
    if actor is None or _leader(ctx, actor) is None:
        return None
    return (RollModifier("expertise", "leadership"),)


@hookimpl(specname="zonekeep_condition_applied")
def srd_reactions_condition_applied(ctx: RuleContext, creature: Creature, condition: str) -> None:
    if LEADING not in creature.conditions or not creature.incapacitated:
        return
    for effect in list(ctx.state.condition_effects.values()):
        if effect.creature == creature.id and effect.condition == LEADING:
            ctx.emit(ConditionEffectEnded(effect.id, creature.id, LEADING, "incapacitated"))


# -- fetid cloud -------------------------------------------------------------------------

#: The source of the poisoned condition a fetid cloud gives: ``srd.fetid-cloud:<asset>``.
_CLOUD = "srd.fetid-cloud:"


def _has_cloud(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "fetid-cloud") is None:
        return ("no_such_feature", f"{me.name} has no Fetid Cloud.")
    return None


def _fetid_cloud(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "fetid-cloud")
    assert action is not None  # (requires)
    if me.zone is None:
        ctx.refuse("invalid_params", f"{me.name} is in no zone.")
    spend_use(ctx, me, action)
    p = action.params
    rounds = int(p.get("rounds", 10))
    place_asset(
        ctx,
        Asset(
            "fetid-cloud",
            "Fetid Cloud",
            "element",
            me.zone,
            description=f"{me.name}'s disgusting gas: a creature starting its turn here "
            f"makes a DC {p['save']['dc']} Constitution save or is poisoned.",
            data={
                "srd": "fetid-cloud",
                "owner": me.id,
                "ability": str(p["save"]["ability"]),
                "dc": int(p["save"]["dc"]),
                "last_round": max(ctx.state.round, 1) + rounds - 1,
            },
        ),
    )


def _clouds(state: EncounterState, zone: str | None) -> list[Asset]:
    """The fetid clouds in ``zone`` (every one for ``None``)."""
    return [
        a
        for a in state.arena.assets
        if a.data.get("srd") == "fetid-cloud" and (zone is None or a.zone == zone)
    ]


# Last: after the durations rules end what ends at the start of this turn (the poison of
# the cloud's last save), so that the new poison lasts to the start of the next one.
@hookimpl(specname="zonekeep_turn_start", trylast=True)
def srd_reactions_turn_start(ctx: RuleContext, creature: Creature) -> None:
    if creature.zone is None or creature.out_of_fight:
        return
    for cloud in _clouds(ctx.state, creature.zone):
        now = ctx.state.creatures[creature.id]
        ability, dc = str(cloud.data["ability"]), int(cloud.data["dc"])
        if saving_throw(ctx, now, ability, dc, cloud.name):
            continue
        apply_timed_condition(
            ctx, now.id, "poisoned", until="start", of=now.id, source=_CLOUD + cloud.id
        )
        return  # poisoned once, however many clouds


@hookimpl(specname="zonekeep_round_end")
def srd_reactions_round_end(ctx: RuleContext, round: int) -> None:
    for cloud in _clouds(ctx.state, None):
        if round >= int(cloud.data.get("last_round", 0)):
            change_asset(ctx, cloud.id, remove=True, reason="the minute is over")


def _choked(state: EncounterState, creature: Creature) -> bool:
    """Whether ``creature`` is poisoned by a fetid cloud."""
    return "poisoned" in creature.conditions and any(
        e.creature == creature.id and e.source.startswith(_CLOUD)
        for e in state.condition_effects.values()
    )


@hookimpl(specname="zonekeep_action_refusal")
def srd_reactions_action_refusal(
    ctx: RuleContext, creature: Creature, spec: CommandSpec
) -> Refusal | None:
    if not spec.costs or "poisoned" not in creature.conditions:
        return None  # the usual case
    if not _choked(ctx.state, creature):
        return None
    why = f"{creature.name} is poisoned by the fetid cloud"
    if "reaction" in spec.costs:
        return Refusal("no_reaction_left", f"{why}: it can take no reactions.")
    s = ctx.state
    if s.active != creature.id:
        return None
    if "bonus" in spec.costs and "action" not in spec.costs and s.resources.actions <= 0:
        return Refusal("no_bonus_action_left", f"{why}: it took its action, so no bonus action.")
    if "action" in spec.costs and "bonus" not in spec.costs and s.resources.bonus_actions <= 0:
        return Refusal("no_action_left", f"{why}: it took a bonus action, so no action.")
    return None


# -- rampage ------------------------------------------------------------------------------

#: The resource that says a creature may rampage this turn.
RAMPAGE = "rampage"


def _ready_to_rampage(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "rampage") is None:
        return ("no_such_feature", f"{me.name} has no Rampage.")
    if me.resources.get(RAMPAGE, 0) <= 0:
        return (
            "invalid_params",
            f"{me.name} has not reduced a creature to 0 hit points with a melee attack this turn.",
        )
    return None


def _rampage(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    action = _action(me, "rampage")
    assert action is not None  # (requires)
    bite = str(action.params.get("attack", "bite"))
    if me.attack(bite) is None:
        ctx.refuse("unknown_attack", f"{me.name} has no attack called {bite!r}.")
    ctx.emit(ResourceSpent(me.id, RAMPAGE, 0))
    # Half its speed more: a Dash's whole speed, less the half it does not give.
    ctx.emit(Dashed(me.id), MovementSpent(me.id, me.speed - me.speed // 2, "rampage: half speed"))
    ctx.emit(ActionGranted(me.id, "attack", f"rampage: {bite}", 1))


@hookimpl(specname="zonekeep_attack_made")
def srd_reactions_attack_made(
    ctx: RuleContext,
    attacker: Creature,
    target: Creature,
    attack: Attack,
    result: AttackMade,
    damage: Damaged | None,
) -> None:
    if damage is None or damage.hp > 0 or damage.amount <= 0 or not attacker.actions:
        return  # the usual case: nobody dropped
    if attack.kind != "melee" or ctx.state.active != attacker.id:
        return
    if _action(attacker, "rampage") is None or attacker.resources.get(RAMPAGE, 0) > 0:
        return
    ctx.emit(ResourceRestored(attacker.id, RAMPAGE, 1, "turn"))


@hookimpl(specname="zonekeep_turn_end")
def srd_reactions_turn_end(ctx: RuleContext, creature: Creature) -> None:
    if creature.resources.get(RAMPAGE, 0) > 0:
        ctx.emit(ResourceSpent(creature.id, RAMPAGE, 0))


# -- web ---------------------------------------------------------------------------------------


def _has_web(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if _action(me, "web") is None:
        return ("no_such_feature", f"{me.name} has no Web.")
    return None


def _webs(state: EncounterState, holding: str | None = None) -> list[Asset]:
    """The webs in the arena (those holding creature ``holding`` when given)."""
    return [
        a
        for a in state.arena.assets
        if a.data.get("srd") == "web" and (holding is None or a.data.get("holds") == holding)
    ]


def _webbed(state: EncounterState, me: Creature) -> tuple[str, str] | None:
    if not _webs(state, me.id):
        return ("invalid_params", f"{me.name} is held by no web.")
    return None


def _web(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    target = ctx.creature(cmd.params["target"], role="target")
    action = _action(me, "web")
    assert action is not None  # (requires)
    p = action.params
    if target.id == me.id or target.out_of_fight:
        ctx.refuse("invalid_target", f"{me.name} cannot web {target.name}.")
    largest = p.get("max_size")
    if largest is not None and target.size.label not in _SIZES[: _SIZES.index(largest) + 1]:
        ctx.refuse("invalid_target", f"{target.name} is larger than {largest}: the web fails.")
    distance = _distance(ctx.state, me.zone, target.zone)
    if distance is None:
        ctx.refuse("no_line_of_sight", f"{me.name} cannot see {target.name}'s zone.")
    near, far = int(p["range"]), int(p.get("long_range", p["range"]))
    if distance > far:
        ctx.refuse(
            "out_of_range", f"{target.name} is {distance} ft away; the web reaches {far} ft."
        )
    spend_use(ctx, me, action)
    extra = (RollModifier("disadvantage", "long range"),) if distance > near else ()
    request = RollRequest("attack", me.id, target.id, attack_kind="ranged", attack=action.name)
    rolled = ctx.roll("d20", request, bonus=int(p["bonus"]), extra=extra)
    ac = target.ac + sum(
        b
        for b in ctx.hook.zonekeep_armor_class_bonus(
            ctx=ctx,
            target=target,
            attacker=me,
            attack=Attack(action.name, "ranged", int(p["bonus"]), "0", range=near, long_range=far),
        )
        if b
    )
    critical = rolled.natural == 20
    hit = critical or (rolled.natural != 1 and rolled.total >= ac)
    ctx.emit(AttackMade(me.id, target.id, action.name, "ranged", rolled, ac, hit, critical, False))
    if not hit or target.zone is None:
        return
    web = dict(p["web"])
    placed = place_asset(
        ctx,
        Asset(
            "web",
            "Web",
            "element",
            target.zone,
            description=f"Webbing holding {target.name}: AC {web['ac']}, {web['hp']} hit points.",
            data={
                "srd": "web",
                "holds": target.id,
                "by": me.id,
                "escape_dc": int(p["escape_dc"]),
                "ac": int(web["ac"]),
                "hp": int(web["hp"]),
                "vulnerabilities": list(web.get("vulnerabilities", [])),
                "immunities": list(web.get("immunities", [])),
            },
        ),
    )
    apply_timed_condition(
        ctx, target.id, str(p.get("condition", "restrained")), parent=placed.id, source=me.id
    )


def _escape_web(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    for web in _webs(ctx.state, me.id):
        dc = int(web.data.get("escape_dc", 10))
        result = ability_check(ctx, me, "str", dc=dc, source="escape the web")
        if result.success:
            change_asset(ctx, web.id, remove=True, reason=f"{me.name} broke free")
        return


def _attack_web(ctx: RuleContext, cmd: Command) -> None:
    me = ctx.creature(cmd.params["creature"])
    web = ctx.state.asset(str(cmd.params["web"]))
    if web is None or web.data.get("srd") != "web":
        ctx.refuse("unknown_asset", f"There is no web {cmd.params['web']!r}.")
    attack = me.attack(cmd.params.get("attack"))
    if attack is None:
        ctx.refuse(
            "unknown_attack", f"{me.name} has no attack called {cmd.params.get('attack')!r}."
        )
    distance = _distance(ctx.state, me.zone, web.zone)
    reach = 0 if attack.kind == "melee" else int(attack.long_range or attack.range or 0)
    if distance is None or distance > reach:
        ctx.refuse("out_of_range", f"The web is out of reach of {me.name}'s {attack.name}.")
    rolled = ctx.roll(
        "d20",
        RollRequest("attack", me.id, attack_kind=attack.kind, attack=attack.name),
        bonus=attack.bonus,
    )
    hit = rolled.natural == 20 or (rolled.natural != 1 and rolled.total >= int(web.data["ac"]))
    if not hit:
        return
    damage = ctx.roll(attack.damage, double_dice=rolled.natural == 20)
    dealt = defend(
        Damage(web.id, damage.total, attack.damage_type, me.id),
        list(web.data.get("immunities", [])),
        [],
        list(web.data.get("vulnerabilities", [])),
    )
    hp = max(0, int(web.data["hp"]) - dealt.amount)
    if hp > 0:
        change_asset(ctx, web.id, data={**web.data, "hp": hp})
    else:
        change_asset(ctx, web.id, remove=True, reason="the web is destroyed")
