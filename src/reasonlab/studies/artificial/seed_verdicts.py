"""Verdict rules for the seed's ten claims (Chiang & Lee, arXiv 2012.11995, "Results" table of
the seed), on the per-seed score of each init: `Scores` = task -> init -> [seeds] (accuracy;
Spearman correlation for `similarity`), averaged over tasks as the seed's Avg. Unit-tested on
hand-made numbers (tests/unit/studies/artificial/test_seed_verdicts.py). Thresholds are fixed
before any run.

Every "hardly matters" / "about as good" claim is vacuous when nothing transfers: each names
the precondition under which it can fail (`requires`), so a scale too small for pretraining to
matter reads inconclusive, never reproduced.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from reasonlab.studies.artificial.seed import FOLLOWUP_GAIN, PAIR_TASKS, SCRATCH, SINGLE_TASKS
from reasonlab.studies.kit.base import Claim, Status, Verdict
from reasonlab.studies.kit.verdicts import (all_of, gain_verdict, no_gain_verdict, requires,
                                            standard_error)

Scores = dict[str, dict[str, np.ndarray]]

MIN_GAIN = 0.01
"""A difference in the average score that counts as better: one point (on the 0-1 scale of
accuracy and correlation), when also > 2 SE. The seed's gaps it names are 4-13 points."""
EQUAL_MARGIN = 0.03
"""'Hardly matters' / 'about as good': |difference| + 2 SE below three points. The seed's
equal pairs differ by one point (0.58 / 0.59, 0.65 / 0.66, 0.67 / 0.66) while its effects are
4.5 points and more."""


def avg(scores: Scores, init: str, tasks: Iterable[str] | None = None) -> np.ndarray:
    """Per seed, the init's score averaged over `tasks` (default: every task), as the seed's
    Avg column."""
    names = list(scores) if tasks is None else [t for t in tasks if t in scores]
    return np.mean([scores[t][init] for t in names], axis=0)


def group(scores: Scores, inits: Iterable[str]) -> np.ndarray:
    return np.mean([avg(scores, i) for i in inits], axis=0)


def transfers(scores: Scores, init: str) -> float:
    """The init's average gain over scratch (mean over seeds)."""
    return float(avg(scores, init).mean() - avg(scores, SCRATCH).mean())


