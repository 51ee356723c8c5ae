"""FPT: which parameters must train? (Lu et al. 2021, "Freezing more parameters", "Successive
finetuning" and "Freezing fewer parameters" tables; docs/papers.md §4).

The pretrained SmolLM2 backbone (fpt_common) under seven freeze policies (model/freeze.py):
output only, + input, + positions, + norms (= FPT), FPT + attention, FPT + mlp, full. The FPT
policy's runs are fpt-universal's FPT arm (same configs: trained once in a shared runs folder).

Claims: "LayerNorm, input and position parameters matter most" -- training them (FPT)
recovers most of what training everything gains over training the read-out alone; "training
the attention as well does not help" -- FPT + attention is no better than FPT.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.studies.kit.base import (STUDIES, Claim, Report, Results, RunSpec, Scale, Verdict,
                                        grid)
from reasonlab.studies.fpt.common import (CHANCE, NO_GPT2, FPTStudy, accuracy_table, by_task,
                                          finals, fpt_arm, params_line, recipe, tasks)
from reasonlab.studies.kit.verdicts import MIN_GAIN, at_least, at_most, requires, threshold_verdict

POLICIES = {"output only": "output_only", "+ input": "input_output",
            "+ positions": "input_output_positions", "+ norms (FPT)": "fpt",
            "FPT + attention": "fpt_attention", "FPT + mlp": "fpt_mlp", "full": "full"}
"""Arm -> freeze preset, in the order of the paper's successive tables."""
ABLATION_TASKS: dict[Scale, tuple[str, ...]] = {
    "smoke": ("bit memory", "bit XOR"),
    "cpu": ("ListOps (fpt2021)", "digits", "Fashion-MNIST"),
    "paper": ("bit memory", "bit XOR", "ListOps (fpt2021)", "digits", "Fashion-MNIST"),
}
"""The tasks of the ablation (fpt-universal's; at cpu scale those FPT learns within its
budget -- its bit tasks stay at chance there, fpt-universal's report -- to fit 15 minutes)."""
LEARNED = 0.1
"""A task enters the attention comparison only if FPT or FPT + attention ends this far above
chance."""
MOST = 0.75
"""'Matter most': FPT recovers at least this share of full training's gain over the read-out
alone (reproduced); at most 1 - MOST is not reproduced; in between inconclusive."""

