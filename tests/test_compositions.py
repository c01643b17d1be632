"""Composition property test: every way of differentiating, in every context, agrees.

For each program of the composition table (tests/composition_table.py) and on
inputs drawn by hypothesis, each way of differentiating it

* first order: ``GradientTape.gradient``, ``tg.gradients`` (graphs only),
  ``ForwardAccumulator``, and the functional ``tg.grad``, ``tg.vjp``, ``tg.jvp``,
  ``tg.jacrev``, ``tg.jacfwd``;
* second order: nested tapes, ``tg.gradients`` of ``tg.gradients`` (graphs only),
  ``tg.hessian`` and ``tg.hvp`` (forward over reverse);

in each context

* ``eager``: on concrete tensors;
* ``function_inside``: the differentiation happens inside a ``@tg.function``
  body (``with tg.GradientTape() as tape: ...; return tape.gradient(...)``);
* ``function_outside``: the program is a ``@tg.function``; the tape, the
  accumulator or the functional transformation is around its call;
* ``graph``: built in a ``tg.Graph`` on placeholders and run by a ``tg.Session``;

gives the numbers that central finite differences (float64) of the program's
numpy reference give: ``v^T J`` for reverse mode (``v`` a random cotangent),
``J t`` for forward mode (``t`` random tangents), ``J`` for the Jacobians, and
for second order the Hessian ``H`` of the scalar ``L = sum(v * f)``
(``H w`` for nested gradients and hvp, ``H`` itself for tg.hessian).

The scalar functions the functional API needs (tg.grad, tg.hessian, tg.hvp) are
``L`` as well, so all ways are compared on the same quantities.

Further tests:

* unconnected sources: a program that ignores an argument gives None (or zeros,
  with ``unconnected_gradients="zero"``) the same way in every context;
* ``tg.recompute_grad`` called as ``f(x, x)`` gives the gradient the plain
  function gives;
* ``tg.recompute_grad`` under forward mode raises NotImplementedError (by design);
* a gradient taken inside a cond branch or a while body (by a tape, or by
  tg.gradients in graphs) has the right value and can be differentiated again.

Kept fast: few examples per case, derandomized, no example database.
"""
import numpy as np
import pytest
import strategies as S
from composition_table import CONTEXTS, PROGRAMS, PROGRAMS_BY_NAME, WAYS, way_applies
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import teachgrad as tg

# No shrinking: a failing case reports its first failing example at once (shrinking
# and hypothesis's explain phase re-run graph building dozens of times, for minutes).
SETTINGS = settings(max_examples=5, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])

UNCONNECTED = "zero"   # the main comparison asks for zeros, so every result is a tensor


# -- finite differences of the numpy reference ------------------------------------------
class Reference:
    """The program's numpy reference as a function of one flat float64 vector ``z``
    (all differentiated arrays, raveled and concatenated)."""

    def __init__(self, program, case):
        self.program = program
        self.case = case
        self.shapes = [np.shape(a) for a in case.arrays]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.z = np.concatenate([np.asarray(a, np.float64).ravel() for a in case.arrays]
                                + [np.zeros(0)])
        self.out = np.asarray(program.ref(*case.arrays, **case.params), dtype=np.float64)

    def split(self, z):
        """A flat vector as one array per argument."""
        parts, start = [], 0
        for shape, size in zip(self.shapes, self.sizes):
            parts.append(z[start:start + size].reshape(shape))
            start += size
        return parts

    def f(self, z):
        out = self.program.ref(*self.split(z), **self.case.params)
        return np.asarray(out, dtype=np.float64).ravel()

    def jacobian(self):
        """``J``: (output size, input size), by central differences."""
        eps = self.program.eps
        n = self.z.size
        J = np.zeros((self.out.size, n))
        for k in range(n):
            dz = np.zeros(n)
            dz[k] = eps
            J[:, k] = (self.f(self.z + dz) - self.f(self.z - dz)) / (2 * eps)
        return J

    def hessian(self, cot):
        """The Hessian of ``L(z) = cot . f(z)`` by four-point central differences."""
        h = self.program.hessian_eps
        v = np.asarray(cot, np.float64).ravel()
        n = self.z.size

        def L(z):
            return float(v @ self.f(z))

        H = np.zeros((n, n))
        for i in range(n):
            for j in range(i, n):
                di = np.zeros(n)
                dj = np.zeros(n)
                di[i] = h
                dj[j] = h
                H[i, j] = H[j, i] = (L(self.z + di + dj) - L(self.z + di - dj)
                                     - L(self.z - di + dj) + L(self.z - di - dj)) / (4 * h * h)
        return H


