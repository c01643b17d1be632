

# -- errors that name the function the user called ----------------------------------------

def test_the_gradient_of_det_at_a_singular_matrix_is_its_cofactor_matrix():
    singular = [[1.0, 2.0], [2.0, 4.0]]
    np.testing.assert_allclose(_gradient(tg.linalg.det, singular).numpy(),
                               [[4.0, -2.0], [-2.0, 1.0]])
    rank_one = np.outer([1.0, 2.0, 3.0], [1.0, 1.0, 2.0])   # every 2x2 minor is 0
    np.testing.assert_allclose(_gradient(tg.linalg.det, rank_one).numpy(), np.zeros((3, 3)),
                               atol=1e-12)


@pytest.mark.parametrize("f, where", [
    (lambda a: tg.linalg.slogdet(a)[1], "tg.linalg.slogdet"),
    (lambda a: tg.sum(tg.linalg.qr(a)[0]), "tg.linalg.qr"),
])
def test_a_singular_matrix_in_a_gradient_names_the_function_called(f, where):
    with pytest.raises(ValueError, match=f"the gradient of {where}"):
        _gradient(f, [[1.0, 0.0], [0.0, 0.0]])


def test_einsum_with_a_size_one_letter_has_a_gradient():
    a, b = np.arange(8.0).reshape(2, 4), np.arange(3.0).reshape(1, 3)
    grads = tg.grad(lambda x, y: tg.sum(tg.einsum("ij,jk->ik", x, y)), argnums=(0, 1))(
        tg.constant(a), tg.constant(b))
    np.testing.assert_allclose(grads[0].numpy(), np.full((2, 4), b.sum()))
    np.testing.assert_allclose(grads[1].numpy(), np.full((1, 3), a.sum()))


def test_an_ellipsis_mismatch_blames_the_ellipsis_not_a_letter():
    with pytest.raises(ValueError, match=r"tg.einsum: `operands\[1\]`.*'\.\.\.'") as caught:
        tg.einsum("...i,...i->...", np.ones((2, 3)), np.ones((4, 3)))
    assert "label" not in str(caught.value)


def test_tensordot_of_more_axes_than_einsum_has_letters():
    a, b = np.random.default_rng(0).random((1,) * 28 + (2,)), np.ones((2, 3) + (1,) * 25)
    for axes in (0, 1):
        np.testing.assert_allclose(tg.tensordot(a, b, axes).numpy(), np.tensordot(a, b, axes))


@pytest.mark.parametrize("call, named", [
    (lambda: tg.cross(np.ones((2, 3)), np.ones((4, 3))), r"tg.cross: `b`"),
    (lambda: tg.nn.batch_normalization(np.ones((2, 3)), np.ones(4), np.ones(3), None, None,
                                       1e-3), r"tg.nn.batch_normalization: `mean`"),
    (lambda: tg.nn.batch_normalization(np.ones((2, 3)), np.ones(3), np.ones(3), np.ones(2),
                                       None, 1e-3), r"tg.nn.batch_normalization: `offset`"),
])
def test_shape_mismatches_name_the_argument_not_an_inner_op(call, named):
    with pytest.raises(ValueError, match=named):
        call()


def test_moments_does_not_list_none_as_allowed_when_refusing_it():
    with pytest.raises(TypeError, match=r"tg.nn.moments: `axes` must be an integer or a list "
                                        r"of integers, but got None"):
        tg.nn.moments(tg.constant(np.ones((2, 3))), None)


def test_session_refuses_a_graph_that_is_not_a_graph():
    with pytest.raises(TypeError, match="tg.Session: `graph`"):
        tg.Session("my_graph")


@pytest.mark.parametrize("f", [lambda x: x > 0, lambda x: bool(x.numpy() > 0),
                               lambda x: tg.cast(x, tg.int64)])
def test_grad_of_a_function_returning_a_bool_or_integer_is_refused(f):
    with pytest.raises(TypeError, match="tg.grad: `f` must return a floating-point scalar"):
        tg.grad(f)(tg.constant(1.0))


def test_linspace_takes_tensor_endpoints_and_differentiates_them():
    grads = tg.grad(lambda a, b: tg.sum(tg.linspace(a, b, 5)), argnums=(0, 1))(
        tg.constant(1.0), tg.constant(3.0))
    np.testing.assert_allclose([g.numpy() for g in grads], [2.5, 2.5])
    got = tg.linspace(tg.constant([0.0, 1.0]), 2.0, 3, endpoint=False)
    np.testing.assert_allclose(got.numpy(), np.linspace([0.0, 1.0], 2.0, 3, endpoint=False))
