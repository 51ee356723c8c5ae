"""The LEGO family's verdict rules (Zhang et al. 2022; docs/papers.md §1 LEGO).

Every seed-dependent comparison is decided from an interval over replication units (the
training seed; kit/stats.py), never from a point estimate, and needs at least 3 units per arm.
Where a run that never reaches a level leaves no number, only an order (it comes after every
run that did), the rule reads that order with an exact permutation test (`order_decision`)
instead of imputing a step count. A claim about one fixed pretrained checkpoint or a FLOP count
reads its value exactly. Thresholds are constants fixed before any run. Each rule is driven
under its null in lego/calibration.py (noise: lego/noise.toml) and unit-tested on noisy numbers
in tests/unit/studies/lego/.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from reasonlab.analysis.attention import top_heads
from reasonlab.report import pm
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.calibration import noise
from reasonlab.studies.kit.curves import Curve, paired_losses
from reasonlab.studies.kit.stats import Decision, Estimate
from reasonlab.studies.kit.verdicts import (all_of, at_least, below, decided,
                                            every_unit_verdict, exact_verdict, gain_verdict,
                                            requires)
from reasonlab.studies.lego.common import MIMIC, N_TRAIN_VARS, PASS, PRETRAINED, RANDOM


def span_means(finals: list[list[float]], span: slice) -> np.ndarray:
    """Per-seed mean accuracy over chain positions `span`: [seeds]."""
    return np.asarray(finals, dtype=float)[:, span].mean(1)


FIT_NOISE = "partly-fitted"
"""The per-seed SD (noise.toml) below which needs_fit's futility bound does not shrink."""


def needs_fit(verdict: Verdict, finals: dict[str, list[list[float]]], supervised: slice
              ) -> Verdict:
    """`verdict` compares how far the arms in `finals` extrapolate (or how they solve); when no
    arm has learned its supervised positions (mean accuracy over them and seeds < PASS), that
    comparison tests nothing -- the paper's ALBERT "extrapolates as soon as it fits #0-#5"
    (§3) -- so the verdict becomes inconclusive, keeping its numbers. A gate: it only ever
    turns a verdict inconclusive, so its point mean cannot make a false "reproduced".

    Out of reach, for a sequential run (kit/sequential.py, which then adds no seeds for the
    claim), when no arm would reach PASS even were every seed still to come (`to_come`) perfect
    on those positions, or when every arm's mean is confidently below PASS (the upper bound of
    its one-sided 97.5% interval, at least as wide as at the per-seed SD of a partly fitted
    arm, noise.toml `partly-fitted`): a futility stop, which can only turn a later "reproduced"
    into inconclusive; it stops a claim whose arm truly fits in at most 2.5% of looks."""
    per_seed = {arm: span_means(f, supervised) for arm, f in finals.items()}
    fits = {arm: float(m.mean()) for arm, m in per_seed.items()}
    more = sequential.to_come()
    best = max((float(m.sum()) + more) / (len(m) + more) for m in per_seed.values())
    with stats.nominal(stats.ALPHA):  # the futility bound, whatever the look's level
        below = all(stats.mean_of(m, noise=noise("lego", FIT_NOISE)).hi < PASS
                    for m in per_seed.values())
    where = f"#{supervised.start}-#{supervised.stop - 1}"
    return requires(verdict, max(fits.values()) >= PASS, f"no arm fits {where} (" + ", ".join(
        f"{a} {v:.3f}" for a, v in fits.items()) + f" < {PASS}), so the comparison tests nothing",
        reachable=best >= PASS and not below)


def span_gain(claim: Claim, finals: dict[str, list[list[float]]], better: str, worse: str,
              span: slice, fitted: slice) -> Verdict:
    """Does arm `better` beat arm `worse` in mean final accuracy over chain positions `span`?
    The per-seed span means compared by gain_verdict (the difference's lower bound above 0 and
    the difference >= MIN_ACCURACY_GAIN), then needs_fit: inconclusive unless one of the two
    fits positions `fitted` (the evidence lists the two in the order of `finals`)."""
    pair = {a: f for a, f in finals.items() if a in (better, worse)}
    return needs_fit(gain_verdict(claim, span_means(finals[better], span),
                                  span_means(finals[worse], span), (better, worse),
                                  f"mean accuracy #{span.start}-#{span.stop - 1}"),
                     pair, fitted)


