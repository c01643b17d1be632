"""while_loop: the cost of a loop's gradient, and the memory its saved values take.

A loop over 256-vectors, ``h = tanh(h * a + b)``, run for a number of
iterations, in a graph (one While node; its gradient is one While node that
runs the body's gradient backwards through the iterations):

* **Cheap gradient principle**: time(value and gradient) / time(value) for a
  1,000-iteration loop, the gradient taken with respect to a and b (which the
  body reads from outside the loop, so their gradients are sums over the
  iterations). The gradient needs the tanh outputs and the previous h of
  every iteration, so the forward loop saves them. The same ratio is shown
  for an RNN-like body ``h = tanh(h @ W + x)`` (256x256 W), beside a
  hand-written numpy forward and backward loop: there the gradient's outer
  products cost more than the forward's matrix-vector products, in numpy too.
* **Memory**: the stacks of saved intermediates, which grow linearly with the
  number of iterations (measured with tracemalloc, the peak over a value and
  gradient run, at several iteration counts).
* **Scale**: a 10,000-iteration loop differentiates in a graph and on a tape
  with Python's recursion limit at 1,000, and the graph's node count does not
  depend on the iteration count.

Both gradients are checked against the numpy loop before anything is timed.

    python benchmarks/while_loop.py [--quick]
"""
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import teachgrad as tg  # noqa: E402

WIDTH = 256


def build(iterations, rng, body="vector"):
    """A graph computing the loop's loss and its gradient with respect to the
    tensors the body reads from outside ((a, b), or (W, x) for the RNN body)."""
    if body == "vector":
        shapes = {"a": (WIDTH,), "b": (WIDTH,)}
        values = (rng.standard_normal(WIDTH) * 0.5, rng.standard_normal(WIDTH) * 0.1)
        step = lambda h, a, b: tg.tanh(h * a + b)  # noqa: E731
        h0 = (WIDTH,)
    else:
        shapes = {"W": (WIDTH, WIDTH), "x": (1, WIDTH)}
        values = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH),
                  rng.standard_normal((1, WIDTH)) * 0.1)
        step = lambda h, W, x: tg.tanh(h @ W + x)  # noqa: E731
        h0 = (1, WIDTH)
    graph = tg.Graph()
    with graph.as_default():
        p, q = [tg.placeholder(tg.float64, shape, name=name) for name, shape in shapes.items()]
        _, h = tg.while_loop(lambda i, h: i < iterations, lambda i, h: (i + 1, step(h, p, q)),
                             [tg.constant(0), tg.zeros(h0, tg.float64)])
        loss = tg.sum(h * h)
        grads = tg.gradients(loss, [p, q])
    return graph, {p: values[0], q: values[1]}, loss, grads, values


def vector_loop(a, b, iterations):
    """The vector loop's loss and gradients by hand."""
    hs = [np.zeros(WIDTH)]
    for _ in range(iterations):
        hs.append(np.tanh(hs[-1] * a + b))
    g = 2 * hs[-1]
    da, db = np.zeros_like(a), np.zeros_like(b)
    for k in range(iterations, 0, -1):
        pre = g * (1 - hs[k] ** 2)
        da += pre * hs[k - 1]
        db += pre
        g = pre * a
    return float(np.sum(hs[-1] ** 2)), da, db


