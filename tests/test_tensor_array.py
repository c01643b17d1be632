"""tg.TensorArray: TensorFlow's semantics and errors, gradients through its methods in
three modes, and TensorArrays as tg.while_loop variables (one While node in a graph)."""
import numpy as np
import pytest
from sequence_modes import MODES, check_gradients, value_and_grad, values

import teachgrad as tg


# -- TensorFlow's docstring examples ---------------------------------------------------
def test_dynamic_size_docstring_example():
    ta = tg.TensorArray(tg.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10).write(1, 20).write(2, 30)
    assert [ta.read(i).numpy() for i in range(3)] == [10.0, 20.0, 30.0]
    np.testing.assert_array_equal(ta.stack().numpy(), [10.0, 20.0, 30.0])
    assert ta.stack().dtype == tg.float32 and ta.size().numpy() == 3


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_fibonacci_docstring_example(mode):
    # TensorFlow's tf.function ignores clear_after_read; teachgrad keeps it everywhere
    # (as TensorFlow's eager arrays and TF1 graphs do), so the example asks for False.
    def fibonacci(n):
        ta = tg.TensorArray(tg.float32, size=0, dynamic_size=True, clear_after_read=False)
        ta = ta.unstack([0.0, 1.0])
        for i in range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()
    f = tg.function(fibonacci) if mode == "function" else fibonacci
    np.testing.assert_array_equal(f(7).numpy(), [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0])


