"""A one-shot tape's memory: the backward pass frees what it no longer needs.

tracemalloc counts numpy's array buffers, so these tests measure the bytes a
real backward pass holds, not a model of them. Sizes are chosen so that one
array (512 KiB) dwarfs Python's own small allocations.
"""
import contextlib
import gc
import tracemalloc

import numpy as np

import teachgrad as tg

N, LAYERS = 256, 16
ARRAY = N * N * 8          # bytes of one float64 activation


def _chain(x):
    h = x
    for _ in range(LAYERS):
        h = tg.tanh(h)     # each tanh keeps its output for its VJP rule
    return tg.sum(h)


@contextlib.contextmanager
def _traced():
    """Trace allocations inside the block; yields ``held()``: the bytes allocated since
    the block began and still alive, after a garbage collection."""
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]

    def held():
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - start
    try:
        yield held
    finally:
        tracemalloc.stop()


def test_backward_peak_stays_within_saved_values_plus_gradients():
    x = tg.Variable(np.random.default_rng(0).standard_normal((N, N)) * 0.1)
    with _traced() as held:
        with tg.GradientTape() as tape:
            loss = _chain(x)
        held()                                          # collected: the saved values remain
        tracemalloc.reset_peak()
        saved = tracemalloc.get_traced_memory()[0]
        grad = tape.gradient(loss, x)
        peak = tracemalloc.get_traced_memory()[1]
    assert grad.shape == (N, N)
    # Holding every layer's cotangent would add LAYERS arrays. Measured: about one
    # array above the saved values, as each layer's values are freed once its rule
    # has run; the bound leaves room for a rule's temporaries.
    assert peak - saved <= ARRAY * 3, (peak - saved) / ARRAY


def test_one_shot_tape_lets_go_of_everything_but_the_gradient():
    x = tg.Variable(np.random.default_rng(1).standard_normal((N, N)) * 0.1)
    with _traced() as held:
        with tg.GradientTape() as tape:
            loss = _chain(x)
        recorded = held()
        grad = tape.gradient(loss, x)
        del loss                 # the caller's last reference into the recorded chain
        left = held()
    assert recorded >= LAYERS * ARRAY                  # the activations were kept ...
    assert left <= 2 * ARRAY, left / ARRAY             # ... and are gone: the gradient stays
    assert grad.shape == (N, N)


def test_persistent_tape_keeps_its_values_until_dropped():
    x = tg.Variable(np.random.default_rng(2).standard_normal((N, N)) * 0.1)
    with _traced() as held:
        with tg.GradientTape(persistent=True) as tape:
            loss = _chain(x)
        tape.gradient(loss, x)
        del loss
        kept = held()
        del tape
        dropped = held()
    assert kept >= LAYERS * ARRAY                      # a second gradient() needs them
    assert dropped <= ARRAY, dropped / ARRAY