PAPER = {
    "output only": {"bit memory": "76", "bit XOR": "56", "ListOps (fpt2021)": "15",
                    "digits": "MNIST 23", "Fashion-MNIST": "MNIST 23"},
    "+ input": {"bit memory": "98", "bit XOR": "72", "ListOps (fpt2021)": "17",
                "digits": "MNIST 85", "Fashion-MNIST": "MNIST 85"},
    "+ norms (FPT)": {"bit memory": "100", "bit XOR": "100", "ListOps (fpt2021)": "38.4",
                      "digits": "MNIST 98.0", "Fashion-MNIST": "MNIST 98.0"},
    "FPT + attention": {"bit memory": "100", "bit XOR": "100", "ListOps (fpt2021)": "36.8",
                        "digits": "MNIST 89.0", "Fashion-MNIST": "MNIST 89.0"},
    "FPT + mlp": {"bit memory": "100", "bit XOR": "100", "ListOps (fpt2021)": "36.0",
                  "digits": "MNIST 98.3", "Fashion-MNIST": "MNIST 98.3"},
    "full": {"bit memory": "100", "bit XOR": "100", "ListOps (fpt2021)": "35.8",
             "digits": "MNIST 93.1", "Fashion-MNIST": "MNIST 93.1"},
}
"""The paper's numbers (%): output only / output + input from "Freezing more parameters";
FPT and the "+" rows from "Freezing fewer parameters" ("full" = its "+ Both"); bit memory on
all bits."""


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(FPTStudy):
    title = "FPT: which parameter groups must train"
    claims = (
        Claim("norms-input-positions", "LayerNorm, input and position parameters matter most",
              "Lu et al. 2021, Freezing more parameters / Successive finetuning"),
        Claim("attention-no-help", "Training the attention as well does not help",
              "Lu et al. 2021, Freezing fewer parameters"),
    )
    cpu_minutes = 3.3  # measured: 200 s after fpt-universal, machine otherwise idle (README)
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = [v for k, v in tasks(scale).items() if k in ABLATION_TASKS[scale]]
        arms = {arm: fpt_arm(scale, preset) for arm, preset in POLICIES.items()}
        return grid(recipe(scale), arms, sweep=points, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        runs = by_task(results, results.scale)
        values = finals(runs)
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        rep.add("Accuracy per policy (%)", "Mean over seeds; bit memory on MASKED bits. In "
                "brackets the paper's number (GPT-2; MNIST for our digits).\n\n"
                + accuracy_table(values, list(POLICIES), PAPER))
        rep.add("Parameters trained per policy", params_line(runs))
        plot_policies(values, out / "policies.png")
        rep.figure("policies.png", "Final test accuracy per freeze policy, one line per task")
        rep.verdicts = ablation_verdicts(self.claim, values)
        return rep


def ablation_verdicts(claim: Callable[[str], Claim], values: dict[str, dict[str, list[float]]]
                      ) -> list[Verdict]:
    """Both claims from task -> policy arm -> per-seed metric (hand-made in the unit tests)."""
    most, attention = claim("norms-input-positions"), claim("attention-no-help")
    m = {t: {a: float(np.mean(v)) for a, v in arms.items()} for t, arms in values.items()}
    span = {t: p["full"] - p["output only"] for t, p in m.items()}
    counted = [t for t in m if span[t] >= MIN_GAIN]  # tasks where training anything helps
    shares = {t: (m[t]["+ norms (FPT)"] - m[t]["output only"]) / span[t] for t in counted}
    share = float(np.mean(list(shares.values()))) if shares else float("nan")
    ev = ("share of full training's gain over output-only that FPT recovers: "
          + (", ".join(f"{t} {s:.2f}" for t, s in shares.items()) or "no task")
          + f"; mean {share:.2f} (needs >= {MOST}; <= {1 - MOST:.2f} fails; tasks where full "
          f"beats output-only by < {MIN_GAIN} are left out: "
          + (", ".join(t for t in m if t not in counted) or "none") + ")")
    v1 = requires(threshold_verdict(most, share, ev, at_least(MOST), at_most(1 - MOST)),
                  bool(shares), "on no task does training everything beat the read-out alone")
    arms = ("FPT + attention", "+ norms (FPT)")
    learned = [t for t, p in m.items() if max(p[a] for a in arms) >= CHANCE[t] + LEARNED]
    gains = {t: m[t][arms[0]] - m[t][arms[1]] for t in learned}
    gain = float(np.mean(list(gains.values()))) if gains else float("nan")
    ev2 = ("FPT + attention - FPT per task: " + (", ".join(f"{t} {g:+.3f}"
                                                           for t, g in gains.items()) or "none")
           + f"; mean {gain:+.3f} (reproduced when <= {MIN_GAIN}; >= {2 * MIN_GAIN} fails); "
           f"left out (neither {LEARNED} above chance): "
           + (", ".join(t for t in m if t not in learned) or "none"))
    v2 = requires(threshold_verdict(attention, -gain, ev2, at_least(-MIN_GAIN),
                                    at_most(-2 * MIN_GAIN)), bool(gains), "no task was learned")
    return [v1, v2]


def plot_policies(values: dict[str, dict[str, list[float]]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7.5, 4))
    x = np.arange(len(POLICIES))
    for t, arms in values.items():
        ax.plot(x, [np.mean(arms.get(a, [np.nan])) for a in POLICIES], marker="o", label=t)
    ax.set_xticks(x, list(POLICIES), rotation=20, ha="right")
    ax.set(ylabel="final test accuracy", ylim=(0, 1.02), title="Freeze policies (SmolLM2)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
