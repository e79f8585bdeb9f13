"""Idempotency keys (SPEC.md, "Idempotency"), as Matrix's transaction ids.

A request that changes an encounter's state may carry a client-chosen
``idempotency_key``. The room answers a repeat of it from the same seat (the GM, or one
player: on any connection, after a resume or a restart) with the first answer, and
does nothing. The key's record is stored with the first event the request caused (a
``_request`` member of that event's stored JSON, which the event readers ignore), so a
restart keeps it; the room reads the records back from its log the first time a keyed
request reaches it after a load, and keeps the last :data:`KEYS_PER_SEAT` of each seat.
A request that was refused, or that caused no event, is not remembered: nothing
happened, and a repeat is handled as new.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from zonekeep.protocol import ProtocolError
from zonekeep.sdk import Event

from ._visibility import Viewer

#: How many keys a room remembers per seat (the oldest is forgotten first).
KEYS_PER_SEAT = 256

#: A request's answer (the result object's JSON data), from the seq of its first event
#: and its events.
Answer = Callable[[int, Sequence[Event]], dict[str, Any]]


def seat_of(role: str, player: str | None) -> str:
    """The seat a key belongs to: ``"gm"``, or ``"player:<id>"``."""
    return "gm" if role == "gm" else f"player:{player}"


def view_of_seat(seat: str) -> Viewer:
    """The view the connections of ``seat`` have (the one its keys are shown to)."""
    if seat == "gm":
        return Viewer(full=True)
    return Viewer(player=seat.partition(":")[2])


def fingerprint(method: str, params: dict[str, Any]) -> str:
    """What a repeat must match: the method and its params, the key left out."""
    rest = {k: v for k, v in params.items() if k != "idempotency_key"}
    text = json.dumps([method, rest], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class Keyed:
    """A keyed request on its way through a room's loop."""

    seat: str
    key: str
    method: str
    fingerprint: str
    #: The request's answer from its events (called when they are stored).
    answer: Answer = attrs.field(eq=False)

    def record(self, first: int, events: Sequence[Event]) -> dict[str, Any]:
        """What is stored with the first of ``events``, and remembered."""
        return {
            "seat": self.seat,
            "key": self.key,
            "method": self.method,
            "fingerprint": self.fingerprint,
            "answer": self.answer(first, events),
        }


class KeyIndex:
    """One room's keys: per seat, key -> (fingerprint, method, answer), newest last."""

    def __init__(self) -> None:
        self.seats: dict[str, OrderedDict[str, tuple[str, str, dict[str, Any]]]] = {}
        #: Whether the records stored in the room's log were read (once per load).
        self.loaded = False

    def remember(self, record: dict[str, Any]) -> None:
        """Keep ``record`` (as stored); records that do not read as one are skipped."""
        try:
            seat, key = str(record["seat"]), str(record["key"])
            entry = (str(record["fingerprint"]), str(record["method"]), dict(record["answer"]))
        except (KeyError, TypeError, ValueError):
            return
        keys = self.seats.setdefault(seat, OrderedDict())
        keys.pop(key, None)
        keys[key] = entry
        while len(keys) > KEYS_PER_SEAT:
            keys.popitem(last=False)

    def answer(self, keyed: Keyed) -> dict[str, Any] | None:
        """The first answer to ``keyed``'s key from its seat, or None (a new key);
        :class:`ProtocolError` (``idempotency_key_reused``) if the key was used by that
        seat for another request."""
        keys = self.seats.get(keyed.seat)
        found = keys.get(keyed.key) if keys is not None else None
        if found is None:
            return None
        print_, method, answer = found
        if print_ != keyed.fingerprint or method != keyed.method:
            raise ProtocolError(
                "idempotency_key_reused",
                f"The idempotency key {keyed.key!r} was used before for another request "
                f"({method}); nothing was done. Use a new key for a new request.",
            )
        return answer


# -- the GM's token requests and the lobby's (since 1.6) ------------------------------------------
#
# ``create_seat``, ``create_spectator_link``, ``remove_seat``, ``revoke_spectator_link`` and
# ``rotate_gm_token`` (the encounter's GM seat), and ``encounter_links``, ``set_public`` and
# ``archive_encounter`` (the encounter's owner: its creator's GM key, or the operator)
# change tokens or the encounter's record, not its log: their keys cannot ride on an
# event. Each answered keyed request is stored on its own (``EventStore.put_request``),
# under an id derived from the scope and the key, and its record (method, fingerprint,
# answer) is sealed with a key derived from the same two: the answers hold tokens, and a
# reader of the store must learn nothing it could not learn before (docs/security.md).
# Both derivations go through PBKDF2, so that guessing a client's key from the store is
# slow as well as hopeless for the random 128-bit keys SPEC.md asks for.

