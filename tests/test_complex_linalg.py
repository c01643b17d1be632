"""tg.linalg on complex matrices, and the new eig and eigvals: numpy's values, gradients
against finite differences on both parts (eagerly, in tg.function and in a Graph), and
the refusal of repeated eigenvalues."""
import numpy as np
import pytest

import teachgrad as tg

L = tg.linalg
RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3)) + 2 * np.eye(3)
R = RNG.normal(size=(3, 3))
B = RNG.normal(size=(3, 2)) + 1j * RNG.normal(size=(3, 2))
BATCH = RNG.normal(size=(2, 3, 3)) + 1j * RNG.normal(size=(2, 3, 3))
H = A @ np.conj(A).T + np.eye(3)          # Hermitian positive definite
V = RNG.normal(size=(4,)) + 1j * RNG.normal(size=(4,))

# A loss of eigenvectors has a gradient only where it ignores each one's phase.
CASES = {
    "inv": (L.inv, [A]),
    "solve": (L.solve, [A, B]),
    "solve_vector": (L.solve, [A, B[:, 0]]),
    "det": (L.det, [A]),
    "det_batch": (L.det, [BATCH]),
    "slogdet_logabsdet": (lambda a: L.slogdet(a)[1], [A]),
    "slogdet_sign": (lambda a: L.slogdet(a)[0], [A]),
    "eigvals": (L.eigvals, [A]),
    "eigvals_real": (L.eigvals, [R]),
    "eig_values": (lambda a: L.eig(a)[0], [A]),
    "eig_vectors": (lambda a: tg.abs(L.eig(a)[1]) ** 2, [A]),
    "eig_real": (lambda a: tg.abs(L.eig(a)[1]) ** 2 + tg.real(tg.sum(L.eig(a)[0])), [R]),
    "eig_batch": (lambda a: tg.abs(L.eig(a)[1]) ** 2, [BATCH]),
    "cholesky": (L.cholesky, [H]),
    "eigh_values": (lambda a: L.eigh(a)[0], [H]),
    "eigh_vectors": (lambda a: tg.abs(L.eigh(a)[1]) ** 2, [H]),
    "eigh_upper": (lambda a: tg.abs(L.eigh(a, UPLO="U")[1]) ** 2 + L.eigh(a, UPLO="U")[0][0],
                   [H]),
    "norm_vector": (L.norm, [V]),
    "norm_vector_3": (lambda v: L.norm(v, 3), [V]),
    "norm_vector_inf": (lambda v: L.norm(v, np.inf), [V]),
    "norm_fro": (L.norm, [A]),
    "norm_1": (lambda a: L.norm(a, 1), [A]),
    "norm_nuc": (lambda a: L.norm(a, "nuc"), [A]),
    "svdvals": (lambda a: L.svd(a, compute_uv=False), [B]),
    # U V^H does not depend on the phase each pair u_i, v_i shares: it needs the phase term
    "svd_tall": (lambda a: tg.matmul(*L.svd(a, full_matrices=False)[::2]), [B]),
    "svd_wide": (lambda a: tg.matmul(*L.svd(a, full_matrices=False)[::2]),
                 [np.conj(B).T.copy()]),
    "svd_square": (lambda a: tg.abs(L.svd(a)[0]) ** 2 + L.svd(a)[1][0], [A]),
    # Q Q^H and Q diag(R) do not depend on the phase of each column of Q
    "qr_projection": (lambda a: tg.matmul(L.qr(a)[0], tg.conj(tg.transpose(L.qr(a)[0]))), [B]),
    "qr_tall": (lambda a: L.qr(a)[0] * tg.expand_dims(tg.diagonal(L.qr(a)[1]), 0), [B]),
    "qr_square": (lambda a: tg.abs(L.qr(a)[1]) ** 2, [A]),
    "qr_wide": (lambda a: tg.abs(L.qr(a, mode="r")) ** 2, [np.conj(B).T.copy()]),
    "pinv_tall": (L.pinv, [B]),
    "pinv_wide": (L.pinv, [np.conj(B).T.copy()]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("how", ["eager", "function"])
def test_gradients_match_finite_differences(name, how):
    f, args = CASES[name]
    assert tg.gradcheck(tg.function(f) if how == "function" else f, args)


def test_values_are_numpys():
    np.testing.assert_allclose(L.inv(A).numpy(), np.linalg.inv(A))
    np.testing.assert_allclose(L.det(BATCH).numpy(), np.linalg.det(BATCH))
    np.testing.assert_allclose(L.solve(A, B).numpy(), np.linalg.solve(A, B))
    for ours, numpys in zip(L.slogdet(A), np.linalg.slogdet(A)):
        np.testing.assert_allclose(ours.numpy(), numpys)
    w, v = L.eig(A)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvals(A))
    np.testing.assert_allclose((tg.matmul(tg.constant(A), v)).numpy(), (v * w[None]).numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(L.eigvals(BATCH).numpy(), np.linalg.eigvals(BATCH))


def test_hermitian_factorizations_and_norms_are_numpys():
    np.testing.assert_allclose(L.cholesky(H).numpy(), np.linalg.cholesky(H))
    w, v = L.eigh(H)
    assert w.dtype == tg.float64 and v.dtype == tg.complex128
    np.testing.assert_allclose(w.numpy(), np.linalg.eigh(H)[0])
    for ord in (None, 1, 3, np.inf):
        np.testing.assert_allclose(L.norm(V, ord).numpy(), np.linalg.norm(V, ord))
    np.testing.assert_allclose(L.norm(A).numpy(), np.linalg.norm(A))
    u, s, vh = L.svd(A)
    assert s.dtype == tg.float64 and u.dtype == tg.complex128
    np.testing.assert_allclose(((u * s[None]) @ vh).numpy(), A, atol=1e-12)
    q, r = L.qr(B)
    np.testing.assert_allclose((q @ r).numpy(), B, atol=1e-12)


@pytest.mark.parametrize("call", [lambda: L.qr(B, mode="complete"), lambda: L.qr(B, mode="raw")])
def test_factorizations_without_complex_rules_refuse_complex_input(call):
    with pytest.raises(TypeError, match="does not take complex input"):
        call()


def test_eig_of_a_real_matrix_is_complex_and_its_gradient_real():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])      # eigenvalues +i and -i
    w, v = L.eig(rotation)
    assert w.dtype == tg.complex128 and v.dtype == tg.complex128
    np.testing.assert_allclose(sorted(w.numpy(), key=np.imag), [-1j, 1j], atol=1e-12)
    assert L.eigvals(np.float32(rotation)).dtype == tg.complex64
    x = tg.Variable(rotation)
    with tg.GradientTape() as tape:
        t = tg.real(tg.sum(L.eigvals(x)))    # the trace: its gradient is I
    g = tape.gradient(t, x)
    assert g.dtype == tg.float64
    np.testing.assert_allclose(g.numpy(), np.eye(2), atol=1e-12)


