"""zonekeep.protocol: the wire contract (SPEC.md, JSON Schemas, message classes).

Not written yet: the websocket protocol is the subject of its own issue. The
rules engine already gives every refusal a stable code and a number (see
:data:`zonekeep.sdk.RULE_ERRORS`) for the protocol to carry.
"""