def extrapolation_gain(claim: Claim, finals: dict[str, list[list[float]]], better: str,
                       worse: str, n_train: int) -> Verdict:
    """Does arm `better` beat arm `worse` on the 3 positions after the n_train supervised ones
    (#6-#8 for the paper's n_train = 6), given that one of them fits #0..#n_train-1?
    (span_gain)."""
    span = slice(n_train, min(n_train + 3, len(finals[better][0])))
    return span_gain(claim, {a: finals[a] for a in (better, worse)}, better, worse, span,
                     slice(0, n_train))


def first_pass_steps(curve: list[dict[str, Any]], threshold: float = PASS) -> list[float]:
    """Per chain position, the first evaluated step whose accuracy is >= threshold (inf: never
    within the run -- an order, not a number: it comes after every step that passed)."""
    n = len(curve[0]["acc_by_depth"])
    out = [math.inf] * n
    for m in curve:
        for k, a in enumerate(m["acc_by_depth"]):
            if a >= threshold and out[k] == math.inf:
                out[k] = float(m["step"])
    return out


def step_text(x: float) -> str:
    return "never" if x == math.inf else f"{x:.0f}"


def steps_text(xs: Sequence[float]) -> str:
    return ", ".join(step_text(x) for x in xs)


# -- orders: runs that may never reach a level -------------------------------------------------


def is_later(late: float, early: float, factor: float = 1.0, horizon: float = math.inf
             ) -> bool:
    """Is step `late` known to come at least `factor` times after step `early`, and strictly
    after it? A run that never reached the level within `horizon` steps (inf) comes after every
    run that did, and `factor` times after those that did by horizon / factor; two runs that
    never reached it have no order."""
    if not math.isfinite(early):
        return False
    if not math.isfinite(late):
        return horizon >= factor * early
    return late > early and late >= factor * early


def order_p(m: int, n: int) -> float:
    """Probability that m units all come after n others when the arms do not matter (the units
    exchangeable): 1 / C(m + n, m), the exact p of the Wilcoxon-Mann-Whitney test at U = 0."""
    return 1.0 / math.comb(m + n, m)


def order_units(m: int) -> int:
    """The fewest units per arm (both arms alike) whose complete order can reach the level
    (stats.alpha(): ALPHA, or a sequential look's)."""
    return next(k for k in range(stats.MIN_UNITS, stats.MAX_UNITS) if order_p(max(m, k), k)
                <= stats.alpha())


def order_decision(late: Sequence[float], early: Sequence[float], names: tuple[str, str],
                   factor: float = 1.0, horizon: float = math.inf) -> Decision:
    """Does every unit of `late` come at least `factor` times after every unit of `early`?
    Steps to a level, where a run that never gets there leaves an order and no number, decided
    by the exact permutation test of that order (the Wilcoxon-Mann-Whitney test at U = 0; no
    step count is imputed): under the null that the arm does not matter, the m `late` units all
    come after the n `early` ones with probability order_p(m, n) (1/84 at 3 + 6 units, 1/20 at
    3 + 3, 1/70 at 4 + 4), and a factor > 1 only makes that rarer. Reproduced when every pair
    is in order and order_p <= ALPHA; not reproduced when every pair is in the reverse order
    (factor 1) at the same p; else inconclusive. The estimate is the share of (late, early)
    pairs in order: an exact test, not an interval."""
    m, n = len(late), len(early)
    ordered = sum(is_later(a, b, factor, horizon) for a in late for b in early)
    reverse = sum(is_later(b, a) for a in late for b in early)
    share = ordered / (m * n) if m * n else math.nan
    p = order_p(m, n) if m and n else 1.0
    a = stats.alpha()  # ALPHA, or a sequential look's nominal level
    times = f"{factor:g}x " if factor != 1 else ""
    est = Estimate(share, math.nan, math.nan, (m, n), math.nan, math.inf, 0.0,
                   f"share of ({names[0]}, {names[1]}) seed pairs with {names[0]} {times}later")
    rule = (f"reproduced when every pair is in order and the exact permutation p of that "
            f"order, 1 / C(m + n, m) = {p:.3f}, is <= {a:.3g}")
    if min(m, n) < stats.MIN_UNITS:
        return Decision("inconclusive", est, rule, stats.too_few(
            Estimate(share, 0, 0, (m, n))) or "")
    if ordered == m * n and p <= a:
        return Decision("reproduced", est, rule)
    if reverse == m * n and p <= a:
        return Decision("not reproduced", est, rule)
    if p > a:
        return Decision("inconclusive", est, rule, f"underpowered (a complete order of {m} + {n} "
                        f"units has p = {p:.3f} > {a:.3g}; about {order_units(m)} units "
                        "per arm needed)")
    return Decision("inconclusive", est, rule, f"{ordered} of {m * n} seed pairs in order: "
                    "the seeds overlap")


