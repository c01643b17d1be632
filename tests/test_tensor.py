"""Tensors, dtypes, operators, and clear errors for bad input."""
import inspect

import numpy as np
import pytest

import teachgrad as tg


def test_constant_dtypes_follow_numpy():
    assert tg.constant(1.5).dtype == tg.float64
    assert tg.constant([1, 2]).dtype == tg.int64
    assert tg.constant([True]).dtype == tg.bool_
    assert tg.constant([1, 2], dtype=tg.float32).dtype == tg.float32
    assert tg.constant(np.zeros(3, np.float32)).dtype == tg.float32


def test_python_scalar_takes_the_tensor_dtype():
    x = tg.constant([1.0, 2.0], dtype=tg.float32)
    for y in (x * 2.0, 2.0 * x, x + 1, x / 3, x ** 2, 1 - x, tg.maximum(x, 0.5)):
        assert y.dtype == tg.float32
    assert (tg.constant([1, 2]) * 1.5).dtype == tg.float64


def test_tensor_properties_and_conversion():
    x = tg.constant([[1.0, 2.0, 3.0]], name="x")
    assert x.shape == (1, 3) and x.ndim == 2 and x.size == 3 and x.name == "x"
    np.testing.assert_array_equal(np.asarray(x), [[1.0, 2.0, 3.0]])
    assert isinstance(x.numpy(), np.ndarray)
    assert "shape=(1, 3)" in repr(x)
    assert float(tg.constant(2.5)) == 2.5


