"""Verdict rules for the seed's ten claims (Chiang & Lee, arXiv 2012.11995, "Results" table of
the seed), on the per-unit score of each init: `Scores` = task -> init -> [units] (each task's
metric: paper_table_analysis.METRICS; GLUE's at paper scale), averaged over tasks as the seed's
Avg. A task is a sentence-pair or a single-sentence one as its column says (paper_table.COLUMN),
so the rules read whichever scale's tasks the scores hold.

A unit is the pipeline's seed (common.PIPELINE_UNIT): unit s of a corpus is its seed-s
pretraining run fine-tuned with seed s, so the units of one init are independent draws of the
whole pipeline and the units of two inits are independent of each other. Every comparison is
decided from a t interval over those units (kit/stats.py: Welch for two inits, its weighted
form `contrast` for a mean over several inits or a difference of differences), never from a
point estimate. A task average is taken within a unit first (the four tasks of one unit share
one pretraining run), then compared over units.

Every "hardly matters" / "about as good" / "no better" claim is vacuous when nothing transfers:
each names the precondition under which it can fail (`requires`), decided by an interval too, so
a scale too small for pretraining to matter reads inconclusive, never reproduced. In a
sequential run (`--until-decided`) a precondition confidently out of reach (every gain within
the margin; a gain confidently below MIN_GAIN) stops adding units for its claim (kit
sequential.futile).

Unit-tested on noisy numbers (tests/unit/studies/artificial/test_paper_table_verdicts.py) and driven
under each claim's null by the calibration (artificial/calibration.py). Thresholds are fixed
before any run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from reasonlab.report import pm
from reasonlab.studies.artificial._support.paper_table import COLUMN, ROWS, seed_avg
from reasonlab.studies.artificial.common import SCRATCH
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.calibration import noise
from reasonlab.studies.kit.stats import Estimate
from reasonlab.studies.kit.verdicts import all_of, decided, equal_verdict, requires

Scores = dict[str, dict[str, np.ndarray]]

MIN_GAIN = 0.01
"""A difference in the average score that counts as better: one point (on the 0-1 scale of
accuracy and correlation); the interval's lower bound must also clear zero. The seed's gaps it
names are 4-13 points."""
EQUAL_MARGIN = 0.03
"""'Hardly matters' / 'about as good': the difference's whole interval within +-3 points (two
one-sided tests). The seed's equal pairs differ by one point (0.58 / 0.59, 0.65 / 0.66, 0.67 /
0.66) while its effects are 4.5 points and more."""

FAMILY = "artificial"
AVERAGE_NOISE = "corpus-average"
"""The noise.toml entry of a unit's average score (the SD an equality reads its interval at,
at least)."""


def average_sd() -> float:
    """The per-unit SD of a corpus's average score our runs show (noise.toml `corpus-average`)."""
    return noise(FAMILY, AVERAGE_NOISE)


ENGLISH = "english-fortunes"
HELPERS = (ENGLISH, "german", "nesting")
"""The corpora whose gains the seed's sentence-pair claim locates: English, the other language
(Kannada; ours German) and the stack grammar (Artificial (Zipf)), each 0.76 on STS-B."""
SEED_INITS = tuple(i for i in ROWS.values() if i != SCRATCH)
"""The seed's twelve pretraining corpora (the follow-up's extra rows are not among them)."""
NON_ENGLISH = tuple(i for i in SEED_INITS if i != ENGLISH)
SEED_ROW = {init: row for row, init in ROWS.items()}


# -------------------------------------------------------------------- per-unit scores


def avg(scores: Scores, init: str, tasks: Iterable[str] | None = None) -> np.ndarray:
    """Per unit, the init's score averaged over `tasks` (default: every task), as the seed's
    Avg column."""
    names = list(scores) if tasks is None else [t for t in tasks if t in scores]
    return np.mean([scores[t][init] for t in names], axis=0)


def pair_tasks(scores: Scores) -> list[str]:
    """The sentence-pair tasks among the scores' (the seed's gains lie there)."""
    return [t for t in scores if COLUMN[t].pair]


