#!/usr/bin/env bash
# The GPU tests (make test-gpu), on a machine with an NVIDIA GPU.
#
# 1. Finds CuPy: the Python that runs the tests is $PYTHON (default .venv/bin/python, or
#    python3 where there is no .venv, e.g. a GPU image that ships CuPy). If CuPy is not
#    importable there, installs the `gpu` extra (cupy-cuda12x).
# 2. Stops with teachgrad's own message if CuPy cannot reach a GPU.
# 3. Runs, on numpy and CuPy, every test that takes the `backend` fixture; then the op
#    table's property tests (first and second order against finite differences, float32,
#    forward mode, graph vs tape) with TEACHGRAD_TEST_BACKEND=cupy, so every op's rules run
#    on the GPU with the same tolerances as on the CPU; then lesson 9, whose GPU cells run
#    for real here, under nbval.
# Everywhere else `make test` runs the same files on numpy, and the CuPy cases skip.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if ! "$PYTHON" -c 'import cupy' 2>/dev/null; then
    "$PYTHON" -m pip install --quiet -e ".[gpu]"
fi
"$PYTHON" -c 'import teachgrad as tg; tg.set_backend("cupy"); import cupy; print("CuPy", cupy.__version__, "on", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())'

pytest=("$PYTHON" -m pytest -p no:cacheprovider -o addopts= -q -rs)
status=0   # run every step, then fail if any failed
"${pytest[@]}" tests/test_backends.py tests/test_gpu.py "$@" || status=1
TEACHGRAD_TEST_BACKEND=cupy "${pytest[@]}" tests/test_op_gradients.py \
    tests/test_forward_properties.py tests/test_graph_vs_tape.py "$@" || status=1
"${pytest[@]}" --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    notebooks/09_backends_and_speed.ipynb "$@" || status=1
exit $status
