"""The LEGO family's verdict rules (Zhang et al. 2022; docs/papers.md §1 LEGO), each tested on
hand-made numbers in tests/unit/studies/lego/. Thresholds are constants fixed before
any run; the generic rules they build on are in the kit (kit/verdicts.py, kit/curves.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import top_heads
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.lego.common import MIMIC, N_TRAIN_VARS, PASS, PRETRAINED, RANDOM
from reasonlab.studies.kit.curves import Curve, paired_losses
from reasonlab.studies.kit.verdicts import (all_of, at_least, at_most, gain_status, gain_verdict,
                                            requires, standard_error, threshold_verdict, verdict)


def span_means(finals: list[list[float]], span: slice) -> np.ndarray:
    """Per-seed mean accuracy over chain positions `span`: [seeds]."""
    return np.asarray(finals, dtype=float)[:, span].mean(1)


def needs_fit(verdict: Verdict, finals: dict[str, list[list[float]]], supervised: slice
              ) -> Verdict:
    """`verdict` compares how far the arms in `finals` extrapolate (or how they solve); when no
    arm has learned its supervised positions (mean accuracy over them and seeds < PASS), that
    comparison tests nothing -- the paper's ALBERT "extrapolates as soon as it fits #0-#5"
    (§3) -- so the verdict becomes inconclusive, keeping its numbers."""
    fits = {arm: float(span_means(f, supervised).mean()) for arm, f in finals.items()}
    where = f"#{supervised.start}-#{supervised.stop - 1}"
    return requires(verdict, max(fits.values()) >= PASS, f"no arm fits {where} (" + ", ".join(
        f"{a} {v:.3f}" for a, v in fits.items()) + f" < {PASS}), so the comparison tests nothing")


def span_gain(claim: Claim, finals: dict[str, list[list[float]]], better: str, worse: str,
              span: slice, fitted: slice) -> Verdict:
    """Does arm `better` beat arm `worse` in mean final accuracy over chain positions `span`?
    gain_verdict, then needs_fit: inconclusive unless one of the two fits positions `fitted`
    (the evidence lists the two in the order of `finals`)."""
    pair = {a: f for a, f in finals.items() if a in (better, worse)}
    return needs_fit(gain_verdict(claim, span_means(finals[better], span),
                                  span_means(finals[worse], span), (better, worse),
                                  f"mean accuracy #{span.start}-#{span.stop - 1}"),
                     pair, fitted)


def extrapolation_gain(claim: Claim, finals: dict[str, list[list[float]]], better: str,
                       worse: str, n_train: int) -> Verdict:
    """Does arm `better` beat arm `worse` on the 3 positions after the n_train supervised ones
    (#6-#8 for the paper's n_train = 6), given that one of them fits #0..#n_train-1?"""
    span = slice(n_train, min(n_train + 3, len(finals[better][0])))
    return span_gain(claim, {a: finals[a] for a in (better, worse)}, better, worse, span,
                     slice(0, n_train))


def first_pass_steps(curve: list[dict[str, Any]], threshold: float = PASS) -> list[float]:
    """Per chain position, the first evaluated step whose accuracy is >= threshold (inf: never)."""
    n = len(curve[0]["acc_by_depth"])
    out = [float("inf")] * n
    for m in curve:
        for k, a in enumerate(m["acc_by_depth"]):
            if a >= threshold and out[k] == float("inf"):
                out[k] = float(m["step"])
    return out


HEAD_MARGIN = 0.2
"""Best pretrained head minus best random-init head, per pattern, that counts as 'has heads'."""


CONVERGED = 0.9
"""Accuracy on the supervised positions that counts as converged."""


def converge_steps(curve: list[dict[str, Any]]) -> float:
    """First evaluated step with accuracy on the supervised positions >= CONVERGED."""
    return next((float(m["step"]) for m in curve if m["acc_supervised"] >= CONVERGED),
                float("inf"))


def converge_verdict(claim: Claim, fast: list[float], slow: list[float],
                     names: tuple[str, str]) -> Verdict:
    ev = (f"first step with supervised accuracy >= {CONVERGED}: {names[0]} {fast}, "
          f"{names[1]} {slow} (inf = never); needs {names[0]} earlier in every seed")
    if all(np.isinf(fast)):
        return Verdict(claim, "inconclusive" if all(np.isinf(slow)) else "not reproduced", ev)
    ok = all(f < s for f, s in zip(fast, slow, strict=True))
    return verdict(claim, ok, ev)


def heads_verdict(claim: Claim, scores: dict[str, dict[str, torch.Tensor]],
                  controls: dict[str, dict[str, torch.Tensor]]) -> Verdict:
    """Association: the best pretrained head by the variable-only score must beat the best
    random-init head AND its own positional controls (clause-permuted score, positional head)
    by HEAD_MARGIN. Manipulation: the best pretrained head must beat the best random-init head
    by HEAD_MARGIN."""
    parts, ok = [], True
    c = controls[PRETRAINED]
    (l, h, v), *_ = top = top_heads(c["variables"], 3)
    r = top_heads(controls[RANDOM]["variables"], 1)[0][2]
    control = max(float(c["variables, permuted"][l, h]), float(c["positional head"]))
    ok &= v - r >= HEAD_MARGIN and v - control >= HEAD_MARGIN
    parts.append("association (variable queries): pretrained top heads "
                 + ", ".join(f"L{a}H{b} {x:.2f}" for a, b, x in top)
                 + f" vs random-init best {r:.2f} and positional control {control:.2f} (L{l}H{h}"
                 f" on clause-permuted sentences {float(c['variables, permuted'][l, h]):.2f}, "
                 f"same-slot head {float(c['positional head']):.2f})")
    p = top_heads(scores[PRETRAINED]["manipulation"], 3)
    r = top_heads(scores[RANDOM]["manipulation"], 1)[0][2]
    ok &= p[0][2] - r >= HEAD_MARGIN
    parts.append("manipulation: pretrained top heads " + ", ".join(f"L{a}H{b} {x:.2f}"
                                                                 for a, b, x in p)
                 + f" vs random-init best {r:.2f}")
    ev = ("; ".join(parts) + f"; needs the best pretrained head >= {HEAD_MARGIN} above the "
          "best random-init head for both, and the association head also >= "
          f"{HEAD_MARGIN} above its positional control")
    return verdict(claim, ok, ev)


CLASSICAL_THRESHOLD = 0.95
"""Mean accuracy on the supervised positions that counts as classical generalization."""


def classical_verdict(claim: Claim, finals: dict[str, list[list[float]]]) -> Verdict:
    """Every seed of every arm at >= CLASSICAL_THRESHOLD mean accuracy on #0-#5."""
    per_seed = {arm: np.asarray(rows)[:, :N_TRAIN_VARS].mean(1) for arm, rows in finals.items()}
    ev = "; ".join(f"{arm} #0-#5 mean {s.mean():.3f} (worst seed {s.min():.3f})"
                   for arm, s in per_seed.items())
    return verdict(claim, all(s.min() >= CLASSICAL_THRESHOLD for s in per_seed.values()),
                   ev + f"; threshold {CLASSICAL_THRESHOLD} for every seed")


CLOSED = 0.5
"""Fraction of the pretrained-vs-random gap that mimicking must close ('most of the gap')."""


def closed_verdict(claim: Claim, finals: dict[str, list[list[float]]], span: slice,
                   what: str) -> Verdict:
    """Mimicking closes >= CLOSED of the random-to-pretrained gap, which must itself exist
    (gain_verdict of pretrained over random reproduced)."""
    gap = gain_verdict(claim, span_means(finals[PRETRAINED], span),
                       span_means(finals[RANDOM], span), (PRETRAINED, RANDOM), what)
    r, p, m = (float(span_means(finals[a], span).mean()) for a in (RANDOM, PRETRAINED, MIMIC))
    frac = (m - r) / (p - r) if p != r else float("nan")
    ev = (f"{what}: random {r:.3f}, pretrained {p:.3f}, mimicking {m:.3f}; gap closed "
          f"{frac:.2f} (needs >= {CLOSED}, and a pretrained advantage: {gap.status})")
    return requires(threshold_verdict(claim, frac, ev, at_least(CLOSED)),
                    gap.status == "reproduced", "no pretrained advantage to close")


EARLY_FRACTION = 0.8
"""(a) holds in a seed when #11 passes PASS before at least this fraction of #1-#10."""


def last_first_verdict(claim: Claim, curves: list[list[dict[str, Any]]]) -> Verdict:
    """Per seed, the fraction of #1-#10 that #11 passes PASS before, a tie (same evaluation)
    counting half; the claim holds in a seed when that fraction is >= EARLY_FRACTION."""
    per_seed, parts = [], []
    for c in curves:
        steps = first_pass_steps(c)
        last, middle = steps[-1], steps[1:-1]
        earlier = sum(last < s for s in middle)
        tied = sum(last == s for s in middle if np.isfinite(s))
        frac = (earlier + 0.5 * tied) / len(middle)
        per_seed.append((np.isfinite(last), frac))
        parts.append(f"#11 at {last:g}, #1-#10 at {[f'{s:g}' for s in middle]} (#11 earlier "
                     f"than {earlier}, tied with {tied})")
    ev = (f"first step at accuracy >= {PASS} per seed: " + "; ".join(parts)
          + f"; needs #11 before >= {EARLY_FRACTION:.0%} of #1-#10 (a tie counts half) in a "
          "majority of seeds")
    if not any(fin for fin, _ in per_seed):
        return Verdict(claim, "inconclusive", ev + " (#11 never passed)")
    ok = sum(fin and f >= EARLY_FRACTION for fin, f in per_seed) > len(per_seed) / 2
    return verdict(claim, ok, ev)


def last_first_every_arm(claim: Claim, curves: dict[str, list[list[dict[str, Any]]]]
                         ) -> Verdict:
    """`last_first_verdict` under each arm (arm -> each seed's curve), joined by `all_of`: the
    paper's claim covers BERT and ALBERT alike (§4.3)."""
    return all_of(claim, {a: last_first_verdict(claim, cs) for a, cs in curves.items()})


SLOWER = 2.0
"""The random root 'stays on the plateau far longer': its first position passes PASS at least
this many times later than under the one-token roots (or never within the run)."""


def step_text(x: float) -> str:
    return "never" if x == float("inf") else f"{x:.0f}"


def staircase_verdict(claim: Claim, passes: dict[str, list[list[float]]], steps: int
                      ) -> Verdict:
    """Reproduced when, in every seed of the one-token modes, #0 and #1 pass PASS in chain
    order (a staircase), and every random-root seed passes its first position at least SLOWER
    times later than the slowest one-token seed (or never). Not reproduced when a random-root
    seed passes some position no later than a one-token seed passes #0; else inconclusive."""
    one_token = {a: p for a, p in passes.items() if not a.startswith("random")}
    random = next(p for a, p in passes.items() if a.startswith("random"))
    stairs = all(p[0] < float("inf") and p[0] <= p[1] < float("inf")
                 for ps in one_token.values() for p in ps)
    slowest = max(p[0] for ps in one_token.values() for p in ps)
    fastest = min(p[0] for ps in one_token.values() for p in ps)
    random_first = [min(p) for p in random]
    ev = ("first step to " + f"{PASS} on #0 / #1 per seed: " + "; ".join(
        f"{a} " + ", ".join(f"{step_text(p[0])} / {step_text(p[1])}" for p in ps)
        for a, ps in one_token.items()) + "; random root, first position of any kind: "
        + ", ".join(step_text(x) for x in random_first) + f" (of {steps} steps; needs >= "
        f"{SLOWER}x the slowest one-token #0, {step_text(slowest)})")
    if stairs and all(x >= SLOWER * slowest for x in random_first):
        status = "reproduced"
    elif any(x <= fastest for x in random_first):
        status = "not reproduced"
    else:
        status = "inconclusive"
    return Verdict(claim, status, ev)  # type: ignore[arg-type]


PLATEAU_MARGIN = 0.5
"""BERT has left the unigram plateau when its final validation loss is at least this many nats
below the loss of the best predictor that ignores the context (lego.analysis.no_context_loss;
0.5 nats: 1.65x lower perplexity) in every seed.
Fixed before any run. Both end-of-training claims are about trained models (the paper's BERT
ends at 1.49); before BERT leaves the plateau they compare models that predict word
frequencies, so they are inconclusive (our reading of §5, Fig. 9)."""


def left_plateau(bert: list[Curve], plateau: float) -> tuple[bool, str]:
    """(has BERT left the unigram plateau, why not): every seed's final validation loss (the
    last (step, loss) point of each curve) at least PLATEAU_MARGIN below `plateau`."""
    finals = [c[-1][1] for c in bert]
    return (all(f <= plateau - PLATEAU_MARGIN for f in finals),
            f"BERT has not left the unigram plateau (final validation loss "
            + ", ".join(f"{f:.3f}" for f in finals) + f" vs {plateau:.3f} without context; "
            f"needs <= {plateau - PLATEAU_MARGIN:.3f} in every seed), so the end-of-training "
            "comparison is between models that still predict word frequencies")


# -- LEGO §5: BERT vs Hardcode vs Hybrid on validation-loss curves (kit/curves.py) ------------

EARLY = 0.15
"""'At the beginning': the first evaluation at or after this fraction of training."""
MIN_LOSS_GAP = 0.05
"""A validation-loss difference (nats) that counts, when also > 2 SE (paper: Hardcode 0.17
above BERT at the end)."""
LOSS_TOL = 0.02
"""'At least as low': Hybrid's loss at most this much above BERT's (paper: 0.02 below)."""


def _loss_evidence(a: str, b: str, la: np.ndarray, lb: np.ndarray, d: float, se: float) -> str:
    return (f"{a} {la.mean():.3f} ± {la.std():.3f}, {b} {lb.mean():.3f} ± {lb.std():.3f}; "
            f"{a} - {b} = {d:+.3f} (SE {se:.3f}")


def faster_early(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float], fast: str,
                 slow: str, step: float) -> Verdict:
    """Reproduced when `fast`'s validation loss early on is below `slow`'s by > MIN_LOSS_GAP
    and > 2 SE (gain_status) at the same step AND at the same FLOPs; not reproduced when either
    view is not."""
    out = {}
    for view, (lf, ls) in paired_losses(curves, fps, fast, slow, step).items():
        d, se = float(lf.mean() - ls.mean()), standard_error(lf, ls)
        out[view] = Verdict(claim, gain_status(-d, se, MIN_LOSS_GAP, len(lf)),
                            _loss_evidence(fast, slow, lf, ls, d, se)
                            + f"; needs < -{MIN_LOSS_GAP} and 2 SE)")
    return all_of(claim, out)