# -- LEGO §4.2: pretrained vs random init (MiniLM) ---------------------------------------------

CONVERGED = 0.9
"""Accuracy on the supervised positions that counts as converged."""
SPEEDUP = 2.0
"""The speed-up (steps random / steps pretrained) a 'far smaller number of epochs' (§4.2) is
quoted at for the power of converge_verdict; not a threshold."""


def converge_steps(curve: list[dict[str, Any]]) -> float:
    """First evaluated step with accuracy on the supervised positions >= CONVERGED (inf: never
    within the run)."""
    return next((float(m["step"]) for m in curve if m["acc_supervised"] >= CONVERGED), math.inf)


def converge_verdict(claim: Claim, fast: Sequence[float], slow: Sequence[float],
                     names: tuple[str, str]) -> Verdict:
    """`fast` converges in fewer steps than `slow` (LEGO §4.2, Fig. 6: "within a far smaller
    number of epochs"), from each seed's first step with supervised accuracy >= CONVERGED.
    Precondition: some run converges (else there is no step to compare). When every run of
    both arms converges, the ratio of geometric-mean steps, slow / fast, decided by its interval
    (log_contrast; reproduced when the lower bound is >= 1, i.e. fast is faster). When some
    run never converges it has no step count, only an order (it comes after every run that
    converged): then `order_decision` of slow after fast (an exact test that needs 4 units per
    arm to decide)."""
    f, s = np.asarray(fast, float), np.asarray(slow, float)
    ev = (f"first step with supervised accuracy >= {CONVERGED}: {names[0]} {steps_text(f)}, "
          f"{names[1]} {steps_text(s)} (never: not within the run)")
    if np.isfinite(f).all() and np.isfinite(s).all():
        groups, weights = {"slow": np.log(s), "fast": np.log(f)}, {"slow": 1.0, "fast": -1.0}
        # decided on the log scale (lower bound > 0: strictly faster), shown as the ratio
        d = stats.better_by(stats.contrast(groups, weights), 0.0, math.log(SPEEDUP))
        est = stats.log_contrast({"slow": s, "fast": f}, weights,
                                 f"steps {names[1]} / {names[0]} (geometric means)")
        v = decided(claim, Decision(d.status, est, "reproduced when the lower bound of the "
                                    "ratio is > 1", d.why), ev)
    else:
        v = decided(claim, order_decision(s, f, (names[1], names[0])), ev + "; a run that "
                    "never converges is ordered after every run that did, with no step imputed")
    return requires(v, bool(np.isfinite(f).any() or np.isfinite(s).any()),
                    f"no run reaches {CONVERGED} on the supervised positions within the run")


HEAD_MARGIN = 0.2
"""Best pretrained head minus best random-init head, per pattern, that counts as 'has heads'
(and the association head's margin over its positional controls)."""


def heads_verdict(claim: Claim, scores: dict[str, Any], controls: dict[str, Any]) -> Verdict:
    """The pretrained checkpoint has association and manipulation heads before fine-tuning
    (LEGO §4.2.1, Fig. 7). `scores` / `controls`: PRETRAINED -> one checkpoint's head scores
    (a dict of [layers, heads] tensors); RANDOM -> one such dict per random-init seed.

    The pretrained model is one fixed checkpoint scored on fixed sentences: its heads are a
    deterministic quantity, read exactly. The random-init model varies with its seed, so each
    comparison with it is read over those seeds: for association (the variable-only score) and
    manipulation, the best pretrained head minus each seed's best random-init head must be >=
    HEAD_MARGIN in more than half the seeds, by the exact lower bound of that share (kit
    `every_unit_verdict`: robust when the random-init scores split into modes). The
    association head must also beat its own positional controls (its score on clause-permuted
    sentences, and a content-blind same-slot head) by HEAD_MARGIN: a property of the fixed
    checkpoint, exact. All three parts must hold (all_of)."""
    c = controls[PRETRAINED]
    (l, h, v), *_ = top = top_heads(c["variables"], 3)
    rand_assoc = np.array([top_heads(r["variables"], 1)[0][2] for r in controls[RANDOM]])
    permuted, positional = float(c["variables, permuted"][l, h]), float(c["positional head"])
    control = max(permuted, positional)
    p = top_heads(scores[PRETRAINED]["manipulation"], 3)
    rand_manip = np.array([top_heads(r["manipulation"], 1)[0][2] for r in scores[RANDOM]])

    def heads(hs: list[tuple[int, int, float]]) -> str:
        return ", ".join(f"L{a}H{b} {x:.2f}" for a, b, x in hs)

    parts = {
        "association over random init": every_unit_verdict(
            claim, v - rand_assoc, at_least(HEAD_MARGIN), f">= {HEAD_MARGIN}",
            "best pretrained - best random-init head",
            f"association (variable queries): pretrained top heads {heads(top)} (exact: one "
            f"checkpoint); random-init best head per seed {pm(rand_assoc, 2)}"),
        "association over its positional control": exact_verdict(
            claim, v - control,
            f"L{l}H{h} {v:.2f} vs its positional control {control:.2f} (clause-permuted "
            f"sentences {permuted:.2f}, same-slot head {positional:.2f}); needs >= "
            f"{HEAD_MARGIN} above", lambda d: d >= HEAD_MARGIN,
            what="association head - positional control"),
        "manipulation over random init": every_unit_verdict(
            claim, p[0][2] - rand_manip, at_least(HEAD_MARGIN), f">= {HEAD_MARGIN}",
            "best pretrained - best random-init head",
            f"manipulation: pretrained top heads {heads(p)} (exact: one checkpoint)"),
    }
    return all_of(claim, parts)


