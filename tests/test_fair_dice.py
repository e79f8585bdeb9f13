"""The dice construction (SPEC.md, "Dice"): uniform faces (chi-square), the same inputs
give the same rolls, rejection sampling, the shared vectors checked by the Python and the
JavaScript verifiers alike, and the rolls of the rules carrying their counters."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import math
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import helpers
import pytest
from dice_vectors import VECTORS, fair_log, seeded_log, vectors
from helpers import missing_component
from hypothesis import given, settings
from hypothesis import strategies as st

from zonekeep.sdk import RandomEntropy, die, roll
from zonekeep.sdk.host import (
    EMPTY_MIX,
    CountedEntropy,
    VerifyFailure,
    commitment,
    dice_in,
    event_to_dict,
    next_mix,
    valid_seed,
    verify_log,
)

ROOT = Path(__file__).resolve().parent.parent
DICE_JS = ROOT / "server" / "static" / "dice.js"


def chi_square_limit(df: int, z: float = 3.719) -> float:
    """The chi-square value that ``df`` degrees of freedom exceed with probability about
    0.0001 (Wilson-Hilferty; z is the normal quantile for 0.0001)."""
    h = 2 / (9 * df)
    return float(df * (1 - h + z * math.sqrt(h)) ** 3)


@pytest.mark.parametrize("sides", [2, 4, 6, 8, 10, 12, 20, 100])
def test_every_face_comes_up_as_often_as_the_others(sides: int) -> None:
    # Fixed seeds (the test is deterministic); the mix of a contribution, too.
    mix = next_mix(EMPTY_MIX, "chi-square")
    rolls = 600 * sides
    counts = Counter(die(f"seed-{sides}", mix, c, sides) for c in range(rolls))
    assert set(counts) == set(range(1, sides + 1))
    expected = rolls / sides
    chi2 = sum((counts[face] - expected) ** 2 / expected for face in range(1, sides + 1))
    assert chi2 < chi_square_limit(sides - 1), (chi2, counts)


def test_the_chi_square_check_catches_a_biased_die() -> None:
    # The same statistic on a die that favours its top face fails: the check can fail.
    rolls = 600 * 20
    biased = Counter(min(20, die("bias", EMPTY_MIX, c, 21)) for c in range(rolls))
    expected = rolls / 20
    chi2 = sum((biased[f] - expected) ** 2 / expected for f in range(1, 21))
    assert chi2 > chi_square_limit(19)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.from_regex(r"[!-~]{1,128}", fullmatch=True),
    contributions=st.lists(st.from_regex(r"[!-~]{1,20}", fullmatch=True), max_size=3),
    counter=st.integers(0, 2**64 - 1),
    sides=st.integers(1, 1000),
)
def test_the_same_inputs_give_the_same_roll(
    seed: str, contributions: list[str], counter: int, sides: int
) -> None:
    mix = EMPTY_MIX
    for c in contributions:
        mix = next_mix(mix, c)
    face = die(seed, mix, counter, sides)
    assert 1 <= face <= sides
    assert die(seed, bytes(mix), counter, sides) == face
    entropy = CountedEntropy(seed, counter=counter, mix=mix)
    assert entropy.randint(sides) == face and entropy.draws == [(counter, sides, face)]
    assert entropy.counter == counter + 1


@settings(max_examples=50, deadline=None)
@given(seed=st.from_regex(r"[!-~]{1,40}", fullmatch=True), n=st.integers(1, 30))
def test_a_counted_entropy_is_a_pure_function_of_seed_and_counter(seed: str, n: int) -> None:
    a, b = CountedEntropy(seed), CountedEntropy(seed)
    first = [a.randint(20) for _ in range(n)]
    assert [b.randint(20) for _ in range(n)] == first
    # Starting at a later counter gives the tail of the same sequence.
    assert [CountedEntropy(seed, counter=k).randint(20) for k in range(n)] == first


def test_rejection_sampling_draws_again_above_the_limit() -> None:
    # With 2**63 + 1 sides about half the 64-bit values lie above the limit, so some
    # counters need a second attempt: the face is then the second block's.
    sides = 2**63 + 1
    limit = 2**64 - (2**64 % sides)
    retried = 0
    for counter in range(40):
        faces = []
        for attempt in range(40):
            message = EMPTY_MIX + counter.to_bytes(8, "big") + attempt.to_bytes(4, "big")
            x = int.from_bytes(hmac.new(b"k", message, hashlib.sha256).digest()[:8], "big")
            faces.append(x % sides + 1 if x < limit else None)
        wanted = next(f for f in faces if f is not None)
        retried += faces[0] is None
        assert die("k", EMPTY_MIX, counter, sides) == wanted
    assert retried > 5


def test_seeds_and_contributions_are_printable_ascii() -> None:
    assert valid_seed("a") and valid_seed("~" * 128) and valid_seed("3f" * 32)
    for bad in ("", " ", "a b", "x" * 129, "é", "tab\t", None, 7, b"bytes"):
        assert not valid_seed(bad)


def test_the_rules_record_the_counter_of_every_die() -> None:
    entropy = CountedEntropy("rules", counter=10)
    record = roll(entropy, "2d6+1", expertise=4)
    assert record.draws == ((10, 6), (11, 6), (12, 4))
    assert dice_in(event_to_dict_roll(record)) == [
        (10, 6, record.dice[0]),
        (11, 6, record.dice[1]),
        (12, 4, record.expertise_roll),
    ]
    advantage = roll(entropy, "d20", advantage="advantage")
    assert advantage.draws == ((13, 20), (14, 20)) and len(advantage.dice) == 2
    # Test entropy has no counter: nothing is recorded, as before.
    assert roll(RandomEntropy(1), "d20").draws == ()


def event_to_dict_roll(record: Any) -> dict[str, Any]:
    from zonekeep.sdk import Damaged

    return event_to_dict(Damaged("x", record.total, 0, roll=record))


# -- the shared vectors -------------------------------------------------------------------------


def test_the_vectors_file_is_up_to_date() -> None:
    # Regenerate with: python tests/dice_vectors.py
    assert json.loads(VECTORS.read_text()) == json.loads(json.dumps(vectors()))


def test_the_python_verifier_agrees_with_the_vectors() -> None:
    data = json.loads(VECTORS.read_text())
    for case in data["dice"]:
        mix = bytes.fromhex(case["mix"])
        assert die(case["seed"], mix, case["counter"], case["sides"]) == case["face"], case
    for case in data["commitments"]:
        assert commitment(case["seed"]) == case["commitment"]
    for case in data["mixes"]:
        mix = EMPTY_MIX
        for c in case["contributions"]:
            mix = next_mix(mix, c)
        assert mix.hex() == case["mix"]
    for case in data["logs"]:
        log = [(seq, event) for seq, event in case["log"]]
        if case["ok"]:
            report = verify_log(log)
            assert report.rolls == case["rolls"], case["name"]
            assert [[s, list(c)] for s, c in report.undone] == case["undone"], case["name"]
        else:
            with pytest.raises(VerifyFailure) as failed:
                verify_log(log)
            assert failed.value.counter == case["counter"], (case["name"], str(failed.value))


NODE_CHECK = r"""
const fs = require("fs");
const dice = require(process.argv[2]);
const data = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
(async () => {
  const out = { dice: [], commitments: [], mixes: [], logs: [] };
  for (const c of data.dice) out.dice.push(await dice.die(c.seed, dice.fromHex(c.mix), c.counter, c.sides));
  for (const c of data.commitments) out.commitments.push(await dice.commitment(c.seed));
  for (const c of data.mixes) {
    let mix = new Uint8Array(32);
    for (const x of c.contributions) mix = await dice.nextMix(mix, x);
    out.mixes.push(dice.hex(mix));
  }
  for (const c of data.logs) {
    try {
      const r = await dice.verifyLog(c.log);
      out.logs.push({ ok: true, rolls: r.rolls, undone: r.undone });
    } catch (e) {
      if (!(e instanceof dice.Failure)) throw e;
      out.logs.push({ ok: false, counter: e.counter, message: e.message });
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
"""


def test_the_javascript_verifier_agrees_with_the_vectors(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        missing_component(
            "node is not installed (the JavaScript verifier is checked with Node.js 18+)"
        )
    script = tmp_path / "check.js"
    script.write_text(NODE_CHECK)
    done = subprocess.run(
        [node, str(script), str(DICE_JS), str(VECTORS)],
        capture_output=True,
        text=True,
        timeout=helpers.deadline(60),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    data = json.loads(VECTORS.read_text())
    assert got["dice"] == [c["face"] for c in data["dice"]]
    assert got["commitments"] == [c["commitment"] for c in data["commitments"]]
    assert got["mixes"] == [c["mix"] for c in data["mixes"]]
    for case, result in zip(data["logs"], got["logs"], strict=True):
        assert result["ok"] == case["ok"], (case["name"], result)
        if case["ok"]:
            assert result["rolls"] == case["rolls"] and result["undone"] == case["undone"]
        else:
            assert result["counter"] == case["counter"], (case["name"], result)


def test_spec_md_shows_the_vectors_of_the_shared_file() -> None:
    from zonekeep.protocol._generate import DICE_VECTORS

    data = json.loads(VECTORS.read_text())
    assert [(c["seed"], c["counter"], c["sides"]) for c in data["dice"]] == [
        (seed, counter, sides) for seed, _, counter, sides in DICE_VECTORS
    ]
    spec = (ROOT / "protocol" / "SPEC.md").read_text()
    for case in data["dice"]:
        assert f"| {case['counter']} | {case['sides']} | {case['face']} |" in spec


# -- the verifier's reject paths: rejecting is its whole job ---------------------------------------


Edit = Callable[[dict[int, dict[str, Any]]], None]


def _edit(log: list[list[Any]], edit: Edit) -> list[tuple[int, dict[str, Any]]]:
    """``log`` with ``edit`` applied to its events (by seq), as ``verify_log`` reads it."""
    events = {seq: copy.deepcopy(event) for seq, event in log}
    edit(events)
    return sorted(events.items())


def _set(seq: int, **changes: Any) -> Edit:
    return lambda events: events[seq].update(changes)


def _roll(seq: int, **changes: Any) -> Edit:
    return lambda events: events[seq]["roll"].update(changes)


def _plain(seq: int) -> Edit:
    """Event ``seq`` becomes one without dice (a note): as if it were cut out."""
    return lambda events: events.__setitem__(seq, {"type": "note_added"})


def _both(first: Edit, second: Edit) -> Edit:
    def edit(events: dict[int, dict[str, Any]]) -> None:
        first(events)
        second(events)

    return edit


def _forge_seeded(events: dict[int, dict[str, Any]]) -> None:
    """A seeded log whose seed and commitment were both replaced: they agree, the dice
    under them do not."""
    events[2].update(seed="table-8", commitment=commitment("table-8"))


def _reveal_again(events: dict[int, dict[str, Any]]) -> None:
    events[4] = {"type": "dice_revealed", "seed": "table-7", "commitment": commitment("table-7")}


FAIR_REJECTS: list[tuple[str, Edit, str, int | None, int | None]] = [
    # A forged seed: another one revealed than the one committed to.
    (
        "forged seed",
        _set(9, seed="3e" * 32),
        "the revealed seed does not match its commitment",
        0,
        9,
    ),
    # A bad contribution: malformed, or not the one the dice were drawn under.
    ("malformed contribution", _set(3, value="lucky socks"), "a malformed contribution", None, 3),
    ("empty contribution", _set(3, value=""), "a malformed contribution", None, 3),
    (
        "other contribution",
        _set(3, value="lucky-sock"),
        r"recorded 15 on a d20; the construction gives \d+",
        0,
        4,
    ),
    # A rewind mismatch: the rolls it says it undid are not the ones after its seq.
    (
        "rewind claims fewer",
        _set(7, undone_rolls=[4]),
        r"says it undid rolls \[4\], but it undid \[4, 5\]",
        4,
        7,
    ),
    (
        "rewind claims others",
        _set(7, undone_rolls=[2, 3]),
        r"undid rolls \[2, 3\], but it undid \[4, 5\]",
        4,
        7,
    ),
    (
        "rewind to elsewhere",
        _set(7, to_seq=3),
        r"undid rolls \[4, 5\], but it undid \[0, 1, 2, 3, 4, 5\]",
        0,
        7,
    ),
    ("malformed rewind", _set(7, to_seq="5"), "a malformed rewound event", None, 7),
    # The dice themselves.
    ("tampered die", _roll(4, dice=[14], kept=[14]), "recorded 14 on a d20", 0, 4),
    ("a die drawn twice", _set(8, draws=[[3, 8, 4]]), r"used before \(a die drawn twice\)", 3, 8),
    ("a negative counter", _set(8, draws=[[-1, 8, 4]]), "used before", -1, 8),
    ("a face off the die", _set(8, draws=[[6, 8, 9]]), "9 cannot come up on a d8", 6, 8),
    ("a die of no sides", _set(8, draws=[[6, 0, 0]]), "0 cannot come up on a d0", 6, 8),
    ("draws without dice", _roll(6, draws=[[4, 6]]), "draws and dice do not pair up", 4, 6),
    ("a draw not a list", _set(8, draws=[[6]]), r"a draw is not a list of numbers: \[6\]", None, 8),
    (
        "a die not a number",
        _set(8, draws=[[6, 8, "4"]]),
        "a die is not a whole number: '4'",
        None,
        8,
    ),
    (
        "a die that is a bool",
        _set(8, draws=[[6, 8, True]]),
        "a die is not a whole number: True",
        None,
        8,
    ),
    # The order of the log.
    ("dice before a commitment", _plain(2), "dice were rolled before any commitment", 0, 4),
    ("a second seed before the reveal", _plain(9), "committed before this one was revealed", 0, 4),
    ("a roll cut out", _both(_plain(6), _plain(7)), "this roll is missing from the log", 4, None),
    (
        "a roll cut out, its rewind kept",
        _plain(6),
        r"undid rolls \[4, 5\], but it undid \[\]",
        None,
        7,
    ),
    ("a malformed commitment", _set(2, mode="loaded"), "a malformed dice_committed event", None, 2),
    (
        "a commitment not a string",
        _set(2, commitment=None),
        "a malformed dice_committed event",
        None,
        2,
    ),
    ("a reveal never made", _plain(14), r"never revealed \(the log ends at event 14", 7, 12),
]


@pytest.mark.parametrize(
    ("edit", "message", "counter", "seq"),
    [pytest.param(*case[1:], id=case[0]) for case in FAIR_REJECTS],
)
def test_the_verifier_rejects_a_forged_fair_log(
    edit: Edit, message: str, counter: int | None, seq: int | None
) -> None:
    """Each forgery of the fair log is refused with the first problem: its words, the
    roll it names and the event it is in."""
    assert verify_log(_edit(fair_log(), lambda events: None)).rolls == 8  # untouched: fine
    with pytest.raises(VerifyFailure) as failed:
        verify_log(_edit(fair_log(), edit))
    assert re.search(message, failed.value.message), failed.value.message
    assert (failed.value.counter, failed.value.seq) == (counter, seq)


@pytest.mark.parametrize(
    ("edit", "message", "counter", "seq"),
    [
        pytest.param(
            _set(2, seed="table-8"),
            "the seeded commitment is not the seed's",
            None,
            2,
            id="forged seed",
        ),
        pytest.param(
            _forge_seeded,
            r"recorded \d+ on a d20; the construction gives \d+",
            0,
            3,
            id="forged seed and commitment",
        ),
        pytest.param(
            _set(2, seed=None), "the seeded commitment is not the seed's", None, 2, id="no seed"
        ),
        pytest.param(
            _reveal_again,
            "revealed with no fair commitment open",
            None,
            4,
            id="a reveal of a seeded seed",
        ),
    ],
)
def test_the_verifier_rejects_a_forged_seeded_log(
    edit: Edit, message: str, counter: int | None, seq: int | None
) -> None:
    assert verify_log(_edit(seeded_log(), lambda events: None)).mode == "seeded"
    with pytest.raises(VerifyFailure) as failed:
        verify_log(_edit(seeded_log(), edit))
    assert re.search(message, failed.value.message), failed.value.message
    assert (failed.value.counter, failed.value.seq) == (counter, seq)


def test_a_verify_failure_names_the_roll_and_the_event() -> None:
    assert str(VerifyFailure("bad", 3, 7)) == "roll #3, event 7: bad"
    assert str(VerifyFailure("bad", None, 7)) == "event 7: bad"
    assert str(VerifyFailure("bad", None)) == "bad"
