"""Vectorized Jacobians: tape.jacobian / batch_jacobian (pfor and the loop), jacrev,
jacfwd, hessian.

TensorFlow's documented numbers; the one-pass (``experimental_use_pfor=True``) result
equals the per-row loop's on random functions, eagerly, in tg.function and in a Graph;
nested and unconnected sources; Jacobians of gradients; TensorFlow's errors; and the
functional API against loops and finite differences.
"""
import warnings

import numpy as np
import pytest

import teachgrad as tg

RNG = np.random.default_rng(28)
W = RNG.normal(size=(4, 3))
B = RNG.normal(size=4)


def _matmul_tanh(x):
    return tg.tanh(tg.matmul(tg.constant(W), x) + tg.constant(B))


def _softmax_reductions(x):
    s = tg.softmax(tg.stack([x[0] * x[1], tg.sum(x ** 2), tg.max(x)]))
    return s * tg.mean(tg.exp(x))


def _indexing_matrix(x):
    m = tg.reshape(tg.concat([x, x * x], axis=0), (2, 3))
    return tg.sin(m[:, 1:]) * m[1, 0] + tg.gather(x, [2, 0])


FUNCTIONS = {"matmul_tanh": _matmul_tanh, "softmax_reductions": _softmax_reductions,
             "indexing": _indexing_matrix}
X = np.array([0.3, -1.2, 0.8])


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    # Ops without a batching rule yet loop per example with a UserWarning: right anyway.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "tg.vectorized_map", UserWarning)
        yield


def _both(f, x, **kwargs):
    """f's Jacobian at x by one pass and by the loop, from one persistent tape."""
    x = tg.constant(x)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    return (tape.jacobian(y, x, **kwargs),
            tape.jacobian(y, x, experimental_use_pfor=False, **kwargs))


