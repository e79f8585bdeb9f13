"""GM overrides: "this system is not exhaustive". Each override is a logged event."""

from __future__ import annotations

from collections.abc import Iterable

from zonekeep.plugins._immunity import refuse_immunity
from zonekeep.sdk import (
    ABILITIES,
    DAMAGE_TYPES,
    DYING,
    OPEN_PHASES,
    OVERRIDE_FIELDS,
    PHASES,
    STABLE,
    AdjacencyEnded,
    Command,
    CommandSpec,
    ConditionRemoved,
    EngagementEnded,
    Healed,
    Note,
    NoteAdded,
    NoteRemoved,
    OverrideApplied,
    Param,
    RuleContext,
    Size,
    affect_zone,
    apply_condition,
    apply_damage,
    hookimpl,
    parse_dice,
)


def _override(ctx: RuleContext, cmd: Command) -> None:
    c = ctx.creature(cmd.params["creature"])
    field = cmd.params["field"]
    value = cmd.params["value"]
    types = OVERRIDE_FIELDS.get(field)
    if types is None:
        ctx.refuse(
            "invalid_params",
            f"The GM can override {', '.join(OVERRIDE_FIELDS)}; not {field!r}.",
        )
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        ctx.refuse("invalid_params", f"{value!r} is not a valid value for {field}.")
    if field == "sharing_with" and value is not None:
        other = ctx.creature(value)
        if other.id == c.id:
            ctx.refuse("invalid_params", "A creature cannot share its own space.")
    if field in ("hp", "max_hp", "temp_hp") and isinstance(value, int) and value < 0:
        ctx.refuse("invalid_params", "Hit points cannot be negative.")
    if field == "size":
        try:
            value = Size.parse(str(value)).label
        except ValueError as error:
            ctx.refuse("invalid_params", f"{value!r} is not a size: {error}.")
    if field == "condition_immunities":
        names = value if isinstance(value, list) else []
        if len(names) > 50 or not all(isinstance(v, str) and v.strip() for v in names):
            ctx.refuse(
                "invalid_params", "condition_immunities is a list of at most 50 condition names."
            )
        value = sorted({ctx.resolve("condition", str(v).strip()) for v in names})
    ctx.emit(OverrideApplied(ctx.actor.id, c.id, field, value))
    if field == "side":
        s = ctx.state
        for oid in s.engaged_with(c.id):
            if s.creatures[oid].side == value:
                ctx.emit(EngagementEnded(c.id, oid, "now on the same side"))
        for oid in s.adjacent_to(c.id):
            if s.creatures[oid].side != value:
                ctx.emit(AdjacencyEnded(c.id, oid, "no longer on the same side"))


def _grant(ctx: RuleContext, cmd: Command) -> None:
    c = ctx.creature(cmd.params["creature"])
    condition = cmd.params["condition"].strip()
    if not condition:
        ctx.refuse("invalid_params", "Name the condition.")
    # A plugin's condition by its short name ("burning" for "hazards.burning").
    condition = ctx.resolve("condition", condition)
    if condition in c.conditions:
        ctx.refuse("invalid_params", f"{c.name} is already {condition}.")
    force = cmd.params.get("force") is True
    refuse_immunity(ctx, c, condition, force)
    apply_condition(ctx, c.id, condition, f"GM override by {ctx.actor.id}", override=force)


def _remove(ctx: RuleContext, cmd: Command) -> None:
    c = ctx.creature(cmd.params["creature"])
    condition = cmd.params["condition"]
    if condition not in c.conditions:
        condition = ctx.resolve("condition", condition)
    if condition not in c.conditions:
        ctx.refuse("invalid_params", f"{c.name} is not {condition}.")
    ctx.emit(ConditionRemoved(c.id, condition, f"GM override by {ctx.actor.id}"))


def _heal(ctx: RuleContext, cmd: Command) -> None:
    c = ctx.creature(cmd.params["creature"])
    amount = cmd.params["amount"]
    if amount <= 0:
        ctx.refuse("invalid_params", "Healing must be at least 1 hit point.")
    hp = max(c.hp, min(c.max_hp, c.hp + amount))  # never lowers an overridden hp
    ctx.emit(Healed(c.id, amount, hp, ctx.actor.id))
    for condition in (DYING, STABLE):
        if hp > 0 and condition in c.conditions:
            ctx.emit(ConditionRemoved(c.id, condition, "healed"))


def _damage(ctx: RuleContext, cmd: Command) -> None:
    c = ctx.creature(cmd.params["creature"])
    amount = cmd.params["amount"]
    if amount <= 0:
        ctx.refuse("invalid_params", "Damage must be at least 1 hit point.")
    damage_type = cmd.params.get("damage_type", "")
    if damage_type and damage_type not in DAMAGE_TYPES:
        ctx.refuse(
            "invalid_params",
            f"A damage type is one of {', '.join(DAMAGE_TYPES)} (or none for untyped damage); "
            f"not {damage_type[:40]!r}.",
        )
    # As any damage: at 0 hit points a PC is dying and an NPC defeated (the plugins
    # say which), and what follows from that (engagements end) follows.
    apply_damage(ctx, c, amount, damage_type=damage_type, source=f"GM {ctx.actor.id}")


