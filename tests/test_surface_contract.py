"""The input contract on the newer surface (issue 30, part 5): each case gets the right
answer, or an error naming the function and the argument."""
import numpy as np
import pytest

import teachgrad as tg


def _gradient(f, x):
    return tg.grad(f)(tg.constant(x))


# -- a list of tensors is stacked, and differentiated through -----------------------------

LIST_TAKERS = {
    "mean": lambda v: tg.mean(v),
    "linalg.norm": lambda v: tg.linalg.norm(v),
    "sum": lambda v: tg.sum(v),
    "exp": lambda v: tg.sum(tg.exp(v)) / 3.0,
    "add": lambda v: tg.sum(tg.add(v, 1.0)),
    "moments": lambda v: tg.nn.moments(v, [0])[0],
    "max": lambda v: tg.max(v),
    "operator": lambda v: tg.sum(tg.constant([1.0, 0.0]) * v),
}


@pytest.mark.parametrize("label", sorted(LIST_TAKERS))
def test_a_list_of_tensors_is_differentiated_through(label):
    f = LIST_TAKERS[label]
    grad = _gradient(lambda x: f([x, x * 0.0 - 2.0]), 1.0)
    expected = {"mean": 0.5, "linalg.norm": 1 / np.sqrt(5.0), "sum": 1.0, "exp": np.e / 3,
                "add": 1.0, "moments": 0.5, "max": 1.0, "operator": 1.0}[label]
    np.testing.assert_allclose(grad.numpy(), expected)


def test_the_issue_examples_have_gradient_one():
    assert _gradient(lambda x: tg.mean([x, x + 2]), 1.0).numpy() == 1.0
    grad = _gradient(lambda x: tg.linalg.norm([x, x + 2]) ** 2 / 2, [3.0, 4.0])
    np.testing.assert_allclose(grad.numpy(), [8.0, 10.0])


def test_nested_lists_of_tensors_and_numbers_keep_the_tensor_dtype():
    x = tg.constant(1.0, dtype=tg.float32)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sum(tg.exp([[x, 1.0], (2.0, x)]))
    assert y.dtype == np.float32
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * np.e, rtol=1e-6)


def test_a_list_of_variables_reaches_the_variables():
    v = tg.Variable(3.0)
    with tg.GradientTape() as tape:
        y = tg.mean([v, 2 * v])
    assert tape.gradient(y, v).numpy() == 1.5


def test_a_list_of_graph_tensors_is_a_stack_node():
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.float64, shape=(), name="p")
        y = tg.mean([p, p + 2])
        z = tg.add([p, 1.0], 1.0)
        (grad,) = tg.gradients(y, p)
    assert any(node.op.name == "stack" for node in g.get_operations())
    got = tg.Session(g).run([y, grad, z], {p: 1.0})
    np.testing.assert_allclose(got[0], 2.0)
    np.testing.assert_allclose(got[1], 1.0)
    np.testing.assert_allclose(got[2], [2.0, 2.0])


def test_a_list_of_tensors_that_do_not_stack_names_the_argument():
    x = tg.constant(1.0)
    with pytest.raises(ValueError, match=r"tg.mean: `x` is a list holding tensors"):
        tg.mean([x, tg.constant([1.0, 2.0])])
    with pytest.raises(ValueError, match=r"tg.add: `x` is a list holding tensors"):
        tg.add([x, tg.constant([1.0, 2.0])], 1.0)
