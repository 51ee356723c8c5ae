"""The abstract-symbols paper (its claims are all tested by the family's studies)."""

from reasonlab.studies.kit.ledger import Paper

PAPER = Paper(
    key="symbols",
    citation="Boix-Adsera et al. 2024",
    title="When can transformers reason with abstract symbols?",
    seed="abstract-symbols-reviews.txt (the ICLR 2024 reviews and the authors' responses)",
)
