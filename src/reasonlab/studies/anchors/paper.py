"""The anchor-functions paper and its claims that no study tests yet."""

from reasonlab.studies.kit.ledger import Paper, untested

PAPER = Paper(
    key="anchors",
    citation="Zhang et al. 2024",
    title="Initialization is Critical to Whether Transformers Fit Composite Functions by "
    "Reasoning or Memorizing",
    seed="initialization-composite-functions.txt (arXiv 2405.05409v5, abstract)",
    untested=(
        untested("real-world",
                 "The initialization rate decides reasoning vs memorizing on real-world "
                 "datasets too",
                 "Zhang et al. 2024, abstract ('We validate our conclusions on various "
                 "real-world datasets')",
                 "every anchors study trains on synthetic anchor functions; the paper's "
                 "real-world datasets are not named in the text we have"),
    ),
)