def test_the_gradient_of_a_determinant_is_the_conjugate_cofactor_matrix():
    z = tg.Variable(A)
    with tg.GradientTape() as tape:
        loss = tg.abs(L.det(z)) ** 2   # abs(det)^2: gradient 2 det(A) conj(cof(A))
    cof = np.linalg.det(A) * np.linalg.inv(A).T
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                               2 * np.linalg.det(A) * np.conj(cof))


def test_eig_in_a_graph():
    graph = tg.Graph()
    with graph.as_default():
        p = tg.placeholder(tg.complex128, shape=(3, 3))
        w = L.eigvals(p)
        (g,) = tg.gradients(tg.real(tg.sum(w * w)), [p])   # trace(A^2): 2 A^T, conj: 2 A^H
    np.testing.assert_allclose(tg.Session(graph).run(g, feed_dict={p: A}),
                               2 * np.conj(A).T, atol=1e-10)


def test_second_order_through_eigvals():
    x = tg.Variable(R)
    with tg.GradientTape() as outer:
        with tg.GradientTape() as inner:
            y = tg.real(tg.sum(L.eigvals(x) ** 3))   # trace(A^3): gradient 3 (A^2)^T
        g = inner.gradient(y, x)
        gg = tg.sum(g)
    np.testing.assert_allclose(g.numpy(), 3 * (R @ R).T, atol=1e-10)
    # d/dA sum(3 (A^2)^T) = 3 (1 A^T + A^T 1), 1 the matrix of ones
    ones = np.ones((3, 3))
    np.testing.assert_allclose(outer.gradient(gg, x).numpy(), 3 * (ones @ R.T + R.T @ ones),
                               atol=1e-9)


def test_repeated_eigenvalues_are_refused_by_eigs_gradient_not_by_eigvals():
    x = tg.Variable(np.eye(3) + 0j)
    with tg.GradientTape(persistent=True) as tape:
        w, v = L.eig(x)
        loss = tg.sum(tg.abs(v) ** 2)
        trace = tg.real(tg.sum(L.eigvals(x)))
    with pytest.raises(ValueError, match="repeated eigenvalues.*eigvals"):
        tape.gradient(loss, x)
    np.testing.assert_allclose(tape.gradient(trace, x).numpy(), np.eye(3))
    graph = tg.Graph()
    with graph.as_default():
        p = tg.placeholder(tg.complex128, shape=(2, 2))
        (g,) = tg.gradients(tg.sum(tg.abs(L.eig(p)[1]) ** 2), [p])
    with pytest.raises(ValueError, match="repeated eigenvalues"):
        tg.Session(graph).run(g, feed_dict={p: np.eye(2)})


def test_eig_refuses_a_matrix_that_is_not_square():
    with pytest.raises(ValueError, match="square"):
        L.eig(np.ones((2, 3)))
