"""tg.random (issue 43): TensorFlow's seeds, draws as ops that a traced call runs anew,
the Generator, the stateless forms, and the distributions' sanity (generous bounds)."""
import numpy as np
import pytest

import teachgrad as tg


@pytest.fixture(autouse=True)
def no_global_seed():
    yield
    tg.random.set_seed(None)


def values(*tensors):
    return [t.numpy() for t in tensors]


# -- TensorFlow's seed rules ------------------------------------------------------------
def test_a_global_seed_repeats_the_sequence_of_a_program_run_again():
    tg.random.set_seed(1234)
    first = values(tg.random.uniform([3]), tg.random.uniform([3]), tg.random.normal([2]))
    tg.random.set_seed(1234)
    again = values(tg.random.uniform([3]), tg.random.uniform([3]), tg.random.normal([2]))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])          # A1 then A2


def test_an_op_seed_eagerly_moves_on_and_set_seed_starts_it_again():
    tg.random.set_seed(1234)
    a1, a2 = values(tg.random.uniform([1], seed=1), tg.random.uniform([1], seed=1))
    assert a1 != a2
    tg.random.set_seed(1234)
    b1, b2 = values(tg.random.uniform([1], seed=1), tg.random.uniform([1], seed=1))
    assert (a1, a2) == (b1, b2)


def test_an_op_seed_without_a_global_one_is_reproducible_too():
    a = tg.random.normal([4], seed=7).numpy()
    tg.random.set_seed(None)                                  # streams start again
    np.testing.assert_array_equal(a, tg.random.normal([4], seed=7).numpy())


def test_without_any_seed_the_numbers_differ():
    assert not np.array_equal(tg.random.uniform([8]).numpy(), tg.random.uniform([8]).numpy())


def test_in_a_traced_function_equal_seeds_draw_alike_and_each_call_draws_anew():
    tg.random.set_seed(1234)

    @tg.function
    def foo():
        return tg.random.uniform([1], seed=1), tg.random.uniform([1], seed=1)

    (a1, b1), (a2, b2) = [values(*foo()) for _ in range(2)]
    assert a1 == b1 and a2 == b2 and a1 != a2                 # (A1, A1), (A2, A2)


def test_a_global_seed_gives_each_traced_function_the_same_sequence():
    tg.random.set_seed(1234)

    def body():
        return tg.random.uniform([2]), tg.random.uniform([2])
    f, g = tg.function(body), tg.function(lambda: body())
    fa, fb = values(*f())
    ga, gb = values(*g())
    np.testing.assert_array_equal(fa, ga)
    np.testing.assert_array_equal(fb, gb)
    assert not np.array_equal(fa, fb)


@pytest.mark.parametrize("optimize", [True, False, ("fold", "cse")])
def test_the_optimiser_neither_folds_nor_merges_draws(optimize):
    @tg.function(optimize=optimize)
    def f():
        a = tg.random.normal([64])
        b = tg.random.normal([64])                            # looks like a: not merged
        return a, b, tg.random.uniform([64], seed=3) * 2.0

    a1, b1, c1 = values(*f())
    a2, b2, c2 = values(*f())
    assert not np.array_equal(a1, b1)
    for first, second in ((a1, a2), (b1, b2), (c1, c2)):
        assert not np.array_equal(first, second)              # a call draws anew
    concrete = f.get_concrete_function()
    graph = (concrete.optimized if optimize is not False else concrete).graph
    ops = [n.op.name for n in graph.nodes]
    assert ops.count("random_normal") == 2 and ops.count("random_uniform") == 1


def test_python_random_is_frozen_at_trace_time_and_tg_random_is_not():
    rng = np.random.default_rng(0)
    f = tg.function(lambda x: (x + float(rng.random()), x + tg.random.uniform([])))
    out = [values(*f(tg.constant(0.0, tg.float32))) for _ in range(3)]
    assert len({float(python) for python, _ in out}) == 1    # frozen: a constant
    assert len({float(ours) for _, ours in out}) == 3


def test_an_unused_draw_still_runs_and_moves_its_stream_on():
    gen = tg.random.Generator.from_seed(5)

    @tg.function
    def f(x):
        gen.normal([3])                                       # nobody reads it
        return x * 1.0

    f(tg.constant(1.0))
    f(tg.constant(1.0))
    fresh = tg.random.Generator.from_seed(5)
    fresh.normal([3]), fresh.normal([3])
    np.testing.assert_array_equal(gen.normal([3]).numpy(), fresh.normal([3]).numpy())