def flat(arrays):
    return np.concatenate([np.asarray(a, np.float64).ravel() for a in arrays] + [np.zeros(0)])


def expected_results(way, ref, cot, tangents, w):
    """What ``way`` must return, as a list of numpy arrays (see ``WAYS``)."""
    if way in ("tape", "gradients", "grad", "vjp"):
        return ref.split(flat([cot]) @ ref.jacobian())
    if way in ("accumulator", "jvp"):
        return [(ref.jacobian() @ flat(tangents)).reshape(ref.out.shape)]
    if way in ("jacrev", "jacfwd"):
        J = ref.jacobian()
        blocks, start = [], 0
        for shape, size in zip(ref.shapes, ref.sizes):
            blocks.append(J[:, start:start + size].reshape(ref.out.shape + shape))
            start += size
        return blocks
    H = ref.hessian(cot)
    if way in ("nested_tapes", "gradients_of_gradients", "hvp"):
        return ref.split(H @ flat(w))
    if way == "hessian":
        starts = np.cumsum([0] + ref.sizes)
        return [H[starts[i]:starts[i + 1], starts[j]:starts[j + 1]].reshape(si + sj)
                for i, si in enumerate(ref.shapes) for j, sj in enumerate(ref.shapes)]
    raise ValueError(way)


# -- the ways, on tensors (concrete or symbolic) -------------------------------------------
def dense(g):
    return g.to_dense() if isinstance(g, tg.IndexedSlices) else g


def _loss(fn, cot):
    """The scalar ``L = sum(cot * fn(*xs))`` the functional API differentiates."""
    return lambda *xs: tg.sum(fn(*xs) * cot)


def way_tape(fn, xs, cot, tangents, w):
    with tg.GradientTape() as tape:
        tape.watch(xs)
        out = fn(*xs)
    return tape.gradient(out, xs, output_gradients=cot, unconnected_gradients=UNCONNECTED)


def way_gradients(fn, xs, cot, tangents, w):
    return tg.gradients(fn(*xs), xs, grad_ys=cot, unconnected_gradients=UNCONNECTED)


def way_accumulator(fn, xs, cot, tangents, w):
    with tg.ForwardAccumulator(xs, tangents) as acc:
        out = fn(*xs)
    return [acc.jvp(out, unconnected_gradients=UNCONNECTED)]


def way_grad(fn, xs, cot, tangents, w):
    return tg.grad(_loss(fn, cot), argnums=tuple(range(len(xs))))(*xs)


def way_vjp(fn, xs, cot, tangents, w):
    _, vjp_fn = tg.vjp(fn, *xs)
    return vjp_fn(cot)


def way_jvp(fn, xs, cot, tangents, w):
    return [tg.jvp(fn, xs, tangents)[1]]


def way_jacrev(fn, xs, cot, tangents, w):
    return tg.jacrev(fn, argnums=tuple(range(len(xs))))(*xs)


def way_jacfwd(fn, xs, cot, tangents, w):
    return tg.jacfwd(fn, argnums=tuple(range(len(xs))))(*xs)


