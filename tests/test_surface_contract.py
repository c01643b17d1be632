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


# -- windows that do not fit, checked again when the graph runs ---------------------------

def _run_small_input(make):
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.float64, shape=(1, None, None, 1), name="p")
        y = make(p)
    return tg.Session(g).run(y, {p: np.ones((1, 2, 5, 1))})


@pytest.mark.parametrize("op, make", [
    ("conv2d", lambda p: tg.nn.conv2d(p, tg.constant(np.ones((3, 3, 1, 1))), 1, "VALID")),
    ("max_pool2d", lambda p: tg.nn.max_pool2d(p, 3, 1, "VALID")),
    ("avg_pool2d", lambda p: tg.nn.avg_pool2d(p, 3, 1, "VALID")),
])
def test_a_graph_input_smaller_than_a_valid_window_is_refused_when_run(op, make):
    with pytest.raises(ValueError, match=rf"tg.nn.{op}: `input` must have at least 3 entries "
                                         r"along axis 1"):
        _run_small_input(make)


def test_same_padding_still_runs_on_a_small_graph_input():
    got = _run_small_input(lambda p: tg.nn.max_pool2d(p, 3, 1, "SAME"))
    assert got.shape == (1, 2, 5, 1)


# -- while_loop: its arguments' faults are named ------------------------------------------

def _in_graph(make):
    with tg.Graph().as_default():
        return make()


@pytest.mark.parametrize("limit", [-1, np.int64(-1), np.int32(-2)])
@pytest.mark.parametrize("context", [_in_graph, lambda make: make()])
def test_a_negative_maximum_iterations_is_refused(limit, context):
    with pytest.raises(ValueError, match="tg.while_loop: `maximum_iterations`"):
        context(lambda: tg.while_loop(lambda i: i < 3, lambda i: i + 1, [tg.constant(0)],
                                      maximum_iterations=limit))


@pytest.mark.parametrize("context", [_in_graph, lambda make: make()])
def test_a_cond_returning_none_is_blamed(context):
    with pytest.raises(TypeError, match=r"tg.while_loop: `cond` must return a scalar bool.*"
                                        r"returned None"):
        context(lambda: tg.while_loop(lambda i: None, lambda i: i + 1, [tg.constant(0)]))


# -- tg.function keeps a Variable argument a Variable --------------------------------------

def _train_step(optimizer):
    @tg.function
    def step(x, w, b):
        with tg.GradientTape() as tape:
            loss = tg.sum((x * w + b) ** 2)
        grads = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b]))
        return loss
    return step


def _eager_step(optimizer, x, w, b):
    with tg.GradientTape() as tape:
        loss = tg.sum((x * w + b) ** 2)
    optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    return loss


@pytest.mark.parametrize("make", [lambda: tg.optimizers.SGD(0.1, momentum=0.5),
                                  lambda: tg.optimizers.Adam(0.1)])
def test_a_traced_train_step_may_take_the_variables_as_arguments(make):
    x = tg.constant([1.0, -1.0])
    traced = [tg.Variable([1.0, 2.0]), tg.Variable(0.5)]
    eager = [tg.Variable([1.0, 2.0]), tg.Variable(0.5)]
    step, opt_traced, opt_eager = None, make(), make()
    step = _train_step(opt_traced)
    for _ in range(3):
        np.testing.assert_allclose(step(x, *traced).numpy(),
                                   _eager_step(opt_eager, x, *eager).numpy())
    for a, b in zip(traced, eager):
        np.testing.assert_allclose(a.numpy(), b.numpy())
    assert step.trace_count == 1


def test_variable_arguments_are_keyed_by_identity_and_differentiable():
    @tg.function
    def f(ws):
        return tg.sum(ws[0] * ws[1])
    a, b, c = tg.Variable([1.0, 2.0]), tg.Variable([3.0, 4.0]), tg.Variable([5.0, 6.0])
    with tg.GradientTape() as tape:
        y = f([a, b])
    np.testing.assert_allclose(tape.gradient(y, a).numpy(), [3.0, 4.0])
    assert f([a, c]).numpy() == 17.0 and f.trace_count == 2
    a.assign([0.0, 1.0])
    assert f([a, b]).numpy() == 4.0 and f.trace_count == 2   # the value is read at each call


def test_an_eager_optimizer_refuses_a_graph_gradient_by_name():
    w = tg.Variable([1.0, 2.0])
    with tg.Graph().as_default():
        g = tg.placeholder(tg.float64, shape=(2,), name="g")
    with pytest.raises(TypeError, match=r"SGD.apply_gradients: `grads_and_vars`.*tensor of a "
                                        r"graph"):
        tg.optimizers.SGD(0.1).apply_gradients([(g, w)])


def test_a_traced_function_with_a_python_number_argument_has_a_gradient():
    @tg.function
    def f(x, k):
        return tg.sum(x * k)
    np.testing.assert_allclose(_gradient(lambda x: f(x, 3.0), [1.0, 2.0]).numpy(), [3.0, 3.0])
