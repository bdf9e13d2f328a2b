"""Benchmarks of rl: measurement scripts, campaign runner (`python -m benchmarks.campaign`) and the
peers venv's side (benchmarks/peers/). A package so its modules run with `python -m` and import
each other without path edits; it imports nothing, so any venv can import its modules."""
