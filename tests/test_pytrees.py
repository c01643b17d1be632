"""Pytrees through every function transformation (issue 41, item 1), table-driven.

Each transformation x each kind of tree (tuple, list, dict, nested with None, namedtuple,
OrderedDict), eagerly and inside tg.function, checked leaf by leaf against the answer for
that leaf alone (JAX's rules: dict leaves in sorted key order, None an empty subtree).
"""
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import teachgrad as tg
from teachgrad import nest

Point = namedtuple("Point", "x y z")

#: Three leaves in a tree of each kind (the order they are built in is not JAX's order
#: for the dicts, on purpose).
TREES = {
    "tuple": lambda a, b, c: (a, b, c),
    "list": lambda a, b, c: [a, b, c],
    "dict": lambda a, b, c: {"w": a, "b": b, "a": c},
    "nested": lambda a, b, c: {"layer": (a, [b, None]), "bias": c},
    "namedtuple": lambda a, b, c: Point(a, b, c),
    "ordereddict": lambda a, b, c: OrderedDict([("w", a), ("b", b), ("a", c)]),
}
VALUES = [np.array([0.5, -1.0]), np.array(0.3), np.array([[1.0, 2.0], [-0.5, 0.25]])]


def _leaves():
    return [tg.constant(v) for v in VALUES]


def _run(mode, compute):
    """``compute(*leaves)`` (which returns a list of tensors), eagerly or traced by
    tg.function; the list as numpy arrays."""
    fn = tg.function(compute) if mode == "function" else compute
    return [np.asarray(r.numpy()) for r in fn(*_leaves())]


def _flat(tree):
    return nest.tree_leaves(tree)


def _sin_tree(tree):
    return nest.tree_map(tg.sin, tree)


def _cube_sum(tree):
    return tg.add_n([tg.sum(leaf ** 3) for leaf in nest.tree_leaves(tree)])


def _by_jax_order(kind, per_leaf):
    """``per_leaf`` (one answer per leaf, in the order the tree was built) in the order
    ``nest.tree_leaves`` gives the leaves."""
    order = [int(i) for i in nest.tree_leaves(TREES[kind]("0", "1", "2"))]
    return [per_leaf[i] for i in order]


def _blocks(kind, diagonal):
    """A Jacobian's leaves (output leaf i, input leaf j) in JAX order: ``diagonal(v)`` on
    the diagonal, zeros elsewhere."""
    values = _by_jax_order(kind, VALUES)
    return [diagonal(vi) if i == j else np.zeros(vi.shape + vj.shape)
            for i, vi in enumerate(values) for j, vj in enumerate(values)]


def _diag(v, d):
    return np.diag(d.reshape(-1)).reshape(v.shape + v.shape)


