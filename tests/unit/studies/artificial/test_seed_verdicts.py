"""The seed table's verdict rules (studies/artificial/seed_verdicts.py) on hand-made scores: each
reads reproduced on the seed's own numbers, not reproduced when the effect is reversed, and
inconclusive -- never reproduced -- when nothing transfers (the 'hardly matters' claims would
otherwise pass vacuously)."""

from __future__ import annotations

import numpy as np
import pytest

from reasonlab.studies.artificial import seed_verdicts as sv
from reasonlab.studies.artificial.seed import ROWS, SEED_TABLE, TASKS, seed_avg
from reasonlab.studies.kit.core import Claim

C = Claim("k", "claim", "source")
RULES = sv.RULES


def scores(avg: dict[str, float], pair_extra: dict[str, float] | None = None):
    """task -> init -> three seeds 0.004 apart around the init's average; `pair_extra` moves
    the pair tasks up and the single ones down by that much (the average unchanged)."""
    pair_extra = pair_extra or {}
    return {t: {i: a + (1 if t in ("similarity", "definition") else -1) * pair_extra.get(i, 0)
                + np.asarray([-0.002, 0.0, 0.002]) for i, a in avg.items()} for t in TASKS}


SEED = {init: seed_avg(row) for row, init in ROWS.items()}
# the seed's sentence-pair split: STS-B / QNLI / MRPC gains over the single-sentence ones
PAIR = {init: 0.05 for init in ("english-fortunes", "german", "nesting")}


@pytest.mark.parametrize("key", list(RULES))
def test_the_seeds_own_numbers_reproduce_every_claim(key):
    v = RULES[key](C, scores(SEED, PAIR))
    assert v.status == "reproduced", v.evidence


@pytest.mark.parametrize("key", [k for k in RULES if k != "random-beats-scratch"])
def test_nothing_transfers_is_never_reproduced(key):
    flat = {i: SEED["uniform"] for i in SEED}  # every corpus at the random baseline's level
    flat["scratch"] = SEED["uniform"]
    assert RULES[key](C, scores(flat)).status != "reproduced"


def test_reversed_effects_are_not_reproduced():
    def with_(**kw):
        return scores({**SEED, **kw}, PAIR)

    assert sv.random_beats_scratch(C, with_(uniform=0.50)).status == "not reproduced"
    assert sv.distribution_random(C, with_(unigram=0.65)).status == "not reproduced"
    assert sv.distribution_stack(C, with_(nesting=0.60)).status == "not reproduced"
    assert sv.structure_beats_random(C, with_(**{"nesting": 0.55, "nesting-uniform": 0.55})
                                     ).status == "not reproduced"
    assert sv.vocabulary_size(C, with_(**{"nesting-500": 0.54})).status == "not reproduced"
    assert sv.substitution(C, with_(**{"nesting-50s": 0.53})).status == "not reproduced"
    assert sv.other_language(C, with_(german=0.72)).status == "not reproduced"
    assert sv.non_language(C, with_(javascript=0.66)).status == "not reproduced"
    assert sv.english_best(C, with_(german=0.75)).status == "not reproduced"
    assert sv.sentence_pair(C, scores(SEED, {i: -0.05 for i in PAIR})).status == \
        "not reproduced"


def test_the_seed_table_is_the_seeds():
    assert len(SEED_TABLE) == 13 and all(len(v) == 8 for v in SEED_TABLE.values())
    assert round(seed_avg("Rand. Baseline") - seed_avg("No Pre-train"), 3) == 0.045
    assert round(seed_avg("Pre-train En"), 2) == 0.72  # its printed Avg


def test_a_claim_whose_rows_were_not_run_is_inconclusive():
    few = scores({i: SEED[i] for i in ("scratch", "uniform", "english-fortunes")})
    assert sv.judge(Claim("random-beats-scratch", "", ""), few).status == "reproduced"
    v = sv.judge(Claim("vocabulary-size", "", ""), few)
    assert v.status == "inconclusive" and "nesting-5000" in v.evidence
    assert set(sv.NEEDS) == set(sv.RULES)


def test_seed_noise_is_not_a_transfer_that_makes_equality_testable():
    """Random tokens 1.5 points above scratch, within the seeds' spread: the distribution claim
    has nothing to compare, so it is inconclusive, not reproduced."""
    noisy = {t: {"scratch": np.asarray([0.50, 0.55, 0.60]),
                 "uniform": np.asarray([0.515, 0.565, 0.615]),
                 "unigram": np.asarray([0.515, 0.565, 0.615])} for t in TASKS}
    v = sv.distribution_random(C, noisy)
    assert v.status == "inconclusive" and "nothing to compare" in v.evidence


def test_a_transfer_smaller_than_the_equality_margin_does_not_make_equality_testable():
    """Our cpu run's case: the uniform-push grammar 1.3 points below scratch (beyond 2 SE), the
    Zipf one at scratch: 'equal within 3 points' would pass while neither moved 3 points."""
    small = {**{i: 0.53 for i in SEED}, "nesting-uniform": 0.517, "german": 0.517}
    for rule in (sv.distribution_stack, sv.other_language):
        v = rule(C, scores(small))
        assert v.status == "inconclusive" and "nothing to compare" in v.evidence
    # moved beyond the margin: the same equality is testable again
    big = {**small, "nesting-uniform": 0.57, "nesting": 0.565}
    assert sv.distribution_stack(C, scores(big)).status == "reproduced"
