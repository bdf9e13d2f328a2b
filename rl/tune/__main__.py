"""`python -m rl.tune`: the hyper-parameter search (rl.tune.cli, docs/tuning.md)."""

from rl.tune.cli import main

raise SystemExit(main())