CASES = {
    "grad": (lambda tree: _flat(tg.grad(_cube_sum)(tree)),
             lambda kind: _by_jax_order(kind, [3 * v ** 2 for v in VALUES])),
    "value_and_grad_aux": (
        lambda tree: (lambda r: [r[0][0], r[0][1]] + _flat(r[1]))(
            tg.value_and_grad(lambda t: (_cube_sum(t), tg.sum(_flat(t)[0])),
                              has_aux=True)(tree)),
        lambda kind: [sum(np.sum(v ** 3) for v in VALUES),
                      np.sum(_by_jax_order(kind, VALUES)[0])]
        + _by_jax_order(kind, [3 * v ** 2 for v in VALUES])),
    "vjp": (lambda tree: (lambda out, fn: _flat(fn(nest.tree_map(tg.ones_like, out))))(
                *tg.vjp(_sin_tree, tree)),
            lambda kind: _by_jax_order(kind, [np.cos(v) for v in VALUES])),
    "jvp": (lambda tree: _flat(tg.jvp(_sin_tree, (tree,),
                                      (nest.tree_map(lambda x: x * 2.0, tree),))[1]),
            lambda kind: _by_jax_order(kind, [2 * v * np.cos(v) for v in VALUES])),
    "jacrev": (lambda tree: _flat(tg.jacrev(_sin_tree)(tree)),
               lambda kind: _blocks(kind, lambda v: _diag(v, np.cos(v)))),
    "jacfwd": (lambda tree: _flat(tg.jacfwd(_sin_tree)(tree)),
               lambda kind: _blocks(kind, lambda v: _diag(v, np.cos(v)))),
    "linearize": (lambda tree: _flat(tg.linearize(_sin_tree, tree)[1](
                      nest.tree_map(lambda x: x * 2.0, tree))),
                  lambda kind: _by_jax_order(kind, [2 * v * np.cos(v) for v in VALUES])),
    "linear_transpose": (lambda tree: _flat(tg.linear_transpose(
                             lambda t: nest.tree_map(lambda x: x * 3.0, t), tree)(
                             nest.tree_map(tg.sin, tree))),
                         lambda kind: _by_jax_order(kind, [3 * np.sin(v) for v in VALUES])),
    "hessian": (lambda tree: _flat(tg.hessian(_cube_sum)(tree)),
                lambda kind: _blocks(kind, lambda v: _diag(v, 6 * v))),
}


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("kind", sorted(TREES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_transformation_takes_and_returns_each_tree(case, kind, mode):
    transform, expected = CASES[case]
    got = _run(mode, lambda *leaves: transform(TREES[kind](*leaves)))
    want = expected(kind)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(TREES))
def test_gradient_tree_has_the_argument_s_shape(kind):
    tree = TREES[kind](*_leaves())
    grads = tg.grad(_cube_sum)(tree)
    assert nest.tree_structure(grads) == nest.tree_structure(tree)
    assert type(grads) is type(tree)


def test_argnums_tuple_of_trees_and_has_aux():
    def loss(params, x, scale):
        return tg.sum((params["w"] * x + params["b"]) ** 2) * scale, {"x": x}
    params = {"w": tg.constant([1.0, 2.0]), "b": tg.constant(0.5)}
    x = tg.constant([3.0, -1.0])
    (dp, dx), aux = tg.grad(loss, argnums=(0, 1), has_aux=True)(params, x, 2.0)
    r = params["w"].numpy() * x.numpy() + 0.5
    np.testing.assert_allclose(dp["w"].numpy(), 4 * r * x.numpy())
    np.testing.assert_allclose(dp["b"].numpy(), np.sum(4 * r))
    np.testing.assert_allclose(dx.numpy(), 4 * r * params["w"].numpy())
    np.testing.assert_array_equal(aux["x"].numpy(), x.numpy())


def test_captured_argument_is_differentiated_in_its_slot_only():
    x = tg.constant(2.0)
    # x is the argument and is captured: d(a * x)/da = x = 2, as in JAX (not 4).
    assert tg.grad(lambda a: a * x)(x).numpy() == 2.0
    assert tg.jacrev(lambda a: a * x)(x).numpy() == 2.0
    assert tg.jacfwd(lambda a: a * x)(x).numpy() == 2.0
    assert tg.jvp(lambda a: a * x, (x,), (1.0,))[1].numpy() == 2.0
    assert tg.vjp(lambda a: a * x, x)[1](1.0)[0].numpy() == 2.0
    assert tg.hessian(lambda a: a * a * x)(x).numpy() == 4.0
    traced = tg.function(lambda v: tg.grad(lambda a: a * v)(v))
    assert traced(x).numpy() == 2.0


def test_none_leaves_and_mismatched_trees_are_named():
    grads = tg.grad(lambda t: tg.sum(t[0] ** 2))((tg.constant([1.0]), None))
    assert grads[1] is None
    out, vjp_fn = tg.vjp(lambda t: {"a": t * 2.0, "b": t}, tg.constant(1.0))
    with pytest.raises(ValueError, match=r"at the top.*keys \['a', 'b'\].*keys \['a'\]"):
        vjp_fn({"a": 1.0})
    with pytest.raises(ValueError, match="shape"):
        vjp_fn({"a": tg.constant([1.0, 2.0]), "b": 1.0})
    with pytest.raises(ValueError, match=r"tangents.*at \[0\], primals has a tuple of 2"):
        tg.jvp(lambda t: t[0], ((1.0, 2.0),), ((1.0,),))
    with pytest.raises(TypeError, match="has_aux"):
        tg.grad(lambda x: x * 2.0, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="has_aux"):
        tg.grad(lambda x: x, has_aux="yes")


def test_tree_module_flattens_in_jax_order_and_names_the_place():
    tree = {"b": [1, None, (2,)], "a": Point(3, 4, 5)}
    leaves, treedef = nest.tree_flatten(tree)
    assert leaves == [3, 4, 5, 1, 2]
    assert nest.tree_unflatten(treedef, leaves) == tree
    assert repr(treedef) == "TreeDef({'a': Point(*, *, *), 'b': [*, None, (*,)]})"
    assert nest.broadcast_prefix({"a": 0, "b": [None, None, 1]}, tree, "w") == [0, 0, 0,
                                                                                  None, 1]
    with pytest.raises(ValueError, match=r"at \['b'\]\[2\].*a tuple of 1.*a list of 2"):
        nest.tree_map(lambda x, y: x, tree, {"b": [1, None, [2, 3]], "a": Point(3, 4, 5)})
    with pytest.raises(ValueError, match="places"):
        nest.tree_unflatten(treedef, [1, 2])


# ---------------------------------------------------------------------------------------
# vmap: in_axes/out_axes as prefixes of the trees, keyword arguments, shared non-tensors
# ---------------------------------------------------------------------------------------

RNG = np.random.default_rng(41)
XS = RNG.standard_normal((3, 2))
W = RNG.standard_normal(2)
BS = RNG.standard_normal(3)


def _layer(p, x, act):
    return {"y": act(p["w"] * x + p["b"]), "w": p["w"], "pair": (tg.sum(x), None)}


def _point(pt, scale=1.0):
    return Point(pt.x * scale, pt.y + pt.z, tg.sum(pt.x))


VMAP_CASES = {
    # name: (fn, in_axes, out_axes, args, kwargs)
    "dict prefix, shared function": (
        _layer, ({"w": None, "b": 0}, 0, None), 0,
        lambda: ({"w": tg.constant(W), "b": tg.constant(BS)}, tg.constant(XS), tg.tanh), {}),
    "out_axes prefix": (
        _layer, ({"w": None, "b": 0}, 1, None), {"y": 1, "w": None, "pair": (0, None)},
        lambda: ({"w": tg.constant(W), "b": tg.constant(BS)}, tg.constant(XS.T), tg.sin),
        {}),
    "one axis for a whole tuple": (
        lambda t, c: t[0] * t[1] + c, ((0, 0), None), 0,
        lambda: ((tg.constant(XS), tg.constant(XS ** 2)), 2.5), {}),
    "list argument, list in_axes": (
        lambda ts: ts[0] - ts[1], [[0, 1]], 0,
        lambda: ([tg.constant(XS), tg.constant(XS.T)],), {}),
    "namedtuple and a keyword argument": (
        _point, (Point(0, None, 0),), Point(0, 1, 0),
        lambda: (Point(tg.constant(XS), tg.constant(W), tg.constant(XS)),),
        {"scale": lambda: tg.constant(BS)}),
}


def _take(value, axis, i):
    return value if axis is None else np.take(np.asarray(value.numpy()), i, axis=axis)


def _loop(fn, args, kwargs, in_axes, out_axes):
    """vmap's answer the slow way: one call per example, the results stacked."""
    axes = (nest.broadcast_prefix(tuple(in_axes), tuple(args), "loop")
            if isinstance(in_axes, (list, tuple)) else [in_axes] * len(nest.tree_leaves(args)))
    leaves, treedef = nest.tree_flatten(tuple(args))
    size = next(np.shape(v.numpy())[a] for v, a in zip(leaves, axes) if a is not None)
    outs = []
    for i in range(size):
        example = nest.tree_unflatten(treedef, [
            v if a is None else tg.constant(_take(v, a, i)) for v, a in zip(leaves, axes)])
        kw = {k: tg.constant(_take(v, 0, i)) for k, v in kwargs.items()}
        outs.append(fn(*example, **kw))
    result_axes = (nest.broadcast_prefix(out_axes, outs[0], "loop")
                   if isinstance(out_axes, (list, tuple, dict))
                   else [out_axes] * len(nest.tree_leaves(outs[0])))
    columns = zip(*[nest.tree_leaves(o) for o in outs])
    return [np.asarray(c[0].numpy()) if a is None else
            np.stack([np.asarray(e.numpy()) for e in c], axis=a)
            for c, a in zip(columns, result_axes)], nest.tree_structure(outs[0])


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_over_trees_matches_the_loop(name, mode):
    fn, in_axes, out_axes, make_args, make_kwargs = VMAP_CASES[name]
    args = make_args()
    kwargs = {k: v() for k, v in make_kwargs.items()}
    want, structure = _loop(fn, args, kwargs, in_axes, out_axes)

    def compute():
        result = tg.vmap(fn, in_axes=in_axes, out_axes=out_axes)(*args, **kwargs)
        assert nest.tree_structure(result) == structure
        return nest.tree_leaves(result)
    got = tg.function(compute)() if mode == "function" else compute()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.numpy()), w, rtol=1e-12, atol=1e-12)


