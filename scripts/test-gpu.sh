#!/usr/bin/env bash
# The GPU tests (make test-gpu), on a machine with an NVIDIA GPU.
#
# 1. Finds CuPy: the Python that runs the tests is $PYTHON (default .venv/bin/python, or
#    python3 where there is no .venv, e.g. a GPU image that ships CuPy). If CuPy is not
#    importable there, installs the `gpu` extra (cupy-cuda12x).
# 2. Stops with teachgrad's own message if CuPy cannot reach a GPU.
# 3. Runs, on numpy and CuPy, every test that takes the `backend` fixture; then, with
#    TEACHGRAD_TEST_BACKEND=cupy (every test of the file on CuPy, same tolerances as on the
#    CPU): the op table's property tests (first and second order against finite
#    differences, float32, forward mode, graph vs tape), the composition table, control
#    flow, the unboxed rules, the optimizers, tg.nn and tg.linalg, vectorization
#    (vectorized_map, the op table's batching rules, Jacobians), sequences (scan,
#    TensorArray, switch_case), the convolution kernels and forward mode on arrays; then
#    lesson 9, whose GPU cells run for real here, under nbval.
# TEACHGRAD_GPU_WORKERS=N spreads the test files (not the lesson) over N processes with
# pytest-xdist, where it is installed.
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
workers=()
if [[ -n "${TEACHGRAD_GPU_WORKERS:-}" ]]; then workers=(-n "$TEACHGRAD_GPU_WORKERS"); fi
on_cupy=(tests/test_op_gradients.py tests/test_forward_properties.py tests/test_graph_vs_tape.py
         tests/test_compositions.py tests/test_control_flow.py tests/test_unboxed_rules.py
         tests/test_optimizers.py tests/test_optimizer_options.py tests/test_nn.py
         tests/test_linalg.py tests/test_vectorize.py tests/test_op_batching.py
         tests/test_jacobians.py tests/test_sequences.py tests/test_tensor_array.py
         tests/test_switch_case.py tests/test_conv_kernels.py tests/test_forward_arrays.py)
status=0   # run every step, then fail if any failed
"${pytest[@]}" "${workers[@]}" tests/test_backends.py tests/test_gpu.py "$@" || status=1
TEACHGRAD_TEST_BACKEND=cupy "${pytest[@]}" "${workers[@]}" "${on_cupy[@]}" "$@" || status=1
"${pytest[@]}" --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    notebooks/09_backends_and_speed.ipynb "$@" || status=1
exit $status