def test_operators_and_broadcasting():
    a = tg.constant([[1.0], [2.0]])
    b = tg.constant([10.0, 20.0, 30.0])
    np.testing.assert_allclose((a + b).numpy(), [[11, 21, 31], [12, 22, 32]])
    np.testing.assert_allclose((a - b).numpy(), a.numpy() - b.numpy())
    np.testing.assert_allclose((-a).numpy(), [[-1.0], [-2.0]])
    np.testing.assert_allclose((a @ tg.constant([[1.0, 2.0]])).numpy(), [[1, 2], [2, 4]])
    np.testing.assert_allclose(abs(tg.constant([-1.0, 2.0])).numpy(), [1.0, 2.0])
    np.testing.assert_allclose((np.array([1.0, 1.0]) + tg.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    assert (a < 1.5).dtype == tg.bool_
    np.testing.assert_array_equal((a == 2.0).numpy(), [[False], [True]])
    np.testing.assert_array_equal((a != 2.0).numpy(), [[True], [False]])
    np.testing.assert_allclose(tg.constant(np.arange(6.0).reshape(2, 3)).T.numpy(),
                               np.arange(6.0).reshape(2, 3).T)


def test_comparisons_are_never_differentiated():
    x = tg.constant([1.0, -1.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        mask = x > 0
        y = tg.sum(tg.where(mask, x, 0.0))
    assert mask.dtype == tg.bool_
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 0.0])


def test_tensors_are_hashable_identities():
    a, b = tg.constant(1.0), tg.constant(1.0)
    assert len({a, b}) == 2


def test_shape_mismatch_in_add_names_both_shapes():
    with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4,\)"):
        tg.constant(np.ones((2, 3))) + tg.constant(np.ones(4))


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        tg.matmul(tg.constant(np.ones((2, 3))), tg.constant(np.ones((4, 5))))
    with pytest.raises(ValueError, match="multiply"):
        tg.matmul(tg.constant(2.0), tg.constant(np.ones((2, 2))))


def test_constant_from_ragged_list_is_a_clear_error():
    with pytest.raises(ValueError, match="mixed shapes"):
        tg.constant([[1.0, 2.0], [3.0]])
    with pytest.raises(TypeError):
        tg.constant("three")


def test_nan_inputs_propagate():
    x = tg.constant([np.nan, 1.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sum(tg.exp(x) * 2)
    assert np.isnan(y.numpy())
    g = tape.gradient(y, x).numpy()
    assert np.isnan(g[0]) and np.isclose(g[1], 2 * np.e)


def test_bad_arguments_to_shape_ops():
    x = tg.constant(np.ones((2, 3)))
    with pytest.raises(ValueError, match="reshape"):
        tg.reshape(x, (4, 2))
    with pytest.raises(ValueError, match="axis"):
        tg.sum(x, axis=2)
    with pytest.raises(ValueError, match="split"):
        tg.split(x, 2, axis=1)
    with pytest.raises(ValueError, match="squeeze"):
        tg.squeeze(x, 0)
    with pytest.raises(IndexError, match="gather"):
        tg.gather(x, [5])
    with pytest.raises(TypeError, match="gather"):
        tg.gather(x, tg.constant([0.5]))
    with pytest.raises(ValueError, match="stack"):
        tg.stack([x, tg.constant(np.ones(3))])
    with pytest.raises(ValueError, match="permutation"):
        tg.transpose(x, (0, 0))
    with pytest.raises(ValueError, match="add_n"):
        tg.add_n([x, tg.constant(np.ones(3))])


def test_add_n_of_mixed_dtypes_names_them_and_says_to_cast():
    x32 = tg.constant([1.0, 2.0], dtype=tg.float32)
    x64 = tg.constant([1.0, 2.0], dtype=tg.float64)
    with pytest.raises(TypeError, match=r"add_n.*float32 and float64.*tg\.cast"):
        tg.add_n([x32, x64])
    with pytest.raises(TypeError, match=r"float64 and int64"):
        tg.add_n([x64, tg.constant([1, 2])])
    g = tg.Graph()
    with g.as_default(), pytest.raises(TypeError, match=r"float32 and float64"):
        tg.add_n([tg.placeholder(tg.float32, (2,)), tg.placeholder(tg.float64, (2,))])
    # One dtype (a Python number takes the tensors'), or a cast first, is fine.
    assert tg.add_n([x32, x32, 1.0]).dtype == tg.float32
    np.testing.assert_array_equal(tg.add_n([x32, tg.cast(x64, tg.float32)]).numpy(), [2.0, 4.0])


def _into_ints(x):
    """A kernel that fails with numpy's casting error, whose constructor wants the
    dtypes (and more), not a message."""
    return np.add(x, x, out=np.zeros(x.shape, dtype=np.int64))


def test_error_that_cannot_be_rebuilt_keeps_its_type_and_gets_the_op_as_a_note():
    with pytest.raises(TypeError) as direct:
        _into_ints(np.ones(2))
    op = tg.ops.primitive("into_ints", _into_ints)
    with pytest.raises(TypeError) as info:
        tg.ops.bind(op, tg.constant([1.5, 2.5]))
    assert type(info.value) is type(direct.value)
    assert "Cannot cast ufunc 'add' output" in str(info.value)
    assert info.value.__notes__ == ["Raised by into_ints (input shapes: (2,))."]


def test_truth_value_of_a_vector_is_ambiguous():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(tg.constant([1.0, 2.0]))
    assert bool(tg.constant(1.0))


def test_backend_selection():
    assert tg.get_backend() == "numpy"
    with pytest.raises(ValueError, match="numpy"):
        tg.set_backend("tpu")
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="pip install"):
            tg.set_backend("cupy")
        assert tg.get_backend() == "numpy"


# -- Tensor's operators are the public ops themselves (issue 40) ----------------------

def test_each_operator_and_method_is_the_public_op():
    """``Tensor.sum is tg.sum``, ``Tensor.__mul__ is tg.multiply.__wrapped__``: one
    function, whether called as ``x * y`` or ``tg.multiply(x, y)`` (which adds name= to
    it), for every entry of the table in Tensor's class body."""
    from teachgrad.tensor import Tensor
    public = {**vars(tg), "getitem": tg.ops.getitem}   # x[i] has no tg. name
    assert len(Tensor.OPERATORS) >= 20
    for method, op in Tensor.OPERATORS.items():
        assert "name" in inspect.signature(public[op]).parameters, op
        if method.startswith("__"):
            assert getattr(Tensor, method) is public[op].__wrapped__, method
        else:
            assert getattr(Tensor, method) is public[op], method


@pytest.mark.parametrize("method", ["__radd__", "__rsub__", "__rmul__", "__rtruediv__",
                                    "__rpow__", "__rmod__", "__rmatmul__"])
def test_each_reflected_operator_calls_the_public_op_swapped(method):
    """``2 - x`` is ``tg.subtract(2, x)``: the reflected method holds the very function
    ``x - 2`` is, and calls it with the operands swapped."""
    from teachgrad.tensor import Tensor
    forward = Tensor.OPERATORS[method.replace("r", "", 1)]
    reflected = getattr(Tensor, method)
    assert [c.cell_contents for c in reflected.__closure__] == [getattr(tg, forward).__wrapped__]
    x = tg.constant([[2.0, 3.0], [4.0, 5.0]])
    other = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(reflected(x, other).numpy(),
                               getattr(tg, forward)(other, x).numpy())


def test_the_methods_that_adapt_their_arguments_call_the_public_ops():
    x = tg.constant(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.reshape(3, 2).numpy(), tg.reshape(x, (3, 2)).numpy())
    np.testing.assert_array_equal(x.transpose().numpy(), tg.transpose(x).numpy())
    np.testing.assert_array_equal(x.T.numpy(), x.numpy().T)
    assert +x is x
    assert x.sum(axis=0, name="s").name == "s"     # a method takes name= as its op does
