"""Wire error codes: numbered in documented ranges, each with a stable name.

- 1000-1999 protocol, 2000-2999 authentication, 3000-3999 permission,
  4000-4999 rules (the engine's refusals), 5000-5999 limits, 6000-6999 server.
"""

from __future__ import annotations

from zonekeep.sdk.host import RULE_ERRORS

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
    "encounter_archived": 1009,
    "moved": 1010,
    "idempotency_key_reused": 1011,
    "bad_token": 2000,
    "server_key_required": 2001,
    "bad_server_key": 2002,
    "bad_gm_key": 2003,
    "gm_key_required": 2004,
    "not_your_creature": 3001,
    "gm_only": 3002,
    "not_your_decision": 3003,
    "spectator_read_only": 3004,
    "not_your_encounter": 3005,
    "not_your_arena": 3006,
    "message_too_large": 5000,
    "rate_limited": 5001,
    "too_many_connections": 5002,
    "quota_exceeded": 5003,
    "server_full": 5004,
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


#: What each range of :data:`RANGES` is for (SPEC.md's range table).
RANGE_MEANINGS: dict[str, str] = {
    "protocol": "the message itself is wrong, or went to the wrong node",
    "authentication": "tokens, GM keys and server keys",
    "permission": "the sender may not do this",
    "rules": "the engine refused the command (`zonekeep.sdk.host.RULE_ERRORS`)",
    "limits": "a limit was exceeded",
    "server": "the server failed",
}

