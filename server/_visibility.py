"""What each seat may see: hidden creatures, hidden assets and hidden notes never reach
players or spectators.

Pure functions over a state and plain event dictionaries. The GM sees everything; the
player who controls a hidden creature sees that creature (marked hidden); every other
player and every spectator sees nothing of it. An event is filtered with the state
right after it happened (the state "when it happened"), so a later reveal or rewind
never lets its hidden past through.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from zonekeep.sdk import GM, EncounterState
from zonekeep.sdk.host import PluginCatalog, state_to_dict

HIDDEN_EVENT: dict[str, Any] = {"type": "hidden"}


@attrs.frozen
class Viewer:
    """Who looks: the GM (``full``), a player (``player``, its id) or a spectator
    (neither). Two members with equal viewers are sent exactly the same messages."""

    full: bool = False
    player: str | None = None


GM_VIEW = Viewer(full=True)
SPECTATOR_VIEW = Viewer()


def viewer(view: bool | Viewer) -> Viewer:
    """``view`` as a :class:`Viewer` (``True``: the GM, ``False``: a spectator)."""
    if isinstance(view, Viewer):
        return view
    return GM_VIEW if view else SPECTATOR_VIEW


def _sees(view: Viewer, creature: Any) -> bool:
    return (
        view.full
        or not creature.hidden
        or (view.player is not None and creature.controller == view.player)
    )


def hidden_ids(state: EncounterState, view: bool | Viewer = SPECTATOR_VIEW) -> set[str]:
    """The creatures and assets ``view`` must not learn about (by default: every hidden
    one). A hidden asset (``EncounterState.hidden_assets``) is hidden from every player
    and spectator, as a hidden creature is from those who do not control it."""
    seat = viewer(view)
    if seat.full:  # the GM sees everything (as _sees says), asked on every broadcast
        return set()
    player = seat.player
    found = {
        c.id
        for c in state.creatures.values()
        if c.hidden and (player is None or c.controller != player)
    }
    if state.hidden_assets:
        found.update(state.hidden_assets)
    return found


def hp_word(hp: int, max_hp: int) -> str:
    """An enemy's hit points as players see them (docs/rules.md, "Rulings": "What players see")."""
    if hp <= 0:
        return "down"
    if hp >= max_hp:
        return "unhurt"
    return "bloodied" if 2 * hp <= max_hp else "hurt"


def enemy_ids(state: EncounterState, view: bool | Viewer) -> set[str]:
    """The creatures whose hit points ``view`` sees as a word: none for the GM or with
    ``show_enemy_hp``; else every creature not on a side of the viewer's own creatures
    (for a spectator, or a player with no creature, the sides of the players'
    creatures)."""
    seat = viewer(view)
    if seat.full or state.options.show_enemy_hp:
        return set()
    creatures = state.creatures.values()
    sides = {c.side for c in creatures if c.controller == seat.player}
    if not sides:  # a spectator, or a player with no creature: the players' sides
        sides = {c.side for c in creatures if c.controller != GM}
    return {
        c.id
        for c in creatures
        if c.side not in sides and not (seat.player is not None and c.controller == seat.player)
    }


#: A creature's stat block as a player or spectator does not get it for a creature its
#: seat does not control (SPEC.md, "Stat blocks"): these numbers are null, these lists
#: and objects empty. What shows on the table (name, side, size, speeds, conditions,
#: where it stands, hit points as the rules on enemy hit points say) stays.
SHEET_NUMBERS: tuple[str, ...] = (
    "ac",
    "dex_mod",
    "initiative_bonus",
    "passive_perception",
    "maneuver_dc",
    "spell_dc",
    "proficiency",
    "hit_dice",
    "challenge",
)
SHEET_LISTS: tuple[str, ...] = (
    "attacks",
    "traits",
    "actions",
    "damage_resistances",
    "damage_vulnerabilities",
    "damage_immunities",
    "condition_immunities",
    "damage_resistances_nonmagical",
    "damage_immunities_nonmagical",
)
SHEET_OBJECTS: tuple[str, ...] = ("abilities", "saves", "skills", "resources", "senses")
SHEET_FIELDS = frozenset((*SHEET_NUMBERS, *SHEET_LISTS, *SHEET_OBJECTS))


