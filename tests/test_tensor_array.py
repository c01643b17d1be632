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


# -- TensorArray complete (issue 41, item 6): TensorFlow's tensor_array_ops tests -----------
@pytest.mark.parametrize("mode", MODES)
def test_infer_shape_false_keeps_elements_of_different_shapes(mode):
    def fn(x):
        ta = tg.TensorArray(tg.float64, size=3, infer_shape=False)
        ta = ta.write(0, tg.reshape(x[:2], (1, 2))).write(1, tg.reshape(x[2], (1, 1)))
        ta = ta.write(2, -x[0] * 6.0)
        return [ta.read(0), ta.read(1), ta.read(2)]
    got = values(fn, [np.array([4.0, 5.0, 1.0])], mode)
    np.testing.assert_array_equal(got[0], [[4.0, 5.0]])
    np.testing.assert_array_equal(got[1], [[1.0]])
    assert float(got[2]) == -24.0


@pytest.mark.parametrize("mode", MODES)
def test_gradients_through_writes_and_reads_of_different_shapes(mode):
    # TensorFlow's testTensorArrayGradientWriteRead: [[2, 3]] + [[1, -1]] reach value_0.
    def fn(v0, v1):
        ta = tg.TensorArray(tg.float64, size=3, infer_shape=False, clear_after_read=False)
        ta = ta.write(0, v0).write(1, v1)
        return [ta.read(0) * tg.constant([[2.0, 3.0]]) + ta.read(0) * tg.constant([[1.0, -1.0]]),
                ta.read(1) * -2.0]
    _, grads = value_and_grad(fn, [np.array([[4.0, 5.0]]), np.array(3.0)], mode)
    np.testing.assert_array_equal(grads[0], [[3.0, 2.0]])
    assert float(grads[1]) == -2.0


def test_partly_known_element_shape_is_checked_on_write():
    ta = tg.TensorArray(tg.float64, size=2, element_shape=(None, 2, 3))
    assert ta.element_shape == (None, 2, 3)
    with pytest.raises(ValueError, match=r"elements of shape \(None, 2, 3\) but `value` gives "
                                         r"elements of shape \(4, 2, 4\)"):
        ta.write(0, tg.ones((4, 2, 4), tg.float64))
    ta = ta.write(0, tg.ones((4, 2, 3), tg.float64))
    assert ta.element_shape == (4, 2, 3) and ta.stack().shape == (2, 4, 2, 3)
    with pytest.raises(ValueError, match=r"elements of shape \(4, 2, 3\) but `value` gives "
                                         r"elements of shape \(5, 2, 3\)"):
        ta.write(1, tg.ones((5, 2, 3), tg.float64))
    loose = tg.TensorArray(tg.float64, size=2, element_shape=(None, 2, 3), infer_shape=False)
    loose = loose.write(0, tg.ones((4, 2, 3), tg.float64)).write(1, tg.ones((5, 2, 3),
                                                                           tg.float64))
    assert loose.concat().shape == (9, 2, 3)
    with pytest.raises(ValueError, match=r"\(None, 2, 3\) but `value` gives elements of shape "
                                         r"\(5, 3, 3\)"):
        loose.write(0, tg.ones((5, 3, 3), tg.float64))


@pytest.mark.parametrize("mode", MODES)
def test_split_read(mode):
    # TensorFlow's testTensorArraySplitRead: an empty vector, a vector, a matrix.
    def fn(vector, matrix):
        empty = tg.TensorArray(tg.float64, size=3).split(vector[:0], lengths=[0, 0, 0])
        ta = tg.TensorArray(tg.float64, size=3).split(vector, lengths=[2, 0, 1])
        tm = tg.TensorArray(tg.float64, size=3).split(matrix, lengths=tg.constant([2, 0, 1]))
        return [empty.read(1), ta.read(0), ta.read(1), ta.read(2), tm.read(0), tm.read(1),
                tm.read(2)]
    got = values(fn, [np.array([1.0, 2.0, 3.0]),
                      np.array([[1.0, 101.0], [2.0, 201.0], [3.0, 301.0]])], mode)
    assert got[0].shape == (0,)
    np.testing.assert_array_equal(got[1], [1.0, 2.0])
    assert got[2].shape == (0,)
    np.testing.assert_array_equal(got[3], [3.0])
    np.testing.assert_array_equal(got[4], [[1.0, 101.0], [2.0, 201.0]])
    assert got[5].shape == (0, 2)
    np.testing.assert_array_equal(got[6], [[3.0, 301.0]])


@pytest.mark.parametrize("mode", MODES)
def test_split_then_concat_of_varying_lengths_and_its_gradient(mode):
    def fn(x):
        ta = tg.TensorArray(tg.float64, size=3, clear_after_read=False).split(x, [1, 3, 2])
        weights = tg.constant(np.arange(1.0, 7.0))
        return [ta.concat() * weights, tg.sum(ta.read(1) ** 2)]
    x = np.array([0.5, -1.0, 2.0, 0.3, 1.5, -0.7])
    got = values(fn, [x], mode)
    np.testing.assert_allclose(got[0], x * np.arange(1.0, 7.0))
    check_gradients(fn, [x], mode)


@pytest.mark.parametrize("mode", MODES)
def test_split_of_equal_lengths_is_a_buffered_array(mode):
    def fn(x):
        ta = tg.TensorArray(tg.float64, size=3).split(x, [2, 2, 2])
        return ta.stack() * 2.0
    np.testing.assert_array_equal(values(fn, [np.arange(6.0)], mode),
                                  2.0 * np.arange(6.0).reshape(3, 2))


