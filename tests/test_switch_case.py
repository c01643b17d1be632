"""tg.switch_case and tg.case: TensorFlow's examples, gradients in every mode, errors."""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad.autodiff import events


def run(graph, fetches, feed_dict=None):
    return tg.Session(graph).run(fetches, feed_dict)


def in_modes(fn, *args):
    """``fn(*args)`` (args are numbers) eagerly, in a graph fed with placeholders, and in a
    tg.function: the three results, as numpy values."""
    eager = fn(*[tg.constant(a) for a in args])
    g = tg.Graph()
    with g.as_default():
        ps = [tg.placeholder(np.asarray(a).dtype, np.shape(a)) for a in args]
        out = fn(*ps)
    graph = run(g, out, dict(zip(ps, args)))
    traced = tg.function(fn)(*[tg.constant(a) for a in args])
    return [np.asarray(eager.numpy()), np.asarray(graph), np.asarray(traced.numpy())]


# -- TensorFlow's docstring examples ---------------------------------------------------------
def tf_switch_example(branch_index):
    """switch (branch_index) { case 0: return 17; case 1: return 31; default: return -1; }"""
    f1, f2, f3 = (lambda: tg.constant(17)), (lambda: tg.constant(31)), (lambda: tg.constant(-1))
    return tg.switch_case(branch_index, branch_fns={0: f1, 1: f2}, default=f3)


def tf_switch_equivalent(branch_index):
    """The same, with the default as the last branch: it takes every other index."""
    f1, f2, f3 = (lambda: tg.constant(17)), (lambda: tg.constant(31)), (lambda: tg.constant(-1))
    return tg.switch_case(branch_index, branch_fns={0: f1, 1: f2, 2: f3})


@pytest.mark.parametrize("fn", [tf_switch_example, tf_switch_equivalent])
@pytest.mark.parametrize("index, expected", [(0, 17), (1, 31), (2, -1), (7, -1), (-1, -1)])
def test_tensorflow_switch_case_example(fn, index, expected):
    for got in in_modes(fn, np.int32(index)):
        assert got == expected and got.dtype.kind == "i"


def tf_case_example_1(x, y):
    """if (x < y) return 17; else return 23;"""
    return tg.case([(tg.less(x, y), lambda: tg.constant(17))], default=lambda: tg.constant(23))


def tf_case_example_2(x, y, z):
    """if (x < y && x > z) error; if (x < y) return 17; else if (x > z) return 23; else -1"""
    f1, f2, f3 = (lambda: tg.constant(17)), (lambda: tg.constant(23)), (lambda: tg.constant(-1))
    return tg.case([(tg.less(x, y), f1), (tg.greater(x, z), f2)], default=f3, exclusive=True)


def test_tensorflow_case_examples():
    assert [int(v) for v in in_modes(tf_case_example_1, 1.0, 2.0)] == [17] * 3
    assert [int(v) for v in in_modes(tf_case_example_1, 3.0, 2.0)] == [23] * 3
    assert [int(v) for v in in_modes(tf_case_example_2, 1.0, 2.0, 5.0)] == [17] * 3
    assert [int(v) for v in in_modes(tf_case_example_2, 6.0, 2.0, 5.0)] == [23] * 3
    assert [int(v) for v in in_modes(tf_case_example_2, 3.0, 2.0, 5.0)] == [-1] * 3
    with pytest.raises(ValueError, match="more than one predicate is true"):
        tf_case_example_2(tg.constant(1.0), tg.constant(2.0), tg.constant(0.0))
    g = tg.Graph()
    with g.as_default():
        x, y, z = (tg.placeholder(tg.float64, ()) for _ in range(3))
        r = tf_case_example_2(x, y, z)
    with pytest.raises(ValueError, match="more than one predicate is true"):
        run(g, r, {x: 1.0, y: 2.0, z: 0.0})


# -- semantics ---------------------------------------------------------------------------------
def test_case_takes_the_first_true_predicate_unless_exclusive():
    x = tg.constant(5.0)
    pairs = [(x > 1.0, lambda: x * 2.0), (x > 3.0, lambda: x * 3.0)]
    assert tg.case(pairs).numpy() == 10.0
    with pytest.raises(ValueError, match="exclusive"):
        tg.case(pairs, exclusive=True)


def test_case_with_no_true_predicate_and_no_default_is_an_error():
    x = tg.constant(0.0)
    with pytest.raises(ValueError, match="none of the predicates is true"):
        tg.case([(x > 1.0, lambda: x), (x > 3.0, lambda: -x)])
    g = tg.Graph()
    with g.as_default():
        xp = tg.placeholder(tg.float64, ())
        r = tg.case([(xp > 1.0, lambda: xp), (xp > 3.0, lambda: -xp)])
    assert run(g, r, {xp: 4.0}) == 4.0
    with pytest.raises(ValueError, match="none of the predicates is true"):
        run(g, r, {xp: 0.0})


