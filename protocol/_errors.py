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


class ProtocolError(Exception):
    """An error reply: a stable ``name``, its ``code`` number and a sentence."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.code = error_number(name)
        self.message = message

    def to_wire(self) -> dict[str, object]:
        return {"code": self.code, "name": self.name, "message": self.message}