def test_split_errors():
    # TensorFlow's testTensorArraySplitIncompatibleShapesFails.
    ta = tg.TensorArray(tg.float64, size=3)
    with pytest.raises(ValueError, match=r"Expected lengths to be a vector"):
        ta.split([1.0, 2.0, 3.0], 1)
    with pytest.raises(ValueError, match=r"Expected sum of lengths to be equal to "
                                         r"values.shape\[0\], but sum of lengths is 1 and "
                                         r"value's shape is: \[3\]"):
        ta.split([1.0, 2.0, 3.0], [1])
    with pytest.raises(ValueError, match=r"to be at least a vector"):
        tg.TensorArray(tg.float64, size=1).split(1.0, [1])
    with pytest.raises(ValueError, match=r"TensorArray's size is not equal to the size of "
                                         r"lengths \(2 vs. 1\), and the TensorArray 'buz' is "
                                         r"not marked as dynamically resizeable"):
        tg.TensorArray(tg.float64, size=2, name="buz").split([1.0], [1])
    grown = tg.TensorArray(tg.float64, size=0, dynamic_size=True).split([1.0, 2.0, 3.0], [1, 2])
    assert grown.size().numpy() == 2


def test_concat_of_incompatible_shapes():
    # TensorFlow's testTensorArrayConcatIncompatibleShapesFails.
    ta = tg.TensorArray(tg.float64, size=3, infer_shape=False)
    with pytest.raises(ValueError, match="Concat saw a scalar shape at index 0 but requires "
                                         "at least vectors"):
        ta.write(0, 3.0).write(1, 4.0).write(2, [3.0]).concat()
    with pytest.raises(ValueError, match=r"inconsistent shapes. Index 0 has \(excepting "
                                         r"dimension 0\) shape: \[\] but index 2 has "
                                         r"\(excepting dimension 0\) shape: \[1\]"):
        ta.write(0, [3.0]).write(1, [4.0]).write(2, [[3.0]]).concat()
    with pytest.raises(ValueError, match=r"inconsistent shapes. Index 0 has shape: \[1\] but "
                                         r"index 2 has shape: \[2\]"):
        ta.write(0, [3.0]).write(1, [4.0]).write(2, [3.0, 5.0]).stack()
    scalars = tg.TensorArray(tg.float64, size=2).write(0, 1.0).write(1, 2.0)
    with pytest.raises(ValueError, match="Concat saw a scalar shape"):
        scalars.concat()


def test_reading_an_unwritten_element_of_unknown_shape():
    # TensorFlow's testTensorArrayPackNotAllValuesAvailableFails / ReadWrongIndex.
    ta = tg.TensorArray(tg.float64, size=3, infer_shape=False).write(0, [[4.0, 5.0]])
    with pytest.raises(ValueError, match="Could not read from TensorArray index 1 because "
                                         "it has not yet been written to"):
        ta.read(1)
    with pytest.raises(ValueError, match="Could not read from TensorArray index 1 because "
                                         "it has not yet been written to"):
        ta.stack()
    with pytest.raises(IndexError, match="Tried to read from index 3 but array size is: 3"):
        ta.read(3)
    with pytest.raises(ValueError, match="index 0 because it has already been written"):
        ta.write(0, 1.0)
    once = ta.write(1, 2.0)
    once.read(1)
    with pytest.raises(ValueError, match="Could not read index 1 twice because it was "
                                         "cleared after a previous read"):
        once.read(1)


def test_unstack_more_rows_than_the_size():
    with pytest.raises(ValueError, match="Cannot unstack 3 tensors into a TensorArray of "
                                         "static size 2"):
        tg.TensorArray(tg.float64, size=2).unstack([1.0, 2.0, 3.0])


def test_close():
    ta = tg.TensorArray(tg.float64, size=2).write(0, 1.0)
    assert ta.close() is None
    for use in (lambda: ta.read(0), lambda: ta.write(1, 2.0), lambda: ta.stack(), ta.close):
        with pytest.raises(RuntimeError, match="has already been closed"):
            use()
    with pytest.raises(TypeError, match="is closed"):
        tg.while_loop(lambda i, t: i < 1, lambda i, t: (i + 1, t), [tg.constant(0), ta])


def test_arrays_of_different_shapes_are_not_loop_variables():
    ta = tg.TensorArray(tg.float64, size=2, infer_shape=False)
    with pytest.raises(TypeError, match="keeps elements of different shapes one by one"):
        tg.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, t.write(0, 1.0)),
                      [tg.constant(0), ta])
    with pytest.raises(ValueError, match="must be known when the graph is built"):
        with tg.Graph().as_default():
            ta.write(tg.placeholder(tg.int64, ()), 1.0)


def test_size_known_only_when_the_graph_runs():
    g = tg.Graph()
    with g.as_default():
        n = tg.placeholder(tg.int32, (), name="n")
        ta = tg.TensorArray(tg.float64, size=n, element_shape=(2,))
        ta = ta.write(1, tg.ones(2, tg.float64))
        out, size = ta.stack(), ta.size()
        assert out.shape == (None, 2)
    value, count = tg.Session(g).run([out, size], {n: 3})
    np.testing.assert_array_equal(value, [[0, 0], [1, 1], [0, 0]])
    assert count == 3 and size.dtype == tg.int32
    with pytest.raises(IndexError, match="Tried to write to index 1 but array is not "
                                         "resizeable and size is: 1"):
        tg.Session(g).run(out, {n: 1})