def single_tasks(scores: Scores) -> list[str]:
    return [t for t in scores if not COLUMN[t].pair]


def seed_gain(a: Sequence[str], b: Sequence[str]) -> float | None:
    """The seed's own effect of the same comparison (mean Avg of a's rows minus b's): the
    effect the power is quoted at; None for an init the seed has no row for."""
    if not all(i in SEED_ROW for i in (*a, *b)):
        return None
    return (float(np.mean([seed_avg(SEED_ROW[i]) for i in a]))
            - float(np.mean([seed_avg(SEED_ROW[i]) for i in b])))


def inits_text(values: Mapping[str, np.ndarray]) -> str:
    """'nesting 0.533 ± 0.010 (n = 3), uniform ...': each init's units."""
    return ", ".join(f"{i} {pm(v)} (n = {len(v)})" for i, v in values.items())


def contrast(values: Mapping[str, np.ndarray], a: Sequence[str], b: Sequence[str],
             what: str, sd: float | None = None) -> Estimate:
    """mean over a's inits minus mean over b's, each init's units its own independent group
    (Welch-Satterthwaite over the groups). `sd`: a per-unit SD the interval is at least as
    wide as (`average_sd()`; kit stats.at_noise), for a rule whose null sits at a margin."""
    weights = {i: 1 / len(a) for i in a} | {i: -1 / len(b) for i in b}
    return stats.contrast(values, weights, what, sd)


def gated(v: Verdict, ok: bool, why: str, reachable: bool = True) -> Verdict:
    """`requires(v, ok, why, reachable)`, unless v already decides nothing for want of units:
    then it keeps that why (too few units is the first thing to fix, and a precondition read
    from as few units decides nothing either)."""
    if v.effect is not None and stats.too_few(v.effect) is not None:
        return v
    return requires(v, ok, why, reachable)


def short_of_gain(gain: Callable[[], Estimate]) -> bool:
    """A sequential run's futility stop (kit sequential.futile) for a "beats by MIN_GAIN"
    precondition: the gain, at least as wide as at the measured per-unit noise, confidently
    below MIN_GAIN. `gain` builds the estimate inside the stop's level."""
    return sequential.futile(lambda: stats.better_by(gain(), MIN_GAIN).status == "not reproduced")


def every(claim: Claim, parts: Mapping[str, Verdict]) -> Verdict:
    """`all_of`: reproduced only when every part is (an intersection-union test: each part at
    ALPHA keeps the whole at ALPHA), not reproduced when any part is not. It carries the effect
    of the first part with the joined status (callers put the binding part first)."""
    v = all_of(claim, parts)
    part = next((p for p in parts.values() if p.status == v.status), None)
    return replace(v, effect=part.effect if part is not None else None)


def beyond(est: Estimate, margin: float) -> bool:
    """The whole interval lies outside +-margin (and there are units enough to say so)."""
    return stats.too_few(est) is None and (est.lo > margin or est.hi < -margin)


def transfers(s: Scores, init: str) -> stats.Decision:
    """Does the init's pretraining gain over scratch on average: better_by(MIN_GAIN) on
    avg(init) - avg(scratch) over units."""
    est = stats.difference(avg(s, init), avg(s, SCRATCH), f"gain {init} - scratch")
    return stats.better_by(est, MIN_GAIN)


# -------------------------------------------------------------------- rule shapes


def better(claim: Claim, s: Scores, a: Sequence[str], b: Sequence[str]) -> Verdict:
    """a's inits transfer better than b's: the mean of a's averages minus the mean of b's,
    over units (`contrast`), reproduced when its lower bound clears 0 and it reaches MIN_GAIN
    (stats.better_by); the power is quoted at the seed's own gap."""
    a, b = list(a), list(b)
    values = {i: avg(s, i) for i in (*a, *b)}
    est = contrast(values, a, b, f"gain {'+'.join(a)} - {'+'.join(b)}")
    effect = seed_gain(a, b)
    return decided(claim, stats.better_by(est, MIN_GAIN, effect if effect and effect > MIN_GAIN
                                          else None),
                   f"average score: {inits_text(values)}")


