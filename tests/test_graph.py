"""Graph mode: tg.Graph, placeholders, shape inference, tg.Session, node names, tg.function.

Issue 3, section "Graphs". Gradients built with ``tg.gradients`` are tested in
tests/test_graph_gradients.py.
"""
import collections

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.ops.core.apply import bind
from teachgrad.ops.core.declare import primitive


def names(graph):
    return [op.name for op in graph.get_operations()]


def counting_op(name, calls, fail=False):
    """An op whose kernel records each run (and may fail when run).

    It has a shape rule, so building a node never runs the kernel: any call
    recorded comes from a Session running it.
    """
    def kernel(x):
        calls.append(name)
        if fail:
            raise RuntimeError(f"{name} was run")
        return x * 2
    op = primitive(name, kernel)
    op.shape_rule = lambda x: [(x.shape, x.dtype)]
    return op


# -- building graphs ---------------------------------------------------------------
def test_same_op_functions_build_nodes_in_a_graph_and_compute_outside():
    def model(x, w):
        return tg.sum(tg.tanh(tg.matmul(x, w)) * 2.0 + 1.0, axis=1)

    x_val = np.arange(6.0).reshape(2, 3) / 10
    w_val = np.linspace(-1, 1, 12).reshape(3, 4)

    eager = model(tg.constant(x_val), tg.constant(w_val))
    assert type(eager) is tg.Tensor
    np.testing.assert_allclose(eager.numpy(),
                               np.sum(np.tanh(x_val @ w_val) * 2 + 1, axis=1))

    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(None, 3), name="x")
        w = tg.constant(w_val)
        y = model(x, w)
    assert isinstance(y, tg.SymbolicTensor)
    assert y.graph is g
    assert y.shape == (None,)
    assert y.dtype == np.float64
    assert [op.op.name for op in g.get_operations()] == [
        "placeholder", "const", "matmul", "tanh", "const", "multiply", "const", "add", "sum"]
    np.testing.assert_allclose(tg.Session(g).run(y, feed_dict={x: x_val}), eager.numpy())


def test_constant_inside_a_graph_is_a_const_node():
    outside = tg.constant([1.0, 2.0])
    assert type(outside) is tg.Tensor
    np.testing.assert_array_equal(outside.numpy(), [1.0, 2.0])

    g = tg.Graph()
    with g.as_default():
        c = tg.constant([1.0, 2.0], dtype=tg.float32)
    assert isinstance(c, tg.SymbolicTensor)
    (node,) = g.get_operations()
    assert node.name == "Const"
    assert node.op.name == "const"
    assert node.inputs == ()
    assert node.outputs == (c,)
    assert node.grad_of is None
    assert c.shape == (2,) and c.dtype == np.float32
    np.testing.assert_array_equal(tg.Session(g).run(c), np.array([1.0, 2.0], np.float32))


def test_node_records_its_inputs_and_outputs():
    g = tg.Graph()
    with g.as_default():
        a = tg.placeholder(tg.float32, (2,), name="a")
        b = tg.placeholder(tg.float32, (2,), name="b")
        c = a * b
    node = c.node
    assert node in g.get_operations()
    assert node.name == "multiply"
    assert node.op.name == "multiply"
    assert node.inputs == (a, b)
    assert node.outputs == (c,)
    assert a.node.op.name == "placeholder"
    assert c.name == "multiply"


def test_graph_is_default_only_inside_as_default():
    g = tg.Graph()
    assert tg.get_default_graph() is None
    with g.as_default() as entered:
        assert entered is g
        assert tg.get_default_graph() is g
        inner = tg.Graph()
        with inner.as_default():
            assert tg.get_default_graph() is inner
        assert tg.get_default_graph() is g
    assert tg.get_default_graph() is None
    # Ops outside any graph compute again.
    assert type(tg.constant(1.0) + 1.0) is tg.Tensor


def test_placeholder_needs_a_graph():
    with pytest.raises(RuntimeError, match="graph"):
        tg.placeholder(tg.float32, (None, 3))


