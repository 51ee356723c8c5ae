"""Chiang & Lee's paper (the seed's results table) and the claims that no study judges.

`artificial-pretraining` judges the ten claims of the seed's table; what stays untested is the
authors' follow-up (arXiv 2109.03537), whose corpora the study keeps as extra rows without
verdicts, and the parts of the seed our offline corpora cannot stand for.
"""

from reasonlab.studies.kit.ledger import Paper, untested

FOLLOWUP = "Chiang & Lee, follow-up (arXiv 2109.03537), GLUE average gains (docs/papers.md §4)"
SEED = "Chiang & Lee 2020 (arXiv 2012.11995), the seed's slides 'Comparison datasets'"

PAPER = Paper(
    key="artificial",
    citation="Chiang & Lee 2020",
    title="Pre-Training a Language Model Without Human Language",
    seed="frozen-pretrained-transformers.txt, second half (from 'Pre-Training a Language "
    "Model Without Human Language'); artificial-pretraining follows its Results table",
    untested=(
        untested("followup-flat-beats-nesting",
                 "Flat parentheses transfer better than nested ones", FOLLOWUP,
                 "artificial-pretraining keeps Flat as an extra row beside the seed's stack "
                 "grammar, without a verdict (the seed has no flat corpus)",
                 "GLUE average gain: Flat-128 +14.5, Nesting +12.0"),
        untested("followup-shuffle-range",
                 "English shuffled in longer windows keeps more of its transfer (Shuffle-64 "
                 "over Shuffle-4)", FOLLOWUP,
                 "only Shuffle-64 is kept (over the disjoint English), as an extra row",
                 "GLUE average gain: Shuffle-64 +12.4, Shuffle-4 +4.7"),
        untested("followup-uniform-no-better",
                 "Uniform random tokens transfer no better than no pretraining", FOLLOWUP,
                 "the seed's table says the opposite (+4.5); artificial-pretraining judges the "
                 "seed's direction (random-beats-scratch), whose evidence answers this too",
                 "GLUE average gain: Uniform -0.2"),
        untested("followup-bigram",
                 "An English bigram chain transfers little (local statistics are not the "
                 "structure that transfers)", FOLLOWUP,
                 "the bigram corpus is built from the WordNet glosses the downstream tasks "
                 "test on, so it is left out of the rebuilt study",
                 "GLUE average gain: Bigram +2.2"),
        untested("proteins-at-scale",
                 "Protein sequences at scale (14.7M sequences, 3,150 families) are no better "
                 "than random tokens", SEED,
                 "our amino corpus is a toy (~200k residues shipped in Debian's emboss-test); "
                 "artificial-pretraining's non-language claim uses it and says so",
                 "Avg: Amino Acid 0.55, Rand. Baseline 0.58"),
        untested("sov-language",
                 "A human language chosen to differ from English (Kannada, SOV order) "
                 "transfers about as well as the stack grammar", SEED,
                 "no Kannada text ships offline; German (verb-final only in subordinate "
                 "clauses) stands in, so the SOV contrast itself is not tested",
                 "Avg: Kannada 0.67, Artificial (Zipf) 0.66"),
    ),
)
