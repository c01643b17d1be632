"""A one-shot tape's memory: the backward pass frees what it no longer needs.

tracemalloc counts numpy's array buffers, so these tests measure the bytes a
real backward pass holds, not a model of them. Sizes are chosen so that one
array (512 KiB) dwarfs Python's own small allocations.
"""
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


def test_backward_peak_stays_within_saved_values_plus_gradients():
    x = tg.Variable(np.random.default_rng(0).standard_normal((N, N)) * 0.1)
    gc.collect()
    tracemalloc.start()
    try:
        with tg.GradientTape() as tape:
            loss = _chain(x)
        gc.collect()
        saved = tracemalloc.get_traced_memory()[0]      # the forward pass's saved values
        tracemalloc.reset_peak()
        grad = tape.gradient(loss, x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert grad.shape == (N, N)
    # Holding every layer's cotangent would add LAYERS arrays. Measured: about one
    # array above the saved values, as each layer's values are freed once its rule
    # has run; the bound leaves room for a rule's temporaries.
    assert peak - saved <= ARRAY * 3, (peak - saved) / ARRAY


def test_one_shot_tape_lets_go_of_everything_but_the_gradient():
    x = tg.Variable(np.random.default_rng(1).standard_normal((N, N)) * 0.1)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        with tg.GradientTape() as tape:
            loss = _chain(x)
        recorded = tracemalloc.get_traced_memory()[0] - start
        grad = tape.gradient(loss, x)
        del loss                 # the caller's last reference into the recorded chain
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert recorded >= LAYERS * ARRAY                  # the activations were kept ...
    assert left <= 2 * ARRAY, left / ARRAY             # ... and are gone: the gradient stays
    assert grad.shape == (N, N)


def test_persistent_tape_keeps_its_values_until_dropped():
    x = tg.Variable(np.random.default_rng(2).standard_normal((N, N)) * 0.1)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        with tg.GradientTape(persistent=True) as tape:
            loss = _chain(x)
        tape.gradient(loss, x)
        del loss
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - start
        del tape
        gc.collect()
        dropped = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert kept >= LAYERS * ARRAY                      # a second gradient() needs them
    assert dropped <= ARRAY, dropped / ARRAY