#: What each error number means (SPEC.md's error table is generated from it).
ERROR_MEANINGS: dict[int, str] = {
    1000: "The frame is not valid JSON (the message gives line and column; `NaN`, `Infinity` and `-Infinity` are not JSON), is not a JSON object, nests arrays and objects more than 32 levels deep, or is a binary frame. The id is `null`.",  # parse_error
    1001: "The request's `id` is missing or of the wrong type, `method` is missing or not a non-empty string, `params` is not an object, or there are other top-level keys.",  # invalid_request
    1002: "No request method has that name.",  # unknown_method
    1003: "A method other than `hello` was sent before `hello`.",  # hello_required
    1004: "`hello` named a protocol MAJOR version other than 1.",  # unsupported_version
    1005: "A protocol method's params have a missing, unknown or wrongly typed field; the message names the field. Also a frame holding a number the server cannot read (an integer of more than 4,300 digits, a number beyond a double's range such as `1e400`), with the id `null`.",  # invalid_params
    1006: "`hello` was sent a second time.",  # already_greeted
    1007: "No encounter on this server has that id. For a request other than `join`, `list_encounters` and the lobby's own requests, also an encounter that is stored but not loaded (nobody joined it since it was last unloaded): `join` it first.",  # unknown_encounter
    1008: "The connection has not joined that encounter (or has left it).",  # not_joined
    1009: "The encounter is archived (it ended, or was archived by its GM, the operator or the archiving sweep): it cannot be joined or changed. The server's operator can bring it back with `zonekeep encounters restore ID`.",  # encounter_archived
    1010: "Another node of this server serves that encounter (it holds the encounter's lease): the error's `url` is that node's websocket URL. Connect there, say `hello` and send the request again; a client follows it without asking its user. Since 1.4.",  # moved
    1011: "The request's `idempotency_key` was used before by the same seat (for the lobby's requests, the same owner) for another request (another method or other params); nothing was done. Choose a new key for every new request. Since 1.5.",  # idempotency_key_reused
    2000: "`join`'s token does not open that encounter (since 1.6 also `rotate_gm_token`'s `token` when it repeats no rotation of that key, or too late).",  # bad_token
    2001: "The server requires a key to create encounters and none was given.",  # server_key_required
    2002: "The server key given is wrong.",  # bad_server_key
    2003: "`hello`'s `gm_key` is not a GM key of this server (or it was revoked); the connection stays unauthenticated and MAY say `hello` again.",  # bad_gm_key
    2004: "Creating encounters on this server needs a GM key (`hello`'s `gm_key`) or the server key, or the lobby request needs a GM key (`encounter_links`, `set_public`, `archive_encounter`; `save_arena` and `delete_arena` since 1.6).",  # gm_key_required
    3001: "A player acted for, or asked about, a creature whose controller is not that player.",  # not_your_creature
    3002: "A player sent a GM-only method or command.",  # gm_only
    3003: "Someone answered a decision whose controller is someone else.",  # not_your_decision
    3004: "A spectator sent a request that could change something (`command`, `create_seat`, `create_spectator_link`, `remove_seat`, `revoke_spectator_link`, `rotate_gm_token`).",  # spectator_read_only
    3005: "A lobby request (`encounter_links`, `set_public`, `archive_encounter`) named an encounter that the connection's GM key did not create.",  # not_your_encounter
    3006: "`save_arena` or `delete_arena` named an arena of the library that another GM key saved, or a bundled or plugin arena (which no request changes). Since 1.6.",  # not_your_arena
    4000: "An engine command's params are missing, unknown or of the wrong type, or `create_encounter`'s roster, arena or options are invalid (a numeric option outside its range: `turn_seconds` absent or 10 to 3,600, `reaction_seconds` 5 to 600, `round_seconds` 1 to 60; the message names the option and the range).",  # invalid_params
    4001: "No engine command has that `type`.",  # unknown_command
    4002: "No creature has that id (hidden creatures do not exist for players and spectators).",  # unknown_creature
    4003: "The engine's code for 3001; on the wire it is reported as 3001.",  # not_your_creature
    4004: "The command cannot be used at the encounter's current step (surprise, positions, initiative, turns, ended).",  # wrong_phase
    4005: "It is not that creature's turn.",  # not_your_turn
    4006: "The creature has used its action this turn.",  # no_action_left
    4007: "The creature has used its bonus action this turn.",  # no_bonus_action_left
    4008: "The creature has used its object interaction this turn.",  # no_interaction_left
    4009: "The creature has used its reaction this round.",  # no_reaction_left
    4010: "The move costs more movement than the creature has left.",  # not_enough_movement
    4011: "The creature cannot move that way (prone, no flying speed, a link that needs one).",  # cannot_move
    4012: "A surprised creature cannot act on its first turn.",  # surprised
    4013: "The creature is incapacitated and cannot act.",  # incapacitated
    4014: "The creature's speed is 0 (grappled, restrained ...).",  # speed_zero
    4015: "The creature is already prone.",  # already_prone
    4016: "The creature is not prone (so it cannot stand up).",  # not_prone
    4017: "An enemy's space is in the way.",  # blocked_by_creature
    4018: "The move would end in another creature's space.",  # occupied_space
    4019: "The creature has no attack with that name.",  # unknown_attack
    4020: "The target cannot be chosen for that command (itself where that is not allowed, already out of the fight, hidden from the attacker ...); allies are legal targets of an attack.",  # invalid_target
    4021: "No pending decision has that id.",  # unknown_decision
    4022: "The engine's code for 3003; on the wire it is reported as 3003.",  # not_your_decision
    4023: "The choice is not one of the decision's options (or not an ordering of all of them).",  # invalid_choice
    4024: "`end_encounter` while a time-sensitive threat remains; send it with `force: true`.",  # threat_remains
    4025: "The encounter has ended.",  # encounter_over
    4026: "Two creatures (or a creature and a group, a hazard ...) share an id.",  # duplicate_id
    4027: "No zone of the arena has that id.",  # unknown_zone
    4028: "The creature has no readied attack to release.",  # nothing_readied
    4029: "Nobody may act, but by a reaction, until the reactions to a move are answered (an initiative tie does not hold play).",  # decision_pending
    4030: "A command for others' turns only (a plugin's) was sent on the creature's own turn; the built-in reactions may come on any turn.",  # not_on_your_turn
    4031: "The engine's code for 3002; on the wire it is reported as 3002.",  # gm_only
    4032: "No initiative group has that id.",  # unknown_group
    4033: "No hazard has that id.",  # unknown_hazard
    4034: "No asset (or ongoing effect) has that id, or it is not in the creature's zone.",  # unknown_asset
    4035: "The zones are not linked to each other.",  # not_adjacent
    4036: "The link between the zones is not clear.",  # no_clear_path
    4037: "The zone has no capacity left for a creature of that size.",  # zone_full
    4038: "A Sprint's further zone is not straight ahead.",  # not_straight
    4039: "There is no room left around the creature (for engaging, adjacency or sharing a space).",  # no_room
    4040: "The creature cannot engage that enemy now.",  # cannot_engage
    4041: "The creature already holds that position.",  # already_in_position
    4042: "The creature holds no such position.",  # not_in_position
    4043: "The encounter's options switched that mechanic off (adjacency, back-to-back ...).",  # option_off
    4044: "The target is beyond the attack's or effect's range.",  # out_of_range
    4045: "Something blocks the line of sight to the target.",  # no_line_of_sight
    4046: "An area effect names more targets than its size allows.",  # too_many_targets
    4047: "An area effect names fewer targets than it must.",  # too_few_targets
    4048: "No ongoing effect has that id.",  # unknown_effect
    4049: "A short name (a command `type`, a condition, an asset tag ...) matches the ids of several plugins (`hazards.burning` and `fire.burning`); the message names them all: send the full id.",  # ambiguous_id
    4060: "The creature is immune to that condition (since 1.4).",  # condition_immune
    4061: "A frightened creature will not move closer to its fear (since 1.4).",  # frightened
    4062: "A blinded creature cannot see to react (since 1.4).",  # blinded
    4063: "The feature (a breath weapon, a use per day) has no use left: it waits for its recharge, a rest or the GM (since 1.6).",  # no_uses_left
    4064: "The creature has no such feature (a `multiattack` without a Multiattack action; an attack its multiattack does not list) (since 1.6).",  # no_such_feature
    4065: "The feature is the GM's to adjudicate: the rules do not resolve it (since 1.7).",  # gm_adjudicates
    4066: "The bonus-action spell rule: after a bonus-action spell only an action cantrip, after a leveled action spell no bonus-action spell, this turn (since 1.7).",  # spell_limit
    4067: "The creature is not hasted, or its hasted action this turn is spent (since 1.7).",  # not_hasted
    4068: "A slowed creature takes an action or a bonus action, not both, and makes one attack (since 1.7).",  # slowed
    4069: "A lethargic creature (its haste just ended) can neither move nor act until its next turn ends (since 1.7).",  # lethargic
    4070: "A charmed creature cannot attack its charmer (since 1.7).",  # charmed
    4900: "A plugin refused the command; also the number of every plugin-specific code.",  # plugin_refused
    5000: "The frame is larger than `max_message_bytes` (but at most 4 times that). The id is `null`.",  # message_too_large
    5001: "The client sent messages faster than the rate limit; this one was ignored. The id is the request's id when the frame can be read (a JSON object with a valid id, at most `max_message_bytes`), else `null`.",  # rate_limited
    5002: "The encounter already has `max_connections_per_encounter` GM and player connections joined (spectators: `max_spectators_per_encounter`), or the token already has `max_connections_per_token` connections to it.",  # too_many_connections
    5003: "The creator (the GM key, else the server key used, else the client's IP address) has reached a quota: `encounters_per_hour` or `open_encounters`; the message names it and says in how many seconds a slot frees (for `open_encounters`: once one of them ends or is archived).",  # quota_exceeded
    5004: "The server has as many encounters loaded and not ended as it may (`max_encounters`): `create_encounter`, or a `join` or `encounter_links` that would load a stored encounter, is refused until one ends or is unloaded.",  # server_full
    6000: "The server failed while handling the request (a bug). The encounter goes on and its GM gets an `encounter_error`; nothing changed, unless the failure came after the command was stored, in which case every member of the encounter gets a fresh `snapshot`.",  # internal_error
    6001: "The encounter's rules crashed on this command; nothing changed and the GM received an `encounter_error`.",  # encounter_crashed
    6002: "A plugin failed while handling this command (its command handler or one of its hooks raised, or answered with the wrong shape); nothing changed and the GM received an `encounter_error` naming the plugin.",  # plugin_error
    6003: "The server could not save the change (its disk is full or read-only); nothing changed and nothing was broadcast.",  # store_unavailable
}

