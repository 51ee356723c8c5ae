"""Chiang & Lee's paper (the seed's results table) and its claims that no study tests yet.

The studies follow the authors' follow-up (flat / nesting / shuffle / bigram corpora, GLUE
average gains); the seed's table (13 corpora x 8 GLUE tasks) gives the claims below.
"""

from reasonlab.studies.kit.ledger import Paper, untested

TABLE = "Chiang & Lee 2020 (arXiv 2012.11995), Results table"

PAPER = Paper(
    key="artificial",
    citation="Chiang & Lee 2020",
    title="Pre-Training a Language Model Without Human Language",
    seed="frozen-pretrained-transformers.txt, second half (from 'Pre-Training a Language "
    "Model Without Human Language'); the studies' corpora follow the authors' follow-up",
    untested=(
        untested("random-beats-scratch",
                 "Pretraining on random tokens is better than no pretraining",
                 TABLE, "artificial-pretraining judges the follow-up's opposite claim "
                 "(uniform tokens no better, GLUE -0.2); the seed's direction has no verdict",
                 "average: Rand. Baseline 0.58, No Pre-train 0.54; STS-B 0.29 vs 0.17"),
        untested("distribution",
                 "The token distribution hardly matters (Zipf vs uniform), for random tokens "
                 "and for the stack grammar",
                 TABLE, "no stack-grammar corpus with uniform pushes exists yet",
                 "average: Rand. 0.58 vs Zipf 0.59; Artificial (Uni.) 0.65 vs (Zipf) 0.66"),
        untested("vocabulary-size",
                 "A larger vocabulary in the artificial corpus transfers better",
                 TABLE, "no stack-grammar corpus drawn from k token types exists yet",
                 "average: Artificial (5000) 0.66, (500) 0.60, (50) 0.54"),
        untested("substitution",
                 "Writing 50 token types as random ids of their group (50-s) recovers most "
                 "of the small vocabulary's loss",
                 TABLE, "no 50-s corpus exists yet",
                 "average: Artificial (50-s) 0.62 vs (50) 0.54"),
        untested("other-language",
                 "The stack grammar transfers about as well as another human language",
                 TABLE, "no non-English running text is installed offline yet",
                 "average: Kannada 0.67, Artificial (Zipf) 0.66"),
        untested("non-language",
                 "Natural non-language data (proteins, JavaScript) is no better than random "
                 "tokens", TABLE, "no protein or JavaScript corpus is installed offline yet",
                 "average: Amino Acid 0.55, Java Script 0.56; Rand. 0.58, Zipf 0.59"),
        untested("sentence-pair",
                 "The gains lie in sentence-pair tasks (STS-B above all); on single-sentence "
                 "tasks no non-English corpus helps",
                 TABLE, "our downstream tasks are single-sentence; no sentence-pair task is "
                 "built yet",
                 "STS-B: En, Kannada, Artificial (Zipf) 0.76 vs No Pre-train 0.17; SST-2: "
                 "0.80-0.84 vs 0.83 (En 0.88)"),
    ),
)
