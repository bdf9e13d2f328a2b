"""Engines: what turns env steps into updates for the one training loop (`rl.loop`).

`rl.engines.base` says what an engine does; `rl.training` chooses one per run.
"""
