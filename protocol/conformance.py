"""What ``zonekeep proxy --check`` checks of a client (SPEC.md; docs/clients.md).

:class:`Checker` watches every frame between one client and a server, both ways, on
any number of connections (a client reconnecting is the same client), and notes each
message of the client that breaks the schemas or the protocol. It does no I/O: the
proxy (``zonekeep.server._proxy``) hands it the frames and reports its findings.

The rules (each :class:`Problem`'s ``rule``):

- ``schema``: the frame is not a request the schemas accept (not JSON, an unknown
  method, params of the wrong shape), as ``request.schema.json`` and
  ``<method>.params.schema.json`` say.
- ``before_hello``: a request other than ``hello`` before the connection's ``hello``
  was answered.
- ``id_reused``: a request id the connection used for a request still unanswered.
- ``late_answer``: a ``decide`` command for a decision whose prompt's deadline passed
  (``deadline_seconds`` after the prompt came).
- ``resume_without_last_seq``: a ``join`` of an encounter with a token this client
  joined it with before (on this or another connection) without ``last_seq``.
- ``early_retry``: a request sent again before the ``retry_after_ms`` of the error it
  got (for ``rate_limited``: any request on that connection).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any

import attrs

from ._errors import ProtocolError
from ._messages import parse_params, parse_request

__all__ = ["Checker", "Problem"]


@attrs.frozen
class Problem:
    """One message of the client that breaks the schemas or the protocol."""

    rule: str
    message: str
    connection: int
    frame: str

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self), ensure_ascii=False)


@attrs.define
class _Connection:
    greeted: bool = False
    #: Request ids sent and not yet answered -> (method, params key).
    pending: dict[Any, tuple[str, str]] = attrs.field(factory=dict)
    #: Until when (seconds) the connection was told to wait (``rate_limited``).
    quiet_until: float = 0.0


def _key(method: str, params: Any) -> str:
    return json.dumps([method, params], sort_keys=True, default=str)


class Checker:
    """The checks of one client's messages (see the module's docstring)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self._connections: dict[int, _Connection] = {}
        #: (encounter, decision id) -> when (seconds) its deadline passes.
        self._deadlines: dict[tuple[Any, Any], float] = {}
        #: (encounter, token) pairs this client joined.
        self._joined: set[Hashable] = set()
        #: Request key -> until when (seconds) it must not be sent again.
        self._wait: dict[str, float] = {}

    def opened(self, connection: int) -> None:
        self._connections[connection] = _Connection()

    def _problem(self, rule: str, message: str, connection: int, frame: str) -> None:
        self.problems.append(Problem(rule, message, connection, frame))

    def client_sent(self, connection: int, frame: str | bytes, now: float) -> None:
        """A frame the client sent on ``connection`` at ``now`` (seconds)."""
        conn = self._connections.setdefault(connection, _Connection())
        text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
        if isinstance(frame, bytes):
            self._problem("schema", "A binary frame: the protocol is JSON text.", connection, text)
            return
        try:
            request = parse_request(frame)
            parse_params(request.method, request.params)
        except ProtocolError as exc:
            self._problem("schema", f"{exc.name}: {exc.message}", connection, text)
            return
        method, params, rid = request.method, request.params, request.id
        if method != "hello" and not conn.greeted:
            self._problem(
                "before_hello", f"'{method}' sent before 'hello' was answered.", connection, text
            )
        if rid in conn.pending:
            self._problem(
                "id_reused",
                f"Request id {rid!r} is still waiting for its reply ({conn.pending[rid][0]}).",
                connection,
                text,
            )
        key = _key(method, params)
        if now < conn.quiet_until:
            left = round((conn.quiet_until - now) * 1000)
            self._problem(
                "early_retry",
                f"Sent {left} ms before the connection's rate limit said to (retry_after_ms).",
                connection,
                text,
            )
        elif now < self._wait.get(key, 0.0):
            left = round((self._wait[key] - now) * 1000)
            self._problem(
                "early_retry",
                f"'{method}' sent again {left} ms before its error's retry_after_ms ran out.",
                connection,
                text,
            )
        conn.pending[rid] = (method, key)
        if method == "command" and params.get("type") == "decide":
            decision = (params.get("params") or {}).get("decision")
            deadline = self._deadlines.get((params.get("encounter"), decision))
            if deadline is not None and now > deadline:
                late = round((now - deadline) * 1000)
                self._problem(
                    "late_answer",
                    f"Decision {decision!r} answered {late} ms after its prompt's deadline.",
                    connection,
                    text,
                )
        if method == "join":
            joined = (params.get("encounter"), params.get("token"))
            if joined in self._joined and params.get("last_seq") is None:
                self._problem(
                    "resume_without_last_seq",
                    f"Encounter {joined[0]!r} joined again without 'last_seq': resume with "
                    "the seq of the last event applied.",
                    connection,
                    text,
                )
            self._joined.add(joined)

    def server_sent(self, connection: int, frame: str | bytes, now: float) -> None:
        """A frame the server sent on ``connection`` at ``now`` (seconds)."""
        conn = self._connections.setdefault(connection, _Connection())
        try:
            message = json.loads(frame)
        except (ValueError, TypeError):
            return
        if not isinstance(message, dict):
            return
        if "id" in message and ("result" in message or "error" in message):
            sent = conn.pending.pop(message["id"], None)
            if sent is None:
                return
            method, key = sent
            result = message.get("result")
            if method == "hello" and isinstance(result, dict):
                conn.greeted = True
            if method == "create_encounter" and isinstance(result, dict):
                self._joined.add((result.get("encounter"), result.get("gm_token")))
            error = message.get("error")
            if isinstance(error, dict):
                wait = (error.get("data") or {}).get("retry_after_ms")
                if isinstance(wait, int | float) and wait > 0:
                    until = now + wait / 1000
                    if error.get("name") == "rate_limited":
                        conn.quiet_until = max(conn.quiet_until, until)
                    else:
                        self._wait[key] = until
            return
        params = message.get("params") or {}
        if message.get("method") == "prompt":
            decision = params.get("decision") or {}
            seconds = params.get("deadline_seconds")
            if isinstance(decision.get("id"), str) and isinstance(seconds, int | float):
                self._deadlines[(params.get("encounter"), decision["id"])] = now + seconds
