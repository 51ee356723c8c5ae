"""How LEGO models solve: head scores of the MiniLM studies, linear probes, the one-hop
shortcut, and what the all-MiniLM-L6-v2 substitution can show (Zhang et al. 2022, §4;
docs/papers.md §1 LEGO).

The association head is the paper's (§4.2.1: a value moved between two occurrences of the same
VARIABLE, oblivious to position), so it is scored on variable queries only and must also beat
two positional controls: a content-blind "same slot of every clause" head, and the head itself
on sentences whose clauses were permuted (analysis/attention.py).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import (association_controls, attention_patterns, head_scores,
                                          plot_attention, reading_order, special_ids, top_heads)
from reasonlab.analysis.probes import plot_probe_maps, probe_model, split_diagonal
from reasonlab.model.config import ModelConfig
from reasonlab.model.pretrained import MINILM, checkpoint, pretrained_transformer
from reasonlab.model.transformer import Transformer
from reasonlab.report import mean_std, plot_curves, plot_first_pass, plot_positions, table
from reasonlab.runs import load_run_model
from reasonlab.train.init_stages import load_initial_model
from reasonlab.studies.kit.base import Report, Results, RunSpec
from reasonlab.studies.lego.common import (CKPT, N_TRAIN_VARS, PAPER_CKPT, PASS, PRETRAINED,
                                           RANDOM)
from reasonlab.studies.kit.curves import Curve, loss_at
from reasonlab.studies.lego.verdicts import (PLATEAU_MARGIN, first_pass_steps, left_plateau,
                                             step_text)
from reasonlab.tasks.base import build_task
from reasonlab.tasks.lego import CLAUSE_LEN
from reasonlab.train.loop import build_model


# -- accuracy per chain position: every LEGO run's `acc_by_depth` ---------------------------
def per_position(results: Results) -> dict[str, list[list[float]]]:
    """arm -> final accuracy per chain position, [seeds][positions]."""
    return {a: [r["final"]["acc_by_depth"] for r in rs] for a, rs in results.arms().items()}


def positions_section(rep: Report, finals: Mapping[str, list[list[float]]],
                      trained: int | None = None, std: bool = False,
                      heading: str = "Final test accuracy per chain position (mean over seeds)",
                      caption: str = "Final accuracy per chain position",
                      name: str = "accuracy_by_position.png") -> Report:
    """Final accuracy per chain position: a table arm x position (with a std row per arm when
    `std`) and the figure (grey band: the `trained` supervised positions)."""
    plot_positions(dict(finals), rep.out / name, "final test accuracy per chain position",
                   trained=trained)
    n = len(next(iter(finals.values()))[0])
    rows = []
    for arm, f in finals.items():
        m, s = mean_std(f)
        rows.append([arm] + [f"{x:.3f}" for x in m])
        if std and len(f) > 1:  # one seed has no spread: no row of zeros
            rows.append([f"{arm} (std)"] + [f"{x:.3f}" for x in s])
    return rep.table(heading, ["arm"] + [f"#{i}" for i in range(n)], rows).figure(name, caption)


def curves_figure(rep: Report, curves: Mapping[str, list[list[dict[str, Any]]]],
                  title: str = "test accuracy per chain position during training",
                  caption: str = "Accuracy per chain position during training",
                  name: str = "curves.png") -> Report:
    """Accuracy per chain position over training, one panel per arm (mean over seeds)."""
    plot_curves(dict(curves), rep.out / name, title)
    return rep.figure(name, caption)


def first_pass_section(rep: Report, passes: Mapping[str, list[list[float]]], threshold: float,
                       heading: str, steps: int | None = None, name: str = "first_pass.png",
                       log: bool = False) -> Report:
    """The first evaluated step at which each chain position reaches `threshold`, per run
    (inf: never): a table and, when the run length `steps` is given, the figure."""
    rows = [[f"{a} seed {i}"] + ["never" if x == float("inf") else f"{x:.0f}" for x in p]
            for a, ps in passes.items() for i, p in enumerate(ps)]
    rep.table(heading, ["run"] + [f"#{k}" for k in range(len(rows[0]) - 1)], rows)
    if steps is not None:
        plot_first_pass(dict(passes), steps, rep.out / name, threshold, log)
        rep.figure(name, f"Step at which each chain position first reaches {threshold} test "
                   "accuracy (top row: never)")
    return rep


def accuracy_report(title: str, results: Results, out: Path, n_train: int
                    ) -> tuple[Report, dict[str, list[list[float]]]]:
    """A report opening with the recipe, the final accuracy per chain position (table and
    figure) and the accuracy curves; returns it with the finals [arm -> seeds x positions]."""
    finals = per_position(results)
    rep = positions_section(Report(title, out).recipe(results), finals, trained=n_train)
    return curves_figure(rep, results.curves()), finals


# -- heads ---------------------------------------------------------------------------------
def lego_head_scores(pattern: torch.Tensor, batch: Any, task: Any
                     ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(every head score, the association controls) of attention `pattern` [layers, batch,
    heads, T, T] on LEGO sentences `batch` (analysis/attention.py)."""
    variables = [task.vocab.id(v) for v in task.var_names]
    scores = head_scores(pattern, batch.tokens, batch.pad_mask, special_ids(task.vocab.tokens),
                         variables=variables)
    controls = association_controls(pattern, batch.tokens, variables, CLAUSE_LEN,
                                    pad_mask=batch.pad_mask)
    return scores, controls