def test_placeholder_keeps_shape_dtype_and_name():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
        anything = tg.placeholder(tg.int64, name="anything")
    assert x.shape == (None, 3)
    assert x.dtype == np.float32
    assert x.name == "x"
    assert x.node.op.name == "placeholder"
    assert anything.shape is None     # unknown rank
    assert anything.dtype == np.int64


@pytest.mark.parametrize("build, shape", [
    (lambda x, w, b: tg.matmul(x, w), (None, 4)),
    (lambda x, w, b: x + b, (None, 3)),
    (lambda x, w, b: x * 2.0, (None, 3)),
    (lambda x, w, b: tg.exp(x), (None, 3)),
    (lambda x, w, b: tg.transpose(x), (3, None)),
    (lambda x, w, b: tg.sum(x, axis=0), (3,)),
    (lambda x, w, b: tg.sum(x, axis=1), (None,)),
    (lambda x, w, b: tg.sum(x), ()),
    (lambda x, w, b: tg.mean(x), ()),
    (lambda x, w, b: tg.relu(tg.matmul(x, w) + 1.0), (None, 4)),
    (lambda x, w, b: tg.expand_dims(x, 1), (None, 1, 3)),
])
def test_inferred_shapes_keep_unknown_dimensions(build, shape):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
        w = tg.placeholder(tg.float32, shape=(3, 4), name="w")
        b = tg.placeholder(tg.float32, shape=(3,), name="b")
        y = build(x, w, b)
    assert y.shape == shape
    assert y.dtype == np.float32
    # and the value a Session computes has a shape that fits
    out = tg.Session(g).run(y, {x: np.ones((5, 3)), w: np.ones((3, 4)), b: np.ones(3)})
    assert out.ndim == len(shape)
    assert all(d is None or d == n for d, n in zip(shape, out.shape))


def test_inferred_shape_with_two_unknown_operands():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3))
        w = tg.placeholder(tg.float32, shape=(3, None))
        unknown_rank = tg.placeholder(tg.float32)
        y = tg.matmul(x, w)
        z = unknown_rank * 2.0
    assert y.shape == (None, None)
    assert z.shape is None


def test_shape_error_when_building_matmul_names_op_and_both_shapes():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
        w = tg.placeholder(tg.float32, shape=(4, 2), name="w")
        with pytest.raises(ValueError) as info:
            tg.matmul(x, w)
    message = str(info.value)
    assert "matmul" in message
    assert "(None, 3)" in message
    assert "(4, 2)" in message


def test_shape_error_when_building_add_names_op_and_both_shapes():
    g = tg.Graph()
    with g.as_default():
        a = tg.constant(np.ones((2, 3)))
        b = tg.constant(np.ones(4))
        with pytest.raises(ValueError) as info:
            tg.add(a, b)
    message = str(info.value)
    assert "add" in message
    assert "(2, 3)" in message
    assert "(4,)" in message


def test_shape_error_with_unknown_dimension_is_reported_at_build_time():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
        with pytest.raises(ValueError) as info:
            x + tg.constant(np.ones(4, np.float32))
    message = str(info.value)
    assert "add" in message and "(None, 3)" in message and "(4,)" in message


def test_tensors_of_one_graph_cannot_be_used_in_another():
    g1, g2 = tg.Graph(), tg.Graph()
    with g1.as_default():
        x = tg.placeholder(tg.float32, (2,), name="x")
    with g2.as_default():
        with pytest.raises(ValueError, match="another graph"):
            x * 2.0


def test_symbolic_tensor_has_no_value_outside_a_session():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (2,), name="x")
    with pytest.raises(RuntimeError):
        x.numpy()
    with pytest.raises(RuntimeError, match="x"):
        tg.exp(x)       # an eager op on a graph tensor
    with pytest.raises(TypeError):
        bool(x)


# -- node names --------------------------------------------------------------------
def test_node_names_are_numbered_when_taken():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (None, 3), name="x")
        m0 = x * x
        m1 = x * x
        m2 = x * x
        x_again = tg.placeholder(tg.float32, (None, 3), name="x")
    assert (m0.name, m1.name, m2.name) == ("multiply", "multiply_1", "multiply_2")
    assert x_again.name == "x_1"
    assert m1.node.name == "multiply_1"