def test_case_unpacks_a_singleton_list_unless_strict():
    x = tg.constant(2.0)
    assert isinstance(tg.case([(x > 1.0, lambda: [x])], default=lambda: [-x]), tg.Tensor)
    strict = tg.case([(x > 1.0, lambda: [x])], default=lambda: [-x], strict=True)
    assert isinstance(strict, list) and strict[0].numpy() == 2.0


def test_switch_case_returns_nested_structures():
    def fn(i, x):
        return tg.switch_case(i, [lambda: {"a": x, "b": (x * 2.0, x + 1.0)},
                                  lambda: {"a": -x, "b": (x * 3.0, x - 1.0)}])
    for i, expected in ((0, (2.0, 4.0, 3.0)), (1, (-2.0, 6.0, 1.0))):
        out = fn(tg.constant(i), tg.constant(2.0))
        assert (out["a"].numpy(), out["b"][0].numpy(), out["b"][1].numpy()) == expected
        g = tg.Graph()
        with g.as_default():
            ip, xp = tg.placeholder(tg.int64, ()), tg.placeholder(tg.float64, ())
            out = fn(ip, xp)
        assert tuple(run(g, [out["a"], *out["b"]], {ip: i, xp: 2.0})) == expected


def test_branch_fns_as_pairs_in_any_order_and_python_int_index():
    x = tg.constant(3.0)
    fns = [(1, lambda: x * 10.0), (0, lambda: x)]
    assert tg.switch_case(0, fns).numpy() == 3.0
    assert tg.switch_case(1, fns).numpy() == 30.0
    assert tg.switch_case(9, fns).numpy() == 30.0   # out of range, no default: the last


# -- gradients ---------------------------------------------------------------------------------
def three_way(i, x, w):
    """x * w, sin(x) w^2, or sum(x)^2 (default), as the index says."""
    return tg.switch_case(i, [lambda: x * w, lambda: tg.sin(x) * w * w],
                          default=lambda: tg.sum(x) * tg.sum(x) + 0.0 * w)


def by_case(x, w):
    """The same three ways, chosen by tg.case on sum(x)."""
    s = tg.sum(x)
    return tg.case([(s < 0.0, lambda: x * w), (s < 1.0, lambda: tg.sin(x) * w * w)],
                   default=lambda: tg.sum(x) * tg.sum(x) + 0.0 * w)


def finite_differences(f, arrays, eps=1e-6):
    """Central differences of sum(f(*arrays)), evaluated eagerly."""
    def total(values):
        return float(np.sum(f(*[tg.constant(v) for v in values]).numpy()))
    grads = []
    for k, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus, minus = [v.copy() for v in arrays], [v.copy() for v in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            grad[idx] = (total(plus) - total(minus)) / (2 * eps)
        grads.append(grad)
    return grads


def tape_gradients(f, arrays):
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        y = tg.sum(f(*xs))
    return [g.numpy() for g in tape.gradient(y, xs)]


def graph_gradients(f, arrays):
    g = tg.Graph()
    with g.as_default():
        ps = [tg.placeholder(tg.float64, a.shape) for a in arrays]
        grads = tg.gradients(tg.sum(f(*ps)), ps)
        with tg.GradientTape() as tape:   # a tape in the graph gives the same nodes' values
            tape.watch(ps)
            y = tg.sum(f(*ps))
        on_tape = tape.gradient(y, ps)
    return run(g, grads, dict(zip(ps, arrays))), run(g, on_tape, dict(zip(ps, arrays)))


def function_gradients(f, arrays):
    return tape_gradients(tg.function(f), arrays)


X = {-1: np.array([-0.5, -0.3, 0.1]), 0: np.array([0.2, 0.3, 0.1]), 1: np.array([0.7, 0.4, 0.2])}


@pytest.mark.parametrize("index", [0, 1, 2, 5, -3])
def test_switch_case_gradients_match_finite_differences(index):
    arrays = [X[0], np.array([1.5, -0.5, 2.0])]
    f = lambda x, w: three_way(tg.constant(index), x, w)  # noqa: E731
    numeric = finite_differences(f, arrays)
    graph, graph_tape = graph_gradients(f, arrays)
    for got in (tape_gradients(f, arrays), graph, graph_tape, function_gradients(f, arrays)):
        for a, e in zip(got, numeric):
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("which", [-1, 0, 1])
def test_case_gradients_match_finite_differences(which):
    arrays = [X[which], np.array([1.5, -0.5, 2.0])]
    numeric = finite_differences(by_case, arrays)
    graph, graph_tape = graph_gradients(by_case, arrays)
    for got in (tape_gradients(by_case, arrays), graph, graph_tape,
                function_gradients(by_case, arrays)):
        for a, e in zip(got, numeric):
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-8)


def test_switch_case_second_derivative_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        i, x = tg.placeholder(tg.int32, ()), tg.placeholder(tg.float64, ())
        y = tg.switch_case(i, [lambda: x ** 3, lambda: tg.sin(x)])
        (dy,) = tg.gradients(y, x)
        (d2y,) = tg.gradients(dy, x)
    assert np.allclose(run(g, [dy, d2y], {i: 0, x: 2.0}), [12.0, 12.0])
    assert np.allclose(run(g, [dy, d2y], {i: 1, x: 2.0}), [np.cos(2.0), -np.sin(2.0)])


