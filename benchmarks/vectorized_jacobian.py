"""The Jacobian of a 256 -> 256 tanh layer, ``y = tanh(W x + b)`` (float64), five ways.

* ``tape.jacobian(y, x)``: one backward pass mapped over the 256 one-hot seeds by
  ``tg.vmap`` (``experimental_use_pfor=True``, the default): each VJP rule runs once,
  on a ``[256, 256]`` batch of cotangents;
* ``tape.jacobian(y, x, experimental_use_pfor=False)``: 256 backward passes, one per
  row, in a Python loop (a persistent tape);
* ``tg.jacfwd``: one forward pass mapped over the 256 one-hot tangents;
* hand-written numpy, the floor: ``(1 - y**2)[:, None] * W``, the analytic Jacobian
  (it knows the structure, so it does no matrix product at all);
* hand-written numpy doing what the one pass does, the backward pass applied to the
  identity: ``(I * (1 - y**2)) @ W`` (one 256x256x256 matrix product).

Each teachgrad timing includes the forward pass on the tape (what a user runs for a
Jacobian). The results are checked against numpy before anything is timed. Then the
four are timed one call each, interleaved (the order reversed every other repeat), and
the script prints the minimum and the median in ms, and the ratios of the minima:
loop / one pass (what vectorizing saves) and each against numpy.

    python benchmarks/vectorized_jacobian.py [--quick]
"""
import os
import sys
import time

import numpy as np

import teachgrad as tg  # noqa: E402

N = 256


def make_problem(seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((N, N)) / np.sqrt(N)
    b = rng.standard_normal(N) * 0.1
    x = rng.standard_normal(N)
    return W, b, x


def functions(W, b, x):
    tW, tb, tx = tg.constant(W), tg.constant(b), tg.constant(x)

    def layer(v):
        return tg.tanh(tg.matmul(tW, v) + tb)

    def one_pass():
        with tg.GradientTape() as tape:
            tape.watch(tx)
            y = layer(tx)
        return tape.jacobian(y, tx)

    def loop():
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(tx)
            y = layer(tx)
        return tape.jacobian(y, tx, experimental_use_pfor=False)

    def forward_mode():
        return tg.jacfwd(layer)(tx)

    def numpy_analytic():
        y = np.tanh(W @ x + b)
        return (1.0 - y * y)[:, None] * W

    def numpy_backward_on_identity():
        y = np.tanh(W @ x + b)
        return (np.eye(N) * (1.0 - y * y)) @ W

    return {"tape.jacobian (one pass)": one_pass, "tape.jacobian (loop)": loop,
            "tg.jacfwd (one pass)": forward_mode, "numpy (analytic)": numpy_analytic,
            "numpy (backward on I)": numpy_backward_on_identity}


def check(fns):
    expected = fns["numpy (analytic)"]()
    for name, fn in fns.items():
        got = fn()
        got = got if isinstance(got, np.ndarray) else got.numpy()
        assert got.shape == (N, N), (name, got.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13, err_msg=name)
    print(f"checks: each Jacobian ({N}x{N}) equals the analytic one")


def time_interleaved(fns, repeats):
    times = {name: [] for name in fns}
    for fn in fns.values():   # warm-up
        fn()
    for r in range(repeats):
        order = list(fns.items())
        if r % 2:
            order.reverse()
        for name, fn in order:
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def main(argv=None):
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    repeats = 3 if quick else 30
    fns = functions(*make_problem())
    check(fns)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    times = time_interleaved(fns, repeats)
    best = {name: min(t) * 1e3 for name, t in times.items()}
    med = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
    print(f"Jacobian of tanh(W x + b), {N} -> {N}, float64, {repeats} interleaved repeats:")
    print(f"  {'':28s} {'min ms':>9s} {'median ms':>10s}")
    for name in fns:
        print(f"  {name:28s} {best[name]:9.3f} {med[name]:10.3f}")
    floor = best["numpy (analytic)"]
    one, loop = best["tape.jacobian (one pass)"], best["tape.jacobian (loop)"]
    print(f"loop / one pass:       {loop / one:7.1f}x  (what vectorizing saves)")
    print(f"one pass / numpy:      {one / floor:7.1f}x")
    print(f"loop / numpy:          {loop / floor:7.1f}x")
    print(f"jacfwd / numpy:        {best['tg.jacfwd (one pass)'] / floor:7.1f}x")
    print(f"one pass / numpy backward on I: {one / best['numpy (backward on I)']:7.1f}x "
          f"(the same matrix product, without the tape)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
