"""What only a GPU can show: the CuPy backend end to end, on real CUDA.

Every test here skips, with teachgrad's reason, where CuPy or a GPU is missing (CI,
laptops); ``make test-gpu`` runs them on a machine with an NVIDIA GPU, with the whole
file under the CuPy backend (``TEACHGRAD_TEST_BACKEND=cupy``) or not: each test
enters the backend itself.
"""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad import backend


@pytest.fixture
def cupy():
    try:
        with backend.using("cupy"):
            pass
    except RuntimeError as error:
        pytest.skip(f"no CuPy backend here: {error}")
    import cupy
    with backend.using("cupy"):
        yield cupy


def _mlp(x, params):
    W1, b1, W2, b2 = params
    h = tg.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    return -tg.mean(tg.log_softmax(logits)[:, 0])


def _problem(rng, dtype=np.float32):
    x = rng.standard_normal((64, 32)).astype(dtype)
    params = [rng.standard_normal((32, 16)).astype(dtype) * 0.2, np.zeros(16, dtype),
              rng.standard_normal((16, 5)).astype(dtype) * 0.2, np.zeros(5, dtype)]
    return x, params


def _grads_on(name, x, params, traced):
    with backend.using(name):
        variables = [tg.Variable(p) for p in params]
        xt = tg.constant(x)
        if traced:
            @tg.function
            def step(x):
                loss = _mlp(x, variables)
                return loss, tg.gradients(loss, variables)
            loss, grads = step(xt)
        else:
            with tg.GradientTape() as tape:
                loss = _mlp(xt, variables)
            grads = tape.gradient(loss, variables)
        assert all(isinstance(g.value, backend.xp.ndarray) for g in grads)
        return loss.numpy(), [g.numpy() for g in grads]


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "tg.function"])
def test_mlp_gradient_on_the_gpu_matches_numpy(cupy, traced):
    x, params = _problem(np.random.default_rng(0))
    want_loss, want = _grads_on("numpy", x, params, traced)
    got_loss, got = _grads_on("cupy", x, params, traced)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


def test_a_gradient_makes_no_host_round_trip(cupy):
    """Nothing in a tape's forward or backward pass copies to the host or waits for the
    GPU: CuPy raises ``DeviceSynchronized`` inside ``allow_synchronize(False)`` if it did
    (a ``.get()``, ``float()`` of an array, or a numpy call on a GPU array)."""
    import cupyx
    x, params = _problem(np.random.default_rng(1))
    variables = [tg.Variable(p) for p in params]
    xt = tg.constant(x)
    for _ in range(2):                       # the second time with every kernel compiled
        with cupyx.allow_synchronize(False):
            with tg.GradientTape() as tape:
                loss = _mlp(xt, variables)
            grads = tape.gradient(loss, variables)
    assert np.isfinite(loss.numpy()) and all(np.isfinite(g.numpy()).all() for g in grads)


def test_fused_programs_compile_to_one_cuda_kernel(cupy):
    def chain(x):
        h = x
        for _ in range(5):
            h = tg.tanh(h * 1.5 + 0.25)
        return tg.gradients(tg.sum(h * h), [x])[0]

    x = np.random.default_rng(2).standard_normal((128, 64)).astype(np.float32)
    optimised, traced = tg.function(chain), tg.function(chain, optimize=False)
    got, want = optimised(tg.constant(x)), traced(tg.constant(x))
    # float32, and the fused kernel may contract a multiply and an add into one FMA:
    # the same sums, rounded once instead of twice.
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    nodes = optimised.get_concrete_function(tg.constant(x)).optimized.graph.get_operations()
    programs = [n.params["program"] for n in nodes if "program" in n.params]
    assert programs, "the optimiser fused nothing"
    for program in programs:
        assert type(program._run).__module__.startswith("cupy"), type(program._run)


def test_sparse_gather_gradient_scatters_on_the_gpu(cupy):
    params = tg.Variable(np.arange(12.0).reshape(6, 2))
    with tg.GradientTape() as tape:
        y = tg.sum(tg.gather(params, [0, 2, 2, 5]) * 2.0)
    g = tape.gradient(y, params)
    assert isinstance(g, tg.IndexedSlices)
    dense = g.to_dense()
    assert isinstance(dense.value, cupy.ndarray)
    np.testing.assert_array_equal(dense.numpy(), [[2, 2], [0, 0], [4, 4], [0, 0], [0, 0], [2, 2]])


def test_control_flow_and_forward_mode_on_the_gpu(cupy):
    x = tg.Variable(np.float32(0.5))

    @tg.function
    def f(x):
        _, y = tg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tg.sin(y) * 2.0), (0, x))
        return tg.cond(y > 0, lambda: y * y, lambda: -y)

    with tg.GradientTape() as tape:
        y = f(x)
    g = tape.gradient(y, x)
    with tg.ForwardAccumulator(x, tg.constant(np.float32(1.0))) as acc:
        y2 = f(x)
    t = acc.jvp(y2)
    assert isinstance(g.value, cupy.ndarray) and isinstance(t.value, cupy.ndarray)

    def numpy_f(v):
        for _ in range(3):
            v = np.sin(v) * 2.0
        return v * v if v > 0 else -v
    eps = 1e-3
    fd = (numpy_f(0.5 + eps) - numpy_f(0.5 - eps)) / (2 * eps)
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-3)
    np.testing.assert_allclose(t.numpy(), fd, rtol=1e-3)


def test_float32_stays_float32_on_the_gpu(cupy):
    x = tg.constant(np.ones(4, np.float32))
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sum(tg.exp(x) * 2 + 1.5)        # Python numbers do not promote
    g = tape.gradient(y, x)
    assert y.dtype == tg.float32 and g.dtype == tg.float32
    assert g.value.dtype == np.float32


def test_cofactor_of_a_float32_matrix_with_subnormal_entries(cupy):
    """CuPy's float32 SVD gave infinite singular values here (H100, CuPy 14.2), so det's
    gradient and tg.linalg.cofactor were NaN; the SVD now runs in float64."""
    from teachgrad.ops.linalg import matrix
    a = np.array([[[2, 5.87747175e-39], [5.87747175e-39, 2]]], np.float32)
    x = tg.constant(a)
    with tg.GradientTape() as tape:
        tape.watch(x)
        det = tg.linalg.det(x)
    got = matrix.cofactor(x)
    assert got.dtype == tg.float32 and isinstance(got.value, cupy.ndarray)
    np.testing.assert_allclose(got.numpy(), [[[2, 0], [0, 2]]], atol=1e-6)
    np.testing.assert_allclose(tape.gradient(det, x).numpy(), got.numpy(), atol=1e-6)


def test_every_convolution_takes_one_im2col_on_the_gpu(cupy):
    """The filters' cotangent too (on the CPU one matmul per output pixel): measured
    faster on an H100 for every convolution of benchmarks/peers/gpu_peers.py."""
    from teachgrad.ops.nn import conv_kernels
    assert conv_kernels.choose((16, 34, 34, 32), (32, 32, 32, 32), (1, 1), (1, 1),
                               (3, 3), 4) == "windows"
