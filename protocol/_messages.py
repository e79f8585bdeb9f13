"""The wire messages as attrs classes, the ``wire`` converter and the parse/dump helpers.

Every request method has a params class and a result class (:data:`METHODS`), every
notification a params class (:data:`NOTIFICATIONS`). The envelopes are
:class:`Request`, :class:`Response`, :class:`ErrorResponse` and :class:`Notification`.
``protocol/SPEC.md`` is the prose; ``protocol/schemas/`` the JSON Schemas; the tests
keep the three in agreement.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn

from zonekeep.sdk._serial import json_kind, strict_containers

from ._errors import ProtocolError

if TYPE_CHECKING:
    from zonekeep.sdk import CommandSpec

#: The protocol version this package describes ("MAJOR.MINOR").
PROTOCOL_VERSION = "1.1"

Role = Literal["gm", "player", "spectator"]
Who = Literal["creature", "gm", "any"]
RequestId = int | str

_VERSION = re.compile(r"^[0-9]+\.[0-9]+$")
MAX_ID_LENGTH = 64


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


def _not_empty(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value:
        raise ValueError(f"'{attribute.name}' must not be empty")


# -- hello -----------------------------------------------------------------------------------


@attrs.frozen
class ClientInfo:
    """Who the client is: a ``name`` and a ``version``, for logs only."""

    name: str
    version: str


@attrs.frozen
class HelloParams:
    """``hello`` params: the protocol version the client speaks and who it is."""

    protocol: str = attrs.field(validator=_version)
    client: ClientInfo


@attrs.frozen
class ServerInfo:
    """The server's name (always ``"zonekeep"``) and version."""

    name: str
    version: str


@attrs.frozen
class CommandParamInfo:
    """One parameter of an engine command: its type, whether required, what it means."""

    type: str
    required: bool
    description: str


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


@attrs.frozen
class CommandInfo:
    """One engine command as announced in ``hello``'s capabilities: what it is, its
    parameters, a JSON Schema (2020-12) for them and the plugin that declares it."""

    id: str
    summary: str
    who: Who
    costs: list[str]
    phases: list[str]
    params: dict[str, CommandParamInfo]
    schema: dict[str, Any]
    plugin: str

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
class Capabilities:
    """What this server can do: its commands, encounter options (with their defaults),
    event types and bundled arenas."""

    commands: list[CommandInfo]
    options: dict[str, Any]
    event_types: list[str]
    arenas: list[str]


@attrs.frozen
class Limits:
    """The limits in force on this connection (defaults shown)."""

    max_message_bytes: int = 16384
    rate_per_second: float = 20
    rate_burst: int = 40
    max_connections_per_encounter: int = 32
    ping_interval_seconds: float = 20
    idle_timeout_seconds: float = 300
    outgoing_queue: int = 256
    reaction_seconds: float = 30


#: The limits a server applies unless its operator changes them.
DEFAULT_LIMITS = Limits()


@attrs.frozen
class HelloResult:
    """``hello`` result: the server's protocol version, identity, capabilities and limits."""

    protocol: str
    server: ServerInfo
    capabilities: Capabilities
    limits: Limits


# -- encounters and seats --------------------------------------------------------------------


@attrs.frozen
class CreateEncounterParams:
    """``create_encounter`` params: a name, an arena (a bundled name or an inline arena
    object), the roster and optional options; ``server_key`` when the server wants one."""

    name: str
    arena: str | dict[str, Any]
    creatures: list[dict[str, Any]]
    options: dict[str, Any] | None = None
    server_key: str | None = None


@attrs.frozen
class CreateEncounterResult:
    """``create_encounter`` result: the new encounter's id, the GM token and a snapshot."""

    encounter: str
    gm_token: str
    role: Literal["gm"]
    seq: int
    snapshot: dict[str, Any]


@attrs.frozen
class JoinParams:
    """``join`` params: the encounter, a token, and ``last_seq`` to resume."""

    encounter: str
    token: str
    last_seq: int | None = attrs.field(default=None, validator=_non_negative)