HeadScores = dict[str, torch.Tensor]
"""One model's head scores (or association controls): name -> [layers, heads]."""


def head_evidence(task_cfg: dict[str, Any], out: Path, n: int = 64, inits: int = 3,
                  ckpt: str = CKPT) -> tuple[dict[str, Any], dict[str, Any]]:
    """Head scores and association controls of the pretrained model (no fine-tuning) and of
    `inits` random-init models of the same shape (generator seeds 0..inits-1), on the same n
    sentences: (scores, controls), each PRETRAINED -> one HeadScores (one fixed checkpoint),
    RANDOM -> a list with one per random-init seed (the random arm varies with its seed, so
    lego.verdicts.heads_verdict reads it as a sample). Draws the pretrained model's best heads'
    maps (chain order, §4.2.1). `ckpt`: the pretrained checkpoint (MiniLM offline,
    bert-base-uncased at paper scale)."""
    task = build_task(task_cfg)
    batch = task.sample(np.random.default_rng(0), n)
    shape = ModelConfig.build({**checkpoint(ckpt).architecture, "vocab_size": len(task.vocab),
                               "n_classes": task.n_classes, "max_seq_len": task.seq_len})
    pretrained = pretrained_transformer(ckpt, task.vocab.tokens, task.n_classes,
                                        task.seq_len).eval()
    pattern = attention_patterns(pretrained, batch.tokens)
    scores: dict[str, Any] = {RANDOM: []}
    controls: dict[str, Any] = {RANDOM: []}
    scores[PRETRAINED], controls[PRETRAINED] = lego_head_scores(pattern, batch, task)
    for seed in range(inits):
        model = Transformer(shape, generator=torch.Generator().manual_seed(seed)).eval()
        s, c = lego_head_scores(attention_patterns(model, batch.tokens), batch, task)
        scores[RANDOM].append(s)
        controls[RANDOM].append(c)
    best = [top_heads(scores[PRETRAINED][k], 1)[0][:2]
            for k in ("association_variable", "manipulation")]
    order = reading_order(task.seq_len, batch.label_pos[0].tolist(), CLAUSE_LEN)
    shown = {k: scores[PRETRAINED][k] for k in ("association", "association_variable",
                                                "manipulation", "broadcast")}
    plot_attention(pattern[:, 0], [task.vocab.tokens[t] for t in batch.tokens[0].tolist()],
                   out / "pretrained_heads.png", heads=best, order=order, scores=shown,
                   title="pretrained, no fine-tuning: best association (variable queries, "
                         "left) and\nmanipulation (right) head; clauses in chain order")
    return scores, controls


def association_table(controls: dict[str, Any], k: int = 3) -> str:
    """Markdown: the pretrained model's top heads by the variable-only association score, and
    each random-init seed's best, beside the any-token score and the positional controls."""
    models = [(PRETRAINED, controls[PRETRAINED], k)] + [
        (f"{RANDOM} (seed {i})", c, 1) for i, c in enumerate(controls[RANDOM])]
    rows = []
    for arm, c, top in models:
        for l, h, v in top_heads(c["variables"], top):
            rows.append([arm, f"L{l}H{h}", f"{c['any token'][l, h]:.2f}", f"{v:.2f}",
                         f"{c['variables, permuted'][l, h]:.2f}"])
        rows.append([arm, "positional head (same slot mod 5)",
                     f"{float(c['positional head, any token']):.2f}",
                     f"{float(c['positional head']):.2f}", "-"])
    return ("## Association heads and their positional controls (§4.2.1)\n\n"
            + table(["model", "head", "any token", "variables", "variables, clauses permuted"],
                    rows)
            + "\n\n'any token': mass on other occurrences of the query's token (every query "
            "whose token repeats); 'variables': the same over variable queries only, the "
            "paper's association head; 'clauses permuted': that head's variable score on the "
            "same sentences with their clauses shuffled (what its positional habits earn); the "
            "positional head attends to the same slot of every other clause, content-blind.")


