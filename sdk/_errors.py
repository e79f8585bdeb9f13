"""Refusals: a command that breaks a rule is refused with a stable code and a sentence.

Codes are stable strings; each also has a number in the documented range for rule
errors (4000-4999) so the wire protocol can carry both.
"""

from __future__ import annotations

from typing import NoReturn

#: Every refusal code the core rules use, with its number. Plugins may use their own
#: string codes; they are numbered 4900 on the wire.
RULE_ERRORS: dict[str, int] = {
    "invalid_params": 4000,
    "unknown_command": 4001,
    "unknown_creature": 4002,
    "not_your_creature": 4003,
    "wrong_phase": 4004,
    "not_your_turn": 4005,
    "no_action_left": 4006,
    "no_bonus_action_left": 4007,
    "no_interaction_left": 4008,
    "no_reaction_left": 4009,
    "not_enough_movement": 4010,
    "cannot_move": 4011,
    "surprised": 4012,
    "incapacitated": 4013,
    "speed_zero": 4014,
    "already_prone": 4015,
    "not_prone": 4016,
    "blocked_by_creature": 4017,
    "occupied_space": 4018,
    "unknown_attack": 4019,
    "invalid_target": 4020,
    "unknown_decision": 4021,
    "not_your_decision": 4022,
    "invalid_choice": 4023,
    "threat_remains": 4024,
    "encounter_over": 4025,
    "duplicate_id": 4026,
    "unknown_zone": 4027,
    "nothing_readied": 4028,
    "decision_pending": 4029,
    "not_on_your_turn": 4030,
    "gm_only": 4031,
    "unknown_group": 4032,
    "unknown_hazard": 4033,
    "unknown_asset": 4034,
    "not_adjacent": 4035,
    "no_clear_path": 4036,
    "zone_full": 4037,
    "not_straight": 4038,
    "no_room": 4039,
    "cannot_engage": 4040,
    "already_in_position": 4041,
    "not_in_position": 4042,
    "option_off": 4043,
    "out_of_range": 4044,
    "no_line_of_sight": 4045,
    "too_many_targets": 4046,
    "too_few_targets": 4047,
    "unknown_effect": 4048,
    "ambiguous_id": 4049,
    "condition_immune": 4060,
    "frightened": 4061,
    "blinded": 4062,
    "no_uses_left": 4063,
    "no_such_feature": 4064,
    "gm_adjudicates": 4065,
    "spell_limit": 4066,
    "not_hasted": 4067,
    "slowed": 4068,
    "lethargic": 4069,
    "charmed": 4070,
    "plugin_refused": 4900,
}


class Refusal(Exception):
    """A command was refused. Nothing it would have done has happened.

    ``code`` is stable and machine-readable; ``message`` is a sentence for a person.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def number(self) -> int:
        """The numeric code for the wire (4900 for codes the core does not know)."""
        return RULE_ERRORS.get(self.code, 4900)


def refuse(code: str, message: str) -> NoReturn:
    """Raise a :class:`Refusal`."""
    raise Refusal(code, message)
