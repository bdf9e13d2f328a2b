"""The Stable-Baselines3 side of a campaign, run in the peers venv (.venv-peers, made by
benchmarks/peers/setup.sh): rl-zoo3 entries built by rl-zoo3 itself (zoo.py), the training VecEnv
saved mid-episode (env_state.py) and the resumable cell (`python -m benchmarks.peers.sb3_cell`)."""
