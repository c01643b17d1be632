"""The input contract on the newer surface (issue 30, part 5): each case gets the right
answer, or an error naming the function and the argument."""
import warnings

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


# -- errors that name the function the user called ----------------------------------------

def test_the_gradient_of_det_at_a_singular_matrix_is_its_cofactor_matrix():
    singular = [[1.0, 2.0], [2.0, 4.0]]
    np.testing.assert_allclose(_gradient(tg.linalg.det, singular).numpy(),
                               [[4.0, -2.0], [-2.0, 1.0]])
    rank_one = np.outer([1.0, 2.0, 3.0], [1.0, 1.0, 2.0])   # every 2x2 minor is 0
    np.testing.assert_allclose(_gradient(tg.linalg.det, rank_one).numpy(), np.zeros((3, 3)),
                               atol=1e-12)


@pytest.mark.parametrize("f, where", [
    (lambda a: tg.linalg.slogdet(a)[1], "tg.linalg.slogdet"),
    (lambda a: tg.sum(tg.linalg.qr(a)[0]), "tg.linalg.qr"),
])
def test_a_singular_matrix_in_a_gradient_names_the_function_called(f, where):
    with pytest.raises(ValueError, match=f"the gradient of {where}"):
        _gradient(f, [[1.0, 0.0], [0.0, 0.0]])


def test_einsum_with_a_size_one_letter_has_a_gradient():
    a, b = np.arange(8.0).reshape(2, 4), np.arange(3.0).reshape(1, 3)
    grads = tg.grad(lambda x, y: tg.sum(tg.einsum("ij,jk->ik", x, y)), argnums=(0, 1))(
        tg.constant(a), tg.constant(b))
    np.testing.assert_allclose(grads[0].numpy(), np.full((2, 4), b.sum()))
    np.testing.assert_allclose(grads[1].numpy(), np.full((1, 3), a.sum()))


def test_an_ellipsis_mismatch_blames_the_ellipsis_not_a_letter():
    with pytest.raises(ValueError, match=r"tg.einsum: `operands\[1\]`.*'\.\.\.'") as caught:
        tg.einsum("...i,...i->...", np.ones((2, 3)), np.ones((4, 3)))
    assert "label" not in str(caught.value)


def test_tensordot_of_more_axes_than_einsum_has_letters():
    a, b = np.random.default_rng(0).random((1,) * 28 + (2,)), np.ones((2, 3) + (1,) * 25)
    for axes in (0, 1):
        np.testing.assert_allclose(tg.tensordot(a, b, axes).numpy(), np.tensordot(a, b, axes))


@pytest.mark.parametrize("call, named", [
    (lambda: tg.cross(np.ones((2, 3)), np.ones((4, 3))), r"tg.cross: `b`"),
    (lambda: tg.nn.batch_normalization(np.ones((2, 3)), np.ones(4), np.ones(3), None, None,
                                       1e-3), r"tg.nn.batch_normalization: `mean`"),
    (lambda: tg.nn.batch_normalization(np.ones((2, 3)), np.ones(3), np.ones(3), np.ones(2),
                                       None, 1e-3), r"tg.nn.batch_normalization: `offset`"),
])
def test_shape_mismatches_name_the_argument_not_an_inner_op(call, named):
    with pytest.raises(ValueError, match=named):
        call()


def test_moments_does_not_list_none_as_allowed_when_refusing_it():
    with pytest.raises(TypeError, match=r"tg.nn.moments: `axes` must be an integer or a list "
                                        r"of integers, but got None"):
        tg.nn.moments(tg.constant(np.ones((2, 3))), None)


def test_session_refuses_a_graph_that_is_not_a_graph():
    with pytest.raises(TypeError, match="tg.Session: `graph`"):
        tg.Session("my_graph")


@pytest.mark.parametrize("f", [lambda x: x > 0, lambda x: bool(x.numpy() > 0),
                               lambda x: tg.cast(x, tg.int64)])
def test_grad_of_a_function_returning_a_bool_or_integer_is_refused(f):
    with pytest.raises(TypeError, match="tg.grad: `f` must return a floating-point scalar"):
        tg.grad(f)(tg.constant(1.0))


def test_linspace_takes_tensor_endpoints_and_differentiates_them():
    grads = tg.grad(lambda a, b: tg.sum(tg.linspace(a, b, 5)), argnums=(0, 1))(
        tg.constant(1.0), tg.constant(3.0))
    np.testing.assert_allclose([g.numpy() for g in grads], [2.5, 2.5])
    got = tg.linspace(tg.constant([0.0, 1.0]), 2.0, 3, endpoint=False)
    np.testing.assert_allclose(got.numpy(), np.linspace([0.0, 1.0], 2.0, 3, endpoint=False))


# -- bounded memory and traces ------------------------------------------------------------

def test_the_gradient_of_pinv_of_a_tall_matrix_builds_no_square_of_its_rows():
    a = np.random.default_rng(0).random((200_000, 2))   # an m x m float64 would be 320 GB
    grad = _gradient(lambda x: tg.sum(tg.linalg.pinv(x)), a)
    assert grad.shape == a.shape and np.all(np.isfinite(grad.numpy()))



def test_a_function_called_with_many_shapes_keeps_few_traces():
    @tg.function
    def f(x):
        return tg.sum(x * 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # three traces: no retrace warning
        for n in range(1, 421):
            assert f(tg.constant(np.ones(n))).numpy() == 2.0 * n
    assert f.trace_count == 3
    assert f.graph.get_operations()[0].outputs[0].shape == (None,)
    np.testing.assert_allclose(_gradient(f, np.ones(5)).numpy(), np.full(5, 2.0))


def test_only_the_sizes_that_change_are_relaxed():
    @tg.function
    def f(x):
        return x * 2.0
    for n in (1, 2, 3, 4):
        f(tg.constant(np.ones((n, 3))))
    assert f.trace_count == 3 and f.graph.get_operations()[0].outputs[0].shape == (None, 3)
    f(tg.constant(np.ones((2, 5))))   # a new size where the trace fixed one: a new trace
    assert f.trace_count == 4


@pytest.mark.parametrize("calls, says", [
    ([(1.0, float(i)) for i in range(7)], r"argument `k` is a new Python value, 5.0.*"
                                           r"tg.constant"),
    ([(np.ones(2, d), 1.0) for d in (np.float64, np.float32, np.int64, np.int32, np.int16,
                                      np.int8)], r"argument `x` changed dtype.*tg.cast"),
])
def test_the_retrace_warning_names_the_argument_and_the_change(calls, says):
    @tg.function
    def f(x, k):
        return x * k
    with pytest.warns(UserWarning, match=says):
        for x, k in calls:
            f(tg.constant(x), k)


def test_the_trace_cache_is_bounded():
    @tg.function
    def f(x, k):
        return x * k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(100):
            assert f(tg.constant(1.0), float(i)).numpy() == float(i)
    assert f.trace_count == 64