#: The errors after which the same request, sent again unchanged, may succeed once time
#: has passed (SPEC.md, "Retrying"); every other error is refused again until the client
#: changes something (its params, the state it waits for, its connection).
RETRYABLE = frozenset(
    {
        "moved",
        "decision_pending",
        "rate_limited",
        "too_many_connections",
        "quota_exceeded",
        "server_full",
        "store_unavailable",
    }
)

#: ``retry_after_ms`` of the errors that get a fixed one: ``moved`` (at once, at the
#: error's ``url``) and ``store_unavailable`` (a second: a full or read-only disk, a
#: database restarting, a lease being handed over).
RETRY_AFTER_MS: dict[str, int] = {"moved": 0, "store_unavailable": 1000}

#: WebSocket close codes the server uses: (code, reason, when).
CLOSE_CODES: list[tuple[int, str, str]] = [
    (1000, "", "Normal closure (the client closed, or the server answered a client's close)."),
    (1001, "going away", "The server is shutting down; a `closing` notification came first."),
    (
        1008,
        "rate limit abuse",
        "More than `abuse_refusals` (40) messages were refused with `rate_limited` within "
        "`abuse_window_seconds` (10) seconds (both announced in `hello`'s `limits`).",
    ),
    (1009, "", "A frame was larger than 4 \u00d7 `max_message_bytes`."),
    (
        4000,
        "slow consumer",
        "The client did not read its messages: more than `outgoing_queue` were waiting.",
    ),
    (
        1011,
        "keepalive ping timeout",
        "The client did not answer a WebSocket ping within `ping_interval_seconds`.",
    ),
    (4001, "idle timeout", "The client sent no frame for `idle_timeout_seconds`."),
    (
        4002,
        "token revoked",
        "The GM took back the token this connection joined with (`remove_seat`, "
        "`revoke_spectator_link`, `rotate_gm_token`, `encounter_links`); it opens nothing any "
        "more.",
    ),
    (
        4003,
        "gm key revoked",
        "The operator revoked the GM key this connection said `hello` with, or the key "
        "that created the encounter this GM connection joined (`zonekeep gm revoke`).",
    ),
]


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

    def __init__(
        self,
        name: str,
        message: str,
        *,
        code: int | None = None,
        url: str | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.code = error_number(name) if code is None else code
        self.message = message
        self.request_id: int | str | None = None
        #: Only for ``moved``: the websocket URL of the node that serves the encounter.
        self.url = url
        #: When waiting helps: the milliseconds to wait before a retry (SPEC.md, "Retrying").
        self.retry_after_ms = (
            RETRY_AFTER_MS.get(name) if retry_after_ms is None else max(0, retry_after_ms)
        )

    @property
    def retryable(self) -> bool:
        """Whether the same request, sent again unchanged, may succeed later."""
        return self.name in RETRYABLE

    @classmethod
    def from_refusal(cls, code: str, message: str) -> ProtocolError:
        """The wire error for a refusal of the rules (``Refusal.code``, ``Refusal.message``)."""
        return cls(code, message, code=rule_error_number(code))

    def to_wire(self) -> dict[str, object]:
        data: dict[str, object] = {"retryable": self.retryable}
        if self.retry_after_ms is not None:
            data["retry_after_ms"] = self.retry_after_ms
        wire: dict[str, object] = {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "data": data,
        }
        if self.url is not None:
            wire["url"] = self.url
        return wire
