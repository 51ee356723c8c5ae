"""FPT: which parameter groups must train on a frozen random backbone? (Lu et al. 2021, slides:
"Freezing more parameters - frozen random" and "Successive finetuning - frozen random";
docs/papers.md §4).

fpt-freeze-ablation's grid (freeze_ablation.py, _support/freezing.py) with each offline
backbone at random init (factor `init` = "frozen random"), frozen as each freeze policy says.
Its FPT policy's runs are fpt-universal's Random arm (same configs: trained once in a shared
runs folder). Two claims, each judged on both backbones: layernorm matters on the random
backbone (output + layernorm vs output only), and it comes first (the share of FPT's gain over
output only that output + layernorm already has).
"""

from __future__ import annotations

from reasonlab.studies.fpt._support.freezing import OUT_LN, FreezeStudy
from reasonlab.studies.fpt.verdicts import factor_verdict, share_verdict
from reasonlab.studies.kit.base import STUDIES
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("fpt-freeze-random")
class FptFreezeRandom(FreezeStudy):
    title = "FPT: which parameter groups must train (one group, successive; frozen random)"
    claims = family_claims(__package__)["fpt-freeze-random"]
    init = "frozen random"
    rules = {"random-layernorm": (factor_verdict, OUT_LN),
             "random-layernorm-first": (share_verdict, OUT_LN)}