def equal_verdict(claim: Claim, a: np.ndarray, b: np.ndarray, names: tuple[str, str],
                  margin: float = EQUAL_MARGIN) -> Verdict:
    """'a and b are about equal': reproduced when |mean(a) - mean(b)| + 2 SE < margin, not
    reproduced when the difference exceeds margin and 2 SE, else inconclusive."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d, se = float(a.mean() - b.mean()), standard_error(a, b)
    status: Status = ("reproduced" if abs(d) + 2 * se < margin else
                      "not reproduced" if abs(d) > margin and abs(d) > 2 * se else
                      "inconclusive")
    return Verdict(claim, status, f"average score: {names[0]} {a.mean():.3f}, {names[1]} "
                   f"{b.mean():.3f}; difference {d:+.3f} (SE {se:.3f}; 'equal' needs |d| + 2 SE "
                   f"< {margin}, 'different' |d| > {margin} and > 2 SE)")


def moved(v: Verdict, scores: Scores, inits: Iterable[str], what: str) -> Verdict:
    """An equality verdict counts only when the inits' pretraining moved the score by more
    than the equality margin: one of them differs from scratch by more than EQUAL_MARGIN and
    2 SE. 'Equal within three points' says nothing of two corpora that are both within three
    points of no pretraining (seed noise, or a one-point transfer, is no effect to compare)."""
    base = avg(scores, SCRATCH)
    gains = {i: (float(avg(scores, i).mean() - base.mean()), standard_error(avg(scores, i), base))
             for i in inits}
    ok = any(abs(g) > EQUAL_MARGIN and abs(g) > 2 * se for g, se in gains.values())
    return requires(v, ok, f"{what} moves the average by "
                    + ", ".join(f"{i} {g:+.3f} (SE {se:.3f})" for i, (g, se) in gains.items())
                    + f" over scratch (needs one beyond {EQUAL_MARGIN} and 2 SE): nothing to "
                    "compare")


def better(claim: Claim, scores: Scores, a: Iterable[str], b: Iterable[str]) -> Verdict:
    a, b = list(a), list(b)
    return gain_verdict(claim, group(scores, a), group(scores, b),
                        ("+".join(a), "+".join(b)), "average score", MIN_GAIN)


# -------------------------------------------------------------------- the ten claims


def random_beats_scratch(claim: Claim, s: Scores) -> Verdict:
    return better(claim, s, ["uniform"], [SCRATCH])


def distribution_random(claim: Claim, s: Scores) -> Verdict:
    return moved(equal_verdict(claim, avg(s, "unigram"), avg(s, "uniform"),
                               ("unigram", "uniform")), s, ["uniform", "unigram"],
                 "random-token pretraining")


def distribution_stack(claim: Claim, s: Scores) -> Verdict:
    return moved(equal_verdict(claim, avg(s, "nesting"), avg(s, "nesting-uniform"),
                               ("nesting", "nesting-uniform")), s,
                 ["nesting", "nesting-uniform"], "stack-grammar pretraining")


def structure_beats_random(claim: Claim, s: Scores) -> Verdict:
    return better(claim, s, ["nesting-uniform", "nesting"], ["uniform", "unigram"])


def vocabulary_size(claim: Claim, s: Scores) -> Verdict:
    return all_of(claim, {"5000 > 500": better(claim, s, ["nesting-5000"], ["nesting-500"]),
                          "500 > 50": better(claim, s, ["nesting-500"], ["nesting-50"])})


def substitution(claim: Claim, s: Scores) -> Verdict:
    """50-s above 50, and the 50-type corpus must lose against 5000 for anything to recover."""
    loss = float(avg(s, "nesting-5000").mean() - avg(s, "nesting-50").mean())
    return requires(better(claim, s, ["nesting-50s"], ["nesting-50"]), loss > MIN_GAIN,
                    f"nesting-50 loses {loss:+.3f} against nesting-5000 (needs > {MIN_GAIN}): "
                    "no small-vocabulary loss to recover")


def other_language(claim: Claim, s: Scores) -> Verdict:
    return moved(equal_verdict(claim, avg(s, "german"), avg(s, "nesting"),
                               ("german", "nesting")), s, ["german", "nesting"],
                 "the two corpora's pretraining")


def non_language(claim: Claim, s: Scores) -> Verdict:
    """Amino acids and JavaScript each no better than the random-token baselines (their mean);
    vacuous unless English pretraining transfers."""
    rand = group(s, ["uniform", "unigram"])
    v = all_of(claim, {c: no_gain_verdict(claim, avg(s, c), rand, (c, "uniform+unigram"),
                                          "average score", MIN_GAIN)
                       for c in ("amino", "javascript")})
    en = transfers(s, "english-fortunes")
    return requires(v, en > MIN_GAIN, f"English pretraining itself gains {en:+.3f} over scratch "
                    f"(needs > {MIN_GAIN}): nothing transfers at this scale")


def english_best(claim: Claim, s: Scores) -> Verdict:
    others = [i for i in next(iter(s.values()))  # the seed's rows only
              if i not in (SCRATCH, "english-fortunes") and i not in FOLLOWUP_GAIN]
    best = max(others, key=lambda i: float(avg(s, i).mean()))
    return better(claim, s, ["english-fortunes"], [best])


def sentence_pair(claim: Claim, s: Scores) -> Verdict:
    """The gain over scratch on the sentence-pair tasks exceeds that on the single-sentence
    ones, averaged over the corpora that help in the seed (English, the other language, the
    stack grammar); those must transfer at all."""
    helpers = ["english-fortunes", "german", "nesting"]

    def gain(tasks: tuple[str, ...]) -> np.ndarray:
        return np.mean([avg(s, i, tasks) - avg(s, SCRATCH, tasks).mean() for i in helpers],
                       axis=0)

    v = gain_verdict(claim, gain(PAIR_TASKS), gain(SINGLE_TASKS),
                     ("sentence-pair tasks", "single-sentence tasks"),
                     "gain over scratch of english-fortunes+german+nesting", MIN_GAIN)
    top = max(transfers(s, i) for i in helpers)
    return requires(v, top > MIN_GAIN, f"none of {', '.join(helpers)} gains over scratch on "
                    f"average (best {top:+.3f}; needs > {MIN_GAIN})")


NEEDS: dict[str, tuple[str, ...]] = {
    "random-beats-scratch": (SCRATCH, "uniform"),
    "distribution-random": (SCRATCH, "uniform", "unigram"),
    "distribution-stack": (SCRATCH, "nesting", "nesting-uniform"),
    "structure": ("nesting", "nesting-uniform", "uniform", "unigram"),
    "vocabulary-size": ("nesting-5000", "nesting-500", "nesting-50"),
    "substitution": ("nesting-5000", "nesting-50", "nesting-50s"),
    "other-language": (SCRATCH, "german", "nesting"),
    "non-language": (SCRATCH, "amino", "javascript", "uniform", "unigram", "english-fortunes"),
    "english-best": (SCRATCH, "english-fortunes"),
    "sentence-pair": (SCRATCH, "english-fortunes", "german", "nesting"),
}
"""The inits each rule reads: a scale that runs fewer rows (smoke) leaves the claim
inconclusive."""
RULES = {"random-beats-scratch": random_beats_scratch, "distribution-random": distribution_random,
         "distribution-stack": distribution_stack, "structure": structure_beats_random,
         "vocabulary-size": vocabulary_size, "substitution": substitution,
         "other-language": other_language, "non-language": non_language,
         "english-best": english_best, "sentence-pair": sentence_pair}


def judge(claim: Claim, s: Scores) -> Verdict:
    """The claim's rule, or inconclusive when a row it reads was not run at this scale."""
    missing = [i for i in NEEDS[claim.key] if i not in next(iter(s.values()))]
    if missing:
        return Verdict(claim, "inconclusive", f"rows not run at this scale: {', '.join(missing)}")
    return RULES[claim.key](claim, s)