@attrs.frozen
class JoinResult:
    """``join`` result: the seat's role (and player id), the current ``seq``, and either a
    ``snapshot`` or the missed ``events`` (the other one is null)."""

    role: Role
    player: str | None
    seq: int
    snapshot: dict[str, Any] | None
    events: list[dict[str, Any]] | None


@attrs.frozen
class CreateSeatParams:
    """``create_seat`` params (GM): a player id and the creatures that player controls."""

    encounter: str
    player: str = attrs.field(validator=_player_id)
    creatures: list[str] = attrs.field(factory=list)


@attrs.frozen
class CreateSeatResult:
    """``create_seat`` result: the player's token."""

    token: str
    player: str


@attrs.frozen
class CreateSpectatorLinkParams:
    """``create_spectator_link`` params (GM)."""

    encounter: str


@attrs.frozen
class CreateSpectatorLinkResult:
    """``create_spectator_link`` result: a spectator token."""

    token: str


# -- playing ---------------------------------------------------------------------------------


@attrs.frozen
class CommandParams:
    """``command`` params: an engine command ``type`` and its ``params``."""

    encounter: str
    type: str = attrs.field(validator=_not_empty)
    params: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class CommandResult:
    """``command`` result: the seq range of the events it caused (empty when
    ``first_seq`` is ``last_seq + 1``)."""

    first_seq: int
    last_seq: int


@attrs.frozen
class ActionsParams:
    """``actions`` params: which creature to ask about."""

    encounter: str
    creature: str


@attrs.frozen
class ActionsResult:
    """``actions`` result: the command ids the creature may use right now."""

    creature: str
    actions: list[str]


@attrs.frozen
class SnapshotParams:
    """``snapshot`` params."""

    encounter: str


@attrs.frozen
class SnapshotResult:
    """``snapshot`` result: the encounter as this seat may see it, at ``seq``."""

    seq: int
    snapshot: dict[str, Any]


@attrs.frozen
class LeaveParams:
    """``leave`` params."""

    encounter: str


@attrs.frozen
class LeaveResult:
    """``leave`` result (empty)."""


@attrs.frozen
class PingParams:
    """``ping`` params (empty)."""


@attrs.frozen
class PingResult:
    """``ping`` result (empty)."""


# -- notifications ---------------------------------------------------------------------------


@attrs.frozen
class EventNotification:
    """``event`` notification: one event of an encounter at its ``seq``."""

    encounter: str
    seq: int
    event: dict[str, Any]


@attrs.frozen
class DecisionInfo:
    """A pending decision, as carried by a ``prompt`` (the fields of ``zonekeep.sdk.Decision``)."""

    id: str
    kind: str
    controller: str
    prompt: str
    options: list[str]
    default: list[str]
    creature: str | None
    ordering: bool


@attrs.frozen
class PromptNotification:
    """``prompt`` notification: a decision this seat may answer, and the time left."""

    encounter: str
    decision: DecisionInfo
    deadline_seconds: float


@attrs.frozen
class TurnTimerNotification:
    """``turn_timer`` notification: the turn under way ends by itself when the time is up
    (the encounter's ``turn_seconds``)."""

    encounter: str
    creature: str
    round: int
    deadline_seconds: float


@attrs.frozen
class SnapshotNotification:
    """``snapshot`` notification: a fresh snapshot when events cannot express a change."""

    encounter: str
    seq: int
    snapshot: dict[str, Any]


@attrs.frozen
class EncounterErrorNotification:
    """``encounter_error`` notification (GM only): a command crashed the rules."""

    encounter: str
    message: str


@attrs.frozen
class ClosingNotification:
    """``closing`` notification: the server is about to close the connection."""

    reason: str


# -- envelopes -------------------------------------------------------------------------------


@attrs.frozen
class Request:
    """A request (client to server). Exactly one :class:`Response` or
    :class:`ErrorResponse` with the same ``id`` answers it."""

    id: RequestId
    method: str
    params: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Response:
    """A successful reply to the request with the same ``id``."""

    id: RequestId
    result: dict[str, Any]