def test_methods():
    ta = tg.TensorArray(tg.float64, size=4, element_shape=(2,))
    ta = ta.unstack(tg.constant(np.arange(4.0).reshape(2, 2)))   # writes rows 0 and 1
    ta = ta.scatter([3, 2], tg.constant([[6.0, 7.0], [4.0, 5.0]]))
    np.testing.assert_array_equal(ta.stack().numpy(), np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(ta.gather([2, 0]).numpy(), [[4, 5], [0, 1]])
    np.testing.assert_array_equal(ta.concat().numpy(), np.arange(8.0))
    assert ta.size().numpy() == 4 and ta.element_shape == (2,)
    unwritten = tg.TensorArray(tg.float64, size=2, element_shape=(3,))
    np.testing.assert_array_equal(unwritten.read(1).numpy(), np.zeros(3))   # as in TF 2


def test_element_shape_from_the_first_write():
    ta = tg.TensorArray(tg.float64, size=2).write(1, tg.ones((2, 3)))
    assert ta.element_shape == (2, 3) and ta.stack().shape == (2, 2, 3)


# -- gradients through every method ----------------------------------------------------
def _through_methods(x, y):
    ta = tg.TensorArray(tg.float64, size=5, element_shape=(2,), clear_after_read=False)
    ta = ta.unstack(x)                                   # rows 0, 1
    ta = ta.write(2, tg.sin(x[0]) * y)
    ta = ta.scatter([4, 3], tg.stack([x[1] * y, y * y]))
    return [tg.sum(ta.stack() ** 2), ta.read(2) * ta.read(4), ta.gather([3, 0]) * 2.0,
            ta.concat()]


@pytest.mark.parametrize("mode", MODES)
def test_gradients_through_write_read_stack_unstack_gather_scatter(mode):
    check_gradients(_through_methods, [np.array([[0.5, -1.0], [2.0, 0.3]]),
                                       np.array([0.7, -0.2])], mode)


def _accumulate(x):
    """Writes one element per iteration in a while_loop; reads the previous one back."""
    n = x.shape[0]

    def body(i, ta):
        previous = tg.where(i > 0, ta.read(tg.maximum(i - 1, 0)), tg.constant(1.0))
        return i + 1, ta.write(i, tg.tanh(previous * tg.gather(x, i) + 0.1))
    start = tg.TensorArray(tg.float64, size=n, element_shape=(), clear_after_read=False)
    _, ta = tg.while_loop(lambda i, ta: i < n, body, [tg.constant(0), start])
    return ta.stack()


@pytest.mark.parametrize("mode", MODES)
def test_gradient_of_a_while_loop_carrying_a_tensor_array(mode):
    check_gradients(_accumulate, [np.array([0.4, -1.3, 0.8, 2.0])], mode)


def test_while_loop_with_an_array_is_one_while_node_and_its_gradient_a_loop():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (30,), name="x")
        y = tg.sum(_accumulate(x))
        assert [n.op.name for n in g.get_operations()].count("While") == 1
        tg.gradients(y, [x])
        assert [n.op.name for n in g.get_operations()].count("While") == 2
    _, tape = value_and_grad(_accumulate, [np.linspace(-1, 1, 6)], "eager")
    _, graph = value_and_grad(_accumulate, [np.linspace(-1, 1, 6)], "graph")
    np.testing.assert_allclose(tape[0], graph[0], rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_array_in_a_dict_of_loop_vars_and_element_shape_found_by_the_loop(mode):
    def fn(x):
        def body(state):
            i = state["i"]
            return {"i": i + 1, "out": state["out"].write(i, tg.gather(x, i) ** 2)}
        start = {"i": tg.constant(0), "out": tg.TensorArray(tg.float64, size=3)}
        return tg.while_loop(lambda s: s["i"] < 3, body, start)["out"].stack()
    np.testing.assert_allclose(values(fn, [np.array([1.0, 2.0, 3.0])], mode), [1, 4, 9])


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_finding_the_element_shape_does_not_clear_what_the_body_reads(mode):
    def fn(x):
        source = tg.TensorArray(tg.float64, size=3).unstack(x)     # clear_after_read
        def body(i, src, out):
            return i + 1, src, out.write(i, src.read(i) * 2.0)
        start = [tg.constant(0), source, tg.TensorArray(tg.float64, size=3)]
        return tg.while_loop(lambda i, src, out: i < 3, body, start)[2].stack()
    np.testing.assert_allclose(values(fn, [np.array([1.0, 2.0, 3.0])], mode), [2, 4, 6])


def test_dynamic_size_grows_in_an_eager_loop():
    def body(i, ta):
        return i + 1, ta.write(i, tg.cast(i, tg.float64) ** 2)
    start = tg.TensorArray(tg.float64, size=0, dynamic_size=True, element_shape=())
    _, ta = tg.while_loop(lambda i, ta: i < 5, body, [tg.constant(0), start])
    np.testing.assert_array_equal(ta.stack().numpy(), [0, 1, 4, 9, 16])


def test_dynamic_size_grows_at_a_computed_index_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        start = tg.TensorArray(tg.float64, size=2, dynamic_size=True, element_shape=())
        _, ta = tg.while_loop(lambda i, ta: i < 4,
                              lambda i, ta: (i + 1, ta.write(i, tg.cast(i, tg.float64))),
                              [tg.constant(0), start])
        out = ta.stack()
    np.testing.assert_array_equal(tg.Session(g).run(out), [0, 1, 2, 3])


# -- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_writing_an_index_twice(mode):
    def fn(x):
        ta = tg.TensorArray(tg.float64, size=3).write(1, x)
        return ta.write(1, x).stack()
    with pytest.raises(ValueError, match="Could not write to TensorArray index 1 because it "
                                         "has already been written to"):
        values(fn, [np.array(1.0)], mode)


def test_writing_an_index_twice_at_run_time_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        i = tg.placeholder(tg.int64, (), name="i")
        out = tg.TensorArray(tg.float64, size=3).write(0, 1.0).write(i, 2.0).stack()
    np.testing.assert_array_equal(tg.Session(g).run(out, {i: 2}), [1, 0, 2])
    with pytest.raises(ValueError, match="index 0 because it has already been written"):
        tg.Session(g).run(out, {i: 0})


@pytest.mark.parametrize("mode", MODES)
def test_reading_a_cleared_element_twice(mode):
    def fn(x):
        ta = tg.TensorArray(tg.float64, size=2).write(0, x)
        return ta.read(0) + ta.read(0)
    with pytest.raises(ValueError, match="Could not read index 0 twice because it was cleared"):
        values(fn, [np.array(1.0)], mode)


def test_out_of_range_and_size_exceeded():
    ta = tg.TensorArray(tg.float64, size=2, element_shape=())
    with pytest.raises(IndexError, match="Tried to read from index 2 but array size is: 2"):
        ta.read(2)
    with pytest.raises(IndexError, match="index 5 but array is not resizeable and size is: 2"):
        ta.write(5, 1.0)


def test_wrong_dtype_and_shape_name_the_argument():
    ta = tg.TensorArray(tg.float32, size=2, element_shape=(2,))
    with pytest.raises(TypeError, match="has dtype float32 but `value` has dtype int64"):
        ta.write(0, tg.constant([1, 2]))
    with pytest.raises(ValueError, match=r"elements of shape \(2,\) but `value` gives "
                                         r"elements of shape \(3,\)"):
        ta.write(0, tg.ones(3, tg.float32))
    with pytest.raises(TypeError, match="`dtype`"):
        tg.TensorArray("not a dtype")


def test_body_must_return_the_array():
    start = tg.TensorArray(tg.float64, size=2, element_shape=())
    with pytest.raises(TypeError, match=r"loop_vars\[1\] is a TensorArray in loop_vars"):
        tg.while_loop(lambda i, ta: i < 2, lambda i, ta: (i + 1, tg.constant(0.0)),
                      [tg.constant(0), start])


def test_reading_an_array_never_written_with_no_element_shape():
    with pytest.raises(ValueError, match="has not been written to"):
        tg.TensorArray(tg.float64, size=2).stack()
