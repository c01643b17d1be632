"""Products and ``tg.linalg`` against numpy (issue 18 part 4): every case of ``dot``,
einsum's spellings (traces, diagonals, ellipsis, implicit output), every norm order,
the same numbers eagerly and in ``tg.function``, known adjoints on small examples,
and the errors bad input gets. (The op table's property tests cover the gradients.)
"""
import inspect

import linalg_strategies as L
import numpy as np
import pytest

import teachgrad as tg

RNG = np.random.default_rng(18)


def _r(*shape):
    return RNG.normal(size=shape)


def _spd(n, batch=()):
    r = _r(*batch, n, n)
    return r @ np.swapaxes(r, -1, -2) + n * np.eye(n)


# -- values against numpy -------------------------------------------------------------
DOT_SHAPES = [((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)),
              ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3,)), ((3,), (2, 3, 4)),
              ((2, 2, 3), (4, 3, 2)), ((2, 3), (4, 3, 5))]


@pytest.mark.parametrize("sa, sb", DOT_SHAPES)
def test_dot_matches_numpy_in_every_case(sa, sb):
    a, b = _r(*sa), _r(*sb)
    got = tg.dot(a, b)
    assert got.shape == np.dot(a, b).shape
    np.testing.assert_allclose(got.numpy(), np.dot(a, b), rtol=1e-12, atol=1e-12)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("ji", [(2, 3)]), ("ij", [(2, 3)]),
    ("i,j", [(2,), (3,)]), ("...ij,...jk", [(4, 2, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (5, 3, 2)]), ("i...->...", [(2, 3, 4)]),
    ("...i,...i", [(2, 3), (3,)]), ("bii->b", [(2, 3, 3)]), ("iij->j", [(2, 2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("Ab,bA", [(2, 3), (3, 2)]),
    ("i,i", [(3,), (3,)]), ("", [()]), (" ij , jk -> ik ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS)
def test_einsum_matches_numpy(subscripts, shapes):
    xs = [_r(*s) for s in shapes]
    want = np.einsum(subscripts, *xs)
    got = tg.einsum(subscripts, *xs)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_einsum_trace_gradient_is_the_identity():
    a = tg.constant(_r(3, 3))
    with tg.GradientTape() as tape:
        tape.watch(a)
        y = tg.einsum("ii", a)
    np.testing.assert_array_equal(tape.gradient(y, a).numpy(), np.eye(3))


def test_einsum_is_one_node_and_its_gradient_an_einsum():
    graph = tg.Graph()
    with graph.as_default():
        a = tg.placeholder(tg.float64, (2, 3), name="a")
        b = tg.placeholder(tg.float64, (3, 4), name="b")
        y = tg.einsum("ij,jk->ik", a, b)
        names = [n.op.name for n in graph.get_operations()]
        assert names.count("einsum") == 1
        tg.gradients(tg.sum(y), [a, b])
        assert [n.op.name for n in graph.get_operations()].count("einsum") == 3


VECTOR_ORDS = [None, 1, 2, 3, 0.5, -1, np.inf, -np.inf, 0]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, True), (-1, False)])
def test_vector_norms_match_numpy(ord, axis, keepdims):
    x = _r(5)
    x[2] = 0.0
    want = np.linalg.norm(x, ord, axis, keepdims)
    got = tg.linalg.norm(x, ord, axis, keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norms_along_an_axis_of_a_batch(ord):
    x = _r(2, 3, 4)
    np.testing.assert_allclose(tg.linalg.norm(x, ord, axis=1).numpy(),
                               np.linalg.norm(x, ord, axis=1), rtol=1e-12)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("shape, axis, keepdims", [((3, 4), None, False), ((3, 4), None, True),
                                                    ((2, 3, 4), (2, 0), True),
                                                    ((2, 3, 4), (-1, -2), False)])
def test_matrix_norms_match_numpy(ord, shape, axis, keepdims):
    x = _r(*shape)
    want = np.linalg.norm(x, ord, axis, keepdims)
    got = tg.linalg.norm(x, ord, axis, keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_norm_of_many_axes_without_ord_is_the_flat_two_norm():
    x = _r(2, 3, 4)
    np.testing.assert_allclose(tg.linalg.norm(x).numpy(), np.linalg.norm(x))
    assert tg.linalg.norm(x, keepdims=True).shape == (1, 1, 1)


def test_nuclear_norm_gradient_is_u_vt():
    a = _r(3, 2)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    x = tg.constant(a)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.linalg.norm(x, "nuc")
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), u @ vh, rtol=1e-10)


def test_matrix_functions_match_numpy_on_batches():
    a, b = _spd(3, (2,)), _r(2, 3, 2)
    w = _r(2, 4, 3)
    for got, want in [
        (tg.linalg.inv(a), np.linalg.inv(a)), (tg.linalg.solve(a, b), np.linalg.solve(a, b)),
        (tg.linalg.solve(a, b[0, :, 0]), np.linalg.solve(a, b[0, :, 0])),
        (tg.linalg.det(a), np.linalg.det(a)), (tg.linalg.cholesky(a), np.linalg.cholesky(a)),
        (tg.linalg.pinv(w), np.linalg.pinv(w)),
        (tg.linalg.svd(w, compute_uv=False), np.linalg.svd(w, compute_uv=False)),
        *zip(tg.linalg.slogdet(a), np.linalg.slogdet(a)),
    ]:
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    # A factorization's vectors are unique up to sign only, and LAPACK and cuSOLVER
    # choose differently: each vector is compared with its sign matched to numpy's.
    (values, vectors), (np_values, np_vectors) = tg.linalg.eigh(a), np.linalg.eigh(a)
    np.testing.assert_allclose(values.numpy(), np_values, rtol=1e-10)
    _assert_same_up_to_sign(vectors, np_vectors, columns=True)
    (q, r), (np_q, np_r) = tg.linalg.qr(w), np.linalg.qr(w)
    _assert_same_up_to_sign(q, np_q, columns=True)
    _assert_same_up_to_sign(r, np_r, columns=False)
    (u, sv, vh), (np_u, np_sv, np_vh) = tg.linalg.svd(w), np.linalg.svd(w)
    np.testing.assert_allclose(sv.numpy(), np_sv, rtol=1e-10)
    _assert_same_up_to_sign(u, np_u, columns=True)
    _assert_same_up_to_sign(vh, np_vh, columns=False)


def _assert_same_up_to_sign(got, want, columns):
    """``got`` equals ``want`` once each column (or row) is multiplied by +-1."""
    got = got.numpy()
    assert got.shape == want.shape
    agree = np.sum(got * want, axis=-2 if columns else -1, keepdims=True)
    np.testing.assert_allclose(got * np.where(agree < 0, -1.0, 1.0), want, rtol=1e-10,
                               atol=1e-12)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # numpy's 2-vectors
@pytest.mark.parametrize("sa, sb, kw", [((3,), (3,), {}), ((4, 3), (3,), {}),
                                         ((2,), (2,), {}), ((2, 2), (3,), {}),
                                         ((3, 4), (4, 3), {"axisa": 0, "axisc": 0}),
                                         ((3, 2), (3, 2), {"axis": 0})])
def test_cross_matches_numpy(sa, sb, kw):
    a, b = _r(*sa), _r(*sb)
    np.testing.assert_allclose(tg.cross(a, b, **kw).numpy(), L.cross_reference(a, b, **kw))


@pytest.mark.parametrize("fn", ["inner", "outer", "vdot", "kron"])
def test_other_products_match_numpy(fn):
    a, b = _r(2, 3), (_r(3, 2) if fn == "vdot" else _r(4, 3))
    np.testing.assert_allclose(getattr(tg, fn)(a, b).numpy(), getattr(np, fn)(a, b))


@pytest.mark.parametrize("axes, shape_b", [(0, (2, 5)), (1, (4, 3)), (2, (2, 4, 3)),
                                           (([1, 0], [0, 1]), (2, 3, 4)),
                                           (([2], [0]), (4, 3, 2)), ((1, 0), (2, 5))])
def test_tensordot_matches_numpy(axes, shape_b):
    a, b = _r(3, 2, 4), _r(*shape_b)
    np.testing.assert_allclose(tg.tensordot(a, b, axes).numpy(), np.tensordot(a, b, axes))


# -- known adjoints ---------------------------------------------------------------------
def test_det_gradient_is_det_times_inverse_transpose():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = tg.constant(a)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.linalg.det(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[3.0, -1.0], [-1.0, 2.0]])


def test_slogdet_sign_carries_no_gradient():
    x = tg.constant(np.array([[0.0, 2.0], [1.0, 0.0]]))   # det = -2
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        sign, logabsdet = tg.linalg.slogdet(x)
    assert sign.numpy() == -1.0
    np.testing.assert_allclose(tape.gradient(sign, x, unconnected_gradients="zero").numpy(),
                               np.zeros((2, 2)))
    np.testing.assert_allclose(tape.gradient(logabsdet, x).numpy(),
                               np.linalg.inv(x.numpy()).T)


def test_eigh_gradient_of_eigenvalues_is_v_vt():
    a = _spd(3)
    w, v = np.linalg.eigh(a)
    x = tg.constant(a)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.linalg.eigh(x)[0][2]
    g = tape.gradient(y, x).numpy()
    outer = np.outer(v[:, 2], v[:, 2])
    # eigh reads the lower triangle: an entry below the diagonal stands for two
    np.testing.assert_allclose(g, np.tril(2 * outer) - np.diag(np.diag(outer)), atol=1e-12)


def test_a_symmetric_input_gets_the_symmetric_answer_through_its_construction():
    b = tg.constant(_r(3, 3))
    with tg.GradientTape() as tape:
        tape.watch(b)
        a = tg.matmul(b, b, transpose_b=True) + 3.0 * np.eye(3)
        y = tg.sum(tg.linalg.cholesky(a)) + tg.linalg.eigh(a)[0][0]
    g = tape.gradient(y, b).numpy()

    def f(bv):
        av = bv @ bv.T + 3 * np.eye(3)
        return np.linalg.cholesky(av).sum() + np.linalg.eigh(av)[0][0]
    eps, num = 1e-6, np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        d = np.zeros((3, 3))
        d[idx] = eps
        num[idx] = (f(b.numpy() + d) - f(b.numpy() - d)) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-7)