def test_name_scopes_prefix_names_with_slash():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (None, 3), name="x")
        with g.name_scope("layer1") as scope:
            h = tg.relu(x + 1.0)
            with g.name_scope("inner"):
                z = h * 2.0
        with g.name_scope("layer1") as scope_again:
            h2 = x + 1.0
        outside = x + 1.0
    assert scope == "layer1"
    assert scope_again == "layer1_1"
    assert h.name == "layer1/relu"
    assert h.node.inputs[0].name == "layer1/add"
    assert z.name == "layer1/inner/multiply"
    assert h2.name == "layer1_1/add"
    assert outside.name == "add"
    assert "layer1/Const" in names(g)


def test_tg_name_scope_uses_the_default_graph_and_is_a_no_op_eagerly():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (2,), name="x")
        with tg.name_scope("block") as scope:
            y = x * 2.0
    assert scope == "block"
    assert y.name == "block/multiply"
    with tg.name_scope("eager"):
        z = tg.constant([1.0, 2.0]) * 2.0
    assert type(z) is tg.Tensor
    np.testing.assert_array_equal(z.numpy(), [2.0, 4.0])


def test_node_names_are_unique_even_when_a_given_name_looks_numbered():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (2,), name="x")
        x * x                                           # multiply
        tg.placeholder(tg.float32, (2,), name="multiply_1")
        x * x                                           # must not be multiply_1 again
        x * x
        tg.placeholder(tg.float32, (2,), name="multiply_2")  # taken already
    counts = collections.Counter(names(g))
    assert [n for n, c in counts.items() if c > 1] == []


def test_all_names_unique_in_a_larger_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (None, 3), name="x")
        h = x
        for _ in range(3):
            with g.name_scope("layer"):
                h = tg.tanh(h * 0.5 + 1.0)
        tg.gradients(tg.sum(h), x)
        tg.gradients(tg.sum(h), x)
    all_names = names(g)
    assert len(all_names) == len(set(all_names))
    assert "layer_2/tanh" in all_names


# -- Session -----------------------------------------------------------------------
def test_session_runs_a_graph_and_returns_numpy():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
        y = tg.sum(x * x)
    out = tg.Session(g).run(y, feed_dict={x: [[1, 2, 3]]})
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float32
    assert out == 14.0


def test_session_feeds_different_batch_sizes():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(None, 2), name="x")
        y = x * 3.0
    sess = tg.Session(g)
    assert sess.run(y, {x: np.ones((1, 2))}).shape == (1, 2)
    assert sess.run(y, {x: np.ones((4, 2))}).shape == (4, 2)
    np.testing.assert_array_equal(sess.run(y, {x: [[1.0, 2.0]]}), [[3.0, 6.0]])


def test_session_fetches_nested_structures():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(2,), name="x")
        a = x + 1.0
        b = x * 2.0
        c = tg.sum(x)
    fetched = tg.Session(g).run({"pair": (a, b), "list": [c, [a]], "one": c},
                                feed_dict={x: [1.0, 2.0]})
    assert set(fetched) == {"pair", "list", "one"}
    assert isinstance(fetched["pair"], tuple) and len(fetched["pair"]) == 2
    assert isinstance(fetched["list"], list) and isinstance(fetched["list"][1], list)
    np.testing.assert_array_equal(fetched["pair"][0], [2.0, 3.0])
    np.testing.assert_array_equal(fetched["pair"][1], [2.0, 4.0])
    assert fetched["list"][0] == 3.0 and fetched["one"] == 3.0
    np.testing.assert_array_equal(fetched["list"][1][0], [2.0, 3.0])
    for leaf in (fetched["pair"][0], fetched["list"][0], fetched["one"]):
        assert isinstance(leaf, np.ndarray)

    single = tg.Session(g).run([a], {x: [0.0, 0.0]})
    assert isinstance(single, list) and len(single) == 1


