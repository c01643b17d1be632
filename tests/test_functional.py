"""grad, value_and_grad, vjp, jacrev, hessian and gradcheck."""
import numpy as np
import pytest

import teachgrad as tg


def test_grad_of_scalar_function():
    assert tg.grad(lambda x: x ** 3)(2.0).numpy() == 12.0
    dx, dy = tg.grad(lambda x, y: x * y + y, argnums=(0, 1))(2.0, 3.0)
    assert (dx.numpy(), dy.numpy()) == (3.0, 3.0)


def test_grad_unconnected_argument_gets_zeros():
    g = tg.grad(lambda x, y: tg.sum(x) * 2, argnums=1)(tg.constant([1.0]), tg.constant([1.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_grad_of_nested_argument_and_sparse_densified():
    params = {"w": tg.constant([1.0, 2.0]), "table": tg.constant(np.eye(3))}
    g = tg.grad(lambda p: tg.sum(p["w"] ** 2) + tg.sum(tg.gather(p["table"], [1])))(params)
    np.testing.assert_allclose(g["w"].numpy(), [2.0, 4.0])
    assert isinstance(g["table"], tg.Tensor)
    np.testing.assert_allclose(g["table"].numpy(), [[0, 0, 0], [1, 1, 1], [0, 0, 0]])


def test_grad_rejects_non_scalar_output_and_integer_input():
    with pytest.raises(TypeError, match="scalar"):
        tg.grad(lambda x: x * 2)(tg.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating"):
        tg.grad(lambda x: x * 2)(3)
    with pytest.raises(ValueError, match="argnums"):
        tg.grad(lambda x: x, argnums=3)(1.0)


def test_value_and_grad():
    value, g = tg.value_and_grad(lambda x: tg.sum(tg.exp(x)))(tg.constant([0.0, 1.0]))
    assert np.isclose(value.numpy(), 1 + np.e)
    np.testing.assert_allclose(g.numpy(), [1.0, np.e])


def test_vjp_can_be_called_repeatedly():
    out, vjp_fn = tg.vjp(lambda x, y: x * y, tg.constant([1.0, 2.0]), tg.constant([3.0, 4.0]))
    np.testing.assert_allclose(out.numpy(), [3.0, 8.0])
    for ct in ([1.0, 0.0], [0.0, 1.0]):
        dx, dy = vjp_fn(tg.constant(ct))
        np.testing.assert_allclose(dx.numpy(), np.array(ct) * [3.0, 4.0])
        np.testing.assert_allclose(dy.numpy(), np.array(ct) * [1.0, 2.0])
    with pytest.raises(ValueError, match="structure"):
        vjp_fn([tg.constant(1.0), tg.constant(2.0)])


def test_jacrev_and_hessian():
    jac = tg.jacrev(lambda x: tg.stack([x[0] ** 2, x[0] * x[1]]))(tg.constant([2.0, 3.0]))
    np.testing.assert_allclose(jac.numpy(), [[4.0, 0.0], [3.0, 2.0]])
    hess = tg.hessian(lambda x: tg.sum(x ** 3))(tg.constant([1.0, 2.0]))
    np.testing.assert_allclose(hess.numpy(), np.diag([6.0, 12.0]))


def test_gradcheck_passes_on_correct_rules():
    assert tg.gradcheck(lambda x, y: tg.sum(tg.tanh(x @ y)),
                        [np.random.default_rng(0).normal(size=(2, 3)),
                         np.random.default_rng(1).normal(size=(3, 2))])


def test_gradcheck_names_the_wrong_entry():
    cube_p = tg.ops.primitive("cube", lambda x: x ** 3)
    tg.ops.defvjp(cube_p, lambda g, ans, x: g * 3 * x)   # wrong: should be 3 x^2
    with pytest.raises(tg.GradcheckError, match=r"input 0 at entry \(1,\).*analytic 6\b.*numeric 12\b"):
        tg.gradcheck(lambda x: tg.ops.bind(cube_p, x), [np.array([1.0, 2.0])])
    assert not tg.gradcheck(lambda x: tg.ops.bind(cube_p, x), [np.array([1.0, 2.0])],
                            raise_exception=False)
    tg.ops.defvjp(cube_p, lambda g, ans, x: g * 3 * x * x)
    assert tg.gradcheck(lambda x: tg.ops.bind(cube_p, x), [np.array([1.0, 2.0])])


def test_a_rule_with_the_wrong_shape_is_reported():
    bad_p = tg.ops.primitive("bad_sum", lambda x: x.sum())
    tg.ops.defvjp(bad_p, lambda g, ans, x: g)   # forgot to broadcast back to x's shape
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.ops.bind(bad_p, x)
    with pytest.raises(ValueError, match="bad_sum.*Original input shape: \\(2,\\)"):
        tape.gradient(y, x)