def test_a_graph_switch_is_if_nodes_and_an_eager_one_tags_its_branch():
    g = tg.Graph()
    with g.as_default():
        i, x = tg.placeholder(tg.int32, ()), tg.placeholder(tg.float64, ())
        tg.switch_case(i, [lambda: x, lambda: 2.0 * x, lambda: 3.0 * x])
    (outer,) = [op for op in g.get_operations() if op.op.name == "If"]
    inner = outer.params["false_fn"].graph.get_operations()   # the next test, nested
    assert [op.op.name for op in inner].count("If") == 1
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.switch_case(1, [lambda: x, lambda: tg.sin(x)], name="pick")
    (node,) = tape.recorded_nodes()
    assert node.context.name == "pick" and node.context.taken == "branch_fns[1]"
    with tg.viz.record() as rec:
        grad = tape.gradient(y, x)
    finish = [e for e in rec.traces[0].events if isinstance(e, events.Finish)][0]
    assert finish.gradients[0].numpy() == grad.numpy() == np.cos(2.0)


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [1.0, True, tg.constant(1.0), tg.constant(True), "1", None])
def test_a_non_integer_index_is_a_type_error_naming_it(index):
    with pytest.raises(TypeError, match="branch_index"):
        tg.switch_case(index, [lambda: tg.constant(1.0), lambda: tg.constant(2.0)])


def test_bad_branch_fns_are_named():
    one = lambda: tg.constant(1.0)  # noqa: E731
    with pytest.raises(ValueError, match="branch_fns"):
        tg.switch_case(0, [])
    with pytest.raises(ValueError, match="branch_fns"):
        tg.switch_case(0, {0: one, 2: one})
    with pytest.raises(TypeError, match="branch_fns"):
        tg.switch_case(0, {0: one, "1": one})
    with pytest.raises(TypeError, match=r"branch_fns\[1\]"):
        tg.switch_case(0, [one, 3.0])
    with pytest.raises(TypeError, match="branch_fns"):
        tg.switch_case(0, one)
    with pytest.raises(TypeError, match="default"):
        tg.switch_case(0, [one], default=1.0)
    with pytest.raises(ValueError, match="branch_index"):
        tg.switch_case(tg.constant([0, 1]), [one])


def test_bad_pred_fn_pairs_are_named():
    one = lambda: tg.constant(1.0)  # noqa: E731
    with pytest.raises(ValueError, match="pred_fn_pairs"):
        tg.case([])
    with pytest.raises(TypeError, match=r"pred_fn_pairs\[0\]\[0\]"):
        tg.case([(tg.constant(1.0), one)])
    with pytest.raises(TypeError, match=r"pred_fn_pairs\[0\]\[1\]"):
        tg.case([(True, 1.0)])
    with pytest.raises(TypeError, match=r"pred_fn_pairs\[1\]"):
        tg.case([(True, one), one])


def test_branches_that_disagree_in_a_graph_are_refused():
    g = tg.Graph()
    with g.as_default():
        i, x = tg.placeholder(tg.int32, ()), tg.placeholder(tg.float64, ())
        with pytest.raises(ValueError, match="structure"):
            tg.switch_case(i, [lambda: x, lambda: (x, x)])
        with pytest.raises(TypeError, match="dtype"):
            tg.switch_case(i, [lambda: x, lambda: tg.cast(x, tg.float32)])


def test_switch_case_in_a_loop_body_is_differentiated_through_the_loop():
    """h -> h * x, sin(h), h + x in turn (i mod 3), four times, in a graph and a tg.function."""
    def fn(x):
        def body(i, h):
            return i + 1, tg.switch_case(tg.mod(i, 3), [lambda: h * x, lambda: tg.sin(h),
                                                        lambda: h + x])
        return tg.while_loop(lambda i, h: i < 4, body, [tg.constant(0), x])[1]
    x0 = np.array([0.3, -0.8])
    numeric = finite_differences(fn, [x0])
    graph, graph_tape = graph_gradients(fn, [x0])
    for got in (tape_gradients(fn, [x0]), graph, graph_tape, function_gradients(fn, [x0])):
        np.testing.assert_allclose(got[0], numeric[0], rtol=1e-6, atol=1e-8)


def test_a_graph_switch_draws_and_its_backward_pass_steps():
    g = tg.Graph()
    with g.as_default():
        i, x = tg.placeholder(tg.int32, ()), tg.placeholder(tg.float64, ())
        y = tg.switch_case(i, [lambda: x * x, lambda: tg.sin(x)], name="pick")
        with tg.viz.record() as rec:
            tg.gradients(y, x)
    assert "pick" in tg.viz.draw(g).source
    stepper = tg.viz.BackpropStepper(rec.traces[0])
    assert stepper is not None