# -- Generator --------------------------------------------------------------------------
def test_a_generator_from_a_seed_is_the_same_in_every_program_and_moves_on():
    g, h = tg.random.Generator.from_seed(1), tg.random.Generator.from_seed(1)
    a, b = values(g.normal([3]), g.normal([3]))
    np.testing.assert_array_equal(a, h.normal([3]).numpy())
    np.testing.assert_array_equal(b, h.normal([3]).numpy())
    assert not np.array_equal(a, b)
    assert not np.array_equal(tg.random.Generator.from_non_deterministic_state().uniform(
        [4]).numpy(), tg.random.Generator.from_non_deterministic_state().uniform([4]).numpy())


def test_a_traced_function_draws_from_the_generator_it_closes_over():
    g, h = tg.random.Generator.from_seed(2), tg.random.Generator.from_seed(2)
    f = tg.function(lambda: g.uniform([2], minval=-1.0, maxval=1.0))
    got = values(f(), f(), g.uniform([2], -1.0, 1.0))
    want = values(*[h.uniform([2], -1.0, 1.0) for _ in range(3)])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_make_seeds_split_shuffle_and_categorical_of_a_generator():
    g = tg.random.Generator.from_seed(3)
    seeds = g.make_seeds(4)
    assert seeds.shape == (2, 4) and seeds.dtype == np.int64
    one, two = g.split(2)
    assert not np.array_equal(one.normal([3]).numpy(), two.normal([3]).numpy())
    assert sorted(g.shuffle(tg.arange(10)).numpy().tolist()) == list(range(10))
    assert g.categorical(tg.constant([[0.0, -np.inf]]), 5).numpy().tolist() == [[0] * 5]


# -- stateless ---------------------------------------------------------------------------
def test_stateless_draws_depend_only_on_the_seed_eagerly_and_in_graphs():
    f = tg.function(lambda s: (tg.random.stateless_normal([5], seed=s),
                               tg.random.stateless_uniform([5], seed=s, minval=2, maxval=9,
                                                           dtype=tg.int64)))
    n1, u1 = values(*f(tg.constant([1, 2])))
    n2, u2 = values(*f(tg.constant([1, 2])))
    np.testing.assert_array_equal(n1, n2)
    np.testing.assert_array_equal(u1, u2)
    np.testing.assert_array_equal(n1, tg.random.stateless_normal([5], seed=[1, 2]).numpy())
    assert not np.array_equal(n1, tg.random.stateless_normal([5], seed=[1, 3]).numpy())
    assert u1.min() >= 2 and u1.max() < 9
    logits = tg.constant([[0.0, 1.0, 2.0]] * 2)
    c = tg.random.stateless_categorical(logits, 7, seed=[4, 4]).numpy()
    np.testing.assert_array_equal(c, tg.random.stateless_categorical(logits, 7, [4, 4]).numpy())


def test_a_stateless_draw_of_a_constant_seed_may_fold_and_gives_the_same_numbers():
    f = tg.function(lambda: tg.random.stateless_uniform([3], seed=[7, 7]))
    np.testing.assert_array_equal(f().numpy(), f().numpy())
    assert f.get_concrete_function().optimized.report.counts()["fold"] <= 2