#: PBKDF2-HMAC-SHA256 rounds from (scope, key) to the stored id and the sealing keys: a
#: speed bump for a guesser of weak keys, a millisecond or so per keyed request (run in a
#: worker thread, one at a time: a GM's flood of keyed requests queues, it does not take
#: every core).
SEAL_ROUNDS = 2_000
_SALT = b"zonekeep request key\x00"
_NONCE = 16
_TAG = 32


@attrs.frozen
class SealKeys:
    """What a (scope, key) pair derives: the stored id (hex), and the keys of the cipher
    and of the seal's MAC."""

    id: str
    cipher: bytes
    mac: bytes


def seal_keys(scope: str, key: str) -> SealKeys:
    """The id and keys of ``key`` in ``scope`` (slow on purpose: PBKDF2)."""
    master = hashlib.pbkdf2_hmac(
        "sha256", key.encode("utf-8"), _SALT + scope.encode("utf-8"), SEAL_ROUNDS
    )

    def part(label: bytes) -> bytes:
        return hmac.new(master, label, hashlib.sha256).digest()

    return SealKeys(part(b"id").hex(), part(b"cipher"), part(b"mac"))


def _stream(key: bytes, nonce: bytes, size: int) -> bytes:
    """HMAC-SHA256 in counter mode: ``size`` bytes of key stream."""
    blocks = (size + 31) // 32
    return b"".join(
        hmac.new(key, nonce + n.to_bytes(8, "big"), hashlib.sha256).digest() for n in range(blocks)
    )[:size]


def seal(keys: SealKeys, record: dict[str, Any]) -> str:
    """``record`` as JSON, encrypted (HMAC-SHA256 counter mode, a fresh random nonce) and
    authenticated (HMAC-SHA256 over nonce and cipher text), in base64."""
    plain = json.dumps(record, separators=(",", ":")).encode("utf-8")
    nonce = secrets.token_bytes(_NONCE)
    body = bytes(a ^ b for a, b in zip(plain, _stream(keys.cipher, nonce, len(plain)), strict=True))
    tag = hmac.new(keys.mac, nonce + body, hashlib.sha256).digest()
    return base64.b64encode(nonce + body + tag).decode("ascii")


def unseal(keys: SealKeys, sealed: str) -> dict[str, Any] | None:
    """The record :func:`seal` sealed, or None when ``sealed`` does not open with
    ``keys`` (damaged, or not this key's)."""
    try:
        raw = base64.b64decode(sealed.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if len(raw) < _NONCE + _TAG:
        return None
    nonce, body, tag = raw[:_NONCE], raw[_NONCE:-_TAG], raw[-_TAG:]
    if not hmac.compare_digest(tag, hmac.new(keys.mac, nonce + body, hashlib.sha256).digest()):
        return None
    plain = bytes(a ^ b for a, b in zip(body, _stream(keys.cipher, nonce, len(body)), strict=True))
    try:
        record = json.loads(plain.decode("utf-8"))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


#: The scope prefix of the arena library's keyed requests (``save_arena``,
#: ``delete_arena``), kept under ``_store.CREATION`` (they belong to no encounter) by
#: owner: ``arena:gm:<name>`` or ``arena:operator``.
ARENA_SCOPE = "arena:"

#: How long after a keyed ``rotate_gm_token`` its repeat with the revoked GM token (its
#: ``token``) still gets the first answer, in seconds (SPEC.md, "Idempotency").
ROTATION_REPEAT_SECONDS = 600.0

#: The fingerprint params of a keyed ``join``: what its key covers (its seed), not what
#: a retry may change (``last_seq``, ``history``, the token of the same seat).
JOIN_KEYED = ("encounter", "client_seed")


def request_scope(encounter: str, who: str) -> str:
    """The scope of a GM's token request (``who`` ``"gm"``) or of a lobby request on
    one's own encounter (``"owner"``): the encounter's id first, so that forgetting the
    encounter forgets its keys."""
    return f"{encounter}/{who}"
