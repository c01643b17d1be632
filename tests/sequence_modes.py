"""Running one function three ways for the sequence tests: eagerly under a tape, through
``tg.function`` under a tape, and in a ``tg.Graph`` with ``tg.gradients`` + ``tg.Session``.

Each runner returns ``(values, gradients)`` as numpy arrays, so a test can ask for
the same numbers in every mode and compare them with finite differences.
"""
import numpy as np

import teachgrad as tg

MODES = ["eager", "function", "graph"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _numpy(t):
    if t is None:
        return None
    if isinstance(t, tg.IndexedSlices):
        t = t.to_dense()
    return np.asarray(t.numpy())


def _taped(fn, arrays):
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        ys = _as_list(fn(*xs))
        total = tg.add_n([tg.sum(y) for y in ys])
    return [y.numpy() for y in ys], [_numpy(g) for g in tape.gradient(total, xs)]


def _graph(fn, arrays):
    g = tg.Graph()
    with g.as_default():
        xs = [tg.placeholder(tg.float64, np.shape(a), name=f"x{i}")
              for i, a in enumerate(arrays)]
        ys = _as_list(fn(*xs))
        grads = tg.gradients(tg.add_n([tg.sum(y) for y in ys]), xs)
    feed = dict(zip(xs, arrays))
    session = tg.Session(g)
    values = session.run(ys, feed)
    fetched = iter(session.run([gr for gr in grads if gr is not None], feed))
    return values, [None if gr is None else next(fetched) for gr in grads]


def value_and_grad(fn, arrays, mode):
    """``fn``'s outputs and the gradient of the sum of their sums, run in ``mode``."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    if mode == "eager":
        return _taped(fn, arrays)
    if mode == "function":
        return _taped(tg.function(fn), arrays)
    return _graph(fn, arrays)


def values(fn, arrays, mode):
    """``fn``'s outputs in ``mode`` (inputs of any dtype: no gradient is taken)."""
    arrays = [np.asarray(a) for a in arrays]
    if mode == "graph":
        g = tg.Graph()
        with g.as_default():
            xs = [tg.placeholder(a.dtype, a.shape, name=f"x{i}") for i, a in enumerate(arrays)]
            out = fn(*xs)
        return tg.Session(g).run(out, dict(zip(xs, arrays)))
    f = tg.function(fn) if mode == "function" else fn
    out = f(*[tg.constant(a) for a in arrays])
    return tg.nest.pack_sequence_as(out, [t.numpy() for t in tg.nest.flatten(out)])


def finite_differences(fn, arrays, eps=1e-6):
    """The gradient of the sum of ``fn``'s outputs' sums, by central differences (eager)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]

    def total(xs):
        return sum(float(np.sum(y.numpy())) for y in _as_list(fn(*[tg.constant(x)
                                                                   for x in xs])))
    grads = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for k in np.ndindex(a.shape):
            up = [x.copy() for x in arrays]
            down = [x.copy() for x in arrays]
            up[i][k] += eps
            down[i][k] -= eps
            g[k] = (total(up) - total(down)) / (2 * eps)
        grads.append(g)
    return grads


def check_gradients(fn, arrays, mode, rtol=1e-5, atol=1e-6):
    """``fn``'s gradient in ``mode`` agrees with finite differences."""
    _, grads = value_and_grad(fn, arrays, mode)
    for i, (g, n) in enumerate(zip(grads, finite_differences(fn, arrays))):
        g = np.zeros_like(n) if g is None else g
        np.testing.assert_allclose(g, n, rtol=rtol, atol=atol,
                                   err_msg=f"{mode}: gradient of input {i}")
