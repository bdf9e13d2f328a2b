"""Engines: what turns env steps into updates for the one training loop (`rl.loop`)."""
