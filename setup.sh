#!/usr/bin/env bash
# One command to get a working rl checkout: creates .venv (Python 3.11+), installs the pinned
# requirements.txt and this package in editable mode.
#
#   ./setup.sh                       # first run: a few minutes; later runs: well under a second
#   PYTHON=/path/to/python3.12 ./setup.sh   # choose the interpreter for a new .venv
#
# Idempotent: .venv/.rl-setup-stamp records the sha256 of requirements.txt,
# requirements-procgen.txt, pyproject.toml and the checkout's path; while they match, nothing is
# installed again. Edit any of them (or move the checkout) and the next run reinstalls. Needs no
# network other than PyPI.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT="$(pwd -P)"
VENV="$ROOT/.venv"
STAMP="$VENV/.rl-setup-stamp"
UV_VERSION=0.13.9  # the installer (pip's drop-in from astral.sh): 14 s where pip took 99 s here

die() {
  echo "setup.sh: error: $*" >&2
  exit 1
}

next_steps() {
  cat <<'EOF'
Next (see README.md):
  .venv/bin/python train.py --hparams dqn_cartpole --output_dir runs/dqn_cartpole   # train
  .venv/bin/python -m pytest                                                         # test
EOF
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum | cut -d' ' -f1
  else
    shasum -a 256 | cut -d' ' -f1  # macOS
  fi
}

# The installed state depends on these files' contents and, for the editable install, on where
# the checkout lives.
want_stamp="$({ cat requirements.txt requirements-procgen.txt pyproject.toml; echo "$ROOT"; } | sha256)"

venv_works() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c '' >/dev/null 2>&1; }

# --- fast path: nothing changed since the last successful run ---------------------------------
if venv_works && [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "$want_stamp" ]]; then
  echo "setup.sh: .venv is up to date."
  next_steps
  exit 0
fi

is_311_plus() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

find_python() {
  if [[ -n "${PYTHON:-}" ]]; then
    is_311_plus "$PYTHON" || die "PYTHON=$PYTHON is not a Python 3.11+ interpreter"
    echo "$PYTHON"
  elif command -v python3.11 >/dev/null 2>&1 && is_311_plus python3.11; then
    echo python3.11
  elif command -v python3 >/dev/null 2>&1 && is_311_plus python3; then
    echo python3
  else
    local found="there is no python3 either"
    if command -v python3 >/dev/null 2>&1; then
      found="python3 is $(python3 -c 'import sys; print(sys.version.split()[0])' 2>&1 || true)"
    fi
    die "rl needs Python 3.11 or newer, but found no python3.11 and $found." \
      "Install Python 3.11 (e.g. 'apt-get install python3.11 python3.11-venv', pyenv or" \
      "python.org), or point PYTHON at one: PYTHON=/path/to/python3.11 ./setup.sh"
  fi
}

# --- the virtual environment -------------------------------------------------------------------
if [[ -e "$VENV" ]] && ! { venv_works && is_311_plus "$VENV/bin/python"; }; then
  echo "setup.sh: .venv is broken or older than Python 3.11; recreating it"
  rm -rf "$VENV"
fi
if [[ ! -e "$VENV" ]]; then
  python="$(find_python)"
  echo "setup.sh: creating .venv with $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$python" -m venv "$VENV" ||
    die "'$python -m venv' failed; on Debian/Ubuntu install the venv module" \
      "(apt-get install python3.11-venv), then run ./setup.sh again"
fi

PY="$VENV/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_PROGRESS_BAR=off
# pip installs only uv into .venv; uv then installs everything else (it downloads and unpacks in
# parallel). uv reads PyPI (or UV_DEFAULT_INDEX / uv.toml), not pip.conf: a private mirror must
# be named to it. A pip.conf may list a local index or find-links folder that lacks uv; pip then
# warns that the location "is ignored": harmless, so only that line is filtered out of stderr.
PIP_NOISE="^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$"
{ "$PY" -m pip install -q "uv==$UV_VERSION" 2>&1 1>&3 3>&- | { grep -v -e "$PIP_NOISE" >&2 || true; }; } 3>&1
# -q keeps uv to errors; set -e stops at the first failure, before the stamp. --compile-bytecode
# does what pip does by default: without it a process that may not write .pyc files
# (PYTHONDONTWRITEBYTECODE, a read-only image) compiles TensorFlow's sources at every import
# (10.2 s instead of 6.8 s here).
uv_install() { "$PY" -m uv pip install --quiet --compile-bytecode --python "$PY" "$@"; }

echo "setup.sh: installing requirements.txt into .venv (quiet; the first time takes a minute)"
uv_install -r requirements.txt
# procgen (CoinRun) declares numpy<2 and the old gym, which contradict requirements.txt although
# it runs with them; its file pins what it needs at run time (docs/environments.md, "CoinRun").
echo "setup.sh: installing requirements-procgen.txt (--no-deps)"
uv_install --no-deps -r requirements-procgen.txt
echo "setup.sh: installing rl in editable mode"
uv_install --no-deps -e .

# Videos of MuJoCo envs on a machine without a display draw through EGL or OSMesa
# (docs/watching_agents.md): system libraries that pip cannot install, so only a note.
if [[ "$(uname -s)" == Linux ]]; then
  gl_status=0
  "$PY" -c 'import sys; from rl.envs.mujoco import HEADLESS_GL_BACKENDS as gl, opengl_library_loads as loads
sys.exit(0 if any(loads(library) for _, library in gl) else 3)' || gl_status=$?
  if ((gl_status == 3)); then
    echo "setup.sh: note: neither EGL nor OSMesa loads here; videos of MuJoCo envs without a" \
      "display need one: apt-get install libegl1 (or libosmesa6) on Debian/Ubuntu"
  fi
fi

# Written last, atomically: an interrupted install leaves no stamp and is redone next time.
echo "$want_stamp" >"$STAMP.tmp"
mv -f "$STAMP.tmp" "$STAMP"
echo "setup.sh: done."
next_steps
