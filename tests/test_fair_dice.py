"""The dice construction (SPEC.md, "Dice"): uniform faces (chi-square), the same inputs
give the same rolls, rejection sampling, the shared vectors checked by the Python and the
JavaScript verifiers alike, and the rolls of the rules carrying their counters."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import helpers
import pytest
from dice_vectors import VECTORS, vectors
from helpers import missing_component
from hypothesis import given, settings
from hypothesis import strategies as st

from zonekeep.sdk import (
    EMPTY_MIX,
    CountedEntropy,
    RandomEntropy,
    VerifyFailure,
    commitment,
    dice_in,
    die,
    event_to_dict,
    next_mix,
    roll,
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