def way_nested_tapes(fn, xs, cot, tangents, w):
    with tg.GradientTape() as outer:
        outer.watch(xs)
        with tg.GradientTape() as inner:
            inner.watch(xs)
            out = fn(*xs)
        grads = inner.gradient(out, xs, output_gradients=cot,
                               unconnected_gradients=UNCONNECTED)
        grads = [dense(g) for g in grads]
    return outer.gradient(grads, xs, output_gradients=w, unconnected_gradients=UNCONNECTED)


def way_gradients_of_gradients(fn, xs, cot, tangents, w):
    grads = tg.gradients(fn(*xs), xs, grad_ys=cot, unconnected_gradients=UNCONNECTED)
    grads = [dense(g) for g in grads]
    return tg.gradients(grads, xs, grad_ys=w, unconnected_gradients=UNCONNECTED)


def way_hessian(fn, xs, cot, tangents, w):
    n = len(xs)
    blocks = tg.hessian(_loss(fn, cot), argnums=tuple(range(n)))(*xs)
    return [blocks[i][j] for i in range(n) for j in range(n)]


def way_hvp(fn, xs, cot, tangents, w):
    return tg.hvp(_loss(fn, cot), xs, w)


WAY_FUNCTIONS = {name: globals()[f"way_{name}"] for name in WAYS}


def apply_way(way, fn, xs, cot, tangents, w):
    """Run ``way`` and return a flat list of dense tensors (None where it gave None)."""
    result = WAY_FUNCTIONS[way](fn, list(xs), cot, list(tangents), list(w))
    return [None if g is None else dense(g) for g in result]


# -- the contexts ----------------------------------------------------------------------
def program_fn(program, case):
    return lambda *xs: program.fn(*xs, **case.params)


def run_in_context(context, way, fn, arrays, cot, tangents, w):
    """Run ``way`` on ``fn`` at ``arrays`` in ``context``; numpy arrays (or None) back.

    ``cot``, ``tangents`` and ``w`` are numpy arrays; each context makes tensors of
    them the way it makes tensors of the inputs.
    """
    n = len(arrays)
    values = list(arrays) + [cot] + list(tangents) + list(w)

    def unpack(ts):
        ts = list(ts)
        return ts[:n], ts[n], ts[n + 1:2 * n + 1], ts[2 * n + 1:]

    if context == "eager":
        xs, c, t, v = unpack([tg.constant(a) for a in values])
        results = apply_way(way, fn, xs, c, t, v)
        return [None if r is None else r.numpy() for r in results]

    if context == "function_outside":
        traced = tg.function(fn)
        xs, c, t, v = unpack([tg.constant(a) for a in values])
        results = apply_way(way, traced, xs, c, t, v)
        return [None if r is None else r.numpy() for r in results]

    if context == "function_inside":
        @tg.function
        def step(*ts):
            xs, c, t, v = unpack(ts)
            return apply_way(way, fn, xs, c, t, v)
        results = step(*[tg.constant(a) for a in values])
        return [None if r is None else r.numpy() for r in results]

    if context == "graph":
        g = tg.Graph()
        with g.as_default():
            placeholders = [tg.placeholder(tg.float64, shape=np.shape(a), name=f"in{i}")
                            for i, a in enumerate(values)]
            xs, c, t, v = unpack(placeholders)
            results = apply_way(way, fn, xs, c, t, v)
        fetched = [r for r in results if r is not None]
        got = iter(tg.Session(g).run(fetched, feed_dict=dict(zip(placeholders, values))))
        return [None if r is None else next(got) for r in results]

    raise ValueError(context)


# -- the main property test --------------------------------------------------------------
def _cases():
    for program in PROGRAMS:
        for way in WAYS:
            if way not in program.ways:
                continue
            for context in CONTEXTS:
                if way_applies(way, context):
                    yield pytest.param(program.name, way, context,
                                       id=f"{program.name}-{way}-{context}")


def _draw(data, shape, label):
    return data.draw(S.arrays(tuple(shape), S.Domain(-2.0, 2.0)), label=label)


