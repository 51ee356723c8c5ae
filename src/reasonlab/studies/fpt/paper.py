"""The FPT paper (the slide deck) and its tables that no study tests yet."""

from reasonlab.studies.kit.ledger import Paper, untested

TABLES = "Lu et al. 2021, slides"

# -- the paper's numbers beside ours, in its layout (%) ---------------------------------------
_MNIST = {"digits", "Fashion-MNIST"}  # no MNIST offline: its numbers are printed for scale


def _row(memory: str, xor: str, listops: str, mnist: str) -> dict[str, str]:
    return {"bit memory": memory, "bit XOR": xor, "ListOps (fpt2021)": listops,
            **{t: f"MNIST {mnist}" for t in sorted(_MNIST)}}


UNIVERSAL_TABLE = {"FPT": _row("100", "100", "38.4", "98.0"),
                   "Full": _row("100", "100", "38", "99.1"),
                   "Frozen random": _row("75.8", "100", "34.3", "91.7"),
                   "LSTM": _row("60.9", "50.1", "17.1", "99.5")}
"""fpt-universal: "Performance on Multimodal Sequence Benchmarks" and "Importance of language
pre-training" (its bit-memory numbers are on ALL bits, ours on masked bits)."""
FREEZE_TABLE = {"output only": _row("76", "56", "15", "23"),
                "+ input": _row("98", "72", "17", "85"),
                "+ norms (FPT)": _row("100", "100", "38.4", "98.0"),
                "FPT + attention": _row("100", "100", "36.8", "89.0"),
                "FPT + mlp": _row("100", "100", "36.0", "98.3"),
                "full": _row("100", "100", "35.8", "93.1")}
"""fpt-freeze-ablation: output only / output + input from "Freezing more parameters"; FPT and
the "+" rows from "Freezing fewer parameters" ("full" = its "+ Both"); bit memory on all
bits."""
STEPS_TABLE = {"bit memory": ("1e4", "4e4", "4x"), "bit XOR": ("5e2", "2e4", "40x"),
               "ListOps (fpt2021)": ("2e3", "6e3", "3x"), "digits": ("MNIST 5e3", "2e4", "4x")}
"""fpt-convergence: "Training duration", steps to convergence (FPT, random) and speedup."""
INIT_TABLE = {"Pretrained": _row("100", "100", "38.4", "98.0"),
              "Statistics Only": _row("100", "100", "37.4", "97.2"),
              "Default": _row("75.8", "100", "34.3", "91.7")}
"""fpt-init: "Weight initialization" (bit memory on all bits)."""
MODALITY_TABLE = {"FPT": _row("100", "100", "38.4", "98.0"),
                  "Random": _row("75.8", "100", "34.3", "91.7"),
                  "Bit": _row("100", "100", "35.4", "97.8"),
                  "ViT": _row("100", "100", "37.4", "97.8")}
"""fpt-modality: "Importance of language pre-training" (bit memory on all bits)."""
FITTING_TABLE = [["FPT (GPT-2)", "12", "38.6", "38.5"], ["Vanilla Transformer", "3", "42", "70"],
                 ["Linformer", "3", "39", "97"]]
"""fpt-fitting: "Over- and underfitting", CIFAR-10 LRA: model, layers, test, train (%)."""
SCALING_TABLE = [["Small (Base)", "12", "117M", "106K", "68.2", "61.7"],
                 ["Medium", "24", "345M", "190K", "69.8", "64.0"],
                 ["Large", "36", "774M", "300K", "72.1", "65.7"]]
"""fpt-scaling: "Scaling with size", CIFAR-10: size, layers, total and trained parameters,
FPT and Random accuracy (%)."""

PAPER = Paper(
    key="fpt",
    citation="Lu et al. 2021",
    title="Pretrained Transformers as Universal Computation Engines",
    seed="frozen-pretrained-transformers.txt, first half (a slide deck)",
    untested=(
        untested("one-group",
                 "Of the single groups trained beside the output layer, layernorm gives the "
                 "largest gain",
                 f"{TABLES}, Freezing more parameters (one group per column)",
                 "fpt-freeze-ablation's arms are cumulative (output, + input, + positions, "
                 "+ norms); the one-group arms are not run",
                 "output only / + input / + positions / + layernorm: Bit XOR 56 / 72 / 84 / "
                 "98%, ListOps 15 / 17 / 35 / 36%, MNIST 23 / 85 / 93 / 96%"),
        untested("successive",
                 "Adding layernorm, then input, then positions: each group adds accuracy",
                 f"{TABLES}, Successive finetuning",
                 "no arm adds the groups in the slides' order",
                 "output only / + layernorm / + input / + positions: Bit memory 76 / 94 / "
                 "100 / 100%, CIFAR-10 25 / 54 / 60 / 68%"),
        untested("frozen-random-groups",
                 "On a frozen random transformer the layernorm group alone carries most of "
                 "the gain",
                 f"{TABLES}, Freezing more parameters - frozen random; Successive finetuning "
                 "- frozen random",
                 "the freeze tables run on the pretrained backbone only",
                 "output only / + input / + positions / + layernorm: Bit XOR 50 / 51 / 59 / "
                 "100%, MNIST 25 / 28 / 34 / 83%"),
        untested("vit",
                 "ViT (image) pretraining transfers about as well as language pretraining",
                 f"{TABLES}, Importance of language pre-training (ViT row)",
                 "no ViT weights are available offline (fpt-modality runs the FPT, Random and "
                 "Bit rows)",
                 "FPT / ViT: ListOps 38.4 / 37.4%, MNIST 98.0 / 97.8%, C10 68.2 / 72.5%"),
        untested("random-lstm",
                 "A frozen random LSTM is far worse than a frozen random transformer",
                 f"{TABLES}, Importance of architecture: random weights",
                 "no frozen random LSTM arm (the LSTM arm is trained in full)",
                 "Trans. / LSTM: Bit memory 75.8 / 50.9%, ListOps 34.3 / 16.8%, MNIST 91.7 "
                 "/ 70.9%"),
        untested("feedforward",
                 "Training the feedforward layers as well does not hurt",
                 f"{TABLES}, Freezing fewer parameters",
                 "fpt-freeze-ablation adds the attention, not the feedforward layers",
                 "+ Feedforward: ListOps 36.0%, MNIST 98.3%, C10 76.6% (FPT 38.4 / 98.0 / "
                 "68.2%)"),
        untested("other-backbones",
                 "BERT transfers like GPT-2; T5 and Longformer less",
                 f"{TABLES}, Model - differences with GPT",
                 "no study compares backbones",
                 "GPT-2 / BERT / T5 / Longformer: ListOps 38.4 / 38.3 / 15.4 / 17.0%, "
                 "CIFAR-10 68.2 / 68.8 / 64.7 / 66.8%"),
    ),
)
