"""The op table's batching column: every op under ``tg.vmap`` (tests/op_table.py).

For every entry, on inputs drawn by hypothesis, a batch of three examples is made from
each float input ``x`` (``x``, ``0.9 x``, ``0.8 x``: scaling keeps the table's domains,
positive, SPD, in [-1, 1], valid). Then:

1. values: ``tg.vmap(fn)`` equals ``fn`` applied to each example and stacked, with every
   input batched, and with each input batched alone (the others shared: in_axes None);
2. no loop: an op with a batching rule computes the whole batch at once. The loop that
   ``tg.vectorized_map`` falls back to warns "has no batching rule"; here that warning
   fails the test, except for the ops in ``LOOPING`` (each with its reason);
3. gradients: the gradient of a weighted sum of ``vmap(fn)(xs)`` with respect to the
   batch ``xs`` equals the per-example gradients, stacked;
4. per-example gradients: ``vmap`` of that gradient (which batches the ops of each VJP
   rule) equals the loop too, without looping;
6. nested Jacobians: the VJP at shared inputs mapped over cotangents (a Jacobian's rows,
   as ``tape.jacobian`` vectorizes them: each ``*_grad`` op's batching rule at work),
   then differentiated by a tape around the map, equals the loop over cotangents;
5. a few ops outside the table (indices, booleans, random masks, composites) batch
   without a loop, and every op with a batching rule is checked by the table or by them.
"""
import importlib
import pkgutil
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from op_table import OPS, dense, leaves

import teachgrad
import teachgrad as tg
from teachgrad.ops.core.apply import ANY_GRAPH
from teachgrad.ops.core.op import Op
from teachgrad.ops.reductions.sums import count_p
from teachgrad.ops.shape.rows import row_count, row_indices
from teachgrad.state import state as tg_state

# The mean of an empty axis is NaN, which numpy (the op and the reference) announces.
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