@pytest.mark.parametrize("program_name, way, context", list(_cases()))
@SETTINGS
@given(data=st.data())
def test_composition_matches_finite_differences(program_name, way, context, data):
    program = PROGRAMS_BY_NAME[program_name]
    case = data.draw(program.inputs, label="case")
    ref = Reference(program, case)
    cot = _draw(data, ref.out.shape, "cotangent")
    tangents = [_draw(data, s, f"tangent{i}") for i, s in enumerate(ref.shapes)]
    w = [_draw(data, s, f"second cotangent{i}") for i, s in enumerate(ref.shapes)]

    got = run_in_context(context, way, program_fn(program, case), case.arrays, cot,
                         tangents, w)
    want = expected_results(way, ref, cot, tangents, w)

    where = f"{program.name}, {way}, {context}"
    assert len(got) == len(want), f"{where}: {len(got)} results, expected {len(want)}"
    second = way in ("nested_tapes", "gradients_of_gradients", "hessian", "hvp")
    rtol = program.second_rtol if second else program.rtol
    atol = program.second_atol if second else program.atol
    for i, (g, e) in enumerate(zip(got, want)):
        assert g is not None, f"{where}: result {i} is None (nothing was differentiated)"
        g = np.asarray(g)
        assert g.shape == e.shape, f"{where}: result {i} has shape {g.shape}, expected {e.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"{where}: result {i}")


# -- unconnected sources -----------------------------------------------------------------
UNCONNECTED_WAYS = ("tape", "gradients", "accumulator")


def _unconnected_cases():
    for way in UNCONNECTED_WAYS:
        for context in CONTEXTS:
            if way_applies(way, context):
                for mode in ("none", "zero"):
                    yield pytest.param(way, context, mode, id=f"{way}-{context}-{mode}")


def _unconnected_results(way, fn, xs, mode):
    """(gradient or JVP that depends on x, the one that does not: y's)."""
    if way == "tape":
        with tg.GradientTape() as tape:
            tape.watch(xs)
            out = fn(*xs)
        return list(tape.gradient(out, xs, unconnected_gradients=mode))
    if way == "gradients":
        return list(tg.gradients(fn(*xs), xs, unconnected_gradients=mode))
    # forward mode: one accumulator with a tangent on x, one with a tangent on y only
    with tg.ForwardAccumulator(xs[0], tg.ones_like(xs[0])) as acc_x:
        with tg.ForwardAccumulator(xs[1], tg.ones_like(xs[1])) as acc_y:
            out = fn(*xs)
    return [acc_x.jvp(out, unconnected_gradients=mode),
            acc_y.jvp(out, unconnected_gradients=mode)]


@pytest.mark.parametrize("way, context, mode", list(_unconnected_cases()))
def test_unconnected_source(way, context, mode):
    program = PROGRAMS_BY_NAME["unconnected_argument"]
    x = np.array([0.5, -1.0, 2.0])
    y = np.array([1.5, -0.5])
    fn = program.fn
    if context == "eager":
        results = _unconnected_results(way, fn, [tg.constant(x), tg.constant(y)], mode)
        got = [None if r is None else r.numpy() for r in results]
    elif context == "function_outside":
        traced = tg.function(fn)
        results = _unconnected_results(way, traced, [tg.constant(x), tg.constant(y)], mode)
        got = [None if r is None else r.numpy() for r in results]
    elif context == "function_inside":
        @tg.function
        def step(a, b):
            return _unconnected_results(way, fn, [a, b], mode)
        got = [None if r is None else r.numpy() for r in step(tg.constant(x), tg.constant(y))]
    else:
        g = tg.Graph()
        with g.as_default():
            px = tg.placeholder(tg.float64, shape=x.shape, name="x")
            py = tg.placeholder(tg.float64, shape=y.shape, name="y")
            results = _unconnected_results(way, fn, [px, py], mode)
        fetched = [r for r in results if r is not None]
        values = iter(tg.Session(g).run(fetched, feed_dict={px: x, py: y}))
        got = [None if r is None else next(values) for r in results]

    where = f"{way}, {context}, unconnected_gradients={mode!r}"
    connected = 2 * np.cos(x)   # d/dx of sin(x) * 2 (pulled back from ones, or along ones)
    assert got[0] is not None, f"{where}: the connected argument got None"
    np.testing.assert_allclose(got[0], connected, rtol=1e-12, atol=1e-12, err_msg=where)
    if mode == "none":
        assert got[1] is None, f"{where}: the unconnected argument got {got[1]!r}, not None"
    else:
        # reverse mode: zeros of y's shape; forward mode: zeros of the output's shape
        shape = y.shape if way != "accumulator" else x.shape
        assert got[1] is not None, f"{where}: the unconnected argument got None, not zeros"
        assert np.shape(got[1]) == shape, f"{where}: zeros of shape {np.shape(got[1])}"
        assert not np.any(got[1]), f"{where}: the unconnected argument got {got[1]!r}"