def substitution_note(spec: RunSpec) -> str:
    """What fine-tuning all-MiniLM-L6-v2 instead of BERT-base can and cannot show; the paper's
    own BERT-base (paper scale) says so instead, and a user's other checkpoint says which."""
    ckpt = spec.config.init_checkpoint or CKPT
    if ckpt == PAPER_CKPT:
        return ("## The pretrained model\n\nbert-base-uncased, the paper's own (LEGO §4.2), "
                "from the local Hugging Face cache or the folder given with backbone=.")
    if ckpt != CKPT:
        return (f"## The pretrained model\n\n{ckpt} (given with backbone=), standing in for "
                "the paper's bert-base-uncased.")
    n_layers = MINILM.architecture["n_layers"]
    n_train = spec.config.task.n_train_vars  # type: ignore[attr-defined]
    n = spec.config.task.n_clauses  # type: ignore[attr-defined]

    def span(lo: int, hi: int) -> str:
        return f"#{lo}" if lo == hi else f"#{lo}-#{hi}"

    cut = max(n_train, min(n, n_layers))  # first unsupervised depth out of a loop's reach
    many = "positions {} are" if cut - n_train > 1 else "position {} is"
    within = (f"the unsupervised {many.format(span(n_train, cut - 1))} within that reach"
              if cut > n_train else "no unsupervised position is within that reach")
    beyond = f", {span(cut, n - 1)} beyond it" if n > cut else ""
    return (
        "## What the all-MiniLM-L6-v2 substitution can and cannot show\n\n"
        "No BERT-base weights reach us offline, so the pretrained model is all-MiniLM-L6-v2: a "
        "BERT-family encoder (post-LN, the same uncased WordPiece tokens) but 6 layers x 384, "
        "distilled and then trained as a sentence-embedding model, not BERT-base's 12 x 768 "
        "masked-language-model checkpoint. It can show whether pretrained BERT-family weights "
        "carry association and manipulation heads, and whether they make LEGO faster to fit "
        "and better extrapolated than random init of the same shape. It cannot stand for the "
        "paper's BERT-base numbers: with 6 layers a one-layer-per-hop loop resolves chain "
        f"depth d only when d + 1 <= {n_layers}, so it has no room past #{n_layers - 1} (here "
        f"{within}{beyond}); and its sentence-embedding "
        "training may have reshaped the heads that BERT's pretraining produced.")


def mimicked_heads(spec: RunSpec, result: dict[str, Any] | None = None) -> str:
    """Head scores of the mimicking init before fine-tuning (the run's step-0 model, as its
    training kept it, on the run's device; rebuilt, same seed and weights, for runs trained
    before it was kept), per layer, for the two mimicked heads: did mimicking take? The
    association head
    is scored on any repeated token (what it was trained to mimic) and on variable queries
    only (the paper's association head), beside the positional controls; the manipulation head
    without and with its own position (a perfect mimic of [1, 2, 4, 2, 1] scores 0.6 / 1.0)."""
    kept = None if result is None else load_initial_model(Path(result["dir"]), device="run")
    model = build_model(spec.config) if kept is None else kept[1]
    task = build_task(spec.config.task)
    batch = task.sample(np.random.default_rng(0), min(64, spec.config.n_test))
    with torch.no_grad():
        s, c = lego_head_scores(attention_patterns(model, batch.tokens, batch.pad_mask), batch,
                                task)
    rows = [[str(l), f"{s['manipulation'][l, 0]:.2f}", f"{s['manipulation_self'][l, 0]:.2f}",
             f"{s['association'][l, 1]:.2f}", f"{s['association_variable'][l, 1]:.2f}",
             f"{c['variables, permuted'][l, 1]:.2f}",
             f"{s['manipulation'][l, 2:].mean():.2f}", f"{s['association'][l, 2:].mean():.2f}"]
            for l in range(s["association"].shape[0])]
    return ("## Mimicking init before fine-tuning: head scores per layer\n\n"
            + table(["layer", "head 0 manipulation", "head 0 manipulation (self incl.)",
                     "head 1 association (any token)", "head 1 association (variables)",
                     "head 1 (variables, clauses permuted)", "other heads manipulation (mean)",
                     "other heads association (mean)"], rows)
            + "\n\nPositional control: a content-blind head attending to the same slot of every "
            f"clause scores {float(c['positional head, any token']):.2f} on any token and "
            f"{float(c['positional head']):.2f} on variables.")


def chain_ops(task: Any, batch: Any) -> np.ndarray:
    """The group element (index into task.op_names) of the op of chain variable #k's clause,
    per sentence [n, chain] (the op sits two tokens after the variable: `var = op arg ,`)."""
    elem = {int(t): g for g, t in enumerate(task._op_ids)}  # op token id -> element index
    return np.vectorize(elem.__getitem__)(batch.tokens.gather(1, batch.label_pos + 2).numpy())


