"""The support code of `artificial-pretraining`, which follows the source paper's "Results"
table (Chiang & Lee, arXiv 2012.11995; docs/papers.md §4), beside the family's fixed modules
(common, analysis, verdicts, calibration): the table and its rows as our corpora, the recipes
and runs (paper_table, with paper_table.csv), the scores, table and figure in its layout
(paper_table_analysis), the rules of its ten claims (paper_table_verdicts) and, as data, the
per-run records of its measured cpu run (pretraining_cpu_runs.json: the report's runs.json)."""