def _finite_differences(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.asarray(f(tg.constant(x)).numpy())
    jac = np.zeros(out.shape + x.shape)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = eps
        plus, minus = f(tg.constant(x + step)).numpy(), f(tg.constant(x - step)).numpy()
        jac[(...,) + k] = (plus - minus) / (2 * eps)
    return jac


# -- TensorFlow's documented examples -------------------------------------------------
def test_tensorflow_jacobian_example():
    with tg.GradientTape() as g:
        x = tg.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    jacobian = g.jacobian(y, x)
    np.testing.assert_array_equal(jacobian.numpy(), [[2.0, 0.0], [0.0, 4.0]])


def test_tensorflow_batch_jacobian_example():
    with tg.GradientTape() as g:
        x = tg.constant([[1.0, 2.0], [3.0, 4.0]], dtype=tg.float32)
        g.watch(x)
        y = x * x
    batch_jacobian = g.batch_jacobian(y, x)
    assert batch_jacobian.dtype == tg.float32
    np.testing.assert_array_equal(batch_jacobian.numpy(),
                                  [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


def test_batch_jacobian_of_a_cube_and_its_second_order():
    # y = x^3 per entry: dy/dx = 3 x^2 on the diagonal, and d/dx of that is 6 x.
    x = tg.constant([[4.0, 2.0], [1.0, 3.0]], dtype=tg.float32)
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        first = inner.batch_jacobian(y, x)
    second = outer.batch_jacobian(first, x)
    np.testing.assert_array_equal(first.numpy(), [[[48, 0], [0, 12]], [[3, 0], [0, 27]]])
    expected = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for k in range(2):
            expected[i, k, k, k] = 6 * x.numpy()[i, k]
    np.testing.assert_array_equal(second.numpy(), expected)


# -- one pass equals the loop ---------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_one_pass_equals_the_loop_eagerly(name):
    one_pass, loop = _both(FUNCTIONS[name], X)
    assert one_pass.shape == loop.shape
    np.testing.assert_allclose(one_pass.numpy(), loop.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(one_pass.numpy(), _finite_differences(FUNCTIONS[name], X),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_one_pass_equals_the_loop_in_tg_function(name):
    f = FUNCTIONS[name]

    @tg.function
    def jacobians(x):
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x)
        return tape.jacobian(y, x), tape.jacobian(y, x, experimental_use_pfor=False)

    one_pass, loop = jacobians(tg.constant(X))
    eager, _ = _both(f, X)
    np.testing.assert_allclose(one_pass.numpy(), loop.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(one_pass.numpy(), eager.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_one_pass_equals_the_loop_in_a_graph(name):
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(3,))
        with tg.GradientTape() as tape:   # one-shot: the single pass is allowed
            tape.watch(x)
            y = FUNCTIONS[name](x)
        one_pass = tape.jacobian(y, x)
        with tg.GradientTape() as tape:   # in a graph the loop needs no persistent tape
            tape.watch(x)
            y = FUNCTIONS[name](x)
        loop = tape.jacobian(y, x, experimental_use_pfor=False)
    assert tuple(one_pass.shape) == tuple(y.shape) + (3,)
    a, b = tg.Session(graph).run([one_pass, loop], feed_dict={x: X})
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a, _both(FUNCTIONS[name], X)[0].numpy(), rtol=1e-12)


def test_one_pass_runs_one_backward_pass_and_the_loop_one_per_row():
    x = tg.constant(X)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = _matmul_tanh(x)
    with tg.viz.record() as one:
        tape.jacobian(y, x)
    with tg.viz.record() as loop:
        tape.jacobian(y, x, experimental_use_pfor=False)
    assert len(one.traces) == 1
    assert len(loop.traces) == 4   # y has 4 entries


def test_a_one_shot_tape_gives_its_one_pass_then_is_released():
    x = tg.constant(X)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = _matmul_tanh(x)
    jac = tape.jacobian(y, x)
    assert jac.shape == (4, 3) and tape.released
    with pytest.raises(RuntimeError, match="only be used to compute one set"):
        tape.jacobian(y, x)


def test_target_and_source_shapes_are_kept():
    m = tg.constant(RNG.normal(size=(2, 3)))
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(m)
        y = tg.matmul(m, tg.transpose(m))         # (2, 2) from (2, 3)
        total = tg.sum(y)
    one_pass = tape.jacobian(y, m)
    loop = tape.jacobian(y, m, experimental_use_pfor=False)
    assert one_pass.shape == loop.shape == (2, 2, 2, 3)
    np.testing.assert_allclose(one_pass.numpy(), loop.numpy(), rtol=1e-12)
    scalar = tape.jacobian(total, m)           # a scalar target: the gradient's shape
    assert scalar.shape == (2, 3)
    np.testing.assert_allclose(scalar.numpy(), tape.gradient(total, m).numpy())


# -- sources: nested, Variables, unconnected ------------------------------------------
@pytest.mark.parametrize("pfor", [True, False])
def test_nested_sources_and_variables(pfor):
    a = tg.constant([1.0, 2.0])
    v = tg.Variable([[0.5], [-1.0]])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(a)
        y = tg.tanh(a * tg.reshape(v, (2,))) + a[0]
    jac = tape.jacobian(y, {"a": a, "more": [v]}, experimental_use_pfor=pfor)
    assert set(jac) == {"a", "more"} and jac["more"][0].shape == (2, 2, 1)
    av, vv = a.numpy(), v.numpy().ravel()
    sech2 = 1 - np.tanh(av * vv) ** 2
    np.testing.assert_allclose(jac["a"].numpy(), np.diag(sech2 * vv) + [[1, 0], [1, 0]])
    np.testing.assert_allclose(jac["more"][0].numpy()[..., 0], np.diag(sech2 * av))


@pytest.mark.parametrize("pfor", [True, False])
def test_unconnected_sources(pfor):
    x, other = tg.constant([1.0, 2.0]), tg.constant([3.0, 4.0, 5.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([x, other])
        y = x * 3.0
    tape.explain_none = False
    jx, jo = tape.jacobian(y, [x, other], experimental_use_pfor=pfor)
    np.testing.assert_array_equal(jx.numpy(), 3 * np.eye(2))
    assert jo is None
    jx, jo = tape.jacobian(y, [x, other], unconnected_gradients="zero",
                           experimental_use_pfor=pfor)
    np.testing.assert_array_equal(jo.numpy(), np.zeros((2, 3)))
    # batch_jacobian gives zeros for an unconnected source, as TensorFlow's does
    xb, ob = tg.constant([[1.0, 2.0]]), tg.constant([[1.0, 2.0, 3.0]])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([xb, ob])
        yb = xb * 2.0
    tape.explain_none = False
    zeros = tape.batch_jacobian(yb, ob, experimental_use_pfor=pfor)
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((1, 2, 3)))


def test_sparse_gradients_come_back_dense():
    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.gather(x, [2, 0, 2]) ** 2
    one_pass, loop = tape.jacobian(y, x), tape.jacobian(y, x, experimental_use_pfor=False)
    expected = [[0, 0, 6], [2, 0, 0], [0, 0, 6]]
    # (close, not equal: on CuPy the rule's arithmetic can differ from numpy's in the last bit)
    np.testing.assert_allclose(one_pass.numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(loop.numpy(), expected, rtol=1e-14)
    assert not isinstance(one_pass, tg.IndexedSlices) and not isinstance(loop, tg.IndexedSlices)


# -- higher order ---------------------------------------------------------------------
def test_jacobian_of_a_gradient_is_the_hessian():
    def f(x):
        return tg.sum(tg.tanh(tg.matmul(tg.constant(W), x)) ** 2) + x[0] * x[1] ** 3

    x = tg.constant(X)
    with tg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    hess = outer.jacobian(g, x)
    np.testing.assert_allclose(hess.numpy(), outer.jacobian(g, x, experimental_use_pfor=False)
                               .numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hess.numpy(), hess.numpy().T, atol=1e-12)
    np.testing.assert_allclose(hess.numpy(), tg.hessian(f)(tg.constant(X)).numpy(), rtol=1e-10)


def test_jacobian_of_a_jacobian():
    x = tg.constant(X)
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = _softmax_reductions(x)
        jac = inner.jacobian(y, x)
    second = outer.jacobian(jac, x)
    assert second.shape == (3, 3, 3)
    reference = _finite_differences(lambda v: tg.jacrev(_softmax_reductions)(v), X, eps=1e-5)
    np.testing.assert_allclose(second.numpy(), reference, rtol=1e-5, atol=1e-6)


# -- batch_jacobian -------------------------------------------------------------------
def _layer(x):   # example i of the result depends on example i of x only
    return tg.tanh(tg.matmul(x, tg.constant(W.T)) + tg.constant(B))


def test_batch_jacobian_is_the_stack_of_per_example_jacobians():
    xs = RNG.normal(size=(5, 3))
    x = tg.constant(xs)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = _layer(x)
    one_pass = tape.batch_jacobian(y, x)
    loop = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    assert one_pass.shape == loop.shape == (5, 4, 3)
    per_example = np.stack([tg.jacrev(_layer)(tg.constant(row[None]))[0, :, 0]
                            .numpy() for row in xs])
    np.testing.assert_allclose(one_pass.numpy(), loop.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(one_pass.numpy(), per_example, rtol=1e-12, atol=1e-12)


def test_batch_jacobian_of_higher_rank_examples():
    x = tg.constant(RNG.normal(size=(2, 3, 2)))
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.reshape(tg.sin(x), (2, 6))[:, :4] * tg.sum(x, axis=(1, 2), keepdims=True)[:, 0]
    one_pass = tape.batch_jacobian(y, x)
    loop = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    assert one_pass.shape == (2, 4, 3, 2)
    np.testing.assert_allclose(one_pass.numpy(), loop.numpy(), rtol=1e-12, atol=1e-12)
    full = tape.jacobian(y, x).numpy()               # (2, 4, 2, 3, 2): take i == i
    np.testing.assert_allclose(one_pass.numpy(), np.stack([full[i, :, i] for i in range(2)]))


def test_batch_jacobian_in_tg_function_and_with_an_unknown_batch_size():
    xs = RNG.normal(size=(5, 3))

    @tg.function
    def batch_jac(x):
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = _layer(x)
        return tape.batch_jacobian(y, x)

    traced = batch_jac(tg.constant(xs))
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(None, 3))
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = _layer(x)
        loop = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    assert tuple(loop.shape) == (None, 4, 3)
    unknown = tg.Session(graph).run(loop, feed_dict={x: xs})
    x = tg.constant(xs)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = _layer(x)
    eager = tape.batch_jacobian(y, x)
    np.testing.assert_allclose(traced.numpy(), unknown, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-12, atol=1e-12)


# -- errors, as TensorFlow's ----------------------------------------------------------
def _tape_of(x, f):
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape, y


def test_batch_jacobian_errors():
    x = tg.constant([[1.0, 2.0], [3.0, 4.0]])
    tape, y = _tape_of(x, lambda v: v * v)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(3, 2\) "
                                         r"and source shape \(2, 2\) to match"):
        tape.batch_jacobian(tg.concat([y, y[:1]], axis=0), x)
    with pytest.raises(ValueError, match=r"Shape \(4,\) of the target must have rank at "
                                         r"least 2"):
        tape.batch_jacobian(tg.reshape(y, (4,)), x)
    v = tg.constant([1.0, 2.0])
    tape, y = _tape_of(v, lambda u: u * u)
    with pytest.raises(ValueError, match=r"Shape \(2,\) of the target must have rank"):
        tape.batch_jacobian(y, v)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_the_loop_needs_a_persistent_tape_eagerly(method):
    x = tg.constant([[1.0, 2.0]])
    tape, y = _tape_of(x, tg.sin)
    with pytest.raises(RuntimeError, match=f"persistent=True to compute the {method}"):
        getattr(tape, method)(y, x, experimental_use_pfor=False)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_a_used_tape_and_bad_arguments(method):
    x = tg.constant([[1.0, 2.0]])
    tape, y = _tape_of(x, tg.sin)
    with pytest.raises(ValueError, match="unconnected_gradients"):
        getattr(tape, method)(y, x, unconnected_gradients="nan")
    with pytest.raises(TypeError, match="experimental_use_pfor"):
        getattr(tape, method)(y, x, experimental_use_pfor="yes")
    with pytest.raises(ValueError, match="parallel_iterations"):
        getattr(tape, method)(y, x, parallel_iterations=0)
    getattr(tape, method)(y, x, parallel_iterations=4)   # accepted, as TensorFlow's knob
    with pytest.raises(RuntimeError, match="only be used to compute one set"):
        getattr(tape, method)(y, x)


# -- jacrev, jacfwd, hessian ----------------------------------------------------------
def _jacfwd_by_columns(f, x):
    """The forward-mode Jacobian one column (one accumulator) at a time."""
    columns = []
    for k in range(x.size):
        basis = np.zeros(x.size)
        basis[k] = 1.0
        with tg.ForwardAccumulator(x, tg.constant(basis.reshape(x.shape))) as acc:
            y = f(x)
        columns.append(acc.jvp(y, unconnected_gradients="zero").numpy())
    return np.stack(columns, axis=-1).reshape(tuple(y.shape) + tuple(x.shape))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jacrev_and_jacfwd_equal_the_loops_and_finite_differences(name):
    f, x = FUNCTIONS[name], tg.constant(X)
    reverse, forward = tg.jacrev(f)(x).numpy(), tg.jacfwd(f)(x).numpy()
    np.testing.assert_allclose(reverse, _both(f, X)[1].numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(forward, _jacfwd_by_columns(f, x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(reverse, _finite_differences(f, X), rtol=1e-6, atol=1e-6)


def test_jacfwd_runs_the_function_once():
    calls = []

    def f(x, y):
        calls.append(1)
        return tg.stack([tg.sum(x * y[0]), x[1] ** 2])

    jx, jy = tg.jacfwd(f, argnums=(0, 1))(tg.constant([1.0, 2.0]), tg.constant([3.0, 4.0, 5.0]))
    assert len(calls) == 1
    np.testing.assert_array_equal(jx.numpy(), [[3.0, 3.0], [0.0, 4.0]])
    np.testing.assert_array_equal(jy.numpy(), [[3.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_jacfwd_with_several_outputs_and_an_empty_argument():
    def f(x, e):
        return {"a": tg.sin(x), "b": tg.sum(x) + tg.sum(e)}

    x, empty = tg.constant([0.5, 1.0]), tg.constant(np.zeros(0))
    jac = tg.jacfwd(f, argnums=(0, 1))(x, empty)
    np.testing.assert_allclose(jac["a"][0].numpy(), np.diag(np.cos([0.5, 1.0])))
    assert jac["a"][1].shape == (2, 0) and jac["b"][1].shape == (0,)
    np.testing.assert_array_equal(jac["b"][0].numpy(), [1.0, 1.0])
    assert tg.jacfwd(lambda e: e * 2.0)(empty).shape == (0, 0)


def test_hessian_equals_finite_differences_of_the_gradient():
    def f(x):
        return tg.sum(tg.softmax(tg.matmul(tg.constant(W), x)) * tg.constant(B)) * x[2]

    hess = tg.hessian(f)(tg.constant(X)).numpy()
    reference = _finite_differences(tg.grad(f), X, eps=1e-5)
    np.testing.assert_allclose(hess, reference, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(hess, hess.T, atol=1e-12)


def test_batch_jacobian_with_an_unknown_batch_size_by_one_pass():
    # The batch size is known only when the graph runs: the one pass still builds, and
    # equals the loop.
    xs = RNG.normal(size=(5, 3))
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(None, 3))
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = _layer(x)
        loop = tape.batch_jacobian(y, x, experimental_use_pfor=False)
        one_pass = tape.batch_jacobian(y, x)
    a, b = tg.Session(graph).run([one_pass, loop], feed_dict={x: xs})
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _products(fn, *args):
    """The matmul nodes of ``fn``'s graph as it runs (optimised), and every op's name."""
    optimized = fn.get_concrete_function(*args).optimized
    graph = getattr(optimized, "graph", optimized)
    ops = [node.op.name for node in graph.nodes]
    return [node for node in graph.nodes if node.op.name == "matmul"], ops


def test_a_traced_jacobian_of_a_matrix_vector_layer_is_one_matrix_product():
    """The VJP of ``W @ x`` for the 4 one-hot seeds at once is ``seeds @ W``: one 2-D
    product (numpy would run a stack of matrix-vector products for ``W.T @ seeds[..., None]``),
    eagerly and in a tg.function, with the analytic Jacobian as the result."""
    x = tg.constant(X)
    want = (1 - np.tanh(W @ X + B) ** 2)[:, None] * W
    traced = tg.function(tg.jacrev(_matmul_tanh))
    np.testing.assert_allclose(traced(x).numpy(), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tg.jacrev(_matmul_tanh)(x).numpy(), want, rtol=1e-12,
                               atol=1e-14)
    products, ops = _products(traced, x)
    assert [tuple(len(t.shape) for t in node.inputs) for node in products] == [(2, 1), (2, 2)]
    assert "call" not in ops


def test_a_fused_cotangent_op_computes_its_shared_input_once_per_jacobian():
    """Under the Jacobian's map the seeds are batched and tanh's output y is shared: the
    cotangent ``(1 - y * y) * seeds`` is computed by the fused op's own steps, which
    broadcast, so ``1 - y * y`` is worked out once for the 4 rows, not on y repeated
    along the batch (no ``repeat_like`` node in the traced graph)."""
    x = tg.constant(X)
    traced = tg.function(tg.jacrev(_matmul_tanh))
    want = (1 - np.tanh(W @ X + B) ** 2)[:, None] * W
    np.testing.assert_allclose(traced(x).numpy(), want, rtol=1e-12, atol=1e-14)
    _, ops = _products(traced, x)
    assert "repeat_like" not in ops


def test_a_traced_hvp_runs_as_many_products_as_forward_over_reverse_needs():
    """tg.function over tg.hvp is one graph the optimiser sees whole: the gradient's
    own products for the weights (which only their tangents need) are pruned, leaving
    what XLA keeps for ``jax.jit(jax.jvp(jax.grad(f)))`` on the same loss: 19 products
    for three layers (forward 1 + 3 + 3 with tangents, backward 2 + 2 + 2 + 2 + 2 + 1)."""
    rng = np.random.default_rng(3)
    sizes = (5, 4, 4, 3)
    ws = [tg.Variable(rng.normal(size=s) / 2) for s in zip(sizes[:-1], sizes[1:])]
    vs = tuple(tg.constant(rng.normal(size=w.shape)) for w in ws)
    labels = tg.constant(np.eye(3)[[0, 2]])

    def loss(x, params):
        h = x
        for w in params[:-1]:
            h = tg.tanh(h @ w)
        return -tg.mean(tg.sum(labels * tg.log_softmax(h @ params[-1]), axis=-1))

    traced = tg.function(lambda x: tg.hvp(lambda *p: loss(x, p), tuple(ws), vs))
    x = tg.constant(rng.normal(size=(2, 5)))
    eager = tg.hvp(lambda *p: loss(x, p), tuple(ws), vs)
    for got, want in zip(traced(x), eager):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    products, ops = _products(traced, x)
    assert len(products) == 19
    assert "call" not in ops