def worse_at_end(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float],
                 worse: str, better: str) -> Verdict:
    """Reproduced when `worse`'s final validation loss exceeds `better`'s by > MIN_LOSS_GAP and
    > 2 SE at the last step AND at the largest FLOPs budget both arms reached."""
    out = {}
    for view, (lw, lb) in paired_losses(curves, fps, worse, better, None).items():
        d, se = float(lw.mean() - lb.mean()), standard_error(lw, lb)
        out[view] = Verdict(claim, gain_status(d, se, MIN_LOSS_GAP, len(lw)),
                            _loss_evidence(worse, better, lw, lb, d, se)
                            + f"; needs > {MIN_LOSS_GAP} and 2 SE)")
    return all_of(claim, out)


def at_least_as_low(claim: Claim, curves: dict[str, list[Curve]], fps: dict[str, float],
                    arm: str, ref: str) -> Verdict:
    """d = final loss(arm) - final loss(ref): reproduced when d <= LOSS_TOL; not reproduced when
    d - 2 SE > LOSS_TOL (confidently higher); else inconclusive; at the last step AND at the
    largest FLOPs budget both reached."""
    out = {}
    for view, (la, lr) in paired_losses(curves, fps, arm, ref, None).items():
        d, se = float(la.mean() - lr.mean()), standard_error(la, lr)
        ev = (_loss_evidence(arm, ref, la, lr, d, se)
              + f"; needs <= {LOSS_TOL}, fails when > {LOSS_TOL} + 2 SE)")
        out[view] = threshold_verdict(claim, d, ev, at_most(LOSS_TOL),
                                      lambda x, se=se: x - 2 * se > LOSS_TOL)
    return all_of(claim, out)


def cheaper(claim: Claim, pairs: dict[str, tuple[float, float]]) -> Verdict:
    """Reproduced when the first of every (arm, reference) FLOPs pair is the smaller."""
    ev = "; ".join(f"{where}: {a / b:.3f} x BERT's FLOPs per step ({a:.3g} vs {b:.3g})"
                   for where, (a, b) in pairs.items())
    return verdict(claim, all(a < b for a, b in pairs.values()), ev + " (needs < 1)")