def numpy_loop(W, x, iterations, backward=True):
    """The RNN loop's loss and gradients, by hand: the floor."""
    hs = [np.zeros((1, WIDTH))]
    for _ in range(iterations):
        hs.append(np.tanh(hs[-1] @ W + x))
    loss = float(np.sum(hs[-1] ** 2))
    if not backward:
        return loss
    g = 2 * hs[-1]
    dW, dx = np.zeros_like(W), np.zeros_like(x)
    for k in range(iterations, 0, -1):
        pre = g * (1 - hs[k] ** 2)
        dW += hs[k - 1].T @ pre
        dx += pre
        g = pre @ W.T
    return loss, dW, dx


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None):
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    rng = np.random.default_rng(0)
    iterations = 100 if quick else 1000
    repeats = 3 if quick else 9

    graph, feeds, loss, grads, (a0, b0) = build(iterations, rng)
    session = tg.Session(graph)
    value, da, db = session.run([loss, *grads], feeds)
    ref = vector_loop(a0, b0, iterations)
    assert all(np.allclose(u, v) for u, v in zip((value, da, db), ref)), \
        "the loop's gradient disagrees with the hand-written numpy loop"
    t_value = median_time(lambda: session.run(loss, feeds), repeats)
    t_both = median_time(lambda: session.run([loss, *grads], feeds), repeats)
    print(f"while_loop, {iterations} iterations over {WIDTH}-vectors (h = tanh(h * a + b)), "
          f"graph mode")
    print(f"  value            {t_value * 1e3:8.2f} ms   ({t_value / iterations * 1e6:.1f} "
          f"us/iteration)")
    print(f"  value + gradient {t_both * 1e3:8.2f} ms")
    print(f"  gradient / value {t_both / t_value:8.2f}   (goal <= 4)")

    graph, feeds, loss, grads, (W0, x0) = build(iterations, rng, body="rnn")
    session = tg.Session(graph)
    value, dW, dx = session.run([loss, *grads], feeds)
    ref_loss, ref_dW, ref_dx = numpy_loop(W0, x0, iterations)
    assert np.allclose(value, ref_loss) and np.allclose(dW, ref_dW) and np.allclose(dx, ref_dx), \
        "the RNN loop's gradient disagrees with the hand-written numpy loop"
    t_value = median_time(lambda: session.run(loss, feeds), repeats)
    t_both = median_time(lambda: session.run([loss, *grads], feeds), repeats)
    t_numpy = median_time(lambda: numpy_loop(W0, x0, iterations), repeats)
    t_numpy_value = median_time(lambda: numpy_loop(W0, x0, iterations, backward=False), repeats)
    print(f"RNN body h = tanh(h @ W + x), W {WIDTH}x{WIDTH}, {iterations} iterations:")
    print(f"  teachgrad: gradient / value {t_both / t_value:.2f}; numpy by hand: "
          f"{t_numpy / t_numpy_value:.2f}; teachgrad / numpy (value + gradient) "
          f"{t_both / t_numpy:.2f}")

    print("memory of the saved intermediates (tracemalloc peak over value + gradient):")
    counts = [50, 100, 200] if quick else [250, 500, 1000, 2000]
    peaks = []
    for n in counts:
        g, f, l, gr, _ = build(n, rng)
        s = tg.Session(g)
        s.run([l, *gr], f)   # plans and caches made before measuring
        tracemalloc.start()
        s.run([l, *gr], f)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        peaks.append(peak)
        print(f"  {n:6d} iterations: {peak / 2**20:8.2f} MiB   ({peak / n / 1024:.2f} KiB per iteration)")
    slope = (peaks[-1] - peaks[0]) / (counts[-1] - counts[0])
    print(f"  growth: {slope / 1024:.2f} KiB per extra iteration (the two saved {WIDTH}-vectors "
          f"of float64 are {2 * WIDTH * 8 / 1024:.2f} KiB; the list of per-iteration arrays and "
          f"the stacked copy of it are both alive while the stack is built)")

    long_run = 2000 if quick else 10000
    sizes = []
    for n in (10, long_run):
        g, f, l, gr, _ = build(n, rng)
        sizes.append(len(g.get_operations()))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        g, f, l, gr, (W1, x1) = build(long_run, rng)
        start = time.perf_counter()
        value, dW, dx = tg.Session(g).run([l, *gr], f)
        graph_time = time.perf_counter() - start
        a, b = tg.constant(W1), tg.constant(x1)
        start = time.perf_counter()
        with tg.GradientTape() as tape:
            tape.watch([a, b])
            _, h = tg.while_loop(lambda i, h: i < long_run,
                                 lambda i, h: (i + 1, tg.tanh(h * a + b)),
                                 [tg.constant(0), tg.zeros((WIDTH,), tg.float64)])
            eager_loss = tg.sum(h * h)
        eager_dW, _ = tape.gradient(eager_loss, [a, b])
        eager_time = time.perf_counter() - start
    finally:
        sys.setrecursionlimit(limit)
    assert np.allclose(eager_dW.numpy(), dW), "eager and graph gradients of the long loop differ"
    assert sizes[0] == sizes[1], f"the graph grew with the iteration count: {sizes}"
    print(f"{long_run} iterations with the recursion limit at 1000: graph {graph_time:.2f} s, "
          f"tape {eager_time:.2f} s; graph nodes for 10 and {long_run} iterations: "
          f"{sizes[0]} and {sizes[1]}")


if __name__ == "__main__":
    main()