SETTINGS = settings(max_examples=5, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
GRAD_SETTINGS = settings(SETTINGS, max_examples=3)

SCALES = (1.0, 0.9, 0.8)

# Primitives that legitimately run once per example under tg.vmap (the loop), and why:
# always, and only when every input is batched.
LOOPING = {
}
LOOPING_WHEN_ALL_BATCHED = {
    # images and filters both batched make a grouped convolution (each example's images
    # with its own filters), which conv2d's kernel does not do; one of them batched has
    # a rule (images merged with N, or filters stacked along the output channels).
    "conv2d": "a grouped convolution",
}

_NO_RULE = re.compile(r"tg\.vectorized_map: (\S+) has no batching rule")


def _ids(spec):
    return spec.name


def batch_of(a):
    """Three examples made from ``a``, stacked on a new axis 0."""
    return np.stack([a * s for s in SCALES])


def looping_ops(caught):
    """The primitives named by the loop's warnings among ``caught``."""
    return {m.group(1) for w in caught if (m := _NO_RULE.search(str(w.message)))}


def run_vmapped(fn, args, in_axes):
    """``tg.vmap(fn, in_axes)(*args)`` as numpy arrays, and the ops that looped."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = tg.vmap(fn, in_axes=in_axes)(*[tg.constant(a) for a in args])
    return [dense(o) for o in leaves(out)], looping_ops(caught)


def run_looped(fn, args, in_axes):
    """``fn`` on each example in turn, its outputs stacked."""
    per_example = []
    for i in range(len(SCALES)):
        example = [a[i] if axis == 0 else a for a, axis in zip(args, in_axes)]
        per_example.append([dense(o) for o in leaves(fn(*[tg.constant(a) for a in example]))])
    return [np.stack(outs) for outs in zip(*per_example)]


def batchings(n):
    """in_axes to test for ``n`` inputs: all batched, then each one batched alone."""
    all_batched = (0,) * n
    alone = [tuple(0 if j == i else None for j in range(n)) for i in range(n)]
    return [all_batched] + [a for a in alone if a != all_batched]


def draw_case(spec, data):
    """A case for ``spec`` and its op as a function of the float inputs alone."""
    case = data.draw(spec.inputs, label="case")
    return case, lambda *xs: spec.fn(*xs, **case.params)


def check_no_loop(spec, looped, in_axes):
    allowed = set(LOOPING)
    if len(in_axes) > 1 and None not in in_axes:
        allowed |= set(LOOPING_WHEN_ALL_BATCHED)
    unexpected = looped - allowed
    assert not unexpected, (f"{spec.name}: {sorted(unexpected)} ran once per example (no "
                            f"batching rule); give it one with tg.ops.defbatch")


# -- 1 and 2. values, without a loop ---------------------------------------------
@pytest.mark.parametrize("spec", OPS, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_vmap_matches_the_loop(spec, data):
    case, fn = draw_case(spec, data)
    for in_axes in batchings(len(case.arrays)):
        args = [batch_of(a) if axis == 0 else a for a, axis in zip(case.arrays, in_axes)]
        got, looped = run_vmapped(fn, args, in_axes)
        want = run_looped(fn, args, in_axes)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g.shape == w.shape, f"{spec.name}, in_axes {in_axes}: output {i} shape"
            assert g.dtype == w.dtype, f"{spec.name}, in_axes {in_axes}: output {i} dtype"
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{spec.name}, in_axes {in_axes}: output {i}")
        check_no_loop(spec, looped, in_axes)


# -- 3. gradients through the batched op ------------------------------------------
def weighted_sum(outs, weights):
    return tg.add_n([tg.sum(tg.cast(o, tg.float64) * w) for o, w in zip(outs, weights)])


def gradient_of_weighted_sum(fn, n_inputs):
    """``(*xs, *weights) ->`` the gradients of ``weighted_sum(fn(*xs), weights)`` with
    respect to ``xs`` (dense)."""
    def vjp(*args):
        xs, ws = list(args[:n_inputs]), args[n_inputs:]
        with tg.GradientTape() as tape:
            tape.watch(xs)
            loss = weighted_sum(leaves(fn(*xs)), ws)
        grads = tape.gradient(loss, xs, unconnected_gradients="zero")
        return [g.to_dense() if isinstance(g, tg.IndexedSlices) else g for g in grads]
    return vjp


def looped(fn, batches):
    """``fn`` on each example of ``batches`` in turn, its results stacked (numpy)."""
    per_example = [[dense(r) for r in fn(*[tg.constant(b[i]) for b in batches])]
                   for i in range(len(SCALES))]
    return [np.stack(rs) for rs in zip(*per_example)]


@pytest.mark.parametrize("spec", OPS, ids=_ids)
@GRAD_SETTINGS
@given(data=st.data())
def test_gradient_of_vmap_matches_the_loop(spec, data):
    case, fn = draw_case(spec, data)
    batches = [batch_of(a) for a in case.arrays]
    outs = leaves(fn(*[tg.constant(a) for a in case.arrays]))
    weights = [data.draw(hnp.arrays(np.float64, (len(SCALES),) + tuple(o.shape),
                                    elements=st.floats(-2.0, 2.0)), label="weights")
               for o in outs]
    vmapped = gradient_of_weighted_sum(lambda *xs: tg.vmap(fn)(*xs), len(batches))
    got = [dense(g) for g in vmapped(*[tg.constant(a) for a in batches + weights])]
    want = looped(gradient_of_weighted_sum(fn, len(batches)), batches + weights)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10,
                                   err_msg=f"{spec.name}: gradient of input {i}")


# -- 4. per-example gradients: vmap(grad), which batches each op's VJP rule ---------
@pytest.mark.parametrize("spec", OPS, ids=_ids)
@GRAD_SETTINGS
@given(data=st.data())
def test_vmap_of_gradient_matches_the_loop(spec, data):
    case, fn = draw_case(spec, data)
    batches = [batch_of(a) for a in case.arrays]
    outs = leaves(fn(*[tg.constant(a) for a in case.arrays]))
    weights = [batch_of(np.ones(tuple(o.shape))) for o in outs]
    vjp = gradient_of_weighted_sum(fn, len(batches))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tg.vmap(vjp)(*[tg.constant(b) for b in batches + weights])
    got = [dense(g) for g in got]
    want = looped(vjp, batches + weights)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10,
                                   err_msg=f"{spec.name}: per-example gradient of input {i}")
    # the VJP's operands are all batched: a grouped convolution may loop
    check_no_loop(spec, looping_ops(caught), (0, 0))


# -- 6. nested Jacobians: the rows of a Jacobian vectorized, then differentiated again ---
def second_order_of_rows(fn, xs, seeds, vs, vectorized):
    """The VJPs of ``fn`` at ``xs`` for each of ``seeds`` (a Jacobian's rows: ``xs``
    shared, as tape.jacobian's pfor maps them), and the gradient with respect to ``xs``
    of their sum weighted by ``vs`` (a tape around the rows: a Jacobian of a Jacobian)."""
    vjp = gradient_of_weighted_sum(fn, len(xs))
    xs = [tg.constant(x) for x in xs]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        if vectorized:
            in_axes = (None,) * len(xs) + (0,) * len(seeds)
            rows = tg.vmap(vjp, in_axes=in_axes)(*xs, *[tg.constant(s) for s in seeds])
        else:
            per_seed = [vjp(*xs, *[tg.constant(s[i]) for s in seeds])
                        for i in range(len(SCALES))]
            rows = [tg.stack(list(r)) for r in zip(*per_seed)]
        loss = weighted_sum(rows, [tg.constant(v) for v in vs])
    again = tape.gradient(loss, xs, unconnected_gradients="zero")
    return [dense(r) for r in rows], [dense(g) for g in again]


@pytest.mark.parametrize("spec", OPS, ids=_ids)
@settings(SETTINGS, max_examples=2)
@given(data=st.data())
def test_jacobian_of_a_vectorized_jacobian_matches_the_loop(spec, data):
    case, fn = draw_case(spec, data)
    outs = leaves(fn(*[tg.constant(a) for a in case.arrays]))
    seeds = [batch_of(np.linspace(-1.0, 1.0, o.size).reshape(o.shape) + 0.5)
             for o in outs]
    vs = [batch_of(np.linspace(0.5, -1.5, a.size).reshape(a.shape)) for a in case.arrays]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = second_order_of_rows(fn, case.arrays, seeds, vs, vectorized=True)
    want = second_order_of_rows(fn, case.arrays, seeds, vs, vectorized=False)
    for part, g_list, w_list in zip(("rows", "second order"), got, want):
        for i, (g, w) in enumerate(zip(g_list, w_list)):
            np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10,
                                       err_msg=f"{spec.name}: {part}, input {i}")
    check_no_loop(spec, looping_ops(caught), (None, 0))


# -- 5. ops outside the table (not differentiated, or made of table ops) ---------------
X = np.linspace(-1.0, 1.3, 3 * 2 * 4).reshape(3, 2, 4)
IMAGES = np.linspace(-1.0, 1.0, 3 * 2 * 5 * 5 * 3).reshape(3, 2, 5, 5, 3)
# Three non-symmetric 3x3 matrices with distinct eigenvalues, some complex.
MATRICES = (np.array([[2.0, -1.0, 0.5], [1.0, 3.0, -0.2], [0.3, 0.1, -1.0]])
            + np.linspace(0.0, 0.5, 3)[:, None, None] * np.eye(3)[::-1])
OTHERS = [
    ("argmax", lambda x: tg.argmax(x), [X]),
    ("argmax_keepdims", lambda x: tg.argmax(x, keepdims=True), [X]),
    ("argmin_axis", lambda x: tg.argmin(x, axis=-1), [X]),
    ("any", lambda x: tg.any(x > 0.5), [X]),
    ("all_axis", lambda x: tg.all(x > 0.5, axis=0, keepdims=True), [X]),
    ("argsort", lambda x: tg.argsort(x, axis=0), [X]),
    ("round", lambda x: tg.round(10 * x), [X]),
    ("floor", lambda x: tg.floor(10 * x), [X]),
    ("less", lambda x, y: tg.less(x, y), [X, X[0].T.reshape(2, 4)]),
    ("stateless_dropout", lambda x: tg.nn.stateless_dropout(x, 0.5, seed=[3, 0]), [X]),
    ("moments", lambda x: list(tg.nn.moments(x, axes=[0])), [X]),
    ("norm", lambda x: tg.linalg.norm(x, axis=-1), [X]),
    ("conv1d", lambda x, w: tg.nn.conv1d(x, w, 1, "SAME"), [X[:, None], np.ones((3, 4, 2))]),
    ("conv2d_shared_filters", lambda x: tg.nn.conv2d(x, np.ones((3, 3, 3, 2)), 2, "SAME"),
     [IMAGES]),
    ("max_pool2d", lambda x: tg.nn.max_pool2d(x, 2, 2, "SAME"), [IMAGES]),
    ("ceil", lambda x: tg.ceil(10 * x), [X]),
    ("rint", lambda x: tg.rint(10 * x), [X]),
    ("trunc", lambda x: tg.trunc(10 * x), [X]),
    ("sign", lambda x: tg.sign(x), [X]),
    ("angle_imag", lambda x: [tg.angle(x), tg.imag(x)], [X]),
    ("ones_zeros_like", lambda x: [tg.ones_like(x), tg.zeros_like(x)], [X]),
    ("stop_gradient", lambda x: tg.stop_gradient(x) * 2.0, [X]),
    ("argpartition", lambda x: tg.argpartition(x, 1, axis=-1), [X]),
    ("count", lambda x: tg.ops.bind(count_p, x, axes=(0,), dtype=tg.float64) * x, [X]),
    ("rows", lambda x: [row_count(x), row_indices(x)], [X]),
    ("conj_real", lambda x: [tg.conj(tg.complex(x, 2 * x)), tg.real(tg.complex(x, x * x))], [X]),
    ("fft_ifft", lambda x: [tg.signal.fft(tg.complex(x, x)), tg.signal.ifft(tg.complex(x, -x))],
     [X]),
    ("rfft_irfft", lambda x: [tg.signal.rfft(x), tg.signal.irfft(tg.signal.rfft(x))], [X]),
    ("eig_eigvals", lambda m: [*tg.linalg.eig(m), tg.linalg.eigvals(m)], [MATRICES]),
    ("eig_gradient", lambda m: eig_gradient(m), [MATRICES]),
]


def eig_gradient(m):
    """The gradient of a phase-invariant loss of eig's results (its rule divides by the
    eigenvalues' gaps: the eigen_gaps op)."""
    with tg.GradientTape() as tape:
        tape.watch(m)
        w, v = tg.linalg.eig(m)
        loss = tg.sum(tg.abs(v)) + tg.sum(tg.real(w))
    return tape.gradient(loss, m)

#: Ops with a batching rule that the table and OTHERS do not compare with the loop, and why.
UNCOMPARED = {
    "print": "it writes: test_print.py checks the line it writes inside tg.vectorized_map",
    "keep_mask": "a random draw, per example: test_dropout_without_a_seed_draws_a_mask_per_example",
}


class OpNames:
    """A recorder that notes the name of every op applied while it is entered."""

    graph = ANY_GRAPH
    differentiates = False

    def __init__(self):
        self.entry = tg_state.next_entry()
        self.names = set()

    def record(self, node):
        self.names.add(node.op.name)

    def capture(self, outer, inner):
        """Captures name no op."""

    def output_added(self, node, tensor):
        """Nor does an output added later."""

    def read_variable(self, variable, tensor):
        """Nor does a Variable's read."""


def ops_of_others():
    """The ops each OTHERS program applies as the mapped function sees them."""
    names = OpNames()

    def noting(fn):
        def mapped(*xs):
            tg_state.push(names)
            try:
                return fn(*xs)
            finally:
                tg_state.remove(names)
        return mapped
    for _, fn, args in OTHERS:
        in_axes = tuple(0 if i == 0 else None for i in range(len(args)))
        run_vmapped(noting(fn), args, in_axes)
    return names.names


def test_every_op_with_a_batching_rule_is_compared_with_the_loop():
    with_rule = set()
    for info in pkgutil.walk_packages(teachgrad.ops.__path__, "teachgrad.ops."):
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, Op) and (value.batch_rule is not None or value.elementwise):
                with_rule.add(value.name)
    covered = {spec.op_name for spec in OPS} | ops_of_others() | set(UNCOMPARED)
    missing = with_rule - covered
    assert not missing, f"ops with a batching rule that nothing checks: {sorted(missing)}"


@pytest.mark.parametrize("fn, args", [o[1:] for o in OTHERS], ids=[o[0] for o in OTHERS])
def test_ops_outside_the_table_batch_without_a_loop(fn, args):
    in_axes = tuple(0 if i == 0 else None for i in range(len(args)))
    got, looped = run_vmapped(fn, args, in_axes)
    want = run_looped(fn, args, in_axes)
    assert not looped, f"{sorted(looped)} ran once per example"
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("axis, index_shape", [(0, ()), (0, (2,)), (1, (3, 2)), (2, ())])
def test_gather_with_params_and_indices_both_per_example(axis, index_shape):
    params = np.linspace(-1.0, 1.0, 3 * 4 * 5 * 2).reshape(3, 4, 5, 2)
    size = params.shape[axis + 1]
    indices = (np.arange(3 * int(np.prod(index_shape))).reshape((3,) + index_shape) * 7
               ) % size - (size if axis == 2 else 0)   # negative indices count from the end
    fn = lambda p, i: tg.gather(p, i, axis=axis) ** 2   # noqa: E731
    got, looped = run_vmapped(fn, [params, indices], (0, 0))
    assert not looped, f"{sorted(looped)} ran once per example"
    np.testing.assert_allclose(got[0], run_looped(fn, [params, indices], (0, 0))[0])
    weights = np.ones_like(got[0])
    batch_grad = gradient_of_weighted_sum(lambda p: tg.vmap(fn)(p, tg.constant(indices)), 1)
    got_grad = dense(batch_grad(tg.constant(params), tg.constant(weights))[0])
    one = [gradient_of_weighted_sum(lambda p, i=i: fn(p, tg.constant(indices[i])), 1)
           for i in range(3)]
    want_grad = [dense(one[i](tg.constant(params[i]), tg.constant(weights[i]))[0])
                 for i in range(3)]
    np.testing.assert_allclose(got_grad, np.stack(want_grad))


def test_dropout_without_a_seed_draws_a_mask_per_example():
    masks = tg.vmap(lambda x: tg.nn.dropout(x, 0.5))(np.ones((20, 8))).numpy()
    assert len({tuple(m) for m in masks}) > 1