def one_hop_rule(task: Any, batch: Any) -> np.ndarray:
    """The ONE-HOP shortcut's answer per chain position [n, chain]: value(#k) = g_k . value(#0)
    for k >= 1, one's own op applied to the root's value, skipping the ops in between. It
    needs no variable lookup (the root clause is the one whose argument is a point) and is
    right on #0 and #1 only."""
    ops = chain_ops(task, batch)
    rule = task.action.act[ops, batch.labels[:, :1].numpy()]
    rule[:, 0] = batch.labels[:, 0].numpy()  # the root clause itself is computed correctly
    return rule


def one_hop_agreement(run_dir: Path, n: int = 500, seed: int = 12345) -> list[float]:
    """Per chain position, the fraction of n fresh sentences on which a trained model's answer
    equals `one_hop_rule`; 1.0 on every position says the model computes that shortcut."""
    config, model = load_run_model(run_dir, device="run")  # where the run trained
    task = build_task(config.task)
    # full-length sentences, as the test set: a curriculum run's shorter training chains
    # have no clause at the later positions
    b = task.sample_full(np.random.default_rng(seed), n)
    dev = next(model.parameters()).device  # the sentences go where the model is
    with torch.no_grad():
        pred = model(b.tokens.to(dev), b.label_pos.to(dev),
                     None if b.pad_mask is None else b.pad_mask.to(dev)
                     ).argmax(-1).cpu().numpy()  # [n, chain], one copy back
    return (pred == one_hop_rule(task, b)).mean(0).tolist()


def pass_order_section(rep: Report, results: Results, arms: tuple[str, ...], heading: str,
                       caption: str, name: str, label: str
                       ) -> dict[str, list[list[dict[str, Any]]]]:
    """The arms' accuracy per chain position during training (one figure) and the first step
    each position reaches PASS per seed, titled with `label` and the evaluation period that
    resolves it; returns arm -> each seed's curve."""
    curves = results.curves(arms)
    curves_figure(rep, curves, heading, caption, name)
    every = next(s.config.eval_every for s, _ in results if s.arm == arms[0])
    first_pass_section(rep, {a: [first_pass_steps(c) for c in cs] for a, cs in curves.items()},
                       PASS, f"First step at accuracy >= {PASS}, {label} (evaluated every {every} "
                       "steps)")
    return curves


def one_hop_section(rep: Report, results: Results, label: str = "run") -> Report:
    """Every run's agreement with the one-hop rule per chain position, as a table, and what
    the table says: a run computes the shortcut only if it agrees on every position."""
    n_fresh = results.sample_size(500)
    agree = {f"{s.arm} seed {s.seed}": one_hop_agreement(Path(r["dir"]), n_fresh)
             for s, r in results}
    rows = [[run] + [f"{x:.2f}" for x in a] for run, a in agree.items()]
    n = len(rows[0]) - 1
    shortcut = [run for run, a in agree.items() if min(a) >= 0.995]  # 1.00 as printed
    finding = (f"Our finding: {', '.join(shortcut)} agree(s) on every position (1.00): the "
               "model computes that shortcut instead of following the chain." if shortcut else
               "Our finding: no run agrees on every position, so none computes that shortcut "
               "(it would read 1.00 everywhere); agreement per position ranges from "
               f"{min(min(a) for a in agree.values()):.2f} to "
               f"{max(max(a) for a in agree.values()):.2f}.")
    return rep.add("Agreement with the one-hop rule", f"Fraction of {n_fresh:,} fresh test "
                   "sentences on which the model's answer equals value(#k) = g_k . value(#0), "
                   "its own op applied to the root's value, skipping the ops in between (right "
                   f"on #0 and #1 only). {finding}\n\n" + table([label] + [f"#{k}" for k in range(n)],
                                                       rows))


SPLIT_BY = (1, 2)
"""Chain variables whose ops split the test accuracy in `op_split` (the clause reading the
root's variable, #1, and the next one, #2): where op1 is the identity the one-hop rule is the
truth at #2, so the split tells a one-hop shortcut, a shortcut through #1's clause and a real
lookup apart (our finding)."""


def op_split(model: Any, task: Any, positions: tuple[int, ...], by: tuple[int, ...] = SPLIT_BY,
             n: int = 4000, seed: int = 12345) -> tuple[list[str], list[list[float]]]:
    """Test accuracy of a trained model at chain `positions`, split by the ops of chain
    variables `by`: (column names "op1 = +, op2 = -", ..., accuracy [position][column]) on n
    fresh sentences; NaN where a combination never occurs."""
    # full-length sentences, as the test set: a curriculum run's shorter training chains
    # have no clause at the later positions
    b = task.sample_full(np.random.default_rng(seed), n)
    dev = next(model.parameters()).device  # the sentences go where the model is
    with torch.no_grad():
        pred = model(b.tokens.to(dev), b.label_pos.to(dev),
                     None if b.pad_mask is None else b.pad_mask.to(dev)).argmax(-1).cpu()
    right = (pred == b.labels).numpy()
    ops = chain_ops(task, b)[:, list(by)]  # [n, len(by)]
    combos = list(itertools.product(range(len(task.op_names)), repeat=len(by)))
    names = [", ".join(f"op{k} = {task.op_names[g]}" for k, g in zip(by, c, strict=True))
             for c in combos]
    acc = [[float(right[(ops == c).all(1), k].mean()) if (ops == c).all(1).any()
            else float("nan") for c in combos] for k in positions]
    return names, acc


