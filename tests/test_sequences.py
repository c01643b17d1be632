"""tg.scan, tg.foldl, tg.foldr and tg.map_fn: TensorFlow's numbers, gradients by
backpropagation through time in three modes, one While node in a graph, and errors.

The examples are those of TensorFlow's docstrings (functional_ops.py / map_fn.py).
Every gradient is checked against central finite differences eagerly, through
tg.function, and in a graph with tg.gradients + tg.Session.
"""
import numpy as np
import pytest
from sequence_modes import MODES, check_gradients, value_and_grad, values

import teachgrad as tg

ELEMS = np.array([1, 2, 3, 4, 5, 6])


# -- TensorFlow's docstring examples ---------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_scan_docstring_examples(mode):
    np.testing.assert_array_equal(values(lambda e: tg.scan(lambda a, x: a + x, e), [ELEMS],
                                         mode), [1, 3, 6, 10, 15, 21])
    sum_one = values(lambda e, init: tg.scan(lambda a, x: x[0] - x[1] + a, (e + 1, e), init),
                     [ELEMS, np.array(0)], mode)
    np.testing.assert_array_equal(sum_one, [1, 2, 3, 4, 5, 6])
    fib = values(lambda e, a, b: tg.scan(lambda acc, _: (acc[1], acc[0] + acc[1]), e, (a, b)),
                 [np.array([1, 0, 0, 0, 0, 0]), np.array(0), np.array(1)], mode)
    np.testing.assert_array_equal(fib[0], [1, 1, 2, 3, 5, 8])
    np.testing.assert_array_equal(fib[1], [1, 2, 3, 5, 8, 13])


@pytest.mark.parametrize("mode", MODES)
def test_fold_docstring_examples(mode):
    assert values(lambda e: tg.foldl(lambda a, x: a + x, e), [ELEMS], mode) == 21
    assert values(lambda e: tg.foldr(lambda a, x: a + x, e), [ELEMS], mode) == 21
    # the order the rows are visited in
    assert values(lambda e: tg.foldl(lambda a, x: a * 10 + x, e), [ELEMS], mode) == 123456
    assert values(lambda e: tg.foldr(lambda a, x: a * 10 + x, e), [ELEMS], mode) == 654321
    assert values(lambda e: tg.foldl(lambda a, x: a - x, e, initializer=tg.constant(100)),
                  [ELEMS], mode) == 79


@pytest.mark.parametrize("mode", MODES)
def test_map_fn_docstring_examples(mode):
    np.testing.assert_array_equal(values(lambda e: tg.map_fn(lambda x: x * x, e), [ELEMS],
                                         mode), [1, 4, 9, 16, 25, 36])
    alternate = values(lambda e, alt: tg.map_fn(lambda x: x[0] * x[1], (e, alt),
                                                fn_output_signature=tg.int64),
                       [np.array([1, 2, 3]), np.array([-1, 1, -1])], mode)
    np.testing.assert_array_equal(alternate, [-1, 2, -3])
    pair = values(lambda e: tg.map_fn(lambda x: (x, -x), e, dtype=(tg.int64, tg.int64)),
                  [np.array([1, 2, 3])], mode)
    np.testing.assert_array_equal(pair[0], [1, 2, 3])
    np.testing.assert_array_equal(pair[1], [-1, -2, -3])
    halves = values(lambda e: tg.map_fn(lambda x: tg.cast(x, tg.float64) / 2, e,
                                        fn_output_signature=tg.float64), [ELEMS], mode)
    np.testing.assert_allclose(halves, ELEMS / 2)


@pytest.mark.parametrize("mode", MODES)
def test_scan_in_reverse_lines_up_with_elems(mode):
    out = values(lambda e: tg.scan(lambda a, x: a + x, e, reverse=True), [ELEMS], mode)
    np.testing.assert_array_equal(out, [21, 20, 18, 15, 11, 6])


@pytest.mark.parametrize("mode", MODES)
def test_nested_elems_and_carry_with_a_dict(mode):
    def fn(x, y):
        out = tg.scan(lambda acc, e: {"s": acc["s"] + e["x"], "p": acc["p"] * e["y"]},
                      {"x": x, "y": y}, initializer={"s": tg.constant(0.0),
                                                     "p": tg.constant(1.0)})
        return [out["s"], out["p"]]
    s, p = values(fn, [np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0])], mode)
    np.testing.assert_allclose(s, [1, 3, 6])
    np.testing.assert_allclose(p, [2, 6, 24])


# -- gradients: backpropagation through time --------------------------------------------
RNG = np.random.default_rng(7)
XS = RNG.normal(size=(5, 3))
H0 = RNG.normal(size=3)
W = RNG.normal(size=(3, 3)) * 0.6
U = RNG.normal(size=(3, 3)) * 0.6


def rnn(x, h0, w, u):
    """h_t = tanh(W h_{t-1} + U x_t); the loss is the sum of the squared states."""
    def step(h, x_t):
        return tg.tanh(tg.matmul(w, h[:, None])[:, 0] + tg.matmul(u, x_t[:, None])[:, 0])
    hs = tg.scan(step, x, initializer=h0)
    return tg.sum(hs * hs)


@pytest.mark.parametrize("mode", MODES)
def test_rnn_scan_gradient_matches_finite_differences(mode):
    check_gradients(rnn, [XS, H0, W, U], mode)


def test_rnn_scan_graph_gradient_equals_tape_gradient():
    _, tape = value_and_grad(rnn, [XS, H0, W, U], "eager")
    _, graph = value_and_grad(rnn, [XS, H0, W, U], "graph")
    for a, b in zip(tape, graph):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


