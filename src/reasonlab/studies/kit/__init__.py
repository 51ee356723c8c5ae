"""The study kit: the Study base class and registry, grids of runs, verdict rules shared by every
family, and the report builder."""
