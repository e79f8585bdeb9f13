"""The wire messages as attrs classes, the ``wire`` converter and the parse/dump helpers.

Every request method has a params class and a result class (:data:`METHODS`), every
notification a params class (:data:`NOTIFICATIONS`). The envelopes are
:class:`Request`, :class:`Response`, :class:`ErrorResponse` and :class:`Notification`.

These classes are the single source of the protocol: ``protocol/_generate.py`` writes
every JSON Schema in ``protocol/schemas/`` and every table of ``protocol/SPEC.md`` from
them. A field's meaning and the constraints its type does not say are in its
:func:`doc` metadata; a class's meaning is its docstring's first paragraph. Edit them
here, then run ``python -m zonekeep.protocol._generate``.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn, override

from zonekeep.sdk import Cost
from zonekeep.sdk.host import json_kind, strict_containers

from ._errors import ProtocolError

if TYPE_CHECKING:
    from zonekeep.sdk import CommandSpec, ConditionSpec

#: The protocol version this package describes ("MAJOR.MINOR").
PROTOCOL_VERSION = "1.7"

Role = Literal["gm", "player", "spectator"]
Who = Literal["creature", "gm", "any"]
RequestId = int | str

_VERSION = re.compile(r"^[0-9]+\.[0-9]+$")
MAX_ID_LENGTH = 64


#: JSON Schema for a value of each engine parameter type (see SPEC.md, Commands).
PARAM_JSON_TYPES: dict[str, dict[str, Any]] = {
    "creature": {"type": "string"},
    "zone": {"type": "string"},
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "boolean": {"type": "boolean"},
    "object": {"type": "object"},
    "creatures": {"type": "array", "items": {"type": "string"}},
    "strings": {"type": "array", "items": {"type": "string"}},
    "any": {},
}

JSON_SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def params_schema(spec: CommandSpec) -> dict[str, Any]:
    """A JSON Schema (2020-12) for the ``params`` of ``spec``: each parameter's JSON type
    and description, the required ones, nothing else. An optional parameter may also be
    ``null`` (the engine treats it as left out)."""
    properties: dict[str, Any] = {}
    for name, param in spec.params.items():
        prop = copy.deepcopy(PARAM_JSON_TYPES[param.type])
        if not param.required and "type" in prop:
            prop["type"] = [prop["type"], "null"]
        if param.description:
            prop["description"] = param.description
        properties[name] = prop
    return {
        "$schema": JSON_SCHEMA_DRAFT,
        "type": "object",
        "properties": properties,
        "required": [name for name, p in spec.params.items() if p.required],
        "additionalProperties": False,
    }


# -- validators ------------------------------------------------------------------------------


def _non_negative(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"'{attribute.name}' must be 0 or more, not {value}")


def _version(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not _VERSION.match(value):
        raise ValueError(
            f"'{attribute.name}' must look like MAJOR.MINOR (for example \"1.0\"), not {value!r}"
        )


def _player_id(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not 1 <= len(value) <= MAX_ID_LENGTH:
        raise ValueError(f"'{attribute.name}' must be 1 to {MAX_ID_LENGTH} characters long")
    if value == "gm":
        raise ValueError(f"'{attribute.name}' cannot be \"gm\", which is the GM's controller id")


#: The most events ``join`` sends back as ``history``.
MAX_HISTORY = 500


def _history(_: object, attribute: attrs.Attribute[int | None], value: int | None) -> None:
    if value is not None and not 1 <= value <= MAX_HISTORY:
        raise ValueError(f"'{attribute.name}' must be 1 to {MAX_HISTORY}, not {value}")


def _not_empty(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value:
        raise ValueError(f"'{attribute.name}' must not be empty")


#: An idempotency key: 1-64 printable ASCII characters, no spaces (SPEC.md, "Idempotency").
IDEMPOTENCY_KEY_PATTERN = "^[!-~]{1,64}$"
_IDEMPOTENCY_KEY = re.compile(r"[!-~]{1,64}")


def _idempotency_key(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not _IDEMPOTENCY_KEY.fullmatch(value):
        raise ValueError(
            f"'{attribute.name}' must be 1 to 64 printable ASCII characters without spaces"
        )


def idempotency_key_field(since: str = "1.5", who: str = "the same seat") -> Any:
    """The optional ``idempotency_key`` of a request that changes state (an encounter's,
    its tokens, its record)."""
    return attrs.field(
        default=None,
        validator=_idempotency_key,
        metadata=doc(
            "A key the client chose for this request (1-64 printable ASCII characters, no "
            f"spaces): a repeat with the same key from {who}, on any connection and "
            "after a restart, gets the first answer and changes nothing. See "
            f"[Idempotency](#idempotency). Since {since}.",
            keywords={"pattern": IDEMPOTENCY_KEY_PATTERN},
        ),
    )


def gm_seat_key_field() -> Any:
    """The ``idempotency_key`` of a GM's token request (``create_seat``...), since 1.6."""
    return idempotency_key_field("1.6", "the encounter's GM seat")


def arena_owner_key_field() -> Any:
    """The ``idempotency_key`` of ``save_arena`` and ``delete_arena``, since 1.6."""
    return idempotency_key_field(
        "1.6", "the same arena owner (the GM key the connection said hello with, or the operator)"
    )


def owner_key_field() -> Any:
    """The ``idempotency_key`` of a lobby request on one's own encounter, since 1.6."""
    return idempotency_key_field(
        "1.6", "the encounter's owner (the GM key that created it, or the operator)"
    )


# -- field documentation ---------------------------------------------------------------------


def doc(
    text: str,
    *,
    schema: dict[str, Any] | None = None,
    type_text: str | None = None,
    expand: bool = True,
    keywords: dict[str, Any] | None = None,
    **constraints: Any,
) -> dict[str, Any]:
    """attrs ``metadata`` for a wire field, read by ``protocol/_generate.py``.

    ``text`` is the field's meaning (SPEC.md's tables, the schema's ``description``).
    ``constraints`` are JSON Schema keywords added to the schema of the field's type (to
    its non-null part when the field may be null), for what the type alone does not say
    (``minLength=1``, ``minimum=0`` ...; ``keywords`` for those that are not Python names). ``schema`` replaces the schema derived from the
    type (again its non-null part): for a ``dict`` that is in fact a snapshot or an
    event. ``type_text`` replaces the type named in SPEC.md's tables; ``expand=False``
    keeps SPEC.md from listing a nested class's fields as ``field.sub`` rows.
    """
    return {
        "doc": text,
        "constraints": {**constraints, **(keywords or {})},
        "schema": schema,
        "type_text": type_text,
        "expand": expand,
    }


#: Schemas of values that many messages carry.
ENCOUNTER_ID = doc("The encounter id.", minLength=1)
_REQUEST_ID_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "integer"},
        {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH},
    ]
}
_SNAPSHOT = {"$ref": "snapshot.schema.json"}
_SNAPSHOT_TEXT = "[Snapshot](#snapshot)"
_EVENT = {"$ref": "event_payload.schema.json"}
#: A dice seed or contribution: 1-128 printable ASCII characters (SPEC.md, "Dice").
_SEED_PATTERN = "^[!-~]{1,128}$"
_DICE_OPTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mode": {"enum": ["fair", "seeded"]},
        "seed": {"type": "string", "pattern": _SEED_PATTERN},
    },
    "additionalProperties": False,
}


# -- hello -----------------------------------------------------------------------------------


@attrs.frozen
class ClientInfo:
    """Who the client is: a ``name`` and a ``version``, for logs only."""

    name: str = attrs.field(metadata=doc("The client's name."))
    version: str = attrs.field(metadata=doc("The client's version."))


@attrs.frozen
class HelloParams:
    """``hello`` params: the protocol version the client speaks and who it is."""

    protocol: str = attrs.field(
        validator=_version,
        metadata=doc(
            'The version the client speaks, `"MAJOR.MINOR"`, e.g. `"1.2"` (any 1.x is accepted).',
            pattern=_VERSION.pattern,
            type_text='string `"MAJOR.MINOR"`',
        ),
    )
    client: ClientInfo = attrs.field(metadata=doc("Who the client is, for logs."))
    gm_key: str | None = attrs.field(
        default=None,
        metadata=doc(
            "A GM key of this server (`zonekeep gm add NAME` prints one): the connection "
            "is then that GM's, who may create encounters and use the lobby for them. An "
            "unknown key is refused with `bad_gm_key` (2003). Since 1.3.",
            minLength=1,
        ),
    )


@attrs.frozen
class ServerInfo:
    """The server's name (always ``"zonekeep"``) and version."""

    name: str = attrs.field(metadata=doc('Always `"zonekeep"`.', const="zonekeep"))
    version: str = attrs.field(metadata=doc("The server's software version."))


@attrs.frozen
class CommandParamInfo:
    """One parameter of an engine command: its type, whether required, what it means."""

    type: str = attrs.field(
        metadata=doc(
            "The parameter's type (see [Commands](#commands)): `creature`, `zone`, `string` "
            "→ string; `integer`, `boolean`, `object` → themselves; `creatures`, `strings` "
            "→ array of string; `any` → any value.",
            enum=list(PARAM_JSON_TYPES),
        )
    )
    required: bool = attrs.field(metadata=doc("Whether the command needs it."))
    description: str = attrs.field(metadata=doc("What it means, for a person."))


@attrs.frozen
class CommandInfo:
    """One engine command as announced in ``hello``'s capabilities: what it is, its
    parameters, a JSON Schema (2020-12) for them and the plugin that declares it."""

    id: str = attrs.field(metadata=doc("The command type, sent as `command`'s `type`."))
    summary: str = attrs.field(metadata=doc("What it does, for a person."))
    who: Who = attrs.field(
        metadata=doc(
            "`creature`: the controller of `params.creature` (or the GM); `gm`: the GM "
            "only; `any`: anyone joined but spectators."
        )
    )
    costs: list[str] = attrs.field(
        metadata=doc(
            "What it costs; several mean the first one still available.",
            items={"enum": list(get_args(Cost))},
        )
    )
    phases: list[str] = attrs.field(metadata=doc("The encounter phases in which it may be sent."))
    params: dict[str, CommandParamInfo] = attrs.field(
        metadata=doc("Parameter name → its type, whether required, and meaning.")
    )
    schema: dict[str, Any] = attrs.field(
        metadata=doc(
            "A JSON Schema (2020-12) for the command's `params`: each parameter's JSON type "
            "and description, the required ones, `additionalProperties: false`. An optional "
            "parameter may also be null."
        )
    )
    plugin: str = attrs.field(
        metadata=doc('The name of the plugin that declares the command (e.g. `"zonekeep.combat"`).')
    )

    @classmethod
    def from_spec(cls, spec: CommandSpec, plugin: str = "") -> CommandInfo:
        """The announcement of an engine :class:`~zonekeep.sdk.CommandSpec` declared by
        the plugin called ``plugin`` (see ``Engine.command_owners``)."""
        return cls(
            id=spec.id,
            summary=spec.summary,
            who=spec.who,
            costs=list(spec.costs),
            phases=list(spec.phases),
            params={
                name: CommandParamInfo(p.type, p.required, p.description)
                for name, p in spec.params.items()
            },
            schema=params_schema(spec),
            plugin=plugin,
        )


@attrs.frozen
class PluginEventInfo:
    """One event type a plugin declares, as announced in ``hello``'s capabilities (since
    1.4): enough for a client that has never seen it to show a readable log line."""

    id: str = attrs.field(
        metadata=doc(
            'The event\'s `type`, `<plugin>.<name>` (`"hazards.brazier_kicked"`).',
            pattern=r"^[^.\s]+(\.[^.\s]+)+$",
        )
    )
    plugin: str = attrs.field(metadata=doc("The name of the plugin that declares it."))
    description: str = attrs.field(metadata=doc("What the event means, for a person."))
    template: str = attrs.field(
        metadata=doc(
            "A log line with the payload's fields in braces (`\"{creature} kicked "
            '{brazier} over"`): replace each `{field}` with the value of `data.field` '
            "(a creature id may be shown as the creature's name). Empty: none given, show "
            "the description."
        )
    )
    schema: dict[str, Any] = attrs.field(
        metadata=doc("The JSON Schema (2020-12 keywords) of the event's `data`.")
    )
    visibility: Literal["gm", "owner", "everyone"] = attrs.field(
        metadata=doc(
            '`gm`: players and spectators get `{"type": "hidden"}` in its place; '
            "`owner` (since 1.6): only the player who controls the creature its `data.creature` "
            "names sees it (and the GM); `everyone`: they see it (unless it names a creature "
            "hidden from them)."
        )
    )


@attrs.frozen
class PluginStateInfo:
    """One piece of a plugin's own state (the snapshot's `plugin_state`), as announced in
    ``hello``'s capabilities (since 1.4)."""

    plugin: str = attrs.field(metadata=doc("The plugin (its namespace in `plugin_state`)."))
    key: str = attrs.field(metadata=doc("The piece's key in the plugin's state."))
    description: str = attrs.field(metadata=doc("What it holds, for a person."))
    visibility: Literal["gm", "owner", "everyone"] = attrs.field(
        metadata=doc(
            "`gm`: only in the GM's snapshot; `owner` (since 1.6): per creature, an object "
            "keyed by creature id of which a player's snapshot has the entries of the "
            "creatures it controls (a spectator's none); `everyone`: in every seat's."
        )
    )
    default: Any = attrs.field(metadata=doc("Its value before any event changed it."))
    schema: dict[str, Any] | None = attrs.field(
        metadata=doc("A JSON Schema its value keeps, or null when the plugin gave none.")
    )


@attrs.frozen
class ConditionInfo:
    """One condition a plugin gives meaning to, as announced in ``hello``'s capabilities
    (since 1.4): enough for a generic client to offer a condition picker."""

    id: str = attrs.field(metadata=doc("The condition's id: the name on a creature."))
    name: str = attrs.field(metadata=doc("A readable name (`Frightened`)."))
    summary: str = attrs.field(metadata=doc("What it does, in one line."))
    description: str = attrs.field(metadata=doc("What it does, in full, for a person."))
    durations: list[str] = attrs.field(
        metadata=doc(
            "How it can last (`apply_effect`): `rounds`, `turn_start`, `turn_end` (until "
            "the start or end of a named creature's turn), `save` (until a save "
            "succeeds), `until_removed`.",
            items={"enum": ["rounds", "turn_start", "turn_end", "save", "until_removed"]},
        )
    )
    plugin: str = attrs.field(
        metadata=doc('The name of the plugin that declares it (e.g. `"zonekeep.conditions"`).')
    )

    @classmethod
    def from_spec(cls, spec: ConditionSpec, plugin: str = "") -> ConditionInfo:
        """The announcement of a :class:`~zonekeep.sdk.ConditionSpec` declared by ``plugin``."""
        return cls(
            id=spec.id,
            name=spec.title,
            summary=spec.summary,
            description=spec.details,
            durations=list(spec.durations),
            plugin=plugin,
        )