def test_session_runs_only_the_needed_subgraph():
    calls = []
    on_path = counting_op("on_path", calls)
    off_path = counting_op("off_path", calls, fail=True)
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (3,), name="x")
        unfed = tg.placeholder(tg.float64, (3,), name="unfed")
        y = bind(on_path, x) + 1.0
        never = bind(off_path, x) + unfed        # would fail if it ran
    sess = tg.Session(g)
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [3.0, 5.0, 7.0])
    assert calls == ["on_path"]
    # Running the other branch does run its kernel (so the check above means something).
    with pytest.raises(RuntimeError, match="off_path was run"):
        sess.run(never, {x: [1.0, 2.0, 3.0], unfed: [0.0, 0.0, 0.0]})
    assert calls == ["on_path", "off_path"]


def test_unfed_placeholder_off_the_fetched_path_is_fine():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (2,), name="x")
        labels = tg.placeholder(tg.float32, (2,), name="labels")
        prediction = x * 2.0
        loss = tg.sum(prediction - labels)
    np.testing.assert_array_equal(tg.Session(g).run(prediction, {x: [1.0, 2.0]}), [2.0, 4.0])
    with pytest.raises(ValueError, match="labels"):
        tg.Session(g).run(loss, {x: [1.0, 2.0]})


def test_feeding_an_intermediate_tensor_cuts_the_graph_there():
    calls = []
    expensive = counting_op("expensive", calls)
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (2,), name="x")
        h = bind(expensive, x)
        y = h + 1.0
    out = tg.Session(g).run(y, {h: [10.0, 20.0]})       # x is not fed, and not needed
    np.testing.assert_array_equal(out, [11.0, 21.0])
    assert calls == []


def test_missing_feed_names_the_placeholder():
    g = tg.Graph()
    with g.as_default():
        with g.name_scope("inputs"):
            x = tg.placeholder(tg.float32, shape=(None, 3), name="images")
        y = x * 2.0
    with pytest.raises(ValueError) as info:
        tg.Session(g).run(y)
    message = str(info.value)
    assert "inputs/images" in message
    assert "feed" in message


@pytest.mark.parametrize("value, fed_shape", [
    (np.ones((2, 4)), "(2, 4)"),       # wrong size of a known dimension
    (np.ones(3), "(3,)"),              # wrong rank
    (np.ones((1, 2, 3)), "(1, 2, 3)"),
])
def test_feed_of_wrong_shape_names_the_placeholder_and_shapes(value, fed_shape):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
        y = x * 2.0
    with pytest.raises(ValueError) as info:
        tg.Session(g).run(y, {x: value})
    message = str(info.value)
    assert "'x'" in message
    assert fed_shape in message
    assert "(None, 3)" in message


def test_placeholder_of_unknown_rank_accepts_any_shape():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, name="x")
        y = x + 1.0
    sess = tg.Session(g)
    assert sess.run(y, {x: 1.0}) == 2.0
    assert sess.run(y, {x: np.zeros((2, 3, 4))}).shape == (2, 3, 4)


@pytest.mark.parametrize("value", [np.array([1.5, 2.5]), [1.5, 2.5], np.array(["a", "b"])])
def test_feed_of_wrong_dtype_names_the_placeholder(value):
    g = tg.Graph()
    with g.as_default():
        i = tg.placeholder(tg.int32, shape=(2,), name="indices")
        y = i + 1
    with pytest.raises(TypeError) as info:
        tg.Session(g).run(y, {i: value})
    message = str(info.value)
    assert "'indices'" in message
    assert "int32" in message


def test_feed_of_compatible_dtype_is_converted_to_the_placeholder_dtype():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=(2,), name="x")
        y = x * 1.0
    out = tg.Session(g).run(y, {x: np.array([1.0, 2.0], dtype=np.float64)})
    assert out.dtype == np.float32


def test_session_rejects_tensors_of_another_graph():
    g1, g2 = tg.Graph(), tg.Graph()
    with g1.as_default():
        a = tg.constant(1.0)
    with g2.as_default():
        b = tg.constant(2.0)
    with pytest.raises(ValueError):
        tg.Session(g1).run(b)
    with pytest.raises((TypeError, ValueError)):
        tg.Session(g2).run(b, {a: 3.0})
    with pytest.raises(TypeError):
        tg.Session(g1).run(tg.constant(1.0))      # an eager tensor is not a fetch