# -- recompute_grad -------------------------------------------------------------------------
def _plain_block(a, b):
    return tg.sin(a) * b


_recomputed_plain_block = tg.recompute_grad(_plain_block)
recomputed_block_for_test = PROGRAMS_BY_NAME["recompute_grad"].fn

SAME_TENSOR_CONTEXTS = [("tape", c) for c in CONTEXTS] + [("gradients", "graph"),
                                                           ("gradients", "function_inside")]


@pytest.mark.parametrize("way, context", SAME_TENSOR_CONTEXTS,
                         ids=[f"{w}-{c}" for w, c in SAME_TENSOR_CONTEXTS])
def test_recompute_grad_same_tensor_twice(way, context):
    """``f(x, x)``: the gradient of sin(x) * x, once, not twice (as for the plain f)."""
    x = np.array([0.3, -1.2, 2.0])
    expected = np.cos(x) * x + np.sin(x)
    for f, label in ((_plain_block, "plain"), (_recomputed_plain_block, "recompute_grad")):
        def program(a):
            return f(a, a)
        got = run_in_context(context, way, program, [x], np.ones(3), [np.ones(3)],
                             [np.ones(3)])
        assert got[0] is not None, f"{label}, {way}, {context}: the gradient is None"
        np.testing.assert_allclose(got[0], expected, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{label} f(x, x), {way}, {context}")


@pytest.mark.parametrize("context", ["eager", "function_inside", "graph"])
@pytest.mark.parametrize("how", ["accumulator", "jvp"])
def test_recompute_grad_refuses_forward_mode(how, context):
    """recompute_grad keeps no intermediates, so there is nothing to transpose:
    under an accumulator it raises NotImplementedError, in every context."""
    x = np.array([0.3, -1.2, 2.0])
    y = np.array([0.5, 0.1, -0.4])

    def forward(a, b):
        if how == "accumulator":
            with tg.ForwardAccumulator([a, b], [tg.ones_like(a), tg.ones_like(b)]) as acc:
                out = recomputed_block_for_test(a, b)
            return acc.jvp(out)
        return tg.jvp(recomputed_block_for_test, [a, b], [tg.ones_like(a), tg.ones_like(b)])[1]

    with pytest.raises(NotImplementedError, match="recompute_grad"):
        if context == "eager":
            forward(tg.constant(x), tg.constant(y))
        elif context == "function_inside":
            tg.function(forward)(tg.constant(x), tg.constant(y))
        else:
            with tg.Graph().as_default():
                forward(tg.placeholder(tg.float64, shape=x.shape),
                        tg.placeholder(tg.float64, shape=y.shape))



# -- differentiating inside a cond branch or a while body -----------------------------------
def _inner_gradient(way, f, x):
    """d/dx sum(f(x)), taken where we are (in a branch, or a loop body)."""
    if way == "tape":
        with tg.GradientTape() as tape:
            tape.watch(x)
            out = tg.sum(f(x))
        return tape.gradient(out, x)
    return tg.gradients(tg.sum(f(x)), x)[0]


def _gradient_in_branch(way, x, y):
    """cos(x) y if sum(x) > 0, else 2 x y: a gradient taken inside each branch."""
    return tg.cond(tg.sum(x) > 0,
                   lambda: _inner_gradient(way, lambda a: tg.sin(a) * y, x),
                   lambda: _inner_gradient(way, lambda a: a * a * y, x))


def _gradient_in_loop(way, x, y):
    """z = z + d/dx sum(sin(x) z), twice from z = y: y (1 + cos x)^2."""
    def body(i, z):
        return i + 1, z + _inner_gradient(way, lambda a: tg.sin(a) * z, x)
    return tg.while_loop(lambda i, z: i < 2, body, [tg.constant(0), y])[1]


def _inside_expected(where, x, y):
    """(the result, its gradient w.r.t. x, w.r.t. y), of sum(result) for the gradients."""
    if where == "cond_branch":
        if np.sum(x) > 0:
            return np.cos(x) * y, -np.sin(x) * y, np.cos(x)
        return 2 * x * y, 2 * y, 2 * x
    c = 1 + np.cos(x)
    return y * c ** 2, -2 * y * c * np.sin(x), c ** 2


def _outer(way, fn, x, y):
    """fn(x, y) and the gradient of its sum w.r.t. x and y, by ``way`` from outside."""
    if way == "tape":
        with tg.GradientTape() as tape:
            tape.watch([x, y])
            r = fn(x, y)
            total = tg.sum(r)
        return [r] + list(tape.gradient(total, [x, y]))
    r = fn(x, y)
    return [r] + list(tg.gradients(tg.sum(r), [x, y]))


INSIDE_CASES = [(where, way, context)
                for where in ("cond_branch", "while_body")
                for way in ("tape", "gradients")
                for context in CONTEXTS if way_applies(way, context)]


@pytest.mark.parametrize("where, way, context", INSIDE_CASES,
                         ids=[f"{a}-{b}-{c}" for a, b, c in INSIDE_CASES])
def test_gradient_inside_control_flow(where, way, context):
    """A gradient taken inside a cond branch or a while body has the right value, and
    can itself be differentiated from outside."""
    inner = _gradient_in_branch if where == "cond_branch" else _gradient_in_loop

    def fn(a, b):
        return inner(way, a, b)

    y = np.array([0.8, -1.3, 0.4])
    for x in (np.array([0.5, -0.2, 1.1]), np.array([-0.9, 0.3, -0.7])):
        if context == "eager":
            got = _outer(way, fn, tg.constant(x), tg.constant(y))
        elif context == "function_outside":
            got = _outer(way, tg.function(fn), tg.constant(x), tg.constant(y))
        elif context == "function_inside":
            got = tg.function(lambda a, b: _outer(way, fn, a, b))(tg.constant(x),
                                                                   tg.constant(y))
        else:
            g = tg.Graph()
            with g.as_default():
                px = tg.placeholder(tg.float64, shape=x.shape, name="x")
                py = tg.placeholder(tg.float64, shape=y.shape, name="y")
                got = _outer(way, fn, px, py)
            fetched = [r for r in got if r is not None]
            values = iter(tg.Session(g).run(fetched, feed_dict={px: x, py: y}))
            got = [None if r is None else next(values) for r in got]
        got = [None if r is None else np.asarray(r.numpy() if hasattr(r, "numpy") else r)
               for r in got]
        for label, g_, e in zip(("value", "d/dx", "d/dy"), got, _inside_expected(where, x, y)):
            msg = f"{where}, {way}, {context}, x={x}: {label}"
            assert g_ is not None, f"{msg} is None"
            np.testing.assert_allclose(g_, e, rtol=1e-12, atol=1e-12, err_msg=msg)