PROGRAMS = {
    "scan_cumprod": lambda x: tg.scan(lambda a, e: a * e, x),
    "scan_reverse_with_initializer": lambda x: tg.scan(lambda a, e: tg.sin(a) + e * a, x,
                                                       initializer=tg.constant(0.5),
                                                       reverse=True),
    "scan_nested_carry": lambda x: tg.scan(lambda a, e: (a[0] + e * a[1], a[1] * 0.9 + e),
                                           x, initializer=(tg.constant(0.0),
                                                           tg.constant(1.0)))[0],
    "foldl": lambda x: tg.foldl(lambda a, e: a * tg.cos(e) + e, x),
    "foldr": lambda x: tg.foldr(lambda a, e: a * tg.cos(e) + e, x),
    "map_fn": lambda x: tg.map_fn(lambda e: tg.exp(e) * e, x),
    "map_fn_rows": lambda x: tg.map_fn(lambda r: tg.sum(r * r), tg.reshape(x, (2, 2))),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_gradients_match_finite_differences(program, mode):
    check_gradients(PROGRAMS[program], [np.array([0.3, -0.7, 1.1, 0.4])], mode)


def test_second_derivative_of_a_fold_in_a_graph_and_eagerly():
    def f(x):
        return tg.foldl(lambda a, e: a * e + tg.sin(a), x, initializer=tg.constant(0.7))
    x0 = np.array([0.3, -0.5, 0.9])
    eager = tg.hessian(f)(tg.constant(x0)).numpy()
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (3,), name="x")
        (dx,) = tg.gradients(f(x), [x])
        rows = [tg.gradients(dx[i], [x])[0] for i in range(3)]
    graph = np.stack(tg.Session(g).run(rows, {x: x0}))
    np.testing.assert_allclose(eager, graph, rtol=1e-10, atol=1e-12)
    eps, numeric = 1e-5, np.zeros((3, 3))
    for j in range(3):
        step = np.eye(3)[j] * eps
        gp = tg.grad(f)(tg.constant(x0 + step)).numpy()
        gm = tg.grad(f)(tg.constant(x0 - step)).numpy()
        numeric[:, j] = (gp - gm) / (2 * eps)
    np.testing.assert_allclose(eager, numeric, rtol=1e-5, atol=1e-6)


# -- graphs: one While node, whose gradient is a While node --------------------------------
def _ops(graph):
    return [n.op.name for n in graph.get_operations()]


@pytest.mark.parametrize("fn", [tg.scan, tg.foldl, tg.foldr])
def test_one_while_node_and_its_gradient_is_a_loop(fn):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (50,), name="x")
        y = tg.sum(fn(lambda a, e: a * 0.5 + tg.tanh(e), x))
        assert _ops(g).count("While") == 1
        forward = len(g.get_operations())
        tg.gradients(y, [x])
        assert _ops(g).count("While") == 2
    assert len(g.get_operations()) - forward < 40   # not unrolled over the 50 rows


def test_eager_scan_records_each_iteration_on_the_tape():
    x = tg.constant(np.arange(4.0))
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sum(tg.scan(lambda a, e: a * e, x, initializer=tg.constant(1.0)))
        tape.gradient(y, x)
    events = [e for trace in rec.traces for e in trace.events
              if type(e).__name__ == "LoopIteration"]
    assert [e.iteration for e in events if e.direction == "forward"] == [0, 1, 2, 3]


# -- errors ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_fn_changing_the_carry_dtype_names_fn_and_the_carry(mode):
    with pytest.raises(TypeError, match=r"tg.scan: fn.*carry.*float64.*int64"):
        values(lambda e: tg.scan(lambda a, x: tg.cast(a, tg.int64), e), [np.ones(3)], mode)


@pytest.mark.parametrize("mode", MODES)
def test_fn_changing_the_carry_structure_names_fn_and_the_carry(mode):
    with pytest.raises(ValueError, match=r"tg.foldl: fn.*carry \(from elems\[0\]\)"):
        values(lambda e: tg.foldl(lambda a, x: (a, a), e), [np.ones(3)], mode)


def test_fn_changing_the_carry_shape():
    with pytest.raises(ValueError, match=r"tg.scan: fn changes the shape of carry"):
        tg.scan(lambda a, x: tg.stack([a, x]), tg.constant([1.0, 2.0]))


def test_elems_of_different_lengths():
    with pytest.raises(ValueError, match=r"same number of rows.*\[3, 2\]"):
        tg.scan(lambda a, x: a + x[0] + x[1], (tg.ones(3), tg.ones(2)), tg.constant(0.0))


@pytest.mark.parametrize("fn", [tg.scan, tg.foldl, tg.foldr])
def test_empty_elems_without_initializer(fn):
    with pytest.raises(ValueError, match="elems is empty and there is no initializer"):
        fn(lambda a, x: a + x, tg.zeros((0,)))


def test_empty_elems_with_an_initializer():
    assert tg.foldl(lambda a, x: a + x, tg.zeros((0,)), tg.constant(3.0)).numpy() == 3.0
    assert tg.scan(lambda a, x: a + x, tg.zeros((0,)), tg.constant(3.0)).shape == (0,)


def test_map_fn_errors():
    with pytest.raises(ValueError, match="tg.map_fn: elems is empty"):
        tg.map_fn(lambda x: x, tg.zeros((0, 2)))
    with pytest.raises(TypeError, match="give fn_output_signature"):
        tg.map_fn(lambda x: tg.cast(x, tg.float32), tg.ones(3))
    with pytest.raises(TypeError, match="`fn`"):
        tg.map_fn(3, tg.ones(3))


def test_scalar_elems_have_no_rows():
    with pytest.raises(ValueError, match="leading axis"):
        tg.scan(lambda a, x: a + x, tg.constant(1.0))
