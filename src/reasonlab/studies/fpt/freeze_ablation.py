"""FPT: which parameter groups must train? (Lu et al. 2021, slides: "Freezing more
parameters" and "Successive finetuning", each for the pretrained backbone (`fpt-freeze-ablation`,
here) and the frozen random one (`fpt-freeze-random`, freeze_random.py: the slides' tables of
the same names ending "- frozen random"); docs/papers.md §4).

Each offline backbone (_support/backbone.py: SmolLM2 and MiniLM, factor `backbone`),
pretrained or at random init (factor `init`, one per study so that each fits the cpu budget),
under the slides' freeze policies (model/freeze.py): ONE group trained beside the output layer
per column -- output only, output + input, output + positions, output + layernorm -- and the
successive ones -- + layernorm, + input, + positions (= FPT), on common.FREEZE_TASKS. The FPT
policy's runs are fpt-universal's FPT and Random arms (same configs: trained once in a shared
runs folder).

One verdict per factor, each read from one-group arms and judged on both backbones: "layernorm
/ input / positions matter" is output + that group vs output only (a group that adds nothing
reads not reproduced), and "layernorm first" is the share of FPT's gain over output only that
output + layernorm already has. What "positions" and "layernorm" hold differs per backbone
(SmolLM2: a NEW zero table at the input and RMSNorm gains; MiniLM: its own pretrained position
table and LayerNorm with bias): _support/backbone.py backbone_line, printed over each table.
"""

from __future__ import annotations

from reasonlab.studies.fpt._support.freezing import OUT_IN, OUT_LN, OUT_POS, FreezeStudy
from reasonlab.studies.fpt.verdicts import factor_verdict, share_verdict
from reasonlab.studies.kit.base import STUDIES
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(FreezeStudy):
    title = "FPT: which parameter groups must train (one group, successive; pretrained)"
    claims = family_claims(__package__)["fpt-freeze-ablation"]
    # estimated: the measurement (1141 s on 2 quiet cores for the 68 runs of 72 that a 1-seed
    # fpt-universal had not trained) scaled to the 60 a 3-seed fpt-universal leaves (its FPT
    # arm is this study's FPT policy at every seed; fpt README, "Seeds and time")
    init = "pretrained"
    rules = {"layernorm": (factor_verdict, OUT_LN), "input": (factor_verdict, OUT_IN),
             "positions": (factor_verdict, OUT_POS), "layernorm-first": (share_verdict, OUT_LN)}