# -- LEGO §3: classical generalization ---------------------------------------------------------

CLASSICAL_THRESHOLD = 0.95
"""Mean accuracy on the supervised positions that counts as classical generalization."""


def classical_verdict(claim: Claim, finals: dict[str, list[list[float]]]) -> Verdict:
    """Every arm reaches classical generalization (LEGO §3: "Both BERT and ALBERT are able to
    achieve good classical generalization"): per arm, each seed passes when its mean accuracy
    on #0-#5 is >= CLASSICAL_THRESHOLD, and more than half the seeds must pass by the exact
    lower bound of that share (kit `every_unit_verdict`; a seed either fits or does not, where
    the mean's t interval collapses); reproduced when every arm is (all_of), not reproduced
    when any arm's share is confidently at most one half. The worst seed is reported."""
    parts = {}
    for arm, rows in finals.items():
        s = np.asarray(rows, float)[:, :N_TRAIN_VARS].mean(1)
        parts[arm] = every_unit_verdict(
            claim, s, at_least(CLASSICAL_THRESHOLD), f">= {CLASSICAL_THRESHOLD}",
            f"{arm} #0-#5 mean", f"{arm}: worst seed {s.min():.3f}")
    return all_of(claim, parts)


# -- LEGO §4.2.2: mimicking closes the gap -----------------------------------------------------

CLOSED = 0.5
"""Share of the pretrained-vs-random gap that mimicking must close ('most of the gap')."""
CLOSED_NOISE = "minilm-extrapolated"
"""The noise.toml entry of a seed's span mean in the mimicking study: the share's interval is
at least as wide as at that SD (kit stats.ratio's `noise`)."""


def closed_verdict(claim: Claim, finals: dict[str, list[list[float]]], span: slice,
                   what: str) -> Verdict:
    """Mimicking closes most of the random-to-pretrained gap (LEGO §4.2.2, Fig. 6). The gap
    must itself be reproduced first (gain_verdict of pretrained over random on the span:
    precondition); then the share closed, (M - R) / (P - R) of the per-seed span means, with
    its Fieller interval (kit `ratio`), reproduced when the lower bound is >= CLOSED. Not
    capped: mimicking may overshoot pretrained (> 1) or fall below random (< 0). The null is a
    share AT CLOSED: seeds that all land in one mode (fit-or-not) collapse Fieller's interval
    onto it, so the interval is read at least as wide as at the per-seed SD our runs show
    (CLOSED_NOISE; kit stats.at_noise says why)."""
    m = {a: span_means(finals[a], span) for a in (RANDOM, PRETRAINED, MIMIC)}
    gap = gain_verdict(claim, m[PRETRAINED], m[RANDOM], (PRETRAINED, RANDOM), what)
    est = stats.ratio(m, {MIMIC: 1.0, RANDOM: -1.0}, {PRETRAINED: 1.0, RANDOM: -1.0},
                      "share of the gap closed (M - R) / (P - R)",
                      noise=noise("lego", CLOSED_NOISE))
    ev = (f"{what}: random {pm(m[RANDOM])}, pretrained {pm(m[PRETRAINED])}, mimicking "
          f"{pm(m[MIMIC])}; the gap pretrained - random: {gap.status} ({gap.effect.text()})")
    return requires(decided(claim, stats.at_least(est, CLOSED), ev), gap.status == "reproduced",
                    f"the gap to close is not reproduced ({gap.status}: {gap.why or 'no gap'})")


