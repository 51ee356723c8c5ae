"""The LEGO paper and its claims that no study tests yet (the tested ones are the studies')."""

from reasonlab.studies.kit.ledger import Paper, untested

PAPER = Paper(
    key="lego",
    citation="Zhang et al. 2022",
    title="Unveiling Transformers with LEGO: a synthetic reasoning task",
    seed="lego-unveiling-transformers.txt; the earlier version's abstract in "
    "lego-abstract-and-physics-of-ai.txt",
    untested=(
        untested("for-loop-timing",
                 "ALBERT extrapolates to #6 as soon as it fits #0-#5, while BERT's #6 climbs "
                 "gradually after the training variables are fitted",
                 "Zhang et al. 2022, §4.1 Q2, Fig. 3",
                 "it needs runs that fit #0-#5; at cpu scale none does in the budget "
                 "(lego-extrapolation), and no study times #6 against the fit"),
        untested("length-switch",
                 "Hardcode and Hybrid are resilient to the switch of training length from 128 "
                 "to 512 tokens, where BERT's training loss bumps",
                 "Zhang et al. 2022, §5, Fig. 9",
                 "lego-hardcoded-attention trains at one sequence length"),
        untested("inference-cost",
                 "Hardcoded attention lowers inference FLOPs and model size",
                 "Zhang et al. 2022, §5, Fig. 8 (batch 64 x 512 tokens)",
                 "lego-hardcoded-attention counts training FLOPs per token, not inference "
                 "FLOPs or parameters at the paper's shape"),
    ),
)
