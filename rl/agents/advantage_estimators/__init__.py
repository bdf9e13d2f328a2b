"""Advantage estimators (Monte-Carlo returns, GAE, V-trace), registered by name.

The policy-gradient agents of the algorithms issue fill this registry.
"""
