"""The server's one serializer (``server/_wire.py``): protocol message objects become the
same JSON text as ``json.dumps`` of the same message as plain data (ASCII only)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from zonekeep.protocol import (
    ClosingNotification,
    CommandResult,
    DecisionInfo,
    EncounterErrorNotification,
    EventNotification,
    PromptNotification,
    ProtocolError,
    SnapshotNotification,
    TurnTimerNotification,
    wire,
)
from zonekeep.server._wire import (
    encode_message,
    encoded_response_text,
    error_text,
    notification,
    notification_text,
    response_text,
)

DECISION = DecisionInfo(
    "d1", "opportunity_attack", "alice", "Aria may…", ["attack"], [], "aria", False
)
NOTIFICATIONS: list[Any] = [
    EventNotification("e1", 3, {"type": "note_added", "note": {"text": "café ☃"}}),
    PromptNotification("e1", DECISION, 29.5),
    TurnTimerNotification("e1", "aria", 2, 60.0),
    SnapshotNotification("e1", 4, {"seq": 4, "creatures": {}}),
    EncounterErrorNotification("e1", "The rules failed."),
    ClosingNotification("bye"),
]


def plain(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


@pytest.mark.parametrize("params", NOTIFICATIONS, ids=lambda p: type(p).__name__)
def test_a_notification_is_its_plain_data_dumped(params: Any) -> None:
    envelope = notification(params)
    text = notification_text(params)
    assert text == encode_message(envelope)
    assert text == plain({"method": envelope.method, "params": wire.unstructure(params)})
    assert text.isascii()


def test_replies_and_errors() -> None:
    assert response_text(7, CommandResult(2, 3)) == '{"id":7,"result":{"first_seq":2,"last_seq":3}}'
    assert encoded_response_text("a", encode_message(CommandResult(1, 0))) == plain(
        {"id": "a", "result": {"first_seq": 1, "last_seq": 0}}
    )
    error = ProtocolError("rate_limited", "Slow down.", retry_after_ms=250)
    data = {"retryable": True, "retry_after_ms": 250}
    assert error_text(None, error) == plain(
        {
            "id": None,
            "error": {"code": 5001, "name": "rate_limited", "message": "Slow down.", "data": data},
        }
    )


def test_only_message_classes_are_serialized() -> None:
    with pytest.raises(TypeError, match="set is not a protocol message class"):
        encode_message({"params": {1, 2}})
    with pytest.raises(TypeError, match="CommandResult is not a notification params class"):
        notification_text(CommandResult(1, 1))


def test_an_event_encoded_once_gives_the_same_notification_text() -> None:
    """The room encodes each event's payload once (for the store and for every view that
    sees it unchanged) and splices it into the notification: the text must be exactly
    what encoding the whole notification gives, and the stored text what the store
    wrote before."""
    from zonekeep.sdk import NoteAdded
    from zonekeep.sdk._events import Note
    from zonekeep.sdk.host import event_to_dict
    from zonekeep.server._store import EncodedEvents, event_json, event_texts
    from zonekeep.server._wire import event_notification_text

    payload = {"type": "moved", "creature": "zoë", "feet": 5, "path": [1, {"x": None}]}
    for encounter, seq in (("enc-1", 1), ('we"ird\\id', 123456)):
        expected = notification_text(EventNotification(encounter, seq, payload))
        assert event_notification_text(encounter, seq, encode_message(payload)) == expected
    event = NoteAdded(Note("n1", "Zoë's note", True))
    stored = json.dumps(event_to_dict(event), separators=(",", ":"), allow_nan=False)
    assert event_json(event_to_dict(event)) == encode_message(event_to_dict(event)) == stored
    assert event_texts([event]) == [stored]
    assert event_texts(EncodedEvents([event], [{}], ["given"])) == ["given"]
