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

PAPER = Paper(
    key="fpt",
    citation="Lu et al. 2021",
    title="Pretrained Transformers as Universal Computation Engines",
    seed="frozen-pretrained-transformers.txt, first half (a slide deck)",
    untested=(
        untested("statistics-only",
                 "Initializing with each pretrained tensor's mean and std (Statistics Only) "
                 "recovers much of pretraining's advantage over the default init",
                 f"{TABLES}, Weight initialization",
                 "no Statistics Only init exists yet",
                 "Pretrained / Statistics Only / Default: ListOps 38.4 / 37.4 / 34.3%, "
                 "MNIST 98.0 / 97.2 / 91.7%, C10 68.2 / 56.5 / 61.7%"),
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
        untested("modality",
                 "Language pretraining transfers better than random or bit-memory "
                 "pretraining; ViT pretraining is comparable",
                 f"{TABLES}, Importance of language pre-training",
                 "no backbone pretrained on bits exists yet; no ViT weights offline",
                 "FPT / Random / Bit / ViT: ListOps 38.4 / 34.3 / 35.4 / 37.4%, C10 68.2 / "
                 "61.7 / 62.6 / 72.5%"),
        untested("random-lstm",
                 "A frozen random LSTM is far worse than a frozen random transformer",
                 f"{TABLES}, Importance of architecture: random weights",
                 "no frozen random LSTM arm (the LSTM arm is trained in full)",
                 "Trans. / LSTM: Bit memory 75.8 / 50.9%, ListOps 34.3 / 16.8%, MNIST 91.7 "
                 "/ 70.9%"),
        untested("scaling",
                 "Larger pretrained backbones transfer better, and keep their lead over "
                 "random ones",
                 f"{TABLES}, Scaling with size",
                 "no arm varies the backbone's size",
                 "CIFAR-10 FPT / Random: Small 68.2 / 61.7%, Medium 69.8 / 64.0%, Large 72.1 "
                 "/ 65.7%"),
        untested("underfitting",
                 "FPT underfits where transformers trained from scratch overfit",
                 f"{TABLES}, Over- and underfitting (CIFAR-10 LRA)",
                 "no study reports training accuracy beside test accuracy",
                 "test / train: FPT 38.6 / 38.5%, vanilla transformer 42 / 70%, Linformer "
                 "39 / 97%"),
        untested("feedforward",
                 "Training the feedforward layers as well does not hurt",
                 f"{TABLES}, Freezing fewer parameters",
                 "fpt-freeze-ablation adds the attention, not the feedforward layers",
                 "+ Feedforward: ListOps 36.0%, MNIST 98.3%, C10 76.6% (FPT 38.4 / 98.0 / "
                 "68.2%)"),
        untested("attention-maps",
                 "FPT's first attention layer shows the bit tasks' structure",
                 f"{TABLES}, GPT-2 - first layer attention for bit XOR / bit memory "
                 "(figures only)",
                 "`reasonlab attention` cannot feed continuous inputs"),
        untested("other-backbones",
                 "BERT transfers like GPT-2; T5 and Longformer less",
                 f"{TABLES}, Model - differences with GPT",
                 "no study compares backbones",
                 "GPT-2 / BERT / T5 / Longformer: ListOps 38.4 / 38.3 / 15.4 / 17.0%, "
                 "CIFAR-10 68.2 / 68.8 / 64.7 / 66.8%"),
    ),
)
