"""Random draws inside tg.vmap / tg.vectorized_map: each example draws its own numbers.

As TensorFlow's pfor converts a stateful random op (it draws once, with the loop's
length in front of the shape), a ``tg.random`` or ``Generator`` draw inside the mapped
function is one draw for the whole batch: example ``i`` gets row ``i``. Stateless draws
follow their seeds: a seed per example, numbers per example (equal seeds, equal numbers).
"""
import numpy as np
import pytest
from contexts import CONTEXTS, run_in

import teachgrad as tg

ZEROS = np.zeros((5, 3))


def noisy(x):
    return x + tg.random.normal((3,), dtype=tg.float64)


def all_rows_differ(rows):
    return len({tuple(np.round(r, 12)) for r in rows.reshape(len(rows), -1)}) == len(rows)


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("draw", [
    lambda: tg.random.normal((3,), dtype=tg.float64),
    lambda: tg.random.uniform((3,), dtype=tg.float64),
    lambda: tg.random.uniform((3,), maxval=1000, dtype=tg.int64),
], ids=["normal", "uniform", "integers"])
def test_each_example_draws_its_own_numbers(draw, context):
    got = run_in(tg.vmap(lambda x: tg.cast(draw(), tg.float64) + x), context, ZEROS)
    assert got.shape == ZEROS.shape
    assert all_rows_differ(got)


def test_a_generator_draws_per_example_and_a_seed_repeats_the_batch():
    gen = tg.random.Generator.from_seed(4)
    rows = tg.vmap(lambda x: x + gen.normal((3,), dtype=tg.float64))(tg.constant(ZEROS))
    assert all_rows_differ(rows.numpy())
    again = [tg.vmap(lambda x: x + tg.random.Generator.from_seed(9).normal(
        (3,), dtype=tg.float64))(tg.constant(ZEROS)).numpy() for _ in range(2)]
    np.testing.assert_array_equal(again[0], again[1])
    # the batch is one draw of the batch's shape from the same stream
    np.testing.assert_array_equal(
        again[0], tg.random.Generator.from_seed(9).normal((5, 3), dtype=tg.float64).numpy())


def test_per_example_draws_have_the_distribution():
    tg.random.set_seed(3)
    draws = tg.vectorized_map(lambda x: x + tg.random.normal((), dtype=tg.float64),
                              tg.constant(np.zeros(4000))).numpy()
    assert abs(draws.mean()) < 0.06 and abs(draws.std() - 1.0) < 0.05


def test_nested_maps_draw_per_inner_and_outer_example():
    got = tg.vmap(tg.vmap(lambda x: x + tg.random.uniform((), dtype=tg.float64)))(
        tg.constant(np.zeros((3, 4)))).numpy()
    assert len(set(np.round(got.ravel(), 12))) == 12


def test_a_traced_gradient_sees_the_per_example_draws():
    @tg.function
    def step(xs):
        with tg.GradientTape() as tape:
            tape.watch(xs)
            scaled = tg.vmap(lambda x: x * tg.random.normal((), dtype=tg.float64))(xs)
            total = tg.sum(scaled)
        return scaled / xs, tape.gradient(total, xs)
    noise, grad = step(tg.constant(np.arange(1.0, 6.0)))
    assert all_rows_differ(noise.numpy()[:, None])
    np.testing.assert_allclose(grad.numpy(), noise.numpy(), rtol=1e-12)


def test_stateless_draws_follow_each_example_seed():
    seeds = tg.constant(np.array([[1, 2], [3, 4], [1, 2]]))
    got = tg.vmap(lambda s: tg.random.stateless_normal((2,), seed=s, dtype=tg.float64))(seeds)
    got = got.numpy()
    np.testing.assert_array_equal(got[0], got[2])
    assert not np.array_equal(got[0], got[1])


def test_a_draw_in_a_map_of_unknown_size_is_refused_clearly():
    graph = tg.Graph()
    with graph.as_default():
        xs = tg.placeholder(tg.float64, (None, 3))
        with pytest.raises(NotImplementedError, match="needs the batch size"):
            tg.vectorized_map(noisy, xs)


def test_the_gradient_of_a_traced_call_replays_its_per_example_draws():
    mapped = tg.function(tg.vmap(lambda x: x * tg.random.normal((), dtype=tg.float64)))
    xs = tg.constant(np.arange(1.0, 6.0))
    with tg.GradientTape() as tape:
        tape.watch(xs)
        scaled = mapped(xs)
        total = tg.sum(scaled)
    np.testing.assert_allclose(tape.gradient(total, xs).numpy(), (scaled / xs).numpy(),
                               rtol=1e-12)


def test_a_jacobian_directions_share_the_draw_and_examples_do_not():
    def f(x):   # its Jacobian is sum(noise) * I for one draw of the noise
        return x * tg.sum(tg.random.normal((3,), dtype=tg.float64))
    for jacobian in (tg.jacfwd(f), tg.jacrev(f)):
        j = jacobian(tg.constant(np.ones(3))).numpy()
        np.testing.assert_allclose(j, j[0, 0] * np.eye(3), rtol=1e-12)
    per_example = tg.vmap(tg.jacfwd(f))(tg.constant(np.ones((4, 3)))).numpy()
    for j in per_example:
        np.testing.assert_allclose(j, j[0, 0] * np.eye(3), rtol=1e-12)
    assert len(set(np.round(per_example[:, 0, 0], 12))) == 4