def test_session_can_be_used_as_a_context_manager():
    g = tg.Graph()
    with g.as_default():
        c = tg.constant(2.0) * 3.0
    with tg.Session(g) as sess:
        assert sess.run(c) == 6.0


def test_session_results_do_not_depend_on_cached_plans():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (2,), name="x")
        y = x * x
    sess = tg.Session(g)
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 4.0])
    with g.as_default():       # the graph grows after it has been run
        z = y + x
    np.testing.assert_array_equal(sess.run([y, z], {x: [3.0, 4.0]})[1], [12.0, 20.0])
    np.testing.assert_array_equal(sess.run(y, {x: [5.0, 6.0]}), [25.0, 36.0])


def test_kernel_error_that_cannot_be_rebuilt_keeps_its_type_and_gets_the_node_as_a_note():
    def into_ints(x):   # numpy's casting error wants the dtypes, not a message
        return np.add(x, x, out=np.zeros(x.shape, dtype=np.int64))

    with pytest.raises(TypeError) as direct:
        into_ints(np.ones(2))
    op = primitive("into_ints", into_ints)
    op.shape_rule = lambda x: [(x.shape, x.dtype)]
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (2,), name="x")
        y = bind(op, x)
    with pytest.raises(TypeError) as info:
        tg.Session(g).run(y, {x: [1.5, 2.5]})
    assert type(info.value) is type(direct.value)
    assert "Cannot cast ufunc 'add' output" in str(info.value)
    assert info.value.__notes__ == ["Raised by into_ints (into_ints) (input shapes: (2,))."]


# -- tg.function -------------------------------------------------------------------
def test_function_traces_once_per_signature():
    traces = []

    @tg.function
    def f(x):
        traces.append(x.shape)
        return tg.sum(x * x)

    a = f(tg.constant(np.arange(3.0)))
    assert type(a) is tg.Tensor and a.numpy() == 5.0
    assert f.trace_count == 1
    # new values, same shape and dtype: no new trace, but the new values are used
    assert f(tg.constant(np.ones(3))).numpy() == 3.0
    assert f(tg.constant(np.full(3, 2.0))).numpy() == 12.0
    assert f.trace_count == 1 and len(traces) == 1
    # a new shape: a new trace
    assert f(tg.constant(np.ones(4))).numpy() == 4.0
    assert f.trace_count == 2 and len(traces) == 2
    # a new dtype: a new trace
    out = f(tg.constant(np.ones(4, np.float32)))
    assert out.dtype == np.float32
    assert f.trace_count == 3 and len(traces) == 3
    # the earlier signatures are still cached
    f(tg.constant(np.zeros(3)))
    f(tg.constant(np.zeros(4)))
    assert f.trace_count == 3 and len(traces) == 3


def test_function_traces_on_placeholders():
    seen = []

    @tg.function
    def f(x):
        seen.append(x)
        return x + 1.0

    f(tg.constant(np.ones((2, 3))))
    (arg,) = seen
    assert isinstance(arg, tg.SymbolicTensor)
    assert arg.shape == (2, 3)
    assert arg.node.op.name == "placeholder"