def op_split_section(rep: Report, results: Results, positions: tuple[int, ...] = (1, 2, 3)
                     ) -> Report:
    """What a partially learned position computes: every run's accuracy at `positions` split
    by the ops of #1 and #2 (op_split), beside the position's overall accuracy."""
    rows, names = [], []
    n_fresh = results.sample_size(4000)
    for s, r in results:
        config, model = load_run_model(Path(r["dir"]), device="run")
        names, acc = op_split(model, build_task(config.task), positions, n=n_fresh)
        final = r["final"]["acc_by_depth"]
        rows += [[f"{s.arm} seed {s.seed}", f"#{k}", f"{final[k]:.2f}"]
                 + [f"{x:.3f}" for x in row] for k, row in zip(positions, acc, strict=True)]
    return rep.table(
        "What a partially learned position computes", ["run", "position", "all"] + names, rows,
        before="Test accuracy at each chain position split by the ops of chain variables #1 and "
        f"#2 (op_k: the op of #k's clause; {n_fresh:,} fresh sentences, the final checkpoint). "
        "The truth at #2 is op2 op1 value(#0), at #3 op3 op2 op1 value(#0). Where op1 is the "
        "identity the one-hop rule (op_k value(#0)) is right at #2: 1.0 there and chance "
        "elsewhere says the model computes the one-hop shortcut; answers flipped by op1 at #3 "
        "as well as at #2 say it takes the op of the clause reading the root's variable (a "
        "second shortcut through the root), not a lookup of #k's parent; uniformly high "
        "accuracy is a lookup.")


def wall_per_1000(run_dir: Path) -> float:
    """Wall-clock seconds per 1,000 optimiser steps of a finished run (run.json's wall_s, summed
    over resumptions, evaluations included); NaN when not recorded."""
    rec = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").exists() else {}
    steps = rec.get("step") or 0
    return 1000 * rec["wall_s"] / steps if rec.get("wall_s") and steps else float("nan")


def lever_section(rep: Report, results: Results, arms: list[str], threshold: float) -> Report:
    """The lever table: per arm, the first step at which #2 and #3 pass `threshold` in each
    seed, the fraction of seeds that got there within the run, and the wall time per 1,000
    steps (mean over seeds, on whatever machine trained them)."""
    by_arm: dict[str, list[tuple[list[float], float]]] = {}
    steps: dict[str, int] = {}
    for s, r in results:
        if s.arm in arms:
            first = first_pass_steps(r["curve"], threshold)
            by_arm.setdefault(s.arm, []).append((first, wall_per_1000(Path(r["dir"]))))
            steps[s.arm] = s.config.steps
    rows = []
    for arm, runs in by_arm.items():
        cells = [arm, str(len(runs)), str(steps[arm])]
        for k in (2, 3):
            firsts = [f[k] for f, _ in runs]
            cells += [", ".join(step_text(x) for x in firsts),
                      f"{np.isfinite(firsts).mean():.2f}"]
        cells.append(f"{np.nanmean([w for _, w in runs]):.0f}")
        rows.append(cells)
    return rep.table(
        "Levers: when #2 and #3 are learned", ["arm", "seeds", "steps", "#2 first pass (per seed)",
                                               "seeds that got #2", "#3 first pass (per seed)",
                                               "seeds that got #3", "wall s per 1,000 steps"],
        rows, after=f"First evaluated step at which the position reaches {threshold} test "
        "accuracy (never: not within the run's steps). Wall time: this store's "
        "runs as they were trained (run.json), evaluations included; a loaded machine makes it "
        "longer than on a quiet one.")


def no_context_loss(task: Any, n: int = 4000, seed: int = 12345) -> float:
    """Validation loss (nats) of the best masked-LM predictor that ignores the context: it sees
    only the token shown at the slot. At a [MASK] it predicts the training words' frequencies
    p (add-one smoothed); at a shown word w it knows the slot holds w unchanged (BERT's
    `unchanged` fraction u) or a uniformly drawn random word (fraction r, over V words):
    q(y | w) = (u p(w) [y = w] + r p(y) / V) / (u p(w) + r / V). Averaged over the slots of n
    fresh validation windows: the unigram plateau a model sits on before it uses context."""
    ids = task.words.word_ids
    p = np.bincount(task.streams["train"], minlength=len(task.vocab)).astype(float)
    p[ids] += 1  # add-one over the predictable words; the others are never labels
    p[np.setdiff1d(np.arange(len(p)), ids)] = 0
    p /= p.sum()
    c = task.config
    u, r, V = 1 - c.mask_token_prob - c.random_token_prob, c.random_token_prob, len(ids)
    b = task.sample(np.random.default_rng(seed), n, "test")
    y = b.labels[b.loss_mask].numpy()
    shown = b.tokens.gather(1, b.label_pos.clamp(min=0))[b.loss_mask].numpy()
    q = p[y]  # at a [MASK]
    w = b.meta["replaced"][b.loss_mask].numpy() != 0  # a word is shown
    s, t = shown[w], y[w]
    q[w] = (u * p[s] * (t == s) + r * p[t] / V) / (u * p[s] + r / V)
    return float(-np.log(q).mean())