# -- LEGO §4.3: the last variable first --------------------------------------------------------

EARLY_FRACTION = 0.8
"""(a) holds in a seed when #11 passes PASS strictly before at least this fraction of #1-#10."""


def before_enough(middle: int, fraction: float = EARLY_FRACTION) -> int:
    """How many of `middle` positions the last one must pass strictly before."""
    return math.ceil(fraction * middle - 1e-9)


def null_share(middle: int, fraction: float = EARLY_FRACTION) -> float:
    """The most often a seed can show 'last before >= fraction of the middle' when the last
    position is nothing special (its first pass exchangeable with the middle ones'): at most
    middle + 1 - q of the middle + 1 positions can each pass strictly before q others, so the
    share is at most (middle + 1 - q) / (middle + 1) (3/11 for #1-#10 and 0.8)."""
    q = before_enough(middle, fraction)
    return (middle + 1 - q) / (middle + 1)


def last_first_verdict(claim: Claim, curves: list[list[dict[str, Any]]]) -> Verdict:
    """Supervised on every position, the last variable is learned before the middle ones
    (LEGO §4.3, Fig. 3a: "#11 ... improves earlier than almost all other ones"). Per seed, #11
    first passes PASS strictly before at least EARLY_FRACTION of #1-#10 (a tie -- the same
    evaluation -- is not before; a position never passed comes after every one that did). A
    seed in which none of #1-#11 passes shows no order: reported, left out. Decided over the
    seeds that show one: the share holding, with its exact interval, must exceed what a last
    position that is nothing special would show (null_share: 3/11), kit `majority`; so 3 of 3
    seeds reproduce, 2 of 3 do not. Precondition: at least 3 seeds show an order (runs that
    learn nothing past #0 test nothing)."""
    per_seed, parts, silent = [], [], 0
    for c in curves:
        steps = first_pass_steps(c)
        last, middle = steps[-1], steps[1:-1]
        if not any(math.isfinite(s) for s in steps[1:]):
            silent += 1
            parts.append("none of #1-#11 passed")
            continue
        earlier = sum(is_later(s, last) for s in middle)
        tied = sum(s == last for s in middle if math.isfinite(s))
        per_seed.append(earlier >= before_enough(len(middle)))
        parts.append(f"#11 at {step_text(last)}, #1-#10 at {steps_text(middle)} (#11 before "
                     f"{earlier}, tied with {tied})")
    k, n = sum(per_seed), len(per_seed)
    middle = len(first_pass_steps(curves[0])) - 2
    share = null_share(middle)
    ev = (f"first step at accuracy >= {PASS} per seed: " + "; ".join(parts)
          + f"; #11 before >= {before_enough(middle)} of #1-#10 in {k} of {n} seeds"
          + (f" ({silent} seed(s) with no position of #1-#11 passed left out)" if silent else ""))
    v = decided(claim, stats.majority(stats.proportion(k, n, "share of seeds with #11 first"),
                                      share), ev)
    return requires(v, not silent or n >= stats.MIN_UNITS,
                    f"{silent} of {len(curves)} seeds learn none of #1-#11 within the run, so "
                    f"only {n} show an order")


def last_first_every_arm(claim: Claim, curves: dict[str, list[list[dict[str, Any]]]]
                         ) -> Verdict:
    """`last_first_verdict` under each arm (arm -> each seed's curve), joined by `all_of`: the
    paper's claim covers BERT and ALBERT alike (§4.3)."""
    return all_of(claim, {a: last_first_verdict(claim, cs) for a, cs in curves.items()})


# -- the root clause: a staircase or a plateau -------------------------------------------------

SLOWER = 2.0
"""The random root 'stays on the plateau far longer': its first position passes PASS at least
this many times later than the one-token roots' #0 (or never within the run)."""
IN_ORDER_NULL = 0.5
"""A seed learns its positions in strict chain order at most this often when the order is
not the chain's: 1/2 for two learned positions in no particular order, 1/k! for k, less when
positions pass together (a tie is no order)."""


def in_chain_order(passes: Sequence[float]) -> bool:
    """Did this seed learn the chain position by position? The positions it learned within the
    run (a first pass) are #0..#m-1 for some m >= 2 -- no position learned before one nearer
    the root -- each first passing strictly after the one before (two positions first passing
    at one evaluation show no order). Positions never learned are stairs not yet climbed."""
    learned = [k for k, x in enumerate(passes) if math.isfinite(x)]
    m = len(learned)
    return (m >= 2 and learned == list(range(m))
            and all(passes[k] < passes[k + 1] for k in range(m - 1)))