# -- distributions, with generous bounds ------------------------------------------------
def test_the_distributions_have_the_moments_they_say():
    tg.random.set_seed(0)
    n = tg.random.normal([20000], mean=3.0, stddev=2.0).numpy()
    assert n.dtype == np.float32 and abs(n.mean() - 3.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    u = tg.random.uniform([20000], minval=-2.0, maxval=4.0, dtype=tg.float64).numpy()
    assert u.dtype == np.float64 and u.min() >= -2.0 and u.max() < 4.0
    assert abs(u.mean() - 1.0) < 0.1
    i = tg.random.uniform([20000], minval=0, maxval=3, dtype=tg.int32).numpy()
    assert i.dtype == np.int32 and set(np.unique(i)) == {0, 1, 2}
    logits = np.log(np.array([[0.1, 0.6, 0.3]]))
    c = tg.random.categorical(tg.constant(logits), 20000).numpy()
    assert c.shape == (1, 20000) and c.dtype == np.int64
    np.testing.assert_allclose(np.bincount(c[0], minlength=3) / 20000, [0.1, 0.6, 0.3],
                               atol=0.03)
    s = tg.random.shuffle(tg.reshape(tg.arange(12), (6, 2))).numpy()
    assert sorted(map(tuple, s)) == [(2 * k, 2 * k + 1) for k in range(6)]


def test_no_gradient_through_a_draw_but_through_its_mean_and_stddev():
    m, s = tg.Variable(np.zeros(3)), tg.Variable(np.ones(3))
    with tg.GradientTape(persistent=True) as tape:
        z = tg.random.normal([3], mean=m, stddev=s, dtype=tg.float64, seed=1)
        u = tg.random.uniform([3], dtype=tg.float64)
    np.testing.assert_array_equal(tape.gradient(z, m).numpy(), np.ones(3))
    np.testing.assert_allclose(tape.gradient(z, s).numpy(), z.numpy())   # (z - 0) / 1
    assert tape.gradient(u, m) is None


@pytest.mark.parametrize("call, error, argument", [
    (lambda: tg.random.normal([2, -1]), ValueError, "shape"),
    (lambda: tg.random.normal("3"), TypeError, "shape"),
    (lambda: tg.random.normal([2], dtype=tg.int32), TypeError, "dtype"),
    (lambda: tg.random.normal([2], seed=-1), ValueError, "seed"),
    (lambda: tg.random.normal([2], seed=1.5), TypeError, "seed"),
    (lambda: tg.random.normal([2], mean=tg.constant(0.0, tg.float64)), TypeError, "mean"),
    (lambda: tg.random.uniform([2], dtype=tg.int32), ValueError, "maxval"),
    (lambda: tg.random.uniform([2], 5, 5, dtype=tg.int64), ValueError, "maxval"),
    (lambda: tg.random.uniform([2], 0, 2 ** 40, dtype=tg.int32), ValueError, "maxval"),
    (lambda: tg.random.categorical(tg.constant([1.0, 2.0]), 3), ValueError, "logits"),
    (lambda: tg.random.categorical(tg.constant([[1.0]]), -1), ValueError, "num_samples"),
    (lambda: tg.random.categorical(tg.constant([[1.0]]), 2, dtype=tg.float32), TypeError,
     "dtype"),
    (lambda: tg.random.stateless_normal([2], seed=[1, 2, 3]), ValueError, "seed"),
    (lambda: tg.random.stateless_normal([2], seed=[1.0, 2.0]), TypeError, "seed"),
    (lambda: tg.random.set_seed("a"), TypeError, "seed"),
    (lambda: tg.random.Generator.from_seed(-3), ValueError, "seed"),
    (lambda: tg.random.Generator(3), TypeError, "stream"),
])
def test_bad_arguments_are_refused_naming_them(call, error, argument):
    with pytest.raises(error, match=rf"`{argument}`"):
        call()


# -- a traced function's gradient sees the numbers its call drew ---------------------------
def test_the_gradient_of_a_traced_call_uses_the_draws_of_that_call():
    g, h = tg.random.Generator.from_seed(8), tg.random.Generator.from_seed(8)
    f = tg.function(lambda a: a * g.normal([6], dtype=tg.float64)
                    + a * a * g.uniform([6], dtype=tg.float64))
    x = tg.constant(np.full(6, 2.0))
    for _ in range(2):                                        # each call its own draws
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        n, u = h.normal([6], dtype=tg.float64).numpy(), h.uniform([6], dtype=tg.float64).numpy()
        np.testing.assert_allclose(y.numpy(), 2 * n + 4 * u, rtol=1e-12)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), n + 4 * u, rtol=1e-12)


def test_second_derivatives_of_a_traced_draw_use_the_same_draw():
    g = tg.random.Generator.from_seed(4)
    f = tg.function(lambda a: tg.sum(a * a * a * g.uniform([3], dtype=tg.float64)))
    x = tg.constant(np.ones(3))
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        first = inner.gradient(y, x)                          # 3 u
    second = outer.gradient(first, x)                         # 6 u
    np.testing.assert_allclose(second.numpy(), 2 * first.numpy(), rtol=1e-12)


def test_a_session_draws_anew_at_each_run_and_a_train_step_sees_its_own_mask():
    graph = tg.Graph()
    with graph.as_default():
        z = tg.random.normal([5])
    session = tg.Session(graph)
    assert not np.array_equal(session.run(z), session.run(z))
    w = tg.Variable(np.ones(8))

    @tg.function
    def step(x):
        with tg.GradientTape() as tape:
            y = tg.sum(tg.nn.dropout(x * w, 0.5))
        return tape.gradient(y, w), tg.nn.dropout(x, 0.0)

    grad, _ = step(tg.constant(np.ones(8)))
    assert set(np.unique(grad.numpy())) <= {0.0, 2.0}


def test_a_draw_too_large_to_make_is_refused_not_attempted():
    with pytest.raises(ValueError, match="`shape`"):
        tg.random.normal([2 ** 20, 2 ** 20])
    with pytest.raises(ValueError, match="`num_samples`"):
        tg.random.categorical(tg.zeros((4, 4)), 2 ** 30)