@attrs.frozen
class ErrorBody:
    """An error: the stable machine ``name``, its ``code`` number, a sentence for a person."""

    code: int
    name: str
    message: str


@attrs.frozen
class ErrorResponse:
    """A failed reply; ``id`` is null when the request's id could not be read."""

    id: RequestId | None
    error: ErrorBody


@attrs.frozen
class Notification:
    """A message the server sends on its own (no id, no reply)."""

    method: str
    params: dict[str, Any]


@attrs.frozen
class RewindParams:
    """``rewind`` params (GM): the encounter and the ``seq`` to go back to."""

    encounter: str
    to_seq: int = attrs.field(validator=_non_negative)


@attrs.frozen
class RewindResult:
    """``rewind`` result: the seq of the ``rewound`` event."""

    seq: int


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
}

#: Notification method -> params class.
NOTIFICATIONS: dict[str, type[Any]] = {
    "event": EventNotification,
    "prompt": PromptNotification,
    "turn_timer": TurnTimerNotification,
    "snapshot": SnapshotNotification,
    "encounter_error": EncounterErrorNotification,
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


# -- parsing ---------------------------------------------------------------------------------

_ENVELOPE_KEYS = ("id", "method", "params")


def parse_request(text: str) -> Request:
    """Read one request frame.

    Raises :class:`ProtocolError` ``parse_error`` (not JSON, not an object) or
    ``invalid_request`` (id missing or of the wrong type, method missing or not text,
    params not an object, unknown top-level keys). When the id could be read, the
    error's ``request_id`` carries it so that the error reply can echo it.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError(
            "parse_error",
            f"The message is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
        ) from None
    except RecursionError:
        raise ProtocolError("parse_error", "The message is nested too deeply.") from None
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
    return ErrorResponse(id=request_id, error=ErrorBody(error.code, error.name, error.message))


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


# -- schemas ---------------------------------------------------------------------------------

#: Where the schemas' ``$id`` values live (a placeholder host; nothing is fetched).
SCHEMA_BASE = "https://zonekeep.invalid/protocol/"


def schema_names() -> list[str]:
    """The file names of every schema in ``zonekeep.protocol`` (sorted)."""
    folder = resources.files("zonekeep.protocol") / "schemas"
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".schema.json"))


@cache
def _schema_text(filename: str) -> str:
    return (resources.files("zonekeep.protocol") / "schemas" / filename).read_text("utf-8")


def schema(name: str) -> dict[str, Any]:
    """A schema by name: ``"join.params"``, ``"event_payload"`` or a full file name."""
    filename = name if name.endswith(".json") else f"{name}.schema.json"
    try:
        loaded: dict[str, Any] = json.loads(_schema_text(filename))  # a fresh copy each time
    except FileNotFoundError:
        raise KeyError(f"no schema called {name!r}") from None
    return loaded


@cache
def _validators() -> dict[str, Any]:
    jsonschema: Any = importlib.import_module("jsonschema")
    referencing: Any = importlib.import_module("referencing")

    schemas = {n: schema(n) for n in schema_names()}
    registry = referencing.Registry().with_resources(
        (SCHEMA_BASE + n, referencing.Resource.from_contents(s)) for n, s in schemas.items()
    )
    found: dict[str, Any] = {
        n: jsonschema.Draft202012Validator(s, registry=registry) for n, s in schemas.items()
    }
    found["response"] = jsonschema.Draft202012Validator(
        {"$ref": SCHEMA_BASE + "server_message.schema.json#/$defs/response"}, registry=registry
    )
    return found


def _check(validator_name: str, instance: Any, prefix: str) -> None:
    jsonschema: Any = importlib.import_module("jsonschema")
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
    path of the first problem. Uses ``jsonschema`` when it is installed, else checks
    the message against the message classes.
    """
    if not isinstance(message, Mapping):
        raise ValueError(f"$: a message must be an object, not {json_kind(message)}")
    message = dict(message)
    try:
        importlib.import_module("jsonschema")
    except ImportError:
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