def equal(claim: Claim, s: Scores, a: str, b: str) -> Verdict:
    """'a and b are about equal': two one-sided tests, the interval of avg(a) - avg(b) within
    +-EQUAL_MARGIN (kit equal_verdict), at least as wide as at the per-unit SD of a corpus's
    average our runs show (noise.toml `corpus-average`, measured at cpu scale; a paper-scale
    run that spreads more reads its own, wider, Welch interval): three units that happen to
    agree closely decide no equality (kit stats.at_noise)."""
    return equal_verdict(claim, avg(s, a), avg(s, b), (a, b), "average score", EQUAL_MARGIN,
                         noise=noise(FAMILY, AVERAGE_NOISE))


def moved(v: Verdict, s: Scores, inits: Iterable[str], what: str) -> Verdict:
    """An equality verdict counts only when the inits' pretraining moved the score by more
    than the equality margin: the interval of one init's avg - scratch's lies wholly beyond
    +-EQUAL_MARGIN. 'Equal within three points' says nothing of two corpora that are both
    within three points of no pretraining (seed noise, or a one-point transfer, is no effect to
    compare)."""
    base = avg(s, SCRATCH)
    gains = {i: stats.difference(avg(s, i), base, f"{i} - scratch") for i in inits}
    ok = any(beyond(e, EQUAL_MARGIN) for e in gains.values())
    # out of reach of more units when every gain lies confidently within the margin (a TOST
    # per init at the measured noise): the corpora do not move the score by that much
    within = sequential.futile(lambda: all(
        stats.equivalent(stats.difference(avg(s, i), base, noise=average_sd()),
                         EQUAL_MARGIN).status == "reproduced" for i in gains))
    return gated(v, ok, f"{what} moves the average over scratch by "
                 + ", ".join(f"{i} {e.text()}" for i, e in gains.items())
                 + f"; needs one interval wholly beyond +-{EQUAL_MARGIN}: nothing to compare",
                 reachable=not within)


# -------------------------------------------------------------------- the ten claims


def random_beats_scratch(claim: Claim, s: Scores) -> Verdict:
    """Uniform random tokens beat no pretraining by MIN_GAIN on average (the seed: +4.5)."""
    return better(claim, s, ["uniform"], [SCRATCH])


def distribution_random(claim: Claim, s: Scores) -> Verdict:
    """Zipf and uniform random tokens about equal (TOST within EQUAL_MARGIN), once one of them
    moves the average beyond the margin."""
    return moved(equal(claim, s, "unigram", "uniform"), s, ["uniform", "unigram"],
                 "random-token pretraining")


def distribution_stack(claim: Claim, s: Scores) -> Verdict:
    """Zipf and uniform pushes of the stack grammar about equal, once one moves the average."""
    return moved(equal(claim, s, "nesting", "nesting-uniform"), s,
                 ["nesting", "nesting-uniform"], "stack-grammar pretraining")


def structure_beats_random(claim: Claim, s: Scores) -> Verdict:
    """The stack grammar (mean of its two distributions) beats random tokens (mean of theirs)."""
    return better(claim, s, ["nesting-uniform", "nesting"], ["uniform", "unigram"])


def vocabulary_size(claim: Claim, s: Scores) -> Verdict:
    """5000 > 500 AND 500 > 50 types, each by MIN_GAIN (every step must hold)."""
    return every(claim, {"5000 > 500": better(claim, s, ["nesting-5000"], ["nesting-500"]),
                         "500 > 50": better(claim, s, ["nesting-500"], ["nesting-50"])})


