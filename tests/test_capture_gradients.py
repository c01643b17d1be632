"""Gradients across captures: differentiating, inside a loop body or a cond branch being
built, values that the body captured from the enclosing graph.

TensorFlow treats a capture as an identity of the outer tensor, so ``tg.gradients`` in a
body follows it back into the enclosing graph; and a tape that recorded the outer values
follows the body's ops back to its record, as it does eagerly."""
import warnings

import numpy as np
import pytest

import teachgrad as tg


def run(graph, fetches, feed_dict=None):
    return tg.Session(graph).run(fetches, feed_dict)


def call_grad_in_loop(params):
    """TensorFlow's testCallGradInLoop: ten times, add d/dparams sum([1, 2, 3] params^2),
    with params^2 computed outside the loop: 10 * 6 * 2 * 5 = 600 for params = 5."""
    params_1 = tg.square(params)

    def body(i, x):
        data = tg.multiply(tg.constant([1.0, 2.0, 3.0]), params_1)
        return i + 1, x + tg.gradients(data, params)[0]
    return tg.while_loop(lambda i, _: i < 10, body, [tg.constant(0), tg.constant(0.0)])[1]


def test_tensorflow_call_grad_in_loop_gives_600_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        params = tg.constant(5.0)
        out = call_grad_in_loop(params)
        (d_out,) = tg.gradients(out, params)   # and the result is differentiable: 120 params
    assert run(g, [out, d_out]) == [600.0, 600.0 / 5.0]


def test_tensorflow_call_grad_in_loop_gives_600_in_a_tg_function():
    f = tg.function(call_grad_in_loop)
    params = tg.constant(5.0)
    with tg.GradientTape() as tape:
        tape.watch(params)
        out = f(params)
    assert out.numpy() == 600.0
    assert tape.gradient(out, params).numpy() == 120.0


def test_gradients_in_a_branch_in_a_loop_reach_the_outer_placeholder():
    """Each iteration adds d/dx of an outer y = x sin x (twice it in the first two): the
    result is 3 y'(x), and its own derivative 3 y''(x)."""
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, ())
        y = tg.sin(x) * x

        def body(i, s):
            return i + 1, tg.cond(i < 2, lambda: s + tg.gradients(y, x)[0],
                                  lambda: s + tg.gradients(y * 2.0, x)[0] / 2.0)
        r = tg.while_loop(lambda i, s: i < 3, body, [tg.constant(0), tg.constant(0.0)])[1]
        (dr,) = tg.gradients(r, x)
    x0 = 0.7
    dy, d2y = np.cos(x0) * x0 + np.sin(x0), 2 * np.cos(x0) - np.sin(x0) * x0
    np.testing.assert_allclose(run(g, [r, dr], {x: x0}), [3 * dy, 3 * d2y], rtol=1e-12)


def test_gradients_in_a_body_of_an_outer_value_wrt_a_variable():
    v = tg.Variable(2.0)
    g = tg.Graph()
    with g.as_default():
        y = v * v * v

        def body(i, s):
            return i + 1, s + tg.gradients(y, v)[0] + tg.gradients(y * s, v)[0]
        r = tg.while_loop(lambda i, s: i < 2, body, [tg.constant(0), tg.constant(1.0)])[1]
    # dy/dv = 3 v^2 = 12: s -> s + 12 + 12 s = 13 s + 12, twice from 1: 25, then 337
    assert run(g, r) == 337.0


def test_gradients_in_a_body_with_stop_gradients_and_zeros_outside():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, ())
        a = x * x
        b = a * 3.0
        unused = tg.placeholder(tg.float64, (2,))

        def body(i, s):
            total = tg.gradients(b, x)[0]                                # 6 x
            partial = tg.gradients(b, x, stop_gradients=[a])[0]          # None: a is held
            zeros = tg.gradients(b, unused, unconnected_gradients="zero")[0]
            assert partial is None
            return i + 1, s + total + tg.sum(zeros)
        r = tg.while_loop(lambda i, s: i < 2, body, [tg.constant(0), tg.constant(0.0)])[1]
    assert run(g, r, {x: 1.5}) == 2 * 6 * 1.5


# -- a tape that recorded the outer values, asked inside the body ------------------------------
def tape_across_the_body(v, variant):
    """A persistent tape records y = v^2, and the loop built inside it; each of three
    iterations adds a gradient taken inside the body: of y itself (2 v), of y * 2 computed
    in the body from the captured y (4 v), or, on a tape of the body, of z = y^2 with
    respect to the captured y (2 y)."""
    with tg.GradientTape(persistent=True) as tape:
        y = v * v

        def body(i, s):
            if variant == "outer value":
                g = tape.gradient(y, v)
            elif variant == "value made in the body":
                g = tape.gradient(y * 2.0, v)
            else:
                with tg.GradientTape() as inner:
                    inner.watch(y)
                    z = y * y
                g = inner.gradient(z, y)
            return i + 1, s + g
        return tg.while_loop(lambda i, s: i < 3, body, [tg.constant(0), tg.constant(0.0)])[1]


@pytest.mark.parametrize("variant, expected", [("outer value", 18.0),
                                               ("value made in the body", 36.0),
                                               ("inner tape", 54.0)])
def test_a_tape_inside_a_loop_body_eager_traced_and_in_a_graph(variant, expected):
    v = tg.Variable(3.0)
    assert tape_across_the_body(v, variant).numpy() == expected
    assert tg.function(lambda: tape_across_the_body(v, variant))().numpy() == expected
    g = tg.Graph()
    with g.as_default():
        r = tape_across_the_body(v, variant)
    assert run(g, r) == expected


def test_a_tape_follows_only_the_body_ops_made_while_it_recorded():
    """Ops of the body made under stop_recording are not followed: y * 2 made there is a
    constant to the tape, as it is eagerly."""
    v = tg.Variable(3.0)

    def fn():
        with tg.GradientTape(persistent=True) as tape:
            y = v * v

            def body(i, s):
                with tape.stop_recording():
                    held = y * 2.0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    g = tape.gradient(held * v, v)   # only the v read by the tape: 2 y
                return i + 1, s + g
            return tg.while_loop(lambda i, s: i < 1, body, [tg.constant(0), tg.constant(0.0)])[1]
    assert fn().numpy() == 18.0
    assert tg.function(fn)().numpy() == 18.0