@attrs.frozen
class AssetTagInfo:
    """An asset tag a plugin declares, as announced in ``hello``'s capabilities: what an
    asset with it does and the JSON Schema of the fields it takes in the asset's `data`
    (arena files, docs/arenas.md). Since 1.4."""

    id: str = attrs.field(metadata=doc("The tag, as an arena's asset lists it in `tags`."))
    plugin: str = attrs.field(metadata=doc("The name of the plugin that declares it."))
    summary: str = attrs.field(metadata=doc("What an asset with the tag does, for a person."))
    data_schema: dict[str, Any] | None = attrs.field(
        metadata=doc(
            'A JSON Schema (the subset of docs/plugins.md, "Data schemas") of the fields '
            "the tag takes in the asset's `data`: an object schema with `properties`; null "
            "when it takes none.",
            type_text="JSON Schema object or null",
        )
    )


@attrs.frozen
class FeatureSpecInfo:
    """A creature feature a plugin implements (``zonekeep_features``), as announced in
    ``hello``'s capabilities. Since 1.6."""

    id: str = attrs.field(metadata=doc("The feature id creature data names."))
    kind: str = attrs.field(
        metadata=doc("Where it may appear: `trait`, `action` or `on_hit` (an attack's rider).")
    )
    plugin: str = attrs.field(metadata=doc("The name of the plugin that implements it."))
    summary: str = attrs.field(metadata=doc("What it does, for a person."))
    params_schema: dict[str, Any] = attrs.field(
        metadata=doc(
            'The JSON Schema (the subset of docs/plugins.md, "Data schemas") of its `params`.',
            type_text="JSON Schema object",
        )
    )


@attrs.frozen
class SettingInfo:
    """A plugin's setting, as announced in ``hello``'s capabilities and by
    ``encounter_options``: its JSON Schema, the plugin's default and this server's
    value, which a new encounter gets unless its `options.settings` gives one. Since
    1.4."""

    plugin: str = attrs.field(
        metadata=doc("The name of the plugin that declares it: the key in `options.settings`.")
    )
    id: str = attrs.field(metadata=doc("The setting's id, a snake_case word (unique per plugin)."))
    summary: str = attrs.field(metadata=doc("What it changes, for a person."))
    schema: dict[str, Any] = attrs.field(
        metadata=doc(
            'A JSON Schema of its value (the subset of docs/plugins.md, "Data schemas"; '
            '`format: "dice"` is a dice expression such as `"1d6"`).',
            type_text="JSON Schema object",
        )
    )
    default: Any = attrs.field(metadata=doc("The plugin's default.", type_text="any JSON value"))
    value: Any = attrs.field(
        metadata=doc(
            "This server's value (the operator's `plugin_settings`, else the default).",
            type_text="any JSON value",
        )
    )


@attrs.frozen
class Capabilities:
    """What this server can do: its commands, encounter options (with their defaults),
    event types, bundled arenas, the conditions, asset tags and settings its plugins
    declare, and their event types and state."""

    commands: list[CommandInfo] = attrs.field(
        metadata=doc("Every engine command (see [Commands](#commands)).")
    )
    options: dict[str, Any] = attrs.field(
        metadata=doc("Each encounter option with its default value.")
    )
    event_types: list[str] = attrs.field(
        metadata=doc("Every event type the server may send (besides `hidden`).", uniqueItems=True)
    )
    arenas: list[str] = attrs.field(
        metadata=doc("The bundled arena names `create_encounter` accepts.", uniqueItems=True)
    )
    plugin_events: list[PluginEventInfo] = attrs.field(
        factory=list,
        metadata=doc(
            "The event types the plugins declare (their ids are in `event_types` too), "
            "sorted by id. Since 1.4."
        ),
    )
    plugin_state: list[PluginStateInfo] = attrs.field(
        factory=list,
        metadata=doc(
            "The pieces of plugin state (the snapshot's `plugin_state`), by plugin and key. "
            "Since 1.4."
        ),
    )
    conditions: list[ConditionInfo] = attrs.field(
        factory=list,
        metadata=doc(
            "Every condition the plugins give a meaning to, by id (since 1.4). A condition "
            "not listed is still allowed on a creature: a label the GM reads."
        ),
    )
    asset_tags: list[AssetTagInfo] = attrs.field(
        factory=list,
        metadata=doc("Every asset tag a plugin declares, with its data schema. Since 1.4."),
    )
    settings: list[SettingInfo] = attrs.field(
        factory=list,
        metadata=doc(
            "Every plugin setting, by plugin then id, with its schema, default and this "
            "server's value (`create_encounter`'s `options.settings`). Since 1.4."
        ),
    )
    features: list[FeatureSpecInfo] = attrs.field(
        factory=list,
        metadata=doc(
            "Every creature feature the plugins implement (traits, actions, attack "
            "riders), by kind then id: what the snapshot's `automated` is read from "
            "([Creature features](#creature-features)). Since 1.6."
        ),
    )


@attrs.frozen
class Limits:
    """The limits in force on this connection (defaults shown). Every one is announced in
    ``hello``'s result; an operator may change them. The ``float`` ones are written as
    JSON numbers with a fraction (``20.0``), as a server's configuration gives them."""

    max_message_bytes: int = attrs.field(
        default=16384,
        metadata=doc(
            "A frame longer than this (in UTF-8 bytes) is refused with `message_too_large` "
            "(5000, id `null`) and ignored. A frame longer than 4 \u00d7 this (65536 by default) "
            "closes the connection with 1009. The server's own messages (snapshots, "
            "`join`'s events) may be longer.",
            minimum=1,
        ),
    )
    rate_per_second: float = attrs.field(
        default=20.0,
        metadata=doc(
            "Messages a client may send per second on average: a token bucket of "
            "`rate_burst` tokens, full when the connection opens, refilled continuously at "
            "this rate (never above `rate_burst`), as the server reads each frame. A frame "
            "takes one token. A client that sends at most `rate_burst` + `rate_per_second` "
            "\u00d7 t frames in any t seconds (as the server reads them) is never refused: "
            "for example `rate_burst` at once, then one every 1 / `rate_per_second` "
            "seconds.",
            exclusiveMinimum=0,
        ),
    )
    rate_burst: int = attrs.field(
        default=40,
        metadata=doc(
            "The bucket's size: up to this many messages at once. A frame that finds less "
            "than one token in the bucket is refused with `rate_limited` (5001, with the "
            "request's id when it can be read, and `retry_after_ms`: when the bucket holds "
            "a token again), takes no token and is not handled. More than "
            "`abuse_refusals` refused frames within `abuse_window_seconds` close the "
            "connection with 1008 (`rate limit abuse`).",
            minimum=1,
        ),
    )
    max_connections_per_encounter: int = attrs.field(
        default=32,
        metadata=doc(
            "GM and player connections joined to one encounter (spectators have a cap of "
            "their own, so they never take these places). Another `join` is refused "
            "with `too_many_connections` (5002).",
            minimum=1,
        ),
    )
    ping_interval_seconds: float = attrs.field(
        default=20.0,
        metadata=doc(
            "The server pings a connection it has heard nothing from for this many seconds "
            "(or down to 0.8 times as long, see above); one that does not pong within this "
            "time is closed with 1011. 0 turns pings off.",
            exclusiveMinimum=0,
        ),
    )
    idle_timeout_seconds: float = attrs.field(
        default=300.0,
        metadata=doc(
            "A connection that sends no frame for this long is closed with 4001 (`idle "
            "timeout`). WebSocket pongs do not count: a client that may stay silent SHOULD "
            "send a `ping` request at least every half of this.",
            exclusiveMinimum=0,
        ),
    )
    outgoing_queue: int = attrs.field(
        default=256,
        metadata=doc(
            "Messages waiting to be sent to one connection. A client that stops reading "
            "fills it and is closed with 4000 (`slow consumer`); it never slows down the "
            "others.",
            minimum=1,
        ),
    )
    reaction_seconds: float = attrs.field(
        default=30.0,
        metadata=doc(
            "The default time a decision (a prompt) waits before its default applies; an "
            "encounter's `options.reaction_seconds` overrides it, and each `prompt` carries "
            "the time left.",
            exclusiveMinimum=0,
        ),
    )
    abuse_refusals: int = attrs.field(
        default=40,
        metadata=doc(
            "More messages than this refused with `rate_limited` within "
            "`abuse_window_seconds` close the connection with 1008 (`rate limit abuse`). "
            "Since 1.5.",
            minimum=1,
        ),
    )
    abuse_window_seconds: float = attrs.field(
        default=10.0,
        metadata=doc(
            "The window, in seconds, over which `abuse_refusals` are counted. Since 1.5.",
            exclusiveMinimum=0,
        ),
    )
    max_connections_per_token: int = attrs.field(
        default=4,
        metadata=doc(
            "Connections joined to one encounter with the same token (the GM's, a seat's "
            "or a spectator link); another `join` with it is refused with "
            "`too_many_connections` (5002). Since 1.5.",
            minimum=1,
        ),
    )
    max_spectators_per_encounter: int = attrs.field(
        default=16,
        metadata=doc(
            "Spectator connections joined to one encounter (counted apart from "
            "`max_connections_per_encounter`); another is refused with "
            "`too_many_connections` (5002). Since 1.5.",
            minimum=1,
        ),
    )
    reply_bytes_burst: int = attrs.field(
        default=4_000_000,
        metadata=doc(
            "Bytes of `snapshot`, `join`, `list_encounters`, `list_compendium` and "
            "`list_arenas` replies one connection may be sent at once (a second budget, "
            "refilled at `reply_bytes_per_second`). A reply is sent whole while the budget "
            "is above 0, and may overdraw it; while it is at or below 0 those requests are "
            "refused with `rate_limited`, whose `retry_after_ms` says when it is above 0 "
            "again. Since 1.5.",
            minimum=1,
        ),
    )
    reply_bytes_per_second: float = attrs.field(
        default=200_000.0,
        metadata=doc(
            "Bytes a second at which `reply_bytes_burst` refills. Since 1.5.",
            exclusiveMinimum=0,
        ),
    )
    chat_max_chars: int = attrs.field(
        default=500,
        metadata=doc(
            "The longest `chat` text, in characters (Unicode code points); a longer one is "
            "refused with `invalid_params`. Since 1.6.",
            minimum=1,
        ),
    )
    table_rate_per_second: float = attrs.field(
        default=0.5,
        metadata=doc(
            "`chat` and `roll` requests one seat (the GM, or one player, over all its "
            "connections) may send per second on average: a token bucket of "
            "`table_rate_burst` refilled at this rate, apart from the connection's own "
            "`rate_per_second`. Past it, `rate_limited` with `retry_after_ms`. Since 1.6.",
            exclusiveMinimum=0,
        ),
    )
    table_rate_burst: int = attrs.field(
        default=10,
        metadata=doc(
            "The size of the seat's `chat` and `roll` bucket: up to this many at once. Since 1.6.",
            minimum=1,
        ),
    )


#: The limits a server applies unless its operator changes them.
DEFAULT_LIMITS = Limits()


@attrs.frozen
class HelloResult:
    """``hello`` result: the server's protocol version, identity, capabilities and limits."""

    protocol: str = attrs.field(
        metadata=doc('The server\'s version, `"1.7"`.', pattern=r"^1\.[0-9]+$")
    )
    server: ServerInfo = attrs.field(metadata=doc("Who the server is."))
    capabilities: Capabilities = attrs.field(metadata=doc("What the server can do."))
    limits: Limits = attrs.field(
        metadata=doc(
            "The limits in force (see [Limits](#limits)).",
            type_text="[Limits](#limits)",
            expand=False,
        )
    )
    gm: str | None = attrs.field(
        metadata=doc(
            "The name of the GM whose `gm_key` authenticated this connection; null "
            "without a key. Since 1.3."
        ),
    )


# -- encounters and seats --------------------------------------------------------------------