def substitution(claim: Claim, s: Scores) -> Verdict:
    """50-s above 50 by MIN_GAIN; it counts only when the 50-type corpus loses against 5000 at
    all (nesting-5000 beats nesting-50, decided by interval): else there is no loss to recover."""
    big, small = avg(s, "nesting-5000"), avg(s, "nesting-50")
    loss = stats.better_by(stats.difference(big, small, "nesting-5000 - nesting-50"), MIN_GAIN)
    return gated(better(claim, s, ["nesting-50s"], ["nesting-50"]), loss.status == "reproduced",
                 f"nesting-50's loss, nesting-5000 - nesting-50 {loss.estimate.text()} (needs "
                 f"the lower bound > 0 and >= {MIN_GAIN}): no small-vocabulary loss to recover",
                 reachable=not short_of_gain(
                     lambda: stats.difference(big, small, noise=average_sd())))


def other_language(claim: Claim, s: Scores) -> Verdict:
    """German (the seed's Kannada) and the stack grammar about equal, once one moves the
    average."""
    return moved(equal(claim, s, "german", "nesting"), s, ["german", "nesting"],
                 "the two corpora's pretraining")


def english_pre(s: Scores) -> tuple[bool, str, bool]:
    """English pretraining transfers (beats scratch by MIN_GAIN, by interval), why not, and
    whether more units could still show it (`short_of_gain`)."""
    en = transfers(s, ENGLISH)
    far = short_of_gain(lambda: stats.difference(avg(s, ENGLISH), avg(s, SCRATCH),
                                                 noise=average_sd()))
    return en.status == "reproduced", (
        f"English pretraining against scratch: {en.estimate.text()} (needs the lower bound > 0 "
        f"and >= {MIN_GAIN}): nothing transfers at this scale"), not far


def non_language(claim: Claim, s: Scores) -> Verdict:
    """Amino acids and JavaScript EACH no better than the random-token baselines: per corpus,
    the upper bound of avg(c) - (avg(uniform) + avg(unigram)) / 2 at most MIN_GAIN (every
    corpus must pass). Vacuous unless English pretraining transfers (`english_pre`)."""
    parts = {}
    for c in ("amino", "javascript"):
        values = {i: avg(s, i) for i in (c, "uniform", "unigram")}
        # "no better than" sits at its margin: units all in one mode would collapse Welch's
        # interval onto it (kit stats.at_noise)
        est = contrast(values, [c], ["uniform", "unigram"], f"gain {c} - uniform+unigram",
                       average_sd())
        parts[c] = decided(claim, stats.at_most(est, MIN_GAIN, MIN_GAIN),
                           f"average score: {inits_text(values)}")
    return gated(every(claim, parts), *english_pre(s))


def english_best(claim: Claim, s: Scores) -> Verdict:
    """English beats EVERY other corpus of the seed's rows by MIN_GAIN (one better_by per
    corpus; all must pass). Reading it against the best of the others only would let the
    choice of that corpus -- a max over noisy means -- shape the test; asking for every one is
    an intersection-union test, at ALPHA whichever corpus is truly second. The effect shown is
    the comparison with the smallest lower bound (the binding one)."""
    others = [i for i in SEED_INITS if i != ENGLISH and i in s[next(iter(s))]]
    parts = {i: better(claim, s, [ENGLISH], [i]) for i in others}
    order = sorted(parts, key=lambda i: parts[i].effect.lo if parts[i].effect else -np.inf)
    return every(claim, {f"English vs {i}": parts[i] for i in order})