def staircase_verdict(claim: Claim, passes: dict[str, list[list[float]]], steps: int
                      ) -> Verdict:
    """With a one-token root the chain is learned position by position; with a random root
    training stays on the plateau far longer (LEGO §2's fixed root, §4.1's "resolve variables
    iteratively by the order of their depth in the chain"; our finding). `passes`: mode ->
    each seed's first-pass step per position; the modes not starting with "random" are the
    one-token ones. Two parts, both needed (all_of):

    - staircase: per one-token seed, `in_chain_order` over every position of the chain; the
      share of seeds in order (the one-token modes pooled), with its exact interval, above
      IN_ORDER_NULL (kit `majority`): all 6 seeds at 3 per mode.
    - plateau: every random-root seed passes its first position (any position) at least SLOWER
      times later than every one-token seed passes #0, or never within `steps`:
      `order_decision` (exact: p = 1/84 at 3 random + 6 one-token seeds)."""
    one_token = {a: p for a, p in passes.items() if not a.startswith("random")}
    random = next(p for a, p in passes.items() if a.startswith("random"))
    seeds = [p for ps in one_token.values() for p in ps]
    k = sum(in_chain_order(p) for p in seeds)
    stairs_ev = (f"first step to {PASS} per position (learned positions), per seed: " + "; ".join(
        f"{a} " + " | ".join(steps_text([x for x in p if math.isfinite(x)]) or "none"
                             for p in ps) for a, ps in one_token.items())
        + f"; {k} of {len(seeds)} one-token seeds learn their positions in strict chain order")
    stairs = decided(claim, stats.majority(stats.proportion(
        k, len(seeds), "share of one-token seeds in chain order"), IN_ORDER_NULL), stairs_ev)
    first = [min(p) for p in random]
    zero = [p[0] for p in seeds]
    plateau = decided(claim, order_decision(first, zero, ("random root", "one-token #0"),
                                            SLOWER, steps),
                      f"random root, first position of any kind per seed: {steps_text(first)}; "
                      f"one-token #0: {steps_text(zero)} (of {steps} steps; needs >= {SLOWER:g}x "
                      "later, or never)")
    return all_of(claim, {"staircase (one-token roots)": stairs, "plateau (random root)": plateau})


# -- LEGO §5: BERT vs Hardcode vs Hybrid on validation-loss curves (kit/curves.py) ------------

PLATEAU_MARGIN = 0.5
"""BERT has left the unigram plateau when its final validation loss is at least this many nats
below the loss of the best predictor that ignores the context (lego.analysis.no_context_loss;
0.5 nats: 1.65x lower perplexity) in every seed.
Fixed before any run. Both end-of-training claims are about trained models (the paper's BERT
ends at 1.49); before BERT leaves the plateau they compare models that predict word
frequencies, so they are inconclusive (our reading of §5, Fig. 9)."""


def left_plateau(bert: list[Curve], plateau: float) -> tuple[bool, str, bool]:
    """(has BERT left the unigram plateau, why not, whether seeds to come could change that):
    every seed's final validation loss (the last (step, loss) point of each curve) at least
    PLATEAU_MARGIN below `plateau`. A gate on every seed: it only ever turns a verdict
    inconclusive, and once one seed stays on the plateau no added seed can lift the gate (seed
    k is the same run at every look of a sequential run)."""
    finals = [c[-1][1] for c in bert]
    ok = all(f <= plateau - PLATEAU_MARGIN for f in finals)
    return (ok,
            "BERT has not left the unigram plateau (final validation loss "
            + ", ".join(f"{f:.3f}" for f in finals) + f" vs {plateau:.3f} without context; "
            f"needs <= {plateau - PLATEAU_MARGIN:.3f} in every seed), so the end-of-training "
            "comparison is between models that still predict word frequencies", ok)


EARLY = 0.15
"""'At the beginning': the first evaluation at or after this fraction of training."""
MIN_LOSS_GAP = 0.05
"""A validation-loss difference (nats) that counts (paper: Hardcode 0.17 above BERT at the
end); the interval's lower bound must also clear 0."""
LOSS_TOL = 0.02
"""'At least as low': Hybrid's loss at most this much above BERT's (paper: 0.02 below); the
interval's upper bound must be within it."""
LOSS_NOISE = "mlm-loss"
"""The noise.toml entry of a seed's validation loss: at_least_as_low reads its interval at
least as wide as at that SD (kit stats.at_noise)."""


