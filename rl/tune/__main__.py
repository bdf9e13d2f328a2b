"""`python -m rl.tune`: the hyper-parameter search (rl.tune.cli, docs/tuning.md)."""

import sys

from rl.tune.cli import main

sys.exit(main())
