"""`python -m reasonlab ...`: the `reasonlab` command."""

import sys

from reasonlab.cli import main

sys.exit(main())
