#!/usr/bin/env bash
# Creates .bench-venv: teachgrad (editable) plus the peers that `make bench` times it
# against (the `bench` extra in pyproject.toml: PyTorch CPU, JAX, HIPS autograd,
# micrograd, threadpoolctl). Kept apart from .venv so that `make test` never
# installs them.
#
# Each peer is installed on its own: one that fails to install is reported and left
# out, and the benchmarks skip it with a note. PyTorch is pinned to 2.13.0, whose
# CPU wheel pip finds on this machine's disk (/opt/wheels); an unpinned `torch`
# would download a CUDA build of several GB.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${BENCH_VENV:-.bench-venv}
PY=$VENV/bin/python

test -x "$PY" || python3 -m venv "$VENV" || exit 1
"$PY" -m pip install --quiet --upgrade pip || exit 1
"$PY" -m pip install --quiet -e . || exit 1

# The peers, one per line, read from the `bench` extra.
peers=$("$PY" - <<'PY'
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["optional-dependencies"]["bench"]))
PY
) || { echo "could not read the bench extra from pyproject.toml" >&2; exit 1; }

failed=()
while IFS= read -r req; do
    [ -n "$req" ] || continue
    if ! "$PY" -m pip install --quiet "$req"; then
        failed+=("$req")
    fi
done <<< "$peers"

# Torch must be the CPU build: a CUDA build would mean pip fetched the wrong wheel.
"$PY" -c 'import torch; assert torch.version.cuda is None, torch.__version__; print("torch", torch.__version__, "(CPU build)")' 2>/dev/null \
    || echo "note: torch is missing or not the CPU build; its columns will be skipped" >&2
if [ ${#failed[@]} -gt 0 ]; then
    echo "note: could not install: ${failed[*]} (the benchmarks skip them)" >&2
fi
exit 0