def sentence_pair(claim: Claim, s: Scores) -> Verdict:
    """The seed's claim in two halves, every part decided over units:

    1. The gains lie in the sentence-pair tasks: the gain over scratch on the pair tasks
       exceeds that on the single-sentence ones by MIN_GAIN, for the mean of the corpora that
       help in the seed (HELPERS). Per unit, d = pair average - single average (one pretraining
       run's); the contrast mean over HELPERS of d minus scratch's d (a difference of
       differences).
    2. On single-sentence tasks no non-English corpus helps: for EVERY non-English corpus of
       the seed's rows, its gain over scratch on the mean of the single-sentence tasks is at
       most EQUAL_MARGIN (upper bound, stats.at_most). "No help" is the family's "hardly
       matters" bound, not MIN_GAIN: the seed's own non-English rows gain up to one point on a
       single-sentence task (Rand. Baseline CoLA 0.14 against 0.13, Artificial (5000) SST-2
       0.84 against 0.83), which the claim counts as no help, so a one-point bound would fail
       the seed's own table.

    Reproduced when every part is. Precondition: the helpers gain on the pair tasks at all
    (their mean pair-task gain over scratch, better_by MIN_GAIN): with no gain there, where the
    gains lie is not a question, and (2) would pass because nothing transfers."""
    pairs, singles = pair_tasks(s), single_tasks(s)
    pair = {i: avg(s, i, pairs) for i in (*HELPERS, SCRATCH)}
    gain = stats.better_by(contrast(pair, HELPERS, [SCRATCH], "pair-task gain of "
                                    + "+".join(HELPERS)), MIN_GAIN)
    lie = {i: avg(s, i, pairs) - avg(s, i, singles) for i in (*HELPERS, SCRATCH)}
    parts = {"pair gain - single gain": decided(
        claim, stats.better_by(contrast(lie, HELPERS, [SCRATCH], "pair gain - single gain of "
                                        + "+".join(HELPERS)), MIN_GAIN),
        f"pair-task average - single-task average per unit: {inits_text(lie)}")}
    for c in (i for i in NON_ENGLISH if i in s[next(iter(s))]):
        single = {c: avg(s, c, singles), SCRATCH: avg(s, SCRATCH, singles)}
        parts[f"{c} on single-sentence tasks"] = decided(
            claim, stats.at_most(stats.difference(single[c], single[SCRATCH],
                                                  f"single-task gain {c} - scratch"),
                                 EQUAL_MARGIN, EQUAL_MARGIN),
            f"single-sentence average: {inits_text(single)}")
    return gated(every(claim, parts), gain.status == "reproduced",
                 f"{gain.estimate.what}: {gain.estimate.text()} (needs the lower bound > 0 and >= "
                 f"{MIN_GAIN}): no pair-task gain to locate",
                 reachable=not short_of_gain(
                     lambda: contrast(pair, HELPERS, [SCRATCH], "pair-task gain", average_sd())))


NEEDS: dict[str, tuple[str, ...]] = {
    "random-beats-scratch": (SCRATCH, "uniform"),
    "distribution-random": (SCRATCH, "uniform", "unigram"),
    "distribution-stack": (SCRATCH, "nesting", "nesting-uniform"),
    "structure": ("nesting", "nesting-uniform", "uniform", "unigram"),
    "vocabulary-size": ("nesting-5000", "nesting-500", "nesting-50"),
    "substitution": ("nesting-5000", "nesting-50", "nesting-50s"),
    "other-language": (SCRATCH, "german", "nesting"),
    "non-language": (SCRATCH, "amino", "javascript", "uniform", "unigram", ENGLISH),
    "english-best": SEED_INITS,
    "sentence-pair": (SCRATCH, *SEED_INITS),
}
"""The inits each rule reads (English best and the sentence-pair claim read every corpus of the
seed's rows): a scale that runs fewer rows leaves the claim inconclusive."""
RULES = {"random-beats-scratch": random_beats_scratch, "distribution-random": distribution_random,
         "distribution-stack": distribution_stack, "structure": structure_beats_random,
         "vocabulary-size": vocabulary_size, "substitution": substitution,
         "other-language": other_language, "non-language": non_language,
         "english-best": english_best, "sentence-pair": sentence_pair}


def judge(claim: Claim, s: Scores) -> Verdict:
    """The claim's rule, or inconclusive when a row it reads was not run at this scale."""
    missing = [i for i in NEEDS[claim.key] if i not in next(iter(s.values()))]
    if missing:
        why = f"rows not run at this scale: {', '.join(missing)}"
        return Verdict(claim, "inconclusive", why, None, why)
    return RULES[claim.key](claim, s)
