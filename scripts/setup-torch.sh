#!/usr/bin/env bash
# Installs PyTorch (the PyPI wheel, used on the CPU with the gloo backend)
# into a virtual environment that the real-torch live tests (tests/torch/)
# use. Idempotent and cached: a venv that already imports torch is kept.
# Usage: scripts/setup-torch.sh [--print]   (--print: only print the venv path)
# Environment: CCDIAG_TORCH_VENV  the venv folder (default ~/.cache/ccdiag/torch-venv)
#              CCDIAG_NO_TORCH=1  skip the install (the torch tests then skip)
set -euo pipefail

venv="${CCDIAG_TORCH_VENV:-${HOME:-/root}/.cache/ccdiag/torch-venv}"
if [ "${1:-}" = "--print" ]; then echo "$venv"; exit 0; fi
if [ "${CCDIAG_NO_TORCH:-}" = "1" ]; then
  echo "setup-torch: CCDIAG_NO_TORCH=1, not installing torch" >&2; exit 0
fi

ok() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import torch.distributed' 2>/dev/null; }
if ok; then exit 0; fi

# Debian's python (python3-venv, from scripts/setup.sh) is preferred: the
# venv must outlive whatever other python happens to be first on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
echo "setup-torch: creating $venv with torch from PyPI (a few minutes, once)" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$py" -m venv "$venv"
# The PyPI wheel for Linux x86_64 is the CUDA build; it runs on the CPU alone.
"$venv/bin/python" -m pip install -q --no-input torch numpy
ok || { echo "setup-torch: torch does not import after install" >&2; exit 1; }
"$venv/bin/python" -c 'import torch; print("setup-torch: torch", torch.__version__)' >&2
