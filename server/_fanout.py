"""Fan-out: who receives what a room sends, behind one subscriber interface.

A :class:`Subscriber` is anything that takes serialized messages; a websocket
connection (``_connection.Connection``) is one, a test's recorder another. A room's
:class:`Member` is a subscriber with a seat (a role, and a player id for players);
what a member may see depends on its view (the GM's, its own player's, the
spectators'), which the room names, so :func:`fan_out` serializes each message once
per view, not once per member.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Literal, Protocol, TypeVar

import attrs

from zonekeep.sdk import Actor

from ._wire import notification_text

Role = Literal["gm", "player", "spectator"]


class Subscriber(Protocol):
    """What the server sends messages to.

    ``push_text`` queues one message, already serialized (by ``_wire``), to be sent in
    order after the ones queued before it; it never blocks, and does nothing once the
    subscriber is closed. A subscriber may also take a :class:`Batch` at once
    (``push_batch``, as a connection does): :func:`fan_out` then hands it that. ``close`` stops the subscriber with a websocket close
    ``code`` and ``reason``: nothing queued after it is sent.
    """

    def push_text(self, text: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


@attrs.define(eq=False)
class Member:
    """A subscriber joined to a room, and what it may do and see there."""

    subscriber: Subscriber
    role: Role
    player: str | None = None

    @property
    def full_view(self) -> bool:
        return self.role == "gm"

    @property
    def actor(self) -> Actor:
        if self.role == "gm":
            return Actor("gm", "gm")
        if self.role == "player":
            return Actor("player", self.player or "")
        return Actor("spectator", "spectator")


_View = TypeVar("_View", bound=Hashable)


def push(subscriber: Subscriber, params: object) -> None:
    """Send one notification (a protocol notification params object) to ``subscriber``."""
    subscriber.push_text(notification_text(params))


class Batch:
    """Messages sent together to several subscribers: their texts, and (``framed``)
    their websocket frames as bytes, built by the first connection that writes them and
    reused by every other one (``_connection.Connection.push_batch``)."""

    __slots__ = ("framed", "texts")

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self.framed: bytes | None = None


def fan_out(
    members: Iterable[Member],
    view_of: Callable[[Member], _View],
    texts: Callable[[_View], Sequence[str]],
) -> None:
    """Send each member the messages ``texts(view_of(member))``, in order; ``texts`` is
    called at most once per distinct view (the GM's, each player's, the spectators'),
    and only for views some member has. Views that come to the same texts (nothing
    hidden from either) share one :class:`Batch`, so their frames are built once."""
    views: dict[_View, Batch] = {}
    same: dict[tuple[str, ...], Batch] = {}
    for member in list(members):
        view = view_of(member)
        batch = views.get(view)
        if batch is None:
            found = tuple(texts(view))
            batch = same.get(found)
            if batch is None:
                batch = same[found] = Batch(found)
            views[view] = batch
        subscriber = member.subscriber
        push_batch = getattr(subscriber, "push_batch", None)
        if push_batch is not None:
            push_batch(batch)
        else:  # a subscriber that takes one text at a time (a test's recorder)
            for text in batch.texts:
                subscriber.push_text(text)
