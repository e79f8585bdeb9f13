"""The server's one serializer: every message it sends is a :mod:`zonekeep.protocol`
message object (an envelope around result and notification objects) turned into
compact JSON here.

The text is what ``json.dumps(message, separators=(",", ":"))`` gives for the message
as plain data (ASCII only, as the server has always sent it), except that a float
that is not finite is an error (``allow_nan=False``): JSON has no NaN or Infinity. Event payloads and
snapshots come from the SDK as plain dicts and are written as they are, not copied:
an attrs object is turned into a mapping of its fields only when the encoder meets it.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from zonekeep.protocol import (
    NOTIFICATIONS,
    EventNotification,
    Notification,
    ProtocolError,
    RequestId,
    Response,
)

#: Per message class: the names of its fields, in declaration order, and those left out
#: when they are None.
_FIELD_NAMES: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def fields_of(obj: Any) -> dict[str, Any]:
    """``obj``'s fields in declaration order, one level deep (nested message objects
    stay objects: the encoder turns them into mappings when it meets them). A field
    whose metadata says ``"null": False`` (an event's ``idempotency_key``) is left out
    when it is None.

    Plain code, not a function generated per class: bench/wire_bench.py measured what
    generated code would save here at well under 1% of a command's CPU
    (docs/performance.md, "Generated code in the serializer")."""
    cls = type(obj)
    plan = _FIELD_NAMES.get(cls)
    if plan is None:
        if not attrs.has(cls):
            raise TypeError(f"{cls.__name__} is not a protocol message class")
        fields = attrs.fields(cls)
        plan = _FIELD_NAMES[cls] = (
            tuple(a.name for a in fields),
            tuple(a.name for a in fields if a.metadata.get("null") is False),
        )
    names, optional = plan
    data = {name: getattr(obj, name) for name in names}
    for name in optional:
        if data[name] is None:
            del data[name]
    return data


#: Serializes a wire message: compact JSON, ASCII only; protocol message objects are
#: written as objects of their fields. A NaN or infinite float raises ``ValueError``
#: rather than being written as the bare ``NaN``/``Infinity`` that JSON does not have.
encode_message = json.JSONEncoder(
    separators=(",", ":"), default=fields_of, check_circular=False, allow_nan=False
).encode

_METHOD_OF = {cls: method for method, cls in NOTIFICATIONS.items()}
#: The start of every ``event`` notification's text, up to its encounter id.
_EVENT_HEAD = '{"method":' + json.dumps(_METHOD_OF[EventNotification]) + ',"params":{"encounter":'


def notification(params: Any) -> Notification:
    """The envelope for ``params``, one of the protocol's notification params classes."""
    method = _METHOD_OF.get(type(params))
    if method is None:
        raise TypeError(f"{type(params).__name__} is not a notification params class")
    return Notification(method=method, params=fields_of(params))


def notification_text(params: Any) -> str:
    """``params`` (a notification params object) as the text of its notification: the
    same text as ``encode_message(notification(params))``, without building the
    envelope object (the data of its fields, in their order: ``method``, ``params``)."""
    method = _METHOD_OF.get(type(params))
    if method is None:
        raise TypeError(f"{type(params).__name__} is not a notification params class")
    return encode_message({"method": method, "params": fields_of(params)})


def event_notification_text(
    encounter: str, seq: int, event_json: str, idempotency_key: str | None = None
) -> str:
    """The ``event`` notification of an event whose payload is already serialized
    (``event_json``, as :func:`encode_message` writes it): the same text as
    ``notification_text(EventNotification(encounter, seq, payload))``, without encoding
    the payload again for every view that sees it unchanged. ``idempotency_key``: the
    key of the request that caused it, for the seat that sent it (absent when None)."""
    head = f'{_EVENT_HEAD}{encode_message(encounter)},"seq":{int(seq)},"event":{event_json}'
    if idempotency_key is None:
        return f"{head}}}}}"
    return f'{head},"idempotency_key":{encode_message(idempotency_key)}}}}}'


def response_text(request_id: RequestId, result: Any) -> str:
    """The reply to request ``request_id`` carrying ``result`` (a result object)."""
    return encode_message(Response(id=request_id, result=fields_of(result)))


def encoded_response_text(request_id: RequestId, result_json: str) -> str:
    """The same as :func:`response_text` for a result already serialized by
    :func:`encode_message` (the welcome, serialized once for every ``hello``): the
    :class:`~zonekeep.protocol.Response` envelope with that text as its ``result``."""
    return f'{{"id":{encode_message(request_id)},"result":{result_json}}}'


def error_text(request_id: RequestId | None, error: ProtocolError) -> str:
    """The error reply for ``error`` to request ``request_id`` (null when unknown)."""
    # (the error's ``url`` only when it has one: ``moved``)
    return encode_message({"id": request_id, "error": error.to_wire()})