PROBE_SEED = 12345  # probe sentences: fresh, drawn independently of every run's data


def probe_run(run_dir: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """(accuracy map [layers+1, depths], shuffled-label map, chance) of one finished run.

    Probe sentences: n_test for fitting and n_test // 2 held out, disjoint (task.splits).
    """
    config, model = load_run_model(run_dir, device="run")  # probes send batches to it
    task = build_task(config.task)
    train, test = task.splits(np.random.default_rng([PROBE_SEED, config.seed]), config.n_test,
                              max(1, config.n_test // 2))
    r = probe_model(model, train, test, task.n_classes, key="depth")
    return r.acc, r.acc_shuffled, r.chance


def loss_table(rep: Report, results: Results, curves: dict[str, list[Curve]],
               fps: dict[str, float], paper: dict[str, float], paper_tokens: int,
               early: float) -> Report:
    """LEGO §5: validation masked-LM loss early and at the end, MLM accuracy, and FLOPs per
    token at this scale and at BERT-base's (`paper`: FLOPs per step, `paper_tokens` per step)."""
    first = results.first.config
    tokens = first.batch_size * first.task.seq_len  # type: ignore[attr-defined]
    return rep.table(
        "Validation masked-LM loss (mean over seeds)",
        ["arm", f"step {early}", "final", "final MLM accuracy", "FLOPs / token (this scale)",
         "FLOPs / token (BERT-base, seq 128)"],
        [[a, f"{np.mean([loss_at(c, early) for c in curves[a]]):.3f}",
          f"{np.mean([c[-1][1] for c in curves[a]]):.3f}",
          f"{np.mean([r['final']['acc'] for r in rs]):.3f}",
          f"{fps[a] / tokens / 1e6:.2f} M", f"{paper[a] / paper_tokens / 1e9:.3f} G"]
         for a, rs in results.arms().items()],
        after="FLOPs per token: 6 x parameters applied per token (the read-out counted at every "
        "position, an upper bound) + the attention's mixing matmuls; training FLOPs = steps x "
        "batch x seq_len x that.")


def plateau_section(rep: Report, bert: list[Curve], plateau: float
                    ) -> tuple[bool, str, bool]:
    """The unigram plateau beside BERT's final losses; returns left_plateau's (ok, why not,
    reachable), the gate of the end-of-training claims."""
    rep.add("The unigram plateau", "Validation loss of the best predictor that ignores the "
            "context (training-word frequencies at a [MASK]; at any other slot the shown word, "
            f"weighed by how often the masking leaves it unchanged): {plateau:.3f}. BERT's final "
            "validation loss per seed: " + ", ".join(f"{c[-1][1]:.3f}" for c in bert)
            + f". The end-of-training claims are judged once BERT is {PLATEAU_MARGIN} nats "
            "below it in every seed.")
    return left_plateau(bert, plateau)


def probe_sections(rep: Report, results: Results, out: Path) -> dict[str, np.ndarray]:
    """lego-probes: probe every run (probe_run), add the (layer, depth) accuracy table, the
    diagonal scores and the probe-map figure to `rep`; returns arm -> diagonal scores
    [seeds, (supervised, extrapolated)] (analysis/probes.split_diagonal)."""
    arms = results.arms()
    maps: dict[str, np.ndarray] = {}
    scores: dict[str, np.ndarray] = {}
    rows, shuffled_gap = [], 0.0
    chance = 0.5
    for arm, rs in arms.items():
        probed = [probe_run(Path(r["dir"])) for r in rs]
        chance = float(np.mean([c for _, _, c in probed]))
        maps[arm] = np.mean([a for a, _, _ in probed], axis=0)
        scores[arm] = np.array([split_diagonal(a, c, N_TRAIN_VARS) for a, _, c in probed])
        shuffled_gap = max(shuffled_gap, max(float(np.nanmax(np.abs(s - c)))
                                             for _, s, c in probed))
        for layer, accs in enumerate(maps[arm]):
            rows.append([arm, str(layer)] + [f"{x:.2f}" for x in accs])
    plot_probe_maps(maps, out / "probe_maps.png", chance, n_supervised=N_TRAIN_VARS)
    n = next(iter(maps.values())).shape[1]
    n_layers = next(iter(maps.values())).shape[0] - 1
    rep.sections.append(
        "## Held-out probe accuracy by layer (0 = embeddings) and chain depth "
        f"(mean over seeds; chance {chance:.2f})\n\n"
        + table(["arm", "layer"] + [f"#{d}" for d in range(n)], rows)
        + f"\n\nShuffled-label probes: largest distance from chance {shuffled_gap:.3f}.\n\n"
        + "## Diagonal score per seed (1 = one layer per chain step)\n\n"
        + table(["arm", "seed", f"supervised #0-#{N_TRAIN_VARS - 1}",
                 f"extrapolated #{N_TRAIN_VARS}-#{n_layers - 1} (within reach of "
                 f"{n_layers} layers)" if n_layers > N_TRAIN_VARS else
                 f"extrapolated (none within reach of {n_layers} layers)"],
                [[a, str(i), f"{x[0]:.3f}", "n/a" if np.isnan(x[1]) else f"{x[1]:.3f}"]
                 for a, s in scores.items() for i, x in enumerate(s)])
        + "\n\nThe verdict compares the supervised-depth scores.")
    rep.figure("probe_maps.png", "Probe accuracy over (layer, depth); dashed: the "
               "one-layer-per-step for-loop")
    return scores


# -- the wall at #2: attention diagnostics on the plateau (lego-plateau) ---------------------
def plateau_window(curve: list[dict[str, Any]]) -> tuple[float, float]:
    """The #2 plateau of one run, as steps (start, end]: from #1's first pass (0 if never) to
    #2's first pass (the run's last step if never). Where #1 is never learned the whole run is
    the window."""
    first = first_pass_steps(curve)
    end = first[2] if np.isfinite(first[2]) else curve[-1]["step"]
    return (first[1] if np.isfinite(first[1]) else 0.0), float(end)


def diag_rows(curve: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Per evaluation with attention diagnostics: step, mean entropy over layers, mean over
    layers of the W_Q, W_K and W_V gradient norms, and qk_v = (|dW_Q| + |dW_K|) / (2 |dW_V|)."""
    rows = []
    for m in curve:
        d = m.get("diag", {}).get("attention")
        if d is None:
            continue
        q, k, v = (float(np.mean(d[key])) for key in ("grad_W_Q", "grad_W_K", "grad_W_V"))
        rows.append({"step": m["step"], "entropy": float(np.mean(d["entropy"])), "grad_W_Q": q,
                     "grad_W_K": k, "grad_W_V": v, "qk_v": (q + k) / (2 * v) if v else np.nan})
    return rows


def on_plateau(curve: list[dict[str, Any]]) -> dict[str, float]:
    """The diagnostics averaged over the evaluations inside the run's #2 plateau window (NaN
    where the window holds none, e.g. #2 passed at #1's step)."""
    lo, hi = plateau_window(curve)
    inside = [r for r in diag_rows(curve) if lo < r["step"] <= hi]
    keys = ("entropy", "grad_W_Q", "grad_W_K", "grad_W_V", "qk_v")
    return {k: float(np.mean([r[k] for r in inside])) if inside else float("nan") for k in keys}


def plot_diagnostics(curves: Mapping[str, list[list[dict[str, Any]]]], path: Path,
                     uniform: float) -> None:
    """Two panels over training steps, one line per arm (mean over seeds): the attention
    entropy (mean over layers; dashed: uniform attention) and the W_Q/W_K gradient norm over
    W_V's (log scale)."""
    import matplotlib.pyplot as plt

    from reasonlab.report import legend_outside, save

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for arm, cs in curves.items():
        runs = [diag_rows(c) for c in cs]
        if not runs or not runs[0]:
            continue
        n = min(len(r) for r in runs)
        steps = [r["step"] for r in runs[0][:n]]
        for ax, key in ((a1, "entropy"), (a2, "qk_v")):
            ax.plot(steps, np.mean([[r[key] for r in run[:n]] for run in runs], axis=0),
                    label=f"{arm} ({len(cs)})")
    a1.axhline(uniform, color="grey", ls="--", lw=0.8)
    a1.set(xlabel="step", ylabel="attention entropy (nats, mean over layers)",
           title="Attention entropy (dashed: uniform)")
    a2.set(xlabel="step", ylabel="(|dL/dW_Q| + |dL/dW_K|) / (2 |dL/dW_V|)", yscale="log",
           title="Query/key gradients relative to value gradients")
    for ax in (a1, a2):
        ax.grid()
    legend_outside(a2)
    save(fig, path)


def plateau_diagnostics_section(rep: Report, results: Results, out: Path,
                                name: str = "diagnostics.png") -> Report:
    """Per run: the #2 plateau window and, averaged over the evaluations inside it, the
    attention entropy and the W_Q / W_K / W_V gradient norms (train/diagnostics.py) -- the
    mechanism Hoffmann et al. 2024 name: near-uniform attention with vanishing W_Q / W_K
    gradients. The figure shows them over the whole run."""
    curves = results.curves()
    seq = results.first.config.model.max_seq_len
    rows = []
    for arm, cs in curves.items():
        for i, c in enumerate(cs):
            lo, hi = plateau_window(c)
            d = on_plateau(c)
            rows.append([f"{arm} seed {i}", f"{lo:.0f}-{hi:.0f}", f"{d['entropy']:.2f}",
                         f"{d['grad_W_Q']:.2e}", f"{d['grad_W_K']:.2e}", f"{d['grad_W_V']:.2e}",
                         f"{d['qk_v']:.3f}"])
    rep.table("Attention on the #2 plateau (means over the window's evaluations)",
              # ‖.‖, not |.|: a pipe would split a Markdown table cell
              ["run", "window (steps)", "entropy", "‖dW_Q‖", "‖dW_K‖", "‖dW_V‖",
               "(‖dW_Q‖ + ‖dW_K‖) / 2‖dW_V‖"], rows,
              after=f"Window: from #1's first pass at {PASS} to #2's (or the run's end). Entropy "
              f"in nats, mean over layers, heads and queries of a fixed probe batch (uniform "
              f"attention over {seq} tokens: {np.log(seq):.2f}); gradient norms of the training "
              "loss on that batch, mean over layers.")
    plot_diagnostics(curves, out / name, float(np.log(seq)))
    return rep.figure(name, "Attention entropy and query/key gradients during training")


def reached(passes: list[float]) -> int:
    """How far up the chain a run got: the largest k such that #0..#k all passed PASS within
    the run (-1: not even #0)."""
    k = -1
    while k + 1 < len(passes) and np.isfinite(passes[k + 1]):
        k += 1
    return k


def fitted_section(rep: Report, passes: Mapping[str, list[list[float]]],
                   finals: Mapping[str, list[list[float]]], n_train: int) -> Report:
    """What fitted: per arm, how many seeds fit #0..#n_train-1 (>= PASS at the end on every
    supervised position), how far up the chain each seed got within the run (#k: #0..#k all
    passed PASS at some evaluation) and the steps each stair took (first pass of #k minus that
    of #k-1, mean over the seeds that climbed it)."""
    rows = []
    for arm, ps in passes.items():
        fits = sum(all(a >= PASS for a in f[:n_train]) for f in finals[arm])
        ks = [reached(p) for p in ps]
        stairs = []
        for k in range(n_train):
            gaps = [p[k] - (p[k - 1] if k else 0.0) for p in ps
                    if np.isfinite(p[k]) and (k == 0 or np.isfinite(p[k - 1]))]
            stairs.append(f"{np.mean(gaps):.0f}" if gaps else "-")
        rows.append([arm, f"{fits} of {len(ps)}",
                     ", ".join(f"#{k}" if k >= 0 else "none" for k in ks)] + stairs)
    return rep.table(
        f"What fitted: #0-#{n_train - 1} at >= {PASS} in every seed?",
        ["arm", "seeds fitting", "furthest stair per seed"]
        + [f"steps to #{k}" for k in range(n_train)], rows,
        after=f"A seed fits when its final accuracy is >= {PASS} on each of #0-#{n_train - 1}. "
        "Steps to #k: from #(k-1)'s first pass to #k's (from step 0 for #0), mean over the "
        "seeds that climbed both; '-': no seed did.")


def records_table(rows: list[dict[str, Any]], n_train: int, shown: int = 4) -> str:
    """The README's per-run table of a plateau study, from its run records (plateau.py's
    `write_run_records`, committed in _support/ so the README needs no store): per run, the
    first pass of #0..#shown-1 ("never": not within the run), the final mean over the supervised
    #0..#n_train-1 and #2's, the attention diagnostics on the #2 plateau and the wall time."""
    def step(x: float | None) -> str:
        return "never" if x is None else f"{x:.0f}"

    def num(x: float | None, fmt: str) -> str:  # JSON null / NaN: the window held no evaluation
        return "-" if x is None or not np.isfinite(x) else format(x, fmt)

    head = (["arm", "seed"] + [f"#{k}" for k in range(shown)]
            + [f"end of run, #0-#{n_train - 1} mean / #2", "plateau: entropy (nats)",
               "plateau: (‖dW_Q‖ + ‖dW_K‖) / 2‖dW_V‖", "wall s per 1,000 steps"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        a, p = r["final_acc"], r["plateau"]
        cells = ([r["arm"], str(r["seed"])] + [step(x) for x in r["first_pass"][:shown]]
                 + [f"{np.mean(a[:n_train]):.3f} / {a[2]:.2f}", num(p["entropy"], ".2f"),
                    num(p["qk_v"], ".2f"), num(r["wall_s_per_1000"], ".0f")])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
