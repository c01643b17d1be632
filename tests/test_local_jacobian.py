"""tg.viz.local_jacobian: the dense Jacobian an op's VJP and JVP multiply by."""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad.ops.core.declare import primitive
from teachgrad.ops.core.user_rules import defjvp, defvjp  # a user's rules: Tensors


def test_broadcasting_multiply():
    x, y = tg.constant([[1.0], [2.0]]), tg.constant([3.0, 4.0, 5.0])
    lj = tg.viz.local_jacobian(tg.multiply, x, y)
    # z[i, j] = x[i] y[j]: dz/dx is 6 x 2, dz/dy is 6 x 3.
    expected_x = np.zeros((6, 2))
    expected_y = np.zeros((6, 3))
    for i in range(2):
        for j in range(3):
            expected_x[3 * i + j, i] = [3.0, 4.0, 5.0][j]
            expected_y[3 * i + j, j] = [1.0, 2.0][i]
    np.testing.assert_allclose(lj.jacobian(0, 0), expected_x)
    np.testing.assert_allclose(lj.jacobian(0, 1), expected_y)
    assert lj.agree
    # With u = ones, u^T J sums the columns: what the unbroadcast sum does.
    np.testing.assert_allclose(lj.vjp[0], [12.0, 12.0])
    np.testing.assert_allclose(lj.vjp[1], [3.0, 3.0, 3.0])
    assert lj.broadcast[0] == [[0, 1, 2], [3, 4, 5]]
    assert lj.broadcast[1] == [[0, 3], [1, 4], [2, 5]]
    text = str(lj)
    assert "x0[1,0] <- u[y[1,0]] + u[y[1,1]] + u[y[1,2]]" in text


def test_vjp_and_jvp_are_the_rules_results():
    x = tg.constant([1.0, 2.0, 0.5])
    u, t = [1.0, -2.0, 0.5], [0.3, 0.0, -1.0]
    lj = tg.viz.local_jacobian(tg.softmax, x, cotangent=u, tangent=t, axis=-1)
    J = lj.jacobian()
    np.testing.assert_allclose(J, J.T, atol=1e-12)             # softmax's Jacobian is symmetric
    np.testing.assert_allclose(J.sum(axis=0), 0, atol=1e-12)   # and its columns sum to zero
    np.testing.assert_allclose(lj.vjp[0], np.array(u) @ J)
    np.testing.assert_allclose(lj.jvp[(0, 0)], J @ np.array(t))
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.softmax(x, axis=-1)
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=tg.constant(u)).numpy(),
                               lj.vjp[0])


def test_a_recorded_node_and_the_html_heat_map():
    x = tg.constant([[0.5, -1.0]])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sin(x)
    node = tape.recorded.producers[y.id]
    lj = tg.viz.local_jacobian(node)
    np.testing.assert_allclose(lj.jacobian(), np.diag(np.cos([0.5, -1.0])))
    html = lj._repr_html_()
    assert "<table>" in html and "background:rgb(255," in html and "u<sup>T</sup>J" in html


def test_a_wrong_jvp_shows_as_disagreement():
    twice_p = primitive("twice", lambda x: 2 * x)
    defvjp(twice_p, lambda g, ans, x: 2 * g)
    defjvp(twice_p, lambda x_dot, ans, x: 3 * x_dot)
    lj = tg.viz.local_jacobian(twice_p, tg.constant([1.0, 2.0]))
    assert not lj.agree and "disagree" in str(lj)
    np.testing.assert_allclose(lj.jacobian(), 2 * np.eye(2))
    np.testing.assert_allclose(lj.blocks[(0, 0)].from_jvp, 3 * np.eye(2))


def test_a_graph_node_with_feeds():
    graph = tg.Graph()
    with graph.as_default():
        a = tg.placeholder(tg.float64, (2,), name="a")
        y = tg.exp(a * 2.0)
    lj = tg.viz.local_jacobian(y.node, feed_dict={a: [0.0, 1.0]})
    np.testing.assert_allclose(lj.jacobian(), np.diag(np.exp([0.0, 2.0])))
    with pytest.raises(ValueError, match="feed_dict"):
        tg.viz.local_jacobian(y.node)


def test_bad_requests_are_explained():
    with pytest.raises(ValueError, match="ran 2 recorded ops"):
        tg.viz.local_jacobian(lambda x: tg.sin(x) * 2.0, tg.constant([1.0]))
    with pytest.raises(ValueError, match="too many to draw"):
        tg.viz.local_jacobian(tg.exp, tg.zeros((60,)))
    with pytest.raises(ValueError, match="no derivative to show"):
        tg.viz.local_jacobian(tg.round, tg.constant([1.5]))
    with pytest.raises(ValueError, match="needs 3 entries"):
        tg.viz.local_jacobian(tg.exp, tg.constant([1.0, 2.0, 3.0]), cotangent=[1.0])