def test_vmap_prefix_errors_name_the_place():
    p = {"w": tg.constant(W), "b": tg.constant(BS)}
    with pytest.raises(ValueError, match=r"in_axes is not a prefix.*at \[0\].*keys \['w'\]"):
        tg.vmap(_layer, in_axes=({"w": None}, 0, None))(p, tg.constant(XS), tg.tanh)
    with pytest.raises(TypeError, match="in_axes"):
        tg.vmap(_layer, in_axes=({"w": "0"}, 0, None))
    with pytest.raises(TypeError, match=r"in_axes=\(\{\.\.\.\},\)"):
        tg.vmap(lambda d: d["w"], in_axes={"w": 0})
    with pytest.raises(ValueError, match=r"argument 1\[0\]"):
        tg.vmap(lambda a, t: a, in_axes=(0, 0))(tg.constant(XS), (tg.constant(1.0),))
    with pytest.raises(ValueError, match=r"out_axes is not a prefix.*at the top"):
        tg.vmap(lambda x: x, out_axes=(0, 0))(tg.constant(XS))


def test_vectorized_map_takes_a_dict_and_a_namedtuple():
    elems = {"b": tg.constant(XS), "a": Point(tg.constant(BS), None, tg.constant(XS))}
    out = tg.vectorized_map(lambda e: e["a"].x * tg.sum(e["b"] * e["a"].z), elems)
    np.testing.assert_allclose(out.numpy(), BS * np.sum(XS * XS, axis=1))


