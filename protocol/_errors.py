"""Wire error codes: numbered in documented ranges, each with a stable name.

- 1000-1999 protocol, 2000-2999 authentication, 3000-3999 permission,
  4000-4999 rules (the engine's refusals), 5000-5999 limits, 6000-6999 server.
"""

from __future__ import annotations

from zonekeep.sdk import RULE_ERRORS

PROTOCOL_ERRORS: dict[str, int] = {
    "parse_error": 1000,
    "invalid_request": 1001,
    "unknown_method": 1002,
    "hello_required": 1003,
    "unsupported_version": 1004,
    "invalid_params": 1005,
    "already_greeted": 1006,
    "unknown_encounter": 1007,
    "not_joined": 1008,
    "bad_token": 2000,
    "server_key_required": 2001,
    "bad_server_key": 2002,
    "not_your_creature": 3001,
    "gm_only": 3002,
    "not_your_decision": 3003,
    "spectator_read_only": 3004,
    "message_too_large": 5000,
    "rate_limited": 5001,
    "too_many_connections": 5002,
    "internal_error": 6000,
    "encounter_crashed": 6001,
    "plugin_error": 6002,
    "store_unavailable": 6003,
}

#: Refusal codes of the rules engine that the wire reports as permission errors.
PERMISSION_CODES = frozenset({"not_your_creature", "gm_only", "not_your_decision"})

#: The documented ranges, by first digit.
RANGES: dict[str, tuple[int, int]] = {
    "protocol": (1000, 1999),
    "authentication": (2000, 2999),
    "permission": (3000, 3999),
    "rules": (4000, 4999),
    "limits": (5000, 5999),
    "server": (6000, 6999),
}


def error_number(name: str) -> int:
    """The wire number for an error name: protocol table first, then the rules' table.

    Unknown rule codes (a plugin's own) are 4900.
    """
    if name in PROTOCOL_ERRORS:
        return PROTOCOL_ERRORS[name]
    return RULE_ERRORS.get(name, 4900)


def rule_error_number(code: str) -> int:
    """The wire number for a refusal of the rules engine.

    The permission codes (:data:`PERMISSION_CODES`) are reported in the 3xxx range;
    every other core code keeps its 4xxx number and a plugin's own code is 4900.
    ``invalid_params`` is therefore 4000 here (a bad engine command or roster), while
    :func:`error_number` gives 1005 (bad params of a protocol method).
    """
    if code in PERMISSION_CODES:
        return PROTOCOL_ERRORS[code]
    return RULE_ERRORS.get(code, 4900)


class ProtocolError(Exception):
    """An error reply: a stable ``name``, its ``code`` number and a sentence.

    ``code`` defaults to :func:`error_number` of ``name``; pass it to override (as
    :meth:`from_refusal` does for the rules' codes). ``request_id`` is the id of the
    request that failed when it could be read (set by ``parse_request``), else ``None``.
    """

    def __init__(self, name: str, message: str, *, code: int | None = None) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.code = error_number(name) if code is None else code
        self.message = message
        self.request_id: int | str | None = None

    @classmethod
    def from_refusal(cls, code: str, message: str) -> ProtocolError:
        """The wire error for a refusal of the rules (``Refusal.code``, ``Refusal.message``)."""
        return cls(code, message, code=rule_error_number(code))

    def to_wire(self) -> dict[str, object]:
        return {"code": self.code, "name": self.name, "message": self.message}