# -- eager and traced give the same numbers ------------------------------------------------
def _all_products(a, b, v):
    u, s, vh = tg.linalg.svd(b, full_matrices=False)
    return [tg.dot(a, v), tg.einsum("bij,jk->bik", a, b), tg.tensordot(a, b, 1),
            tg.inner(v, v), tg.outer(v, v), tg.vdot(a, a), tg.kron(v, v), tg.cross(v, v * 2.0),
            tg.linalg.inv(a), tg.linalg.solve(a, v), tg.linalg.det(a),
            tg.linalg.slogdet(a)[1], tg.linalg.cholesky(a), tg.linalg.eigh(a)[0], s,
            tg.linalg.qr(b)[1], tg.linalg.pinv(b), tg.linalg.norm(b, 2),
            tg.linalg.norm(v, 3)]


def test_eager_and_tg_function_agree_with_gradients():
    a, b, v = _spd(3, (2,)), _r(3, 3) + 3 * np.eye(3), _r(3)

    def loss_and_grads(a, b, v):
        with tg.GradientTape() as tape:
            tape.watch([a, b, v])
            loss = tg.add_n([tg.sum(tg.sin(o)) for o in _all_products(a, b, v)])
        return [loss] + tape.gradient(loss, [a, b, v])

    eager = loss_and_grads(*map(tg.constant, (a, b, v)))
    traced = tg.function(loss_and_grads)(a, b, v)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)