def _damage_zone(ctx: RuleContext, cmd: Command) -> None:
    p = cmd.params
    zone = p["zone"]
    if not isinstance(zone, str) or not ctx.state.arena.has_zone(zone):
        ctx.refuse("unknown_zone", f"There is no zone {str(zone)[:40]!r}.")
    try:
        parse_dice(p["damage"])
    except ValueError as exc:
        ctx.refuse("invalid_params", f"'damage' must be dice such as '2d6': {exc}.")
    damage_type = p.get("damage_type") or ""
    if damage_type and damage_type not in DAMAGE_TYPES:
        ctx.refuse(
            "invalid_params",
            f"A damage type is one of {', '.join(DAMAGE_TYPES)} (or none for untyped damage); "
            f"not {damage_type[:40]!r}.",
        )
    save = p.get("save")
    if save is not None and save not in ABILITIES:
        ctx.refuse("invalid_params", f"'save' is one of {', '.join(ABILITIES)}; not {save[:40]!r}.")
    dc = p.get("dc")
    if save is not None and (dc is None or not 1 <= dc <= 30):
        ctx.refuse("invalid_params", "A save needs its 'dc', from 1 to 30.")
    affect_zone(
        ctx,
        zone,
        damage=p["damage"],
        damage_type=damage_type,
        source=f"GM {ctx.actor.id}",
        save=save,
        dc=dc or 0,
    )


def _stabilize(ctx: RuleContext, cmd: Command) -> None:
    c = ctx.creature(cmd.params["creature"])
    if DYING not in c.conditions:
        ctx.refuse("invalid_params", f"{c.name} is not dying.")
    ctx.emit(ConditionRemoved(c.id, DYING, "stabilized"))
    apply_condition(ctx, c.id, STABLE, "stabilized")


def _add_note(ctx: RuleContext, cmd: Command) -> None:
    text = cmd.params["text"].strip()
    if not text:
        ctx.refuse("invalid_params", "A note needs some text.")
    if len(text) > 2000:
        ctx.refuse("invalid_params", "A note is at most 2000 characters.")
    nid = f"n{len(ctx.state.notes) + 1}"
    while nid in ctx.state.notes:
        nid += "'"
    ctx.emit(NoteAdded(Note(nid, text, bool(cmd.params.get("hidden", False)))))


def _remove_note(ctx: RuleContext, cmd: Command) -> None:
    if cmd.params["note"] not in ctx.state.notes:
        ctx.refuse("invalid_params", f"There is no note {cmd.params['note']!r}.")
    ctx.emit(NoteRemoved(cmd.params["note"]))


@hookimpl
def zonekeep_commands() -> Iterable[CommandSpec]:
    creature = Param("creature", True, "the creature")
    condition = Param("string", True, "the condition's name")
    return (
        CommandSpec(
            "override",
            _override,
            "GM: set a creature's field (hp, zone, sharing_with, ...) directly.",
            {
                "creature": creature,
                "field": Param("string", True, "the field"),
                "value": Param("any", True, "the new value"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "grant_condition",
            _grant,
            "GM: give a creature a condition (force: even one it is immune to).",
            {
                "creature": creature,
                "condition": condition,
                "force": Param(
                    "boolean", False, "overrule the creature's immunity to the condition"
                ),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "remove_condition",
            _remove,
            "GM: take a condition away.",
            {"creature": creature, "condition": condition},
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "heal",
            _heal,
            "GM: restore hit points (a dying creature healed above 0 stops dying).",
            {"creature": creature, "amount": Param("integer", True, "hit points")},
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "damage",
            _damage,
            "GM: deal damage (at 0 hit points a PC is dying and an NPC defeated, as with "
            "any damage; unlike overriding hp).",
            {
                "creature": creature,
                "amount": Param("integer", True, "hit points"),
                "damage_type": Param(
                    "string",
                    False,
                    "acid, bludgeoning, cold, fire, force, lightning, necrotic, piercing, "
                    "poison, psychic, radiant, slashing or thunder (none: untyped); the "
                    "creature's resistances apply",
                ),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "damage_zone",
            _damage_zone,
            "GM: aim damage at a zone, occupied or not (fire at a web, a collapsing roof): "
            "rolled once, taken by every creature there (half on a successful save when a "
            "save is given); plugins react to what it hits in the zone.",
            {
                "zone": Param("zone", True, "the zone aimed at"),
                "damage": Param("string", True, "damage dice, rolled once for everyone"),
                "damage_type": Param("string", False, "the damage type (none: untyped)"),
                "save": Param("string", False, "the ability each creature saves with"),
                "dc": Param("integer", False, "the save's DC (1-30)"),
            },
            who="gm",
            phases=OPEN_PHASES,
        ),
        CommandSpec(
            "add_note",
            _add_note,
            "GM: write a note on the encounter; a hidden one only the GM sees.",
            {
                "text": Param("string", True, "the note"),
                "hidden": Param("boolean", False, "keep it from players and spectators"),
            },
            who="gm",
            phases=PHASES,
        ),
        CommandSpec(
            "remove_note",
            _remove_note,
            "GM: remove a note.",
            {"note": Param("string", True, "the note's id")},
            who="gm",
            phases=PHASES,
        ),
        CommandSpec(
            "stabilize",
            _stabilize,
            "GM: a dying creature becomes stable and no longer keeps the encounter going.",
            {"creature": creature},
            who="gm",
            phases=OPEN_PHASES,
        ),
    )