def sheet_hidden(creature: dict[str, Any]) -> dict[str, Any]:
    """``creature`` (a snapshot's creature) without its stat block (:data:`SHEET_FIELDS`)."""
    shown = dict(creature)
    for key in SHEET_NUMBERS:
        shown[key] = None
    for key in SHEET_LISTS:
        shown[key] = []
    for key in SHEET_OBJECTS:
        shown[key] = {}
    return shown


def _sheet_of(event: dict[str, Any], state: EncounterState, view: Viewer) -> dict[str, Any]:
    """``event`` without the stat blocks of the creatures ``view`` does not control."""
    kind = event.get("type")
    mine = owned_ids(state, view)
    if kind == "encounter_created":
        return {
            **event,
            "creatures": [c if c["id"] in mine else sheet_hidden(c) for c in event["creatures"]],
        }
    if kind == "creature_added":
        c = event["creature"]
        return event if c["id"] in mine else {**event, "creature": sheet_hidden(c)}
    if (
        kind == "override_applied"
        and event.get("field") in SHEET_FIELDS
        and event.get("creature") not in mine
    ):
        return {**event, "value": None}
    return event


def _hp_of(creature: dict[str, Any]) -> dict[str, Any]:
    hidden = {**creature, "hp": hp_word(creature["hp"], creature["max_hp"]), "max_hp": None}
    if "temp_hp" in creature:
        hidden["temp_hp"] = None
    return hidden


def _enemy_hp(event: dict[str, Any], state: EncounterState, view: Viewer) -> dict[str, Any]:
    """``event`` with the hit points of enemies of ``view`` as words."""
    kind = event.get("type")
    if kind not in (
        "damaged",
        "healed",
        "override_applied",
        "encounter_created",
        "creature_added",
        "temp_hp_changed",
    ):
        return event
    enemies = enemy_ids(state, view)
    if not enemies:
        return event
    if kind == "encounter_created":
        return {
            **event,
            "creatures": [_hp_of(c) if c["id"] in enemies else c for c in event["creatures"]],
        }
    if kind == "creature_added":
        c = event["creature"]
        return {**event, "creature": _hp_of(c)} if c["id"] in enemies else event
    cid = event.get("creature")
    if cid not in enemies or cid not in state.creatures:
        return event
    creature = state.creatures[cid]
    if kind in ("damaged", "healed"):
        return {**event, "hp": hp_word(event["hp"], creature.max_hp)}
    if kind == "temp_hp_changed":
        return {**event, "temp_hp": None, "roll": None}  # the roll would tell the amount
    if event.get("field") in ("hp", "max_hp"):
        return {**event, "value": hp_word(creature.hp, creature.max_hp)}
    if event.get("field") == "temp_hp":
        return {**event, "value": None}
    return event


def _mentions(value: Any, ids: set[str]) -> bool:
    if isinstance(value, str):
        return value in ids
    if isinstance(value, dict):
        return any(k in ids or _mentions(v, ids) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_mentions(v, ids) for v in value)
    return False


def hidden_names(state: EncounterState, view: bool | Viewer = SPECTATOR_VIEW) -> list[str]:
    """Names of the creatures hidden from ``view``, longest first (so "Ogre Chief" goes
    before "Ogre"); a name that a creature ``view`` may see also bears is left out."""
    seat = viewer(view)
    seen = {c.name for c in state.creatures.values() if _sees(seat, c)}
    unseen = {c.name for c in state.creatures.values() if not _sees(seat, c) and c.name}
    if state.hidden_assets and not seat.full:
        hidden = set(state.hidden_assets)
        assets = [*state.arena.assets, *state.effects.values()]
        unseen.update(a.name for a in assets if a.id in hidden)
        seen.update(a.name for a in assets if a.id not in hidden)
        seen.update(z.name for z in state.arena.zones)
    return sorted(unseen - seen, key=len, reverse=True)


