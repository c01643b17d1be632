"""Complex tensors with TensorFlow's gradient convention, on values worked out by hand.

For a real loss L of z = x + iy, ``tape.gradient(L, z)`` is dL/dx + i dL/dy (the
direction of steepest ascent in the plane): so abs(z)^2 = x^2 + y^2 gives 2x + 2iy = 2z,
and a holomorphic f gives ``ct * conj(f'(z))``.
"""
import numpy as np
import pytest

import teachgrad as tg

Z = 1.0 + 2.0j


def _gradient(f, z=Z, how="eager"):
    """dL/dx + i dL/dy of the real ``f(z)`` at ``z``: eagerly, in tg.function or a Graph."""
    if how == "graph":
        graph = tg.Graph()
        with graph.as_default():
            x = tg.placeholder(tg.complex128, shape=np.shape(z))
            (g,) = tg.gradients(f(x), [x])
        return tg.Session(graph).run(g, feed_dict={x: np.asarray(z)})
    v = tg.Variable(z)

    def gradient():
        with tg.GradientTape() as tape:
            loss = f(v)
        return tape.gradient(loss, v)
    return (tg.function(gradient) if how == "function" else gradient)().numpy()


HOW = ["eager", "function", "graph"]


@pytest.mark.parametrize("how", HOW)
def test_the_gradient_of_abs_squared_is_2z(how):
    # abs(z)^2 = x^2 + y^2: dL/dx + i dL/dy = 2x + 2iy = 2z (not 2 conj(z), JAX's answer)
    assert _gradient(lambda z: tg.abs(z) ** 2, how=how) == pytest.approx(2 * Z)
    assert _gradient(lambda z: tg.real(z * tg.conj(z)), how=how) == pytest.approx(2 * Z)


@pytest.mark.parametrize("how", HOW)
def test_real_and_imag_send_their_cotangent_to_1_and_i(how):
    assert _gradient(tg.real, how=how) == pytest.approx(1.0)
    assert _gradient(tg.imag, how=how) == pytest.approx(1j)
    # 3x - 2y: (3, -2)
    assert _gradient(lambda z: 3 * tg.real(z) - 2 * tg.imag(z), how=how) == pytest.approx(3 - 2j)


@pytest.mark.parametrize("how", HOW)
def test_a_holomorphic_function_multiplies_by_the_conjugate_derivative(how):
    # real(z^2) = x^2 - y^2: (2x, -2y) = 2 conj(z)
    assert _gradient(lambda z: tg.real(z * z), how=how) == pytest.approx(2 * np.conj(Z))
    # real(e^z) = e^x cos y: (e^x cos y, -e^x sin y) = conj(e^z)
    assert _gradient(lambda z: tg.real(tg.exp(z)), how=how) == pytest.approx(np.conj(np.exp(Z)))
    # imag(log z) = angle(z): its gradient is i / conj(z) = i z / abs(z)^2 = (-2 + i) / 5
    assert _gradient(lambda z: tg.imag(tg.log(z)), how=how) == pytest.approx((-2 + 1j) / 5)
    assert _gradient(tg.angle, how=how) == pytest.approx((-2 + 1j) / 5)
    # real(log z) = log abs(z): (x, y) / abs(z)^2 = z / 5
    assert _gradient(lambda z: tg.real(tg.log(z)), how=how) == pytest.approx(Z / 5)


def test_abs_at_zero_has_gradient_zero_as_tensorflow_gives():
    assert _gradient(tg.abs, 0j) == 0
    assert _gradient(tg.abs, 3 - 4j) == pytest.approx((3 - 4j) / 5)
    # the log's branch point: TensorFlow's 1 / conj(0) is not finite
    with np.errstate(divide="ignore", invalid="ignore"):
        assert not np.isfinite(_gradient(lambda z: tg.real(tg.log(z)), 0j))


def test_higher_order_and_forward_mode_carry_complex_tangents():
    v = tg.Variable(Z)
    with tg.GradientTape() as outer:
        with tg.GradientTape() as inner:
            loss = (tg.abs(v) ** 2) ** 2            # (x^2 + y^2)^2
        g = inner.gradient(loss, v)                 # 4 (x^2 + y^2) z = 20 + 40i
        gx = tg.real(g)                             # 4 (x^2 + y^2) x
    assert g.numpy() == pytest.approx(20 + 40j)
    assert outer.gradient(gx, v).numpy() == pytest.approx(28 + 16j)   # (4(3x^2+y^2), 8xy)
    z = tg.constant([Z, -0.5 + 0.3j])
    with tg.ForwardAccumulator(z, tg.constant([1 + 0j, 1j])) as acc:
        y = z * tg.exp(z)
    expected = (1 + z.numpy()) * np.exp(z.numpy()) * np.array([1, 1j])   # f'(z) t
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected)


def test_complex_tensors_promote_as_numpy():
    z64 = tg.constant(np.complex64(1 + 1j))
    assert (z64 * tg.constant(np.float32(2))).dtype == tg.complex64
    assert (z64 * tg.constant(2.0)).dtype == tg.complex128
    assert (z64 * 2.0).dtype == tg.complex64 and (tg.constant(np.float32(1)) * 1j).dtype == tg.complex64
    assert tg.complex(tg.constant(np.float32(1)), np.float32(2)).dtype == tg.complex64
    assert tg.complex(1.0, 2.0).numpy() == 1 + 2j
    assert tg.Variable(np.array([1j], np.complex64)).dtype == tg.complex64
    v = tg.Variable(1j)
    with tg.GradientTape() as tape:
        loss = tg.real(v) + tg.abs(v)
    assert tape.gradient(loss, v).dtype == tg.complex128