def _losses(a: str, b: str, la: np.ndarray, lb: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                       str]:
    """The two arms' losses without the seeds whose curve does not reach the point (no loss
    there: left out and said, never imputed), and their evidence."""
    ka, kb = np.isfinite(la), np.isfinite(lb)
    out = "".join(f" ({x}: {int((~k).sum())} seed(s) without a loss there left out)"
                  for x, k in ((a, ka), (b, kb)) if not k.all())
    return la[ka], lb[kb], f"{a} {pm(la[ka])}, {b} {pm(lb[kb])}{out}"


def _loss_gain(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float], high: str,
              low: str, step: float | None, what: str) -> Verdict:
    """`low`'s validation loss is below `high`'s by MIN_LOSS_GAP, at `step` (None: the end)
    AND at the same training FLOPs (paired_losses): per view the difference high - low over
    seeds, kit `better_by(MIN_LOSS_GAP)`; both views must hold (all_of)."""
    return _both_views(claim, curves, fps, high, low, step, what,
                       lambda est: stats.better_by(est, MIN_LOSS_GAP))


def _both_views(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float], a: str,
                b: str, step: float | None, what: str,
                decide: Callable[[stats.Estimate], stats.Decision],
                sd: float | None = None) -> Verdict:
    """`decide` on the loss difference a - b over seeds, at `step` and at the same training
    FLOPs (paired_losses); the verdict holds only where both views agree (all_of). `sd`: the
    per-seed SD the interval is at least as wide as (stats.at_noise)."""
    out = {}
    for view, (la, lb) in paired_losses(curves, fps, a, b, step).items():
        la, lb, ev = _losses(a, b, la, lb)
        est = stats.difference(la, lb, f"{a} - {b} ({what})", sd)
        out[view] = decided(claim, decide(est), ev)
    return all_of(claim, out)


def faster_early(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float], fast: str,
                 slow: str, step: float) -> Verdict:
    """`fast` learns faster at the beginning (LEGO §5, Fig. 9): its validation loss at `step`
    (and at the FLOPs the costlier arm spends by then) below `slow`'s by MIN_LOSS_GAP, the
    difference's lower bound above 0, in both views (_loss_gain)."""
    return _loss_gain(claim, curves, fps, slow, fast, step, "validation loss early")


def worse_at_end(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float],
                 worse: str, better: str) -> Verdict:
    """`worse` falls short at the end (LEGO §5, Fig. 9: 1.66 vs 1.49): its final validation loss
    above `better`'s by MIN_LOSS_GAP at the last step AND at the largest FLOPs budget both arms
    reached, the difference's lower bound above 0 (_loss_gain)."""
    return _loss_gain(claim, curves, fps, worse, better, None, "final validation loss")


def at_least_as_low(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float],
                    arm: str, ref: str) -> Verdict:
    """Non-inferiority (LEGO §5, Fig. 9: Hybrid 1.47 vs BERT 1.49, "even (slightly) lower"):
    d = final loss(arm) - final loss(ref) over seeds, reproduced when the upper bound of its
    interval is <= LOSS_TOL, not reproduced when the lower bound is above it (kit `at_most`),
    at the last step AND at the largest FLOPs budget both reached (all_of). The null is a
    difference AT LOSS_TOL: the interval is at least as wide as at the per-seed loss SD our
    runs show (LOSS_NOISE), so seeds that happen to tie decide nothing (kit stats.at_noise)."""
    return _both_views(claim, curves, fps, arm, ref, None, "final validation loss",
                       lambda est: stats.at_most(est, LOSS_TOL, LOSS_TOL),
                       noise("lego", LOSS_NOISE))


def cheaper(claim: Claim, pairs: dict[str, tuple[float, float]],
            what: str = "FLOPs per step") -> Verdict:
    """The arm costs less than BERT in every entry of `pairs` (setting or quantity -> (arm,
    BERT)) (LEGO §5, Fig. 8): FLOPs and parameters are counted from the config, deterministic
    quantities, so the largest ratio arm / BERT is read exactly against 1."""
    ev = "; ".join(f"{where}: {a / b:.3f} x BERT's ({a:.3g} vs {b:.3g})"
                   for where, (a, b) in pairs.items())
    worst = max(a / b for a, b in pairs.values())
    return exact_verdict(claim, worst, ev + " (needs < 1)", below(1.0),
                         what=f"{what}, arm / BERT (largest)")