#: A creature spelled out in a roster (docs/encounters.md; the server checks every field).
_ROSTER_CREATURE: dict[str, Any] = {
    "type": "object",
    "required": ["id", "name", "side"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "name": {"type": "string"},
        "side": {"type": "string"},
    },
    # (no "compendium": that is a reference; ajv's strict mode wants it defined here)
    "not": {"properties": {"compendium": True}, "required": ["compendium"]},
    "additionalProperties": True,
}
_ROSTER_WORD = {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}
_ROSTER_OVERRIDE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 100},
        "hp": {"type": "integer", "minimum": 1, "maximum": 999},
        "ac": {"type": "integer", "minimum": 1, "maximum": 30},
        "zone": {"type": ["string", "null"]},
        "hidden": {"type": "boolean"},
    },
    "additionalProperties": False,
}
#: The keys of a roster reference: default and meaning (SPEC.md's generated table).
ROSTER_REFERENCE_KEYS: dict[str, tuple[str, str]] = {
    "compendium": ("required", "the entry's full id, `<source>.<id>` (`srd.goblin`)"),
    "count": ("1", "how many copies, 1 to 50"),
    "id": (
        "the entry's id",
        "the copies' ids are `<id>-1`, `<id>-2`, ... skipping ids already in the roster",
    ),
    "side": ('`"enemies"`', "their side"),
    "zone": ("none", "their starting zone"),
    "hidden": ("false", "hidden from players and spectators"),
    "group": (
        "the entry's id",
        "two or more copies form this initiative group: identical creatures roll once and "
        "act in one slot (docs/rules.md, 3); two references to one entry share it",
    ),
    "overrides": (
        "none",
        "`name`, `hp` (sets `hp` and `max_hp`), `ac`, `zone`, `hidden`: one object for "
        "every copy, or a list with one object per copy",
    ),
    "hp": (
        '`"average"`',
        '`"average"`: the entry\'s average hit points; `"roll"`: the server rolls each '
        "copy's hit points from the entry's hit dice with the encounter's dice, logged in "
        "a `dice_drawn` event (a copy whose `overrides` set `hp` keeps it). Since 1.6",
    ),
}
#: A roster item naming a compendium entry (since 1.3; SPEC.md, "Roster references").
_ROSTER_REFERENCE: dict[str, Any] = {
    "type": "object",
    "description": "Copies of a compendium entry: see SPEC.md, Roster references.",
    "required": ["compendium"],
    "properties": {
        "compendium": {"type": "string", "pattern": r"^[a-z][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 50, "default": 1},
        "id": _ROSTER_WORD,
        "side": {**_ROSTER_WORD, "default": "enemies"},
        "group": _ROSTER_WORD,
        "zone": {"type": ["string", "null"]},
        "hidden": {"type": "boolean", "default": False},
        "overrides": {"anyOf": [_ROSTER_OVERRIDE, {"type": "array", "items": _ROSTER_OVERRIDE}]},
        "hp": {"enum": ["average", "roll"], "default": "average"},
    },
    "additionalProperties": False,
}


#: The most seats one ``create_encounter`` may ask for.
MAX_SEATS = 20


def _few_seats(_: object, attribute: attrs.Attribute[list[Any]], value: list[Any]) -> None:
    if len(value) > MAX_SEATS:
        raise ValueError(f"'{attribute.name}' may hold at most {MAX_SEATS} seats")
    players = [seat.player for seat in value]
    for player in players:
        if players.count(player) > 1:
            raise ValueError(f"'{attribute.name}' names the player {player!r} twice")


@attrs.frozen
class SeatRequest:
    """A player seat asked for in ``create_encounter``: the player, who brings a character."""

    player: str = attrs.field(
        validator=_player_id,
        metadata=doc(
            "The player id, shown to the GM (`Ana`): 1 to 64 characters, not `gm`.",
            minLength=1,
            maxLength=MAX_ID_LENGTH,
            keywords={"not": {"const": "gm"}},
        ),
    )
    zone: str | None = attrs.field(
        default=None,
        metadata=doc(
            "The zone the character starts in (null: the arena's first zone). The server "
            "keeps it in memory: after a restart, a character sent later starts in the "
            "arena's first zone (the GM moves it).",
            minLength=1,
        ),
    )


@attrs.frozen
class CreateEncounterParams:
    """``create_encounter`` params: a name, an arena (a bundled name or an inline arena
    object), the roster and optional options; ``server_key`` when the server wants one."""

    name: str = attrs.field(metadata=doc("The encounter's name, shown to everyone."))
    arena: str | dict[str, Any] = attrs.field(
        metadata=doc(
            'A bundled arena\'s name (from `capabilities.arenas`, e.g. `"tavern"`), or an '
            "inline arena object in the arena file format (`docs/arenas.md`, schema "
            "`arena.schema.json`); the server checks it fully.",
            type_text="string or object",
            schema={"anyOf": [{"type": "string", "minLength": 1}, {"$ref": "arena.schema.json"}]},
        )
    )
    creatures: list[dict[str, Any]] = attrs.field(
        metadata=doc(
            "The roster, in order: creature objects as in `docs/encounters.md` (`id`, "
            "`name` and `side` required; `controller`, `size`, `speeds`, `hp`, `attacks`, "
            "`hidden`, `zone` ... optional), or (since 1.3) references to compendium "
            'entries with a count (`{"compendium": "srd.goblin", "count": 4}`, '
            "[Roster references](#roster-references)). Unknown keys are errors; the server "
            "checks every field.",
            items={"anyOf": [_ROSTER_CREATURE, _ROSTER_REFERENCE]},
            type_text="array of object",
        )
    )
    options: dict[str, Any] | None = attrs.field(
        default=None,
        metadata=doc(
            "Encounter options (see `capabilities.options`); those left out keep their defaults."
        ),
    )
    server_key: str | None = attrs.field(
        default=None,
        metadata=doc(
            "The operator's server key: lets a connection without a GM key create "
            "encounters (see [Who may create](#who-may-create-encounters))."
        ),
    )
    public: bool = attrs.field(
        default=False,
        metadata=doc(
            "List the encounter to anyone in `list_encounters` and let anyone `join` it "
            "as a spectator without a token. Since 1.3."
        ),
    )
    seats: list[SeatRequest] = attrs.field(
        factory=list,
        validator=_few_seats,
        metadata=doc(
            f"Player seats whose character the player fills in (at most {MAX_SEATS}): a "
            "token for each comes back in `seats`; the player sends their character with "
            "`submit_character`. Since 1.3.",
            maxItems=MAX_SEATS,
        ),
    )
    dice: dict[str, Any] | None = attrs.field(
        default=None,
        metadata=doc(
            'The dice (SPEC.md, "Dice"): `{"mode": "fair"}` (the default: a secret seed, '
            'committed now and revealed when the encounter ends) or `{"mode": "seeded", '
            '"seed": "..."}` (rolls are a pure function of the public seed and the roll '
            "counter, for tests and replays). A seed is 1-128 printable ASCII characters "
            "without spaces; anything else is `invalid_params`.",
            schema=_DICE_OPTION,
            type_text="object",
        ),
    )
    idempotency_key: str | None = idempotency_key_field(
        "1.6", "the same creator (the same GM key, server key or address)"
    )


@attrs.frozen
class CreateEncounterResult:
    """``create_encounter`` result: the new encounter's id, the GM token and a snapshot."""

    encounter: str = attrs.field(
        metadata=doc("The new encounter's id, chosen by the server.", minLength=1)
    )
    gm_token: str = attrs.field(
        metadata=doc(
            "The GM's secret token. Keep it: `join` with it to be the GM again.", minLength=1
        )
    )
    role: Literal["gm"] = attrs.field(metadata=doc("The role of this connection in the encounter."))
    seq: int = attrs.field(
        metadata=doc(
            "The seq of the last event: 1 (`encounter_created`), or 2 when the dice are "
            "verifiable (`dice_committed` follows it).",
            minimum=0,
        )
    )
    snapshot: dict[str, Any] = attrs.field(
        metadata=doc("The encounter as the GM sees it.", schema=_SNAPSHOT, type_text=_SNAPSHOT_TEXT)
    )
    seats: dict[str, str] = attrs.field(
        metadata=doc(
            "Player id \u2192 the token of each seat asked for in `seats` (empty when "
            "none was). Since 1.3."
        ),
    )


# -- the compendium (since 1.3) ----------------------------------------------------------------

#: The most entries one ``list_compendium`` page holds.
MAX_COMPENDIUM_PAGE = 50


def _challenge(_: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not 0 <= value <= 30:
        raise ValueError(f"'{attribute.name}' must be a challenge rating from 0 to 30, not {value}")


def _search_text(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if len(value) > 200:
        raise ValueError(f"'{attribute.name}' must be at most 200 characters")


def _few_ids(
    _: object, attribute: attrs.Attribute[list[str] | None], value: list[str] | None
) -> None:
    if value is not None and len(value) > MAX_COMPENDIUM_PAGE:
        raise ValueError(f"'{attribute.name}' may hold at most {MAX_COMPENDIUM_PAGE} ids")


def _page_size(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not 1 <= value <= MAX_COMPENDIUM_PAGE:
        raise ValueError(f"'{attribute.name}' must be from 1 to {MAX_COMPENDIUM_PAGE}, not {value}")


_COMPENDIUM_ENTRY = {"$ref": "compendium.schema.json#/$defs/CompendiumEntry"}


@attrs.frozen
class ListCompendiumParams:
    """``list_compendium`` params: what to look for (every filter optional) and which page."""

    text: str = attrs.field(
        default="",
        validator=_search_text,
        metadata=doc(
            "Words that must all appear (case-insensitively) in an entry's name, full id, "
            "type or tags; empty: every entry.",
            maxLength=200,
        ),
    )
    type: str | None = attrs.field(
        default=None,
        metadata=doc("Only entries of this creature type (`humanoid`, `beast`, `undead`, ...)."),
    )
    tag: str | None = attrs.field(
        default=None, metadata=doc("Only entries with this tag (`goblinoid`, `swamp`, ...).")
    )
    source: str | None = attrs.field(
        default=None, metadata=doc("Only entries of this source (`srd`).")
    )
    cr_min: float | None = attrs.field(
        default=None,
        validator=_challenge,
        metadata=doc("The lowest challenge rating (0.125 for 1/8).", minimum=0, maximum=30),
    )
    cr_max: float | None = attrs.field(
        default=None,
        validator=_challenge,
        metadata=doc("The highest challenge rating.", minimum=0, maximum=30),
    )
    offset: int = attrs.field(
        default=0,
        validator=_non_negative,
        metadata=doc("How many matching entries to skip (paging).", minimum=0),
    )
    limit: int = attrs.field(
        default=20,
        validator=_page_size,
        metadata=doc(
            f"How many entries to send at most (1 to {MAX_COMPENDIUM_PAGE}).",
            minimum=1,
            maximum=MAX_COMPENDIUM_PAGE,
        ),
    )
    ids: list[str] | None = attrs.field(
        default=None,
        validator=_few_ids,
        metadata=doc(
            f"Only the entries with these full ids (at most {MAX_COMPENDIUM_PAGE}; ids the "
            "compendium does not have are left out): to look up entries a client kept.",
            maxItems=MAX_COMPENDIUM_PAGE,
        ),
    )


@attrs.frozen
class CompendiumItem:
    """One compendium entry: its full id, its source and its data."""

    id: str = attrs.field(
        metadata=doc("The full id, `<source>.<entry id>`, to name in a roster.", minLength=3)
    )
    source: str = attrs.field(metadata=doc("The source's name (`srd`)."))
    entry: dict[str, Any] = attrs.field(
        metadata=doc(
            "The entry, in the compendium file format (`compendium.schema.json`, "
            "`CompendiumEntry`; docs/compendium.md).",
            schema=_COMPENDIUM_ENTRY,
            type_text="compendium entry",
        )
    )


@attrs.frozen
class CompendiumSourceInfo:
    """A source of entries: its name, title, licence and the attribution it requires."""

    name: str = attrs.field(metadata=doc("The source's name, the prefix of its ids."))
    title: str = attrs.field(metadata=doc("What it is, for people."))
    license: str = attrs.field(metadata=doc("Its licence (an SPDX id), or empty."))
    attribution: str = attrs.field(
        metadata=doc("The credit its licence requires; show it with its entries, or empty.")
    )


@attrs.frozen
class ListCompendiumResult:
    """``list_compendium`` result: one page of the matching entries, by name, and their sources."""

    total: int = attrs.field(metadata=doc("How many entries match, over every page.", minimum=0))
    offset: int = attrs.field(metadata=doc("The `offset` asked for.", minimum=0))
    entries: list[CompendiumItem] = attrs.field(
        metadata=doc("The matching entries from `offset` on, at most `limit`, by name then id.")
    )
    sources: list[CompendiumSourceInfo] = attrs.field(
        metadata=doc("The sources of the entries in this page, each once.")
    )


# -- the builder (since 1.3) -------------------------------------------------------------------

#: The most arenas one ``list_arenas`` page holds (an arena is a few kilobytes).
MAX_ARENA_PAGE = 20


def _arena_page(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not 1 <= value <= MAX_ARENA_PAGE:
        raise ValueError(f"'{attribute.name}' must be from 1 to {MAX_ARENA_PAGE}, not {value}")


_ARENA = {"$ref": "arena.schema.json"}
_CHARACTER = {"$ref": "character.schema.json"}


@attrs.frozen
class ListArenasParams:
    """``list_arenas`` params: which page of the server's arenas."""

    offset: int = attrs.field(
        default=0,
        validator=_non_negative,
        metadata=doc("How many arenas to skip (paging).", minimum=0),
    )
    limit: int = attrs.field(
        default=10,
        validator=_arena_page,
        metadata=doc(
            f"How many arenas to send at most (1 to {MAX_ARENA_PAGE}).",
            minimum=1,
            maximum=MAX_ARENA_PAGE,
        ),
    )


@attrs.frozen
class ArenaItem:
    """One arena of the server: the name `create_encounter` takes, and the arena itself."""

    name: str = attrs.field(
        metadata=doc("The name to give `create_encounter`'s `arena` (`tavern`).", minLength=1)
    )
    arena: dict[str, Any] = attrs.field(
        metadata=doc(
            "The arena in the arena file format (`docs/arenas.md`; a TOML file converted "
            "to the same object): zones with their sizes, links, assets, for a preview.",
            schema=_ARENA,
            type_text="arena object",
        )
    )
    library: bool = attrs.field(
        default=False,
        metadata=doc(
            "A GM saved it in the server's library (`save_arena`); false for a bundled or "
            "a plugin's arena. Since 1.6."
        ),
    )
    yours: bool = attrs.field(
        default=False,
        metadata=doc(
            "A library arena this connection's GM key saved (the operator: every library "
            "arena): it may replace or delete it. Since 1.6."
        ),
    )


@attrs.frozen
class SaveArenaParams:
    """``save_arena`` params: an arena to keep in the server's library (since 1.6)."""

    arena: dict[str, Any] = attrs.field(
        metadata=doc(
            "The arena as an object (a JSON arena file's content), checked as `check_arena` "
            "checks it, and its `map.image` stored on the server (`POST /images`). It is "
            "saved under its `id`, which `create_encounter`'s `arena` then takes.",
            schema=_ARENA,
            type_text="arena object",
        )
    )
    idempotency_key: str | None = arena_owner_key_field()


@attrs.frozen
class SaveArenaResult:
    """``save_arena`` result: saved, or the problems that kept it from being saved."""

    saved: bool = attrs.field(metadata=doc("Whether the arena was saved."))
    name: str = attrs.field(metadata=doc("The arena's name in the library: its `id`."))
    replaced: bool = attrs.field(
        metadata=doc("It replaced the key's own arena of that name (false: a new one).")
    )
    problems: list[ProblemInfo] = attrs.field(
        metadata=doc(
            "Every problem found, as `check_arena` reports them (and `map.image` when no "
            "such image is stored); empty when saved. Nothing is saved when there is one."
        )
    )


@attrs.frozen
class DeleteArenaParams:
    """``delete_arena`` params: a library arena to forget (since 1.6)."""

    name: str = attrs.field(metadata=doc("The arena's name in the library.", minLength=1))
    idempotency_key: str | None = arena_owner_key_field()


@attrs.frozen
class DeleteArenaResult:
    """``delete_arena`` result: the arena is no longer in the library (encounters made
    with it keep their own copy)."""

    name: str = attrs.field(metadata=doc("The name deleted.", minLength=1))


@attrs.frozen
class ListArenasResult:
    """``list_arenas`` result: one page of the server's arenas, by name."""

    total: int = attrs.field(metadata=doc("How many arenas the server has.", minimum=0))
    offset: int = attrs.field(metadata=doc("The `offset` asked for.", minimum=0))
    arenas: list[ArenaItem] = attrs.field(
        metadata=doc("The arenas from `offset` on, at most `limit`, by name.")
    )


@attrs.frozen
class CheckArenaParams:
    """``check_arena`` params: an arena to check, as an object or as a file's text."""

    arena: dict[str, Any] | None = attrs.field(
        default=None,
        metadata=doc(
            "The arena as an object (a JSON arena file's content). Give this or `text`.",
            type_text="object or null",
        ),
    )
    text: str | None = attrs.field(
        default=None,
        metadata=doc(
            "An arena file's text, JSON or TOML as `format` says: the server parses it "
            "(so a browser needs no TOML parser). Give this or `arena`."
        ),
    )
    format: Literal["json", "toml"] = attrs.field(
        default="json", metadata=doc("The format of `text`: `json` or `toml`.")
    )


@attrs.frozen
class ProblemInfo:
    """One problem of a checked arena or character, at its place."""

    path: str = attrs.field(
        metadata=doc(
            "Where: a path into the object (`zones[1].size`, `character.abilities`), a "
            "line of the text (`line 4`), or empty for the whole."
        )
    )
    message: str = attrs.field(metadata=doc("What is wrong there.", minLength=1))


@attrs.frozen
class CheckArenaResult:
    """``check_arena`` result: every problem of the arena (none: it is valid), and the
    arena as an object to give `create_encounter`."""

    problems: list[ProblemInfo] = attrs.field(
        metadata=doc("Every problem found, in document order; empty when the arena is valid.")
    )
    arena: dict[str, Any] | None = attrs.field(
        metadata=doc(
            "The arena as an object (a TOML text converted) when it is valid, to send as "
            "`create_encounter`'s `arena`; null when it is not.",
            type_text="object or null",
        )
    )


@attrs.frozen
class CheckCharacterParams:
    """``check_character`` params: a character to check."""

    character: dict[str, Any] = attrs.field(
        metadata=doc(
            "A character in the character file format (`docs/characters.md`), or in `format`.",
            type_text="object",
        )
    )
    format: Literal["zonekeep", "foundry", "improved-initiative"] = attrs.field(
        default="zonekeep",
        metadata=doc(
            "The format of `character`: `zonekeep` (the character file format), `foundry` "
            "(a Foundry VTT dnd5e actor export) or `improved-initiative` (an Improved "
            "Initiative statblock); the server turns the last two into a character file "
            "(`docs/characters.md`, Importing). Since 1.6."
        ),
    )


@attrs.frozen
class CheckCharacterResult:
    """``check_character`` result: every problem of the character (none: it is valid)."""

    problems: list[ProblemInfo] = attrs.field(
        metadata=doc("Every problem, each at its place; empty when the character is valid.")
    )
    unmapped: list[str] = attrs.field(
        metadata=doc(
            "What of an imported sheet has no place in a character file, one line per "
            "part, by name (empty for the `zonekeep` format). Since 1.6.",
        ),
    )
    character: dict[str, Any] | None = attrs.field(
        metadata=doc(
            "The imported sheet as a character file (null for the `zonekeep` format, "
            "or a sheet that is not in its format at all). Since 1.6.",
            type_text="object or null",
        ),
    )


@attrs.frozen
class SubmitCharacterParams:
    """``submit_character`` params: a seat's character, to add to the encounter."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    character: dict[str, Any] = attrs.field(
        metadata=doc(
            "The character, in the character file format (`docs/characters.md`, "
            "`character.schema.json`), or in `format`.",
            type_text="object",
        )
    )
    player: str | None = attrs.field(
        default=None,
        metadata=doc(
            "The seat: a player leaves it out (their own seat, the only one they may "
            "fill); the GM names a waiting seat's player id."
        ),
    )
    idempotency_key: str | None = idempotency_key_field()
    format: Literal["zonekeep", "foundry", "improved-initiative"] = attrs.field(
        default="zonekeep",
        metadata=doc(
            "The format of `character`: `zonekeep` (the character file format), `foundry` "
            "(a Foundry VTT dnd5e actor export) or `improved-initiative` (an Improved "
            "Initiative statblock); the server turns the last two into a character file "
            "(`docs/characters.md`, Importing). Since 1.6."
        ),
    )


@attrs.frozen
class SubmitCharacterResult:
    """``submit_character`` result: the creature the character became."""

    creature: str = attrs.field(metadata=doc("The new creature's id.", minLength=1))
    player: str = attrs.field(metadata=doc("The seat's player id, its controller.", minLength=1))
    seq: int = attrs.field(
        metadata=doc("The seq of its `creature_added` event (pushed before the reply).", minimum=1)
    )
    unmapped: list[str] = attrs.field(
        metadata=doc(
            "What of an imported sheet has no place in a character file, by name (empty "
            "for the `zonekeep` format). Since 1.6.",
        ),
    )


@attrs.frozen
class ListSeatsParams:
    """``list_seats`` params (GM): an encounter the connection joined as its GM."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)


@attrs.frozen
class ListSeatsResult:
    """``list_seats`` result: the encounter's player seats, joined or not, waiting or not."""

    seats: list[SeatInfo] = attrs.field(
        metadata=doc("Every player seat, by player id (`waiting` and `connections` never null).")
    )


@attrs.frozen
class TableHomeParams:
    """``table_home`` params: none (an empty object, or no ``params`` at all)."""


@attrs.frozen
class TableHomeResult:
    """``table_home`` result: the web table's address for this connection, and whether
    (and how) it may create encounters."""

    url: str = attrs.field(
        metadata=doc(
            "The web table's home page: `<public_url>table/` when the operator set "
            "`public_url`, else at the address this connection reached the server at (its "
            "handshake's `Host`), `http://192.168.1.20:8765/table/`.",
            minLength=1,
        )
    )
    may_create: bool = attrs.field(
        metadata=doc(
            "Whether this connection may create encounters now (its GM key, an open "
            "server, or the server's own machine on a server with no key at all)."
        )
    )
    how: str = attrs.field(
        metadata=doc(
            "One sentence, for a person: who may create encounters on this server and, "
            "when this connection may not, how to get the right (a GM key from the "
            "operator, or the server's own machine)."
        )
    )


@attrs.frozen
class TableLinkParams:
    """``table_link`` params: an encounter and one of its tokens, to make a link of."""

    encounter: str = attrs.field(metadata=doc("The encounter id.", minLength=1, maxLength=100))
    token: str = attrs.field(
        metadata=doc(
            "A token of the encounter (any role). The server puts it in the link as it is "
            "and does not check it.",
            minLength=1,
            maxLength=200,
        )
    )


@attrs.frozen
class TableLinkResult:
    """``table_link`` result: the web-table link and its QR code."""

    url: str = attrs.field(
        metadata=doc("The web-table link, `<table_home's url>#encounter=…&token=…`.", minLength=1)
    )
    qr_svg: str = attrs.field(
        metadata=doc(
            "The link as a QR code (error correction M), an SVG document: black modules "
            "on white with a quiet zone of four modules, to show as an image a phone "
            "can scan.",
            minLength=1,
        )
    )


@attrs.frozen
class EncounterOptionsParams:
    """``encounter_options`` params: none (an empty object, or no ``params`` at all)."""


@attrs.frozen
class EncounterOptionsResult:
    """``encounter_options`` result: the JSON Schema of the encounter options."""

    schema: dict[str, Any] = attrs.field(
        metadata=doc(
            "The `EncounterOptions` JSON Schema (as in `event_payload.schema.json`): each "
            "option's type, default, range (`minimum`, `maximum`) and meaning "
            "(`description`), for a form that offers them all. Since 1.4 its `settings` "
            "property spells out each plugin's settings (`properties` by plugin name, "
            "then by setting id, each with this server's value as its `default`).",
            type_text="JSON Schema object",
        )
    )
    settings: list[SettingInfo] = attrs.field(
        metadata=doc(
            "Every plugin setting with its schema, default and this server's value, as "
            "in `hello`'s capabilities. Since 1.4."
        ),
    )


@attrs.frozen
class JoinParams:
    """``join`` params: the encounter, a token, and ``last_seq`` to resume."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    token: str | None = attrs.field(
        default=None,
        metadata=doc(
            "A GM, player or spectator token. Left out (or null): join a public "
            "encounter as a spectator (since 1.3).",
            minLength=1,
        ),
    )
    last_seq: int | None = attrs.field(
        default=None,
        validator=_non_negative,
        metadata=doc(
            "The seq of the last event this client has seen; asks for the missed events "
            "instead of a snapshot.",
            minimum=0,
        ),
    )
    client_seed: str | None = attrs.field(
        default=None,
        metadata=doc(
            "This seat's contribution to fair dice (a player's or the GM's; 1-128 "
            "printable ASCII characters, no spaces), mixed into every later roll and "
            "recorded as a `dice_contributed` event. Ignored for seeded dice, for "
            "spectators and once the encounter has ended.",
            keywords={"pattern": _SEED_PATTERN},
        ),
    )
    history: int | None = attrs.field(
        default=None,
        validator=_history,
        metadata=doc(
            "With a snapshot (no `last_seq`): also send the last this many events "
            f"(1 to {MAX_HISTORY}) as this seat may see them, in the result's `history`, "
            "for a page to show the recent log. Since 1.3.",
            minimum=1,
            maximum=MAX_HISTORY,
        ),
    )
    idempotency_key: str | None = attrs.field(
        default=None,
        validator=_idempotency_key,
        metadata=doc(
            "A key the client chose for this join's `client_seed` (1-64 printable ASCII "
            "characters, no spaces): a repeat with the same key and `client_seed` from the "
            "same seat, on any connection and after a restart, joins as any join does but "
            "mixes nothing again (the seed was mixed once). `last_seq`, `history` and the "
            "token may differ. A join whose seed is ignored, or without a seed, spends no "
            "key. See [Idempotency](#idempotency). Since 1.6.",
            keywords={"pattern": IDEMPOTENCY_KEY_PATTERN},
        ),
    )


@attrs.frozen
class JoinResult:
    """``join`` result: the seat's role (and player id), the current ``seq``, and either a
    ``snapshot`` or the missed ``events`` (the other one is null)."""

    role: Role = attrs.field(metadata=doc("What the token made this connection."))
    player: str | None = attrs.field(
        metadata=doc("The player id for a player seat; null for the GM and spectators.")
    )
    seq: int = attrs.field(metadata=doc("The seq of the encounter's last event.", minimum=0))
    snapshot: dict[str, Any] | None = attrs.field(
        metadata=doc(
            "The encounter as this seat may see it; null when `events` is given.",
            schema=_SNAPSHOT,
            type_text=f"{_SNAPSHOT_TEXT} or null",
        )
    )
    events: list[dict[str, Any]] | None = attrs.field(
        metadata=doc(
            "The missed events, in order (the first has seq `last_seq + 1`); null when "
            "`snapshot` is given.",
            schema={"type": "array", "items": _EVENT},
            type_text="array of [Event](#events) or null",
        )
    )
    history: list[dict[str, Any]] | None = attrs.field(
        metadata=doc(
            "With `history` asked and a snapshot given: the last events up to `seq`, "
            "oldest first, each filtered for this seat as it happened (a hidden action "
            "is a `hidden` event); fewer when the log is shorter or was trimmed, null "
            "when not asked, with `events`, when a trimmed log cannot be filtered "
            "for this seat, or (rarely) when the encounter kept moving while the server "
            "read its log. Since 1.3.",
            schema={"type": "array", "items": _EVENT},
            type_text="array of [Event](#events) or null",
        ),
    )


@attrs.frozen
class CreateSeatParams:
    """``create_seat`` params (GM): a player id and the creatures that player controls."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    player: str = attrs.field(
        validator=_player_id,
        metadata=doc(
            "The player id. A creature whose `controller` is this id is the player's.",
            minLength=1,
            maxLength=MAX_ID_LENGTH,
            type_text=f'string, 1 to {MAX_ID_LENGTH} characters, not `"gm"`',
            keywords={"not": {"const": "gm"}},
        ),
    )
    creatures: list[str] = attrs.field(
        factory=list,
        metadata=doc(
            "Creature ids to hand to this player: for each one not already controlled by "
            "the player, the server applies a GM override of its `controller`, and of "
            "`pc` to true when it is not a player character yet (an `override_applied` "
            "event each, pushed before the reply)."
        ),
    )
    idempotency_key: str | None = gm_seat_key_field()


@attrs.frozen
class CreateSeatResult:
    """``create_seat`` result: the player's token."""

    token: str = attrs.field(
        metadata=doc("The player's secret token, to pass to the player out of band.", minLength=1)
    )
    player: str = attrs.field(metadata=doc("The player id."))


@attrs.frozen
class CreateSpectatorLinkParams:
    """``create_spectator_link`` params (GM): the encounter to make a spectator token for."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    idempotency_key: str | None = gm_seat_key_field()


@attrs.frozen
class CreateSpectatorLinkResult:
    """``create_spectator_link`` result: a spectator token."""

    token: str = attrs.field(metadata=doc("A spectator token.", minLength=1))


# -- taking tokens back ----------------------------------------------------------------------


_CLOSED = doc(
    "How many open connections joined with the revoked token(s) were closed (code 4002).",
    minimum=0,
)


@attrs.frozen
class RemoveSeatParams:
    """``remove_seat`` params (GM): the player whose seat (every token made for that
    player id) is revoked."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    player: str = attrs.field(
        validator=_not_empty,
        metadata=doc("The player id given to `create_seat`.", minLength=1, maxLength=MAX_ID_LENGTH),
    )
    idempotency_key: str | None = gm_seat_key_field()


@attrs.frozen
class RemoveSeatResult:
    """``remove_seat`` result: how many connections were closed."""

    closed: int = attrs.field(metadata=_CLOSED)


@attrs.frozen
class RevokeSpectatorLinkParams:
    """``revoke_spectator_link`` params (GM): the spectator token to revoke."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    token: str = attrs.field(
        validator=_not_empty,
        metadata=doc("The spectator token, as `create_spectator_link` gave it.", minLength=1),
    )
    idempotency_key: str | None = gm_seat_key_field()


@attrs.frozen
class RevokeSpectatorLinkResult:
    """``revoke_spectator_link`` result: how many connections were closed."""

    closed: int = attrs.field(metadata=_CLOSED)


def _old_token(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not 1 <= len(value) <= MAX_OLD_TOKEN:
        raise ValueError(f"'{attribute.name}' must be 1 to {MAX_OLD_TOKEN} characters long")


#: The longest ``token`` a ``rotate_gm_token`` takes (tokens are far shorter).
MAX_OLD_TOKEN = 200


@attrs.frozen
class RotateGmTokenParams:
    """``rotate_gm_token`` params (GM): the encounter whose GM token is replaced."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    idempotency_key: str | None = gm_seat_key_field()
    token: str | None = attrs.field(
        default=None,
        validator=_old_token,
        metadata=doc(
            "Only from a connection not joined to the encounter as its GM, with the "
            "`idempotency_key` of a rotation whose reply was lost: the GM token that "
            "rotation revoked. Within 10 minutes of the rotation, and while its new token "
            "is still the GM's, the repeat gets the first answer (nothing is rotated, the "
            "connection is not joined); anything else is refused with `bad_token`. "
            "Ignored on a connection joined as the GM. See [Idempotency](#idempotency). "
            "Since 1.6.",
            minLength=1,
            maxLength=MAX_OLD_TOKEN,
        ),
    )


@attrs.frozen
class RotateGmTokenResult:
    """``rotate_gm_token`` result: the new GM token; the old one is revoked."""

    token: str = attrs.field(
        metadata=doc("The new GM token (the only one from now on).", minLength=1)
    )
    closed: int = attrs.field(metadata=_CLOSED)


# -- the lobby -------------------------------------------------------------------------------


def _at_least_one(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not 1 <= value <= MAX_LIST:
        raise ValueError(f"'{attribute.name}' must be from 1 to {MAX_LIST}, not {value}")


#: The most encounters one ``list_encounters`` answer holds.
MAX_LIST = 500


@attrs.frozen
class ListEncountersParams:
    """``list_encounters`` params: which encounters, and which page of them."""

    public_only: bool = attrs.field(
        default=False, metadata=doc("Only the public encounters (not the GM's own others).")
    )
    offset: int = attrs.field(
        default=0,
        validator=_non_negative,
        metadata=doc("How many encounters of the list to skip.", minimum=0),
    )
    limit: int = attrs.field(
        default=100,
        validator=_at_least_one,
        metadata=doc(
            f"At most this many encounters in the answer (1 to {MAX_LIST}).",
            minimum=1,
            maximum=MAX_LIST,
        ),
    )


@attrs.frozen
class SeatInfo:
    """A seat of a listed encounter: the player id and how many connections hold it."""

    player: str = attrs.field(metadata=doc("The player id."))
    connections: int | None = attrs.field(
        metadata=doc(
            "The connections joined to this seat now; null when the encounter is not "
            "loaded (then nobody is).",
            minimum=0,
        )
    )
    waiting: bool | None = attrs.field(
        metadata=doc(
            "true: the seat has no creature yet, its player has not sent their character "
            "(`submit_character`); null when the encounter is not loaded. Since 1.3."
        ),
    )


@attrs.frozen
class EncounterInfo:
    """One encounter as the lobby lists it."""

    id: str = attrs.field(metadata=doc("The encounter id, for `join`.", minLength=1))
    title: str = attrs.field(metadata=doc("The encounter's name."))
    arena: str = attrs.field(
        metadata=doc(
            "The arena, for a person: the name `create_encounter` was given for a "
            'bundled or library arena (`"tavern"`), else an inline arena\'s `name`. '
            "It is not the arena's `id` (the snapshot's `arena.id` is)."
        )
    )
    status: Literal["open", "archived"] = attrs.field(
        metadata=doc(
            "`open` (may be joined; it is loaded on its first join) or `archived` (ended, "
            "or archived by its GM, the operator or the archiving sweep)."
        )
    )
    phase: str = attrs.field(
        metadata=doc(
            "The encounter's step, as the snapshot's `phase`: `\"surprise\"`, "
            '`"positions"`, `"initiative"`, `"turns"` or `"ended"`.'
        )
    )
    round: int = attrs.field(metadata=doc("The round (0 before the first).", minimum=0))
    seats: list[SeatInfo] = attrs.field(metadata=doc("The players' seats, by player id."))
    public: bool = attrs.field(metadata=doc("Whether anyone may see and spectate it."))
    last_activity: str = attrs.field(
        metadata=doc(
            'When someone last joined it or it last changed: ISO 8601 in UTC, "2026-12-01T06:14:00Z".'
        )
    )
    mine: bool = attrs.field(
        metadata=doc(
            "Whether this connection's GM key created it (or the connection is the "
            "operator's), so that `encounter_links`, `set_public` and `archive_encounter` "
            "may name it."
        )
    )


@attrs.frozen
class ListEncountersResult:
    """``list_encounters`` result: a page of encounters, most recently active first."""

    encounters: list[EncounterInfo] = attrs.field(metadata=doc("The encounters of this page."))
    total: int = attrs.field(
        metadata=doc("How many encounters the whole list has (every page).", minimum=0)
    )


@attrs.frozen
class EncounterLinksParams:
    """``encounter_links`` params: one of the GM's own encounters, and whether the GM
    token is rotated."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    keep_gm: bool = attrs.field(
        default=False,
        metadata=doc(
            "true: the GM token is not rotated: `gm_token` is one more GM token, the "
            "earlier ones (and the tables open with them) keep working and `closed` is 0. "
            "false: the GM token is rotated (the earlier ones are revoked)."
        ),
    )
    idempotency_key: str | None = owner_key_field()


@attrs.frozen
class EncounterLinksResult:
    """``encounter_links`` result: a new GM token (the old ones revoked unless
    ``keep_gm``), a fresh token for each seat and a spectator token."""

    encounter: str = attrs.field(metadata=doc("The encounter id.", minLength=1))
    gm_token: str = attrs.field(
        metadata=doc("The new GM token (the only one from now on, unless `keep_gm`).", minLength=1)
    )
    seats: dict[str, str] = attrs.field(
        metadata=doc(
            "Player id \u2192 a fresh token for that seat (earlier seat tokens keep working)."
        )
    )
    spectator_token: str = attrs.field(metadata=doc("A fresh spectator token.", minLength=1))
    closed: int = attrs.field(metadata=_CLOSED)


@attrs.frozen
class SetPublicParams:
    """``set_public`` params: one of the GM's own encounters, and whether it is public."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    public: bool = attrs.field(metadata=doc("true: listed to anyone and open to spectators."))
    idempotency_key: str | None = owner_key_field()


@attrs.frozen
class SetPublicResult:
    """``set_public`` result: the encounter and whether it is public now."""

    encounter: str = attrs.field(metadata=doc("The encounter id.", minLength=1))
    public: bool = attrs.field(metadata=doc("Whether it is public now."))


@attrs.frozen
class ArchiveEncounterParams:
    """``archive_encounter`` params: one of the GM's own encounters."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    idempotency_key: str | None = owner_key_field()


@attrs.frozen
class ArchiveEncounterResult:
    """``archive_encounter`` result: the encounter, and how many connections were in it."""

    encounter: str = attrs.field(metadata=doc("The encounter id.", minLength=1))
    closed: int = attrs.field(
        metadata=doc(
            "How many connections were joined to it (each got `encounter_closed` and is "
            "no longer joined to it; the connection itself stays open).",
            minimum=0,
        )
    )


# -- dice ------------------------------------------------------------------------------------


@attrs.frozen
class ContributeDiceParams:
    """``contribute_dice`` params (GM or player): entropy mixed into every later roll of
    a fair encounter."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    value: str = attrs.field(
        metadata=doc(
            "The contribution: 1-128 printable ASCII characters, no spaces.",
            keywords={"pattern": _SEED_PATTERN},
        )
    )
    idempotency_key: str | None = idempotency_key_field()


@attrs.frozen
class ContributeDiceResult:
    """``contribute_dice`` result: the seq of the ``dice_contributed`` event."""

    seq: int = attrs.field(metadata=doc("The seq of the `dice_contributed` event.", minimum=2))


@attrs.frozen
class RollParams:
    """``roll`` params (GM or player): a free roll at the table, with the encounter's
    dice, that changes nothing in the fight (a ``dice_rolled`` event)."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    dice: str = attrs.field(
        metadata=doc(
            "What to roll: `NdS+M`, `dS`, `NdS-M` or a flat number (at most 100 dice of "
            "2-1000 sides, a modifier within ±1000, 40 characters), as every dice string "
            "([Dice](#dice)).",
            minLength=1,
            maxLength=40,
        )
    )
    label: str = attrs.field(
        default="",
        metadata=doc(
            "What the roll is for, shown with it (0-80 characters, no control characters).",
            maxLength=80,
        ),
    )
    advantage: Literal["none", "advantage", "disadvantage"] = attrs.field(
        default="none",
        metadata=doc(
            "Roll a single die twice and keep the higher (`advantage`) or the lower "
            "(`disadvantage`); ignored for more than one die."
        ),
    )
    private: bool = attrs.field(
        default=False,
        metadata=doc(
            "Seen by the seat that rolled and the GM only (for the GM: by the GM only); "
            "every other seat gets the event as `hidden`."
        ),
    )
    idempotency_key: str | None = idempotency_key_field()


@attrs.frozen
class RollResult:
    """``roll`` result: the seq of the ``dice_rolled`` event and the roll's total."""

    seq: int = attrs.field(metadata=doc("The seq of the `dice_rolled` event.", minimum=2))
    total: int = attrs.field(metadata=doc("The roll's total (its event has every die)."))


@attrs.frozen
class ChatParams:
    """``chat`` params (GM or player): a line of table chat, or a whisper (a
    ``chat_sent`` event)."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    text: str = attrs.field(
        metadata=doc(
            "The message: 1 to `chat_max_chars` characters (hello's limits, 500 by "
            "default), not only spaces; line breaks and tabs are the only control "
            "characters allowed.",
            minLength=1,
        )
    )
    to: str | None = attrs.field(
        default=None,
        metadata=doc(
            'Null for the whole table; `"gm"` for a whisper to the GM (from a player); a '
            "player id for the GM's whisper to that player. A whisper reaches its two "
            "seats only: every other seat, spectators included, gets its event as "
            "`hidden`.",
            minLength=1,
        ),
    )
    idempotency_key: str | None = idempotency_key_field()


@attrs.frozen
class ChatResult:
    """``chat`` result: the seq of the ``chat_sent`` event."""

    seq: int = attrs.field(metadata=doc("The seq of the `chat_sent` event.", minimum=2))


@attrs.frozen
class RotateDiceParams:
    """``rotate_dice`` params (GM): reveal the fair dice's seed now and commit a new one."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    idempotency_key: str | None = idempotency_key_field()


@attrs.frozen
class RotateDiceResult:
    """``rotate_dice`` result: the seq of the new ``dice_committed`` event and its
    commitment."""

    seq: int = attrs.field(metadata=doc("The seq of the new `dice_committed` event.", minimum=2))
    commitment: str = attrs.field(
        metadata=doc("The new commitment: SHA-256 of the new secret seed, hex.", minLength=64)
    )


# -- playing ---------------------------------------------------------------------------------


@attrs.frozen
class CommandParams:
    """``command`` params: an engine command ``type`` and its ``params``."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    type: str = attrs.field(
        validator=_not_empty,
        metadata=doc(
            'The command\'s id, e.g. `"move"` (see `capabilities.commands`).', minLength=1
        ),
    )
    params: dict[str, Any] = attrs.field(
        factory=dict,
        metadata=doc(
            "The command's parameters, as its entry in `capabilities.commands` describes."
        ),
    )
    idempotency_key: str | None = idempotency_key_field()


@attrs.frozen
class CommandResult:
    """``command`` result: the seq range of the events it caused (empty when
    ``first_seq`` is ``last_seq + 1``)."""

    first_seq: int = attrs.field(
        metadata=doc("The seq of the first event the command caused.", minimum=1)
    )
    last_seq: int = attrs.field(
        metadata=doc(
            "The seq of its last event. When a command causes no event, `first_seq` is "
            "`last_seq + 1`.",
            minimum=0,
        )
    )


@attrs.frozen
class ActionsParams:
    """``actions`` params: which creature to ask about."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    creature: str = attrs.field(metadata=doc("The creature's id."))


@attrs.frozen
class AttackOption:
    """One of the creature's attacks, with the creatures it may target with it now."""

    name: str = attrs.field(metadata=doc("The attack's name: the `attack` parameter to send."))
    label: str = attrs.field(
        metadata=doc('How a person reads it: name, bonus and damage (`"Rapier +5, 1d8+3"`).')
    )
    bonus: int = attrs.field(metadata=doc("The attack bonus."))
    damage: str = attrs.field(metadata=doc('The damage dice (`"1d8+3"`).'))
    targets: list[str] = attrs.field(
        metadata=doc(
            "The creature ids the rules accept as `target` with this attack now (in range "
            "and sight), never one this seat may not see. Empty when the action is "
            "unavailable."
        )
    )


@attrs.frozen
class ZoneOption:
    """A zone the creature can enter now and what entering it costs."""

    zone: str = attrs.field(metadata=doc("The zone's id."))
    cost_feet: int = attrs.field(
        metadata=doc("The feet of movement entering it spends now.", minimum=0)
    )
    path: list[str] = attrs.field(
        metadata=doc(
            "The `zones` parameter of `enter` that gets there: the zone itself, or the "
            "adjacent zone and then this one."
        )
    )


@attrs.frozen
class EndingInfo:
    """For the GM: whether the rules would end the encounter and what keeps it open."""

    over: str | None = attrs.field(
        metadata=doc(
            "Why the rules consider the fight over (one side defeated, surrendered or "
            "escaped); null while it goes on."
        )
    )
    blockers: list[str] = attrs.field(
        metadata=doc(
            'What keeps the encounter from ending, as sentences (`"Aria is dying"`, a '
            "time-sensitive hazard); `end_encounter` refuses without `force` while any remain."
        )
    )
    dying: list[str] = attrs.field(metadata=doc("The ids of the dying creatures."))


@attrs.frozen
class SequenceItemInfo:
    """One attack of a multiattack sequence."""

    attack: str = attrs.field(metadata=doc("The attack's name (the `attack` parameter)."))
    disadvantage: bool = attrs.field(
        metadata=doc("Whether it is made with disadvantage (the goblin boss's second attack).")
    )


@attrs.frozen
class FeatureInfo:
    """One trait or action of the creature, as its stat block gives it, and whether the
    server automates it."""

    id: str = attrs.field(metadata=doc("The feature id (`multiattack`, `pack-tactics`, `gm`)."))
    name: str = attrs.field(metadata=doc("Its name."))
    kind: str = attrs.field(
        metadata=doc(
            "`trait`, or what the action costs: `action`, `bonus_action`, `reaction`, `legendary`."
        )
    )
    text: str = attrs.field(metadata=doc("What it does, for the GM."))
    automated: bool = attrs.field(
        metadata=doc("Whether an installed plugin automates it; false: the GM adjudicates it.")
    )
    gm: str | None = attrs.field(
        metadata=doc(
            'When not automated, why ("GM adjudicates"): the data\'s own reason, or "no '
            'installed plugin implements it"; null when automated.'
        )
    )
    uses: dict[str, Any] | None = attrs.field(
        metadata=doc(
            "How often it may be used (`recharge`, `per` with `count`, or `charges`); "
            "null without a limit.",
            type_text="object or null",
        )
    )
    left: int | None = attrs.field(
        metadata=doc("The uses it has left (a recharge: 1 ready, 0 spent); null without `uses`.")
    )


@attrs.frozen
class ChoiceOption:
    """One way the creature may send a command now, as the plugin declaring it lists it
    (a spell it can cast): the parameters it fixes and the legal values of the others."""

    label: str = attrs.field(metadata=doc("For a person: `Fireball (level 3)`."))
    params: dict[str, Any] = attrs.field(
        metadata=doc('The parameters this choice fixes (`{"spell": "fireball"}`).')
    )
    options: dict[str, list[Any]] = attrs.field(
        metadata=doc(
            "For each parameter still to choose, its legal values now (`slot`: the slot "
            "levels; `target`: creature ids, never one this seat may not see; `zone`: zone "
            "ids)."
        )
    )
    info: dict[str, Any] = attrs.field(
        factory=dict,
        metadata=doc(
            "Facts about the choice a client may show without parsing the label (a spell: "
            "`level`, 0 for a cantrip, and `concentration`; an area spell that takes "
            "targets: `targets_by_zone`, for each zone it may be aimed at the creature ids in "
            "that zone, never one this seat may not see; a spell aimed at a zone that takes "
            "no targets, such as a moonbeam, has none; `most_targets`, when a spell aimed at "
            "a zone strikes one creature there at most, the spiritual weapon). Candidates "
            "only: the server's checks decide."
        ),
    )


@attrs.frozen
class ActionDetail:
    """One creature command: whether this seat may send it now, the refusal it would get
    when not, and the legal values of its parameters where the rules can tell (null
    where they do not apply)."""

    id: str = attrs.field(metadata=doc("The command id."))
    available: bool = attrs.field(
        metadata=doc(
            "Whether the command passes every check that does not depend on its other "
            "parameters (and, for a command that takes none, whether the rules accept it)."
        )
    )
    code: str | None = attrs.field(
        metadata=doc(
            "When unavailable: the error name a well-formed command would be refused "
            "with (`not_your_turn`, `no_action_left` ...); null when available."
        ),
    )
    message: str | None = attrs.field(
        metadata=doc("When unavailable: the refusal's sentence, as sending it would get."),
    )
    attacks: list[AttackOption] | None = attrs.field(
        metadata=doc(
            "For attack-like commands (a `target` and an `attack` parameter: `attack`, "
            "`ready`): each of the creature's attacks with its targets."
        ),
    )
    targets: list[str] | None = attrs.field(
        metadata=doc(
            "For other commands with one creature parameter to choose (`shove`, "
            "`engage`, `withdraw`, `move_adjacent` ...): the ids the rules accept now, "
            "never one this seat may not see."
        ),
    )
    zones: list[ZoneOption] | None = attrs.field(
        metadata=doc(
            "For `enter`: the zones the creature can enter now (adjacent ones and those "
            "one further), each with its cost; empty with no movement left."
        ),
    )
    props: list[str] | None = attrs.field(
        metadata=doc(
            "For `take_position`: the ids of the assets in the creature's zone it can "
            "take position at now."
        ),
    )
    sequences: list[list[SequenceItemInfo]] | None = attrs.field(
        metadata=doc(
            "For `multiattack`: the sequences the creature's Multiattack offers (one "
            "action; `sequence` chooses one by number at the first attack), empty "
            "without a Multiattack; null for other commands. Since 1.6."
        ),
    )
    attacks_left: list[SequenceItemInfo] | None = attrs.field(
        metadata=doc(
            "For `multiattack`: the attacks left of the Multiattack the creature is "
            "making this turn (empty when it is not making one). Since 1.6."
        ),
    )
    choices: list[ChoiceOption] | None = attrs.field(
        default=None,
        metadata=doc(
            "For a command whose plugin lists its choices (`cast`, `cast_bonus`: each "
            "spell the creature can cast now, with its slot levels and its legal targets "
            "or zones); empty when the command is unavailable; null for other commands."
        ),
    )


@attrs.frozen
class ActionsResult:
    """``actions`` result: the command ids the creature may use right now, and the same
    with the reasons and parameter values in ``details``."""

    creature: str = attrs.field(metadata=doc("The creature's id."))
    actions: list[str] = attrs.field(
        metadata=doc(
            "Command ids this seat could use for the creature now. Empty for a spectator, "
            "for a creature the player does not control, or when nothing is possible."
        )
    )
    details: list[ActionDetail] = attrs.field(
        metadata=doc(
            "Every creature command, available or not, in the order of `capabilities`' "
            "commands (see [Helping clients](#actions-details)). Since 1.3."
        ),
    )
    ending: EndingInfo | None = attrs.field(
        metadata=doc(
            "For the GM: whether the rules would end the encounter and what keeps it "
            "open (a dying creature, a time-sensitive hazard); null for players and "
            "spectators. Since 1.3."
        ),
    )
    features: list[FeatureInfo] = attrs.field(
        metadata=doc(
            "For the GM and the creature's controller: its traits and actions, each "
            'automated or not ("GM adjudicates", with the reason and its text), with '
            "their uses left; the automated actions are played with their commands "
            "(`multiattack` ...). Empty for spectators and other players. Since 1.6."
        ),
    )


@attrs.frozen
class SnapshotParams:
    """``snapshot`` params: the encounter to see."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)


@attrs.frozen
class SnapshotResult:
    """``snapshot`` result: the encounter as this seat may see it, at ``seq``."""

    seq: int = attrs.field(
        metadata=doc("The seq of the last event the snapshot includes.", minimum=0)
    )
    snapshot: dict[str, Any] = attrs.field(
        metadata=doc("The encounter.", schema=_SNAPSHOT, type_text=_SNAPSHOT_TEXT)
    )


@attrs.frozen
class LeaveParams:
    """``leave`` params: the encounter to leave."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)


@attrs.frozen
class LeaveResult:
    """``leave`` result: an empty object."""


@attrs.frozen
class PingParams:
    """``ping`` params: none (an empty object, or no ``params`` at all)."""


@attrs.frozen
class PingResult:
    """``ping`` result: an empty object."""


@attrs.frozen
class RewindParams:
    """``rewind`` params (GM): the encounter and the ``seq`` to go back to."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    to_seq: int = attrs.field(
        validator=_non_negative,
        metadata=doc(
            "The event to go back to (the state right after it); it must be before the "
            "current seq.",
            minimum=1,
        ),
    )
    idempotency_key: str | None = idempotency_key_field()


@attrs.frozen
class RewindResult:
    """``rewind`` result: the seq of the ``rewound`` event."""

    seq: int = attrs.field(metadata=doc("The seq of the `rewound` event.", minimum=2))


# -- notifications ---------------------------------------------------------------------------


@attrs.frozen
class EventNotification:
    """``event`` notification: one event of a joined encounter, in seq order without gaps."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    seq: int = attrs.field(
        metadata=doc(
            "The event's sequence number: 1 is `encounter_created`, and there are no gaps.",
            minimum=1,
        )
    )
    event: dict[str, Any] = attrs.field(
        metadata=doc(
            '`{"type": ..., ...fields}`; for a player or spectator, an event they may not '
            'see is `{"type": "hidden"}` at its seq.',
            schema=_EVENT,
            type_text="[Event](#events)",
        )
    )
    idempotency_key: str | None = attrs.field(
        default=None,
        metadata=doc(
            "The `idempotency_key` of the request that caused this event: only in the "
            "events a keyed request caused, and only to the connections of the seat that "
            "sent it (its GM, or its player); absent otherwise. Since 1.5.",
            keywords={"pattern": IDEMPOTENCY_KEY_PATTERN},
        )
        | {"added_later": True, "null": False},
    )


@attrs.frozen
class DecisionInfo:
    """A pending decision, as carried by a ``prompt`` (the fields of ``zonekeep.sdk.Decision``)."""

    id: str = attrs.field(metadata=doc("The decision id, to send in the `decide` command."))
    kind: str = attrs.field(
        metadata=doc(
            'What the decision is for: `"opportunity_attack"` (`options` `attack` and '
            '`decline`, for `creature`) or `"initiative_tie"` (an `ordering` of the '
            "tied initiative slots: `options` are slot ids, `InitiativeEntry.slot` of the "
            "snapshot's `initiative`, while `prompt` names their creatures). A plugin MAY "
            "open decisions of other kinds: a client shows `prompt` and `options` as they "
            "are. See [Decisions](#decisions)."
        )
    )
    controller: str = attrs.field(
        metadata=doc('Who may answer: `"gm"` or a player id (the GM may always answer).')
    )
    prompt: str = attrs.field(metadata=doc("The question, for a person."))
    options: list[str] = attrs.field(metadata=doc("The possible answers."))
    default: list[str] = attrs.field(metadata=doc("What applies if nobody answers in time."))
    creature: str | None = attrs.field(metadata=doc("The creature the decision is about, if any."))
    ordering: bool = attrs.field(
        metadata=doc(
            "True: answer with an ordering of all `options`; false: with exactly one of them."
        )
    )
    trigger: dict[str, Any] | None = attrs.field(
        default=None,
        metadata=doc(
            "What a reaction decision interrupted: an attack waiting for the answer "
            '(`{"type": "attack", ...}`: attacker, target, attack, the moment, the roll '
            'when it would hit) or a spell being cast (`{"type": "spell", ...}`: caster, '
            "spell, slot, params, the creatures asked; a Counterspell prompt); absent for "
            "the decisions that interrupt nothing. While "
            "one is pending, the creatures' commands other than reactions are refused "
            "with `decision_pending`. Since 1.6.",
            schema={"type": "object"},
        )
        | {"added_later": True, "null": False},
    )


@attrs.frozen
class PromptNotification:
    """``prompt`` notification: a decision this seat may answer (with the ``decide``
    command) before the deadline."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    decision: DecisionInfo = attrs.field(
        metadata=doc("What is asked, of whom, the possible answers and the default.")
    )
    deadline_seconds: float = attrs.field(
        metadata=doc("Seconds left before the default applies.", minimum=0)
    )


@attrs.frozen
class TurnTimerNotification:
    """``turn_timer`` notification: the turn under way ends by itself when the time is up
    (the encounter's ``turn_seconds``)."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    creature: str = attrs.field(metadata=doc("The creature whose turn it is.", minLength=1))
    round: int = attrs.field(metadata=doc("The round of that turn.", minimum=1))
    deadline_seconds: float = attrs.field(
        metadata=doc(
            "Seconds left before the server ends the turn itself (`end_turn` sent by the "
            "server: `turn_ended` and `turn_started` events follow as for any other end of "
            "turn).",
            minimum=0,
        )
    )


@attrs.frozen
class SnapshotNotification:
    """``snapshot`` notification: a fresh snapshot, sent when what the seat may see changed
    in a way events cannot express."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    seq: int = attrs.field(
        metadata=doc("The seq of the last event the snapshot includes.", minimum=0)
    )
    snapshot: dict[str, Any] = attrs.field(
        metadata=doc(
            "The encounter as this seat may see it.", schema=_SNAPSHOT, type_text=_SNAPSHOT_TEXT
        )
    )


@attrs.frozen
class EncounterErrorNotification:
    """``encounter_error`` notification (GM only): a command crashed the rules; the
    encounter is unchanged."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    message: str = attrs.field(metadata=doc("What went wrong, for the GM.", minLength=1))


@attrs.frozen
class EncounterClosedNotification:
    """``encounter_closed`` notification: the encounter was archived or deleted, or it
    left the server; this connection is no longer joined to it (the connection stays
    open)."""

    encounter: str = attrs.field(metadata=ENCOUNTER_ID)
    reason: Literal["archived", "deleted", "revoked", "moved"] = attrs.field(
        metadata=doc(
            "`archived` (by its GM, the operator or the archiving sweep), `deleted` (by "
            "the operator), `revoked` (the GM key that created it was revoked), `moved` "
            "(since 1.4: this node lost the encounter's lease to another node; `join` it "
            "again, with `last_seq`, and follow the `moved` error to its new node)."
        )
    )
    message: str = attrs.field(metadata=doc("What happened, for a person.", minLength=1))


@attrs.frozen
class ClosingNotification:
    """``closing`` notification: the server is about to close the connection (close code
    1001 follows)."""

    reason: str = attrs.field(metadata=doc("Why, for a person."))


# -- envelopes -------------------------------------------------------------------------------


@attrs.frozen
class Request:
    """A request (client to server). Exactly one :class:`Response` or
    :class:`ErrorResponse` with the same ``id`` answers it."""

    id: RequestId = attrs.field(
        metadata=doc(
            "Chosen by the client; echoed in the response.",
            schema=_REQUEST_ID_SCHEMA,
            type_text=f"integer, or string of 1 to {MAX_ID_LENGTH} characters",
        )
    )
    method: str = attrs.field(metadata=doc("One of the [request methods](#requests).", minLength=1))
    params: dict[str, Any] = attrs.field(factory=dict, metadata=doc("The method's parameters."))


@attrs.frozen
class Response:
    """A successful reply to the request with the same ``id``."""

    id: RequestId = attrs.field(
        metadata=doc("The request's id.", schema=_REQUEST_ID_SCHEMA, type_text="the request's id")
    )
    result: dict[str, Any] = attrs.field(
        metadata=doc(
            "The method's result (`<method>.result.schema.json`). Present exactly when "
            "`error` is not."
        )
    )


@attrs.frozen
class ErrorData:
    """What a client needs to decide whether to send a refused request again (since 1.5)."""

    retryable: bool = attrs.field(
        metadata=doc(
            "Whether the same request, sent again unchanged, may succeed once time has "
            "passed (see [Retrying](#retrying)); `false`: it would be refused again until "
            "the client changes something."
        )
    )
    retry_after_ms: int | None = attrs.field(
        default=None,
        metadata=doc(
            "When waiting helps: the milliseconds to wait before sending it again (a "
            "retry sooner is refused again, or wasted). Absent when the server cannot "
            "tell.",
            minimum=0,
        )
        | {"added_later": True, "null": False},
    )


@attrs.frozen
class ErrorBody:
    """An error: the stable machine ``name``, its ``code`` number, a sentence for a person."""

    code: int = attrs.field(
        metadata=doc(
            "The error's number, see [Error codes](#error-codes).", minimum=1000, maximum=6999
        )
    )
    name: str = attrs.field(
        metadata=doc("The error's stable machine name; clients SHOULD branch on it.", minLength=1)
    )
    message: str = attrs.field(
        metadata=doc(
            "One or more sentences for a person. Its wording may change at any time.",
            minLength=1,
        )
    )
    data: ErrorData = attrs.field(
        metadata=doc(
            "Whether to retry, and when: `retryable`, and `retry_after_ms` where waiting "
            "helps. Since 1.5."
        )
    )
    url: str | None = attrs.field(
        default=None,
        metadata=doc(
            "Only with `moved` (1010): the websocket URL of the node that serves the "
            "encounter; connect there, say `hello` and send the request again (see "
            "[Several nodes](#several-nodes)). Since 1.4.",
            minLength=1,
            pattern=r"^wss?://",
        ),
    )


@attrs.frozen
class ErrorResponse:
    """A failed reply; ``id`` is null when the request's id could not be read."""

    id: RequestId | None = attrs.field(
        metadata=doc(
            "`null` only when the request's id could not be read (the frame was not JSON, "
            "not an object, had no valid id, was binary or too large).",
            schema=_REQUEST_ID_SCHEMA,
            type_text="the request's id, or `null`",
        )
    )
    error: ErrorBody = attrs.field(metadata=doc("What went wrong."))


@attrs.frozen
class Notification:
    """A message the server sends on its own (no id, no reply)."""

    method: str = attrs.field(metadata=doc("The notification method.", minLength=1))
    params: dict[str, Any] = attrs.field(metadata=doc("Its params."))


#: Request method -> (params class, result class).
METHODS: dict[str, tuple[type[Any], type[Any]]] = {
    "hello": (HelloParams, HelloResult),
    "create_encounter": (CreateEncounterParams, CreateEncounterResult),
    "join": (JoinParams, JoinResult),
    "create_seat": (CreateSeatParams, CreateSeatResult),
    "create_spectator_link": (CreateSpectatorLinkParams, CreateSpectatorLinkResult),
    "command": (CommandParams, CommandResult),
    "actions": (ActionsParams, ActionsResult),
    "snapshot": (SnapshotParams, SnapshotResult),
    "leave": (LeaveParams, LeaveResult),
    "ping": (PingParams, PingResult),
    "rewind": (RewindParams, RewindResult),
    "remove_seat": (RemoveSeatParams, RemoveSeatResult),
    "revoke_spectator_link": (RevokeSpectatorLinkParams, RevokeSpectatorLinkResult),
    "rotate_gm_token": (RotateGmTokenParams, RotateGmTokenResult),
    "list_encounters": (ListEncountersParams, ListEncountersResult),
    "encounter_links": (EncounterLinksParams, EncounterLinksResult),
    "set_public": (SetPublicParams, SetPublicResult),
    "archive_encounter": (ArchiveEncounterParams, ArchiveEncounterResult),
    "list_compendium": (ListCompendiumParams, ListCompendiumResult),
    "list_arenas": (ListArenasParams, ListArenasResult),
    "check_arena": (CheckArenaParams, CheckArenaResult),
    "save_arena": (SaveArenaParams, SaveArenaResult),
    "delete_arena": (DeleteArenaParams, DeleteArenaResult),
    "check_character": (CheckCharacterParams, CheckCharacterResult),
    "submit_character": (SubmitCharacterParams, SubmitCharacterResult),
    "encounter_options": (EncounterOptionsParams, EncounterOptionsResult),
    "list_seats": (ListSeatsParams, ListSeatsResult),
    "table_home": (TableHomeParams, TableHomeResult),
    "table_link": (TableLinkParams, TableLinkResult),
    "contribute_dice": (ContributeDiceParams, ContributeDiceResult),
    "rotate_dice": (RotateDiceParams, RotateDiceResult),
    "roll": (RollParams, RollResult),
    "chat": (ChatParams, ChatResult),
}

#: Notification method -> params class.
NOTIFICATIONS: dict[str, type[Any]] = {
    "event": EventNotification,
    "prompt": PromptNotification,
    "turn_timer": TurnTimerNotification,
    "snapshot": SnapshotNotification,
    "encounter_error": EncounterErrorNotification,
    "encounter_closed": EncounterClosedNotification,
    "closing": ClosingNotification,
}

_NOTIFICATION_METHOD = {cls: method for method, cls in NOTIFICATIONS.items()}


# -- the converter ---------------------------------------------------------------------------

#: The converter for wire messages: strict JSON types, unknown keys refused. Params
#: classes leave out optional fields still at their default when unstructured.
wire = cattrs.Converter(forbid_extra_keys=True)


def _strict(kind: type, label: str) -> Any:
    def hook(value: Any, _: Any) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise ValueError(f"expected {label}, not {json_kind(value)}")
        if kind is float and isinstance(value, int):
            return value
        if not isinstance(value, kind):
            raise ValueError(f"expected {label}, not {json_kind(value)}")
        return value

    return hook


wire.register_structure_hook(Any, lambda value, _: value)
wire.register_structure_hook(int, _strict(int, "a whole number"))
wire.register_structure_hook(float, _strict(float, "a number"))
wire.register_structure_hook(bool, _strict(bool, "true or false"))
wire.register_structure_hook(str, _strict(str, "text"))


def _structure_request_id(value: Any, _: Any) -> RequestId:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and 1 <= len(value) <= MAX_ID_LENGTH:
        return value
    raise ValueError(
        f"expected a whole number or a string of 1 to {MAX_ID_LENGTH} characters, "
        f"not {json_kind(value)}"
    )


def _structure_optional_request_id(value: Any, t: Any) -> RequestId | None:
    return None if value is None else _structure_request_id(value, t)


def _structure_arena(value: Any, _: Any) -> str | dict[str, Any]:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return dict(value)
    raise ValueError(f"expected an arena name (text) or an arena object, not {json_kind(value)}")


wire.register_structure_hook(RequestId, _structure_request_id)
wire.register_structure_hook(RequestId | None, _structure_optional_request_id)
wire.register_structure_hook(str | dict[str, Any], _structure_arena)


strict_containers(wire)

_PARAMS_CLASSES = [params for params, _ in METHODS.values()]
for _cls in _PARAMS_CLASSES:
    wire.register_unstructure_hook(
        _cls, make_dict_unstructure_fn(_cls, wire, _cattrs_omit_if_default=True)
    )
#: An error's ``url`` is there only for ``moved``; its data's ``retry_after_ms`` only
#: where waiting helps.
for _cls in (ErrorData, ErrorBody):
    wire.register_unstructure_hook(
        _cls, make_dict_unstructure_fn(_cls, wire, _cattrs_omit_if_default=True)
    )
#: An event's ``idempotency_key`` is there only for the seat whose keyed request caused it.
wire.register_unstructure_hook(
    EventNotification,
    make_dict_unstructure_fn(
        EventNotification, wire, idempotency_key=override(omit_if_default=True)
    ),
)

#: A decision's ``trigger`` is there only for a reaction decision that interrupted something.
wire.register_unstructure_hook(
    DecisionInfo,
    make_dict_unstructure_fn(DecisionInfo, wire, trigger=override(omit_if_default=True)),
)


# -- parsing ---------------------------------------------------------------------------------

_ENVELOPE_KEYS = ("id", "method", "params")

#: The deepest nesting of arrays and objects a request may hold (the request object
#: itself is level 1). Deeper requests are refused with ``parse_error`` before anything
#: walks them (docs/security.md, "Crashes and runaways").
MAX_NESTING = 32


def _too_deep() -> ProtocolError:
    return ProtocolError(
        "parse_error",
        f"The message is nested too deeply: at most {MAX_NESTING} levels of arrays and objects.",
    )


class _NotJson(ValueError):
    """A literal Python's ``json`` module reads but JSON does not have."""


def _refuse_constant(name: str) -> Any:
    """``json.loads``'s hook for the non-JSON literals ``NaN``, ``Infinity`` and
    ``-Infinity``: refused as not JSON."""
    raise _NotJson(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """``json.loads``'s hook for a number with a fraction or exponent: refused when it
    does not fit a finite float (``1e400``)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests arrays and objects more than ``limit``
    levels deep; without recursion, so no depth can make it fail."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def parse_request(text: str) -> Request:
    """Read one request frame.

    Raises :class:`ProtocolError` ``parse_error`` (not JSON, ``NaN`` or ``Infinity``,
    not an object, nested deeper than :data:`MAX_NESTING`), ``invalid_params`` (an
    integer of more digits than Python reads, a number beyond a float's range) or
    ``invalid_request`` (id missing or of the wrong type, method missing or not text,
    params not an object, unknown top-level keys). When the id could be read, the
    error's ``request_id`` carries it so that the error reply can echo it.
    """
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ProtocolError(
            "parse_error",
            f"The message is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
        ) from None
    except _NotJson as exc:
        raise ProtocolError("parse_error", f"The message is not valid JSON: {exc}.") from None
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:
        # Python refuses to read an integer of more than sys.get_int_max_str_digits()
        # digits (4,300 by default), and _finite_float refuses 1e400.
        raise ProtocolError(
            "invalid_params", f"The message holds an unusable number: {exc}."
        ) from None
    if _depth_exceeds(data, MAX_NESTING):
        raise _too_deep()
    if not isinstance(data, dict):
        raise ProtocolError(
            "parse_error", f"A message must be a JSON object, not {json_kind(data)}."
        )
    if "id" not in data:
        raise ProtocolError(
            "invalid_request",
            'The request has no "id"; every request needs one '
            f"(a whole number or a string of 1 to {MAX_ID_LENGTH} characters).",
        )
    try:
        request_id = _structure_request_id(data["id"], RequestId)
    except ValueError:
        raise ProtocolError(
            "invalid_request",
            f'The request "id" must be a whole number or a string of 1 to {MAX_ID_LENGTH} '
            f"characters, not {json_kind(data['id'])}.",
        ) from None

    def fail(message: str) -> ProtocolError:
        error = ProtocolError("invalid_request", message)
        error.request_id = request_id
        return error

    method = data.get("method")
    if method is None:
        raise fail('The request has no "method"; say which method to call, e.g. "hello".')
    if not isinstance(method, str) or not method:
        raise fail(f'The request "method" must be a non-empty string, not {json_kind(method)}.')
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise fail(f'The request "params" must be an object, not {json_kind(params)}.')
    extra = sorted(set(data) - set(_ENVELOPE_KEYS))
    if extra:
        raise fail(
            f"The request has unknown top-level key(s): {', '.join(extra)}; "
            'a request has only "id", "method" and "params".'
        )
    return Request(id=request_id, method=method, params=params)


def _sentence(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "is required but missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        names = ", ".join(repr(k) for k in sorted(exc.extra_fields))
        known = ", ".join(f.name for f in attrs.fields(exc.cl)) if attrs.has(exc.cl) else ""
        return f"has unknown field(s) {names}" + (f" (known: {known})" if known else "")
    text = str(exc)
    if "not in literal" in text and get_origin(type_) is Literal:
        allowed = ", ".join(repr(a) for a in get_args(type_))
        return f"must be one of {allowed}"
    if isinstance(exc, ValueError | TypeError) and text:
        return text
    return f"is invalid (expected {getattr(type_, '__name__', type_)})"


def _describe(exc: cattrs.BaseValidationError) -> list[str]:
    lines = []
    for line in cattrs.transform_error(exc, path="params", format_exception=_sentence):
        message, _, where = line.rpartition(" @ ")
        if message.startswith("'"):
            # A validator's message already names the field: "'player' must ..."
            _, field, rest = message.split("'", 2)
            lines.append(f"{where}.{field}{rest}")
        elif message.startswith("expected"):
            lines.append(f"{where}: {message}")
        else:
            lines.append(f"{where} {message}")
    return lines


def parse_params(method: str, params: Mapping[str, Any]) -> Any:
    """The params object of ``method`` built from ``params``.

    Raises :class:`ProtocolError` ``unknown_method`` (no such request method) or
    ``invalid_params`` with a sentence naming each bad field.
    """
    classes = METHODS.get(method)
    if classes is None:
        known = ", ".join(METHODS)
        raise ProtocolError(
            "unknown_method", f"There is no method called {method!r}; the methods are: {known}."
        )
    cls = classes[0]
    try:
        return wire.structure(dict(params), cls)
    except cattrs.BaseValidationError as exc:
        problems = "; ".join(_describe(exc))
        raise ProtocolError("invalid_params", f"Bad params for {method!r}: {problems}.") from None
    except (ValueError, TypeError) as exc:
        raise ProtocolError("invalid_params", f"Bad params for {method!r}: {exc}.") from None


# -- building and dumping --------------------------------------------------------------------


def make_response(request_id: RequestId, result: Any) -> Response:
    """The reply carrying ``result`` (a result object or a plain dict)."""
    body = result if isinstance(result, dict) else wire.unstructure(result)
    return Response(id=request_id, result=body)


def make_error_response(request_id: RequestId | None, error: ProtocolError) -> ErrorResponse:
    """The error reply for ``error``."""
    return ErrorResponse(
        id=request_id,
        error=ErrorBody(
            error.code,
            error.name,
            error.message,
            ErrorData(error.retryable, error.retry_after_ms),
            error.url,
        ),
    )


def make_notification(params: Any) -> Notification:
    """The notification envelope for one of the notification params classes."""
    method = _NOTIFICATION_METHOD.get(type(params))
    if method is None:
        raise TypeError(f"{type(params).__name__} is not a notification params class")
    return Notification(method=method, params=wire.unstructure(params))


def dump(obj: Any) -> str:
    """Compact JSON text for a message (an attrs message object or plain data)."""
    data = wire.unstructure(obj) if attrs.has(type(obj)) else obj
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def encode(obj: Any) -> str:
    """The text a server sends for a message (an attrs message object or plain data):
    compact JSON with every non-ASCII character written as a ``\\u`` escape, exactly as
    protocol 1.1 servers have always written their frames. (:func:`dump` writes UTF-8
    characters as they are.)"""
    return _ENCODE(wire.unstructure(obj) if attrs.has(type(obj)) else obj)


# -- schemas ---------------------------------------------------------------------------------

#: Where the schemas' ``$id`` values live (a placeholder host; nothing is fetched).
SCHEMA_BASE = "https://zonekeep.invalid/protocol/"


def _schema_folder(strict: bool) -> Any:
    folder = resources.files("zonekeep.protocol") / "schemas"
    return folder / "strict" if strict else folder


def schema_names(*, strict: bool = True) -> list[str]:
    """The file names of every schema in ``zonekeep.protocol`` (sorted)."""
    folder = _schema_folder(strict)
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".schema.json"))


@cache
def _schema_text(filename: str, strict: bool = True) -> str:
    text: str = (_schema_folder(strict) / filename).read_text("utf-8")
    return text


def schema(name: str, *, strict: bool = True) -> dict[str, Any]:
    """A schema by name: ``"join.params"``, ``"event_payload"`` or a full file name.
    ``strict`` (the default): the strict schema (``schemas/strict/``), exactly what this
    server sends; else the published one (``schemas/``), which accepts what a client
    must ignore (unknown fields, event types and notification methods)."""
    filename = name if name.endswith(".json") else f"{name}.schema.json"
    try:
        loaded: dict[str, Any] = json.loads(_schema_text(filename, strict))  # a fresh copy
    except FileNotFoundError:
        raise KeyError(f"no schema called {name!r}") from None
    return loaded


def _jsonschema() -> Any:
    """``jsonschema`` (the ``validate`` extra), or None when it is not installed."""
    try:
        import jsonschema  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    return jsonschema


@cache
def _validators() -> dict[str, Any]:
    import referencing  # (installed with jsonschema)

    jsonschema = _jsonschema()

    # The strict schemas: what this server sends, exactly (``schemas/strict/``).
    base = SCHEMA_BASE + "strict/"
    schemas = {n: schema(n) for n in schema_names()}
    registry = referencing.Registry().with_resources(
        (base + n, referencing.Resource.from_contents(s)) for n, s in schemas.items()
    )
    found: dict[str, Any] = {
        n: jsonschema.Draft202012Validator(s, registry=registry) for n, s in schemas.items()
    }
    found["response"] = jsonschema.Draft202012Validator(
        {"$ref": base + "server_message.schema.json#/$defs/response"}, registry=registry
    )
    return found


def _check(validator_name: str, instance: Any, prefix: str) -> None:
    jsonschema = _jsonschema()
    validator = _validators()[validator_name]
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        path = prefix + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        raise ValueError(f"{path}: {error.message} (schema {validator_name})")


def validate_server_message(message: Mapping[str, Any], method: str | None = None) -> None:
    """Check one message the server sent against the schemas.

    ``method`` is the request method a result answers; with it, the result is also
    checked against ``<method>.result.schema.json``. Raises ``ValueError`` naming the
    path of the first problem. Uses ``jsonschema`` when it is installed (the ``validate``
    extra: ``pip install 'zonekeep[validate]'``), else checks the message against the
    message classes (a wrong type or a missing field, not every constraint of the schemas).
    """
    if not isinstance(message, Mapping):
        raise ValueError(f"$: a message must be an object, not {json_kind(message)}")
    message = dict(message)
    if _jsonschema() is None:
        _validate_with_classes(message, method)
        return
    if "method" in message:
        name = message["method"]
        if name not in NOTIFICATIONS:
            raise ValueError(f"$.method: {name!r} is not a notification method")
        filename = "snapshot.notification" if name == "snapshot" else str(name)
        _check(f"{filename}.schema.json", message, "$")
    elif "error" in message:
        _check("error.schema.json", message, "$")
    elif "result" in message:
        _check("response", message, "$")
        if method is not None:
            if method not in METHODS:
                raise ValueError(f"{method!r} is not a request method")
            _check(f"{method}.result.schema.json", message["result"], "$.result")
    else:
        _check("server_message.schema.json", message, "$")


def _validate_with_classes(message: dict[str, Any], method: str | None) -> None:
    try:
        if "method" in message:
            envelope = wire.structure(message, Notification)
            cls = NOTIFICATIONS.get(envelope.method)
            if cls is None:
                raise ValueError(f"$.method: {envelope.method!r} is not a notification method")
            wire.structure(envelope.params, cls)
        elif "error" in message:
            wire.structure(message, ErrorResponse)
        else:
            response = wire.structure(message, Response)
            if method is not None:
                wire.structure(response.result, METHODS[method][1])
    except cattrs.BaseValidationError as exc:
        raise ValueError("; ".join(cattrs.transform_error(exc, path="$"))) from None


# -- what the snapshot's keys, the roles and the versions mean -----------------------------

#: The meaning of each key of a snapshot (the fields of ``zonekeep.sdk.EncounterState``,
#: which ``state_to_dict`` writes): SPEC.md's Snapshot table and the snapshot schema's
#: descriptions. The generator refuses a field missing here.
SNAPSHOT_FIELDS: dict[str, str] = {
    "id": "The encounter id.",
    "name": "Its name.",
    "options": "The table's options.",
    "phase": "The encounter's step.",
    "round": "The round (0 before the first).",
    "creatures": "By id, in roster order.",
    "arena": "Zones, links, assets and straight lines.",
    "surprised": "Creatures still surprised.",
    "initiative": "The turn order: slots, members inside a slot in order.",
    "turn_slot": "The current slot (\u22121 before the first turn of a round).",
    "turn_member": "The current member of that slot (\u22121 before the first turn of a round).",
    "active": "The creature taking its turn, or null between turns.",
    "resources": "What the active creature has left this turn (null for players and "
    "spectators while a hidden creature acts).",
    "reactions_used": "Creatures whose reaction is spent.",
    "pending": "Open decisions.",
    "decisions_opened": "How many decisions were opened so far (ids count up).",
    "hazards": "By id.",
    "readied": "Readied attacks by creature id.",
    "turns_taken": "Creatures that have had a turn.",
    "keep_going": "The GM chose to continue despite the rules' end.",
    "ended_reason": "Why it ended.",
    "engagements": "Pairs of engaged creature ids, each pair sorted.",
    "last_melee": "Target id → the last creature that attacked it in melee.",
    "adjacent": "Pairs of adjacent allies' ids, each pair sorted.",
    "back_to_back": "Pairs of allies' ids standing back-to-back, each pair sorted.",
    "effects": "Ongoing area effects by id.",
    "hidden_assets": "The ids of the assets (the arena's, or ongoing effects) hidden from "
    "players and spectators, sorted; a player's or spectator's snapshot has neither these "
    "assets nor this list (it is empty). Since 1.6.",
    "maneuver": "A move waiting on reactions.",
    "notes": "GM notes by id.",
    "condition_effects": "Timed condition effects in play, by id, in the order they were applied.",
    "plain_overlaps": "`[creature, condition]` pairs held plainly (the roster, a "
    "`condition_applied`) while an effect also gives them: when the last such effect "
    "ends, the condition stays.",
    "plugin_overruns": "Calls over the server's time budget so far, per plugin name "
    "(`plugin_overran` events).",
    "disabled_plugins": "Plugins switched off for this encounter (`plugin_disabled`), in order.",
    "plugin_state": "Each plugin's own state, by plugin then key (`hello`'s "
    "`capabilities.plugin_state` describes each piece): a player's or spectator's snapshot "
    "has only the pieces declared for everyone, without what names a creature hidden from "
    "it. Since 1.4.",
    "dice": 'The dice (SPEC.md, "Dice"): `mode` (`fair` or `seeded`), `commitment` '
    "(SHA-256 of the current seed), `seed` (public for seeded dice, and for fair dice once "
    "`revealed`), `mix` (hex of the contributions' mix), `contributions`, `epoch` (seeds "
    "committed so far); null when the server's test entropy rolls.",
    "seq": "The seq of the last event included.",
}

#: Each role a seat may have: how a connection gets it, what it may do.
ROLES: dict[Role, tuple[str, str]] = {
    "gm": (
        "`create_encounter` (the creator) or `join` with the GM token",
        "Everything: every command for every creature, GM-only commands (`override`, "
        "`heal`, `move_to_zone`, `add_note` ...), answering any decision, `create_seat`, "
        "`create_spectator_link`, taking tokens back (`remove_seat`, "
        "`revoke_spectator_link`, `rotate_gm_token`), `roll` and `chat` (whispers to one "
        "player). The GM sees everything, hidden creatures, notes and whispers included.",
    ),
    "player": (
        "`join` with a token from `create_seat`",
        'Commands whose `who` is `"creature"` only for creatures whose `controller` is the '
        "seat's player id, and only when the rules allow (its turn, its phase, its action "
        'economy); commands whose `who` is `"any"` (such as `decide`, only for decisions '
        "whose controller is the player); `roll` and `chat` (to the table, or whispers to "
        "the GM).",
    ),
    "spectator": (
        "`join` with a token from `create_spectator_link`",
        "Watching: `snapshot`, `actions` (always empty), `leave`, `ping`, and the "
        "notifications (public rolls and table chat included, never a whisper or a "
        "private roll). Every request that could change something (`roll` and `chat` "
        "too) is refused with `spectator_read_only` (3004).",
    ),
}

#: What each protocol version added.
PROTOCOL_HISTORY: dict[str, str] = {
    "1.0": "everything not listed below",
    "1.1": "the `turn_timer` notification",
    "1.2": "taking tokens back: `remove_seat`, `revoke_spectator_link`, `rotate_gm_token`, "
    "and the close code 4002",
    "1.3": "GM keys (`hello`'s `gm_key`, the result's `gm`) and the lobby: `list_encounters`, "
    "`encounter_links`, `set_public`, `archive_encounter`, `create_encounter`'s `public`, "
    "`join` without a token (public encounters), the `encounter_closed` notification, the "
    "errors `encounter_archived`, `bad_gm_key`, `gm_key_required`, `not_your_encounter`, "
    "`server_full` (a full server answered `too_many_connections` before) and the close "
    "code 4003; the creature compendium: `list_compendium` and roster references in "
    "`create_encounter`; verifiable dice ([Dice](#dice)): `create_encounter`'s `dice` option (fair or "
    "seeded), `join`'s `client_seed`, `contribute_dice`, `rotate_dice`, the `dice` of the "
    "snapshot, the `dice_committed`, `dice_contributed`, `dice_revealed` and `dice_drawn` "
    "events, the `draws` of rolls and roll-offs and the `undone_rolls` of `rewound`; `actions`' "
    "`details` (each command's refusal and parameter values) and `ending` (the GM's hint at "
    "what keeps the encounter open); `join`'s `history`; the builder: `list_arenas`, "
    "`check_arena`, `check_character`, `submit_character`, `encounter_options`, `list_seats`, "
    "`create_encounter`'s `seats` (and its result's), the lobby's `waiting` seats; the GM "
    "command `damage`; `override`'s `pc`, and `create_seat` making a handed-over creature a "
    "PC (one more `override_applied` event per creature)",
    "1.4": "the plugin SDK's second edition: plugin events (`<plugin>.<name>` types with a "
    "`data` payload, `hello`'s `capabilities.plugin_events`, their ids in `event_types`), "
    "plugin state (the snapshot's `plugin_state`, `capabilities.plugin_state`), namespaced "
    "plugin ids and the error `ambiguous_id`; damage types and defences: a creature's "
    "`damage_resistances`, `damage_vulnerabilities`, `damage_immunities` and "
    "`condition_immunities` (snapshot, rosters, character files); `damaged`'s `raw`, "
    "`raw_type` and `steps`; the GM `damage` command's `damage_type` checked against the "
    "damage types; the `condition_prevented` event, `condition_effect_ended`'s `expired`, "
    "`save_made`'s `automatic_failure`; the errors `condition_immune`, `frightened`, "
    "`blinded`; `hello`'s `capabilities.conditions`; asset data and plugin settings: the "
    "arena's assets' `data` (checked against their tags' schemas), "
    "`capabilities.asset_tags` and `capabilities.settings`, the encounter options' "
    "`settings` (`create_encounter`, the snapshot's `options`), `encounter_options`' "
    "`settings` and its schema's per-plugin `settings`; several nodes: the error `moved` (1010) and the error's `url`, the "
    "`encounter_closed` reason `moved`",
    "1.5": "the protocol for client authors: idempotency keys (the `idempotency_key` of "
    "`command`, `rewind`, `contribute_dice`, `rotate_dice` and `submit_character`, and of "
    "the `event` notifications a keyed request caused, sent to its seat) and the error "
    "`idempotency_key_reused` (1011); retrying: every error's `data` (`retryable`, "
    "`retry_after_ms`), the `retryable` column of the error table; `hello`'s `limits` "
    "`abuse_refusals`, `abuse_window_seconds`, `max_connections_per_token`, "
    "`max_spectators_per_encounter`, `reply_bytes_burst` and `reply_bytes_per_second`, and "
    "the token bucket's exact rule (a client at exactly the announced rate is never "
    "refused); open published schemas (`schemas/`: unknown fields, event types and "
    "notification methods accepted) beside the strict ones (`schemas/strict/`), all "
    "compiling in ajv's strict mode; SPEC.md's loose ends tied (decision kinds, error "
    "precedence, the `snapshot` notification to the GM after a rewind, deadlines while "
    "the server is down); fold rules per event (SPEC.md, Keeping state from events, "
    "read from the rules' reducers) and the reference fold of the GM's view "
    "(`zonekeep.protocol.fold`); `asyncapi.yaml`, the AsyncAPI 3.0 document; the "
    "conformance kit: `zonekeep proxy --check`, `--record` and `--play`, and the "
    "recorded sessions of `conformance/sessions/` (docs/clients.md); the third edition "
    "of the rulings: `force: true` on `grant_condition` and `apply_effect` overrules a "
    "condition immunity and `condition_applied` carries `override`, `force` without a "
    "`forcer`, reactions on any turn (`decision_pending` and `not_on_your_turn` narrowed), "
    "an initiative tie that no longer holds play; the web table's requests `table_home` "
    "and `table_link` (links and QR codes) and `encounter_links`' `keep_gm`",
    "1.6": "the SDK's third edition, the world changing at runtime: the events "
    "`asset_placed`, `asset_changed` and `asset_removed` (assets placed, changed, hidden, "
    "revealed and removed while the encounter runs; the arena's `assets` change with them), "
    "the snapshot's `hidden_assets` (hidden assets reach players and spectators neither in "
    "snapshots nor in events), the `zone_affected` event and the GM command `damage_zone` "
    "(effects aimed at a zone, occupied or not); a roll shared by several events carries "
    "its `draws` on the first only; per-creature plugin data: the visibility `owner` of "
    "`capabilities.plugin_state` and `capabilities.plugin_events` (a piece keyed by "
    "creature id of which a player sees its creatures' entries; an event its creature's "
    "controller sees); `apply_effect`'s `parent` may name an ongoing effect or an asset"
    "; idempotency keys on the requests that make or take back tokens and on the "
    "lobby's: the `idempotency_key` of `create_seat`, `create_spectator_link`, "
    "`remove_seat`, `revoke_spectator_link` and `rotate_gm_token` (the GM seat's keys), "
    "and of `encounter_links`, `set_public` and `archive_encounter` (the owner's keys), "
    "and of `create_encounter` (the creator's keys: a repeat joins the encounter the first "
    "one made), "
    "their answers kept sealed in the store; the fold table's `how` column (how each "
    "event changes the snapshot, from the rules' reducers) and the Node.js example "
    "client's reference fold (`examples/clients/node/fold.mjs`); "
    "the character model (character files with ability scores, class levels, "
    "proficiencies, armor, weapons, spells, resources, traits and actions; "
    "`character.schema.json`) and imported sheets: `check_character`'s and "
    "`submit_character`'s `format` (`foundry`, `improved-initiative`), "
    "`check_character`'s `unmapped` and `character`, `submit_character`'s `unmapped`"
    "; battle maps: the arena file's `map` and each zone's `shape` (in "
    "`create_encounter`'s and `check_arena`'s arenas, `list_arenas`' and the snapshot's "
    "`arena`), map images over HTTP (`POST /images`, `GET /images/<id>.<ext>`), the "
    "server's arena library: `save_arena`, `delete_arena`, `list_arenas`' `library` and "
    "`yours`, library names in `create_encounter`'s `arena`, the error `not_your_arena` "
    "(3006)"
    "; creatures as data: "
    "a creature's `traits`, `actions`, "
    "`abilities`, `proficiency`, `resources`, `damage_resistances_nonmagical` and "
    "`damage_immunities_nonmagical`, its attacks' `magical`, `extra_damage` and `on_hit` "
    "(snapshot, rosters, compendium entries), each feature's `automated` and `gm` in "
    "snapshots; `actions`' `features` and the `sequences` and `attacks_left` of its "
    "`multiattack` detail; `hello`'s `capabilities.features`; the commands `multiattack`, `escape_grapple`, `rest` and "
    "`call_check`; the events `check_rolled`, `resource_spent`, `resource_restored`, "
    "`recharge_rolled` and `multiattack_used`; the errors `no_uses_left` and "
    "`no_such_feature`"
    "; "
    "table tools: the free dice roll `roll` and its `dice_rolled` event (public or "
    "private), table chat and whispers `chat` and its `chat_sent` event, `hello`'s "
    "`limits` `chat_max_chars`, `table_rate_per_second` and `table_rate_burst`; the "
    "`idempotency_key` of `roll` and `chat`; the `idempotency_key` of `save_arena` and "
    "`delete_arena` (the arena owner's keys) and of `join` (its `client_seed` is mixed "
    "once), `rotate_gm_token`'s `token` (a repeat with the revoked token gets the new "
    "one, for 10 minutes)"
    "; "
    "stat blocks: a creature's `hit_dice` and `senses`; a player or spectator gets no "
    "stat block of a creature its seat does not control (its sheet's numbers null, its "
    "lists and objects empty, in snapshots, `encounter_created`, `creature_added` and "
    '`override_applied`); a roster reference\'s `hp` (`"roll"`: hit points rolled from '
    "the hit dice with the encounter's dice, logged in `dice_drawn`)"
    "; a decision's `trigger` (what a reaction decision interrupted: an attack "
    "waiting for the answer)"
    "; `override`'s `size` (a size name; `override_applied` of `size` carries the name)",
    "1.7": "heroes with classes and spells: a creature's `type` and `challenge` (from its "
    "stat block; a player gets another creature's `challenge` as null) and `temp_hp` "
    "(temporary hit points, hidden from players like an enemy's hit points), the event "
    "`temp_hp_changed` (its `roll`: the dice they were rolled with, null with the amount "
    "for an enemy's) and `override`'s `temp_hp`; a roll record's `penalty` and "
    "`penalty_roll` (a penalty die: bane) and `bonus:` sources (a flat bonus or a bonus "
    "die: Bardic Inspiration, Sacred Weapon, a fighting style, slow); reaction decisions "
    "at a spell being cast (a `trigger` of `type` `spell`: counterspell) and at an "
    "attack's new `damage` moment (after the hit, before the damage roll, with the "
    "trigger's `damage_cuts`: Uncanny Dodge, Deflect Missiles), Cutting Words and "
    "Hellish Rebuke at the hit, Protection when targeted; `cast`'s and `cast_bonus`'s "
    "`spare` (Sculpt Spells, Careful Spell), `metamagic` and `option` (a spell's option: "
    "Enhance Ability's, Protection from Energy's damage type); the commands `break_free`, "
    "`spiritual_weapon`, `move_moonbeam`, `move_sphere`, `call_lightning`, `hasted_action`, `flame_blade`, "
    "`retreat_dash`, `offhand_attack`, `open_hand_technique`, `turn_undead`, `turn_the_unholy`, "
    "`preserve_life`, `bardic_inspiration`, `sacred_weapon` and the GM's `recover_slots`; "
    "a roll record's `bonus_dice` (a bonus die drawn with the roll), `healed`'s and "
    "`action_taken`'s `roll` (the dice of a heal, of Cutting Words or Deflect Missiles); "
    "`actions`' choices' `info` (a spell's `level` and `concentration`, an area's "
    "`targets_by_zone`); the rule errors `gm_adjudicates`, `spell_limit`, `not_hasted`, "
    "`slowed`, `lethargic` and `charmed` (4065-4070); "
    "the spells plugin's runtime assets (entangle, web, spiritual weapon, spirit "
    "guardians, moonbeam, flaming sphere, stinking cloud, call lightning's storm cloud) "
    "and its new conditions; the "
    "choices' `targets_by_zone` only for a spell that takes targets",
}
