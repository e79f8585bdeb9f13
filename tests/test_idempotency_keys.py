"""The idempotency key index (``server/_idempotency.py``): bounded per seat, seats
apart, a key reused for another request refused, the stored record round-trips."""

from __future__ import annotations

import json

import pytest

from zonekeep.protocol import ProtocolError
from zonekeep.sdk import TurnEnded
from zonekeep.sdk.host import event_from_dict, event_to_dict
from zonekeep.server._idempotency import KEYS_PER_SEAT, Keyed, KeyIndex, fingerprint
from zonekeep.server._store import EncodedEvents, event_json, event_texts, stored_request


def keyed(key: str, seat: str = "player:alice", method: str = "command") -> Keyed:
    params = {"encounter": "e1", "type": "dodge", "idempotency_key": key}
    return Keyed(seat, key, method, fingerprint(method, params), lambda first, _: {"seq": first})


def test_each_seat_keeps_its_last_keys_and_forgets_the_oldest() -> None:
    index = KeyIndex()
    for n in range(KEYS_PER_SEAT + 1):
        index.remember(keyed(f"k{n}").record(n + 1, [TurnEnded("aria")]))
    assert index.answer(keyed("k0")) is None  # the oldest is forgotten
    assert index.answer(keyed("k1")) == {"seq": 2}
    assert index.answer(keyed(f"k{KEYS_PER_SEAT}")) == {"seq": KEYS_PER_SEAT + 1}
    assert index.answer(keyed("k1", seat="gm")) is None  # another seat's keys are its own


def test_the_key_leaves_the_fingerprint_alone_and_other_params_change_it() -> None:
    base = {"encounter": "e1", "type": "dodge", "params": {"creature": "aria"}}
    assert fingerprint("command", {**base, "idempotency_key": "a"}) == fingerprint(
        "command", {**base, "idempotency_key": "b"}
    )
    assert fingerprint("command", base) != fingerprint("command", {**base, "type": "dash"})
    assert fingerprint("command", base) != fingerprint("rewind", base)


def test_a_key_used_for_another_request_is_refused() -> None:
    index = KeyIndex()
    index.remember(keyed("k").record(5, [TurnEnded("aria")]))
    with pytest.raises(ProtocolError) as caught:
        index.answer(keyed("k", method="rewind"))
    assert (caught.value.code, caught.value.name) == (1011, "idempotency_key_reused")


def test_the_record_is_stored_with_the_first_event_and_readers_ignore_it() -> None:
    events = [TurnEnded("aria"), TurnEnded("gob")]
    payloads = [event_to_dict(e) for e in events]
    record = keyed("k").record(7, events)
    texts = event_texts(EncodedEvents(events, payloads, [event_json(p) for p in payloads], record))
    assert stored_request(texts[0]) == record
    assert stored_request(texts[1]) is None
    assert event_from_dict(json.loads(texts[0])) == events[0]
