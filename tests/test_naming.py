"""``name=`` on every op (issue 19): the label drawings, steppers and errors use."""
import inspect

import numpy as np
import pytest

import teachgrad as tg


def test_an_eager_result_carries_its_name():
    x = tg.constant(2.0, name="x")
    a = tg.multiply(x, 3.0, name="a")
    assert a.name == "a" and float(a) == 6.0
    assert tg.sin(x).name is None                    # no name given: none made up here


def test_several_outputs_are_numbered_as_tensorflow_numbers_them():
    parts = tg.split(tg.constant([1.0, 2.0, 3.0, 4.0]), 2, name="half")
    assert [p.name for p in parts] == ["half:0", "half:1"]


def test_an_input_handed_back_keeps_its_own_name():
    x = tg.constant([1.0, 2.0], name="x")
    y = tg.reshape(x, (2,), name="y")                # same shape: reshape returns x itself
    assert x.name == "x" and y.name == "y" and y is not x
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_a_graph_node_is_renamed_under_its_scopes_and_numbered_if_taken():
    graph = tg.Graph()
    with graph.as_default(), tg.name_scope("layer"):
        x = tg.placeholder(tg.float64, (2,), name="x")
        first = tg.multiply(x, 2.0, name="a")
        second = tg.multiply(x, 3.0, name="a")
    assert first.name == "layer/a" and second.name == "layer/a_1"


def test_a_traced_function_names_its_placeholders_after_its_parameters():
    @tg.function
    def f(weights, bias, *rest):
        return weights * bias + sum(rest)
    f(tg.constant(1.0), tg.constant(2.0), tg.constant(3.0))
    names = [p.name for p in f.get_concrete_function(
        tg.constant(1.0), tg.constant(2.0), tg.constant(3.0)).inputs]
    assert names == ["weights", "bias", "rest_0"]


def test_an_error_says_which_named_op_raised_it():
    with pytest.raises(ValueError, match="in the op named 'pair'"):
        tg.add(tg.ones((2,)), tg.ones((3,)), name="pair")


@pytest.mark.parametrize("call, where", [
    (lambda: tg.sin(1.0, name=3), "tg.sin"),
    (lambda: tg.nn.relu(1.0, name=3), "tg.relu"),
    (lambda: tg.nn.conv2d(tg.ones((1, 3, 3, 1)), tg.ones((2, 2, 1, 1)), 1, "VALID", name=3),
     "tg.nn.conv2d"),
    (lambda: tg.linalg.det(tg.ones((2, 2)), name=3), "tg.linalg.det"),
])
def test_a_name_that_is_not_a_string_is_refused_where_the_function_lives(call, where):
    with pytest.raises(TypeError, match=rf"^{where}: `name` must be a string"):
        call()


def test_every_public_op_takes_name():
    from teachgrad.ops.core.naming import NOT_OPS
    spaces = [(tg, n) for n in dir(tg) if not n.startswith("_")] + \
             [(tg.nn, n) for n in tg.nn.__all__] + [(tg.linalg, n) for n in tg.linalg.__all__]
    homes = ("teachgrad.ops", "teachgrad.nn", "teachgrad.linalg")   # where ops are defined
    ops = {n: getattr(s, n) for s, n in spaces if inspect.isfunction(getattr(s, n))
           and getattr(s, n).__module__.startswith(homes) and n not in NOT_OPS}
    assert len(ops) > 150
    missing = [n for n, op in ops.items() if "name" not in inspect.signature(op).parameters]
    assert not missing, f"ops without name=: {missing}"