# -- the wall at #2: the field's plateau remedies (lego-plateau; our finding) -----------------


def plateau_verdict(claim: Claim, second: dict[str, list[float]], remedy: str, recipe: str
                    ) -> Verdict:
    """Does `remedy` shorten the #2 plateau? `second`: arm -> each seed's first step at which
    #2 passes PASS (inf: never within the run). Reproduced when every remedy seed passes before
    every recipe seed, a seed that never passes ranking after every one that did
    (`order_decision`: exact p = 1/56 at 5 recipe + 3 remedy seeds); not reproduced when every
    pair is in the reverse order; inconclusive otherwise, e.g. when no seed of either arm passes
    (no order: the remedy may act after the horizon)."""
    late, early = second[recipe], second[remedy]
    d = order_decision(late, early, (recipe, remedy))
    ev = f"#2's first step to {PASS}: {remedy} {steps_text(early)}; {recipe} {steps_text(late)}"
    if d.status == "inconclusive" and not any(map(math.isfinite, [*late, *early])):
        d = Decision("inconclusive", d.estimate, d.rule,
                     "no seed of either arm passes #2 within the run, so the arms show no order")
    return decided(claim, d, ev)


def more_seeds_decision(k_a: int, n_a: int, k_b: int, n_b: int, names: tuple[str, str]
                        ) -> Decision:
    """Does arm a pass in a larger share of its seeds than arm b? Fisher's exact test (one-sided,
    conditional on the passes in all: the units of both arms exchangeable under the null; a
    share of seeds has no interval worth reading at 3-5 units). Reproduced when p(a > b) <=
    ALPHA, not reproduced when p(b > a) <= ALPHA, else inconclusive, saying how many seeds per
    arm a complete split (all of a, none of b) would need."""
    from scipy.stats import fisher_exact

    table = [[k_a, n_a - k_a], [k_b, n_b - k_b]]
    p_more = float(fisher_exact(table, alternative="greater")[1])
    p_less = float(fisher_exact(table, alternative="less")[1])
    est = Estimate(k_a / n_a - k_b / n_b if n_a and n_b else math.nan, math.nan, math.nan,
                   (n_a, n_b), math.nan, math.inf, 0.0,
                   f"share of seeds passing, {names[0]} - {names[1]}")
    a = stats.alpha()  # ALPHA, or a sequential look's nominal level
    rule = f"Fisher's exact test, one-sided: reproduced when p <= {a:.3g} (here p = {p_more:.3f})"
    if min(n_a, n_b) < stats.MIN_UNITS:
        return Decision("inconclusive", est, rule, stats.too_few(
            Estimate(est.value, 0, 0, (n_a, n_b))) or "")
    if p_more <= a:
        return Decision("reproduced", est, rule)
    if p_less <= a:
        return Decision("not reproduced", est, rule)
    best = 1.0 / math.comb(n_a + n_b, n_a)  # all of a pass, none of b: the smallest p
    why = (f"{k_a} of {n_a} against {k_b} of {n_b}: p = {p_more:.3f} > {a:.3g}"
           + (f" (even all against none would give p = {best:.3f})" if best > a else ""))
    return Decision("inconclusive", est, rule, why)


def more_seeds_verdict(claim: Claim, second: dict[str, list[float]], remedy: str, recipe: str
                       ) -> Verdict:
    """Does `remedy` make #2 learned (a first pass within the run) in more seeds than `recipe`?
    (more_seeds_decision)."""
    a, b = second[remedy], second[recipe]
    k_a, k_b = sum(map(math.isfinite, a)), sum(map(math.isfinite, b))
    return decided(claim, more_seeds_decision(k_a, len(a), k_b, len(b), (remedy, recipe)),
                   f"seeds passing #2 within the run: {remedy} {k_a} of {len(a)} "
                   f"({steps_text(a)}); {recipe} {k_b} of {len(b)} ({steps_text(b)})")


def fit_gain_verdict(claim: Claim, finals: dict[str, list[list[float]]], better: str, worse: str,
                     n_train: int) -> Verdict:
    """Does arm `better` follow the chain better than `worse` on the supervised positions:
    per-seed mean final accuracy over #0..#n_train-1, its difference's lower bound above 0 and
    the difference >= MIN_ACCURACY_GAIN (gain_verdict). No fit gate: the claim is about how far
    the supervised chain is learned, which a model that does not fit still shows."""
    span = slice(0, n_train)
    return gain_verdict(claim, span_means(finals[better], span), span_means(finals[worse], span),
                        (better, worse), f"mean accuracy #0-#{n_train - 1}")
