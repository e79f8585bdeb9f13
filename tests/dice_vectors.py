"""The dice test vectors (tests/fixtures/dice_vectors.json), shared by the Python and the
JavaScript verifiers: ``python tests/dice_vectors.py`` writes the file again.

- ``dice``: single dice of the construction (seed, mix, counter, sides -> face).
- ``commitments`` and ``mixes``: SHA-256 of a seed; the mix after contributions.
- ``logs``: small encounter logs (``[seq, event]`` pairs) and what a verifier must say:
  ``ok``, or the first failing roll's counter (``null`` when no roll is named).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from zonekeep.sdk import die
from zonekeep.sdk.host import EMPTY_MIX, CountedEntropy, commitment, next_mix

VECTORS = Path(__file__).parent / "fixtures" / "dice_vectors.json"


def _roll(
    entropy: CountedEntropy,
    expr_sides: int,
    count: int,
    expertise: int = 0,
    penalty: int = 0,
    bonus: int = 0,
) -> dict[str, Any]:
    draws = []
    dice = []
    for _ in range(count):
        draws.append([entropy.counter, expr_sides])
        dice.append(entropy.randint(expr_sides))
    roll: dict[str, Any] = {
        "expr": f"{count}d{expr_sides}",
        "dice": dice,
        "kept": dice,
        "modifier": 0,
        "total": sum(dice),
        "advantage": "none",
        "expertise": expertise,
        "expertise_roll": 0,
        "sources": [],
        "draws": draws,
    }
    if expertise:
        roll["draws"].append([entropy.counter, expertise])
        roll["expertise_roll"] = entropy.randint(expertise)
        roll["total"] += roll["expertise_roll"]
    if penalty:  # a die subtracted (Bane's d4), drawn last
        roll["draws"].append([entropy.counter, penalty])
        roll["penalty"] = penalty
        roll["penalty_roll"] = entropy.randint(penalty)
        roll["total"] -= roll["penalty_roll"]
    if bonus:  # a bonus die added (a Bardic Inspiration die), drawn after the others
        roll["draws"].append([entropy.counter, bonus])
        roll["bonus_dice"] = [entropy.randint(bonus)]
        roll["modifier"] += roll["bonus_dice"][0]
        roll["total"] += roll["bonus_dice"][0]
    return roll


def fair_log() -> list[list[Any]]:
    """A fair encounter: commitment, a contribution, rolls, a roll-off, a rewind past a
    roll, a rotation, more rolls, the reveal at the end."""
    seed1 = "3f" * 32
    seed2 = "a0" * 32
    e = CountedEntropy(seed1)
    log: list[dict[str, Any]] = [
        {"type": "encounter_created", "encounter": "v1"},
        {"type": "dice_committed", "mode": "fair", "commitment": commitment(seed1), "seed": None},
        {"type": "dice_contributed", "by": "alice", "value": "lucky-socks"},
    ]
    e.contribute("lucky-socks")
    log.append({"type": "attack_made", "attacker": "a", "roll": _roll(e, 20, 1, expertise=4)})
    draws = [[e.counter, 20], [e.counter + 1, 20]]  # counters 2, 3
    rolls = [e.randint(20), e.randint(20)]
    log.append(
        {
            "type": "initiative_rolled",
            "entries": [],
            "rolloffs": [{"contenders": ["alice", "gm"], "rolls": rolls, "draws": draws}],
        }
    )
    log.append({"type": "damaged", "creature": "b", "roll": _roll(e, 6, 2)})  # counters 4, 5
    log.append({"type": "rewound", "to_seq": 5, "by": "gm", "undone_rolls": [4, 5]})
    log.append({"type": "dice_drawn", "draws": [[e.counter, 8, e.randint(8)]]})  # counter 6
    log.append(
        {
            "type": "dice_revealed",
            "seed": seed1,
            "commitment": commitment(seed1),
            "reason": "rotated",
        }
    )
    log.append(
        {"type": "dice_committed", "mode": "fair", "commitment": commitment(seed2), "seed": None}
    )
    e.seed = seed2
    log.append({"type": "dice_contributed", "by": "gm", "value": "GM~salt!"})
    e.contribute("GM~salt!")
    log.append({"type": "attack_made", "attacker": "b", "roll": _roll(e, 20, 1)})
    log.append({"type": "encounter_ended", "reason": "done", "by": "gm"})
    log.append(
        {"type": "dice_revealed", "seed": seed2, "commitment": commitment(seed2), "reason": "ended"}
    )
    return [[seq, event] for seq, event in enumerate(log, 1)]


def seeded_log() -> list[list[Any]]:
    e = CountedEntropy("table-7")
    log: list[dict[str, Any]] = [
        {"type": "encounter_created", "encounter": "v2"},
        {
            "type": "dice_committed",
            "mode": "seeded",
            "commitment": commitment("table-7"),
            "seed": "table-7",
        },
        {"type": "attack_made", "attacker": "a", "roll": _roll(e, 20, 3)},
        {"type": "save_made", "creature": "a", "roll": _roll(e, 20, 1, penalty=4)},
        {"type": "attack_made", "attacker": "b", "roll": _roll(e, 20, 1, bonus=6)},
    ]
    return [[seq, event] for seq, event in enumerate(log, 1)]


def _tampered(log: list[list[Any]], edit: Any) -> list[list[Any]]:
    changed = copy.deepcopy(log)
    edit(changed)
    return changed


def _flip(log: list[list[Any]]) -> None:
    roll = log[3][1]["roll"]
    roll["dice"][0] = roll["dice"][0] % 20 + 1


def _wrong_commitment(log: list[list[Any]]) -> None:
    log[1][1]["commitment"] = commitment("not-the-seed")


def _rolloff(log: list[list[Any]]) -> None:
    rolls = log[4][1]["rolloffs"][0]["rolls"]
    rolls.reverse() if rolls[0] != rolls[1] else rolls.__setitem__(0, rolls[0] % 20 + 1)


def _contribution(log: list[list[Any]]) -> None:
    log[2][1]["value"] = "lucky-sock"


def _skip(log: list[list[Any]]) -> None:
    del log[5:7]  # the damage roll and the rewind: counters 4 and 5 vanish
    for i, item in enumerate(log, 1):
        item[0] = i


def vectors() -> dict[str, Any]:
    mix1 = next_mix(EMPTY_MIX, "lucky-socks")
    mix2 = next_mix(mix1, "GM~salt!")
    dice = []
    for seed, mix, counter, sides in [
        ("table-7", EMPTY_MIX, 0, 20),
        ("table-7", EMPTY_MIX, 1, 20),
        ("table-7", EMPTY_MIX, 2, 6),
        ("table-7", EMPTY_MIX, 3, 4),
        ("table-7", EMPTY_MIX, 1000, 100),
        ("3f" * 32, mix1, 0, 20),
        ("3f" * 32, mix2, 41, 12),
        ("x", EMPTY_MIX, 2**40, 1000),
        ("x", EMPTY_MIX, 7, 2),
        ("x", EMPTY_MIX, 8, 3),
    ]:
        dice.append(
            {
                "seed": seed,
                "mix": mix.hex(),
                "counter": counter,
                "sides": sides,
                "face": die(seed, mix, counter, sides),
            }
        )
    fair = fair_log()
    truncated = fair[:-1]
    return {
        "dice": dice,
        "commitments": [
            {"seed": s, "commitment": commitment(s)} for s in ("table-7", "3f" * 32, "~")
        ],
        "mixes": [
            {"contributions": [], "mix": EMPTY_MIX.hex()},
            {"contributions": ["lucky-socks"], "mix": mix1.hex()},
            {"contributions": ["lucky-socks", "GM~salt!"], "mix": mix2.hex()},
        ],
        "logs": [
            {"name": "fair", "log": fair, "ok": True, "rolls": 8, "undone": [[7, [4, 5]]]},
            {"name": "seeded", "log": seeded_log(), "ok": True, "rolls": 7, "undone": []},
            {"name": "tampered roll", "log": _tampered(fair, _flip), "ok": False, "counter": 0},
            {
                "name": "wrong commitment",
                "log": _tampered(fair, _wrong_commitment),
                "ok": False,
                "counter": 0,
            },
            {
                "name": "tampered roll-off",
                "log": _tampered(fair, _rolloff),
                "ok": False,
                "counter": 2,
            },
            {
                "name": "tampered contribution",
                "log": _tampered(fair, _contribution),
                "ok": False,
                "counter": 0,
            },
            {"name": "missing reveal (truncated)", "log": truncated, "ok": False, "counter": 7},
            {"name": "rolls cut out", "log": _tampered(fair, _skip), "ok": False, "counter": 4},
        ],
    }


if __name__ == "__main__":
    VECTORS.write_text(json.dumps(vectors(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {VECTORS}")