def scrub_names(value: Any, names: list[str]) -> Any:
    """``value`` with every hidden name in its text replaced by "someone"."""
    if not names:
        return value
    if isinstance(value, str):
        for name in names:
            value = value.replace(name, "someone")
        return value
    if isinstance(value, dict):
        return {k: scrub_names(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_names(v, names) for v in value]
    return value


def _without(items: Iterable[Any], ids: set[str]) -> list[Any]:
    return [i for i in items if not _mentions(i, ids)]


def _tied_blocks(entries: list[dict[str, Any]]) -> list[dict[str, list[str]]]:
    """For each set of tied slots that had a roll-off, in the order the initiative
    plugin rolled them: each controller's block, as the creatures in it."""
    found = []
    for total in sorted({e["total"] for e in entries}, reverse=True):
        tied = [e for e in entries if e["total"] == total]
        mixed = any(e["pc"] for e in tied) and not all(e["pc"] for e in tied)
        mods = sorted({e["dex_mod"] for e in tied}, reverse=True) if mixed else [None]
        for mod in mods:
            blocks: dict[str, list[str]] = {}
            for e in tied:
                if mod is None or e["dex_mod"] == mod:
                    blocks.setdefault(e["controller"], []).extend(e["members"])
            if len(blocks) >= 2:
                found.append(blocks)
    return found


def _rolloffs(event: dict[str, Any], ids: set[str]) -> list[Any]:
    """The roll-offs as a viewer may see them: a contender (a controller) is named only
    when its tied block holds a creature the viewer may see; a roll-off left with
    fewer than two contenders is dropped. If the roll-offs cannot be matched to the
    ties (a log this code does not understand), none is shown."""
    log = list(event["rolloffs"])
    owners: list[dict[str, list[str]]] = []

    def walk(keys: list[str], blocks: dict[str, list[str]]) -> None:
        if len(keys) < 2:
            return
        if len(owners) >= len(log) or sorted(log[len(owners)]["contenders"]) != sorted(keys):
            raise LookupError
        contenders, rolls = log[len(owners)]["contenders"], log[len(owners)]["rolls"]
        owners.append(blocks)
        for value in sorted(set(rolls), reverse=True):
            walk([k for k, r in zip(contenders, rolls, strict=True) if r == value], blocks)

    try:
        for blocks in _tied_blocks(event["entries"]):
            walk(list(blocks), blocks)
    except (LookupError, KeyError, TypeError, ValueError):
        return []
    if len(owners) != len(log):
        return []
    found = []
    for r, blocks in zip(log, owners, strict=True):
        pairs = [
            (c, v)
            for c, v in zip(r["contenders"], r["rolls"], strict=True)
            if any(m not in ids for m in blocks[c])
        ]
        if len(pairs) >= 2:
            found.append({**r, "contenders": [c for c, _ in pairs], "rolls": [v for _, v in pairs]})
    return found


def event_for(
    event: dict[str, Any],
    state: EncounterState,
    full: bool | Viewer,
    catalog: PluginCatalog | None = None,
    hidden: set[str] | None = None,
) -> dict[str, Any]:
    """``event`` as a seat may see it: itself, a filtered copy, or ``{"type": "hidden"}``,
    with enemies' hit points as words (unless ``show_enemy_hp``).

    ``state`` is the state right after the event happened: what was hidden then stays
    hidden, whatever happened since. A plugin event (a dotted ``type``) reaches a player
    or spectator only when ``catalog`` (the engine's) says its type is declared with
    ``visibility="everyone"``: one of a plugin that is not installed, or a GM-only one,
    is ``{"type": "hidden"}`` for them. A visible one is filtered like any other event
    (it is hidden when it names a hidden creature). ``hidden``, when given, is
    ``hidden_ids(state, view)`` already computed (a broadcast filters several events
    with one state for each view).
    """
    view = viewer(full)
    if view.full:
        return event
    kind = event.get("type")
    if (
        isinstance(kind, str)
        and "." in kind
        and not _plugin_event_shown(kind, state, view, event, catalog)
    ):
        return HIDDEN_EVENT
    ids = hidden_ids(state, view) if hidden is None else hidden
    shown = _sheet_of(_enemy_hp(_event_for(event, state, view, ids), state, view), state, view)
    if ids:
        shown = _without_counters(shown)
    return shown


def _plugin_event_shown(
    kind: str,
    state: EncounterState,
    view: Viewer,
    event: dict[str, Any],
    catalog: PluginCatalog | None,
) -> bool:
    """Whether a player or spectator may see a plugin event: a public one, or an owner's
    one (per creature) seen by the player controlling that creature."""
    if catalog is None:
        return False
    return catalog.public_event(kind) or (catalog.owner_event(kind) and _owns(state, view, event))


def _owns(state: EncounterState, view: Viewer, event: dict[str, Any]) -> bool:
    """Whether ``view`` is the player controlling the creature a plugin event names."""
    data = event.get("data")
    cid = data.get("creature") if isinstance(data, dict) else None
    creature = state.creatures.get(cid) if isinstance(cid, str) else None
    return creature is not None and view.player is not None and creature.controller == view.player


def owned_ids(state: EncounterState, view: bool | Viewer) -> set[str]:
    """The creatures ``view``'s player controls (none for a spectator)."""
    seat = viewer(view)
    if seat.player is None:
        return set()
    return {c.id for c in state.creatures.values() if c.controller == seat.player}


def _without_counters(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` without its dice counters (SPEC.md, "Dice"), for a seat from which some
    creature is hidden: the counters of the dice it sees would count the rolls of the
    creatures it does not (a gap of three in an initiative roll is a hidden creature).
    Such a seat checks only the dice of the moments when nothing was hidden from it."""
    kind = event.get("type")
    if kind == "dice_drawn":
        return HIDDEN_EVENT
    if kind == "rewound":
        return {**event, "undone_rolls": []}
    stripped: dict[str, Any] = _strip_draws(event)
    return stripped


def _strip_draws(value: Any) -> Any:
    if isinstance(value, list):
        return [_strip_draws(v) for v in value]
    if isinstance(value, dict):
        return {k: [] if k == "draws" else _strip_draws(v) for k, v in value.items()}
    return value


def _event_for(
    event: dict[str, Any], state: EncounterState, view: Viewer, ids: set[str]
) -> dict[str, Any]:
    kind = event.get("type")
    if kind in ("plugin_error", "plugin_overran") or (
        kind == "note_added" and event["note"].get("hidden")
    ):
        return HIDDEN_EVENT
    if kind == "asset_removed" and event.get("hidden"):  # hidden until it went
        return HIDDEN_EVENT
    if kind == "check_rolled" and event.get("source") == "call_check":
        # A check the GM called: the GM sees every result, a player those of its own
        # creatures, nobody else any (a hidden creature's never leaks).
        creature = state.creatures.get(str(event.get("creature")))
        if creature is None or view.player is None or creature.controller != view.player:
            return HIDDEN_EVENT
    if kind in ("chat_sent", "dice_rolled"):
        return _table_talk(event, view)
    if not ids:
        return event
    if kind == "initiative_rolled":
        entries = []
        for entry in event["entries"]:
            members = [m for m in entry["members"] if m not in ids]
            if members:
                entries.append({**entry, "members": members})
        return {**event, "entries": entries, "rolloffs": _rolloffs(event, ids)}
    if kind == "encounter_created":
        return {**event, "creatures": [c for c in event["creatures"] if c["id"] not in ids]}
    if kind == "surprise_determined":
        return {**event, "surprised": [c for c in event["surprised"] if c not in ids]}
    if kind == "positions_established":
        return {**event, "positions": {k: v for k, v in event["positions"].items() if k not in ids}}
    if _mentions(event, ids):
        return HIDDEN_EVENT
    scrubbed: dict[str, Any] = scrub_names(event, hidden_names(state, view))
    return scrubbed


def _table_talk(event: dict[str, Any], view: Viewer) -> dict[str, Any]:
    """A line of table chat or a free roll as a player or spectator sees it: a whisper
    (``chat_sent`` with a ``to``) or a private roll only by the seats it names (the
    GM, who sees everything, is not asked), else ``{"type": "hidden"}``. What a seat
    wrote is shown as written: no hidden name is taken out of it (the server's own
    sentences are scrubbed, a person's words are theirs), and it names no creature."""
    seats = {event.get("by")}
    if event.get("type") == "chat_sent":
        if event.get("to") is None:
            return event
        seats.add(event.get("to"))
    elif not event.get("private"):
        return event
    if view.player is not None and view.player in seats:
        return event
    return HIDDEN_EVENT


def plugin_state_for(
    plugin_state: dict[str, dict[str, Any]],
    catalog: PluginCatalog | None,
    ids: set[str],
    owned: set[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The plugins' state as a player or spectator may see it: only the pieces declared
    with ``visibility="everyone"`` (none of a plugin that is not installed), and in
    those, nothing that names a creature in ``ids`` (a hidden one): a dict entry whose
    key or text value is such an id, a list item that mentions one. A per-creature
    piece (``visibility="owner"``) keeps only the entries of the creatures in ``owned``
    (those the player controls)."""
    shown: dict[str, dict[str, Any]] = {}
    mine = owned or set()
    for ns, piece in plugin_state.items():
        kept: dict[str, Any] = {}
        for k, v in piece.items():
            if catalog is None:
                continue
            if catalog.public_state(ns, k):
                kept[k] = _strip_ids(v, ids)
            elif catalog.owner_state(ns, k) and isinstance(v, dict):
                kept[k] = {cid: entry for cid, entry in v.items() if cid in mine}
        if kept:
            shown[ns] = kept
    return shown


def _strip_ids(value: Any, ids: set[str]) -> Any:
    if not ids:
        return value
    if isinstance(value, str):
        return None if value in ids else value
    if isinstance(value, dict):
        return {
            k: _strip_ids(v, ids)
            for k, v in value.items()
            if k not in ids and not (isinstance(v, str) and v in ids)
        }
    if isinstance(value, list):
        return [_strip_ids(v, ids) for v in value if not _mentions(v, ids)]
    return value


def snapshot_for(
    state: EncounterState, full: bool | Viewer, catalog: PluginCatalog | None = None
) -> dict[str, Any]:
    """The state as a seat may see it (the GM's is complete; a player sees its own
    hidden creatures, marked hidden, and the stat blocks of its own creatures only;
    plugin state as :func:`plugin_state_for` says).
    Every creature's traits, actions and attack riders say whether they are
    ``automated`` (and when not, ``gm``: why), from ``catalog``'s features."""
    view = viewer(full)
    data = state_to_dict(state)
    if catalog is not None:
        for creature in data["creatures"].values():
            catalog.mark_features(creature, state.disabled_plugins)
    if view.full:
        return data
    data["plugin_state"] = plugin_state_for(
        data["plugin_state"], catalog, hidden_ids(state, view), owned_ids(state, view)
    )
    data["notes"] = {k: v for k, v in data["notes"].items() if not v["hidden"]}
    enemies = enemy_ids(state, view)
    data["creatures"] = {k: _hp_of(v) if k in enemies else v for k, v in data["creatures"].items()}
    mine = owned_ids(state, view)
    data["creatures"] = {
        k: v if k in mine else sheet_hidden(v) for k, v in data["creatures"].items()
    }
    ids = hidden_ids(state, view)
    if not ids:
        return data
    data["creatures"] = {k: v for k, v in data["creatures"].items() if k not in ids}
    for creature in data["creatures"].values():
        if creature.get("sharing_with") in ids:
            creature["sharing_with"] = None
    if state.hidden_assets:
        data["hidden_assets"] = []
        arena = data["arena"]
        data["arena"] = {**arena, "assets": [a for a in arena["assets"] if a["id"] not in ids]}
        data["effects"] = {k: v for k, v in data["effects"].items() if k not in ids}
        for creature in data["creatures"].values():
            if creature.get("position") in ids:
                creature["position"] = None
            creature["elements"] = [e for e in creature.get("elements", ()) if e not in ids]
    initiative = []
    for entry in data["initiative"]:
        members = [m for m in entry["members"] if m not in ids]
        if members:
            initiative.append({**entry, "members": members})
    data["initiative"] = initiative
    for key in (
        "engagements",
        "adjacent",
        "back_to_back",
        "pending",
        "surprised",
        "reactions_used",
        "plain_overlaps",
    ):
        data[key] = _without(data[key], ids)
    data["turns_taken"] = _without(data["turns_taken"], ids)
    data["last_melee"] = {
        k: v for k, v in data["last_melee"].items() if k not in ids and v not in ids
    }
    data["readied"] = {
        k: v for k, v in data["readied"].items() if k not in ids and not _mentions(v, ids)
    }
    data["condition_effects"] = {
        k: v for k, v in data["condition_effects"].items() if not _mentions(v, ids)
    }
    if data["active"] in ids:
        data["active"] = None
        data["resources"] = None
    if data["maneuver"] is not None and _mentions(data["maneuver"], ids):
        data["maneuver"] = None
    scrubbed: dict[str, Any] = scrub_names(data, hidden_names(state, view))
    return scrubbed


def scrub(message: str, state: EncounterState, full: bool | Viewer) -> str:
    """An error sentence with the names of creatures hidden from the seat replaced by
    "someone"."""
    view = viewer(full)
    if view.full:
        return message
    result: str = scrub_names(message, hidden_names(state, view))
    return result