def test_forward_mode_matches_reverse_mode_for_the_factorizations():
    a = _spd(3)
    t = _r(3, 3)
    t = t + t.T

    def f(x):
        w, v = tg.linalg.eigh(x)
        return tg.sum(w * w) + tg.sum(tg.linalg.cholesky(x)) + tg.linalg.slogdet(x)[1]
    _, jvp = tg.jvp(f, [tg.constant(a)], [tg.constant(t)])
    x = tg.constant(a)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(jvp.numpy(), np.sum(tape.gradient(y, x).numpy() * t), rtol=1e-9)


# -- what bad input gets ---------------------------------------------------------------------
@pytest.mark.parametrize("call, error, words", [
    (lambda: tg.einsum("ij,jk", _r(2, 3)), ValueError, "subscripts"),
    (lambda: tg.einsum("ij", _r(2, 3, 4)), ValueError, "subscripts"),
    (lambda: tg.einsum("i->ii", _r(2)), ValueError, "subscripts"),
    (lambda: tg.einsum("i->j", _r(2)), ValueError, "subscripts"),
    (lambda: tg.einsum("...i->i", _r(2, 3)), ValueError, "subscripts"),
    (lambda: tg.einsum("i1", _r(2, 3)), ValueError, "subscripts"),
    (lambda: tg.einsum(3, _r(2)), TypeError, "subscripts"),
    (lambda: tg.einsum("ij,jk", _r(2, 3), _r(4, 2)), ValueError, r"`operands\[1\]`.*letter .j."),
    (lambda: tg.einsum("ij"), ValueError, "operands"),
    (lambda: tg.dot(_r(2, 3), _r(2, 3)), ValueError, "shapes"),
    (lambda: tg.tensordot(_r(2, 3), _r(2, 3), 3), ValueError, "axes"),
    (lambda: tg.tensordot(_r(2, 3), _r(2, 3), ([0], [1])), ValueError, "axes"),
    (lambda: tg.tensordot(_r(2, 3), _r(2, 3), ([0, 0], [0, 1])), ValueError, "axes"),
    (lambda: tg.vdot(_r(2, 3), _r(5)), ValueError, "entries"),
    (lambda: tg.cross(_r(4), _r(3)), ValueError, "components"),
    (lambda: tg.cross(_r(3), _r(3), axisa=2), ValueError, "axisa"),
    (lambda: tg.linalg.inv(_r(2, 3)), ValueError, "`a`"),
    (lambda: tg.linalg.inv(_r(3)), ValueError, "`a`"),
    (lambda: tg.linalg.inv(np.zeros((2, 2))), np.linalg.LinAlgError, "inv"),
    (lambda: tg.linalg.solve(np.eye(2), 1.0), ValueError, "`b`"),
    (lambda: tg.linalg.cholesky(-np.eye(2)), np.linalg.LinAlgError, "cholesky"),
    (lambda: tg.linalg.svd(_r(3)), ValueError, "`a`"),
    (lambda: tg.linalg.svd(_r(2, 2), full_matrices="yes"), TypeError, "full_matrices"),
    (lambda: tg.linalg.qr(_r(2, 2), mode="economic"), ValueError, "mode"),
    (lambda: tg.linalg.pinv(_r(2, 2), rcond=-1.0), ValueError, "rcond"),
    (lambda: tg.linalg.norm(_r(2, 2), ord="max"), ValueError, "ord"),
    (lambda: tg.linalg.norm(_r(3), ord="fro"), ValueError, "ord"),
    (lambda: tg.linalg.norm(_r(2, 2), ord=3), ValueError, "ord"),
    (lambda: tg.linalg.norm(_r(2, 2, 2), ord=1), ValueError, "`x`"),
    (lambda: tg.linalg.norm(_r(2, 2), axis=(0, 0)), ValueError, "axis"),
    (lambda: tg.linalg.norm(_r(2, 2), axis=(0, 1, 1)), ValueError, "axis"),
    (lambda: tg.linalg.norm(_r(2, 2), keepdims=None), TypeError, "keepdims"),
])
def test_bad_input_is_refused_naming_what_is_wrong(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_gradients_that_do_not_exist_say_so():
    # (a wide qr has one now: tests/test_linalg_surface.py; so has a tall complete one's
    # refusal)
    wide = tg.constant(_r(2, 3))
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(wide)
        u, s, vh = tg.linalg.svd(wide)   # full_matrices=True
    with pytest.raises(ValueError, match="full_matrices=False"):
        tape.gradient(u, wide)


@pytest.mark.parametrize("build", [
    lambda x: tg.einsum("ii->", x),
    lambda x: tg.kron(x, x),
    lambda x: tg.cross(x, x),
])
def test_products_that_need_sizes_say_so_in_a_graph(build):
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (None, None), name="x")
        with pytest.raises(ValueError, match="size"):
            tg.gradients(tg.sum(build(x)), x)


