#!/usr/bin/env bash
# One command for the peers venv: .venv-peers at the repo root, with Stable-Baselines3, sb3-contrib,
# rl-zoo3 and rliable on a CPU build of torch: the `sb3` side of a campaign and its statistics
# (docs/campaigns.md). It is a venv of its own because SB3 needs torch, which the main .venv
# (TensorFlow) does not carry.
#
#   benchmarks/peers/setup.sh        # first run: a few minutes; later runs: well under a second
#   PYTHON=/path/to/python3.12 benchmarks/peers/setup.sh   # the interpreter for a new venv
#
# Idempotent like ./setup.sh: .venv-peers/.peers-setup-stamp records the sha256 of the two
# requirements files beside this script and the checkout's path; while they match nothing is
# installed again. torch is installed first and alone with pip (requirements-torch.txt: the
# machine's pip configuration offers its CPU wheel), then everything else with uv, which keeps
# that torch.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd "$HERE/../.." && pwd -P)"
VENV="$ROOT/.venv-peers"
STAMP="$VENV/.peers-setup-stamp"
UV_VERSION=0.13.9 # the same installer as ./setup.sh

die() {
  echo "benchmarks/peers/setup.sh: error: $*" >&2
  exit 1
}
say() { echo "benchmarks/peers/setup.sh: $*"; }

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum | cut -d' ' -f1
  else
    shasum -a 256 | cut -d' ' -f1 # macOS
  fi
}

want_stamp="$({ cat "$HERE/requirements-torch.txt" "$HERE/requirements.txt"; echo "$ROOT"; } | sha256)"
venv_works() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c '' >/dev/null 2>&1; }
is_311_plus() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

if venv_works && [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "$want_stamp" ]]; then
  say ".venv-peers is up to date."
  exit 0
fi

if [[ -e "$VENV" ]] && ! { venv_works && is_311_plus "$VENV/bin/python"; }; then
  say ".venv-peers is broken or older than Python 3.11; recreating it"
  rm -rf "$VENV"
fi
if [[ ! -e "$VENV" ]]; then
  python="${PYTHON:-}"
  if [[ -z "$python" ]]; then
    for candidate in python3.11 python3; do
      if command -v "$candidate" >/dev/null 2>&1 && is_311_plus "$candidate"; then
        python="$candidate"
        break
      fi
    done
  fi
  [[ -n "$python" ]] && is_311_plus "$python" ||
    die "needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)"
  say "creating .venv-peers with $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$python" -m venv "$VENV" || die "'$python -m venv' failed (apt-get install python3.11-venv)"
fi

PY="$VENV/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_PROGRESS_BAR=off
# A pip.conf may list a local index that does not exist here: pip warns that it "is ignored".
PIP_NOISE="^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$"
pip_install() {
  { "$PY" -m pip install -q "$@" 2>&1 1>&3 3>&- | { grep -v -e "$PIP_NOISE" >&2 || true; }; } 3>&1
}

say "installing torch alone (requirements-torch.txt)"
pip_install -r "$HERE/requirements-torch.txt"
"$PY" -W ignore -c 'import sys, torch; sys.exit(0 if torch.version.cuda is None else 1)' ||
  say "warning: the torch installed is a CUDA build; the machine's pip configuration offered no CPU wheel"
pip_install "uv==$UV_VERSION"

# uv keeps the installed torch (it satisfies SB3's requirement); the constraint makes sure.
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
"$PY" -W ignore -c 'import torch; print("torch==" + torch.__version__)' >"$constraints"
say "installing requirements.txt (quiet; the first time takes a minute or two)"
"$PY" -m uv pip install --quiet --compile-bytecode --python "$PY" \
  -c "$constraints" -r "$HERE/requirements.txt"

"$PY" -c 'import torch, stable_baselines3, sb3_contrib, rl_zoo3, rliable.library, mujoco, ale_py' ||
  die "the peers venv does not import its packages"
echo "$want_stamp" >"$STAMP.tmp"
mv -f "$STAMP.tmp" "$STAMP"
say "done: $("$PY" -c 'import torch, stable_baselines3, rl_zoo3; print("torch", torch.__version__, "sb3", stable_baselines3.__version__, "rl-zoo3", rl_zoo3.__version__)')"