# ---------------------------------------------------------------------------------------
# Variables under vmap and forward mode (issue 41, item 2): mapped over, captured, passed
# ---------------------------------------------------------------------------------------

def _variable_program(how):
    """``(fn, args, in_axes)`` of a per-example loss reading the Variable ``v`` ``how``."""
    v = tg.Variable(W)
    if how == "mapped":
        v = tg.Variable(XS)
        return v, (lambda x: tg.sum(tg.sin(x) * x)), (v,), 0
    if how == "captured":
        return v, (lambda x: tg.sum(tg.sin(v * x))), (tg.constant(XS),), 0
    return v, (lambda x, w: tg.sum(tg.sin(w * x))), (tg.constant(XS), v), (0, None)


def _variable_loop(v, fn, args, in_axes, kind):
    """The tape's gradient (or the accumulator's JVP) of the summed losses, by a loop."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,)
    tangent = tg.ones_like(v)
    with tg.GradientTape() as tape, tg.ForwardAccumulator(v, tangent) as acc:
        total = tg.add_n([fn(*[a[i] if ax == 0 else a for a, ax in zip(args, axes)])
                          for i in range(3)])
    return (tape.gradient(total, v) if kind == "tape" else acc.jvp(total)).numpy()


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("kind", ["tape", "accumulator"])
@pytest.mark.parametrize("how", ["mapped", "captured", "passed"])
def test_variables_under_vmap_match_the_loop(how, kind, mode):
    v, fn, args, in_axes = _variable_program(how)
    want = _variable_loop(v, fn, args, in_axes, kind)

    def compute():
        tangent = tg.ones_like(v)
        with tg.GradientTape() as tape, tg.ForwardAccumulator(v, tangent) as acc:
            total = tg.sum(tg.vmap(fn, in_axes=in_axes)(*args))
        return tape.gradient(total, v) if kind == "tape" else acc.jvp(total)
    got = tg.function(compute)() if mode == "function" else compute()
    assert got is not None
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_has_aux_in_vjp_jvp_and_the_jacobians():
    x = tg.constant([1.0, 2.0])

    def f(t):
        return {"y": t * t}, ("aux", t[0])
    out, vjp_fn, aux = tg.vjp(f, x, has_aux=True)
    np.testing.assert_allclose(vjp_fn({"y": tg.ones((2,))})[0].numpy(), [2.0, 4.0])
    assert aux[0] == "aux"
    out, tangent, aux = tg.jvp(f, (x,), (tg.ones((2,)),), has_aux=True)
    np.testing.assert_allclose(tangent["y"].numpy(), [2.0, 4.0])
    for jac in (tg.jacrev, tg.jacfwd):
        j, aux = jac(f, has_aux=True)(x)
        np.testing.assert_allclose(j["y"].numpy(), np.diag([2.0, 4.0]))
        assert aux[1].numpy() == 1.0
    h, aux = tg.hessian(lambda t: (tg.sum(t ** 3), t), has_aux=True)(x)
    np.testing.assert_allclose(h.numpy(), np.diag([6.0, 12.0]))
    np.testing.assert_allclose(aux.numpy(), x.numpy())