def test_every_linalg_function_takes_a_name():
    a = tg.constant(_spd(2))
    assert tg.linalg.inv(a, name="a_inv").name == "a_inv"
    assert [t.name for t in tg.linalg.eigh(a, name="eig")] == ["eig:0", "eig:1"]
    assert tg.einsum("ii", a, name="tr").name == "tr"
    for fn in tg.linalg.__all__:
        assert "name" in inspect.signature(getattr(tg.linalg, fn)).parameters, fn


@pytest.mark.parametrize("vector_first", [False, True])
@pytest.mark.parametrize("mode", ["eager", "function", "graph"])
def test_matmul_flags_with_a_vector_operand_give_the_transposes_gradient(vector_first, mode):
    """``matmul(A, v, transpose_a=True)`` is ``A.T @ v``: its gradients are those of that
    product (a square A, where ignoring the flag would still run, and give a wrong number)."""
    rng = np.random.default_rng(44)
    a, v, ct = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)
    flags = {"transpose_b": True} if vector_first else {"transpose_a": True}
    # <ct, v @ A.T>: d/dv = A.T @ ct, d/dA = outer(ct, v); <ct, A.T @ v>: A @ ct, outer(v, ct)
    want_v = a.T @ ct if vector_first else a @ ct
    want_a = np.outer(ct, v) if vector_first else np.outer(v, ct)

    def grads(a_t, v_t):
        with tg.GradientTape() as tape:
            tape.watch([a_t, v_t])
            out = tg.matmul(v_t, a_t, **flags) if vector_first else tg.matmul(a_t, v_t, **flags)
        return tape.gradient(out, [a_t, v_t], output_gradients=tg.constant(ct))

    if mode == "eager":
        got = [g.numpy() for g in grads(tg.constant(a), tg.constant(v))]
    elif mode == "function":
        got = [g.numpy() for g in tg.function(grads)(tg.constant(a), tg.constant(v))]
    else:
        g = tg.Graph()
        with g.as_default():
            pa, pv = tg.placeholder(tg.float64, (3, 3)), tg.placeholder(tg.float64, (3,))
            fetches = grads(pa, pv)
        got = tg.Session(g).run(fetches, feed_dict={pa: a, pv: v})
    np.testing.assert_allclose(got[0], want_a, rtol=1e-12)
    np.testing.assert_allclose(got[1], want_v, rtol=1e-12)
