"""tg.linearize and tg.linear_transpose (issue 41, item 10), JAX's semantics."""
import numpy as np
import pytest

import teachgrad as tg

A = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_linear_transpose_of_a_matrix_is_its_transpose(mode):
    def compute(x, u):
        (xt,) = tg.linear_transpose(lambda v: tg.constant(A) @ v, x)(u)
        return xt
    fn = tg.function(compute) if mode == "function" else compute
    got = fn(tg.zeros((3,)), tg.constant([1.0, -2.0]))
    np.testing.assert_allclose(got.numpy(), A.T @ [1.0, -2.0])


def test_linear_transpose_satisfies_the_inner_product_identity():
    rng = np.random.default_rng(0)
    x = {"a": tg.constant(rng.standard_normal(3)), "b": tg.constant(rng.standard_normal((2, 2)))}
    u = (tg.constant(rng.standard_normal(2)), tg.constant(rng.standard_normal(3)))

    def f(t):
        return (tg.constant(A) @ t["a"] + tg.sum(t["b"], axis=0), 2.0 * t["a"] - t["a"][::-1])
    (xt,) = tg.linear_transpose(f, x)(u)
    fx = f(x)
    lhs = sum(np.sum(a.numpy() * b.numpy()) for a, b in zip(fx, u))
    rhs = np.sum(x["a"].numpy() * xt["a"].numpy()) + np.sum(x["b"].numpy() * xt["b"].numpy())
    np.testing.assert_allclose(lhs, rhs)
    assert set(xt) == {"a", "b"} and xt["b"].shape == (2, 2)


def test_transposing_a_vjp_gives_the_jvp():
    # Lesson 5's trick: vjp_fn is linear in its cotangent, and its transpose is the JVP.
    x, x_dot = tg.constant([1.0, 2.0, -3.0]), tg.constant([1.0, 0.5, 2.0])
    out, vjp_fn = tg.vjp(lambda v: tg.sin(v) * v ** 2, x)
    (y_dot,) = tg.linear_transpose(vjp_fn, tg.ones_like(out))((x_dot,))
    np.testing.assert_allclose(y_dot.numpy(), tg.jvp(lambda v: tg.sin(v) * v ** 2,
                                                     (x,), (x_dot,))[1].numpy())


def test_linear_transpose_refuses_a_nonlinear_function_and_bad_cotangents():
    for f in (lambda x: x * x, tg.tanh, lambda x: tg.exp(x) - 1.0):
        with pytest.raises(TypeError, match=r"not linear.*primals\[0\]"):
            tg.linear_transpose(f, tg.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"primals\[1\]\['w'\]"):
        tg.linear_transpose(lambda a, p: a * 2.0 + p["w"] * p["w"], 1.0, {"w": 2.0})
    f_t = tg.linear_transpose(lambda x: (3.0 * x, x), tg.zeros((2,)))
    with pytest.raises(ValueError, match="shape"):
        f_t((tg.ones((3,)), tg.ones((2,))))
    with pytest.raises(TypeError, match="dtype float32"):
        f_t((tg.ones((2,), dtype=tg.float32), tg.ones((2,))))
    with pytest.raises(ValueError, match="structure"):
        f_t(tg.ones((2,)))
    with pytest.raises(TypeError, match="f"):
        tg.linear_transpose(3.0, 1.0)


def test_linear_transpose_of_an_unconnected_argument_is_zero():
    (dx, dy) = tg.linear_transpose(lambda x, y: 2.0 * x, tg.zeros((2,)), tg.zeros((3,)))(
        tg.ones((2,)))
    np.testing.assert_array_equal(dx.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(dy.numpy(), np.zeros(3))


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_linearize_evaluates_the_jvp_at_many_tangents(mode):
    def f(x, p):
        return {"y": tg.sin(x) * p["w"], "s": tg.sum(x * x)}

    def compute(x, w):
        out, f_jvp = tg.linearize(f, x, {"w": w})
        columns = [f_jvp(tg.constant(e), {"w": tg.zeros_like(w)}) for e in np.eye(3)]
        wdot = f_jvp(tg.zeros_like(x), {"w": tg.ones_like(w)})
        return [out["y"], out["s"]] + [c["y"] for c in columns] + [c["s"] for c in columns] \
            + [wdot["y"]]
    fn = tg.function(compute) if mode == "function" else compute
    x, w = np.array([0.5, -1.0, 2.0]), np.array([2.0, 3.0, -1.0])
    got = [r.numpy() for r in fn(tg.constant(x), tg.constant(w))]
    np.testing.assert_allclose(got[0], np.sin(x) * w)
    np.testing.assert_allclose(got[1], np.sum(x * x))
    np.testing.assert_allclose(np.stack(got[2:5], axis=1), np.diag(np.cos(x) * w))
    np.testing.assert_allclose(got[5:8], 2 * x)
    np.testing.assert_allclose(got[8], np.sin(x))


def test_linearize_runs_f_once_and_checks_tangents():
    calls = []

    def f(x):
        calls.append(1)
        return tg.exp(x)
    out, f_jvp = tg.linearize(f, tg.constant([0.0, 1.0]))
    for t in ([1.0, 0.0], [0.0, 1.0], [2.0, 2.0]):
        np.testing.assert_allclose(f_jvp(tg.constant(t)).numpy(), np.exp([0.0, 1.0]) * t)
    assert len(calls) == 1
    with pytest.raises(ValueError, match="shape"):
        f_jvp(tg.ones((3,)))
    out, f_jvp, aux = tg.linearize(lambda x: (x * 2.0, "aux"), 1.0, has_aux=True)
    assert aux == "aux" and f_jvp(1.5).numpy() == 3.0
    _, f_jvp = tg.linearize(lambda x, y: x * 2.0, 1.0, 1.0)   # y unconnected
    assert f_jvp(1.0, 5.0).numpy() == 2.0
