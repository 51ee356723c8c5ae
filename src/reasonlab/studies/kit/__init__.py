"""The study kit: the Study base class and registry, grids of runs, verdict rules shared by every
family (verdicts.py; loss curves at equal steps and FLOPs: curves.py), and the report builder."""