def test_the_parts_of_a_complex_tensor():
    z = np.array([1 + 2j, -3 - 0.5j, 0j])
    np.testing.assert_array_equal(tg.real(z).numpy(), z.real)
    np.testing.assert_array_equal(tg.imag(z).numpy(), z.imag)
    np.testing.assert_array_equal(tg.conj(z).numpy(), np.conj(z))
    np.testing.assert_array_equal(tg.angle(z, deg=True).numpy(), np.angle(z, deg=True))
    np.testing.assert_array_equal(tg.abs(z).numpy(), np.abs(z))
    assert tg.real_if_close(np.array([1 + 1e-20j])).dtype == tg.float64
    assert tg.real_if_close(z).dtype == tg.complex128
    # z conj(z) = abs(z)^2, real: its cotangent 1 + 0i gives 2z
    np.testing.assert_allclose((tg.constant(z) * tg.conj(z)).numpy(), np.abs(z) ** 2)


def test_cast_keeps_the_real_part_as_tensorflow_and_its_gradient_is_1():
    assert tg.cast(tg.constant(3 + 4j), tg.float64).numpy() == 3.0
    assert _gradient(lambda z: tg.cast(z, tg.float64)) == pytest.approx(1.0)


@pytest.mark.parametrize("call", [
    lambda z: tg.maximum(z, z), lambda z: z < z, lambda z: tg.sort(z), lambda z: tg.nn.relu(z),
    lambda z: tg.max(z), lambda z: tg.sign(z), lambda z: tg.sigmoid(z),
])
def test_an_op_without_a_complex_rule_refuses_complex_input(call):
    z = tg.constant([1 + 1j, 2 - 1j])
    with pytest.raises(TypeError, match="complex"):
        call(z)
    graph = tg.Graph()
    with graph.as_default(), pytest.raises(TypeError, match="complex"):
        call(tg.placeholder(tg.complex128, shape=(2,)))


@pytest.mark.parametrize("call", [
    lambda z: tg.maximum(z, 1.0), lambda z: z < 1.0, lambda z: tg.sort(z), lambda z: tg.argsort(z),
    lambda z: tg.nn.relu(z), lambda z: tg.max(z), lambda z: tg.min(z), lambda z: tg.clip(z, 0, 1),
])
def test_ordering_ops_say_that_complex_numbers_have_no_order(call):
    with pytest.raises(TypeError, match="no order"):
        call(tg.constant([1j, 2.0]))


def test_equality_is_defined_for_complex_numbers():
    assert bool((tg.constant(1j) == 1j).numpy())   # equality is defined


def test_gradcheck_perturbs_both_parts():
    z = np.array([1 + 2j, -0.5 + 0.3j])
    assert tg.gradcheck(lambda a: tg.exp(a) * tg.conj(a), [z])
    # a rule that forgets the conjugate is caught, on the imaginary part
    bad = tg.custom_gradient(lambda a: (a * a, lambda ct: ct * 2 * a))
    with pytest.raises(tg.GradcheckError, match="imag part|real part"):
        tg.gradcheck(bad, [z])


def test_steppers_write_complex_values_as_a_plus_bi():
    from teachgrad.viz.values import format_value
    assert format_value(tg.constant([1 - 2j, 0.5j, 3 + 0j])) == "[1 - 2i, 0.5i, 3]"
    assert format_value(tg.constant(np.complex64(1.23456 + 7.5j))) == "1.235 + 7.5i"
    z = tg.Variable(Z, name="z")
    with tg.GradientTape() as tape:
        loss = tg.real(z * tg.conj(z))
    with tg.viz.record() as rec:
        tape.gradient(loss, z)
    sentences = [f.sentence for f in tg.viz.BackpropStepper(rec).frames.frames]
    # the product rule hands z conj(conj(z)) = z and conj(z) the conjugate; conj flips it back
    assert any("hands z the contribution 1 + 2i and" in s and "the contribution 1 - 2i" in s
               for s in sentences)
    assert sentences[-1].endswith("the gradient with respect to z is 2 + 4i.")


def test_complex_values_compose_with_control_flow_vmap_and_custom_gradients():
    z = tg.constant([Z, 0.5 - 1j])

    def body(i, acc):
        return i + 1, acc * z

    def loss(v):
        _, power = tg.while_loop(lambda i, acc: i < 3, lambda i, acc: body(i, acc * v / z),
                                 (0, tg.ones_like(v)))
        flipped = tg.cond(tg.constant(True), lambda: tg.conj(power), lambda: power)
        return tg.sum(tg.abs(flipped) ** 2)       # abs(v)^6: gradient 6 abs(v)^4 v
    for how in (loss, tg.function(loss)):
        v = tg.Variable([Z, 0.5 - 1j])
        with tg.GradientTape() as tape:
            out = how(v)
        expected = 6 * np.abs(v.numpy()) ** 4 * v.numpy()
        np.testing.assert_allclose(tape.gradient(out, v).numpy(), expected)
    mapped = tg.vectorized_map(lambda a: tg.exp(a) * tg.conj(a), z)
    np.testing.assert_allclose(mapped.numpy(), np.exp(z.numpy()) * np.conj(z.numpy()))

    @tg.custom_gradient
    def double(a):
        return 2 * a, lambda ct: 2 * ct
    v = tg.Variable(Z)
    with tg.GradientTape() as tape:
        out = tg.abs(double(v)) ** 2              # 4 abs(v)^2: gradient 8 v
    assert tape.gradient(out, v).numpy() == pytest.approx(8 * Z)