def test_function_retraces_for_new_python_arguments():
    @tg.function
    def scaled(x, factor):
        return x * factor

    x = tg.constant(np.ones(2))
    np.testing.assert_array_equal(scaled(x, 2.0).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(scaled(x, 3.0).numpy(), [3.0, 3.0])
    assert scaled.trace_count == 2
    scaled(x, 2.0)
    assert scaled.trace_count == 2


def test_function_matches_eager_and_keeps_output_structure():
    def body(x, y):
        return {"sum": tg.sum(x * y), "pair": (x + y, tg.exp(x))}

    f = tg.function(body)
    x_val, y_val = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    got = f(tg.constant(x_val), tg.constant(y_val))
    want = body(tg.constant(x_val), tg.constant(y_val))
    assert set(got) == {"sum", "pair"}
    assert isinstance(got["pair"], tuple)
    np.testing.assert_allclose(got["sum"].numpy(), want["sum"].numpy())
    np.testing.assert_allclose(got["pair"][0].numpy(), want["pair"][0].numpy())
    np.testing.assert_allclose(got["pair"][1].numpy(), want["pair"][1].numpy())


def test_function_exposes_its_graph():
    @tg.function
    def f(x):
        return tg.sum(tg.tanh(x) * 2.0)

    assert f.graph is None
    x = tg.constant(np.ones(3))
    f(x)
    graph = f.graph
    assert isinstance(graph, tg.Graph)
    ops = [op.op.name for op in graph.get_operations()]
    assert ops[0] == "placeholder"
    assert "tanh" in ops and "multiply" in ops and "sum" in ops
    assert len(set(names(graph))) == len(names(graph))

    concrete = f.get_concrete_function(x)
    assert concrete.graph is graph
    assert f.trace_count == 1
    (inp,) = concrete.inputs
    assert inp.shape == (3,) and inp.dtype == np.float64
    assert [o.node.op.name for o in concrete.outputs] == ["sum"]
    # the graph can be run by a Session, too
    np.testing.assert_allclose(tg.Session(graph).run(concrete.outputs[0], {inp: np.zeros(3)}),
                               0.0)

    other = f.get_concrete_function(tg.constant(np.ones((2, 2))))
    assert other.graph is not graph
    assert f.trace_count == 2


def test_function_accepts_numpy_arrays():
    @tg.function
    def f(x):
        return x * 2.0

    np.testing.assert_array_equal(f(np.array([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(np.array([3.0, 4.0])).numpy(), [6.0, 8.0])
    assert f.trace_count == 1


def test_function_called_in_a_graph_is_one_call_node():
    @tg.function
    def inner(x):
        return tg.sin(x) * x

    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (3,), name="x")
        y = inner(x)
    call_nodes = [op for op in g.get_operations() if op.op.name == "call"]
    assert len(call_nodes) == 1
    assert call_nodes[0].inputs == (x,)
    assert y.shape == (3,) and y.dtype == np.float64
    # the body's ops live in the function's graph, not in g
    assert "sin" not in [op.op.name for op in g.get_operations()]
    x_val = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(tg.Session(g).run(y, {x: x_val}), np.sin(x_val) * x_val)


def test_nested_function_makes_a_call_node():
    @tg.function
    def inner(x):
        return tg.sin(x) * x

    @tg.function
    def outer(x):
        return tg.sum(inner(x) * 2.0)

    x_val = np.array([0.5, 1.0, 2.0])
    out = outer(tg.constant(x_val))
    np.testing.assert_allclose(out.numpy(), np.sum(np.sin(x_val) * x_val * 2))
    ops = [op.op.name for op in outer.graph.get_operations()]
    assert ops.count("call") == 1
    assert "sin" not in ops
    call = next(op for op in outer.graph.get_operations() if op.op.name == "call")
    assert call.name == "call"


def test_function_reads_variables_at_call_time():
    v = tg.Variable(np.array([1.0, 2.0]), name="v")

    @tg.function
    def f(x):
        return tg.sum(v * x)

    x = tg.constant(np.array([3.0, 4.0]))
    assert f(x).numpy() == 11.0
    v.assign([10.0, 20.0])
    assert f(x).numpy() == 110.0
    assert f.trace_count == 1


def test_scratch_takes_away_what_the_block_added():
    g = tg.Graph()
    v = tg.Variable(1.0, name="v")
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(), name="x")
        y = x * 2.0
    before = g.get_operations()
    assert g.find_variable_read(v) is None
    with g.scratch(), g.as_default():
        z = y * v
        assert g.find_variable_read(v) is not None
    assert g.get_operations() == before and g.producer(z.id) is None
    assert g.find_variable_read(v) is None
    with g.as_default():
        w = y * 3.0
    assert w.node.label == z.node.label           # the name is free again
    assert tg.Session(g).run(w, {x: 2.0}) == 12.0


def test_constant_of_a_graph_tensor_with_a_dtype_casts_it():
    g = tg.Graph()
    with g.as_default():
        p = tg.placeholder(tg.float64, shape=(2,), name="p")
        c = tg.constant(p, dtype=tg.float32)
    assert c.dtype == np.float32 and c.node.op.name == "cast"
    np.testing.assert_array_equal(tg.Session(g).run(c, {p: [1.5, 2.0]}), [1.5, 2.0])
